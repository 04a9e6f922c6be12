"""ViewVersions: the version log, SQL per dialect, differences, and changes through the API."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import NotFound
from icenb.table import View
from icenb.widgets import ViewVersions


def test_opens_on_the_current_version(view: View) -> None:
    vv = ViewVersions(view)
    assert vv.version_id == view.current_version_id == 2
    assert vv.sql == {"spark": "SELECT id, kind FROM db.t"}
    assert "SELECT id, kind FROM db.t" in vv.sql_panel.value
    node = vv.graph.selected
    assert vv.graph.nodes[node]["version_id"] == "2"


def test_click_selects_a_version_and_shows_its_sql(view: View) -> None:
    vv = ViewVersions(view)
    node = vv.graph.node_for(version_id=3)
    assert node is not None
    vv.graph.selected = node
    assert vv.version_id == 3
    assert set(vv.sql) == {"spark", "trino"}
    assert "SQL (trino)" in vv.sql_panel.value
    assert vv.sql == {d: view.sql_for(d, 3) for d in ("spark", "trino")}


def test_compare_is_v_compare(view: View) -> None:
    vv = ViewVersions(view)
    d = vv.compare(1, 3)
    expected = view.compare(1, 3)
    assert repr(d) == repr(expected)
    assert "v.compare(1, 3)" in vv.diff_panel.value
    vv.graph.compare = vv.graph.node_for(version_id=2) or ""    # shift-click
    assert vv.other_version_id == 2


def test_version_at_and_unknown_versions(view: View) -> None:
    vv = ViewVersions(view)
    first = view.version(1)
    assert vv.select_at(first.timestamp_ms) == 1
    with pytest.raises(NotFound):
        vv.select(99)
    vv.as_of.value = "not a time"
    vv._on_as_of()
    assert vv.error.error is not None and "Traceback" not in vv.error.value


def test_rollback_and_refused_dialect_drop_through_the_widget(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", "id long")
    v = wh.create_view("db.v", {"spark": "SELECT id FROM db.t",
                                "trino": "SELECT id FROM db.t"}, schema="id long")
    v.replace({"spark": "SELECT id + 1 AS id FROM db.t",
               "trino": "SELECT id + 1 AS id FROM db.t"}, schema="id long")
    vv = ViewVersions(v)
    vv.select(1)
    vv.rollback_button.click()
    assert "v.rollback_to(1)" in vv.confirm.question.value
    vv.confirm.yes.click()
    assert v.current_version_id == 1 and vv.version_id == 1
    vv.drop_dialect.value = "trino"
    vv.drop_button.click()
    vv.confirm.yes.click()                    # replace.drop-dialect.allowed is false
    assert vv.error.error is not None and "drop" in vv.error.value.lower()
    assert set(v.current_version.dialects) == {"spark", "trino"}


def test_read_only_views_and_static_snapshot(view: View) -> None:
    ro = icenb.open(view.metadata_location)
    assert isinstance(ro, View)
    vv = ViewVersions(ro)
    assert "read-only" in vv.actions.value
    b1, b2 = vv._repr_mimebundle_(), ViewVersions(ro)._repr_mimebundle_()
    assert b1["text/plain"] == b2["text/plain"] and b1["text/html"] == b2["text/html"]
    assert "selected: version 2" in b1["text/plain"] and "run the notebook" in b1["text/html"]
    assert isinstance(view.versions_widget(), ViewVersions)
