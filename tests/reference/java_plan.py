"""Time Iceberg Java's scan planning on one table metadata file (a benchmark peer).

Usage (inside .venv-ref):  python java_plan.py '{"metadata": PATH, "runs": N, "filter": {...}}'

The table is loaded from the metadata file with ``StaticTableOperations`` over ``HadoopFileIO``
(as ``HadoopTables`` does for a path), then ``table.newScan().filter(expr).planFiles()`` is run
1 + N times in this fresh JVM and its tasks are counted in the JVM (Guava's
``Iterables.size``, so no task crosses Py4J). The first run is the cold one (classes loaded and
the JIT warming up on the way); the next N are warm. Java keeps no manifest cache by default
(``io.manifest.cache-enabled`` is false), so each run reads and decodes the manifests it needs.
Times are ``System.nanoTime`` around the call in the JVM plus one Py4J round trip.

``filter`` keys (all optional, ANDed): ``ts_ge`` / ``ts_lt`` (micros, on column ``ts``) and
``id_eq`` (on column ``id``); none means ``alwaysTrue``.

One JSON document goes to stdout: {"java": "<Iceberg version> on Java <version>", "files": N,
"wall_s": [cold, warm...], "call_overhead_s", "jvm_peak_rss_mb"}. Failures exit non-zero, the
Java error on stderr.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from java_metadata import _java_error
from refspark import java_gateway


def _long(gateway: Any, value: int) -> Any:
    """A java.lang.Long (Py4J sends small Python ints as Integer)."""
    return gateway.jvm.java.lang.Long.valueOf(str(value))


def _expression(gateway: Any, spec: dict[str, int]) -> Any:
    exprs = gateway.jvm.org.apache.iceberg.expressions.Expressions
    parts = []
    if "ts_ge" in spec:
        parts.append(exprs.greaterThanOrEqual("ts", _long(gateway, spec["ts_ge"])))
    if "ts_lt" in spec:
        parts.append(exprs.lessThan("ts", _long(gateway, spec["ts_lt"])))
    if "id_eq" in spec:
        parts.append(exprs.equal("id", _long(gateway, spec["id_eq"])))
    if not parts:
        return exprs.alwaysTrue()
    conjunction = getattr(exprs, "and")  # Expressions.and (a Python keyword)
    out = parts[0]
    for p in parts[1:]:
        out = conjunction(out, p)
    return out


def time_plans(metadata: str, runs: int, spec: dict[str, int]) -> dict[str, Any]:
    gateway = java_gateway()
    jvm = gateway.jvm
    system = jvm.java.lang.System
    conf = jvm.org.apache.hadoop.conf.Configuration()
    io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(conf)
    ops = jvm.org.apache.iceberg.StaticTableOperations(metadata, io)
    table = jvm.org.apache.iceberg.BaseTable(ops, metadata)
    size = jvm.org.apache.iceberg.relocated.com.google.common.collect.Iterables.size
    expr = _expression(gateway, spec)
    wall: list[float] = []
    files = None
    for _ in range(1 + runs):
        system.gc()
        scan = table.newScan().filter(expr)
        t0 = system.nanoTime()
        tasks = scan.planFiles()
        n = int(size(tasks))
        t1 = system.nanoTime()
        tasks.close()
        wall.append((t1 - t0) / 1e9)
        if files is not None and n != files:
            raise RuntimeError(f"planFiles returned {n} tasks, before {files}")
        files = n
    overhead = []
    for _ in range(5):
        t0 = system.nanoTime()
        system.identityHashCode(None)
        overhead.append((system.nanoTime() - t0) / 1e9)
    version = str(jvm.org.apache.iceberg.IcebergBuild.fullVersion()).split(" (")[0]
    return {"java": f"{version} on Java {system.getProperty('java.version')}",
            "files": files, "wall_s": wall, "call_overhead_s": statistics.median(overhead),
            "jvm_peak_rss_mb": _peak_rss_mb(int(jvm.java.lang.ProcessHandle.current().pid()))}


def _peak_rss_mb(pid: int) -> float | None:
    """The JVM's peak resident set (``VmHWM``), None where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        raise SystemExit(__doc__)
    request = json.loads(argv[1])
    stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        doc = time_plans(os.path.abspath(request["metadata"]), int(request["runs"]),
                         dict(request.get("filter") or {}))
    except Exception as exc:
        print(f"java_plan.py: {request['metadata']}: {_java_error(exc)}", file=sys.stderr)
        return 1
    json.dump(doc, stdout)
    stdout.write("\n")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
