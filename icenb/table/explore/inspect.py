"""Metadata tables of a table as Arrow tables (``table.inspect.snapshots()`` ...).

Column names, types and meaning follow the reference implementation's metadata tables (Iceberg
Java 1.10 as seen through Spark: ``spark.read.format("iceberg").load(location + "#files")``), so
users can move between the two:

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
* ``partitions``: one row per partition with live files: the union partition type of all
  specs (``Partitioning.partitionType``: fields whose source column is still in the schema),
  where, as in the reference's comparator, equal values under specs with a different number of
  such fields are different partitions; spec_id, record_count / file_count /
  total_data_file_size_in_bytes of data files, position_delete_record_count / _file_count
  (deletion vectors count as position delete files, with their cardinality),
  equality_delete_record_count / _file_count, and last_updated_at / last_updated_snapshot_id:
  the newest snapshot among the files' entries' ``snapshot_id``s still in the metadata. An
  unpartitioned table has neither ``partition`` nor ``spec_id`` and at most one row.
* ``position_deletes``: one row per deleted position of the snapshot's live position delete
  files (Parquet, ORC, Avro) and deletion vectors: file_path, pos, row (the current schema's
  struct, null unless the delete file stores rows; columns without an Arrow type, such as
  variant, are left out of it), partition, spec_id, delete_file_path, and for v3 tables
  content_offset / content_size_in_bytes (null for delete files that are not DVs).
* ``all_manifests``: ``manifests`` of every snapshot in the metadata, one row per (snapshot,
  manifest) with ``reference_snapshot_id``.
* ``all_entries`` / ``all_files`` / ``all_data_files`` / ``all_delete_files``: ``entries`` /
  ``files`` ... over the distinct manifests (by path) of every snapshot in the metadata. As in
  the reference, files are not de-duplicated: a file live in two distinct manifests (say,
  ADDED in one and EXISTING in a rewritten one) has two rows.

The per-snapshot tables take ``snapshot_id`` (default: the current snapshot; a table without
one gives empty tables with the same columns); the ``all_*`` tables cover every snapshot, like
the reference (which refuses a snapshot there).

Deliberate differences: ``readable_metrics`` (entries and files tables) is omitted. Where the
reference's answer depends on the order in which its parallel readers deliver manifests, a
fixed rule is used: a manifest listed by several snapshots is read with the manifest-list entry
of the first snapshot (metadata order) that lists it (this matters for ``first_row_id``
inheritance after a v3 upgrade); a partition's ``spec_id`` is that of its newest entry (by
snapshot commit time, then the highest spec id), where the reference keeps whichever file of
the newest snapshot it happened to count first; as there, entries of expired snapshots do not
count (a partition with only such entries has ``spec_id`` 0).

EXPERIMENTAL format-version 4 snapshots (root + leaf manifests, docs/v4-layout.md#inspect): the
entry rows come from the root and its live leaves
(:func:`~icenb.table.scan.v4_planning.snapshot_entries`), a leaf entry a manifest DV removes reading
DELETED; ``manifests`` lists the root's live leaves with ``manifest_dv_removed_count``; v4
tables add ``manifest_path`` to the entries tables and ``root_manifest`` to ``snapshots``.

A ``partition`` column (or ``data_file.partition``) is left out when the table has never been
partitioned, as in the reference implementation. Partition structs hold the fields of every
spec whose source column is still in the schema (matched by partition field id; the
reference's ``Partitioning.partitionType``); fields a file's spec lacks are null. Timestamps
are ``timestamp[us, tz=UTC]``. Decoded manifests come from a shared
:class:`~icenb.io.manifest_reader.ManifestCache` (manifests are immutable).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ParamSpec

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icenb.errors import (
    CorruptFile,
    IcebergError,
    InvalidMetadata,
    NoSuchSnapshot,
    UnsupportedFeature,
)
from icenb.io.data_files.avro import read_avro_file
from icenb.io.data_files.orc import read_orc_file
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    DEFAULT_MAX_WORKERS,
    ManifestCache,
    concat_entry_tables,
    read_manifest_entries,
    read_manifest_list,
    read_manifest_list_table,
    shared_manifest_cache,
)
from icenb.io.puffin import read_deletion_vector
from icenb.io.root_manifest import read_root_manifest
from icenb.reprs import safe_repr
from icenb.spec.arrow_schema import FIELD_ID_KEY, arrow_field_id, to_arrow_schema, to_arrow_type
from icenb.spec.content_entry import ContentType
from icenb.spec.human import types_tag
from icenb.spec.manifest import (
    EntryStatus,
    FieldSummary,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestFile,
    manifest_files_from_arrow,
)
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.snapshot import Snapshot, SnapshotRefType
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import NestedField, UnknownType
from icenb.spec.values import from_bytes, to_human
from icenb.table.commit.v4_upgrade import manifest_file_of
from icenb.table.scan.read import project_table
from icenb.table.scan.v4_planning import SnapshotEntries, snapshot_entries

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["INSPECT_TAG", "INSPECT_TYPES_TAG", "InspectTables", "shared_manifest_cache"]

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

# Position delete file columns (spec: "Position Delete Files"): reserved field ids.
_DELETE_FILE_PATH_ID = 2147483546
_DELETE_POS_ID = 2147483545
_DELETE_ROW_ID = 2147483544

# What ``partitions`` needs from each entry (the inheritance columns are always read).
_PARTITIONS_COLUMNS = ("data_file.partition", "data_file.file_size_in_bytes")

# v4 column of ``manifests``: entries of the leaf its root's manifest DV removes.
_DV_REMOVED = "manifest_dv_removed_count"



#: The largest epoch milliseconds whose microseconds fit the int64 of a timestamp column.
_MAX_MS = (2**63 - 1) // 1000


def _ts(ms: int) -> int:
    """Epoch ms as the microseconds of an inspect table's timestamp column; a time no int64 can
    hold (a damaged or hostile ``timestamp-ms``) is an ``InvalidMetadata`` naming the value."""
    if not -_MAX_MS <= ms <= _MAX_MS:
        raise InvalidMetadata("a timestamp in the metadata is out of range (more than 292,000 "
                              "years from 1970)", field="timestamp-ms", value=ms)
    return ms * 1000


#: Schema metadata key naming the metadata table an Arrow table is (the display layer draws
#: tagged tables as bounded HTML; other Arrow tables keep their own display).
INSPECT_TAG = b"icenb.inspect"
#: Schema metadata key holding the column and partition types (:func:`icenb.spec.human.types_tag`).
INSPECT_TYPES_TAG = b"icenb.inspect.types"

P = ParamSpec("P")


def _tagged(fn: Callable[P, pa.Table]) -> Callable[P, pa.Table]:
    """Tag the returned table with its metadata table name (schema metadata, no copy)."""
    name = fn.__name__.encode()

    @functools.wraps(fn)
    def tagged(*args: P.args, **kwargs: P.kwargs) -> pa.Table:
        out = fn(*args, **kwargs)
        tags = {INSPECT_TAG: name}
        md = getattr(getattr(args[0], "_table", None), "metadata", None) if args else None
        if md is not None:  # column and partition types, for the display (icenb.spec.human)
            tags[INSPECT_TYPES_TAG] = types_tag(md.schemas, md.partition_specs)
        return out.replace_schema_metadata({**(out.schema.metadata or {}), **tags})
    return tagged


@safe_repr
class InspectTables:
    """The metadata tables of one :class:`~icenb.table.table.Table` (its loaded metadata)."""

    def __init__(self, table: Table, *, cache: ManifestCache | None = None) -> None:
        self._table = table
        self._cache = shared_manifest_cache(table.io) if cache is None else cache

    def __repr__(self) -> str:
        return f"InspectTables({self._table.location!r})"

    # ------------------------------------------------------------------ table-wide

    @_tagged
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
            # v4 tables: the snapshot's root manifest (docs/v4-layout.md#inspect)
            **({"root_manifest": pa.array([s.root_manifest for s in snaps], pa.string())}
               if self._table.metadata.format_version >= 4 else {}),
        })

    @_tagged
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

    @_tagged
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

    @_tagged
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

    @_tagged
    def manifests(self, snapshot_id: int | None = None) -> pa.Table:
        """The manifests of a snapshot (default: the current one; none without one). On a v4
        snapshot: the live leaf manifests its root lists (docs/v4-layout.md#inspect)."""
        snap = self._snapshot(snapshot_id)
        return self._manifests_of(snap)

    @_tagged
    def entries(self, snapshot_id: int | None = None) -> pa.Table:
        """Every manifest entry of a snapshot, DELETED ones included (spec: Manifests)."""
        return self._entries_table(self._snapshot_raw(self._snapshot(snapshot_id)))

    @_tagged
    def files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data and delete files of a snapshot, one column per ``data_file`` field."""
        return self._files(self._snapshot_raw(self._snapshot(snapshot_id)))

    @_tagged
    def data_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data files of a snapshot (from its data manifests)."""
        return self._files(self._snapshot_raw(self._snapshot(snapshot_id), ManifestContent.DATA))

    @_tagged
    def delete_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live delete files of a snapshot (from its delete manifests)."""
        return self._files(self._snapshot_raw(self._snapshot(snapshot_id),
                                              ManifestContent.DELETES))

    @_tagged
    def partitions(self, snapshot_id: int | None = None) -> pa.Table:
        """Per partition, the counts and sizes of a snapshot's live data and delete files and
        when the partition last changed (spec: Manifests; see the module docstring)."""
        md = self._table.metadata
        raw = self._snapshot_raw(self._snapshot(snapshot_id), columns=_PARTITIONS_COLUMNS)
        return _partitions_table(md, _keep(raw, _live(raw)))

    @_tagged
    def position_deletes(self, snapshot_id: int | None = None) -> pa.Table:
        """Every position deleted by a snapshot's live position delete files and deletion
        vectors (spec: "Position Delete Files", "Deletion Vectors")."""
        md = self._table.metadata
        raw = self._snapshot_raw(self._snapshot(snapshot_id), ManifestContent.DELETES)
        keep = pc.and_(_live(raw), pc.equal(
            pc.struct_field(_combined(raw.column("data_file")), "content"),
            pa.scalar(int(FileContent.POSITION_DELETES), pa.int32())))
        return _position_deletes_table(self._table.io, md, _keep(raw, keep))

    # ------------------------------------------------------------------ all snapshots

    @_tagged
    def all_manifests(self) -> pa.Table:
        """The manifests of every snapshot in the metadata, one row per (snapshot, manifest),
        with ``reference_snapshot_id`` naming the snapshot."""
        md = self._table.metadata
        if md.format_version >= 4:
            parts = [self._manifests_of(s) for s in md.snapshots]
            refs = [s.snapshot_id for s, t in zip(md.snapshots, parts, strict=True)
                    for _ in range(t.num_rows)]
            rows = pa.concat_tables(parts) if parts else self._manifests_of(None)
            return rows.append_column("reference_snapshot_id", pa.array(refs, pa.int64()))
        distinct, refs, positions = self._reachable()
        rows = _manifest_rows(md, distinct)
        rows = rows.take(pa.array(positions, pa.int64()))
        return rows.append_column("reference_snapshot_id", pa.array(refs, pa.int64()))

    @_tagged
    def all_entries(self) -> pa.Table:
        """Every entry of every distinct manifest reachable from a snapshot in the metadata."""
        return self._entries_table(self._all_raw())

    @_tagged
    def all_files(self) -> pa.Table:
        """The live files of every distinct manifest reachable from a snapshot (a file in two
        manifests has two rows, as in the reference)."""
        return self._files(self._all_raw())

    @_tagged
    def all_data_files(self) -> pa.Table:
        """The live data files of every distinct data manifest reachable from a snapshot."""
        return self._files(self._all_raw(ManifestContent.DATA))

    @_tagged
    def all_delete_files(self) -> pa.Table:
        """The live delete files of every distinct delete manifest reachable from a snapshot."""
        return self._files(self._all_raw(ManifestContent.DELETES))

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

    def _v4_entries(self, snap: Snapshot) -> SnapshotEntries:
        return snapshot_entries(self._table.io, self._table.metadata, snap, cache=self._cache)

    def _manifests_of(self, snap: Snapshot | None) -> pa.Table:
        """The ``manifests`` rows of one snapshot; a v4 table's have the v4 column
        ``manifest_dv_removed_count`` (entries of the leaf its root's manifest DV removes)."""
        md = self._table.metadata
        if snap is None or snap.root_manifest is None:
            files = [] if snap is None else self._manifest_files(snap)
            rows = _manifest_rows(md, files)
            if md.format_version < 4:
                return rows
            return rows.append_column(_DV_REMOVED, pa.array([0] * rows.num_rows, pa.int32()))
        root = read_root_manifest(self._table.io, snap.root_manifest,
                                  snapshot_id=snap.snapshot_id,
                                  sequence_number=snap.sequence_number)
        removed = {e.referenced_file: e.record_count for e in root.entries
                   if e.is_live and e.content_type == ContentType.MANIFEST_DV}
        leaves = [e for e in root.entries if e.is_live and e.content_type.is_manifest]
        rows = _manifest_rows(md, [manifest_file_of(e) for e in leaves])
        return rows.append_column(_DV_REMOVED, pa.array(
            [removed.get(e.location, 0) for e in leaves], pa.int32()))

    def _snapshot_raw(self, snap: Snapshot | None, content: ManifestContent | None = None,
                      columns: Sequence[str] | None = None) -> pa.Table:
        """The entry rows of a snapshot's manifests (of one content, when given); on a v4
        snapshot those of its root and live leaves (:func:`snapshot_entries`)."""
        if snap is None:
            return self._raw_entries([])
        if snap.root_manifest is not None:
            raw = self._v4_entries(snap).entries
            if content is None:
                return raw
            return raw.filter(pc.equal(raw.column("manifest_content"),
                                       pa.scalar(int(content), pa.int32())))
        manifests = self._manifest_files(snap)
        if content is not None:
            manifests = [m for m in manifests if m.content == content]
        return self._raw_entries(manifests, columns=columns)

    def _all_raw(self, content: ManifestContent | None = None) -> pa.Table:
        """The entry rows of the distinct manifests of every snapshot. In a v4 table a root is
        a manifest of its own (its carried files repeat per root); a leaf's entry is kept once
        per status it has under the roots that list it (docs/v4-layout.md#inspect)."""
        md = self._table.metadata
        if md.format_version < 4:
            manifests = self._reachable()[0]
            if content is not None:
                manifests = [m for m in manifests if m.content == content]
            return self._raw_entries(manifests)
        parts = [self._snapshot_raw(s, content) for s in md.snapshots]
        if not parts:
            return self._raw_entries([])
        whole = concat_entry_tables(parts)
        df = _combined(whole.column("data_file"))
        keys = zip(whole.column("manifest_path").to_pylist(),
                   pc.struct_field(df, "file_path").to_pylist(),
                   (pc.struct_field(df, "referenced_data_file").to_pylist()
                    if df.type.get_field_index("referenced_data_file") >= 0
                    else [None] * len(df)),
                   whole.column("status").to_pylist(), strict=True)
        seen: set[tuple[Any, ...]] = set()
        keep: list[int] = []
        for i, key in enumerate(keys):
            if key not in seen:
                seen.add(key)
                keep.append(i)
        if len(keep) == whole.num_rows:
            return whole
        return whole.take(pa.array(keep, pa.int64()))

    def _reachable(self) -> tuple[list[ManifestFile], list[int], list[int]]:
        """The distinct manifests (by path) of every snapshot, in first-seen order, and per
        (snapshot, manifest) pair the snapshot id and the manifest's position in that list."""
        md = self._table.metadata
        io = self._table.io
        index: dict[str, int] = {}
        distinct: list[ManifestFile] = []
        refs: list[int] = []
        positions: list[int] = []
        for snap in md.snapshots:
            listing = read_manifest_list_table(io, snap, md.format_version)
            paths = listing.column("manifest_path").to_pylist()
            new_rows: list[int] = []
            for i, path in enumerate(paths):
                if path not in index:
                    index[path] = -1
                    new_rows.append(i)
            if new_rows:
                new = manifest_files_from_arrow(listing.take(pa.array(new_rows, pa.int64())),
                                                file=snap.manifest_list)
                for m in new:
                    index[m.manifest_path] = len(distinct)
                    distinct.append(m)
            positions.extend(index[p] for p in paths)
            refs.extend([snap.snapshot_id] * len(paths))
        return distinct, refs, positions

    def _raw_entries(self, manifests: Sequence[ManifestFile],
                     columns: Sequence[str] | None = None) -> pa.Table:
        return read_manifest_entries(self._table.io, manifests,
                                     self._table.metadata.format_version, columns=columns,
                                     cache=self._cache)

    def _entries_table(self, raw: pa.Table) -> pa.Table:
        data_file = _data_file(self._table.metadata, raw)
        columns: dict[str, pa.Array | pa.ChunkedArray] = {
            "status": raw.column("status").cast(pa.int32()),
            "snapshot_id": raw.column("snapshot_id").cast(pa.int64()),
            "sequence_number": raw.column("sequence_number").cast(pa.int64()),
            "file_sequence_number": raw.column("file_sequence_number").cast(pa.int64()),
            "data_file": data_file,
        }
        if self._table.metadata.format_version >= 4:
            # v4: the root or leaf manifest listing the entry (docs/v4-layout.md#inspect)
            columns["manifest_path"] = raw.column("manifest_path").cast(pa.string())
        return pa.table(columns)

    def _files(self, raw: pa.Table) -> pa.Table:
        raw = _keep(raw, _live(raw))
        data_file = _data_file(self._table.metadata, raw)
        return pa.Table.from_arrays(data_file.flatten(),
                                    names=[f.name for f in data_file.type])


# --------------------------------------------------------------------------- manifests


def _manifest_rows(md: TableMetadata, files: Sequence[ManifestFile]) -> pa.Table:
    """The ``manifests`` table of manifest-list entries (few rows: one per manifest)."""
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
        return "null"  # no type to read the bound with: the reference shows "null"
    value = from_bytes(result_type, raw)
    field = spec.fields[i]
    source = schema.field_by_id(field.source_ids[0])
    if source is None:
        return to_human(result_type, value)
    return field.transform.to_human_string(source.field_type, value)


# --------------------------------------------------------------------------- entries and files


def _combined(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def _live(raw: pa.Table) -> pa.Array:
    """Entries that are not DELETED (spec: Manifests, ``status``)."""
    return pc.not_equal(raw.column("status"), pa.scalar(int(EntryStatus.DELETED), pa.int32()))


def _keep(raw: pa.Table, mask: pa.Array | pa.ChunkedArray) -> pa.Table:
    """``raw`` filtered by ``mask`` (no copy when every row is kept)."""
    if raw.num_rows == 0 or pc.all(mask).as_py():
        return raw
    return raw.filter(mask)


def _union_partition_fields(md: TableMetadata) -> dict[int, NestedField]:
    """The reference's ``Partitioning.partitionType``: the partition fields of every spec
    whose source column is in the current schema, by field id, named as in the newest spec
    that has them and typed as in the newest spec where they are not ``void`` (v1 tables keep
    dropped fields as ``void``, typed like their source)."""
    wanted: dict[int, NestedField] = {}
    void_typed: set[int] = set()
    for spec in sorted(md.partition_specs, key=lambda s: s.spec_id, reverse=True):
        for pf, f in zip(spec.fields, spec.partition_type(md.schema).fields, strict=True):
            if md.schema.field_by_id(pf.source_ids[0]) is None:
                continue
            old = wanted.get(f.field_id)
            if old is None:
                wanted[f.field_id] = f
                if pf.transform.is_void:
                    void_typed.add(f.field_id)
            elif f.field_id in void_typed and not pf.transform.is_void:
                wanted[f.field_id] = NestedField(f.field_id, old.name, f.field_type,
                                                 required=False)
                void_typed.discard(f.field_id)
    return dict(sorted(wanted.items()))


def _table_partition(md: TableMetadata, part: pa.Array | None,
                     n: int) -> pa.StructArray | None:
    """``part`` widened to the union of every spec's partition fields, by partition field id
    (None when the table has never been partitioned)."""
    wanted = _union_partition_fields(md)
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
        target = to_arrow_type(f.field_type)
        child = own.get(fid)
        if child is None or (child.type != target and child.null_count == len(child)):
            child = pa.nulls(n, target)  # absent, or only nulls of a v1 void field
        elif child.type != target:
            # Manifests of several specs were unified to a wider type (a v1 void field is
            # typed like its source): back to the partition type, when the values fit.
            with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
                child = child.cast(target)
        arrays.append(child)
        fields.append(pa.field(f.name, child.type, metadata={FIELD_ID_KEY: str(fid)}))
    return pa.StructArray.from_arrays(arrays, fields=fields)


def _data_file(md: TableMetadata, raw: pa.Table) -> pa.StructArray:
    """The entries' ``data_file`` structs in the reference layout, ``spec_id`` filled in."""
    arr = _combined(raw.column("data_file"))
    assert isinstance(arr, pa.StructArray)
    n = len(arr)
    have = {arr.type.field(i).name: i for i in range(arr.type.num_fields)}
    children = arr.flatten()
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for name, t in _DATA_FILE_FIELDS:
        if name == "spec_id":
            spec_ids = _combined(raw.column("partition_spec_id")).cast(pa.int32())
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


# --------------------------------------------------------------------------- partitions

_MIN_TS = -(1 << 63)


def _partitions_table(md: TableMetadata, raw: pa.Table) -> pa.Table:
    """Live entries aggregated per union partition (vectorized group-by)."""
    n = raw.num_rows
    data_file = _combined(raw.column("data_file"))
    assert isinstance(data_file, pa.StructArray)
    ptype = data_file.type
    pidx = ptype.get_field_index("partition")
    part = _table_partition(md, data_file.field(pidx) if pidx >= 0 else None, n)
    content = _combined(pc.struct_field(data_file, "content"))
    records = _combined(pc.struct_field(data_file, "record_count")).cast(pa.int64())
    if ptype.get_field_index("file_size_in_bytes") >= 0:
        sizes = _combined(pc.struct_field(data_file, "file_size_in_bytes")).cast(pa.int64())
    else:
        sizes = pa.nulls(n, pa.int64())
    zero = pa.scalar(0, pa.int64())

    def of(kind: FileContent, values: pa.Array) -> pa.Array:
        mask = pc.fill_null(pc.equal(content, pa.scalar(int(kind), pa.int32())), False)
        return pc.if_else(mask, pc.fill_null(values, 0), zero)

    ones = pa.array(np.ones(n, dtype=np.int64))
    # Commit time of each entry's snapshot (null when expired from the metadata).
    snaps = md.snapshots
    at = pc.index_in(_combined(raw.column("snapshot_id")).cast(pa.int64()),
                     value_set=pa.array([s.snapshot_id for s in snaps], pa.int64()))
    ts = pa.array([_ts(s.timestamp_ms) for s in snaps], pa.int64()).take(at)
    ts_sid = pc.if_else(pc.is_valid(ts), _combined(raw.column("snapshot_id")).cast(pa.int64()),
                        pa.scalar(None, pa.int64()))
    spec_ids = _combined(raw.column("partition_spec_id")).cast(pa.int32())
    keys: list[str] = []
    columns: dict[str, pa.Array] = {}
    if part is None:
        keys.append("_all")
        columns["_all"] = pa.array(np.zeros(n, dtype=np.int8))
    else:
        # As the reference's partition comparator: the same values under specs with a
        # different number of fields are different partitions.
        specs = md.partition_specs
        union = _union_partition_fields(md)
        at_spec = pc.index_in(spec_ids, value_set=pa.array([s.spec_id for s in specs],
                                                           pa.int32()))
        counts = [sum(f.field_id in union for f in s.fields) for s in specs]
        keys.append("_fields")
        columns["_fields"] = pa.array(counts, pa.int32()).take(at_spec)
        for i, child in enumerate(part.flatten()):
            keys.append(f"_k{i}")
            columns[f"_k{i}"] = child
    columns.update({
        "record_count": of(FileContent.DATA, records),
        "file_count": of(FileContent.DATA, ones),
        "total_data_file_size_in_bytes": of(FileContent.DATA, sizes),
        "position_delete_record_count": of(FileContent.POSITION_DELETES, records),
        "position_delete_file_count": of(FileContent.POSITION_DELETES, ones),
        "equality_delete_record_count": of(FileContent.EQUALITY_DELETES, records),
        "equality_delete_file_count": of(FileContent.EQUALITY_DELETES, ones),
        # As the reference (1.10): only an entry of a snapshot still in the metadata sets the
        # partition's spec id; a partition with none keeps 0.
        "ts": ts, "ts_sid": ts_sid,
        "spec_id": pc.if_else(pc.is_valid(ts), spec_ids, pa.scalar(None, pa.int32())),
        "_order": pc.fill_null(ts, pa.scalar(_MIN_TS, pa.int64())),
    })
    # The newest entry first: it gives last_updated_* and the partition's spec id.
    table = pa.table(columns).sort_by([("_order", "descending"), ("spec_id", "descending")])
    sums = ["record_count", "file_count", "total_data_file_size_in_bytes",
            "position_delete_record_count", "position_delete_file_count",
            "equality_delete_record_count", "equality_delete_file_count"]
    grouped = table.group_by(keys, use_threads=False).aggregate(
        [(c, "sum") for c in sums] + [("ts", "first"), ("ts_sid", "first"),
                                      ("spec_id", "first")])
    out: dict[str, pa.Array | pa.ChunkedArray] = {}
    if part is not None:
        fields = list(part.type)
        arrays = [_combined(grouped.column(k)).cast(f.type)
                  for k, f in zip(keys[1:], fields, strict=True)]
        m = grouped.num_rows
        out["partition"] = (pa.StructArray.from_arrays(arrays, fields=fields) if arrays
                            else pa.StructArray.from_buffers(pa.struct([]), m, [None]))
        out["spec_id"] = pc.fill_null(grouped.column("spec_id_first"), 0)
    for c in sums:
        t = pa.int32() if c.endswith("_file_count") or c == "file_count" else pa.int64()
        out[c] = grouped.column(f"{c}_sum").cast(t)
    out["last_updated_at"] = grouped.column("ts_first").cast(_TS)
    out["last_updated_snapshot_id"] = grouped.column("ts_sid_first")
    return pa.table(out)


# --------------------------------------------------------------------------- position deletes


def _position_deletes_table(io: FileIO, md: TableMetadata, raw: pa.Table) -> pa.Table:
    """One row per position of the live position delete files / DVs in ``raw``."""
    data_file = _combined(raw.column("data_file"))
    assert isinstance(data_file, pa.StructArray)
    n = len(data_file)
    names = {data_file.type.field(i).name for i in range(data_file.type.num_fields)}

    def column(name: str, t: pa.DataType) -> list[Any]:
        if name not in names:
            return [None] * n
        values: list[Any] = _combined(pc.struct_field(data_file, name)).cast(t).to_pylist()
        return values

    files = [
        _DeleteFile(path, fmt, count, offset, size, ref)
        for path, fmt, count, offset, size, ref in zip(
            column("file_path", pa.string()), column("file_format", pa.string()),
            column("record_count", pa.int64()), column("content_offset", pa.int64()),
            column("content_size_in_bytes", pa.int64()),
            column("referenced_data_file", pa.string()), strict=True)
    ]
    row_schema = _row_schema(md.schema)
    row_type = pa.struct(list(to_arrow_schema(row_schema)))
    if len(files) > 1:
        with ThreadPoolExecutor(max_workers=min(DEFAULT_MAX_WORKERS, len(files))) as pool:
            pieces = list(pool.map(lambda f: _read_positions(io, f, row_schema, row_type),
                                   files))
    else:
        pieces = [_read_positions(io, f, row_schema, row_type) for f in files]
    counts = np.array([len(p[1]) for p in pieces], dtype=np.int64)
    owner = pa.array(np.repeat(np.arange(n, dtype=np.int64), counts))
    out: dict[str, pa.Array | pa.ChunkedArray] = {
        "file_path": pa.chunked_array([p[0] for p in pieces], pa.string()),
        "pos": pa.chunked_array([p[1] for p in pieces], pa.int64()),
        "row": pa.chunked_array([p[2] for p in pieces], row_type),
    }
    pidx = data_file.type.get_field_index("partition")
    part = _table_partition(md, data_file.field(pidx) if pidx >= 0 else None, n)
    if part is not None:
        out["partition"] = part.take(owner)
    out["spec_id"] = _combined(raw.column("partition_spec_id")).cast(pa.int32()).take(owner)
    out["delete_file_path"] = pa.array([f.path for f in files], pa.string()).take(owner)
    if md.format_version >= 3:
        is_dv = [f.is_dv for f in files]
        out["content_offset"] = pa.array(
            [f.offset if dv else None for f, dv in zip(files, is_dv, strict=True)],
            pa.int64()).take(owner)
        out["content_size_in_bytes"] = pa.array(
            [f.size if dv else None for f, dv in zip(files, is_dv, strict=True)],
            pa.int64()).take(owner)
    return pa.table(out)


def _row_schema(schema: Schema) -> Schema:
    """The current schema's columns that have an Arrow type (the ``row`` column's struct)."""
    kept = []
    for f in schema.fields:
        try:
            to_arrow_type(f.field_type)
        except UnsupportedFeature:
            continue  # e.g. variant: left out of ``row``
        kept.append(f)
    return schema if len(kept) == len(schema.fields) else Schema(*kept,
                                                                   schema_id=schema.schema_id)


class _DeleteFile:
    """What reading one position delete file needs (one object per delete file)."""

    __slots__ = ("count", "format", "offset", "path", "referenced", "size")

    def __init__(self, path: str, fmt: str | None, count: int | None, offset: int | None,
                 size: int | None, referenced: str | None) -> None:
        self.path = path
        self.format = FileFormat.parse(fmt or "parquet")
        self.count = count
        self.offset = offset
        self.size = size
        self.referenced = referenced

    @property
    def is_dv(self) -> bool:
        return self.format == FileFormat.PUFFIN


def _read_positions(io: FileIO, f: _DeleteFile, row_schema: Schema, row_type: pa.StructType
                    ) -> tuple[pa.Array, pa.Array, pa.Array]:
    """(file_path, pos, row) of every position a delete file or deletion vector deletes."""
    if f.is_dv:
        if f.offset is None or f.size is None or f.referenced is None:
            raise CorruptFile("a deletion vector entry needs content_offset, "
                              "content_size_in_bytes and referenced_data_file",
                              file=f.path, field="content_offset", value=f.offset)
        dv = read_deletion_vector(io.new_input(f.path), f.offset, f.size, cardinality=f.count,
                                  file=f.path)
        positions = pa.array(dv.to_numpy(), pa.int64())
        m = len(positions)
        return (pa.array(np.full(m, f.referenced, dtype=object), pa.string()), positions,
                pa.nulls(m, row_type))
    table = _read_delete_file(io, f)
    by_id: dict[int, int] = {}
    for i, field in enumerate(table.schema):
        fid = arrow_field_id(field)
        if fid is not None:
            by_id[fid] = i
    by_name = {name: i for i, name in enumerate(table.column_names)}

    def find(fid: int, name: str) -> int | None:
        return by_id.get(fid, by_name.get(name))

    path_i, pos_i = find(_DELETE_FILE_PATH_ID, "file_path"), find(_DELETE_POS_ID, "pos")
    if path_i is None or pos_i is None:
        raise CorruptFile("a position delete file needs file_path and pos columns",
                          file=f.path, field="file_path")
    paths = _combined(table.column(path_i)).cast(pa.string())
    positions = _combined(table.column(pos_i)).cast(pa.int64())
    row_i = find(_DELETE_ROW_ID, "row")
    rows = pa.nulls(table.num_rows, row_type)
    if row_i is not None:
        rows = _project_rows(_combined(table.column(row_i)), row_schema, row_type, f.path)
    return paths, positions, rows


def _read_delete_file(io: FileIO, f: _DeleteFile) -> pa.Table:
    """A position delete file's rows (Parquet, ORC or Avro), with field ids where it has them."""
    try:
        if f.format == FileFormat.AVRO:
            return read_avro_file(io.new_input(f.path))
        if f.format == FileFormat.ORC:
            return read_orc_file(io.new_input(f.path))
        if f.format == FileFormat.PARQUET:
            with io.new_input(f.path).open() as stream:
                return pq.ParquetFile(stream).read()
    except (pa.ArrowInvalid, OSError) as e:
        if isinstance(e, IcebergError):
            raise
        raise CorruptFile(f"cannot read position delete file: {e}", file=f.path) from None
    raise UnsupportedFeature(f"reading {f.format.value} position delete files is not supported",
                             file=f.path, field="file_format", value=f.format.value)


def _project_rows(rows: pa.Array, schema: Schema, row_type: pa.StructType,
                  path: str) -> pa.Array:
    """A delete file's ``row`` structs projected by field id to the table's current schema."""
    if not isinstance(rows, pa.StructArray) or not any(
            arrow_field_id(rows.type.field(i)) is not None for i in range(rows.type.num_fields)):
        return pa.nulls(len(rows), row_type)  # no ids to project by
    children = pa.Table.from_arrays(rows.flatten(), schema=pa.schema(list(rows.type)))
    projected = project_table(children, schema, file=path)
    mask = rows.is_null() if rows.null_count else None
    arrays = [_combined(c) for c in projected.columns]
    return pa.StructArray.from_arrays(arrays, fields=list(row_type), mask=mask)
