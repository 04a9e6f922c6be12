"""The table card, and the warehouse, catalog, ref-change and expiry cards around it.

A table card shows what the loaded metadata holds (spec: "Table Metadata"): the current
snapshot's summary totals (spec: "Snapshot Summary"), the schema, partition spec, sort order,
branches and tags (spec: "Snapshot References"), the newest snapshots and the metadata fields.
Catalog-like objects show only what they hold in memory: listing namespaces or tables is I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from icenb.catalog.base import Catalog
from icenb.catalog.filesystem import FilesystemCatalog
from icenb.catalog.sql import SqlCatalog
from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register, render
from icenb.labels import t
from icenb.options import get_options
from icenb.spec.schema import Schema
from icenb.spec.snapshot import (
    ADDED_DATA_FILES,
    ADDED_DELETE_FILES,
    ADDED_EQ_DELETES,
    ADDED_POS_DELETES,
    ADDED_RECORDS,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
    MAIN_BRANCH,
    REMOVED_DELETE_FILES,
    REMOVED_EQ_DELETES,
    REMOVED_POS_DELETES,
    TOTAL_DATA_FILES,
    TOTAL_DELETE_FILES,
    TOTAL_FILE_SIZE,
    TOTAL_RECORDS,
    Snapshot,
    SnapshotRef,
)
from icenb.spec.table_metadata import LazySequence, TableMetadata
from icenb.table.commit.expire_snapshots import FILE_KINDS, ExpireSnapshotsResult
from icenb.table.commit.manage_snapshots import ManageSnapshots
from icenb.table.table import Table
from icenb.table.warehouse import Warehouse

__all__ = ["Listing", "folded_table", "recent_snapshots", "ref_listing", "retention",
           "snapshot_changes", "table_rendered"]

T = TypeVar("T")

#: Snapshot summary keys of the table totals (spec: "Snapshot Summary", Metrics).
_TOTALS = (TOTAL_RECORDS, TOTAL_DATA_FILES, TOTAL_DELETE_FILES, TOTAL_FILE_SIZE)


# --------------------------------------------------------------------------- small helpers


def duration(ms: int | None) -> str:
    """Milliseconds as the largest whole unit that fits (``5d``, ``3h``, ``250ms``)."""
    if ms is None:
        return "-"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size and ms % size == 0:
            return t("{n}" + unit, n=f"{ms // size:,}")
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            return t("{n}" + unit, n=f"{ms / size:.1f}")
    return t("{n}ms", n=ms)


def retention(ref: SnapshotRef) -> str:
    """A ref's retention settings in words (spec: "Snapshot Retention Policy"); ``-`` if none."""
    parts = []
    if ref.min_snapshots_to_keep is not None:
        parts.append(t("keep ≥ {n:,} snapshots", n=ref.min_snapshots_to_keep))
    if ref.max_snapshot_age_ms is not None:
        parts.append(t("snapshots ≤ {age} old", age=duration(ref.max_snapshot_age_ms)))
    if ref.max_ref_age_ms is not None:
        parts.append(t("ref expires after {age}", age=duration(ref.max_ref_age_ms)))
    return " · ".join(parts) or "-"


def _int(summary: Mapping[str, str] | None, key: str) -> int | None:
    if summary is None:
        return None
    try:
        return int(summary[key])
    except (KeyError, TypeError, ValueError):
        return None


def _signed(added: int | None, removed: int | None) -> str | None:
    """``+3 -1`` from an added and a removed count; None when neither is in the summary."""
    if added is None and removed is None:
        return None
    parts = [f"+{added:,}" if added else "", f"-{removed:,}" if removed else ""]
    return " ".join(p for p in parts if p) or "0"


