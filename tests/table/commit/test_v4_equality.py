"""Equality deletes on EXPERIMENTAL format-version 4 tables: ``delete_by_key`` and ``upsert``
(single-file-commits proposal, "Adding data files": *"The same procedure is used for Equality
Deletes or Delete Vectors"*; docs/v4-layout.md#equality-deletes). The root / leaf entries after each
commit,
and every snapshot reads (rows, ``_row_id``, delete matching) like a v3 twin built by the same
calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import ValidationError
from icenb.io.root_manifest import load_manifest_dv, read_content_manifest
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind
from icenb.spec.manifest import DataFile, EntryStatus, FileContent, FileFormat
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.producer import commit_snapshot
from icenb.table.commit.v4_append import ROOT_ENTRY_LIMIT
from icenb.table.commit.v4_overwrite import V4Overwrite
from icenb.table.commit.v4_row_delta import V4RowDelta
from tests.table.commit.test_v4_append import _root
from tests.table.commit.test_v4_overwrite import _commit, _same

ADDED, EXISTING, DELETED = EntryStatus.ADDED, EntryStatus.EXISTING, EntryStatus.DELETED
Table = icenb.table.Table


def _twins(tmp_path: Path, partition_by: list[str] | None, limit: int | None = None
           ) -> tuple[Table, Table]:
    """A v4 table and its v3 twin (``id long, p int``), partitioned by ``partition_by``."""
    props = None if limit is None else {ROOT_ENTRY_LIMIT: str(limit)}
    wh = icenb.warehouse(tmp_path)
    v4 = wh.create_table("db.v4", "id long, p int", partition_by=partition_by, format_version=4,
                         properties=props)
    v3 = wh.create_table("db.v3", "id long, p int", partition_by=partition_by, format_version=3,
                         properties=props)
    return v4, v3


def _rows(*ids: int) -> list[dict[str, Any]]:
    return [{"id": i, "p": i // 10} for i in ids]


def _both(v4: Table, v3: Table, change: Any) -> tuple[Snapshot, int]:
    """Apply ``change`` to both tables; the v4 snapshot and the metadata files it wrote."""
    snap, written = _commit(v4, change)
    assert change(v3) is not None
    return snap, written


def _shown(entries: list[ContentEntry]) -> list[tuple[str, str]]:
    """Entries as (kind, status): D data, EQ equality delete, DM / DVM data / delete manifest,
    MDV manifest DV."""
    names = {ContentType.DATA: "D", ContentType.EQUALITY_DELETE: "EQ",
             ContentType.DATA_MANIFEST: "DM", ContentType.DELETE_MANIFEST: "DVM",
             ContentType.MANIFEST_DV: "MDV", ContentType.POSITION_DELETE: "DV"}
    return [(names[e.content_type], e.status.name) for e in entries]


def _leaf(t: Table, e: ContentEntry, kind: ManifestKind) -> list[ContentEntry]:
    leaf = read_content_manifest(t.io, e.location)
    assert leaf.kind == kind
    return list(leaf.entries)


def _matching(t: Table, snap: Snapshot) -> list[tuple[Any, ...]]:
    """Per planned data file: (partition, records, data seq) and the deletes applied to it as
    (content, partition, equality ids, data seq, records) - paths differ between twins."""
    plan = t.scan(snapshot_id=snap.snapshot_id).plan()
    out = []
    for task in plan.tasks:
        f = task.data_file
        deletes = sorted((int(d.content), d.partition, d.equality_ids, d.data_sequence_number,
                          d.record_count) for d in task.delete_files)
        out.append(((f.partition, f.record_count, f.data_sequence_number), deletes))
    return sorted(out, key=repr)


def _same_plans(v4: Table, v3: Table) -> None:
    """Every snapshot plans the same delete matching in both tables (sequence numbers and
    partitions of the converted v4 entries are v3's)."""
    for a, b in zip(v4.metadata.snapshots, v3.metadata.snapshots, strict=True):
        assert a.sequence_number == b.sequence_number
        assert _matching(v4, a) == _matching(v3, b)


def _ids(t: Table, snap: Snapshot | None = None) -> list[tuple[int, int]]:
    sid = None if snap is None else snap.snapshot_id
    return sorted((r["id"], r["p"]) for r in t.scan(snapshot_id=sid).to_arrow().to_pylist())


# --------------------------------------------------------------------------- before: an error


def test_a_v4_table_deletes_by_key_instead_of_failing(tmp_path: Path) -> None:
    """Before: ``delete_by_key`` / ``upsert`` on a v4 table read the snapshot's manifest list
    and failed (InvalidMetadata, no manifest list). Now both commit a root manifest."""
    v4, _ = _twins(tmp_path, None)
    v4.append(_rows(1, 2))
    s = v4.delete_by_key([{"id": 1}], on="id")
    assert s is not None and s.root_manifest is not None and s.manifest_list is None
    s = v4.upsert(_rows(3), on="id")
    assert s.root_manifest is not None and s.manifest_list is None
    assert _ids(v4) == [(2, 0), (3, 0)]


# --------------------------------------------------------------------------- root placement


def test_delete_by_key_in_the_root_of_an_unpartitioned_table(tmp_path: Path) -> None:
    """One equality delete file: an ADDED type-2 root entry with the key's field ids, after
    the EXISTING data file; one metadata file written (the root); it deletes from the older
    data file only; rows and ``_row_id`` as the v3 twin's."""
    v4, v3 = _twins(tmp_path, None)
    s1, _ = _both(v4, v3, lambda t: t.append(_rows(1, 2, 3)))
    s2, written = _both(v4, v3, lambda t: t.delete_by_key([{"id": 2}, {"id": 9}], on="id"))

    root = _root(v4, s2)
    assert _shown(root) == [("D", "EXISTING"), ("EQ", "ADDED")]
    eq = root[1]
    assert eq.equality_ids == (1,) and eq.record_count == 2
    assert eq.partition_spec_id == 0 and eq.referenced_file is None
    assert written == 1
    assert s2.summary is not None and s2.summary.operation == "delete"
    assert s2.summary.properties["added-equality-deletes"] == "2"
    assert _ids(v4) == [(1, 0), (3, 0)]
    assert _ids(v4, s1) == [(1, 0), (2, 0), (3, 0)]  # time travel: before the delete
    _same(v4, v3)
    _same_plans(v4, v3)


def test_delete_by_key_in_the_root_of_an_identity_partitioned_table(tmp_path: Path) -> None:
    """Keys in two partitions: one equality delete file per partition, both root entries
    carrying their partition; each applies only to the data file of its partition."""
    v4, v3 = _twins(tmp_path, ["p"])
    _both(v4, v3, lambda t: t.append(_rows(10, 11, 20, 21)))
    s2, written = _both(v4, v3, lambda t: t.delete_by_key(_rows(11, 20), on=["id", "p"]))

    root = _root(v4, s2)
    assert _shown(root) == [("D", "EXISTING"), ("D", "EXISTING"), ("EQ", "ADDED"),
                            ("EQ", "ADDED")]
    assert {e.equality_ids for e in root[2:]} == {(1, 2)}
    plan = v4.scan().plan()
    assert {t.data_file.partition: [d.partition for d in t.delete_files]
            for t in plan.tasks} == {(1,): [(1,)], (2,): [(2,)]}
    assert written == 1
    assert _ids(v4) == [(10, 1), (21, 2)]
    _same(v4, v3)
    _same_plans(v4, v3)


# --------------------------------------------------------------------------- leaf placement


@pytest.mark.parametrize(("partition_by", "on"), [
    (None, "id"), (["p"], ["id", "p"]), (["bucket(4, id)"], "id")])
def test_delete_by_key_in_a_new_delete_leaf(tmp_path: Path, partition_by: list[str] | None,
                                             on: str | list[str]) -> None:
    """Limit 0: the equality deletes go to one new delete leaf (kind DELETE) of ADDED type-2
    entries, inheriting the commit's sequence number from the root entry; the data leaf is
    untouched. Plans and rows equal the v3 twin's."""
    v4, v3 = _twins(tmp_path, partition_by, limit=0)
    s1, _ = _both(v4, v3, lambda t: t.append(_rows(10, 11, 12, 20, 21, 30)))
    keys = [{"id": i, "p": i // 10} for i in (11, 21, 30, 99)]
    s2, written = _both(v4, v3, lambda t: t.delete_by_key(keys, on=on))

    root = _root(v4, s2)
    assert _shown(root) == [("DM", "EXISTING"), ("DVM", "ADDED")]
    assert root[1].version_info.sequence_number == s2.sequence_number
    leaf = _leaf(v4, root[1], ManifestKind.DELETE)
    assert {e.content_type for e in leaf} == {ContentType.EQUALITY_DELETE}
    assert {e.status for e in leaf} == {ADDED}
    ids = (1,) if on == "id" else (1, 2)
    assert {e.equality_ids for e in leaf} == {ids}
    assert sum(e.record_count for e in leaf) == 4  # key 99 too (as v3: no data check)
    assert written == 2  # the root and the delete leaf
    # leaf entries resolve to the commit's sequence number; they delete from older data only
    deletes = [d for t in v4.scan().plan().tasks for d in t.delete_files]
    assert deletes and {d.data_sequence_number for d in deletes} == {s2.sequence_number}
    assert {t.data_file.data_sequence_number for t in v4.scan().plan().tasks} == {
        s1.sequence_number}
    assert _ids(v4) == [(10, 1), (12, 1), (20, 2)]
    assert _ids(v4, s1) == sorted((r["id"], r["p"]) for r in _rows(10, 11, 12, 20, 21, 30))
    _same(v4, v3)
    _same_plans(v4, v3)


def test_bucket_partitioned_deletes_match_their_bucket(tmp_path: Path) -> None:
    """bucket(4, id): each equality delete file carries its key's bucket and applies only to
    the data file of that bucket (the partition tuple lives in content_stats,
    docs/v4-layout.md#partition-tuple)."""
    v4, v3 = _twins(tmp_path, ["bucket(4, id)"])
    _both(v4, v3, lambda t: t.append(_rows(*range(8))))
    _both(v4, v3, lambda t: t.delete_by_key([{"id": 3}], on="id"))
    plan = v4.scan().plan()
    hit = [t for t in plan.tasks if t.delete_files]
    assert len(hit) == 1 and hit[0].delete_files[0].partition == hit[0].data_file.partition
    assert _ids(v4) == [(i, 0) for i in range(8) if i != 3]
    _same(v4, v3)
    _same_plans(v4, v3)


# --------------------------------------------------------------------------- upsert


@pytest.mark.parametrize("limit", [None, 0])
@pytest.mark.parametrize(("partition_by", "on"), [
    (None, "id"), (["p"], ["id", "p"]), (["bucket(4, id)"], "id")])
def test_upsert_after_delete_by_key(tmp_path: Path, partition_by: list[str] | None,
                                    on: str | list[str], limit: int | None) -> None:
    """An upsert is the keys' equality deletes and the rows in ONE snapshot; the new rows
    share the deletes' sequence number, so they survive them (deletes apply to strictly older
    data). Placement: together counted against the root limit (limit 0: a delete leaf, then
    a data leaf)."""
    v4, v3 = _twins(tmp_path, partition_by, limit)
    s1, _ = _both(v4, v3, lambda t: t.append(_rows(10, 11, 20)))
    s2, _ = _both(v4, v3, lambda t: t.delete_by_key([{"id": 11, "p": 1}], on=on))
    # 10 replaced (same key), 11 re-inserted after its delete, 30 new
    s3, written = _both(v4, v3, lambda t: t.upsert(_rows(10, 11, 30), on=on))
    s4, _ = _both(v4, v3, lambda t: t.upsert(_rows(10), on=on))  # replaces s3's row 10

    root = _root(v4, s3)
    carried = _shown(root)[:len(_root(v4, s2))]
    assert {status for _, status in carried} == {"EXISTING"}
    new = [e for e in root if e.status == ADDED]
    if limit == 0 or partition_by is not None:  # > 2 new files: leaves, deletes first
        assert _shown(new) == [("DVM", "ADDED"), ("DM", "ADDED")]
        eqs = _leaf(v4, new[0], ManifestKind.DELETE)
        data = _leaf(v4, new[1], ManifestKind.DATA)
        assert written == 3
    else:  # one equality delete file and one data file: the root, deletes first
        assert _shown(new) == [("EQ", "ADDED"), ("D", "ADDED")]
        eqs, data = new[:1], new[1:]
        assert written == 1
    assert eqs and all(e.equality_ids == ((1,) if on == "id" else (1, 2)) for e in eqs)
    assert sum(e.record_count for e in eqs) == 3 and sum(e.record_count for e in data) == 3
    assert s3.summary is not None and s3.summary.operation == "overwrite"

    assert _ids(v4, s1) == [(10, 1), (11, 1), (20, 2)]
    assert _ids(v4, s2) == [(10, 1), (20, 2)]
    assert _ids(v4, s3) == [(10, 1), (11, 1), (20, 2), (30, 3)]
    assert _ids(v4, s4) == [(10, 1), (11, 1), (20, 2), (30, 3)]
    assert v4.scan(columns=["id"]).to_arrow().num_rows == 4
    _same(v4, v3)
    _same_plans(v4, v3)


def test_upsert_into_an_empty_table_is_an_append(tmp_path: Path) -> None:
    v4, v3 = _twins(tmp_path, ["p"])
    s, _ = _both(v4, v3, lambda t: t.upsert(_rows(10, 20), on=["id", "p"]))
    assert _shown(_root(v4, s)) == [("D", "ADDED"), ("D", "ADDED")]
    assert s.summary is not None and s.summary.operation == "append"
    _same(v4, v3)


def test_delete_by_key_with_nothing_to_delete_commits_nothing(tmp_path: Path) -> None:
    v4, _ = _twins(tmp_path, None)
    assert v4.delete_by_key([{"id": 1}], on="id") is None  # no snapshot
    s = v4.append(_rows(1))
    assert v4.delete_by_key(pa.table({"id": pa.array([], pa.int64())}), on="id") is None
    assert v4.current_snapshot == s


def test_partitioned_keys_must_hold_the_partition_source(tmp_path: Path) -> None:
    v4, _ = _twins(tmp_path, ["p"])
    s = v4.append(_rows(10))
    with pytest.raises(ValidationError) as err:
        v4.delete_by_key([{"id": 10}], on="id")
    assert err.value.field == "on"
    assert v4.current_snapshot == s


# --------------------------------------------------------------------------- removal by path


@pytest.mark.parametrize("limit", [None, 0])
def test_removing_an_equality_delete_file_by_path(tmp_path: Path, limit: int | None) -> None:
    """V4Overwrite removes an equality delete file named by path: DELETED in place in the root,
    or a manifest DV over its delete leaf; the rows it deleted are back."""
    v4, _ = _twins(tmp_path, None, limit)
    v4.append(_rows(1, 2, 3))
    s2 = v4.delete_by_key([{"id": 2}], on="id")
    assert s2 is not None
    eq = [d for t in v4.scan().plan().tasks for d in t.delete_files
          if d.content == FileContent.EQUALITY_DELETES]
    assert len(eq) == 1
    catalog, identifier = v4._writable()
    producer = V4Overwrite(catalog, identifier, v4.io).delete_file(eq[0].file_path)
    s3 = commit_snapshot(v4, producer)
    root = _root(v4, s3)
    if limit == 0:
        assert _shown(root) == [("DM", "EXISTING"), ("DVM", "EXISTING"), ("MDV", "ADDED")]
        assert [int(i) for i in load_manifest_dv(v4.io, root[2]).to_numpy()] == [0]
    else:
        assert _shown(root) == [("D", "EXISTING"), ("EQ", "DELETED")]
        assert root[1].version_info.sequence_number == s2.sequence_number
    assert s3.summary is not None and s3.summary.properties["removed-equality-deletes"] == "1"
    assert _ids(v4) == [(1, 0), (2, 0), (3, 0)]
    assert _ids(v4, s2) == [(1, 0), (3, 0)]


# --------------------------------------------------------------------------- the producer


def test_add_deletes_takes_equality_deletes_with_ids_only(tmp_path: Path) -> None:
    v4, _ = _twins(tmp_path, None)
    catalog, identifier = v4._writable()
    producer = V4RowDelta(catalog, identifier, v4.io)

    def f(content: FileContent, ids: tuple[int, ...] | None = None) -> DataFile:
        return DataFile(content=content, file_path="file:///x-deletes.parquet",
                        file_format=FileFormat.PARQUET, partition=(), record_count=1,
                        file_size_in_bytes=10, equality_ids=ids)

    with pytest.raises(ValidationError) as err:
        producer.add_deletes([f(FileContent.EQUALITY_DELETES)])
    assert err.value.field == "equality_ids"
    with pytest.raises(ValidationError) as err:
        producer.add_deletes([f(FileContent.POSITION_DELETES)])  # a DV needs its blob
    assert err.value.field == "content"
    eq = f(FileContent.EQUALITY_DELETES, (1,))
    producer.add_deletes([eq])
    assert producer.deletes == (eq,) and producer.operation() == "delete"
    producer.abort()


def test_equality_deletes_on_an_upgraded_table(tmp_path: Path) -> None:
    """The first v4 commit after ``upgrade(4)`` may be ``delete_by_key``: the parent's data
    specs come from its manifest list, the root carries the v3 manifest (docs/v4-layout.md#upgrade)
    and the new
    equality delete; then an upsert. Reads as the v3 twin."""
    _, v3 = _twins(tmp_path, None)
    v4 = icenb.warehouse(tmp_path).create_table("db.up", "id long, p int", format_version=3)
    _both(v4, v3, lambda t: t.append(_rows(1, 2, 3)))
    v4.upgrade(4)
    assert v4.metadata.format_version == 4
    s2, _ = _both(v4, v3, lambda t: t.delete_by_key([{"id": 1}], on="id"))
    assert _shown(_root(v4, s2)) == [("DM", "EXISTING"), ("EQ", "ADDED")]
    _both(v4, v3, lambda t: t.upsert(_rows(2, 4), on="id"))
    assert _ids(v4) == [(2, 0), (3, 0), (4, 0)]
    _same(v4, v3)
    _same_plans(v4, v3)
