"""Snapshots, snapshot references, history logs, statistics files and encryption keys.

Spec sections: "Snapshots", "Snapshot Row IDs", "Snapshot References", "Snapshot Retention
Policy", "Table Statistics", "Partition Statistics", "Encryption Keys", Appendix C "Table
Metadata and Snapshots", Appendix E (reading defaults and writing rules per version).

Every ``*_from_json`` takes ``where`` (the JSON path of the object, e.g. ``snapshots[3]``) so an
``InvalidMetadata`` names the exact field at fault (``snapshots[3].timestamp-ms``); the caller
that knows the file adds it (``IcebergError.with_file``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from icenb.errors import InvalidMetadata, ValidationError
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    as_object,
    field_path,
    int_value,
    invalid,
    is_long,
    json_list,
    opt_int,
    opt_long,
    opt_str,
    req_long,
    req_str,
    str_map,
    str_value,
    wrong_type,
)

__all__ = [
    "ADDED_DATA_FILES",
    "ADDED_DELETE_FILES",
    "ADDED_DVS",
    "ADDED_EQ_DELETES",
    "ADDED_EQ_DELETE_FILES",
    "ADDED_FILE_SIZE",
    "ADDED_POS_DELETES",
    "ADDED_POS_DELETE_FILES",
    "ADDED_RECORDS",
    "CHANGED_PARTITION_COUNT",
    "DELETED_DATA_FILES",
    "DELETED_RECORDS",
    "ENGINE_NAME",
    "ENTRIES_PROCESSED",
    "MANIFESTS_CREATED",
    "MANIFESTS_KEPT",
    "MANIFESTS_REPLACED",
    "PUBLISHED_WAP_ID",
    "REMOVED_DELETE_FILES",
    "REMOVED_DVS",
    "REMOVED_EQ_DELETES",
    "REMOVED_EQ_DELETE_FILES",
    "REMOVED_FILE_SIZE",
    "REMOVED_POS_DELETES",
    "REMOVED_POS_DELETE_FILES",
    "REPLACE_PARTITIONS",
    "ROOT_MANIFEST_KEY",
    "SOURCE_SNAPSHOT_ID",
    "TOTAL_DATA_FILES",
    "TOTAL_DELETE_FILES",
    "TOTAL_EQ_DELETES",
    "TOTAL_FILE_SIZE",
    "TOTAL_POS_DELETES",
    "TOTAL_RECORDS",
    "WAP_ID",
    "BlobMetadata",
    "EncryptedKey",
    "MetadataLogEntry",
    "Operation",
    "PartitionStatisticsFile",
    "Snapshot",
    "SnapshotLogEntry",
    "SnapshotRef",
    "SnapshotRefType",
    "StatisticsFile",
    "Summary",
    "blob_metadata_from_json",
    "blob_metadata_to_json",
    "encrypted_key_from_json",
    "encrypted_key_to_json",
    "metadata_log_entry_from_json",
    "metadata_log_entry_to_json",
    "partition_statistics_file_from_json",
    "partition_statistics_file_to_json",
    "snapshot_from_json",
    "snapshot_log_entry_from_json",
    "snapshot_log_entry_to_json",
    "snapshot_ref_from_json",
    "snapshot_ref_to_json",
    "snapshot_to_json",
    "statistics_file_from_json",
    "statistics_file_to_json",
]

MAIN_BRANCH = "main"
#: The snapshot field naming a format-version 4 snapshot's root manifest (EXPERIMENTAL: the
#: single-file-commits proposal leaves the name open; icenb's choice, docs/v4-layout.md s. 5).
ROOT_MANIFEST_KEY = "root-manifest"


# --------------------------------------------------------------------------- JSON helpers


def _base64(obj: Mapping[str, Any], key: str, where: str, required: bool) -> bytes | None:
    text = req_str(obj, key, where) if required else opt_str(obj, key, where)
    if text is None:
        return None
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise InvalidMetadata("not valid base64", field=field_path(where, key),
                              value=text) from None


def _b64text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if isinstance(value, MappingProxyType):
        return value
    return MappingProxyType(dict(value or {}))


def _check_long(value: Any, name: str, *, optional: bool = False, positive: bool = False,
                non_negative: bool = False, bits: int = 64) -> None:
    """Constructor-side validation (``ValidationError`` naming the attribute)."""
    if value is None:
        if optional:
            return
        raise ValidationError("must not be None", field=name)
    lo, hi = (INT_MIN, INT_MAX) if bits == 32 else (LONG_MIN, LONG_MAX)
    if type(value) is not int or not lo <= value <= hi:
        raise ValidationError(f"must be a {bits}-bit integer", field=name, value=value)
    if positive and value <= 0:
        raise ValidationError("must be positive", field=name, value=value)
    if non_negative and value < 0:
        raise ValidationError("must not be negative", field=name, value=value)


# --------------------------------------------------------------------------- operations, summary



# --------------------------------------------------------------------------- summary keys
# Snapshot summary keys (spec: "Snapshots" ``summary``; the optional keys and their names
# are Iceberg Java's SnapshotSummary), declared once for the producers and the pictures.
ADDED_DATA_FILES = "added-data-files"
DELETED_DATA_FILES = "deleted-data-files"
ADDED_DELETE_FILES = "added-delete-files"
REMOVED_DELETE_FILES = "removed-delete-files"
ADDED_EQ_DELETE_FILES = "added-equality-delete-files"
REMOVED_EQ_DELETE_FILES = "removed-equality-delete-files"
ADDED_POS_DELETE_FILES = "added-position-delete-files"
REMOVED_POS_DELETE_FILES = "removed-position-delete-files"
ADDED_DVS = "added-dvs"
REMOVED_DVS = "removed-dvs"
ADDED_RECORDS = "added-records"
DELETED_RECORDS = "deleted-records"
ADDED_FILE_SIZE = "added-files-size"
REMOVED_FILE_SIZE = "removed-files-size"
ADDED_POS_DELETES = "added-position-deletes"
REMOVED_POS_DELETES = "removed-position-deletes"
ADDED_EQ_DELETES = "added-equality-deletes"
REMOVED_EQ_DELETES = "removed-equality-deletes"
CHANGED_PARTITION_COUNT = "changed-partition-count"
REPLACE_PARTITIONS = "replace-partitions"
#: Java's ``BaseRewriteManifests`` summary (a ``replace`` of manifests).
MANIFESTS_CREATED = "manifests-created"
MANIFESTS_KEPT = "manifests-kept"
MANIFESTS_REPLACED = "manifests-replaced"
ENTRIES_PROCESSED = "entries-processed"
TOTAL_RECORDS = "total-records"
TOTAL_FILE_SIZE = "total-files-size"
TOTAL_DATA_FILES = "total-data-files"
TOTAL_DELETE_FILES = "total-delete-files"
TOTAL_POS_DELETES = "total-position-deletes"
TOTAL_EQ_DELETES = "total-equality-deletes"
ENGINE_NAME = "engine-name"
SOURCE_SNAPSHOT_ID = "source-snapshot-id"
PUBLISHED_WAP_ID = "published-wap-id"
WAP_ID = "wap.id"


class Operation(str, Enum):
    """The snapshot operation recorded in its summary (spec: Snapshots)."""

    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"

    def __str__(self) -> str:
        return self.value


_OPERATIONS = {op.value: op for op in Operation}


def _operation(text: str) -> str:
    """The ``Operation`` member for a known name; other names are kept as plain strings."""
    return _OPERATIONS.get(text, text)


@safe_repr
@dataclass(frozen=True, eq=False)
class Summary(Mapping[str, str]):
    """A snapshot summary: ``operation`` plus other string properties, in file order.

    It is a read-only mapping that includes ``"operation"``. Values are kept as strings, as the
    spec stores them (Appendix F "Optional Snapshot Summary Fields"). ``operation`` is an
    ``Operation`` for the four spec operations and a plain string for others.
    """

    operation: str
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.operation, str):
            raise ValidationError("operation must be a string", field="operation",
                                  value=self.operation)
        object.__setattr__(self, "operation", _operation(self.operation))
        props = dict(self.properties)
        if "operation" in props:
            raise ValidationError("pass the operation separately, not in properties",
                                  field="properties.operation")
        for k, v in props.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise ValidationError("summary keys and values must be strings",
                                      field=f"summary.{k}", value=v)
        object.__setattr__(self, "properties", MappingProxyType(props))

    @classmethod
    def _trusted(cls, operation: str, properties: dict[str, str]) -> Summary:
        """Build without re-validating (the JSON reader has checked every value)."""
        summary = object.__new__(cls)
        summary.__dict__.update(operation=_operation(operation),
                                properties=MappingProxyType(properties))
        return summary

    def __getitem__(self, key: str) -> str:
        if key == "operation":
            return str(self.operation)
        return self.properties[key]

    def __iter__(self) -> Iterator[str]:
        yield "operation"
        yield from self.properties

    def __len__(self) -> int:
        return 1 + len(self.properties)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Summary):
            return self.operation == other.operation and dict(self.properties) == dict(
                other.properties
            )
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        return hash((str(self.operation), frozenset(self.properties.items())))

    def __reduce__(self) -> tuple[Any, ...]:  # read-only mappings do not pickle by themselves
        return (Summary, (str(self.operation), dict(self.properties)))

    def __repr__(self) -> str:
        return f"Summary(operation={str(self.operation)!r}, properties={dict(self.properties)!r})"

    def int_value(self, key: str) -> int | None:
        """A numeric property (e.g. ``total-records``) as int; None if absent or not a number."""
        text = self.properties.get(key)
        if text is None:
            return None
        try:
            return int(text)
        except ValueError:
            return None


def summary_from_json(obj: Any, where: str = "summary") -> Summary:
    """Parse a snapshot summary object; ``operation`` is required when a summary is present.

    Non-string scalar values (numbers, booleans) written by some engines are kept as their JSON
    text; objects, lists and null are rejected.
    """
    obj = as_object(obj, where, "a snapshot summary")
    operation = req_str(obj, "operation", where)
    props: dict[str, str] = {}
    for k, v in obj.items():
        if k == "operation":
            continue
        if isinstance(v, str):
            props[k] = v
        elif isinstance(v, (bool, int, float)):
            props[k] = json.dumps(v)
        else:
            raise wrong_type(where, str(k), v, "a JSON string")
    return Summary(operation, props)


def summary_to_json(summary: Summary) -> dict[str, str]:
    """Serialize a summary with ``operation`` first (as Iceberg Java writes it)."""
    out = {"operation": str(summary.operation)}
    out.update(summary.properties)
    return out


# --------------------------------------------------------------------------- snapshot


@safe_repr
@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """The state of a table at some time (spec: Snapshots).

    ``sequence_number`` is 0 for v1 snapshots (Appendix E, "Reading v1 metadata for v2").
    ``manifests`` is only for v1 snapshots without a manifest list. ``first_row_id`` and
    ``added_rows`` are v3 row lineage (spec: "Snapshot Row IDs"); ``key_id`` names the
    encryption key of the manifest list's key metadata (v3). ``root_manifest`` is the one root
    manifest of an EXPERIMENTAL format-version 4 snapshot (single-file-commits proposal: "Every
    snapshot has exactly one Root Manifest"), which then has no manifest list.
    """

    snapshot_id: int
    timestamp_ms: int
    parent_snapshot_id: int | None = None
    sequence_number: int = 0
    manifest_list: str | None = None
    manifests: tuple[str, ...] | None = None
    summary: Summary | None = None
    schema_id: int | None = None
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None
    root_manifest: str | None = None

    def __post_init__(self) -> None:
        _check_long(self.snapshot_id, "snapshot_id")
        _check_long(self.timestamp_ms, "timestamp_ms")
        _check_long(self.parent_snapshot_id, "parent_snapshot_id", optional=True)
        _check_long(self.sequence_number, "sequence_number", non_negative=True)
        _check_long(self.schema_id, "schema_id", optional=True, bits=32)
        _check_long(self.first_row_id, "first_row_id", optional=True, non_negative=True)
        _check_long(self.added_rows, "added_rows", optional=True, non_negative=True)
        if self.manifests is not None:
            object.__setattr__(self, "manifests", tuple(self.manifests))
            if self.manifest_list is not None:
                raise ValidationError("a snapshot has either a manifest list or manifests, "
                                      "not both", field="manifests")
        if self.root_manifest is not None:
            if not isinstance(self.root_manifest, str) or not self.root_manifest:
                raise ValidationError("root_manifest must be a non-empty string",
                                      field="root_manifest", value=self.root_manifest)
            if self.manifest_list is not None or self.manifests is not None:
                raise ValidationError("a v4 snapshot has one root manifest and no manifest "
                                      "list (docs/v4-layout.md#root-pointer)",
                                      field="root_manifest", value=self.root_manifest)
        if self.first_row_id is not None and self.added_rows is None:
            raise ValidationError("added_rows is required when first_row_id is set",
                                  field="added_rows")
        if self.summary is not None and not isinstance(self.summary, Summary):
            raise ValidationError("summary must be a Summary", field="summary",
                                  value=self.summary)

    @property
    def operation(self) -> str | None:
        """The summary's operation (an ``Operation`` for spec operations), or None."""
        return None if self.summary is None else self.summary.operation

    def __str__(self) -> str:
        op = f" {self.operation}" if self.operation is not None else ""
        parent = f" parent={self.parent_snapshot_id}" if self.parent_snapshot_id is not None else ""
        return (f"snapshot {self.snapshot_id}{op} seq={self.sequence_number} "
                f"ts={self.timestamp_ms}{parent}")


def _snapshot_fast(obj: dict[str, Any]) -> Snapshot | None:
    """Build a well-formed snapshot quickly; None sends anything unusual to the checked path."""
    get = obj.get
    sid = get("snapshot-id")
    ts = get("timestamp-ms")
    parent = get("parent-snapshot-id")
    seq = get("sequence-number")
    manifest_list = get("manifest-list")
    schema_id = get("schema-id")
    first_row_id = get("first-row-id")
    added_rows = get("added-rows")
    key_id = get("key-id")
    if ROOT_MANIFEST_KEY in obj:
        return None
    if not (is_long(sid) and is_long(ts) and type(manifest_list) is str
            and (parent is None or is_long(parent))
            and (seq is None or (is_long(seq) and seq >= 0))
            and (schema_id is None or (type(schema_id) is int
                                       and INT_MIN <= schema_id <= INT_MAX))
            and (first_row_id is None or (is_long(first_row_id) and first_row_id >= 0
                                          and added_rows is not None))
            and (added_rows is None or (is_long(added_rows) and added_rows >= 0))
            and (key_id is None or type(key_id) is str)):
        return None
    raw_summary = get("summary")
    summary = None
    if raw_summary is not None:
        if type(raw_summary) is not dict or type(raw_summary.get("operation")) is not str:
            return None
        for value in raw_summary.values():
            if type(value) is not str:
                return None
        props = dict(raw_summary)
        summary = Summary._trusted(props.pop("operation"), props)
    snap = object.__new__(Snapshot)
    snap.__dict__.update(
        snapshot_id=sid, timestamp_ms=ts, parent_snapshot_id=parent,
        sequence_number=seq or 0, manifest_list=manifest_list, manifests=None,
        summary=summary, schema_id=schema_id, first_row_id=first_row_id,
        added_rows=added_rows, key_id=key_id, root_manifest=None,
    )
    return snap


def snapshot_from_json(obj: Any, *, format_version: int = 2, where: str = "") -> Snapshot:
    """Parse a snapshot object (Appendix C); defaults per Appendix E for older versions.

    ``sequence-number`` defaults to 0 (v1 snapshots, also in upgraded v2/v3 tables);
    ``manifest-list`` is used when present, else the v1 ``manifests`` list is required. A
    ``root-manifest`` (EXPERIMENTAL v4) replaces both and is refused below ``format_version`` 4.
    Otherwise the same reading rules apply to every ``format_version`` (as Iceberg Java).
    """
    if type(obj) is dict:
        fast = _snapshot_fast(obj)
        if fast is not None:
            return fast
    obj = as_object(obj, where, "a snapshot")
    snapshot_id = req_long(obj, "snapshot-id", where)
    parent = opt_long(obj, "parent-snapshot-id", where)
    seq = opt_long(obj, "sequence-number", where)
    if seq is not None and seq < 0:
        raise InvalidMetadata("sequence number must not be negative",
                              field=field_path(where, "sequence-number"), value=seq)
    timestamp = req_long(obj, "timestamp-ms", where)
    raw_summary = obj.get("summary")
    summary = None if raw_summary is None else summary_from_json(raw_summary,
                                                                 field_path(where, "summary"))
    manifest_list = opt_str(obj, "manifest-list", where)
    manifests: tuple[str, ...] | None = None
    root_manifest = opt_str(obj, ROOT_MANIFEST_KEY, where)
    if root_manifest is not None:
        # EXPERIMENTAL v4 (docs/v4-layout.md#root-pointer): one root, no manifest list.
        if format_version < 4:
            raise InvalidMetadata(f"only format version 4 snapshots have a root manifest "
                                  f"(this table is v{format_version})",
                                  field=field_path(where, ROOT_MANIFEST_KEY), value=root_manifest)
        for old in ("manifest-list", "manifests"):
            if obj.get(old) is not None:
                raise InvalidMetadata(f"a v4 snapshot has one root manifest and no {old}",
                                      field=field_path(where, old), value=obj[old])
        if not root_manifest:
            raise InvalidMetadata("a v4 snapshot's root manifest must be a location",
                                  field=field_path(where, ROOT_MANIFEST_KEY), value=root_manifest)
    elif manifest_list is None:
        if "manifests" not in obj:
            raise InvalidMetadata("missing required field (a snapshot needs manifest-list, or "
                                  "manifests in v1)", field=field_path(where, "manifest-list"))
        manifests = tuple(str_value(m, where, f"manifests[{i}]")
                          for i, m in enumerate(json_list(obj, "manifests", where)))
    schema_id = opt_int(obj, "schema-id", where)
    first_row_id = opt_long(obj, "first-row-id", where)
    added_rows = opt_long(obj, "added-rows", where)
    if first_row_id is not None:
        if first_row_id < 0:
            raise InvalidMetadata("first-row-id must not be negative",
                                  field=field_path(where, "first-row-id"), value=first_row_id)
        if added_rows is None:
            raise InvalidMetadata("missing required field (added-rows is required when "
                                  "first-row-id is set)", field=field_path(where, "added-rows"))
    if added_rows is not None and added_rows < 0:
        raise InvalidMetadata("added-rows must not be negative",
                              field=field_path(where, "added-rows"), value=added_rows)
    key_id = opt_str(obj, "key-id", where)
    return Snapshot(
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent,
        sequence_number=seq or 0,
        timestamp_ms=timestamp,
        manifest_list=manifest_list,
        manifests=manifests,
        summary=summary,
        schema_id=schema_id,
        first_row_id=first_row_id,
        added_rows=added_rows,
        key_id=key_id,
        root_manifest=root_manifest,
    )


def snapshot_to_json(snapshot: Snapshot, format_version: int = 2) -> dict[str, Any]:
    """Serialize a snapshot for a table of ``format_version`` (Appendix C and E).

    Field order follows Iceberg Java. ``sequence-number`` is not written for v1 (Appendix E)
    nor when it is 0 (a snapshot from before an upgrade, read back as 0).
    """
    out: dict[str, Any] = {}
    if format_version >= 2 and snapshot.sequence_number > 0:
        out["sequence-number"] = snapshot.sequence_number
    out["snapshot-id"] = snapshot.snapshot_id
    if snapshot.parent_snapshot_id is not None:
        out["parent-snapshot-id"] = snapshot.parent_snapshot_id
    out["timestamp-ms"] = snapshot.timestamp_ms
    if snapshot.summary is not None:
        out["summary"] = summary_to_json(snapshot.summary)
    if snapshot.root_manifest is not None:
        if format_version < 4:
            raise ValidationError(f"only format version 4 snapshots have a root manifest "
                                  f"(writing v{format_version})", field="root_manifest",
                                  value=snapshot.root_manifest)
        out[ROOT_MANIFEST_KEY] = snapshot.root_manifest
    elif snapshot.manifest_list is not None:
        out["manifest-list"] = snapshot.manifest_list
    else:
        out["manifests"] = list(snapshot.manifests or ())
    if snapshot.schema_id is not None:
        out["schema-id"] = snapshot.schema_id
    if snapshot.first_row_id is not None:
        out["first-row-id"] = snapshot.first_row_id
    if snapshot.added_rows is not None:
        out["added-rows"] = snapshot.added_rows
    if snapshot.key_id is not None:
        out["key-id"] = snapshot.key_id
    return out


# --------------------------------------------------------------------------- references


class SnapshotRefType(str, Enum):
    """Kind of a snapshot reference (spec: Snapshot References)."""

    BRANCH = "branch"
    TAG = "tag"

    def __str__(self) -> str:
        return self.value


@safe_repr
@dataclass(frozen=True)
class SnapshotRef:
    """A named branch or tag pointing at a snapshot, with its retention policy.

    Spec: "Snapshot References", "Snapshot Retention Policy". ``min_snapshots_to_keep`` and
    ``max_snapshot_age_ms`` apply to branches only; all three limits must be positive.
    """

    snapshot_id: int
    ref_type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    def __post_init__(self) -> None:
        _check_long(self.snapshot_id, "snapshot_id")
        try:
            kind = SnapshotRefType(self.ref_type)
        except ValueError:
            raise ValidationError("reference type must be 'branch' or 'tag'", field="type",
                                  value=self.ref_type) from None
        object.__setattr__(self, "ref_type", kind)
        _check_long(self.min_snapshots_to_keep, "min-snapshots-to-keep", optional=True,
                    positive=True, bits=32)
        _check_long(self.max_snapshot_age_ms, "max-snapshot-age-ms", optional=True,
                    positive=True)
        _check_long(self.max_ref_age_ms, "max-ref-age-ms", optional=True, positive=True)
        if kind is SnapshotRefType.TAG:
            if self.min_snapshots_to_keep is not None:
                raise ValidationError("tags do not support min-snapshots-to-keep",
                                      field="min-snapshots-to-keep",
                                      value=self.min_snapshots_to_keep)
            if self.max_snapshot_age_ms is not None:
                raise ValidationError("tags do not support max-snapshot-age-ms",
                                      field="max-snapshot-age-ms",
                                      value=self.max_snapshot_age_ms)

    @classmethod
    def branch(cls, snapshot_id: int, *, min_snapshots_to_keep: int | None = None,
               max_snapshot_age_ms: int | None = None,
               max_ref_age_ms: int | None = None) -> SnapshotRef:
        return cls(snapshot_id, SnapshotRefType.BRANCH, min_snapshots_to_keep,
                   max_snapshot_age_ms, max_ref_age_ms)

    @classmethod
    def tag(cls, snapshot_id: int, *, max_ref_age_ms: int | None = None) -> SnapshotRef:
        return cls(snapshot_id, SnapshotRefType.TAG, max_ref_age_ms=max_ref_age_ms)

    @property
    def is_branch(self) -> bool:
        return self.ref_type is SnapshotRefType.BRANCH

    @property
    def is_tag(self) -> bool:
        return self.ref_type is SnapshotRefType.TAG


def snapshot_ref_from_json(obj: Any, *, where: str = "") -> SnapshotRef:
    """Parse a snapshot reference object (Appendix C ``refs`` values); type is case-insensitive."""
    obj = as_object(obj, where, "a snapshot reference")
    snapshot_id = req_long(obj, "snapshot-id", where)
    kind = req_str(obj, "type", where)
    try:
        ref_type = SnapshotRefType(kind.lower())
    except ValueError:
        raise InvalidMetadata("reference type must be 'branch' or 'tag'",
                              field=field_path(where, "type"), value=kind) from None
    values = (
        opt_int(obj, "min-snapshots-to-keep", where),
        opt_long(obj, "max-snapshot-age-ms", where),
        opt_long(obj, "max-ref-age-ms", where),
    )
    try:
        return SnapshotRef(snapshot_id, ref_type, *values)
    except ValidationError as e:
        raise invalid(e, where, e.field or "type") from None


def snapshot_ref_to_json(ref: SnapshotRef) -> dict[str, Any]:
    """Serialize a snapshot reference (Appendix C)."""
    out: dict[str, Any] = {"snapshot-id": ref.snapshot_id, "type": ref.ref_type.value}
    if ref.min_snapshots_to_keep is not None:
        out["min-snapshots-to-keep"] = ref.min_snapshots_to_keep
    if ref.max_snapshot_age_ms is not None:
        out["max-snapshot-age-ms"] = ref.max_snapshot_age_ms
    if ref.max_ref_age_ms is not None:
        out["max-ref-age-ms"] = ref.max_ref_age_ms
    return out


# --------------------------------------------------------------------------- logs


@safe_repr
@dataclass(frozen=True)
class SnapshotLogEntry:
    """One change of the current snapshot (spec: Table Metadata Fields, ``snapshot-log``)."""

    timestamp_ms: int
    snapshot_id: int


def snapshot_log_entry_from_json(obj: Any, *, where: str = "") -> SnapshotLogEntry:
    if type(obj) is dict:
        ts = obj.get("timestamp-ms")
        sid = obj.get("snapshot-id")
        if is_long(ts) and is_long(sid):
            entry = object.__new__(SnapshotLogEntry)
            entry.__dict__.update(timestamp_ms=ts, snapshot_id=sid)
            return entry
    obj = as_object(obj, where, "a snapshot log entry")
    return SnapshotLogEntry(req_long(obj, "timestamp-ms", where),
                            req_long(obj, "snapshot-id", where))


def snapshot_log_entry_to_json(entry: SnapshotLogEntry) -> dict[str, Any]:
    return {"timestamp-ms": entry.timestamp_ms, "snapshot-id": entry.snapshot_id}


@safe_repr
@dataclass(frozen=True)
class MetadataLogEntry:
    """A previous metadata file of the table (spec: Table Metadata Fields, ``metadata-log``)."""

    timestamp_ms: int
    metadata_file: str


def metadata_log_entry_from_json(obj: Any, *, where: str = "") -> MetadataLogEntry:
    if type(obj) is dict:
        ts = obj.get("timestamp-ms")
        path = obj.get("metadata-file")
        if is_long(ts) and type(path) is str:
            entry = object.__new__(MetadataLogEntry)
            entry.__dict__.update(timestamp_ms=ts, metadata_file=path)
            return entry
    obj = as_object(obj, where, "a metadata log entry")
    return MetadataLogEntry(req_long(obj, "timestamp-ms", where),
                            req_str(obj, "metadata-file", where))


def metadata_log_entry_to_json(entry: MetadataLogEntry) -> dict[str, Any]:
    return {"timestamp-ms": entry.timestamp_ms, "metadata-file": entry.metadata_file}


# --------------------------------------------------------------------------- statistics


@safe_repr
@dataclass(frozen=True)
class BlobMetadata:
    """One statistic blob inside a Puffin statistics file (spec: Table Statistics)."""

    blob_type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "properties", _frozen_map(self.properties))

    def __hash__(self) -> int:
        return hash((self.blob_type, self.snapshot_id, self.sequence_number, self.fields,
                     frozenset(self.properties.items())))

    def __reduce__(self) -> tuple[Any, ...]:
        return (BlobMetadata, (self.blob_type, self.snapshot_id, self.sequence_number,
                               self.fields, dict(self.properties)))