def snapshot_changes(snap: Snapshot) -> tuple[str, str]:
    """The file and row changes a snapshot's summary records, as ``(files, records)``.

    Spec: "Snapshot Summary" (added-data-files, deleted-data-files, added-delete-files,
    removed-delete-files, added-records, deleted-records, added/removed-position-deletes,
    added/removed-equality-deletes). Parts the summary lacks are left out; ``-`` if all are.
    """
    s = snap.summary
    data = _signed(_int(s, ADDED_DATA_FILES), _int(s, DELETED_DATA_FILES))
    dels = _signed(_int(s, ADDED_DELETE_FILES), _int(s, REMOVED_DELETE_FILES))
    files = [x for x in (data if data != "0" or dels is None else None,
                         t("{n} delete", n=dels) if dels not in (None, "0") else None) if x]
    rows = _signed(_int(s, ADDED_RECORDS), _int(s, DELETED_RECORDS))
    pos = _signed(_int(s, ADDED_POS_DELETES), _int(s, REMOVED_POS_DELETES))
    eq = _signed(_int(s, ADDED_EQ_DELETES), _int(s, REMOVED_EQ_DELETES))
    records = [x for x in (rows,
                           t("{n} pos. deletes", n=pos) if pos not in (None, "0") else None,
                           t("{n} eq. deletes", n=eq) if eq not in (None, "0") else None) if x]
    return ", ".join(files) or "-", ", ".join(records) or "-"


def _table_name(t: Table) -> str:
    ident = t.identifier
    if ident:
        return ".".join(ident)
    return fmt.file_name(t.location) or t.location


