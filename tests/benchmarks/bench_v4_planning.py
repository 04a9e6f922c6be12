"""Benchmark: planning a large format-version 4 table (files in leaves) vs its v3 twin.

Issue 7; docs/v4-layout.md#planning (v4 planning converts leaf entries to v3's entry table). Twin
tables, format-version 3 and 4, same schema (8 columns: ``id long, p int, a long, b int,
c double, d string, e long, f int``, identity-partitioned by ``p``), same files: ``--manifests``
metadata-level appends (default 100) of ``--per-manifest`` :class:`DataFile` records (default
1,000; no file behind them) with full column stats on all 8 columns (column sizes, value / null /
NaN counts, lower and upper bounds), as ``bench_planning.py`` builds its table. v3
``FastAppend`` writes one manifest per append, v4 ``V4Append`` one leaf per append.

Per twin and filter (everything; ``id`` in one file's range; ``p`` = one partition):

- *cold*: a new FileIO, an empty ManifestCache and the process-wide cache of decoded v4
  manifests cleared (median of ``--runs``);
- *warm*: re-planned with the ManifestCache populated (median of ``--runs``).

Both twins must select the same data files (paths) for every filter, and a leaf's entry
table must be the same through the columnar path and the entry objects (asserted); nothing
asserts on time.

Run: ``python tests/benchmarks/bench_v4_planning.py [--manifests 100] [--per-manifest 1000]
[--runs 3]`` or ``pytest -s tests/benchmarks/bench_v4_planning.py``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import ManifestCache
from icenb.io.root_manifest import (
    clear_decoded_manifests,
    decode_content_manifest,
    decode_content_manifest_table,
    read_root_manifest,
)
from icenb.spec.content_entry import InheritFrom, inherit
from icenb.spec.manifest import DataFile, FileFormat
from icenb.table.commit.producer import FastAppend, commit_snapshot
from icenb.table.commit.v4_append import V4Append
from icenb.table.scan.planning import ScanPlan, plan_files
from icenb.table.scan.v4_planning import _data_leaf_table, entries_table
from icenb.table.table import Table

SCHEMA = "id long, p int, a long, b int, c double, d string, e long, f int"
ROWS_PER_FILE = 100
FILES_PER_PARTITION = 500


def _long(v: int) -> bytes:
    return struct.pack("<q", v)


def _int(v: int) -> bytes:
    return struct.pack("<i", v)


def _double(v: float) -> bytes:
    return struct.pack("<d", v)


def _files(root: str, start: int, count: int) -> list[DataFile]:
    """``count`` data file records for files ``start ..``: 100 rows, ids
    ``[100 i, 100 i + 99]``, ``p = i // 500``, full metrics on the 8 columns."""
    out = []
    ids = range(1, 9)
    for i in range(start, start + count):
        lo, p = i * ROWS_PER_FILE, i // FILES_PER_PARTITION
        lower = {1: _long(lo), 2: _int(p), 3: _long(i), 4: _int(i % 1000), 5: _double(-i),
                 6: f"d{i:07d}".encode(), 7: _long(2 * i), 8: _int(i % 7)}
        upper = {1: _long(lo + ROWS_PER_FILE - 1), 2: _int(p), 3: _long(i + 50),
                 4: _int(i % 1000 + 9), 5: _double(i), 6: f"e{i:07d}".encode(),
                 7: _long(2 * i + 9), 8: _int(i % 7 + 3)}
        out.append(DataFile(
            file_path=f"{root}/shared/data/p={p}/f-{i:07d}.parquet",
            file_format=FileFormat.PARQUET, partition=(p,), record_count=ROWS_PER_FILE,
            file_size_in_bytes=10_000 + i % 97,
            column_sizes={c: 600 + c for c in ids},
            value_counts=dict.fromkeys(ids, ROWS_PER_FILE),
            null_value_counts={c: c % 2 for c in ids},
            nan_value_counts={5: 0},
            lower_bounds=lower, upper_bounds=upper))
    return out


def _append(t: Table, files: Sequence[DataFile]) -> None:
    catalog, identifier = t._writable()
    producer = (V4Append if t.metadata.format_version >= 4 else FastAppend)(
        catalog, identifier, t.io)
    producer.add_files(files)
    commit_snapshot(t, producer)