def blob_metadata_from_json(obj: Any, *, where: str = "") -> BlobMetadata:
    obj = as_object(obj, where, "blob metadata")
    blob_type = req_str(obj, "type", where)
    snapshot_id = req_long(obj, "snapshot-id", where)
    seq = req_long(obj, "sequence-number", where)
    raw_fields = json_list(obj, "fields", where, required=True)
    fields = tuple(
        int_value(f, where, f"fields[{i}]")
        for i, f in enumerate(raw_fields)
    )
    return BlobMetadata(blob_type, snapshot_id, seq, fields, str_map(obj, "properties", where))


def blob_metadata_to_json(blob: BlobMetadata) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": blob.blob_type,
        "snapshot-id": blob.snapshot_id,
        "sequence-number": blob.sequence_number,
        "fields": list(blob.fields),
    }
    if blob.properties:
        out["properties"] = dict(blob.properties)
    return out


@safe_repr
@dataclass(frozen=True)
class StatisticsFile:
    """A Puffin table-statistics file registered in table metadata (spec: Table Statistics)."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...] = ()
    key_metadata: bytes | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "blob_metadata", tuple(self.blob_metadata))


def statistics_file_from_json(obj: Any, *, where: str = "") -> StatisticsFile:
    obj = as_object(obj, where, "a statistics file")
    snapshot_id = req_long(obj, "snapshot-id", where)
    path = req_str(obj, "statistics-path", where)
    size = req_long(obj, "file-size-in-bytes", where)
    footer = req_long(obj, "file-footer-size-in-bytes", where)
    key_metadata = _base64(obj, "key-metadata", where, required=False)
    blobs = tuple(
        blob_metadata_from_json(b, where=f"{field_path(where, 'blob-metadata')}[{i}]")
        for i, b in enumerate(json_list(obj, "blob-metadata", where, required=True))
    )
    return StatisticsFile(snapshot_id, path, size, footer, blobs, key_metadata)


def statistics_file_to_json(stats: StatisticsFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "snapshot-id": stats.snapshot_id,
        "statistics-path": stats.statistics_path,
        "file-size-in-bytes": stats.file_size_in_bytes,
        "file-footer-size-in-bytes": stats.file_footer_size_in_bytes,
    }
    if stats.key_metadata is not None:
        out["key-metadata"] = _b64text(stats.key_metadata)
    out["blob-metadata"] = [blob_metadata_to_json(b) for b in stats.blob_metadata]
    return out


@safe_repr
@dataclass(frozen=True)
class PartitionStatisticsFile:
    """A partition statistics file registered in table metadata (spec: Partition Statistics)."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int


