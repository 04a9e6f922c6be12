"""Decode Avro container files with a native reader (polars), into icenb's Arrow shapes.

DESIGN, "Metadata at columnar speed": icenb's own decoder (:mod:`icenb.io.avro`) walks many
files in lockstep with numpy, which is fast for many manifests but pays a fixed numpy cost per
record step, so a plan that opens a handful of manifests is slow. polars' Rust Avro reader has
no such floor. Its columns differ in shape from icenb's (large strings and lists, maps as lists
of key/value structs, no field ids), so each column is conformed to the exact Arrow schema
icenb's decoder produces (:func:`icenb.io.avro.avro_arrow_schema`): the same table either way.

Anything unexpected (polars missing, a codec or type it does not read, a shape that does not
conform) returns None and the caller decodes with icenb's own reader, which also names the file
and field when data is corrupt.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa

__all__ = ["available", "read_tables"]


def available() -> bool:
    """Whether polars (the native Avro reader) can be imported."""
    try:
        import polars  # noqa: F401
    except ImportError:
        return False
    return True


def read_tables(files: Sequence[tuple[str, bytes]], target: pa.Schema, *,
                threads: int = 1) -> list[pa.Table] | None:
    """Each file decoded by polars and conformed to ``target``, or None if any file can't be.

    ``threads`` > 1 reads files in parallel (polars releases the GIL)."""
    try:
        import polars as pl
    except ImportError:
        return None

    def one(data: bytes) -> pa.Table | None:
        try:
            return _conform_table(pl.read_avro(io.BytesIO(data)).to_arrow(), target)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # incl. a Rust panic (pyo3 PanicException is not an Exception)
            return None  # any reader or shape problem: icenb's own decoder decides

    if threads > 1 and len(files) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
            tables = list(pool.map(one, (data for _, data in files)))
    else:
        tables = [one(data) for _, data in files]
    if any(t is None for t in tables):
        return None
    return [t for t in tables if t is not None]


def _conform_table(table: pa.Table, target: pa.Schema) -> pa.Table:
    if len(target) == 0:
        return table.select([])  # keeps the row count
    columns = []
    for f in target:
        if f.name not in table.column_names:
            raise ValueError(f"missing column {f.name}")
        columns.append(_conform(table.column(f.name).combine_chunks(), f.type))
    return pa.Table.from_arrays(columns, schema=target)


def _mask(arr: Any) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def _conform(arr: Any, t: pa.DataType) -> pa.Array:
    """``arr`` as type ``t``: structs by child name, maps from key/value lists, lists and
    strings to 32-bit offsets; anything else by a safe cast."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type == t:
        return arr
    if pa.types.is_struct(t):
        if not pa.types.is_struct(arr.type):
            raise TypeError(f"expected a struct, got {arr.type}")
        names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
        children = []
        for i in range(t.num_fields):
            child = t.field(i)
            if child.name not in names:
                raise ValueError(f"missing field {child.name}")
            children.append(_conform(arr.field(names.index(child.name)), child.type))
        return pa.StructArray.from_arrays(children, fields=list(t), mask=_mask(arr))
    if pa.types.is_map(t):
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
            raise TypeError(f"expected a key/value list, got {arr.type}")
        entries = arr.values
        keys = _conform(entries.field("key"), t.key_type)
        items = _conform(entries.field("value"), t.item_type)
        offsets = arr.offsets.cast(pa.int32())
        return pa.MapArray.from_arrays(offsets, keys, items, type=t, mask=_mask(arr))
    if pa.types.is_list(t):
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
            raise TypeError(f"expected a list, got {arr.type}")
        values = _conform(arr.values, t.value_type)
        offsets = arr.offsets.cast(pa.int32())
        return pa.ListArray.from_arrays(offsets, values, type=t, mask=_mask(arr))
    return arr.cast(t, safe=True)
