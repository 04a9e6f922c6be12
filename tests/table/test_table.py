"""Read-only tables: ``icenb.open``, ``Table.scan`` and ``Table.at`` on tables written by Java.

Spec: "Snapshot References" (branches and tags), Appendix F "Point in Time Reads".
"""

from __future__ import annotations

import importlib.util
import itertools
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import (
    ExpressionParseError,
    IcebergError,
    NoSuchSnapshot,
    NotFound,
    ValidationError,
)
from icenb.io.file_io import FileIO
from icenb.table import Table, plan_files
from icenb.table.scan.read import read_plan
from tests.reference_fixtures import JavaTables

REFS = "db.v2_refs"
EVOLVED = "db.v2_schema_evolution"


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=repr)


def _ms(t: int) -> datetime:
    return datetime.fromtimestamp(t / 1000, tz=timezone.utc)


@pytest.fixture(scope="module")
def refs_table(java_tables: JavaTables) -> Table:
    return icenb.open(java_tables.location(REFS))


@pytest.fixture(scope="module")
def evolved(java_tables: JavaTables) -> Table:
    return icenb.open(java_tables.location(EVOLVED))


def test_open_by_directory_and_by_metadata_file(java_tables: JavaTables) -> None:
    latest = java_tables.latest(REFS)
    by_dir = icenb.open(java_tables.location(REFS))
    by_file = icenb.open(str(latest.path))
    assert by_dir.metadata_location == by_file.metadata_location == str(latest.path)
    assert by_dir.metadata == by_file.metadata
    assert by_dir.location == by_file.location
    assert by_dir.current_snapshot is not None
    assert by_dir.current_snapshot.snapshot_id == by_dir.refs["main"].snapshot_id
    assert len(by_dir.snapshots) == 6
    assert [e.snapshot_id for e in by_dir.history] == \
        [e.snapshot_id for e in by_dir.metadata.snapshot_log]
    assert by_dir.schema.find_field("v").field_id == 2
    assert by_dir.spec == by_dir.metadata.spec
    assert by_dir.sort_order == by_dir.metadata.sort_order
    assert by_dir.properties == by_dir.metadata.properties


def test_open_an_older_metadata_file_sees_that_state(java_tables: JavaTables) -> None:
    files = sorted((f for f in java_tables.metadata_files() if f.name == REFS),
                   key=lambda f: f.version)
    first = icenb.open(files[0].path)
    assert first.metadata_location == str(files[0].path)
    assert len(first.snapshots) <= len(icenb.open(files[-1].path).snapshots)


@pytest.mark.parametrize("ref", ["main", "dev", "audit", "staging", "old", "release-1",
                                 "forever"])
def test_at_ref_reads_the_ref_snapshot(refs_table: Table, ref: str) -> None:
    snap = refs_table.snapshot(refs_table.refs[ref].snapshot_id)
    scan = refs_table.at(ref)
    assert scan.snapshot_id == snap.snapshot_id
    data = scan.to_arrow()
    assert data.num_rows == int(snap.summary["total-records"])
    assert scan.count() == data.num_rows
    plan = plan_files(refs_table.io, refs_table.metadata, snapshot_id=snap.snapshot_id)
    assert _rows(data) == _rows(read_plan(refs_table.io, plan))


def test_branches_and_tags_differ(refs_table: Table) -> None:
    assert _rows(refs_table.at("dev").to_arrow()) != _rows(refs_table.at("main").to_arrow())
    assert refs_table.at("old").to_arrow().to_pylist() == \
        refs_table.scan(ref="release-1").to_arrow().to_pylist()
    assert _rows(refs_table.scan().to_arrow()) == _rows(refs_table.at("main").to_arrow())


def test_at_snapshot_id(refs_table: Table) -> None:
    for snap in refs_table.snapshots:
        scan = refs_table.at(snap.snapshot_id)
        assert scan.snapshot_id == snap.snapshot_id
        assert scan.count() == int(snap.summary["total-records"])


