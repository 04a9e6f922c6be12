"""Running a view's Spark SQL against icenb tables (icenb.spark.view_sql)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import NoSuchSnapshot, NoSuchTable, ValidationError
from icenb.spark.view_sql import TimeTravel, run_view_sql, table_resolver, view_schema
from icenb.spec.types import DecimalType, LongType, StringType
from icenb.table.warehouse import Warehouse


@dataclass
class World:
    wh: Warehouse
    first: int  # snapshot id of db.events with rows 1, 2 (tagged "first")
    second: int  # current snapshot of db.events: rows 1, 2, 3
    first_ms: int
    spark: Any

    def run(self, sql: str, *, namespace: tuple[str, ...] = ("db",),
            catalog: str | None = "cat", **kw: Any) -> Any:
        return run_view_sql(sql, table_resolver(self.wh.table, self.spark),
                            default_catalog=catalog, default_namespace=namespace,
                            spark=self.spark, **kw)

    def rows(self, sql: str, **kw: Any) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in self.run(sql, **kw).collect())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> World:
    wh = icenb.warehouse(tmp_path_factory.mktemp("views") / "wh")
    events = wh.create_table("db.events", "id long not null, kind string")
    first = events.append([{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}])
    events.create_tag("first")
    time.sleep(0.01)  # the second snapshot gets a later timestamp than the first
    second = events.append([{"id": 3, "kind": "c"}])
    kinds = wh.create_table("db.kinds", "kind string, label string")
    kinds.append([{"kind": "a", "label": "Alpha"}, {"kind": "b", "label": "Beta"},
                  {"kind": "c", "label": "Gamma"}])
    other = wh.create_table("other.nums", "n int")
    other.append([{"n": 7}])
    assert second.timestamp_ms > first.timestamp_ms
    return World(wh, first.snapshot_id, second.snapshot_id, first.timestamp_ms, spark)


def _leaked(spark: Any) -> list[str]:
    return [t.name for t in spark.catalog.listTables() if t.name.startswith("__icenb")]


def test_one_part_name_uses_the_default_namespace(world: World) -> None:
    assert world.rows("SELECT id, kind FROM events") == [(1, "a"), (2, "b"), (3, "c")]
    assert world.rows("SELECT n FROM nums", namespace=("other",)) == [(7,)]


def test_two_part_name_is_namespace_and_table(world: World) -> None:
    assert world.rows("SELECT id FROM db.events WHERE id > 1", namespace=("other",)) == [
        (2,), (3,)]
    assert world.rows("SELECT n FROM other.nums") == [(7,)]


def test_catalog_qualified_names_drop_the_catalog(world: World) -> None:
    assert world.rows("SELECT e.id FROM cat.db.events e WHERE e.kind = 'b'") == [(2,)]
    # The warehouse's own catalog name also means the warehouse.
    assert world.rows("SELECT n FROM wh_cat.other.nums", catalog_names=["wh_cat"]) == [(7,)]
    with pytest.raises(NoSuchTable, match="elsewhere"):
        world.rows("SELECT * FROM elsewhere.db.events")


def test_unaliased_tables_keep_their_qualifiers(world: World) -> None:
    sql = ("SELECT events.id, db.events.kind, cat.db.events.id * 10 AS x FROM cat.db.events "
           "WHERE db.events.id < 3")
    assert world.rows(sql) == [(1, "a", 10), (2, "b", 20)]
    assert world.rows("SELECT db.kinds.* FROM db.kinds WHERE kind = 'c'") == [("c", "Gamma")]


def test_join(world: World) -> None:
    sql = ("SELECT e.id, upper(k.label) FROM events e JOIN db.kinds AS k ON e.kind = k.kind "
           "WHERE k.label <> 'Beta'")
    assert world.rows(sql) == [(1, "ALPHA"), (3, "GAMMA")]
    # The same table twice (a self-join) is read once and joined with itself.
    sql = "SELECT a.id, b.id FROM events a JOIN events b ON a.id + 1 = b.id"
    assert world.rows(sql) == [(1, 2), (2, 3)]


def test_cte(world: World) -> None:
    sql = ("WITH recent AS (SELECT * FROM events WHERE id > 1), "
           "labelled AS (SELECT r.id, k.label FROM recent r JOIN kinds k USING (kind)) "
           "SELECT id, label FROM labelled")
    assert world.rows(sql) == [(2, "Beta"), (3, "Gamma")]


def test_cte_shadows_a_table_but_its_own_definition_reads_the_table(world: World) -> None:
    sql = "WITH kinds AS (SELECT 'z' AS kind) SELECT kind FROM kinds"
    assert world.rows(sql) == [("z",)]
    sql = "WITH events AS (SELECT id FROM events WHERE id = 3) SELECT id FROM events"
    assert world.rows(sql) == [(3,)]
    # WITH RECURSIVE: the definition sees its own name.
    sql = ("WITH RECURSIVE r(n) AS (SELECT min(id) FROM events UNION ALL "
           "SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r")
    assert world.rows(sql) == [(1,), (2,), (3,)]


def test_subqueries(world: World) -> None:
    sql = ("SELECT id FROM events WHERE kind IN (SELECT kind FROM kinds WHERE label LIKE 'B%') "
           "OR id = (SELECT max(n) - 4 FROM other.nums)")
    assert world.rows(sql) == [(2,), (3,)]
    sql = ("SELECT t.id FROM (SELECT id FROM events WHERE EXISTS "
           "(SELECT 1 FROM kinds k WHERE k.kind = events.kind AND k.label = 'Alpha')) t")
    assert world.rows(sql) == [(1,)]


def test_version_as_of_snapshot_id_and_tag(world: World) -> None:
    assert world.rows(f"SELECT id FROM events VERSION AS OF {world.first}") == [(1,), (2,)]
    assert world.rows("SELECT id FROM db.events VERSION AS OF 'first'") == [(1,), (2,)]
    assert world.rows(f"SELECT id FROM events FOR SYSTEM_VERSION AS OF {world.second}") == [
        (1,), (2,), (3,)]
    # Two states of one table in one query: each is its own read.
    sql = ("SELECT now.id FROM events now LEFT ANTI JOIN events VERSION AS OF 'first' AS old "
           "ON now.id = old.id")
    assert world.rows(sql) == [(3,)]
    with pytest.raises(NoSuchSnapshot):
        world.rows("SELECT id FROM events VERSION AS OF 12345")
    with pytest.raises(NoSuchSnapshot, match="nope"):
        world.rows("SELECT id FROM events VERSION AS OF 'nope'")


def test_timestamp_as_of(world: World) -> None:
    # Independent of the session time zone (America/Los_Angeles in these tests).
    assert world.rows(f"SELECT id FROM events TIMESTAMP AS OF timestamp_millis({world.first_ms})"
                      ) == [(1,), (2,)]
    iso = datetime.fromtimestamp(world.first_ms / 1000, timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")
    assert world.rows(f"SELECT id FROM events FOR SYSTEM_TIME AS OF '{iso}'") == [(1,), (2,)]
    assert world.rows("SELECT id FROM events TIMESTAMP AS OF current_timestamp()") == [
        (1,), (2,), (3,)]
    with pytest.raises(NoSuchSnapshot):
        world.rows("SELECT id FROM events TIMESTAMP AS OF '2001-01-01 00:00:00'")


def test_time_travel_is_resolved_for_the_resolver(world: World) -> None:
    calls: list[tuple[tuple[str, ...], TimeTravel | None]] = []

    def resolve(ident: tuple[str, ...], tt: TimeTravel | None) -> Any:
        calls.append((ident, tt))
        return world.spark.range(1)

    run_view_sql(f"SELECT * FROM t VERSION AS OF {world.first} JOIN a.b.u VERSION AS OF 'x' "
                 "JOIN c.d.e.f TIMESTAMP AS OF timestamp_millis(1700000000123)",
                 resolve, default_catalog="c", default_namespace=("ns",), spark=world.spark)
    assert calls == [(("ns", "t"), TimeTravel(snapshot_id=world.first)),
                     (("a", "b", "u"), TimeTravel(ref="x")),
                     (("d", "e", "f"), TimeTravel(timestamp_ms=1700000000123))]


def test_temp_views_functions_and_unicode_keep_working(world: World) -> None:
    world.spark.createDataFrame([(2, "two")], "id long, word string").createOrReplaceTempView(
        "user_words")
    sql = ("SELECT '😀 ü' AS s, e.id, w.word, concat_ws('-', e.kind, w.word) FROM events e "
           "JOIN user_words w ON e.id = w.id")
    assert world.rows(sql) == [("😀 ü", 2, "two", "b-two")]


def test_no_temp_view_leaks_and_the_dataframe_stays_usable(world: World) -> None:
    df = world.run("SELECT id, kind FROM events e JOIN kinds USING (kind)")
    assert _leaked(world.spark) == []
    assert df.where("id > 1").count() == 2
    assert sorted(r.id for r in df.collect()) == [1, 2, 3]
    for bad in ("SELECT nope FROM events", "SELECT * FROM events JOIN missing"):
        with pytest.raises((ValidationError, NoSuchTable)):
            world.run(bad)
    assert _leaked(world.spark) == []


def test_view_schema(world: World) -> None:
    schema = view_schema("SELECT id, upper(kind) AS k, id * 2.5 AS d FROM events",
                         table_resolver(world.wh.table, world.spark), default_catalog=None,
                         default_namespace=("db",), spark=world.spark)
    assert [(f.field_id, f.name, f.field_type, f.required) for f in schema.fields] == [
        (1, "id", LongType(), True),
        (2, "k", StringType(), False),
        (3, "d", DecimalType(23, 1), True),  # Spark: long (decimal(20,0)) * decimal(2,1)
    ]


def test_bad_sql(world: World) -> None:
    sql = "SELECT id FROM events WHERE id >"
    with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR") as e:
        world.run(sql)
    assert e.value.field == "sql" and e.value.value == sql
    # Commands are not queries: refused, never run.
    with pytest.raises(ValidationError, match="parse"):
        world.run("DROP TABLE events")
    with pytest.raises(ValidationError, match="non-empty"):
        world.run("  ")


def test_unknown_table(world: World) -> None:
    with pytest.raises(NoSuchTable, match=r"db\.missing"):
        world.run("SELECT * FROM missing")
    with pytest.raises(NoSuchTable, match=r"x\.y"):
        world.run("SELECT * FROM events JOIN x.y ON true")


def test_unknown_column(world: World) -> None:
    sql = "SELECT e.nope FROM events e"
    with pytest.raises(ValidationError, match="UNRESOLVED_COLUMN") as e:
        world.run(sql)
    assert e.value.field == "sql" and e.value.value == sql
    assert "__icenb" not in str(e.value)


def test_bad_timestamp(world: World) -> None:
    with pytest.raises(ValidationError, match="time travel"):
        world.run("SELECT * FROM events TIMESTAMP AS OF 'not a time'")


def test_works_on_a_filesystem_warehouse(tmp_path: Path, world: World) -> None:
    wh = icenb.warehouse(tmp_path / "fs", catalog="filesystem")
    wh.create_table("ns.t", "x int").append([{"x": 5}])
    df = run_view_sql("SELECT x + 1 FROM t", table_resolver(wh.table, world.spark),
                      default_catalog=None, default_namespace=("ns",), spark=world.spark)
    assert [tuple(r) for r in df.collect()] == [(6,)]
