"""Reading through Spark: the ``icenb`` data source and ``Scan.to_spark``.

Rows read through Spark are compared with Iceberg Java's rows (tests/reference/java_read.py,
every snapshot) and with ``scan.to_arrow()`` for each option.
"""

from __future__ import annotations

import json
import pickle
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import UnsupportedFeature
from icenb.io.file_io import FileIO
from icenb.spark import (
    get_spark,
    read_options,
    read_scan,
    scan_partitions,
    spark_schema,
    to_spark_arrow,
)
from icenb.spark.datasource import read_partition
from icenb.spec.manifest import DataFile, FileScanTask
from icenb.table import Scan, Table
from tests.reference_fixtures import JavaTables
from tests.spark.conftest import USER_TIME_ZONE
from tests.table.scan.test_task_reader import _icenb_rows, run_java_read

# Tables compared with Java for every snapshot: each kind of delete, schema evolution, all types.
SPARK_COMPARED = (
    "db.v2_merge_on_read",
    "db.v3_deletion_vectors",
    "db.java_v2_equality_deletes",
    "db.v2_schema_evolution",
    "db.v2_all_types",
)


@pytest.fixture(scope="module")
def java_rows(java_tables: JavaTables) -> dict[tuple[str, int], dict[str, Any]]:
    """Java's rows of every snapshot of the compared tables (one JVM)."""
    keys = [(name, s.snapshot_id) for name in SPARK_COMPARED
            for s in icenb.open(java_tables.location(name)).snapshots]
    results = run_java_read([{"location": str(java_tables.location(name)), "snapshot_id": sid}
                             for name, sid in keys])
    return dict(zip(keys, results, strict=True))


def _open(java_tables: JavaTables, name: str) -> Table:
    return icenb.open(java_tables.location(name))


def _rows(df: Any) -> list[str]:
    """A Spark DataFrame's rows, normalized as the Java reads are (Spark's Arrow, in UTC)."""
    return _icenb_rows(df.toArrow())


def _scan_rows(scan: Scan) -> list[str]:
    """``scan.to_arrow()``'s rows with the value forms Spark gives (uuid and time as text)."""
    return _icenb_rows(to_spark_arrow(scan.to_arrow(), scan.schema))


def _load(spark: Any, location: Path | str, **options: str) -> Any:
    return spark.read.format("icenb").options(**options).load(str(location))


# --------------------------------------------------------------------------- session


def test_a_users_session_is_used_as_is(spark: Any) -> None:
    got = get_spark()
    assert got._jsparkSession.equals(spark._jsparkSession)
    assert got.conf.get("spark.sql.session.timeZone") == USER_TIME_ZONE
    assert got.sparkContext.master == "local[2]"
    # The data source is registered on it.
    assert spark.read.format("icenb") is not None


# --------------------------------------------------------------------------- Java


@pytest.mark.parametrize("name", SPARK_COMPARED)
def test_every_snapshot_reads_through_spark_as_java_reads_it(
        spark: Any, java_tables: JavaTables, java_rows: dict[tuple[str, int], dict[str, Any]],
        name: str) -> None:
    get_spark()
    table = _open(java_tables, name)
    assert table.snapshots
    for snapshot in table.snapshots:
        sid = snapshot.snapshot_id
        java = java_rows[(name, sid)]
        assert java["ok"], java.get("error")
        df = _load(spark, java_tables.location(name), **{"snapshot-id": str(sid)})
        assert df.columns == java["columns"], (name, sid)
        expected = sorted(json.dumps(r, sort_keys=True) for r in java["rows"])
        assert _rows(df) == expected, (name, sid)


# --------------------------------------------------------------------------- to_spark


