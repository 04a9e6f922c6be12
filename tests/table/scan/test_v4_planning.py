"""Planning and reading EXPERIMENTAL format-version 4 snapshots (single-file-commits proposal,
docs/v4-layout.md): v4 layouts built by hand from the files of a v3 table written with icenb's
API (appends, a deletion vector, an equality delete) plan the same files and deletes and read
the same rows as the v3 twin; manifest DVs drop leaf rows; aggregated stats prune leaves."""

from __future__ import annotations

import copy
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import CorruptFile, InvalidMetadata, UnsupportedVersion
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import ManifestCache
from icenb.io.root_manifest import (
    encode_content_manifest,
    inline_manifest_dv,
    write_leaf_manifest,
    write_puffin_manifest_dv,
    write_root_manifest,
)
from icenb.spec.content_entry import (
    ContentEntry,
    ContentStats,
    ContentType,
    DeletionVectorRef,
    EntryStatus,
    ManifestKind,
    VersionInfo,
)
from icenb.spec.manifest import DataFile, FileContent, FileFormat
from icenb.spec.table_metadata import (
    TableMetadata,
    table_metadata_from_json,
    table_metadata_to_json,
)
from icenb.table import ScanPlan, plan_files
from icenb.table.scan.read import read_plan
from icenb.table.scan.v4_planning import manifest_entry_of

ROWS = [{"id": i, "kind": "a" if i < 10 else "b", "v": float(i)} for i in range(20)]


# --------------------------------------------------------------------------- the v3 twin


@pytest.fixture(scope="module")
def v3(tmp_path_factory: pytest.TempPathFactory) -> icenb.table.Table:
    """A v3 table partitioned by kind: 3 appends, DVs (merge-on-read delete), an equality
    delete and an append re-adding a deleted key, each its own snapshot."""
    wh = icenb.warehouse(tmp_path_factory.mktemp("v4plan"))
    t = wh.create_table("db.t", "id long, kind string, v double", partition_by=["kind"],
                        format_version=3,
                        properties={"write.delete.mode": "merge-on-read"})
    t.append(ROWS[:6] + ROWS[10:14])
    t.append(ROWS[6:10])
    t.append(ROWS[14:])
    t.delete("id = 3 or id = 15")
    t.delete_by_key([{"id": 7, "kind": "a"}, {"id": 18, "kind": "b"}], on=["id", "kind"])
    t.append([{"id": 7, "kind": "a", "v": 70.0}])  # newer than the equality delete: kept
    return t


def _files(plan: ScanPlan) -> list[tuple[str, tuple[str, ...]]]:
    """(data file, its delete files) of every task, sorted."""
    return sorted((t.data_file.file_path, tuple(sorted(d.file_path for d in t.delete_files)))
                  for t in plan.tasks)


def _rows(io: FileIO, plan: ScanPlan) -> list[dict[str, Any]]:
    return sorted(read_plan(io, plan).to_pylist(), key=lambda r: r["id"])


def _v3_files(t: icenb.table.Table) -> tuple[list[DataFile], list[DataFile]]:
    """The live data files and delete files of the v3 table's current snapshot, with their
    data sequence numbers."""
    plan = plan_files(t.io, t.metadata)
    data = [task.data_file for task in plan.tasks]
    seen: dict[str, DataFile] = {}
    for task in plan.tasks:
        for d in task.delete_files:
            seen[f"{d.file_path}@{d.content_offset}"] = d
    return data, list(seen.values())


# --------------------------------------------------------------------------- building v4 by hand


def entry_of(f: DataFile, t: icenb.table.Table, *, status: EntryStatus = EntryStatus.EXISTING,
             snapshot_id: int = 1) -> ContentEntry:
    """A v3 content file as the v4 content entry a writer would produce (the inverse of
    :func:`manifest_entry_of`), EXISTING with its sequence numbers."""
    ptype = t.metadata.specs_by_id[f.spec_id].partition_type(t.metadata.schema)
    stats = ContentStats.for_partition(
        ptype, f.partition, value_counts=f.value_counts, null_value_counts=f.null_value_counts,
        nan_value_counts=f.nan_value_counts, lower_bounds=f.lower_bounds,
        upper_bounds=f.upper_bounds)
    seq = f.data_sequence_number
    vi = VersionInfo(status, snapshot_id if status != EntryStatus.ADDED else None,
                     seq if status != EntryStatus.ADDED else None,
                     seq if status != EntryStatus.ADDED else None)
    common: dict[str, Any] = dict(location=f.file_path, file_format=f.file_format,
                                  partition_spec_id=f.spec_id, record_count=f.record_count,
                                  file_size_in_bytes=f.file_size_in_bytes, version_info=vi,
                                  content_stats=stats)
    if f.content == FileContent.DATA:
        return ContentEntry(content_type=ContentType.DATA, first_row_id=f.first_row_id,
                            **common)
    if f.content == FileContent.EQUALITY_DELETES:
        return ContentEntry(content_type=ContentType.EQUALITY_DELETE,
                            equality_ids=f.equality_ids, **common)
    assert f.file_format == FileFormat.PUFFIN
    return ContentEntry(content_type=ContentType.POSITION_DELETE,
                        referenced_file=f.referenced_data_file,
                        deletion_vector=DeletionVectorRef(f.content_offset,
                                                          f.content_size_in_bytes), **common)


