"""Optimistic concurrency as a lesson shows it (issue 22): two handles of one table, loaded from
the same catalog, are two writers whose commits race (spec: "Commit Conflict Resolution and
Retry"). The second writer's commit finds the pointer moved, reloads and re-applies its change:
an append always succeeds (a fast append never conflicts), a delete is refused under
``serializable`` isolation when the other writer added rows its filter may match, and goes
through under ``snapshot`` isolation. ``t.last_commit.attempts`` (and the attempt number in the
manifest list's name, ``snap-<id>-<attempt>-<uuid>.avro``, as Java names it) show the retry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import CommitConflict
from icenb.spec.properties import COMMIT_NUM_RETRIES, WRITE_DELETE_MODE
from icenb.table import Table
from icenb.table.warehouse import Warehouse

ISOLATION = "write.delete.isolation-level"


def ids(t: Table) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


def two_writers(tmp_path: Path, **properties: str) -> tuple[Warehouse, Table, Table]:
    """A table with rows 1 (p=a) and 2 (p=b), and two handles of it loaded after."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, p string", partition_by=["p"], format_version=2,
                        properties=properties)
    t.append([{"id": 1, "p": "a"}, {"id": 2, "p": "b"}])
    return wh, wh.table("db.t"), wh.table("db.t")


def test_the_second_append_is_retried_and_both_land(tmp_path: Path) -> None:
    wh, alice, bob = two_writers(tmp_path)
    alice.append([{"id": 3, "p": "a"}])
    assert alice.last_commit is not None and alice.last_commit.attempts == 1
    before = bob.current_snapshot
    bob.append([{"id": 4, "p": "a"}])        # planned on the state before alice's commit
    report = bob.last_commit
    assert report is not None and report.attempts == 2 and report.retries == 1
    assert report.branch == "main" and not report.staged
    head = bob.current_snapshot
    assert head is not None and before is not None
    assert head.snapshot_id == report.snapshot_id
    assert head.parent_snapshot_id == alice.refs["main"].snapshot_id != before.snapshot_id
    assert head.manifest_list is not None
    assert f"snap-{head.snapshot_id}-2-" in head.manifest_list   # Java's name: 2nd attempt
    assert ids(wh.table("db.t")) == [1, 2, 3, 4]


def test_without_retries_the_second_writer_fails_and_leaves_nothing(tmp_path: Path) -> None:
    wh, alice, bob = two_writers(tmp_path, **{COMMIT_NUM_RETRIES: "0"})
    alice.append([{"id": 3, "p": "a"}])
    data_files = sorted(p.name for p in (tmp_path / "db" / "t" / "data").rglob("*.parquet"))
    with pytest.raises(CommitConflict):
        bob.append([{"id": 4, "p": "a"}])
    assert bob.last_commit is None
    assert ids(wh.table("db.t")) == [1, 2, 3]
    # bob's data file was deleted with its failed commit
    assert sorted(p.name for p in (tmp_path / "db" / "t" / "data").rglob("*.parquet")) == \
        data_files


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_a_delete_racing_an_append_to_its_rows_is_refused_when_serializable(
        tmp_path: Path, mode: str) -> None:
    wh, alice, bob = two_writers(tmp_path, **{WRITE_DELETE_MODE: mode,
                                              ISOLATION: "serializable"})
    alice.append([{"id": 3, "p": "a"}])      # a row bob's filter matches, which bob never saw
    with pytest.raises(CommitConflict) as e:
        bob.delete("p = 'a'")
    assert "p = 'a'" in str(e.value) and e.value.file is not None
    assert ids(wh.table("db.t")) == [1, 2, 3]
    assert ids(bob) == [1, 2, 3]   # the refused writer's handle shows the table as it is


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_under_snapshot_isolation_the_delete_is_retried_and_keeps_the_new_row(
        tmp_path: Path, mode: str) -> None:
    wh, alice, bob = two_writers(tmp_path, **{WRITE_DELETE_MODE: mode, ISOLATION: "snapshot"})
    alice.append([{"id": 3, "p": "a"}])
    snap = bob.delete("p = 'a'")
    report = bob.last_commit
    assert snap is not None and report is not None
    assert report.snapshot_id == snap.snapshot_id and report.attempts == 2
    # bob deleted the rows he saw (id 1); alice's row 3, added meanwhile, stays
    assert ids(wh.table("db.t")) == [2, 3]


def test_a_delete_racing_an_append_elsewhere_is_fine_even_when_serializable(
        tmp_path: Path) -> None:
    wh, alice, bob = two_writers(tmp_path, **{ISOLATION: "serializable"})
    alice.append([{"id": 3, "p": "b"}])      # not in p=a: no row bob's filter could match
    bob.delete("p = 'a'")
    assert bob.last_commit is not None and bob.last_commit.attempts == 2
    assert ids(wh.table("db.t")) == [2, 3]


def test_last_commit_is_only_about_snapshot_commits(tmp_path: Path) -> None:
    _, alice, _ = two_writers(tmp_path)
    assert alice.last_commit is None          # loaded, nothing committed through it yet
    alice.append([{"id": 3, "p": "a"}])
    report = alice.last_commit
    assert report is not None and report.operation == "append"
    assert "attempts=1" in repr(report)
    alice.set_properties({"owner": "alice"})  # a metadata change: no snapshot report
    assert alice.last_commit is None
