"""Table metadata: reading (v1/v2/v3 + defaults), writing (Appendix E), laziness, history."""

from __future__ import annotations

import copy
import json
import pickle
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import (
    CorruptFile,
    IcebergError,
    InvalidMetadata,
    NoSuchSnapshot,
    UnsupportedVersion,
)
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.snapshot import (
    EncryptedKey,
    MetadataLogEntry,
    Operation,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    Summary,
)
from icenb.spec.sort_order import NullOrder, SortDirection, SortField, SortOrder
from icenb.spec.table_metadata import (
    LazySequence,
    TableMetadata,
    table_metadata_from_json,
    table_metadata_to_json,
    to_json_string,
)
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

FILE = "s3://bucket/db/t/metadata/00003-abc.metadata.json"
UUID_ = "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94"

SCHEMA_JSON = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string"},
        {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
    ],
}


def _v1_doc() -> dict[str, Any]:
    """A v1 document as old writers produced it: only ``schema`` and ``partition-spec``.

    Values are the spec's Appendix C examples where it gives them.
    """
    return {
        "format-version": 1,
        "table-uuid": UUID_,
        "location": "s3://b/wh/data.db/table",
        "last-updated-ms": 1515100955770,
        "last-column-id": 3,
        "schema": {"type": "struct", "fields": SCHEMA_JSON["fields"]},
        "partition-spec": [{"name": "ts_day", "transform": "day", "source-id": 3},
                           {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1}],
        "properties": {"write.format.default": "avro", "commit.retry.num-retries": "4"},
        "current-snapshot-id": 3051729675574597004,
        "snapshots": [
            {"snapshot-id": 3051729675574597004, "timestamp-ms": 1515100955770,
             "summary": {"operation": "append"}, "manifest-list": "s3://b/wh/.../s1.avro",
             "schema-id": 0},
        ],
        "snapshot-log": [{"snapshot-id": 3051729675574597004, "timestamp-ms": 1515100955770}],
        "metadata-log": [{"metadata-file": "s3://bucket/.../v1.json",
                          "timestamp-ms": 1515100955000}],
    }


def _v2_doc() -> dict[str, Any]:
    """A v2 document with history: three snapshots, a branch and a tag, two schemas/specs."""
    return {
        "format-version": 2,
        "table-uuid": UUID_,
        "location": "s3://bucket/db/t",
        "last-sequence-number": 3,
        "last-updated-ms": 1700000003000,
        "last-column-id": 4,
        "current-schema-id": 1,
        "schemas": [
            SCHEMA_JSON,
            {"type": "struct", "schema-id": 1, "identifier-field-ids": [1],
             "fields": [*SCHEMA_JSON["fields"],
                        {"id": 4, "name": "score", "required": False, "type": "double"}]},
        ],
        "default-spec-id": 1,
        "partition-specs": [
            {"spec-id": 0, "fields": [
                {"name": "ts_day", "transform": "day", "source-id": 3, "field-id": 1000}]},
            {"spec-id": 1, "fields": [
                {"name": "ts_day", "transform": "day", "source-id": 3, "field-id": 1000},
                {"name": "id_bucket", "transform": "bucket[8]", "source-id": 1,
                 "field-id": 1001}]},
        ],
        "last-partition-id": 1001,
        "default-sort-order-id": 1,
        "sort-orders": [
            {"order-id": 0, "fields": []},
            {"order-id": 1, "fields": [{"transform": "identity", "source-id": 1,
                                        "direction": "asc", "null-order": "nulls-first"}]},
        ],
        "properties": {"owner": "someone"},
        "current-snapshot-id": 30,
        "refs": {
            "main": {"snapshot-id": 30, "type": "branch"},
            "dev": {"snapshot-id": 21, "type": "branch", "min-snapshots-to-keep": 2},
            "v1.0": {"snapshot-id": 10, "type": "tag", "max-ref-age-ms": 86400000},
        },
        "snapshots": [
            {"sequence-number": 1, "snapshot-id": 10, "timestamp-ms": 1700000001000,
             "summary": {"operation": "append", "added-records": "5"},
             "manifest-list": "s3://bucket/db/t/metadata/snap-10.avro", "schema-id": 0},
            {"sequence-number": 2, "snapshot-id": 21, "parent-snapshot-id": 10,
             "timestamp-ms": 1700000002000, "summary": {"operation": "overwrite"},
             "manifest-list": "s3://bucket/db/t/metadata/snap-21.avro", "schema-id": 0},
            {"sequence-number": 3, "snapshot-id": 30, "parent-snapshot-id": 10,
             "timestamp-ms": 1700000003000, "summary": {"operation": "delete"},
             "manifest-list": "s3://bucket/db/t/metadata/snap-30.avro", "schema-id": 1},
        ],
        "statistics": [{"snapshot-id": 10, "statistics-path": "s3://bucket/s.puffin",
                        "file-size-in-bytes": 100, "file-footer-size-in-bytes": 20,
                        "blob-metadata": [{"type": "apache-datasketches-theta-v1",
                                           "snapshot-id": 10, "sequence-number": 1,
                                           "fields": [1]}]}],
        "partition-statistics": [{"snapshot-id": 10, "statistics-path": "s3://bucket/p.parquet",
                                  "file-size-in-bytes": 50}],
        "snapshot-log": [
            {"timestamp-ms": 1700000001000, "snapshot-id": 10},
            {"timestamp-ms": 1700000003000, "snapshot-id": 30},
        ],
        "metadata-log": [
            {"timestamp-ms": 1700000000000, "metadata-file": "s3://bucket/db/t/metadata/1.json"},
        ],
    }


