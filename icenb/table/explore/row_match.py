"""Equal rows of two Arrow tables, cancelled one for one (a multiset difference both ways),
columnar: what the changelog uses to drop copy-on-write carry-overs and to net changes.

Two ways, the same answer:

- :func:`row_codes` gives every row a dense int64 code (equal rows <-> equal codes) from Arrow's
  dictionary encoding of each column, nested types included; exact, and quick for small tables.
- :func:`cancel_equal_rows` on large tables first describes each value by exact 64-bit
  components (a fixed-width value's bits, NaN canonical; a string's length and first and last
  8 bytes; a dictionary code for other types), sorts the rows by a hash of their components,
  pairs the k-th row of one side with the k-th of the other among rows of equal hash, and
  checks every pair component by component (and byte by byte for strings over 16 bytes). Rows
  of a hash group where a check fails (a hash collision, or strings equal in length, head and
  tail) are cancelled exactly by their codes. No Python loop over rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["cancel_equal_rows", "row_codes"]

#: Below this many rows (both sides), rows are cancelled by their exact codes directly.
SMALL = 50_000

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_FLOAT = {4: np.float32, 8: np.float64}
_CANONICAL_NAN = {4: np.uint32(0x7FC00000), 8: np.uint64(0x7FF8000000000000)}
#: A string value is described exactly by its length, first 8 and last 8 bytes up to this.
_COVERED = 16
_MASKS = np.asarray([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)


# --------------------------------------------------------------------------- exact codes


def _combined(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return arr.chunk(0)
        return arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    return arr


def column_codes(arr: pa.Array | pa.ChunkedArray) -> list[np.ndarray[Any, Any]]:
    """Dense int64 codes (equal values <-> equal codes; null its own code) of one column,
    as one array or, for a struct, one per leaf and one for the struct's validity."""
    arr = _combined(arr)
    t = arr.type
    n = len(arr)
    if isinstance(t, pa.ExtensionType):
        return column_codes(arr.storage)
    if pa.types.is_dictionary(t):
        return column_codes(arr.cast(t.value_type))
    if pa.types.is_struct(t):
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.int64)
        out = [valid]
        for i in range(t.num_fields):
            child = pc.struct_field(arr, [i])
            out += [np.where(valid == 1, c + 1, 0) for c in column_codes(child)]
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t) or \
            pa.types.is_fixed_size_list(t):
        return [_sequence_codes(arr)]
    if n == 0:
        return [np.zeros(0, np.int64)]
    if pa.types.is_floating(t) and arr.null_count < n:  # every NaN is one value (as Java's
        arr = pc.if_else(pc.is_nan(arr), pa.scalar(float("nan"), t), arr)  # Double.equals)
    encoded = pc.dictionary_encode(arr, null_encoding="mask")
    indices = pc.fill_null(encoded.indices.cast(pa.int64()), -1)
    return [np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64) + 1]


def _sequence_codes(arr: pa.Array) -> np.ndarray[Any, Any]:
    """Codes of a list or map column: each row's element codes as bytes, dictionary-encoded."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.int64)
    if pa.types.is_fixed_size_list(arr.type):
        arr = arr.cast(pa.list_(arr.type.value_field))
    if arr.offset or arr.null_count:  # plain offsets from 0; nulls told apart below
        arr = pa.concat_arrays([arr])
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    lo, hi = int(offsets[0]), int(offsets[-1])
    if pa.types.is_map(arr.type):
        assert isinstance(arr, pa.MapArray)
        parts = column_codes(arr.keys.slice(lo, hi - lo)) + \
            column_codes(arr.items.slice(lo, hi - lo))
    else:
        parts = column_codes(arr.values.slice(lo, hi - lo))
    element = combine_codes(parts, hi - lo)
    data = pa.py_buffer(np.ascontiguousarray(element, dtype="<i8").tobytes())
    byte_offsets = pa.py_buffer(((offsets - lo) * 8).astype(np.int64).tobytes())
    rows = pa.Array.from_buffers(pa.large_binary(), n, [None, byte_offsets, data])
    codes = np.asarray(pc.dictionary_encode(rows).indices.to_numpy(zero_copy_only=False),
                       dtype=np.int64) + 1
    if arr.null_count:
        codes = np.where(np.asarray(arr.is_valid().to_numpy(zero_copy_only=False)), codes, 0)
    return codes


def _dense(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Dense codes 0..k-1 of int64 values (hash-based, first-appearance order)."""
    if values.size == 0:
        return values.astype(np.int64)
    encoded = pc.dictionary_encode(pa.array(values, pa.int64()))
    return np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)


