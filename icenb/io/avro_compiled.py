"""Decode Avro container blocks with a compiled (numba) interpreter, into icenb's Arrow shapes.

DESIGN, "Metadata at columnar speed": a plan that must look at every manifest's column metrics
decodes millions of map items. icenb's lockstep numpy decoder (:mod:`icenb.io.avro`) pays numpy
calls per record step and polars' reader (:mod:`icenb.io.avro_native`) builds generic columns
that must then be conformed; both are slower than Iceberg Java's reader. Here the writer schema
(Avro 1.11 "Binary Encoding") is compiled once into a small program of opcodes, and one
numba-compiled loop runs it over a file's decompressed blocks, appending every kept value to a
flat int64 column (bytes and strings as start/length into the block data; a count per array or
map; a validity flag per ``[null, T]`` union). Arrow arrays are then assembled from those
columns with the exact types of :func:`icenb.io.avro.avro_arrow_schema`, so the tables equal
the lockstep decoder's.

The loop never raises: malformed data (a value past the end of its block, records that do not
fill a block, a bad union branch or negative length) returns a status, and the caller decodes
with the lockstep decoder, which names the file and field at fault. Schemas this program does
not cover (decimals, enums, unions other than with null) also fall back. The kernel releases the
GIL, so files decode in parallel threads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icenb.reprs import safe_repr

__all__ = ["available", "decode_files", "loaded", "register_named"]

IntArray = npt.NDArray[np.int64]
Keep = Callable[[tuple[str, ...]], bool]

# opcodes; an instruction is a row of 6 int64: (op, a, b, c, d, e)
_HALT, _LONG, _FLOAT, _DOUBLE, _BOOL, _BYTES, _FIXED, _OPT, _BLOCKS, _END_BLOCKS = range(10)
_WIDTH = 6
_MAX_DEPTH = 64

#: Environment switch (tests, comparisons): set to 1 to never use the compiled decoder.
DISABLE_ENV = "ICENB_AVRO_NO_COMPILE"

_kernels: tuple[Any, Any, Any] | None = None
_import_failed = False


def available() -> bool:
    """Whether numba is importable (and the decoder not disabled by :data:`DISABLE_ENV`)."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return False
    return _load() is not None


def loaded() -> bool:
    """Whether the kernels are already loaded in this process (using them costs nothing more)."""
    return _kernels is not None


def _load() -> tuple[Any, Any, Any] | None:
    """The compiled (decode, gather, decimal) kernels; compiled on first use, cached on disk
    by numba."""
    global _kernels, _import_failed
    if _kernels is not None or _import_failed:
        return _kernels
    try:
        import numba
    except ImportError:
        _import_failed = True
        return None
    jit = numba.njit(nogil=True, cache=True)
    global _zigzag
    _zigzag = jit(_zigzag)  # the decode kernel calls it: a compiled function by then
    _kernels = (jit(_decode_kernel), jit(_gather_kernel), jit(_decimal_kernel))
    return _kernels


# --------------------------------------------------------------------------- the kernels
# Plain Python functions, compiled by numba in _load(). Kept free of Python objects.


