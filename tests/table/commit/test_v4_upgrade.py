"""Upgrading a v3 table to EXPERIMENTAL format-version 4 (single-file-commits proposal,
"Upgrade"; docs/v4-layout.md#upgrade): the first v4 commit carries the manifest list as root
entries over the v3 manifests, which planning reads with the v3 reader."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import UnsupportedVersion
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.io.root_manifest import (
    load_manifest_dv,
    read_content_manifest,
    read_root_manifest,
)
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.manifest import EntryStatus
from icenb.table.commit.v4_compaction import COMPACTION_MIN_COUNT
from tests.table.commit.test_v4_append import _rows

_MOR = {"write.delete.mode": "merge-on-read"}


def _twins(tmp_path: Path, format_version: int = 3
           ) -> tuple[icenb.table.Table, icenb.table.Table]:
    """Two identical v3 tables with two appends and a delete; the first is upgraded to v4.
    With ``format_version=2`` they start as v2 tables, whose delete is a Parquet position
    delete file, and are upgraded to v3 first (a v2 -> v3 -> v4 table could not delete)."""
    wh = icenb.warehouse(tmp_path)
    out = []
    for name in ("db.up", "db.v3"):
        t = wh.create_table(name, "id long, p int", partition_by=["p"],
                            format_version=format_version, properties=_MOR)
        t.append(_rows(1, 2))
        t.append(_rows(3))
        t.delete("id = 10")
        if format_version < 3:
            assert t.upgrade(3) is True
        out.append(t)
    assert out[0].upgrade(4) is True
    assert out[0].metadata.format_version == 4
    return out[0], out[1]


def _same(v4: icenb.table.Table, v3: icenb.table.Table) -> None:
    s4, s3 = list(v4.metadata.snapshots), list(v3.metadata.snapshots)
    assert len(s4) == len(s3)
    cols = ["id", "p", "_row_id"]
    for a, b in zip(s4, s3, strict=True):
        rows4 = v4.scan(snapshot_id=a.snapshot_id, columns=cols).to_arrow().to_pylist()
        rows3 = v3.scan(snapshot_id=b.snapshot_id, columns=cols).to_arrow().to_pylist()
        assert sorted(rows4, key=lambda r: r["id"]) == sorted(rows3, key=lambda r: r["id"])


def test_first_v4_commit_carries_the_manifest_list(tmp_path: Path) -> None:
    up, v3 = _twins(tmp_path)
    old = up.current_snapshot
    assert old is not None and old.manifest_list is not None
    listed = read_manifest_list(up.io, old, 3)
    up.append(_rows(4))
    v3.append(_rows(4))
    snap = up.current_snapshot
    assert snap is not None and snap.root_manifest is not None and snap.manifest_list is None
    root = read_root_manifest(up.io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    carried = root.entries[:len(listed)]
    assert [e.location for e in carried] == [m.manifest_path for m in listed]
    for e, m in zip(carried, listed, strict=True):
        assert e.status == EntryStatus.EXISTING
        assert e.content_type == (ContentType.DATA_MANIFEST if m.content == 0
                                  else ContentType.DELETE_MANIFEST)
        assert e.manifest_stats is not None
        assert e.manifest_stats.added_files_count == m.added_files_count
        assert e.manifest_stats.existing_rows_count == m.existing_rows_count
        assert e.version_info.sequence_number == m.sequence_number
        assert e.first_row_id == m.first_row_id
        assert e.content_stats is not None and e.content_stats.partitions == m.partitions
    assert [e.content_type for e in root.entries[len(listed):]] == [ContentType.DATA]
    _same(up, v3)
    assert sorted(r["id"] for r in up.scan().to_arrow().to_pylist()) == \
        [11, 20, 21, 30, 31, 40, 41]


def test_filtered_scan_prunes_v3_manifests(tmp_path: Path) -> None:
    up, _ = _twins(tmp_path)
    up.append(_rows(4))
    plan = up.scan("p = 3").plan()
    assert sorted(r["id"] for r in up.scan("p = 3").to_arrow().to_pylist()) == \
        [30, 31]
    assert plan.manifests_read < plan.manifests_total


# ------------------------------------------------------------------ removals from v3 leaves

_COW = {"write.delete.mode": "copy-on-write"}


def _root_of(t: icenb.table.Table) -> list[ContentEntry]:
    snap = t.current_snapshot
    assert snap is not None and snap.root_manifest is not None
    return list(read_root_manifest(t.io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                                   sequence_number=snap.sequence_number).entries)


def _positions(t: icenb.table.Table, manifest: str) -> list[str]:
    """The file paths of a v3 manifest's records in file order (their ordinals)."""
    m = next(m for m in read_manifest_list(t.io, t.metadata.snapshots[2], 3)
             if m.manifest_path == manifest)
    return list(read_manifest_entries(t.io, [m], 3).column("data_file")
                .combine_chunks().field("file_path").to_pylist())