def _v3_doc() -> dict[str, Any]:
    """A v3 document with row lineage and encryption keys (released v3 field names)."""
    doc = v2_doc()
    doc["format-version"] = 3
    doc["next-row-id"] = 150
    doc["encryption-keys"] = [{"key-id": "k1", "encrypted-key-metadata": "aWNlYmVyZwo=",
                               "encrypted-by-id": "kms-root", "properties": {"a": "b"}}]
    for i, s in enumerate(doc["snapshots"]):
        s["first-row-id"] = 50 * i
        s["added-rows"] = 50
    doc["snapshots"][2]["key-id"] = "k1"
    return doc


def v1_doc() -> dict[str, Any]:
    """A fresh copy: tests may change their document without touching the shared constants."""
    return copy.deepcopy(_v1_doc())


def v2_doc() -> dict[str, Any]:
    return copy.deepcopy(_v2_doc())


def v3_doc() -> dict[str, Any]:
    return copy.deepcopy(_v3_doc())


def load(doc: dict[str, Any], **kw: Any) -> TableMetadata:
    return table_metadata_from_json(json.dumps(doc), file=FILE, **kw)


# --------------------------------------------------------------------------- reading


def test_v1_document_gets_v2_reading_defaults() -> None:
    md = load(v1_doc())
    assert md.format_version == 1
    # Appendix E "Reading v1 metadata for v2"
    assert md.last_sequence_number == 0
    assert [s.sequence_number for s in md.snapshots] == [0]
    # deprecated schema -> schemas=[schema] with id 0
    assert [s.schema_id for s in md.schemas] == [0] and md.current_schema_id == 0
    assert [f.name for f in md.schema.fields] == ["id", "data", "ts"]
    # deprecated partition-spec -> spec 0 with field ids assigned from 1000
    assert md.default_spec_id == 0
    assert [(f.name, f.field_id) for f in md.spec.fields] == [("ts_day", 1000),
                                                              ("id_bucket", 1001)]
    assert md.last_partition_id == 1001
    # no sort orders in v1 -> the unsorted order 0
    assert md.default_sort_order_id == 0 and md.sort_order.is_unsorted
    # refs absent but a current snapshot -> implicit main branch (spec: Table Metadata Fields)
    assert md.refs == {"main": SnapshotRef.branch(3051729675574597004)}
    assert md.properties["commit.retry.num-retries"] == "4"
    snap = md.current_snapshot()
    assert snap is not None and snap.operation is Operation.APPEND
    assert md.metadata_log == (MetadataLogEntry(1515100955000, "s3://bucket/.../v1.json"),)


def test_v1_without_partition_fields_has_last_partition_id_999() -> None:
    doc = v1_doc() | {"partition-spec": []}
    assert load(doc).last_partition_id == 999


def test_v2_document() -> None:
    md = load(v2_doc())
    assert md.table_uuid == UUID_ and md.last_sequence_number == 3
    assert md.schema.schema_id == 1 and md.schema.identifier_field_ids == (1,)
    assert md.spec.spec_id == 1 and len(md.spec.fields) == 2
    assert md.sort_order.order_id == 1
    assert md.refs["v1.0"].is_tag and md.refs["dev"].min_snapshots_to_keep == 2
    assert md.next_row_id is None and md.encryption_keys == ()
    assert md.partition_statistics == (PartitionStatisticsFile(10, "s3://bucket/p.parquet", 50),)
    assert md.statistics[0].blob_metadata[0].fields == (1,)


