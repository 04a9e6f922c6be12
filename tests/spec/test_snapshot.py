"""Snapshots, refs, logs, statistics files and encryption keys: JSON (Appendix C) and rules."""

from __future__ import annotations

import contextlib
import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import IcebergError, InvalidMetadata, ValidationError
from icenb.spec.snapshot import (
    BlobMetadata,
    EncryptedKey,
    MetadataLogEntry,
    Operation,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
    StatisticsFile,
    Summary,
    encrypted_key_from_json,
    encrypted_key_to_json,
    metadata_log_entry_from_json,
    metadata_log_entry_to_json,
    partition_statistics_file_from_json,
    partition_statistics_file_to_json,
    snapshot_from_json,
    snapshot_log_entry_from_json,
    snapshot_log_entry_to_json,
    snapshot_ref_from_json,
    snapshot_ref_to_json,
    snapshot_to_json,
    statistics_file_from_json,
    statistics_file_to_json,
)

# Appendix C, "Table Metadata and Snapshots" example (with the missing comma restored).
SPEC_SNAPSHOT = """{
  "snapshot-id": 3051729675574597004,
  "timestamp-ms": 1515100955770,
  "summary": {"operation": "append"},
  "manifest-list": "s3://b/wh/.../s1.avro",
  "schema-id": 0
}"""


# --------------------------------------------------------------------------- snapshots


def test_spec_example_snapshot() -> None:
    snap = snapshot_from_json(json.loads(SPEC_SNAPSHOT))
    assert snap.snapshot_id == 3051729675574597004
    assert snap.timestamp_ms == 1515100955770
    assert snap.operation is Operation.APPEND
    assert snap.summary == {"operation": "append"}
    assert snap.manifest_list == "s3://b/wh/.../s1.avro"
    assert snap.schema_id == 0
    assert snap.parent_snapshot_id is None
    # Appendix E: a snapshot without sequence-number reads as 0
    assert snap.sequence_number == 0


def test_v1_snapshot_with_embedded_manifests() -> None:
    snap = snapshot_from_json(
        {"snapshot-id": 1, "timestamp-ms": 2, "manifests": ["a.avro", "b.avro"]},
        format_version=1,
    )
    assert snap.manifests == ("a.avro", "b.avro")
    assert snap.manifest_list is None
    assert snap.summary is None and snap.operation is None
    out = snapshot_to_json(snap, 1)
    assert out == {"snapshot-id": 1, "timestamp-ms": 2, "manifests": ["a.avro", "b.avro"]}


def test_manifest_list_wins_over_manifests_like_java() -> None:
    snap = snapshot_from_json({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "l.avro",
                               "manifests": ["ignored.avro"]})
    assert snap.manifest_list == "l.avro" and snap.manifests is None


def test_snapshot_needs_manifest_list_or_manifests() -> None:
    with pytest.raises(InvalidMetadata) as e:
        snapshot_from_json({"snapshot-id": 1, "timestamp-ms": 2}, where="snapshots[0]")
    assert e.value.field == "snapshots[0].manifest-list"


def test_v1_does_not_write_sequence_number_v2_does() -> None:
    snap = Snapshot(snapshot_id=5, timestamp_ms=6, sequence_number=3, manifest_list="m")
    assert "sequence-number" not in snapshot_to_json(snap, 1)
    assert snapshot_to_json(snap, 2)["sequence-number"] == 3


def test_snapshot_json_field_order_matches_iceberg_java() -> None:
    # Order observed from Iceberg Java 1.10 TableMetadataParser.toJson
    snap = Snapshot(snapshot_id=22, parent_snapshot_id=11, sequence_number=2, timestamp_ms=7,
                    summary=Summary("overwrite", {"x": "1"}), manifest_list="m2.avro",
                    schema_id=0, first_row_id=50, added_rows=50, key_id="k1")
    assert list(snapshot_to_json(snap, 3)) == [
        "sequence-number", "snapshot-id", "parent-snapshot-id", "timestamp-ms", "summary",
        "manifest-list", "schema-id", "first-row-id", "added-rows", "key-id",
    ]


