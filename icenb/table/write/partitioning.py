"""Split rows by partition and sort them by the table's sort order before they are written
(spec: "Partitioning", "Partition Transforms", "Sorting")."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import ValidationError
from icenb.io.arrow_arrays import combined
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.sort_order import NullOrder, SortDirection, SortOrder
from icenb.spec.types import (
    IcebergType,
    StructType,
    UUIDType,
)


def _column_by_id(table: pa.Table, schema: Schema, field_id: int) -> pa.Array:
    """The values of column ``field_id`` (top level or inside structs), parent nulls applied."""
    chain = [*schema.ancestors(field_id), schema.find_field(field_id)]
    if any(not isinstance(p.field_type, StructType) for p in chain[:-1]):
        raise ValidationError("a partition or sort source must not be inside a list or map",
                              field=schema.column_name(field_id))
    arr = combined(table.column(chain[0].name))
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


def sort_columns(table: pa.Table, schema: Schema, order: SortOrder
                  ) -> tuple[dict[str, pa.Array], list[tuple[str, str]]]:
    columns: dict[str, pa.Array] = {}
    keys: list[tuple[str, str]] = []
    for i, sf in enumerate(order.fields):
        source = schema.find_field(sf.source_id)
        arr = _column_by_id(table, schema, sf.source_id)
        transformed = sf.transform.apply_arrow(source.field_type, arr)
        if isinstance(transformed, pa.ChunkedArray):
            transformed = combined(transformed)
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
        keys[f"p{i}"] = combined(values_)
    groups: list[tuple[tuple[Any, ...], npt.NDArray[np.int64]]] = []
    if not keys:
        groups.append(((), np.arange(n, dtype=np.int64)))
    elif n:
        key_table = pa.table({**keys, "__row": pa.array(np.arange(n, dtype=np.int64))})
        grouped = key_table.group_by(list(keys), use_threads=False).aggregate(
            [("__row", "list")])
        per_key = [_internal_values(combined(grouped.column(name)), t)
                   for name, t in zip(keys, result_types, strict=True)]
        row_lists = grouped.column("__row_list")
        for g in range(grouped.num_rows):
            part = tuple(col[g] for col in per_key)
            rows = np.asarray(row_lists[g].values.to_numpy(zero_copy_only=False),
                              dtype=np.int64)
            groups.append((part, rows))
    if sort_order.is_sorted and n:
        columns, sort_keys = sort_columns(data, schema, sort_order)
        sort_table = pa.table(columns)
        sorted_groups = []
        for part, rows in groups:
            order = pc.sort_indices(sort_table.take(pa.array(rows)), sort_keys=sort_keys)
            sorted_groups.append((part, rows[order.to_numpy(zero_copy_only=False)]))
        groups = sorted_groups
    if len(groups) == 1 and (not sort_order.is_sorted) and len(groups[0][1]) == n:
        return [(groups[0][0], data)]
    return [(part, data.take(pa.array(rows))) for part, rows in groups]
