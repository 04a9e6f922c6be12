"""Reprs of snapshots, summaries, refs, log entries, statistics files and table metadata.

Spec sections: Snapshots, Snapshot References, Table Metadata (snapshot-log, metadata-log,
statistics, partition-statistics), Appendix F (optional snapshot summary fields). Lists are
folded before any row is built, so a table with 10,000 snapshots renders only the shown ones
(``LazySequence`` parses only the items indexed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register, render
from icenb.display.schema_repr import fold_html, fold_text, sort_order_fragment, spec_fragment
from icenb.errors import IcebergError
from icenb.labels import t
from icenb.options import get_options
from icenb.spec.snapshot import (
    ADDED_DATA_FILES,
    ADDED_DELETE_FILES,
    ADDED_DVS,
    ADDED_EQ_DELETE_FILES,
    ADDED_EQ_DELETES,
    ADDED_FILE_SIZE,
    ADDED_POS_DELETE_FILES,
    ADDED_POS_DELETES,
    ADDED_RECORDS,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
    REMOVED_DELETE_FILES,
    REMOVED_DVS,
    REMOVED_EQ_DELETE_FILES,
    REMOVED_EQ_DELETES,
    REMOVED_FILE_SIZE,
    REMOVED_POS_DELETE_FILES,
    REMOVED_POS_DELETES,
    TOTAL_DATA_FILES,
    TOTAL_DELETE_FILES,
    TOTAL_EQ_DELETES,
    TOTAL_FILE_SIZE,
    TOTAL_POS_DELETES,
    TOTAL_RECORDS,
    BlobMetadata,
    MetadataLogEntry,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    Summary,
)
from icenb.spec.table_metadata import TableMetadata

T = TypeVar("T")

__all__ = [
    "SUMMARY_GROUPS",
    "operation_badge",
    "properties_fragment",
    "ref_badge",
    "retention_text",
    "summary_fragment",
    "table_metadata_repr",
]

# Appendix F "Optional Snapshot Summary Fields": (label, added key, removed key, total key,
# is a byte size). ``added-dvs``/``removed-dvs`` are written by v3 writers (deletion vectors).
SUMMARY_GROUPS: tuple[tuple[str, str | None, str | None, str | None, bool], ...] = (
    ("data files", ADDED_DATA_FILES, DELETED_DATA_FILES, TOTAL_DATA_FILES, False),
    ("delete files", ADDED_DELETE_FILES, REMOVED_DELETE_FILES, TOTAL_DELETE_FILES, False),
    ("position delete files", ADDED_POS_DELETE_FILES, REMOVED_POS_DELETE_FILES,
     None, False),
    ("equality delete files", ADDED_EQ_DELETE_FILES, REMOVED_EQ_DELETE_FILES,
     None, False),
    ("deletion vectors", ADDED_DVS, REMOVED_DVS, None, False),
    ("records", ADDED_RECORDS, DELETED_RECORDS, TOTAL_RECORDS, False),
    ("position deletes", ADDED_POS_DELETES, REMOVED_POS_DELETES,
     TOTAL_POS_DELETES, False),
    ("equality deletes", ADDED_EQ_DELETES, REMOVED_EQ_DELETES,
     TOTAL_EQ_DELETES, False),
    ("size", ADDED_FILE_SIZE, REMOVED_FILE_SIZE, TOTAL_FILE_SIZE, True),
)
_GROUPED = frozenset(k for g in SUMMARY_GROUPS for k in g[1:4] if isinstance(k, str))

#: Characters of a file location shown before it is cut (locations are worth reading whole).
PATH_LIMIT = 1000


def _path(location: str) -> str:
    return f"<code>{h.esc(location, PATH_LIMIT)}</code>"


_OP_KIND = {"append": "added", "overwrite": "warn", "delete": "deleted", "replace": "info"}


def operation_badge(operation: Any) -> str:
    """A colored badge for a snapshot operation (spec: Snapshots, ``operation``)."""
    if operation is None:
        return h.badge(t("no summary"), "muted")
    op = str(operation)
    return h.badge(op, _OP_KIND.get(op, "muted"))


def ref_badge(name: str, ref: SnapshotRef) -> str:
    """A branch or tag badge carrying the ref name."""
    return h.badge(name, "tag" if ref.is_tag else "branch")


def _duration(ms: int) -> str:
    """Milliseconds as the largest whole unit that divides them (``7d``, ``36h``, ``90s``)."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms % size == 0:
            return t("{n}" + unit, n=f"{ms // size:,}")
    return t("{n}ms", n=f"{ms:,}")


