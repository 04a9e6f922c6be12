"""Writes through a table handle loaded before another writer expired its snapshots (issue 17).

The stale handle's state lists manifest lists (v4: root manifests) the expiry deleted. Its
write is redone on the table's new state, as a conflicting commit is re-applied (spec: "Commit
Conflict Resolution and Retry"), within the ``commit.retry.*`` policy; a file missing from the
table as it is now is still an error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
import icenb.table.table as table_module
from icenb.errors import NotFound
from icenb.table import Table
from icenb.table.warehouse import Warehouse

NAME = "db.t"
VERSIONS = (2, 3, 4)

#: A write, and the ids the table holds after it ran on the new state (ids 0, 1, 2).
WRITES: dict[str, tuple[Callable[[Table], Any], list[int]]] = {
    "delete copy-on-write": (lambda t: t.delete("id = 1", mode="copy-on-write"), [0, 2]),
    "delete merge-on-read": (lambda t: t.delete("id = 1", mode="merge-on-read"), [0, 2]),
    "overwrite": (lambda t: t.overwrite([{"id": 9}], "id = 1"), [0, 2, 9]),
    "update copy-on-write": (lambda t: t.update({"id": 7}, "id = 1", mode="copy-on-write"),
                             [0, 2, 7]),
    "update merge-on-read": (lambda t: t.update({"id": 7}, "id = 1", mode="merge-on-read"),
                             [0, 2, 7]),
    "append": (lambda t: t.append([{"id": 5}]), [0, 1, 2, 5]),
    "dynamic partition overwrite": (lambda t: t.dynamic_partition_overwrite([{"id": 5}]), [5]),
    "upsert": (lambda t: t.upsert([{"id": 1}, {"id": 6}], on="id"), [0, 1, 2, 6]),
}


def ids(t: Table) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


def stale_after_expiry(tmp_path: Path, version: int,
                       properties: dict[str, str] | None = None) -> tuple[Warehouse, Table]:
    """A table with ids 0, 1, 2 (one append each) whose snapshots but the last were expired
    by another handle, and a handle loaded after the first append."""
    wh = icenb.warehouse(tmp_path / "wh")
    t = wh.create_table(NAME, "id long", format_version=version, properties=properties)
    t.append([{"id": 0}])
    stale = wh.table(NAME)
    t.append([{"id": 1}])
    t.append([{"id": 2}])
    wh.table(NAME).expire_snapshots(int(time.time() * 1000) + 1, retain_last=1)
    snap = stale.current_snapshot
    assert snap is not None
    gone = snap.root_manifest if version >= 4 else snap.manifest_list
    assert gone is not None and not os.path.exists(gone), "the scenario needs a stale handle"
    return wh, stale


def no_orphans(wh: Warehouse) -> tuple[str, ...]:
    """Files under the table that nothing references (a failed attempt's leftovers)."""
    later = int(time.time() * 1000) + 3_600_000
    result = wh.table(NAME).remove_orphan_files(later, dry_run=True)
    return tuple(result.orphans)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("write", list(WRITES))
def test_a_stale_write_is_redone_on_the_new_state(tmp_path: Path, version: int,
                                                   write: str) -> None:
    wh, stale = stale_after_expiry(tmp_path, version)
    head = wh.table(NAME).current_snapshot
    assert head is not None
    action, expected = WRITES[write]
    action(stale)
    fresh = wh.table(NAME)
    assert ids(fresh) == expected
    snap = fresh.current_snapshot
    assert snap is not None and snap.parent_snapshot_id == head.snapshot_id
    assert stale.metadata_location == fresh.metadata_location  # the handle shows the commit
    assert no_orphans(wh) == ()


@pytest.mark.parametrize("version", VERSIONS)
def test_stale_schema_and_property_changes_commit(tmp_path: Path, version: int) -> None:
    wh, stale = stale_after_expiry(tmp_path, version)
    stale.set_properties({"owner": "me"})
    with stale.update_schema() as u:
        u.add_column("s", "string")
    fresh = wh.table(NAME)
    assert fresh.properties["owner"] == "me"
    assert [f.name for f in fresh.schema.fields] == ["id", "s"]
    assert ids(fresh) == [0, 1, 2]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_file_missing_from_the_current_table_still_raises(tmp_path: Path,
                                                            version: int) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    t = wh.create_table(NAME, "id long", format_version=version)
    t.append([{"id": 0}])
    t.append([{"id": 1}, {"id": 3}])  # a file the delete must read
    lost = t.scan("id = 1").plan().tasks[0].data_file.file_path
    os.remove(lost)
    before = t.metadata_location
    with pytest.raises(NotFound) as e:
        t.delete("id = 1", mode="copy-on-write")
    assert e.value.file == lost
    assert wh.table(NAME).metadata_location == before


@pytest.mark.parametrize("version", VERSIONS)
def test_a_stale_write_of_a_file_the_new_state_misses_too_raises(tmp_path: Path,
                                                                  version: int) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    t = wh.create_table(NAME, "id long", format_version=version)
    t.append([{"id": 1}, {"id": 3}])  # a file the delete must read
    stale = wh.table(NAME)
    t.append([{"id": 2}])  # the table moves on; both states need the file of id 1
    lost = t.scan("id = 1").plan().tasks[0].data_file.file_path
    os.remove(lost)
    before = t.metadata_location
    with pytest.raises(NotFound) as e:
        stale.delete("id = 1", mode="copy-on-write")
    assert e.value.file == lost
    assert wh.table(NAME).metadata_location == before


def test_the_retry_policy_bounds_the_redo(tmp_path: Path) -> None:
    wh, stale = stale_after_expiry(tmp_path, 2, {"commit.retry.num-retries": "0"})
    before = wh.table(NAME).metadata_location
    with pytest.raises(NotFound):
        stale.delete("id = 1", mode="merge-on-read")
    assert wh.table(NAME).metadata_location == before
    assert ids(wh.table(NAME)) == [0, 1, 2]


def test_a_write_that_committed_is_not_redone(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    wh, stale = stale_after_expiry(tmp_path, 2)
    snap = stale.current_snapshot
    assert snap is not None and snap.manifest_list is not None
    gone = snap.manifest_list
    commit = table_module.commit_snapshot

    def commit_then_fail(*args: Any, **kwargs: Any) -> Any:
        commit(*args, **kwargs)
        raise NotFound("cannot read: no such file or directory", file=gone)

    monkeypatch.setattr(table_module, "commit_snapshot", commit_then_fail)
    with pytest.raises(NotFound):
        stale.append([{"id": 5}])
    assert ids(wh.table(NAME)) == [0, 1, 2, 5]  # appended once


@pytest.mark.parametrize("version", VERSIONS)
def test_data_that_reads_once_is_never_lost_by_a_redo(tmp_path: Path, version: int) -> None:
    """A RecordBatchReader is consumed by the failed attempt: a redo appended nothing and
    reported success. Such a write raises the NotFound instead; nothing is lost or half
    written, and the table is as the other writer left it."""
    wh, stale = stale_after_expiry(tmp_path, version)
    batch = pa.table({"id": pa.array([100, 101], pa.int64())})
    with pytest.raises(NotFound):
        stale.append(pa.RecordBatchReader.from_batches(batch.schema, batch.to_batches()))
    assert ids(wh.table(NAME)) == [0, 1, 2]
    assert no_orphans(wh) == ()
    stale.refresh().append(pa.RecordBatchReader.from_batches(batch.schema, batch.to_batches()))
    assert ids(wh.table(NAME)) == [0, 1, 2, 100, 101]
