"""Fast and cached reads of v4 manifests: record-by-record and columnar decoding agree, decoded
manifests are reused only for the very same bytes, and removals read only the leaves whose
partition summaries may hold a removed file (still finding files whose partition is wrong)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.io import root_manifest as content_manifest
from icenb.io.root_manifest import (
    clear_decoded_manifests,
    decode_content_manifest,
    read_root_manifest,
)
from icenb.spec.content_entry import ContentType
from icenb.spec.manifest import DataFile, FileFormat
from icenb.table.commit.producer import commit_snapshot
from icenb.table.commit.v4_append import V4Append
from icenb.table.commit.v4_overwrite import V4Overwrite
from icenb.table.table import Table


def _files(root: Path, p: int, count: int) -> list[DataFile]:
    return [DataFile(
        file_path=f"{root}/data/p={p}/f-{i}.parquet", file_format=FileFormat.PARQUET,
        partition=(p,), record_count=10, file_size_in_bytes=100 + i,
        value_counts={1: 10, 2: 10}, null_value_counts={1: 0, 2: 0},
        lower_bounds={1: struct.pack("<q", 10 * i), 2: struct.pack("<i", p)},
        upper_bounds={1: struct.pack("<q", 10 * i + 9), 2: struct.pack("<i", p)})
        for i in range(count)]


def _table(tmp_path: Path, partitions: int = 3) -> Table:
    """A v4 table with one leaf per partition p = 0..partitions-1 (5 files each)."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, p int", partition_by=["p"],
                                               format_version=4)
    for p in range(partitions):
        catalog, identifier = t._writable()
        producer = V4Append(catalog, identifier, t.io)
        producer.add_files(_files(tmp_path, p, 5))
        commit_snapshot(t, producer)
    return t


def _root_bytes(t: Table) -> tuple[str, bytes]:
    snap = t.current_snapshot
    assert snap is not None and snap.root_manifest is not None
    return snap.root_manifest, t.io.new_input(snap.root_manifest).read()


def test_rowwise_and_columnar_decoding_agree(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path)
    location, data = _root_bytes(t)
    clear_decoded_manifests()
    rowwise = decode_content_manifest(location, data)
    clear_decoded_manifests()
    monkeypatch.setattr(content_manifest, "ROWWISE_MAX_RECORDS", 0)
    columnar = decode_content_manifest(location, data)
    assert rowwise == columnar
    assert [e.content_type for e in rowwise.entries].count(ContentType.DATA_MANIFEST) == 3


def test_decoded_manifests_are_reused_only_for_the_same_bytes(tmp_path: Path) -> None:
    t = _table(tmp_path)
    location, data = _root_bytes(t)
    first = decode_content_manifest(location, data)
    assert decode_content_manifest(location, bytes(bytearray(data))) is first
    other = _table(tmp_path / "other", partitions=1)
    _, other_data = _root_bytes(other)
    # the same location with other bytes (a rewritten file) is decoded afresh
    assert len(decode_content_manifest(location, other_data).entries) == 1
    assert len(decode_content_manifest(location, data).entries) == 3


def _leaf_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import icenb.table.commit.v4_overwrite as v4_overwrite

    seen: list[str] = []
    real = v4_overwrite.read_leaves

    def counting(io, root, **kw):  # type: ignore[no-untyped-def]
        leaves = real(io, root, **kw)
        seen.extend(leaf.root_entry.location for leaf in leaves)
        return leaves

    monkeypatch.setattr(v4_overwrite, "read_leaves", counting)
    return seen


def test_a_removal_reads_only_the_leaves_that_may_hold_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path)
    seen = _leaf_reads(monkeypatch)
    catalog, identifier = t._writable()
    victim = _files(tmp_path, 1, 5)[2]
    producer = V4Overwrite(catalog, identifier, t.io)
    producer.delete_file(victim)
    commit_snapshot(t, producer)
    assert len(set(seen)) == 1
    snap = t.current_snapshot
    assert snap is not None and snap.root_manifest is not None
    root = read_root_manifest(t.io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    dvs = [e for e in root.entries if e.content_type == ContentType.MANIFEST_DV]
    assert [d.referenced_file for d in dvs] == sorted(set(seen))
    assert t.scan().plan().files.num_rows == 14


def test_a_file_outside_its_claimed_partition_is_still_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path)
    seen = _leaf_reads(monkeypatch)
    catalog, identifier = t._writable()
    f = _files(tmp_path, 1, 5)[0]
    wrong = DataFile(file_path=f.file_path, file_format=f.file_format, partition=(7,),
                     record_count=f.record_count, file_size_in_bytes=f.file_size_in_bytes)
    producer = V4Overwrite(catalog, identifier, t.io)
    producer.delete_file(wrong)
    commit_snapshot(t, producer)
    assert [r.file_path for r in producer.removed_files] == [f.file_path]
    assert len(set(seen)) == 3  # no leaf could hold p=7: every leaf was read
    assert t.scan().plan().files.num_rows == 14


def test_a_file_in_no_leaf_is_reported_missing(tmp_path: Path) -> None:
    t = _table(tmp_path)
    catalog, identifier = t._writable()
    ghost = _files(tmp_path / "elsewhere", 1, 1)[0]
    with pytest.raises(ValidationError) as e:
        V4Overwrite(catalog, identifier, t.io).delete_file(ghost).commit(t._loaded())
    assert e.value.file == ghost.file_path
