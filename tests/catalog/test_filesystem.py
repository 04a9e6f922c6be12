"""FilesystemCatalog: the Hadoop layout of Iceberg Java's HadoopCatalog.

The Java-written corpus is a HadoopCatalog warehouse (``<warehouse>/db/<table>``); other
layouts are built from copies of its metadata directories.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.catalog import Catalog, FilesystemCatalog, LoadedTable, SqlCatalog, open_catalog
from icenb.errors import (
    IcebergError,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    NotFound,
    ValidationError,
)
from icenb.table import Table
from tests.reference_fixtures import JavaTables


def _rows(table: pa.Table) -> list[str]:
    # repr-keyed so that NaN == NaN and the order of rows does not matter.
    return sorted(repr(r) for r in table.to_pylist())


def _as_table(loaded: LoadedTable) -> Table:
    return Table(loaded.metadata, loaded.io, opened_from=loaded.metadata_location)


def _scan_rows(table: Table) -> list[str] | type[BaseException]:
    try:
        return _rows(table.scan().to_arrow())
    except IcebergError as e:  # a type icenb cannot read yet: both paths must fail alike
        return type(e)


@pytest.fixture(scope="module")
def java_warehouse(java_tables: JavaTables) -> FilesystemCatalog:
    return FilesystemCatalog(java_tables.root / "warehouse", name="hadoop")


def _hadoop_names(java_tables: JavaTables) -> list[str]:
    return sorted(e["name"] for e in java_tables.entries("table") if e["catalog"] == "hadoop")


# --------------------------------------------------------------------------- the Java corpus


def test_java_warehouse_lists_its_namespace_and_tables(
        java_warehouse: FilesystemCatalog, java_tables: JavaTables) -> None:
    assert java_warehouse.list_namespaces() == [("db",)]
    assert java_warehouse.list_namespaces("db") == []
    expected = [tuple(n.split(".")) for n in _hadoop_names(java_tables)]
    assert java_warehouse.list_tables("db") == expected
    assert java_warehouse.list_tables(("db",)) == expected
    assert java_warehouse.all_tables() == expected
    assert java_warehouse.list_tables(()) == []
    assert java_warehouse.list_views("db") == []


def test_java_tables_load_as_icenb_open_reads_their_directory(
        java_warehouse: FilesystemCatalog, java_tables: JavaTables) -> None:
    names = _hadoop_names(java_tables)
    assert len(names) >= 30
    for name in names:
        loaded = java_warehouse.load_table(name)
        assert loaded.identifier == tuple(name.split("."))
        assert loaded.metadata_location == str(java_tables.latest(name).path)
        assert java_warehouse.table_metadata_location(name) == loaded.metadata_location
        assert java_warehouse.table_exists(name)
        opened = icenb.open(java_tables.location(name))
        assert loaded.metadata == opened.metadata
        assert _scan_rows(_as_table(loaded)) == _scan_rows(opened), name


def test_java_tables_rows_include_deletes(java_warehouse: FilesystemCatalog) -> None:
    for name in ("db.v2_merge_on_read", "db.v3_deletion_vectors"):
        table = _as_table(java_warehouse.load_table(name))
        assert 0 < table.scan().to_arrow().num_rows == table.scan().count()


def test_namespace_properties_are_only_the_location(java_warehouse: FilesystemCatalog) -> None:
    assert java_warehouse.namespace_properties("db") == {
        "location": f"{java_warehouse.warehouse}/db"}
    assert java_warehouse.namespace_properties(()) == {"location": java_warehouse.warehouse}


def test_a_table_is_not_a_namespace(java_warehouse: FilesystemCatalog) -> None:
    assert java_warehouse.namespace_exists("db")
    assert not java_warehouse.namespace_exists("db.v2_refs")
    with pytest.raises(NoSuchNamespace):
        java_warehouse.list_tables("db.v2_refs")
    with pytest.raises(NoSuchNamespace):
        java_warehouse.list_namespaces("db.v2_refs")


# --------------------------------------------------------------------------- layouts


@pytest.fixture
def nested(tmp_path: Path, java_tables: JavaTables) -> FilesystemCatalog:
    """A warehouse with nested, unicode, dotted and hidden names (copied metadata dirs)."""
    wh = tmp_path / "wh"

    def copy_table(name: str, *path: str) -> None:
        src = java_tables.location(name) / "metadata"
        shutil.copytree(src, wh.joinpath(*path, "metadata"))

    copy_table("db.v2_refs", "a", "b", "c", "t1")
    copy_table("db.v2_merge_on_read", "a", "t0")
    copy_table("db.v1_gzip", "données", "tâble ü")
    copy_table("db.v2_properties", "my.ns", "t.x")
    copy_table("db.v2_refs", ".ipynb_checkpoints", "hidden")
    (wh / "a" / "b" / "empty").mkdir()
    (wh / "a" / "b" / "no_metadata_files" / "metadata").mkdir(parents=True)
    (wh / "a" / "b" / "no_metadata_files" / "metadata" / "notes.txt").write_text("x")
    (wh / "a" / "stray-file.txt").write_text("not a namespace")
    return FilesystemCatalog(wh)


def test_nested_namespaces_are_nested_directories(nested: FilesystemCatalog) -> None:
    assert nested.list_namespaces() == [("a",), ("données",), ("my.ns",)]
    assert nested.list_namespaces("a") == [("a", "b")]
    # A directory whose metadata/ holds no metadata file is a namespace, as in Java.
    assert nested.list_namespaces("a.b") == [("a", "b", "c"), ("a", "b", "empty"),
                                             ("a", "b", "no_metadata_files")]
    assert nested.list_namespaces(("a", "b", "c")) == []
    assert nested.list_tables("a") == [("a", "t0")]
    assert nested.list_tables("a.b") == []
    assert nested.list_tables("a.b.c") == [("a", "b", "c", "t1")]
    assert nested.all_tables() == [("a", "b", "c", "t1"), ("a", "t0"),
                                   ("données", "tâble ü"), ("my.ns", "t.x")]


def test_unicode_and_dotted_names(nested: FilesystemCatalog, java_tables: JavaTables) -> None:
    gz = nested.load_table("données.tâble ü")
    assert gz.metadata_location.endswith(".gz.metadata.json")
    assert gz.metadata == icenb.open(java_tables.location("db.v1_gzip")).metadata
    # Dots inside a level need the tuple form; a string splits on every dot.
    dotted = nested.load_table(("my.ns", "t.x"))
    assert dotted.metadata.properties == icenb.open(
        java_tables.location("db.v2_properties")).metadata.properties
    assert nested.table_exists(("my.ns", "t.x"))
    assert not nested.table_exists("my.ns.t.x")
    with pytest.raises(NoSuchTable):
        nested.load_table("my.ns.t.x")
    assert nested.namespace_properties(("my.ns",))["location"].endswith("/wh/my.ns")


def test_hidden_directories_are_skipped(nested: FilesystemCatalog) -> None:
    assert (".ipynb_checkpoints",) not in nested.list_namespaces()


def test_loaded_nested_table_reads_rows(nested: FilesystemCatalog,
                                        java_tables: JavaTables) -> None:
    loaded = nested.load_table("a.t0")
    expected = icenb.open(java_tables.location("db.v2_merge_on_read")).scan().to_arrow()
    assert _rows(_as_table(loaded).scan().to_arrow()) == _rows(expected)


def test_stale_version_hint_takes_newer_versions(nested: FilesystemCatalog) -> None:
    metadata_dir = Path(nested.table_location("a.b.c.t1")) / "metadata"
    newest = nested.table_metadata_location("a.b.c.t1")
    (metadata_dir / "version-hint.text").write_text("1")
    assert nested.table_metadata_location("a.b.c.t1") == newest


# --------------------------------------------------------------------------- errors


def test_missing_table_names_catalog_identifier_and_location(nested: FilesystemCatalog) -> None:
    with pytest.raises(NoSuchTable) as info:
        nested.load_table("a.nope")
    err = info.value
    assert "'a.nope'" in str(err) and "'default'" in str(err)
    assert err.file == nested.table_location("a.nope")
    assert err.value == ("a", "nope")
    with pytest.raises(NoSuchTable, match="namespace 'zz' does not exist"):
        nested.load_table("zz.t")
    assert not nested.table_exists("a.nope")
    # A namespace is not a table.
    with pytest.raises(NoSuchTable):
        nested.load_table("a.b")


def test_missing_namespace(nested: FilesystemCatalog) -> None:
    for call in (nested.list_tables, nested.list_namespaces, nested.namespace_properties,
                 nested.list_views):
        with pytest.raises(NoSuchNamespace) as info:
            call("a.zz")
        assert info.value.file == nested.namespace_location("a.zz")
        assert "'a.zz'" in str(info.value)
    assert not nested.namespace_exists("a.zz")


def test_missing_warehouse(tmp_path: Path) -> None:
    catalog = FilesystemCatalog(tmp_path / "absent")
    with pytest.raises(NoSuchNamespace, match="warehouse"):
        catalog.list_namespaces()
    with pytest.raises(NoSuchTable):
        catalog.load_table("db.t")


def test_version_hint_naming_a_missing_version(nested: FilesystemCatalog) -> None:
    metadata_dir = Path(nested.table_location("a.b.c.t1")) / "metadata"
    (metadata_dir / "version-hint.text").write_text("999")
    with pytest.raises(NotFound) as info:
        nested.load_table("a.b.c.t1")
    assert info.value.file == str(metadata_dir / "version-hint.text")


def test_metadata_file_vanishing_is_not_found(nested: FilesystemCatalog) -> None:
    location = nested.table_metadata_location("a.t0")
    Path(location).unlink()
    with pytest.raises(NotFound) as info:
        nested.load_table("a.t0")
    assert not isinstance(info.value, NoSuchTable)


def test_bad_identifiers(nested: FilesystemCatalog) -> None:
    for bad in ("", (), ("a", ""), "a..t"):
        with pytest.raises(ValidationError):
            nested.load_table(bad)
    for bad_level in (("..", "t"), ("a/b", "t"), ("a", "..")):
        with pytest.raises(ValidationError):
            nested.load_table(bad_level)
    with pytest.raises(ValidationError):
        nested.list_tables(("a", "."))
    with pytest.raises(ValidationError):
        nested.load_table(42)  # type: ignore[arg-type]


def test_a_table_is_not_a_view(nested: FilesystemCatalog) -> None:
    assert not nested.view_exists("a.t0")
    with pytest.raises(NoSuchView, match="it is a table"):
        nested.load_view("a.t0")


# --------------------------------------------------------------------------- open_catalog


def test_open_catalog_picks_the_kind(tmp_path: Path, nested: FilesystemCatalog) -> None:
    fs = open_catalog(nested.warehouse)
    assert isinstance(fs, FilesystemCatalog) and fs.all_tables() == nested.all_tables()
    db = tmp_path / "catalog.db"
    db.write_bytes(b"")
    for location in (db, str(db), f"sqlite:///{db}", f"jdbc:sqlite:{db}"):
        catalog: Catalog = open_catalog(location, name="x")
        assert isinstance(catalog, SqlCatalog) and catalog.name == "x"
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValidationError, match="not a SQLite database"):
        open_catalog(text)
    with pytest.raises(NotFound):
        open_catalog(tmp_path / "absent")
    with pytest.raises(ValidationError):
        open_catalog(nested.warehouse, warehouse="/elsewhere")


def test_reprs(nested: FilesystemCatalog) -> None:
    text: Any = repr(nested)
    assert "FilesystemCatalog" in text and nested.warehouse in text
