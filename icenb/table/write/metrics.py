"""Column metrics of a data file, computed from the Arrow values written (spec: "Manifests",
``data_file`` metrics and their notes; Appendix D, bound serialization; ``write.metadata.metrics.*``
modes and truncation).

Metrics follow what Java's Parquet writer records (``ParquetMetrics``): counts and bounds for
primitive columns outside lists and maps (none for list elements, map keys and values, as Java
1.10), column sizes for every leaf; float/double bounds skip NaN and order -0.0 before 0.0, and
a column of only NaN and null gets counts but no bounds. Bounds are computed from the Arrow
values, not the Parquet footer, so they exist even where pyarrow drops long-string statistics.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icenb.io.arrow_arrays import combined
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.metrics_config import MetricsConfig, MetricsMode
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
    UUIDType,
    VariantType,
)


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


@safe_repr
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
    acc = MetricsAccumulator(schema, config)
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


class MetricsAccumulator:
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
                self._visit(combined(data.column(f.name)), f)

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
