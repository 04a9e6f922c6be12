"""Dynamic partition overwrite on EXPERIMENTAL format-version 4 tables
(docs/v4-layout.md#dynamic-overwrite):
the replaced partitions' files leave the root (DELETED) or their leaf (a manifest DV), rows,
``_row_id`` and summaries equal to a v3 twin's, v3's conflict validation, cherry-pick."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import CommitConflict
from icenb.spec.content_entry import ContentType
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.overwrite import ReplacePartitions
from icenb.table.commit.producer import commit_snapshot
from icenb.table.commit.v4_replace_partitions import V4ReplacePartitions
from tests.table.commit.test_v4_append import _leaf, _Names, _root, _rows, _shown, _tables
from tests.table.commit.test_v4_overwrite import _ids, _names, _ordinals


def _same(v4: icenb.table.Table, v3: icenb.table.Table) -> None:
    """Every v4 snapshot has the summary and the rows of the v3 twin's at the same position;
    ``_row_id``s are distinct and kept by rows that stay (the ids of files added after a
    removal differ from v3's: v3 rewrites a manifest, which reserves ids, docs/v4-layout.md
    docs/v4-layout.md#removals)."""
    s4, s3 = list(v4.metadata.snapshots), list(v3.metadata.snapshots)
    assert len(s4) == len(s3)
    before: dict[int, tuple[int, int]] = {}
    for a, b in zip(s4, s3, strict=True):
        assert a.summary == b.summary
        rows4 = v4.scan(snapshot_id=a.snapshot_id, columns=["id", "p", "_row_id"]
                        ).to_arrow().to_pylist()
        rows3 = v3.scan(snapshot_id=b.snapshot_id, columns=["id", "p"]).to_arrow().to_pylist()
        assert sorted((r["id"], r["p"]) for r in rows4) == sorted(
            (r["id"], r["p"]) for r in rows3)
        ids = {r["_row_id"]: (r["id"], r["p"]) for r in rows4}
        assert len(ids) == len(rows4)
        assert all(before[k] == v for k, v in ids.items() if k in before)
        before = ids


def _new(*parts: int, base: int = 100) -> list[dict[str, Any]]:
    """One new row per partition ``p`` of ``parts`` (ids ``base + p``)."""
    return [{"id": base + p, "p": p} for p in parts]


def test_replaces_root_and_leaf_partitions_like_v3(tmp_path: Path) -> None:
    """D1, D2 in the root and M1 (D3, D4, D5) a leaf; replacing p=2 and p=4: D2 becomes
    DELETED in place, M1 gets a manifest DV of ordinal 1 (D4), the two new files are ADDED
    root entries. Operation ``overwrite``, ``replace-partitions=true``, as the v3 twin."""
    v4, v3 = _tables(tmp_path)
    names = _names(_Names())
    for t in (v4, v3):
        t.append(_rows(1, 2))
        t.append(_rows(3, 4, 5))
        t.dynamic_partition_overwrite(_new(2, 4))
    snap = v4.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary.operation == "overwrite"
    assert snap.summary["replace-partitions"] == "true"
    assert snap.summary["deleted-data-files"] == "2"
    assert snap.summary["added-data-files"] == "2"
    root = _root(v4, snap)
    assert _shown(root, names) == [("D1", "EXISTING"), ("D2", "DELETED"), ("M1", "EXISTING"),
                                   ("DV1", "ADDED"), ("D2", "ADDED"), ("D4", "ADDED")]
    assert _ordinals(v4, root[3]) == [1]
    assert _leaf(v4, root[2], names) == [("D3", "ADDED"), ("D4", "ADDED"), ("D5", "ADDED")]
    assert _ids(v4) == [10, 11, 30, 31, 50, 51, 102, 104]
    _same(v4, v3)

    # again, into a partition of the leaf whose DV is replaced (unioned) and a new partition
    for t in (v4, v3):
        t.dynamic_partition_overwrite(_new(3, 6, base=200))
    root = _root(v4, v4.current_snapshot)  # type: ignore[arg-type]
    dvs = [e for e in root if e.content_type == ContentType.MANIFEST_DV]
    assert [e.status.name for e in dvs] == ["DELETED", "ADDED"]
    assert _ordinals(v4, dvs[1]) == [0, 1]
    assert _ids(v4) == [10, 11, 50, 51, 102, 104, 203, 206]
    _same(v4, v3)


def test_many_new_files_go_to_a_leaf_and_dvs_of_replaced_files_go(tmp_path: Path) -> None:
    """A merge-on-read delete leaves a DV on a file of p=1; replacing p=1..3 with three files
    (above the root entry limit: a new leaf) removes the data files and that DV, as v3."""
    props = {"write.delete.mode": "merge-on-read"}
    v4, v3 = _tables(tmp_path, props)
    for t in (v4, v3):
        t.append(_rows(1, 2, 3, 4))
        t.delete("id = 10")
        t.dynamic_partition_overwrite(_new(1, 2, 3))
    snap = v4.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary["removed-dvs"] == "1"
    root = _root(v4, snap)
    assert [(e.content_type.name, e.status.name) for e in root] == [
        ("DATA_MANIFEST", "EXISTING"), ("POSITION_DELETE", "DELETED"),
        ("MANIFEST_DV", "ADDED"), ("DATA_MANIFEST", "ADDED")]
    assert _ids(v4) == [40, 41, 101, 102, 103]
    _same(v4, v3)


def test_unpartitioned_table_is_replaced_whole(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    v4 = wh.create_table("db.v4", "id long, p int", format_version=4)
    v3 = wh.create_table("db.v3", "id long, p int", format_version=3)
    for t in (v4, v3):
        t.append(_rows(1))
        t.append(_rows(2, 3, 4))
        t.dynamic_partition_overwrite(_new(7))
    assert _ids(v4) == [107]
    snap = v4.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary["replace-partitions"] == "true"
    assert snap.summary["total-data-files"] == "1"
    _same(v4, v3)


def _staged(t: icenb.table.Table, rows: list[dict[str, Any]], *, validate: bool
            ) -> V4ReplacePartitions | ReplacePartitions:
    """A replace-partitions producer of ``rows`` started on ``t``'s current snapshot."""
    catalog, identifier = t._writable()
    cls = V4ReplacePartitions if t.format_version >= 4 else ReplacePartitions
    p = cls(catalog, identifier, t.io)
    head = t.current_snapshot
    assert head is not None
    if validate:
        p.validate_from_snapshot(head.snapshot_id)
        p.validate_no_conflicting_data()
        p.validate_no_conflicting_deletes()
    if isinstance(p, V4ReplacePartitions):
        p.write(rows, t.metadata)
    else:
        p.write_data(rows, t.metadata)
    return p


@pytest.mark.parametrize("validate", [True, False])
def test_concurrent_append_to_a_replaced_partition(tmp_path: Path, validate: bool) -> None:
    """Validated: a file appended meanwhile to a replaced partition is a conflict, as v3 (and
    one in another partition is not); not validated: the retry replaces it too, as v3."""
    v4, v3 = _tables(tmp_path)
    for t in (v4, v3):
        t.append(_rows(1, 2, 3))
        other = icenb.warehouse(tmp_path).table(t.identifier)
        p = _staged(t, _new(2), validate=validate)
        other.append(_rows(2))  # concurrent, into the replaced partition
        if validate:
            with pytest.raises(CommitConflict, match="replaced partition") as info:
                commit_snapshot(t, p)
            assert info.value.file is not None and "p=2" in info.value.file
            assert info.value.field == "validate_no_conflicting_data"
        else:
            commit_snapshot(t, p)
    expected = [10, 11, 20, 20, 21, 21, 30, 31] if validate else [10, 11, 30, 31, 102]
    assert _ids(v4) == _ids(v3) == expected
    _same(v4, v3)

    if validate:  # a concurrent append elsewhere is no conflict
        for t in (v4, v3):
            other = icenb.warehouse(tmp_path).table(t.identifier)
            p = _staged(t, _new(2), validate=True)
            other.append(_rows(5))
            commit_snapshot(t, p)
        assert _ids(v4) == _ids(v3) == [10, 11, 30, 31, 50, 51, 102]
        _same(v4, v3)


def _pick(t: icenb.table.Table) -> tuple[Snapshot, Snapshot]:
    """A dynamic overwrite of p=2 made on branch b, then main gets p=3: (the overwrite, the
    cherry-picked snapshot on main)."""
    s1 = t.append(_rows(1, 2))
    t.create_branch("b", s1.snapshot_id)
    dyn = t.dynamic_partition_overwrite(_new(2), branch="b")
    t.append(_rows(3))
    return dyn, t.cherry_pick(dyn.snapshot_id)


def test_cherry_pick_a_dynamic_overwrite(tmp_path: Path) -> None:
    """Re-applied on main as a replace-partitions overwrite with ``source-snapshot-id``; a
    change to the replaced partition since the picked snapshot's parent is a conflict."""
    v4, v3 = _tables(tmp_path)
    for t in (v4, v3):
        dyn, picked = _pick(t)
        assert picked.summary is not None
        assert picked.summary["source-snapshot-id"] == str(dyn.snapshot_id)
        assert picked.summary["replace-partitions"] == "true"
        assert picked.summary.operation == "overwrite"
        assert _ids(t) == [10, 11, 30, 31, 102]
    assert _shown(_root(v4, v4.current_snapshot), _Names()) == [  # type: ignore[arg-type]
        ("D1", "EXISTING"), ("D2", "DELETED"), ("D3", "EXISTING"), ("D2", "ADDED")]
    # the picked snapshot's summary is the twin's, but for the source snapshot id
    pick4, pick3 = (dict(t.current_snapshot.summary or {})  # type: ignore[union-attr]
                    for t in (v4, v3))
    assert pick4.pop("source-snapshot-id") != pick3.pop("source-snapshot-id")
    assert pick4 == pick3

    wh = icenb.warehouse(tmp_path)
    for fv in (4, 3):
        t = wh.create_table(f"db.c{fv}", "id long, p int", partition_by=["p"],
                            format_version=fv)
        s1 = t.append(_rows(1, 2))
        t.create_branch("b", s1.snapshot_id)
        dyn = t.dynamic_partition_overwrite(_new(2), branch="b")
        t.append(_rows(2))  # main changed the replaced partition since s1
        with pytest.raises(CommitConflict):
            t.cherry_pick(dyn.snapshot_id)
        assert _ids(t) == [10, 11, 20, 20, 21, 21]
