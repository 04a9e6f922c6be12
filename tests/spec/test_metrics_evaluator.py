"""File pruning with column metrics: inclusive and strict, scalar and vectorized, and soundness."""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.spec import values
from icenb.spec.evaluators import evaluate_row
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import (
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
    col,
)
from icenb.spec.metrics_evaluator import (
    FileMetrics,
    InclusiveMetricsEvaluator,
    StrictMetricsEvaluator,
    arrow_type_for,
    decode_bound_array,
    decode_bounds,
    evaluate_inclusive_arrow,
    evaluate_strict_arrow,
    inclusive_match,
    map_value_array,
    metrics_table,
    strict_match,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
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
    UUIDType,
)

# The reference implementation's test file: 50 rows, id in [30, 79], ...
SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "no_stats", IntegerType()),
    NestedField(3, "required", StringType(), required=True),
    NestedField(4, "all_nulls", StringType()),
    NestedField(5, "some_nulls", StringType()),
    NestedField(6, "no_nulls", StringType()),
    NestedField(7, "all_nans", DoubleType()),
    NestedField(8, "some_nans", FloatType()),
    NestedField(9, "no_nans", FloatType()),
    NestedField(10, "all_nulls_double", DoubleType()),
    NestedField(11, "all_nans_v1_stats", FloatType()),
    NestedField(12, "nan_and_null_only", DoubleType()),
    NestedField(13, "no_nan_stats", DoubleType()),
    NestedField(14, "str", StringType()),
    NestedField(15, "s", StructType(NestedField(16, "n", LongType()))),
)
FILE = FileMetrics(
    record_count=50,
    value_counts={4: 50, 5: 50, 6: 50, 7: 50, 8: 50, 9: 50, 10: 50, 11: 50, 12: 50, 13: 50,
                  14: 50, 16: 50},
    null_value_counts={4: 50, 5: 10, 6: 0, 7: 0, 8: 0, 9: 0, 10: 50, 11: 0, 12: 1, 14: 0,
                       16: 0},
    nan_value_counts={7: 50, 8: 10, 9: 0, 12: 49},
    lower_bounds={1: 30, 11: math.nan, 13: -1.0, 14: "abc", 9: -5.0, 8: 1.0, 16: 10},
    upper_bounds={1: 79, 11: math.nan, 13: 10.0, 14: "abe", 9: 5.0, 8: 2.0, 16: 20},
)


def inclusive(expr: Expression, metrics: FileMetrics = FILE) -> bool:
    scalar = inclusive_match(bind(expr, SCHEMA), metrics)
    vectorized = evaluate_inclusive_arrow(bind(expr, SCHEMA), files_table([metrics]))
    assert vectorized.to_pylist() == [scalar], "vectorized and scalar disagree"
    return scalar


def strict(expr: Expression, metrics: FileMetrics = FILE) -> bool:
    scalar = strict_match(bind(expr, SCHEMA), metrics)
    vectorized = evaluate_strict_arrow(bind(expr, SCHEMA), files_table([metrics]))
    assert vectorized.to_pylist() == [scalar], "vectorized and scalar disagree"
    return scalar


def files_table(files: list[FileMetrics], schema: Schema = SCHEMA) -> pa.Table:
    """The vectorized evaluators' column contract, built from scalar metrics."""
    columns: dict[str, pa.Array] = {
        "record_count": pa.array([f.record_count for f in files], pa.int64())
    }
    for fid in sorted(schema.field_ids()):
        field = schema.field_by_id(fid)
        assert field is not None
        for attr, name in (("value_counts", "value_count"), ("null_value_counts",
                           "null_value_count"), ("nan_value_counts", "nan_value_count")):
            maps = [getattr(f, attr) for f in files]
            if any(m is not None and fid in m for m in maps):
                columns[f"{name}.{fid}"] = pa.array(
                    [None if m is None else m.get(fid) for m in maps], pa.int64()
                )
        for attr, name in (("lower_bounds", "lower_bound"), ("upper_bounds", "upper_bound")):
            maps = [getattr(f, attr) for f in files]
            if any(m is not None and fid in m for m in maps):
                items = [None if m is None else m.get(fid) for m in maps]
                if isinstance(field.field_type, DateType):
                    items = [None if v is None else pa.scalar(v, pa.int32()).cast(pa.date32())
                             .as_py() for v in items]
                columns[f"{name}.{fid}"] = pa.array(items, arrow_type_for(field.field_type))
    return pa.table(columns)


