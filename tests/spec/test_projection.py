"""Inclusive and strict projection per transform, residuals, and their soundness."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from icenb.spec.evaluators import evaluate_row
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    EqualTo,
    Expression,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    NotEqualTo,
    NotIn,
    NotNull,
    NotStartsWith,
    StartsWith,
    bind,
    col,
)
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.projection import (
    ResidualEvaluator,
    project_inclusive,
    project_inclusive_bound,
    project_strict,
    project_strict_bound,
    residual,
)
from icenb.spec.schema import Schema
from icenb.spec.transforms import Transform, parse_transform
from icenb.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampNanoType,
    TimestampType,
)


def one_column(t: IcebergType, transform: str) -> tuple[Schema, PartitionSpec]:
    schema = Schema(NestedField(1, "x", t), NestedField(2, "y", LongType()))
    spec = PartitionSpec(0, (PartitionField((1,), 1000, parse_transform(transform), "p"),))
    return schema, spec


def projections(t: IcebergType, transform: str, expr: Expression) -> tuple[str, str]:
    schema, spec = one_column(t, transform)
    return str(project_inclusive(spec, schema, expr)), str(project_strict(spec, schema, expr))


x = col("x")


def day(n: int) -> str:
    """How a day partition value renders (the day transform's result type is date or int)."""
    if isinstance(parse_transform("day").result_type(DateType()), DateType):
        return f"date '{dt.date(1970, 1, 1) + dt.timedelta(days=n)}'"
    return str(n)


# (type, transform, row filter, inclusive projection, strict projection)
GOLDEN: list[tuple[IcebergType, str, Expression, str, str]] = [
    # identity: the same predicate on the partition field
    (LongType(), "identity", x < 100, "p < 100", "p < 100"),
    (LongType(), "identity", x.isin(1, 2), "p in (1, 2)", "p in (1, 2)"),
    (LongType(), "identity", x.not_in(1, 2), "p not in (1, 2)", "p not in (1, 2)"),
    (LongType(), "identity", x.is_null(), "p is null", "p is null"),
    (DoubleType(), "identity", x.is_nan(), "p is nan", "p is nan"),
    (DoubleType(), "identity", ~(x < 1), "p >= 1.0 or p is nan", "p >= 1.0 or p is nan"),
    (StringType(), "identity", x.starts_with("ab"), "starts_with(p, 'ab')",
     "starts_with(p, 'ab')"),
    (DateType(), "identity", x == "2024-01-01", "p = date '2024-01-01'", "p = date '2024-01-01'"),
    # bucket: only equality inclusively, only inequality strictly (spec Appendix B values)
    (IntegerType(), "bucket[16]", x == 34, "p = 3", "false"),
    (StringType(), "bucket[16]", x == "iceberg", "p = 9", "false"),
    (IntegerType(), "bucket[16]", x != 34, "true", "p != 3"),
    (IntegerType(), "bucket[16]", x.isin(34, 35), "p in (3, 5)", "false"),
    (IntegerType(), "bucket[16]", x.not_in(34, 35), "true", "p not in (3, 5)"),
    (IntegerType(), "bucket[16]", x < 34, "true", "false"),
    (IntegerType(), "bucket[16]", x.not_null(), "p is not null", "p is not null"),
    # truncate of numbers (Java TestTruncatesProjection, value 100, width 10)
    (IntegerType(), "truncate[10]", x < 100, "p <= 90", "p < 100"),
    (IntegerType(), "truncate[10]", x <= 100, "p <= 100", "p < 100"),
    (IntegerType(), "truncate[10]", x > 100, "p >= 100", "p > 100"),
    (IntegerType(), "truncate[10]", x >= 100, "p >= 100", "p > 90"),
    (IntegerType(), "truncate[10]", x == 100, "p = 100", "false"),
    (IntegerType(), "truncate[10]", x != 100, "true", "p != 100"),
    (LongType(), "truncate[10]", x.isin(99, 100, 101), "p in (90, 100)", "false"),
    (LongType(), "truncate[10]", x.not_in(99, 100, 101), "true", "p not in (90, 100)"),
    (LongType(), "truncate[10]", x < -5, "p <= -10", "p < -10"),
    (DecimalType(9, 2), "truncate[10]", x < Decimal("100.00"), "p <= 99.90", "p < 100.00"),
    (DecimalType(9, 2), "truncate[10]", x >= Decimal("100.00"), "p >= 100.00", "p > 99.90"),
    (DecimalType(9, 2), "truncate[10]", x == Decimal("100.05"), "p = 100.00", "false"),
    # truncate of strings: ranges close on the truncated value; prefixes per the width
    (StringType(), "truncate[5]", x < "abcdefg", "p <= 'abcde'", "p < 'abcde'"),
    (StringType(), "truncate[5]", x <= "abcdefg", "p <= 'abcde'", "p < 'abcde'"),
    (StringType(), "truncate[5]", x > "abcdefg", "p >= 'abcde'", "p > 'abcde'"),
    (StringType(), "truncate[5]", x == "abcdefg", "p = 'abcde'", "false"),
    (StringType(), "truncate[5]", x != "abcdefg", "true", "p != 'abcde'"),
    (StringType(), "truncate[5]", x.isin("abcdefg", "abcdehij"), "p = 'abcde'", "false"),
    (StringType(), "truncate[5]", x.starts_with("abc"), "starts_with(p, 'abc')",
     "starts_with(p, 'abc')"),
    (StringType(), "truncate[5]", x.starts_with("abcde"), "p = 'abcde'", "p = 'abcde'"),
    (StringType(), "truncate[5]", x.starts_with("abcdefg"), "p = 'abcde'", "false"),
    (StringType(), "truncate[5]", x.not_starts_with("abc"), "not_starts_with(p, 'abc')",
     "not_starts_with(p, 'abc')"),
    (StringType(), "truncate[5]", x.not_starts_with("abcde"), "p != 'abcde'", "p != 'abcde'"),
    (StringType(), "truncate[5]", x.not_starts_with("abcdefg"), "true", "p != 'abcde'"),
    (StringType(), "truncate[2]", x.starts_with("ü€x"), "p = 'ü€'", "false"),
    (BinaryType(), "truncate[2]", x >= b"\x01\x02\x03", "p >= X'0102'", "p > X'0102'"),
    # dates (Java TestDatesProjection): month(2017-12-01) = 575, day = 17501, year = 47
    (DateType(), "month", x < "2017-12-01", "p <= 574", "p < 575"),
    (DateType(), "month", x <= "2017-12-01", "p <= 575", "p < 575"),
    (DateType(), "month", x > "2017-12-01", "p >= 575", "p > 575"),
    (DateType(), "month", x >= "2017-12-01", "p >= 575", "p > 574"),
    (DateType(), "month", x == "2017-12-01", "p = 575", "false"),
    (DateType(), "month", x != "2017-12-01", "true", "p != 575"),
    (DateType(), "month", x.isin("2017-12-01", "2017-12-31"), "p = 575", "false"),
    (DateType(), "day", x > "2017-12-01", f"p >= {day(17502)}", f"p > {day(17501)}"),
    (DateType(), "year", x < "2017-12-01", "p <= 47", "p < 47"),
    # pre-epoch values: also match partitions written one too large by Iceberg <= 0.10
    (DateType(), "month", x < "1969-12-01", "p <= -1", "p < -1"),
    (DateType(), "month", x <= "1969-12-01", "p <= 0", "p < -1"),
    (DateType(), "month", x > "1969-12-01", "p >= -1", "p > 0"),
    (DateType(), "month", x >= "1969-12-01", "p >= -1", "p > -1"),
    (DateType(), "month", x == "1969-12-01", "p in (-1, 0)", "false"),
    (DateType(), "month", x != "1969-12-01", "true", "p not in (-1, 0)"),
    (DateType(), "month", x.isin("1969-12-01", "1970-01-01"), "p in (-1, 0)", "false"),
    (DateType(), "month", x.not_in("1969-11-01", "1969-12-01"), "true", "p not in (-2, -1, 0)"),
    # timestamps: the spec's example ts > x  ->  ts_day >= day(x)
    (TimestampType(), "day", x > "2024-01-01T10:00:00", f"p >= {day(19723)}",
     f"p > {day(19723)}"),
    (TimestampType(), "day", x >= "2024-01-01T00:00:00", f"p >= {day(19723)}",
     f"p > {day(19722)}"),
    (TimestampType(), "hour", x < "2024-01-01T10:00:00", "p <= 473361", "p < 473362"),
    (TimestampType(), "day", x == "1969-12-31T10:00:00", f"p in ({day(-1)}, {day(0)})",
     "false"),
    (TimestampNanoType(), "day", x < "1970-01-02T00:00:00", f"p <= {day(0)}",
     f"p < {day(1)}"),
    # transforms without projections
    (LongType(), "void", x == 1, "true", "false"),
    (LongType(), "void", x.is_null(), "true", "false"),
]


@pytest.mark.parametrize(("t", "transform", "expr", "inclusive", "strict"), GOLDEN)
def test_projection_golden(
    t: IcebergType, transform: str, expr: Expression, inclusive: str, strict: str
) -> None:
    assert projections(t, transform, expr) == (inclusive, strict)


def test_unknown_and_multi_argument_transforms_do_not_project() -> None:
    schema = Schema(NestedField(1, "x", LongType()), NestedField(2, "y", LongType()))
    spec = PartitionSpec(0, (
        PartitionField((1,), 1000, parse_transform("zorder"), "z"),
        PartitionField((1, 2), 1001, parse_transform("bucket[4]"), "xy"),
    ))
    assert project_inclusive(spec, schema, x == 1) == ALWAYS_TRUE
    assert project_strict(spec, schema, x == 1) == ALWAYS_FALSE


def test_expressions_project_through_several_fields_and_combinators() -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "ts", TimestampType()),
                    NestedField(3, "name", StringType()))
    spec = PartitionSpec(0, (
        PartitionField((1,), 1000, parse_transform("bucket[16]"), "id_bucket"),
        PartitionField((1,), 1001, parse_transform("truncate[10]"), "id_trunc"),
        PartitionField((2,), 1002, parse_transform("day"), "ts_day"),
    ))
    assert str(project_inclusive(spec, schema, parse("id = 5"))) == (
        "id_bucket = 7 and id_trunc = 0"
    )
    assert str(project_strict(spec, schema, parse("id != 5"))) == (
        "id_bucket != 7 or id_trunc != 0"
    )
    expr = parse("(id < 25 or ts >= '2024-01-01') and name = 'x'")
    assert str(project_inclusive(spec, schema, expr)) == (
        f"id_trunc <= 20 or ts_day >= {day(19723)}"
    )
    assert project_strict(spec, schema, expr) == ALWAYS_FALSE
    expr = parse("not (id >= 25 and ts < '2024-01-01')")
    assert str(project_inclusive(spec, schema, expr)) == (
        f"id_trunc <= 20 or ts_day >= {day(19723)}"
    )
    # bound forms evaluate against partition tuples directly
    bound = project_inclusive_bound(spec, schema, parse("id = 5"))
    assert evaluate_row(bound, {1000: 7, 1001: 0})
    assert not evaluate_row(bound, {1000: 6, 1001: 0})
    strict = project_strict_bound(spec, schema, parse("ts >= '2024-01-01'"))
    assert evaluate_row(strict, {1002: 19723})  # every row of 2024-01-01 matches
    assert not evaluate_row(strict, {1002: 19722})
    # the unbound projection binds to the partition struct
    projected = project_inclusive(spec, schema, parse("ts > '2024-01-01' and id in (1, 2)"))
    assert str(bind(projected, spec.partition_type(schema))) == str(projected)


