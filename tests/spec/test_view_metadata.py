"""Tests for icenb.spec.view_metadata: released view spec, early draft, conversion, round trips."""

from __future__ import annotations

import copy
import json
import re
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import (
    CorruptFile,
    IcebergError,
    InvalidMetadata,
    NotFound,
    UnsupportedVersion,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)
from icenb.spec.view_metadata import (
    DraftSQLViewRepresentation,
    DraftViewMetadata,
    DraftViewVersion,
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
    is_draft_view_metadata,
    load_view_metadata,
    view_metadata_from_json,
    view_metadata_to_json,
)

FILE = "s3://bucket/wh/sales.db/daily_orders/metadata/00003-abc.metadata.json"

# --------------------------------------------------------------------------- released documents

# A released-spec document of our own, shaped like the spec's Appendix A example: a view replaced
# once (adding a Trino dialect and a column), then rolled back to version 1, then forward again.
RELEASED: dict[str, Any] = {
    "view-uuid": "3c6a7b8e-5d1f-4c2a-9e0b-7f1d2c3b4a59",
    "format-version": 1,
    "location": "s3://bucket/wh/sales.db/daily_orders",
    "properties": {"comment": "Orders per day", "version.history.num-entries": "5"},
    "schemas": [
        {
            "schema-id": 0,
            "type": "struct",
            "fields": [
                {"id": 1, "name": "order_count", "required": False, "type": "long",
                 "doc": "Number of orders"},
                {"id": 2, "name": "order_date", "required": False, "type": "date"},
            ],
        },
        {
            "schema-id": 1,
            "type": "struct",
            "fields": [
                {"id": 1, "name": "order_count", "required": False, "type": "long",
                 "doc": "Number of orders"},
                {"id": 2, "name": "order_date", "required": False, "type": "date"},
                {"id": 3, "name": "revenue", "required": False, "type": "double"},
            ],
        },
    ],
    "current-version-id": 2,
    "versions": [
        {
            "version-id": 1,
            "timestamp-ms": 1700000000000,
            "schema-id": 0,
            "summary": {"engine-name": "Spark", "engine-version": "3.5.1"},
            "default-catalog": "prod",
            "default-namespace": ["sales"],
            "representations": [
                {"type": "sql", "dialect": "spark",
                 "sql": "SELECT count(1), CAST(ts AS DATE)\nFROM orders\nGROUP BY 2"},
            ],
        },
        {
            "version-id": 2,
            "timestamp-ms": 1700000500000,
            "schema-id": 1,
            "summary": {"engine-name": "trino", "engine-version": "435"},
            "default-namespace": ["sales", "eu"],
            "representations": [
                {"type": "sql", "dialect": "trino",
                 "sql": "SELECT count(1), CAST(ts AS DATE), sum(amount) FROM orders GROUP BY 2"},
                {"type": "sql", "dialect": "Spark",
                 "sql": "SELECT count(1), CAST(ts AS DATE), sum(amount)\nFROM orders\nGROUP BY 2"},
            ],
        },
    ],
    "version-log": [
        {"timestamp-ms": 1700000000000, "version-id": 1},
        {"timestamp-ms": 1700000500000, "version-id": 2},
        {"timestamp-ms": 1700000900000, "version-id": 1},
        {"timestamp-ms": 1700001200000, "version-id": 2},
    ],
}


def released(**changes: Any) -> dict[str, Any]:
    """A deep copy of RELEASED with top-level keys replaced (None deletes the key)."""
    doc = copy.deepcopy(RELEASED)
    for k, v in changes.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    return doc


def test_released_document_loads_with_its_values() -> None:
    md = view_metadata_from_json(json.dumps(RELEASED), file=FILE)
    assert isinstance(md, ViewMetadata)
    assert md.view_uuid == "3c6a7b8e-5d1f-4c2a-9e0b-7f1d2c3b4a59"
    assert md.uuid == uuid.UUID("3c6a7b8e-5d1f-4c2a-9e0b-7f1d2c3b4a59")
    assert md.format_version == 1
    assert md.location == "s3://bucket/wh/sales.db/daily_orders"
    assert dict(md.properties) == {"comment": "Orders per day",
                                   "version.history.num-entries": "5"}
    assert [v.version_id for v in md.versions] == [1, 2]
    assert md.current_version_id == 2
    assert not md.converted_from_draft

    v1, v2 = md.versions
    assert v1.timestamp_ms == 1700000000000
    assert v1.default_catalog == "prod"
    assert v1.default_namespace == ("sales",)
    assert v1.engine_name == "Spark" and v1.engine_version == "3.5.1"
    assert v1.representations == (SQLViewRepresentation(
        "SELECT count(1), CAST(ts AS DATE)\nFROM orders\nGROUP BY 2", "spark"),)
    assert v2.default_catalog is None
    assert v2.default_namespace == ("sales", "eu")
    assert v2.dialects == ("trino", "Spark")

    assert md.current_version is v2
    assert md.current_schema.schema_id == 1
    assert [f.name for f in md.current_schema.fields] == ["order_count", "order_date", "revenue"]
    assert md.schema_for_version(1).find_type("order_date") == DateType()
    assert md.schema_for_version(v2).find_type("revenue") == DoubleType()
    assert md.current_schema.find_field("order_count").doc == "Number of orders"
    assert md.version_log[2] == ViewHistoryEntry(1700000900000, 1)


def test_load_from_bytes_and_mapping_give_the_same_metadata() -> None:
    a = view_metadata_from_json(json.dumps(RELEASED).encode())
    b = view_metadata_from_json(RELEASED)
    assert a == b


