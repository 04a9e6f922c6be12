"""Views icenb writes, registered in Iceberg Java 1.10's HiveCatalog, read and run there, and
changed there and read back by icenb (tests/reference/java_views.py: one JVM for the module).

Iceberg 1.10.2 has no ``registerView``; java_views.py commits the parsed icenb file as a new view
through the HiveCatalog's own view operations, which is what a later ``registerView`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.spec.schema import schema_to_json
from icenb.spec.view_metadata import SQLViewRepresentation, ViewMetadata, ViewVersion
from icenb.table.view import View
from tests.reference_fixtures import run_reference_batch

CODECS = ("gzip", "none")
DROP_DIALECT = "replace.drop-dialect.allowed"
ROWS = {"c1": [1, 2, 3, 4], "c2": ["a", "b", None, "d"]}
SQL_1 = "SELECT c1, c2 FROM base_tab"
SQL_2 = "SELECT c1, upper(c2) AS c2 FROM base_tab WHERE c1 > 1"
SQL_3 = {"spark": "SELECT c1, c2 FROM base_tab WHERE c1 < 4",
         "trino": 'SELECT "c1", "c2" FROM "base_tab" WHERE "c1" < 4'}
# What Java changes: Spark SQL on the gzip view, the Java API on the plain one.
SPARK_REPLACE = "SELECT c1, concat(c2, '!') AS c2 FROM hive.db.base_tab WHERE c1 <> 2"
JAVA_REPLACE = {"spark": "SELECT c1, c2 FROM base_tab WHERE c1 >= 3",
                "trino": 'SELECT "c1", "c2" FROM "base_tab" WHERE "c1" >= 3'}


@dataclass
class Written:
    """One icenb-written view: every metadata file it went through, and its rows."""

    view: View
    files: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)


@dataclass
class Results:
    written: dict[str, Written]
    java: dict[str, dict[str, Any]]
    table_location: str
    warehouse: Any


def _rows(df: Any) -> list[list[Any]]:
    """pandas rows as lists, missing values as None, ordered by the first column."""
    out = [[None if (isinstance(x, float) and math.isnan(x)) or x is None else x for x in row]
           for row in df.astype(object).values.tolist()]
    return sorted(out, key=lambda r: r[0])


def _write_view(wh: Any, codec: str) -> Written:
    """create, replace, replace with two dialects, a property change, a rollback to version 2
    (which drops the trino dialect: allowed by the property change, as in Java)."""
    props = {"team": "analytics"}
    if codec == "none":
        props["write.metadata.compression-codec"] = "none"
    v = wh.create_view(f"db.v_{codec}", SQL_1, properties=props, comment="icenb view")
    w = Written(v, [v.metadata_location])
    v.replace(SQL_2)
    w.files.append(v.metadata_location)
    v.replace(SQL_3)
    w.files.append(v.metadata_location)
    v.update_properties({"steward": "ø", DROP_DIALECT: "true"}, ["team"])
    w.files.append(v.metadata_location)
    v.rollback_to(2)
    w.files.append(v.metadata_location)
    w.rows = _rows(v.to_pandas())
    return w


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    root = tmp_path_factory.mktemp("view_java")
    wh = icenb.warehouse(root / "wh")
    t = wh.create_table("db.base_tab", "c1 int, c2 string")
    t.append(pa.table({"c1": pa.array(ROWS["c1"], pa.int32()), "c2": ROWS["c2"]}))
    written = {codec: _write_view(wh, codec) for codec in CODECS}

    requests: dict[str, dict[str, Any]] = {
        "ns": {"op": "create_namespace", "namespace": "db"},
        "table": {"op": "register_table", "name": "db.base_tab",
                  "metadata_location": t.metadata_location},
    }
    for codec, w in written.items():
        name = f"db.v_{codec}"
        requests[f"register {codec}"] = {"op": "register_view", "name": name,
                                         "metadata_location": w.view.metadata_location}
        requests[f"describe {codec}"] = {"op": "describe_view", "name": name}
        for i, path in enumerate(w.files):
            requests[f"parse {codec} {i}"] = {"op": "parse", "metadata_location": path}
        requests[f"query {codec}"] = {"op": "query",
                                      "sql": f"SELECT * FROM hive.{name} ORDER BY c1"}
    requests["change gzip"] = {"op": "sql", "statements": [
        f"CREATE OR REPLACE VIEW hive.db.v_gzip AS {SPARK_REPLACE}",
        "ALTER VIEW hive.db.v_gzip SET TBLPROPERTIES ('changed-by'='spark', 'steward'='java')",
    ]}
    plain = written["none"].view
    requests["change none"] = {"op": "replace_version", "name": "db.v_none",
                               "queries": JAVA_REPLACE, "default_namespace": ["db"],
                               "schema": schema_to_json(plain.schema)}
    requests["props none"] = {"op": "update_properties", "name": "db.v_none",
                              "set": {"changed-by": "java"}, "remove": ["steward"]}
    for codec in CODECS:
        requests[f"after {codec}"] = {"op": "describe_view", "name": f"db.v_{codec}"}
        requests[f"query after {codec}"] = {
            "op": "query", "sql": f"SELECT * FROM hive.db.v_{codec} ORDER BY c1"}

    out = run_reference_batch("java_views.py", list(requests.values()),
                              args=["--hive", str(root / "hive")])
    java = dict(zip(requests, out, strict=True))
    for key, result in java.items():
        assert result["ok"], f"{key}: {result}"
    return Results(written, java, t.metadata_location or "", wh)


# ------------------------------------------------------------------ comparison helpers


def _version(v: ViewVersion) -> dict[str, Any]:
    """An icenb view version in java_views.py's shape."""
    reps = [{"type": r.type, "dialect": r.dialect, "sql": r.sql}
            for r in v.representations if isinstance(r, SQLViewRepresentation)]
    return {"version_id": v.version_id, "schema_id": v.schema_id,
            "timestamp_ms": v.timestamp_ms, "summary": dict(v.summary),
            "representations": reps, "default_catalog": v.default_catalog,
            "default_namespace": list(v.default_namespace)}


