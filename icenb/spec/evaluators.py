"""Evaluate bound filters on one row or, vectorized, on Arrow record batches and tables.

Spec: "Scan Planning" (residual filters on rows; "Column Projection" for locating columns by
field id). Semantics are those of :mod:`icenb.spec.expressions`: a comparison with a null
value does not match, NaN compares as IEEE 754 says, ``is_nan(null)`` is false.

Rows are struct values as described in :mod:`icenb.spec.types`: a dict from field id to value,
nested structs as nested dicts (a flat dict of field id -> value works too). Values use the
internal representation (dates as ``int`` days, timestamps as ``int`` microseconds, ...).

Arrow columns are found, for each bound column, in this order:

1. ``column_names`` (field id -> Arrow column name), for the field or one of its enclosing
   structs (then the rest of the path is followed by field name);
2. Arrow field metadata ``PARQUET:field_id`` (what pyarrow reads from Parquet files);
3. the column's names in the bound schema (``loc.lat`` is ``struct_field("lat")`` of ``loc``).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import ValidationError
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundLiteralPredicate,
    BoundPredicate,
    BoundReference,
    BoundSetPredicate,
    BoundUnaryPredicate,
    Expression,
    Not,
    Operation,
    Or,
    UnboundPredicate,
    bind,
    rewrite_not,
)
from icenb.spec.schema import Schema
from icenb.spec.types import StructType

__all__ = [
    "Evaluator",
    "RowPredicate",
    "arrow_literal",
    "arrow_literal_set",
    "evaluate_arrow",
    "evaluate_row",
    "prepare_bound",
    "row_evaluator",
]

RowPredicate = Callable[[Mapping[int, Any] | None], bool]


def prepare_bound(expr: Expression) -> Expression:
    """Check that ``expr`` is bound and push any remaining NOT into its predicates (exactly)."""
    _check_bound(expr)
    return rewrite_not(expr) if _has_not(expr) else expr


def _check_bound(expr: Expression) -> None:
    if isinstance(expr, (And, Or)):
        _check_bound(expr.left)
        _check_bound(expr.right)
    elif isinstance(expr, Not):
        _check_bound(expr.child)
    elif isinstance(expr, UnboundPredicate):
        raise ValidationError(
            "the expression must be bound to a schema first (icenb.spec.expressions.bind)",
            value=str(expr),
        )
    elif not isinstance(expr, (BoundPredicate, AlwaysTrue, AlwaysFalse)):
        raise ValidationError("not an expression", value=expr)


def _has_not(expr: Expression) -> bool:
    if isinstance(expr, Not):
        return True
    if isinstance(expr, (And, Or)):
        return _has_not(expr.left) or _has_not(expr.right)
    return False


# --------------------------------------------------------------------------- rows


def row_evaluator(expr: Expression) -> RowPredicate:
    """Compile a bound expression into a function ``row -> bool`` (fast for many rows)."""
    return _compile(prepare_bound(expr))


def evaluate_row(expr: Expression, row: Mapping[int, Any] | None) -> bool:
    """Whether ``row`` matches the bound expression."""
    return row_evaluator(expr)(row)


def _always(result: bool) -> RowPredicate:
    def const(row: Mapping[int, Any] | None) -> bool:
        return result

    return const


def _compile(expr: Expression) -> RowPredicate:
    if isinstance(expr, AlwaysTrue):
        return _always(True)
    if isinstance(expr, AlwaysFalse):
        return _always(False)
    if isinstance(expr, And):
        left, right = _compile(expr.left), _compile(expr.right)
        return lambda row: left(row) and right(row)
    if isinstance(expr, Or):
        left, right = _compile(expr.left), _compile(expr.right)
        return lambda row: left(row) or right(row)
    assert isinstance(expr, BoundPredicate)
    return _compile_predicate(expr)


def _compile_predicate(pred: BoundPredicate) -> RowPredicate:
    get = pred.term.get
    op = pred.op
    if isinstance(pred, BoundUnaryPredicate):
        test = _UNARY_TESTS[op]
        return lambda row: test(get(row))
    if isinstance(pred, BoundSetPredicate):
        values = pred.literals
        if op == Operation.IN:
            return lambda row: _guard(pred, lambda v: v in values, get(row))
        return lambda row: _guard(pred, lambda v: v not in values, get(row))
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    compare = _LITERAL_TESTS[op]
    return lambda row: _guard(pred, lambda v: compare(v, lit), get(row))


def _guard(pred: BoundPredicate, test: Callable[[Any], bool], value: Any) -> bool:
    if value is None:
        return False  # unknown: a null value matches no comparison
    try:
        return bool(test(value))
    except (TypeError, AttributeError):
        raise ValidationError(
            f"row value does not have the type of column {pred.term.name!r} "
            f"({pred.term.field_type})",
            field=pred.term.name, value=value,
        ) from None


def _is_nan_value(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


_UNARY_TESTS: dict[Operation, Callable[[Any], bool]] = {
    Operation.IS_NULL: lambda v: v is None,
    Operation.NOT_NULL: lambda v: v is not None,
    Operation.IS_NAN: _is_nan_value,
    Operation.NOT_NAN: lambda v: not _is_nan_value(v),
}
_LITERAL_TESTS: dict[Operation, Callable[[Any, Any], bool]] = {
    Operation.LT: lambda v, lit: bool(v < lit),
    Operation.LT_EQ: lambda v, lit: bool(v <= lit),
    Operation.GT: lambda v, lit: bool(v > lit),
    Operation.GT_EQ: lambda v, lit: bool(v >= lit),
    Operation.EQ: lambda v, lit: bool(v == lit),
    Operation.NOT_EQ: lambda v, lit: bool(v != lit),
    Operation.STARTS_WITH: lambda v, lit: bool(v.startswith(lit)),
    Operation.NOT_STARTS_WITH: lambda v, lit: not v.startswith(lit),
}


class Evaluator:
    """Binds a filter once and evaluates it on rows or Arrow data."""

    def __init__(
        self, schema: Schema | StructType, expr: Expression, case_sensitive: bool = True
    ) -> None:
        self.expr = prepare_bound(bind(expr, schema, case_sensitive))
        self._row = _compile(self.expr)

    def eval(self, row: Mapping[int, Any] | None) -> bool:
        """Whether ``row`` (dict of field id -> value) matches."""
        return self._row(row)

    def eval_arrow(
        self, data: pa.RecordBatch | pa.Table, column_names: Mapping[int, str] | None = None
    ) -> pa.Array | pa.ChunkedArray:
        """A boolean mask (no nulls) of the matching rows of ``data``."""
        return evaluate_arrow(self.expr, data, column_names)


# --------------------------------------------------------------------------- Arrow


def evaluate_arrow(
    expr: Expression,
    data: pa.RecordBatch | pa.Table,
    column_names: Mapping[int, str] | None = None,
) -> pa.Array | pa.ChunkedArray:
    """Boolean mask (never null) of the rows of ``data`` matching the bound ``expr``.

    A ``RecordBatch`` gives a ``BooleanArray``; a ``Table`` gives a ``ChunkedArray`` aligned
    with the table's batches (usable with ``table.filter(mask)``).
    """
    bound = prepare_bound(expr)
    if isinstance(data, pa.Table):
        chunks = [_eval_batch(bound, b, column_names) for b in data.to_batches()]
        return pa.chunked_array(chunks, type=pa.bool_())
    if isinstance(data, pa.RecordBatch):
        return _eval_batch(bound, data, column_names)
    raise ValidationError("expected a pyarrow RecordBatch or Table", value=type(data).__name__)


def _constant(value: bool, length: int) -> pa.Array:
    return pa.array(np.full(length, value, dtype=bool), type=pa.bool_())


def _eval_batch(
    expr: Expression, batch: pa.RecordBatch, column_names: Mapping[int, str] | None
) -> pa.Array:
    cache: dict[int, pa.Array] = {}

    def visit(e: Expression) -> pa.Array:
        if isinstance(e, AlwaysTrue):
            return _constant(True, batch.num_rows)
        if isinstance(e, AlwaysFalse):
            return _constant(False, batch.num_rows)
        if isinstance(e, And):
            return pc.and_(visit(e.left), visit(e.right))
        if isinstance(e, Or):
            return pc.or_(visit(e.left), visit(e.right))
        assert isinstance(e, BoundPredicate)
        fid = e.term.field_id
        column = cache.get(fid)
        if column is None:
            column = normalize_column(find_column(batch, e.term, column_names))
            cache[fid] = column
        return predicate_mask(e, column)

    return visit(expr)


def find_column(
    data: pa.RecordBatch | pa.Table, ref: BoundReference, column_names: Mapping[int, str] | None
) -> pa.Array | pa.ChunkedArray:
    """The Arrow column holding ``ref`` (see the module docstring for the lookup order)."""
    if column_names:
        for depth in range(len(ref.path) - 1, -1, -1):
            name = column_names.get(ref.path[depth])
            if name is None:
                continue
            if name not in data.schema.names:
                raise ValidationError(
                    f"column {name!r} given for field id {ref.path[depth]} is not in the data",
                    field=ref.name, value=name,
                )
            return _descend(data.column(name), ref.names[depth + 1:], ref)
    by_id = _find_by_field_id(data, ref)
    if by_id is not None:
        return by_id
    if ref.names[0] not in data.schema.names:
        raise ValidationError(
            f"column {ref.name!r} (field id {ref.field_id}) is not in the data; columns are "
            + ", ".join(data.schema.names),
            field=ref.name,
        )
    return _descend(data.column(ref.names[0]), ref.names[1:], ref)


def _descend(
    column: pa.Array | pa.ChunkedArray, names: tuple[str, ...], ref: BoundReference
) -> pa.Array | pa.ChunkedArray:
    for name in names:
        if not pa.types.is_struct(column.type):
            raise ValidationError("expected a struct column on the way to the field",
                                  field=ref.name, value=str(column.type))
        if column.type.get_field_index(name) < 0:
            raise ValidationError(f"struct column has no child {name!r}", field=ref.name,
                                  value=str(column.type))
        column = pc.struct_field(column, name)
    return column


def _field_id_of(field: pa.Field) -> int | None:
    meta = field.metadata
    if not meta:
        return None
    raw = meta.get(b"PARQUET:field_id") or meta.get(b"field_id") or meta.get(b"field-id")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def _find_by_field_id(
    data: pa.RecordBatch | pa.Table, ref: BoundReference
) -> pa.Array | pa.ChunkedArray | None:
    schema = data.schema
    index = next(
        (i for i, f in enumerate(schema) if _field_id_of(f) == ref.path[0]), None
    )
    if index is None:
        return None
    column = data.column(index)
    for fid in ref.path[1:]:
        t = column.type
        if not pa.types.is_struct(t):
            return None
        child = next((j for j in range(t.num_fields) if _field_id_of(t.field(j)) == fid), None)
        if child is None:
            return None
        column = pc.struct_field(column, [child])
    return column


def normalize_column(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Decode dictionaries and unwrap extension types (e.g. ``arrow.uuid``) for comparisons."""
    t = column.type
    if isinstance(t, pa.ExtensionType):
        if isinstance(column, pa.ChunkedArray):
            return pa.chunked_array([c.storage for c in column.chunks], type=t.storage_type)
        return column.storage
    if pa.types.is_dictionary(t):
        return column.cast(t.value_type)
    return column