def test_sql_for_matches_dialects_case_insensitively() -> None:
    md = load_view_metadata(RELEASED)
    v2 = md.current_version
    assert v2.sql_for("spark") == (
        "SELECT count(1), CAST(ts AS DATE), sum(amount)\nFROM orders\nGROUP BY 2")
    assert v2.sql_for("TRINO") == (
        "SELECT count(1), CAST(ts AS DATE), sum(amount) FROM orders GROUP BY 2")
    assert v2.representation_for("trino") == v2.representations[0]
    assert v2.sql_for("flink") is None
    assert md.version_by_id(1) is not None
    assert md.version_by_id(1).sql_for("trino") is None  # type: ignore[union-attr]


def test_version_at_follows_the_log_including_rollbacks() -> None:
    md = load_view_metadata(RELEASED)
    assert md.version_at(1700000000000).version_id == 1  # entry takes effect at its timestamp
    assert md.version_at(1700000499999).version_id == 1
    assert md.version_at(1700000500000).version_id == 2
    assert md.version_at(1700001000000).version_id == 1  # rolled back
    assert md.version_at(1800000000000).version_id == 2  # rolled forward again
    assert md.version_id_at(1699999999999) is None
    with pytest.raises(NotFound, match="version log starts later"):
        md.version_at(1699999999999)


def test_version_at_an_expired_version_names_it() -> None:
    doc = released(**{"version-log": [
        {"timestamp-ms": 1600000000000, "version-id": 0},  # version 0 no longer retained
        {"timestamp-ms": 1700000000000, "version-id": 1},
    ]})
    doc["current-version-id"] = 1
    md = load_view_metadata(doc)
    assert md.version_id_at(1650000000000) == 0
    with pytest.raises(NotFound, match="version 0 was current at that time but is no longer"):
        md.version_at(1650000000000)


def test_version_at_equal_timestamps_later_entry_wins() -> None:
    doc = released(**{"version-log": [
        {"timestamp-ms": 10, "version-id": 1}, {"timestamp-ms": 10, "version-id": 2}]})
    assert load_view_metadata(doc).version_at(10).version_id == 2


def test_schema_for_unknown_version_raises_not_found() -> None:
    md = load_view_metadata(RELEASED)
    with pytest.raises(NotFound):
        md.schema_for_version(99)


def test_serialization_writes_the_released_fields_in_order() -> None:
    md = load_view_metadata(RELEASED)
    out = view_metadata_to_json(md)
    assert list(out) == ["view-uuid", "format-version", "location", "properties", "schemas",
                         "current-version-id", "versions", "version-log"]
    assert list(out["versions"][0]) == ["version-id", "timestamp-ms", "schema-id", "summary",
                                        "default-catalog", "default-namespace", "representations"]
    assert "default-catalog" not in out["versions"][1]
    assert out["versions"][1]["representations"][1] == RELEASED["versions"][1][
        "representations"][1]
    assert out["version-log"] == RELEASED["version-log"]
    assert view_metadata_from_json(json.dumps(out)) == md


def test_empty_properties_are_left_out() -> None:
    md = load_view_metadata(released(properties=None))
    assert dict(md.properties) == {}
    assert "properties" not in view_metadata_to_json(md)


def test_unknown_fields_and_representation_types_survive_a_round_trip() -> None:
    doc = released()
    doc["future-top-level"] = {"nested": [1, 2, {"x": None}]}
    doc["versions"][0]["storage-table"] = {"namespace": ["sales"], "name": "mv__storage"}
    doc["versions"][0]["representations"].append(
        {"type": "substrait", "plan": "base64==", "extensions": [{"uri": "a"}]})
    doc["versions"][0]["representations"][0]["field-hint"] = "kept"
    doc["version-log"][0]["note"] = "kept too"
    md = load_view_metadata(json.dumps(doc))
    v1 = md.version_by_id(1)
    assert v1 is not None
    unknown = v1.representations[1]
    assert isinstance(unknown, UnknownViewRepresentation)
    assert unknown.type == "substrait"
    assert dict(v1.extra) == {"storage-table": {"namespace": ["sales"], "name": "mv__storage"}}
    assert v1.dialects == ("spark",)  # unknown types are not SQL dialects
    out = view_metadata_to_json(md)
    assert out["future-top-level"] == {"nested": [1, 2, {"x": None}]}
    assert out["versions"][0]["representations"] == doc["versions"][0]["representations"]
    assert out["versions"][0]["storage-table"] == doc["versions"][0]["storage-table"]
    assert out["version-log"][0] == {"timestamp-ms": 1700000000000, "version-id": 1,
                                     "note": "kept too"}


def test_model_does_not_share_state_with_the_input() -> None:
    doc = released()
    doc["future"] = {"a": [1]}
    md = load_view_metadata(doc)
    doc["properties"]["comment"] = "changed"
    doc["versions"][0]["summary"]["engine-name"] = "changed"
    doc["future"]["a"].append(2)
    assert md.properties["comment"] == "Orders per day"
    assert md.versions[0].summary["engine-name"] == "Spark"
    assert md.extra["future"] == {"a": [1]}
    with pytest.raises(TypeError):
        md.properties["comment"] = "x"  # type: ignore[index]
    out = view_metadata_to_json(md)
    out["future"]["a"].append(3)
    assert md.extra["future"] == {"a": [1]}