def _zigzag(data: Any, pos: int, end: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """The zigzag varint (Avro int/long) at ``pos`` and the position after it; position -1
    if it runs past ``end`` or over 10 bytes."""
    shift = 0
    acc = np.uint64(0)
    while True:
        if pos >= end or shift > 63:
            return 0, -1
        byte = data[pos]
        pos += 1
        acc |= np.uint64(byte & 0x7F) << np.uint64(shift)
        if byte < 0x80:
            break
        shift += 7
    return np.int64(acc >> np.uint64(1)) ^ -np.int64(acc & np.uint64(1)), pos


def _decode_kernel(data: Any, block_starts: Any, block_ends: Any, block_counts: Any,
                   prog: Any, pads: Any, out: Any, base: Any, cap: Any, lens: Any,
                   store: bool, err: Any) -> int:  # pragma: no cover - runs compiled
    """Run ``prog`` once per record of every block. 0: done; -1: malformed; -2: a column's
    capacity is too small (``lens`` then holds counts only up to the record that overflowed)."""
    remaining = np.zeros(_MAX_DEPTH, np.int64)
    totals = np.zeros(_MAX_DEPTH, np.int64)
    for b in range(block_starts.shape[0]):
        pos = block_starts[b]
        end = block_ends[b]
        for _r in range(block_counts[b]):
            pc = 0
            depth = 0
            while True:
                op = prog[pc, 0]
                if op == 0:  # HALT
                    break
                if op == 1:  # LONG (int, long, with their logical types)
                    value, pos = _zigzag(data, pos, end)
                    if pos < 0:
                        err[0] = b
                        return -1
                    col = prog[pc, 1]
                    if col >= 0:
                        if store:
                            if lens[col] >= cap[col]:
                                return -2
                            out[base[col] + lens[col]] = value
                        lens[col] += 1
                    pc += 1
                elif op == 2 or op == 3 or op == 4 or op == 6:  # FLOAT, DOUBLE, BOOL, FIXED
                    width = 4 if op == 2 else 8 if op == 3 else 1 if op == 4 else prog[pc, 2]
                    if pos + width > end:
                        err[0] = b
                        err[1] = pos
                        return -1
                    col = prog[pc, 1]
                    if col >= 0:
                        if store:
                            if lens[col] >= cap[col]:
                                return -2
                            if op == 6:
                                value = pos
                            else:
                                value = np.int64(0)
                                for k in range(width - 1, -1, -1):
                                    value = (value << 8) | np.int64(data[pos + k])
                                if op == 4 and value > 1:
                                    err[0] = b
                                    err[1] = pos
                                    return -1
                            out[base[col] + lens[col]] = value
                        lens[col] += 1
                    pos += width
                    pc += 1
                elif op == 5:  # BYTES / STRING: a zigzag long length, then the bytes
                    size, pos = _zigzag(data, pos, end)
                    if pos < 0 or size < 0 or pos + size > end:
                        err[0] = b
                        err[1] = pos
                        return -1
                    col = prog[pc, 1]
                    if col >= 0:
                        col2 = prog[pc, 2]
                        if store:
                            if lens[col] >= cap[col] or lens[col2] >= cap[col2]:
                                return -2
                            out[base[col] + lens[col]] = pos
                            out[base[col2] + lens[col2]] = size
                        lens[col] += 1
                        lens[col2] += 1
                    pos += size
                    pc += 1
                elif op == 7:  # OPT: union [null, T]; a: validity col, b: null branch,
                    # c: pc after the child, d/e: pad columns (slice of pads) when null
                    if pos >= end:
                        err[0] = b
                        err[1] = pos
                        return -1
                    branch = data[pos]
                    pos += 1
                    if branch != 0 and branch != 2:  # zigzag 0 / 1
                        err[0] = b
                        err[1] = pos - 1
                        return -1
                    is_null = (branch >> 1) == prog[pc, 2]
                    col = prog[pc, 1]
                    if col >= 0:
                        if store:
                            if lens[col] >= cap[col]:
                                return -2
                            out[base[col] + lens[col]] = 0 if is_null else 1
                        lens[col] += 1
                    if is_null:
                        for k in range(prog[pc, 4], prog[pc, 4] + prog[pc, 5]):
                            pcol = pads[k]
                            if store:
                                if lens[pcol] >= cap[pcol]:
                                    return -2
                                out[base[pcol] + lens[pcol]] = 0
                            lens[pcol] += 1
                        pc = prog[pc, 3]
                    else:
                        pc += 1
                elif op == 8 or op == 9:  # BLOCKS (a: count col, b: pc after END_BLOCKS)
                    # END_BLOCKS (a: count col, b: pc of the first body instruction)
                    if op == 9:
                        remaining[depth - 1] -= 1
                        if remaining[depth - 1] > 0:
                            pc = prog[pc, 2]
                            continue
                    # the next block count of this array / map
                    count, pos = _zigzag(data, pos, end)
                    if pos >= 0 and count < 0:  # then the block's byte size follows
                        count = -count
                        _, pos = _zigzag(data, pos, end)
                    if pos < 0:
                        err[0] = b
                        return -1
                    if op == 8:
                        if depth >= _MAX_DEPTH:
                            err[0] = b
                            err[1] = pos
                            return -1
                        depth += 1
                        totals[depth - 1] = 0
                    if count > end - pos + 1:  # more items than bytes left: not a manifest
                        err[0] = b  # shape (zero-width items); the lockstep decoder decides
                        err[1] = pos
                        return -1
                    if count == 0:
                        col = prog[pc, 1]
                        if col >= 0:
                            if store:
                                if lens[col] >= cap[col]:
                                    return -2
                                out[base[col] + lens[col]] = totals[depth - 1]
                            lens[col] += 1
                        depth -= 1
                        pc = prog[pc, 2] if op == 8 else pc + 1
                    else:
                        totals[depth - 1] += count
                        remaining[depth - 1] = count
                        pc = pc + 1 if op == 8 else prog[pc, 2]
                else:
                    err[0] = b
                    err[1] = pos
                    return -1
        if pos != end:  # records must fill the block exactly
            err[0] = b
            err[1] = pos
            return -1
    return 0


def _decimal_kernel(data: Any, starts: Any, sizes: Any, width: int, dest: Any
                    ) -> bool:  # pragma: no cover - runs compiled
    """Big-endian two's complement values (Avro decimal) to little-endian ``width``-byte
    integers (Arrow decimal128/256), sign-extended; False if one is wider than ``width``."""
    for i in range(starts.shape[0]):
        s = starts[i]
        n = sizes[i]
        if n > width:
            return False
        fill = 0
        if n > 0 and data[s] >= 0x80:
            fill = 0xFF
        o = i * width
        for k in range(width):
            dest[o + k] = data[s + n - 1 - k] if k < n else fill
    return True


def _gather_kernel(data: Any, starts: Any, sizes: Any, offsets: Any, dest: Any
                   ) -> None:  # pragma: no cover - runs compiled
    """Copy ``data[starts[i]:starts[i]+sizes[i]]`` to ``dest[offsets[i]:]`` for every i."""
    for i in range(starts.shape[0]):
        s = starts[i]
        o = offsets[i]
        for k in range(sizes[i]):
            dest[o + k] = data[s + k]


# --------------------------------------------------------------------------- compiling schemas


class _Unsupported(Exception):
    """A schema the compiled program does not cover: the caller falls back."""


@safe_repr
@dataclass
class _Spec:
    """How one schema node's Arrow array is assembled from the decoded columns."""

    kind: str  # long, float, double, bool, bytes, fixed, null, opt, record, array, map,
    # logical_map, enum, decimal
    col: int = -1  # value col (start col for bytes/fixed); validity col for opt; count col
    col2: int = -1  # length col for bytes
    width: int = 0  # fixed size
    children: list[_Spec] = field(default_factory=list)
    keep: bool = True
    symbols: tuple[str, ...] = ()  # enum


def register_named(named: dict[str, Any], schema: Mapping[str, Any], namespace: str | None
                   ) -> str | None:
    """Record a named schema (record, enum, fixed) under its full and short name; returns the
    namespace its own fields resolve names in (Avro 1.11 "Names")."""
    name = schema.get("name")
    if not isinstance(name, str):
        return namespace
    ns = schema.get("namespace", namespace)
    if "." in name:
        ns = name.rsplit(".", 1)[0]
        full = name
    else:
        full = f"{ns}.{name}" if ns else name
    named[full] = (schema, ns)
    named.setdefault(name, (schema, ns))
    return ns if isinstance(ns, str) else None


class _Program:
    """Compiles an Avro writer schema into the kernel's program and an assembly tree."""

    def __init__(self) -> None:
        self.rows: list[list[int]] = []
        self.pads: list[int] = []
        self.ncols = 0
        self.max_fixed = 0
        self.named: dict[str, Any] = {}

    def col(self, keep: bool) -> int:
        if not keep:
            return -1
        self.ncols += 1
        return self.ncols - 1

    def emit(self, *row: int) -> int:
        self.rows.append([*row, *([0] * (_WIDTH - len(row)))])
        return len(self.rows) - 1

    def register(self, schema: Mapping[str, Any], namespace: str | None) -> str | None:
        return register_named(self.named, schema, namespace)

    def compile(self, schema: Any, keep: Keep, path: tuple[str, ...],
                namespace: str | None) -> _Spec:
        if isinstance(schema, list):
            return self.union(schema, keep, path, namespace)
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return self.primitive(schema, {"type": schema}, keep(path))
            ref = self.named.get(f"{namespace}.{schema}" if namespace else schema) \
                or self.named.get(schema)
            if ref is None:
                raise _Unsupported(schema)
            return self.compile(ref[0], keep, path, ref[1])
        if not isinstance(schema, dict):
            raise _Unsupported(repr(schema))
        t = schema.get("type")
        if isinstance(t, (dict, list)):
            return self.compile(t, keep, path, namespace)
        if t in ("record", "error"):
            return self.record(schema, keep, path, namespace)
        if t == "array":
            return self.array(schema, keep, path, namespace)
        if t == "map":
            return self.avro_map(schema, keep, path, namespace)
        if t in ("fixed", "enum"):
            self.register(schema, namespace)
        if isinstance(t, str) and (t in _PRIMITIVES or t in ("fixed", "enum")):
            return self.primitive(str(t), schema, keep(path))
        if isinstance(t, str):
            return self.compile(t, keep, path, namespace)
        raise _Unsupported(repr(schema))

    def union(self, schema: list[Any], keep: Keep, path: tuple[str, ...],
              namespace: str | None) -> _Spec:
        if len(schema) == 1:
            return self.compile(schema[0], keep, path, namespace)
        nulls = [i for i, s in enumerate(schema)
                 if s == "null" or (isinstance(s, dict) and s.get("type") == "null")]
        if len(schema) != 2 or len(nulls) != 1:
            raise _Unsupported("union")
        kept = keep(path)
        at = self.emit(_OPT, self.col(kept), nulls[0])
        child = self.compile(schema[1 - nulls[0]], keep, path, namespace)
        pads = _pad_columns(child) if kept else []
        self.rows[at][3] = len(self.rows)
        self.rows[at][4] = len(self.pads)
        self.rows[at][5] = len(pads)
        self.pads.extend(pads)
        return _Spec("opt", self.rows[at][1], children=[child], keep=kept)

    def record(self, schema: Mapping[str, Any], keep: Keep, path: tuple[str, ...],
               namespace: str | None) -> _Spec:
        ns = self.register(schema, namespace)
        children = []
        for f in schema.get("fields", []):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
                raise _Unsupported("bad field")
            children.append(self.compile(f["type"], keep, (*path, f["name"]), ns))
        return _Spec("record", children=children, keep=keep(path))

    def blocks(self, keep: bool, body: Callable[[], list[_Spec]], kind: str) -> _Spec:
        count = self.col(keep)
        at = self.emit(_BLOCKS, count)
        children = body()
        self.emit(_END_BLOCKS, count, at + 1)
        self.rows[at][2] = len(self.rows)
        return _Spec(kind, count, children=children, keep=keep)

    def array(self, schema: Mapping[str, Any], keep: Keep, path: tuple[str, ...],
              namespace: str | None) -> _Spec:
        if "items" not in schema:
            raise _Unsupported("array without items")
        kept = keep(path)
        if schema.get("logicalType") == "map":
            items = schema["items"]
            if isinstance(items, str) and items not in _PRIMITIVES:
                ref = self.named.get(items)
                items = ref[0] if ref else items
            if isinstance(items, dict) and items.get("type") == "record" \
                    and len(items.get("fields", [])) == 2:
                sub: Keep = (lambda p: True) if kept else (lambda p: False)
                spec = self.blocks(kept, lambda: [self.record(items, sub, path, namespace)],
                                   "array")
                key = spec.children[0].children[0]
                if key.kind != "opt":  # a map<K, V> in Arrow (else a list of records)
                    spec.kind = "logical_map"
                return spec
        return self.blocks(kept, lambda: [self.compile(schema["items"], keep, path, namespace)],
                           "array")

    def avro_map(self, schema: Mapping[str, Any], keep: Keep, path: tuple[str, ...],
                 namespace: str | None) -> _Spec:
        if "values" not in schema:
            raise _Unsupported("map without values")
        kept = keep(path)
        sub: Keep = (lambda p: True) if kept else (lambda p: False)
        return self.blocks(kept, lambda: [
            self.primitive("string", {"type": "string"}, kept),
            self.compile(schema["values"], sub, path, namespace)], "map")

    def primitive(self, t: str, schema: Mapping[str, Any], keep: bool) -> _Spec:
        if schema.get("logicalType") == "decimal" and t in ("bytes", "fixed"):
            spec = self.primitive(t, {k: v for k, v in schema.items() if k != "logicalType"},
                                  keep)
            spec.kind = "decimal"
            return spec
        if t == "enum":
            symbols = schema.get("symbols")
            if not isinstance(symbols, list):
                raise _Unsupported("enum symbols")
            col = self.col(keep)
            self.emit(_LONG, col)
            return _Spec("enum", col, keep=keep, symbols=tuple(str(x) for x in symbols))
        if t == "null":
            return _Spec("null", keep=keep)
        if t in ("int", "long"):
            col = self.col(keep)
            self.emit(_LONG, col)
            return _Spec("long", col, keep=keep)
        if t in ("float", "double", "boolean"):
            op = {"float": _FLOAT, "double": _DOUBLE, "boolean": _BOOL}[t]
            self.emit(op, self.col(keep))
            return _Spec({"boolean": "bool"}.get(t, t), self.rows[-1][1], keep=keep)
        if t == "fixed":
            size = schema.get("size")
            if not isinstance(size, int) or size < 0:
                raise _Unsupported("fixed size")
            self.emit(_FIXED, self.col(keep), size)
            self.max_fixed = max(self.max_fixed, size)
            return _Spec("fixed", self.rows[-1][1], width=size, keep=keep)
        if t in ("bytes", "string"):
            start = self.col(keep)
            self.emit(_BYTES, start, self.col(keep))
            return _Spec("bytes", start, self.rows[-1][2], keep=keep)
        raise _Unsupported(t)


_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes",
                         "string"})