def test_residuals() -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "ts", TimestampType()),
                    NestedField(3, "kind", StringType()))
    spec = PartitionSpec(0, (
        PartitionField((2,), 1000, parse_transform("day"), "ts_day"),
        PartitionField((3,), 1001, parse_transform("identity"), "kind"),
    ))
    expr = parse("ts >= '2024-01-02 12:00:00' and kind = 'a' and id > 5")
    day = 19724  # 2024-01-02
    # the partition of the boundary day: the ts test remains, kind is decided
    assert str(residual(spec, schema, expr, {1000: day, 1001: "a"})) == (
        "ts >= timestamp '2024-01-02T12:00:00' and id > 5"
    )
    # later days match the ts test entirely
    assert str(residual(spec, schema, expr, (day + 1, "a"))) == "id > 5"
    # earlier days and other kinds cannot match
    assert residual(spec, schema, expr, (day - 1, "a")) == ALWAYS_FALSE
    assert residual(spec, schema, expr, (day + 1, "b")) == ALWAYS_FALSE
    evaluator = ResidualEvaluator(spec, schema, parse("kind = 'a' or id = 1"))
    assert evaluator.residual_for((day, "a")) == ALWAYS_TRUE
    assert str(evaluator.residual_for((day, "b"))) == "id = 1"
    assert str(evaluator.residual_for((day, None))) == "id = 1"
    with pytest.raises(Exception, match="2 fields"):
        evaluator.residual_for((day,))


