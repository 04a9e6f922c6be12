"""GraphView's Python side, and the wheel carrying its front end."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import icenb
from icenb.display.history.tree import snapshot_tree
from icenb.widgets import GraphView
from tests.widgets.conftest import History

REPO = Path(__file__).resolve().parents[2]


def test_show_sends_the_svg_and_the_pickable_nodes(history: History) -> None:
    t = history.table
    graph = snapshot_tree(t.snapshots)
    gv = GraphView(graph)
    assert gv.svg.startswith("<svg") and gv.svg == graph.svg()
    for s in t.metadata.snapshots:
        node = gv.node_for(snapshot_id=s.snapshot_id)
        assert node == f"s{s.snapshot_id}"
        assert f"<title>{node}</title>" in gv.svg        # the same node the SVG draws
        assert gv.nodes[node]["snapshot_id"] == str(s.snapshot_id)   # a string: 64-bit ids
        assert gv.snapshot_of(node) == s.snapshot_id
    child = f"s{history.second}"
    assert gv.nodes[child]["parents"] == [f"s{history.first}"]
    assert child in gv.nodes[f"s{history.first}"]["children"]


def test_a_selection_whose_node_is_gone_is_cleared(history: History) -> None:
    gv = GraphView(snapshot_tree(history.table.snapshots))
    gv.selected = f"s{history.first}"
    gv.compare = f"s{history.dev}"
    gv.show(snapshot_tree(history.table.snapshots, max_nodes=1))
    assert gv.selected == "" and gv.compare == ""


def test_expand_messages_reach_handlers_only_for_known_nodes(history: History) -> None:
    gv = GraphView(snapshot_tree(history.table.snapshots))
    got: list[str] = []
    gv.on_expand(got.append)
    gv._on_message(gv, {"event": "expand", "node": "nope"}, [])
    gv._on_message(gv, {"event": "other", "node": f"s{history.first}"}, [])
    gv._on_message(gv, {"event": "expand", "node": f"s{history.first}"}, [])
    assert got == [f"s{history.first}"]


def test_the_front_end_is_a_local_module_without_network_imports() -> None:
    js = (REPO / "icenb" / "widgets" / "static" / "graph_view.js").read_text()
    assert "export default" in js
    for banned in ("http://", "https://", "import(", "cdn", "unpkg", "jsdelivr"):
        assert banned not in js.lower(), banned
    assert GraphView._esm is not None and GraphView._css is not None


def test_the_wheel_ships_the_front_end(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(tmp_path), str(REPO)], check=True, capture_output=True, timeout=300)
    wheel = next(tmp_path.glob("icenb-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ("icenb/widgets/static/graph_view.js", "icenb/widgets/static/graph_view.css",
              "icenb/display/static/icenb.css",
              "icenb/widgets/time_travel.py", "icenb/widgets/view_versions.py"):
        assert f in names, f
    assert not any("node_modules" in n for n in names)
    assert icenb.__version__ in wheel.name
