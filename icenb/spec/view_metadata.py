"""View metadata: the released Iceberg view spec (format version 1) and its early draft.

Spec: "Iceberg View Spec" — View Metadata, Versions, Summary, Representations, Version log.
The released model is :class:`ViewMetadata`; documents written to the early draft
(``view-spec-draft.txt``) load as :class:`DraftViewMetadata` and convert with
:meth:`DraftViewMetadata.to_released`. No I/O here: callers pass JSON text, bytes or a mapping
(gzip is handled by ``icenb.io``).

Unknown fields
--------------
Unknown keys of the metadata object, of a version and of a SQL representation are kept in
``extra`` and written back, so a document from a newer writer (e.g. a materialized view's
``storage-table`` on a version) survives a load/save round trip. The released spec defines only
the ``sql`` representation type; it does not say what a reader does with other types (the Java
reference implementation keeps only their ``type`` and refuses to write them). icenb keeps an
unknown representation verbatim as :class:`UnknownViewRepresentation` and writes it back as it
was read.

Validation
----------
Loading checks required fields and JSON types, ``format-version`` (only 1; anything else raises
``UnsupportedVersion``), that ``view-uuid`` is a UUID, unique schema and version ids, that
``current-version-id`` and every version's ``schema-id`` exist, and that a version has at most one
SQL representation per dialect. Dialects compare case-insensitively, as in the reference
implementation ("A view version can have multiple SQL representations of different dialects,
but only one SQL representation per dialect"). Version-log entries may name versions that are no
longer retained; that is allowed (the log is history).

Version retention and dialect safety (for the authoring code)
-------------------------------------------------------------
* ``version.history.num-entries``: the released spec only says (note 1 on ``versions``) that this
  view property controls how many versions are retained. It gives no default and no algorithm.
  The reference implementation (Iceberg Java 1.10.2) uses a default of 10, requires a positive
  value, and when building new metadata keeps ``max(num-entries, versions added by this change +
  the current version)`` versions: always the current one, then the highest version ids. The
  version log is then cut so that it only names retained versions: every entry up to and including
  the last entry of an expired version is dropped (the log stays a contiguous suffix).
* ``replace.drop-dialect.allowed``: not in the released spec text. It is a reference-implementation
  view property (``ViewProperties``, default ``false``): a replace whose new current version lacks
  a SQL dialect (compared case-insensitively) that the previous current version had is refused
  unless the property is ``true``. The spec's own rules are: versions are immutable; changing the
  definition or adding representations creates a new version; all representations of a version
  express the same definition; one SQL representation per dialect.
* When ``default-catalog`` is null or absent, the catalog that stores the view is the default.

Draft to released conversion
----------------------------
The early draft differs from the released spec: no ``view-uuid``; a top-level
``current-schema-id``; versions carry ``parent-version-id`` but no ``schema-id``,
``default-catalog`` or ``default-namespace``; those three live on each SQL representation, which
may also carry ``field-aliases`` and ``field-docs`` (one entry per top-level column of the query
schema, ``null`` meaning "no alias" / "no comment"); summaries hold ``operation`` and, in the
draft's example, ``engineVersion``.

A document is read as a draft when no version has a version-level ``schema-id`` (required by the
released spec) and it carries at least one draft-only field: top-level ``current-schema-id``, a
version's ``parent-version-id``, a representation-level ``schema-id``/``default-catalog``/
``default-namespace``/``field-aliases``/``field-docs``, or a summary ``engineVersion``. Anything
else is read (and validated) as a released document.

:meth:`DraftViewMetadata.to_released` is deterministic:

* ``view-uuid``: the ``view_uuid`` argument if given, else the document's own ``view-uuid`` if it
  has one, else ``uuid5(NAMESPACE_URL, location)`` — the same draft file always converts to the
  same UUID, and two views at different locations get different UUIDs.
* Representation-level ``schema-id``, ``default-catalog`` and ``default-namespace`` lift to the
  version. The SQL representations of a version must agree on each (the released form has one
  value per version); a disagreement raises ``InvalidMetadata``. A version whose representations
  name no schema uses ``current-schema-id`` if it is the current version; otherwise conversion
  fails (the released spec requires a schema per version). No ``default-namespace`` becomes the
  empty namespace ``[]``.
* ``field-aliases`` and ``field-docs`` are applied to the version's schema, because the released
  spec says the aliases (and their comments) "must be part of the view version's schema": each
  top-level column is renamed to its alias and given its doc (``null`` keeps the name / doc).
  If that changes the schema, the result is added as a new schema (an identical existing schema's
  id is reused, otherwise the next free id, in version order) and the version points to it; the
  draft's own schemas are all kept. The lists must have one entry per top-level column.
* Summary keys are kept verbatim (``operation`` included). ``parent-version-id`` is recorded in
  the summary as a string (``"-1"`` kept as is); a camelCase ``engineVersion`` is also copied to the
  released key ``engine-version`` when that key is absent.
* ``current-schema-id`` is implied in the released form by the current version's schema; it is
  kept in ``extra`` only when it names a different schema.
* The draft's required summary ``operation`` is not enforced (old files are read leniently);
  duplicate dialects in one version are only rejected when converting.
* Unknown fields (document, version, representation) carry over into ``extra``; version-log,
  properties, location and schemas carry over unchanged.
* What the released JSON cannot express: which columns were aliased (the pre-alias schema is
  still in ``schemas``, but a version no longer points at it) and an alias equal to the column
  name versus no alias. The converted object keeps the whole draft in ``draft_source``.

:func:`load_view_metadata` always returns the released model (``converted_from_draft`` tells
whether a conversion happened); :func:`view_metadata_from_json` returns whichever model the
document is written in.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar
from uuid import NAMESPACE_URL, UUID, uuid5

from icenb.errors import (
    CorruptFile,
    IcebergError,
    InvalidMetadata,
    NotFound,
    UnsupportedVersion,
    ValidationError,
)
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    as_object,
    invalid,
    json_object,
    opt_int,
    opt_str,
    parse_each,
    req_int,
    req_str,
    str_list,
    str_map,
)
from icenb.spec.properties import REPLACE_DROP_DIALECT_ALLOWED, VERSION_HISTORY_SIZE
from icenb.spec.schema import Schema, schema_from_json, schema_to_json
from icenb.spec.snapshot import ENGINE_NAME  # also a view version summary key

__all__ = [
    "REPLACE_DROP_DIALECT_ALLOWED",
    "REPLACE_DROP_DIALECT_ALLOWED_DEFAULT",
    "SUPPORTED_VIEW_FORMAT_VERSION",
    "VERSION_HISTORY_SIZE",
    "VERSION_HISTORY_SIZE_DEFAULT",
    "DraftSQLViewRepresentation",
    "DraftViewMetadata",
    "DraftViewVersion",
    "SQLViewRepresentation",
    "UnknownViewRepresentation",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewRepresentation",
    "ViewVersion",
    "is_draft_view_metadata",
    "load_view_metadata",
    "view_metadata_from_json",
    "view_metadata_to_json",
]

#: The only view format version defined by the released spec.
SUPPORTED_VIEW_FORMAT_VERSION = 1
#: View property: number of versions to retain (spec: View Metadata, note 1).
#: Default of ``version.history.num-entries`` in the reference implementation (not in the spec).
VERSION_HISTORY_SIZE_DEFAULT = 10
#: Reference-implementation view property: may a replace drop a SQL dialect (not in the spec).
REPLACE_DROP_DIALECT_ALLOWED_DEFAULT = False

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY

_META_KEYS = frozenset({
    "view-uuid", "format-version", "location", "schemas", "current-version-id", "versions",
    "version-log", "properties",
})
_VERSION_KEYS = frozenset({
    "version-id", "timestamp-ms", "schema-id", "summary", "representations", "default-catalog",
    "default-namespace",
})
_SQL_KEYS = frozenset({"type", "sql", "dialect"})
_LOG_KEYS = frozenset({"timestamp-ms", "version-id"})

_DRAFT_META_KEYS = frozenset({
    "view-uuid", "format-version", "location", "current-version-id", "properties", "versions",
    "version-log", "schemas", "current-schema-id",
})
_DRAFT_VERSION_KEYS = frozenset({
    "version-id", "parent-version-id", "timestamp-ms", "summary", "representations",
})
_DRAFT_SQL_KEYS = frozenset({
    "type", "sql", "dialect", "schema-id", "default-catalog", "default-namespace",
    "field-aliases", "field-docs",
})
_DRAFT_ONLY_REP_KEYS = _DRAFT_SQL_KEYS - _SQL_KEYS


# --------------------------------------------------------------------------- helpers


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only deep copy of a JSON object (so callers cannot mutate a frozen model)."""
    if not value:
        return _EMPTY
    if isinstance(value, MappingProxyType):
        return value
    return MappingProxyType(copy.deepcopy(dict(value)))


