"""Plan a scan of an EXPERIMENTAL format-version 4 snapshot (root manifest, leaf manifests,
manifest DVs) into the same :class:`~icenb.table.scan.planning.ScanPlan` as v1-v3.

Source: the single-file-commits proposal (``shared/specs/v4-single-file-commits.txt``, "How
does planning work?"): read the root; load the manifest DVs of the leaves to read; read those
leaves, dropping the ordinals their DVs delete and DELETED entries. icenb's choices are in
``(docs/v4-layout.md#planning is this module's).

Steps:

1. Root: :func:`~icenb.io.root_manifest.read_root_manifest` (one root, structural rules,
   inheritance from the snapshot). Live data / delete manifest entries are pruned with their
   aggregated stats, as v3 prunes manifest-list entries: none without added or existing files,
   none whose ``partitions`` summaries exclude the projected filter, and data manifests whose
   aggregated column metrics exclude the row filter (rows: added + existing).
2. Leaves: read (:func:`check_leaf`, inheritance from the root entry), decoded leaves cached
   by :class:`~icenb.io.manifest_reader.ManifestCache`; those not cached are read by a thread
   pool and decoded in one columnar batch, as v3 reads its manifests, then converted one by
   one in root order (so a failing leaf raises what it would alone, the first one in root
   order); the ordinals the leaf's manifest DV deletes are dropped
   (:func:`~icenb.io.root_manifest.load_manifest_dv` checks its cardinality).
3. Every data / delete file entry (root and leaves) becomes a v3 ``manifest_entry`` row
   (:func:`manifest_entry_of`: the v3 :class:`~icenb.spec.manifest.DataFile` model, partition
   tuple from ``content_stats.partition``, a data DV's Puffin blob as ``content_offset`` /
   ``content_size_in_bytes`` of its ``referenced_data_file``), so file pruning, delete
   matching (sequence numbers, partitions, DVs by referenced file) and tasks are v3's code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, InvalidMetadata, UnsupportedVersion
from icenb.io.avro import avro_arrow_schema
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    DEFAULT_MAX_WORKERS,
    DecodedManifest,
    ManifestCache,
    concat_entry_tables,
    gc_paused,
    read_manifest_entries,
)
from icenb.io.root_manifest import (
    decode_content_manifest,
    decode_content_manifest_tables,
    load_manifest_dv,
    read_root_manifest,
)
from icenb.spec import values
from icenb.spec.content_entry import (
    ContentEntry,
    ContentStats,
    ContentType,
    InheritFrom,
    ManifestKind,
    check_leaf,
    inherit,
)
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.expressions import AlwaysTrue, Expression, referenced_field_ids
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    avro_schema,
    manifest_entry_type,
)
from icenb.spec.manifest_evaluator import decode_field_summaries, manifest_might_match
from icenb.spec.metrics_evaluator import FileMetrics, inclusive_match
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import StructType
from icenb.table.commit.v4_upgrade import manifest_file_of
from icenb.table.scan.delete_index import match_deletes
from icenb.table.scan.planning import ScanPlan, unified_partition_struct
from icenb.table.scan.pruning import Projections, select_files, without_metrics

__all__ = [
    "SnapshotEntries",
    "entries_table",
    "manifest_entry_of",
    "plan_root_manifest",
    "snapshot_entries",
]

_FILE_CONTENT = {
    ContentType.DATA: FileContent.DATA,
    ContentType.POSITION_DELETE: FileContent.POSITION_DELETES,
    ContentType.EQUALITY_DELETE: FileContent.EQUALITY_DELETES,
}
_LEAF_TAG = "<v4-leaf>"


def manifest_entry_of(entry: ContentEntry, partition_type: StructType, *,
                      column_stats: bool = True) -> ManifestEntry:
    """The v3 manifest entry of a v4 file entry (types 0-2, inheritance applied): same
    status, ids and sequence numbers; the ``data_file`` built from the entry's fields
    (docs/v4-layout.md#planning). ``column_stats=False`` leaves the metric maps out."""
    content = _FILE_CONTENT.get(entry.content_type)
    if content is None:
        raise InvalidMetadata("only data and delete file entries are scanned",
                              field="content_type", value=int(entry.content_type))
    cs = entry.content_stats or ContentStats()
    dv = entry.deletion_vector
    size = entry.file_size_in_bytes
    vi = entry.version_info

    def m(v: Mapping[int, Any] | None) -> dict[int, Any] | None:
        return None if v is None or not column_stats else dict(v)

    f = DataFile(
        content=content, file_path=entry.location, file_format=entry.file_format,
        partition=cs.partition_tuple(partition_type), record_count=entry.record_count,
        file_size_in_bytes=0 if size is None else size, column_sizes=m(cs.column_sizes),
        value_counts=m(cs.value_counts), null_value_counts=m(cs.null_value_counts),
        nan_value_counts=m(cs.nan_value_counts), lower_bounds=m(cs.lower_bounds),
        upper_bounds=m(cs.upper_bounds), key_metadata=entry.key_metadata,
        split_offsets=entry.split_offsets, equality_ids=entry.equality_ids,
        sort_order_id=entry.sort_order_id, first_row_id=entry.first_row_id,
        referenced_data_file=entry.referenced_file if dv is not None else None,
        content_offset=None if dv is None else dv.offset,
        content_size_in_bytes=None if dv is None else dv.size_in_bytes,
        spec_id=entry.partition_spec_id, data_sequence_number=vi.sequence_number)
    return ManifestEntry(vi.status, vi.snapshot_id, vi.sequence_number,
                         vi.file_sequence_number, f)


def _map_pairs(rec: dict[str, Any]) -> None:
    """Avro key/value records as Arrow map pairs, in place."""
    for name in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                 "lower_bounds", "upper_bounds"):
        v = rec.get(name)
        if v is not None:
            rec[name] = [(kv["key"], kv["value"]) for kv in v]


