"""An equality delete on a column dropped later still applies (spec: "Equality Delete Files":
"If a delete column in an equality delete file is later dropped from the table, it must still
be used when applying the equality deletes")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import CorruptFile
from icenb.io.file_io import FileIO
from icenb.spec.arrow_schema import FIELD_ID_KEY
from icenb.spec.manifest import DataFile, FileContent, FileFormat, FileScanTask
from icenb.spec.metadata_columns import DELETED
from icenb.spec.partition_spec import UNPARTITIONED
from icenb.spec.schema import Schema
from icenb.spec.types import LongType, NestedField, StructType
from icenb.table import Table
from icenb.table.scan.read import read_task

ROWS = [{"id": i, "cat": c} for i, c in enumerate(["x", "y", "x", None, "z"], 1)]


@pytest.fixture
def dropped(tmp_path: Path) -> tuple[Table, list[int]]:
    """``id long, cat string``: 5 rows, equality deletes on ``cat`` = x and on (id, cat) =
    (2, y), then ``cat`` dropped and re-added as a new int column; the snapshot ids."""
    t = icenb.warehouse(tmp_path / "wh").create_table("db.t", "id long, cat string",
                                                       format_version=2)
    t.append(ROWS)
    snapshots = [t.current_snapshot.snapshot_id]
    t.delete_by_key([{"cat": "x"}], on="cat")
    t.delete_by_key([{"id": 2, "cat": "y"}], on=["id", "cat"])
    snapshots += [s.snapshot_id for s in t.snapshots[1:]]
    with t.update_schema() as u:
        u.delete_column("cat")
    with t.update_schema() as u:
        u.add_column("cat", "int")
    return t, snapshots


def test_rows_deleted_by_a_dropped_column_stay_deleted(dropped: tuple[Table, list[int]]
                                                       ) -> None:
    t, _ = dropped
    assert t.to_arrow().to_pylist() == [{"id": 4, "cat": None}, {"id": 5, "cat": None}]
    assert t.scan().select("id").to_arrow().column("id").to_pylist() == [4, 5]
    assert t.scan("id > 4").to_arrow().column("id").to_pylist() == [5]
    assert t.scan().count() == 2


def test_older_snapshots_read_with_their_schema_and_deletes(dropped: tuple[Table, list[int]]
                                                            ) -> None:
    t, (appended, first_delete, _) = dropped
    assert t.at(appended).to_arrow().to_pylist() == ROWS
    assert t.at(first_delete).to_arrow().to_pylist() == [r for r in ROWS if r["cat"] != "x"]


def test_changelog_reports_the_deleted_rows_after_the_drop(dropped: tuple[Table, list[int]]
                                                           ) -> None:
    t, (appended, first_delete, second_delete) = dropped
    changes = t.changes(appended).to_arrow()
    got = sorted((r["id"], r["_change_type"], r["_commit_snapshot_id"])
                 for r in changes.to_pylist())
    assert got == [(1, "DELETE", first_delete), (2, "DELETE", second_delete),
                   (3, "DELETE", first_delete)]


def test_new_rows_are_not_matched_against_a_re_added_column(dropped: tuple[Table, list[int]]
                                                            ) -> None:
    t, _ = dropped
    t.append([{"id": 6, "cat": 1}])
    assert t.to_arrow().to_pylist() == [{"id": 6, "cat": 1}, {"id": 4, "cat": None},
                                        {"id": 5, "cat": None}]


# --------------------------------------------------------------------------- synthetic files


def _field(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, metadata={FIELD_ID_KEY: str(fid).encode()})


def _file(path: Path, table: pa.Table, **kwargs: Any) -> DataFile:
    pq.write_table(table, path)
    return DataFile(file_path=str(path), file_format=FileFormat.PARQUET, partition=(),
                    record_count=table.num_rows, file_size_in_bytes=path.stat().st_size,
                    **kwargs)


def _eq(path: Path, table: pa.Table, *ids: int) -> DataFile:
    return _file(path, table, content=FileContent.EQUALITY_DELETES, equality_ids=ids)


def test_dropped_nested_and_promoted_columns_match_by_field_id(tmp_path: Path) -> None:
    # id 1 long; s struct (2) had child 3 (dropped); n (4, int in the file, long in the delete
    # file after a promotion) was dropped too; the current schema has id and s.k (5).
    data = _file(tmp_path / "d.parquet", pa.table(
        [pa.array([1, 2, 3, 4]),
         pa.array([{"gone": "a", "k": 1}, {"gone": "b", "k": 2}, None, {"gone": "a", "k": 4}],
                  pa.struct([_field("gone", pa.string(), 3), _field("k", pa.int64(), 5)])),
         pa.array([10, 20, 30, None], pa.int32())],
        schema=pa.schema([_field("id", pa.int64(), 1),
                          _field("s", pa.struct([_field("gone", pa.string(), 3),
                                                 _field("k", pa.int64(), 5)]), 2),
                          _field("n", pa.int32(), 4)])))
    nested = _eq(tmp_path / "eq1.parquet", pa.table(
        [pa.array([{"gone": "a"}], pa.struct([_field("gone", pa.string(), 3)]))],
        schema=pa.schema([_field("s", pa.struct([_field("gone", pa.string(), 3)]), 2)])), 3)
    promoted = _eq(tmp_path / "eq2.parquet", pa.table(
        [pa.array([2, 4]), pa.array([20, None], pa.int64())],
        schema=pa.schema([_field("id", pa.int64(), 1), _field("n", pa.int64(), 4)])), 1, 4)
    schema = Schema(NestedField(1, "id", LongType()),
                    NestedField(2, "s", StructType(NestedField(5, "k", LongType()))))
    task = FileScanTask(schema, UNPARTITIONED, data, (nested, promoted))
    # row 1: s.gone = a; row 2: (id, n) = (2, 20); row 4: s.gone = a (and (4, null))
    assert read_task(FileIO(), task, schema.select("id")).to_pylist() == [{"id": 3}]
    marked = read_task(FileIO(), task, Schema(*schema.fields, DELETED))
    assert [(r["id"], r["s"], r["_deleted"]) for r in marked.to_pylist()] == [
        (1, {"k": 1}, True), (2, {"k": 2}, True), (3, None, False), (4, {"k": 4}, True)]


def test_a_data_file_without_the_dropped_column_matches_null_keys(tmp_path: Path) -> None:
    data = _file(tmp_path / "d.parquet", pa.table(
        [pa.array([1, 2])], schema=pa.schema([_field("id", pa.int64(), 1)])))
    schema = Schema(NestedField(1, "id", LongType()))
    not_null = _eq(tmp_path / "eq1.parquet", pa.table(
        [pa.array(["x"])], schema=pa.schema([_field("c", pa.string(), 2)])), 2)
    task = FileScanTask(schema, UNPARTITIONED, data, (not_null,))
    assert read_task(FileIO(), task, schema).num_rows == 2
    null = _eq(tmp_path / "eq2.parquet", pa.table(
        [pa.array([None], pa.string())], schema=pa.schema([_field("c", pa.string(), 2)])), 2)
    task = FileScanTask(schema, UNPARTITIONED, data, (null,))
    assert read_task(FileIO(), task, schema).num_rows == 0


def test_a_delete_file_without_its_dropped_equality_column_is_corrupt(tmp_path: Path) -> None:
    data = _file(tmp_path / "d.parquet", pa.table(
        [pa.array([1])], schema=pa.schema([_field("id", pa.int64(), 1)])))
    bad = _eq(tmp_path / "eq.parquet", pa.table(
        [pa.array([1])], schema=pa.schema([_field("id", pa.int64(), 1)])), 7)
    schema = Schema(NestedField(1, "id", LongType()))
    with pytest.raises(CorruptFile, match="equality_ids") as e:
        read_task(FileIO(), FileScanTask(schema, UNPARTITIONED, data, (bad,)), schema)
    assert "eq.parquet" in str(e.value) and "7" in str(e.value)


def test_a_narrower_dropped_delete_column_compares_in_the_data_files_type(tmp_path: Path
                                                                         ) -> None:
    # a data file with the promoted (long) column, a delete file with the int one
    data = _file(tmp_path / "d.parquet", pa.table(
        [pa.array([1, 2]), pa.array([7, 1 << 40])],
        schema=pa.schema([_field("id", pa.int64(), 1), _field("n", pa.int64(), 2)])))
    eq = _eq(tmp_path / "eq.parquet", pa.table(
        [pa.array([7], pa.int32())], schema=pa.schema([_field("n", pa.int32(), 2)])), 2)
    schema = Schema(NestedField(1, "id", LongType()))
    out = read_task(FileIO(), FileScanTask(schema, UNPARTITIONED, data, (eq,)), schema)
    assert out.to_pylist() == [{"id": 2}]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_deletes_and_compaction_after_the_drop_keep_deleted_rows_gone(
        dropped: tuple[Table, list[int]], mode: str) -> None:
    t, _ = dropped
    t.delete("id = 5", mode=mode)
    assert t.to_arrow().to_pylist() == [{"id": 4, "cat": None}]
    result = t.rewrite_data_files(rewrite_all=True)
    assert result.rewritten_data_files_count >= 1
    assert t.to_arrow().to_pylist() == [{"id": 4, "cat": None}]
