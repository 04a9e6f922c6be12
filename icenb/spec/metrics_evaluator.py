"""Decide from a data or delete file's column metrics whether its rows may (or must) match.

Spec: "Scan Planning" (files are filtered with column bounds and counts stored by field id;
the same logic serves data and delete files) and "Manifests" (``value_counts``,
``null_value_counts``, ``nan_value_counts``, ``lower_bounds``, ``upper_bounds``; bounds are
Appendix D binary values, exclude nulls and NaN, and may be truncated).

*Inclusive* evaluation answers "may this file contain a matching row?" (False: skip the file);
*strict* evaluation answers "must every row of this file match?" (True: e.g. a delete can
drop the whole file). Both follow the reference implementation's ``InclusiveMetricsEvaluator``
and ``StrictMetricsEvaluator``: missing metrics never prune, an ``in`` with more than 200
values is not checked, NaN bounds are unreliable, ``starts_with`` compares truncated bounds.
Where Java's strict rules assume something the metrics do not say, this module is
conservative, so that the answers hold for the row semantics of
:mod:`icenb.spec.expressions`: a missing null count means "may contain nulls", a missing NaN
count of a float column means "may contain NaN", a negative (unknown) record count never
means "all rows match", and ``!=`` / ``not in`` never match null values.

Two forms:

* scalar: :class:`FileMetrics` (bounds already decoded; :meth:`FileMetrics.from_serialized`
  decodes Appendix D bytes) with :func:`inclusive_match` / :func:`strict_match`;
* vectorized, one row per file, for planning over millions of files:
  :func:`evaluate_inclusive_arrow` / :func:`evaluate_strict_arrow` take an Arrow table with
  these columns (any may be absent, which means "unknown" for every file; nulls mean unknown):

  ==========================  ====================================================
  ``record_count``            int64 (absent: treated as positive for every file)
  ``value_count.<id>``        int64, values of the column incl. nulls and NaN
  ``null_value_count.<id>``   int64
  ``nan_value_count.<id>``    int64
  ``lower_bound.<id>``        decoded lower bound, Arrow type of the column
  ``upper_bound.<id>``        decoded upper bound
  ==========================  ====================================================

  where ``<id>`` is the field id. :func:`metrics_table` builds such a table from manifest
  ``data_file`` columns (``value_counts`` ... as Arrow maps or lists of key/value structs,
  bounds as binary), decoding only the fields a filter uses (:func:`decode_bound_array`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.arrow_types import primitive_arrow_type
from icenb.spec.evaluators import arrow_literal, normalize_column, prepare_bound
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundLiteralPredicate,
    BoundPredicate,
    BoundSetPredicate,
    Expression,
    Operation,
    Or,
    bind,
    referenced_field_ids,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    DateType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

__all__ = [
    "IN_PREDICATE_LIMIT",
    "FileMetrics",
    "InclusiveMetricsEvaluator",
    "StrictMetricsEvaluator",
    "arrow_type_for",
    "bounds_unordered",
    "decode_bound_array",
    "decode_bounds",
    "evaluate_inclusive_arrow",
    "evaluate_strict_arrow",
    "inclusive_match",
    "map_value_array",
    "metrics_table",
    "metrics_table_of",
    "strict_match",
]

#: Above this many values, ``in`` is not checked against bounds (as the reference impl.).
IN_PREDICATE_LIMIT = 200


# --------------------------------------------------------------------------- decoding


def decode_bounds(
    schema: Schema | StructType,
    bounds: Mapping[int, bytes] | None,
    field_ids: Iterable[int] | None = None,
) -> dict[int, Any] | None:
    """Decode Appendix D bound bytes by field id (only ``field_ids`` when given).

    Ids not in the schema, non-primitive fields and undecodable bytes are left out (a missing
    bound never prunes). Bounds written before a type promotion are read as
    :func:`icenb.spec.values.from_bytes` reads them.
    """
    if bounds is None:
        return None
    target = schema if isinstance(schema, Schema) else Schema(*schema.fields)
    wanted = None if field_ids is None else set(field_ids)
    out: dict[int, Any] = {}
    for fid, raw in bounds.items():
        if wanted is not None and fid not in wanted:
            continue
        field = target.field_by_id(fid)
        if field is None or not isinstance(field.field_type, PrimitiveType):
            continue
        try:
            out[fid] = values.from_bytes(field.field_type, raw)
        except IcebergError:
            continue
    return out


@safe_repr
@dataclass(frozen=True)
class FileMetrics:
    """One file's record count and column metrics by field id (bounds decoded).

    ``None`` for a map means the file has no such metrics; a missing key means no metric for
    that column. Spec: Manifests, ``data_file`` fields 103 and 109-130, 137.
    """

    record_count: int
    value_counts: Mapping[int, int] | None = None
    null_value_counts: Mapping[int, int] | None = None
    nan_value_counts: Mapping[int, int] | None = None
    lower_bounds: Mapping[int, Any] | None = None
    upper_bounds: Mapping[int, Any] | None = None

    @classmethod
    def from_serialized(
        cls,
        schema: Schema | StructType,
        record_count: int,
        value_counts: Mapping[int, int] | None = None,
        null_value_counts: Mapping[int, int] | None = None,
        nan_value_counts: Mapping[int, int] | None = None,
        lower_bounds: Mapping[int, bytes] | None = None,
        upper_bounds: Mapping[int, bytes] | None = None,
        field_ids: Iterable[int] | None = None,
    ) -> FileMetrics:
        """Metrics as stored in a manifest, with bounds as Appendix D bytes."""
        ids = None if field_ids is None else list(field_ids)
        return cls(
            record_count,
            value_counts,
            null_value_counts,
            nan_value_counts,
            decode_bounds(schema, lower_bounds, ids),
            decode_bounds(schema, upper_bounds, ids),
        )


# --------------------------------------------------------------------------- scalar


def is_nan_value(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


class _Stats:
    """Answers about one column of one file, from its metrics."""

    __slots__ = ("m",)

    def __init__(self, m: FileMetrics) -> None:
        self.m = m

    @staticmethod
    def _get(counts: Mapping[int, int] | None, fid: int) -> int | None:
        if counts is None:
            return None
        return counts.get(fid)

    def value_count(self, fid: int) -> int | None:
        return self._get(self.m.value_counts, fid)

    def null_count(self, fid: int) -> int | None:
        return self._get(self.m.null_value_counts, fid)

    def nan_count(self, fid: int) -> int | None:
        return self._get(self.m.nan_value_counts, fid)

    def nulls_only(self, fid: int) -> bool:
        vc, nc = self.value_count(fid), self.null_count(fid)
        return vc is not None and nc is not None and vc - nc == 0

    def nans_only(self, fid: int) -> bool:
        vc, nan = self.value_count(fid), self.nan_count(fid)
        return vc is not None and nan is not None and nan == vc

    def no_nulls(self, fid: int) -> bool:
        return self.null_count(fid) == 0

    def no_nans(self, fid: int) -> bool:
        return self.nan_count(fid) == 0

    def lower(self, fid: int) -> Any:
        b = self.m.lower_bounds
        return None if b is None else b.get(fid)

    def upper(self, fid: int) -> Any:
        b = self.m.upper_bounds
        return None if b is None else b.get(fid)


def _is_float(pred: BoundPredicate) -> bool:
    return isinstance(pred.term.field_type, (FloatType, DoubleType))


def inclusive_match(expr: Expression, metrics: FileMetrics) -> bool:
    """False when the file's metrics prove no row matches the bound ``expr`` (skip the file)."""
    return _match(expr, metrics, strict=False)