def _described(md: ViewMetadata) -> dict[str, Any]:
    """What icenb holds, in the shape of java_views.py's describe_view/parse."""
    return {
        "uuid": md.view_uuid,
        "format_version": md.format_version,
        "location": md.location,
        "current_version_id": md.current_version_id,
        "versions": [_version(v) for v in md.versions],
        "version_log": [{"version_id": h.version_id, "timestamp_ms": h.timestamp_ms}
                        for h in md.version_log],
        "schemas": [schema_to_json(s) for s in md.schemas],
        "properties": dict(md.properties),
    }


def _java_part(java: dict[str, Any]) -> dict[str, Any]:
    return {k: java[k] for k in ("uuid", "format_version", "location", "current_version_id",
                                 "versions", "version_log", "schemas", "properties")}


# ------------------------------------------------------------------ icenb -> Java


@pytest.mark.parametrize("codec", CODECS)
def test_java_registers_the_icenb_file_as_is(results: Results, codec: str) -> None:
    w = results.written[codec]
    registered = results.java[f"register {codec}"]
    assert registered["metadata_location"] == w.view.metadata_location
    assert results.java[f"describe {codec}"]["metadata_location"] == w.view.metadata_location
    assert results.java["table"]["metadata_location"] == results.table_location
    assert all(f.endswith(".metadata.json") for f in w.files)
    assert [f.endswith(".gz.metadata.json") for f in w.files] == [codec == "gzip"] * 5


@pytest.mark.parametrize("codec", CODECS)
def test_java_load_view_sees_the_same_view(results: Results, codec: str) -> None:
    v = results.written[codec].view
    java = results.java[f"describe {codec}"]
    assert _java_part(java) == _described(v.metadata)
    # What a user checks: three versions, rolled back to 2, the log says so, the new property.
    assert [x["version_id"] for x in java["versions"]] == [1, 2, 3]
    assert java["current_version_id"] == 2
    assert [x["version_id"] for x in java["version_log"]] == [1, 2, 3, 2]
    assert [r["dialect"] for r in java["versions"][2]["representations"]] == ["spark", "trino"]
    assert java["properties"]["steward"] == "ø"
    assert "team" not in java["properties"]
    assert java["properties"]["comment"] == "icenb view"
    assert java["json"]["view-uuid"] == v.uuid


@pytest.mark.parametrize("codec", CODECS)
def test_java_parser_reads_every_icenb_metadata_file_alike(results: Results, codec: str) -> None:
    files = results.written[codec].files
    assert len(files) == 5
    for i, path in enumerate(files):
        java = results.java[f"parse {codec} {i}"]
        mine = icenb.open(path)
        assert isinstance(mine, View)
        assert java["metadata_location"] == path
        assert _java_part(java) == _described(mine.metadata), path
    log_lengths = [len(results.java[f"parse {codec} {i}"]["version_log"]) for i in range(5)]
    assert log_lengths == [1, 2, 3, 3, 4]


