"""Expiring snapshots of EXPERIMENTAL format-version 4 tables (docs/v4-layout.md#maintenance): files
are
reached through roots, leaves (v4 or v3 after an upgrade) minus their manifest DVs, data DVs'
Puffin files; exactly the files no kept snapshot references are deleted, and every kept
snapshot still reads the same rows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.io.root_manifest import read_leaves, read_root_manifest
from icenb.spec.content_entry import ContentType
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.expire_snapshots import ExpireSnapshotsResult
from tests.table.commit.test_v4_append import _rows


def _files(t: icenb.table.Table) -> set[str]:
    """Every file under the table location, spelled as the metadata spells paths."""
    prefix = "file://" if t.location.startswith("file://") else ""
    root = Path(t.location.removeprefix("file://"))
    out = set()
    for d, _, names in os.walk(root):
        out.update(f"{prefix}{Path(d) / n}" for n in names
                   if not n.endswith(".metadata.json"))
    return out


def _reads(t: icenb.table.Table) -> dict[int, list[dict[str, Any]]]:
    cols = ["id", "p", "_row_id"]
    return {s.snapshot_id: sorted(t.scan(snapshot_id=s.snapshot_id, columns=cols)
                                  .to_arrow().to_pylist(), key=lambda r: r["id"])
            for s in t.metadata.snapshots}


def _expire(t: icenb.table.Table, ids: list[int]) -> ExpireSnapshotsResult:
    """Expire ``ids``: a dry run first (it must delete nothing and say what the real run
    does); the files that vanished must be exactly the result's, kept snapshots read as
    before."""
    before_files, before_rows = _files(t), _reads(t)
    dry = t.expire_snapshots(snapshot_ids=ids, dry_run=True)
    assert _files(t) == before_files
    result = t.expire_snapshots(snapshot_ids=ids)
    assert result.committed and not result.failed_deletes
    assert sorted(result.expired_snapshot_ids) == sorted(ids)
    assert dry.deleted_files == result.deleted_files
    assert before_files - _files(t) == set(result.deleted_paths)
    after_rows = _reads(t)
    assert after_rows == {sid: r for sid, r in before_rows.items() if sid not in ids}
    return result


def _live(t: icenb.table.Table, snap: Snapshot, kind: ContentType) -> dict[str, int]:
    """Live file entries of ``kind`` of a v4 snapshot (root and leaves, manifest DVs applied,
    read by icenb's v4 reader), path -> partition value ``p``; leaves for DATA_MANIFEST."""
    assert snap.root_manifest is not None
    root = read_root_manifest(t.io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    leaves = read_leaves(t.io, root)
    if kind.is_manifest:
        return {lf.root_entry.location: 0 for lf in leaves
                if lf.root_entry.content_type == kind}
    entries = [e for e in root.entries if e.is_live] + [
        e for lf in leaves for e in lf.live_entries()]
    return {e.location: next(iter((e.content_stats.partition or {}).values()), 0)
            for e in entries if e.content_type == kind and e.content_stats is not None}


def test_appends_and_removals_in_root_and_leaf(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p int", partition_by=["p"],
                                               format_version=4)
    s1 = t.append(_rows(1))  # D1 in the root
    s2 = t.append(_rows(2, 3, 4))  # leaf M1 with D2, D3, D4
    d = {int.from_bytes(p, "little"): path
         for path, p in _live(t, s2, ContentType.DATA).items()}
    leaf = set(_live(t, s2, ContentType.DATA_MANIFEST))
    assert len(leaf) == 1
    s3 = t.delete("p = 3")  # an inline manifest DV over M1: D3 removed, M1 kept
    s4 = t.delete("p = 1")  # D1 DELETED in the root
    assert s3 is not None and s4 is not None
    roots = {s.snapshot_id: s.root_manifest for s in t.metadata.snapshots}

    r = _expire(t, [s1.snapshot_id, s2.snapshot_id])
    # D3 was live only in s1..s2's views; M1 and D1 are still referenced by s3
    assert r.deleted_files["root_manifests"] == tuple(sorted(
        [roots[s1.snapshot_id], roots[s2.snapshot_id]]))
    assert r.deleted_files["data_files"] == (d[3],)
    assert r.count("manifests") == r.count("manifest_dvs") == r.count("manifest_lists") == 0

    r = _expire(t, [s3.snapshot_id])
    assert r.deleted_files == {**{k: () for k in r.deleted_files},
                               "root_manifests": (roots[s3.snapshot_id],),
                               "data_files": (d[1],)}
    assert sorted(x["id"] for x in t.to_arrow().to_pylist()) == [20, 21, 40, 41]
    assert leaf <= _files(t)


def test_a_leaf_whose_files_all_went_stays_while_listed(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p int", partition_by=["p"],
                                               format_version=4)
    s1 = t.append(_rows(1, 2, 3))  # leaf M1
    (leaf,) = _live(t, s1, ContentType.DATA_MANIFEST)
    files = sorted(_live(t, s1, ContentType.DATA))
    s2 = t.overwrite(_rows(5))  # every file removed: M1 stays with a DV of all its ordinals
    t.append(_rows(6))
    r = _expire(t, [s1.snapshot_id])
    # the files are in no kept snapshot's view; M1 is still listed (with its DV) by s2, s3
    assert r.deleted_files["data_files"] == tuple(files)
    assert r.count("manifests") == 0 and r.count("root_manifests") == 1
    r = _expire(t, [s2.snapshot_id])
    assert r.deleted_files == {**{k: () for k in r.deleted_files},
                               "root_manifests": (s2.root_manifest,)}
    assert leaf in _files(t)


@pytest.mark.parametrize("limit", ["2", "0"])
def test_replaced_data_dvs(tmp_path: Path, limit: str) -> None:
    """A row delta's new DV replaces the old one (root: DELETED in place; delete leaf: a
    manifest DV over it); the old DV's Puffin goes once only expired snapshots name it."""
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long, p int", partition_by=["p"], format_version=4,
        properties={"write.delete.mode": "merge-on-read", "write.v4.root-entry-limit": limit})
    s1 = t.append(_rows(1))
    s2 = t.delete("id = 10")
    assert s2 is not None
    dv1 = set(_live(t, s2, ContentType.POSITION_DELETE))
    s3 = t.delete("id = 11")
    assert s3 is not None
    dv2 = set(_live(t, s3, ContentType.POSITION_DELETE))
    assert len(dv1) == len(dv2) == 1 and dv1 != dv2
    manifests_s2 = (set(_live(t, s2, ContentType.DATA_MANIFEST))
                    | set(_live(t, s2, ContentType.DELETE_MANIFEST)))
    assert bool(manifests_s2) == (limit == "0")
    r = _expire(t, [s1.snapshot_id, s2.snapshot_id])
    assert set(r.deleted_files["position_delete_files"]) == dv1
    assert r.count("data_files") == 0 and r.count("root_manifests") == 2
    assert r.count("manifests") == 0  # leaves of s2 are still in s3's root
    assert manifests_s2 <= _files(t)
    assert sorted(x["id"] for x in t.to_arrow().to_pylist()) == []


def test_after_an_upgrade(tmp_path: Path) -> None:
    """Snapshots from before the upgrade have manifest lists; the first v4 root lists their
    manifests, so only the lists (and a v3 manifest no root lists) go."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p int", partition_by=["p"],
                                               format_version=3)
    s1 = t.append(_rows(1, 2))
    s2 = t.delete("p = 1")  # v3 copy-on-write: s1's manifest rewritten
    d1 = {r["file_path"] for r in t.inspect.files(snapshot_id=s1.snapshot_id).to_pylist()
          if r["partition"]["p"] == 1}
    lists = {s.manifest_list for s in t.metadata.snapshots}
    m1 = {m["path"] for m in t.inspect.manifests(snapshot_id=s1.snapshot_id).to_pylist()}
    m2 = {m["path"] for m in t.inspect.manifests(snapshot_id=s2.snapshot_id).to_pylist()}
    assert t.upgrade(4)
    s3 = t.append(_rows(3))
    assert s2 is not None and s3.root_manifest is not None
    r = _expire(t, [s1.snapshot_id, s2.snapshot_id])
    assert set(r.deleted_files["manifest_lists"]) == lists
    assert set(r.deleted_files["manifests"]) == m1 - m2
    assert set(r.deleted_files["data_files"]) == d1
    assert m2 <= _files(t)
    t.append(_rows(4))
    r = _expire(t, [s3.snapshot_id])
    assert r.deleted_files == {**{k: () for k in r.deleted_files},
                               "root_manifests": (s3.root_manifest,)}


def test_v4_file_kinds_are_reported_for_v4_tables_only(tmp_path: Path) -> None:
    """A v4 result counts root manifests and manifest DV files; a v3 result keeps v3's kinds
    (Java's ``DeletedFileType``) and shows the v4 ones only if some were deleted."""
    wh = icenb.warehouse(tmp_path)
    counts = {}
    for version in (3, 4):
        t = wh.create_table(f"db.t{version}", "id long, p int", partition_by=["p"],
                            format_version=version)
        t.append(_rows(1))
        t.append(_rows(2))
        now = t.metadata.last_updated_ms + 1
        result = t.expire_snapshots(older_than=now, retain_last=1)
        assert len(result.expired_snapshot_ids) == 1
        counts[version] = result.counts
    assert "root_manifests" not in counts[3] and "manifest_dvs" not in counts[3]
    assert counts[3]["manifest_lists"] == 1
    assert counts[4]["root_manifests"] == 1 and counts[4]["manifest_dvs"] == 0
    assert counts[4]["manifest_lists"] == 0
