"""Row filter expressions: an immutable predicate tree, its text form, and binding to a schema.

Spec: "Scan Planning" (scan predicates filter data rows; they are projected to partition
predicates and evaluated against column metrics).

Unbound expressions name columns (``Reference("a.b")``) and hold plain Python literals; users
build them with :func:`col` (``col("id") == 5``), with the classes, or by parsing text
(:mod:`icenb.spec.expression_parser`). :func:`bind` resolves names against a schema (or a
partition struct) and converts literals to the internal representation of the column's type
(see :mod:`icenb.spec.types`).

Semantics (shared by every evaluator in ``icenb.spec``):

* comparisons with a null value are *unknown* (SQL three-valued logic): ``NOT (a = 5)`` does
  not match a row where ``a`` is null, and neither does ``a != 5``, ``a NOT IN (...)`` or
  ``NOT starts_with(a, 'x')``;
* ``is_nan``/``not_nan`` and ``is_null``/``not_null`` are two-valued: ``is_nan(null)`` is false,
  ``not_nan(null)`` is true;
* floating point comparisons follow IEEE 754: ``NaN`` is neither smaller nor larger than any
  value, ``NaN != x`` is true, ``-0.0 = 0.0``.

Binding pushes ``NOT`` down to the predicates (exactly, for these semantics), so a bound
expression contains only ``AlwaysTrue``, ``AlwaysFalse``, ``And``, ``Or`` and bound predicates;
for it, "unknown" and "false" behave the same and every evaluator is two-valued.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import enum
import math
import re
import struct
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation, localcontext
from typing import Any, ClassVar

from icenb.errors import IcebergError, ValidationError
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    NestedType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

__all__ = [
    "ALWAYS_FALSE",
    "ALWAYS_TRUE",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BoundLiteralPredicate",
    "BoundPredicate",
    "BoundReference",
    "BoundSetPredicate",
    "BoundUnaryPredicate",
    "Column",
    "EqualTo",
    "Expression",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "LiteralPredicate",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "Operation",
    "Or",
    "Reference",
    "SetPredicate",
    "StartsWith",
    "UnaryPredicate",
    "UnboundPredicate",
    "and_",
    "bind",
    "col",
    "is_bound",
    "not_",
    "or_",
    "predicate",
    "referenced_field_ids",
    "referenced_names",
    "rewrite_not",
    "unbind",
]


# --------------------------------------------------------------------------- operations


class Operation(enum.Enum):
    """What a predicate tests."""

    IS_NULL = "is_null"
    NOT_NULL = "not_null"
    IS_NAN = "is_nan"
    NOT_NAN = "not_nan"
    LT = "lt"
    LT_EQ = "lt_eq"
    GT = "gt"
    GT_EQ = "gt_eq"
    EQ = "eq"
    NOT_EQ = "not_eq"
    IN = "in"
    NOT_IN = "not_in"
    STARTS_WITH = "starts_with"
    NOT_STARTS_WITH = "not_starts_with"

    def negate(self) -> Operation:
        """The operation matching exactly the non-null values this one rejects."""
        return _NEGATED[self]

    def flip(self) -> Operation:
        """The operation with its operands swapped (``5 < x`` is ``x > 5``)."""
        try:
            return _FLIPPED[self]
        except KeyError:
            raise ValidationError("operation has no flipped form", value=self.value) from None

    @property
    def is_unary(self) -> bool:
        return self in _UNARY_OPS

    @property
    def is_set(self) -> bool:
        return self in (Operation.IN, Operation.NOT_IN)

    @property
    def is_literal(self) -> bool:
        return not self.is_unary and not self.is_set

    @property
    def is_ordering(self) -> bool:
        """``<``, ``<=``, ``>``, ``>=``."""
        return self in _ORDERING_OPS


_NEGATED = {
    Operation.IS_NULL: Operation.NOT_NULL,
    Operation.NOT_NULL: Operation.IS_NULL,
    Operation.IS_NAN: Operation.NOT_NAN,
    Operation.NOT_NAN: Operation.IS_NAN,
    Operation.LT: Operation.GT_EQ,
    Operation.LT_EQ: Operation.GT,
    Operation.GT: Operation.LT_EQ,
    Operation.GT_EQ: Operation.LT,
    Operation.EQ: Operation.NOT_EQ,
    Operation.NOT_EQ: Operation.EQ,
    Operation.IN: Operation.NOT_IN,
    Operation.NOT_IN: Operation.IN,
    Operation.STARTS_WITH: Operation.NOT_STARTS_WITH,
    Operation.NOT_STARTS_WITH: Operation.STARTS_WITH,
}
_FLIPPED = {
    Operation.LT: Operation.GT,
    Operation.LT_EQ: Operation.GT_EQ,
    Operation.GT: Operation.LT,
    Operation.GT_EQ: Operation.LT_EQ,
    Operation.EQ: Operation.EQ,
    Operation.NOT_EQ: Operation.NOT_EQ,
}
_UNARY_OPS = frozenset(
    {Operation.IS_NULL, Operation.NOT_NULL, Operation.IS_NAN, Operation.NOT_NAN}
)
_ORDERING_OPS = frozenset({Operation.LT, Operation.LT_EQ, Operation.GT, Operation.GT_EQ})
_SYMBOLS = {
    Operation.LT: "<",
    Operation.LT_EQ: "<=",
    Operation.GT: ">",
    Operation.GT_EQ: ">=",
    Operation.EQ: "=",
    Operation.NOT_EQ: "!=",
}


# --------------------------------------------------------------------------- base


@safe_repr
class Expression:
    """Base of every expression node (unbound or bound). Immutable."""

    __slots__ = ()

    def negate(self) -> Expression:
        """The expression matching the rows this one does not (NOT pushed to the leaves)."""
        raise NotImplementedError

    def __and__(self, other: Expression) -> Expression:
        return and_(self, other)

    def __or__(self, other: Expression) -> Expression:
        return or_(self, other)

    def __invert__(self) -> Expression:
        return not_(self)

    def __bool__(self) -> bool:
        raise TypeError(
            "an expression has no truth value; combine expressions with &, | and ~ "
            "(or and_/or_/not_), not with 'and', 'or' and 'not'"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


@dataclass(frozen=True, repr=False)
class AlwaysTrue(Expression):
    """Matches every row."""

    def negate(self) -> Expression:
        return ALWAYS_FALSE

    def __str__(self) -> str:
        return "true"


@dataclass(frozen=True, repr=False)
class AlwaysFalse(Expression):
    """Matches no row."""

    def negate(self) -> Expression:
        return ALWAYS_TRUE

    def __str__(self) -> str:
        return "false"


ALWAYS_TRUE = AlwaysTrue()
ALWAYS_FALSE = AlwaysFalse()


@safe_repr
@dataclass(frozen=True, repr=False)
class And(Expression):
    """Both children match. Build with :func:`and_` (or ``&``) to get simplification."""

    left: Expression
    right: Expression

    def negate(self) -> Expression:
        return or_(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"{_paren(self.left, (Or,))} and {_paren(self.right, (Or, And))}"


@safe_repr
@dataclass(frozen=True, repr=False)
class Or(Expression):
    """Either child matches. Build with :func:`or_` (or ``|``) to get simplification."""

    left: Expression
    right: Expression

    def negate(self) -> Expression:
        return and_(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"{self.left} or {_paren(self.right, (Or,))}"


@safe_repr
@dataclass(frozen=True, repr=False)
class Not(Expression):
    """The child does not match. Build with :func:`not_` (or ``~``) to get simplification."""

    child: Expression

    def negate(self) -> Expression:
        return self.child

    def __str__(self) -> str:
        return f"not ({self.child})"


def _paren(expr: Expression, kinds: tuple[type, ...]) -> str:
    return f"({expr})" if isinstance(expr, kinds) else str(expr)


def and_(*exprs: Expression) -> Expression:
    """Conjunction with simplification (``x and false`` is ``false``, ``x and true`` is ``x``)."""
    result: Expression = ALWAYS_TRUE
    for expr in exprs:
        _check_expression(expr)
        if isinstance(expr, AlwaysFalse) or isinstance(result, AlwaysFalse):
            return ALWAYS_FALSE
        if isinstance(expr, AlwaysTrue):
            continue
        result = expr if isinstance(result, AlwaysTrue) else And(result, expr)
    return result


def or_(*exprs: Expression) -> Expression:
    """Disjunction with simplification (``x or true`` is ``true``, ``x or false`` is ``x``)."""
    result: Expression = ALWAYS_FALSE
    for expr in exprs:
        _check_expression(expr)
        if isinstance(expr, AlwaysTrue) or isinstance(result, AlwaysTrue):
            return ALWAYS_TRUE
        if isinstance(expr, AlwaysFalse):
            continue
        result = expr if isinstance(result, AlwaysFalse) else Or(result, expr)
    return result


def not_(expr: Expression) -> Expression:
    """Negation with simplification (``not true`` is ``false``, ``not not x`` is ``x``)."""
    _check_expression(expr)
    if isinstance(expr, AlwaysTrue):
        return ALWAYS_FALSE
    if isinstance(expr, AlwaysFalse):
        return ALWAYS_TRUE
    if isinstance(expr, Not):
        return expr.child
    return Not(expr)


def _check_expression(expr: object) -> None:
    if not isinstance(expr, Expression):
        raise ValidationError(
            "expected an expression (use col('name') == value to build one)",
            value=expr,
        )


def rewrite_not(expr: Expression) -> Expression:
    """The same filter with every NOT pushed into the predicates (Java: ``rewriteNot``).

    For unbound predicates the negation is ``Operation.negate``, which is exact except for
    NaN values of float columns (``not (f < 1)`` keeps NaN, ``f >= 1`` does not); bound
    predicates negate exactly (see :meth:`BoundPredicate.negate`). :func:`bind` pushes NOT
    down itself, exactly.
    """
    if isinstance(expr, Not):
        return rewrite_not(expr.child).negate()
    if isinstance(expr, And):
        return and_(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return or_(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


# --------------------------------------------------------------------------- references


_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Words the parser reserves; column parts spelled like them are rendered in backticks.
RESERVED_WORDS = frozenset(
    {"and", "or", "not", "in", "is", "null", "true", "false", "like", "between"}
)


def quote_name(name: str) -> str:
    """Render a (dotted) column name so that the parser reads it back unchanged."""
    parts = name.split(".")
    out = []
    for part in parts:
        if _SIMPLE_NAME.fullmatch(part) and part.lower() not in RESERVED_WORDS:
            out.append(part)
        else:
            out.append("`" + part.replace("`", "``") + "`")
    return ".".join(out)


@safe_repr
@dataclass(frozen=True)
class Reference:
    """An unbound reference to a column by (dotted) name."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError("a column reference needs a non-empty name", value=self.name)

    def __str__(self) -> str:
        return quote_name(self.name)


