"""Manifest pruning with partition field summaries: rules, vectorized form and soundness."""

from __future__ import annotations

import math
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
from icenb.spec.manifest_evaluator import (
    ManifestEvaluator,
    PartitionFieldSummary,
    decode_field_summaries,
    evaluate_manifests_arrow,
    manifest_might_match,
    summaries_table,
)
from icenb.spec.metrics_evaluator import arrow_type_for
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    DoubleType,
    FloatType,
    IntegerType,
    NestedField,
    StringType,
    StructType,
)

PARTITION = StructType(
    NestedField(1000, "id", IntegerType()),
    NestedField(1001, "all_nulls_missing_nan", StringType()),
    NestedField(1002, "some_nulls", StringType()),
    NestedField(1003, "no_nulls", StringType()),
    NestedField(1004, "float", FloatType()),
    NestedField(1005, "all_nulls_double", DoubleType()),
    NestedField(1006, "all_nans", DoubleType()),
    NestedField(1007, "both_nan_and_null", FloatType()),
    NestedField(1008, "no_nan_or_null", DoubleType()),
    NestedField(1009, "all_nulls_missing_nan_float", FloatType()),
    NestedField(1010, "all_same_value_or_null", StringType()),
    NestedField(1011, "no_nulls_same_value_a", StringType()),
)
# as the reference implementation's TestManifestEvaluator: id in [30, 79], ...
SUMMARIES = [
    PartitionFieldSummary(False, None, 30, 79),
    PartitionFieldSummary(True, None, None, None),
    PartitionFieldSummary(True, None, "a", "z"),
    PartitionFieldSummary(False, None, "a", "z"),
    PartitionFieldSummary(False, None, 0.0, 20.0),
    PartitionFieldSummary(True, None, None, None),
    PartitionFieldSummary(False, True, None, None),
    PartitionFieldSummary(True, True, None, None),
    PartitionFieldSummary(False, False, 0.0, 20.0),
    PartitionFieldSummary(True, None, None, None),
    PartitionFieldSummary(True, None, "a", "a"),
    PartitionFieldSummary(False, None, "a", "a"),
]


def summaries_arrow(rows: list[list[PartitionFieldSummary] | None],
                    partition: StructType = PARTITION) -> pa.Table:
    """The vectorized column contract built from scalar summaries."""
    cols: dict[str, pa.Array] = {
        "has_partition_summaries": pa.array([r is not None for r in rows], pa.bool_())
    }
    for pos, f in enumerate(partition.fields):
        got = [None if r is None else r[pos] for r in rows]
        cols[f"contains_null.{f.field_id}"] = pa.array(
            [None if s is None else s.contains_null for s in got], pa.bool_())
        cols[f"contains_nan.{f.field_id}"] = pa.array(
            [None if s is None else s.contains_nan for s in got], pa.bool_())
        t = arrow_type_for(f.field_type)
        cols[f"lower_bound.{f.field_id}"] = pa.array(
            [None if s is None else s.lower_bound for s in got], t)
        cols[f"upper_bound.{f.field_id}"] = pa.array(
            [None if s is None else s.upper_bound for s in got], t)
    return pa.table(cols)


def might(expr: Expression, summaries: list[PartitionFieldSummary] | None = SUMMARIES) -> bool:
    bound = bind(expr, PARTITION)
    scalar = manifest_might_match(bound, summaries)
    vectorized = evaluate_manifests_arrow(bound, summaries_arrow([summaries]))
    assert vectorized.to_pylist() == [scalar], "vectorized and scalar disagree"
    return scalar


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("all_nulls_missing_nan").not_null(), False),
        (col("all_nulls_missing_nan_float").not_null(), True),  # may hold NaN
        (col("all_nulls_double").not_null(), True),
        (col("some_nulls").not_null(), True),
        (col("no_nulls").not_null(), True),
        (col("all_nulls_missing_nan").is_null(), True),
        (col("some_nulls").is_null(), True),
        (col("no_nulls").is_null(), False),
        (col("float").is_nan(), True),  # contains_nan unknown
        (col("no_nan_or_null").is_nan(), False),
        (col("all_nans").is_nan(), True),
        (col("all_nulls_double").is_nan(), True),
        (col("all_nans").not_nan(), False),
        (col("both_nan_and_null").not_nan(), True),
        (col("no_nan_or_null").not_nan(), True),
        (col("id") < 5, False),
        (col("id") < 30, False),
        (col("id") < 31, True),
        (col("id") <= 29, False),
        (col("id") <= 30, True),
        (col("id") > 79, False),
        (col("id") > 78, True),
        (col("id") >= 80, False),
        (col("id") >= 79, True),
        (col("id") == 29, False),
        (col("id") == 30, True),
        (col("id") == 80, False),
        (col("id") != 30, True),
        (~(col("id") == 30), True),
        (col("id").isin(5, 6), False),
        (col("id").isin(29, 30), True),
        (col("id").isin(80, 81), False),
        (col("id").isin(*range(0, 600, 2)), True),
        (col("id").not_in(30, 31), True),
        (col("all_nulls_missing_nan") < "a", False),
        (col("all_nulls_missing_nan") == "a", False),
        (col("all_nulls_missing_nan").isin("a", "b"), False),
        (col("all_nans") == 1.0, False),
        (col("all_nans") >= 1.0, False),
        (col("float") > 19.0, True),
        (col("float") > 20.0, False),
        (col("some_nulls").starts_with("a"), True),
        (col("some_nulls").starts_with("zz"), False),
        (col("no_nulls").starts_with("0"), False),
        (col("all_nulls_missing_nan").starts_with("a"), False),
        (col("all_same_value_or_null").not_starts_with("a"), True),  # nulls: kept
        (col("no_nulls_same_value_a").not_starts_with("a"), False),
        (col("no_nulls_same_value_a").not_starts_with("ab"), True),
        (col("no_nulls").not_starts_with("a"), True),
        ((col("id") < 5) | (col("id") > 70), True),
        ((col("id") < 5) & (col("id") > 30), False),
    ],
)
def test_manifest_evaluator(expr: Expression, expected: bool) -> None:
    assert might(expr) == expected


