"""The one producer factory (icenb.table.commit.new_producer): which class commits each
operation on each format version, and the caller's commit UUID naming the operation's files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.table.commit import ProducerKind, new_producer, table_producer
from icenb.table.commit.append import MergeAppend
from icenb.table.commit.overwrite import DeleteFiles, OverwriteFiles, ReplacePartitions
from icenb.table.commit.producer import FastAppend
from icenb.table.commit.row_delta import RowDelta
from icenb.table.commit.v4_append import V4Append
from icenb.table.commit.v4_overwrite import V4Overwrite
from icenb.table.commit.v4_replace_partitions import V4ReplacePartitions
from icenb.table.commit.v4_row_delta import V4RowDelta

_V3 = {"append": MergeAppend, "overwrite": OverwriteFiles,
       "replace_partitions": ReplacePartitions, "row_delta": RowDelta, "delete": DeleteFiles}
_V4 = {"append": V4Append, "overwrite": V4Overwrite,
       "replace_partitions": V4ReplacePartitions, "row_delta": V4RowDelta,
       "delete": V4Overwrite}


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_the_class_for_each_operation_and_format_version(tmp_path: Path, version: int) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=version)
    catalog, identifier = t.operations.commit_target()
    for kind in ProducerKind:
        p = new_producer(kind, catalog, identifier, t.io, t.metadata)
        assert type(p) is (_V4 if version == 4 else _V3)[kind.value], (version, kind)
    t.set_properties({"commit.manifest-merge.enabled": "false"})
    p = new_producer("append", catalog, identifier, t.io, t.metadata)
    assert type(p) is (V4Append if version == 4 else FastAppend)


@pytest.mark.parametrize("version", [2, 4])
def test_the_commit_uuid_names_the_operations_files(tmp_path: Path, version: int) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=version)
    catalog, identifier = t.operations.commit_target()
    uuid = "0b9e4a36-7d0e-4c51-9d7a-1f2e3d4c5b6a"
    p = new_producer("append", catalog, identifier, t.io, t.metadata, commit_uuid=uuid)
    assert p.commit_uuid == uuid
    p.write([{"id": 1}], t.metadata)
    from icenb.table.commit.producer import commit_snapshot

    snap = commit_snapshot(t, p)
    tree = snap.root_manifest if version == 4 else snap.manifest_list
    assert tree is not None and tree.endswith(f"-{uuid}.avro")
    data = [f for f in os.listdir(tmp_path / "db" / "t" / "data")]
    assert data and all(uuid in name for name in data)
    assert [r["id"] for r in t.to_arrow().to_pylist()] == [1]


def test_bad_kinds_and_commit_uuids_are_refused(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long", format_version=2)
    catalog, identifier = t.operations.commit_target()
    with pytest.raises(ValidationError) as e:
        new_producer("merge", catalog, identifier, t.io, t.metadata)  # type: ignore[call-overload]
    assert e.value.field == "kind" and e.value.value == "merge"
    with pytest.raises(ValidationError) as e:  # it names files: no path separators
        new_producer("append", catalog, identifier, t.io, t.metadata, commit_uuid="../x")
    assert e.value.field == "commit_uuid"
    with pytest.raises(ValidationError) as e:  # a v4-only path on a v2 table
        table_producer("row_delta", t, V4RowDelta)
    assert e.value.field == "format-version" and e.value.value == 2
    assert t.metadata.snapshots == ()
