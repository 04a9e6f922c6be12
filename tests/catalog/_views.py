"""Small view metadata for catalog tests, built with the spec dataclasses (no authoring code)."""

from __future__ import annotations

import dataclasses
import uuid

from icenb.spec.schema import schema_from_json
from icenb.spec.view_metadata import (
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

T0 = 1_700_000_000_000


def new_view(location: str, sql: str = "SELECT id FROM db.t", *,
             properties: dict[str, str] | None = None) -> ViewMetadata:
    """A view with one version (id 1, schema 0: ``id long``), Spark SQL, namespace ``db``."""
    schema = schema_from_json({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"}]})
    version = ViewVersion(version_id=1, timestamp_ms=T0, schema_id=0,
                          summary={"engine-name": "icenb-test"},
                          representations=(SQLViewRepresentation(sql, "spark"),),
                          default_namespace=("db",))
    return ViewMetadata(view_uuid=str(uuid.uuid4()), location=location, schemas=(schema,),
                        current_version_id=1, versions=(version,),
                        version_log=(ViewHistoryEntry(T0, 1),),
                        properties=dict(properties or {}))


def replaced(metadata: ViewMetadata, sql: str, *,
             properties: dict[str, str] | None = None) -> ViewMetadata:
    """``metadata`` with a new current version running ``sql`` (as a replace would)."""
    last = max(v.version_id for v in metadata.versions)
    ts = max(e.timestamp_ms for e in metadata.version_log) + 1000
    version = dataclasses.replace(metadata.current_version, version_id=last + 1, timestamp_ms=ts,
                                  representations=(SQLViewRepresentation(sql, "spark"),))
    props = dict(metadata.properties)
    props.update(properties or {})
    return dataclasses.replace(metadata, current_version_id=last + 1,
                               versions=(*metadata.versions, version),
                               version_log=(*metadata.version_log,
                                            ViewHistoryEntry(ts, last + 1)),
                               properties=props)