def strict_match(expr: Expression, metrics: FileMetrics) -> bool:
    """True when the file's metrics prove every row matches the bound ``expr``."""
    return _match(expr, metrics, strict=True)


def _match(expr: Expression, metrics: FileMetrics, strict: bool) -> bool:
    bound = prepare_bound(expr)
    if metrics.record_count <= 0:
        # an empty file: no row may match (inclusive), every row matches (strict); an unknown
        # (negative) count, as of imported files, proves neither
        return strict == (metrics.record_count == 0)
    s = _Stats(metrics)
    test = _strict_predicate if strict else _inclusive_predicate
    return walk_predicates(bound, lambda pred: test(pred, s))


def walk_predicates(expr: Expression, test: Callable[[BoundPredicate], bool]) -> bool:
    """Evaluate the and/or tree of a prepared bound expression with ``test`` on each predicate."""
    if isinstance(expr, AlwaysTrue):
        return True
    if isinstance(expr, AlwaysFalse):
        return False
    if isinstance(expr, And):
        return walk_predicates(expr.left, test) and walk_predicates(expr.right, test)
    if isinstance(expr, Or):
        return walk_predicates(expr.left, test) or walk_predicates(expr.right, test)
    assert isinstance(expr, BoundPredicate)
    return test(expr)


