"""Partition specs: Appendix C JSON by format version, validation, evolution ids, paths.

Golden values marked "Java 1.10.2" were produced by the reference implementation
(PartitionSpec.Builder, BaseUpdatePartitionSpec, Partitioning.partitionType,
PartitionSpec.partitionToPath) on the same schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import InvalidMetadata, UnsupportedFeature, UnsupportedVersion, ValidationError
from icenb.spec.partition_spec import (
    UNPARTITIONED,
    PartitionField,
    PartitionSpec,
    UnboundPartitionField,
    build_partition_spec,
    default_partition_name,
    evolve_partition_spec,
    parse_partition_field,
    parse_partition_fields,
    parse_term,
    partition_fields_from_json,
    partition_fields_to_json,
    partition_path,
    partition_spec_from_json,
    partition_spec_to_json,
    unified_partition_type,
)
from icenb.spec.schema import Schema
from icenb.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
    parse_transform,
)
from icenb.spec.types import (
    DateType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    UnknownType,
)

# The schema of the Java probes: 1 id long, 2 ts timestamptz, 3 s string, 4 d date.
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "loc", StructType(NestedField(6, "lat", DoubleType()),
                                     NestedField(7, "t", TimestampType()))),
    NestedField(8, "tags", ListType(9, StringType())),
)

# Appendix C "Partition Specs" example.
APPENDIX_C_SPEC = {
    "spec-id": 0,
    "fields": [
        {"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"},
    ],
}


def pf(source: int | tuple[int, ...], field_id: int, transform: str, name: str) -> PartitionField:
    ids = (source,) if isinstance(source, int) else source
    return PartitionField(ids, field_id, parse_transform(transform), name)


def summary(spec: PartitionSpec) -> list[tuple[str, str, int, int]]:
    """(name, transform, source id, field id) per field, as the Java probes printed them."""
    return [(f.name, str(f.transform), f.source_id, f.field_id) for f in spec.fields]


# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("version", [1, 2])
def test_appendix_c_example_reads_and_writes_back_in_v1_v2(version: int) -> None:
    spec = partition_spec_from_json(APPENDIX_C_SPEC, format_version=version)
    assert spec.spec_id == 0
    assert spec.fields == (
        PartitionField((4,), 1000, DayTransform(), "ts_day"),
        PartitionField((1,), 1001, BucketTransform(16), "id_bucket"),
    )
    assert partition_spec_to_json(spec, version) == APPENDIX_C_SPEC


def test_appendix_c_example_in_v3_keeps_source_id_for_single_column_fields() -> None:
    """The draft's v3 ``source-ids``-only form is read; the form written is the one Java reads."""
    spec = partition_spec_from_json(APPENDIX_C_SPEC, format_version=3)
    out = partition_spec_to_json(spec, 3)
    assert out == APPENDIX_C_SPEC
    draft_v3 = {**APPENDIX_C_SPEC, "fields": [
        {"source-ids": [4], "field-id": 1000, "name": "ts_day", "transform": "day"},
        {"source-ids": [1], "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"},
    ]}
    assert partition_spec_from_json(draft_v3, format_version=3) == spec


def test_v1_fields_without_field_id_get_ids_from_1000() -> None:
    raw = [
        {"source-id": 1, "name": "id", "transform": "identity"},
        {"source-id": 2, "name": "ts_day", "transform": "day"},
    ]
    spec = partition_spec_from_json({"spec-id": 0, "fields": raw}, format_version=1)
    assert [f.field_id for f in spec.fields] == [1000, 1001]
    # the bare-list form of v1 table metadata's "partition-spec"
    bare = partition_spec_from_json(raw, format_version=1)
    assert bare == spec
    assert partition_fields_from_json(raw, format_version=1, spec_id=3).spec_id == 3
    assert partition_fields_to_json(spec, 1) == [
        {"source-id": 1, "field-id": 1000, "name": "id", "transform": "identity"},
        {"source-id": 2, "field-id": 1001, "name": "ts_day", "transform": "day"},
    ]


def test_missing_field_id_continues_after_the_largest_explicit_id() -> None:
    raw = [
        {"source-id": 1, "field-id": 1005, "name": "a", "transform": "identity"},
        {"source-id": 2, "name": "b", "transform": "day"},
    ]
    spec = partition_fields_from_json(raw, format_version=1)
    assert [f.field_id for f in spec.fields] == [1005, 1006]


