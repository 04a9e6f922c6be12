"""Iceberg data types (spec: "Schemas and Data Types", Appendix C type strings).

Types are immutable values. Primitive types compare by value (``DecimalType(9, 2) ==
DecimalType(9, 2)``); nested types carry their field ids. ``parse_type_string`` reads the
JSON type strings of Appendix C (``"decimal(9, 2)"``, ``"fixed[16]"``), and ``str(t)`` writes them.

Python representation of values of each type, used throughout ``icenb.spec``
(the same as the Iceberg reference implementation's internal representation):

======================  ===========================================
boolean                 ``bool``
int, long               ``int``
float, double           ``float``
decimal(P, S)           ``decimal.Decimal`` (exponent ``-S``)
date                    ``int`` days from 1970-01-01
time                    ``int`` microseconds from midnight
timestamp, timestamptz  ``int`` microseconds from 1970-01-01T00:00:00 (UTC)
timestamp*_ns           ``int`` nanoseconds from 1970-01-01T00:00:00 (UTC)
string                  ``str``
uuid                    ``uuid.UUID``
fixed(L), binary        ``bytes``
geometry, geography     ``bytes`` (WKB)
struct                  ``dict`` mapping field id to value
list                    ``list``
map                     ``dict`` (keys must be hashable)
unknown                 always ``None``
======================  ===========================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from icenb.errors import ValidationError
from icenb.reprs import safe_repr

__all__ = [
    "BinaryType",
    "BooleanType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FixedType",
    "FloatType",
    "GeographyType",
    "GeometryType",
    "IcebergType",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "NestedField",
    "NestedType",
    "PrimitiveType",
    "StringType",
    "StructType",
    "TimeType",
    "TimestampNanoType",
    "TimestampType",
    "TimestamptzNanoType",
    "TimestamptzType",
    "UUIDType",
    "UnknownType",
    "VariantType",
    "decimal_required_bytes",
    "min_format_version",
    "parse_type_string",
]


class IcebergType:
    """Base of all Iceberg types."""

    __slots__ = ()

    @property
    def is_primitive(self) -> bool:
        return isinstance(self, PrimitiveType)

    @property
    def is_nested(self) -> bool:
        return isinstance(self, NestedType)

    @property
    def is_struct(self) -> bool:
        return isinstance(self, StructType)


class PrimitiveType(IcebergType):
    """A type without children. Parameterless primitives are singletons by value."""

    __slots__ = ()
    type_string: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.type_string

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class BooleanType(PrimitiveType):
    """True or false."""

    __slots__ = ()
    type_string = "boolean"


class IntegerType(PrimitiveType):
    """32-bit signed integer; can be promoted to long."""

    __slots__ = ()
    type_string = "int"
    min_value: ClassVar[int] = -(2**31)
    max_value: ClassVar[int] = 2**31 - 1


class LongType(PrimitiveType):
    """64-bit signed integer."""

    __slots__ = ()
    type_string = "long"
    min_value: ClassVar[int] = -(2**63)
    max_value: ClassVar[int] = 2**63 - 1


class FloatType(PrimitiveType):
    """32-bit IEEE 754 floating point; can be promoted to double."""

    __slots__ = ()
    type_string = "float"


class DoubleType(PrimitiveType):
    """64-bit IEEE 754 floating point."""

    __slots__ = ()
    type_string = "double"


class DateType(PrimitiveType):
    """Calendar date without time zone or time."""

    __slots__ = ()
    type_string = "date"


class TimeType(PrimitiveType):
    """Time of day, microsecond precision, without date or zone."""

    __slots__ = ()
    type_string = "time"


class TimestampType(PrimitiveType):
    """Timestamp, microsecond precision, without time zone."""

    __slots__ = ()
    type_string = "timestamp"


class TimestamptzType(PrimitiveType):
    """Timestamp, microsecond precision, with time zone (stored as UTC)."""

    __slots__ = ()
    type_string = "timestamptz"


class TimestampNanoType(PrimitiveType):
    """Timestamp, nanosecond precision, without time zone (v3)."""

    __slots__ = ()
    type_string = "timestamp_ns"


class TimestamptzNanoType(PrimitiveType):
    """Timestamp, nanosecond precision, with time zone (v3)."""

    __slots__ = ()
    type_string = "timestamptz_ns"


class StringType(PrimitiveType):
    """Arbitrary-length UTF-8 character sequence."""

    __slots__ = ()
    type_string = "string"


class UUIDType(PrimitiveType):
    """Universally unique identifier (16 bytes)."""

    __slots__ = ()
    type_string = "uuid"


class BinaryType(PrimitiveType):
    """Arbitrary-length byte array."""

    __slots__ = ()
    type_string = "binary"


class UnknownType(PrimitiveType):
    """Released v3: a column whose type is not yet known; every value is null."""

    __slots__ = ()
    type_string = "unknown"


class VariantType(PrimitiveType):
    """Released v3: semi-structured data in the Variant encoding (parsed and serialized only)."""

    __slots__ = ()
    type_string = "variant"


@safe_repr
@dataclass(frozen=True, slots=True)
class DecimalType(PrimitiveType):
    """Fixed-point decimal; precision at most 38, scale fixed (spec: Primitive Types)."""

    precision: int
    scale: int

    def __post_init__(self) -> None:
        if not 0 < self.precision <= 38:
            raise ValidationError(
                "decimal precision must be between 1 and 38", field="precision",
                value=self.precision,
            )

    def __str__(self) -> str:
        return f"decimal({self.precision}, {self.scale})"

    def __repr__(self) -> str:
        return f"DecimalType({self.precision}, {self.scale})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DecimalType)
            and self.precision == other.precision
            and self.scale == other.scale
        )

    def __hash__(self) -> int:
        return hash(("decimal", self.precision, self.scale))


@safe_repr
@dataclass(frozen=True, slots=True)
class FixedType(PrimitiveType):
    """Fixed-length byte array of ``length`` bytes."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 0:
            raise ValidationError("fixed length must not be negative", field="length",
                                  value=self.length)

    def __str__(self) -> str:
        return f"fixed[{self.length}]"

    def __repr__(self) -> str:
        return f"FixedType({self.length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FixedType) and self.length == other.length

    def __hash__(self) -> int:
        return hash(("fixed", self.length))


