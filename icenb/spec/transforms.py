"""Partition transforms (spec: "Partitioning", "Partition Transforms", Appendix B, Appendix C).

A transform turns a source column value into a partition (or sort) value. Transforms are
immutable value objects: ``BucketTransform(16) == parse_transform("bucket[16]")`` and
``str(t)`` is the JSON string of Appendix C. Values use the Python representation documented
in :mod:`icenb.spec.types` (dates are ``int`` days, timestamps ``int`` micros or nanos, ...).

Every transform has a scalar form (:meth:`Transform.apply`) and a vectorized form over Arrow
arrays (:meth:`Transform.apply_arrow`); both give the same results.

Decisions where the spec is silent or differs from the reference implementation (Java 1.10):

* ``day`` produces ``int`` days (the spec's result type); Java reports ``date``. The value is the
  same number; :meth:`Transform.to_human_string` renders it as an ISO date.
* ``bucket`` of ``timestamp_ns``/``timestamptz_ns`` hashes the value as *microseconds*
  (nanoseconds floor-divided by 1000), as Java 1.10 and the released v3 spec do, so promoting
  ``timestamp`` to ``timestamp_ns`` keeps every row in its bucket. (An older v3 draft hashed
  the raw nanoseconds.)
* An :class:`UnknownTransform` (a name this library does not know) is kept verbatim so metadata
  round-trips; readers ignore it (spec: Appendix E). ``can_transform`` is False so writers refuse
  it (Java answers True), its result type is ``string`` (as in Java), and applying it raises
  :class:`~icenb.errors.UnsupportedFeature`.
* ``truncate`` ordering: ``truncate[W]`` satisfies the order of ``truncate[V]`` for strings and
  binary when ``W >= V`` (prefixes), for numbers when ``V % W == 0``. Without a source type only
  equal widths are taken to satisfy each other. (Java applies the prefix rule to numbers too.)
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar
from uuid import UUID

import mmh3
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
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
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)

__all__ = [
    "BucketTransform",
    "DayTransform",
    "HourTransform",
    "IdentityTransform",
    "MonthTransform",
    "TimeTransform",
    "Transform",
    "TruncateTransform",
    "UnknownTransform",
    "VoidTransform",
    "YearTransform",
    "bucket_hash",
    "hash_bytes",
    "hash_long",
    "parse_transform",
]

_INT_MAX = 2**31 - 1
_INT_MIN = -(2**31)
_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1

_MICROS_PER_HOUR = 3_600_000_000
_MICROS_PER_DAY = 86_400_000_000
_NANOS_PER_MICRO = 1_000

_TIMESTAMP_TYPES: tuple[type[PrimitiveType], ...] = (
    TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType,
)
_NANO_TYPES: tuple[type[PrimitiveType], ...] = (TimestampNanoType, TimestamptzNanoType)
# Types whose value is one integer; bucket hashes it as a long (Appendix B).
_LONG_HASHED: tuple[type[PrimitiveType], ...] = (
    IntegerType, LongType, DateType, TimeType, *_TIMESTAMP_TYPES,
)
_BUCKET_SOURCES: tuple[type[PrimitiveType], ...] = (
    *_LONG_HASHED, DecimalType, StringType, UUIDType, FixedType, BinaryType,
)
_TRUNCATE_SOURCES: tuple[type[PrimitiveType], ...] = (
    IntegerType, LongType, DecimalType, StringType, BinaryType,
)
_NOT_IDENTITY: tuple[type[PrimitiveType], ...] = (VariantType, GeometryType, GeographyType)


# --------------------------------------------------------------------------- hashing (Appendix B)


def hash_bytes(data: bytes) -> int:
    """32-bit Murmur3 (x86, seed 0) of ``data`` as a signed int. Spec: Appendix B."""
    return mmh3.hash(data, 0, signed=True)


def hash_long(value: int) -> int:
    """Hash of a long: Murmur3 of its 8 little-endian bytes. Spec: Appendix B (int and long)."""
    return mmh3.hash(struct.pack("<q", value), 0, signed=True)


def _min_big_endian(n: int) -> bytes:
    """Fewest two's-complement big-endian bytes holding ``n`` (Java BigInteger.toByteArray)."""
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def _double_bits(value: float) -> int:
    """IEEE 754 bits of a double as a signed long, NaN and -0.0 canonicalized. Appendix B [4]."""
    if value != value:  # NaN
        return 0x7FF8000000000000
    if value == 0.0:
        value = 0.0
    return int(struct.unpack("<q", struct.pack("<d", value))[0])