def bounds_unordered(pred: BoundPredicate) -> bool:
    """Whether ``pred`` compares a UUID against bounds, whose order writers disagree on.

    The spec leaves UUID ordering open: Iceberg Java 1.10 keeps min/max by ``UUID.compareTo``
    (signed 64-bit halves) while icenb, Parquet statistics and PyIceberg order the 16 bytes
    unsigned. A bound written in one order cannot prune in the other, so UUID bounds never
    prune (and never prove a match); null and NaN checks do not depend on order.
    """
    return isinstance(pred.term.field_type, UUIDType) and pred.op not in _ORDER_FREE


_ORDER_FREE = frozenset({Operation.IS_NULL, Operation.NOT_NULL, Operation.IS_NAN,
                         Operation.NOT_NAN, Operation.NOT_EQ, Operation.NOT_IN})


def _inclusive_predicate(pred: BoundPredicate, s: _Stats) -> bool:
    fid = pred.term.field_id
    op = pred.op
    if bounds_unordered(pred):
        return True
    if op == Operation.IS_NULL:
        return s.null_count(fid) != 0
    if op == Operation.NOT_NULL:
        return not s.nulls_only(fid)
    if op == Operation.IS_NAN:
        return not (s.nulls_only(fid) or s.no_nans(fid))
    if op == Operation.NOT_NAN:
        return not s.nans_only(fid)
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        return True  # bounds are not necessarily values of the column
    if op == Operation.NOT_STARTS_WITH:
        return _inclusive_not_starts_with(pred, s)
    if s.nulls_only(fid) or (op != Operation.STARTS_WITH and s.nans_only(fid)):
        return False
    lower, upper = s.lower(fid), s.upper(fid)
    if isinstance(pred, BoundSetPredicate):  # IN
        if len(pred.literals) > IN_PREDICATE_LIMIT or lower is None or is_nan_value(lower):
            return True
        candidates = [v for v in pred.literals if lower <= v]
        if not candidates:
            return False
        if upper is None:
            return True
        return any(v <= upper for v in candidates)
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    if op == Operation.LT:
        return lower is None or is_nan_value(lower) or lower < lit
    if op == Operation.LT_EQ:
        return lower is None or is_nan_value(lower) or lower <= lit
    if op == Operation.GT:
        return upper is None or is_nan_value(upper) or upper > lit
    if op == Operation.GT_EQ:
        return upper is None or is_nan_value(upper) or upper >= lit
    if op == Operation.EQ:
        if lower is not None and not is_nan_value(lower) and lower > lit:
            return False
        return upper is None or is_nan_value(upper) or upper >= lit
    if op == Operation.STARTS_WITH:
        n = len(lit)
        if lower is not None and lower[:n] > lit:
            return False
        return upper is None or upper[:n] >= lit
    raise ValidationError("unsupported predicate", value=str(pred))  # pragma: no cover


def _inclusive_not_starts_with(pred: BoundPredicate, s: _Stats) -> bool:
    fid = pred.term.field_id
    if s.null_count(fid) != 0:  # as the reference implementation: nulls give up
        return True
    assert isinstance(pred, BoundLiteralPredicate)
    prefix: str = pred.literal
    lower, upper = s.lower(fid), s.upper(fid)
    if lower is None or upper is None:
        return True
    # no row matches only if every value starts with the prefix: both bounds do
    return not (lower.startswith(prefix) and upper.startswith(prefix))


