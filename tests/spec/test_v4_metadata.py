"""EXPERIMENTAL format-version 4 table metadata (single-file-commits proposal,
docs/v4-layout.md#root-pointer): a v4 snapshot names one ``root-manifest`` and no manifest list;
v1-v3 snapshots never have a root."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from icenb.errors import InvalidMetadata, ValidationError
from icenb.spec.content_entry import ROOT_MANIFEST_KEY
from icenb.spec.snapshot import Snapshot, snapshot_from_json, snapshot_to_json
from icenb.spec.table_metadata import (
    MAX_FORMAT_VERSION,
    table_metadata_from_json,
    table_metadata_to_json,
)

FILE = "s3://b/t/metadata/v9.metadata.json"
ROOT = "s3://b/t/metadata/root-2.avro"
LIST = "s3://b/t/metadata/snap-1.avro"


def doc(version: int = 4) -> dict[str, Any]:
    """A v4 table upgraded from v3: snapshot 1 keeps its manifest list, snapshot 2 has a root."""
    return {
        "format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://b/t", "last-sequence-number": 2, "last-updated-ms": 1700000000000,
        "last-column-id": 1, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": False, "type": "long"}]}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
        "current-snapshot-id": 2, "next-row-id": 5,
        "refs": {"main": {"snapshot-id": 2, "type": "branch"}},
        "snapshots": [
            {"sequence-number": 1, "snapshot-id": 1, "timestamp-ms": 1700000000000,
             "summary": {"operation": "append"}, "manifest-list": LIST, "schema-id": 0,
             "first-row-id": 0, "added-rows": 3},
            {"sequence-number": 2, "snapshot-id": 2, "parent-snapshot-id": 1,
             "timestamp-ms": 1700000000001, "summary": {"operation": "append"},
             ROOT_MANIFEST_KEY: ROOT, "schema-id": 0, "first-row-id": 3, "added-rows": 2},
        ],
        "statistics": [], "partition-statistics": [], "snapshot-log": [], "metadata-log": [],
    }


def test_v4_is_the_experimental_maximum() -> None:
    assert MAX_FORMAT_VERSION == 4


def test_v4_metadata_round_trips_with_its_root_manifest() -> None:
    md = table_metadata_from_json(doc(), file=FILE, strict=True)
    assert md.format_version == 4
    old, new = md.snapshots
    assert (old.manifest_list, old.root_manifest) == (LIST, None)
    assert (new.manifest_list, new.manifests, new.root_manifest) == (None, None, ROOT)
    out = table_metadata_to_json(md)
    assert out["snapshots"] == doc()["snapshots"]
    assert table_metadata_from_json(out) == md


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_root_manifest_below_v4_is_rejected(version: int) -> None:
    d = doc(3)
    if version < 3:
        d["format-version"] = version
        del d["next-row-id"]
        for s in d["snapshots"]:
            s.pop("first-row-id")
            s.pop("added-rows")
    with pytest.raises(InvalidMetadata) as e:
        table_metadata_from_json(d, file=FILE, strict=True)
    assert (e.value.file, e.value.field, e.value.value) == (
        FILE, "snapshots[1].root-manifest", ROOT)


@pytest.mark.parametrize(("key", "value"), [("manifest-list", LIST), ("manifests", [LIST])])
def test_a_v4_snapshot_with_a_root_and_a_manifest_list_is_rejected(key: str,
                                                                   value: Any) -> None:
    d = doc()
    d["snapshots"][1][key] = value
    with pytest.raises(InvalidMetadata) as e:
        table_metadata_from_json(d, file=FILE, strict=True)
    assert (e.value.file, e.value.field) == (FILE, f"snapshots[1].{key}")


@pytest.mark.parametrize("bad", ["", 7])
def test_a_root_manifest_must_be_a_location(bad: Any) -> None:
    raw = copy.deepcopy(doc()["snapshots"][1]) | {ROOT_MANIFEST_KEY: bad}
    with pytest.raises(InvalidMetadata) as e:
        snapshot_from_json(raw, format_version=4, where="snapshots[1]")
    assert e.value.field == "snapshots[1].root-manifest"


def test_a_v4_snapshot_needs_a_root_or_a_manifest_list() -> None:
    raw = {k: v for k, v in doc()["snapshots"][1].items() if k != ROOT_MANIFEST_KEY}
    with pytest.raises(InvalidMetadata, match="manifest-list"):
        snapshot_from_json(raw, format_version=4)


def test_snapshot_objects_check_the_root() -> None:
    with pytest.raises(ValidationError):
        Snapshot(snapshot_id=1, timestamp_ms=0, manifest_list=LIST, root_manifest=ROOT)
    with pytest.raises(ValidationError):
        Snapshot(snapshot_id=1, timestamp_ms=0, root_manifest="")
    snap = Snapshot(snapshot_id=1, timestamp_ms=0, sequence_number=1, root_manifest=ROOT)
    assert snapshot_to_json(snap, 4) == {"sequence-number": 1, "snapshot-id": 1,
                                         "timestamp-ms": 0, ROOT_MANIFEST_KEY: ROOT}
    assert snapshot_from_json(snapshot_to_json(snap, 4), format_version=4) == snap
    with pytest.raises(ValidationError):
        snapshot_to_json(snap, 3)


def test_a_v3_table_built_with_a_root_snapshot_is_rejected_on_validate() -> None:
    md = table_metadata_from_json(doc(), file=FILE)
    v3 = table_metadata_from_json({**doc(), "format-version": 3, "current-snapshot-id": 1,
                                   "refs": {"main": {"snapshot-id": 1, "type": "branch"}},
                                   "snapshots": doc()["snapshots"][:1]})
    fields = {f: getattr(v3, f) for f in v3.__dataclass_fields__}
    bad = type(v3)(**{**fields, "snapshots": md.snapshots, "current_snapshot_id": 2,
                      "refs": md.refs})
    with pytest.raises(InvalidMetadata) as e:
        bad.validate()
    assert e.value.field == "snapshots[1].root-manifest"