def _refs_by_snapshot(refs: Mapping[str, SnapshotRef]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name in sorted(refs):
        out.setdefault(refs[name].snapshot_id, []).append(name)
    return out


def _ref_order(item: tuple[str, SnapshotRef]) -> tuple[int, str]:
    name, ref = item
    return (0 if name == MAIN_BRANCH else 1 if ref.is_branch else 2, name)


def _snapshot_timestamp(raw: Any) -> int:
    value = raw.get("timestamp-ms") if isinstance(raw, dict) else None
    return value if type(value) is int else -(2**63)


def recent_snapshots(metadata: TableMetadata, n: int) -> list[tuple[int, Snapshot | None]]:
    """The ``n`` newest snapshots by timestamp, newest first, as ``(position, snapshot)``.

    Only the chosen snapshots are parsed (their raw timestamps pick them), so a table with
    10,000 snapshots costs one pass over integers. A snapshot that cannot be parsed is None.
    """
    snaps = metadata.snapshots
    if isinstance(snaps, LazySequence):
        raw = snaps.raw
        positions = heapq.nlargest(n, range(len(raw)),
                                   key=lambda i: (_snapshot_timestamp(raw[i]), i))
    else:
        positions = heapq.nlargest(n, range(len(snaps)),
                                   key=lambda i: (snaps[i].timestamp_ms, i))
    out: list[tuple[int, Snapshot | None]] = []
    for i in positions:
        try:
            out.append((i, snaps[i]))
        except Exception:  # a malformed snapshot item: shown as unreadable, not raised
            out.append((i, None))
    return out


def _fragment(name: str, obj: Any, schema: Schema) -> Rendered:
    """A spec or sort order drawn by schema_repr's fragment function, else by its renderer."""
    from icenb.display import schema_repr

    fn: Callable[[Any, Schema], Any] | None = getattr(schema_repr, name, None)
    if fn is not None:
        try:
            got = fn(obj, schema)
        except Exception:
            got = None
        if isinstance(got, Rendered):
            return got
        if isinstance(got, str):
            return Rendered(got, render(obj).text)
    return render(obj)


# --------------------------------------------------------------------------- the table card


def _summary_line(md: TableMetadata) -> tuple[str, str]:
    """The current snapshot's totals as (html, text)."""
    cid = md.current_snapshot_id
    if cid is None:
        empty = t("empty table (no snapshot yet)")
        return h.muted(empty), empty
    try:
        snap = md.current_snapshot()
    except Exception:
        snap = None
    if snap is None:
        msg = t("current snapshot {id} cannot be read from the metadata", id=cid)
        return h.badge(t("unreadable"), "warn") + h.esc(msg), msg
    s = snap.summary
    values = {k: _int(s, k) for k in _TOTALS}
    if all(v is None for v in values.values()):
        msg = t("no totals in the current snapshot's summary")
        return h.muted(msg), msg
    def counted(n: int | None, word: str) -> str:
        return f"{fmt.count(n)} {t(word)}" if n is None else fmt.plural(n, word)

    parts = [counted(values[TOTAL_RECORDS], "row"),
             counted(values[TOTAL_DATA_FILES], "data file"),
             counted(values[TOTAL_DELETE_FILES], "delete file"),
             fmt.size(values[TOTAL_FILE_SIZE])]
    text = " · ".join(parts)
    return f"<div>{h.esc(text)}</div>", text


class Listing:
    """Rows of a folded listing, built only for the shown items, in HTML and in text."""

    def __init__(self, headers: Sequence[str], what: str, total: int) -> None:
        self.headers = list(headers)
        self.what = what
        self.total = total
        self.html_head: list[list[str]] = []
        self.html_tail: list[list[str]] = []
        self.text_head: list[list[str]] = []
        self.text_tail: list[list[str]] = []
        self.hidden = 0

    @classmethod
    def of(cls, headers: Sequence[str], what: str, items: Sequence[T],
           row: Callable[[T], tuple[list[str], list[str]]]) -> Listing:
        """Fold ``items`` by display_max_rows and build (html, text) rows for the shown ones."""
        out = cls(headers, what, len(items))
        head, out.hidden, tail = fmt.fold(items, get_options().display_max_rows)
        for item in head:
            a, b = row(item)
            out.html_head.append(a)
            out.text_head.append(b)
        for item in tail:
            a, b = row(item)
            out.html_tail.append(a)
            out.text_tail.append(b)
        return out

    def html(self) -> str:
        return folded_table(self.headers, self.html_head, self.hidden, self.html_tail,
                            self.what, text=False)

    def text(self) -> str:
        return folded_table(self.headers, self.text_head, self.hidden, self.text_tail,
                            self.what, text=True)


def ref_listing(md: TableMetadata) -> Listing:
    """Branches and tags, ``main`` first, then branches, then tags, each by name (spec:
    "Snapshot References"), folded by display_max_rows."""
    def row(item: tuple[str, SnapshotRef]) -> tuple[list[str], list[str]]:
        name, ref = item
        kind = "branch" if ref.is_branch else "tag"
        known = md.snapshot_by_id(ref.snapshot_id) is not None
        sid = h.code(ref.snapshot_id) + ("" if known else h.badge(t("missing"), "warn"))
        current = (h.badge(t("current"), "current")
                   if name == MAIN_BRANCH and ref.snapshot_id == md.current_snapshot_id else "")
        missing = "" if known else " (" + t("missing") + ")"
        return ([h.code(name) + current, h.badge(t(kind), kind), sid, h.esc(retention(ref))],
                [fmt.cut(name), t(kind), str(ref.snapshot_id) + missing, retention(ref)])
    items = sorted(md.refs.items(), key=_ref_order)
    return Listing.of([t("name"), t("type"), t("snapshot"), t("retention")], "refs", items, row)


def folded_table(headers: Sequence[str], head: Sequence[Sequence[str]], n_hidden: int,
                 tail: Sequence[Sequence[str]], what: str, *, text: bool) -> str:
    """A table of rows already folded by ``fmt.fold`` (only the shown rows were built): the
    head, one line saying how many ``what`` are hidden, then the tail."""
    if text:
        lines = tx.table(headers, [*head, *tail], indent="  ").splitlines()
        if n_hidden:
            lines.insert(1 + len(head), "  " + fmt.hidden(n_hidden, what))
        return "\n".join(lines)
    def row(cells: Sequence[str]) -> str:
        return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
    out = ['<table class="icenb-t"><thead><tr>',
           *(f"<th>{h.esc(x)}</th>" for x in headers), "</tr></thead><tbody>",
           *(row(r) for r in head)]
    if n_hidden:
        out.append(f'<tr class="icenb-fold"><td colspan="{max(len(headers), 1)}">'
                   f"{h.esc(fmt.hidden(n_hidden, what))}</td></tr>")
    out.extend(row(r) for r in tail)
    out.append("</tbody></table>")
    return "".join(out)


def _snapshot_rows(md: TableMetadata) -> tuple[list[list[str]], list[list[str]]]:
    limit = get_options().display_max_rows
    by_snap = _refs_by_snapshot(md.refs)
    html_rows: list[list[str]] = []
    text_rows: list[list[str]] = []
    for pos, snap in recent_snapshots(md, limit):
        if snap is None:
            html_rows.append([h.badge(t("unreadable"), "warn"), h.muted(f"snapshots[{pos}]"),
                              "", "", "", ""])
            text_rows.append(["(" + t("unreadable") + ")", f"snapshots[{pos}]", "", "", "", ""])
            continue
        files, records = snapshot_changes(snap)
        refs = by_snap.get(snap.snapshot_id, [])
        shown, more = fmt.first(refs)
        ref_html = "".join(h.badge(r, "branch" if md.refs[r].is_branch else "tag")
                           for r in shown) + (h.muted(" " + t("+{n:,} more", n=more)) if more
                                              else "")
        if snap.snapshot_id == md.current_snapshot_id:
            ref_html = h.badge(t("current"), "current") + ref_html
        op = snap.operation or "-"
        html_rows.append([h.code(snap.snapshot_id), h.esc(fmt.timestamp(snap.timestamp_ms)),
                          h.esc(op), h.esc(files), h.esc(records), ref_html])
        marks = ([t("current")] if snap.snapshot_id == md.current_snapshot_id else []) + refs
        text_rows.append([str(snap.snapshot_id), fmt.timestamp(snap.timestamp_ms), op, files,
                          records, fmt.cut(fmt.names(marks))])
    return html_rows, text_rows


def _metadata_pairs(tbl: Table) -> list[tuple[str, str]]:
    md = tbl.metadata
    pairs = [
        (t("location"), md.location),
        (t("metadata file"), tbl.metadata_location or "-"),
        (t("table uuid"), md.table_uuid or "-"),
        (t("last updated"), fmt.timestamp(md.last_updated_ms)),
        (t("last sequence number"), fmt.count(md.last_sequence_number)),
        (t("last column id"), str(md.last_column_id)),
        (t("last partition id"), str(md.last_partition_id)),
        (t("schemas / specs / sort orders"),
         f"{len(md.schemas)} / {len(md.partition_specs)} / {len(md.sort_orders)}"),
        (t("previous metadata files"), fmt.count(len(md.metadata_log))),
        (t("snapshot log entries"), fmt.count(len(md.snapshot_log))),
    ]
    if md.next_row_id is not None:
        pairs.append((t("next row id"), fmt.count(md.next_row_id)))
    if md.statistics or md.partition_statistics:
        pairs.append((t("statistics files"),
                      t("{table} table, {partition} partition", table=len(md.statistics),
                        partition=len(md.partition_statistics))))
    return pairs


def _properties(md: TableMetadata) -> Listing:
    def row(item: tuple[str, str]) -> tuple[list[str], list[str]]:
        k, v = item
        return [h.code(k), h.esc(v)], [fmt.cut(k), fmt.cut(v)]
    return Listing.of([t("property"), t("value")], "properties", sorted(md.properties.items()),
                      row)


def table_rendered(tbl: Table) -> Rendered:
    """The table card: header, totals, then collapsible sections (spec: "Table Metadata")."""
    md = tbl.metadata
    name = _table_name(tbl)
    n_snaps = len(md.snapshots)
    n_refs = len(md.refs)
    current = md.current_snapshot_id
    version = t("format v{v}", v=md.format_version) + (
        " (" + t("experimental") + ")" if md.format_version >= 4 else "")
    sub = [version, fmt.plural(n_snaps, "snapshot"),
           fmt.plural(n_refs, "ref"), t("current {id}", id=current) if current is not None
           else t("no current snapshot")]
    subtitle = " · ".join(sub)
    summary_html, summary_text = _summary_line(md)

    schema_r = render(md.schema)
    spec_r = _fragment("spec_fragment", md.spec, md.schema)
    order_r = _fragment("sort_order_fragment", md.sort_order, md.schema)
    refs = ref_listing(md)
    snap_html, snap_text = _snapshot_rows(md)
    props = _properties(md)
    meta = _metadata_pairs(tbl)

    snap_headers = [t("snapshot"), t("committed (UTC)"), t("operation"), t("files"),
                    t("records"), t("refs")]
    hint = t("newest first; t.snapshots draws the tree")
    n_fields = len(md.schema.fields)
    spec_count = (t("unpartitioned") if md.spec.is_unpartitioned
                  else fmt.plural(len(md.spec.fields), "field"))
    order_count = (t("unsorted") if not md.sort_order.fields
                   else fmt.plural(len(md.sort_order.fields), "field"))
    id_ = t("id {id}", id=md.current_schema_id)

    body = [
        summary_html,
        h.section(t("Schema"), schema_r.html, open=True,
                  count=f"{id_} · {fmt.plural(n_fields, 'column')}"),
        h.section(t("Partition spec"), spec_r.html,
                  count=f"{t('id {id}', id=md.default_spec_id)} · {spec_count}"),
        h.section(t("Sort order"), order_r.html,
                  count=f"{t('id {id}', id=md.default_sort_order_id)} · {order_count}"),
        h.section(t("Branches & tags"),
                  refs.html() if refs.total else h.muted(t("no branches or tags")),
                  count=str(refs.total)),
        h.section(t("Recent snapshots"),
                  (h.table(snap_headers, snap_html, total=n_snaps, what="older snapshots")
                   + f"<div>{h.muted(hint)}</div>") if n_snaps else h.muted(t("no snapshots")),
                  count=t("{shown} of {total:,}", shown=min(len(snap_html), n_snaps),
                          total=n_snaps)),
        h.section(t("Properties"),
                  props.html() if md.properties else h.muted(t("no properties")),
                  count=str(len(md.properties))),
        h.section(t("Metadata"), h.kv((k, h.esc(v, 2000)) for k, v in meta)),
    ]
    html = h.card(t("Table"), name, h.esc(subtitle), "".join(body))

    lines = [f"{t('Table')} {name}  ({subtitle})", f"  {summary_text}", t("Schema") + ":",
             tx.indent(schema_r.text, "  "), f"{t('Partition spec')}: {_one_line(spec_r.text)}",
             f"{t('Sort order')}: {_one_line(order_r.text)}"]
    if refs.total:
        lines += [t("Branches & tags") + ":", refs.text()]
    if n_snaps:
        lines += [f"{t('Recent snapshots')} ({hint}):",
                  tx.table(snap_headers, snap_text, total=n_snaps, what="older snapshots",
                           indent="  ")]
    if md.properties:
        lines += [t("Properties") + ":", props.text()]
    lines += [t("Metadata") + ":", tx.kv(meta, indent="  ")]
    return Rendered(html, "\n".join(lines))


def _one_line(text: str) -> str:
    """A rendering after a ``label:``: its first line there, the rest indented below."""
    first, _, rest = text.partition("\n")
    return first + ("\n" + tx.indent(rest, "  ") if rest else "")


@register(Table, text_str=True)
def _table(tbl: Table) -> Rendered:
    return table_rendered(tbl)


# --------------------------------------------------------------------------- warehouse, catalogs


def _catalog_pairs(cat: Catalog) -> list[tuple[str, str]]:
    pairs = [(t("catalog name"), cat.name)]
    if isinstance(cat, SqlCatalog):
        pairs += [(t("kind"), t("SQL catalog (SQLite, Iceberg JDBC catalog schema)")),
                  (t("database"), cat.database), ("uri", cat.uri),
                  (t("warehouse"), cat.warehouse or "-")]
    elif isinstance(cat, FilesystemCatalog):
        pairs += [(t("kind"), t("filesystem catalog (Hadoop layout)")),
                  (t("warehouse"), cat.warehouse)]
    else:
        pairs.append((t("kind"), type(cat).__name__))
    return pairs


def _hint_card(kind: str, title: str, pairs: list[tuple[str, str]],
               hints: list[str]) -> Rendered:
    hint_html = "<div>" + h.muted(t("Listing reads the catalog: ")) + ", ".join(
        h.code(x) for x in hints) + "</div>"
    html = h.card(kind, title, "", h.kv((k, h.esc(v)) for k, v in pairs) + hint_html)
    text = "\n".join([f"{kind} {title}", tx.kv(pairs, indent="  "),
                      "  (" + t("listing reads the catalog: ") + ", ".join(hints) + ")"])
    return Rendered(html, text)


@register(Warehouse)
def _warehouse(w: Warehouse) -> Rendered:
    return _hint_card(t("Warehouse"), w.location, _catalog_pairs(w.catalog),
                      ["wh.namespaces()", "wh.tables()", 'wh.table("db.name")'])


@register(Catalog)
def _catalog(cat: Catalog) -> Rendered:
    title = cat.name
    if isinstance(cat, (SqlCatalog, FilesystemCatalog)) and cat.warehouse:
        title = f"{cat.name} · {cat.warehouse}"
    return _hint_card(type(cat).__name__, title, _catalog_pairs(cat),
                      ["cat.list_namespaces()", 'cat.list_tables("db")', "cat.all_tables()",
                       'cat.load_table("db.name")'])


# --------------------------------------------------------------------------- ref changes, expiry


def _ref_text(ref: SnapshotRef | None) -> str:
    if ref is None:
        return "-"
    return f"{t('branch') if ref.is_branch else t('tag')} → {ref.snapshot_id}"


@register(ManageSnapshots)
def _manage_snapshots(m: ManageSnapshots) -> Rendered:
    """Pending ref changes against the refs the builder started from (spec: Snapshot References)."""
    base: Mapping[str, SnapshotRef] = getattr(m, "_base").refs  # noqa: B009
    now = m.refs
    done = bool(getattr(m, "_done", False))
    rows: list[tuple[str, str, str, str]] = []
    for name in sorted(set(base) | set(now)):
        old, new = base.get(name), now.get(name)
        if old == new:
            continue
        change = "added" if old is None else "removed" if new is None else "changed"
        rows.append((name, change, _ref_text(old), _ref_text(new)))
    limit = get_options().display_max_rows
    kinds = {"added": "added", "removed": "deleted", "changed": "warn"}
    headers = [t("ref"), t("change"), t("before"), t("after")]
    html_rows = [[h.code(n), h.badge(t(c), kinds[c]), h.esc(a), h.esc(b)]
                 for n, c, a, b in rows]
    state = t("committed") if done else t("pending (commits when the with-block ends)")
    body = (h.table(headers, html_rows, limit=limit, what="ref changes") if rows
            else h.muted(t("no ref changes yet")))
    html = h.card(t("Ref changes"), state, h.esc(fmt.plural(len(rows), "change")), body)
    text = f"{t('Ref changes')} ({state}): {fmt.plural(len(rows), 'change')}"
    if rows:
        text += "\n" + tx.table(headers, [[n, t(c), a, b] for n, c, a, b in rows], limit=limit,
                                what="ref changes", indent="  ")
    return Rendered(html, text)


_KIND_LABEL = {"data_files": "data files", "position_delete_files": "position delete files",
               "equality_delete_files": "equality delete files", "manifests": "manifests",
               "manifest_lists": "manifest lists", "statistics_files": "statistics files",
               "manifest_dvs": "manifest DV files", "root_manifests": "root manifests"}


@register(ExpireSnapshotsResult)
def _expire_result(r: ExpireSnapshotsResult) -> Rendered:
    """What expire_snapshots removed (spec: "Snapshot Retention Policy"), bounded lists."""
    limit = get_options().display_max_rows
    title = t("dry run") if r.dry_run else (t("committed") if r.committed
                                             else t("nothing to commit"))
    ids = list(r.expired_snapshot_ids)
    head, n_hidden, tail = fmt.fold(ids, limit)
    id_text = ", ".join(str(i) for i in head)
    if n_hidden:
        id_text += f", {fmt.hidden(n_hidden, 'snapshots')}"
    if tail:
        id_text += ", " + ", ".join(str(i) for i in tail)
    verb = "would delete {what}" if r.dry_run else "deleted {what}"
    counts = [(t(verb, what=t(_KIND_LABEL.get(k, k))), fmt.count(r.count(k))) for k in r.kinds]
    pairs = [(t("expired snapshots"), f"{len(ids):,}" + (f": {id_text}" if ids else "")),
             (t("removed refs"), ", ".join(r.removed_refs) or "-"), *counts]
    files = [(k, p) for k in FILE_KINDS for p in sorted(r.deleted_files.get(k, ()))]

    def file_row(item: tuple[str, str]) -> tuple[list[str], list[str]]:
        kind, path = item
        label = t(_KIND_LABEL.get(kind, kind))
        return [h.esc(label), h.code(path)], [label, fmt.cut(path)]

    def failed_row(path: str) -> tuple[list[str], list[str]]:
        return [h.code(path)], [fmt.cut(path)]

    body = h.kv((k, h.esc(v)) for k, v in pairs)
    if files:
        listing = Listing.of([t("kind"), t("path")], "files", files, file_row)
        body += h.section(t("Files"), listing.html(), count=str(len(files)))
    if r.failed_deletes:
        failed = Listing.of([t("path")], "files", list(r.failed_deletes), failed_row)
        body += h.error(t("{n:,} files could not be deleted (kept; the table no longer needs "
                          "them)", n=len(r.failed_deletes))) + failed.html()
    html = h.card(t("Expire snapshots"), title,
                  h.esc(t("{snapshots} expired", snapshots=fmt.plural(len(ids), "snapshot"))),
                  body)
    text = f"{t('Expire snapshots')} ({title})\n" + tx.kv(pairs, indent="  ")
    if r.failed_deletes:
        text += "\n  " + t("failed deletes: {n:,}", n=len(r.failed_deletes))
    return Rendered(html, text)