def _check_extra(extra: Mapping[str, Any], known: frozenset[str]) -> None:
    clash = sorted(k for k in extra if k in known)
    if clash:
        raise InvalidMetadata("extra fields must not repeat a known field",
                              field="extra", value=clash)


def _lower_dialect(dialect: str) -> str:
    """Dialect identity: case-insensitive, like the reference implementation."""
    return dialect.lower()


def _check_format_version(fv: int) -> int:
    if fv != SUPPORTED_VIEW_FORMAT_VERSION:
        # Spec: "Implementations must throw an exception if the view's version is higher than
        # the supported version" (draft); the released spec: "must be 1".
        raise UnsupportedVersion(
            f"unsupported view format version (icenb reads version "
            f"{SUPPORTED_VIEW_FORMAT_VERSION})", field="format-version", value=fv)
    return fv


def _unique_ids(ids: Iterable[int], what: str) -> set[int]:
    """The ids of the schemas or versions (``what``), which must not repeat."""
    seen: set[int] = set()
    for i, id_ in enumerate(ids):
        if id_ in seen:
            raise InvalidMetadata(f"duplicate {what} id", field=f"{what}s[{i}].{what}-id",
                                  value=id_)
        seen.add(id_)
    return seen


# --------------------------------------------------------------------------- released model