def _strict_predicate(pred: BoundPredicate, s: _Stats) -> bool:
    fid = pred.term.field_id
    op = pred.op
    if bounds_unordered(pred):
        return False
    may_null = pred.term.nullable and not s.no_nulls(fid)
    may_nan = _is_float(pred) and not s.no_nans(fid)
    if op == Operation.IS_NULL:
        return s.nulls_only(fid)
    if op == Operation.NOT_NULL:
        return not may_null
    if op == Operation.IS_NAN:
        return s.nans_only(fid)
    if op == Operation.NOT_NAN:
        return not may_nan or s.nulls_only(fid)
    if may_null:  # a null value matches no comparison
        return False
    lower, upper = s.lower(fid), s.upper(fid)
    if op == Operation.NOT_EQ or op == Operation.NOT_IN:
        if s.nans_only(fid):
            return True  # NaN differs from every literal
        if lower is not None and is_nan_value(lower):
            return False
        literals = (
            [pred.literal] if isinstance(pred, BoundLiteralPredicate)
            else list(pred.literals) if isinstance(pred, BoundSetPredicate) else []
        )
        if lower is not None:
            literals = [v for v in literals if lower <= v]
            if not literals:
                return True
        if upper is not None and not is_nan_value(upper):
            literals = [v for v in literals if v <= upper]
            if not literals:
                return True
        return False
    if op == Operation.NOT_STARTS_WITH:
        return False
    if op == Operation.STARTS_WITH:
        # every value lies between the bounds; if both start with the prefix, so do they all
        assert isinstance(pred, BoundLiteralPredicate)
        return (
            lower is not None and upper is not None
            and lower.startswith(pred.literal) and upper.startswith(pred.literal)
        )
    if may_nan:  # NaN fails every ordering and equality comparison
        return False
    if isinstance(pred, BoundSetPredicate):  # IN
        return (
            lower is not None and upper is not None and not is_nan_value(lower)
            and lower == upper and lower in pred.literals
        )
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    if op == Operation.LT:
        return upper is not None and not is_nan_value(upper) and upper < lit
    if op == Operation.LT_EQ:
        return upper is not None and not is_nan_value(upper) and upper <= lit
    if op == Operation.GT:
        return lower is not None and not is_nan_value(lower) and lower > lit
    if op == Operation.GT_EQ:
        return lower is not None and not is_nan_value(lower) and lower >= lit
    if op == Operation.EQ:
        return lower is not None and upper is not None and lower == lit and upper == lit
    raise ValidationError("unsupported predicate", value=str(pred))  # pragma: no cover


class _MetricsEvaluator:
    """Binds a row filter once; ``_strict`` picks the question asked of each file."""

    _strict: ClassVar[bool]

    def __init__(self, schema: Schema, expr: Expression, case_sensitive: bool = True) -> None:
        self.schema = schema
        self.expr = prepare_bound(bind(expr, schema, case_sensitive))
        self.field_ids = referenced_field_ids(self.expr)

    def eval(self, metrics: FileMetrics) -> bool:
        return _match(self.expr, metrics, self._strict)

    def eval_arrow(self, files: pa.Table | pa.RecordBatch) -> pa.Array:
        return _arrow_mask(self.expr, files, self._strict)


class InclusiveMetricsEvaluator(_MetricsEvaluator):
    """Binds a row filter once; says per file whether rows may match (scalar or Arrow)."""

    _strict = False


class StrictMetricsEvaluator(_MetricsEvaluator):
    """Binds a row filter once; says per file whether all rows must match (scalar or Arrow)."""

    _strict = True


# --------------------------------------------------------------------------- vectorized


class MetricColumns:
    """Column access for the vectorized evaluators; absent columns read as all-null."""

    def __init__(self, files: pa.Table | pa.RecordBatch) -> None:
        if isinstance(files, pa.Table):
            files = files.combine_chunks()
            self.columns = {
                name: (col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks))
                if col.num_chunks else pa.array([], type=col.type)
                for name, col in zip(files.column_names, files.columns, strict=True)
            }
        else:
            self.columns = dict(zip(files.schema.names, files.columns, strict=True))
        self.n = files.num_rows

    def get(self, name: str) -> pa.Array | None:
        col = self.columns.get(name)
        return None if col is None else normalize_column(col)

    def const(self, value: bool) -> pa.Array:
        return pa.array(np.full(self.n, value, dtype=bool), type=pa.bool_())

    def equals(self, name: str, value: Any) -> pa.Array:
        """True where column ``name`` is known to equal ``value`` (a scalar or another column)."""
        col = self.get(name)
        if col is None or value is None:
            return self.const(False)
        return pc.fill_null(pc.equal(col, value), False)

    def nulls_only(self, fid: int) -> pa.Array:
        return self.equals(f"value_count.{fid}", self.get(f"null_value_count.{fid}"))

    def nans_only(self, fid: int) -> pa.Array:
        return self.equals(f"value_count.{fid}", self.get(f"nan_value_count.{fid}"))

    def no_nulls(self, fid: int) -> pa.Array:
        return self.equals(f"null_value_count.{fid}", 0)

    def no_nans(self, fid: int) -> pa.Array:
        return self.equals(f"nan_value_count.{fid}", 0)

    def bound(self, kind: str, fid: int) -> pa.Array | None:
        return self.get(f"{kind}_bound.{fid}")