def test_v3_document() -> None:
    md = load(v3_doc())
    assert md.next_row_id == 150
    assert md.encryption_keys == (EncryptedKey("k1", b"iceberg\n", "kms-root", {"a": "b"}),)
    snap = md.snapshot_by_id(30)
    assert snap is not None
    assert (snap.first_row_id, snap.added_rows, snap.key_id) == (100, 50, "k1")


@pytest.mark.parametrize("current", [-1, None])
def test_no_current_snapshot(current: int | None) -> None:
    doc = v2_doc() | {"current-snapshot-id": current}
    del doc["refs"]
    md = load(doc)
    assert md.current_snapshot_id is None and md.current_snapshot() is None
    assert md.refs == {}
    doc.pop("current-snapshot-id")
    assert load(doc).current_snapshot_id is None


@pytest.mark.parametrize("field", [
    "table-uuid", "last-sequence-number", "location", "last-updated-ms", "last-column-id",
    "schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
    "sort-orders", "default-sort-order-id",
])
def test_v2_missing_required_field(field: str) -> None:
    doc = v2_doc()
    del doc[field]
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == field and e.value.file == FILE
    assert field in str(e.value) and FILE in str(e.value)


def test_v3_requires_next_row_id_but_v2_ignores_it() -> None:
    doc = v3_doc()
    del doc["next-row-id"]
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == "next-row-id"
    assert load(v2_doc() | {"next-row-id": 5}).next_row_id is None


@pytest.mark.parametrize("field", ["location", "last-updated-ms", "last-column-id", "schema",
                                   "partition-spec"])
def test_v1_missing_required_field(field: str) -> None:
    doc = v1_doc()
    del doc[field]
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.file == FILE
    assert e.value.field in (field, "schemas")


@pytest.mark.parametrize(("patch", "field"), [
    ({"last-sequence-number": "3"}, "last-sequence-number"),
    ({"last-column-id": 2**31}, "last-column-id"),
    ({"location": None}, "location"),
    ({"properties": {"a": 1}}, "properties.a"),
    ({"properties": []}, "properties"),
    ({"refs": []}, "refs"),
    ({"snapshots": {}}, "snapshots"),
    ({"snapshot-log": "x"}, "snapshot-log"),
    ({"current-snapshot-id": "30"}, "current-snapshot-id"),
    ({"encryption-keys": [{"key-id": 1}]}, "encryption-keys[0].key-id"),
    ({"format-version": "2"}, "format-version"),
    ({"format-version": 2.0}, "format-version"),
])
def test_wrong_types_name_file_and_field(patch: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidMetadata) as e:
        load(v2_doc() | patch)
    assert e.value.field == field and e.value.file == FILE


def test_nested_errors_carry_the_file_and_path() -> None:
    doc = v2_doc()
    doc["schemas"][1]["fields"][3]["type"] = "decimal(99, 2)"
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.file == FILE and e.value.field is not None
    assert e.value.field.startswith("schemas[1]")
    doc = v2_doc()
    doc["partition-specs"][1]["fields"][1]["field-id"] = "x"
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.file == FILE and e.value.field is not None
    assert e.value.field.startswith("partition-specs[1]")
    doc = v2_doc()
    doc["refs"]["dev"]["type"] = "twig"
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert (e.value.file, e.value.field) == (FILE, "refs.dev.type")


@pytest.mark.parametrize("version", [99, 5, 0, -1])
def test_unsupported_format_version(version: int) -> None:
    with pytest.raises(UnsupportedVersion) as e:
        load(v2_doc() | {"format-version": version})
    assert e.value.file == FILE and e.value.value == version
    assert str(version) in str(e.value) and FILE in str(e.value)


@pytest.mark.parametrize("text", ['{"format-version": 2,', "", "nope", b"\xff\xfe{",
                                  '{"a": NaN}'])
def test_malformed_json_is_corrupt_file(text: str | bytes) -> None:
    with pytest.raises(CorruptFile) as e:
        table_metadata_from_json(text, file=FILE)
    assert e.value.file == FILE and FILE in str(e.value)


@pytest.mark.parametrize("text", ["[]", "3", "null", '"x"'])
def test_json_that_is_not_an_object(text: str) -> None:
    with pytest.raises(InvalidMetadata) as e:
        table_metadata_from_json(text, file=FILE)
    assert e.value.file == FILE


