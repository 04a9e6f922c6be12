"""Catalogs: where tables and views live. Read side: list namespaces, tables and views; load
their current metadata (the write side comes with table authoring).

- :class:`FilesystemCatalog`: a directory tree in Iceberg Java's ``HadoopCatalog`` layout.
- :class:`SqlCatalog`: a SQLite database with the schema of Iceberg's JDBC catalog and
  PyIceberg's ``SqlCatalog``.
- :func:`open_catalog`: either one, chosen from what a location is.
- :func:`open_warehouse_catalog`: the embedded default, a directory with its SQLite catalog.
"""

from __future__ import annotations

import os

from icenb.catalog.base import (
    Catalog,
    Identifier,
    LoadedTable,
    LoadedView,
    NamespaceLike,
    NamespaceNotEmpty,
    PropertiesUpdateSummary,
    identifier_to_string,
    purge_table_files,
    reachable_files,
    to_identifier,
    to_namespace,
)
from icenb.catalog.filesystem import FilesystemCatalog
from icenb.catalog.sql import SqlCatalog, is_sqlite_database
from icenb.errors import FileIOError, NotFound, ValidationError
from icenb.io.file_io import FileIO

__all__ = [
    "WAREHOUSE_CATALOG_FILE",
    "Catalog",
    "FilesystemCatalog",
    "Identifier",
    "LoadedTable",
    "LoadedView",
    "NamespaceLike",
    "NamespaceNotEmpty",
    "PropertiesUpdateSummary",
    "SqlCatalog",
    "identifier_to_string",
    "open_catalog",
    "open_warehouse_catalog",
    "purge_table_files",
    "reachable_files",
    "to_identifier",
    "to_namespace",
]

_SQL_PREFIXES = ("sqlite:", "jdbc:sqlite:")


def open_catalog(location: str | os.PathLike[str], *, name: str = "default",
                 warehouse: str | os.PathLike[str] | None = None, io: FileIO | None = None,
                 properties: dict[str, str] | None = None) -> Catalog:
    """A catalog from its location: a SQLite file or URI (``sqlite:///...``, ``jdbc:sqlite:``)
    is a :class:`SqlCatalog`; a directory or object-store URI is a :class:`FilesystemCatalog`.
    ``warehouse`` applies to SQL catalogs only."""
    text = os.fspath(location)
    if not isinstance(text, str) or not text:
        raise ValidationError("a catalog location must be a non-empty string", value=location)
    lowered = text.lower()
    if lowered.startswith(_SQL_PREFIXES):
        return SqlCatalog(text, name=name, warehouse=warehouse, io=io, properties=properties)
    if "://" not in text and not lowered.startswith("file:"):
        if not os.path.exists(text):
            raise NotFound("no catalog here: the path does not exist", file=os.path.abspath(text))
        if os.path.isfile(text):
            if not is_sqlite_database(text):
                raise ValidationError("not a catalog: a file that is not a SQLite database "
                                      "(use icenb.open for a metadata file)",
                                      file=os.path.abspath(text))
            return SqlCatalog(text, name=name, warehouse=warehouse, io=io,
                              properties=properties)
    if warehouse is not None:
        raise ValidationError("warehouse= is for SQL catalogs; a filesystem catalog's "
                              "warehouse is its location", field="warehouse", value=warehouse)
    return FilesystemCatalog(text, name=name, io=io, properties=properties)


#: The SQLite file of a warehouse directory (see :func:`open_warehouse_catalog`).
WAREHOUSE_CATALOG_FILE = "catalog.db"


def open_warehouse_catalog(path: str | os.PathLike[str], *, name: str = "default",
                           io: FileIO | None = None) -> SqlCatalog:
    """The embedded default catalog: the local directory ``path`` (created when missing) is the
    warehouse, ``<path>/catalog.db`` its SQLite catalog (created with Iceberg's JDBC schema).

    Tables go to ``<path>/<namespace levels>/<table>``. The database is a plain, visible file in
    the warehouse (a file is never taken for a namespace) named for what it is, not for a tool;
    PyIceberg opens the same warehouse with
    ``SqlCatalog(name, uri=f"sqlite:///{path}/catalog.db", warehouse=f"file://{path}")``.
    """
    text = os.fspath(path)
    if not isinstance(text, str) or not text:
        raise ValidationError("a warehouse path must be a non-empty string", value=path)
    if "://" in text or text.lower().startswith("file:"):
        raise ValidationError("an embedded warehouse is a local directory path",
                              field="path", value=text)
    root = os.path.abspath(text)
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as e:
        raise FileIOError(f"cannot create the warehouse directory: {e}", file=root) from None
    catalog = SqlCatalog(os.path.join(root, WAREHOUSE_CATALOG_FILE), name=name, warehouse=root,
                         io=io)
    catalog.initialize()
    return catalog