def _not(a: Any) -> Any:
    return pc.invert(a)


def and_masks(*arrays: Any) -> Any:
    out = arrays[0]
    for a in arrays[1:]:
        out = pc.and_(out, a)
    return out


def or_masks(*arrays: Any) -> Any:
    out = arrays[0]
    for a in arrays[1:]:
        out = pc.or_(out, a)
    return out


def _known(a: Any) -> Any:
    """True where the comparison result is known and true (nulls: False)."""
    return pc.fill_null(a, False)


def _bound_is_nan(bound: pa.Array) -> Any:
    if pa.types.is_floating(bound.type):
        return pc.fill_null(pc.is_nan(bound), False)
    return pa.array(np.zeros(len(bound), dtype=bool), type=pa.bool_())


def _usable(bound: pa.Array) -> Any:
    """A bound that is present and not NaN."""
    return pc.and_(pc.is_valid(bound), pc.invert(_bound_is_nan(bound)))


_CMP: dict[str, Callable[[Any, Any], Any]] = {
    "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal, "=": pc.equal,
}


def compare_bound(bound: pa.Array, op: str, value: Any) -> Any:
    """``bound op value``, False where the bound is missing or NaN."""
    scalar = arrow_literal(value, bound.type)
    return pc.and_(_known(_CMP[op](bound, scalar)), _usable(bound))


def compare_bound_prefix(bound: pa.Array, op: str, prefix: str) -> Any:
    if not (pa.types.is_string(bound.type) or pa.types.is_large_string(bound.type)):
        bound = bound.cast(pa.large_string())
    sliced = pc.utf8_slice_codeunits(bound, 0, len(prefix))
    return _known(_CMP[op](sliced, pa.scalar(prefix, type=sliced.type)))


def outside_bounds(c: MetricColumns, lower: pa.Array, upper: pa.Array | None,
                   literals: Iterable[Any]) -> Any:
    """True where the lower bound is usable and no literal lies in [lower, upper].

    A missing or NaN upper bound is open.
    """
    inside = c.const(False)
    for v in literals:
        above_lower = _known(pc.less_equal(lower, arrow_literal(v, lower.type)))
        below_upper = (
            c.const(True) if upper is None
            else or_masks(_not(_usable(upper)),
                     _known(pc.less_equal(arrow_literal(v, upper.type), upper)))
        )
        inside = or_masks(inside, and_masks(above_lower, below_upper))
    return and_masks(_usable(lower), _not(inside))


def evaluate_inclusive_arrow(expr: Expression, files: pa.Table | pa.RecordBatch) -> pa.Array:
    """Mask (never null) of the files that may contain rows matching the bound ``expr``.

    ``files`` has one row per file with the columns described in the module docstring.
    """
    return _arrow_mask(expr, files, strict=False)


def evaluate_strict_arrow(expr: Expression, files: pa.Table | pa.RecordBatch) -> pa.Array:
    """Mask (never null) of the files whose rows all match the bound ``expr``."""
    return _arrow_mask(expr, files, strict=True)


def _arrow_mask(expr: Expression, files: pa.Table | pa.RecordBatch, strict: bool) -> pa.Array:
    bound = prepare_bound(expr)
    c = MetricColumns(files)
    if strict:
        result = walk_masks(bound, c, lambda pred: _strict_must(pred, c))
    else:
        result = walk_masks(bound, c, lambda pred: _not(_inclusive_cannot(pred, c)))
    rc = c.get("record_count")
    if rc is None:
        return result
    # as in _match: the record count alone decides for empty files and unknown counts
    empty, unknown = _known(pc.equal(rc, 0)), _known(pc.less(rc, 0))
    yes, no = (empty, unknown) if strict else (unknown, empty)
    return and_masks(or_masks(result, yes), _not(no))


def walk_masks(expr: Expression, c: MetricColumns, test: Callable[[BoundPredicate], Any]) -> Any:
    """Evaluate the and/or tree of a prepared bound expression with a mask per predicate."""
    if isinstance(expr, AlwaysTrue):
        return c.const(True)
    if isinstance(expr, AlwaysFalse):
        return c.const(False)
    if isinstance(expr, And):
        return pc.and_(walk_masks(expr.left, c, test), walk_masks(expr.right, c, test))
    if isinstance(expr, Or):
        return pc.or_(walk_masks(expr.left, c, test), walk_masks(expr.right, c, test))
    assert isinstance(expr, BoundPredicate)
    return test(expr)


