"""One snapshot's metadata tree (icenb.table.explore.metadata_tree, icenb.display.metadata_tree):
what
the builder reads and works out (statuses, counts, "applies to"), the DOT, the text outline and
the HTML card."""

from __future__ import annotations

import dataclasses
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.display.metadata_tree import (
    metadata_tree_dot,
    metadata_tree_figure,
    metadata_tree_text,
)
from icenb.errors import IcebergError, NoSuchSnapshot, NotFound
from icenb.io.manifest_reader import ManifestCache
from icenb.spec.manifest import EntryStatus, ManifestContent
from icenb.table.explore.metadata_tree import (
    MetadataTree,
    TreeEntry,
    TreeIndex,
    TreeManifest,
    build_metadata_tree,
)
from icenb.table.table import Table

EDGE = re.compile(r'^\s*"([^"]+)"(?::"([^"]+)")? -> "([^"]+)"(?: \[(.*)\])?;$', re.M)
NODE = re.compile(r'^\s*"([^"]+)" \[label="((?:[^"\\]|\\.)*)"(.*)\];$', re.M)
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string())])


@pytest.fixture(autouse=True)
def _no_svg() -> Iterator[None]:
    """Content is asserted on the DOT; no renderer needed."""
    with reset_options(), icenb.set_options(display_graph_renderer="none"):
        yield


def _rows(ids: list[int], p: list[str]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": p}, schema=SCHEMA)


def _nodes(dot: str) -> dict[str, tuple[str, str]]:
    """node id -> (label, attributes)."""
    return {m.group(1): (m.group(2), m.group(3)) for m in NODE.finditer(dot)}


def _edges(dot: str) -> list[tuple[str, str | None, str, str]]:
    """(tail, tail port, head, attributes)."""
    return [(m.group(1), m.group(2), m.group(3), m.group(4) or "") for m in EDGE.finditer(dot)]


def _kind(attrs: str) -> str:
    m = re.search(r'class="([^"]+)"', attrs)
    assert m is not None
    return m.group(1)


def _is_file(node: str) -> bool:
    """File nodes are named by kind, as the v4 proposal does: D1, DV1, PD1 (position
    deletes), ED1 (equality deletes)."""
    return re.fullmatch(r"(D|DV|PD|ED)\d+", node) is not None


def _file_id(tree: MetadataTree, dot: str, name: str) -> str:
    """The DOT node id of the file whose name is ``name``."""
    ids = [n for n, (label, _) in _nodes(dot).items()
           if _is_file(n) and name[:17] in label and name[-18:] in label]
    assert len(ids) == 1, (name, ids)
    return ids[0]


def _data_file_with(t: Table, ident: int) -> str:
    """The name of the one data file whose ``id`` bounds hold ``ident`` (column stats)."""
    tree = t.metadata_tree()
    found = []
    for _, e in tree.entries():
        f = e.file
        if e.kind == "data_file" and f.lower_bounds and f.upper_bounds:
            lo = struct.unpack("<q", f.lower_bounds[1])[0]
            hi = struct.unpack("<q", f.upper_bounds[1])[0]
            if lo <= ident <= hi:
                found.append(os.path.basename(f.file_path))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def v2(tmp_path: Path) -> Table:
    """v2, partitioned by p: two appends, a merge-on-read delete (a position delete file) and
    an equality delete."""
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, partition_by="p",
                                               format_version=2)
    t.append(_rows([1, 2, 3], ["a", "a", "b"]))
    t.append(_rows([4, 5], ["a", "b"]))
    t.delete("id = 4", mode="merge-on-read")
    t.delete_by_key(_rows([3], ["b"]), on=["id", "p"])
    return t.refresh()


def test_v2_tree_model_statuses_counts_and_applies_to(v2: Table) -> None:
    target_pos = _data_file_with(v2, 4)
    tree = v2.metadata_tree()
    assert tree.snapshot_id == v2.current_snapshot.snapshot_id  # type: ignore[union-attr]
    assert tree.refs == ("main",)
    assert tree.index is not None and tree.index.kind == "manifest_list"
    assert tree.index.manifests_total == 4
    kinds = sorted(m.kind for m in tree.index.manifests)
    assert kinds == ["data_manifest", "data_manifest", "delete_manifest", "delete_manifest"]
    by_kind: dict[str, list[TreeEntry]] = {}
    for _, e in tree.entries():
        by_kind.setdefault(e.kind, []).append(e)
    assert len(by_kind["data_file"]) == 4
    assert all(e.status == EntryStatus.ADDED for _, e in tree.entries())
    (pos,) = by_kind["delete_file"]
    assert [os.path.basename(p) for p in pos.applies_to] == [target_pos]
    (eq,) = by_kind["equality_delete"]
    # equality deletes: data files of the same partition with a smaller sequence number
    eq_targets = sorted(os.path.basename(p) for p in eq.applies_to)
    b_files = sorted(os.path.basename(e.file.file_path) for e in by_kind["data_file"]
                     if e.file.partition == ("b",))
    assert eq_targets == b_files and len(b_files) == 2
    assert tree.column_names == {1: "id", 2: "p"}
    for m in tree.index.manifests:
        assert (m.added, m.existing, m.deleted) == (m.entries_total, 0, 0)