def test_missing_summaries_keep_the_manifest() -> None:
    assert might(col("id") == 1000, None)
    table = summaries_arrow([SUMMARIES, None])
    bound = bind(col("id") == 1000, PARTITION)
    assert evaluate_manifests_arrow(bound, table).to_pylist() == [False, True]
    # absent columns are unknown
    bare = pa.table({"x": [1, 2]})
    assert evaluate_manifests_arrow(bound, bare).to_pylist() == [True, True]


def test_for_row_filter_projects_first() -> None:
    schema = Schema(NestedField(1, "id", IntegerType()), NestedField(2, "name", StringType()))
    spec = PartitionSpec(0, (
        PartitionField((1,), 1000, parse_transform("truncate[10]"), "id_trunc"),
        PartitionField((2,), 1001, parse_transform("identity"), "name"),
    ))
    summaries = [PartitionFieldSummary(False, None, 30, 70),
                 PartitionFieldSummary(False, None, "b", "d")]
    evaluator = ManifestEvaluator.for_row_filter(spec, schema, parse("id < 25"))
    assert not evaluator.eval(summaries)
    assert ManifestEvaluator.for_row_filter(spec, schema, parse("id = 79")).eval(summaries)
    assert not ManifestEvaluator.for_row_filter(spec, schema, parse("id = 80")).eval(summaries)
    assert not ManifestEvaluator.for_row_filter(spec, schema, parse("name = 'a'")).eval(
        summaries)
    by_partition = ManifestEvaluator.for_partition_filter(spec, schema, parse("name >= 'c'"))
    assert by_partition.eval(summaries)
    table = summaries_arrow([summaries, None], spec.partition_type(schema))
    assert evaluator.eval_arrow(table).to_pylist() == [False, True]


def test_summaries_from_manifest_list_bytes() -> None:
    raw = [
        {"contains_null": False, "contains_nan": None,
         "lower_bound": values.to_bytes(IntegerType(), 30),
         "upper_bound": values.to_bytes(IntegerType(), 79)},
        {"contains_null": True, "contains_nan": False, "lower_bound": b"a",
         "upper_bound": b"\xff"},  # invalid UTF-8: unknown, never prunes
    ]
    partition = StructType(NestedField(1, "id", IntegerType()), NestedField(2, "s", StringType()))
    decoded = decode_field_summaries(partition, raw)
    assert decoded is not None
    assert decoded[0] == PartitionFieldSummary(False, None, 30, 79)
    assert manifest_might_match(bind(col("s") == "zz", partition), decoded)
    assert not manifest_might_match(bind(col("id") > 79, partition), decoded)
    with pytest.raises(Exception, match="2 partition fields"):
        decode_field_summaries(partition, raw[:1])
    # vectorized: a manifest list's ``partitions`` column
    summary_type = pa.struct([("contains_null", pa.bool_()), ("contains_nan", pa.bool_()),
                              ("lower_bound", pa.binary()), ("upper_bound", pa.binary())])
    column = pa.array([raw, None, [raw[0], {"contains_null": False, "contains_nan": None,
                                            "lower_bound": b"a", "upper_bound": b"b"}]],
                      pa.list_(summary_type))
    table = summaries_table(column, partition)
    assert table.column("lower_bound.1").to_pylist() == [30, None, 30]
    assert table.column("has_partition_summaries").to_pylist() == [False, False, True]
    mask = evaluate_manifests_arrow(bind(col("s") == "zz", partition), table)
    assert mask.to_pylist() == [True, True, False]


