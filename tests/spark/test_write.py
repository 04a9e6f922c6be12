"""Appending through Spark: the ``icenb`` data source's writer and ``Table.append(spark_df)``.

Spark tasks write the data files, the driver commits one snapshot; a failing task or commit
leaves the table and its directory as they were.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.datasource import DataSourceWriter
from pyspark.sql.types import LongType, StringType, StructField, StructType

import icenb
from icenb.catalog import SqlCatalog
from icenb.errors import CommitConflict, ValidationError
from icenb.spark import MASTER_ENV, IcenbDataSource, get_spark, register
from icenb.spark.writer import IcenbCommitMessage, IcenbWriter, make_writer
from icenb.spec.partition_spec import UNPARTITIONED
from icenb.spec.sort_order import UNSORTED
from icenb.spec.table_updates import new_table_metadata
from icenb.table import Table
from icenb.table.warehouse import parse_schema
from tests.spark.cluster_check import _java_ancestor
from tests.table.commit.test_append import DDL, normalized, rows

PARTITION_BY = ["day(ts)", "bucket(4, id)"]
# {partition:05d}-{task attempt id}-{operation id}-{n:05d}.parquet
FILE_NAME = re.compile(r"^(\d{5})-(\d+)-([0-9a-f-]{36})-(\d{5})\.parquet$")


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


def _table(tmp_path: Path, format_version: int = 2) -> tuple[icenb.Warehouse, Table]:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.events", DDL, partition_by=PARTITION_BY,
                        format_version=format_version)
    return wh, t


def _arrow(t: Table, start: int, n: int) -> pa.Table:
    return pa.Table.from_pylist(rows(start, n), schema=t.scan().to_arrow().schema)


def _spark_df(spark: Any, data: pa.Table, partitions: int) -> Any:
    return spark.createDataFrame(data).repartition(partitions)


def test_df_write_appends_one_snapshot_written_by_tasks(spark: Any, tmp_path: Path) -> None:
    register(spark)
    wh, t = _table(tmp_path)
    first = t.append(_arrow(t, 0, 10))
    data = _arrow(t, 10, 60)
    (_spark_df(spark, data, 3).write.format("icenb").mode("append")
     .option("warehouse", str(tmp_path)).option("snapshot-property.app", "test")
     .save("db.events"))
    t = wh.table("db.events")
    assert len(t.snapshots) == 2
    snap = t.current_snapshot
    assert snap is not None and snap.parent_snapshot_id == first.snapshot_id
    assert snap.summary is not None
    assert snap.summary.operation == "append"
    assert snap.summary["added-records"] == "60" and snap.summary["total-records"] == "70"
    assert snap.summary["app"] == "test"
    assert normalized(t.scan().to_arrow()) == normalized(pa.concat_tables(
        [_arrow(t, 0, 10), data]))
    # The new files were written by several tasks, all of one operation, whose id is also the
    # commit UUID of the snapshot's manifest list.
    names = [Path(p).name for p in t.inspect.files().column("file_path").to_pylist()]
    added = [FILE_NAME.match(n) for n in names]
    assert all(m is not None for m in added)
    new = [m for m in added if m is not None and m.group(3) in str(snap.manifest_list)]
    assert len(new) == int(snap.summary["added-data-files"]) > 3
    assert len({m.group(2) for m in new}) > 1  # task attempt ids
    assert {m.group(1) for m in new} == {"00000", "00001", "00002"}  # Spark partitions


def test_table_append_of_a_spark_dataframe(spark: Any, tmp_path: Path) -> None:
    wh, t = _table(tmp_path, format_version=3)
    data = _arrow(t, 0, 40)
    snap = t.append(_spark_df(spark, data, 2))
    assert t.current_snapshot == snap  # the table shows the committed state
    assert t.metadata_location == wh.table("db.events").metadata_location
    assert normalized(t.scan().to_arrow()) == normalized(data)
    snap2 = t.append(_spark_df(spark, _arrow(t, 40, 5), 2), branch="dev")
    assert t.refs["dev"].snapshot_id == snap2.snapshot_id
    assert t.current_snapshot == snap
    assert t.at("dev").to_arrow().num_rows == 45


def test_a_failing_task_leaves_the_table_and_its_directory_as_they_were(
        spark: Any, tmp_path: Path) -> None:
    wh, t = _table(tmp_path)
    t.append(_arrow(t, 0, 5))
    before, location = _files(tmp_path / "db" / "events"), t.metadata_location
    good = _arrow(t, 5, 30)
    ids = good.column("id").to_pylist()
    ids[-1] = None  # a null in the required column, in one partition only
    bad = good.set_column(0, good.schema.field(0).with_nullable(True), pa.array(ids, pa.int64()))
    df = spark.createDataFrame(bad).repartition(3)
    with pytest.raises(ValidationError, match="id") as info:
        t.append(df)
    assert "required" in str(info.value)
    assert _files(tmp_path / "db" / "events") == before
    assert t.metadata_location == location == wh.table("db.events").metadata_location
    # The same through df.write: Spark's error names the icenb error.
    with pytest.raises(Exception, match="ValidationError"):
        (df.write.format("icenb").mode("append").option("warehouse", str(tmp_path))
         .save("db.events"))
    assert _files(tmp_path / "db" / "events") == before


def test_columns_are_checked_on_the_driver_before_any_task(spark: Any, tmp_path: Path) -> None:
    register(spark)
    _, t = _table(tmp_path)
    before = _files(tmp_path / "db" / "events")
    df = spark.createDataFrame([(1, "x")], "id long, nope string")
    with pytest.raises(ValidationError, match="nope"):
        t.append(df)
    wrong_type = spark.createDataFrame([("1",)], "id string")
    with pytest.raises(ValidationError, match="id"):
        t.append(wrong_type)
    writes = df.write.format("icenb").option("warehouse", str(tmp_path))
    with pytest.raises(Exception, match=r"ValidationError: column is not in the table.*nope"):
        writes.mode("overwrite").save("db.events")  # overwrites check columns first too
    with pytest.raises(Exception, match="exactly one of"):
        df.write.format("icenb").mode("append").save("db.events")
    with pytest.raises(Exception, match="NoSuchTable"):
        writes.mode("append").save("db.nope")
    assert _files(tmp_path / "db" / "events") == before


def test_a_filesystem_catalog_is_addressed_with_the_catalog_option(
        spark: Any, tmp_path: Path) -> None:
    register(spark)
    catalog = icenb.FilesystemCatalog(tmp_path)
    schema = parse_schema("id long, s string")
    catalog.create_namespace("db")
    catalog.create_table(("db", "t"), new_table_metadata(
        schema, UNPARTITIONED, UNSORTED,
        str(tmp_path / "db" / "t"), {}, 2))
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, s string")
    df.write.format("icenb").mode("append").option("catalog", str(tmp_path)).save("db.t")
    t = icenb.load_table(catalog, "db.t")
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 2]


# --------------------------------------------------------------------------- writer, no Spark


def _writer(tmp_path: Path) -> tuple[Table, IcenbWriter]:
    _, t = _table(tmp_path)
    schema = StructType([StructField("id", LongType(), False),
                         StructField("s", StringType(), True)])
    return t, make_writer({"warehouse": str(tmp_path), "path": "db.events"}, schema, False)


def test_commit_messages_are_small_and_picklable(tmp_path: Path) -> None:
    t, writer = _writer(tmp_path)
    batch = pa.record_batch({"id": pa.array(range(100), pa.int64()),
                             "s": pa.array([f"s{i}" for i in range(100)])})
    message = writer.write(iter([batch]))
    assert isinstance(message, IcenbCommitMessage)
    assert len(message.files) == 4  # one per bucket (ts is null: one day partition)
    raw = pickle.dumps(message)
    assert pickle.loads(raw) == message
    assert len(raw) < 4096 * len(message.files)
    writer2 = pickle.loads(pickle.dumps(writer))
    writer2.commit([message])
    t.refresh()
    assert t.scan().to_arrow().num_rows == 100


def test_abort_deletes_the_task_files_unless_the_operation_committed(tmp_path: Path) -> None:
    t, writer = _writer(tmp_path)
    batch = pa.record_batch({"id": pa.array([1, 2, 3], pa.int64()), "s": pa.array(["a"] * 3)})
    before = _files(tmp_path / "db" / "events")
    message = writer.write(iter([batch]))
    assert _files(tmp_path / "db" / "events") != before
    writer.abort([message, None])
    assert _files(tmp_path / "db" / "events") == before
    # Committed (e.g. an unknown outcome that succeeded): abort keeps what the table uses.
    message = writer.write(iter([batch]))
    writer.commit([message])
    writer.abort([message])
    assert t.refresh().scan().to_arrow().num_rows == 3


def test_a_commit_that_fails_deletes_the_task_files(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    t, writer = _writer(tmp_path)
    t.set_properties({"commit.retry.num-retries": "0"})
    batch = pa.record_batch({"id": pa.array([1, 2, 3], pa.int64()), "s": pa.array(["a"] * 3)})
    before = _files(tmp_path / "db" / "events")
    message = writer.write(iter([batch]))

    def conflicts(*args: Any, **kwargs: Any) -> Any:
        raise CommitConflict("someone else committed")

    monkeypatch.setattr(SqlCatalog, "commit_table", conflicts)
    with pytest.raises(CommitConflict):
        writer.commit([message])
    assert _files(tmp_path / "db" / "events") == before
    assert t.refresh().current_snapshot is None


# --------------------------------------------------------------------------- separate executors

CLUSTER_MASTER = "local-cluster[2,1,1024]"
_MARKER_OPTION = "icenb-test.marker-dir"
REPO = Path(__file__).resolve().parents[2]


def test_appends_are_written_by_separate_executor_processes(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    env = {**os.environ, MASTER_ENV: CLUSTER_MASTER}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.spark.test_write", str(tmp_path / "wh"), str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0 and out.exists(), proc.stderr[-4000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["master"] == CLUSTER_MASTER
    assert result["ids"] == list(range(1000)) + list(range(1000, 1100))
    assert result["snapshots"] == 2
    tasks = result["tasks"]
    assert len(tasks) == 4  # one write task per Spark partition of the first append
    jvms = {t["jvm"] for t in tasks}
    # Every write task ran in a Python worker of an executor JVM, never the driver's.
    assert None not in jvms and result["driver_jvm"] not in jvms
    assert result["driver_python"] not in {t["python"] for t in tasks}
    # The data files of both appends name more than one task attempt.
    assert all(len(ids) > 1 for ids in result["file_task_ids"])


class _RecordingWriter(IcenbWriter):
    """icenb's writer that records, per write task, which processes ran it."""

    def __init__(self, base: IcenbWriter, marker_dir: str) -> None:
        self.__dict__.update(base.__dict__)
        self._marker_dir = marker_dir

    def write(self, iterator: Iterator[pa.RecordBatch]) -> IcenbCommitMessage:
        pid = os.getpid()
        Path(self._marker_dir, f"{uuid.uuid4().hex}.json").write_text(
            json.dumps({"python": pid, "jvm": _java_ancestor(pid)}))
        return super().write(iterator)


