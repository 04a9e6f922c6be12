"""Table metadata updates: create table, REST-shaped updates/requirements, apply_updates.

Golden behaviour comes from the table spec and from Iceberg Java 1.10 (``TableMetadata.
newTableMetadata`` and ``TableMetadata.buildFrom(base)`` with REST ``MetadataUpdate``s, run in one
JVM per module by tests/reference/java_table_updates.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import CommitConflict, InvalidMetadata, UnsupportedVersion, ValidationError
from icenb.spec.partition_spec import PartitionField, PartitionSpec, build_partition_spec
from icenb.spec.schema import Schema, schema_from_json
from icenb.spec.snapshot import (
    PartitionStatisticsFile,
    Snapshot,
    SnapshotRef,
    SnapshotRefType,
    StatisticsFile,
    Summary,
)
from icenb.spec.sort_order import UNSORTED, SortOrder, build_sort_order
from icenb.spec.table_metadata import (
    TableMetadata,
    table_metadata_from_json,
    table_metadata_to_json,
    to_json_string,
)
from icenb.spec.table_updates import (
    RESERVED_PROPERTIES,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    AssignUUID,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    TableRequirement,
    TableUpdate,
    UpgradeFormatVersion,
    apply_updates,
    assign_fresh_ids,
    check_requirements,
    new_table_metadata,
    requirement_from_json,
    requirement_to_json,
    update_from_json,
    update_to_json,
)
from icenb.spec.types import (
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    TimestampNanoType,
)
from tests.reference_fixtures import run_reference_batch
from tests.spec.test_partition_spec import specs as spec_strategy
from tests.spec.test_schema import schemas as schema_strategy
from tests.spec.test_snapshot import refs as ref_strategy
from tests.spec.test_snapshot import snapshots as snapshot_strategy
from tests.spec.test_snapshot import stats_files
from tests.spec.test_sort_order import sort_orders as order_strategy

UUID = "6c5d4f4e-7a56-4d3c-9d59-1f4a1e2b3c4d"
T0 = 1_700_000_000_000
LOC = "/warehouse/db/t"
V1_FILE = f"{LOC}/metadata/v1.metadata.json"


# --------------------------------------------------------------------------- fixtures (schemas)

def _schema_json(fields: list[dict[str, Any]], ident: list[int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "struct", "schema-id": 7, "fields": fields}
    if ident:
        out["identifier-field-ids"] = ident
    return out


def _f(fid: int, name: str, t: Any, required: bool = False) -> dict[str, Any]:
    return {"id": fid, "name": name, "required": required, "type": t}


# ids deliberately not fresh: 10, 20, ... so that reassignment shows
NESTED = _schema_json([
    _f(10, "id", "long", True),
    _f(20, "s", {"type": "struct", "fields": [
        _f(21, "a", "int"),
        _f(22, "b", {"type": "list", "element-id": 23, "element": {"type": "struct", "fields": [
            _f(24, "x", "string")]}, "element-required": False}),
    ]}),
    _f(30, "m", {"type": "map", "key-id": 31, "key": "string", "value-id": 32,
                 "value": {"type": "struct", "fields": [_f(33, "v", "double")]},
                 "value-required": True}),
    _f(40, "ts", "timestamp"),
    _f(50, "tags", {"type": "list", "element-id": 51, "element": "string",
                    "element-required": True}),
], ident=[10])

ALL_TYPES = _schema_json([
    _f(2, "i", "int", True), _f(3, "l", "long"), _f(5, "d", "date"), _f(7, "ts", "timestamp"),
    _f(8, "tstz", "timestamptz"), _f(9, "s", "string"), _f(11, "dec", "decimal(10, 2)"),
    _f(12, "bin", "binary"), _f(13, "fx", "fixed[4]"), _f(14, "u", "uuid"), _f(15, "t", "time"),
    _f(16, "b", "boolean"), _f(17, "f", "float"),
], ident=[2])

V3_TYPES = _schema_json([
    _f(1, "id", "long", True), _f(4, "tsn", "timestamp_ns"), _f(6, "tsnz", "timestamptz_ns"),
    _f(8, "unk", "unknown"), _f(9, "v", "variant"),
    {"id": 12, "name": "dflt", "required": False, "type": "int", "initial-default": 34,
     "write-default": 35},
])


def _spec(*fields: tuple[int, str, str]) -> dict[str, Any]:
    return {"spec-id": 0, "fields": [
        {"source-id": sid, "field-id": 1000 + i, "name": name, "transform": t}
        for i, (sid, name, t) in enumerate(fields)]}


def _order(*fields: tuple[int, str, str, str], order_id: int = 3) -> dict[str, Any]:
    return {"order-id": order_id, "fields": [
        {"source-id": sid, "transform": t, "direction": d, "null-order": n}
        for sid, t, d, n in fields]}


CREATE_CASES: dict[str, dict[str, Any]] = {
    "nested_v1": dict(schema=NESTED, spec=_spec((40, "ts_day", "day"), (10, "id_b", "bucket[16]")),
                      sort_order=_order((21, "identity", "desc", "nulls-last")),
                      properties={"format-version": "1", "k": "v"}),
    "nested_v2": dict(schema=NESTED, spec=_spec((21, "a", "identity")),
                      sort_order=None, properties={"uuid": "x", "current-schema": "y"}),
    "nested_v3": dict(schema=NESTED, spec=None,
                      sort_order=_order((40, "hour", "asc", "nulls-first"),
                                        (10, "bucket[4]", "desc", "nulls-last")),
                      properties={"format-version": "3", "write.parquet.compression-codec": "gz"}),
    "transforms_v2": dict(schema=ALL_TYPES, spec=_spec(
        (2, "i", "identity"), (3, "l_bucket", "bucket[8]"), (9, "s_trunc", "truncate[4]"),
        (5, "d_year", "year"), (7, "ts_month", "month"), (8, "tstz_day", "day"),
        (11, "dec_trunc", "truncate[2]"), (14, "u_bucket", "bucket[3]"), (16, "b_null", "void"),
        (15, "t_bucket", "bucket[2]"), (13, "fx_b", "bucket[5]")),
        sort_order=_order((9, "truncate[2]", "asc", "nulls-last"),
                          (7, "day", "desc", "nulls-first"), (17, "identity", "asc",
                                                               "nulls-first")),
        properties={"write.metadata.metrics.column.s": "full", "commit.retry.num-retries": "3"}),
    "transforms_v1": dict(schema=ALL_TYPES, spec=_spec(
        (8, "tstz_hour", "hour"), (12, "bin_trunc", "truncate[3]"), (3, "l", "identity")),
        sort_order=None, properties={"format-version": "1"}),
    "v3_types": dict(schema=V3_TYPES, spec=_spec((4, "tsn_day", "day")), sort_order=None,
                     properties={"format-version": "3"}),
    "unpartitioned_v2": dict(schema=_schema_json([_f(1, "x", "int")]), spec=None,
                             sort_order=None, properties={}),
}


def _icenb_create(case: dict[str, Any]) -> TableMetadata:
    schema = schema_from_json(case["schema"])
    from icenb.spec.partition_spec import partition_spec_from_json
    from icenb.spec.sort_order import sort_order_from_json
    spec = (partition_spec_from_json(case["spec"], format_version=3)
            if case["spec"] is not None else None)
    order = (sort_order_from_json(case["sort_order"], format_version=3)
             if case["sort_order"] is not None else None)
    return new_table_metadata(schema, spec, order, LOC + "/", case["properties"],
                              table_uuid=UUID, last_updated_ms=T0)


# --------------------------------------------------------------------------- helpers


def base_table(version: int = 2, props: dict[str, str] | None = None) -> TableMetadata:
    schema = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "data", StringType()),
                    NestedField(3, "n", IntegerType()))
    spec = build_partition_spec(schema, ["bucket(4, id)"])
    return new_table_metadata(schema, spec, UNSORTED, LOC, props or {}, version,
                              table_uuid=UUID, last_updated_ms=T0)


def snap(sid: int, seq: int, *, parent: int | None = None, ts: int | None = None,
         first_row_id: int | None = None, added_rows: int | None = None) -> Snapshot:
    return Snapshot(snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq,
                    timestamp_ms=T0 + 1000 * sid if ts is None else ts,
                    manifest_list=f"{LOC}/metadata/snap-{sid}.avro",
                    summary=Summary("append", {"added-data-files": "1"}), schema_id=0,
                    first_row_id=first_row_id, added_rows=added_rows)


def commit(md: TableMetadata, *updates: TableUpdate, location: str | None = V1_FILE,
           now: int = T0 + 10**6) -> TableMetadata:
    return apply_updates(md, list(updates), metadata_location=location, now_ms=now)


def to_doc(md: TableMetadata) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(to_json_string(md))
    return doc


# --------------------------------------------------------------------------- fresh ids / create


def test_fresh_ids_are_assigned_breadth_first_like_java() -> None:
    fresh, last = assign_fresh_ids(schema_from_json(NESTED))
    ids = {fresh.column_name(i): i for i in fresh.field_ids()}
    # golden values from Java's TypeUtil.assignFreshIds on the same schema
    assert ids == {"id": 1, "s": 2, "m": 3, "ts": 4, "tags": 5, "s.a": 6, "s.b": 7,
                   "s.b.element": 8, "s.b.element.x": 9, "m.key": 10, "m.value": 11,
                   "m.value.v": 12, "tags.element": 13}
    assert last == 13
    assert fresh.identifier_field_ids == (1,)
    assert fresh.schema_id == 0


def test_new_table_defaults() -> None:
    md = base_table(2)
    assert (md.format_version, md.last_sequence_number, md.next_row_id) == (2, 0, None)
    assert md.spec.fields[0].field_id == 1000 and md.last_partition_id == 1000
    assert md.default_sort_order_id == 0 and md.snapshots == () and md.refs == {}
    assert md.properties == {"write.parquet.compression-codec": "zstd"}
    assert base_table(3).next_row_id == 0
    unpartitioned = new_table_metadata(Schema(NestedField(5, "x", IntegerType())),
                                       location="s3://b/t//")
    assert unpartitioned.last_partition_id == 999 and unpartitioned.last_column_id == 1
    assert unpartitioned.location == "s3://b/t" and unpartitioned.format_version == 2


def test_format_version_property_picks_the_version_and_is_not_stored() -> None:
    schema = Schema(NestedField(1, "x", IntegerType()))
    md = new_table_metadata(schema, None, None, LOC, {"format-version": "3", "uuid": "u"})
    assert md.format_version == 3 and not RESERVED_PROPERTIES & md.properties.keys()
    with pytest.raises(ValidationError) as e:
        new_table_metadata(schema, None, None, LOC, {"format-version": "3"}, 2)
    assert e.value.field == "format-version"
    v4 = new_table_metadata(schema, None, None, LOC, {"format-version": "4"})  # EXPERIMENTAL
    assert v4.format_version == 4 and v4.next_row_id == 0
    with pytest.raises(UnsupportedVersion):
        new_table_metadata(schema, None, None, LOC, {"format-version": "5"})
    with pytest.raises(ValidationError):
        new_table_metadata(schema, None, None, LOC, {"format-version": "two"})


@pytest.mark.parametrize(("kwargs", "field"), [
    (dict(properties={"write.metadata.metrics.column.nope": "full"}),
     "write.metadata.metrics.column.nope"),
    (dict(properties={"commit.retry.num-retries": "-1"}), "commit.retry.num-retries"),
    (dict(properties={"commit.retry.min-wait-ms": "soon"}), "commit.retry.min-wait-ms"),
    (dict(location=""), "location"),
])
def test_create_rejects_bad_input(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = dict(location=LOC, properties={})
    args.update(kwargs)
    with pytest.raises(ValidationError) as e:
        new_table_metadata(Schema(NestedField(1, "x", IntegerType())), **args)
    assert e.value.field == field


def test_create_checks_types_and_defaults_against_the_version() -> None:
    with pytest.raises(ValidationError, match="not supported until v3") as e:
        new_table_metadata(Schema(NestedField(1, "t", TimestampNanoType())), location=LOC)
    assert e.value.field == "t"
    with pytest.raises(ValidationError, match="initial-default") as e:
        new_table_metadata(Schema(NestedField(1, "n", IntegerType(), initial_default=3)),
                           location=LOC, format_version=2)
    assert e.value.field == "n"
    ok = new_table_metadata(Schema(NestedField(1, "n", IntegerType(), initial_default=3)),
                            location=LOC, format_version=3)
    assert ok.schema.fields[0].initial_default == 3


def test_create_rejects_specs_on_missing_or_unsuitable_columns() -> None:
    schema = Schema(NestedField(1, "x", IntegerType()),
                    NestedField(2, "l", ListType(3, IntegerType())))
    from icenb.spec.transforms import parse_transform
    missing = PartitionSpec(0, (PartitionField((9,), 1000, parse_transform("identity"), "z"),))
    with pytest.raises(ValidationError) as e:
        new_table_metadata(schema, missing, None, LOC)
    assert (e.value.field, e.value.value) == ("z", 9)
    in_list = PartitionSpec(0, (PartitionField((3,), 1000, parse_transform("identity"), "e"),))
    with pytest.raises(ValidationError, match="list or map"):
        new_table_metadata(schema, in_list, None, LOC)


# --------------------------------------------------------------------------- JSON shapes


def _updates() -> st.SearchStrategy[TableUpdate]:
    ids = st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4).map(tuple)
    props = st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=4)
    return st.one_of(
        st.builds(AssignUUID, st.uuids().map(str)),
        st.builds(UpgradeFormatVersion, st.integers(1, 3)),
        st.builds(AddSchema, schema_strategy(), st.none() | st.integers(0, 1000)),
        st.builds(SetCurrentSchema, st.integers(-1, 100)),
        st.builds(AddPartitionSpec, spec_strategy()),
        st.builds(SetDefaultSpec, st.integers(-1, 100)),
        st.builds(AddSortOrder, order_strategy()),
        st.builds(SetDefaultSortOrder, st.integers(-1, 100)),
        st.builds(AddSnapshot, snapshot_strategy(3)),
        st.builds(SetSnapshotRef.of, st.text(min_size=1, max_size=8), ref_strategy()),
        st.builds(RemoveSnapshots, st.lists(st.integers(-(2**63), 2**63 - 1),
                                            max_size=4).map(tuple)),
        st.builds(RemoveSnapshotRef, st.text(max_size=8)),
        st.builds(SetLocation, st.text(max_size=12)),
        st.builds(SetProperties, props),
        st.builds(RemoveProperties, st.lists(st.text(max_size=8), max_size=4).map(tuple)),
        st.builds(SetStatistics, stats_files),
        st.builds(RemoveStatistics, st.integers(-(2**63), 2**63 - 1)),
        st.builds(SetPartitionStatistics, st.builds(
            PartitionStatisticsFile, st.integers(-(2**63), 2**63 - 1), st.text(max_size=8),
            st.integers(0, 2**63 - 1))),
        st.builds(RemovePartitionStatistics, st.integers(-(2**63), 2**63 - 1)),
        st.builds(RemovePartitionSpecs, ids),
        st.builds(RemoveSchemas, ids),
    )


def _requirements() -> st.SearchStrategy[TableRequirement]:
    i32 = st.integers(-(2**31), 2**31 - 1)
    return st.one_of(
        st.just(AssertCreate()),
        st.builds(AssertTableUUID, st.uuids().map(str)),
        st.builds(AssertRefSnapshotId, st.text(max_size=8),
                  st.none() | st.integers(-(2**63), 2**63 - 1)),
        st.builds(AssertLastAssignedFieldId, i32),
        st.builds(AssertCurrentSchemaId, i32),
        st.builds(AssertLastAssignedPartitionId, i32),
        st.builds(AssertDefaultSpecId, i32),
        st.builds(AssertDefaultSortOrderId, i32),
    )


@settings(max_examples=300)
@given(update=_updates())
def test_update_json_round_trip(update: TableUpdate) -> None:
    doc = json.loads(json.dumps(update_to_json(update, 3)))
    assert doc["action"] == update.action
    assert update_from_json(doc) == update


@given(requirement=_requirements())
def test_requirement_json_round_trip(requirement: TableRequirement) -> None:
    doc = json.loads(json.dumps(requirement_to_json(requirement)))
    assert doc["type"] == requirement.action
    assert requirement_from_json(doc) == requirement


def test_legacy_property_keys_are_read() -> None:
    assert update_from_json({"action": "set-properties", "updated": {"a": "1"}}) == \
        SetProperties({"a": "1"})
    assert update_from_json({"action": "remove-properties", "removed": ["a"]}) == \
        RemoveProperties(("a",))


@pytest.mark.parametrize(("doc", "field"), [
    ({"action": "bogus"}, "update.action"),
    ({}, "update.action"),
    ({"action": "set-current-schema", "schema-id": "1"}, "update.schema-id"),
    ({"action": "set-snapshot-ref", "ref-name": "t", "snapshot-id": 1, "type": "tag",
      "min-snapshots-to-keep": 2}, "update.min-snapshots-to-keep"),
    ({"action": "add-snapshot", "snapshot": {"snapshot-id": 1}}, "update.snapshot.timestamp-ms"),
    ({"action": "remove-snapshots", "snapshot-ids": [1, "x"]}, "update.snapshot-ids.1"),
])
def test_bad_update_json_names_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidMetadata) as e:
        update_from_json(doc)
    assert e.value.field == field


def test_bad_requirement_json_names_the_field() -> None:
    with pytest.raises(InvalidMetadata) as e:
        requirement_from_json({"type": "assert-current-schema-id"})
    assert e.value.field == "requirement.current-schema-id"


# --------------------------------------------------------------------------- requirements


def test_requirements_hold_and_fail_with_names_and_values() -> None:
    md = commit(base_table(), AddSnapshot(snap(1, 1)),
                SetSnapshotRef.of("main", SnapshotRef.branch(1)))
    good: list[TableRequirement] = [
        AssertTableUUID(UUID.upper()), AssertRefSnapshotId("main", 1),
        AssertRefSnapshotId("dev", None), AssertLastAssignedFieldId(3), AssertCurrentSchemaId(0),
        AssertLastAssignedPartitionId(1000), AssertDefaultSpecId(0), AssertDefaultSortOrderId(0),
    ]
    check_requirements(md, good)
    bad: list[tuple[TableRequirement, Any]] = [
        (AssertCreate(), UUID), (AssertTableUUID(str(UUID[::-1])), UUID),
        (AssertRefSnapshotId("main", 2), 1), (AssertRefSnapshotId("main", None), 1),
        (AssertRefSnapshotId("dev", 1), None), (AssertLastAssignedFieldId(4), 3),
        (AssertCurrentSchemaId(1), 0), (AssertLastAssignedPartitionId(999), 1000),
        (AssertDefaultSpecId(1), 0), (AssertDefaultSortOrderId(1), 0),
    ]
    for requirement, actual in bad:
        with pytest.raises(CommitConflict) as e:
            check_requirements(md, [*good, requirement])
        assert (e.value.field, e.value.value) == (requirement.action, actual)


def test_requirements_on_a_missing_table() -> None:
    check_requirements(None, [AssertCreate(), AssertLastAssignedFieldId(0),
                              AssertLastAssignedPartitionId(999)])
    with pytest.raises(CommitConflict, match="does not exist"):
        check_requirements(None, [AssertCurrentSchemaId(0)])


# --------------------------------------------------------------------------- applying: rules


def test_nothing_changed_returns_the_base() -> None:
    md = base_table()
    assert commit(md) is md
    assert commit(md, SetLocation(LOC + "/"), SetProperties({}), RemoveStatistics(5),
                  AddSchema(md.schema), UpgradeFormatVersion(2), AddSortOrder(UNSORTED)) is md


def test_sequence_numbers_and_snapshot_log() -> None:
    md = commit(base_table(), AddSnapshot(snap(1, 1)),
                SetSnapshotRef.of("main", SnapshotRef.branch(1)))
    assert (md.current_snapshot_id, md.last_sequence_number) == (1, 1)
    assert md.last_updated_ms == snap(1, 1).timestamp_ms
    assert [(e.timestamp_ms, e.snapshot_id) for e in md.snapshot_log] == [(T0 + 1000, 1)]
    assert [(e.timestamp_ms, e.metadata_file) for e in md.metadata_log] == [(T0, V1_FILE)]
    for seq in (0, 1):
        with pytest.raises(ValidationError) as e:
            commit(md, AddSnapshot(snap(2, seq, parent=1)))
        assert (e.value.field, e.value.value) == ("snapshot.sequence-number", seq)
    with pytest.raises(ValidationError, match="already exists"):
        commit(md, AddSnapshot(snap(1, 2)))
    # a tag move is not a main move; moving main to an old snapshot is logged at commit time
    md2 = commit(md, AddSnapshot(snap(2, 2, parent=1)),
                 SetSnapshotRef.of("main", SnapshotRef.branch(2)), now=T0 + 5000)
    md3 = commit(md2, SetSnapshotRef.of("main", SnapshotRef.branch(1)), now=T0 + 9000)
    assert [(e.timestamp_ms, e.snapshot_id) for e in md3.snapshot_log][-1] == (T0 + 9000, 1)
    assert md3.last_updated_ms == T0 + 9000


def test_v1_snapshots_carry_no_sequence_number() -> None:
    md = commit(base_table(1), AddSnapshot(snap(1, 0)))
    assert md.last_sequence_number == 0
    with pytest.raises(ValidationError):
        commit(base_table(1), AddSnapshot(snap(1, 1)))


def test_row_lineage() -> None:
    md = commit(base_table(3), AddSnapshot(snap(1, 1, first_row_id=0, added_rows=10)),
                SetSnapshotRef.of("main", SnapshotRef.branch(1)))
    assert md.next_row_id == 10
    md = commit(md, AddSnapshot(snap(2, 2, parent=1, first_row_id=10, added_rows=5)))
    assert md.next_row_id == 15  # advanced although no branch points at it
    for bad in (snap(3, 3, first_row_id=14, added_rows=1), snap(3, 3, first_row_id=16,
                                                              added_rows=1), snap(3, 3)):
        with pytest.raises(ValidationError) as e:
            commit(md, AddSnapshot(bad))
        assert e.value.field == "snapshot.first-row-id"
    with pytest.raises(ValidationError, match="v3 field"):
        commit(base_table(2), AddSnapshot(snap(1, 1, first_row_id=0, added_rows=1)))


def test_intermediate_main_moves_leave_the_snapshot_log() -> None:
    md = commit(base_table(), AddSnapshot(snap(1, 1)),
                SetSnapshotRef.of("main", SnapshotRef.branch(1)), AddSnapshot(snap(2, 2, parent=1)),
                SetSnapshotRef.of("main", SnapshotRef.branch(2)))
    assert [e.snapshot_id for e in md.snapshot_log] == [2]


def test_metadata_log_is_trimmed_to_previous_versions_max() -> None:
    md = base_table(2, {"write.metadata.previous-versions-max": "2"})
    for i in range(1, 5):
        md = commit(md, SetProperties({"n": str(i)}), location=f"{LOC}/metadata/v{i}.json",
                    now=T0 + i)
    assert [e.metadata_file for e in md.metadata_log] == [f"{LOC}/metadata/v{i}.json"
                                                          for i in (3, 4)]
    assert [e.timestamp_ms for e in md.metadata_log] == [T0 + 2, T0 + 3]
    assert commit(md, SetProperties({"n": "x"}), location=None).metadata_log == md.metadata_log


def test_ids_are_reused_for_equal_schemas_specs_and_orders() -> None:
    md = base_table()
    wider = Schema(*md.schema.fields, NestedField(4, "extra", StringType()), schema_id=99)
    md1 = commit(md, AddSchema(wider), SetCurrentSchema())
    assert (md1.current_schema_id, md1.last_column_id, len(md1.schemas)) == (1, 4, 2)
    md2 = commit(md1, AddSchema(md.schema), SetCurrentSchema())  # back to the first schema
    assert (md2.current_schema_id, len(md2.schemas), md2.last_column_id) == (0, 2, 4)
    spec = build_partition_spec(wider, ["bucket(4, id)", "truncate(2, extra)"])
    md3 = commit(md1, AddPartitionSpec(spec), SetDefaultSpec())
    assert (md3.default_spec_id, md3.last_partition_id) == (1, 1001)
    same = PartitionSpec(5, (PartitionField((1,), 1000, md.spec.fields[0].transform,
                                            "id_bucket"),))
    assert commit(md3, AddPartitionSpec(same), SetDefaultSpec()).default_spec_id == 0
    order = build_sort_order(wider, "extra DESC")
    md4 = commit(md1, AddSortOrder(order), SetDefaultSortOrder())
    assert md4.default_sort_order_id == 1
    md5 = commit(md4, AddSortOrder(SortOrder(7, order.fields)), AddSortOrder(UNSORTED),
                 SetDefaultSortOrder())
    assert (md5.default_sort_order_id, [o.order_id for o in md5.sort_orders]) == (0, [0, 1])


@pytest.mark.parametrize(("updates", "field"), [
    ([SetCurrentSchema()], "schema-id"),
    ([SetCurrentSchema(5)], "schema-id"),
    ([SetDefaultSpec()], "spec-id"),
    ([SetDefaultSpec(3)], "spec-id"),
    ([SetDefaultSortOrder(4)], "sort-order-id"),
    ([SetSnapshotRef("dev", 42)], "snapshot-id"),
    ([UpgradeFormatVersion(1)], "format-version"),
    ([AssignUUID("0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b")], "uuid"),
    ([SetProperties({"format-version": "3"})], "format-version"),
    ([RemovePartitionSpecs((0,))], "spec-ids"),
    ([RemoveSchemas((0,))], "schema-ids"),
    ([SetStatistics(StatisticsFile(42, "s.puffin", 1, 1))], "statistics.snapshot-id"),
    ([AddSchema(Schema(NestedField(1, "t", TimestampNanoType())))], "t"),
    ([AddSchema(Schema(NestedField(2, "data", StringType()))), SetCurrentSchema()], "id_bucket"),
    ([SetLocation("")], "location"),
])
def test_invalid_updates_name_the_field_and_change_nothing(updates: list[TableUpdate],
                                                            field: str) -> None:
    md = base_table()
    before = to_doc(md)
    with pytest.raises(ValidationError) as e:
        commit(md, SetProperties({"a": "b"}), *updates)
    assert e.value.field == field
    assert to_doc(md) == before


def test_upgrades_only_upward_and_not_beyond_v4() -> None:
    md = commit(base_table(1), UpgradeFormatVersion(2), UpgradeFormatVersion(3))
    assert (md.format_version, md.next_row_id, md.last_sequence_number) == (3, 0, 0)
    with pytest.raises(UnsupportedVersion):
        commit(md, UpgradeFormatVersion(5))


def test_removing_snapshots_drops_refs_statistics_and_history() -> None:
    md = commit(base_table(), AddSnapshot(snap(1, 1)),
                SetSnapshotRef.of("main", SnapshotRef.branch(1)))
    md = commit(md, AddSnapshot(snap(2, 2, parent=1)),
                SetSnapshotRef.of("main", SnapshotRef.branch(2)),
                SetSnapshotRef.of("t1", SnapshotRef.tag(1, max_ref_age_ms=5)),
                SetStatistics(StatisticsFile(1, "s1.puffin", 10, 5)),
                SetPartitionStatistics(PartitionStatisticsFile(1, "p1.parquet", 10)))
    out = commit(md, RemoveSnapshots((1, 77)))
    assert [s.snapshot_id for s in out.snapshots] == [2]
    assert set(out.refs) == {"main"} and out.statistics == () and out.partition_statistics == ()
    assert [e.snapshot_id for e in out.snapshot_log] == [2]
    gone = commit(md, RemoveSnapshots((2,)))  # as Java: main goes too, no current snapshot
    assert gone.current_snapshot_id is None and set(gone.refs) == {"t1"}
    assert commit(md, RemoveSnapshotRef("main")).current_snapshot_id is None


def test_tags_cannot_be_main_and_refs_keep_retention() -> None:
    md = commit(base_table(), AddSnapshot(snap(1, 1)))
    with pytest.raises(ValidationError, match="main must be a branch"):
        commit(md, SetSnapshotRef.of("main", SnapshotRef.tag(1)))
    ref = SnapshotRef.branch(1, min_snapshots_to_keep=2, max_snapshot_age_ms=9, max_ref_age_ms=8)
    assert commit(md, SetSnapshotRef.of("dev", ref)).refs["dev"] == ref
    with pytest.raises(ValidationError):
        SetSnapshotRef("t", 1, SnapshotRefType.TAG, min_snapshots_to_keep=3)


def test_assign_uuid_to_a_v1_table_without_one() -> None:
    doc = table_metadata_to_json(base_table(1))
    del doc["table-uuid"]
    md = table_metadata_from_json(doc)
    with pytest.raises(ValidationError, match="UUID"):
        commit(md, UpgradeFormatVersion(2))
    up = commit(md, AssignUUID(UUID), UpgradeFormatVersion(2))
    assert (up.table_uuid, up.format_version) == (UUID, 2)


# --------------------------------------------------------------------------- Java agreement


def _replay(scenario: tuple[TableMetadata, list[TableUpdate], str | None]) -> TableMetadata:
    base, updates, _ = scenario
    return commit(base, *updates)


def _json(md: TableMetadata) -> str:
    return to_json_string(md)


def _scenarios() -> dict[str, tuple[TableMetadata, list[TableUpdate], str | None]]:
    """Named (base, updates, base metadata file) sequences applied by icenb and by Java."""
    out: dict[str, tuple[TableMetadata, list[TableUpdate], str | None]] = {}
    v2 = base_table(2)
    main = SetSnapshotRef.of
    out["v2_snapshots_and_refs"] = (v2, [
        AddSnapshot(snap(1, 1)), main("main", SnapshotRef.branch(1)),
        AddSnapshot(snap(2, 2, parent=1)), main("main", SnapshotRef.branch(2)),
        main("t1", SnapshotRef.tag(1, max_ref_age_ms=86400000)),
        main("dev", SnapshotRef.branch(2, min_snapshots_to_keep=3, max_snapshot_age_ms=60000)),
    ], V1_FILE)
    two = _replay(out["v2_snapshots_and_refs"])
    out["v2_expire"] = (two, [RemoveSnapshots((1,)), SetProperties({"a": "1", "b": "2"}),
                              RemoveProperties(("a", "zz")), SetLocation("/elsewhere/t/")],
                        f"{LOC}/metadata/v2.metadata.json")
    out["v2_remove_main_and_branch_moves"] = (two, [
        RemoveSnapshotRef("main"), main("dev", SnapshotRef.branch(1)),
        AddSnapshot(snap(3, 3, parent=2)), main("dev", SnapshotRef.branch(3))], None)
    out["v2_expire_current"] = (two, [RemoveSnapshots((2,))], V1_FILE)
    out["v2_statistics"] = (two, [
        SetStatistics(StatisticsFile(1, "/s/1.puffin", 100, 20)),
        SetStatistics(StatisticsFile(2, "/s/2.puffin", 200, 30)),
        SetPartitionStatistics(PartitionStatisticsFile(2, "/s/p2.parquet", 50)),
        SetStatistics(StatisticsFile(1, "/s/1b.puffin", 110, 21)), RemoveStatistics(2),
        RemovePartitionStatistics(9)], V1_FILE)
    wider = Schema(*v2.schema.fields, NestedField(4, "extra", StringType()),
                   NestedField(5, "m", MapType(6, StringType(), 7, IntegerType())))
    spec = build_partition_spec(wider, ["bucket(4, id)", "truncate(2, extra)", "data"])
    out["v2_evolution"] = (v2, [
        AddSchema(wider), SetCurrentSchema(), AddPartitionSpec(spec), SetDefaultSpec(),
        AddSortOrder(build_sort_order(wider, "extra DESC NULLS LAST, bucket(4, id)")),
        SetDefaultSortOrder(), AddSchema(v2.schema), SetCurrentSchema(0),
        AddPartitionSpec(v2.spec), SetDefaultSpec(0), AddSortOrder(UNSORTED),
        SetDefaultSortOrder(0)], V1_FILE)
    evolved = _replay(out["v2_evolution"])
    out["v2_remove_specs_schemas"] = (evolved, [RemovePartitionSpecs((1,)), RemoveSchemas((1,))],
                                      V1_FILE)
    out["v2_to_v3_lineage"] = (two, [
        UpgradeFormatVersion(3), AddSnapshot(snap(3, 3, parent=2, first_row_id=0, added_rows=7)),
        main("main", SnapshotRef.branch(3)),
        AddSnapshot(snap(4, 4, parent=3, first_row_id=7, added_rows=3))], V1_FILE)
    v1 = base_table(1)
    v1_spec = PartitionSpec(0, (*v1.spec.fields, PartitionField(
        (2,), 1001, build_partition_spec(v1.schema, ["truncate(3, data)"]).fields[0].transform,
        "data_trunc")))
    out["v1_snapshots_spec_upgrade"] = (v1, [
        AddSnapshot(snap(1, 0)), main("main", SnapshotRef.branch(1)),
        AddPartitionSpec(v1_spec), SetDefaultSpec(), UpgradeFormatVersion(2),
        AddSnapshot(snap(2, 1, parent=1)), main("main", SnapshotRef.branch(2))], V1_FILE)
    out["v3_intermediate"] = (base_table(3), [
        AddSnapshot(snap(1, 1, first_row_id=0, added_rows=4)), main("main", SnapshotRef.branch(1)),
        AddSnapshot(snap(2, 2, parent=1, first_row_id=4, added_rows=6)),
        main("main", SnapshotRef.branch(2))], V1_FILE)
    trim = base_table(2, {"write.metadata.previous-versions-max": "2"})
    for i in range(1, 4):
        trim = commit(trim, SetProperties({"n": str(i)}), location=f"{LOC}/metadata/v{i}.json",
                      now=T0 + i)
    out["metadata_log_trim"] = (trim, [SetProperties({"n": "x"})],
                                f"{LOC}/metadata/v4.metadata.json")
    return out


SCENARIOS = _scenarios()

# Updates Java and icenb both reject (icenb: ValidationError / UnsupportedVersion).
REJECTED: dict[str, list[TableUpdate]] = {
    "downgrade": [UpgradeFormatVersion(1)],
    "ref_to_unknown_snapshot": [SetSnapshotRef("dev", 404)],
    "stale_sequence_number": [AddSnapshot(snap(3, 2, parent=2))],
    "duplicate_snapshot": [AddSnapshot(snap(2, 3, parent=1))],
    "remove_default_spec": [RemovePartitionSpecs((0,))],
    "remove_current_schema": [RemoveSchemas((0,))],
    "unknown_current_schema": [SetCurrentSchema(9)],
    "last_added_schema_without_add": [SetCurrentSchema()],
    "v3_type_in_v2": [AddSchema(Schema(NestedField(1, "id", LongType(), True),
                                       NestedField(9, "t", TimestampNanoType())))],
}


def _two() -> TableMetadata:
    return _replay(SCENARIOS["v2_snapshots_and_refs"])


REQUIREMENT_CASES: list[TableRequirement] = [
    AssertCreate(), AssertTableUUID(UUID), AssertTableUUID("00000000-0000-0000-0000-000000000000"),
    AssertRefSnapshotId("main", 2), AssertRefSnapshotId("main", 1),
    AssertRefSnapshotId("main", None), AssertRefSnapshotId("nope", None),
    AssertRefSnapshotId("nope", 2), AssertRefSnapshotId("t1", 1),
    AssertLastAssignedFieldId(3), AssertLastAssignedFieldId(2), AssertCurrentSchemaId(0),
    AssertCurrentSchemaId(1), AssertLastAssignedPartitionId(1000),
    AssertLastAssignedPartitionId(1001), AssertDefaultSpecId(0), AssertDefaultSpecId(1),
    AssertDefaultSortOrderId(0), AssertDefaultSortOrderId(1),
]


@pytest.fixture(scope="module")
def java() -> dict[str, Any]:
    """Every Java request of this module, in one JVM."""
    keys: list[str] = []
    requests: list[dict[str, Any]] = []

    def add(key: str, request: dict[str, Any]) -> None:
        keys.append(key)
        requests.append(request)

    add("reserved", {"op": "reserved"})
    for name, case in CREATE_CASES.items():
        add(f"create:{name}", {"op": "create", "location": LOC + "/", **case})
    for name, (base, updates, location) in SCENARIOS.items():
        add(f"apply:{name}", {"op": "apply", "base": _json(base), "base_location": location,
                              "updates": [update_to_json(u, base.format_version)
                                          for u in updates]})
    two = _two()
    for name, updates in REJECTED.items():
        add(f"reject:{name}", {"op": "apply", "base": _json(two), "base_location": None,
                               "updates": [update_to_json(u) for u in updates]})
    add("upgrade:v4", {"op": "apply", "base": _json(two), "base_location": None,
                       "updates": [update_to_json(UpgradeFormatVersion(4))]})
    for i, r in enumerate(REQUIREMENT_CASES):
        add(f"require:{i}", {"op": "apply", "base": _json(two), "requirements":
                             [requirement_to_json(r)], "updates": []})
    sample = [u for _, updates, _ in SCENARIOS.values() for u in updates]
    add("roundtrip", {"op": "roundtrip", "updates": [update_to_json(u) for u in sample],
                      "requirements": [requirement_to_json(r) for r in REQUIREMENT_CASES]})
    results = run_reference_batch("java_table_updates.py", requests)
    return dict(zip(keys, results, strict=True))


NOW = "<now>"


def _normalize(doc: dict[str, Any], is_now: Callable[[int], bool],
               drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """Comparable metadata JSON: commit-time clocks become NOW, unordered lists sorted."""
    out = {k: v for k, v in doc.items() if k not in drop}
    if "last-updated-ms" in out and is_now(out["last-updated-ms"]):
        out["last-updated-ms"] = NOW
    out["snapshot-log"] = [{**e, "timestamp-ms": NOW if is_now(e["timestamp-ms"])
                            else e["timestamp-ms"]} for e in out["snapshot-log"]]
    for key in ("statistics", "partition-statistics"):
        out[key] = sorted(out[key], key=lambda s: s["snapshot-id"])
    return out


def test_java_reserved_properties_match(java: dict[str, Any]) -> None:
    assert set(java["reserved"]["reserved"]) == RESERVED_PROPERTIES


@pytest.mark.parametrize("name", sorted(CREATE_CASES))
def test_create_table_matches_java(java: dict[str, Any], name: str) -> None:
    result = java[f"create:{name}"]
    assert result["ok"], result
    mine = to_doc(_icenb_create(CREATE_CASES[name]))
    drop = ("table-uuid", "last-updated-ms")
    assert _normalize(mine, lambda _: False, drop) == \
        _normalize(result["metadata"], lambda _: False, drop)
    # and Java reads icenb's file as the same metadata
    assert table_metadata_from_json(result["metadata"]).format_version == mine["format-version"]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_apply_updates_matches_java(java: dict[str, Any], name: str) -> None:
    base, updates, location = SCENARIOS[name]
    result = java[f"apply:{name}"]
    assert result["ok"], result
    now = T0 + 10**9
    mine = to_doc(apply_updates(base, updates, metadata_location=location, now_ms=now))
    lo, hi = result["clock"]
    theirs = _normalize(result["metadata"], lambda v: lo <= v <= hi)
    assert _normalize(mine, lambda v: v == now) == theirs
    assert theirs != _normalize(to_doc(base), lambda v: False)  # the updates did something


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_updates_java_rejects_are_rejected(java: dict[str, Any], name: str) -> None:
    assert not java[f"reject:{name}"]["ok"]
    with pytest.raises((ValidationError, UnsupportedVersion)):
        commit(_two(), *REJECTED[name])


@pytest.mark.parametrize("index", range(len(REQUIREMENT_CASES)))
def test_requirements_agree_with_java(java: dict[str, Any], index: int) -> None:
    requirement = REQUIREMENT_CASES[index]
    result = java[f"require:{index}"]
    java_conflict = "conflict" in result
    assert result["ok"] or java_conflict, result
    try:
        check_requirements(_two(), [requirement])
        mine_conflict = False
    except CommitConflict:
        mine_conflict = True
    assert mine_conflict == java_conflict, (requirement, result)


def test_update_json_reads_back_the_same_in_java(java: dict[str, Any]) -> None:
    result = java["roundtrip"]
    assert result["ok"], result
    sample = [u for _, updates, _ in SCENARIOS.values() for u in updates]
    for update, java_doc in zip(sample, result["updates"], strict=True):
        assert update_from_json(java_doc) == _java_normalized(update), java_doc
    for requirement, java_doc in zip(REQUIREMENT_CASES, result["requirements"], strict=True):
        assert requirement_from_json(java_doc) == requirement
        assert java_doc == requirement_to_json(requirement)


def _java_normalized(update: TableUpdate) -> TableUpdate:
    """Java re-serializes AddSchema with its last-column-id (the schema's highest field id)."""
    if isinstance(update, AddSchema) and update.last_column_id is None:
        return AddSchema(update.schema, update.schema.highest_field_id)
    return update


def test_upgrade_to_v4_is_accepted_as_java_does_and_beyond_refused(java: dict[str, Any]) -> None:
    # Java 1.10 already accepts format version 4 (in development); icenb accepts it too, as the
    # experimental single-file-commits layout (docs/v4-layout.md), and refuses anything later.
    result = java["upgrade:v4"]
    assert result["ok"] and result["metadata"]["format-version"] == 4
    assert commit(_two(), UpgradeFormatVersion(4)).format_version == 4
    with pytest.raises(UnsupportedVersion):
        commit(_two(), UpgradeFormatVersion(5))


def test_first_row_id_ahead_of_next_row_id_is_rejected_though_java_accepts() -> None:
    # Java 1.10 only requires first-row-id >= next-row-id, then advances next-row-id by
    # added-rows from its old value, which would hand out the gap's ids twice.
    md = base_table(3)
    with pytest.raises(ValidationError):
        commit(md, AddSnapshot(snap(1, 1, first_row_id=5, added_rows=1)))
