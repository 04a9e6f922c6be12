"""Rich display: HTML and text reprs for every public object, and graphs (DESIGN.md, display/).

Importing this package registers the renderers and attaches ``_repr_mimebundle_`` to the
classes of the lower layers; those layers never import it.
"""

from __future__ import annotations

from icenb.display.history.timeline import snapshot_strip, view_version_timeline
from icenb.display.history.tree import fold_members, snapshot_tree
from icenb.display.kit import html
from icenb.display.kit.graph import Graph
from icenb.display.metadata_tree import metadata_tree_figure
from icenb.display.registry import Rendered, install, mimebundle, register, render
from icenb.options import DisplayOptions, get_options, reset_options, set_options

__all__ = [
    "DisplayOptions",
    "Graph",
    "Rendered",
    "fold_members",
    "get_options",
    "html",
    "install",
    "metadata_tree_figure",
    "mimebundle",
    "register",
    "render",
    "reset_options",
    "set_options",
    "snapshot_strip",
    "snapshot_tree",
    "view_version_timeline",
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
    root_manifest_repr,
    evolution_history,
    diff,
    changelog,
    rewrite_data_files_repr,
    rewrite_manifests_repr,
    rewrite_position_deletes_repr,
)
from icenb.display.kit import side_by_side  # noqa: F401
from icenb.display.history import timeline, tree  # noqa: F401

install()
