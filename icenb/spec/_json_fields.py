"""Typed reads of the fields of parsed JSON objects, raising ``InvalidMetadata`` that names them
(and :func:`json_object`, for writing them).

``where`` is the JSON path of the enclosing object (``""`` at the top of a document, else e.g.
``snapshots[3]``); a field's path is ``where.key`` (``snapshots[3].timestamp-ms``). Optional
fields treat JSON ``null`` as absent. Integers are JSON ints, never booleans, and fit in
``bits`` (32: int, 64: long, None: any size).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias, TypeVar, overload

from icenb.errors import InvalidMetadata, ValidationError

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

T = TypeVar("T")
Bits: TypeAlias = Literal[32, 64] | None
_BOUNDS: dict[int, tuple[int, int, str]] = {
    32: (INT_MIN, INT_MAX, "a JSON int"),
    64: (LONG_MIN, LONG_MAX, "a JSON long"),
}
_ABSENT: Any = object()  # obj.get(key, _ABSENT) for a required field: absent, not null


def field_path(where: str, key: str) -> str:
    """The path of field ``key`` of the object at ``where``."""
    return f"{where}.{key}" if where else key


def missing_field(where: str, key: str) -> InvalidMetadata:
    return InvalidMetadata("missing required field", field=field_path(where, key))


def wrong_type(where: str, key: str, value: Any, expected: str) -> InvalidMetadata:
    """The error for ``value`` of field ``key`` not being ``expected`` (or being absent)."""
    if value is _ABSENT:
        return missing_field(where, key)
    return InvalidMetadata(f"wrong JSON type: expected {expected}", field=field_path(where, key),
                           value=value)


def as_object(obj: Any, where: str, what: str) -> Mapping[str, Any]:
    """``obj`` itself, which must be a JSON object (``what`` names it in the error)."""
    if not isinstance(obj, Mapping):
        raise InvalidMetadata(f"{what} must be a JSON object", field=where or None, value=obj)
    return obj


def require(obj: Mapping[str, Any], key: str, where: str) -> Any:
    """The value of a required field, of any JSON type (null included)."""
    if key not in obj:
        raise missing_field(where, key)
    return obj[key]


def is_long(value: Any) -> bool:
    """Whether ``value`` is a JSON long (the unchecked fast paths' test)."""
    return type(value) is int and LONG_MIN <= value <= LONG_MAX


def int_value(value: Any, where: str, key: str, bits: Bits = 32) -> int:
    """``value`` (of field ``key``) as an integer of ``bits`` bits; a bool is not an int."""
    if type(value) is not int:
        raise wrong_type(where, key, value, "a JSON long" if bits == 64 else "a JSON int")
    if bits is not None:
        lo, hi, expected = _BOUNDS[bits]
        if not lo <= value <= hi:
            raise InvalidMetadata(f"out of range for {expected}", field=field_path(where, key),
                                  value=value)
    return value


def req_int(obj: Mapping[str, Any], key: str, where: str, bits: Bits = 32) -> int:
    return int_value(obj.get(key, _ABSENT), where, key, bits)


def opt_int(obj: Mapping[str, Any], key: str, where: str, bits: Bits = 32) -> int | None:
    value = obj.get(key)
    return None if value is None else int_value(value, where, key, bits)


def req_long(obj: Mapping[str, Any], key: str, where: str) -> int:
    return int_value(obj.get(key, _ABSENT), where, key, 64)


def opt_long(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    value = obj.get(key)
    return None if value is None else int_value(value, where, key, 64)


def str_value(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str):
        raise wrong_type(where, key, value, "a JSON string")
    return value


def req_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    return str_value(obj.get(key, _ABSENT), where, key)


def opt_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    return None if value is None else str_value(value, where, key)


def req_bool(obj: Mapping[str, Any], key: str, where: str) -> bool:
    value = obj.get(key, _ABSENT)
    if type(value) is not bool:
        raise wrong_type(where, key, value, "a JSON boolean")
    return value


def json_list(obj: Mapping[str, Any], key: str, where: str, required: bool = False) -> list[Any]:
    """A JSON list; an optional one that is absent or null gives an empty list."""
    value = obj.get(key, _ABSENT if required else None)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise wrong_type(where, key, value, "a JSON list")
    return value


@overload
def str_list(obj: Mapping[str, Any], key: str, where: str, required: bool = False, *,
             nullable: Literal[False] = False) -> list[str]: ...
@overload
def str_list(obj: Mapping[str, Any], key: str, where: str, required: bool = False, *,
             nullable: Literal[True]) -> list[str | None]: ...
def str_list(obj: Mapping[str, Any], key: str, where: str, required: bool = False, *,
             nullable: bool = False) -> list[str] | list[str | None]:
    """A JSON list of strings (``nullable``: or nulls); optional and absent or null: empty."""
    return [None if nullable and v is None else str_value(v, where, f"{key}[{i}]")
            for i, v in enumerate(json_list(obj, key, where, required))]


def parse_each(obj: Mapping[str, Any], key: str, where: str, parse: Callable[..., T],
               required: bool = True) -> tuple[T, ...]:
    """``parse(item, where=<path of item i>)`` for each item of the list field ``key``."""
    at = field_path(where, key)
    return tuple(parse(item, where=f"{at}[{i}]")
                 for i, item in enumerate(json_list(obj, key, where, required)))


def str_map(obj: Mapping[str, Any], key: str, where: str, required: bool = False
            ) -> dict[str, str]:
    """A JSON object of strings; an optional one that is absent or null gives an empty dict."""
    value = obj.get(key, _ABSENT if required else None)
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise wrong_type(where, key, value, "a JSON object of strings")
    at = field_path(where, key)
    return {str(k): str_value(v, at, str(k)) for k, v in value.items()}


def json_object(*items: tuple[str, Any]) -> dict[str, Any]:
    """A JSON object of the ``(key, value)`` items, in order, leaving out None values (absent
    optional fields); tuples become lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in items if v is not None}


def invalid(e: ValidationError, where: str, key: str | None = None) -> InvalidMetadata:
    """``e``, raised building the object read at ``where``, as ``InvalidMetadata`` naming
    ``where.key`` (default: the field ``e`` names; neither: ``where`` itself)."""
    key = key or e.field
    return InvalidMetadata(e.message, field=field_path(where, key) if key else where or None,
                           **({"value": e.value} if e.has_value else {}))
