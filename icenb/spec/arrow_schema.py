"""Iceberg schemas and values as Arrow: types with field ids, and constant columns.

Arrow fields carry the Iceberg field id as ``PARQUET:field_id`` metadata (what pyarrow reads
from and writes to Parquet), so Arrow data stays matched to the schema by id, not by name.
Spec: "Schemas and Data Types"; Parquet type mapping: Appendix A.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from icenb.errors import UnsupportedFeature
from icenb.spec.arrow_types import primitive_arrow_type
from icenb.spec.schema import Schema
from icenb.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
    UUIDType,
)

__all__ = [
    "FIELD_ID_KEY",
    "arrow_constant",
    "arrow_field",
    "arrow_field_id",
    "null_array",
    "to_arrow_schema",
    "to_arrow_type",
]

#: Arrow field metadata key holding the Iceberg field id (as pyarrow's Parquet reader uses it).
FIELD_ID_KEY = b"PARQUET:field_id"


def arrow_field_id(field: pa.Field) -> int | None:
    """The Iceberg field id of an Arrow field (``PARQUET:field_id`` metadata), if any."""
    meta = field.metadata
    if not meta:
        return None
    raw = meta.get(FIELD_ID_KEY)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def to_arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type that holds values of an Iceberg type (Appendix A's Parquet mapping)."""
    if t.is_primitive:
        return primitive_arrow_type(t)
    if isinstance(t, StructType):
        return pa.struct([arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(arrow_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(arrow_field(t.key_field), arrow_field(t.value_field))
    raise UnsupportedFeature("no Arrow representation for this Iceberg type", value=str(t))


def arrow_field(field: NestedField) -> pa.Field:
    """An Arrow field for an Iceberg field, with its id as ``PARQUET:field_id`` metadata."""
    return pa.field(field.name, to_arrow_type(field.field_type), nullable=not field.required,
                    metadata={FIELD_ID_KEY: str(field.field_id).encode()})


def to_arrow_schema(schema: Schema | StructType) -> pa.Schema:
    """The Arrow schema of an Iceberg schema, field ids kept as field metadata."""
    return pa.schema([arrow_field(f) for f in schema.fields])


def _arrow_value(t: IcebergType, value: Any) -> Any:
    """An internal value (``icenb.spec.types`` representation) as pyarrow accepts it."""
    if value is None:
        return None
    if isinstance(t, UUIDType):
        return value.bytes if isinstance(value, uuid.UUID) else bytes(value)
    if isinstance(t, StructType):
        items: Mapping[int, Any] = value
        return {f.name: _arrow_value(f.field_type, items.get(f.field_id)) for f in t.fields}
    if isinstance(t, ListType):
        return [_arrow_value(t.element_type, v) for v in value]
    if isinstance(t, MapType):
        return [(_arrow_value(t.key_type, k), _arrow_value(t.value_type, v))
                for k, v in value.items()]
    return value


def null_array(t: IcebergType, length: int) -> pa.Array:
    """``length`` nulls of ``t`` to write: a struct's children hold empty values, not nulls.

    A null struct (or variant group, Appendix A: ``metadata`` and ``value`` are required inside
    it) is stored as a null of the group alone; Parquet writers refuse a column declared
    non-nullable that holds nulls, even under a null parent, which ``pa.nulls`` would give.
    Readers keep :func:`arrow_constant`'s nulls: there a child of a null struct reads as null.
    """
    arrow_type = to_arrow_type(t)
    if not pa.types.is_struct(arrow_type):
        return pa.nulls(length, arrow_type)
    one = pa.array([None], type=arrow_type)  # children get empty values, the struct a null
    return one.take(pa.repeat(pa.scalar(0, pa.int32()), length))


def arrow_constant(t: IcebergType, value: Any, length: int) -> pa.Array:
    """An Arrow array repeating one internal value (a partition value or a default)."""
    arrow_type = to_arrow_type(t)
    if value is None:
        return pa.nulls(length, arrow_type)
    scalar = pa.scalar(_arrow_value(t, value), type=arrow_type)
    return pa.repeat(scalar, length)