# Written by the reference implementation (Iceberg Java 1.10.2: ViewMetadata.builder() with one
# version, then ViewMetadataParser.toJson(metadata, pretty=true)).
JAVA_WRITTEN = """\
{
  "view-uuid" : "fa6506c3-7681-40c8-86dc-e36561f83385",
  "format-version" : 1,
  "location" : "file:/tmp/v",
  "schemas" : [ {
    "type" : "struct",
    "schema-id" : 0,
    "fields" : [ {
      "id" : 1,
      "name" : "a",
      "required" : false,
      "type" : "int",
      "doc" : "doc a"
    }, {
      "id" : 2,
      "name" : "b",
      "required" : true,
      "type" : "string"
    } ]
  } ],
  "current-version-id" : 1,
  "versions" : [ {
    "version-id" : 1,
    "timestamp-ms" : 1000,
    "schema-id" : 0,
    "summary" : {
      "engine-name" : "x"
    },
    "default-namespace" : [ ],
    "representations" : [ {
      "type" : "sql",
      "sql" : "select 1",
      "dialect" : "spark"
    } ]
  } ],
  "version-log" : [ {
    "timestamp-ms" : 1000,
    "version-id" : 1
  } ]
}
"""


def test_reference_implementation_output_loads_and_reserializes_identically() -> None:
    md = view_metadata_from_json(JAVA_WRITTEN, file="java.metadata.json")
    assert isinstance(md, ViewMetadata)
    assert md.current_version.default_namespace == ()
    assert md.current_schema.find_field("b").required
    out = view_metadata_to_json(md)
    expected = json.loads(JAVA_WRITTEN)
    assert out == expected
    assert list(out) == list(expected)  # same field order as the reference implementation
    assert list(out["versions"][0]) == list(expected["versions"][0])


# --------------------------------------------------------------------------- released errors


@pytest.mark.parametrize("key", ["view-uuid", "format-version", "location", "schemas",
                                 "current-version-id", "versions", "version-log"])
def test_missing_required_top_level_field(key: str) -> None:
    doc = released(**{key: None})
    with pytest.raises(InvalidMetadata, match="missing required field") as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.file == FILE
    assert info.value.field == key


@pytest.mark.parametrize("key", ["version-id", "timestamp-ms", "schema-id", "summary",
                                 "representations", "default-namespace"])
def test_missing_required_version_field(key: str) -> None:
    doc = released()
    del doc["versions"][1][key]
    with pytest.raises(InvalidMetadata, match="missing required field") as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.field == f"versions[1].{key}"
    assert FILE in str(info.value)


@pytest.mark.parametrize("key", ["type", "sql", "dialect"])
def test_missing_required_sql_representation_field(key: str) -> None:
    doc = released()
    del doc["versions"][0]["representations"][0][key]
    with pytest.raises(InvalidMetadata) as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.field == f"versions[0].representations[0].{key}"


@pytest.mark.parametrize(("path", "value", "field"), [
    (("view-uuid",), 12, "view-uuid"),
    (("location",), ["s3://x"], "location"),
    (("current-version-id",), "2", "current-version-id"),
    (("current-version-id",), 2.0, "current-version-id"),
    (("current-version-id",), True, "current-version-id"),
    (("versions",), {"1": {}}, "versions"),
    (("version-log",), None, "version-log"),
    (("properties",), {"comment": 5}, "properties.comment"),
    (("versions", 0, "timestamp-ms"), "yesterday", "versions[0].timestamp-ms"),
    (("versions", 0, "summary"), {"engine-name": None}, "versions[0].summary.engine-name"),
    (("versions", 0, "default-namespace"), "sales", "versions[0].default-namespace"),
    (("versions", 0, "default-namespace"), ["sales", 1], "versions[0].default-namespace[1]"),
    (("versions", 0, "default-catalog"), 7, "versions[0].default-catalog"),
    (("versions", 0, "representations"), {"type": "sql"}, "versions[0].representations"),
    (("versions", 0, "representations", 0), "SELECT 1", "versions[0].representations[0]"),
    (("versions", 0, "representations", 0, "sql"), None, "versions[0].representations[0].sql"),
    (("version-log", 1, "version-id"), "2", "version-log[1].version-id"),
])
def test_wrong_types_name_the_field(path: tuple[Any, ...], value: Any, field: str) -> None:
    doc = released()
    target: Any = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    with pytest.raises(InvalidMetadata) as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.field == field
    assert info.value.file == FILE


def test_view_uuid_must_be_a_uuid() -> None:
    with pytest.raises(InvalidMetadata, match="not a UUID") as info:
        view_metadata_from_json(released(**{"view-uuid": "my-view"}), file=FILE)
    assert info.value.field == "view-uuid"


@pytest.mark.parametrize("version", [0, 2, 3])
def test_unknown_format_version_is_unsupported(version: int) -> None:
    with pytest.raises(UnsupportedVersion) as info:
        view_metadata_from_json(released(**{"format-version": version}), file=FILE)
    assert info.value.file == FILE
    assert info.value.field == "format-version"
    assert info.value.value == version
    assert FILE in str(info.value)


def test_dangling_current_version_id() -> None:
    with pytest.raises(InvalidMetadata, match=r"not among the versions \(known: \[1, 2\]\)") as i:
        view_metadata_from_json(released(**{"current-version-id": 7}), file=FILE)
    assert i.value.field == "current-version-id"
    assert i.value.value == 7
    assert i.value.file == FILE


def test_version_schema_id_must_exist() -> None:
    doc = released()
    doc["versions"][1]["schema-id"] = 5
    with pytest.raises(InvalidMetadata, match="schema that is not in schemas") as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.field == "versions[1].schema-id"


