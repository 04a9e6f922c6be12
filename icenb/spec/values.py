"""Single values of every Iceberg type: binary and JSON forms, coercion, ordering and display.

Spec: Appendix D "Single-value serialization" (binary, bound and JSON forms); "Schema Evolution"
(bounds written before a type promotion); Manifests, data_file note [2] (float order, no NaN
bounds); "Sorting" (floating-point order); Appendix G (geometry as WKB / WKT).

Values use the Python representation documented in :mod:`icenb.spec.types`; ``None`` is null.
Geometry and geography *bounds* are points: ``(x, y)``, ``(x, y, z)`` or ``(x, y, z, m)`` with
``z`` NaN for an XYM point.

Choices where the spec is silent (following Iceberg Java where it has an answer):

* JSON float/double NaN and infinities are written as the strings ``"NaN"``, ``"Infinity"`` and
  ``"-Infinity"`` (what Java's Jackson writes); reading accepts those strings and JSON numbers.
* A JSON decimal must carry exactly the type's scale (``"14.2"`` is not a ``decimal(9, 2)``), as
  in Java. A negative scale is written ``<unscaled>E+<-scale>`` (``"123E+2"``), so the exponent
  equals the negated scale as the spec says (Java writes the equivalent ``"1.23E+4"``).
* A JSON timestamptz must have a zero offset (``+00:00``, ``Z``), as in Java; :func:`coerce`
  accepts any offset and converts to UTC.
* JSON times and timestamps are written with 6 (micros) or 9 (nanos) fractional digits; reading
  accepts 0 to 9 digits but rejects digits the type cannot hold (Java truncates silently).
* JSON fixed/binary are written as lowercase hex (the spec's example; Java writes uppercase);
  either case is read.
* Years outside 0000-9999 use ISO-8601 expanded years (``+10000-01-01``, ``-0001-01-01``),
  like Java; all date arithmetic is integer arithmetic, so any int/long value round-trips.
* Order: floats follow IEEE totalOrder (-NaN < -Infinity < ... < -0.0 < 0.0 < ... < Infinity
  < NaN), uuids are unsigned 128-bit big-endian, strings by code point, bytes unsigned;
  nulls inside structs and lists sort first.
* :func:`to_human` shows bytes as ``0x`` + hex, fractional seconds in groups of 3 digits (none
  when zero), and ``coerce(t, to_human(t, v)) == v`` for every primitive value.
"""

from __future__ import annotations

import json
import math
import re
import struct
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
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
    ListType,
    LongType,
    MapType,
    NestedField,
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
    "MICROS_PER_DAY",
    "NANOS_PER_DAY",
    "coerce",
    "compare",
    "days_to_ymd",
    "from_bound_bytes",
    "from_bytes",
    "from_json",
    "from_unscaled",
    "sort_key",
    "to_bound_bytes",
    "to_bytes",
    "to_human",
    "to_json",
    "unscaled",
    "validate",
    "wkb_to_wkt",
    "wkt_to_wkb",
    "ymd_to_days",
]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = 86_400_000_000_000

_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")

_TS_MICROS = (TimestampType, TimestamptzType)
_TS_NANOS = (TimestampNanoType, TimestamptzNanoType)
_TS_ZONED = (TimestamptzType, TimestamptzNanoType)
_TS_ALL = (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)
_GEO = (GeometryType, GeographyType)
_NESTED = (StructType, ListType, MapType)
_BYTES_LIKE = (bytes, bytearray, memoryview)


def _bad(t: IcebergType, message: str, value: Any, field: str | None) -> ValidationError:
    return ValidationError(f"{t}: {message}", field=field, value=value)


def _child(field: str | None, name: str) -> str:
    return name if field is None else f"{field}.{name}"


# --------------------------------------------------------------------------- calendar


def ymd_to_days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 of a proleptic Gregorian date, for any year (integer arithmetic)."""
    y = year - 1 if month <= 2 else year
    era = y // 400
    yoe = y - era * 400
    mp = month - 3 if month > 2 else month + 9
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def days_to_ymd(days: int) -> tuple[int, int, int]:
    """The proleptic Gregorian (year, month, day) ``days`` after 1970-01-01 (any range)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month, day


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _format_date(days: int) -> str:
    y, m, d = days_to_ymd(days)
    if 0 <= y <= 9999:
        return f"{y:04d}-{m:02d}-{d:02d}"
    year = f"+{y}" if y > 0 else f"-{-y:04d}"  # ISO-8601 expanded year, as Java prints it
    return f"{year}-{m:02d}-{d:02d}"