@safe_repr
@dataclass(frozen=True)
class SQLViewRepresentation:
    """A view definition as a SQL SELECT in one dialect (spec: SQL representation)."""

    sql: str
    dialect: str
    extra: Mapping[str, Any] = field(default_factory=_empty)

    type: ClassVar[str] = "sql"

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", _frozen_map(self.extra))
        _check_extra(self.extra, _SQL_KEYS)

    def __hash__(self) -> int:
        return hash((self.sql, self.dialect))


@safe_repr
@dataclass(frozen=True)
class UnknownViewRepresentation:
    """A representation of a type icenb does not know, kept verbatim (``raw``: its JSON object)."""

    type: str
    raw: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "raw", _frozen_map(self.raw))
        if self.raw.get("type") != self.type:
            raise InvalidMetadata("raw representation must carry the same type",
                                  field="type", value=self.raw.get("type"))

    def __hash__(self) -> int:
        return hash(self.type)


ViewRepresentation: TypeAlias = SQLViewRepresentation | UnknownViewRepresentation


@safe_repr
@dataclass(frozen=True)
class ViewHistoryEntry:
    """A version-log entry: ``version_id`` was made current at ``timestamp_ms`` (Version log)."""

    timestamp_ms: int
    version_id: int
    extra: Mapping[str, Any] = field(default_factory=_empty)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", _frozen_map(self.extra))
        _check_extra(self.extra, _LOG_KEYS)

    def __hash__(self) -> int:
        return hash((self.timestamp_ms, self.version_id))


def _sql_reps(reps: Iterable[object]) -> list[SQLViewRepresentation]:
    return [r for r in reps if isinstance(r, SQLViewRepresentation)]


@safe_repr
@dataclass(frozen=True, kw_only=True)
class ViewVersion:
    """The state of a view at one point: its SQL, schema and defaults (spec: Versions)."""

    version_id: int
    timestamp_ms: int
    schema_id: int
    summary: Mapping[str, str] = field(default_factory=_empty)
    representations: tuple[ViewRepresentation, ...] = ()
    default_catalog: str | None = None
    default_namespace: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=_empty)

    def __post_init__(self) -> None:
        object.__setattr__(self, "summary", _frozen_map(self.summary))
        object.__setattr__(self, "representations", tuple(self.representations))
        object.__setattr__(self, "default_namespace", tuple(self.default_namespace))
        object.__setattr__(self, "extra", _frozen_map(self.extra))
        _check_extra(self.extra, _VERSION_KEYS)
        seen: set[str] = set()
        for i, rep in enumerate(self.representations):
            if not isinstance(rep, SQLViewRepresentation):
                continue
            key = _lower_dialect(rep.dialect)
            if key in seen:
                # Spec: SQL representation — "only one SQL representation per dialect".
                raise InvalidMetadata(
                    f"view version {self.version_id} has more than one SQL representation "
                    f"for dialect {key!r}", field=f"representations[{i}].dialect",
                    value=rep.dialect)
            seen.add(key)

    def __hash__(self) -> int:
        return hash((self.version_id, self.timestamp_ms, self.schema_id))

    @property
    def sql_representations(self) -> tuple[SQLViewRepresentation, ...]:
        return tuple(_sql_reps(self.representations))

    @property
    def dialects(self) -> tuple[str, ...]:
        """The dialects of this version's SQL representations, as written."""
        return tuple(r.dialect for r in _sql_reps(self.representations))

    def representation_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The SQL representation for ``dialect`` (case-insensitive), or None."""
        key = _lower_dialect(dialect)
        for rep in _sql_reps(self.representations):
            if _lower_dialect(rep.dialect) == key:
                return rep
        return None

    def sql_for(self, dialect: str) -> str | None:
        """The SQL text for ``dialect`` (case-insensitive), or None when the version has none."""
        rep = self.representation_for(dialect)
        return None if rep is None else rep.sql

    @property
    def engine_name(self) -> str | None:
        return self.summary.get(ENGINE_NAME)

    @property
    def engine_version(self) -> str | None:
        return self.summary.get("engine-version")

    @property
    def operation(self) -> str | None:
        """The summary's ``operation`` (written by the draft and some engines), or None."""
        return self.summary.get("operation")


_V = TypeVar("_V", "ViewVersion", "DraftViewVersion")


