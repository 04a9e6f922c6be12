"""Iceberg schemas as Spark schemas, and icenb's Arrow data as the Arrow Spark expects.

Spark reads a Python data source's ``pyarrow.RecordBatch`` es by the declared Spark schema, so
every column must arrive with the Arrow type Spark maps to that Spark type. The mapping follows
Iceberg's Spark integration (``TypeToSparkType``) where Spark (4.1 to 4.3) can carry the type
over Arrow:

=====================  =====================  ===========================================
Iceberg                Spark                  note
=====================  =====================  ===========================================
boolean, int, long     boolean, int, bigint
float, double          float, double
decimal(P, S)          decimal(P, S)
date                   date
timestamp              timestamp_ntz
timestamptz            timestamp              instants (UTC); shown in the session zone
string                 string
uuid                   string                 canonical form ``8-4-4-4-12``, lower case
fixed[L], binary       binary
time                   string                 ``HH:MM:SS.ffffff`` (see below)
geometry, geography    binary                 WKB, as icenb's Arrow reads give it
unknown                void (null)
struct, list, map      struct, array, map     nullable unless ``required`` (fields of a
                                              struct that may be null: nullable); docs
                                              as ``comment`` metadata
timestamp_ns,          refused                ``UnsupportedFeature``
timestamptz_ns
variant                refused                ``UnsupportedFeature``
=====================  =====================  ===========================================

Decisions where Iceberg's mapping does not apply: Iceberg's Spark integration refuses ``time``;
Spark 4.1 has a ``TIME`` type, but it is off by default (``spark.sql.timeType.enabled``) and its
Arrow form is not accepted from Python data sources, so a time reads as a fixed-width string,
which sorts like the time. Geometry and geography (refused by Iceberg's integration; Spark 4.1's
geospatial types are off by default) read as their WKB bytes. Nanosecond timestamps are refused
as Iceberg's integration does (Spark has microseconds only; truncating would change values);
``variant`` is refused because icenb's readers do not decode it yet. Select other columns
(``columns=``) or use ``to_arrow()`` for these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as st

from icenb.errors import UnsupportedFeature
from icenb.spec.arrow_schema import to_arrow_type
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

__all__ = ["schema_from_spark", "spark_arrow_schema", "spark_schema", "spark_to_arrow_schema",
           "spark_type", "to_spark_arrow"]

_SIMPLE: dict[type, st.DataType] = {
    BooleanType: st.BooleanType(),
    IntegerType: st.IntegerType(),
    LongType: st.LongType(),
    FloatType: st.FloatType(),
    DoubleType: st.DoubleType(),
    DateType: st.DateType(),
    TimeType: st.StringType(),
    TimestampType: st.TimestampNTZType(),
    TimestamptzType: st.TimestampType(),
    StringType: st.StringType(),
    UUIDType: st.StringType(),
    FixedType: st.BinaryType(),
    BinaryType: st.BinaryType(),
    GeometryType: st.BinaryType(),
    GeographyType: st.BinaryType(),
    UnknownType: st.NullType(),
}

_REFUSED: dict[type, str] = {
    TimestampNanoType: "Spark has no nanosecond timestamp",
    TimestamptzNanoType: "Spark has no nanosecond timestamp",
    VariantType: "icenb cannot read variant values yet",
}


def spark_type(t: IcebergType, *, field: str | None = None) -> st.DataType:
    """The Spark type an Iceberg type reads as (see the module table)."""
    return _spark_type(t, field, False)


def _spark_type(t: IcebergType, field: str | None, in_optional: bool) -> st.DataType:
    simple = _SIMPLE.get(type(t))
    if simple is not None:
        return simple
    if isinstance(t, DecimalType):
        return st.DecimalType(t.precision, t.scale)
    if isinstance(t, StructType):
        return st.StructType([_spark_field(f, field, in_optional) for f in t.fields])
    if isinstance(t, ListType):
        element = _spark_type(t.element_type, _path(field, "element"), not t.element_required)
        return st.ArrayType(element, containsNull=not t.element_required)
    if isinstance(t, MapType):
        return st.MapType(_spark_type(t.key_type, _path(field, "key"), False),
                          _spark_type(t.value_type, _path(field, "value"),
                                      not t.value_required),
                          valueContainsNull=not t.value_required)
    reason = _REFUSED.get(type(t), "no Spark type for this Iceberg type")
    raise UnsupportedFeature(f"cannot read this column through Spark: {reason}; select other "
                             "columns (columns=...) or read it with to_arrow()",
                             field=field, value=str(t))


def _path(parent: str | None, name: str) -> str:
    return name if parent is None else f"{parent}.{name}"


def _spark_field(f: NestedField, parent: str | None, in_optional: bool) -> st.StructField:
    """A struct field; required fields of a struct that may be null are nullable (a null
    struct's fields are null in Arrow, which Spark's ``toArrow`` refuses for non-null fields)."""
    nullable = not f.required or in_optional
    metadata = {"comment": f.doc} if f.doc else None
    return st.StructField(f.name, _spark_type(f.field_type, _path(parent, f.name), nullable),
                          nullable=nullable, metadata=metadata)


def spark_schema(schema: Schema) -> st.StructType:
    """The Spark schema of a read of ``schema`` (field order and names kept)."""
    return st.StructType([_spark_field(f, None, False) for f in schema.fields])


# --------------------------------------------------------------------------- Arrow data


def _spark_arrow_type(t: IcebergType, in_optional: bool = False) -> pa.DataType:
    """The Arrow type Spark expects for the Spark type of ``t`` (nullability as there)."""
    if isinstance(t, (UUIDType, TimeType)):
        return pa.string()
    if isinstance(t, (FixedType, GeometryType, GeographyType)):
        return pa.binary()
    if isinstance(t, StructType):
        return pa.struct([_spark_arrow_field(f, in_optional) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(_spark_arrow_field(t.element_field, False))
    if isinstance(t, MapType):
        return pa.map_(_spark_arrow_field(t.key_field, False),
                       _spark_arrow_field(t.value_field, False))
    return to_arrow_type(t)


def _spark_arrow_field(f: NestedField, in_optional: bool) -> pa.Field:
    nullable = not f.required or in_optional
    return pa.field(f.name, _spark_arrow_type(f.field_type, nullable), nullable=nullable)


def spark_arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of the batches a read of ``schema`` hands to Spark."""
    return pa.schema([_spark_arrow_field(f, False) for f in schema.fields])