def _inclusive_cannot(pred: BoundPredicate, c: MetricColumns) -> Any:
    """True for files whose metrics prove that no row matches ``pred``."""
    fid = pred.term.field_id
    op = pred.op
    if bounds_unordered(pred):
        return c.const(False)
    if op == Operation.IS_NULL:
        return c.no_nulls(fid)
    if op == Operation.NOT_NULL:
        return c.nulls_only(fid)
    if op == Operation.IS_NAN:
        return or_masks(c.nulls_only(fid), c.no_nans(fid))
    if op == Operation.NOT_NAN:
        return c.nans_only(fid)
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        return c.const(False)
    lower, upper = c.bound("lower", fid), c.bound("upper", fid)
    if op == Operation.NOT_STARTS_WITH:
        if lower is None or upper is None:
            return c.const(False)
        prefix = pred.literal if isinstance(pred, BoundLiteralPredicate) else ""
        return and_masks(c.no_nulls(fid), compare_bound_prefix(lower, "=", prefix),
                    compare_bound_prefix(upper, "=", prefix))
    empty = c.nulls_only(fid)
    if op != Operation.STARTS_WITH:
        empty = or_masks(empty, c.nans_only(fid))
    if isinstance(pred, BoundSetPredicate):  # IN
        if len(pred.literals) > IN_PREDICATE_LIMIT or lower is None:
            return empty
        return or_masks(empty, outside_bounds(c, lower, upper, pred.literals))
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    if op == Operation.LT:
        return or_masks(empty, compare_bound(lower, ">=", lit)) if lower is not None else empty
    if op == Operation.LT_EQ:
        return or_masks(empty, compare_bound(lower, ">", lit)) if lower is not None else empty
    if op == Operation.GT:
        return or_masks(empty, compare_bound(upper, "<=", lit)) if upper is not None else empty
    if op == Operation.GT_EQ:
        return or_masks(empty, compare_bound(upper, "<", lit)) if upper is not None else empty
    if op == Operation.EQ:
        out = empty
        if lower is not None:
            out = or_masks(out, compare_bound(lower, ">", lit))
        if upper is not None:
            out = or_masks(out, compare_bound(upper, "<", lit))
        return out
    if op == Operation.STARTS_WITH:
        out = empty
        if lower is not None:
            out = or_masks(out, compare_bound_prefix(lower, ">", lit))
        if upper is not None:
            out = or_masks(out, compare_bound_prefix(upper, "<", lit))
        return out
    raise ValidationError("unsupported predicate", value=str(pred))  # pragma: no cover


def _strict_must(pred: BoundPredicate, c: MetricColumns) -> Any:
    fid = pred.term.field_id
    op = pred.op
    if bounds_unordered(pred):
        return c.const(False)
    no_nulls = c.no_nulls(fid) if pred.term.nullable else c.const(True)
    no_nans = c.no_nans(fid) if _is_float(pred) else c.const(True)
    if op == Operation.IS_NULL:
        return c.nulls_only(fid)
    if op == Operation.NOT_NULL:
        return no_nulls
    if op == Operation.IS_NAN:
        return c.nans_only(fid)
    if op == Operation.NOT_NAN:
        return or_masks(no_nans, c.nulls_only(fid))
    lower, upper = c.bound("lower", fid), c.bound("upper", fid)
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        literals = (
            [pred.literal] if isinstance(pred, BoundLiteralPredicate)
            else sorted(pred.literals) if isinstance(pred, BoundSetPredicate) else []
        )
        # every literal is below the lower bound or above the upper bound
        outside = c.const(True)
        for v in literals:
            below = compare_bound(lower, ">", v) if lower is not None else c.const(False)
            above = compare_bound(upper, "<", v) if upper is not None else c.const(False)
            outside = and_masks(outside, or_masks(below, above))
        if lower is not None:
            outside = and_masks(outside, _not(_bound_is_nan(lower)))
        return and_masks(no_nulls, or_masks(c.nans_only(fid), outside))
    if op == Operation.NOT_STARTS_WITH:
        return c.const(False)
    if op == Operation.STARTS_WITH:
        if lower is None or upper is None or not isinstance(pred, BoundLiteralPredicate):
            return c.const(False)
        prefix: str = pred.literal
        return and_masks(no_nulls, compare_bound_prefix(lower, "=", prefix),
                         compare_bound_prefix(upper, "=", prefix))
    base = and_masks(no_nulls, no_nans)
    if isinstance(pred, BoundSetPredicate):  # IN
        if lower is None or upper is None:
            return c.const(False)
        same = _known(pc.equal(lower, upper))
        member = _known(pc.is_in(lower, value_set=_literal_array(pred.literals, lower.type)))
        return and_masks(base, same, member, _usable(lower))
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    if op == Operation.LT:
        return (and_masks(base, compare_bound(upper, "<", lit)) if upper is not None
                else c.const(False))
    if op == Operation.LT_EQ:
        return (and_masks(base, compare_bound(upper, "<=", lit)) if upper is not None
                else c.const(False))
    if op == Operation.GT:
        return (and_masks(base, compare_bound(lower, ">", lit)) if lower is not None
                else c.const(False))
    if op == Operation.GT_EQ:
        return (and_masks(base, compare_bound(lower, ">=", lit)) if lower is not None
                else c.const(False))
    if op == Operation.EQ:
        if lower is None or upper is None:
            return c.const(False)
        return and_masks(base, compare_bound(lower, "=", lit), compare_bound(upper, "=", lit))
    raise ValidationError("unsupported predicate", value=str(pred))  # pragma: no cover


