"""Reading scan tasks into Arrow, checked row for row against Iceberg Java (Spark 3.5) reads.

Spec: "Column Projection", "Row-level deletes", "Scan Planning" (residuals).
"""

from __future__ import annotations

import decimal
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import IcebergError, NotFound, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata
from icenb.spec.arrow_schema import FIELD_ID_KEY, arrow_field_id, to_arrow_schema
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.manifest import DataFile, FileContent, FileFormat, FileScanTask
from icenb.spec.partition_spec import UNPARTITIONED, PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.transforms import IdentityTransform
from icenb.spec.types import (
    DecimalType,
    DoubleType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    NestedType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestamptzNanoType,
    TimeType,
    UnknownType,
    VariantType,
)
from icenb.table import plan_files
from icenb.table.scan import Scan
from icenb.table.scan.read import read_plan, read_task
from icenb.table.table import Table
from tests.reference.java_read import normalize
from tests.reference_fixtures import JavaTables, run_reference_batch

# Every table of the Java corpus is compared with Java, at every snapshot and every ref; these
# must be among them (deletes of each kind, schema and partition evolution, a v1 table upgraded
# to v2 and v3, every Spark type), so that a corpus change cannot silently drop a case.
COMPARED_TABLES = (
    "db.v2_merge_on_read",
    "db.v3_deletion_vectors",
    "db.java_v2_equality_deletes",
    "db.v2_schema_evolution",
    "db.v3_schema_evolution",
    "db.v2_partition_evolution",
    "db.v1_upgrade",
    "db.v2_all_types",
)

#: Metadata columns read with every snapshot and ref (besides the table's columns), and for v3
#: tables the row lineage ones. (Iceberg 1.10's Spark 3.5 exposes the lineage columns for every
#: table, null without row lineage, except that its ORC and Avro readers, unlike its Parquet
#: reader, fill ``_last_updated_sequence_number`` with the data sequence number in v2 tables;
#: icenb gives null, as for Parquet.) ``_deleted`` changes what is read: compared separately.
METADATA_COLUMNS = ("_file", "_pos", "_spec_id", "_partition")
LINEAGE_COLUMNS = ("_row_id", "_last_updated_sequence_number")

#: Tables whose time travel by timestamp is compared with Java (as-of-timestamp): a moment
#: between each two consecutive snapshot-log entries.
AS_OF_TABLES = ("db.v2_refs", "db.v2_schema_evolution", "db.v2_rollback_wap")

#: Metadata columns alone, with a filter and with ``_deleted``, on tables with each delete kind
#: (position deletes, deletion vectors, equality deletes; ORC and Avro delete files).
METADATA_CASES: tuple[tuple[str, tuple[str, ...], str | None], ...] = tuple(
    (name, columns, where)
    for name in ("db.v2_merge_on_read", "db.v3_deletion_vectors", "db.java_v2_equality_deletes",
                 "db.v2_upgrade", "db.v2_orc", "db.v2_avro")
    for columns, where in (
        (("_pos", "_file"), None),
        (("_deleted", "_pos", "_spec_id", "_row_id"), None),
        (("_file", "_pos", "_last_updated_sequence_number"), "id > 3"),
        (("_deleted", "_pos"), "id > 3"),
    )
    if where is None or not name.endswith(("_orc", "_avro"))  # no id column there
)


def _load(java_tables: JavaTables, name: str) -> TableMetadata:
    return load_table_metadata(str(java_tables.location(name)), FileIO())


def _spark_shaped(value: Any, t: pa.DataType) -> Any:
    """A pyarrow Python value in pyspark's shapes: structs as tuples, maps as dicts."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        return tuple(_spark_shaped(value[t.field(i).name], t.field(i).type)
                     for i in range(t.num_fields))
    if pa.types.is_map(t):
        return {_freeze(_spark_shaped(k, t.key_type)): _spark_shaped(v, t.item_type)
                for k, v in value}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_spark_shaped(v, t.value_type) for v in value]
    return value


def _freeze(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _icenb_rows(table: pa.Table) -> list[str]:
    rows = []
    types = [f.type for f in table.schema]
    for row in table.to_pylist():
        cells = [normalize(_spark_shaped(v, t)) for v, t in zip(row.values(), types, strict=True)]
        rows.append(json.dumps(cells, sort_keys=True))
    return sorted(rows)


def run_java_read(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each request's rows as read by Iceberg Java (one JVM for the batch); requests as in
    tests/reference/java_read.py ({location, snapshot_id} and more)."""
    return run_reference_batch("java_read.py", requests)


