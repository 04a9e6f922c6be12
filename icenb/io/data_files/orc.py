"""Iceberg data and delete files in ORC, read into Arrow with Iceberg field ids.

Iceberg writes ORC with its schema in each ORC type's attributes (Iceberg Java ``ORCSchemaUtil``;
spec Appendix A "ORC"): ``iceberg.id`` (the field id), ``iceberg.required``, and where one ORC
type holds several Iceberg types, ``iceberg.long-type`` (``LONG`` or ``TIME``: time is a long of
microseconds), ``iceberg.binary-type`` (``UUID``, ``FIXED`` with ``iceberg.length``, ``BINARY``)
and ``iceberg.timestamp-unit`` (``MICROS``/``NANOS``). ORC ``timestamp`` is Iceberg timestamp,
``timestamp with local time zone`` is timestamptz. pyarrow (>= 13) reads those attributes into
Arrow field metadata; this module turns them into what the Parquet path produces: the id under
``PARQUET:field_id`` (:data:`FIELD_ID_KEY`) and the Arrow type of Appendix A's Parquet mapping
(``time64[us]``, ``fixed_size_binary(n)``, ``timestamp[us]``, ...), so projection by field id
works unchanged. Files written without ids (Hive, Spark's own ORC writer) get ids from a
caller-supplied name mapping.

Decisions: other ``iceberg.*`` attributes are dropped from the output fields; timestamps are
read as nanoseconds by pyarrow and converted to the unit the attributes announce (micros when
absent), rounding down sub-microsecond digits (files from other writers) as Iceberg Java's Spark
ORC readers do.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from icenb.errors import CorruptFile, IcebergError
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.file_io import InputFile

__all__ = ["iceberg_orc_schema", "read_orc_file"]

_ID = b"iceberg.id"
_LONG_TYPE = b"iceberg.long-type"
_BINARY_TYPE = b"iceberg.binary-type"
_LENGTH = b"iceberg.length"
_TS_UNIT = b"iceberg.timestamp-unit"

#: A function giving ids to the fields of a file written without them (a name mapping).
SchemaMapper = Callable[[pa.Schema], pa.Schema]


def iceberg_orc_schema(orc_schema: pa.Schema) -> pa.Schema:
    """The Arrow schema (Parquet-path types, ids as ``PARQUET:field_id``) of an ORC file's
    schema as pyarrow reads it, by the file's ``iceberg.*`` type attributes."""
    return pa.schema([_convert_field(f) for f in orc_schema])


def _convert_field(f: pa.Field) -> pa.Field:
    meta = f.metadata or {}
    t = f.type
    if pa.types.is_struct(t):
        t = pa.struct([_convert_field(t.field(i)) for i in range(t.num_fields)])
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        t = pa.list_(_convert_field(t.value_field))
    elif pa.types.is_map(t):
        t = pa.map_(_convert_field(t.key_field), _convert_field(t.item_field))
    elif pa.types.is_int64(t) and meta.get(_LONG_TYPE) == b"TIME":
        t = pa.time64("us")
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        kind = meta.get(_BINARY_TYPE)
        if kind == b"UUID":
            t = pa.binary(16)
        elif kind == b"FIXED" and meta.get(_LENGTH, b"").isdigit():
            t = pa.binary(int(meta[_LENGTH]))
    elif pa.types.is_timestamp(t):
        unit = "ns" if meta.get(_TS_UNIT) == b"NANOS" else "us"
        t = pa.timestamp(unit, tz=t.tz)
    out_meta = {}
    raw_id = meta.get(_ID)
    if raw_id is not None and raw_id.lstrip(b"-").isdigit():
        out_meta[FIELD_ID_KEY] = raw_id
    return pa.field(f.name, t, f.nullable, metadata=out_meta or None)


def _has_ids(schema: pa.Schema) -> bool:
    return any(f.metadata and FIELD_ID_KEY in f.metadata for f in schema)


def _top_level_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    return int(raw) if raw is not None else None


def read_orc_file(input_file: InputFile, *, field_ids: Collection[int] | None = None,
                  name_mapping: SchemaMapper | None = None) -> pa.Table:
    """The top-level columns of an ORC data or delete file whose field ids are in ``field_ids``
    (all when None), with ids as ``PARQUET:field_id`` field metadata.

    ``name_mapping`` gives ids to a file that has none (spec: "Column Projection"); malformed
    or truncated files raise :class:`~icenb.errors.CorruptFile` naming the file.
    """
    location = input_file.location
    with input_file.open() as stream:
        try:
            orc = po.ORCFile(stream)
            schema = iceberg_orc_schema(orc.schema)
            if name_mapping is not None and not _has_ids(schema):
                schema = name_mapping(schema)
            indices = list(range(len(schema)))
            if field_ids is not None:
                wanted = set(field_ids)
                indices = [i for i, f in enumerate(schema) if _top_level_id(f) in wanted]
            if not indices:
                return _no_columns(orc.nrows)
            table = orc.read(columns=[schema.field(i).name for i in indices])
        except (pa.ArrowException, OSError, ValueError, IndexError) as e:
            if isinstance(e, IcebergError):
                raise
            raise CorruptFile(f"cannot read ORC file: {e}", file=location) from None
    selected = pa.schema([schema.field(i) for i in indices])
    if table.num_columns != len(selected):
        raise CorruptFile("ORC file has duplicate column names", file=location,
                          value=table.column_names)
    return _conform(table, selected, location)


def _no_columns(n: int) -> pa.Table:
    """A table of ``n`` rows and no columns (a count, or a projection of no file columns)."""
    return pa.table({"_": pa.nulls(n)}).drop_columns(["_"])


def _conform(table: pa.Table, schema: pa.Schema, location: str) -> pa.Table:
    """The columns as pyarrow read them, converted to ``schema``'s types (with its metadata)."""
    columns: list[Any] = []
    for i, f in enumerate(schema):
        col = table.column(i)
        if col.type != f.type:
            try:
                col = pa.chunked_array([_to_type(chunk, f.type) for chunk in col.chunks],
                                       type=f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise CorruptFile(f"ORC column does not hold {f.type}: {e}", file=location,
                                  field=f.name) from None
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=schema)


def _to_type(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` as ``target`` (nested types child by child); nanosecond timestamps become
    microseconds rounded down, as Iceberg Java's Spark ORC readers do."""
    src = arr.type
    if src == target:
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(target):
        children = [_to_type(arr.field(i), target.field(i).type)
                    for i in range(target.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_map(target):
        keys = _to_type(arr.keys, target.key_type)
        items = _to_type(arr.items, target.item_type)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=mask)
    if pa.types.is_list(target):
        values = _to_type(arr.values, target.value_type)
        return pa.ListArray.from_arrays(arr.offsets, values, type=target, mask=mask)
    if pa.types.is_timestamp(src) and src.unit == "ns" and pa.types.is_timestamp(target) \
            and target.unit == "us":
        nanos = arr.cast(pa.int64())
        micros = pc.divide(nanos, 1000)  # rounds toward zero: one less below zero if inexact
        micros = pc.if_else(pc.less(nanos, pc.multiply(micros, 1000)),
                            pc.subtract(micros, 1), micros)
        return micros.cast(target)
    return arr.cast(target)