def test_v3_row_lineage_fields() -> None:
    raw = {"snapshot-id": 1, "timestamp-ms": 2, "sequence-number": 1, "manifest-list": "m",
           "summary": {"operation": "append"}, "first-row-id": 100, "added-rows": 30,
           "key-id": "key-1"}
    snap = snapshot_from_json(raw, format_version=3)
    assert (snap.first_row_id, snap.added_rows, snap.key_id) == (100, 30, "key-1")
    assert snapshot_to_json(snap, 3) == raw


def test_first_row_id_requires_added_rows() -> None:
    with pytest.raises(InvalidMetadata) as e:
        snapshot_from_json({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
                            "first-row-id": 0}, format_version=3, where="snapshots[1]")
    assert e.value.field == "snapshots[1].added-rows"
    with pytest.raises(ValidationError):
        Snapshot(snapshot_id=1, timestamp_ms=2, first_row_id=0)


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"timestamp-ms": "yesterday"}, "snapshots[3].timestamp-ms"),
        ({"timestamp-ms": None}, "snapshots[3].timestamp-ms"),
        ({"snapshot-id": 1.5}, "snapshots[3].snapshot-id"),
        ({"snapshot-id": True}, "snapshots[3].snapshot-id"),
        ({"snapshot-id": 2**64}, "snapshots[3].snapshot-id"),
        ({"parent-snapshot-id": "1"}, "snapshots[3].parent-snapshot-id"),
        ({"sequence-number": -1}, "snapshots[3].sequence-number"),
        ({"summary": []}, "snapshots[3].summary"),
        ({"summary": {"x": "1"}}, "snapshots[3].summary.operation"),
        ({"summary": {"operation": 3}}, "snapshots[3].summary.operation"),
        ({"summary": {"operation": "append", "k": {"a": 1}}}, "snapshots[3].summary.k"),
        ({"manifest-list": 5}, "snapshots[3].manifest-list"),
        ({"schema-id": 2**40}, "snapshots[3].schema-id"),
        ({"key-id": 5}, "snapshots[3].key-id"),
    ],
)
def test_wrong_types_name_the_field(patch: dict[str, Any], field: str) -> None:
    raw = {"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m"} | patch
    with pytest.raises(InvalidMetadata) as e:
        snapshot_from_json(raw, where="snapshots[3]")
    assert e.value.field == field
    assert field in str(e.value)


def test_missing_snapshot_id_and_non_object() -> None:
    with pytest.raises(InvalidMetadata, match="missing required field") as e:
        snapshot_from_json({"timestamp-ms": 2, "manifest-list": "m"})
    assert e.value.field == "snapshot-id"
    with pytest.raises(InvalidMetadata, match="JSON object"):
        snapshot_from_json([1, 2])


def test_summary_is_a_read_only_mapping_with_operation_first() -> None:
    s = Summary(Operation.DELETE, {"deleted-records": "5", "total-records": "10"})
    assert list(s) == ["operation", "deleted-records", "total-records"]
    assert s["operation"] == "delete" and s["deleted-records"] == "5"
    assert len(s) == 3
    assert s == {"operation": "delete", "deleted-records": "5", "total-records": "10"}
    assert s.int_value("total-records") == 10 and s.int_value("missing") is None
    with pytest.raises(ValidationError):
        Summary("append", {"operation": "append"})


def test_unknown_operation_is_kept_as_text() -> None:
    snap = snapshot_from_json({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
                               "summary": {"operation": "compact-ish"}})
    assert snap.operation == "compact-ish"
    assert not isinstance(snap.operation, Operation)
    assert snapshot_to_json(snap)["summary"] == {"operation": "compact-ish"}


def test_summary_numbers_are_kept_as_their_json_text() -> None:
    snap = snapshot_from_json({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
                               "summary": {"operation": "append", "added-records": 12,
                                           "flag": True}})
    assert snap.summary is not None
    assert snap.summary["added-records"] == "12" and snap.summary["flag"] == "true"


