"""Avro object container files (Iceberg manifests, manifest lists) decoded into Arrow columns.

Spec: Avro 1.11 "Object Container Files" and "Binary Encoding"; Iceberg "Avro" type mapping and
"Manifests". Pure Python + numpy, no file access: callers read the bytes (icenb.io.file_io) and
pass them with a name used in error messages.

Decoding never builds one Python object per record. All blocks of all files in a batch start on a
record boundary, so they are decoded in *lockstep*: step ``r`` decodes record ``r`` of every block
at once, with one numpy operation per schema node over all blocks ("lanes"). The number of numpy
calls grows with the records per block (~150 for Iceberg's 64 kB blocks), not with the number of
files, which is why :func:`read_avro_tables` should be given many files at once. Files are grouped
by writer schema (one lockstep pass per distinct schema); each returned table owns its buffers.
Projection (``columns=``) skips unwanted fields while decoding, without building their Arrow data.

Arrow mapping of the writer schema (decisions where the specs are silent):

- record -> struct; union ``[null, T]`` / ``[T, null]`` -> nullable ``T`` (fields of any other
  type are non-nullable); other unions raise :class:`~icenb.errors.UnsupportedFeature`.
- array -> ``list<element>``; Avro map -> ``map<string, V>``; an array of 2-field records with
  ``logicalType: map`` (Iceberg's maps with non-string keys, records named like ``k117_v118``) ->
  ``map<K, V>`` with the record's fields as key and value, so ``pyarrow.compute.map_lookup``
  works on manifest stats columns.
- int/long/float/double/boolean/string/bytes -> int32/int64/float32/float64/bool/string/binary;
  fixed(n) -> fixed_size_binary(n); enum -> string; null -> null.
- logical types: date -> date32 (``.view(pa.int32())`` gives Iceberg's int days without a copy);
  time-micros -> time64[us] (time-millis -> time32[ms]); timestamp-micros -> timestamp[us], with
  tz "UTC" when Iceberg's ``adjust-to-utc`` is true (or absent on timestamp-*; never on
  local-timestamp-*), likewise for millis/nanos; decimal on bytes or fixed -> decimal128(p, s)
  (decimal256 above precision 38); uuid on fixed(16) -> fixed_size_binary(16) (on string: string).
- Iceberg ids (``field-id`` on record fields, ``element-id`` on arrays, ``key-id``/``value-id``
  on Avro maps) go into Arrow field metadata under ``b"PARQUET:field_id"`` (:data:`FIELD_ID_KEY`),
  the key pyarrow uses for Parquet field ids, so the same code reads ids from either source.
- Columns keep the Avro field names (``status``, ``snapshot_id``, ``data_file``, ...), in
  writer-schema order.

Codecs: null, deflate, bzip2, xz (stdlib); zstandard and snappy through pyarrow's codecs (zstd
frames must carry their content size unless the ``zstandard`` module is installed). Malformed
bytes raise :class:`~icenb.errors.CorruptFile` naming the file.

Left for later: resolution against a reader schema (the writer schema is always used; projection
only drops fields), recursive named types, unions other than with null.
"""

from __future__ import annotations

import bz2
import json
import lzma
import os
import zlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icenb.errors import CorruptFile, IcebergError, UnsupportedFeature
from icenb.io import avro_compiled, avro_native

__all__ = [
    "FIELD_ID_KEY",
    "MAGIC",
    "avro_arrow_schema",
    "avro_file_metadata",
    "read_avro",
    "read_avro_records",
    "read_avro_tables",
]

MAGIC = b"Obj\x01"
FIELD_ID_KEY = b"PARQUET:field_id"
_SYNC_SIZE = 16

IntArray = npt.NDArray[np.int64]
ByteArray = npt.NDArray[np.uint8]
BoolArray = npt.NDArray[np.bool_]
Sel = slice | IntArray
Keep = Callable[[tuple[str, ...]], bool]


class _Corrupt(Exception):
    """Internal: malformed data found while decoding (becomes CorruptFile naming the file)."""


