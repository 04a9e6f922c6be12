"""Tables loaded through a catalog: ``icenb.load_table(catalog_or_location, "ns.table")``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

import icenb
from icenb.errors import NoSuchTable
from tests.reference_fixtures import JavaTables


def test_load_from_a_warehouse_directory(java_tables: JavaTables) -> None:
    warehouse = java_tables.location("db.v2_refs").parent.parent
    table = icenb.load_table(warehouse, "db.v2_refs")
    assert table.identifier == ("db", "v2_refs")
    assert isinstance(table.catalog, icenb.FilesystemCatalog)
    direct = icenb.open(java_tables.location("db.v2_refs"))
    assert table.metadata.source_file == direct.metadata.source_file
    assert table.scan().to_arrow().sort_by("id").equals(direct.scan().to_arrow().sort_by("id"))
    with pytest.raises(NoSuchTable):
        icenb.load_table(warehouse, "db.nope")


def test_refresh_asks_the_catalog_for_new_commits(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    peer = PyIcebergSqlCatalog("default", uri=uri, warehouse=(tmp_path / "wh").as_uri())
    peer.create_namespace("db")
    schema = pa.schema([pa.field("id", pa.int64())])
    written = peer.create_table("db.events", schema)
    written.append(pa.table({"id": [1, 2]}, schema=schema))

    table = icenb.load_table(icenb.open_catalog(uri), "db.events")
    assert table.scan().count() == 2
    written.append(pa.table({"id": [3]}, schema=schema))
    assert table.scan().count() == 2  # the loaded state until refreshed
    assert table.refresh().scan().count() == 3
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
