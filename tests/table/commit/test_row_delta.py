"""RowDelta (the contract merge-on-read writers commit through): delete files go to delete
manifests, the operation follows Java's rule, validations raise CommitConflict; a
copy-on-write delete reads files with their deletes applied; Java reads the result."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import CommitConflict, ValidationError
from icenb.io.manifest_reader import read_manifest_list
from icenb.io.puffin import build_puffin, deletion_vector_blob
from icenb.spec.manifest import DataFile, FileContent, FileFormat, ManifestContent
from icenb.table import Table
from icenb.table.commit.merging import read_entries
from icenb.table.commit.row_delta import RowDelta
from tests.table._helpers import (
    Key,
    assert_java_reads_snapshot,
    run_keyed,
    snapshot_requests,
)


def _data_files(t: Table) -> list[DataFile]:
    snap = t.current_snapshot
    assert snap is not None
    out = []
    for m in read_manifest_list(t.io, snap, t.format_version):
        if m.content == ManifestContent.DATA:
            out.extend(e.data_file for e in read_entries(t.io, m, t.metadata) if e.is_live)
    return out


def position_delete(t: Table, data: DataFile, positions: list[int]) -> DataFile:
    """A position delete file (spec: Position Delete Files) written with pyarrow."""
    path = f"{t.location}/data/pos-{uuid.uuid4()}.parquet"
    schema = pa.schema([
        pa.field("file_path", pa.string(), False, {"PARQUET:field_id": "2147483546"}),
        pa.field("pos", pa.int64(), False, {"PARQUET:field_id": "2147483545"})])
    pq.write_table(pa.table({"file_path": [data.file_path] * len(positions),
                             "pos": positions}, schema=schema), path)
    return DataFile(content=FileContent.POSITION_DELETES, file_path=path,
                    file_format=FileFormat.PARQUET, partition=data.partition,
                    record_count=len(positions), file_size_in_bytes=Path(path).stat().st_size,
                    referenced_data_file=data.file_path, spec_id=data.spec_id)


def deletion_vector(t: Table, data: DataFile, positions: list[int]) -> DataFile:
    path = f"{t.location}/data/dv-{uuid.uuid4()}.puffin"
    puffin = build_puffin([deletion_vector_blob(positions, data.file_path)])
    Path(path).write_bytes(puffin.data)
    blob = puffin.file_metadata.blobs[0]
    return DataFile(content=FileContent.POSITION_DELETES, file_path=path,
                    file_format=FileFormat.PUFFIN, partition=data.partition,
                    record_count=len(positions), file_size_in_bytes=puffin.file_size,
                    referenced_data_file=data.file_path, content_offset=blob.offset,
                    content_size_in_bytes=blob.length, spec_id=data.spec_id)


def _delta(t: Table) -> RowDelta:
    assert t.catalog is not None and t.identifier is not None
    return RowDelta(t.catalog, t.identifier, t.io)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Table]:
    wh = icenb.warehouse(tmp_path_factory.mktemp("delta"))
    out = {}
    for name, v, part in (("db.pos2", 2, []), ("db.pos2p", 2, ["bucket(2, id)"]),
                          ("db.dv3", 3, [])):
        t = wh.create_table(name, "id long, s string", partition_by=part, format_version=v)
        t.append([{"id": i, "s": f"s{i}"} for i in range(10)])
        f = _data_files(t)[0]
        make = deletion_vector if v >= 3 else position_delete
        d = make(t, f, [0, 1])
        snap = t.current_snapshot
        assert snap is not None
        committed = _delta(t).add_deletes([d]).validate_from_snapshot(snap.snapshot_id) \
            .validate_data_files_exist([f.file_path]).commit(t._loaded())
        t._committed(committed)
        gone = set(pq.read_table(f.file_path).column("id").to_pylist()[:2])
        t.delete("s = 's5' or s = 's6'")  # copy-on-write over files with deletes
        EXPECTED[name] = sorted(set(range(10)) - gone - {5, 6})
        out[name] = t
    return out


EXPECTED: dict[str, list[int]] = {}


def test_row_delta_summary_and_manifests(tables: dict[str, Table]) -> None:
    for name, t in tables.items():
        delta = t.snapshots[1]
        assert delta.summary is not None and delta.summary.operation == "delete"
        s = delta.summary
        assert s["added-delete-files"] == "1" and s["added-position-deletes"] == "2"
        assert s["total-delete-files"] == "1" and s["total-position-deletes"] == "2"
        if name == "db.dv3":
            assert s["added-dvs"] == "1" and "added-position-delete-files" not in s
        else:
            assert s["added-position-delete-files"] == "1"
        manifests = read_manifest_list(t.io, delta, t.format_version)
        assert [m.content for m in manifests].count(ManifestContent.DELETES) == 1


def test_copy_on_write_applies_existing_deletes(tables: dict[str, Table]) -> None:
    for name, t in tables.items():
        assert sorted(t.scan().to_arrow().column("id").to_pylist()) == EXPECTED[name]
        snap = t.current_snapshot
        assert snap is not None and snap.summary is not None
        assert int(snap.summary["total-records"]) == sum(f.record_count for f in _data_files(t))


def test_row_delta_operations(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=2)
    t.append([{"id": 1}])
    f = _data_files(t)[0]
    assert _delta(t).add_rows([f]).operation() == "append"
    assert _delta(t).add_deletes([position_delete(t, f, [0])]).operation() == "delete"
    assert _delta(t).add_rows([f]).add_deletes([position_delete(t, f, [0])]).operation() \
        == "overwrite"
    with pytest.raises(ValidationError):
        _delta(t).add_deletes([f])  # a data file is not a delete file


def test_deletes_need_v2(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=1)
    t.append([{"id": 1}])
    f = _data_files(t)[0]
    d = position_delete(t, f, [0])
    with pytest.raises(ValidationError, match="format version 2"):
        _delta(t).add_deletes([d]).commit(t._loaded())


def test_deletes_of_a_concurrently_removed_file_conflict(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    a = wh.create_table("db.t", "id long", format_version=2)
    a.append([{"id": 1}, {"id": 2}])
    b = wh.table("db.t")
    f = _data_files(b)[0]
    a.delete("id > 0")
    d = position_delete(b, f, [0])
    delta = _delta(b).add_deletes([d]).validate_data_files_exist([f.file_path])
    delta.track_written([d.file_path])
    with pytest.raises(CommitConflict, match="no longer in the table"):
        delta.commit(b._loaded())
    assert not Path(d.file_path).exists()  # tracked: cleaned up


def test_concurrent_dv_for_the_same_file_conflicts(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    a = wh.create_table("db.t", "id long", format_version=3)
    a.append([{"id": i} for i in range(4)])
    b = wh.table("db.t")
    f = _data_files(a)[0]
    start = a.current_snapshot
    assert start is not None
    a._committed(_delta(a).add_deletes([deletion_vector(a, f, [0])]).commit(a._loaded()))
    late = _delta(b).add_deletes([deletion_vector(b, f, [1])]) \
        .validate_from_snapshot(start.snapshot_id)
    with pytest.raises(CommitConflict, match="deletion vector"):
        late.commit(b._loaded())


def test_removed_dv_replaced_by_a_merged_one(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=3)
    t.append([{"id": i} for i in range(4)])
    f = _data_files(t)[0]
    old = deletion_vector(t, f, [0])
    t._committed(_delta(t).add_deletes([old]).commit(t._loaded()))
    new = deletion_vector(t, f, [0, 2])
    snap_md = _delta(t).add_deletes([new]).remove_deletes([old]).commit(t._loaded())
    t._committed(snap_md)
    s = t.current_snapshot
    assert s is not None and s.summary is not None
    assert (s.summary["added-dvs"], s.summary["removed-dvs"]) == ("1", "1")
    assert s.summary["total-delete-files"] == "1"
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 3]


def test_java_reads_row_deltas(tables: dict[str, Table]) -> None:
    kinds = ("files", "entries")
    requests: dict[Key, dict[str, Any]] = {}
    for name, t in tables.items():
        assert t.metadata_location is not None
        for snap in t.snapshots:
            requests.update(snapshot_requests(name, t.metadata_location, snap.snapshot_id,
                                              kinds))
    results = run_keyed("java_read_written.py", requests)
    for name, t in tables.items():
        for snap in t.snapshots:
            assert_java_reads_snapshot(t, name, snap.snapshot_id, results, kinds)
