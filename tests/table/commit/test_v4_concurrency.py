"""Conflict validation of EXPERIMENTAL format-version 4 commits against concurrent commits
(docs/v4-layout.md#removals, #row-deltas, #equality-deletes): each case runs on a v4 table and on
its v3 twin, with
a stale ``Table`` handle committing after another handle's commit; a conflict raises
``CommitConflict`` and leaves no file behind, a non-conflict retries and lands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import CommitConflict
from icenb.table import Table
from icenb.table.commit.v4_validation import snapshot_changes, snapshots_since

#: The v3 twin, v4 with new files as root entries (the default), and v4 with every new file in
#: a new leaf (so concurrent removals are manifest DVs over leaves, docs/v4-layout.md#removals).
FVS = ["v3", "v4", "v4-leaves"]
_LAYOUTS: dict[str, tuple[int, dict[str, str]]] = {
    "v3": (3, {}), "v4": (4, {}), "v4-leaves": (4, {"write.v4.root-entry-limit": "0"})}


def _rows(*ids: int) -> list[dict[str, Any]]:
    """Rows with ``p = id // 10``: ids 0-9 in partition 0, 10-19 in partition 1, ..."""
    return [{"id": i, "p": i // 10} for i in ids]


def _two(tmp_path: Path, layout: str, **properties: str) -> tuple[Table, Table]:
    """Two handles on one table partitioned by ``p`` with ids 0-2, 10-12, 20-22 (one file per
    partition)."""
    wh = icenb.warehouse(tmp_path)
    fv, props = _LAYOUTS[layout]
    t = wh.create_table("db.t", "id long, p int", partition_by=["p"], format_version=fv,
                        properties={**props, **properties})
    t.append(_rows(0, 1, 2, 10, 11, 12, 20, 21, 22))
    return t, wh.table("db.t")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _ids(t: Table) -> list[int]:
    t.refresh()
    return sorted(r["id"] for r in t.scan(columns=["id"]).to_arrow().to_pylist())


def _conflicts(tmp_path: Path, winner: Table, loser: Table, call: Any, match: str) -> None:
    """``call(loser)`` raises ``CommitConflict`` matching ``match``, writes nothing that stays
    and leaves the table at ``winner``'s commit."""
    before = _files(tmp_path)
    with pytest.raises(CommitConflict, match=match) as e:
        call(loser)
    assert e.value.file  # names the conflicting file
    assert _files(tmp_path) == before  # no orphan root, leaf, data or Puffin file
    winner.refresh()
    assert loser.metadata_location == winner.metadata_location


# --------------------------------------------------------------------------- copy-on-write


@pytest.mark.parametrize("fv", FVS)
def test_cow_delete_conflicts_with_a_matching_append_when_serializable(
        tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.append(_rows(13))  # partition 1: may match "p = 1"
    _conflicts(tmp_path, a, b, lambda t: t.delete("p = 1"), "conflicting files")
    assert b.delete("p = 1") is not None  # on the fresh state it works
    assert _ids(b) == [0, 1, 2, 20, 21, 22]


@pytest.mark.parametrize("fv", FVS)
def test_cow_delete_keeps_a_matching_append_under_snapshot_isolation(
        tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv, **{"write.delete.isolation-level": "snapshot"})
    a.append(_rows(13))
    assert b.delete("p = 1 and id < 12") is not None  # retried on the new parent
    assert _ids(b) == [0, 1, 2, 12, 13, 20, 21, 22]  # the row it did not see stays


@pytest.mark.parametrize("fv", FVS)
def test_cow_delete_retries_over_an_append_elsewhere(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.append(_rows(35))  # partition 3: cannot match "p = 1"
    snap = b.delete("p = 1 and id = 11")  # rewrites the partition-1 file
    assert snap is not None and snap.summary is not None
    assert snap.summary.operation == "overwrite"
    assert _ids(b) == [0, 1, 2, 10, 12, 20, 21, 22, 35]


@pytest.mark.parametrize("fv", FVS)
def test_cow_delete_conflicts_with_a_new_dv_for_a_replaced_file(tmp_path: Path,
                                                                  fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.delete("id = 11", mode="merge-on-read")  # a DV on the partition-1 file
    _conflicts(tmp_path, a, b, lambda t: t.delete("id = 10"),
               "new delete file for a replaced data file")
    assert b.delete("id = 10") is not None
    assert _ids(b) == [0, 1, 2, 12, 20, 21, 22]


@pytest.mark.parametrize("fv", FVS)
def test_cow_delete_conflicts_when_the_file_was_removed(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.delete("p = 1")
    _conflicts(tmp_path, a, b, lambda t: t.delete("id = 10"), "no longer in the table")


@pytest.mark.parametrize("fv", FVS)
def test_cow_update_uses_the_update_isolation_level(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path / "s", fv, **{"write.delete.isolation-level": "snapshot"})
    a.append(_rows(15))
    _conflicts(tmp_path / "s", a, b, lambda t: t.update({"p": 1}, "id >= 12 and p = 1"),
               "conflicting files")
    a2, b2 = _two(tmp_path / "u", fv, **{"write.update.isolation-level": "snapshot"})
    a2.append(_rows(15))
    assert b2.update({"id": 14}, "id = 12") is not None
    assert _ids(b2) == [0, 1, 2, 10, 11, 14, 15, 20, 21, 22]


@pytest.mark.parametrize("fv", FVS)
def test_overwrite_with_a_filter_conflicts_with_a_matching_append(tmp_path: Path,
                                                                  fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.append(_rows(14))
    _conflicts(tmp_path, a, b, lambda t: t.overwrite(_rows(19), "p = 1"), "conflicting files")
    a.append(_rows(27))  # outside the filter: re-applied
    stale = icenb.warehouse(tmp_path).table("db.t")
    a.append(_rows(28))
    assert stale.overwrite(_rows(19), "p = 1") is not None
    assert _ids(stale) == [0, 1, 2, 19, 20, 21, 22, 27, 28]


@pytest.mark.parametrize("fv", FVS)
def test_overwrite_without_filter_also_replaces_concurrent_appends(tmp_path: Path,
                                                                   fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.append(_rows(33))  # not seen by b: still replaced (Java's overwriteByRowFilter(true))
    a.delete("p = 2")  # seen by b: gone already, no conflict
    snap = b.overwrite(_rows(5))
    assert snap.summary is not None and snap.summary.operation == "overwrite"
    assert _ids(b) == [5]


# --------------------------------------------------------------------------- merge-on-read


@pytest.mark.parametrize("fv", FVS)
def test_mor_delete_conflicts_when_the_data_file_was_removed(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.delete("p = 1")  # copy-on-write: removes the partition-1 data file
    _conflicts(tmp_path, a, b, lambda t: t.delete("id = 10", mode="merge-on-read"),
               "no longer in the table")


@pytest.mark.parametrize("fv", FVS)
def test_mor_delete_conflicts_with_a_concurrent_dv(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.delete("id = 11", mode="merge-on-read")
    _conflicts(tmp_path, a, b, lambda t: t.delete("id = 10", mode="merge-on-read"),
               "delete files")
    assert b.delete("id = 10", mode="merge-on-read") is not None  # the DVs merge now
    assert _ids(b) == [0, 1, 2, 12, 20, 21, 22]


@pytest.mark.parametrize("fv", FVS)
def test_mor_delete_retries_over_changes_elsewhere(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    c = icenb.warehouse(tmp_path).table("db.t")
    a.append(_rows(36))
    a.delete("id = 21", mode="merge-on-read")  # a DV in another partition
    with pytest.raises(CommitConflict, match="delete files"):  # "id = 10" may match it
        c.delete("id = 10", mode="merge-on-read")
    a.delete("id = 20", mode="merge-on-read")  # a DV the filter's partition excludes
    assert b.delete("p = 1 and id = 10", mode="merge-on-read") is not None
    assert _ids(b) == [0, 1, 2, 11, 12, 22, 36]


@pytest.mark.parametrize("fv", FVS)
def test_mor_update_conflicts_with_a_matching_append_only_when_serializable(
        tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path / "s", fv)
    a.append(_rows(16))
    _conflicts(tmp_path / "s", a, b,
               lambda t: t.update({"id": 17}, "id >= 11", mode="merge-on-read"),
               "conflicting files")
    a2, b2 = _two(tmp_path / "i", fv, **{"write.update.isolation-level": "snapshot"})
    a2.append(_rows(16))
    assert b2.update({"id": 17}, "id = 11", mode="merge-on-read") is not None
    assert _ids(b2) == [0, 1, 2, 10, 12, 16, 17, 20, 21, 22]
    a2.append(_rows(18))  # its metrics exclude "id = 12": no conflict when serializable either
    a2.set_properties({"write.update.isolation-level": "serializable"})
    stale = icenb.warehouse(tmp_path / "i").table("db.t")
    a2.append(_rows(19))
    assert stale.update({"id": 13}, "id = 12", mode="merge-on-read") is not None
    assert _ids(stale) == [0, 1, 2, 10, 13, 16, 17, 18, 19, 20, 21, 22]


@pytest.mark.parametrize("fv", FVS)
def test_upsert_conflicts_with_an_append_of_a_key_when_serializable(tmp_path: Path,
                                                                    fv: str) -> None:
    a, b = _two(tmp_path / "s", fv)
    a.append(_rows(13))
    _conflicts(tmp_path / "s", a, b, lambda t: t.upsert(_rows(13), on=["id", "p"]),
               "conflicting files")
    a2, b2 = _two(tmp_path / "i", fv, **{"write.merge.isolation-level": "snapshot"})
    a2.append(_rows(13))
    assert b2.upsert(_rows(13), on=["id", "p"]) is not None
    # the equality delete applies to every older row, the concurrent 13 too (spec: Scan
    # Planning): one 13
    assert _ids(b2) == [0, 1, 2, 10, 11, 12, 13, 20, 21, 22]


@pytest.mark.parametrize("fv", FVS)
def test_delete_by_key_conflicts_with_concurrent_deletes(tmp_path: Path, fv: str) -> None:
    a, b = _two(tmp_path, fv)
    a.delete("id = 11", mode="merge-on-read")
    _conflicts(tmp_path, a, b, lambda t: t.delete_by_key(_rows(11), on=["id", "p"]),
               "delete files")
    # a two-column key's conflict filter is true: appends conflict unless snapshot isolation
    a.set_properties({"write.delete.isolation-level": "snapshot"})
    a.append(_rows(40))
    stale = icenb.warehouse(tmp_path).table("db.t")
    a.append(_rows(41))
    assert stale.delete_by_key(_rows(12), on=["id", "p"]) is not None
    assert _ids(stale) == [0, 1, 2, 10, 20, 21, 22, 40, 41]


# --------------------------------------------------------------------------- what a root says


def test_snapshot_changes_read_root_entries_leaves_and_manifest_dvs(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, p int", partition_by=["p"], format_version=4,
                        properties={"write.v4.root-entry-limit": "1"})
    first = t.append(_rows(0, 10, 20))  # three files: one new leaf
    root_file = t.append(_rows(30))  # one file: a root entry
    t.delete("p = 1 or p = 3")  # a manifest DV over the leaf, a DELETED root entry
    dv = t.delete("id = 20", mode="merge-on-read")  # a data DV, in the root
    assert dv is not None
    md = t.metadata
    history = snapshots_since(md, t.current_snapshot, first.snapshot_id)
    assert [s.snapshot_id for s in history][-1] == root_file.snapshot_id

    def names(files: tuple[Any, ...]) -> list[tuple[int, tuple[Any, ...]]]:
        return sorted((int(f.content), tuple(f.partition)) for f in files)

    ch = [snapshot_changes(t.io, md, s) for s in reversed(history)]
    assert names(snapshot_changes(t.io, md, first).added) == [(0, (0,)), (0, (1,)), (0, (2,))]
    assert names(ch[0].added) == [(0, (3,))] and ch[0].removed == ()
    assert names(ch[1].removed) == [(0, (1,)), (0, (3,))] and ch[1].added == ()
    assert names(ch[2].added) == [(1, (2,))] and ch[2].removed == ()  # the new DV
    with pytest.raises(CommitConflict, match="not an ancestor"):
        snapshots_since(md, first, root_file.snapshot_id)
