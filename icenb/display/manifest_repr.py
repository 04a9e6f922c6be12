"""Reprs of manifest-level objects: manifest list entries, manifest entries, content files,
partition field summaries, deletion vectors and decoded (cached) manifests.

Spec: "Manifest Lists" (``manifest_file``, ``field_summary``), "Manifests" (``manifest_entry``,
``data_file``), "Deletion Vectors". Nothing here reads a file. Bounds and partition values
are shown as values (:mod:`icenb.display.kit.values`) when the object was read from a table,
which attaches the types (:func:`icenb.spec.human.attach_types`); objects built by hand, and
every object under ``icenb.set_options(display_raw_bounds=True)``, show hex bounds.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit import values as vals
from icenb.display.kit.fmt import count, cut, file_name, fold, hidden, size
from icenb.display.registry import Rendered, register
from icenb.io.manifest_reader import DecodedManifest
from icenb.labels import t
from icenb.options import get_options
from icenb.spec import human
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)

__all__ = ["STATUS_BADGES", "bound_hex", "content_noun", "content_word", "partition_text",
           "status_badge"]

#: Entry status -> badge kind (spec: Manifest Entry Fields, ``status``).
STATUS_BADGES = {EntryStatus.ADDED: "added", EntryStatus.EXISTING: "existing",
                 EntryStatus.DELETED: "deleted"}


def _content_en(f: DataFile) -> str:
    if f.content == FileContent.DATA:
        return "Data file"
    if f.content == FileContent.EQUALITY_DELETES:
        return "Equality delete file"
    if f.is_deletion_vector:
        return "Deletion vector"
    return "Position delete file"


def content_word(f: DataFile) -> str:
    """What a content file is: data, position deletes, a deletion vector or equality deletes."""
    return t(_content_en(f))


def content_noun(f: DataFile) -> str:
    """:func:`content_word` in lower case, inside a sentence (``data file``)."""
    return t(_content_en(f).lower())


def status_badge(status: Any) -> str:
    """An ADDED/EXISTING/DELETED badge (unknown values shown as they are)."""
    try:
        s = EntryStatus(status)
    except ValueError:
        return h.badge(str(status), "warn")
    return h.badge(s.name, STATUS_BADGES[s])


bound_hex = human.bound_hex


def _raw_types(obj: Any) -> human.ValueTypes | None:
    """The types attached to ``obj``; None when bounds are to be shown as stored."""
    return None if vals.bounds_are_raw() else human.attached_types(obj)


def partition_text(partition: Sequence[Any] | DataFile, names: Sequence[str] | None = None
                   ) -> str:
    """A partition tuple as ``name=value, ...`` (positions when the names are unknown). Given
    the DataFile itself, values read from a table are shown by their transform's human string
    (``ts_month=2026-11``, :func:`icenb.display.kit.values.partition`)."""
    types = None
    if isinstance(partition, DataFile):
        types = human.attached_types(partition)
        partition = partition.partition
    if not partition:
        return t("unpartitioned")
    if types is not None and types.spec is not None and (
            names is None or list(names) == [f.name for f in types.spec.fields]):
        return cut(vals.partition(types.spec, types.schemas, partition,
                                  names=names is not None))
    parts = []
    for i, v in enumerate(partition):
        name = names[i] if names is not None and i < len(names) else None
        value = human.plain(v)
        parts.append(f"{name}={value}" if name else value)
    return cut(", ".join(parts))


def _opt(v: Any) -> str:
    return "-" if v is None else str(v)


def _kv_html(pairs: Sequence[tuple[str, str]]) -> str:
    return h.kv((k, h.esc(v)) for k, v in pairs)


# --------------------------------------------------------------------------- manifest file


def _manifest_pairs(m: ManifestFile) -> list[tuple[str, str]]:
    pairs = [
        (t("path"), cut(m.manifest_path)),
        (t("content"), "deletes" if m.content == ManifestContent.DELETES else "data"),
        (t("length"), size(m.manifest_length)),
        (t("partition spec"), str(m.partition_spec_id)),
        (t("sequence number"), str(m.sequence_number)),
        (t("min sequence number"), str(m.min_sequence_number)),
        (t("added snapshot"), str(m.added_snapshot_id)),
        (t("files added / existing / deleted"), " / ".join(
            count(x) for x in (m.added_files_count, m.existing_files_count,
                               m.deleted_files_count))),
        (t("rows added / existing / deleted"), " / ".join(
            count(x) for x in (m.added_rows_count, m.existing_rows_count,
                               m.deleted_rows_count))),
    ]
    if m.first_row_id is not None:
        pairs.append((t("first row id"), str(m.first_row_id)))
    if m.key_metadata is not None:
        pairs.append((t("key metadata"), t("{n} bytes (encrypted)", n=len(m.key_metadata))))
    return pairs


def _summary_rows(summaries: Sequence[FieldSummary], types: human.ValueTypes | None
                  ) -> list[list[str]]:
    fields = types.spec.fields if types is not None and types.spec is not None else ()
    schemas = types.schemas if types is not None else ()
    rows = []
    for i, s in enumerate(summaries):
        if i < len(fields):
            pf = fields[i]
            lower, upper = (human.partition_bound_text(pf, schemas, b)
                            for b in (s.lower_bound, s.upper_bound))
            name = pf.name
        else:
            lower, upper, name = bound_hex(s.lower_bound), bound_hex(s.upper_bound), str(i)
        rows.append([name, str(s.contains_null), _opt(s.contains_nan), lower, upper])
    return rows


_BOUND_HEADERS = {True: ["lower", "upper"], False: ["lower (hex)", "upper (hex)"]}
_SUMMARY_HEADERS = ["field", "contains null", "contains NaN", *_BOUND_HEADERS[True],
                    *_BOUND_HEADERS[False]]  # the last two of one kind are shown


def _bound_headers(decoded: bool) -> list[str]:
    return _BOUND_HEADERS[decoded]


def _headers(names: Sequence[str]) -> list[str]:
    return [t(x) for x in names]


@register(ManifestFile)
def _manifest_file(m: ManifestFile) -> Rendered:
    pairs = _manifest_pairs(m)
    limit = get_options().display_max_rows
    body = _kv_html(pairs)
    text = [f"{t('Manifest file')} {file_name(m.manifest_path)}", tx.kv(pairs, "  ")]
    if m.partitions:
        types = _raw_types(m)
        rows = _summary_rows(m.partitions, types)
        headers = _headers([*_SUMMARY_HEADERS[:3],
                            *_bound_headers(types is not None and types.spec is not None)])
        body += h.section(t("Partition summaries"), h.table(
            headers, [[h.esc(c) for c in r] for r in rows], limit=limit,
            what="fields"), count=str(len(rows)))
        text += [f"  {t('partition summaries')}:",
                 tx.table(headers, rows, limit=limit, what="fields", indent="    ")]
    kind = "deletes" if m.content == ManifestContent.DELETES else "data"
    sub = h.badge(kind, "muted") + h.muted(t("added by snapshot {id}", id=m.added_snapshot_id))
    return Rendered(h.card(t("Manifest file"), file_name(m.manifest_path), sub, body),
                    "\n".join(text))


@register(FieldSummary)
def _field_summary(s: FieldSummary) -> Rendered:
    pairs = [(t("contains null"), str(s.contains_null)),
             (t("contains NaN"), _opt(s.contains_nan)),
             (t("lower bound (hex)"), bound_hex(s.lower_bound)),
             (t("upper bound (hex)"), bound_hex(s.upper_bound))]
    return Rendered(h.card(t("Partition field summary"), "", "", _kv_html(pairs)),
                    t("Partition field summary") + "\n" + tx.kv(pairs, "  "))


# --------------------------------------------------------------------------- data file


def _file_pairs(f: DataFile) -> list[tuple[str, str]]:
    pairs = [(t("path"), cut(f.file_path)), (t("content"), content_noun(f)),
             (t("format"), f.file_format.name), (t("partition spec"), str(f.spec_id)),
             (t("partition"), partition_text(f, _spec_names(f))),
             (t("records"), count(f.record_count)), (t("size"), size(f.file_size_in_bytes))]
    if f.data_sequence_number is not None:
        pairs.append((t("data sequence number"), str(f.data_sequence_number)))
    if f.equality_ids is not None:
        pairs.append((t("equality ids"), ", ".join(map(str, f.equality_ids))))
    if f.referenced_data_file is not None:
        pairs.append((t("referenced data file"), cut(f.referenced_data_file)))
    if f.content_offset is not None or f.content_size_in_bytes is not None:
        pairs.append((t("blob in Puffin file"),
                      t("offset {offset}, {size}", offset=_opt(f.content_offset),
                        size=size(f.content_size_in_bytes))))
    if f.sort_order_id is not None:
        pairs.append((t("sort order"), str(f.sort_order_id)))
    if f.first_row_id is not None:
        pairs.append((t("first row id"), str(f.first_row_id)))
    if f.split_offsets:
        head, n, tail = fold(f.split_offsets, 6)
        shown = [*map(str, head), *([hidden(n, "offsets")] if n else []), *map(str, tail)]
        pairs.append((t("split offsets"), ", ".join(shown)))
    if f.key_metadata is not None:
        pairs.append((t("key metadata"), t("{n} bytes (encrypted)", n=len(f.key_metadata))))
    return pairs


def _spec_names(f: DataFile) -> list[str] | None:
    types = human.attached_types(f)
    return None if types is None or types.spec is None else [x.name for x in types.spec.fields]


_STATS_HEADERS = ["field id", "size", "values", "nulls", "NaNs", *_BOUND_HEADERS[True],
                  *_BOUND_HEADERS[False]]  # the last two of one kind are shown


def _get(m: Mapping[int, Any] | None, fid: int) -> Any:
    return None if m is None else m.get(fid)


def _stats_rows(f: DataFile) -> list[list[str]]:
    """One row per column id that has any metric (column stats, spec: Manifests 108-128)."""
    maps = (f.column_sizes, f.value_counts, f.null_value_counts, f.nan_value_counts,
            f.lower_bounds, f.upper_bounds)
    ids = sorted({fid for m in maps if m for fid in m})
    types = _raw_types(f)

    def bound(raw: bytes | None, fid: int) -> str:
        return bound_hex(raw) if types is None else vals.bound(types.field_type(fid), raw)

    rows = []
    for fid in ids:
        rows.append([str(fid), size(_get(f.column_sizes, fid)) if _get(f.column_sizes, fid)
                     is not None else "-", count(_get(f.value_counts, fid)),
                     count(_get(f.null_value_counts, fid)), count(_get(f.nan_value_counts, fid)),
                     bound(_get(f.lower_bounds, fid), fid), bound(_get(f.upper_bounds, fid), fid)])
    return rows


def data_file_parts(f: DataFile) -> tuple[str, str]:
    """A content file's HTML body and text (used by the entry and file reprs)."""
    pairs = _file_pairs(f)
    limit = get_options().display_max_rows
    body = _kv_html(pairs)
    text = [tx.kv(pairs, "  ")]
    rows = _stats_rows(f)
    if rows:
        headers = _headers([*_STATS_HEADERS[:5], *_bound_headers(_raw_types(f) is not None)])
        body += h.section(t("Column stats"), h.table(
            headers, [[h.esc(c) for c in r] for r in rows], limit=limit,
            what="columns"), count=str(len(rows)))
        text += [f"  {t('column stats')}:",
                 tx.table(headers, rows, limit=limit, what="columns", indent="    ")]
    return body, "\n".join(text)