def test_duplicate_dialect_in_one_version_is_rejected_case_insensitively() -> None:
    doc = released()
    doc["versions"][1]["representations"].append(
        {"type": "sql", "dialect": "SPARK", "sql": "SELECT 1"})
    with pytest.raises(InvalidMetadata, match="more than one SQL representation") as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.field == "versions[1].representations[2].dialect"
    assert info.value.file == FILE


def test_same_dialect_in_different_versions_is_fine() -> None:
    md = load_view_metadata(RELEASED)
    assert md.versions[0].sql_for("spark") != md.versions[1].sql_for("spark")


def test_duplicate_version_and_schema_ids() -> None:
    doc = released()
    doc["versions"][1]["version-id"] = 1
    with pytest.raises(InvalidMetadata, match="duplicate version id"):
        view_metadata_from_json(doc)
    doc = released()
    doc["schemas"][1]["schema-id"] = 0
    with pytest.raises(InvalidMetadata, match="duplicate schema id"):
        view_metadata_from_json(doc)


def test_malformed_json_is_a_corrupt_file() -> None:
    with pytest.raises(CorruptFile, match="not valid JSON") as info:
        view_metadata_from_json('{"view-uuid": ', file=FILE)
    assert info.value.file == FILE
    with pytest.raises(CorruptFile):
        view_metadata_from_json(b"\xff\xfe\x00garbage", file=FILE)


def test_non_object_document() -> None:
    with pytest.raises(InvalidMetadata, match="must be a JSON object") as info:
        view_metadata_from_json("[1, 2]", file=FILE)
    assert info.value.file == FILE


def test_schema_errors_are_located_under_schemas() -> None:
    doc = released()
    doc["schemas"][0]["fields"][1]["type"] = "varchar"
    with pytest.raises(InvalidMetadata) as info:
        view_metadata_from_json(doc, file=FILE)
    assert info.value.field is not None and info.value.field.startswith("schemas[0]")
    assert info.value.file == FILE


def test_constructing_an_invalid_model_directly_raises() -> None:
    schema = Schema(NestedField(1, "x", LongType()), schema_id=0)
    version = ViewVersion(version_id=1, timestamp_ms=1, schema_id=0,
                          representations=(SQLViewRepresentation("SELECT 1 AS x", "spark"),),
                          default_namespace=("db",))
    ok = ViewMetadata(view_uuid=str(uuid.uuid4()), location="/tmp/v", schemas=(schema,),
                      current_version_id=1, versions=(version,))
    assert ok.current_version is version
    with pytest.raises(InvalidMetadata, match="current-version-id"):
        ViewMetadata(view_uuid=str(uuid.uuid4()), location="/tmp/v", schemas=(schema,),
                     current_version_id=2, versions=(version,))
    with pytest.raises(UnsupportedVersion):
        ViewMetadata(view_uuid=str(uuid.uuid4()), format_version=2, location="/tmp/v",
                     schemas=(schema,), current_version_id=1, versions=(version,))
    with pytest.raises(InvalidMetadata, match="more than one SQL representation"):
        ViewVersion(version_id=1, timestamp_ms=1, schema_id=0, representations=(
            SQLViewRepresentation("SELECT 1", "spark"), SQLViewRepresentation("SELECT 2", "Spark")))
    with pytest.raises(InvalidMetadata, match="must not repeat a known field"):
        SQLViewRepresentation("SELECT 1", "spark", extra={"dialect": "trino"})


# --------------------------------------------------------------------------- early draft
# The two Appendix A documents of view-spec-draft.txt, copied verbatim. They are annotated
# ("=> ...") and carry trailing commas, and the second one misses the "]" that closes version 2's
# representations; `_spec_example_json` removes exactly those artefacts of the prose.

DRAFT_STEP3 = r"""
{
  "format-version" : 1, => JSON format. Will change as format evolves.
  "location" : "s3n://my_company/my/warehouse/anorwood.db/common_view",
  "current-version-id" : 1, => current / latest version of the view. ‘1’ here since this metadata was created when the view was created.
  "properties" : {  => shows properties of the view
    "comment" : "View captures all the data from the table" => View comment
  },
  "versions" : [ { => Last few versions of the view.
    "version-id" : 1,
    "parent-version-id" : -1,
    "timestamp-ms" : 1573518431292,
    "summary" : {
      "operation" : "create", => View operation that caused this metadata to be created
      "engineVersion" : "presto-350", => Version of the engine that performed the operation (create / replace)
    },
    "representations" : [ { => SQL metadata of the view
      "type" : "sql",
      "sql" : "SELECT *\nFROM\n  base_tab\n", => original view SQL
      "dialect" : "presto",
      "schema-id" : 1,
      "default-catalog" : "iceberg",
      "default-namespace" : [ "anorwood" ]
    } ],
  } ],
  "version-log" : [ { => Log of the created versions
    "timestamp-ms" : 1573518431292,
    "version-id" : 1
  } ],
  "schemas": [ { => Schema of the view expressed in Iceberg types
    "schema-id": 1,
    "type" : "struct",
    "fields" : [ {
      "id" : 0,
      "name" : "c1",
      "required" : false,
      "type" : "int",
      "doc" : "" => Column comment
    }, {
      "id" : 1,
      "name" : "c2",
      "required" : false,
      "type" : "string",
      "doc" : ""
    } ]
  } ],
  "current-schema-id": 1
}
"""  # noqa: E501, RUF001  (verbatim spec text)

