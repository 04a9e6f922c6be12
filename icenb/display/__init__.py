"""Rich display: HTML and text reprs for every public object, and graphs (DESIGN.md, display/).

Importing this package registers the renderers and attaches ``_repr_mimebundle_`` to the
classes of the lower layers; those layers never import it.
"""

from __future__ import annotations

from icenb.display.graph import Graph
from icenb.display.registry import Rendered, install, mimebundle, register, render
from icenb.options import DisplayOptions, get_options, reset_options, set_options

__all__ = [
    "DisplayOptions",
    "Graph",
    "Rendered",
    "get_options",
    "install",
    "mimebundle",
    "register",
    "render",
    "reset_options",
    "set_options",
]

# Renderers register themselves on import.
from icenb.display import (  # noqa: F401, I001
    schema_repr,
    snapshot_repr,
    view_repr,
    table_repr,
    scan_repr,
    inspect_repr,
    manifest_repr,
    metadata_tree,
    metadata_graph,
    side_by_side,
    v4_repr,
    snapshot_tree,
    timeline,
    evolution,
    diff,
)

install()
