"""``Table.rewrite_position_deletes``: position delete files merged per partition, dangling deletes
dropped, v2 position deletes turned into deletion vectors on v3 tables, in one ``replace``
snapshot (Iceberg Java's ``RewritePositionDeleteFiles``); rows read the same before and after."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display import render
from icenb.errors import CommitConflict, UnsupportedVersion, ValidationError
from icenb.spec.properties import MANIFEST_MERGE_ENABLED, WRITE_DELETE_MODE
from icenb.table import Table
from icenb.table.commit.rewrite_position_deletes import RewritePositionDeletesResult


def _table(root: Path, version: int = 2, name: str = "db.t") -> Table:
    """Two appends over partitions a and b (two data files each), then six merge-on-read
    deletes of two rows each (v2: six position delete files, three per partition)."""
    t = icenb.warehouse(root).create_table(name, "id long, p string",
                                           format_version=version, partition_by="p",
                                           properties={WRITE_DELETE_MODE: "merge-on-read"})
    t.append([{"id": j, "p": "ab"[j % 2]} for j in range(20)])
    t.append([{"id": 100 + j, "p": "ab"[j % 2]} for j in range(20)])
    for k in range(6):
        t.delete(f"id = {k} or id = {100 + k}")
    return t


def _rows(t: Table) -> list[tuple[Any, ...]]:
    cols = ["id", "p", "_row_id"] if t.format_version >= 3 else ["id", "p"]
    return sorted(tuple(r[c] for c in cols) for r in t.scan(columns=cols).to_arrow().to_pylist())


def _deletes(t: Table) -> list[dict[str, Any]]:
    return t.inspect.delete_files().to_pylist()


def test_v2_position_deletes_merge_into_one_file_per_partition(tmp_path: Path) -> None:
    t = _table(tmp_path)
    rows = _rows(t)
    before = _deletes(t)
    assert len(before) == 6
    result = t.rewrite_position_deletes()
    assert isinstance(result, RewritePositionDeletesResult)
    assert (result.rewritten_delete_files_count, result.added_delete_files_count) == (6, 2)
    assert result.rewritten_bytes_count == sum(d["file_size_in_bytes"] for d in before)
    after = _deletes(t)
    assert result.added_bytes_count == sum(d["file_size_in_bytes"] for d in after)
    assert sorted(d["partition"]["p"] for d in after) == ["a", "b"]
    assert sum(d["record_count"] for d in after) == 12
    snap = t.current_snapshot
    assert snap is not None and result.snapshot == snap
    assert snap.summary is not None and snap.summary.operation == "replace"
    assert {k: snap.summary[k] for k in (
        "added-position-delete-files", "removed-position-delete-files", "added-delete-files",
        "removed-delete-files", "added-position-deletes", "removed-position-deletes",
        "total-position-deletes", "total-records")} == {
        "added-position-delete-files": "2", "removed-position-delete-files": "6",
        "added-delete-files": "2", "removed-delete-files": "6",
        "added-position-deletes": "12", "removed-position-deletes": "12",
        "total-position-deletes": "12", "total-records": "40"}
    assert _rows(t) == rows
    # nothing left to merge: no commit
    assert t.rewrite_position_deletes() == RewritePositionDeletesResult(0, 0, 0, 0, None)


def test_the_filter_selects_partitions(tmp_path: Path) -> None:
    t = _table(tmp_path)
    rows = _rows(t)
    result = t.rewrite_position_deletes("p = 'a'")
    assert (result.rewritten_delete_files_count, result.added_delete_files_count) == (3, 1)
    assert sorted(d["partition"]["p"] for d in _deletes(t)) == ["a"] + ["b"] * 3
    assert _rows(t) == rows
    with pytest.raises(ValidationError, match="nope"):
        t.rewrite_position_deletes("nope = 1")


def test_dangling_deletes_are_dropped(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.rewrite_position_deletes()
    t.set_properties({WRITE_DELETE_MODE: "copy-on-write"})
    t.delete("id < 100 and p = 'a'")  # removes partition a's first data file
    rows = _rows(t)
    result = t.rewrite_position_deletes()
    assert (result.rewritten_delete_files_count, result.added_delete_files_count) == (1, 1)
    (a,) = [d for d in _deletes(t) if d["partition"]["p"] == "a"]
    assert a["record_count"] == 3  # ids 100, 102, 104; 0, 2, 4 were in the removed file
    assert result.snapshot is not None and result.snapshot.summary is not None
    assert result.snapshot.summary["removed-position-deletes"] == "6"
    assert _rows(t) == rows


def test_deletes_of_a_whole_partition_gone_leave_no_file(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.set_properties({WRITE_DELETE_MODE: "copy-on-write"})
    t.delete("p = 'b'")
    rows = _rows(t)
    result = t.rewrite_position_deletes()
    assert result.added_delete_files_count == 1  # partition a only
    assert [d["partition"]["p"] for d in _deletes(t)] == ["a"]
    assert _rows(t) == rows


@pytest.mark.parametrize("upgraded", [False, True])
def test_v3_position_deletes_become_one_dv_per_data_file(tmp_path: Path, upgraded: bool) -> None:
    if upgraded:
        t = _table(tmp_path, 2)
        t.upgrade(3)
        t.delete("id = 11")  # a DV merging that file's position deletes
    else:
        t = _table(tmp_path, 3)
    rows = _rows(t)
    formats = {d["file_format"] for d in _deletes(t)}
    assert ("PARQUET" in formats) == upgraded
    result = t.rewrite_position_deletes()
    after = _deletes(t)
    if not upgraded:  # only DVs, none dangling: nothing to do
        assert result.snapshot is None
        return
    assert result.snapshot is not None
    assert {d["file_format"] for d in after} == {"PUFFIN"}
    referenced = [d["referenced_data_file"] for d in after]
    assert len(referenced) == len(set(referenced)) == 4  # one DV per data file
    assert _rows(t) == rows
    assert result.snapshot.summary is not None
    assert result.snapshot.summary["added-dvs"] == "4"
    assert t.rewrite_position_deletes().snapshot is None


def test_v3_dvs_of_removed_data_files_are_dropped(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    t.upgrade(3)
    t.rewrite_position_deletes()  # DVs now
    t.set_properties({WRITE_DELETE_MODE: "copy-on-write"})
    t.delete("p = 'b'")  # the commit drops DVs of the files it removes
    assert {d["partition"]["p"] for d in _deletes(t)} == {"a"}
    assert t.rewrite_position_deletes().snapshot is None


def test_v1_has_nothing_and_v4_is_refused(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    v1 = wh.create_table("db.v1", "id long", format_version=1)
    v1.append([{"id": 1}])
    assert v1.rewrite_position_deletes().snapshot is None
    v4 = wh.create_table("db.v4", "id long", format_version=4)
    v4.append([{"id": 1}])
    with pytest.raises(UnsupportedVersion, match="format-version 4"):
        v4.rewrite_position_deletes()


def test_an_interleaved_append_is_retried_on(tmp_path: Path) -> None:
    t = _table(tmp_path)
    stale = icenb.warehouse(tmp_path).table("db.t")
    t.append([{"id": 500, "p": "c"}])
    rows = _rows(t)
    result = stale.rewrite_position_deletes()
    assert result.added_delete_files_count == 2
    t.refresh()
    assert t.current_snapshot == result.snapshot
    assert _rows(t) == rows


def test_an_interleaved_removal_of_a_referenced_data_file_conflicts(tmp_path: Path) -> None:
    t = _table(tmp_path)
    stale = icenb.warehouse(tmp_path).table("db.t")
    t.set_properties({WRITE_DELETE_MODE: "copy-on-write"})
    t.delete("id < 100 and p = 'a'")
    head = t.current_snapshot
    with pytest.raises(CommitConflict):
        stale.rewrite_position_deletes()
    t.refresh()
    assert t.current_snapshot == head
    data_dir = Path(t.location, "data")
    listed = {d["file_path"] for d in _deletes(t)}
    on_disk = {str(p) for p in data_dir.rglob("*-deletes.parquet")}
    assert on_disk <= listed | {d["file_path"] for d in t.inspect.all_delete_files().to_pylist()}


def test_result_reprs(tmp_path: Path) -> None:
    result = _table(tmp_path).rewrite_position_deletes()
    assert repr(result).startswith("RewritePositionDeletesResult(6 delete files")
    shown = render(result)
    assert "Rewrite position deletes" in shown.text and "delete files rewritten" in shown.text
    assert "Rewrite position deletes" in shown.html


def test_a_concurrent_dv_for_the_same_data_file_conflicts(tmp_path: Path) -> None:
    """v3: the rewrite's DV for a data file and a concurrent DV for it cannot both stand (one
    DV per data file); after a refresh the rewrite merges the new DV too."""
    t = _table(tmp_path, 2)
    t.upgrade(3)
    stale = icenb.warehouse(tmp_path).table("db.t")
    t.delete("id = 10")  # a DV for a data file the position deletes also name
    head = t.current_snapshot
    with pytest.raises(CommitConflict, match="deletion vector"):
        stale.rewrite_position_deletes()
    t.refresh()
    assert t.current_snapshot == head
    rows = _rows(t)
    result = t.rewrite_position_deletes()
    assert result.snapshot is not None
    referenced = [d["referenced_data_file"] for d in _deletes(t)]
    assert len(referenced) == len(set(referenced))
    assert _rows(t) == rows


def test_a_branch_and_snapshot_properties(tmp_path: Path) -> None:
    t = _table(tmp_path)
    main = t.current_snapshot
    t.create_branch("audit")
    result = t.rewrite_position_deletes(branch="audit", snapshot_properties={"job": "nightly"})
    assert t.current_snapshot == main and result.snapshot is not None
    assert t.refs["audit"].snapshot_id == result.snapshot.snapshot_id
    assert result.snapshot.summary is not None and result.snapshot.summary["job"] == "nightly"
    assert len(_deletes(t)) == 6  # main still has its six files


@pytest.mark.parametrize("version", [2, 3])
def test_random_histories_read_the_same_after_every_rewrite(tmp_path: Path,
                                                            version: int) -> None:
    """Seeded random appends, deletes (both modes), upgrades and both rewrites: every rewrite
    leaves the rows (and v3 lineage) as they were; after a delete rewrite a partition has one
    position delete file at most (v2), or only DVs, one per data file (v3)."""
    rng = random.Random(version)
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long, p string", format_version=version, partition_by="p",
        properties={MANIFEST_MERGE_ENABLED: "false"})
    next_id = 0
    for step in range(24):
        op = rng.choice(["append", "delete", "delete", "cow", "deletes", "manifests"])
        if step < 2 or op == "append":
            rows = [{"id": next_id + j, "p": rng.choice("abc")} for j in range(8)]
            next_id += 8
            t.append(rows)
        elif op in ("delete", "cow"):
            t.set_properties({WRITE_DELETE_MODE: "merge-on-read" if op == "delete"
                              else "copy-on-write"})
            picked = rng.sample(range(next_id), 3)
            t.delete(" or ".join(f"id = {i}" for i in picked))
        else:
            before = _rows(t)
            if op == "manifests":
                t.rewrite_manifests()
            else:
                t.rewrite_position_deletes()
                deletes = _deletes(t)
                if t.format_version >= 3:
                    assert {d["file_format"] for d in deletes} <= {"PUFFIN"}
                    referenced = [d["referenced_data_file"] for d in deletes]
                    assert len(referenced) == len(set(referenced))
                else:
                    parts = [d["partition"]["p"] for d in deletes]
                    assert len(parts) == len(set(parts))
            assert _rows(t) == before, (step, op)
        if version == 2 and step == 16:  # the append numbers every row (v3 row lineage)
            t.upgrade(3)
            t.append([{"id": next_id, "p": "a"}])
            next_id += 1


def test_result_cards_in_chinese(tmp_path: Path) -> None:
    """Both result cards read in Chinese with no English label left."""
    from icenb.table.commit.rewrite_manifests import RewriteManifestsResult
    from tests.display._zh import english_labels, has_cjk, visible_text

    t = _table(tmp_path)
    results = [t.rewrite_position_deletes(), RewriteManifestsResult(4, 1)]
    with icenb.set_options(language="zh"):
        for result in results:
            shown = render(result)
            for text, is_html in ((shown.text, False), (shown.html, True)):
                visible = visible_text(text, is_html=is_html)
                assert has_cjk(visible)
                assert english_labels(visible) == [], visible