def _as_reference(term: Reference | str | Column) -> Reference:
    if isinstance(term, Reference):
        return term
    if isinstance(term, str):
        return Reference(term)
    if isinstance(term, Column):
        return term.ref
    raise ValidationError("a predicate needs a column name or Reference", value=term)


@safe_repr
@dataclass(frozen=True)
class BoundReference:
    """A column resolved in a schema: the field, its full name and how to reach it.

    ``path`` holds the field ids from the outermost struct down to the field, ``positions`` the
    index of each step in its struct, ``names`` the field name of each step. ``nullable`` is
    true when the field or any struct containing it is optional.
    """

    field: NestedField
    name: str
    path: tuple[int, ...]
    positions: tuple[int, ...]
    names: tuple[str, ...]
    nullable: bool

    @property
    def field_id(self) -> int:
        return self.field.field_id

    @property
    def field_type(self) -> IcebergType:
        return self.field.field_type

    def get(self, row: Mapping[int, Any] | None) -> Any:
        """This column's value in ``row`` (a struct value: dict of field id -> value).

        Nested fields are read through the containing struct values; a row that holds the
        field id directly at the top level (a flat dict of field id -> value) works too.
        """
        value: Any = row
        for fid in self.path:
            if value is None:
                return None
            if fid not in value and value is row and len(self.path) > 1:
                return row.get(self.path[-1])
            value = value.get(fid)
        return value

    def __str__(self) -> str:
        return quote_name(self.name)


