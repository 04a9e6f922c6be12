"""Views in the SQLite catalog as Iceberg Java's ``JdbcCatalog`` keeps them: rows with
``iceberg_type = 'VIEW'`` (tables ``'TABLE'``), ``<NNNNN>-<uuid>.gz.metadata.json`` files under
``<location>/metadata`` or ``write.metadata.path``, a V0 database refusing views; PyIceberg 0.12 on
the same database; Java's view metadata parser reading what icenb wrote."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog
from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError

from icenb.catalog import SqlCatalog, open_warehouse_catalog
from icenb.errors import UnsupportedFeature
from icenb.io.metadata_files import load_view_metadata_file
from icenb.spec.view_metadata import view_metadata_to_json
from tests.catalog._metadata import new_metadata
from tests.catalog._views import new_view, replaced
from tests.catalog.test_sql import PROPERTIES, V0_TABLES

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    c = open_warehouse_catalog(tmp_path / "wh")
    c.create_namespace("db")
    return c


def _rows(c: SqlCatalog) -> list[tuple[Any, ...]]:
    with sqlite3.connect(c.database) as conn:
        rows = conn.execute("SELECT table_namespace, table_name, iceberg_type, metadata_location, "
                            "previous_metadata_location FROM iceberg_tables ORDER BY 1, 2"
                            ).fetchall()
    conn.close()
    return rows


def test_rows_are_typed_as_javas_and_files_numbered(catalog: SqlCatalog) -> None:
    t = catalog.create_table("db.t", new_metadata(catalog.default_table_location("db.t")))
    v0 = catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    v1 = catalog.commit_view("db.v", v0.metadata_location, replaced(v0.metadata, "SELECT 2"))
    v2 = catalog.commit_view("db.v", v1.metadata_location, replaced(v1.metadata, "SELECT 3"))
    assert _rows(catalog) == [
        ("db", "t", "TABLE", t.metadata_location, None),
        ("db", "v", "VIEW", v2.metadata_location, v1.metadata_location),
    ]
    metadata_dir = Path(catalog.warehouse or "") / "db" / "v" / "metadata"
    for n, loaded in enumerate((v0, v1, v2)):
        assert re.fullmatch(f"0000{n}-{UUID}\\.gz\\.metadata\\.json",
                            Path(loaded.metadata_location).name)
        assert Path(loaded.metadata_location).parent == metadata_dir
    assert catalog.load_view("db.v").previous_metadata_location == v1.metadata_location
    # a view whose pointer is no metastore name: the next file is 00000-... (Java's -1 + 1)
    outside = metadata_dir.parent / "custom.json"
    outside.write_bytes(Path(v2.metadata_location).read_bytes())
    reg = catalog.register_view("db.r", str(outside))
    nxt = catalog.commit_view("db.r", reg.metadata_location, replaced(reg.metadata, "SELECT 4"))
    assert Path(nxt.metadata_location).name.startswith("00000-")


def test_write_metadata_path(catalog: SqlCatalog, tmp_path: Path) -> None:
    elsewhere = tmp_path / "view-metadata"
    created = catalog.create_view("db.v", new_view(
        catalog.default_view_location("db.v"),
        properties={"write.metadata.path": str(elsewhere) + "/"}))
    assert Path(created.metadata_location).parent == elsewhere
    assert not (Path(catalog.warehouse or "") / "db" / "v").exists()


def test_drop_keeps_the_file_unless_purged(catalog: SqlCatalog) -> None:
    created = catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    catalog.drop_view("db.v")
    assert Path(created.metadata_location).exists()
    catalog.register_view("db.v", created.metadata_location)  # a dropped view comes back
    assert catalog.load_view("db.v").metadata == created.metadata
    catalog.drop_view("db.v", purge=True)  # what Java's dropView does
    assert not Path(created.metadata_location).exists()
    assert _rows(catalog) == []


def test_a_v0_database_refuses_views(tmp_path: Path) -> None:
    db = tmp_path / "v0.db"
    with sqlite3.connect(db) as conn:
        conn.execute(V0_TABLES)
        conn.execute(PROPERTIES)
        conn.execute("INSERT INTO iceberg_namespace_properties VALUES ('default','db','exists',"
                     "'true')")
    conn.close()
    wh = tmp_path / "wh"
    c = SqlCatalog(db, warehouse=wh)
    other = open_warehouse_catalog(tmp_path / "other")
    other.create_namespace("db")
    elsewhere = other.create_view("db.v", new_view(other.default_view_location("db.v")))
    schema_before = _schema(db)
    for call in (lambda: c.create_view("db.v", new_view(c.default_view_location("db.v"))),
                 lambda: c.register_view("db.v", elsewhere.metadata_location),
                 lambda: c.commit_view("db.v", elsewhere.metadata_location, elsewhere.metadata),
                 lambda: c.drop_view("db.v"),
                 lambda: c.rename_view("db.v", "db.w")):
        with pytest.raises(UnsupportedFeature, match="V0 schema") as info:
            call()
        assert info.value.file == str(db)
    assert not wh.exists()  # nothing written
    assert _schema(db) == schema_before  # never migrated
    assert c.list_views("db") == []
    # tables still work in V0
    c.create_table("db.t", new_metadata(c.default_table_location("db.t")))
    assert c.list_tables("db") == [("db", "t")]


def _schema(db: Path) -> list[Any]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    return rows


# --------------------------------------------------------------------------- PyIceberg 0.12


def test_pyiceberg_sees_the_tables_and_not_the_views(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", new_metadata(catalog.default_table_location("db.t")))
    view = catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    peer = PyIcebergSqlCatalog("default", uri=catalog.uri,
                               warehouse=Path(catalog.warehouse or "").as_uri())
    assert peer.list_tables("db") == [("db", "t")]
    assert peer.load_table("db.t").metadata_location == table.metadata_location
    assert peer.table_exists("db.t") and not peer.table_exists("db.v")
    with pytest.raises(NoSuchTableError):
        peer.load_table("db.v")
    # PyIceberg 0.12's SqlCatalog has no view support at all
    for call in (lambda: peer.list_views("db"), lambda: peer.view_exists("db.v"),
                 lambda: peer.load_view("db.v"), lambda: peer.drop_view("db.v")):
        with pytest.raises(NotImplementedError):
            call()
    # ... yet its primary key keeps it from taking a view's name
    with pytest.raises(TableAlreadyExistsError):
        peer.register_table("db.v", table.metadata_location)
    with pytest.raises(NoSuchTableError):  # its drop and rename filter on the table type
        peer.drop_table("db.v")
    assert catalog.list_views("db") == [("db", "v")]
    assert peer.list_tables("db") == [("db", "t")]
    assert ("db", "v", "VIEW", view.metadata_location, None) in _rows(catalog)


# --------------------------------------------------------------------------- Java


def test_java_parses_icenb_view_metadata(
        catalog: SqlCatalog, java_canonical: Callable[..., list[dict[str, Any]]]) -> None:
    v0 = catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    v1 = catalog.commit_view("db.v", v0.metadata_location, replaced(v0.metadata, "SELECT 2"))
    plain = catalog.create_view("db.p", new_view(
        catalog.default_view_location("db.p"),
        properties={"write.metadata.compression-codec": "none"}))
    results = java_canonical([v1.metadata_location, plain.metadata_location], kind="view")
    for result, loaded in zip(results, (v1, plain), strict=True):
        assert result["ok"], result
        ours = view_metadata_to_json(load_view_metadata_file(loaded.metadata_location))
        java = result["canonical"]
        assert java["view-uuid"] == ours["view-uuid"]
        assert java["current-version-id"] == ours["current-version-id"]
        assert java["versions"] == ours["versions"]
        assert java["version-log"] == ours["version-log"]
        assert java["schemas"] == ours["schemas"]
        assert result["input_equal"], result["input_diff"]