@pytest.mark.parametrize("codec", CODECS)
def test_java_runs_the_view_to_the_same_rows(results: Results, codec: str) -> None:
    java = results.java[f"query {codec}"]
    assert java["columns"] == ["c1", "c2"]
    assert java["rows"] == results.written[codec].rows
    assert java["rows"] == [[2, "B"], [3, None], [4, "D"]]  # version 2 (the rollback target)


# ------------------------------------------------------------------ Java -> icenb


def _read_back(results: Results, codec: str) -> tuple[dict[str, Any], View, View]:
    after = results.java[f"after {codec}"]
    before = results.written[codec].view
    back = icenb.open(after["metadata_location"])
    assert isinstance(back, View)
    return after, before, back


@pytest.mark.parametrize("codec", CODECS)
def test_icenb_reads_the_java_change_back(results: Results, codec: str) -> None:
    after, before, back = _read_back(results, codec)
    # Java wrote a new file next to icenb's, numbered on from icenb's, in the view's codec.
    new_path = Path(after["metadata_location"])
    assert new_path.parent == Path(before.metadata_location or "").parent
    assert new_path.name.endswith(".gz.metadata.json") == (codec == "gzip")
    assert int(new_path.name[:5]) == int(Path(before.metadata_location or "").name[:5]) + 2
    # icenb reads exactly what Java holds.
    assert _described(back.metadata) == _java_part(after)
    # One new version, current, logged; everything icenb wrote is still there unchanged.
    assert [v.version_id for v in back.versions] == [1, 2, 3, 4]
    assert back.current_version_id == 4
    assert tuple(back.versions[:3]) == before.versions
    assert tuple(back.version_log[:4]) == tuple(before.version_log)
    assert [h.version_id for h in back.version_log] == [1, 2, 3, 2, 4]
    assert back.uuid == before.uuid and back.location == before.location
    assert tuple(back.metadata.schemas[: len(before.metadata.schemas)]) == \
        before.metadata.schemas
    assert back.properties["changed-by"] in {"spark", "java"}


def test_icenb_reads_spark_sql_replace(results: Results) -> None:
    _, before, back = _read_back(results, "gzip")
    new = back.current_version
    assert new.sql_for("spark") == SPARK_REPLACE
    # Spark's CREATE OR REPLACE VIEW records the session's catalog and namespace and its own
    # summary (engine-name spark, no "operation" key), where icenb records the view's namespace.
    assert new.default_catalog == "ref" and new.default_namespace == ()
    assert new.summary["engine-name"] == "spark"
    assert "operation" not in new.summary
    assert before.versions[0].summary["operation"] == "create"
    # Spark's CREATE OR REPLACE adds its own properties; icenb's stay.
    props = dict(back.properties)
    assert props.pop("spark.query-column-names") == "c1,c2"
    assert props.pop("engine_version").startswith("Spark 3.5.")
    assert props.pop("create_engine_version").startswith("Spark 3.5.")
    assert props == {**before.properties, "changed-by": "spark", "steward": "java"}
    assert results.java["query after gzip"]["rows"] == [[1, "a!"], [3, None], [4, "d!"]]


def test_icenb_reads_java_api_replace_and_runs_it(results: Results) -> None:
    after, before, back = _read_back(results, "none")
    new = back.current_version
    assert {d: new.sql_for(d) for d in new.dialects} == JAVA_REPLACE
    assert new.default_namespace == ("db",) and new.default_catalog is None
    # Java's replaceVersion reuses the current schema (same fields): no new schema.
    assert new.schema_id == before.current_version.schema_id
    assert back.metadata.schemas == before.metadata.schemas
    expected = {k: v for k, v in before.properties.items() if k != "steward"}
    assert dict(back.properties) == {**expected, "changed-by": "java"}
    java_rows = results.java["query after none"]["rows"]
    assert java_rows == [[3, None], [4, "d"]]
    # icenb runs Java's version against its own table, to Java's rows.
    mine = results.warehouse.register_view("db.v_none_java", after["metadata_location"])
    assert _rows(mine.to_pandas()) == java_rows
