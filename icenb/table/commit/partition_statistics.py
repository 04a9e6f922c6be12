"""Partition statistics files: compute them for a snapshot, write them, register them, read them.

Spec: "Partition Statistics" and "Partition Statistics File". One row per (spec id, partition
tuple) of a snapshot, with the partition tuple in the table's unified partition type (every
partition field of every spec, ordered by field id); rows sorted by partition ascending with
nulls first; file registered in ``partition-statistics`` of the table metadata.

As Iceberg Java 1.10's ``PartitionStatsHandler.computeAndWriteStatsFile`` (a full compute over
every manifest of the snapshot's manifest list):

* a live (ADDED / EXISTING) entry adds its counts to its partition: data files to
  ``data_record_count``, ``data_file_count``, ``total_data_file_size_in_bytes``; position
  delete files to ``position_delete_record_count`` and ``position_delete_file_count``, except
  deletion vectors (Puffin, v3), which count in ``dv_count``; equality delete files to the
  ``equality_delete_*`` columns;
* every entry, DELETED ones too, makes its snapshot (the entry's ``snapshot_id``, when that
  snapshot is still in the metadata) a candidate for ``last_updated_at`` /
  ``last_updated_snapshot_id``: the latest by timestamp wins (ties: the higher sequence number);
* the file is Parquet, named ``partition-stats-<snapshot-id>-<uuid>.parquet`` in the metadata
  directory, with the field ids and required/optional columns of the spec (v3 adds
  ``dv_count``, field 13, and makes the delete counts required, as Java).

Decisions where the spec or Java 1.10 is silent or differs:

* ``total_record_count`` ("accurate count ... after applying the delete files") is filled only
  when metadata makes it exact: no equality deletes and no position delete files in the
  partition (no deletes at all, or deletion vectors only, whose cardinalities are exact):
  ``data_record_count - position_delete_record_count``. Otherwise null (unknown). Java 1.10
  always leaves it null; later Java versions fill it by the same rule.
* Rows with the same partition tuple but different spec ids are ordered by spec id.
* A snapshot without any file gives a file with no rows (Java writes none and returns null).
* An unpartitioned table (no partition field in any spec) is refused, as Java does.
* Statistics files are always Parquet, whatever ``write.format.default`` says (the spec allows
  any data file format; Java follows the table's default format).
"""

from __future__ import annotations

