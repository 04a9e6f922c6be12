"""Table metadata changes: creating a table, update actions, requirements, applying a commit.

Spec sections: "Table Metadata", "Table Metadata Fields", "Snapshots", "Sequence Numbers",
"Row Lineage" (v3), "Snapshot References", "Table Statistics", "Partition Statistics",
"Reserved Field IDs", Appendix E (format upgrades). The update actions and requirements are named
and shaped like the Iceberg REST catalog's ``TableUpdate`` / ``TableRequirement`` objects
(``{"action": "add-snapshot", ...}``, ``{"type": "assert-create"}``).

Everything here is pure: :func:`apply_updates` takes the base metadata and a list of updates and
returns new immutable metadata, or raises before anything is built (nothing is half applied).

Decisions where the spec is silent follow Iceberg Java 1.10's ``TableMetadata.Builder``:

* ids: an added schema, partition spec or sort order equal to an existing one reuses its id
  (schemas: same fields and identifier fields; specs: same fields by source, transform and
  name; orders: same fields); otherwise the next id after the highest. ``-1`` in
  ``SetCurrentSchema`` / ``SetDefaultSpec`` / ``SetDefaultSortOrder`` names the id the last
  ``Add*`` of the same list resolved to (new or reused; Java fails when it was reused).
* ``last-updated-ms`` is the timestamp of the last added snapshot that was added or pointed at
  by a ref in this commit, else ``now_ms``; a move of ``main`` is logged at that time.
* removing snapshots also drops the refs that point at them (``main`` too, leaving no current
  snapshot), their statistics files, and the snapshot-log history up to the last removed entry;
  snapshots added and then replaced as ``main`` in the same commit leave the snapshot log.
* the previous metadata file (``metadata_location``) is logged with the base's
  ``last-updated-ms`` and the log keeps the newest ``write.metadata.previous-versions-max``
  entries (default 100, at least 1).

Stricter than Java (it accepts these): a v3 snapshot's ``first-row-id`` must equal the table's
``next-row-id`` (Java: at least it); a v2+ snapshot's sequence number must exceed
``last-sequence-number`` also without a parent; ``AssignUUID`` cannot change an existing UUID;
``SetProperties`` rejects reserved properties (``format-version``, ...; Java's clients never send
them); statistics must name an existing snapshot; set-default ids must exist; upgrades stop at
v3 (Java 1.10 already accepts its in-development v4).
"""

from __future__ import annotations

import time
import uuid as uuid_module
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

from icenb.errors import CommitConflict, InvalidMetadata, UnsupportedVersion, ValidationError
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    as_object,
    field_path,
    int_value,
    invalid,
    json_list,
    opt_int,
    opt_long,
    req_int,
    req_long,
    req_str,
    require,
    str_map,
    str_value,
    wrong_type,
)
from icenb.spec.partition_spec import (
    PARTITION_DATA_ID_START,
    PartitionField,
    PartitionSpec,
    check_source_column,
    partition_spec_from_json,
    partition_spec_to_json,
    validate_partition_spec,
)
from icenb.spec.properties import (
    COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_MIN_RETRY_WAIT_MS,
    COMMIT_NUM_RETRIES,
    COMMIT_TOTAL_RETRY_TIME_MS,
    METADATA_PREVIOUS_VERSIONS_MAX,
    METRICS_COLUMN_PREFIX,
    PARQUET_COMPRESSION,
    int_property,
    lenient_int_property,
)
from icenb.spec.schema import (
    MAX_FIELD_ID,
    Schema,
    reserved_field_id_error,
    schema_from_json,
    schema_to_json,
)
from icenb.spec.snapshot import (
    MAIN_BRANCH,
    MetadataLogEntry,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
    StatisticsFile,
    partition_statistics_file_from_json,
    partition_statistics_file_to_json,
    snapshot_from_json,
    snapshot_to_json,
    statistics_file_from_json,
    statistics_file_to_json,
)
from icenb.spec.sort_order import (
    UNSORTED,
    UNSORTED_ORDER_ID,
    SortField,
    SortOrder,
    sort_order_from_json,
    sort_order_to_json,
)
from icenb.spec.table_metadata import (
    MAX_UPGRADE_FORMAT_VERSION,
    MAX_WRITE_FORMAT_VERSION,
    TableMetadata,
)
from icenb.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
    min_format_version,
)

__all__ = [
    "COMMIT_PROPERTIES",
    "DEFAULT_FORMAT_VERSION",
    "PREVIOUS_VERSIONS_MAX",
    "PREVIOUS_VERSIONS_MAX_DEFAULT",
    "RESERVED_PROPERTIES",
    "AddPartitionSpec",
    "AddSchema",
    "AddSnapshot",
    "AddSortOrder",
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUUID",
    "AssignUUID",
    "RemovePartitionSpecs",
    "RemovePartitionStatistics",
    "RemoveProperties",
    "RemoveSchemas",
    "RemoveSnapshotRef",
    "RemoveSnapshots",
    "RemoveStatistics",
    "SetCurrentSchema",
    "SetDefaultSortOrder",
    "SetDefaultSpec",
    "SetLocation",
    "SetPartitionStatistics",
    "SetProperties",
    "SetSnapshotRef",
    "SetStatistics",
    "TableRequirement",
    "TableUpdate",
    "UpgradeFormatVersion",
    "apply_updates",
    "assign_fresh_ids",
    "check_requirements",
    "check_schema_compatibility",
    "new_table_metadata",
    "requirement_from_json",
    "requirement_to_json",
    "update_from_json",
    "update_to_json",
]

#: Format version of a new table when neither the argument nor ``format-version`` names one.
DEFAULT_FORMAT_VERSION = 2
#: Table properties that describe the table instead of configuring it; never stored.
RESERVED_PROPERTIES = frozenset({
    "format-version", "uuid", "snapshot-count", "current-snapshot-id",
    "current-snapshot-summary", "current-snapshot-timestamp-ms", "current-schema",
    "default-partition-spec", "default-sort-order",
})
#: How many previous metadata files the metadata log keeps.
PREVIOUS_VERSIONS_MAX = METADATA_PREVIOUS_VERSIONS_MAX
PREVIOUS_VERSIONS_MAX_DEFAULT = 100
#: Commit retry properties; a new table's values must be non-negative integers.
COMMIT_PROPERTIES = frozenset({
    COMMIT_NUM_RETRIES, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_TOTAL_RETRY_TIME_MS,
})
_METRICS_COLUMN_PREFIX = METRICS_COLUMN_PREFIX
_PARQUET_COMPRESSION = PARQUET_COMPRESSION
_INITIAL_SORT_ORDER_ID = 1
_LAST_ADDED = -1


def _now_ms() -> int:
    return int(time.time() * 1000)


# --------------------------------------------------------------------------- fresh ids


