"""Appends to EXPERIMENTAL format-version 4 tables (single-file-commits proposal, examples
"Appends To the Root Manifest" and "Appends to the Root Manifest using new Data Manifests";
docs/v4-layout.md#appends): the root after each commit, rows equal to a v3 twin's, and the number of
metadata files each commit writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import UnsupportedFeature, UnsupportedVersion, ValidationError
from icenb.io.root_manifest import read_content_manifest, read_root_manifest
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind
from icenb.spec.manifest import EntryStatus
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.v4_append import DEFAULT_ROOT_ENTRY_LIMIT, ROOT_ENTRY_LIMIT
from tests.table._helpers import written_by_another_engine

ADDED, EXISTING = EntryStatus.ADDED, EntryStatus.EXISTING


def _rows(*parts: int) -> list[dict[str, Any]]:
    """Two rows in each partition ``p`` of ``parts``: one data file per partition."""
    return [{"id": p * 10 + i, "p": p} for p in parts for i in range(2)]


def _tables(tmp_path: Path, properties: dict[str, str] | None = None
            ) -> tuple[icenb.table.Table, icenb.table.Table]:
    """A v4 table and its v3 twin, partitioned by ``p`` (so partition ``n`` is file Dn)."""
    wh = icenb.warehouse(tmp_path)
    v4 = wh.create_table("db.v4", "id long, p int", partition_by=["p"], format_version=4,
                         properties=properties)
    v3 = wh.create_table("db.v3", "id long, p int", partition_by=["p"], format_version=3,
                         properties=properties)
    return v4, v3


def _metadata_files(t: icenb.table.Table) -> set[str]:
    """Metadata files other than the table metadata JSON."""
    d = Path(t.location.removeprefix("file://")) / "metadata"
    return {n for n in os.listdir(d) if not n.endswith(".metadata.json")}


def _append(t: icenb.table.Table, rows: list[dict[str, Any]]) -> tuple[Snapshot, int]:
    """Append; the snapshot and the number of metadata files the commit wrote."""
    before = _metadata_files(t)
    snap = t.append(rows)
    return snap, len(_metadata_files(t) - before)


class _Names:
    """Names as in the proposal's drawings: data files Dn by partition, manifests Mn in the
    order they first appear."""

    def __init__(self) -> None:
        self.manifests: dict[str, str] = {}

    def __call__(self, e: ContentEntry) -> str:
        if e.content_type.is_manifest:
            return self.manifests.setdefault(e.location, f"M{len(self.manifests) + 1}")
        part = next(s for s in e.location.split("/") if s.startswith("p="))
        return "D" + part.removeprefix("p=")


def _root(t: icenb.table.Table, snap: Snapshot) -> list[ContentEntry]:
    assert snap.root_manifest is not None and snap.manifest_list is None
    return list(read_root_manifest(t.io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                                   sequence_number=snap.sequence_number).entries)


def _shown(entries: list[ContentEntry], names: _Names) -> list[tuple[str, str]]:
    return [(names(e), e.status.name) for e in entries]


def _leaf(t: icenb.table.Table, e: ContentEntry, names: _Names) -> list[tuple[str, str]]:
    leaf = read_content_manifest(t.io, e.location)
    assert leaf.kind == ManifestKind.DATA
    return _shown(list(leaf.entries), names)


def _same_rows(v4: icenb.table.Table, v3: icenb.table.Table) -> None:
    """Every snapshot of the v4 table reads the rows of the v3 twin's snapshot at the same
    position, row ids (``_row_id``) included."""
    s4, s3 = list(v4.metadata.snapshots), list(v3.metadata.snapshots)
    assert len(s4) == len(s3)
    for a, b in zip(s4, s3, strict=True):
        assert (a.first_row_id, a.added_rows) == (b.first_row_id, b.added_rows)
        rows4 = v4.scan(snapshot_id=a.snapshot_id).to_arrow().to_pylist()
        rows3 = v3.scan(snapshot_id=b.snapshot_id).to_arrow().to_pylist()
        assert sorted(rows4, key=lambda r: r["id"]) == sorted(rows3, key=lambda r: r["id"])
        assert rows4
    assert v4.metadata.next_row_id == v3.metadata.next_row_id


# --------------------------------------------------------------------------- the examples


def test_appends_to_the_root_manifest(tmp_path: Path) -> None:
    """Proposal: S1 = M1 (D1, D2, D3); S2 adds D4 as a root data file next to M1 EXISTING;
    S3 adds D5, D4 becomes EXISTING. S2 and S3 write one metadata file each: the root."""
    v4, v3 = _tables(tmp_path)
    names = _Names()
    s1, n1 = _append(v4, _rows(1, 2, 3))
    s2, n2 = _append(v4, _rows(4))
    s3, n3 = _append(v4, _rows(5))
    for rows in (_rows(1, 2, 3), _rows(4), _rows(5)):
        v3.append(rows)

    root_a, root_b, root_c = _root(v4, s1), _root(v4, s2), _root(v4, s3)
    assert _shown(root_a, names) == [("M1", "ADDED")]
    assert _leaf(v4, root_a[0], names) == [("D1", "ADDED"), ("D2", "ADDED"), ("D3", "ADDED")]
    assert _shown(root_b, names) == [("M1", "EXISTING"), ("D4", "ADDED")]
    assert _shown(root_c, names) == [("M1", "EXISTING"), ("D4", "EXISTING"), ("D5", "ADDED")]
    assert [e.content_type for e in root_c] == [ContentType.DATA_MANIFEST, ContentType.DATA,
                                                ContentType.DATA]
    # M1 is untouched: same file, same stats, still S1's sequence number and snapshot
    m1_a, m1_c = root_a[0], root_c[0]
    assert m1_c.location == m1_a.location and m1_c.manifest_stats == m1_a.manifest_stats
    assert m1_c.content_stats == m1_a.content_stats
    assert m1_c.version_info.sequence_number == s1.sequence_number
    assert m1_c.version_info.snapshot_id == s1.snapshot_id
    assert root_c[1].version_info.sequence_number == s2.sequence_number
    assert root_c[2].version_info.sequence_number == s3.sequence_number
    assert (n1, n2, n3) == (2, 1, 1)  # leaf + root, then the root alone
    _same_rows(v4, v3)


def test_appends_with_new_data_manifests(tmp_path: Path) -> None:
    """Proposal: S1 = root A with M1 ADDED (D1, D2, D3); S2 = root B with M1 EXISTING and a
    new ADDED M2 (D4, D5, D6)."""
    v4, v3 = _tables(tmp_path)
    names = _Names()
    s1, n1 = _append(v4, _rows(1, 2, 3))
    s2, n2 = _append(v4, _rows(4, 5, 6))
    v3.append(_rows(1, 2, 3))
    v3.append(_rows(4, 5, 6))

    root_a, root_b = _root(v4, s1), _root(v4, s2)
    assert _shown(root_a, names) == [("M1", "ADDED")]
    assert _shown(root_b, names) == [("M1", "EXISTING"), ("M2", "ADDED")]
    assert root_b[0].location == root_a[0].location
    assert _leaf(v4, root_b[0], names) == [("D1", "ADDED"), ("D2", "ADDED"), ("D3", "ADDED")]
    assert _leaf(v4, root_b[1], names) == [("D4", "ADDED"), ("D5", "ADDED"), ("D6", "ADDED")]
    m2 = root_b[1]
    assert m2.manifest_stats is not None
    assert (m2.manifest_stats.added_files_count, m2.manifest_stats.added_rows_count) == (3, 6)
    assert m2.manifest_stats.min_sequence_number == s2.sequence_number
    assert (n1, n2) == (2, 2)  # the leaf and the root, as v3's manifest and manifest list
    _same_rows(v4, v3)
    assert v4.current_snapshot.summary == v3.current_snapshot.summary  # type: ignore[union-attr]


# --------------------------------------------------------------------------- the threshold


@pytest.mark.parametrize(("limit", "expected"), [
    ("0", [("M1", "ADDED")]),
    ("3", [("D1", "ADDED"), ("D2", "ADDED"), ("D3", "ADDED")]),
])
def test_the_root_entry_limit_is_a_table_property(tmp_path: Path, limit: str,
                                                  expected: list[tuple[str, str]]) -> None:
    v4, v3 = _tables(tmp_path, {ROOT_ENTRY_LIMIT: limit})
    snap, written = _append(v4, _rows(1, 2, 3))
    v3.append(_rows(1, 2, 3))
    assert _shown(_root(v4, snap), _Names()) == expected
    assert written == len({e[0][0] for e in expected if e[0].startswith("M")}) + 1
    _same_rows(v4, v3)


def test_the_default_limit_puts_two_files_in_the_root(tmp_path: Path) -> None:
    v4, _ = _tables(tmp_path)
    assert DEFAULT_ROOT_ENTRY_LIMIT == 2
    snap, written = _append(v4, _rows(1, 2))
    assert _shown(_root(v4, snap), _Names()) == [("D1", "ADDED"), ("D2", "ADDED")]
    assert written == 1


def test_a_bad_root_entry_limit_is_named(tmp_path: Path) -> None:
    v4, _ = _tables(tmp_path)
    with pytest.raises(ValidationError):  # refused at the door (issue 17) ...
        v4.set_properties({ROOT_ENTRY_LIMIT: "many"})
    written_by_another_engine(v4, {ROOT_ENTRY_LIMIT: "many"})  # ... or written elsewhere
    with pytest.raises(ValidationError) as e:
        v4.append(_rows(1))
    assert e.value.field == ROOT_ENTRY_LIMIT
    assert v4.current_snapshot is None
    assert _metadata_files(v4) == set()  # nothing left behind


# --------------------------------------------------------------------------- the rest


def test_row_ids_of_root_files_and_leaves(tmp_path: Path) -> None:
    """Root data files and the new leaf get consecutive row-id ranges from next-row-id."""
    v4, _ = _tables(tmp_path)
    s1, _ = _append(v4, _rows(1, 2, 3))
    s2, _ = _append(v4, _rows(4))
    root = _root(v4, s2)
    assert [e.first_row_id for e in root] == [0, 6]
    assert (s2.first_row_id, s2.added_rows, v4.metadata.next_row_id) == (6, 2, 8)
    ids = v4.scan(columns=["id", "_row_id"]).to_arrow().to_pylist()
    assert sorted(r["_row_id"] for r in ids) == list(range(8))
    assert s1.added_rows == 6


def test_a_conflicting_append_is_reapplied_on_the_new_root(tmp_path: Path) -> None:
    """Two writers: the second commit conflicts, is retried on the first's root and keeps
    both files; its leaf is written once."""
    v4, _ = _tables(tmp_path)
    other = icenb.warehouse(tmp_path).table("db.v4")
    v4.append(_rows(1))
    other.append(_rows(2, 3, 4))  # built on the empty table: conflicts, then retries
    names = _Names()
    root = _root(other, other.current_snapshot)  # type: ignore[arg-type]
    assert _shown(root, names) == [("D1", "EXISTING"), ("M1", "ADDED")]
    assert _leaf(other, root[1], names) == [("D2", "ADDED"), ("D3", "ADDED"), ("D4", "ADDED")]
    leaves = [n for n in _metadata_files(other) if not n.startswith("root-")]
    assert len(leaves) == 1
    assert sorted(r["p"] for r in other.to_arrow().to_pylist()) == [1, 1, 2, 2, 3, 3, 4, 4]


def test_a_v3_producer_refuses_a_v4_table_and_writes_nothing(tmp_path: Path) -> None:
    """The v1-v3 producers write manifest lists; on a v4 table they refuse (every operation
    routes to its v4 producer, docs/v4-layout.md#appends) and leave no file behind."""
    from icenb.table.commit.append import MergeAppend
    from icenb.table.commit.producer import commit_snapshot

    v4, _ = _tables(tmp_path)
    v4.append(_rows(1))
    before, snap = _metadata_files(v4), v4.current_snapshot
    catalog, identifier = v4._writable()
    producer = MergeAppend(catalog, identifier, v4.io)
    producer.write(_rows(2), v4.metadata)
    with pytest.raises(UnsupportedFeature) as e:
        commit_snapshot(v4, producer)
    assert (e.value.field, e.value.value) == ("format-version", 4)
    assert _metadata_files(v4) == before
    assert v4.refresh().current_snapshot == snap
    data = Path(v4.location.removeprefix("file://")) / "data"
    assert not [f for f in data.rglob("*.parquet") if "p=2" in str(f)]


def test_upgrading_past_v4_is_refused(tmp_path: Path) -> None:
    _, v3 = _tables(tmp_path)
    with pytest.raises(UnsupportedVersion):
        v3.upgrade(5)
    assert v3.format_version == 3
