"""Benchmark: the changelog of one copy-on-write commit on a 10-million-row table (issue 20).

A v2 table of ``--rows`` rows (default 10,000,000) in ``--files`` data files (default 100, one
per ``g`` partition, 100,000 rows each: ``id long, g int, ts timestamp, s string, v double``) is
written once by icenb and cached in the temp dir (with its two snapshot ids). Its second
snapshot is one copy-on-write ``update`` that changed one row in a thousand of ``--rewritten``
partitions (default 10): it removed 10 data files and added 10, carrying 99.9% of their rows
over. Each figure runs in a fresh process (so its peak RSS is its own; Arrow's pool peak is
printed too), four times: the best of the last three is shown, and the first (cold: lazy
imports, decoding manifests) beside it:

- ``t.changes(before, after)``: the changelog (carry-overs cancelled; 1,000 DELETE + 1,000
  INSERT rows), and with ``identifier_columns="id"`` (1,000 update pairs);
- ``t.diff(before, after).rows()``: the net, the same per-file work;
- reading the touched files: the removed files as of ``before`` and the added ones as of
  ``after``, through icenb's reader (``read_plan``, one file after another, as ``Scan.to_arrow``
  reads) and in the changelog's thread pool (the same reads, parallel): what the changelog
  must at least read;
- reading the ``after`` snapshot (``t.at(after).to_arrow()``, all 10 million rows);
- the peer, Iceberg Java 1.10 (Spark 3.5, ``local[*]``): ``create_changelog_view`` on the same
  table (in the reference environment, one fresh JVM; the seconds of the CALL and the collect,
  JVM start excluded). ``--skip-java`` leaves it out.

The target (issue 20): the changelog costs no more than reading the files it touches.

Run: ``.venv/bin/python tests/benchmarks/bench_changes.py [--rows N] [--files N]
[--rewritten N] [--skip-java]`` or ``.venv/bin/python -m pytest -s
tests/benchmarks/bench_changes.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
import pyarrow as pa

GEN_VERSION = 1  # bump when the generated table changes
RUNS = 4  # per figure: the first (cold: modules, manifests) and the best of the others
NAME = "bench.events"
DDL = "id long not null, g int, ts timestamp, s string, v double"


def _directory(rows: int, files: int, rewritten: int) -> Path:
    return Path(tempfile.gettempdir()) / (
        f"icenb-bench-changes-v{GEN_VERSION}-{rows}x{files}-{rewritten}")


def _generate(directory: Path, rows: int, files: int, rewritten: int) -> None:
    import icenb

    shutil.rmtree(directory, ignore_errors=True)
    wh = icenb.warehouse(directory, catalog="filesystem")
    t = wh.create_table(NAME, DDL, partition_by=["g"], format_version=2)
    per_file = rows // files
    rng = np.random.default_rng(20)
    ids = np.arange(rows, dtype=np.int64)
    words = np.array([f"word-{i:04d}" for i in range(1000)], dtype=object)
    t.append(pa.table({
        "id": ids, "g": pa.array((ids // per_file).astype(np.int32)),
        "ts": pa.array(1_700_000_000_000_000 + ids * 1_000, pa.timestamp("us")),
        "s": pa.array(words[ids % 1000], pa.string()), "v": rng.normal(size=rows)}))
    # one row in a thousand of each rewritten file: s = word-0007 where id % 1000 = 7
    t.update({"s": "changed"}, f"g < {rewritten} and s = 'word-0007'", mode="copy-on-write")
    snaps = [s.snapshot_id for s in t.snapshots]
    (directory / "snapshots.json").write_text(json.dumps(snaps))
    (directory / "DONE").write_text("ok")


def table_directory(rows: int, files: int, rewritten: int) -> Path:
    """The cached table, generated on first use."""
    directory = _directory(rows, files, rewritten)
    if not (directory / "DONE").exists():
        t0 = time.perf_counter()
        _generate(directory, rows, files, rewritten)
        print(f"generated {rows:,} rows in {files} files, then a copy-on-write update of "
              f"{rewritten} of them, in {time.perf_counter() - t0:.0f} s: {directory}",
              flush=True)
    return directory


# --------------------------------------------------------------------------- measures


def _touched(t: Any, before: int, after: int) -> tuple[Any, Any]:
    """The plans of the removed files (as of ``before``) and the added ones (``after``)."""
    from icenb.table.scan.pruning import struct_column

    d = t.diff(before, after)
    removed = {f.path for f in d.data_removed}
    added = {f.path for f in d.data_added}
    out = []
    for sid, paths in ((before, removed), (after, added)):
        plan = t.at(sid).plan()
        all_paths = struct_column(plan.data_entries, "file_path").to_pylist()
        out.append(plan.take(np.asarray([i for i, p in enumerate(all_paths) if p in paths],
                                        dtype=np.int64)))
    return out[0], out[1]


def _measure(what: str, directory: Path) -> dict[str, Any]:
    import icenb
    from icenb.table.explore import changelog
    from icenb.table.scan.read import read_plan, read_task

    t = icenb.warehouse(directory, catalog="filesystem").table(NAME)
    before, after = json.loads((directory / "snapshots.json").read_text())
    fn: Callable[[], int]
    if what == "changes":
        def fn() -> int:
            return t.changes(before, after).num_rows
    elif what == "changes by id":
        def fn() -> int:
            return t.changes(before, after, identifier_columns="id").num_rows
    elif what == "diff rows":
        def fn() -> int:
            removed, added = t.diff(before, after).rows()
            return int(removed.num_rows + added.num_rows)
    elif what in ("touched files", "touched files (pool)"):
        old, new = _touched(t, before, after)
        schema = t.at(after).table_schema
        if what == "touched files":
            def fn() -> int:
                return sum(read_plan(t.io, p, schema).num_rows for p in (old, new))
        else:
            tasks = [*old.tasks, *new.tasks]

            def fn() -> int:
                with ThreadPoolExecutor(changelog.MAX_WORKERS) as pool:
                    return sum(x.num_rows for x in pool.map(
                        lambda task: read_task(t.io, task, schema), tasks))
    elif what == "after snapshot":
        def fn() -> int:
            return int(t.at(after).to_arrow().num_rows)
    else:
        raise SystemExit(f"unknown measure {what!r}")
    pool = pa.default_memory_pool()
    rss0 = _status_mib("VmRSS")
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        rows = fn()
        times.append(time.perf_counter() - t0)
    return {"what": what, "rows": rows, "cold": round(times[0], 2),
            "seconds": round(min(times[1:]), 2), "peak_rss_mib": round(_status_mib("VmHWM")),
            "rss_before_mib": round(rss0), "arrow_peak_mib": round(pool.max_memory() / 2**20)}


def _status_mib(key: str) -> float:
    """A memory figure of this process (``/proc/self/status``; ``VmHWM`` is its peak RSS,
    which, unlike ``ru_maxrss``, does not carry the parent's peak across ``exec``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _java(directory: Path) -> dict[str, Any] | str:
    from tests.reference_fixtures import ReferenceEnvError, run_reference_batch

    before, after = json.loads((directory / "snapshots.json").read_text())
    os.environ.setdefault("ICENB_REF_SERVER", "0")  # a JVM of its own
    request = {"op": "changelog", "warehouse": str(directory), "table": NAME, "start": before,
               "end": after, "identifier_columns": None, "count_only": True}
    try:
        [result] = run_reference_batch("java_changelog.py", [request])
    except ReferenceEnvError as e:
        return f"unavailable ({str(e).splitlines()[0]})"
    if not result.get("ok"):
        return f"failed: {result.get('error')}"
    return {"rows": result["count"], "seconds": result["seconds"]}


MEASURES = ("changes", "changes by id", "diff rows", "touched files", "touched files (pool)",
            "after snapshot")


def run(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--rewritten", type=int, default=10)
    ap.add_argument("--skip-java", action="store_true")
    args = ap.parse_args(argv)
    directory = table_directory(args.rows, args.files, args.rewritten)
    print(f"table: {args.rows:,} rows in {args.files} files; one copy-on-write update "
          f"rewrote {args.rewritten} files (cpu cores: {os.cpu_count()})")
    results: dict[str, Any] = {}
    for what in MEASURES:
        out = subprocess.run([sys.executable, __file__, "--child", what, str(directory)],
                             capture_output=True, text=True, check=True)
        results[what] = json.loads(out.stdout.strip().splitlines()[-1])
    if not args.skip_java:
        results["java"] = _java(directory)
    print(f"  {'':34}{'rows':>12}{'seconds':>9}{'(cold)':>8}{'peak RSS MiB':>14}"
          f"{'(at start)':>12}{'Arrow peak MiB':>16}")
    for what in MEASURES:
        r = results[what]
        print(f"  {what:34}{r['rows']:>12,}{r['seconds']:>9.2f}{r['cold']:>8.2f}"
              f"{r['peak_rss_mib']:>14,}{r['rss_before_mib']:>12,}{r['arrow_peak_mib']:>16,}")
    java = results.get("java")
    if isinstance(java, dict):
        print(f"  {'Iceberg Java create_changelog_view':34}{java['rows']:>12,}"
              f"{java['seconds']:>9.2f}{'(JVM)':>14}")
    elif java is not None:
        print(f"  Iceberg Java: {java}")
    ch, touched = results["changes"], results["touched files"]
    pooled = results["touched files (pool)"]
    print(f"  changelog / reading the touched files: {ch['seconds'] / touched['seconds']:.2f}x "
          f"time (one file after another), {ch['seconds'] / pooled['seconds']:.2f}x "
          f"(same thread pool); peak RSS {ch['peak_rss_mib'] / touched['peak_rss_mib']:.2f}x, "
          f"Arrow peak {ch['arrow_peak_mib'] / max(touched['arrow_peak_mib'], 1):.2f}x")
    return results


def test_bench_changes() -> None:
    """Prints the figures (collected only when this file is named explicitly)."""
    run([])


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        print(json.dumps(_measure(sys.argv[2], Path(sys.argv[3]))))
    else:
        run()
    sys.exit(0)
