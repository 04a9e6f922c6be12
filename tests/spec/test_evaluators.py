"""Row and Arrow evaluation of bound filters; both agree with SQL three-valued logic."""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import ValidationError
from icenb.spec.evaluators import Evaluator, evaluate_arrow, evaluate_row, row_evaluator
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
    LiteralPredicate,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    SetPredicate,
    StartsWith,
    UnaryPredicate,
    bind,
    col,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "l", LongType()),
    NestedField(3, "d", DoubleType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "s", StringType()),
    NestedField(6, "dec", DecimalType(9, 2)),
    NestedField(7, "day", DateType()),
    NestedField(8, "ts", TimestampType()),
    NestedField(9, "flag", BooleanType()),
    NestedField(10, "st", StructType(
        NestedField(11, "x", IntegerType()),
        NestedField(12, "y", StringType(), required=True),
    )),
)
ARROW = pa.schema([
    pa.field("id", pa.int32(), nullable=False),
    pa.field("l", pa.int64()),
    pa.field("d", pa.float64()),
    pa.field("f", pa.float32()),
    pa.field("s", pa.string()),
    pa.field("dec", pa.decimal128(9, 2)),
    pa.field("day", pa.date32()),
    pa.field("ts", pa.timestamp("us")),
    pa.field("flag", pa.bool_()),
    pa.field("st", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])),
])
EPOCH = dt.datetime(1970, 1, 1)


def to_arrow(rows: list[dict[int, Any]]) -> pa.Table:
    """Rows (field id -> internal value) as an Arrow table of SCHEMA."""
    columns: dict[str, list[Any]] = {f.name: [] for f in ARROW}
    for row in rows:
        for field in SCHEMA.fields:
            value = row.get(field.field_id)
            if field.name == "day" and value is not None:
                value = dt.date(1970, 1, 1) + dt.timedelta(days=value)
            elif field.name == "ts" and value is not None:
                value = EPOCH + dt.timedelta(microseconds=value)
            elif field.name == "st" and value is not None:
                value = {"x": value.get(11), "y": value.get(12)}
            columns[field.name].append(value)
    return pa.table({f.name: pa.array(columns[f.name], type=f.type) for f in ARROW},
                    schema=ARROW)


ROWS = [
    {1: 1, 2: 10, 3: 1.5, 4: 0.5, 5: "apple", 6: Decimal("1.50"), 7: 0, 8: 0, 9: True,
     10: {11: 1, 12: "a"}},
    {1: 2, 2: None, 3: math.nan, 4: None, 5: None, 6: None, 7: None, 8: None, 9: None,
     10: None},
    {1: 3, 2: -5, 3: -0.0, 4: math.inf, 5: "banana", 6: Decimal("-2.25"), 7: 19723,
     8: 1_704_067_200_000_000, 9: False, 10: {11: None, 12: "b"}},
]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("id") > 1, [False, True, True]),
        (col("l") != 10, [False, False, True]),  # null is not != 10
        (~(col("l") == 10), [False, False, True]),  # NOT unknown is unknown
        (col("l").not_in(10, 11), [False, False, True]),
        (col("l").is_null(), [False, True, False]),
        (col("d") > 0, [True, False, False]),  # NaN > 0 is false
        (col("d") == 0, [False, False, True]),  # -0.0 = 0
        (col("d") != 1.5, [False, True, True]),  # NaN != 1.5 is true
        (~(col("d") <= 0), [True, True, False]),  # NaN fails <=, so it passes NOT <=
        (col("d").is_nan(), [False, True, False]),
        (col("f").not_nan(), [True, True, True]),  # null is not NaN
        (col("f") > 1e39, [False, False, True]),  # inf is above every finite literal
        (col("s").starts_with("ap"), [True, False, False]),
        (col("s").not_starts_with("ap"), [False, False, True]),
        (~col("s").starts_with("ap"), [False, False, True]),
        (col("dec") < 0, [False, False, True]),
        (col("day") >= "2024-01-01", [False, False, True]),
        (col("ts") < "2000-01-01", [True, False, False]),
        (col("flag") == True, [True, False, False]),  # noqa: E712
        (col("st.x") == 1, [True, False, False]),
        (col("st.y").is_null(), [False, True, False]),  # null because the struct is null
        (col("st").is_null(), [False, True, False]),
        (col("st.x").isin(1, 2, 3), [True, False, False]),
        ((col("l") > 0) | (col("s") == "banana"), [True, False, True]),
        ((col("l") > 0) & ~(col("s") == "banana"), [True, False, False]),
        (ALWAYS_TRUE, [True, True, True]),
        (ALWAYS_FALSE, [False, False, False]),
    ],
)
def test_rows_and_arrow(expr: Expression, expected: list[bool]) -> None:
    bound = bind(expr, SCHEMA)
    assert [evaluate_row(bound, r) for r in ROWS] == expected
    table = to_arrow(ROWS)
    mask = evaluate_arrow(bound, table)
    assert mask.to_pylist() == expected
    assert evaluate_arrow(bound, table.to_batches()[0]).to_pylist() == expected
    evaluator = Evaluator(SCHEMA, expr)
    assert [evaluator.eval(r) for r in ROWS] == expected
    assert evaluator.eval_arrow(table).to_pylist() == expected


