"""The widgets' Spark paths: TimeTravel's "read with Spark" page and ViewVersions' replace
preview (Spark derives the schema before anything is committed) and run."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pyarrow as pa

import icenb
from icenb.widgets import TimeTravel, ViewVersions


def test_time_travel_reads_a_page_with_spark(tmp_path: Path, spark: Any) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, kind string")
    t.append([{"id": i, "kind": "x"} for i in range(12)])
    first = t.metadata.current_snapshot_id
    t.append([{"id": 100, "kind": "y"}])
    tt = TimeTravel(t, page_size=5)
    tt.select(first)
    tt.spark_toggle.value = True                   # the "read with Spark" button
    pages = [tt.page(n) for n in range(3)]
    ids = sorted(i for p in pages for i in p.column("id").to_pylist())
    assert ids == list(range(12))                  # the old snapshot's rows only
    assert "read with Spark" in tt.rows_panel.value and "to_spark()" in tt.rows_panel.value


def test_view_versions_preview_then_replace_then_run(tmp_path: Path, spark: Any) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, kind string")
    t.append(pa.table({"id": [1, 2, 3], "kind": ["a", "b", "c"]}))
    v = wh.create_view("db.v", "SELECT id FROM db.t", schema="id long")
    vv = ViewVersions(v)
    vv.new_sql.value = "SELECT id, upper(kind) AS k FROM db.t WHERE id > 1"
    assert vv.replace_button.disabled              # no commit before a preview
    vv.preview_button.click()
    vv._work.wait()
    assert vv.error.error is None, vv.error.value
    assert "Schema Spark derives" in vv.preview_panel.value
    assert not vv.replace_button.disabled
    assert len(v.versions) == 1                    # a preview commits nothing
    vv.replace_button.click()
    vv.confirm.yes.click()
    assert v.current_version_id == 2 and vv.version_id == 2
    assert [f.name for f in v.schema.fields] == ["id", "k"]
    rows = vv.run()
    assert sorted(rows.column("k").to_pylist()) == ["B", "C"]
    vv.new_sql.value = "SELECT id FROM db.t"       # the same as version 1: Java reuses it
    vv.preview_button.click()
    vv._work.wait()
    assert "equivalent to version 1" in html.unescape(vv.preview_panel.value)
