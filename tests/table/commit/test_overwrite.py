"""Copy-on-write delete, overwrite and dynamic partition overwrite (Table.delete / overwrite /
dynamic_partition_overwrite) and the producers under them (DeleteFiles, OverwriteFiles,
ReplacePartitions): rows, summaries, manifest entries, conflicts and retries.

Every snapshot of the scenario tables is read by Iceberg Java 1.10 (rows, and its ``files``,
``entries`` and ``manifests`` metadata tables against icenb's inspect tables) in one JVM.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import CommitConflict, ValidationError
from icenb.io.manifest_reader import read_manifest_list
from icenb.spec.manifest import EntryStatus
from icenb.table import Table
from icenb.table.commit.merging import read_entries
from icenb.table.commit.overwrite import DeleteFiles, OverwriteFiles
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
)

DDL = "id long not null, d date, s string, x double"


def rows(ids: range | list[int], tag: str = "a") -> list[dict[str, Any]]:
    return [{"id": i, "d": dt.date(2024, 1, 1 + i % 3), "s": None if i % 7 == 6 else f"{tag}{i}",
             "x": i / 2} for i in ids]


def ids_of(t: Table, sid: int | None = None) -> list[int]:
    scan = t.scan() if sid is None else t.at(sid)
    return sorted(scan.to_arrow().column("id").to_pylist())


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- scenarios


SCENARIOS = v123_scenarios("d")


@dataclass
class Written:
    warehouse: Warehouse
    #: per table: (snapshot id, operation, expected rows)
    history: dict[str, list[tuple[int, str, list[dict[str, Any]]]]]


def _run(t: Table) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """A sequence of writes; the rows each snapshot must hold."""
    out: list[tuple[int, str, list[dict[str, Any]]]] = []
    state: list[dict[str, Any]] = []

    def record(snap: Any, new_state: list[dict[str, Any]]) -> None:
        nonlocal state
        state = new_state
        out.append((snap.snapshot_id, str(snap.summary.operation), state))

    record(t.append(rows(range(0, 20))), rows(range(0, 20)))
    record(t.append(rows(range(20, 40))), state + rows(range(20, 40)))
    # partly matching files are rewritten
    record(t.delete("id < 5"), [r for r in state if r["id"] >= 5])
    # whole files only (metrics or partition prove every row matches)
    filt = "id >= 20" if not t.spec.fields else "d = '2024-01-01'"
    gone = ((lambda r: r["id"] >= 20) if not t.spec.fields
            else (lambda r: r["d"] == dt.date(2024, 1, 1)))
    record(t.delete(filt), [r for r in state if not gone(r)])
    new = rows([100, 101, 104], "b")  # partitions 2024-01-02 and -03
    dyn = t.dynamic_partition_overwrite(new)
    if t.spec.fields:
        days = {r["d"] for r in new}
        record(dyn, [r for r in state if r["d"] not in days] + new)
    else:
        record(dyn, new)
    record(t.append(rows(range(40, 46))), state + rows(range(40, 46)))
    replacement = rows([200, 201], "c")
    record(t.overwrite(replacement, "id >= 101 and id < 200"),
           [r for r in state if not 101 <= r["id"] < 200] + replacement)
    final = rows([300], "z")
    record(t.overwrite(final), final)
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    wh = icenb.warehouse(tmp_path_factory.mktemp("overwrite"))
    return Written(wh, write_scenarios(wh, SCENARIOS, DDL, _run))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_snapshot_holds_the_expected_rows(written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    schema = t.scan().to_arrow().schema
    ops = [op for _, op, _ in written.history[sc.name]]
    assert ops == ["append", "append", "overwrite", "delete", "overwrite", "append",
                   "overwrite", "overwrite"]
    for sid, _, expected in written.history[sc.name]:
        assert normalized_rows(t.at(sid).to_arrow()) == normalized_rows(
            pa.Table.from_pylist(expected, schema=schema))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_summaries_count_what_changed(written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    snaps = {s.snapshot_id: s for s in t.snapshots}
    hist = written.history[sc.name]
    for i, (sid, _, expected) in enumerate(hist):
        summary = snaps[sid].summary
        assert summary is not None
        assert int(summary["total-records"]) == len(expected)
        live = t.inspect.files(sid)
        assert int(summary["total-data-files"]) == live.num_rows
        assert int(summary["total-files-size"]) == sum(
            live.column("file_size_in_bytes").to_pylist())
        if i:
            before = len(hist[i - 1][2])
            added = int(summary.get("added-records", "0"))
            assert before + added - int(summary.get("deleted-records", "0")) == len(expected)
    cow = snaps[hist[2][0]].summary  # delete id < 5: rewrites the files holding ids 0..4
    assert cow is not None
    assert int(cow["deleted-records"]) - int(cow["added-records"]) == 5
    dyn = snaps[hist[4][0]].summary
    assert dyn is not None and dyn["replace-partitions"] == "true"


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_removed_entries_are_deleted_and_others_keep_their_numbers(
        written: Written, sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    hist = written.history[sc.name]
    first, second, delete = hist[1][0], hist[2][0], hist[3][0]
    before = t.inspect.entries(second)
    after = t.inspect.entries(delete)
    by_path_before = {r["data_file"]["file_path"]: r for r in before.to_pylist()}
    statuses = {r["status"] for r in after.to_pylist()}
    assert int(EntryStatus.DELETED) in statuses
    for r in after.to_pylist():
        old = by_path_before.get(r["data_file"]["file_path"])
        if r["status"] == EntryStatus.DELETED and old is not None and \
                old["status"] != EntryStatus.DELETED:  # removed now (older deletes may stay)
            assert r["snapshot_id"] == delete
            assert r["sequence_number"] == old["sequence_number"]
        elif old is not None:  # an untouched file: same snapshot id and sequence numbers
            assert (r["snapshot_id"], r["sequence_number"], r["file_sequence_number"]) == (
                old["snapshot_id"], old["sequence_number"], old["file_sequence_number"])
    if sc.format_version >= 3:  # existing files keep their first row id
        fr_before = {r["data_file"]["file_path"]: r["data_file"]["first_row_id"]
                     for r in before.to_pylist()}
        for r in after.to_pylist():
            if r["data_file"]["file_path"] in fr_before:
                assert r["data_file"]["first_row_id"] == fr_before[r["data_file"]["file_path"]]
    assert first != delete


def test_delete_matching_nothing_adds_no_snapshot(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", DDL)
    assert t.delete("id > 0") is None  # empty table
    t.append(rows(range(5)))
    before = t.metadata_location
    assert t.delete("id > 100") is None
    assert t.metadata_location == before and len(t.snapshots) == 1


def test_null_filter_results_are_kept(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL)
    t.append(rows(range(14)))  # ids 6 and 13 have s null
    t.delete("s != 'a1'")
    assert ids_of(t) == [1, 6, 13]


def test_bad_filter_writes_nothing(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL)
    t.append(rows(range(5)))
    before = _files(tmp_path)
    with pytest.raises(ValidationError):
        t.delete("nope = 1")
    with pytest.raises(ValidationError):
        t.overwrite([{"id": "not a number"}], "id > 1")
    with pytest.raises(ValidationError):
        t.delete("id > 1", mode="sideways")
    assert _files(tmp_path) == before


def test_delete_files_producer_refuses_partial_files(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", DDL, format_version=2)
    t.append(rows(range(10)))
    before = _files(tmp_path)
    p = DeleteFiles(t.catalog, t.identifier, t.io).delete_from_row_filter("id < 5")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="some, but not all"):
        p.commit(t._loaded())
    assert _files(tmp_path) == before
    p = DeleteFiles(t.catalog, t.identifier, t.io).delete_from_row_filter("id < 50")  # type: ignore[arg-type]
    committed = p.commit(t._loaded())
    assert committed.metadata.current_snapshot().summary.operation == "delete"  # type: ignore[union-attr]
    t.refresh()
    assert ids_of(t) == []


def test_delete_by_path_of_a_missing_file_is_a_validation_error(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL)
    t.append(rows(range(3)))
    p = DeleteFiles(t.catalog, t.identifier, t.io).delete_by_path("/nowhere.parquet")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="not in the table"):
        p.commit(t._loaded())


# --------------------------------------------------------------------------- conflicts


def _two(tmp_path: Path, **props: str) -> tuple[Table, Table]:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", DDL, partition_by=["d"], format_version=2, properties=props)
    a = wh.table("db.t")
    a.append(rows(range(12)))
    return a, wh.table("db.t")


def test_concurrent_delete_of_a_replaced_file_conflicts(tmp_path: Path) -> None:
    a, b = _two(tmp_path)
    before_b = b.metadata_location
    a.delete("id = 3")  # rewrites the 2024-01-01 file
    before = _files(tmp_path)
    with pytest.raises(CommitConflict):
        b.delete("id = 6")  # same file, removed concurrently
    assert _files(tmp_path) == before  # the rewritten file and manifests are gone
    assert b.metadata_location != before_b  # refreshed to what won
    assert ids_of(b) == [i for i in range(12) if i != 3]
    b.delete("id = 6")  # on the fresh state it works
    assert ids_of(b) == [i for i in range(12) if i not in (3, 6)]


def test_manifests_of_a_lost_attempt_are_deleted_wherever_metadata_goes(tmp_path: Path) -> None:
    """The retry re-filters the manifest a concurrent delete rewrote; the manifest the first
    attempt wrote is then unused and deleted after the commit, also when
    write.metadata.path has no /metadata/ segment."""
    meta = tmp_path / "meta-files"
    a, b = _two(tmp_path, **{"write.metadata.path": str(meta)})
    b.delete("d = '2024-01-02'")  # rewrites the manifest both files are listed in
    a.delete("d = '2024-01-01'")  # built on the stale state, conflicts once, re-applied
    assert ids_of(a) == [i for i in range(12) if i % 3 == 2]
    referenced: set[str] = set()
    for snap in a.snapshots:
        assert snap.manifest_list is not None
        referenced.add(snap.manifest_list)
        referenced.update(m.manifest_path
                          for m in read_manifest_list(a.io, snap, a.format_version))
    assert {str(p) for p in meta.glob("*.avro")} == referenced


def test_concurrent_append_outside_the_filter_is_reapplied(tmp_path: Path) -> None:
    a, b = _two(tmp_path)
    a.append(rows([13]))  # d = 2024-01-02, not matched by b's filter
    snap = b.delete("d = '2024-01-01' and id < 4")
    assert snap is not None and snap.parent_snapshot_id == a.current_snapshot.snapshot_id  # type: ignore[union-attr]
    assert ids_of(b) == [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13]


def test_concurrent_matching_append_conflicts_only_when_serializable(tmp_path: Path) -> None:
    a, b = _two(tmp_path)
    a.append(rows([15]))  # d = 2024-01-01, id 15 matches "id > 10"
    with pytest.raises(CommitConflict, match="conflicting files"):
        b.delete("id > 10")
    a2, b2 = _two(tmp_path / "snap", **{"write.delete.isolation-level": "snapshot"})
    a2.append(rows([15]))
    b2.delete("id > 10")
    assert ids_of(b2) == [*range(11), 15]  # the concurrent row was not seen, so it stays


def test_overwrite_files_retry_rechecks_live_files(tmp_path: Path) -> None:
    a, b = _two(tmp_path)
    snap = b.current_snapshot
    assert snap is not None
    victim = read_entries(b.io, read_manifest_list(b.io, snap, 2)[0], b.metadata)[0].data_file
    a.delete("id >= 0")  # a concurrent delete removes every file
    before = _files(tmp_path)
    p = OverwriteFiles(b.catalog, b.identifier, b.io)  # type: ignore[arg-type]
    p.delete_file(victim)
    p.write_data(rows([99]), b.metadata)
    with pytest.raises(CommitConflict, match="no longer in the table"):
        p.commit(b._loaded())
    assert _files(tmp_path) == before


def test_dynamic_partition_overwrite_of_an_unpartitioned_table_replaces_all(
        tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=2)
    t.append(rows(range(5)))
    t.append(rows(range(5, 9)))
    snap = t.dynamic_partition_overwrite(rows([50]))
    assert ids_of(t) == [50]
    assert snap.summary is not None and snap.summary["deleted-data-files"] == "2"


def test_overwrite_to_a_branch_leaves_main(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", DDL, format_version=2)
    t.append(rows(range(5)))
    main = t.current_snapshot
    snap = t.overwrite(rows([9]), branch="dev")
    assert t.current_snapshot == main
    assert ids_of(t, snap.snapshot_id) == [9]
    assert t.refs["dev"].snapshot_id == snap.snapshot_id


# --------------------------------------------------------------------------- Java


JAVA_TABLES = ("files", "entries", "manifests")


@pytest.fixture(scope="module")
def java(written: Written) -> dict[Key, dict[str, Any]]:
    requests: dict[Key, dict[str, Any]] = {}
    for name, hist in written.history.items():
        location = written.warehouse.table(name).metadata_location
        assert location is not None
        for sid, _, _ in hist:
            requests.update(snapshot_requests(name, location, sid, JAVA_TABLES))
    return run_keyed("java_read_written.py", requests)


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_java_reads_every_snapshot_as_icenb(
        written: Written, java: dict[Key, dict[str, Any]], sc: Scenario) -> None:
    t = written.warehouse.table(sc.name)
    for sid, _, _ in written.history[sc.name]:
        assert_java_reads_snapshot(t, sc.name, sid, java, JAVA_TABLES)