def test_a_delete_after_the_upgrade_puts_a_manifest_dv_on_the_v3_manifest(
        tmp_path: Path) -> None:
    """Removing D2 (p = 2) from a v3 manifest: the v3 manifest stays, a manifest DV over it
    deletes D2's record position; rows and summary equal the v3 twin's."""
    up, v3 = _twins(tmp_path)
    for t in (up, v3):
        t.set_properties(_COW)
        t.delete("p = 2")
    root = _root_of(up)
    dvs = [e for e in root if e.content_type == ContentType.MANIFEST_DV]
    assert len(dvs) == 1 and dvs[0].status == EntryStatus.ADDED
    target = dvs[0].referenced_file
    assert target is not None
    ordinals = [int(i) for i in load_manifest_dv(up.io, dvs[0]).to_numpy()]
    paths = _positions(up, target)
    assert [paths[i] for i in ordinals] == [p for p in paths if "/p=2/" in p]
    with pytest.raises(UnsupportedVersion):  # the leaf is still the v3 manifest
        read_content_manifest(up.io, target)
    assert up.current_snapshot is not None and v3.current_snapshot is not None
    assert up.current_snapshot.summary == v3.current_snapshot.summary
    _same(up, v3)
    for t in (up, v3):  # a second removal from the same v3 manifest unions the DV
        t.delete("p = 1")
    dvs = [e for e in _root_of(up) if e.content_type == ContentType.MANIFEST_DV]
    on_target = [e for e in dvs if e.referenced_file == target]
    assert [e.status for e in on_target] == [EntryStatus.DELETED, EntryStatus.ADDED]
    assert load_manifest_dv(up.io, on_target[1]).cardinality == 2
    # D1's data DV (id = 10) goes with it: a manifest DV over the v3 delete manifest
    others = [e for e in dvs if e.referenced_file != target]
    assert [e.status for e in others] == [EntryStatus.ADDED]
    _same(up, v3)
    assert sorted(r["id"] for r in up.to_arrow().to_pylist()) == [30, 31]


def test_an_overwrite_after_the_upgrade(tmp_path: Path) -> None:
    up, v3 = _twins(tmp_path)
    for t in (up, v3):
        t.overwrite(_rows(5), "p = 3")
    _same(up, v3)
    assert sorted(r["id"] for r in up.to_arrow().to_pylist()) == [11, 20, 21, 50, 51]


def test_a_merge_on_read_delete_after_the_upgrade(tmp_path: Path) -> None:
    """The DV of p = 1's file lives in a v3 delete manifest: its replacement removes it with a
    manifest DV over that manifest."""
    up, v3 = _twins(tmp_path)
    for t in (up, v3):
        t.delete("id = 11")
        t.delete("id = 20")
    _same(up, v3)
    root = _root_of(up)
    dvs = [e for e in root if e.content_type == ContentType.MANIFEST_DV and e.is_live]
    assert dvs  # the old DV in the v3 delete manifest was removed through a manifest DV
    assert sorted(r["id"] for r in up.to_arrow().to_pylist()) == [21, 30, 31]


