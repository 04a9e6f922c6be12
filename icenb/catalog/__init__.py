"""Catalogs: where tables and views live. Read side: list namespaces, tables and views; load
their current metadata (the write side comes with table authoring).

- :class:`FilesystemCatalog`: a directory tree in Iceberg Java's ``HadoopCatalog`` layout.
- :class:`SqlCatalog`: a SQLite database with the schema of Iceberg's JDBC catalog and
  PyIceberg's ``SqlCatalog``.
- :func:`open_catalog`: either one, chosen from what a location is.
"""

from __future__ import annotations

import os

from icenb.catalog.base import (
    Catalog,
    Identifier,
    LoadedTable,
    LoadedView,
    NamespaceLike,
    identifier_to_string,
    to_identifier,
    to_namespace,
)
from icenb.catalog.filesystem import FilesystemCatalog
from icenb.catalog.sql import SqlCatalog, is_sqlite_database
from icenb.errors import NotFound, ValidationError
from icenb.io.file_io import FileIO

__all__ = [
    "Catalog",
    "FilesystemCatalog",
    "Identifier",
    "LoadedTable",
    "LoadedView",
    "NamespaceLike",
    "SqlCatalog",
    "identifier_to_string",
    "open_catalog",
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
