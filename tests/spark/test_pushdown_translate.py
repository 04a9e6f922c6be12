"""Spark's pushed filters as icenb expressions (icenb.spark.pushdown): what is handled exactly,
what is pushed only to prune, what stays with Spark. No Spark session: pure translation."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import datasource as sds

from icenb.spark.pushdown import superset_expression, translate_filters
from icenb.spec.schema_ddl import parse_schema

SCHEMA = parse_schema(
    "id long not null, i int, kind string, d date, ts timestamptz, ntz timestamp, "
    "amount decimal(9,2), f double, flag boolean, bin binary, fx fixed[2], u uuid, tm time, "
    "s struct<x: int, y: string>, tags list<string>, m map<string, int>, `a.b` int")


def push(*filters: Any) -> tuple[str, list[Any]]:
    result = translate_filters(list(filters), SCHEMA)
    assert set(map(id, result.kept)) | set(map(id, result.pushed)) == set(map(id, filters))
    return str(result.expression), list(result.kept)


@pytest.mark.parametrize(("spark_filter", "icenb"), [
    (sds.EqualTo(("id",), 5), "id = 5"),
    (sds.GreaterThan(("i",), 3), "i > 3"),
    (sds.GreaterThanOrEqual(("kind",), "b"), "kind >= 'b'"),
    (sds.LessThan(("d",), dt.date(2024, 1, 2)), "d < date '2024-01-02'"),
    (sds.LessThanOrEqual(("amount",), Decimal("1.25")), "amount <= 1.25"),
    (sds.EqualTo(("flag",), True), "flag = true"),
    (sds.EqualTo(("bin",), b"\x01"), "bin = X'01'"),
    (sds.EqualTo(("bin",), bytearray(b"\x01")), "bin = X'01'"),
    (sds.EqualTo(("fx",), b"\x01\x02"), "fx = X'0102'"),
    (sds.GreaterThan(("ts",), dt.datetime(2024, 1, 2, 3, tzinfo=dt.timezone.utc)),
     "ts > timestamptz '2024-01-02T03:00:00+00:00'"),
    (sds.LessThan(("ntz",), dt.datetime(2024, 1, 2, 3)), "ntz < timestamp '2024-01-02T03:00:00'"),
    (sds.EqualTo(("s", "x"), 3), "s.x = 3"),
    (sds.IsNull(("s", "y")), "s.y is null"),
    (sds.IsNotNull(("kind",)), "kind is not null"),
    (sds.IsNull(("id",)), "id is null"),  # bound later to false: id is required
    (sds.Not(sds.EqualTo(("id",), 5)), "not (id = 5)"),
    (sds.Not(sds.GreaterThan(("i",), 5)), "not (i > 5)"),
    (sds.Not(sds.IsNull(("kind",))), "kind is not null"),
    (sds.Not(sds.IsNotNull(("kind",))), "kind is null"),
    (sds.EqualNullSafe(("i",), 5), "i = 5"),
    (sds.Not(sds.EqualNullSafe(("i",), 5)), "not (i = 5) or i is null"),
    (sds.EqualNullSafe(("i",), None), "i is null"),
    (sds.Not(sds.EqualNullSafe(("i",), None)), "i is not null"),
    (sds.EqualTo(("i",), None), "false"),
    (sds.Not(sds.LessThan(("i",), None)), "false"),
    (sds.In(("kind",), ["a", "b"]), "kind in ('a', 'b')"),
    (sds.In(("kind",), ["a", "b", None]), "kind in ('a', 'b')"),
    (sds.Not(sds.In(("kind",), ["a", "b"])), "not (kind in ('a', 'b'))"),
    (sds.Not(sds.In(("kind",), ["a", None])), "false"),  # NOT IN with a null: never true
    (sds.In(("kind",), [None]), "false"),
    (sds.StringStartsWith(("kind",), "ab"), "starts_with(kind, 'ab')"),
    (sds.Not(sds.StringStartsWith(("kind",), "ab")), "not_starts_with(kind, 'ab')"),
    (sds.EqualTo(("a.b",), 1), "a.b = 1"),  # the top-level column named a.b
])
def test_exact_filters_are_handled(spark_filter: Any, icenb: str) -> None:
    expression, kept = push(spark_filter)
    assert expression == icenb
    assert kept == []


@pytest.mark.parametrize(("spark_filter", "icenb"), [
    (sds.GreaterThan(("f",), 1.5), "f > 1.5 or f is nan"),
    (sds.EqualTo(("f",), 2.0), "f = 2.0 or f is nan"),
    (sds.Not(sds.LessThan(("f",), 1.0)), "not (f < 1.0) or f is nan"),
    (sds.In(("f",), [1.0, 2.0]), "f in (1.0, 2.0) or f is nan"),
    (sds.EqualNullSafe(("f",), 1.0), "f = 1.0 or f is nan"),
])
def test_float_comparisons_prune_but_stay_with_spark(spark_filter: Any, icenb: str) -> None:
    """Spark orders NaN above every number (and NaN = NaN): icenb pushes a superset."""
    expression, kept = push(spark_filter)
    assert expression == icenb
    assert kept == [spark_filter]


@pytest.mark.parametrize("spark_filter", [
    sds.EqualTo(("f",), float("nan")),
    sds.StringEndsWith(("kind",), "x"),
    sds.StringContains(("kind",), "x"),
    sds.EqualTo(("u",), "0f4d6b5e-5a3c-4a7b-9a59-3f0b6c3e8d11"),  # uuid reads as a string
    sds.LessThan(("tm",), "10:00:00"),  # time reads as a string
    sds.EqualTo(("tags",), ["a"]),
    sds.IsNull(("tags",)),  # nested columns stay with Spark
    sds.IsNotNull(("s",)),
    sds.EqualTo(("m", "key"), "a"),
    sds.EqualTo(("nope",), 1),
    sds.EqualTo(("_file",), "x"),  # a metadata column
    sds.EqualTo(("i",), "5"),  # a literal of another type
    sds.EqualTo(("i",), True),
    sds.EqualTo(("d",), dt.datetime(2024, 1, 1)),
    sds.EqualTo(("ts",), dt.datetime(2024, 1, 1)),  # timestamptz needs an instant
    sds.EqualTo(("ntz",), dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)),
    sds.EqualTo(("fx",), b"\x01"),  # fixed[2] refuses one byte
    sds.Not(sds.StringEndsWith(("kind",), "x")),
])
def test_what_icenb_cannot_evaluate_stays_with_spark(spark_filter: Any) -> None:
    expression, kept = push(spark_filter)
    assert expression == "true"
    assert kept == [spark_filter]


def test_a_conjunction_pushes_what_it_can_and_returns_the_same_objects() -> None:
    a = sds.IsNotNull(("kind",))
    b = sds.EqualTo(("kind",), "x")
    c = sds.StringContains(("kind",), "y")
    d = sds.GreaterThan(("f",), 0.0)
    result = translate_filters([a, b, c, d], SCHEMA)
    assert str(result.expression) == "kind is not null and kind = 'x' and (f > 0.0 or f is nan)"
    assert [id(f) for f in result.kept] == [id(c), id(d)]  # Spark wants its own objects back
    assert [id(f) for f in result.pushed] == [id(a), id(b)]
    assert str(translate_filters([], SCHEMA).expression) == "true"


def test_case_insensitive_names() -> None:
    assert str(translate_filters([sds.EqualTo(("KIND",), "x")], SCHEMA).expression) == "true"
    result = translate_filters([sds.EqualTo(("KIND",), "x")], SCHEMA, case_sensitive=False)
    assert str(result.expression) == "kind = 'x'" and result.kept == ()


@pytest.mark.parametrize(("tree", "icenb"), [
    (("or", sds.EqualTo(("kind",), "a"), sds.LessThan(("id",), 3)), "kind = 'a' or id < 3"),
    (("and", sds.EqualTo(("kind",), "a"), sds.StringEndsWith(("kind",), "x")), "kind = 'a'"),
    (("not", ("and", sds.EqualTo(("i",), 1), sds.EqualTo(("kind",), "a"))),
     "not (i = 1) or not (kind = 'a')"),  # De Morgan, three-valued: both sides exact
    (("not", ("or", sds.EqualTo(("i",), 1), sds.IsNull(("kind",)))),
     "not (i = 1) and kind is not null"),
    (("or", sds.GreaterThan(("f",), 1.0), sds.EqualTo(("i",), 2)), "f > 1.0 or f is nan or i = 2"),
    (("or", sds.EqualTo(("kind",), "a"), sds.StringContains(("kind",), "x")), None),
    (("and", sds.StringContains(("kind",), "x"), sds.EqualTo(("nope",), 1)), None),
])
def test_filter_trees_become_looser_or_equal_expressions(tree: Any, icenb: str | None) -> None:
    """What wh.sql gives a read: every row Spark's WHERE keeps (OR needs both sides, an AND
    side icenb cannot express is dropped, NOT is pushed to the leaves)."""
    found = superset_expression(tree, SCHEMA)
    assert (None if found is None else str(found)) == icenb
