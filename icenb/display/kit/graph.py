"""A drawn graph: DOT source, plain-text outline, and SVG rendered on demand."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icenb.display.kit import html as h
from icenb.display.kit.render import render_svg
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.reprs import safe_repr

#: Wider SVGs do not fit a notebook's output area (about 900 CSS pixels) and are scaled down.
FIT_WIDTH_PX = 900


def svg_width_px(svg: str) -> float:
    """The width of a Graphviz SVG in CSS pixels (Graphviz writes points: 1 pt = 4/3 px);
    0 when it names none."""
    m = re.search(r'<svg[^>]*?\bwidth="([0-9.]+)(pt|px)?"', svg)
    if m is None:
        return 0.0
    return float(m.group(1)) * (4 / 3 if m.group(2) in (None, "pt") else 1)


@safe_repr
@dataclass(frozen=True)
class GraphNode:
    """One drawn node as an interactive view sees it: hover text, kind, what it stands for
    (a snapshot or a view version), and its neighbours for keyboard moves.

    ``parents`` and ``children`` name other nodes of the same graph (DOT node ids).
    """

    label: str
    kind: str
    snapshot_id: int | None = None
    version_id: int | None = None
    fold: bool = False
    parents: tuple[str, ...] = ()
    children: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON for a browser: ids as decimal strings (64-bit ids do not fit a JS number)."""
        return {"label": self.label, "kind": self.kind,
                "snapshot_id": None if self.snapshot_id is None else str(self.snapshot_id),
                "version_id": None if self.version_id is None else str(self.version_id),
                "fold": self.fold, "parents": list(self.parents),
                "children": list(self.children)}


class Graph:
    """A graph icenb drew: ``.dot`` (Graphviz source), ``.text`` (outline), ``.svg()``.

    In Jupyter it shows as inline SVG (theme-aware); without a renderer, as DOT text; in a
    console, as the outline. ``nodes`` maps the DOT ids of the nodes a person can pick to a
    :class:`GraphNode` (the widgets' clickable graph uses it). A graph drawn without DOT
    (e.g. a time-scaled strip) passes its SVG as ``svg`` in Graphviz's structure: one
    ``<g class="node ...">`` per node whose first ``<title>`` is the node id.

    ``wide_dot`` is the same graph laid out across (left to right): drawn instead of ``dot``
    when ``dot`` renders wider than ``fit_width`` CSS pixels (a notebook: :data:`FIT_WIDTH_PX`;
    half of it for one of two pictures side by side) and it is narrower; ``.dot`` then
    becomes it.
    """

    def __init__(self, dot: str, text: str, *, title: str, kind: str = "Graph",
                 caption: str = "", nodes: Mapping[str, GraphNode] | None = None,
                 svg: str | None = None, wide_dot: str | None = None,
                 fit_width: float = 0.0) -> None:
        self.dot = dot
        self._wide_dot = wide_dot
        self._fit = fit_width or FIT_WIDTH_PX
        self.text = text
        self.title = title
        self.kind = kind
        self.caption = caption
        self.nodes: Mapping[str, GraphNode] = {} if nodes is None else nodes
        self._svg = svg

    def svg(self) -> str | None:
        """The SVG element, or None when no renderer is available."""
        return self._svg_or_reason()[0]

    def _svg_or_reason(self) -> tuple[str | None, str | None]:
        if self._svg is not None:
            return self._svg, None
        svg, why = render_svg(self.dot)
        if svg is not None and self._wide_dot is not None and svg_width_px(svg) > self._fit:
            other, _ = render_svg(self._wide_dot)
            if other is not None and svg_width_px(other) < svg_width_px(svg):
                self.dot, svg = self._wide_dot, other
            self._wide_dot = None
        if svg is not None:
            self._svg = svg
        return svg, why

    def save(self, path: str | Path) -> Path:
        """Write the SVG (``.svg``) or the DOT source (any other suffix) to ``path``."""
        p = Path(path)
        if p.suffix.lower() == ".svg":
            svg, why = self._svg_or_reason()
            if svg is None:
                raise RuntimeError(f"cannot render SVG: {why}")
            p.write_text(svg, encoding="utf-8")
        else:
            p.write_text(self.dot, encoding="utf-8")
        return p

    def html_fragment(self) -> str:
        """The graph as an HTML fragment: the SVG, or the DOT text with the reason."""
        svg, why = self._svg_or_reason()
        if svg is not None:
            # An <img> with a data URI, not inline <svg>: JupyterLab strips <svg> (and <style>)
            # from untrusted notebooks but keeps data-URI images, so the graph shows either way.
            # The palette (pastel fills, dark text, mid-grey edges) reads on light and dark.
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            body = (f'<div class="icenb-graph"><img alt="{h.esc(self.title)}" '
                    f'src="data:image/svg+xml;base64,{data}"/></div>')
        else:
            body = (h.muted(t("no graph renderer ({why}); the DOT source follows", why=why))
                    + h.pre(self.dot))
        if self.caption:
            body += f'<div class="icenb-muted">{h.esc(self.caption, 2000)}</div>'
        return body


@register(Graph, text_repr=True)
def _graph(g: Graph) -> Rendered:
    return Rendered(h.card(g.kind, g.title, "", g.html_fragment()), g.text)
