"""Upgrading a v3 table to EXPERIMENTAL format-version 4 (single-file-commits proposal,
"Upgrade"; docs/v4-layout.md §14): the first v4 commit carries the manifest list as root
entries over the v3 manifests, which planning reads with the v3 reader."""

from __future__ import annotations

from pathlib import Path

import icenb
from icenb.io.content_manifest import read_root_manifest
from icenb.io.manifest_reader import read_manifest_list
from icenb.spec.content_entry import ContentType
from icenb.spec.manifest import EntryStatus
from tests.table.test_v4_append import _rows

_MOR = {"write.delete.mode": "merge-on-read"}


def _twins(tmp_path: Path) -> tuple[icenb.table.Table, icenb.table.Table]:
    """Two identical v3 tables with two appends and a DV; the first is upgraded to v4."""
    wh = icenb.warehouse(tmp_path)
    out = []
    for name in ("db.up", "db.v3"):
        t = wh.create_table(name, "id long, p int", partition_by=["p"], format_version=3,
                            properties=_MOR)
        t.append(_rows(1, 2))
        t.append(_rows(3))
        t.delete("id = 10")
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