def retention_text(ref: SnapshotRef) -> str:
    """The retention settings of a ref (spec: Snapshot Retention Policy); empty when none."""
    parts = []
    if ref.min_snapshots_to_keep is not None:
        parts.append(f"min-snapshots-to-keep={ref.min_snapshots_to_keep}")
    if ref.max_snapshot_age_ms is not None:
        parts.append(f"max-snapshot-age={_duration(ref.max_snapshot_age_ms)}")
    if ref.max_ref_age_ms is not None:
        parts.append(f"max-ref-age={_duration(ref.max_ref_age_ms)}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- summary


def _num(value: str | None, is_size: bool) -> str:
    if value is None:
        return ""
    try:
        n = int(value)
    except ValueError:
        return fmt.cut(value)
    return fmt.size(n) if is_size else fmt.count(n)


def summary_fragment(summary: Mapping[str, str] | None) -> Rendered:
    """A snapshot summary: metrics grouped as added / removed / total, other keys after.

    Spec: Appendix F. Values are strings in the file; numbers are shown with separators (sizes
    in binary units) and anything unparsable is shown as written.
    """
    if summary is None:
        return Rendered(h.muted(t("no summary")), t("no summary"))
    props = summary.properties if isinstance(summary, Summary) else \
        {k: v for k, v in summary.items() if k != "operation"}
    op = summary.operation if isinstance(summary, Summary) else summary.get("operation")
    grouped: list[list[str]] = []
    for label, add, rem, tot, is_size in SUMMARY_GROUPS:
        vals = [props.get(k) if k else None for k in (add, rem, tot)]
        if all(v is None for v in vals):
            continue
        grouped.append([t(label), *(_num(v, is_size) for v in vals)])
    others = [(k, v) for k, v in props.items() if k not in _GROUPED]
    limit = get_options().display_max_rows
    head, n_hidden, tail = fmt.fold(others, limit)
    shown = [*head, *tail]
    headers = ["", t("added"), t("removed"), t("total")]
    parts_html = [f"{h.muted(t('operation'))} {operation_badge(op)}"]
    parts_text = [f"{t('operation')}: {op if op is not None else '-'}"]
    if grouped:
        parts_html.append(h.table(headers, [[h.esc(c) for c in r] for r in grouped]))
        parts_text.append(tx.table(headers, grouped, indent="  "))
    if shown:
        rows = [[h.code(k), h.esc(v)] for k, v in shown]
        headers = [t("property"), t("value")]
        parts_html.append(fold_html(headers, rows, n_hidden, "summary properties"))
        parts_text.append(fold_text(headers, [[k, fmt.cut(v)] for k, v in shown],
                                    n_hidden, "summary properties"))
    return Rendered("".join(parts_html), "\n".join(parts_text))


@register(Summary)
def summary_repr(summary: Summary) -> Rendered:
    """A summary on its own (spec: Snapshots, ``summary``)."""
    r = summary_fragment(summary)
    return Rendered(h.card(t("Snapshot summary"), str(summary.operation), "", r.html), r.text)


# --------------------------------------------------------------------------- snapshot


def _snapshot_pairs(s: Snapshot) -> list[tuple[str, str, str]]:
    """(key, html, text) rows of a snapshot's own fields."""
    rows: list[tuple[str, str, str]] = [
        (t("snapshot id"), h.code(s.snapshot_id), str(s.snapshot_id)),
        (t("parent"), h.code(s.parent_snapshot_id) if s.parent_snapshot_id is not None
         else h.muted(t("none (root)")),
         str(s.parent_snapshot_id) if s.parent_snapshot_id is not None else t("none (root)")),
        (t("sequence number"), h.esc(s.sequence_number), str(s.sequence_number)),
        (t("timestamp"), h.esc(fmt.timestamp(s.timestamp_ms) + " UTC"),
         fmt.timestamp(s.timestamp_ms) + " UTC"),
        (t("operation"), operation_badge(s.operation),
         str(s.operation) if s.operation is not None else "-"),
    ]
    if s.schema_id is not None:
        rows.append((t("schema id"), h.esc(s.schema_id), str(s.schema_id)))
    if s.manifest_list is not None:
        rows.append((t("manifest list"), _path(s.manifest_list),
                     fmt.cut(s.manifest_list, PATH_LIMIT)))
    if s.root_manifest is not None:  # experimental v4 (docs/v4-layout.md#root-pointer)
        rows.append((t("root manifest"), _path(s.root_manifest),
                     fmt.cut(s.root_manifest, PATH_LIMIT)))
    if s.manifests is not None:  # v1 without a manifest list
        head, n_hidden, tail = fmt.fold(s.manifests, get_options().display_max_manifests)
        names = [fmt.file_name(m) for m in (*head, *tail)]
        more = f" {fmt.hidden(n_hidden, 'manifests')}" if n_hidden else ""
        rows.append((t("manifests"), h.esc(", ".join(names) + more), ", ".join(names) + more))
    if s.first_row_id is not None:
        rows.append((t("first row id"), h.esc(s.first_row_id), str(s.first_row_id)))
    if s.added_rows is not None:
        rows.append((t("added rows"), h.esc(fmt.count(s.added_rows)), fmt.count(s.added_rows)))
    if s.key_id is not None:
        rows.append((t("key id"), h.code(s.key_id), s.key_id))
    return rows


@register(Snapshot)
def snapshot_repr(s: Snapshot) -> Rendered:
    """A snapshot card: ids, sequence number, time, operation, manifest list (v4: root
    manifest) and summary. Titled by its short label S<sequence number> (the label drawings of
    its table give it: icenb.table.explore.snapshot_labels) when it has one, the full id the
    card's first row; a v1 snapshot (sequence number 0) by its id."""
    pairs = _snapshot_pairs(s)
    summ = summary_fragment(s.summary)
    short = bool(s.sequence_number) and get_options().display_short_ids_max > 0
    html = h.card(t("Snapshot"), f"S{s.sequence_number}" if short else str(s.snapshot_id),
                  operation_badge(s.operation) + h.muted(fmt.timestamp(s.timestamp_ms)),
                  h.kv((k, v) for k, v, _ in pairs)
                  + h.section(t("summary"), summ.html, open=True))
    text = (f"{t('Snapshot')} {s.snapshot_id}\n"
            + tx.kv(((k, x) for k, _, x in pairs), indent="  ")
            + f"\n  {t('summary')}:\n" + tx.indent(summ.text, "    "))
    return Rendered(html, text)


@register(SnapshotRef)
def snapshot_ref_repr(ref: SnapshotRef) -> Rendered:
    """A branch or tag: the snapshot it points to and its retention (spec: Snapshot References)."""
    kind = t(str(ref.ref_type))
    ret = retention_text(ref)
    html = (f"{h.badge(kind, 'tag' if ref.is_tag else 'branch')} {h.muted(t('→ snapshot'))} "
            f"{h.code(ref.snapshot_id)}" + (f" {h.muted(ret)}" if ret else ""))
    text = f"{kind} -> {ref.snapshot_id}" + (f" ({ret})" if ret else "")
    return Rendered(html, text)


@register(SnapshotLogEntry)
def snapshot_log_entry_repr(e: SnapshotLogEntry) -> Rendered:
    """A snapshot-log entry: when the snapshot became current (spec: Table Metadata)."""
    ts = fmt.timestamp(e.timestamp_ms)
    return Rendered(f"{h.muted(ts)} {h.code(e.snapshot_id)}", f"{ts}  {e.snapshot_id}")


@register(MetadataLogEntry)
def metadata_log_entry_repr(e: MetadataLogEntry) -> Rendered:
    """A metadata-log entry: a previous metadata file and when it was written."""
    ts = fmt.timestamp(e.timestamp_ms)
    return Rendered(f"{h.muted(ts)} {_path(e.metadata_file)}", f"{ts}  {e.metadata_file}")


def _blob_row(b: BlobMetadata) -> list[str]:
    props = ", ".join(f"{k}={v}" for k, v in sorted(b.properties.items()))
    return [b.blob_type, str(b.snapshot_id), str(b.sequence_number),
            ", ".join(str(i) for i in b.fields), props]


_BLOB_HEADERS = ["type", "snapshot", "sequence", "fields", "properties"]


def _blob_headers() -> list[str]:
    return [t(x) for x in _BLOB_HEADERS]


@register(BlobMetadata)
def blob_metadata_repr(b: BlobMetadata) -> Rendered:
    """One Puffin blob described in table metadata (spec: Table Statistics)."""
    row = _blob_row(b)
    return Rendered(h.table(_blob_headers(), [[h.esc(c) for c in row]]),
                    tx.table(_blob_headers(), [row]))


@register(StatisticsFile)
def statistics_file_repr(f: StatisticsFile) -> Rendered:
    """A table statistics (Puffin) file and its blobs (spec: Table Statistics)."""
    pairs = [(t("snapshot id"), str(f.snapshot_id)), (t("path"), f.statistics_path),
             (t("size"), fmt.size(f.file_size_in_bytes)),
             (t("footer size"), fmt.size(f.file_footer_size_in_bytes))]
    head, n_hidden, tail = fmt.fold(f.blob_metadata, get_options().display_max_rows)
    rows = [_blob_row(b) for b in (*head, *tail)]
    html = h.card(t("Statistics file"), fmt.file_name(f.statistics_path), "",
                  h.kv((k, _path(v) if k == t("path") else h.esc(v)) for k, v in pairs)
                  + fold_html(_blob_headers(), [[h.esc(c) for c in r] for r in rows], n_hidden,
                              "blobs"))
    text = (t("Statistics file") + "\n" + tx.kv(pairs, indent="  ") + "\n"
            + fold_text(_blob_headers(), rows, n_hidden, "blobs"))
    return Rendered(html, text)


@register(PartitionStatisticsFile)
def partition_statistics_file_repr(f: PartitionStatisticsFile) -> Rendered:
    """A partition statistics file (spec: Partition Statistics)."""
    pairs = [(t("snapshot id"), str(f.snapshot_id)), (t("path"), f.statistics_path),
             (t("size"), fmt.size(f.file_size_in_bytes))]
    html = h.card(t("Partition statistics file"), fmt.file_name(f.statistics_path), "",
                  h.kv((k, _path(v) if k == t("path") else h.esc(v)) for k, v in pairs))
    return Rendered(html, t("Partition statistics file") + "\n" + tx.kv(pairs, indent="  "))


# --------------------------------------------------------------------------- table metadata


def properties_fragment(props: Mapping[str, str], what: str = "properties") -> Rendered:
    """Key/value properties sorted by key, folded to ``display_max_rows``."""
    keys = sorted(props)
    head, n_hidden, tail = fmt.fold(keys, get_options().display_max_rows)
    shown = [*head, *tail]
    headers = [t("key"), t("value")]
    html = fold_html(headers, [[h.code(k), h.esc(props[k])] for k in shown], n_hidden, what)
    text = fold_text(headers, [[fmt.cut(k), fmt.cut(props[k])] for k in shown], n_hidden, what)
    return Rendered(html, text)


def _snapshot_row(md: TableMetadata, s: Snapshot, heads: Mapping[int, list[str]]
                  ) -> tuple[list[str], list[str]]:
    refs = heads.get(s.snapshot_id, [])
    shown, more = fmt.first(refs)
    badges = "".join(ref_badge(n, md.refs[n]) for n in shown) + \
        (h.muted(" " + t("+{n:,} more", n=more)) if more else "")
    if s.snapshot_id == md.current_snapshot_id and "main" not in refs:
        badges += h.badge(t("current"), "current")
    summ = s.summary
    added = summ.get(ADDED_RECORDS) if summ is not None else None
    total = summ.get(TOTAL_RECORDS) if summ is not None else None
    html = [h.code(s.snapshot_id) + (" " + badges if badges else ""),
            h.esc(fmt.timestamp(s.timestamp_ms)), operation_badge(s.operation),
            h.esc(s.sequence_number), h.esc(_num(added, False)), h.esc(_num(total, False))]
    text = [str(s.snapshot_id), fmt.timestamp(s.timestamp_ms),
            str(s.operation) if s.operation is not None else "-", str(s.sequence_number),
            _num(added, False), _num(total, False), fmt.names(refs, sep=" ")]
    return html, text


def _ref_heads(md: TableMetadata) -> dict[int, list[str]]:
    heads: dict[int, list[str]] = {}
    for name in sorted(md.refs):
        heads.setdefault(md.refs[name].snapshot_id, []).append(name)
    return heads


def _items(seq: Sequence[T], limit: int) -> tuple[list[tuple[int, T | None, str]], int, int]:
    """The shown items of a (lazy) list as (index, item or None, error), the number hidden and
    where the tail starts; an item that fails to parse becomes an error row, not an exception.
    """
    head, n_hidden, tail = fmt.fold(range(len(seq)), limit)
    out: list[tuple[int, T | None, str]] = []
    for i in (*head, *tail):
        try:
            out.append((i, seq[i], ""))
        except IcebergError as e:
            out.append((i, None, str(e)))
    return out, n_hidden, len(head)


def _snapshots_fragment(md: TableMetadata) -> Rendered:
    """The snapshots in file order (oldest first), folded to ``display_max_snapshots``."""
    items, n_hidden, _ = _items(md.snapshots, get_options().display_max_snapshots)
    heads = _ref_heads(md)
    html_rows, text_rows = [], []
    for i, s, err in items:
        if s is None:
            html_rows.append([h.error(f"snapshots[{i}]: {err}"), "", "", "", "", ""])
            text_rows.append([f"snapshots[{i}]: {t('unreadable')} ({fmt.cut(err)})", "", "", "",
                              "", "", ""])
            continue
        hr, tr = _snapshot_row(md, s, heads)
        html_rows.append(hr)
        text_rows.append(tr)
    headers = [t("snapshot"), t("timestamp"), t("operation"), t("seq"), t("added records"),
               t("total records")]
    return Rendered(fold_html(headers, html_rows, n_hidden, "snapshots"),
                    fold_text([*headers, t("refs")], text_rows, n_hidden, "snapshots"))


def _refs_fragment(md: TableMetadata) -> Rendered:
    names = sorted(md.refs)
    head, n_hidden, tail = fmt.fold(names, get_options().display_max_rows)
    html_rows, text_rows = [], []
    for name in (*head, *tail):
        ref = md.refs[name]
        _, why = _find(md, ref.snapshot_id)
        warn = " " + h.badge(t("snapshot {why}", why=why), "warn") if why else ""
        html_rows.append([ref_badge(name, ref), h.esc(t(str(ref.ref_type))),
                          h.code(ref.snapshot_id) + warn, h.esc(retention_text(ref))])
        text_rows.append([name, t(str(ref.ref_type)),
                          str(ref.snapshot_id) + (f" ({fmt.cut(why, 40)})" if why else ""),
                          retention_text(ref)])
    headers = [t("name"), t("type"), t("snapshot"), t("retention")]
    return Rendered(fold_html(headers, html_rows, n_hidden, "refs"),
                    fold_text(headers, text_rows, n_hidden, "refs"))


def _log_fragment(entries: Sequence[Any], what: str, base: str) -> Rendered:
    """The snapshot log or metadata log, newest last, folded to ``display_max_snapshots``."""
    items, n_hidden, _ = _items(entries, get_options().display_max_snapshots)
    rows: list[list[str]] = []
    for i, e, err in items:
        if isinstance(e, SnapshotLogEntry):
            rows.append([fmt.timestamp(e.timestamp_ms), str(e.snapshot_id)])
        elif isinstance(e, MetadataLogEntry):
            rows.append([fmt.timestamp(e.timestamp_ms), fmt.short_path(e.metadata_file, base)])
        else:
            rows.append([f"[{i}] {t('unreadable')}", fmt.cut(err)])
    headers = [t("timestamp"),
               t("snapshot" if what == "snapshot log entries" else "metadata file")]
    return Rendered(fold_html(headers, [[h.esc(c) for c in r] for r in rows], n_hidden, what),
                    fold_text(headers, rows, n_hidden, what))


def _find(md: TableMetadata, snapshot_id: int) -> tuple[Snapshot | None, str]:
    """The snapshot with this id, or None and why (missing, or its entry is unreadable)."""
    try:
        found = md.snapshot_by_id(snapshot_id)
    except IcebergError as e:
        return None, f"{t('unreadable')}: {e}"
    return found, "" if found is not None else t("missing")


def _current_snapshot(md: TableMetadata) -> tuple[str, str]:
    sid = md.current_snapshot_id
    if sid is None:
        return h.muted(t("none (empty table)")), t("none (empty table)")
    _, why = _find(md, sid)
    if why:
        note = t("snapshot {why}", why=fmt.cut(why, 40))
        return h.code(sid) + " " + h.badge(note, "warn"), f"{sid} ({note})"
    return h.code(sid), str(sid)


def _metadata_pairs(md: TableMetadata) -> list[tuple[str, str, str]]:
    cur_h, cur_t = _current_snapshot(md)
    rows: list[tuple[str, str, str]] = [
        (t("format version"), h.esc(md.format_version), str(md.format_version)),
        (t("table uuid"), h.code(md.table_uuid or "-"), md.table_uuid or "-"),
        (t("location"), _path(md.location), fmt.cut(md.location, PATH_LIMIT)),
        (t("last updated"), h.esc(fmt.timestamp(md.last_updated_ms) + " UTC"),
         fmt.timestamp(md.last_updated_ms) + " UTC"),
        (t("last sequence number"), h.esc(md.last_sequence_number),
         str(md.last_sequence_number)),
        (t("last column id"), h.esc(md.last_column_id), str(md.last_column_id)),
        (t("last partition id"), h.esc(md.last_partition_id), str(md.last_partition_id)),
        (t("current snapshot"), cur_h, cur_t),
        (t("current schema id"), h.esc(md.current_schema_id), str(md.current_schema_id)),
        (t("default spec id"), h.esc(md.default_spec_id), str(md.default_spec_id)),
        (t("default sort order id"), h.esc(md.default_sort_order_id),
         str(md.default_sort_order_id)),
    ]
    if md.next_row_id is not None:
        rows.append((t("next row id"), h.esc(md.next_row_id), str(md.next_row_id)))
    counts = [fmt.plural(len(md.schemas), "schema"), fmt.plural(len(md.partition_specs), "spec"),
              fmt.plural(len(md.sort_orders), "sort order"),
              fmt.plural(len(md.snapshots), "snapshot"), fmt.plural(len(md.refs), "ref"),
              fmt.plural(len(md.snapshot_log), "snapshot log entry", "snapshot log entries"),
              fmt.plural(len(md.metadata_log), "metadata log entry", "metadata log entries")]
    if md.statistics:
        counts.append(fmt.plural(len(md.statistics), "statistics file"))
    if md.partition_statistics:
        counts.append(fmt.plural(len(md.partition_statistics), "partition statistics file"))
    rows.append((t("contains"), h.esc(", ".join(counts)), ", ".join(counts)))
    return rows


@register(TableMetadata, text_repr=True)
def table_metadata_repr(md: TableMetadata) -> Rendered:
    """A table metadata card (spec: Table Metadata): fields, counts, the current schema, spec
    and sort order, refs, newest snapshots, logs and properties - each folded.

    The text starts with the one-line summary repr, then the details.
    """
    pairs = _metadata_pairs(md)
    schema = md.schema_by_id(md.current_schema_id)
    spec = md.spec_by_id(md.default_spec_id)
    order = md.sort_order_by_id(md.default_sort_order_id)
    no_schema = t("current schema {id} is missing", id=md.current_schema_id)
    no_spec = t("default spec {id} is missing", id=md.default_spec_id)
    no_order = t("default sort order {id} is missing", id=md.default_sort_order_id)
    schema_r = render(schema) if schema is not None else Rendered(h.error(no_schema), no_schema)
    spec_r = spec_fragment(spec, schema) if spec is not None else Rendered(
        h.error(no_spec), no_spec)
    order_r = sort_order_fragment(order, schema) if order is not None else Rendered(
        h.error(no_order), no_order)
    refs_r = _refs_fragment(md)
    snaps_r = _snapshots_fragment(md)
    props_r = properties_fragment(md.properties)
    slog_r = _log_fragment(md.snapshot_log, "snapshot log entries", md.location)
    mlog_r = _log_fragment(md.metadata_log, "metadata log entries", md.location)
    sections = [
        h.section(t("current schema"), schema_r.html, open=True,
                  count=t("id {id}", id=md.current_schema_id)),
        h.section(t("partitioning and sort order"), h.columns(spec_r.html, order_r.html),
                  open=True),
        h.section(t("refs"), refs_r.html, count=str(len(md.refs)), open=bool(md.refs)),
        h.section(t("snapshots"), snaps_r.html, count=fmt.count(len(md.snapshots))),
        h.section(t("snapshot log"), slog_r.html, count=fmt.count(len(md.snapshot_log))),
        h.section(t("metadata log"), mlog_r.html, count=fmt.count(len(md.metadata_log))),
        h.section(t("properties"), props_r.html, count=str(len(md.properties))),
    ]
    cur = md.current_snapshot_id
    sub = h.muted(f"v{md.format_version} · " + (
        t("current snapshot {id}", id=cur) if cur is not None else t("no snapshots")))
    html = h.card(t("Table metadata"), fmt.table_place(None, md.location), sub,
                  h.kv((k, v) for k, v, _ in pairs) + "".join(sections))
    text_parts = [
        _one_line(md),
        tx.kv(((k, x) for k, _, x in pairs), indent="  "),
        f"  {t('current schema')}:\n" + tx.indent(schema_r.text, "    "),
        f"  {t('partitioning')}:\n" + tx.indent(spec_r.text, "    "),
        f"  {t('sort order')}:\n" + tx.indent(order_r.text, "    "),
    ]
    if md.refs:
        text_parts.append(f"  {t('refs')}:\n" + tx.indent(refs_r.text, "  "))
    if md.snapshots:
        text_parts.append(f"  {t('snapshots')}:\n" + tx.indent(snaps_r.text, "  "))
    if md.properties:
        text_parts.append(f"  {t('properties')}:\n" + tx.indent(props_r.text, "  "))
    return Rendered(html, "\n".join(text_parts))


def _one_line(md: TableMetadata) -> str:
    """The classic one-line summary (kept as the text repr's first line)."""
    return (f"TableMetadata(format_version={md.format_version}, "
            f"table_uuid={md.table_uuid!r}, location={md.location!r}, "
            f"current_snapshot_id={md.current_snapshot_id}, "
            f"snapshots={len(md.snapshots)}, schemas={len(md.schemas)}, "
            f"refs=[{fmt.names([repr(r) for r in sorted(md.refs)])}])")
