"""Write data files from Arrow: conform to the table schema, partition, sort, write Parquet, collect
metrics. This is the code Spark executors run (pure pyarrow); the driver commits the results.

Spec sections: "Schemas and Data Types" (required fields, "Default values"), "Partitioning" and
"Partition Transforms", "Sorting", "Manifests" (``data_file`` metrics and their notes), Appendix A
(Parquet type mapping, field ids, 3-level lists and maps), Appendix D (bound serialization).
Names, defaults and layout follow the reference implementation (Java 1.10): file names of
``OutputFileFactory``, ``LocationProviders`` (default and object-storage layouts), Parquet table
properties (``write.parquet.*``, ``write.target-file-size-bytes``) and ``ParquetMetrics``.

Decisions where the spec is silent:

* Accepted input casts are those that lose nothing: narrower ints to int/long, float16/float32 to
  float/double, decimals to a decimal with at least the same integer and fraction digits, any
  time unit to a finer or equal one, and finer units (``ns`` data for a ``timestamp`` column,
  ``date64`` for ``date``) only when every value converts exactly (checked on the values). A
  zoned Arrow timestamp fits only ``timestamptz``/``timestamptz_ns``, a naive one only
  ``timestamp``/``timestamp_ns``. Dictionary-encoded input is decoded; an all-null Arrow column
  (type ``null``) fits any optional column.
* Metrics follow what Java's Parquet writer records: counts and bounds for primitive columns
  outside lists and maps (none for list elements, map keys and values, as Java 1.10), column
  sizes for every leaf; float/double bounds skip NaN and order -0.0 before 0.0, and a column
  of only NaN and null gets counts but no bounds. Bounds are computed from the Arrow values,
  not the Parquet footer, so they exist even where pyarrow drops long-string statistics.
* ``unknown`` columns are not stored in data files (Appendix A); ``variant``, ``geometry`` and
  ``geography`` cannot be written yet (:class:`UnsupportedFeature`).
"""

from __future__ import annotations

import contextlib
import math
import posixpath
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

import mmh3
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.spec import values
from icenb.spec.arrow_schema import FIELD_ID_KEY, arrow_field, to_arrow_schema, to_arrow_type
from icenb.spec.arrow_types import primitive_arrow_type
from icenb.spec.manifest import DataFile, FileContent, FileFormat
from icenb.spec.metrics_config import MetricsConfig, MetricsMode
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import (
    DEFAULT_FILE_FORMAT,
    FOLDER_STORAGE_PATH,
    LOCATION_PROVIDER_IMPL,
    OBJECT_STORAGE_ENABLED,
    OBJECT_STORAGE_PARTITIONED_PATHS,
    OBJECT_STORAGE_PATH,
    PARQUET_COMPRESSION,
    PARQUET_COMPRESSION_LEVEL,
    PARQUET_DICT_SIZE_BYTES,
    PARQUET_PAGE_ROW_LIMIT,
    PARQUET_PAGE_SIZE_BYTES,
    PARQUET_ROW_GROUP_SIZE_BYTES,
    WRITE_DATA_PATH,
    WRITE_TARGET_FILE_SIZE_BYTES,
    bool_property,
    int_property,
    optional_int_property,
)
from icenb.spec.schema import Schema
from icenb.spec.sort_order import UNSORTED, NullOrder, SortDirection, SortOrder
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

__all__ = [
    "DEFAULT_COMPRESSION",
    "DEFAULT_TARGET_FILE_SIZE",
    "DEFAULT_WRITE_BUFFER_BYTES",
    "DataFileMetrics",
    "DefaultLocationProvider",
    "LocationProvider",
    "ObjectStoreLocationProvider",
    "ParquetWriteOptions",
    "RollingDataWriter",
    "compute_metrics",
    "conform_to_schema",
    "data_file_name",
    "location_provider",
    "partition_and_sort",
    "truncate_binary_max",
    "truncate_binary_min",
    "truncate_string_max",
    "truncate_string_min",
    "write_data_files",
]

# Table properties (names and defaults of the reference implementation's TableProperties).
DEFAULT_COMPRESSION = "zstd"
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024
DEFAULT_ROW_GROUP_SIZE = 128 * 1024 * 1024
DEFAULT_PAGE_SIZE = 1024 * 1024
DEFAULT_PAGE_ROW_LIMIT = 20_000
DEFAULT_DICT_SIZE = 2 * 1024 * 1024

_CODECS = {"zstd": "zstd", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4",
           "brotli": "brotli", "uncompressed": "none", "none": "none"}


# --------------------------------------------------------------------------- conform


def _as_table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    raise ValidationError("data to write must be a pyarrow Table, RecordBatch or "
                          "RecordBatchReader", field="data", value=type(data).__name__)


def _combined(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.Array):
        return col
    if col.num_chunks == 1:
        return col.chunk(0)
    if col.num_chunks == 0:
        return pa.array([], type=col.type)
    return pa.concat_arrays(col.chunks)


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
    return pa.nulls(n, to_arrow_type(f.field_type))


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
    if isinstance(t, (VariantType, GeometryType, GeographyType)):
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


def _list_offsets(arr: pa.Array, path: str) -> pa.Array:
    """Offsets (from 0, int32) of a list or map array, null lists counted as empty."""
    lengths = pc.fill_null(pc.list_value_length(arr), 0).cast(pa.int64())
    ends = np.cumsum(lengths.to_numpy(zero_copy_only=False), dtype=np.int64)
    if len(ends) and ends[-1] > 2**31 - 1:
        raise ValidationError("too many list elements in one batch (more than 2^31 - 1)",
                              field=path)
    return pa.array(np.concatenate([[0], ends]).astype(np.int32), pa.int32())


def _null_mask(arr: pa.Array) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def _map_as_list(arr: pa.Array) -> pa.Array:
    """A map array as the list of ``struct<key, value>`` it is (list kernels refuse maps)."""
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    start, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    entries = pa.StructArray.from_arrays([arr.keys.slice(start, end - start),
                                          arr.items.slice(start, end - start)],
                                         names=["key", "value"])
    return pa.ListArray.from_arrays(pa.array(offsets - start, pa.int32()), entries,
                                    mask=_null_mask(arr))