def test_source_ids_read_in_every_version_and_written_per_appendix_e() -> None:
    raw = {"spec-id": 2, "fields": [
        {"source-ids": [1, 3], "field-id": 1000, "name": "z", "transform": "zorder"},
        {"source-id": 2, "field-id": 1001, "name": "ts_hour", "transform": "hour"},
    ]}
    for version in (1, 2, 3):
        spec = partition_spec_from_json(raw, format_version=version)
        assert spec.fields[0].source_ids == (1, 3)
        assert spec.fields[0].source_id == 1
        assert spec.fields[0].transform == UnknownTransform("zorder")
        assert spec.fields[1].source_ids == (2,)
    spec = partition_spec_from_json(raw, format_version=2)
    v2 = partition_spec_to_json(spec, 2)["fields"]
    # multi-arg: source-ids plus source-id = first id; single-arg: source-id only
    assert v2[0]["source-id"] == 1 and v2[0]["source-ids"] == [1, 3]
    assert v2[1]["source-id"] == 2 and "source-ids" not in v2[1]
    v3 = partition_spec_to_json(spec, 3)["fields"]
    assert v3[0]["source-ids"] == [1, 3] and "source-id" not in v3[0]
    # single-arg: source-id, which Iceberg Java 1.10 requires to read a v3 spec
    assert v3[1]["source-id"] == 2 and "source-ids" not in v3[1]


def test_unknown_transform_survives_a_round_trip() -> None:
    raw = {"spec-id": 1, "fields": [
        {"source-id": 1, "field-id": 1000, "name": "z", "transform": "zorder"}]}
    spec = partition_spec_from_json(raw, format_version=2)
    assert spec.fields[0].transform.is_unknown
    assert partition_spec_to_json(spec, 2) == raw


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({"spec-id": 0, "fields": [{"field-id": 1000, "name": "a", "transform": "day"}]},
         "source-ids"),
        ({"spec-id": 0, "fields": [{"source-id": "4", "name": "a", "transform": "day"}]},
         "source-id"),
        ({"spec-id": 0, "fields": [{"source-id": 4, "source-ids": [5], "name": "a",
                                    "transform": "day"}]}, "source-id"),
        ({"spec-id": 0, "fields": [{"source-ids": [], "name": "a", "transform": "day"}]},
         "source-ids"),
        ({"spec-id": 0, "fields": [{"source-id": 4, "name": "a"}]}, "transform"),
        ({"spec-id": 0, "fields": [{"source-id": 4, "transform": "day"}]}, "name"),
        ({"spec-id": 0, "fields": [{"source-id": 4, "name": "a", "transform": "bucket[x]"}]},
         "transform"),
        ({"spec-id": 0, "fields": [{"source-id": 4, "field-id": True, "name": "a",
                                    "transform": "day"}]}, "field-id"),
        ({"spec-id": "0", "fields": []}, "spec-id"),
        ({"spec-id": 0}, "fields"),
        ({"spec-id": 0, "fields": [
            {"source-id": 4, "field-id": 1000, "name": "a", "transform": "day"},
            {"source-id": 1, "field-id": 1001, "name": "a", "transform": "identity"}]}, "a"),
        ({"spec-id": 0, "fields": [
            {"source-id": 4, "field-id": 1000, "name": "a", "transform": "day"},
            {"source-id": 1, "field-id": 1000, "name": "b", "transform": "identity"}]}, "b"),
    ],
)
def test_malformed_spec_json_names_the_field(raw: Any, where: str) -> None:
    with pytest.raises(InvalidMetadata) as info:
        partition_spec_from_json(raw, format_version=2)
    assert info.value.field is not None and where in info.value.field


def test_read_tolerates_dropped_sources_and_name_clashes_with_columns() -> None:
    # Writers' rules are not applied on read: the schema is not even known here.
    raw = {"spec-id": 0, "fields": [
        {"source-id": 99, "field-id": 1000, "name": "s", "transform": "bucket[4]"}]}
    spec = partition_spec_from_json(raw, format_version=2)
    assert spec.partition_type(SCHEMA).fields[0].field_type == UnknownType()
    with pytest.raises(ValidationError):
        spec.validate(SCHEMA)


def test_unsupported_format_version() -> None:
    with pytest.raises(UnsupportedVersion):
        partition_spec_to_json(UNPARTITIONED, 0)
    with pytest.raises(UnsupportedVersion):
        partition_spec_from_json(APPENDIX_C_SPEC, format_version=9)


# --------------------------------------------------------------------------- model


