"""Manifest DVs written to Puffin files (table property ``write.v4.manifest-dv.storage`` =
``puffin``; single-file-commits proposal, "Manifest Delete Vector ... a pointer to a DV blob in
a Puffin file"; docs/v4-layout.md#manifest-dvs): one Puffin file per commit attempt, read like the
inline twin by planning, compaction, expiry and the metadata views."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display import render
from icenb.errors import CommitConflict, CorruptFile, ValidationError
from icenb.io.puffin import DELETION_VECTOR_V1, MAGIC, PuffinReader
from icenb.io.root_manifest import (
    MANIFEST_DV_STORAGE,
    load_manifest_dv,
    manifest_dv_storage,
)
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.manifest import EntryStatus
from icenb.table.commit.v4_append import ROOT_ENTRY_LIMIT
from icenb.table.commit.v4_compaction import COMPACTION_ENABLED, COMPACTION_MIN_COUNT
from tests.table._helpers import written_by_another_engine
from tests.table.commit.test_v4_append import _leaf, _metadata_files, _Names, _root, _rows
from tests.table.commit.test_v4_expire import _expire, _files
from tests.table.commit.test_v4_overwrite import _commit, _names, _ordinals

PUFFIN = {MANIFEST_DV_STORAGE: "puffin"}
OFF = {ROOT_ENTRY_LIMIT: "0", COMPACTION_ENABLED: "false"}


def _twins(tmp_path: Path, properties: dict[str, str] | None = None
           ) -> tuple[icenb.table.Table, icenb.table.Table]:
    """A v4 table writing Puffin manifest DVs and its v4 twin writing them inline."""
    wh = icenb.warehouse(tmp_path)
    props = dict(properties or {})
    puffin = wh.create_table("db.puffin", "id long, p int", partition_by=["p"],
                             format_version=4, properties={**props, **PUFFIN})
    inline = wh.create_table("db.inline", "id long, p int", partition_by=["p"],
                             format_version=4, properties=props)
    return puffin, inline


def _both(tables: tuple[icenb.table.Table, ...], change: Any) -> None:
    for t in tables:
        change(t)


def _reads(t: icenb.table.Table) -> list[list[dict[str, Any]]]:
    """Rows of every snapshot, in snapshot order, with their row ids."""
    cols = ["id", "p", "_row_id"]
    return [sorted(t.scan(snapshot_id=s.snapshot_id, columns=cols).to_arrow().to_pylist(),
                   key=lambda r: r["id"]) for s in t.metadata.snapshots]


def _puffins(t: icenb.table.Table) -> set[str]:
    return {n for n in _metadata_files(t) if n.endswith(".puffin")}


def _dvs(root: list[ContentEntry]) -> list[ContentEntry]:
    return [e for e in root if e.content_type == ContentType.MANIFEST_DV]


def _current_root(t: icenb.table.Table) -> list[ContentEntry]:
    snap = t.current_snapshot
    assert snap is not None
    return _root(t, snap)


def test_a_removal_from_a_leaf_writes_its_dv_to_a_puffin_file(tmp_path: Path) -> None:
    """S2 removes D2 from M1: the root entry points at a blob of a new Puffin file in the
    metadata directory (the commit writes the root and that file); M1 is untouched."""
    puffin, inline = _twins(tmp_path)
    names = _names(_Names())
    _both((puffin, inline), lambda t: t.append(_rows(1, 2, 3)))
    s2, written = _commit(puffin, lambda t: t.delete("p = 2"))
    inline.delete("p = 2")

    m1, dv = _root(puffin, s2)
    assert (names(m1), m1.status, dv.status) == ("M1", EntryStatus.EXISTING, EntryStatus.ADDED)
    assert dv.content_type == ContentType.MANIFEST_DV and dv.referenced_file == m1.location
    assert dv.location.endswith(".puffin") and dv.location != m1.location
    assert dv.location.rsplit("/", 2)[-2] == "metadata"
    assert written == 2  # the root and the Puffin file
    assert _puffins(puffin) == {dv.location.rsplit("/", 1)[-1]}
    ref = dv.deletion_vector
    assert ref is not None and not ref.is_inline and ref.inline_content is None
    assert dv.record_count == 1
    reader = PuffinReader(puffin.io.new_input(dv.location), file=dv.location)
    (blob,) = reader.blobs
    assert (ref.offset, ref.size_in_bytes) == (blob.offset, blob.length) == (len(MAGIC),
                                                                              blob.length)
    assert blob.type == DELETION_VECTOR_V1
    assert blob.properties["referenced-data-file"] == m1.location
    assert blob.properties["cardinality"] == "1"
    assert reader.properties["created-by"].startswith("icenb ")
    assert dv.file_size_in_bytes == reader.file_size
    assert _ordinals(puffin, dv) == [1]
    # the same ordinals as the inline twin's DV, and the same bytes in the blob
    (inline_dv,) = _dvs(_current_root(inline))
    assert inline_dv.deletion_vector is not None
    assert reader.read_blob(blob) == inline_dv.deletion_vector.inline_content
    assert _reads(puffin) == _reads(inline)
    assert sorted(r["id"] for r in puffin.to_arrow().to_pylist()) == [10, 11, 30, 31]


def test_one_puffin_file_holds_every_dv_of_a_commit(tmp_path: Path) -> None:
    """Removing from two leaves: two DV entries, one Puffin file, one blob per leaf."""
    puffin, inline = _twins(tmp_path, OFF)
    for t in (puffin, inline):
        t.append(_rows(1, 2, 3))
        t.append(_rows(4, 5, 6))
    s3, written = _commit(puffin, lambda t: t.delete("p = 2 or p = 6"))
    inline.delete("p = 2 or p = 6")

    root = _root(puffin, s3)
    m1, m2 = (e for e in root if e.content_type == ContentType.DATA_MANIFEST)
    dv1, dv2 = _dvs(root)
    assert written == 2
    assert dv1.location == dv2.location
    assert (dv1.referenced_file, dv2.referenced_file) == (m1.location, m2.location)
    reader = PuffinReader(puffin.io.new_input(dv1.location), file=dv1.location)
    assert [(b.properties["referenced-data-file"], b.offset) for b in reader.blobs] == [
        (m1.location, dv1.deletion_vector.offset),  # type: ignore[union-attr]
        (m2.location, dv2.deletion_vector.offset)]  # type: ignore[union-attr]
    assert (_ordinals(puffin, dv1), _ordinals(puffin, dv2)) == ([1], [2])
    assert _reads(puffin) == _reads(inline)


def test_a_second_removal_unions_and_replaces_the_puffin_dv(tmp_path: Path) -> None:
    """docs/v4-layout.md#manifest-dvs: the new DV (a new Puffin file) holds the union; the old one
    is
    DELETED in the root and its Puffin file is kept (older snapshots read through it)."""
    puffin, inline = _twins(tmp_path)
    names = _names(_Names())
    _both((puffin, inline), lambda t: t.append(_rows(1, 2, 3)))
    s2, _ = _commit(puffin, lambda t: t.delete("p = 2"))
    s3, written = _commit(puffin, lambda t: t.delete("p = 3"))
    _both((inline,), lambda t: (t.delete("p = 2"), t.delete("p = 3")))

    (old,) = _dvs(_root(puffin, s2))
    root3 = _root(puffin, s3)
    assert _shown3(root3, names) == [("M1", "EXISTING"), ("DV1", "DELETED"), ("DV2", "ADDED")]
    assert root3[1].location == old.location and root3[1].deletion_vector == old.deletion_vector
    assert root3[2].location != old.location
    assert _ordinals(puffin, root3[2]) == [1, 2] and root3[2].record_count == 2
    assert written == 2
    assert len(_puffins(puffin)) == 2  # the replaced DV's file is not deleted by the commit
    assert _reads(puffin) == _reads(inline)


def _shown3(entries: list[ContentEntry], names: Any) -> list[tuple[str, str]]:
    return [(names(e), e.status.name) for e in entries]


def test_compaction_applies_a_puffin_dv_to_its_leaf(tmp_path: Path) -> None:
    """An EXISTING Puffin DV is applied when its leaf is compacted: the new leaf holds the
    live files only, the DV is not carried; rows and row ids stay those of the inline twin."""
    puffin, inline = _twins(tmp_path, OFF)
    for t in (puffin, inline):
        t.append(_rows(1, 2, 3))
        t.append(_rows(4, 5, 6))
        t.delete("p = 1")
        t.set_properties({COMPACTION_ENABLED: "true", COMPACTION_MIN_COUNT: "2",
                          ROOT_ENTRY_LIMIT: "2"})
    (dv,) = _dvs(_current_root(puffin))
    assert dv.deletion_vector is not None and not dv.deletion_vector.is_inline
    _both((puffin, inline), lambda t: t.append(_rows(7)))

    names = _Names()
    root = _current_root(puffin)
    assert [(names(e), e.status.name) for e in root] == [("M1", "EXISTING"), ("D7", "ADDED")]
    assert _leaf(puffin, root[0], names) == [(f"D{p}", "EXISTING") for p in (2, 3, 4, 5, 6)]
    assert dv.location.rsplit("/", 1)[-1] in _puffins(puffin)  # no file deleted by a commit
    assert _reads(puffin) == _reads(inline)


def test_a_conflicting_attempt_leaves_no_puffin_file(tmp_path: Path) -> None:
    """The Puffin file is an attempt file: attempt 1 (stale parent) conflicts and its file is
    deleted; the retry writes its own, the one the root names."""
    puffin, _ = _twins(tmp_path)
    puffin.append(_rows(1, 2, 3))
    other = icenb.warehouse(tmp_path).table("db.puffin")
    puffin.append(_rows(4))
    other.delete("p = 2")  # attempt 1 on the stale root: conflict; retry on the new one
    (dv,) = _dvs(_current_root(other))
    assert _puffins(other) == {dv.location.rsplit("/", 1)[-1]}
    assert sorted(r["p"] for r in other.to_arrow().to_pylist()) == [1, 1, 3, 3, 4, 4]

    stale = icenb.warehouse(tmp_path).table("db.puffin")
    other.delete("p = 3")
    before = _metadata_files(other)
    with pytest.raises(CommitConflict):
        stale.delete("p = 3")  # retry finds D3 gone: nothing it wrote stays
    assert _metadata_files(other) == before


def test_expiry_deletes_a_puffin_file_only_when_unreferenced(tmp_path: Path) -> None:
    """docs/v4-layout.md#maintenance: a live Puffin manifest DV reaches its file; a DELETED one
    reaches nothing. P1 (S2's DV, carried by S3) goes with the last snapshot listing it live."""
    t, _ = _twins(tmp_path)
    s1 = t.append(_rows(1, 2, 3))
    s2 = t.delete("p = 2")  # DV1 in P1
    s3 = t.append(_rows(4))  # DV1 carried (EXISTING)
    s4 = t.delete("p = 3")  # DV1 DELETED, DV2 in P2
    assert s2 is not None and s4 is not None
    (p1,) = {e.location for e in _dvs(_root(t, s2))}
    p2 = next(e.location for e in _dvs(_root(t, s4)) if e.status == EntryStatus.ADDED)
    assert p1 in _files(t) and p2 in _files(t)

    r = _expire(t, [s1.snapshot_id, s2.snapshot_id])
    assert r.deleted_files.get("manifest_dvs", ()) == ()  # S3 still lists DV1 live
    assert p1 in _files(t)
    r = _expire(t, [s3.snapshot_id])
    assert r.deleted_files["manifest_dvs"] == (p1,)
    assert p1 not in _files(t) and p2 in _files(t)
    assert sorted(r["p"] for r in t.to_arrow().to_pylist()) == [1, 1, 4, 4]


def test_a_corrupt_puffin_blob_names_the_puffin_file(tmp_path: Path) -> None:
    t, _ = _twins(tmp_path)
    t.append(_rows(1, 2, 3))
    t.delete("p = 2")
    (dv,) = _dvs(_current_root(t))
    ref = dv.deletion_vector
    assert ref is not None and ref.offset is not None and ref.size_in_bytes is not None
    path = dv.location.removeprefix("file://")
    data = bytearray(Path(path).read_bytes())
    data[ref.offset + ref.size_in_bytes - 1] ^= 0xFF  # the blob's CRC-32
    Path(path).write_bytes(bytes(data))
    with pytest.raises(CorruptFile) as e:
        load_manifest_dv(t.io, dv)
    assert e.value.file == dv.location
    with pytest.raises(CorruptFile) as e:
        t.scan().plan()
    assert e.value.file == dv.location


def test_the_metadata_views_show_the_puffin_dv(tmp_path: Path) -> None:
    t, _ = _twins(tmp_path)
    t.append(_rows(1, 2, 3))
    s2 = t.delete("p = 2")
    s3 = t.delete("p = 3")
    assert s2 is not None and s3 is not None
    g = t.metadata_graph()
    by_snap = {sid: sorted((g.manifest_dv(e.dv_key).ordinals, e.status)  # type: ignore[union-attr]
                           for e in g.dv_edges if e.snapshot_id == sid)
               for sid in (s2.snapshot_id, s3.snapshot_id)}
    assert by_snap[s2.snapshot_id] == [((1,), "ADDED")]
    assert by_snap[s3.snapshot_id] == [((1,), "DELETED"), ((1, 2), "ADDED")]
    name = next(e.location for e in _dvs(_root(t, s3))
                if e.status == EntryStatus.ADDED).rsplit("/", 1)[-1]
    graph, tree = render(g), render(t.metadata_tree())
    assert f"DV3 applies to M1, removes #1, #2 ({name}, added by S3)" in graph.text
    assert "ADDED    DV2 manifest DV → M1, removes #1, #2" in tree.text
    assert name.endswith("-dv0.puffin") and "-dv0.puffin" in graph.html
    assert "Metadata tree" in tree.html
    entries = t.inspect.entries(s3.snapshot_id).to_pylist()
    assert sorted(r["data_file"]["file_path"].rsplit("/", 2)[-2] for r in entries
                  if r["status"] == 2) == ["p=2", "p=3"]


def test_the_storage_property() -> None:
    assert manifest_dv_storage({}) == "inline"
    assert manifest_dv_storage({MANIFEST_DV_STORAGE: "Puffin"}) == "puffin"
    with pytest.raises(ValidationError) as e:
        manifest_dv_storage({MANIFEST_DV_STORAGE: "parquet"})
    assert (e.value.field, e.value.value) == (MANIFEST_DV_STORAGE, "parquet")


def test_a_bad_storage_value_fails_the_removal_and_leaves_nothing(tmp_path: Path) -> None:
    t, _ = _twins(tmp_path)
    t.append(_rows(1, 2, 3))
    with pytest.raises(ValidationError):  # refused at the door (issue 17) ...
        t.set_properties({MANIFEST_DV_STORAGE: "sideways"})
    written_by_another_engine(t, {MANIFEST_DV_STORAGE: "sideways"})  # ... or written elsewhere
    before, snap = _metadata_files(t), t.current_snapshot
    with pytest.raises(ValidationError) as e:
        t.delete("p = 2")
    assert e.value.field == MANIFEST_DV_STORAGE
    assert t.current_snapshot == snap
    assert _metadata_files(t) == before
