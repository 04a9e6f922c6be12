"""The card of ``rewrite_manifests``'s result, and the card both maintenance rewrites draw
(spec: "Snapshots" - ``rewrite_manifests`` and ``rewrite_position_deletes`` commit a ``replace``
snapshot that changes no row)."""

from __future__ import annotations

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.rewrite_manifests import RewriteManifestsResult

__all__ = ["result_card"]


def result_card(kind: str, snapshot: Snapshot | None, subtitle: str,
                pairs: list[tuple[str, str]]) -> Rendered:
    """A maintenance result: its kind, the snapshot it committed (or none), the counts."""
    title = (t("nothing to commit") if snapshot is None
             else t("snapshot {id}", id=snapshot.snapshot_id))
    html = h.card(kind, title, h.esc(subtitle), h.kv((k, h.esc(v)) for k, v in pairs))
    text = f"{kind} ({title})\n" + tx.kv(pairs, indent="  ")
    return Rendered(html, text)


@register(RewriteManifestsResult)
def _rewrite_manifests(r: RewriteManifestsResult) -> Rendered:
    """How many data manifests were replaced and written."""
    pairs = [(t("manifests rewritten"), fmt.count(r.rewritten_manifests_count)),
             (t("manifests added"), fmt.count(r.added_manifests_count))]
    subtitle = t("{a} manifests into {b}", a=f"{r.rewritten_manifests_count:,}",
                 b=f"{r.added_manifests_count:,}")
    return result_card(t("Rewrite manifests"), r.snapshot, subtitle, pairs)