def partition_statistics_file_from_json(obj: Any, *, where: str = "") -> PartitionStatisticsFile:
    obj = as_object(obj, where, "a partition statistics file")
    return PartitionStatisticsFile(
        req_long(obj, "snapshot-id", where),
        req_str(obj, "statistics-path", where),
        req_long(obj, "file-size-in-bytes", where),
    )


def partition_statistics_file_to_json(stats: PartitionStatisticsFile) -> dict[str, Any]:
    return {
        "snapshot-id": stats.snapshot_id,
        "statistics-path": stats.statistics_path,
        "file-size-in-bytes": stats.file_size_in_bytes,
    }


# --------------------------------------------------------------------------- encryption keys


@safe_repr
@dataclass(frozen=True)
class EncryptedKey:
    """A table encryption key, itself encrypted (spec: Encryption Keys, v3).

    ``encrypted_key_metadata`` holds the decoded bytes; JSON stores them base64-encoded.
    """

    key_id: str
    encrypted_key_metadata: bytes
    encrypted_by_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "encrypted_key_metadata", bytes(self.encrypted_key_metadata))
        object.__setattr__(self, "properties", _frozen_map(self.properties))

    def __hash__(self) -> int:
        return hash((self.key_id, self.encrypted_key_metadata, self.encrypted_by_id,
                     frozenset(self.properties.items())))

    def __reduce__(self) -> tuple[Any, ...]:
        return (EncryptedKey, (self.key_id, self.encrypted_key_metadata, self.encrypted_by_id,
                               dict(self.properties)))


def encrypted_key_from_json(obj: Any, *, where: str = "") -> EncryptedKey:
    """Parse an encryption key object. ``key-metadata`` (used by the spec's Appendix C example)
    is accepted when ``encrypted-key-metadata`` (the field table's name) is absent."""
    obj = as_object(obj, where, "an encryption key")
    key_id = req_str(obj, "key-id", where)
    name = ("key-metadata" if "encrypted-key-metadata" not in obj and "key-metadata" in obj
            else "encrypted-key-metadata")
    metadata = _base64(obj, name, where, required=True) or b""
    return EncryptedKey(key_id, metadata, opt_str(obj, "encrypted-by-id", where),
                        str_map(obj, "properties", where))


def encrypted_key_to_json(key: EncryptedKey) -> dict[str, Any]:
    out: dict[str, Any] = {
        "key-id": key.key_id,
        "encrypted-key-metadata": _b64text(key.encrypted_key_metadata),
    }
    if key.encrypted_by_id is not None:
        out["encrypted-by-id"] = key.encrypted_by_id
    if key.properties:
        out["properties"] = dict(key.properties)
    return out