def _conform(arr: pa.Array, f: NestedField, path: str, format_version: int) -> pa.Array:
    """``arr`` as the Arrow type of field ``f`` (field ids on nested fields), or an error."""
    t = f.field_type
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    n = len(arr)
    if pa.types.is_null(arr.type):
        if isinstance(t, (VariantType, GeometryType, GeographyType)):
            raise UnsupportedFeature(f"writing {t} columns is not supported yet", field=path,
                                     value=str(t))
        return pa.nulls(n, to_arrow_type(t))
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
                                          mask=_null_mask(arr))
    if isinstance(t, ListType):
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)
                or pa.types.is_fixed_size_list(arr.type) or pa.types.is_list_view(arr.type)
                or pa.types.is_large_list_view(arr.type)):
            raise _type_error(path, arr.type, t)
        elements = _conform(arr.flatten(), t.element_field, f"{path}.element", format_version)
        list_type = to_arrow_type(t)
        return pa.ListArray.from_arrays(_list_offsets(arr, path), elements, type=list_type,
                                        mask=_null_mask(arr))
    if isinstance(t, MapType):
        if not pa.types.is_map(arr.type):
            raise _type_error(path, arr.type, t)
        arr = _map_as_list(arr)
        entries = arr.flatten()
        keys = _conform(entries.field(0), t.key_field, f"{path}.key", format_version)
        items = _conform(entries.field(1), t.value_field, f"{path}.value", format_version)
        return pa.MapArray.from_arrays(_list_offsets(arr, path), keys, items,
                                       type=to_arrow_type(t), mask=_null_mask(arr))
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
    """Raise if a required field is null where its parents are not (spec: required fields)."""
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
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
            arr = _map_as_list(arr)
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
            arr = _conform(_combined(table.column(f.name)), f, f.name, format_version)
        else:
            arr = _default_array(f, n, f.name, format_version)
        _check_required(arr, f, f.name, rows, present)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=to_arrow_schema(schema))


# --------------------------------------------------------------------------- partition & sort


def _column_by_id(table: pa.Table, schema: Schema, field_id: int) -> pa.Array:
    """The values of column ``field_id`` (top level or inside structs), parent nulls applied."""
    chain = [*schema.ancestors(field_id), schema.find_field(field_id)]
    if any(not isinstance(p.field_type, StructType) for p in chain[:-1]):
        raise ValidationError("a partition or sort source must not be inside a list or map",
                              field=schema.column_name(field_id))
    arr = _combined(table.column(chain[0].name))
    parent_type: IcebergType = chain[0].field_type
    for child in chain[1:]:
        assert isinstance(parent_type, StructType)
        index = [f.field_id for f in parent_type.fields].index(child.field_id)
        arr = arr.flatten()[index]
        parent_type = child.field_type
    return arr


def _internal_values(arr: pa.Array, t: IcebergType) -> list[Any]:
    """Arrow values in the representation of :mod:`icenb.spec.types` (dates as day ints...)."""
    at = arr.type
    if pa.types.is_date32(at):
        arr = arr.cast(pa.int32())
    elif pa.types.is_timestamp(at) or pa.types.is_time(at):
        arr = arr.cast(pa.int64())
    out: list[Any] = arr.to_pylist()
    if isinstance(t, UUIDType):
        return [None if v is None else uuid.UUID(bytes=bytes(v)) for v in out]
    return out


def _float_order_key(arr: pa.Array) -> pa.Array:
    """Integers ordered as the floats are in IEEE totalOrder (spec: "Sorting")."""
    if pa.types.is_float32(arr.type):
        bits = np.asarray(pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False),
                          dtype=np.float32).view(np.int32).astype(np.int64)
        key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    else:
        bits = np.asarray(pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False),
                          dtype=np.float64).view(np.int64)
        key = bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF)
    return pa.array(key, pa.int64())


def _sort_columns(table: pa.Table, schema: Schema, order: SortOrder
                  ) -> tuple[dict[str, pa.Array], list[tuple[str, str]]]:
    columns: dict[str, pa.Array] = {}
    keys: list[tuple[str, str]] = []
    for i, sf in enumerate(order.fields):
        source = schema.find_field(sf.source_id)
        arr = _column_by_id(table, schema, sf.source_id)
        transformed = sf.transform.apply_arrow(source.field_type, arr)
        if isinstance(transformed, pa.ChunkedArray):
            transformed = _combined(transformed)
        nulls_first = sf.null_order is NullOrder.NULLS_FIRST
        columns[f"v{i}"] = transformed.is_valid()
        keys.append((f"v{i}", "ascending" if nulls_first else "descending"))
        if pa.types.is_floating(transformed.type):
            transformed = _float_order_key(transformed)
        columns[f"k{i}"] = transformed
        keys.append((f"k{i}", "ascending" if sf.direction is SortDirection.ASC else "descending"))
    return columns, keys


def partition_and_sort(data: pa.Table, schema: Schema, spec: PartitionSpec,
                       sort_order: SortOrder) -> list[tuple[tuple[Any, ...], pa.Table]]:
    """Split conformed data by partition and sort each part by the sort order.

    Partition tuples use the spec's transforms (vectorized) and the value representation of
    :mod:`icenb.spec.types`; parts come in order of first appearance. Rows are ordered by the
    sort order's fields (direction, null order; floats in IEEE totalOrder), stably.
    Spec: "Partitioning", "Partition Transforms", "Sorting".
    """
    n = data.num_rows
    keys: dict[str, pa.Array] = {}
    result_types: list[IcebergType] = []
    for i, pf in enumerate(spec.fields):
        source = schema.find_field(pf.source_id)
        result_types.append(pf.transform.result_type(source.field_type))
        values_ = pf.transform.apply_arrow(source.field_type, _column_by_id(data, schema,
                                                                             pf.source_id))
        keys[f"p{i}"] = _combined(values_)
    groups: list[tuple[tuple[Any, ...], npt.NDArray[np.int64]]] = []
    if not keys:
        groups.append(((), np.arange(n, dtype=np.int64)))
    elif n:
        key_table = pa.table({**keys, "__row": pa.array(np.arange(n, dtype=np.int64))})
        grouped = key_table.group_by(list(keys), use_threads=False).aggregate(
            [("__row", "list")])
        per_key = [_internal_values(_combined(grouped.column(name)), t)
                   for name, t in zip(keys, result_types, strict=True)]
        row_lists = grouped.column("__row_list")
        for g in range(grouped.num_rows):
            part = tuple(col[g] for col in per_key)
            rows = np.asarray(row_lists[g].values.to_numpy(zero_copy_only=False),
                              dtype=np.int64)
            groups.append((part, rows))
    if sort_order.is_sorted and n:
        columns, sort_keys = _sort_columns(data, schema, sort_order)
        sort_table = pa.table(columns)
        sorted_groups = []
        for part, rows in groups:
            order = pc.sort_indices(sort_table.take(pa.array(rows)), sort_keys=sort_keys)
            sorted_groups.append((part, rows[order.to_numpy(zero_copy_only=False)]))
        groups = sorted_groups
    if len(groups) == 1 and (not sort_order.is_sorted) and len(groups[0][1]) == n:
        return [(groups[0][0], data)]
    return [(part, data.take(pa.array(rows))) for part, rows in groups]