class _ViewMetadataBase(Generic[_V]):
    """What the released and the draft metadata models share (fields are declared on them)."""

    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[_V, ...]
    version_log: tuple[ViewHistoryEntry, ...]
    properties: Mapping[str, str]
    extra: Mapping[str, Any]

    def __post_init__(self) -> None:
        for name in ("schemas", "versions", "version_log"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "properties", _frozen_map(self.properties))
        object.__setattr__(self, "extra", _frozen_map(self.extra))
        self._validate()

    def _validate(self) -> None:
        raise NotImplementedError

    def _check_ids(self) -> set[int]:
        """Schema and version ids are unique and the current version exists; the schema ids."""
        schema_ids = _unique_ids((s.schema_id for s in self.schemas), "schema")
        version_ids = _unique_ids((v.version_id for v in self.versions), "version")
        if self.current_version_id not in version_ids:
            raise InvalidMetadata(
                f"current-version-id is not among the versions (known: {sorted(version_ids)})",
                field="current-version-id", value=self.current_version_id)
        return schema_ids

    def version_by_id(self, version_id: int) -> _V | None:
        """The retained version with ``version_id``, or None."""
        return next((v for v in self.versions if v.version_id == version_id), None)

    @property
    def current_version(self) -> _V:
        """The version named by ``current-version-id`` (always present after validation)."""
        found = self.version_by_id(self.current_version_id)
        assert found is not None  # checked in _validate
        return found

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)


@dataclass(frozen=True, kw_only=True)
class ViewMetadata(_ViewMetadataBase["ViewVersion"]):
    """A view metadata file (spec: View Metadata). Immutable; build new ones with ``replace``."""

    view_uuid: str
    format_version: int = SUPPORTED_VIEW_FORMAT_VERSION
    location: str
    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...] = ()
    properties: Mapping[str, str] = field(default_factory=_empty)
    extra: Mapping[str, Any] = field(default_factory=_empty)
    #: The draft this was converted from (not serialized, not compared), or None.
    draft_source: DraftViewMetadata | None = field(default=None, compare=False, repr=False)

    def __hash__(self) -> int:
        return hash((self.view_uuid, self.current_version_id, len(self.versions)))

    def _validate(self) -> None:
        _check_format_version(self.format_version)
        try:
            UUID(self.view_uuid)
        except (ValueError, TypeError, AttributeError):
            raise InvalidMetadata("view-uuid is not a UUID", field="view-uuid",
                                  value=self.view_uuid) from None
        _check_extra(self.extra, _META_KEYS)
        schema_ids = self._check_ids()
        for i, v in enumerate(self.versions):
            if v.schema_id not in schema_ids:
                raise InvalidMetadata(
                    f"view version {v.version_id} refers to a schema that is not in schemas "
                    f"(known: {sorted(schema_ids)})", field=f"versions[{i}].schema-id",
                    value=v.schema_id)

    # -- lookups ---------------------------------------------------------------------
    @property
    def uuid(self) -> UUID:
        """``view_uuid`` as a ``uuid.UUID``."""
        return UUID(self.view_uuid)

    @property
    def converted_from_draft(self) -> bool:
        """Whether this metadata was converted from an early-draft document."""
        return self.draft_source is not None

    def schema_for_version(self, version: int | ViewVersion) -> Schema:
        """The schema of a version (by id or object); ``NotFound`` for an unknown version id."""
        v = self.version_by_id(version) if isinstance(version, int) else version
        if v is None:
            raise NotFound("no such view version", field="version-id", value=version)
        found = self.schema_by_id(v.schema_id)
        if found is None:
            raise NotFound("the version's schema is not in this metadata", field="schema-id",
                           value=v.schema_id)
        return found

    @property
    def current_schema(self) -> Schema:
        """The current version's schema (the released spec has no separate current schema)."""
        return self.schema_for_version(self.current_version)

    def version_id_at(self, timestamp_ms: int) -> int | None:
        """Id of the version that was current at ``timestamp_ms`` per the version log, or None.

        Spec: Version log — the log "allows reconstructing what version of the view would have
        been used at some point in time"; an entry takes effect at its own timestamp, rollbacks
        show up as repeated ids. Entries are ordered by timestamp; of equal timestamps the later
        entry wins. None when the log has no entry at or before ``timestamp_ms``.
        """
        best: ViewHistoryEntry | None = None
        for entry in self.version_log:
            if entry.timestamp_ms <= timestamp_ms and (
                best is None or entry.timestamp_ms >= best.timestamp_ms
            ):
                best = entry
        return None if best is None else best.version_id

    def version_at(self, timestamp_ms: int) -> ViewVersion:
        """The version that was current at ``timestamp_ms``; ``NotFound`` if unknown or expired."""
        vid = self.version_id_at(timestamp_ms)
        if vid is None:
            raise NotFound("no view version was current at that time (the version log starts "
                           "later)", field="timestamp-ms", value=timestamp_ms)
        found = self.version_by_id(vid)
        if found is None:
            raise NotFound(f"view version {vid} was current at that time but is no longer "
                           "retained in this metadata", field="timestamp-ms", value=timestamp_ms)
        return found


