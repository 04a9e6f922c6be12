"""Views through the user API: a warehouse creates, replaces, rolls back and lists them; a view
shows its versions, log, schemas and SQL; ``icenb.open`` tells views from tables. (Running views
on Spark: tests/spark/test_view.py; against Java: tests/table/test_view_java.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle
from icenb.errors import (
    AlreadyExists,
    IcebergError,
    NotFound,
    UnsupportedFeature,
    UnsupportedVersion,
    ValidationError,
)
from icenb.io.metadata_files import read_metadata_json
from icenb.spec.view_metadata import view_metadata_to_json
from icenb.table import Table, View
from icenb.table.warehouse import Warehouse

SCHEMA = "c1 int, c2 string"
COUNT = "n long not null"


@pytest.fixture(params=["sql", "filesystem"])
def wh(request: pytest.FixtureRequest, tmp_path: Path) -> Warehouse:
    w = icenb.warehouse(tmp_path / "wh", catalog=request.param)
    w.create_table("db.base_tab", SCHEMA)
    return w


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_create_replace_and_the_version_log(wh: Warehouse) -> None:
    v = wh.create_view("db.common_view", "SELECT * FROM base_tab", schema=SCHEMA,
                       comment="all rows")
    assert isinstance(v, View) and v.name == "db.common_view"
    assert v.current_version_id == 1 and v.properties == {"comment": "all rows"}
    assert v.sql_for("spark") == "SELECT * FROM base_tab" == v.sql_for("SPARK")
    assert v.current_version.default_namespace == ("db",)
    assert [f.name for f in v.schema.fields] == ["c1", "c2"]
    first_file = v.metadata_location
    v.replace("SELECT count(*) AS n FROM base_tab", schema=COUNT)
    assert v.current_version_id == 2 and v.metadata_location != first_file
    assert v.schema.fields[0].name == "n" and v.schema_for(1).fields[0].name == "c1"
    assert v.current_version.summary["operation"] == "replace"
    assert [e.version_id for e in v.version_log] == [1, 2]
    # reloaded from the catalog: the same state
    again = wh.view("db.common_view")
    assert again.metadata == v.metadata and again.metadata_location == v.metadata_location
    assert wh.views() == ["db.common_view"] and wh.tables() == ["db.base_tab"]
    assert wh.views("db") == ["db.common_view"]


def test_an_equivalent_replace_reuses_the_version_id(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT c1 FROM base_tab", schema="c1 int")
    v.replace("SELECT c2 FROM base_tab", schema="c2 string")
    v.replace("SELECT c1 FROM base_tab", schema="c1 int")  # what version 1 says
    assert [x.version_id for x in v.versions] == [1, 2]
    assert v.current_version_id == 1
    assert [e.version_id for e in v.version_log] == [1, 2, 1]
    assert len(v.metadata.schemas) == 2  # the schema was reused too


def test_rollback_and_version_at(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT c1 FROM base_tab", schema="c1 int")
    v.replace("SELECT c2 FROM base_tab", schema="c2 string")
    v.replace("SELECT c1, c2 FROM base_tab", schema=SCHEMA)
    log_before = list(v.version_log)
    v.rollback_to(2)
    assert v.current_version_id == 2 and v.sql_for() == "SELECT c2 FROM base_tab"
    log = list(v.version_log)
    assert log[:3] == log_before and log[-1].version_id == 2
    for entry in log:
        assert v.version_at(entry.timestamp_ms).version_id == entry.version_id
    with pytest.raises(NotFound, match=r"before|starts later"):
        v.version_at(log[0].timestamp_ms - 1)
    v.set_current_version(3)
    assert v.current_version_id == 3
    assert wh.view("db.v").current_version_id == 3


def test_several_dialects_and_the_drop_dialect_rule(wh: Warehouse) -> None:
    v = wh.create_view("db.v", {"spark": "SELECT c1 FROM base_tab",
                                "trino": "SELECT c1 FROM db.base_tab"}, schema="c1 int")
    assert sorted(v.dialects()) == ["spark", "trino"]
    assert v.sql_for("trino") == "SELECT c1 FROM db.base_tab"
    with pytest.raises(NotFound, match="dialects: spark, trino") as e:
        v.sql_for("presto")
    assert e.value.field == "dialect"
    before = files_under(Path(wh.location))
    with pytest.raises(ValidationError, match="trino") as e2:
        v.replace("SELECT c2 FROM base_tab", schema="c2 string")
    assert "replace.drop-dialect.allowed" in str(e2.value)
    assert files_under(Path(wh.location)) == before and v.current_version_id == 1
    with pytest.raises(ValidationError, match="spark"):
        v.replace({"spark": "SELECT 1", "SPARK": "SELECT 2"}, schema="x int")
    v.update_properties({"replace.drop-dialect.allowed": "true"})
    v.replace("SELECT c2 FROM base_tab", schema="c2 string")
    assert v.dialects() == ("spark",) and v.current_version_id == 2


def test_unknown_versions_are_refused_and_nothing_changes(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT c1 FROM base_tab", schema="c1 int")
    before = files_under(Path(wh.location))
    with pytest.raises(NotFound, match="retained: 1") as e:
        v.rollback_to(7)
    assert e.value.value == 7
    assert files_under(Path(wh.location)) == before
    assert wh.view("db.v").metadata == v.metadata


def test_properties_and_version_history_retention(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT 1 AS x", schema="x int",
                       properties={"version.history.num-entries": "2", "owner": "ana"})
    for i in range(2, 5):
        v.replace(f"SELECT {i} AS x", schema="x int")
    assert sorted(x.version_id for x in v.versions) == [3, 4]
    assert {e.version_id for e in v.version_log} <= {3, 4}  # the log names retained ones
    v.update_properties({"team": "data"}, ["owner"])
    assert dict(v.properties) == {"version.history.num-entries": "2", "team": "data"}
    with pytest.raises(ValidationError, match="num-entries"):
        v.update_properties({"version.history.num-entries": "0"})
    assert wh.view("db.v").properties == v.properties


def test_names_are_shared_with_tables(wh: Warehouse) -> None:
    wh.create_view("db.v", "SELECT 1 AS x", schema="x int")
    with pytest.raises(AlreadyExists, match="is a table"):
        wh.create_view("db.base_tab", "SELECT 1 AS x", schema="x int")
    with pytest.raises(AlreadyExists, match="is a view"):
        wh.create_table("db.v", SCHEMA)
    with pytest.raises(AlreadyExists):
        wh.create_view("db.v", "SELECT 2 AS x", schema="x int")
    renamed = wh.rename_view("db.v", "db.w")
    assert renamed.name == "db.w" and wh.views() == ["db.w"]
    wh.drop_view("db.w")
    assert wh.views() == []
    with pytest.raises(NotFound):
        wh.view("db.w")


def test_bad_input_writes_nothing(wh: Warehouse) -> None:
    before = files_under(Path(wh.location))
    with pytest.raises(ValidationError, match="namespace"):
        wh.create_view("v", "SELECT 1 AS x", schema="x int")
    with pytest.raises(ValidationError, match="query"):
        wh.create_view("db.v", "  ", schema="x int")
    with pytest.raises(ValidationError, match="schema"):  # no Spark SQL to derive it from
        wh.create_view("db.v", {"trino": "SELECT 1 AS x"})
    with pytest.raises(ValidationError):
        wh.create_view("db.v", "SELECT 1 AS x", schema="x notatype")
    assert files_under(Path(wh.location)) == before


def test_open_tells_views_from_tables(wh: Warehouse, tmp_path: Path) -> None:
    v = wh.create_view("db.v", "SELECT c1 FROM base_tab", schema="c1 int",
                       properties={"write.metadata.compression-codec": "none"})
    v.replace("SELECT c2 FROM base_tab", schema="c2 string")
    assert v.metadata_location is not None and not v.metadata_location.endswith(".gz.metadata.json")
    for where in (v.metadata_location, v.location):
        opened = icenb.open(where)
        assert isinstance(opened, View)
        assert opened.metadata == v.metadata and opened.metadata_location == v.metadata_location
    table = icenb.open(wh.table("db.base_tab").location)
    assert isinstance(table, Table)
    opened = icenb.open(v.metadata_location)
    assert isinstance(opened, View)
    with pytest.raises(UnsupportedFeature, match="read-only"):
        opened.replace("SELECT 1 AS x", schema="x int")
    with pytest.raises(UnsupportedFeature, match="opened by location"):
        opened.to_spark()


def test_gzip_by_default_as_java(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT 1 AS x", schema="x int")
    assert v.metadata_location is not None
    with open(v.metadata_location, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    doc = json.loads(read_metadata_json(v.metadata_location))
    assert doc == view_metadata_to_json(v.metadata)


def test_a_view_format_version_above_1_is_refused(tmp_path: Path, wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT 1 AS x", schema="x int")
    doc = view_metadata_to_json(v.metadata)
    doc["format-version"] = 2
    path = tmp_path / "v2.metadata.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UnsupportedVersion) as e:
        icenb.open(str(path))
    assert e.value.field == "format-version" and e.value.value == 2


def test_display_of_a_view(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT c1 FROM base_tab", schema="c1 int")
    v.replace("SELECT c2 FROM base_tab WHERE c2 = '<b>'", schema="c2 string")
    bundle = mimebundle(v)
    assert "db.v" in bundle["text/html"] and "&lt;b&gt;" in bundle["text/html"]
    assert bundle["text/plain"].startswith("View db.v  (version 2 of 2)")
    assert str(v) == bundle["text/plain"]
    assert "\n" not in repr(v) and "current_version_id=2" in repr(v)
    log = mimebundle(v.version_log)
    assert "text/html" in log


def test_java_written_views_open_as_views(java_tables: object) -> None:
    from tests.reference_fixtures import JavaTables

    assert isinstance(java_tables, JavaTables)
    for entry in java_tables.entries(kind="view"):
        location = java_tables.location(entry["name"])
        view = icenb.open(location)
        assert isinstance(view, View), location
        latest = java_tables.latest(entry["name"])
        assert os.path.basename(str(view.metadata_location)) == latest.path.name
        raw = json.loads(read_metadata_json(str(latest.path)))
        assert view.current_version_id == raw["current-version-id"]
        assert [x.version_id for x in view.versions] == [x["version-id"]
                                                          for x in raw["versions"]]
        assert [(e.timestamp_ms, e.version_id) for e in view.version_log] == [
            (e["timestamp-ms"], e["version-id"]) for e in raw["version-log"]]


def test_errors_are_icenb_errors(wh: Warehouse) -> None:
    with pytest.raises(IcebergError):
        wh.view("db.nothing")


def test_appendix_a_of_the_draft_spec(wh: Warehouse) -> None:
    """The draft view spec's example (Appendix A), its four statements end to end."""
    base = wh.table("db.base_tab")
    base.append(pa.table({"c1": pa.array([1, 2], pa.int32()), "c2": ["one", "two"]}))
    v = wh.create_view("db.common_view", "SELECT * FROM base_tab", schema=SCHEMA,
                       comment="View captures all the data from the table")
    v.replace("SELECT count(*) AS my_cnt FROM base_tab", schema="my_cnt long not null",
              properties={"comment": "View captures count of the data from the table"})
    assert [x.version_id for x in v.versions] == [1, 2]
    assert [e.version_id for e in v.version_log] == [1, 2]
    assert v.properties["comment"] == "View captures count of the data from the table"
    assert [s.schema_id for s in v.metadata.schemas] == [0, 1]
    assert v.version(1).sql_for("spark") == "SELECT * FROM base_tab"