def test_to_spark_reads_what_to_arrow_reads(spark: Any, java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.v2_merge_on_read")
    first = table.snapshots[0].snapshot_id
    scans = [
        table.scan(),
        table.at(first),
        table.scan(filter="id > 20 and cat = 'even'"),
        table.scan(columns=["v", "id"]),
        table.scan(filter="ID < 10", columns=["Cat"], case_sensitive=False),
        table.scan().filter("id >= 3").filter("id in (3, 5, 40)").select("id"),
    ]
    for scan in scans:
        df = scan.to_spark(spark)
        assert df.columns == [f.name for f in scan.schema.fields]
        assert df.schema == spark_schema(scan.schema)
        assert _rows(df) == _scan_rows(scan), scan
        assert df.count() == scan.count()


def test_to_spark_of_uuid_fixed_time_columns(spark: Any, java_tables: JavaTables) -> None:
    scan = _open(java_tables, "db.java_v2_special_types").scan()
    arrow = scan.to_arrow()
    spark_arrow = scan.to_spark(spark).toArrow()
    assert spark_arrow.num_rows == arrow.num_rows > 0
    got = sorted(spark_arrow.to_pylist(), key=lambda r: r["id"])
    want = sorted(arrow.to_pylist(), key=lambda r: r["id"])
    for g, w in zip(got, want, strict=True):
        assert g["u"] == (None if w["u"] is None else str(uuid.UUID(bytes=w["u"])))
        assert g["f16"] == w["f16"]
        assert g["t"] == (None if w["t"] is None else w["t"].isoformat(timespec="microseconds"))
        assert g["ts"] == w["ts"]


def test_to_spark_refuses_types_spark_cannot_hold_and_reads_the_rest(
        spark: Any, java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.java_v3_types")
    with pytest.raises(UnsupportedFeature, match="nanosecond") as e:
        table.scan().to_spark(spark)
    assert e.value.field == "ts_ns"
    with pytest.raises(Exception, match="UnsupportedFeature"):
        _load(spark, java_tables.location("db.java_v3_types"))
    readable = table.scan(columns=["id", "u", "f16", "t", "unknown", "geometry"])
    assert _rows(readable.to_spark(spark)) == _scan_rows(readable)


def test_filters_reach_the_reader_with_or_without_a_text_form(
        spark: Any, java_tables: JavaTables) -> None:
    from icenb.spec.expressions import col

    table = _open(java_tables, "db.v2_all_types")
    as_text = col("c_double") > 1  # str() parses back to the same expression
    pickled = col("c_double") > 0.1  # str() parses back as a decimal, not this float
    for expr, option in ((as_text, "filter"), (pickled, "icenb.filter-pickle")):
        scan = table.scan(filter=expr)
        assert option in read_options(table.metadata, table.io, snapshot_id=scan.snapshot_id,
                                      schema=scan.table_schema, row_filter=expr, columns=None,
                                      case_sensitive=True)
        assert _rows(scan.to_spark(spark)) == _scan_rows(scan)
        assert 0 < scan.count() < table.scan().count()


def test_empty_table_reads_as_an_empty_dataframe_with_the_schema(
        spark: Any, java_tables: JavaTables) -> None:
    location = java_tables.location("db.v2_merge_on_read") / "metadata" / "v1.metadata.json"
    table = icenb.open(location)
    assert table.current_snapshot is None
    # to_spark() first: it registers the icenb source on the user's session (so the test also
    # passes on its own).
    for df in (table.scan().to_spark(spark), _load(spark, location)):
        assert df.schema == spark_schema(table.schema)
        assert df.count() == 0 and df.collect() == []


# --------------------------------------------------------------------------- options


def test_branch_tag_and_time_options(spark: Any, java_tables: JavaTables) -> None:
    location = java_tables.location("db.v2_refs")
    table = icenb.open(location)
    branches = [n for n, r in table.refs.items() if r.is_branch and n != "main"]
    tags = [n for n, r in table.refs.items() if not r.is_branch]
    assert branches and tags
    for name in branches:
        df = _load(spark, location, branch=name)
        assert _rows(df) == _scan_rows(table.scan(ref=name)), name
    for name in tags:
        df = _load(spark, location, tag=name)
        assert _rows(df) == _scan_rows(table.scan(ref=name)), name
    for entry in table.history:
        df = _load(spark, location, **{"as-of-timestamp": str(entry.timestamp_ms)})
        assert _rows(df) == _scan_rows(table.at(timestamp_ms=entry.timestamp_ms))


def test_filter_and_columns_options(spark: Any, java_tables: JavaTables) -> None:
    location = java_tables.location("db.v2_all_types")
    table = icenb.open(location)
    df = _load(spark, location, filter="c_long > 0", columns="c_string, c_struct.nested.y")
    scan = table.scan(filter="c_long > 0", columns=["c_string", "c_struct.nested.y"])
    assert df.schema == spark_schema(scan.schema)
    assert _rows(df) == _scan_rows(scan)
    df = _load(spark, location, columns='["c_long", "C_INT"]', **{"case-sensitive": "false"})
    assert df.columns == ["c_int", "c_long"]  # schema order, as scan.select and Java


def test_split_size_packs_tasks_into_partitions(spark: Any, java_tables: JavaTables) -> None:
    location = java_tables.location("db.v2_merge_on_read")
    scan = icenb.open(location).scan()
    files = len(scan.plan().tasks)
    assert files > 1
    many = _load(spark, location, **{"split-size": "1"})
    assert many.rdd.getNumPartitions() == files
    assert _rows(many) == _scan_rows(scan)
    assert _load(spark, location).rdd.getNumPartitions() == 1


# --------------------------------------------------------------------------- errors


def _spark_error(call: Any) -> str:
    with pytest.raises(Exception) as e:  # Spark's AnalysisException carries icenb's error
        call()
    return str(e.value)


def test_bad_options_fail_at_load_with_the_icenb_error(spark: Any,
                                                       java_tables: JavaTables) -> None:
    location = java_tables.location("db.v2_refs")
    tag = next(n for n, r in icenb.open(location).refs.items() if not r.is_branch)
    cases = {
        "icenb.errors.NoSuchSnapshot: no snapshot with this id": {"snapshot-id": "12345"},
        "icenb.errors.ValidationError: not an integer": {"snapshot-id": "abc"},
        f"is a tag, not a branch (file: {location}": {"branch": tag},
        "icenb.errors.NoSuchSnapshot: no tag named 'nope'": {"tag": "nope"},
        "give at most one of snapshot-id, branch": {"snapshot-id": "1", "branch": "main"},
        "icenb.errors.ExpressionParseError": {"filter": "id >"},
        "no such field": {"columns": "nope"},
    }
    for expected, options in cases.items():
        message = _spark_error(lambda o=options: _load(spark, location, **o))  # type: ignore[misc]
        assert expected in message, (options, message)
    assert "icenb.errors.NotFound" in _spark_error(lambda: _load(spark, "/no/such/table"))
    message = _spark_error(lambda: spark.read.format("icenb").schema("x int").load(
        str(location)).collect())
    assert "not a schema" in message


def test_reading_expired_files_fails_at_planning_with_the_icenb_error(
        spark: Any, java_tables: JavaTables) -> None:
    location = java_tables.location("db.v2_expire_snapshots")
    io = FileIO()
    for path in sorted((location / "metadata").glob("v*.metadata.json")):
        table = icenb.open(path)
        gone = [s for s in table.snapshots if not io.new_input(s.manifest_list).exists()]
        if gone:
            break
    else:
        pytest.fail("no metadata file references expired files")
    df = _load(spark, path, **{"snapshot-id": str(gone[0].snapshot_id)})
    message = _spark_error(df.collect)
    assert "icenb.errors.NotFound" in message and gone[0].manifest_list in message
    message = _spark_error(table.at(gone[0].snapshot_id).to_spark(spark).collect)
    assert "icenb.errors.NotFound" in message


# --------------------------------------------------------------------------- without a JVM


def test_partitions_carry_everything_an_executor_needs(java_tables: JavaTables) -> None:
    scan = _open(java_tables, "db.v2_merge_on_read").scan(filter="id > 3", columns=["id", "v"])
    parts = scan_partitions(scan, split_size=1)
    assert len(parts) == len(scan.plan().tasks)
    assert [t.data_file.file_path for p in parts for t in p.tasks] == \
        [t.data_file.file_path for t in scan.plan().tasks]
    batches = [b for p in parts for b in read_partition(pickle.loads(pickle.dumps(p)))]
    got = pa.Table.from_batches(batches, schema=to_spark_arrow(scan.to_arrow(),
                                                               scan.schema).schema)
    assert _icenb_rows(got) == _scan_rows(scan)
    whole = scan_partitions(scan)
    assert len(whole) == 1 and len(whole[0].tasks) == len(parts)


def test_read_scan_is_what_to_spark_calls(spark: Any, java_tables: JavaTables) -> None:
    scan = _open(java_tables, "db.java_v2_equality_deletes").scan()
    assert _rows(read_scan(scan, spark)) == _rows(scan.to_spark())


def test_a_moved_table_reads_through_spark_from_where_it_is(
        spark: Any, java_tables: JavaTables, tmp_path: Path) -> None:
    import shutil

    src = java_tables.location("db.v3_deletion_vectors")
    dst = tmp_path / "moved"
    shutil.copytree(src, dst)
    expected = _scan_rows(icenb.open(src).scan())
    table = icenb.open(dst, relocate=True)
    assert _rows(table.scan().to_spark(spark)) == expected
    assert _rows(_load(spark, dst, relocate="true")) == expected
    # The copy, not the original, was read: break the copy and the reads fail.
    for f in (dst / "data").rglob("*.parquet"):
        f.unlink()
    with pytest.raises(Exception, match="NotFound"):
        _load(spark, dst, relocate="true").collect()


def _next_fit(tasks: list[FileScanTask], split: int, cost: int) -> list[list[FileScanTask]]:
    """Iceberg's packing, task by task: next fit by data + delete bytes (at least ``cost``)."""
    groups: list[list[FileScanTask]] = []
    current: list[FileScanTask] = []
    weight = 0
    for task in tasks:
        w = max(task.data_file.file_size_in_bytes
                + sum(d.file_size_in_bytes for d in task.delete_files), cost)
        if current and weight + w > split:
            groups.append(current)
            current, weight = [], 0
        current.append(task)
        weight += w
    return [*groups, current] if current else groups


@pytest.mark.parametrize("name", ["db.v2_merge_on_read", "db.v3_deletion_vectors",
                                  "db.java_v2_equality_deletes", "db.v1_upgrade",
                                  "db.v2_partition_evolution"])
def test_partitions_pack_the_planned_tasks_as_iceberg_splits(java_tables: JavaTables,
                                                             name: str) -> None:
    table = _open(java_tables, name)
    for snap in table.snapshots:
        scan = table.scan(snapshot_id=snap.snapshot_id)
        tasks = scan.plan().tasks
        sizes = sorted(t.data_file.file_size_in_bytes for t in tasks)
        median, total = sizes[len(sizes) // 2], sum(sizes)
        for split in (1, sizes[0], median, 2 * median + 1, 3 * median, total, 10 * total):
            for cost in (0, median // 2, median, 2 * median):
                parts = scan_partitions(scan, split_size=split, file_open_cost=cost)
                assert [list(p.tasks) for p in parts] == _next_fit(tasks, split, cost), \
                    (name, snap.snapshot_id, split, cost)
                assert [p.files for p in parts] == [len(p.tasks) for p in parts]


def test_the_driver_builds_no_file_scan_task(java_tables: JavaTables,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    scan = _open(java_tables, "db.v1_upgrade").scan(filter="id > 1")
    plan = scan.plan()
    assert any(plan.deletes_per_file)

    def no_objects(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a per-file Python object was built on the driver")

    monkeypatch.setattr(DataFile, "from_avro_record", no_objects)
    monkeypatch.setattr(FileScanTask, "__init__", no_objects)
    parts = scan_partitions(scan, split_size=1)
    sent = [pickle.dumps(p) for p in parts]  # what Spark sends to the executors
    monkeypatch.undo()

    assert len(parts) == plan.files_selected
    received = [pickle.loads(b) for b in sent]
    assert [t for p in received for t in p.tasks] == plan.tasks
    for p, task in zip(received, plan.tasks, strict=True):  # each carries only its own deletes
        assert p.plan.files_selected == 1
        assert p.plan.delete_files_selected == len(task.delete_files)
        assert (p.schema, p.name_mapping) == (scan.schema, scan.name_mapping)