def test_v2_dot_nodes_ports_and_applies_to_edges(v2: Table) -> None:
    tree = v2.metadata_tree()
    dot = metadata_tree_dot(tree)
    nodes = _nodes(dot)
    assert _kind(nodes["meta"][1]) == "metadata"
    assert "format v2" in nodes["meta"][0]
    assert "snapshot S4" in nodes["meta"][0]   # short label: S<sequence number>
    assert f'tooltip="snapshot S4 = {tree.snapshot_id}"' in nodes["meta"][1]
    assert _kind(nodes["index"][1]) == "manifest_list"
    assert "Manifest list" in nodes["index"][0]
    assert {n for n in nodes if n.startswith("M")} == {"M1", "M2", "M3", "M4"}
    file_kinds = sorted(_kind(a) for n, (_, a) in nodes.items() if _is_file(n))
    assert {n for n in nodes if _is_file(n)} == {"D1", "D2", "D3", "D4", "PD1", "ED1"}
    assert file_kinds == ["data_file"] * 4 + ["delete_file", "equality_delete"]
    edges = _edges(dot)
    # the manifest list has a row (port) per manifest; each edge leaves its row
    assert sorted((p, hd) for t, p, hd, _ in edges if t == "index") == [
        ("m0", "M1"), ("m1", "M2"), ("m2", "M3"), ("m3", "M4")]
    assert ("meta", None, "index", "") in edges
    # every manifest row is an entry with a port and an edge to its file
    entry_edges = [(t, p, hd) for t, p, hd, _ in edges if t.startswith("M")]
    assert len(entry_edges) == 6 and all(p and p.startswith("e") for _, p, _ in entry_edges)
    assert "ADDED" in nodes["M1"][0]
    applies = [(t, hd) for t, _, hd, a in edges if "applies to" in a]
    assert all('style="dashed"' in a for _, _, _, a in edges if "applies to" in a)
    pos_id = next(n for n, (_, a) in nodes.items() if _kind(a) == "delete_file")
    eq_id = next(n for n, (_, a) in nodes.items() if _kind(a) == "equality_delete")
    target = _file_id(tree, dot, _data_file_with(v2, 4))
    assert (pos_id, target) in applies
    assert len([1 for t, _ in applies if t == eq_id]) == 2
    assert "on id, p" in nodes[eq_id][0]


def test_v2_text_and_html(v2: Table) -> None:
    tree = v2.metadata_tree()
    text = repr(tree)
    assert text == metadata_tree_text(tree)
    assert text.startswith("Table metadata ")
    assert "Manifest list snap-" in text and "4 manifests" in text
    assert text.count("    M") == 4
    assert "equality delete file" in text and "applies to D" in text
    assert str(tree.location) not in text  # file names only, never full paths
    html = mimebundle(tree)["text/html"]
    assert html.count("<style>") == 1
    assert "Metadata tree" in html and "Manifests" in html and "Files" in html
    assert html.count('icenb-b-added">ADDED') == 6
    assert str(tree.location) not in html.replace("\\n", "")  # relative paths in the table


