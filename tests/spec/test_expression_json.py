"""Filter expressions as JSON (spec: "File Scan Task Serialization", residual-filter)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.spec.expression_json import expression_from_json, expression_to_json
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysFalse, AlwaysTrue, EqualTo, In, bind, or_
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "n", IntegerType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "ts", TimestampType()),
    NestedField(6, "tz", TimestamptzType()),
    NestedField(7, "s", StringType()),
    NestedField(8, "dec", DecimalType(9, 2)),
    NestedField(9, "u", UUIDType()),
    NestedField(10, "b", BinaryType()),
    NestedField(11, "f", FixedType(3)),
    NestedField(12, "t", TimeType()),
    NestedField(13, "ns", TimestampNanoType()),
    NestedField(14, "st", StructType(NestedField(15, "inner", StringType()))),
)

FILTERS = [
    "id = 1",
    "n < 5 and x >= 1.5",
    "d = '2024-02-29' or ts > '2024-01-01T10:00:00'",
    "tz <= '2024-01-01T00:00:00+00:00'",
    "s like 'ab%'",
    "not (s like 'ab%')",
    "dec between 1.25 and 3.5",
    "u = '12345678-1234-5678-1234-567812345678'",
    "id in (3, 1, 2)",
    "s not in ('a', 'é', '日本')",
    "x is nan or n is null",
    "x is not nan and n is not null",
    "t < '12:30:00'",
    "ns >= '2024-01-01T00:00:00.000000001'",
    "st.inner = 'z'",
    "s != 'q'",
]


@pytest.mark.parametrize("text", FILTERS)
def test_round_trip_through_json_binds_to_the_same_expression(text: str) -> None:
    expr = parse(text)
    doc = json.loads(json.dumps(expression_to_json(expr, SCHEMA)))
    back = expression_from_json(doc, SCHEMA)
    assert bind(back, SCHEMA) == bind(expr, SCHEMA)


def test_spec_example() -> None:
    doc = {"type": "eq", "term": "id", "value": 1}
    assert expression_from_json(doc) == EqualTo("id", 1)
    assert expression_to_json(EqualTo("id", 1), SCHEMA) == doc
    assert expression_to_json(EqualTo("id", 1)) == doc


def test_literals_use_single_value_json_of_the_column_type() -> None:
    doc = expression_to_json(parse("d = '2024-02-29' and dec = 1.5 and b = x'0aff'"), SCHEMA)
    assert doc == {
        "type": "and",
        "left": {"type": "and",
                 "left": {"type": "eq", "term": "d", "value": "2024-02-29"},
                 "right": {"type": "eq", "term": "dec", "value": "1.50"}},
        "right": {"type": "eq", "term": "b", "value": "0AFF"},
    }


def test_set_values_are_written_in_type_order() -> None:
    doc = expression_to_json(parse("id in (30, 1, 2)"), SCHEMA)
    assert doc == {"type": "in", "term": "id", "values": [1, 2, 30]}


def test_true_and_false() -> None:
    assert expression_to_json(True) is True
    assert expression_to_json(AlwaysFalse()) is False
    assert expression_from_json(True) == AlwaysTrue()
    assert expression_from_json({"type": "false"}) == AlwaysFalse()
    assert expression_to_json(parse("true"), SCHEMA) is True


@pytest.mark.parametrize(("doc", "error", "field"), [
    ({"type": "between", "term": "id", "value": 1}, ValidationError, "residual-filter.type"),
    ({"type": "eq", "value": 1}, ValidationError, "residual-filter.term"),
    ({"type": "eq", "term": "id"}, ValidationError, "residual-filter.value"),
    ({"type": "in", "term": "id", "values": 1}, ValidationError, "residual-filter.values"),
    ({"type": "eq", "term": "nope", "value": 1}, ValidationError, "residual-filter.term"),
    ({"type": "eq", "term": "d", "value": "yesterday"}, ValidationError,
     "residual-filter.value"),
    ({"type": "and", "left": True}, ValidationError, "residual-filter.right"),
    ({"type": "eq", "term": {"type": "transform", "transform": "bucket[4]", "term": "id"},
      "value": 1}, UnsupportedFeature, "residual-filter.term"),
    ([1, 2], ValidationError, "residual-filter"),
])
def test_bad_json_names_the_field(doc: Any, error: type[Exception], field: str) -> None:
    with pytest.raises(error) as info:
        expression_from_json(doc, SCHEMA)
    assert getattr(info.value, "field", None) == field


def test_unknown_column_when_writing_with_a_schema() -> None:
    with pytest.raises(ValidationError):
        expression_to_json(parse("missing = 1"), SCHEMA)


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=5),
       st.text(max_size=8))
def test_property_round_trip(ids: list[int], s: str) -> None:
    expr = or_(In("id", ids), EqualTo("s", s))
    doc = json.loads(json.dumps(expression_to_json(expr, SCHEMA)))
    assert bind(expression_from_json(doc, SCHEMA), SCHEMA) == bind(expr, SCHEMA)
