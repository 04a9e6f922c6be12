"""Schema history and partition spec history: the grid, the version tables and the graphs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.display.evolution_history import schema_graph, spec_graph
from icenb.spec.table_metadata import table_metadata_from_json, to_json_string
from icenb.table import Table
from icenb.table.explore.evolution_history import SchemaHistory, schema_history, spec_history

WEIRD = '<b>&"x"'


@pytest.fixture(autouse=True)
def _defaults() -> object:
    with reset_options() as opts:
        yield opts


@pytest.fixture
def table(tmp_path: Path) -> Table:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.e", "id int not null, ts timestamp, kind string",
                        partition_by=["day(ts)"], format_version=2)
    t.append(pa.table({"id": pa.array([1, 2], pa.int32()),
                       "ts": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("us")),
                       "kind": ["a", "b"]}))
    with t.update_schema() as u:
        u.add_column("score", "double")
        u.rename_column("kind", "category")
    with t.update_schema() as u:
        u.update_column("id", "long")
        u.make_column_optional("id")
    with t.update_spec() as u:
        u.add_field("month(ts)")
        u.remove_field("ts_day")
    t.append(pa.table({"id": pa.array([3], pa.int64()),
                       "ts": pa.array([dt.datetime(2024, 3, 1)], pa.timestamp("us")),
                       "category": ["c"], "score": [0.5]}))
    with t.update_schema() as u:
        u.delete_column("score")
    return t


def rows_of(html: str) -> list[str]:
    return re.findall(r"<tr>(<td>.*?)</tr>", html)


def test_schema_grid_shows_changes_per_field_and_schema(table: Table) -> None:
    h = table.schema_history()
    html = mimebundle(h)["text/html"]
    assert html.count("<style>") == 1
    for header in ("schema 0", "schema 1", "schema 2", "schema 3 (current)"):
        assert f"<th>{header}</th>" in html
    grid = html.split("Fields by id")[1].split("</table>")[0]
    lines = rows_of(grid)
    assert len(lines) == 4  # one row per field id
    cat = next(r for r in lines if "<code>category</code>" in r)
    assert "<code>kind</code> string?" in cat and "icenb-b-info\">renamed" in cat
    ident = next(r for r in lines if r.startswith("<td>1</td>"))
    assert "long?" in ident and ">promoted<" in ident and ">optional<" in ident
    score = next(r for r in lines if "<code>score</code>" in r)
    assert ">added<" in score and ">dropped<" in score
    text = repr(h)
    assert text.startswith("Schema history: 4 schemas, 4 field ids, current schema 3")
    assert "category string? [renamed]" in text and "id long? [promoted, optional]" in text
    assert "score (dropped)" in text and "[dropped]" in text
    assert "kind -> category, + score double" in text  # the versions table


def test_schema_graph_has_one_node_per_schema_and_labelled_edges(table: Table) -> None:
    g = schema_graph(table.schema_history())
    nodes = re.findall(r'^\s*"(schema_\d+)" \[label="([^"]*)"', g.dot, re.M)
    assert [n for n, _ in nodes] == ["schema_0", "schema_1", "schema_2", "schema_3"]
    assert nodes[1][1] == "schema 1\\n4 fields\\n0 snapshots"
    edges = dict(((a, b), lab) for a, b, lab in
                 re.findall(r'"(schema_\d)" -> "(schema_\d)" \[label=" (.*?) "\]', g.dot))
    assert edges[("schema_0", "schema_1")] == "kind -> category\\n+ score double"
    assert edges[("schema_1", "schema_2")] == "id int -> long\\nid optional"
    assert edges[("schema_2", "schema_3")] == "- score"
    assert 'penwidth="2.5"' in g.dot.split('"schema_3"')[1].split("\n")[0]  # current
    assert schema_graph(table.schema_history()).dot == g.dot


def test_spec_history_table_and_graph(table: Table) -> None:
    h = table.spec_history()
    r = render(h)
    assert "spec 1 (default)" in r.text
    lines = r.text.splitlines()
    day = next(ln for ln in lines if ln.startswith("1000"))
    assert "ts_day (removed)" in day and "ts_day day(ts)" in day and "[dropped]" in day
    month = next(ln for ln in lines if ln.startswith("1001"))
    assert "ts_month month(ts) [added]" in month
    # the spec table: files and rows per spec in the current snapshot
    spec0 = next(ln for ln in lines if re.match(r"0\s+day\(ts\)", ln))
    assert spec0.split()[2:4] == ["1", "2"]
    assert ">default<" in r.html and "<code>ts_month</code> month(ts)" in r.html
    g = spec_graph(h)
    assert '"spec_0" -> "spec_1" [label=" - ts_day\\n+ ts_month month(ts) "]' in g.dot
    assert "1 data / 0 delete files" in g.dot
    assert g.text.splitlines()[0] == "partition specs"


def test_user_strings_are_escaped(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.x", "id long", format_version=2)
    with t.update_schema() as u:
        u.add_column(WEIRD, "string")
    html = mimebundle(t.schema_history())["text/html"]
    assert "&lt;b&gt;&amp;&quot;x&quot;" in html and WEIRD not in html
    dot = schema_graph(t.schema_history()).dot
    assert '+ <b>&\\"x\\" string' in dot  # a DOT string, quotes escaped


def test_fields_and_versions_fold(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.w", ", ".join(f"c{i} long" for i in range(30)), format_version=2)
    for i in range(6):
        with t.update_schema() as u:
            u.add_column(f"n{i}", "int")
    h = t.schema_history()
    assert len(h.schemas) == 7 and len(h.fields) == 36
    with icenb.set_options(display_max_fields=6, display_max_snapshots=4):
        r = render(h)
        g = schema_graph(h)
    grid = r.html.split("Fields by id")[1].split("</table>")[0]
    assert "… 30 more fields …" in grid and len(rows_of(grid)) == 6
    assert "<th>… 3 more schemas …</th>" not in grid  # the header is a plain ellipsis
    assert "<th>…</th>" in grid and "… 3 more schemas …" in grid
    assert "<th>schema 0</th>" in grid and "<th>schema 6 (current)</th>" in grid
    assert "<th>schema 3</th>" not in grid
    assert "… 30 more fields …" in r.text and "(3 more)" in r.text
    assert '"folded" [label="… 3 more schemas …"' in g.dot
    assert '"schema_1" -> "folded"' in g.dot and '"folded" -> "schema_5"' in g.dot
    assert "schema_3" not in g.dot


def test_rendering_is_deterministic(table: Table) -> None:
    a = mimebundle(table.schema_history())
    b = mimebundle(table.schema_history())
    assert a == b
    assert mimebundle(table.spec_history()) == mimebundle(table.spec_history())


def test_partial_metadata_renders(table: Table) -> None:
    # a snapshot naming a schema id that is not in the metadata, and a spec whose source
    # column no schema has
    raw = json.loads(to_json_string(table.metadata))
    raw["snapshots"][0]["schema-id"] = 99
    raw["partition-specs"][0]["fields"][0]["source-id"] = 77
    md = table_metadata_from_json(json.dumps(raw))
    h = schema_history(md)
    assert h.snapshots_without_schema == 1
    text = render(h).text
    assert "1 snapshots without a known schema id" in text
    t = icenb.open(table.metadata_location or "")
    spec = t.spec_history()
    assert spec.specs[0].fields[0].source == "ts"
    from icenb.table.explore.evolution_history import spec_history
    sh = spec_history(md, t.io)
    assert sh.specs[0].fields[0].source == "<id 77>"
    assert "&lt;id 77&gt;" in render(sh).html


def test_broken_history_renders_a_fallback(table: Table) -> None:
    h = table.schema_history()
    broken = SchemaHistory(h.metadata, h.schemas, (h.fields[0].__class__(1, (), ()),),
                           h.current_schema_id, 0)
    r = render(broken)
    assert "could not be displayed" in r.html and "SchemaHistory" in r.text


def test_dropped_and_removed_are_relative_to_the_current_schema_and_default_spec(
        table: Table) -> None:
    # A table set back to an older schema and spec (set-current-schema / set-default-spec to
    # an id it already has): the field dropped in the last schema is live again.
    md = dataclasses.replace(table.metadata, current_schema_id=2, default_spec_id=0)
    sh = schema_history(md)
    assert not sh.field(4).dropped and sh.field(4).latest.name == "score"
    text = render(sh).text
    assert "score (dropped)" not in text and "schema 2 (current)" in text
    sp = spec_history(md, table.io)
    day, month = sp.fields
    assert not day.removed and month.removed
    lines = render(sp).text.splitlines()
    assert "ts_day (removed)" not in next(ln for ln in lines if ln.startswith("1000"))
    assert "ts_month (removed)" in next(ln for ln in lines if ln.startswith("1001"))
    # and on the table as written, the last schema and spec are the current ones
    assert table.schema_history().field(4).dropped
    assert table.spec_history().fields[0].removed
