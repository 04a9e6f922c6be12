"""Snapshot management on EXPERIMENTAL format-version 4 tables (docs/v4-layout.md#maintenance):
refs,
rollback and set-current are metadata-only; cherry-pick re-applies a picked append through the
v4 append (a new root), a dynamic overwrite through the v4 replace-partitions producer
(docs/v4-layout.md#dynamic-overwrite)."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.manage_snapshots import SOURCE_SNAPSHOT_ID
from tests.table.commit.test_v4_append import _rows


def _table(tmp_path: Path, limit: str = "2") -> icenb.table.Table:
    return icenb.warehouse(tmp_path).create_table(
        "db.t", "id long, p int", partition_by=["p"], format_version=4,
        properties={"write.v4.root-entry-limit": limit})


def _ids(t: icenb.table.Table, snapshot_id: int | None = None, branch: str | None = None
         ) -> list[int]:
    scan = t.scan(snapshot_id=snapshot_id) if branch is None else t.scan(ref=branch)
    return sorted(r["id"] for r in scan.to_arrow().to_pylist())


def test_refs_rollback_and_set_current(tmp_path: Path) -> None:
    t = _table(tmp_path)
    s1 = t.append(_rows(1))
    s2 = t.append(_rows(2, 3, 4))  # a leaf
    s3 = t.delete("p = 3")  # a manifest DV
    assert s3 is not None
    t.create_tag("v1", s1.snapshot_id)
    t.create_branch("audit", s2.snapshot_id)
    assert _ids(t, branch="v1") == [10, 11]
    assert _ids(t, branch="audit") == [10, 11, 20, 21, 30, 31, 40, 41]
    t.rollback_to(s2.snapshot_id)
    assert t.current_snapshot == s2 and len(t.snapshots) == 3
    assert _ids(t) == [10, 11, 20, 21, 30, 31, 40, 41]
    t.set_current_snapshot(s3.snapshot_id)
    assert _ids(t) == [10, 11, 20, 21, 40, 41]
    # a commit on a branch makes a root on that branch's head
    s4 = t.append(_rows(5), branch="audit")
    assert s4.parent_snapshot_id == s2.snapshot_id and s4.root_manifest is not None
    assert _ids(t, branch="audit") == [10, 11, 20, 21, 30, 31, 40, 41, 50, 51]
    assert t.current_snapshot == s3


def _picked(t: icenb.table.Table, s: Snapshot) -> Snapshot:
    new = t.cherry_pick(s.snapshot_id)
    assert new.root_manifest is not None and new.summary is not None
    assert new.summary[SOURCE_SNAPSHOT_ID] == str(s.snapshot_id)
    assert new.summary.operation == "append"
    return new


@pytest.mark.parametrize("limit", ["2", "0"], ids=["root", "leaf"])
def test_cherry_pick_an_append(tmp_path: Path, limit: str) -> None:
    t = _table(tmp_path, limit)
    base = t.append(_rows(1))
    staged = t.append(_rows(2, 3), branch="staging")  # root entries, or a leaf with limit 0
    t.append(_rows(4))  # main moves on: no fast-forward
    new = _picked(t, staged)
    assert new.parent_snapshot_id != base.snapshot_id
    assert _ids(t) == [10, 11, 20, 21, 30, 31, 40, 41]
    assert new.summary is not None and new.summary["added-data-files"] == "2"
    # the same files, now added by the new snapshot with their own row ids
    rows = t.scan(columns=["id", "_row_id"]).to_arrow().to_pylist()
    assert len({r["_row_id"] for r in rows}) == len(rows)
    with pytest.raises(ValidationError, match="already picked"):
        t.cherry_pick(staged.snapshot_id)


def test_cherry_pick_fast_forward_and_refusals(tmp_path: Path) -> None:
    t = _table(tmp_path)
    s1 = t.append(_rows(1))
    t.create_branch("b", s1.snapshot_id)
    s2 = t.append(_rows(2), branch="b")
    assert t.cherry_pick(s2.snapshot_id) == s2  # parent is main's head: fast-forward
    assert _ids(t) == [10, 11, 20, 21]
    s3 = t.delete("p = 1", branch="b")
    assert s3 is not None
    t.append(_rows(3))
    with pytest.raises(ValidationError, match="not an append"):
        t.cherry_pick(s3.snapshot_id)
    assert _ids(t) == [10, 11, 20, 21, 30, 31]


def test_cherry_pick_a_v3_dynamic_overwrite_after_upgrade(tmp_path: Path) -> None:
    """The picked snapshot is made on the table's v3 history, then the table upgraded: the
    ``replace-partitions`` overwrite is re-applied on v4 (a new root, partition 2 replaced)."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p int", partition_by=["p"],
                                               format_version=3)
    s1 = t.append(_rows(1, 2))
    t.create_branch("b", s1.snapshot_id)
    dyn = t.dynamic_partition_overwrite(_rows(2), branch="b")
    t.append(_rows(3))
    assert t.upgrade(4)
    picked = t.cherry_pick(dyn.snapshot_id)
    assert picked.root_manifest is not None and picked.summary is not None
    assert picked.summary["replace-partitions"] == "true"
    assert picked.summary["deleted-data-files"] == "1"
    assert _ids(t) == [10, 11, 20, 21, 30, 31]