@dataclass(frozen=True)
class ReadCase:
    """One read done by both Java and icenb: ``request`` for java_read.py, ``read`` for icenb
    (a callable, so that a failing read is reported per case)."""

    table: str
    label: str
    kind: str  # snapshot, branch, tag, as-of, expired, metadata
    request: dict[str, Any]
    read: Callable[[], pa.Table]
    spark_unreadable: tuple[str, ...] = ()  # columns of types Spark 3.5 cannot represent

    def __str__(self) -> str:
        return f"{self.table} {self.label}"


def _java_unreadable(table: Table, scan: Scan) -> set[str]:
    """Columns of the scan's schema that Iceberg Java (1.10, Spark 3.5) fails to read: identity
    partition sources that the table's current schema no longer has (a snapshot from before a
    REPLACE TABLE). Java converts the partition constant with the current schema and fails with
    a ClassCastException (String to UTF8String)."""
    current = table.schema.field_ids()
    specs = table.metadata.partition_specs
    gone = {pf.source_ids[0] for spec in specs for pf in spec.fields
            if isinstance(pf.transform, IdentityTransform) and pf.source_ids[0] not in current}
    return {f.name for f in scan.table_schema.fields if f.field_id in gone}


def _columns(table: Table, scan: Scan) -> list[str]:
    """The columns compared for a scan: the table's (all but those Java cannot read), then the
    metadata columns."""
    meta = [*METADATA_COLUMNS, *(LINEAGE_COLUMNS if table.format_version >= 3 else ())]
    skip = _java_unreadable(table, scan)
    return [f.name for f in scan.table_schema.fields if f.name not in skip] + meta


#: Types Spark 3.5 has no type for: Iceberg Java's Spark integration fails to load such a
#: table at all ("Spark does not support time fields", "Cannot convert unknown type").
SPARK_UNSUPPORTED = (TimeType, TimestampNanoType, TimestamptzNanoType, VariantType,
                     GeometryType, GeographyType, UnknownType)


def _spark_unsupported(t: IcebergType) -> bool:
    if isinstance(t, SPARK_UNSUPPORTED):
        return True
    return isinstance(t, NestedType) and any(_spark_unsupported(f.field_type) for f in t.fields)


def _case(name: str, label: str, kind: str, where: dict[str, Any], table: Table, scan: Scan,
          **request: Any) -> ReadCase:
    columns = _columns(table, scan)
    unreadable = tuple(f.name for f in table.schema.fields if _spark_unsupported(f.field_type))
    return ReadCase(name, label, kind, {**where, **request, "columns": columns},
                    lambda: scan.select(*columns).to_arrow(), unreadable)


def _table_cases(java_tables: JavaTables, name: str) -> list[ReadCase]:
    """Every snapshot and every ref of a table, time travel by timestamp, expired snapshots."""
    entry = next(e for e in java_tables.entries("table") if e["name"] == name)
    latest = java_tables.latest(name).path
    # Tables of other catalogs (NNNNN-uuid.metadata.json names) are loaded by metadata file.
    where: dict[str, Any] = {"location": str(java_tables.location(name))} \
        if entry["catalog"] == "hadoop" else {"metadata_file": str(latest)}
    table = icenb.open(latest)
    cases = []
    for snap in table.snapshots:
        sid = snap.snapshot_id
        cases.append(_case(name, f"snapshot {sid}", "snapshot", where, table,
                           table.scan(snapshot_id=sid), snapshot_id=sid))
    for ref_name, ref in sorted(table.refs.items()):
        kind = "branch" if ref.is_branch else "tag"
        cases.append(_case(name, f"{kind} {ref_name}", kind, where, table,
                           table.scan(ref=ref_name), **{kind: ref_name}))
    if name in AS_OF_TABLES:
        for entry_, following in itertools.pairwise(table.history):
            ms = (entry_.timestamp_ms + following.timestamp_ms) // 2
            cases.append(_case(name, f"as of {ms}", "as-of", where, table,
                               table.at(timestamp_ms=ms), as_of_timestamp=ms))
    # Snapshots that older metadata files list but the newest one no longer has (expired).
    current = {s.snapshot_id for s in table.snapshots}
    seen: set[int] = set()
    for f in sorted(java_tables.metadata_files(kind="table"), key=lambda f: f.version):
        if f.name != name:
            continue
        old = icenb.open(f.path)
        for snap in old.snapshots:
            sid = snap.snapshot_id
            if sid in current or sid in seen:
                continue
            seen.add(sid)
            cases.append(ReadCase(name, f"expired snapshot {sid} ({f.path.name})", "expired",
                                  {"metadata_file": str(f.path), "snapshot_id": sid},
                                  lambda t=old, sid=sid: t.scan(snapshot_id=sid).to_arrow()))
    return cases


