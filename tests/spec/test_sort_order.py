"""Sort orders: Appendix C JSON by format version, the unsorted order, satisfies, strings.

Golden values marked "Java 1.10.2" come from the reference implementation (SortOrder.Builder,
SortOrder.satisfies, SortOrderParser) on the same schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import InvalidMetadata, UnsupportedFeature, UnsupportedVersion, ValidationError
from icenb.spec.schema import Schema
from icenb.spec.sort_order import (
    UNSORTED,
    NullOrder,
    SortDirection,
    SortField,
    SortOrder,
    UnboundSortField,
    build_sort_order,
    parse_sort_field,
    parse_sort_order,
    sort_order_from_json,
    sort_order_to_json,
)
from icenb.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    TruncateTransform,
    UnknownTransform,
    parse_transform,
)
from icenb.spec.types import (
    DateType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "st", StructType(NestedField(6, "x", LongType()))),
    NestedField(7, "tags", ListType(8, StringType())),
)

ASC, DESC = SortDirection.ASC, SortDirection.DESC
FIRST, LAST = NullOrder.NULLS_FIRST, NullOrder.NULLS_LAST

# Appendix C "Sort Orders" example (its field list, with order-id 1).
APPENDIX_C_ORDER = {
    "order-id": 1,
    "fields": [
        {"transform": "identity", "source-id": 2, "direction": "asc",
         "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 3, "direction": "desc",
         "null-order": "nulls-last"},
    ],
}


def order(*fields: SortField, order_id: int = 1) -> SortOrder:
    return SortOrder(order_id, fields)


# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("version", [1, 2])
def test_appendix_c_example_round_trips_in_v1_v2(version: int) -> None:
    o = sort_order_from_json(APPENDIX_C_ORDER, format_version=version)
    assert o == order(SortField((2,), IdentityTransform(), ASC, FIRST),
                      SortField((3,), BucketTransform(4), DESC, LAST))
    assert sort_order_to_json(o, version) == APPENDIX_C_ORDER


def test_v3_writes_source_id_for_single_column_fields_and_reads_both() -> None:
    """Iceberg Java 1.10 needs ``source-id`` to read a v3 sort field."""
    o = sort_order_from_json(APPENDIX_C_ORDER, format_version=3)
    out = sort_order_to_json(o, 3)
    assert out["fields"][0] == {"transform": "identity", "source-id": 2, "direction": "asc",
                                "null-order": "nulls-first"}
    assert all("source-ids" not in f for f in out["fields"])
    as_draft = {**out, "fields": [
        {**{k: v for k, v in f.items() if k != "source-id"}, "source-ids": [f["source-id"]]}
        for f in out["fields"]]}
    assert sort_order_from_json(as_draft, format_version=3) == o
    assert sort_order_from_json(out, format_version=3) == o
    assert sort_order_from_json(out, format_version=2) == o


def test_multi_argument_fields_by_version() -> None:
    raw = {"order-id": 3, "fields": [
        {"transform": "zorder", "source-ids": [1, 3], "direction": "asc",
         "null-order": "nulls-last"}]}
    o = sort_order_from_json(raw, format_version=3)
    assert o.fields[0].source_ids == (1, 3) and o.fields[0].source_id == 1
    assert o.fields[0].transform == UnknownTransform("zorder")
    v2 = sort_order_to_json(o, 2)["fields"][0]
    assert v2["source-id"] == 1 and v2["source-ids"] == [1, 3]
    assert sort_order_to_json(o, 3) == raw


def test_unsorted_order() -> None:
    assert sort_order_to_json(UNSORTED, 2) == {"order-id": 0, "fields": []}
    assert sort_order_from_json({"order-id": 0, "fields": []}, format_version=1) == UNSORTED
    assert UNSORTED.is_unsorted and not UNSORTED.is_sorted


def test_order_id_zero_is_reserved_for_unsorted() -> None:
    # Java 1.10.2: "Sort order ID 0 is reserved for unsorted order" / "Unsorted order ID must
    # be 0"
    f = SortField((1,), IdentityTransform())
    with pytest.raises(ValidationError, match="reserved"):
        SortOrder(0, (f,))
    with pytest.raises(ValidationError, match="must have order id 0"):
        SortOrder(1, ())
    with pytest.raises(InvalidMetadata, match="reserved") as info:
        sort_order_from_json({"order-id": 0, "fields": [
            {"transform": "identity", "source-id": 1, "direction": "asc",
             "null-order": "nulls-first"}]}, format_version=2)
    assert info.value.field == "sort-order.order-id"


def test_direction_and_null_order_are_read_case_insensitively() -> None:
    # Java 1.10.2 reads "DESC" / "NULLS-LAST"
    raw = {"order-id": 1, "fields": [{"transform": "identity", "source-id": 1,
                                      "direction": "DESC", "null-order": "NULLS-LAST"}]}
    assert sort_order_from_json(raw, format_version=2).fields[0] == SortField(
        (1,), IdentityTransform(), DESC, LAST)


@pytest.mark.parametrize(
    ("field", "where"),
    [
        ({"transform": "identity", "source-id": 1, "direction": "up",
          "null-order": "nulls-first"}, "direction"),
        ({"transform": "identity", "source-id": 1, "direction": "asc",
          "null-order": "first"}, "null-order"),
        ({"transform": "identity", "source-id": 1, "null-order": "nulls-first"}, "direction"),
        ({"transform": "identity", "direction": "asc", "null-order": "nulls-first"},
         "source-ids"),
        ({"source-id": 1, "direction": "asc", "null-order": "nulls-first"}, "transform"),
        ({"transform": 7, "source-id": 1, "direction": "asc", "null-order": "nulls-first"},
         "transform"),
        ({"transform": "identity", "source-id": 1, "source-ids": [2], "direction": "asc",
          "null-order": "nulls-first"}, "source-id"),
    ],
)
def test_malformed_sort_field_names_the_field(field: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidMetadata) as info:
        sort_order_from_json({"order-id": 1, "fields": [field]}, format_version=2)
    assert info.value.field is not None
    assert info.value.field.startswith("sort-order.fields[0]") and where in info.value.field


@pytest.mark.parametrize("raw", [[], {"fields": []}, {"order-id": "1", "fields": []},
                                 {"order-id": 1}])
def test_malformed_sort_order(raw: Any) -> None:
    with pytest.raises(InvalidMetadata):
        sort_order_from_json(raw, format_version=2)


def test_unsupported_version() -> None:
    with pytest.raises(UnsupportedVersion):
        sort_order_to_json(UNSORTED, 7)


def test_read_keeps_unknown_transforms_and_dropped_columns() -> None:
    raw = {"order-id": 1, "fields": [
        {"transform": "zorder", "source-id": 1, "direction": "desc", "null-order": "nulls-last"},
        {"transform": "identity", "source-id": 99, "direction": "asc",
         "null-order": "nulls-first"}]}
    o = sort_order_from_json(raw, format_version=2)
    assert sort_order_to_json(o, 2) == raw
    with pytest.raises(UnsupportedFeature):
        o.validate(SCHEMA)


# --------------------------------------------------------------------------- semantics


def test_satisfies_matches_java() -> None:
    # Java 1.10.2: [id asc, bucket[4](s) desc nulls first] satisfies [id asc] and not vice versa
    o = order(SortField((1,), IdentityTransform(), ASC, FIRST),
              SortField((3,), BucketTransform(4), DESC, FIRST))
    o2 = order(SortField((1,), IdentityTransform(), ASC, FIRST))
    assert o.satisfies(o2) and not o2.satisfies(o)
    hour = order(SortField((2,), HourTransform()))
    day = order(SortField((2,), DayTransform()))
    ident = order(SortField((2,), IdentityTransform()))
    assert hour.satisfies(day) and not day.satisfies(hour) and ident.satisfies(day)
    assert day.satisfies(UNSORTED) and UNSORTED.satisfies(UNSORTED)
    assert not UNSORTED.satisfies(day)


def test_satisfies_requires_same_direction_null_order_and_source() -> None:
    base = SortField((2,), IdentityTransform(), ASC, FIRST)
    assert not order(base).satisfies(order(SortField((2,), DayTransform(), DESC, FIRST)))
    assert not order(base).satisfies(order(SortField((2,), DayTransform(), ASC, LAST)))
    assert not order(base).satisfies(order(SortField((4,), DayTransform(), ASC, FIRST)))
    bucket = SortField((1,), BucketTransform(4))
    assert not order(SortField((1,), IdentityTransform())).satisfies(order(bucket))


def test_same_order_ignores_the_id() -> None:
    # Java 1.10.2: sameOrder true, equals false
    a = order(SortField((1,), IdentityTransform(), DESC, LAST), order_id=1)
    b = order(SortField((1,), IdentityTransform(), DESC, LAST), order_id=2)
    assert a.same_order(b) and a != b


def test_sort_field_rejects_bad_values() -> None:
    with pytest.raises(ValidationError):
        SortField((), IdentityTransform())
    with pytest.raises(ValidationError):
        SortField((1,), IdentityTransform(), "sideways")  # type: ignore[arg-type]
    assert SortField(1, IdentityTransform(), "desc", "nulls-last") == SortField(  # type: ignore[arg-type]
        (1,), IdentityTransform(), DESC, LAST)


# --------------------------------------------------------------------------- strings & build


def test_build_from_string_uses_java_default_null_orders() -> None:
    # Java 1.10.2: desc("id").asc("loc.lat") -> desc nulls-last, asc nulls-first
    o = build_sort_order(SCHEMA, "ts DESC NULLS LAST, id, bucket(4, s) desc, day(ts) asc "
                                 "nulls last, truncate(s, 2) DESC NULLS FIRST")
    assert o.order_id == 1
    assert o.fields == (
        SortField((2,), IdentityTransform(), DESC, LAST),
        SortField((1,), IdentityTransform(), ASC, FIRST),
        SortField((3,), BucketTransform(4), DESC, LAST),
        SortField((2,), DayTransform(), ASC, LAST),
        SortField((3,), TruncateTransform(2), DESC, FIRST),
    )
    assert build_sort_order(SCHEMA, ["ts desc", "id"], order_id=4) == SortOrder(4, (
        SortField((2,), IdentityTransform(), DESC, LAST),
        SortField((1,), IdentityTransform(), ASC, FIRST)))
    assert build_sort_order(SCHEMA, "") is UNSORTED
    assert build_sort_order(SCHEMA, []) is UNSORTED


def test_parse_sort_field() -> None:
    assert parse_sort_field("day(ts) asc") == UnboundSortField(("ts",), DayTransform(), ASC)
    assert parse_sort_field("`a b` NULLS LAST") == UnboundSortField(
        ("a b",), IdentityTransform(), ASC, LAST)
    assert parse_sort_order("") == []


@pytest.mark.parametrize("text", ["ts up", "ts nulls", "ts nulls middle", "ts desc asc",
                                  "day(ts", "ts,", "bucket(ts)"])
def test_parse_sort_order_errors(text: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_sort_order(text)
    assert info.value.value == text


@pytest.mark.parametrize(
    ("text", "message"),
    [("day(s)", "cannot be applied"), ("st", "non-primitive"), ("tags.element", "list or map"),
     ("nope", "no such field")],
)
def test_build_validates_against_the_schema(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        build_sort_order(SCHEMA, text)


def test_validate_rejects_dropped_source() -> None:
    o = order(SortField((99,), IdentityTransform()))
    with pytest.raises(ValidationError, match="not in the schema"):
        o.validate(SCHEMA)


# --------------------------------------------------------------------------- properties

_TRANSFORMS = st.sampled_from(["identity", "bucket[2]", "truncate[10]", "year", "month", "day",
                               "hour", "void", "zorder"])


@st.composite
def sort_orders(draw: st.DrawFn) -> SortOrder:
    n = draw(st.integers(0, 5))
    fields = []
    for _ in range(n):
        transform = parse_transform(draw(_TRANSFORMS))
        arity = draw(st.integers(1, 3)) if transform.is_unknown else 1
        fields.append(SortField(
            tuple(draw(st.lists(st.integers(1, 10_000), min_size=arity, max_size=arity))),
            transform, draw(st.sampled_from(list(SortDirection))),
            draw(st.sampled_from(list(NullOrder)))))
    order_id = draw(st.integers(1, 1000)) if fields else 0
    return SortOrder(order_id, tuple(fields))


@settings(max_examples=200)
@given(o=sort_orders(), version=st.sampled_from([1, 2, 3]))
def test_sort_order_json_round_trip(o: SortOrder, version: int) -> None:
    raw = json.loads(json.dumps(sort_order_to_json(o, version)))
    assert sort_order_from_json(raw, format_version=version) == o
    assert sort_order_from_json(raw, format_version=3) == o
    for item, f in zip(raw["fields"], o.fields, strict=True):
        if len(f.source_ids) == 1:
            assert item["source-id"] == f.source_id and "source-ids" not in item
        else:
            assert item["source-ids"] == list(f.source_ids)
            assert item.get("source-id") == (f.source_id if version < 3 else None)


@given(o=sort_orders())
def test_every_order_satisfies_itself_and_its_prefixes(o: SortOrder) -> None:
    assert o.satisfies(o)
    for n in range(1, len(o.fields)):
        assert o.satisfies(SortOrder(1, o.fields[:n]))