DRAFT_STEP4 = r"""
{
  "format-version" : 1,
  "location" : "s3n://my_company/my/warehouse/anorwood.db/common_view",
  "current-version-id" : 2,
  "properties" : {  => shows properties of the view
    "comment" : "View captures count of the data from the table"
  },
  "versions" : [ {
    "version-id" : 1,
    "parent-version-id" : -1,
    "timestamp-ms" : 1573518431292,
    "summary" : {
      "operation" : "create",
      "engineVersion" : "presto-350",
    },
    "representations" : [ {
      "type" : "sql",
      "sql" : "SELECT *\nFROM\n  base_tab\n",
      "dialect" : "presto",
      "schema-id" : 1,
      "default-catalog" : "iceberg",
      "default-namespace" : [ "anorwood" ]
    } ],
    "properties" : { }
  }, {
    "version-id" : 2,
    "parent-version-id" : 1, => Version 2 was created on top of version 1, making parent-version-id 1
    "timestamp-ms" : 1573518440265,
    "summary" : {
      "operation" : "replace", => The ‘replace’ operation caused this latest version creation
      "engineVersion" : "spark-2.4.4",
    },
    "representations" : [ {
      "type" : "sql",
      "sql" : "SELECT \"count\"(*) my_cnt\nFROM\n  base_tab\n", => Note the updated text from the ‘replace’ view statement
      "dialect" : "spark",
      "schema-id" : 2,
      "default-catalog" : "iceberg",
      "default-namespace" : [ "anorwood" ]
    },
  } ],
  "version-log" : [ {
    "timestamp-ms" : 1573518431292,
    "version-id" : 1
  }, {
    "timestamp-ms" : 1573518440265,
    "version-id" : 2
  } ],
  "schemas": [ { => Schema of the view expressed in Iceberg types
    "schema-id": 1,
    "type" : "struct",
    "fields" : [ {
      "id" : 0,
      "name" : "c1",
      "required" : false,
      "type" : "int",
      "doc" : "" => Column comment
    }, {
      "id" : 1,
      "name" : "c2",
      "required" : false,
      "type" : "string",
      "doc" : ""
    } ]
  }, { => Schema change is reflected here
    "schema-id": 2,
    "type" : "struct",
    "fields" : [ {
      "id" : 0,
      "name" : "my_cnt",
      "required" : false,
      "type" : "long",
      "doc" : ""
    } ]
  } ],
  "current-schema-id": 2
}
"""  # noqa: E501, RUF001  (verbatim spec text)

DRAFT_LOCATION = "s3n://my_company/my/warehouse/anorwood.db/common_view"


def _spec_example_json(text: str) -> str:
    """Turn an annotated spec example into JSON: drop "=> note" and trailing commas.

    The second example also lacks the "]" closing version 2's representations (the "}," before
    "} ]" should be "} ]" then "}"); that one typo is repaired explicitly.
    """
    text = re.sub(r"=>.*$", "", text, flags=re.MULTILINE)
    text = text.replace('"default-namespace" : [ "anorwood" ]\n    },\n  } ],',
                        '"default-namespace" : [ "anorwood" ]\n    } ]\n  } ],')
    return re.sub(r",(\s*[}\]])", r"\1", text)


def test_spec_examples_are_not_plain_json_but_clean_up_to_it() -> None:
    for text in (DRAFT_STEP3, DRAFT_STEP4):
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
        json.loads(_spec_example_json(text))


def test_draft_step3_document_loads_as_a_draft() -> None:
    md = view_metadata_from_json(_spec_example_json(DRAFT_STEP3), file="v1.metadata.json")
    assert isinstance(md, DraftViewMetadata)
    assert md.format_version == 1
    assert md.location == DRAFT_LOCATION
    assert md.view_uuid is None
    assert md.current_version_id == 1
    assert md.current_schema_id == 1
    assert dict(md.properties) == {"comment": "View captures all the data from the table"}
    (v1,) = md.versions
    assert v1.version_id == 1 and v1.parent_version_id == -1
    assert v1.timestamp_ms == 1573518431292
    assert v1.operation == "create"
    assert v1.engine_version == "presto-350"
    (rep,) = v1.representations
    assert rep == DraftSQLViewRepresentation(
        sql="SELECT *\nFROM\n  base_tab\n", dialect="presto", schema_id=1,
        default_catalog="iceberg", default_namespace=("anorwood",))
    assert v1.sql_for("Presto") == "SELECT *\nFROM\n  base_tab\n"
    assert md.version_log == (ViewHistoryEntry(1573518431292, 1),)
    (schema,) = md.schemas
    assert schema.schema_id == 1
    assert [(f.field_id, f.name, f.field_type, f.doc) for f in schema.fields] == [
        (0, "c1", IntegerType(), ""), (1, "c2", StringType(), "")]


def test_draft_step4_document_loads_as_a_draft() -> None:
    md = view_metadata_from_json(_spec_example_json(DRAFT_STEP4))
    assert isinstance(md, DraftViewMetadata)
    assert md.current_version_id == 2 and md.current_schema_id == 2
    assert dict(md.properties) == {"comment": "View captures count of the data from the table"}
    v1, v2 = md.versions
    assert dict(v1.extra) == {"properties": {}}  # a version-level field the draft never defines
    assert v2.parent_version_id == 1
    assert v2.operation == "replace"
    assert v2.engine_version == "spark-2.4.4"
    assert v2.sql_for("spark") == 'SELECT "count"(*) my_cnt\nFROM\n  base_tab\n'
    assert v2.sql_for("presto") is None
    assert md.current_version is v2
    assert md.version_log == (ViewHistoryEntry(1573518431292, 1),
                              ViewHistoryEntry(1573518440265, 2))
    schema2 = md.schema_by_id(2)
    assert schema2 is not None
    assert [(f.name, f.field_type) for f in schema2.fields] == [("my_cnt", LongType())]