def _to_arrow_value(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return value.bytes
    return value


def arrow_literal(value: Any, arrow_type: pa.DataType) -> pa.Scalar:
    """An Arrow scalar of ``arrow_type`` for an internal literal value."""
    v = _to_arrow_value(value)
    try:
        return pa.scalar(v, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return pa.scalar(v)


def arrow_literal_set(values: frozenset[Any] | list[Any], arrow_type: pa.DataType) -> pa.Array:
    """An Arrow array of ``arrow_type`` holding internal literal values (for ``is_in``)."""
    items = [_to_arrow_value(v) for v in values]
    try:
        return pa.array(items, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return pa.array(items)


def predicate_mask(pred: BoundPredicate, column: pa.Array | pa.ChunkedArray) -> Any:
    """Boolean mask (no nulls) of ``pred`` applied to ``column`` (already located)."""
    op = pred.op
    if op == Operation.IS_NULL:
        return pc.is_null(column)
    if op == Operation.NOT_NULL:
        return pc.is_valid(column)
    if op == Operation.IS_NAN:
        return pc.fill_null(pc.is_nan(column), False)
    if op == Operation.NOT_NAN:
        return pc.fill_null(pc.invert(pc.is_nan(column)), True)
    if isinstance(pred, BoundSetPredicate):
        literals = list(pred.literals)
        if pa.types.is_floating(column.type):
            # is_in matches floats by bits; IEEE equality has -0.0 = 0.0
            zero = pa.scalar(0.0, type=column.type)
            column = pc.add(column, zero)
            literals = [v + 0.0 for v in literals]
        value_set = arrow_literal_set(literals, column.type)
        inside = pc.is_in(column, value_set=value_set)
        if op == Operation.IN:
            return inside
        return pc.and_(pc.invert(inside), pc.is_valid(column))
    assert isinstance(pred, BoundLiteralPredicate)
    if op == Operation.STARTS_WITH:
        return pc.fill_null(pc.starts_with(column, pattern=pred.literal), False)
    if op == Operation.NOT_STARTS_WITH:
        return pc.fill_null(pc.invert(pc.starts_with(column, pattern=pred.literal)), False)
    scalar = arrow_literal(pred.literal, column.type)
    return pc.fill_null(_COMPARE[op](column, scalar), False)


_COMPARE: dict[Operation, Callable[[Any, Any], Any]] = {
    Operation.LT: pc.less,
    Operation.LT_EQ: pc.less_equal,
    Operation.GT: pc.greater,
    Operation.GT_EQ: pc.greater_equal,
    Operation.EQ: pc.equal,
    Operation.NOT_EQ: pc.not_equal,
}