# --------------------------------------------------------------------------- draft model


@safe_repr
@dataclass(frozen=True, kw_only=True)
class DraftSQLViewRepresentation:
    """An early-draft SQL representation, with its own schema id, defaults, aliases and docs."""

    sql: str
    dialect: str
    schema_id: int | None = None
    default_catalog: str | None = None
    default_namespace: tuple[str, ...] | None = None
    field_aliases: tuple[str | None, ...] | None = None
    field_docs: tuple[str | None, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    type: ClassVar[str] = "sql"

    def __post_init__(self) -> None:
        for name in ("default_namespace", "field_aliases", "field_docs"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))
        object.__setattr__(self, "extra", _frozen_map(self.extra))
        _check_extra(self.extra, _DRAFT_SQL_KEYS)

    def __hash__(self) -> int:
        return hash((self.sql, self.dialect, self.schema_id))


DraftViewRepresentation: TypeAlias = DraftSQLViewRepresentation | UnknownViewRepresentation


@safe_repr
@dataclass(frozen=True, kw_only=True)
class DraftViewVersion:
    """An early-draft view version (has ``parent_version_id``; no schema or defaults of its own)."""

    version_id: int
    parent_version_id: int | None = None
    timestamp_ms: int
    summary: Mapping[str, str] = field(default_factory=_empty)
    representations: tuple[DraftViewRepresentation, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=_empty)

    def __post_init__(self) -> None:
        object.__setattr__(self, "summary", _frozen_map(self.summary))
        object.__setattr__(self, "representations", tuple(self.representations))
        object.__setattr__(self, "extra", _frozen_map(self.extra))
        _check_extra(self.extra, _DRAFT_VERSION_KEYS)

    def __hash__(self) -> int:
        return hash((self.version_id, self.timestamp_ms))

    @property
    def operation(self) -> str | None:
        """The draft's required summary ``operation`` ("create" or "replace")."""
        return self.summary.get("operation")

    @property
    def engine_version(self) -> str | None:
        """``engine-version`` (draft table) or ``engineVersion`` (draft example), or None."""
        return self.summary.get("engine-version", self.summary.get("engineVersion"))

    def sql_for(self, dialect: str) -> str | None:
        key = _lower_dialect(dialect)
        for rep in self.representations:
            if isinstance(rep, DraftSQLViewRepresentation) and _lower_dialect(rep.dialect) == key:
                return rep.sql
        return None