def assign_fresh_ids(schema: Schema, *, schema_id: int = 0,
                     last_column_id: int = 0) -> tuple[Schema, int]:
    """Renumber every field of ``schema`` from ``last_column_id + 1``; return it and the last id.

    The order is Iceberg Java's ``TypeUtil.assignFreshIds``: a struct's fields get ids first,
    then each field's type in order (list: element id; map: key id, value id; then their types).
    Names, types, docs and defaults are kept; identifier fields are matched by name.
    """
    counter = [last_column_id]

    def next_id() -> int:
        counter[0] += 1
        if counter[0] > MAX_FIELD_ID:
            raise reserved_field_id_error(counter[0], "last-column-id", "the next new field")
        return counter[0]

    fields = _fresh_fields(schema.fields, next_id)
    plain = Schema(*fields, schema_id=schema_id)
    ident: list[int] = []
    for fid in schema.identifier_field_ids:
        name = schema.column_name(fid)
        new_id = None if name is None else plain.find_field_id(name)
        if new_id is None:  # pragma: no cover - Schema() already checked the ids
            raise ValidationError("identifier field is not in the schema",
                                  field="identifier-field-ids", value=fid)
        ident.append(new_id)
    return Schema(*fields, schema_id=schema_id, identifier_field_ids=ident), counter[0]


def _fresh_fields(fields: tuple[NestedField, ...],
                  next_id: Callable[[], int]) -> list[NestedField]:
    ids = [next_id() for _ in fields]
    return [NestedField(new_id, f.name, _fresh_type(f.field_type, next_id), f.required, f.doc,
                        f.initial_default, f.write_default)
            for new_id, f in zip(ids, fields, strict=True)]


def _fresh_type(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    if isinstance(t, StructType):
        return StructType(*_fresh_fields(t.fields, next_id))
    if isinstance(t, ListType):
        element_id = next_id()
        return ListType(element_id, _fresh_type(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = next_id(), next_id()
        return MapType(key_id, _fresh_type(t.key_type, next_id), value_id,
                       _fresh_type(t.value_type, next_id), t.value_required)
    return t


def check_schema_compatibility(schema: Schema, format_version: int) -> None:
    """Raise ``ValidationError`` when ``schema`` uses what ``format_version`` does not allow.

    Spec: "Primitive Types" (v3 types: nanosecond timestamps, unknown, variant, geometry,
    geography), "Default values" (a non-null ``initial-default`` needs v3), "Reserved Field IDs".
    """
    for fid in sorted(schema.field_ids()):
        f = schema.field_by_id(fid)
        assert f is not None
        name = schema.column_name(fid) or str(fid)
        if fid > MAX_FIELD_ID or fid < 0:
            raise reserved_field_id_error(fid, name)
        if not isinstance(f.field_type, (StructType, ListType, MapType)):
            needed = min_format_version(f.field_type)
            if format_version < needed:
                raise ValidationError(f"type {f.field_type} is not supported until v{needed}",
                                      field=name, value=str(f.field_type))
        if f.initial_default is not None and format_version < 3:
            raise ValidationError("a non-null initial-default is not supported until v3 "
                                  "(spec: Default values)", field=name, value=f.initial_default)


# --------------------------------------------------------------------------- create table


def _strip_trailing_slash(location: str) -> str:
    out = location
    while out.endswith("/") and not out.endswith("://"):
        out = out[:-1]
    return out


def _check_location(location: Any) -> str:
    if not isinstance(location, str) or not location.strip():
        raise ValidationError("a table location must be a non-empty string", field="location",
                              value=location)
    return _strip_trailing_slash(location)


def _check_properties(properties: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in properties.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ValidationError("table properties must map strings to strings",
                                  field=str(k), value=v)
        out[k] = v
    return out


def new_table_metadata(
    schema: Schema,
    partition_spec: PartitionSpec | None = None,
    sort_order: SortOrder | None = None,
    location: str = "",
    properties: Mapping[str, str] | None = None,
    format_version: int | None = None,
    *,
    table_uuid: str | None = None,
    last_updated_ms: int | None = None,
) -> TableMetadata:
    """The metadata of a new table, as Iceberg Java's ``TableMetadata.newTableMetadata``.

    The schema gets fresh ids (:func:`assign_fresh_ids`, schema id 0); the spec and sort order,
    bound to ``schema``'s ids, are rebound by column name: spec 0 with partition field ids from
    1000, sort order 1 (0 when unsorted). ``format_version`` defaults to the
    ``format-version`` property, else 2 (both given must agree). Reserved properties are
    dropped; ``write.parquet.compression-codec`` defaults to ``zstd`` (as Java since 1.4).
    ``last-sequence-number`` is 0 and, in v3, ``next-row-id`` 0. Format version 4 is
    EXPERIMENTAL (single-file-commits proposal, docs/v4-layout.md): created like v3.
    """
    props = _check_properties(properties or {})
    version_prop = props.get("format-version")
    if version_prop is not None:
        prop_version = int_property(props, "format-version", DEFAULT_FORMAT_VERSION)
        if format_version is not None and format_version != prop_version:
            raise ValidationError(f"format_version {format_version} disagrees with the "
                                  "format-version property", field="format-version",
                                  value=version_prop)
        format_version = prop_version
    version = DEFAULT_FORMAT_VERSION if format_version is None else format_version
    if type(version) is not int or not 1 <= version <= MAX_WRITE_FORMAT_VERSION:
        raise UnsupportedVersion(f"cannot create a table of format version {version!r} (icenb "
                                 f"writes 1 to {MAX_WRITE_FORMAT_VERSION})",
                                 field="format-version", value=version)
    table_location = _check_location(location)
    persisted = {_PARQUET_COMPRESSION: "zstd"}
    persisted.update({k: v for k, v in props.items() if k not in RESERVED_PROPERTIES})
    _check_new_table_properties(persisted, schema)

    fresh, last_column_id = assign_fresh_ids(schema)
    check_schema_compatibility(fresh, version)
    spec = _rebind_spec(partition_spec or PartitionSpec(0, ()), schema, fresh)
    order = _rebind_sort_order(sort_order or UNSORTED, schema, fresh)
    return TableMetadata(
        format_version=version,
        table_uuid=_check_uuid(table_uuid) if table_uuid is not None else str(uuid_module.uuid4()),
        location=table_location,
        last_updated_ms=_now_ms() if last_updated_ms is None else last_updated_ms,
        last_column_id=last_column_id,
        schemas=(fresh,),
        current_schema_id=fresh.schema_id,
        partition_specs=(spec,),
        default_spec_id=spec.spec_id,
        last_partition_id=spec.last_assigned_field_id,
        sort_orders=(order,),
        default_sort_order_id=order.order_id,
        last_sequence_number=0,
        properties=persisted,
        next_row_id=0 if version >= 3 else None,
    )


def _check_new_table_properties(props: Mapping[str, str], schema: Schema) -> None:
    """Checks Java makes on new tables only: metrics columns exist, commit retries are ints."""
    for key in props:
        if key.startswith(_METRICS_COLUMN_PREFIX):
            column = key[len(_METRICS_COLUMN_PREFIX):]
            if schema.find_field_id(column) is None:
                raise ValidationError("metrics config names a column that is not in the schema",
                                      field=key, value=column)
    for key in sorted(COMMIT_PROPERTIES & props.keys()):
        if int_property(props, key, 0) < 0:
            raise ValidationError("commit property must be a non-negative integer", field=key,
                                  value=props[key])


def _rebound_ids(source_ids: tuple[int, ...], old: Schema, fresh: Schema,
                 label: str) -> tuple[int, ...]:
    out: list[int] = []
    for sid in source_ids:
        name = old.column_name(sid)
        new_id = None if name is None else fresh.find_field_id(name)
        if new_id is None:
            raise ValidationError("source column is not in the schema", field=label, value=sid)
        out.append(new_id)
    return tuple(out)


def _rebind_spec(spec: PartitionSpec, old: Schema, fresh: Schema) -> PartitionSpec:
    fields = tuple(
        PartitionField(_rebound_ids(f.source_ids, old, fresh, f.name),
                       PARTITION_DATA_ID_START + i, f.transform, f.name)
        for i, f in enumerate(spec.fields)
    )
    out = PartitionSpec(0, fields)
    out.validate(fresh)
    return out


def _rebind_sort_order(order: SortOrder, old: Schema, fresh: Schema) -> SortOrder:
    if order.is_unsorted:
        return UNSORTED
    fields = tuple(
        SortField(_rebound_ids(f.source_ids, old, fresh, f"sort field {i}"), f.transform,
                  f.direction, f.null_order)
        for i, f in enumerate(order.fields)
    )
    out = SortOrder(_INITIAL_SORT_ORDER_ID, fields)
    out.validate(fresh)
    return out


def _check_uuid(value: Any) -> str:
    try:
        return str(uuid_module.UUID(str(value))) if isinstance(value, str) else _bad_uuid(value)
    except ValueError:
        return _bad_uuid(value)


def _bad_uuid(value: Any) -> str:
    raise ValidationError("not a UUID", field="table-uuid", value=value)


# --------------------------------------------------------------------------- update actions


class _Frozen:
    """Shared behaviour of the update and requirement dataclasses."""

    __slots__ = ()
    action: str

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        raise NotImplementedError


@safe_repr
@dataclass(frozen=True)
class AssignUUID(_Frozen):
    """Give a table (a v1 table without one) its UUID."""

    uuid: str
    action = "assign-uuid"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "uuid": self.uuid}


@safe_repr
@dataclass(frozen=True)
class UpgradeFormatVersion(_Frozen):
    """Raise the table's format version (spec: Appendix E); never downward."""

    format_version: int
    action = "upgrade-format-version"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "format-version": self.format_version}


@safe_repr
@dataclass(frozen=True)
class AddSchema(_Frozen):
    """Add a schema (its ``schema_id`` is reassigned); ``last_column_id`` is deprecated."""

    schema: Schema
    last_column_id: int | None = None
    action = "add-schema"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "schema": schema_to_json(self.schema)}
        if self.last_column_id is not None:
            out["last-column-id"] = self.last_column_id
        return out


@dataclass(frozen=True)
class SetCurrentSchema(_Frozen):
    """Make a schema current; -1 is the schema the last ``AddSchema`` resolved to."""

    schema_id: int = _LAST_ADDED
    action = "set-current-schema"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "schema-id": self.schema_id}


