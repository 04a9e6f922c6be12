"""icenb's warehouse catalog against its peer PyIceberg 0.12 (``SqlCatalog`` on SQLite): each
lists, loads and commits on what the other wrote; a purge deletes every file of a table that
PyIceberg filled with data (icenb's manifest readers find them)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

from icenb.catalog import FilesystemCatalog, SqlCatalog, open_warehouse_catalog, reachable_files
from icenb.table import Table
from tests.catalog._metadata import new_metadata, updated

ROWS = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])


def _peer(catalog: SqlCatalog) -> PyIcebergSqlCatalog:
    return PyIcebergSqlCatalog("default", uri=catalog.uri,
                               warehouse=Path(catalog.warehouse or "").as_uri())


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_file()}


def test_pyiceberg_lists_loads_and_commits_icenb_tables(tmp_path: Path) -> None:
    wh = open_warehouse_catalog(tmp_path / "wh")
    wh.create_namespace("db", {"owner": "ana"})
    created = wh.create_table("db.t", new_metadata(wh.default_table_location("db.t")))
    committed = wh.commit_table("db.t", created.metadata_location,
                                updated(created.metadata, set_properties={"k": "v"}))
    peer = _peer(wh)
    assert peer.list_namespaces() == [("db",)]
    assert peer.load_namespace_properties("db") == {"owner": "ana"}
    assert peer.list_tables("db") == [("db", "t")]
    table = peer.load_table("db.t")
    assert table.metadata_location == committed.metadata_location
    assert table.properties["k"] == "v"
    assert [f.name for f in table.schema().fields] == ["id", "s"]
    assert [e.metadata_file for e in table.metadata.metadata_log] == [created.metadata_location]

    # PyIceberg commits on icenb's row; icenb sees it and commits on top.
    table.append(pa.table({"id": [1, 2], "s": ["a", None]}, schema=ROWS))
    theirs = wh.load_table("db.t")
    assert theirs.metadata_location == peer.load_table("db.t").metadata_location
    assert theirs.previous_metadata_location == committed.metadata_location
    assert len(theirs.metadata.snapshots) == 1
    ours = wh.commit_table("db.t", theirs.metadata_location,
                           updated(theirs.metadata, set_properties={"after": "pyiceberg"}),
                           base_metadata=theirs.metadata)
    again = peer.load_table("db.t")
    assert again.metadata_location == ours.metadata_location
    assert again.properties["after"] == "pyiceberg"
    assert sorted(again.scan().to_arrow().column("id").to_pylist()) == [1, 2]
    assert Table(ours.metadata, ours.io, opened_from=ours.metadata_location).scan().to_arrow(
    ).num_rows == 2

    # A table PyIceberg creates in the same database is an icenb table too.
    peer.create_table("db.made_by_peer", ROWS)
    assert wh.list_tables("db") == [("db", "made_by_peer"), ("db", "t")]
    assert wh.load_table("db.made_by_peer").metadata.schema.fields[0].name == "id"
    wh.rename_table("db.made_by_peer", "db.renamed")
    assert peer.list_tables("db") == [("db", "renamed"), ("db", "t")]
    peer.close()


def _pyiceberg_table_with_data(root: Path) -> tuple[PyIcebergSqlCatalog, str]:
    peer = PyIcebergSqlCatalog("default", uri=f"sqlite:///{root / 'peer.db'}",
                               warehouse=(root / "peer").as_uri())
    peer.create_namespace("db")
    table = peer.create_table("db.data", ROWS)
    for ids in ([1, 2], [3], [4, 5, 6]):
        table.append(pa.table({"id": ids, "s": ["x"] * len(ids)}, schema=ROWS))
    table.delete("id = 3")  # drops the file holding only 3: an entry with status deleted
    return peer, table.metadata_location


def test_purge_deletes_every_reachable_file_of_a_sql_table(tmp_path: Path) -> None:
    peer, _ = _pyiceberg_table_with_data(tmp_path)
    icenb_view = SqlCatalog(tmp_path / "peer.db", warehouse=tmp_path / "peer")
    table_dir = tmp_path / "peer" / "db" / "data"
    before = _files(table_dir)
    loaded = icenb_view.load_table("db.data")
    reachable = set(reachable_files(loaded.metadata, loaded.io, loaded.metadata_location))
    assert {p.removeprefix("file://") for p in reachable} == before  # every file, none else
    assert sum(p.endswith(".parquet") for p in reachable) == 3  # the deleted one included
    icenb_view.drop_table("db.data", purge=True)
    assert _files(table_dir) == set()
    assert peer.list_tables("db") == []
    peer.close()


def test_purge_in_a_filesystem_catalog_reaches_files_elsewhere(tmp_path: Path) -> None:
    peer, location = _pyiceberg_table_with_data(tmp_path)
    fs = FilesystemCatalog(tmp_path / "fs")
    fs.create_namespace("db")
    fs.register_table("db.data", location)
    assert (tmp_path / "fs" / "db" / "data" / "metadata" / "v1.metadata.json").is_file()
    fs.drop_table("db.data", purge=True)
    # Everything reachable from the copy is gone; the file it was copied from is not in the
    # copy's metadata-log (as with Java's registerTable), so it stays.
    assert _files(tmp_path / "peer") == {location.removeprefix("file://")}
    assert not (tmp_path / "fs" / "db" / "data").exists()
    peer.close()


@pytest.mark.parametrize("gc_enabled", ["false"])
def test_purge_keeps_data_files_when_gc_is_disabled(tmp_path: Path, gc_enabled: str) -> None:
    peer, _ = _pyiceberg_table_with_data(tmp_path)
    table = peer.load_table("db.data")
    with table.transaction() as tx:
        tx.set_properties({"gc.enabled": gc_enabled})
    icenb_view = SqlCatalog(tmp_path / "peer.db", warehouse=tmp_path / "peer")
    icenb_view.drop_table("db.data", purge=True)
    left = _files(tmp_path / "peer" / "db" / "data")
    assert left and all(p.endswith(".parquet") for p in left)
    peer.close()