def v4_metadata(t: icenb.table.Table, root: str) -> TableMetadata:
    """The v3 table's metadata as format version 4 whose current snapshot points at ``root``
    (earlier snapshots keep their manifest lists, as after an upgrade)."""
    doc = copy.deepcopy(table_metadata_to_json(t.metadata))
    doc["format-version"] = 4
    for s in doc["snapshots"]:
        if s["snapshot-id"] == doc["current-snapshot-id"]:
            del s["manifest-list"]
            s["root-manifest"] = root
    return table_metadata_from_json(doc, file=f"{t.metadata.location}/metadata/v4.json")


def _root(t: icenb.table.Table, name: str, entries: list[ContentEntry]) -> str:
    location = f"{t.metadata.location}/metadata/{name}-root.avro"
    seq = t.metadata.current_snapshot().sequence_number  # type: ignore[union-attr]
    write_root_manifest(t.io, location, entries, sequence_number=seq)
    return location


def _leaf(t: icenb.table.Table, name: str, kind: ManifestKind, entries: list[ContentEntry]
          ) -> ContentEntry:
    spec = t.metadata.spec
    return write_leaf_manifest(
        t.io, f"{t.metadata.location}/metadata/{name}.avro", kind, entries,
        partition_spec_id=spec.spec_id, schema=t.metadata.schema,
        partition_type=spec.partition_type(t.metadata.schema))


def _same_as_v3(t: icenb.table.Table, md4: TableMetadata, row_filter: str = "true"
                ) -> ScanPlan:
    ours = plan_files(t.io, md4, row_filter=row_filter)
    theirs = plan_files(t.io, t.metadata, row_filter=row_filter)
    assert _files(ours) == _files(theirs)
    assert _rows(t.io, ours) == _rows(t.io, theirs)
    return ours


# --------------------------------------------------------------------------- tests


def test_the_v3_twin_has_dvs_and_equality_deletes(v3: icenb.table.Table) -> None:
    data, deletes = _v3_files(v3)
    assert len(data) == 5
    assert sorted(int(d.content) for d in deletes) == [1, 1, 2, 2]
    rows = _rows(v3.io, plan_files(v3.io, v3.metadata))
    assert [(r["id"], r["v"]) for r in rows] == [
        (i, 70.0 if i == 7 else float(i)) for i in range(20) if i not in (3, 15, 18)]


def test_root_only(v3: icenb.table.Table) -> None:
    data, deletes = _v3_files(v3)
    root = _root(v3, "root-only", [entry_of(f, v3) for f in data + deletes])
    plan = _same_as_v3(v3, v4_metadata(v3, root))
    assert (plan.manifests_total, plan.manifests_read) == (0, 0)
    assert plan.delete_files_selected == 4
    # the tasks are v3's: same files, sequence numbers, partitions and deletes
    theirs = {t.data_file.file_path: t for t in plan_files(v3.io, v3.metadata).tasks}
    for task in plan.tasks:
        twin = theirs[task.data_file.file_path]
        assert task.data_file.partition == twin.data_file.partition
        assert task.data_file.data_sequence_number == twin.data_file.data_sequence_number
        assert task.data_file.first_row_id == twin.data_file.first_row_id
        assert sorted(d.data_sequence_number or 0 for d in task.delete_files) == sorted(
            d.data_sequence_number or 0 for d in twin.delete_files)