# --------------------------------------------------------------------------- container format


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """Zigzag varint (Avro int/long) at data[i]; returns (value, next index)."""
    shift = v = 0
    n = len(data)
    while True:
        if i >= n:
            raise _Corrupt("truncated varint")
        c = data[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return (v >> 1) ^ -(v & 1), i
        shift += 7
        if shift > 63:
            raise _Corrupt("varint overflow (more than 10 bytes)")


def _header(data: bytes) -> tuple[dict[str, bytes], bytes, int]:
    """Metadata map, sync marker and end offset of a container header."""
    if len(data) < 4 or data[:4] != MAGIC:
        raise _Corrupt(f"bad magic {bytes(data[:4])!r}, expected {MAGIC!r} (not an Avro file)")
    meta: dict[str, bytes] = {}
    i = 4
    while True:
        n, i = _varint(data, i)
        if n == 0:
            break
        if n < 0:  # a negative count is followed by the block's size in bytes
            n = -n
            _, i = _varint(data, i)
        for _ in range(n):
            kl, i = _varint(data, i)
            if kl < 0 or i + kl > len(data):
                raise _Corrupt("truncated header metadata key")
            try:
                key = data[i : i + kl].decode("utf-8")
            except UnicodeDecodeError as e:
                raise _Corrupt("header metadata key is not UTF-8") from e
            i += kl
            vl, i = _varint(data, i)
            if vl < 0 or i + vl > len(data):
                raise _Corrupt(f"truncated header metadata value of {key!r}")
            meta[key] = bytes(data[i : i + vl])
            i += vl
    if i + _SYNC_SIZE > len(data):
        raise _Corrupt("truncated header: no sync marker")
    return meta, bytes(data[i : i + _SYNC_SIZE]), i + _SYNC_SIZE


def avro_file_metadata(name: str, data: bytes) -> dict[str, bytes]:
    """Header key-value metadata of a container file (avro.schema, avro.codec, Iceberg's
    partition-spec, schema, format-version, content, ...) without decoding any block."""
    try:
        return _header(data)[0]
    except _Corrupt as e:
        raise CorruptFile(f"corrupt Avro file: {e}", file=name) from None


def _zstd(payload: bytes) -> bytes:
    """One zstd block: pyarrow's codec when the frame header carries the content size."""
    size = _zstd_content_size(payload)
    if size is None:
        try:
            import zstandard
        except ImportError:
            raise UnsupportedFeature(
                "zstd block without content size needs the 'zstandard' package"
            ) from None
        out: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(payload)
        return out
    result = pa.Codec("zstd").decompress(payload, decompressed_size=size)
    return bytes(result) if not isinstance(result, bytes) else result


def _zstd_content_size(payload: bytes) -> int | None:
    """Frame_Content_Size of a zstd frame header (RFC 8878 3.1.1.1), None when absent."""
    if len(payload) < 5 or payload[:4] != b"\x28\xb5\x2f\xfd":
        raise _Corrupt("zstd block does not start with a zstd frame")
    fhd = payload[4]
    fcs_flag, single, did_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    fcs_size = (1 if single else 0) if fcs_flag == 0 else (2, 4, 8)[fcs_flag - 1]
    if fcs_size == 0:
        return None
    start = 5 + (0 if single else 1) + (0, 1, 2, 4)[did_flag]
    if start + fcs_size > len(payload):
        raise _Corrupt("truncated zstd frame header")
    size = int.from_bytes(payload[start : start + fcs_size], "little")
    return size + 256 if fcs_size == 2 else size


def _snappy(payload: bytes) -> bytes:
    """Avro snappy block: raw snappy data then the CRC32 (big-endian) of the uncompressed bytes."""
    if len(payload) < 5:
        raise _Corrupt("snappy block shorter than its CRC")
    body, crc = payload[:-4], int.from_bytes(payload[-4:], "big")
    size = shift = 0
    for k, c in enumerate(body[:10]):  # the raw format starts with the uncompressed length
        size |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            break
        if k == 9:
            raise _Corrupt("snappy length varint overflow")
    result = pa.Codec("snappy").decompress(body, decompressed_size=size)
    out = bytes(result) if not isinstance(result, bytes) else result
    if zlib.crc32(out) != crc:
        raise _Corrupt("snappy block CRC32 mismatch")
    return out


def _inflate_function() -> Callable[[bytes], bytes]:
    """Raw deflate (RFC 1951; Avro's ``deflate`` codec): ISA-L's inflate when ``isal`` is
    installed (~3x zlib's speed on manifests; it releases the GIL too), else zlib's."""
    try:
        from isal import isal_zlib
    except ImportError:
        return lambda b: zlib.decompress(b, -15)

    def inflate(b: bytes) -> bytes:
        out: bytes = isal_zlib.decompress(b, -15)
        return out

    return inflate


_CODECS: dict[str, Callable[[bytes], bytes]] = {
    "null": lambda b: b,
    "deflate": _inflate_function(),
    "bzip2": bz2.decompress,
    "xz": lzma.decompress,
    "zstandard": _zstd,
    "snappy": _snappy,
}


def _blocks(name: str, data: bytes, sync: bytes, i: int, codec: str) -> list[tuple[int, bytes]]:
    """(record count, decompressed payload) of each data block after the header."""
    decompress = _CODECS.get(codec)
    if decompress is None:
        raise UnsupportedFeature(f"Avro codec {codec!r} is not supported", file=name,
                                 field="avro.codec", value=codec)
    blocks: list[tuple[int, bytes]] = []
    n = len(data)
    while i < n:
        k = len(blocks)
        count, i = _varint(data, i)
        size, i = _varint(data, i)
        if count < 0 or size < 0:
            raise _Corrupt(f"block {k}: negative record count or size ({count}, {size})")
        if i + size > n:
            raise _Corrupt(f"block {k}: truncated block ({size} bytes announced, "
                           f"{n - i} left)")
        payload = data[i : i + size]
        i += size
        if data[i : i + _SYNC_SIZE] != sync:
            raise _Corrupt(f"block {k}: sync marker mismatch")
        i += _SYNC_SIZE
        try:
            payload = decompress(payload)
        except UnsupportedFeature as e:
            raise e.with_file(name) from None
        except _Corrupt:
            raise
        except Exception as e:  # zlib.error, OSError, lzma.LZMAError, pyarrow errors
            raise _Corrupt(f"block {k}: {codec} decompression failed: {e}") from None
        blocks.append((count, bytes(payload)))
    return blocks


# --------------------------------------------------------------------------- lockstep decoding

_SHIFTS = [np.uint64(7 * k) for k in range(1, 10)]  # of the 2nd..10th byte of a varint
_ONE, _ZERO = np.uint64(1), np.uint64(0)
_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_BITS = np.uint64(0x7F7F7F7F7F7F7F7F)
# Packing the 7-bit groups of a little-endian word: pairs of bytes, of 16-bit and of 32-bit
# halves (keep the low part, move the high part down by 1, 2, 4 bits).
_PACK = [(np.uint64(0x007F007F007F007F), np.uint64(0x3F803F803F803F80), np.uint64(1)),
         (np.uint64(0x00003FFF00003FFF), np.uint64(0x0FFFC0000FFFC000), np.uint64(2)),
         (np.uint64(0x000000000FFFFFFF), np.uint64(0x00FFFFFFF0000000), np.uint64(4))]
_ZIGZAG_1 = np.array([(b >> 1) ^ -(b & 1) for b in range(128)] + [0] * 128, np.int64)


def _byte_width(low: npt.NDArray[np.uint64], mask: npt.NDArray[np.uint64]) -> IntArray:
    """Bytes of each varint: ``mask`` has its bytes' bits set, ``low`` its last byte's bit 7."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2
        width: IntArray = (np.bitwise_count(mask) >> 3).astype(np.int64)
        return width
    exact: IntArray = (np.log2(low.astype(np.float64)).astype(np.int64) >> 3) + 1
    return exact


class _Lanes:
    """The concatenated block payloads and one read position per lane (block)."""

    def __init__(self, buf: ByteArray, pos: IntArray) -> None:
        self.buf = np.concatenate([buf, np.zeros(16, np.uint8)])  # reads just past the end
        self.pos = pos
        # the 8 bytes at every offset as a little-endian word (an unaligned, overlapping view)
        self.words: npt.NDArray[np.uint64] = np.ndarray(
            shape=(len(self.buf) - 7,), dtype="<u8", buffer=self.buf, strides=(1,))

    def varint(self, sel: Sel) -> IntArray:
        """Zigzag varint at each selected lane, as int64; advances those lanes."""
        p = self.pos[sel]
        b = self.buf[p]
        if b.size == 0 or b.max() < 0x80:  # all one byte: a table lookup
            self.pos[sel] = p + 1
            one: IntArray = _ZIGZAG_1[b]
            return one
        # up to 8 bytes: from one word per lane, with a fixed number of numpy calls
        w = self.words[p]
        stop = ~w & _HIGH_BITS  # the high bit of each byte that ends a varint
        if stop.min():
            low = stop & (~stop + _ONE)  # the first ending byte's high bit
            mask = (low << _ONE) - _ONE  # the varint's bytes (wraps to all for 8 bytes)
            width = _byte_width(low, mask)
            x = w & mask & _LOW_BITS
            longest = int(width.max())
            for k, (keep, moved, shift) in enumerate(_PACK):
                if longest <= 1 << k:
                    break
                x = (x & keep) | ((x >> shift) & moved)
            self.pos[sel] = p + width
            packed: IntArray = ((x >> _ONE) ^ (_ZERO - (x & _ONE))).view(np.int64)
            return packed
        # byte by byte over all lanes; lanes whose varint has ended are masked out
        v = (b & 0x7F).astype(np.uint64)
        more = b >= 0x80
        q = p + 1
        for shift in _SHIFTS:
            b = self.buf[q]
            v |= ((b & 0x7F).astype(np.uint64) << shift) * more
            q += more
            more &= b >= 0x80
            if not more.any():
                break
        else:
            raise _Corrupt("varint overflow (more than 10 bytes)")
        self.pos[sel] = q
        out: IntArray = ((v >> np.uint64(1)) ^ (np.uint64(0) - (v & np.uint64(1)))).view(np.int64)
        return out

    def skip_varint(self, sel: Sel) -> None:
        """Advance the selected lanes past one varint without decoding it."""
        p = self.pos[sel]
        b = self.buf[p]
        if b.size == 0 or b.max() < 0x80:
            self.pos[sel] = p + 1
            return
        stop = ~self.words[p] & _HIGH_BITS
        if stop.min():  # every varint ends within 8 bytes
            low = stop & (~stop + _ONE)
            self.pos[sel] = p + _byte_width(low, (low << _ONE) - _ONE)
            return
        more = b >= 0x80
        q = p + 1
        for _ in _SHIFTS:
            b = self.buf[q]
            q += more
            more &= b >= 0x80
            if not more.any():
                break
        else:
            raise _Corrupt("varint overflow (more than 10 bytes)")
        self.pos[sel] = q

    def skip(self, sel: Sel, width: int) -> IntArray:
        """Start of a fixed-width value at each selected lane; advances those lanes."""
        p = self.pos[sel]
        start: IntArray = p.copy()
        self.pos[sel] = p + width
        return start

    def gather(self, starts: IntArray, width: int) -> ByteArray:
        """(len(starts), width) bytes at the given positions."""
        if starts.size and int(starts.max()) + width > len(self.buf) - 16:
            raise _Corrupt("value runs past the end of the data")
        out: ByteArray = self.buf[starts[:, None] + np.arange(width)]
        return out


def _take(sel: Sel, mask: BoolArray) -> IntArray:
    """Sub-selection of lanes (an index array) where mask is true."""
    idx: IntArray = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel
    out: IntArray = idx[mask]
    return out


def _positions(slots: list[IntArray], pmap: IntArray | None) -> IntArray:
    """Output positions of recorded slot ids (pmap maps ids to positions; None: identity)."""
    s = np.concatenate(slots) if slots else np.zeros(0, np.int64)
    return s if pmap is None else pmap[s]


def _bitmap(valid: BoolArray | None) -> pa.Buffer | None:
    return None if valid is None else pa.array(valid, pa.bool_()).buffers()[1]


def _field_meta(field_id: Any) -> dict[bytes, bytes] | None:
    return None if field_id is None else {FIELD_ID_KEY: str(field_id).encode()}


class _Node:
    """A node of the compiled writer schema: reads its values lane-wise, builds Arrow at the end."""

    keep: bool
    nullable = False
    min_width = 1
    type: pa.DataType = pa.null()

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        raise NotImplementedError

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        raise NotImplementedError


class _Null(_Node):
    min_width = 0

    def __init__(self, keep: bool) -> None:
        self.keep = keep

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        return

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        return pa.nulls(n)


class _Varint(_Node):
    """int, long, enum and the logical types stored in them (date, time, timestamp)."""

    def __init__(self, arrow_type: pa.DataType, keep: bool, bits: int,
                 symbols: list[str] | None = None) -> None:
        self.type, self.keep, self.bits, self.symbols = arrow_type, keep, bits, symbols
        self.slots: list[IntArray] = []
        self.vals: list[IntArray] = []

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        if not self.keep:
            ln.skip_varint(sel)
            return
        self.slots.append(slots)
        self.vals.append(ln.varint(sel))

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        out = np.zeros(n, np.int64)
        if self.vals:
            out[_positions(self.slots, pmap)] = np.concatenate(self.vals)
        if self.symbols is not None:
            if n and (out.min() < 0 or out.max() >= len(self.symbols)):
                raise _Corrupt("enum index out of range")
            taken = pa.array(self.symbols, pa.string()).take(pa.array(out))
            return pa.Array.from_buffers(pa.string(), n, [_bitmap(valid), *taken.buffers()[1:]])
        if self.bits == 32:
            if n and (out.min() < -(2**31) or out.max() >= 2**31):
                raise _Corrupt("int value out of 32-bit range")
            out32 = out.astype(np.int32)
            return pa.Array.from_buffers(self.type, n, [_bitmap(valid), pa.py_buffer(out32)])
        return pa.Array.from_buffers(self.type, n, [_bitmap(valid), pa.py_buffer(out)])


class _Boolean(_Node):
    def __init__(self, keep: bool) -> None:
        self.type, self.keep = pa.bool_(), keep
        self.slots: list[IntArray] = []
        self.vals: list[ByteArray] = []

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        p = ln.pos[sel]
        b = ln.buf[p]
        ln.pos[sel] = p + 1
        if self.keep:
            self.slots.append(slots)
            self.vals.append(b)

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        out = np.zeros(n, np.bool_)
        if self.vals:
            out[_positions(self.slots, pmap)] = np.concatenate(self.vals) != 0
        bits = pa.array(out, pa.bool_()).buffers()[1]
        return pa.Array.from_buffers(pa.bool_(), n, [_bitmap(valid), bits])


def _decimal_le(ln: _Lanes, starts: IntArray, lens: IntArray, width: int) -> ByteArray:
    """Big-endian two's-complement values (start, length) as sign-extended little-endian rows."""
    m = len(starts)
    if m and int(lens.max()) > width:
        raise _Corrupt(f"decimal value longer than {width} bytes")
    first = ln.buf[starts]
    neg = (first >= 0x80) & (lens > 0)
    out: ByteArray = np.zeros((m, width), np.uint8)
    out[neg] = 0xFF
    for j in range(int(lens.max()) if m else 0):
        have = lens > j
        out[have, j] = ln.buf[starts[have] + lens[have] - 1 - j]
    return out


class _Fixed(_Node):
    """float, double, fixed(n) and decimal on fixed: a fixed number of bytes per value."""

    def __init__(self, arrow_type: pa.DataType, keep: bool, width: int, ln_ref: list[_Lanes],
                 decimal_width: int = 0) -> None:
        self.type, self.keep, self.width, self.ln_ref = arrow_type, keep, width, ln_ref
        self.decimal_width = decimal_width
        self.min_width = width
        self.slots: list[IntArray] = []
        self.starts: list[IntArray] = []

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        start = ln.skip(sel, self.width)
        if self.keep:
            self.slots.append(slots)
            self.starts.append(start)

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        ln = self.ln_ref[0]
        dest = _positions(self.slots, pmap)
        starts = np.concatenate(self.starts) if self.starts else np.zeros(0, np.int64)
        if self.decimal_width:
            rows = _decimal_le(ln, starts, np.full(len(starts), self.width, np.int64),
                               self.decimal_width)
            width = self.decimal_width
        else:
            rows = ln.gather(starts, self.width)
            width = self.width
        data = np.zeros((n, width), np.uint8)
        data[dest] = rows
        return pa.Array.from_buffers(self.type, n, [_bitmap(valid), pa.py_buffer(data)])


class _Bytes(_Node):
    """string, bytes and decimal on bytes: a length then that many bytes."""

    def __init__(self, arrow_type: pa.DataType, keep: bool, ln_ref: list[_Lanes],
                 decimal_width: int = 0) -> None:
        self.type, self.keep, self.ln_ref = arrow_type, keep, ln_ref
        self.decimal_width = decimal_width
        self.slots: list[IntArray] = []
        self.starts: list[IntArray] = []
        self.lens: list[IntArray] = []

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        size = ln.varint(sel)
        if size.size and size.min() < 0:
            raise _Corrupt("negative string/bytes length")
        start = ln.pos[sel].copy()  # a view when sel is a slice
        ln.pos[sel] = start + size
        if self.keep:
            self.slots.append(slots)
            self.starts.append(start)
            self.lens.append(size)

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        ln = self.ln_ref[0]
        dest = _positions(self.slots, pmap)
        starts_v = np.concatenate(self.starts) if self.starts else np.zeros(0, np.int64)
        lens_v = np.concatenate(self.lens) if self.lens else np.zeros(0, np.int64)
        if lens_v.size and int((starts_v + lens_v).max()) > len(ln.buf) - 16:
            raise _Corrupt("string/bytes value runs past the end of the data")
        if self.decimal_width:
            data = np.zeros((n, self.decimal_width), np.uint8)
            data[dest] = _decimal_le(ln, starts_v, lens_v, self.decimal_width)
            return pa.Array.from_buffers(self.type, n, [_bitmap(valid), pa.py_buffer(data)])
        lens = np.zeros(n, np.int64)
        starts = np.zeros(n, np.int64)
        lens[dest] = lens_v
        starts[dest] = starts_v
        total = int(lens_v.sum())
        present: BoolArray | None = None
        if len(lens_v) != n:
            present = np.zeros(n, np.bool_)
            present[dest] = True
        taken = self._interleaved(ln, n, lens, starts, present, valid) if n else None
        if taken is not None:
            return taken
        # long values (paths): views + a C++ copy; short ones (bounds): a numpy gather
        if total < 2**31 and len(ln.buf) < 2**31 and total > 16 * len(lens_v):
            return self._viewed(ln, n, lens, starts, valid)
        return self._gathered(ln, n, lens, starts, total, valid)

    def _interleaved(self, ln: _Lanes, n: int, lens: IntArray, starts: IntArray,
                     present: BoolArray | None, valid: BoolArray | None) -> pa.Array | None:
        """Values are laid out in the buffer in output order (rows in file order, items in
        record order), so one binary array over the whole buffer, whose elements alternate
        value / gap between values, holds them all; Arrow's take (C++) keeps the values.
        None when the layout is not monotonic (then the values are gathered)."""
        ends = starts + lens
        if present is not None:  # a row without a value: an empty value where the last ended
            reached = np.maximum.accumulate(np.where(present, ends, 0))
            starts = np.where(present, starts, reached)
            ends = np.where(present, ends, reached)
        offsets = np.empty(2 * n + 1, np.int64)
        offsets[0:2 * n:2] = starts
        offsets[1:2 * n:2] = ends
        offsets[2 * n] = ends[-1]
        if (np.diff(offsets) < 0).any():
            return None
        big = int(offsets[-1]) >= 2**31
        both = pa.Array.from_buffers(
            pa.large_binary() if big else pa.binary(), 2 * n,
            [None, pa.py_buffer(offsets if big else offsets.astype(np.int32)),
             pa.py_buffer(ln.buf)])
        values = both.take(pa.array(np.arange(0, 2 * n, 2, dtype=np.int64)))
        if big:
            values = values.cast(pa.binary()) if int(lens.sum()) < 2**31 else values
        if valid is not None:
            values = pa.Array.from_buffers(values.type, n, [_bitmap(valid),
                                                            *values.buffers()[1:]])
        if self.type != pa.string():
            return values
        out = values.view(pa.large_string() if values.type == pa.large_binary()
                          else pa.string())
        try:
            out.validate(full=True)
        except pa.ArrowInvalid as e:
            raise _Corrupt(f"string is not valid UTF-8: {e}") from None
        return out

    def _viewed(self, ln: _Lanes, n: int, lens: IntArray, starts: IntArray,
                valid: BoolArray | None) -> pa.Array:
        """Arrow binary views into the lanes' buffer, then one cast (a copy in C++) to the
        compact binary array; strings are then checked to be UTF-8."""
        views = np.zeros((n, 16), np.uint8)
        words = views.view("<i4")  # (n, 4): length, prefix / inline bytes, buffer, offset
        words[:, 0] = lens
        inline = lens <= 12
        width = min(12, int(lens.max()))
        if width:
            rows = np.flatnonzero(inline) if not inline.all() else None
            s_in = starts if rows is None else starts[rows]
            l_in = lens if rows is None else lens[rows]
            grid = np.arange(width, dtype=np.int64)
            chunk = ln.buf[s_in[:, None] + grid]  # reads past a value stay inside buf (+16)
            chunk[grid[None, :] >= l_in[:, None]] = 0
            if rows is None:
                views[:, 4:4 + width] = chunk
            else:
                views[rows, 4:4 + width] = chunk
        if not inline.all():
            rows = np.flatnonzero(~inline)
            views[rows, 4:8] = ln.buf[starts[rows, None] + np.arange(4)]
            words[rows, 2] = 0
            words[rows, 3] = starts[rows]
        arr = pa.Array.from_buffers(pa.binary_view(), n, [_bitmap(valid), pa.py_buffer(views),
                                                   pa.py_buffer(ln.buf)])
        out = arr.cast(pa.binary()) if self.type == pa.string() else arr.cast(self.type)
        if self.type != pa.string():
            return out
        out = out.view(pa.string())
        try:
            out.validate(full=True)  # the cast does not check UTF-8
        except pa.ArrowInvalid as e:
            raise _Corrupt(f"string is not valid UTF-8: {e}") from None
        return out

    def _gathered(self, ln: _Lanes, n: int, lens: IntArray, starts: IntArray, total: int,
                  valid: BoolArray | None) -> pa.Array:
        """The values gathered byte by byte (for more than 2 GiB of data)."""
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        itype = np.int32 if len(ln.buf) < 2**31 and total < 2**31 else np.int64
        idx = np.repeat((starts - offsets[:-1]).astype(itype), lens)
        idx += np.arange(total, dtype=itype)
        data = ln.buf[idx]
        big = total >= 2**31
        typ = self.type
        if big:
            typ = pa.large_string() if self.type == pa.string() else pa.large_binary()
        off = offsets if big else offsets.astype(np.int32)
        arr = pa.Array.from_buffers(typ, n, [_bitmap(valid), pa.py_buffer(off),
                                             pa.py_buffer(data)])
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):
            try:
                arr.validate(full=True)
            except pa.ArrowInvalid as e:
                raise _Corrupt(f"string is not valid UTF-8: {e}") from None
        return arr


