"""RollingDataWriter: batches streamed into data files (fanout or clustered, rolled at the
target size, sorted files for sorted tables) with the metrics write_data_files records."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from icenb.errors import ValidationError
from icenb.io.file_io import FileIO
from icenb.spec.manifest import DataFile
from icenb.spec.partition_spec import UNPARTITIONED, PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.sort_order import UNSORTED, SortField, SortOrder
from icenb.spec.transforms import parse_transform
from icenb.spec.types import DoubleType, LongType, NestedField, StringType
from icenb.table.write.data_files import RollingDataWriter, write_data_files
from icenb.table.write.locations import location_provider
from tests.table.write.test_data_writer import ALL_TYPES, _all_types_data

F = NestedField
SCHEMA = Schema(F(1, "id", LongType(), required=True), F(2, "cat", StringType()),
                F(3, "x", DoubleType()), F(4, "payload", StringType()))
BY_CAT = PartitionSpec(0, (PartitionField((2,), 1000, parse_transform("identity"), "cat"),))
BY_X = SortOrder(1, (SortField((3,), parse_transform("identity")),))


def _writer(tmp: Path, schema: Schema = SCHEMA, *, spec: PartitionSpec = UNPARTITIONED,
            order: SortOrder = UNSORTED, properties: dict[str, str] | None = None,
            **kwargs: Any) -> RollingDataWriter:
    props = properties or {}
    return RollingDataWriter(FileIO(), schema, spec, order, props,
                             location_provider(str(tmp), props), format_version=2,
                             operation_id="op", **kwargs)


def _batch(start: int, n: int, cats: tuple[str, ...] = ("a", "b", "c")) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "cat": [cats[i % len(cats)] for i in ids],
                     "x": [float((i * 7919) % 1000) - 500.0 for i in ids],
                     "payload": [f"row {i} " + "p" * (i % 50) for i in ids]})


def _files_on_disk(tmp: Path) -> list[Path]:
    return sorted(p for p in tmp.rglob("*") if p.is_file())


def _read(files: list[DataFile]) -> pa.Table:
    return pa.concat_tables([pq.read_table(f.file_path) for f in files])


def _metrics(f: DataFile) -> tuple[Any, ...]:
    return (f.record_count, f.partition, f.value_counts, f.null_value_counts,
            f.nan_value_counts, f.lower_bounds, f.upper_bounds, f.sort_order_id, f.spec_id,
            sorted(f.column_sizes))


@pytest.mark.parametrize("properties", [
    {}, {"write.metadata.metrics.default": "truncate(3)",
         "write.metadata.metrics.column.bin": "full", "write.metadata.metrics.column.l": "none",
         "write.metadata.metrics.column.st.x": "counts"}])
def test_metrics_over_many_batches_equal_write_data_files(tmp_path: Path,
                                                          properties: dict[str, str]) -> None:
    data = _all_types_data()
    expected = write_data_files(FileIO(), data, ALL_TYPES, UNPARTITIONED, UNSORTED, properties,
                                location_provider(str(tmp_path / "one"), properties),
                                format_version=3)
    w = _writer(tmp_path / "stream", ALL_TYPES, properties=properties)
    for i in range(data.num_rows):  # one row per batch: every bound is merged across batches
        w.write(data.slice(i, 1).to_batches()[0])
    got = w.close()
    assert [_metrics(f) for f in got] == [_metrics(f) for f in expected]
    assert repr(_read(got).to_pylist()) == repr(_read(expected).to_pylist())  # NaN == NaN


def test_rolls_at_the_target_size_and_keeps_every_row_in_order(tmp_path: Path) -> None:
    props = {"write.target-file-size-bytes": "20000",
             "write.parquet.row-group-size-bytes": "10000"}
    w = _writer(tmp_path, properties=props)
    batches = [_batch(i * 1000, 1000) for i in range(10)]
    for b in batches:
        w.write(b)
    files = w.close()
    assert len(files) > 3
    assert [Path(f.file_path).name for f in files] == [
        f"00000-0-op-{n:05d}.parquet" for n in range(1, len(files) + 1)]
    assert all(f.file_size_in_bytes < 2 * 20000 for f in files)
    assert sum(f.record_count for f in files) == 10_000
    assert _read(files).equals(pa.concat_tables(batches).cast(_read(files).schema))
    assert all(len(f.split_offsets or ()) >= 1 for f in files)
    assert sorted(map(str, _files_on_disk(tmp_path))) == sorted(f.file_path for f in files)


def test_fanout_keeps_one_file_per_partition_open(tmp_path: Path) -> None:
    w = _writer(tmp_path, spec=BY_CAT)
    for i in range(6):  # every batch holds rows of every partition
        w.write(_batch(i * 100, 100))
    files = w.close()
    assert [f.partition for f in files] == [("a",), ("b",), ("c",)]
    assert [Path(f.file_path).parent.name for f in files] == ["cat=a", "cat=b", "cat=c"]
    for f in files:
        table = pq.read_table(f.file_path)
        assert set(table.column("cat").to_pylist()) == set(f.partition)
        assert f.record_count == table.num_rows == 200
        assert f.lower_bounds[1] == min(table.column("id").to_pylist()).to_bytes(8, "little")


def test_clustered_writes_grouped_input_and_refuses_a_partition_that_comes_back(
        tmp_path: Path) -> None:
    w = _writer(tmp_path / "ok", spec=BY_CAT, fanout=False)
    for cat in ("a", "b", "c"):
        w.write(_batch(0, 50, (cat,)))
    assert [f.partition for f in w.close()] == [("a",), ("b",), ("c",)]
    bad = _writer(tmp_path / "bad", spec=BY_CAT, fanout=False)
    bad.write(_batch(0, 50, ("a",)))
    bad.write(_batch(0, 50, ("b",)))
    with pytest.raises(ValidationError, match="not clustered"):
        bad.write(_batch(0, 50, ("a",)))
    assert _files_on_disk(tmp_path / "bad") == []


def _is_sorted(values: list[float]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(values))


def test_sorted_table_every_file_is_sorted_even_when_the_buffer_spills(tmp_path: Path) -> None:
    small = _writer(tmp_path / "small", spec=BY_CAT, order=BY_X, buffer_bytes=30_000)
    big = _writer(tmp_path / "big", spec=BY_CAT, order=BY_X)
    for i in range(8):
        small.write(_batch(i * 500, 500))
        big.write(_batch(i * 500, 500))
    spilled, whole = small.close(), big.close()
    assert len(whole) == 3 and len(spilled) > 3
    for f in spilled + whole:
        assert f.sort_order_id == 1
        assert _is_sorted(pq.read_table(f.file_path).column("x").to_pylist())
    assert sum(f.record_count for f in spilled) == 4000
    assert (_read(spilled).sort_by("id").equals(_read(whole).sort_by("id")))


def test_a_small_buffer_budget_writes_small_row_groups_without_losing_rows(
        tmp_path: Path) -> None:
    w = _writer(tmp_path, spec=BY_CAT, buffer_bytes=10_000)
    for i in range(10):
        w.write(_batch(i * 300, 300))
    files = w.close()
    assert len(files) == 3
    assert all(pq.ParquetFile(f.file_path).metadata.num_row_groups > 1 for f in files)
    assert pc.sum(_read(files).column("id")).as_py() == sum(range(3000))


def test_bad_input_after_good_batches_leaves_no_file(tmp_path: Path) -> None:
    w = _writer(tmp_path, spec=BY_CAT, properties={"write.target-file-size-bytes": "5000"})
    w.write(_batch(0, 500))
    assert _files_on_disk(tmp_path)
    with pytest.raises(ValidationError, match="required"):
        w.write(pa.table({"id": pa.array([None], pa.int64())}))
    assert _files_on_disk(tmp_path) == []
    with pytest.raises(ValidationError, match="closed"):
        w.write(_batch(0, 1))


def test_abort_and_a_failing_context_delete_what_was_written(tmp_path: Path) -> None:
    w = _writer(tmp_path / "a", properties={"write.target-file-size-bytes": "5000"})
    w.write(_batch(0, 2000))
    assert len(w.written) > 1
    w.abort()
    assert _files_on_disk(tmp_path / "a") == []
    with pytest.raises(RuntimeError), _writer(tmp_path / "b") as w2:
        w2.write(_batch(0, 2000))
        w2.close()
        raise RuntimeError("after close: the files are not committed")
    assert _files_on_disk(tmp_path / "b") == []


def test_empty_input_writes_nothing(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.write(_batch(0, 0))
    assert w.close() == []
    assert _files_on_disk(tmp_path) == []


def test_data_file_fields_match_write_data_files(tmp_path: Path) -> None:
    data = _batch(0, 900)
    expected = write_data_files(FileIO(), data, SCHEMA, BY_CAT, BY_X, {},
                                location_provider(str(tmp_path / "one"), {}), format_version=2,
                                operation_id="op")
    w = _writer(tmp_path / "two", spec=BY_CAT, order=BY_X)
    w.write(data)
    got = w.close()

    def strip(f: DataFile) -> DataFile:
        return replace(f, file_path=Path(f.file_path).name)

    # One batch, one row group per file: the same bytes, so every field is equal.
    assert [strip(f) for f in got] == [strip(f) for f in expected]