def _metadata_cases(java_tables: JavaTables) -> list[ReadCase]:
    cases = []
    for name, cols, where in METADATA_CASES:
        table = icenb.open(java_tables.location(name))
        request: dict[str, Any] = {"location": str(java_tables.location(name)),
                                   "columns": list(cols)}
        if where is not None:
            request["filter"] = where
        cases.append(ReadCase(
            name, f"columns {', '.join(cols)} where {where}", "metadata", request,
            lambda t=table, c=cols, w=where: t.scan(filter=w or "true", columns=c).to_arrow()))
    return cases


@pytest.fixture(scope="session")
def java_reads(java_tables: JavaTables) -> list[tuple[ReadCase, dict[str, Any]]]:
    """Every read case with Java's result, read in one JVM."""
    cases = [c for e in java_tables.entries("table") for c in _table_cases(java_tables,
                                                                           e["name"])]
    cases += _metadata_cases(java_tables)
    results = run_java_read([c.request for c in cases])
    return list(zip(cases, results, strict=True))


def _mismatch(case: ReadCase, java: dict[str, Any]) -> str | None:
    """Why icenb's read differs from Java's (None: they agree)."""
    if case.spark_unreadable:
        return None  # see test_tables_spark_cannot_load_are_read_by_icenb
    if not java["ok"]:
        try:
            case.read()
        except NotFound:
            if java.get("error_class", "").endswith("NotFoundException"):
                return None
            return f"{case}: Java failed with {java['error']}, icenb raised NotFound"
        except IcebergError as e:
            return f"{case}: Java failed with {java['error']}; icenb raised {e!r}"
        return f"{case}: Java failed with {java['error']}; icenb read it"
    try:
        table = case.read()
    except IcebergError as e:
        return f"{case}: icenb raised {e!r}; Java read {len(java['rows'])} rows"
    if table.column_names != java["columns"]:
        return f"{case}: columns {table.column_names} != Java's {java['columns']}"
    expected = sorted(json.dumps(r, sort_keys=True) for r in java["rows"])
    got = _icenb_rows(table)
    if got != expected:
        extra = sorted(set(got) - set(expected))[:3]
        missing = sorted(set(expected) - set(got))[:3]
        return (f"{case}: {len(got)} rows vs Java's {len(expected)}; icenb only: {extra}; "
                f"Java only: {missing}")
    return None


def _check(reads: list[tuple[ReadCase, dict[str, Any]]], kinds: set[str]) -> int:
    selected = [(c, j) for c, j in reads if c.kind in kinds]
    problems = [m for c, j in selected if (m := _mismatch(c, j)) is not None]
    assert not problems, "\n".join(problems)
    return len(selected)


def test_every_snapshot_and_ref_of_every_table_reads_as_java_reads_it(
        java_tables: JavaTables, java_reads: list[tuple[ReadCase, dict[str, Any]]]) -> None:
    names = {e["name"] for e in java_tables.entries("table")}
    assert set(COMPARED_TABLES) <= names
    assert {c.table for c, _ in java_reads} == names
    refs = {(c.table, c.label.split()[1]) for c, _ in java_reads if c.kind in ("branch", "tag")}
    assert ("db.v2_refs", "dev") in refs and ("db.v2_refs", "release-1") in refs
    n = _check(java_reads, {"snapshot", "branch", "tag"})
    assert n == sum(len(_load(java_tables, t).snapshots) + len(_load(java_tables, t).refs)
                    for t in names)


