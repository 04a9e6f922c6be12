"""Inspect results: tagged Arrow tables drawn as bounded HTML, untagged ones left alone."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import render
from icenb.display.inspect_repr import (
    METADATA_TABLES,
    arrow_table_html,
    arrow_table_rendered,
    compact,
    inspect_name,
    register_ipython_formatters,
)
from icenb.table.explore.inspect import INSPECT_TAG
from icenb.table.table import Table

EVIL = '<b>&"x"'


def _cells(html: str) -> list[list[str]]:
    out = []
    for tr in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [re.sub(r"<[^>]+>", "", c).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        if cells:
            out.append(cells)
    return out


def _headers(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<th[^>]*>(.*?)</th>", html)]


@pytest.fixture
def table(tmp_path: Path) -> Table:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long not null, ts timestamp, data string", partition_by=["day(ts)"],
        properties={"write.delete.mode": "merge-on-read"})
    for day in range(1, 8):
        ts = pa.array([dt.datetime(2024, 1, day)] * 2, pa.timestamp("us"))
        t.append(pa.table({"id": pa.array([day, day + 100], pa.int64()), "ts": ts,
                           "data": [EVIL, "x"]}), snapshot_properties={EVIL: f"v{day}"})
    t.delete("id = 101")
    return t


def test_every_metadata_table_is_tagged_with_its_name(table: Table) -> None:
    for name, _, _ in METADATA_TABLES:
        result = getattr(table.inspect, name)()
        assert isinstance(result, pa.Table)
        assert result.schema.metadata[INSPECT_TAG] == name.encode()
        assert inspect_name(result) == name
    # the tag keeps the table's type and columns; its rows are unchanged
    snaps = table.inspect.snapshots()
    assert snaps.num_rows == 8 and snaps.column_names[:2] == ["committed_at", "snapshot_id"]


def test_untagged_tables_are_left_alone(table: Table) -> None:
    plain = pa.table({"a": [1, 2]})
    assert inspect_name(plain) is None and arrow_table_html(plain) is None
    other_meta = plain.replace_schema_metadata({b"pandas": b"{}"})
    assert arrow_table_html(other_meta) is None
    assert arrow_table_html("not a table") is None
    untagged = table.inspect.files().replace_schema_metadata(None)
    assert arrow_table_html(untagged) is None


def test_tagged_table_html_is_bounded_and_compact(table: Table) -> None:
    snaps = table.inspect.snapshots()
    with icenb.set_options(display_max_rows=4, display_max_columns=4):
        html = arrow_table_html(snaps)
    assert html is not None and html.count("<style>") == 1
    assert "inspect.snapshots()" in html and "8 rows · 6 columns" in html
    # columns: 2 head, the fold, 2 tail
    assert _headers(html) == ["committed_at", "snapshot_id", "… 2 more columns …",
                              "manifest_list", "summary"]
    rows = _cells(html)
    ids = snaps.column("snapshot_id").to_pylist()
    assert [r[1] for r in rows] == [str(ids[0]), str(ids[1]), str(ids[6]), str(ids[7])]
    assert "… 4 more rows …" in html
    # numbers are right-aligned, the map is one compact escaped cell
    assert f'<td class="icenb-num">{ids[0]}</td>' in html
    assert rows[0][4].startswith("{") and "&lt;b&gt;&amp;&quot;x&quot;: v1" in rows[0][4]
    assert EVIL not in html
    assert rows[0][0] == snaps.column("committed_at")[0].as_py().isoformat(sep=" ")[:26]


def test_nested_values_and_nulls_are_compact(table: Table) -> None:
    files = table.inspect.files()
    with icenb.set_options(display_max_columns=100):
        r = arrow_table_rendered(files)
    row = _cells(r.html)[0]
    names = files.column_names
    assert row[names.index("partition")].startswith("{ts_day: 2024-01-")
    assert row[names.index("equality_ids")] == "null"
    assert compact(list(range(10))) == "[0, 1, 2, 3, 4, 5, … +4]"
    assert compact([("k", 1), ("j", None)]) == "{k: 1, j: null}"
    assert compact(b"\x01\xff") == "0x01ff" and compact(True) == "true"
    assert r.text.startswith("files (8 rows · 21 columns)")  # 7 data files, 1 delete file


def test_text_rendering_folds_rows(table: Table) -> None:
    with icenb.set_options(display_max_rows=2):
        text = arrow_table_rendered(table.inspect.history()).text
    lines = text.splitlines()
    assert lines[0].startswith("history (8 rows · 4 columns")
    assert lines[3].strip() == "… 6 more rows …" and len(lines) == 5


def test_the_inspect_menu_lists_every_table(table: Table) -> None:
    r = render(table.inspect)
    rows = _cells(r.html)
    assert [row[0].split("(")[0] for row in rows] == [n for n, _, _ in METADATA_TABLES]
    files_row = [rows[6][0], rows[6][1].replace("&#x27;", "'")]
    assert files_row == ["files(snapshot_id=None)", "a snapshot's live data and delete files"]
    assert "db.t" in r.html and "position_deletes(snapshot_id=None)" in r.text


def test_formatter_with_a_real_ipython_shell(table: Table) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert register_ipython_formatters(shell) is True
        assert register_ipython_formatters() is True  # finds the running shell itself
        data, _ = shell.display_formatter.format(table.inspect.refs())
        assert "inspect.refs()" in data["text/html"] and "main" in data["text/html"]
        plain, _ = shell.display_formatter.format(pa.table({"a": [1]}))
        assert "text/html" not in plain and "text/plain" in plain
    finally:
        InteractiveShell.clear_instance()


def test_importing_icenb_inside_ipython_registers_the_formatter(tmp_path: Path) -> None:
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "import pyarrow as pa, icenb\n"
        "from icenb.table.explore.inspect import INSPECT_TAG\n"
        "t = pa.table({'a': [1]}).replace_schema_metadata({INSPECT_TAG: b'refs'})\n"
        "data, _ = shell.display_formatter.format(t)\n"
        "plain, _ = shell.display_formatter.format(pa.table({'a': [1]}))\n"
        "print('inspect.refs()' in data.get('text/html', ''), 'text/html' in plain)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["True", "False"]


def test_no_shell_no_registration() -> None:
    code = ("import icenb\nfrom icenb.display.inspect_repr import register_ipython_formatters\n"
            "import sys\nprint('IPython' in sys.modules, register_ipython_formatters())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["False", "False"]
