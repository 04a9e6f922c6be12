"""Read side of the SQL catalog on SQLite, schema-compatible with Iceberg Java's ``JdbcCatalog``
and PyIceberg's ``SqlCatalog``.

Two tables (Java's ``JdbcUtil``; PyIceberg uses the same):

- ``iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
  previous_metadata_location)``, primary key the first three; schema V1 adds
  ``iceberg_type`` (``'TABLE'``, ``'VIEW'``, or NULL for rows written before V1 = tables).
- ``iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)``;
  a namespace created without properties gets the reserved ``exists = 'true'`` row.

Namespaces are stored as their levels joined with ``.`` (so a level cannot contain a dot). A
namespace exists when a row of either table is in it or below it; listing takes the namespaces
of both tables (views' rows included), as Java does. Names are compared exactly (Java's ``LIKE``
is case-insensitive for ASCII on SQLite and needs a fuzzy-match filter; icenb filters in Python).
Several catalogs can share one database: every query is restricted to ``catalog_name``.

Only Python's ``sqlite3`` is used. Reads open the database read-only, one short connection per
call, so a reader never holds a lock and never creates a database file.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from icenb.catalog.base import (
    Catalog,
    Identifier,
    NamespaceLike,
    identifier_to_string,
    to_identifier,
    to_namespace,
    warehouse_location,
)
from icenb.errors import (
    CorruptFile,
    FileIOError,
    IcebergError,
    InvalidMetadata,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.file_io import FileIO, join_location

__all__ = [
    "NAMESPACE_EXISTS_PROPERTY",
    "NAMESPACE_PROPERTIES_TABLE",
    "TABLES_TABLE",
    "SqlCatalog",
    "is_sqlite_database",
    "sqlite_path",
]

TABLES_TABLE = "iceberg_tables"
NAMESPACE_PROPERTIES_TABLE = "iceberg_namespace_properties"
#: The reserved property Java and PyIceberg store for a namespace created without properties.
NAMESPACE_EXISTS_PROPERTY = "exists"
TABLE_TYPE = "TABLE"
VIEW_TYPE = "VIEW"
_REQUIRED_COLUMNS = ("catalog_name", "table_namespace", "table_name", "metadata_location")
_PROPERTY_COLUMNS = ("catalog_name", "namespace", "property_key", "property_value")
_BUSY_TIMEOUT_S = 30.0
_SQLITE_MAGIC = b"SQLite format 3\x00"


def sqlite_path(uri: str | os.PathLike[str]) -> str:
    """The database file of a SQLite catalog URI, as an absolute path.

    Accepted: a plain path; SQLAlchemy's ``sqlite:///relative.db`` and ``sqlite:////abs.db``
    (what PyIceberg's ``uri`` property holds); JDBC's ``jdbc:sqlite:<path>`` (Java's), also with a
    ``file:`` URI and ``?options`` after it; ``file:<path>``.
    """
    text = os.fspath(uri)
    if not isinstance(text, str) or not text:
        raise ValidationError("a SQL catalog needs a database path or URI", field="uri",
                              value=uri)
    path = text
    lowered = text.lower()
    if lowered.startswith("jdbc:sqlite:"):
        path = text[len("jdbc:sqlite:"):]
        if path.lower().startswith("file:"):
            path = _file_uri_path(path)
    elif lowered.startswith("sqlite:"):
        rest = text[len("sqlite:"):]
        if not rest.startswith("//"):
            raise ValidationError("a sqlite: URI has the form sqlite:///<path>", field="uri",
                                  value=text)
        path = rest[2:]
        path = path[1:] if path.startswith("/") else path  # sqlite:///rel, sqlite:////abs
        path = path.split("?", 1)[0]
    elif lowered.startswith("file:"):
        path = _file_uri_path(text)
    elif "://" in text or lowered.startswith("jdbc:"):
        raise UnsupportedFeature("only SQLite SQL catalogs are supported (a path, sqlite:///..."
                                 " or jdbc:sqlite:...)", field="uri", value=text)
    if not path or path == ":memory:" or path.startswith(":memory:"):
        raise UnsupportedFeature("an in-memory SQLite catalog cannot be shared: give a file",
                                 field="uri", value=text)
    return os.path.abspath(path)


def _file_uri_path(text: str) -> str:
    parsed = urllib.parse.urlsplit(text)
    if parsed.netloc not in ("", "localhost"):
        raise UnsupportedFeature("a file: URI naming another host", field="uri", value=text)
    return urllib.parse.unquote(parsed.path)


def _join_namespace(namespace: tuple[str, ...]) -> str:
    for level in namespace:
        if "." in level:
            raise ValidationError("a namespace level in a SQL catalog cannot contain '.': "
                                  "levels are stored joined with dots", field="namespace",
                                  value=namespace)
    return ".".join(namespace)


def _split_namespace(text: str | None) -> tuple[str, ...]:
    return tuple(text.split(".")) if text else ()


class SqlCatalog(Catalog):
    """A catalog in a SQLite database with Iceberg's JDBC catalog schema (read side).

    ``uri``: the database (see :func:`sqlite_path`); ``name``: the ``catalog_name`` its rows
    carry (PyIceberg's catalog name; Java's catalog name in Spark, ``jdbc`` by default);
    ``warehouse``: only used for the default ``location`` of namespaces, as Java reports it.
    ``properties`` configure the FileIO built when ``io`` is not given.
    """

    def __init__(self, uri: str | os.PathLike[str], *, name: str = "default",
                 warehouse: str | os.PathLike[str] | None = None, io: FileIO | None = None,
                 properties: dict[str, str] | None = None) -> None:
        if io is not None and properties is not None:
            raise ValidationError("give io or properties, not both", field="properties")
        super().__init__(name, io if io is not None else FileIO(properties))
        self._path = sqlite_path(uri)
        self._warehouse: str | None = None
        if warehouse is not None:
            self._warehouse = warehouse_location(warehouse)

    @property
    def database(self) -> str:
        """The SQLite database file."""
        return self._path

    @property
    def warehouse(self) -> str | None:
        """The warehouse location, if one was given."""
        return self._warehouse

    def __repr__(self) -> str:
        return f"SqlCatalog({self._path!r}, name={self._name!r})"

    # ------------------------------------------------------------------ database access

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection; SQLite errors become icenb errors naming the database."""
        if not os.path.exists(self._path):
            raise NotFound(f"the database of SQL catalog {self._name!r} does not exist",
                           file=self._path)
        if os.path.isdir(self._path):
            raise FileIOError(f"the database of SQL catalog {self._name!r} is a directory",
                              file=self._path)
        uri = "file:" + urllib.parse.quote(self._path) + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S)
        except sqlite3.Error as e:
            raise self._sql_error(e) from None
        try:
            yield conn
        except sqlite3.Error as e:
            raise self._sql_error(e) from None
        finally:
            conn.close()

    def _sql_error(self, exc: sqlite3.Error) -> IcebergError:
        text = str(exc)
        if isinstance(exc, sqlite3.DatabaseError) and (
                "not a database" in text or "malformed" in text or "corrupt" in text):
            return CorruptFile(f"the database of SQL catalog {self._name!r} is not a readable "
                               f"SQLite database: {text}", file=self._path)
        return FileIOError(f"SQL catalog {self._name!r}: {text}", file=self._path)

    def _columns(self, conn: sqlite3.Connection, table: str) -> set[str] | None:
        rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
        return {str(r[1]).lower() for r in rows} if rows else None

    def _schema(self, conn: sqlite3.Connection) -> tuple[bool, bool, bool]:
        """(has the tables table, its ``iceberg_type`` column (V1), has the properties table).

        A database with no tables at all is an empty catalog (Java and PyIceberg create the
        tables on first use); one with other tables but no ``iceberg_tables`` is an error.
        """
        tables = self._columns(conn, TABLES_TABLE)
        props = self._columns(conn, NAMESPACE_PROPERTIES_TABLE)
        if tables is None:
            if props is None and self._is_empty(conn):
                return False, False, False
            if props is None:
                raise InvalidMetadata(
                    f"not an Iceberg SQL catalog: the database has no {TABLES_TABLE} table",
                    file=self._path)
        else:
            missing = [c for c in _REQUIRED_COLUMNS if c not in tables]
            if missing:
                raise InvalidMetadata(f"{TABLES_TABLE} lacks the column(s) {', '.join(missing)}",
                                      file=self._path, field=TABLES_TABLE)
        if props is not None:
            missing = [c for c in _PROPERTY_COLUMNS if c not in props]
            if missing:
                raise InvalidMetadata(
                    f"{NAMESPACE_PROPERTIES_TABLE} lacks the column(s) {', '.join(missing)}",
                    file=self._path, field=NAMESPACE_PROPERTIES_TABLE)
        return tables is not None, tables is not None and "iceberg_type" in tables, \
            props is not None

    def _is_empty(self, conn: sqlite3.Connection) -> bool:
        row = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()
        return row is None or int(row[0]) == 0

    def _query(self, sql: str, args: Sequence[Any], *, need: str = "tables") -> list[Any]:
        """Rows of ``sql``; no rows when the table it reads (``need``) does not exist."""
        with self._connect() as conn:
            has_tables, v1, has_props = self._schema(conn)
            if (not has_props) if need == "props" else (not has_tables):
                return []
            if "{type_filter}" in sql or "{view_filter}" in sql:
                if need == "views" and not v1:
                    return []
                sql = sql.format(
                    type_filter=(f"AND (iceberg_type = '{TABLE_TYPE}' OR iceberg_type IS NULL)"
                                 if v1 else ""),
                    view_filter=f"AND iceberg_type = '{VIEW_TYPE}'")
            return conn.execute(sql, tuple(args)).fetchall()

    # ------------------------------------------------------------------ namespaces

    def _all_namespaces(self) -> set[tuple[str, ...]]:
        """Every namespace that has a row in either table (tables and views alike)."""
        found: set[tuple[str, ...]] = set()
        for (text,) in self._query(f"SELECT DISTINCT table_namespace FROM {TABLES_TABLE} "
                                   "WHERE catalog_name = ?", [self._name]):
            found.add(_split_namespace(text))
        for (text,) in self._query(f"SELECT DISTINCT namespace FROM {NAMESPACE_PROPERTIES_TABLE}"
                                   " WHERE catalog_name = ?", [self._name], need="props"):
            found.add(_split_namespace(text))
        return found

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """A namespace exists when a row is in it or in a namespace below it."""
        ns = to_namespace(namespace)
        _join_namespace(ns)
        if not ns:
            return True
        return any(n[:len(ns)] == ns for n in self._all_namespaces())

    def _no_such_namespace(self, namespace: tuple[str, ...]) -> Exception:
        return NoSuchNamespace(f"namespace {identifier_to_string(namespace)!r} does not exist "
                               f"in catalog {self._name!r}", file=self._path, value=namespace)

    def list_namespaces(self, parent: NamespaceLike = ()) -> list[tuple[str, ...]]:
        """The namespaces one level below ``parent`` (Java's ``listNamespaces``)."""
        ns = to_namespace(parent)
        _join_namespace(ns)
        known = self._all_namespaces()
        if ns and not any(n[:len(ns)] == ns for n in known):
            raise self._no_such_namespace(ns)
        depth = len(ns) + 1
        return sorted({n[:depth] for n in known if len(n) >= depth and n[:len(ns)] == ns})

    def namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """The stored properties without the reserved ``exists``, plus ``location``
        (``<warehouse>/<level>/<level>``) when none is stored and a warehouse is known (Java's
        ``loadNamespaceMetadata``)."""
        ns = to_namespace(namespace)
        text = _join_namespace(ns)
        self._require_namespace(ns)
        rows = self._query(f"SELECT property_key, property_value FROM "
                           f"{NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? AND "
                           "namespace = ?", [self._name, text], need="props")
        props = {str(k): "" if v is None else str(v) for k, v in rows if k is not None}
        props.pop(NAMESPACE_EXISTS_PROPERTY, None)
        if "location" not in props and self._warehouse is not None:
            props["location"] = (join_location(self._warehouse, *ns) if ns
                                 else self._warehouse)
        return dict(sorted(props.items()))

    # ------------------------------------------------------------------ tables

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """The tables of a namespace: rows with ``iceberg_type`` NULL or ``'TABLE'``."""
        ns = to_namespace(namespace)
        text = _join_namespace(ns)
        self._require_namespace(ns)
        rows = self._query(f"SELECT table_name FROM {TABLES_TABLE} WHERE catalog_name = ? AND "
                           "table_namespace = ? {type_filter}", [self._name, text])
        return sorted((*ns, str(name)) for (name,) in rows)

    def all_tables(self) -> list[Identifier]:
        """Every table of this catalog, in one query."""
        rows = self._query(f"SELECT table_namespace, table_name FROM {TABLES_TABLE} "
                           "WHERE catalog_name = ? {type_filter}", [self._name])
        return sorted((*_split_namespace(ns), str(name)) for ns, name in rows)

    def _row(self, ident: Identifier, kind: str) -> tuple[str | None, str | None] | None:
        rows = self._query(
            "SELECT metadata_location, previous_metadata_location FROM "
            f"{TABLES_TABLE} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? "
            + ("{type_filter}" if kind == "tables" else "{view_filter}"),
            [self._name, _join_namespace(ident[:-1]), ident[-1]], need=kind)
        return None if not rows else (rows[0][0], rows[0][1])

    def table_exists(self, identifier: NamespaceLike) -> bool:
        """Whether a table row exists (the metadata file is not read)."""
        return self._row(to_identifier(identifier), "tables") is not None

    def _table_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """``metadata_location`` and ``previous_metadata_location`` of the table's row."""
        row = self._row(identifier, "tables")
        if row is None:
            detail = ""
            if self._row(identifier, "views") is not None:
                detail = " (it is a view: use load_view)"
            elif identifier[:-1] and not self.namespace_exists(identifier[:-1]):
                detail = f" (namespace {identifier_to_string(identifier[:-1])!r} does not exist)"
            raise NoSuchTable(f"table {identifier_to_string(identifier)!r} does not exist in "
                              f"catalog {self._name!r}{detail}", file=self._path,
                              value=identifier)
        return self._pointer(identifier, row[0], "table"), row[1]

    def _pointer(self, ident: Identifier, location: str | None, kind: str) -> str:
        if not location:
            raise InvalidMetadata(f"{kind} {identifier_to_string(ident)!r} of catalog "
                                  f"{self._name!r} has no metadata_location", file=self._path,
                                  field=f"{TABLES_TABLE}.metadata_location", value=location)
        return location

    # ------------------------------------------------------------------ views

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """The views of a namespace: rows with ``iceberg_type = 'VIEW'`` (none in schema V0)."""
        ns = to_namespace(namespace)
        text = _join_namespace(ns)
        self._require_namespace(ns)
        rows = self._query(f"SELECT table_name FROM {TABLES_TABLE} WHERE catalog_name = ? AND "
                           "table_namespace = ? {view_filter}", [self._name, text], need="views")
        return sorted((*ns, str(name)) for (name,) in rows)

    def view_exists(self, identifier: NamespaceLike) -> bool:
        """Whether a view row exists."""
        return self._row(to_identifier(identifier), "views") is not None

    def _view_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """``metadata_location`` and ``previous_metadata_location`` of the view's row."""
        row = self._row(identifier, "views")
        if row is None:
            detail = " (it is a table: use load_table)" if self.table_exists(identifier) else ""
            raise NoSuchView(f"view {identifier_to_string(identifier)!r} does not exist in "
                             f"catalog {self._name!r}{detail}", file=self._path,
                             value=identifier)
        return self._pointer(identifier, row[0], "view"), row[1]


def is_sqlite_database(path: str | os.PathLike[str]) -> bool:
    """Whether a local file is a SQLite database (starts with SQLite's magic) or is empty."""
    try:
        with open(os.fspath(path), "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError:
        return False
    return head in (b"", _SQLITE_MAGIC)