def entries_table(entries: Sequence[ContentEntry], *, manifest_path: str,
                  specs: Mapping[int, PartitionSpec], schema: Schema,
                  column_stats: bool = True, file: str | None = None) -> pa.Table:
    """v4 file entries as the entry table v3 planning reads (the columns and Arrow types of
    :func:`~icenb.io.manifest_reader.read_manifest_entries`, ``manifest_path`` = the manifest
    they are listed in), in entry order; one chunk per partition spec."""
    by_spec: dict[int, list[tuple[int, ContentEntry]]] = {}
    for i, e in enumerate(entries):
        by_spec.setdefault(e.partition_spec_id, []).append((i, e))
    tables: list[tuple[list[int], pa.Table]] = []
    for sid, items in by_spec.items():
        spec = specs.get(sid)
        if spec is None:
            raise InvalidMetadata("no such partition spec in the table metadata", file=file,
                                  field=f"entries[{items[0][0]}].partition_spec_id", value=sid)
        ptype = unified_partition_struct(spec, schema)
        arrow_schema = avro_arrow_schema(
            manifest_path, avro_schema(manifest_entry_type(ptype, 3), "manifest_entry"))
        records = []
        contents = []
        for _, e in items:
            try:
                rec = manifest_entry_of(e, ptype, column_stats=column_stats).to_avro_record(
                    ptype, 3)
            except IcebergError as err:
                raise err.with_file(file or manifest_path) from None
            _map_pairs(rec["data_file"])
            records.append(rec)
            contents.append(int(ManifestContent.DATA) if e.content_type == ContentType.DATA
                            else int(ManifestContent.DELETES))
        t = pa.Table.from_pylist(records, schema=arrow_schema)
        n = t.num_rows
        t = t.append_column("manifest_path", pa.repeat(pa.scalar(manifest_path), n)) \
            .append_column("partition_spec_id", pa.repeat(pa.scalar(sid, pa.int32()), n)) \
            .append_column("manifest_content", pa.array(contents, pa.int32()))
        tables.append(([i for i, _ in items], t))
    if len(tables) == 1:
        return concat_entry_tables([tables[0][1]])
    # several specs: keep entry order (ordinals) across the per-spec chunks
    whole = concat_entry_tables([t for _, t in tables])
    order = np.argsort(np.concatenate([np.asarray(idx) for idx, _ in tables]), kind="stable")
    return whole.take(pa.array(order, pa.int64()))


# --------------------------------------------------------------------------- pruning


def _manifest_may_match(e: ContentEntry, projections: Projections, schema: Schema,
                        bound: Expression) -> bool:
    """A live root manifest entry may hold live files matching the filter (v3's manifest
    skipping on the aggregated stats; data manifests also by column metrics)."""
    ms = e.manifest_stats
    if ms is not None and ms.added_files_count == 0 and ms.existing_files_count == 0:
        return False
    cs = e.content_stats
    projected = projections.get(e.partition_spec_id)
    if projected is not None and cs is not None and cs.partitions is not None:
        expr, ptype = projected
        try:
            summaries = decode_field_summaries(
                ptype, [s.to_avro_record() for s in cs.partitions])
        except IcebergError:
            summaries = None  # summaries for another spec's fields: cannot prune
        if summaries is not None and not manifest_might_match(expr, summaries):
            return False
    if (e.content_type == ContentType.DATA_MANIFEST and ms is not None and cs is not None
            and not isinstance(bound, AlwaysTrue)):
        metrics = FileMetrics.from_serialized(
            schema, ms.added_rows_count + ms.existing_rows_count, cs.value_counts,
            cs.null_value_counts, cs.nan_value_counts, cs.lower_bounds, cs.upper_bounds,
            field_ids=referenced_field_ids(bound))
        if not inclusive_match(bound, metrics):
            return False
    return True


