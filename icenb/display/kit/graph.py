"""A drawn graph: DOT source, plain-text outline, and SVG rendered on demand."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icenb.display.kit import html as h
from icenb.display.kit.render import render_svg
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.reprs import safe_repr


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
    """

    def __init__(self, dot: str, text: str, *, title: str, kind: str = "Graph",
                 caption: str = "", nodes: Mapping[str, GraphNode] | None = None,
                 svg: str | None = None) -> None:
        self.dot = dot
        self.text = text
        self.title = title
        self.kind = kind
        self.caption = caption
        self.nodes: Mapping[str, GraphNode] = {} if nodes is None else nodes
        self._svg = svg

    def svg(self) -> str | None:
        """The SVG element, or None when no renderer is available."""
        if self._svg is not None:
            return self._svg
        return render_svg(self.dot)[0]

    def _svg_or_reason(self) -> tuple[str | None, str | None]:
        if self._svg is not None:
            return self._svg, None
        return render_svg(self.dot)

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