# --------------------------------------------------------------------------- locations


class LocationProvider(Protocol):
    """Where a new data file goes (the reference implementation's ``LocationProvider``)."""

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        """The location of a data file called ``filename`` in partition ``partition_path``."""
        ...


def _strip_slash(location: str) -> str:
    while location.endswith("/") and not location.endswith("://"):
        location = location[:-1]
    return location


def _data_location(table_location: str, properties: Mapping[str, str],
                   object_storage: bool) -> str:
    """``write.data.path`` or ``<table>/data``; the deprecated path properties the reference
    implementation would consult instead are refused, as it refuses them."""
    if properties.get(WRITE_DATA_PATH):
        return properties[WRITE_DATA_PATH]
    deprecated = ((OBJECT_STORAGE_PATH, FOLDER_STORAGE_PATH) if object_storage
                  else (FOLDER_STORAGE_PATH,))
    for key in deprecated:
        if key in properties:
            raise ValidationError(f"property {key!r} is deprecated (Java 1.10 refuses it); use "
                                  "'write.data.path' instead", field=key, value=properties[key])
    return f"{table_location}/data"


@dataclass(frozen=True)
class DefaultLocationProvider:
    """``<data location>/<partition path>/<file>``; the data location is ``write.data.path`` or
    ``<table location>/data``."""

    data_location: str

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        if partition_path:
            return f"{self.data_location}/{partition_path}/{filename}"
        return f"{self.data_location}/{filename}"


@dataclass(frozen=True)
class ObjectStoreLocationProvider:
    """Spreads files under hash prefixes (``write.object-storage.enabled``), as Java's
    ``ObjectStoreLocationProvider``: 20 bits of Murmur3 of the file name as
    ``xxxx/xxxx/xxxx/xxxxxxxx`` directories."""

    storage_location: str
    context: str | None
    include_partition_paths: bool = True

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        name = filename
        if partition_path and self.include_partition_paths:
            name = f"{partition_path}/{filename}"
        digest = _entropy_dirs(name)
        if self.context is not None:
            return f"{self.storage_location}/{digest}/{self.context}/{name}"
        if self.include_partition_paths:
            return f"{self.storage_location}/{digest}/{name}"
        return f"{self.storage_location}/{digest}-{name}"


def _entropy_dirs(name: str) -> str:
    h = mmh3.hash(name.encode("utf-8"), 0, signed=False) | 0x80000000
    bits = format(h, "b")[-20:]
    return f"{bits[0:4]}/{bits[4:8]}/{bits[8:12]}/{bits[12:]}"


def _path_context(table_location: str) -> str:
    """``<parent name>/<name>`` of the table location (Hadoop ``Path`` names)."""
    scheme_end = table_location.find("://")
    path = table_location
    if scheme_end >= 0:
        rest = table_location[scheme_end + 3:]
        slash = rest.find("/")
        path = "/" if slash < 0 else rest[slash:]
    path = path.rstrip("/") or "/"
    name = posixpath.basename(path)
    parent = posixpath.dirname(path)
    if path == "/" or not parent:
        return name
    return f"{posixpath.basename(parent)}/{name}"


def location_provider(table_location: str, properties: Mapping[str, str]) -> LocationProvider:
    """The table's location provider, from ``write.object-storage.enabled``,
    ``write.object-storage.partitioned-paths`` and ``write.data.path`` (Java's defaults)."""
    if properties.get(LOCATION_PROVIDER_IMPL):
        raise UnsupportedFeature("custom location providers cannot be used from Python",
                                 field=LOCATION_PROVIDER_IMPL,
                                 value=properties[LOCATION_PROVIDER_IMPL])
    location = _strip_slash(table_location)
    if bool_property(properties, OBJECT_STORAGE_ENABLED, False, strict=True):
        storage = _strip_slash(_data_location(location, properties, True))
        context = None if storage.startswith(location) else _path_context(location)
        return ObjectStoreLocationProvider(
            storage, context,
            bool_property(properties, OBJECT_STORAGE_PARTITIONED_PATHS, True, strict=True))
    return DefaultLocationProvider(_strip_slash(_data_location(location, properties, False)))


def data_file_name(partition_id: int, task_id: int, operation_id: str, file_count: int,
                   extension: str = "parquet") -> str:
    """``{partitionId:05d}-{taskId}-{operationId}-{fileCount:05d}.parquet`` (Java's
    ``OutputFileFactory``); ``file_count`` starts at 1 for a task's first file."""
    return f"{partition_id:05d}-{task_id}-{operation_id}-{file_count:05d}.{extension}"


# --------------------------------------------------------------------------- metrics


def truncate_string_min(value: str, length: int) -> str:
    """The first ``length`` code points: a lower bound of ``value`` (Java's UnicodeUtil)."""
    return value[:length]


def _next_code_point(cp: int) -> int | None:
    if cp == 0xD7FF:
        return 0xE000  # skip the surrogates: they are not Unicode scalar values
    if cp >= 0x10FFFF:
        return None
    return cp + 1


def truncate_string_max(value: str, length: int) -> str | None:
    """A string of at most ``length`` code points that is >= ``value``; None when none exists.

    The prefix's last code point that can be incremented is (spec: Manifests, truncated upper
    bounds; Java's ``UnicodeUtil.truncateStringMax``).
    """
    if len(value) <= length:
        return value
    prefix = value[:length]
    for i in range(length - 1, -1, -1):
        nxt = _next_code_point(ord(prefix[i]))
        if nxt is not None:
            return prefix[:i] + chr(nxt)
    return None


def truncate_binary_min(value: bytes, length: int) -> bytes:
    """The first ``length`` bytes: a lower bound of ``value``."""
    return value[:length]