# --------------------------------------------------------------------------- leaves


def _leaf_key(e: ContentEntry, column_stats: bool) -> tuple[Any, ...]:
    vi = e.version_info
    ms = e.manifest_stats
    counts = None if ms is None else (ms.added_files_count, ms.existing_files_count,
                                      ms.deleted_files_count, ms.added_rows_count,
                                      ms.existing_rows_count, ms.deleted_rows_count)
    return (_LEAF_TAG, e.location, e.file_size_in_bytes, vi.snapshot_id, vi.sequence_number,
            e.first_row_id, e.partition_spec_id, int(e.content_type), e.record_count, counts,
            column_stats)


#: Per partition spec id: its partition type and the v3 entry table's Arrow schema.
_EntrySchemas = dict[int, tuple[StructType, pa.Schema]]


@dataclass(frozen=True)
class _LeafRead:
    """A leaf read ahead of its conversion: the cached table, or its bytes and columnar
    decode (kind and raw table, or the error decoding it raised), or the error reading it."""

    hit: pa.Table | None = None
    data: bytes | None = None
    decoded: tuple[ManifestKind, pa.Table] | Exception | None = None
    error: Exception | None = None


def _read_leaves(io: FileIO, leaves: Sequence[ContentEntry], column_stats: Sequence[bool],
                 cache: ManifestCache | None, max_workers: int = DEFAULT_MAX_WORKERS
                 ) -> list[_LeafRead]:
    """Each leaf from the cache, or read (a thread pool: I/O) and decoded in one columnar
    batch (as v3 reads its manifests, :func:`~icenb.io.manifest_reader.read_manifest_entries`);
    errors are kept per leaf for :func:`_leaf_entries` to raise in root order."""
    out: list[_LeafRead | None] = []
    for e, stats in zip(leaves, column_stats, strict=True):
        hit = cache.get(_leaf_key(e, stats)) if cache is not None else None
        out.append(None if hit is None else _LeafRead(hit=hit.table))
    todo = [i for i, r in enumerate(out) if r is None]

    def read(i: int) -> bytes | Exception:
        e = leaves[i]
        try:
            return io.new_input(e.location, size=e.file_size_in_bytes).read()
        except Exception as err:  # raised when this leaf's turn comes
            return err

    if len(todo) > 1 and max_workers > 1:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(todo))) as pool:
            blobs = list(pool.map(read, todo))
    else:
        blobs = [read(i) for i in todo]
    named = [(leaves[i].location, b) for i, b in zip(todo, blobs, strict=True)
             if isinstance(b, bytes)]
    with gc_paused():
        decoded = iter(decode_content_manifest_tables(named, threads=max_workers))
    for i, b in zip(todo, blobs, strict=True):
        out[i] = (_LeafRead(error=b) if isinstance(b, Exception)
                  else _LeafRead(data=b, decoded=next(decoded)))
    return [r for r in out if r is not None]