def _format_time(nanos_of_day: int, digits: int | None, *, trim: bool = False) -> str:
    """``HH:MM:SS`` plus ``digits`` fractional digits, or (None) 0/3/6/9 digits as needed, or
    (``trim``) the fraction without trailing zeros (Java's ``ISO_LOCAL_TIME``)."""
    seconds, frac = divmod(nanos_of_day, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    fraction = f"{frac:09d}"
    if digits is not None:
        return f"{text}.{fraction[:digits]}"
    if frac == 0:
        return text
    if trim:
        return f"{text}.{fraction.rstrip('0')}"
    for n in (3, 6):
        if frac % 10 ** (9 - n) == 0:
            return f"{text}.{fraction[:n]}"
    return f"{text}.{fraction}"


def _format_timestamp(t: IcebergType, value: int, digits: int | None, *,
                      trim: bool = False) -> str:
    nanos = value * 1000 if isinstance(t, _TS_MICROS) else value
    days, nanos_of_day = divmod(nanos, NANOS_PER_DAY)
    if digits is not None and isinstance(t, _TS_MICROS):
        digits = 6
    text = f"{_format_date(days)}T{_format_time(nanos_of_day, digits, trim=trim)}"
    return text + "+00:00" if isinstance(t, _TS_ZONED) else text


_DATE_RE = r"(?P<year>[+-]\d{4,}|\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
_TIME_RE = r"(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,9}))?)?"
_OFFSET_STRICT = r"(?P<offset>[Zz]|[+-]\d{2}:\d{2}(?::\d{2})?)"
_OFFSET_LENIENT = r"(?P<offset>[Zz]|UTC|utc|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)"
_DATE_ONLY = re.compile(_DATE_RE)
_TIME_ONLY = re.compile(_TIME_RE)
_TIMESTAMP_STRICT = re.compile(f"{_DATE_RE}[Tt]{_TIME_RE}{_OFFSET_STRICT}?")
_TIMESTAMP_LENIENT = re.compile(f"{_DATE_RE}(?:(?:[Tt]| +){_TIME_RE})? *{_OFFSET_LENIENT}?")


def _date_days(m: re.Match[str]) -> int:
    year, month, day = int(m["year"]), int(m["month"]), int(m["day"])
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        raise ValueError("no such date")
    return ymd_to_days(year, month, day)


def _time_nanos(m: re.Match[str]) -> int:
    hour, minute, second = int(m["hour"]), int(m["minute"]), int(m["second"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError("no such time")
    fraction = (m["fraction"] or "").ljust(9, "0")
    return ((hour * 60 + minute) * 60 + second) * 1_000_000_000 + int(fraction)


def _offset_seconds(text: str) -> int:
    if text in ("Z", "z", "UTC", "utc"):
        return 0
    digits = text[1:].replace(":", "")
    hours, minutes, seconds = int(digits[0:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours > 18 or minutes > 59 or seconds > 59:
        raise ValueError("no such offset")
    total = hours * 3600 + minutes * 60 + seconds
    return -total if text[0] == "-" else total


def _nanos_to_value(t: IcebergType, nanos: int, value: Any, field: str | None) -> int:
    """Nanoseconds from epoch to the unit of timestamp type ``t``, checking precision and range."""
    if isinstance(t, _TS_MICROS):
        if nanos % 1000:
            raise _bad(t, "more precise than microseconds", value, field)
        nanos //= 1000
    if not LONG_MIN <= nanos <= LONG_MAX:
        raise _bad(t, "out of range (64-bit)", value, field)
    return nanos


def _parse_timestamp(t: IcebergType, text: str, strict: bool, field: str | None) -> int:
    pattern = _TIMESTAMP_STRICT if strict else _TIMESTAMP_LENIENT
    m = pattern.fullmatch(text if strict else text.strip())
    if m is None:
        raise _bad(t, "not an ISO-8601 timestamp", text, field)
    try:
        nanos = _date_days(m) * NANOS_PER_DAY + (_time_nanos(m) if m["hour"] else 0)
        offset = None if m["offset"] is None else _offset_seconds(m["offset"])
    except ValueError as e:
        raise _bad(t, f"not an ISO-8601 timestamp ({e})", text, field) from None
    zoned = isinstance(t, _TS_ZONED)
    if offset is not None:
        if not zoned:
            raise _bad(t, "a timestamp without time zone must not have an offset", text, field)
        if strict and offset != 0:
            raise _bad(t, "the offset must be +00:00", text, field)
        nanos -= offset * 1_000_000_000
    elif zoned and strict:
        raise _bad(t, "a timestamptz must include a zone offset (+00:00)", text, field)
    return _nanos_to_value(t, nanos, text, field)


def _parse_date(t: IcebergType, text: str, strict: bool, field: str | None) -> int:
    m = _DATE_ONLY.fullmatch(text if strict else text.strip())
    if m is None:
        raise _bad(t, "not an ISO-8601 date", text, field)
    try:
        days = _date_days(m)
    except ValueError:
        raise _bad(t, "not a valid date", text, field) from None
    if not INT_MIN <= days <= INT_MAX:
        raise _bad(t, "out of range (32-bit days)", text, field)
    return days


def _parse_time(t: IcebergType, text: str, strict: bool, field: str | None) -> int:
    m = _TIME_ONLY.fullmatch(text if strict else text.strip())
    if m is None:
        raise _bad(t, "not an ISO-8601 time", text, field)
    try:
        nanos = _time_nanos(m)
    except ValueError:
        raise _bad(t, "not a valid time of day", text, field) from None
    if nanos % 1000:
        raise _bad(t, "more precise than microseconds", text, field)
    return nanos // 1000


# --------------------------------------------------------------------------- numbers


def _to_f32(x: float) -> float:
    """Round a double to the nearest float32; OverflowError when it is out of float32 range."""
    return float(_F32.unpack(_F32.pack(x))[0])


def _f32_text(x: float) -> str:
    """The shortest decimal text that reads back as the same float32 value."""
    f = _to_f32(x)
    for precision in range(1, 10):
        text = f"{f:.{precision}g}"
        try:
            if _to_f32(float(text)) == f:
                return repr(float(text))
        except OverflowError:  # a short text of a value near the float32 maximum rounds past it
            continue
    return repr(f)  # pragma: no cover - 9 significant digits always suffice


_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_LENIENT_SPECIAL_FLOATS = {
    "nan": math.nan, "+nan": math.nan, "-nan": -math.nan,
    "inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf,
    "-inf": -math.inf, "-infinity": -math.inf,
}
_FLOAT_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INT_TEXT = re.compile(r"[+-]?\d+")


def _float_json(x: float, as_float32: bool) -> Any:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return float(_f32_text(x)) if as_float32 else x


def _float_human(x: float, as_float32: bool) -> str:
    special = _float_json(x, as_float32)
    return special if isinstance(special, str) else (_f32_text(x) if as_float32 else repr(x))


def _float_value(t: IcebergType, x: float, value: Any, field: str | None) -> float:
    if isinstance(t, FloatType):
        try:
            return _to_f32(x)
        except OverflowError:
            raise _bad(t, "out of range for a 32-bit float", value, field) from None
    return x


def _float_key(x: float) -> int:
    """IEEE 754 totalOrder as an int: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN."""
    bits = _U64.unpack(_F64.pack(x))[0]
    magnitude = 0x7FF8_0000_0000_0000 if x != x else bits & 0x7FFF_FFFF_FFFF_FFFF
    return -magnitude - 1 if bits >> 63 else magnitude


# --------------------------------------------------------------------------- decimals


def unscaled(value: Decimal) -> int:
    """The unscaled integer of a finite decimal (``Decimal("14.20")`` -> 1420)."""
    sign, digits, _ = value.as_tuple()
    number = int("".join(map(str, digits))) if digits else 0
    return -number if sign else number


def from_unscaled(unscaled_value: int, scale: int) -> Decimal:
    """The decimal ``unscaled_value * 10**-scale`` with exponent exactly ``-scale``."""
    return Decimal(f"{unscaled_value}E{-scale}")


def _decimal_text(unscaled_value: int, scale: int) -> str:
    """Spec JSON form: scale digits after the point, or ``<unscaled>E+<-scale>`` if negative."""
    if scale < 0:
        return f"{unscaled_value}E+{-scale}"
    sign = "-" if unscaled_value < 0 else ""
    digits = str(abs(unscaled_value)).rjust(scale + 1, "0")
    if scale == 0:
        return sign + digits
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def _check_decimal(t: DecimalType, value: Any, field: str | None) -> int:
    """The unscaled value of a decimal that is exactly a value of ``t`` (scale and precision)."""
    if not isinstance(value, Decimal) or not value.is_finite():
        raise _bad(t, "expected a finite decimal.Decimal", value, field)
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int) or -exponent != t.scale:
        raise _bad(t, f"the scale must be {t.scale}", value, field)
    number = unscaled(value)
    if len(str(abs(number))) > t.precision:
        raise _bad(t, f"more than {t.precision} digits", value, field)
    return number


def _rescale(t: DecimalType, value: Decimal, original: Any, field: str | None) -> Decimal:
    """Exactly rescale a decimal to the scale of ``t``; never rounds."""
    if not value.is_finite():
        raise _bad(t, "not a finite number", original, field)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    number, scale = unscaled(value), -exponent
    if scale < t.scale:
        number *= 10 ** (t.scale - scale)
    elif scale > t.scale:
        quotient, remainder = divmod(abs(number), 10 ** (scale - t.scale))
        if remainder:
            raise _bad(t, f"has more fractional digits than the scale {t.scale}", original, field)
        number = -quotient if number < 0 else quotient
    if len(str(abs(number))) > t.precision:
        raise _bad(t, f"more than {t.precision} digits", original, field)
    return from_unscaled(number, t.scale)


_DECIMAL_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _parse_decimal(t: DecimalType, text: str, field: str | None) -> Decimal:
    if _DECIMAL_TEXT.fullmatch(text) is None:
        raise _bad(t, "not a decimal number", text, field)
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid numbers
        raise _bad(t, "not a decimal number", text, field) from None


def _decimal_bytes(number: int) -> bytes:
    """Two's-complement big-endian with the minimum number of bytes (spec: Appendix D)."""
    length = (number if number >= 0 else ~number).bit_length() // 8 + 1
    return number.to_bytes(length, "big", signed=True)


# --------------------------------------------------------------------------- nested helpers


def _struct_items(
    t: StructType, value: Any, field: str | None
) -> Iterator[tuple[NestedField, Any, str]]:
    """(field, value, path) of the fields present in a struct value (dict by field id)."""
    if not isinstance(value, Mapping):
        raise _bad(t, "a struct value must be a dict keyed by field id", value, field)
    for key in value:
        if not isinstance(key, int) or isinstance(key, bool) or t.field(key) is None:
            raise _bad(t, "not a field id of the struct", key, field)
    for f in t.fields:
        if f.field_id in value:
            child = value[f.field_id]
            path = _child(field, f.name)
            if child is None and f.required:
                raise _bad(f.field_type, "a required field cannot be null", None, path)
            yield f, child, path


def _list_items(t: ListType, value: Any, field: str | None) -> Iterator[tuple[Any, str]]:
    if not isinstance(value, (list, tuple)):
        raise _bad(t, "a list value must be a list", value, field)
    path = _child(field, "element")
    for element in value:
        if element is None and t.element_required:
            raise _bad(t.element_type, "a required element cannot be null", None, path)
        yield element, path


def _map_items(t: MapType, value: Any, field: str | None) -> Iterator[tuple[Any, Any, str, str]]:
    if not isinstance(value, Mapping):
        raise _bad(t, "a map value must be a dict", value, field)
    key_path, value_path = _child(field, "key"), _child(field, "value")
    for k, v in value.items():
        if k is None:
            raise _bad(t.key_type, "a map key cannot be null", None, key_path)
        if v is None and t.value_required:
            raise _bad(t.value_type, "a required map value cannot be null", None, value_path)
        yield k, v, key_path, value_path


def _map_put(t: MapType, out: dict[Any, Any], key: Any, value: Any, field: str | None) -> None:
    try:
        duplicate = key in out
    except TypeError:
        raise _bad(t, "map keys of this type cannot be held in a Python dict", key,
                   field) from None
    if duplicate:
        raise _bad(t, "duplicate map key", key, field)
    out[key] = value


# --------------------------------------------------------------------------- validation


def validate(t: IcebergType, value: Any, *, field: str | None = None) -> None:
    """Raise ``ValidationError`` unless ``value`` is a valid value of ``t`` (None is null)."""
    if value is not None:
        _check(t, value, field)


def _check_int(t: IcebergType, value: Any, low: int, high: int, field: str | None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(t, "expected an int", value, field)
    if not low <= value <= high:
        raise _bad(t, f"out of range [{low}, {high}]", value, field)


def _check(t: IcebergType, value: Any, field: str | None) -> None:
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise _bad(t, "expected a bool", value, field)
    elif isinstance(t, (IntegerType, DateType)):
        _check_int(t, value, INT_MIN, INT_MAX, field)
    elif isinstance(t, (LongType, *_TS_ALL)):
        _check_int(t, value, LONG_MIN, LONG_MAX, field)
    elif isinstance(t, TimeType):
        _check_int(t, value, 0, MICROS_PER_DAY - 1, field)
    elif isinstance(t, (FloatType, DoubleType)):
        if not isinstance(value, float):
            raise _bad(t, "expected a float", value, field)
        _float_value(t, value, value, field)
    elif isinstance(t, DecimalType):
        _check_decimal(t, value, field)
    elif isinstance(t, StringType):
        if not isinstance(value, str):
            raise _bad(t, "expected a str", value, field)
    elif isinstance(t, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise _bad(t, "expected a uuid.UUID", value, field)
    elif isinstance(t, (FixedType, BinaryType, *_GEO)):
        if not isinstance(value, _BYTES_LIKE):
            raise _bad(t, "expected bytes", value, field)
        if isinstance(t, FixedType) and len(value) != t.length:
            raise _bad(t, f"expected exactly {t.length} bytes, got {len(value)}", value, field)
    elif isinstance(t, StructType):
        for f, child, path in _struct_items(t, value, field):
            validate(f.field_type, child, field=path)
    elif isinstance(t, ListType):
        for element, path in _list_items(t, value, field):
            validate(t.element_type, element, field=path)
    elif isinstance(t, MapType):
        for k, v, key_path, value_path in _map_items(t, value, field):
            _check(t.key_type, k, key_path)
            validate(t.value_type, v, field=value_path)
    elif isinstance(t, UnknownType):
        raise _bad(t, "the unknown type holds only null", value, field)
    elif isinstance(t, VariantType):
        raise UnsupportedFeature("variant: single values are not supported", field=field,
                                 value=value)
    else:  # pragma: no cover - every type is handled above
        raise _bad(t, "unsupported type", value, field)


# --------------------------------------------------------------------------- binary


def to_bytes(t: IcebergType, value: Any, *, field: str | None = None) -> bytes:
    """Binary single-value serialization of a non-null value (spec: Appendix D)."""
    if value is None:
        raise _bad(t, "null has no binary single-value form", None, field)
    if isinstance(t, (*_NESTED, UnknownType, VariantType)):
        raise _bad(t, "binary single-value serialization is not supported", value, field)
    _check(t, value, field)
    if isinstance(t, BooleanType):
        return b"\x01" if value else b"\x00"
    if isinstance(t, (IntegerType, DateType)):
        return _I32.pack(value)
    if isinstance(t, (LongType, TimeType, *_TS_ALL)):
        return _I64.pack(value)
    if isinstance(t, FloatType):
        return _F32.pack(value)
    if isinstance(t, DoubleType):
        return _F64.pack(value)
    if isinstance(t, DecimalType):
        return _decimal_bytes(unscaled(value))
    if isinstance(t, StringType):
        try:
            return value.encode("utf-8")  # type: ignore[no-any-return]
        except UnicodeEncodeError:
            raise _bad(t, "not encodable as UTF-8", value, field) from None
    if isinstance(t, UUIDType):
        return bytes(value.bytes)
    return bytes(value)  # fixed, binary, geometry/geography WKB


def from_bytes(t: IcebergType, data: bytes | bytearray | memoryview, *,
               field: str | None = None) -> Any:
    """Read a binary single value (spec: Appendix D).

    Bounds written before a type promotion are read by their length (spec: Schema Evolution):
    4 bytes for a long column are an int, for a double a float, for timestamp/timestamp_ns a
    date (converted to the timestamp at midnight). Decimals of any length are accepted.
    """
    b = data if isinstance(data, bytes) else bytes(data)
    n = len(b)

    def wrong_length(expected: str) -> ValidationError:
        return _bad(t, f"expected {expected} bytes, got {n}", b, field)

    if isinstance(t, (IntegerType, DateType)):
        if n != 4:
            raise wrong_length("4")
        return int(_I32.unpack(b)[0])
    if isinstance(t, (LongType, TimestampType, TimestampNanoType)):
        if n == 8:
            return int(_I64.unpack(b)[0])
        if n != 4:
            raise wrong_length("8 (or 4, written before a promotion)")
        promoted = int(_I32.unpack(b)[0])
        if isinstance(t, LongType):
            return promoted
        per_day = MICROS_PER_DAY if isinstance(t, TimestampType) else NANOS_PER_DAY
        number = promoted * per_day  # a date bound, read as midnight of that day
        if not LONG_MIN <= number <= LONG_MAX:
            raise _bad(t, "a date bound out of range for this timestamp type", promoted, field)
        return number
    if isinstance(t, (TimeType, TimestamptzType, TimestamptzNanoType)):
        if n != 8:
            raise wrong_length("8")
        number = int(_I64.unpack(b)[0])
        if isinstance(t, TimeType) and not 0 <= number < MICROS_PER_DAY:
            raise _bad(t, "not a time of day (microseconds from midnight)", number, field)
        return number
    if isinstance(t, DoubleType):
        if n == 8:
            return float(_F64.unpack(b)[0])
        if n != 4:
            raise wrong_length("8 (or 4, written before a promotion)")
        return float(_F32.unpack(b)[0])
    if isinstance(t, FloatType):
        if n != 4:
            raise wrong_length("4")
        return float(_F32.unpack(b)[0])
    if isinstance(t, BooleanType):
        if n != 1:
            raise wrong_length("1")
        return b != b"\x00"
    if isinstance(t, DecimalType):
        if n == 0:
            raise wrong_length("at least 1")
        return from_unscaled(int.from_bytes(b, "big", signed=True), t.scale)
    if isinstance(t, StringType):
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            raise _bad(t, "not valid UTF-8", b, field) from None
    if isinstance(t, UUIDType):
        if n != 16:
            raise wrong_length("16")
        return uuid.UUID(bytes=b)
    if isinstance(t, FixedType):
        if n != t.length:
            raise wrong_length(str(t.length))
        return b
    if isinstance(t, (BinaryType, *_GEO)):
        return b
    raise _bad(t, "binary single-value serialization is not supported", b, field)


def to_bound_bytes(t: IcebergType, value: Any, *, field: str | None = None) -> bytes:
    """Serialize a lower/upper bound (spec: Appendix D "Bound serialization", Manifests [2]).

    Like :func:`to_bytes`, but NaN is never a bound, and geometry/geography bounds are points
    ``(x, y[, z[, m]])`` encoded as x:y, x:y:z, x:y:NaN:m or x:y:z:m little-endian doubles.
    """
    if isinstance(t, _GEO):
        return _point_to_bytes(t, value, field)
    if isinstance(t, VariantType):
        raise UnsupportedFeature("variant: bounds are not supported", field=field, value=value)
    if isinstance(value, float) and math.isnan(value):
        raise _bad(t, "NaN must not be written as a lower or upper bound", value, field)
    return to_bytes(t, value, field=field)


def from_bound_bytes(t: IcebergType, data: bytes | bytearray | memoryview, *,
                     field: str | None = None) -> Any:
    """Read a lower/upper bound: :func:`from_bytes`, except geometry/geography give a point."""
    if isinstance(t, _GEO):
        b = bytes(data)
        if len(b) not in (16, 24, 32):
            raise _bad(t, f"a bound point has 16, 24 or 32 bytes, got {len(b)}", b, field)
        return struct.unpack(f"<{len(b) // 8}d", b)
    if isinstance(t, VariantType):
        raise UnsupportedFeature("variant: bounds are not supported", field=field,
                                 value=bytes(data))
    return from_bytes(t, data, field=field)


def _point_to_bytes(t: IcebergType, value: Any, field: str | None) -> bytes:
    if (
        not isinstance(value, (tuple, list))
        or not 2 <= len(value) <= 4
        or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in value)
    ):
        raise _bad(t, "a bound is a point (x, y), (x, y, z) or (x, y, z, m)", value, field)
    coords = [float(c) for c in value]
    x, y = coords[0], coords[1]
    if math.isnan(x) or math.isnan(y):
        raise _bad(t, "x and y of a bound must not be NaN", value, field)
    z = coords[2] if len(coords) > 2 else math.nan
    m = coords[3] if len(coords) > 3 else math.nan
    if math.isnan(m):
        return struct.pack("<2d", x, y) if math.isnan(z) else struct.pack("<3d", x, y, z)
    return struct.pack("<4d", x, y, z, m)


# --------------------------------------------------------------------------- order


def sort_key(t: IcebergType, value: Any) -> Any:
    """A key whose Python order is the spec order of valid values of ``t``.

    Spec: "Sorting" (floats), Manifests note [2] (-0.0 before 0.0). Nulls inside structs and
    lists sort first; maps, geometry, geography, variant and unknown have no order.
    """
    if isinstance(t, (FloatType, DoubleType)):
        return _float_key(value)
    if isinstance(t, UUIDType):
        return value.int
    if isinstance(t, (FixedType, BinaryType)):
        return bytes(value)
    if isinstance(t, StructType):
        return tuple(
            (0,) if value.get(f.field_id) is None else (1, sort_key(f.field_type,
                                                                    value[f.field_id]))
            for f in t.fields
        )
    if isinstance(t, ListType):
        return tuple((0,) if e is None else (1, sort_key(t.element_type, e)) for e in value)
    if isinstance(t, (MapType, UnknownType, VariantType, *_GEO)):
        raise _bad(t, "values of this type have no order", value, None)
    return value  # bool, ints, dates/times/timestamps, Decimal, str (code point order)


def compare(t: IcebergType, a: Any, b: Any) -> int:
    """-1, 0 or 1 as ``a`` sorts before, with or after ``b`` in the spec order of ``t``."""
    if a is None or b is None:
        raise _bad(t, "null has no order (compare non-null values)", (a, b), None)
    try:
        ka, kb = sort_key(t, a), sort_key(t, b)
        return int(ka > kb) - int(ka < kb)
    except (TypeError, AttributeError):
        raise _bad(t, "cannot compare these values", (a, b), None) from None


# --------------------------------------------------------------------------- JSON


def to_json(t: IcebergType, value: Any, *, field: str | None = None) -> Any:
    """JSON single-value serialization (spec: Appendix D); returns a ``json``-ready value."""
    if value is None:
        return None
    if isinstance(t, StructType):
        return {str(f.field_id): to_json(f.field_type, child, field=path)
                for f, child, path in _struct_items(t, value, field)}
    if isinstance(t, ListType):
        return [to_json(t.element_type, e, field=path) for e, path in _list_items(t, value, field)]
    if isinstance(t, MapType):
        keys: list[Any] = []
        values: list[Any] = []
        for k, v, key_path, value_path in _map_items(t, value, field):
            keys.append(to_json(t.key_type, k, field=key_path))
            values.append(to_json(t.value_type, v, field=value_path))
        return {"keys": keys, "values": values}
    _check(t, value, field)
    if isinstance(t, (BooleanType, IntegerType, LongType, StringType)):
        return value
    if isinstance(t, (FloatType, DoubleType)):
        return _float_json(value, isinstance(t, FloatType))
    if isinstance(t, DecimalType):
        return _decimal_text(unscaled(value), t.scale)
    if isinstance(t, DateType):
        return _format_date(value)
    # Times and timestamps as Java's SingleValueParser writes them (ISO_LOCAL_TIME: seconds
    # always, the fraction without trailing zeros; "+00:00" for zoned values).
    if isinstance(t, TimeType):
        return _format_time(value * 1000, None, trim=True)
    if isinstance(t, _TS_ALL):
        return _format_timestamp(t, value, None, trim=True)
    if isinstance(t, UUIDType):
        return str(value)
    if isinstance(t, _GEO):
        return wkb_to_wkt(bytes(value))
    return bytes(value).hex().upper()  # fixed, binary: upper-case hex, as Java's base16


_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def from_json(t: IcebergType, obj: Any, *, field: str | None = None) -> Any:
    """Read a JSON single value (spec: Appendix D) into the Python value of ``t``."""
    if obj is None:
        return None
    if isinstance(t, StructType):
        return _struct_from_json(t, obj, field)
    if isinstance(t, ListType):
        if not isinstance(obj, list):
            raise _bad(t, "expected a JSON array", obj, field)
        return [from_json(t.element_type, e, field=path) for e, path in _list_items(t, obj, field)]
    if isinstance(t, MapType):
        return _map_from_json(t, obj, field)
    if isinstance(t, BooleanType):
        if not isinstance(obj, bool):
            raise _bad(t, "expected a JSON boolean", obj, field)
        return obj
    if isinstance(t, (IntegerType, LongType)):
        low, high = (INT_MIN, INT_MAX) if isinstance(t, IntegerType) else (LONG_MIN, LONG_MAX)
        _check_int(t, obj, low, high, field)
        return obj
    if isinstance(t, (FloatType, DoubleType)):
        if isinstance(obj, str) and obj in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[obj]
        if not isinstance(obj, (int, float)) or isinstance(obj, bool):
            raise _bad(t, "expected a JSON number", obj, field)
        try:
            return _float_value(t, float(obj), obj, field)
        except OverflowError:
            raise _bad(t, "out of range for a double", obj, field) from None
    if isinstance(t, UnknownType):
        raise _bad(t, "the unknown type holds only null", obj, field)
    if isinstance(t, VariantType):
        raise _bad(t, "variant values have no JSON single-value form", obj, field)
    if not isinstance(obj, str):
        raise _bad(t, "expected a JSON string", obj, field)
    if isinstance(t, DecimalType):
        decimal = _parse_decimal(t, obj, field)
        exponent = decimal.as_tuple().exponent
        if not isinstance(exponent, int) or -exponent != t.scale:
            raise _bad(t, f"the scale must be {t.scale} (e.g. {_decimal_text(0, t.scale)!r})",
                       obj, field)
        return from_unscaled(_check_decimal(t, decimal, field), t.scale)
    if isinstance(t, StringType):
        return obj
    if isinstance(t, DateType):
        return _parse_date(t, obj, True, field)
    if isinstance(t, TimeType):
        return _parse_time(t, obj, True, field)
    if isinstance(t, _TS_ALL):
        return _parse_timestamp(t, obj, True, field)
    if isinstance(t, UUIDType):
        if _UUID_TEXT.fullmatch(obj) is None:
            raise _bad(t, "expected a uuid string like f79c3e09-677c-4bbd-a479-3f349cb785e7",
                       obj, field)
        return uuid.UUID(obj)
    if isinstance(t, (FixedType, BinaryType)):
        if _HEX.fullmatch(obj) is None:
            raise _bad(t, "expected a hexadecimal string", obj, field)
        data = bytes.fromhex(obj)
        if isinstance(t, FixedType) and len(data) != t.length:
            raise _bad(t, f"expected {t.length} bytes ({2 * t.length} hex digits)", obj, field)
        return data
    if isinstance(t, _GEO):
        return _wkt_to_wkb_checked(t, obj, field)
    raise _bad(t, "unsupported type", obj, field)  # pragma: no cover


def _struct_from_json(t: StructType, obj: Any, field: str | None) -> dict[int, Any]:
    if not isinstance(obj, dict):
        raise _bad(t, "expected a JSON object keyed by field id", obj, field)
    out: dict[int, Any] = {}
    for key, raw in obj.items():
        f = t.field(int(key)) if isinstance(key, str) and key.isdigit() else None
        if f is None:
            raise _bad(t, "not a field id of the struct", key, field)
        path = _child(field, f.name)
        if raw is None and f.required:
            raise _bad(f.field_type, "a required field cannot be null", None, path)
        out[f.field_id] = from_json(f.field_type, raw, field=path)
    return out


def _map_from_json(t: MapType, obj: Any, field: str | None) -> dict[Any, Any]:
    if (
        not isinstance(obj, dict)
        or set(obj) != {"keys", "values"}
        or not isinstance(obj["keys"], list)
        or not isinstance(obj["values"], list)
    ):
        raise _bad(t, 'expected {"keys": [...], "values": [...]}', obj, field)
    if len(obj["keys"]) != len(obj["values"]):
        raise _bad(t, "keys and values differ in length", obj, field)
    out: dict[Any, Any] = {}
    key_path, value_path = _child(field, "key"), _child(field, "value")
    for raw_key, raw_value in zip(obj["keys"], obj["values"], strict=True):
        if raw_key is None:
            raise _bad(t.key_type, "a map key cannot be null", None, key_path)
        if raw_value is None and t.value_required:
            raise _bad(t.value_type, "a required map value cannot be null", None, value_path)
        key = from_json(t.key_type, raw_key, field=key_path)
        _map_put(t, out, key, from_json(t.value_type, raw_value, field=value_path), key_path)
    return out


# --------------------------------------------------------------------------- coercion


def _unwrap(value: Any) -> Any:
    """numpy scalars -> Python values (datetime64 -> ISO text); pandas NaT -> None."""
    kind = type(value)
    if kind.__name__ == "NaTType":
        return None
    if kind.__module__ == "numpy":
        if kind.__name__ == "datetime64":
            text = str(value)
            return None if text == "NaT" else text
        item = getattr(value, "item", None)
        if callable(item):
            return item()
    return value


def _datetime_nanos(value: datetime) -> tuple[int, bool]:
    """Nanoseconds from the epoch of a datetime (wall clock if naive, UTC if aware)."""
    nanos_attr = getattr(value, "nanosecond", None)  # pandas.Timestamp
    whole = getattr(value, "value", None)
    if isinstance(nanos_attr, int) and isinstance(whole, int):
        return whole, value.tzinfo is not None and value.utcoffset() is not None
    days = value.toordinal() - _EPOCH_ORDINAL
    seconds = days * 86_400 + value.hour * 3600 + value.minute * 60 + value.second
    nanos = (seconds * 1_000_000 + value.microsecond) * 1000
    offset = value.utcoffset()
    if offset is None:
        return nanos, False
    return nanos - _timedelta_micros(offset) * 1000, True


def _timedelta_micros(delta: timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def coerce(t: IcebergType, value: Any, *, field: str | None = None) -> Any:
    """Convert a user value (Python, numpy, pandas, or text) to the Python value of ``t``.

    Checks ranges and never rounds: a decimal with more fractional digits than the scale, a
    timestamp more precise than the type, or an out-of-range int is a ``ValidationError``.
    Text is parsed (ISO dates/times/timestamps, decimals, uuids, hex for bytes, WKT for
    geometry). A naive datetime or text without offset is UTC for timestamptz; an aware one is
    an error for timestamp (without zone). Ints are the internal representation (days,
    microseconds, nanoseconds) for date/time/timestamp types.
    """
    value = _unwrap(value)
    if value is None:
        return None
    if isinstance(t, StructType):
        return _coerce_struct(t, value, field)
    if isinstance(t, ListType):
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise _bad(t, "expected a list", value, field)
        path = _child(field, "element")
        out_list = [coerce(t.element_type, e, field=path) for e in value]
        list(_list_items(t, out_list, field))  # null checks
        return out_list
    if isinstance(t, MapType):
        if not isinstance(value, Mapping):
            raise _bad(t, "expected a dict", value, field)
        out_map: dict[Any, Any] = {}
        for k, v, key_path, value_path in _map_items(t, value, field):
            key = coerce(t.key_type, k, field=key_path)
            _map_put(t, out_map, key, coerce(t.value_type, v, field=value_path), key_path)
        return out_map
    coerced = _coerce_primitive(t, value, field)
    _check(t, coerced, field)
    return coerced


def _coerce_struct(t: StructType, value: Any, field: str | None) -> dict[int, Any]:
    if not isinstance(value, Mapping):
        raise _bad(t, "expected a dict keyed by field id or name", value, field)
    out: dict[int, Any] = {}
    for key, raw in value.items():
        f = t.field_by_name(key) if isinstance(key, str) else None
        if f is None and isinstance(key, int) and not isinstance(key, bool):
            f = t.field(key)
        if f is None:
            raise _bad(t, "no such field in the struct", key, field)
        if f.field_id in out:
            raise _bad(t, "field given twice", key, field)
        path = _child(field, f.name)
        child = coerce(f.field_type, raw, field=path)
        if child is None and f.required:
            raise _bad(f.field_type, "a required field cannot be null", None, path)
        out[f.field_id] = child
    return out


def _coerce_primitive(t: IcebergType, value: Any, field: str | None) -> Any:
    if isinstance(t, BooleanType):
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        return value
    if isinstance(t, (IntegerType, LongType)):
        return _coerce_int(t, value, field)
    if isinstance(t, (FloatType, DoubleType)):
        return _coerce_float(t, value, field)
    if isinstance(t, DecimalType):
        return _coerce_decimal(t, value, field)
    if isinstance(t, DateType):
        return _coerce_date(t, value, field)
    if isinstance(t, TimeType):
        return _coerce_time(t, value, field)
    if isinstance(t, _TS_ALL):
        return _coerce_timestamp(t, value, field)
    if isinstance(t, UUIDType):
        if isinstance(value, str):
            try:
                return uuid.UUID(value.strip())
            except ValueError:
                raise _bad(t, "not a uuid", value, field) from None
        if isinstance(value, _BYTES_LIKE) and len(value) == 16:
            return uuid.UUID(bytes=bytes(value))
        return value
    if isinstance(t, (FixedType, BinaryType)):
        if isinstance(value, str):
            text = value.strip()
            text = text[2:] if text[:2] in ("0x", "0X") else text
            if _HEX.fullmatch(text) is None:
                raise _bad(t, "text for bytes must be hexadecimal (e.g. 0x00ff)", value, field)
            return bytes.fromhex(text)
        return bytes(value) if isinstance(value, (bytearray, memoryview)) else value
    if isinstance(t, _GEO):
        if isinstance(value, str):
            return _wkt_to_wkb_checked(t, value, field)
        wkb = getattr(value, "wkb", None)  # shapely geometries
        data = bytes(wkb) if isinstance(wkb, _BYTES_LIKE) else value
        if isinstance(data, _BYTES_LIKE):
            data = bytes(data)
            try:
                wkb_to_wkt(data)
            except ValidationError as e:
                raise _bad(t, e.message, value, field) from None
        return data
    return value  # string, unknown, variant: checked by the caller


def _coerce_int(t: IcebergType, value: Any, field: str | None) -> Any:
    if isinstance(value, str):
        if _INT_TEXT.fullmatch(value.strip()) is None:
            raise _bad(t, "not an integer", value, field)
        return int(value.strip())
    if isinstance(value, float):
        if not value.is_integer():
            raise _bad(t, "not an integer", value, field)
        return int(value)
    if isinstance(value, Decimal):
        if not value.is_finite() or int(value) != value:
            raise _bad(t, "not an integer", value, field)
        return int(value)
    return value


def _coerce_float(t: IcebergType, value: Any, field: str | None) -> Any:
    number: float
    if isinstance(value, str):
        text = value.strip()
        special = _SPECIAL_FLOATS.get(text, _LENIENT_SPECIAL_FLOATS.get(text.lower()))
        if special is not None:
            return _float_value(t, special, value, field)
        if _FLOAT_TEXT.fullmatch(text) is None:
            raise _bad(t, "not a number", value, field)
        number = float(text)
    elif isinstance(value, float):
        number = value
    elif isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            raise _bad(t, "out of range for a double", value, field) from None
    else:
        return value
    if math.isinf(number) and not (isinstance(value, float) or (
            isinstance(value, Decimal) and value.is_infinite())):
        raise _bad(t, "out of range for a double", value, field)
    return _float_value(t, number, value, field)


def _coerce_decimal(t: DecimalType, value: Any, field: str | None) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        decimal = _parse_decimal(t, value.strip(), field)
    elif isinstance(value, int):
        decimal = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _bad(t, "not a finite number", value, field)
        decimal = Decimal(repr(value))  # what the person typed, not the binary expansion
    elif isinstance(value, Decimal):
        decimal = value
    else:
        return value
    return _rescale(t, decimal, value, field)


def _coerce_date(t: IcebergType, value: Any, field: str | None) -> Any:
    if isinstance(value, str):
        return _parse_date(t, value, False, field)
    if isinstance(value, datetime):
        nanos, aware = _datetime_nanos(value)
        days, rest = divmod(nanos, NANOS_PER_DAY)
        if aware or rest:
            raise _bad(t, "a date cannot hold a time of day or zone", value, field)
        return days
    if isinstance(value, date):
        return value.toordinal() - _EPOCH_ORDINAL
    return value


def _coerce_time(t: IcebergType, value: Any, field: str | None) -> Any:
    if isinstance(value, str):
        return _parse_time(t, value, False, field)
    if isinstance(value, time):
        if value.utcoffset() is not None:
            raise _bad(t, "a time cannot have a zone", value, field)
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (
            value.microsecond)
    if isinstance(value, timedelta):
        return _timedelta_micros(value)
    return value


def _coerce_timestamp(t: IcebergType, value: Any, field: str | None) -> Any:
    if isinstance(value, str):
        return _parse_timestamp(t, value, False, field)
    if isinstance(value, datetime):
        nanos, aware = _datetime_nanos(value)
        if aware and not isinstance(t, _TS_ZONED):
            raise _bad(t, "a timestamp without time zone cannot take an aware datetime "
                       "(use timestamptz, or drop the zone)", value, field)
        return _nanos_to_value(t, nanos, value, field)
    if isinstance(value, date):
        return _nanos_to_value(t, (value.toordinal() - _EPOCH_ORDINAL) * NANOS_PER_DAY, value,
                               field)
    return value


# --------------------------------------------------------------------------- display


def to_human(t: IcebergType, value: Any) -> str:
    """A readable display string (ISO dates, ``0x`` hex bytes, WKT); never raises."""
    try:
        return _human(t, value, top=True)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return f"<{type(value).__name__}>"


def _human(t: IcebergType, value: Any, top: bool) -> str:
    if value is None:
        return "null"
    if isinstance(t, StructType):
        parts = [f"{f.name}: {_human(f.field_type, child, False)}"
                 for f, child, _ in _struct_items(t, value, None)]
        return "{" + ", ".join(parts) + "}"
    if isinstance(t, ListType):
        return "[" + ", ".join(_human(t.element_type, e, False) for e in value) + "]"
    if isinstance(t, MapType):
        return "{" + ", ".join(
            f"{_human(t.key_type, k, False)}: {_human(t.value_type, v, False)}"
            for k, v in value.items()
        ) + "}"
    _check(t, value, None)
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, (FloatType, DoubleType)):
        return _float_human(value, isinstance(t, FloatType))
    if isinstance(t, DecimalType):
        return _decimal_text(unscaled(value), t.scale)
    if isinstance(t, DateType):
        return _format_date(value)
    if isinstance(t, TimeType):
        return _format_time(value * 1000, None)
    if isinstance(t, _TS_ALL):
        return _format_timestamp(t, value, None)
    if isinstance(t, StringType):
        return value if top else json.dumps(value, ensure_ascii=False)
    if isinstance(t, (FixedType, BinaryType)):
        return "0x" + bytes(value).hex()
    if isinstance(t, _GEO):
        return wkb_to_wkt(bytes(value))
    return str(value)  # int, long, uuid


# --------------------------------------------------------------------------- geometry

# A geometry is (kind, dims, payload): kind 1..7 (point .. geometrycollection); dims 0 (XY),
# 1 (XYZ), 2 (XYM), 3 (XYZM); payload: point -> coordinates or None (empty); linestring ->
# list of coordinates; polygon -> list of rings; multi*/collection -> list of geometries.
_Geometry = tuple[int, int, Any]
_KINDS = {1: "POINT", 2: "LINESTRING", 3: "POLYGON", 4: "MULTIPOINT", 5: "MULTILINESTRING",
          6: "MULTIPOLYGON", 7: "GEOMETRYCOLLECTION"}
_KIND_CODES = {name: code for code, name in _KINDS.items()}
_DIM_NAMES = {0: "", 1: "Z", 2: "M", 3: "ZM"}
_DIM_CODES = {"Z": 1, "M": 2, "ZM": 3}


def _ncoords(dims: int) -> int:
    return 2 + (dims & 1) + (dims >> 1)


class _WkbReader:
    """ISO WKB (Appendix G), big- or little-endian; EWKB Z/M/SRID flags tolerated."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ValueError("truncated WKB")
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out

    def count(self, endian: str, item_size: int) -> int:
        (n,) = self.take(endian + "I")
        if n * item_size > len(self.data) - self.pos:
            raise ValueError("WKB count larger than the data")
        return int(n)

    def geometry(self) -> _Geometry:
        (order,) = self.take("B")
        if order not in (0, 1):
            raise ValueError("bad WKB byte order")
        endian = "<" if order == 1 else ">"
        (code,) = self.take(endian + "I")
        if code & 0xE000_0000:  # EWKB
            dims = (1 if code & 0x8000_0000 else 0) | (2 if code & 0x4000_0000 else 0)
            if code & 0x2000_0000:
                self.take(endian + "I")
            kind = code & 0x0FFF_FFFF
        else:
            dims, kind = divmod(code, 1000)
        if kind not in _KINDS or dims > 3:
            raise ValueError(f"unsupported WKB geometry type {code}")
        n = _ncoords(dims)
        point = f"{endian}{n}d"
        payload: Any
        if kind == 1:
            coords = self.take(point)
            payload = None if all(math.isnan(c) for c in coords) else coords
        elif kind == 2:
            payload = [self.take(point) for _ in range(self.count(endian, 8 * n))]
        elif kind == 3:
            payload = [
                [self.take(point) for _ in range(self.count(endian, 8 * n))]
                for _ in range(self.count(endian, 4))
            ]
        else:
            payload = [self.geometry() for _ in range(self.count(endian, 5))]
            if kind != 7 and any(g[0] != kind - 3 or g[1] != dims for g in payload):
                raise ValueError(f"{_KINDS[kind]} members must be {_KINDS[kind - 3]}s "
                                 "of the same dimensions")
        return kind, dims, payload


def _write_wkb(g: _Geometry, out: bytearray) -> None:
    kind, dims, payload = g
    n = _ncoords(dims)
    point = struct.Struct(f"<{n}d")
    out += struct.pack("<BI", 1, dims * 1000 + kind)
    if kind == 1:
        out += point.pack(*(payload if payload is not None else (math.nan,) * n))
    elif kind == 2:
        out += struct.pack("<I", len(payload))
        for c in payload:
            out += point.pack(*c)
    elif kind == 3:
        out += struct.pack("<I", len(payload))
        for ring in payload:
            out += struct.pack("<I", len(ring))
            for c in ring:
                out += point.pack(*c)
    else:
        out += struct.pack("<I", len(payload))
        for member in payload:
            _write_wkb(member, out)


def _wkt_number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _wkt_coords(coords: Any) -> str:
    return " ".join(_wkt_number(c) for c in coords)


def _wkt_body(kind: int, payload: Any) -> str:
    if payload is None or (kind != 1 and not payload):
        return "EMPTY"
    if kind == 1:
        return f"({_wkt_coords(payload)})"
    if kind == 2:
        return "(" + ", ".join(_wkt_coords(c) for c in payload) + ")"
    if kind == 3:
        return "(" + ", ".join(_wkt_body(2, ring) for ring in payload) + ")"
    if kind == 7:
        return "(" + ", ".join(_wkt_text(g) for g in payload) + ")"
    return "(" + ", ".join(_wkt_body(g[0], g[2]) for g in payload) + ")"


def _wkt_text(g: _Geometry) -> str:
    kind, dims, payload = g
    head = _KINDS[kind] + (" " + _DIM_NAMES[dims] if dims else "")
    return f"{head} {_wkt_body(kind, payload)}"


def wkb_to_wkt(data: bytes | bytearray | memoryview) -> str:
    """Well-known text of an ISO WKB geometry (spec: Appendix D JSON form, Appendix G)."""
    b = bytes(data)
    reader = _WkbReader(b)
    try:
        g = reader.geometry()
        if reader.pos != len(b):
            raise ValueError("trailing bytes after the WKB geometry")
    except (ValueError, struct.error, RecursionError) as e:
        raise ValidationError(f"not a valid WKB geometry ({e})", value=b) from None
    return _wkt_text(g)


_WKT_TOKEN = re.compile(
    r"\s*(?:(?P<num>[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|NaN|nan|Infinity|inf))"
    r"|(?P<word>[A-Za-z]+)|(?P<punct>[(),]))"
)


class _WktParser:
    """WKT (Appendix G): the seven OGC simple feature types with Z, M or ZM."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos, text = 0, text.strip()
        while pos < len(text):
            m = _WKT_TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError(f"unexpected text at {pos}")
            kind = m.lastgroup
            assert kind is not None
            self.tokens.append((kind, m[kind]))
            pos = m.end()
        self.pos = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("end", "")

    def next(self) -> tuple[str, str]:
        token = self.peek()
        if token[0] == "end":
            raise ValueError("unexpected end of WKT")
        self.pos += 1
        return token

    def expect(self, punct: str) -> None:
        if self.next() != ("punct", punct):
            raise ValueError(f"expected {punct!r}")

    def empty(self) -> bool:
        if self.peek()[0] == "word" and self.peek()[1].upper() == "EMPTY":
            self.pos += 1
            return True
        return False

    def listed(self, item: Callable[[], Any]) -> list[Any]:
        self.expect("(")
        out = [item()]
        while self.peek() == ("punct", ","):
            self.pos += 1
            out.append(item())
        self.expect(")")
        return out

    def coord(self) -> tuple[float, ...]:
        out: list[float] = []
        while self.peek()[0] == "num":
            out.append(float(self.next()[1]))
        if not 2 <= len(out) <= 4:
            raise ValueError("a coordinate has 2 to 4 numbers")
        return tuple(out)

    def coords(self) -> list[tuple[float, ...]]:
        return [] if self.empty() else self.listed(self.coord)

    def member_point(self) -> Any:
        if self.empty():
            return None
        if self.peek() == ("punct", "("):
            return self.listed(self.coord)[0]
        return self.coord()

    def body(self, kind: int) -> Any:
        if kind == 1:
            return None if self.empty() else self.listed(self.coord)[0]
        if kind == 2:
            return self.coords()
        if kind == 3:
            return [] if self.empty() else self.listed(self.coords)
        if kind == 4:
            return [] if self.empty() else self.listed(self.member_point)
        if kind in (5, 6):
            return [] if self.empty() else self.listed(lambda: self.body(kind - 3))
        return [] if self.empty() else self.listed(self.geometry)

    def geometry(self) -> _Geometry:
        kind_token, name = self.next()
        kind = _KIND_CODES.get(name.upper()) if kind_token == "word" else None
        if kind is None:
            raise ValueError(f"unknown geometry type {name!r}")
        dims: int | None = None
        if self.peek()[0] == "word" and self.peek()[1].upper() in _DIM_CODES:
            dims = _DIM_CODES[self.next()[1].upper()]
        payload = self.body(kind)
        if kind == 7 and dims is None and payload:
            dims = payload[0][1]  # an untagged collection has its members' dimensions
        if kind != 7:
            found = [len(c) for c in _all_coords(kind, payload)]
            if dims is None:
                dims = {2: 0, 3: 1, 4: 3}[found[0]] if found else 0
            if any(n != _ncoords(dims) for n in found):
                raise ValueError("coordinates do not match the geometry's dimensions")
            if kind in (4, 5, 6):
                payload = [(kind - 3, dims, member) for member in payload]
        return kind, dims or 0, payload


def _all_coords(kind: int, payload: Any) -> Iterator[tuple[float, ...]]:
    if payload is None:
        return
    if kind == 1:
        yield payload
    elif kind == 2:
        yield from payload
    else:  # polygon rings, or members of a multi geometry
        for member in payload:
            yield from _all_coords(kind - 1 if kind == 3 else kind - 3, member)


def wkt_to_wkb(text: str) -> bytes:
    """Little-endian ISO WKB of a WKT geometry (spec: Appendix D JSON form, Appendix G)."""
    try:
        parser = _WktParser(text)
        g = parser.geometry()
        if parser.peek()[0] != "end":
            raise ValueError("trailing text after the geometry")
    except (ValueError, KeyError, IndexError, RecursionError) as e:
        raise ValidationError(f"not a valid WKT geometry ({e})", value=text) from None
    out = bytearray()
    _write_wkb(g, out)
    return bytes(out)


def _wkt_to_wkb_checked(t: IcebergType, text: str, field: str | None) -> bytes:
    try:
        return wkt_to_wkb(text)
    except IcebergError as e:
        raise _bad(t, e.message, text, field) from None