def test_v3_deletion_vector_label_and_target(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.v3", SCHEMA, format_version=3)
    t.append(_rows([1, 2], ["a", "a"]))
    t.append(_rows([3, 4], ["b", "b"]))
    t.delete("id = 3", mode="merge-on-read")
    t = t.refresh()
    target = _data_file_with(t, 3)
    tree = t.metadata_tree()
    (dv,) = [e for _, e in tree.entries() if e.kind == "deletion_vector"]
    assert dv.file.file_path.endswith(".puffin")
    assert [os.path.basename(p) for p in dv.applies_to] == [target]
    dot = metadata_tree_dot(tree)
    nodes = _nodes(dot)
    dv_id = next(n for n, (_, a) in nodes.items() if _kind(a) == "deletion_vector")
    label = nodes[dv_id][0]
    assert f"offset {dv.file.content_offset}" in label and ".puffin" in label
    assert "1 deleted row" in label
    applies = [(tl, hd) for tl, _, hd, a in _edges(dot) if "applies to" in a]
    assert applies == [(dv_id, _file_id(tree, dot, target))]


def test_deleted_entries_are_dashed_and_counted(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, partition_by="p",
                                               format_version=2)
    t.append(_rows([1, 2], ["a", "b"]))
    t.delete("p = 'a'")  # copy-on-write: the whole file goes, a DELETED entry
    tree = t.refresh().metadata_tree()
    assert tree.index is not None
    statuses = sorted(e.status.name for _, e in tree.entries())
    assert "DELETED" in statuses
    m = next(m for m in tree.index.manifests if m.deleted)
    assert m.deleted == 1
    dot = metadata_tree_dot(tree)
    dashed = [(t_, hd) for t_, p, hd, a in _edges(dot)
              if t_.startswith("M") and 'style="dashed"' in a]
    assert len(dashed) == 1
    assert "DELETED" in repr(tree)
    assert 'icenb-b-deleted">DELETED' in render(tree).html


def test_folding_reads_only_the_drawn_manifests(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, format_version=2)
    for i in range(7):
        t.append(_rows([i * 10 + j for j in range(3)], ["a"] * 3))
    t = t.refresh()
    tree0 = t.metadata_tree()
    assert tree0.index is not None and tree0.index.manifests_total == 7
    # the middle manifests are never opened: remove them from disk
    paths = [m.manifest.manifest_path for m in tree0.index.manifests]
    for p in paths[1:-1]:
        os.remove(p.removeprefix("file:"))
    with icenb.set_options(display_max_manifests=2):
        tree = build_metadata_tree(t.io, t.metadata, max_manifests=2, max_files=8,
                                   cache=ManifestCache())  # cold: nothing read before
    assert tree.index is not None
    assert [m.position for m in tree.index.manifests] == [0, 6]
    assert tree.index.manifests_head == 1
    assert tree.index.hidden.data_manifests == 5 and tree.index.hidden.delete_manifests == 0
    assert tree.index.hidden.added_files == 5 and tree.index.hidden.rows == 15
    with icenb.set_options(display_max_manifests=2):
        dot = metadata_tree_dot(tree)
        text = repr(tree)
    nodes = _nodes(dot)
    assert _kind(nodes["index_more"][1]) == "folded"
    assert "… 5 more manifests … (5 data, 0 delete; 5 live files; 15 rows)" in \
        nodes["index_more"][0]
    assert "… 5 more manifests …" in nodes["index"][0]
    assert {n for n in nodes if re.fullmatch(r"M\d+", n)} == {"M1", "M7"}
    assert "… 5 more manifests …" in text


def test_folding_entries_and_render_time_options(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, partition_by="p",
                                               format_version=2)
    t.append(_rows(list(range(6)), ["a", "b", "c", "d", "e", "f"]))  # one manifest, 6 files
    t.append(_rows([10], ["a"]))
    t.append(_rows([11], ["a"]))
    t = t.refresh()
    with icenb.set_options(display_max_files=3):
        tree = t.metadata_tree()
    assert tree.index is not None
    big = next(m for m in tree.index.manifests if m.entries_total == 6)
    assert len(big.entries) == 3 and big.entries_hidden == 3 and big.entries_head == 2
    assert big.added == 6
    dot = metadata_tree_dot(tree)
    assert "… 3 more entries …" in dot
    # built with the defaults, drawn with smaller limits: folded at render time
    full = t.metadata_tree()
    with icenb.set_options(display_max_files=2, display_max_manifests=2):
        dot2 = metadata_tree_dot(full)
        text2 = metadata_tree_text(full)
        html2 = render(full).html
    assert "… 4 more entries …" in dot2 and "… 4 more entries …" in text2
    assert "… 1 more manifests …" in dot2
    assert len([n for n in _nodes(dot2) if re.fullmatch(r"M\d+", n)]) == 2
    assert "could not be displayed" not in html2


def test_snapshot_by_id_and_ref(v2: Table) -> None:
    first = v2.history[0].snapshot_id
    v2.create_tag("v<1>&\"x\"", first)
    tree = v2.refresh().metadata_tree("v<1>&\"x\"")
    assert tree.snapshot_id == first and tree.refs == ('v<1>&"x"',)
    assert tree.index is not None and tree.index.manifests_total == 1
    assert v2.metadata_tree(first).snapshot_id == first
    html = render(tree).html
    assert "v&lt;1&gt;&amp;&quot;x&quot;" in html and 'v<1>&"x"' not in html
    assert 'v<1>&\\"x\\"' in metadata_tree_dot(tree)
    with pytest.raises(NoSuchSnapshot):
        v2.metadata_tree(123)
    with pytest.raises(NoSuchSnapshot):
        v2.metadata_tree("nope")


def test_escaping_of_partition_values(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, partition_by="p",
                                               format_version=2)
    t.append(_rows([1], ['<b>&"x"']))
    tree = t.refresh().metadata_tree()
    html = mimebundle(tree)["text/html"]
    assert "p=&lt;b&gt;&amp;&quot;x&quot;" in html
    assert '<b>&"x"' not in html
    dot = metadata_tree_dot(tree)
    assert 'p=<b>&\\"x\\"' in dot  # a plain (quoted) DOT label
    assert 'p=<b>&"x"' in repr(tree)


def test_empty_table(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, format_version=2)
    tree = t.metadata_tree()
    assert tree.snapshot is None and tree.index is None
    assert tree.note is not None and "no snapshots" in tree.note
    dot = metadata_tree_dot(tree)
    assert set(_nodes(dot)) == {"meta", "note"}
    assert "no snapshots" in repr(tree)
    assert "no snapshots" in render(tree).html
    assert tree.entries() == []


def test_v1_table(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, format_version=1)
    t.append(_rows([1, 2], ["a", "b"]))
    tree = t.refresh().metadata_tree()
    assert tree.format_version == 1 and tree.index is not None
    assert [e.kind for _, e in tree.entries()] == ["data_file"]
    assert "format v1" in metadata_tree_dot(tree)


def test_missing_manifest_raises_clear_error(v2: Table) -> None:
    tree = v2.metadata_tree()
    assert tree.index is not None
    path = tree.index.manifests[0].manifest.manifest_path
    os.remove(path.removeprefix("file:"))
    v2 = v2.refresh()
    with pytest.raises(NotFound) as info:
        build_metadata_tree(v2.io, v2.metadata, cache=ManifestCache(),  # cold: read again
                            metadata_location=v2.metadata_location)
    assert isinstance(info.value, IcebergError)
    assert os.path.basename(path) in str(info.value)


def test_partial_tree_renders_without_raising(v2: Table) -> None:
    tree = v2.metadata_tree()
    assert tree.index is not None
    m0 = tree.index.manifests[0]
    odd = dataclasses.replace(m0, entries=(), entries_head=0, entries_hidden=5,
                              entries_total=5, manifest=dataclasses.replace(
                                  m0.manifest, added_files_count=None,
                                  content=ManifestContent.DELETES))
    dangling = dataclasses.replace(tree.entries()[0][1], applies_to=("/gone/x.parquet",))
    m1 = dataclasses.replace(tree.index.manifests[1], entries=(dangling,), entries_head=1)
    partial = dataclasses.replace(
        tree, metadata_location=None, snapshot=None, column_names={}, spec_fields={},
        index=TreeIndex("root", None, (odd, m1), 5, 1000))
    r = render(partial)
    assert "could not be displayed" not in r.html
    assert "… 998 more manifests …" in r.text and "… 5 more entries …" in r.text
    assert "Root manifest" in metadata_tree_dot(partial)
    fig = metadata_tree_figure(partial)
    assert "x.parquet" in fig.text  # the dangling target named by file name
    bare = MetadataTree("/t", None, 3, None, index=TreeIndex("manifest_list", None))
    assert "no manifests" in metadata_tree_dot(bare)
    assert "could not be displayed" not in render(bare).html
    weird = TreeManifest(0, m0.manifest)
    assert weird.kind == "data_manifest"


def test_deterministic(v2: Table) -> None:
    a, b = v2.metadata_tree(), v2.refresh().metadata_tree()
    assert metadata_tree_dot(a) == metadata_tree_dot(b)
    assert mimebundle(a) == mimebundle(b)


def test_two_deletion_vectors_in_one_puffin_file_are_two_nodes(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.v3", SCHEMA, partition_by=["p"],
                                               format_version=3)
    t.append(_rows([1, 2, 3, 4], ["a", "a", "b", "b"]))
    t.delete("id = 1 or id = 3", mode="merge-on-read")   # one Puffin file, a DV per data file
    tree = t.refresh().metadata_tree()
    dvs = [e for _, e in tree.entries() if e.kind == "deletion_vector"]
    assert len(dvs) == 2 and len({e.file.file_path for e in dvs}) == 1
    dot = metadata_tree_dot(tree)
    nodes = _nodes(dot)
    assert sorted(n for n, (_, a) in nodes.items() if _kind(a) == "deletion_vector") == [
        "DV1", "DV2"]
    applies = sorted((tl, hd) for tl, _, hd, a in _edges(dot) if "applies to" in a)
    assert [tl for tl, _ in applies] == ["DV1", "DV2"] and len({hd for _, hd in applies}) == 2
