"""Metadata tables of a table as Arrow tables (``table.inspect.snapshots()`` ...).

Column names, types and meaning follow the reference implementation's metadata tables (as seen
through Spark: ``SELECT * FROM t.snapshots``), so users can move between the two:

* ``snapshots``: committed_at, snapshot_id, parent_id, operation, manifest_list, summary.
* ``history``: made_current_at, snapshot_id, parent_id, is_current_ancestor (one row per
  ``snapshot-log`` entry).
* ``refs``: name, type (``BRANCH``/``TAG``), snapshot_id, max_reference_age_in_ms,
  min_snapshots_to_keep, max_snapshot_age_in_ms.
* ``metadata_log_entries``: timestamp, file, latest_snapshot_id, latest_schema_id,
  latest_sequence_number (the ``metadata-log`` plus the current metadata file; the snapshot is
  the one current at that time according to the ``snapshot-log``).
* ``manifests``: content, path, length, partition_spec_id, added_snapshot_id, the six
  data/delete file counts and partition_summaries (bounds as human strings of the manifest's
  partition spec; a missing bound is the string ``"null"``, as in the reference).
* ``entries``: status, snapshot_id, sequence_number, file_sequence_number, data_file (every
  entry of the snapshot's manifests, DELETED ones included).
* ``files`` / ``data_files`` / ``delete_files``: the fields of ``data_file`` as columns, for the
  live (not DELETED) entries of all / data / delete manifests.

Omitted: ``readable_metrics`` (entries and files tables), and the ``all_*``, ``partitions``
and ``position_deletes`` tables. A ``partition`` column (or ``data_file.partition``) is left
out when the table has never been partitioned, as in the reference implementation. Partition
structs are the union of every spec's fields (matched by partition field id); fields a file's
spec lacks are null. Timestamps are ``timestamp[us, tz=UTC]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import NoSuchSnapshot
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.spec.manifest import EntryStatus, FieldSummary, ManifestContent, ManifestFile
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.snapshot import Snapshot, SnapshotRefType
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import NestedField, UnknownType
from icenb.spec.values import from_bytes, to_human
from icenb.table.arrow_schema import FIELD_ID_KEY, arrow_field_id, to_arrow_type

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["InspectTables"]

_TS = pa.timestamp("us", tz="UTC")

_SUMMARY_TYPE = pa.struct([
    pa.field("contains_null", pa.bool_(), nullable=False),
    pa.field("contains_nan", pa.bool_()),
    pa.field("lower_bound", pa.string()),
    pa.field("upper_bound", pa.string()),
])

# The fields of ``data_file`` in the reference implementation's order, with their types
# (``partition`` is per table and inserted after ``spec_id``).
_DATA_FILE_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("content", pa.int32()),
    ("file_path", pa.string()),
    ("file_format", pa.string()),
    ("spec_id", pa.int32()),
    ("partition", pa.struct([])),
    ("record_count", pa.int64()),
    ("file_size_in_bytes", pa.int64()),
    ("column_sizes", pa.map_(pa.int32(), pa.int64())),
    ("value_counts", pa.map_(pa.int32(), pa.int64())),
    ("null_value_counts", pa.map_(pa.int32(), pa.int64())),
    ("nan_value_counts", pa.map_(pa.int32(), pa.int64())),
    ("lower_bounds", pa.map_(pa.int32(), pa.binary())),
    ("upper_bounds", pa.map_(pa.int32(), pa.binary())),
    ("key_metadata", pa.binary()),
    ("split_offsets", pa.list_(pa.int64())),
    ("equality_ids", pa.list_(pa.int32())),
    ("sort_order_id", pa.int32()),
    ("first_row_id", pa.int64()),
    ("referenced_data_file", pa.string()),
    ("content_offset", pa.int64()),
    ("content_size_in_bytes", pa.int64()),
)


def _ts(ms: int) -> int:
    return ms * 1000


class InspectTables:
    """The metadata tables of one :class:`~icenb.table.table.Table` (its loaded metadata)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def __repr__(self) -> str:
        return f"InspectTables({self._table.location!r})"

    # ------------------------------------------------------------------ table-wide

    def snapshots(self) -> pa.Table:
        """One row per snapshot in the metadata (spec: Snapshots)."""
        snaps = self._table.metadata.snapshots
        summaries = [
            None if s.summary is None
            else [(k, v) for k, v in s.summary.items() if k != "operation"]
            for s in snaps
        ]
        return pa.table({
            "committed_at": pa.array([_ts(s.timestamp_ms) for s in snaps], _TS),
            "snapshot_id": pa.array([s.snapshot_id for s in snaps], pa.int64()),
            "parent_id": pa.array([s.parent_snapshot_id for s in snaps], pa.int64()),
            "operation": pa.array(
                [None if s.summary is None else str(s.summary.operation) for s in snaps],
                pa.string()),
            "manifest_list": pa.array([s.manifest_list for s in snaps], pa.string()),
            "summary": pa.array(summaries, pa.map_(pa.string(), pa.string())),
        })

    def history(self) -> pa.Table:
        """One row per ``snapshot-log`` entry; ``is_current_ancestor`` tells whether the
        snapshot is the current one or one of its ancestors (spec: Table Metadata Fields)."""
        md = self._table.metadata
        ancestors = _ancestor_ids(md.snapshots, md.current_snapshot_id)
        log = md.snapshot_log
        parents = []
        for e in log:
            snap = md.snapshot_by_id(e.snapshot_id)
            parents.append(None if snap is None else snap.parent_snapshot_id)
        return pa.table({
            "made_current_at": pa.array([_ts(e.timestamp_ms) for e in log], _TS),
            "snapshot_id": pa.array([e.snapshot_id for e in log], pa.int64()),
            "parent_id": pa.array(parents, pa.int64()),
            "is_current_ancestor": pa.array([e.snapshot_id in ancestors for e in log],
                                            pa.bool_()),
        })

    def refs(self) -> pa.Table:
        """One row per branch or tag (spec: Snapshot References)."""
        items = sorted(self._table.metadata.refs.items())
        return pa.table({
            "name": pa.array([n for n, _ in items], pa.string()),
            "type": pa.array(["BRANCH" if r.ref_type == SnapshotRefType.BRANCH else "TAG"
                              for _, r in items], pa.string()),
            "snapshot_id": pa.array([r.snapshot_id for _, r in items], pa.int64()),
            "max_reference_age_in_ms": pa.array([r.max_ref_age_ms for _, r in items],
                                                pa.int64()),
            "min_snapshots_to_keep": pa.array([r.min_snapshots_to_keep for _, r in items],
                                              pa.int32()),
            "max_snapshot_age_in_ms": pa.array([r.max_snapshot_age_ms for _, r in items],
                                               pa.int64()),
        })

    def metadata_log_entries(self) -> pa.Table:
        """The previous metadata files and the current one, each with the snapshot that was
        current then (the last ``snapshot-log`` entry at or before its timestamp)."""
        md = self._table.metadata
        entries: list[tuple[int, str | None]] = [
            (e.timestamp_ms, e.metadata_file) for e in md.metadata_log]
        entries.append((md.last_updated_ms, self._table.metadata_location))
        snaps: list[Snapshot | None] = []
        for ts, _ in entries:
            sid: int | None = None
            for e in md.snapshot_log:
                if e.timestamp_ms <= ts:
                    sid = e.snapshot_id
            snaps.append(None if sid is None else md.snapshot_by_id(sid))
        return pa.table({
            "timestamp": pa.array([_ts(ts) for ts, _ in entries], _TS),
            "file": pa.array([f for _, f in entries], pa.string()),
            "latest_snapshot_id": pa.array([None if s is None else s.snapshot_id
                                            for s in snaps], pa.int64()),
            "latest_schema_id": pa.array([None if s is None else s.schema_id for s in snaps],
                                         pa.int32()),
            "latest_sequence_number": pa.array([None if s is None else s.sequence_number
                                                for s in snaps], pa.int64()),
        })

    # ------------------------------------------------------------------ per snapshot

    def manifests(self, snapshot_id: int | None = None) -> pa.Table:
        """The manifests of a snapshot (default: the current one; none without one)."""
        snap = self._snapshot(snapshot_id)
        files = [] if snap is None else self._manifest_files(snap)
        md = self._table.metadata
        schema = md.schema
        summaries = []
        for m in files:
            spec = md.spec_by_id(m.partition_spec_id)
            summaries.append(None if m.partitions is None else
                             _summaries(spec, schema, m.partitions))

        def counts(content: ManifestContent, name: str) -> pa.Array:
            return pa.array([(getattr(m, name) or 0) if m.content == content else 0
                             for m in files], pa.int32())

        data, deletes = ManifestContent.DATA, ManifestContent.DELETES
        return pa.table({
            "content": pa.array([int(m.content) for m in files], pa.int32()),
            "path": pa.array([m.manifest_path for m in files], pa.string()),
            "length": pa.array([m.manifest_length for m in files], pa.int64()),
            "partition_spec_id": pa.array([m.partition_spec_id for m in files], pa.int32()),
            "added_snapshot_id": pa.array([m.added_snapshot_id for m in files], pa.int64()),
            "added_data_files_count": counts(data, "added_files_count"),
            "existing_data_files_count": counts(data, "existing_files_count"),
            "deleted_data_files_count": counts(data, "deleted_files_count"),
            "added_delete_files_count": counts(deletes, "added_files_count"),
            "existing_delete_files_count": counts(deletes, "existing_files_count"),
            "deleted_delete_files_count": counts(deletes, "deleted_files_count"),
            "partition_summaries": pa.array(summaries, pa.list_(_SUMMARY_TYPE)),
        })

    def entries(self, snapshot_id: int | None = None) -> pa.Table:
        """Every manifest entry of a snapshot, DELETED ones included (spec: Manifests)."""
        raw = self._raw_entries(snapshot_id)
        data_file = _data_file(self._table.metadata, raw)
        return pa.table({
            "status": raw.column("status").cast(pa.int32()),
            "snapshot_id": raw.column("snapshot_id").cast(pa.int64()),
            "sequence_number": raw.column("sequence_number").cast(pa.int64()),
            "file_sequence_number": raw.column("file_sequence_number").cast(pa.int64()),
            "data_file": data_file,
        })

    def files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data and delete files of a snapshot, one column per ``data_file`` field."""
        return self._files(snapshot_id, None)

    def data_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data files of a snapshot (from its data manifests)."""
        return self._files(snapshot_id, ManifestContent.DATA)

    def delete_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live delete files of a snapshot (from its delete manifests)."""
        return self._files(snapshot_id, ManifestContent.DELETES)

    # ------------------------------------------------------------------ helpers

    def _snapshot(self, snapshot_id: int | None) -> Snapshot | None:
        md = self._table.metadata
        if snapshot_id is None:
            if md.current_snapshot_id is None:
                return None
            snapshot_id = md.current_snapshot_id
        snap = md.snapshot_by_id(snapshot_id)
        if snap is None:
            raise NoSuchSnapshot("no such snapshot in the table metadata",
                                 file=md.source_file, field="snapshot-id", value=snapshot_id)
        return snap

    def _manifest_files(self, snap: Snapshot) -> list[ManifestFile]:
        return read_manifest_list(self._table.io, snap, self._table.metadata.format_version)

    def _raw_entries(self, snapshot_id: int | None) -> pa.Table:
        snap = self._snapshot(snapshot_id)
        files = [] if snap is None else self._manifest_files(snap)
        return read_manifest_entries(self._table.io, files, self._table.metadata.format_version)

    def _files(self, snapshot_id: int | None, content: ManifestContent | None) -> pa.Table:
        raw = self._raw_entries(snapshot_id)
        keep = pc.not_equal(raw.column("status"), pa.scalar(int(EntryStatus.DELETED), pa.int32()))
        if content is not None:
            keep = pc.and_(keep, pc.equal(raw.column("manifest_content"),
                                          pa.scalar(int(content), pa.int32())))
        raw = raw.filter(keep)
        data_file = _data_file(self._table.metadata, raw)
        return pa.Table.from_arrays(data_file.flatten(),
                                    names=[f.name for f in data_file.type])


def _ancestor_ids(snapshots: Sequence[Snapshot], current: int | None) -> set[int]:
    by_id = {s.snapshot_id: s for s in snapshots}
    out: set[int] = set()
    sid = current
    while sid is not None and sid not in out:
        out.add(sid)
        snap = by_id.get(sid)
        sid = None if snap is None else snap.parent_snapshot_id
    return out


def _summaries(spec: PartitionSpec | None, schema: Schema,
               parts: Sequence[FieldSummary]) -> list[dict[str, Any]]:
    """Partition field summaries with bounds as human strings (spec: Manifest Lists)."""
    out: list[dict[str, Any]] = []
    ptype = None if spec is None else spec.partition_type(schema)
    for i, s in enumerate(parts):
        lower = upper = None
        if spec is not None and ptype is not None and i < len(spec.fields):
            result_type = ptype.fields[i].field_type
            lower = _human(spec, i, schema, result_type, s.lower_bound)
            upper = _human(spec, i, schema, result_type, s.upper_bound)
        out.append({"contains_null": s.contains_null, "contains_nan": s.contains_nan,
                    "lower_bound": lower, "upper_bound": upper})
    return out


def _human(spec: PartitionSpec, i: int, schema: Schema, result_type: Any,
           raw: bytes | None) -> str | None:
    if raw is None:
        return "null"  # as the reference implementation renders a missing bound
    if isinstance(result_type, UnknownType):
        return None
    value = from_bytes(result_type, raw)
    field = spec.fields[i]
    source = schema.field_by_id(field.source_ids[0])
    if source is None:
        return to_human(result_type, value)
    return field.transform.to_human_string(source.field_type, value)


def _table_partition(md: TableMetadata, part: pa.Array | None,
                     n: int) -> pa.StructArray | None:
    """``part`` widened to the fields of every spec of the table, by partition field id, named
    as in the newest spec that has them (as the reference's ``Partitioning.partitionType``)."""
    wanted: dict[int, NestedField] = {}
    for spec in sorted(md.partition_specs, key=lambda s: s.spec_id):
        for f in spec.partition_type(md.schema).fields:
            wanted[f.field_id] = f
    if not wanted:
        return None
    own: dict[int, pa.Array] = {}
    if part is not None:
        assert isinstance(part, pa.StructArray)
        for i, child in enumerate(part.flatten()):
            fid = arrow_field_id(part.type.field(i))
            if fid is not None:
                own[fid] = child
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for fid in sorted(wanted):
        f = wanted[fid]
        child = own.get(fid)
        if child is None:
            child = pa.nulls(n, to_arrow_type(f.field_type))
        arrays.append(child)
        fields.append(pa.field(f.name, child.type, metadata={FIELD_ID_KEY: str(fid)}))
    return pa.StructArray.from_arrays(arrays, fields=fields)


def _data_file(md: TableMetadata, raw: pa.Table) -> pa.StructArray:
    """The entries' ``data_file`` structs in the reference layout, ``spec_id`` filled in."""
    col = raw.column("data_file")
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    assert isinstance(arr, pa.StructArray)
    n = len(arr)
    have = {arr.type.field(i).name: i for i in range(arr.type.num_fields)}
    children = arr.flatten()
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for name, t in _DATA_FILE_FIELDS:
        if name == "spec_id":
            spec_ids = raw.column("partition_spec_id").combine_chunks().cast(pa.int32())
            arrays.append(spec_ids)
            fields.append(pa.field(name, pa.int32()))
            continue
        if name == "partition":
            i = have.get(name)
            part = _table_partition(md, None if i is None else children[i], n)
            if part is None:
                continue  # never partitioned: no partition column, as the reference
            arrays.append(part)
            fields.append(pa.field(name, part.type))
            continue
        i = have.get(name)
        child = pa.nulls(n, t) if i is None else children[i]
        arrays.append(child)
        fields.append(pa.field(name, child.type))
    return pa.StructArray.from_arrays(arrays, fields=fields)
