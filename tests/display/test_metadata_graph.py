"""The multi-snapshot metadata graph and "root vs manifest list"
(icenb.table.explore.metadata_graph,
icenb.display.metadata_graph): content of the model, the DOT, the HTML and the text."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.display.kit.fmt import file_name
from icenb.display.metadata_graph import (
    V4_CAPTION,
    _record_text,
    layout_comparison_figures,
    metadata_graph_figure,
)
from icenb.errors import NoSuchSnapshot
from icenb.table.explore.metadata_graph import (
    ContentType,
    MetadataGraph,
    RootEntry,
    RootManifest,
    build_layout_comparison,
)
from icenb.table.table import Table

EDGE = re.compile(r'^\s*"([^"]+)"(?::"[^"]+")? -> "([^"]+)"(?: \[(.*)\])?;$', re.M)
NODE = re.compile(r'^\s*"([^"]+)" \[label="((?:[^"\\]|\\.)*)"', re.M)


@pytest.fixture(autouse=True)
def _no_svg() -> Iterator[None]:
    """Content is asserted on the DOT; no renderer needed (the HTML then embeds the DOT)."""
    with reset_options(), icenb.set_options(display_graph_renderer="none"):
        yield


def _rows(kind: str) -> pa.Table:
    return pa.table({"id": pa.array([1, 2, 3], pa.int64()), "kind": [kind] * 3})


@pytest.fixture
def table(tmp_path: Path) -> Table:
    """v2: three appends (the third merges the two manifests before it: min count 3), then a
    merge-on-read delete that keeps the merged manifest and adds a delete manifest."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, kind string", partition_by=["kind"],
                        format_version=2,
                        properties={"commit.manifest.min-count-to-merge": "3"})
    for k in ("a", "b", "c"):
        t.append(_rows(k))
    t.delete("id = 2 and kind = 'a'", mode="merge-on-read")
    return t.refresh()


def _edges(dot: str) -> list[tuple[str, str, str]]:
    """(tail, head, label) of every visible edge."""
    out = []
    for tail, head, attrs in EDGE.findall(dot):
        if 'style="invis"' in (attrs or ""):
            continue
        m = re.search(r'label=" ([^"]*) "', attrs or "")
        out.append((tail, head, m.group(1) if m else ""))
    return out


def _labels(dot: str) -> dict[str, str]:
    return dict(NODE.findall(dot))


def test_each_shared_manifest_once_with_added_then_existing_edges(table: Table) -> None:
    g = table.metadata_graph()
    sids = [s.snapshot_id for s in table.snapshots]
    assert [s.snapshot_id for s in g.snapshots] == sids  # the 4 of main, oldest first
    paths = [m.path for m in g.manifests]
    assert len(paths) == len(set(paths)) == 4
    assert len({f.path for f in g.files}) == len(g.files) == 4
    for m in g.manifests:
        edges = g.edges_into_manifest(m.path)
        holders = [e.snapshot_id for e in edges]
        # ADDED from the snapshot that added it, EXISTING from each later list holding it
        assert [e.status for e in edges] == ["ADDED"] + ["EXISTING"] * (len(edges) - 1)
        assert holders[0] == m.added_snapshot_id
    first, merged = g.manifests[0], g.manifest(g.list_edges[-2].manifest_path)
    assert [(e.snapshot_id, e.status) for e in g.edges_into_manifest(first.path)] == [
        (sids[0], "ADDED"), (sids[1], "EXISTING")]
    assert merged is not None and merged.entries_total == 3
    assert [(e.snapshot_id, e.status) for e in g.edges_into_manifest(merged.path)] == [
        (sids[2], "ADDED"), (sids[3], "EXISTING")]
    # the merge carried the first two files over: each file once, two incoming entries
    assert sorted(len(g.edges_into_file(f.path)) for f in g.files) == [1, 1, 2, 2]
    deletes = [m for m in g.manifests if m.kind == "delete_manifest"]
    assert len(deletes) == 1 and deletes[0].added_snapshot_id == sids[3]
    dfile = [f for f in g.files if f.kind == "delete_file"]
    assert len(dfile) == 1 and dfile[0].record_count == 1
    assert [e.status for e in g.edges_into_file(dfile[0].path)] == ["ADDED"]


