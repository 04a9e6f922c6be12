"""The single-file-commits proposal's "Examples", one test each, built with icenb's public API
only (EXPERIMENTAL format-version 4; docs/v4-layout.md#appends, #removals, #row-deltas): every
snapshot's root and leaf
manifests as the proposal draws them (entry kinds, statuses, which file, manifest DV ordinals,
order), the rows each snapshot reads and the metadata files each commit writes. The proposal's
two "Discarded Approaches" are layouts icenb refuses: a root or leaf holding them, written with
the low-level writer, is rejected on read (docs/v4-layout.md#manifest-dvs, #read-checks; table spec
"Deletion
Vectors": at most one DV per data file)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import InvalidMetadata
from icenb.io import root_manifest as cm
from icenb.io.root_manifest import (
    encode_content_manifest,
    inline_manifest_dv,
    load_manifest_dv,
    read_content_manifest,
    write_leaf_manifest,
)
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind, VersionInfo
from icenb.spec.manifest import EntryStatus
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.v4_append import ROOT_ENTRY_LIMIT
from tests.table.commit.test_v4_append import _metadata_files, _root, _rows

Picture = dict[str, Any]


class _Drawing:
    """Reads snapshots as the proposal draws them. Data files are ``Dn`` (the file of partition
    ``p = n``); data manifests ``Mn`` (``DMn`` with ``data_prefix="DM"``), delete manifests
    ``DVMn`` and deletion vectors (manifest DVs and data DVs alike) ``DVn``, numbered in the
    order they first appear in a root, then in its leaves."""

    def __init__(self, t: icenb.table.Table, data_prefix: str = "M") -> None:
        self.t = t
        self.data_prefix = data_prefix
        self.manifests: dict[str, str] = {}
        self.dvs: dict[tuple[str, object], str] = {}

    def name(self, e: ContentEntry) -> str:
        t = e.content_type
        if t in (ContentType.MANIFEST_DV, ContentType.POSITION_DELETE):
            assert e.deletion_vector is not None
            dv = e.deletion_vector
            return self.dvs.setdefault((e.location, dv.inline_content or dv.offset),
                                       f"DV{len(self.dvs) + 1}")
        if t.is_manifest:
            prefix = self.data_prefix if t == ContentType.DATA_MANIFEST else "DVM"
            if e.location not in self.manifests:
                n = sum(1 for v in self.manifests.values()
                        if v.rstrip("0123456789") == prefix)
                self.manifests[e.location] = f"{prefix}{n + 1}"
            return self.manifests[e.location]
        assert t == ContentType.DATA, t
        return _file_name(e.location)

    def _entries(self, entries: list[ContentEntry], picture: Picture) -> list[tuple[str, str]]:
        shown = [(self.name(e), e.status.name) for e in entries]
        for (name, _), e in zip(shown, entries, strict=True):
            if e.content_type == ContentType.MANIFEST_DV:
                assert e.referenced_file is not None
                ordinals = [int(i) for i in load_manifest_dv(self.t.io, e).to_numpy()]
                picture[name] = (self.manifests[e.referenced_file], ordinals)
            elif e.content_type == ContentType.POSITION_DELETE:
                assert e.referenced_file is not None
                picture[name] = (_file_name(e.referenced_file), e.record_count)
        return shown

    def __call__(self, snap: Snapshot) -> Picture:
        """``{"root": [(name, status), ...], manifest name: its leaf's entries likewise,
        manifest DV name: (manifest, ordinals), data DV name: (data file, deleted rows)}``."""
        picture: Picture = {}
        root = _root(self.t, snap)
        picture["root"] = self._entries(root, picture)
        for e in root:
            if e.content_type.is_manifest:
                leaf = read_content_manifest(self.t.io, e.location)
                kind = ManifestKind.DATA if e.content_type == ContentType.DATA_MANIFEST \
                    else ManifestKind.DELETE
                assert leaf.kind == kind
                picture[self.name(e)] = self._entries(list(leaf.entries), picture)
        return picture


def _file_name(location: str) -> str:
    return "D" + next(s for s in location.split("/") if s.startswith("p=")).removeprefix("p=")


def _table(tmp_path: Path, limit: int = 2) -> icenb.table.Table:
    """A v4 table ``id long, p int`` partitioned by ``p``, so partition ``n`` is file Dn."""
    wh = icenb.warehouse(tmp_path)
    return wh.create_table("db.t", "id long, p int", partition_by=["p"], format_version=4,
                           properties={ROOT_ENTRY_LIMIT: str(limit)})


def _commit(t: icenb.table.Table, change: Callable[[icenb.table.Table], Snapshot | None]
            ) -> tuple[Snapshot, int]:
    """Run ``change(t)``: the new snapshot and the metadata files (other than the table
    metadata JSON) the commit wrote."""
    before = _metadata_files(t)
    snap = change(t)
    assert snap is not None and snap == t.current_snapshot
    return snap, len(_metadata_files(t) - before)


def _ids(t: icenb.table.Table, snap: Snapshot) -> list[int]:
    return sorted(r["id"] for r in t.scan(snapshot_id=snap.snapshot_id).to_arrow().to_pylist())


A, E, X = "ADDED", "EXISTING", "DELETED"


# --------------------------------------------------------------------------- Append Files


def test_appends_to_the_root_manifest(tmp_path: Path) -> None:
    """S1: root A = [M1 ADDED], M1 = D1, D2, D3; S2: root B = [M1 EXISTING, D4 ADDED]; S3:
    root C = [M1 EXISTING, D4 EXISTING, D5 ADDED]. S2 and S3 each write the root only."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, n1 = _commit(t, lambda t: t.append(_rows(1, 2, 3)))
    s2, n2 = _commit(t, lambda t: t.append(_rows(4)))
    s3, n3 = _commit(t, lambda t: t.append(_rows(5)))

    leaf = [("D1", A), ("D2", A), ("D3", A)]
    assert draw(s1) == {"root": [("M1", A)], "M1": leaf}
    assert draw(s2) == {"root": [("M1", E), ("D4", A)], "M1": leaf}
    assert draw(s3) == {"root": [("M1", E), ("D4", E), ("D5", A)], "M1": leaf}
    assert (n1, n2, n3) == (2, 1, 1)
    assert _ids(t, s1) == [10, 11, 20, 21, 30, 31]
    assert _ids(t, s3) == [10, 11, 20, 21, 30, 31, 40, 41, 50, 51]