def test_unbound_expressions_are_refused() -> None:
    with pytest.raises(ValidationError, match="bound"):
        evaluate_row(col("id") == 1, {1: 1})
    with pytest.raises(ValidationError, match="bound"):
        evaluate_arrow(col("id") == 1, to_arrow(ROWS))


def test_row_value_of_the_wrong_type_is_reported() -> None:
    with pytest.raises(ValidationError, match="'id'") as info:
        evaluate_row(bind(col("id") < 5, SCHEMA), {1: "five"})
    assert info.value.value == "five"


def test_arrow_columns_by_field_id_mapping_metadata_and_name() -> None:
    bound = bind((col("id") > 1) & (col("st.x") == 1), SCHEMA)
    renamed = pa.table({"c1": pa.array([1, 2], pa.int32()),
                        "c10": pa.array([{"x": 1, "y": "a"}, {"x": 1, "y": "b"}])})
    mask = evaluate_arrow(bound, renamed, column_names={1: "c1", 10: "c10"})
    assert mask.to_pylist() == [False, True]
    leaf = pa.table({"c1": pa.array([5], pa.int32()), "x": pa.array([1], pa.int32())})
    assert evaluate_arrow(bound, leaf, column_names={1: "c1", 11: "x"}).to_pylist() == [True]
    # Parquet field ids in Arrow metadata win over names (the column was renamed)
    with_ids = pa.table(
        [pa.array([3], pa.int32()), pa.array([{"xx": 1}], pa.struct([
            pa.field("xx", pa.int32(), metadata={"PARQUET:field_id": "11"})]))],
        schema=pa.schema([
            pa.field("old_id", pa.int32(), metadata={"PARQUET:field_id": "1"}),
            pa.field("old_st", pa.struct([
                pa.field("xx", pa.int32(), metadata={"PARQUET:field_id": "11"})]),
                metadata={"PARQUET:field_id": "10"}),
        ]),
    )
    assert evaluate_arrow(bound, with_ids).to_pylist() == [True]
    with pytest.raises(ValidationError, match="not in the data"):
        evaluate_arrow(bound, pa.table({"other": [1]}))
    with pytest.raises(ValidationError, match="not in the data"):
        evaluate_arrow(bound, renamed, column_names={1: "missing"})


def test_arrow_dictionary_and_extension_columns() -> None:
    bound = bind(col("s").isin("a", "c") | (col("s") == "d"), SCHEMA)
    table = pa.table({"s": pa.array(["a", "b", None, "d"]).dictionary_encode()})
    assert evaluate_arrow(bound, table).to_pylist() == [True, False, False, True]


def test_arrow_table_with_chunks_gives_an_aligned_mask() -> None:
    table = pa.concat_tables([to_arrow(ROWS[:1]), to_arrow(ROWS[1:])])
    mask = evaluate_arrow(bind(col("id") >= 2, SCHEMA), table)
    assert isinstance(mask, pa.ChunkedArray)
    assert table.filter(mask).column("id").to_pylist() == [2, 3]


