"""View metadata changes: creating a view, adding (replacing) a version, rollback, properties.

Spec: "Iceberg View Spec" — View Metadata, Versions, Version log, SQL representation. Everything
here is pure: each function takes the current :class:`ViewMetadata` (or nothing, for a new view)
and returns new immutable metadata, or raises before anything is built. The input is never
changed. Writing metadata files and the metadata location stay with the catalog.

Where the spec is silent the rules follow Iceberg Java 1.10.2's ``ViewMetadata.Builder`` (read
from the 1.10.2 runtime jar) and the catalog code that drives it (``BaseMetastoreViewCatalog``
create/replace, ``ViewVersionReplace``, ``PropertiesUpdate``):

* New view: the first version gets id 1 and the first schema id 0 (whatever ids the caller's
  schema carries); ``format-version`` is 1 (anything else: ``UnsupportedVersion``); the version
  log starts with ``(timestamp_ms, 1)``; the UUID is the given one or a random UUID.
* Schemas: a version's schema equal to a known one (same columns and identifier fields; the
  schema id is ignored) reuses that id; otherwise it gets ``max(schema ids) + 1``. Field ids are
  kept as given. Schemas are never removed.
* Versions: a new version reuses the id of an existing one when they are equivalent: Java
  compares the summary, the representations (in order, SQL text and dialect exactly), the
  default catalog, the default namespace and the schema id — not the version id or timestamp.
  icenb compares the same fields but leaves the summary's ``operation`` out (Java's own
  docstring says the comparison ignores "the operation"; Java 1.10 never writes one, so on
  Java-written metadata the result is the same) and also compares fields icenb keeps in
  ``extra`` (a version carrying e.g. a materialized view's ``storage-table`` is not equivalent to
  a plain one). Otherwise the id is ``max(version ids) + 1``. The new version becomes current.
* Version log: an entry is appended only when the current version id changes; re-selecting the
  current version (by replace or rollback) changes nothing. Java stamps a rollback's entry with
  the system clock and a new version's entry with its own timestamp: icenb takes both from the
  caller's ``timestamp_ms``.
* Representations: at most one SQL representation per dialect, dialects compared
  case-insensitively (Java: "Cannot add multiple queries for dialect"); at least one
  representation (Java's catalog: "Cannot create/replace view without specifying a query").
* ``replace.drop-dialect.allowed`` (default false; Java's ``Boolean.parseBoolean``: only
  ``"true"`` in any case is true): every change to existing metadata — a replace and also a
  rollback — is refused when the new current version lacks a SQL dialect of the previous current
  version, unless the property is true after the change (properties set in the same change
  count, as in Java where the catalog sets properties before the version).
* ``version.history.num-entries`` (default 10; must be a positive 32-bit integer, checked on
  every change): after each change Java keeps ``max(num-entries, number of distinct versions
  added by the change or current)`` versions — for the single-step changes here that is
  ``num-entries``. When there are more, it keeps the current version first, then the highest ids
  (versions are then listed in that order: current, then descending ids), and cuts the version
  log after its last entry that names an expired version (the log stays a contiguous suffix
  naming only retained versions). When nothing is expired the log is left as it is.
* Properties: set, then remove; a key both set and removed is refused (Java: "Cannot remove and
  update the same key"); removing an absent key is fine.
* ``-1`` as a version id means "the version added last in this change" in Java; none of these
  single-step functions adds a version before selecting one, so ``-1`` is refused as Java does.
"""

from __future__ import annotations

import re
import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from icenb.errors import NotFound, UnsupportedVersion, ValidationError
from icenb.spec._json_fields import INT_MAX, INT_MIN
from icenb.spec.schema import Schema
from icenb.spec.snapshot import ENGINE_NAME  # also a view version summary key
from icenb.spec.view_metadata import (
    REPLACE_DROP_DIALECT_ALLOWED,
    REPLACE_DROP_DIALECT_ALLOWED_DEFAULT,
    SUPPORTED_VIEW_FORMAT_VERSION,
    VERSION_HISTORY_SIZE,
    VERSION_HISTORY_SIZE_DEFAULT,
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewRepresentation,
    ViewVersion,
)

__all__ = [
    "FIRST_VERSION_ID",
    "LAST_ADDED",
    "OPERATION_CREATE",
    "OPERATION_REPLACE",
    "Representations",
    "add_view_version",
    "new_view_metadata",
    "set_current_view_version",
    "set_view_properties",
]