def _literal_array(values: Iterable[Any], arrow_type: pa.DataType) -> pa.Array:
    from icenb.spec.evaluators import arrow_literal_set

    return arrow_literal_set(list(values), arrow_type)


# --------------------------------------------------------------------------- building tables


def arrow_type_for(t: IcebergType) -> pa.DataType:
    """The Arrow type used for decoded bounds of an Iceberg primitive type."""
    if isinstance(t, (UnknownType, GeometryType, GeographyType)) or not t.is_primitive:
        raise ValidationError("no Arrow bound type for this Iceberg type", value=str(t))
    try:
        return primitive_arrow_type(t, large=True)
    except UnsupportedFeature:
        raise ValidationError("no Arrow bound type for this Iceberg type", value=str(t)) from None


_FIXED_WIDTH: dict[type, tuple[int, str]] = {
    IntegerType: (4, "<i4"),
    DateType: (4, "<i4"),
    LongType: (8, "<i8"),
    TimeType: (8, "<i8"),
    TimestampType: (8, "<i8"),
    TimestamptzType: (8, "<i8"),
    TimestampNanoType: (8, "<i8"),
    TimestamptzNanoType: (8, "<i8"),
    FloatType: (4, "<f4"),
    DoubleType: (8, "<f8"),
}


def decode_bound_array(t: IcebergType, raw: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Decode an array of Appendix D bound bytes (nulls stay null) into typed Arrow values.

    Fixed-width types decode with numpy in one pass; values of another length (written before
    a type promotion) and other types go through :func:`icenb.spec.values.from_bytes`.
    Undecodable values become null (unknown bound).
    """
    if isinstance(raw, pa.ChunkedArray):
        raw = pa.concat_arrays(raw.chunks) if raw.num_chunks else pa.array([], pa.binary())
    target = arrow_type_for(t)
    if isinstance(t, StringType):
        try:
            return raw.cast(pa.large_binary()).cast(target)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass  # invalid UTF-8 somewhere: decode one by one below
    elif isinstance(t, (BinaryType, FixedType, UUIDType)):
        try:
            return raw.cast(target)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    spec = _FIXED_WIDTH.get(type(t))
    if spec is not None and len(raw) > 0:
        width, dtype = spec
        lengths = pc.binary_length(raw)
        valid = pc.is_valid(raw)
        if pc.all(pc.or_(pc.invert(valid), pc.equal(lengths, width))).as_py():
            filled = pc.fill_null(raw.cast(pa.binary()), b"\x00" * width)
            data = b"".join(filled.to_pylist()) if len(filled) < 64 else _concat(filled)
            numbers = np.frombuffer(data, dtype=dtype)
            mask = pc.invert(valid).to_numpy(zero_copy_only=False)
            storage = pa.array(numbers, mask=mask)
            return storage.cast(target) if storage.type != target else storage
    out: list[Any] = []
    for item in raw.to_pylist():
        if item is None:
            out.append(None)
            continue
        try:
            out.append(values.from_bytes(t, item))
        except IcebergError:
            out.append(None)
    if isinstance(t, UUIDType):
        out = [None if v is None else v.bytes for v in out]
    return pa.array(out, type=target)


def _concat(filled: pa.Array) -> bytes:
    """The value bytes of a binary array with no nulls, in order."""
    offsets = np.frombuffer(filled.buffers()[1], dtype=np.int32)[
        filled.offset: filled.offset + len(filled) + 1
    ]
    buf = filled.buffers()[2]
    return bytes(buf)[int(offsets[0]): int(offsets[-1])] if buf is not None else b""


def map_value_array(column: pa.Array | pa.ChunkedArray, key: int) -> pa.Array:
    """Per row, the value stored under ``key`` in a map column (null when absent).

    Accepts Arrow maps and lists of ``{key, value}`` structs (how Avro stores maps with int
    keys, e.g. ``value_counts``).
    """
    if isinstance(column, pa.ChunkedArray):
        parts = [map_value_array(chunk, key) for chunk in column.chunks]
        if not parts:
            return pa.array([], type=_map_value_type(column.type))
        return pa.concat_arrays(parts)
    t = column.type
    if pa.types.is_map(t):
        keys, items = column.keys, column.items
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        entries = column.values
        keys, items = entries.field(0), entries.field(1)
    else:
        raise ValidationError("expected a map column", value=str(t))
    offsets = np.asarray(column.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    n = len(column)
    index = np.full(n, -1, dtype=np.int64)
    if n and offsets[-1] > offsets[0]:
        start, stop = int(offsets[0]), int(offsets[-1])
        window = pc.fill_null(pc.equal(keys.slice(start, stop - start), key), False)
        hits = np.flatnonzero(window.to_numpy(zero_copy_only=False)) + start
        if hits.size:
            rows = np.searchsorted(offsets, hits, side="right") - 1
            index[rows] = hits
    take = pa.array(index, mask=index < 0)
    return items.take(take)


def _map_value_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_map(t):
        return t.item_type
    return t.value_type.field(1).type


def metrics_table(
    data_files: pa.Table | pa.RecordBatch,
    schema: Schema | StructType,
    field_ids: Iterable[int],
) -> pa.Table:
    """Columns for the vectorized evaluators from manifest ``data_file`` columns.

    ``data_files`` has ``record_count`` and any of ``value_counts``, ``null_value_counts``,
    ``nan_value_counts`` (maps of field id -> long) and ``lower_bounds``, ``upper_bounds``
    (maps of field id -> Appendix D bytes), named as in the spec (Manifests, ``data_file``).
    Only ``field_ids`` are extracted (use ``referenced_field_ids`` of the bound filter).
    """
    names = set(data_files.schema.names)

    def value(source: str, fid: int) -> pa.Array | None:
        if source not in names:
            return None
        return map_value_array(data_files.column(source), fid)

    rc = data_files.column("record_count") if "record_count" in names else None
    return metrics_table_of(rc, value, schema, field_ids, data_files.num_rows)


def metrics_table_of(
    record_count: pa.Array | pa.ChunkedArray | None,
    value: Callable[[str, int], pa.Array | None],
    schema: Schema | StructType,
    field_ids: Iterable[int],
    num_rows: int,
) -> pa.Table:
    """:func:`metrics_table` from the metric values of each field id, however they are stored:
    ``value(map_name, field_id)`` is that map's value per row (null: absent), or None when
    there is no such map."""
    target = schema if isinstance(schema, Schema) else Schema(*schema.fields)
    out: dict[str, pa.Array] = {}
    if record_count is not None:
        rc = record_count
        out["record_count"] = (
            pa.concat_arrays(rc.chunks) if isinstance(rc, pa.ChunkedArray) else rc
        ).cast(pa.int64())
    for fid in sorted(set(field_ids)):
        field = target.field_by_id(fid)
        for source, prefix in (
            ("value_counts", "value_count"),
            ("null_value_counts", "null_value_count"),
            ("nan_value_counts", "nan_value_count"),
        ):
            counts = value(source, fid)
            if counts is not None:
                out[f"{prefix}.{fid}"] = counts.cast(pa.int64())
        if field is None or not isinstance(field.field_type, PrimitiveType):
            continue
        try:
            arrow_type_for(field.field_type)
        except ValidationError:
            continue
        for source, prefix in (("lower_bounds", "lower_bound"), ("upper_bounds", "upper_bound")):
            raw = value(source, fid)
            if raw is not None:
                out[f"{prefix}.{fid}"] = decode_bound_array(field.field_type, raw)
    if not out:
        return pa.table({"record_count": pa.nulls(num_rows, pa.int64())})
    return pa.table(out)
