"""Benchmark: the driver's work when Spark reads a table with very many files through ``icenb``.

``spark.read.format("icenb").load(table)`` runs ``IcenbReader.partitions()`` on the driver, then
Spark pickles every partition and ships it to an executor. On the synthetic 100,000-file v2
table of :mod:`tests.benchmarks.bench_planning` (metadata only: its data files do not exist, so
only driver-side work is measured) this times, without a JVM:

- *new* (icenb now): ``IcenbDataSource(options).reader(schema).partitions()`` - planning
  (``plan_files``: Arrow), packing on the Arrow file sizes, and one Arrow slice of the plan per
  partition; then pickling every partition as Spark does (``CPickleSerializer``).
- *old* (the peer, the former implementation, inline below): the same plan, then
  ``plan.tasks`` (one ``FileScanTask`` per file), next-fit packing task by task, partitions
  holding the pickled tasks; the same pickling.

Figures: wall seconds (median of ``--runs``; planning cold = a fresh FileIO and manifest cache
per run), pickled partition sizes, and, for a sample of partitions, what an executor then does
per partition (unpickle; new: also decode the slice and build its tasks). Both paths must make
the same partitions (asserted: the same files per partition; the same tasks on the sample).
Nothing asserts on time.

Run: ``.venv/bin/python tests/benchmarks/bench_spark_driver.py [--size 100k|1m] [--runs 3]
[--split-sizes default,1073741824] [--sample 500]`` or ``.venv/bin/python -m pytest -s
tests/benchmarks/bench_spark_driver.py``.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyspark.serializers import CPickleSerializer
from pyspark.sql.datasource import InputPartition

from icenb.spark.datasource import (
    DEFAULT_OPEN_FILE_COST,
    DEFAULT_SPLIT_SIZE,
    IcenbDataSource,
    ScanPartition,
)
from icenb.spec.manifest import FileScanTask
from icenb.table.scan import Scan
from tests.benchmarks.bench_planning import SIZES, table_metadata_file
from tests.spark.test_datasource import _next_fit as old_pack  # the former packing

SPARK_PICKLE = CPickleSerializer()  # what Spark's planner worker pickles partitions with


# --------------------------------------------------------------------------- the old path


class OldScanPartition(InputPartition):
    """The former partition: the pickled FileScanTasks with the read state."""

    def __init__(self, index: int, tasks: Sequence[FileScanTask], io: Any, schema: Any,
                 name_mapping: Any) -> None:
        super().__init__(index)
        self.index = index
        self.tasks = tuple(tasks)
        self.io = io
        self.schema = schema
        self.name_mapping = name_mapping




def old_partitions(scan: Scan, split: int, cost: int) -> tuple[list[OldScanPartition],
                                                               dict[str, float]]:
    """The former ``partitions()``: plan, tasks, pack; with the time of each step."""
    steps: dict[str, float] = {}
    t0 = time.perf_counter()
    plan = scan.plan()
    steps["plan"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tasks = plan.tasks
    steps["tasks"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    parts = [OldScanPartition(i, g, scan.io, scan.schema, scan.name_mapping)
             for i, g in enumerate(old_pack(tasks, split, cost))]
    steps["pack"] = time.perf_counter() - t0
    return parts, steps


# --------------------------------------------------------------------------- measuring


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def _source(table_dir: Path, split: int | None) -> IcenbDataSource:
    options = {"path": str(table_dir)}
    if split is not None:
        options["split-size"] = str(split)
    return IcenbDataSource(options)


def _sizes(blobs: list[bytes]) -> dict[str, float]:
    lengths = [len(b) for b in blobs]
    return {"total_mb": sum(lengths) / 1e6, "mean_kb": statistics.mean(lengths) / 1e3,
            "max_kb": max(lengths) / 1e3}


def _executor_us(blobs: list[bytes], sample: list[int], build: bool) -> float:
    """Mean microseconds per sampled partition to unpickle it (and build its tasks)."""
    gc.collect()
    t0 = time.perf_counter()
    for i in sample:
        part = pickle.loads(blobs[i])
        if build:
            part.tasks  # noqa: B018 - decoded and built on first access
    return (time.perf_counter() - t0) / max(len(sample), 1) * 1e6


def run_split(table_dir: Path, split: int | None, runs: int, sample_size: int
              ) -> dict[str, Any]:
    split_bytes = split or DEFAULT_SPLIT_SIZE
    cost = DEFAULT_OPEN_FILE_COST
    new_cold: list[float] = []
    new_warm: list[float] = []
    new_pickle: list[float] = []
    parts: list[ScanPartition] = []
    blobs: list[bytes] = []
    for _ in range(runs):
        source = _source(table_dir, split)  # a fresh FileIO: planning reads every manifest
        reader = source.reader(source.schema())
        seconds, parts = _timed(reader.partitions)
        new_cold.append(seconds)
        seconds, parts = _timed(reader.partitions)  # manifests cached: no planning I/O
        new_warm.append(seconds)
        seconds, blobs = _timed(lambda p=parts: [SPARK_PICKLE.dumps(x) for x in p])
        new_pickle.append(seconds)
    scan = _source(table_dir, split)._read_state().scan()
    plan_cold = [_timed(lambda s=scan: _source(table_dir, split)._read_state().scan().plan())[0]
                 for _ in range(runs)]
    plan_warm = statistics.median(_timed(scan.plan)[0] for _ in range(max(runs, 3)))

    old_steps: list[dict[str, float]] = []
    old_pickle: list[float] = []
    old: list[OldScanPartition] = []
    old_blobs: list[bytes] = []
    for _ in range(runs):
        old = []
        old_blobs = []
        gc.collect()
        old, steps = old_partitions(scan, split_bytes, cost)  # planning warm (cache of scan.io)
        old_steps.append(steps)
        seconds, old_blobs = _timed(lambda p=old: [SPARK_PICKLE.dumps(x) for x in p])
        old_pickle.append(seconds)

    # The same partitions: the same number of files in each, the same tasks on the sample.
    assert [p.files for p in parts] == [len(p.tasks) for p in old], "packing differs"
    step = max(len(parts) // sample_size, 1)
    sample = list(range(0, len(parts), step))[:sample_size]
    for i in sample:
        assert list(pickle.loads(blobs[i]).tasks) == list(old[i].tasks), f"partition {i}"
    return {
        "split": split_bytes, "partitions": len(parts), "files": sum(p.files for p in parts),
        "plan_cold": statistics.median(plan_cold), "plan_warm": plan_warm,
        "new_cold": statistics.median(new_cold), "new_warm": statistics.median(new_warm),
        "new_pickle": statistics.median(new_pickle), "new_sizes": _sizes(blobs),
        "old_tasks": statistics.median(s["tasks"] for s in old_steps),
        "old_pack": statistics.median(s["pack"] for s in old_steps),
        "old_pickle": statistics.median(old_pickle), "old_sizes": _sizes(old_blobs),
        "new_exec_us": _executor_us(blobs, sample, True),
        "old_exec_us": _executor_us(old_blobs, sample, False), "sample": len(sample),
    }


def _report(size: str, r: dict[str, Any]) -> None:
    n = r["partitions"]
    old_build = r["old_tasks"] + r["old_pack"]
    new_build = r["new_warm"] - r["plan_warm"]  # partitions() with planning cached, less it
    old_total = r["plan_cold"] + old_build + r["old_pickle"]
    new_total = r["new_cold"] + r["new_pickle"]
    os_, ns = r["old_sizes"], r["new_sizes"]
    print(f"\n[{size}] {r['files']:,} files, split-size {r['split']:,} B, open-file-cost "
          f"{DEFAULT_OPEN_FILE_COST:,} B -> {n:,} partitions (same packing both ways)")
    print(f"  {'driver, wall s':<40} {'old (per-file tasks)':>22} {'new (Arrow slices)':>20}")
    print(f"  {'plan_files (cold)':<40} {r['plan_cold']:22.3f} {r['plan_cold']:20.3f}")
    print(f"  {'build partitions (planning excluded)':<40} {old_build:22.3f} {new_build:20.3f}")
    print(f"  {'  of which FileScanTasks / packing':<40} "
          f"{r['old_tasks']:10.3f} / {r['old_pack']:9.3f} {'-':>20}")
    print(f"  {'pickle partitions (as Spark)':<40} {r['old_pickle']:22.3f} "
          f"{r['new_pickle']:20.3f}")
    print(f"  {'partitions() cold + pickle':<40} {old_total:22.3f} {new_total:20.3f}"
          f"   ({old_total / new_total:.1f}x)")
    print(f"  {'pickled partitions: total MB':<40} {os_['total_mb']:22.1f} {ns['total_mb']:20.1f}")
    print(f"  {'  mean / max kB per partition':<40} "
          f"{os_['mean_kb']:12.2f} / {os_['max_kb']:7.2f} "
          f"{ns['mean_kb']:10.2f} / {ns['max_kb']:7.2f}")
    print(f"  {'executor per partition, us (sample ' + str(r['sample']) + ')':<40} "
          f"{r['old_exec_us']:22.0f} {r['new_exec_us']:20.0f}   (old: unpickle; new: "
          "unpickle + decode + build tasks)")


def run(argv: Sequence[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="100k", help="100k or 1m (the bench_planning tables)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--split-sizes", default=f"default,{1024**3}",
                    help="split sizes in bytes, comma separated ('default': the table's)")
    ap.add_argument("--sample", type=int, default=500,
                    help="partitions checked and timed on the executor side")
    args = ap.parse_args(argv)
    if args.size not in SIZES:
        raise SystemExit(f"unknown size {args.size!r} (100k, 1m)")
    table_dir = table_metadata_file(args.size).parent.parent
    print(f"table {table_dir}; median of {args.runs} runs; load avg {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    results = []
    for text in args.split_sizes.split(","):
        split = None if text.strip() == "default" else int(text)
        result = run_split(table_dir, split, args.runs, args.sample)
        _report(args.size, result)
        results.append(result)
    return {args.size: results}


def test_bench_spark_driver() -> None:
    """Prints the figures (collected only when this file is named explicitly)."""
    run([])


if __name__ == "__main__":
    run()
    sys.exit(0)