def test_draft_step4_converts_to_released_form() -> None:
    draft = view_metadata_from_json(_spec_example_json(DRAFT_STEP4))
    assert isinstance(draft, DraftViewMetadata)
    md = draft.to_released()
    assert md.view_uuid == str(uuid.uuid5(uuid.NAMESPACE_URL, DRAFT_LOCATION))
    assert md.converted_from_draft and md.draft_source is draft
    assert [s.schema_id for s in md.schemas] == [1, 2]
    v1, v2 = md.versions
    assert (v1.schema_id, v2.schema_id) == (1, 2)
    assert v2.default_catalog == "iceberg" and v2.default_namespace == ("anorwood",)
    assert dict(v1.summary) == {"operation": "create", "engineVersion": "presto-350",
                                "engine-version": "presto-350", "parent-version-id": "-1"}
    assert dict(v2.summary) == {"operation": "replace", "engineVersion": "spark-2.4.4",
                                "engine-version": "spark-2.4.4", "parent-version-id": "1"}
    assert v2.representations == (SQLViewRepresentation(
        'SELECT "count"(*) my_cnt\nFROM\n  base_tab\n', "spark"),)
    assert md.current_schema.find_type("my_cnt") == LongType()
    assert md.version_at(1573518435000).sql_for("presto") == "SELECT *\nFROM\n  base_tab\n"
    assert "current-schema-id" not in md.extra  # it agrees with the current version's schema
    assert dict(v1.extra) == {"properties": {}}
    # The released JSON is a valid released document that loads back to the same metadata.
    out = view_metadata_to_json(md)
    assert not is_draft_view_metadata(out)
    again = view_metadata_from_json(json.dumps(out))
    assert isinstance(again, ViewMetadata)
    assert again == md and not again.converted_from_draft


def test_load_view_metadata_converts_drafts_and_flags_them() -> None:
    md = load_view_metadata(_spec_example_json(DRAFT_STEP3), file="x.json")
    assert md.converted_from_draft
    assert md.current_version.default_catalog == "iceberg"
    assert md.current_schema.schema_id == 1
    given = uuid.UUID("00000000-0000-4000-8000-000000000001")
    assert load_view_metadata(_spec_example_json(DRAFT_STEP3), view_uuid=given).uuid == given
    assert not load_view_metadata(RELEASED).converted_from_draft


def test_draft_uuid_is_deterministic_and_depends_on_location() -> None:
    a = load_view_metadata(_spec_example_json(DRAFT_STEP3))
    b = load_view_metadata(_spec_example_json(DRAFT_STEP4))
    assert a.view_uuid == b.view_uuid  # same view, two metadata files
    other = json.loads(_spec_example_json(DRAFT_STEP3))
    other["location"] = "s3n://my_company/my/warehouse/anorwood.db/other_view"
    assert load_view_metadata(other).view_uuid != a.view_uuid
    with_uuid = json.loads(_spec_example_json(DRAFT_STEP3))
    with_uuid["view-uuid"] = "11111111-2222-4333-8444-555555555555"
    assert load_view_metadata(with_uuid).view_uuid == "11111111-2222-4333-8444-555555555555"


def test_draft_round_trips_in_draft_form() -> None:
    draft = view_metadata_from_json(_spec_example_json(DRAFT_STEP4))
    out = view_metadata_to_json(draft)
    assert out == json.loads(_spec_example_json(DRAFT_STEP4))
    assert view_metadata_from_json(json.dumps(out)) == draft


def _aliased_draft(**rep_changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_spec_example_json(DRAFT_STEP3))
    rep = doc["versions"][0]["representations"][0]
    rep["field-aliases"] = ["id", None]
    rep["field-docs"] = ["identifier", None]
    rep.update(rep_changes)
    return doc


def test_draft_field_aliases_and_docs_become_a_new_schema() -> None:
    md = load_view_metadata(_aliased_draft())
    assert [s.schema_id for s in md.schemas] == [1, 2]
    assert md.current_version.schema_id == 2
    assert [(f.field_id, f.name, f.doc) for f in md.current_schema.fields] == [
        (0, "id", "identifier"), (1, "c2", "")]
    # current-schema-id (1) is the query schema the aliases were applied to: nothing to keep
    assert "current-schema-id" not in md.extra
    # the draft keeps what it was
    assert md.draft_source is not None
    rep = md.draft_source.versions[0].representations[0]
    assert isinstance(rep, DraftSQLViewRepresentation)
    assert rep.field_aliases == ("id", None) and rep.field_docs == ("identifier", None)


def test_draft_aliases_reuse_an_identical_existing_schema() -> None:
    doc = _aliased_draft()
    doc["schemas"].append({"schema-id": 7, "type": "struct", "fields": [
        {"id": 0, "name": "id", "required": False, "type": "int", "doc": "identifier"},
        {"id": 1, "name": "c2", "required": False, "type": "string", "doc": ""}]})
    md = load_view_metadata(doc)
    assert [s.schema_id for s in md.schemas] == [1, 7]
    assert md.current_version.schema_id == 7


def test_draft_alias_list_of_wrong_length_fails_conversion_only() -> None:
    doc = _aliased_draft(**{"field-aliases": ["a", "b", "c"]})
    draft = view_metadata_from_json(doc)  # the draft itself loads
    assert isinstance(draft, DraftViewMetadata)
    with pytest.raises(InvalidMetadata, match="3 entries but schema 1 has 2") as info:
        load_view_metadata(doc, file="old.json")
    assert info.value.file == "old.json"