# --------------------------------------------------------------------------- inclusive


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("all_nulls").not_null(), False),
        (col("some_nulls").not_null(), True),
        (col("no_nulls").not_null(), True),
        (col("all_nulls").is_null(), True),
        (col("some_nulls").is_null(), True),
        (col("no_nulls").is_null(), False),
        (col("no_stats").is_null(), True),
        (col("all_nans").is_nan(), True),
        (col("some_nans").is_nan(), True),
        (col("no_nans").is_nan(), False),
        (col("all_nulls_double").is_nan(), False),
        (col("no_nan_stats").is_nan(), True),
        (col("all_nans").not_nan(), False),
        (col("some_nans").not_nan(), True),
        (col("all_nulls_double").not_nan(), True),
        (col("nan_and_null_only").not_nan(), True),
        (col("id") < 5, False),
        (col("id") < 30, False),
        (col("id") < 31, True),
        (col("id") <= 29, False),
        (col("id") <= 30, True),
        (col("id") > 79, False),
        (col("id") > 78, True),
        (col("id") >= 80, False),
        (col("id") >= 79, True),
        (col("id") == 5, False),
        (col("id") == 29, False),
        (col("id") == 30, True),
        (col("id") == 79, True),
        (col("id") == 80, False),
        (col("id") != 5, True),
        (col("id") != 30, True),
        (~(col("id") == 30), True),
        (~(col("id") < 30), True),
        (~(col("id") > 79), True),
        (col("id").isin(5, 6), False),
        (col("id").isin(29, 30), True),
        (col("id").isin(75, 79), True),
        (col("id").isin(80, 81), False),
        (col("id").isin(*range(0, 600, 2)), True),  # more than 200 values: not checked
        (col("id").not_in(30, 79), True),
        (col("all_nulls").isin("a", "b"), False),
        (col("all_nulls") == "a", False),
        (col("all_nulls") < "a", False),
        (col("all_nans") == 1.0, False),
        (col("all_nans") > 1.0, False),
        (col("all_nans").isin(1.0, 2.0), False),
        (col("all_nans_v1_stats") < 1.0, True),  # NaN bounds are unreliable
        (col("all_nans_v1_stats") > 1.0, True),
        (col("all_nans_v1_stats") == 1.0, True),
        (col("all_nans_v1_stats").isin(1.0, 2.0), True),
        (col("some_nans") == 3.0, False),
        (col("some_nans") == 1.5, True),
        (col("no_nans") >= 5.0, True),
        (col("no_nans") > 5.0, False),
        (col("no_nan_stats") < -1.0, False),
        (col("no_nan_stats") < 0.0, True),
        (col("str").starts_with("a"), True),
        (col("str").starts_with("ab"), True),
        (col("str").starts_with("abcd"), True),
        (col("str").starts_with("abd"), True),
        (col("str").starts_with("abf"), False),
        (col("str").starts_with("aa"), False),
        (col("str").starts_with("b"), False),
        (col("all_nulls").starts_with("a"), False),
        (col("str").not_starts_with("ab"), False),  # every value starts with 'ab'
        (col("str").not_starts_with("abc"), True),
        (col("str").not_starts_with("abcd"), True),
        (col("some_nulls").not_starts_with("a"), True),
        (col("no_stats") == 5, True),
        (col("s.n") == 5, False),  # nested struct fields have metrics by field id
        (col("s.n") == 15, True),
        ((col("id") < 5) | (col("id") > 70), True),
        ((col("id") < 5) & (col("id") > 30), False),
        (col("id") < 10**12, True),
    ],
)
def test_inclusive(expr: Expression, expected: bool) -> None:
    assert inclusive(expr) == expected


