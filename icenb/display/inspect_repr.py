"""Metadata tables: the ``t.inspect`` menu and its results, drawn as bounded HTML tables.

Inspect results stay ``pyarrow.Table`` objects; :mod:`icenb.table.explore.inspect` tags them with
the
schema metadata key ``icenb.inspect``. An IPython HTML formatter for ``pyarrow.Table`` draws
only tagged tables (head and tail rows, folded columns, compact nested values) and returns
None for every other Arrow table, which keeps its default display.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit import values as vals
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.spec import human
from icenb.table.explore.inspect import INSPECT_TAG, INSPECT_TYPES_TAG, InspectTables

__all__ = ["METADATA_TABLES", "arrow_table_html", "arrow_table_rendered", "inspect_name",
           "register_ipython_formatters"]

#: The metadata tables (method name, reads, one-line description), in menu order.
METADATA_TABLES: tuple[tuple[str, str, str], ...] = (
    ("snapshots", "metadata", "one row per snapshot: time, parent, operation, summary"),
    ("history", "metadata", "the snapshot log: when each snapshot became current"),
    ("refs", "metadata", "branches and tags with their retention settings"),
    ("metadata_log_entries", "metadata", "previous metadata files and the current one"),
    ("manifests", "manifest list", "a snapshot's manifests with file counts and bounds"),
    ("entries", "manifests", "every manifest entry of a snapshot, DELETED ones included"),
    ("files", "manifests", "a snapshot's live data and delete files"),
    ("data_files", "manifests", "a snapshot's live data files"),
    ("delete_files", "manifests", "a snapshot's live delete files"),
    ("partitions", "manifests", "per partition: counts, sizes, last change"),
    ("position_deletes", "delete files", "every position deleted by a snapshot's deletes"),
    ("all_manifests", "manifest lists", "manifests of every snapshot in the metadata"),
    ("all_entries", "manifests", "entries of every manifest reachable from a snapshot"),
    ("all_files", "manifests", "live files of every reachable manifest"),
    ("all_data_files", "manifests", "live data files of every reachable manifest"),
    ("all_delete_files", "manifests", "live delete files of every reachable manifest"),
)

_PER_SNAPSHOT = frozenset({"manifests", "entries", "files", "data_files", "delete_files",
                           "partitions", "position_deletes"})

#: Items of a list, map or struct shown inside one cell before ``…``.
_NESTED_ITEMS = 6


# --------------------------------------------------------------------------- the menu


@register(InspectTables)
def _inspect_tables(it: InspectTables) -> Rendered:
    """The metadata tables a table offers, what each holds and what it reads."""
    table = getattr(it, "_table", None)
    where = "" if table is None else (
        ".".join(table.identifier) if table.identifier else table.location)
    rows_html = []
    rows_text = []
    for name, reads, what in METADATA_TABLES:
        call = f"{name}({'snapshot_id=None' if name in _PER_SNAPSHOT else ''})"
        rows_html.append([h.code(call), h.esc(t(what)), h.badge(t(reads), "muted")])
        rows_text.append([call, t(what), t(reads)])
    note = t("Results are pyarrow Tables (columns as in Iceberg Java's metadata tables); "
             "per-snapshot tables default to the current snapshot.")
    headers = ["t.inspect.…", t("rows"), t("reads")]
    html = h.card(t("Metadata tables"), where,
                  h.esc(t("{n} tables", n=len(METADATA_TABLES))),
                  h.table(headers, rows_html) + f"<div>{h.muted(note)}</div>")
    text = (t("Metadata tables of {table}", table=where) + "\n"
            + tx.table(headers, rows_text, indent="  ") + f"\n  ({note})")
    return Rendered(html, text)


# --------------------------------------------------------------------------- values


def inspect_name(table: Any) -> str | None:
    """The metadata table name an Arrow table is tagged with, or None when untagged."""
    if not isinstance(table, pa.Table):
        return None
    meta = table.schema.metadata
    if not meta:
        return None
    tag = meta.get(INSPECT_TAG)
    if tag is None:
        return None
    return tag.decode("utf-8", "replace") if isinstance(tag, bytes) else str(tag)


def _is_map_items(value: list[Any]) -> bool:
    return bool(value) and all(isinstance(x, tuple) and len(x) == 2 for x in value)


def compact(value: Any) -> str:
    """One cell's value on one line: nested lists, maps and structs abbreviated."""
    if value is None:
        return "null"
    if isinstance(value, _Shown):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        shown = value[:16].hex()
        return f"0x{shown}" + ("…" if len(value) > 16 else "")
    if isinstance(value, _dt.datetime):
        text = value.isoformat(sep=" ")
        return text.replace("+00:00", "")
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (int, decimal.Decimal)):
        return f"{value}"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping):
        items = list(value.items())
        shown = ", ".join(f"{k}: {compact(v)}" for k, v in items[:_NESTED_ITEMS])
        more = f", … +{len(items) - _NESTED_ITEMS}" if len(items) > _NESTED_ITEMS else ""
        return "{" + shown + more + "}"
    if isinstance(value, list):
        more = f", … +{len(value) - _NESTED_ITEMS}" if len(value) > _NESTED_ITEMS else ""
        if _is_map_items(value):
            shown = ", ".join(f"{compact(k)}: {compact(v)}" for k, v in value[:_NESTED_ITEMS])
            return "{" + shown + more + "}"
        return "[" + ", ".join(compact(x) for x in value[:_NESTED_ITEMS]) + more + "]"
    return str(value)


