"""A catalog that is a directory tree, compatible with Iceberg Java's ``HadoopCatalog``.

Layout (spec: "File System Tables"; Java's HadoopCatalog): namespaces are directories under the
warehouse (nested namespaces are nested directories), and a table ``ns1.ns2.t`` lives in
``<warehouse>/ns1/ns2/t`` with ``metadata/v<N>.metadata.json`` and ``version-hint.text``.
A directory is a table when its ``metadata/`` directory holds a metadata file; every other
directory is a namespace. As in Java, namespaces have no stored properties (Java reports only
``location``) and there are no views.

Decisions where Java is silent or differs:
- Entries whose name starts with ``.`` (``.ipynb_checkpoints``, temporary files) are skipped.
- A table directory is recognised by any metadata file name icenb can read (``v<N>`` or
  ``<N>-<uuid>``, plain or gzip) or by ``version-hint.text``; Java looks for names ending in
  ``.metadata.json`` only. The current file is found as ``icenb.open`` finds it.
"""

from __future__ import annotations

import os

from icenb.catalog.base import (
    Catalog,
    Identifier,
    NamespaceLike,
    identifier_to_string,
    to_identifier,
    to_namespace,
    warehouse_location,
)
from icenb.errors import NoSuchNamespace, NoSuchTable, NoSuchView, NotFound, ValidationError
from icenb.io.file_io import FileIO, join_location
from icenb.io.metadata_files import VERSION_HINT, find_current_metadata, parse_metadata_file_name

__all__ = ["FilesystemCatalog"]

_FORBIDDEN_LEVELS = frozenset({".", ".."})


def _check_level(level: str, what: str) -> None:
    if "/" in level or "\\" in level or level in _FORBIDDEN_LEVELS:
        raise ValidationError(f"a {what} in a filesystem catalog cannot contain a slash or "
                              "be '.' or '..' (it is a directory name)", field=what, value=level)


class FilesystemCatalog(Catalog):
    """Namespaces and tables under a warehouse directory (Iceberg ``HadoopCatalog`` layout).

    ``warehouse`` is a local path or a URI FileIO understands (``file:``, ``s3://``, ...).
    ``properties`` configure the FileIO built when ``io`` is not given.
    """

    def __init__(self, warehouse: str | os.PathLike[str], *, name: str = "default",
                 io: FileIO | None = None, properties: dict[str, str] | None = None) -> None:
        if io is not None and properties is not None:
            raise ValidationError("give io or properties, not both", field="properties")
        super().__init__(name, io if io is not None else FileIO(properties))
        self._warehouse = warehouse_location(warehouse)

    @property
    def warehouse(self) -> str:
        """The warehouse directory (absolute for local paths)."""
        return self._warehouse

    def __repr__(self) -> str:
        return f"FilesystemCatalog({self._warehouse!r}, name={self._name!r})"

    # ------------------------------------------------------------------ locations

    def namespace_location(self, namespace: NamespaceLike) -> str:
        """The directory of a namespace (whether or not it exists)."""
        levels = to_namespace(namespace)
        for level in levels:
            _check_level(level, "namespace level")
        return join_location(self._warehouse, *levels) if levels else self._warehouse

    def table_location(self, identifier: NamespaceLike) -> str:
        """The directory of a table (whether or not it exists): ``<warehouse>/<levels>/<name>``."""
        ident = to_identifier(identifier)
        _check_level(ident[-1], "table name")
        return join_location(self.namespace_location(ident[:-1]), ident[-1])

    # ------------------------------------------------------------------ directory tests

    def _is_dir(self, location: str) -> bool:
        entry = self._io.stat(location)
        return entry is not None and entry.is_dir

    def _is_table_dir(self, location: str) -> bool:
        """Whether ``location/metadata`` holds a metadata file (or a version hint)."""
        metadata_dir = join_location(location, "metadata")
        if not self._is_dir(metadata_dir):
            return False
        for entry in self._io.list_dir(metadata_dir):
            if entry.is_dir or entry.name.startswith("."):
                continue
            if entry.name == VERSION_HINT or parse_metadata_file_name(entry.name) is not None:
                return True
        return False

    def _child_dirs(self, location: str) -> list[str]:
        try:
            entries = self._io.list_dir(location)
        except NotFound:
            return []
        return [e.name for e in entries if e.is_dir and not e.name.startswith(".")]

    # ------------------------------------------------------------------ namespaces

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """A namespace exists when its directory does and is not a table directory."""
        location = self.namespace_location(namespace)
        return self._is_dir(location) and not self._is_table_dir(location)

    def _no_such_namespace(self, namespace: tuple[str, ...]) -> Exception:
        what = ("the warehouse directory" if not namespace
                else f"namespace {identifier_to_string(namespace)!r}")
        return NoSuchNamespace(f"{what} does not exist in catalog {self._name!r}",
                               file=self.namespace_location(namespace), value=namespace)

    def list_namespaces(self, parent: NamespaceLike = ()) -> list[tuple[str, ...]]:
        """Sub-directories of ``parent`` that are not tables (Java's ``listNamespaces``)."""
        ns = to_namespace(parent)
        location = self.namespace_location(ns)
        self._require_namespace(ns)
        return sorted((*ns, name) for name in self._child_dirs(location)
                      if not self._is_table_dir(join_location(location, name)))

    def namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """Only ``location`` (the directory): the Hadoop layout stores no namespace properties."""
        ns = to_namespace(namespace)
        self._require_namespace(ns)
        return {"location": self.namespace_location(ns)}

    # ------------------------------------------------------------------ tables

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """Sub-directories of the namespace that hold table metadata."""
        ns = to_namespace(namespace)
        location = self.namespace_location(ns)
        self._require_namespace(ns)
        return sorted((*ns, name) for name in self._child_dirs(location)
                      if self._is_table_dir(join_location(location, name)))

    def table_exists(self, identifier: NamespaceLike) -> bool:
        """Whether the table's directory holds table metadata (no metadata file is read)."""
        return self._is_table_dir(self.table_location(identifier))

    def _table_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """The current ``v<N>.metadata.json`` (version hint, then newer versions, as Java)."""
        ident = identifier
        location = self.table_location(ident)
        if not self._is_table_dir(location):
            detail = ""
            if ident[:-1] and not self.namespace_exists(ident[:-1]):
                detail = f" (namespace {identifier_to_string(ident[:-1])!r} does not exist)"
            raise NoSuchTable(f"table {identifier_to_string(ident)!r} does not exist in "
                              f"catalog {self._name!r}{detail}", file=location, value=ident)
        return find_current_metadata(location, self._io), None

    # ------------------------------------------------------------------ views

    def _view_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """Always ``NoSuchView``: the Hadoop layout has no views (as Java's HadoopCatalog)."""
        ident = identifier
        raise NoSuchView(f"view {identifier_to_string(ident)!r} does not exist in catalog "
                         f"{self._name!r}: a filesystem catalog has no views",
                         file=self.table_location(ident), value=ident)