def test_inclusive_record_counts_and_missing_metrics() -> None:
    assert not inclusive(col("id") > 0, FileMetrics(record_count=0))
    assert inclusive(col("all_nulls").not_null(), FileMetrics(record_count=-1))
    bare = FileMetrics(record_count=10)
    for expr in (col("id") == 5, col("str").starts_with("x"), col("all_nans").is_nan(),
                 col("id").isin(1, 2), col("no_nulls").is_null()):
        assert inclusive(expr, bare)


# --------------------------------------------------------------------------- strict


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("all_nulls").not_null(), False),
        (col("some_nulls").not_null(), False),
        (col("no_nulls").not_null(), True),
        (col("no_stats").not_null(), False),
        (col("all_nulls").is_null(), True),
        (col("some_nulls").is_null(), False),
        (col("all_nans").is_nan(), True),
        (col("some_nans").is_nan(), False),
        (col("no_nans").not_nan(), True),
        (col("all_nulls_double").not_nan(), True),  # null is not NaN
        (col("some_nans").not_nan(), False),
        (col("no_nan_stats").not_nan(), False),  # unknown NaN count
        (col("id") < 80, True),
        (col("id") < 79, False),
        (col("id") <= 79, True),
        (col("id") > 29, True),
        (col("id") > 30, False),
        (col("id") >= 30, True),
        (col("id") == 30, False),
        (col("id") != 29, True),
        (col("id") != 80, True),
        (col("id") != 50, False),
        (~(col("id") == 80), True),
        (col("id").not_in(20, 25, 80), True),
        (col("id").not_in(20, 30), False),
        (col("id").isin(30, 79), False),
        (col("all_nulls") != "a", False),  # null values do not match !=
        (col("all_nulls").not_in("a", "b"), False),
        (col("all_nans") != 1.0, True),  # NaN differs from every literal
        (col("all_nans").not_in(1.0, 2.0), True),
        (col("all_nans") < 1.0, False),
        (col("some_nans") < 5.0, False),
        (col("no_nans") < 6.0, True),
        (col("no_nans") > -6.0, True),
        (col("no_nans") > -5.0, False),
        (col("no_nan_stats") < 11.0, False),  # may hold NaN
        (col("str").starts_with("ab"), True),
        (col("str").starts_with("abc"), False),
        (col("str").not_starts_with("x"), False),
        (col("s.n") >= 10, True),
        ((col("id") < 5) | (col("id") < 80), True),
        ((col("id") < 5) & (col("id") < 80), False),
        (col("id") < 10**12, True),
    ],
)
def test_strict(expr: Expression, expected: bool) -> None:
    assert strict(expr) == expected


def test_strict_eq_and_in_with_a_single_value_file() -> None:
    single = FileMetrics(50, {2: 50}, {2: 0}, None, {1: 42, 2: 7}, {1: 42, 2: 7})
    assert strict(col("id") == 42, single)
    assert strict(col("id").isin(42, 43), single)
    assert not strict(col("id") == 43, single)
    assert strict(col("no_stats") == 7, single)
    nullable_unknown = FileMetrics(50, None, None, None, {2: 7}, {2: 7})
    assert not strict(col("no_stats") == 7, nullable_unknown)


def test_strict_record_counts() -> None:
    assert strict(col("id") > 1000, FileMetrics(record_count=0))
    assert not strict(col("id") < 1000, FileMetrics(record_count=-1))


def test_evaluator_classes_and_serialized_metrics() -> None:
    ids = [1, 14]
    metrics = FileMetrics.from_serialized(
        SCHEMA, 50,
        lower_bounds={1: values.to_bytes(IntegerType(), 30), 14: b"abc", 99: b"\x00"},
        upper_bounds={1: values.to_bytes(IntegerType(), 79), 14: b"abe"},
        field_ids=ids,
    )
    assert metrics.lower_bounds == {1: 30, 14: "abc"}
    inc = InclusiveMetricsEvaluator(SCHEMA, parse("id > 79 or str like 'abd%'"))
    assert inc.eval(metrics)
    assert inc.field_ids == {1, 14}
    strict_eval = StrictMetricsEvaluator(SCHEMA, parse("id between 30 and 79"))
    assert strict_eval.eval(metrics)
    table = files_table([metrics, FileMetrics(0)])
    assert inc.eval_arrow(table).to_pylist() == [True, False]
    assert strict_eval.eval_arrow(table).to_pylist() == [True, True]


