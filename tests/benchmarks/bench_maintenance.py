"""Benchmark: ``rewrite_manifests`` and ``rewrite_position_deletes`` on a local v2 table.

The table gets APPENDS appends of 100 rows over 10 partitions (one manifest each: merging off)
and DELETES merge-on-read deletes of one row each (one position delete file each); then both
rewrites run once, position deletes first (they change the table: a second run has nothing
to do). Prints the counts and seconds; the rows read the same after both. Nothing here asserts
on time.

Run: ``python tests/benchmarks/bench_maintenance.py`` or
``pytest -s tests/benchmarks/bench_maintenance.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.spec.properties import MANIFEST_MERGE_ENABLED, WRITE_DELETE_MODE

APPENDS = 300
DELETES = 60


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as root:
        t = icenb.warehouse(root).create_table(
            "db.t", "id long, p string", format_version=2, partition_by="p",
            properties={MANIFEST_MERGE_ENABLED: "false", WRITE_DELETE_MODE: "merge-on-read"})
        for i in range(APPENDS):
            t.append([{"id": 100 * i + j, "p": "abcdefghij"[j % 10]} for j in range(100)])
        for k in range(DELETES):
            t.delete(f"id = {k * 7}")
        rows = t.scan().to_arrow().sort_by("id")
        started = time.perf_counter()
        deletes = t.rewrite_position_deletes()
        deletes_s = time.perf_counter() - started
        started = time.perf_counter()
        manifests = t.rewrite_manifests()
        manifests_s = time.perf_counter() - started
        assert t.scan().to_arrow().sort_by("id").equals(rows)
    print(f"rewrite_manifests: {manifests.rewritten_manifests_count} -> "
          f"{manifests.added_manifests_count} manifests in {manifests_s:.2f} s")
    print(f"rewrite_position_deletes: {deletes.rewritten_delete_files_count} -> "
          f"{deletes.added_delete_files_count} delete files in {deletes_s:.2f} s")
    return {"rewrite_manifests_s": manifests_s, "rewrite_position_deletes_s": deletes_s}


def test_bench_maintenance() -> None:
    run()


if __name__ == "__main__":
    run()