def test_compare_two_versions(wh: Warehouse) -> None:
    v = wh.create_view("db.v", "SELECT c1, c2\nFROM base_tab\nWHERE c1 > 0",
                       schema="c1 int, c2 string")
    v.replace({"spark": "SELECT c2, count(*) AS n\nFROM base_tab\nWHERE c1 > 0\nGROUP BY c2",
               "trino": "SELECT c2, count(*) AS n FROM db.base_tab GROUP BY 1"},
              schema="c2 string not null, n long not null")
    d = v.compare(1, 2)
    assert d == v.compare(1)  # b defaults to the current version
    spark, trino = d.dialects
    assert spark.dialect == "spark" and spark.changed
    assert "-SELECT c1, c2" in spark.diff and "+GROUP BY c2" in spark.diff
    assert " FROM base_tab" in spark.diff  # context kept
    assert trino.sql_a is None and trino.sql_b is not None
    changes = {(c.kind, c.name): (c.before, c.after) for c in d.columns}
    assert changes == {("added", "n"): (None, "long"), ("removed", "c1"): ("int?", None),
                       ("nullability", "c2"): ("optional", "required")}
    assert not d.same and v.compare(2, 2).same
    r = mimebundle(d)
    assert "icenb-b-added\">+GROUP BY c2" in r["text/html"]
    assert r["text/plain"].startswith("View db.v: version 1 -> 2")
    with pytest.raises(NotFound):
        v.compare(1, 9)


def test_a_commit_that_lost_a_race_is_reapplied(wh: Warehouse) -> None:
    first = wh.create_view("db.v", "SELECT c1 FROM base_tab", schema="c1 int")
    second = wh.view("db.v")  # the same view, loaded before the next commit
    first.replace("SELECT c2 FROM base_tab", schema="c2 string")
    second.replace("SELECT c1, c2 FROM base_tab", schema=SCHEMA)  # from a stale base
    assert second.current_version_id == 3
    assert [e.version_id for e in second.version_log] == [1, 2, 3]
    assert wh.view("db.v").metadata == second.metadata
    # `first` is stale too: its property change is re-applied on the new state, which then
    # keeps only the current version 3
    first.update_properties({"version.history.num-entries": "1"})
    assert [x.version_id for x in first.versions] == [3]
    # `second` still has version 1 in memory; on the refreshed view it is gone: the rollback
    # raises and writes nothing
    before = files_under(Path(wh.location))
    with pytest.raises(NotFound):
        second.rollback_to(1)
    assert files_under(Path(wh.location)) == before
    assert [x.version_id for x in second.versions] == [3]
