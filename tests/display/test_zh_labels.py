"""Chinese labels (``icenb.set_options(language="zh")``): the option, the catalog, and every
repr and graph drawn in Chinese with no English label left (names, values and spec field names
stay as they are), while English renderings stay as they were."""

from __future__ import annotations

import ast
import base64
import datetime as dt
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.display import (
    metadata_tree_figure,
    render,
    reset_options,
    snapshot_strip,
    snapshot_tree,
    view_version_timeline,
)
from icenb.display.diff import diff_graph
from icenb.display.evolution_history import schema_graph, spec_graph
from icenb.display.history.timeline import metadata_log_timeline, snapshot_log_timeline
from icenb.display.inspect_repr import METADATA_TABLES, arrow_table_rendered
from icenb.display.metadata_graph import layout_comparison_figures, metadata_graph_figure
from icenb.display.snapshot_repr import SUMMARY_GROUPS
from icenb.errors import ValidationError
from icenb.io.manifest_reader import read_manifest_list
from icenb.io.root_manifest import read_leaves, read_root_manifest
from icenb.labels import COUNTERS, ZH, t
from icenb.options import DisplayOptions
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.manifest import ManifestEntry
from tests.display._zh import english_labels, fragments, has_cjk, visible_text

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    with reset_options():
        yield


# --------------------------------------------------------------------------- the option


def test_language_option_validates_and_defaults_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ICENB_LANGUAGE", raising=False)
    assert DisplayOptions().language == "en"
    for bad in ("fr", "ZH", "", None, 1):
        with pytest.raises(ValidationError) as e:
            icenb.set_options(language=bad)
        assert e.value.field == "language" and e.value.value == bad
    with icenb.set_options(language="zh"):
        assert icenb.get_options().language == "zh" and t("Snapshot") == "快照"
    assert t("Snapshot") == "Snapshot"
    monkeypatch.setenv("ICENB_LANGUAGE", "zh")
    assert DisplayOptions().language == "zh"
    monkeypatch.setenv("ICENB_LANGUAGE", "klingon")  # unknown: English, never an error
    assert DisplayOptions().language == "en"