def test_compiled_row_evaluator() -> None:
    matches = row_evaluator(bind(col("s").starts_with("b") | col("l").is_null(), SCHEMA))
    assert [matches(r) for r in ROWS] == [False, True, True]
    assert matches(None) is True  # a missing row has only nulls


# --------------------------------------------------------------------------- properties

FLOAT32_MAX = struct.unpack(">f", b"\x7f\x7f\xff\xff")[0]


def f32(x: float) -> float:
    return float(struct.unpack(">f", struct.pack(">f", x))[0])


COLUMN_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": st.integers(-(2**31), 2**31 - 1),
    "l": st.integers(-(2**63), 2**63 - 1),
    "d": st.one_of(st.sampled_from([math.nan, -0.0, 0.0, math.inf, -math.inf, 1.5]),
                   st.floats()),
    "f": st.one_of(st.sampled_from([math.nan, -0.0, 0.5, math.inf]), st.floats(width=32)),
    "s": st.text(max_size=4),
    "dec": st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False),
    "day": st.integers(-50_000, 50_000),
    "ts": st.integers(-(2**50), 2**50),
    "flag": st.booleans(),
    "st.x": st.integers(-(2**31), 2**31 - 1),
    "st.y": st.text(max_size=3),
}
SMALL_INTS = st.integers(-4, 4)
LITERALS: dict[str, st.SearchStrategy[Any]] = {
    "id": st.one_of(SMALL_INTS, st.sampled_from([10**12, -(10**12), 2.5, -1.5]),
                    st.decimals(-5, 5, places=1)),
    "l": st.one_of(SMALL_INTS, st.sampled_from([2**70, -(2**70), 0.5])),
    "d": st.one_of(st.floats(allow_nan=False), st.sampled_from([0, -0.0, 1.5, math.inf])),
    "f": st.one_of(st.floats(allow_nan=False), st.sampled_from([0.5, 1e39, -1e39])),
    "s": st.text(max_size=3),
    "dec": st.one_of(st.decimals(-5, 5, places=3), SMALL_INTS, st.sampled_from([0.25, 1e20])),
    "day": st.one_of(st.dates(), st.integers(-3, 3)),
    "ts": st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2100, 1, 1)),
    "flag": st.booleans(),
    "st.x": SMALL_INTS,
    "st.y": st.text(max_size=3),
}
FLOATS = ("d", "f")
STRINGS = ("s", "st.y")


@st.composite
def rows(draw: st.DrawFn) -> dict[int, Any]:
    row: dict[int, Any] = {}
    for name in ("id", "l", "d", "f", "s", "dec", "day", "ts", "flag"):
        fid = SCHEMA.find_field(name).field_id
        nullable = name != "id"
        strategy = COLUMN_VALUES[name]
        if nullable:
            strategy = st.one_of(st.none(), strategy)
        row[fid] = draw(strategy)
    if draw(st.booleans()):
        row[10] = {11: draw(st.one_of(st.none(), COLUMN_VALUES["st.x"])),
                   12: draw(COLUMN_VALUES["st.y"])}
    else:
        row[10] = None
    return row


@st.composite
def predicates(draw: st.DrawFn) -> Expression:
    name = draw(st.sampled_from([*sorted(LITERALS), *FLOATS, *FLOATS]))
    kinds = ["null", "cmp", "set"]
    if name in FLOATS:
        kinds.append("nan")
    if name in STRINGS:
        kinds.append("prefix")
    kind = draw(st.sampled_from(kinds))
    if kind == "null":
        return draw(st.sampled_from([IsNull, NotNull]))(name)  # type: ignore[no-any-return]
    if kind == "nan":
        return draw(st.sampled_from([IsNaN, NotNaN]))(name)  # type: ignore[no-any-return]
    if kind == "prefix":
        cls = draw(st.sampled_from([StartsWith, NotStartsWith]))
        return cls(name, draw(st.text(max_size=2)))  # type: ignore[no-any-return]
    if kind == "set":
        cls = draw(st.sampled_from([In, NotIn]))
        return cls(name, draw(st.lists(LITERALS[name], max_size=3)))  # type: ignore[no-any-return]
    cls = draw(st.sampled_from([EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan,
                                GreaterThanOrEqual]))
    return cls(name, draw(LITERALS[name]))  # type: ignore[no-any-return]