def test_appends_to_the_root_manifest_using_new_data_manifests(tmp_path: Path) -> None:
    """S1: root A = [M1 ADDED], M1 = D1, D2, D3; S2: root B = [M1 EXISTING, M2 ADDED],
    M2 = D4, D5, D6 (the v3 shape: the root takes the manifest list's place)."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, _ = _commit(t, lambda t: t.append(_rows(1, 2, 3)))
    s2, n2 = _commit(t, lambda t: t.append(_rows(4, 5, 6)))

    m1 = [("D1", A), ("D2", A), ("D3", A)]
    assert draw(s1) == {"root": [("M1", A)], "M1": m1}
    assert draw(s2) == {"root": [("M1", E), ("M2", A)], "M1": m1,
                        "M2": [("D4", A), ("D5", A), ("D6", A)]}
    assert n2 == 2  # the new leaf and the root
    assert _ids(t, s2) == [p * 10 + i for p in range(1, 7) for i in range(2)]


# --------------------------------------------------------------------------- Remove Files


def test_removing_a_file_from_the_root_manifest(tmp_path: Path) -> None:
    """S1: D1 and D2 in the root; S2: D1 replaced in place by a DELETED entry, D2 unchanged."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, _ = _commit(t, lambda t: t.append(_rows(1, 2)))
    s2, n2 = _commit(t, lambda t: t.delete("p = 1"))

    assert draw(s1) == {"root": [("D1", A), ("D2", A)]}
    assert draw(s2) == {"root": [("D1", X), ("D2", E)]}
    assert n2 == 1
    assert (_ids(t, s1), _ids(t, s2)) == ([10, 11, 20, 21], [20, 21])