def test_root_and_leaves(v3: icenb.table.Table) -> None:
    data, deletes = _v3_files(v3)
    dv = [d for d in deletes if d.content == FileContent.POSITION_DELETES]
    eq = [d for d in deletes if d.content == FileContent.EQUALITY_DELETES]
    data_leaf = _leaf(v3, "leaf-data", ManifestKind.DATA, [entry_of(f, v3) for f in data[:4]])
    delete_leaf = _leaf(v3, "leaf-deletes", ManifestKind.DELETE,
                        [entry_of(f, v3) for f in dv])
    root = _root(v3, "leaves", [data_leaf, delete_leaf]
                 + [entry_of(f, v3) for f in data[4:] + eq])
    md4 = v4_metadata(v3, root)
    plan = _same_as_v3(v3, md4)
    assert (plan.manifests_total, plan.manifests_read) == (2, 2)
    cache = ManifestCache()
    plan_files(v3.io, md4, cache=cache)
    again = plan_files(v3.io, md4, cache=cache)
    assert cache.hits == 2 and _files(again) == _files(plan)


@pytest.mark.parametrize("puffin", [False, True])
def test_a_manifest_dv_removes_leaf_rows(v3: icenb.table.Table, puffin: bool) -> None:
    data, deletes = _v3_files(v3)
    # the leaf also lists two files (ordinals 1 and 3: a duplicate and a file whose rows were
    # removed) that the manifest DV deletes: read without it, rows would differ
    gone = DataFile(file_path=data[0].file_path, file_format=FileFormat.PARQUET,
                    partition=data[0].partition, record_count=data[0].record_count,
                    file_size_in_bytes=data[0].file_size_in_bytes, spec_id=data[0].spec_id,
                    data_sequence_number=data[0].data_sequence_number)
    entries = [entry_of(f, v3) for f in data]
    entries[1:1] = [entry_of(gone, v3)]
    entries[3:3] = [entry_of(gone, v3)]
    leaf = _leaf(v3, f"leaf-dv-{puffin}", ManifestKind.DATA, entries)
    if puffin:
        mdv = write_puffin_manifest_dv(v3.io, f"{v3.metadata.location}/metadata/mdv.puffin",
                                       leaf, [1, 3])
    else:
        mdv = inline_manifest_dv(leaf, [1, 3])
    root = _root(v3, f"mdv-{puffin}", [leaf, mdv] + [entry_of(f, v3) for f in deletes])
    plan = _same_as_v3(v3, v4_metadata(v3, root))
    assert plan.files_selected == len(data)


def test_without_its_manifest_dv_the_leaf_reads_duplicates(v3: icenb.table.Table) -> None:
    data, _ = _v3_files(v3)
    leaf = _leaf(v3, "leaf-dup", ManifestKind.DATA, [entry_of(f, v3) for f in data + data[:1]])
    md4 = v4_metadata(v3, _root(v3, "dup", [leaf]))
    assert plan_files(v3.io, md4).files_selected == len(data) + 1
    md4 = v4_metadata(v3, _root(v3, "dedup", [leaf, inline_manifest_dv(leaf, [len(data)])]))
    assert plan_files(v3.io, md4).files_selected == len(data)


def test_filters_prune_leaves_by_aggregated_stats(v3: icenb.table.Table) -> None:
    data, deletes = _v3_files(v3)
    leaves = [
        _leaf(v3, f"leaf-{kind}", ManifestKind.DATA,
              [entry_of(f, v3) for f in data if f.partition == (kind,)])
        for kind in ("a", "b")]
    md4 = v4_metadata(v3, _root(v3, "by-kind", leaves + [entry_of(f, v3) for f in deletes]))
    plan = _same_as_v3(v3, md4, "kind = 'b'")
    assert (plan.manifests_total, plan.manifests_read) == (2, 1)
    # partition "a" holds ids 0-9: its leaf's aggregated id bounds exclude id > 12
    plan = _same_as_v3(v3, md4, "id > 12")
    assert plan.manifests_read == 1
    plan = _same_as_v3(v3, md4, "v < 100")
    assert plan.manifests_read == 2
    assert _same_as_v3(v3, md4, "id > 99").files_selected == 0


def test_deleted_entries_are_not_scanned(v3: icenb.table.Table) -> None:
    data, deletes = _v3_files(v3)
    extra = entry_of(data[0], v3, status=EntryStatus.DELETED)
    leaf = _leaf(v3, "leaf-deleted", ManifestKind.DATA,
                 [entry_of(f, v3) for f in data[1:]] + [extra])
    root = _root(v3, "deleted", [leaf, entry_of(data[0], v3)]
                 + [entry_of(f, v3) for f in deletes])
    _same_as_v3(v3, v4_metadata(v3, root))


