"""Reprs of scans (no planning), scan plans (bounded task lists) and file scan tasks."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render
from icenb.table import scan as scan_module
from icenb.table.table import Table


def _rows(html: str) -> list[list[str]]:
    out = []
    for tr in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr)]
        if cells:
            out.append(cells)
    return out


def _batch(ids: list[int], day: int) -> pa.Table:
    ts = pa.array([dt.datetime(2024, 1, day)] * len(ids), pa.timestamp("us"))
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": ts,
                     "data": [f"r{i}" for i in ids]})


def _table(tmp_path: Path, version: int) -> Table:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long not null, ts timestamp, data string", partition_by=["day(ts)"],
        format_version=version, properties={"write.delete.mode": "merge-on-read"})
    for day in range(1, 6):
        t.append(_batch([day * 10, day * 10 + 1], day))
    return t


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return _table(tmp_path, 2)


def test_scan_shows_what_it_will_read_without_planning(table: Table,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def no_planning(*_: Any, **__: Any) -> Any:
        raise AssertionError("the repr planned the scan")
    monkeypatch.setattr(scan_module, "plan_files", no_planning)
    table.create_tag("v<1>")
    s = table.scan("data = '<b>'").select("id", "data")
    r = render(s)
    kv = dict(row for row in _rows(r.html) if len(row) == 2)
    assert kv["snapshot"] == f"{table.metadata.current_snapshot_id} (main, v&lt;1&gt;)"
    assert kv["filter"] == "data = &#x27;&lt;b&gt;&#x27;"
    assert kv["columns"] == "id, data" and kv["case sensitive"] == "yes"
    assert "schema 0 · 2 columns projected" in kv["schema"]
    assert "s.plan()" in r.html and "<b>" not in r.html
    assert "filter:         data = '<b>'" in r.text
    assert repr(s).startswith("Scan(snapshot_id=")  # the one-line repr is kept


def test_scan_of_an_empty_table(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.e", "id long")
    r = render(t.scan())
    assert "none (empty table: reads no file)" in r.html
    assert "none (all rows)" in r.html and "all columns" in r.text


def test_scan_plan_counts_and_tasks(table: Table) -> None:
    table.delete("id = 30")
    plan = table.scan("id >= 30").plan()
    r = render(plan)
    kv = dict(row for row in _rows(r.html) if len(row) == 2)
    assert kv["tasks (data files)"] == f"{plan.files_selected} of {plan.files_considered} " \
        "considered" == "3 of 5 considered"
    assert kv["delete files"].startswith("1 live of ")
    assert kv["delete files"].endswith("· 1 applications to data files")
    assert kv["records / size"].startswith("6 rows · ")
    assert kv["manifests"] == f"{plan.manifests_read} read of {plan.manifests_total} " \
        f"({plan.manifests_skipped} skipped)"
    tasks = [row for row in _rows(r.html) if len(row) == 6]
    assert sorted(t[1] for t in tasks) == ["ts_day=2024-01-03", "ts_day=2024-01-04",
                                           "ts_day=2024-01-05"]
    by_part = {t[1]: t for t in tasks}
    assert by_part["ts_day=2024-01-03"][4] == "1 position"
    assert by_part["ts_day=2024-01-04"][4] == "-"
    assert all(t[2] == "2" and t[5] == "id &gt;= 30" for t in tasks)
    # titled by what it reads (no 19-digit id in a title; the id is a row of the card)
    assert '<span class="icenb-title">3 tasks</span>' in r.html and "1 delete file" in r.html


def test_scan_plan_builds_only_the_shown_tasks(table: Table) -> None:
    plan = table.scan().plan()
    with icenb.set_options(display_max_rows=2):
        r = render(plan)
    assert "tasks" not in plan.__dict__  # ScanPlan.tasks (all files) was never built
    tasks = [row for row in _rows(r.html) if len(row) == 6]
    files = [f.rsplit("/", 1)[-1] for f in plan.files.column("file_path").to_pylist()]
    assert [t[0] for t in tasks] == [files[0], files[-1]]
    assert "… 3 more tasks …" in r.html and "… 3 more tasks …" in r.text
    assert [t[5] for t in tasks] == ["-", "-"]  # no filter: no residual


def test_file_scan_task_with_deletion_vector(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    t.delete("id = 20")
    plan = t.scan("id = 21").plan()
    task = plan.tasks[0]
    assert task.delete_files
    r = render(task)
    kv = dict(row for row in _rows(r.html) if len(row) == 2)
    assert kv["data file"] == task.data_file.file_path
    assert kv["partition"] == "ts_day=2024-01-02 (spec 0)"
    assert kv["records"] == "2" and kv["range"] == "whole file"
    assert kv["residual filter"] == "id = 21"
    deletes = [row for row in _rows(r.html) if len(row) == 3]
    assert deletes == [["DV", task.delete_files[0].file_path, "1"]]
    assert "DV" in render(plan).html.split("Tasks", 1)[1]
    assert "delete files:" in r.text and "DV" in r.text


def test_equality_deletes_are_named(table: Table) -> None:
    table.delete_by_key(_batch([40], 4).select(["id", "ts"]), on=["id", "ts"])
    plan = table.scan().plan()
    tasks = [row for row in _rows(render(plan).html) if len(row) == 6]
    assert sorted(t[4] for t in tasks) == ["-", "-", "-", "-", "1 equality"]


def test_a_plan_whose_tasks_cannot_be_built_still_shows_counts(table: Table) -> None:
    plan = table.scan().plan()
    broken = dataclasses.replace(plan, specs={})  # spec ids that no longer resolve
    r = render(broken)
    assert "could not be displayed" not in r.html
    assert "tasks cannot be built" in r.html and "5 of 5 considered" in r.html
    assert "tasks cannot be built" in mimebundle(broken)["text/plain"]
