"""Project row filters to partition filters, and compute per-partition residual filters.

Spec: "Scan Planning": an *inclusive* projection matches the partition of every row the row
filter matches (used to select files); a *strict* projection matches a partition only if every
row in it matches the row filter (note 1; used for residuals). Spec: "Partition Transforms"
and "Truncate Transform Details" for what each transform keeps of a value.

Per transform (``b`` is the literal, ``f`` the transform):

=================  ==========================================  =================================
transform          inclusive                                   strict
=================  ==========================================  =================================
identity           the same predicate                          the same predicate
bucket[N]          ``=``, ``in``                               ``!=``, ``not in``
truncate[W]        ``< b`` -> ``<= f(b-1)`` (numbers) or       ``< b`` -> ``< f(b)``,
                   ``<= f(b)`` (strings, binary); ``=``,       ``<= b`` -> ``< f(b+1)`` (numbers)
                   ``in``, ``starts_with``                     ``!=``, ``not in``, starts_with
year/month/        as truncate of the int value, then the      as truncate, then the reference
day/hour           reference implementation's correction for   implementation's correction for
                   pre-1970 values written by old versions     pre-1970 values
void, unknown,     always true                                 always false
multi-argument
=================  ==========================================  =================================

``is null`` / ``is not null`` project unchanged through every transform except void (all
transforms map null to null and only null to null). The correction for old writers: Iceberg
0.10 and earlier stored pre-epoch time partitions one too large, so inclusive projections also
accept ``value + 1`` and strict ones exclude it (as Java's ``ProjectionUtil``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from icenb.errors import IcebergError, ValidationError
from icenb.spec.evaluators import prepare_bound, row_evaluator
from icenb.spec.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundLiteralPredicate,
    BoundPredicate,
    BoundReference,
    BoundSetPredicate,
    BoundUnaryPredicate,
    Expression,
    Operation,
    Or,
    and_,
    bind,
    or_,
    unbind,
)
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from icenb.spec.types import (
    BinaryType,
    DecimalType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

__all__ = [
    "ResidualEvaluator",
    "partition_reference",
    "project_inclusive",
    "project_inclusive_bound",
    "project_predicate",
    "project_strict",
    "project_strict_bound",
    "residual",
]

_TIME_TRANSFORMS = (YearTransform, MonthTransform, DayTransform, HourTransform)


# --------------------------------------------------------------------------- public API


def project_inclusive(
    spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
) -> Expression:
    """Partition filter (unbound, by partition field name) matching every matching row's partition.

    Spec: Scan Planning, inclusive projection.
    """
    return unbind(project_inclusive_bound(spec, schema, expr, case_sensitive))


def project_strict(
    spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
) -> Expression:
    """Partition filter (unbound) matching only partitions whose rows all match ``expr``.

    Spec: Scan Planning, note 1 (strict projection).
    """
    return unbind(project_strict_bound(spec, schema, expr, case_sensitive))


def project_inclusive_bound(
    spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
) -> Expression:
    """Inclusive projection bound to ``spec.partition_type(schema)`` (ready to evaluate)."""
    return _Projector(spec, schema).project(_bound_row_filter(schema, expr, case_sensitive),
                                            strict=False)


def project_strict_bound(
    spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
) -> Expression:
    """Strict projection bound to ``spec.partition_type(schema)`` (ready to evaluate)."""
    return _Projector(spec, schema).project(_bound_row_filter(schema, expr, case_sensitive),
                                            strict=True)


def residual(
    spec: PartitionSpec,
    schema: Schema,
    expr: Expression,
    partition: Mapping[int, Any] | Sequence[Any],
    case_sensitive: bool = True,
) -> Expression:
    """The part of ``expr`` still to be checked on the rows of one partition (bound to schema).

    ``partition`` is the partition tuple: a dict of partition field id -> value, or values in
    the order of ``spec.fields``. Spec: Scan Planning, note 1 (residual predicates).
    """
    return ResidualEvaluator(spec, schema, expr, case_sensitive).residual_for(partition)


class ResidualEvaluator:
    """Computes residual filters for many partitions of one spec (as Java's ResidualEvaluator).

    For each predicate: if a strict projection matches the partition, every row there matches
    (the predicate becomes ``true``); if an inclusive projection does not match, no row does
    (``false``); otherwise the predicate stays.
    """

    def __init__(
        self, spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
    ) -> None:
        self.spec = spec
        self.schema = schema
        self.expr = _bound_row_filter(schema, expr, case_sensitive)
        projector = _Projector(spec, schema)
        self._tests: dict[int, tuple[list[Callable[[Any], bool]], list[Callable[[Any], bool]]]]
        self._tests = {}
        self._preds: dict[int, BoundPredicate] = {}
        for pred in _bound_predicates(self.expr):
            stricts = [row_evaluator(p) for p in projector.each(pred, strict=True)]
            inclusives = [row_evaluator(p) for p in projector.each(pred, strict=False)]
            self._tests[id(pred)] = (stricts, inclusives)
            self._preds[id(pred)] = pred
        self._cache: dict[tuple[Any, ...], Expression] = {}

    def residual_for(self, partition: Mapping[int, Any] | Sequence[Any]) -> Expression:
        """The residual filter for one partition tuple (bound to the table schema)."""
        values = _partition_dict(self.spec, partition)
        try:
            key: tuple[Any, ...] | None = tuple(values.get(f.field_id) for f in self.spec.fields)
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._cache:
            return self._cache[key]
        result = self._visit(self.expr, values)
        if key is not None and len(self._cache) < 100_000:
            self._cache[key] = result
        return result

    def _visit(self, expr: Expression, values: Mapping[int, Any]) -> Expression:
        if isinstance(expr, And):
            return and_(self._visit(expr.left, values), self._visit(expr.right, values))
        if isinstance(expr, Or):
            return or_(self._visit(expr.left, values), self._visit(expr.right, values))
        if isinstance(expr, BoundPredicate):
            stricts, inclusives = self._tests[id(expr)]
            if any(test(values) for test in stricts):
                return ALWAYS_TRUE
            if not all(test(values) for test in inclusives):
                return ALWAYS_FALSE
            return expr
        return expr


def _partition_dict(
    spec: PartitionSpec, partition: Mapping[int, Any] | Sequence[Any]
) -> Mapping[int, Any]:
    if isinstance(partition, Mapping):
        return partition
    values = list(partition)
    if len(values) != len(spec.fields):
        raise ValidationError(
            f"partition tuple has {len(values)} values; spec {spec.spec_id} has "
            f"{len(spec.fields)} fields", field="partition", value=values,
        )
    return {f.field_id: v for f, v in zip(spec.fields, values, strict=True)}


def _bound_row_filter(schema: Schema, expr: Expression, case_sensitive: bool) -> Expression:
    return prepare_bound(bind(expr, schema, case_sensitive))


def _bound_predicates(expr: Expression) -> Iterable[BoundPredicate]:
    if isinstance(expr, (And, Or)):
        yield from _bound_predicates(expr.left)
        yield from _bound_predicates(expr.right)
    elif isinstance(expr, BoundPredicate):
        yield expr


# --------------------------------------------------------------------------- projector


class _Projector:
    def __init__(self, spec: PartitionSpec, schema: Schema) -> None:
        self.spec = spec
        self.schema = schema
        self.partition_type = spec.partition_type(schema)
        self._refs: dict[int, BoundReference] = {}
        for pos, (pf, nf) in enumerate(
            zip(spec.fields, self.partition_type.fields, strict=True)
        ):
            self._refs[pf.field_id] = BoundReference(
                field=nf, name=pf.name, path=(pf.field_id,), positions=(pos,),
                names=(pf.name,), nullable=True,
            )

    def project(self, expr: Expression, strict: bool) -> Expression:
        if isinstance(expr, AlwaysTrue):
            return ALWAYS_TRUE
        if isinstance(expr, AlwaysFalse):
            return ALWAYS_FALSE
        if isinstance(expr, And):
            return and_(self.project(expr.left, strict), self.project(expr.right, strict))
        if isinstance(expr, Or):
            return or_(self.project(expr.left, strict), self.project(expr.right, strict))
        assert isinstance(expr, BoundPredicate)
        parts = list(self.each(expr, strict))
        # inclusive: every projection holds for a matching row, so all of them can filter;
        # strict: any one projection that holds guarantees the row matches.
        return or_(ALWAYS_FALSE, *parts) if strict else and_(ALWAYS_TRUE, *parts)

    def each(self, pred: BoundPredicate, strict: bool) -> Iterable[Expression]:
        """The projections of ``pred`` through each partition field of its column."""
        for pf in self.spec.fields:
            if pf.source_ids != (pred.term.field_id,):
                continue  # other columns, and multi-argument transforms (no projection)
            projected = project_predicate(
                pf.transform, pred.term.field_type, pred, self._refs[pf.field_id], strict
            )
            if projected is not None:
                yield projected


# --------------------------------------------------------------------------- per transform


def project_predicate(
    transform: Transform,
    source_type: IcebergType,
    pred: BoundPredicate,
    partition_ref: BoundReference,
    strict: bool,
) -> Expression | None:
    """Project one bound predicate through ``transform`` onto ``partition_ref``.

    Returns None when the transform gives no projection (read as ``true`` for inclusive and
    ``false`` for strict projections).
    """
    if transform.is_unknown or transform.is_void:
        return None
    try:
        if not transform.can_transform(source_type):
            return None
    except IcebergError:
        return None
    if isinstance(pred, BoundUnaryPredicate):
        if pred.op in (Operation.IS_NULL, Operation.NOT_NULL):
            return BoundUnaryPredicate(pred.op, partition_ref)
        if isinstance(transform, IdentityTransform):
            return BoundUnaryPredicate(pred.op, partition_ref)
        return None
    try:
        if isinstance(transform, IdentityTransform):
            return _retarget(pred, partition_ref)
        if isinstance(transform, BucketTransform):
            return _project_bucket(transform, source_type, pred, partition_ref, strict)
        if isinstance(transform, TruncateTransform):
            return _project_truncate(transform, source_type, pred, partition_ref, strict)
        if isinstance(transform, _TIME_TRANSFORMS):
            return _project_time(transform, source_type, pred, partition_ref, strict)
    except (IcebergError, ArithmeticError, OverflowError):
        return None  # a boundary the transform cannot represent: no projection
    return None


def _retarget(pred: BoundPredicate, ref: BoundReference) -> BoundPredicate:
    if isinstance(pred, BoundLiteralPredicate):
        return BoundLiteralPredicate(pred.op, ref, pred.literal)
    if isinstance(pred, BoundSetPredicate):
        return BoundSetPredicate(pred.op, ref, pred.literals)
    return BoundUnaryPredicate(pred.op, ref)


def _literal(op: Operation, ref: BoundReference, value: Any) -> BoundPredicate:
    return BoundLiteralPredicate(op, ref, value)


def _set(op: Operation, ref: BoundReference, values: Iterable[Any]) -> BoundPredicate:
    items = frozenset(values)
    if len(items) == 1:
        single = Operation.EQ if op == Operation.IN else Operation.NOT_EQ
        return BoundLiteralPredicate(single, ref, next(iter(items)))
    return BoundSetPredicate(op, ref, items)


def _project_bucket(
    transform: BucketTransform, source_type: IcebergType, pred: BoundPredicate,
    ref: BoundReference, strict: bool,
) -> Expression | None:
    f = transform.bind(source_type)
    wanted = (Operation.NOT_EQ, Operation.NOT_IN) if strict else (Operation.EQ, Operation.IN)
    if pred.op not in wanted:
        return None
    if isinstance(pred, BoundSetPredicate):
        return _set(pred.op, ref, (f(v) for v in pred.literals))
    assert isinstance(pred, BoundLiteralPredicate)
    return _literal(pred.op, ref, f(pred.literal))


def _step(source_type: IcebergType, value: Any, delta: int) -> Any:
    """The representable value ``delta`` steps away (ints: 1; decimals: one unit of scale).

    Strings and binary have no such neighbour: the value itself stands in, which keeps a
    projection correct, only less tight (``< b`` projects as ``<= f(b)``).
    """
    if isinstance(source_type, (StringType, BinaryType)):
        return value
    if isinstance(source_type, DecimalType):
        return value + delta * Decimal(1).scaleb(-source_type.scale)
    result = value + delta
    if isinstance(source_type, (IntegerType, LongType)) and not (
        source_type.min_value <= result <= source_type.max_value
    ):
        raise ValidationError("boundary out of range", value=result)
    return result


def _project_ordered(
    f: Callable[[Any], Any], source_type: IcebergType, pred: BoundPredicate,
    ref: BoundReference, strict: bool,
) -> BoundPredicate | None:
    """Projection for transforms that floor values (truncate, time transforms)."""
    op = pred.op
    if isinstance(pred, BoundSetPredicate):
        if op == (Operation.NOT_IN if strict else Operation.IN):
            return _set(op, ref, (f(v) for v in pred.literals))
        return None
    if not isinstance(pred, BoundLiteralPredicate):
        return None
    b = pred.literal
    if not strict:
        if op == Operation.LT:
            return _literal(Operation.LT_EQ, ref, f(_step(source_type, b, -1)))
        if op == Operation.LT_EQ:
            return _literal(Operation.LT_EQ, ref, f(b))
        if op == Operation.GT:
            return _literal(Operation.GT_EQ, ref, f(_step(source_type, b, 1)))
        if op == Operation.GT_EQ:
            return _literal(Operation.GT_EQ, ref, f(b))
        if op == Operation.EQ:
            return _literal(Operation.EQ, ref, f(b))
        return None
    if op == Operation.LT:
        return _literal(Operation.LT, ref, f(b))
    if op == Operation.LT_EQ:
        return _literal(Operation.LT, ref, f(_step(source_type, b, 1)))
    if op == Operation.GT:
        return _literal(Operation.GT, ref, f(b))
    if op == Operation.GT_EQ:
        return _literal(Operation.GT, ref, f(_step(source_type, b, -1)))
    if op == Operation.NOT_EQ:
        return _literal(Operation.NOT_EQ, ref, f(b))
    return None


def _project_truncate(
    transform: TruncateTransform, source_type: IcebergType, pred: BoundPredicate,
    ref: BoundReference, strict: bool,
) -> Expression | None:
    f = transform.bind(source_type)
    if isinstance(source_type, (StringType, BinaryType)):
        if isinstance(pred, BoundLiteralPredicate) and pred.op in (
            Operation.STARTS_WITH, Operation.NOT_STARTS_WITH
        ):
            return _project_prefix(pred.op, pred.literal, transform.width, f, ref, strict)
    elif not isinstance(source_type, (IntegerType, LongType, DecimalType)):
        return None
    return _project_ordered(f, source_type, pred, ref, strict)


def _project_prefix(
    op: Operation, prefix: str, width: int, f: Callable[[Any], Any], ref: BoundReference,
    strict: bool,
) -> Expression | None:
    """starts_with through truncate[W] (prefixes are counted in code points, as truncate)."""
    n = len(prefix)
    if op == Operation.STARTS_WITH:
        if n < width:  # v starts with p  <=>  truncate(v) starts with p
            return _literal(Operation.STARTS_WITH, ref, prefix)
        if n == width or not strict:  # inclusive: v starts with p  =>  truncate(v) = p[:W]
            return _literal(Operation.EQ, ref, f(prefix))
        return None
    if n < width:
        return _literal(Operation.NOT_STARTS_WITH, ref, prefix)
    if n == width:  # v starts with p  <=>  truncate(v) = p
        return _literal(Operation.NOT_EQ, ref, prefix)
    if strict:  # truncate(v) != p[:W]  =>  v does not start with p
        return _literal(Operation.NOT_EQ, ref, f(prefix))
    return None


def _project_time(
    transform: Transform, source_type: IcebergType, pred: BoundPredicate, ref: BoundReference,
    strict: bool,
) -> Expression | None:
    f = transform.bind(source_type)
    projected = _project_ordered(f, source_type, pred, ref, strict)
    if projected is None:
        return None
    return _fix_time(projected, strict)


def _fix_time(pred: BoundPredicate, strict: bool) -> Expression:
    """Pre-1970 partition values that Iceberg <= 0.10 may have stored one too large.

    Inclusive projections also accept them; strict ones exclude them.
    """
    ref = pred.term
    if isinstance(pred, BoundSetPredicate):  # in / not in: add the values one larger
        values = set(pred.literals)
        values.update(v + 1 for v in pred.literals if v < 0)
        return _set(pred.op, ref, values)
    assert isinstance(pred, BoundLiteralPredicate)
    v = pred.literal
    if strict:
        if pred.op in (Operation.GT, Operation.GT_EQ) and v <= 0:
            return _literal(pred.op, ref, v + 1)
        if pred.op == Operation.NOT_EQ and v < 0:
            return _set(Operation.NOT_IN, ref, (v, v + 1))
    else:
        if pred.op in (Operation.LT, Operation.LT_EQ) and v < 0:
            return _literal(pred.op, ref, v + 1)
        if pred.op == Operation.EQ and v < 0:
            return _set(Operation.IN, ref, (v, v + 1))
    return pred


def partition_reference(
    spec: PartitionSpec, schema: Schema, field: PartitionField
) -> BoundReference:
    """The bound reference of one partition field in ``spec.partition_type(schema)``."""
    struct: StructType = spec.partition_type(schema)
    pos = next(i for i, f in enumerate(spec.fields) if f.field_id == field.field_id)
    nf: NestedField = struct.fields[pos]
    return BoundReference(field=nf, name=field.name, path=(field.field_id,), positions=(pos,),
                          names=(field.name,), nullable=True)
