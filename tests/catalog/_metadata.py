"""Small table metadata for catalog tests, built from JSON dicts (no table-authoring code)."""

from __future__ import annotations

import uuid
from typing import Any

from icenb.spec.table_metadata import (
    TableMetadata,
    table_metadata_from_json,
    table_metadata_to_json,
)


def new_metadata(location: str, *, format_version: int = 2,
                 properties: dict[str, str] | None = None, last_updated_ms: int = 1_700_000_000_000
                 ) -> TableMetadata:
    """A table with one schema (id long required, s string), unpartitioned, no snapshots."""
    doc: dict[str, Any] = {
        "format-version": format_version,
        "table-uuid": str(uuid.uuid4()),
        "location": location,
        "last-sequence-number": 0,
        "last-updated-ms": last_updated_ms,
        "last-column-id": 2,
        "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": True, "type": "long"},
            {"id": 2, "name": "s", "required": False, "type": "string"}]}],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": dict(properties or {}),
        "current-snapshot-id": -1,
        "refs": {}, "snapshots": [], "snapshot-log": [], "metadata-log": [],
    }
    if format_version >= 3:
        doc["next-row-id"] = 0
    return table_metadata_from_json(doc)


def updated(metadata: TableMetadata, *, set_properties: dict[str, str] | None = None,
            remove_properties: tuple[str, ...] = (), **fields: Any) -> TableMetadata:
    """``metadata`` changed as a transaction would (metadata-log untouched: the catalog adds)."""
    doc = table_metadata_to_json(metadata)
    props = {k: v for k, v in doc["properties"].items() if k not in remove_properties}
    props.update(set_properties or {})
    doc["properties"] = props
    doc["last-updated-ms"] = doc["last-updated-ms"] + 1
    for key, value in fields.items():
        doc[key.replace("_", "-")] = value
    return table_metadata_from_json(doc)