def test_unpartitioned_and_void_only_specs() -> None:
    assert UNPARTITIONED.is_unpartitioned and not UNPARTITIONED.is_partitioned
    assert UNPARTITIONED.last_assigned_field_id == 999
    voided = PartitionSpec(1, (pf(2, 1000, "void", "ts_day"),))
    assert voided.is_unpartitioned  # as Java's isUnpartitioned: only void fields
    mixed = PartitionSpec(2, (pf(2, 1000, "void", "ts_day"), pf(1, 1001, "bucket[16]", "b")))
    assert mixed.is_partitioned
    assert mixed.last_assigned_field_id == 1001


def test_spec_constructor_rejects_duplicate_names_and_ids() -> None:
    with pytest.raises(ValidationError, match="more than once"):
        PartitionSpec(0, (pf(1, 1000, "identity", "a"), pf(2, 1001, "day", "a")))
    with pytest.raises(ValidationError, match="1000"):
        PartitionSpec(0, (pf(1, 1000, "identity", "a"), pf(2, 1000, "day", "b")))
    with pytest.raises(ValidationError):
        PartitionField((), 1000, IdentityTransform(), "a")
    with pytest.raises(ValidationError):
        PartitionField((1,), 1000, IdentityTransform(), "")


def test_lookups() -> None:
    spec = partition_spec_from_json(APPENDIX_C_SPEC, format_version=2)
    assert spec.field_by_id(1001) is not None and spec.field_by_id(1001).name == "id_bucket"
    assert spec.field_by_name("ts_day") == spec.fields[0]
    assert spec.field_by_name("nope") is None
    assert spec.fields_by_source_id(1) == [spec.fields[1]]
    ident = PartitionSpec(0, (pf(1, 1000, "identity", "id"), pf(3, 1001, "bucket[2]", "b")))
    assert ident.identity_source_ids() == {1}


def test_equivalence_ignores_ids_but_not_names() -> None:
    a = PartitionSpec(0, (pf(2, 1000, "day", "ts_day"),))
    b = PartitionSpec(5, (pf(2, 1007, "day", "ts_day"),))
    c = PartitionSpec(0, (pf(2, 1000, "day", "other"),))
    d = PartitionSpec(3, (pf(2, 1000, "day", "ts_day"),))
    assert a.compatible_with(b) and a.is_equivalent(b)
    assert not a.same_spec(b)
    assert not a.compatible_with(c)  # Java 1.10.2: compatibleWith compares names
    assert a.same_spec(d) and a != d


def test_partition_type() -> None:
    spec = build_partition_spec(SCHEMA, ["id", "bucket(16, id)", "truncate(4, s)", "day(ts)",
                                         "void(d)"])
    assert spec.partition_type(SCHEMA) == StructType(
        NestedField(1000, "id", LongType()),
        NestedField(1001, "id_bucket", IntegerType()),
        NestedField(1002, "s_trunc", StringType()),
        NestedField(1003, "ts_day", DayTransform().result_type(TimestamptzType())),
        NestedField(1004, "d_null", DateType()),
    )


def test_partition_type_of_dropped_source_and_unknown_transform() -> None:
    # Java 1.10.2: struct<1000: x_day: optional unknown, 1001: z: optional string>
    spec = PartitionSpec(1, (pf(99, 1000, "day", "x_day"), pf(1, 1001, "zorder", "z")))
    assert spec.partition_type(SCHEMA) == StructType(
        NestedField(1000, "x_day", UnknownType()),
        NestedField(1001, "z", StringType()),
    )


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("terms", "message"),
    [
        (["bucket(4, id) AS s"], "conflicts with a schema column"),
        (["id AS s"], "conflicts with a schema column"),
        (["day(ts) AS a", "id AS a"], "more than once"),
        (["day(s)"], "cannot be applied"),
        (["loc"], "non-primitive"),
        (["tags.element"], "list or map"),
        (["day(ts)", "hour(ts)"], "redundant"),
        (["id", "id AS id2"], "redundant"),
        (["bucket(4, id)", "bucket(4, id) AS b2"], "redundant"),
    ],
)
def test_build_rejects(terms: list[str], message: str) -> None:
    with pytest.raises(ValidationError, match=message) as info:
        build_partition_spec(SCHEMA, terms)
    assert info.value.field is not None


def test_build_accepts_identity_and_void_named_like_their_own_column() -> None:
    spec = build_partition_spec(SCHEMA, ["s", "void(id) AS id", "bucket(4, id)",
                                         "bucket(8, id) AS id8"])
    assert [f.name for f in spec.fields] == ["s", "id", "id_bucket", "id8"]


