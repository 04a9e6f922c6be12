"""SqlCatalog write side: schema creation, namespaces, create / commit / drop / rename /
register, metadata file names and the metadata-log (spec: "Metastore Tables", Table Metadata
Fields ``metadata-log``; Iceberg Java's ``JdbcCatalog`` and ``JdbcTableOperations``)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from icenb.catalog import (
    LoadedTable,
    NamespaceNotEmpty,
    PropertiesUpdateSummary,
    SqlCatalog,
    open_warehouse_catalog,
)
from icenb.catalog.sql import (
    ADD_TYPE_COLUMN_SQL,
    CREATE_NAMESPACE_PROPERTIES_SQL,
    CREATE_TABLES_SQL,
)
from icenb.errors import (
    AlreadyExists,
    CommitConflict,
    NoSuchNamespace,
    NoSuchTable,
    ValidationError,
)
from icenb.io.metadata_files import load_table_metadata
from tests.catalog._metadata import new_metadata, updated
from tests.catalog.test_sql import PROPERTIES, V0_TABLES, V1_UPDATE

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    c = open_warehouse_catalog(tmp_path / "wh")
    c.create_namespace("db")
    return c


def _create(c: SqlCatalog, name: str = "db.t", **props: str) -> LoadedTable:
    return c.create_table(name, new_metadata(c.default_table_location(name), properties=props))


def _metadata_files(c: SqlCatalog, name: str = "db/t") -> list[str]:
    directory = Path(c.warehouse or "") / name / "metadata"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


# --------------------------------------------------------------------------- schema


def test_a_fresh_database_gets_javas_v1_schema(tmp_path: Path) -> None:
    c = open_warehouse_catalog(tmp_path / "wh")
    assert c.database == str(tmp_path / "wh" / "catalog.db")
    with sqlite3.connect(c.database) as conn:
        ddl = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        columns = [r[1] for r in conn.execute("PRAGMA table_info(iceberg_tables)")]
    conn.close()
    # Java's JdbcCatalog with jdbc.schema-version=V1: V0 CREATE TABLE, then ALTER TABLE (the
    # statements as test_sql.py restates them from Java's JdbcUtil).
    with sqlite3.connect(tmp_path / "java.db") as java:
        for statement in (V0_TABLES, V1_UPDATE, PROPERTIES):
            java.execute(statement)
        expected = dict(java.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    java.close()
    assert ddl == expected
    assert (CREATE_TABLES_SQL, ADD_TYPE_COLUMN_SQL, CREATE_NAMESPACE_PROPERTIES_SQL) == (
        V0_TABLES, V1_UPDATE, PROPERTIES)
    assert columns == ["catalog_name", "table_namespace", "table_name", "metadata_location",
                       "previous_metadata_location", "iceberg_type"]
    assert c.list_namespaces() == [] and c.all_tables() == []
    open_warehouse_catalog(tmp_path / "wh")  # opening again changes nothing


def test_a_v0_database_is_written_as_v0(tmp_path: Path) -> None:
    db = tmp_path / "v0.db"
    with sqlite3.connect(db) as conn:
        conn.execute(CREATE_TABLES_SQL)
    conn.close()
    c = SqlCatalog(db, warehouse=tmp_path)
    c.create_namespace("db")
    _create(c)
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(iceberg_tables)")]
        rows = conn.execute("SELECT * FROM iceberg_tables").fetchall()
    conn.close()
    assert "iceberg_type" not in cols and len(rows) == 1
    assert c.list_tables("db") == [("db", "t")]


# --------------------------------------------------------------------------- namespaces


def test_namespaces_are_created_updated_and_dropped(tmp_path: Path) -> None:
    c = open_warehouse_catalog(tmp_path / "wh")
    c.create_namespace("a", {"owner": "ana", "comment": "x"})
    c.create_namespace(("a", "b", "c"))  # parents exist through their children
    assert c.list_namespaces() == [("a",)]
    assert c.list_namespaces("a") == [("a", "b")]
    assert c.namespace_properties("a") == {"comment": "x", "location": f"{c.warehouse}/a",
                                           "owner": "ana"}
    with sqlite3.connect(c.database) as conn:  # 'exists' only without properties (PyIceberg)
        rows = sorted(conn.execute("SELECT namespace, property_key, property_value FROM "
                                   "iceberg_namespace_properties"))
    conn.close()
    assert rows == [("a", "comment", "x"), ("a", "owner", "ana"), ("a.b.c", "exists", "true")]
    with pytest.raises(AlreadyExists):
        c.create_namespace("a")
    with pytest.raises(AlreadyExists):
        c.create_namespace("a.b")  # exists through a.b.c
    with pytest.raises(ValidationError, match="reserved"):
        c.create_namespace("z", {"exists": "false"})
    with pytest.raises(ValidationError, match=r"contain '\.'"):
        c.create_namespace(("x.y",))

    summary = c.update_namespace_properties("a", removals=["comment", "nope"],
                                            updates={"owner": "bo", "new": "1"})
    assert summary == PropertiesUpdateSummary(["comment"], ["new", "owner"], ["nope"])
    assert c.namespace_properties("a") == {"location": f"{c.warehouse}/a", "new": "1",
                                           "owner": "bo"}
    with pytest.raises(ValidationError, match="both removed and set"):
        c.update_namespace_properties("a", removals=["x"], updates={"x": "1"})
    with pytest.raises(NoSuchNamespace):
        c.update_namespace_properties("nope", updates={"x": "1"})

    with pytest.raises(NamespaceNotEmpty, match="1 namespace"):
        c.drop_namespace("a")  # a.b.c is below it
    c.drop_namespace("a.b.c")
    c.drop_namespace("a")
    assert c.list_namespaces() == []
    with pytest.raises(NoSuchNamespace):
        c.drop_namespace("a")


def test_removing_the_last_property_keeps_the_namespace(tmp_path: Path) -> None:
    c = open_warehouse_catalog(tmp_path / "wh")
    with sqlite3.connect(c.database) as conn:  # as PyIceberg writes it: no 'exists' row
        conn.execute("INSERT INTO iceberg_namespace_properties VALUES "
                     "('default', 'p', 'k', 'v')")
    conn.close()
    c.update_namespace_properties("p", removals=["k"])
    assert c.namespace_exists("p")
    assert c.namespace_properties("p") == {"location": f"{c.warehouse}/p"}


def test_a_namespace_with_a_table_cannot_be_dropped(catalog: SqlCatalog) -> None:
    _create(catalog)
    with pytest.raises(NamespaceNotEmpty, match="1 table"):
        catalog.drop_namespace("db")
    catalog.drop_table("db.t")
    catalog.drop_namespace("db")


# --------------------------------------------------------------------------- tables


def test_create_writes_version_zero_and_registers_it(catalog: SqlCatalog) -> None:
    created = _create(catalog)
    assert re.fullmatch(f"{catalog.warehouse}/db/t/metadata/00000-{UUID}\\.metadata\\.json",
                        created.metadata_location)
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == created.metadata_location
    assert loaded.previous_metadata_location is None
    assert loaded.metadata == created.metadata
    assert catalog.list_tables("db") == [("db", "t")]


def test_create_fails_cleanly(catalog: SqlCatalog) -> None:
    first = _create(catalog)
    with pytest.raises(AlreadyExists):
        _create(catalog)
    with pytest.raises(NoSuchNamespace):
        _create(catalog, "nope.t")
    # The failed attempts deleted the files they wrote.
    assert _metadata_files(catalog) == [first.metadata_location.rsplit("/", 1)[1]]
    assert _metadata_files(catalog, "nope/t") == []


def test_commit_writes_the_next_version_and_extends_the_log(catalog: SqlCatalog) -> None:
    created = _create(catalog)
    committed = catalog.commit_table("db.t", created.metadata_location,
                                     updated(created.metadata, set_properties={"a": "1"}))
    assert re.fullmatch(f".*/metadata/00001-{UUID}\\.metadata\\.json",
                        committed.metadata_location)
    assert committed.previous_metadata_location == created.metadata_location
    log = list(committed.metadata.metadata_log)
    assert [(e.timestamp_ms, e.metadata_file) for e in log] == [
        (created.metadata.last_updated_ms, created.metadata_location)]
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == committed.metadata_location
    assert loaded.previous_metadata_location == created.metadata_location
    assert loaded.metadata.properties["a"] == "1"
    assert loaded.metadata == committed.metadata


def test_a_stale_base_is_a_conflict_and_leaves_no_file(catalog: SqlCatalog) -> None:
    _create(catalog)
    one = catalog.load_table("db.t")
    two = catalog.load_table("db.t")
    won = catalog.commit_table("db.t", one.metadata_location,
                               updated(one.metadata, set_properties={"by": "one"}))
    before = _metadata_files(catalog)
    with pytest.raises(CommitConflict, match="changed") as info:
        catalog.commit_table("db.t", two.metadata_location,
                             updated(two.metadata, set_properties={"by": "two"}))
    assert won.metadata_location in str(info.value)
    assert _metadata_files(catalog) == before
    assert catalog.load_table("db.t").metadata.properties["by"] == "one"
    with pytest.raises(CommitConflict, match="no longer exists"):
        catalog.commit_table("db.missing", one.metadata_location, one.metadata)


def test_gzip_and_metadata_path_properties(catalog: SqlCatalog, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    created = _create(catalog, **{"write.metadata.compression-codec": "gzip",
                                  "write.metadata.path": f"{other}/"})
    assert re.fullmatch(f"{other}/00000-{UUID}\\.gz\\.metadata\\.json",
                        created.metadata_location)
    assert Path(created.metadata_location).read_bytes()[:2] == b"\x1f\x8b"
    committed = catalog.commit_table("db.t", created.metadata_location,
                                     updated(created.metadata))
    assert committed.metadata_location.startswith(f"{other}/00001-")
    assert catalog.load_table("db.t").metadata == committed.metadata
    with pytest.raises(ValidationError, match="codec"):
        _create(catalog, "db.u", **{"write.metadata.compression-codec": "zstd"})


def test_old_metadata_files_are_deleted_after_commit(catalog: SqlCatalog) -> None:
    current = _create(catalog, **{"write.metadata.previous-versions-max": "2",
                                  "write.metadata.delete-after-commit.enabled": "true"})
    locations = [current.metadata_location]
    for i in range(4):
        current = catalog.commit_table("db.t", current.metadata_location,
                                       updated(current.metadata, set_properties={"i": str(i)}))
        locations.append(current.metadata_location)
    assert [e.metadata_file for e in current.metadata.metadata_log] == locations[-3:-1]
    assert _metadata_files(catalog) == sorted(p.rsplit("/", 1)[1] for p in locations[-3:])


def test_without_delete_after_commit_the_log_is_cut_but_files_stay(catalog: SqlCatalog) -> None:
    current = _create(catalog, **{"write.metadata.previous-versions-max": "1"})
    for _ in range(3):
        current = catalog.commit_table("db.t", current.metadata_location,
                                       updated(current.metadata))
    assert len(current.metadata.metadata_log) == 1
    assert len(_metadata_files(catalog)) == 4


def test_rename_moves_the_row(catalog: SqlCatalog) -> None:
    created = _create(catalog)
    _create(catalog, "db.other")
    catalog.create_namespace("db2")
    catalog.rename_table("db.t", "db2.renamed")
    assert catalog.list_tables("db") == [("db", "other")]
    renamed = catalog.load_table("db2.renamed")
    assert renamed.metadata_location == created.metadata_location
    with pytest.raises(NoSuchTable):
        catalog.rename_table("db.t", "db.x")
    with pytest.raises(AlreadyExists):
        catalog.rename_table("db2.renamed", "db.other")
    with pytest.raises(NoSuchNamespace):
        catalog.rename_table("db2.renamed", "nope.x")
    catalog.rename_table("db2.renamed", "db2.renamed")  # to itself: nothing happens
    assert catalog.table_exists("db2.renamed")


def test_register_points_at_an_existing_file(catalog: SqlCatalog) -> None:
    created = _create(catalog)
    catalog.register_table("db.copy", created.metadata_location)
    loaded = catalog.load_table("db.copy")
    assert loaded.metadata_location == created.metadata_location
    assert loaded.metadata == load_table_metadata(created.metadata_location)
    with pytest.raises(AlreadyExists):
        catalog.register_table("db.copy", created.metadata_location)


def test_drop_without_purge_keeps_the_files(catalog: SqlCatalog) -> None:
    created = _create(catalog)
    catalog.drop_table("db.t")
    assert not catalog.table_exists("db.t")
    assert Path(created.metadata_location).exists()
    with pytest.raises(NoSuchTable):
        catalog.drop_table("db.t")


def test_drop_with_purge_deletes_the_metadata_files(catalog: SqlCatalog) -> None:
    created = _create(catalog)
    committed = catalog.commit_table("db.t", created.metadata_location,
                                     updated(created.metadata))
    catalog.drop_table("db.t", purge=True)
    assert not Path(created.metadata_location).exists()
    assert not Path(committed.metadata_location).exists()