def test_at_time_uses_the_snapshot_log(refs_table: Table) -> None:
    log = refs_table.history
    assert len(log) >= 2
    for entry, following in itertools.pairwise(log):
        between = entry.timestamp_ms + (following.timestamp_ms - entry.timestamp_ms) // 2
        assert between < following.timestamp_ms
        when = _ms(between)
        assert refs_table.at(when).snapshot_id == entry.snapshot_id
        assert refs_table.at(when.replace(tzinfo=None)).snapshot_id == entry.snapshot_id
        assert refs_table.at(when.isoformat()).snapshot_id == entry.snapshot_id
        assert refs_table.at(timestamp_ms=between).snapshot_id == entry.snapshot_id
        other_zone = when.astimezone(timezone(timedelta(hours=5)))
        assert refs_table.at(other_zone).snapshot_id == entry.snapshot_id
    assert refs_table.at(timestamp_ms=log[-1].timestamp_ms).snapshot_id == log[-1].snapshot_id
    assert refs_table.at(_ms(log[0].timestamp_ms)).snapshot_id == log[0].snapshot_id


def test_at_time_before_the_first_snapshot(refs_table: Table) -> None:
    first = refs_table.history[0].timestamp_ms
    with pytest.raises(NoSuchSnapshot, match=str(first - 1)):
        refs_table.at(timestamp_ms=first - 1)
    with pytest.raises(NoSuchSnapshot):
        refs_table.at(_ms(first - 1000))


def test_snapshot_read_uses_its_schema_branch_read_the_current(evolved: Table) -> None:
    first = evolved.snapshots[0]
    last = evolved.current_snapshot
    assert last is not None and first.schema_id != evolved.schema.schema_id
    # Field 3 was renamed name -> full_name; field 26 ("tags", string) was added after the
    # last snapshot; field 7 (the first "tags", a list) was dropped.
    old = evolved.at(first.snapshot_id)
    assert old.schema.schema_id == first.schema_id
    assert "name" in old.to_arrow().column_names
    assert "full_name" not in old.to_arrow().column_names
    by_time = evolved.at(_ms(evolved.history[0].timestamp_ms))
    assert by_time.schema.schema_id == first.schema_id

    at_id = evolved.at(last.snapshot_id).to_arrow()
    assert "full_name" in at_id.column_names and "tags" not in at_id.column_names

    branch = evolved.at("main").to_arrow()
    assert branch.schema == evolved.scan().to_arrow().schema
    assert "full_name" in branch.column_names and "name" not in branch.column_names
    assert branch.column("tags").type == pa.string()
    assert branch.column("tags").null_count == branch.num_rows
    # The current names work in a branch filter, the old names in a snapshot filter.
    assert evolved.scan(ref="main").filter("full_name = 'one'").count() == 1
    assert old.filter("name = 'one'").count() == 1
    with pytest.raises(ValidationError):
        old.filter("full_name = 'one'")


def test_filter_and_select(evolved: Table) -> None:
    scan = evolved.scan().filter("id < 3").select("id", "full_name")
    assert [f.name for f in scan.schema.fields] == ["id", "full_name"]
    data = scan.to_arrow()
    assert data.column_names == ["id", "full_name"]
    assert sorted(data.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "full_name": "one"}, {"id": 2, "full_name": "two"}]
    assert scan.count() == 2
    both = evolved.scan(filter="id > 1", columns=["full_name"]).filter("id < 3")
    assert both.to_arrow().to_pylist() == [{"full_name": "two"}]
    assert evolved.scan(filter="ID = 1", case_sensitive=False).count() == 1


def test_scan_is_immutable(evolved: Table) -> None:
    base = evolved.scan()
    narrowed = base.filter("id = 1").select("id")
    assert narrowed is not base
    assert base.columns is None and str(base.row_filter) == "true"
    assert base.count() == 3 and narrowed.count() == 1