def test_tables_spark_cannot_load_are_read_by_icenb(
        java_reads: list[tuple[ReadCase, dict[str, Any]]]) -> None:
    """Tables with a type Spark 3.5 cannot represent: Java's Spark read fails as a whole, so they
    are not compared row for row; icenb reads every snapshot and ref of them."""
    unreadable = [(c, j) for c, j in java_reads if c.spark_unreadable]
    assert {c.table for c, _ in unreadable} >= {"db.java_v2_special_types",
                                                 "db.java_v1_special_types"}
    for case, java in unreadable:
        assert not java["ok"], case
        assert "support" in java["error"] or "convert" in java["error"], java["error"]
        assert case.read().num_rows > 0, case


def test_branch_reads_use_the_current_schema_and_snapshot_reads_their_own(
        java_reads: list[tuple[ReadCase, dict[str, Any]]]) -> None:
    by_label = {(c.table, c.label): j for c, j in java_reads}
    table = "db.v2_schema_evolution"
    md = icenb.open(next(c for c, _ in java_reads if c.table == table).request["location"])
    main = md.refs["main"].snapshot_id
    branch = by_label[(table, "branch main")]["columns"]
    snapshot = by_label[(table, f"snapshot {main}")]["columns"]
    assert branch != snapshot  # so the comparison above tells the two rules apart
    assert branch[:len(md.schema.fields)] == [f.name for f in md.schema.fields]


def test_time_travel_by_timestamp_reads_as_java_reads_it(
        java_reads: list[tuple[ReadCase, dict[str, Any]]]) -> None:
    assert _check(java_reads, {"as-of"}) >= len(AS_OF_TABLES) * 2


def test_expired_snapshots_fail_with_not_found_as_in_java(
        java_reads: list[tuple[ReadCase, dict[str, Any]]]) -> None:
    expired = [(c, j) for c, j in java_reads if c.kind == "expired"]
    assert any(not j["ok"] for _, j in expired)
    assert _check(java_reads, {"expired"}) >= 3


def test_metadata_columns_alone_with_filters_and_deletes_read_as_java_reads_them(
        java_reads: list[tuple[ReadCase, dict[str, Any]]]) -> None:
    marked = [j for c, j in java_reads
              if c.kind == "metadata" and "_deleted" in c.request["columns"] and j["ok"]]
    assert any(row[0] is True for j in marked for row in j["rows"])  # deleted rows shown
    assert _check(java_reads, {"metadata"}) == len(METADATA_CASES)


def test_compared_tables_exercise_every_delete_kind(java_tables: JavaTables) -> None:
    kinds = set()
    for name in COMPARED_TABLES:
        md = _load(java_tables, name)
        for task in plan_files(FileIO(), md).tasks:
            kinds |= {(d.content, d.file_format) for d in task.delete_files}
    assert (FileContent.POSITION_DELETES, FileFormat.PARQUET) in kinds
    assert (FileContent.POSITION_DELETES, FileFormat.PUFFIN) in kinds
    assert (FileContent.EQUALITY_DELETES, FileFormat.PARQUET) in kinds


