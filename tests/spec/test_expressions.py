"""Expression trees: building, simplification, negation, rendering and binding to a schema."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest

from icenb.errors import ValidationError
from icenb.spec.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundLiteralPredicate,
    BoundSetPredicate,
    BoundUnaryPredicate,
    EqualTo,
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
    Operation,
    Or,
    Reference,
    StartsWith,
    and_,
    bind,
    col,
    is_bound,
    not_,
    or_,
    referenced_field_ids,
    referenced_names,
    rewrite_not,
    unbind,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    UnknownType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "data", StringType()),
    NestedField(3, "f", FloatType()),
    NestedField(4, "d", DoubleType()),
    NestedField(5, "price", DecimalType(9, 2)),
    NestedField(6, "day", DateType()),
    NestedField(7, "ts", TimestampType()),
    NestedField(8, "loc", StructType(
        NestedField(9, "lat", DoubleType(), required=True),
        NestedField(10, "name", StringType()),
    )),
    NestedField(11, "tags", ListType(12, StringType())),
    NestedField(13, "props", MapType(14, StringType(), 15, StringType())),
    NestedField(16, "big", LongType()),
    NestedField(17, "nothing", UnknownType()),
    NestedField(18, "inner", StructType(NestedField(19, "x", IntegerType(), required=True)),
                required=True),
    NestedField(20, "u", UUIDType()),
    NestedField(21, "fx", FixedType(3)),
    NestedField(22, "bin", BinaryType()),
    NestedField(23, "tstz", TimestamptzType()),
)


def b(expr: object) -> str:
    """The text of a bound expression."""
    assert not isinstance(expr, str)
    return str(bind(expr, SCHEMA))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- building


def test_col_builds_predicates_with_operators() -> None:
    assert (col("id") == 5) == EqualTo("id", 5)
    assert (col("id") != 5) == NotEqualTo("id", 5)
    assert (col("id") < 5) == LessThan(Reference("id"), 5)
    assert (col("id") <= 5) == LessThanOrEqual("id", 5)
    assert (col("id") > 5) == GreaterThan("id", 5)
    assert (col("id") >= 5) == GreaterThanOrEqual("id", 5)
    assert col("x").isin(1, 2) == In("x", [2, 1])
    assert col("x").isin([1, 2]) == In("x", (1, 2, 2))
    assert col("x").not_in(1) == NotIn("x", [1])
    assert col("s").starts_with("a") == StartsWith("s", "a")
    assert col("s").not_starts_with("a") == NotStartsWith("s", "a")
    assert col("x").is_null() == IsNull("x")
    assert col("x").not_null() == NotNull("x")
    assert col("x").is_nan() == IsNaN("x")
    assert col("x").not_nan() == NotNaN("x")
    assert str(col("x").between(1, 5)) == "x >= 1 and x <= 5"


def test_boolean_operators_combine_and_simplify() -> None:
    a, c = col("a") == 1, col("c") == 2
    assert (a & c) == And(a, c)
    assert (a | c) == Or(a, c)
    assert ~a == Not(a)
    assert ~~a == a
    assert (a & ALWAYS_TRUE) == a
    assert (a & ALWAYS_FALSE) == ALWAYS_FALSE
    assert (a | ALWAYS_TRUE) == ALWAYS_TRUE
    assert (a | ALWAYS_FALSE) == a
    assert not_(ALWAYS_TRUE) == ALWAYS_FALSE
    assert and_() == ALWAYS_TRUE
    assert or_() == ALWAYS_FALSE
    assert and_(a, c, a) == And(And(a, c), a)


def test_python_boolean_keywords_are_refused() -> None:
    with pytest.raises(TypeError, match="&"):
        _ = (col("a") == 1) and (col("b") == 2)  # type: ignore[truthy-bool]


def test_null_and_nan_literals_are_refused_with_a_hint() -> None:
    with pytest.raises(ValidationError, match="is null"):
        EqualTo("a", None)
    with pytest.raises(ValidationError, match="is not null"):
        NotEqualTo("a", None)
    with pytest.raises(ValidationError, match="is_nan"):
        LessThan("a", math.nan)
    with pytest.raises(ValidationError, match="is null"):
        In("a", [1, None])
    with pytest.raises(ValidationError, match="string prefix"):
        StartsWith("a", 5)


def test_set_predicates_ignore_order_and_duplicates() -> None:
    assert In("x", [3, 1, 2, 1]) == In("x", [1, 2, 3])
    assert hash(In("x", [3, 1])) == hash(In("x", [1, 3]))
    assert str(In("x", ["b", "a"])) == "x in ('a', 'b')"


@pytest.mark.parametrize(
    ("expr", "negated"),
    [
        (IsNull("a"), NotNull("a")),
        (NotNull("a"), IsNull("a")),
        (IsNaN("a"), NotNaN("a")),
        (LessThan("a", 1), GreaterThanOrEqual("a", 1)),
        (LessThanOrEqual("a", 1), GreaterThan("a", 1)),
        (GreaterThan("a", 1), LessThanOrEqual("a", 1)),
        (EqualTo("a", 1), NotEqualTo("a", 1)),
        (In("a", [1, 2]), NotIn("a", [1, 2])),
        (StartsWith("a", "x"), NotStartsWith("a", "x")),
        (And(EqualTo("a", 1), EqualTo("b", 2)), Or(NotEqualTo("a", 1), NotEqualTo("b", 2))),
        (Or(EqualTo("a", 1), IsNull("b")), And(NotEqualTo("a", 1), NotNull("b"))),
        (Not(EqualTo("a", 1)), EqualTo("a", 1)),
        (ALWAYS_TRUE, ALWAYS_FALSE),
    ],
)
def test_negate(expr: object, negated: object) -> None:
    assert expr.negate() == negated  # type: ignore[attr-defined]
    assert negated.negate().negate() == negated  # type: ignore[attr-defined]


def test_rewrite_not_pushes_not_to_the_leaves() -> None:
    expr = Not(And(EqualTo("a", 1), Not(Or(LessThan("b", 2), IsNull("c")))))
    assert rewrite_not(expr) == Or(NotEqualTo("a", 1), Or(LessThan("b", 2), IsNull("c")))


def test_operation_flip() -> None:
    assert Operation.LT.flip() == Operation.GT
    assert Operation.GT_EQ.flip() == Operation.LT_EQ
    assert Operation.EQ.flip() == Operation.EQ
    with pytest.raises(ValidationError):
        Operation.IN.flip()


def test_rendering_quotes_names_and_literals() -> None:
    assert str(col("weird name") == "it's") == "`weird name` = 'it''s'"
    assert str(col("a.b") >= Decimal("1.50")) == "a.b >= 1.50"
    assert str(col("and") == True) == "`and` = true"  # noqa: E712
    assert str(col("x") == b"\x01\xff") == "x = X'01FF'"
    assert str(col("x") == dt.date(2024, 1, 2)) == "x = date '2024-01-02'"
    assert str(col("x") < math.inf) == "x < 1e999"
    assert str(Not(col("a") == 1) & (col("b").is_null() | col("c").is_nan())) == (
        "not (a = 1) and (b is null or c is nan)"
    )


def test_referenced_names_and_ids() -> None:
    expr = (col("id") == 1) | (col("loc.lat") > 2)
    assert referenced_names(expr) == {"id", "loc.lat"}
    assert referenced_field_ids(bind(expr, SCHEMA)) == {1, 9}
    with pytest.raises(ValidationError, match="not bound"):
        referenced_field_ids(expr)
    assert not is_bound(expr)
    assert is_bound(bind(expr, SCHEMA))


# --------------------------------------------------------------------------- binding


def test_bind_resolves_nested_columns_and_paths() -> None:
    bound = bind(col("loc.name") == "x", SCHEMA)
    assert isinstance(bound, BoundLiteralPredicate)
    ref = bound.term
    assert (ref.field_id, ref.name, ref.path, ref.positions, ref.names) == (
        10, "loc.name", (8, 10), (7, 1), ("loc", "name")
    )
    assert ref.nullable
    assert ref.get({8: {10: "x"}}) == "x"
    assert ref.get({8: None}) is None
    assert ref.get({10: "flat"}) == "flat"  # a flat dict of field id -> value works too


def test_bind_case_insensitive() -> None:
    bound = bind(col("LOC.Name") == "x", SCHEMA, case_sensitive=False)
    assert isinstance(bound, BoundLiteralPredicate) and bound.term.field_id == 10
    with pytest.raises(ValidationError, match=r"no column named 'LOC\.Name'"):
        bind(col("LOC.Name") == "x", SCHEMA)


def test_unknown_column_names_close_matches() -> None:
    with pytest.raises(ValidationError, match="did you mean 'data'") as info:
        bind(col("dta") == "x", SCHEMA)
    assert info.value.field == "dta"
    with pytest.raises(ValidationError, match="columns are"):
        bind(col("zzzzzzzz") == 1, SCHEMA)


def test_unconvertible_literal_names_column_type_and_literal() -> None:
    with pytest.raises(ValidationError) as info:
        bind(col("id") == "abc", SCHEMA)
    assert info.value.field == "id"
    assert info.value.value == "abc"
    assert "int" in info.value.message
    with pytest.raises(ValidationError, match="day"):
        bind(col("day") == "not a date", SCHEMA)
    with pytest.raises(ValidationError, match="boolean"):
        bind(col("id") == True, SCHEMA)  # noqa: E712


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (col("id").is_nan(), "float and double"),
        (col("id").starts_with("1"), "string columns"),
        (col("loc") == 1, "struct column"),
        (col("tags") == "a", "list column"),
        (col("props").isin("a", "b"), "map column"),
        (col("tags.element") == "a", "inside a list or map"),
        (col("nothing") == 1, "unknown"),
    ],
)
def test_bind_rejects_tests_that_do_not_apply(expr: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        bind(expr, SCHEMA)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # null tests on required fields are decided
        (col("id").is_null(), "false"),
        (col("id").not_null(), "true"),
        (col("inner.x").is_null(), "false"),
        # a required field inside an optional struct can still be null
        (col("loc.lat").is_null(), "loc.lat is null"),
        (col("data").is_null(), "data is null"),
        (col("nothing").is_null(), "true"),
        (col("nothing").not_null(), "false"),
        # in with one value
        (col("id").isin(5), "id = 5"),
        (col("id").not_in(5, 5), "id != 5"),
        (col("id").isin(), "false"),
        # literal above/below the int range (reference implementation: aboveMax / belowMin)
        (col("id") < 10**12, "true"),
        (col("id") <= 10**12, "true"),
        (col("id") != 10**12, "true"),
        (col("id") > 10**12, "false"),
        (col("id") == 10**12, "false"),
        (col("id") > -(10**12), "true"),
        (col("id") < -(10**12), "false"),
        (col("big") < 2**70, "big is not null"),  # optional: null rows still do not match
        (col("big") >= 2**70, "false"),
        (col("id").isin(1, 10**12), "id = 1"),
        (col("id").not_in(10**12, -(10**12)), "true"),
        (col("id").isin(10**12), "false"),
        # literals between two values of the type
        (col("id") < 5.5, "id <= 5"),
        (col("id") >= 5.5, "id >= 6"),
        (col("id") == 5.5, "false"),
        (col("id") == 5.0, "id = 5"),
        (col("id") == "7", "id = 7"),
        (col("price") < Decimal("1.005"), "price <= 1.00"),
        (col("price") > 1.005, "price >= 1.01"),
        (col("price") == Decimal("1.005"), "false"),
        (col("price") == 1.5, "price = 1.50"),
        (col("price") < 10**8, "price is not null"),
        (col("price") == "12.34", "price = 12.34"),
        # floats: the literal is rounded to float (as the reference implementation)
        (col("f") == 0.1, f"f = {float(__import__('numpy').float32(0.1))!r}"),
        (col("f") < 1e39, "f <= 3.4028234663852886e+38"),
        (col("f") > 1e39, "f >= 1e999"),
        (col("d") == 3, "d = 3.0"),
        # conversions through icenb.spec.values
        (col("day") >= "2024-01-01", "day >= date '2024-01-01'"),
        (col("ts") < "2024-01-01 10:00:00", "ts < timestamp '2024-01-01T10:00:00'"),
        (col("tstz") == "2024-01-01T00:00:00+00:00",
         "tstz = timestamptz '2024-01-01T00:00:00+00:00'"),
    ],
)
def test_bind_rewrites_trivially_decided_predicates(expr: object, expected: str) -> None:
    assert b(expr) == expected


def test_bind_converts_literals_to_internal_values() -> None:
    bound = bind(col("day") == dt.date(2024, 1, 1), SCHEMA)
    assert isinstance(bound, BoundLiteralPredicate)
    assert bound.literal == 19723
    bound = bind(col("ts") == dt.datetime(1970, 1, 1, 0, 0, 1), SCHEMA)
    assert isinstance(bound, BoundLiteralPredicate) and bound.literal == 1_000_000
    uid = "f79c3e09-677c-4bbd-a479-3f349cb785e7"
    bound = bind(col("u") == uid, SCHEMA)
    assert isinstance(bound, BoundLiteralPredicate) and str(bound.literal) == uid
    bound = bind(col("price").isin(1, "2.5"), SCHEMA)
    assert isinstance(bound, BoundSetPredicate)
    assert bound.literals == {Decimal("1.00"), Decimal("2.50")}
    with pytest.raises(ValidationError):
        bind(col("fx") == b"\x01", SCHEMA)  # fixed[3] needs 3 bytes


def test_bind_pushes_not_down_exactly() -> None:
    # NaN fails '<', so it passes 'not <': the negation keeps NaN rows
    assert b(~(col("d") < 1)) == "d >= 1.0 or d is nan"
    assert b(~(col("id") < 1)) == "id >= 1"
    assert b(~((col("id") == 1) | col("data").is_null())) == "id != 1 and data is not null"
    # an out-of-range literal under NOT: null rows match neither form
    assert b(~(col("big") < 2**70)) == "false"
    assert b(~(col("id") > 10**12)) == "true"
    assert b(~ALWAYS_TRUE) == "false"


def test_bound_predicates_are_bound_and_negate_exactly() -> None:
    bound = bind(col("f") > 1, SCHEMA)
    assert isinstance(bound, BoundLiteralPredicate)
    assert str(bound.negate()) == "f <= 1.0 or f is nan"
    isnull = bind(col("data").is_null(), SCHEMA)
    assert isinstance(isnull, BoundUnaryPredicate)
    assert str(isnull.negate()) == "data is not null"
    # binding an already bound expression keeps it
    assert bind(bound, SCHEMA) == bound


def test_bind_to_a_struct_type() -> None:
    partition = StructType(NestedField(1000, "ts_day", IntegerType()),
                           NestedField(1001, "id_bucket", IntegerType()))
    bound = bind((col("ts_day") >= 5) & (col("id_bucket") == 3), partition)
    assert str(bound) == "ts_day >= 5 and id_bucket = 3"
    assert referenced_field_ids(bound) == {1000, 1001}


def test_unbind_round_trips_through_bind() -> None:
    exprs = [
        (col("day") >= "2024-02-29") & (col("ts") < "1969-12-31T23:59:59.999999"),
        col("price").isin("1.25", 3),
        ~(col("f") < 1.5),
        col("tstz") == "2024-01-01T10:00:00+00:00",
        col("u") == "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        col("data").starts_with("ab") | col("loc.name").not_starts_with("x"),
    ]
    for expr in exprs:
        bound = bind(expr, SCHEMA)
        assert bind(unbind(bound), SCHEMA) == bound
