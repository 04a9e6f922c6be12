"""The card of ``rewrite_position_deletes``'s result (spec: "Row-level Deletes")."""

from __future__ import annotations

from icenb.display.kit import fmt
from icenb.display.registry import Rendered, register
from icenb.display.rewrite_manifests_repr import result_card
from icenb.labels import t
from icenb.table.commit.rewrite_position_deletes import RewritePositionDeletesResult

__all__: list[str] = []


@register(RewritePositionDeletesResult)
def _rewrite_position_deletes(r: RewritePositionDeletesResult) -> Rendered:
    """How many delete files (and bytes) were replaced and written."""
    pairs = [(t("delete files rewritten"), fmt.count(r.rewritten_delete_files_count)),
             (t("delete files added"), fmt.count(r.added_delete_files_count)),
             (t("bytes rewritten"), fmt.size(r.rewritten_bytes_count)),
             (t("bytes added"), fmt.size(r.added_bytes_count))]
    subtitle = t("{a} delete files into {b}", a=f"{r.rewritten_delete_files_count:,}",
                 b=f"{r.added_delete_files_count:,}")
    return result_card(t("Rewrite position deletes"), r.snapshot, subtitle, pairs)
