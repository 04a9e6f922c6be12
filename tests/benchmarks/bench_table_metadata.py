"""Benchmark: loading table metadata with 10,000 snapshots (DESIGN.md "Metadata at columnar speed").

Prints ``json.load`` of the file against icenb's loader (lazy snapshots and logs), icenb's strict
load (every snapshot parsed and checked), a few lookups, writing, and two peers timed in the same
run on the same file: PyIceberg (``TableMetadataUtil.parse_raw``; a dev dependency) and Iceberg
Java (``TableMetadataParser.fromJson`` in a warmed-up JVM, tests/reference/java_bench.py in the
reference environment). Figures are medians of RUNS runs; nothing here asserts on time. A peer
that is not installed is reported as skipped; a peer that fails, or reads a different number of
snapshots, fails the benchmark.

Run: ``python tests/benchmarks/bench_table_metadata.py`` or
``pytest -s tests/benchmarks/bench_table_metadata.py``.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb.spec.table_metadata as tm
from icenb.spec.table_metadata import table_metadata_from_json, to_json_string
from tests.reference_fixtures import REFERENCE_DIR, ReferenceEnvError, reference_python

N_SNAPSHOTS = 10_000
RUNS = 7
JAVA_WARMUP = 20  # parses before timing, for the JIT
JAVA_TIMEOUT_S = 300


def synthetic_metadata(n: int = N_SNAPSHOTS, seed: int = 7) -> dict[str, Any]:
    """A v2 document shaped like a busy Spark-written table: n snapshots with full summaries."""
    rnd = random.Random(seed)
    ts = 1_700_000_000_000
    snapshots: list[dict[str, Any]] = []
    log: list[dict[str, Any]] = []
    parent = None
    for i in range(n):
        sid = rnd.getrandbits(62)
        ts += rnd.randint(1, 100_000)
        snap: dict[str, Any] = {
            "sequence-number": i + 1,
            "snapshot-id": sid,
            "timestamp-ms": ts,
            "summary": {
                "operation": rnd.choice(["append", "append", "overwrite", "delete"]),
                "spark.app.id": "local-1700000000000", "added-data-files": "1",
                "added-records": "100", "added-files-size": "1234",
                "changed-partition-count": "1", "total-records": str(100 * (i + 1)),
                "total-files-size": str(1234 * (i + 1)), "total-data-files": str(i + 1),
                "total-delete-files": "0", "total-position-deletes": "0",
                "total-equality-deletes": "0", "engine-version": "3.5.4",
                "app-id": "local-1700000000000", "engine-name": "spark",
                "iceberg-version": "Apache Iceberg 1.10.0",
            },
            "manifest-list": f"s3://bucket/wh/db/events/metadata/snap-{sid}-1-"
                             f"{rnd.getrandbits(64):016x}.avro",
            "schema-id": min(i // 2500, 3),
        }
        if parent is not None:
            snap["parent-snapshot-id"] = parent
        parent = sid
        snapshots.append(snap)
        log.append({"timestamp-ms": ts, "snapshot-id": sid})
    fields = [{"id": 1, "name": "id", "required": True, "type": "long"},
              {"id": 2, "name": "kind", "required": False, "type": "string"},
              {"id": 3, "name": "ts", "required": False, "type": "timestamptz"}]
    schemas = []
    for s in range(4):
        fields = [*fields, {"id": 4 + s, "name": f"c{s}", "required": False, "type": "double"}]
        schemas.append({"type": "struct", "schema-id": s, "fields": fields})
    return {
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://bucket/wh/db/events",
        "last-sequence-number": n,
        "last-updated-ms": ts,
        "last-column-id": 7,
        "current-schema-id": 3,
        "schemas": schemas,
        "default-spec-id": 1,
        "partition-specs": [
            {"spec-id": 0, "fields": [{"name": "ts_day", "transform": "day", "source-id": 3,
                                       "field-id": 1000}]},
            {"spec-id": 1, "fields": [{"name": "ts_day", "transform": "day", "source-id": 3,
                                       "field-id": 1000},
                                      {"name": "id_bucket", "transform": "bucket[16]",
                                       "source-id": 1, "field-id": 1001}]},
        ],
        "last-partition-id": 1001,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"write.format.default": "parquet"},
        "current-snapshot-id": parent,
        "refs": {
            "main": {"snapshot-id": parent, "type": "branch"},
            "audit": {"snapshot-id": snapshots[n // 2]["snapshot-id"], "type": "branch"},
            "v1": {"snapshot-id": snapshots[n // 4]["snapshot-id"], "type": "tag"},
        },
        "snapshots": snapshots,
        "statistics": [],
        "partition-statistics": [],
        "snapshot-log": log,
        "metadata-log": [{"timestamp-ms": ts - k, "metadata-file":
                          f"s3://bucket/wh/db/events/metadata/{k:05d}-x.metadata.json"}
                         for k in range(100)],
    }


def median_time(fn: Callable[[], Any], runs: int = RUNS) -> float:
    """Median CPU time of ``fn`` (process time: stable when other jobs share the cores)."""
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
        del result
    return statistics.median(times)


def pyiceberg_loader() -> Callable[[str], Any] | None:
    """PyIceberg's parser of metadata JSON text (what its catalogs call), if installed."""
    try:
        from pyiceberg.table.metadata import TableMetadataUtil
    except ImportError:
        return None
    return TableMetadataUtil.parse_raw