def _pad_columns(spec: _Spec) -> list[int]:
    """Columns that get a placeholder when an enclosing union is null: every kept value,
    validity and count column reachable without entering an array or map (those hold no
    items for a null parent)."""
    if not spec.keep:
        return []
    if spec.kind == "record":
        return [c for child in spec.children for c in _pad_columns(child)]
    if spec.kind == "null":
        return []
    if spec.kind == "opt":
        return [spec.col, *_pad_columns(spec.children[0])]
    if spec.col2 >= 0:  # bytes, string, decimal on bytes: start and length
        return [spec.col, spec.col2]
    return [spec.col]  # value columns and array/map counts


@safe_repr
@dataclass
class _Compiled:
    prog: IntArray
    pads: IntArray
    ncols: int
    root: _Spec
    max_fixed: int  # widest fixed value: the data gets that many zero bytes appended, so a
    # placeholder start (0) of a null fixed value gathers within the buffer


_programs: dict[tuple[bytes, Any], _Compiled | None] = {}


def _compile(schema_text: bytes, keep: Keep, keep_key: Any) -> _Compiled | None:
    key = (schema_text, keep_key)
    if key in _programs:
        return _programs[key]
    compiled: _Compiled | None
    try:
        p = _Program()
        root = p.compile(json.loads(schema_text), keep, (), None)
        if root.kind != "record":
            raise _Unsupported("root")
        p.emit(_HALT)
        compiled = _Compiled(np.array(p.rows, np.int64).reshape(-1, _WIDTH),
                             np.array(p.pads or [0], np.int64), p.ncols, root, p.max_fixed)
    except (_Unsupported, ValueError, RecursionError, TypeError):
        compiled = None
    if len(_programs) > 256:
        _programs.clear()
    _programs[key] = compiled
    return compiled


