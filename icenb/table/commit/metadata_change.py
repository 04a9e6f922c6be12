"""Metadata-only commits of a writable table: schema and partition evolution, sort order and
property changes (no new snapshot).

Spec sections: "Schema Evolution", "Partition Evolution", "Sorting", "Table Metadata Fields"
(``properties``) and "Commit Conflict Resolution and Retry". Each change is a list of table
updates committed with requirements, as Iceberg Java 1.10's REST ``UpdateRequirements``:

* schema: ``[AddSchema, SetCurrentSchema(-1)]`` with ``AssertCurrentSchemaId`` and
  ``AssertLastAssignedFieldId``; the evolved schema must keep every source column of the
  default partition spec and sort order (:func:`check_schema_sources`);
* partition spec: ``[AddPartitionSpec, SetDefaultSpec(-1)]`` with ``AssertDefaultSpecId`` and
  ``AssertLastAssignedPartitionId``;
* sort order: ``[AddSortOrder, SetDefaultSortOrder(-1)]`` with ``AssertDefaultSortOrderId``,
  rebuilt from the requested fields on every attempt (as Java's ``BaseReplaceSortOrder``);
* properties: ``SetProperties`` / ``RemoveProperties``, re-applied on every attempt (as Java's
  ``PropertiesUpdate``).

Every commit also asserts the table UUID (a table dropped and re-created under the name is not
the one that was evolved). When the catalog refuses the swap (another writer moved the pointer)
the table is reloaded and the requirements are checked again on the new state: a requirement
that no longer holds raises ``CommitConflict`` naming it at once (the spec: a schema change
fails when the schema changed underneath); otherwise the same updates are applied to the new
state and committed, up to ``commit.retry.num-retries`` times (:class:`RetryPolicy`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icenb.catalog import LoadedTable
from icenb.errors import CommitConflict, ValidationError
from icenb.reprs import safe_repr
from icenb.spec.partition_spec_update import SpecUpdate
from icenb.spec.properties import check_properties
from icenb.spec.schema_update import SchemaUpdate, check_schema_sources
from icenb.spec.sort_order import SortField, SortOrder, UnboundSortField
from icenb.spec.sort_order_update import replace_sort_order
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.table_updates import (
    RESERVED_PROPERTIES,
    AddPartitionSpec,
    AddSchema,
    AddSortOrder,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertTableUUID,
    RemoveProperties,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetProperties,
    TableRequirement,
    TableUpdate,
    apply_updates,
    check_requirements,
)
from icenb.table.commit.producer import RetryPolicy, refresh_on_error

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = [
    "MetadataChange",
    "commit_change",
    "remove_properties",
    "replace_sort_order_of",
    "set_current_schema",
    "set_default_spec",
    "set_properties",
    "update_schema",
    "update_spec",
    "uuid_requirement",
]


@safe_repr
@dataclass
class MetadataChange:
    """What one commit attempt asks of the catalog, built on the table as it is then."""

    updates: list[TableUpdate]
    requirements: list[TableRequirement] = field(default_factory=list)


#: Builds the change on the metadata of an attempt (raises ``ValidationError`` when it cannot).
ChangeBuilder = Callable[[TableMetadata], MetadataChange]


def uuid_requirement(metadata: TableMetadata) -> list[TableRequirement]:
    """``AssertTableUUID`` of the table, when it has a UUID (v1 tables may not)."""
    return [] if metadata.table_uuid is None else [AssertTableUUID(metadata.table_uuid)]


def commit_change(table: Table, build: ChangeBuilder, *,
                  sleep: Callable[[float], None] | None = None) -> LoadedTable:
    """Commit ``build``'s change to ``table``'s catalog, retrying when another writer moved the
    pointer (see the module docstring); ``table`` then shows the committed state. On any failure
    the table is refreshed and the error raised; the catalog is unchanged."""
    catalog, identifier = table.operations.commit_target()
    current = table.operations.current()
    with refresh_on_error(table):
        policy = RetryPolicy.for_commit(current.metadata.properties)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            change = build(current.metadata)
            check_requirements(current.metadata, change.requirements)  # not retried
            new_metadata = apply_updates(current.metadata, change.updates,
                                         metadata_location=current.metadata_location)
            if new_metadata is current.metadata:
                committed = current  # nothing changes: no new metadata file
                break
            try:
                committed = catalog.commit_table(identifier, current.metadata_location,
                                                 new_metadata, base_metadata=current.metadata)
                break
            except CommitConflict:
                if not policy.backoff(attempt, started, sleep):
                    raise
                current = catalog.load_table(identifier)
    table.operations.committed(committed)
    return committed


# --------------------------------------------------------------------------- schema


def _schema_change(base: TableMetadata, update: SchemaUpdate) -> ChangeBuilder | None:
    """The commit of ``update`` (made on ``base``), or None when it changes nothing."""
    new_schema, last_column_id = update.apply()
    if new_schema is update.schema and last_column_id == base.last_column_id:
        return None
    requirements: list[TableRequirement] = [
        *uuid_requirement(base), AssertCurrentSchemaId(base.current_schema_id),
        AssertLastAssignedFieldId(base.last_column_id)]
    updates: list[TableUpdate] = [AddSchema(new_schema, last_column_id), SetCurrentSchema()]

    def build(metadata: TableMetadata) -> MetadataChange:
        # The spec or sort order may have changed concurrently: check against this attempt's.
        check_schema_sources(new_schema, metadata.spec, metadata.sort_order)
        return MetadataChange(updates, requirements)

    return build


@contextlib.contextmanager
def update_schema(table: Table, *, allow_incompatible_changes: bool = False,
                  case_sensitive: bool = True) -> Iterator[SchemaUpdate]:
    """Evolve ``table``'s schema: yields a :class:`SchemaUpdate` of the current schema, committed
    when the block ends normally (nothing is committed when it raises)."""
    table.operations.commit_target()
    base = table.metadata
    update = SchemaUpdate(base.schema, base.last_column_id, format_version=base.format_version,
                          case_sensitive=case_sensitive,
                          allow_incompatible_changes=allow_incompatible_changes)
    yield update
    with refresh_on_error(table):
        build = _schema_change(base, update)
    if build is not None:
        commit_change(table, build)


# --------------------------------------------------------------------------- partition spec


@contextlib.contextmanager
def update_spec(table: Table, *, case_sensitive: bool = True) -> Iterator[SpecUpdate]:
    """Evolve ``table``'s default partition spec: yields a :class:`SpecUpdate`, committed when
    the block ends normally (nothing is committed when it raises)."""
    table.operations.commit_target()
    base = table.metadata
    update = SpecUpdate(base.spec, base.schema, base.last_partition_id,
                        format_version=base.format_version, history=base.partition_specs,
                        case_sensitive=case_sensitive)
    yield update
    with refresh_on_error(table):
        new_spec, last_partition_id = update.apply()
    if new_spec.spec_id == base.default_spec_id and last_partition_id == base.last_partition_id:
        return
    change = MetadataChange(
        [AddPartitionSpec(new_spec), SetDefaultSpec()],
        [*uuid_requirement(base), AssertDefaultSpecId(base.default_spec_id),
         AssertLastAssignedPartitionId(base.last_partition_id)])
    commit_change(table, lambda _metadata: change)


def set_current_schema(table: Table, schema_id: int) -> None:
    """Make an earlier schema of ``table`` current again in one commit (the table update
    ``set-current-schema``; spec: Table Metadata Fields ``current-schema-id``): how a schema
    change is undone. Its field ids are kept, ``last-column-id`` never decreases."""
    base = table.metadata
    if base.schema_by_id(schema_id) is None:
        raise ValidationError("no such schema in the table", field="schema-id",
                              value=schema_id)
    if schema_id == base.current_schema_id:
        return
    change = MetadataChange([SetCurrentSchema(schema_id)],
                            [*uuid_requirement(base),
                             AssertCurrentSchemaId(base.current_schema_id)])
    commit_change(table, lambda _metadata: change)


def set_default_spec(table: Table, spec_id: int) -> None:
    """Make an earlier partition spec of ``table`` the default again in one commit (the table
    update ``set-default-spec``; spec: "Partition Evolution"): how a spec change is undone.
    Files keep the spec they were written with."""
    base = table.metadata
    if base.spec_by_id(spec_id) is None:
        raise ValidationError("no such partition spec in the table", field="spec-id",
                              value=spec_id)
    if spec_id == base.default_spec_id:
        return
    change = MetadataChange([SetDefaultSpec(spec_id)],
                            [*uuid_requirement(base),
                             AssertDefaultSpecId(base.default_spec_id)])
    commit_change(table, lambda _metadata: change)


# --------------------------------------------------------------------------- sort order


def replace_sort_order_of(table: Table,
                          fields: Iterable[str | UnboundSortField | SortField], *,
                          case_sensitive: bool = True) -> SortOrder:
    """Make ``fields`` (``"id"``, ``"ts desc nulls last"``, ...; none: unsorted) ``table``'s
    default sort order in one commit; the order as committed (spec: "Sorting")."""
    items = list(fields)

    def build(metadata: TableMetadata) -> MetadataChange:
        order = replace_sort_order(metadata.schema, items, existing=metadata.sort_orders,
                                   case_sensitive=case_sensitive)
        return MetadataChange(
            [AddSortOrder(order), SetDefaultSortOrder()],
            [*uuid_requirement(metadata),
             AssertDefaultSortOrderId(metadata.default_sort_order_id)])

    commit_change(table, build)
    return table.sort_order


# --------------------------------------------------------------------------- properties


def set_properties(table: Table, updates: Mapping[str, str]) -> None:
    """Set table properties in one commit (reserved ones such as ``format-version`` are
    refused)."""
    if not isinstance(updates, Mapping):
        raise ValidationError("properties to set are a mapping of key -> value",
                              field="properties", value=updates)
    check_properties(updates)  # a value icenb cannot use never reaches the metadata
    change = SetProperties(updates)  # checks keys and values now

    def build(metadata: TableMetadata) -> MetadataChange:
        return MetadataChange([change], uuid_requirement(metadata))

    commit_change(table, build)


def remove_properties(table: Table, keys: Iterable[str]) -> None:
    """Remove table properties in one commit (absent keys are ignored; reserved ones refused:
    they are not stored properties)."""
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, Iterable) or isinstance(keys, Mapping):
        raise ValidationError("properties to remove are a list of keys", field="properties",
                              value=keys)
    keys = list(keys)
    for key in keys:
        if not isinstance(key, str):
            raise ValidationError("a property key is a string", field="properties", value=key)
    change = RemoveProperties(tuple(keys))
    reserved = sorted(RESERVED_PROPERTIES.intersection(change.removals))
    if reserved:
        raise ValidationError("reserved table property: it cannot be removed",
                              field=reserved[0], value=reserved[0])

    def build(metadata: TableMetadata) -> MetadataChange:
        return MetadataChange([change], uuid_requirement(metadata))

    commit_change(table, build)
