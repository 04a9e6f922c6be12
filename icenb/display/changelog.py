"""A changelog (:meth:`Table.changes`): the range, counts per change type, one line per snapshot
of the range and the changed rows as a bounded table (head and tail rows, display options).

Draws what :class:`~icenb.table.explore.changelog.Changelog` holds; reads nothing.
"""

from __future__ import annotations

from icenb.display.inspect_repr import arrow_table_rendered
from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.spec.snapshot import Snapshot
from icenb.table.explore.changelog import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    Changelog,
)

__all__ = ["range_text", "summary"]


def _snapshot(cl: Changelog, s: Snapshot | None) -> str:
    return t("no snapshot") if s is None else fmt.snapshot_label(cl.table_snapshots,
                                                                 s.snapshot_id)


def range_text(cl: Changelog) -> str:
    """``after S3 up to S7`` (start exclusive, end inclusive; short labels for a small table,
    fmt.snapshot_label)."""
    if cl.start is None:
        return t("from the first snapshot up to {end}", end=_snapshot(cl, cl.end))
    return t("after {start} up to {end}", start=_snapshot(cl, cl.start),
             end=_snapshot(cl, cl.end))


def summary(cl: Changelog) -> str:
    """``2 inserted, 1 deleted, 3 updated`` (an update is a pair of rows)."""
    c = cl.counts
    parts = []
    if c[INSERT]:
        parts.append(t("{n:,} inserted", n=c[INSERT]))
    if c[DELETE]:
        parts.append(t("{n:,} deleted", n=c[DELETE]))
    if c[UPDATE_BEFORE]:
        parts.append(t("{n:,} updated", n=c[UPDATE_BEFORE]))
    return ", ".join(parts) if parts else t("no row changed")


def _pairing(cl: Changelog) -> str:
    if cl.identifier_columns:
        return t("by identifier columns {names}", names=", ".join(cl.identifier_columns))
    if cl.pairs_by_row_id:
        return t("by _row_id (row lineage)")
    return t("not paired (DELETE and INSERT)")


def _snapshot_rows(cl: Changelog) -> tuple[list[str], list[list[str]], int, int]:
    """Headers, the shown rows (head then tail) of the per-snapshot table, how many rows are
    hidden and how many the head holds (the ellipsis goes after it)."""
    per = cl.counts_by_snapshot()
    head, n_hidden, tail = fmt.fold(per, get_options().display_max_rows)
    headers = [t("ordinal"), t("label"), t("snapshot"), t("operation"), t("committed (UTC)"),
               DELETE, "UPDATE", INSERT]
    snaps = cl.table_snapshots
    rows = [[str(i), fmt.snapshot_label(snaps, s.snapshot_id), str(s.snapshot_id),
             str(s.operation or "-"),
             fmt.timestamp(s.timestamp_ms), fmt.count(c[DELETE]), fmt.count(c[UPDATE_AFTER]),
             fmt.count(c[INSERT])] for i, s, c in (*head, *tail)]
    return headers, rows, n_hidden, len(head)


def _snapshots_html(headers: list[str], rows: list[list[str]], n_hidden: int,
                    head_n: int) -> str:
    th = "".join(f"<th>{h.esc(x)}</th>" for x in headers)
    body = ["<tr>" + "".join(f"<td>{h.esc(c)}</td>" for c in r) + "</tr>" for r in rows]
    if n_hidden:
        body.insert(head_n, f'<tr class="icenb-fold"><td colspan="{len(headers)}">'
                            f"{h.esc(fmt.hidden(n_hidden, 'snapshots'))}</td></tr>")
    return (f'<table class="icenb-t"><thead><tr>{th}</tr></thead><tbody>{"".join(body)}'
            "</tbody></table>")


@register(Changelog, text_str=True)
def _changelog(cl: Changelog) -> Rendered:
    title = range_text(cl)
    sub = f"{fmt.plural(len(cl.snapshots), 'snapshot')} · {summary(cl)}"
    facts = [(t("rows"), fmt.count(cl.num_rows)),
             *((k, fmt.count(n)) for k, n in cl.counts.items()),
             (t("updates paired"), _pairing(cl))]
    headers, rows, n_hidden, head_n = _snapshot_rows(cl)
    body = [h.kv((k, h.esc(v)) for k, v in facts),
            h.section(t("Snapshots"), _snapshots_html(headers, rows, n_hidden, head_n),
                      open=True, count=fmt.plural(len(cl.snapshots), "snapshot"))]
    lines = tx.table(headers, rows, indent="  ").splitlines()
    if n_hidden:
        lines.insert(1 + head_n, "  " + fmt.hidden(n_hidden, "snapshots"))
    text = [f"{t('Changelog')} {title}", f"  {sub}", tx.kv(facts, indent="  "), *lines]
    if cl.num_rows:
        rows_drawn = arrow_table_rendered(cl.to_arrow(), t("changed rows"))
        body.append(h.section(t("Rows"), rows_drawn.html, open=True,
                              count=fmt.plural(cl.num_rows, "row")))
        text.append(rows_drawn.text)
    return Rendered(h.card(t("Changelog"), title, h.esc(sub), "".join(body)), "\n".join(text))