def test_residual_filter_keeps_matching_rows_only(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_partition_evolution")
    io = FileIO()
    everything = read_plan(io, plan_files(io, md))
    plan = plan_files(io, md, row_filter="n > 2")
    filtered = read_plan(io, plan)
    assert any(t.residual_filter is not True for t in plan.tasks)
    expected = [r for r in everything.to_pylist() if r["n"] is not None and r["n"] > 2]
    assert sorted(map(str, filtered.to_pylist())) == sorted(map(str, expected))
    assert 0 < filtered.num_rows < everything.num_rows


def test_projection_selects_columns_by_id_even_for_deletes(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.java_v2_equality_deletes")
    io = FileIO()
    full = read_plan(io, plan_files(io, md))
    only_v = md.schema.select("v")
    narrow = read_plan(io, plan_files(io, md), only_v)
    assert narrow.column_names == ["v"]
    assert sorted(map(str, narrow.column("v").to_pylist())) == \
        sorted(map(str, full.column("v").to_pylist()))
    assert arrow_field_id(narrow.schema.field("v")) == 3


# --------------------------------------------------------------------------- synthetic files


def _write(path: Path, table: pa.Table) -> str:
    pq.write_table(table, path)
    return str(path)


def _data_file(path: str, rows: int, partition: tuple[Any, ...] = (),
               **kwargs: Any) -> DataFile:
    return DataFile(file_path=path, file_format=FileFormat.PARQUET, partition=partition,
                    record_count=rows, file_size_in_bytes=Path(path).stat().st_size, **kwargs)


def _field(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, metadata={FIELD_ID_KEY: str(fid).encode()})


def test_projection_renames_promotes_reorders_and_fills_missing(tmp_path: Path) -> None:
    file_schema = pa.schema([
        _field("old_a", pa.int32(), 1),
        _field("f", pa.float32(), 2),
        _field("d", pa.decimal128(9, 2), 3),
        _field("s", pa.struct([_field("x", pa.int32(), 11), _field("gone", pa.string(), 12)]),
               4),
        _field("dropped", pa.string(), 5),
    ])
    path = _write(tmp_path / "d.parquet", pa.table({
        "old_a": [1, None], "f": [1.5, 2.0],
        "d": [decimal.Decimal("1.25"), None],
        "s": [{"x": 7, "gone": "g"}, None], "dropped": ["p", "q"],
    }, schema=file_schema))
    schema = Schema(
        NestedField(4, "st", StructType(
            NestedField(13, "added", StringType(), initial_default="dflt"),
            NestedField(11, "x", LongType()))),
        NestedField(3, "d", DecimalType(12, 2)),
        NestedField(1, "a", LongType()),
        NestedField(2, "f", DoubleType()),
        NestedField(6, "new", IntegerType()),
        NestedField(7, "with_default", IntegerType(), initial_default=42),
        NestedField(8, "part", StringType()),
    )
    spec = PartitionSpec(1, (PartitionField((8,), 1000, IdentityTransform(), "part"),))
    task = FileScanTask(schema, spec, _data_file(path, 2, ("p1",), spec_id=1))
    out = read_task(FileIO(), task, schema)
    assert out.schema == to_arrow_schema(schema)
    assert out.to_pylist() == [
        {"st": {"added": "dflt", "x": 7}, "d": decimal.Decimal("1.25"), "a": 1, "f": 1.5,
         "new": None, "with_default": 42, "part": "p1"},
        {"st": None, "d": None, "a": None, "f": 2.0, "new": None, "with_default": 42,
         "part": "p1"},
    ]


def test_lists_and_maps_are_matched_by_element_key_and_value_ids(tmp_path: Path) -> None:
    elem = pa.struct([_field("x", pa.int32(), 21), _field("y", pa.int32(), 22)])
    file_schema = pa.schema([
        _field("l", pa.list_(_field("element", elem, 20)), 1),
        _field("m", pa.map_(_field("key", pa.string(), 30).with_nullable(False),
                            _field("value", pa.float32(), 31)), 2),
    ])
    path = _write(tmp_path / "n.parquet", pa.table({
        "l": [[{"x": 1, "y": 2}], None, []],
        "m": [[("a", 1.5)], [], None],
    }, schema=file_schema))
    schema = Schema(
        NestedField(2, "m", MapType(30, StringType(), 31, DoubleType())),
        NestedField(1, "l", ListType(20, StructType(NestedField(22, "y", LongType()),
                                                    NestedField(23, "z", FloatType())))),
    )
    out = read_task(FileIO(), FileScanTask(schema, UNPARTITIONED, _data_file(path, 3)), schema)
    assert out.to_pylist() == [
        {"m": [("a", 1.5)], "l": [{"y": 2, "z": None}]},
        {"m": [], "l": None},
        {"m": None, "l": []},
    ]


def test_position_deletes_dvs_and_equality_deletes(tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "k", StringType()))
    path = _write(tmp_path / "data.parquet", pa.table(
        {"id": list(range(6)), "k": ["a", None, "b", None, "c", "a"]},
        schema=to_arrow_schema(schema)))
    pos_schema = pa.schema([_field("file_path", pa.string(), 2147483546),
                            _field("pos", pa.int64(), 2147483545)])
    pos_path = _write(tmp_path / "pos.parquet", pa.table(
        {"file_path": [path, "other.parquet", path], "pos": [0, 1, 4]}, schema=pos_schema))
    eq_schema = pa.schema([_field("k", pa.string(), 2)])
    eq_path = _write(tmp_path / "eq.parquet", pa.table({"k": [None, "zz"]}, schema=eq_schema))
    positional = _data_file(pos_path, 3, content=FileContent.POSITION_DELETES)
    equality = _data_file(eq_path, 2, content=FileContent.EQUALITY_DELETES, equality_ids=(2,))
    io = FileIO()
    data = _data_file(path, 6)
    out = read_task(io, FileScanTask(schema, UNPARTITIONED, data, (positional, equality)),
                    schema.select("id"))
    # pos 0 and 4 deleted by position; rows 1 and 3 (k null) by equality (null = null).
    assert out.column("id").to_pylist() == [2, 5]

    from icenb.io.puffin import deletion_vector_blob, write_puffin
    blob = deletion_vector_blob(DeletionVector.from_positions([1, 2]), path)
    puffin = write_puffin([blob])
    puffin_path = tmp_path / "dv.puffin"
    puffin_path.write_bytes(puffin)
    from icenb.io.puffin import PuffinReader
    meta = PuffinReader(puffin).blobs[0]
    dv = DataFile(file_path=str(puffin_path), file_format=FileFormat.PUFFIN,
                  content=FileContent.POSITION_DELETES, record_count=2,
                  file_size_in_bytes=len(puffin), referenced_data_file=path,
                  content_offset=meta.offset, content_size_in_bytes=meta.length)
    out = read_task(io, FileScanTask(schema, UNPARTITIONED, data, (dv,)), schema)
    assert out.column("id").to_pylist() == [0, 3, 4, 5]


def test_equality_deletes_on_two_columns_use_null_safe_equality(tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "a", LongType()), NestedField(2, "b", StringType()))
    path = _write(tmp_path / "data.parquet", pa.table(
        {"a": [1, 1, None, None], "b": ["x", None, None, "y"]}, schema=to_arrow_schema(schema)))
    eq_path = _write(tmp_path / "eq.parquet", pa.table(
        {"a": [1, None], "b": [None, None]}, schema=to_arrow_schema(schema)))
    eq = _data_file(eq_path, 2, content=FileContent.EQUALITY_DELETES, equality_ids=(1, 2))
    out = read_task(FileIO(), FileScanTask(schema, UNPARTITIONED, _data_file(path, 4), (eq,)),
                    schema)
    assert out.to_pylist() == [{"a": 1, "b": "x"}, {"a": None, "b": "y"}]


