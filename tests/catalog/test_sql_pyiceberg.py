"""SqlCatalog against its peer: a SQLite catalog created and written by PyIceberg 0.12.

PyIceberg's ``SqlCatalog`` (schema V1, the same tables as Iceberg Java's ``JdbcCatalog``) makes
namespaces (nested, with properties, unicode, LIKE wildcards) and tables with rows appended
through pyarrow; icenb must list and load the same things and read the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

# PyIceberg's SqlCatalog needs SQLAlchemy (pyiceberg[sql-sqlite]).
from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

from icenb.catalog import SqlCatalog
from icenb.errors import NoSuchNamespace, NoSuchTable
from icenb.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string()),
                    ("x", pa.float64())])


def _data(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "s": [f"é{i}" if i % 3 else None for i in ids],
                     "x": [float("nan") if i == 2 else i / 2 for i in ids]}, schema=SCHEMA)


def _rows(table: pa.Table) -> list[str]:
    return sorted(repr(r) for r in table.to_pylist())


class Peer:
    """A PyIceberg-written catalog and where it lives."""

    def __init__(self, root: Path) -> None:
        self.db = root / "catalog.db"
        self.warehouse = root / "warehouse"
        self.uri = f"sqlite:///{self.db}"
        self.catalog = PyIcebergSqlCatalog("default", uri=self.uri,
                                           warehouse=self.warehouse.as_uri())
        self.other = PyIcebergSqlCatalog("other", uri=self.uri,
                                         warehouse=self.warehouse.as_uri())

    def icenb(self, name: str = "default") -> SqlCatalog:
        return SqlCatalog(self.uri, name=name, warehouse=self.warehouse.as_uri())


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    p = Peer(tmp_path_factory.mktemp("pyiceberg-sql"))
    c = p.catalog
    c.create_namespace("db", {"owner": "ana", "comment": "événements"})
    c.create_namespace("db.sub")
    c.create_namespace("deep.er.est")  # parents exist only through it
    c.create_namespace("données")
    c.create_namespace("a_b", {"k": "v"})
    c.create_namespace("axb.c")
    c.create_namespace("located", {"location": f"{p.warehouse.as_uri()}/custom"})
    c.create_namespace("empty")
    events = c.create_table("db.events", SCHEMA)
    events.append(_data([1, 2, 3]))
    events.append(_data([4, 5]))
    c.create_table("db.sub.nested", SCHEMA).append(_data([6]))
    c.create_table(("db", "my.table"), SCHEMA).append(_data([7, 8]))
    c.create_table(("données", "tâble ü"), SCHEMA).append(_data([9]))
    c.create_table("deep.er.est.t", SCHEMA)  # no snapshot yet
    c.create_table("a_b.t", SCHEMA).append(_data([10]))
    p.other.create_namespace("db")
    p.other.create_table("db.elsewhere", SCHEMA)
    yield p
    p.catalog.close()
    p.other.close()


def _walk(catalog: Any, parent: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for ns in catalog.list_namespaces(parent):
        yield ns
        yield from _walk(catalog, ns)


def test_lists_the_namespaces_pyiceberg_lists(peer: Peer) -> None:
    ours = peer.icenb()
    assert ours.list_namespaces() == sorted(peer.catalog.list_namespaces())
    assert ours.list_namespaces() == [("a_b",), ("axb",), ("db",), ("deep",), ("données",),
                                      ("empty",), ("located",)]
    for ns in _walk(peer.catalog):
        assert ours.list_namespaces(ns) == sorted(peer.catalog.list_namespaces(ns)), ns
        assert ours.namespace_exists(ns)
    assert ours.list_namespaces("deep.er") == [("deep", "er", "est")]
    # LIKE wildcards in a name match nothing else ("a_b" is not a pattern for "axb").
    assert ours.list_namespaces("a_b") == []


def test_lists_the_tables_pyiceberg_lists(peer: Peer) -> None:
    ours = peer.icenb()
    for ns in _walk(peer.catalog):
        assert ours.list_tables(ns) == sorted(peer.catalog.list_tables(ns)), ns
    assert ours.list_tables("db") == [("db", "events"), ("db", "my.table")]
    assert ours.all_tables() == [("a_b", "t"), ("db", "events"), ("db", "my.table"),
                                 ("db", "sub", "nested"), ("deep", "er", "est", "t"),
                                 ("données", "tâble ü")]
    assert ours.list_views("db") == []


def test_namespace_properties_as_java_reports_them(peer: Peer) -> None:
    ours = peer.icenb()
    wh = peer.warehouse.as_uri()
    for ns in _walk(peer.catalog):
        stored = {k: v for k, v in peer.catalog.load_namespace_properties(ns).items()
                  if k != "exists"}
        stored.setdefault("location", "/".join([wh, *ns]))
        assert ours.namespace_properties(ns) == stored, ns
    assert ours.namespace_properties("db") == {"comment": "événements", "location": f"{wh}/db",
                                               "owner": "ana"}
    assert ours.namespace_properties("located") == {"location": f"{wh}/custom"}
    # Without a warehouse no location is made up.
    assert SqlCatalog(peer.db).namespace_properties("db.sub") == {}


def test_loads_tables_and_reads_pyiceberg_rows(peer: Peer) -> None:
    ours = peer.icenb()
    for ident in ours.all_tables():
        theirs = peer.catalog.load_table(ident)
        loaded = ours.load_table(ident)
        assert loaded.identifier == ident
        assert loaded.metadata_location == theirs.metadata_location
        assert loaded.metadata.table_uuid == str(theirs.metadata.table_uuid)
        assert loaded.metadata.current_snapshot_id == theirs.metadata.current_snapshot_id
        table = Table(loaded.metadata, loaded.io, opened_from=loaded.metadata_location)
        expected = theirs.scan().to_arrow()
        assert _rows(table.scan().to_arrow()) == _rows(expected), ident
    events = ours.load_table("db.events")
    assert events.previous_metadata_location == \
        peer.catalog.load_table("db.events").metadata.metadata_log[-1].metadata_file
    assert len(events.metadata.snapshots) == 2
    empty = ours.load_table("deep.er.est.t")
    assert empty.previous_metadata_location is None and empty.metadata.snapshots == ()


def test_catalog_name_separates_catalogs_in_one_database(peer: Peer) -> None:
    other = peer.icenb("other")
    assert other.list_namespaces() == [("db",)]
    assert other.list_tables("db") == [("db", "elsewhere")]
    assert other.load_table("db.elsewhere").metadata_location == \
        peer.other.load_table("db.elsewhere").metadata_location
    assert not peer.icenb().table_exists("db.elsewhere")
    assert not other.table_exists("db.events")
    with pytest.raises(NoSuchNamespace):
        SqlCatalog(peer.db, name="nobody").list_tables("db")
    assert SqlCatalog(peer.db, name="nobody").list_namespaces() == []


def test_names_compare_exactly(peer: Peer) -> None:
    ours = peer.icenb()
    # SQLite's LIKE ignores ASCII case; icenb's lookups do not.
    assert not ours.namespace_exists("DB")
    assert not ours.table_exists("db.EVENTS")
    assert not ours.namespace_exists("db.su")
    with pytest.raises(NoSuchTable):
        ours.load_table("DB.events")


def test_icenb_sees_each_new_pyiceberg_commit(tmp_path: Path) -> None:
    fresh = Peer(tmp_path)
    ours = fresh.icenb()
    c = fresh.catalog
    c.create_namespace("later")
    t = c.create_table("later.t", SCHEMA)
    before = ours.load_table("later.t").metadata_location
    t.append(_data([11, 12]))
    after = ours.load_table("later.t")
    assert after.previous_metadata_location == before
    assert after.metadata_location == c.load_table("later.t").metadata_location
    assert after.metadata.current_snapshot_id is not None
    fresh.catalog.close()
    fresh.other.close()