# --------------------------------------------------------------------------- literals


def _is_nan(value: Any) -> bool:
    return (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, Decimal) and value.is_nan()
    )


def _check_literal(value: Any, op_text: str) -> None:
    if value is None:
        hint = "is not null" if op_text in ("!=", "not in") else "is null"
        raise ValidationError(
            f"a null literal never matches with {op_text!r}; use '{hint}' instead", value=value
        )
    if _is_nan(value):
        raise ValidationError(
            f"a NaN literal cannot be compared with {op_text!r}; use is_nan / not_nan instead",
            value=value,
        )
    if isinstance(value, Expression):
        raise ValidationError("a literal must be a value, not an expression", value=value)


def render_literal(value: Any) -> str:
    """Render a Python literal so that :func:`icenb.spec.expression_parser.parse` reads it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"
        return repr(value)  # parsed back as a Decimal, which binds to the same value
    if isinstance(value, Decimal):
        if value.is_infinite():
            return "1e999" if value > 0 else "-1e999"
        text = format(value, "f")
        return text if "." in text else text + ".0"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "X'" + bytes(value).hex().upper() + "'"
    if isinstance(value, uuid.UUID):
        return f"uuid '{value}'"
    if isinstance(value, _dt.datetime):
        kind = "timestamp" if value.tzinfo is None else "timestamptz"
        return f"{kind} '{value.isoformat()}'"
    if isinstance(value, _dt.date):
        return f"date '{value.isoformat()}'"
    if isinstance(value, _dt.time):
        return f"time '{value.isoformat()}'"
    return repr(value)


def _literal_sort_key(value: Any) -> tuple[str, Any]:
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return ("number", value)  # ints, floats and decimals sort together by value
    return (type(value).__name__, value)


def _canonical_literals(values: Iterable[Any], op_text: str) -> tuple[Any, ...]:
    if isinstance(values, (str, bytes)):
        raise ValidationError(f"'{op_text}' needs a collection of values", value=values)
    seen: dict[tuple[str, Any], Any] = {}
    for v in values:
        _check_literal(v, op_text)
        key = (type(v).__name__, v)
        try:
            seen.setdefault(key, v)
        except TypeError:
            raise ValidationError("set literals must be hashable", value=v) from None
    items = list(seen.values())
    try:
        return tuple(sorted(items, key=_literal_sort_key))
    except TypeError:
        return tuple(sorted(items, key=lambda v: (type(v).__name__, repr(v))))


# --------------------------------------------------------------------------- unbound predicates


class UnboundPredicate(Expression):
    """A test on one column named by a :class:`Reference`; ``op`` says which test."""

    __slots__ = ()
    op: ClassVar[Operation]
    term: Reference

    def negate(self) -> Expression:
        return _with_op(self, self.op.negate())


@safe_repr
@dataclass(frozen=True, init=False, repr=False)
class UnaryPredicate(UnboundPredicate):
    """A predicate without a literal: null and NaN tests."""

    term: Reference

    def __init__(self, term: Reference | str) -> None:
        object.__setattr__(self, "term", _as_reference(term))

    def __str__(self) -> str:
        return _render_unary(self.op, str(self.term))


@safe_repr
@dataclass(frozen=True, init=False, repr=False)
class LiteralPredicate(UnboundPredicate):
    """A comparison of a column with one literal value."""

    term: Reference
    literal: Any

    def __init__(self, term: Reference | str, literal: Any) -> None:
        object.__setattr__(self, "term", _as_reference(term))
        _check_literal(literal, _op_text(self.op))
        if self.op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH) and not isinstance(
            literal, str
        ):
            raise ValidationError(
                "starts_with needs a string prefix", field=self.term.name, value=literal
            )
        object.__setattr__(self, "literal", literal)

    def __str__(self) -> str:
        return _render_literal_pred(self.op, str(self.term), render_literal(self.literal))


@safe_repr
@dataclass(frozen=True, init=False, repr=False)
class SetPredicate(UnboundPredicate):
    """A test of a column against a set of literal values (``in`` / ``not in``)."""

    term: Reference
    literals: tuple[Any, ...]

    def __init__(self, term: Reference | str, literals: Iterable[Any]) -> None:
        object.__setattr__(self, "term", _as_reference(term))
        object.__setattr__(self, "literals", _canonical_literals(literals, _op_text(self.op)))

    def __str__(self) -> str:
        return _render_set_pred(self.op, str(self.term), [render_literal(v) for v in self.literals])


class IsNull(UnaryPredicate):
    """The column is null."""

    op = Operation.IS_NULL


class NotNull(UnaryPredicate):
    """The column is not null."""

    op = Operation.NOT_NULL


class IsNaN(UnaryPredicate):
    """The (float or double) column is NaN."""

    op = Operation.IS_NAN


class NotNaN(UnaryPredicate):
    """The (float or double) column is not NaN (null counts as not NaN)."""

    op = Operation.NOT_NAN


class LessThan(LiteralPredicate):
    op = Operation.LT


class LessThanOrEqual(LiteralPredicate):
    op = Operation.LT_EQ


class GreaterThan(LiteralPredicate):
    op = Operation.GT


class GreaterThanOrEqual(LiteralPredicate):
    op = Operation.GT_EQ


class EqualTo(LiteralPredicate):
    op = Operation.EQ


class NotEqualTo(LiteralPredicate):
    op = Operation.NOT_EQ


class StartsWith(LiteralPredicate):
    """The string column starts with the literal prefix."""

    op = Operation.STARTS_WITH


class NotStartsWith(LiteralPredicate):
    """The string column does not start with the literal prefix."""

    op = Operation.NOT_STARTS_WITH


class In(SetPredicate):
    op = Operation.IN


class NotIn(SetPredicate):
    op = Operation.NOT_IN


_UNBOUND_CLASSES: dict[Operation, type[UnboundPredicate]] = {
    cls.op: cls
    for cls in (
        IsNull, NotNull, IsNaN, NotNaN, LessThan, LessThanOrEqual, GreaterThan,
        GreaterThanOrEqual, EqualTo, NotEqualTo, StartsWith, NotStartsWith, In, NotIn,
    )
}


def predicate(op: Operation, term: Reference | str, *values: Any) -> UnboundPredicate:
    """Build the unbound predicate for ``op`` (values: none, one literal, or the set members)."""
    cls = _UNBOUND_CLASSES[op]
    if op.is_unary:
        if values:
            raise ValidationError(f"{op.value} takes no literal", value=values)
        return cls(term)  # type: ignore[call-arg]
    if op.is_set:
        return cls(term, values)  # type: ignore[call-arg]
    if len(values) != 1:
        raise ValidationError(f"{op.value} takes exactly one literal", value=values)
    return cls(term, values[0])  # type: ignore[call-arg]


def _with_op(pred: UnboundPredicate, op: Operation) -> UnboundPredicate:
    if isinstance(pred, LiteralPredicate):
        return predicate(op, pred.term, pred.literal)
    if isinstance(pred, SetPredicate):
        return predicate(op, pred.term, *pred.literals)
    return predicate(op, pred.term)


def _op_text(op: Operation) -> str:
    if op in _SYMBOLS:
        return _SYMBOLS[op]
    return op.value.replace("_", " ")


def _render_unary(op: Operation, term: str) -> str:
    return {
        Operation.IS_NULL: f"{term} is null",
        Operation.NOT_NULL: f"{term} is not null",
        Operation.IS_NAN: f"{term} is nan",
        Operation.NOT_NAN: f"{term} is not nan",
    }[op]


def _render_literal_pred(op: Operation, term: str, literal: str) -> str:
    if op == Operation.STARTS_WITH:
        return f"starts_with({term}, {literal})"
    if op == Operation.NOT_STARTS_WITH:
        return f"not_starts_with({term}, {literal})"
    return f"{term} {_SYMBOLS[op]} {literal}"


def _render_set_pred(op: Operation, term: str, literals: list[str]) -> str:
    word = "in" if op == Operation.IN else "not in"
    return f"{term} {word} ({', '.join(literals)})"


# --------------------------------------------------------------------------- column builder


@safe_repr
class Column:
    """Builds predicates with Python operators: ``col("id") == 5``, ``col("x").isin(1, 2)``."""

    __slots__ = ("ref",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, name: str) -> None:
        self.ref = Reference(name)

    def __repr__(self) -> str:
        return f"col({self.ref.name!r})"

    def __eq__(self, other: object) -> Expression:  # type: ignore[override]
        return EqualTo(self.ref, other)

    def __ne__(self, other: object) -> Expression:  # type: ignore[override]
        return NotEqualTo(self.ref, other)

    def __lt__(self, other: Any) -> Expression:
        return LessThan(self.ref, other)

    def __le__(self, other: Any) -> Expression:
        return LessThanOrEqual(self.ref, other)

    def __gt__(self, other: Any) -> Expression:
        return GreaterThan(self.ref, other)

    def __ge__(self, other: Any) -> Expression:
        return GreaterThanOrEqual(self.ref, other)

    def is_null(self) -> Expression:
        return IsNull(self.ref)

    def not_null(self) -> Expression:
        return NotNull(self.ref)

    def is_nan(self) -> Expression:
        return IsNaN(self.ref)

    def not_nan(self) -> Expression:
        return NotNaN(self.ref)

    def isin(self, *values: Any) -> Expression:
        """``col("x").isin(1, 2)`` or ``col("x").isin([1, 2])``."""
        return In(self.ref, _flatten(values))

    def not_in(self, *values: Any) -> Expression:
        return NotIn(self.ref, _flatten(values))

    def starts_with(self, prefix: str) -> Expression:
        return StartsWith(self.ref, prefix)

    def not_starts_with(self, prefix: str) -> Expression:
        return NotStartsWith(self.ref, prefix)

    def between(self, low: Any, high: Any) -> Expression:
        """``low <= x <= high``."""
        return And(GreaterThanOrEqual(self.ref, low), LessThanOrEqual(self.ref, high))


def _flatten(values: tuple[Any, ...]) -> list[Any]:
    if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
        return list(values[0])
    return list(values)


def col(name: str) -> Column:
    """A column to build predicates on: ``col("id") == 5``, ``(col("a") > 1) & (col("b") < 2)``."""
    return Column(name)


# --------------------------------------------------------------------------- bound predicates


@dataclass(frozen=True, repr=False)
class BoundPredicate(Expression):
    """A predicate on a resolved column; literals use the type's internal representation."""

    op: Operation
    term: BoundReference

    @property
    def ref(self) -> BoundReference:
        return self.term

    def negate(self) -> Expression:
        """The exact complement for the module's null/NaN semantics.

        ``not (f < 1)`` on a float column is ``f >= 1 or is_nan(f)``; null values match
        neither a comparison nor its negation.
        """
        negated = self._with_op(self.op.negate())
        if self.op.is_ordering and isinstance(self.term.field_type, (FloatType, DoubleType)):
            return or_(negated, BoundUnaryPredicate(Operation.IS_NAN, self.term))
        return negated

    def _with_op(self, op: Operation) -> BoundPredicate:
        raise NotImplementedError


