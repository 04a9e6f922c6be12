"""Copy-on-write updates (``Table.update``, Java's default ``write.update.mode``).

Each scenario table (v1, v2, v3; unpartitioned or partitioned by ``d``) is appended to, has two
rows deleted (v2/v3 with delete files, so the update reads through them), and is then updated:
files matching wholly, files matching partly (also moving rows to another partition), and a
filter that is null for some rows. Every snapshot is read back by icenb and by Iceberg Java 1.10
(rows, ``files`` and ``entries`` tables; one JVM for the module).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import icenb
from icenb.errors import CommitConflict, UnsupportedFeature, ValidationError
from icenb.table import Table
from icenb.table.warehouse import Warehouse
from tests.table._helpers import (
    Key,
    Scenario,
    assert_java_reads_snapshot,
    normalized_rows,
    run_keyed,
    snapshot_requests,
    v123_scenarios,
    write_scenarios,
    written_by_another_engine,
)

DDL = "id long not null, d date, s string, x double"
Row = dict[str, Any]
MOVED = dt.date(2024, 1, 9)


def row(i: int) -> Row:
    return {"id": i, "d": dt.date(2024, 1, 1 + i % 3), "s": None if i % 7 == 6 else f"a{i}",
            "x": i / 2}


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _data_files(t: Table, snapshot_id: int) -> set[str]:
    return {f["file_path"] for f in t.inspect.files(snapshot_id).to_pylist()
            if f["content"] == 0}


def _expected(rows: dict[int, Row], t: Table) -> list[list[Any]]:
    return normalized_rows(pa.Table.from_pylist([rows[k] for k in sorted(rows)],
                                                schema=t.scan().to_arrow().schema))


# --------------------------------------------------------------------------- scenarios


SCENARIOS = v123_scenarios("d")


@dataclass
class Step:
    what: str
    snapshot_id: int
    rows: dict[int, Row]
    #: data files of the parent snapshot holding a row the step matched (None: not an update)
    matched_files: set[str] | None = None


@dataclass
class Written:
    warehouse: Warehouse
    history: dict[str, list[Step]]


def _update_step(t: Table, what: str, state: dict[int, Row], set: dict[str, Any],
                 filter: str, matches: Callable[[Row], bool],
                 change: Callable[[Row], Row]) -> Step:
    """Run ``t.update(set, filter)`` (default mode) and say what it must produce."""
    parent = t.current_snapshot
    assert parent is not None
    hit_ids = [i for i, r in state.items() if matches(r)]
    located = t.scan(columns=["id", "_file"], snapshot_id=parent.snapshot_id).to_arrow()
    files = {f for i, f in zip(located.column("id").to_pylist(),
                               located.column("_file").to_pylist(), strict=True)
             if i in hit_ids}
    snap = t.update(set, filter)
    assert snap is not None, what
    new = {i: change(r) if i in hit_ids else r for i, r in state.items()}
    return Step(what, snap.snapshot_id, new, files)


def _run(t: Table) -> list[Step]:
    out: list[Step] = []
    state: dict[int, Row] = {}
    snap = t.append([row(i) for i in range(20)])
    state = {i: row(i) for i in range(20)}
    out.append(Step("append", snap.snapshot_id, dict(state)))
    snap = t.append([row(i) for i in range(20, 40)])
    state.update({i: row(i) for i in range(20, 40)})
    out.append(Step("append", snap.snapshot_id, dict(state)))
    # v2/v3: delete files hide the rows; v1: the files are rewritten without them
    hidden = t.delete("id in (4, 25)", mode="merge-on-read" if t.format_version > 1 else None)
    assert hidden is not None
    state = {i: r for i, r in state.items() if i not in (4, 25)}
    out.append(Step("delete", hidden.snapshot_id, dict(state)))
    # the second append's files hold only matching rows (one of them deleted)
    step = _update_step(t, "whole files", state,
                        {"x": lambda rows: pc.multiply(rows.column("x"), 10)}, "id >= 20",
                        lambda r: r["id"] >= 20, lambda r: {**r, "x": r["x"] * 10})
    out.append(step)
    state = step.rows
    # some rows of some files; a partition column changes, so rows move to a new partition
    step = _update_step(t, "part of files", state, {"s": "upd", "d": MOVED},
                        "id between 2 and 6 or id = 31",
                        lambda r: 2 <= r["id"] <= 6 or r["id"] == 31,
                        lambda r: {**r, "s": "upd", "d": MOVED})
    out.append(step)
    state = step.rows
    # the filter is null where s is null: those rows do not match and stay as they are
    step = _update_step(t, "null filter", state, {"x": -1}, "s >= 'a30'",
                        lambda r: r["s"] is not None and r["s"] >= "a30",
                        lambda r: {**r, "x": -1.0})
    out.append(step)
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    wh = icenb.warehouse(tmp_path_factory.mktemp("update_cow"))
    return Written(wh, write_scenarios(wh, SCENARIOS, DDL, _run))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_snapshot_holds_the_expected_rows(written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    for step in written.history[sc.name]:
        assert normalized_rows(t.at(step.snapshot_id).to_arrow()) == _expected(step.rows, t), \
            step.what
    # the hidden rows were not brought back by the updates
    ids = t.scan().to_arrow().column("id").to_pylist()
    assert 4 not in ids and 25 not in ids and len(ids) == 38


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_updates_rewrite_exactly_the_files_holding_matching_rows(
        written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    history = written.history[sc.name]
    for before, step in itertools.pairwise(history):
        if step.matched_files is None:
            continue
        snap = t.snapshot(step.snapshot_id)
        assert snap.summary is not None and str(snap.summary.operation) == "overwrite"
        old, new = _data_files(t, before.snapshot_id), _data_files(t, step.snapshot_id)
        assert old - new == step.matched_files, step.what  # the others are left alone
        assert snap.summary["deleted-data-files"] == str(len(step.matched_files))
        # copy-on-write: no delete files are written
        assert "added-delete-files" not in snap.summary.properties, step.what
        if sc.format_version == 1:  # no delete files: the data files hold just the live rows
            assert snap.summary["total-records"] == str(len(step.rows))


def test_whole_file_update_reads_through_deletes_v3(written: Written) -> None:
    """The DV of a rewritten file goes with it (spec: a DV must reference a live file)."""
    t = written.warehouse.table("db.u3")
    steps = written.history["db.u3"]
    rewritten = steps[3].matched_files
    assert rewritten is not None
    deletes_before = [f for f in t.inspect.files(steps[2].snapshot_id).to_pylist()
                      if f["content"] == 1]
    assert rewritten & {f["referenced_data_file"] for f in deletes_before}  # had a DV
    after = t.inspect.files(steps[3].snapshot_id).to_pylist()
    live = {f["file_path"] for f in after if f["content"] == 0}
    assert all(f["referenced_data_file"] in live for f in after if f["content"] == 1)


# --------------------------------------------------------------------------- modes


def test_default_mode_is_copy_on_write_and_the_property_chooses(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", DDL, format_version=2)
    t.append([row(i) for i in range(6)])
    snap = t.update({"s": "x"}, "id = 1")
    assert snap is not None and snap.summary is not None
    assert "added-delete-files" not in snap.summary.properties
    t.set_properties({"write.update.mode": "merge-on-read"})
    snap = t.update({"s": "y"}, "id = 2")
    assert snap is not None and snap.summary is not None
    assert snap.summary["added-delete-files"] == "1"  # a position delete file
    snap = t.update({"s": "z"}, "id = 3", mode="copy-on-write")  # mode beats the property
    assert snap is not None and snap.summary is not None
    assert "added-delete-files" not in snap.summary.properties
    assert {r["id"]: r["s"] for r in t.scan().to_arrow().to_pylist()} == {
        0: "a0", 1: "x", 2: "y", 3: "z", 4: "a4", 5: "a5"}


def test_v1_tables_update_copy_on_write_and_refuse_merge_on_read(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=1)
    t.append([row(i) for i in range(3)])
    assert t.update({"x": 7}, "id = 0") is not None
    assert [r["x"] for r in t.scan("id = 0").to_arrow().to_pylist()] == [7.0]
    t.set_properties({"write.update.mode": "merge-on-read"})
    before, location = _files(tmp_path), t.metadata_location
    with pytest.raises(ValidationError, match="upgrade") as err:
        t.update({"x": 8}, "id = 0")
    assert err.value.field == "format-version"
    assert _files(tmp_path) == before and t.refresh().metadata_location == location


def test_no_matching_row_commits_nothing(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, partition_by=["d"],
                                               format_version=2)
    assert t.update({"s": "x"}, "id = 1") is None  # no snapshot at all
    t.append([row(i) for i in range(6)])
    t.delete("id = 1", mode="merge-on-read")
    n = len(t.snapshots)
    assert t.update({"s": "x"}, "id = 1") is None  # only a deleted row matches
    assert t.update({"s": "x"}, "id > 100") is None
    assert len(t.snapshots) == n


def test_update_on_a_branch_leaves_main(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=3)
    t.append([row(i) for i in range(4)])
    main = t.current_snapshot
    snap = t.update({"x": 0}, "id >= 2", branch="dev")
    assert snap is not None and t.current_snapshot == main
    assert t.refs["dev"].snapshot_id == snap.snapshot_id
    assert {r["id"]: r["x"] for r in t.at("dev").to_arrow().to_pylist()} == {
        0: 0.0, 1: 0.5, 2: 0.0, 3: 0.0}


# --------------------------------------------------------------------------- bad input


NESTED_DDL = "id long not null, st struct<a: int, b: string>"


@pytest.mark.parametrize(("ddl", "call", "error", "field"), [
    (DDL, lambda t: t.update({"nope": 1}, "id = 1"), ValidationError, "nope"),
    (NESTED_DDL, lambda t: t.update({"st.a": 1}, "id = 1"), UnsupportedFeature, "st.a"),
    (DDL, lambda t: t.update({"x": "not a number"}, "id = 1"), ValidationError, "x"),
    (DDL, lambda t: t.update({"id": None}, "id = 1"), ValidationError, None),
    (DDL, lambda t: t.update({"x": lambda rows: [1.0, 2.0, 3.0]}, "id = 1"), ValidationError,
     "x"),
    (DDL, lambda t: t.update({}, "id = 1"), ValidationError, "set"),
    (DDL, lambda t: t.update({"x": 1}, "nope = 1"), ValidationError, None),
    (DDL, lambda t: t.update({"x": 1}, "id = 1", mode="sideways"), ValidationError, "mode"),
], ids=["unknown-column", "nested-column", "bad-value", "null-required", "wrong-length",
        "nothing-to-set", "unknown-filter-column", "bad-mode"])
def test_bad_input_raises_and_writes_nothing(tmp_path: Path, ddl: str,
                                             call: Callable[[Table], Any],
                                             error: type[Exception], field: str | None) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", ddl, format_version=2)
    t.append([{"id": i} for i in range(3)])
    before, location = _files(tmp_path), t.metadata_location
    with pytest.raises(error) as err:
        call(t)
    if field is not None:
        assert getattr(err.value, "field", None) == field
    assert _files(tmp_path) == before
    assert t.refresh().metadata_location == location


def test_bad_update_mode_property_is_named(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    with pytest.raises(ValidationError):  # refused at the door (issue 17) ...
        wh.create_table("db.t", DDL, format_version=2, properties={"write.update.mode": "nope"})
    t = wh.create_table("db.t", DDL, format_version=2)
    written_by_another_engine(t, {"write.update.mode": "nope"})  # ... or written elsewhere
    t.append([row(1)])
    with pytest.raises(ValidationError) as err:
        t.update({"x": 1}, "id = 1")
    assert err.value.field == "write.update.mode"


# --------------------------------------------------------------------------- conflicts


def _two(tmp_path: Path, **props: str) -> tuple[Table, Table]:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", DDL, partition_by=["d"], format_version=2, properties=props)
    a = wh.table("db.t")
    a.append([row(i) for i in range(12)])
    return a, wh.table("db.t")


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
def test_concurrent_delete_of_a_rewritten_file_conflicts_and_leaves_nothing(
        tmp_path: Path, level: str) -> None:
    a, b = _two(tmp_path, **{"write.update.isolation-level": level})
    a.delete("id = 3")  # copy-on-write: rewrites the 2024-01-01 file
    before = _files(tmp_path)
    with pytest.raises(CommitConflict):
        b.update({"s": "x"}, "id = 6")  # same file: written before the commit found out
    assert _files(tmp_path) == before  # the rewritten file and manifests are gone
    assert b.metadata_location == a.metadata_location  # the Table shows what won
    assert b.update({"s": "x"}, "id = 6") is not None  # on the fresh state it works
    got = {r["id"]: r["s"] for r in b.scan().to_arrow().to_pylist()}
    assert 3 not in got and got[6] == "x" and len(got) == 11


def test_concurrent_matching_append_conflicts_under_update_serializable(tmp_path: Path) -> None:
    a, b = _two(tmp_path, **{"write.delete.isolation-level": "snapshot"})
    a.append([row(15)])  # d = 2024-01-01 and id 15 matches "id > 10"
    with pytest.raises(CommitConflict):
        b.update({"s": "x"}, "id > 10")  # the delete's isolation level is not the update's
    a2, b2 = _two(tmp_path / "snap", **{"write.update.isolation-level": "snapshot"})
    a2.append([row(15)])
    assert b2.update({"s": "x"}, "id > 10") is not None
    got = {r["id"]: r["s"] for r in b2.scan().to_arrow().to_pylist()}
    assert got[11] == "x" and got[15] == "a15"  # the row it did not see is left alone


def test_concurrent_append_elsewhere_is_reapplied(tmp_path: Path) -> None:
    a, b = _two(tmp_path)
    a.append([row(14)])  # d = 2024-01-03: outside the filter's files
    snap = b.update({"s": "x"}, "d = '2024-01-01' and id < 4")
    assert snap is not None
    got = {r["id"]: r["s"] for r in b.scan().to_arrow().to_pylist()}
    assert got[0] == "x" and got[3] == "x" and got[14] == "a14" and len(got) == 13


# --------------------------------------------------------------------------- Java


JAVA_TABLES = ("files", "entries")


@pytest.fixture(scope="module")
def java(written: Written) -> dict[Key, dict[str, Any]]:
    requests: dict[Key, dict[str, Any]] = {}
    for name, steps in written.history.items():
        location = written.warehouse.table(name).metadata_location
        assert location is not None
        for step in steps:
            requests.update(snapshot_requests(name, location, step.snapshot_id, JAVA_TABLES))
    return run_keyed("java_read_written.py", requests)


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_java_reads_every_snapshot_as_icenb(
        written: Written, java: dict[Key, dict[str, Any]], sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    for step in written.history[sc.name]:
        assert_java_reads_snapshot(t, sc.name, step.snapshot_id, java, JAVA_TABLES, step.what)


# --------------------------------------------------------------------------- name mapping


def test_files_without_field_ids_are_read_through_the_name_mapping(tmp_path: Path) -> None:
    """A file imported without field ids (spec: Column Projection, name mapping) keeps its
    values when a copy-on-write update or delete rewrites it."""
    import json

    import pyarrow.parquet as pq

    from icenb.spec.manifest import DataFile, FileFormat
    from icenb.table.commit.producer import FastAppend, commit_snapshot

    mapping = [{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["s"]}]
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long not null, s string", format_version=2,
        properties={"schema.name-mapping.default": json.dumps(mapping)})
    path = tmp_path / "imported.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}),
                   path)
    producer = FastAppend(t.catalog, t.identifier, t.io)  # type: ignore[arg-type]
    producer.add_files([DataFile(file_path=str(path), file_format=FileFormat.PARQUET,
                                 record_count=3, file_size_in_bytes=path.stat().st_size)])
    commit_snapshot(t, producer)
    assert t.update({"s": "x"}, "id = 2") is not None
    assert t.delete("id = 3") is not None
    assert sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "s": "a"}, {"id": 2, "s": "x"}]
