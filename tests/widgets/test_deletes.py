"""Deletes (issue 18): a predicate checked as typed, copy-on-write / merge-on-read / equality
deletes on a scratch branch, dry run from metadata, exact preview, the effect of the commit,
publish, compare modes and undo, on v1, v2, v3 and v4 tables."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import IcebergError
from icenb.table import Table
from icenb.widgets import Deletes


def _table(root: Path, version: int) -> Table:
    t = icenb.warehouse(root).create_table("db.t", "id long, v string",
                                           format_version=version)
    t.append([{"id": i, "v": str(i)} for i in range(30)])
    t.append([{"id": i, "v": str(i)} for i in range(30, 60)])
    return t


def _kinds(d: Deletes) -> set[str]:
    assert d.effect is not None
    return {k for _p, k, _n, _b in d.effect.added}


@pytest.mark.parametrize("version", [2, 3, 4])
def test_merge_on_read_on_a_scratch_branch_then_publish(tmp_path: Path, version: int) -> None:
    t = _table(tmp_path, version)
    main = t.refs["main"].snapshot_id
    d = Deletes(t, "id < 10")
    assert d.branch == "icenb-try-1" and d.mode == "merge-on-read"
    dry = d.dry_run()
    assert (len(dry.candidates), len(dry.whole), dry.files_pruned) == (1, 0, 1)
    assert dry.rows_at_least <= 10 <= dry.rows_at_most
    preview = d.preview()
    assert preview.count == 10 and list(preview.files.values()) == [10]
    sid = d.commit()
    assert t.refs["main"].snapshot_id == main  # main untouched until publish
    assert t.refs["icenb-try-1"].snapshot_id == sid
    assert d.graph.selected == d.graph.node_for(snapshot_id=sid)
    expected = "position deletes" if version == 2 else "deletion vector"
    assert _kinds(d) == {expected}
    assert d.effect is not None
    assert sum(n for _p, _k, n, _b in d.effect.added) == preview.count  # DV cardinality
    assert d.effect.delete_files_to_apply == 1 and d.effect.live_rows == 50
    assert t.scan(ref="icenb-try-1").count() == 50 and t.scan().count() == 60
    assert d.publish() == sid
    assert t.refs["main"].snapshot_id == sid and t.scan().count() == 50


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_copy_on_write_rewrites_and_undo_drops_the_branch(tmp_path: Path, version: int) -> None:
    t = _table(tmp_path, version)
    d = Deletes(t, "id < 10 or id >= 30", mode="copy-on-write")
    dry = d.dry_run()
    assert len(dry.candidates) == 2 and len(dry.whole) == 1  # ids 30..59 match whole
    d.commit()
    assert d.effect is not None
    removed = {k for _p, k, _n, _b in d.effect.removed}
    assert removed == {"data"} and len(d.effect.removed) == 2
    assert [k for _p, k, _n, _b in d.effect.added] == ["data"]  # the rewritten file
    assert d.effect.delete_files_to_apply == 0
    assert t.scan(ref=d.branch).count() == 20
    d.undo()
    assert d.branch not in t.refs and t.scan().count() == 60


def test_v1_refuses_delete_files(tmp_path: Path) -> None:
    t = _table(tmp_path, 1)
    d = Deletes(t)
    assert d.mode == "copy-on-write"
    with pytest.raises(IcebergError, match="only copy-on-write"):
        d.mode = "merge-on-read"
    d.mode_input.value = "merge-on-read"  # the form shows the error instead
    assert d.error.error is not None and d.mode == "copy-on-write"


def test_equality_deletes_by_key(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    d = Deletes(t, "id >= 50", mode="equality", key=["id"])
    d.commit()
    assert _kinds(d) == {"equality deletes"}
    assert t.scan(ref=d.branch).count() == 50


def test_main_as_target_and_rollback_undo(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    first = t.refs["main"].snapshot_id
    d = Deletes(t, "id = 5", branch="main")
    d.commit()
    assert t.scan().count() == 59
    with pytest.raises(IcebergError, match="nothing to publish"):
        d.publish()
    d.undo()
    assert t.refs["main"].snapshot_id == first and t.scan().count() == 60


def test_compare_modes_leaves_no_branch(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    refs = dict(t.refs)
    d = Deletes(t, "id < 10")
    c = d.compare_modes()
    assert set(c.effects) == {"copy-on-write", "merge-on-read"}
    cow, mor = c.effects["copy-on-write"], c.effects["merge-on-read"]
    assert cow.delete_files_to_apply == 0 and mor.delete_files_to_apply == 1
    assert mor.bytes_written < cow.bytes_written  # a DV against a rewritten data file
    assert dict(t.refs) == refs and "Compare modes" in d.compare_panel.value


def test_bad_input_is_shown_not_raised_in_the_form(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    refs = dict(t.refs)
    d = Deletes(t)
    d.filter_input.value = "nope = 1"
    assert "nope" in d.filter_state.value and d.filter == ""
    with pytest.raises(IcebergError):
        d.filter = "id <"
    d.commit_button.click()
    d.confirm.yes.click()  # nothing to confirm: no filter yet
    assert d.error.error is not None
    d.filter = "id = 1000"
    with pytest.raises(IcebergError, match="no live row"):
        d.commit()
    assert dict(t.refs) == refs  # the scratch branch made for it is gone again
    text = d._repr_mimebundle_()["text/plain"]
    assert "Deletes(db.t)" in text