@dataclass(frozen=True, kw_only=True)
class DraftViewMetadata(_ViewMetadataBase["DraftViewVersion"]):
    """A view metadata document written to the early view-spec draft (kept as written)."""

    format_version: int = SUPPORTED_VIEW_FORMAT_VERSION
    location: str
    current_version_id: int
    versions: tuple[DraftViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...] = ()
    properties: Mapping[str, str] = field(default_factory=_empty)
    schemas: tuple[Schema, ...] = ()
    current_schema_id: int | None = None
    view_uuid: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    def __hash__(self) -> int:
        return hash((self.location, self.current_version_id, len(self.versions)))

    def _validate(self) -> None:
        if self.format_version != SUPPORTED_VIEW_FORMAT_VERSION:
            raise UnsupportedVersion("unsupported view format version (the draft defines only 1)",
                                     field="format-version", value=self.format_version)
        _check_extra(self.extra, _DRAFT_META_KEYS)
        schema_ids = self._check_ids()
        if self.current_schema_id is not None and self.current_schema_id not in schema_ids:
            raise InvalidMetadata(f"current-schema-id is not among the schemas "
                                  f"(known: {sorted(schema_ids)})", field="current-schema-id",
                                  value=self.current_schema_id)
        for i, v in enumerate(self.versions):
            for j, rep in enumerate(v.representations):
                if (isinstance(rep, DraftSQLViewRepresentation) and rep.schema_id is not None
                        and rep.schema_id not in schema_ids):
                    raise InvalidMetadata(
                        f"representation refers to a schema that is not in schemas "
                        f"(known: {sorted(schema_ids)})",
                        field=f"versions[{i}].representations[{j}].schema-id",
                        value=rep.schema_id)

    def to_released(self, *, view_uuid: str | UUID | None = None) -> ViewMetadata:
        """Convert to the released model (module docstring: "Draft to released conversion")."""
        if view_uuid is not None:
            new_uuid = str(view_uuid)
        elif self.view_uuid is not None:
            new_uuid = self.view_uuid
        else:
            new_uuid = str(uuid5(NAMESPACE_URL, self.location))
        schemas = list(self.schemas)
        next_schema_id = max((s.schema_id for s in schemas), default=-1) + 1
        versions: list[ViewVersion] = []
        query_schema_ids: dict[int, int] = {}  # version id -> schema id before aliases
        for i, dv in enumerate(self.versions):
            where = f"versions[{i}]"
            sql = [r for r in dv.representations if isinstance(r, DraftSQLViewRepresentation)]
            schema_id = _agree(sql, "schema_id", where)
            if schema_id is None and dv.version_id == self.current_version_id:
                schema_id = self.current_schema_id
            if schema_id is None:
                raise InvalidMetadata(
                    f"draft view version {dv.version_id} names no schema, but a released view "
                    "version requires a schema-id", field=f"{where}.representations")
            query_schema_ids[dv.version_id] = schema_id
            aliases = _agree(sql, "field_aliases", where)
            docs = _agree(sql, "field_docs", where)
            if aliases is not None or docs is not None:
                base = self.schema_by_id(schema_id)
                assert base is not None  # representation schema ids checked in _validate
                aliased = _apply_aliases(base, aliases, docs, where)
                if not aliased.same_schema(base):
                    reuse = next((s for s in schemas if s.same_schema(aliased)), None)
                    if reuse is None:
                        reuse = Schema(*aliased.fields, schema_id=next_schema_id,
                                       identifier_field_ids=aliased.identifier_field_ids)
                        schemas.append(reuse)
                        next_schema_id += 1
                    schema_id = reuse.schema_id
            summary = dict(dv.summary)
            if dv.parent_version_id is not None:
                summary.setdefault("parent-version-id", str(dv.parent_version_id))
            if "engineVersion" in summary:
                summary.setdefault("engine-version", summary["engineVersion"])
            reps: list[ViewRepresentation] = [
                SQLViewRepresentation(r.sql, r.dialect, r.extra)
                if isinstance(r, DraftSQLViewRepresentation) else r
                for r in dv.representations
            ]
            namespace = _agree(sql, "default_namespace", where)
            catalog = _agree(sql, "default_catalog", where)
            try:
                versions.append(ViewVersion(
                    version_id=dv.version_id,
                    timestamp_ms=dv.timestamp_ms,
                    schema_id=schema_id,
                    summary=summary,
                    representations=tuple(reps),
                    default_catalog=catalog,
                    default_namespace=() if namespace is None else namespace,
                    # a draft version has no released version-level keys; drop any stray ones
                    extra={k: v for k, v in dv.extra.items() if k not in _VERSION_KEYS},
                ))
            except ValidationError as e:
                raise invalid(e, where) from None
        extra = dict(self.extra)
        if (self.current_schema_id is not None
                and self.current_schema_id != query_schema_ids[self.current_version_id]):
            extra["current-schema-id"] = self.current_schema_id
        try:
            return ViewMetadata(
                view_uuid=new_uuid,
                format_version=self.format_version,
                location=self.location,
                schemas=tuple(schemas),
                current_version_id=self.current_version_id,
                versions=tuple(versions),
                version_log=self.version_log,
                properties=self.properties,
                extra=extra,
                draft_source=self,
            )
        except ValidationError as e:
            raise InvalidMetadata("draft view metadata cannot be converted: " + e.message,
                                  field=e.field,
                                  **({"value": e.value} if e.has_value else {})) from None


def _agree(reps: Sequence[DraftSQLViewRepresentation], attr: str, where: str) -> Any:
    """The one value of ``attr`` set on the representations (None if none set it)."""
    found: Any = None
    found_at = -1
    for j, rep in enumerate(reps):
        value = getattr(rep, attr)
        if value is None:
            continue
        if found_at >= 0 and value != found:
            key = attr.replace("_", "-")
            raise InvalidMetadata(
                f"the SQL representations of a draft version disagree on {key}; the released "
                "spec has one value per version", field=f"{where}.representations[{j}].{key}",
                value=value)
        found, found_at = value, j
    return found


def _apply_aliases(schema: Schema, aliases: tuple[str | None, ...] | None,
                   docs: tuple[str | None, ...] | None, where: str) -> Schema:
    """Rename top-level columns to their aliases and set their docs (draft field-aliases/docs)."""
    n = len(schema.fields)
    for key, values in (("field-aliases", aliases), ("field-docs", docs)):
        if values is not None and len(values) != n:
            raise InvalidMetadata(
                f"{key} has {len(values)} entries but schema {schema.schema_id} has {n} "
                "top-level columns", field=f"{where}.representations.{key}", value=list(values))
    fields = []
    for i, f in enumerate(schema.fields):
        alias = aliases[i] if aliases is not None else None
        doc = docs[i] if docs is not None else None
        fields.append(replace(f, name=f.name if alias is None else alias,
                              doc=f.doc if doc is None else doc))
    try:
        return Schema(*fields, schema_id=schema.schema_id,
                      identifier_field_ids=schema.identifier_field_ids)
    except ValidationError as e:
        raise InvalidMetadata("field-aliases make an invalid schema: " + e.message,
                              field=f"{where}.representations.field-aliases",
                              value=list(aliases or ())) from None


# --------------------------------------------------------------------------- JSON reading
# Ids and timestamps are read as JSON integers of any size (bits=None), as before.