class _Optional(_Node):
    """A union of null and one other type."""

    nullable = True

    def __init__(self, null_index: int, child: _Node) -> None:
        self.null_index, self.child, self.keep = null_index, child, child.keep
        self.type = child.type
        self.null_slots: list[IntArray] = []

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        # the branch index is 0 or 1: one byte, 0x00 or 0x02 (zigzag)
        p = ln.pos[sel]
        raw = ln.buf[p]
        ln.pos[sel] = p + 1
        if raw.size and (raw | 2).max() != 2:
            raise _Corrupt("union branch index out of range")
        present = raw != (2 * self.null_index)
        if present.all():
            self.child.read(ln, sel, slots)
            return
        if self.keep:
            self.null_slots.append(slots[~present])
        if present.any():
            self.child.read(ln, _take(sel, present), slots[present])

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        mine: BoolArray | None = None
        if self.null_slots:
            mine = np.ones(n, np.bool_)
            mine[_positions(self.null_slots, pmap)] = False
        return self.child.build(n, pmap, mine)


class _Record(_Node):
    def __init__(self, fields: list[tuple[str, _Node, Any]], keep: bool) -> None:
        self.fields = fields
        # an empty record (an unpartitioned table's partition) is kept when selected
        self.keep = any(node.keep for _, node, _ in fields) or (not fields and keep)
        self.min_width = sum(node.min_width for _, node, _ in fields)
        self.arrow_fields = [
            pa.field(name, node.type, nullable=node.nullable, metadata=_field_meta(fid))
            for name, node, fid in fields if node.keep
        ]
        self.type = pa.struct(self.arrow_fields)

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        for _, node, _ in self.fields:
            node.read(ln, sel, slots)

    def children(self, n: int, pmap: IntArray | None) -> list[pa.Array]:
        return [node.build(n, pmap, None) for _, node, _ in self.fields if node.keep]

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        children = self.children(n, pmap)
        return pa.Array.from_buffers(self.type, n, [_bitmap(valid)], children=children)


