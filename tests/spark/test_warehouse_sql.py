"""``wh.sql``: Spark SQL over a warehouse - time travel as ``t.at``, Iceberg's Spark names for
branches, tags and metadata tables, views, name resolution and errors."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import NoSuchSnapshot, NoSuchTable, UnsupportedFeature, ValidationError
from icenb.spark import PLAN_LOG
from icenb.spark.warehouse_sql import METADATA_TABLES, warehouse_sql
from icenb.table import Table
from icenb.table.warehouse import Warehouse


@dataclass
class World:
    wh: Warehouse
    t: Table
    spark: Any
    first: int  # rows 0..5, tagged v1 (and where branch audit starts)
    second: int  # a merge-on-read delete of id 1
    first_ms: int

    def sql(self, query: str, **kw: Any) -> Any:
        return self.wh.sql(query, spark=self.spark, **kw)

    def rows(self, query: str, **kw: Any) -> list[tuple[Any, ...]]:
        return sorted((tuple(r) for r in self.sql(query, **kw).collect()), key=repr)


def _arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> World:
    wh = icenb.warehouse(tmp_path_factory.mktemp("whsql") / "wh")
    t = wh.create_table("db.t", "id long not null, kind string, score double",
                        partition_by=["kind"], format_version=2)
    first = t.append([{"id": i, "kind": "a" if i % 2 else "b", "score": i / 2}
                      for i in range(6)])
    t.create_tag("v1")
    t.create_branch("audit")
    time.sleep(0.01)
    second = t.delete("id = 1", mode="merge-on-read")
    t.append([{"id": 10, "kind": "c", "score": None}])
    t.append([{"id": 20, "kind": "d", "score": 1.0}], branch="audit")
    # a namespace named like a table, holding a table named like a metadata table
    wh.create_table("db.u", "y int").append([{"y": 1}])
    wh.create_table("db.u.snapshots", "x int").append([{"x": 42}])
    wh.create_view("db.recent", "SELECT id, kind FROM t VERSION AS OF 'v1' WHERE id > 2",
                   spark=spark)
    wh.create_view("db.counts", "SELECT kind, count(*) AS n FROM db.recent GROUP BY kind",
                   schema="kind string, n long")
    return World(wh, t, spark, first.snapshot_id, second.snapshot_id, first.timestamp_ms)


def test_time_travel_reads_what_t_at_reads(world: World) -> None:
    t = world.t
    cases = {
        f"SELECT * FROM db.t VERSION AS OF {world.first}": t.at(world.first),
        f"SELECT * FROM db.t FOR SYSTEM_VERSION AS OF {world.second}": t.at(world.second),
        "SELECT * FROM db.t VERSION AS OF 'v1'": t.at("v1"),
        "SELECT * FROM db.t VERSION AS OF 'audit'": t.at("audit"),
        "SELECT * FROM db.t.tag_v1": t.at("v1"),
        "SELECT * FROM db.t.branch_audit": t.at("audit"),
        f"SELECT * FROM db.t.snapshot_id_{world.first}": t.at(world.first),
        f"SELECT * FROM db.t.at_timestamp_{world.first_ms}": t.at(timestamp_ms=world.first_ms),
        f"SELECT * FROM db.t TIMESTAMP AS OF timestamp_millis({world.first_ms})":
            t.at(timestamp_ms=world.first_ms),
        "SELECT * FROM db.t": t.scan(),
        f"SELECT * FROM {world.wh.catalog.name}.db.t": t.scan(),
    }
    for query, scan in cases.items():
        assert world.rows(query) == _arrow_rows(scan.to_arrow()), query
    assert len(world.rows("SELECT * FROM db.t.branch_audit")) == 7


def test_two_states_of_a_table_in_one_query(world: World) -> None:
    query = ("SELECT now.id FROM db.t now FULL JOIN db.t VERSION AS OF 'v1' AS old "
             "ON now.id = old.id WHERE now.id IS NULL OR old.id IS NULL")
    assert world.rows(query) == [(10,), (None,)]
    # one-part names look in the namespace given (two parts are namespace.table, as Spark)
    assert world.rows("SELECT count(*) FROM t VERSION AS OF 'v1'", namespace="db") == [(6,)]


@pytest.mark.parametrize("name", METADATA_TABLES)
def test_metadata_tables_are_the_inspect_tables(world: World, name: str) -> None:
    got = world.sql(f"SELECT * FROM db.t.{name.upper() if name == 'files' else name}")
    want = getattr(world.t.inspect, name)()
    assert got.columns == want.column_names
    assert _arrow_rows(got.toArrow()) == _arrow_rows(want)


def test_metadata_tables_with_time_travel(world: World) -> None:
    inspect = world.t.inspect
    for name in ("files", "manifests", "entries", "partitions", "data_files"):
        got = world.sql(f"SELECT * FROM db.t.{name} VERSION AS OF {world.first}").toArrow()
        assert _arrow_rows(got) == _arrow_rows(getattr(inspect, name)(world.first)), name
    branch = world.t.refs["audit"].snapshot_id
    got = world.sql("SELECT file_path FROM db.t.files VERSION AS OF 'audit'").toArrow()
    assert sorted(got.column(0).to_pylist()) == sorted(
        inspect.files(branch).column("file_path").to_pylist())
    # whole-table tables list everything whatever the state (as Iceberg Java)
    assert world.rows("SELECT snapshot_id FROM db.t.snapshots VERSION AS OF 'v1'") == \
        world.rows("SELECT snapshot_id FROM db.t.snapshots")
    with pytest.raises(UnsupportedFeature, match="all_files"):
        world.sql("SELECT * FROM db.t.all_files VERSION AS OF 'v1'")
    with pytest.raises(NoSuchSnapshot, match=r"db\.t.*nope"):
        world.sql("SELECT * FROM db.t.files VERSION AS OF 'nope'")


def test_a_table_wins_over_a_metadata_table_of_the_same_name(world: World) -> None:
    """``db.u.snapshots`` is the table ``snapshots`` of namespace ``db.u`` when it exists (as
    Iceberg's catalogs: the table is tried first); ``db.u.history`` stays metadata."""
    assert world.rows("SELECT * FROM db.u.snapshots") == [(42,)]
    assert world.rows("SELECT count(*) FROM db.u.history") == [(1,)]


def test_views_resolve_with_their_own_namespace(world: World) -> None:
    assert world.rows("SELECT * FROM db.recent") == [(3, "a"), (4, "b"), (5, "a")]
    assert world.rows("SELECT * FROM db.counts") == [("a", 2), ("b", 1)]
    with pytest.raises(UnsupportedFeature, match=r"db\.recent is a view"):
        world.sql("SELECT * FROM db.recent VERSION AS OF 1")


def test_a_view_that_refers_to_itself_is_an_error(world: World) -> None:
    world.wh.create_view("db.loop", "SELECT * FROM db.loop2", schema="x int")
    world.wh.create_view("db.loop2", "SELECT * FROM db.loop", schema="x int")
    with pytest.raises(ValidationError, match=r"refers to itself: db\.loop -> db\.loop2 -> "
                                              r"db\.loop"):
        world.sql("SELECT * FROM db.loop")


def test_ctes_and_temp_views_stay_spark_s(world: World) -> None:
    world.spark.createDataFrame([(3, "three")], "id long, word string") \
        .createOrReplaceTempView("words")
    query = ("WITH old AS (SELECT * FROM db.t.tag_v1) "
             "SELECT old.id, words.word FROM old JOIN words USING (id)")
    assert world.rows(query) == [(3, "three")]


def test_errors_name_what_is_missing(world: World) -> None:
    with pytest.raises(NoSuchTable, match=r"db\.missing"):
        world.sql("SELECT * FROM db.missing")
    with pytest.raises(NoSuchTable, match=r"default\.t"):
        world.sql("SELECT * FROM t")  # one-part names look in namespace default
    with pytest.raises(NoSuchTable, match=r"db\.t\.snapshotz.*db\.t is a table"):
        world.sql("SELECT * FROM db.t.snapshotz")
    with pytest.raises(NoSuchSnapshot, match=r"table db\.t.*no branch or tag named 'nope'"):
        world.sql("SELECT * FROM db.t VERSION AS OF 'nope'")
    with pytest.raises(NoSuchSnapshot, match=r"table db\.t.*snapshot") as e:
        world.sql("SELECT * FROM db.t VERSION AS OF 12345")
    assert e.value.value == 12345
    with pytest.raises(NoSuchSnapshot, match=r"db\.t has no tag named 'audit'"):
        world.sql("SELECT * FROM db.t.tag_audit")  # audit is a branch
    with pytest.raises(NoSuchSnapshot, match=r"table db\.t.*before"):
        world.sql("SELECT * FROM db.t TIMESTAMP AS OF '2001-01-01 00:00:00'")
    with pytest.raises(ValidationError, match="cannot take AS OF"):
        world.sql("SELECT * FROM db.t.branch_audit VERSION AS OF 'v1'")
    with pytest.raises(ValidationError, match="UNRESOLVED_COLUMN") as bad:
        world.sql("SELECT nope FROM db.t")
    assert "__icenb" not in str(bad.value)
    with pytest.raises(ValidationError, match="parse"):
        world.sql("DROP TABLE db.t")


def _plans(log: Path) -> list[dict[str, Any]]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [r for r in map(json.loads, lines) if "files" in r]


def test_where_prunes_as_icenb_scan_does(world: World, tmp_path: Path) -> None:
    """The filters Spark pushes to a table read (learned in a probe) become the read's own
    filter: planning opens the manifests and files ``t.scan(filter=...)`` opens."""
    log = tmp_path / "plan.jsonl"
    for where, icenb_filter in (("kind = 'c'", "kind = 'c'"),
                                ("id > 3 AND kind IN ('a', 'd')", "id > 3 and kind in ('a', 'd')"),
                                ("kind = 'c' OR (kind = 'a' AND id < 4)",
                                 "kind = 'c' or (kind = 'a' and id < 4)")):
        log.unlink(missing_ok=True)
        df = warehouse_sql(f"SELECT id FROM db.t WHERE {where}", world.wh, spark=world.spark,
                           read_options={PLAN_LOG: str(log)})
        ids = sorted(r.id for r in df.collect())
        own = world.t.scan(filter=icenb_filter).plan()
        plans = _plans(log)
        assert len(plans) == 1
        assert plans[0]["manifests_read"] == own.manifests_read
        assert set(plans[0]["files"]) == set(own.files.column("file_path").to_pylist())
        assert own.files_selected < world.t.scan().plan().files_selected  # it prunes
        if where == "kind = 'c'":  # manifests too, by their partition summaries
            assert own.manifests_read < plans[0]["manifests_total"]
        assert ids == sorted(world.t.scan(filter=icenb_filter).to_arrow().column("id")
                             .to_pylist())


def test_a_pruned_dataframe_stays_right_when_reused(world: World) -> None:
    df = world.sql("SELECT id, kind FROM db.t WHERE kind = 'a'")
    assert df.count() == 2  # ids 3, 5 (1 was deleted)
    assert df.where("id > 4").count() == 1
    assert sorted(r.id for r in df.collect()) == [3, 5]
    # one table read twice with different filters, and a CTE used twice
    assert world.rows("SELECT x.id, y.id FROM db.t x JOIN db.t y ON x.id = y.id - 1 "
                      "WHERE x.kind = 'b' AND y.kind = 'a'") == [(2, 3), (4, 5)]
    assert world.rows("WITH e AS (SELECT * FROM db.t) SELECT count(*) FROM e WHERE kind = 'a' "
                      "UNION ALL SELECT count(*) FROM e WHERE kind = 'c'") == [(1,), (2,)]
    assert world.rows("WITH e AS (SELECT * FROM db.t) SELECT (SELECT count(*) FROM e), "
                      "count(*) FROM e WHERE kind = 'b'") == [(6, 3)]


def test_a_view_over_metadata_tables_and_branches(world: World) -> None:
    """A view's SQL may name metadata tables and branch_/tag_ states too: its schema is
    derived through them, and it runs through wh.sql and View.to_spark alike."""
    v = world.wh.create_view(
        "db.audit_ops", "SELECT s.operation, count(*) AS n FROM db.t.snapshots s "
        "JOIN db.t.branch_audit b ON b.id = 20 GROUP BY s.operation", spark=world.spark)
    assert [f.name for f in v.schema.fields] == ["operation", "n"]
    want = [("append", 3), ("delete", 1)]  # the snapshots of main and audit, by operation
    assert world.rows("SELECT * FROM db.audit_ops") == want
    assert sorted(map(tuple, v.to_pandas(spark=world.spark).values.tolist())) == want


def test_the_changelog_by_its_iceberg_name(world: World) -> None:
    got = world.sql("SELECT * FROM db.t.changes")
    want = world.t.changes(None).to_arrow()
    assert got.columns == want.column_names
    assert _arrow_rows(got.toArrow()) == _arrow_rows(want)
    assert world.rows("SELECT _change_type, count(*) FROM db.t.changes GROUP BY 1") == [
        ("DELETE", 1), ("INSERT", 7)]
    with pytest.raises(UnsupportedFeature, match="changelogs"):
        world.sql("SELECT * FROM db.t.changes VERSION AS OF 'v1'")


def test_dates_and_times_before_the_gregorian_calendar_are_not_pruned_away(
        world: World) -> None:
    """Spark hands such literals over in the hybrid Julian calendar: they stay with Spark."""
    import datetime as dt

    from icenb.spark import read_scan

    t = world.wh.create_table("db.old", "id long, ts timestamptz, d date", format_version=2)
    utc = dt.timezone.utc
    t.append([{"id": 1, "ts": dt.datetime(1500, 6, 1, 12, tzinfo=utc), "d": dt.date(1500, 6, 1)},
              {"id": 2, "ts": dt.datetime(1582, 10, 10, tzinfo=utc), "d": dt.date(1582, 10, 10)},
              {"id": 3, "ts": dt.datetime(2024, 1, 1, tzinfo=utc), "d": dt.date(2024, 1, 1)}])
    for where, want in (("ts = TIMESTAMP '1500-06-01 12:00:00 UTC'", [(1,)]),
                        ("d = DATE '1500-06-01'", [(1,)]),
                        ("d = DATE '1582-10-10'", [(2,)]),
                        ("ts < TIMESTAMP '1600-01-01 00:00:00 UTC'", [(1,), (2,)])):
        assert world.rows(f"SELECT id FROM db.old WHERE {where}") == want, where
        pushed = read_scan(t.scan(), world.spark, pushdown=True).where(where).select("id")
        assert sorted(tuple(r) for r in pushed.collect()) == want, where