DEFAULT_CRS = "OGC:CRS84"


@safe_repr
@dataclass(frozen=True, slots=True)
class GeometryType(PrimitiveType):
    """Released v3: geometry in WKB with a coordinate reference system (default OGC:CRS84)."""

    crs: str = DEFAULT_CRS

    def __str__(self) -> str:
        return "geometry" if self.crs == DEFAULT_CRS else f"geometry({self.crs})"

    def __repr__(self) -> str:
        return f"GeometryType({self.crs!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GeometryType) and self.crs == other.crs

    def __hash__(self) -> int:
        return hash(("geometry", self.crs))


@safe_repr
@dataclass(frozen=True, slots=True)
class GeographyType(PrimitiveType):
    """Released v3: geography in WKB with a CRS and an edge-interpolation algorithm."""

    crs: str = DEFAULT_CRS
    algorithm: str = "spherical"

    def __str__(self) -> str:
        if self.algorithm != "spherical":
            return f"geography({self.crs}, {self.algorithm})"
        if self.crs != DEFAULT_CRS:
            return f"geography({self.crs})"
        return "geography"

    def __repr__(self) -> str:
        return f"GeographyType({self.crs!r}, {self.algorithm!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GeographyType)
            and self.crs == other.crs
            and self.algorithm == other.algorithm
        )

    def __hash__(self) -> int:
        return hash(("geography", self.crs, self.algorithm))


_GEO_ALGORITHMS = ("spherical", "vincenty", "thomas", "andoyer", "karney")

_SIMPLE_TYPES: dict[str, PrimitiveType] = {
    t.type_string: t()
    for t in (
        BooleanType, IntegerType, LongType, FloatType, DoubleType, DateType, TimeType,
        TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType, StringType,
        UUIDType, BinaryType, UnknownType, VariantType,
    )
}
_DECIMAL_RE = re.compile(r"decimal\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")
_FIXED_RE = re.compile(r"fixed\s*\[\s*(\d+)\s*\]")
_GEOMETRY_RE = re.compile(r"geometry\s*\(\s*([^,()]+?)\s*\)")
_GEOGRAPHY_RE = re.compile(r"geography\s*\(\s*([^,()]+?)\s*(?:,\s*([A-Za-z]+)\s*)?\)")


def parse_type_string(text: str, *, field: str | None = None) -> PrimitiveType:
    """Parse a primitive type string of Appendix C (``"decimal(9,2)"``, ``"fixed[16]"``...)."""
    if not isinstance(text, str):
        raise ValidationError("a primitive type must be a JSON string", field=field, value=text)
    key = text.strip().lower()
    simple = _SIMPLE_TYPES.get(key)
    if simple is not None:
        return simple
    if key == "geometry":
        return GeometryType()
    if key == "geography":
        return GeographyType()
    m = _DECIMAL_RE.fullmatch(key)
    if m:
        return DecimalType(int(m.group(1)), int(m.group(2)))
    m = _FIXED_RE.fullmatch(key)
    if m:
        return FixedType(int(m.group(1)))
    m = _GEOMETRY_RE.fullmatch(text.strip())
    if m:
        return GeometryType(m.group(1))
    m = _GEOGRAPHY_RE.fullmatch(text.strip())
    if m:
        algorithm = (m.group(2) or "spherical").lower()
        if algorithm not in _GEO_ALGORITHMS:
            raise ValidationError("unknown geography edge algorithm", field=field,
                                  value=text)
        return GeographyType(m.group(1), algorithm)
    raise ValidationError("unknown type", field=field, value=text)


def decimal_required_bytes(precision: int) -> int:
    """Minimum bytes of a two's-complement integer holding any unscaled value of ``precision``.

    Spec: Appendix A (Avro/Parquet fixed size for decimals).
    """
    if not 0 < precision <= 38:
        raise ValidationError("decimal precision must be between 1 and 38", field="precision",
                              value=precision)
    n = 1
    while 10**precision - 1 >= 2 ** (8 * n - 1):
        n += 1
    return n