_Types = tuple[dict[int, Any], dict[str, Any]]
_BOUNDS = ("lower_bounds", "upper_bounds")


def _types(table: pa.Table) -> _Types | None:
    """Column and partition types a tagged result carries; None when bounds are shown raw."""
    meta = table.schema.metadata or {}
    if vals.bounds_are_raw() or INSPECT_TYPES_TAG not in meta:
        return None
    return human.types_from_tag(meta[INSPECT_TYPES_TAG])


def _human_cell(name: str, value: Any, types: _Types | None) -> Any:
    """A cell with its bounds and partition values as values (spec: Appendix D; partition
    transforms' human strings); other values unchanged. Recurses into ``data_file``."""
    if types is None or value is None:
        return value
    columns, partition = types
    if name in _BOUNDS and isinstance(value, list):
        return {k: _Shown(vals.bound(columns.get(k), v)) for k, v in value}
    if name == "partition" and isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k in partition:
                transform, source = partition[k]
                v = _Shown(human.partition_value_text(transform, source, v))
            out[k] = v
        return out
    if isinstance(value, Mapping):
        return {k: _human_cell(k, v, types) for k, v in value.items()}
    return value


class _Shown(str):
    """A value already rendered for display (``compact`` shows it as it is)."""


def _numeric(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))


def _type_name(t: pa.DataType) -> str:
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_map(t):
        return "map"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list"
    return str(t)


# --------------------------------------------------------------------------- the table


def _columns(table: pa.Table, rows: Sequence[int]) -> list[list[Any]]:
    """Python values of only the given rows (contiguous runs sliced, not the whole table)."""
    if not rows:
        return [[] for _ in range(table.num_columns)]
    runs: list[tuple[int, int]] = []
    for r in rows:
        if runs and runs[-1][0] + runs[-1][1] == r:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((r, 1))
    out: list[list[Any]] = [[] for _ in range(table.num_columns)]
    for start, length in runs:
        part = table.slice(start, length)
        for i in range(table.num_columns):
            out[i].extend(part.column(i).to_pylist())
    return out


def _fold_table(table: pa.Table) -> tuple[list[int], int, list[int], list[int], int, list[int]]:
    opts = get_options()
    rh, rn, rt = fmt.fold(range(table.num_rows), opts.display_max_rows)
    ch, cn, ct = fmt.fold(range(table.num_columns), opts.display_max_columns)
    return list(rh), rn, list(rt), list(ch), cn, list(ct)


