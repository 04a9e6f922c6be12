"""Read tables through a Spark master with separate executor processes (issue 3, "Done when").

Usage (from the repository root, in icenb's venv):
  ICENB_SPARK_MASTER='local-cluster[2,1,1024]' python -m tests.spark.cluster_check \
      JAVA_TABLES_DIR OUTPUT.json

Starts Spark through :func:`icenb.spark.get_spark` (the bootstrap path, master from the
environment), reads tables of the Java corpus with ``spark.read.format("icenb")`` and
``Scan.to_spark()`` and compares the rows with ``scan.to_arrow()``. A copy of the data source
that records, in each read task, its Python process and the JVM that started it shows where the
tasks ran. One process can hold one SparkContext, hence a script run by the test in a child
process. OUTPUT.json gets {"reads", "mismatches", "driver_jvm", "driver_python", "tasks",
"seconds"}.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

import icenb
from icenb.spark import IcenbDataSource, IcenbReader, get_spark, to_spark_arrow
from icenb.table import Scan
from tests.table.scan.test_task_reader import _icenb_rows

TABLES_ALL_SNAPSHOTS = ("db.v2_merge_on_read",)
TABLES_CURRENT = ("db.v3_deletion_vectors", "db.java_v2_equality_deletes",
                  "db.java_v2_special_types", "db.v2_all_types")
RECORDED_TABLE = "db.v2_merge_on_read"
MARKER_OPTION = "icenb-test.marker-dir"


def _java_ancestor(pid: int) -> int | None:
    """The nearest ancestor process of ``pid`` that is a JVM (Linux /proc)."""
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        comm = stat[stat.index("(") + 1: stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if comm == "java":
            return pid
        pid = ppid
    return None


class _RecordingReader(IcenbReader):
    """icenb's reader that writes, per read task, which processes ran it."""

    def __init__(self, base: IcenbReader, marker_dir: str) -> None:
        super().__init__(base._state)
        self._marker_dir = marker_dir

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        pid = os.getpid()
        marker = {"python": pid, "jvm": _java_ancestor(pid),
                  "partition": getattr(partition, "index", None)}
        Path(self._marker_dir, f"{uuid.uuid4().hex}.json").write_text(json.dumps(marker))
        return super().read(partition)


class RecordingSource(IcenbDataSource):
    """``format("icenb_recording")``: the icenb data source with a recording reader."""

    @classmethod
    def name(cls) -> str:
        return "icenb_recording"

    def reader(self, schema: Any) -> DataSourceReader:
        base = super().reader(schema)
        assert isinstance(base, IcenbReader)
        return _RecordingReader(base, self.options[MARKER_OPTION])


def _expected(scan: Scan) -> list[str]:
    return _icenb_rows(to_spark_arrow(scan.to_arrow(), scan.schema))


def main(argv: list[str]) -> int:
    root, output = Path(argv[0]), Path(argv[1])
    from tests.reference_fixtures import JavaTables

    tables = JavaTables.load(root)
    started = time.monotonic()
    # Schedule nothing before both executors have registered.
    spark = get_spark({"spark.ui.enabled": "false",
                       "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                       "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s"})
    seconds = {"session_start": time.monotonic() - started}
    mismatches: list[str] = []
    reads = 0
    begin = time.monotonic()
    try:
        for name in (*TABLES_ALL_SNAPSHOTS, *TABLES_CURRENT):
            location = tables.location(name)
            table = icenb.open(location)
            snapshots = table.snapshots if name in TABLES_ALL_SNAPSHOTS else \
                (table.current_snapshot,)
            for snap in snapshots:
                assert snap is not None
                scan = table.scan(snapshot_id=snap.snapshot_id)
                df = (spark.read.format("icenb").option("snapshot-id", str(snap.snapshot_id))
                      .option("split-size", "1").load(str(location)))
                reads += 1
                if _icenb_rows(df.toArrow()) != _expected(scan):
                    mismatches.append(f"format('icenb') {name} @ {snap.snapshot_id}")
            scan = table.scan()
            reads += 1
            if _icenb_rows(scan.to_spark().toArrow()) != _expected(scan):
                mismatches.append(f"to_spark {name}")
        seconds["reads"] = time.monotonic() - begin
        spark.dataSource.register(RecordingSource)
        with tempfile.TemporaryDirectory() as markers:
            location = tables.location(RECORDED_TABLE)
            df = (spark.read.format("icenb_recording").option("split-size", "1")
                  .option(MARKER_OPTION, markers).load(str(location)))
            reads += 1
            if _icenb_rows(df.toArrow()) != _expected(icenb.open(location).scan()):
                mismatches.append(f"format('icenb_recording') {RECORDED_TABLE}")
            tasks = [json.loads(p.read_text()) for p in Path(markers).glob("*.json")]
        driver_jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        master = spark.sparkContext.master
    finally:
        spark.stop()
    output.write_text(json.dumps({
        "master": master, "reads": reads, "mismatches": mismatches, "driver_jvm": driver_jvm,
        "driver_python": os.getpid(), "tasks": tasks, "seconds": seconds}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