def build(root: str, manifests: int, per_manifest: int) -> tuple[Table, Table]:
    """The v3 and v4 twins, ``manifests`` appends of ``per_manifest`` files each."""
    wh = icenb.warehouse(f"{root}/wh")
    twins = tuple(wh.create_table(f"db.t_v{v}", SCHEMA, partition_by=["p"], format_version=v)
                  for v in (3, 4))
    for k in range(manifests):
        batch = _files(root, k * per_manifest, per_manifest)
        for t in twins:
            _append(t, batch)
    return twins[0].refresh(), twins[1].refresh()  # type: ignore[no-any-return]


def _median(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def figures(t: Table, row_filter: str, runs: int) -> tuple[float, float, ScanPlan]:
    """Cold and warm planning seconds (medians) and the plan."""
    def cold() -> ScanPlan:
        clear_decoded_manifests()
        return plan_files(FileIO(), t.metadata, row_filter=row_filter, cache=ManifestCache())

    cold_s, plan = _median(cold, runs)
    io, cache = FileIO(), ManifestCache(max_entries=1_000_000)
    plan_files(io, t.metadata, row_filter=row_filter, cache=cache)
    warm_s, _ = _median(lambda: plan_files(io, t.metadata, row_filter=row_filter,
                                           cache=cache), runs)
    return cold_s, warm_s, plan


def same_leaf_tables(t: Table) -> None:
    """The columnar leaf path and the entry-object path give equal entry tables (first
    leaf, with and without column stats)."""
    md = t.metadata
    snap = md.current_snapshot()
    assert snap is not None and snap.root_manifest is not None
    io, specs = FileIO(), dict(md.specs_by_id)
    root = read_root_manifest(io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    leaf = next(e for e in root.entries if e.content_type.is_manifest)
    data = io.new_input(leaf.location).read()
    kind, raw = decode_content_manifest_table(leaf.location, data)
    m = decode_content_manifest(leaf.location, data)
    entries = inherit(m.entries, InheritFrom.from_root_entry(leaf), file=leaf.location)
    for stats in (True, False):
        fast = _data_leaf_table(leaf, kind, raw, leaf.location, specs, md.schema, stats,
                                snap.root_manifest)
        slow = entries_table(entries, manifest_path=leaf.location, specs=specs,
                             schema=md.schema, column_stats=stats)
        assert fast is not None and fast.equals(slow, check_metadata=True)


def _paths(plan: ScanPlan) -> list[str]:
    return sorted(plan.files.column("file_path").to_pylist())


def run(manifests: int = 100, per_manifest: int = 1_000, runs: int = 3) -> dict[str, Any]:
    """Build the twins, plan each filter cold and warm, print and return the figures."""
    n = manifests * per_manifest
    filters = [("everything", "true"),
               ("one id", f"id = {(n // 3) * ROWS_PER_FILE + 7}"),
               ("one partition", f"p = {(n // 2) // FILES_PER_PARTITION}")]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        v3, v4 = build(Path(tmp).as_posix(), manifests, per_manifest)
        same_leaf_tables(v4)
        print(f"setup: {n} files in {manifests} manifests / leaves per twin, "
              f"{time.perf_counter() - t0:.1f} s")
        print(f"{'filter':<16}{'files':>8}  {'v3 cold':>9}{'v4 cold':>9}{'v4/v3':>7}"
              f"  {'v3 warm':>9}{'v4 warm':>9}{'v4/v3':>7}")
        for label, flt in filters:
            c3, w3, p3 = figures(v3, flt, runs)
            c4, w4, p4 = figures(v4, flt, runs)
            assert _paths(p3) == _paths(p4), label
            assert p3.files.num_rows > 0
            out[label] = {"files": p3.files.num_rows, "v3": (c3, w3), "v4": (c4, w4)}
            print(f"{label:<16}{p3.files.num_rows:>8}  {c3:>8.3f}s{c4:>8.3f}s{c4 / c3:>6.2f}x"
                  f"  {w3:>8.3f}s{w4:>8.3f}s{w4 / w3:>6.2f}x")
    return out


def test_bench_v4_planning() -> None:
    run()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--manifests", type=int, default=100, help="appends (manifests/leaves)")
    parser.add_argument("--per-manifest", type=int, default=1_000, help="files per append")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    args = parser.parse_args(argv)
    run(args.manifests, args.per_manifest, args.runs)


if __name__ == "__main__":
    main()
