"""Spark reads and writes of a table on an object store (issue 17): the ``icenb`` data source's
tasks open the table's files through the catalog's FileIO properties (endpoint, credentials),
which travel with the planned partitions and the writer, so a local S3-protocol server (moto)
serves both sides."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.catalog import open_catalog
from icenb.spec.schema_ddl import parse_schema
from icenb.spec.table_updates import new_table_metadata
from tests.s3_server import files, make_bucket, s3_server


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    with s3_server() as properties:
        yield properties


@pytest.mark.parametrize("version", [2, 3])
def test_spark_reads_and_writes_an_s3_table(tmp_path: Path, s3: dict[str, str], spark: Any,
                                            version: int) -> None:
    bucket = f"icenb-spark-v{version}"
    fs = make_bucket(s3, bucket)
    cat = open_catalog(f"sqlite:///{tmp_path}/catalog.db", warehouse=f"s3://{bucket}/wh",
                       properties=s3)
    cat.create_namespace("db")
    location = cat.default_table_location(("db", "t"))
    cat.create_table(("db", "t"), new_table_metadata(
        parse_schema("id long, v string"), location=location, format_version=version))
    t = icenb.load_table(cat, ("db", "t"))
    t.append([{"id": i, "v": str(i)} for i in range(10)])
    t.delete("id < 2", "merge-on-read")

    # Spark reads: executors open the Parquet and delete files on s3://
    read = t.scan("id < 8").to_spark(spark)
    assert sorted(r["id"] for r in read.collect()) == [2, 3, 4, 5, 6, 7]

    # Spark writes: tasks write data files into the bucket, the driver commits once
    df = spark.createDataFrame([(100 + i, f"s{i}") for i in range(20)], "id long, v string")
    snap = t.append(df.repartition(2))
    assert snap.summary["added-records"] == "20"
    written = [p for p in files(fs, bucket) if p.endswith(".parquet") and "/data/" in p]
    assert len(written) >= 3  # icenb's file plus Spark's task files, all in the bucket

    again = icenb.load_table(open_catalog(f"sqlite:///{tmp_path}/catalog.db",
                                          warehouse=f"s3://{bucket}/wh", properties=s3),
                             ("db", "t"))
    ids = sorted(r["id"] for r in again.scan().to_spark(spark).collect())
    assert ids == [*range(2, 10), *range(100, 120)]
    assert sorted(again.to_arrow().column("id").to_pylist()) == ids
