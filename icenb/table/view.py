"""Iceberg views: their versions and version log, and authoring them through a catalog.

A :class:`View` wraps one view metadata file (view spec: "View Metadata"). Reading it needs no
I/O beyond that file: versions, the version log (which version was current when, rollbacks
included), schemas, SQL per dialect. A view loaded from a catalog can also be changed, one
commit each (``replace``, ``rollback_to``, ``update_properties``); the rules of each change are
in :mod:`icenb.spec.view_updates`, the atomic swap in the catalog. A commit that loses a race
is re-applied on the view's new state, as Iceberg Java's view operations retry.

``to_spark`` runs a version's Spark-dialect SQL with its default catalog and namespace resolved
against the catalog's icenb tables (through the data plane, :mod:`icenb.table.engine`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from icenb.catalog import Catalog, Identifier, LoadedView, NamespaceLike, to_identifier
from icenb.errors import CommitConflict, NotFound, UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import (
    find_current_metadata,
    load_view_metadata_file,
    read_metadata_json,
)
from icenb.reprs import safe_repr
from icenb.spec.schema import Schema
from icenb.spec.view_metadata import ViewMetadata, ViewVersion
from icenb.spec.view_updates import (
    add_view_version,
    set_current_view_version,
    set_view_properties,
)
from icenb.table.engine import engine
from icenb.table.explore.history import ViewVersionLog, view_version_log
from icenb.table.explore.view_diff import ViewVersionDiff, diff_view_versions
from icenb.table.interactive import build_widget
from icenb.table.table import Table, open_table, timestamp_to_ms

__all__ = ["SPARK_DIALECT", "View", "derive_schema", "load_view", "open_location", "open_view",
           "view_representations"]

#: The dialect ``to_spark`` runs, and the default one icenb writes (view spec: "dialect").
SPARK_DIALECT = "spark"
#: How often a commit that lost a race is re-applied (Java's ``commit.retry.num-retries``).
COMMIT_RETRIES = 4


def now_ms() -> int:
    """The current time in epoch milliseconds (version and log timestamps)."""
    return time.time_ns() // 1_000_000


def engine_version() -> str:
    from icenb._version import __version__

    return __version__


@safe_repr
class View:
    """A view's metadata, with its versions and log; writable when loaded from a catalog."""

    def __init__(self, metadata: ViewMetadata, io: FileIO, *, metadata_location: str | None,
                 catalog: Catalog | None = None, identifier: Identifier | None = None) -> None:
        self._metadata = metadata
        self._io = io
        self._metadata_location = metadata_location
        self._catalog = catalog
        self._identifier = identifier

    @classmethod
    def _from_loaded(cls, loaded: LoadedView, catalog: Catalog) -> View:
        return cls(loaded.metadata, loaded.io, metadata_location=loaded.metadata_location,
                   catalog=catalog, identifier=loaded.identifier)

    # ------------------------------------------------------------------ identity

    @property
    def catalog(self) -> Catalog | None:
        """The catalog the view was loaded from (None when opened by location)."""
        return self._catalog

    @property
    def identifier(self) -> Identifier | None:
        """The view's identifier in :attr:`catalog` (None when opened by location)."""
        return self._identifier

    @property
    def name(self) -> str:
        """``"db.view"`` in a catalog, else the last part of the view's location."""
        if self._identifier is not None:
            return ".".join(self._identifier)
        return self._metadata.location.rstrip("/").rsplit("/", 1)[-1]

    @property
    def metadata(self) -> ViewMetadata:
        """The loaded view metadata."""
        return self._metadata

    @property
    def metadata_location(self) -> str | None:
        """The metadata file the current state was read from (or written to)."""
        return self._metadata_location

    @property
    def io(self) -> FileIO:
        return self._io

    @property
    def uuid(self) -> str:
        """``view-uuid``: the view's identity across renames."""
        return self._metadata.view_uuid

    @property
    def location(self) -> str:
        return self._metadata.location

    @property
    def format_version(self) -> int:
        return self._metadata.format_version

    @property
    def properties(self) -> Mapping[str, str]:
        return self._metadata.properties

    # ------------------------------------------------------------------ versions

    @property
    def versions(self) -> tuple[ViewVersion, ...]:
        """The retained versions, in metadata order (view spec: "versions")."""
        return self._metadata.versions

    @property
    def current_version(self) -> ViewVersion:
        return self._metadata.current_version

    @property
    def current_version_id(self) -> int:
        return self._metadata.current_version_id

    def version(self, version_id: int | None = None) -> ViewVersion:
        """A version by id (default: the current one); ``NotFound`` naming the retained ids."""
        if version_id is None:
            return self.current_version
        found = self._metadata.version_by_id(version_id)
        if found is None:
            ids = ", ".join(str(v.version_id) for v in self.versions)
            raise NotFound(f"view {self.name!r} has no version {version_id} (retained: {ids})",
                           file=self._metadata_location, field="version-id", value=version_id)
        return found

    @property
    def version_log(self) -> ViewVersionLog:
        """Which version was current from when: one entry per change of the current version,
        rollbacks included (view spec: "version-log")."""
        return view_version_log(self._metadata, self._metadata_location)

    def version_at(self, when: int | datetime | str) -> ViewVersion:
        """The version that was current at ``when`` (epoch ms, a datetime or an ISO-8601
        string; naive times are UTC), per the version log."""
        ms = when if isinstance(when, int) else timestamp_to_ms(when)
        return self._metadata.version_at(ms)

    @property
    def schema(self) -> Schema:
        """The current version's schema."""
        return self._metadata.current_schema

    def schema_for(self, version_id: int) -> Schema:
        return self._metadata.schema_for_version(self.version(version_id))

    def dialects(self, version_id: int | None = None) -> tuple[str, ...]:
        """The SQL dialects a version (default: current) has a representation for."""
        return self.version(version_id).dialects

    def sql_for(self, dialect: str = SPARK_DIALECT, version_id: int | None = None) -> str:
        """A version's SQL in ``dialect`` (compared case-insensitively); ``NotFound`` naming the
        dialects it has."""
        v = self.version(version_id)
        sql = v.sql_for(dialect)
        if sql is None:
            raise NotFound(f"version {v.version_id} of view {self.name!r} has no {dialect!r} "
                           f"SQL (dialects: {', '.join(v.dialects) or 'none'})",
                           file=self._metadata_location, field="dialect", value=dialect)
        return sql

    def compare(self, a: int, b: int | None = None) -> ViewVersionDiff:
        """What changed from version ``a`` to version ``b`` (default: current): SQL per
        dialect as a unified diff, columns by name, default catalog and namespace."""
        return diff_view_versions(self._metadata, self.version(a), self.version(b), self.name)

    # ------------------------------------------------------------------ reading rows

    def _table_loader(self) -> Callable[[tuple[str, ...]], Table]:
        catalog = self._catalog
        if catalog is None:
            raise UnsupportedFeature(
                f"view {self.name!r} was opened by location: its SQL names tables of a catalog; "
                "load the view from its warehouse (icenb.warehouse(path).view(name)) to run it",
                file=self._metadata_location, field="catalog")

        def load(identifier: tuple[str, ...]) -> Table:
            loaded = catalog.load_table(identifier)
            return Table(loaded.metadata, loaded.io, opened_from=loaded.metadata_location,
                         catalog=catalog, identifier=loaded.identifier)
        return load

    def to_spark(self, version_id: int | None = None, *, spark: Any = None) -> Any:
        """A Spark DataFrame of a version's (default: current) Spark SQL, its table names
        resolved with the version's default catalog and namespace against the catalog's
        tables; ``VERSION AS OF`` / ``TIMESTAMP AS OF`` in the SQL travel in time."""
        v = self.version(version_id)
        sql = self.sql_for(SPARK_DIALECT, v.version_id)
        catalog = self._catalog
        return engine().view_rows(sql, self._table_loader(), default_catalog=v.default_catalog,
                                  default_namespace=v.default_namespace,
                                  catalog_names=() if catalog is None else (catalog.name,),
                                  spark=spark)

    def to_pandas(self, version_id: int | None = None, *, spark: Any = None) -> Any:
        """:meth:`to_spark` collected as a pandas DataFrame."""
        return self.to_spark(version_id, spark=spark).toPandas()

    # ------------------------------------------------------------------ changes

    def refresh(self) -> View:
        """Reload the catalog's current metadata (a view opened by location stays as is)."""
        if self._catalog is not None and self._identifier is not None:
            loaded = self._catalog.load_view(self._identifier)
            self._metadata, self._metadata_location = loaded.metadata, loaded.metadata_location
        return self

    def _writable(self) -> tuple[Catalog, Identifier]:
        if self._catalog is None or self._identifier is None:
            raise UnsupportedFeature(
                "this view was opened by location and is read-only: load it from a catalog "
                "(icenb.warehouse(path).view(name)) to change it",
                file=self._metadata_location, field="catalog")
        return self._catalog, self._identifier

    def _commit(self, change: Callable[[ViewMetadata], ViewMetadata]) -> View:
        """Apply ``change`` and swap it in; on a lost race reload and re-apply (a change that
        no longer applies raises its own error, and nothing is written)."""
        catalog, identifier = self._writable()
        for attempt in range(COMMIT_RETRIES + 1):
            new = change(self._metadata)
            if new == self._metadata:
                return self  # nothing changed: no new metadata file (as Java)
            try:
                loaded = catalog.commit_view(identifier, self._metadata_location, new)
            except CommitConflict:
                if attempt == COMMIT_RETRIES:
                    raise
                self.refresh()
                continue
            self._metadata, self._metadata_location = loaded.metadata, loaded.metadata_location
            break
        return self

    def replace(self, sql: str | Mapping[str, str], *, dialect: str = SPARK_DIALECT,
                schema: Schema | str | Any = None, default_namespace: Sequence[str] | None = None,
                default_catalog: str | None = None, properties: Mapping[str, str] | None = None,
                spark: Any = None) -> View:
        """Add a version and make it current (``CREATE OR REPLACE VIEW``): ``sql`` in
        ``dialect``, or ``{dialect: sql}`` for several. An equivalent existing version is
        reused (its id comes back into the log). ``schema`` defaults to what Spark derives from
        the Spark SQL (else a Schema, DDL string, Arrow or Spark schema, as for tables);
        ``default_namespace`` and ``default_catalog`` default to the current version's.

        A replace that drops a dialect the current version has is refused unless the view
        property ``replace.drop-dialect.allowed`` is true.
        """
        self._writable()
        current = self.current_version
        namespace = (current.default_namespace if default_namespace is None
                     else tuple(default_namespace))
        catalog_name = current.default_catalog if default_catalog is None else default_catalog
        reps = view_representations(sql, dialect)
        if schema is None:
            parsed = derive_schema(reps, self._table_loader(), namespace, catalog_name,
                                   self._catalog, spark)
        else:
            from icenb.table.warehouse import to_schema  # it imports this module

            parsed = to_schema(schema)
        when = now_ms()

        def change(md: ViewMetadata) -> ViewMetadata:
            return add_view_version(md, parsed, reps, default_namespace=namespace,
                                    default_catalog=catalog_name, timestamp_ms=when,
                                    properties=properties, engine_name="icenb",
                                    engine_version=engine_version())
        return self._commit(change)

    def derive_schema(self, sql: str | Mapping[str, str], *, dialect: str = SPARK_DIALECT,
                      spark: Any = None) -> Schema:
        """The schema Spark derives for ``sql`` (as :meth:`replace` would), without committing
        anything: a preview of a replace (needs Spark SQL among the dialects)."""
        current = self.current_version
        return derive_schema(view_representations(sql, dialect), self._table_loader(),
                             current.default_namespace, current.default_catalog,
                             self._catalog, spark)

    def set_current_version(self, version_id: int) -> View:
        """Make a retained version current (a rollback or roll forward); logged in the
        version log. ``NotFound`` for an unknown id."""
        self.version(version_id)
        when = now_ms()
        return self._commit(lambda md: set_current_view_version(md, version_id,
                                                                 timestamp_ms=when))

    def rollback_to(self, version_id: int) -> View:
        """Make an earlier version current again (:meth:`set_current_version`)."""
        return self.set_current_version(version_id)

    def update_properties(self, updates: Mapping[str, str] | None = None,
                          removals: Iterable[str] = ()) -> View:
        """Set and remove view properties in one commit (``version.history.num-entries``
        expires old versions at once)."""
        keys = list(removals)
        return self._commit(lambda md: set_view_properties(md, updates, keys))

    def versions_widget(self, **options: Any) -> Any:
        """The interactive :class:`icenb.widgets.ViewVersions` on this view: the clickable
        version log, each version's SQL and schema, and differences between versions."""
        return build_widget("ViewVersions", self, **options)

    def __repr__(self) -> str:
        return (f"View({self.name!r}, current_version_id={self.current_version_id}, "
                f"versions={len(self.versions)}, dialects={list(self.current_version.dialects)})")