@register(DataFile)
def _data_file(f: DataFile) -> Rendered:
    body, text = data_file_parts(f)
    sub = h.badge(f.file_format.name, "muted") + h.muted(
        t("{n} records", n=count(f.record_count)) + f" · {size(f.file_size_in_bytes)}")
    word = content_word(f)
    return Rendered(h.card(word, file_name(f.file_path), sub, body),
                    f"{word} {file_name(f.file_path)}\n{text}")


@register(ManifestEntry)
def _manifest_entry(e: ManifestEntry) -> Rendered:
    status = e.status.name if isinstance(e.status, EntryStatus) else str(e.status)
    pairs = [(t("status"), status), (t("snapshot"), _opt(e.snapshot_id)),
             (t("data sequence number"), _opt(e.sequence_number)),
             (t("file sequence number"), _opt(e.file_sequence_number))]
    fbody, ftext = data_file_parts(e.data_file)
    word = content_word(e.data_file)
    noun = content_noun(e.data_file)
    body = _kv_html(pairs) + h.section(word, fbody, open=True)
    sub = status_badge(e.status) + h.muted(noun)
    text = (f"{t('Manifest entry')} {status} {file_name(e.data_file.file_path)}\n"
            f"{tx.kv(pairs, '  ')}\n  {noun}:\n{tx.indent(ftext, '  ')}")
    return Rendered(h.card(t("Manifest entry"), file_name(e.data_file.file_path), sub, body),
                    text)


