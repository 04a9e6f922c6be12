"""The ``%%sql`` cell magic (``%load_ext icenb``): which warehouse, a bounded table in HTML and
text, ``--limit`` / ``--out``, and errors as one short line."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.sql_magic import SqlCellError, SqlResult
from icenb.table.warehouse import Warehouse


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icenb")
    wh = icenb.warehouse(tmp_path_factory.mktemp("magic") / "wh")
    t = wh.create_table("db.t", "id long not null, kind string")
    first = t.append([{"id": i, "kind": f"k{i % 3}"} for i in range(30)])
    t.create_tag("v1")
    time.sleep(0.01)
    t.append([{"id": 100, "kind": "new"}])
    ip.user_ns.update(wh=wh, first=first.snapshot_id, t=t)
    yield ip
    for name in ("wh", "first", "t", "result", "other"):
        ip.user_ns.pop(name, None)


def run(shell: Any, line: str, cell: str) -> Any:
    return shell.run_cell_magic("sql", line, cell)


def test_a_cell_shows_the_first_rows_and_says_more_exist(shell: Any) -> None:
    result = run(shell, "wh --limit 5", "SELECT id, kind FROM db.t VERSION AS OF 'v1' ORDER BY id")
    assert isinstance(result, SqlResult)
    assert result.rows.num_rows == 5 and result.more
    assert result.rows.column("id").to_pylist() == [0, 1, 2, 3, 4]
    data = shell.display_formatter.format(result)[0]
    html, text = data["text/html"], data["text/plain"]
    assert "first 5 rows; more exist" in html and "first 5 rows; more exist" in text
    assert "<table" in html and "k1" in html and "VERSION AS OF" in html
    assert "4" in text.splitlines()[-1]  # the fifth row, no folding in between


def test_same_rows_as_t_at(shell: Any) -> None:
    t = shell.user_ns["t"]
    first = shell.user_ns["first"]
    result = run(shell, "wh -l 1000", f"SELECT * FROM db.t VERSION AS OF {first}")
    assert not result.more
    want = t.at(first).to_arrow()
    assert sorted(result.rows.to_pylist(), key=repr) == sorted(want.to_pylist(), key=repr)
    data = shell.display_formatter.format(result)[0]
    assert "30 rows" in data["text/plain"] and "more exist" not in data["text/plain"]


def test_out_binds_the_dataframe(shell: Any) -> None:
    result = run(shell, "wh -o result --limit 0", "SELECT * FROM db.t")
    assert result.rows.num_rows == 0 and result.more
    assert shell.user_ns["result"].count() == 31


def test_the_warehouse_opened_last_is_the_default(shell: Any, tmp_path: Path) -> None:
    other = icenb.warehouse(tmp_path / "other")
    other.create_table("ns.x", "v int").append([{"v": 7}])
    assert run(shell, "", "SELECT v FROM ns.x").rows.to_pylist() == [{"v": 7}]
    assert run(shell, "-n ns", "SELECT v + 1 AS w FROM x").rows.to_pylist() == [{"w": 8}]
    shell.user_ns["other"] = other
    assert isinstance(shell.user_ns["other"], Warehouse)


def test_errors_are_one_short_line(shell: Any) -> None:
    cases = {
        ("wh", "SELECT * FROM db.t VERSION AS OF 'nope'"): "icenb: NoSuchSnapshot: table db.t",
        ("wh", "SELECT * FROM db.nope"): "icenb: NoSuchTable: no table or view named db.nope",
        ("wh", "SELECT nope FROM db.t"): "icenb: ValidationError: Spark cannot run the SQL",
        ("nowhere", "SELECT 1"): "icenb: usage: no variable named 'nowhere'",
        ("first", "SELECT 1"): "icenb: usage: first is not an icenb warehouse",
        ("wh --limit", "SELECT 1"): "icenb: usage: argument -l/--limit",
        ("wh", "  "): "icenb: usage: the cell has no SQL",
    }
    for (line, cell), start in cases.items():
        outcome = shell.run_cell(f"%%sql {line}\n{cell}")
        error = outcome.error_in_exec
        assert isinstance(error, SqlCellError), (line, cell, error)
        lines = error._render_traceback_()
        assert len(lines) == 1 and lines[0].startswith(start), lines
