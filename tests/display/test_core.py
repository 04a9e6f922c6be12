"""The display core: options, folding, escaping, DOT building, SVG rendering, safe reprs."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

import icenb
from icenb.display import Graph, Rendered, mimebundle, register, render, reset_options
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit.dot import Cell, Dot, quote, table_label
from icenb.display.kit.fmt import fold, size, timestamp
from icenb.display.kit.render import render_svg
from icenb.display.registry import install
from icenb.errors import ValidationError


def test_set_options_validates_and_restores() -> None:
    before = icenb.get_options()
    with icenb.set_options(display_max_rows=3):
        assert icenb.get_options().display_max_rows == 3
    assert icenb.get_options() == before
    for bad in ({"display_max_rows": 0}, {"display_max_rows": "5"}, {"no_such_option": 1},
                {"display_graph_renderer": "gnuplot"}, {"display_max_rows": True}):
        with pytest.raises(ValidationError) as e:
            icenb.set_options(**bad)
        assert e.value.field == next(iter(bad))
    assert icenb.get_options() == before  # a rejected change changes nothing


def test_fold_keeps_head_and_tail_and_counts_the_rest() -> None:
    head, n, tail = fold(list(range(100)), 5)
    assert (list(head), n, list(tail)) == ([0, 1, 2], 95, [98, 99])
    assert fold([1, 2], 5) == ([1, 2], 0, ())


def test_html_table_folds_and_escapes() -> None:
    rows = [[h.esc(f"<r{i}>")] for i in range(50)]
    out = h.table(["name & co"], rows, limit=4, what="files")
    assert "name &amp; co" in out and "&lt;r0&gt;" in out and "&lt;r49&gt;" in out
    assert "&lt;r10&gt;" not in out
    assert "… 46 more files …" in out
    text = tx.table(["name"], [[f"r{i}"] for i in range(50)], limit=4, what="files")
    assert text.splitlines() == ["name", "r0", "r1", "… 46 more files …", "r48", "r49"]


def test_strings_are_cut_to_the_option() -> None:
    with icenb.set_options(display_max_string=10):
        assert h.esc("x" * 50) == "x" * 9 + "…"


def test_formatters() -> None:
    assert timestamp(0) == "1970-01-01 00:00:00.000"
    assert timestamp(1_700_000_000_123) == "2023-11-14 22:13:20.123"
    assert size(512) == "512 B" and size(3 * 1024 * 1024) == "3.0 MiB"


def test_dot_escapes_labels_and_html_tables() -> None:
    d = Dot("g")
    d.node("a", 'say "hi"\\now', kind="snapshot")
    d.node("b", table_label("M <1>", [["ADDED", "f&g.parquet"]], kind="data_manifest"),
           kind="data_manifest", html=True)
    d.edge("a", "b", label="ADDED")
    src = d.source()
    assert quote('say "hi"\\now') in src
    assert "M \\<1\\>" in src and "f&g.parquet" in src  # record syntax escaped
    assert '"a" -> "b" [label=" ADDED "];' in src
    assert 'bgcolor="transparent"' in src
    assert d.source() == src  # deterministic
    with icenb.set_options(display_graph_renderer="wasm"):
        svg, _ = render_svg(src)
    assert svg is not None and "M &lt;1&gt;" in svg and "f&amp;g.parquet" in svg  # drawn


def test_table_label_aligns_columns_and_keeps_ports() -> None:
    label = table_label("Manifest", [[Cell("ADDED", port="r0"), "a|b.parquet"], ["EXISTING"]],
                        kind="data_manifest")
    d = Dot("g")
    d.node("m", label, kind="data_manifest", html=True)
    d.node("f", "a|b.parquet", kind="data_file")
    d.edge("m:r0", "f")
    src = d.source()
    assert '"{Manifest|{{<r0> ADDED\\l|EXISTING\\l}|{a\\|b.parquet\\l| \\l}}}"' in src
    assert '"m":"r0" -> "f"' in src
    with icenb.set_options(display_graph_renderer="wasm"):
        svg, why = render_svg(src)
    assert why is None and svg is not None and "a|b.parquet" in svg and "EXISTING" in svg
    with pytest.raises(ValueError):
        d.node("x", "plain text", kind="data_file", html=True)


def test_render_svg_with_wasm_and_without_renderer() -> None:
    dot = Dot("g")
    dot.node("s1", "Snapshot 1", kind="snapshot")
    dot.node("m", "Manifest <x>", kind="data_manifest")
    dot.edge("s1", "m")
    src = dot.source()
    with icenb.set_options(display_graph_renderer="wasm"):
        svg, why = render_svg(src)
    assert why is None and svg is not None
    assert svg.startswith("<svg") and "<?xml" not in svg and "<!--" not in svg
    assert "Snapshot 1" in svg and "Manifest &lt;x&gt;" in svg
    with icenb.set_options(display_graph_renderer="wasm"):
        shown = Graph(src, "s1", title="t")._repr_mimebundle_()  # type: ignore[attr-defined]
    uri = re.search(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', shown["text/html"])
    assert uri is not None and base64.b64decode(uri.group(1)).decode() == svg
    with icenb.set_options(display_graph_renderer="none"):
        g = Graph(src, "s1\n  m", title="t")
        bundle = g._repr_mimebundle_()  # type: ignore[attr-defined]
    assert "<svg" not in bundle["text/html"]
    assert "digraph" in bundle["text/html"]  # the DOT text is shown instead
    assert bundle["text/plain"] == "s1\n  m"


def test_broken_dot_shows_the_source_and_the_reason() -> None:
    with icenb.set_options(display_graph_renderer="wasm"):
        g = Graph("digraph { a -> ", "a", title="broken")
        out = g._repr_mimebundle_()["text/html"]  # type: ignore[attr-defined]
    assert "no graph renderer" in out and "digraph { a -&gt;" in out


def test_graph_save(tmp_path: Path) -> None:
    g = Graph('digraph { "a" -> "b" }', "a -> b", title="t")
    assert g.save(tmp_path / "g.dot").read_text().startswith("digraph")
    with icenb.set_options(display_graph_renderer="wasm"):
        assert "<svg" in g.save(tmp_path / "g.svg").read_text()


class _Thing:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"_Thing({self.name!r})"


class _Broken(_Thing):
    pass


@register(_Thing, text_repr=True)
def _render_thing(obj: _Thing) -> Rendered:
    if isinstance(obj, _Broken):
        raise KeyError("schema-id 7")
    return Rendered(h.card("Thing", obj.name), f"Thing {obj.name}")


install()


def test_registered_class_gets_a_bundle_with_one_style_block() -> None:
    bundle = mimebundle(_Thing("<b>"))
    assert bundle["text/plain"] == "Thing <b>"
    assert bundle["text/html"].count("<style>") == 1
    assert "&lt;b&gt;" in bundle["text/html"] and "<b>" not in bundle["text/html"]
    assert repr(_Thing("x")) == "Thing x"
    assert set(mimebundle(_Thing("x"), include=["text/plain"])) == {"text/plain"}
    assert set(mimebundle(_Thing("x"), exclude=["text/plain"])) == {"text/html"}


def test_a_failing_renderer_gives_a_fallback_not_an_exception() -> None:
    obj = _Broken("y")
    bundle = obj._repr_mimebundle_()  # type: ignore[attr-defined]
    assert "display failed (KeyError: 'schema-id 7')" in bundle["text/plain"]
    assert "_Thing('y')" in bundle["text/plain"]  # the original repr, not a recursion
    assert "could not be displayed" in bundle["text/html"]
    assert "display failed" in repr(obj)


def test_html_is_static_and_theme_aware() -> None:
    out = mimebundle(_Thing("x"))["text/html"]
    assert "<script" not in out and "onclick" not in out
    assert re.search(r"var\(--jp-[a-z0-9-]+", out)
    assert "id=" not in out  # no ids at all, so nothing can collide or vary


def test_unregistered_objects_render_as_their_repr() -> None:
    with reset_options():
        assert render([1, 2]).text == "[1, 2]"


class _Angry:
    def __repr__(self) -> str:
        raise RuntimeError("nope")


def test_fallbacks_escape_once_and_survive_a_raising_repr() -> None:
    assert "&lt;x&gt;" in render(["<x>"]).html and "&amp;lt;" not in render(["<x>"]).html
    r = render(_Angry())
    assert r.text == "<_Angry (repr failed: RuntimeError)>"
    broken = mimebundle(_Broken("<y>"))
    html = broken["text/html"]
    assert "_Thing(&#x27;&lt;y&gt;&#x27;)" in html and "&amp;lt;" not in html