def test_operation_enum_values() -> None:
    assert [o.value for o in Operation] == ["append", "replace", "overwrite", "delete"]
    assert str(Operation.REPLACE) == "replace"
    assert Operation.APPEND == "append"


# --------------------------------------------------------------------------- refs


def test_spec_example_ref() -> None:
    # Appendix C example of "refs"
    ref = snapshot_ref_from_json({"snapshot-id": 123456789000, "type": "tag",
                                  "max-ref-age-ms": 10000000})
    assert ref == SnapshotRef.tag(123456789000, max_ref_age_ms=10000000)
    assert ref.is_tag and not ref.is_branch
    assert snapshot_ref_to_json(ref) == {"snapshot-id": 123456789000, "type": "tag",
                                         "max-ref-age-ms": 10000000}


def test_branch_with_retention() -> None:
    raw = {"snapshot-id": 1, "type": "branch", "min-snapshots-to-keep": 3,
           "max-snapshot-age-ms": 1000, "max-ref-age-ms": 2000}
    ref = snapshot_ref_from_json(raw)
    assert ref.ref_type is SnapshotRefType.BRANCH
    assert (ref.min_snapshots_to_keep, ref.max_snapshot_age_ms, ref.max_ref_age_ms) == (
        3, 1000, 2000)
    assert snapshot_ref_to_json(ref) == raw


def test_ref_type_is_case_insensitive_like_java() -> None:
    assert snapshot_ref_from_json({"snapshot-id": 1, "type": "BRANCH"}).is_branch


@pytest.mark.parametrize("key", ["min-snapshots-to-keep", "max-snapshot-age-ms"])
def test_tags_reject_branch_retention(key: str) -> None:
    # Spec: Snapshot References - "For branch type only"
    with pytest.raises(InvalidMetadata) as e:
        snapshot_ref_from_json({"snapshot-id": 1, "type": "tag", key: 5}, where="refs.v1")
    assert e.value.field == f"refs.v1.{key}"
    with pytest.raises(ValidationError):
        SnapshotRef(1, SnapshotRefType.TAG, **{key.replace("-", "_"): 5})


@pytest.mark.parametrize("key", ["min-snapshots-to-keep", "max-snapshot-age-ms",
                                 "max-ref-age-ms"])
def test_retention_limits_must_be_positive(key: str) -> None:
    with pytest.raises(InvalidMetadata) as e:
        snapshot_ref_from_json({"snapshot-id": 1, "type": "branch", key: 0}, where="refs.b")
    assert e.value.field == f"refs.b.{key}"


def test_ref_bad_type() -> None:
    with pytest.raises(InvalidMetadata) as e:
        snapshot_ref_from_json({"snapshot-id": 1, "type": "label"}, where="refs.x")
    assert e.value.field == "refs.x.type"
    with pytest.raises(ValidationError):
        SnapshotRef(1, "label")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- logs & stats


def test_log_entries() -> None:
    # Appendix C examples of snapshot-log and metadata-log entries
    e = snapshot_log_entry_from_json({"snapshot-id": 30517296, "timestamp-ms": 1515100})
    assert e == SnapshotLogEntry(1515100, 30517296)
    assert snapshot_log_entry_to_json(e) == {"timestamp-ms": 1515100, "snapshot-id": 30517296}
    m = metadata_log_entry_from_json({"metadata-file": "s3://bucket/.../v1.json",
                                      "timestamp-ms": 1515100})
    assert m == MetadataLogEntry(1515100, "s3://bucket/.../v1.json")
    assert metadata_log_entry_to_json(m) == {"timestamp-ms": 1515100,
                                             "metadata-file": "s3://bucket/.../v1.json"}
    with pytest.raises(InvalidMetadata) as err:
        metadata_log_entry_from_json({"timestamp-ms": 1}, where="metadata-log[2]")
    assert err.value.field == "metadata-log[2].metadata-file"