def bucket_hash(source_type: IcebergType, value: Any) -> int:
    """The Appendix B 32-bit hash of ``value`` of ``source_type`` (signed int).

    Also covers boolean, float and double (Appendix B's second table), which are not valid
    bucket sources. ``timestamp_ns`` values hash as microseconds (see the module docstring).
    """
    if value is None:
        raise ValidationError("cannot hash a null value", field=str(source_type), value=value)
    try:
        return _hash_function(source_type)(value)
    except IcebergError:
        raise
    except (TypeError, ValueError, AttributeError, ArithmeticError, struct.error) as exc:
        raise ValidationError(
            f"cannot hash a {source_type} value: {exc}", field=str(source_type), value=value,
        ) from exc


def _hash_function(source_type: IcebergType) -> Callable[[Any], int]:
    if isinstance(source_type, _NANO_TYPES):
        return lambda v: hash_long(v // _NANOS_PER_MICRO)
    if isinstance(source_type, _LONG_HASHED):
        return hash_long
    if isinstance(source_type, DecimalType):
        scale = source_type.scale
        return lambda v: hash_bytes(_min_big_endian(_unscaled(v, scale)))
    if isinstance(source_type, StringType):
        return lambda v: hash_bytes(v.encode("utf-8"))
    if isinstance(source_type, UUIDType):
        return lambda v: hash_bytes(_uuid_bytes(v))
    if isinstance(source_type, (FixedType, BinaryType)):
        return lambda v: hash_bytes(bytes(v))
    if isinstance(source_type, BooleanType):
        return lambda v: hash_long(1 if v else 0)
    if isinstance(source_type, (FloatType, DoubleType)):
        return lambda v: hash_long(_double_bits(float(v)))
    raise ValidationError("no hash function for this type", field=str(source_type))


def _uuid_bytes(value: Any) -> bytes:
    if isinstance(value, UUID):
        return value.bytes
    data = bytes(value)
    if len(data) != 16:
        raise ValidationError("a uuid must be 16 bytes", value=value)
    return data


def _unscaled(value: Any, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale`` (exact; raises if digits would be lost)."""
    if not isinstance(value, Decimal):
        value = Decimal(value)
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValidationError("a decimal value must be finite", value=value)
    n = 0
    for d in digits:
        n = n * 10 + d
    shift = exponent + scale
    if shift >= 0:
        n *= 10**shift
    else:
        n, rest = divmod(n, int(10 ** (-shift)))
        if rest:
            raise ValidationError(f"decimal value has more than {scale} fractional digits",
                                  value=value)
    return -n if sign else n


def _decimal(unscaled: int, scale: int) -> Decimal:
    """The Decimal with exponent ``-scale`` and the given unscaled value (exact)."""
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


# ---------------------------------------------------------------- murmur3 on longs, vectorized

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x: npt.NDArray[np.uint32], r: int) -> npt.NDArray[np.uint32]:
    rotated: npt.NDArray[np.uint32] = (x << np.uint32(r)) | (x >> np.uint32(32 - r))
    return rotated


def _murmur3_longs(values: npt.NDArray[np.int64]) -> npt.NDArray[np.uint32]:
    """Murmur3 x86_32 (seed 0) of each value's 8 little-endian bytes, as uint32.

    Spec: Appendix B, hashLong. Same result as :func:`hash_long` (as unsigned).
    """
    u = values.astype(np.int64, copy=False).view(np.uint64)
    h = np.zeros(u.shape, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for k in ((u & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                  (u >> np.uint64(32)).astype(np.uint32)):
            k = _rotl(k * _C1, 15) * _C2
            h = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h ^= np.uint32(8)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h


# --------------------------------------------------------------------------- calendar helpers


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of days from 1970-01-01, for any integer."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def _civil_from_days_np(
    days: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Vectorized :func:`_civil_from_days`: (year, month) arrays."""
    z = days + 719468
    era = np.floor_divide(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year.astype(np.int64), month.astype(np.int64)


def _iso_year(year: int) -> str:
    """A year as java.time.LocalDate prints it (4 digits, sign when outside 0..9999)."""
    if abs(year) < 1000:
        return f"-{-year:04d}" if year < 0 else f"{year:04d}"
    return f"+{year}" if year > 9999 else str(year)


def _units_per_day(source_type: IcebergType) -> int:
    """Source units per day for a date/timestamp type (1 for dates)."""
    if isinstance(source_type, DateType):
        return 1
    if isinstance(source_type, _NANO_TYPES):
        return _MICROS_PER_DAY * _NANOS_PER_MICRO
    return _MICROS_PER_DAY


# --------------------------------------------------------------------------- Arrow helpers


def _as_array(array: Any) -> Any:
    """One contiguous pa.Array from an Array or ChunkedArray."""
    if isinstance(array, pa.ChunkedArray):
        if array.num_chunks == 0:
            return pa.array([], type=array.type)
        return array.combine_chunks()
    if isinstance(array, pa.Array):
        return array
    raise ValidationError("expected a pyarrow Array or ChunkedArray",
                          value=type(array).__name__)


def _null_mask(arr: Any) -> npt.NDArray[np.bool_] | None:
    if arr.null_count == 0:
        return None
    mask: npt.NDArray[np.bool_] = arr.is_null().to_numpy(zero_copy_only=False)
    return mask


_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _rescale(values: npt.NDArray[np.int64], have: int, want: int) -> npt.NDArray[np.int64]:
    """Convert counts of 1/``have`` seconds to 1/``want`` seconds, flooring."""
    if have == want:
        return values
    if have < want:
        factor = want // have
        limit = _LONG_MAX // factor
        if values.size and bool(np.any((values > limit) | (values < -limit))):
            raise ValidationError("Arrow temporal values overflow a long in the source unit")
        return values * factor
    return np.floor_divide(values, have // want)


def _int64_values(source_type: IcebergType, arr: Any) -> npt.NDArray[np.int64]:
    """Physical int64 values of ``arr`` in the unit of ``source_type`` (nulls read as 0).

    Accepts Arrow integers (already in the source representation) or Arrow temporal types
    (date32/date64, time32/time64, timestamp with any unit), converted with floor division.
    """
    t = arr.type
    if pa.types.is_integer(t):
        ints = arr
        unit = None
    elif pa.types.is_date32(t):
        ints, unit = arr.view(pa.int32()), "day"
    elif pa.types.is_date64(t):
        ints, unit = arr.view(pa.int64()), "ms"
    elif pa.types.is_time32(t):
        ints, unit = arr.view(pa.int32()), t.unit
    elif pa.types.is_time64(t) or pa.types.is_timestamp(t):
        ints, unit = arr.view(pa.int64()), t.unit
    else:
        raise ValidationError(f"cannot read Arrow type {t} as {source_type} values",
                              field=str(source_type), value=str(t))
    values: npt.NDArray[np.int64] = (
        pc.fill_null(ints, 0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    )
    if unit is None:
        return values
    if isinstance(source_type, DateType):
        if unit == "day":
            return values
        return np.floor_divide(values, 86_400 * _UNIT_PER_SECOND[unit])
    want = _UNIT_PER_SECOND["ns" if isinstance(source_type, _NANO_TYPES) else "us"]
    if unit == "day":  # a date array as a timestamp source: midnight of that day
        return _rescale(values, 1, 86_400 * want)
    return _rescale(values, _UNIT_PER_SECOND[unit], want)


def _int_result(values: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_] | None,
                arrow_type: Any = None) -> Any:
    """An Arrow array (int32 unless ``arrow_type``) from int64 values and a null mask."""
    out = pa.array(values, type=pa.int64(), mask=mask)
    target = pa.int32() if arrow_type is None else arrow_type
    try:
        return out.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValidationError(f"transform result does not fit {target}: {exc}") from exc


def _check_int(value: int, what: str) -> int:
    if not _INT_MIN <= value <= _INT_MAX:
        raise ValidationError(f"{what} result does not fit an int", value=value)
    return value


# --------------------------------------------------------------------------- transforms


@safe_repr
class Transform:
    """Base of partition transforms: a value object with a JSON string form (Appendix C)."""

    __slots__ = ()

    #: True when ordering by the result keeps the source order (usable for range pruning).
    preserves_order: ClassVar[bool] = False

    @property
    def is_unknown(self) -> bool:
        """True for a transform this library does not implement (read-only, ignored)."""
        return False

    @property
    def is_void(self) -> bool:
        return False

    @property
    def is_identity(self) -> bool:
        return False

    @property
    def dedup_name(self) -> str:
        """Key for redundant-field checks: two fields on one source with equal keys clash.

        All time transforms share ``"time"`` (a column cannot be partitioned by day and hour).
        """
        return str(self)

    def to_json(self) -> str:
        """The Appendix C JSON string (same as ``str``)."""
        return str(self)

    def __str__(self) -> str:
        raise NotImplementedError

    def can_transform(self, source_type: IcebergType) -> bool:
        """Whether this transform accepts ``source_type`` (spec: Partition Transforms table)."""
        raise NotImplementedError

    def result_type(self, source_type: IcebergType) -> IcebergType:
        """The type of the transformed values; raises ValidationError for a bad source type."""
        self._check_source(source_type)
        return self._result_type(source_type)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        raise NotImplementedError

    def _check_source(self, source_type: IcebergType) -> None:
        if not self.can_transform(source_type):
            raise ValidationError(f"transform {self} cannot be applied to type {source_type}",
                                  field=str(self), value=str(source_type))

    def bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        """A function applying this transform to values of ``source_type`` (None -> None)."""
        return _bound(self, source_type)

    def apply(self, source_type: IcebergType, value: Any) -> Any:
        """Transform one value (Python representation of :mod:`icenb.spec.types`)."""
        return _bound(self, source_type)(value)

    def _scalar(self, source_type: IcebergType) -> Callable[[Any], Any]:
        """The non-null scalar function for an accepted ``source_type``."""
        raise NotImplementedError

    def apply_arrow(self, source_type: IcebergType, array: Any) -> Any:
        """Transform a pyarrow Array or ChunkedArray into a pa.Array; nulls stay null."""
        self._check_source(source_type)
        arr = _as_array(array)
        try:
            return self._arrow(source_type, arr)
        except IcebergError:
            raise
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ValidationError(f"cannot apply {self} to Arrow {arr.type}: {exc}",
                                  field=str(source_type)) from exc

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        raise NotImplementedError

    def satisfies_order_of(self, other: Transform,
                           source_type: IcebergType | None = None) -> bool:
        """Whether data ordered by this transform is also ordered by ``other``."""
        return self == other

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        """Display / partition-path string of a transformed value; ``"null"`` for None."""
        if value is None:
            return "null"
        return self._human(source_type, value)

    def _human(self, source_type: IcebergType, value: Any) -> str:
        return str(value)


@lru_cache(maxsize=512)
def _bound(transform: Transform, source_type: IcebergType) -> Callable[[Any], Any]:
    """Cached scalar function with null handling and error wrapping."""
    transform._check_source(source_type)
    fn = transform._scalar(source_type)

    def apply(value: Any) -> Any:
        if value is None:
            return None
        try:
            return fn(value)
        except IcebergError:
            raise
        except (TypeError, ValueError, AttributeError, ArithmeticError, struct.error) as exc:
            raise ValidationError(
                f"cannot apply {transform} to a {source_type} value: {exc}",
                field=str(transform), value=value,
            ) from exc

    return apply


def _values_to_human(source_type: IcebergType, value: Any) -> str:
    """Display string of a source-typed value; binary and fixed in base64 (as Java's paths)."""
    if isinstance(source_type, (BinaryType, FixedType)) and isinstance(
            value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    from icenb.spec import values  # values depend on types only; imported late to stay light

    return str(values.to_human(source_type, value))


@dataclass(frozen=True, slots=True)
class IdentityTransform(Transform):
    """The source value, unmodified (spec: Partition Transforms, identity)."""

    preserves_order: ClassVar[bool] = True

    def __str__(self) -> str:
        return "identity"

    @property
    def is_identity(self) -> bool:
        return True

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, PrimitiveType) and not isinstance(
            source_type, _NOT_IDENTITY)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _scalar(self, source_type: IcebergType) -> Callable[[Any], Any]:
        return lambda v: v

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        return arr

    def satisfies_order_of(self, other: Transform,
                           source_type: IcebergType | None = None) -> bool:
        return other.preserves_order

    def _human(self, source_type: IcebergType, value: Any) -> str:
        return _values_to_human(source_type, value)


@safe_repr
@dataclass(frozen=True, slots=True)
class BucketTransform(Transform):
    """Murmur3 hash of the value mod ``num_buckets`` (spec: Bucket Transform Details)."""

    num_buckets: int

    def __post_init__(self) -> None:
        n = self.num_buckets
        if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= _INT_MAX:
            raise ValidationError("number of buckets must be a positive int",
                                  field="bucket", value=n)

    def __str__(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, _BUCKET_SOURCES)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return IntegerType()

    def _scalar(self, source_type: IcebergType) -> Callable[[Any], Any]:
        h = _hash_function(source_type)
        n = self.num_buckets
        return lambda v: (h(v) & _INT_MAX) % n

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        n = self.num_buckets
        mask = _null_mask(arr)
        if isinstance(source_type, _LONG_HASHED):
            values = _int64_values(source_type, arr)
            if isinstance(source_type, _NANO_TYPES):
                values = np.floor_divide(values, _NANOS_PER_MICRO)
            hashes = _murmur3_longs(values)
            buckets = (hashes & np.uint32(_INT_MAX)) % np.uint32(n)
            return _int_result(buckets.astype(np.int64), mask)
        if isinstance(source_type, StringType):
            h: Callable[[Any], int] = hash_bytes  # hash the stored UTF-8 bytes as they are
            items = _as_binary(arr).to_pylist()
        else:
            h = _hash_function(source_type)
            items = _storage(arr).to_pylist()
        out = [None if v is None else (h(v) & _INT_MAX) % n for v in items]
        return pa.array(out, type=pa.int32())


def _is_type(t: Any, predicate: str) -> bool:
    """``pa.types.<predicate>(t)``, False when this pyarrow lacks the predicate."""
    check = getattr(pa.types, predicate, None)
    return bool(check(t)) if check is not None else False


def _storage(arr: Any) -> Any:
    """The storage array of an extension array (e.g. arrow.uuid), else the array."""
    return arr.storage if isinstance(arr.type, pa.ExtensionType) else arr


def _as_binary(arr: Any) -> Any:
    """A string array reinterpreted as large_binary (its UTF-8 bytes)."""
    arr = _storage(arr)
    if _is_type(arr.type, "is_string_view"):
        arr = arr.cast(pa.large_string())
    return arr.cast(pa.large_binary())


@safe_repr
@dataclass(frozen=True, slots=True)
class TruncateTransform(Transform):
    """Value truncated to ``width`` (spec: Truncate Transform Details)."""

    width: int
    preserves_order: ClassVar[bool] = True

    def __post_init__(self) -> None:
        w = self.width
        if isinstance(w, bool) or not isinstance(w, int) or not 0 < w <= _INT_MAX:
            raise ValidationError("truncate width must be a positive int",
                                  field="truncate", value=w)

    def __str__(self) -> str:
        return f"truncate[{self.width}]"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, _TRUNCATE_SOURCES)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _scalar(self, source_type: IcebergType) -> Callable[[Any], Any]:
        w = self.width
        if isinstance(source_type, (IntegerType, LongType)):
            low = _INT_MIN if isinstance(source_type, IntegerType) else _LONG_MIN

            def truncate_int(v: int) -> int:
                if not isinstance(v, int):
                    raise TypeError(f"expected an int, got {type(v).__name__}")
                out = v - v % w
                if out < low:
                    raise ValidationError(f"truncating overflows {source_type}", value=v)
                return out

            return truncate_int
        if isinstance(source_type, DecimalType):
            scale = source_type.scale
            limit = 10**source_type.precision

            def truncate_decimal(v: Decimal) -> Decimal:
                n = _unscaled(v, scale)
                out = n - n % w
                if out <= -limit:
                    raise ValidationError(f"truncating overflows {source_type}", value=v)
                return _decimal(out, scale)

            return truncate_decimal
        if isinstance(source_type, StringType):
            return lambda v: v[:w] if isinstance(v, str) else _not(v, "str")
        return lambda v: bytes(v[:w])

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        w = self.width
        t = arr.type
        if isinstance(source_type, (IntegerType, LongType)):
            if not pa.types.is_integer(t):
                raise ValidationError(f"expected an Arrow integer array for {source_type}",
                                      value=str(t))
            values = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(np.int64)
            rem = np.mod(values, w)
            if bool(np.any(values < _LONG_MIN + rem)):
                raise ValidationError(f"truncating overflows {source_type}")
            return _int_result(values - rem, _null_mask(arr), t)
        if isinstance(source_type, StringType):
            if _is_type(t, "is_string_view"):
                return pc.utf8_slice_codeunits(arr.cast(pa.large_string()), 0, w).cast(t)
            return pc.utf8_slice_codeunits(arr, 0, w)
        if isinstance(source_type, BinaryType):
            if pa.types.is_fixed_size_binary(t) or _is_type(t, "is_binary_view"):
                arr = arr.cast(pa.large_binary())
            return pc.binary_slice(arr, 0, w)
        fn = self._scalar(source_type)
        out = [None if v is None else fn(v) for v in arr.to_pylist()]
        return pa.array(out, type=t)

    def satisfies_order_of(self, other: Transform,
                           source_type: IcebergType | None = None) -> bool:
        if self == other:
            return True
        if not isinstance(other, TruncateTransform):
            return False
        if isinstance(source_type, (StringType, BinaryType)):
            return self.width >= other.width  # a longer prefix orders the shorter prefix
        if isinstance(source_type, (IntegerType, LongType, DecimalType)):
            return other.width % self.width == 0  # other is a function of this one
        return False

    def _human(self, source_type: IcebergType, value: Any) -> str:
        return _values_to_human(source_type, value)


def _not(value: Any, expected: str) -> Any:
    raise TypeError(f"expected {expected}, got {type(value).__name__}")


class TimeTransform(Transform):
    """Base of year/month/day/hour: whole units since 1970-01-01 00:00, floored."""

    __slots__ = ()

    preserves_order: ClassVar[bool] = True
    #: 0 hour, 1 day, 2 month, 3 year: a finer unit orders every coarser one.
    granularity: ClassVar[int] = 0
    _sources: ClassVar[tuple[type[PrimitiveType], ...]] = (DateType, *_TIMESTAMP_TYPES)

    @property
    def dedup_name(self) -> str:
        return "time"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, self._sources)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return IntegerType()

    def satisfies_order_of(self, other: Transform,
                           source_type: IcebergType | None = None) -> bool:
        return isinstance(other, TimeTransform) and self.granularity <= other.granularity

    def _scalar(self, source_type: IcebergType) -> Callable[[Any], Any]:
        per_day = _units_per_day(source_type)
        what = str(self)

        def transform(v: int) -> int:
            if not isinstance(v, int):
                raise TypeError(f"expected an int, got {type(v).__name__}")
            return _check_int(self._from_days_scalar(v // per_day, v, source_type), what)

        return transform

    def _from_days_scalar(self, days: int, value: int, source_type: IcebergType) -> int:
        raise NotImplementedError

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        values = _int64_values(source_type, arr)
        out = self._from_values_np(values, source_type)
        return _int_result(out, _null_mask(arr))

    def _from_values_np(self, values: npt.NDArray[np.int64],
                        source_type: IcebergType) -> npt.NDArray[np.int64]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class YearTransform(TimeTransform):
    """Years from 1970 (spec: Partition Transforms, year)."""

    granularity: ClassVar[int] = 3

    def __str__(self) -> str:
        return "year"

    def _from_days_scalar(self, days: int, value: int, source_type: IcebergType) -> int:
        return _civil_from_days(days)[0] - 1970

    def _from_values_np(self, values: npt.NDArray[np.int64],
                        source_type: IcebergType) -> npt.NDArray[np.int64]:
        days = np.floor_divide(values, _units_per_day(source_type))
        return _civil_from_days_np(days)[0] - 1970

    def _human(self, source_type: IcebergType, value: Any) -> str:
        return f"{1970 + value:04d}"


@dataclass(frozen=True, slots=True)
class MonthTransform(TimeTransform):
    """Months from 1970-01 (spec: Partition Transforms, month)."""

    granularity: ClassVar[int] = 2

    def __str__(self) -> str:
        return "month"

    def _from_days_scalar(self, days: int, value: int, source_type: IcebergType) -> int:
        year, month, _ = _civil_from_days(days)
        return (year - 1970) * 12 + month - 1

    def _from_values_np(self, values: npt.NDArray[np.int64],
                        source_type: IcebergType) -> npt.NDArray[np.int64]:
        days = np.floor_divide(values, _units_per_day(source_type))
        year, month = _civil_from_days_np(days)
        return (year - 1970) * 12 + month - 1

    def _human(self, source_type: IcebergType, value: Any) -> str:
        return f"{1970 + value // 12:04d}-{value % 12 + 1:02d}"


@dataclass(frozen=True, slots=True)
class DayTransform(TimeTransform):
    """Days from 1970-01-01 (spec: Partition Transforms, day).

    The spec names the result ``int``; like the reference implementation (and PyIceberg) icenb
    types it ``date``, whose values are the same int days, so manifests written here carry the
    same Avro ``date`` logical type for day partitions as Java's.
    """

    granularity: ClassVar[int] = 1

    def __str__(self) -> str:
        return "day"

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return DateType()

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        return TimeTransform._arrow(self, source_type, arr).cast(pa.date32())

    def _from_days_scalar(self, days: int, value: int, source_type: IcebergType) -> int:
        return days

    def _from_values_np(self, values: npt.NDArray[np.int64],
                        source_type: IcebergType) -> npt.NDArray[np.int64]:
        return np.floor_divide(values, _units_per_day(source_type))

    def _human(self, source_type: IcebergType, value: Any) -> str:
        year, month, day = _civil_from_days(value)
        return f"{_iso_year(year)}-{month:02d}-{day:02d}"


@dataclass(frozen=True, slots=True)
class HourTransform(TimeTransform):
    """Hours from 1970-01-01 00:00 (spec: Partition Transforms, hour; timestamps only)."""

    granularity: ClassVar[int] = 0
    _sources: ClassVar[tuple[type[PrimitiveType], ...]] = _TIMESTAMP_TYPES

    def __str__(self) -> str:
        return "hour"

    def _from_days_scalar(self, days: int, value: int, source_type: IcebergType) -> int:
        per_hour = _MICROS_PER_HOUR * (
            _NANOS_PER_MICRO if isinstance(source_type, _NANO_TYPES) else 1)
        return value // per_hour

    def _from_values_np(self, values: npt.NDArray[np.int64],
                        source_type: IcebergType) -> npt.NDArray[np.int64]:
        per_hour = _MICROS_PER_HOUR * (
            _NANOS_PER_MICRO if isinstance(source_type, _NANO_TYPES) else 1)
        return np.floor_divide(values, per_hour)

    def _human(self, source_type: IcebergType, value: Any) -> str:
        year, month, day = _civil_from_days(value // 24)
        return f"{year:04d}-{month:02d}-{day:02d}-{value % 24:02d}"


@dataclass(frozen=True, slots=True)
class VoidTransform(Transform):
    """Always null; replaces a dropped partition field in v1 (spec: Partition Evolution)."""

    def __str__(self) -> str:
        return "void"

    @property
    def is_void(self) -> bool:
        return True

    def can_transform(self, source_type: IcebergType) -> bool:
        return True

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _scalar(self, source_type: IcebergType) -> Callable[[Any], Any]:
        return lambda v: None

    def _arrow(self, source_type: IcebergType, arr: Any) -> Any:
        return pa.nulls(len(arr), type=arr.type)


@safe_repr
@dataclass(frozen=True, slots=True)
class UnknownTransform(Transform):
    """A transform this library does not implement, kept verbatim (spec: Appendix E)."""

    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def is_unknown(self) -> bool:
        return True

    def can_transform(self, source_type: IcebergType) -> bool:
        return False

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return StringType()

    def _check_source(self, source_type: IcebergType) -> None:
        raise UnsupportedFeature(
            f"cannot apply unknown transform {self.text!r} to a {source_type} value",
            value=self.text)


# --------------------------------------------------------------------------- parsing

_SIMPLE: dict[str, Transform] = {
    "identity": IdentityTransform(),
    "year": YearTransform(),
    "month": MonthTransform(),
    "day": DayTransform(),
    "hour": HourTransform(),
    "void": VoidTransform(),
}
_PARAMETERIZED = re.compile(r"\s*([A-Za-z_]\w*)\s*\[\s*(.*?)\s*\]\s*", re.DOTALL)
_INTEGER = re.compile(r"[+-]?\d+")


def parse_transform(text: str, *, field: str | None = None) -> Transform:
    """Parse an Appendix C transform string (case-insensitive; spaces allowed).

    ``bucket``/``truncate`` need a positive int parameter (ValidationError otherwise); any
    other unrecognized string becomes an :class:`UnknownTransform` (never an error).
    """
    if not isinstance(text, str):
        raise ValidationError("a transform must be a JSON string", field=field, value=text)
    key = text.strip().lower()
    if not key:
        raise ValidationError("a transform must not be empty", field=field, value=text)
    simple = _SIMPLE.get(key)
    if simple is not None:
        return simple
    m = _PARAMETERIZED.fullmatch(text)
    name = m.group(1).lower() if m else key
    if name in ("bucket", "truncate"):
        what = "number of buckets" if name == "bucket" else "width"
        if m is None or not _INTEGER.fullmatch(m.group(2)):
            raise ValidationError(f"{name} needs a positive integer {what}, e.g. {name}[16]",
                                  field=field, value=text)
        param = int(m.group(2))
        if not 0 < param <= _INT_MAX:
            raise ValidationError(f"{name} {what} must be between 1 and {_INT_MAX}",
                                  field=field, value=text)
        return BucketTransform(param) if name == "bucket" else TruncateTransform(param)
    return UnknownTransform(text)