# --------------------------------------------------------------------------- nested types


@safe_repr
@dataclass(frozen=True)
class NestedField:
    """A struct field, list element or map key/value: id, name, type, required, doc, defaults.

    Defaults (spec: "Default values") use the Python value representation of the module
    docstring; ``None`` means no default (null).
    """

    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    initial_default: Any = None
    write_default: Any = None

    @property
    def optional(self) -> bool:
        return not self.required

    def __str__(self) -> str:
        req = "required" if self.required else "optional"
        doc = f" ({self.doc})" if self.doc else ""
        return f"{self.field_id}: {self.name}: {req} {self.field_type}{doc}"


class NestedType(IcebergType):
    """A struct, list or map."""

    __slots__ = ()

    @property
    def fields(self) -> tuple[NestedField, ...]:
        raise NotImplementedError


@dataclass(frozen=True, init=False, eq=False)
class StructType(NestedType):
    """A tuple of named, typed fields with unique ids."""

    struct_fields: tuple[NestedField, ...] = ()

    def __init__(self, *fields: NestedField) -> None:
        object.__setattr__(self, "struct_fields", tuple(fields))

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return self.struct_fields

    @cached_property
    def _by_id(self) -> dict[int, NestedField]:
        return {f.field_id: f for f in self.struct_fields}

    def field(self, field_id: int) -> NestedField | None:
        """The direct child with ``field_id``, or None."""
        return self._by_id.get(field_id)

    def field_by_name(self, name: str, case_sensitive: bool = True) -> NestedField | None:
        """The direct child called ``name``, or None."""
        if case_sensitive:
            for f in self.struct_fields:
                if f.name == name:
                    return f
            return None
        lowered = name.lower()
        for f in self.struct_fields:
            if f.name.lower() == lowered:
                return f
        return None

    def __str__(self) -> str:
        return type_text(self)

    def __repr__(self) -> str:
        return "StructType(" + ", ".join(repr(f) for f in self.fields) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and self.struct_fields == other.struct_fields

    def __hash__(self) -> int:
        return hash(self.struct_fields)


@safe_repr
@dataclass(frozen=True)
class ListType(NestedType):
    """A list of elements of one type; the element field has its own id."""

    element_id: int
    element_type: IcebergType
    element_required: bool = False

    @cached_property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.element_field,)

    def __str__(self) -> str:
        return type_text(self)


@safe_repr
@dataclass(frozen=True)
class MapType(NestedType):
    """A map; keys are always required, values may be optional."""

    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = False

    @cached_property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @cached_property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.key_field, self.value_field)

    def __str__(self) -> str:
        return type_text(self)


# --------------------------------------------------------------------------- versions

_V3_TYPES = (
    TimestampNanoType, TimestamptzNanoType, UnknownType, VariantType, GeometryType, GeographyType,
)


def min_format_version(t: IcebergType) -> int:
    """The first table format version that allows type ``t`` (nested: its most recent child).

    Spec: Primitive Types, "Added by version".
    """
    if isinstance(t, _V3_TYPES):
        return 3
    if isinstance(t, NestedType):
        return max((min_format_version(f.field_type) for f in t.fields), default=1)
    return 1


def check_new_type(t: IcebergType, *, field: str | None = None) -> None:
    """Refuse, for a new column, a type no value can be written to: ``fixed[0]``, a decimal
    whose scale is negative or above its precision (Parquet's DECIMAL annotation needs
    ``0 <= scale <= precision``), at any nesting depth. Types read from existing metadata are
    not checked (issue 17)."""
    if isinstance(t, FixedType) and t.length < 1:
        raise ValidationError("fixed[0] holds no bytes: a fixed type for a new column needs a "
                              "length of at least 1", field=field, value=str(t))
    if isinstance(t, DecimalType) and not 0 <= t.scale <= t.precision:
        raise ValidationError("a decimal's scale must be between 0 and its precision (Parquet "
                              "cannot store it otherwise)", field=field, value=str(t))
    if isinstance(t, (StructType, ListType, MapType)):
        for f in t.fields:
            check_new_type(f.field_type, field=f.name if field is None else f"{field}.{f.name}")


def type_text(t: IcebergType) -> str:
    """``str(t)`` of a nested type without recursion (``struct<a: int, b: list<long>>``), so
    a deeply nested schema prints instead of raising ``RecursionError`` (issue 17)."""
    out: list[str] = []
    stack: list[IcebergType | str] = [t]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, StructType):
            parts: list[IcebergType | str] = ["struct<"]
            for i, f in enumerate(item.fields):
                parts += [", " if i else "", f"{f.name}: ", f.field_type]
            parts.append(">")
            stack.extend(reversed(parts))
        elif isinstance(item, ListType):
            stack.extend(reversed(["list<", item.element_type, ">"]))
        elif isinstance(item, MapType):
            stack.extend(reversed(["map<", item.key_type, ", ", item.value_type, ">"]))
        else:
            out.append(str(item))
    return "".join(out)