def test_validate_rejects_unknown_transforms_and_missing_sources() -> None:
    with pytest.raises(UnsupportedFeature):
        PartitionSpec(0, (pf(1, 1000, "zorder", "z"),)).validate(SCHEMA)
    with pytest.raises(ValidationError, match="not in the schema"):
        PartitionSpec(0, (pf(42, 1000, "identity", "x"),)).validate(SCHEMA)
    # a void field of a dropped column is fine (v1 keeps those)
    PartitionSpec(0, (pf(42, 1000, "void", "x"),)).validate(SCHEMA)


def test_case_insensitive_validation() -> None:
    with pytest.raises(ValidationError, match="ignoring case"):
        build_partition_spec(SCHEMA, ["day(ts) AS a", "id AS A"], case_sensitive=False)
    with pytest.raises(ValidationError, match="conflicts"):
        build_partition_spec(SCHEMA, ["bucket(2, id) AS S"], case_sensitive=False)
    spec = build_partition_spec(SCHEMA, ["bucket(2, ID)"], case_sensitive=False)
    assert spec.fields[0].name == "id_bucket"


# --------------------------------------------------------------------------- names & strings


def test_build_matches_java_builder_defaults() -> None:
    # Java 1.10.2 PartitionSpec.builderFor(schema).identity("id").bucket("id", 16)
    #   .truncate("s", 4).day("ts").year("d").alwaysNull("s")
    spec = build_partition_spec(
        SCHEMA, ["id", "bucket(16, id)", "truncate(4, s)", "day(ts)", "year(d)", "void(s)"])
    assert summary(spec) == [
        ("id", "identity", 1, 1000), ("id_bucket", "bucket[16]", 1, 1001),
        ("s_trunc", "truncate[4]", 3, 1002), ("ts_day", "day", 2, 1003),
        ("d_year", "year", 4, 1004), ("s_null", "void", 3, 1005),
    ]


def test_nested_source_names() -> None:
    # Java 1.10.2: identity("loc.lat").day("loc.ts") -> names loc.lat, loc.ts_day
    spec = build_partition_spec(SCHEMA, ["loc.lat", "day(loc.t)"])
    assert [f.name for f in spec.fields] == ["loc.lat", "loc.t_day"]
    assert [f.source_id for f in spec.fields] == [6, 7]


def test_design_example() -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "ts", TimestampType()),
                    NestedField(3, "kind", StringType()))
    spec = build_partition_spec(schema, ["day(ts)", "bucket(8, id)"])
    assert summary(spec) == [("ts_day", "day", 2, 1000), ("id_bucket", "bucket[8]", 1, 1001)]
    assert build_partition_spec(schema, "day(ts), bucket(8, id)") == spec


@pytest.mark.parametrize(
    ("transform", "builder", "evolution"),
    [
        (IdentityTransform(), "c", "c"),
        (BucketTransform(16), "c_bucket", "c_bucket_16"),
        (TruncateTransform(4), "c_trunc", "c_trunc_4"),
        (YearTransform(), "c_year", "c_year"),
        (MonthTransform(), "c_month", "c_month"),
        (DayTransform(), "c_day", "c_day"),
        (HourTransform(), "c_hour", "c_hour"),
        (VoidTransform(), "c_null", "c_null"),
    ],
)
def test_default_partition_names(transform: Any, builder: str, evolution: str) -> None:
    assert default_partition_name("c", transform) == builder
    assert default_partition_name("c", transform, evolution=True) == evolution


@pytest.mark.parametrize(
    ("text", "sources", "transform", "name"),
    [
        ("x", ("x",), IdentityTransform(), None),
        ("identity(x)", ("x",), IdentityTransform(), None),
        ("day(ts)", ("ts",), DayTransform(), None),
        ("days(ts)", ("ts",), DayTransform(), None),
        ("date(ts)", ("ts",), DayTransform(), None),
        ("YEARS(ts)", ("ts",), YearTransform(), None),
        ("months(ts)", ("ts",), MonthTransform(), None),
        ("hours(ts)", ("ts",), HourTransform(), None),
        ("date_hour(ts)", ("ts",), HourTransform(), None),
        ("bucket(16, id)", ("id",), BucketTransform(16), None),
        ("bucket(id, 16)", ("id",), BucketTransform(16), None),
        ("bucket[16](id)", ("id",), BucketTransform(16), None),
        ("truncate(4, s)", ("s",), TruncateTransform(4), None),
        ("truncate(s,4)", ("s",), TruncateTransform(4), None),
        ("void(x)", ("x",), VoidTransform(), None),
        ("bucket(16, id) AS shard", ("id",), BucketTransform(16), "shard"),
        ("day(ts) as `my day`", ("ts",), DayTransform(), "my day"),
        ("loc.lat", ("loc.lat",), IdentityTransform(), None),
        ("`we``ird`", ("we`ird",), IdentityTransform(), None),
        ('"quoted col"', ("quoted col",), IdentityTransform(), None),
        ("  hour( loc.t )  as h ", ("loc.t",), HourTransform(), "h"),
    ],
)
def test_parse_partition_field(text: str, sources: tuple[str, ...], transform: Any,
                               name: str | None) -> None:
    u = parse_partition_field(text)
    assert u == UnboundPartitionField(sources, transform, name)


