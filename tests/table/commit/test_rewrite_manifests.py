"""``Table.rewrite_manifests``: data manifests rewritten clustered by partition in one ``replace``
snapshot (Iceberg Java's ``RewriteManifests``), rows and their lineage unchanged, retried on a
new base after concurrent commits."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display import render
from icenb.errors import UnsupportedVersion, ValidationError
from icenb.spec.properties import MANIFEST_MERGE_ENABLED
from icenb.table import Table
from icenb.table.commit.rewrite_manifests import RewriteManifestsResult

ROW_COLUMNS = ["id", "p", "_row_id", "_last_updated_sequence_number"]


def _table(root: Path, version: int = 3, *, appends: int = 4, name: str = "db.t") -> Table:
    t = icenb.warehouse(root).create_table(
        name, "id long, p string", format_version=version, partition_by="p",
        properties={MANIFEST_MERGE_ENABLED: "false"})
    for i in range(appends):
        t.append([{"id": 10 * i + j, "p": "abc"[j % 3]} for j in range(6)])
    return t


def _rows(t: Table) -> list[tuple[Any, ...]]:
    cols = ROW_COLUMNS if t.format_version >= 3 else ROW_COLUMNS[:2]
    return sorted(tuple(r[c] for c in cols) for r in t.scan(columns=cols).to_arrow().to_pylist())


def _entries(t: Table) -> dict[str, tuple[Any, ...]]:
    """Live data entries by path: snapshot id, data and file sequence numbers."""
    rows = t.inspect.entries().to_pylist()
    return {r["data_file"]["file_path"]: (r["snapshot_id"], r["sequence_number"],
                                          r["file_sequence_number"])
            for r in rows if r["status"] != 2 and r["data_file"]["content"] == 0}


def _manifests(t: Table) -> list[dict[str, Any]]:
    return t.inspect.manifests().to_pylist()


def _unreferenced_manifests(t: Table) -> set[str]:
    """Avro files in the metadata folder that no snapshot references."""
    used = set(t.inspect.all_manifests().column("path").to_pylist())
    used |= {s.manifest_list for s in t.snapshots if s.manifest_list}
    return {str(p) for p in Path(t.location, "metadata").glob("*.avro")} - used


@pytest.mark.parametrize("version", [1, 2, 3])
def test_rewrite_clusters_by_partition_and_keeps_rows_and_entries(tmp_path: Path,
                                                                  version: int) -> None:
    t = _table(tmp_path, version)
    rows, entries = _rows(t), _entries(t)
    assert len(_manifests(t)) == 4
    result = t.rewrite_manifests()
    assert isinstance(result, RewriteManifestsResult)
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (4, 1)
    snap = t.current_snapshot
    assert snap is not None and result.snapshot == snap
    assert snap.summary is not None and snap.summary.operation == "replace"
    summary = dict(snap.summary.properties)
    assert {k: summary[k] for k in ("manifests-created", "manifests-kept",
                                     "manifests-replaced", "entries-processed")} == {
        "manifests-created": "1", "manifests-kept": "0", "manifests-replaced": "4",
        "entries-processed": "12"}
    assert summary["total-records"] == "24" and summary["total-data-files"] == "12"
    # rows, their lineage (v3) and every entry's snapshot id and sequence numbers are kept
    assert _rows(t) == rows
    assert _entries(t) == entries
    (m,) = _manifests(t)
    assert (m["added_data_files_count"], m["existing_data_files_count"]) == (0, 12)
    assert m["added_snapshot_id"] == snap.snapshot_id


def test_a_small_target_splits_into_manifests_of_one_partition_each(tmp_path: Path) -> None:
    t = _table(tmp_path)
    before = sum(m["length"] for m in _manifests(t))
    rows = _rows(t)
    target = math.ceil(before / 3)
    result = t.rewrite_manifests(target_manifest_size_bytes=target)
    assert result.added_manifests_count == 3
    bounds = [(s["lower_bound"], s["upper_bound"])
              for m in _manifests(t) for s in m["partition_summaries"]]
    assert sorted(bounds) == [("a", "a"), ("b", "b"), ("c", "c")]
    assert _rows(t) == rows


def test_one_manifest_within_the_target_is_left_alone(tmp_path: Path) -> None:
    t = _table(tmp_path, appends=1)
    snapshots = len(t.snapshots)
    result = t.rewrite_manifests()
    assert result == RewriteManifestsResult(0, 0, None)
    assert len(t.snapshots) == snapshots
    empty = icenb.warehouse(tmp_path).create_table("db.empty", "id long")
    assert empty.rewrite_manifests().snapshot is None


def test_delete_manifests_are_kept_as_they_are(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    t.set_properties({"write.delete.mode": "merge-on-read"})
    t.delete("id = 1")
    t.delete("id = 12")
    rows = _rows(t)
    deletes = [m["path"] for m in _manifests(t) if m["content"] == 1]
    assert len(deletes) == 2
    result = t.rewrite_manifests()
    assert result.rewritten_manifests_count == 4
    assert [m["path"] for m in _manifests(t) if m["content"] == 1] == deletes
    assert t.current_snapshot is not None and t.current_snapshot.summary is not None
    assert t.current_snapshot.summary["manifests-kept"] == "2"
    assert _rows(t) == rows


def test_spec_id_rewrites_one_spec_and_the_default_rewrites_every_spec(tmp_path: Path) -> None:
    t = _table(tmp_path, appends=2)
    with t.update_spec() as u:
        u.add_field("bucket(2, id)")
    t.append([{"id": 100 + i, "p": "a"} for i in range(4)])
    t.append([{"id": 200 + i, "p": "b"} for i in range(4)])
    rows = _rows(t)
    new_spec = t.spec.spec_id
    result = t.rewrite_manifests(spec_id=new_spec)
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (2, 1)
    by_spec = sorted(m["partition_spec_id"] for m in _manifests(t))
    assert by_spec == [0, 0, new_spec]
    result = t.rewrite_manifests()  # spec 0's two manifests; spec 1's one is left
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (2, 1)
    assert sorted(m["partition_spec_id"] for m in _manifests(t)) == [0, new_spec]
    assert _rows(t) == rows


def test_a_branch_is_rewritten_and_main_is_not(tmp_path: Path) -> None:
    t = _table(tmp_path)
    main = t.current_snapshot
    t.create_branch("audit")
    result = t.rewrite_manifests(branch="audit", snapshot_properties={"job": "nightly"})
    assert t.current_snapshot == main
    head = t.refs["audit"].snapshot_id
    assert result.snapshot is not None and result.snapshot.snapshot_id == head
    assert result.snapshot.summary is not None and result.snapshot.summary["job"] == "nightly"


def test_bad_arguments_raise_naming_the_field(tmp_path: Path) -> None:
    t = _table(tmp_path)
    with pytest.raises(ValidationError, match="spec_id"):
        t.rewrite_manifests(spec_id=7)
    for bad in (0, -1, 1.5, "8MB"):
        with pytest.raises(ValidationError, match="target_manifest_size_bytes"):
            t.rewrite_manifests(target_manifest_size_bytes=bad)  # type: ignore[arg-type]
    t.create_tag("v1")
    with pytest.raises(ValidationError, match="tag"):
        t.rewrite_manifests(branch="v1")
    assert len(t.snapshots) == 4


def test_v4_tables_are_refused(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=4)
    t.append([{"id": 1}])
    t.append([{"id": 2}])
    with pytest.raises(UnsupportedVersion, match="format-version 4"):
        t.rewrite_manifests()


def test_an_interleaved_append_is_rewritten_too(tmp_path: Path) -> None:
    """The handle is stale: its first attempt conflicts, the retry plans on the new head
    (whose manifests include the concurrent append's)."""
    t = _table(tmp_path)
    stale = icenb.warehouse(tmp_path).table("db.t")
    t.append([{"id": 999, "p": "z"}])
    rows = _rows(t)
    result = stale.rewrite_manifests()
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (5, 1)
    assert result.snapshot is not None
    t.refresh()
    assert t.current_snapshot == result.snapshot
    assert _rows(t) == rows
    assert _unreferenced_manifests(t) == set()  # the losing attempt's manifest is gone


def test_an_interleaved_delete_is_kept(tmp_path: Path) -> None:
    """A concurrent delete rewrote a manifest the first attempt replaced: the retry rewrites
    the new head's manifests, so the deleted rows stay deleted."""
    t = _table(tmp_path)
    stale = icenb.warehouse(tmp_path).table("db.t")
    t.delete("id < 6")  # copy-on-write: removes the first append's files
    rows = _rows(t)
    assert all(r[0] >= 6 for r in rows)
    result = stale.rewrite_manifests()
    assert result.snapshot is not None
    t.refresh()
    assert _rows(t) == rows
    assert sum(m["existing_data_files_count"] for m in _manifests(t)) == len(_entries(t))
    assert _unreferenced_manifests(t) == set()


def test_result_reprs(tmp_path: Path) -> None:
    t = _table(tmp_path)
    result = t.rewrite_manifests()
    assert repr(result).startswith("RewriteManifestsResult(4 manifests rewritten into 1")
    shown = render(result)
    assert "Rewrite manifests" in shown.text and "manifests rewritten" in shown.text
    assert "Rewrite manifests" in shown.html and "<" in shown.html
    assert "nothing to commit" in render(RewriteManifestsResult(0, 0)).text


def test_a_rewrite_that_finds_the_work_done_commits_nothing(tmp_path: Path) -> None:
    """Two writers rewrite at once: the second, retrying on the first one's head, finds a
    single manifest and commits nothing (and leaves no file behind)."""
    t = _table(tmp_path)
    stale = icenb.warehouse(tmp_path).table("db.t")
    first = t.rewrite_manifests()
    assert first.snapshot is not None
    second = stale.rewrite_manifests()
    assert second == RewriteManifestsResult(0, 0, None)
    assert stale.current_snapshot == first.snapshot  # the handle shows the catalog's state
    t.refresh()
    assert t.current_snapshot == first.snapshot
    assert _unreferenced_manifests(t) == set()