def test_decode_bounds_skips_what_cannot_be_used() -> None:
    decoded = decode_bounds(SCHEMA, {1: b"\x01\x00\x00\x00", 3: b"\xff", 15: b"x", 404: b"x"})
    assert decoded == {1: 1}  # invalid UTF-8, a struct and an unknown id are left out
    assert decode_bounds(SCHEMA, None) is None


# --------------------------------------------------------------------------- Arrow helpers


def test_map_value_array_for_maps_and_key_value_lists() -> None:
    as_map = pa.array([[(1, 10), (2, 20)], None, [(2, 5)], []],
                      pa.map_(pa.int32(), pa.int64()))
    assert map_value_array(as_map, 2).to_pylist() == [20, None, 5, None]
    assert map_value_array(as_map.slice(1), 2).to_pylist() == [None, 5, None]
    assert map_value_array(as_map, 3).to_pylist() == [None, None, None, None]
    kv = pa.struct([("key", pa.int32()), ("value", pa.binary())])
    as_list = pa.array([[{"key": 1, "value": b"a"}], None, [{"key": 2, "value": b"b"},
                                                            {"key": 1, "value": b"c"}]],
                       pa.list_(kv))
    assert map_value_array(as_list, 1).to_pylist() == [b"a", None, b"c"]
    assert map_value_array(as_list.slice(2), 1).to_pylist() == [b"c"]
    chunked = pa.chunked_array([as_list.slice(0, 1), as_list.slice(1)])
    assert map_value_array(chunked, 1).to_pylist() == [b"a", None, b"c"]


@pytest.mark.parametrize(
    ("t", "items"),
    [
        (IntegerType(), [1, None, -5, 2**31 - 1]),
        (LongType(), [1, None, -(2**63)]),
        (DoubleType(), [1.5, None, -0.0, math.inf]),
        (FloatType(), [1.5, None]),
        (DateType(), [19723, None, -1]),
        (TimestampType(), [1_704_067_200_000_000, None]),
        (StringType(), ["abc", None, "é😀"]),
        (DecimalType(9, 2), [Decimal("1.25"), None, Decimal("-3.00")]),
        (UUIDType(), [None, __import__("uuid").UUID(int=5)]),
    ],
)
def test_decode_bound_array(t: Any, items: list[Any]) -> None:
    raw = pa.array([None if v is None else values.to_bytes(t, v) for v in items], pa.binary())
    decoded = decode_bound_array(t, raw)
    assert decoded.type == arrow_type_for(t)
    expected = pa.array(
        [None if v is None else (v.bytes if isinstance(t, UUIDType) else v) for v in items],
        type=pa.int32() if isinstance(t, DateType) else
        pa.int64() if isinstance(t, TimestampType) else arrow_type_for(t),
    )
    if isinstance(t, (DateType, TimestampType)):
        expected = expected.cast(arrow_type_for(t))
    assert decoded.equals(expected)


def test_decode_bound_array_reads_bounds_written_before_a_promotion() -> None:
    raw = pa.array([values.to_bytes(IntegerType(), 7), values.to_bytes(LongType(), 2**40)])
    assert decode_bound_array(LongType(), raw).to_pylist() == [7, 2**40]
    bad = pa.array([b"\x01\x02"], pa.binary())
    assert decode_bound_array(IntegerType(), bad).to_pylist() == [None]