# --------------------------------------------------------------------------- properties

PROPS = StructType(
    NestedField(1, "i", IntegerType()),
    NestedField(2, "d", DoubleType()),
    NestedField(3, "s", StringType()),
)
VALUES: dict[int, st.SearchStrategy[Any]] = {
    1: st.none() | st.integers(-10, 10),
    2: st.none() | st.sampled_from([math.nan, -0.0, 0.0, math.inf]) | st.floats(-10, 10),
    3: st.none() | st.text("ab\u00e9", max_size=3),
}
LITS: dict[int, st.SearchStrategy[Any]] = {
    1: st.integers(-12, 12),
    2: st.floats(-12, 12) | st.just(math.inf),
    3: st.text("ab\u00e9", max_size=3),
}
NAMES = {1: "i", 2: "d", 3: "s"}


@st.composite
def predicates(draw: st.DrawFn) -> Expression:
    fid = draw(st.sampled_from(sorted(NAMES)))
    choices: list[Any] = [IsNull, NotNull, EqualTo, NotEqualTo, LessThan, LessThanOrEqual,
                          GreaterThan, GreaterThanOrEqual, In, NotIn]
    if fid == 2:
        choices += [IsNaN, NotNaN]
    if fid == 3:
        choices += [StartsWith, NotStartsWith]
    cls = draw(st.sampled_from(choices))
    name = NAMES[fid]
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


def summarize(partitions: list[dict[int, Any]]) -> list[PartitionFieldSummary]:
    """Summaries as a writer computes them (spec: Manifest Lists, field_summary)."""
    out = []
    for fid in NAMES:
        column = [p[fid] for p in partitions]
        present = [v for v in column
                   if v is not None and not (isinstance(v, float) and math.isnan(v))]
        has_nan = any(isinstance(v, float) and math.isnan(v) for v in column)
        out.append(PartitionFieldSummary(
            any(v is None for v in column),
            has_nan if fid == 2 else None,
            min(present) if present else None,
            max(present) if present else None,
        ))
    return out


@st.composite
def manifests(draw: st.DrawFn) -> list[dict[int, Any]]:
    """Partition tuples of one manifest; columns are often all null or null and NaN only."""
    n = draw(st.integers(0, 5))
    columns: dict[int, list[Any]] = {}
    for fid, strategy in VALUES.items():
        mode = draw(st.sampled_from(["mixed", "nulls", "null_or_nan"]))
        if mode == "nulls":
            columns[fid] = [None] * n
        elif mode == "null_or_nan" and fid == 2:
            columns[fid] = [draw(st.sampled_from([None, math.nan])) for _ in range(n)]
        else:
            columns[fid] = [draw(strategy) for _ in range(n)]
    return [{fid: columns[fid][i] for fid in VALUES} for i in range(n)]


@settings(max_examples=300)
@given(EXPRESSIONS, st.lists(manifests(), min_size=1, max_size=4))
def test_manifest_pruning_is_sound_and_vectorized_agrees(
    expr: Expression, manifests: list[list[dict[int, Any]]]
) -> None:
    bound = bind(expr, PROPS)
    summaries = [summarize(m) for m in manifests]
    vectorized = evaluate_manifests_arrow(bound, summaries_arrow(summaries, PROPS)).to_pylist()
    for partitions, summary, vec in zip(manifests, summaries, vectorized, strict=True):
        scalar = manifest_might_match(bound, summary)
        assert vec == scalar
        if any(evaluate_row(bound, p) for p in partitions):
            assert scalar, "pruned a manifest with a matching partition"


def test_uuid_summaries_never_prune() -> None:
    """Identity(uuid) partition summaries written in Java's signed order keep the manifest."""
    import uuid as _uuid

    from icenb.spec.types import UUIDType

    low, high = _uuid.UUID(int=1), _uuid.UUID(int=0xF0 << 120)
    partition = StructType(NestedField(1000, "u", UUIDType(), required=False))
    raw = [{"contains_null": False, "contains_nan": None,
            "lower_bound": values.to_bytes(UUIDType(), high),
            "upper_bound": values.to_bytes(UUIDType(), low)}]
    decoded = decode_field_summaries(partition, raw)
    assert decoded is not None
    expr = bind(col("u") == low, partition)
    assert manifest_might_match(expr, decoded)
    summary_type = pa.struct([("contains_null", pa.bool_()), ("contains_nan", pa.bool_()),
                              ("lower_bound", pa.binary()), ("upper_bound", pa.binary())])
    table = summaries_table(pa.array([raw], pa.list_(summary_type)), partition)
    assert evaluate_manifests_arrow(expr, table).to_pylist() == [True]
    assert not manifest_might_match(bind(col("u").is_null(), partition), decoded)