class _Array(_Node):
    """An Avro array, an Avro map (item = key/value record) or an Iceberg logical map."""

    def __init__(self, item: _Node, arrow_type: pa.DataType, max_items: list[int]) -> None:
        self.item, self.keep, self.type = item, item.keep, arrow_type
        self.max_items = max_items
        self.next_id = 0
        self.parents: list[IntArray] = []
        self.elems: list[IntArray] = []

    def read(self, ln: _Lanes, sel: Sel, slots: IntArray) -> None:
        base = np.zeros(len(slots), np.int64)
        while True:
            count = ln.varint(sel)
            neg = count < 0
            if neg.any():  # a negative count is followed by the block's size in bytes
                ln.varint(_take(sel, neg))
                count = np.abs(count)
            top = int(count.max()) if count.size else 0
            if top > self.max_items[0]:
                raise _Corrupt(f"array/map block count {top} exceeds the data size")
            if top and int(count.min()) == top:  # every lane has `top` items (stats maps)
                self._read_uniform(ln, sel, slots, base, top)
                base = base + top
                continue
            for k in range(top):
                have = count > k
                if have.all():
                    s, sl, b = sel, slots, base
                else:
                    s, sl, b = _take(sel, have), slots[have], base[have]
                if self.keep:  # items get ids in read order; build maps ids to positions
                    ids = np.arange(self.next_id, self.next_id + len(sl), dtype=np.int64)
                    self.next_id += len(sl)
                    self.parents.append(sl)
                    self.elems.append(b + k)
                    self.item.read(ln, s, ids)
                else:
                    self.item.read(ln, s, sl)
            more = count > 0
            if not more.any():
                return
            sel = _take(sel, more)
            slots = slots[more]
            base = (base + count)[more]

    def _read_uniform(self, ln: _Lanes, sel: Sel, slots: IntArray, base: IntArray,
                      count: int) -> None:
        """``count`` items in every selected lane: the bookkeeping is done once for all."""
        m = len(slots)
        if not self.keep:
            for _ in range(count):
                self.item.read(ln, sel, slots)
            return
        ids = np.arange(self.next_id, self.next_id + m * count, dtype=np.int64)
        self.next_id += m * count
        self.parents.append(np.tile(slots, count))
        self.elems.append((base[None, :] + np.arange(count, dtype=np.int64)[:, None]).ravel())
        for k in range(count):
            self.item.read(ln, sel, ids[k * m:(k + 1) * m])

    def build(self, n: int, pmap: IntArray | None, valid: BoolArray | None) -> pa.Array:
        parent_pos = _positions(self.parents, pmap)
        lens = np.bincount(parent_pos, minlength=n) if n else np.zeros(0, np.int64)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        total = int(offsets[-1])
        if total >= 2**31:
            raise UnsupportedFeature(f"more than 2**31 list items ({total}) in one batch")
        elems = np.concatenate(self.elems) if self.elems else np.zeros(0, np.int64)
        item_pos = offsets[parent_pos] + elems
        if isinstance(self.type, pa.MapType):
            assert isinstance(self.item, _Record)
            entries = pa.StructArray.from_arrays(
                self.item.children(total, item_pos), fields=list(self.item.arrow_fields))
            children = [entries]
        else:
            children = [self.item.build(total, item_pos, None)]
        off = pa.py_buffer(offsets.astype(np.int32))
        return pa.Array.from_buffers(self.type, n, [_bitmap(valid), off], children=children)