def test_missing_format_version() -> None:
    doc = v2_doc()
    del doc["format-version"]
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == "format-version"


@pytest.mark.parametrize(("patch", "field"), [
    ({"current-schema-id": 7}, "current-schema-id"),
    ({"default-spec-id": 7}, "default-spec-id"),
    ({"default-sort-order-id": 7}, "default-sort-order-id"),
    ({"current-snapshot-id": 99}, "current-snapshot-id"),
])
def test_dangling_ids(patch: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidMetadata) as e:
        load(v2_doc() | patch)
    assert e.value.field == field and e.value.file == FILE


def test_refs_must_point_at_snapshots_and_agree_with_current() -> None:
    doc = v2_doc()
    doc["refs"]["dev"]["snapshot-id"] = 12345
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == "refs.dev.snapshot-id"
    doc = v2_doc()
    doc["refs"]["main"]["snapshot-id"] = 21
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == "refs.main.snapshot-id"
    doc = v2_doc() | {"current-snapshot-id": -1}
    with pytest.raises(InvalidMetadata, match="main branch is set"):
        load(doc)


def test_duplicate_ids() -> None:
    doc = v2_doc()
    doc["schemas"][1]["schema-id"] = 0
    doc["current-schema-id"] = 0
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == "schemas[1].schema-id"
    doc = v2_doc()
    doc["snapshots"][1]["snapshot-id"] = 10
    doc["refs"]["dev"]["snapshot-id"] = 10
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert e.value.field == "snapshots[1].snapshot-id"


def test_accepts_mapping_and_bytes() -> None:
    doc = v2_doc()
    assert table_metadata_from_json(doc) == table_metadata_from_json(json.dumps(doc).encode())
    with_bom = b"\xef\xbb\xbf" + json.dumps(doc).encode()
    assert table_metadata_from_json(with_bom).table_uuid == UUID_


# --------------------------------------------------------------------------- laziness


def test_snapshots_and_logs_are_parsed_on_first_access() -> None:
    md = load(v2_doc())
    assert isinstance(md.snapshots, LazySequence)
    assert md.snapshots.parsed_count <= 1  # current snapshot may be read for checks
    assert md.snapshot_by_id(21) is not None
    assert len(md.snapshots) == 3


def test_bad_lazy_item_raises_on_access_with_file_and_path() -> None:
    doc = v2_doc()
    doc["snapshots"][1]["timestamp-ms"] = "noon"
    doc["metadata-log"][0]["metadata-file"] = 7
    md = load(doc)  # lazy: the bad items are not read yet
    assert md.snapshots[0].snapshot_id == 10
    with pytest.raises(InvalidMetadata) as e:
        _ = md.snapshots[1]
    assert (e.value.file, e.value.field) == (FILE, "snapshots[1].timestamp-ms")
    with pytest.raises(InvalidMetadata) as e:
        list(md.metadata_log)
    assert (e.value.file, e.value.field) == (FILE, "metadata-log[0].metadata-file")
    with pytest.raises(InvalidMetadata) as e:
        md.validate()
    assert e.value.field == "snapshots[1].timestamp-ms"
    with pytest.raises(InvalidMetadata):
        load(doc, strict=True)
    with pytest.raises(InvalidMetadata):
        table_metadata_to_json(md)  # writing validates


def test_lazy_index_reports_malformed_snapshot_ids() -> None:
    doc = v2_doc()
    doc["snapshots"][1] = ["not", "an", "object"]
    doc["refs"]["dev"]["snapshot-id"] = 10
    with pytest.raises(InvalidMetadata) as e:
        load(doc)
    assert (e.value.file, e.value.field) == (FILE, "snapshots[1]")


def test_validate_checks_sequence_numbers() -> None:
    doc = v2_doc()
    doc["snapshots"][0]["sequence-number"] = 9
    md = load(doc)
    with pytest.raises(InvalidMetadata) as e:
        md.validate()
    assert e.value.field == "snapshots[0].sequence-number"


def test_lazy_sequence_behaves_like_a_tuple() -> None:
    md = load(v2_doc())
    snaps = md.snapshots
    assert snaps[-1].snapshot_id == 30
    assert [s.snapshot_id for s in snaps[0:2]] == [10, 21]
    assert [s.snapshot_id for s in reversed(snaps)] == [30, 21, 10]
    assert snaps == tuple(snaps) and tuple(snaps) == snaps
    with pytest.raises(IndexError):
        _ = snaps[3]
    assert "3 snapshots" in repr(snaps)