def truncate_binary_max(value: bytes, length: int) -> bytes | None:
    """At most ``length`` bytes that are >= ``value``; None when every byte is 0xFF."""
    if len(value) <= length:
        return value
    prefix = value[:length]
    for i in range(length - 1, -1, -1):
        if prefix[i] != 0xFF:
            return prefix[:i] + bytes([prefix[i] + 1])
    return None


@dataclass(frozen=True)
class DataFileMetrics:
    """The metrics of one data file, by field id (spec: Manifests, ``data_file``)."""

    record_count: int
    column_sizes: dict[int, int] = field(default_factory=dict)
    value_counts: dict[int, int] = field(default_factory=dict)
    null_value_counts: dict[int, int] = field(default_factory=dict)
    nan_value_counts: dict[int, int] = field(default_factory=dict)
    lower_bounds: dict[int, bytes] = field(default_factory=dict)
    upper_bounds: dict[int, bytes] = field(default_factory=dict)


def _float_bounds(arr: pa.Array) -> tuple[float, float] | None:
    """Min and max of non-null, non-NaN floats, -0.0 ordered before 0.0 (Manifests note 2)."""
    data = np.asarray(arr.drop_null().to_numpy(zero_copy_only=False), dtype=np.float64)
    data = data[~np.isnan(data)]
    if not len(data):
        return None
    low, high = float(data.min()), float(data.max())
    zeros = data[data == 0.0]
    if low == 0.0:
        low = -0.0 if np.signbit(zeros).any() else 0.0
    if high == 0.0:
        high = 0.0 if (~np.signbit(zeros)).any() else -0.0
    return low, high


def _min_max(arr: pa.Array, t: IcebergType) -> tuple[Any, Any] | None:
    """Min and max non-null values of ``arr`` in the representation of icenb.spec.types."""
    if isinstance(t, (FloatType, DoubleType)):
        return _float_bounds(arr)
    if arr.null_count == len(arr):
        return None
    if isinstance(t, (StringType, BinaryType, FixedType, UUIDType)):
        # Arrow orders strings and binary bytewise: UTF-8 byte order is code point order.
        mm = pc.min_max(arr)
        low, high = mm["min"].as_py(), mm["max"].as_py()
        if isinstance(t, UUIDType):
            return uuid.UUID(bytes=bytes(low)), uuid.UUID(bytes=bytes(high))
        return low, high
    if isinstance(t, BooleanType):
        mm = pc.min_max(arr)
        return bool(mm["min"].as_py()), bool(mm["max"].as_py())
    if isinstance(t, DecimalType):
        mm = pc.min_max(arr)
        low_d: Decimal = mm["min"].as_py()
        high_d: Decimal = mm["max"].as_py()
        return low_d, high_d
    mm = pc.min_max(_internal_array(arr))
    return mm["min"].as_py(), mm["max"].as_py()


def _internal_array(arr: pa.Array) -> pa.Array:
    if pa.types.is_date32(arr.type):
        return arr.cast(pa.int32())
    if pa.types.is_timestamp(arr.type) or pa.types.is_time(arr.type):
        return arr.cast(pa.int64())
    return arr


def _bounds(low: Any, high: Any, t: IcebergType, mode: MetricsMode
            ) -> tuple[bytes | None, bytes | None]:
    width = mode.truncate_length
    if width is not None:
        if isinstance(t, StringType):
            low, high = truncate_string_min(low, width), truncate_string_max(high, width)
        elif isinstance(t, BinaryType):
            low, high = truncate_binary_min(low, width), truncate_binary_max(high, width)
    return (values.to_bound_bytes(t, low), None if high is None else
            values.to_bound_bytes(t, high))


def _parquet_paths(schema: Schema) -> dict[str, int]:
    """Parquet leaf column path (as pyarrow writes it) -> Iceberg field id."""
    out: dict[str, int] = {}

    def visit(prefix: str, f: NestedField) -> None:
        t = f.field_type
        if isinstance(t, StructType):
            for child in t.fields:
                visit(f"{prefix}.{child.name}", child)
        elif isinstance(t, ListType):
            visit(f"{prefix}.list.element", t.element_field)
        elif isinstance(t, MapType):
            visit(f"{prefix}.key_value.key", t.key_field)
            visit(f"{prefix}.key_value.value", t.value_field)
        elif not isinstance(t, UnknownType):
            out[prefix] = f.field_id

    for top in schema.fields:
        visit(top.name, top)
    return out


def compute_metrics(data: pa.Table, schema: Schema, config: MetricsConfig,
                    parquet_metadata: pq.FileMetaData | None = None) -> DataFileMetrics:
    """Metrics of a data file holding ``data`` (conformed), per ``config``.

    ``column_sizes`` come from the Parquet footer (compressed bytes of every leaf column, as
    Java's ``ParquetMetrics``); counts and bounds from the values: for each primitive column
    outside lists and maps whose mode is not ``none``, value count (rows, nulls included), null
    count (a null parent struct makes its children null), NaN count (float/double) and, with
    ``truncate(N)``/``full``, lower/upper bounds (strings/binary truncated, the upper bound
    incremented or dropped; no NaN bounds). Spec: Manifests notes 1-2, Appendix D.
    """
    acc = _MetricsAccumulator(schema, config)
    acc.add(data)
    return acc.finish(parquet_metadata)


def _column_sizes(schema: Schema, config: MetricsConfig,
                  parquet_metadata: pq.FileMetaData | None) -> dict[int, int]:
    """Compressed bytes per leaf field id over all row groups (Java's ``ParquetMetrics``)."""
    column_sizes: dict[int, int] = {}
    if parquet_metadata is not None:
        by_path = _parquet_paths(schema)
        for g in range(parquet_metadata.num_row_groups):
            rg = parquet_metadata.row_group(g)
            for c in range(rg.num_columns):
                chunk = rg.column(c)
                fid = by_path.get(chunk.path_in_schema)
                if fid is None or not config.mode_for(schema, fid).keeps_counts:
                    continue
                column_sizes[fid] = column_sizes.get(fid, 0) + chunk.total_compressed_size
    return column_sizes


def _is_negative_zero(x: Any) -> bool:
    return isinstance(x, float) and x == 0.0 and math.copysign(1.0, x) < 0


def _lower(a: Any, b: Any) -> Any:
    """The smaller of two bounds; -0.0 before 0.0 (Manifests note 2)."""
    if a == b:
        return a if _is_negative_zero(a) else b
    return a if a < b else b