# --------------------------------------------------------------------------- soundness

CASES: list[tuple[IcebergType, st.SearchStrategy[str], st.SearchStrategy[Any],
                  st.SearchStrategy[Any]]] = [
    (IntegerType(), st.sampled_from(["identity", "bucket[4]", "truncate[1]", "truncate[3]",
                                     "truncate[10]"]),
     st.integers(-40, 40), st.integers(-40, 40)),
    (LongType(), st.sampled_from(["identity", "bucket[7]", "truncate[5]"]),
     st.integers(-(2**40), 2**40), st.integers(-(2**40), 2**40)),
    (DecimalType(9, 2), st.sampled_from(["identity", "bucket[3]", "truncate[10]",
                                         "truncate[50]"]),
     st.decimals(-10, 10, places=2), st.decimals(-10, 10, places=3)),
    (StringType(), st.sampled_from(["identity", "bucket[5]", "truncate[1]", "truncate[2]",
                                    "truncate[3]"]),
     st.text("ab\u00e9\U0001f600", max_size=4), st.text("ab\u00e9\U0001f600", max_size=4)),
    (BinaryType(), st.sampled_from(["identity", "bucket[5]", "truncate[2]"]),
     st.binary(max_size=3), st.binary(max_size=3)),
    (DateType(), st.sampled_from(["identity", "bucket[5]", "year", "month", "day"]),
     st.integers(-800, 800), st.dates(dt.date(1967, 1, 1), dt.date(1973, 1, 1))),
    (TimestampType(), st.sampled_from(["identity", "bucket[5]", "year", "month", "day",
                                       "hour"]),
     st.integers(-(2**36), 2**36),
     st.datetimes(dt.datetime(1968, 1, 1), dt.datetime(1972, 1, 1))),
    (DoubleType(), st.just("identity"),
     st.floats(-10, 10) | st.just(float("nan")), st.floats(-10, 10)),
]