def combine_codes(parts: Sequence[np.ndarray[Any, Any]], n: int) -> np.ndarray[Any, Any]:
    """One dense code per row for several code columns (equal tuples <-> equal codes)."""
    if not parts:
        return np.zeros(n, np.int64)
    acc = _dense(parts[0])
    for part in parts[1:]:
        width = int(part.max()) + 1 if part.size else 1
        acc = _dense(acc * width + part)
    return acc


def row_codes(table: pa.Table) -> np.ndarray[Any, Any]:
    """One int64 per row: equal rows (every column; nulls equal nulls, NaN equals NaN) get
    equal codes, different rows different ones. Columnar (Arrow hashing); nested types too."""
    parts: list[np.ndarray[Any, Any]] = []
    for column in table.columns:
        parts += column_codes(column)
    return combine_codes(parts, table.num_rows)


def _occurrence(codes: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """For each row, how many earlier rows have its code (0 for the first of each code)."""
    n = codes.size
    if n == 0:
        return codes
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    idx = np.arange(n, dtype=np.int64)
    first = np.maximum.accumulate(np.where(starts, idx, 0))
    out = np.empty(n, dtype=np.int64)
    out[order] = idx - first
    return out


def cancel_codes(left: np.ndarray[Any, Any], right: np.ndarray[Any, Any]
                 ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Which rows of each side survive cancelling equal codes one for one: (keep left,
    keep right)."""
    if left.size == 0 or right.size == 0:
        return np.ones(left.size, bool), np.ones(right.size, bool)
    k = int(max(left.max(), right.max())) + 1
    count_left = np.bincount(left, minlength=k)
    count_right = np.bincount(right, minlength=k)
    return (_occurrence(left) >= count_right[left], _occurrence(right) >= count_left[right])


def split_codes(left: pa.Table, right: pa.Table
                ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Row codes of two tables of one schema, in one code space."""
    codes = row_codes(pa.concat_tables([left, right]))
    return codes[:left.num_rows], codes[left.num_rows:]


# --------------------------------------------------------------------------- large tables


def _flags(mask: Any) -> np.ndarray[Any, Any]:
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


def _fixed_width(arr: pa.Array, valid: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The bits of each value of a fixed-width primitive column as uint64 (nulls 0; NaN
    canonical, so NaN equals NaN as in Java's ``Double.equals``)."""
    n = len(arr)
    if pa.types.is_boolean(arr.type):
        return np.asarray(_flags(arr), dtype=np.uint64)
    width = arr.type.bit_width // 8
    bits = np.frombuffer(arr.buffers()[1], dtype=_UINT[width],
                         count=arr.offset + n)[arr.offset:]
    if pa.types.is_floating(arr.type) and width in _FLOAT:
        nan = np.isnan(bits.view(_FLOAT[width]))
        if nan.any():
            bits = np.where(nan, _CANONICAL_NAN[width], bits)
    out = bits if bits.dtype == np.uint64 else bits.astype(np.uint64)
    if not valid.all():
        out = np.where(valid, out, np.uint64(0))
    return out


def _string_parts(arr: pa.Array, valid: np.ndarray[Any, Any]
                  ) -> tuple[list[np.ndarray[Any, Any]], np.ndarray[Any, Any]]:
    """Length, first 8 and last 8 bytes of each string or binary value (exact up to 16
    bytes), and which values are longer."""
    n = len(arr)
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64 if large else np.int32,
                            count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
    data = arr.buffers()[2]
    raw = np.zeros(8, np.uint8) if data is None else np.frombuffer(data, np.uint8)
    padded = np.concatenate([raw, np.zeros(8, np.uint8)])
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    starts, lengths = offsets[:-1], np.diff(offsets)
    if not valid.all():
        lengths = np.where(valid, lengths, 0)
    head = words[starts] & _MASKS[np.minimum(lengths, 8)]
    tail = np.where(lengths > 8, words[np.maximum(offsets[1:] - 8, 0)], np.uint64(0))
    return [lengths.astype(np.uint64), head, tail], lengths > _COVERED


def _components(arr: pa.Array | pa.ChunkedArray
                ) -> tuple[list[np.ndarray[Any, Any]], np.ndarray[Any, Any] | None]:
    """Exact uint64 components of a column's values (equal values -> equal components; equal
    components -> equal values, except where the second result marks a long string)."""
    arr = _combined(arr)
    t = arr.type
    if isinstance(t, pa.ExtensionType):
        return _components(arr.storage)
    if pa.types.is_dictionary(t):
        return _components(arr.cast(t.value_type))
    valid = np.ones(len(arr), bool) if arr.null_count == 0 else _flags(arr.is_valid())
    validity = [] if arr.null_count == 0 else [valid.astype(np.uint64)]
    if pa.types.is_boolean(t) or ((pa.types.is_integer(t) or pa.types.is_floating(t)
                                   or pa.types.is_temporal(t)) and t.bit_width // 8 in _UINT):
        return [_fixed_width(arr, valid), *validity], None
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or \
            pa.types.is_large_binary(t):
        parts, long = _string_parts(arr, valid)
        return [*parts, *validity], long
    return [c.astype(np.uint64) for c in column_codes(arr)], None


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """splitmix64's finalizer, elementwise (uint64 arithmetic wraps)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))  # type: ignore[no-any-return]


def _row_hash(components: Sequence[np.ndarray[Any, Any]], n: int) -> np.ndarray[Any, Any]:
    """A 64-bit hash per row of its components: a polynomial over them, then mixed (equal
    rows get equal hashes; unequal rows that collide are caught by the pair check)."""
    h = np.zeros(n, np.uint64)
    for c in components:
        h *= _GOLDEN
        h += c
    return _mix(h)


def cancel_equal_rows(left: pa.Table, right: pa.Table
                      ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Which rows of ``left`` and ``right`` (one schema) survive cancelling equal rows one
    for one, over every column (nulls equal nulls, NaN equals NaN): (keep left, keep right).
    Exact; columnar (see the module docstring)."""
    nl, nr = left.num_rows, right.num_rows
    if nl == 0 or nr == 0:
        return np.ones(nl, bool), np.ones(nr, bool)
    if nl + nr < SMALL:
        return cancel_codes(*split_codes(left, right))
    both = pa.concat_tables([left, right])
    n = nl + nr
    components: list[np.ndarray[Any, Any]] = []
    long_columns: list[tuple[int, np.ndarray[Any, Any]]] = []
    for i, column in enumerate(both.columns):
        comps, long = _components(column)
        components += comps
        if long is not None and long.any():
            long_columns.append((i, long))
    # sort (hash, row) in one uint64: the row in the low bits, the hash above (SIMD sort);
    # rows of equal hash are then adjacent, left ones (lower row numbers) first
    bits = max(int(n - 1).bit_length(), 1)
    keys = np.sort((_row_hash(components, n) << np.uint64(bits))
                   | np.arange(n, dtype=np.uint64))
    rows = (keys & np.uint64((1 << bits) - 1)).astype(np.int64)
    hashes = keys >> np.uint64(bits)
    del keys
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(hashes[1:], hashes[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    sizes = np.diff(np.append(first, n))
    lefts = np.add.reduceat((rows < nl).astype(np.int64), first)
    pairs = np.minimum(lefts, sizes - lefts)
    # the k-th left row of a group pairs with its k-th right row
    grouped = np.repeat(np.arange(first.size), pairs)
    k = np.arange(grouped.size, dtype=np.int64) - np.repeat(np.cumsum(pairs) - pairs, pairs)
    at = first[grouped] + k
    partner = np.full(nl, -1, dtype=np.int64)
    partner[rows[at]] = rows[at + lefts[grouped]]
    # check every pair, component by component, in left row order (nearly sequential reads
    # for a copy-on-write rewrite, which keeps its rows in order)
    pl = np.flatnonzero(partner >= 0)
    pr = partner[pl]
    ok = np.ones(pl.size, bool)
    for comp in components:
        ok &= comp[pl] == comp[pr]
    for i, long in long_columns:
        check = np.flatnonzero(ok & (long[pl] | long[pr]))
        if check.size:
            column = both.column(i)
            same = pc.equal(column.take(pa.array(pl[check])), column.take(pa.array(pr[check])))
            ok[check] &= _flags(same)
    keep = np.ones(n, bool)
    keep[pl[ok]] = False
    keep[pr[ok]] = False
    if not ok.all():  # collisions: the rows of those hash groups, cancelled exactly
        group_of = np.empty(n, dtype=np.int64)
        group_of[rows] = np.cumsum(starts) - 1
        bad = np.zeros(first.size, bool)
        bad[group_of[pl[~ok]]] = True
        redo = np.flatnonzero(bad[group_of])
        sub = both.take(pa.array(redo))
        cut = int(np.searchsorted(redo, nl))
        kl, kr = cancel_codes(*split_codes(sub.slice(0, cut), sub.slice(cut)))
        keep[redo] = np.concatenate([kl, kr])
    return keep[:nl], keep[nl:]