def test_missing_required_column_without_default_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.parquet", pa.table(
        {"a": [1]}, schema=pa.schema([_field("a", pa.int64(), 1)])))
    schema = Schema(NestedField(1, "a", LongType()),
                    NestedField(2, "b", LongType(), required=True))
    with pytest.raises(ValidationError, match="required"):
        read_task(FileIO(), FileScanTask(schema, UNPARTITIONED, _data_file(path, 1)), schema)


def test_name_mapping_gives_ids_to_files_written_without_them(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.parquet", pa.table({"a": [1, 2], "old_b": ["x", "y"]}))
    schema = Schema(NestedField(2, "b", StringType()), NestedField(1, "a", LongType()))
    mapping = [{"field-id": 1, "names": ["a"]}, {"field-id": 2, "names": ["b", "old_b"]}]
    task = FileScanTask(schema, UNPARTITIONED, _data_file(path, 2))
    out = read_task(FileIO(), task, schema, name_mapping=mapping)
    assert out.to_pylist() == [{"b": "x", "a": 1}, {"b": "y", "a": 2}]


def test_name_mapping_reaches_list_elements_and_struct_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.parquet", pa.table(
        {"l": [[{"x": 1}], None], "m": [[("k", 2)], []]},
        schema=pa.schema([pa.field("l", pa.list_(pa.struct([pa.field("x", pa.int32())]))),
                          pa.field("m", pa.map_(pa.string(), pa.int32()))])))
    schema = Schema(
        NestedField(1, "l", ListType(2, StructType(NestedField(3, "x", LongType())))),
        NestedField(4, "m", MapType(5, StringType(), 6, LongType())))
    mapping = [{"field-id": 1, "names": ["l"], "fields": [
                   {"field-id": 2, "names": ["element"], "fields": [
                       {"field-id": 3, "names": ["x"]}]}]},
               {"field-id": 4, "names": ["m"], "fields": [
                   {"field-id": 5, "names": ["key"]}, {"field-id": 6, "names": ["value"]}]}]
    task = FileScanTask(schema, UNPARTITIONED, _data_file(path, 2))
    out = read_task(FileIO(), task, schema, name_mapping=mapping)
    assert out.to_pylist() == [{"l": [{"x": 1}], "m": [("k", 2)]}, {"l": None, "m": []}]