# --------------------------------------------------------------------------- schema compilation

_TS_UNITS = {"millis": "ms", "micros": "us", "nanos": "ns"}
_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class _Compiler:
    """Builds decoder nodes from an Avro writer schema (JSON), resolving named types."""

    def __init__(self, name: str, ln_ref: list[_Lanes], max_items: list[int]) -> None:
        self.file = name
        self.ln_ref = ln_ref
        self.max_items = max_items
        self.named: dict[str, Any] = {}
        self.active: set[str] = set()

    def unsupported(self, message: str, path: tuple[str, ...]) -> UnsupportedFeature:
        return UnsupportedFeature(message, file=self.file, field=".".join(path) or "<root>")

    def invalid(self, message: str, path: tuple[str, ...]) -> CorruptFile:
        return CorruptFile(f"invalid Avro schema: {message}", file=self.file,
                           field=".".join(path) or "<root>")

    def register(self, schema: Mapping[str, Any], namespace: str | None) -> str | None:
        return avro_compiled.register_named(self.named, schema, namespace)

    def compile(self, schema: Any, keep: Keep, path: tuple[str, ...],
                namespace: str | None = None) -> _Node:
        if isinstance(schema, list):
            return self.union(schema, keep, path, namespace)
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                schema = {"type": schema}
            else:
                ref = self.named.get(f"{namespace}.{schema}" if namespace else schema)
                ref = ref or self.named.get(schema)
                if ref is None:
                    raise self.invalid(f"unknown type {schema!r}", path)
                if schema in self.active or ref[0].get("name") in self.active:
                    raise self.unsupported(f"recursive Avro type {schema!r}", path)
                return self.compile(ref[0], keep, path, ref[1])
        if not isinstance(schema, dict):
            raise self.invalid(f"unexpected schema {schema!r}", path)
        t = schema.get("type")
        if isinstance(t, (dict, list)):
            return self.compile(t, keep, path, namespace)
        if not isinstance(t, str):
            raise self.invalid(f"missing type in {schema!r}", path)
        if t == "record" or t == "error":
            return self.record(schema, keep, path, namespace)
        if t == "array":
            return self.array(schema, keep, path, namespace)
        if t == "map":
            return self.avro_map(schema, keep, path, namespace)
        if t in ("enum", "fixed"):
            self.register(schema, namespace)
        if t not in _PRIMITIVES and t not in ("enum", "fixed"):
            return self.compile(t, keep, path, namespace)  # a named type reference
        return self.primitive(t, schema, keep(path), path)

    def union(self, schema: list[Any], keep: Keep, path: tuple[str, ...],
              namespace: str | None) -> _Node:
        def is_null(s: Any) -> bool:
            return s == "null" or (isinstance(s, dict) and s.get("type") == "null")

        if len(schema) == 1:
            return self.compile(schema[0], keep, path, namespace)
        nulls = [i for i, s in enumerate(schema) if is_null(s)]
        if len(schema) != 2 or len(nulls) != 1:
            raise self.unsupported(
                f"Avro union {json.dumps(schema)[:200]} (only [null, T] is supported)", path)
        i = nulls[0]
        return _Optional(i, self.compile(schema[1 - i], keep, path, namespace))

    def record(self, schema: Mapping[str, Any], keep: Keep, path: tuple[str, ...],
               namespace: str | None) -> _Node:
        ns = self.register(schema, namespace)
        name = schema.get("name")
        if isinstance(name, str):
            self.active.add(name)
        fields: list[tuple[str, _Node, Any]] = []
        for f in schema.get("fields", []):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
                raise self.invalid(f"bad record field {f!r}", path)
            sub = (*path, f["name"])
            fields.append((f["name"], self.compile(f["type"], keep, sub, ns), f.get("field-id")))
        if isinstance(name, str):
            self.active.discard(name)
        return _Record(fields, keep(path))

    def array(self, schema: Mapping[str, Any], keep: Keep, path: tuple[str, ...],
              namespace: str | None) -> _Node:
        if "items" not in schema:
            raise self.invalid("array without items", path)
        if schema.get("logicalType") == "map":
            items = schema["items"]
            if isinstance(items, str) and items not in _PRIMITIVES:
                ref = self.named.get(items)
                items = ref[0] if ref else items
            if isinstance(items, dict) and items.get("type") == "record" \
                    and len(items.get("fields", [])) == 2:
                sub_keep = _ALL if keep(path) else _NONE
                rec = self.record(items, sub_keep, path, namespace)
                assert isinstance(rec, _Record)
                if not rec.fields[0][1].nullable:
                    kf, vf = rec.arrow_fields if rec.keep else (
                        pa.field("key", pa.int32(), nullable=False), pa.field("value", pa.null()))
                    rec.arrow_fields = [kf.with_name("key"), vf.with_name("value")]
                    rec.type = pa.struct(rec.arrow_fields)
                    return _Array(rec, pa.map_(rec.arrow_fields[0], rec.arrow_fields[1]),
                                  self.max_items)
        item = self.compile(schema["items"], keep, path, namespace)
        elem = pa.field("element", item.type, nullable=item.nullable,
                        metadata=_field_meta(schema.get("element-id")))
        return _Array(item, pa.list_(elem), self.max_items)

    def avro_map(self, schema: Mapping[str, Any], keep: Keep, path: tuple[str, ...],
                 namespace: str | None) -> _Node:
        if "values" not in schema:
            raise self.invalid("map without values", path)
        sub_keep = _ALL if keep(path) else _NONE
        key = self.primitive("string", {"type": "string"}, sub_keep(path), path)
        value = self.compile(schema["values"], sub_keep, path, namespace)
        rec = _Record([("key", key, schema.get("key-id")),
                       ("value", value, schema.get("value-id"))], True)
        return _Array(rec, pa.map_(rec.arrow_fields[0], rec.arrow_fields[1])
                      if rec.keep else pa.null(), self.max_items)

    def primitive(self, t: str, schema: Mapping[str, Any], keep: bool,
                  path: tuple[str, ...]) -> _Node:
        logical = schema.get("logicalType")
        if t == "null":
            return _Null(keep)
        if t == "boolean":
            return _Boolean(keep)
        if t == "int":
            typ = {"date": pa.date32(), "time-millis": pa.time32("ms")}.get(str(logical),
                                                                          pa.int32())
            return _Varint(typ, keep, 32)
        if t == "long":
            typ = pa.int64()
            if logical == "time-micros":
                typ = pa.time64("us")
            elif isinstance(logical, str) and logical.startswith(("timestamp-",
                                                                  "local-timestamp-")):
                unit = _TS_UNITS.get(logical.rsplit("-", 1)[1])
                if unit is not None:
                    utc = schema.get("adjust-to-utc", not logical.startswith("local-"))
                    typ = pa.timestamp(unit, tz="UTC" if utc is True else None)
            return _Varint(typ, keep, 64)
        if t == "float":
            return _Fixed(pa.float32(), keep, 4, self.ln_ref)
        if t == "double":
            return _Fixed(pa.float64(), keep, 8, self.ln_ref)
        if t == "enum":
            symbols = schema.get("symbols")
            if not isinstance(symbols, list):
                raise self.invalid("enum without symbols", path)
            return _Varint(pa.string(), keep, 64, [str(s) for s in symbols])
        decimal = self.decimal_type(schema, path) if logical == "decimal" else None
        if t == "fixed":
            size = schema.get("size")
            if not isinstance(size, int) or size < 0:
                raise self.invalid("fixed without a size", path)
            if decimal is not None:
                return _Fixed(decimal, keep, size, self.ln_ref, decimal.byte_width)
            return _Fixed(pa.binary(size), keep, size, self.ln_ref)
        if t == "bytes":
            if decimal is not None:
                return _Bytes(decimal, keep, self.ln_ref, decimal.byte_width)
            return _Bytes(pa.binary(), keep, self.ln_ref)
        return _Bytes(pa.string(), keep, self.ln_ref)

    def decimal_type(self, schema: Mapping[str, Any], path: tuple[str, ...]) -> pa.DataType:
        p, s = schema.get("precision"), schema.get("scale", 0)
        if not isinstance(p, int) or not isinstance(s, int) or not 0 < p <= 76:
            raise self.unsupported(f"decimal precision {p!r} / scale {s!r}", path)
        return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)