@safe_repr
@dataclass(frozen=True)
class AddPartitionSpec(_Frozen):
    """Add a partition spec bound to the current schema (its ``spec_id`` is reassigned)."""

    spec: PartitionSpec
    action = "add-spec"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "spec": partition_spec_to_json(self.spec, format_version)}


@dataclass(frozen=True)
class SetDefaultSpec(_Frozen):
    """Make a partition spec the default; -1 is the last added one."""

    spec_id: int = _LAST_ADDED
    action = "set-default-spec"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "spec-id": self.spec_id}


@safe_repr
@dataclass(frozen=True)
class AddSortOrder(_Frozen):
    """Add a sort order bound to the current schema (its ``order_id`` is reassigned)."""

    sort_order: SortOrder
    action = "add-sort-order"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action,
                "sort-order": sort_order_to_json(self.sort_order, format_version)}


@dataclass(frozen=True)
class SetDefaultSortOrder(_Frozen):
    """Make a sort order the default; -1 is the last added one."""

    sort_order_id: int = _LAST_ADDED
    action = "set-default-sort-order"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "sort-order-id": self.sort_order_id}


@safe_repr
@dataclass(frozen=True)
class AddSnapshot(_Frozen):
    """Add a snapshot (no ref points at it until a ``SetSnapshotRef``)."""

    snapshot: Snapshot
    action = "add-snapshot"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "snapshot": snapshot_to_json(self.snapshot, 3)}


@safe_repr
@dataclass(frozen=True)
class SetSnapshotRef(_Frozen):
    """Create or move a branch or tag, with its retention settings (spec: Snapshot References)."""

    ref_name: str
    snapshot_id: int
    ref_type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None
    action = "set-snapshot-ref"

    def __post_init__(self) -> None:
        if not isinstance(self.ref_name, str) or not self.ref_name:
            raise ValidationError("a ref name must be a non-empty string", field="ref-name",
                                  value=self.ref_name)
        object.__setattr__(self, "ref_type", self.ref.ref_type)  # validates the ref

    @classmethod
    def of(cls, name: str, ref: SnapshotRef) -> SetSnapshotRef:
        """The update that sets ref ``name`` to ``ref``."""
        return cls(name, ref.snapshot_id, ref.ref_type, ref.min_snapshots_to_keep,
                   ref.max_snapshot_age_ms, ref.max_ref_age_ms)

    @property
    def ref(self) -> SnapshotRef:
        return SnapshotRef(self.snapshot_id, self.ref_type, self.min_snapshots_to_keep,
                           self.max_snapshot_age_ms, self.max_ref_age_ms)

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "ref-name": self.ref_name,
                               "snapshot-id": self.snapshot_id, "type": self.ref_type.value}
        if self.min_snapshots_to_keep is not None:
            out["min-snapshots-to-keep"] = self.min_snapshots_to_keep
        if self.max_snapshot_age_ms is not None:
            out["max-snapshot-age-ms"] = self.max_snapshot_age_ms
        if self.max_ref_age_ms is not None:
            out["max-ref-age-ms"] = self.max_ref_age_ms
        return out


def _id_tuple(values: Iterable[int], label: str) -> tuple[int, ...]:
    out = tuple(values)
    for v in out:
        if type(v) is not int:
            raise ValidationError("ids must be integers", field=label, value=v)
    return out


@safe_repr
@dataclass(frozen=True)
class RemoveSnapshots(_Frozen):
    """Remove snapshots (expiry); refs pointing at them go too (as Java)."""

    snapshot_ids: tuple[int, ...]
    action = "remove-snapshots"

    def __post_init__(self) -> None:
        object.__setattr__(self, "snapshot_ids", _id_tuple(self.snapshot_ids, "snapshot-ids"))

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "snapshot-ids": list(self.snapshot_ids)}


@safe_repr
@dataclass(frozen=True)
class RemoveSnapshotRef(_Frozen):
    """Remove a branch or tag; removing ``main`` leaves the table without a current snapshot."""

    ref_name: str
    action = "remove-snapshot-ref"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "ref-name": self.ref_name}


@safe_repr
@dataclass(frozen=True)
class SetLocation(_Frozen):
    """Move the table's base location (trailing slashes are dropped)."""

    location: str
    action = "set-location"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "location": self.location}


@safe_repr
@dataclass(frozen=True)
class SetProperties(_Frozen):
    """Set table properties (reserved ones are rejected)."""

    updates: Mapping[str, str]
    action = "set-properties"

    def __post_init__(self) -> None:
        object.__setattr__(self, "updates", MappingProxyType(_check_properties(self.updates)))

    def __hash__(self) -> int:
        return hash((self.action, tuple(sorted(self.updates.items()))))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SetProperties) and dict(self.updates) == dict(other.updates)

    def __reduce__(self) -> tuple[Any, ...]:
        return (SetProperties, (dict(self.updates),))

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "updates": dict(self.updates)}