# --------------------------------------------------------------------------- history


def test_ancestry() -> None:
    md = load(v2_doc())
    assert [s.snapshot_id for s in md.ancestors(30)] == [30, 10]
    assert [s.snapshot_id for s in md.ancestors(21)] == [21, 10]
    assert list(md.ancestors(12345)) == []
    assert md.is_ancestor(10, 30) and md.is_ancestor(30, 30)
    assert not md.is_ancestor(21, 30) and not md.is_ancestor(30, 10)


def test_ancestry_stops_at_expired_parent() -> None:
    doc = v2_doc()
    del doc["snapshots"][0]  # snapshot 10 expired
    doc["refs"]["v1.0"]["snapshot-id"] = 21
    doc["snapshot-log"] = doc["snapshot-log"][1:]
    md = load(doc)
    assert [s.snapshot_id for s in md.ancestors(30)] == [30]
    assert not md.is_ancestor(10, 30)


def test_ancestry_cycle_is_an_error_not_a_hang() -> None:
    doc = v2_doc()
    doc["snapshots"][0]["parent-snapshot-id"] = 30
    md = load(doc)
    with pytest.raises(InvalidMetadata, match="cycle"):
        list(md.ancestors(30))


def test_is_ancestor_on_a_cycle_raises_as_the_walk_does() -> None:
    doc = v2_doc()
    doc["snapshots"][0]["parent-snapshot-id"] = 30
    md = load(doc)
    with pytest.raises(InvalidMetadata, match="cycle"):
        md.is_ancestor(21, 30)


def test_is_ancestor_agrees_with_the_parent_walk_on_a_branching_history() -> None:
    """The constant-time check (spans of one depth-first walk) answers as walking parents
    does, on a tree with forks, an expired parent (a second root) and deep chains."""
    rng = random.Random(7)
    doc = v2_doc()
    template = doc["snapshots"][-1]
    snaps = []
    ids = list(range(1000, 1400))
    for i, sid in enumerate(ids):
        parent = None if i == 0 else ids[rng.randrange(max(0, i - 5), i)]
        if i == 200:
            parent = 99  # expired: snapshot 1200 starts a second tree
        snaps.append({**template, "snapshot-id": sid, "parent-snapshot-id": parent,
                      "sequence-number": i + 1})
    doc["snapshots"] = snaps
    doc["current-snapshot-id"] = ids[-1]
    doc["refs"] = {"main": {"snapshot-id": ids[-1], "type": "branch"}}
    doc["snapshot-log"] = []
    doc["last-sequence-number"] = len(ids)
    md = load(doc)
    for _ in range(2000):
        a, b = rng.choice(ids), rng.choice(ids)
        walked = any(s.snapshot_id == a for s in md.ancestors(b))
        assert md.is_ancestor(a, b) == walked, (a, b)
    assert md.is_ancestor(1200, 1200) and not md.is_ancestor(1000, 1200)
    assert not md.is_ancestor(5, 1300) and not md.is_ancestor(1300, 5)


def test_refs_lookup() -> None:
    md = load(v2_doc())
    assert md.snapshot_for_ref("main") == md.current_snapshot()
    dev = md.snapshot_for_ref("dev")
    assert dev is not None and dev.snapshot_id == 21
    tag = md.snapshot_for_ref("v1.0")
    assert tag is not None and tag.snapshot_id == 10
    assert md.snapshot_for_ref("nope") is None


def test_main_is_the_current_snapshot_even_with_an_empty_refs_map() -> None:
    # Spec: "There is always a main branch reference pointing to the current-snapshot-id"
    md = load(v2_doc() | {"refs": {}})
    assert md.refs == {}  # kept as written (Iceberg Java does the same)
    main = md.snapshot_for_ref("main")
    assert main is not None and main.snapshot_id == 30


def test_snapshot_as_of_uses_the_snapshot_log() -> None:
    # Spec: Appendix F "Point in Time Reads"
    md = load(v2_doc())
    assert md.snapshot_as_of(1700000001000).snapshot_id == 10
    assert md.snapshot_as_of(1700000002500).snapshot_id == 10  # 21 was never current
    assert md.snapshot_as_of(1700000003000).snapshot_id == 30
    assert md.snapshot_as_of(1800000000000).snapshot_id == 30
    with pytest.raises(NoSuchSnapshot) as e:
        md.snapshot_as_of(1700000000999)
    assert "1700000000999" in str(e.value)