def test_dot_draws_reuse_as_several_incoming_edges(table: Table) -> None:
    g = table.metadata_graph()
    dot = metadata_graph_figure(g).dot
    labels = _labels(dot)
    edges = _edges(dot)
    manifests = [n for n, lab in labels.items() if "manifest\\n" in lab and n.startswith("M")]
    assert sorted(manifests) == ["M1", "M2", "M3", "M4"]
    # files named by kind, as the v4 proposal does: D1 data files, PD1 position delete files
    assert "Delete manifest" in labels["M4"] and "Position delete file" in labels["PD1"]
    assert sorted(n for n in labels if n.startswith("D")) == ["D1", "D2", "D3"]
    into = {m: sorted((t, lab) for t, h, lab in edges if h == m) for m in manifests}
    assert into["M1"] == [("L1", "ADDED"), ("L2", "EXISTING")]
    assert into["M3"] == [("L3", "ADDED"), ("L4", "EXISTING")]
    assert into["M4"] == [("L4", "ADDED")]
    assert ("S1", "L1", "") in edges and ("M4", "PD1", "ADDED") in edges
    sid = table.current_snapshot.snapshot_id  # type: ignore[union-attr]
    assert "S4 · Snapshot" in labels["S4"] and "main" in labels["S4"]
    assert f'tooltip="snapshot {sid}"' in dot   # the full id a hover away
    assert 'class="snapshot_current"' in dot
    text = repr(g)  # the console outline
    assert "EXISTING M1" in text and "EXISTING M3, ADDED M4" in text
    assert "M4 delete manifest" in text and "position delete file" in text


def test_copy_on_write_delete_shows_deleted_entries(table: Table) -> None:
    table.delete("kind = 'b'")  # copy-on-write: the file of 'b' goes away
    t = table.refresh()
    g = t.metadata_graph([s.snapshot_id for s in t.snapshots[-2:]])
    deleted = [e for e in g.entry_edges if e.status == "DELETED"]
    assert len(deleted) == 1
    gone = g.file(deleted[0].file_path)
    assert gone is not None and "kind=b" in gone.path
    assert deleted[0].snapshot_id == t.current_snapshot.snapshot_id  # type: ignore[union-attr]
    dot = metadata_graph_figure(g).dot
    assert re.search(r'-> "D\d+" \[label=" DELETED " style="dashed"\]', dot)
    # the delete manifest is kept (EXISTING) by the new snapshot
    dm = next(m for m in g.manifests if m.kind == "delete_manifest")
    assert [e.status for e in g.edges_into_manifest(dm.path)] == ["ADDED", "EXISTING"]


def test_snapshot_selection_by_id_and_ref(table: Table) -> None:
    sids = [s.snapshot_id for s in table.snapshots]
    g = table.metadata_graph([sids[0], "main", sids[0]], entries=False)
    assert [s.snapshot_id for s in g.snapshots] == [sids[0], sids[3]]
    assert not g.files and all(m.entries_total is None for m in g.manifests)
    assert "Files" not in render(g).html
    with pytest.raises(NoSuchSnapshot):
        table.metadata_graph([12345])
    with pytest.raises(NoSuchSnapshot):
        table.metadata_graph(["no-such-branch"])
    with icenb.set_options(display_max_snapshots=2):
        assert [s.snapshot_id for s in table.metadata_graph().snapshots] == sids[2:]