def _leaf_entries(io: FileIO, root_entry: ContentEntry, root_location: str,
                  specs: Mapping[int, PartitionSpec], schema: Schema, column_stats: bool,
                  cache: ManifestCache | None, pre: _LeafRead | None = None,
                  entry_schemas: _EntrySchemas | None = None) -> pa.Table:
    """All entries of a leaf, in ordinal order, inheritance applied (checked against its root
    entry: kind, depth, record_count, manifest_stats); cached by file and inherited values.
    ``pre``: the leaf as :func:`_read_leaves` read it (else it is looked up and read here)."""
    key = _leaf_key(root_entry, column_stats)
    if pre is None:
        pre = _read_leaves(io, [root_entry], [column_stats], cache, 1)[0]
    if pre.hit is not None:
        return pre.hit
    if pre.error is not None:
        raise pre.error
    location = root_entry.location
    data, decoded = pre.data, pre.decoded
    assert data is not None and decoded is not None
    if isinstance(decoded, UnsupportedVersion):
        # a v1-v3 manifest listed after an upgrade (docs/v4-layout.md#upgrade): the v3 reader
        v3 = read_manifest_entries(io, [manifest_file_of(root_entry)], 3)
        if cache is not None:
            cache.put(key, DecodedManifest(v3, root_entry.partition_spec_id, 3))
        return v3
    if isinstance(decoded, Exception):
        raise decoded
    kind, raw = decoded
    fast = _data_leaf_table(root_entry, kind, raw, location, specs, schema, column_stats,
                            root_location, entry_schemas=entry_schemas)
    if fast is not None:
        if cache is not None:
            cache.put(key, DecodedManifest(fast, root_entry.partition_spec_id, 4))
        return fast
    # anything the columnar path does not vouch for: the entry objects, which check every
    # rule and raise the errors naming the entry and field
    m = decode_content_manifest(location, data)
    check_leaf(root_entry, m.kind, m.entries, file=m.location)
    entries = inherit(m.entries, InheritFrom.from_root_entry(root_entry, file=root_location),
                      file=m.location)
    table = entries_table(entries, manifest_path=m.location, specs=specs, schema=schema,
                          column_stats=column_stats, file=m.location)
    if cache is not None:
        cache.put(key, DecodedManifest(table, root_entry.partition_spec_id, 4))
    return table


_DATA_LEAF_COLUMNS = ("content_type", "location", "file_format", "version_info",
                      "deletion_vector", "partition_spec_id", "sort_order_id", "record_count",
                      "file_size_in_bytes", "content_stats", "manifest_stats",
                      "referenced_file", "key_metadata", "split_offsets", "equality_ids",
                      "first_row_id")
_METRICS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
            "lower_bounds", "upper_bounds")


def _nulls(a: pa.Array | pa.ChunkedArray) -> bool:
    return bool(a.null_count)


def _int_column(a: pa.ChunkedArray | pa.Array) -> np.ndarray[Any, Any]:
    return np.asarray(a.to_numpy(zero_copy_only=False), dtype=np.int64)


