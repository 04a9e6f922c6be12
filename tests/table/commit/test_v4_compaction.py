"""Manifest compaction during EXPERIMENTAL format-version 4 commits (single-file-commits
proposal, "Manifest Compaction" and the example "Manifest Compaction During an Append";
docs/v4-layout.md#compaction): which children are combined, what the new leaf holds, that reads,
row ids and summaries do not change, and that failed attempts leave no compacted leaf."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.io.root_manifest import read_content_manifest
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.manifest import EntryStatus
from icenb.table.commit.v4_append import ROOT_ENTRY_LIMIT
from icenb.table.commit.v4_compaction import (
    COMPACTION_ENABLED,
    COMPACTION_MIN_COUNT,
    COMPACTION_TARGET_SIZE_BYTES,
    DEFAULT_MIN_COUNT,
    DEFAULT_TARGET_SIZE_BYTES,
    compaction_enabled,
)
from tests.table.commit.test_v4_append import _append, _leaf, _metadata_files, _Names, _root, _rows
from tests.table.commit.test_v4_overwrite import _names, _ordinals, _same

OFF = {ROOT_ENTRY_LIMIT: "0", COMPACTION_ENABLED: "false"}


def _twins(tmp_path: Path, properties: dict[str, str]
           ) -> tuple[icenb.table.Table, icenb.table.Table]:
    wh = icenb.warehouse(tmp_path)
    v4 = wh.create_table("db.v4", "id long, p int", partition_by=["p"], format_version=4,
                         properties=properties)
    v3 = wh.create_table("db.v3", "id long, p int", partition_by=["p"], format_version=3)
    return v4, v3


def _rows_with_ids(t: icenb.table.Table, snapshot_id: int) -> list[dict[str, object]]:
    rows = t.scan(snapshot_id=snapshot_id, columns=["id", "p", "_row_id"]).to_arrow()
    return sorted(rows.to_pylist(), key=lambda r: r["id"])  # type: ignore[arg-type, return-value]


def test_example_manifest_compaction_during_an_append(tmp_path: Path) -> None:
    """Proposal: root A = M1 (D1, D2, D3) + M2 (D4, D5, D6) + DV1 (M1 ordinal 0) + DV2 (M2
    ordinal 1); appending D7 with compaction gives root B = M3 (EXISTING) + D7 (ADDED), M3 =
    D2, D3, D4, D6 EXISTING with their own snapshot ids, sequence numbers and row ids."""
    v4, v3 = _twins(tmp_path, OFF)
    names = _names(_Names())
    for t in (v4, v3):
        t.append(_rows(1, 2, 3))
        t.append(_rows(4, 5, 6))
        t.delete("p = 1")
        t.delete("p = 5")
    snap_a = v4.current_snapshot
    assert snap_a is not None
    root_a = _root(v4, snap_a)
    assert _shown(root_a, names) == [("M1", "EXISTING"), ("M2", "EXISTING"),
                                     ("DV1", "EXISTING"), ("DV2", "ADDED")]
    assert _ordinals(v4, root_a[2]) == [0] and root_a[2].referenced_file == root_a[0].location
    assert _ordinals(v4, root_a[3]) == [1] and root_a[3].referenced_file == root_a[1].location
    before = {e.location: e for m in root_a[:2] for e in _leaf_entries(v4, m)}

    v4.set_properties({ROOT_ENTRY_LIMIT: "2", COMPACTION_ENABLED: "true",
                       COMPACTION_MIN_COUNT: "2"})
    snap_b, written = _append(v4, _rows(7))
    v3.append(_rows(7))
    root_b = _root(v4, snap_b)
    assert _shown(root_b, names) == [("M3", "EXISTING"), ("D7", "ADDED")]
    assert written == 2  # the root and M3
    m3 = root_b[0]
    assert _leaf(v4, m3, names) == [("D2", "EXISTING"), ("D3", "EXISTING"),
                                    ("D4", "EXISTING"), ("D6", "EXISTING")]
    # the new leaf's entry: EXISTING, written by this snapshot, counts of its 4 files
    assert m3.content_type == ContentType.DATA_MANIFEST
    assert (m3.version_info.snapshot_id, m3.version_info.sequence_number,
            m3.version_info.file_sequence_number) == (snap_b.snapshot_id,
                                                      snap_b.sequence_number,
                                                      snap_b.sequence_number)
    assert m3.manifest_stats is not None and m3.first_row_id is None
    assert (m3.manifest_stats.added_files_count, m3.manifest_stats.existing_files_count,
            m3.manifest_stats.existing_rows_count, m3.manifest_stats.min_sequence_number) == \
        (0, 4, 8, 1)
    # each file keeps what it resolved to in root A (snapshot, sequence numbers, row ids)
    for e in _leaf_entries(v4, m3):
        old = before[e.location]
        assert e.version_info.status == EntryStatus.EXISTING
        assert (e.version_info.snapshot_id, e.version_info.sequence_number,
                e.version_info.file_sequence_number, e.first_row_id) == \
            (old.version_info.snapshot_id, old.version_info.sequence_number,
             old.version_info.file_sequence_number, old.first_row_id)
    # no net change: snapshot A's rows are snapshot B's minus D7, row ids included
    rows_b = [r for r in _rows_with_ids(v4, snap_b.snapshot_id) if r["p"] != 7]
    assert rows_b == _rows_with_ids(v4, snap_a.snapshot_id)
    summary = dict(snap_b.summary)
    assert (summary["added-data-files"], summary["total-data-files"],
            summary["total-records"]) == ("1", "5", "10")
    _same_rows(v4, v3)


def _same_rows(v4: icenb.table.Table, v3: icenb.table.Table) -> None:
    """Rows and summaries equal the v3 twin's at every snapshot (row ids of rows appended after
    a removal differ: v3's rewritten manifests reserve row ids, v4 rewrites none)."""
    for a, b in zip(v4.metadata.snapshots, v3.metadata.snapshots, strict=True):
        assert a.summary == b.summary
        assert sorted(v4.scan(snapshot_id=a.snapshot_id, columns=["id", "p"]).to_arrow()
                      .to_pylist(), key=lambda r: r["id"]) == \
            sorted(v3.scan(snapshot_id=b.snapshot_id, columns=["id", "p"]).to_arrow()
                   .to_pylist(), key=lambda r: r["id"])