def test_compare_layouts_same_manifests_and_files_both_ways(table: Table) -> None:
    c = table.compare_layouts()
    sid = table.current_snapshot.snapshot_id  # type: ignore[union-attr]
    assert c.snapshot_id == sid and c.root.derived and c.root.location is None
    assert [(e.content_type, e.status) for e in c.root.entries] == [
        (ContentType.DATA_MANIFEST, "EXISTING"), (ContentType.DELETE_MANIFEST, "EXISTING")]
    left, right = layout_comparison_figures(c)
    ll, rl = _labels(left.dot), _labels(right.dot)

    def leaves(labels: dict[str, str]) -> set[str]:
        return {lab for n, lab in labels.items()
                if re.fullmatch(r"(v4)?(M|D|DV|PD|ED)\d+", n)}

    assert leaves(ll) == leaves(rl) and len(leaves(ll)) == 2 + 4
    # the root is one node whose rows are the manifests, typed as the proposal's content types
    root = re.search(r'^\s*"R" \[shape="Mrecord".*label="(.*)"\];$', right.dot, re.M)
    assert root is not None
    assert "Root manifest (derived)" in root.group(1)
    assert root.group(1).count("DATA_MANIFEST") == 1
    assert root.group(1).count("DELETE_MANIFEST") == 1
    assert root.group(1).count("EXISTING") == 2
    assert ("S", "R", "") in _edges(right.dot)
    assert {h for t, h, _ in _edges(right.dot) if t.startswith("R")} == {"v4M1", "v4M2"}
    lst = re.search(r'^\s*"L" \[shape="Mrecord".*label="(.*)"\];$', left.dot, re.M)
    assert lst is not None and "Manifest list" in lst.group(1)
    assert "EXISTING" in lst.group(1) and "ADDED" in lst.group(1)  # as the list holds them
    rows = {r.what: (r.manifest_list, r.root_manifest) for r in c.rows()}
    assert rows["metadata files a reader opens to plan (top-level + manifests)"] == (3, 3)
    assert rows["data manifests"] == (1, 1) and rows["delete manifests"] == (1, 1)
    assert rows["live data files"] == (3, 3) and rows["live delete files"] == (1, 1)
    html = mimebundle(c)["text/html"]
    assert V4_CAPTION in html and "not adopted" in html
    assert "What a reader opens" in html
    text = repr(c)
    assert "v4 proposal (experimental, not adopted)" in text
    assert "EXISTING DATA_MANIFEST" in text and "EXISTING DELETE_MANIFEST" in text
    assert table.compare_layouts("main").snapshot_id == sid
    with pytest.raises(NoSuchSnapshot):
        table.compare_layouts(999)


def test_a_real_root_manifest_can_be_passed_in(table: Table) -> None:
    sid = table.current_snapshot.snapshot_id  # type: ignore[union-attr]
    g = table.metadata_graph([sid])
    m1 = g.manifests[0]
    root = RootManifest(
        snapshot_id=sid, location="/w/metadata/root-1.avro", derived=False,
        entries=(RootEntry(ContentType.DATA_MANIFEST, m1.path, "EXISTING", sid, 1),
                 RootEntry(ContentType.DATA, "/w/data/d9.parquet", "ADDED", sid, 5)),
        type_counts=((ContentType.DATA_MANIFEST, 1), (ContentType.DATA, 1)))
    c = build_layout_comparison(table.io, table.metadata, sid, root=root)
    rows = {r.what: (r.manifest_list, r.root_manifest) for r in c.rows()}
    assert rows["content files listed in the top-level file"] == (0, 1)
    assert rows["metadata files a reader opens to plan (top-level + manifests)"] == (3, 2)
    _, right = layout_comparison_figures(c)
    assert "Root manifest\\n" in right.dot and "(derived)" not in right.dot
    assert '"v4E2" [label="d9.parquet"' in right.dot  # a data file right under the root
    assert "experimental format" in right.caption


def test_folding_with_small_options(table: Table) -> None:
    with icenb.set_options(display_max_manifests=1, display_max_files=1):
        g = table.metadata_graph()
        assert [s.manifests_hidden for s in g.snapshots] == [0, 1, 0, 1]
        merged = next(m for m in g.manifests if m.entries_total == 3)
        assert merged.entries_hidden == 2
        dot = metadata_graph_figure(g).dot
        assert dot.count("… 1 more manifests …") == 2
        assert "… 2 more entries …" in dot
        assert "… 1 more manifests …" in repr(g)
    # a graph read with the defaults folds again when drawn with smaller options
    g = table.metadata_graph()
    with icenb.set_options(display_max_files=1, display_max_snapshots=2):
        dot = metadata_graph_figure(g).dot
        text = repr(g)
    assert "… 2 more snapshots …" in dot and "… 2 more snapshots …" in text
    assert "… 2 more entries …" in dot
    assert len([n for n in _labels(dot) if re.fullmatch(r"S\d", n)]) == 2