def _data_leaf_table(root_entry: ContentEntry, kind: ManifestKind, raw: pa.Table,
                     location: str, specs: Mapping[int, PartitionSpec], schema: Schema,
                     column_stats: bool, root_location: str, *,
                     entry_schemas: _EntrySchemas | None = None) -> pa.Table | None:
    """A data leaf's v3 entry table straight from its columnar decode, inheritance applied,
    or None when any entry is not a plain data file entry this path vouches for (then the
    entry objects check the rules and raise the errors, docs/v4-layout.md#planning): every rule
    of :meth:`ContentEntry.check`, :func:`check_leaf` and :func:`inherit` for data files is
    checked here as a condition for taking this path. ``entry_schemas``: the partition type
    and v3 entry schema per spec id, filled and reused across the leaves of one plan."""
    n = raw.num_rows
    if (root_entry.content_type != ContentType.DATA_MANIFEST or kind != ManifestKind.DATA
            or n == 0 or n != root_entry.record_count
            or any(c not in raw.column_names for c in _DATA_LEAF_COLUMNS)):
        return None
    col = raw.column
    # content type, required fields, fields a data file entry must not carry
    if (_nulls(col("content_type")) or pc.any(pc.not_equal(col("content_type"), 0)).as_py()
            or any(_nulls(col(c)) for c in ("location", "file_format", "partition_spec_id",
                                              "record_count", "file_size_in_bytes"))
            or any(col(c).null_count != n for c in ("deletion_vector", "manifest_stats",
                                                    "referenced_file", "equality_ids"))
            or pc.any(pc.equal(pc.binary_length(col("location")), 0)).as_py()):
        return None
    spec_ids = pc.unique(col("partition_spec_id")).to_pylist()
    if len(spec_ids) != 1 or spec_ids[0] < 0 or spec_ids[0] not in specs:
        return None
    sid = int(spec_ids[0])
    record_count = _int_column(col("record_count"))
    if (record_count < 0).any() or (_int_column(col("file_size_in_bytes")) < 0).any():
        return None
    formats: dict[str, str] = {}
    for text in pc.unique(col("file_format")).to_pylist():
        try:
            formats[text] = FileFormat.parse(text).name
        except IcebergError:
            return None
    first_row_id = col("first_row_id").combine_chunks()
    if pc.any(pc.less(first_row_id, 0)).as_py():
        return None
    splits = col("split_offsets").combine_chunks()
    if splits.null_count != n:
        parents, items = _list_items(splits)
        vals = np.asarray(items.to_numpy(zero_copy_only=False), dtype=np.int64)
        if ((np.diff(vals) < 0) & (np.diff(parents) == 0)).any():
            return None
    # version_info and inheritance (a null version_info: ADDED, everything inherited)
    vi = col("version_info").combine_chunks()
    vi_valid = np.ones(n, dtype=bool) if vi.null_count == 0 else np.asarray(
        vi.is_valid().to_numpy(zero_copy_only=False), dtype=bool)

    def vi_field(name: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        f = vi.field(name)
        present = vi_valid & np.asarray(f.is_valid().to_numpy(zero_copy_only=False), bool)
        values_ = np.asarray(f.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        return values_, present

    status, status_ok = vi_field("status")
    status = np.where(vi_valid, status, int(EntryStatus.ADDED))
    if not (status_ok | ~vi_valid).all() or not np.isin(status, (0, 1, 2)).all():
        return None
    source = InheritFrom.from_root_entry(root_entry, file=root_location)
    snap, snap_ok = vi_field("snapshot_id")
    seq, seq_ok = vi_field("sequence_number")
    fseq, fseq_ok = vi_field("file_sequence_number")
    added = status == int(EntryStatus.ADDED)
    if not ((seq_ok & fseq_ok) | added).all():
        return None
    snap = np.where(snap_ok, snap, source.snapshot_id)
    seq = np.where(seq_ok, seq, source.sequence_number)
    fseq = np.where(fseq_ok, fseq, source.sequence_number)
    counts = {"added": added, "existing": status == int(EntryStatus.EXISTING),
              "deleted": status == int(EntryStatus.DELETED)}
    ms = root_entry.manifest_stats
    if ms is not None:
        for name, mask in counts.items():
            if (getattr(ms, f"{name}_files_count") != int(mask.sum())
                    or getattr(ms, f"{name}_rows_count") != int(record_count[mask].sum())):
                return None
    rid_missing = np.asarray(first_row_id.is_null().to_numpy(zero_copy_only=False), bool)
    if source.first_row_id is not None and rid_missing.any():
        step = np.where(rid_missing, record_count, 0)
        assigned = source.first_row_id + np.cumsum(step) - step
        first_row_id = pa.array(np.where(
            rid_missing, assigned,
            np.asarray(first_row_id.fill_null(0).to_numpy(zero_copy_only=False), np.int64)),
            pa.int64())
    # content_stats: partition tuple and metric maps
    cs = col("content_stats").combine_chunks()
    if cs.null_count not in (0, n):
        return None
    known = None if entry_schemas is None else entry_schemas.get(sid)
    if known is None:
        ptype = unified_partition_struct(specs[sid], schema)
        known = ptype, avro_arrow_schema(
            location, avro_schema(manifest_entry_type(ptype, 3), "manifest_entry"))
        if entry_schemas is not None:
            entry_schemas[sid] = known
    ptype, arrow_schema = known
    df_type = arrow_schema.field("data_file").type
    part_type = df_type.field("partition").type
    partition = _partition_column(cs, n, ptype, part_type)
    if partition is None:
        return None

    def metric(name: str) -> pa.Array:
        t = df_type.field(name).type
        if cs.null_count == n or not column_stats:
            return pa.nulls(n, t)
        return cs.field(name).cast(t)

    def plain(name: str, t: pa.DataType) -> pa.Array:
        return col(name).combine_chunks().cast(t)

    fmt = pa.array([formats[v] for v in col("file_format").to_pylist()], pa.string())
    children: dict[str, pa.Array] = {
        "content": pa.array(np.zeros(n, np.int32), pa.int32()),
        "file_path": col("location").combine_chunks(), "file_format": fmt,
        "partition": partition, "record_count": pa.array(record_count, pa.int64()),
        "file_size_in_bytes": plain("file_size_in_bytes", pa.int64()),
        **{m: metric(m) for m in _METRICS},
        "first_row_id": first_row_id,
    }
    for name, src in (("key_metadata", "key_metadata"), ("split_offsets", "split_offsets"),
                      ("equality_ids", "equality_ids"), ("sort_order_id", "sort_order_id")):
        children[name] = plain(src, df_type.field(name).type)
    arrays = [children[f.name] if f.name in children else pa.nulls(n, f.type)
              for f in df_type]
    data_file = pa.StructArray.from_arrays(arrays, fields=list(df_type))
    top = {"status": pa.array(status, pa.int32()), "snapshot_id": pa.array(snap, pa.int64()),
           "sequence_number": pa.array(seq, pa.int64()),
           "file_sequence_number": pa.array(fseq, pa.int64()), "data_file": data_file}
    t = pa.Table.from_arrays([top[f.name].cast(f.type) for f in arrow_schema],
                             schema=arrow_schema)
    t = t.append_column("manifest_path", pa.repeat(pa.scalar(location), n)) \
        .append_column("partition_spec_id", pa.repeat(pa.scalar(sid, pa.int32()), n)) \
        .append_column("manifest_content", pa.repeat(pa.scalar(0, pa.int32()), n))
    return concat_entry_tables([t])


def _list_items(a: pa.ListArray | pa.MapArray) -> tuple[np.ndarray[Any, Any], pa.Array]:
    """The row of each item of a list (or map) array and its items (entries struct for a
    map), slicing and null lists accounted for."""
    offsets = np.asarray(a.offsets.to_numpy(zero_copy_only=False), np.int64)
    lengths = np.diff(offsets)
    if a.null_count:
        lengths = np.where(np.asarray(a.is_valid().to_numpy(zero_copy_only=False), bool),
                           lengths, 0)
    rows = np.repeat(np.arange(len(a), dtype=np.int64), lengths)
    if isinstance(a, pa.MapArray):
        base = pa.StructArray.from_arrays([a.keys, a.items], names=["key", "value"])
    else:
        base = a.values
    if a.null_count:
        idx = np.concatenate([np.arange(o, o + k, dtype=np.int64)
                              for o, k in zip(offsets[:-1], lengths, strict=True)] or
                             [np.zeros(0, np.int64)])
        return rows, base.take(pa.array(idx, pa.int64()))
    return rows, base.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))


