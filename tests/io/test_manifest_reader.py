"""Manifest lists and manifests read into Arrow, checked against tables written by Iceberg Java."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from icenb.errors import CorruptFile, NoSuchSnapshot
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    live_data_files,
    read_manifest_entries,
    read_manifest_list,
    read_manifest_list_table,
)
from icenb.io.metadata_files import load_table_metadata
from icenb.progress import Progress
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from tests.reference_fixtures import JavaTables


def _tables(java_tables: JavaTables) -> list[tuple[str, TableMetadata]]:
    io = FileIO()
    return [(e["name"], load_table_metadata(str(java_tables.location(e["name"])), io))
            for e in java_tables.entries("table")]


def _sum(table: pa.Table, field: str) -> int:
    if table.num_rows == 0:
        return 0
    total = pc.sum(pc.struct_field(table.column("data_file"), field)).as_py()
    return int(total or 0)


def _delete_files_size(deletes: pa.Table) -> int:
    """Delete files' size as Java's summary counts it: a deletion vector counts its blob's
    ``content_size_in_bytes``, not the size of the Puffin file holding it."""
    if deletes.num_rows == 0:
        return 0
    df = deletes.column("data_file")
    sizes = pc.struct_field(df, "file_size_in_bytes")
    if "content_size_in_bytes" in [f.name for f in df.type]:
        sizes = pc.coalesce(pc.struct_field(df, "content_size_in_bytes"), sizes)
    return int(pc.sum(sizes).as_py() or 0)


def test_live_files_match_java_summaries_for_every_snapshot(java_tables: JavaTables) -> None:
    checked: dict[str, int] = {}
    versions = set()
    cache = ManifestCache()
    for name, md in _tables(java_tables):
        io = FileIO()
        versions.add(md.format_version)
        for snap in md.snapshots:
            summary = snap.summary
            assert summary is not None
            live = live_data_files(io, md, snap.snapshot_id, cache=cache)
            where = f"{name} snapshot {snap.snapshot_id}"
            assert set(pc.unique(pc.struct_field(live.data_files.column("data_file"),
                                                 "content")).to_pylist()) <= {0}, where
            if "total-data-files" in summary:
                assert live.data_files.num_rows == int(summary["total-data-files"]), where
                checked["total-data-files"] = checked.get("total-data-files", 0) + 1
            if "total-records" in summary:
                assert _sum(live.data_files, "record_count") == int(summary["total-records"]), \
                    where
                checked["total-records"] = checked.get("total-records", 0) + 1
            if "total-delete-files" in summary:
                assert live.delete_files.num_rows == int(summary["total-delete-files"]), where
                checked["total-delete-files"] = checked.get("total-delete-files", 0) + 1
            if "total-files-size" in summary:
                # Java's total-files-size counts data and delete files.
                size = _sum(live.data_files, "file_size_in_bytes") + \
                    _delete_files_size(live.delete_files)
                assert size == int(summary["total-files-size"]), where
                checked["total-files-size"] = checked.get("total-files-size", 0) + 1
    assert versions == {1, 2, 3}
    assert min(checked.values()) > 50, checked


def test_delete_files_are_found(java_tables: JavaTables) -> None:
    io = FileIO()
    for name, contents in (("db.v2_merge_on_read", {1}), ("db.java_v2_equality_deletes", {2}),
                           ("db.v3_deletion_vectors", {1})):
        md = load_table_metadata(str(java_tables.location(name)), io)
        snap = md.current_snapshot()
        assert snap is not None
        live = live_data_files(io, md, snap.snapshot_id)
        assert live.delete_files.num_rows > 0
        found = pc.unique(pc.struct_field(live.delete_files.column("data_file"), "content"))
        assert set(found.to_pylist()) == contents
        assert set(live.delete_files.column("manifest_content").to_pylist()) == {1}


def _current(java_tables: JavaTables, name: str) -> tuple[TableMetadata, Snapshot]:
    md = load_table_metadata(str(java_tables.location(name)))
    snap = md.current_snapshot()
    assert snap is not None
    return md, snap


def test_cold_read_opens_list_and_each_manifest_warm_read_only_the_list(
        java_tables: JavaTables) -> None:
    md, snap = _current(java_tables, "db.v2_partition_evolution")
    io = FileIO()
    cache = ManifestCache()
    manifests = read_manifest_list(io, snap, md.format_version)
    assert len(manifests) > 1
    cold = read_manifest_entries(io, manifests, md.format_version, cache=cache)
    assert io.stats.opened == len(manifests) + 1
    assert len(cache) == len(manifests)

    io.stats.reset()
    warm = live_data_files(io, md, snap.snapshot_id, cache=cache)
    assert io.stats.opened == 1  # the manifest list only
    assert cache.hits == len(manifests)
    expected = cold.filter(pc.not_equal(cold.column("status"), 2))
    assert warm.data_files.num_rows + warm.delete_files.num_rows == expected.num_rows


def test_entries_carry_manifest_columns_and_inherited_values(java_tables: JavaTables) -> None:
    md, snap = _current(java_tables, "db.v2_merge_on_read")
    io = FileIO()
    manifests = read_manifest_list(io, snap, md.format_version)
    entries = read_manifest_entries(io, manifests, md.format_version)
    by_path = {m.manifest_path: m for m in manifests}
    assert set(entries.column("manifest_path").to_pylist()) == set(by_path)
    for row in entries.select(["status", "snapshot_id", "sequence_number", "manifest_path",
                               "partition_spec_id", "manifest_content"]).to_pylist():
        m = by_path[row["manifest_path"]]
        assert row["snapshot_id"] is not None
        assert row["sequence_number"] is not None
        assert row["manifest_content"] == int(m.content)
        assert row["partition_spec_id"] == m.partition_spec_id
        if row["status"] == 1:  # ADDED entries inherit the manifest's sequence number
            assert row["sequence_number"] == m.sequence_number
            assert row["snapshot_id"] == m.added_snapshot_id


def _field_ids(t: pa.DataType) -> list[int]:
    assert isinstance(t, pa.StructType)
    return [int((f.metadata or {})[FIELD_ID_KEY]) for f in t]


def test_partition_struct_is_the_union_of_all_specs_by_field_id(
        java_tables: JavaTables) -> None:
    for name in ("db.v1_partition_evolution", "db.v2_partition_evolution",
                 "db.v3_partition_evolution"):
        md, snap = _current(java_tables, name)
        io = FileIO()
        entries = read_manifest_entries(io, read_manifest_list(io, snap, md.format_version),
                                        md.format_version)
        spec_ids = set(entries.column("partition_spec_id").to_pylist())
        assert len(spec_ids) > 1, name
        ptype = entries.schema.field("data_file").type.field("partition").type
        ids = _field_ids(ptype)
        specs = md.specs_by_id
        expected = sorted({f.field_id for s in spec_ids for f in specs[s].fields})
        assert ids == expected, name
        # A field of no entry's spec is null for that entry.
        partition = pc.struct_field(entries.column("data_file"), "partition")
        for i, fid in enumerate(ids):
            values = pc.struct_field(partition, [i])
            for sid in spec_ids:
                if fid not in {f.field_id for f in specs[sid].fields}:
                    mask = pc.equal(entries.column("partition_spec_id"), sid)
                    assert pc.all(pc.is_null(pc.filter(values, mask))).as_py(), (name, fid, sid)


def test_projection_keeps_selected_and_inheritance_columns(java_tables: JavaTables) -> None:
    md, snap = _current(java_tables, "db.v3_deletion_vectors")
    io = FileIO()
    cache = ManifestCache()
    manifests = read_manifest_list(io, snap, md.format_version)
    full = read_manifest_entries(io, manifests, md.format_version, cache=cache)
    slim = read_manifest_entries(io, manifests, md.format_version,
                                 columns=["data_file.file_path"], cache=cache)
    names = [f.name for f in slim.schema.field("data_file").type]
    assert "file_path" in names and "lower_bounds" not in names and "partition" not in names
    assert slim.column("sequence_number").to_pylist() == full.column(
        "sequence_number").to_pylist()
    assert pc.struct_field(slim.column("data_file"), "first_row_id").to_pylist() == \
        pc.struct_field(full.column("data_file"), "first_row_id").to_pylist()
    assert pc.struct_field(slim.column("data_file"), "file_path").to_pylist() == \
        pc.struct_field(full.column("data_file"), "file_path").to_pylist()
    assert len(cache) == 2 * len(manifests)  # projections are cached separately


def test_v1_snapshot_with_manifests_instead_of_a_list(java_tables: JavaTables) -> None:
    _md, snap = _current(java_tables, "db.v1_partition_evolution")
    io = FileIO()
    listed = read_manifest_list(io, snap, 1)
    v1 = dataclasses.replace(snap, manifest_list=None,
                             manifests=tuple(m.manifest_path for m in listed))
    from_paths = read_manifest_list(io, v1, 1)
    assert [m.manifest_path for m in from_paths] == [m.manifest_path for m in listed]
    assert [m.manifest_length for m in from_paths] == [m.manifest_length for m in listed]
    assert all(m.partition_spec_id == 0 and m.sequence_number == 0 for m in from_paths)
    assert all(m.added_snapshot_id == snap.snapshot_id for m in from_paths)
    a = read_manifest_entries(io, listed, 1)
    b = read_manifest_entries(io, from_paths, 1)
    # the manifest header's partition-spec-id decides, as in Java's ManifestReader
    assert b.column("partition_spec_id").to_pylist() == a.column("partition_spec_id").to_pylist()
    assert b.column("data_file").to_pylist() == a.column("data_file").to_pylist()
    table = read_manifest_list_table(io, v1, 1)
    assert table.column("manifest_path").to_pylist() == [m.manifest_path for m in listed]


def test_manifest_list_table_has_v1_defaults(java_tables: JavaTables) -> None:
    _md, snap = _current(java_tables, "db.v1_all_types")
    table = read_manifest_list_table(FileIO(), snap, 1)
    assert table.num_rows >= 1
    assert table.column("content").to_pylist() == [0] * table.num_rows
    assert table.column("sequence_number").to_pylist() == [0] * table.num_rows


def test_errors_name_what_is_wrong(java_tables: JavaTables) -> None:
    md, snap = _current(java_tables, "db.v2_refs")
    io = FileIO()
    with pytest.raises(NoSuchSnapshot):
        live_data_files(io, md, 12345)
    manifests = read_manifest_list(io, snap, 2)
    wrong = dataclasses.replace(manifests[0], manifest_length=manifests[0].manifest_length + 1)
    with pytest.raises(CorruptFile) as err:
        read_manifest_entries(io, [wrong], 2)
    assert wrong.manifest_path in str(err.value)


def test_empty_input_gives_an_empty_table() -> None:
    out = read_manifest_entries(FileIO(), [], 2)
    assert out.num_rows == 0
    assert {"status", "data_file", "manifest_path", "partition_spec_id"} <= set(out.column_names)


def _decoded(rows: int) -> Any:
    from icenb.io.manifest_reader import DecodedManifest
    return DecodedManifest(pa.table({"x": list(range(rows))}), 0, 2)


def test_cache_is_lru_and_bounded() -> None:
    cache = ManifestCache(max_entries=2)
    a, b, c = ("a", 1, None), ("b", 1, None), ("c", 1, None)
    cache.put(a, _decoded(1))
    cache.put(b, _decoded(1))
    assert cache.get(a) is not None  # a is now most recently used
    cache.put(c, _decoded(1))
    assert cache.get(b) is None and cache.get(a) is not None and cache.get(c) is not None
    small = ManifestCache(max_bytes=8 * 3)
    small.put(a, _decoded(2))
    small.put(b, _decoded(2))
    assert len(small) == 1 and small.get(b) is not None and small.nbytes <= 24
    small.clear()
    assert len(small) == 0 and small.nbytes == 0


def test_cached_manifest_list_is_read_once(java_tables: JavaTables) -> None:
    md, snap = _current(java_tables, "db.v2_partition_evolution")
    io = FileIO()
    cache = ManifestCache()
    cold = read_manifest_list_table(io, snap, md.format_version, cache=cache)
    assert io.stats.opened == 1
    warm = read_manifest_list_table(io, snap, md.format_version, cache=cache)
    assert io.stats.opened == 1
    assert warm.equals(cold)
    assert warm.equals(read_manifest_list_table(FileIO(), snap, md.format_version))


def test_cache_never_serves_entries_inherited_from_another_list_entry(
        java_tables: JavaTables) -> None:
    md, snap = _current(java_tables, "db.v2_merge_on_read")
    io = FileIO()
    cache = ManifestCache()
    manifests = read_manifest_list(io, snap, md.format_version)
    m = next(m for m in manifests if m.added_files_count)
    first = read_manifest_entries(io, [m], md.format_version, cache=cache)
    moved = dataclasses.replace(m, sequence_number=m.sequence_number + 100)
    second = read_manifest_entries(io, [moved], md.format_version, cache=cache)
    assert io.stats.opened == 3  # the list, then the manifest once per list entry
    added = pc.equal(first.column("status"), 1)
    assert set(pc.filter(first.column("sequence_number"), added).to_pylist()) == \
        {m.sequence_number}
    assert set(pc.filter(second.column("sequence_number"), added).to_pylist()) == \
        {m.sequence_number + 100}
    again = read_manifest_entries(io, [m], md.format_version, cache=cache)
    assert io.stats.opened == 3 and again.equals(first)


def test_manifests_decoded_in_batches_read_the_same_and_report_progress(
        java_tables: JavaTables, monkeypatch: pytest.MonkeyPatch) -> None:
    import icenb.io.manifest_reader as reader

    md, snap = _current(java_tables, "db.v2_partition_evolution")
    io = FileIO()
    manifests = read_manifest_list(io, snap, md.format_version)
    assert len(manifests) > 1
    whole = read_manifest_entries(io, [*manifests, manifests[0]], md.format_version)
    advanced: list[int] = []

    class Counting(Progress):
        def advance(self, n: int = 1) -> None:
            assert (self.description, self.total) == ("Reading manifests", len(manifests))
            advanced.append(n)
            super().advance(n)

    monkeypatch.setattr(reader, "DECODE_BATCH_BYTES", 1)  # a batch per manifest
    monkeypatch.setattr(reader, "progress", Counting)
    batched = read_manifest_entries(io, [*manifests, manifests[0]], md.format_version)
    assert batched.equals(whole)
    assert advanced == [1] * len(manifests)  # the manifest listed twice is read once