def _ALL(path: tuple[str, ...]) -> bool:
    return True


def _NONE(path: tuple[str, ...]) -> bool:
    return False


def _keep_for(columns: Sequence[str] | None) -> Keep:
    """Projection: a path is kept if it is a selected column, inside one, or on the way to one."""
    if columns is None:
        return _ALL
    wanted = [tuple(c.split(".")) for c in columns]

    def keep(path: tuple[str, ...]) -> bool:
        return any(w[: len(path)] == path or path[: len(w)] == w for w in wanted)

    return keep


def avro_arrow_schema(name: str, avro_schema: Any, columns: Sequence[str] | None = None
                      ) -> pa.Schema:
    """The Arrow schema :func:`read_avro_tables` produces for an Avro writer schema (JSON)."""
    root = _compile_root(name, avro_schema, _keep_for(columns), [], [0])
    return pa.schema(root.arrow_fields)


def _compile_root(name: str, schema: Any, keep: Keep, ln_ref: list[_Lanes],
                  max_items: list[int]) -> _Record:
    try:
        root = _Compiler(name, ln_ref, max_items).compile(schema, keep, ())
    except RecursionError:
        raise UnsupportedFeature("recursive or too deeply nested Avro schema", file=name) from None
    if not isinstance(root, _Record):
        raise UnsupportedFeature("Avro file whose schema is not a record", file=name,
                                 value=json.dumps(schema)[:200])
    return root