@safe_repr
@dataclass(frozen=True, repr=False)
class BoundUnaryPredicate(BoundPredicate):
    """A bound null or NaN test."""

    def _with_op(self, op: Operation) -> BoundPredicate:
        return BoundUnaryPredicate(op, self.term)

    def __str__(self) -> str:
        return _render_unary(self.op, str(self.term))


@safe_repr
@dataclass(frozen=True, repr=False)
class BoundLiteralPredicate(BoundPredicate):
    """A bound comparison with one literal (internal representation)."""

    literal: Any

    def _with_op(self, op: Operation) -> BoundPredicate:
        return BoundLiteralPredicate(op, self.term, self.literal)

    def __str__(self) -> str:
        lit = render_literal(user_literal(self.term.field_type, self.literal))
        return _render_literal_pred(self.op, str(self.term), lit)


@safe_repr
@dataclass(frozen=True, repr=False)
class BoundSetPredicate(BoundPredicate):
    """A bound ``in`` / ``not in`` with its literal set (internal representation)."""

    literals: frozenset[Any]

    def _with_op(self, op: Operation) -> BoundPredicate:
        return BoundSetPredicate(op, self.term, self.literals)

    def __str__(self) -> str:
        t = self.term.field_type
        try:
            ordered = sorted(self.literals)
        except TypeError:
            ordered = sorted(self.literals, key=repr)
        return _render_set_pred(
            self.op, str(self.term), [render_literal(user_literal(t, v)) for v in ordered]
        )


