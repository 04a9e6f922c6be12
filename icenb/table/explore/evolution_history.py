"""Schema history and partition spec history of a table, field by field id.

Spec: "Schema Evolution" (fields are tracked by id: a rename keeps the id, a dropped id is never
reused), "Partition Evolution" (partition field ids likewise), "Manifest Lists" (each manifest
names the spec its files were written with, and counts its files and rows).

:func:`schema_history` is pure metadata. :func:`spec_history` reads one manifest list (the
chosen snapshot's) to count the files and rows written with each spec; nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow.compute as pc

from icenb.errors import NoSuchSnapshot, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_list_table, shared_manifest_cache
from icenb.reprs import safe_repr
from icenb.spec.content_entry import ContentType
from icenb.spec.manifest import EntryStatus, FileContent
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.table_metadata import LazySequence, TableMetadata
from icenb.spec.types import NestedField, NestedType
from icenb.table.scan.v4_planning import snapshot_entries

__all__ = [
    "FieldChange",
    "FieldHistory",
    "FieldVersion",
    "PartitionFieldHistory",
    "PartitionFieldVersion",
    "SchemaHistory",
    "SchemaVersion",
    "SpecHistory",
    "SpecUsage",
    "SpecVersion",
    "resolve_snapshot",
    "schema_history",
    "spec_history",
]

# Change kinds, in the order they are listed for one field.
ADDED = "added"
DROPPED = "dropped"
RENAMED = "renamed"
PROMOTED = "promoted"
OPTIONAL = "optional"
REQUIRED = "required"
DOC = "doc"
DEFAULT = "default"
MOVED = "moved"
IDENTIFIER = "identifier"
TRANSFORM = "transform"
VOIDED = "voided"


def resolve_snapshot(metadata: TableMetadata, which: int | str | None,
                     *, what: str = "snapshot") -> Snapshot:
    """A snapshot by id (int), branch or tag name (str), or the current one (None).

    Raises ``NoSuchSnapshot`` naming the value when there is none (spec: Snapshot References).
    """
    if which is None:
        snap = metadata.current_snapshot()
        if snap is None:
            raise NoSuchSnapshot("the table has no current snapshot", file=metadata.source_file,
                                 field=what, value=None)
        return snap
    if isinstance(which, bool) or not isinstance(which, (int, str)):
        raise ValidationError("expected a snapshot id or a branch or tag name", field=what,
                              value=which)
    if isinstance(which, int):
        snap = metadata.snapshot_by_id(which)
        if snap is None:
            raise NoSuchSnapshot("no such snapshot in the table metadata",
                                 file=metadata.source_file, field=what, value=which)
        return snap
    snap = metadata.snapshot_for_ref(which)
    if snap is None:
        if which not in metadata.refs and which != MAIN_BRANCH:
            raise NoSuchSnapshot(f"no branch or tag named {which!r}", file=metadata.source_file,
                                 field=what, value=which)
        raise NoSuchSnapshot(f"ref {which!r} points to no snapshot in the metadata",
                             file=metadata.source_file, field=what, value=which)
    return snap


# --------------------------------------------------------------------------- schemas


@safe_repr
@dataclass(frozen=True)
class FieldChange:
    """One change of one field (or of the schema, ``field_id`` None) from the schema before.

    ``kind``: added, dropped, renamed, promoted, optional, required, doc, default, moved,
    identifier; ``text`` says it in a few words (``"kind -> category"``, ``"id int -> long"``).
    """

    field_id: int | None
    kind: str
    text: str


@safe_repr
@dataclass(frozen=True)
class FieldVersion:
    """A field as one schema has it: full dotted path, type, required, doc and defaults."""

    field_id: int
    path: str
    name: str
    type: str
    required: bool
    doc: str | None
    initial_default: Any
    write_default: Any
    nested: bool
    position: int  # index among its siblings


@safe_repr
@dataclass(frozen=True)
class FieldHistory:
    """One field id across all schemas: its version in each (None where absent) and changes.

    ``versions`` and ``changes`` are aligned with :attr:`SchemaHistory.schemas`.
    """

    field_id: int
    versions: tuple[FieldVersion | None, ...]
    changes: tuple[tuple[FieldChange, ...], ...]
    current_index: int = -1  # the current schema's index in ``versions``

    @property
    def latest(self) -> FieldVersion:
        """The field in the current schema, else in the last schema that has it."""
        cur = self.versions[self.current_index] if self.versions else None
        return cur or next(v for v in reversed(self.versions) if v is not None)

    @property
    def dropped(self) -> bool:
        """Whether the current schema (not the last one listed: a table can be set back to
        an older schema) lacks the field."""
        return self.versions[self.current_index] is None

    def kinds(self) -> set[str]:
        """Every change kind the field went through."""
        return {c.kind for cs in self.changes for c in cs}


@safe_repr
@dataclass(frozen=True)
class SchemaVersion:
    """One schema of the table: whether current, which snapshots used it, what it changed."""

    schema: Schema
    is_current: bool
    snapshot_count: int
    snapshot_ids: tuple[int, ...]  # every snapshot whose schema-id is this one, metadata order
    changes: tuple[FieldChange, ...]  # from the schema before it in the metadata

    @property
    def schema_id(self) -> int:
        return self.schema.schema_id


@dataclass(frozen=True)
class SchemaHistory:
    """Every schema of a table in metadata order, and every field id across them.

    ``fields`` is in order of first appearance (each schema walked depth first); nested fields
    carry their full path. ``snapshots_without_schema`` counts snapshots with no ``schema-id``
    (v1 tables may omit it) or one that is not in ``schemas``.
    """

    metadata: TableMetadata
    schemas: tuple[SchemaVersion, ...]
    fields: tuple[FieldHistory, ...]
    current_schema_id: int
    snapshots_without_schema: int

    def field(self, field_id: int) -> FieldHistory:
        """The history of one field id (KeyError when no schema has it)."""
        for f in self.fields:
            if f.field_id == field_id:
                return f
        raise KeyError(field_id)

    def schema(self, schema_id: int) -> SchemaVersion:
        """One schema version by id (KeyError when absent)."""
        for s in self.schemas:
            if s.schema_id == schema_id:
                return s
        raise KeyError(schema_id)

    def __len__(self) -> int:
        return len(self.schemas)

    def __iter__(self) -> Iterator[SchemaVersion]:
        return iter(self.schemas)

    def __repr__(self) -> str:
        return (f"SchemaHistory(schemas={len(self.schemas)}, fields={len(self.fields)}, "
                f"current_schema_id={self.current_schema_id})")


def _walk(fields: Sequence[NestedField], prefix: str = "") -> Iterator[FieldVersion]:
    """Every field, depth first, with its full dotted path (list elements and map keys/values
    are named ``element``, ``key``, ``value`` as in the spec's column names)."""
    for pos, f in enumerate(fields):
        path = f"{prefix}{f.name}"
        nested = isinstance(f.field_type, NestedType)
        yield FieldVersion(f.field_id, path, f.name, _type_text(f), f.required, f.doc,
                           f.initial_default, f.write_default, nested, pos)
        if isinstance(f.field_type, NestedType):
            yield from _walk(f.field_type.fields, path + ".")


def _type_text(f: NestedField) -> str:
    t = f.field_type
    if isinstance(t, NestedType):
        return type(t).__name__.removesuffix("Type").lower()  # struct, list, map
    return str(t)


def _snapshot_schema_ids(metadata: TableMetadata) -> list[tuple[int, int | None]]:
    """(snapshot id, schema id) of every snapshot, from the raw JSON when not yet parsed."""
    snaps = metadata.snapshots
    if isinstance(snaps, LazySequence) and snaps.parsed_count == 0:
        out: list[tuple[int, int | None]] = []
        for raw in snaps.raw:
            if isinstance(raw, dict) and isinstance(raw.get("snapshot-id"), int):
                sid = raw.get("schema-id")
                out.append((raw["snapshot-id"], sid if isinstance(sid, int) else None))
        return out
    return [(s.snapshot_id, s.schema_id) for s in snaps]


def _field_changes(fid: int, before: FieldVersion | None, after: FieldVersion | None,
                   has_before_schema: bool) -> list[FieldChange]:
    if after is None:
        return [] if before is None else [FieldChange(fid, DROPPED, f"- {before.path}")]
    if before is None:
        if not has_before_schema:
            return []
        return [FieldChange(fid, ADDED, f"+ {after.path} {after.type}")]
    out: list[FieldChange] = []
    if before.name != after.name:
        out.append(FieldChange(fid, RENAMED, f"{before.path} -> {after.name}"))
    if before.type != after.type:
        out.append(FieldChange(fid, PROMOTED, f"{after.path} {before.type} -> {after.type}"))
    if before.required and not after.required:
        out.append(FieldChange(fid, OPTIONAL, f"{after.path} optional"))
    elif after.required and not before.required:
        out.append(FieldChange(fid, REQUIRED, f"{after.path} required"))
    if before.doc != after.doc:
        out.append(FieldChange(fid, DOC, f"{after.path} doc"))
    if (before.initial_default, before.write_default) != (after.initial_default,
                                                          after.write_default):
        out.append(FieldChange(fid, DEFAULT, f"{after.path} default"))
    return out


def _moved(before: Schema, after: Schema) -> list[FieldChange]:
    """Fields whose order among the siblings both schemas share changed (a column move)."""
    out: list[FieldChange] = []

    def visit(a: Sequence[NestedField], b: Sequence[NestedField], prefix: str) -> None:
        a_ids = {f.field_id for f in a}
        common_b = [f for f in b if f.field_id in a_ids]
        b_ids = {f.field_id for f in common_b}
        common_a = [f.field_id for f in a if f.field_id in b_ids]
        if [f.field_id for f in common_b] != common_a:
            # Report the fields not in their old relative place (a longest common subsequence
            # would be minimal; this is readable enough).
            for i, f in enumerate(common_b):
                if common_a[i] != f.field_id:
                    out.append(FieldChange(f.field_id, MOVED, f"{prefix}{f.name} moved"))
        by_id = {f.field_id: f for f in a}
        for f in b:
            old = by_id.get(f.field_id)
            if old is not None and isinstance(old.field_type, NestedType) \
                    and isinstance(f.field_type, NestedType):
                visit(old.field_type.fields, f.field_type.fields, f"{prefix}{f.name}.")

    visit(before.fields, after.fields, "")
    return out


def schema_history(metadata: TableMetadata) -> SchemaHistory:
    """Every schema and every field id across schemas (spec: "Schema Evolution"). No I/O."""
    schemas = tuple(metadata.schemas)
    walked = [{v.field_id: v for v in _walk(s.fields)} for s in schemas]
    order: list[int] = []
    seen: set[int] = set()
    for w in walked:
        for fid in w:
            if fid not in seen:
                seen.add(fid)
                order.append(fid)

    per_schema_changes: list[list[FieldChange]] = [[] for _ in schemas]
    histories: list[FieldHistory] = []
    current = next((i for i, s in enumerate(schemas)
                    if s.schema_id == metadata.current_schema_id), -1)
    for fid in order:
        versions = tuple(w.get(fid) for w in walked)
        changes: list[tuple[FieldChange, ...]] = []
        for i, v in enumerate(versions):
            prev = versions[i - 1] if i > 0 else None
            cs = tuple(_field_changes(fid, prev, v, i > 0))
            changes.append(cs)
            per_schema_changes[i].extend(cs)
        histories.append(FieldHistory(fid, versions, tuple(changes), current))

    for i in range(1, len(schemas)):
        moved = _moved(schemas[i - 1], schemas[i])
        per_schema_changes[i].extend(moved)
        if schemas[i - 1].identifier_field_ids != schemas[i].identifier_field_ids:
            names = ", ".join(schemas[i].identifier_field_names) or "none"
            per_schema_changes[i].append(FieldChange(None, IDENTIFIER,
                                                     f"identifier fields: {names}"))
    moved_by_field: dict[tuple[int, int], list[FieldChange]] = {}
    for i, schema_changes in enumerate(per_schema_changes):
        for c in schema_changes:
            if c.kind == MOVED and c.field_id is not None:
                moved_by_field.setdefault((c.field_id, i), []).append(c)
    if moved_by_field:
        histories = [FieldHistory(h.field_id, h.versions, tuple(
            own + tuple(moved_by_field.get((h.field_id, i), ()))
            for i, own in enumerate(h.changes)), current) for h in histories]

    by_schema: dict[int, list[int]] = {}
    unknown = 0
    known_ids = {s.schema_id for s in schemas}
    for snap_id, schema_id in _snapshot_schema_ids(metadata):
        if schema_id is None or schema_id not in known_ids:
            unknown += 1
        else:
            by_schema.setdefault(schema_id, []).append(snap_id)
    schema_versions = tuple(
        SchemaVersion(s, s.schema_id == metadata.current_schema_id,
                      len(by_schema.get(s.schema_id, ())), tuple(by_schema.get(s.schema_id, ())),
                      tuple(per_schema_changes[i]))
        for i, s in enumerate(schemas))
    return SchemaHistory(metadata, schema_versions, tuple(histories), metadata.current_schema_id,
                         unknown)


# --------------------------------------------------------------------------- partition specs


@safe_repr
@dataclass(frozen=True)
class PartitionFieldVersion:
    """A partition field as one spec has it, with its source columns resolved to names."""

    field_id: int
    name: str
    transform: str
    source_ids: tuple[int, ...]
    source_names: tuple[str, ...]  # "<id N>" when no schema has the source id

    @property
    def source(self) -> str:
        return ", ".join(self.source_names)

    @property
    def term(self) -> str:
        """``month(ts)``, ``bucket[8](id)``, ``id`` for identity."""
        if self.transform == "identity":
            return self.source
        return f"{self.transform}({self.source})"


@safe_repr
@dataclass(frozen=True)
class PartitionFieldHistory:
    """One partition field id across all specs (aligned with :attr:`SpecHistory.specs`)."""

    field_id: int
    versions: tuple[PartitionFieldVersion | None, ...]
    changes: tuple[tuple[FieldChange, ...], ...]
    current_index: int = -1  # the default spec's index in ``versions``

    @property
    def latest(self) -> PartitionFieldVersion:
        """The field in the default spec, else in the last spec that has it."""
        cur = self.versions[self.current_index] if self.versions else None
        return cur or next(v for v in reversed(self.versions) if v is not None)

    @property
    def removed(self) -> bool:
        """Whether the default spec (new data's spec, not the last one listed: an old spec
        can be made default again) lacks the field or has made it void (spec: "Partition
        Evolution")."""
        cur = self.versions[self.current_index]
        return cur is None or cur.transform == "void"

    def kinds(self) -> set[str]:
        return {c.kind for cs in self.changes for c in cs}


@safe_repr
@dataclass(frozen=True)
class SpecUsage:
    """Live files and rows written with one spec in a snapshot, from its manifest list.

    Counts are None when a manifest list does not record them (optional in v1).
    ``delete_records`` counts the rows the delete files hold (positions or equality keys).
    """

    spec_id: int
    data_manifests: int
    delete_manifests: int
    data_files: int | None
    data_records: int | None
    delete_files: int | None
    delete_records: int | None


@safe_repr
@dataclass(frozen=True)
class SpecVersion:
    """One partition spec: its fields, whether it is the default, what it changed."""

    spec: PartitionSpec
    is_default: bool
    fields: tuple[PartitionFieldVersion, ...]
    changes: tuple[FieldChange, ...]
    usage: SpecUsage | None  # None: no file of the chosen snapshot uses it

    @property
    def spec_id(self) -> int:
        return self.spec.spec_id


@dataclass(frozen=True)
class SpecHistory:
    """Every partition spec in metadata order, partition fields by id, and which live files of
    ``snapshot_id`` use which spec (spec: "Partition Evolution", "Manifest Lists")."""

    metadata: TableMetadata
    specs: tuple[SpecVersion, ...]
    fields: tuple[PartitionFieldHistory, ...]
    default_spec_id: int
    snapshot_id: int | None
    unknown_spec_usage: tuple[SpecUsage, ...]  # manifests naming a spec id not in the metadata

    def spec(self, spec_id: int) -> SpecVersion:
        for s in self.specs:
            if s.spec_id == spec_id:
                return s
        raise KeyError(spec_id)

    def field(self, field_id: int) -> PartitionFieldHistory:
        for f in self.fields:
            if f.field_id == field_id:
                return f
        raise KeyError(field_id)

    def __len__(self) -> int:
        return len(self.specs)

    def __iter__(self) -> Iterator[SpecVersion]:
        return iter(self.specs)

    def __repr__(self) -> str:
        return (f"SpecHistory(specs={len(self.specs)}, fields={len(self.fields)}, "
                f"default_spec_id={self.default_spec_id}, snapshot_id={self.snapshot_id})")


def _source_name(metadata: TableMetadata, source_id: int) -> str:
    """The source column's name in the current schema, else in the newest schema having it."""
    name = metadata.schema.column_name(source_id)
    if name is not None:
        return name
    for s in reversed(metadata.schemas):
        name = s.column_name(source_id)
        if name is not None:
            return name
    return f"<id {source_id}>"


def _partition_field(metadata: TableMetadata, pf: PartitionField) -> PartitionFieldVersion:
    return PartitionFieldVersion(pf.field_id, pf.name, str(pf.transform), pf.source_ids,
                                 tuple(_source_name(metadata, i) for i in pf.source_ids))


def _spec_changes(fid: int, before: PartitionFieldVersion | None,
                  after: PartitionFieldVersion | None, has_before: bool) -> list[FieldChange]:
    if after is None:
        return [] if before is None else [FieldChange(fid, DROPPED, f"- {before.name}")]
    if before is None:
        return [FieldChange(fid, ADDED, f"+ {after.name} {after.term}")] if has_before else []
    out: list[FieldChange] = []
    if before.name != after.name:
        out.append(FieldChange(fid, RENAMED, f"{before.name} -> {after.name}"))
    if before.transform != after.transform:
        kind = VOIDED if after.transform == "void" else TRANSFORM
        out.append(FieldChange(fid, kind, f"{after.name} {before.transform} -> "
                                          f"{after.transform}"))
    return out


def _v4_usage(io: FileIO, metadata: TableMetadata, snapshot: Snapshot) -> dict[int, SpecUsage]:
    """Per spec id of a v4 snapshot: its root's live leaves, and the live files and rows of
    the root and those leaves, manifest DVs applied (docs/v4-layout.md#inspect)."""
    got = snapshot_entries(io, metadata, snapshot, cache=shared_manifest_cache(io))
    acc: dict[int, list[int]] = {}
    for e in got.leaves:
        a = acc.setdefault(e.partition_spec_id, [0, 0, 0, 0, 0, 0])
        a[0 if e.content_type == ContentType.DATA_MANIFEST else 1] += 1
    entries = got.entries
    data_file = entries.column("data_file")
    for spec, status, content, records in zip(
            entries.column("partition_spec_id").to_pylist(),
            entries.column("status").to_pylist(),
            pc.struct_field(data_file, "content").to_pylist(),
            pc.struct_field(data_file, "record_count").to_pylist(), strict=True):
        if status == int(EntryStatus.DELETED):
            continue
        a = acc.setdefault(int(spec), [0, 0, 0, 0, 0, 0])
        base = 2 if int(content) == int(FileContent.DATA) else 4
        a[base] += 1
        a[base + 1] += int(records or 0)
    return {sid: SpecUsage(sid, *a) for sid, a in sorted(acc.items())}


def _usage(io: FileIO, metadata: TableMetadata, snapshot: Snapshot) -> dict[int, SpecUsage]:
    """Files and rows per spec id from the snapshot's manifest list (the one read allowed)."""
    if snapshot.root_manifest is not None:
        return _v4_usage(io, metadata, snapshot)
    table = read_manifest_list_table(io, snapshot, metadata.format_version,
                                     cache=shared_manifest_cache(io))
    cols: Mapping[str, list[Any]] = {
        name: (table.column(name).to_pylist() if name in table.column_names
               else [None] * table.num_rows)
        for name in ("partition_spec_id", "content", "added_files_count",
                     "existing_files_count", "added_rows_count", "existing_rows_count")}
    acc: dict[int, list[Any]] = {}
    for i in range(table.num_rows):
        sid = int(cols["partition_spec_id"][i] or 0)
        is_delete = int(cols["content"][i] or 0) != 0
        a = acc.setdefault(sid, [0, 0, 0, 0, 0, 0])
        a[1 if is_delete else 0] += 1
        files = _sum2(cols["added_files_count"][i], cols["existing_files_count"][i])
        rows = _sum2(cols["added_rows_count"][i], cols["existing_rows_count"][i])
        base = 4 if is_delete else 2
        a[base] = None if a[base] is None or files is None else a[base] + files
        a[base + 1] = None if a[base + 1] is None or rows is None else a[base + 1] + rows
    return {sid: SpecUsage(sid, a[0], a[1], a[2], a[3], a[4], a[5])
            for sid, a in sorted(acc.items())}


def _sum2(a: Any, b: Any) -> int | None:
    return None if a is None or b is None else int(a) + int(b)


def spec_history(metadata: TableMetadata, io: FileIO,
                 snapshot: int | str | None = None) -> SpecHistory:
    """Every partition spec, partition fields by id, and per-spec file usage in ``snapshot``
    (default: the current one; no usage when the table has no snapshot)."""
    specs = tuple(metadata.partition_specs)
    versions_by_spec = [tuple(_partition_field(metadata, pf) for pf in s.fields) for s in specs]
    order: list[int] = []
    for vs in versions_by_spec:
        for v in vs:
            if v.field_id not in order:
                order.append(v.field_id)
    per_spec: list[list[FieldChange]] = [[] for _ in specs]
    histories: list[PartitionFieldHistory] = []
    current = next((i for i, s in enumerate(specs)
                    if s.spec_id == metadata.default_spec_id), -1)
    for fid in order:
        pversions = tuple(next((v for v in vs if v.field_id == fid), None)
                          for vs in versions_by_spec)
        pchanges: list[tuple[FieldChange, ...]] = []
        for i, pv in enumerate(pversions):
            pcs = tuple(_spec_changes(fid, pversions[i - 1] if i else None, pv, i > 0))
            pchanges.append(pcs)
            per_spec[i].extend(pcs)
        histories.append(PartitionFieldHistory(fid, pversions, tuple(pchanges), current))

    snap: Snapshot | None = None
    if snapshot is not None or metadata.current_snapshot() is not None:
        snap = resolve_snapshot(metadata, snapshot)
    usage = _usage(io, metadata, snap) if snap is not None else {}
    known = {s.spec_id for s in specs}
    out = tuple(SpecVersion(s, s.spec_id == metadata.default_spec_id, versions_by_spec[i],
                            tuple(per_spec[i]), usage.get(s.spec_id))
                for i, s in enumerate(specs))
    return SpecHistory(metadata, out, tuple(histories), metadata.default_spec_id,
                       None if snap is None else snap.snapshot_id,
                       tuple(u for sid, u in usage.items() if sid not in known))
