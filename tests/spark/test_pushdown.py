"""Spark's filters on an icenb read reach planning (DataSourceReader.pushFilters): a ``where``
opens only the manifests and data files icenb's own ``scan(filter=...)`` opens, and gives the
rows Spark gives without pushdown."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.spark import PLAN_LOG, PUSHDOWN_CONF, read_scan
from icenb.table import Table

KINDS = ("k0", "k1", "k2", "k3")


@contextmanager
def pushdown(spark: Any, on: bool) -> Iterator[None]:
    """The session's filter pushdown flag, set for the block (the user's value restored)."""
    before = spark.conf.get(PUSHDOWN_CONF, None)
    spark.conf.set(PUSHDOWN_CONF, "true" if on else "false")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(PUSHDOWN_CONF)
        else:
            spark.conf.set(PUSHDOWN_CONF, before)


@dataclass
class World:
    table: Table  # the table as written
    logged: Table  # the same table, opened with a plan log
    log: Path
    spark: Any

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def run(self, where: str, *, on: bool = True) -> tuple[list[tuple[Any, ...]],
                                                           list[dict[str, Any]]]:
        """Sorted rows of ``where`` on the logged table, and what its planning logged."""
        self.log.unlink(missing_ok=True)
        with pushdown(self.spark, on):
            df = read_scan(self.logged.scan(), self.spark, pushdown=True).where(where)
            rows = sorted((_plain(r) for r in df.collect()), key=repr)
        return rows, self.records()


def _plain(row: Any) -> tuple[Any, ...]:
    """A row as a tuple that compares equal to itself (NaN as a string)."""
    return tuple("NaN" if isinstance(v, float) and math.isnan(v) else
                 _plain(v) if isinstance(v, tuple) else v for v in row)


def _rows(kind: str, start: int) -> list[dict[str, Any]]:
    out = []
    for i in range(start, start + 5):
        out.append({
            "id": i, "kind": kind, "d": date(2024, 1, 1 + i % 28),
            "ts": datetime(2024, 1, 1, i % 24, tzinfo=timezone.utc),
            "ntz": datetime(2024, 2, 1, i % 24),
            "amount": None if i % 7 == 0 else Decimal(i) / 4,
            "f": float("nan") if i % 11 == 0 else (None if i % 13 == 0 else i / 2),
            "flag": i % 2 == 0, "s": None if i % 9 == 0 else {"x": i % 5, "y": None if i % 3 == 0
                                                              else f"y{i}"},
            "u": None if i % 4 == 0 else f"u{i:03d}",
        })
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> World:
    root = tmp_path_factory.mktemp("pushdown")
    wh = icenb.warehouse(root / "wh")
    t = wh.create_table(
        "db.events", "id long not null, kind string, d date, ts timestamptz, ntz timestamp, "
        "amount decimal(9,2), f double, flag boolean, s struct<x: int, y: string>, u string",
        partition_by=["kind"], format_version=2)
    # one manifest and one file per append: 8 of each, two id ranges per kind
    for n, kind in enumerate(KINDS):
        t.append(_rows(kind, 10 * n))
        t.append(_rows(kind, 100 + 10 * n))
    t.delete("id = 101", mode="merge-on-read")  # a position delete file
    log = root / "plan.jsonl"
    logged = icenb.open(t.metadata_location, properties={PLAN_LOG: str(log)})
    return World(t, logged, log, spark)


def _planned(records: list[dict[str, Any]]) -> dict[str, Any]:
    plans = [r for r in records if "files" in r]
    assert len(plans) == 1, records
    return plans[0]


def _opened_data_files(records: list[dict[str, Any]], data_files: set[str]) -> set[str]:
    return {r["opened"] for r in records if "opened" in r and r["opened"] in data_files}


# (Spark's where, the same filter in icenb's language)
PRUNING = [
    ("kind = 'k2'", "kind = 'k2'"),
    ("kind in ('k1', 'k3') and id >= 100", "kind in ('k1', 'k3') and id >= 100"),
    ("id between 12 and 21", "id >= 12 and id <= 21"),
    ("kind like 'k0%' and id < 50", "starts_with(kind, 'k0') and id < 50"),
    ("d = date'2024-01-03'", "d = '2024-01-03'"),
    ("ts >= timestamp'2024-01-01 20:00:00+00:00'", "ts >= '2024-01-01T20:00:00+00:00'"),
    ("amount > 30", "amount > 30"),
]


@pytest.mark.parametrize(("where", "icenb_filter"), PRUNING)
def test_a_where_opens_what_icenb_scan_opens(world: World, where: str,
                                             icenb_filter: str) -> None:
    all_files = set(world.table.scan().plan().files.column("file_path").to_pylist())
    own = world.table.scan(filter=icenb_filter).plan()
    own_files = set(own.files.column("file_path").to_pylist())
    rows, records = world.run(where)
    plan = _planned(records)
    assert plan["manifests_read"] == own.manifests_read
    assert set(plan["files"]) == own_files
    assert _opened_data_files(records, all_files) == own_files  # what the executors opened
    assert own.files_selected < len(all_files)  # the filter prunes something
    assert rows and all(r[1] in KINDS for r in rows)


def test_without_the_flag_nothing_is_pushed_and_nothing_fails(world: World) -> None:
    """A session built without spark.sql.python.filterPushdown.enabled still reads."""
    rows, records = world.run("kind = 'k2'", on=False)
    plan = _planned(records)
    assert plan["filter"] == "true"
    assert plan["manifests_read"] == plan["manifests_total"] == 9  # 8 appends + 1 delete
    assert len(rows) == 10 and {r[1] for r in rows} == {"k2"}


SAME_ROWS = [
    # nulls: SQL's three-valued logic
    "amount <> 2.75", "not (amount <=> 2.75)", "kind in ('k1', null)",
    "not (u in ('u001', null))", "u not like 'u01%'",
    # types
    "ts between timestamp'2024-01-01 03:00:00+00:00' and timestamp'2024-01-01 05:00:00+00:00'",
    "ntz > timestamp_ntz'2024-02-01 10:00:00'", "amount >= 27.5 and amount < 40", "not flag",
    # floats with NaN and null: pruned by icenb, decided by Spark
    "f > 5", "not (f < 5)",
    # nested
    "s.y is null", "s.y is not null and s.x > 1",
    # what is not pushed
    "u like '%3' and id % 3 = 0",
]


def test_rows_are_the_same_with_and_without_pushdown(world: World) -> None:
    from pyspark.sql import functions as F

    with pushdown(world.spark, False):  # every condition in one job, evaluated by Spark
        df = world.table.scan().to_spark(world.spark)
        rows = df.select(*(F.coalesce(F.expr(w), F.lit(False)).alias(f"q{i}")
                           for i, w in enumerate(SAME_ROWS)), "*").collect()
    off = {i: sorted((_plain(r[len(SAME_ROWS):]) for r in rows if r[i]), key=repr)
           for i in range(len(SAME_ROWS))}
    for i, where in enumerate(SAME_ROWS):
        on = world.run(where)[0]  # a read per query: such a read serves one scan
        assert on == off[i], where
        assert len(on) < 39, where
    assert off[SAME_ROWS.index("not (u in ('u001', null))")] == []  # never true in SQL
    assert [SAME_ROWS[i] for i, rows in off.items() if not rows] == ["not (u in ('u001', null))"]


def test_pushed_filters_join_the_scans_own_filter(world: World) -> None:
    world.log.unlink(missing_ok=True)
    with pushdown(world.spark, True):
        df = read_scan(world.logged.scan(filter="id < 100"), world.spark,
                       pushdown=True).where("kind = 'k1'")
        ids = sorted(r.id for r in df.collect())
    assert ids == list(range(10, 15))
    assert _planned(world.records())["filter"] == (
        "id < 100 and (kind is not null and kind = 'k1')")


def test_time_travel_and_columns_with_pushdown(world: World) -> None:
    first = world.table.snapshots[0].snapshot_id
    with pushdown(world.spark, True):
        scan = world.logged.scan(snapshot_id=first, columns=["id", "kind"])
        df = read_scan(scan, world.spark, pushdown=True).where("id > 2")
        assert sorted(r.id for r in df.collect()) == [3, 4]
        assert read_scan(scan, world.spark, pushdown=True).where("kind = 'k3'").count() == 0


def test_a_dataframe_read_by_default_is_safe_to_reuse(world: World) -> None:
    """Spark 4.1 to 4.3 keep what a pushdown planned on the DataFrame's relation: a later
    query of it without filters, or a second scan in one query, would read the pruned files.
    Reads take no filters unless asked (pushdown=True), so reuse gives the right rows."""
    with pushdown(world.spark, True):
        df = world.table.scan().to_spark(world.spark)
        assert df.where("kind = 'k2'").count() == 10
        assert df.count() == 39 and len(df.collect()) == 39
        both = df.where("kind = 'k1'").unionByName(df.where("kind = 'k3'"))
        assert sorted({r.kind for r in both.collect()}) == ["k1", "k3"]