def _unknown(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


def _log_entry(raw: Any, where: str) -> ViewHistoryEntry:
    e = as_object(raw, where, "a version-log entry")
    return ViewHistoryEntry(req_int(e, "timestamp-ms", where, None),
                            req_int(e, "version-id", where, None), _unknown(e, _LOG_KEYS))


def _opt_names(rep: Mapping[str, Any], key: str, where: str) -> tuple[str | None, ...] | None:
    """A draft ``field-aliases``/``field-docs`` list (strings or nulls); None when absent."""
    return None if rep.get(key) is None else tuple(str_list(rep, key, where, nullable=True))


def _representation(raw: Any, where: str, *, draft: bool) -> Any:
    rep = as_object(raw, where, "a view representation")
    rtype = req_str(rep, "type", where)
    if rtype.lower() != "sql":
        return UnknownViewRepresentation(rtype, rep)
    sql, dialect = req_str(rep, "sql", where), req_str(rep, "dialect", where)
    if not draft:
        return SQLViewRepresentation(sql, dialect, _unknown(rep, _SQL_KEYS))
    return DraftSQLViewRepresentation(
        sql=sql,
        dialect=dialect,
        schema_id=opt_int(rep, "schema-id", where, None),
        default_catalog=opt_str(rep, "default-catalog", where),
        default_namespace=None if rep.get("default-namespace") is None
        else tuple(str_list(rep, "default-namespace", where)),
        field_aliases=_opt_names(rep, "field-aliases", where),
        field_docs=_opt_names(rep, "field-docs", where),
        extra=_unknown(rep, _DRAFT_SQL_KEYS),
    )


def _version_fields(v: Mapping[str, Any], where: str, *, draft: bool) -> dict[str, Any]:
    """The fields the released and the draft version share, parsed."""
    return {
        "version_id": req_int(v, "version-id", where, None),
        "timestamp_ms": req_int(v, "timestamp-ms", where, None),
        "summary": str_map(v, "summary", where, required=True),
        "representations": parse_each(v, "representations", where,
                                      partial(_representation, draft=draft)),
    }


def _released_version(raw: Any, where: str) -> ViewVersion:
    v = as_object(raw, where, "a view version")
    fields = _version_fields(v, where, draft=False)
    fields.update(
        schema_id=req_int(v, "schema-id", where, None),
        default_catalog=opt_str(v, "default-catalog", where),
        default_namespace=tuple(str_list(v, "default-namespace", where, required=True)),
        extra=_unknown(v, _VERSION_KEYS),
    )
    try:
        return ViewVersion(**fields)
    except ValidationError as e:
        raise invalid(e, where) from None


def _draft_version(raw: Any, where: str) -> DraftViewVersion:
    v = as_object(raw, where, "a view version")
    return DraftViewVersion(
        **_version_fields(v, where, draft=True),
        parent_version_id=opt_int(v, "parent-version-id", where, None),
        extra=_unknown(v, _DRAFT_VERSION_KEYS),
    )


def _metadata_fields(obj: Mapping[str, Any], version: Callable[..., Any]) -> dict[str, Any]:
    """The fields the released and the draft metadata share, parsed (versions by ``version``)."""
    return {
        "format_version": _check_format_version(req_int(obj, "format-version", "", None)),
        "location": req_str(obj, "location", ""),
        "current_version_id": req_int(obj, "current-version-id", "", None),
        "versions": parse_each(obj, "versions", "", version),
        "version_log": parse_each(obj, "version-log", "", _log_entry),
        "properties": str_map(obj, "properties", ""),
    }


def _released_from_obj(obj: Mapping[str, Any]) -> ViewMetadata:
    return ViewMetadata(
        **_metadata_fields(obj, _released_version),
        view_uuid=req_str(obj, "view-uuid", ""),
        schemas=parse_each(obj, "schemas", "", schema_from_json),
        extra=_unknown(obj, _META_KEYS),
    )


def _draft_from_obj(obj: Mapping[str, Any]) -> DraftViewMetadata:
    return DraftViewMetadata(
        **_metadata_fields(obj, _draft_version),
        schemas=parse_each(obj, "schemas", "", schema_from_json, required=False),
        current_schema_id=opt_int(obj, "current-schema-id", "", None),
        view_uuid=opt_str(obj, "view-uuid", ""),
        extra=_unknown(obj, _DRAFT_META_KEYS),
    )


def is_draft_view_metadata(obj: Mapping[str, Any]) -> bool:
    """Whether a decoded document is written to the early draft (see the module docstring)."""
    versions = obj.get("versions")
    version_objs = [v for v in versions if isinstance(v, Mapping)] if isinstance(
        versions, list) else []
    if any("schema-id" in v for v in version_objs):
        return False
    if "current-schema-id" in obj:
        return True
    for v in version_objs:
        if "parent-version-id" in v:
            return True
        summary = v.get("summary")
        if isinstance(summary, Mapping) and "engineVersion" in summary:
            return True
        reps = v.get("representations")
        if isinstance(reps, list) and any(
            isinstance(r, Mapping) and not _DRAFT_ONLY_REP_KEYS.isdisjoint(r) for r in reps
        ):
            return True
    return False


def _decode(data: str | bytes | bytearray | Mapping[str, Any], file: str | None) -> Any:
    if isinstance(data, Mapping):
        return data
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorruptFile(f"view metadata is not valid JSON: {e}", file=file) from None


def view_metadata_from_json(
    data: str | bytes | bytearray | Mapping[str, Any], *, file: str | None = None
) -> ViewMetadata | DraftViewMetadata:
    """Parse a view metadata document: released form, or an early-draft document as written.

    ``file`` (the metadata file's location) is named in every error.
    """
    obj = _decode(data, file)
    try:
        obj = as_object(obj, "", "view metadata")
        if is_draft_view_metadata(obj):
            return _draft_from_obj(obj)
        return _released_from_obj(obj)
    except IcebergError as e:
        raise (e if file is None else e.with_file(file)) from None


def load_view_metadata(
    data: str | bytes | bytearray | Mapping[str, Any],
    *,
    file: str | None = None,
    view_uuid: str | UUID | None = None,
) -> ViewMetadata:
    """Parse a view metadata document into the released model, converting a draft if needed.

    ``view_uuid`` is used only when converting a draft (see ``DraftViewMetadata.to_released``).
    """
    md = view_metadata_from_json(data, file=file)
    if isinstance(md, ViewMetadata):
        return md
    try:
        return md.to_released(view_uuid=view_uuid)
    except IcebergError as e:
        raise (e if file is None else e.with_file(file)) from None


# --------------------------------------------------------------------------- JSON writing


def _with_extra(out: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``out`` followed by (a copy of) the unknown fields that were read with it."""
    out.update(copy.deepcopy(dict(extra)))
    return out


def _log_to_json(log: Iterable[ViewHistoryEntry]) -> list[dict[str, Any]]:
    return [_with_extra({"timestamp-ms": e.timestamp_ms, "version-id": e.version_id}, e.extra)
            for e in log]


def _representations_to_json(reps: Iterable[object]) -> list[dict[str, Any]]:
    out = []
    for rep in reps:
        if isinstance(rep, UnknownViewRepresentation):
            out.append(copy.deepcopy(dict(rep.raw)))
            continue
        assert isinstance(rep, (SQLViewRepresentation, DraftSQLViewRepresentation))
        sql: dict[str, Any] = {"type": "sql", "sql": rep.sql, "dialect": rep.dialect}
        if isinstance(rep, DraftSQLViewRepresentation):
            sql |= json_object(
                ("schema-id", rep.schema_id), ("default-catalog", rep.default_catalog),
                ("default-namespace", rep.default_namespace),
                ("field-aliases", rep.field_aliases), ("field-docs", rep.field_docs))
        out.append(_with_extra(sql, rep.extra))
    return out


def _version_to_json(v: ViewVersion) -> dict[str, Any]:
    return _with_extra(json_object(
        ("version-id", v.version_id), ("timestamp-ms", v.timestamp_ms),
        ("schema-id", v.schema_id), ("summary", dict(v.summary)),
        ("default-catalog", v.default_catalog), ("default-namespace", v.default_namespace),
        ("representations", _representations_to_json(v.representations))), v.extra)


def _draft_version_to_json(v: DraftViewVersion) -> dict[str, Any]:
    return _with_extra(json_object(
        ("version-id", v.version_id), ("parent-version-id", v.parent_version_id),
        ("timestamp-ms", v.timestamp_ms), ("summary", dict(v.summary)),
        ("representations", _representations_to_json(v.representations))), v.extra)


def view_metadata_to_json(md: ViewMetadata | DraftViewMetadata) -> dict[str, Any]:
    """Serialize view metadata to a JSON-ready dict (a draft is written back in draft form).

    Field order follows the reference implementation; ``properties`` is left out when empty;
    fields in ``extra`` come last.
    """
    if isinstance(md, DraftViewMetadata):
        out = json_object(
            ("view-uuid", md.view_uuid), ("format-version", md.format_version),
            ("location", md.location), ("current-version-id", md.current_version_id),
            ("properties", dict(md.properties) or None),
            ("versions", [_draft_version_to_json(v) for v in md.versions]),
            ("version-log", _log_to_json(md.version_log)),
            ("schemas", [schema_to_json(s) for s in md.schemas] or None),
            ("current-schema-id", md.current_schema_id))
    else:
        out = json_object(
            ("view-uuid", md.view_uuid), ("format-version", md.format_version),
            ("location", md.location), ("properties", dict(md.properties) or None),
            ("schemas", [schema_to_json(s) for s in md.schemas]),
            ("current-version-id", md.current_version_id),
            ("versions", [_version_to_json(v) for v in md.versions]),
            ("version-log", _log_to_json(md.version_log)))
    return _with_extra(out, md.extra)