def test_schema_lookups() -> None:
    md = load(v2_doc())
    assert md.schema_for_snapshot(10).schema_id == 0
    assert md.schema_for_snapshot(30).schema_id == 1
    assert md.schema_by_id(0) is not None and md.schema_by_id(5) is None
    assert md.spec_by_id(0) is not None and md.spec_by_id(5) is None
    assert md.sort_order_by_id(1) is not None and md.sort_order_by_id(2) is None
    assert set(md.specs_by_id) == {0, 1}
    with pytest.raises(NoSuchSnapshot):
        md.schema_for_snapshot(12345)
    doc = v2_doc()
    del doc["snapshots"][0]["schema-id"]
    assert load(doc).schema_for_snapshot(10).schema_id == 1  # falls back to current


# --------------------------------------------------------------------------- writing


JAVA_V2_ORDER = [
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
    "last-column-id", "current-schema-id", "schemas", "default-spec-id", "partition-specs",
    "last-partition-id", "default-sort-order-id", "sort-orders", "properties",
    "current-snapshot-id", "refs", "snapshots", "statistics", "partition-statistics",
    "snapshot-log", "metadata-log",
]


def test_writes_fields_in_iceberg_java_order() -> None:
    # Orders observed from Iceberg Java 1.10 TableMetadataParser.toJson
    assert list(table_metadata_to_json(load(v2_doc()))) == JAVA_V2_ORDER
    v3_order = [*JAVA_V2_ORDER[:15], "next-row-id", "encryption-keys", *JAVA_V2_ORDER[15:]]
    assert list(table_metadata_to_json(load(v3_doc()))) == v3_order
    v1_order = [k for k in JAVA_V2_ORDER if k != "last-sequence-number"]
    v1_order.insert(v1_order.index("current-schema-id"), "schema")
    v1_order.insert(v1_order.index("default-spec-id"), "partition-spec")
    assert list(table_metadata_to_json(load(v1_doc()))) == v1_order


def test_v1_writing_rules() -> None:
    out = table_metadata_to_json(load(v1_doc()))
    # Appendix E "Writing v1 metadata" + the deprecated fields for old readers
    assert "last-sequence-number" not in out
    assert all("sequence-number" not in s for s in out["snapshots"])
    assert out["schema"] == out["schemas"][0]
    assert out["partition-spec"] == out["partition-specs"][0]["fields"]
    assert [f["field-id"] for f in out["partition-spec"]] == [1000, 1001]


def test_current_snapshot_id_null_in_v3_minus_one_before() -> None:
    for make, expected in ((v2_doc, -1), (v3_doc, None)):
        doc = make() | {"current-snapshot-id": None}
        del doc["refs"]["main"]
        out = table_metadata_to_json(load(doc))
        assert out["current-snapshot-id"] == expected


def test_unknown_fields_are_preserved_on_rewrite() -> None:
    doc = v2_doc() | {"x-vendor": {"nested": [1, 2, {"a": None}]}, "z-flag": True}
    md = load(doc)
    assert md.extra == {"x-vendor": {"nested": [1, 2, {"a": None}]}, "z-flag": True}
    out = table_metadata_to_json(md)
    assert list(out)[-2:] == ["x-vendor", "z-flag"]
    assert out["x-vendor"] == doc["x-vendor"] and out["z-flag"] is True
    assert load(out) == md


@pytest.mark.parametrize("make", [v1_doc, v2_doc, v3_doc])
def test_document_round_trip(make: Any) -> None:
    md = load(make())
    text = to_json_string(md)
    again = table_metadata_from_json(text)
    assert again == md
    assert to_json_string(again) == text
    assert json.loads(to_json_string(md, indent=2)) == json.loads(text)
    assert json.loads(to_json_string(md, indent=4)) == json.loads(text)


def test_v2_content_survives_the_round_trip() -> None:
    doc = v2_doc()
    out = table_metadata_to_json(load(doc))
    for key in ("snapshots", "refs", "snapshot-log", "metadata-log", "statistics",
                "partition-statistics", "properties", "schemas", "sort-orders"):
        assert out[key] == doc[key], key