def is_bound(expr: Expression) -> bool:
    """True when ``expr`` contains no unbound predicate."""
    return not any(isinstance(p, UnboundPredicate) for p in _predicates(expr))


def _predicates(expr: Expression) -> Iterator[Expression]:
    if isinstance(expr, (And, Or)):
        yield from _predicates(expr.left)
        yield from _predicates(expr.right)
    elif isinstance(expr, Not):
        yield from _predicates(expr.child)
    elif isinstance(expr, (UnboundPredicate, BoundPredicate)):
        yield expr


def referenced_names(expr: Expression) -> frozenset[str]:
    """Column names used by an expression (bound or unbound)."""
    out: set[str] = set()
    for p in _predicates(expr):
        if isinstance(p, (UnboundPredicate, BoundPredicate)):
            out.add(p.term.name)
    return frozenset(out)


def referenced_field_ids(expr: Expression) -> frozenset[int]:
    """Field ids used by a bound expression (which columns' stats or values are needed)."""
    out: set[int] = set()
    for p in _predicates(expr):
        if isinstance(p, UnboundPredicate):
            raise ValidationError("expression is not bound", value=str(p))
        if isinstance(p, BoundPredicate):
            out.add(p.term.field_id)
    return frozenset(out)


# --------------------------------------------------------------------------- binding

_FLOAT32_MAX = struct.unpack(">f", b"\x7f\x7f\xff\xff")[0]
_DOUBLE_MAX = 1.7976931348623157e308


def bind(
    expr: Expression, schema: Schema | StructType, case_sensitive: bool = True
) -> Expression:
    """Resolve column names and convert literals; NOT is pushed into the predicates exactly.

    Trivially decided predicates are rewritten as the reference implementation does:
    ``in`` with one value becomes ``=``; ``is null`` on a required column is false; a literal
    outside the column type's range (``id < 10**12`` on an int column) decides the predicate
    (true for every non-null value, or false). Literals between two representable values
    (``id < 5.5`` on an int column, ``d = 1.005`` on ``decimal(9, 2)``) are rewritten exactly.
    Raises ``ValidationError`` for unknown columns (with close names), unconvertible literals,
    and tests that do not apply to the column's type.
    """
    _check_expression(expr)
    target = schema if isinstance(schema, Schema) else Schema(*schema.fields)
    return _Binder(target, case_sensitive).bind(expr, False)