def _higher(a: Any, b: Any) -> Any:
    if a == b:
        return b if _is_negative_zero(a) else a
    return a if a > b else b


class _MetricsAccumulator:
    """Counts and untruncated min/max per field id over the row chunks of one data file;
    :meth:`finish` truncates the bounds, so chunked input gives the metrics of the whole."""

    def __init__(self, schema: Schema, config: MetricsConfig) -> None:
        self.schema = schema
        self.config = config
        self.rows = 0
        self.value_counts: dict[int, int] = {}
        self.null_value_counts: dict[int, int] = {}
        self.nan_value_counts: dict[int, int] = {}
        self.low: dict[int, Any] = {}
        self.high: dict[int, Any] = {}
        self.bound_modes: dict[int, tuple[IcebergType, MetricsMode]] = {}

    def add(self, data: pa.Table) -> None:
        self.rows += data.num_rows
        for f in self.schema.fields:
            if f.name in data.column_names:
                self._visit(_combined(data.column(f.name)), f)

    def _visit(self, arr: pa.Array, f: NestedField) -> None:
        t = f.field_type
        if isinstance(t, StructType):
            for child, child_arr in zip(t.fields, arr.flatten(), strict=True):
                self._visit(child_arr, child)
            return
        if isinstance(t, (ListType, MapType, UnknownType, VariantType)):
            return  # no metrics inside repeated fields (as Java 1.10); unknown is not stored
        mode = self.config.mode_for(self.schema, f.field_id)
        if not mode.keeps_counts:
            return
        fid = f.field_id
        self.value_counts[fid] = self.value_counts.get(fid, 0) + len(arr)
        self.null_value_counts[fid] = self.null_value_counts.get(fid, 0) + arr.null_count
        if isinstance(t, (FloatType, DoubleType)):
            nan = pc.sum(pc.is_nan(arr)).as_py() if len(arr) else 0
            self.nan_value_counts[fid] = self.nan_value_counts.get(fid, 0) + int(nan or 0)
        if not mode.keeps_bounds or isinstance(t, (GeometryType, GeographyType)):
            return
        found = _min_max(arr, t)
        if found is None:
            return
        self.bound_modes[fid] = (t, mode)
        low, high = found
        self.low[fid] = low if fid not in self.low else _lower(self.low[fid], low)
        self.high[fid] = high if fid not in self.high else _higher(self.high[fid], high)

    def finish(self, parquet_metadata: pq.FileMetaData | None = None) -> DataFileMetrics:
        metrics = DataFileMetrics(self.rows, _column_sizes(self.schema, self.config,
                                                           parquet_metadata),
                                  dict(self.value_counts), dict(self.null_value_counts),
                                  dict(self.nan_value_counts))
        for fid, (t, mode) in self.bound_modes.items():
            low, high = _bounds(self.low[fid], self.high[fid], t, mode)
            if low is not None:
                metrics.lower_bounds[fid] = low
            if high is not None:
                metrics.upper_bounds[fid] = high
        return metrics


# --------------------------------------------------------------------------- Parquet writing


@dataclass(frozen=True)
class ParquetWriteOptions:
    """Parquet writer settings from table properties (Java's names and defaults)."""

    compression: str = DEFAULT_COMPRESSION
    compression_level: int | None = None
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE
    page_size: int = DEFAULT_PAGE_SIZE
    page_row_limit: int = DEFAULT_PAGE_ROW_LIMIT
    dict_size: int = DEFAULT_DICT_SIZE

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> ParquetWriteOptions:
        """Read ``write.parquet.*`` and ``write.target-file-size-bytes``; bad values raise."""
        fmt = properties.get(DEFAULT_FILE_FORMAT, "parquet").strip().lower()
        if fmt != "parquet":
            raise UnsupportedFeature("only Parquet data files can be written",
                                     field=DEFAULT_FILE_FORMAT, value=fmt)
        codec_raw = properties.get(PARQUET_COMPRESSION, DEFAULT_COMPRESSION)
        codec = _CODECS.get(codec_raw.strip().lower())
        if codec is None:
            raise UnsupportedFeature("unsupported Parquet compression codec",
                                     field=PARQUET_COMPRESSION, value=codec_raw)
        return cls(
            compression=codec,
            compression_level=optional_int_property(properties, PARQUET_COMPRESSION_LEVEL,
                                                    None, minimum=-(2**31)),
            target_file_size=int_property(properties, WRITE_TARGET_FILE_SIZE_BYTES,
                                          DEFAULT_TARGET_FILE_SIZE, minimum=1),
            row_group_size=int_property(properties, PARQUET_ROW_GROUP_SIZE_BYTES,
                                        DEFAULT_ROW_GROUP_SIZE, minimum=1),
            page_size=int_property(properties, PARQUET_PAGE_SIZE_BYTES, DEFAULT_PAGE_SIZE,
                                   minimum=1),
            page_row_limit=int_property(properties, PARQUET_PAGE_ROW_LIMIT,
                                        DEFAULT_PAGE_ROW_LIMIT, minimum=1),
            dict_size=int_property(properties, PARQUET_DICT_SIZE_BYTES, DEFAULT_DICT_SIZE,
                                   minimum=1),
        )


def _parquet_type(t: IcebergType) -> pa.DataType:
    """The Arrow type handed to the Parquet writer: uuid as ``arrow.uuid`` (UUID annotation)."""
    if isinstance(t, UUIDType):
        return pa.uuid()
    if isinstance(t, StructType):
        return pa.struct([_parquet_field(f) for f in t.fields
                          if not isinstance(f.field_type, UnknownType)])
    if isinstance(t, ListType):
        return pa.list_(_parquet_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(_parquet_field(t.key_field), _parquet_field(t.value_field))
    return to_arrow_type(t)


def _parquet_field(f: NestedField) -> pa.Field:
    return pa.field(f.name, _parquet_type(f.field_type), nullable=not f.required,
                    metadata={FIELD_ID_KEY: str(f.field_id).encode()})


def _has_unknown(t: IcebergType) -> bool:
    if isinstance(t, UnknownType):
        return True
    if isinstance(t, (StructType, ListType, MapType)):
        return any(_has_unknown(f.field_type) for f in t.fields)
    return False


def writer_table(data: pa.Table, schema: Schema) -> pa.Table:
    """``data`` as written to Parquet: unknown columns left out, uuids annotated."""
    kept = [f for f in schema.fields if not isinstance(f.field_type, UnknownType)]
    target = pa.schema([_parquet_field(f) for f in kept])
    arrays = []
    for f, target_field in zip(kept, target, strict=True):
        arr = _combined(data.column(f.name))
        if arr.type != target_field.type:
            if _has_unknown(f.field_type):
                arr = _drop_unknown(arr, f.field_type)
            arr = arr.cast(target_field.type)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=target)


