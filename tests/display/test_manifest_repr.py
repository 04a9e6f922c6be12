"""Reprs of manifest list entries, manifest entries, content files of every kind, partition
field summaries, deletion vectors and decoded manifests (icenb.display.manifest_repr)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.io.manifest_reader import (
    DecodedManifest,
    ManifestCache,
    read_manifest_entries,
    read_manifest_list,
)
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icenb.table.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string())])


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    with reset_options():
        yield


def _file(**kw: object) -> DataFile:
    base: dict[str, object] = dict(file_path="s3://b/t/data/part-0.parquet",
                                   file_format=FileFormat.PARQUET, record_count=10,
                                   file_size_in_bytes=2048)
    base.update(kw)
    return DataFile(**base)  # type: ignore[arg-type]


@pytest.fixture
def v3(tmp_path: Path) -> Table:
    t = icenb.warehouse(tmp_path).create_table("db.t", SCHEMA, partition_by="p",
                                               format_version=3)
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": ["a", "a", "b"]},
                      schema=SCHEMA))
    t.delete("id = 2", mode="merge-on-read")
    return t.refresh()


def test_manifest_file_from_a_real_list(v3: Table) -> None:
    snap = v3.current_snapshot
    assert snap is not None
    manifests = read_manifest_list(v3.io, snap, 3)
    data = next(m for m in manifests if m.content == ManifestContent.DATA)
    r = render(data)
    assert "Manifest file" in r.html and "could not be displayed" not in r.html
    assert "added by snapshot" in r.html
    assert "files added / existing / deleted: 2 / 0 / 0" in r.text
    assert "rows added / existing / deleted:  3 / 0 / 0" in r.text
    assert "added snapshot:" in r.text and str(data.added_snapshot_id) in r.text
    # one partition field summary: no nulls, bounds "a" and "b" as hex
    assert "Partition summaries" in r.html
    assert "61" in r.text and "62" in r.text  # b"a", b"b"
    deletes = next(m for m in manifests if m.content == ManifestContent.DELETES)
    assert "content:" in render(deletes).text and "deletes" in render(deletes).text
    assert 'icenb-b-muted">deletes' in render(deletes).html


def test_manifest_entries_of_every_kind(v3: Table) -> None:
    snap = v3.current_snapshot
    assert snap is not None
    tree = v3.metadata_tree()
    (dv_entry,) = [e for _, e in tree.entries() if e.kind == "deletion_vector"]
    entry = ManifestEntry(dv_entry.status, dv_entry.snapshot_id, dv_entry.sequence_number,
                          dv_entry.file_sequence_number, dv_entry.file)
    r = render(entry)
    assert 'icenb-b-added">ADDED' in r.html
    assert "Deletion vector" in r.html
    f = dv_entry.file
    assert f.referenced_data_file is not None and f.content_offset is not None
    assert "referenced data file:" in r.text
    assert f"offset {f.content_offset}" in r.text
    assert r.text.startswith("Manifest entry ADDED ")


def test_data_file_stats_folded_and_hex_bounds() -> None:
    n = 30
    f = _file(column_sizes={i: 100 + i for i in range(1, n + 1)},
              value_counts={i: 10 for i in range(1, n + 1)},
              null_value_counts={1: 0, 2: 3}, nan_value_counts={3: 1},
              lower_bounds={1: b"\x01\x00\x00\x00\x00\x00\x00\x00"},
              upper_bounds={1: b"\xff" * 40}, split_offsets=tuple(range(4, 200, 4)))
    with icenb.set_options(display_max_rows=6):
        r = render(f)
    assert "Data file" in r.html and "Column stats" in r.html
    assert "… 24 more columns …" in r.html and "… 24 more columns …" in r.text
    assert "0100000000000000" in r.text
    assert "ff" * 16 + "…" in r.text  # cut after 16 bytes
    assert "more offsets" in r.text
    assert r.text.splitlines()[0] == "Data file part-0.parquet"


def test_delete_files_and_equality_ids() -> None:
    eq = _file(content=FileContent.EQUALITY_DELETES, equality_ids=(1, 2),
               file_path="/x/eq-deletes.parquet")
    r = render(eq)
    assert "Equality delete file" in r.html
    assert "equality ids:" in r.text and "1, 2" in r.text
    pos = _file(content=FileContent.POSITION_DELETES, referenced_data_file="/x/data.parquet")
    assert "Position delete file" in render(pos).html
    assert "/x/data.parquet" in render(pos).text
    dv = _file(content=FileContent.POSITION_DELETES, file_format=FileFormat.PUFFIN,
               referenced_data_file="/x/data.parquet", content_offset=4,
               content_size_in_bytes=42)
    rd = render(dv)
    assert rd.text.startswith("Deletion vector ")
    assert "offset 4, 42 B" in rd.text


def test_escaping_in_paths_and_partitions() -> None:
    f = _file(file_path='/t/<b>&"x".parquet', partition=('<i>',))
    html = mimebundle(f)["text/html"]
    assert "&lt;b&gt;&amp;&quot;x&quot;.parquet" in html
    assert "&lt;i&gt;" in html
    assert '<b>&"x"' not in html and "<i>" not in html


def test_field_summary_and_deleted_status() -> None:
    s = FieldSummary(True, None, b"a", None)
    r = render(s)
    assert "contains null:" in r.text and "True" in r.text and "61" in r.text
    e = ManifestEntry(EntryStatus.DELETED, 5, 1, 1, _file())
    assert 'icenb-b-deleted">DELETED' in render(e).html
    m = ManifestFile(manifest_path="/m.avro", manifest_length=10, partition_spec_id=0,
                     added_snapshot_id=1)  # v1-style: counts unknown
    assert "files added / existing / deleted: - / - / -" in render(m).text


def test_deletion_vector() -> None:
    dv = DeletionVector.from_positions([1, 5, *range(100, 200), 1 << 33])
    with icenb.set_options(display_max_rows=4):
        r = render(dv)
    assert "103 deleted positions" in r.html
    assert "1, 5, 100, 101, … 99 more positions …" in r.text
    assert "last position:" in r.text and str(1 << 33) in r.text
    assert "bitmaps (high 32 bits): 2" in r.text
    empty = render(DeletionVector.from_positions([]))
    assert "0 deleted positions" in empty.html and "could not be displayed" not in empty.html


def test_decoded_manifest_from_the_cache(v3: Table) -> None:
    snap = v3.current_snapshot
    assert snap is not None
    cache = ManifestCache()
    manifests = read_manifest_list(v3.io, snap, 3)
    read_manifest_entries(v3.io, manifests, 3, cache=cache)
    decoded = [item for item in cache._items.values() if isinstance(item, DecodedManifest)]
    assert decoded
    r = render(decoded[0])
    assert "Decoded manifest" in r.html and "could not be displayed" not in r.html
    assert "format version:" in r.text and "partition spec:" in r.text