# --------------------------------------------------------------------------- decoding


def decode_files(blocks_per_file: Sequence[Sequence[tuple[int, bytes]]], schema_text: bytes,
                 keep: Keep, keep_key: Any, target: pa.Schema, threads: int = 1,
                 files_per_call: int = 1) -> list[pa.Table] | None:
    """Each file's decompressed blocks decoded to a table of schema ``target``, or None when
    the schema is not covered, numba is missing, or any file is malformed (the caller then
    decodes with the lockstep decoder, which reports what is wrong). ``threads`` runs of the
    kernel at a time (they release the GIL). With ``files_per_call`` 1 each table owns its
    buffers; with more, that many files decode in one run (less Python work per file) and
    their tables are slices of its buffers (for callers that copy what they keep)."""
    kernels = _load() if available() else None
    if kernels is None:
        return None
    compiled = _compile(schema_text, keep, keep_key)
    if compiled is None:
        return None
    try:
        return _decode_batch(kernels, compiled, blocks_per_file, target, threads,
                             files_per_call)
    except (_Unsupported, pa.ArrowException, ValueError, TypeError, IndexError):
        return None


def _decode_batch(kernels: tuple[Any, Any, Any], c: _Compiled,
                  blocks_per_file: Sequence[Sequence[tuple[int, bytes]]], target: pa.Schema,
                  threads: int, files_per_call: int = 1) -> list[pa.Table] | None:
    # File by file: a file's flat buffers are small enough for the allocator to reuse (one
    # buffer for a whole batch of manifests is page-faulted anew on every call, which costs
    # more than the Python calls it saves).
    decode, gather, decimal = kernels
    kept = [s for s in c.root.children if s.keep]
    if len(kept) != len(target):
        raise _Unsupported("projection mismatch")

    def one(blocks: Sequence[tuple[int, bytes]]) -> pa.Table | None:
        payloads = [p for _, p in blocks]
        data = np.frombuffer(b"".join([*payloads, bytes(c.max_fixed)]), np.uint8)
        sizes = np.array([len(p) for p in payloads], np.int64)
        ends = np.cumsum(sizes) if len(sizes) else np.zeros(0, np.int64)
        counts = np.array([n for n, _ in blocks], np.int64)
        done = _decode_run(decode, data, ends - sizes, ends, counts, c)
        if done is None:
            return None
        rows = int(counts.sum())
        cols = _Columns(data, *done, gather, decimal)
        arrays = [_build(spec, f.type, cols, rows, None)
                  for spec, f in zip(kept, target, strict=True)]
        return pa.Table.from_arrays(arrays, schema=target) if arrays else \
            pa.table({"_": pa.nulls(rows)}).select([])

    calls: list[Sequence[tuple[int, bytes]]] = [list(b) for b in blocks_per_file]
    if files_per_call > 1:  # several files per kernel run, each file a slice of its table
        calls = [[blk for b in blocks_per_file[i:i + files_per_call] for blk in b]
                 for i in range(0, len(blocks_per_file), files_per_call)]
    if threads > 1 and len(calls) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(calls))) as pool:
            tables = list(pool.map(one, calls))
    else:
        tables = [one(b) for b in calls]
    if any(t is None for t in tables):
        return None
    if files_per_call <= 1:
        return [t for t in tables if t is not None]
    out: list[pa.Table] = []
    for i, t in enumerate(tables):
        assert t is not None
        start = 0
        for b in blocks_per_file[i * files_per_call:(i + 1) * files_per_call]:
            rows = sum(n for n, _ in b)
            out.append(t.slice(start, rows))
            start += rows
    return out


