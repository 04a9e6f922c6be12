"""FilesystemCatalog write side: the Hadoop layout (spec: "File System Tables"; Iceberg Java's
``HadoopCatalog`` / ``HadoopTableOperations``): ``v<N>.metadata.json`` created with an atomic
create-if-absent, ``version-hint.text``, namespaces as directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from icenb.catalog import FilesystemCatalog, LoadedTable, NamespaceNotEmpty
from icenb.errors import (
    AlreadyExists,
    CommitConflict,
    NoSuchNamespace,
    NoSuchTable,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.metadata_files import load_table_metadata
from tests.catalog._metadata import new_metadata, updated


@pytest.fixture
def catalog(tmp_path: Path) -> FilesystemCatalog:
    c = FilesystemCatalog(tmp_path / "wh")
    c.create_namespace("db")
    return c


def _create(c: FilesystemCatalog, name: str = "db.t", **props: str) -> LoadedTable:
    return c.create_table(name, new_metadata(c.default_table_location(name), properties=props))


def _metadata_dir(c: FilesystemCatalog, name: str = "db.t") -> Path:
    return Path(c.table_location(name)) / "metadata"


def _names(c: FilesystemCatalog, name: str = "db.t") -> list[str]:
    return sorted(os.listdir(_metadata_dir(c, name)))


def test_namespaces_are_directories(tmp_path: Path) -> None:
    c = FilesystemCatalog(tmp_path / "wh")
    c.create_namespace("a.b")  # parents too, as Java's mkdirs
    assert (tmp_path / "wh" / "a" / "b").is_dir()
    assert c.list_namespaces() == [("a",)] and c.list_namespaces("a") == [("a", "b")]
    with pytest.raises(AlreadyExists):
        c.create_namespace("a")
    with pytest.raises(UnsupportedFeature, match="no namespace properties"):
        c.create_namespace("p", {"owner": "x"})
    with pytest.raises(UnsupportedFeature):
        c.update_namespace_properties("a", updates={"owner": "x"})
    with pytest.raises(NamespaceNotEmpty, match="b"):
        c.drop_namespace("a")
    c.drop_namespace("a.b")
    c.drop_namespace("a")
    assert c.list_namespaces() == []
    with pytest.raises(NoSuchNamespace):
        c.drop_namespace("a")


def test_create_writes_v1_and_the_hint(catalog: FilesystemCatalog) -> None:
    created = _create(catalog)
    location = catalog.table_location("db.t")
    assert created.metadata_location == f"{location}/metadata/v1.metadata.json"
    assert _names(catalog) == ["v1.metadata.json", "version-hint.text"]
    assert (_metadata_dir(catalog) / "version-hint.text").read_text() == "1"
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == created.metadata_location
    assert loaded.metadata == created.metadata
    assert catalog.list_tables("db") == [("db", "t")] and catalog.list_namespaces("db") == []


def test_create_checks_name_location_and_namespace(catalog: FilesystemCatalog) -> None:
    _create(catalog)
    with pytest.raises(AlreadyExists):
        _create(catalog)
    with pytest.raises(NoSuchNamespace):
        _create(catalog, "nope.t")
    with pytest.raises(ValidationError, match="lives in its directory"):
        catalog.create_table("db.u", new_metadata("/somewhere/else"))
    file_uri = Path(catalog.table_location("db.v")).as_uri()
    catalog.create_table("db.v", new_metadata(file_uri))  # the same directory as a file: URI
    catalog.create_namespace("db.ns.inner")
    with pytest.raises(AlreadyExists, match="namespace"):
        _create(catalog, "db.ns")
    assert _names(catalog) == ["v1.metadata.json", "version-hint.text"]


def test_commit_creates_the_next_version(catalog: FilesystemCatalog) -> None:
    created = _create(catalog)
    committed = catalog.commit_table("db.t", created.metadata_location,
                                     updated(created.metadata, set_properties={"a": "1"}))
    assert committed.metadata_location.endswith("/metadata/v2.metadata.json")
    assert (_metadata_dir(catalog) / "version-hint.text").read_text() == "2"
    assert [(e.timestamp_ms, e.metadata_file) for e in committed.metadata.metadata_log] == [
        (created.metadata.last_updated_ms, created.metadata_location)]
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == committed.metadata_location
    assert loaded.metadata == committed.metadata


def test_a_stale_base_is_a_conflict(catalog: FilesystemCatalog) -> None:
    _create(catalog)
    one = catalog.load_table("db.t")
    two = catalog.load_table("db.t")
    catalog.commit_table("db.t", one.metadata_location, updated(one.metadata,
                                                                set_properties={"by": "one"}))
    with pytest.raises(CommitConflict, match=r"v2\.metadata\.json"):
        catalog.commit_table("db.t", two.metadata_location,
                             updated(two.metadata, set_properties={"by": "two"}))
    assert _names(catalog) == ["v1.metadata.json", "v2.metadata.json", "version-hint.text"]
    assert catalog.load_table("db.t").metadata.properties["by"] == "one"


def test_losing_the_create_race_is_a_conflict(catalog: FilesystemCatalog,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    created = _create(catalog)
    winner = catalog.commit_table("db.t", created.metadata_location, updated(created.metadata))
    # A writer that checked the pointer before the winner's file appeared.
    monkeypatch.setattr(catalog, "_table_pointer", lambda ident: (created.metadata_location, None))
    with pytest.raises(CommitConflict):
        catalog.commit_table("db.t", created.metadata_location, updated(created.metadata))
    # Same race, but the loser writes gzip: a different name, found after the create.
    with pytest.raises(CommitConflict):
        catalog.commit_table("db.t", created.metadata_location, updated(
            created.metadata, set_properties={"write.metadata.compression-codec": "gzip"}))
    monkeypatch.undo()
    assert _names(catalog) == ["v1.metadata.json", "v2.metadata.json", "version-hint.text"]
    assert catalog.load_table("db.t").metadata_location == winner.metadata_location


def test_gzip_versions_and_a_stale_hint(catalog: FilesystemCatalog) -> None:
    created = _create(catalog, **{"write.metadata.compression-codec": "gzip"})
    assert created.metadata_location.endswith("/v1.gz.metadata.json")
    committed = catalog.commit_table("db.t", created.metadata_location,
                                     updated(created.metadata))
    assert committed.metadata_location.endswith("/v2.gz.metadata.json")
    (_metadata_dir(catalog) / "version-hint.text").write_text("1")  # a writer died before it
    assert catalog.load_table("db.t").metadata_location == committed.metadata_location
    third = catalog.commit_table("db.t", committed.metadata_location, updated(committed.metadata))
    assert third.metadata_location.endswith("/v3.gz.metadata.json")
    assert (_metadata_dir(catalog) / "version-hint.text").read_text() == "3"


def test_old_versions_are_deleted_after_commit(catalog: FilesystemCatalog) -> None:
    current = _create(catalog, **{"write.metadata.previous-versions-max": "1",
                                  "write.metadata.delete-after-commit.enabled": "true"})
    for _ in range(3):
        current = catalog.commit_table("db.t", current.metadata_location,
                                       updated(current.metadata))
    assert _names(catalog) == ["v3.metadata.json", "v4.metadata.json", "version-hint.text"]
    assert [e.metadata_file for e in current.metadata.metadata_log] == [
        f"{catalog.table_location('db.t')}/metadata/v3.metadata.json"]
    assert catalog.load_table("db.t").metadata_location == current.metadata_location


def test_rename_is_unsupported_as_in_java(catalog: FilesystemCatalog) -> None:
    _create(catalog)
    with pytest.raises(UnsupportedFeature, match="rename"):
        catalog.rename_table("db.t", "db.u")


def test_register_copies_the_metadata_in_as_v1(catalog: FilesystemCatalog,
                                               tmp_path: Path) -> None:
    created = _create(catalog)
    committed = catalog.commit_table("db.t", created.metadata_location, updated(created.metadata))
    registered = catalog.register_table("db.copy", committed.metadata_location)
    assert registered.metadata_location.endswith("/db/copy/metadata/v1.metadata.json")
    assert registered.metadata == load_table_metadata(committed.metadata_location)
    assert catalog.load_table("db.copy").metadata.location == committed.metadata.location
    with pytest.raises(AlreadyExists):
        catalog.register_table("db.copy", committed.metadata_location)


def test_drop_deletes_the_table_directory(catalog: FilesystemCatalog) -> None:
    _create(catalog)
    (Path(catalog.table_location("db.t")) / "data").mkdir()
    catalog.drop_table("db.t")
    assert not Path(catalog.table_location("db.t")).exists()
    assert catalog.list_tables("db") == [] and catalog.list_namespaces("db") == []
    with pytest.raises(NoSuchTable):
        catalog.drop_table("db.t")
