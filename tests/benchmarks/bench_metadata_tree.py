"""Benchmark: ``Table.metadata_tree()`` of a snapshot with 1,000 manifests, built and drawn
(target: well under 1 s; only the drawn manifests are read).

Builds a v2 table with N_MANIFESTS fast appends (manifest merging off), then times, cold (a
fresh FileIO cache) and warm, the build (manifest list + drawn manifests), the DOT and text,
and the HTML card (graph renderer off: drawing SVG is Graphviz's time, not ours). Medians of
RUNS runs; nothing here asserts on time.

Run: ``python tests/benchmarks/bench_metadata_tree.py`` or
``pytest -s tests/benchmarks/bench_metadata_tree.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyarrow as pa

import icenb
from icenb.display import mimebundle
from icenb.display.metadata_tree import metadata_tree_dot, metadata_tree_text
from icenb.io.manifest_reader import ManifestCache
from icenb.table.explore.metadata_tree import build_metadata_tree

N_MANIFESTS = 1_000
RUNS = 5


def _table(root: str) -> icenb.Table:
    t = icenb.warehouse(root).create_table(
        "db.t", "id long, p string", partition_by="p", format_version=2,
        properties={"commit.manifest-merge.enabled": "false"})
    for i in range(N_MANIFESTS):
        t.append(pa.table({"id": pa.array([i, i + 1], pa.int64()), "p": ["a", "b"]}))
    return t.refresh()


def _median(fn: object) -> float:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def test_bench_metadata_tree() -> None:
    with tempfile.TemporaryDirectory() as root:
        t0 = time.perf_counter()
        t = _table(root)
        print(f"setup: {N_MANIFESTS} appends in {time.perf_counter() - t0:.1f} s")
        with icenb.set_options(display_graph_renderer="none"):
            tree = t.metadata_tree()
            assert tree.index is not None and tree.index.manifests_total == N_MANIFESTS
            cold = _median(lambda: build_metadata_tree(t.io, t.metadata,
                                                        cache=ManifestCache()))
            warm = _median(t.metadata_tree)
            draw = _median(lambda: (metadata_tree_dot(tree), metadata_tree_text(tree)))
            html = _median(lambda: mimebundle(tree))
            total = _median(lambda: mimebundle(build_metadata_tree(
                t.io, t.metadata, cache=ManifestCache())))
        print(f"build cold {cold * 1000:.1f} ms, warm {warm * 1000:.1f} ms; "
              f"DOT+text {draw * 1000:.1f} ms; HTML card {html * 1000:.1f} ms; "
              f"cold build + card {total * 1000:.1f} ms")


if __name__ == "__main__":
    test_bench_metadata_tree()