def _decode_run(decode: Any, data: Any, starts: IntArray, ends: IntArray, counts: IntArray,
                c: _Compiled) -> tuple[IntArray, IntArray, IntArray] | None:
    """Decode some blocks into one flat int64 buffer holding every column at ``base[col]``;
    (buffer, base, lengths), or None when the data is malformed."""
    err = np.zeros(2, np.int64)
    lens = np.zeros(max(c.ncols, 1), np.int64)
    base = np.zeros_like(lens)
    out = np.zeros(0, np.int64)
    rows = int(counts.sum())
    if not rows or not c.ncols:
        status = decode(data, starts, ends, counts, c.prog, c.pads, out, base, base, lens,
                        False, err)
        return (out, base, lens) if status == 0 else None
    # capacities: what the first record needs, scaled to all records (manifest entries are
    # alike); if a column still overflows, an exact counting pass
    probe = np.zeros_like(lens)
    decode(data, starts[:1], ends[:1], np.ones(1, np.int64), c.prog, c.pads, out, base, base,
           probe, False, err)  # status ignored: the probe stops mid-block
    cap = probe * rows + probe * rows // 4 + 16
    for _ in range(2):
        base = np.zeros_like(cap)
        np.cumsum(cap[:-1], out=base[1:])
        out = _pool_array(int(cap.sum()), np.int64)
        lens[:] = 0
        status = decode(data, starts, ends, counts, c.prog, c.pads, out, base, cap, lens,
                        True, err)
        if status != -2:
            return (out, base, lens) if status == 0 else None
        lens[:] = 0
        if decode(data, starts, ends, counts, c.prog, c.pads, out, base, base, lens, False,
                  err) != 0:
            return None
        cap = lens.copy()
    return None