def test_compaction_rewrites_v3_manifests_into_a_v4_leaf(tmp_path: Path) -> None:
    up, v3 = _twins(tmp_path)
    for t in (up, v3):
        t.set_properties({**_COW, COMPACTION_MIN_COUNT: "2"})
        t.delete("p = 2")  # a DV over the v3 data manifest holding D1, D2
    before = {r["id"]: r["_row_id"]
              for r in up.scan(columns=["id", "_row_id"]).to_arrow().to_pylist()}
    up.append(_rows(4))
    v3.append(_rows(4))
    root = _root_of(up)
    data = [e for e in root if e.content_type == ContentType.DATA_MANIFEST]
    assert len(data) == 1 and data[0].status == EntryStatus.EXISTING
    leaf = read_content_manifest(up.io, data[0].location)  # a v4 header now
    assert len(leaf.entries) == 2  # D1 and D3: D2 dropped with the DV
    assert not [e for e in root if e.content_type == ContentType.MANIFEST_DV]
    after = {r["id"]: r["_row_id"]
             for r in up.scan(columns=["id", "_row_id"]).to_arrow().to_pylist()}
    assert {k: v for k, v in after.items() if k < 40} == before
    assert sorted(after) == sorted(r["id"] for r in v3.to_arrow().to_pylist())


def _parquet_deletes(t: icenb.table.Table) -> list[str]:
    return [r["file_path"] for r in t.inspect.delete_files().to_pylist()
            if r["file_format"] == "PARQUET"]


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_deletes_after_a_v2_v3_v4_upgrade_with_position_delete_files(
        tmp_path: Path, mode: str) -> None:
    """A data file whose deletes are a v2 position delete file: a merge-on-read delete writes
    a DV holding the old positions and removes the old file with a manifest DV over its v3
    delete manifest at its record's ordinal; a copy-on-write delete removes the data file and,
    as v3 does, keeps the delete file. Rows and summaries equal the v3 twin's."""
    up, v3 = _twins(tmp_path, format_version=2)
    old = _parquet_deletes(up)
    assert len(old) == 1
    for t in (up, v3):
        t.set_properties({"write.delete.mode": mode})
        t.delete("id = 11")
    _same(up, v3)
    assert up.current_snapshot is not None and v3.current_snapshot is not None
    sizes = [{k: v for k, v in t.current_snapshot.summary.properties.items()  # type: ignore[union-attr]
              if not k.endswith("-size")} for t in (up, v3)]
    assert sizes[0] == sizes[1]  # the two v2 delete files' sizes may differ by compression
    if mode == "copy-on-write":  # as v3 (and Java): a v2 delete file is not a DV, it stays
        assert _parquet_deletes(up) == old and len(_parquet_deletes(v3)) == 1
        return
    assert _parquet_deletes(up) == [] == _parquet_deletes(v3)
    root = _root_of(up)
    dvs = [e for e in root if e.content_type == ContentType.MANIFEST_DV and e.is_live]
    removed = {_positions(up, e.referenced_file)[i]
               for e in dvs if e.referenced_file is not None
               and e.referenced_file.endswith(".avro")
               and any(e.referenced_file == m.manifest_path
                       for m in read_manifest_list(up.io, up.metadata.snapshots[2], 3))
               for i in (int(x) for x in load_manifest_dv(up.io, e).to_numpy())}
    assert old[0] in removed
    for t in (up, v3):  # and the table keeps working
        t.delete("id = 30")
    _same(up, v3)
    assert sorted(r["id"] for r in up.to_arrow().to_pylist()) == [20, 21, 31]


def test_update_and_compaction_after_a_v2_v3_v4_upgrade(tmp_path: Path) -> None:
    """A merge-on-read update replaces the position delete file too; compaction keeps a v3
    delete manifest whose position delete file has no v4 form instead of failing."""
    up, v3 = _twins(tmp_path, format_version=2)
    for t in (up, v3):
        t.set_properties({"write.update.mode": "merge-on-read", COMPACTION_MIN_COUNT: "2"})
        t.append(_rows(4))
        t.update({"p": 1}, "id = 20")
    _same(up, v3)
    assert sorted(r["id"] for r in up.to_arrow().to_pylist()) == [11, 20, 21, 30, 31, 40, 41]
