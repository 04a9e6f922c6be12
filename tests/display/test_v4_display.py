"""Drawings and reprs of EXPERIMENTAL format-version 4 objects: the metadata graph of a v4
table (roots, leaves shared once, manifest DVs striking the rows they remove), drawn layouts
(``v4_layout``), ``icenb.side_by_side``, and the reprs of content entries, root and leaf
manifests (bounded, no I/O, never raising)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display.metadata_graph import metadata_graph_dot, v4_layout_figure
from icenb.display.registry import render
from icenb.io.file_io import FileIO
from icenb.io.root_manifest import (
    ContentManifest,
    LeafManifest,
    inline_manifest_dv,
    read_leaves,
    read_root_manifest,
)
from icenb.spec.content_entry import ContentEntry, ContentType, DeletionVectorRef
from icenb.spec.manifest import EntryStatus, FileFormat
from icenb.table.explore.metadata_graph import v4_layout
from tests.table.explore.test_v4_graph import _data, _leaf, _rows, _table

EVIL = '<b>&"x"'


@pytest.fixture
def table(tmp_path: Path) -> icenb.table.Table:
    """S1: leaf M1 (p=1..3); S2: p=4 at the root; S3: p=2 removed (manifest DV, ordinal 1);
    S4: one row of p=4 deleted (data DV at the root)."""
    t = _table(tmp_path)
    t.append(_rows(1, 2, 3))
    t.append(_rows(4))
    t.delete("p = 2")
    t.delete("id = 40", mode="merge-on-read")
    return t


def _root(t: icenb.table.Table) -> ContentManifest:
    s = t.current_snapshot
    assert s is not None and s.root_manifest is not None
    return read_root_manifest(t.io, s.root_manifest, snapshot_id=s.snapshot_id,
                              sequence_number=s.sequence_number)


def test_graph_draws_roots_leaves_and_manifest_dvs(table: icenb.table.Table) -> None:
    g = table.metadata_graph()
    dot = metadata_graph_dot(g)
    # four roots, one leaf node, one manifest DV node with an edge to the leaf
    assert dot.count('class="root"') == 4 and dot.count('class="data_manifest"') == 1
    assert dot.count('class="manifest_dv"') == 1
    assert '"DV1" -> "M1" [label=" applies to\\nremoves #1 "' in dot
    # the removed row is dimmed (dotted, grey) and says by which DV
    assert '"M1" -> ' in dot and "#1 ADDED\\nremoved by DV1" in dot
    removed_edge = next(ln for ln in dot.splitlines() if "removed by DV1" in ln)
    assert 'style="dotted"' in removed_edge
    kept_edge = next(ln for ln in dot.splitlines() if "#0 ADDED" in ln)
    assert 'style="dotted"' not in kept_edge
    # root entries carry their status on the edge
    assert dot.count('-> "DV1" [label=" ADDED "') == 1
    assert dot.count('-> "DV1" [label=" EXISTING "') == 1
    text = repr(g)
    assert "Snapshots (each root manifest and what it holds):" in text
    assert "#1 ADDED D2 (removed by DV1)" in text   # the proposal's names: D data files
    assert "DV1 applies to M1, removes #1 (inline" in text
    html = g._repr_mimebundle_()["text/html"]  # type: ignore[attr-defined]
    assert "Manifest deletion vectors" in html and "root of S2 ADDED" in html


def test_mixed_table_draws_a_list_then_roots(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    t.append(_rows(1, 2))
    t.upgrade(4)
    t.append(_rows(3))
    dot = metadata_graph_dot(t.metadata_graph())
    assert dot.count('class="manifest_list"') == 1 and dot.count('class="root"') == 1
    text = repr(t.metadata_graph())
    assert "Snapshots (each manifest list or root manifest and what it holds):" in text
    assert "manifest list snap-" in text and "root manifest root-" in text


def test_tree_and_comparison_render(table: icenb.table.Table) -> None:
    tree = table.metadata_tree()
    text = repr(tree)
    assert "Root manifest root-" in text and "1 manifest DV" in text
    assert "#1 ADDED ✗ removed by DV" in text and "DV1 manifest DV → M1, removes #1" in text
    html = render(tree).html
    assert "removed by DV" in html
    c = table.compare_layouts()
    ctext = repr(c)
    assert "v4 root manifest (experimental format" in ctext
    assert "MANIFEST_DV     applies to M1" in ctext
    assert "no manifest list (written as v4)" in render(c).html


def test_drawn_layout_renders_like_a_table(table: icenb.table.Table) -> None:
    m1 = _leaf("m1", 3)
    layout = v4_layout([("Snapshot 1", [m1]), ("Snapshot 2", [
        m1.with_status(EntryStatus.EXISTING), inline_manifest_dv(m1, [0, 2])])],
        {m1.location: [_data("d1"), _data("d2"), _data("d3")]}, title=f"title {EVIL}",
        note=f"note {EVIL}")
    fig = v4_layout_figure(layout)
    assert fig.dot.count('class="root"') == 2 and "removes #0, #2" in fig.dot
    assert fig.dot.count("removed by DV1") == 2
    assert fig.caption == f"note {EVIL}"
    r = render(layout)
    assert EVIL not in r.html and "title &lt;b&gt;" in r.html
    assert r.text.startswith(f"title {EVIL} (v4 layout, drawn")
    assert "S1 Snapshot 1" in r.text and "1970" not in r.text


def test_side_by_side(table: icenb.table.Table) -> None:
    root = _root(table)
    sbs = icenb.side_by_side(root, "plain", titles=[f"root {EVIL}"])
    r = render(sbs)
    assert r.html.startswith('<div class="icenb-cols">') and r.html.count("<div><b>") == 1
    assert EVIL not in r.html
    assert r.text.startswith(f"== root {EVIL} ==\nv4 root manifest")
    assert r.text.endswith("'plain'")
    assert "icenb-cols{display:flex;flex-wrap:wrap" in sbs._repr_mimebundle_()["text/html"]  # type: ignore[attr-defined]
    assert render(icenb.side_by_side()).text == "(nothing to show)"

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

        def _repr_html_(self) -> str:
            raise RuntimeError("boom")

    assert "repr failed" in render(icenb.side_by_side(Broken())).text


def test_reprs_of_entries_and_manifests_do_no_io(table: icenb.table.Table,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = _root(table)
    leaf = read_leaves(table.io, root)[0]

    def no_io(*_: Any, **__: Any) -> Any:
        raise AssertionError("a repr read a file")
    monkeypatch.setattr(FileIO, "new_input", no_io)
    r = render(root)
    assert r.text.startswith("v4 root manifest root-")
    assert "entries:  4 (1 data file, 1 deletion vector, 1 data manifest, 1 manifest dv)" \
        in r.text
    assert isinstance(leaf, LeafManifest)
    lt = repr(leaf)
    assert "removed by its manifest DV: #1" in lt and "ADDED (removed by DV)" in lt
    assert "<s>" in render(leaf).html
    dv = next(e for e in root.entries if e.content_type == ContentType.MANIFEST_DV)
    et = render(dv).text
    assert "content_type:         5 (Manifest DV)" in et and "inline: #1" in et
    data_dv = next(e for e in root.entries if e.content_type == ContentType.POSITION_DELETE)
    assert "deletion_vector:      in " in render(data_dv).text
    assert dv._repr_mimebundle_()["text/plain"] == et  # type: ignore[attr-defined]


def test_reprs_are_bounded_and_never_raise() -> None:
    entries = [_data(f"d{i}") for i in range(500)]
    m = ContentManifest("s3://b/" + "x" * 5000 + ".avro",
                        icenb.spec.content_entry.ManifestKind.DATA, tuple(entries), 10)
    with icenb.set_options(display_max_rows=10):
        text = repr(m)
    assert "… 490 more entries …" in text and len(text) < 5000
    bad = ContentEntry(content_type=ContentType.MANIFEST_DV, location="s3://b/m.avro",
                       file_format=FileFormat.PUFFIN, partition_spec_id=0, record_count=1,
                       file_size_in_bytes=3, referenced_file="s3://b/m.avro",
                       deletion_vector=DeletionVectorRef(inline_content=b"bad"))
    assert "inline, unreadable" in render(bad).text
