"""Conform Arrow data to a table schema before it is written: names, types, required fields
and v3 defaults (spec: "Schemas and Data Types", "Default values"; Appendix A).

Accepted input casts are those that lose nothing: narrower ints to int/long, float16/float32 to
float/double, decimals to a decimal with at least the same integer and fraction digits, any
time unit to a finer or equal one, and finer units (``ns`` data for a ``timestamp`` column,
``date64`` for ``date``) only when every value converts exactly (checked on the values). A
zoned Arrow timestamp fits only ``timestamptz``/``timestamptz_ns``, a naive one only
``timestamp``/``timestamp_ns``. Dictionary-encoded input is decoded; an all-null Arrow column
(type ``null``) fits any optional column. An optional ``variant`` column takes nulls (omitted,
an all-null column, or a struct of ``metadata``/``value`` that is null in every row) and writes
them as nulls of the variant group; non-null variant values, ``geometry`` and ``geography``
cannot be written yet (:class:`~icenb.errors.UnsupportedFeature`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.io.arrow_arrays import combined, list_offsets, map_as_list, null_mask
from icenb.spec.arrow_schema import arrow_field, null_array, to_arrow_schema, to_arrow_type
from icenb.spec.arrow_types import primitive_arrow_type
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
    PrimitiveType,
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


def _as_table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    raise ValidationError("data to write must be a pyarrow Table, RecordBatch or "
                          "RecordBatchReader", field="data", value=type(data).__name__)




def _type_error(path: str, arr_type: pa.DataType, t: IcebergType,
                detail: str = "") -> ValidationError:
    more = f": {detail}" if detail else ""
    return ValidationError(f"cannot write Arrow type {arr_type} to Iceberg type {t}{more}",
                           field=path, value=str(arr_type))


def _default_array(f: NestedField, n: int, path: str, format_version: int) -> pa.Array:
    """The column for a field the writer did not supply: its v3 write-default, null, or error."""
    from icenb.spec.arrow_schema import arrow_constant

    if format_version >= 3 and f.write_default is not None:
        return arrow_constant(f.field_type, f.write_default, n)
    if f.required:
        raise ValidationError("required column is missing from the data", field=path)
    return null_array(f.field_type, n)


def _is_int(t: pa.DataType, bits: int) -> bool:
    if pa.types.is_signed_integer(t):
        return bool(t.bit_width <= bits)
    if pa.types.is_unsigned_integer(t):
        return bool(t.bit_width < bits)
    return False


def _allowed(arr_type: pa.DataType, t: IcebergType) -> bool:
    """Whether a column of ``arr_type`` may be cast to ``t`` (type-level check)."""
    ts = pa.types.is_timestamp(arr_type)
    if isinstance(t, BooleanType):
        return bool(pa.types.is_boolean(arr_type))
    if isinstance(t, IntegerType):
        return _is_int(arr_type, 32)
    if isinstance(t, LongType):
        return _is_int(arr_type, 64)
    if isinstance(t, FloatType):
        return bool(pa.types.is_float16(arr_type) or pa.types.is_float32(arr_type))
    if isinstance(t, DoubleType):
        return bool(pa.types.is_floating(arr_type))
    if isinstance(t, DecimalType):
        if not pa.types.is_decimal(arr_type):
            return False
        p, s = arr_type.precision, arr_type.scale
        return bool(s <= t.scale and p - s <= t.precision - t.scale)
    if isinstance(t, DateType):
        return bool(pa.types.is_date(arr_type))
    if isinstance(t, TimeType):
        return bool(pa.types.is_time(arr_type))
    if isinstance(t, (TimestampType, TimestampNanoType)):
        return bool(ts and arr_type.tz is None)
    if isinstance(t, (TimestamptzType, TimestamptzNanoType)):
        return bool(ts and arr_type.tz is not None)
    if isinstance(t, StringType):
        return bool(pa.types.is_string(arr_type) or pa.types.is_large_string(arr_type)
                    or pa.types.is_string_view(arr_type))
    if isinstance(t, BinaryType):
        return bool(pa.types.is_binary(arr_type) or pa.types.is_large_binary(arr_type)
                    or pa.types.is_binary_view(arr_type)
                    or pa.types.is_fixed_size_binary(arr_type))
    if isinstance(t, FixedType):
        return bool(pa.types.is_fixed_size_binary(arr_type)
                    and arr_type.byte_width == t.length)
    if isinstance(t, UUIDType):
        return bool(pa.types.is_fixed_size_binary(arr_type) and arr_type.byte_width == 16)
    return False


def _conform_primitive(arr: pa.Array, t: PrimitiveType, path: str) -> pa.Array:
    if isinstance(t, (GeometryType, GeographyType)):
        raise UnsupportedFeature(f"writing {t} columns is not supported yet", field=path,
                                 value=str(t))
    target = primitive_arrow_type(t)
    if isinstance(t, UnknownType):
        if arr.null_count != len(arr):
            raise ValidationError("a column of type unknown must be all null", field=path,
                                  value=str(arr.type))
        return pa.nulls(len(arr), target)
    if arr.type == target:
        return arr
    if not _allowed(arr.type, t):
        raise _type_error(path, arr.type, t)
    try:
        return arr.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise _type_error(path, arr.type, t, f"a value does not convert exactly ({exc})") from None








def _conform_variant(arr: pa.Array, path: str) -> pa.Array:
    """A variant column as its group (Appendix A: ``metadata`` and ``value`` are required
    inside it), null where ``arr`` is null. Other rows keep only their validity, so that
    :func:`_check_required` refuses them where their parents are set: icenb cannot write
    variant values yet."""
    if pa.types.is_struct(arr.type):
        names = {arr.type.field(i).name for i in range(arr.type.num_fields)}
        if not names <= {"metadata", "value"}:
            raise _type_error(path, arr.type, VariantType(),
                              "a variant is a struct of binary metadata and value")
    elif not pa.types.is_null(arr.type):
        raise _type_error(path, arr.type, VariantType())
    nulls = null_array(VariantType(), len(arr))
    if arr.null_count == len(arr):
        return nulls
    return pa.StructArray.from_arrays([nulls.field(0), nulls.field(1)],
                                      fields=list(nulls.type), mask=arr.is_null())


def _conform(arr: pa.Array, f: NestedField, path: str, format_version: int) -> pa.Array:
    """``arr`` as the Arrow type of field ``f`` (field ids on nested fields), or an error."""
    t = f.field_type
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    n = len(arr)
    if isinstance(t, VariantType):
        return _conform_variant(arr, path)
    if pa.types.is_null(arr.type):
        if isinstance(t, (GeometryType, GeographyType)):
            raise UnsupportedFeature(f"writing {t} columns is not supported yet", field=path,
                                     value=str(t))
        return null_array(t, n)
    if isinstance(t, StructType):
        if not pa.types.is_struct(arr.type):
            raise _type_error(path, arr.type, t)
        names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
        _check_names(names, t, path)
        children = []
        for child in t.fields:
            child_path = f"{path}.{child.name}"
            if child.name in names:
                children.append(_conform(arr.field(names.index(child.name)), child, child_path,
                                         format_version))
            else:
                children.append(_default_array(child, n, child_path, format_version))
        return pa.StructArray.from_arrays(children, fields=[arrow_field(c) for c in t.fields],
                                          mask=null_mask(arr))
    if isinstance(t, ListType):
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)
                or pa.types.is_fixed_size_list(arr.type) or pa.types.is_list_view(arr.type)
                or pa.types.is_large_list_view(arr.type)):
            raise _type_error(path, arr.type, t)
        elements = _conform(arr.flatten(), t.element_field, f"{path}.element", format_version)
        list_type = to_arrow_type(t)
        return pa.ListArray.from_arrays(list_offsets(arr, path), elements, type=list_type,
                                        mask=null_mask(arr))
    if isinstance(t, MapType):
        if not pa.types.is_map(arr.type):
            raise _type_error(path, arr.type, t)
        arr = map_as_list(arr)
        entries = arr.flatten()
        keys = _conform(entries.field(0), t.key_field, f"{path}.key", format_version)
        items = _conform(entries.field(1), t.value_field, f"{path}.value", format_version)
        return pa.MapArray.from_arrays(list_offsets(arr, path), keys, items,
                                       type=to_arrow_type(t), mask=null_mask(arr))
    assert isinstance(t, PrimitiveType)
    if pa.types.is_nested(arr.type):
        raise _type_error(path, arr.type, t)
    return _conform_primitive(arr, t, path)


def _check_names(names: Sequence[str], struct: StructType, path: str | None) -> None:
    seen: set[str] = set()
    for name in names:
        where = name if path is None else f"{path}.{name}"
        if name in seen:
            raise ValidationError("column appears more than once in the data", field=where)
        seen.add(name)
        if struct.field_by_name(name) is None:
            raise ValidationError("column is not in the table schema", field=where)


def _check_required(arr: pa.Array, f: NestedField, path: str, rows: npt.NDArray[np.int64],
                    present: npt.NDArray[np.bool_]) -> None:
    """Raise if a required field is null where its parents are not (spec: required fields),
    or a variant is not null there (icenb cannot write variant values yet)."""
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if isinstance(f.field_type, VariantType):
        given = np.flatnonzero(present & valid)
        if len(given):
            raise UnsupportedFeature(f"writing a non-null variant value (row "
                                     f"{int(rows[given[0]])}) is not supported yet; only "
                                     f"nulls can be written", field=path, value="variant")
    if f.required:
        bad = np.flatnonzero(present & ~valid)
        if len(bad):
            raise ValidationError(f"null value in required column at row {int(rows[bad[0]])}",
                                  field=path, value=None)
    t = f.field_type
    if isinstance(t, StructType):
        inner = present & valid
        for i, child in enumerate(t.fields):
            _check_required(arr.field(i), child, f"{path}.{child.name}", rows, inner)
    elif isinstance(t, (ListType, MapType)):
        if isinstance(t, MapType):
            arr = map_as_list(arr)
        parents = np.asarray(pc.list_parent_indices(arr).to_numpy(zero_copy_only=False),
                             dtype=np.int64)
        inner_rows, inner_present = rows[parents], present[parents]
        flat = arr.flatten()
        if isinstance(t, ListType):
            _check_required(flat, t.element_field, f"{path}.element", inner_rows, inner_present)
        else:
            _check_required(flat.field(0), t.key_field, f"{path}.key", inner_rows, inner_present)
            _check_required(flat.field(1), t.value_field, f"{path}.value", inner_rows,
                            inner_present)


def conform_to_schema(data: pa.Table | pa.RecordBatch, schema: Schema, *,
                      format_version: int) -> pa.Table:
    """Validate Arrow data against the table schema and cast it to the schema's Arrow types.

    Columns match by name (case-sensitive). A missing column gets its ``write-default`` (v3)
    or nulls, and is an error when required; extra columns, nulls in required fields and
    casts that could lose information raise :class:`ValidationError` naming the column (and the
    row of a null). The result has exactly the schema's columns, with ``PARQUET:field_id``
    metadata on every field. Spec: "Schemas and Data Types", "Default values".
    """
    table = _as_table(data)
    _check_names(table.column_names, schema.struct, None)
    n = table.num_rows
    arrays = []
    rows = np.arange(n, dtype=np.int64)
    present = np.ones(n, dtype=bool)
    for f in schema.fields:
        if f.name in table.column_names:
            arr = _conform(combined(table.column(f.name)), f, f.name, format_version)
        else:
            arr = _default_array(f, n, f.name, format_version)
        _check_required(arr, f, f.name, rows, present)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=to_arrow_schema(schema))
