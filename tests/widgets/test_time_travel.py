"""TimeTravel: what a person sees after selecting, comparing, paging and acting, checked
against the public API the widget claims to reproduce (``t.at``, ``t.diff``)."""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.errors import NoSuchSnapshot
from icenb.widgets import TimeTravel
from tests.widgets.conftest import History, build_history


def _sorted(rows: pa.Table) -> list[dict[str, object]]:
    return sorted(rows.to_pylist(), key=lambda r: str(r["id"]))


def test_opens_on_the_current_snapshot_with_its_rows(history: History) -> None:
    t = history.table
    tt = TimeTravel(t)
    assert tt.snapshot_id == t.metadata.current_snapshot_id == history.deleted
    assert _sorted(tt.rows) == _sorted(t.at(history.deleted).to_arrow())
    assert str(history.deleted) in tt.summary.value
    assert tt.tree.selected == f"s{history.deleted}"
    assert tt.strip.selected == f"t{history.deleted}"
    assert tt.error.error is None


@pytest.mark.parametrize("how", ["id", "ref", "iso", "datetime", "epoch_ms", "timestamp_ms"])
def test_select_resolves_as_t_at_does(history: History, how: str) -> None:
    t = history.table
    snap = t.snapshot(history.second)
    ms = snap.timestamp_ms
    when = {"id": history.second, "ref": "v1",
            "iso": datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(),
            "datetime": datetime.fromtimestamp(ms / 1000, timezone.utc),
            "epoch_ms": ms, "timestamp_ms": None}[how]
    tt = TimeTravel(t)
    got = tt.select(timestamp_ms=ms) if how == "timestamp_ms" else tt.select(when)
    expected = (t.at(timestamp_ms=ms) if how in ("epoch_ms", "timestamp_ms")
                else t.at(when)).snapshot_id
    assert got == expected == tt.snapshot_id
    assert _sorted(tt.rows) == _sorted(t.at(expected).to_arrow())
    if how == "ref":
        assert "tag `v1`" in tt.resolution.value
    elif how != "id":
        assert "current on main at" in tt.resolution.value


def test_clicking_a_node_selects_it_and_the_panels_follow(history: History) -> None:
    t = history.table
    tt = TimeTravel(t)
    tt.tree.selected = f"s{history.first}"       # what a click in the browser sets
    assert tt.snapshot_id == history.first
    assert _sorted(tt.rows) == [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}]
    assert str(history.first) in tt.summary.value
    assert "t.metadata_tree(" in tt.metadata_panel.value
    svg = tt.metadata_graph.svg                    # the drawn tree of that snapshot
    # the node says S1 (its short label), the tooltip holds the full id
    assert ">snapshot S1<" in svg and "Manifest list" in svg
    assert f'xlink:title="snapshot S1 = {history.first}"' in svg
    assert tt.strip.selected == f"t{history.first}"
    tt.strip.selected = f"t{history.dev}"          # a click on the timeline strip
    assert tt.snapshot_id == history.dev
    assert tt.tree.selected == f"s{history.dev}"


def test_shift_click_compares_and_equals_t_diff(history: History) -> None:
    t = history.table
    tt = TimeTravel(t)
    tt.tree.selected = f"s{history.first}"
    tt.tree.compare = f"s{history.deleted}"        # shift-click
    d = tt.diff
    expected = t.diff(history.first, history.deleted)
    assert d is not None and tt.other_snapshot_id == history.deleted
    assert (d.data_added.count, d.data_removed.count, d.deletes_added.count) == \
        (expected.data_added.count, expected.data_removed.count, expected.deletes_added.count)
    assert d.deletes_added.count == 1 and d.data_added.count == 1
    tt._diff_work.wait()
    removed, added = expected.rows()
    assert f"Rows removed ({removed.num_rows:,})" in tt.diff_panel.value
    assert f"Rows added ({added.num_rows:,})" in tt.diff_panel.value
    assert "Manifests" in tt.diff_panel.value and "sequence number" in tt.diff_panel.value
    assert f"t.diff({history.first}, {history.deleted})" in tt.diff_panel.value


def test_compare_returns_the_diff(history: History) -> None:
    tt = TimeTravel(history.table)
    d = tt.compare("v1", "dev")
    assert tt.snapshot_id == history.first and tt.other_snapshot_id == history.dev
    assert d is tt.diff and d.b.snapshot_id == history.dev


def test_slider_walks_the_ancestors_of_the_picked_ref(history: History) -> None:
    t = history.table
    tt = TimeTravel(t)
    tt.ref_picker.value = "dev"
    assert tt.snapshot_id == history.dev
    ancestors = [s.snapshot_id for s in t.metadata.ancestors(history.dev)][::-1]
    assert tt.slider.max == len(ancestors) - 1
    tt.slider.value = 0
    assert tt.snapshot_id == ancestors[0] == history.first
    tt.slider.value = 1
    assert tt.snapshot_id == history.second


