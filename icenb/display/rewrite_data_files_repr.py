"""The result of a data file compaction (:mod:`icenb.table.commit.rewrite_data_files`): the
counts of Java's ``rewrite_data_files`` procedure and the ``replace`` snapshot (spec:
"Snapshots"), as a card and as text; ``print(result)`` shows the text."""

from __future__ import annotations

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.table.commit.rewrite_data_files import RewriteDataFilesResult


@register(RewriteDataFilesResult, text_str=True)
def _rewrite_result(r: RewriteDataFilesResult) -> Rendered:
    snap = r.snapshot
    state = (t("nothing to rewrite") if snap is None
             else t("committed snapshot {id}", id=snap.snapshot_id))
    pairs = [
        (t("strategy"), r.strategy),
        (t("rewritten data files"), fmt.count(r.rewritten_data_files_count)),
        (t("added data files"), fmt.count(r.added_data_files_count)),
        (t("rewritten bytes"), fmt.size(r.rewritten_bytes_count)),
        (t("removed delete files"), fmt.count(r.removed_delete_files_count)),
        (t("rows rewritten"), fmt.count(r.rewritten_rows_count)),
        (t("file groups"), fmt.count(r.groups_count)),
    ]
    change = t("{before} files -> {after}", before=fmt.count(r.rewritten_data_files_count),
               after=fmt.count(r.added_data_files_count))
    html = h.card(t("Rewrite data files"), state, h.esc(change),
                  h.kv((k, h.esc(v)) for k, v in pairs))
    text = f"{t('Rewrite data files')} ({state}): {change}\n" + tx.kv(pairs, indent="  ")
    return Rendered(html, text)
