"""Reading scan tasks into Arrow, checked row for row against Iceberg Java (Spark 3.5) reads.

Spec: "Column Projection", "Row-level deletes", "Scan Planning" (residuals).
"""

from __future__ import annotations

import decimal
import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icenb.errors import ValidationError
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata
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
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from icenb.table import plan_files
from icenb.table.arrow_schema import FIELD_ID_KEY, arrow_field_id, to_arrow_schema
from icenb.table.task_reader import read_plan, read_task
from tests.reference.java_read import normalize
from tests.reference_fixtures import JAVA_TIMEOUT_S, REFERENCE_DIR, JavaTables, reference_python

# Tables compared with Java for every snapshot (deletes of each kind, schema and partition
# evolution, a v1 table upgraded to v2 and v3, every Spark type).
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


def _requests(java_tables: JavaTables) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for name in COMPARED_TABLES:
        md = _load(java_tables, name)
        out.extend((name, s.snapshot_id) for s in md.snapshots)
    return out


def run_java_read(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of each {location, snapshot_id} as read by Iceberg Java (one JVM for the batch)."""
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "requests.json"
        out = Path(tmp) / "results.json"
        req.write_text(json.dumps({"requests": list(requests)}), encoding="utf-8")
        proc = subprocess.run(
            [str(reference_python()), str(REFERENCE_DIR / "java_read.py"),
             "--requests", str(req), "--output", str(out)],
            cwd=tmp, capture_output=True, timeout=JAVA_TIMEOUT_S, check=False)
        if proc.returncode != 0 or not out.exists():
            tail = proc.stderr.decode(errors="replace").splitlines()[-40:]
            pytest.fail("java_read.py failed:\n" + "\n".join(tail), pytrace=False)
        results: list[dict[str, Any]] = json.loads(out.read_text("utf-8"))["results"]
    return results


@pytest.fixture(scope="session")
def java_rows(java_tables: JavaTables) -> dict[tuple[str, int], dict[str, Any]]:
    """Java's rows of every snapshot of the compared tables, read in one JVM."""
    keys = _requests(java_tables)
    results = run_java_read([{"location": str(java_tables.location(name)), "snapshot_id": sid}
                             for name, sid in keys])
    return dict(zip(keys, results, strict=True))


@pytest.mark.parametrize("name", COMPARED_TABLES)
def test_every_snapshot_reads_as_java_reads_it(
        java_tables: JavaTables, java_rows: dict[tuple[str, int], dict[str, Any]],
        name: str) -> None:
    md = _load(java_tables, name)
    io = FileIO()
    assert md.snapshots
    for snapshot in md.snapshots:
        sid = snapshot.snapshot_id
        java = java_rows[(name, sid)]
        assert java["ok"], java.get("error")
        schema = md.schema_for_snapshot(sid)
        table = read_plan(io, plan_files(io, md, snapshot_id=sid), schema)
        assert table.column_names == java["columns"], (name, sid)
        expected = sorted(json.dumps(r, sort_keys=True) for r in java["rows"])
        assert _icenb_rows(table) == expected, (name, sid)


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
