"""Skip whole manifests whose partition field summaries prove no file can match.

Spec: "Manifest Lists" (``partitions``: one ``field_summary`` per partition field, with
``contains_null``, optional ``contains_nan``, and ``lower_bound``/``upper_bound`` of the
non-null, non-NaN values as Appendix D bytes, null when all values are null or NaN) and
"Scan Planning" ("Manifests that contain no matching files, determined using ... partition
summaries, may be skipped"). Rules follow the reference implementation's ``ManifestEvaluator``.

The filter is a *partition* filter bound to the spec's partition struct
(``spec.partition_type(schema)``); :meth:`ManifestEvaluator.for_row_filter` projects a row
filter first (inclusive projection).

Vectorized form, one row per manifest (all manifests of one partition spec), columns keyed
by partition field id (absent columns and nulls mean "unknown"):

============================  ===============================================================
``has_partition_summaries``   bool; false when the manifest has no summaries (always kept)
``contains_null.<id>``        bool
``contains_nan.<id>``         bool (null: unknown)
``lower_bound.<id>``          decoded lower bound (Arrow type of the partition field)
``upper_bound.<id>``          decoded upper bound
============================  ===============================================================

:func:`summaries_table` builds it from a manifest list's ``partitions`` column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, ValidationError
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.evaluators import prepare_bound
from icenb.spec.expressions import (
    BoundLiteralPredicate,
    BoundPredicate,
    BoundSetPredicate,
    Expression,
    Operation,
    bind,
)
from icenb.spec.metrics_evaluator import (
    IN_PREDICATE_LIMIT,
    MetricColumns,
    and_masks,
    arrow_type_for,
    bounds_unordered,
    compare_bound,
    compare_bound_prefix,
    decode_bound_array,
    is_nan_value,
    or_masks,
    outside_bounds,
    walk_masks,
    walk_predicates,
)
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.projection import project_inclusive_bound
from icenb.spec.schema import Schema
from icenb.spec.types import DoubleType, FloatType, IcebergType, StructType

__all__ = [
    "ManifestEvaluator",
    "PartitionFieldSummary",
    "decode_field_summaries",
    "evaluate_manifests_arrow",
    "manifest_might_match",
    "summaries_table",
]


@safe_repr
@dataclass(frozen=True)
class PartitionFieldSummary:
    """One partition field's summary in a manifest list entry (bounds decoded).

    Spec: Manifest Lists, ``field_summary`` (509 contains_null, 518 contains_nan,
    510 lower_bound, 511 upper_bound).
    """

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: Any = None
    upper_bound: Any = None


def decode_field_summaries(
    partition_type: StructType, summaries: Sequence[Mapping[str, Any]] | None
) -> list[PartitionFieldSummary] | None:
    """Summaries as read from a manifest list (dicts with the spec's field names, bytes bounds).

    Undecodable bounds become unknown (None), which keeps the manifest.
    """
    if summaries is None:
        return None
    fields = partition_type.fields
    if len(summaries) != len(fields):
        raise ValidationError(
            f"manifest has {len(summaries)} partition summaries for {len(fields)} partition "
            "fields", field="partitions", value=len(summaries),
        )
    out: list[PartitionFieldSummary] = []
    for f, raw in zip(fields, summaries, strict=True):
        bounds: list[Any] = []
        for key in ("lower_bound", "upper_bound"):
            data = raw.get(key)
            try:
                bounds.append(None if data is None else values.from_bytes(f.field_type, data))
            except IcebergError:
                bounds.append(_UNKNOWN)
        out.append(PartitionFieldSummary(
            bool(raw.get("contains_null", True)), raw.get("contains_nan"), bounds[0], bounds[1]
        ))
    return out


class _Unknown:
    """A bound that exists but could not be read: never used to prune."""

    def __repr__(self) -> str:
        return "<unknown bound>"


_UNKNOWN: Any = _Unknown()


def manifest_might_match(
    expr: Expression, summaries: Sequence[PartitionFieldSummary] | None
) -> bool:
    """False when the summaries prove no partition in the manifest matches ``expr``.

    ``expr`` is bound to the partition struct; summaries are in partition field order.
    """
    bound = prepare_bound(expr)
    if summaries is None:
        return True
    return walk_predicates(bound, lambda pred: _might_match(pred, summaries))


def _all_null(s: PartitionFieldSummary, t: IcebergType) -> bool:
    """Every value is null (bounds are null for all-null and for all-NaN fields)."""
    all_null = s.contains_null and s.lower_bound is None
    if all_null and isinstance(t, (FloatType, DoubleType)):
        all_null = s.contains_nan is not None and not s.contains_nan
    return all_null


def _might_match(pred: BoundPredicate, summaries: Sequence[PartitionFieldSummary]) -> bool:
    pos = pred.term.positions[0]
    if pos >= len(summaries):
        return True
    s = summaries[pos]
    if bounds_unordered(pred):
        return True
    op = pred.op
    t = pred.term.field_type
    lower, upper = s.lower_bound, s.upper_bound
    if op == Operation.IS_NULL:
        return s.contains_null
    if op == Operation.NOT_NULL:
        return not _all_null(s, t)
    if op == Operation.IS_NAN:
        if s.contains_nan is not None and not s.contains_nan:
            return False
        return not _all_null(s, t)
    if op == Operation.NOT_NAN:
        return not (s.contains_nan and not s.contains_null and lower is None)
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        return True
    if op == Operation.NOT_STARTS_WITH:
        if s.contains_null or lower is None or upper is None:
            return True
        if lower is _UNKNOWN or upper is _UNKNOWN:
            return True
        prefix = pred.literal if isinstance(pred, BoundLiteralPredicate) else ""
        return not (lower.startswith(prefix) and upper.startswith(prefix))
    if lower is None:
        return False  # all values are null or NaN: no comparison matches
    if lower is _UNKNOWN or upper is _UNKNOWN or is_nan_value(lower):
        return True
    if isinstance(pred, BoundSetPredicate):  # IN
        if len(pred.literals) > IN_PREDICATE_LIMIT:
            return True
        candidates = [v for v in pred.literals if lower <= v]
        if not candidates:
            return False
        return upper is None or is_nan_value(upper) or any(v <= upper for v in candidates)
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    if op == Operation.LT:
        return bool(lower < lit)
    if op == Operation.LT_EQ:
        return bool(lower <= lit)
    if op == Operation.STARTS_WITH and lower[: len(lit)] > lit:
        return False
    if op == Operation.EQ and lower > lit:
        return False
    if upper is None or is_nan_value(upper):  # a lower bound without an upper one: unknown
        return True
    if op == Operation.GT:
        return bool(upper > lit)
    if op in (Operation.GT_EQ, Operation.EQ):
        return bool(upper >= lit)
    if op == Operation.STARTS_WITH:
        return bool(upper[: len(lit)] >= lit)
    raise ValidationError("unsupported predicate", value=str(pred))  # pragma: no cover


class ManifestEvaluator:
    """A partition filter bound to one spec's partition struct, evaluated per manifest."""

    def __init__(self, spec: PartitionSpec, schema: Schema, partition_filter: Expression,
                 case_sensitive: bool = True) -> None:
        self.spec = spec
        self.partition_type = spec.partition_type(schema)
        self.expr = prepare_bound(bind(partition_filter, self.partition_type, case_sensitive))

    @classmethod
    def for_row_filter(cls, spec: PartitionSpec, schema: Schema, row_filter: Expression,
                       case_sensitive: bool = True) -> ManifestEvaluator:
        """Project a row filter inclusively to the spec, then evaluate on summaries."""
        projected = project_inclusive_bound(spec, schema, row_filter, case_sensitive)
        evaluator = cls.__new__(cls)
        evaluator.spec = spec
        evaluator.partition_type = spec.partition_type(schema)
        evaluator.expr = prepare_bound(projected)
        return evaluator

    @classmethod
    def for_partition_filter(cls, spec: PartitionSpec, schema: Schema,
                             partition_filter: Expression,
                             case_sensitive: bool = True) -> ManifestEvaluator:
        return cls(spec, schema, partition_filter, case_sensitive)

    def eval(self, summaries: Sequence[PartitionFieldSummary] | None) -> bool:
        """Whether the manifest may hold matching files."""
        return manifest_might_match(self.expr, summaries)

    def eval_arrow(self, manifests: pa.Table | pa.RecordBatch) -> pa.Array:
        """Mask of the manifests (rows of the table described in the module docstring)."""
        return evaluate_manifests_arrow(self.expr, manifests)


# --------------------------------------------------------------------------- vectorized


def evaluate_manifests_arrow(expr: Expression, manifests: pa.Table | pa.RecordBatch) -> pa.Array:
    """Mask (never null) of the manifests that may contain files matching ``expr``."""
    bound = prepare_bound(expr)
    c = MetricColumns(manifests)
    result = walk_masks(bound, c, lambda pred: pc.invert(_cannot(pred, c)))
    present = c.get("has_partition_summaries")
    if present is not None:
        result = pc.or_(result, pc.invert(pc.fill_null(present, True)))
    return result


def _cannot(pred: BoundPredicate, c: MetricColumns) -> Any:
    fid = pred.term.field_id
    op = pred.op
    if bounds_unordered(pred):
        return c.const(False)
    contains_null = c.get(f"contains_null.{fid}")
    lower, upper = c.get(f"lower_bound.{fid}"), c.get(f"upper_bound.{fid}")
    no_nan = c.equals(f"contains_nan.{fid}", False)
    known_no_null = c.equals(f"contains_null.{fid}", False)
    # a null bound means "all values are null or NaN"; an absent column means unknown
    lower_missing = c.const(False) if lower is None else pc.is_null(lower)
    all_null = and_masks(c.equals(f"contains_null.{fid}", True), lower_missing)
    if isinstance(pred.term.field_type, (FloatType, DoubleType)):
        all_null = and_masks(all_null, no_nan)
    if op == Operation.IS_NULL:
        return known_no_null
    if op == Operation.NOT_NULL:
        return all_null
    if op == Operation.IS_NAN:
        return or_masks(no_nan, all_null)
    if op == Operation.NOT_NAN:
        return and_masks(c.equals(f"contains_nan.{fid}", True), known_no_null, lower_missing)
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        return c.const(False)
    if contains_null is None and lower is None:
        return c.const(False)  # no summaries for this field at all
    if op == Operation.NOT_STARTS_WITH:
        if lower is None or upper is None or not isinstance(pred, BoundLiteralPredicate):
            return c.const(False)
        prefix: str = pred.literal
        return and_masks(known_no_null, compare_bound_prefix(lower, "=", prefix),
                    compare_bound_prefix(upper, "=", prefix))
    if lower is None:
        return c.const(False)
    if isinstance(pred, BoundSetPredicate):  # IN
        if len(pred.literals) > IN_PREDICATE_LIMIT:
            return lower_missing
        return or_masks(lower_missing, outside_bounds(c, lower, upper, pred.literals))
    assert isinstance(pred, BoundLiteralPredicate)
    lit = pred.literal
    if op == Operation.STARTS_WITH:
        out = or_masks(lower_missing, compare_bound_prefix(lower, ">", lit))
        if upper is not None:
            out = or_masks(out, compare_bound_prefix(upper, "<", lit))
        return out
    if op == Operation.LT:
        return or_masks(lower_missing, compare_bound(lower, ">=", lit))
    if op == Operation.LT_EQ:
        return or_masks(lower_missing, compare_bound(lower, ">", lit))
    upper_cmp = c.const(False)
    if upper is not None:
        if op == Operation.GT:
            upper_cmp = compare_bound(upper, "<=", lit)
        elif op in (Operation.GT_EQ, Operation.EQ):
            upper_cmp = compare_bound(upper, "<", lit)
    if op in (Operation.GT, Operation.GT_EQ):
        return or_masks(lower_missing, upper_cmp)
    if op == Operation.EQ:
        return or_masks(lower_missing, compare_bound(lower, ">", lit), upper_cmp)
    raise ValidationError("unsupported predicate", value=str(pred))  # pragma: no cover


def summaries_table(
    partitions: pa.Array | pa.ChunkedArray, partition_type: StructType
) -> pa.Table:
    """The vectorized evaluator's columns from a manifest list ``partitions`` column.

    ``partitions`` is ``list<struct<contains_null, contains_nan, lower_bound, upper_bound>>``
    (one list per manifest, in partition field order; null when the manifest has none).
    """
    if isinstance(partitions, pa.ChunkedArray):
        partitions = (pa.concat_arrays(partitions.chunks) if partitions.num_chunks
                      else pa.array([], type=partitions.type))
    n = len(partitions)
    out: dict[str, pa.Array] = {"has_partition_summaries": pc.is_valid(partitions)}
    lengths = pc.fill_null(pc.list_value_length(partitions), 0)
    for pos, f in enumerate(partition_type.fields):
        has = pc.greater(lengths, pos)
        element = pc.list_element(
            pc.if_else(has, partitions, pa.scalar(None, type=partitions.type)), pos
        ) if n else pa.array([], type=partitions.type.value_type)
        fid = f.field_id
        names = element.type
        for name in ("contains_null", "contains_nan"):
            if names.get_field_index(name) >= 0:
                out[f"{name}.{fid}"] = pc.struct_field(element, name)
        try:
            arrow_type_for(f.field_type)
        except ValidationError:
            continue
        for name in ("lower_bound", "upper_bound"):
            if names.get_field_index(name) >= 0:
                raw = pc.struct_field(element, name)
                decoded = decode_bound_array(f.field_type, raw)
                # a null bound prunes ("all null"): keep manifests whose bound did not decode
                failed = pc.and_(pc.is_valid(raw), pc.is_null(decoded))
                out["has_partition_summaries"] = pc.and_(
                    out["has_partition_summaries"], pc.invert(failed)
                )
                out[f"{name}.{fid}"] = decoded
    return pa.table(out)
