"""Changelog.to_spark: the same rows as to_arrow, with the Spark types of icenb's own reads."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

import icenb

DDL = ("id long not null, u uuid, tm time, f fixed[2], ts timestamp, tz timestamptz, "
       "s struct<a: int, b: string>, l list<double>")


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "u": pa.array([uuid.UUID(int=i).bytes for i in ids], pa.binary(16)),
        "tm": pa.array([dt.time(1, 2, i % 60) for i in ids], pa.time64("us")),
        "f": pa.array([bytes([i % 256, 7]) for i in ids], pa.binary(2)),
        "ts": pa.array([dt.datetime(2024, 1, 1 + i % 28) for i in ids], pa.timestamp("us")),
        "tz": pa.array([dt.datetime(2024, 3, 1, i % 24, tzinfo=dt.timezone.utc) for i in ids],
                       pa.timestamp("us", "UTC")),
        "s": pa.array([{"a": i, "b": f"b{i}"} for i in ids],
                      pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "l": pa.array([[i / 2] * (i % 3) for i in ids], pa.list_(pa.float64())),
    })


def test_to_spark_has_the_rows_and_types_of_icenb_reads(spark: Any, tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=3)
    t.append(_rows([1, 2, 3]))
    first = t.current_snapshot
    assert first is not None
    t.update({"s": {"a": 9, "b": "nine"}}, "id = 2", mode="merge-on-read")
    cl = t.changes(None)
    df = cl.to_spark(spark)
    data = [f.name for f in t.schema.fields]
    assert df.columns == [*data, "_change_type", "_change_ordinal", "_commit_snapshot_id",
                          "_row_id"]
    read = t.at(first.snapshot_id).to_spark(spark)
    assert [f.dataType for f in df.schema.fields[:len(data)]] == \
        [f.dataType for f in read.schema.fields]
    inserted = df.where("_change_ordinal = 0").select(*data).orderBy("id").collect()
    assert inserted == read.orderBy("id").collect()
    got = [(r["id"], r["_change_type"], r["_row_id"], r["s"]["b"])
           for r in df.where("_change_ordinal = 1").collect()]
    assert got == [(2, "UPDATE_BEFORE", 1, "b2"), (2, "UPDATE_AFTER", 1, "nine")]
    assert df.count() == cl.num_rows == 5