@safe_repr
@dataclass(frozen=True)
class RemoveProperties(_Frozen):
    """Remove table properties (absent keys are ignored)."""

    removals: tuple[str, ...]
    action = "remove-properties"

    def __post_init__(self) -> None:
        removals: Any = self.removals
        if isinstance(removals, str):
            raise ValidationError("removals must be a list of names", field="removals",
                                  value=removals)
        object.__setattr__(self, "removals", tuple(self.removals))
        for k in self.removals:
            if not isinstance(k, str):
                raise ValidationError("property names must be strings", field="removals",
                                      value=k)

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "removals": list(self.removals)}


@safe_repr
@dataclass(frozen=True)
class SetStatistics(_Frozen):
    """Register (or replace) the statistics file of a snapshot (spec: Table Statistics)."""

    statistics: StatisticsFile
    action = "set-statistics"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "snapshot-id": self.statistics.snapshot_id,
                "statistics": statistics_file_to_json(self.statistics)}


@safe_repr
@dataclass(frozen=True)
class RemoveStatistics(_Frozen):
    """Unregister a snapshot's statistics file."""

    snapshot_id: int
    action = "remove-statistics"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "snapshot-id": self.snapshot_id}


@safe_repr
@dataclass(frozen=True)
class SetPartitionStatistics(_Frozen):
    """Register (or replace) a snapshot's partition statistics file (spec: Partition Statistics)."""

    partition_statistics: PartitionStatisticsFile
    action = "set-partition-statistics"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "partition-statistics":
                partition_statistics_file_to_json(self.partition_statistics)}


@safe_repr
@dataclass(frozen=True)
class RemovePartitionStatistics(_Frozen):
    """Unregister a snapshot's partition statistics file."""

    snapshot_id: int
    action = "remove-partition-statistics"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "snapshot-id": self.snapshot_id}


@safe_repr
@dataclass(frozen=True)
class RemovePartitionSpecs(_Frozen):
    """Remove partition specs no manifest uses (the caller checks that); not the default."""

    spec_ids: tuple[int, ...]
    action = "remove-partition-specs"

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec_ids", _id_tuple(self.spec_ids, "spec-ids"))

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "spec-ids": list(self.spec_ids)}


@safe_repr
@dataclass(frozen=True)
class RemoveSchemas(_Frozen):
    """Remove schemas no snapshot needs (the caller checks that); not the current one."""

    schema_ids: tuple[int, ...]
    action = "remove-schemas"

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema_ids", _id_tuple(self.schema_ids, "schema-ids"))

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"action": self.action, "schema-ids": list(self.schema_ids)}


TableUpdate: TypeAlias = (
    AssignUUID | UpgradeFormatVersion | AddSchema | SetCurrentSchema | AddPartitionSpec
    | SetDefaultSpec | AddSortOrder | SetDefaultSortOrder | AddSnapshot | SetSnapshotRef
    | RemoveSnapshots | RemoveSnapshotRef | SetLocation | SetProperties | RemoveProperties
    | SetStatistics | RemoveStatistics | SetPartitionStatistics | RemovePartitionStatistics
    | RemovePartitionSpecs | RemoveSchemas
)


# --------------------------------------------------------------------------- requirements


@dataclass(frozen=True)
class AssertCreate(_Frozen):
    """The table must not exist yet."""

    action = "assert-create"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action}


@safe_repr
@dataclass(frozen=True)
class AssertTableUUID(_Frozen):
    """The table's UUID must be this one (spec: table-uuid)."""

    uuid: str
    action = "assert-table-uuid"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action, "uuid": self.uuid}


@safe_repr
@dataclass(frozen=True)
class AssertRefSnapshotId(_Frozen):
    """Ref ``ref`` must point at ``snapshot_id``; None: the ref must not exist."""

    ref: str
    snapshot_id: int | None
    action = "assert-ref-snapshot-id"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action, "ref": self.ref, "snapshot-id": self.snapshot_id}


@safe_repr
@dataclass(frozen=True)
class AssertLastAssignedFieldId(_Frozen):
    """``last-column-id`` must be unchanged (no concurrent schema change added columns)."""

    last_assigned_field_id: int
    action = "assert-last-assigned-field-id"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action, "last-assigned-field-id": self.last_assigned_field_id}


@safe_repr
@dataclass(frozen=True)
class AssertCurrentSchemaId(_Frozen):
    """The current schema must be unchanged."""

    current_schema_id: int
    action = "assert-current-schema-id"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action, "current-schema-id": self.current_schema_id}


@safe_repr
@dataclass(frozen=True)
class AssertLastAssignedPartitionId(_Frozen):
    """``last-partition-id`` must be unchanged."""

    last_assigned_partition_id: int
    action = "assert-last-assigned-partition-id"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action,
                "last-assigned-partition-id": self.last_assigned_partition_id}


@safe_repr
@dataclass(frozen=True)
class AssertDefaultSpecId(_Frozen):
    """The default partition spec must be unchanged."""

    default_spec_id: int
    action = "assert-default-spec-id"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action, "default-spec-id": self.default_spec_id}


@safe_repr
@dataclass(frozen=True)
class AssertDefaultSortOrderId(_Frozen):
    """The default sort order must be unchanged."""

    default_sort_order_id: int
    action = "assert-default-sort-order-id"

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        return {"type": self.action, "default-sort-order-id": self.default_sort_order_id}


TableRequirement: TypeAlias = (
    AssertCreate | AssertTableUUID | AssertRefSnapshotId | AssertLastAssignedFieldId
    | AssertCurrentSchemaId | AssertLastAssignedPartitionId | AssertDefaultSpecId
    | AssertDefaultSortOrderId
)


def check_requirements(base: TableMetadata | None,
                       requirements: Iterable[TableRequirement]) -> None:
    """Raise ``CommitConflict`` naming the first requirement ``base`` does not meet.

    ``base`` is None when the table does not exist: only ``AssertCreate`` and the two
    last-assigned-id assertions (as in Java) hold then.
    """
    for r in requirements:
        _check_requirement(base, r)


def _conflict(message: str, r: TableRequirement, expected: Any, actual: Any) -> CommitConflict:
    return CommitConflict(f"requirement failed: {message} (expected {expected!r}, found "
                          f"{actual!r})", field=r.action, value=actual)


def _check_requirement(base: TableMetadata | None, r: TableRequirement) -> None:
    if isinstance(r, AssertCreate):
        if base is not None:
            raise _conflict("the table already exists", r, None, base.table_uuid)
        return
    if isinstance(r, AssertLastAssignedFieldId):
        if base is not None and base.last_column_id != r.last_assigned_field_id:
            raise _conflict("last assigned field id changed", r, r.last_assigned_field_id,
                            base.last_column_id)
        return
    if isinstance(r, AssertLastAssignedPartitionId):
        if base is not None and base.last_partition_id != r.last_assigned_partition_id:
            raise _conflict("last assigned partition id changed", r,
                            r.last_assigned_partition_id, base.last_partition_id)
        return
    if base is None:
        raise CommitConflict("requirement failed: the table does not exist", field=r.action)
    if isinstance(r, AssertTableUUID):
        if (base.table_uuid or "").lower() != r.uuid.lower():
            raise _conflict("table UUID does not match", r, r.uuid, base.table_uuid)
    elif isinstance(r, AssertRefSnapshotId):
        ref = base.refs.get(r.ref)
        if ref is None and r.ref == MAIN_BRANCH and base.current_snapshot_id is not None:
            ref = SnapshotRef.branch(base.current_snapshot_id)
        actual = None if ref is None else ref.snapshot_id
        if actual != r.snapshot_id:
            what = ("was created concurrently" if r.snapshot_id is None else
                    "was deleted concurrently" if actual is None else "has changed")
            raise _conflict(f"ref {r.ref!r} {what}", r, r.snapshot_id, actual)
    elif isinstance(r, AssertCurrentSchemaId):
        if base.current_schema_id != r.current_schema_id:
            raise _conflict("current schema changed", r, r.current_schema_id,
                            base.current_schema_id)
    elif isinstance(r, AssertDefaultSpecId):
        if base.default_spec_id != r.default_spec_id:
            raise _conflict("default partition spec changed", r, r.default_spec_id,
                            base.default_spec_id)
    elif isinstance(r, AssertDefaultSortOrderId):
        if base.default_sort_order_id != r.default_sort_order_id:
            raise _conflict("default sort order changed", r, r.default_sort_order_id,
                            base.default_sort_order_id)
    else:
        raise ValidationError("not a table requirement", field="requirements", value=r)


