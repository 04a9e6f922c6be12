"""PartitionEvolution (issue 18): staged spec changes with the rule behind each refusal, the
transform preview (Appendix B's bucket values), where a row lands, the pruning lab's counts
against the planner's, commit and undo on v1, v2, v3 and v4 tables."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import icenb
from icenb.errors import IcebergError
from icenb.table import Table
from icenb.widgets import PartitionEvolution


def _table(root: Path, version: int) -> Table:
    t = icenb.warehouse(root).create_table(
        "db.t", "id int, ts timestamp, name string", partition_by=["day(ts)"],
        format_version=version)
    t.append([{"id": i, "ts": dt.datetime(2024, 1, 1 + i % 3, i % 24), "name": f"n{i}"}
              for i in range(30)])
    return t


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_add_commit_prune_and_undo(tmp_path: Path, version: int) -> None:
    t = _table(tmp_path, version)
    before = t.metadata
    pe = PartitionEvolution(t)
    pe.pending.add_field("bucket(16, id)")
    spec = pe.preview
    assert spec is not None and pe.problems == []
    assert spec.spec_id == before.default_spec_id + 1
    assert [f.field_id for f in spec.fields] == [1000, 1001]
    assert pe.last_partition_id == before.last_partition_id + 1 == 1001
    committed = pe.commit()
    assert committed == t.spec and t.metadata.default_spec_id == spec.spec_id
    t.append([{"id": i, "ts": dt.datetime(2024, 1, 1 + i % 3), "name": "x"}
              for i in range(30, 60)])
    # the pruning lab counts what the planner keeps, per spec
    for predicate in ("ts >= '2024-01-03T00:00:00'", "id = 34", "true", "name = 'x'"):
        p = pe.prune(predicate)
        plan = t.scan(predicate).plan()
        assert p.kept == plan.files_selected
        assert p.kept + p.pruned == t.scan().plan().files_selected
        by_spec: dict[int, int] = {}
        for sid in plan.files.column("partition_spec_id").to_pylist():
            by_spec[sid] = by_spec.get(sid, 0) + 1
        assert {s: v.kept for s, v in p.specs.items() if v.kept} == by_spec
    # files written under the old spec still prune by day
    old = pe.prune("ts >= '2024-01-03T00:00:00'")[0]
    assert old.files == 3 and old.kept == 1 and "ts_day" in old.projection
    pe.undo()
    assert t.metadata.default_spec_id == before.default_spec_id
    assert t.metadata.last_partition_id == 1001  # ids are never reused


def test_bucket_preview_is_appendix_b(tmp_path: Path) -> None:
    """Appendix B: the 32-bit hash of int 34 and long 34 is 2017239379."""
    t = _table(tmp_path, 2)
    pe = PartitionEvolution(t)
    pv = pe.transform_preview("bucket(16, id)", [34])
    assert pv.rows == ((34, 2017239379, 2017239379 % 16, "3"),)
    days = pe.transform_preview("day(ts)", ["2017-11-16T22:31:08"])
    assert days.rows[0][3] == "2017-11-16"
    sample = pe.transform_preview("truncate(2, name)")  # sample values from the table
    assert sample.rows and all(r[2] == r[0][:2] for r in sample.rows)
    pe.term.value = "bucket(16, id)"
    pe.samples.value = "34"
    assert "2017239379" in pe.transform_panel.value


def test_where_a_row_lands(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    pe = PartitionEvolution(t)
    row = {"id": 34, "ts": "2017-11-16T22:31:08", "name": "x"}
    assert pe.where(row) == "ts_day=2017-11-16"
    pe.pending.add_field("bucket(16, id)")
    assert pe.where(row) == "ts_day=2017-11-16/id_bucket_16=3"


def test_refused_changes_are_explained(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    location = t.metadata_location
    pe = PartitionEvolution(t)
    pe.pending.add_field("hour(name)")          # hour needs a timestamp
    pe.pending.add_field("day(ts)")             # already partitioned by day(ts)
    pe.pending.remove_field("nope")
    assert len(pe.problems) == 3
    assert pe.problems[0].rule.section == "Partition Transforms"
    assert all(p.rule.name in str(p) for p in pe.problems)
    assert pe.preview is None and pe.commit_button.disabled
    with pytest.raises(IcebergError):
        pe.commit()
    assert t.refresh().metadata_location == location


def test_v1_keeps_a_removed_field_as_void(tmp_path: Path) -> None:
    t = _table(tmp_path, 1)
    pe = PartitionEvolution(t)
    pe.pending.remove_field("ts_day")
    spec = pe.preview
    assert spec is not None and [str(f.transform) for f in spec.fields] == ["void"]
    assert "void" in pe.history.value
    t2 = _table(tmp_path / "v2", 2)
    pe2 = PartitionEvolution(t2)
    pe2.pending.remove_field("ts_day")
    assert pe2.preview is not None and pe2.preview.fields == ()