# --------------------------------------------------------------------------- public API


class _Parsed:
    __slots__ = ("blocks", "name", "schema_text")

    def __init__(self, name: str, schema_text: bytes, blocks: list[tuple[int, bytes]]) -> None:
        self.name, self.schema_text, self.blocks = name, schema_text, blocks


def _parse(name: str, data: bytes) -> _Parsed:
    try:
        meta, sync, end = _header(data)
        schema_text = meta.get("avro.schema")
        if schema_text is None:
            raise _Corrupt("header has no avro.schema")
        codec = meta.get("avro.codec", b"null").decode("utf-8", "replace") or "null"
        return _Parsed(name, schema_text, _blocks(name, data, sync, end, codec))
    except _Corrupt as e:
        raise CorruptFile(f"corrupt Avro file: {e}", file=name) from None


def _decode_group(group: list[_Parsed], keep: Keep) -> list[pa.Table]:
    """Decode files sharing one writer schema in lockstep; one table per file."""
    first = group[0]
    try:
        schema = json.loads(first.schema_text)
    except ValueError as e:
        raise CorruptFile(f"avro.schema is not valid JSON: {e}", file=first.name) from None
    ln_ref: list[_Lanes] = []
    payloads = [b for f in group for _, b in f.blocks]
    total_bytes = sum(len(b) for b in payloads)
    root = _compile_root(first.name, schema, keep, ln_ref, [total_bytes])
    cnt = np.array([c for f in group for c, _ in f.blocks], np.int64)
    sizes = np.array([len(b) for b in payloads], np.int64)
    if root.min_width > 0 and (cnt * root.min_width > sizes).any():
        raise _Corrupt("block record count exceeds what its bytes can hold")
    starts = np.zeros(len(payloads), np.int64)
    if len(payloads) > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    rowbase = np.zeros(len(cnt), np.int64)
    if len(cnt) > 1:
        np.cumsum(cnt[:-1], out=rowbase[1:])
    order = np.argsort(-cnt, kind="stable")  # lanes with most records first: active = prefix
    buf = np.frombuffer(b"".join(payloads), np.uint8)
    ln = _Lanes(buf, starts[order].copy())
    ln_ref.append(ln)
    base = rowbase[order]
    sorted_cnt = cnt[order]
    neg_sorted = -sorted_cnt  # ascending: lanes with more than r records are a prefix
    for r in range(int(cnt.max()) if len(cnt) else 0):
        k = int(np.searchsorted(neg_sorted, -r, side="left"))
        root.read(ln, slice(0, k), base[:k] + r)
    ends = (starts + sizes)[order]
    bad = np.nonzero(ln.pos != ends)[0]
    if bad.size:
        raise _Corrupt(f"block {int(order[bad[0]])}: records do not fill the block exactly "
                       f"(decoded {int(ln.pos[bad[0]] - starts[order][bad[0]])} bytes of "
                       f"{int(sizes[order][bad[0]])}; block count mismatch)")
    n = int(cnt.sum())
    columns = pa.RecordBatch.from_struct_array(root.build(n, None, None))  # keeps n rows
    table = pa.Table.from_batches([columns], schema=pa.schema(root.arrow_fields))
    if len(group) == 1:
        return [table]
    out = []
    row = 0
    for f in group:
        rows = sum(c for c, _ in f.blocks)
        part = table.slice(row, rows)
        # copy each file's rows into buffers of its own: a slice would keep (and pickle) the
        # whole batch's buffers, e.g. when one manifest's table is cached or sent to a worker
        out.append(pa.Table.from_arrays(
            [pa.concat_arrays(col.chunks) for col in part.columns], schema=part.schema))
        row += rows
    return out


def read_avro_tables(files: Sequence[tuple[str, bytes]], *,
                     columns: Sequence[str] | None = None, threads: int = 1,
                     files_per_call: int = 1) -> list[pa.Table]:
    """Decode many container files at once (batched lockstep); one Arrow table per file.

    ``columns`` projects dotted field paths (``"status"``, ``"data_file.partition"``,
    ``"partitions.contains_null"``): selected fields keep all their children, the structs on the
    way keep only what was selected, and the rest is skipped without building Arrow data. Paths a
    file's schema lacks are ignored (manifests of older format versions lack newer fields).
    ``threads`` > 1 decompresses the files' blocks in that many threads (the codecs release
    the GIL), and so decode the compiled and native readers; the lockstep decoding itself is
    one thread. This is CPU work: more threads than the machine's cores only contend, so
    ``threads`` is capped at the cores this process may use.
    """
    threads = min(threads, _cores())
    if threads > 1 and len(files) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
            parsed = list(pool.map(lambda f: _parse(f[0], f[1]), files))
    else:
        parsed = [_parse(name, data) for name, data in files]
    keep = _keep_for(columns)
    groups: dict[bytes, list[int]] = {}
    for i, p in enumerate(parsed):
        groups.setdefault(p.schema_text, []).append(i)
    out: list[pa.Table | None] = [None] * len(parsed)
    for idx in groups.values():
        group = [parsed[i] for i in idx]
        tables = _compiled(group, columns, keep, threads, files_per_call)
        if tables is None:
            tables = _native(group, [files[i] for i in idx], columns, threads)
        if tables is None:
            tables = _decode_group_blaming(group, keep)
        for i, table in zip(idx, tables, strict=True):
            out[i] = table
    return [t for t in out if t is not None]