def _drop_unknown(arr: pa.Array, t: IcebergType) -> pa.Array:
    if isinstance(t, StructType):
        kept = [(i, f) for i, f in enumerate(t.fields) if not isinstance(f.field_type,
                                                                           UnknownType)]
        children = [_drop_unknown(arr.field(i), f.field_type) for i, f in kept]
        return pa.StructArray.from_arrays(
            children, fields=[pa.field(f.name, c.type, nullable=not f.required)
                              for (_, f), c in zip(kept, children, strict=True)],
            mask=_null_mask(arr))
    if isinstance(t, ListType):
        elements = _drop_unknown(arr.flatten(), t.element_type)
        return pa.ListArray.from_arrays(_list_offsets(arr, "list"), elements,
                                        mask=_null_mask(arr))
    if isinstance(t, MapType):
        arr = _map_as_list(arr)
        entries = arr.flatten()
        return pa.MapArray.from_arrays(
            _list_offsets(arr, "map"), _drop_unknown(entries.field(0), t.key_type),
            _drop_unknown(entries.field(1), t.value_type), mask=_null_mask(arr))
    return arr


def split_offsets_of(metadata: pq.FileMetaData) -> tuple[int, ...]:
    """Row-group start offsets, ascending (Java's ``ParquetUtil.getSplitOffsets``)."""
    offsets = []
    for g in range(metadata.num_row_groups):
        col = metadata.row_group(g).column(0)
        start = col.data_page_offset
        if col.has_dictionary_page and col.dictionary_page_offset is not None:
            start = min(start, col.dictionary_page_offset)
        offsets.append(int(start))
    return tuple(sorted(offsets))


class _FileWriter:
    """One Parquet file being written; tracks its size and rows."""

    def __init__(self, io: FileIO, location: str, schema: pa.Schema,
                 options: ParquetWriteOptions) -> None:
        self.location = location
        fs, path = io.resolve(location)
        if fs.type_name == "local":
            fs.create_dir(posixpath.dirname(path), recursive=True)
        self.sink = fs.open_output_stream(path, compression=None)
        self.writer = pq.ParquetWriter(
            self.sink, schema, version="2.6", compression=options.compression,
            compression_level=options.compression_level, use_dictionary=True,
            write_statistics=True, data_page_size=options.page_size,
            dictionary_pagesize_limit=options.dict_size,
            max_rows_per_page=options.page_row_limit, store_schema=False,
            store_decimal_as_integer=True, use_compliant_nested_type=True,
            data_page_version="1.0",
        )
        self.rows = 0

    def position(self) -> int:
        return int(self.sink.tell())

    def write(self, table: pa.Table) -> None:
        self.writer.write_table(table, row_group_size=max(1, table.num_rows))
        self.rows += table.num_rows

    def close(self) -> tuple[int, pq.FileMetaData]:
        self.writer.close()
        metadata = self.writer.writer.metadata
        size = self.position()
        self.sink.close()
        return size, metadata


def write_rolling(io: FileIO, table: pa.Table, options: ParquetWriteOptions,
                   new_location: Callable[[], str],
                   written: list[str]) -> list[tuple[str, int, int, pq.FileMetaData]]:
    """Write ``table`` to one or more files of about the target size; (location, first row,
    size, footer) per file. Row groups hold about ``row_group_size`` bytes of Arrow data."""
    rows = table.num_rows
    per_row_mem = max(1.0, table.nbytes / max(rows, 1))
    group_rows = max(1, int(options.row_group_size / per_row_mem))
    out = []
    start = 0
    while start < rows:
        location = new_location()
        writer = _FileWriter(io, location, table.schema, options)
        written.append(location)
        first = start
        estimate = per_row_mem
        while start < rows:
            position = writer.position()
            if writer.rows:
                estimate = max(1.0, position / writer.rows)
            room = max(1, math.ceil((options.target_file_size - position) / estimate))
            chunk = min(group_rows, rows - start, room)
            writer.write(table.slice(start, chunk))
            start += chunk
            if writer.position() >= options.target_file_size:
                break
        size, metadata = writer.close()
        out.append((location, first, size, metadata))
    return out


def write_data_files(
    io: FileIO,
    data: pa.Table | pa.RecordBatch,
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    properties: Mapping[str, str],
    location_provider: LocationProvider,
    *,
    format_version: int,
    partition_id: int = 0,
    task_id: int = 0,
    operation_id: str | None = None,
) -> list[DataFile]:
    """Write ``data`` as Parquet data files of the table and describe each as a DataFile.

    Validates and casts (:func:`conform_to_schema`), checks the spec and sort order against the
    schema, partitions and sorts (:func:`partition_and_sort`), then writes each partition in
    files rolled at ``write.target-file-size-bytes``, named as Java's ``OutputFileFactory``
    (``partition_id`` is the Spark partition, ``task_id`` the attempt, ``operation_id`` one
    UUID per write) and placed by ``location_provider``. Nothing is written when validation
    fails; files already written are deleted when a later write fails.
    """
    if format_version not in (1, 2, 3, 4):  # 4: as 3 (EXPERIMENTAL)
        raise ValidationError("format version must be 1 to 4", field="format-version",
                              value=format_version)
    options = ParquetWriteOptions.from_properties(properties)
    spec.validate(schema)
    sort_order.validate(schema)
    config = MetricsConfig.from_properties(properties, schema, sort_order)
    conformed = conform_to_schema(data, schema, format_version=format_version)
    parts = partition_and_sort(conformed, schema, spec, sort_order)
    operation = operation_id or str(uuid.uuid4())
    counter = [0]

    def next_name() -> str:
        counter[0] += 1
        return data_file_name(partition_id, task_id, operation, counter[0])

    written: list[str] = []
    files: list[DataFile] = []
    try:
        for partition, part in parts:
            if part.num_rows == 0:
                continue
            path = spec.partition_path(schema, partition) if spec.is_partitioned else None

            def new_location(p: str | None = path) -> str:
                return location_provider.new_data_location(next_name(), p)

            to_write = writer_table(part, schema)
            for location, first, size, metadata in write_rolling(io, to_write, options,
                                                                  new_location, written):
                rows = metadata.num_rows
                metrics = compute_metrics(part.slice(first, rows), schema, config, metadata)
                files.append(DataFile(
                    content=FileContent.DATA, file_path=location,
                    file_format=FileFormat.PARQUET, partition=partition, record_count=rows,
                    file_size_in_bytes=size, column_sizes=metrics.column_sizes,
                    value_counts=metrics.value_counts,
                    null_value_counts=metrics.null_value_counts,
                    nan_value_counts=metrics.nan_value_counts,
                    lower_bounds=metrics.lower_bounds, upper_bounds=metrics.upper_bounds,
                    split_offsets=split_offsets_of(metadata),
                    sort_order_id=sort_order.order_id, spec_id=spec.spec_id,
                ))
    except BaseException as exc:
        for location in written:
            with contextlib.suppress(IcebergError):
                io.delete(location, missing_ok=True)
        if isinstance(exc, (OSError, pa.ArrowException)) and not isinstance(exc, IcebergError):
            from icenb.errors import FileIOError

            raise FileIOError(f"writing a data file failed: {exc}",
                              file=written[-1] if written else None) from exc
        raise
    return files