def test_manifest_entry_of_carries_a_data_dv(v3: icenb.table.Table) -> None:
    _, deletes = _v3_files(v3)
    dv = next(d for d in deletes if d.content == FileContent.POSITION_DELETES)
    ptype = v3.metadata.spec.partition_type(v3.metadata.schema)
    back = manifest_entry_of(entry_of(dv, v3), ptype).data_file
    assert (back.file_path, back.referenced_data_file, back.content_offset,
            back.content_size_in_bytes, back.partition, back.data_sequence_number) == (
        dv.file_path, dv.referenced_data_file, dv.content_offset, dv.content_size_in_bytes,
        dv.partition, dv.data_sequence_number)


# --------------------------------------------------------------------------- invalid structures


def test_a_leaf_that_references_a_manifest_is_rejected(v3: icenb.table.Table) -> None:
    data, _ = _v3_files(v3)
    inner = _leaf(v3, "inner", ManifestKind.DATA, [entry_of(data[0], v3)])
    # a forged leaf (the writer refuses it) listing a manifest
    location = f"{v3.metadata.location}/metadata/forged-leaf.avro"
    forged = encode_content_manifest(location, ManifestKind.ROOT, [inner])
    v3.io.new_output(location).create(forged.replace(b"root", b"data"))
    outer = ContentEntry(
        content_type=ContentType.DATA_MANIFEST, location=location, file_format=FileFormat.AVRO,
        partition_spec_id=0, record_count=1, file_size_in_bytes=len(forged),
        manifest_stats=inner.manifest_stats)
    md4 = v4_metadata(v3, _root(v3, "forged", [outer]))
    with pytest.raises(InvalidMetadata, match="references a manifest") as e:
        plan_files(v3.io, md4)
    assert e.value.file == location


def test_a_manifest_dv_whose_cardinality_disagrees_is_corrupt(v3: icenb.table.Table) -> None:
    data, _ = _v3_files(v3)
    leaf = _leaf(v3, "leaf-card", ManifestKind.DATA, [entry_of(f, v3) for f in data])
    mdv = inline_manifest_dv(leaf, [0, 1])
    bad = ContentEntry(**{**{k: getattr(mdv, k) for k in mdv.__dataclass_fields__},
                          "record_count": 3})
    root = _root(v3, "card", [leaf, bad])
    with pytest.raises(CorruptFile) as e:
        plan_files(v3.io, v4_metadata(v3, root))
    assert (e.value.file, e.value.field) == (root, "entries[1].record_count")


def test_a_snapshot_pointing_to_a_leaf_is_rejected(v3: icenb.table.Table) -> None:
    data, _ = _v3_files(v3)
    leaf = _leaf(v3, "not-a-root", ManifestKind.DATA, [entry_of(data[0], v3)])
    with pytest.raises(InvalidMetadata, match="root manifest"):
        plan_files(v3.io, v4_metadata(v3, leaf.location))


def test_a_v3_manifest_list_named_as_root_is_refused(v3: icenb.table.Table) -> None:
    ml = v3.metadata.current_snapshot().manifest_list  # type: ignore[union-attr]
    assert ml is not None
    with pytest.raises(UnsupportedVersion):
        plan_files(v3.io, v4_metadata(v3, ml))


def test_an_unknown_partition_spec_is_named(v3: icenb.table.Table) -> None:
    data, _ = _v3_files(v3)
    e = entry_of(data[0], v3)
    bad = ContentEntry(**{**{k: getattr(e, k) for k in e.__dataclass_fields__},
                          "partition_spec_id": 7})
    root = _root(v3, "spec7", [bad])
    with pytest.raises(InvalidMetadata) as err:
        plan_files(v3.io, v4_metadata(v3, root))
    assert (err.value.file, err.value.field, err.value.value) == (
        root, "entries[0].partition_spec_id", 7)


def test_v3_snapshots_of_a_v4_table_still_plan(v3: icenb.table.Table) -> None:
    data, deletes = _v3_files(v3)
    md4 = v4_metadata(v3, _root(v3, "hist", [entry_of(f, v3) for f in data + deletes]))
    first = v3.metadata.snapshots[0].snapshot_id
    ours = plan_files(v3.io, md4, snapshot_id=first)
    theirs = plan_files(v3.io, v3.metadata, snapshot_id=first)
    assert _files(ours) == _files(theirs)
    assert pa.Table.from_pylist(_rows(v3.io, ours)).num_rows == 10
