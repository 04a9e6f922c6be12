"""The metadata graph, tree and layout comparison of EXPERIMENTAL format-version 4 tables
(single-file-commits proposal, "Examples": snapshot -> root manifest -> entries with status,
leaf manifests with their rows, manifest DVs pointing at a leaf and the ordinals they remove),
and layouts drawn from content entries alone (``v4_layout``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.io.root_manifest import (
    inline_manifest_dv,
    read_content_manifest,
    read_root_manifest,
)
from icenb.spec.content_entry import (
    ContentEntry,
    ContentType,
    DeletionVectorRef,
    ManifestStats,
    VersionInfo,
)
from icenb.spec.manifest import EntryStatus, FileFormat
from icenb.table.explore.metadata_graph import MetadataGraph, v4_layout

EXISTING, ADDED, DELETED = EntryStatus.EXISTING, EntryStatus.ADDED, EntryStatus.DELETED


def _rows(*parts: int) -> list[dict[str, Any]]:
    """Two rows in each partition ``p``: one data file per partition."""
    return [{"id": p * 10 + i, "p": p} for p in parts for i in range(2)]


def _table(tmp_path: Path, version: int = 4) -> icenb.table.Table:
    return icenb.warehouse(tmp_path).create_table(
        f"db.v{version}", "id long, p int", partition_by=["p"], format_version=version)


def _part(path: str) -> str:
    """``p=N`` of a data file path (names the proposal's Dn)."""
    return next(s for s in path.split("/") if s.startswith("p="))


def _root_view(g: MetadataGraph, sid: int) -> list[tuple[str, str]]:
    """What a snapshot's root holds: (what, status), leaves as M, files as p=N, DVs as DV."""
    out = [("M", e.status) for e in g.list_edges if e.snapshot_id == sid]
    for e in g.root_files(sid):
        f = g.file(e.file_path, e.content_offset)
        assert f is not None
        out.append((_part(f.path) if f.kind == "data_file" else f.kind, e.status))
    out += [("DV", e.status) for e in g.dv_edges if e.snapshot_id == sid]
    return sorted(out)


def test_appends_deletes_and_row_deltas_draw_as_the_proposal(tmp_path: Path) -> None:
    """S1 adds a leaf (3 files), S2 a root file, S3 removes a leaf file (manifest DV), S4 a
    merge-on-read delete (a data DV at the root): one leaf node shared by four roots."""
    t = _table(tmp_path)
    s1 = t.append(_rows(1, 2, 3))
    s2 = t.append(_rows(4))
    s3 = t.delete("p = 2")
    s4 = t.delete("id = 40", mode="merge-on-read")
    g = t.metadata_graph()
    assert [s.snapshot_id for s in g.snapshots] == [s.snapshot_id for s in (s1, s2, s3, s4)]
    assert all(s.has_root and s.manifest_list is None for s in g.snapshots)
    assert [r.location for r in g.roots] == [s.root_manifest for s in (s1, s2, s3, s4)]
    # the leaf is one node, with an edge from every root
    assert len(g.manifests) == 1
    leaf = g.manifests[0]
    assert [e.status for e in g.edges_into_manifest(leaf.path)] == \
        ["ADDED", "EXISTING", "EXISTING", "EXISTING"]
    assert _root_view(g, s1.snapshot_id) == [("M", "ADDED")]
    assert _root_view(g, s2.snapshot_id) == [("M", "EXISTING"), ("p=4", "ADDED")]
    assert _root_view(g, s3.snapshot_id) == [("DV", "ADDED"), ("M", "EXISTING"),
                                             ("p=4", "EXISTING")]
    assert _root_view(g, s4.snapshot_id) == [("DV", "EXISTING"), ("M", "EXISTING"),
                                             ("deletion_vector", "ADDED"), ("p=4", "EXISTING")]
    # the manifest DV: drawn once, applies to the leaf, removes ordinal 1 (D2)
    (dv,) = g.manifest_dvs
    assert (dv.referenced_file, dv.ordinals, dv.cardinality, dv.inline) == \
        (leaf.path, (1,), 1, True)
    assert dv.added_snapshot_id == s3.snapshot_id
    rows = sorted((e.ordinal, _part(e.file_path), e.removed_by != ())
                  for e in g.entry_edges if e.manifest_path == leaf.path)
    assert rows == [(0, "p=1", False), (1, "p=2", True), (2, "p=3", False)]
    # the data DV names the root file it applies to
    dvs = [f for f in g.files if f.kind == "deletion_vector"]
    assert len(dvs) == 1 and _part(dvs[0].referenced_data_file or "") == "p=4"
    # counts a reader would see: live data files and delete files per snapshot
    assert [(s.live_data_files, s.live_delete_files) for s in g.snapshots] == \
        [(3, 0), (4, 0), (3, 0), (3, 1)]


def test_a_large_append_goes_to_a_new_leaf(tmp_path: Path) -> None:
    t = _table(tmp_path)
    s1 = t.append(_rows(1))
    s2 = t.append(_rows(2, 3, 4))
    g = t.metadata_graph()
    assert _root_view(g, s1.snapshot_id) == [("p=1", "ADDED")]
    assert _root_view(g, s2.snapshot_id) == [("M", "ADDED"), ("p=1", "EXISTING")]
    (leaf,) = g.manifests
    assert leaf.entries_total == 3 and leaf.added_snapshot_id == s2.snapshot_id


def test_a_second_removal_replaces_the_dv_and_marks_both_rows(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.append(_rows(1, 2, 3))
    s2 = t.delete("p = 2")
    s3 = t.delete("p = 3")
    g = t.metadata_graph()
    by_snap = {sid: [(g.manifest_dv(e.dv_key).ordinals, e.status)  # type: ignore[union-attr]
                     for e in g.dv_edges if e.snapshot_id == sid]
               for sid in (s2.snapshot_id, s3.snapshot_id)}
    assert by_snap[s2.snapshot_id] == [((1,), "ADDED")]
    assert sorted(by_snap[s3.snapshot_id]) == [((1,), "DELETED"), ((1, 2), "ADDED")]
    removed = sorted(_part(e.file_path) for e in g.entry_edges if e.removed_by)
    assert removed == ["p=2", "p=3"]


def test_an_upgraded_table_shows_lists_then_roots(tmp_path: Path) -> None:
    """Old snapshots keep their manifest list; the first v4 root lists the v3 manifest, drawn
    as the same node."""
    t = _table(tmp_path, 3)
    s1 = t.append(_rows(1, 2, 3))
    t.upgrade(4)
    s2 = t.append(_rows(4))
    g = t.metadata_graph()
    a, b = g.snapshots
    assert (a.manifest_list, a.has_root) == (s1.manifest_list, False)
    assert b.has_root and b.root_manifest == s2.root_manifest
    (m,) = g.manifests
    assert [(e.snapshot_id, e.status) for e in g.edges_into_manifest(m.path)] == \
        [(s1.snapshot_id, "ADDED"), (s2.snapshot_id, "EXISTING")]
    assert _root_view(g, s2.snapshot_id) == [("M", "EXISTING"), ("p=4", "ADDED")]
    # only the v4 snapshot shown: the v3 leaf is read through its root entry
    g2 = t.metadata_graph([s2.snapshot_id])
    (m2,) = g2.manifests
    assert m2.entries_total == 3 and m2.error is None
    assert sorted(e.ordinal for e in g2.entry_edges if e.manifest_path == m2.path) == [0, 1, 2]


def test_unreadable_files_become_errors_on_nodes(tmp_path: Path) -> None:
    t = _table(tmp_path)
    s1 = t.append(_rows(1, 2, 3))
    s2 = t.append(_rows(4))
    g = t.metadata_graph()
    os.remove(g.manifests[0].path.removeprefix("file://"))
    assert s2.root_manifest is not None
    os.remove(s2.root_manifest.removeprefix("file://"))
    g = t.metadata_graph()
    assert g.snapshots[0].snapshot_id == s1.snapshot_id and g.snapshots[0].error is None
    assert g.snapshots[1].error is not None and g.root(s2.snapshot_id).error is not None  # type: ignore[union-attr]
    assert g.manifests[0].error is not None and "m0.avro" in g.manifests[0].error
    # the display still works
    assert "not read" in repr(g)


def test_bounded_by_the_limits(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long, p int", partition_by=["p"], format_version=4,
        properties={"write.v4.root-entry-limit": "100"})
    t.append(_rows(*range(10)))
    with icenb.display.set_options(display_max_files=4, display_max_manifests=4):
        g = t.metadata_graph()
    (root,) = g.roots
    assert (root.entries_total, root.entries_hidden) == (10, 6)
    assert len(g.root_files(g.snapshots[0].snapshot_id)) == 4


def test_metadata_tree_of_a_v4_snapshot(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.append(_rows(1, 2, 3))
    t.append(_rows(4))
    s3 = t.delete("p = 2")
    tree = t.metadata_tree()
    index = tree.index
    assert index is not None and index.kind == "root" and index.location == s3.root_manifest
    assert [_part(e.file.file_path) for e in index.files] == ["p=4"]
    (m,) = index.manifests
    assert [(e.ordinal, e.removed) for e in m.entries] == [(0, False), (1, True), (2, False)]
    (dv,) = index.manifest_dvs
    assert (dv.manifest_position, dv.ordinals, dv.status) == (m.position, (1,), ADDED)
    assert "removed by DV" in repr(tree)


def test_compare_layouts_uses_the_real_root(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.append(_rows(1, 2, 3))
    t.append(_rows(4))
    t.delete("p = 2")
    c = t.compare_layouts()
    assert c.root.derived is False and c.root.location == t.current_snapshot.root_manifest  # type: ignore[union-attr]
    rows = {r.what: (r.manifest_list, r.root_manifest) for r in c.rows()}
    assert rows["data manifests"] == (2, 1)          # v3: the leaf + one for the root file
    assert rows["content files listed in the top-level file"] == (0, 1)
    assert rows["manifest deletion vectors"] == (0, 1)
    assert rows["metadata files a reader opens to plan (top-level + manifests)"] == (3, 2)
    assert rows["live data files"] == (3, 3)


# --------------------------------------------------------------------------- drawn layouts


def _data(name: str, status: EntryStatus = ADDED) -> ContentEntry:
    seq = None if status == ADDED else 1
    return ContentEntry(content_type=ContentType.DATA, location=f"s3://b/{name}.parquet",
                        file_format=FileFormat.PARQUET, partition_spec_id=0, record_count=10,
                        file_size_in_bytes=100,
                        version_info=VersionInfo(status, None, seq, seq))


def _leaf(name: str, n: int, status: EntryStatus = ADDED) -> ContentEntry:
    seq = None if status == ADDED else 1
    return ContentEntry(content_type=ContentType.DATA_MANIFEST, location=f"s3://b/{name}.avro",
                        file_format=FileFormat.AVRO, partition_spec_id=0, record_count=n,
                        file_size_in_bytes=4000, manifest_stats=ManifestStats(n, 0, 0, 10 * n,
                                                                              0, 0, 1),
                        version_info=VersionInfo(status, None, seq, seq))


def test_v4_layout_draws_the_discarded_multiple_dvs_approach() -> None:
    """Proposal, "Using Multiple Delete Vectors to Keep Changes Distinct" (discarded): each
    snapshot adds its own DV over M1 instead of replacing the old one."""
    m1 = _leaf("m1", 3)
    dv1 = inline_manifest_dv(m1, [1])
    dv2 = inline_manifest_dv(m1, [2])
    leaves = {m1.location: [_data("d1"), _data("d2"), _data("d3")]}
    keep = VersionInfo(EXISTING, 2, 2, 2)
    layout = v4_layout(
        [("Snapshot 1", [m1]),
         ("Snapshot 2", [m1.with_status(EXISTING), dv1]),
         ("Snapshot 3", [m1.with_status(EXISTING), ContentEntry(**{
             **dv1.__dict__, "version_info": keep}), dv2])],
        leaves, title="Multiple DVs (discarded)", note="rejected: complexity")
    g = layout.graph
    assert [s.label for s in g.snapshots] == ["Snapshot 1", "Snapshot 2", "Snapshot 3"]
    assert len(g.manifests) == 1 and len(g.manifest_dvs) == 2
    assert sorted(d.ordinals for d in g.manifest_dvs) == [(1,), (2,)]  # type: ignore[type-var]
    assert [(e.snapshot_id, e.status) for e in g.dv_edges] == \
        [(2, "ADDED"), (3, "EXISTING"), (3, "ADDED")]
    removed = sorted(e.file_path.rsplit("/", 1)[1] for e in g.entry_edges if e.removed_by)
    assert removed == ["d2.parquet", "d3.parquet"]
    text = repr(layout)
    assert "Multiple DVs (discarded)" in text and "rejected: complexity" in text
    assert "S3 Snapshot 3" in text


def test_v4_layout_draws_like_a_real_table(tmp_path: Path) -> None:
    """The same entries drawn by v4_layout and read from a table give the same outline."""
    t = _table(tmp_path)
    t.append(_rows(1, 2, 3))
    t.append(_rows(4))
    t.delete("p = 2")
    real = t.metadata_graph()

    snaps = []
    leaves: dict[str, list[ContentEntry]] = {}
    for i, s in enumerate(t.metadata.snapshots):
        root = read_root_manifest(t.io, s.root_manifest or "", snapshot_id=s.snapshot_id,
                                  sequence_number=s.sequence_number)
        snaps.append((f"S{i + 1}", list(root.entries)))
        for e in root.entries:
            if e.content_type.is_manifest:
                leaves[e.location] = list(read_content_manifest(t.io, e.location).entries)
    drawn = v4_layout(snaps, leaves).graph

    assert [e.status for e in drawn.list_edges] == [e.status for e in real.list_edges]
    assert [(d.ordinals, d.cardinality) for d in drawn.manifest_dvs] == \
        [(d.ordinals, d.cardinality) for d in real.manifest_dvs]
    assert [(e.ordinal, e.status, bool(e.removed_by)) for e in drawn.entry_edges] == \
        [(e.ordinal, e.status, bool(e.removed_by)) for e in real.entry_edges]


def test_v4_layout_without_a_leaf_names_it_on_the_node() -> None:
    m1 = _leaf("m1", 2)
    g = v4_layout([("S", [m1, _data("d9")])]).graph
    assert g.manifests[0].error is not None and "m1.avro" in g.manifests[0].error
    assert g.snapshots[0].live_data_files == 3


@pytest.mark.parametrize("blob", [b"", b"garbage"])
def test_v4_layout_with_a_bad_inline_dv_is_an_error_not_an_exception(blob: bytes) -> None:
    m1 = _leaf("m1", 2)
    bad = ContentEntry(content_type=ContentType.MANIFEST_DV, location=m1.location,
                       file_format=FileFormat.PUFFIN, partition_spec_id=0, record_count=1,
                       file_size_in_bytes=7, referenced_file=m1.location,
                       deletion_vector=DeletionVectorRef(inline_content=blob))
    g = v4_layout([("S", [m1, bad])], {m1.location: [_data("a"), _data("b")]}).graph
    (dv,) = g.manifest_dvs
    assert dv.error is not None and dv.ordinals is None
    assert not any(e.removed_by for e in g.entry_edges)