def test_draft_aliases_that_collide_fail_conversion() -> None:
    with pytest.raises(InvalidMetadata, match="invalid schema"):
        load_view_metadata(_aliased_draft(**{"field-aliases": ["c2", None]}))


def test_draft_representations_must_agree_on_lifted_fields() -> None:
    doc = json.loads(_spec_example_json(DRAFT_STEP3))
    doc["versions"][0]["representations"].append({
        "type": "sql", "sql": "SELECT * FROM base_tab", "dialect": "spark", "schema-id": 1,
        "default-catalog": "other", "default-namespace": ["anorwood"]})
    with pytest.raises(InvalidMetadata, match="disagree on default-catalog") as info:
        load_view_metadata(doc)
    assert info.value.field == "versions[0].representations[1].default-catalog"
    # agreeing representations convert to one version with two dialects
    doc["versions"][0]["representations"][1]["default-catalog"] = "iceberg"
    md = load_view_metadata(doc)
    assert md.current_version.dialects == ("presto", "spark")


def test_draft_duplicate_dialects_fail_conversion_with_the_version_path() -> None:
    doc = json.loads(_spec_example_json(DRAFT_STEP4))
    doc["versions"][1]["representations"].append(
        {"type": "sql", "sql": "SELECT 1", "dialect": "SPARK", "schema-id": 2})
    assert isinstance(view_metadata_from_json(doc), DraftViewMetadata)
    with pytest.raises(InvalidMetadata, match="more than one SQL representation") as info:
        load_view_metadata(doc, file="d.json")
    assert info.value.field == "versions[1].representations[1].dialect"
    assert info.value.file == "d.json"


def test_draft_version_without_schema_uses_current_schema_id_or_fails() -> None:
    doc = json.loads(_spec_example_json(DRAFT_STEP4))
    for version in doc["versions"]:
        del version["representations"][0]["schema-id"]
    with pytest.raises(InvalidMetadata, match="draft view version 1 names no schema"):
        load_view_metadata(doc)
    doc["current-version-id"] = 1
    doc["current-schema-id"] = 1
    doc["versions"] = doc["versions"][:1]
    assert load_view_metadata(doc).current_version.schema_id == 1


def test_draft_current_schema_id_that_disagrees_is_kept_in_extra() -> None:
    doc = json.loads(_spec_example_json(DRAFT_STEP4))
    doc["current-schema-id"] = 1  # but the current version's representation says 2
    md = load_view_metadata(doc)
    assert md.current_schema.schema_id == 2
    assert md.extra["current-schema-id"] == 1
    assert view_metadata_to_json(md)["current-schema-id"] == 1


def test_draft_without_namespace_gets_the_empty_namespace() -> None:
    doc = json.loads(_spec_example_json(DRAFT_STEP3))
    rep = doc["versions"][0]["representations"][0]
    del rep["default-namespace"], rep["default-catalog"]
    md = load_view_metadata(doc)
    assert md.current_version.default_namespace == ()
    assert md.current_version.default_catalog is None


@pytest.mark.parametrize(("mutate", "field", "error"), [
    (lambda d: d.__setitem__("format-version", 2), "format-version", UnsupportedVersion),
    (lambda d: d.__setitem__("current-version-id", 9), "current-version-id", InvalidMetadata),
    (lambda d: d.__setitem__("current-schema-id", 9), "current-schema-id", InvalidMetadata),
    (lambda d: d["versions"][0]["representations"][0].__setitem__("schema-id", 9),
     "versions[0].representations[0].schema-id", InvalidMetadata),
    (lambda d: d["versions"][0]["representations"][0].__setitem__("field-docs", "x"),
     "versions[0].representations[0].field-docs", InvalidMetadata),
    (lambda d: d["versions"][0].__delitem__("timestamp-ms"), "versions[0].timestamp-ms",
     InvalidMetadata),
    (lambda d: d["versions"][0].__setitem__("parent-version-id", "1"),
     "versions[0].parent-version-id", InvalidMetadata),
])
def test_draft_errors_name_file_and_field(
    mutate: Any, field: str, error: type[IcebergError]
) -> None:
    doc = json.loads(_spec_example_json(DRAFT_STEP3))
    mutate(doc)
    with pytest.raises(error) as info:
        view_metadata_from_json(doc, file="draft.json")
    assert info.value.field == field
    assert info.value.file == "draft.json"


def test_draft_detection() -> None:
    assert is_draft_view_metadata(json.loads(_spec_example_json(DRAFT_STEP3)))
    assert not is_draft_view_metadata(RELEASED)
    # a released document with a stray draft key stays released (the key is kept in extra)
    stray = released(**{"current-schema-id": 1})
    md = view_metadata_from_json(stray)
    assert isinstance(md, ViewMetadata) and md.extra["current-schema-id"] == 1
    # a document with neither the released shape nor draft fields is a broken released document
    broken = released(**{"view-uuid": None})
    for v in broken["versions"]:
        del v["schema-id"]
    assert not is_draft_view_metadata(broken)
    with pytest.raises(InvalidMetadata, match="missing required field"):
        view_metadata_from_json(broken)


# --------------------------------------------------------------------------- property tests

_PRIMITIVES = st.sampled_from([IntegerType(), LongType(), StringType(), DoubleType(),
                               DateType(), TimestampType()])
