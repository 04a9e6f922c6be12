"""View metadata against the Iceberg Java reference implementation (1.10).

Every view metadata file Java wrote (plain and gzip, Hive catalog) loads in icenb with the same
versions, log and schemas, and icenb's re-serialization parses in Java to equal metadata.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

from icenb.spec.schema import schema_to_json
from icenb.spec.view_metadata import ViewMetadata, load_view_metadata, view_metadata_to_json
from tests.reference_fixtures import JavaTables, MetadataFile


def _read(f: MetadataFile) -> bytes:
    data = f.path.read_bytes()
    return gzip.decompress(data) if f.gzip else data


def test_java_views_load_with_the_same_versions_log_and_schemas(java_tables: JavaTables) -> None:
    files = java_tables.metadata_files(kind="view")
    assert files, "the reference run wrote no views"
    assert any(f.gzip for f in files) and any(not f.gzip for f in files)
    for f in files:
        raw = json.loads(_read(f))
        md = load_view_metadata(_read(f), file=str(f.path))
        assert isinstance(md, ViewMetadata)
        assert str(md.view_uuid) == raw["view-uuid"]
        assert md.current_version_id == raw["current-version-id"]
        assert [v.version_id for v in md.versions] == [v["version-id"] for v in raw["versions"]]
        for version, raw_version in zip(md.versions, raw["versions"], strict=True):
            assert version.schema_id == raw_version["schema-id"]
            for rep in raw_version["representations"]:
                assert version.sql_for(rep["dialect"]) == rep["sql"]
        assert [(e.timestamp_ms, e.version_id) for e in md.version_log] == [
            (e["timestamp-ms"], e["version-id"]) for e in raw["version-log"]]
        for schema, raw_schema in zip(md.schemas, raw["schemas"], strict=True):
            assert schema_to_json(schema)["fields"] == raw_schema["fields"]


def test_icenb_rewritten_views_parse_equal_in_java(
    java_tables: JavaTables, java_roundtrip: Callable[..., list[dict[str, Any]]],
) -> None:
    files = java_tables.metadata_files(kind="view")
    pairs = []
    for f in files:
        md = load_view_metadata(_read(f), file=str(f.path))
        pairs.append((str(f.path), json.dumps(view_metadata_to_json(md)).encode()))
    results = java_roundtrip(pairs, kind="view")
    bad = [(f.path.name, r) for f, r in zip(files, results, strict=True)
           if not (r.get("ok") and r.get("equal"))]
    assert not bad, bad