def _shown(entries: list[ContentEntry], names: _Names) -> list[tuple[str, str]]:
    return [(names(e), e.status.name) for e in entries]


def _leaf_entries(t: icenb.table.Table, root_entry: ContentEntry) -> list[ContentEntry]:
    """A leaf's entries with inherited values resolved (as a reader sees them)."""
    from icenb.io.root_manifest import read_leaf_manifest

    return list(read_leaf_manifest(t.io, root_entry).entries)


def test_root_files_are_flushed_to_a_leaf_at_the_minimum_count(tmp_path: Path) -> None:
    """Small appends add root files; once a group has min-count children they become one
    EXISTING leaf; the files this commit adds stay ADDED in the root."""
    v4, v3 = _twins(tmp_path, {COMPACTION_MIN_COUNT: "3"})
    names = _Names()
    for p in (1, 2, 3, 4):
        _append(v4, _rows(p))
        v3.append(_rows(p))
    s = v4.current_snapshot
    assert s is not None
    # 2 root files: below 3, kept; 3 root files: the 4th append combined them
    assert _shown(_root(v4, s), names) == [("M1", "EXISTING"), ("D4", "ADDED")]
    assert _leaf(v4, _root(v4, s)[0], names) == [("D1", "EXISTING"), ("D2", "EXISTING"),
                                                 ("D3", "EXISTING")]
    _same(v4, v3)


def test_new_entries_and_changed_leaves_are_never_compacted(tmp_path: Path) -> None:
    """With min-count 1: an added leaf is never combined; a leaf given a DV by this commit
    keeps its file and DV; an older DV is applied to its leaf by a later commit."""
    v4, v3 = _twins(tmp_path, {ROOT_ENTRY_LIMIT: "0", COMPACTION_MIN_COUNT: "1"})
    names = _names(_Names())
    for t in (v4, v3):
        t.append(_rows(1, 2, 3))
        t.append(_rows(4, 5, 6))
    s = v4.current_snapshot
    assert s is not None
    assert _shown(_root(v4, s), names) == [("M1", "EXISTING"), ("M2", "ADDED")]
    for t in (v4, v3):
        t.delete("p = 1")
    s = v4.current_snapshot
    assert s is not None
    assert _shown(_root(v4, s), names) == [("M1", "EXISTING"), ("M2", "EXISTING"),
                                           ("DV1", "ADDED")]
    for t in (v4, v3):
        t.delete("p = 5")
    s = v4.current_snapshot
    assert s is not None
    root = _root(v4, s)
    # M1 + DV1 (now EXISTING) were combined; M2 got DV2 in this commit and stays
    assert _shown(root, names) == [("M3", "EXISTING"), ("M2", "EXISTING"), ("DV2", "ADDED")]
    assert _leaf(v4, root[0], names) == [("D2", "EXISTING"), ("D3", "EXISTING")]
    assert _ordinals(v4, root[2]) == [1]
    _same(v4, v3)


