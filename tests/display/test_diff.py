"""The snapshot diff card: summary line, file tables, the graph, escaping and folding."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.display.diff import diff_graph, summary
from icenb.display.kit.fmt import file_name, middle
from icenb.table import Table

WEIRD = '<b>&"x"'


@pytest.fixture(autouse=True)
def _defaults() -> object:
    with reset_options() as opts:
        yield opts


def rows(lo: int, hi: int) -> pa.Table:
    return pa.table({"id": pa.array(range(lo, hi), pa.int64()),
                     "ts": pa.array([dt.datetime(2024, 1, 1 + i % 3) for i in range(lo, hi)],
                                    pa.timestamp("us"))})


def make(tmp_path: Path, version: int, partition_by: list[str] | None = None) -> Table:
    return icenb.warehouse(tmp_path).create_table(
        "db.t", "id long, ts timestamp", partition_by=partition_by, format_version=version,
        properties={"write.delete.mode": "merge-on-read"})


def sid(t: Table) -> int:
    assert t.current_snapshot is not None
    return t.current_snapshot.snapshot_id


def test_summary_and_card_of_a_deletion_vector(tmp_path: Path) -> None:
    t = make(tmp_path, 3)
    t.append(rows(0, 10))
    (target,) = t.inspect.files().column("file_path").to_pylist()
    t.append(rows(10, 20))
    base = sid(t)
    t.append(rows(20, 25))
    t.delete("id = 1 or id = 2 or id = 3")
    d = t.diff(base, "main")
    assert summary(d) == ("+1 data file (+5 rows), +1 deletion vector deleting 3 rows in "
                          f"{file_name(target)}")
    r = render(d)
    # small table: short labels S<sequence number> in the title, the full ids a line below
    assert r.text.splitlines()[0] == "Snapshot diff S2 → main (S4)"
    assert f"S2 = {base}; S4 = {sid(t)}" in r.text.splitlines()[1]
    assert summary(d) in r.text
    assert "Data files added (1):" in r.text and "Delete files added (1):" in r.text
    assert "Data files removed" not in r.text
    dv_row = next(ln for ln in r.text.splitlines() if "deletion vector" in ln and ".puffin" in ln)
    assert file_name(target) in dv_row  # the "applies to" column
    assert mimebundle(d)["text/html"].count("<style>") == 1
    assert "<b>+1 data file (+5 rows), +1 deletion vector deleting 3 rows in " in r.html
    assert re.search(r"<td>rows deleted by new deletes</td><td>3</td>", r.html)
    assert re.search(r"<td>data files the new deletes apply to</td><td>1</td>", r.html)


def test_graph_links_snapshots_files_and_deletes(tmp_path: Path) -> None:
    t = make(tmp_path, 2, ["day(ts)"])
    t.append(rows(0, 9))
    base = sid(t)
    t.delete("id = 4")
    d = t.diff(base, "main")
    g = diff_graph(d)
    a, b = f"snap_{base}", f"snap_{sid(t)}"
    assert f'"{a}" -> "{b}" [label=" ancestor "' in g.dot
    nodes = {n: c for n, _, c in
             re.findall(r'^\s*"(f\d+)" \[label="([^"]*)" class="(\w+)"', g.dot, re.M)}
    assert sorted(nodes.values()) == ["data_file", "delete_file"]
    delete = next(n for n, c in nodes.items() if c == "delete_file")
    data = next(n for n, c in nodes.items() if c == "data_file")
    assert f'"{b}" -> "{delete}" [label=" added "]' in g.dot
    assert f'"{delete}" -> "{data}" [label=" applies to "' in g.dot
    (app,) = d.applications
    assert f"{middle(file_name(app.data_files[0]))}\\ndata (unchanged)" in g.dot
    assert "applies to" in g.text and g.text.startswith("diff S1 -> S2: ")
    assert f'tooltip="snapshot {base}"' in g.dot   # the full id a hover away
    html = render(d).html
    assert "<summary>Graph" in html
    assert mimebundle(t.diff(base, "main")) == mimebundle(d)  # deterministic


def test_removed_files_hang_off_a_dashed(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    t.append(rows(0, 5))
    base = sid(t)
    t.overwrite(rows(5, 7))
    d = t.diff(base, "main")
    assert summary(d) == "+1 data file (+2 rows), -1 data file (-5 rows)"
    g = diff_graph(d)
    removed = re.search(r'"(f\d+)" \[label="[^"]*" class="removed"[^\n]*dashed', g.dot)
    assert removed is not None
    assert f'"snap_{base}" -> "{removed.group(1)}" [label=" removed " style="dashed"]' in g.dot


def test_files_fold_in_tables_and_graph(tmp_path: Path) -> None:
    t = make(tmp_path, 2, ["id"])
    t.append(rows(0, 1))
    base = sid(t)
    t.append(rows(1, 41))
    d = t.diff(base, "main")
    with icenb.set_options(display_max_files=4):
        r = render(d)
        g = diff_graph(d)
    added = r.html.split("Data files added")[1].split("</table>")[0]
    assert len(re.findall(r"<tr><td>", added)) == 4
    assert "… 36 more files …" in added
    text_rows = r.text.split("Data files added (40):")[1].splitlines()
    assert "  … 36 more files …" in text_rows and text_rows.index("  … 36 more files …") == 4
    assert '"more_added data files" [label="… 36 more added data files …"' in g.dot
    assert len(re.findall(r'class="data_file"', g.dot)) == 4
    # the first and last file by path are shown
    paths = sorted(f.path for f in d.data_added.kept)
    assert file_name(paths[0]) in added and file_name(paths[-1]) in added


def test_ref_names_are_escaped(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    t.append(rows(0, 3))
    t.create_tag(WEIRD)
    t.append(rows(3, 4))
    d = t.diff(WEIRD, "main")
    html = mimebundle(d)["text/html"]
    assert WEIRD not in html and "&lt;b&gt;&amp;&quot;x&quot;" in html
    assert 'a: <b>&\\"x\\"\\nsnapshot' in diff_graph(d).dot


def test_deterministic_and_empty(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    t.append(rows(0, 3))
    d = t.diff("main", "main")
    assert summary(d) == "no file changed"
    assert "<summary>Graph" not in render(d).html
    assert mimebundle(t.diff("main", "main")) == mimebundle(d)
    dot = diff_graph(d).dot  # drawn on request: one snapshot node, no loop onto itself
    assert "->" not in dot and dot.count(f'"snap_{sid(t)}" [') == 1 and "a = b" in dot


def test_partial_diff_renders(tmp_path: Path) -> None:
    t = make(tmp_path, 3)
    t.append(rows(0, 5))
    base = sid(t)
    t.delete("id = 1")
    d = t.diff(base, "main")
    # the delete's target is gone (e.g. an application kept no path): still a readable card
    (app,) = d.applications
    partial = dataclasses.replace(d, applications=(dataclasses.replace(app, data_file_count=0,
                                                                       data_files=()),))
    r = render(partial)
    assert "no live data file" in r.text and "could not be displayed" not in r.html
    broken = dataclasses.replace(d, b=None)  # type: ignore[arg-type]
    assert "could not be displayed" in render(broken).html


def test_two_deletion_vectors_in_one_puffin_file(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.p", "id long, p string",
                                               partition_by=["p"], format_version=3)
    t.append(pa.table({"id": pa.array(range(10), pa.int64()), "p": ["a"] * 5 + ["b"] * 5}))
    base = sid(t)
    files = {r["partition"]["p"]: file_name(r["file_path"])
             for r in t.inspect.files().to_pylist()}
    t.delete("id = 1 or id = 7", mode="merge-on-read")
    d = t.diff(base, "main")
    offsets = {a.delete.partition_text: a.delete.content_offset for a in d.applications}
    (puffin,) = {file_name(a.delete.path) for a in d.applications}
    # each DV is its own row, with its own "applies to"
    text = render(d).text
    for p in ("a", "b"):
        row = next(ln for ln in text.splitlines() if f"{puffin}@{offsets[f'p={p}']} " in ln)
        assert f"p={p}" in row and row.rstrip().endswith(files[p])
    # ... and its own graph node, each with one red edge to its data file
    g = diff_graph(d)
    nodes = re.findall(r'"(f\d+)" \[label="([^"]*)"[^\]]*tooltip="([^"]*)"', g.dot)
    dv_nodes = {n for n, _, tip in nodes if puffin in tip}
    assert len(dv_nodes) == 2
    # the label names the file shortened in the middle, the tooltip in full (table-relative)
    assert {f"{middle(puffin)}@{offsets['p=a']}", f"{middle(puffin)}@{offsets['p=b']}"} <= set(
        label.split("\\n")[0] for _, label, _ in nodes)
    assert {f"data/{puffin}@{offsets['p=a']}", f"data/{puffin}@{offsets['p=b']}"} <= set(
        tip for _, _, tip in nodes)
    applies = re.findall(r'"(f\d+)" -> "(f\d+)" \[label=" applies to "', g.dot)
    assert sorted(src for src, _ in applies) == sorted(dv_nodes)
    assert len({dst for _, dst in applies}) == 2
    assert f"{puffin}@{offsets['p=a']} applies to {files['a']}" in g.text
    assert f"{puffin}@{offsets['p=b']} applies to {files['b']}" in g.text
    # replacing p=a's DV removes it, though its Puffin file stays live for p=b's
    mid = sid(t)
    t.delete("id = 2", mode="merge-on-read")
    d2 = t.diff(mid, "main")
    text2 = render(d2).text
    assert "Delete files removed (1):" in text2
    assert f"{puffin}@{offsets['p=a']}" in text2.split("Delete files removed (1):")[1]
