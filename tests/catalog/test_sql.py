"""SqlCatalog on databases with Iceberg Java's JDBC catalog schemas (V0 without
``iceberg_type``, V1 with it and with views), URIs, and broken databases.

Rows are written here with Java's DDL (``JdbcUtil``: ``V0_CREATE_CATALOG_SQL``,
``V1_UPDATE_CATALOG_SQL``, ``CREATE_NAMESPACE_PROPERTIES_TABLE_SQL``) and point at metadata files
Java wrote (the reference corpus).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

import icenb
from icenb.catalog import SqlCatalog
from icenb.catalog.sql import sqlite_path
from icenb.errors import (
    CorruptFile,
    FileIOError,
    InvalidMetadata,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.metadata_files import load_view_metadata_file
from tests.reference_fixtures import JavaTables

V0_TABLES = (
    "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL,"
    "table_namespace VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,"
    "metadata_location VARCHAR(1000),previous_metadata_location VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, table_namespace, table_name))")
V1_UPDATE = "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)"
PROPERTIES = (
    "CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL,"
    "namespace VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, namespace, property_key))")


def _make_db(path: Path, *, v1: bool, tables: Sequence[tuple[str | None, ...]],
             props: Sequence[tuple[str, str, str, str]] = ()) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute(V0_TABLES)
        if v1:
            conn.execute(V1_UPDATE)
        conn.execute(PROPERTIES)
        for row in tables:
            marks = ",".join("?" * len(row))
            cols = "catalog_name, table_namespace, table_name, metadata_location, " \
                   "previous_metadata_location" + (", iceberg_type" if len(row) == 6 else "")
            conn.execute(f"INSERT INTO iceberg_tables ({cols}) VALUES ({marks})", row)
        conn.executemany("INSERT INTO iceberg_namespace_properties VALUES (?,?,?,?)", props)
    conn.close()
    return path


def _versions(java_tables: JavaTables, name: str) -> list[str]:
    files = sorted((f.version, str(f.path)) for f in java_tables.metadata_files()
                   if f.name == name)
    return [p for _, p in files]


@pytest.fixture
def v0(tmp_path: Path, java_tables: JavaTables) -> SqlCatalog:
    refs = _versions(java_tables, "db.v2_refs")
    mor = _versions(java_tables, "db.v2_merge_on_read")
    db = _make_db(tmp_path / "v0.db", v1=False, tables=[
        ("jdbc", "db", "refs", refs[-1], refs[-2]),
        ("jdbc", "db.nested", "mor", mor[-1], None),
        ("jdbc", "", "at_root", mor[-1], None),
    ], props=[("jdbc", "db", "exists", "true"), ("jdbc", "props_only", "owner", "bo")])
    return SqlCatalog(f"jdbc:sqlite:{db}", name="jdbc", warehouse=tmp_path / "wh")


@pytest.fixture
def v1(tmp_path: Path, java_tables: JavaTables) -> SqlCatalog:
    refs = _versions(java_tables, "db.v2_refs")
    view = _versions(java_tables, "db.sql_view")
    db = _make_db(tmp_path / "v1.db", v1=True, tables=[
        ("jdbc", "db", "refs", refs[-1], None, "TABLE"),
        ("jdbc", "db", "legacy", refs[0], None, None),  # written before the V1 migration
        ("jdbc", "db", "recent", view[-1], view[-2], "VIEW"),
        ("jdbc", "views_only", "v", view[0], None, "VIEW"),
    ])
    return SqlCatalog(f"sqlite:///{db}", name="jdbc")


def test_v0_schema_lists_and_loads(v0: SqlCatalog, java_tables: JavaTables) -> None:
    assert v0.list_namespaces() == [("db",), ("props_only",)]
    assert v0.list_namespaces("db") == [("db", "nested")]
    assert v0.list_tables("db") == [("db", "refs")]
    assert v0.list_tables("db.nested") == [("db", "nested", "mor")]
    assert v0.list_tables(()) == [("at_root",)]
    assert v0.list_tables("props_only") == []
    assert v0.list_views("db") == []  # V0 cannot hold views
    assert v0.all_tables() == [("at_root",), ("db", "nested", "mor"), ("db", "refs")]
    loaded = v0.load_table("db.refs")
    refs = _versions(java_tables, "db.v2_refs")
    assert (loaded.metadata_location, loaded.previous_metadata_location) == (refs[-1], refs[-2])
    assert loaded.metadata == icenb.open(refs[-1]).metadata
    assert v0.load_table(("at_root",)).metadata.format_version == 2


def test_v0_namespace_properties(v0: SqlCatalog) -> None:
    wh = v0.warehouse
    assert v0.namespace_properties("db") == {"location": f"{wh}/db"}  # "exists" is reserved
    assert v0.namespace_properties("props_only") == {"location": f"{wh}/props_only",
                                                     "owner": "bo"}
    assert v0.namespace_properties("db.nested") == {"location": f"{wh}/db/nested"}


def test_v1_schema_separates_tables_and_views(v1: SqlCatalog, java_tables: JavaTables) -> None:
    assert v1.list_namespaces() == [("db",), ("views_only",)]
    assert v1.list_tables("db") == [("db", "legacy"), ("db", "refs")]
    assert v1.list_views("db") == [("db", "recent")]
    assert v1.list_tables("views_only") == []
    assert v1.all_tables() == [("db", "legacy"), ("db", "refs")]
    assert v1.table_exists("db.legacy") and not v1.table_exists("db.recent")
    assert v1.view_exists("db.recent") and not v1.view_exists("db.refs")
    view = v1.load_view("db.recent")
    expected = load_view_metadata_file(
        str(java_tables.latest("db.sql_view").path))
    assert view.metadata == expected
    assert view.previous_metadata_location == _versions(java_tables, "db.sql_view")[-2]
    with pytest.raises(NoSuchTable, match="it is a view"):
        v1.load_table("db.recent")
    with pytest.raises(NoSuchView, match="it is a table"):
        v1.load_view("db.refs")
    with pytest.raises(NoSuchView):
        v1.load_view("db.nope")


def test_missing_table_and_namespace_name_catalog_and_database(v0: SqlCatalog) -> None:
    with pytest.raises(NoSuchTable) as info:
        v0.load_table("db.nope")
    assert "'db.nope'" in str(info.value) and "'jdbc'" in str(info.value)
    assert info.value.file == v0.database and info.value.value == ("db", "nope")
    with pytest.raises(NoSuchTable, match="namespace 'zz' does not exist"):
        v0.load_table("zz.t")
    for call in (v0.list_tables, v0.list_namespaces, v0.namespace_properties, v0.list_views):
        with pytest.raises(NoSuchNamespace) as ns_info:
            call("zz")
        assert ns_info.value.file == v0.database and "'zz'" in str(ns_info.value)
    # A namespace level cannot hold a dot: levels are stored joined with dots.
    with pytest.raises(ValidationError):
        v0.list_tables(("db.nested",))


def test_row_whose_metadata_file_is_missing(tmp_path: Path) -> None:
    gone = str(tmp_path / "wh" / "db" / "t" / "metadata" / "00003-abc.metadata.json")
    db = _make_db(tmp_path / "c.db", v1=True, tables=[
        ("default", "db", "t", gone, None, "TABLE"),
        ("default", "db", "no_pointer", None, None, "TABLE")])
    catalog = SqlCatalog(db)
    assert catalog.table_exists("db.t")
    with pytest.raises(NotFound) as info:
        catalog.load_table("db.t")
    assert info.value.file == gone and "'db.t'" in str(info.value)
    assert not isinstance(info.value, NoSuchTable)
    with pytest.raises(InvalidMetadata, match="no metadata_location"):
        catalog.load_table("db.no_pointer")


def test_broken_databases(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all, not even close" * 100)
    with pytest.raises(CorruptFile) as info:
        SqlCatalog(junk).list_namespaces()
    assert info.value.file == str(junk)

    missing = tmp_path / "missing.db"
    with pytest.raises(NotFound) as nf:
        SqlCatalog(missing).list_namespaces()
    assert nf.value.file == str(missing)
    assert not missing.exists()  # reading never creates a database

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE something_else (x INTEGER)")
    conn.close()
    with pytest.raises(InvalidMetadata, match="not an Iceberg SQL catalog"):
        SqlCatalog(other).list_namespaces()

    odd = tmp_path / "odd.db"
    with sqlite3.connect(odd) as conn:
        conn.execute("CREATE TABLE iceberg_tables (catalog_name TEXT, table_name TEXT)")
    conn.close()
    with pytest.raises(InvalidMetadata, match="table_namespace"):
        SqlCatalog(odd).list_tables("db")

    with pytest.raises(FileIOError, match="is a directory"):
        SqlCatalog(tmp_path).list_namespaces()


def test_truncated_database_is_corrupt(tmp_path: Path, java_tables: JavaTables) -> None:
    refs = _versions(java_tables, "db.v2_refs")
    db = _make_db(tmp_path / "c.db", v1=True, tables=[
        ("default", f"ns{i}", f"t{i}", refs[-1], None, "TABLE") for i in range(2000)])
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFile) as info:
        SqlCatalog(db).all_tables()
    assert info.value.file == str(db)


def test_empty_database_is_an_empty_catalog(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    db.write_bytes(b"")
    catalog = SqlCatalog(db)
    assert catalog.list_namespaces() == []
    assert catalog.all_tables() == []
    assert not catalog.table_exists("db.t")
    with pytest.raises(NoSuchNamespace):
        catalog.list_tables("db")


def test_database_without_namespace_properties_table(tmp_path: Path,
                                                     java_tables: JavaTables) -> None:
    db = tmp_path / "c.db"
    with sqlite3.connect(db) as conn:
        conn.execute(V0_TABLES)
        conn.execute("INSERT INTO iceberg_tables VALUES ('default','db','t',?,NULL)",
                     (_versions(java_tables, "db.v2_refs")[-1],))
    conn.close()
    catalog = SqlCatalog(db)
    assert catalog.list_namespaces() == [("db",)]
    assert catalog.namespace_properties("db") == {}
    assert catalog.load_table("db.t").metadata.format_version == 2


def test_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    absolute = str(tmp_path / "c.db")
    assert sqlite_path("c.db") == absolute
    assert sqlite_path(Path("c.db")) == absolute
    assert sqlite_path("sqlite:///c.db") == absolute  # SQLAlchemy: relative
    assert sqlite_path(f"sqlite:///{absolute}") == absolute  # sqlite:////abs
    assert sqlite_path(f"sqlite:///{absolute}?timeout=5") == absolute
    assert sqlite_path(f"jdbc:sqlite:{absolute}") == absolute
    assert sqlite_path("jdbc:sqlite:c.db") == absolute
    assert sqlite_path(f"jdbc:sqlite:file:{absolute}?cache=shared") == absolute
    assert sqlite_path(Path(absolute).as_uri()) == absolute
    spaced = tmp_path / "with space ü.db"
    assert sqlite_path(spaced.as_uri()) == str(spaced)
    for unsupported in ("postgresql://host/db", "jdbc:postgresql://host/db",
                        "sqlite:///:memory:", "jdbc:sqlite::memory:"):
        with pytest.raises(UnsupportedFeature):
            sqlite_path(unsupported)
    for bad in ("", "sqlite:c.db"):
        with pytest.raises(ValidationError):
            sqlite_path(bad)


def test_path_with_uri_characters(tmp_path: Path, java_tables: JavaTables) -> None:
    folder = tmp_path / "odd #?% dir ü"
    folder.mkdir()
    refs = _versions(java_tables, "db.v2_refs")
    db = _make_db(folder / "c.db", v1=False, tables=[("default", "db", "t", refs[-1], None)])
    assert SqlCatalog(db).list_tables("db") == [("db", "t")]


def test_readers_do_not_block_on_a_writer(tmp_path: Path, java_tables: JavaTables) -> None:
    refs = _versions(java_tables, "db.v2_refs")
    db = _make_db(tmp_path / "c.db", v1=True, tables=[("default", "db", "t", refs[-2], None,
                                                        "TABLE")])
    writer = sqlite3.connect(db)
    writer.execute("UPDATE iceberg_tables SET metadata_location = ?", (refs[-1],))
    # Uncommitted: a reader sees the committed pointer.
    assert SqlCatalog(db).table_metadata_location("db.t") == refs[-2]
    writer.commit()
    assert SqlCatalog(db).table_metadata_location("db.t") == refs[-1]
    writer.close()
    assert os.path.exists(db)