def test_metrics_table_from_manifest_columns() -> None:
    counts = pa.map_(pa.int32(), pa.int64())
    bounds = pa.map_(pa.int32(), pa.binary())
    data_files = pa.table({
        "record_count": pa.array([50, 0, 10], pa.int64()),
        "value_counts": pa.array([[(1, 50)], None, [(1, 10)]], counts),
        "null_value_counts": pa.array([[(1, 0)], None, [(1, 0)]], counts),
        "lower_bounds": pa.array([[(1, values.to_bytes(IntegerType(), 30)), (14, b"abc")],
                                  None, [(1, values.to_bytes(IntegerType(), 100))]], bounds),
        "upper_bounds": pa.array([[(1, values.to_bytes(IntegerType(), 79)), (14, b"abe")],
                                  None, [(1, values.to_bytes(IntegerType(), 200))]], bounds),
    })
    expr = bind(parse("id > 90 or str like 'abd%'"), SCHEMA)
    table = metrics_table(data_files, SCHEMA, [1, 14])
    assert table.column("lower_bound.1").to_pylist() == [30, None, 100]
    assert table.column("upper_bound.14").to_pylist() == ["abe", None, None]
    assert evaluate_inclusive_arrow(expr, table).to_pylist() == [True, False, True]
    assert evaluate_strict_arrow(bind(col("id") > 90, SCHEMA), table).to_pylist() == [
        False, True, True,
    ]


# --------------------------------------------------------------------------- soundness

PROPS = Schema(
    NestedField(1, "i", IntegerType(), required=True),
    NestedField(2, "l", LongType()),
    NestedField(3, "d", DoubleType()),
    NestedField(4, "s", StringType()),
)
VALUES: dict[int, st.SearchStrategy[Any]] = {
    1: st.integers(-20, 20),
    2: st.integers(-20, 20),
    3: st.sampled_from([math.nan, -0.0, 0.0, math.inf]) | st.floats(-20, 20),
    4: st.text("abc\u00e9\U0001f600", max_size=4),
}
LITS: dict[int, st.SearchStrategy[Any]] = {
    1: st.integers(-22, 22),
    2: st.integers(-22, 22),
    3: st.floats(-22, 22) | st.sampled_from([0.0, -0.0, math.inf]),
    4: st.text("abc\u00e9\U0001f600", max_size=3),
}
NAMES = {1: "i", 2: "l", 3: "d", 4: "s"}


@st.composite
def predicates(draw: st.DrawFn) -> Expression:
    fid = draw(st.sampled_from(sorted(NAMES)))
    name = NAMES[fid]
    choices: list[Any] = [IsNull, NotNull, EqualTo, NotEqualTo, LessThan, LessThanOrEqual,
                          GreaterThan, GreaterThanOrEqual, In, NotIn]
    if fid == 3:
        choices += [IsNaN, NotNaN]
    if fid == 4:
        choices += [StartsWith, NotStartsWith]
    cls = draw(st.sampled_from(choices))
    if cls in (IsNull, NotNull, IsNaN, NotNaN):
        return cls(name)  # type: ignore[no-any-return]
    if cls in (In, NotIn):
        return cls(name, draw(st.lists(LITS[fid], max_size=3)))  # type: ignore[no-any-return]
    return cls(name, draw(LITS[fid]))  # type: ignore[no-any-return]


EXPRESSIONS = st.recursive(
    predicates(),
    lambda c: st.builds(lambda a, b: a & b, c, c) | st.builds(Or, c, c) | st.builds(Not, c),
    max_leaves=4,
)


def _next_string(text: str) -> str | None:
    """The shortest string greater than every string starting with ``text`` (or None)."""
    chars = list(text)
    while chars:
        code = ord(chars[-1]) + 1
        if code == 0xD800:
            code = 0xE000
        if code <= 0x10FFFF:
            chars[-1] = chr(code)
            return "".join(chars)
        chars.pop()
    return None