def test_bad_input_shows_an_error_in_the_widget(history: History) -> None:
    tt = TimeTravel(history.table)
    before = tt.snapshot_id
    tt.as_of.value = "no-such-ref"
    tt._on_as_of()
    assert isinstance(tt.error.error, NoSuchSnapshot)
    assert "no-such-ref" in tt.error.value and "Traceback" not in tt.error.value
    assert tt.snapshot_id == before
    with pytest.raises(NoSuchSnapshot):
        tt.select("no-such-ref")                   # the programmatic surface raises
    tt.as_of.value = "v1"
    tt._on_as_of()
    assert tt.error.error is None and tt.snapshot_id == history.first


def test_pages_of_rows(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.many", "id long")
    for start in range(0, 50, 10):
        t.append([{"id": i} for i in range(start, start + 10)])
    tt = TimeTravel(t, page_size=7)
    everything = t.at(t.metadata.current_snapshot_id).to_arrow().column("id").to_pylist()
    seen = []
    for page in range(8):
        seen += tt.page(page).column("id").to_pylist()
    assert seen == everything and len(seen) == 50
    assert "last page" in tt.rows_panel.value


def test_a_newer_request_supersedes_an_older_one(history: History) -> None:
    tt = TimeTravel(history.table)
    tt.select(history.first)
    tt.select(history.dev)
    assert tt.snapshot_id == history.dev
    assert _sorted(tt.rows) == _sorted(history.table.at(history.dev).to_arrow())
    tt._load_rows()
    tt._cancel_rows()
    assert "cancelled" in tt.rows_panel.value


def test_folds_expand_on_click(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.long", "id long")
    for i in range(30):
        t.append([{"id": i}])
    tt = TimeTravel(t, max_nodes=6)
    folds = [k for k, n in tt.tree.nodes.items() if n["fold"]]
    assert folds, "a 30-snapshot chain drawn in 6 nodes has a folded run"
    shown = sum(1 for n in tt.tree.nodes.values() if n["snapshot_id"])
    tt.tree._on_message(tt.tree, {"event": "expand", "node": folds[0]}, [])
    assert sum(1 for n in tt.tree.nodes.values() if n["snapshot_id"]) > shown
    oldest = t.metadata.snapshots[0].snapshot_id
    tt.select(oldest)                              # a hidden snapshot gets drawn
    assert tt.tree.selected == f"s{oldest}"


def test_actions_commit_through_the_api_after_confirmation(tmp_path: Path) -> None:
    h = build_history(tmp_path)
    t = h.table
    tt = TimeTravel(t)
    tt.select(h.second)
    tt.ref_name.value = "audit"
    tt.action_buttons[0].click()                   # "tag here": asks first
    assert "audit" not in t.metadata.refs
    assert "t.create_tag('audit'" in html.unescape(tt.confirm.question.value)
    tt.confirm.yes.click()
    assert t.metadata.refs["audit"].snapshot_id == h.second
    assert any("audit" in o[0] for o in tt.ref_picker.options)
    tt.select(h.first)
    tt.action_buttons[2].click()                   # roll back main here
    tt.confirm.no.click()                          # cancelled: nothing happens
    assert t.metadata.current_snapshot_id == h.deleted
    tt.action_buttons[2].click()
    tt.confirm.yes.click()
    assert t.metadata.current_snapshot_id == h.first
    assert tt.tree.nodes[f"s{h.first}"]["label"].find("current") >= 0
    tt.ref_name.value = "audit"                    # exists: the error shows in place
    tt.action_buttons[0].click()
    tt.confirm.yes.click()
    assert tt.error.error is not None and "audit" in tt.error.value


def test_read_only_tables_have_no_actions(history: History) -> None:
    t = icenb.open(history.table.metadata_location)
    tt = TimeTravel(t)
    assert not hasattr(tt, "action_buttons")
    assert "read-only" in tt.actions.value
    assert tt.snapshot_id == t.metadata.current_snapshot_id


def test_static_snapshot_is_deterministic_and_says_it_is_static(history: History) -> None:
    t = history.table
    one, two = TimeTravel(t), TimeTravel(t)
    for tt in (one, two):
        tt.compare(history.first, history.deleted)
    b1, b2 = one._repr_mimebundle_(), two._repr_mimebundle_()
    assert b1["text/plain"] == b2["text/plain"] and b1["text/html"] == b2["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in b1
    assert "run the notebook" in b1["text/plain"] and "run the notebook" in b1["text/html"]
    assert f"selected: snapshot {history.first}" in b1["text/plain"]
    assert f"compared with: snapshot {history.deleted}" in b1["text/plain"]
    assert "<script" not in b1["text/html"]


def test_table_method_builds_the_widget(history: History) -> None:
    tt = history.table.time_travel(page_size=5)
    assert isinstance(tt, TimeTravel) and tt.snapshot_id == history.deleted


def test_v3_summary_shows_row_lineage_and_dvs(tmp_path: Path) -> None:
    h = build_history(tmp_path, format_version=3)
    tt = TimeTravel(h.table)
    tt.select(h.second)
    assert "first row id" in tt.summary.value
    d = tt.compare(h.second, h.deleted)
    kinds = dict((k, n) for k, n, _ in d.deletes_added.by_kind)
    assert sum(kinds.values()) == 1 and _sorted(tt.rows) == _sorted(h.table.at(h.second)
                                                                    .to_arrow())
