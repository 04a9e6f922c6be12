"""Authoring, first path: create a table in a warehouse, append, read back; the commit loop.

Tables written here are read by Iceberg Java 1.10 (every snapshot's rows, and its ``snapshots``
and ``files`` metadata tables against icenb's inspect tables, all in one JVM) and by PyIceberg
0.12 through its ``SqlCatalog`` on the warehouse's ``catalog.db``.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import icenb
from icenb.catalog import FilesystemCatalog
from icenb.errors import CommitConflict, CommitStateUnknown, ValidationError
from icenb.spec.snapshot import SnapshotRefType
from icenb.spec.table_updates import SetSnapshotRef, apply_updates, new_table_metadata
from icenb.table import Table
from icenb.table.commit.producer import RetryPolicy
from icenb.table.warehouse import Warehouse, parse_schema
from tests.reference.java_read import normalize
from tests.reference_fixtures import run_reference_batch
from tests.table.explore.test_inspect import compare

DDL = ("id long not null, ts timestamptz, day date, s string, x double, amount decimal(9, 2), "
       "flag boolean, tags list<string>, loc struct<lat: double, lon: double>")
UTC = dt.timezone.utc


def rows(start: int, n: int) -> list[dict[str, Any]]:
    """``n`` rows with ids from ``start``, covering nulls, NaN and every column type."""
    out = []
    for i in range(start, start + n):
        out.append({
            "id": i,
            "ts": None if i % 7 == 3 else dt.datetime(2024, 1 + i % 3, 1 + i % 5, i % 24, i % 60,
                                                      tzinfo=UTC),
            "day": dt.date(2023 + i % 2, 1 + i % 12, 1 + i % 28),
            "s": None if i % 5 == 4 else f"name-{i % 11:02d}-é",
            "x": float("nan") if i % 9 == 8 else i / 4,
            "amount": Decimal(f"{i * 3}.{i % 100:02d}"),
            "flag": None if i % 6 == 5 else i % 2 == 0,
            "tags": None if i % 4 == 1 else [f"t{i % 3}", f"u{i % 2}"],
            "loc": None if i % 8 == 7 else {"lat": i / 10, "lon": -i / 10},
        })
    return out


def plain(value: Any, t: pa.DataType) -> Any:
    """A pyarrow Python value with structs as tuples in field order (as Spark's Row)."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        return tuple(plain(value[t.field(i).name], t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t):
        return [plain(v, t.value_type) for v in value]
    return value


def normalized(table: pa.Table) -> list[list[Any]]:
    """Rows as java_read.py normalizes Spark's, sorted by id (the first column)."""
    types = [f.type for f in table.schema]
    out = [[normalize(plain(v, types[i])) for i, v in enumerate(row.values())]
           for row in table.to_pylist()]
    return sorted(out, key=lambda r: r[0])


# --------------------------------------------------------------------------- the scenarios


@dataclass
class Scenario:
    """A table written by a sequence of appends, and the rows each snapshot must hold."""

    name: str
    format_version: int
    partition_by: list[str] = field(default_factory=list)
    sort_by: list[str] = field(default_factory=list)
    batches: list[tuple[int, int]] = field(default_factory=lambda: [(0, 20), (20, 7), (27, 13)])


SCENARIOS = [
    Scenario("db.v1", 1),
    Scenario("db.v2", 2),
    Scenario("db.v3", 3),
    Scenario("db.parted_a", 2, ["day(ts)", "bucket(8, id)", "truncate(4, s)", "flag"]),
    Scenario("db.parted_b", 3, ["hour(ts)", "month(day)", "truncate(10, amount)"]),
    Scenario("db.parted_c", 1, ["year(ts)", "bucket(4, s)", "truncate(5, id)"]),
    Scenario("db.sorted", 2, sort_by=["s desc nulls last", "id"]),
]


@dataclass
class Written:
    warehouse: Warehouse
    root: Path
    tables: dict[str, Table]
    #: snapshot ids of each table, oldest first, and the input rows each must read.
    expected: dict[str, list[tuple[int, list[dict[str, Any]]]]]


def _input(kind: int, start: int, n: int, t: Table) -> Any:
    """The batch in one of the accepted input shapes (list of dicts, Arrow, pandas, batch)."""
    data = rows(start, n)
    arrow = pa.Table.from_pylist(data, schema=t.scan().to_arrow().schema)
    if kind == 0:
        return data
    if kind == 1:
        return arrow
    if kind == 2:
        return arrow.to_batches()[0] if arrow.num_rows else arrow
    return arrow.drop_columns(["tags", "loc"]).to_pandas()  # pandas, missing columns -> null


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    root = tmp_path_factory.mktemp("appends")
    wh = icenb.warehouse(root)
    tables: dict[str, Table] = {}
    expected: dict[str, list[tuple[int, list[dict[str, Any]]]]] = {}
    for sc in SCENARIOS:
        t = wh.create_table(sc.name, DDL, partition_by=sc.partition_by, sort_by=sc.sort_by,
                            format_version=sc.format_version)
        so_far: list[dict[str, Any]] = []
        history = []
        for k, (start, n) in enumerate(sc.batches):
            data = _input(k, start, n, t)
            snap = t.append(data)
            batch = rows(start, n)
            if k == 3:
                batch = [{**r, "tags": None, "loc": None} for r in batch]
            so_far = so_far + batch
            history.append((snap.snapshot_id, so_far))
        tables[sc.name] = t
        expected[sc.name] = history
    return Written(wh, root, tables, expected)


# --------------------------------------------------------------------------- icenb reads


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_snapshot_reads_back_its_rows(written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    schema = t.scan().to_arrow().schema
    assert len(t.snapshots) == len(sc.batches)
    for sid, expected_rows in written.expected[sc.name]:
        got = t.at(sid).to_arrow()
        assert got.schema == schema
        assert normalized(got) == normalized(pa.Table.from_pylist(expected_rows, schema=schema))


def test_an_unpartitioned_append_reads_back_equal_to_its_input(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", DDL)
    data = pa.Table.from_pylist(rows(0, 50), schema=t.scan().to_arrow().schema)
    t.append(data)
    for got in (t.scan().to_arrow(), wh.table("db.t").scan().to_arrow()):
        assert got.schema == data.schema
        assert got.column("id").equals(data.column("id"))  # same order
        assert normalized(got) == normalized(data)  # same values (NaN compared as text)


def test_partitioned_files_hold_one_partition_each(written: Written) -> None:
    t = written.warehouse.table("db.parted_a")
    files = t.inspect.files()
    assert files.num_rows > len(SCENARIOS[0].batches)
    for path in files.column("file_path").to_pylist():
        assert "/data/ts_day=" in path and "/id_bucket=" in path and "/s_trunc=" in path
    sorted_t = written.warehouse.table("db.sorted")
    got = [r["s"] for r in icenb.open(sorted_t.metadata_location or "").at(
        sorted_t.snapshots[0].snapshot_id).to_arrow().to_pylist()]
    non_null = [s for s in got if s is not None]
    assert non_null == sorted(non_null, reverse=True) and got[-len(got) + len(non_null):] \
        == [None] * (len(got) - len(non_null))
    assert {f for f in t.inspect.files().column("sort_order_id").to_pylist()} == {0}
    assert set(sorted_t.inspect.files().column("sort_order_id").to_pylist()) == {1}


def test_history_sequence_numbers_and_summaries(written: Written) -> None:
    for sc in SCENARIOS:
        t = written.warehouse.table(sc.name)
        snaps = t.snapshots
        assert [s.parent_snapshot_id for s in snaps] == [None] + [s.snapshot_id
                                                                 for s in snaps[:-1]]
        assert [e.snapshot_id for e in t.history] == [s.snapshot_id for s in snaps]
        expected_seq = [0, 0, 0] if sc.format_version == 1 else [1, 2, 3]
        assert [s.sequence_number for s in snaps] == expected_seq
        assert t.metadata.last_sequence_number == (0 if sc.format_version == 1 else 3)
        total = 0
        files = 0
        for s, (_, n) in zip(snaps, sc.batches, strict=True):
            summary = s.summary
            assert summary is not None and summary.operation == "append"
            total += n
            added = summary.int_value("added-data-files") or 0
            files += added
            assert summary.int_value("added-records") == n
            assert summary.int_value("total-records") == total
            assert summary.int_value("total-data-files") == files
            assert summary["total-delete-files"] == summary["total-position-deletes"] == \
                summary["total-equality-deletes"] == "0"
            listed = t.inspect.files(s.snapshot_id)
            assert listed.num_rows == files
            assert summary.int_value("total-files-size") == sum(
                listed.column("file_size_in_bytes").to_pylist())
            assert list(summary)[:11] == [
                "operation", "added-data-files", "added-records", "added-files-size",
                "changed-partition-count", "total-records", "total-files-size",
                "total-data-files", "total-delete-files", "total-position-deletes",
                "total-equality-deletes"]
            if not sc.partition_by:
                assert summary["changed-partition-count"] == "1"
            else:
                assert int(summary["changed-partition-count"]) == added


def test_v3_row_ids_are_first_row_id_plus_position(written: Written) -> None:
    t = written.warehouse.table("db.v3")
    next_row_id = 0
    for s, (_, n) in zip(t.snapshots, SCENARIOS[2].batches, strict=True):
        assert (s.first_row_id, s.added_rows) == (next_row_id, n)
        next_row_id += n
    assert t.metadata.next_row_id == next_row_id
    got = t.scan(columns=["id", "_row_id", "_last_updated_sequence_number"]).to_arrow()
    by_id = {r["id"]: r for r in got.to_pylist()}
    for s, (start, n) in zip(t.snapshots, SCENARIOS[2].batches, strict=True):
        for pos in range(n):  # one file per append: row id = first-row-id + position
            r = by_id[start + pos]
            assert r["_row_id"] == (s.first_row_id or 0) + pos
            assert r["_last_updated_sequence_number"] == s.sequence_number
    # Partitioned: ids are distinct and fill [0, next-row-id).
    parted = written.warehouse.table("db.parted_b")
    ids = parted.scan(columns=["_row_id"]).to_arrow().column("_row_id").to_pylist()
    assert sorted(ids) == list(range(parted.metadata.next_row_id or 0))


def test_append_to_a_branch(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", format_version=3)
    main1 = t.append([{"id": 1}])
    dev1 = t.append([{"id": 2}], branch="dev")
    assert dev1.parent_snapshot_id == main1.snapshot_id
    assert t.current_snapshot == main1
    dev2 = t.append([{"id": 3}], branch="dev")
    main2 = t.append([{"id": 4}])
    assert main2.parent_snapshot_id == main1.snapshot_id
    assert t.refs["dev"].snapshot_id == dev2.snapshot_id
    assert [s.sequence_number for s in (main1, dev1, dev2, main2)] == [1, 2, 3, 4]
    assert [s.first_row_id for s in (main1, dev1, dev2, main2)] == [0, 1, 2, 3]
    again = wh.table("db.t")
    assert sorted(r["id"] for r in again.at("dev").to_arrow().to_pylist()) == [1, 2, 3]
    assert sorted(r["id"] for r in again.scan().to_arrow().to_pylist()) == [1, 4]


def test_empty_append_adds_a_snapshot_without_files(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    t.append([{"id": 1}])
    snap = t.append(pa.table({"id": pa.array([], pa.int64())}))
    assert snap.summary is not None and snap.summary["total-records"] == "1"
    assert "added-data-files" not in snap.summary
    assert t.scan().to_arrow().column("id").to_pylist() == [1]


# --------------------------------------------------------------------------- bad input


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("bad", [
    [{"id": "one"}],                                   # wrong type
    [{"id": None, "s": "x"}],                          # null in a required column
    [{"s": "x"}],                                      # required column missing
    [{"id": 1, "nope": 2}],                            # not a column
    pa.table({"id": pa.array(["1"])}),                 # wrong Arrow type
    pa.table({"id": pa.array([1, None], pa.int64())}),  # null in required, Arrow
    pd.DataFrame({"id": [1.5]}),                       # float for long: would lose
    "id=1",                                            # not data
])
def test_bad_input_raises_and_leaves_the_table_unchanged(tmp_path: Path, bad: Any) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long not null, s string")
    t.append([{"id": 1, "s": "a"}])
    before = _files(tmp_path / "db" / "t")
    location = t.metadata_location
    with pytest.raises(ValidationError):
        t.append(bad)
    assert _files(tmp_path / "db" / "t") == before
    assert wh.table("db.t").metadata_location == location == t.metadata_location
    assert t.scan().to_arrow().to_pylist() == [{"id": 1, "s": "a"}]


# --------------------------------------------------------------------------- commit loop


def test_concurrent_appends_both_land_after_a_retry(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", "id long", format_version=3)
    a, b = wh.table("db.t"), wh.table("db.t")
    sa = a.append([{"id": 1}, {"id": 2}])
    sb = b.append([{"id": 3}])  # b's base is stale: conflict, reload, re-apply
    assert sb.parent_snapshot_id == sa.snapshot_id
    assert (sb.sequence_number, sb.first_row_id) == (2, 2)
    t = wh.table("db.t")
    assert [s.snapshot_id for s in t.snapshots] == [sa.snapshot_id, sb.snapshot_id]
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert b.metadata_location == t.metadata_location
    # The failed attempt's manifest list is gone: one list per snapshot, one manifest each.
    meta = sorted(p.name for p in (tmp_path / "db" / "t" / "metadata").iterdir())
    assert len([m for m in meta if m.startswith("snap-")]) == 2
    assert len([m for m in meta if m.endswith("-m0.avro")]) == 2
    assert len([m for m in meta if m.endswith(".metadata.json")]) == 3
    assert f"snap-{sb.snapshot_id}-2-" in " ".join(meta)  # committed on the second attempt


def test_many_writers_in_threads_lose_nothing(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", "id long", properties={"commit.retry.num-retries": "50",
                                                   "commit.retry.min-wait-ms": "1",
                                                   "commit.retry.max-wait-ms": "20"})
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        t = wh.table("db.t")
        try:
            for k in range(5):
                t.append([{"id": w * 100 + k}])
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    t = wh.table("db.t")
    assert len(t.snapshots) == 20
    assert [s.sequence_number for s in t.snapshots] == list(range(1, 21))
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == sorted(
        w * 100 + k for w in range(4) for k in range(5))
    assert len(list((tmp_path / "db" / "t" / "data").iterdir())) == 20


def test_a_commit_that_finally_fails_leaves_no_trace(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", "id long, d date", partition_by=["d"],
                    properties={"commit.retry.num-retries": "2"})
    a, b = wh.table("db.t"), wh.table("db.t")
    a.append([{"id": 1, "d": dt.date(2024, 1, 1)}])
    before = _files(tmp_path / "db" / "t")
    waits: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:  # the time module is shared: other threads (a
        if threading.current_thread() is threading.main_thread():  # subprocess wait) sleep
            waits.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr("icenb.table.commit.producer.time.sleep", sleep)
    commit = b.catalog.commit_table  # type: ignore[union-attr]
    calls = []

    def always_conflicts(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1])
        raise CommitConflict("simulated concurrent commit", field="metadata_location")

    monkeypatch.setattr(b.catalog, "commit_table", always_conflicts)
    with pytest.raises(CommitConflict):
        b.append([{"id": 2, "d": dt.date(2024, 1, 2)}, {"id": 3, "d": dt.date(2024, 1, 3)}])
    assert len(calls) == 3  # the first attempt and two retries
    assert len(waits) == 2 and 0.09 <= waits[0] <= 0.11 and 0.18 <= waits[1] <= 0.22
    assert _files(tmp_path / "db" / "t") == before  # no data file, manifest or list left
    assert b.metadata_location == a.metadata_location  # refreshed
    monkeypatch.setattr(b.catalog, "commit_table", commit)
    b.append([{"id": 4, "d": dt.date(2024, 1, 4)}])
    assert sorted(wh.table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 4]


def test_zero_retries_fail_on_the_first_conflict(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", "id long", properties={"commit.retry.num-retries": "0"})
    a, b = wh.table("db.t"), wh.table("db.t")
    a.append([{"id": 1}])
    before = _files(tmp_path / "db" / "t")
    with pytest.raises(CommitConflict):
        b.append([{"id": 2}])
    assert _files(tmp_path / "db" / "t") == before
    assert b.current_snapshot == a.current_snapshot  # refreshed to what won
    b.append([{"id": 3}])
    assert sorted(b.scan().to_arrow().column("id").to_pylist()) == [1, 3]


# --------------------------------------------------------------------------- peers


@pytest.fixture(scope="module")
def java(written: Written) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Java's rows and ``snapshots``/``files`` tables of every snapshot (one JVM)."""
    keys: list[tuple[str, str, int]] = []
    requests: list[dict[str, Any]] = []
    for name, history in written.expected.items():
        location = written.warehouse.table(name).metadata_location
        for sid, _ in history:
            keys.append((name, "rows", sid))
            requests.append({"metadata_file": location, "snapshot_id": sid})
            for kind in ("snapshots", "files"):
                keys.append((name, kind, sid))
                requests.append({"location": location, "table": kind, "snapshot_id": sid})
    results = run_reference_batch("java_read_written.py", requests)
    return dict(zip(keys, results, strict=True))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_java_reads_every_snapshot_as_icenb(
        written: Written, java: dict[tuple[str, str, int], dict[str, Any]],
        sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    for sid, _ in written.expected[sc.name]:
        theirs = java[(sc.name, "rows", sid)]
        assert theirs["ok"], theirs
        ours = t.at(sid).to_arrow()
        assert theirs["columns"] == ours.column_names
        assert sorted(theirs["rows"], key=lambda r: r[0]) == normalized(ours)
        assert compare(t.inspect.files(sid), java[(sc.name, "files", sid)]) == []
    assert compare(t.inspect.snapshots(), java[(sc.name, "snapshots", sid)]) == []


@pytest.fixture(scope="module")
def pyiceberg_catalog(written: Written) -> Iterator[Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    yield PyIcebergSqlCatalog("default", uri=f"sqlite:///{written.root}/catalog.db",
                              warehouse=written.root.as_uri())


def test_pyiceberg_lists_loads_and_reads_the_tables(written: Written,
                                                    pyiceberg_catalog: Any) -> None:
    assert sorted(".".join(i) for i in pyiceberg_catalog.list_tables("db")) == \
        sorted(s.name for s in SCENARIOS)
    for sc in SCENARIOS:
        ours = written.warehouse.table(sc.name)
        theirs = pyiceberg_catalog.load_table(sc.name)
        assert theirs.metadata_location == ours.metadata_location
        assert [s.snapshot_id for s in theirs.snapshots()] == [s.snapshot_id
                                                               for s in ours.snapshots]
        for sid, _ in written.expected[sc.name]:
            got = theirs.scan(snapshot_id=sid).to_arrow()
            assert normalized(got) == normalized(ours.at(sid).to_arrow()), (sc.name, sid)


@pytest.mark.parametrize("error", [CommitStateUnknown("the catalog did not answer"),
                                   KeyboardInterrupt()])
def test_an_unknown_outcome_keeps_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            error: BaseException) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    before = set(_files(tmp_path / "db" / "t"))

    def unknown(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(t.catalog, "commit_table", unknown)
    with pytest.raises(type(error)):
        t.append([{"id": 1}])
    kept = set(_files(tmp_path / "db" / "t")) - before
    # The commit may have landed: its data file, manifest and manifest list stay.
    assert len([f for f in kept if f.endswith(".parquet")]) == 1
    assert len([f for f in kept if "/metadata/snap-" in f]) == 1
    assert len([f for f in kept if f.endswith("-m0.avro")]) == 1


def test_appending_to_a_tag_is_refused_before_writing(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    snap = t.append([{"id": 1}])
    md = apply_updates(t.metadata, [SetSnapshotRef("v1", snap.snapshot_id, SnapshotRefType.TAG)],
                       metadata_location=t.metadata_location)
    t.catalog.commit_table(t.identifier, t.metadata_location, md)  # type: ignore[union-attr]
    t.refresh()
    before = _files(tmp_path / "db" / "t")
    with pytest.raises(ValidationError, match="tag"):
        t.append([{"id": 2}], branch="v1")
    assert _files(tmp_path / "db" / "t") == before


@pytest.mark.parametrize("value", ["-1", "four"])
def test_retry_properties_must_be_counts(value: str) -> None:
    with pytest.raises(ValidationError) as e:
        RetryPolicy.from_properties({"commit.retry.num-retries": value})
    assert e.value.field == "commit.retry.num-retries"
    assert RetryPolicy.from_properties({}).num_retries == 4


def test_append_through_a_filesystem_catalog(tmp_path: Path) -> None:
    catalog = FilesystemCatalog(str(tmp_path))
    catalog.create_namespace("db")
    schema = parse_schema("id long not null, s string")
    catalog.create_table("db.t", new_table_metadata(
        schema, location=str(tmp_path / "db" / "t"), format_version=2))
    a, b = icenb.load_table(catalog, "db.t"), icenb.load_table(catalog, "db.t")
    a.append([{"id": 1, "s": "a"}])
    b.append([{"id": 2, "s": "b"}])  # conflicts on v2.metadata.json, retries as v3
    t = icenb.load_table(catalog, "db.t")
    assert (t.metadata_location or "").endswith("/v3.metadata.json")
    assert [s.sequence_number for s in t.snapshots] == [1, 2]
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 2]
