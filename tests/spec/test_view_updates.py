"""Tests for icenb.spec.view_updates: creating views, replace, rollback, properties, retention.

Golden behaviour: Iceberg Java 1.10.2's ``ViewMetadata.Builder`` driven on the same sequence of
changes (tests/reference/java_view_builder.py, one JVM for the module).
"""

from __future__ import annotations

import gzip
import json
import uuid
from typing import Any

import pytest

from icenb.errors import IcebergError, NotFound, UnsupportedVersion, ValidationError
from icenb.spec.schema import Schema, schema_to_json
from icenb.spec.types import IntegerType, LongType, NestedField, StringType
from icenb.spec.view_metadata import (
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    load_view_metadata,
    view_metadata_from_json,
    view_metadata_to_json,
)
from icenb.spec.view_updates import (
    add_view_version,
    new_view_metadata,
    set_current_view_version,
    set_view_properties,
)
from tests.reference_fixtures import JavaTables, MetadataFile, run_reference_batch

UUID = "fa6506c3-7681-40c8-86dc-e36561f83385"
LOC = "s3://bucket/wh/db/v"
S1 = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()), schema_id=0)
S2 = Schema(NestedField(1, "id", LongType()), NestedField(2, "s2", StringType()), schema_id=0)
S3 = Schema(NestedField(1, "n", IntegerType(), required=True), schema_id=9)


def both(sql: str) -> dict[str, str]:
    return {"spark": sql, "trino": sql}


def create(**kw: Any) -> ViewMetadata:
    args: dict[str, Any] = {"default_namespace": ["db"], "timestamp_ms": 1000, "view_uuid": UUID}
    args.update(kw)
    schema = args.pop("schema", S1)
    reps = args.pop("reps", both("SELECT 1"))
    return new_view_metadata(args.pop("location", LOC), schema, reps, **args)


def replace(md: ViewMetadata, sql: str | dict[str, str], ts: int, schema: Schema = S1,
            **kw: Any) -> ViewMetadata:
    reps = both(sql) if isinstance(sql, str) else sql
    return add_view_version(md, schema, reps, default_namespace=kw.pop("default_namespace",
                                                                       ["db"]),
                            timestamp_ms=ts, **kw)


def log(md: ViewMetadata) -> list[tuple[int, int]]:
    return [(e.version_id, e.timestamp_ms) for e in md.version_log]


def ids(md: ViewMetadata) -> list[int]:
    return [v.version_id for v in md.versions]


def doc(md: ViewMetadata) -> str:
    return json.dumps(view_metadata_to_json(md), sort_keys=True)


# --------------------------------------------------------------------------- new view


def test_new_view_first_schema_and_version() -> None:
    md = create(schema=S3, reps={"spark": "SELECT 1 AS n"}, default_catalog="cat",
                properties={"comment": "c"}, engine_name="spark", engine_version="4.1.4")
    assert md.view_uuid == UUID and md.format_version == 1 and md.location == LOC
    assert [s.schema_id for s in md.schemas] == [0]  # the given schema id 9 is not kept
    assert md.schemas[0].fields == S3.fields  # field ids as given
    v = md.current_version
    assert (v.version_id, v.schema_id, v.timestamp_ms) == (1, 0, 1000)
    assert dict(v.summary) == {"operation": "create", "engine-name": "spark",
                               "engine-version": "4.1.4"}
    assert v.default_catalog == "cat" and v.default_namespace == ("db",)
    assert v.sql_for("SPARK") == "SELECT 1 AS n"
    assert log(md) == [(1, 1000)]
    assert dict(md.properties) == {"comment": "c"}


def test_new_view_uuid_random_or_checked() -> None:
    a, b = create(view_uuid=None), create(view_uuid=None)
    assert uuid.UUID(a.view_uuid) and a.view_uuid != b.view_uuid
    assert create(view_uuid=uuid.UUID(UUID)).view_uuid == UUID
    with pytest.raises(ValidationError, match="view-uuid") as e:
        create(view_uuid="not-a-uuid")
    assert e.value.value == "not-a-uuid"