def test_removing_a_file_from_a_leaf_manifest(tmp_path: Path) -> None:
    """S1: root A = [M1 ADDED], M1 = D1, D2, D3; S2 removes D2: root B = [M1 EXISTING,
    DV1 ADDED], DV1 applies to M1 and deletes ordinal 1. M1 itself is not rewritten."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, _ = _commit(t, lambda t: t.append(_rows(1, 2, 3)))
    s2, n2 = _commit(t, lambda t: t.delete("p = 2"))

    m1 = [("D1", A), ("D2", A), ("D3", A)]
    assert draw(s1) == {"root": [("M1", A)], "M1": m1}
    assert draw(s2) == {"root": [("M1", E), ("DV1", A)], "M1": m1, "DV1": ("M1", [1])}
    assert n2 == 1  # the root: DV1 is inline
    assert _ids(t, s2) == [10, 11, 30, 31]


# --------------------------------------------------------------------------- Overwrite Files


def test_overwrite_files_in_root_manifest(tmp_path: Path) -> None:
    """S1: [D1]; S2 replaces D1 by D2: [D1 DELETED, D2 ADDED]; S3 replaces D2 by D3:
    [D2 DELETED, D3 ADDED] (S2's DELETED D1 is not carried). No file besides the root."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, _ = _commit(t, lambda t: t.append(_rows(1)))
    s2, n2 = _commit(t, lambda t: t.overwrite(_rows(2), "p = 1"))
    s3, n3 = _commit(t, lambda t: t.overwrite(_rows(3), "p = 2"))

    assert draw(s1) == {"root": [("D1", A)]}
    assert draw(s2) == {"root": [("D1", X), ("D2", A)]}
    assert draw(s3) == {"root": [("D2", X), ("D3", A)]}
    assert (n2, n3) == (1, 1)
    assert [_ids(t, s) for s in (s1, s2, s3)] == [[10, 11], [20, 21], [30, 31]]
    assert s3.summary is not None and s3.summary.operation == "overwrite"


def test_overwrite_files_in_in_leaf_manifest(tmp_path: Path) -> None:
    """S1: root = [M1], M1 = D1, D2, D3; S2 replaces D2 by D4: [M1 EXISTING, DV1 ADDED
    (M1 ordinal 1), D4 ADDED]."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, _ = _commit(t, lambda t: t.append(_rows(1, 2, 3)))
    s2, n2 = _commit(t, lambda t: t.overwrite(_rows(4), "p = 2"))

    m1 = [("D1", A), ("D2", A), ("D3", A)]
    assert draw(s1) == {"root": [("M1", A)], "M1": m1}
    assert draw(s2) == {"root": [("M1", E), ("DV1", A), ("D4", A)], "M1": m1,
                        "DV1": ("M1", [1])}
    assert n2 == 1
    assert _ids(t, s2) == [10, 11, 30, 31, 40, 41]


# --------------------------------------------------------------------------- Row Delta


def test_root_manifest_only_row_delta(tmp_path: Path) -> None:
    """S1: [D1]; S2 (a merge-on-read update of one row) = [D1 EXISTING, DV1 ADDED (a data DV
    on D1), D2 ADDED (the updated row, moved to p = 2)]: the root is the only metadata file."""
    t = _table(tmp_path)
    draw = _Drawing(t)
    s1, _ = _commit(t, lambda t: t.append(_rows(1)))
    s2, n2 = _commit(t, lambda t: t.update({"p": 2}, "id = 11", mode="merge-on-read"))

    assert draw(s1) == {"root": [("D1", A)]}
    assert draw(s2) == {"root": [("D1", E), ("DV1", A), ("D2", A)], "DV1": ("D1", 1)}
    assert [e.file_format.name for e in _root(t, s2)] == ["PARQUET", "PUFFIN", "PARQUET"]
    assert n2 == 1
    rows = t.scan(snapshot_id=s2.snapshot_id).to_arrow().to_pylist()
    assert sorted((r["id"], r["p"]) for r in rows) == [(10, 1), (11, 2)]


def test_a_complex_row_delta_with_modified_delete_vectors(tmp_path: Path) -> None:
    """S1: root = [DM1, DVM1], DM1 = D1, D2, DVM1 = DV1 (on D1), DV2 (on D2). S2 updates more
    rows of D1: root = [DM1 EXISTING, DVM1 EXISTING, DV3 ADDED (manifest DV on DVM1, ordinal 0
    = DV1), DVM2 ADDED (DV4 on D1: DV1's row and the new one), DM2 ADDED (D3, the updated
    row)]. Built with ``write.v4.root-entry-limit`` 0 so new entries go to leaves. The
    proposal draws DM1 as ADDED in S1; a public-API table needs an append before the delete
    that writes DVM1, so DM1 is EXISTING there."""
    t = _table(tmp_path, limit=0)
    draw = _Drawing(t, data_prefix="DM")
    _commit(t, lambda t: t.append(_rows(1, 2)))
    s1, _ = _commit(t, lambda t: t.delete("id = 10 or id = 20", mode="merge-on-read"))
    s2, n2 = _commit(t, lambda t: t.update({"p": 3}, "id = 11", mode="merge-on-read"))

    dm1 = [("D1", A), ("D2", A)]
    dvm1 = [("DV1", A), ("DV2", A)]
    assert draw(s1) == {"root": [("DM1", E), ("DVM1", A)], "DM1": dm1, "DVM1": dvm1,
                        "DV1": ("D1", 1), "DV2": ("D2", 1)}
    assert draw(s2) == {
        "root": [("DM1", E), ("DVM1", E), ("DV3", A), ("DVM2", A), ("DM2", A)],
        "DM1": dm1, "DVM1": dvm1, "DV1": ("D1", 1), "DV2": ("D2", 1),
        "DV3": ("DVM1", [0]),
        "DVM2": [("DV4", A)], "DV4": ("D1", 2),
        "DM2": [("D3", A)],
    }
    assert n2 == 3  # the root, DVM2 and DM2; no leaf rewritten
    assert _ids(t, s1) == [11, 21]
    rows = t.scan(snapshot_id=s2.snapshot_id).to_arrow().to_pylist()
    assert sorted((r["id"], r["p"]) for r in rows) == [(11, 3), (21, 2)]


# --------------------------------------------------------------------------- Discarded Approaches


def _forge(path: str, data: bytes) -> None:
    """Replace a metadata file's bytes (local warehouse): a writer icenb is not."""
    Path(path.removeprefix("file://")).write_bytes(data)


def test_using_multiple_delete_vectors_to_keep_changes_distinct_is_rejected(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proposal's discarded Snapshot 3: root = [M1 EXISTING, DV1 EXISTING (M1 ordinal 1),
    DV2 ADDED (M1 ordinal 2)], two live manifest DVs on one leaf. icenb writes the union
    instead (docs/v4-layout.md#manifest-dvs); the writer refuses this root, and a root holding it
    fails on read naming the
    root and the second DV's entry."""
    t = _table(tmp_path)
    _commit(t, lambda t: t.append(_rows(1, 2, 3)))
    s2, _ = _commit(t, lambda t: t.delete("p = 2"))
    m1, dv1 = _root(t, s2)  # resolved: EXISTING entries keep explicit sequence numbers
    assert s2.root_manifest is not None
    root = s2.root_manifest
    dv2 = inline_manifest_dv(m1, [2])
    forged = [m1.with_status(EntryStatus.EXISTING), dv1.with_status(EntryStatus.EXISTING), dv2]

    with pytest.raises(InvalidMetadata) as on_write:
        encode_content_manifest(root, ManifestKind.ROOT, forged)
    assert on_write.value.field == "entries[2].referenced_file"
    with monkeypatch.context() as m:
        m.setattr(cm, "check_manifest", lambda *a, **k: None)
        _forge(root, encode_content_manifest(root, ManifestKind.ROOT, forged))

    reopened = icenb.warehouse(tmp_path).table("db.t")
    with pytest.raises(InvalidMetadata) as on_read:
        reopened.to_arrow()
    assert on_read.value.file == root
    assert on_read.value.field == "entries[2].referenced_file"
    assert on_read.value.value == m1.location
    assert "second live manifest DV" in str(on_read.value)


def test_modifying_an_existing_delete_vector_in_a_delete_manifest_is_rejected(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proposal's discarded Snapshot 3: root = [M1 EXISTING, M4 ADDED] where delete
    manifest M4 holds two DVs on D2 (the earlier deletes and the new ones). The table spec
    allows at most one DV per data file; icenb writes one DV holding both
    (docs/v4-layout.md#row-deltas), its writer
    refuses such a leaf, and a leaf with two live DVs for one data file fails on read naming
    the leaf and the second DV."""
    t = _table(tmp_path, limit=0)
    _commit(t, lambda t: t.append(_rows(1, 2, 3)))
    s1, _ = _commit(t, lambda t: t.delete("id = 20", mode="merge-on-read"))
    s2, _ = _commit(t, lambda t: t.delete("id = 21", mode="merge-on-read"))
    m1, m2 = _root(t, s1)
    old_dv = read_content_manifest(t.io, m2.location).entries[0]  # D2: row 0
    new_leaf = _root(t, s2)[3]
    new_dv = read_content_manifest(t.io, new_leaf.location).entries[0]  # D2: rows 0 and 1
    d2 = old_dv.referenced_file
    assert d2 is not None and _file_name(d2) == "D2"
    assert (new_dv.referenced_file, old_dv.record_count, new_dv.record_count) == (d2, 1, 2)
    # the earlier DV carried into M4 as a writer would: EXISTING, with S1's resolved values
    old_dv = replace(old_dv, version_info=VersionInfo(
        EntryStatus.EXISTING, s1.snapshot_id, s1.sequence_number, s1.sequence_number))
    m4_location = m2.location.replace(".avro", "-m4.avro")
    with pytest.raises(InvalidMetadata) as on_write:
        write_leaf_manifest(t.io, m4_location, ManifestKind.DELETE, [old_dv, new_dv],
                            partition_spec_id=m2.partition_spec_id)
    assert on_write.value.field == "entries[1].referenced_file"
    assert on_write.value.value == d2
    with monkeypatch.context() as m:
        m.setattr(cm, "check_manifest", lambda *a, **k: None)
        m4 = write_leaf_manifest(t.io, m4_location, ManifestKind.DELETE, [old_dv, new_dv],
                                 partition_spec_id=m2.partition_spec_id)
    assert s2.root_manifest is not None
    root = s2.root_manifest
    _forge(root, encode_content_manifest(root, ManifestKind.ROOT,
                                         [m1.with_status(EntryStatus.EXISTING), m4]))

    reopened = icenb.warehouse(tmp_path).table("db.t")
    with pytest.raises(InvalidMetadata) as on_read:
        reopened.to_arrow()
    assert on_read.value.file in (root, m4_location)
    assert on_read.value.field is not None and "referenced_file" in on_read.value.field
    assert on_read.value.value == new_dv.referenced_file
