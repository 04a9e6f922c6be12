"""Parsing filter text: the grammar, literals, precedence, errors and text round trips."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import ExpressionParseError, ValidationError
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    EqualTo,
    Expression,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
    bind,
)
from icenb.spec.schema import Schema
from icenb.spec.types import DateType, LongType, NestedField, StringType, TimestampType


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id = 5", EqualTo("id", 5)),
        ("id == 5", EqualTo("id", 5)),
        ("id != 5", NotEqualTo("id", 5)),
        ("id <> 5", NotEqualTo("id", 5)),
        ("id < 5", LessThan("id", 5)),
        ("id <= -5", LessThanOrEqual("id", -5)),
        ("id > +5", GreaterThan("id", 5)),
        ("id >= 5", GreaterThanOrEqual("id", 5)),
        ("5 < id", GreaterThan("id", 5)),
        ("'a' = name", EqualTo("name", "a")),
        ("-1.5 >= x", LessThanOrEqual("x", Decimal("-1.5"))),
        ("x = 1.50", EqualTo("x", Decimal("1.50"))),
        ("x = .5", EqualTo("x", Decimal("0.5"))),
        ("x = 1e3", EqualTo("x", 1000.0)),
        ("x = 2.5E-2", EqualTo("x", 0.025)),
        ("s = 'it''s'", EqualTo("s", "it's")),
        ("s = ''", EqualTo("s", "")),
        ("flag = true", EqualTo("flag", True)),
        ("flag = FALSE", EqualTo("flag", False)),
        ("flag", EqualTo("flag", True)),
        ("kind in ('a', 'b')", In("kind", ["a", "b"])),
        ("x not in (1,2)", NotIn("x", [1, 2])),
        ("x in ()", In("x", [])),
        ("name like 'abc%'", StartsWith("name", "abc")),
        ("name not like 'abc%'", NotStartsWith("name", "abc")),
        ("name like 'abc'", EqualTo("name", "abc")),
        ("name like 'a\\%b%'", StartsWith("name", "a%b")),
        ("name like '%'", StartsWith("name", "")),
        ("starts_with(name, 'ab')", StartsWith("name", "ab")),
        ("not_starts_with(name, 'ab')", NotStartsWith("name", "ab")),
        ("a is null", IsNull("a")),
        ("a IS NOT NULL", NotNull("a")),
        ("is_nan(f)", IsNaN("f")),
        ("isnan(f)", IsNaN("f")),
        ("f is nan", IsNaN("f")),
        ("f is not nan", NotNaN("f")),
        ("not_nan(f)", NotNaN("f")),
        ("is_null(a)", IsNull("a")),
        ("not_null(a)", NotNull("a")),
        ("x between 1 and 5", And(GreaterThanOrEqual("x", 1), LessThanOrEqual("x", 5))),
        ("x not between 1 and 5", Or(LessThan("x", 1), GreaterThan("x", 5))),
        ("a.b.c = 1", EqualTo("a.b.c", 1)),
        ("`weird name` = 1", EqualTo("weird name", 1)),
        ("`a.b`.c = 1", EqualTo("a.b.c", 1)),
        ("`x``y` = 1", EqualTo("x`y", 1)),
        ("`and` = 1", EqualTo("and", 1)),
        ("date = 1", EqualTo("date", 1)),
        ("d = date '2024-01-02'", EqualTo("d", dt.date(2024, 1, 2))),
        ("t = time '10:11:12.5'", EqualTo("t", dt.time(10, 11, 12, 500000))),
        ("ts >= timestamp '2024-01-01 10:00:00'",
         GreaterThanOrEqual("ts", dt.datetime(2024, 1, 1, 10))),
        ("ts >= timestamptz '2024-01-01T10:00:00Z'",
         GreaterThanOrEqual("ts", dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc))),
        ("ts = timestamp '2024-01-01T00:00:00.123456789'",
         EqualTo("ts", "2024-01-01T00:00:00.123456789")),
        ("u = uuid 'f79c3e09-677c-4bbd-a479-3f349cb785e7'",
         EqualTo("u", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"))),
        ("b = X'0aFF'", EqualTo("b", b"\x0a\xff")),
        ("true", ALWAYS_TRUE),
        ("false", ALWAYS_FALSE),
        ("true = flag", EqualTo("flag", True)),
        ("not a = 1", Not(EqualTo("a", 1))),
        ("NOT (a = 1)", Not(EqualTo("a", 1))),
    ],
)
def test_parse(text: str, expected: Expression) -> None:
    assert parse(text) == expected


def test_precedence_not_and_or() -> None:
    a, b_, c, d = (EqualTo(n, 1) for n in "abcd")
    assert parse("a = 1 or b = 1 and c = 1") == Or(a, And(b_, c))
    assert parse("a = 1 and b = 1 or c = 1") == Or(And(a, b_), c)
    assert parse("not a = 1 and b = 1") == And(Not(a), b_)
    assert parse("not (a = 1 and b = 1) or c = 1 AND d = 1") == Or(Not(And(a, b_)), And(c, d))
    assert parse("(a = 1 or b = 1) and c = 1") == And(Or(a, b_), c)
    assert parse("a = 1 and b = 1 and c = 1") == And(And(a, b_), c)
    assert parse("a = 1 Or b = 1") == Or(a, b_)
    assert parse("x between 1 and 2 and a = 1") == And(
        And(GreaterThanOrEqual("x", 1), LessThanOrEqual("x", 2)), a
    )


def test_parse_examples_from_the_design() -> None:
    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "ts", TimestampType()),
        NestedField(3, "kind", StringType()),
        NestedField(4, "day", DateType()),
    )
    bound = bind(parse("id = 5 and ts >= '2024-01-01'"), schema)
    assert str(bound) == "id = 5 and ts >= timestamp '2024-01-01T00:00:00'"
    bound = bind(parse("day between date '2024-01-01' and '2024-01-31'"), schema)
    assert str(bound) == "day >= date '2024-01-01' and day <= date '2024-01-31'"


@pytest.mark.parametrize(
    ("text", "position", "token", "message"),
    [
        ("a = null", 4, "null", "IS NULL"),
        ("a != null", 5, "null", "IS NOT NULL"),
        ("null = a", 0, "null", "IS NULL"),
        ("name like '%abc'", 10, "'%abc'", "prefix patterns"),
        ("name like 'a_c%'", 10, "'a_c%'", "prefix patterns"),
        ("a = ", 4, "<end of input>", "expected a literal"),
        ("a = 1 b", 6, "b", "unexpected token"),
        ("a = 'x", 4, "'x", "unterminated string"),
        ("a < b", 2, "<", "two columns"),
        ("1 = 2", 2, "=", "column on one side"),
        ("foo(a)", 0, "foo", "unknown function"),
        ("a in (1, null)", 9, "null", "IN lists"),
        ("(a = 1", 6, "<end of input>", "expected ')'"),
        ("a = 1 and", 9, "<end of input>", "expected"),
        ('a = "x"', 4, '"', "single quotes"),
        ("a # 1", 2, "#", "unexpected character"),
        ("a is 5", 5, "5", "NULL or NAN"),
        ("d = date '2024-13-01'", 9, "'2024-13-01'", "invalid date"),
        ("b = X'0g'", 4, "X'0g'", "hex"),
        ("and = 1", 0, "and", "literal"),
        ("a = 12abc", 4, "12a", "invalid number"),
        ("``", 0, "``", "empty quoted"),
        ("", 0, "", "empty"),
        ("starts_with(a, 5)", 15, "5", "string prefix"),
    ],
)
def test_parse_errors_name_position_and_token(
    text: str, position: int, token: str, message: str
) -> None:
    with pytest.raises(ExpressionParseError, match=re.escape(message)) as info:
        parse(text)
    err = info.value
    assert err.field == text
    assert err.value == token
    if text:
        assert getattr(err, "position", None) == position
        assert f"position {position}" in str(err)


def test_parse_error_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        parse("a = null")
    with pytest.raises(ExpressionParseError):
        parse(5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- round trips

NAMES = st.sampled_from(["id", "a.b", "weird name", "and", "x`y", "é", "Nan", "date", "_1"])
LITERALS: st.SearchStrategy[Any] = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.booleans(),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(dt.timezone.utc)),
    st.times(),
    st.uuids(),
)


def _predicates(literals: st.SearchStrategy[Any]) -> st.SearchStrategy[Expression]:
    unary = st.builds(lambda cls, n: cls(n), st.sampled_from([IsNull, NotNull, IsNaN, NotNaN]),
                      NAMES)
    comparison = st.builds(
        lambda cls, n, v: cls(n, v),
        st.sampled_from([EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan,
                         GreaterThanOrEqual]),
        NAMES, literals,
    )
    prefix = st.builds(lambda cls, n, v: cls(n, v), st.sampled_from([StartsWith, NotStartsWith]),
                       NAMES, st.text(max_size=5))
    sets = st.builds(lambda cls, n, v: cls(n, v), st.sampled_from([In, NotIn]), NAMES,
                     st.lists(literals.filter(lambda v: not isinstance(v, bool)), max_size=3))
    return st.one_of(unary, comparison, prefix, sets, st.just(ALWAYS_TRUE), st.just(ALWAYS_FALSE))


def _trees(literals: st.SearchStrategy[Any]) -> st.SearchStrategy[Expression]:
    return st.recursive(
        _predicates(literals),
        lambda children: st.one_of(
            st.builds(And, children, children),
            st.builds(Or, children, children),
            st.builds(Not, children),
        ),
        max_leaves=8,
    )


@given(_trees(LITERALS))
def test_text_round_trip(expr: Expression) -> None:
    assert parse(str(expr)) == expr


@given(_trees(st.floats(allow_nan=False)))
def test_text_round_trip_of_floats_is_stable(expr: Expression) -> None:
    # floats are rendered as plain numbers and read back as Decimal: same value, same text
    text = str(expr)
    assert str(parse(text)) == text