def test_a_leaf_emptied_by_its_dv_is_dropped(tmp_path: Path) -> None:
    v4, _ = _twins(tmp_path, {ROOT_ENTRY_LIMIT: "0", COMPACTION_ENABLED: "false"})
    v4.append(_rows(1, 2, 3))
    v4.append(_rows(4, 5, 6))
    v4.delete("p < 4")
    v4.set_properties({COMPACTION_ENABLED: "true", COMPACTION_MIN_COUNT: "1",
                       ROOT_ENTRY_LIMIT: "2"})
    snap, _ = _append(v4, _rows(7))
    names = _Names()
    assert [(names(e), e.status.name) for e in _root(v4, snap)] == [("M1", "EXISTING"),
                                                                    ("D7", "ADDED")]
    assert sorted({r["p"] for r in v4.to_arrow().to_pylist()}) == [4, 5, 6, 7]


def test_the_target_size_splits_and_keeps_full_leaves(tmp_path: Path) -> None:
    """A leaf at the target size without a DV is kept as is; root files are packed."""
    v4, _ = _twins(tmp_path, {ROOT_ENTRY_LIMIT: "0", COMPACTION_ENABLED: "false"})
    v4.append(_rows(1, 2, 3))
    v4.set_properties({ROOT_ENTRY_LIMIT: "2"})
    v4.append(_rows(4, 5))
    s = v4.current_snapshot
    assert s is not None
    m1 = _root(v4, s)[0]
    assert m1.file_size_in_bytes is not None
    v4.set_properties({COMPACTION_ENABLED: "true", COMPACTION_MIN_COUNT: "2",
                       COMPACTION_TARGET_SIZE_BYTES: str(m1.file_size_in_bytes)})
    snap, _ = _append(v4, _rows(6))
    names = _Names()
    root = _root(v4, snap)
    assert [(names(e), e.status.name) for e in root] == [
        ("M1", "EXISTING"), ("M2", "EXISTING"), ("D6", "ADDED")]
    assert root[0].location == m1.location
    assert _leaf(v4, root[1], names) == [("D4", "EXISTING"), ("D5", "EXISTING")]


def test_a_conflicting_attempt_leaves_no_compacted_leaf(tmp_path: Path) -> None:
    """The first attempt compacts on the stale root, conflicts, and its leaf is deleted; the
    retry compacts the new root."""
    v4, _ = _twins(tmp_path, {COMPACTION_MIN_COUNT: "2"})
    v4.append(_rows(1))
    v4.append(_rows(2))
    other = icenb.warehouse(tmp_path).table("db.v4")
    v4.append(_rows(3))  # compacts D1, D2 into M1
    other.append(_rows(4))  # attempt 1 compacts D1, D2 again: conflict; retry: M1 + D3
    names = _Names()
    snap = other.current_snapshot
    assert snap is not None
    root = _root(other, snap)
    assert [(names(e), e.status.name) for e in root] == [("M1", "EXISTING"), ("D4", "ADDED")]
    assert _leaf(other, root[0], names) == [("D1", "EXISTING"), ("D2", "EXISTING"),
                                            ("D3", "EXISTING")]
    leaves = {n for n in _metadata_files(other) if not n.startswith(("root-", "snap-"))}
    assert len(leaves) == 2  # v4's compacted leaf and the retry's; attempt 1's is gone
    assert sorted(r["p"] for r in other.to_arrow().to_pylist()) == [1, 1, 2, 2, 3, 3, 4, 4]


def test_defaults_follow_v3_manifest_merging() -> None:
    assert compaction_enabled({}) is True
    assert (DEFAULT_MIN_COUNT, DEFAULT_TARGET_SIZE_BYTES) == (100, 8 * 1024 * 1024)
    with pytest.raises(ValidationError) as e:
        compaction_enabled({COMPACTION_ENABLED: "yes"})
    assert e.value.field == COMPACTION_ENABLED


def test_compacted_leaf_is_a_v4_data_manifest(tmp_path: Path) -> None:
    v4, _ = _twins(tmp_path, {COMPACTION_MIN_COUNT: "2"})
    for p in (1, 2, 3):
        v4.append(_rows(p))
    s = v4.current_snapshot
    assert s is not None
    m = read_content_manifest(v4.io, _root(v4, s)[0].location)
    assert [e.status for e in m.entries] == [EntryStatus.EXISTING] * 2
    assert all(e.version_info.sequence_number is not None for e in m.entries)


def test_an_overwrite_keeps_the_rewritten_rows_and_the_new_ones(tmp_path: Path) -> None:
    """Regression (V4Append.write): the kept rows of a partly matching file and the new rows are
    two writes of one operation and must land in distinct files (the second used to overwrite
    the first: the kept rows were lost and the new ones read twice)."""
    v4, v3 = _twins(tmp_path, {ROOT_ENTRY_LIMIT: "0"})
    for t in (v4, v3):
        t.append(_rows(1, 2))
        t.overwrite([{"id": 99, "p": 2}], "id = 20")
    assert sorted(r["id"] for r in v4.to_arrow().to_pylist()) == [10, 11, 21, 99]
    _same_rows(v4, v3)