class _Binder:
    def __init__(self, schema: Schema, case_sensitive: bool) -> None:
        self.schema = schema
        self.case_sensitive = case_sensitive
        self._refs: dict[str, BoundReference] = {}

    def bind(self, expr: Expression, negate: bool) -> Expression:
        if isinstance(expr, AlwaysTrue):
            return ALWAYS_FALSE if negate else ALWAYS_TRUE
        if isinstance(expr, AlwaysFalse):
            return ALWAYS_TRUE if negate else ALWAYS_FALSE
        if isinstance(expr, Not):
            return self.bind(expr.child, not negate)
        if isinstance(expr, And):
            left, right = self.bind(expr.left, negate), self.bind(expr.right, negate)
            return or_(left, right) if negate else and_(left, right)
        if isinstance(expr, Or):
            left, right = self.bind(expr.left, negate), self.bind(expr.right, negate)
            return and_(left, right) if negate else or_(left, right)
        if isinstance(expr, BoundPredicate):
            return expr.negate() if negate else expr
        if isinstance(expr, UnboundPredicate):
            return self.bind_predicate(expr, negate)
        raise ValidationError("cannot bind this expression", value=expr)

    # -- references --------------------------------------------------------------
    def reference(self, name: str) -> BoundReference:
        found = self._refs.get(name)
        if found is None:
            found = self._resolve(name)
            self._refs[name] = found
        return found

    def _resolve(self, name: str) -> BoundReference:
        schema = self.schema
        field_id = schema.find_field_id(name, self.case_sensitive)
        if field_id is None:
            raise ValidationError(self._unknown_message(name), field=name)
        field = schema.field_by_id(field_id)
        assert field is not None
        full = schema.column_name(field_id) or name
        ancestors = schema.ancestors(field_id)
        for parent in ancestors:
            if not isinstance(parent.field_type, StructType):
                raise ValidationError(
                    "cannot filter on a field inside a list or map", field=full
                )
        chain = [*ancestors, field]
        positions: list[int] = []
        siblings: tuple[NestedField, ...] = schema.fields
        for step in chain:
            positions.append(next(i for i, f in enumerate(siblings) if f.field_id == step.field_id))
            if isinstance(step.field_type, StructType):
                siblings = step.field_type.fields
        return BoundReference(
            field=field,
            name=full,
            path=tuple(f.field_id for f in chain),
            positions=tuple(positions),
            names=tuple(f.name for f in chain),
            nullable=any(not f.required for f in chain),
        )

    def _unknown_message(self, name: str) -> str:
        names = [n for n in (self.schema.column_name(i) for i in self.schema.field_ids()) if n]
        if self.case_sensitive:
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        else:
            lowered = {n.lower(): n for n in names}
            close = [
                lowered[m]
                for m in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
            ]
        if not close:
            close = [n for n in names if n.lower() == name.lower()]
        message = f"no column named {name!r} in the schema"
        if close:
            message += "; did you mean " + ", ".join(repr(c) for c in close) + "?"
        elif names:
            shown = sorted(names)[:20]
            message += "; columns are " + ", ".join(shown) + (", ..." if len(names) > 20 else "")
        return message

    # -- predicates --------------------------------------------------------------
    def bind_predicate(self, pred: UnboundPredicate, negate: bool) -> Expression:
        ref = self.reference(pred.term.name)
        op = pred.op.negate() if negate else pred.op
        t = ref.field_type
        if op.is_unary:
            bound = self._bind_unary(op, ref)
        else:
            self._check_comparable(op, ref)
            if isinstance(pred, SetPredicate):
                bound = self._bind_set(op, ref, pred.literals)
            else:
                assert isinstance(pred, LiteralPredicate)
                bound = self._bind_literal(op, ref, pred.literal)
        if negate and op.is_ordering and isinstance(t, (FloatType, DoubleType)):
            # IEEE: NaN fails every ordering comparison, so it passes their negation.
            bound = or_(bound, BoundUnaryPredicate(Operation.IS_NAN, ref))
        return bound

    def _bind_unary(self, op: Operation, ref: BoundReference) -> Expression:
        t = ref.field_type
        if op in (Operation.IS_NAN, Operation.NOT_NAN):
            if not isinstance(t, (FloatType, DoubleType)):
                raise ValidationError(
                    f"{op.value} applies to float and double columns only, not {t}",
                    field=ref.name, value=str(t),
                )
            return BoundUnaryPredicate(op, ref)
        if isinstance(t, UnknownType):  # every value of an unknown column is null
            return ALWAYS_TRUE if op == Operation.IS_NULL else ALWAYS_FALSE
        if not ref.nullable:
            return ALWAYS_FALSE if op == Operation.IS_NULL else ALWAYS_TRUE
        return BoundUnaryPredicate(op, ref)

    def _check_comparable(self, op: Operation, ref: BoundReference) -> None:
        t = ref.field_type
        what = _op_text(op)
        if isinstance(t, NestedType):
            raise ValidationError(
                f"cannot use {what!r} on a {type(t).__name__.replace('Type', '').lower()} "
                "column; only 'is null' and 'is not null' apply",
                field=ref.name, value=str(t),
            )
        if isinstance(t, (UnknownType, VariantType, GeometryType, GeographyType)):
            raise ValidationError(
                f"cannot use {what!r} on a column of type {t}; only 'is null' and "
                "'is not null' apply",
                field=ref.name, value=str(t),
            )
        if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH) and not isinstance(
            t, StringType
        ):
            raise ValidationError(
                f"starts_with applies to string columns only, not {t}",
                field=ref.name, value=str(t),
            )

    def _all_non_null(self, ref: BoundReference) -> Expression:
        """True for every row whose value is not null (the value decides nothing else)."""
        return BoundUnaryPredicate(Operation.NOT_NULL, ref) if ref.nullable else ALWAYS_TRUE

    def _bind_literal(self, op: Operation, ref: BoundReference, literal: Any) -> Expression:
        conv = _convert_literal(ref, literal, _op_text(op))
        if conv.kind == _EXACT:
            return BoundLiteralPredicate(op, ref, conv.value)
        if op == Operation.EQ:
            return ALWAYS_FALSE
        if op == Operation.NOT_EQ:
            return self._all_non_null(ref)
        if conv.kind == _ABOVE:
            return self._all_non_null(ref) if op in (Operation.LT, Operation.LT_EQ) else (
                ALWAYS_FALSE
            )
        if conv.kind == _BELOW:
            return self._all_non_null(ref) if op in (Operation.GT, Operation.GT_EQ) else (
                ALWAYS_FALSE
            )
        # between two representable values
        if op in (Operation.LT, Operation.LT_EQ):
            return BoundLiteralPredicate(Operation.LT_EQ, ref, conv.low)
        return BoundLiteralPredicate(Operation.GT_EQ, ref, conv.high)

    def _bind_set(
        self, op: Operation, ref: BoundReference, literals: tuple[Any, ...]
    ) -> Expression:
        values: set[Any] = set()
        for lit in literals:
            conv = _convert_literal(ref, lit, _op_text(op))
            if conv.kind == _EXACT:  # other values can never be equal to a column value
                values.add(conv.value)
        if not values:
            return ALWAYS_FALSE if op == Operation.IN else self._all_non_null(ref)
        if len(values) == 1:
            single = Operation.EQ if op == Operation.IN else Operation.NOT_EQ
            return BoundLiteralPredicate(single, ref, next(iter(values)))
        return BoundSetPredicate(op, ref, frozenset(values))


