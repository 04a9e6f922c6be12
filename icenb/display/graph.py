"""A drawn graph: DOT source, plain-text outline, and SVG rendered on demand."""

from __future__ import annotations

import base64
from pathlib import Path

from icenb.display import html as h
from icenb.display.registry import Rendered, register
from icenb.display.render import render_svg


class Graph:
    """A graph icenb drew: ``.dot`` (Graphviz source), ``.text`` (outline), ``.svg()``.

    In Jupyter it shows as inline SVG (theme-aware); without a renderer, as DOT text; in a
    console, as the outline.
    """

    def __init__(self, dot: str, text: str, *, title: str, kind: str = "Graph",
                 caption: str = "") -> None:
        self.dot = dot
        self.text = text
        self.title = title
        self.kind = kind
        self.caption = caption

    def svg(self) -> str | None:
        """The SVG element, or None when no renderer is available."""
        return render_svg(self.dot)[0]

    def save(self, path: str | Path) -> Path:
        """Write the SVG (``.svg``) or the DOT source (any other suffix) to ``path``."""
        p = Path(path)
        if p.suffix.lower() == ".svg":
            svg, why = render_svg(self.dot)
            if svg is None:
                raise RuntimeError(f"cannot render SVG: {why}")
            p.write_text(svg, encoding="utf-8")
        else:
            p.write_text(self.dot, encoding="utf-8")
        return p

    def html_fragment(self) -> str:
        """The graph as an HTML fragment: the SVG, or the DOT text with the reason."""
        svg, why = render_svg(self.dot)
        if svg is not None:
            # An <img> with a data URI, not inline <svg>: JupyterLab strips <svg> (and <style>)
            # from untrusted notebooks but keeps data-URI images, so the graph shows either way.
            # The palette (pastel fills, dark text, mid-grey edges) reads on light and dark.
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            body = (f'<div class="icenb-graph"><img alt="{h.esc(self.title)}" '
                    f'src="data:image/svg+xml;base64,{data}"/></div>')
        else:
            body = (h.muted(f"no graph renderer ({why}); the DOT source follows")
                    + h.pre(self.dot))
        if self.caption:
            body += f'<div class="icenb-muted">{h.esc(self.caption, 2000)}</div>'
        return body


@register(Graph, text_repr=True)
def _graph(g: Graph) -> Rendered:
    return Rendered(h.card(g.kind, g.title, "", g.html_fragment()), g.text)
