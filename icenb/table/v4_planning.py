"""Plan a scan of an EXPERIMENTAL format-version 4 snapshot (root manifest, leaf manifests,
manifest DVs) into the same :class:`~icenb.table.scan_planning.ScanPlan` as v1-v3.

Source: the single-file-commits proposal (``shared/specs/v4-single-file-commits.txt``, "How
does planning work?"): read the root; load the manifest DVs of the leaves to read; read those
leaves, dropping the ordinals their DVs delete and DELETED entries. icenb's choices are in
``docs/v4-layout.md`` (section 10 is this module's).

Steps:

1. Root: :func:`~icenb.io.content_manifest.read_root_manifest` (one root, structural rules,
   inheritance from the snapshot). Live data / delete manifest entries are pruned with their
   aggregated stats, as v3 prunes manifest-list entries: none without added or existing files,
   none whose ``partitions`` summaries exclude the projected filter, and data manifests whose
   aggregated column metrics exclude the row filter (rows: added + existing).
2. Leaves: read (:func:`check_leaf`, inheritance from the root entry), decoded leaves cached
   by :class:`~icenb.io.manifest_reader.ManifestCache`; the ordinals the leaf's manifest DV
   deletes are dropped (:func:`~icenb.io.content_manifest.load_manifest_dv` checks its
   cardinality).
3. Every data / delete file entry (root and leaves) becomes a v3 ``manifest_entry`` row
   (:func:`manifest_entry_of`: the v3 :class:`~icenb.spec.manifest.DataFile` model, partition
   tuple from ``content_stats.partition``, a data DV's Puffin blob as ``content_offset`` /
   ``content_size_in_bytes`` of its ``referenced_data_file``), so file pruning, delete
   matching (sequence numbers, partitions, DVs by referenced file) and tasks are v3's code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, InvalidMetadata, UnsupportedVersion
from icenb.io.avro import avro_arrow_schema
from icenb.io.content_manifest import (
    load_manifest_dv,
    read_content_manifest,
    read_root_manifest,
)
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    DecodedManifest,
    ManifestCache,
    concat_entry_tables,
    read_manifest_entries,
)
from icenb.spec.content_entry import (
    ContentEntry,
    ContentStats,
    ContentType,
    InheritFrom,
    check_leaf,
    inherit,
)
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.expressions import AlwaysTrue, Expression, referenced_field_ids
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
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
from icenb.table.scan_planning import (
    ScanPlan,
    _partition_type,
    _Projections,
    _select_files,
    match_deletes,
)
from icenb.table.v4_upgrade import manifest_file_of

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
    (docs/v4-layout.md, section 10). ``column_stats=False`` leaves the metric maps out."""
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
        ptype = _partition_type(spec, schema)
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


def _manifest_may_match(e: ContentEntry, projections: _Projections, schema: Schema,
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


def _leaf_entries(io: FileIO, root_entry: ContentEntry, root_location: str,
                  specs: Mapping[int, PartitionSpec], schema: Schema, column_stats: bool,
                  cache: ManifestCache | None) -> pa.Table:
    """All entries of a leaf, in ordinal order, inheritance applied (checked against its root
    entry: kind, depth, record_count, manifest_stats); cached by file and inherited values."""
    key = _leaf_key(root_entry, column_stats)
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit.table
    try:
        m = read_content_manifest(io, root_entry.location,
                                  length=root_entry.file_size_in_bytes)
    except UnsupportedVersion:
        # a v1-v3 manifest listed after an upgrade (docs/v4-layout.md §14): the v3 reader
        v3 = read_manifest_entries(io, [manifest_file_of(root_entry)], 3)
        if cache is not None:
            cache.put(key, DecodedManifest(v3, root_entry.partition_spec_id, 3))
        return v3
    check_leaf(root_entry, m.kind, m.entries, file=m.location)
    entries = inherit(m.entries, InheritFrom.from_root_entry(root_entry, file=root_location),
                      file=m.location)
    table = entries_table(entries, manifest_path=m.location, specs=specs, schema=schema,
                          column_stats=column_stats, file=m.location)
    if cache is not None:
        cache.put(key, DecodedManifest(table, root_entry.partition_spec_id, 4))
    return table


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
    :func:`~icenb.table.scan_planning.plan_files`, whose arguments these are. Counters:
    ``manifests_total`` is the live leaf manifests the root lists, ``manifests_read`` those
    not pruned (the root itself, like a manifest list, is not counted)."""
    root_location = snapshot.root_manifest
    if root_location is None:
        raise InvalidMetadata("not a v4 snapshot: no root manifest", file=metadata.source_file,
                              field=f"snapshots[{snapshot.snapshot_id}].root-manifest")
    specs = dict(metadata.specs_by_id)
    projections = _Projections(specs, schema, expr, case_sensitive)
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
    for e in chosen:
        is_data = e.content_type == ContentType.DATA_MANIFEST
        table = _leaf_entries(io, e, root_location, specs, schema, stats or not is_data, cache)
        i, dv_entry = dvs.get(e.location, (-1, None))
        if dv_entry is not None:
            where = f"entries[{i}]"
            deleted = load_manifest_dv(io, dv_entry, file=root_location, where=where)
            table = _without(table, deleted, e, root_location, where)
        (data_tables if is_data else delete_tables).append(table)

    data_entries = concat_entry_tables(data_tables)
    delete_entries = concat_entry_tables(delete_tables)
    selected, data_considered = _select_files(data_entries, True, projections, schema, bound)
    selected_deletes, deletes_considered = _select_files(delete_entries, False, projections,
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
    views (docs/v4-layout.md §18).

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
    status), with full column metrics; leaves cached as for planning (docs/v4-layout.md §18)."""
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
    for e in leaves:
        table = _leaf_entries(io, e, root_location, specs, schema, True, cache)
        i, dv_entry = dvs.get(e.location, (-1, None))
        if dv_entry is not None:
            where = f"entries[{i}]"
            deleted = load_manifest_dv(io, dv_entry, file=root_location, where=where)
            # the DV this commit replaced (DELETED in this root, §12): its ordinals were
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