# --------------------------------------------------------------------------- streaming writer

#: Arrow bytes a :class:`RollingDataWriter` may hold (row groups being filled, rows waiting to
#: be sorted) before it writes the largest buffer out.
DEFAULT_WRITE_BUFFER_BYTES = 256 * 1024 * 1024


def _writer_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of the Parquet files (as :func:`writer_table` makes the data)."""
    return pa.schema([_parquet_field(f) for f in schema.fields
                      if not isinstance(f.field_type, UnknownType)])


class _OpenFile:
    """A data file of one partition being written: its row-group buffer and metrics so far."""

    def __init__(self, writer: _FileWriter, partition: tuple[Any, ...], index: int,
                 metrics: _MetricsAccumulator) -> None:
        self.writer = writer
        self.partition = partition
        self.index = index  # its place in the writer's result
        self.metrics = metrics
        self.buffer: list[pa.Table] = []
        self.buffered_bytes = 0
        self.buffered_rows = 0
        self.flushed_bytes = 0  # Arrow bytes already in the file

    def ratio(self) -> float:
        """File bytes per Arrow byte so far (1 before the first row group)."""
        if not self.flushed_bytes:
            return 1.0
        return max(self.writer.position(), 1) / self.flushed_bytes

    def estimated_size(self) -> float:
        return self.writer.position() + self.buffered_bytes * self.ratio()


class RollingDataWriter:
    """Streams Arrow batches into the table's data files: memory stays bounded by the buffer
    budget, whatever the number of rows.

    Each batch is conformed (:func:`conform_to_schema`) and split by partition. Rows go to one
    open Parquet file per partition (``fanout``, Java's ``write.spark.fanout.enabled``
    writer) or, with ``fanout=False``, to one open partition at a time (Java's clustered
    writer: rows must arrive grouped by partition, else :class:`ValidationError`). A file's
    rows are buffered as one row group (``write.parquet.row-group-size-bytes`` of Arrow data)
    and the file is closed at ``write.target-file-size-bytes`` (estimated from the bytes
    written so far) and the next one opened. When the buffers together exceed
    ``buffer_bytes`` the largest is written out early (a smaller row group).

    Sorted tables (spec: "Sorting"; a file's ``sort_order_id`` says its rows follow that
    order): rows are buffered per partition, and a partition's rows are sorted and written
    to files of their own when the budget is exceeded and at :meth:`close`; each file is
    sorted, files of one partition may overlap. Metrics are those :func:`write_data_files`
    records for the same rows of a file. A failure in :meth:`write` or :meth:`close` (bad
    input included) deletes every file written; :meth:`abort` does so on request.
    """

    def __init__(self, io: FileIO, schema: Schema, spec: PartitionSpec, sort_order: SortOrder,
                 properties: Mapping[str, str], location_provider: LocationProvider, *,
                 format_version: int, partition_id: int = 0, task_id: int = 0,
                 operation_id: str | None = None, fanout: bool = True,
                 buffer_bytes: int = DEFAULT_WRITE_BUFFER_BYTES) -> None:
        if format_version not in (1, 2, 3, 4):  # 4: as 3 (EXPERIMENTAL)
            raise ValidationError("format version must be 1 to 4", field="format-version",
                                  value=format_version)
        self._options = ParquetWriteOptions.from_properties(properties)
        spec.validate(schema)
        sort_order.validate(schema)
        self._io = io
        self._schema = schema
        self._spec = spec
        self._sort_order = sort_order
        self._config = MetricsConfig.from_properties(properties, schema, sort_order)
        self._locations = location_provider
        self._format_version = format_version
        self._partition_id = partition_id
        self._task_id = task_id
        self._operation = operation_id or str(uuid.uuid4())
        self._fanout = fanout
        self._budget = max(1, buffer_bytes)
        self._arrow_schema = _writer_schema(schema)
        self._open: dict[tuple[Any, ...], _OpenFile] = {}
        self._sort_buffers: dict[tuple[Any, ...], list[pa.Table]] = {}
        self._sort_bytes: dict[tuple[Any, ...], int] = {}
        self._finished: set[tuple[Any, ...]] = set()  # clustered: partitions already done
        self._current: tuple[Any, ...] | None = None
        self._files: list[DataFile | None] = []
        self._written: list[str] = []
        self._count = 0
        self._done = False

    # ---------------------------------------------------------------- public

    @property
    def written(self) -> tuple[str, ...]:
        """Locations of every file written so far (open or closed)."""
        return tuple(self._written)

    def write(self, data: pa.Table | pa.RecordBatch) -> None:
        """Add rows; on any error every file written is deleted and the error raised."""
        self._check_open()
        with self._aborting():
            conformed = conform_to_schema(data, self._schema,
                                          format_version=self._format_version)
            if conformed.num_rows == 0:
                return
            for partition, part in partition_and_sort(conformed, self._schema, self._spec,
                                                      UNSORTED):
                if part.num_rows:
                    self._route(partition, part)

    def close(self) -> list[DataFile]:
        """Write what is buffered, close every file; the DataFiles in the order opened."""
        self._check_open()
        with self._aborting():
            for partition in list(self._sort_buffers):
                self._flush_sorted(partition)
            for partition in list(self._open):
                self._close_file(partition)
        self._done = True
        return [f for f in self._files if f is not None]

    def abort(self) -> None:
        """Close quietly and delete every file written (idempotent)."""
        self._done = True
        for open_file in self._open.values():
            with contextlib.suppress(Exception):
                open_file.writer.writer.close()
            with contextlib.suppress(Exception):
                open_file.writer.sink.close()
        self._open.clear()
        self._sort_buffers.clear()
        self._sort_bytes.clear()
        for location in self._written:
            with contextlib.suppress(IcebergError):
                self._io.delete(location, missing_ok=True)

    def __enter__(self) -> RollingDataWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()

    # ---------------------------------------------------------------- internals

    def _check_open(self) -> None:
        if self._done:
            raise ValidationError("the writer is closed", field="writer")

    @contextlib.contextmanager
    def _aborting(self) -> Iterator[None]:
        try:
            yield
        except BaseException as exc:
            last = self._written[-1] if self._written else None
            self.abort()
            if isinstance(exc, (OSError, pa.ArrowException)) and not isinstance(
                    exc, IcebergError):
                from icenb.errors import FileIOError

                raise FileIOError(f"writing a data file failed: {exc}", file=last) from exc
            raise

    def _route(self, partition: tuple[Any, ...], part: pa.Table) -> None:
        if not self._fanout and partition != self._current:
            if partition in self._finished:
                raise ValidationError(
                    "rows are not clustered by partition (a partition came back after "
                    "another one): use a fanout writer or sort the input by partition",
                    field="partition", value=partition)
            if self._current is not None:
                self._finish_partition(self._current)
            self._current = partition
        if self._sort_order.is_sorted:
            self._sort_buffers.setdefault(partition, []).append(part)
            self._sort_bytes[partition] = self._sort_bytes.get(partition, 0) + part.nbytes
        else:
            self._append(partition, part)
        self._enforce_budget()

    def _finish_partition(self, partition: tuple[Any, ...]) -> None:
        self._finished.add(partition)
        if partition in self._sort_buffers:
            self._flush_sorted(partition)
        if partition in self._open:
            self._close_file(partition)

    def _buffered(self) -> int:
        return (sum(self._sort_bytes.values())
                + sum(f.buffered_bytes for f in self._open.values()))

    def _enforce_budget(self) -> None:
        while self._buffered() > self._budget:
            largest_sort = max(self._sort_bytes.items(), key=lambda kv: kv[1], default=None)
            largest_file = max(self._open.values(), key=lambda f: f.buffered_bytes,
                               default=None)
            if largest_sort is not None and (largest_file is None
                                             or largest_sort[1] >= largest_file.buffered_bytes):
                self._flush_sorted(largest_sort[0])
            elif largest_file is not None and largest_file.buffered_bytes:
                self._flush(largest_file)
                if largest_file.estimated_size() >= self._options.target_file_size:
                    self._close_file(largest_file.partition)
            else:
                return

    def _flush_sorted(self, partition: tuple[Any, ...]) -> None:
        """Sort a partition's buffered rows and write them to files of their own."""
        parts = self._sort_buffers.pop(partition, [])
        self._sort_bytes.pop(partition, None)
        if not parts:
            return
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        del parts
        columns, keys = _sort_columns(table, self._schema, self._sort_order)
        order = pc.sort_indices(pa.table(columns), sort_keys=keys)
        table = table.take(order)
        self._append(partition, table)
        if partition in self._open:
            self._close_file(partition)

    def _append(self, partition: tuple[Any, ...], part: pa.Table) -> None:
        """Add rows to the partition's open file(s), writing row groups and rolling files."""
        options = self._options
        start, rows = 0, part.num_rows
        per_row = max(1.0, part.nbytes / max(rows, 1))
        while start < rows:
            open_file = self._open.get(partition) or self._open_file(partition)
            room = (options.target_file_size - open_file.estimated_size()) / (
                per_row * open_file.ratio())
            group_room = (options.row_group_size - open_file.buffered_bytes) / per_row
            take = min(rows - start, max(1, math.ceil(min(room, group_room))))
            chunk = part.slice(start, take)
            start += take
            open_file.buffer.append(chunk)
            open_file.buffered_bytes += chunk.nbytes
            open_file.buffered_rows += take
            open_file.metrics.add(chunk)
            if open_file.buffered_bytes >= options.row_group_size:
                self._flush(open_file)
            if open_file.estimated_size() >= options.target_file_size:
                self._close_file(partition)

    def _open_file(self, partition: tuple[Any, ...]) -> _OpenFile:
        self._count += 1
        name = data_file_name(self._partition_id, self._task_id, self._operation, self._count)
        path = (self._spec.partition_path(self._schema, partition) if self._spec.is_partitioned
                else None)
        location = self._locations.new_data_location(name, path)
        self._written.append(location)
        writer = _FileWriter(self._io, location, self._arrow_schema, self._options)
        open_file = _OpenFile(writer, partition, len(self._files),
                              _MetricsAccumulator(self._schema, self._config))
        self._files.append(None)
        self._open[partition] = open_file
        return open_file

    def _flush(self, open_file: _OpenFile) -> None:
        """Write the file's buffered rows as one row group."""
        if not open_file.buffer:
            return
        parts = open_file.buffer
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        open_file.buffer = []
        open_file.writer.write(writer_table(table, self._schema))
        open_file.flushed_bytes += open_file.buffered_bytes
        open_file.buffered_bytes = 0
        open_file.buffered_rows = 0

    def _close_file(self, partition: tuple[Any, ...]) -> None:
        open_file = self._open.pop(partition)
        self._flush(open_file)
        size, metadata = open_file.writer.close()
        metrics = open_file.metrics.finish(metadata)
        self._files[open_file.index] = DataFile(
            content=FileContent.DATA, file_path=open_file.writer.location,
            file_format=FileFormat.PARQUET, partition=partition,
            record_count=metadata.num_rows, file_size_in_bytes=size,
            column_sizes=metrics.column_sizes, value_counts=metrics.value_counts,
            null_value_counts=metrics.null_value_counts,
            nan_value_counts=metrics.nan_value_counts, lower_bounds=metrics.lower_bounds,
            upper_bounds=metrics.upper_bounds, split_offsets=split_offsets_of(metadata),
            sort_order_id=self._sort_order.order_id, spec_id=self._spec.spec_id)