# --------------------------------------------------------------------------- JSON


def update_to_json(update: TableUpdate, format_version: int = 2) -> dict[str, Any]:
    """The REST ``TableUpdate`` object of ``update`` (``{"action": ..., ...}``).

    ``format_version`` picks how specs and sort orders write ``source-id(s)`` (Appendix E).
    """
    if not isinstance(update, _UPDATE_TYPES):
        raise ValidationError("not a table update", field="updates", value=update)
    return update.to_json(format_version)


def requirement_to_json(requirement: TableRequirement) -> dict[str, Any]:
    """The REST ``TableRequirement`` object of ``requirement`` (``{"type": ..., ...}``)."""
    if not isinstance(requirement, _REQUIREMENT_TYPES):
        raise ValidationError("not a table requirement", field="requirements", value=requirement)
    return requirement.to_json()


def _ids(obj: Mapping[str, Any], key: str, where: str, bits: Any) -> tuple[int, ...]:
    at = field_path(where, key)
    return tuple(int_value(v, at, str(i), bits) for i, v in enumerate(json_list(obj, key, where,
                                                                                  True)))


def _ref_type(obj: Mapping[str, Any], where: str) -> SnapshotRefType:
    text = req_str(obj, "type", where)
    try:
        return SnapshotRefType(text.lower())
    except ValueError:
        raise wrong_type(where, "type", text, "'branch' or 'tag'") from None


def _wrap(build: Callable[[], Any], where: str) -> Any:
    """Constructor errors of a parsed update become ``InvalidMetadata`` naming the JSON path."""
    try:
        return build()
    except InvalidMetadata:
        raise
    except ValidationError as e:
        raise invalid(e, where) from None


def update_from_json(obj: Any, *, where: str = "update") -> TableUpdate:
    """Read a REST ``TableUpdate`` object; ``InvalidMetadata`` names a bad field.

    Accepts the legacy ``updated`` / ``removed`` keys of set/remove-properties (as Java).
    """
    obj = as_object(obj, where, "a table update")
    action = req_str(obj, "action", where).lower()
    w = where
    if action == "assign-uuid":
        return AssignUUID(req_str(obj, "uuid", w))
    if action == "upgrade-format-version":
        return UpgradeFormatVersion(req_int(obj, "format-version", w))
    if action == "add-schema":
        schema = schema_from_json(require(obj, "schema", w), where=field_path(w, "schema"))
        return AddSchema(schema, opt_int(obj, "last-column-id", w))
    if action == "set-current-schema":
        return SetCurrentSchema(req_int(obj, "schema-id", w))
    if action == "add-spec":
        spec = partition_spec_from_json(require(obj, "spec", w), format_version=3,
                                        where=field_path(w, "spec"))
        return AddPartitionSpec(spec)
    if action == "set-default-spec":
        return SetDefaultSpec(req_int(obj, "spec-id", w))
    if action == "add-sort-order":
        order = sort_order_from_json(require(obj, "sort-order", w), format_version=3,
                                     where=field_path(w, "sort-order"))
        return AddSortOrder(order)
    if action == "set-default-sort-order":
        return SetDefaultSortOrder(req_int(obj, "sort-order-id", w))
    if action == "add-snapshot":
        snap = snapshot_from_json(require(obj, "snapshot", w), format_version=3,
                                  where=field_path(w, "snapshot"))
        return AddSnapshot(snap)
    if action == "set-snapshot-ref":
        name = req_str(obj, "ref-name", w)
        kind = _ref_type(obj, w)
        sid = req_long(obj, "snapshot-id", w)
        keep = opt_int(obj, "min-snapshots-to-keep", w)
        age = opt_long(obj, "max-snapshot-age-ms", w)
        ref_age = opt_long(obj, "max-ref-age-ms", w)
        result: SetSnapshotRef = _wrap(
            lambda: SetSnapshotRef(name, sid, kind, keep, age, ref_age), w)
        return result
    if action == "remove-snapshots":
        return RemoveSnapshots(_ids(obj, "snapshot-ids", w, 64))
    if action == "remove-snapshot-ref":
        return RemoveSnapshotRef(req_str(obj, "ref-name", w))
    if action == "set-location":
        return SetLocation(req_str(obj, "location", w))
    if action == "set-properties":
        key = "updates" if "updates" in obj or "updated" not in obj else "updated"
        return SetProperties(str_map(obj, key, w, required=True))
    if action == "remove-properties":
        key = "removals" if "removals" in obj or "removed" not in obj else "removed"
        at = field_path(w, key)
        return RemoveProperties(tuple(str_value(v, at, str(i))
                                      for i, v in enumerate(json_list(obj, key, w, True))))
    if action == "set-statistics":
        stats = statistics_file_from_json(require(obj, "statistics", w),
                                          where=field_path(w, "statistics"))
        stats_sid = opt_long(obj, "snapshot-id", w)
        if stats_sid is not None and stats_sid != stats.snapshot_id:
            raise wrong_type(w, "snapshot-id", stats_sid, "the statistics file's snapshot-id")
        return SetStatistics(stats)
    if action == "remove-statistics":
        return RemoveStatistics(req_long(obj, "snapshot-id", w))
    if action == "set-partition-statistics":
        pstats = partition_statistics_file_from_json(
            require(obj, "partition-statistics", w), where=field_path(w, "partition-statistics"))
        return SetPartitionStatistics(pstats)
    if action == "remove-partition-statistics":
        return RemovePartitionStatistics(req_long(obj, "snapshot-id", w))
    if action == "remove-partition-specs":
        return RemovePartitionSpecs(_ids(obj, "spec-ids", w, 32))
    if action == "remove-schemas":
        return RemoveSchemas(_ids(obj, "schema-ids", w, 32))
    raise wrong_type(w, "action", action, "a known table update action")


