"""Views in both catalogs (SQLite and filesystem): create, load, list, commit (swap and
conflict), drop, rename, register, and a table and a view never sharing a name.

View metadata is built with the spec dataclasses (tests/catalog/_views.py); what the catalogs
write is checked on disk: file names, gzip by the view property ``write.metadata.compression-
codec`` (Java's ``ViewProperties`` default for views is gzip), and no file left by a failed call.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from icenb.catalog import (
    Catalog,
    FilesystemCatalog,
    LoadedTable,
    LoadedView,
    SqlCatalog,
    open_warehouse_catalog,
)
from icenb.errors import (
    AlreadyExists,
    CommitConflict,
    InvalidMetadata,
    NamespaceNotEmpty,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    UnsupportedFeature,
)
from icenb.io.metadata_files import load_view_metadata_file
from icenb.spec.view_metadata import view_metadata_to_json
from tests.catalog._metadata import new_metadata
from tests.catalog._views import new_view, replaced

PLAIN = {"write.metadata.compression-codec": "none"}


@pytest.fixture(params=["sql", "filesystem"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    root = tmp_path / "wh"
    c: Catalog
    if request.param == "sql":
        c = open_warehouse_catalog(root)
    else:
        root.mkdir()
        c = FilesystemCatalog(root)
    c.create_namespace("db")
    return c


def _root(c: Catalog) -> Path:
    if isinstance(c, SqlCatalog):
        return Path(c.warehouse or "")
    assert isinstance(c, FilesystemCatalog)
    return Path(c.warehouse)


def _files(c: Catalog) -> set[str]:
    """Every file under the warehouse but the SQLite database."""
    return {str(p.relative_to(_root(c))) for p in _root(c).rglob("*")
            if p.is_file() and p.name != "catalog.db"}


def _create_view(c: Catalog, name: str = "db.v", sql: str = "SELECT id FROM db.t",
                 **props: str) -> LoadedView:
    return c.create_view(name, new_view(c.default_view_location(name), sql, properties=props))


def _create_table(c: Catalog, name: str = "db.t") -> LoadedTable:
    return c.create_table(name, new_metadata(c.default_table_location(name)))


def _sql(c: Catalog, name: str) -> str | None:
    return c.load_view(name).metadata.current_version.sql_for("spark")


# --------------------------------------------------------------------------- create / load / list


def test_create_load_and_list(catalog: Catalog) -> None:
    metadata = new_view(catalog.default_view_location("db.v"))
    created = catalog.create_view("db.v", metadata)
    loaded = catalog.load_view("db.v")
    assert loaded.metadata_location == created.metadata_location
    assert view_metadata_to_json(loaded.metadata) == view_metadata_to_json(metadata)
    assert loaded.metadata == created.metadata
    assert catalog.view_metadata_location("db.v") == created.metadata_location
    assert catalog.list_views("db") == [("db", "v")]
    assert catalog.view_exists("db.v") and not catalog.table_exists("db.v")
    assert catalog.list_tables("db") == []
    assert catalog.list_namespaces() == [("db",)]  # a view is no namespace
    # gzip by default, as Java writes views
    name = Path(created.metadata_location).name
    assert name.endswith(".gz.metadata.json" if isinstance(catalog, SqlCatalog)
                         else ".gz.view.json")
    raw = Path(created.metadata_location).read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert json.loads(gzip.decompress(raw))["view-uuid"] == metadata.view_uuid


def test_plain_or_gzip_by_the_view_property(catalog: Catalog) -> None:
    created = _create_view(catalog, **PLAIN)
    raw = Path(created.metadata_location).read_bytes()
    assert json.loads(raw)["properties"] == PLAIN
    assert ".gz." not in Path(created.metadata_location).name
    # switching the property back to gzip in a commit gzips the next file
    back = replaced(created.metadata, "SELECT 2", properties={
        "write.metadata.compression-codec": "gzip"})
    committed = catalog.commit_view("db.v", created.metadata_location, back)
    assert ".gz." in Path(committed.metadata_location).name
    assert Path(committed.metadata_location).read_bytes()[:2] == b"\x1f\x8b"
    assert _sql(catalog, "db.v") == "SELECT 2"
    bad = replaced(committed.metadata, "SELECT 3", properties={
        "write.metadata.compression-codec": "zstd"})
    before = _files(catalog)
    with pytest.raises(ValueError, match="compression"):
        catalog.commit_view("db.v", committed.metadata_location, bad)
    assert _files(catalog) == before


def test_commit_none_creates(catalog: Catalog) -> None:
    created = catalog.commit_view("db.v", None, new_view(catalog.default_view_location("db.v")))
    assert catalog.load_view("db.v").metadata_location == created.metadata_location


# --------------------------------------------------------------------------- commits


def test_commit_swaps_and_two_writers_from_one_base(catalog: Catalog) -> None:
    base = _create_view(catalog)
    first = catalog.commit_view("db.v", base.metadata_location,
                                replaced(base.metadata, "SELECT 1 AS id"))
    assert first.metadata_location != base.metadata_location
    loaded = catalog.load_view("db.v")
    assert loaded.metadata_location == first.metadata_location
    assert [v.version_id for v in loaded.metadata.versions] == [1, 2]
    assert [e.version_id for e in loaded.metadata.version_log] == [1, 2]
    if isinstance(catalog, SqlCatalog):
        assert loaded.previous_metadata_location == base.metadata_location
    # a second writer based on the same (now stale) base loses; its file is gone
    before = _files(catalog)
    with pytest.raises(CommitConflict) as info:
        catalog.commit_view("db.v", base.metadata_location,
                            replaced(base.metadata, "SELECT 2 AS id"))
    assert base.metadata_location in str(info.value)
    assert _files(catalog) == before
    assert catalog.load_view("db.v").metadata_location == first.metadata_location
    assert _sql(catalog, "db.v") == "SELECT 1 AS id"
    # the winner's file is the next version
    if isinstance(catalog, SqlCatalog):
        assert Path(base.metadata_location).name.startswith("00000-")
        assert Path(first.metadata_location).name.startswith("00001-")
    else:
        assert Path(first.metadata_location).name == "v2.gz.view.json"


def test_commit_to_a_missing_view_conflicts(catalog: Catalog) -> None:
    base = _create_view(catalog)
    catalog.drop_view("db.v")
    before = _files(catalog)
    with pytest.raises(CommitConflict, match="no longer exists"):
        catalog.commit_view("db.v", base.metadata_location, replaced(base.metadata, "SELECT 2"))
    assert _files(catalog) == before
    assert not catalog.view_exists("db.v")


# --------------------------------------------------------------------------- drop


def test_drop(catalog: Catalog) -> None:
    _create_view(catalog)
    _create_table(catalog)
    with pytest.raises(NamespaceNotEmpty):
        catalog.drop_namespace("db")
    with pytest.raises(NoSuchView, match="it is a table"):
        catalog.drop_view("db.t")
    catalog.drop_table("db.t")
    with pytest.raises(NamespaceNotEmpty):  # the view alone keeps it
        catalog.drop_namespace("db")
    catalog.drop_view("db.v")
    assert not catalog.view_exists("db.v") and catalog.list_views("db") == []
    with pytest.raises(NoSuchView):
        catalog.drop_view("db.v")
    with pytest.raises(NoSuchView):
        catalog.load_view("db.v")
    catalog.drop_namespace("db")
    assert not catalog.namespace_exists("db")


# --------------------------------------------------------------------------- rename


def test_rename(catalog: Catalog) -> None:
    created = _create_view(catalog)
    uuid = created.metadata.view_uuid
    catalog.create_namespace("db2")
    catalog.rename_view("db.v", "db2.w")
    assert catalog.list_views("db") == [] and catalog.list_views("db2") == [("db2", "w")]
    assert not catalog.view_exists("db.v")
    moved = catalog.load_view("db2.w")
    assert moved.metadata.view_uuid == uuid
    assert moved.metadata.versions == created.metadata.versions
    assert moved.metadata.version_log == created.metadata.version_log
    # and it commits under its new name
    catalog.commit_view("db2.w", moved.metadata_location, replaced(moved.metadata, "SELECT 9"))
    assert _sql(catalog, "db2.w") == "SELECT 9"
    catalog.rename_view("db2.w", "db2.w")  # to itself: nothing happens
    assert catalog.view_exists("db2.w")
    with pytest.raises(NoSuchView):
        catalog.rename_view("db.v", "db.x")


def test_rename_refusals_change_nothing(catalog: Catalog) -> None:
    _create_view(catalog)
    _create_view(catalog, "db.other")
    _create_table(catalog)
    before = _files(catalog)
    with pytest.raises(AlreadyExists, match=re.escape("'db.t' is a table")):
        catalog.rename_view("db.v", "db.t")
    with pytest.raises(AlreadyExists, match=re.escape("'db.other' is a view")):
        catalog.rename_view("db.v", "db.other")
    with pytest.raises(NoSuchNamespace):
        catalog.rename_view("db.v", "nope.v")
    with pytest.raises(NoSuchView, match="it is a table"):
        catalog.rename_view("db.t", "db.w")
    assert _files(catalog) == before
    assert catalog.list_views("db") == [("db", "other"), ("db", "v")]
    assert catalog.list_tables("db") == [("db", "t")]


# --------------------------------------------------------------------------- register


def test_register(catalog: Catalog, tmp_path: Path) -> None:
    created = _create_view(catalog, sql="SELECT 42 AS id")
    outside = tmp_path / "elsewhere" / "00007-x.gz.metadata.json"
    outside.parent.mkdir()
    shutil.copy(created.metadata_location, outside)
    registered = catalog.register_view("db.r", str(outside))
    assert registered.metadata == created.metadata
    loaded = catalog.load_view("db.r")
    assert loaded.metadata.view_uuid == created.metadata.view_uuid
    assert loaded.metadata.versions == created.metadata.versions
    assert catalog.list_views("db") == [("db", "r"), ("db", "v")]
    # it commits like any view
    catalog.commit_view("db.r", loaded.metadata_location, replaced(loaded.metadata, "SELECT 1"))
    assert _sql(catalog, "db.r") == "SELECT 1"


def test_register_refusals_write_nothing(catalog: Catalog) -> None:
    view = _create_view(catalog)
    table = _create_table(catalog)
    before = _files(catalog)
    with pytest.raises(InvalidMetadata, match="table metadata"):
        catalog.register_view("db.x", table.metadata_location)
    with pytest.raises(AlreadyExists, match=re.escape("'db.t' is a table")):
        catalog.register_view("db.t", view.metadata_location)
    with pytest.raises(AlreadyExists, match=re.escape("'db.v' is a view")):
        catalog.register_view("db.v", view.metadata_location)
    with pytest.raises(AlreadyExists, match=re.escape("'db.v' is a view")):
        catalog.register_table("db.v", table.metadata_location)
    with pytest.raises(NoSuchNamespace):
        catalog.register_view("nope.x", view.metadata_location)
    assert _files(catalog) == before
    assert catalog.list_views("db") == [("db", "v")]
    assert catalog.list_tables("db") == [("db", "t")]


# --------------------------------------------------------------------------- names


def test_a_table_and_a_view_cannot_share_a_name(catalog: Catalog) -> None:
    _create_table(catalog)
    _create_view(catalog)
    before = _files(catalog)
    taken = "cannot create {} '{}': '{}' is a {}"
    with pytest.raises(AlreadyExists, match=re.escape(taken.format("view", "db.t", "db.t",
                                                                   "table"))):
        _create_view(catalog, "db.t")
    with pytest.raises(AlreadyExists, match=re.escape(taken.format("table", "db.v", "db.v",
                                                                   "view"))):
        _create_table(catalog, "db.v")
    with pytest.raises(AlreadyExists, match=re.escape("'db.v' is a view")):
        _create_view(catalog, "db.v")
    if isinstance(catalog, SqlCatalog):
        with pytest.raises(AlreadyExists, match=re.escape("'db.v' is a view")):
            catalog.rename_table("db.t", "db.v")
    else:  # as Java's HadoopCatalog, a filesystem catalog renames no tables
        with pytest.raises(UnsupportedFeature):
            catalog.rename_table("db.t", "db.v")
    assert _files(catalog) == before
    with pytest.raises(NoSuchTable, match="it is a view"):
        catalog.load_table("db.v")
    with pytest.raises(NoSuchView, match="it is a table"):
        catalog.load_view("db.t")
    assert catalog.list_tables("db") == [("db", "t")]
    assert catalog.list_views("db") == [("db", "v")]
    assert catalog.all_tables() == [("db", "t")]


def test_create_in_a_missing_namespace_writes_nothing(catalog: Catalog) -> None:
    before = _files(catalog)
    location = catalog.default_view_location("db.v").replace("/db/", "/nope/")
    with pytest.raises(NoSuchNamespace):
        catalog.create_view("nope.v", new_view(location))
    assert _files(catalog) == before


def test_loaded_metadata_is_what_the_file_holds(catalog: Catalog) -> None:
    created = _create_view(catalog, sql="SELECT 'é' AS s")
    assert load_view_metadata_file(created.metadata_location).current_version.sql_for(
        "SPARK") == "SELECT 'é' AS s"