def test_constructing_directly_validates() -> None:
    md = load(v2_doc())
    with pytest.raises(InvalidMetadata):
        TableMetadata(**{**_fields(md), "current_schema_id": 42})
    with pytest.raises(UnsupportedVersion):
        TableMetadata(**{**_fields(md), "format_version": 5})
    with pytest.raises(InvalidMetadata):
        TableMetadata(**{**_fields(md), "table_uuid": None})
    same = TableMetadata(**_fields(md))
    assert same == md and hash(same) == hash(md)


def _fields(md: TableMetadata) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(md, f.name) for f in dataclasses.fields(md)}


@pytest.mark.parametrize("make", [v1_doc, v2_doc, v3_doc])
def test_pickle_and_copy(make: Any) -> None:
    # Spark and multiprocessing pickle what they ship; read-only mappings must survive it
    md = load(make())
    _ = md.snapshots[0]
    again = pickle.loads(pickle.dumps(md))
    assert again == md and again.source_file == FILE
    assert copy.deepcopy(md) == md and copy.copy(md) == md
    assert pickle.loads(pickle.dumps(md.snapshots[-1])) == md.snapshots[-1]
    assert pickle.loads(pickle.dumps(md.encryption_keys)) == md.encryption_keys


def test_metadata_is_immutable() -> None:
    md = load(v2_doc())
    with pytest.raises(AttributeError):
        md.location = "elsewhere"  # type: ignore[misc]
    with pytest.raises(TypeError):
        md.properties["x"] = "y"  # type: ignore[index]
    assert "TableMetadata(format_version=2" in repr(md)


# --------------------------------------------------------------------------- property tests

NAMES = st.text(alphabet="abcxyz_é", min_size=1, max_size=5)
PRIMS = st.sampled_from([LongType(), IntegerType(), StringType(), DateType(), DoubleType(),
                         BooleanType(), TimestamptzType()])
SAFE_TRANSFORMS = ["identity", "bucket[4]", "truncate[10]", "void", "some-future-transform"]
JSON_LEAVES = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5)
JSON_VALUES = st.recursive(JSON_LEAVES, lambda c: st.lists(c, max_size=3) | st.dictionaries(
    st.text(max_size=4), c, max_size=3), max_leaves=8)
KNOWN = set(JAVA_V2_ORDER) | {
    "schema", "partition-spec", "next-row-id", "encryption-keys"}


@st.composite
def schema_list(draw: st.DrawFn) -> tuple[list[Schema], int]:
    count = draw(st.integers(1, 3))
    schemas = []
    next_id = 1
    for sid in draw(st.lists(st.integers(0, 50), min_size=count, max_size=count, unique=True)):
        names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
        fields = []
        for name in names:
            fields.append(NestedField(next_id, name, draw(PRIMS), draw(st.booleans())))
            next_id += 1
        schemas.append(Schema(*fields, schema_id=sid))
    return schemas, next_id - 1


@st.composite
def spec_list(draw: st.DrawFn, source_ids: list[int], version: int) -> list[PartitionSpec]:
    specs = []
    next_field = 1000
    for spec_id in draw(st.lists(st.integers(0, 20), min_size=1, max_size=3, unique=True)):
        fields = []
        for i in range(draw(st.integers(0, 3))):
            t = draw(st.sampled_from(SAFE_TRANSFORMS))
            fields.append(PartitionField((draw(st.sampled_from(source_ids)),), next_field,
                                         parse_transform(t), f"p{i}"))
            next_field += 1
        specs.append(PartitionSpec(spec_id, tuple(fields)))
    return specs


@st.composite
def order_list(draw: st.DrawFn, source_ids: list[int]) -> list[SortOrder]:
    orders = [SortOrder(0, ())]
    for oid in draw(st.lists(st.integers(1, 20), max_size=2, unique=True)):
        fields = tuple(
            SortField((draw(st.sampled_from(source_ids)),),
                      parse_transform(draw(st.sampled_from(SAFE_TRANSFORMS[:3]))),
                      draw(st.sampled_from(list(SortDirection))),
                      draw(st.sampled_from(list(NullOrder))))
            for _ in range(draw(st.integers(1, 2))))
        orders.append(SortOrder(oid, fields))
    return orders