def _needs_conversion(t: IcebergType) -> bool:
    if isinstance(t, (UUIDType, TimeType, FixedType)):
        return True
    if isinstance(t, (StructType, ListType, MapType)):
        return any(_needs_conversion(f.field_type) for f in t.fields)
    return False


def to_spark_arrow(table: pa.Table, schema: Schema) -> pa.Table:
    """icenb's Arrow data of ``schema`` (``to_arrow()`` types) with the types Spark expects."""
    target = spark_arrow_schema(schema)
    columns = []
    for i, f in enumerate(schema.fields):
        col = table.column(i)
        want = target.field(i).type
        if _needs_conversion(f.field_type):
            col = pa.chunked_array([_convert(c, f.field_type, not f.required)
                                    for c in col.chunks], type=want)
        elif col.type != want:
            col = col.cast(want)  # only nullability and field metadata differ
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=target)


def _convert(arr: pa.Array, t: IcebergType, nullable: bool) -> pa.Array:
    """One array of Iceberg type ``t`` (icenb's Arrow form) in Spark's Arrow form."""
    target = _spark_arrow_type(t, nullable)
    if not _needs_conversion(t):
        return arr if arr.type == target else arr.cast(target)
    if isinstance(t, UUIDType):
        return _uuid_strings(arr)
    if isinstance(t, TimeType):
        return _time_strings(arr)
    if isinstance(t, FixedType):
        return arr.cast(pa.binary())
    if arr.offset:
        arr = pa.concat_arrays([arr])  # a copy from offset 0: Arrow rebuilds sliced lists badly
    mask = arr.is_null() if arr.null_count else None
    if isinstance(t, StructType):
        assert isinstance(arr, pa.StructArray)
        children = [_convert(c, f.field_type, not f.required or nullable)
                    for c, f in zip(arr.flatten(), t.fields, strict=True)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if isinstance(t, ListType):
        assert isinstance(arr, pa.ListArray)
        values = _convert(arr.values, t.element_type, not t.element_required)
        return pa.ListArray.from_arrays(arr.offsets, values, type=target, mask=mask)
    assert isinstance(t, MapType) and isinstance(arr, pa.MapArray)
    keys = _convert(arr.keys, t.key_type, False)
    items = _convert(arr.items, t.value_type, not t.value_required)
    return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=mask)


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# Where the 32 hex digits go in the 36 characters of a UUID's canonical form.
_UUID_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])


def _fixed_width_strings(chars: np.ndarray[Any, Any], valid: pa.Array | None) -> pa.Array:
    """A string array from an (n, width) uint8 matrix; rows where ``valid`` is false are null."""
    n, width = chars.shape
    offsets = np.arange(0, width * (n + 1), width, dtype=np.int32)
    out = pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()),
                                      pa.py_buffer(np.ascontiguousarray(chars).tobytes()))
    if valid is not None:
        out = pc.if_else(valid, out, pa.scalar(None, pa.string()))
    return out


def _uuid_strings(arr: pa.Array) -> pa.Array:
    """UUIDs (16 bytes each) in canonical text form (RFC 4122: 8-4-4-4-12 hex digits)."""
    n = len(arr)
    data = arr.buffers()[1]
    if n == 0 or data is None or arr.null_count == n:
        return pa.nulls(n, pa.string())
    raw = np.frombuffer(data, dtype=np.uint8, count=(arr.offset + n) * 16)
    raw = raw[arr.offset * 16:].reshape(n, 16)
    digits = np.stack([_HEX[raw >> 4], _HEX[raw & 15]], axis=2).reshape(n, 32)
    chars = np.full((n, 36), ord("-"), dtype=np.uint8)
    chars[:, _UUID_DIGITS] = digits
    return _fixed_width_strings(chars, arr.is_valid() if arr.null_count else None)