# --------------------------------------------------------------------------- deletion vector


@register(DeletionVector)
def _deletion_vector(dv: DeletionVector) -> Rendered:
    limit = get_options().display_max_rows
    first = list(itertools.islice(iter(dv), limit))
    n = dv.cardinality
    shown = ", ".join(map(str, first)) + (", " + hidden(n - len(first), "positions")
                                          if n > len(first) else "")
    pairs = [(t("deleted positions"), count(n)),
             (t("bitmaps (high 32 bits)"), str(len(dv.bitmaps))),
             (t("first positions"), shown or "-")]
    if n:
        last = int(dv.to_numpy()[-1])
        pairs.append((t("last position"), str(last)))
    title = t("{n} deleted position" if n == 1 else "{n} deleted positions", n=count(n))
    return Rendered(h.card(t("Deletion vector"), title, "", _kv_html(pairs)),
                    t("Deletion vector") + "\n" + tx.kv(pairs, "  "))


# --------------------------------------------------------------------------- decoded manifest


@register(DecodedManifest)
def _decoded(d: DecodedManifest) -> Rendered:
    is_list = d.partition_spec_id is None and d.format_version is None
    kind = t("Decoded manifest list" if is_list else "Decoded manifest")
    tbl = d.table
    pairs = [(t("rows"), count(tbl.num_rows)), (t("columns"), str(tbl.num_columns)),
             (t("Arrow bytes"), size(tbl.nbytes))]
    if not is_list:
        pairs += [(t("partition spec"), _opt(d.partition_spec_id)),
                  (t("format version"), _opt(d.format_version))]
    names = list(tbl.column_names)
    head, n, tail = fold(names, get_options().display_max_fields)
    cols = [*head, *([hidden(n, "columns")] if n else []), *tail]
    pairs.append((t("column names"), ", ".join(cols)))
    title = f"{count(tbl.num_rows)} {t('manifests' if is_list else 'entries')}"
    return Rendered(h.card(kind, title, "", _kv_html(pairs)), f"{kind}\n{tx.kv(pairs, '  ')}")
