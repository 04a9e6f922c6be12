"""Benchmark: decoding Iceberg manifests (Avro) into Arrow (DESIGN.md "Metadata at columnar speed").

Generates a synthetic v2 table's manifests with fastavro, shaped as Iceberg Java writes them
(manifest_entry schema with ``field-id`` properties, maps as arrays of key/value records with
``logicalType: map``, deflate, 64 kB blocks): by default 100 manifests x 1,000 entries,
partitioned by day and bucket, with full column stats for 8 columns. The files are cached in the
temp dir, keyed by the parameters. Then it times every candidate decoder on all manifests, in one
thread and with 2 workers (threads where the decoder releases the GIL, else processes), and
checks that every candidate read the same entries.

Candidates that are not installed are reported as skipped (polars, polars-avro, jetliner, duckdb
with its avro extension wheel, rugo). Nothing asserts on time.

Run: ``python tests/benchmarks/bench_manifest_decoding.py [--manifests 100] [--entries 1000]
[--codec deflate|null] [--runs 5] [--only NAME,...]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import gc
import importlib
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

# --------------------------------------------------------------------------- synthetic manifests

N_COLUMNS = 8  # table columns with full stats (ids 1..8)
SYNC_INTERVAL = 64_000  # Avro Java's DataFileWriter default block size (bytes before codec)
GEN_VERSION = 1  # bump when the generated files change


def _field(fid: int, name: str, typ: Any, optional: bool = False) -> dict[str, Any]:
    if optional:
        return {"name": name, "type": ["null", typ], "default": None, "field-id": fid}
    return {"name": name, "type": typ, "field-id": fid}


def _map(kid: int, vid: int, value_type: str) -> dict[str, Any]:
    return {
        "type": "array",
        "logicalType": "map",
        "items": {
            "type": "record",
            "name": f"k{kid}_v{vid}",
            "fields": [
                {"name": "key", "type": "int", "field-id": kid},
                {"name": "value", "type": value_type, "field-id": vid},
            ],
        },
    }


def manifest_avro_schema() -> dict[str, Any]:
    """The v2 manifest_entry Avro schema as Iceberg Java writes it (Spec: Manifests)."""
    partition = {
        "type": "record",
        "name": "r102",
        "fields": [
            _field(1000, "ts_day", {"type": "int", "logicalType": "date"}, optional=True),
            _field(1001, "id_bucket", "int", optional=True),
        ],
    }
    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            _field(134, "content", "int"),
            _field(100, "file_path", "string"),
            _field(101, "file_format", "string"),
            _field(102, "partition", partition),
            _field(103, "record_count", "long"),
            _field(104, "file_size_in_bytes", "long"),
            _field(108, "column_sizes", _map(117, 118, "long"), optional=True),
            _field(109, "value_counts", _map(119, 120, "long"), optional=True),
            _field(110, "null_value_counts", _map(121, 122, "long"), optional=True),
            _field(137, "nan_value_counts", _map(138, 139, "long"), optional=True),
            _field(125, "lower_bounds", _map(126, 127, "bytes"), optional=True),
            _field(128, "upper_bounds", _map(129, 130, "bytes"), optional=True),
            _field(131, "key_metadata", "bytes", optional=True),
            _field(132, "split_offsets",
                   {"type": "array", "items": "long", "element-id": 133}, optional=True),
            _field(135, "equality_ids",
                   {"type": "array", "items": "int", "element-id": 136}, optional=True),
            _field(140, "sort_order_id", "int", optional=True),
            _field(143, "referenced_data_file", "string", optional=True),
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            _field(0, "status", "int"),
            _field(1, "snapshot_id", "long", optional=True),
            _field(3, "sequence_number", "long", optional=True),
            _field(4, "file_sequence_number", "long", optional=True),
            _field(2, "data_file", data_file),
        ],
    }


TABLE_SCHEMA_JSON = (
    '{"type":"struct","schema-id":0,"fields":['
    '{"id":1,"name":"id","required":true,"type":"long"},'
    '{"id":2,"name":"ts","required":true,"type":"timestamptz"},'
    '{"id":3,"name":"category","required":false,"type":"string"},'
    '{"id":4,"name":"data","required":false,"type":"string"},'
    '{"id":5,"name":"value","required":false,"type":"double"},'
    '{"id":6,"name":"qty","required":false,"type":"int"},'
    '{"id":7,"name":"flag","required":false,"type":"boolean"},'
    '{"id":8,"name":"note","required":false,"type":"string"}]}'
)
SPEC_JSON = (
    '[{"name":"ts_day","transform":"day","source-id":2,"field-id":1000},'
    '{"name":"id_bucket","transform":"bucket[16]","source-id":1,"field-id":1001}]'
)


def _entry(rnd: random.Random, m: int, i: int, snapshot_id: int, seq: int) -> dict[str, Any]:
    day = 19_700 + m // 4  # ~4 manifests per day; 16 buckets
    bucket = rnd.randrange(16)
    rows = rnd.randint(10_000, 2_000_000)
    nulls = [0, 0] + [rnd.randint(0, rows // 10) for _ in range(N_COLUMNS - 2)]
    lo_id = rnd.getrandbits(40)
    ts0 = (day * 86_400 + rnd.randrange(80_000)) * 1_000_000
    cat = rnd.choice(["alpha", "beta", "gamma", "delta"])
    lower = [
        lo_id.to_bytes(8, "little"), ts0.to_bytes(8, "little"), cat.encode(),
        ("row-" + uuid.UUID(int=rnd.getrandbits(128)).hex)[:16].encode(),
        np.float64(rnd.uniform(-1e3, 0)).tobytes(), rnd.randrange(100).to_bytes(4, "little"),
        b"\x00", b"note " + str(rnd.randrange(1000)).encode(),
    ]
    upper = [
        (lo_id + rows).to_bytes(8, "little"), (ts0 + 3_600_000_000).to_bytes(8, "little"),
        b"zeta", b"row-zzzzzzzzzzzz", np.float64(rnd.uniform(0, 1e3)).tobytes(),
        (100 + rnd.randrange(100)).to_bytes(4, "little"), b"\x01", b"note 9999",
    ]
    cols = range(1, N_COLUMNS + 1)
    return {
        "status": 1 if m % 5 == 4 else 0,
        "snapshot_id": snapshot_id,
        "sequence_number": seq,
        "file_sequence_number": seq,
        "data_file": {
            "content": 0,
            "file_path": (
                f"s3://warehouse-bucket/db/events/data/ts_day=2023-{1 + m % 12:02d}-"
                f"{1 + m % 28:02d}/id_bucket={bucket}/00{i % 1000:03d}-{m}-"
                f"{uuid.UUID(int=rnd.getrandbits(128))}-0000{i % 10}.parquet"
            ),
            "file_format": "PARQUET",
            "partition": {"ts_day": day, "id_bucket": bucket},
            "record_count": rows,
            "file_size_in_bytes": rows * rnd.randint(20, 60),
            "column_sizes": [{"key": c, "value": rows * rnd.randint(1, 8)} for c in cols],
            "value_counts": [{"key": c, "value": rows} for c in cols],
            "null_value_counts": [{"key": c, "value": nulls[c - 1]} for c in cols],
            "nan_value_counts": [{"key": 5, "value": 0}],
            "lower_bounds": [{"key": c, "value": lower[c - 1]} for c in cols],
            "upper_bounds": [{"key": c, "value": upper[c - 1]} for c in cols],
            "key_metadata": None,
            "split_offsets": [4],
            "equality_ids": None,
            "sort_order_id": 0,
            "referenced_data_file": None,
        },
    }


def generate(directory: Path, manifests: int, entries: int, codec: str, seed: int = 11) -> None:
    """Write the synthetic manifests into directory (one Avro file per manifest)."""
    schema = fastavro.parse_schema(manifest_avro_schema())
    rnd = random.Random(seed)
    meta = {
        "schema": TABLE_SCHEMA_JSON, "schema-id": "0", "partition-spec": SPEC_JSON,
        "partition-spec-id": "0", "format-version": "2", "content": "data",
    }
    directory.mkdir(parents=True, exist_ok=True)
    for m in range(manifests):
        snapshot_id = rnd.getrandbits(62)
        records = [_entry(rnd, m, i, snapshot_id, m + 1) for i in range(entries)]
        tmp = directory / f".m{m:05d}.tmp"
        with open(tmp, "wb") as f:
            fastavro.writer(f, schema, records, codec=codec, metadata=meta,
                            sync_interval=SYNC_INTERVAL)
        tmp.rename(directory / f"{uuid.UUID(int=rnd.getrandbits(128))}-m{m}.avro")


def manifest_paths(manifests: int, entries: int, codec: str) -> list[str]:
    """Paths of the cached synthetic manifests, generating them on first use."""
    key = f"icenb-bench-manifests-v{GEN_VERSION}-{manifests}x{entries}-c{N_COLUMNS}-{codec}"
    directory = Path(tempfile.gettempdir()) / key
    done = directory / "DONE"
    if not done.exists():
        t0 = time.perf_counter()
        for old in directory.glob("*"):
            old.unlink()
        generate(directory, manifests, entries, codec)
        done.write_text("ok")
        print(f"generated {manifests} manifests in {time.perf_counter() - t0:.1f} s: {directory}")
    return sorted(str(p) for p in directory.glob("*.avro"))


# --------------------------------------------------------------------------- candidates
# A decoder maps one manifest path to a pyarrow.Table (one row per manifest entry).

PLANNING_FIELDS = ("status", "snapshot_id", "sequence_number", "file_sequence_number")
PLANNING_DATA_FILE_FIELDS = (
    "content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
    "null_value_counts", "lower_bounds", "upper_bounds",
)


def fastavro_dicts(path: str) -> pa.Table:
    """a. fastavro records -> list of dicts -> pyarrow (the baseline)."""
    with open(path, "rb") as f:
        records = list(fastavro.reader(f))
    return pa.Table.from_pylist(records)


def _projected_schema(writer_schema: dict[str, Any]) -> dict[str, Any]:
    keep = {f["name"] for f in writer_schema["fields"]} & set(PLANNING_FIELDS) | {"data_file"}
    out = dict(writer_schema)
    out["fields"] = []
    for f in writer_schema["fields"]:
        if f["name"] not in keep:
            continue
        if f["name"] == "data_file":
            df = dict(f["type"])
            df["fields"] = [g for g in df["fields"] if g["name"] in PLANNING_DATA_FILE_FIELDS]
            f = {**f, "type": df}
        out["fields"].append(f)
    return out


def fastavro_projected(path: str) -> pa.Table:
    """e. fastavro with a reader schema that drops fields planning does not need."""
    with open(path, "rb") as f:
        rdr = fastavro.reader(f)
        writer_schema = rdr.writer_schema
        assert isinstance(writer_schema, dict)
        f.seek(0)
        records = list(fastavro.reader(f, reader_schema=_projected_schema(writer_schema)))
    return pa.Table.from_pylist(records)


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def polars_read_avro(path: str) -> pa.Table:
    """b. polars.read_avro (Rust) -> to_arrow."""
    import polars as pl

    return pl.read_avro(path).to_arrow()


def polars_avro_plugin(path: str) -> pa.Table:
    """c. polars-avro io plugin (Rust) -> to_arrow."""
    import polars_avro

    return polars_avro.read_avro(path).to_arrow()


def jetliner_read(path: str) -> pa.Table:
    """c. jetliner (Rust Avro reader for polars) -> to_arrow."""
    import jetliner

    return jetliner.read_avro(path).to_arrow()


_DUCK: dict[int, Any] = {}


def _duck() -> Any:
    import threading

    import duckdb

    con = _DUCK.get(threading.get_ident())
    if con is None:
        import duckdb_extension_avro

        ext = next(Path(duckdb_extension_avro.__file__).parent.glob("extensions/*/avro.*"))
        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        con.execute("SET threads TO 1")
        con.load_extension(str(ext))
        _DUCK[threading.get_ident()] = con
    return con


def duckdb_read(path: str) -> pa.Table:
    """c. duckdb read_avro (avro-c based; extension from the duckdb-extension-avro wheel)."""
    return _duck().execute("SELECT * FROM read_avro(?)", [path]).to_arrow_table()


def duckdb_read_batch(paths: Sequence[str]) -> pa.Table:
    """c. duckdb read_avro over the list of all manifests in one query."""
    return _duck().execute("SELECT * FROM read_avro(?)", [list(paths)]).to_arrow_table()


def polars_avro_batch(paths: Sequence[str]) -> pa.Table:
    """c. polars-avro reading the list of all manifests in one call."""
    import polars_avro

    return polars_avro.read_avro(list(paths)).to_arrow()


RUGO_COLUMNS = [*PLANNING_FIELDS, *(f"data_file.{f}" for f in PLANNING_DATA_FILE_FIELDS)]


def rugo_read(path: str) -> pa.Table:
    """c. rugo (C++): scalars natively, but records/maps only as JSON text."""
    import rugo.avro as ra

    with ra.read_avro(path, columns=RUGO_COLUMNS, max_threads=1) as r:
        return pa.concat_tables([m.to_arrow() for m in r])


# --------------------------------------------------------------------------- d. numpy decoder
# Pure Python + numpy + zlib. Avro records cannot be split without parsing them, but every block
# of an object container file starts on a record boundary. So all blocks of all manifests in a
# batch are decoded in lockstep: step r decodes record r of every block at once, one numpy
# operation per schema field (a "lane" per block). The number of numpy calls grows with the
# records per block (~150 for 64 kB blocks), not with the number of manifests.

_MAGIC = b"Obj\x01"


def _varint(b: bytes, i: int) -> tuple[int, int]:
    shift = v = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return (v >> 1) ^ -(v & 1), i
        shift += 7


def container_blocks(data: bytes) -> tuple[dict[str, bytes], list[tuple[int, bytes]]]:
    """Header metadata and (record count, decompressed payload) of each block."""
    if data[:4] != _MAGIC:
        raise ValueError("not an Avro object container file")
    meta: dict[str, bytes] = {}
    i = 4
    while True:
        n, i = _varint(data, i)
        if n == 0:
            break
        if n < 0:
            n = -n
            _, i = _varint(data, i)
        for _ in range(n):
            kl, i = _varint(data, i)
            key = data[i:i + kl].decode()
            i += kl
            vl, i = _varint(data, i)
            meta[key] = data[i:i + vl]
            i += vl
    sync = data[i:i + 16]
    i += 16
    codec = meta.get("avro.codec", b"null")
    blocks = []
    while i < len(data):
        count, i = _varint(data, i)
        size, i = _varint(data, i)
        payload = data[i:i + size]
        i += size
        if data[i:i + 16] != sync:
            raise ValueError("bad sync marker")
        i += 16
        if codec == b"deflate":
            payload = zlib.decompress(payload, -15)
        elif codec != b"null":
            raise ValueError(f"codec {codec!r} not supported here")
        blocks.append((count, payload))
    return meta, blocks


_WINDOW = np.arange(10)
_SHIFTS = (np.arange(10) * 7).astype(np.uint64)


class _Lanes:
    """The concatenated block payloads and one read position per lane (block)."""

    def __init__(self, buf: np.ndarray, pos: np.ndarray) -> None:
        self.buf = np.concatenate([buf, np.zeros(16, np.uint8)])  # 10-byte windows stay inside
        self.pos = pos

    def varint(self, sel: Any) -> np.ndarray:
        """Zigzag varint at each selected lane, as int64; advances those lanes."""
        p = self.pos[sel]
        b = self.buf[p]
        if b.size == 0 or b.max() < 0x80:
            self.pos[sel] = p + 1
            v = b.astype(np.uint64)
        else:  # some multi-byte varints: decode a 10-byte window per lane at once
            w = self.buf[p[:, None] + _WINDOW]
            n = np.argmax(w < 0x80, axis=1) + 1
            groups = (w & 0x7F).astype(np.uint64) << _SHIFTS
            groups[_WINDOW[None, :] >= n[:, None]] = 0
            v = np.bitwise_or.reduce(groups, axis=1)
            self.pos[sel] = p + n
        return ((v >> np.uint64(1)) ^ (np.uint64(0) - (v & np.uint64(1)))).view(np.int64)


def _take(sel: Any, mask: np.ndarray) -> Any:
    """Sub-selection of lanes (an index array) where mask is true."""
    idx = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel
    return idx[mask]


class _Node:
    """A node of the compiled writer schema; collects what it reads, builds Arrow at the end."""

    keep: bool

    def read(self, ln: _Lanes, sel: Any, slots: np.ndarray, e: int) -> None:
        raise NotImplementedError

    def build(self, n: int, dest: Callable[[np.ndarray, np.ndarray], np.ndarray],
              ln: _Lanes) -> pa.Array:
        raise NotImplementedError


class _Long(_Node):
    def __init__(self, arrow_type: pa.DataType, keep: bool) -> None:
        self.type, self.keep = arrow_type, keep
        self.slots: list[np.ndarray] = []
        self.elems: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []

    def read(self, ln: _Lanes, sel: Any, slots: np.ndarray, e: int) -> None:
        v = ln.varint(sel)
        if self.keep:
            self.slots.append(slots)
            self.elems.append(np.full(slots.shape, e, np.int64))
            self.vals.append(v)

    def build(self, n: int, dest: Callable[[np.ndarray, np.ndarray], np.ndarray],
              ln: _Lanes) -> pa.Array:
        out = np.zeros(n, np.int64)
        if self.vals:
            out[dest(np.concatenate(self.slots), np.concatenate(self.elems))] = np.concatenate(
                self.vals)
        arr = pa.array(out)
        if self.type == pa.int32() or self.type == pa.date32():
            arr = arr.cast(pa.int32()).view(self.type) if self.type == pa.date32() else arr.cast(
                pa.int32())
        return arr


class _Bytes(_Node):
    def __init__(self, arrow_type: pa.DataType, keep: bool) -> None:
        self.type, self.keep = arrow_type, keep
        self.slots: list[np.ndarray] = []
        self.elems: list[np.ndarray] = []
        self.starts: list[np.ndarray] = []
        self.lens: list[np.ndarray] = []

    def read(self, ln: _Lanes, sel: Any, slots: np.ndarray, e: int) -> None:
        size = ln.varint(sel)
        start = ln.pos[sel].copy()
        ln.pos[sel] = start + size
        if self.keep:
            self.slots.append(slots)
            self.elems.append(np.full(slots.shape, e, np.int64))
            self.starts.append(start)
            self.lens.append(size)

    def build(self, n: int, dest: Callable[[np.ndarray, np.ndarray], np.ndarray],
              ln: _Lanes) -> pa.Array:
        lens = np.zeros(n, np.int64)
        starts = np.zeros(n, np.int64)
        if self.lens:
            d = dest(np.concatenate(self.slots), np.concatenate(self.elems))
            lens[d] = np.concatenate(self.lens)
            starts[d] = np.concatenate(self.starts)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        total = int(offsets[-1])
        itype = np.int32 if len(ln.buf) < 2**31 and total < 2**31 else np.int64
        idx = np.repeat((starts - offsets[:-1]).astype(itype), lens)
        idx += np.arange(total, dtype=itype)
        data = ln.buf[idx]
        big = total >= 2**31
        typ = (pa.large_string() if self.type == pa.string() else pa.large_binary()) if big \
            else self.type
        off = offsets if big else offsets.astype(np.int32)
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(off), pa.py_buffer(data)])


class _Optional(_Node):
    def __init__(self, null_index: int, child: _Node) -> None:
        self.null_index, self.child, self.keep = null_index, child, child.keep
        self.null_slots: list[np.ndarray] = []
        self.null_elems: list[np.ndarray] = []

    def read(self, ln: _Lanes, sel: Any, slots: np.ndarray, e: int) -> None:
        branch = ln.varint(sel)
        present = branch != self.null_index
        if present.all():
            self.child.read(ln, sel, slots, e)
            return
        if self.keep:
            self.null_slots.append(slots[~present])
            self.null_elems.append(np.full(int((~present).sum()), e, np.int64))
        if present.any():
            self.child.read(ln, _take(sel, present), slots[present], e)

    def build(self, n: int, dest: Callable[[np.ndarray, np.ndarray], np.ndarray],
              ln: _Lanes) -> pa.Array:
        arr = self.child.build(n, dest, ln)
        if not self.null_slots:
            return arr
        null = np.zeros(n, np.bool_)
        null[dest(np.concatenate(self.null_slots), np.concatenate(self.null_elems))] = True
        if pa.types.is_list(arr.type):
            return pa.ListArray.from_arrays(arr.offsets, arr.values, mask=pa.array(null))
        if pa.types.is_struct(arr.type):
            return pa.StructArray.from_arrays(arr.flatten(), fields=list(arr.type),
                                              mask=pa.array(null))
        bits = pa.array(~null).buffers()[1]
        return pa.Array.from_buffers(arr.type, n, [bits, *arr.buffers()[1:]])


class _Record(_Node):
    def __init__(self, fields: list[tuple[str, _Node]]) -> None:
        self.fields = fields
        self.keep = any(node.keep for _, node in fields)

    def read(self, ln: _Lanes, sel: Any, slots: np.ndarray, e: int) -> None:
        for _, node in self.fields:
            node.read(ln, sel, slots, e)

    def build(self, n: int, dest: Callable[[np.ndarray, np.ndarray], np.ndarray],
              ln: _Lanes) -> pa.Array:
        kept = [(name, node) for name, node in self.fields if node.keep]
        return pa.StructArray.from_arrays([node.build(n, dest, ln) for _, node in kept],
                                          names=[name for name, _ in kept])


class _Array(_Node):
    """An Avro array (an Iceberg list, or a map written as an array of key/value records)."""

    def __init__(self, item: _Node) -> None:
        self.item, self.keep = item, item.keep
        self.count_slots: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []

    def read(self, ln: _Lanes, sel: Any, slots: np.ndarray, e: int) -> None:
        if e != 0:
            raise NotImplementedError("arrays nested in arrays")
        count = ln.varint(sel)
        neg = count < 0
        if neg.any():  # a negative count is followed by the block's size in bytes
            ln.varint(_take(sel, neg))
            count = np.abs(count)
        total = count
        for k in range(int(count.max()) if count.size else 0):
            have = count > k
            if have.all():
                self.item.read(ln, sel, slots, k + 1)  # element numbers start at 1
            else:
                self.item.read(ln, _take(sel, have), slots[have], k + 1)
        more = count > 0
        if more.any():  # the end-of-array marker (a zero count), or a further block
            tail = ln.varint(_take(sel, more))
            if (tail != 0).any():
                raise NotImplementedError("arrays written in several blocks")
        self.count_slots.append(slots)
        self.counts.append(total)

    def build(self, n: int, dest: Callable[[np.ndarray, np.ndarray], np.ndarray],
              ln: _Lanes) -> pa.Array:
        lens = np.zeros(n, np.int64)
        if self.counts:
            slots = np.concatenate(self.count_slots)
            lens[dest(slots, np.zeros_like(slots))] = np.concatenate(self.counts)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        parent = dest

        def child_dest(s: np.ndarray, e: np.ndarray) -> np.ndarray:
            return offsets[parent(s, np.zeros_like(s))] + e - 1

        values = self.item.build(int(offsets[-1]), child_dest, ln)
        return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)


def _compile(schema: Any, keep: Callable[[tuple[str, ...]], bool],
             path: tuple[str, ...] = ()) -> _Node:
    if isinstance(schema, list):
        if len(schema) != 2 or "null" not in schema:
            raise NotImplementedError(f"union {schema}")
        i = schema.index("null")
        return _Optional(i, _compile(schema[1 - i], keep, path))
    if isinstance(schema, str):
        schema = {"type": schema}
    t = schema["type"]
    if isinstance(t, (dict, list)):
        return _compile(t, keep, path)
    if t == "record":
        return _Record([(f["name"], _compile(f["type"], keep, (*path, f["name"])))
                        for f in schema["fields"]])
    if t == "array":
        return _Array(_compile(schema["items"], keep, path))
    k = keep(path)
    if t in ("int", "long"):
        typ = pa.date32() if schema.get("logicalType") == "date" else (
            pa.int32() if t == "int" else pa.int64())
        return _Long(typ, k)
    if t in ("string", "bytes"):
        return _Bytes(pa.string() if t == "string" else pa.binary(), k)
    raise NotImplementedError(f"type {t}")


def numpy_decode(paths: Sequence[str], keep: Callable[[tuple[str, ...]], bool]) -> pa.Table:
    """Decode several manifests (same writer schema) into one Arrow table, in file order."""
    import json

    schema: Any = None
    payloads: list[bytes] = []
    counts: list[int] = []
    for p in paths:
        with open(p, "rb") as f:
            meta, blocks = container_blocks(f.read())
        s = json.loads(meta["avro.schema"])
        if schema is None:
            schema = s
        elif s != schema:
            raise NotImplementedError("manifests with different writer schemas in one batch")
        for c, b in blocks:
            counts.append(c)
            payloads.append(b)
    root = _compile(schema, keep)
    assert isinstance(root, _Record)
    cnt = np.array(counts, np.int64)
    starts = np.zeros(len(payloads), np.int64)
    np.cumsum([len(b) for b in payloads[:-1]], out=starts[1:])
    rowbase = np.zeros(len(cnt), np.int64)
    np.cumsum(cnt[:-1], out=rowbase[1:])
    order = np.argsort(-cnt, kind="stable")  # lanes with most records first: active = prefix
    buf = np.frombuffer(b"".join(payloads), np.uint8)
    ln = _Lanes(buf, starts[order].copy())
    base = rowbase[order]
    sorted_cnt = cnt[order]
    for r in range(int(cnt.max()) if len(cnt) else 0):
        k = int((sorted_cnt > r).sum())  # lanes with more than r records: a prefix
        root.read(ln, slice(0, k), base[:k] + r, 0)
    n = int(cnt.sum())

    def top(s: np.ndarray, e: np.ndarray) -> np.ndarray:
        return s

    cols = [(name, node.build(n, top, ln)) for name, node in root.fields if node.keep]
    return pa.table({name: arr for name, arr in cols})


def _keep_all(path: tuple[str, ...]) -> bool:
    return True


def _keep_planning(path: tuple[str, ...]) -> bool:
    if path[0] != "data_file":
        return path[0] in PLANNING_FIELDS
    return len(path) > 1 and path[1] in PLANNING_DATA_FILE_FIELDS


def numpy_full(path: str) -> pa.Table:
    """d. numpy lockstep decoder, all fields (one manifest at a time)."""
    return numpy_decode([path], _keep_all)


def numpy_planning(path: str) -> pa.Table:
    """d. numpy lockstep decoder, planning fields only (one manifest at a time)."""
    return numpy_decode([path], _keep_planning)


def numpy_full_batch(paths: Sequence[str]) -> pa.Table:
    """d. numpy lockstep decoder, all manifests in one batch, all fields."""
    return numpy_decode(paths, _keep_all)


def numpy_planning_batch(paths: Sequence[str]) -> pa.Table:
    """d. numpy lockstep decoder, all manifests in one batch, planning fields only."""
    return numpy_decode(paths, _keep_planning)


# --------------------------------------------------------------------------- harness

def _summary(t: pa.Table) -> tuple[int, int, int]:
    """Entry count, sum of record_count and sum of file_size_in_bytes, whatever the layout."""
    names = t.column_names
    if "data_file" in names:
        df = t.column("data_file").combine_chunks()
        rc = df.field("record_count")
        fs = df.field("file_size_in_bytes")
    else:  # flattened columns, as rugo names them
        rc = t.column("data_file.record_count")
        fs = t.column("data_file.file_size_in_bytes")
    import pyarrow.compute as pc

    return t.num_rows, pc.sum(rc).as_py(), pc.sum(fs).as_py()


def _all(decoder: Any, paths: Sequence[str], batched: bool) -> list[pa.Table]:
    return [decoder(paths)] if batched else [decoder(p) for p in paths]


def _time(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    first = time.perf_counter() - t0
    times = []
    for _ in range(runs - 1):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times) if times else first, result


def _pool_run(pool: cf.Executor, decoder: Any, paths: Sequence[str],
              batched: bool) -> list[pa.Table]:
    if batched:  # one batch per worker
        half = (len(paths) + 1) // 2
        return list(pool.map(decoder, [paths[:half], paths[half:]]))
    return list(pool.map(decoder, paths, chunksize=max(1, len(paths) // 16))
                if isinstance(pool, cf.ProcessPoolExecutor) else pool.map(decoder, paths))


# name -> (module that must import, releases the GIL, batched, decoder); batched decoders take
# the list of paths, the others one path.
CANDIDATES: dict[str, tuple[str | None, bool, bool, Any]] = {
    "a. fastavro -> dicts -> pyarrow": (None, False, False, fastavro_dicts),
    "e. fastavro, projected reader schema": (None, False, False, fastavro_projected),
    "b. polars.read_avro": ("polars", True, False, polars_read_avro),
    "c. polars-avro plugin": ("polars_avro", True, False, polars_avro_plugin),
    "c. polars-avro plugin, list of paths": ("polars_avro", True, True, polars_avro_batch),
    "c. jetliner": ("jetliner", True, False, jetliner_read),
    "c. duckdb read_avro": ("duckdb_extension_avro", True, False, duckdb_read),
    "c. duckdb read_avro, list of paths": ("duckdb_extension_avro", True, True,
                                           duckdb_read_batch),
    "c. rugo, planning columns (maps as JSON)": ("rugo", True, False, rugo_read),
    "d. numpy lockstep, per manifest": (None, False, False, numpy_full),
    "d. numpy lockstep, batch": (None, False, True, numpy_full_batch),
    "d. numpy lockstep, batch, planning": (None, False, True, numpy_planning_batch),
}


def run(argv: Sequence[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifests", type=int, default=100)
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--codec", default="deflate", choices=["deflate", "null"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-parallel", action="store_true")
    args = ap.parse_args(argv)
    paths = manifest_paths(args.manifests, args.entries, args.codec)
    total = args.manifests * args.entries
    size = sum(os.path.getsize(p) for p in paths)
    t0 = time.perf_counter()
    raw = [Path(p).read_bytes() for p in paths]
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    inflated = sum(len(b) for b in raw)
    print(f"\n{len(paths)} manifests x {args.entries} entries ({total} entries), codec "
          f"{args.codec}, {size / 1e6:.1f} MB on disk; reading the bytes: {read_s:.3f} s; "
          f"{inflated} bytes; python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"pyarrow {pa.__version__}, fastavro {fastavro.__version__}")
    print(f"  {'candidate':<40} {'first':>7} {'median':>7} {'2 workers':>10} "
          f"{'entries/s (1)':>14}")
    only = {s for s in args.only.split(",") if s}
    figures: dict[str, float] = {}
    reference: tuple[int, int, int] | None = None
    for name, (module, nogil, batched, decoder) in CANDIDATES.items():
        if only and not any(o in name for o in only):
            continue
        if module is not None and _optional(module) is None:
            print(f"  {name:<40} skipped: {module} not installed")
            continue
        try:
            first, med, tables = _time(lambda d=decoder, b=batched: _all(d, paths, b),
                                      args.runs)
        except Exception as e:  # report what breaks, go on with the others
            print(f"  {name:<40} FAILED: {type(e).__name__}: {str(e)[:300]}")
            continue
        got = _summary(pa.concat_tables(tables, promote_options="permissive"))
        if reference is None:
            reference = got
        ok = "" if reference is None or got == reference else f"  MISMATCH {got} != {reference}"
        par = float("nan")
        if not args.no_parallel:
            pool: cf.Executor = (cf.ThreadPoolExecutor(2) if nogil
                                 else cf.ProcessPoolExecutor(2))
            with pool:
                _pool_run(pool, decoder, paths[:4], batched)  # start the workers
                _, par, _ = _time(lambda p=pool, d=decoder, b=batched: _pool_run(p, d, paths, b),
                                  args.runs)
        figures[name] = med
        kind = "thr" if nogil else "proc"
        print(f"  {name:<40} {first:7.3f} {med:7.3f} {par:7.3f} {kind:<4} {total / med:12,.0f}"
              f"{ok}")
    from importlib.metadata import PackageNotFoundError, version

    vers = {}
    for dist in ["polars", "polars-avro", "jetliner", "duckdb", "duckdb-extension-avro", "rugo"]:
        with contextlib.suppress(PackageNotFoundError):
            vers[dist] = version(dist)
    print(f"  versions: {vers}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return figures


if __name__ == "__main__":
    run()