def _digits(values: np.ndarray[Any, Any], width: int) -> np.ndarray[Any, Any]:
    """Zero-padded decimal digits of non-negative ints, as an (n, width) uint8 matrix."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((values[:, None] // powers) % 10 + ord("0")).astype(np.uint8)


def _time_strings(arr: pa.Array) -> pa.Array:
    """Times of day (microseconds) as ``HH:MM:SS.ffffff``."""
    n = len(arr)
    if n == 0 or arr.null_count == n:
        return pa.nulls(n, pa.string())
    micros = pc.fill_null(arr.cast(pa.time64("us")).cast(pa.int64()), 0).to_numpy()
    seconds = micros // 1_000_000
    sep = np.full((n, 1), ord(":"), dtype=np.uint8)
    dot = np.full((n, 1), ord("."), dtype=np.uint8)
    chars = np.hstack([_digits(seconds // 3600, 2), sep, _digits(seconds // 60 % 60, 2), sep,
                       _digits(seconds % 60, 2), dot, _digits(micros % 1_000_000, 6)])
    return _fixed_width_strings(chars, arr.is_valid() if arr.null_count else None)


# --------------------------------------------------------------------------- Spark schemas in


# Spark types whose Arrow form is one Arrow type (as Spark's own Arrow conversion maps them).
_SPARK_ARROW: dict[type, pa.DataType] = {
    st.BooleanType: pa.bool_(),
    st.ByteType: pa.int8(),
    st.ShortType: pa.int16(),
    st.IntegerType: pa.int32(),
    st.LongType: pa.int64(),
    st.FloatType: pa.float32(),
    st.DoubleType: pa.float64(),
    st.StringType: pa.string(),
    st.CharType: pa.string(),
    st.VarcharType: pa.string(),
    st.BinaryType: pa.binary(),
    st.DateType: pa.date32(),
    st.TimestampType: pa.timestamp("us", tz="UTC"),
    st.TimestampNTZType: pa.timestamp("us"),
    st.TimeType: pa.time64("ns"),  # Spark's TIME (nanoseconds in Arrow); Iceberg's time
    st.NullType: pa.null(),
}


def _arrow_of_spark(dt: Any, path: str) -> pa.DataType:
    """The Arrow type of Spark type ``dt`` (``timestamp``: UTC instants, as Spark sends them).

    icenb's own mapping rather than ``pyspark.sql.pandas.types.to_arrow_schema``: that helper
    is internal and its signature changed between Spark releases (4.3 wants a time zone)."""
    simple = _SPARK_ARROW.get(type(dt))
    if simple is not None:
        return simple
    if isinstance(dt, st.DecimalType):
        return pa.decimal128(dt.precision, dt.scale)
    if isinstance(dt, st.ArrayType):
        return pa.list_(pa.field("element", _arrow_of_spark(dt.elementType, f"{path}.element"),
                                 nullable=dt.containsNull))
    if isinstance(dt, st.MapType):
        return pa.map_(pa.field("key", _arrow_of_spark(dt.keyType, f"{path}.key"),
                                nullable=False),
                       pa.field("value", _arrow_of_spark(dt.valueType, f"{path}.value"),
                                nullable=dt.valueContainsNull))
    if isinstance(dt, st.StructType):
        return pa.struct([pa.field(f.name, _arrow_of_spark(f.dataType, f"{path}.{f.name}"),
                                   nullable=f.nullable) for f in dt.fields])
    if isinstance(dt, st.UserDefinedType):
        return _arrow_of_spark(dt.sqlType(), path)
    raise UnsupportedFeature(f"no Iceberg type for the Spark type {dt.simpleString()}",
                             field=path, value=dt.simpleString())


def spark_to_arrow_schema(schema: st.StructType) -> pa.Schema:
    """The Arrow schema of a Spark schema (the types a Spark DataFrame's Arrow batches have);
    Spark types with no Iceberg type here (intervals, variant, geospatial) are refused."""
    return pa.schema([pa.field(f.name, _arrow_of_spark(f.dataType, f.name), nullable=f.nullable)
                      for f in schema.fields])


def schema_from_spark(schema: Any) -> Schema:
    """An Iceberg schema from a Spark schema (provisional ids, as from Arrow): the Spark types'
    Arrow form (:func:`spark_to_arrow_schema`), then
    :func:`icenb.table.warehouse.schema_from_arrow` (``timestamp`` becomes ``timestamptz``,
    ``timestamp_ntz`` ``timestamp``; non-nullable fields are required)."""
    from icenb.table.warehouse import schema_from_arrow

    if not isinstance(schema, st.StructType):
        raise UnsupportedFeature("a Spark schema must be a StructType", field="schema",
                                 value=type(schema).__name__)
    return schema_from_arrow(spark_to_arrow_schema(schema))