def test_count_matches_rows(refs_table: Table, evolved: Table) -> None:
    assert evolved.current_snapshot is not None
    assert evolved.scan().count() == int(evolved.current_snapshot.summary["total-records"])
    for expr in ("true", "id > 1", "id = 2", "full_name is null", "false"):
        scan = evolved.scan(filter=expr)
        assert scan.count() == scan.to_arrow().num_rows, expr
    assert refs_table.scan(filter="v = 'main'").count() == 1


def test_count_applies_deletes(java_tables: JavaTables) -> None:
    table = icenb.open(java_tables.location("db.v2_merge_on_read"))
    assert table.current_snapshot is not None
    expected = int(table.current_snapshot.summary["total-records"]) - \
        int(table.current_snapshot.summary.get("total-position-deletes", "0"))
    scan = table.scan()
    assert int(table.current_snapshot.summary["total-position-deletes"]) > 0
    assert scan.count() == scan.to_arrow().num_rows == expected


def test_to_pandas(evolved: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pandas")
    frame = evolved.scan().select("id").to_pandas()
    assert sorted(frame["id"].tolist()) == [1, 2, 3_000_000_000]
    real = importlib.util.find_spec

    def no_pandas(name: str, *args: Any) -> Any:
        return None if name == "pandas" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", no_pandas)
    with pytest.raises(IcebergError, match="pandas"):
        evolved.scan().to_pandas()


def test_bad_inputs(refs_table: Table) -> None:
    with pytest.raises(NoSuchSnapshot, match="no-such-branch"):
        refs_table.at("no-such-branch")
    with pytest.raises(NoSuchSnapshot, match="nope"):
        refs_table.scan(ref="nope")
    with pytest.raises(NoSuchSnapshot, match="12345"):
        refs_table.at(12345)
    with pytest.raises(ExpressionParseError):
        refs_table.scan("id >")
    with pytest.raises(ExpressionParseError):
        refs_table.scan().filter("id = = 1")
    with pytest.raises(ValidationError, match="missing_column"):
        refs_table.scan().filter("missing_column = 1")
    with pytest.raises(ValidationError, match="missing_column"):
        refs_table.scan().select("missing_column")
    with pytest.raises(ValidationError):
        refs_table.at()
    with pytest.raises(ValidationError):
        refs_table.at(True)
    with pytest.raises(ValidationError):
        refs_table.at(1, timestamp_ms=1)
    with pytest.raises(ValidationError):
        refs_table.scan(snapshot_id=1, ref="main")
    with pytest.raises(ValidationError):
        icenb.open(refs_table.location, io=FileIO(), properties={})


def test_repr_does_no_io(java_tables: JavaTables, monkeypatch: pytest.MonkeyPatch) -> None:
    table = icenb.open(java_tables.location(REFS))
    scan = table.at("dev").filter("id > 1").select("v")

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("I/O during repr")

    for name in ("new_input", "new_output", "stat", "exists", "list_dir", "resolve"):
        monkeypatch.setattr(FileIO, name, fail)
    text = repr(table)
    assert "v2_refs" in text and "snapshots=6" in text and len(text) < 400
    scan_text = repr(scan)
    assert "id > 1" in scan_text and str(scan.snapshot_id) in scan_text
    assert [f.name for f in scan.schema.fields] == ["v"]
    with pytest.raises(AssertionError, match="I/O"):
        scan.to_arrow()


class _Expired(FileIO):
    """A FileIO on which some files have been deleted (expired)."""

    def __init__(self, gone: set[str], where: Path) -> None:
        super().__init__()
        self.gone = gone
        self.where = where

    def resolve(self, location: str) -> tuple[Any, str]:
        if location in self.gone:
            location = str(self.where / "deleted")
        return super().resolve(location)


def test_expired_files_raise_not_found(java_tables: JavaTables, tmp_path: Path) -> None:
    table = icenb.open(java_tables.location(REFS))
    old = table.snapshot(table.refs["old"].snapshot_id)
    assert old.manifest_list is not None
    io = _Expired({old.manifest_list}, tmp_path)
    expired = icenb.open(java_tables.location(REFS), io=io)
    with pytest.raises(NotFound, match=Path(old.manifest_list).name):
        expired.at("old").to_arrow()
    with pytest.raises(NotFound):
        expired.at("old").count()
    assert expired.at("main").count() == 3  # other snapshots still read

    data_file = table.at("old").plan().files.column("file_path")[0].as_py()
    io_data = _Expired({data_file}, tmp_path)
    with pytest.raises(NotFound, match=Path(data_file).name):
        icenb.open(java_tables.location(REFS), io=io_data).at("old").to_arrow()


def test_refresh_finds_the_new_metadata_file(java_tables: JavaTables, tmp_path: Path) -> None:
    src = java_tables.location(REFS)
    copy = tmp_path / "v2_refs"
    shutil.copytree(src / "metadata", copy / "metadata")
    files = sorted((f.version, f.path) for f in java_tables.metadata_files()
                   if f.name == REFS)
    newest_version, newest = files[-1]
    held = tmp_path / "held.json"
    shutil.move(str(copy / "metadata" / newest.name), held)
    hint = copy / "metadata" / "version-hint.text"
    hint.write_text(str(newest_version - 1))
    table = icenb.open(copy)
    assert table.metadata_location is not None
    assert table.metadata_location.endswith(f"v{newest_version - 1}.metadata.json")
    shutil.move(str(held), copy / "metadata" / newest.name)
    hint.write_text(str(newest_version))
    assert table.refresh() is table
    assert table.metadata_location.endswith(f"v{newest_version}.metadata.json")

    by_file = icenb.open(newest)
    assert by_file.refresh().metadata_location == str(newest)


def test_top_level_exports() -> None:
    # icenb.open opens a table or a view (issue 6): the location decides which
    assert icenb.open is icenb.table.open_location
    assert icenb.Table is Table and icenb.View is icenb.table.View
    assert icenb.__version__
    assert callable(open) and open is not icenb.open  # the builtin is untouched


def test_planning_again_reads_no_file(java_tables: JavaTables) -> None:
    table = icenb.open(java_tables.location("db.v2_partition_evolution"))
    opened: list[str] = []
    table.io.on_open = opened.append
    scan = table.scan(filter="n > 2")
    first = scan.plan()  # cold (or already warm from an earlier test)
    opened.clear()
    again = table.scan(filter="n > 2").plan()
    assert opened == []
    assert again.files.column("file_path").to_pylist() == \
        first.files.column("file_path").to_pylist()


def test_plans_carry_column_stats_only_when_asked(java_tables: JavaTables) -> None:
    table = icenb.open(java_tables.location("db.v2_partition_evolution"))
    assert all(t.data_file.lower_bounds is None for t in table.scan().plan().tasks)
    assert all(t.data_file.lower_bounds for t in table.scan().plan(column_stats=True).tasks)
    # Metrics a filter needs still prune (n is not a partition source in every spec).
    lean = table.scan(filter="n > 2").plan()
    full = table.scan(filter="n > 2").plan(column_stats=True)
    assert lean.files_selected < lean.files_considered
    assert lean.files.column("file_path").to_pylist() == \
        full.files.column("file_path").to_pylist()


def test_a_table_reads_its_current_rows_directly(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, s string")
    assert t.to_arrow().num_rows == 0
    t.append([{"id": 1, "s": "a"}, {"id": 2, "s": "b"}])
    assert t.to_arrow().to_pylist() == t.scan().to_arrow().to_pylist()
    assert sorted(t.to_pandas()["id"].tolist()) == [1, 2]
