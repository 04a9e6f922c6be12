"""Spark write tasks stream their Arrow batches (RollingDataWriter): many batches per task,
files rolled at the target size, one open file per partition, sorted files for sorted tables."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.spark.writer import WriteTarget, write_task
from tests.table.commit.test_append import DDL, normalized, rows

BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"


@pytest.fixture
def small_batches(spark: Any) -> Iterator[None]:
    """Tasks get their rows in Arrow batches of 25 rows."""
    old = spark.conf.get(BATCH_CONF)
    spark.conf.set(BATCH_CONF, "25")
    yield
    spark.conf.set(BATCH_CONF, old)


def _x_key(x: float | None) -> tuple[int, float, float]:
    """Iceberg's order of a double (spec: "Sorting"): nulls first, -0.0 < 0.0, NaN last."""
    if x is None:
        return (0, 0.0, 0.0)
    if math.isnan(x):
        return (2, 0.0, 0.0)
    return (1, x, math.copysign(1.0, x))


def test_sorted_partitioned_append_of_many_batches(spark: Any, tmp_path: Path,
                                                   small_batches: None) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.events", DDL, partition_by=["bucket(3, id)"], sort_by=["x", "id"],
                        properties={"write.target-file-size-bytes": "6000"})
    data = pa.Table.from_pylist(rows(0, 600), schema=t.scan().to_arrow().schema)
    snap = t.append(spark.createDataFrame(data).repartition(2))
    assert normalized(t.scan().to_arrow()) == normalized(data)
    files = t.inspect.files().to_pylist()
    assert len(files) == int(snap.summary["added-data-files"])  # type: ignore[index]
    # Several files per (task, partition): rolled at the target size.
    assert len(files) > 2 * 3
    order = t.sort_order
    for f in files:
        assert f["sort_order_id"] == order.order_id != 0
        table = pq.read_table(f["file_path"])
        assert table.num_rows == f["record_count"]
        keys = [(_x_key(x), i) for x, i in
                zip(table.column("x").to_pylist(), table.column("id").to_pylist(), strict=True)]
        assert keys == sorted(keys)


def test_write_task_accepts_a_stream_of_batches(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.events", DDL, partition_by=["bucket(2, id)"])
    schema = t.scan().to_arrow().schema
    target = WriteTarget.of(t.metadata, t.io, "0b0e6a1e-0000-4000-8000-000000000000")
    consumed = []

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, 100, 10):
            consumed.append(start)
            yield pa.Table.from_pylist(rows(start, 10), schema=schema).to_batches()[0]

    files = write_task(target, batches(), partition_id=4, task_id=9)
    assert consumed == list(range(0, 100, 10))
    assert sorted(f.partition for f in files) == [(0,), (1,)]
    assert all(Path(f.file_path).name.startswith("00004-9-") for f in files)
    assert sum(f.record_count for f in files) == 100
