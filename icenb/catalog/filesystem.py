"""A catalog that is a directory tree, compatible with Iceberg Java's ``HadoopCatalog``.

Layout (spec: "File System Tables"; Java's HadoopCatalog): namespaces are directories under the
warehouse (nested namespaces are nested directories), and a table ``ns1.ns2.t`` lives in
``<warehouse>/ns1/ns2/t`` with ``metadata/v<N>.metadata.json`` and ``version-hint.text``.
A directory is a table when its ``metadata/`` directory holds a metadata file, a view when it
holds view files (below); every other directory is a namespace. As in Java, namespaces have no
stored properties (Java reports only ``location``).

Views (icenb's own layout; Java's HadoopCatalog has no views): a view ``ns.v`` is the directory
``<warehouse>/ns/v`` with ``metadata/v<N>.view.json`` (``v<N>.gz.view.json`` when gzip, the views'
default ``write.metadata.compression-codec`` as in Java) and ``metadata/view-version-hint.text``
holding ``N``, committed exactly as table versions are (atomic create of ``v<N+1>``, then the
hint; readers take the hint, then newer versions while they exist). The names are chosen so Java
cannot mistake a view for a table: ``HadoopCatalog.isTableDir`` (1.10.2) looks for files ending
in ``.metadata.json`` in ``metadata/`` and ``version-hint.text`` is not written; Java sees a view
directory as a namespace holding no tables. ``list_tables`` never lists a view (no table metadata
there) and ``list_views`` never a table (a directory with table metadata is a table, whatever else
it holds); a view directory is not a namespace. The file contents are ordinary view metadata, so
any ``v<N>.view.json`` can be registered in another catalog. ``drop_view`` deletes the directory
(the view *is* the directory, as for tables). ``rename_view`` writes the current metadata as
``v1`` of the new directory (its ``location`` moved along when it was the old directory), checks
that the old view did not change meanwhile (``CommitConflict`` and the copy removed otherwise),
then deletes the old directory: not atomic, for a moment both names exist. ``register_view``
writes the given metadata as the view's ``v1`` (as ``register_table`` here).

Decisions where Java is silent or differs:
- Entries whose name starts with ``.`` (``.ipynb_checkpoints``, temporary files) are skipped.
- A table directory is recognised by any metadata file name icenb can read (``v<N>`` or
  ``<N>-<uuid>``, plain or gzip) or by ``version-hint.text``; Java looks for names ending in
  ``.metadata.json`` only. The current file is found as ``icenb.open`` finds it.

Write side (spec: "File System Tables"; Java's ``HadoopTableOperations``): a commit based on
``v<N>`` creates ``v<N+1>.metadata.json`` (``v<N+1>.gz.metadata.json`` with gzip) with an atomic
create-if-absent: on a local filesystem a fully written hidden temporary file is hard-linked to
the final name (``os.link`` fails when the name exists; ``O_EXCL`` where links are not
supported), never renamed over it, so of two writers based on ``v<N>`` exactly one wins and the
other gets ``CommitConflict``. Then ``version-hint.text`` is replaced (best effort, as Java:
readers also probe newer versions) and, with ``write.metadata.delete-after-commit.enabled``,
metadata files that fell off the ``metadata-log`` are deleted. Two encodings of one version
(plain and gzip, when a racing commit changes the codec) are detected after the create: the
later writer sees the earlier one's file and withdraws its own.

Object stores and HDFS: pyarrow offers no conditional put, so a create there would be
check-then-write and two racing writers could both succeed (the last write wins, a commit is
lost). Commits to such a store are refused (``UnsupportedFeature``, naming the file and saying
to use a SQL catalog, which commits with a check-and-put in its database); reading tables in
the Hadoop layout on an object store works as before.

Decisions where Java is silent or differs, write side: a table needs an existing namespace
(Java's HadoopCatalog creates the directories); ``create_table`` requires the table's location
to be its directory (as Java); namespaces have no properties (``UnsupportedFeature``, as Java);
``drop_table`` deletes the table directory with everything in it, also without ``purge`` (as
Java: the table *is* the directory), and ``purge`` first deletes the reachable files that live
elsewhere; ``rename_table`` is ``UnsupportedFeature`` (as Java). A table and a view created at
the same name at the same time: each checks for the other kind after its create and withdraws its
file when it finds one (both may fail; never both succeed).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import posixpath
import warnings
from collections.abc import Callable, Iterable, Mapping

import pyarrow as pa

from icenb.catalog.base import (
    Catalog,
    Identifier,
    LoadedTable,
    LoadedView,
    NamespaceLike,
    NamespaceNotEmpty,
    PropertiesUpdateSummary,
    check_name,
    identifier_to_string,
    metadata_file_bytes,
    purge_table_files,
    to_identifier,
    to_namespace,
    view_metadata_file_bytes,
    warehouse_location,
)
from icenb.errors import (
    AlreadyExists,
    CommitConflict,
    FileIOError,
    IcebergError,
    IcebergWarning,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.file_io import FileIO, join_location, parse_location
from icenb.io.metadata_files import (
    VERSION_HINT,
    VIEW_EXTENSIONS,
    VIEW_VERSION_HINT,
    find_current_metadata,
    hadoop_metadata_file_name,
    load_table_metadata,
    load_view_metadata_file,
    parse_metadata_file_name,
    parse_view_file_name,
    view_file_name,
    write_metadata_file,
)
from icenb.reprs import safe_repr
from icenb.spec.table_metadata import TableMetadata, table_metadata_from_json
from icenb.spec.view_metadata import ViewMetadata, load_view_metadata

__all__ = ["VIEW_VERSION_HINT", "FilesystemCatalog", "parse_view_file_name", "view_file_name"]

# Every name one Hadoop version can have (Java's order); a commit checks for rivals among them.
_HADOOP_EXTENSIONS = (".metadata.json", ".gz.metadata.json", ".metadata.json.gz")
_IO_ERRORS = (OSError, pa.ArrowException)


def _same_location(a: str, b: str) -> bool:
    """Whether two locations name the same directory (``file:`` forms and trailing slashes)."""
    try:
        sa, aa, pa_ = parse_location(a)
        sb, ab, pb = parse_location(b)
    except IcebergError:
        return False
    return (sa, aa, pa_.rstrip("/")) == (sb, ab, pb.rstrip("/"))


def _check_level(level: str, what: str) -> None:
    """Every catalog's name rule (:func:`~icenb.catalog.base.check_name`): a level is a
    directory name here."""
    check_name(level, what)


@safe_repr
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

    def _is_view_dir(self, location: str) -> bool:
        """Whether ``location/metadata`` holds a view version file or the view hint (and no
        table metadata: a table wins)."""
        metadata_dir = join_location(location, "metadata")
        if not self._is_dir(metadata_dir):
            return False
        found = False
        for entry in self._io.list_dir(metadata_dir):
            if entry.is_dir or entry.name.startswith("."):
                continue
            if entry.name == VERSION_HINT or parse_metadata_file_name(entry.name) is not None:
                return False
            if entry.name == VIEW_VERSION_HINT or parse_view_file_name(entry.name) is not None:
                found = True
        return found

    def _child_dirs(self, location: str) -> list[str]:
        try:
            entries = self._io.list_dir(location)
        except NotFound:
            return []
        return [e.name for e in entries if e.is_dir and not e.name.startswith(".")]

    # ------------------------------------------------------------------ namespaces

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """A namespace exists when its directory does and is not a table or view directory."""
        location = self.namespace_location(namespace)
        return (self._is_dir(location) and not self._is_table_dir(location)
                and not self._is_view_dir(location))

    def _no_such_namespace(self, namespace: tuple[str, ...]) -> Exception:
        what = ("the warehouse directory" if not namespace
                else f"namespace {identifier_to_string(namespace)!r}")
        return NoSuchNamespace(f"{what} does not exist in catalog {self._name!r}",
                               file=self.namespace_location(namespace), value=namespace)

    def list_namespaces(self, parent: NamespaceLike = ()) -> list[tuple[str, ...]]:
        """Sub-directories of ``parent`` that are not tables (Java's ``listNamespaces``) nor
        views."""
        ns = to_namespace(parent)
        location = self.namespace_location(ns)
        self._require_namespace(ns)
        return sorted((*ns, name) for name in self._child_dirs(location)
                      if not self._is_table_dir(join_location(location, name))
                      and not self._is_view_dir(join_location(location, name)))

    def namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """Only ``location`` (the directory): the Hadoop layout stores no namespace properties."""
        ns = to_namespace(namespace)
        self._require_namespace(ns)
        return {"location": self.namespace_location(ns)}

    # ------------------------------------------------------------------ tables

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """Sub-directories of the namespace that hold table metadata."""
        return self._children(to_namespace(namespace), self._is_table_dir)

    def _children(self, ns: tuple[str, ...], keep: Callable[[str], bool]) -> list[Identifier]:
        """The sub-directories of a namespace whose location ``keep`` accepts, as identifiers."""
        location = self.namespace_location(ns)
        self._require_namespace(ns)
        return sorted((*ns, name) for name in self._child_dirs(location)
                      if keep(join_location(location, name)))

    def table_exists(self, identifier: NamespaceLike) -> bool:
        """Whether the table's directory holds table metadata (no metadata file is read)."""
        return self._is_table_dir(self.table_location(identifier))

    def _table_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """The current ``v<N>.metadata.json`` (version hint, then newer versions, as Java)."""
        ident = identifier
        location = self.table_location(ident)
        if not self._is_table_dir(location):
            detail = ""
            if self._is_view_dir(location):
                detail = " (it is a view: use load_view)"
            elif ident[:-1] and not self.namespace_exists(ident[:-1]):
                detail = f" (namespace {identifier_to_string(ident[:-1])!r} does not exist)"
            raise NoSuchTable(f"table {identifier_to_string(ident)!r} does not exist in "
                              f"catalog {self._name!r}{detail}", file=location, value=ident)
        return find_current_metadata(location, self._io), None

    # ------------------------------------------------------------------ views

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """Sub-directories of the namespace that hold view files (see the module doc)."""
        return self._children(to_namespace(namespace), self._is_view_dir)

    def view_exists(self, identifier: NamespaceLike) -> bool:
        """Whether the directory holds view files and no table metadata."""
        return self._is_view_dir(self.table_location(identifier))

    def _view_pointer(self, identifier: Identifier) -> tuple[str, str | None]:
        """The current ``v<N>[.gz].view.json``: the view hint, then newer versions while they
        exist; without a usable hint the highest version listed."""
        ident = identifier
        location = self.table_location(ident)
        if not self._is_view_dir(location):
            detail = ""
            if self._is_table_dir(location):
                detail = " (it is a table: use load_table)"
            elif ident[:-1] and not self.namespace_exists(ident[:-1]):
                detail = f" (namespace {identifier_to_string(ident[:-1])!r} does not exist)"
            raise NoSuchView(f"view {identifier_to_string(ident)!r} does not exist in catalog "
                             f"{self._name!r}{detail}", file=location, value=ident)
        return self._current_view_file(ident), None

    def _view_file(self, metadata_dir: str, version: int) -> str | None:
        for ext in VIEW_EXTENSIONS:
            candidate = join_location(metadata_dir, f"v{version}{ext}")
            if self._io.exists(candidate):
                return candidate
        return None

    def _current_view_file(self, ident: Identifier) -> str:
        metadata_dir = self._metadata_dir(ident)
        hint = join_location(metadata_dir, VIEW_VERSION_HINT)
        version: int | None = None
        try:
            text = self._io.new_input(hint).read().decode("utf-8", "replace").strip()
            version = int(text) if text.isascii() and text.isdigit() else None
        except NotFound:
            pass
        current = None if version is None else self._view_file(metadata_dir, version)
        if version is None or current is None:
            versions = [v for e in self._io.list_dir(metadata_dir) if not e.is_dir
                        and (v := parse_view_file_name(e.name)) is not None]
            if not versions:
                raise NotFound("no view version files (v<N>.view.json)", file=metadata_dir)
            version = max(versions)
            current = self._view_file(metadata_dir, version)
            assert current is not None
        while (newer := self._view_file(metadata_dir, version + 1)) is not None:
            version, current = version + 1, newer
        return current

    # ------------------------------------------------------------------ write side: namespaces

    def _make_dirs(self, location: str) -> None:
        fs, path = self._io.resolve(location)
        try:
            fs.create_dir(path, recursive=True)
        except _IO_ERRORS as e:
            raise FileIOError(f"cannot create directory: {e}", file=location) from None

    def create_namespace(self, namespace: NamespaceLike,
                         properties: Mapping[str, str] | None = None) -> None:
        """Create the namespace's directory (and missing parents, as Java's ``mkdirs``)."""
        ns = to_namespace(namespace)
        location = self.namespace_location(ns)
        if properties:
            raise UnsupportedFeature("a filesystem catalog stores no namespace properties (as "
                                     "Iceberg Java's HadoopCatalog)", field="properties",
                                     value=dict(properties))
        if not ns:
            raise AlreadyExists("the root namespace always exists", file=location)
        entry = self._io.stat(location)
        if entry is not None:
            what = ("a table" if self._is_table_dir(location)
                    else "a view" if self._is_view_dir(location)
                    else "a namespace" if entry.is_dir else "a file")
            raise AlreadyExists(f"cannot create namespace {identifier_to_string(ns)!r}: {what} "
                                "is there", file=location, value=ns)
        self._make_dirs(location)

    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Remove an empty namespace directory (any entry in it makes it non-empty, as Java)."""
        ns = to_namespace(namespace)
        if not ns:
            raise ValidationError("the root namespace cannot be dropped", field="namespace",
                                  value=ns)
        location = self.namespace_location(ns)
        self._require_namespace(ns)
        entries = self._io.list_dir(location)
        if entries:
            raise self._not_empty(ns, location, [e.name for e in entries])
        fs, path = self._io.resolve(location)
        try:
            if fs.type_name == "local":
                os.rmdir(path)  # fails if something appeared meanwhile
            else:
                fs.delete_dir(path)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise self._not_empty(ns, location, []) from None
            raise FileIOError(f"cannot remove directory: {e}", file=location) from None
        except pa.ArrowException as e:
            raise FileIOError(f"cannot remove directory: {e}", file=location) from None

    def _not_empty(self, ns: tuple[str, ...], location: str, names: list[str]) -> Exception:
        shown = f" ({', '.join(sorted(names)[:5])}{', ...' if len(names) > 5 else ''})"
        return NamespaceNotEmpty(f"namespace {identifier_to_string(ns)!r} is not empty"
                                 f"{shown if names else ''}", file=location, value=ns)

    def update_namespace_properties(
            self, namespace: NamespaceLike, removals: Iterable[str] = (),
            updates: Mapping[str, str] | None = None) -> PropertiesUpdateSummary:
        """``UnsupportedFeature`` unless there is nothing to do: no properties in this layout."""
        ns = to_namespace(namespace)
        self._require_namespace(ns)
        removing = list(removals)
        if removing or updates:
            raise UnsupportedFeature("a filesystem catalog stores no namespace properties (as "
                                     "Iceberg Java's HadoopCatalog)", field="properties",
                                     value={"removals": removing, "updates": dict(updates or {})})
        return PropertiesUpdateSummary([], [], [])

    # ------------------------------------------------------------------ write side: tables

    def default_table_location(self, identifier: NamespaceLike) -> str:
        """The table's directory: the only location a filesystem catalog allows."""
        return self.table_location(identifier)

    def _metadata_dir(self, ident: Identifier) -> str:
        return join_location(self.table_location(ident), "metadata")

    def create_table(self, identifier: NamespaceLike, metadata: TableMetadata) -> LoadedTable:
        """Write ``metadata/v1.metadata.json`` in the table's directory (create-if-absent)."""
        ident = to_identifier(identifier)
        location = self.table_location(ident)
        if not _same_location(metadata.location, location):
            raise ValidationError("a table of a filesystem catalog lives in its directory (as "
                                  f"Java's HadoopCatalog): its location must be {location}",
                                  field="location", value=metadata.location)
        return self._create(ident, metadata)

    def _create(self, ident: Identifier, metadata: TableMetadata,
                action: str = "create table") -> LoadedTable:
        self._require_namespace(ident[:-1])
        location = self.table_location(ident)
        exists = AlreadyExists(f"table {identifier_to_string(ident)!r} already exists in "
                               f"catalog {self._name!r}", file=location, value=ident)
        if self._is_table_dir(location):
            raise exists
        if self._is_view_dir(location):
            raise self._name_taken(ident, "view", action, location)
        if self._is_dir(location) and self._io.list_dir(location):
            raise AlreadyExists(f"cannot create table {identifier_to_string(ident)!r}: a "
                                "namespace with that name exists", file=location, value=ident)
        try:
            new_location, committed = self._write_version(ident, 1, metadata)
        except (AlreadyExists, CommitConflict):
            raise exists from None
        if self._has_view_files(ident):  # a view was created here meanwhile: withdraw
            self._io.delete(new_location, missing_ok=True)
            raise self._name_taken(ident, "view", action, location)
        self._write_version_hint(ident, 1)
        return LoadedTable(ident, new_location, committed, self._io, None)

    def commit_table(self, identifier: NamespaceLike, base_location: str | None,
                     new_metadata: TableMetadata, *,
                     base_metadata: TableMetadata | None = None) -> LoadedTable:
        """Create ``v<N+1>.metadata.json`` when ``base_location`` is the current ``v<N>``."""
        ident = to_identifier(identifier)
        if base_location is None:
            return self.create_table(ident, new_metadata)
        try:
            current = self._table_pointer(ident)[0]
        except NoSuchTable:
            raise self._conflict(ident, base_location, None) from None
        if current != base_location:
            raise self._conflict(ident, base_location, current)
        parsed = parse_metadata_file_name(posixpath.basename(current))
        if parsed is None or parsed.layout != "hadoop":
            raise UnsupportedFeature("cannot commit to a filesystem-catalog table whose current "
                                     "metadata file is not named v<N>.metadata.json",
                                     file=current)
        prepared = self._prepare_commit(ident, base_location, new_metadata, base_metadata)
        version = parsed.version + 1
        try:
            new_location, committed = self._write_version(ident, version, prepared)
        except AlreadyExists as e:
            raise self._conflict(ident, base_location, e.file) from None
        self._write_version_hint(ident, version)
        self._delete_removed_metadata(ident, base_location, base_metadata, committed,
                                      new_location)
        return LoadedTable(ident, new_location, committed, self._io, base_location)

    def _write_version(self, ident: Identifier, version: int,
                       metadata: TableMetadata) -> tuple[str, TableMetadata]:
        """Create version ``version``'s file (``AlreadyExists`` if taken); the location and the
        metadata as written."""
        data, gzip = metadata_file_bytes(metadata)
        metadata_dir = self._metadata_dir(ident)
        location = join_location(metadata_dir, hadoop_metadata_file_name(version, gzip=gzip))
        self._create_version_file(location, data, gzip, [
            join_location(metadata_dir, f"v{version}{ext}") for ext in _HADOOP_EXTENSIONS])
        return location, table_metadata_from_json(data, file=location)

    def _create_version_file(self, location: str, data: bytes, gzip: bool,
                             rivals: list[str]) -> None:
        """Create-if-absent of one version's file (``AlreadyExists`` if taken, also in another
        encoding among ``rivals``). A store without an atomic create-if-absent (an object
        store) is refused: two writers could both create the file and one commit be lost."""
        if not self._io.supports_atomic_create(location):
            raise UnsupportedFeature(
                "a filesystem catalog commits by creating v<N>.metadata.json only if it does "
                "not exist, and this store has no atomic create-if-absent: two writers could "
                "both win and one commit would be lost. Use a SQL catalog for tables on an "
                "object store: icenb.open_catalog('sqlite:///catalog.db', "
                "warehouse='s3://bucket/warehouse')", file=location)
        write_metadata_file(location, data, self._io, gzip=gzip)  # atomic: nothing on failure
        for rival in rivals:
            if rival != location and self._io.exists(rival):
                self._io.delete(location, missing_ok=True)
                raise AlreadyExists("another commit wrote the same version at the same time",
                                    file=rival)

    def _write_version_hint(self, ident: Identifier, version: int,
                            name: str = VERSION_HINT) -> None:
        """Replace the hint file ``name`` (``version-hint.text``, or the views' one) unless it
        already names a newer version (best effort, as Java's ``writeVersionHint``: readers
        probe newer versions anyway)."""
        hint = join_location(self._metadata_dir(ident), name)
        try:
            try:
                text = self._io.new_input(hint).read().decode("utf-8", "replace").strip()
                if text.isdigit() and int(text) >= version:
                    return
            except NotFound:
                pass
            self._io.new_output(hint).create(str(version).encode("ascii"), overwrite=True)
        except IcebergError:
            pass

    def drop_table(self, identifier: NamespaceLike, purge: bool = False) -> None:
        """Delete the table directory (as Java's HadoopCatalog); ``purge`` first deletes every
        file reachable from the current metadata, wherever it lives."""
        ident = to_identifier(identifier)
        location = self.table_location(ident)
        current = self._table_pointer(ident)[0]
        if purge:
            try:
                metadata = self._read_table_metadata(ident, current)
            except IcebergError as e:
                warnings.warn(IcebergWarning(f"purge skipped, the metadata cannot be read: {e}"),
                              stacklevel=2)
            else:
                purge_table_files(metadata, self._io, current)
        self._delete_dir(location)

    def rename_table(self, identifier: NamespaceLike, new_identifier: NamespaceLike) -> None:
        """``UnsupportedFeature``: a table is its directory (as Java's HadoopCatalog)."""
        ident = to_identifier(identifier)
        raise UnsupportedFeature("a filesystem catalog cannot rename tables (as Iceberg Java's "
                                 "HadoopCatalog)", file=self.table_location(ident),
                                 value=(ident, to_identifier(new_identifier)))

    def register_table(self, identifier: NamespaceLike, metadata_location: str) -> LoadedTable:
        """Copy an existing metadata file in as the table's ``v1.metadata.json`` (as Java's
        ``registerTable`` on a HadoopCatalog); the table's files stay where they are."""
        ident = to_identifier(identifier)
        metadata = load_table_metadata(metadata_location, self._io)
        return self._create(ident, metadata, "register table")

    # ------------------------------------------------------------------ write side: views

    def default_view_location(self, identifier: NamespaceLike) -> str:
        """The view's directory: the only location a filesystem catalog allows."""
        return self.table_location(identifier)

    def _has_view_files(self, ident: Identifier) -> bool:
        metadata_dir = self._metadata_dir(ident)
        try:
            entries = self._io.list_dir(metadata_dir)
        except NotFound:
            return False
        return any(not e.is_dir and (e.name == VIEW_VERSION_HINT
                                     or parse_view_file_name(e.name) is not None)
                   for e in entries)

    def _write_view_version(self, ident: Identifier, version: int,
                            metadata: ViewMetadata) -> tuple[str, ViewMetadata]:
        """Create ``v<N>[.gz].view.json`` (``AlreadyExists`` if taken); its location and the
        metadata as written."""
        data, gzip = view_metadata_file_bytes(metadata)
        metadata_dir = self._metadata_dir(ident)
        location = join_location(metadata_dir, view_file_name(version, gzip=gzip))
        self._create_version_file(location, data, gzip, [
            join_location(metadata_dir, f"v{version}{ext}") for ext in VIEW_EXTENSIONS])
        return location, load_view_metadata(data, file=location)

    def create_view(self, identifier: NamespaceLike, metadata: ViewMetadata) -> LoadedView:
        """Write ``metadata/v1.view.json`` in the view's directory (create-if-absent)."""
        ident = to_identifier(identifier)
        location = self.table_location(ident)
        if not _same_location(metadata.location, location):
            raise ValidationError("a view of a filesystem catalog lives in its directory: its "
                                  f"location must be {location}", field="location",
                                  value=metadata.location)
        return self._create_view(ident, metadata, "create view")

    def _create_view(self, ident: Identifier, metadata: ViewMetadata,
                     action: str) -> LoadedView:
        self._require_namespace(ident[:-1])
        location = self.table_location(ident)
        if self._is_table_dir(location):
            raise self._name_taken(ident, "table", action, location)
        if self._is_view_dir(location):
            raise self._name_taken(ident, "view", action, location)
        if self._is_dir(location) and self._io.list_dir(location):
            raise AlreadyExists(f"cannot {action} {identifier_to_string(ident)!r}: a namespace "
                                "with that name exists", file=location, value=ident)
        try:
            new_location, committed = self._write_view_version(ident, 1, metadata)
        except (AlreadyExists, CommitConflict):
            raise self._name_taken(ident, "view", action, location) from None
        if self._is_table_dir(location):  # a table was created here meanwhile: withdraw
            self._io.delete(new_location, missing_ok=True)
            raise self._name_taken(ident, "table", action, location)
        self._write_version_hint(ident, 1, VIEW_VERSION_HINT)
        return LoadedView(ident, new_location, committed, self._io, None)

    def commit_view(self, identifier: NamespaceLike, base_location: str | None,
                    new_metadata: ViewMetadata) -> LoadedView:
        """Create ``v<N+1>.view.json`` when ``base_location`` is the current ``v<N>``."""
        ident = to_identifier(identifier)
        if base_location is None:
            return self.create_view(ident, new_metadata)
        try:
            current = self._view_pointer(ident)[0]
        except NoSuchView:
            raise self._conflict(ident, base_location, None, "view") from None
        if current != base_location:
            raise self._conflict(ident, base_location, current, "view")
        parsed = parse_view_file_name(posixpath.basename(current))
        if parsed is None:
            raise UnsupportedFeature("cannot commit to a filesystem-catalog view whose current "
                                     "metadata file is not named v<N>.view.json", file=current)
        version = parsed + 1
        try:
            new_location, committed = self._write_view_version(ident, version, new_metadata)
        except AlreadyExists as e:
            raise self._conflict(ident, base_location, e.file, "view") from None
        self._write_version_hint(ident, version, VIEW_VERSION_HINT)
        return LoadedView(ident, new_location, committed, self._io, base_location)

    def drop_view(self, identifier: NamespaceLike, purge: bool = False) -> None:
        """Delete the view's directory (the view is the directory; ``purge`` changes nothing)."""
        ident = to_identifier(identifier)
        location = self.table_location(ident)
        self._view_pointer(ident)  # NoSuchView unless it is a view
        self._delete_dir(location)

    def _delete_dir(self, location: str) -> None:
        fs, path = self._io.resolve(location)
        try:
            fs.delete_dir(path)
        except _IO_ERRORS as e:
            raise FileIOError(f"cannot delete the directory: {e}", file=location) from None

    def rename_view(self, identifier: NamespaceLike, new_identifier: NamespaceLike) -> None:
        """Copy the current metadata to the new directory as ``v1``, then delete the old one
        (not atomic: see the module doc)."""
        src = to_identifier(identifier)
        dst = to_identifier(new_identifier)
        current = self._view_pointer(src)[0]
        if src == dst:
            return
        metadata = load_view_metadata_file(current, self._io)
        old_dir, new_dir = self.table_location(src), self.table_location(dst)
        if _same_location(metadata.location, old_dir):
            metadata = dataclasses.replace(metadata, location=new_dir)
        action = f"rename view {identifier_to_string(src)!r} to"
        self._create_view(dst, metadata, action)
        try:
            moved = self._view_pointer(src)[0]
        except NoSuchView:
            moved = None
        if moved != current:
            self._delete_dir(new_dir)
            raise self._conflict(src, current, moved, "view")
        self._delete_dir(old_dir)

    def register_view(self, identifier: NamespaceLike, metadata_location: str) -> LoadedView:
        """Write an existing view metadata file's content as the view's ``v1.view.json``."""
        ident = to_identifier(identifier)
        metadata = load_view_metadata_file(metadata_location, self._io)
        return self._create_view(ident, metadata, "register view")