def test_environment_variable_sets_the_default_in_a_new_process() -> None:
    code = ("import icenb; from icenb.labels import t; "
            "print(icenb.get_options().language, t('Schema'))")
    env = {**os.environ, "ICENB_LANGUAGE": "zh"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["zh", "模式"]


def test_t_fills_fields_and_falls_back_to_english() -> None:
    with icenb.set_options(language="zh"):
        assert t("{n:,} more", n=1234) == "另 1,234 个"
        assert t("no such label {x}", x=1) == "no such label 1"
        assert t("no such label") == "no such label"
    assert t("{n:,} more", n=1234) == "1,234 more"


# --------------------------------------------------------------------------- the catalog


def _fields(text: str) -> set[str]:
    import string
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def test_every_catalog_label_has_a_chinese_translation() -> None:
    assert len(ZH) > 600
    no_cjk = {k: v for k, v in ZH.items() if not has_cjk(v)}
    assert no_cjk == {"#": "#", "id": "ID", "id {id}": "ID {id}",  # numbers and ids only
                      "{pos:,} of {n:,}": "{pos:,} / {n:,}",
                      "{shown:,} of {total:,}": "{shown:,} / {total:,}",
                      "{shown} of {total:,}": "{shown} / {total:,}"}
    for english, chinese in ZH.items():
        assert (chinese.strip() and chinese != english) or english == "#", english
        assert _fields(english) == _fields(chinese), english
    assert all(has_cjk(v) for v in COUNTERS.values())


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _labels_in_code() -> dict[str, str]:
    """Every literal label the display and widget code passes to ``t()`` (directly, or over a
    literal tuple) or as a counted or folded noun (``plural``, ``hidden``, ``what=``)."""
    out: dict[str, str] = {}
    for folder in ("display", "widgets"):
        for path in sorted((REPO / "icenb" / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                keys: list[str | None] = []
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else \
                        f.attr if isinstance(f, ast.Attribute) else ""
                    if name == "t" and node.args:
                        a = node.args[0]
                        keys += ([_literal(a.body), _literal(a.orelse)]
                                 if isinstance(a, ast.IfExp) else [_literal(a)])
                    elif name == "plural":
                        keys += [_literal(x) for x in node.args[1:3]]
                    elif name == "hidden":
                        keys += [_literal(x) for x in node.args[1:2]]
                    keys += [_literal(kw.value) for kw in node.keywords if kw.arg == "what"]
                elif isinstance(node, (ast.ListComp, ast.GeneratorExp)):
                    elt, gens = node.elt, node.generators
                    if (isinstance(elt, ast.Call) and isinstance(elt.func, ast.Name)
                            and elt.func.id == "t" and len(gens) == 1
                            and isinstance(gens[0].iter, (ast.Tuple, ast.List))):
                        keys += [_literal(x) for x in gens[0].iter.elts]
                for k in keys:
                    if k is not None:
                        out.setdefault(k, f"{path.relative_to(REPO)}:{node.lineno}")
    return out


def test_every_label_in_the_code_is_in_the_catalog() -> None:
    labels = _labels_in_code()
    assert len(labels) > 500
    missing = {k: where for k, where in labels.items() if k not in ZH and k not in COUNTERS}
    assert not missing


def test_labels_chosen_at_run_time_are_in_the_catalog() -> None:
    from icenb.display import manifest_repr, metadata_graph, metadata_tree, root_manifest_repr
    from icenb.display import table_repr as tr
    from icenb.display.evolution_history import _BADGE, _LEGEND
    words = [g[0] for g in SUMMARY_GROUPS]
    words += [x for _, reads, what in METADATA_TABLES for x in (reads, what)]
    words += list(tr._KIND_LABEL.values())
    words += list(root_manifest_repr._WORDS.values())
    words += [w.lower() for w in root_manifest_repr._WORDS.values()]
    words += list(metadata_graph._FILE_WORDS.values())
    words += [w.lower() for w in metadata_graph._FILE_WORDS.values()]
    words += [*metadata_tree._INDEX_TITLES.values(), _LEGEND, *_BADGE]
    words += [*manifest_repr._SUMMARY_HEADERS, *manifest_repr._STATS_HEADERS]
    words += [metadata_graph.V3_CAPTION, metadata_graph.V4_CAPTION,
              metadata_graph.V4_REAL_CAPTION, metadata_graph.V4_LAYOUT_CAPTION,
              metadata_graph.V4_GRAPH_NOTE]
    assert [w for w in words if w not in ZH] == []


# --------------------------------------------------------------------------- the objects


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A warehouse whose objects cover every kind of repr: a v2 table with tags, a branch, a
    rollback, schema and spec evolution, a sort order and position deletes; a v3 table with a
    deletion vector; a v4 table with a root manifest and a manifest DV; a view with three
    versions and a rollback."""
    wh = icenb.warehouse(tmp_path_factory.mktemp("zh"))
    t2 = wh.create_table("shop.orders", "oid long, ts timestamp, cat string",
                         partition_by=["day(ts)", "bucket(4, oid)"], format_version=2,
                         properties={"write.delete.mode": "merge-on-read"})
    base = dt.datetime(2024, 1, 1)
    t2.append([{"oid": i, "ts": base + dt.timedelta(days=i % 3), "cat": "k"} for i in range(6)])
    t2.create_tag("t1")
    t2.append([{"oid": 10, "ts": base, "cat": "z"}])
    with t2.update_schema() as u:
        u.add_column("price", "double")
    with t2.update_spec() as s:
        s.add_field("identity(cat)")
    t2.replace_sort_order("oid")
    t2.append([{"oid": 11, "ts": base, "cat": "q", "price": 1.0}])
    t2.delete("oid = 1")
    t2.create_branch("feature")
    t2.append([{"oid": 12, "ts": base, "cat": "d"}], branch="feature")
    before = t2.metadata.current_snapshot_id
    t2.append([{"oid": 13, "ts": base, "cat": "e"}])
    assert before is not None
    t2.rollback_to(before)
    t3 = wh.create_table("shop.lines", "lid long, cat string", format_version=3,
                         properties={"write.delete.mode": "merge-on-read"})
    t3.append([{"lid": 1, "cat": "a"}, {"lid": 2, "cat": "b"}])
    t3.delete("lid = 1")
    t4 = wh.create_table("shop.events", "eid long, p int", partition_by=["p"],
                         format_version=4)
    t4.append([{"eid": p * 10 + i, "p": p} for p in (1, 2, 3) for i in range(2)])
    t4.append([{"eid": 40 + i, "p": 4} for i in range(2)])
    t4.delete("p = 2")
    t4.delete("eid = 40", mode="merge-on-read")
    v = wh.create_view("shop.recent", "SELECT oid FROM shop.orders", schema="oid long")
    v.replace("SELECT oid, cat FROM shop.orders", schema="oid long, cat string")
    v.replace({"spark": "SELECT oid, cat FROM shop.orders WHERE oid > 0",
               "trino": "SELECT oid, cat FROM shop.orders WHERE oid > 0"},
              schema="oid long, cat string")
    v.update_properties({"replace.drop-dialect.allowed": "true"})
    v.rollback_to(2)
    return {"wh": wh, "t2": t2.refresh(), "t3": t3.refresh(), "t4": t4.refresh(),
            "view": v.refresh()}


def _kinds(o: dict[str, Any]) -> dict[str, Any]:
    """Every object kind the display draws, by name."""
    wh, t2, t3, t4, v = o["wh"], o["t2"], o["t3"], o["t4"], o["view"]
    md = t2.metadata
    snaps = list(md.snapshots)
    out: dict[str, Any] = {
        "warehouse": wh, "catalog": wh.catalog, "table": t2, "table v3": t3, "table v4": t4,
        "table metadata": md, "schema": t2.schema, "field": t2.schema.fields[0],
        "type": t2.schema.fields[0].field_type, "partition spec": t2.spec,
        "partition field": t2.spec.fields[0], "sort order": t2.sort_order,
        "sort field": t2.sort_order.fields[0], "snapshot tree": t2.snapshots,
        "snapshot": snaps[-1], "summary": snaps[-1].summary, "branch": md.refs["feature"],
        "tag": md.refs["t1"], "snapshot log": t2.history, "metadata log": t2.metadata_log,
        "snapshot log entry": md.snapshot_log[0], "metadata log entry": md.metadata_log[0],
        "metadata tree": t2.metadata_tree(), "metadata tree v3": t3.metadata_tree(),
        "metadata tree v4": t4.metadata_tree(), "metadata graph": t2.metadata_graph(),
        "metadata graph v4": t4.metadata_graph(), "layout comparison": t2.compare_layouts(),
        "layout comparison v4": t4.compare_layouts(), "schema history": t2.schema_history(),
        "spec history": t2.spec_history(), "diff": t2.diff(snaps[0].snapshot_id,
                                                            snaps[-1].snapshot_id),
        "diff of a delete": t2.diff(snaps[2].snapshot_id, snaps[3].snapshot_id),
        "changelog": t2.changes(None, identifier_columns="oid"),
        "changelog v3": t3.changes(None),
        "inspect menu": t2.inspect, "scan": t2.scan("oid > 2"),
        "scan plan": t2.scan("oid > 2").plan(), "expire (dry run)":
            t2.expire_snapshots(dry_run=True), "deletion vector":
            DeletionVector.from_positions([1, 5, 9]),
        "view": v, "view metadata": v.metadata, "view version": v.versions[-1],
        "view version log": v.version_log, "view version diff": v.compare(1, 3),
        "view representation": v.versions[-1].representations[0],
        "view history entry": v.metadata.version_log[0],
    }
    # the graphs on their own (as widgets show them) and objects side by side
    out["graph: snapshot tree"] = snapshot_tree(t2.snapshots)
    out["graph: snapshot strip"] = snapshot_strip(t2.snapshots)
    out["graph: snapshot log"] = snapshot_log_timeline(t2.history)
    out["graph: metadata log"] = metadata_log_timeline(t2.metadata_log)
    out["graph: view version log"] = view_version_timeline(v.version_log)
    out["graph: metadata tree"] = metadata_tree_figure(t2.metadata_tree())
    out["graph: metadata graph"] = metadata_graph_figure(t4.metadata_graph())
    out["graph: schema versions"] = schema_graph(t2.schema_history())
    out["graph: spec versions"] = spec_graph(t2.spec_history())
    out["graph: diff"] = diff_graph(out["diff of a delete"])
    for i, fig in enumerate(layout_comparison_figures(t2.compare_layouts())):
        out[f"graph: layout {i}"] = fig
    out["side by side"] = icenb.side_by_side(t2.schema, t2.spec, titles=["a", "b"])
    out["nothing side by side"] = icenb.side_by_side()
    plan = out["scan plan"]
    out["file scan task"] = next(iter(plan.take([0]).tasks))
    for tbl, tag in ((t2, "v2"), (t3, "v3")):
        snap = tbl.current_snapshot
        manifests = read_manifest_list(tbl.io, snap, tbl.format_version)
        out[f"manifest file {tag}"] = manifests[0]
        out[f"field summary {tag}"] = manifests[0].partitions[0] if manifests[0].partitions \
            else None
        for i, (_, e) in enumerate(tbl.metadata_tree().entries()):
            out[f"content file {tag} {i}"] = e.file
            out[f"manifest entry {tag} {i}"] = ManifestEntry(
                e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number, e.file)
    s4 = t4.current_snapshot
    root = read_root_manifest(t4.io, s4.root_manifest, snapshot_id=s4.snapshot_id,
                              sequence_number=s4.sequence_number)
    out["v4 root manifest"] = root
    for i, e in enumerate(root.entries):
        out[f"v4 content entry {i}"] = e
    out["v4 leaf manifest"] = read_leaves(t4.io, root)[0]
    for name, _, _ in METADATA_TABLES[:12]:
        out[f"inspect.{name}"] = getattr(t2.inspect, name)()
    try:
        with t2.manage_snapshots() as m:
            m.create_tag("t9", snaps[0].snapshot_id)
            m.remove_tag("t1")
            raise _Abort  # leaves the table as it was; the pending changes stay drawable
    except _Abort:
        out["ref changes"] = m
    return {k: v for k, v in out.items() if v is not None}


class _Abort(Exception):
    pass


def _rendered(obj: Any) -> tuple[str, str]:
    r = arrow_table_rendered(obj) if isinstance(obj, pa.Table) else render(obj)
    return r.text, r.html


def _values(kinds: dict[str, Any], name: str, obj: Any) -> set[str]:
    """Names and values a zh rendering keeps: column names of inspect results, the field
    names of the v4 proposal's content entries (kv keys of their repr)."""
    out = {kinds["warehouse"].catalog.name}
    if isinstance(obj, pa.Table):
        out |= {*obj.column_names, name.removeprefix("inspect.")}
    if name.startswith("view"):  # version summary keys (spec field names)
        out |= {k for v in kinds["view"].versions for k in v.summary}
    if name.startswith("v4"):
        out |= {"status", "location", "content_type", "file_format", "record_count"}
    return out


def test_zh_renderings_of_every_kind_have_no_english_label(objects: dict[str, Any]) -> None:
    left: dict[str, list[str]] = {}
    with icenb.set_options(language="zh", display_graph_renderer="none"):
        kinds = _kinds(objects)  # graphs are drawn when made: in the language in effect
        rendered = {name: _rendered(obj) for name, obj in kinds.items()}
    assert len(kinds) > 80
    for name, (text, html_) in rendered.items():
        values = _values(kinds, name, kinds[name])
        for which, shown in (("text", text), ("html", visible_text(html_, is_html=True))):
            found = english_labels(shown, values)
            if found:
                left[f"{name} ({which})"] = found
        assert has_cjk(text) or name in ("type", "partition field", "sort field",
                                         "snapshot log entry", "metadata log entry",
                                         "view representation", "view history entry",
                                         "field summary v2", "field summary v3"), name
    assert not left, "\n".join(f"{k}: {v}" for k, v in left.items())


def test_en_renderings_have_no_chinese_and_do_not_depend_on_the_catalog(
        objects: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    with icenb.set_options(language="en", display_graph_renderer="none"):
        en = {name: _rendered(obj) for name, obj in _kinds(objects).items()}
    assert not [n for n, (text, html_) in en.items() if has_cjk(text) or has_cjk(html_)]
    monkeypatch.setattr("icenb.labels.ZH", {})  # English never reads the catalog
    with icenb.set_options(display_graph_renderer="none"):
        again = {name: _rendered(obj) for name, obj in _kinds(objects).items()}
    assert again == en


def test_zh_graphs_render_to_svg(objects: dict[str, Any]) -> None:
    with icenb.set_options(language="zh", display_graph_renderer="wasm"):
        fig = render(objects["t2"].snapshots).html
    data = re.search(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", fig)
    assert data is not None
    svg = base64.b64decode(data.group(1)).decode("utf-8")
    assert "当前" in svg and "append" in svg  # a label translated, a value kept


def test_zh_text_tables_align_by_display_width(objects: dict[str, Any]) -> None:
    with icenb.set_options(language="zh"):
        text = render(objects["t2"]).text
    from icenb.display.kit.text import width
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.strip().startswith("名称"))
    col = width(lines[head][: lines[head].index("类型")])
    for ln in lines[head + 1: head + 4]:
        kind = next(k for k in ("分支", "标签") if k in ln)
        assert width(ln[: ln.index(kind)]) == col


def test_the_check_finds_english_labels_and_skips_values() -> None:
    assert fragments("{n:,} files could not be deleted") == [" files could not be deleted"]
    assert english_labels("最近的快照 Recent snapshots · 3 个文件") == ["Recent snapshots"]
    assert english_labels("added-data-files: 3 · db.orders · data · {status: 1, file…",
                          values=["t1"]) == []
    html = ('<div><code>Schema</code><pre>SELECT 1</pre><b>applies to</b>'
            '<pre>digraph "g" { "a" [label="removed by DV"]; }</pre></div>')
    assert english_labels(visible_text(html, is_html=True)) == ["removed by DV", "applies to"]
