"""Spark writes to an EXPERIMENTAL format-version 4 table (docs/v4-layout.md#maintenance): an append
commits a root manifest (``V4Append``), a static overwrite removes files through the v4 tree
(``V4Overwrite``), a dynamic overwrite replaces the DataFrame's partitions
(``V4ReplacePartitions``, docs/v4-layout.md#dynamic-overwrite). Read back through icenb and through
the ``icenb`` Spark data
source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.spark import register
from icenb.table import Table


@pytest.fixture(autouse=True)
def _registered(spark: Any) -> None:
    register(spark)


def _icenb_rows(t: Table) -> list[tuple[int, int, str]]:
    data = t.refresh().scan().to_arrow()
    return sorted(zip(*(data.column(c).to_pylist() for c in ("id", "p", "s")), strict=True))


def _spark_rows(spark: Any, t: Table) -> list[tuple[int, int, str]]:
    df = spark.read.format("icenb").load(t.location)
    return sorted((r["id"], r["p"], r["s"]) for r in df.collect())


def _write(spark: Any, root: Path, rows: list[tuple[int, int, str]], mode: str,
           **options: str) -> None:
    df = spark.createDataFrame(rows, "id long, p int, s string").repartition(2)
    df.write.format("icenb").mode(mode).option("warehouse", str(root)).options(**options) \
        .save("db.t")


def test_append_static_and_dynamic_overwrite(spark: Any, tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p int, s string",
                                               partition_by=["p"], format_version=4)
    t.append([{"id": i, "p": i % 3, "s": "old"} for i in range(6)])
    _write(spark, tmp_path, [(10, 1, "a"), (11, 2, "a"), (12, 3, "a")], "append")
    t.refresh()
    snap = t.current_snapshot
    assert snap is not None and snap.root_manifest is not None and snap.manifest_list is None
    assert snap.summary is not None and snap.summary.operation == "append"
    assert snap.summary["added-records"] == "3"
    expected = sorted([(i, i % 3, "old") for i in range(6)]
                      + [(10, 1, "a"), (11, 2, "a"), (12, 3, "a")])
    assert _icenb_rows(t) == expected == _spark_rows(spark, t)

    # static overwrite with a filter: p = 1 replaced (files removed via the root / leaf DVs)
    _write(spark, tmp_path, [(20, 1, "b")], "overwrite", **{"overwrite-filter": "p = 1"})
    t.refresh()
    snap = t.current_snapshot
    assert snap is not None and snap.root_manifest is not None
    assert snap.summary is not None and snap.summary.operation == "overwrite"
    expected = sorted([r for r in expected if r[1] != 1] + [(20, 1, "b")])
    assert _icenb_rows(t) == expected == _spark_rows(spark, t)

    # overwrite without a filter: every row replaced
    _write(spark, tmp_path, [(30, 0, "c")], "overwrite")
    assert _icenb_rows(t) == [(30, 0, "c")] == _spark_rows(spark, t)
    assert all(s.root_manifest is not None for s in t.refresh().snapshots)

    # dynamic partition overwrite: p = 0 replaced, p = 1 kept
    t.append([{"id": 31, "p": 1, "s": "c"}])
    _write(spark, tmp_path, [(40, 0, "d")], "overwrite", partitionOverwriteMode="dynamic")
    snap = t.refresh().current_snapshot
    assert snap is not None and snap.root_manifest is not None and snap.summary is not None
    assert snap.summary.operation == "overwrite"
    assert snap.summary["replace-partitions"] == "true"
    assert snap.summary["deleted-data-files"] == "1"
    assert _icenb_rows(t) == [(31, 1, "c"), (40, 0, "d")] == _spark_rows(spark, t)