def _pool_array(n: int, dtype: Any) -> npt.NDArray[Any]:
    """An uninitialized numpy array in Arrow's memory pool: a decoded batch's large buffers are
    returned to the system when freed (the C heap keeps them, fragmented across threads)."""
    buf = pa.allocate_buffer(n * np.dtype(dtype).itemsize)
    return np.frombuffer(buf, dtype)


class _Columns:
    """The decoded flat columns of one file."""

    def __init__(self, data: Any, out: IntArray, base: IntArray, lens: IntArray,
                 gather: Any, decimal: Any) -> None:
        self.data, self.out, self.base, self.lens = data, out, base, lens
        self.gather, self.decimal = gather, decimal

    def get(self, col: int) -> IntArray:
        b = int(self.base[col])
        return self.out[b: b + int(self.lens[col])]


def _bitmap(valid: npt.NDArray[np.bool_] | None) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _mask(valid: npt.NDArray[np.bool_] | None) -> pa.Array | None:
    if valid is None or valid.all():
        return None
    return pa.array(~valid)


def _build(spec: _Spec, t: pa.DataType, cols: _Columns, n: int,
           valid: npt.NDArray[np.bool_] | None) -> pa.Array:
    """The Arrow array of ``spec``'s ``n`` values, typed ``t``, null where not ``valid``."""
    kind = spec.kind
    if kind == "opt":
        v = cols.get(spec.col).astype(np.bool_)
        if len(v) != n:
            raise _Unsupported("validity length")
        return _build(spec.children[0], t, cols, n, v if valid is None else v & valid)
    if kind == "null":
        return pa.nulls(n, t)
    if kind == "record":
        kept = [s for s in spec.children if s.keep]
        children = [_build(s, f.type, cols, n, None)
                    for s, f in zip(kept, list(t), strict=True)]
        if not children:  # struct<> (an unpartitioned spec's partition): only a length
            return pa.Array.from_buffers(t, n, [_bitmap(valid)], children=[])
        return pa.StructArray.from_arrays(children, fields=list(t), mask=_mask(valid))
    if kind in ("array", "map", "logical_map"):
        counts = cols.get(spec.col)
        if len(counts) != n:
            raise _Unsupported("count length")
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        if offsets[-1] >= 2**31:
            raise _Unsupported("more than 2**31 items")
        offsets = offsets.astype(np.int32)
        items = int(offsets[-1])
        off = pa.array(offsets)
        if kind == "array":
            elem = spec.children[0]
            values = _build(elem, t.value_type, cols, items, None)
            return pa.ListArray.from_arrays(off, values, type=t, mask=_mask(valid))
        if kind == "map":
            key_spec, value_spec = spec.children
        else:
            key_spec, value_spec = spec.children[0].children
        keys = _build(key_spec, t.key_type, cols, items, None)
        values = _build(value_spec, t.item_type, cols, items, None)
        return pa.MapArray.from_arrays(off, keys, values, type=t, mask=_mask(valid))
    values = cols.get(spec.col)
    if len(values) != n:
        raise _Unsupported("value length")
    bitmap = _bitmap(valid)
    if kind == "enum":
        symbols = spec.symbols
        if len(values) and (int(values.min()) < 0 or int(values.max()) >= len(symbols)):
            raise _Unsupported("enum index out of range")
        strings = pa.array(symbols, pa.string()).take(pa.array(values))
        return pa.Array.from_buffers(t, n, [bitmap, *strings.buffers()[1:]])
    if kind == "decimal":
        if not pa.types.is_decimal(t):
            raise _Unsupported("decimal type")
        width = t.byte_width
        sizes = cols.get(spec.col2) if spec.col2 >= 0 else np.full(n, spec.width, np.int64)
        dest = np.zeros(n * width, np.uint8)
        if not cols.decimal(cols.data, values, sizes, width, dest):
            raise _Unsupported("decimal wider than its Arrow type")
        return pa.Array.from_buffers(t, n, [bitmap, pa.py_buffer(dest)])
    if kind == "bytes":
        sizes = cols.get(spec.col2)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        total = int(offsets[-1])
        if total >= 2**31 or not (pa.types.is_string(t) or pa.types.is_binary(t)):
            raise _Unsupported("large or unexpected bytes")
        dest = _pool_array(total, np.uint8)
        cols.gather(cols.data, values, sizes, offsets, dest)
        arr = pa.Array.from_buffers(t, n, [bitmap, pa.py_buffer(offsets.astype(np.int32)),
                                           pa.py_buffer(dest)])
        if pa.types.is_string(t):
            arr.validate(full=True)  # UTF-8 (ArrowInvalid: the lockstep decoder reports it)
        return arr
    if kind == "fixed":
        if not pa.types.is_fixed_size_binary(t) or t.byte_width != spec.width:
            raise _Unsupported("fixed type")
        dest = np.empty(n * spec.width, np.uint8)
        sizes = np.full(n, spec.width, np.int64)
        offsets = np.arange(0, n * spec.width + 1, spec.width, dtype=np.int64)
        cols.gather(cols.data, values, sizes, offsets, dest)
        return pa.Array.from_buffers(t, n, [bitmap, pa.py_buffer(dest)])
    if kind == "bool":
        if not pa.types.is_boolean(t):
            raise _Unsupported("bool type")
        bits = np.packbits(values.astype(np.bool_), bitorder="little")
        return pa.Array.from_buffers(t, n, [bitmap, pa.py_buffer(bits)])
    if kind == "float":
        data: npt.NDArray[Any] = values.astype(np.uint32).view(np.float32)
    elif kind == "double":
        data = values.view(np.float64)
    elif t.bit_width == 32:
        data = values.astype(np.int32)
        if not np.array_equal(data, values):
            raise _Unsupported("int out of range")
    else:
        data = values
    if data.dtype.itemsize * 8 != t.bit_width:
        raise _Unsupported("width")
    return pa.Array.from_buffers(t, n, [bitmap, pa.py_buffer(np.ascontiguousarray(data))])
