"""Short snapshot labels (S3) in drawings of small tables: one rule, the same label in every
view and after an expiry, the full id a hover or a column away, and titles that name a table
instead of printing a temporary path."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render
from icenb.display.diff import diff_graph
from icenb.display.history.timeline import snapshot_log_timeline
from icenb.display.history.tree import snapshot_tree
from icenb.display.kit.fmt import snapshot_label, table_place
from icenb.display.kit.graph import FIT_WIDTH_PX, Graph, svg_width_px
from icenb.display.metadata_graph import layout_comparison_figures, metadata_graph_figure
from icenb.display.metadata_tree import metadata_tree_figure
from icenb.errors import ValidationError
from icenb.spec.snapshot import Snapshot
from icenb.table.explore.snapshot_labels import snapshot_labels
from icenb.table.table import Table


def _snap(sid: int, seq: int, ms: int) -> Snapshot:
    return Snapshot(snapshot_id=sid, parent_snapshot_id=None, sequence_number=seq,
                    timestamp_ms=ms, manifest_list=f"snap-{sid}.avro")


def _table(root: Path, version: int = 2) -> Table:
    t = icenb.warehouse(root).create_table("db.t", "id long", format_version=version)
    for i in range(4):
        t.append(pa.table({"id": pa.array([i], pa.int64())}))
    return t


def _ids(t: Table) -> list[int]:
    return [s.snapshot_id for s in t.snapshots]


def test_the_rule_sequence_numbers_v1_positions_upgrades_and_duplicates() -> None:
    v2 = [_snap(111, 3, 30), _snap(222, 1, 10), _snap(333, 2, 20)]
    assert snapshot_labels(v2) == {222: "S1", 333: "S2", 111: "S3"}
    v1 = [_snap(9, 0, 50), _snap(8, 0, 40)]   # by timestamp, not by metadata order
    assert snapshot_labels(v1) == {8: "S1", 9: "S2"}
    # upgraded to v2: the v1 snapshots keep apart from the v2 S1, S2, ...
    assert snapshot_labels([*v1, _snap(7, 1, 60)]) == {8: "S0.1", 9: "S0.2", 7: "S1"}
    # one sequence number twice (not a spec-following writer): told apart by a letter
    assert snapshot_labels([_snap(1, 5, 1), _snap(2, 5, 2)]) == {1: "S5", 2: "S5b"}


def test_the_threshold_option(tmp_path: Path) -> None:
    snaps = [_snap(i, i, i) for i in range(1, 6)]
    assert snapshot_label(snaps, 3) == "S3"
    with icenb.set_options(display_short_ids_max=4):   # five snapshots: more than the limit
        assert snapshot_label(snaps, 3) == "3" and snapshot_labels(snaps) == {}
    with icenb.set_options(display_short_ids_max=0):   # 0: always full ids
        assert snapshot_labels(snaps) == {}
    with pytest.raises(ValidationError, match="non-negative"):
        icenb.set_options(display_short_ids_max=-1)
    t = _table(tmp_path)
    with icenb.set_options(display_short_ids_max=3):
        tree = snapshot_tree(t.snapshots)
        assert f"* {t.metadata.current_snapshot_id} (current, main)" in tree.text
        assert f'"{t.metadata.current_snapshot_id}\\n' in tree.dot


def test_one_snapshot_has_one_label_in_every_view_and_after_an_expiry(tmp_path: Path) -> None:
    t = _table(tmp_path)
    ids = _ids(t)
    third, last = ids[2], ids[3]
    label = snapshot_label(t.metadata, third)
    assert label == "S3"
    # snapshot tree: the node, the tooltip, the outline and the table column
    tree = snapshot_tree(t.snapshots)
    assert re.search(rf'"s{third}" \[label="S3\\n[^"]*"[^\]]*tooltip="snapshot {third}"',
                     tree.dot)
    assert f"* S3 {third} " in tree.text
    html = mimebundle(t.snapshots)["text/html"]
    assert f"<td>S3</td><td><code>{third}</code></td>" in html
    # metadata tree: the title, the id in the sub-line and in the node's tooltip
    mt = t.metadata_tree(third)
    fig = metadata_tree_figure(mt)
    assert fig.title == "snapshot S3" and f'tooltip="snapshot S3 = {third}"' in fig.dot
    assert f"snapshot S3 = {third}" in render(mt).html
    # diff: the title, the full ids on the line below, the graph's tooltips
    d = t.diff(third, last)
    lines = render(d).text.splitlines()
    assert lines[0] == "Snapshot diff S3 → S4" and f"S3 = {third}; S4 = {last}" in lines[1]
    assert f'tooltip="snapshot {third}"' in diff_graph(d).dot
    # snapshot log and metadata graph
    assert "\\nS3\\n" in snapshot_log_timeline(t.history).dot
    assert "S3 · Snapshot" in metadata_graph_figure(t.metadata_graph([third, last])).dot
    # after the first two snapshots expire, the third is still S3
    t.expire_snapshots(snapshot_ids=ids[:2])
    assert len(t.snapshots) == 2
    assert snapshot_label(t.metadata, third) == "S3"
    assert metadata_tree_figure(t.metadata_tree(third)).title == "snapshot S3"
    assert f"* S3 {third} " in snapshot_tree(t.snapshots).text


def test_titles_name_the_table_not_a_temporary_path(tmp_path: Path) -> None:
    t = _table(tmp_path)
    g = metadata_graph_figure(t.metadata_graph())
    assert g.title == "4 snapshots of db.t" and str(tmp_path) not in g.text.splitlines()[0]
    opened = icenb.open(t.location)   # by location: the last components of its path
    g2 = metadata_graph_figure(opened.metadata_graph())
    assert g2.title == "4 snapshots of db/t" and str(tmp_path) not in render(
        opened.metadata_graph()).html.split("icenb-graph")[0]
    # the table metadata card and a scan are titled by the table's place too
    assert '<span class="icenb-title">db/t</span>' in render(t.metadata).html
    assert render(t.scan()).text.splitlines()[0] == "Scan of db/t"
    assert table_place(None, "/tmp/icenb-06-x1y2/v3/remove_from_leaf") == "v3/remove_from_leaf"
    assert table_place(None, "/tmp/icenb-06-x1y2/remove_from_leaf") == "remove_from_leaf"
    assert table_place("shop.orders", "/tmp/icenb-06-x1y2/shop/orders") == "shop.orders"


def test_a_wide_metadata_tree_is_drawn_left_to_right(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p long", partition_by=["p"])
    for i in range(6):   # six manifests of five files each, side by side top-down
        t.append(pa.table({"id": pa.array(range(5), pa.int64()),
                           "p": pa.array([i * 10 + k for k in range(5)], pa.int64())}))
    fig = metadata_tree_figure(t.metadata_tree())
    assert 'rankdir="TB"' in fig.dot
    svg = fig.svg()
    if svg is None:
        pytest.skip("no graph renderer")
    top_down = Graph(metadata_tree_figure(t.metadata_tree()).dot, "", title="").svg()
    assert top_down is not None and svg_width_px(top_down) > FIT_WIDTH_PX
    assert 'rankdir="LR"' in fig.dot and svg_width_px(svg) < svg_width_px(top_down)


def test_a_wide_metadata_graph_is_drawn_left_to_right(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p long", partition_by=["p"])
    for i in range(5):   # five snapshots side by side top-down
        t.append(pa.table({"id": pa.array([i, i + 1], pa.int64()),
                           "p": pa.array([2 * i, 2 * i + 1], pa.int64())}))
    fig = metadata_graph_figure(t.metadata_graph([s.snapshot_id for s in t.snapshots]))
    top_down = Graph(fig.dot, "", title="").svg()
    if top_down is None:
        pytest.skip("no graph renderer")
    svg = fig.svg()
    assert svg is not None and svg_width_px(top_down) > FIT_WIDTH_PX
    assert 'rankdir="LR"' in fig.dot and svg_width_px(svg) < svg_width_px(top_down)


def test_no_drawing_carries_the_tables_path(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    t.delete("id = 1", mode="merge-on-read")
    ids = _ids(t)
    shown = [t.snapshots, t.history, t.metadata_log, t.metadata_tree(),
             t.metadata_graph(ids[-3:]), t.diff(ids[0], ids[-1]), t.compare_layouts()]
    with icenb.set_options(display_graph_renderer="auto"):
        for obj in shown:
            html = mimebundle(obj)["text/html"]
            svgs = [base64.b64decode(x).decode() for x in
                    re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html)]
            assert svgs, type(obj).__name__
            for svg in svgs:   # titles, labels and tooltips: file names relative to the table
                assert str(tmp_path) not in svg, type(obj).__name__
            # no 19-digit id in a title: snapshots are S1, S2, ... in a small table
            for title in re.findall(r'class="icenb-title">([^<]*)<', html):
                assert not re.search(r"\d{15,}", title), (type(obj).__name__, title)
            assert str(tmp_path) not in "".join(
                re.findall(r'class="icenb-title">([^<]*)<', html))


def test_a_snapshot_card_is_titled_by_its_label(tmp_path: Path) -> None:
    t = _table(tmp_path)
    s = t.current_snapshot
    assert s is not None
    r = render(s)
    assert '<span class="icenb-title">S4</span>' in r.html
    assert f"<code>{s.snapshot_id}</code>" in r.html   # the full id: the card's first row
    with icenb.set_options(display_short_ids_max=0):
        assert f'<span class="icenb-title">{s.snapshot_id}</span>' in render(s).html
    v1 = _table(tmp_path / "v1", 1).current_snapshot   # sequence number 0: by its id
    assert v1 is not None and f'icenb-title">{v1.snapshot_id}<' in render(v1).html


def test_a_wide_layout_comparison_is_drawn_left_to_right(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p long", partition_by=["p"])
    for i in range(4):   # four manifests of two files each: too wide for half a notebook
        t.append(pa.table({"id": pa.array([i, i + 1], pa.int64()),
                           "p": pa.array([2 * i, 2 * i + 1], pa.int64())}))
    left, right = layout_comparison_figures(t.compare_layouts())
    for g in (left, right):
        top_down = Graph(g.dot, "", title="").svg()
        if top_down is None:
            pytest.skip("no graph renderer")
        svg = g.svg()
        assert svg is not None and svg_width_px(svg) < svg_width_px(top_down)
        # rows' edges leave the right side of the table's last cell
        assert 'rankdir="LR"' in g.dot and re.search(r'"[LR]":"M1":e ->', g.dot)
