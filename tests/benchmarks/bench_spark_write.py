"""Peak memory of one Spark write task: buffering the whole partition and calling
write_data_files (before) vs streaming its Arrow batches through RollingDataWriter (now).

Run: .venv/bin/python tests/benchmarks/bench_spark_write.py [GiB of Arrow rows, default 2]
Each mode runs in a fresh subprocess (so ru_maxrss is that mode's peak) on the same
generated batches (10,000 rows each, as Spark's arrow.maxRecordsPerBatch), into a table
partitioned by bucket(4, id); prints rows, Arrow GiB, files, seconds and peak RSS (MiB).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import pyarrow as pa

BATCH_ROWS = 10_000


def _batches(gib: float) -> Iterator[pa.RecordBatch]:
    import numpy as np

    rng = np.random.default_rng(0)
    words = np.array([f"payload-{i:04d}-" + "x" * 150 for i in range(2000)], dtype=object)
    total, start = 0, 0
    while total < gib * 2**30:
        ids = np.arange(start, start + BATCH_ROWS, dtype=np.int64)
        batch = pa.record_batch({
            "id": ids, "x": rng.normal(size=BATCH_ROWS),
            "s": pa.array(words[rng.integers(0, len(words), BATCH_ROWS)], pa.string())})
        total += batch.nbytes
        start += BATCH_ROWS
        yield batch


def _child(mode: str, gib: float) -> None:
    import icenb
    from icenb.spark.writer import WriteTarget, write_task
    from icenb.table.write.data_files import write_data_files
    from icenb.table.write.locations import location_provider

    with tempfile.TemporaryDirectory() as tmp:
        wh = icenb.warehouse(tmp)
        t = wh.create_table("db.t", "id long not null, x double, s string",
                            partition_by=["bucket(4, id)"])
        target = WriteTarget.of(t.metadata, t.io, "00000000-0000-4000-8000-000000000000")
        began = time.perf_counter()
        rows = 0
        if mode == "before":
            batches = list(_batches(gib))
            rows = sum(b.num_rows for b in batches)
            files = write_data_files(
                target.io, pa.Table.from_batches(batches), target.schema, target.spec,
                target.sort_order, target.properties,
                location_provider(target.location, target.properties),
                format_version=target.format_version, operation_id=target.operation_id)
        else:
            def counted() -> Iterator[pa.RecordBatch]:
                nonlocal rows
                for b in _batches(gib):
                    rows += b.num_rows
                    yield b

            files = write_task(target, counted(), partition_id=0, task_id=0)
        seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": mode, "rows": rows, "files": len(files),
                      "seconds": round(seconds, 1), "peak_rss_mib": round(peak)}))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], float(sys.argv[3]))
        return
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    print(f"{gib} GiB of Arrow rows per task")
    for mode in ("streaming", "before"):
        out = subprocess.run([sys.executable, __file__, "--child", mode, str(gib)],
                             capture_output=True, text=True, check=True)
        print(out.stdout.strip())


if __name__ == "__main__":
    main()
