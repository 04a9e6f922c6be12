"""Row deltas on EXPERIMENTAL format-version 4 tables (single-file-commits proposal, "Row
Delta": examples "Root Manifest Only Row Delta" and "A Complex Row Delta with Modified Delete
Vectors"; docs/v4-layout.md#row-deltas): merge-on-read deletes and updates write data DVs, a new DV
replaces the old one of its data file, and every snapshot reads like a v3 twin's."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.io.root_manifest import load_manifest_dv, read_content_manifest
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind
from icenb.spec.manifest import DataFile, FileContent, FileFormat
from icenb.table.commit.v4_append import ROOT_ENTRY_LIMIT
from icenb.table.commit.v4_row_delta import V4RowDelta
from tests.table.commit.test_v4_append import _append, _root, _rows, _tables
from tests.table.commit.test_v4_overwrite import _commit, _ids, _same


class _Names:
    """Names of the drawings: data files Dn by partition; DVs (data or manifest DVs) DVn,
    data manifests DMn and delete manifests DVMn in the order they first appear."""

    def __init__(self) -> None:
        self.dvs: dict[tuple[str, object], str] = {}
        self.manifests: dict[str, str] = {}

    def __call__(self, e: ContentEntry) -> str:
        if e.content_type in (ContentType.MANIFEST_DV, ContentType.POSITION_DELETE):
            assert e.deletion_vector is not None
            dv = e.deletion_vector
            key = (e.location, dv.inline_content or dv.offset)
            return self.dvs.setdefault(key, f"DV{len(self.dvs) + 1}")
        if e.content_type.is_manifest:
            prefix = "DM" if e.content_type == ContentType.DATA_MANIFEST else "DVM"
            n = sum(1 for v in self.manifests.values() if v.rstrip("0123456789") == prefix)
            return self.manifests.setdefault(e.location, f"{prefix}{n + 1}")
        part = next(s for s in e.location.split("/") if s.startswith("p="))
        return "D" + part.removeprefix("p=")

    def shown(self, entries: list[ContentEntry]) -> list[tuple[str, str]]:
        return [(self(e), e.status.name) for e in entries]


def _leaf(t: icenb.table.Table, e: ContentEntry, kind: ManifestKind) -> list[ContentEntry]:
    leaf = read_content_manifest(t.io, e.location)
    assert leaf.kind == kind
    return list(leaf.entries)


def _names_of(dv: ContentEntry) -> str:
    """The data file a data DV references, as its drawing name."""
    assert dv.referenced_file is not None
    return "D" + next(s for s in dv.referenced_file.split("/")
                      if s.startswith("p=")).removeprefix("p=")


# --------------------------------------------------------------------------- the examples


def test_root_manifest_only_row_delta(tmp_path: Path) -> None:
    """Proposal: S1 has D1 in the root; S2 modifies D1 by a data DV DV1 and adds the updated
    rows in D2, both ADDED root entries, by one new root. Then a further delete in D1 replaces
    DV1 in place (DELETED) by DV2 holding DV1's positions and the new one."""
    v4, v3 = _tables(tmp_path)
    names = _Names()
    s1, _ = _append(v4, _rows(1))
    s2, written = _commit(v4, lambda t: t.update({"p": 2}, "id = 11", mode="merge-on-read"))
    s3, written3 = _commit(v4, lambda t: t.delete("id = 10", mode="merge-on-read"))
    v3.append(_rows(1))
    v3.update({"p": 2}, "id = 11", mode="merge-on-read")
    v3.delete("id = 10", mode="merge-on-read")

    assert names.shown(_root(v4, s1)) == [("D1", "ADDED")]
    root2 = _root(v4, s2)
    assert names.shown(root2) == [("D1", "EXISTING"), ("DV1", "ADDED"), ("D2", "ADDED")]
    dv1 = root2[1]
    assert dv1.file_format == FileFormat.PUFFIN and _names_of(dv1) == "D1"
    assert dv1.record_count == 1
    assert s2.summary is not None and s2.summary.operation == "overwrite"
    assert written == 1  # the root; the DV and D2 are data files
    root3 = _root(v4, s3)
    assert names.shown(root3) == [("D1", "EXISTING"), ("DV1", "DELETED"), ("D2", "EXISTING"),
                                  ("DV2", "ADDED")]
    assert _names_of(root3[3]) == "D1" and root3[3].record_count == 2
    assert root3[1].version_info.snapshot_id == s3.snapshot_id
    assert s3.summary is not None and s3.summary.operation == "delete"
    assert s3.summary.properties["removed-dvs"] == "1"
    assert written3 == 1
    assert _ids(v4) == [11]
    _same(v4, v3)


