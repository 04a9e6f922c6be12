"""Data file compaction (``Table.rewrite_data_files``): one ``replace`` snapshot that changes
no row (spec: "Snapshots", operation ``replace``), planned as Iceberg Java's bin-pack planner,
validated against concurrent commits ("Commit Conflict Resolution and Retry"), keeping v3 row
lineage ("Row Lineage")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import CommitConflict, UnsupportedVersion, ValidationError
from icenb.table import Table
from icenb.table.commit.rewrite_data_files import (
    RewriteDataFilesResult,
    execute_rewrite,
    expected_output_files,
    input_split_size,
    plan_rewrite,
)
from icenb.table.warehouse import Warehouse

DDL = "id long not null, part int, s string"
LINEAGE = ["_row_id", "_last_updated_sequence_number"]


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return icenb.warehouse(tmp_path / "wh", catalog="filesystem")


def _table(wh: Warehouse, version: int = 2, *, appends: int = 6, name: str = "db.t",
           partition_by: str | None = "part", **props: str) -> Table:
    t = wh.create_table(name, DDL, partition_by=partition_by, format_version=version,
                        properties={"write.delete.mode": "merge-on-read", **props})
    for i in range(appends):
        t.append([{"id": i * 10 + j, "part": j % 2, "s": f"r{i}-{j}"} for j in range(10)])
    return t


def _rows(t: Table, columns: list[str] | None = None) -> list[tuple[Any, ...]]:
    cols = columns or ["id", "part", "s"]
    return sorted(tuple(r[c] for c in cols)
                  for r in t.scan(columns=cols).to_arrow().to_pylist())


def _files(t: Table) -> list[dict[str, Any]]:
    return list(t.inspect.data_files().to_pylist())


def _data_files_on_disk(t: Table) -> set[str]:
    return {str(p) for p in Path(t.location.removeprefix("file:"), "data").rglob("*.parquet")}


# --------------------------------------------------------------------------- bin-pack


@pytest.mark.parametrize("version", [1, 2, 3])
def test_small_files_are_merged_per_partition(wh: Warehouse, version: int) -> None:
    t = _table(wh, version)
    rows = _rows(t)
    assert len(_files(t)) == 12
    before = t.current_snapshot
    result = t.rewrite_data_files()
    assert isinstance(result, RewriteDataFilesResult) and result.snapshot is not None
    # one file per partition, the same rows
    files = _files(t)
    assert sorted(f["partition"]["part"] for f in files) == [0, 1]
    assert _rows(t) == rows
    assert (result.rewritten_data_files_count, result.added_data_files_count) == (12, 2)
    assert result.rewritten_rows_count == 60 and result.groups_count == 2
    assert result.rewritten_bytes_count == sum(
        f["file_size_in_bytes"] for f in t.inspect.data_files(before.snapshot_id).to_pylist())
    snap = t.current_snapshot
    assert snap is not None and snap.summary is not None and before is not None
    assert snap.parent_snapshot_id == before.snapshot_id
    assert str(snap.summary.operation) == "replace"
    assert snap.summary["added-data-files"] == "2"
    assert snap.summary["deleted-data-files"] == "12"
    assert snap.summary["total-records"] == "60"
    assert snap.summary["total-data-files"] == "2"
    # the old snapshot still reads its files (time travel)
    assert len(t.inspect.data_files(before.snapshot_id)) == 12


def test_min_input_files_decides_whether_a_partition_is_rewritten(wh: Warehouse) -> None:
    t = _table(wh, appends=3)  # 3 small files per partition
    assert t.rewrite_data_files().snapshot is None  # Java's default: 5 files
    assert len(_files(t)) == 6
    result = t.rewrite_data_files(min_input_files=3)
    assert result.rewritten_data_files_count == 6 and len(_files(t)) == 2


def test_filter_limits_the_rewrite_to_matching_partitions(wh: Warehouse) -> None:
    t = _table(wh)
    rows = _rows(t)
    result = t.rewrite_data_files("part = 0")
    assert result.rewritten_data_files_count == 6
    parts = sorted(f["partition"]["part"] for f in _files(t))
    assert parts == [0] + [1] * 6
    assert _rows(t) == rows


def test_target_size_splits_the_output(wh: Warehouse) -> None:
    t = wh.create_table("db.big", DDL)
    for i in range(8):
        t.append([{"id": i * 4000 + j, "part": 0, "s": f"{(i * 4000 + j) * 7919:x}" * 8}
                  for j in range(4000)])
    size = sum(f["file_size_in_bytes"] for f in _files(t))
    rows = _rows(t)
    # a target of about a quarter of the data: several files instead of 8 (or 1)
    result = t.rewrite_data_files(target_file_size_bytes=size // 4, rewrite_all=True)
    assert 1 < result.added_data_files_count < 8
    assert _rows(t) == rows


MIB = 1024 * 1024


@pytest.mark.parametrize(("target", "input_bytes", "files", "split"), [
    (100, 50, 1, 140),       # less than the target: one file
    (100, 1010, 10, 140),    # a 10-byte rest spread: 101 bytes a file is within 10%
    (100, 1080, 11, 140),    # an 80-byte rest is no small file (> 75): a file of its own
    (100, 1150, 11, 140),    # spreading 50 bytes would make 115-byte files: its own file
    (512 * MIB, 1229 * MIB, 3, 512 * MIB),   # 205 MiB rest, 614 MiB files too large: 3
    (512 * MIB, 1100 * MIB, 2, 550 * MIB + 5 * 1024),  # 76 MiB spread: 2 files of 550
])
def test_output_files_and_split_size_as_java(wh: Warehouse, target: int, input_bytes: int,
                                             files: int, split: int) -> None:
    """Java's ``expectedOutputFiles`` and ``inputSplitSize`` (the group over its files plus
    5 KiB, at least the target, at most the write size: target + (180% - target) / 2)."""
    t = _table(wh, appends=1)
    plan = plan_rewrite(t.io, t.metadata, target_file_size_bytes=target)
    assert plan.min_file_size_bytes == int(target * 0.75)
    assert plan.write_file_size_bytes == int(target * 1.4)
    assert expected_output_files(plan, input_bytes) == files
    assert input_split_size(plan, input_bytes) == split


def test_nothing_to_do_commits_nothing(wh: Warehouse) -> None:
    empty = wh.create_table("db.empty", DDL)
    result = empty.rewrite_data_files()
    assert result.snapshot is None and result.rewritten_data_files_count == 0
    t = _table(wh)
    t.rewrite_data_files()
    history = [s.snapshot_id for s in t.snapshots]
    again = t.rewrite_data_files()
    assert again.snapshot is None and again.added_data_files_count == 0
    assert [s.snapshot_id for s in t.snapshots] == history


def test_files_of_an_older_spec_are_rewritten_into_the_current_one(wh: Warehouse) -> None:
    t = _table(wh, partition_by=None, appends=3)
    with t.update_spec() as u:
        u.add_field("part")
    t.append([{"id": 100 + j, "part": j % 2, "s": "new"} for j in range(4)])
    rows = _rows(t)
    result = t.rewrite_data_files(min_input_files=2)
    # the 3 unpartitioned files are one group, split by the new spec; the new files are
    # alone in their partitions (one file is no group to rewrite)
    assert result.rewritten_data_files_count == 3 and result.added_data_files_count == 2
    files = _files(t)
    assert {f["spec_id"] for f in files} == {t.metadata.spec.spec_id}
    assert sorted(f["partition"]["part"] for f in files) == [0, 0, 1, 1]
    assert _rows(t) == rows


# --------------------------------------------------------------------------- deletes


@pytest.mark.parametrize("version", [2, 3])
def test_deleted_rows_stay_deleted_and_position_deletes_go(wh: Warehouse,
                                                          version: int) -> None:
    t = _table(wh, version)
    t.delete("id IN (3, 12, 41)")
    rows = _rows(t)
    assert len(rows) == 57
    deletes = sum(1 for f in t.inspect.delete_files().to_pylist())
    assert deletes > 0
    result = t.rewrite_data_files()
    assert _rows(t) == rows
    assert result.removed_delete_files_count == deletes
    assert len(t.inspect.delete_files()) == 0
    assert sum(f["record_count"] for f in _files(t)) == 57
    snap = t.current_snapshot
    assert snap is not None and snap.summary is not None
    key = "removed-dvs" if version >= 3 else "removed-position-delete-files"
    assert snap.summary[key] == str(deletes)


def test_equality_deletes_are_applied(wh: Warehouse) -> None:
    t = _table(wh)
    t.delete_by_key([{"id": 5, "part": 1}, {"id": 22, "part": 0}], on=["id", "part"])
    t.append([{"id": 1000, "part": 0, "s": "late"}])
    rows = _rows(t)
    assert 5 not in {r[0] for r in rows} and len(rows) == 59
    t.rewrite_data_files()
    assert _rows(t) == rows
    assert sum(f["record_count"] for f in _files(t)) == 59


def test_a_deleted_heavy_file_alone_is_rewritten(wh: Warehouse) -> None:
    """Java's delete-ratio rule: a file whose file-scoped deletes remove >= 30% of its rows is
    rewritten even alone; ``delete_file_threshold`` (Java's ``delete-file-threshold``) picks
    files by their number of delete files."""
    t = _table(wh, 3, appends=1)
    t.delete("id = 0")  # 1 of 5 rows of the part=0 file
    assert t.rewrite_data_files().snapshot is None
    t.delete("id IN (2, 4)")
    result = t.rewrite_data_files()
    assert result.rewritten_data_files_count == 1 and result.removed_delete_files_count == 1
    t.delete("id = 1")
    assert t.rewrite_data_files(delete_file_threshold=1).rewritten_data_files_count == 1
    assert sorted(r[0] for r in _rows(t)) == [3, 5, 6, 7, 8, 9]


# --------------------------------------------------------------------------- sort


def test_sort_strategy_writes_each_partition_in_the_order(wh: Warehouse) -> None:
    t = _table(wh)
    rows = _rows(t)
    result = t.rewrite_data_files(strategy="sort", sort_order=["id desc"])
    assert result.added_data_files_count == 2 and _rows(t) == rows
    for f in _files(t):
        ids = pq.read_table(f["file_path"].removeprefix("file:"), columns=["id"]).column(0)
        assert ids.to_pylist() == sorted(ids.to_pylist(), reverse=True)
        assert f["sort_order_id"] is None  # not one of the table's orders


def test_sort_strategy_defaults_to_the_table_order(wh: Warehouse) -> None:
    t = _table(wh)
    t.replace_sort_order("s desc")
    order_id = t.sort_order.order_id
    t.rewrite_data_files(strategy="sort", rewrite_all=True)
    for f in _files(t):
        s = pq.read_table(f["file_path"].removeprefix("file:"), columns=["s"]).column(0)
        assert s.to_pylist() == sorted(s.to_pylist(), reverse=True)
        assert f["sort_order_id"] == order_id


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kwargs", "field", "value"), [
    ({"strategy": "zorder"}, "strategy", "zorder"),
    ({"min_input_files": 0}, "min_input_files", 0),
    ({"target_file_size_bytes": -1}, "target_file_size_bytes", -1),
    ({"target_file_size_bytes": True}, "target_file_size_bytes", True),
    ({"sort_order": "id"}, "sort_order", "id"),
    ({"strategy": "sort"}, "sort_order", None),
    ({"rewrite_all": "yes"}, "rewrite_all", "yes"),
    ({"delete_file_threshold": -2}, "delete_file_threshold", -2),
])
def test_bad_input_names_field_and_value(wh: Warehouse, kwargs: dict[str, Any], field: str,
                                         value: Any) -> None:
    t = _table(wh, appends=2)
    history = [s.snapshot_id for s in t.snapshots]
    with pytest.raises(ValidationError) as err:
        t.rewrite_data_files(**kwargs)
    assert err.value.field == field and err.value.value == value
    assert [s.snapshot_id for s in t.snapshots] == history


def test_bad_filter_and_tag_are_refused(wh: Warehouse) -> None:
    t = _table(wh, appends=2)
    with pytest.raises(ValidationError, match="nope"):
        t.rewrite_data_files("nope = 1")
    t.create_tag("v1")
    with pytest.raises(ValidationError) as err:
        t.rewrite_data_files(branch="v1", rewrite_all=True)
    assert err.value.field == "branch" and err.value.value == "v1"


def test_v4_is_refused(wh: Warehouse) -> None:
    t = wh.create_table("db.v4", DDL, format_version=4)
    with pytest.raises(UnsupportedVersion) as err:
        t.rewrite_data_files()
    assert err.value.field == "format-version" and err.value.value == 4


# --------------------------------------------------------------------------- conflicts


@pytest.mark.parametrize("change", ["copy-on-write", "merge-on-read"])
def test_a_concurrent_delete_of_rewritten_rows_is_refused(wh: Warehouse, change: str) -> None:
    t = _table(wh)
    plan = plan_rewrite(t.io, t.metadata)
    written_before = _data_files_on_disk(t)
    other = wh.table("db.t")
    other.delete("id = 11", mode=change)  # removes or adds deletes for a rewritten file
    with pytest.raises(CommitConflict):
        execute_rewrite(t, plan)
    # the table is as the delete left it; nothing the rewrite wrote is left behind
    assert t.current_snapshot == wh.table("db.t").current_snapshot == other.current_snapshot
    assert 11 not in {r[0] for r in _rows(t)} and len(_rows(t)) == 59
    assert _data_files_on_disk(t) == written_before | _data_files_on_disk(other)


def test_a_concurrent_append_is_kept(wh: Warehouse) -> None:
    t = _table(wh)
    plan = plan_rewrite(t.io, t.metadata)
    wh.table("db.t").append([{"id": 500, "part": 0, "s": "late"}])
    result = execute_rewrite(t, plan)
    assert result.rewritten_data_files_count == 12
    assert len(_rows(t)) == 61 and len(_files(t)) == 3


def test_a_concurrent_equality_delete_still_applies(wh: Warehouse) -> None:
    """The new files take the starting snapshot's sequence number, so an equality delete
    committed while the rewrite ran still deletes their rows (and does not conflict)."""
    t = _table(wh)
    plan = plan_rewrite(t.io, t.metadata)
    start = t.current_snapshot
    assert start is not None
    wh.table("db.t").delete_by_key([{"id": 7, "part": 1}], on=["id", "part"])
    execute_rewrite(t, plan)
    assert 7 not in {r[0] for r in _rows(t)} and len(_rows(t)) == 59
    seqs = {e["sequence_number"] for e in t.inspect.entries().to_pylist()
            if e["status"] == 1 and e["data_file"]["content"] == 0}
    assert seqs == {start.sequence_number}


def test_a_concurrent_equality_delete_is_kept_after_a_later_append(wh: Warehouse) -> None:
    """A concurrent equality delete stays live when a later append makes every old data file
    newer than it: the rewritten files take the starting sequence number, older than the
    delete, so it still applies to them (spec: "Scan Planning", equality deletes apply to data
    files of a lower data sequence number)."""
    t = _table(wh)
    plan = plan_rewrite(t.io, t.metadata)
    wh.table("db.t").delete_by_key([{"id": 7, "part": 1}], on=["id", "part"])
    wh.table("db.t").append([{"id": 1000, "part": 5, "s": "late"}])
    result = execute_rewrite(t, plan)
    assert result.removed_delete_files_count == 0
    ids = {r[0] for r in _rows(t)}
    assert 7 not in ids and len(ids) == 60
    assert t.inspect.files().num_rows - len(_files(t)) == 1  # the equality delete file


def test_two_compactions_of_the_same_files_one_wins(wh: Warehouse) -> None:
    t = _table(wh)
    first, second = wh.table("db.t"), wh.table("db.t")
    plan = plan_rewrite(second.io, second.metadata)
    first.rewrite_data_files()
    with pytest.raises(CommitConflict):
        execute_rewrite(second, plan)
    assert len(_files(wh.table("db.t"))) == 2 and len(_rows(t)) == 60


def test_a_branch_is_compacted_alone(wh: Warehouse) -> None:
    t = _table(wh, appends=3)
    t.create_branch("dev")
    for i in range(3, 6):
        t.append([{"id": i * 10 + j, "part": j % 2, "s": "dev"} for j in range(10)],
                 branch="dev")
    main = t.current_snapshot
    result = t.rewrite_data_files(branch="dev", snapshot_properties={"app": "compactor"})
    assert result.snapshot is not None and result.rewritten_data_files_count == 12
    assert result.snapshot.summary is not None and result.snapshot.summary["app"] == "compactor"
    assert t.current_snapshot == main  # main keeps its 6 files
    assert len(_files(t)) == 6
    dev = t.metadata.snapshot_for_ref("dev")
    assert dev is not None and dev.snapshot_id == result.snapshot.snapshot_id
    assert len(t.inspect.data_files(dev.snapshot_id)) == 2


# --------------------------------------------------------------------------- lineage


def test_v3_rows_keep_their_lineage(wh: Warehouse) -> None:
    t = _table(wh, 3)
    t.update({"s": "changed"}, "id = 4")
    t.delete("id = 9")
    cols = ["id", "s", *LINEAGE]
    before = _rows(t, cols)
    next_row_id = t.metadata.next_row_id
    result = t.rewrite_data_files()
    assert result.snapshot is not None
    assert _rows(t, cols) == before
    for f in _files(t):  # the new files store both lineage columns
        names = pq.read_schema(f["file_path"].removeprefix("file:")).names
        assert set(LINEAGE) <= set(names)
    # the replace snapshot assigns ids to its manifests' rows as Java's manifest list writer
    # does (the new rows keep their stored ids; tests/table/commit/test_rewrite_files_java.py)
    assert t.metadata.next_row_id == next_row_id + result.rewritten_rows_count


def test_rows_of_an_upgraded_table_get_ids_once(wh: Warehouse) -> None:
    """Right after the upgrade to v3 no row has lineage yet ("Row Lineage for Upgraded
    Tables"): the compaction writes the rows it moves as rows that inherit fresh ids, and the
    files it keeps get theirs from its manifest list; every id is unique."""
    t = _table(wh, 2, appends=3)
    t.append([{"id": 100 + j, "part": 0, "s": "big"} for j in range(300)])  # not compacted
    t.upgrade(3)
    cols = ["id", *LINEAGE]
    assert {r[1] for r in _rows(t, cols)} == {None}
    result = t.rewrite_data_files("part = 1", min_input_files=2)
    assert result.rewritten_data_files_count == 3  # part 0's 4 files are kept
    ids = [r[1] for r in _rows(t, cols)]
    assert None not in ids and len(set(ids)) == len(ids) == 330
    snap = t.current_snapshot
    assert snap is not None and snap.first_row_id == 0
    assert max(ids) < t.metadata.next_row_id


# --------------------------------------------------------------------------- display


def test_result_shows_counts_in_text_and_html(wh: Warehouse) -> None:
    t = _table(wh)
    result = t.rewrite_data_files()
    text = repr(result)
    assert "rewritten_data_files_count=12" in text and "added_data_files_count=2" in text
    bundle = result._repr_mimebundle_()  # type: ignore[attr-defined]
    html = bundle["text/html"]
    assert "Rewrite data files" in html and "12" in html
    assert "Rewrite data files" in bundle["text/plain"]
    empty = RewriteDataFilesResult(0, 0, 0, 0, None)
    assert "nothing to rewrite" in empty._repr_mimebundle_()["text/plain"]  # type: ignore[attr-defined]
