"""Removals of whole files from EXPERIMENTAL format-version 4 tables (single-file-commits
proposal, examples "Removing a File From the Root Manifest", "Removing a File From a Leaf
Manifest", "Overwrite Files in Root Manifest", "Overwrite Files in in Leaf Manifest";
docs/v4-layout.md#removals): the root after each commit, manifest DVs, rows and summaries equal to a
v3 twin's, and the metadata files each commit writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import CommitConflict, ValidationError
from icenb.io.root_manifest import load_manifest_dv, read_content_manifest
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.v4_overwrite import V4Overwrite
from tests.table.commit.test_v4_append import (
    _append,
    _leaf,
    _metadata_files,
    _Names,
    _root,
    _rows,
    _shown,
    _tables,
)


def _names(names: _Names) -> _Names:
    """Names of the drawings, manifest DVs as DVn in the order they first appear."""
    dvs: dict[tuple[str, bytes | None], str] = {}
    plain = names.__call__

    class WithDVs(_Names):
        def __call__(self, e: ContentEntry) -> str:
            if e.content_type == ContentType.MANIFEST_DV:
                assert e.deletion_vector is not None
                key = (e.location, e.deletion_vector.inline_content)
                return dvs.setdefault(key, f"DV{len(dvs) + 1}")
            return plain(e)

    return WithDVs()


def _commit(t: icenb.table.Table, change: Any) -> tuple[Snapshot, int]:
    """Run ``change(t)``; the new snapshot and the metadata files the commit wrote."""
    before = _metadata_files(t)
    snap = change(t)
    assert snap is not None and snap == t.current_snapshot
    return snap, len(_metadata_files(t) - before)


def _ordinals(t: icenb.table.Table, dv: ContentEntry) -> list[int]:
    return [int(i) for i in load_manifest_dv(t.io, dv).to_numpy()]


def _same(v4: icenb.table.Table, v3: icenb.table.Table) -> None:
    """Every snapshot of the v4 table reads the rows of the v3 twin's snapshot at the same
    position, row ids included, and has its summary. (Snapshot ``added-rows`` differ: v3
    rewrites a manifest to remove a file, and the rewritten manifest reserves row ids for its
    EXISTING rows; v4 rewrites no manifest.)"""
    s4, s3 = list(v4.metadata.snapshots), list(v3.metadata.snapshots)
    assert len(s4) == len(s3)
    cols = ["id", "p", "_row_id"]
    for a, b in zip(s4, s3, strict=True):
        assert a.summary == b.summary
        rows4 = v4.scan(snapshot_id=a.snapshot_id, columns=cols).to_arrow().to_pylist()
        rows3 = v3.scan(snapshot_id=b.snapshot_id, columns=cols).to_arrow().to_pylist()
        assert sorted(rows4, key=lambda r: r["id"]) == sorted(rows3, key=lambda r: r["id"])


def _ids(t: icenb.table.Table) -> list[int]:
    return sorted(r["id"] for r in t.to_arrow().to_pylist())


# --------------------------------------------------------------------------- the examples


def test_removing_a_file_from_the_root_manifest(tmp_path: Path) -> None:
    """Proposal: S1 has D1 and D2 in the root; S2 replaces D1 by a DELETED entry, D2 stays.
    S2 writes one metadata file: the root."""
    v4, v3 = _tables(tmp_path)
    names = _Names()
    s1, _ = _append(v4, _rows(1, 2))
    s2, written = _commit(v4, lambda t: t.delete("p = 1"))
    v3.append(_rows(1, 2))
    v3.delete("p = 1")

    assert _shown(_root(v4, s1), names) == [("D1", "ADDED"), ("D2", "ADDED")]
    root = _root(v4, s2)
    assert _shown(root, names) == [("D1", "DELETED"), ("D2", "EXISTING")]
    d1 = root[0]
    # the DELETED entry is this snapshot's, with D1's own sequence numbers
    assert d1.version_info.snapshot_id == s2.snapshot_id
    assert d1.version_info.sequence_number == s1.sequence_number
    assert s2.summary is not None and s2.summary.operation == "delete"
    assert written == 1
    assert _ids(v4) == [20, 21]
    _same(v4, v3)


def test_removing_a_file_from_a_leaf_manifest(tmp_path: Path) -> None:
    """Proposal: S1 = root A with M1 (D1, D2, D3); S2 keeps M1 and adds manifest DV DV1 on M1
    marking ordinal 1 (D2). M1 is not rewritten; S2 writes only its root (DV1 inline)."""
    v4, v3 = _tables(tmp_path)
    names = _names(_Names())
    s1, _ = _append(v4, _rows(1, 2, 3))
    s2, written = _commit(v4, lambda t: t.delete("p = 2"))
    v3.append(_rows(1, 2, 3))
    v3.delete("p = 2")

    root_a, root_b = _root(v4, s1), _root(v4, s2)
    assert _shown(root_b, names) == [("M1", "EXISTING"), ("DV1", "ADDED")]
    m1, dv1 = root_b
    assert m1.location == root_a[0].location and m1.manifest_stats == root_a[0].manifest_stats
    assert dv1.referenced_file == m1.location and dv1.record_count == 1
    assert _ordinals(v4, dv1) == [1]
    assert _leaf(v4, m1, names) == [("D1", "ADDED"), ("D2", "ADDED"), ("D3", "ADDED")]
    assert written == 1
    assert _ids(v4) == [10, 11, 30, 31]
    _same(v4, v3)


def test_a_second_removal_from_a_leaf_replaces_its_dv(tmp_path: Path) -> None:
    """docs/v4-layout.md#manifest-dvs: one live DV per leaf; a new removal writes the union and
    marks
    the old DV DELETED (DELETED entries of the parent are not carried further)."""
    v4, v3 = _tables(tmp_path)
    names = _names(_Names())
    _append(v4, _rows(1, 2, 3))
    s2, _ = _commit(v4, lambda t: t.delete("p = 2"))
    s3, written = _commit(v4, lambda t: t.delete("p = 3"))
    s4, _ = _commit(v4, lambda t: t.delete("p = 1"))
    v3.append(_rows(1, 2, 3))
    for p in (2, 3, 1):
        v3.delete(f"p = {p}")

    assert _shown(_root(v4, s2), names) == [("M1", "EXISTING"), ("DV1", "ADDED")]
    root3 = _root(v4, s3)
    assert _shown(root3, names) == [("M1", "EXISTING"), ("DV1", "DELETED"), ("DV2", "ADDED")]
    assert _ordinals(v4, root3[2]) == [1, 2]
    assert written == 1
    # the whole leaf deleted is still a DV, never a removed manifest (proposal: no
    # copy-on-write of a leaf, "including completely deleting a leaf manifest")
    root4 = _root(v4, s4)
    assert _shown(root4, names) == [("M1", "EXISTING"), ("DV2", "DELETED"), ("DV3", "ADDED")]
    assert _ordinals(v4, root4[2]) == [0, 1, 2]
    assert _ids(v4) == []
    _same(v4, v3)


def test_overwrite_files_in_the_root_manifest(tmp_path: Path) -> None:
    """Proposal: S1 has D1 in the root; S2 removes D1 and adds D2; S3 removes D2 and adds D3,
    each by a new root only."""
    v4, v3 = _tables(tmp_path)
    names = _Names()
    s1, _ = _append(v4, _rows(1))
    s2, n2 = _commit(v4, lambda t: t.overwrite(_rows(2), "p = 1"))
    s3, n3 = _commit(v4, lambda t: t.overwrite(_rows(3), "p = 2"))
    v3.append(_rows(1))
    v3.overwrite(_rows(2), "p = 1")
    v3.overwrite(_rows(3), "p = 2")

    assert _shown(_root(v4, s1), names) == [("D1", "ADDED")]
    assert _shown(_root(v4, s2), names) == [("D1", "DELETED"), ("D2", "ADDED")]
    assert _shown(_root(v4, s3), names) == [("D2", "DELETED"), ("D3", "ADDED")]
    assert s3.summary is not None and s3.summary.operation == "overwrite"
    assert (n2, n3) == (1, 1)
    assert _ids(v4) == [30, 31]
    _same(v4, v3)


def test_overwrite_files_in_a_leaf_manifest(tmp_path: Path) -> None:
    """Proposal: S1 = M1 (D1, D2, D3); S2 removes D2 by DV1 on M1 and adds D4 in the root."""
    v4, v3 = _tables(tmp_path)
    names = _names(_Names())
    _append(v4, _rows(1, 2, 3))
    s2, written = _commit(v4, lambda t: t.overwrite(_rows(4), "p = 2"))
    v3.append(_rows(1, 2, 3))
    v3.overwrite(_rows(4), "p = 2")

    root = _root(v4, s2)
    assert _shown(root, names) == [("M1", "EXISTING"), ("DV1", "ADDED"), ("D4", "ADDED")]
    assert _ordinals(v4, root[1]) == [1]
    assert written == 1
    assert _ids(v4) == [10, 11, 30, 31, 40, 41]
    _same(v4, v3)


# --------------------------------------------------------------------------- the rest


def test_a_partly_matching_file_is_rewritten_never_its_leaf(tmp_path: Path) -> None:
    """A delete matching some rows of D2 (in M1) removes D2 by a manifest DV and adds its
    other rows as a new root file (an ``overwrite``, as v3's copy-on-write)."""
    v4, v3 = _tables(tmp_path)
    names = _names(_Names())
    s1, _ = _append(v4, _rows(1, 2, 3))
    s2, written = _commit(v4, lambda t: t.delete("id = 20"))
    v3.append(_rows(1, 2, 3))
    v3.delete("id = 20")

    root = _root(v4, s2)
    assert _shown(root, names) == [("M1", "EXISTING"), ("DV1", "ADDED"), ("D2", "ADDED")]
    assert root[0].location == _root(v4, s1)[0].location
    assert root[2].record_count == 1
    assert s2.summary is not None and s2.summary.operation == "overwrite"
    assert written == 1
    assert _ids(v4) == [10, 11, 21, 30, 31]
    _same(v4, v3)


def test_overwrite_without_filter_removes_every_file(tmp_path: Path) -> None:
    v4, v3 = _tables(tmp_path)
    names = _names(_Names())
    _append(v4, _rows(1, 2, 3))
    _append(v4, _rows(4))
    snap, _ = _commit(v4, lambda t: t.overwrite(_rows(5)))
    v3.append(_rows(1, 2, 3))
    v3.append(_rows(4))
    v3.overwrite(_rows(5))

    root = _root(v4, snap)
    assert _shown(root, names) == [("M1", "EXISTING"), ("D4", "DELETED"), ("DV1", "ADDED"),
                                   ("D5", "ADDED")]
    assert _ordinals(v4, root[2]) == [0, 1, 2]
    assert _ids(v4) == [50, 51]
    _same(v4, v3)


def test_a_delete_matching_nothing_adds_no_snapshot(tmp_path: Path) -> None:
    v4, _ = _tables(tmp_path)
    s1, _ = _append(v4, _rows(1))
    assert v4.delete("p = 9") is None
    assert v4.current_snapshot == s1


def test_removing_a_file_not_in_the_table_is_named(tmp_path: Path) -> None:
    v4, _ = _tables(tmp_path)
    _append(v4, _rows(1))
    catalog, identifier = v4._writable()
    producer = V4Overwrite(catalog, identifier, v4.io).delete_file("file:///nowhere.parquet")
    before = _metadata_files(v4)
    with pytest.raises(ValidationError) as e:
        producer.commit(v4._loaded())
    assert e.value.file == "file:///nowhere.parquet"
    assert _metadata_files(v4) == before  # the attempt's root is gone


def test_a_file_removed_concurrently_conflicts(tmp_path: Path) -> None:
    """Two deletes of D2 planned on the same snapshot: the second finds D2 gone on retry."""
    v4, _ = _tables(tmp_path)
    _append(v4, _rows(1, 2, 3))
    other = icenb.warehouse(tmp_path).table("db.v4")
    v4.delete("p = 2")
    before = _metadata_files(v4)
    with pytest.raises(CommitConflict) as e:
        other.delete("p = 2")
    assert e.value.field == "delete_file"
    assert _metadata_files(v4) == before
    assert _ids(other) == [10, 11, 30, 31]


def test_the_leaf_is_read_through_its_dv(tmp_path: Path) -> None:
    """The manifest M1 stays byte-identical; planning drops the DV's ordinal."""
    v4, _ = _tables(tmp_path)
    s1, _ = _append(v4, _rows(1, 2, 3))
    m1 = _root(v4, s1)[0]
    data = read_content_manifest(v4.io, m1.location)
    v4.delete("p = 1")
    assert read_content_manifest(v4.io, m1.location) == data
    assert len(v4.scan().plan().tasks) == 2