def expressions() -> st.SearchStrategy[Expression]:
    return st.recursive(
        predicates(),
        lambda children: st.one_of(
            st.builds(And, children, children),
            st.builds(Or, children, children),
            st.builds(Not, children),
        ),
        max_leaves=6,
    )


def reference_literal(name: str, value: Any) -> Any:
    """The literal as a value comparable with the row's internal value (independently)."""
    if name in ("day",) and isinstance(value, dt.date):
        return (value - dt.date(1970, 1, 1)).days
    if name == "ts":
        delta = value - EPOCH
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if name == "f" and isinstance(value, (int, float)) and abs(value) <= FLOAT32_MAX:
        return f32(float(value))
    if name == "dec" and isinstance(value, float):
        return Decimal(repr(value))
    return value


def reference(expr: Expression, row: dict[int, Any]) -> bool | None:
    """SQL three-valued logic, straight from the unbound expression."""
    if expr == ALWAYS_TRUE:
        return True
    if expr == ALWAYS_FALSE:
        return False
    if isinstance(expr, Not):
        inner = reference(expr.child, row)
        return None if inner is None else not inner
    if isinstance(expr, And):
        left, right = reference(expr.left, row), reference(expr.right, row)
        if left is False or right is False:
            return False
        return None if left is None or right is None else True
    if isinstance(expr, Or):
        left, right = reference(expr.left, row), reference(expr.right, row)
        if left is True or right is True:
            return True
        return None if left is None or right is None else False
    assert isinstance(expr, (UnaryPredicate, LiteralPredicate, SetPredicate))
    name = expr.term.name
    if name.startswith("st."):
        parent = row.get(10)
        value = None if parent is None else parent.get(11 if name == "st.x" else 12)
    else:
        value = row.get(SCHEMA.find_field(name).field_id)
    if isinstance(expr, UnaryPredicate):
        return {
            IsNull: value is None,
            NotNull: value is not None,
            IsNaN: isinstance(value, float) and math.isnan(value),
            NotNaN: not (isinstance(value, float) and math.isnan(value)),
        }[type(expr)]
    if value is None:
        return None
    if isinstance(expr, SetPredicate):
        found = any(value == reference_literal(name, v) for v in expr.literals)
        return found if isinstance(expr, In) else not found
    lit = reference_literal(name, expr.literal)
    if isinstance(expr, StartsWith):
        return bool(value.startswith(lit))
    if isinstance(expr, NotStartsWith):
        return not value.startswith(lit)
    ops = {
        EqualTo: lambda a, b: a == b,
        NotEqualTo: lambda a, b: a != b,
        LessThan: lambda a, b: a < b,
        LessThanOrEqual: lambda a, b: a <= b,
        GreaterThan: lambda a, b: a > b,
        GreaterThanOrEqual: lambda a, b: a >= b,
    }
    return bool(ops[type(expr)](value, lit))  # type: ignore[index,no-untyped-call]


@settings(max_examples=300)
@given(expressions(), st.lists(rows(), min_size=1, max_size=6))
def test_binding_keeps_three_valued_semantics_and_arrow_agrees(
    expr: Expression, sample: list[dict[int, Any]]
) -> None:
    bound = bind(expr, SCHEMA)
    by_row = [evaluate_row(bound, r) for r in sample]
    assert by_row == [reference(expr, r) is True for r in sample]
    assert evaluate_arrow(bound, to_arrow(sample)).to_pylist() == by_row


@settings(max_examples=400)
@given(predicates(), st.lists(rows(), min_size=1, max_size=8))
def test_predicate_and_its_negation_follow_three_valued_logic(
    pred: Expression, sample: list[dict[int, Any]]
) -> None:
    for expr in (pred, Not(pred)):
        bound = bind(expr, SCHEMA)
        expected = [reference(expr, r) is True for r in sample]
        assert [evaluate_row(bound, r) for r in sample] == expected
        assert evaluate_arrow(bound, to_arrow(sample)).to_pylist() == expected
