"""Benchmark: scan planning on synthetic v2 tables, icenb vs PyIceberg vs Iceberg Java.

DESIGN.md "Metadata at columnar speed"; issue 3 "Done when" (planning benchmark). A synthetic v2
table is written once and cached in the temp dir (manifests and manifest list with fastavro, from
the exact Avro schemas of :mod:`icenb.spec.manifest`; metadata JSON by hand): 100,000 data files
in 100 manifests (``--size 100k``, the default) or 1,000,000 in 1,000 (``--size 1m``, or
``ICENB_BENCH_PLANNING_SIZES=100k,1m``), partitioned by ``day(ts)`` and ``bucket(16, id)``,
four manifests per day, full column stats (column sizes, value / null / NaN counts, lower and
upper bounds) on 8 columns.

Each planner plans four filters: everything; one day (``ts`` in one day: the manifest list
prunes all but 4 manifests); one id (``id = X``: no manifest can be skipped, files are pruned by
the bucket partition and the id bounds); both. Figures (wall seconds, entries/s over all the
table's entries):

- icenb ``plan_files`` (returns Arrow; ``.tasks`` are built lazily): *cold* = new FileIO and an
  empty ManifestCache each run (median of ``--runs``); *warm* = the same snapshot re-planned
  with the ManifestCache populated (no manifest is opened or decoded).
- PyIceberg 0.12 ``StaticTable.scan(row_filter).plan_files()`` on a freshly loaded table (its
  manifest-list cache is per FileIO, so each run is cold); ``--pyiceberg-runs`` runs (default 1).
- Iceberg Java 1.10 ``table.newScan().filter(expr).planFiles()`` counted in the JVM
  (tests/reference/java_plan.py in .venv-ref, one fresh JVM per filter): *cold* = the first
  plan in that JVM, *warm* = the median of the next ``--runs`` plans in the same JVM (JIT warm;
  Java caches no manifests by default, so each of those still reads and decodes every manifest).

The three planners must select the same number of data files for every filter (asserted).
Ratios against the issue's targets are printed; nothing asserts on time.

Run: ``.venv/bin/python tests/benchmarks/bench_planning.py [--size 100k|1m|both] [--runs 3]
[--skip-java] [--skip-pyiceberg] [--pyiceberg-runs 1]`` or
``ICENB_BENCH_PLANNING_SIZES=100k,1m .venv/bin/python -m pytest -s
tests/benchmarks/bench_planning.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fastavro
import numpy as np

from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import ManifestCache
from icenb.io.metadata_files import load_table_metadata
from icenb.spec.manifest import (
    avro_schema,
    manifest_entry_type,
    manifest_file_type,
    manifest_list_metadata,
    manifest_metadata,
)
from icenb.spec.partition_spec import partition_spec_from_json
from icenb.spec.schema import schema_from_json
from icenb.spec.transforms import bucket_hash
from icenb.spec.types import LongType
from icenb.table.scan.planning import plan_files
from tests.reference_fixtures import REFERENCE_DIR, ReferenceEnvError, reference_python

GEN_VERSION = 1  # bump when the generated tables change
SIZES = {"100k": (100, 1000), "1m": (1000, 1000), "10m": (10_000, 1000)}  # manifests x entries
#: Sizes written by parallel workers (each manifest from a random stream of its own).
PARALLEL_SIZES = {"10m": 2}
SYNC_INTERVAL = 64_000  # Avro Java's DataFileWriter block size (bytes before the codec)
DAY0 = 19_700  # 2023-12-09
MANIFESTS_PER_DAY = 4
ID_RANGE = 10_000_000
TARGET_DAY = DAY0 + 10
TARGET_ID = 5_000_000
JAVA_TIMEOUT_S = 1800
# The cache's budget: the default (the manifest_cache_bytes option) holds the 1m table's
# planning columns, so warm plans decode nothing; the 10m table's do not fit.
CACHE_BYTES: int | None = None

SCHEMA_JSON: dict[str, Any] = {
    "type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": True, "type": "timestamptz"},
        {"id": 3, "name": "category", "required": False, "type": "string"},
        {"id": 4, "name": "data", "required": False, "type": "string"},
        {"id": 5, "name": "value", "required": False, "type": "double"},
        {"id": 6, "name": "qty", "required": False, "type": "int"},
        {"id": 7, "name": "flag", "required": False, "type": "boolean"},
        {"id": 8, "name": "note", "required": False, "type": "string"},
    ]}
SPEC_JSON: dict[str, Any] = {"spec-id": 0, "fields": [
    {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000},
    {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1001},
]}
N_COLUMNS = len(SCHEMA_JSON["fields"])

US_PER_DAY = 86_400 * 1_000_000


@dataclass(frozen=True)
class Filter:
    """One filter, spelled for each planner."""

    name: str
    icenb: str
    java: dict[str, int]  # what java_plan.py builds: ts_ge / ts_lt (micros), id_eq

    def pyiceberg(self) -> Any:
        from pyiceberg.expressions import (
            AlwaysTrue,
            And,
            EqualTo,
            GreaterThanOrEqual,
            LessThan,
        )

        parts: list[Any] = []
        if "ts_ge" in self.java:
            parts += [GreaterThanOrEqual("ts", self.java["ts_ge"]),
                      LessThan("ts", self.java["ts_lt"])]
        if "id_eq" in self.java:
            parts.append(EqualTo("id", self.java["id_eq"]))
        if not parts:
            return AlwaysTrue()
        return parts[0] if len(parts) == 1 else And(*parts)


def filters() -> list[Filter]:
    lo, hi = TARGET_DAY * US_PER_DAY, (TARGET_DAY + 1) * US_PER_DAY
    day = f"ts >= '{_iso(lo)}' and ts < '{_iso(hi)}'"
    ident = f"id = {TARGET_ID}"
    return [
        Filter("full", "true", {}),
        Filter("one day", day, {"ts_ge": lo, "ts_lt": hi}),
        Filter("one id", ident, {"id_eq": TARGET_ID}),
        Filter("day and id", f"{day} and {ident}", {"ts_ge": lo, "ts_lt": hi,
                                                   "id_eq": TARGET_ID}),
    ]


def _iso(micros: int) -> str:
    from datetime import datetime, timedelta, timezone

    t = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=micros)
    return t.isoformat()


# --------------------------------------------------------------------------- the table


def _le(value: int, width: int) -> bytes:
    return value.to_bytes(width, "little", signed=True)


def _entry(rnd: random.Random, day: int, i: int, m: int, snapshot_id: int) -> dict[str, Any]:
    """One data file's manifest entry with full metrics for the 8 columns."""
    bucket = rnd.randrange(16)
    rows = rnd.randint(10_000, 2_000_000)
    lo_id = rnd.randrange(ID_RANGE)
    hi_id = lo_id + rnd.randint(100_000, 1_000_000)
    ts0 = day * US_PER_DAY + rnd.randrange(80_000) * 1_000_000
    ts1 = min(ts0 + rnd.randint(1, 3_600) * 1_000_000, (day + 1) * US_PER_DAY - 1)
    cat = rnd.choice(["alpha", "beta", "gamma", "delta"])
    nulls = [0, 0] + [rnd.randint(0, rows // 10) for _ in range(N_COLUMNS - 2)]
    lower = [_le(lo_id, 8), _le(ts0, 8), cat.encode(), b"row-0000" + bytes([65 + i % 26]),
             np.float64(rnd.uniform(-1e3, 0)).tobytes(), _le(rnd.randrange(100), 4), b"\x00",
             b"note " + str(rnd.randrange(1000)).encode()]
    upper = [_le(hi_id, 8), _le(ts1, 8), b"zeta", b"row-zzzzzzzzzzzz",
             np.float64(rnd.uniform(0, 1e3)).tobytes(), _le(100 + rnd.randrange(100), 4),
             b"\x01", b"note 9999"]
    cols = range(1, N_COLUMNS + 1)
    return {
        "status": 1,
        "snapshot_id": snapshot_id,
        "sequence_number": 1,
        "file_sequence_number": 1,
        "data_file": {
            "content": 0,
            "file_path": f"s3://warehouse/db/events/data/ts_day={day}/id_bucket={bucket}/"
                         f"00{i % 1000:03d}-{m}-{uuid.UUID(int=rnd.getrandbits(128))}.parquet",
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


def _schemas() -> tuple[Any, Any, dict[str, str]]:
    schema = schema_from_json(SCHEMA_JSON)
    spec = partition_spec_from_json(SPEC_JSON, format_version=2)
    ptype = spec.partition_type(schema)
    entry_schema = fastavro.parse_schema(avro_schema(manifest_entry_type(ptype, 2),
                                                     "manifest_entry"))
    list_schema = fastavro.parse_schema(avro_schema(manifest_file_type(2), "manifest_file"))
    return entry_schema, list_schema, manifest_metadata(schema, spec, 2)


def _write_manifest(directory: Path, rnd: random.Random, m: int, entries: int,
                    snapshot_id: int, entry_schema: Any, meta: dict[str, str]
                    ) -> dict[str, Any]:
    """Write manifest ``m``; its manifest-list row."""
    day = DAY0 + m // MANIFESTS_PER_DAY
    records = [_entry(rnd, day, i, m, snapshot_id) for i in range(entries)]
    path = directory / "metadata" / f"{uuid.UUID(int=rnd.getrandbits(128))}-m{m}.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, entry_schema, records, codec="deflate", metadata=meta,
                        sync_interval=SYNC_INTERVAL)
    buckets = [r["data_file"]["partition"]["id_bucket"] for r in records]
    rows = sum(r["data_file"]["record_count"] for r in records)
    return {
        "manifest_path": str(path), "manifest_length": path.stat().st_size,
        "partition_spec_id": 0, "content": 0, "sequence_number": 1,
        "min_sequence_number": 1, "added_snapshot_id": snapshot_id,
        "added_files_count": entries, "existing_files_count": 0, "deleted_files_count": 0,
        "added_rows_count": rows, "existing_rows_count": 0, "deleted_rows_count": 0,
        "partitions": [
            {"contains_null": False, "contains_nan": None, "lower_bound": _le(day, 4),
             "upper_bound": _le(day, 4)},
            {"contains_null": False, "contains_nan": None,
             "lower_bound": _le(min(buckets), 4), "upper_bound": _le(max(buckets), 4)},
        ],
        "key_metadata": None,
    }


def _write_range(args: tuple[str, int, int, int, int, int]) -> list[dict[str, Any]]:
    """Manifests ``lo`` .. ``hi - 1``, each from a random stream of its own (a worker)."""
    directory, lo, hi, entries, snapshot_id, seed = args
    entry_schema, _, meta = _schemas()
    return [_write_manifest(Path(directory), random.Random(seed * 1_000_003 + m), m, entries,
                            snapshot_id, entry_schema, meta) for m in range(lo, hi)]


def generate(directory: Path, manifests: int, entries: int, seed: int = 17,
             workers: int = 1) -> Path:
    """Write the table (manifests, manifest list, v1.metadata.json); returns the metadata file.

    ``workers`` > 1 writes manifests in that many processes, each manifest from a random
    stream seeded by its number (so not the tables ``workers=1`` writes)."""
    entry_schema, list_schema, meta = _schemas()
    rnd = random.Random(seed)
    snapshot_id = rnd.getrandbits(62)
    (directory / "metadata").mkdir(parents=True, exist_ok=True)
    listed: list[dict[str, Any]] = []
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        step = 50
        ranges = [(str(directory), lo, min(lo + step, manifests), entries, snapshot_id, seed)
                  for lo in range(0, manifests, step)]
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for rows in pool.map(_write_range, ranges):
                listed.extend(rows)
    else:
        for m in range(manifests):
            listed.append(_write_manifest(directory, rnd, m, entries, snapshot_id,
                                          entry_schema, meta))
    list_path = directory / "metadata" / f"snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
    with open(list_path, "wb") as f:
        fastavro.writer(f, list_schema, listed, codec="deflate",
                        metadata=manifest_list_metadata(snapshot_id, None, 1, 2),
                        sync_interval=SYNC_INTERVAL)
    now = 1_700_000_000_000
    total_rows = sum(m["added_rows_count"] for m in listed)
    doc = {
        "format-version": 2, "table-uuid": str(uuid.UUID(int=rnd.getrandbits(128))),
        "location": str(directory), "last-sequence-number": 1, "last-updated-ms": now,
        "last-column-id": N_COLUMNS, "current-schema-id": 0, "schemas": [SCHEMA_JSON],
        "default-spec-id": 0, "partition-specs": [SPEC_JSON], "last-partition-id": 1001,
        "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {}, "current-snapshot-id": snapshot_id,
        "refs": {"main": {"snapshot-id": snapshot_id, "type": "branch"}},
        "snapshots": [{
            "sequence-number": 1, "snapshot-id": snapshot_id, "timestamp-ms": now,
            "summary": {"operation": "append", "added-data-files": str(manifests * entries),
                        "total-data-files": str(manifests * entries),
                        "total-records": str(total_rows), "total-delete-files": "0"},
            "manifest-list": str(list_path), "schema-id": 0}],
        "snapshot-log": [{"timestamp-ms": now, "snapshot-id": snapshot_id}],
        "metadata-log": [], "statistics": [], "partition-statistics": [],
    }
    out = directory / "metadata" / "v1.metadata.json"
    out.write_text(json.dumps(doc, indent=1))
    (directory / "metadata" / "version-hint.text").write_text("1")
    return out


def table_metadata_file(size: str) -> Path:
    """The cached table of ``size`` (``100k`` or ``1m``), generated on first use."""
    manifests, entries = SIZES[size]
    directory = Path(tempfile.gettempdir()) / (
        f"icenb-bench-planning-v{GEN_VERSION}-{manifests}x{entries}")
    done = directory / "DONE"
    if not done.exists():
        import shutil

        shutil.rmtree(directory, ignore_errors=True)
        t0 = time.perf_counter()
        generate(directory, manifests, entries, workers=PARALLEL_SIZES.get(size, 1))
        done.write_text("ok")
        print(f"generated {manifests} manifests x {entries} entries in "
              f"{time.perf_counter() - t0:.0f} s: {directory}", flush=True)
    return directory / "metadata" / "v1.metadata.json"


def check_target_id_bucket() -> int:
    """The bucket of TARGET_ID (printed, so a reader can check bucket pruning)."""
    return (bucket_hash(LongType(), TARGET_ID) & 0x7FFFFFFF) % 16


# --------------------------------------------------------------------------- planners


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def icenb_figures(path: Path, flt: Filter, runs: int, column_stats: bool = False
                  ) -> dict[str, Any]:
    """Cold (fresh FileIO and cache) and warm (cache populated) plans; files selected."""
    metadata = load_table_metadata(str(path), FileIO())
    cold: list[float] = []
    files = -1
    cache = ManifestCache(max_bytes=CACHE_BYTES)
    opened = 0
    plan: Any = None
    for _ in range(runs):
        plan = None  # not kept while the next is made (10m: ~2 GB)
        cache = ManifestCache(max_bytes=CACHE_BYTES)
        io = FileIO()
        seconds, plan = _timed(lambda io=io, cache=cache: plan_files(
            io, metadata, row_filter=flt.icenb, cache=cache, column_stats=column_stats))
        cold.append(seconds)
        files = plan.files_selected
        opened = io.stats.opened
    warm: list[float] = []
    warm_opened = 0
    # a warm plan of a few files takes milliseconds: enough runs that the median is not noise
    for _ in range(max(runs, 20) if files <= 100_000 else max(runs, 3)
                   if files <= 1_000_000 else runs):
        plan = None
        io = FileIO()
        seconds, plan = _timed(lambda io=io: plan_files(io, metadata, row_filter=flt.icenb,
                                                        cache=cache, column_stats=column_stats))
        warm.append(seconds)
        warm_opened = io.stats.opened
        assert plan.files_selected == files
    # building a FileScanTask object per file is for a few files: timed up to 100,000
    tasks_s = _timed(lambda: plan.tasks)[0] if files <= 100_000 else float("nan")
    return {"files": files, "cold": statistics.median(cold), "cold_first": cold[0],
            "warm": statistics.median(warm), "opened": opened, "warm_opened": warm_opened,
            "manifests_read": plan.manifests_read, "tasks_s": tasks_s,
            "cache_mb": cache.nbytes / 1e6}


# A fresh interpreter that opens the table and plans each filter (cold, then warm when asked)
# as a user does: icenb.open(metadata).scan(filter).plan(). Prints JSON.
_PROCESS_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import icenb
table = icenb.open(sys.argv[1])
out = {"open_s": time.perf_counter() - t0, "plans": []}
for f in json.loads(sys.argv[2]):
    row = {}
    for label in ("cold", "warm")[:1 + int(sys.argv[3])]:
        plan = None  # the previous plan (10m: ~2 GB) is not kept while this one is made
        t = time.perf_counter()
        plan = table.scan(f).plan()
        row[label] = time.perf_counter() - t
    row["files"] = plan.files_selected
    del plan
    out["plans"].append(row)
with open("/proc/self/status") as status:  # VmHWM: this interpreter's own peak
    out["rss_mb"] = next(int(x.split()[1]) / 1024 for x in status if x.startswith("VmHWM:"))
print(json.dumps(out))
"""


def _measured(cmd: list[str], timeout: float) -> tuple[float, float, str]:
    """Run ``cmd``: (wall seconds from spawn to exit, peak RSS in MB as rusage has it - which
    includes this process's RSS at the spawn, kept across exec: a child reports its own
    VmHWM instead - and stdout)."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            raise
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            tail = "\n".join(err.read().decode(errors="replace").splitlines()[-30:])
            raise RuntimeError(f"{cmd[:2]} failed (exit {proc.returncode}):\n{tail}")
        del timeout
        return wall, usage.ru_maxrss / 1024, out.read().decode()


def icenb_process(path: Path, flts: Sequence[Filter], warm: bool) -> dict[str, Any]:
    """A fresh interpreter plans ``flts`` (import included): its wall time, peak RSS, and the
    in-process plan times."""
    wall, rss, out = _measured([sys.executable, "-c", _PROCESS_SCRIPT, str(path),
                                json.dumps([f.icenb for f in flts]), str(int(warm))],
                               JAVA_TIMEOUT_S)
    doc: dict[str, Any] = json.loads(out)
    del rss  # this (large) process's RSS at the spawn: the child's VmHWM is in doc
    return {"wall": wall, **doc}


def java_process(path: Path, flt: Filter) -> dict[str, Any] | str:
    """Iceberg Java planning once in a fresh JVM (started by its Python driver): wall time from
    spawn to exit and the JVM's peak RSS."""
    try:
        python = reference_python()
    except ReferenceEnvError as exc:
        return str(exc).split(":")[0]
    request = json.dumps({"metadata": str(path), "runs": 0, "filter": flt.java})
    wall, _, out = _measured([str(python), str(REFERENCE_DIR / "java_plan.py"), request],
                             JAVA_TIMEOUT_S)
    doc: dict[str, Any] = json.loads(out)
    return {"wall": wall, "rss_mb": doc.get("jvm_peak_rss_mb"), "files": doc["files"],
            "plan_s": doc["wall_s"][0]}


def pyiceberg_figures(path: Path, flt: Filter, runs: int) -> dict[str, Any] | str:
    try:
        from pyiceberg.table import StaticTable
    except ImportError:
        return "pyiceberg not installed"
    times: list[float] = []
    files = -1
    for _ in range(runs):
        table = StaticTable.from_metadata(str(path))
        seconds, tasks = _timed(lambda t=table: list(
            t.scan(row_filter=flt.pyiceberg()).plan_files()))
        times.append(seconds)
        files = len(tasks)
        del tasks
    return {"files": files, "cold": statistics.median(times)}


def java_figures(path: Path, flt: Filter, runs: int) -> dict[str, Any] | str:
    """Iceberg Java in a fresh JVM: the first plan (cold) and ``runs`` more (warm)."""
    try:
        python = reference_python()
    except ReferenceEnvError as exc:
        return str(exc).split(":")[0]
    request = json.dumps({"metadata": str(path), "runs": runs, "filter": flt.java})
    proc = subprocess.run([str(python), str(REFERENCE_DIR / "java_plan.py"), request],
                          capture_output=True, timeout=JAVA_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.decode(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"java_plan.py failed (exit {proc.returncode}):\n{tail}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    wall = doc["wall_s"]
    return {"files": doc["files"], "cold": wall[0],
            "warm": statistics.median(wall[1:]) if len(wall) > 1 else wall[0],
            "version": doc["java"], "rss_mb": doc.get("jvm_peak_rss_mb")}


# --------------------------------------------------------------------------- report


def _rate(entries: int, seconds: float) -> str:
    return f"{entries / seconds / 1000:8.0f}k/s" if seconds > 0 else "       -"


def run_size(size: str, runs: int, pyiceberg_runs: int, skip_java: bool,
             skip_pyiceberg: bool) -> dict[str, dict[str, Any]]:
    path = table_metadata_file(size)
    manifests, entries = SIZES[size]
    total = manifests * entries
    results: dict[str, dict[str, Any]] = {}
    for flt in filters():
        # like Java's planFiles (and Scan.plan()): no metrics unless the filter needs them
        row: dict[str, Any] = {"icenb": icenb_figures(path, flt, runs)}
        if flt.name == "full" and total <= 1_000_000:  # 10m: ~8 GB of metric maps
            row["icenb_stats"] = icenb_figures(path, flt, runs, column_stats=True)
        row["icenb_process"] = icenb_process(path, [flt], warm=False)
        row["icenb_process"]["files"] = row["icenb_process"]["plans"][0]["files"]
        if not skip_pyiceberg:
            row["pyiceberg"] = pyiceberg_figures(path, flt, pyiceberg_runs)
        if not skip_java:
            row["java"] = java_figures(path, flt, runs)
            row["java_process"] = java_process(path, flt)
        counts = {k: v["files"] for k, v in row.items() if isinstance(v, dict)}
        assert len(set(counts.values())) == 1, f"{size} {flt.name}: planners disagree {counts}"
        results[flt.name] = row
        print(f"  [{size}] {flt.name}: {counts}", flush=True)

    print(f"\nplanning {total:,} data files in {manifests} manifests (v2, day(ts) x "
          f"bucket(16, id), full stats on {N_COLUMNS} columns); wall seconds, entries/s = "
          f"{total:,} / seconds; icenb cold = median of {runs}; load avg "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  id {TARGET_ID} is in bucket {check_target_id_bucket()}; day = {TARGET_DAY}")
    head = (f"  {'filter':<11} {'files':>7} | {'icenb cold':>19} {'warm':>8} {'tasks':>7} | "
            f"{'PyIceberg':>19} | {'Java cold(1st)':>15} {'Java warm':>19}")
    print(head)
    for name, row in results.items():
        ice = row["icenb"]
        py = row.get("pyiceberg")
        jv = row.get("java")
        py_s = (f"{py['cold']:8.3f} {_rate(total, py['cold'])}" if isinstance(py, dict)
                else f"{'skipped':>19}")
        jv_s = (f"{jv['cold']:15.3f} {jv['warm']:8.3f} {_rate(total, jv['warm'])}"
                if isinstance(jv, dict) else f"{'skipped':>35}")
        print(f"  {name:<11} {ice['files']:7d} | {ice['cold']:8.3f} {_rate(total, ice['cold'])} "
              f"{ice['warm']:8.4f} {ice['tasks_s']:7.3f} | {py_s} | {jv_s}")
    st = results["full"].get("icenb_stats")
    if st is not None:
        print(f"  full, column_stats=True (metric maps rebuilt for every file): "
              f"{st['cold']:8.3f} {_rate(total, st['cold'])}, warm {st['warm']:.4f}")
    print("  (icenb 'tasks' = building the FileScanTask objects afterwards, lazily, if asked; "
          f"cache after a plan with metrics: {results['one id']['icenb']['cache_mb']:.0f} MB)")
    print("  opened files (cold / warm): " + ", ".join(
        f"{n} {r['icenb']['opened']}/{r['icenb']['warm_opened']}" for n, r in results.items()))

    everything = icenb_process(path, filters(), warm=True)
    print("\n  as the issue's table (icenb: Scan.plan(), no column stats returned, as Java's "
          "planFiles; whole process = fresh interpreter or JVM, import and one plan):")
    print("  | plan | icenb cold (in process) | Java (JIT warm) | cold / Java | icenb warm | "
          "warm / Java | icenb whole process | Java whole process | icenb peak RSS | "
          "Java peak RSS (whole JVM) |")
    print("  |---|---|---|---|---|---|---|---|---|---|")
    for name, row in results.items():
        ice, jv, ip, jp = (row["icenb"], row.get("java"), row["icenb_process"],
                           row.get("java_process"))
        j_warm = f"{jv['warm']:.3f} s" if isinstance(jv, dict) else "-"
        ratio = f"{ice['cold'] / jv['warm']:.2f}x" if isinstance(jv, dict) else "-"
        wratio = f"{100 * ice['warm'] / jv['warm']:.1f}%" if isinstance(jv, dict) else "-"
        j_whole = f"{jp['wall']:.1f} s" if isinstance(jp, dict) else "-"
        j_rss = (f"{jp['rss_mb'] / 1024:.2f} GB" if isinstance(jp, dict) and jp["rss_mb"]
                 else "-")
        print(f"  | {name} | {ice['cold']:.3f} s | {j_warm} | {ratio} | {ice['warm']:.4f} s | "
              f"{wratio} | {ip['wall']:.1f} s | {j_whole} | {ip['rss_mb'] / 1024:.2f} GB | "
              f"{j_rss} |")
    print(f"  one process planning all four, each cold then warm (Scan.plan(), shared cache): "
          f"peak RSS {everything['rss_mb'] / 1024:.2f} GB, wall {everything['wall']:.1f} s; "
          + ", ".join(f"{f.name} {p['cold']:.3f}/{p['warm']:.4f} s"
                      for f, p in zip(filters(), everything["plans"], strict=True)))

    print("  targets:")
    for name, row in results.items():
        ice, py, jv = row["icenb"], row.get("pyiceberg"), row.get("java")
        parts = []
        if isinstance(jv, dict):
            ratio = ice["cold"] / jv["warm"]
            parts.append(f"icenb cold / Java warm = {ratio:5.2f}x (goal <= 1x; vs Java "
                         f"1st-in-JVM {ice['cold'] / jv['cold']:4.2f}x)")
            parts.append(f"icenb warm / Java warm = {100 * ice['warm'] / jv['warm']:5.1f}% "
                         "(goal <= 5%)")
            jp = row.get("java_process")
            if name == "one id" and isinstance(jp, dict):
                parts.append(f"whole process icenb / Java = "
                             f"{row['icenb_process']['wall'] / jp['wall']:4.2f}x (goal <= 1x)")
        if isinstance(py, dict):
            parts.append(f"PyIceberg / icenb cold = {py['cold'] / ice['cold']:6.1f}x "
                         "(goal >= 10x)")
        print(f"    {name:<11} " + "; ".join(parts))
    print(f"    peak RSS of the process planning all four cold and warm: "
          f"{everything['rss_mb'] / 1024:.2f} GB (goal <= 1 GB at 1m, 1.5 GB at 10m)")
    for peer in ("pyiceberg", "java"):
        reason = next((r[peer] for r in results.values() if isinstance(r.get(peer), str)), None)
        if reason:
            print(f"  {peer}: skipped ({reason})")
    jv = results["full"].get("java")
    if isinstance(jv, dict):
        print(f"  Iceberg Java: {jv['version']}")
    return results


def run(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser()
    env_sizes = os.environ.get("ICENB_BENCH_PLANNING_SIZES", "100k")
    ap.add_argument("--size", default=env_sizes,
                    help="100k, 1m, 10m or a comma-separated list "
                         "(env ICENB_BENCH_PLANNING_SIZES)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pyiceberg-runs", type=int, default=1)
    ap.add_argument("--skip-java", action="store_true")
    ap.add_argument("--skip-pyiceberg", action="store_true")
    args = ap.parse_args(argv)
    sizes = ["100k", "1m"] if args.size == "both" else [s for s in args.size.split(",") if s]
    out = {}
    for size in sizes:
        if size not in SIZES:
            raise SystemExit(f"unknown size {size!r} (100k, 1m, 10m)")
        out[size] = run_size(size, args.runs, args.pyiceberg_runs, args.skip_java,
                             args.skip_pyiceberg)
    return out


def test_bench_planning() -> None:
    """Prints the figures (collected only when this file is named explicitly)."""
    run([])


if __name__ == "__main__":
    run()
    sys.exit(0)