def requirement_from_json(obj: Any, *, where: str = "requirement") -> TableRequirement:
    """Read a REST ``TableRequirement`` object; ``InvalidMetadata`` names a bad field."""
    obj = as_object(obj, where, "a table requirement")
    kind = req_str(obj, "type", where).lower()
    w = where
    if kind == "assert-create":
        return AssertCreate()
    if kind == "assert-table-uuid":
        return AssertTableUUID(req_str(obj, "uuid", w))
    if kind == "assert-ref-snapshot-id":
        return AssertRefSnapshotId(req_str(obj, "ref", w), opt_long(obj, "snapshot-id", w))
    if kind == "assert-last-assigned-field-id":
        return AssertLastAssignedFieldId(req_int(obj, "last-assigned-field-id", w))
    if kind == "assert-current-schema-id":
        return AssertCurrentSchemaId(req_int(obj, "current-schema-id", w))
    if kind == "assert-last-assigned-partition-id":
        return AssertLastAssignedPartitionId(req_int(obj, "last-assigned-partition-id", w))
    if kind == "assert-default-spec-id":
        return AssertDefaultSpecId(req_int(obj, "default-spec-id", w))
    if kind == "assert-default-sort-order-id":
        return AssertDefaultSortOrderId(req_int(obj, "default-sort-order-id", w))
    raise wrong_type(w, "type", kind, "a known table requirement type")


_UPDATE_TYPES: tuple[type, ...] = (
    AssignUUID, UpgradeFormatVersion, AddSchema, SetCurrentSchema, AddPartitionSpec,
    SetDefaultSpec, AddSortOrder, SetDefaultSortOrder, AddSnapshot, SetSnapshotRef,
    RemoveSnapshots, RemoveSnapshotRef, SetLocation, SetProperties, RemoveProperties,
    SetStatistics, RemoveStatistics, SetPartitionStatistics, RemovePartitionStatistics,
    RemovePartitionSpecs, RemoveSchemas,
)
_REQUIREMENT_TYPES: tuple[type, ...] = (
    AssertCreate, AssertTableUUID, AssertRefSnapshotId, AssertLastAssignedFieldId,
    AssertCurrentSchemaId, AssertLastAssignedPartitionId, AssertDefaultSpecId,
    AssertDefaultSortOrderId,
)


# --------------------------------------------------------------------------- applying