def test_statistics_file() -> None:
    raw = {
        "snapshot-id": 3055729675574597004,
        "statistics-path": "s3://a/b/stats.puffin",
        "file-size-in-bytes": 413,
        "file-footer-size-in-bytes": 42,
        "key-metadata": "aWNlYmVyZwo=",
        "blob-metadata": [{"type": "apache-datasketches-theta-v1",
                           "snapshot-id": 3055729675574597004, "sequence-number": 1,
                           "fields": [1], "properties": {"ndv": "3"}}],
    }
    stats = statistics_file_from_json(raw)
    assert stats.key_metadata == b"iceberg\n"
    assert stats.blob_metadata == (
        BlobMetadata("apache-datasketches-theta-v1", 3055729675574597004, 1, (1,),
                     {"ndv": "3"}),
    )
    assert statistics_file_to_json(stats) == raw
    bad = dict(raw, **{"blob-metadata": [dict(raw["blob-metadata"][0], fields=["1"])]})
    with pytest.raises(InvalidMetadata) as e:
        statistics_file_from_json(bad, where="statistics[0]")
    assert e.value.field == "statistics[0].blob-metadata[0].fields[0]"


def test_partition_statistics_file() -> None:
    raw = {"snapshot-id": 1, "statistics-path": "p.parquet", "file-size-in-bytes": 10}
    p = partition_statistics_file_from_json(raw)
    assert p == PartitionStatisticsFile(1, "p.parquet", 10)
    assert partition_statistics_file_to_json(p) == raw


def test_encryption_key() -> None:
    raw = {"key-id": "5f819b", "encrypted-key-metadata": "aWNlYmVyZwo=",
           "encrypted-by-id": "kek", "properties": {"kms": "x"}}
    key = encrypted_key_from_json(raw)
    assert key == EncryptedKey("5f819b", b"iceberg\n", "kek", {"kms": "x"})
    assert encrypted_key_to_json(key) == raw
    # the Appendix C example spells the field "key-metadata"
    alias = encrypted_key_from_json({"key-id": "5f819b", "key-metadata": "aWNlYmVyZwo="})
    assert alias.encrypted_key_metadata == b"iceberg\n"
    assert encrypted_key_to_json(alias) == {"key-id": "5f819b",
                                            "encrypted-key-metadata": "aWNlYmVyZwo="}


def test_encryption_key_errors() -> None:
    with pytest.raises(InvalidMetadata) as e:
        encrypted_key_from_json({"key-id": "k", "encrypted-key-metadata": "not base64!"},
                                where="encryption-keys[0]")
    assert e.value.field == "encryption-keys[0].encrypted-key-metadata"
    with pytest.raises(InvalidMetadata) as e:
        encrypted_key_from_json({"encrypted-key-metadata": "AA=="}, where="encryption-keys[1]")
    assert e.value.field == "encryption-keys[1].key-id"


# --------------------------------------------------------------------------- round trips

longs = st.integers(min_value=-(2**63), max_value=2**63 - 1)
non_neg = st.integers(min_value=0, max_value=2**63 - 1)
positive = st.integers(min_value=1, max_value=2**63 - 1)
ints = st.integers(min_value=-(2**31), max_value=2**31 - 1)
text = st.text(max_size=20)
str_maps = st.dictionaries(text, text, max_size=4)


@st.composite
def summaries(draw: st.DrawFn) -> Summary:
    op = draw(st.sampled_from([*(o.value for o in Operation), "custom-op"]))
    props = draw(st.dictionaries(text.filter(lambda k: k != "operation"), text, max_size=5))
    return Summary(op, props)


@st.composite
def snapshots(draw: st.DrawFn, format_version: int = 3) -> Snapshot:
    use_list = format_version >= 2 or draw(st.booleans())
    first_row_id = draw(st.none() | non_neg) if format_version >= 3 else None
    return Snapshot(
        snapshot_id=draw(longs),
        parent_snapshot_id=draw(st.none() | longs),
        sequence_number=draw(non_neg) if format_version >= 2 else 0,
        timestamp_ms=draw(longs),
        manifest_list=draw(text) if use_list else None,
        manifests=None if use_list else tuple(draw(st.lists(text, max_size=3))),
        summary=draw(st.none() | summaries()) if format_version == 1 else draw(summaries()),
        schema_id=draw(st.none() | ints),
        first_row_id=first_row_id,
        added_rows=draw(non_neg) if first_row_id is not None else None,
        key_id=draw(st.none() | text) if format_version >= 3 else None,
    )