@st.composite
def files(draw: st.DrawFn) -> tuple[list[dict[int, Any]], FileMetrics]:
    """Random rows and their metrics as a writer produces them, with some metrics left out."""
    n = draw(st.integers(0, 6))
    columns: dict[int, list[Any]] = {}
    for fid, strategy in VALUES.items():
        # edge cases are what pruning gets wrong: all-null and all-NaN columns
        mode = "values" if fid == 1 else draw(st.sampled_from(["mixed", "nulls", "values",
                                                              "nans"]))
        if mode == "nans" and fid == 3:
            columns[fid] = [draw(st.sampled_from([math.nan, None])) for _ in range(n)]
        elif mode == "nulls":
            columns[fid] = [None] * n
        elif mode == "mixed":
            columns[fid] = [draw(st.none() | strategy) for _ in range(n)]
        else:
            columns[fid] = [draw(strategy) for _ in range(n)]
    rows = [{fid: columns[fid][i] for fid in VALUES} for i in range(n)]
    vc: dict[int, int] = {}
    nc: dict[int, int] = {}
    nan: dict[int, int] = {}
    lower: dict[int, Any] = {}
    upper: dict[int, Any] = {}
    truncate = draw(st.booleans())
    complete = draw(st.booleans())  # all counts and bounds present, or a random subset
    for fid in NAMES:
        column = [r[fid] for r in rows]
        present = [v for v in column if v is not None and not (isinstance(v, float)
                                                              and math.isnan(v))]
        if complete or draw(st.booleans()):
            vc[fid] = len(column)
        if complete or draw(st.booleans()):
            nc[fid] = sum(v is None for v in column)
        if fid == 3 and (complete or draw(st.booleans())):
            nan[fid] = sum(isinstance(v, float) and math.isnan(v) for v in column)
        if present and (complete or draw(st.booleans())):
            low, high = min(present), max(present)
            if fid == 4 and truncate:  # truncated string bounds, as writers store them
                low = low[:1]
                bumped = _next_string(high[:1]) if len(high) > 1 else high
                if bumped is None:
                    continue
                high = bumped
            lower[fid], upper[fid] = low, high
    metrics = FileMetrics(len(rows), vc, nc, nan, lower, upper)
    return rows, metrics


@settings(max_examples=300)
@given(EXPRESSIONS, st.lists(files(), min_size=1, max_size=4))
def test_metrics_are_sound_and_vectorized_agrees(
    expr: Expression, sample: list[tuple[list[dict[int, Any]], FileMetrics]]
) -> None:
    bound = bind(expr, PROPS)
    table = files_table([m for _, m in sample], PROPS)
    might = evaluate_inclusive_arrow(bound, table).to_pylist()
    must = evaluate_strict_arrow(bound, table).to_pylist()
    for (rows, metrics), vec_might, vec_must in zip(sample, might, must, strict=True):
        matches = [evaluate_row(bound, r) for r in rows]
        scalar_might = inclusive_match(bound, metrics)
        scalar_must = strict_match(bound, metrics)
        assert (vec_might, vec_must) == (scalar_might, scalar_must)
        if any(matches):
            assert scalar_might, "pruned a file with a matching row"
        if scalar_must:
            assert all(matches), "claimed every row matches"


def test_float_bound_rounding_does_not_matter() -> None:
    f32 = struct.unpack(">f", struct.pack(">f", 0.1))[0]
    file = FileMetrics(1, {9: 1}, {9: 0}, {9: 0}, {9: f32}, {9: f32})
    assert inclusive(col("no_nans") == 0.1, file)
    assert strict(col("no_nans") == 0.1, file)


def test_uuid_bounds_never_prune_because_writers_order_uuids_differently() -> None:
    """Java 1.10 keeps UUID min/max by UUID.compareTo (signed halves): for the values 00.. and
    f0.. it writes lower f0.., upper 00... Compared unsigned, `u = 00..` would look out of
    range; icenb must keep the file (and prove nothing strictly)."""
    import uuid as _uuid

    from icenb.spec.types import UUIDType

    low, high = _uuid.UUID(int=1), _uuid.UUID(int=0xF0 << 120)
    schema = Schema(NestedField(1, "u", UUIDType(), required=False))
    java_like = FileMetrics(record_count=2, value_counts={1: 2}, null_value_counts={1: 0},
                            lower_bounds={1: high}, upper_bounds={1: low})
    table = files_table([java_like], schema)
    for text in (f"u = '{low}'", f"u in ('{low}', '{_uuid.UUID(int=5)}')", f"u < '{high}'",
                 f"u >= '{_uuid.UUID(int=0xF1 << 120)}'"):
        expr = bind(parse(text), schema)
        assert inclusive_match(expr, java_like), text
        assert evaluate_inclusive_arrow(expr, table).to_pylist() == [True], text
        assert not strict_match(expr, java_like), text
        assert evaluate_strict_arrow(expr, table).to_pylist() == [False], text
    # null checks do not depend on order and still prune
    assert not inclusive_match(bind(parse("u is null"), schema), java_like)