def _partition_column(cs: pa.StructArray, n: int, ptype: StructType,
                      part_type: pa.StructType) -> pa.StructArray | None:
    """The v3 partition struct of ``content_stats.partition`` (field id -> Appendix D
    bytes; a field the map lacks is null), or None when a value does not decode or a key
    repeats (the entry objects then decide)."""
    pmap = None if cs.null_count == n else cs.field("partition")
    arrays: list[pa.Array] = []
    for f, af in zip(ptype.fields, part_type, strict=True):
        if pmap is not None and pmap.null_count != n:
            rows, entries = _list_items(pmap)
            keys = np.asarray(entries.field("key").to_numpy(zero_copy_only=False), np.int64)
            hit = np.flatnonzero(keys == f.field_id)
            hit_rows = rows[hit]
            if len(np.unique(hit_rows)) != len(hit_rows):
                return None
            vals = entries.field("value").take(pa.array(hit, pa.int64()))
            enc = vals.dictionary_encode()
            decoded: list[Any] = []
            for b in enc.dictionary.to_pylist():
                try:
                    decoded.append(values.from_bytes(f.field_type, b))
                except IcebergError:
                    return None
            # each row's value: its decoded dictionary entry, null where the map lacks it
            pick = np.full(n, -1, dtype=np.int64)
            pick[hit_rows] = np.asarray(
                enc.indices.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
            arrays.append(pa.array(decoded, af.type).take(pa.array(pick, mask=pick < 0)))
        else:
            arrays.append(pa.nulls(n, af.type))
    return pa.StructArray.from_arrays(arrays, fields=list(part_type),
                                      mask=pa.array(np.zeros(n, bool)))


def _without(table: pa.Table, deleted: DeletionVector, root_entry: ContentEntry,
             root_location: str, where: str) -> pa.Table:
    """The leaf's rows its manifest DV does not delete (ordinals inside the leaf)."""
    if not deleted:
        return table
    ordinals = deleted.to_numpy()
    top = int(ordinals.max())
    if top >= table.num_rows:
        raise InvalidMetadata(f"manifest DV deletes ordinal {top}, the leaf has "
                              f"{table.num_rows} rows", file=root_location,
                              field=f"{where}.deletion_vector", value=top)
    keep = np.ones(table.num_rows, dtype=bool)
    keep[ordinals.astype(np.int64)] = False
    return table.filter(pa.array(keep, pa.bool_()))


# --------------------------------------------------------------------------- planning


def plan_root_manifest(io: FileIO, metadata: TableMetadata, snapshot: Snapshot, *,
                       schema: Schema, expr: Expression, bound: Expression,
                       case_sensitive: bool = True, column_stats: bool = True,
                       cache: ManifestCache | None = None) -> ScanPlan:
    """Plan a v4 snapshot (``snapshot.root_manifest`` set); called by
    :func:`~icenb.table.scan.planning.plan_files`, whose arguments these are. Counters:
    ``manifests_total`` is the live leaf manifests the root lists, ``manifests_read`` those
    not pruned (the root itself, like a manifest list, is not counted)."""
    root_location = snapshot.root_manifest
    if root_location is None:
        raise InvalidMetadata("not a v4 snapshot: no root manifest", file=metadata.source_file,
                              field=f"snapshots[{snapshot.snapshot_id}].root-manifest")
    specs = dict(metadata.specs_by_id)
    projections = Projections(specs, schema, expr, case_sensitive)
    root = read_root_manifest(io, root_location, snapshot_id=snapshot.snapshot_id,
                              sequence_number=snapshot.sequence_number)
    stats = column_stats or not isinstance(bound, AlwaysTrue)

    files = [e for e in root.entries if not e.content_type.is_manifest
             and e.content_type != ContentType.MANIFEST_DV]
    dvs = {e.referenced_file: (i, e) for i, e in enumerate(root.entries)
           if e.is_live and e.content_type == ContentType.MANIFEST_DV}
    leaves = [e for e in root.entries if e.is_live and e.content_type.is_manifest]
    chosen = [e for e in leaves if _manifest_may_match(e, projections, schema, bound)]

    data_tables: list[pa.Table] = []
    delete_tables: list[pa.Table] = []
    root_data = [e for e in files if e.content_type == ContentType.DATA]
    root_deletes = [e for e in files if e.content_type != ContentType.DATA]
    if root_data:
        data_tables.append(entries_table(root_data, manifest_path=root_location, specs=specs,
                                         schema=schema, column_stats=stats, file=root_location))
    if root_deletes:
        delete_tables.append(entries_table(root_deletes, manifest_path=root_location,
                                           specs=specs, schema=schema, file=root_location))
    leaf_stats = [stats or e.content_type != ContentType.DATA_MANIFEST for e in chosen]
    read = _read_leaves(io, chosen, leaf_stats, cache)
    entry_schemas: _EntrySchemas = {}
    for e, leaf_stat, pre in zip(chosen, leaf_stats, read, strict=True):
        is_data = e.content_type == ContentType.DATA_MANIFEST
        table = _leaf_entries(io, e, root_location, specs, schema, leaf_stat, cache, pre,
                              entry_schemas)
        i, dv_entry = dvs.get(e.location, (-1, None))
        if dv_entry is not None:
            where = f"entries[{i}]"
            deleted = load_manifest_dv(io, dv_entry, file=root_location, where=where)
            table = _without(table, deleted, e, root_location, where)
        (data_tables if is_data else delete_tables).append(table)

    data_entries = concat_entry_tables(data_tables)
    delete_entries = concat_entry_tables(delete_tables)
    selected, data_considered = select_files(data_entries, True, projections, schema, bound)
    if not column_stats:  # metrics a filter needed pruned; the plan carries none (as v1-v3)
        selected = without_metrics(selected)
    selected_deletes, deletes_considered = select_files(delete_entries, False, projections,
                                                         schema, AlwaysTrue())
    matched = match_deletes(selected, selected_deletes, specs)
    return ScanPlan(
        snapshot.snapshot_id, schema, specs, expr, case_sensitive, selected, selected_deletes,
        matched, manifests_total=len(leaves), manifests_read=len(chosen),
        files_considered=data_considered, delete_files_considered=deletes_considered,
    )


# --------------------------------------------------------------------------- inspection


class SnapshotEntries:
    """Every data / delete file entry of a v4 snapshot as v3 entry rows (the columns of
    :func:`~icenb.io.manifest_reader.read_manifest_entries`), for metadata tables and history
    views (docs/v4-layout.md#inspect).

    ``entries``: the root's file entries (DELETED ones included) then, per live leaf in root
    order, all its entries; a live leaf entry its root's manifest DV removes reads as DELETED
    by the snapshot that wrote that DV, or, for ordinals already in the DV it replaced in the
    same root, by the snapshot that wrote that one. ``manifest_path``: the root or the leaf.
    ``leaves``: the root's live leaf manifest entries (types 3, 4), inheritance applied;
    ``removed``: per leaf location, how many live entries the root's manifest DV removes.
    """

    __slots__ = ("entries", "leaves", "removed", "root_entries", "root_location")

    def __init__(self, root_location: str, root_entries: tuple[ContentEntry, ...],
                 entries: pa.Table, leaves: tuple[ContentEntry, ...],
                 removed: Mapping[str, int]) -> None:
        self.root_location = root_location
        self.root_entries = root_entries
        self.entries = entries
        self.leaves = leaves
        self.removed = dict(removed)


def _mark_removed(table: pa.Table, deleted: DeletionVector, dv_entry: ContentEntry,
                  root_location: str, where: str,
                  before: tuple[DeletionVector, int] | None = None) -> tuple[pa.Table, int]:
    """The leaf's rows with the live ones at the DV's ordinals set DELETED by the DV's
    snapshot, those also in ``before`` (the DV it replaced, and that DV's snapshot) by that
    snapshot; and how many were set."""
    if not deleted:
        return table, 0
    ordinals = deleted.to_numpy().astype(np.int64)
    top = int(ordinals.max())
    if top >= table.num_rows:
        raise InvalidMetadata(f"manifest DV deletes ordinal {top}, the leaf has "
                              f"{table.num_rows} rows", file=root_location,
                              field=f"{where}.deletion_vector", value=top)
    status = table.column("status").to_numpy().astype(np.int32)
    mask = np.zeros(table.num_rows, dtype=bool)
    mask[ordinals] = True
    mask &= status != int(EntryStatus.DELETED)
    status[mask] = int(EntryStatus.DELETED)
    by = np.full(table.num_rows, dv_entry.version_info.snapshot_id or 0, dtype=np.int64)
    if before is not None and before[0]:
        earlier = before[0].to_numpy().astype(np.int64)
        by[earlier[earlier < table.num_rows]] = before[1]
    sids = pc.if_else(pa.array(mask, pa.bool_()), pa.array(by, pa.int64()),
                      table.column("snapshot_id").cast(pa.int64()))
    i_status = table.column_names.index("status")
    table = table.set_column(i_status, table.schema.field(i_status),
                             pa.array(status, table.schema.field(i_status).type))
    i_sid = table.column_names.index("snapshot_id")
    table = table.set_column(i_sid, table.schema.field(i_sid),
                             sids.cast(table.schema.field(i_sid).type))
    return table, int(mask.sum())


def snapshot_entries(io: FileIO, metadata: TableMetadata, snapshot: Snapshot, *,
                     cache: ManifestCache | None = None) -> SnapshotEntries:
    """All file entries of a v4 snapshot (root + live leaves, manifest DVs applied as DELETED
    status), with full column metrics; leaves cached as for planning (docs/v4-layout.md#inspect)."""
    root_location = snapshot.root_manifest
    if root_location is None:
        raise InvalidMetadata("not a v4 snapshot: no root manifest", file=metadata.source_file,
                              field=f"snapshots[{snapshot.snapshot_id}].root-manifest")
    specs = dict(metadata.specs_by_id)
    schema = metadata.schema
    root = read_root_manifest(io, root_location, snapshot_id=snapshot.snapshot_id,
                              sequence_number=snapshot.sequence_number)
    files = [e for e in root.entries if not e.content_type.is_manifest
             and e.content_type != ContentType.MANIFEST_DV]
    dvs = {e.referenced_file: (i, e) for i, e in enumerate(root.entries)
           if e.is_live and e.content_type == ContentType.MANIFEST_DV}
    replaced = {e.referenced_file: (i, e) for i, e in enumerate(root.entries)
                if not e.is_live and e.content_type == ContentType.MANIFEST_DV}
    by_sequence = {s.sequence_number: s.snapshot_id for s in metadata.snapshots}
    leaves = tuple(e for e in root.entries if e.is_live and e.content_type.is_manifest)
    tables: list[pa.Table] = []
    if files:
        tables.append(entries_table(files, manifest_path=root_location, specs=specs,
                                    schema=schema, file=root_location))
    removed: dict[str, int] = {}
    read = _read_leaves(io, leaves, [True] * len(leaves), cache)
    entry_schemas: _EntrySchemas = {}
    for e, pre in zip(leaves, read, strict=True):
        table = _leaf_entries(io, e, root_location, specs, schema, True, cache, pre,
                              entry_schemas)
        i, dv_entry = dvs.get(e.location, (-1, None))
        if dv_entry is not None:
            where = f"entries[{i}]"
            deleted = load_manifest_dv(io, dv_entry, file=root_location, where=where)
            # the DV this commit replaced (DELETED in this root, docs/v4-layout.md#removals): its
            # ordinals were
            # removed by the snapshot that wrote it (found by its sequence number)
            j, old = replaced.get(e.location, (-1, None))
            seq = None if old is None else old.version_info.sequence_number
            sid = None if seq is None else by_sequence.get(seq)
            before = None if old is None or sid is None else (
                load_manifest_dv(io, old, file=root_location, where=f"entries[{j}]"), sid)
            table, removed[e.location] = _mark_removed(table, deleted, dv_entry,
                                                       root_location, where, before)
        tables.append(table)
    return SnapshotEntries(root_location, root.entries, concat_entry_tables(tables), leaves,
                           removed)