@st.composite
def refs(draw: st.DrawFn) -> SnapshotRef:
    if draw(st.booleans()):
        return SnapshotRef.tag(draw(longs), max_ref_age_ms=draw(st.none() | positive))
    return SnapshotRef.branch(
        draw(longs),
        min_snapshots_to_keep=draw(st.none() | st.integers(1, 2**31 - 1)),
        max_snapshot_age_ms=draw(st.none() | positive),
        max_ref_age_ms=draw(st.none() | positive),
    )


blobs = st.builds(BlobMetadata, text, longs, longs, st.lists(ints, max_size=3).map(tuple),
                  str_maps)
stats_files = st.builds(StatisticsFile, longs, text, non_neg, non_neg,
                        st.lists(blobs, max_size=3).map(tuple), st.none() | st.binary())
keys = st.builds(EncryptedKey, text, st.binary(), st.none() | text, str_maps)


def _via_text(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


@given(st.integers(1, 3).flatmap(lambda v: st.tuples(st.just(v), snapshots(v))))
def test_snapshot_round_trip(case: tuple[int, Snapshot]) -> None:
    version, snap = case
    assert snapshot_from_json(_via_text(snapshot_to_json(snap, version)),
                              format_version=version) == snap


@given(st.integers(1, 3).flatmap(snapshots))
def test_fast_and_checked_readers_agree(snap: Snapshot) -> None:
    # a plain dict takes the fast path; any other mapping takes the fully checked path
    raw = _via_text(snapshot_to_json(snap))
    assert snapshot_from_json(raw) == snapshot_from_json(MappingProxyType(raw))


@given(stats_files, keys)
def test_objects_with_properties_are_hashable(stats: StatisticsFile, key: EncryptedKey) -> None:
    assert hash(stats) == hash(statistics_file_from_json(_via_text(
        statistics_file_to_json(stats))))
    assert hash(key) == hash(EncryptedKey(key.key_id, key.encrypted_key_metadata,
                                          key.encrypted_by_id, dict(key.properties)))


@given(refs())
def test_ref_round_trip(ref: SnapshotRef) -> None:
    assert snapshot_ref_from_json(_via_text(snapshot_ref_to_json(ref))) == ref


@given(stats_files)
def test_statistics_round_trip(stats: StatisticsFile) -> None:
    assert statistics_file_from_json(_via_text(statistics_file_to_json(stats))) == stats


@given(keys)
def test_encryption_key_round_trip(key: EncryptedKey) -> None:
    assert encrypted_key_from_json(_via_text(encrypted_key_to_json(key))) == key


@given(st.builds(SnapshotLogEntry, longs, longs), st.builds(MetadataLogEntry, longs, text),
       st.builds(PartitionStatisticsFile, longs, text, non_neg))
def test_small_objects_round_trip(s: SnapshotLogEntry, m: MetadataLogEntry,
                                  p: PartitionStatisticsFile) -> None:
    assert snapshot_log_entry_from_json(_via_text(snapshot_log_entry_to_json(s))) == s
    assert metadata_log_entry_from_json(_via_text(metadata_log_entry_to_json(m))) == m
    assert partition_statistics_file_from_json(
        _via_text(partition_statistics_file_to_json(p))) == p


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
))
def test_garbage_raises_only_iceberg_errors(garbage: Any) -> None:
    for parse in (snapshot_from_json, snapshot_ref_from_json, statistics_file_from_json,
                  encrypted_key_from_json, metadata_log_entry_from_json):
        with contextlib.suppress(IcebergError):
            parse(garbage)
