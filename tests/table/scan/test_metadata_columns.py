"""Metadata columns in reads (``_file``, ``_pos``, ``_spec_id``, ``_partition``, ``_deleted``,
v3 ``_row_id`` / ``_last_updated_sequence_number``) on synthetic files.

Spec: "Reserved Field IDs", v3 "Row Lineage" (inheritance of null lineage values). Java
comparisons of the same columns on every corpus table are in test_task_reader.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.spec.arrow_schema import FIELD_ID_KEY, to_arrow_schema
from icenb.spec.manifest import DataFile, FileContent, FileFormat, FileScanTask
from icenb.spec.metadata_columns import (
    DELETED,
    FILE_PATH,
    LAST_UPDATED_SEQUENCE_NUMBER,
    ROW_ID,
    ROW_POSITION,
    SPEC_ID,
    partition_column,
)
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.transforms import BucketTransform, IdentityTransform
from icenb.spec.types import IntegerType, LongType, NestedField, StringType, StructType
from icenb.table.scan.read import read_task
from tests.reference_fixtures import JavaTables

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "k", StringType()))
SPEC = PartitionSpec(1, (PartitionField((2,), 1000, IdentityTransform(), "k"),))
# The table's unified partition type: spec 1's field and another spec's bucket field.
UNIFIED = StructType(NestedField(1000, "k", StringType()),
                     NestedField(1001, "id_bucket", IntegerType()))


def _field(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, metadata={FIELD_ID_KEY: str(fid).encode()})


def _data_file(path: Path, rows: int, **kwargs: Any) -> DataFile:
    return DataFile(file_path=str(path), file_format=FileFormat.PARQUET, partition=("a",),
                    record_count=rows, file_size_in_bytes=path.stat().st_size, spec_id=1,
                    **kwargs)


def _projection(*meta: NestedField) -> Schema:
    return Schema(SCHEMA.fields[0], *meta)


def test_file_pos_spec_and_partition_columns(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [10, 11, 12]}, schema=pa.schema([_field("id", pa.int64(),
                                                                           1)])), path)
    task = FileScanTask(SCHEMA, SPEC, _data_file(path, 3), residual_filter="id > 10")
    out = read_task(FileIO(), task, _projection(FILE_PATH, ROW_POSITION, SPEC_ID,
                                                partition_column(UNIFIED)))
    assert out.schema == to_arrow_schema(_projection(FILE_PATH, ROW_POSITION, SPEC_ID,
                                                     partition_column(UNIFIED)))
    # Positions are the rows' positions in the file, before the filter removed row 0.
    assert out.to_pylist() == [
        {"id": i, "_file": str(path), "_pos": i - 10, "_spec_id": 1,
         "_partition": {"k": "a", "id_bucket": None}} for i in (11, 12)]


def test_empty_partition_type_gives_null(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [1]}, schema=pa.schema([_field("id", pa.int64(), 1)])), path)
    task = FileScanTask(SCHEMA, SPEC, _data_file(path, 1))
    out = read_task(FileIO(), task, Schema(partition_column(StructType())))
    assert out.to_pylist() == [{"_partition": None}]


def test_row_lineage_inherits_null_values(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    # Lineage materialized for rows 0 and 2 (e.g. by a compaction), null for row 1.
    pq.write_table(pa.table({"id": [1, 2, 3], "_row_id": [100, None, 102],
                             "lus": [3, None, 4]},
                            schema=pa.schema([_field("id", pa.int64(), 1),
                                              _field("_row_id", pa.int64(), ROW_ID.field_id),
                                              _field("lus", pa.int64(),
                                                     LAST_UPDATED_SEQUENCE_NUMBER.field_id)])),
                   path)
    projection = _projection(ROW_ID, LAST_UPDATED_SEQUENCE_NUMBER)
    lineage = _data_file(path, 3, first_row_id=50, data_sequence_number=7)
    out = read_task(FileIO(), FileScanTask(SCHEMA, SPEC, lineage), projection)
    assert [(r["_row_id"], r["_last_updated_sequence_number"]) for r in out.to_pylist()] == \
        [(100, 3), (51, 7), (102, 4)]
    # Without a first_row_id (no row lineage, e.g. a v2 table) both are null.
    out = read_task(FileIO(), FileScanTask(SCHEMA, SPEC, _data_file(path, 3)), projection)
    assert out.column("_row_id").null_count == out.column(
        "_last_updated_sequence_number").null_count == 3


def test_deleted_marks_rows_instead_of_dropping_them(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4]}, schema=to_arrow_schema(SCHEMA.select("id"))),
                   path)
    pos_path = tmp_path / "pos.parquet"
    pq.write_table(pa.table({"file_path": [str(path)], "pos": [0]}, schema=pa.schema([
        _field("file_path", pa.string(), 2147483546), _field("pos", pa.int64(), 2147483545)])),
        pos_path)
    eq_path = tmp_path / "eq.parquet"
    pq.write_table(pa.table({"id": [3]}, schema=to_arrow_schema(SCHEMA.select("id"))), eq_path)
    deletes = (
        DataFile(file_path=str(pos_path), file_format=FileFormat.PARQUET, record_count=1,
                 file_size_in_bytes=1, content=FileContent.POSITION_DELETES),
        DataFile(file_path=str(eq_path), file_format=FileFormat.PARQUET, record_count=1,
                 file_size_in_bytes=1, content=FileContent.EQUALITY_DELETES, equality_ids=(1,)),
    )
    task = FileScanTask(SCHEMA, SPEC, _data_file(path, 4), deletes, residual_filter="id < 4")
    marked = read_task(FileIO(), task, Schema(ROW_POSITION, DELETED))
    assert marked.to_pylist() == [{"_pos": 0, "_deleted": True}, {"_pos": 1, "_deleted": False},
                                  {"_pos": 2, "_deleted": True}]
    assert read_task(FileIO(), task, Schema(ROW_POSITION)).to_pylist() == [{"_pos": 1}]


def test_partition_column_of_a_bucket_spec(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [5]}, schema=to_arrow_schema(SCHEMA.select("id"))), path)
    spec = PartitionSpec(2, (PartitionField((1,), 1001, BucketTransform(4), "id_bucket"),))
    f = DataFile(file_path=str(path), file_format=FileFormat.PARQUET, partition=(3,),
                 record_count=1, file_size_in_bytes=1, spec_id=2)
    out = read_task(FileIO(), FileScanTask(SCHEMA, spec, f),
                    Schema(SPEC_ID, partition_column(UNIFIED)))
    assert out.to_pylist() == [{"_spec_id": 2, "_partition": {"k": None, "id_bucket": 3}}]


def test_scan_selects_metadata_columns_by_name(java_tables: JavaTables) -> None:
    table = icenb.open(java_tables.location("db.v2_partition_evolution"))
    scan = table.scan(columns=["_partition", "id", "_file", "_pos", "_spec_id"])
    # Table columns first (in schema order), then metadata columns in the order given.
    assert [f.name for f in scan.schema.fields] == ["id", "_partition", "_file", "_pos",
                                                    "_spec_id"]
    data = scan.to_arrow()
    assert data.column_names == ["id", "_partition", "_file", "_pos", "_spec_id"]
    assert data.num_rows == table.scan().count()
    spec_ids = set(data.column("_spec_id").to_pylist())
    assert spec_ids <= {s.spec_id for s in table.metadata.partition_specs}
    assert len(spec_ids) > 1  # partition evolution
    assert set(data.column("_file").to_pylist()) == set(
        table.scan().plan().files.column("file_path").to_pylist())
    ptype = scan.schema.find_field("_partition").field_type
    assert isinstance(ptype, StructType)
    assert {f.field_id for f in ptype.fields} == {
        pf.field_id for s in table.metadata.partition_specs for pf in s.fields}
    with pytest.raises(ValidationError, match="_FILE"):
        table.scan().select("_FILE")
    upper = table.scan(columns=["_FILE"], case_sensitive=False)
    assert [f.name for f in upper.schema.fields] == ["_file"]
    with pytest.raises(ValidationError, match="_nope"):
        table.scan().select("id", "_nope")


def test_a_split_task_is_refused_not_misread(java_tables: JavaTables) -> None:
    table = icenb.open(java_tables.location("db.v2_merge_on_read"))
    task = table.scan().plan().tasks[0]
    split = dataclasses.replace(task, start=4, length=100)
    with pytest.raises(UnsupportedFeature) as info:
        read_task(table.io, split, table.schema)
    assert info.value.file == task.data_file.file_path