def test_new_view_summary_options() -> None:
    md = create(summary={"app-id": "x", "operation": "mine"}, operation=None)
    assert dict(md.current_version.summary) == {"app-id": "x", "operation": "mine"}
    assert "operation" not in create(operation=None).current_version.summary
    assert create(default_namespace="db").current_version.default_namespace == ("db",)
    assert create(default_namespace=[]).current_version.default_namespace == ()


@pytest.mark.parametrize("version", [0, 2, "1"])
def test_new_view_format_version(version: Any) -> None:
    with pytest.raises(UnsupportedVersion) as e:
        create(format_version=version)
    assert e.value.field == "format-version" and e.value.value == version
    assert repr(version) in str(e.value)


@pytest.mark.parametrize(("kw", "field"), [
    ({"reps": {}}, "representations"),
    ({"reps": []}, "representations"),
    ({"reps": "SELECT 1"}, "representations"),
    ({"reps": {"spark": ""}}, "sql['spark']"),
    ({"reps": [object()]}, "representations[0]"),
    ({"location": ""}, "location"),
    ({"schema": "id long"}, "schema"),
    ({"timestamp_ms": 1.5}, "timestamp-ms"),
    ({"default_catalog": 3}, "default-catalog"),
    ({"default_namespace": ["db", 1]}, "default-namespace[1]"),
    ({"properties": {"k": 1}}, "k"),
    ({"properties": {"version.history.num-entries": "0"}}, "version.history.num-entries"),
])
def test_new_view_bad_arguments(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        create(**kw)
    assert e.value.field == field


@pytest.mark.parametrize("reps", [
    {"spark": "SELECT 1", "Spark": "SELECT 2"},
    [SQLViewRepresentation("SELECT 1", "trino"), SQLViewRepresentation("SELECT 2", "TRINO")],
])
def test_one_sql_representation_per_dialect(reps: Any) -> None:
    with pytest.raises(ValidationError, match="one SQL representation per dialect") as e:
        create(reps=reps)
    assert e.value.field == "representations[1].dialect"
    assert str(e.value.value).lower() in {"spark", "trino"}
    assert str(e.value.value) in str(e.value)


def test_unknown_representations_are_kept_and_not_dialect_checked() -> None:
    unknown = UnknownViewRepresentation("substrait", {"type": "substrait", "plan": "x"})
    md = create(reps=[SQLViewRepresentation("SELECT 1", "spark"), unknown, unknown])
    assert md.current_version.representations[1] == unknown
    assert load_view_metadata(view_metadata_to_json(md)) == md


# --------------------------------------------------------------------------- replace


def test_replace_adds_version_and_schema() -> None:
    md0 = create()
    md = replace(md0, "SELECT 2", 2000, schema=S2, default_catalog="cat",
                 engine_name="icenb")
    assert ids(md) == [1, 2] and md.current_version_id == 2
    v = md.current_version
    assert (v.schema_id, v.timestamp_ms, v.default_catalog) == (1, 2000, "cat")
    assert dict(v.summary) == {"operation": "replace", "engine-name": "icenb"}
    assert [s.schema_id for s in md.schemas] == [0, 1]
    assert log(md) == [(1, 1000), (2, 2000)]
    assert md.view_uuid == md0.view_uuid and md.location == md0.location


def test_equal_schema_reuses_its_id_and_new_ids_follow_the_highest() -> None:
    md = replace(create(), "SELECT 2", 2000, schema=S2)
    md = replace(md, "SELECT 3", 3000, schema=Schema(*S1.fields, schema_id=42))
    assert md.current_version.schema_id == 0 and len(md.schemas) == 2
    # ids follow the highest existing id, also with a gap
    gap = view_metadata_to_json(md)
    gap["schemas"][1]["schema-id"] = 5
    gap["versions"][1]["schema-id"] = 5
    md = replace(load_view_metadata(gap), "SELECT 4", 4000, schema=S3)
    assert [s.schema_id for s in md.schemas] == [0, 5, 6]


def test_version_ids_follow_the_highest() -> None:
    raw = view_metadata_to_json(create())
    raw["versions"][0]["version-id"] = 7
    raw["current-version-id"] = 7
    md = replace(load_view_metadata(raw), "SELECT 2", 2000)
    assert ids(md) == [7, 8]


def test_equivalent_version_id_is_reused() -> None:
    md = replace(create(), "SELECT 2", 2000, schema=S2)
    md = replace(md, "SELECT 3", 3000)
    back = replace(md, "SELECT 2", 4000, schema=S2)
    assert ids(back) == [1, 2, 3] and back.current_version_id == 2
    assert back.current_version.timestamp_ms == 2000  # the version is not rewritten
    assert log(back)[-1] == (2, 4000)
    # "operation" is left out of the comparison: back to the created definition reuses 1
    first = replace(back, "SELECT 1", 5000)
    assert ids(first) == [1, 2, 3] and first.current_version_id == 1


def test_reusing_the_current_version_changes_nothing() -> None:
    md = replace(create(), "SELECT 2", 2000)
    again = replace(md, "SELECT 2", 3000)
    assert again == md and log(again) == [(1, 1000), (2, 2000)]


@pytest.mark.parametrize(("change", "kw"), [
    ("schema", {"schema": S2}),
    ("namespace", {"default_namespace": ["other"]}),
    ("catalog", {"default_catalog": "cat"}),
    ("summary", {"engine_version": "9"}),
    ("dialect case", {"sql": {"SPARK": "SELECT 1", "trino": "SELECT 1"}}),
    ("order", {"sql": {"trino": "SELECT 1", "spark": "SELECT 1"}}),
    ("sql", {"sql": both("SELECT  1")}),
])
def test_what_makes_a_version_different(change: str, kw: dict[str, Any]) -> None:
    md = replace(create(), "SELECT 2", 2000)
    sql = kw.pop("sql", "SELECT 1")
    out = replace(md, sql, 3000, **kw)
    assert out.current_version_id == 3, change


def test_version_with_unknown_fields_is_not_reused() -> None:
    raw = view_metadata_to_json(replace(create(), "SELECT 2", 2000))
    raw["versions"][0]["storage-table"] = {"namespace": ["db"], "name": "mv"}
    md = replace(load_view_metadata(raw), "SELECT 1", 3000)
    assert md.current_version_id == 3
    assert dict(md.versions[0].extra) == {"storage-table": {"namespace": ["db"], "name": "mv"}}


def test_replace_with_duplicate_dialect_is_refused() -> None:
    md = create()
    with pytest.raises(ValidationError, match="'spark'"):
        replace(md, {"spark": "a", "trino": "b", "SPARK": "c"}, 2000)


# --------------------------------------------------------------------------- dialects


def test_dropping_a_dialect_is_refused_by_default() -> None:
    md = create()
    before = doc(md)
    with pytest.raises(ValidationError) as e:
        replace(md, {"spark": "SELECT 2"}, 2000)
    assert e.value.field == "replace.drop-dialect.allowed" and e.value.value == ["trino"]
    assert "trino" in str(e.value) and "replace.drop-dialect.allowed" in str(e.value)
    assert doc(md) == before


def test_dialects_compare_case_insensitively_and_may_be_added() -> None:
    md = replace(create(), {"Spark": "SELECT 2", "TRINO": "SELECT 2"}, 2000)
    md = replace(md, {"spark": "SELECT 3", "trino": "SELECT 3", "hive": "SELECT 3"}, 3000)
    assert md.current_version.dialects == ("spark", "trino", "hive")


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_dropping_a_dialect_when_allowed(value: str) -> None:
    md = set_view_properties(create(), {"replace.drop-dialect.allowed": value})
    assert replace(md, {"spark": "SELECT 2"}, 2000).current_version.dialects == ("spark",)


def test_drop_allowed_by_properties_of_the_same_replace() -> None:
    md = replace(create(), {"spark": "x"}, 2000,
                 properties={"replace.drop-dialect.allowed": "true"})
    assert md.current_version.dialects == ("spark",)
    assert md.properties["replace.drop-dialect.allowed"] == "true"


@pytest.mark.parametrize("value", ["false", "yes", "1", ""])
def test_drop_not_allowed_unless_true(value: str) -> None:
    md = set_view_properties(create(), {"replace.drop-dialect.allowed": value})
    with pytest.raises(ValidationError, match="trino"):
        replace(md, {"spark": "x"}, 2000)


def test_rollback_that_drops_a_dialect_is_refused() -> None:
    md = set_view_properties(create(reps={"spark": "SELECT 1"}),
                             {"replace.drop-dialect.allowed": "false"})
    md = replace(md, "SELECT 2", 2000)  # adds trino
    with pytest.raises(ValidationError, match="trino"):
        set_current_view_version(md, 1, timestamp_ms=3000)
    allowed = set_view_properties(md, {"replace.drop-dialect.allowed": "true"})
    assert set_current_view_version(allowed, 1, timestamp_ms=3000).current_version_id == 1


# --------------------------------------------------------------------------- rollback


def test_rollback_logs_the_change() -> None:
    md = replace(replace(create(), "SELECT 2", 2000), "SELECT 3", 3000)
    back = set_current_view_version(md, 1, timestamp_ms=4000)
    assert back.current_version_id == 1 and ids(back) == [1, 2, 3]
    assert log(back) == [(1, 1000), (2, 2000), (3, 3000), (1, 4000)]
    assert back.version_at(3500).version_id == 3 and back.version_at(4000).version_id == 1
    assert set_current_view_version(back, 1, timestamp_ms=5000) == back


def test_rollback_to_unknown_version() -> None:
    md = replace(create(), "SELECT 2", 2000)
    with pytest.raises(NotFound) as e:
        set_current_view_version(md, 99, timestamp_ms=3000)
    assert e.value.field == "version-id" and e.value.value == 99
    assert "[1, 2]" in str(e.value) and "99" in str(e.value)


def test_rollback_to_last_added_is_refused() -> None:
    with pytest.raises(ValidationError, match="-1") as e:
        set_current_view_version(create(), -1, timestamp_ms=3000)
    assert e.value.value == -1


@pytest.mark.parametrize(("version_id", "ts"), [("1", 1), (1, None), (True, 1)])
def test_rollback_argument_types(version_id: Any, ts: Any) -> None:
    with pytest.raises(ValidationError):
        set_current_view_version(create(), version_id, timestamp_ms=ts)


# --------------------------------------------------------------------------- properties


def test_set_and_remove_properties() -> None:
    md = create(properties={"a": "1", "b": "2"})
    md = set_view_properties(md, {"b": "3", "c": "4"}, ["a", "missing"])
    assert dict(md.properties) == {"b": "3", "c": "4"}
    assert set_view_properties(md, removals="b").properties == {"c": "4"}
    assert log(md) == [(1, 1000)]


def test_set_and_remove_the_same_property() -> None:
    with pytest.raises(ValidationError, match="same view property") as e:
        set_view_properties(create(), {"a": "1"}, ["a"])
    assert e.value.field == "a"


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", " 3", "2147483648", ""])
def test_bad_history_size(value: str) -> None:
    with pytest.raises(ValidationError) as e:
        set_view_properties(create(), {"version.history.num-entries": value})
    assert e.value.field == "version.history.num-entries" and e.value.value == value


@pytest.mark.parametrize("value", ["+3", "003", "2147483647"])
def test_history_size_parsed_like_java(value: str) -> None:
    md = set_view_properties(create(), {"version.history.num-entries": value})
    assert md.properties["version.history.num-entries"] == value


# --------------------------------------------------------------------------- retention


def _chain(n: int, **create_kw: Any) -> ViewMetadata:
    md = create(**create_kw)
    for i in range(2, n + 1):
        md = replace(md, f"SELECT {i}", i * 1000)
    return md


def test_default_keeps_ten_versions() -> None:
    md = _chain(10)
    assert ids(md) == list(range(1, 11))
    md = replace(md, "SELECT 11", 11000)
    assert ids(md) == [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]  # Java's order: current, then by id
    assert [e.version_id for e in md.version_log] == list(range(2, 12))


def test_retention_keeps_current_and_trims_log_after_expired_entries() -> None:
    md = _chain(3, properties={"version.history.num-entries": "3"})
    md = set_current_view_version(md, 2, timestamp_ms=3500)  # log 1, 2, 3, 2
    md = replace(md, "SELECT 4", 4000)  # expires 1: log cut after its entry
    assert ids(md) == [4, 3, 2]
    assert log(md) == [(2, 2000), (3, 3000), (2, 3500), (4, 4000)]
    md = replace(md, "SELECT 5", 5000)  # expires 2: cut after its last entry
    assert ids(md) == [5, 4, 3]
    assert log(md) == [(4, 4000), (5, 5000)]
    md = set_current_view_version(md, 3, timestamp_ms=6000)
    assert log(md) == [(4, 4000), (5, 5000), (3, 6000)]
    # lowering the size expires at once; the current version 3 is kept over the newer 4
    md = set_view_properties(md, {"version.history.num-entries": "2"})
    assert ids(md) == [3, 5] and md.current_version_id == 3
    assert log(md) == [(5, 5000), (3, 6000)]
    assert md.version_at(5500).version_id == 5


def test_no_expiry_leaves_the_log_alone() -> None:
    raw = view_metadata_to_json(_chain(2))
    raw["version-log"].insert(0, {"timestamp-ms": 500, "version-id": 0})  # an older version
    md = replace(load_view_metadata(raw), "SELECT 3", 3000)
    assert log(md)[0] == (0, 500)


def test_schemas_are_never_expired() -> None:
    md = _chain(2, properties={"version.history.num-entries": "1"})
    md = replace(md, "SELECT 3", 3000, schema=S2)
    assert ids(md) == [3] and [s.schema_id for s in md.schemas] == [0, 1]


# --------------------------------------------------------------------------- purity, round trip


def test_failures_leave_the_input_unchanged() -> None:
    md = _chain(3)
    before = doc(md)
    for bad in (
        lambda: replace(md, {"spark": "x"}, 9000),
        lambda: replace(md, {"spark": "x", "SPARK": "y", "trino": "z"}, 9000),
        lambda: set_current_view_version(md, 42, timestamp_ms=9000),
        lambda: set_view_properties(md, {"version.history.num-entries": "0"}),
        lambda: add_view_version(md, S1, both("x"), default_namespace=["db"], timestamp_ms=9000,
                                 properties={"version.history.num-entries": "x"}),
    ):
        with pytest.raises(IcebergError):
            bad()
        assert doc(md) == before
    replace(md, "SELECT 4", 4000, properties={"version.history.num-entries": "1"})
    set_view_properties(md, {"a": "b"})
    assert doc(md) == before


def test_unknown_document_fields_are_kept() -> None:
    raw = view_metadata_to_json(create())
    raw["future-field"] = [1]
    md = replace(load_view_metadata(raw), "SELECT 2", 2000)
    assert view_metadata_to_json(md)["future-field"] == [1]


def test_round_trip_through_json() -> None:
    md = set_current_view_version(_chain(4, default_catalog="c", engine_name="icenb"), 2,
                                  timestamp_ms=9000)
    md = set_view_properties(md, {"version.history.num-entries": "3"})
    again = view_metadata_from_json(json.dumps(view_metadata_to_json(md)))
    assert again == md
    assert isinstance(again, ViewMetadata)
    assert [v.version_id for v in again.versions] == [2, 4, 3]
    assert again.version_log == (ViewHistoryEntry(2000, 2), ViewHistoryEntry(3000, 3),
                                 ViewHistoryEntry(4000, 4), ViewHistoryEntry(9000, 2))


def test_non_metadata_base_is_refused() -> None:
    with pytest.raises(ValidationError):
        set_view_properties({"format-version": 1}, {"a": "b"})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Java golden


def _java_version(md: ViewMetadata | None, schema: Schema, reps: dict[str, str], ts: int,
                  summary: dict[str, str], namespace: list[str],
                  catalog: str | None = None) -> dict[str, Any]:
    """The set-current-version step Java's catalog would make (version id: max + 1)."""
    version = {
        "version-id": 1 if md is None else max(ids(md)) + 1,
        "timestamp-ms": ts, "schema-id": schema.schema_id, "summary": summary,
        "default-namespace": namespace,
        "representations": [{"type": "sql", "sql": s, "dialect": d} for d, s in reps.items()],
    }
    if catalog is not None:
        version["default-catalog"] = catalog
    return {"set_current_version": {"version": version, "schema": schema_to_json(schema)}}


def _scenario() -> list[tuple[str, ViewMetadata | None, int, Any, list[dict[str, Any]]]]:
    """Steps: (name, base, timestamp, icenb result or error, Java steps on the same base)."""
    steps: list[tuple[str, ViewMetadata | None, int, Any, list[dict[str, Any]]]] = []
    state: list[ViewMetadata] = []

    def step(name: str, ts: int, fn: Any, java: list[dict[str, Any]]) -> None:
        base = state[-1] if state else None
        try:
            out: Any = fn(base)
        except IcebergError as e:
            out = e
        else:
            state.append(out)
        steps.append((name, base, ts, out, java))

    rsum = {"operation": "replace", "engine-name": "spark"}
    props = {"version.history.num-entries": "3", "comment": "c"}

    def rep(name: str, sql: str | dict[str, str], ts: int, schema: Schema = S1,
            properties: dict[str, str] | None = None) -> None:
        reps = both(sql) if isinstance(sql, str) else sql
        java = [{"set_properties": properties}] if properties else []
        step(name, ts,
             lambda b: add_view_version(b, schema, reps, default_namespace=["db"],
                                        default_catalog="cat", timestamp_ms=ts,
                                        engine_name="spark", properties=properties),
             [*java, _java_version(state[-1], schema, reps, ts, rsum, ["db"], "cat")])

    step("create", 1000,
         lambda _: create(properties=props, default_catalog="cat", engine_name="spark"),
         [{"assign_uuid": UUID}, {"set_properties": props}, {"set_location": LOC},
          _java_version(None, S1, both("SELECT 1"), 1000,
                        {"operation": "create", "engine-name": "spark"}, ["db"], "cat")])
    rep("v2 new schema", "SELECT 2", 2000, S2)
    rep("v3 schema reused", "SELECT 3", 3000, Schema(*S1.fields, schema_id=5))
    rep("v2 reused", "SELECT 2", 4000, S2)
    rep("v4 expires v1", "SELECT 4", 5000, S3)
    rep("v5 expires v2", "SELECT 5", 6000)
    step("rollback to 3", 7000, lambda b: set_current_view_version(b, 3, timestamp_ms=7000),
         [{"set_current_version_id": 3}])
    step("rollback to current", 7500,
         lambda b: set_current_view_version(b, 3, timestamp_ms=7500),
         [{"set_current_version_id": 3}])
    step("shrink history", 0,
         lambda b: set_view_properties(b, {"version.history.num-entries": "2"}),
         [{"set_properties": {"version.history.num-entries": "2"}}])
    removed = ["comment", "version.history.num-entries"]
    step("properties", 0, lambda b: set_view_properties(b, {"x": "y"}, removed),
         [{"set_properties": {"x": "y"}},
          {"remove_properties": removed}])
    rep("drop dialect refused", {"spark": "SELECT 6"}, 8000)
    rep("duplicate dialect", {"spark": "a", "SPARK": "b", "trino": "c"}, 8100)
    step("unknown version", 8200, lambda b: set_current_view_version(b, 99, timestamp_ms=8200),
         [{"set_current_version_id": 99}])
    step("bad history size", 0,
         lambda b: set_view_properties(b, {"version.history.num-entries": "0"}),
         [{"set_properties": {"version.history.num-entries": "0"}}])
    rep("drop dialect allowed", {"Spark": "SELECT 6"}, 9000,
        properties={"replace.drop-dialect.allowed": "true"})
    step("disallow", 0,
         lambda b: set_view_properties(b, {"replace.drop-dialect.allowed": "false"}),
         [{"set_properties": {"replace.drop-dialect.allowed": "false"}}])
    rep("add dialects back", "SELECT 7", 10000)
    step("rollback drops dialect", 11000,
         lambda b: set_current_view_version(b, 6, timestamp_ms=11000),
         [{"set_current_version_id": 6}])
    return steps


SCENARIO = _scenario()


@pytest.fixture(scope="module")
def java() -> list[dict[str, Any]]:
    """Java's result for every step of the scenario, in one JVM."""
    requests = [{"base": None if base is None else doc(base), "steps": java_steps}
                for _, base, _, _, java_steps in SCENARIO]
    return run_reference_batch("java_view_builder.py", requests)


def _as_icenb(result: dict[str, Any], ts: int) -> dict[str, Any]:
    """Java's metadata with log entries stamped by its clock given the step's timestamp."""
    lo, hi = result["clock"]
    out = dict(result["metadata"])
    out["version-log"] = [{**e, "timestamp-ms": ts if lo <= e["timestamp-ms"] <= hi
                           else e["timestamp-ms"]} for e in out["version-log"]]
    return out


def test_scenario_covers_the_rules() -> None:
    outcomes = {name: out for name, _, _, out, _ in SCENARIO}
    assert outcomes["v2 reused"].current_version_id == 2
    assert ids(outcomes["v5 expires v2"]) == [5, 4, 3]
    assert ids(outcomes["shrink history"]) == [3, 5]
    for name, out in outcomes.items():
        assert isinstance(out, IcebergError) == (name in JAVA_ERRORS), name


#: What Java says for the steps both refuse.
JAVA_ERRORS = {
    "drop dialect refused": "loss of view dialects",
    "duplicate dialect": "Cannot add multiple queries for dialect spark",
    "unknown version": "unknown version: 99",
    "bad history size": "must be positive",
    "rollback drops dialect": "loss of view dialects",
}


@pytest.mark.parametrize("index", range(len(SCENARIO)),
                         ids=[name for name, *_ in SCENARIO])
def test_scenario_step_matches_java(java: list[dict[str, Any]], index: int) -> None:
    name, _, ts, out, _ = SCENARIO[index]
    result = java[index]
    if isinstance(out, IcebergError):
        assert not result["ok"], (name, result)
        assert JAVA_ERRORS[name] in result["error"]
        return
    assert name not in JAVA_ERRORS
    assert result["ok"], (name, result)
    mine = view_metadata_to_json(out)
    theirs = _as_icenb(result, ts)
    assert mine == theirs
    assert list(mine["versions"]) == list(theirs["versions"])  # same order too


# --------------------------------------------------------------------------- Java-written views


def _read(f: MetadataFile) -> ViewMetadata:
    data = f.path.read_bytes()
    return load_view_metadata(gzip.decompress(data) if f.gzip else data, file=str(f.path))


def _replay(prev: ViewMetadata | None, nxt: ViewMetadata) -> ViewMetadata:
    """The icenb change that turns ``prev`` into ``nxt`` (Java's commit), made with icenb."""
    v = nxt.current_version
    kw: dict[str, Any] = {
        "default_namespace": v.default_namespace, "default_catalog": v.default_catalog,
        "timestamp_ms": v.timestamp_ms, "summary": v.summary, "operation": None}
    schema = nxt.schema_for_version(v)
    if prev is None:
        return new_view_metadata(nxt.location, schema, v.representations,
                                 properties=nxt.properties, view_uuid=nxt.view_uuid, **kw)
    changed = {k: s for k, s in nxt.properties.items() if prev.properties.get(k) != s}
    removed = [k for k in prev.properties if k not in nxt.properties]
    if prev.version_by_id(nxt.current_version_id) is None:
        assert not removed  # a replace only sets properties
        return add_view_version(prev, schema, v.representations, properties=changed, **kw)
    assert nxt.current_version_id == prev.current_version_id
    return set_view_properties(prev, changed, removed)


def test_replaying_java_written_views_gives_the_same_metadata(java_tables: JavaTables) -> None:
    """Each commit Java made (create, replace with schema changes and history cap, property
    changes) made again with icenb from Java's previous file gives Java's next file."""
    names = sorted({f.name for f in java_tables.metadata_files(kind="view")})
    assert len(names) >= 2
    steps = 0
    for name in names:
        files = sorted((f for f in java_tables.metadata_files(kind="view") if f.name == name),
                       key=lambda f: f.version)
        prev: ViewMetadata | None = None
        for f in files:
            nxt = _read(f)
            assert view_metadata_to_json(_replay(prev, nxt)) == view_metadata_to_json(nxt), f
            prev, steps = nxt, steps + 1
    assert steps >= 10