def view_representations(sql: str | Mapping[str, str], dialect: str) -> dict[str, str]:
    """``{dialect: sql}`` from one SQL text or a mapping (checked later, by the spec layer)."""
    if isinstance(sql, str):
        if not sql.strip():
            raise ValidationError("a view needs a query", field="sql", value=sql)
        return {dialect: sql}
    if not isinstance(sql, Mapping) or not sql:
        raise ValidationError("sql must be a query or a {dialect: query} mapping",
                              field="sql", value=sql)
    return dict(sql)


def derive_schema(reps: Mapping[str, str], load: Callable[[tuple[str, ...]], Table],
                  default_namespace: Sequence[str], default_catalog: str | None,
                  catalog: Catalog | None, spark: Any) -> Schema:
    """The schema of a view's result as Spark analyzes its Spark SQL (no rows are read)."""
    spark_sql = next((q for d, q in reps.items() if d.lower() == SPARK_DIALECT), None)
    if spark_sql is None:
        raise ValidationError(
            "give the view a schema: it has no Spark SQL to derive one from "
            f"(dialects: {', '.join(reps)})", field="schema", value=None)
    return engine().view_schema(spark_sql, load, default_catalog=default_catalog,
                                default_namespace=default_namespace,
                                catalog_names=() if catalog is None else (catalog.name,),
                                spark=spark)