def test_a_complex_row_delta_with_modified_delete_vectors(tmp_path: Path) -> None:
    """Proposal: S1 = root with DM1 (D1, D2) and DVM1 (DV1 on D1, DV2 on D2); S2 updates more
    rows of D1: manifest DV DV3 on DVM1 removes DV1 (ordinal 0), new DVM2 holds DV4 on D1 (DV1's
    deletes and the new ones), the updated rows go to D3 in new DM2. No leaf is rewritten."""
    props = {ROOT_ENTRY_LIMIT: "0"}
    v4, v3 = _tables(tmp_path, props)
    names = _Names()
    _append(v4, _rows(1, 2))
    s1, _ = _commit(v4, lambda t: t.delete("id = 10 or id = 20", mode="merge-on-read"))
    s2, written = _commit(v4, lambda t: t.update({"p": 3}, "id = 11", mode="merge-on-read"))
    v3.append(_rows(1, 2))
    v3.delete("id = 10 or id = 20", mode="merge-on-read")
    v3.update({"p": 3}, "id = 11", mode="merge-on-read")

    root1 = _root(v4, s1)
    assert names.shown(root1) == [("DM1", "EXISTING"), ("DVM1", "ADDED")]
    assert names.shown(_leaf(v4, root1[0], ManifestKind.DATA)) == [
        ("D1", "ADDED"), ("D2", "ADDED")]
    dvm1 = _leaf(v4, root1[1], ManifestKind.DELETE)
    assert names.shown(dvm1) == [("DV1", "ADDED"), ("DV2", "ADDED")]
    assert [_names_of(e) for e in dvm1] == ["D1", "D2"]

    root2 = _root(v4, s2)
    assert names.shown(root2) == [("DM1", "EXISTING"), ("DVM1", "EXISTING"), ("DV3", "ADDED"),
                                  ("DVM2", "ADDED"), ("DM2", "ADDED")]
    assert [(e.location, e.manifest_stats) for e in root2[:2]] == [
        (e.location, e.manifest_stats) for e in root1]
    dv3 = root2[2]
    assert dv3.referenced_file == root1[1].location
    assert [int(i) for i in load_manifest_dv(v4.io, dv3).to_numpy()] == [0]
    dvm2 = _leaf(v4, root2[3], ManifestKind.DELETE)
    assert names.shown(dvm2) == [("DV4", "ADDED")]
    assert _names_of(dvm2[0]) == "D1" and dvm2[0].record_count == 2
    assert names.shown(_leaf(v4, root2[4], ManifestKind.DATA)) == [("D3", "ADDED")]
    assert s2.summary is not None and s2.summary.operation == "overwrite"
    assert written == 3  # the root, DVM2, DM2
    assert _ids(v4) == [11, 21]
    assert sorted((r["id"], r["p"]) for r in v4.to_arrow().to_pylist()) == [(11, 3), (21, 2)]
    _same(v4, v3)


# --------------------------------------------------------------------------- the rest


def test_a_delete_matching_nothing_commits_nothing(tmp_path: Path) -> None:
    v4, _ = _tables(tmp_path)
    s1, _ = _append(v4, _rows(1))
    assert v4.delete("id = 99", mode="merge-on-read") is None
    assert v4.current_snapshot == s1


def test_a_row_delta_takes_deletion_vectors_only(tmp_path: Path) -> None:
    v4, _ = _tables(tmp_path)
    _append(v4, _rows(1))
    catalog, identifier = v4._writable()
    producer = V4RowDelta(catalog, identifier, v4.io)
    data = next(iter(v4.scan().plan().tasks)).data_file
    with pytest.raises(ValidationError):
        producer.add_deletes([data])
    parquet_deletes = DataFile(content=FileContent.POSITION_DELETES, file_path="x.parquet",
                               file_format=FileFormat.PARQUET, partition=(1,), record_count=1,
                               file_size_in_bytes=1)
    with pytest.raises(ValidationError):
        producer.add_deletes([parquet_deletes])