def test_escaping_of_user_strings(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.e", "id long", format_version=2)
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    name = '<b>&"x"'
    t.create_tag(name)
    t = t.refresh()
    g = t.metadata_graph()
    html = mimebundle(g)["text/html"]
    assert name not in html and "&lt;b&gt;&amp;&quot;x&quot;" in html
    dot = metadata_graph_figure(g).dot
    assert '<b>&\\"x\\"' in dot  # a DOT string: the quote escaped
    assert name in repr(g)
    assert _record_text('a{b}|<c>"d\\') == 'a\\{b\\}\\|\\<c\\>\\"d\\\\'


def test_deletion_vectors_point_at_their_data_file(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.v3", "id long", format_version=3)
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    t.delete("id = 2", mode="merge-on-read")
    g = t.refresh().metadata_graph()
    dv = next(f for f in g.files if f.kind == "deletion_vector")
    data = next(f for f in g.files if f.kind == "data_file")
    assert dv.referenced_data_file == data.path
    dot = metadata_graph_figure(g).dot
    assert re.search(r'"DV1" -> "D1" \[label=" applies to " style="dashed"', dot)
    assert 'class="deletion_vector"' in dot


def test_partial_data_never_raises(table: Table) -> None:
    g = table.metadata_graph()
    lost_manifest = g.manifests[1].path
    lost_list = table.snapshots[0].manifest_list
    assert lost_list is not None
    os.remove(lost_manifest)
    os.remove(lost_list)
    fresh = icenb.open(table.metadata_location)  # cold manifest cache
    g = fresh.metadata_graph()
    assert g.snapshots[0].error is not None and g.snapshots[0].manifests_total == 0
    broken = g.manifest(lost_manifest)
    assert broken is not None and broken.error is not None and broken.entries_total is None
    dot = metadata_graph_figure(g).dot
    assert sorted(re.findall(r'"(\w+)_err" \[label="not read: NotFound', dot)) == ["L1", "M1"]
    bundle = mimebundle(g)
    assert "could not be displayed" not in bundle["text/html"]
    assert "not read: " in bundle["text/plain"]
    c = fresh.compare_layouts(table.snapshots[0].snapshot_id)
    rows = {r.what: r.manifest_list for r in c.rows()}
    assert rows["data manifests"] is None
    assert "could not be displayed" not in mimebundle(c)["text/html"]
    assert "not read: " in layout_comparison_figures(c)[0].dot


def test_empty_table_and_determinism(tmp_path: Path, table: Table) -> None:
    empty = icenb.warehouse(tmp_path / "e").create_table("db.e", "id long")
    g = empty.metadata_graph()
    assert isinstance(g, MetadataGraph) and not g.snapshots
    assert "(no snapshots)" in repr(g)
    with pytest.raises(NoSuchSnapshot):
        empty.compare_layouts()
    a, b = table.metadata_graph(), table.metadata_graph()
    assert mimebundle(a) == mimebundle(b)
    assert mimebundle(table.compare_layouts()) == mimebundle(table.compare_layouts())


def test_deletion_vectors_sharing_a_puffin_file_are_separate_nodes(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.p", "id long, p string",
                                               partition_by=["p"], format_version=3)
    t.append(pa.table({"id": pa.array(range(10), pa.int64()), "p": ["a"] * 5 + ["b"] * 5}))
    t.delete("id = 1 or id = 7", mode="merge-on-read")
    t.delete("id = 2", mode="merge-on-read")  # replaces p=a's DV; the Puffin file stays live
    g = t.refresh().metadata_graph()
    data = {f.path: f for f in g.files if f.kind == "data_file"}
    first_puffin = {f.path for f in g.files if f.kind == "deletion_vector"
                    and len(g.edges_into_file(f.path, f.content_offset)) == 2}
    (puffin,) = first_puffin
    shared = [f for f in g.files if f.path == puffin]
    assert len(shared) == 2 and len({f.content_offset for f in shared}) == 2
    assert {f.referenced_data_file for f in shared} == set(data)
    # the replaced DV: ADDED then DELETED; the other: ADDED then EXISTING
    by_ref = {f.referenced_data_file: f for f in shared}
    statuses = {p.split("/p=")[1][0]: sorted(e.status for e in g.edges_into_file(
        f.path, f.content_offset)) for p, f in by_ref.items()}
    assert statuses == {"a": ["ADDED", "DELETED"], "b": ["ADDED", "EXISTING"]}
    assert g.file(puffin) is None  # a DV is found by its path and offset
    assert all(g.file(puffin, f.content_offset) == f for f in shared)
    dot = metadata_graph_figure(g).dot
    labels = _labels(dot)
    ids = {f.content_offset: next(n for n, lb in labels.items()
                                  if f"@{f.content_offset}\\n" in lb and "Deletion" in lb
                                  and file_name(puffin)[:15] in lb)
           for f in shared}
    assert len(set(ids.values())) == 2
    data_ids = {p: next(n for n, lb in labels.items() if file_name(p)[-16:] in lb
                        and "Data file" in lb) for p in data}
    applies = {(a, b) for a, b, lab in _edges(dot) if lab == "applies to"}
    for f in shared:
        assert (ids[f.content_offset], data_ids[f.referenced_data_file or ""]) in applies
