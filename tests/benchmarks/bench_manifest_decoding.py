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
# icenb.io.avro: pure Python + numpy. Every block of an object container file starts on a record
# boundary, so all blocks of all manifests in a batch are decoded in lockstep (record r of every
# block at once, one numpy operation per schema node); see the module docstring.

PLANNING_COLUMNS = [*PLANNING_FIELDS, *(f"data_file.{f}" for f in PLANNING_DATA_FILE_FIELDS)]


def numpy_decode(paths: Sequence[str], columns: Sequence[str] | None) -> pa.Table:
    """Decode several manifests in one batch with icenb.io.avro; one table, in file order."""
    from icenb.io.avro import read_avro_tables

    files = [(p, Path(p).read_bytes()) for p in paths]
    return pa.concat_tables(read_avro_tables(files, columns=columns))


def numpy_full(path: str) -> pa.Table:
    """d. numpy lockstep decoder, all fields (one manifest at a time)."""
    return numpy_decode([path], None)


def numpy_planning(path: str) -> pa.Table:
    """d. numpy lockstep decoder, planning fields only (one manifest at a time)."""
    return numpy_decode([path], PLANNING_COLUMNS)


def numpy_full_batch(paths: Sequence[str]) -> pa.Table:
    """d. numpy lockstep decoder, all manifests in one batch, all fields."""
    return numpy_decode(paths, None)


def numpy_planning_batch(paths: Sequence[str]) -> pa.Table:
    """d. numpy lockstep decoder, all manifests in one batch, planning fields only."""
    return numpy_decode(paths, PLANNING_COLUMNS)


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