_text = st.text(st.characters(codec="utf-8"), max_size=12)
_names = st.text("abcdefghij_", min_size=1, max_size=6)
_json_scalars = st.none() | st.booleans() | st.integers(-2**53, 2**53) | _text
_json = st.recursive(_json_scalars, lambda c: st.lists(c, max_size=3)
                     | st.dictionaries(_names, c, max_size=3), max_leaves=6)


def _extra(known: frozenset[str]) -> st.SearchStrategy[dict[str, Any]]:
    keys = st.text("xyz-", min_size=1, max_size=5).map(lambda k: "x-" + k)
    return st.dictionaries(keys.filter(lambda k: k not in known), _json, max_size=2)


@st.composite
def _schema(draw: st.DrawFn, schema_id: int) -> Schema:
    names = draw(st.lists(_names, min_size=1, max_size=4, unique=True))
    return Schema(*(NestedField(i + 1, n, draw(_PRIMITIVES), draw(st.booleans()),
                                draw(st.none() | _text)) for i, n in enumerate(names)),
                  schema_id=schema_id)


@st.composite
def _representations(draw: st.DrawFn) -> tuple[Any, ...]:
    dialects = draw(st.lists(st.sampled_from(["spark", "trino", "flink", "Presto", "hive"]),
                             max_size=3, unique_by=str.lower))
    reps: list[Any] = [SQLViewRepresentation(draw(_text), d, draw(_extra(frozenset())))
                       for d in dialects]
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["substrait", "pig"]))
        raw = {"type": kind, **draw(st.dictionaries(_names.filter(lambda k: k != "type"),
                                                    _json, max_size=2))}
        reps.insert(draw(st.integers(0, len(reps))), UnknownViewRepresentation(kind, raw))
    return tuple(reps)


@st.composite
def view_metadata(draw: st.DrawFn) -> ViewMetadata:
    schema_ids = draw(st.lists(st.integers(0, 50), min_size=1, max_size=3, unique=True))
    schemas = tuple(draw(_schema(i)) for i in schema_ids)
    version_ids = draw(st.lists(st.integers(1, 1000), min_size=1, max_size=4, unique=True))
    summaries = st.dictionaries(st.sampled_from(["engine-name", "engine-version", "operation",
                                                 "app-id"]), _text, max_size=3)
    versions = tuple(
        ViewVersion(
            version_id=vid,
            timestamp_ms=draw(st.integers(0, 2**45)),
            schema_id=draw(st.sampled_from(schema_ids)),
            summary=draw(summaries),
            representations=draw(_representations()),
            default_catalog=draw(st.none() | _names),
            default_namespace=tuple(draw(st.lists(_names, max_size=3))),
            extra=draw(_extra(frozenset({"schema-id", "summary"}))),
        )
        for vid in version_ids
    )
    log = tuple(ViewHistoryEntry(draw(st.integers(0, 2**45)), draw(st.sampled_from(version_ids)))
                for _ in range(draw(st.integers(0, 4))))
    return ViewMetadata(
        view_uuid=str(draw(st.uuids())),
        location=draw(st.sampled_from(["s3://b/v", "/tmp/wh/db/v", "file:///x y/ü"])),
        schemas=schemas,
        current_version_id=draw(st.sampled_from(version_ids)),
        versions=versions,
        version_log=log,
        properties=draw(st.dictionaries(_names, _text, max_size=3)),
        extra=draw(_extra(frozenset())),
    )


@settings(max_examples=150, deadline=None)
@given(view_metadata())
def test_round_trip_parse_serialize_parse(md: ViewMetadata) -> None:
    out = view_metadata_to_json(md)
    text = json.dumps(out)
    again = view_metadata_from_json(text, file="prop.json")
    assert again == md
    assert view_metadata_to_json(again) == out
    assert json.loads(text) == out  # plain JSON types only


@settings(max_examples=100, deadline=None)
@given(view_metadata(), st.integers(0, 2**45))
def test_version_at_agrees_with_a_scan_of_the_log(md: ViewMetadata, ts: int) -> None:
    entries = [e for e in md.version_log if e.timestamp_ms <= ts]
    expected = max(enumerate(entries), key=lambda p: (p[1].timestamp_ms, p[0]))[1].version_id \
        if entries else None
    assert md.version_id_at(ts) == expected


@settings(max_examples=75, deadline=None)
@given(view_metadata())
def test_draft_round_trip_of_generated_metadata(md: ViewMetadata) -> None:
    """A draft built from released metadata writes and reads back equal, and converts back."""
    draft = DraftViewMetadata(
        location=md.location,
        current_version_id=md.current_version_id,
        versions=tuple(
            DraftViewVersion(
                version_id=v.version_id, timestamp_ms=v.timestamp_ms, summary=v.summary,
                representations=tuple(
                    DraftSQLViewRepresentation(sql=r.sql, dialect=r.dialect,
                                               schema_id=v.schema_id,
                                               default_catalog=v.default_catalog,
                                               default_namespace=v.default_namespace,
                                               extra=r.extra)
                    if isinstance(r, SQLViewRepresentation) else r
                    for r in v.representations),
                extra=v.extra)
            for v in md.versions),
        version_log=md.version_log,
        properties=md.properties,
        schemas=md.schemas,
        current_schema_id=md.current_schema.schema_id,
        extra=md.extra,
    )
    again = view_metadata_from_json(json.dumps(view_metadata_to_json(draft)))
    assert again == draft
    has_sql = all(v.sql_representations for v in md.versions)
    if has_sql:
        converted = draft.to_released(view_uuid=md.view_uuid)
        assert converted == md
