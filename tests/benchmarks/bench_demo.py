"""Benchmark: building the demo warehouse (issue 19: under 30 s on the 2-core machine).

Times ``python -m icenb.demo`` in a fresh process (the user's cost, import included) and
``icenb.demo.build`` in this one, with peak memory (tracemalloc, Python allocations). The peer:
PyIceberg 0.12 creating ``shop.events``'s schema and appending the same four days of rows in
four commits, the part of the build both libraries can do (it has no deletion vectors,
branches from Python, or v4). Nothing asserts on time.

Run: ``.venv/bin/python tests/benchmarks/bench_demo.py`` or
``.venv/bin/python -m pytest -s tests/benchmarks/bench_demo.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _timed_process(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "icenb.demo", str(path)], check=True,
                   capture_output=True)
    return time.perf_counter() - start


def _timed_build(path: Path) -> tuple[float, int]:
    from icenb.demo import build

    tracemalloc.start()
    start = time.perf_counter()
    build(path)
    took = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return took, peak


def _timed_pyiceberg(path: Path) -> tuple[float, int]:
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    from icenb.demo import _events

    path.mkdir()
    tracemalloc.start()
    start = time.perf_counter()
    catalog = SqlCatalog("peer", uri=f"sqlite:///{path}/catalog.db", warehouse=f"file://{path}")
    catalog.create_namespace("shop")
    schema = pa.schema([("id", pa.int64(), False), ("ts", pa.timestamp("us")),
                        ("kind", pa.string()), ("qty", pa.int32()),
                        ("price", pa.decimal128(9, 2))])
    table = catalog.create_table(("shop", "events"), schema=schema)
    for day in range(4):
        table.append(pa.Table.from_pylist(_events(day, 1 + 12 * day, 12), schema=schema))
    took = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return took, peak


def run() -> str:
    with tempfile.TemporaryDirectory(prefix="icenb-bench-demo-") as d:
        root = Path(d)
        process = _timed_process(root / "process")
        build_s, build_peak = _timed_build(root / "in-process")
        peer_s, peer_peak = _timed_pyiceberg(root / "pyiceberg")
    mib = 2**20
    return "\n".join([
        f"python -m icenb.demo (fresh process): {process:6.2f} s   (target: under 30 s)",
        f"icenb.demo.build (traced):            {build_s:6.2f} s   peak {build_peak / mib:.1f} MiB",
        f"PyIceberg 0.12, events' 4 appends:    {peer_s:6.2f} s   peak {peer_peak / mib:.1f} MiB",
    ])


def test_bench_demo() -> None:
    print("\n" + run())


if __name__ == "__main__":
    print(run())