@st.composite
def projection_cases(draw: st.DrawFn) -> tuple[IcebergType, str, Expression, list[Any]]:
    t, transforms, values, literals = draw(st.sampled_from(CASES))
    transform = draw(transforms)
    ops = [EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual]
    kind = draw(st.sampled_from(["cmp", "set", "null", "prefix"]))
    if kind == "prefix" and isinstance(t, StringType):
        cls = draw(st.sampled_from([StartsWith, NotStartsWith]))
        expr: Expression = cls("x", draw(literals))
    elif kind == "set":
        cls = draw(st.sampled_from([In, NotIn]))
        expr = cls("x", draw(st.lists(literals, max_size=3)))
    elif kind == "null":
        expr = draw(st.sampled_from([IsNull, NotNull]))("x")
    else:
        expr = draw(st.sampled_from(ops))("x", draw(literals))
    if draw(st.booleans()):
        expr = ~expr
    rows = draw(st.lists(st.one_of(st.none(), values), min_size=1, max_size=6))
    return t, transform, expr, rows


@settings(max_examples=400)
@given(projection_cases())
def test_projections_are_sound(case: tuple[IcebergType, str, Expression, list[Any]]) -> None:
    t, transform_text, expr, values = case
    schema, spec = one_column(t, transform_text)
    transform: Transform = spec.fields[0].transform
    row_filter = bind(expr, schema)
    inclusive = project_inclusive_bound(spec, schema, expr)
    strict = project_strict_bound(spec, schema, expr)
    evaluator = ResidualEvaluator(spec, schema, expr)
    for v in values:
        try:
            partition_value = transform.apply(t, v)
        except Exception:
            assume(False)
            return
        row, partition = {1: v}, {1000: partition_value}
        matches = evaluate_row(row_filter, row)
        if matches:  # inclusive: never drop the partition of a matching row
            assert evaluate_row(inclusive, partition), (v, partition_value)
        if evaluate_row(strict, partition):  # strict: every row of the partition matches
            assert matches, (v, partition_value)
        # the residual decides the row exactly as the full filter does
        assert evaluate_row(evaluator.residual_for(partition), row) == matches