_EXACT, _ABOVE, _BELOW, _BETWEEN = "exact", "above", "below", "between"


@safe_repr
@dataclass(frozen=True)
class _Conversion:
    kind: str
    value: Any = None
    low: Any = None
    high: Any = None


def _literal_error(ref: BoundReference, literal: Any, reason: str = "") -> ValidationError:
    t = ref.field_type
    message = f"cannot convert literal {literal!r} to the type of column {ref.name!r} ({t})"
    if reason:
        message += f": {reason}"
    return ValidationError(message, field=ref.name, value=literal)


def _convert_literal(ref: BoundReference, literal: Any, op_text: str) -> _Conversion:
    """Convert a user literal to the column type's internal value, or say where it falls."""
    t = ref.field_type
    _check_literal(literal, op_text)
    if isinstance(literal, bool) and not isinstance(t, BooleanType):
        raise _literal_error(ref, literal, "a boolean does not compare with this type")
    if isinstance(t, _NUMERIC_TYPES):
        number: Any = literal
        if isinstance(literal, str):  # '5' or '1.25' typed as a string: read it exactly
            number = _parse_number(literal)
            if number is None:
                raise _literal_error(ref, literal, "not a number")
        if isinstance(number, (int, float, Decimal)) and not isinstance(number, bool):
            if _is_nan(number):
                raise _literal_error(ref, literal, "use is_nan / not_nan to test for NaN")
            if isinstance(t, (IntegerType, LongType)):
                return _to_integer(t, number)
            if isinstance(t, (FloatType, DoubleType)):
                return _to_floating(t, number)
            assert isinstance(t, DecimalType)
            return _to_decimal(t, number)
    # values whose internal representation is the Python value itself
    if isinstance(t, StringType) and isinstance(literal, str):
        return _Conversion(_EXACT, literal)
    if isinstance(t, BooleanType) and isinstance(literal, bool):
        return _Conversion(_EXACT, literal)
    if isinstance(t, BinaryType) and isinstance(literal, bytes):
        return _Conversion(_EXACT, literal)
    if isinstance(t, UUIDType) and isinstance(literal, uuid.UUID):
        return _Conversion(_EXACT, literal)
    if isinstance(t, FixedType) and isinstance(literal, bytes) and len(literal) == t.length:
        return _Conversion(_EXACT, literal)
    value = _coerce(ref, literal)
    if _is_nan(value):
        raise _literal_error(ref, literal, "use is_nan / not_nan to test for NaN")
    if isinstance(t, (FloatType, DoubleType)) and isinstance(value, (int, float, Decimal)):
        return _to_floating(t, value)
    return _Conversion(_EXACT, value)


_NUMERIC_TYPES = (IntegerType, LongType, FloatType, DoubleType, DecimalType)
_NUMBER_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _parse_number(text: str) -> int | Decimal | float | None:
    stripped = text.strip()
    lowered = stripped.lower().lstrip("+-")
    if lowered in ("inf", "infinity"):
        return -math.inf if stripped.startswith("-") else math.inf
    if not _NUMBER_TEXT.fullmatch(stripped):
        return None
    if "." not in stripped and "e" not in stripped.lower():
        return int(stripped)
    return Decimal(stripped)


