"""Filter expressions as JSON: the residual filter of a file scan task, and the REST form.

Spec: Appendix C, "File Scan Task Serialization" (``residual-filter``, e.g.
``{"type":"eq","term":"id","value":1}``); the shapes follow the REST catalog's ``Expression``:
``true`` / ``false``; ``{"type": "and"|"or", "left", "right"}``; ``{"type": "not", "child"}``;
``{"type": "is-null"|"not-null"|"is-nan"|"not-nan", "term"}``;
``{"type": "lt"|"lt-eq"|"gt"|"gt-eq"|"eq"|"not-eq"|"starts-with"|"not-starts-with", "term",
"value"}``; ``{"type": "in"|"not-in", "term", "values"}``. A term is a column name.

Literals: with a schema, an expression is bound first and each literal is written in the
column type's single-value JSON (Appendix D, "JSON single-value serialization"), and read back
the same way, so ``from_json(to_json(e, s), s)`` binds to the same expression. Without a
schema, literals are written as plain JSON (decimals, dates and times as strings, bytes as
hex) and read back as those JSON values, which binding coerces.

Decisions: a number where Appendix D asks for a string (Iceberg Java writes timestamp literals
in residual filters as their long value) is read as the internal value;
``{"type": "true"}`` / ``{"type": "false"}`` are read as well as the booleans;
transform terms (``{"type": "transform", ...}``) are refused with ``UnsupportedFeature``, as
icenb's filters name columns only.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.spec import values
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundLiteralPredicate,
    BoundPredicate,
    BoundSetPredicate,
    Expression,
    LiteralPredicate,
    Not,
    Operation,
    Or,
    SetPredicate,
    UnboundPredicate,
    bind,
    is_bound,
    predicate,
    user_literal,
)
from icenb.spec.schema import Schema
from icenb.spec.types import IcebergType

__all__ = ["expression_from_json", "expression_to_json"]

_TYPE_NAMES = {op: op.value.replace("_", "-") for op in Operation}
_OPS_BY_NAME = {name: op for op, name in _TYPE_NAMES.items()}


def expression_to_json(expr: Expression | bool, schema: Schema | None = None, *,
                       case_sensitive: bool = True) -> Any:
    """The JSON of ``expr`` (``True``/``False`` stand for always-true/false).

    With ``schema``, unbound expressions are bound first (unknown columns raise
    ``ValidationError``) and literals use their column type's single-value JSON.
    """
    if expr is True or isinstance(expr, AlwaysTrue):
        return True
    if expr is False or isinstance(expr, AlwaysFalse):
        return False
    if not isinstance(expr, Expression):
        raise ValidationError("not a filter expression", field="residual-filter", value=expr)
    if schema is not None and not is_bound(expr):
        expr = bind(expr, schema, case_sensitive)
    return _to_json(expr)


def _to_json(expr: Expression) -> Any:
    if isinstance(expr, AlwaysTrue):
        return True
    if isinstance(expr, AlwaysFalse):
        return False
    if isinstance(expr, And | Or):
        return {"type": "and" if isinstance(expr, And) else "or",
                "left": _to_json(expr.left), "right": _to_json(expr.right)}
    if isinstance(expr, Not):
        return {"type": "not", "child": _to_json(expr.child)}
    if isinstance(expr, BoundPredicate):
        out: dict[str, Any] = {"type": _TYPE_NAMES[expr.op], "term": expr.term.name}
        t = expr.term.field_type
        if isinstance(expr, BoundLiteralPredicate):
            out["value"] = values.to_json(t, expr.literal)
        elif isinstance(expr, BoundSetPredicate):
            out["values"] = [values.to_json(t, v) for v in _ordered(t, expr.literals)]
        return out
    if isinstance(expr, UnboundPredicate):
        out = {"type": _TYPE_NAMES[expr.op], "term": expr.term.name}
        if isinstance(expr, LiteralPredicate):
            out["value"] = _plain(expr.literal)
        elif isinstance(expr, SetPredicate):
            out["values"] = [_plain(v) for v in expr.literals]
        return out
    raise UnsupportedFeature("this expression has no JSON form", field="residual-filter",
                             value=str(expr))


def _ordered(t: IcebergType, items: frozenset[Any]) -> list[Any]:
    try:
        return sorted(items, key=lambda v: _SortKey(t, v))
    except (TypeError, IcebergError):
        return sorted(items, key=repr)


class _SortKey:
    """Orders literals by the spec's ordering for their type (for deterministic output)."""

    __slots__ = ("t", "v")

    def __init__(self, t: IcebergType, v: Any) -> None:
        self.t = t
        self.v = v

    def __lt__(self, other: _SortKey) -> bool:
        return values.compare(self.t, self.v, other.v) < 0