def java_parse_times(path: Path, runs: int = RUNS) -> dict[str, Any] | str:
    """Iceberg Java's fromJson timings on ``path`` (java_bench.py), or why the peer is skipped.

    A missing reference environment skips the peer; anything else going wrong raises.
    """
    try:
        python = reference_python()
    except ReferenceEnvError as exc:
        return str(exc).split(":")[0]
    proc = subprocess.run(
        [str(python), str(REFERENCE_DIR / "java_bench.py"), str(path), str(runs),
         "--warmup", str(JAVA_WARMUP)],
        cwd=path.parent, capture_output=True, timeout=JAVA_TIMEOUT_S, check=False,
    )
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.decode(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"java_bench.py failed (exit {proc.returncode}):\n{tail}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    if doc["snapshots"] != N_SNAPSHOTS:
        raise RuntimeError(f"Iceberg Java read {doc['snapshots']} snapshots, not {N_SNAPSHOTS}")
    return doc


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "00001-bench.metadata.json"
        path.write_text(json.dumps(synthetic_metadata(), indent=2))
        size_mb = path.stat().st_size / 1e6
        gc.collect()  # measure every loader against the same (small) heap

        def json_load() -> Any:
            with open(path, "rb") as f:
                return json.load(f)

        def icenb_load() -> Any:
            return table_metadata_from_json(path.read_bytes(), file=str(path))

        def icenb_lookups() -> Any:
            md = icenb_load()
            snap = md.current_snapshot()
            md.snapshot_as_of(snap.timestamp_ms - 1)
            return sum(1 for _ in md.ancestors(snap.snapshot_id))

        def icenb_strict() -> Any:
            return table_metadata_from_json(path.read_bytes(), file=str(path), strict=True)

        figures = {
            "json.load": median_time(json_load),
            "icenb load (lazy)": median_time(icenb_load),
            "icenb load + current/as-of/ancestors": median_time(icenb_lookups),
            "icenb load, strict (all parsed)": median_time(icenb_strict),
        }
        if tm._orjson is not None:
            saved, tm._orjson = tm._orjson, None
            try:
                figures["icenb load (lazy), stdlib json"] = median_time(icenb_load)
            finally:
                tm._orjson = saved
        peer = pyiceberg_loader()
        if peer is not None:
            n = len(peer(path.read_text(encoding="utf-8")).snapshots)
            if n != N_SNAPSHOTS:
                raise RuntimeError(f"PyIceberg read {n} snapshots, not {N_SNAPSHOTS}")
            figures["PyIceberg TableMetadataUtil.parse_raw"] = median_time(
                lambda: peer(path.read_text(encoding="utf-8")))
        md = icenb_strict()
        figures["icenb write (to_json_string)"] = median_time(lambda: to_json_string(md))
        if tm._orjson is not None:
            saved, tm._orjson = tm._orjson, None
            try:
                figures["icenb write, stdlib json"] = median_time(lambda: to_json_string(md))
            finally:
                tm._orjson = saved
        java = java_parse_times(path)  # last: no JVM runs while Python is timed

    if isinstance(java, dict):
        figures["Iceberg Java fromJson(String), wall"] = statistics.median(java["wall_s"])
        figures["Iceberg Java fromJson(String), thread CPU"] = statistics.median(
            java["thread_cpu_s"])
    base = figures["json.load"]
    print(f"\ntable metadata: {N_SNAPSHOTS} snapshots, {N_SNAPSHOTS} snapshot-log entries, "
          f"{size_mb:.1f} MB; median of {RUNS} runs; orjson "
          f"{'used' if tm._orjson is not None else 'not installed'}\n"
          "  (Python rows: process CPU time; peers parse the same file in the same run)")
    for name, seconds in figures.items():
        print(f"  {name:<44} {seconds * 1000:8.1f} ms   {seconds / base:5.2f}x json.load")
    if peer is None:
        print("  PyIceberg: not importable in this environment (peer skipped)")
    if isinstance(java, dict):
        print(f"  Iceberg Java: {java['java']['iceberg'].split(' (')[0]} on Java "
              f"{java['java']['java']}, parse only (the text is a Java String already) after "
              f"{java['warmup']} warm-up parses;\n"
              f"    each run includes one Py4J call (~{java['call_overhead_s'] * 1000:.1f} ms); "
              "thread CPU leaves out the JIT and GC threads")
    else:
        print(f"  Iceberg Java: peer skipped ({java})")
    return figures


def test_bench_table_metadata() -> None:
    """Prints the figures (collected only when this file is named explicitly)."""
    run()


if __name__ == "__main__":
    run()
    sys.exit(0)