def arrow_table_rendered(table: pa.Table, title: str | None = None, *, kind: str | None = None,
                         subtitle: str | None = None) -> Rendered:
    """An Arrow table as a bounded card: head and tail rows (display_max_rows), head and tail
    columns (display_max_columns), values compact and cut (display_max_string). ``kind`` and
    ``subtitle`` replace the card's label and its row and column counts."""
    name = title if title is not None else (inspect_name(table) or t("Arrow table"))
    rh, rn, rt, ch, cn, ct = _fold_table(table)
    cols = [*ch, *ct]
    sub = table.select(cols) if cols else table.select([])
    values = _columns(sub, [*rh, *rt])
    fields = [table.schema.field(i) for i in cols]
    types = _types(table)
    if types is not None:
        values = [[_human_cell(f.name, v, types) for v in col]
                  for f, col in zip(fields, values, strict=True)]
    numeric = [_numeric(f.type) for f in fields]

    def th(i: int) -> str:
        f = fields[i]
        cls = ' class="icenb-num"' if numeric[i] else ""
        return f'<th{cls} title="{h.esc(_type_name(f.type))}">{h.esc(f.name)}</th>'

    gap_head = f'<th class="icenb-muted">{h.esc(fmt.hidden(cn, "columns"))}</th>' if cn else ""
    header = "".join(th(i) for i in range(len(ch))) + gap_head + "".join(
        th(i) for i in range(len(ch), len(cols)))

    def td(i: int, v: Any) -> str:
        if v is None:
            return f"<td>{h.muted('null')}</td>"
        cls = ' class="icenb-num"' if numeric[i] else ""
        return f"<td{cls}>{h.esc(compact(v))}</td>"

    def tr(r: int) -> str:
        cells = [td(i, values[i][r]) for i in range(len(cols))]
        gap = ['<td class="icenb-muted">…</td>'] if cn else []
        return "<tr>" + "".join([*cells[:len(ch)], *gap, *cells[len(ch):]]) + "</tr>"

    width = len(cols) + (1 if cn else 0)
    body = [f'<table class="icenb-t"><thead><tr>{header}</tr></thead><tbody>',
            *(tr(r) for r in range(len(rh)))]
    if rn:
        body.append(f'<tr class="icenb-fold"><td colspan="{max(width, 1)}">'
                    f"{h.esc(fmt.hidden(rn, 'rows'))}</td></tr>")
    body.extend(tr(r) for r in range(len(rh), len(rh) + len(rt)))
    body.append("</tbody></table>")
    if subtitle is None:
        subtitle = t("{rows:,} rows · {columns:,} columns", rows=table.num_rows,
                     columns=table.num_columns)
    if kind is None:
        kind = t("Inspect") if inspect_name(table) else "Arrow"
    html = h.card(kind, name, h.esc(subtitle), "".join(body))

    headers = [f.name for f in fields]
    text_rows = [[fmt.cut(compact(values[i][r]), 40) for i in range(len(cols))]
                 for r in range(len(rh) + len(rt))]
    if cn:
        headers.insert(len(ch), "…")
        for row in text_rows:
            row.insert(len(ch), "…")
    lines = tx.table(headers, text_rows, indent="  ").splitlines()
    if rn:
        lines.insert(1 + len(rh), "  " + fmt.hidden(rn, "rows"))
    text = f"{name} ({subtitle}" + (f", {fmt.hidden(cn, 'columns')}" if cn else "") + ")\n"
    return Rendered(html, text + "\n".join(lines))


def arrow_table_html(table: Any) -> str | None:
    """The whole HTML output for a tagged inspect result; None for any other object (IPython
    then shows it as usual). Never raises."""
    name = inspect_name(table)
    if name is None:
        return None
    try:
        return h.document(arrow_table_rendered(table, f"inspect.{name}()").html)
    except Exception:  # reprs never raise: Arrow's own display takes over
        return None


# --------------------------------------------------------------------------- IPython


def register_ipython_formatters(shell: Any = None) -> bool:
    """Register the ``text/html`` formatter of tagged ``pyarrow.Table`` results with IPython.

    Uses ``shell`` or the running IPython shell; False when there is none (icenb never
    imports IPython itself). Idempotent.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")
        get = getattr(ipython, "get_ipython", None) if ipython is not None else None
        shell = get() if get is not None else None
        if shell is None:
            return False
    try:
        formatter = shell.display_formatter.formatters["text/html"]
        formatter.for_type(pa.Table, arrow_table_html)
    except Exception:  # an unusual shell: leave Arrow's display as it is
        return False
    return True


register_ipython_formatters()