@safe_repr
@dataclass
class _Builder:
    """Mutable working copy of table metadata while updates are applied (never escapes)."""

    base: TableMetadata
    now_ms: int
    format_version: int = 0
    table_uuid: str | None = None
    location: str = ""
    last_sequence_number: int = 0
    last_column_id: int = 0
    schemas: list[Schema] = field(default_factory=list)
    current_schema_id: int = 0
    specs: list[PartitionSpec] = field(default_factory=list)
    default_spec_id: int = 0
    last_partition_id: int = 0
    sort_orders: list[SortOrder] = field(default_factory=list)
    default_sort_order_id: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    current_snapshot_id: int | None = None
    snapshots: list[Snapshot] = field(default_factory=list)
    snapshots_by_id: dict[int, Snapshot] = field(default_factory=dict)
    refs: dict[str, SnapshotRef] = field(default_factory=dict)
    statistics: dict[int, StatisticsFile] = field(default_factory=dict)
    partition_statistics: dict[int, PartitionStatisticsFile] = field(default_factory=dict)
    snapshot_log: list[SnapshotLogEntry] = field(default_factory=list)
    next_row_id: int | None = None
    last_updated_ms: int | None = None
    changed: bool = False
    added_snapshot_ids: list[int] = field(default_factory=list)
    main_moves: list[int] = field(default_factory=list)
    removed_snapshots: bool = False
    last_added_schema_id: int | None = None
    last_added_spec_id: int | None = None
    last_added_order_id: int | None = None

    @classmethod
    def start(cls, base: TableMetadata, now_ms: int) -> _Builder:
        snaps = list(base.snapshots)
        return cls(
            base=base, now_ms=now_ms, format_version=base.format_version,
            table_uuid=base.table_uuid, location=base.location,
            last_sequence_number=base.last_sequence_number, last_column_id=base.last_column_id,
            schemas=list(base.schemas), current_schema_id=base.current_schema_id,
            specs=list(base.partition_specs), default_spec_id=base.default_spec_id,
            last_partition_id=base.last_partition_id, sort_orders=list(base.sort_orders),
            default_sort_order_id=base.default_sort_order_id, properties=dict(base.properties),
            current_snapshot_id=base.current_snapshot_id, snapshots=snaps,
            snapshots_by_id={s.snapshot_id: s for s in snaps}, refs=dict(base.refs),
            statistics={s.snapshot_id: s for s in base.statistics},
            partition_statistics={s.snapshot_id: s for s in base.partition_statistics},
            snapshot_log=list(base.snapshot_log),
            next_row_id=base.next_row_id if base.next_row_id is not None else 0,
        )

    # -- helpers ----------------------------------------------------------------------
    def schema_by_id(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    @property
    def current_schema(self) -> Schema:
        found = self.schema_by_id(self.current_schema_id)
        assert found is not None
        return found

    # -- actions ----------------------------------------------------------------------
    def apply(self, u: TableUpdate) -> None:
        handler = _HANDLERS.get(type(u))
        if handler is None:
            raise ValidationError("not a table update", field="updates", value=u)
        handler(self, u)

    def assign_uuid(self, u: AssignUUID) -> None:
        new = _check_uuid(u.uuid)
        if self.table_uuid is not None and self.table_uuid.lower() == new.lower():
            return
        if self.table_uuid is not None:
            raise ValidationError("a table's UUID cannot change (spec: table-uuid)",
                                  field="uuid", value=u.uuid)
        self.table_uuid = u.uuid
        self.changed = True

    def upgrade_format_version(self, u: UpgradeFormatVersion) -> None:
        v = u.format_version
        if type(v) is not int or (v > MAX_UPGRADE_FORMAT_VERSION and v != self.format_version):
            raise UnsupportedVersion(f"cannot upgrade to format version {v!r} (icenb upgrades "
                                     f"to at most {MAX_UPGRADE_FORMAT_VERSION})",
                                     field="format-version", value=v)
        if v < self.format_version:
            raise ValidationError(f"cannot downgrade a v{self.format_version} table "
                                  "(spec: Appendix E)", field="format-version", value=v)
        if v == self.format_version:
            return
        self.format_version = v
        self.changed = True

    def add_schema(self, u: AddSchema) -> None:
        schema = u.schema
        new_last = max(self.last_column_id, schema.highest_field_id)
        if u.last_column_id is not None and u.last_column_id < self.last_column_id:
            raise ValidationError(f"last-column-id cannot go below {self.last_column_id}",
                                  field="last-column-id", value=u.last_column_id)
        if u.last_column_id is not None:
            new_last = max(new_last, u.last_column_id)
        check_schema_compatibility(schema, self.format_version)
        new_id = self.current_schema_id
        found: Schema | None = None
        for s in self.schemas:
            if s.same_schema(schema):
                found = s
                break
            if s.schema_id >= new_id:
                new_id = s.schema_id + 1
        self.last_added_schema_id = found.schema_id if found is not None else new_id
        if found is not None and new_last == self.last_column_id:
            return
        self.last_column_id = new_last
        if found is None:
            self.schemas.append(Schema(*schema.fields, schema_id=new_id,
                                       identifier_field_ids=schema.identifier_field_ids))
        self.changed = True

    def set_current_schema(self, u: SetCurrentSchema) -> None:
        sid = u.schema_id
        if sid == _LAST_ADDED:
            if self.last_added_schema_id is None:
                raise ValidationError("cannot set the last added schema: no schema was added",
                                      field="schema-id", value=sid)
            sid = self.last_added_schema_id
        if self.schema_by_id(sid) is None:
            raise ValidationError("no schema with this id", field="schema-id", value=sid)
        if sid != self.current_schema_id:
            self.current_schema_id = sid
            self.changed = True

    def add_spec(self, u: AddPartitionSpec) -> None:
        spec = u.spec
        new_id = 0
        for s in self.specs:
            if s.compatible_with(spec):
                self.last_added_spec_id = s.spec_id
                return
            if s.spec_id >= new_id:
                new_id = s.spec_id + 1
        known = frozenset(f.field_id for s in self.specs for f in s.fields)
        validate_partition_spec(spec, self.current_schema, case_sensitive=True, carried=known)
        if self.format_version == 1:
            for i, f in enumerate(spec.fields):
                if f.field_id != PARTITION_DATA_ID_START + i:
                    raise ValidationError("v1 partition specs need sequential field ids from "
                                          "1000 (spec: Partition Evolution)", field=f.name,
                                          value=f.field_id)
        self.specs.append(PartitionSpec(new_id, spec.fields))
        self.last_partition_id = max(self.last_partition_id, spec.last_assigned_field_id)
        self.last_added_spec_id = new_id
        self.changed = True

    def set_default_spec(self, u: SetDefaultSpec) -> None:
        sid = u.spec_id
        if sid == _LAST_ADDED:
            if self.last_added_spec_id is None:
                raise ValidationError("cannot set the last added spec: no spec was added",
                                      field="spec-id", value=sid)
            sid = self.last_added_spec_id
        if not any(s.spec_id == sid for s in self.specs):
            raise ValidationError("no partition spec with this id", field="spec-id", value=sid)
        if sid != self.default_spec_id:
            self.default_spec_id = sid
            self.changed = True

    def add_sort_order(self, u: AddSortOrder) -> None:
        order = u.sort_order
        if order.is_unsorted:
            self.last_added_order_id = UNSORTED_ORDER_ID
            if not any(o.order_id == UNSORTED_ORDER_ID for o in self.sort_orders):
                self.sort_orders.append(UNSORTED)
                self.changed = True
            return
        new_id = _INITIAL_SORT_ORDER_ID
        for o in self.sort_orders:
            if o.same_order(order):
                self.last_added_order_id = o.order_id
                return
            if o.order_id >= new_id:
                new_id = o.order_id + 1
        order.validate(self.current_schema)
        self.sort_orders.append(SortOrder(new_id, order.fields))
        self.last_added_order_id = new_id
        self.changed = True

    def set_default_sort_order(self, u: SetDefaultSortOrder) -> None:
        oid = u.sort_order_id
        if oid == _LAST_ADDED:
            if self.last_added_order_id is None:
                raise ValidationError("cannot set the last added sort order: none was added",
                                      field="sort-order-id", value=oid)
            oid = self.last_added_order_id
        if not any(o.order_id == oid for o in self.sort_orders):
            raise ValidationError("no sort order with this id", field="sort-order-id", value=oid)
        if oid != self.default_sort_order_id:
            self.default_sort_order_id = oid
            self.changed = True

    def add_snapshot(self, u: AddSnapshot) -> None:
        snap = u.snapshot
        sid = snap.snapshot_id
        if sid in self.snapshots_by_id:
            raise ValidationError("a snapshot with this id already exists",
                                  field="snapshot.snapshot-id", value=sid)
        if self.format_version == 1:
            if snap.sequence_number != 0:
                raise ValidationError("v1 snapshots have no sequence number (spec: Sequence "
                                      "Numbers)", field="snapshot.sequence-number",
                                      value=snap.sequence_number)
        elif snap.sequence_number <= self.last_sequence_number:
            raise ValidationError(
                f"a new snapshot's sequence number must be greater than last-sequence-number "
                f"{self.last_sequence_number} (spec: Sequence Numbers)",
                field="snapshot.sequence-number", value=snap.sequence_number)
        if snap.schema_id is not None and self.schema_by_id(snap.schema_id) is None:
            raise ValidationError("the snapshot's schema is not in the table",
                                  field="snapshot.schema-id", value=snap.schema_id)
        if self.format_version >= 3:
            if snap.first_row_id is None or snap.added_rows is None:
                raise ValidationError("v3 snapshots need first-row-id and added-rows (spec: "
                                      "Row Lineage)", field="snapshot.first-row-id")
            if snap.first_row_id != self.next_row_id:
                raise ValidationError(
                    f"a new snapshot's first-row-id must be the table's next-row-id "
                    f"{self.next_row_id} (spec: Row Lineage)", field="snapshot.first-row-id",
                    value=snap.first_row_id)
            assert self.next_row_id is not None
            self.next_row_id += snap.added_rows
        elif snap.first_row_id is not None:
            raise ValidationError("first-row-id is a v3 field (spec: Row Lineage)",
                                  field="snapshot.first-row-id", value=snap.first_row_id)
        self.snapshots.append(snap)
        self.snapshots_by_id[sid] = snap
        self.last_sequence_number = max(self.last_sequence_number, snap.sequence_number)
        self.last_updated_ms = snap.timestamp_ms
        self.added_snapshot_ids.append(sid)
        self.changed = True

    def set_snapshot_ref(self, u: SetSnapshotRef) -> None:
        ref = u.ref
        if self.refs.get(u.ref_name) == ref:
            return
        snap = self.snapshots_by_id.get(ref.snapshot_id)
        if snap is None:
            raise ValidationError(f"cannot point {u.ref_name!r} at an unknown snapshot",
                                  field="snapshot-id", value=ref.snapshot_id)
        if ref.snapshot_id in self.added_snapshot_ids:
            self.last_updated_ms = snap.timestamp_ms
        if u.ref_name == MAIN_BRANCH:
            if not ref.is_branch:
                raise ValidationError("main must be a branch (spec: Snapshot References)",
                                      field="type", value=ref.ref_type.value)
            self.current_snapshot_id = ref.snapshot_id
            if self.last_updated_ms is None:
                self.last_updated_ms = self.now_ms
            self.snapshot_log.append(SnapshotLogEntry(self.last_updated_ms, ref.snapshot_id))
            self.main_moves.append(ref.snapshot_id)
        self.refs[u.ref_name] = ref
        self.changed = True

    def remove_snapshot_ref(self, u: RemoveSnapshotRef) -> None:
        self._remove_ref(u.ref_name)

    def _remove_ref(self, name: str) -> None:
        if name == MAIN_BRANCH and self.current_snapshot_id is not None:
            self.current_snapshot_id = None
            self.changed = True
        if self.refs.pop(name, None) is not None:
            self.changed = True

    def remove_snapshots(self, u: RemoveSnapshots) -> None:
        ids = set(u.snapshot_ids) & self.snapshots_by_id.keys()
        if not ids:
            return
        self.snapshots = [s for s in self.snapshots if s.snapshot_id not in ids]
        for sid in ids:
            del self.snapshots_by_id[sid]
            self.statistics.pop(sid, None)
            self.partition_statistics.pop(sid, None)
        for name in [n for n, r in self.refs.items() if r.snapshot_id not in self.snapshots_by_id]:
            self._remove_ref(name)
        self.removed_snapshots = True
        self.changed = True

    def set_location(self, u: SetLocation) -> None:
        new = _check_location(u.location)
        if new != self.location:
            self.location = new
            self.changed = True

    def set_properties(self, u: SetProperties) -> None:
        reserved = sorted(RESERVED_PROPERTIES & u.updates.keys())
        if reserved:
            raise ValidationError("reserved table property (use the matching update instead, "
                                  "e.g. UpgradeFormatVersion)", field=reserved[0],
                                  value=u.updates[reserved[0]])
        if u.updates:
            self.properties.update(u.updates)
            self.changed = True

    def remove_properties(self, u: RemoveProperties) -> None:
        if u.removals:
            for k in u.removals:
                self.properties.pop(k, None)
            self.changed = True

    def set_statistics(self, u: SetStatistics) -> None:
        sid = u.statistics.snapshot_id
        if sid not in self.snapshots_by_id:
            raise ValidationError("statistics for an unknown snapshot",
                                  field="statistics.snapshot-id", value=sid)
        self.statistics[sid] = u.statistics
        self.changed = True

    def remove_statistics(self, u: RemoveStatistics) -> None:
        if self.statistics.pop(u.snapshot_id, None) is not None:
            self.changed = True

    def set_partition_statistics(self, u: SetPartitionStatistics) -> None:
        sid = u.partition_statistics.snapshot_id
        if sid not in self.snapshots_by_id:
            raise ValidationError("partition statistics for an unknown snapshot",
                                  field="partition-statistics.snapshot-id", value=sid)
        self.partition_statistics[sid] = u.partition_statistics
        self.changed = True

    def remove_partition_statistics(self, u: RemovePartitionStatistics) -> None:
        if self.partition_statistics.pop(u.snapshot_id, None) is not None:
            self.changed = True

    def remove_partition_specs(self, u: RemovePartitionSpecs) -> None:
        ids = set(u.spec_ids)
        if self.default_spec_id in ids:
            raise ValidationError("cannot remove the default partition spec", field="spec-ids",
                                  value=self.default_spec_id)
        if ids:
            self.specs = [s for s in self.specs if s.spec_id not in ids]
            self.changed = True

    def remove_schemas(self, u: RemoveSchemas) -> None:
        ids = set(u.schema_ids)
        if self.current_schema_id in ids:
            raise ValidationError("cannot remove the current schema", field="schema-ids",
                                  value=self.current_schema_id)
        if ids:
            self.schemas = [s for s in self.schemas if s.schema_id not in ids]
            self.changed = True

    # -- build ------------------------------------------------------------------------
    def build(self, metadata_location: str | None) -> TableMetadata:
        base = self.base
        last_updated = self.now_ms if self.last_updated_ms is None else self.last_updated_ms
        schema = self.current_schema
        spec = next(s for s in self.specs if s.spec_id == self.default_spec_id)
        for f in spec.fields:
            if not f.is_void and not f.transform.is_unknown:
                for source_id in f.source_ids:
                    check_source_column(f.name, source_id, f.transform, schema)
        order = next(o for o in self.sort_orders if o.order_id == self.default_sort_order_id)
        order.validate(schema)
        if self.format_version >= 2 and self.table_uuid is None:
            raise ValidationError(f"v{self.format_version} tables need a UUID: add AssignUUID",
                                  field="table-uuid")
        metadata_log = list(base.metadata_log)
        if metadata_location is not None:
            keep = max(1, lenient_int_property(self.properties, PREVIOUS_VERSIONS_MAX,
                                        PREVIOUS_VERSIONS_MAX_DEFAULT))
            metadata_log.append(MetadataLogEntry(base.last_updated_ms, metadata_location))
            metadata_log = metadata_log[-keep:]
        return TableMetadata(
            format_version=self.format_version,
            table_uuid=self.table_uuid,
            location=self.location,
            last_updated_ms=last_updated,
            last_column_id=self.last_column_id,
            schemas=tuple(self.schemas),
            current_schema_id=self.current_schema_id,
            partition_specs=tuple(self.specs),
            default_spec_id=self.default_spec_id,
            last_partition_id=self.last_partition_id,
            sort_orders=tuple(self.sort_orders),
            default_sort_order_id=self.default_sort_order_id,
            last_sequence_number=self.last_sequence_number,
            properties=self.properties,
            current_snapshot_id=self.current_snapshot_id,
            snapshots=tuple(self.snapshots),
            snapshot_log=tuple(self._snapshot_log()),
            metadata_log=tuple(metadata_log),
            refs=self.refs,
            statistics=tuple(self.statistics.values()),
            partition_statistics=tuple(self.partition_statistics.values()),
            next_row_id=self.next_row_id if self.format_version >= 3 else None,
            encryption_keys=base.encryption_keys,
            extra=base.extra,
        )

    def _snapshot_log(self) -> list[SnapshotLogEntry]:
        """Spec: Table Metadata Fields (snapshot-log): no gaps, no never-current snapshots."""
        added = set(self.added_snapshot_ids)
        intermediate = {sid for sid in self.main_moves
                        if sid in added and sid != self.current_snapshot_id}
        if not intermediate and not self.removed_snapshots:
            return self.snapshot_log
        out: list[SnapshotLogEntry] = []
        for entry in self.snapshot_log:
            if entry.snapshot_id in self.snapshots_by_id:
                if entry.snapshot_id not in intermediate:
                    out.append(entry)
            elif self.removed_snapshots:
                out.clear()  # a gap would make a removed snapshot's time look like another's
        if self.current_snapshot_id is not None and (
                not out or out[-1].snapshot_id != self.current_snapshot_id):
            raise ValidationError("the snapshot log would not end with the current snapshot",
                                  field="snapshot-log", value=self.current_snapshot_id)
        return out


_HANDLERS: dict[type, Callable[[_Builder, Any], None]] = {
    AssignUUID: _Builder.assign_uuid,
    UpgradeFormatVersion: _Builder.upgrade_format_version,
    AddSchema: _Builder.add_schema,
    SetCurrentSchema: _Builder.set_current_schema,
    AddPartitionSpec: _Builder.add_spec,
    SetDefaultSpec: _Builder.set_default_spec,
    AddSortOrder: _Builder.add_sort_order,
    SetDefaultSortOrder: _Builder.set_default_sort_order,
    AddSnapshot: _Builder.add_snapshot,
    SetSnapshotRef: _Builder.set_snapshot_ref,
    RemoveSnapshots: _Builder.remove_snapshots,
    RemoveSnapshotRef: _Builder.remove_snapshot_ref,
    SetLocation: _Builder.set_location,
    SetProperties: _Builder.set_properties,
    RemoveProperties: _Builder.remove_properties,
    SetStatistics: _Builder.set_statistics,
    RemoveStatistics: _Builder.remove_statistics,
    SetPartitionStatistics: _Builder.set_partition_statistics,
    RemovePartitionStatistics: _Builder.remove_partition_statistics,
    RemovePartitionSpecs: _Builder.remove_partition_specs,
    RemoveSchemas: _Builder.remove_schemas,
}


def apply_updates(
    base: TableMetadata,
    updates: Sequence[TableUpdate],
    *,
    metadata_location: str | None,
    now_ms: int | None = None,
) -> TableMetadata:
    """The metadata after ``updates``, in order; ``base`` itself when they change nothing.

    ``metadata_location`` is the file ``base`` was read from (it enters the metadata log; None
    for a base that was never written). ``now_ms`` (default: the clock) is the commit time used
    for ``last-updated-ms`` when no snapshot was added. Rules: see the module docstring; an
    invalid update raises ``ValidationError`` (``UnsupportedVersion`` for a version beyond 3)
    naming the field and value, and nothing is applied.
    """
    builder = _Builder.start(base, _now_ms() if now_ms is None else now_ms)
    for u in updates:
        builder.apply(u)
    if not builder.changed:
        return base
    return builder.build(metadata_location)