class _RecordingSource(IcenbDataSource):
    """``format("icenb_recording_write")``: icenb's data source with a recording writer."""

    @classmethod
    def name(cls) -> str:
        return "icenb_recording_write"

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = {k: v for k, v in self.options.items() if k != _MARKER_OPTION}
        return _RecordingWriter(make_writer(options, schema, overwrite),
                                self.options[_MARKER_OPTION])


def _cluster_main(argv: list[str]) -> int:
    """Run by the test above in a child process (one SparkContext per process)."""
    root, output = Path(argv[0]), Path(argv[1])
    spark = get_spark({"spark.ui.enabled": "false",
                       "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                       "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s"})
    try:
        wh = icenb.warehouse(root)
        t = wh.create_table("db.events", "id long not null, s string, ts timestamptz",
                            partition_by=["bucket(4, id)"], format_version=2)
        spark.dataSource.register(_RecordingSource)

        def frame(start: int, stop: int) -> Any:
            return spark.range(start, stop, numPartitions=4).selectExpr(
                "id", "cast(id % 7 as string) as s", "timestamp_seconds(id * 3600) as ts")

        markers = root / "markers"
        markers.mkdir()
        (frame(0, 1000).write.format("icenb_recording_write").mode("append")
         .option("warehouse", str(root)).option(_MARKER_OPTION, str(markers))
         .save("db.events"))
        tasks = [json.loads(p.read_text()) for p in markers.glob("*.json")]
        t.refresh()
        t.append(frame(1000, 1100))
        file_task_ids = []
        for snap in t.snapshots:
            operation = str(snap.manifest_list)[-len(".avro") - 36:-len(".avro")]
            names = [Path(p).name for p in t.inspect.files(snapshot_id=snap.snapshot_id)
                     .column("file_path").to_pylist() if operation in p]
            file_task_ids.append(sorted({n.split("-")[1] for n in names}))
        ids = sorted(t.scan().to_arrow().column("id").to_pylist())
        result = {"master": spark.sparkContext.master, "ids": ids,
                  "snapshots": len(t.snapshots), "tasks": tasks,
                  "file_task_ids": file_task_ids,
                  "driver_jvm": int(spark.sparkContext._jvm.java.lang.ProcessHandle.current()
                                    .pid()),
                  "driver_python": os.getpid()}
    finally:
        spark.stop()
    output.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_cluster_main(sys.argv[1:]))


class _Writer:
    """``df.write.format(...).mode(...).options(...).save()`` of a stand-in DataFrame: ``save``
    runs ``work(options)``, then the user interrupts (Jupyter's interrupt, Ctrl-C)."""

    def __init__(self, work: Any) -> None:
        self._work = work
        self.options_seen: dict[str, str] = {}

    def format(self, name: str) -> _Writer:
        return self

    def mode(self, mode: str) -> _Writer:
        return self

    def options(self, **options: str) -> _Writer:
        self.options_seen.update(options)
        return self

    def save(self) -> None:
        self._work(self.options_seen)
        raise KeyboardInterrupt


class _InterruptedFrame:
    def __init__(self, work: Any) -> None:
        self.sparkSession = None
        self.write = _Writer(work)


def test_an_interrupted_spark_write_deletes_what_its_tasks_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from icenb.spark.writer import write_dataframe

    wh, t = _table(tmp_path)
    t.append(_arrow(t, 0, 5))
    before, location = _files(tmp_path / "db" / "events"), t.metadata_location

    def tasks_wrote(options: dict[str, str]) -> None:  # a task's file, then the interrupt
        operation = options["icenb.operation-id"]
        part = tmp_path / "db" / "events" / "data" / "ts_day=2024-01-01"
        part.mkdir(parents=True, exist_ok=True)
        (part / f"00000-7-{operation}-00001.parquet").write_bytes(b"PAR1")

    monkeypatch.setattr("icenb.spark.session.register", lambda spark: spark)
    assert t.catalog is not None and t.identifier is not None
    with pytest.raises(KeyboardInterrupt):
        write_dataframe(_InterruptedFrame(tasks_wrote), t.catalog, t.identifier)
    assert wh.table("db.events").metadata_location == location
    assert [f for f in _files(tmp_path / "db" / "events") if f not in before] == []


def test_a_spark_write_interrupted_after_its_commit_keeps_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from icenb.spark.writer import write_dataframe
    from icenb.table.commit.producer import FastAppend

    wh, t = _table(tmp_path)
    t.append(_arrow(t, 0, 5))
    catalog, identifier = t.catalog, t.identifier
    assert catalog is not None and identifier is not None

    def committed(options: dict[str, str]) -> None:  # the driver committed, then the interrupt
        base = catalog.load_table(identifier)
        producer = FastAppend(catalog, identifier, base.io,
                              commit_uuid=options["icenb.operation-id"])
        producer.write(_arrow(t, 5, 10), base.metadata)
        producer.commit(base)

    monkeypatch.setattr("icenb.spark.session.register", lambda spark: spark)
    with pytest.raises(KeyboardInterrupt):
        write_dataframe(_InterruptedFrame(committed), catalog, identifier)
    assert wh.table("db.events").to_arrow().num_rows == 15  # its files are all there
