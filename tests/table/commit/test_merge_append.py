"""Table.append as Java's MergeAppend: manifests merged per commit.manifest-merge.enabled,
commit.manifest.min-count-to-merge and commit.manifest.target-size-bytes; merged manifests
carry EXISTING entries with their original snapshot ids and sequence numbers, and Java reads
them as icenb does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.io.manifest_reader import read_manifest_list
from icenb.spec.manifest import EntryStatus
from icenb.table import Table
from icenb.table.commit.merging import pack_end, read_entries
from tests.table._helpers import (
    Key,
    assert_java_reads_snapshot,
    run_keyed,
    snapshot_requests,
)


def test_pack_end_fills_from_the_end() -> None:
    assert pack_end([5, 5, 5, 5], 10) == [[0, 1], [2, 3]]
    assert pack_end([5, 5, 5], 10) == [[0], [1, 2]]  # the first bin is the under-filled one
    assert pack_end([30, 1, 1], 10) == [[0], [1, 2]]  # an oversized item alone
    assert pack_end([], 10) == []


def _manifests(t: Table) -> list[Any]:
    snap = t.current_snapshot
    assert snap is not None
    return read_manifest_list(t.io, snap, t.format_version)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_appends_merge_at_the_minimum_count(tmp_path: Path, version: int) -> None:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long", format_version=version,
        properties={"commit.manifest.min-count-to-merge": "3"})
    sids = []
    for i in range(2):
        sids.append(t.append([{"id": i}]).snapshot_id)
    assert len(_manifests(t)) == 2  # fewer than 3: not merged
    third = t.append([{"id": 2}])
    ms = _manifests(t)
    assert len(ms) == 1 and ms[0].added_snapshot_id == third.snapshot_id
    entries = read_entries(t.io, ms[0], t.metadata)
    by_id = {e.snapshot_id: e for e in entries}
    assert sorted(e.status for e in entries) == [EntryStatus.EXISTING, EntryStatus.EXISTING,
                                                 EntryStatus.ADDED]
    for sid, seq in zip(sids, (1, 2), strict=True):
        e = by_id[sid]
        assert e.status == EntryStatus.EXISTING
        assert e.sequence_number == (seq if version >= 2 else 0)
    if version >= 3:  # existing rows keep their ids; the new row continues after them
        assert sorted(t.scan(columns=["id", "_row_id"]).to_arrow().to_pylist(),
                      key=lambda r: r["id"]) == [
            {"id": 0, "_row_id": 0}, {"id": 1, "_row_id": 1}, {"id": 2, "_row_id": 2}]
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2]
    summary = third.summary
    assert summary is not None and summary["added-data-files"] == "1"
    assert summary["total-data-files"] == "3"


def test_merging_disabled_uses_fast_append(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long", properties={"commit.manifest-merge.enabled": "false",
                                       "commit.manifest.min-count-to-merge": "2"})
    for i in range(4):
        t.append([{"id": i}])
    assert len(_manifests(t)) == 4


def test_target_size_keeps_big_manifests_apart(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long", properties={"commit.manifest.min-count-to-merge": "2",
                                       "commit.manifest.target-size-bytes": "1"})
    for i in range(3):
        t.append([{"id": i}])
    assert len(_manifests(t)) == 3  # every manifest exceeds the target: bins of one


def test_default_merges_at_100_manifests(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=2)
    t.append([{"id": 0}])
    t.append([{"id": 1}])
    assert len(_manifests(t)) == 2


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Table]:
    wh = icenb.warehouse(tmp_path_factory.mktemp("merge"))
    out = {}
    for v in (1, 2, 3):
        t = wh.create_table(f"db.m{v}", "id long, s string", partition_by=["bucket(2, id)"],
                            format_version=v,
                            properties={"commit.manifest.min-count-to-merge": "2"})
        for i in range(4):
            t.append([{"id": i * 10 + k, "s": f"s{i}"} for k in range(3)])
        if v >= 2:
            t.delete("id = 11")
        out[v] = t
    return out


def test_java_reads_merged_manifests(merged: dict[int, Table]) -> None:
    kinds = ("entries", "manifests")
    requests: dict[Key, dict[str, Any]] = {}
    for v, t in merged.items():
        assert t.metadata_location is not None
        for snap in t.snapshots:
            requests.update(snapshot_requests(v, t.metadata_location, snap.snapshot_id, kinds))
    results = run_keyed("java_read_written.py", requests)
    for v, t in merged.items():
        assert len(_manifests(t)) == 1
        for snap in t.snapshots:
            assert_java_reads_snapshot(t, v, snap.snapshot_id, results, kinds)