@pytest.mark.parametrize(
    "text",
    ["", "bucket(id)", "bucket(0, id)", "bucket(16)", "truncate(x, y)", "zorder(a, b)",
     "day(ts", "day(ts))", "day(ts) as", "a b", "bucket(16, id, 3)", "day(1, ts)", "x,",
     "id AS a AS b", "a + b"],
)
def test_parse_partition_field_errors(text: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_partition_field(text)
    assert info.value.value == text


def test_parse_term_and_lists() -> None:
    assert parse_term("bucket(4, id)") == (("id",), BucketTransform(4))
    with pytest.raises(ValidationError):
        parse_term("day(ts) asc")
    fields = parse_partition_fields("day(ts), bucket(16, id) AS b, s")
    assert [(f.sources, str(f.transform), f.name) for f in fields] == [
        (("ts",), "day", None), (("id",), "bucket[16]", "b"), (("s",), "identity", None)]
    with pytest.raises(ValidationError, match="exactly one"):
        parse_partition_field("a, b")


def test_unknown_column_is_named_in_the_error() -> None:
    with pytest.raises(ValidationError) as info:
        build_partition_spec(SCHEMA, ["day(nope)"])
    assert info.value.field == "nope"


# --------------------------------------------------------------------------- paths


def test_partition_path_matches_java_partition_to_path() -> None:
    spec = build_partition_spec(SCHEMA, ["s", "day(ts)", "bucket(16, id) AS `a b/c~*`", "d"])
    values = ("a b/c~*\u00e9+=&%", 17486, 3, 17486)
    # Java 1.10.2 partitionToPath
    assert partition_path(spec, SCHEMA, values) == (
        "s=a+b%2Fc%7E*%C3%A9%2B%3D%26%25/ts_day=2017-11-16/a+b%2Fc%7E*=3/d=2017-11-16")
    assert spec.partition_path(SCHEMA, (None, None, None, None)) == (
        "s=null/ts_day=null/a+b%2Fc%7E*=null/d=null")


def test_partition_path_design_example() -> None:
    spec = partition_spec_from_json(APPENDIX_C_SPEC, format_version=2)
    schema = Schema(NestedField(1, "id", LongType()), NestedField(4, "ts", TimestampType()))
    assert partition_path(spec, schema, (17486, 3)) == "ts_day=2017-11-16/id_bucket=3"
    with pytest.raises(ValidationError, match="2 fields"):
        partition_path(spec, schema, (17486,))


# --------------------------------------------------------------------------- evolution


def _evolve(history: list[PartitionSpec], last: int, terms: list[str], version: int
            ) -> tuple[list[PartitionSpec], int]:
    """One evolution step; the returned history ends with the (possibly reused) current spec."""
    spec, last = evolve_partition_spec(SCHEMA, history[-1], terms, format_version=version,
                                       specs=history, last_partition_id=last)
    return [*history, spec], last


def test_v2_evolution_matches_java_ids() -> None:
    spec0 = build_partition_spec(SCHEMA, ["day(ts)", "bucket(16, id)"])
    h, last = [spec0], 1001
    h, last = _evolve(h, last, ["bucket(16, id)"], 2)  # remove ts_day
    assert (h[-1].spec_id, summary(h[-1]), last) == (1, [("id_bucket", "bucket[16]", 1, 1001)],
                                                     1001)
    h, last = _evolve(h, last, ["bucket(16, id)", "day(ts)"], 2)  # re-add: same id 1000
    assert (h[-1].spec_id, summary(h[-1]), last) == (
        2, [("id_bucket", "bucket[16]", 1, 1001), ("ts_day", "day", 2, 1000)], 1001)
    h, last = _evolve(h, last, ["bucket(16, id)"], 2)  # equivalent to spec 1: reused
    assert h[-1] is h[1]
    h, last = _evolve(h, last, ["bucket(16, id)", "day(ts) AS other"], 2)  # other name: new id
    assert (h[-1].spec_id, summary(h[-1]), last) == (
        3, [("id_bucket", "bucket[16]", 1, 1001), ("other", "day", 2, 1002)], 1002)
    h, last = _evolve(h, last, ["bucket(16, id)", "day(ts) AS other", "bucket(8, id)"], 2)
    assert (h[-1].spec_id, summary(h[-1]), last) == (4, [
        ("id_bucket", "bucket[16]", 1, 1001), ("other", "day", 2, 1002),
        ("id_bucket_8", "bucket[8]", 1, 1003)], 1003)
    specs = {s.spec_id: s for s in h}
    assert len(specs) == 5
    # Java 1.10.2 Partitioning.partitionType (day results are dates, as in Java)
    unified = unified_partition_type(specs.values(), SCHEMA)
    assert [(f.field_id, f.name, str(f.field_type)) for f in unified.fields] == [
        (1000, "ts_day", "date"), (1001, "id_bucket", "int"), (1002, "other", "date"),
        (1003, "id_bucket_8", "int")]


def test_v1_evolution_matches_java_void_semantics() -> None:
    spec0 = build_partition_spec(SCHEMA, ["day(ts)", "bucket(16, id)"])
    h, last = [spec0], 1001
    h, last = _evolve(h, last, ["bucket(16, id)"], 1)  # v1 cannot drop: void
    assert (h[-1].spec_id, summary(h[-1]), last) == (1, [
        ("ts_day", "void", 2, 1000), ("id_bucket", "bucket[16]", 1, 1001)], 1001)
    h, last = _evolve(h, last, ["bucket(16, id)", "day(ts)"], 1)
    assert (h[-1].spec_id, summary(h[-1]), last) == (2, [
        ("ts_day_1000", "void", 2, 1000), ("id_bucket", "bucket[16]", 1, 1001),
        ("ts_day", "day", 2, 1002)], 1002)
    h, last = _evolve(h, last, ["bucket(16, id)"], 1)
    assert summary(h[-1]) == [("ts_day_1000", "void", 2, 1000),
                              ("id_bucket", "bucket[16]", 1, 1001), ("ts_day", "void", 2, 1002)]
    h, last = _evolve(h, last, ["bucket(16, id)", "day(ts) AS other"], 1)
    assert (h[-1].spec_id, last) == (4, 1003)
    h, last = _evolve(h, last, ["bucket(16, id)", "day(ts) AS other", "bucket(8, id)"], 1)
    assert (h[-1].spec_id, summary(h[-1]), last) == (5, [
        ("ts_day_1000", "void", 2, 1000), ("id_bucket", "bucket[16]", 1, 1001),
        ("ts_day", "void", 2, 1002), ("other", "day", 2, 1003),
        ("id_bucket_8", "bucket[8]", 1, 1004)], 1004)
    # v1 ids stay positional: 1000 + index, as v1 readers assign them
    for spec in h:
        assert [f.field_id for f in spec.fields] == list(range(1000, 1000 + len(spec.fields)))
    unified = unified_partition_type(h, SCHEMA)
    # Java 1.10.2: struct<1000: ts_day_1000, 1001: id_bucket, 1002: ts_day, 1003: other,
    # 1004: id_bucket_8>, the voided fields typed by their former non-void transform
    assert [(f.field_id, f.name, str(f.field_type)) for f in unified.fields] == [
        (1000, "ts_day_1000", "date"), (1001, "id_bucket", "int"), (1002, "ts_day", "date"),
        (1003, "other", "date"), (1004, "id_bucket_8", "int")]


def test_v1_rejects_reordering_and_inserting_before_existing_fields() -> None:
    spec0 = build_partition_spec(SCHEMA, ["day(ts)", "bucket(16, id)"])
    with pytest.raises(ValidationError, match="reorder"):
        evolve_partition_spec(SCHEMA, spec0, ["bucket(16, id)", "day(ts)"], format_version=1)
    with pytest.raises(ValidationError, match="after the existing"):
        evolve_partition_spec(SCHEMA, spec0, ["s", "day(ts)", "bucket(16, id)"],
                              format_version=1)
    # v2 may reorder: ids follow the fields
    spec, _ = evolve_partition_spec(SCHEMA, spec0, ["bucket(16, id)", "day(ts)"],
                                    format_version=2)
    assert [f.field_id for f in spec.fields] == [1001, 1000]


def test_rename_keeps_the_id_and_unchanged_request_is_a_no_op() -> None:
    spec0 = build_partition_spec(SCHEMA, ["day(ts)", "bucket(16, id)"])
    same, last = evolve_partition_spec(SCHEMA, spec0, ["day(ts)", "bucket(16, id)"],
                                       format_version=2)
    assert same is spec0 and last == 1001
    for version in (1, 2):
        renamed, _ = evolve_partition_spec(
            SCHEMA, spec0, ["day(ts) AS day", "bucket(16, id)"], format_version=version)
        assert summary(renamed) == [("day", "day", 2, 1000), ("id_bucket", "bucket[16]", 1, 1001)]
        assert renamed.spec_id == 1


def test_evolution_uses_last_partition_id_and_validates() -> None:
    spec0 = build_partition_spec(SCHEMA, ["day(ts)"])
    spec, last = evolve_partition_spec(SCHEMA, spec0, ["day(ts)", "s"], format_version=2,
                                       last_partition_id=1010)
    assert (spec.fields[1].field_id, last) == (1011, 1011)
    with pytest.raises(ValidationError, match="redundant"):
        evolve_partition_spec(SCHEMA, spec0, ["day(ts)", "hour(ts)"], format_version=2)
    with pytest.raises(ValidationError, match="twice"):
        evolve_partition_spec(SCHEMA, spec0, ["s", "s AS t"], format_version=2)
    with pytest.raises(ValidationError):
        evolve_partition_spec(SCHEMA, spec0, ["day(ts)", "s AS ts_day"], format_version=2)


def test_evolution_refuses_to_keep_unknown_transforms() -> None:
    current = PartitionSpec(0, (pf(1, 1000, "zorder", "z"),))
    keep = UnboundPartitionField((1,), UnknownTransform("zorder"), "z")
    # an unchanged spec is returned as is (nothing is written) ...
    assert evolve_partition_spec(SCHEMA, current, [keep], format_version=2)[0] is current
    # ... but a new spec keeping the unknown transform is refused
    for version in (1, 2):
        with pytest.raises(UnsupportedFeature):
            evolve_partition_spec(SCHEMA, current, [keep, "s"], format_version=version)
    # v2 may drop it; v1 voids it
    spec, _ = evolve_partition_spec(SCHEMA, current, ["s"], format_version=2)
    assert summary(spec) == [("s", "identity", 3, 1001)]
    spec, _ = evolve_partition_spec(SCHEMA, current, ["s"], format_version=1)
    assert summary(spec) == [("z", "void", 1, 1000), ("s", "identity", 3, 1001)]


def test_unified_type_skips_dropped_columns_and_unknown_transforms() -> None:
    # Java 1.10.2: spec 0 [s identity 1000, id_bucket 1001], spec 1 [id_bucket], column s
    # dropped -> unified struct<1001: id_bucket: int>; spec 0's type has 1000: s: unknown
    spec0 = PartitionSpec(0, (pf(3, 1000, "identity", "s"), pf(1, 1001, "bucket[16]",
                                                                 "id_bucket")))
    spec1 = PartitionSpec(1, (pf(1, 1001, "bucket[16]", "id_bucket"),
                              pf(1, 1002, "zorder", "z")))
    dropped = Schema(NestedField(1, "id", LongType()), NestedField(2, "ts", TimestamptzType()))
    assert unified_partition_type([spec0, spec1], dropped) == StructType(
        NestedField(1001, "id_bucket", IntegerType()))
    assert spec0.partition_type(dropped).fields[0].field_type == UnknownType()


def test_unified_type_rejects_conflicting_fields() -> None:
    spec0 = PartitionSpec(0, (pf(1, 1000, "bucket[16]", "a"),))
    spec1 = PartitionSpec(1, (pf(1, 1000, "bucket[8]", "a"),))
    with pytest.raises(ValidationError, match="conflicting"):
        unified_partition_type([spec0, spec1], SCHEMA)
    spec2 = PartitionSpec(2, (pf(3, 1000, "identity", "b"),))
    with pytest.raises(ValidationError, match="conflicting"):
        unified_partition_type([spec0, spec2], SCHEMA)
    # a newer name wins
    spec3 = PartitionSpec(3, (pf(1, 1000, "bucket[16]", "renamed"),))
    assert unified_partition_type([spec3, spec0], SCHEMA).fields[0].name == "renamed"


# --------------------------------------------------------------------------- properties

_TRANSFORMS = st.sampled_from([
    "identity", "bucket[1]", "bucket[16]", "truncate[3]", "year", "month", "day", "hour",
    "void", "zorder", "my_transform[3]",
])


@st.composite
def specs(draw: st.DrawFn) -> PartitionSpec:
    n = draw(st.integers(0, 6))
    ids = draw(st.lists(st.integers(1000, 3000), min_size=n, max_size=n, unique=True))
    names = draw(st.lists(st.text(min_size=1, max_size=8), min_size=n, max_size=n, unique=True))
    fields = []
    for fid, name in zip(ids, names, strict=True):
        transform = parse_transform(draw(_TRANSFORMS))
        arity = draw(st.integers(2, 3)) if transform.is_unknown and draw(st.booleans()) else 1
        sources = tuple(draw(st.lists(st.integers(1, 500), min_size=arity, max_size=arity)))
        fields.append(PartitionField(sources, fid, transform, name))
    return PartitionSpec(draw(st.integers(0, 100)), tuple(fields))


@settings(max_examples=200)
@given(spec=specs(), version=st.sampled_from([1, 2, 3]))
def test_spec_json_round_trip(spec: PartitionSpec, version: int) -> None:
    text = json.dumps(partition_spec_to_json(spec, version))
    raw = json.loads(text)
    assert partition_spec_from_json(raw, format_version=version) == spec
    for item, f in zip(raw["fields"], spec.fields, strict=True):
        if len(f.source_ids) == 1:
            assert item["source-id"] == f.source_ids[0] and "source-ids" not in item
        else:
            assert item["source-ids"] == list(f.source_ids)
            assert item.get("source-id") == (f.source_ids[0] if version < 3 else None)
    # a v3 reader accepts what a v1/v2 writer wrote (Appendix E)
    assert partition_spec_from_json(raw, format_version=3) == spec


_CANDIDATES = ["id", "bucket(4, id)", "bucket(8, id)", "truncate(2, s)", "day(ts)", "month(d)",
               "s"]


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.lists(st.sampled_from(_CANDIDATES), unique=True, max_size=5),
                      min_size=1, max_size=6))