@st.composite
def table_metadata(draw: st.DrawFn, version: int | None = None) -> TableMetadata:
    v = version or draw(st.integers(1, 3))
    schemas, last_column = draw(schema_list())
    ids = sorted({f.field_id for s in schemas for f in s.fields})
    specs = draw(spec_list(ids, v))
    orders = draw(order_list(ids))
    n = draw(st.integers(0, 6))
    snap_ids = draw(st.lists(st.integers(1, 2**63 - 1), min_size=n, max_size=n, unique=True))
    snapshots = []
    row = 0
    for i, sid in enumerate(snap_ids):
        parent = draw(st.sampled_from([None, *snap_ids[:i]]))
        first_row = None
        added = None
        if v >= 3 and draw(st.booleans()):
            first_row, added = row, draw(st.integers(0, 1000))
            row += added
        use_manifests = v == 1 and draw(st.booleans())
        snapshots.append(Snapshot(
            snapshot_id=sid, parent_snapshot_id=parent,
            sequence_number=(i + 1 if v >= 2 else 0), timestamp_ms=1_700_000_000_000 + i,
            manifest_list=None if use_manifests else f"s3://b/snap-{sid}.avro",
            manifests=(f"m{i}.avro",) if use_manifests else None,
            summary=Summary(draw(st.sampled_from(list(Operation))),
                            draw(st.dictionaries(st.sampled_from(["a", "b", "c"]),
                                                 st.text(max_size=3)))),
            schema_id=draw(st.sampled_from([None, *(s.schema_id for s in schemas)])),
            first_row_id=first_row, added_rows=added,
            key_id=draw(st.none() | st.just("k1")) if v >= 3 else None,
        ))
    current = draw(st.sampled_from([None, *snap_ids]))
    refs: dict[str, SnapshotRef] = {}
    if current is not None:
        refs["main"] = SnapshotRef.branch(current)
    for name in draw(st.lists(NAMES, max_size=3, unique=True)):
        if name != "main" and snap_ids:
            target = draw(st.sampled_from(snap_ids))
            refs[name] = draw(st.sampled_from([
                SnapshotRef.tag(target, max_ref_age_ms=1000),
                SnapshotRef.branch(target, min_snapshots_to_keep=2),
            ]))
    extra = draw(st.dictionaries(st.text(min_size=1, max_size=6).filter(
        lambda k: k not in KNOWN), JSON_VALUES, max_size=2))
    return TableMetadata(
        format_version=v,
        table_uuid=None if v == 1 and draw(st.booleans()) else UUID_,
        location=draw(st.text(max_size=10)),
        last_sequence_number=len(snapshots) if v >= 2 else 0,
        last_updated_ms=draw(st.integers(0, 2**62)),
        last_column_id=last_column,
        schemas=schemas,
        current_schema_id=draw(st.sampled_from([s.schema_id for s in schemas])),
        partition_specs=specs,
        default_spec_id=draw(st.sampled_from([s.spec_id for s in specs])),
        last_partition_id=max(s.last_assigned_field_id for s in specs),
        sort_orders=orders,
        default_sort_order_id=draw(st.sampled_from([o.order_id for o in orders])),
        properties=draw(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3)),
        current_snapshot_id=current,
        snapshots=snapshots,
        snapshot_log=[SnapshotLogEntry(s.timestamp_ms, s.snapshot_id) for s in snapshots
                      if draw(st.booleans())],
        metadata_log=[MetadataLogEntry(i, f"m{i}.json") for i in range(draw(st.integers(0, 2)))],
        refs=refs,
        statistics=(),
        partition_statistics=[PartitionStatisticsFile(sid, "p.parquet", 1)
                              for sid in snap_ids[:1]],
        next_row_id=row if v >= 3 else None,
        encryption_keys=[EncryptedKey("k1", draw(st.binary(max_size=8)))] if v >= 3 else [],
        extra=extra,
    )


@settings(max_examples=150)
@given(table_metadata())
def test_round_trip_parse_serialize_parse(md: TableMetadata) -> None:
    text = to_json_string(md)
    again = table_metadata_from_json(text, file="gen.metadata.json", strict=True)
    assert again == md
    assert to_json_string(again) == text


@settings(max_examples=40)
@given(table_metadata())
def test_round_trip_from_a_parsed_mapping(md: TableMetadata) -> None:
    # parse from an in-memory mapping too (the io layer may hand over parsed JSON)
    obj = copy.deepcopy(table_metadata_to_json(md))
    assert table_metadata_from_json(obj) == md


def test_garbage_documents_raise_iceberg_errors_only() -> None:
    for junk in ({}, {"format-version": 2}, {"format-version": 1, "location": "x"},
                 {"format-version": 3, **{k: None for k in JAVA_V2_ORDER[1:]}}):
        with pytest.raises(IcebergError):
            table_metadata_from_json(junk)
