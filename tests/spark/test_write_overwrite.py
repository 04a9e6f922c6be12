"""Overwriting through Spark: ``mode("overwrite")`` static (all rows or a filter) and dynamic
(``partitionOverwriteMode=dynamic``), and ``Table.overwrite`` / ``dynamic_partition_overwrite``
of a Spark DataFrame. Tasks write the files, the driver commits one ``overwrite`` snapshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spark import register
from icenb.table import Table

DDL = "id long not null, p int not null, s string"


@pytest.fixture(autouse=True)
def _registered(spark: Any) -> None:
    register(spark)


def _table(tmp_path: Path, partition_by: list[str], format_version: int = 2) -> Table:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, partition_by=partition_by,
                                               format_version=format_version)
    # ids 0..11, p = id % 3, one file per partition (or one file)
    t.append([{"id": i, "p": i % 3, "s": "old"} for i in range(12)])
    return t


def _df(spark: Any, rows: list[tuple[int, int, str]]) -> Any:
    return spark.createDataFrame(rows, "id long, p int, s string").repartition(2)


def _rows(t: Table) -> list[tuple[int, int, str]]:
    data = t.refresh().scan().to_arrow()
    return sorted(zip(*(data.column(c).to_pylist() for c in ("id", "p", "s")), strict=True))


def _save(df: Any, root: Path, **options: str) -> None:
    df.write.format("icenb").mode("overwrite").option("warehouse", str(root)) \
        .options(**options).save("db.t")


@pytest.mark.parametrize("partition_by", [["p"], []], ids=["partitioned", "unpartitioned"])
def test_static_overwrite_replaces_every_row(spark: Any, tmp_path: Path,
                                             partition_by: list[str]) -> None:
    t = _table(tmp_path, partition_by)
    _save(_df(spark, [(100, 1, "new"), (101, 2, "new")]), tmp_path)
    assert _rows(t) == [(100, 1, "new"), (101, 2, "new")]
    snap = t.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary.operation == "overwrite"
    assert snap.summary["deleted-records"] == "12" and snap.summary["added-records"] == "2"
    assert len(t.snapshots) == 2


@pytest.mark.parametrize("partition_by", [["p"], []], ids=["partitioned", "unpartitioned"])
def test_static_overwrite_with_a_filter_replaces_the_matching_rows(
        spark: Any, tmp_path: Path, partition_by: list[str]) -> None:
    t = _table(tmp_path, partition_by)
    # p = 1 is a whole partition when partitioned; id < 2 matches part of a file either way
    _save(_df(spark, [(200, 1, "new"), (201, 0, "new")]), tmp_path,
          **{"overwrite-filter": "p = 1 or id < 2"})
    kept = [(i, i % 3, "old") for i in range(12) if not (i % 3 == 1 or i < 2)]
    assert _rows(t) == sorted([*kept, (200, 1, "new"), (201, 0, "new")])
    snap = t.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary.operation == "overwrite"
    # The table's own view of the history agrees: the first snapshot still reads as written.
    assert t.at(t.snapshots[0].snapshot_id).to_arrow().num_rows == 12


def test_dynamic_overwrite_replaces_the_partitions_the_data_touches(
        spark: Any, tmp_path: Path) -> None:
    t = _table(tmp_path, ["p"])
    _save(_df(spark, [(300, 2, "new")]), tmp_path, partitionOverwriteMode="dynamic")
    kept = [(i, i % 3, "old") for i in range(12) if i % 3 != 2]
    assert _rows(t) == sorted([*kept, (300, 2, "new")])
    snap = t.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary["replace-partitions"] == "true"


def test_table_methods_take_spark_dataframes(spark: Any, tmp_path: Path) -> None:
    t = _table(tmp_path, ["p"], format_version=3)
    t.overwrite(_df(spark, [(400, 0, "new")]), "id = 3")
    assert (3, 0, "old") not in _rows(t) and (400, 0, "new") in _rows(t)
    t.dynamic_partition_overwrite(_df(spark, [(500, 1, "new")]))
    assert [r for r in _rows(t) if r[1] == 1] == [(500, 1, "new")]
    t.overwrite(_df(spark, [(600, 2, "new")]))
    assert _rows(t) == [(600, 2, "new")]
    assert [s.summary.operation for s in t.snapshots if s.summary is not None] == [
        "append", "overwrite", "overwrite", "overwrite"]


@pytest.mark.parametrize(("options", "field"), [
    ({"overwrite-filter": "nope = 1"}, "nope"),
    ({"overwrite-filter": "p = 1", "partitionOverwriteMode": "dynamic"}, "overwrite-filter"),
    ({"partitionOverwriteMode": "sometimes"}, "partitionOverwriteMode"),
])
def test_bad_overwrite_options_write_nothing(spark: Any, tmp_path: Path,
                                             options: dict[str, str], field: str) -> None:
    t = _table(tmp_path, ["p"])
    before = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    with pytest.raises(Exception, match=field):
        _save(_df(spark, [(1, 1, "x")]), tmp_path, **options)
    assert sorted(str(p) for p in tmp_path.rglob("*") if p.is_file()) == before
    assert len(t.refresh().snapshots) == 1


def test_an_overwrite_filter_needs_overwrite_mode(spark: Any, tmp_path: Path) -> None:
    _table(tmp_path, ["p"])
    with pytest.raises(Exception, match="overwrite"):
        _df(spark, [(1, 1, "x")]).write.format("icenb").mode("append") \
            .option("warehouse", str(tmp_path)).option("overwrite-filter", "p = 1").save("db.t")


def test_table_overwrite_with_a_bad_filter_raises_the_icenb_error(spark: Any,
                                                                   tmp_path: Path) -> None:
    t = _table(tmp_path, ["p"])
    with pytest.raises(ValidationError):
        t.overwrite(_df(spark, [(1, 1, "x")]), "nope = 1")
    assert len(t.refresh().snapshots) == 1
