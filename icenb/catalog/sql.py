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

Write side. Every change is one SQLite transaction started with ``BEGIN IMMEDIATE`` (the write
lock is taken first, so checks and changes see the same state) on a connection that waits up to
30 s for the lock: several processes can write one catalog at once. The journal stays in
SQLite's default rollback mode (no ``-wal`` files; a writer killed mid-transaction is rolled back
by the next connection). A database without the catalog tables gets them as Iceberg Java's
``JdbcCatalog`` creates them with ``jdbc.schema-version=V1`` (its ``CREATE TABLE`` statements
then the ``ALTER TABLE ... ADD COLUMN iceberg_type``); PyIceberg's ``SqlCatalog`` opens and writes
that schema as its own. A commit writes
``<location>/metadata/<NNNNN>-<uuid>.metadata.json`` (spec: "Metastore Tables"; ``NNNNN`` is the
base's version plus one; ``write.metadata.path`` moves the directory, gzip gives
``.gz.metadata.json``) and then swaps the pointer with Java's check-and-put
``UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE ... AND
metadata_location = ?``: one row changed or ``CommitConflict``.

Views (Java's ``JdbcCatalog`` with ``JdbcViewOperations``): a view is a row of ``iceberg_tables``
with ``iceberg_type = 'VIEW'`` (tables written by icenb get ``'TABLE'``); its metadata files are
``<NNNNN>-<uuid>.gz.metadata.json`` (plain ``.metadata.json`` when the view property
``write.metadata.compression-codec`` is ``none``) in ``write.metadata.path`` or
``<location>/metadata``, ``NNNNN`` being the base file's number plus one (0 when it has none), and
the commit is the same check-and-put restricted to view rows. A database with the V0 schema (no
``iceberg_type``) cannot hold views: every view write raises ``UnsupportedFeature`` before anything
is written (Java throws ``UnsupportedOperationException``); reading lists no views there.
A table and a view cannot share a name (the primary key has no type), and creating, renaming or
registering either onto the other's name says which one holds it. ``drop_view`` deletes the row;
Java also deletes the current metadata file, icenb only with ``purge=True`` (so a dropped view can
be registered again, as a table dropped without purge can).

Decisions where Java is silent or differs, write side: a table or view needs an existing namespace
(Java only checks in ``jdbc.strict-mode``; PyIceberg always does); dropping a namespace also
requires it to hold no views and no child namespaces (Java checks tables only, and a namespace with
children would not disappear); the reserved ``exists`` property cannot be set or removed, and a
namespace whose last property is removed keeps an ``exists`` row, and ``exists`` is stored only for
a namespace created without properties (PyIceberg's way: it shows stored rows verbatim, and Java
hides ``exists`` either way); a database with a V0 schema is written as V0 (never migrated).
"""

from __future__ import annotations

import os
import posixpath
import sqlite3
import urllib.parse
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from icenb.catalog.base import (
    WRITE_METADATA_PATH,
    Catalog,
    Identifier,
    LoadedTable,
    LoadedView,
    NamespaceLike,
    NamespaceNotEmpty,
    PropertiesUpdateSummary,
    identifier_to_string,
    metadata_file_bytes,
    purge_table_files,
    to_identifier,
    to_namespace,
    to_new_identifier,
    to_new_namespace,
    view_metadata_dir,
    view_metadata_file_bytes,
    warehouse_location,
)
from icenb.errors import (
    AlreadyExists,
    CommitStateUnknown,
    CorruptFile,
    FileIOError,
    IcebergError,
    IcebergWarning,
    InvalidMetadata,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.file_io import FileIO, join_location
from icenb.io.metadata_files import (
    load_table_metadata,
    load_view_metadata_file,
    metastore_metadata_file_name,
    parse_metadata_file_name,
    write_metadata_file,
)
from icenb.reprs import safe_repr
from icenb.spec.table_metadata import TableMetadata, table_metadata_from_json
from icenb.spec.view_metadata import ViewMetadata, load_view_metadata

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
_SQLITE_READONLY_ROLLBACK = 776  # SQLITE_READONLY | (3 << 8): a hot journal, read-only handle

# Iceberg Java's JdbcUtil statements, verbatim, so a new database has exactly Java's schema:
# V0_CREATE_CATALOG_SQL, V1_UPDATE_CATALOG_SQL, CREATE_NAMESPACE_PROPERTIES_TABLE_SQL.
CREATE_TABLES_SQL = (
    "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL,"
    "table_namespace VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,"
    "metadata_location VARCHAR(1000),previous_metadata_location VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, table_namespace, table_name))")
ADD_TYPE_COLUMN_SQL = "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)"
CREATE_NAMESPACE_PROPERTIES_SQL = (
    "CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL,"
    "namespace VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, namespace, property_key))")
_TABLE_FILTER = f"AND (iceberg_type = '{TABLE_TYPE}' OR iceberg_type IS NULL)"
_VIEW_FILTER = f"AND iceberg_type = '{VIEW_TYPE}'"
_ROW_WHERE = "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"


class _OutcomeUnknown(Exception):
    """COMMIT itself failed: whether the transaction landed must be checked."""

    def __init__(self, error: IcebergError) -> None:
        super().__init__(str(error))
        self.error = error


def _check_properties(properties: Mapping[str, str] | None) -> dict[str, str]:
    """Namespace properties to store: string keys and values; ``exists`` is reserved."""
    out: dict[str, str] = {}
    for key, value in (properties or {}).items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise ValidationError("namespace properties are non-empty string keys with string "
                                  "values", field="properties", value={key: value})
        if key == NAMESPACE_EXISTS_PROPERTY:
            raise ValidationError("cannot set the reserved namespace property 'exists'",
                                  field="properties", value=key)
        out[key] = value
    return out


def _metadata_dir(metadata: TableMetadata) -> str:
    """``write.metadata.path`` or ``<location>/metadata`` (Java's ``metadataFileLocation``)."""
    path = metadata.properties.get(WRITE_METADATA_PATH)
    return path.rstrip("/") if path else join_location(metadata.location, "metadata")


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


@safe_repr
class SqlCatalog(Catalog):
    """A catalog in a SQLite database with Iceberg's JDBC catalog schema.

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
    def uri(self) -> str:
        """The database as PyIceberg's ``SqlCatalog`` takes it (``sqlite:////abs/path``)."""
        return "sqlite:///" + self._path

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
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as e:
                if getattr(e, "sqlite_errorcode", None) != _SQLITE_READONLY_ROLLBACK:
                    raise
                # A writer died mid-transaction: a read-only connection cannot roll its journal
                # back, a read-write one does so on first read.
                conn.close()
                self._recover(uri.replace("?mode=ro", "?mode=rw"))
                conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S)
        except sqlite3.Error as e:
            raise self._sql_error(e) from None
        try:
            yield conn
        except sqlite3.Error as e:
            raise self._sql_error(e) from None
        finally:
            conn.close()

    def _recover(self, uri: str) -> None:
        """Let SQLite roll back a hot journal (a read on a read-write connection does it)."""
        conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
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


    # ------------------------------------------------------------------ write side: plumbing

    def _open_rw(self) -> sqlite3.Connection:
        parent = os.path.dirname(self._path)
        if not os.path.isdir(parent):
            raise NotFound(f"the directory of SQL catalog {self._name!r}'s database does not "
                           "exist", file=parent)
        try:
            # isolation_level=None: transactions are begun and ended explicitly below.
            return sqlite3.connect(self._path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as e:
            raise self._sql_error(e) from None

    @contextmanager
    def _transaction(self) -> Iterator[tuple[sqlite3.Connection, bool]]:
        """A write transaction holding SQLite's write lock from the start (``BEGIN IMMEDIATE``),
        with the catalog tables present; yields (connection, schema has ``iceberg_type``).

        An exception in the body rolls back. A failing ``COMMIT`` raises ``_OutcomeUnknown``.
        """
        conn = self._open_rw()
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
                v1 = self._ensure_schema(conn)
            except sqlite3.Error as e:
                raise self._sql_error(e) from None
            try:
                yield conn, v1
            except sqlite3.Error as e:
                raise self._sql_error(e) from None
            try:
                self._end_transaction(conn)
            except sqlite3.Error as e:
                raise _OutcomeUnknown(self._sql_error(e)) from None
        finally:
            conn.close()  # rolls back a transaction still open

    def _end_transaction(self, conn: sqlite3.Connection) -> None:
        conn.execute("COMMIT")

    def _ensure_schema(self, conn: sqlite3.Connection) -> bool:
        """Create missing catalog tables (Java's V1 schema); whether ``iceberg_type`` exists."""
        tables = self._columns(conn, TABLES_TABLE)
        if tables is None:
            conn.execute(CREATE_TABLES_SQL)
            conn.execute(ADD_TYPE_COLUMN_SQL)
            v1 = True
        else:
            missing = [c for c in _REQUIRED_COLUMNS if c not in tables]
            if missing:
                raise InvalidMetadata(f"{TABLES_TABLE} lacks the column(s) {', '.join(missing)}",
                                      file=self._path, field=TABLES_TABLE)
            v1 = "iceberg_type" in tables
        if self._columns(conn, NAMESPACE_PROPERTIES_TABLE) is None:
            conn.execute(CREATE_NAMESPACE_PROPERTIES_SQL)
        return v1

    def initialize(self) -> None:
        """Create the database file and the catalog tables when missing (idempotent)."""
        with self._transaction():
            pass

    def _namespaces_in(self, conn: sqlite3.Connection) -> set[tuple[str, ...]]:
        found = {_split_namespace(text) for (text,) in conn.execute(
            f"SELECT DISTINCT table_namespace FROM {TABLES_TABLE} WHERE catalog_name = ?",
            (self._name,))}
        found |= {_split_namespace(text) for (text,) in conn.execute(
            f"SELECT DISTINCT namespace FROM {NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ?",
            (self._name,))}
        return found

    def _namespace_exists_in(self, conn: sqlite3.Connection, ns: tuple[str, ...]) -> bool:
        return not ns or any(n[:len(ns)] == ns for n in self._namespaces_in(conn))

    def _row_type(self, conn: sqlite3.Connection, v1: bool, ident: Identifier) -> str | None:
        """``TABLE`` or ``VIEW`` for an existing row of this name, None when there is none."""
        column = "iceberg_type" if v1 else "NULL"
        row = conn.execute(f"SELECT {column} FROM {TABLES_TABLE} {_ROW_WHERE}",
                           (self._name, _join_namespace(ident[:-1]), ident[-1])).fetchone()
        if row is None:
            return None
        return VIEW_TYPE if row[0] == VIEW_TYPE else TABLE_TYPE

    def _discard(self, location: str) -> None:
        """Delete a metadata file a failed commit wrote (best effort)."""
        with suppress(IcebergError):
            self._io.delete(location, missing_ok=True)

    # ------------------------------------------------------------------ write side: namespaces

    def create_namespace(self, namespace: NamespaceLike,
                         properties: Mapping[str, str] | None = None) -> None:
        """Store the namespace's properties, or ``exists = 'true'`` when there are none (as
        PyIceberg; Java always adds it, but PyIceberg would then show it as a property)."""
        ns = to_new_namespace(namespace)
        text = _join_namespace(ns)
        if not ns:
            raise AlreadyExists("the root namespace always exists", file=self._path)
        rows = _check_properties(properties) or {NAMESPACE_EXISTS_PROPERTY: "true"}
        try:
            with self._transaction() as (conn, _):
                if self._namespace_exists_in(conn, ns):
                    raise AlreadyExists(f"namespace {identifier_to_string(ns)!r} already exists "
                                        f"in catalog {self._name!r}", file=self._path, value=ns)
                conn.executemany(
                    f"INSERT INTO {NAMESPACE_PROPERTIES_TABLE} (catalog_name, namespace, "
                    "property_key, property_value) VALUES (?,?,?,?)",
                    [(self._name, text, k, v) for k, v in rows.items()])
        except _OutcomeUnknown as e:
            raise e.error from None

    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Delete an empty namespace's properties (no tables, views or child namespaces)."""
        ns = to_namespace(namespace)
        text = _join_namespace(ns)
        if not ns:
            raise ValidationError("the root namespace cannot be dropped", field="namespace",
                                  value=ns)
        try:
            with self._transaction() as (conn, _):
                known = self._namespaces_in(conn)
                if not any(n[:len(ns)] == ns for n in known):
                    raise self._no_such_namespace(ns)
                names = [str(r[0]) for r in conn.execute(
                    f"SELECT table_name FROM {TABLES_TABLE} WHERE catalog_name = ? AND "
                    "table_namespace = ?", (self._name, text))]
                children = sorted(identifier_to_string(n) for n in known
                                  if len(n) > len(ns) and n[:len(ns)] == ns)
                if names or children:
                    shown = sorted(names)[:5] + children[:5]
                    raise NamespaceNotEmpty(
                        f"namespace {identifier_to_string(ns)!r} is not empty: {len(names)} "
                        f"table(s) or view(s), {len(children)} namespace(s) below it "
                        f"({', '.join(shown)})", file=self._path, value=ns)
                conn.execute(f"DELETE FROM {NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? "
                             "AND namespace = ?", (self._name, text))
        except _OutcomeUnknown as e:
            raise e.error from None

    def update_namespace_properties(
            self, namespace: NamespaceLike, removals: Iterable[str] = (),
            updates: Mapping[str, str] | None = None) -> PropertiesUpdateSummary:
        """Remove then set properties in one transaction; keys both removed and set, and the
        reserved ``exists``, are rejected."""
        ns = to_namespace(namespace)
        text = _join_namespace(ns)
        if not ns:
            raise ValidationError("the root namespace has no properties", field="namespace",
                                  value=ns)
        removing = sorted(set(removals))
        setting = _check_properties(updates)
        both = sorted(set(removing) & set(setting))
        if both:
            raise ValidationError("a property cannot be both removed and set", field="properties",
                                  value=both)
        if NAMESPACE_EXISTS_PROPERTY in removing:
            raise ValidationError("cannot remove the reserved namespace property 'exists'",
                                  field="properties", value=NAMESPACE_EXISTS_PROPERTY)
        where = "WHERE catalog_name = ? AND namespace = ?"
        try:
            with self._transaction() as (conn, _):
                if not self._namespace_exists_in(conn, ns):
                    raise self._no_such_namespace(ns)
                current = {str(k) for (k,) in conn.execute(
                    f"SELECT property_key FROM {NAMESPACE_PROPERTIES_TABLE} {where}",
                    (self._name, text))}
                removed = [k for k in removing if k in current]
                missing = [k for k in removing if k not in current]
                conn.executemany(f"DELETE FROM {NAMESPACE_PROPERTIES_TABLE} {where} AND "
                                 "property_key = ?", [(self._name, text, k) for k in removed])
                for key, value in setting.items():
                    if key in current:
                        conn.execute(f"UPDATE {NAMESPACE_PROPERTIES_TABLE} SET property_value = ? "
                                     f"{where} AND property_key = ?",
                                     (value, self._name, text, key))
                    else:
                        conn.execute(f"INSERT INTO {NAMESPACE_PROPERTIES_TABLE} (catalog_name, "
                                     "namespace, property_key, property_value) VALUES (?,?,?,?)",
                                     (self._name, text, key, value))
                left = conn.execute(f"SELECT count(*) FROM {NAMESPACE_PROPERTIES_TABLE} {where}",
                                    (self._name, text)).fetchone()
                if removed and (left is None or int(left[0]) == 0):
                    conn.execute(f"INSERT INTO {NAMESPACE_PROPERTIES_TABLE} (catalog_name, "
                                 "namespace, property_key, property_value) VALUES (?,?,?,?)",
                                 (self._name, text, NAMESPACE_EXISTS_PROPERTY, "true"))
        except _OutcomeUnknown as e:
            raise e.error from None
        return PropertiesUpdateSummary(removed, sorted(setting), missing)

    # ------------------------------------------------------------------ write side: tables

    def _write_new_metadata(self, metadata: TableMetadata,
                            version: int) -> tuple[str, TableMetadata]:
        """Create ``<NNNNN>-<uuid>.metadata.json``; its location and the metadata as written."""
        data, gzip = metadata_file_bytes(metadata)
        name = metastore_metadata_file_name(version, uuid.uuid4(), gzip=gzip)
        location = join_location(_metadata_dir(metadata), name)
        write_metadata_file(location, data, self._io, gzip=gzip)
        return location, table_metadata_from_json(data, file=location)

    def _insert_row(self, ident: Identifier, location: str, kind: str, action: str) -> None:
        """Register a new row of ``kind`` (``TABLE`` or ``VIEW``) pointing at ``location``
        (Java's create commit); ``action`` names the call in errors."""
        ns_text = _join_namespace(ident[:-1])
        try:
            with self._transaction() as (conn, v1):
                if kind == VIEW_TYPE and not v1:
                    raise self._no_views_in_v0()
                if not self._namespace_exists_in(conn, ident[:-1]):
                    raise self._no_such_namespace(ident[:-1])
                holder = self._row_type(conn, v1, ident)
                if holder is not None:
                    raise self._name_taken(ident, holder.lower(), action, self._path)
                columns = ("catalog_name, table_namespace, table_name, metadata_location, "
                           "previous_metadata_location")
                args: tuple[Any, ...] = (self._name, ns_text, ident[-1], location, None)
                if v1:
                    columns += ", iceberg_type"
                    args += (kind,)
                marks = ",".join("?" * len(args))
                try:
                    conn.execute(f"INSERT INTO {TABLES_TABLE} ({columns}) VALUES ({marks})", args)
                except sqlite3.IntegrityError:
                    raise self._name_taken(ident, "table or view", action, self._path) from None
        except _OutcomeUnknown as e:
            self._verify(ident, location, e.error, "tables" if kind == TABLE_TYPE else "views")

    def _verify(self, ident: Identifier, location: str, error: IcebergError,
                kind: str = "tables") -> None:
        """After a failed COMMIT: return if the row (of ``kind``: tables or views) points at
        ``location``, raise ``error`` if it does not, ``CommitStateUnknown`` if the row cannot be
        read."""
        try:
            row = self._row(ident, kind)
        except IcebergError as e:
            raise CommitStateUnknown(f"committing {kind[:-1]} {identifier_to_string(ident)!r} "
                                     f"failed "
                                     f"({error.message}) and the catalog cannot be read to tell "
                                     f"whether it landed ({e.message})", file=location) from None
        if row is not None and row[0] == location:
            return
        raise error

    def create_table(self, identifier: NamespaceLike, metadata: TableMetadata) -> LoadedTable:
        """Write ``00000-<uuid>.metadata.json`` and insert the table's row."""
        ident = to_new_identifier(identifier)
        _join_namespace(ident[:-1])
        location, committed = self._write_new_metadata(metadata, 0)
        self._publish(location, self._insert_row, ident, location, TABLE_TYPE, "create table")
        return LoadedTable(ident, location, committed, self._io, None)

    def commit_table(self, identifier: NamespaceLike, base_location: str | None,
                     new_metadata: TableMetadata, *,
                     base_metadata: TableMetadata | None = None) -> LoadedTable:
        """Write the next metadata file, then check-and-put the row's pointer."""
        ident = to_identifier(identifier)
        if base_location is None:
            return self.create_table(ident, new_metadata)
        _join_namespace(ident[:-1])
        prepared = self._prepare_commit(ident, base_location, new_metadata, base_metadata)
        parsed = parse_metadata_file_name(posixpath.basename(base_location))
        location, committed = self._write_new_metadata(
            prepared, parsed.version + 1 if parsed is not None else 0)
        self._publish(location, self._swap, ident, base_location, location)
        self._delete_removed_metadata(ident, base_location, base_metadata, committed, location)
        return LoadedTable(ident, location, committed, self._io, base_location)

    def _publish(self, location: str, change: Callable[..., None], *args: Any) -> None:
        """Make the row change for a metadata file just written at ``location``; when it
        fails the file is deleted again, unless the outcome is unknown (then it may be live)."""
        try:
            change(*args)
        except CommitStateUnknown:
            raise
        except IcebergError:
            self._discard(location)
            raise

    def _swap(self, ident: Identifier, base_location: str, location: str,
              kind: str = TABLE_TYPE) -> None:
        """Java's check-and-put: one row of ``kind`` changes from ``base_location`` to
        ``location``."""
        key = (self._name, _join_namespace(ident[:-1]), ident[-1])
        try:
            with self._transaction() as (conn, v1):
                if kind == VIEW_TYPE and not v1:
                    raise self._no_views_in_v0()
                type_filter = (_VIEW_FILTER if kind == VIEW_TYPE else _TABLE_FILTER) if v1 else ""
                cursor = conn.execute(
                    f"UPDATE {TABLES_TABLE} SET metadata_location = ?, "
                    f"previous_metadata_location = ? {_ROW_WHERE} AND metadata_location = ? "
                    f"{type_filter}", (location, base_location, *key, base_location))
                if cursor.rowcount != 1:
                    row = conn.execute(f"SELECT metadata_location FROM {TABLES_TABLE} "
                                       f"{_ROW_WHERE} {type_filter}", key).fetchone()
                    raise self._conflict(ident, base_location,
                                         None if row is None else str(row[0]), kind.lower())
        except _OutcomeUnknown as e:
            self._verify(ident, location, e.error, "tables" if kind == TABLE_TYPE else "views")

    def drop_table(self, identifier: NamespaceLike, purge: bool = False) -> None:
        """Delete the table's row (as Java); ``purge`` then deletes every file reachable from
        the metadata it pointed to."""
        ident = to_identifier(identifier)
        key = (self._name, _join_namespace(ident[:-1]), ident[-1])
        metadata: TableMetadata | None = None
        location: str | None = None
        if purge:
            location = self._table_pointer(ident)[0]
            try:
                metadata = self._read_table_metadata(ident, location)
            except IcebergError as e:
                warnings.warn(IcebergWarning(f"purge skipped, the metadata cannot be read: {e}"),
                              stacklevel=2)
        try:
            with self._transaction() as (conn, v1):
                cursor = conn.execute(f"DELETE FROM {TABLES_TABLE} {_ROW_WHERE} "
                                      f"{_TABLE_FILTER if v1 else ''}", key)
                if cursor.rowcount == 0:
                    raise NoSuchTable(f"table {identifier_to_string(ident)!r} does not exist in "
                                      f"catalog {self._name!r}", file=self._path, value=ident)
        except _OutcomeUnknown as e:
            raise e.error from None
        if metadata is not None:
            purge_table_files(metadata, self._io, location)

    def rename_table(self, identifier: NamespaceLike, new_identifier: NamespaceLike) -> None:
        """Move the table's row to another name (Java's ``renameTable``; files stay put)."""
        self._rename_row(to_identifier(identifier), to_new_identifier(new_identifier),
                         TABLE_TYPE)

    def _rename_row(self, src: Identifier, dst: Identifier, kind: str) -> None:
        """Move a row of ``kind`` (table or view) to another name in one transaction: the
        source must be of that kind, the target namespace must exist and the name be free."""
        src_key = (self._name, _join_namespace(src[:-1]), src[-1])
        dst_ns = _join_namespace(dst[:-1])
        what = kind.lower()
        try:
            with self._transaction() as (conn, v1):
                if kind == VIEW_TYPE and not v1:
                    raise self._no_views_in_v0()
                if self._row_type(conn, v1, src) != kind:
                    raise self._missing(kind, src, conn, v1)
                if src == dst:
                    return
                if not self._namespace_exists_in(conn, dst[:-1]):
                    raise self._no_such_namespace(dst[:-1])
                holder = self._row_type(conn, v1, dst)
                if holder is not None:
                    raise self._name_taken(dst, holder.lower(),
                                           f"rename {what} {identifier_to_string(src)!r} to",
                                           self._path)
                type_filter = (_VIEW_FILTER if kind == VIEW_TYPE else _TABLE_FILTER) if v1 else ""
                try:
                    cursor = conn.execute(
                        f"UPDATE {TABLES_TABLE} SET table_namespace = ?, table_name = ? "
                        f"{_ROW_WHERE} {type_filter}", (dst_ns, dst[-1], *src_key))
                except sqlite3.IntegrityError:
                    raise AlreadyExists(f"{what} {identifier_to_string(dst)!r} already exists",
                                        file=self._path, value=dst) from None
                if cursor.rowcount != 1:
                    raise self._missing(kind, src, conn, v1)
        except _OutcomeUnknown as e:
            raise e.error from None

    def _missing(self, kind: str, ident: Identifier, conn: sqlite3.Connection,
                 v1: bool) -> NoSuchTable | NoSuchView:
        if kind == VIEW_TYPE:
            return self._no_such_view(ident, conn, v1)
        return NoSuchTable(f"table {identifier_to_string(ident)!r} does not exist in "
                           f"catalog {self._name!r}", file=self._path, value=ident)

    def register_table(self, identifier: NamespaceLike, metadata_location: str) -> LoadedTable:
        """Insert a row pointing at an existing metadata file (read first to check it)."""
        ident = to_new_identifier(identifier, "table name")
        _join_namespace(ident[:-1])
        metadata = load_table_metadata(metadata_location, self._io)
        self._insert_row(ident, metadata_location, TABLE_TYPE, "register table")
        return LoadedTable(ident, metadata_location, metadata, self._io, None)

    # ------------------------------------------------------------------ write side: views

    def _no_views_in_v0(self) -> UnsupportedFeature:
        return UnsupportedFeature(
            f"SQL catalog {self._name!r} has the V0 schema (no iceberg_type column), which "
            "cannot hold views (as Iceberg Java's JdbcCatalog): migrate it to V1 first",
            file=self._path, field=f"{TABLES_TABLE}.iceberg_type")

    def _require_view_schema(self) -> None:
        """``UnsupportedFeature`` for a V0 database, checked before any file is written."""
        if not os.path.exists(self._path):
            return  # created with the V1 schema on first write
        with self._connect() as conn:
            has_tables, v1, _ = self._schema(conn)
        if has_tables and not v1:
            raise self._no_views_in_v0()

    def _write_new_view_metadata(self, metadata: ViewMetadata,
                                 version: int) -> tuple[str, ViewMetadata]:
        """Create ``<NNNNN>-<uuid>[.gz].metadata.json`` (Java's ``BaseViewOperations``); its
        location and the metadata as written."""
        data, gzip = view_metadata_file_bytes(metadata)
        name = metastore_metadata_file_name(version, uuid.uuid4(), gzip=gzip)
        location = join_location(view_metadata_dir(metadata), name)
        write_metadata_file(location, data, self._io, gzip=gzip)
        return location, load_view_metadata(data, file=location)

    def create_view(self, identifier: NamespaceLike, metadata: ViewMetadata) -> LoadedView:
        """Write ``00000-<uuid>.gz.metadata.json`` and insert the view's row."""
        ident = to_new_identifier(identifier, "view name")
        _join_namespace(ident[:-1])
        self._require_view_schema()
        self._check_free(ident, "create view")
        location, committed = self._write_new_view_metadata(metadata, 0)
        self._publish(location, self._insert_row, ident, location, VIEW_TYPE, "create view")
        return LoadedView(ident, location, committed, self._io, None)

    def _check_free(self, ident: Identifier, action: str) -> None:
        """Fail early, before writing a file, when the namespace is missing or the name taken
        (the transaction that inserts the row checks again)."""
        if ident[:-1] and not self.namespace_exists(ident[:-1]):
            raise self._no_such_namespace(ident[:-1])
        if self.view_exists(ident):
            raise self._name_taken(ident, "view", action, self._path)
        if self.table_exists(ident):
            raise self._name_taken(ident, "table", action, self._path)

    def commit_view(self, identifier: NamespaceLike, base_location: str | None,
                    new_metadata: ViewMetadata) -> LoadedView:
        """Write the view's next metadata file, then check-and-put the row's pointer."""
        ident = to_identifier(identifier)
        if base_location is None:
            return self.create_view(ident, new_metadata)
        _join_namespace(ident[:-1])
        self._require_view_schema()
        row = self._row(ident, "views")
        if row is None or row[0] != base_location:
            raise self._conflict(ident, base_location, None if row is None else row[0], "view")
        parsed = parse_metadata_file_name(posixpath.basename(base_location))
        version = parsed.version + 1 if parsed is not None and parsed.layout == "metastore" else 0
        location, committed = self._write_new_view_metadata(new_metadata, version)
        self._publish(location, self._swap, ident, base_location, location, VIEW_TYPE)
        return LoadedView(ident, location, committed, self._io, base_location)

    def drop_view(self, identifier: NamespaceLike, purge: bool = False) -> None:
        """Delete the view's row; ``purge`` then deletes its current metadata file (what Java's
        ``dropView`` always does)."""
        ident = to_identifier(identifier)
        key = (self._name, _join_namespace(ident[:-1]), ident[-1])
        location: str | None = None
        try:
            with self._transaction() as (conn, v1):
                if not v1:
                    raise self._no_views_in_v0()
                row = conn.execute(f"SELECT metadata_location FROM {TABLES_TABLE} {_ROW_WHERE} "
                                   f"{_VIEW_FILTER}", key).fetchone()
                if row is None:
                    raise self._no_such_view(ident, conn, v1)
                location = None if row[0] is None else str(row[0])
                conn.execute(f"DELETE FROM {TABLES_TABLE} {_ROW_WHERE} {_VIEW_FILTER}", key)
        except _OutcomeUnknown as e:
            raise e.error from None
        if purge and location:
            self._discard(location)

    def _no_such_view(self, ident: Identifier, conn: sqlite3.Connection,
                      v1: bool) -> NoSuchView:
        detail = (" (it is a table)" if self._row_type(conn, v1, ident) == TABLE_TYPE else "")
        return NoSuchView(f"view {identifier_to_string(ident)!r} does not exist in catalog "
                          f"{self._name!r}{detail}", file=self._path, value=ident)

    def rename_view(self, identifier: NamespaceLike, new_identifier: NamespaceLike) -> None:
        """Move the view's row to another name (Java's ``renameView``; files stay put)."""
        self._rename_row(to_identifier(identifier), to_new_identifier(new_identifier, "view name"),
                         VIEW_TYPE)

    def register_view(self, identifier: NamespaceLike, metadata_location: str) -> LoadedView:
        """Insert a view row pointing at an existing view metadata file (read first)."""
        ident = to_new_identifier(identifier, "view name")
        _join_namespace(ident[:-1])
        self._require_view_schema()
        metadata = load_view_metadata_file(metadata_location, self._io)
        self._insert_row(ident, metadata_location, VIEW_TYPE, "register view")
        return LoadedView(ident, metadata_location, metadata, self._io, None)


def is_sqlite_database(path: str | os.PathLike[str]) -> bool:
    """Whether a local file is a SQLite database (starts with SQLite's magic) or is empty."""
    try:
        with open(os.fspath(path), "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError:
        return False
    return head in (b"", _SQLITE_MAGIC)