def _cores() -> int:
    """CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


#: Decompressed bytes from which a group is worth loading the compiled decoder (importing numba
#: and loading its cached machine code take ~0.8 s once per process, compiling it the first
#: time ~3 s; 16 MiB is ~40 manifests of 1,000 entries with full metrics); once loaded, it
#: decodes every group.
COMPILED_MIN_BYTES = 16 << 20


def expect_decoding(stored_bytes: int) -> None:
    """A caller about to decode ``stored_bytes`` of Avro files in several small batches (e.g.
    planning's groups of manifests) loads the compiled decoder now when the whole is worth it:
    each batch alone may be under :data:`COMPILED_MIN_BYTES` (deflate shrinks manifests
    ~2.5x)."""
    if 2 * stored_bytes >= COMPILED_MIN_BYTES and not avro_compiled.loaded():
        avro_compiled.available()


def _compiled(group: list[_Parsed], columns: Sequence[str] | None, keep: Keep,
              threads: int, files_per_call: int = 1) -> list[pa.Table] | None:
    """The group decoded by :mod:`icenb.io.avro_compiled` (same tables), or None."""
    if not avro_compiled.loaded():
        size = sum(len(b) for f in group for _, b in f.blocks)
        if size < COMPILED_MIN_BYTES or not avro_compiled.available():
            return None
    elif not avro_compiled.available():
        return None
    try:
        target = avro_arrow_schema(group[0].name, json.loads(group[0].schema_text), columns)
    except (ValueError, IcebergError):
        return None
    return avro_compiled.decode_files([f.blocks for f in group], group[0].schema_text, keep,
                                      None if columns is None else tuple(columns), target,
                                      threads, files_per_call)


#: Groups of at most this many files (and more than one block in all) go to the native
#: reader when polars is installed: lockstep pays numpy calls per record step, which a plan
#: opening a few manifests feels. With many files lockstep amortizes them and wins, unless
#: the projection keeps maps (column metrics), which the native reader builds faster.
NATIVE_MAX_FILES = 16


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t):
        return _has_map(t.value_type)
    return False


def _native(group: list[_Parsed], files: Sequence[tuple[str, bytes]],
            columns: Sequence[str] | None, threads: int) -> list[pa.Table] | None:
    """The group decoded by :mod:`icenb.io.avro_native` (same tables), or None."""
    if sum(len(p.blocks) for p in group) <= len(group) or not avro_native.available():
        return None  # one block per file: the row-wise path or lockstep are as quick
    try:
        schema = json.loads(group[0].schema_text)
        target = avro_arrow_schema(group[0].name, schema, columns)
    except (ValueError, IcebergError):
        return None
    if len(group) > NATIVE_MAX_FILES and not any(_has_map(f.type) for f in target):
        return None
    return avro_native.read_tables(files, target, threads=threads)


#: Below this many blocks (lanes) in a group, files of a plain schema are decoded record by
#: record with fastavro: lockstep costs numpy calls per record *step*, so a file of one block
#: with 1,000 records (a manifest list of 1,000 manifests) is cheaper row-wise.
ROWWISE_MAX_LANES = 8


def _rowwise(group: list[_Parsed], keep: Keep) -> list[pa.Table] | None:
    """The group decoded with fastavro when that is cheaper and exact, else None.

    Only schemas without logical types or Avro maps (a manifest list's): fastavro's values
    then convert to exactly the Arrow types of the lockstep decoder. Anything fastavro rejects
    goes to the lockstep decoder, which names what is wrong.
    """
    lanes = sum(len(f.blocks) for f in group)
    records = sum(c for f in group for c, _ in f.blocks)
    text = group[0].schema_text
    if lanes >= ROWWISE_MAX_LANES or records <= 4 * lanes or b"logicalType" in text \
            or b'"map"' in text:
        return None
    import io

    import fastavro

    try:
        schema = json.loads(text)
        arrow = pa.schema(_compile_root(group[0].name, schema, keep, [], [0]).arrow_fields)
        parsed = fastavro.parse_schema(schema)
        read = fastavro.schemaless_reader
        out = []
        for f in group:
            rows: list[Any] = []
            for count, payload in f.blocks:
                stream = io.BytesIO(payload)
                rows.extend(read(stream, parsed, None) for _ in range(count))
                if stream.tell() != len(payload):  # records must fill the block exactly
                    return None
            out.append(pa.Table.from_pylist(rows, schema=arrow))
        return out
    except Exception:  # malformed: let the lockstep decoder say what is wrong
        return None


def _decode_group_blaming(group: list[_Parsed], keep: Keep) -> list[pa.Table]:
    """Decode a group; on malformed data, find and name the file at fault."""
    rowwise = _rowwise(group, keep)
    if rowwise is not None:
        return rowwise
    try:
        return _decode_group(group, keep)
    except (_Corrupt, IndexError, ValueError, OverflowError, pa.ArrowException) as e:
        if isinstance(e, IcebergError):
            raise
        if len(group) > 1:
            for f in group:
                _decode_group_blaming([f], keep)
        detail = str(e)
        if isinstance(e, IndexError):
            detail = "a record runs past the end of the data (truncated, or block count mismatch)"
        raise CorruptFile(f"corrupt Avro data: {detail}",
                          file=", ".join(f.name for f in group)) from None


def read_avro(name: str, data: bytes, *, columns: Sequence[str] | None = None) -> pa.Table:
    """Decode one container file into an Arrow table (see :func:`read_avro_tables`)."""
    return read_avro_tables([(name, data)], columns=columns)[0]


def read_avro_records(name: str, data: bytes, *, max_records: int | None = None
                      ) -> list[dict[str, Any]] | None:
    """One container file's records as dicts (fastavro, record by record), or None when that
    is not exact or not cheaper: more than ``max_records`` records, logical types other than
    Iceberg's ``map`` arrays (fastavro would convert them), real Avro maps, or data fastavro
    rejects or that does not fill its blocks exactly. The container itself (header, codec,
    sync markers) is parsed by icenb's reader, which raises CorruptFile naming ``name``; on
    None, decode with :func:`read_avro`, which names what is wrong."""
    parsed = _parse(name, data)
    if max_records is not None and sum(c for c, _ in parsed.blocks) > max_records:
        return None
    text = parsed.schema_text
    if b'"type":"map"' in text.replace(b" ", b"") or (
            text.count(b"logicalType") != text.replace(b" ", b"").count(
                b'"logicalType":"map"')):
        return None
    import io

    import fastavro

    try:
        schema = fastavro.parse_schema(json.loads(text))
        read = fastavro.schemaless_reader
        rows: list[dict[str, Any]] = []
        for count, payload in parsed.blocks:
            stream = io.BytesIO(payload)
            rows.extend(read(stream, schema, None) for _ in range(count))  # type: ignore[misc]
            if stream.tell() != len(payload):  # records must fill the block exactly
                return None
        return rows
    except Exception:  # malformed: the columnar decoder says what is wrong
        return None
