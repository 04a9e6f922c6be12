"""Self-test of the Java reference environment: the generated tables and java_metadata.py."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.reference_fixtures import (
    JavaTables,
    java_canonical,
    java_roundtrip,
    java_tables,
    java_tables_dir,
)

__all__ = ["java_canonical", "java_roundtrip", "java_tables", "java_tables_dir"]


def _load(path: Path) -> Any:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def test_every_format_version_and_gzip_is_covered(java_tables: JavaTables) -> None:
    files = java_tables.metadata_files(kind="table")
    assert {f.format_version for f in files} == {1, 2, 3}
    assert any(f.gzip for f in files)
    assert any(not f.gzip for f in files)
    assert {f.catalog for f in files} == {"hadoop", "hive"}
    views = java_tables.metadata_files(kind="view")
    assert views and all(f.format_version == 1 for f in views)
    assert any(f.gzip for f in views) and any(not f.gzip for f in views)
    assert len(files) >= 100


def test_listed_files_are_the_files_on_disk(java_tables: JavaTables) -> None:
    for entry in java_tables.entries():
        meta_dir = java_tables.location(entry["name"]) / "metadata"
        on_disk = {p.name for p in meta_dir.iterdir() if p.name.endswith(".metadata.json")}
        listed = {Path(f["path"]).name for f in entry["metadata_files"]}
        assert listed == on_disk, entry["name"]
        versions = [f["version"] for f in entry["metadata_files"]]
        assert versions == sorted(versions)


def test_gzip_files_are_gzip(java_tables: JavaTables) -> None:
    for f in java_tables.metadata_files():
        assert (f.path.read_bytes()[:2] == b"\x1f\x8b") == f.gzip, f.path
        assert f.path.name.endswith(".gz.metadata.json") == f.gzip


def test_features_the_scenarios_promise(java_tables: JavaTables) -> None:
    """Each scenario's key feature is visible in its newest metadata file."""
    tables = {e["name"]: e for e in java_tables.entries()}
    assert len(tables) >= 25
    refs = _load(java_tables.latest("db.v2_refs").path)["refs"]
    assert {r["type"] for r in refs.values()} == {"branch", "tag"}
    assert refs["dev"]["min-snapshots-to-keep"] == 3
    v3 = _load(java_tables.latest("db.java_v3_types").path)
    types = {f["type"] for f in v3["schemas"][-1]["fields"] if isinstance(f["type"], str)}
    assert {"timestamp_ns", "timestamptz_ns", "uuid", "fixed[16]", "time", "variant"} <= types
    defaults = _load(java_tables.latest("db.java_v3_defaults").path)
    assert any("initial-default" in f for f in defaults["schemas"][-1]["fields"])
    stats = _load(java_tables.latest("db.v2_maintenance").path)
    assert stats["statistics"] and stats["partition-statistics"]
    expired = _load(java_tables.latest("db.v2_expire_snapshots").path)
    assert len(expired["metadata-log"]) == 3
    upgraded = java_tables.metadata_files(feature="v1-to-v2")
    assert {f.format_version for f in upgraded} == {1, 2, 3}


def test_java_canonical_json_of_every_file(java_tables: JavaTables) -> None:
    """Java read every generated file, and its canonical JSON is the file's own JSON."""
    files = java_tables.metadata_files()
    assert all(f.canonical is not None for f in files), [
        f.path for f in files if f.canonical is None
    ]
    for f in files:
        assert f.canonical == _load(f.path), f.path


def test_canonical_json_parses_back_to_equal_metadata(
    java_tables: JavaTables, java_roundtrip: Callable[..., list[dict[str, Any]]]
) -> None:
    files = java_tables.metadata_files()
    pairs = [(f.path, json.dumps(f.canonical)) for f in files]
    results = java_roundtrip(pairs)
    assert len(results) == len(pairs)
    failed = [
        (r.get("original"), r.get("error"), r.get("diff"))
        for r in results
        if not (r["ok"] and r["equal"])
    ]
    assert not failed


def test_compare_reports_differences_and_errors(
    java_tables: JavaTables,
    java_roundtrip: Callable[..., list[dict[str, Any]]],
    java_canonical: Callable[..., list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    first, second = java_tables.metadata_files(feature="tags")[:2]
    changed = _load(first.path)
    changed["properties"]["added-by-test"] = "x"
    broken = tmp_path / "broken.metadata.json"
    broken.write_text('{"format-version": 9}')
    same, differs, edited, bad = java_roundtrip(
        [
            (first.path, first.path),
            (first.path, second.path),
            (first.path, json.dumps(changed)),
            (first.path, broken),
        ]
    )
    assert same["ok"] and same["equal"] and same["diff"] == []
    assert differs["ok"] and not differs["equal"]
    assert edited["diff"] == [
        {"path": "/properties/added-by-test", "original": "<missing>", "candidate": "x"}
    ]
    assert not bad["ok"] and bad["error"].startswith("candidate: ")
    assert "version 9" in bad["error"]
    (canon,) = java_canonical([json.dumps(changed)])
    assert canon["ok"] and canon["canonical"]["properties"]["added-by-test"] == "x"