def location_text(location: object) -> str:
    """A location given by a caller as text: a path, ``PathLike`` or URI (``ValidationError``
    for anything else, never a raw ``TypeError``)."""
    if not isinstance(location, (str, os.PathLike)) or not os.fspath(location):
        raise ValidationError("a table or view location is a path or URI", field="location",
                              value=location)
    return str(os.fspath(location))


def open_view(location: str | os.PathLike[str], *, io: FileIO | None = None,
              properties: Mapping[str, str] | None = None) -> View:
    """A view read-only from its metadata file or directory (plain or gzip)."""
    if io is not None and properties is not None:
        raise ValidationError("give io or properties, not both", field="properties")
    io = io if io is not None else FileIO(properties)
    file = find_current_metadata(location_text(location), io)
    return View(load_view_metadata_file(file, io), io, metadata_location=file)


def open_location(location: str | os.PathLike[str], *, io: FileIO | None = None,
                  properties: Mapping[str, str] | None = None,
                  relocate: bool = False) -> Table | View:
    """``icenb.open``: the table or view whose metadata file (or directory) is at
    ``location``, read-only; which one it is comes from the file (``view-uuid`` or not)."""
    if io is not None and properties is not None:
        raise ValidationError("give io or properties, not both", field="properties")
    io = io if io is not None else FileIO(properties)
    file = find_current_metadata(location_text(location), io)
    if _is_view_document(read_metadata_json(file, io)):
        return View(load_view_metadata_file(file, io), io, metadata_location=file)
    # the location as given: a table opened from its directory refreshes to newer files
    return open_table(location, io=io, relocate=relocate)


def _is_view_document(data: bytes) -> bool:
    """Whether a metadata document is a view's: it has ``view-uuid`` (or a draft's
    ``current-version-id``) and no ``last-column-id``, which every table metadata has (spec:
    "Table Metadata Fields"; view spec: "View Metadata"). A byte scan, not a second parse."""
    return b'"last-column-id"' not in data and (
        b'"view-uuid"' in data or b'"current-version-id"' in data)


def load_view(catalog: Catalog, identifier: NamespaceLike) -> View:
    """The view ``identifier`` of ``catalog``, writable."""
    return View._from_loaded(catalog.load_view(to_identifier(identifier)), catalog)
