"""Arrow array plumbing shared by conforming data to a schema and by the data file writers:
one array from chunks, list offsets, null masks, maps as lists of key/value structs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import ValidationError

__all__ = ["combined", "list_offsets", "map_as_list", "null_mask"]


def combined(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.Array):
        return col
    if col.num_chunks == 1:
        return col.chunk(0)
    if col.num_chunks == 0:
        return pa.array([], type=col.type)
    return pa.concat_arrays(col.chunks)


def list_offsets(arr: pa.Array, path: str) -> pa.Array:
    """Offsets (from 0, int32) of a list or map array, null lists counted as empty."""
    lengths = pc.fill_null(pc.list_value_length(arr), 0).cast(pa.int64())
    ends = np.cumsum(lengths.to_numpy(zero_copy_only=False), dtype=np.int64)
    if len(ends) and ends[-1] > 2**31 - 1:
        raise ValidationError("too many list elements in one batch (more than 2^31 - 1)",
                              field=path)
    return pa.array(np.concatenate([[0], ends]).astype(np.int32), pa.int32())


def null_mask(arr: pa.Array) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def map_as_list(arr: pa.Array) -> pa.Array:
    """A map array as the list of ``struct<key, value>`` it is (list kernels refuse maps)."""
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    start, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    entries = pa.StructArray.from_arrays([arr.keys.slice(start, end - start),
                                          arr.items.slice(start, end - start)],
                                         names=["key", "value"])
    return pa.ListArray.from_arrays(pa.array(offsets - start, pa.int32()), entries,
                                    mask=null_mask(arr))
