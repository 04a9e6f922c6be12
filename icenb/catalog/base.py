"""What every catalog offers: namespaces, and tables and views found by identifier.

An identifier is a tuple of strings: namespace levels then a name (``("db", "events")``). A string
is split on every dot (``"db.events"``), as Iceberg Java's ``TableIdentifier.parse`` and PyIceberg
do; a level or name that itself contains a dot needs the tuple form. A namespace is a tuple of
levels; ``()`` is the root.

The catalog layer returns metadata plus the FileIO to read it with (:class:`LoadedTable`,
:class:`LoadedView`); ``icenb.table`` wraps them into ``Table`` objects.

Write side (DESIGN: "Commits are optimistic and atomic"): a commit writes a new metadata file
under a name nobody else can take, then swaps the catalog's pointer from the metadata the change
was based on to the new file; when the pointer moved meanwhile the commit fails with
``CommitConflict`` and leaves no file behind. The catalog keeps the ``metadata-log`` (spec: Table
Metadata Fields) as Iceberg Java's ``TableMetadata.Builder`` does: the base file is appended
(with the base's ``last-updated-ms``) and the log is cut to
``write.metadata.previous-versions-max`` entries (at least 1); with
``write.metadata.delete-after-commit.enabled`` the files that fell off the log are deleted after a
successful commit (Java's ``deleteRemovedMetadataFiles``).

Views (spec: "Iceberg View Spec") are committed the same way: ``create_view``, ``commit_view``
(swap from a base metadata file; ``CommitConflict`` when the pointer moved, the new file deleted
again), ``drop_view``, ``rename_view`` and ``register_view``. View metadata has no
``metadata-log``: its history is in ``versions`` and ``version-log``, which the authoring code
maintains; the catalog only writes the file and moves the pointer. New view metadata files are
gzip-compressed unless the view property ``write.metadata.compression-codec`` says ``none``: the
default of Iceberg Java's ``ViewProperties`` (1.10.2: ``METADATA_COMPRESSION_DEFAULT = "gzip"``,
unlike tables' ``none``). A table and a view never share a name in one catalog: creating,
renaming or registering either onto the other's name raises ``AlreadyExists`` saying what holds
the name (Java's ``JdbcCatalog`` and ``ViewCatalog`` contract).
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from icenb.errors import (
    AlreadyExists,
    CommitConflict,
    IcebergError,
    IcebergWarning,
    NamespaceNotEmpty,
    NotFound,
    ValidationError,
)
from icenb.io.file_io import FileIO, join_location
from icenb.io.metadata_files import load_table_metadata, load_view_metadata_file
from icenb.io.snapshot_files import CONTENT_KINDS, SnapshotFiles
from icenb.progress import DELETING_FILES, PURGING_TABLE, progress
from icenb.reprs import safe_repr
from icenb.spec.properties import (
    FOLDER_STORAGE_PATH,
    GC_ENABLED,
    METADATA_COMPRESSION,
    METADATA_DELETE_AFTER_COMMIT,
    METADATA_PREVIOUS_VERSIONS_MAX,
    OBJECT_STORAGE_PATH,
    WRITE_DATA_PATH,
    WRITE_METADATA_PATH,
    bool_property,
    int_property,
    lenient_int_property,
)
from icenb.spec.snapshot import MetadataLogEntry
from icenb.spec.table_metadata import TableMetadata, to_json_string
from icenb.spec.view_metadata import ViewMetadata, view_metadata_to_json

__all__ = [
    "GC_ENABLED",
    "MAX_NAME_BYTES",
    "METADATA_COMPRESSION",
    "METADATA_DELETE_AFTER_COMMIT",
    "METADATA_PREVIOUS_VERSIONS_MAX",
    "VIEW_METADATA_COMPRESSION_DEFAULT",
    "WRITE_METADATA_PATH",
    "Catalog",
    "Identifier",
    "LoadedTable",
    "LoadedView",
    "NamespaceLike",
    "NamespaceNotEmpty",
    "PropertiesUpdateSummary",
    "bool_property",
    "check_name",
    "identifier_to_string",
    "int_property",
    "metadata_file_bytes",
    "next_metadata_log",
    "purge_table_files",
    "reachable_files",
    "to_identifier",
    "to_namespace",
    "to_new_identifier",
    "to_new_namespace",
    "view_metadata_dir",
    "view_metadata_file_bytes",
]

# Table properties the catalogs honour (names and defaults of Iceberg Java's TableProperties).
# (keys: icenb/spec/properties.py) How many previous metadata files the ``metadata-log``
# keeps by default (at least 1).
METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT = 100
#: Views' default ``write.metadata.compression-codec`` (Java's ``ViewProperties``; tables: none).
VIEW_METADATA_COMPRESSION_DEFAULT = "gzip"


class PropertiesUpdateSummary(NamedTuple):
    """What ``update_namespace_properties`` did (keys sorted), as PyIceberg reports it."""

    removed: list[str]
    updated: list[str]
    missing: list[str]

#: Namespace levels followed by a table or view name.
Identifier = tuple[str, ...]
#: A namespace or identifier as given by a caller: a dotted string or a sequence of levels.
NamespaceLike = str | Sequence[str]


#: The longest namespace level or table / view name, in bytes of UTF-8: a name becomes a
#: directory name (most filesystems and object-store key segments allow 255).
MAX_NAME_BYTES = 255
#: Names a level may not be: they are the current and the parent directory.
_DOT_NAMES = frozenset({".", ".."})


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def check_name(level: str, what: str) -> None:
    """The one name rule of every catalog for a namespace level or a table / view name that
    becomes part of a location: no ``/`` or ``\\``, not ``.`` or ``..``, no NUL or other
    control character, at most :data:`MAX_NAME_BYTES` bytes (``ValidationError`` naming it).
    A name passing it is one directory below its namespace: it cannot leave the warehouse."""
    if "/" in level or "\\" in level:
        raise ValidationError(f"a {what} cannot contain '/' or '\\' (it becomes a directory "
                              "name; a slash would put it in another folder)", field=what,
                              value=level)
    if level in _DOT_NAMES:
        raise ValidationError(f"a {what} cannot be '.' or '..' (it becomes a directory name)",
                              field=what, value=level)
    if _has_control(level):
        raise ValidationError(f"a {what} cannot contain NUL or control characters", field=what,
                              value=level)
    if len(level.encode("utf-8")) > MAX_NAME_BYTES:
        raise ValidationError(f"a {what} is at most {MAX_NAME_BYTES} bytes of UTF-8", field=what,
                              value=level)


def to_new_identifier(identifier: NamespaceLike, what: str = "table name") -> Identifier:
    """:func:`to_identifier` of a name being created (or renamed to): every level passes
    :func:`check_name`."""
    ident = to_identifier(identifier)
    for level in ident[:-1]:
        check_name(level, "namespace level")
    check_name(ident[-1], what)
    return ident


def to_new_namespace(namespace: NamespaceLike) -> tuple[str, ...]:
    """:func:`to_namespace` of a namespace being created: every level passes
    :func:`check_name`."""
    levels = to_namespace(namespace)
    for level in levels:
        check_name(level, "namespace level")
    return levels


def to_namespace(namespace: NamespaceLike) -> tuple[str, ...]:
    """A namespace as a tuple of levels; ``""`` and ``()`` are the root. A NUL or control
    character is refused in any name (no catalog can store it)."""
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
        if _has_control(level):
            raise ValidationError("a name cannot contain NUL or control characters",
                                  field="namespace", value=level)
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


# --------------------------------------------------------------------------- table properties


def metadata_file_bytes(metadata: TableMetadata) -> tuple[bytes, bool]:
    """The JSON bytes of a metadata file and whether to gzip them
    (``write.metadata.compression-codec``: ``none``, the default, or ``gzip``, as Java)."""
    gzip = _compression(metadata.properties, "none")
    return to_json_string(metadata).encode("utf-8"), gzip


def _compression(properties: Mapping[str, str], default: str) -> bool:
    codec = str(properties.get(METADATA_COMPRESSION, default)).strip().lower()
    if codec not in ("none", "gzip"):
        raise ValidationError("unsupported metadata compression codec (use none or gzip)",
                              field=METADATA_COMPRESSION, value=codec)
    return codec == "gzip"


def view_metadata_file_bytes(metadata: ViewMetadata) -> tuple[bytes, bool]:
    """The JSON bytes of a view metadata file and whether to gzip them
    (``write.metadata.compression-codec``: ``gzip``, the views' default in Java, or ``none``)."""
    gzip = _compression(metadata.properties, VIEW_METADATA_COMPRESSION_DEFAULT)
    text = json.dumps(view_metadata_to_json(metadata), separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8"), gzip


def view_metadata_dir(metadata: ViewMetadata) -> str:
    """Where a metastore catalog writes a view's metadata files: ``write.metadata.path`` or
    ``<location>/metadata`` (Java's ``BaseViewOperations.metadataFileLocation``)."""
    path = metadata.properties.get(WRITE_METADATA_PATH)
    return path.rstrip("/") if path else join_location(metadata.location, "metadata")


def next_metadata_log(metadata: TableMetadata, base_location: str | None,
                      base_last_updated_ms: int | None) -> TableMetadata:
    """``metadata`` with the base file appended to its ``metadata-log`` (unless it already is the
    last entry) and the log cut to ``write.metadata.previous-versions-max`` (at least 1), as
    Iceberg Java's ``TableMetadata.Builder`` (spec: Table Metadata Fields, ``metadata-log``)."""
    log = list(metadata.metadata_log)
    changed = False
    if base_location is not None and (not log or log[-1].metadata_file != base_location):
        if base_last_updated_ms is None:
            raise ValidationError("the base metadata's last-updated-ms is needed to extend the "
                                  "metadata-log", field="metadata-log", value=base_location)
        log.append(MetadataLogEntry(base_last_updated_ms, base_location))
        changed = True
    keep = max(1, lenient_int_property(metadata.properties, METADATA_PREVIOUS_VERSIONS_MAX,
                                METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT))
    if len(log) > keep:
        log = log[len(log) - keep:]
        changed = True
    if not changed:
        return metadata
    return dataclasses.replace(metadata, metadata_log=tuple(log))


# --------------------------------------------------------------------------- purge


#: Table properties that put a table's files elsewhere than under its location: files there
#: were placed by the user's explicit setting, so a purge may delete them.
_PATH_PROPERTIES = (WRITE_METADATA_PATH, WRITE_DATA_PATH, OBJECT_STORAGE_PATH,
                    FOLDER_STORAGE_PATH)


def _plain(location: str) -> str:
    """A location without a trailing slash, and ``file:`` URIs as plain paths."""
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            location = location[len(prefix):]
            break
    return location.rstrip("/")


def table_roots(metadata: TableMetadata, metadata_location: str | None = None) -> list[str]:
    """The folders a table's files may live in: its location, the folder holding the current
    metadata file's ``metadata/`` folder, and the paths its ``write.*.path`` properties name."""
    roots = [metadata.location]
    if metadata_location is not None:
        folder = _plain(metadata_location).rsplit("/", 1)[0]
        roots.append(folder.rsplit("/", 1)[0] if folder.endswith("/metadata") else folder)
    roots += [metadata.properties[k] for k in _PATH_PROPERTIES if metadata.properties.get(k)]
    return [_plain(r) for r in roots if r]


def is_inside(location: str, roots: Iterable[str]) -> bool:
    """Whether ``location`` lies under one of ``roots`` (no ``..`` segment can climb out)."""
    path = _plain(location)
    if "/../" in f"/{path}/" or "/./" in f"/{path}/":
        return False
    return any(path.startswith(root + "/") for root in roots)


def reachable_files(metadata: TableMetadata, io: FileIO, metadata_location: str | None = None, *,
                    include_content: bool | None = None,
                    failures: list[tuple[str, str]] | None = None) -> list[str]:
    """Every file a purge deletes, as Iceberg Java's ``CatalogUtil.dropTableData``: the data
    and delete files named in every manifest of every snapshot (unless ``gc.enabled`` is false
    or ``include_content`` says otherwise), the manifests and manifest lists, v4 root
    manifests, leaves and manifest-DV Puffin files (:class:`~icenb.io.snapshot_files.
    SnapshotFiles` with ``live_only=False``), statistics and partition statistics files, the
    ``metadata-log`` files and ``metadata_location``.

    Unlike Java, a file outside the table's folders (:func:`table_roots`) is never listed: the
    metadata of a table someone else wrote may name any file. It goes to ``failures`` instead.
    """
    failures = [] if failures is None else failures
    if include_content is None:
        include_content = bool_property(metadata.properties, GC_ENABLED, True)
    walked = SnapshotFiles(io, metadata, failures=failures).all_files(live_only=False)
    files: dict[str, None] = {}
    if include_content:
        for kind in CONTENT_KINDS:
            files.update(dict.fromkeys(sorted(walked[kind])))
    for kind in ("manifest_dvs", "manifests", "root_manifests", "manifest_lists"):
        files.update(dict.fromkeys(sorted(walked[kind])))
    files.update(dict.fromkeys(s.statistics_path for s in metadata.statistics))
    files.update(dict.fromkeys(s.statistics_path for s in metadata.partition_statistics))
    files.update(dict.fromkeys(e.metadata_file for e in metadata.metadata_log))
    if metadata_location is not None:
        files[metadata_location] = None
    roots = table_roots(metadata, metadata_location)
    inside = []
    for f in files:
        if is_inside(f, roots):
            inside.append(f)
        else:
            failures.append((f, "outside the table's location: kept (a purge deletes only "
                                f"under {', '.join(sorted(set(roots)))})"))
    return inside


def _delete_all(io: FileIO, locations: Iterable[str]) -> list[tuple[str, str]]:
    """Delete files (missing ones are fine), in parallel; the (location, error) that failed."""
    def delete(location: str) -> tuple[str, str] | None:
        try:
            io.delete(location, missing_ok=True)
        except IcebergError as e:
            return location, str(e)
        return None

    todo = list(locations)
    failed: list[tuple[str, str]] = []
    pool = ThreadPoolExecutor(max_workers=8)
    try:
        with progress(DELETING_FILES, total=len(todo)) as task:
            for result in pool.map(delete, todo):
                if result is not None:
                    failed.append(result)
                task.advance()
    finally:  # interrupted: the deletes not started yet are not made
        pool.shutdown(cancel_futures=True)
    return failed


def purge_table_files(metadata: TableMetadata, io: FileIO,
                      metadata_location: str | None = None) -> list[tuple[str, str]]:
    """Delete every file :func:`reachable_files` finds; returns what could not be read or
    deleted (location, reason) and warns about it, as Java logs and goes on."""
    failures: list[tuple[str, str]] = []
    with progress(PURGING_TABLE):
        files = reachable_files(metadata, io, metadata_location, failures=failures)
        failures.extend(_delete_all(io, files))
    if failures:
        warnings.warn(IcebergWarning(
            f"purge: {len(failures)} file(s) could not be read or deleted, e.g. "
            f"{failures[0][0]}: {failures[0][1]}"), stacklevel=3)
    return failures


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


@safe_repr
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
        return self._everywhere(self.list_tables)

    def all_views(self) -> list[Identifier]:
        """Every view in every namespace (a walk of the namespace tree)."""
        return self._everywhere(self.list_views)

    def _everywhere(self, listing: Callable[[tuple[str, ...]], list[Identifier]]
                    ) -> list[Identifier]:
        found: list[Identifier] = []
        pending: list[tuple[str, ...]] = [()]
        while pending:
            namespace = pending.pop()
            found.extend(listing(namespace))
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

    # ------------------------------------------------------------------ write side

    @abstractmethod
    def create_namespace(self, namespace: NamespaceLike,
                         properties: Mapping[str, str] | None = None) -> None:
        """Create a namespace (``AlreadyExists`` if it exists); parents need not exist."""

    @abstractmethod
    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Drop an empty namespace (``NamespaceNotEmpty`` when it holds anything)."""

    @abstractmethod
    def update_namespace_properties(
            self, namespace: NamespaceLike, removals: Iterable[str] = (),
            updates: Mapping[str, str] | None = None) -> PropertiesUpdateSummary:
        """Remove and set namespace properties in one step."""

    def default_table_location(self, identifier: NamespaceLike) -> str:
        """Where a new table of this name goes: its namespace's location plus the name (which
        passes :func:`check_name`, so the location stays below the namespace's)."""
        ident = to_new_identifier(identifier)
        location = self.namespace_properties(ident[:-1]).get("location")
        if not location:
            raise ValidationError(f"catalog {self._name!r} has no warehouse and namespace "
                                  f"{identifier_to_string(ident[:-1])!r} no location: give the "
                                  "table a location", field="location", value=ident)
        return join_location(location, ident[-1])

    @abstractmethod
    def create_table(self, identifier: NamespaceLike, metadata: TableMetadata) -> LoadedTable:
        """Write the table's first metadata file and register it atomically
        (``AlreadyExists`` if the name is taken, ``NoSuchNamespace`` without its namespace)."""

    @abstractmethod
    def commit_table(self, identifier: NamespaceLike, base_location: str | None,
                     new_metadata: TableMetadata, *,
                     base_metadata: TableMetadata | None = None) -> LoadedTable:
        """Write ``new_metadata`` as the next metadata file and swap the pointer from
        ``base_location`` to it atomically.

        ``CommitConflict`` when the pointer is no longer ``base_location`` (the file written is
        deleted again); ``CommitStateUnknown`` when the outcome cannot be told (the file is
        kept). ``base_metadata`` (the metadata at ``base_location``) saves reading that file when
        the ``metadata-log`` is extended or old files are deleted. ``base_location=None`` creates
        the table.
        """

    @abstractmethod
    def drop_table(self, identifier: NamespaceLike, purge: bool = False) -> None:
        """Remove the table from the catalog; ``purge`` also deletes every file reachable from
        its metadata (:func:`purge_table_files`)."""

    @abstractmethod
    def rename_table(self, identifier: NamespaceLike, new_identifier: NamespaceLike) -> None:
        """Give a table another name (its files stay where they are)."""

    @abstractmethod
    def register_table(self, identifier: NamespaceLike, metadata_location: str) -> LoadedTable:
        """Add an existing table to the catalog by its metadata file."""

    # ------------------------------------------------------------------ write side: views

    def default_view_location(self, identifier: NamespaceLike) -> str:
        """Where a new view of this name goes: as a table of that name would."""
        return self.default_table_location(identifier)

    @abstractmethod
    def create_view(self, identifier: NamespaceLike, metadata: ViewMetadata) -> LoadedView:
        """Write the view's first metadata file and register it atomically (``AlreadyExists``
        if a table or view has the name, ``NoSuchNamespace`` without its namespace)."""

    @abstractmethod
    def commit_view(self, identifier: NamespaceLike, base_location: str | None,
                    new_metadata: ViewMetadata) -> LoadedView:
        """Write ``new_metadata`` as the view's next metadata file and swap the pointer from
        ``base_location`` to it atomically.

        ``CommitConflict`` when the pointer is no longer ``base_location`` (the file written is
        deleted again); ``CommitStateUnknown`` when the outcome cannot be told (the file is
        kept). ``base_location=None`` creates the view.
        """

    @abstractmethod
    def drop_view(self, identifier: NamespaceLike, purge: bool = False) -> None:
        """Remove the view from the catalog (``NoSuchView`` when there is none); ``purge`` also
        deletes its current metadata file."""

    @abstractmethod
    def rename_view(self, identifier: NamespaceLike, new_identifier: NamespaceLike) -> None:
        """Give a view another name (``AlreadyExists`` when a table or view has it)."""

    @abstractmethod
    def register_view(self, identifier: NamespaceLike, metadata_location: str) -> LoadedView:
        """Add an existing view to the catalog by its metadata file (read first to check it)."""

    def _prepare_commit(self, ident: Identifier, base_location: str, new_metadata: TableMetadata,
                        base_metadata: TableMetadata | None) -> TableMetadata:
        """``new_metadata`` with its ``metadata-log`` extended and cut (see the module doc)."""
        log = new_metadata.metadata_log
        timestamp = None
        if not log or log[-1].metadata_file != base_location:
            base = base_metadata or self._read_table_metadata(ident, base_location)
            timestamp = base.last_updated_ms
        return next_metadata_log(new_metadata, base_location, timestamp)

    def _delete_removed_metadata(self, ident: Identifier, base_location: str,
                                 base_metadata: TableMetadata | None,
                                 committed: TableMetadata, new_location: str) -> None:
        """After a commit: delete metadata files that fell off the log, when the table says so
        (``write.metadata.delete-after-commit.enabled``); failures are ignored, as Java."""
        if not bool_property(committed.properties, METADATA_DELETE_AFTER_COMMIT, False):
            return
        try:
            base = base_metadata or self._read_table_metadata(ident, base_location)
        except IcebergError:
            return
        kept = {e.metadata_file for e in committed.metadata_log} | {new_location}
        removed = [e.metadata_file for e in base.metadata_log if e.metadata_file not in kept]
        roots = table_roots(committed, new_location)
        # a metadata-log entry may name any file: only the table's own are deleted (issue 17)
        _delete_all(self._io, [f for f in removed if is_inside(f, roots)])

    def _conflict(self, ident: Identifier, base_location: str,
                  current: str | None, kind: str = "table") -> CommitConflict:
        now = f"the {kind} no longer exists" if current is None else f"it is now {current}"
        return CommitConflict(f"{kind} {identifier_to_string(ident)!r} of catalog "
                              f"{self._name!r} changed: the commit was based on {base_location}, "
                              f"{now}", field="metadata_location", value=base_location)

    def _name_taken(self, ident: Identifier, holder: str, action: str,
                    file: str | None = None) -> AlreadyExists:
        """``AlreadyExists`` for ``action`` (e.g. "create view") on a name ``holder`` (``table``
        or ``view``) holds."""
        name = identifier_to_string(ident)
        return AlreadyExists(f"cannot {action} {name!r}: {name!r} is a {holder} in catalog "
                             f"{self._name!r}", file=file, field="identifier", value=ident)

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