#: Id of a new view's first version (Java's catalogs create views with version 1).
FIRST_VERSION_ID = 1
#: Java's "the version added last in this change" (refused here; see the module docstring).
LAST_ADDED = -1
OPERATION_CREATE = "create"
OPERATION_REPLACE = "replace"
_INITIAL_SCHEMA_ID = 0
_OPERATION = "operation"
_INT_RE = re.compile(r"[+-]?[0-9]+")

#: SQL by dialect (``{"spark": "SELECT ..."}``) or representation objects, in order.
Representations: TypeAlias = Mapping[str, str] | Iterable[ViewRepresentation]


# --------------------------------------------------------------------------- argument checks


def _check_int(value: Any, name: str) -> int:
    if type(value) is not int:
        raise ValidationError(f"{name} must be an integer", field=name, value=value)
    return value


def _check_str(value: Any, name: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise ValidationError(f"{name} must be a{'' if empty else ' non-empty'} string",
                              field=name, value=value)
    return value


def _check_representations(reps: Any) -> tuple[ViewRepresentation, ...]:
    """The representations as objects; one SQL representation per dialect (case-insensitive)."""
    if isinstance(reps, Mapping):
        items: list[Any] = []
        for dialect, sql in reps.items():
            _check_str(dialect, "dialect")
            items.append(SQLViewRepresentation(_check_str(sql, f"sql[{dialect!r}]"), dialect))
    elif isinstance(reps, (str, bytes)) or not isinstance(reps, Iterable):
        raise ValidationError("representations must be a mapping of dialect to SQL or a list of "
                              "representations", field="representations", value=reps)
    else:
        items = list(reps)
    if not items:
        # Java's catalogs: "Cannot create view without specifying a query".
        raise ValidationError("a view version needs at least one representation (a query)",
                              field="representations", value=[])
    seen: dict[str, str] = {}
    for i, rep in enumerate(items):
        if isinstance(rep, UnknownViewRepresentation):
            continue
        if not isinstance(rep, SQLViewRepresentation):
            raise ValidationError("not a view representation", field=f"representations[{i}]",
                                  value=rep)
        _check_str(rep.dialect, f"representations[{i}].dialect")
        _check_str(rep.sql, f"representations[{i}].sql")
        key = rep.dialect.lower()
        if key in seen:
            # Spec: SQL representation — "only one SQL representation per dialect".
            raise ValidationError(
                f"a view version can have only one SQL representation per dialect; dialect "
                f"{key!r} is given twice ({seen[key]!r} and {rep.dialect!r})",
                field=f"representations[{i}].dialect", value=rep.dialect)
        seen[key] = rep.dialect
    return tuple(items)


def _check_namespace(namespace: str | Sequence[str]) -> tuple[str, ...]:
    """A default namespace: a sequence of levels (a plain string is one level)."""
    levels = (namespace,) if isinstance(namespace, str) else tuple(namespace)
    for i, level in enumerate(levels):
        _check_str(level, f"default-namespace[{i}]")
    return levels


def _check_properties(props: Mapping[str, Any] | None, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (props or {}).items():
        _check_str(key, f"{name} key")
        if not isinstance(value, str):
            raise ValidationError("view property values must be strings", field=key, value=value)
        out[key] = value
    return out


def _summary(summary: Mapping[str, Any] | None, operation: str | None, engine_name: str | None,
             engine_version: str | None) -> dict[str, str]:
    """The version summary: the given entries, ``operation`` and the engine when given."""
    out = _check_properties(summary, "summary")
    if operation is not None:
        out[_OPERATION] = _check_str(operation, "operation")
    if engine_name is not None:
        out[ENGINE_NAME] = _check_str(engine_name, ENGINE_NAME)
    if engine_version is not None:
        out["engine-version"] = _check_str(engine_version, "engine-version")
    return out


def _history_size(props: Mapping[str, str]) -> int:
    """``version.history.num-entries`` as Java's ``PropertyUtil.propertyAsInt``; must be > 0."""
    raw = props.get(VERSION_HISTORY_SIZE)
    if raw is None:
        return VERSION_HISTORY_SIZE_DEFAULT
    if not _INT_RE.fullmatch(raw) or not INT_MIN <= int(raw) <= INT_MAX:
        raise ValidationError("view property must be an integer", field=VERSION_HISTORY_SIZE,
                              value=raw)
    size = int(raw)
    if size <= 0:
        raise ValidationError("view property must be positive", field=VERSION_HISTORY_SIZE,
                              value=raw)
    return size


def _drop_dialect_allowed(props: Mapping[str, str]) -> bool:
    """``replace.drop-dialect.allowed`` as Java's ``Boolean.parseBoolean`` reads it."""
    raw = props.get(REPLACE_DROP_DIALECT_ALLOWED)
    if raw is None:
        return REPLACE_DROP_DIALECT_ALLOWED_DEFAULT
    return raw.lower() == "true"


def _dialects(version: ViewVersion) -> set[str]:
    return {r.dialect.lower() for r in version.sql_representations}


# --------------------------------------------------------------------------- the builder


def _equivalent(one: ViewVersion, two: ViewVersion) -> bool:
    """Java's ``sameViewVersion`` (ignoring the summary's ``operation``; see module docstring)."""

    def summary(v: ViewVersion) -> dict[str, str]:
        return {k: s for k, s in v.summary.items() if k != _OPERATION}

    return (summary(one) == summary(two)
            and one.representations == two.representations
            and one.default_catalog == two.default_catalog
            and one.default_namespace == two.default_namespace
            and one.schema_id == two.schema_id
            and one.extra == two.extra)


class _Builder:
    """Working copy of view metadata for one change (Java's ``ViewMetadata.Builder``).

    Local to one function call; the base metadata is only read.
    """

    def __init__(self, base: ViewMetadata | None) -> None:
        self.base = base
        self.schemas: list[Schema] = list(base.schemas) if base else []
        self.versions: list[ViewVersion] = list(base.versions) if base else []
        self.history: list[ViewHistoryEntry] = list(base.version_log) if base else []
        self.properties: dict[str, str] = dict(base.properties) if base else {}
        self.current_version_id: int | None = base.current_version_id if base else None
        self.added_version_ids: set[int] = set()
        self.history_entry: ViewHistoryEntry | None = None

    def set_properties(self, updates: Mapping[str, str]) -> None:
        self.properties.update(updates)

    def remove_properties(self, removals: Iterable[str]) -> None:
        for key in removals:
            self.properties.pop(key, None)

    def add_schema(self, schema: Schema) -> int:
        """The id of ``schema``: an equal known schema's, else a new one (max + 1)."""
        for known in self.schemas:
            if known.same_schema(schema):
                return known.schema_id
        new_id = max((s.schema_id for s in self.schemas), default=_INITIAL_SCHEMA_ID - 1) + 1
        self.schemas.append(Schema(*schema.fields, schema_id=new_id,
                                   identifier_field_ids=schema.identifier_field_ids))
        return new_id

    def add_version(self, version: ViewVersion) -> int:
        """The id of ``version``: an equivalent known version's, else a new one (max + 1)."""
        for known in self.versions:
            if _equivalent(known, version):
                return known.version_id
        new_id = max([v.version_id for v in self.versions] + [version.version_id - 1]) + 1
        self.versions.append(ViewVersion(
            version_id=new_id, timestamp_ms=version.timestamp_ms, schema_id=version.schema_id,
            summary=version.summary, representations=version.representations,
            default_catalog=version.default_catalog,
            default_namespace=version.default_namespace, extra=version.extra))
        self.added_version_ids.add(new_id)
        return new_id

    def set_current_version_id(self, version_id: int, timestamp_ms: int) -> None:
        if version_id == LAST_ADDED:
            raise ValidationError("-1 (the version added last in this change) cannot be used: "
                                  "no version is added by this change", field="version-id",
                                  value=version_id)
        if version_id == self.current_version_id:
            return  # no change, no version-log entry
        known = sorted(v.version_id for v in self.versions)
        if version_id not in known:
            raise NotFound(f"cannot set the current view version to an unknown version "
                           f"(existing version ids: {known})", field="version-id",
                           value=version_id)
        self.current_version_id = version_id
        self.history_entry = ViewHistoryEntry(timestamp_ms, version_id)

    def _version(self, version_id: int) -> ViewVersion:
        found = next(v for v in self.versions if v.version_id == version_id)
        return found

    def build(self, *, view_uuid: str, location: str,
              format_version: int = SUPPORTED_VIEW_FORMAT_VERSION) -> ViewMetadata:
        """Checks on the finished change, version expiry and log trimming; the new metadata."""
        assert self.current_version_id is not None
        current = self._version(self.current_version_id)
        if self.base is not None and not _drop_dialect_allowed(self.properties):
            dropped = sorted(_dialects(self.base.current_version) - _dialects(current))
            if dropped:
                raise ValidationError(
                    f"the change would drop SQL dialect(s) {dropped} of the current view "
                    f"version {self.base.current_version_id} (new current version "
                    f"{current.version_id} has {sorted(_dialects(current))}); set the view "
                    f"property {REPLACE_DROP_DIALECT_ALLOWED}=true to allow it",
                    field=REPLACE_DROP_DIALECT_ALLOWED, value=dropped)
        history_size = _history_size(self.properties)
        history = list(self.history)
        if self.history_entry is not None:
            history.append(self.history_entry)
        keep = max(len(self.added_version_ids | {current.version_id}), history_size)
        versions = self.versions
        if len(versions) > keep:
            versions = _retained_versions(versions, keep, current)
            history = _retained_history(history, {v.version_id for v in versions})
        return ViewMetadata(
            view_uuid=view_uuid,
            format_version=format_version,
            location=location,
            schemas=tuple(self.schemas),
            current_version_id=current.version_id,
            versions=tuple(versions),
            version_log=tuple(history),
            properties=self.properties,
            extra=self.base.extra if self.base is not None else {},
        )


def _retained_versions(versions: Sequence[ViewVersion], keep: int,
                       current: ViewVersion) -> list[ViewVersion]:
    """The current version, then the highest other ids, ``keep`` in all (Java's order)."""
    others = sorted((v for v in versions if v.version_id != current.version_id),
                    key=lambda v: v.version_id, reverse=True)
    top_ids = sorted((v.version_id for v in versions), reverse=True)[:keep]
    retained = [current]
    for v in others:
        if len(retained) == keep:
            break
        if v.version_id in top_ids:
            retained.append(v)
    return retained


def _retained_history(history: Sequence[ViewHistoryEntry],
                      retained_ids: set[int]) -> list[ViewHistoryEntry]:
    """The version log after its last entry naming an expired version."""
    out: list[ViewHistoryEntry] = []
    for entry in history:
        if entry.version_id in retained_ids:
            out.append(entry)
        else:
            out.clear()
    return out


def _new_version(builder: _Builder, schema: Any, representations: Representations, *,
                 default_catalog: str | None, default_namespace: str | Sequence[str],
                 timestamp_ms: int, summary: Mapping[str, str] | None, operation: str | None,
                 engine_name: str | None, engine_version: str | None,
                 version_id: int) -> int:
    """Check a version's parts, add its schema and the version; the version's id."""
    if not isinstance(schema, Schema):
        raise ValidationError("a view version needs a Schema", field="schema", value=schema)
    reps = _check_representations(representations)
    namespace = _check_namespace(default_namespace)
    if default_catalog is not None:
        _check_str(default_catalog, "default-catalog")
    _check_int(timestamp_ms, "timestamp-ms")
    version_summary = _summary(summary, operation, engine_name, engine_version)
    schema_id = builder.add_schema(schema)
    return builder.add_version(ViewVersion(
        version_id=version_id, timestamp_ms=timestamp_ms, schema_id=schema_id,
        summary=version_summary, representations=reps, default_catalog=default_catalog,
        default_namespace=namespace))


def _check_base(md: Any) -> ViewMetadata:
    if not isinstance(md, ViewMetadata):
        raise ValidationError("view metadata changes need a (released) ViewMetadata",
                              field="metadata", value=md)
    return md


# --------------------------------------------------------------------------- public API


def new_view_metadata(
    location: str,
    schema: Schema,
    representations: Representations,
    *,
    default_namespace: str | Sequence[str],
    timestamp_ms: int,
    default_catalog: str | None = None,
    properties: Mapping[str, str] | None = None,
    view_uuid: str | uuid_module.UUID | None = None,
    summary: Mapping[str, str] | None = None,
    operation: str | None = OPERATION_CREATE,
    engine_name: str | None = None,
    engine_version: str | None = None,
    format_version: int = SUPPORTED_VIEW_FORMAT_VERSION,
) -> ViewMetadata:
    """The metadata of a new view: schema 0, version 1 current since ``timestamp_ms``.

    Spec: View Metadata (``format-version`` must be 1), Versions, Version log. ``summary`` entries
    are kept; ``operation`` (None: left out) and the engine are added to them.
    """
    if type(format_version) is not int or format_version != SUPPORTED_VIEW_FORMAT_VERSION:
        raise UnsupportedVersion(f"cannot create a view of format version {format_version!r} "
                                 f"(the view spec defines only {SUPPORTED_VIEW_FORMAT_VERSION})",
                                 field="format-version", value=format_version)
    _check_str(location, "location")
    if view_uuid is None:
        new_uuid = str(uuid_module.uuid4())
    else:
        new_uuid = str(view_uuid)
        try:
            uuid_module.UUID(new_uuid)
        except ValueError:
            raise ValidationError("view-uuid is not a UUID", field="view-uuid",
                                  value=view_uuid) from None
    builder = _Builder(None)
    builder.set_properties(_check_properties(properties, "properties"))
    version_id = _new_version(
        builder, schema, representations, default_catalog=default_catalog,
        default_namespace=default_namespace, timestamp_ms=timestamp_ms, summary=summary,
        operation=operation, engine_name=engine_name, engine_version=engine_version,
        version_id=FIRST_VERSION_ID)
    builder.set_current_version_id(version_id, timestamp_ms)
    return builder.build(view_uuid=new_uuid, location=location, format_version=format_version)


def add_view_version(
    md: ViewMetadata,
    schema: Schema,
    representations: Representations,
    *,
    default_namespace: str | Sequence[str],
    timestamp_ms: int,
    default_catalog: str | None = None,
    summary: Mapping[str, str] | None = None,
    operation: str | None = OPERATION_REPLACE,
    engine_name: str | None = None,
    engine_version: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> ViewMetadata:
    """Replace the view's definition: add (or reuse) a version and make it current.

    Spec: Versions ("versions are immutable; a change creates a new version"), Version log. An
    equivalent existing version's id is reused (module docstring). ``properties`` are set first,
    as Java's catalog replace does, so they count for the dialect and retention rules.
    """
    base = _check_base(md)
    builder = _Builder(base)
    builder.set_properties(_check_properties(properties, "properties"))
    next_id = max(v.version_id for v in base.versions) + 1
    version_id = _new_version(
        builder, schema, representations, default_catalog=default_catalog,
        default_namespace=default_namespace, timestamp_ms=timestamp_ms, summary=summary,
        operation=operation, engine_name=engine_name, engine_version=engine_version,
        version_id=next_id)
    builder.set_current_version_id(version_id, timestamp_ms)
    return builder.build(view_uuid=base.view_uuid, location=base.location,
                         format_version=base.format_version)


def set_current_view_version(md: ViewMetadata, version_id: int, *,
                             timestamp_ms: int) -> ViewMetadata:
    """Make a retained version current (a rollback); logged at ``timestamp_ms`` if it changes.

    Spec: Version log. ``NotFound`` names the unknown id and the existing ids.
    """
    base = _check_base(md)
    _check_int(version_id, "version-id")
    _check_int(timestamp_ms, "timestamp-ms")
    builder = _Builder(base)
    builder.set_current_version_id(version_id, timestamp_ms)
    return builder.build(view_uuid=base.view_uuid, location=base.location,
                         format_version=base.format_version)


def set_view_properties(md: ViewMetadata, updates: Mapping[str, str] | None = None,
                        removals: Iterable[str] | None = None) -> ViewMetadata:
    """Set, then remove view properties (spec: View Metadata ``properties``).

    The retention rule runs with the new properties (lowering ``version.history.num-entries``
    expires versions right away, as in Java).
    """
    base = _check_base(md)
    sets = _check_properties(updates, "updates")
    if isinstance(removals, str):
        removals = [removals]
    removes = [_check_str(k, "removals") for k in (removals or ())]
    both = sorted(set(sets) & set(removes))
    if both:
        raise ValidationError("cannot remove and update the same view property",
                              field=both[0], value=both)
    builder = _Builder(base)
    builder.set_properties(sets)
    builder.remove_properties(removes)
    return builder.build(view_uuid=base.view_uuid, location=base.location,
                         format_version=base.format_version)
