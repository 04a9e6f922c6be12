"""Time Iceberg Java's TableMetadataParser.fromJson on one metadata file (a benchmark peer).

Usage (inside .venv-ref):  python java_bench.py METADATA_FILE RUNS [--warmup N]

The file is read (UTF-8) and handed to the JVM once as a Java String, so only parsing is
timed.  It is parsed WARMUP times to let the JIT compile the parser, then RUNS times, each
after System.gc().  Each run is timed in the JVM: wall time (System.nanoTime) and the CPU
time of the thread that parses (ThreadMXBean; steady when other processes share the cores, but
without the JIT and GC threads' work).  The one Py4J round trip per run is included; its median
is measured and reported on its own ("call_overhead_s").

One JSON document goes to stdout: {"java": {...versions}, "file", "chars", "warmup", "runs",
"snapshots", "wall_s": [...], "thread_cpu_s": [...], "call_overhead_s"}; times in seconds.
Any failure exits non-zero with the Java exception (and its causes) last on stderr.
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

DEFAULT_WARMUP = 20


def _thread_cpu(gateway: Any) -> Any:
    """A zero-argument callable giving the CPU time (ns) of the JVM thread serving this caller.

    PySpark's Py4J pins each Python thread to one JVM thread, so this is the thread that runs
    the parses; it excludes JIT and GC threads (stop-the-world GC pauses show in wall time).
    The MXBean's class is JDK-internal, so Py4J cannot call it directly: the method is looked
    up on the exported java.lang.management interface and invoked reflectively.
    """
    lang = gateway.jvm.java.lang
    bean = gateway.jvm.java.lang.management.ManagementFactory.getThreadMXBean()
    iface = lang.Class.forName("java.lang.management.ThreadMXBean")
    method = iface.getMethod("getCurrentThreadCpuTime", gateway.new_array(lang.Class, 0))
    no_args = gateway.new_array(lang.Object, 0)
    return lambda: int(method.invoke(bean, no_args))


def _bound_parse(gateway: Any, text: str) -> Any:
    """A zero-argument callable running fromJson(String) on a String held in the JVM.

    Py4J turns every Java String into a Python str and back, so calling fromJson(text) from
    Python would copy the document over the socket on each run.  Instead the String goes over
    once, into an Object[] kept in the JVM, and each run is a reflective Method.invoke there.
    """
    jvm = gateway.jvm
    lang = jvm.java.lang
    parser_class = lang.Class.forName("org.apache.iceberg.TableMetadataParser")
    param_types = gateway.new_array(lang.Class, 1)
    param_types[0] = lang.Class.forName("java.lang.String")
    from_json = parser_class.getMethod("fromJson", param_types)
    args = gateway.new_array(lang.Object, 1)
    args[0] = text
    return lambda: from_json.invoke(None, args)


def time_parse(path: str, runs: int, warmup: int = DEFAULT_WARMUP) -> dict[str, Any]:
    """Warm up, then time `runs` parses of the file held as a Java String."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    gateway = java_gateway()
    jvm = gateway.jvm
    system = jvm.java.lang.System
    thread = jvm.java.lang.Thread
    parse = _bound_parse(gateway, text)
    thread_cpu_ns = _thread_cpu(gateway)
    thread_id = thread.currentThread().getId()

    snapshots = None
    for _ in range(warmup):
        parse()

    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        system.gc()
        c0 = thread_cpu_ns()
        t0 = system.nanoTime()
        meta = parse()
        t1 = system.nanoTime()
        c1 = thread_cpu_ns()
        wall.append((t1 - t0) / 1e9)
        cpu.append((c1 - c0) / 1e9)
        snapshots = int(meta.snapshots().size())
        del meta
    if thread.currentThread().getId() != thread_id:
        raise RuntimeError("Py4J served the calls from several JVM threads: thread CPU is void")

    # The same clock reads around a trivial call: what Py4J adds to each timed call.
    overhead = []
    for _ in range(max(runs, 5)):
        t0 = system.nanoTime()
        system.identityHashCode(None)
        overhead.append((system.nanoTime() - t0) / 1e9)

    return {
        "java": {
            "iceberg": str(jvm.org.apache.iceberg.IcebergBuild.fullVersion()),
            "java": str(system.getProperty("java.version")),
        },
        "file": path,
        "chars": len(text),
        "snapshots": snapshots,
        "warmup": warmup,
        "runs": runs,
        "wall_s": wall,
        "thread_cpu_s": cpu,
        "call_overhead_s": statistics.median(overhead),
    }


def main(argv: list[str]) -> int:
    args = argv[1:]
    warmup = DEFAULT_WARMUP
    if "--warmup" in args:
        i = args.index("--warmup")
        warmup = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    path, runs = os.path.abspath(args[0]), int(args[1])
    if runs < 1 or warmup < 0:
        raise SystemExit("RUNS must be >= 1 and --warmup >= 0")
    # Keep stdout for the JSON document: the JVM and any library print to stderr instead.
    stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        doc = time_parse(path, runs, warmup)
    except Exception as exc:
        print(f"java_bench.py: {path}: {_java_error(exc)}", file=sys.stderr)
        return 1
    json.dump(doc, stdout)
    stdout.write("\n")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
