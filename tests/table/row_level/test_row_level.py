"""Merge-on-read row-level changes end to end: delete by filter, update, upsert, delete by key.

Each scenario table (v2/v3, partitioned or not) goes through appends, two overlapping deletes
(v3: the second merges the DVs, one DV per data file), an update, a delete of updated rows, an
upsert and a delete by key; every snapshot is read back by icenb, by Iceberg Java 1.10 (rows,
``files`` and ``entries`` tables, one JVM for the module, which also writes reference DVs whose
bytes icenb's writer must reproduce) and, for v2 snapshots without equality deletes, PyIceberg.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import CommitConflict, ValidationError
from icenb.io.puffin import PuffinReader
from icenb.spec.deletion_vector import deserialize_deletion_vector
from icenb.spec.manifest import DataFile, FileFormat
from icenb.table import Table
from icenb.table.row_level.merge_on_read import delete_merge_on_read
from icenb.table.warehouse import Warehouse
from icenb.table.write.delete_files import write_deletion_vectors
from icenb.table.write.locations import location_provider
from tests.table._helpers import (
    Key,
    assert_java_reads_snapshot,
    run_keyed,
    snapshot_requests,
)
from tests.table._helpers import normalized_rows as normalized

DDL = "id long not null, s string, v double, d date"
Row = dict[str, Any]


def row(i: int, s: str | None = None) -> Row:
    return {"id": i, "s": s if s is not None else f"s{i}", "v": i / 4,
            "d": dt.date(2024, 1, 1 + i % 28)}


@dataclass
class Scenario:
    name: str
    format_version: int
    partition_by: list[str] = field(default_factory=list)


SCENARIOS = [Scenario("db.v2", 2), Scenario("db.v2_parted", 2, ["bucket(3, id)"]),
             Scenario("db.v3", 3), Scenario("db.v3_parted", 3, ["bucket(3, id)"])]

#: (what, operation on the table, change to the expected rows by id)
Step = tuple[str, Callable[[Table], Any], Callable[[dict[int, Row]], None]]


def _drop(pred: Callable[[Row], bool]) -> Callable[[dict[int, Row]], None]:
    def change(rows: dict[int, Row]) -> None:
        for k in [k for k, r in rows.items() if pred(r)]:
            del rows[k]
    return change


def _set_upd(rows: dict[int, Row]) -> None:
    for i in (10, 11, 12, 40):
        rows[i] = {**rows[i], "s": "upd", "v": 1.5}


def _upserted(rows: dict[int, Row]) -> None:
    rows[3] = row(3, "new")
    rows[100] = row(100, "new")
    rows[20] = row(20, "new")


STEPS: list[Step] = [
    ("append", lambda t: t.append([row(i) for i in range(30)]), lambda r: r.update(
        {i: row(i) for i in range(30)})),
    ("append", lambda t: t.append([row(i) for i in range(30, 50)]), lambda r: r.update(
        {i: row(i) for i in range(30, 50)})),
    ("delete", lambda t: t.delete("id < 5 or id = 33", mode="merge-on-read"),
     _drop(lambda r: r["id"] < 5 or r["id"] == 33)),
    ("delete", lambda t: t.delete("id >= 45 or id = 6 or id = 31", mode="merge-on-read"),
     _drop(lambda r: r["id"] >= 45 or r["id"] in (6, 31))),
    ("update", lambda t: t.update({"s": "upd", "v": 1.5}, "id between 10 and 12 or id = 40",
                                         mode="merge-on-read"),
     _set_upd),
    ("delete", lambda t: t.delete("s = 'upd' and id = 11", mode="merge-on-read"),
     _drop(lambda r: r["id"] == 11)),
    ("upsert", lambda t: t.upsert([row(3, "new"), row(100, "new"), row(20, "new")], on="id"),
     _upserted),
    ("delete_by_key", lambda t: t.delete_by_key([{"id": 21}, {"id": 999}], on=["id"]),
     _drop(lambda r: r["id"] == 21)),
]
FIRST_EQUALITY_STEP = 6


def arrow_rows(rows: dict[int, Row], t: Table) -> pa.Table:
    return pa.Table.from_pylist([rows[k] for k in sorted(rows)],
                                schema=t.scan().to_arrow().schema)


@dataclass
class Written:
    warehouse: Warehouse
    root: Path
    #: per table: (step name, snapshot id, expected rows) after each step
    history: dict[str, list[tuple[str, int, dict[int, Row]]]]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    root = tmp_path_factory.mktemp("row_level")
    wh = icenb.warehouse(root)
    history: dict[str, list[tuple[str, int, dict[int, Row]]]] = {}
    for sc in SCENARIOS:
        t = wh.create_table(sc.name, DDL, partition_by=sc.partition_by,
                            format_version=sc.format_version)
        expected: dict[int, Row] = {}
        steps = []
        for what, op, change in STEPS:
            snap = op(t)
            assert snap is not None, (sc.name, what)
            change(expected)
            steps.append((what, snap.snapshot_id, dict(expected)))
        history[sc.name] = steps
    return Written(wh, root, history)


# --------------------------------------------------------------------------- icenb


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_snapshot_reads_back_the_expected_rows(written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    for what, sid, expected in written.history[sc.name]:
        assert normalized(t.at(sid).to_arrow()) == normalized(arrow_rows(expected, t)), what


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_operations_and_delete_files(written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    ops = [t.snapshot(sid).summary.operation for _, sid, _ in written.history[sc.name]]
    assert [str(o) for o in ops] == ["append", "append", "delete", "delete", "overwrite",
                                     "delete", "overwrite", "delete"]
    files = t.inspect.files().to_pylist()
    deletes = [f for f in files if f["content"] == 1]
    if sc.format_version == 3:
        assert all(f["file_format"] == "PUFFIN" for f in deletes)
        refs = [f["referenced_data_file"] for f in deletes]
        assert len(refs) == len(set(refs))  # one DV per data file (spec: Deletion Vectors)
    else:
        assert all(f["file_format"] == "PARQUET" for f in deletes)
    eq = [f for f in files if f["content"] == 2]
    assert eq and all(f["equality_ids"] == [1] for f in eq)


def test_the_second_delete_replaces_the_dv_with_the_union(written: Written) -> None:
    t = written.warehouse.table("db.v3")
    _, first, _ = written.history["db.v3"][2]
    _, second, _ = written.history["db.v3"][3]
    before = [f for f in t.inspect.files(first).to_pylist() if f["content"] == 1]
    (dv1,) = [f for f in before if f["record_count"] == 5]  # ids 0-4 of the first file
    after = [f for f in t.inspect.files(second).to_pylist() if f["content"] == 1]
    mine = [f for f in after if f["referenced_data_file"] == dv1["referenced_data_file"]]
    assert len(mine) == 1 and mine[0]["file_path"] != dv1["file_path"]
    assert mine[0]["record_count"] == 6  # the union: ids 0-4 and 6
    summary = t.snapshot(second).summary
    assert summary is not None and summary.properties["removed-dvs"] == "2"
    entries = t.inspect.entries(second).to_pylist()
    assert any(e["status"] == 2 and e["data_file"]["file_path"] == dv1["file_path"]
               for e in entries)


def test_replacing_one_dv_keeps_its_siblings_in_the_same_puffin_file(tmp_path: Path) -> None:
    """One Puffin file holds the DVs of both data files; a later delete from one file
    replaces only that DV (removed by path and offset) and the other stays live."""
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=3)
    t.append([row(i) for i in range(5)])
    t.append([row(i) for i in range(5, 10)])
    t.delete("id in (1, 6)", mode="merge-on-read")
    first = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
    assert len(first) == 2 and len({f["file_path"] for f in first}) == 1
    t.delete("id = 2", mode="merge-on-read")
    summary = t.current_snapshot.summary if t.current_snapshot else None
    assert summary is not None
    assert summary.properties["added-dvs"] == "1" and summary.properties["removed-dvs"] == "1"
    now = {f["referenced_data_file"]: f for f in t.inspect.files().to_pylist()
           if f["content"] == 1}
    (kept,) = [f for f in first if f["record_count"] == 1
               and now[f["referenced_data_file"]]["file_path"] == f["file_path"]]
    assert now[kept["referenced_data_file"]]["content_offset"] == kept["content_offset"]
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 3, 4, 5, 7, 8, 9]


def test_no_matching_row_commits_nothing(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=3)
    assert delete_merge_on_read(t, "id = 1") is None  # empty table
    t.append([row(1)])
    t.delete("id = 1", mode="merge-on-read")
    n = len(t.snapshots)
    assert t.delete("id = 1", mode="merge-on-read") is None  # already deleted
    assert t.update({"s": "x"}, "id = 1", mode="merge-on-read") is None
    assert len(t.snapshots) == n


def test_upgraded_table_merges_file_scoped_position_deletes_into_the_dv(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=2)
    t.append([row(i) for i in range(10)])
    t.delete("id in (1, 2)", mode="merge-on-read")
    (old,) = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
    t.upgrade(3)
    t.delete("id = 7", mode="merge-on-read")
    (dv,) = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
    assert dv["file_format"] == "PUFFIN" and dv["record_count"] == 3
    assert dv["file_path"] != old["file_path"]
    assert sorted(r["id"] for r in t.scan().to_arrow().to_pylist()) == [0, 3, 4, 5, 6, 8, 9]


def test_update_a_callable_and_a_branch(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=2)
    t.append([row(i) for i in range(5)])
    main_before = t.current_snapshot
    assert main_before is not None
    t.update({"v": lambda rows: [x * 10 for x in rows.column("v").to_pylist()]}, "id >= 3",
             branch="dev", mode="merge-on-read")
    assert t.current_snapshot == main_before
    dev = {r["id"]: r["v"] for r in t.at("dev").to_arrow().to_pylist()}
    assert dev == {0: 0.0, 1: 0.25, 2: 0.5, 3: 7.5, 4: 10.0}


def test_upsert_on_identifier_fields_by_default(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=2)
    with t.update_schema() as u:
        u.set_identifier_fields("id")
    t.append([row(i) for i in range(3)])
    t.upsert(pa.Table.from_pylist([row(1, "x")], schema=t.scan().to_arrow().schema))
    assert {r["id"]: r["s"] for r in t.scan().to_arrow().to_pylist()} == {0: "s0", 1: "x",
                                                                          2: "s2"}


# --------------------------------------------------------------------------- bad input


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and "catalog.db" not in p.name)


@pytest.mark.parametrize("call", [
    lambda t: t.upsert([row(1)], on="nope"),
    lambda t: t.upsert([row(1)], on="v"),  # a double key
    lambda t: t.upsert([row(1)]),  # no `on` and no identifier fields
    lambda t: t.upsert([row(1), row(1, "again")], on="id"),  # duplicate keys
    lambda t: t.upsert([row(1)], on="s"),  # partition source not in the key
    lambda t: t.delete_by_key([{"nope": 1}], on="id"),
    lambda t: t.delete_by_key([{"s": "x"}], on="id"),
    lambda t: t.update({"nope": 1}, "id = 1"),
    lambda t: t.update({"id": "not a number"}, "id = 1"),
    lambda t: t.update({"id": None}, "id = 1"),  # required column
    lambda t: t.update({}, "id = 1"),
    lambda t: t.delete("nope = 1", mode="merge-on-read"),
], ids=["unknown-key", "double-key", "no-key", "duplicate-keys", "partition-not-in-key",
        "key-data-unknown-column", "key-data-missing-key", "update-unknown-column",
        "update-bad-value", "update-null-required", "update-nothing", "delete-unknown-column"])
def test_bad_input_raises_and_writes_nothing(tmp_path: Path,
                                             call: Callable[[Table], Any]) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, partition_by=["bucket(2, id)"],
                                               format_version=3)
    t.append([row(i) for i in range(4)])
    before, location = _files(tmp_path), t.metadata_location
    with pytest.raises(ValidationError):
        call(t)
    assert _files(tmp_path) == before
    assert t.refresh().metadata_location == location


def test_v1_tables_refuse_merge_on_read(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=1)
    t.append([row(1)])
    before = _files(tmp_path)
    for call in (lambda: t.delete("id = 1", mode="merge-on-read"),
                 lambda: t.update({"s": "x"}, "id = 1", mode="merge-on-read"),
                 lambda: t.upsert([row(1)], on="id"),
                 lambda: t.delete_by_key([{"id": 1}], on="id")):
        with pytest.raises(ValidationError, match="upgrade"):
            call()
    assert _files(tmp_path) == before


# --------------------------------------------------------------------------- conflicts


@pytest.mark.parametrize("fv", [2, 3])
def test_concurrent_removal_of_the_data_file_conflicts_and_leaves_nothing(
        tmp_path: Path, fv: int) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", DDL, format_version=fv)
    t.append([row(i) for i in range(10)])
    other = wh.table("db.t")
    other.delete("true", mode="copy-on-write")  # removes the data file
    before = _files(tmp_path)
    with pytest.raises(CommitConflict):
        t.delete("id < 3", mode="merge-on-read")
    assert _files(tmp_path) == before
    assert t.metadata_location == other.metadata_location  # the Table shows the new state


def test_concurrent_matching_append_conflicts_when_serializable(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", DDL, format_version=2)
    t.append([row(i) for i in range(10)])
    wh.table("db.t").append([row(50)])
    with pytest.raises(CommitConflict):
        t.update({"s": "x"}, "id >= 5", mode="merge-on-read")
    t.refresh()
    t.set_properties({"write.update.isolation-level": "snapshot"})
    wh.table("db.t").append([row(51)])
    stale = wh.table("db.t")
    t.append([row(52)])
    assert stale.update({"s": "x"}, "id >= 5",
                        mode="merge-on-read") is not None  # snapshot isolation: retried


# --------------------------------------------------------------------------- peers

DV_CASES = [("dv_small", 100, "id IN (1, 5, 99)"),
            ("dv_mixed", 70000,
             "id % 3 = 0 OR id BETWEEN 20000 AND 30000 OR id IN (65535, 65536, 69999)")]


@pytest.fixture(scope="module")
def java(written: Written) -> dict[Key, dict[str, Any]]:
    requests: dict[Key, dict[str, Any]] = {}
    for name, steps in written.history.items():
        location = written.warehouse.table(name).metadata_location
        assert location is not None
        for _, sid, _ in steps:
            requests.update(snapshot_requests(name, location, sid, ("files", "entries")))
    for dv_name, n, where in DV_CASES:
        requests[(dv_name, "dv", 0)] = {"dv": dv_name, "rows": n, "where": where}
    return run_keyed("java_row_level.py", requests)


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_java_reads_every_snapshot_and_lists_the_same_files(
        written: Written, java: dict[Key, dict[str, Any]], sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    for what, sid, _ in written.history[sc.name]:
        assert_java_reads_snapshot(t, sc.name, sid, java, ("files", "entries"), what)


def _python_dv_positions(n: int, where: str) -> list[int]:
    if where.startswith("id IN"):
        return [1, 5, 99]
    return sorted(i for i in range(n) if i % 3 == 0 or 20000 <= i <= 30000
                  or i in (65535, 65536, 69999))


@pytest.mark.parametrize(("name", "n", "where"), DV_CASES, ids=[c[0] for c in DV_CASES])
def test_dv_bytes_equal_javas(java: dict[tuple[str, str, int], dict[str, Any]], name: str,
                              n: int, where: str, tmp_path: Path) -> None:
    theirs = java[(name, "dv", 0)]
    assert theirs["ok"], theirs
    java_bytes = base64.b64decode(theirs["puffin"])
    reader = PuffinReader(java_bytes)
    (blob,) = reader.blobs
    expected = _python_dv_positions(n, where)
    assert list(deserialize_deletion_vector(reader.read_blob(blob))) == expected
    data = DataFile(file_path=theirs["referenced_data_file"], file_format=FileFormat.PARQUET,
                    record_count=n, file_size_in_bytes=1)
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=3)
    (dv,) = write_deletion_vectors(
        t.io, [(data, expected)], location_provider=location_provider(t.location, {}),
        created_by=reader.properties["created-by"])
    ours = t.io.new_input(dv.file_path).read()
    assert ours == java_bytes
    assert (dv.content_offset, dv.content_size_in_bytes, dv.record_count) == (
        theirs["content_offset"], theirs["content_size_in_bytes"], theirs["record_count"])


def test_pyiceberg_reads_the_v2_position_delete_snapshots(written: Written) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    catalog = PyIcebergSqlCatalog("default", uri=f"sqlite:///{written.root}/catalog.db",
                                  warehouse=written.root.as_uri())
    for name in ("db.v2", "db.v2_parted"):
        ours = written.warehouse.table(name)
        theirs = catalog.load_table(name)
        for what, sid, _ in written.history[name][:FIRST_EQUALITY_STEP]:
            got = theirs.scan(snapshot_id=sid).to_arrow()
            assert normalized(got) == normalized(ours.at(sid).to_arrow()), (name, what)