def test_v2_evolution_reuses_ids_of_equivalent_fields(steps: list[list[str]]) -> None:
    """Spec: "Partition field IDs must be reused if an existing partition spec contains an
    equivalent field"; and no two specs of a table are equivalent."""
    history = [UNPARTITIONED]
    current = UNPARTITIONED
    last = 999
    for terms in steps:
        spec, last = evolve_partition_spec(SCHEMA, current, terms, format_version=2,
                                           specs=history, last_partition_id=last)
        if all(spec.spec_id != s.spec_id for s in history):
            history.append(spec)
        current = spec
        assert [parse_partition_field(t).transform for t in terms] == [
            f.transform for f in spec.fields]
    ids: dict[tuple[tuple[int, ...], str, str], int] = {}
    for spec in history:
        for f in spec.fields:
            key = (f.source_ids, str(f.transform), f.name)
            assert ids.setdefault(key, f.field_id) == f.field_id
            assert f.field_id <= last
    assert len(set(ids.values())) == len(ids)
    for i, a in enumerate(history):
        for b in history[i + 1:]:
            assert not a.compatible_with(b)


def _key(term: str) -> tuple[tuple[int, ...], str]:
    u = parse_partition_field(term)
    return u.bind(SCHEMA)[0], str(u.transform)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_v1_evolution_keeps_positional_ids(data: st.DataObject) -> None:
    """Spec "Partition Evolution" v1 rules: no reordering, drops become void, adds go last,
    so each spec's ids stay 1000, 1001, ... as v1 readers assign them."""
    history = [UNPARTITIONED]
    last = 999
    for _ in range(data.draw(st.integers(1, 6))):
        current = history[-1]
        live = [f for f in current.fields if not f.is_void]
        kept = [f for f in live if data.draw(st.booleans())]
        live_terms = {(f.source_ids, str(f.transform)) for f in live}
        fresh = [t for t in _CANDIDATES if _key(t) not in live_terms]
        added = data.draw(st.lists(st.sampled_from(fresh), unique=True, max_size=2))
        terms: list[str | UnboundPartitionField] = [
            UnboundPartitionField(f.source_ids, f.transform, f.name) for f in kept]
        terms += added
        spec, last = evolve_partition_spec(SCHEMA, current, terms, format_version=1,
                                           specs=history, last_partition_id=last)
        history.append(spec)
        assert [f.field_id for f in spec.fields] == list(range(1000, 1000 + len(spec.fields)))
        # earlier fields keep their place; the ones not requested are void
        for old, new in zip(current.fields, spec.fields, strict=False):
            assert old.field_id == new.field_id and old.source_ids == new.source_ids
            assert new.transform == old.transform or new.is_void
