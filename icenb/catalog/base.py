"""What every catalog offers: namespaces, and tables and views found by identifier.

An identifier is a tuple of strings: namespace levels then a name (``("db", "events")``). A string
is split on every dot (``"db.events"``), as Iceberg Java's ``TableIdentifier.parse`` and PyIceberg
do; a level or name that itself contains a dot needs the tuple form. A namespace is a tuple of
levels; ``()`` is the root.

The catalog layer returns metadata plus the FileIO to read it with (:class:`LoadedTable`,
:class:`LoadedView`); ``icenb.table`` wraps them into ``Table`` objects.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple

from icenb.errors import NotFound, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata, load_view_metadata_file
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.view_metadata import ViewMetadata

__all__ = [
    "Catalog",
    "Identifier",
    "LoadedTable",
    "LoadedView",
    "NamespaceLike",
    "identifier_to_string",
    "to_identifier",
    "to_namespace",
]

#: Namespace levels followed by a table or view name.
Identifier = tuple[str, ...]
#: A namespace or identifier as given by a caller: a dotted string or a sequence of levels.
NamespaceLike = str | Sequence[str]


def to_namespace(namespace: NamespaceLike) -> tuple[str, ...]:
    """A namespace as a tuple of levels; ``""`` and ``()`` are the root."""
    if isinstance(namespace, str):
        levels: tuple[str, ...] = tuple(namespace.split(".")) if namespace else ()
    elif isinstance(namespace, Sequence):
        levels = tuple(namespace)
    else:
        raise ValidationError("a namespace is a dotted string or a tuple of strings",
                              value=namespace)
    for level in levels:
        if not isinstance(level, str) or not level:
            raise ValidationError("a namespace level must be a non-empty string",
                                  field="namespace", value=namespace)
    return levels


def to_identifier(identifier: NamespaceLike) -> Identifier:
    """A table or view identifier as a tuple (namespace levels + name); the name must exist."""
    levels = to_namespace(identifier)
    if not levels:
        raise ValidationError("an identifier needs at least a name", field="identifier",
                              value=identifier)
    return levels


def warehouse_location(warehouse: str | os.PathLike[str]) -> str:
    """A warehouse location as catalogs keep it: local paths absolute, no trailing slash."""
    location = os.fspath(warehouse)
    if not isinstance(location, str) or not location:
        raise ValidationError("a warehouse location must be a non-empty string",
                              field="warehouse", value=warehouse)
    if "://" not in location and not location.startswith("file:"):
        location = os.path.abspath(location)
    return location.rstrip("/") or "/"


def identifier_to_string(identifier: Sequence[str]) -> str:
    """Levels joined with dots, for messages (``("db", "t")`` -> ``"db.t"``)."""
    return ".".join(identifier)


class LoadedTable(NamedTuple):
    """A table as its catalog knows it: the pointer, the metadata it points to, its FileIO."""

    identifier: Identifier
    metadata_location: str
    metadata: TableMetadata
    io: FileIO
    #: The pointer before the last commit (SQL catalogs keep it; None when unknown).
    previous_metadata_location: str | None = None


class LoadedView(NamedTuple):
    """A view as its catalog knows it: the pointer, the metadata it points to, its FileIO."""

    identifier: Identifier
    metadata_location: str
    metadata: ViewMetadata
    io: FileIO
    previous_metadata_location: str | None = None


class Catalog(ABC):
    """Read side of an Iceberg catalog: list namespaces, tables and views; load them.

    Lists are sorted. ``table_exists`` looks at the catalog's pointer only (no metadata file is
    read); ``load_table`` reads the current metadata file.
    """

    def __init__(self, name: str, io: FileIO) -> None:
        if not isinstance(name, str) or not name:
            raise ValidationError("a catalog name must be a non-empty string", field="name",
                                  value=name)
        self._name = name
        self._io = io

    @property
    def name(self) -> str:
        """The catalog's name (SQL catalogs store it in every row)."""
        return self._name

    @property
    def io(self) -> FileIO:
        """The FileIO that metadata and data files are read through."""
        return self._io

    # ------------------------------------------------------------------ namespaces

    @abstractmethod
    def list_namespaces(self, parent: NamespaceLike = ()) -> list[tuple[str, ...]]:
        """The namespaces directly under ``parent`` (the root by default), as full tuples."""

    @abstractmethod
    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """Whether the namespace exists (the root always does)."""

    @abstractmethod
    def namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """The namespace's properties, with ``location`` as Iceberg Java reports it."""

    # ------------------------------------------------------------------ tables

    @abstractmethod
    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """The tables directly in a namespace (not views), as identifiers."""

    @abstractmethod
    def table_exists(self, identifier: NamespaceLike) -> bool:
        """Whether the catalog has a table under this identifier."""

    def table_metadata_location(self, identifier: NamespaceLike) -> str:
        """The table's current metadata file (``NoSuchTable`` when there is no such table)."""
        return self._table_pointer(to_identifier(identifier))[0]

    @abstractmethod
    def _table_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """(current, previous) metadata location of a table; ``NoSuchTable`` when absent."""

    def load_table(self, identifier: NamespaceLike) -> LoadedTable:
        """The table's current metadata, read from the file the catalog points to."""
        ident = to_identifier(identifier)
        location, previous = self._table_pointer(ident)
        metadata = self._read_table_metadata(ident, location)
        return LoadedTable(ident, location, metadata, self._io, previous)

    def all_tables(self) -> list[Identifier]:
        """Every table in every namespace (a walk of the namespace tree)."""
        found: list[Identifier] = []
        pending: list[tuple[str, ...]] = [()]
        while pending:
            namespace = pending.pop()
            found.extend(self.list_tables(namespace))
            pending.extend(self.list_namespaces(namespace))
        return sorted(found)

    # ------------------------------------------------------------------ views

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """The views directly in a namespace (none, for catalogs without views)."""
        ns = to_namespace(namespace)
        self._require_namespace(ns)
        return []

    def view_exists(self, identifier: NamespaceLike) -> bool:
        """Whether the catalog has a view under this identifier."""
        to_identifier(identifier)
        return False

    def view_metadata_location(self, identifier: NamespaceLike) -> str:
        """The view's current metadata file (``NoSuchView`` when there is no such view)."""
        return self._view_pointer(to_identifier(identifier))[0]

    @abstractmethod
    def _view_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """(current, previous) metadata location of a view; ``NoSuchView`` when absent."""

    def load_view(self, identifier: NamespaceLike) -> LoadedView:
        """The view's current metadata, read from the file the catalog points to."""
        ident = to_identifier(identifier)
        location, previous = self._view_pointer(ident)
        try:
            metadata = load_view_metadata_file(location, self._io)
        except NotFound as e:
            if e.file != location:
                raise
            raise NotFound(f"view {identifier_to_string(ident)!r} of catalog {self._name!r}: "
                           "its metadata file does not exist", file=location) from None
        return LoadedView(ident, location, metadata, self._io, previous)

    # ------------------------------------------------------------------ helpers

    def _require_namespace(self, namespace: tuple[str, ...]) -> None:
        if not self.namespace_exists(namespace):
            raise self._no_such_namespace(namespace)

    @abstractmethod
    def _no_such_namespace(self, namespace: tuple[str, ...]) -> Exception:
        """The ``NoSuchNamespace`` error for a namespace (names the catalog and location)."""

    def _read_table_metadata(self, identifier: Identifier, location: str) -> TableMetadata:
        try:
            return load_table_metadata(location, self._io)
        except NotFound as e:
            if e.file != location:
                raise
            raise NotFound(f"table {identifier_to_string(identifier)!r} of catalog "
                           f"{self._name!r}: its metadata file does not exist",
                           file=location) from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r})"