def _coerce(ref: BoundReference, literal: Any) -> Any:
    try:
        return values.coerce(ref.field_type, literal)
    except IcebergError as e:
        raise _literal_error(ref, literal, e.message) from None
    except (TypeError, ValueError, ArithmeticError) as e:
        raise _literal_error(ref, literal, str(e)) from None


def _exact_number(value: int | float | Decimal) -> Decimal | int:
    if isinstance(value, int):
        return value
    return Decimal(value)  # exact binary expansion for floats


def _to_integer(t: IntegerType | LongType, value: int | float | Decimal) -> _Conversion:
    if isinstance(value, (float, Decimal)) and not (
        value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)
    ):
        return _Conversion(_ABOVE if value > 0 else _BELOW)
    exact = _exact_number(value)
    if exact > t.max_value:
        return _Conversion(_ABOVE)
    if exact < t.min_value:
        return _Conversion(_BELOW)
    if isinstance(exact, int):
        return _Conversion(_EXACT, exact)
    low = int(exact.to_integral_value(rounding=ROUND_FLOOR))
    high = int(exact.to_integral_value(rounding=ROUND_CEILING))
    if low == high:
        return _Conversion(_EXACT, low)
    return _Conversion(_BETWEEN, low=low, high=high)


def _to_floating(t: FloatType | DoubleType, value: Any) -> _Conversion:
    if isinstance(value, float) and math.isinf(value):
        return _Conversion(_EXACT, value)
    if isinstance(value, Decimal) and value.is_infinite():
        return _Conversion(_EXACT, math.inf if value > 0 else -math.inf)
    try:
        f = float(value)
    except OverflowError:
        f = math.inf if value > 0 else -math.inf
    limit = _FLOAT32_MAX if isinstance(t, FloatType) else _DOUBLE_MAX
    if math.isinf(f) or abs(f) > limit:  # a finite literal beyond the largest finite value
        if f > 0:
            return _Conversion(_BETWEEN, low=limit, high=math.inf)
        return _Conversion(_BETWEEN, low=-math.inf, high=-limit)
    if isinstance(t, FloatType):  # the reference implementation rounds the literal to float
        f = struct.unpack(">f", struct.pack(">f", f))[0]
    return _Conversion(_EXACT, f)


def _to_decimal(t: DecimalType, value: int | float | Decimal) -> _Conversion:
    if isinstance(value, float):
        if math.isinf(value):
            return _Conversion(_ABOVE if value > 0 else _BELOW)
        d = Decimal(repr(value))  # what the user typed, not the binary expansion
    elif isinstance(value, int):
        d = Decimal(value)
    else:
        if value.is_infinite():
            return _Conversion(_ABOVE if value > 0 else _BELOW)
        d = value
    with localcontext() as ctx:
        ctx.prec = 200
        limit = Decimal(10**t.precision - 1).scaleb(-t.scale)
        if d > limit:
            return _Conversion(_ABOVE)
        if d < -limit:
            return _Conversion(_BELOW)
        quantum = Decimal(1).scaleb(-t.scale)
        try:
            low = d.quantize(quantum, rounding=ROUND_FLOOR)
            high = d.quantize(quantum, rounding=ROUND_CEILING)
        except InvalidOperation:  # pragma: no cover - guarded by the range check
            return _Conversion(_ABOVE if d > 0 else _BELOW)
    if low == high:
        return _Conversion(_EXACT, low)
    return _Conversion(_BETWEEN, low=low, high=high)


# --------------------------------------------------------------------------- unbinding

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)


def user_literal(t: IcebergType, value: Any) -> Any:
    """A Python value a person would write for internal ``value`` of type ``t``.

    Dates, times and timestamps become ``datetime`` objects (nanosecond timestamps become
    ISO strings); other values are returned unchanged. :func:`bind` converts them back.
    """
    try:
        if isinstance(t, DateType) and isinstance(value, int):
            return _EPOCH_DATE + _dt.timedelta(days=value)
        if isinstance(t, TimeType) and isinstance(value, int):
            return (_EPOCH + _dt.timedelta(microseconds=value)).time()
        if isinstance(t, TimestampType) and isinstance(value, int):
            return _EPOCH + _dt.timedelta(microseconds=value)
        if isinstance(t, TimestamptzType) and isinstance(value, int):
            return (_EPOCH + _dt.timedelta(microseconds=value)).replace(tzinfo=_dt.timezone.utc)
        if isinstance(t, (TimestampNanoType, TimestamptzNanoType)) and isinstance(value, int):
            return values.to_human(t, value)  # coerce(t, to_human(t, v)) == v
    except OverflowError:
        return value
    return value


def unbind(expr: Expression) -> Expression:
    """The unbound form of a bound expression (column names and user literals)."""
    if isinstance(expr, And):
        return And(unbind(expr.left), unbind(expr.right))
    if isinstance(expr, Or):
        return Or(unbind(expr.left), unbind(expr.right))
    if isinstance(expr, Not):
        return Not(unbind(expr.child))
    if isinstance(expr, BoundUnaryPredicate):
        return predicate(expr.op, expr.term.name)
    if isinstance(expr, BoundLiteralPredicate):
        return predicate(expr.op, expr.term.name, user_literal(expr.term.field_type, expr.literal))
    if isinstance(expr, BoundSetPredicate):
        t = expr.term.field_type
        return predicate(expr.op, expr.term.name, *(user_literal(t, v) for v in expr.literals))
    return expr
