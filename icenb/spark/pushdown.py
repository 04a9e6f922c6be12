"""Spark's pushed filters as icenb expressions (``DataSourceReader.pushFilters``, PySpark 4.1+).

Spark hands a Python data source the conjuncts of a ``WHERE`` it can express as simple
predicates on one column (``pyspark.sql.datasource``: ``EqualTo``, ``EqualNullSafe``,
``GreaterThan(OrEqual)``, ``LessThan(OrEqual)``, ``In``, ``IsNull``, ``IsNotNull``,
``StringStartsWith``, ``StringEndsWith``, ``StringContains``, each possibly under ``Not``; an
``OR`` is never pushed by Spark 4.1 to 4.3). :func:`translate_filters` turns each into an icenb
expression (:mod:`icenb.spec.expressions`) that the scan uses to prune manifests and files and
to filter rows, and says which filters Spark must still evaluate itself.

A filter is *handled* (not returned to Spark) only when icenb evaluates it exactly as Spark
does in a ``WHERE``: a row passes when the predicate is true, never when it is null. That holds
for comparisons of boolean, int, long, decimal, date, timestamp (``timestamp_ntz``),
timestamptz (``timestamp``), string, binary and fixed columns with a literal of the column's
own Spark type, for null tests of any primitive column, and for ``IN`` and ``starts with``:

- ``a <=> v`` is ``a = v``, ``NOT (a <=> v)`` is ``a != v OR a IS NULL``, ``a <=> NULL`` is
  ``a IS NULL``;
- ``a IN (1, NULL)`` is ``a = 1``; ``NOT (a IN (1, NULL))`` is never true (SQL), so it is
  ``false``;
- a comparison with a null literal is ``false`` (Spark folds most of them before pushing).

Float and double comparisons prune but stay with Spark: Spark orders NaN above every number and
makes ``NaN = NaN`` true, icenb compares as IEEE 754 does. icenb uses the comparison ``OR
is_nan(a)``, which keeps every row Spark's predicate keeps, and Spark applies the exact one.
Columns whose Spark type is a stand-in (uuid and time as strings, geometry as binary), nested
columns (structs, lists, maps), metadata columns, fields inside lists or maps,
``StringEndsWith`` / ``StringContains`` and any filter class icenb does not know stay with
Spark unchanged (no pruning from them). A filter that icenb cannot bind (a literal its column
type refuses) stays with Spark too, so pushing never changes a query's result.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pyspark.sql import datasource as sds

from icenb.errors import IcebergError
from icenb.reprs import safe_repr
from icenb.spec.expressions import (
    ALWAYS_FALSE,
    Expression,
    Operation,
    and_,
    bind,
    not_,
    or_,
    predicate,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    NestedType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

__all__ = ["GREGORIAN_START", "FilterTree", "Pushdown", "before_gregorian", "superset_expression",
           "translate_filters"]


class _Keep(Exception):
    """The filter stays with Spark (nothing of it is pushed)."""


@safe_repr
@dataclass(frozen=True)
class _Column:
    name: str  # icenb's full dotted name
    field: NestedField
    nullable: bool  # the field or a struct holding it may be null

    @property
    def type(self) -> IcebergType:
        return self.field.field_type


@safe_repr
@dataclass(frozen=True)
class Pushdown:
    """The result of translating Spark's filters: the icenb expression of everything pushed
    (``true`` when nothing is) and the filters Spark still evaluates (the same objects, in
    Spark's order; some were also pushed to prune)."""

    expression: Expression
    kept: tuple[Any, ...]
    pushed: tuple[Any, ...]  # the filters icenb evaluates exactly (not returned to Spark)


def _column(schema: Schema, path: Sequence[str], case_sensitive: bool) -> _Column:
    """The field a Spark column path names (struct fields only), matched by name as Spark
    gives it (exact case first, else the one case-insensitive match when allowed)."""
    fields: tuple[NestedField, ...] = schema.fields
    found: NestedField | None = None
    nullable = False
    for i, part in enumerate(path):
        found = next((f for f in fields if f.name == part), None)
        if found is None and not case_sensitive:
            matches = [f for f in fields if f.name.lower() == str(part).lower()]
            found = matches[0] if len(matches) == 1 else None
        if found is None:
            raise _Keep
        nullable = nullable or not found.required
        if i < len(path) - 1:
            if not isinstance(found.field_type, StructType):
                raise _Keep  # inside a list or map: not a column icenb filters
            fields = found.field_type.fields
    assert found is not None
    name = schema.column_name(found.field_id)
    if name is None or schema.find_field_id(name, True) != found.field_id:
        raise _Keep  # a name with dots that does not read back as this field
    return _Column(name, found, nullable)


#: Per exact type, the Python types of the literals Spark sends for it.
_EXACT_LITERALS: dict[type, tuple[type, ...]] = {
    BooleanType: (bool,),
    IntegerType: (int,),
    LongType: (int,),
    DecimalType: (Decimal,),
    DateType: (dt.date,),
    TimestampType: (dt.datetime,),
    TimestamptzType: (dt.datetime,),
    StringType: (str,),
    BinaryType: (bytes, bytearray),
    FixedType: (bytes, bytearray),
}
_FLOATING = (FloatType, DoubleType)


def _literal(column: _Column, value: Any) -> tuple[Any, bool]:
    """The icenb literal for a Spark literal of ``column``, and whether comparisons with it
    are exact (raises :class:`_Keep` when icenb should not push the comparison)."""
    t = column.type
    if isinstance(t, _FLOATING):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Keep
        if isinstance(value, float) and math.isnan(value):
            raise _Keep
        return value, False
    allowed = _EXACT_LITERALS.get(type(t))
    if allowed is None or isinstance(t, NestedType):
        raise _Keep
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        raise _Keep
    if isinstance(t, DateType) and isinstance(value, dt.datetime):
        raise _Keep
    if isinstance(value, dt.date) and before_gregorian(value):
        raise _Keep
    # timestamptz arrives as an instant (aware), timestamp_ntz as a wall time (naive)
    if isinstance(value, dt.datetime) and (value.tzinfo is not None) != isinstance(
            t, TimestamptzType):
        raise _Keep
    if isinstance(value, bytearray):
        value = bytes(value)
    return value, True


#: The first day of the Gregorian calendar. Spark's filters hand dates and timestamps before it
#: over through ``java.sql.Date`` / ``Timestamp`` (the hybrid Julian calendar), so the value a
#: data source sees can be days away from the one Iceberg stores (proleptic Gregorian): such
#: comparisons stay with Spark, which evaluates them on the values it read.
GREGORIAN_START = dt.date(1582, 10, 15)


def before_gregorian(value: dt.date) -> bool:
    day = value.date() if isinstance(value, dt.datetime) else value
    return day < GREGORIAN_START + dt.timedelta(days=1)  # a day of margin for time zones


def _nan_superset(column: _Column, expr: Expression, exact: bool) -> Expression:
    """For a float column, ``expr OR is_nan(column)``: every row Spark's NaN ordering keeps."""
    if exact:
        return expr
    return or_(expr, predicate(Operation.IS_NAN, column.name))


_COMPARISONS: dict[type, Operation] = {
    sds.EqualTo: Operation.EQ,
    sds.GreaterThan: Operation.GT,
    sds.GreaterThanOrEqual: Operation.GT_EQ,
    sds.LessThan: Operation.LT,
    sds.LessThanOrEqual: Operation.LT_EQ,
}


def _translate(f: Any, schema: Schema, case_sensitive: bool, negate: bool
               ) -> tuple[Expression, bool]:
    """The icenb expression of ``f`` (negated when ``negate``) and whether it is exact."""
    if isinstance(f, sds.Not):
        return _translate(f.child, schema, case_sensitive, not negate)
    attribute = getattr(f, "attribute", None)
    if not isinstance(attribute, tuple) or not attribute:
        raise _Keep
    column = _column(schema, attribute, case_sensitive)
    t = column.type
    if isinstance(f, (sds.IsNull, sds.IsNotNull)):
        if isinstance(t, NestedType):
            raise _Keep
        is_null = isinstance(f, sds.IsNull) != negate
        return predicate(Operation.IS_NULL if is_null else Operation.NOT_NULL, column.name), True
    op = _COMPARISONS.get(type(f))
    if op is not None or isinstance(f, sds.EqualNullSafe):
        if f.value is None:
            if isinstance(f, sds.EqualNullSafe):  # a <=> NULL: a IS NULL
                if isinstance(t, NestedType):
                    raise _Keep
                kind = Operation.NOT_NULL if negate else Operation.IS_NULL
                return predicate(kind, column.name), True
            return ALWAYS_FALSE, True  # a comparison with null is never true, negated or not
        value, exact = _literal(column, f.value)
        if isinstance(f, sds.EqualNullSafe):
            equal = predicate(Operation.EQ, column.name, value)
            if not negate:
                return _nan_superset(column, equal, exact), exact
            # NOT (a <=> v): a != v, or a is null
            differs = or_(not_(equal), predicate(Operation.IS_NULL, column.name))
            return _nan_superset(column, differs, exact), exact
        assert op is not None
        expr = predicate(op, column.name, value)
        return _nan_superset(column, not_(expr) if negate else expr, exact), exact
    if isinstance(f, sds.In):
        values = list(f.value) if isinstance(f.value, (list, tuple)) else None
        if values is None:
            raise _Keep
        has_null = any(v is None for v in values)
        literals = []
        exact = True
        for v in values:
            if v is not None:
                lit, lit_exact = _literal(column, v)
                literals.append(lit)
                exact = exact and lit_exact
        if negate and has_null:
            return ALWAYS_FALSE, True  # NOT (a IN (..., NULL)) is never true
        if not literals:
            if negate:  # NOT (a IN ()): every non-null value
                return predicate(Operation.NOT_NULL, column.name), True
            return ALWAYS_FALSE, True
        expr = predicate(Operation.IN, column.name, *literals)
        return _nan_superset(column, not_(expr) if negate else expr, exact), exact
    if isinstance(f, sds.StringStartsWith):
        if not isinstance(t, StringType) or not isinstance(f.value, str):
            raise _Keep
        kind = Operation.NOT_STARTS_WITH if negate else Operation.STARTS_WITH
        return predicate(kind, column.name, f.value), True
    raise _Keep  # StringEndsWith, StringContains, anything newer


def translate_filters(filters: Sequence[Any], schema: Schema, *,
                      case_sensitive: bool = True) -> Pushdown:
    """Translate Spark's pushed filters for a read with ``schema`` (see the module docstring).

    Every filter either becomes part of :attr:`Pushdown.expression` and is dropped from
    :attr:`Pushdown.kept` (exact), or is kept for Spark, pushed as well when a looser icenb
    form still prunes (floats); nothing that changes the rows Spark returns is pushed.
    """
    pushed: list[Expression] = []
    handled: list[Any] = []
    kept: list[Any] = []
    for f in filters:
        try:
            expr, exact = _translate(f, schema, case_sensitive, False)
            bind(expr, schema, case_sensitive)  # refuse what icenb would refuse at planning
        except (_Keep, IcebergError):
            kept.append(f)
            continue
        pushed.append(expr)
        (handled if exact else kept).append(f)
    return Pushdown(and_(*pushed), tuple(kept), tuple(handled))


#: A Spark filter (a ``pyspark.sql.datasource`` filter), or ``("and" | "or", left, right)`` /
#: ``("not", child)`` of them: what ``spark.sql.sources`` filters can express.
FilterTree = Any


def _tree(tree: FilterTree, schema: Schema, case_sensitive: bool, negate: bool
          ) -> tuple[Expression, bool]:
    if not isinstance(tree, tuple):
        return _translate(tree, schema, case_sensitive, negate)
    if tree[0] == "not":
        return _tree(tree[1], schema, case_sensitive, not negate)
    op = tree[0] if not negate else {"and": "or", "or": "and"}[tree[0]]  # De Morgan
    if op == "and":  # a side icenb cannot express is dropped: a looser filter
        parts = []
        for side in tree[1:]:
            try:
                parts.append(_tree(side, schema, case_sensitive, negate))
            except (_Keep, IcebergError):
                continue
        if not parts:
            raise _Keep
        return and_(*(e for e, _ in parts)), len(parts) == 2 and all(x for _, x in parts)
    left = _tree(tree[1], schema, case_sensitive, negate)
    right = _tree(tree[2], schema, case_sensitive, negate)
    return or_(left[0], right[0]), left[1] and right[1]


def superset_expression(tree: FilterTree, schema: Schema, *,
                        case_sensitive: bool = True) -> Expression | None:
    """An icenb expression that keeps every row Spark's ``WHERE`` ``tree`` keeps (exact where
    :func:`translate_filters` handles a filter, looser elsewhere: a float comparison also keeps
    NaN, an ``AND`` side icenb cannot express is dropped); None when nothing of it can be
    expressed. For pruning under a filter Spark still applies."""
    try:
        expr, _ = _tree(tree, schema, case_sensitive, False)
        bind(expr, schema, case_sensitive)
    except (_Keep, IcebergError):
        return None
    return expr