def _plain(value: Any) -> Any:
    """A user literal as plain JSON."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    raise ValidationError("this literal has no JSON form", field="residual-filter",
                          value=repr(value))


def expression_from_json(obj: Any, schema: Schema | None = None, *,
                         case_sensitive: bool = True,
                         where: str = "residual-filter") -> Expression:
    """An unbound expression from its JSON; with ``schema``, literals are decoded by their
    column's type (Appendix D JSON). Malformed JSON raises ``InvalidMetadata``-style
    ``ValidationError`` naming ``where``."""
    return _from_json(obj, schema, case_sensitive, where)


def _from_json(obj: Any, schema: Schema | None, case_sensitive: bool, where: str) -> Expression:
    if obj is True:
        return AlwaysTrue()
    if obj is False:
        return AlwaysFalse()
    if not isinstance(obj, Mapping):
        raise ValidationError("an expression must be true, false or an object", field=where,
                              value=obj)
    kind = obj.get("type")
    if kind == "true":
        return AlwaysTrue()
    if kind == "false":
        return AlwaysFalse()
    if kind in ("and", "or"):
        left = _from_json(_need(obj, "left", where), schema, case_sensitive, f"{where}.left")
        right = _from_json(_need(obj, "right", where), schema, case_sensitive, f"{where}.right")
        return And(left, right) if kind == "and" else Or(left, right)
    if kind == "not":
        return Not(_from_json(_need(obj, "child", where), schema, case_sensitive,
                              f"{where}.child"))
    op = _OPS_BY_NAME.get(kind) if isinstance(kind, str) else None
    if op is None:
        raise ValidationError("unknown expression type", field=f"{where}.type", value=kind)
    term = _need(obj, "term", where)
    if isinstance(term, Mapping):
        raise UnsupportedFeature("transform and bound terms are not supported in filters",
                                 field=f"{where}.term", value=term)
    if not isinstance(term, str) or not term:
        raise ValidationError("a term must be a column name", field=f"{where}.term",
                              value=term)
    field_type = _column_type(schema, term, case_sensitive, where)
    if op.is_unary:
        return predicate(op, term)
    if op.is_set:
        raw = _need(obj, "values", where)
        if not isinstance(raw, list):
            raise ValidationError("values must be a list", field=f"{where}.values",
                                  value=raw)
        return predicate(op, term, *(_literal(field_type, v, f"{where}.values") for v in raw))
    return predicate(op, term, _literal(field_type, _need(obj, "value", where),
                                        f"{where}.value"))


def _column_type(schema: Schema | None, term: str, case_sensitive: bool,
                 where: str) -> IcebergType | None:
    if schema is None:
        return None
    f = schema.field_by_name(term, case_sensitive)
    if f is None:
        raise ValidationError("the filter names a column the schema does not have",
                              field=f"{where}.term", value=term)
    return f.field_type


def _literal(t: IcebergType | None, raw: Any, where: str) -> Any:
    if t is None:
        return raw
    try:
        return user_literal(t, values.from_json(t, raw))
    except IcebergError as e:
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return raw  # the internal value (Java writes timestamps in residuals as longs)
        raise ValidationError(f"bad literal for a {t} column: {e.message}", field=where,
                              value=raw) from None


def _need(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise ValidationError(f"missing '{key}'", field=f"{where}.{key}")
    return obj[key]