import contextlib
import io as _bytes_io
import uuid
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icenb.errors import (
    CorruptFile,
    IcebergError,
    NoSuchSnapshot,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.avro import FIELD_ID_KEY, read_avro_tables
from icenb.io.file_io import FileIO, join_location
from icenb.io.manifest_reader import ManifestCache, read_manifest_entries, read_manifest_list
from icenb.spec.arrow_schema import arrow_field_id, to_arrow_type
from icenb.spec.manifest import EntryStatus, FileContent
from icenb.spec.partition_spec import unified_partition_type
from icenb.spec.properties import PARQUET_COMPRESSION
from icenb.spec.schema import Schema, schema_to_json
from icenb.spec.snapshot import PartitionStatisticsFile
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.table_updates import SetPartitionStatistics
from icenb.spec.types import (
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
)
from icenb.table.commit.producer import metadata_dir
from icenb.table.scan.v4_planning import snapshot_entries

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = [
    "PARTITION_STATS_COLUMNS",
    "compute_partition_stats",
    "partition_stats_schema",
    "read_partition_stats",
    "stats_file_location",
    "write_partition_stats",
]

#: Column names of a partition statistics file by field id (spec: "Partition Statistics File").
PARTITION_STATS_COLUMNS: dict[int, str] = {
    1: "partition",
    2: "spec_id",
    3: "data_record_count",
    4: "data_file_count",
    5: "total_data_file_size_in_bytes",
    6: "position_delete_record_count",
    7: "position_delete_file_count",
    8: "equality_delete_record_count",
    9: "equality_delete_file_count",
    10: "total_record_count",
    11: "last_updated_at",
    12: "last_updated_snapshot_id",
    13: "dv_count",
}

_LONG_COUNTS = (3, 5, 6, 8, 10, 11, 12)


def _column(field_id: int, required: bool, **defaults: Any) -> NestedField:
    t: IcebergType = LongType() if field_id in _LONG_COUNTS else IntegerType()
    return NestedField(field_id, PARTITION_STATS_COLUMNS[field_id], t, required, **defaults)


def partition_stats_schema(partition_type: StructType, format_version: int) -> Schema:
    """The schema of a partition statistics file for a unified partition type (spec: "Partition
    Statistics File"; v3, as Java: delete counts required and ``dv_count`` (13) added; the
    experimental v4 uses v3's, docs/v4-layout.md#inspect)."""
    if not partition_type.fields:
        raise UnsupportedFeature("partition statistics need a partitioned table",
                                 field="partition-specs")
    if format_version not in (1, 2, 3, 4):
        raise ValidationError("unsupported format version for partition statistics",
                              field="format-version", value=format_version)
    v3 = format_version >= 3
    return Schema(
        NestedField(1, "partition", partition_type, True),
        _column(2, True), _column(3, True), _column(4, True), _column(5, True),
        _column(6, v3), _column(7, v3), _column(8, v3), _column(9, v3),
        _column(10, False), _column(11, False), _column(12, False),
        *([_column(13, True, initial_default=0, write_default=0)] if v3 else []),
    )


# --------------------------------------------------------------------------- compute


def _partition_children(entries: pa.Table) -> list[tuple[int, pa.Array]]:
    """(field id, values) of every partition field present in the entries."""
    data_file = entries.column("data_file").combine_chunks()
    df_type = data_file.type
    idx = df_type.get_field_index("partition")
    if idx < 0:
        return []
    partition = data_file.field(idx)
    out = []
    for i, f in enumerate(partition.type):
        fid = arrow_field_id(f)
        if fid is not None:
            out.append((fid, partition.field(i)))
    return out


def _snapshot_order(metadata: TableMetadata) -> dict[int, tuple[int, int]]:
    """Snapshot id -> (timestamp ms, sequence number): the "latest" order of snapshots."""
    return {s.snapshot_id: (s.timestamp_ms, s.sequence_number) for s in metadata.snapshots}


def _sort_key(value: Any, t: IcebergType) -> tuple[Any, ...]:
    """Ascending, nulls first, as Java's ``Comparators.forType`` (strings by UTF-16 units,
    floats with -0.0 < 0.0 < NaN)."""
    if value is None:
        return (0,)
    if isinstance(t, StringType):
        return (1, value.encode("utf-16-be"))
    if isinstance(t, (FloatType, DoubleType)):
        return (1, value != value, value, not str(value).startswith("-"))
    if isinstance(t, UUIDType):
        return (1, value.bytes if isinstance(value, uuid.UUID) else bytes(value))
    return (1, value)


def _arrow_partition_type(t: StructType) -> pa.StructType:
    fields = []
    for f in t.fields:
        ftype = pa.uuid() if isinstance(f.field_type, UUIDType) else to_arrow_type(f.field_type)
        fields.append(pa.field(f.name, ftype, nullable=True,
                               metadata={FIELD_ID_KEY: str(f.field_id).encode()}))
    return pa.struct(fields)


def _arrow_schema(schema: Schema) -> pa.Schema:
    fields = []
    for f in schema.fields:
        if isinstance(f.field_type, StructType):
            ftype: pa.DataType = _arrow_partition_type(f.field_type)
        else:
            ftype = to_arrow_type(f.field_type)
        fields.append(pa.field(f.name, ftype, nullable=not f.required,
                               metadata={FIELD_ID_KEY: str(f.field_id).encode()}))
    return pa.schema(fields, metadata={"iceberg.schema": _schema_json(schema)})


def _schema_json(schema: Schema) -> str:
    import json

    return json.dumps(schema_to_json(schema), separators=(",", ":"))


def _stats_snapshot(metadata: TableMetadata, snapshot_id: int | None) -> int:
    if snapshot_id is None:
        current = metadata.current_snapshot()
        if current is None:
            raise NoSuchSnapshot("the table has no current snapshot to compute statistics for",
                                 file=metadata.source_file, field="current-snapshot-id")
        return current.snapshot_id
    if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
        raise ValidationError("a snapshot id is an int", field="snapshot_id", value=snapshot_id)
    if metadata.snapshot_by_id(snapshot_id) is None:
        raise NoSuchSnapshot("no snapshot with this id in the table metadata",
                             file=metadata.source_file, field="snapshot-id", value=snapshot_id)
    return snapshot_id


def compute_partition_stats(io: FileIO, metadata: TableMetadata, snapshot_id: int | None = None,
                            *, cache: ManifestCache | None = None) -> pa.Table:
    """The partition statistics rows of a snapshot (default: the current one), sorted, as an
    Arrow table in the file's schema (see the module docstring for the rules)."""
    sid = _stats_snapshot(metadata, snapshot_id)
    partition_type = unified_partition_type(metadata.partition_specs, metadata.schema)
    schema = partition_stats_schema(partition_type, metadata.format_version)
    target = _arrow_schema(schema)
    snapshot = metadata.snapshot_by_id(sid)
    assert snapshot is not None
    parts = [target.empty_table()]
    if snapshot.root_manifest is not None:
        # v4: the root's and live leaves' entries, manifest DVs as DELETED
        # (docs/v4-layout.md#inspect)
        every = snapshot_entries(io, metadata, snapshot, cache=cache).entries
        spec_ids = every.column("partition_spec_id")
        for spec_id in sorted(set(spec_ids.to_pylist())):
            entries = every.filter(pc.equal(spec_ids, pa.scalar(spec_id, pa.int32())))
            parts.append(_aggregate(entries, metadata, partition_type, target))
        table = pa.concat_tables(parts)
        return table.take(pa.array(_sorted_indices(table, partition_type), pa.int64()))
    manifests = read_manifest_list(io, snapshot, metadata.format_version)
    by_spec: dict[int, list[Any]] = {}
    for m in manifests:
        by_spec.setdefault(m.partition_spec_id, []).append(m)
    for spec_id in sorted(by_spec):
        # One spec at a time: its manifests share one partition struct (a v1 void field may
        # have another type than the same field id in other specs).
        entries = read_manifest_entries(
            io, by_spec[spec_id], metadata.format_version, cache=cache,
            columns=["data_file.content", "data_file.file_format", "data_file.partition",
                     "data_file.record_count", "data_file.file_size_in_bytes"])
        if entries.num_rows:
            parts.append(_aggregate(entries, metadata, partition_type, target))
    table = pa.concat_tables(parts)
    return table.take(pa.array(_sorted_indices(table, partition_type), pa.int64()))


def _aggregate(entries: pa.Table, metadata: TableMetadata, partition_type: StructType,
               target: pa.Schema) -> pa.Table:
    """Group the entries by (spec id, partition) and build the statistics rows."""
    data_file = entries.column("data_file").combine_chunks()
    content = data_file.field("content")
    fmt = pc.utf8_upper(data_file.field("file_format"))
    records = data_file.field("record_count")
    sizes = data_file.field("file_size_in_bytes")
    live = pc.not_equal(entries.column("status").combine_chunks(),
                        pa.scalar(int(EntryStatus.DELETED), pa.int32()))
    is_data = pc.and_(live, pc.equal(content, int(FileContent.DATA)))
    is_posdel = pc.and_(live, pc.equal(content, int(FileContent.POSITION_DELETES)))
    is_dv = pc.and_(is_posdel, pc.equal(fmt, "PUFFIN"))
    is_pos_file = pc.and_(is_posdel, pc.invert(is_dv))
    is_eq = pc.and_(live, pc.equal(content, int(FileContent.EQUALITY_DELETES)))
    zero = pa.scalar(0, pa.int64())

    def when(mask: pa.Array, values: pa.Array) -> pa.Array:
        return pc.if_else(pc.fill_null(mask, False), values, zero)

    def count(mask: pa.Array) -> pa.Array:
        return pc.fill_null(mask, False).cast(pa.int64())

    children = _partition_children(entries)
    keys = [f"k{i}" for i in range(len(children))]
    columns: dict[str, pa.Array] = {
        "spec_id": entries.column("partition_spec_id").combine_chunks(),
        **{k: arr for k, (_, arr) in zip(keys, children, strict=True)},
        "data_records": when(is_data, records), "data_files": count(is_data),
        "data_size": when(is_data, sizes),
        "pos_records": when(is_posdel, records), "pos_files": count(is_pos_file),
        "dvs": count(is_dv),
        "eq_records": when(is_eq, records), "eq_files": count(is_eq),
        "snapshot_id": entries.column("snapshot_id").combine_chunks(),
    }
    grouped = pa.table(columns).group_by(["spec_id", *keys]).aggregate([
        ("data_records", "sum"), ("data_files", "sum"), ("data_size", "sum"),
        ("pos_records", "sum"), ("pos_files", "sum"), ("dvs", "sum"),
        ("eq_records", "sum"), ("eq_files", "sum"), ("snapshot_id", "distinct"),
    ])
    n = grouped.num_rows

    # The partition column in the unified type: a key column when the field was seen.
    by_id = {fid: grouped.column(k).combine_chunks() for k, (fid, _) in zip(keys, children,
                                                                            strict=True)}
    ptype = target.field("partition").type
    part_arrays = []
    for i, f in enumerate(partition_type.fields):
        arr = by_id.get(f.field_id)
        want = ptype.field(i).type
        part_arrays.append(pa.nulls(n, want) if arr is None else arr.cast(want))
    partition = pa.StructArray.from_arrays(part_arrays, fields=list(ptype))

    def ints(name: str, t: pa.DataType) -> pa.Array:
        return pc.fill_null(grouped.column(name).combine_chunks(), 0).cast(t)

    order = _snapshot_order(metadata)
    updated_at: list[int | None] = []
    updated_id: list[int | None] = []
    for ids in grouped.column("snapshot_id_distinct").to_pylist():
        known = [s for s in ids if s is not None and s in order]
        if not known:
            updated_at.append(None)
            updated_id.append(None)
            continue
        latest = max(known, key=lambda s: order[s])
        updated_at.append(order[latest][0])
        updated_id.append(latest)

    data_records = ints("data_records_sum", pa.int64())
    pos_records = ints("pos_records_sum", pa.int64())
    pos_files = ints("pos_files_sum", pa.int32())
    eq_records = ints("eq_records_sum", pa.int64())
    exact = pc.and_(pc.equal(eq_records, 0), pc.equal(pos_files, 0))
    total = pc.if_else(exact, pc.max_element_wise(pc.subtract(data_records, pos_records), 0),
                       pa.scalar(None, pa.int64()))
    out: dict[str, pa.Array] = {
        "partition": partition,
        "spec_id": grouped.column("spec_id").combine_chunks().cast(pa.int32()),
        "data_record_count": data_records,
        "data_file_count": ints("data_files_sum", pa.int32()),
        "total_data_file_size_in_bytes": ints("data_size_sum", pa.int64()),
        "position_delete_record_count": pos_records,
        "position_delete_file_count": pos_files,
        "equality_delete_record_count": eq_records,
        "equality_delete_file_count": ints("eq_files_sum", pa.int32()),
        "total_record_count": total,
        "last_updated_at": pa.array(updated_at, pa.int64()),
        "last_updated_snapshot_id": pa.array(updated_id, pa.int64()),
        "dv_count": ints("dvs_sum", pa.int32()),
    }
    return pa.Table.from_arrays([out[f.name] for f in target], schema=target)


def _sorted_indices(table: pa.Table, partition_type: StructType) -> list[int]:
    """Row order: partition ascending, nulls first (spec), then spec id."""
    types = [f.field_type for f in partition_type.fields]
    names = [f.name for f in partition_type.fields]
    parts = table.column("partition").to_pylist()
    specs = table.column("spec_id").to_pylist()

    def key(i: int) -> tuple[Any, ...]:
        row = parts[i]
        return (tuple(_sort_key(row[name], t) for name, t in zip(names, types, strict=True)),
                specs[i])

    return sorted(range(table.num_rows), key=key)


# --------------------------------------------------------------------------- files


def stats_file_location(metadata: TableMetadata, snapshot_id: int) -> str:
    """A new file name in the metadata directory, as Java's: ``partition-stats-<id>-<uuid>``."""
    return join_location(metadata_dir(metadata),
                         f"partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet")


def _codec(metadata: TableMetadata) -> str:
    raw = metadata.properties.get(PARQUET_COMPRESSION, "zstd").strip().lower()
    codecs = {"zstd": "zstd", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4",
              "uncompressed": "none", "none": "none", "brotli": "brotli"}
    return codecs.get(raw, "zstd")


def write_partition_stats(io: FileIO, metadata: TableMetadata, snapshot_id: int,
                          stats: pa.Table, *, location: str | None = None
                          ) -> PartitionStatisticsFile:
    """Write ``stats`` (rows from :func:`compute_partition_stats`) as a Parquet partition
    statistics file; the file's metadata entry (not yet registered)."""
    location = location or stats_file_location(metadata, snapshot_id)
    buffer = _bytes_io.BytesIO()
    schema_json = (stats.schema.metadata or {}).get(b"iceberg.schema")
    with pq.ParquetWriter(buffer, stats.schema.remove_metadata(), compression=_codec(metadata),
                          store_schema=False, use_compliant_nested_type=True, version="2.6",
                          store_decimal_as_integer=True) as writer:
        writer.write_table(stats.replace_schema_metadata(None))
        if schema_json is not None:
            writer.add_key_value_metadata({"iceberg.schema": schema_json.decode()})
    data = buffer.getvalue()
    io.new_output(location).create(data)
    return PartitionStatisticsFile(snapshot_id, location, len(data))


def read_partition_stats(io: FileIO, file: PartitionStatisticsFile | str) -> pa.Table:
    """The rows of a partition statistics file (Parquet, or Avro as Java writes for tables whose
    default format is Avro), columns named by field id as in the spec; absent optional columns
    (``dv_count`` before v3, ...) are left out."""
    location = file if isinstance(file, str) else file.statistics_path
    try:
        if location.lower().endswith(".avro"):  # Java follows write.format.default
            table = read_avro_tables([(location, io.new_input(location).read())])[0]
        else:
            with io.new_input(location).open() as f:
                table = pq.read_table(f)
    except IcebergError:
        raise
    except (pa.ArrowInvalid, OSError) as e:
        raise CorruptFile(f"not a readable partition statistics file: {e}",
                          file=location) from None
    names = []
    for f in table.schema:
        fid = arrow_field_id(f)
        names.append(PARTITION_STATS_COLUMNS.get(fid, f.name) if fid is not None else f.name)
    table = table.rename_columns(names)
    missing = [PARTITION_STATS_COLUMNS[i] for i in range(1, 6)
               if PARTITION_STATS_COLUMNS[i] not in names]
    if missing:
        raise CorruptFile("partition statistics file lacks required columns",
                          file=location, field=missing[0])
    return table


# --------------------------------------------------------------------------- table


def compute_and_register(table: Table, snapshot_id: int | None = None, *,
                         register: bool = True) -> PartitionStatisticsFile:
    """Compute, write and (``register``) commit the partition statistics of a snapshot of
    ``table`` (default: its current snapshot). A registered file for that snapshot is returned
    as is (as Java); a failed commit deletes the written file and leaves the table as it was."""
    from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement

    if register:
        table.operations.commit_target()
    metadata = table.metadata
    sid = _stats_snapshot(metadata, snapshot_id)
    if register:
        for existing in metadata.partition_statistics:
            if existing.snapshot_id == sid:
                return existing
    stats = compute_partition_stats(table.io, metadata, sid)
    written = write_partition_stats(table.io, metadata, sid, stats)
    if not register:
        return written
    update = SetPartitionStatistics(written)
    try:
        commit_change(table, lambda md: MetadataChange([update], uuid_requirement(md)))
    except BaseException:
        with contextlib.suppress(IcebergError):
            table.io.delete(written.statistics_path, missing_ok=True)
        raise
    return written
