"""Views in the filesystem catalog: icenb's layout ``<ns>/<view>/metadata/v<N>[.gz].view.json``
plus ``view-version-hint.text``, which Iceberg Java's HadoopCatalog does not take for a table
(its ``isTableDir`` looks for ``*.metadata.json``): checked with Java 1.10.2 itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from icenb.catalog import FilesystemCatalog
from icenb.catalog.filesystem import VIEW_VERSION_HINT
from icenb.errors import AlreadyExists, CommitConflict, NotFound
from tests.catalog._metadata import new_metadata
from tests.catalog._views import new_view, replaced
from tests.reference_fixtures import run_reference_batch


@pytest.fixture
def catalog(tmp_path: Path) -> FilesystemCatalog:
    (tmp_path / "wh").mkdir()
    c = FilesystemCatalog(tmp_path / "wh")
    c.create_namespace("db")
    return c


def _metadata_dir(c: FilesystemCatalog, name: str) -> Path:
    return Path(c.table_location(name)) / "metadata"


def test_layout_and_version_hint(catalog: FilesystemCatalog) -> None:
    v1 = catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    v2 = catalog.commit_view("db.v", v1.metadata_location, replaced(v1.metadata, "SELECT 2"))
    metadata = _metadata_dir(catalog, "db.v")
    assert sorted(p.name for p in metadata.iterdir()) == [
        "v1.gz.view.json", "v2.gz.view.json", VIEW_VERSION_HINT]
    assert (metadata / VIEW_VERSION_HINT).read_text() == "2"
    assert v2.metadata_location == str(metadata / "v2.gz.view.json")
    assert not list(metadata.glob("*.metadata.json"))  # what Java's isTableDir looks for
    # a stale or missing hint: newer versions are found as for tables
    (metadata / VIEW_VERSION_HINT).write_text("1")
    assert catalog.view_metadata_location("db.v") == v2.metadata_location
    (metadata / VIEW_VERSION_HINT).unlink()
    assert catalog.view_metadata_location("db.v") == v2.metadata_location
    (metadata / "v1.gz.view.json").unlink()
    (metadata / "v2.gz.view.json").unlink()
    with pytest.raises(NotFound):
        catalog.load_view("db.v")


def test_a_view_is_no_namespace(catalog: FilesystemCatalog) -> None:
    catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    assert catalog.list_namespaces("db") == []
    assert not catalog.namespace_exists("db.v")
    with pytest.raises(AlreadyExists, match="a view is there"):
        catalog.create_namespace("db.v")


def test_a_table_and_a_view_racing_for_one_name(catalog: FilesystemCatalog) -> None:
    """The table's files appear after the view checked the name: the view withdraws its file."""
    table = new_metadata(catalog.default_table_location("db.x"))
    original = catalog._write_view_version

    def table_sneaks_in(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)  # type: ignore[arg-type]
        catalog._write_version(("db", "x"), 1, table)
        return result

    catalog._write_view_version = table_sneaks_in  # type: ignore[method-assign,assignment]
    with pytest.raises(AlreadyExists, match="is a table"):
        catalog.create_view("db.x", new_view(catalog.default_view_location("db.x")))
    assert sorted(p.name for p in _metadata_dir(catalog, "db.x").iterdir()) == [
        "v1.metadata.json"]
    assert catalog.list_views("db") == [] and catalog.list_tables("db") == [("db", "x")]


def test_rename_moves_the_location_and_refuses_a_moving_view(
        catalog: FilesystemCatalog) -> None:
    created = catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    catalog.rename_view("db.v", "db.w")
    moved = catalog.load_view("db.w")
    assert moved.metadata.location == catalog.table_location("db.w")
    assert moved.metadata.versions == created.metadata.versions
    assert not Path(catalog.table_location("db.v")).exists()
    # a commit landing on the old name during the rename: the copy is withdrawn
    original = catalog._create_view

    def commit_meanwhile(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)  # type: ignore[arg-type]
        current = catalog.load_view("db.w")
        catalog.commit_view("db.w", current.metadata_location,
                            replaced(current.metadata, "SELECT 'late'"))
        return result

    catalog._create_view = commit_meanwhile  # type: ignore[method-assign,assignment]
    with pytest.raises(CommitConflict):
        catalog.rename_view("db.w", "db.z")
    assert catalog.list_views("db") == [("db", "w")]
    assert not Path(catalog.table_location("db.z")).exists()
    assert catalog.load_view("db.w").metadata.current_version.sql_for("spark") == "SELECT 'late'"


def test_java_hadoop_catalog_lists_the_table_not_the_view(catalog: FilesystemCatalog) -> None:
    catalog.create_table("db.t", new_metadata(catalog.default_table_location("db.t")))
    catalog.create_view("db.v", new_view(catalog.default_view_location("db.v")))
    catalog.create_view("db.p", new_view(catalog.default_view_location("db.p"), properties={
        "write.metadata.compression-codec": "none"}))
    [result] = run_reference_batch("java_hadoop_catalog.py",
                                   [{"op": "catalog", "warehouse": catalog.warehouse}])
    assert result["ok"], result
    assert sorted(result["tables"]) == ["db.t"]
    assert catalog.list_tables("db") == [("db", "t")]
    assert catalog.list_views("db") == [("db", "p"), ("db", "v")]
