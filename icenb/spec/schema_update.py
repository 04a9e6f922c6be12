"""Schema evolution as a pure builder: queue changes, then ``apply()`` a new :class:`Schema`.

Spec sections: "Schema Evolution" (add, delete, rename, reorder, type promotion; no regrouping),
"Default values" (``initial-default`` / ``write-default``, v3), "Identifier Field IDs" and
"Reserved Field IDs". The rules the spec leaves to implementations follow the reference
implementation (Iceberg Java 1.10 ``SchemaUpdate``): e.g. a column may be deleted and a new one
added under the same name in one update, renamed or retyped columns cannot also be deleted, and
added columns cannot be renamed (add them under the wanted name instead).

Example::

    u = SchemaUpdate(schema, last_column_id=5, format_version=3)
    u.add_column("score", "double").rename_column("kind", "category")
    new_schema, last_column_id = u.apply()

Every method checks its request at once and raises :class:`~icenb.errors.ValidationError`
naming the column and value; ``apply()`` checks the whole result. The builder never changes the
input schema: a failed update leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import (
    MAX_FIELD_ID,
    Schema,
    is_promotion_allowed,
    reserved_field_id_error,
)
from icenb.spec.sort_order import SortOrder
from icenb.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
    check_new_type,
    min_format_version,
    parse_type_string,
)

__all__ = ["SchemaUpdate", "check_schema_sources"]

_ROOT = -1  # the parent id of top-level columns
#: First format version with default values (spec: "Default values", Appendix E).
DEFAULTS_MIN_FORMAT_VERSION = 3


@safe_repr
@dataclass(frozen=True)
class _Move:
    field_id: int
    kind: str  # "first", "before", "after"
    reference_id: int | None = None


def _as_type(value: IcebergType | str, path: str) -> IcebergType:
    if isinstance(value, IcebergType):
        check_new_type(value, field=path)
        return value
    if isinstance(value, str):
        t = parse_type_string(value, field=path)
        check_new_type(t, field=path)
        return t
    raise ValidationError("a column type must be an IcebergType or a type string", field=path,
                          value=value)


def _split(path: str | Sequence[str]) -> tuple[str | None, str]:
    """(parent path or None, leaf name); a sequence gives names that may contain dots."""
    if isinstance(path, str):
        if not path:
            raise ValidationError("a column name must not be empty", field="name", value=path)
        parent, _, name = path.rpartition(".")
        return (parent or None), name
    parts = list(path)
    if not parts or not all(isinstance(p, str) and p for p in parts):
        raise ValidationError("a column path must be non-empty names", field="name", value=path)
    return (".".join(parts[:-1]) or None), parts[-1]


class SchemaUpdate:
    """Pending changes to ``schema``; nothing happens until :meth:`apply`.

    ``last_column_id`` is the table's ``last-column-id``: added columns (and the fields nested in
    their types) get ``last_column_id + 1``, ``+ 2``, ... in the order the reference
    implementation assigns them. ``format_version`` gates v3 features (defaults, v3 types).
    ``allow_incompatible_changes`` permits changes that break reading existing data or writers
    (requiring an optional column, adding a required column without an initial default).
    """

    def __init__(
        self,
        schema: Schema,
        last_column_id: int,
        *,
        format_version: int,
        case_sensitive: bool = True,
        allow_incompatible_changes: bool = False,
    ) -> None:
        if format_version not in (1, 2, 3, 4):
            raise ValidationError("unsupported table format version", field="format-version",
                                  value=format_version)
        self._schema = schema
        self._format_version = format_version
        self._case_sensitive = case_sensitive
        self._allow_incompatible = allow_incompatible_changes
        self._last_column_id = max(last_column_id, schema.highest_field_id)
        self._parents: dict[int, int] = {}
        for fid in schema.field_ids():
            parent = schema.parent_id(fid)
            if parent is not None:
                self._parents[fid] = parent
        self._deletes: set[int] = set()
        self._updates: dict[int, NestedField] = {}  # existing or added field id -> new field
        self._added: dict[int, list[int]] = {}  # parent id (or _ROOT) -> added field ids
        self._added_names: dict[str, int] = {}  # full name (lower-cased if insensitive) -> id
        self._moves: dict[int, list[_Move]] = {}
        self._identifier_names: list[str] = list(schema.identifier_field_names)

    # ------------------------------------------------------------------ properties
    @property
    def schema(self) -> Schema:
        """The schema being evolved (unchanged)."""
        return self._schema

    @property
    def last_column_id(self) -> int:
        """The last assigned column id so far (grows with each added column)."""
        return self._last_column_id

    def allow_incompatible_changes(self) -> SchemaUpdate:
        """Permit incompatible changes (as the reference implementation's option)."""
        self._allow_incompatible = True
        return self

    # ------------------------------------------------------------------ lookups
    def _key(self, name: str) -> str:
        return name if self._case_sensitive else name.lower()

    def _find(self, name: str) -> NestedField | None:
        """An existing column of the original schema by (dotted) name."""
        return self._schema.field_by_name(name, self._case_sensitive)

    def _require(self, name: str, action: str) -> NestedField:
        f = self._find(name)
        if f is None:
            raise ValidationError(f"cannot {action} missing column", field=name)
        return f

    def _find_for_update(self, name: str, action: str) -> NestedField:
        """The pending state of an existing or added column."""
        f = self._find(name)
        if f is not None:
            return self._updates.get(f.field_id, f)
        added = self._added_names.get(self._key(name))
        if added is not None:
            return self._updates[added]
        raise ValidationError(f"cannot {action} missing column", field=name)

    def _find_for_move(self, name: str) -> int | None:
        added = self._added_names.get(self._key(name))
        if added is not None:
            return added
        f = self._find(name)
        return None if f is None else f.field_id

    def _column_name(self, field_id: int) -> str:
        name = self._schema.column_name(field_id)
        if name is not None:
            return name
        for added_name, fid in self._added_names.items():
            if fid == field_id:
                return added_name
        return str(field_id)

    def _is_added(self, field_id: int) -> bool:
        return field_id in self._added_names.values()

    def _check_not_deleted(self, f: NestedField, name: str, action: str) -> None:
        if f.field_id in self._deletes:
            raise ValidationError(f"cannot {action} a column that will be deleted", field=name)

    def _check_not_key(self, f: NestedField, name: str, action: str) -> None:
        """Map keys cannot change (spec: Nested Types, keys are required and fixed)."""
        parent_id = self._parents.get(f.field_id)
        if parent_id is None:
            return
        parent = self._schema.field_by_id(parent_id)
        if parent is not None and isinstance(parent.field_type, MapType) \
                and parent.field_type.key_id == f.field_id:
            raise ValidationError(f"cannot {action} a map key", field=name)

    def _container_child(self, f: NestedField) -> bool:
        """Whether ``f`` is a list element or map key/value (not a struct field)."""
        parent_id = self._parents.get(f.field_id)
        if parent_id is None:
            return False
        parent = self._schema.field_by_id(parent_id)
        return parent is not None and isinstance(parent.field_type, (ListType, MapType))

    # ------------------------------------------------------------------ defaults
    def _default(self, t: IcebergType, value: Any, path: str, which: str) -> Any:
        """``value`` as a valid default of type ``t`` (spec: "Default values")."""
        if value is None:
            return None
        # Appendix E: a write-default is forward compatible (only writers use it), so like the
        # reference implementation only a non-null initial-default needs v3.
        if which == "initial-default" and self._format_version < DEFAULTS_MIN_FORMAT_VERSION:
            raise ValidationError(
                f"non-null {which} is not supported until v{DEFAULTS_MIN_FORMAT_VERSION} "
                "(spec: Default values)", field=path, value=value,
            )
        if not isinstance(t, PrimitiveType):
            raise UnsupportedFeature(f"a {which} for a nested type is not supported", field=path,
                                     value=value)
        if isinstance(t, UnknownType):
            raise ValidationError(f"a column of type unknown cannot have a non-null {which}",
                                  field=path, value=value)
        try:
            return values.coerce(t, value, field=path)
        except IcebergError as e:
            raise ValidationError(f"invalid {which} for type {t}: {e.message}", field=path,
                                  value=value) from None

    def _check_type_version(self, t: IcebergType, path: str) -> None:
        needed = min_format_version(t)
        if needed > self._format_version:
            raise ValidationError(
                f"type {t} is not supported until v{needed} (spec: Primitive Types)",
                field=path, value=str(t),
            )

    # ------------------------------------------------------------------ fresh ids
    def _next_id(self) -> int:
        self._last_column_id += 1
        if self._last_column_id > MAX_FIELD_ID:
            raise reserved_field_id_error(self._last_column_id, "last-column-id",
                                          "the next new field")
        return self._last_column_id

    def _fresh(self, t: IcebergType, path: str) -> IcebergType:
        """``t`` with new ids: a struct's own fields first, then their children (as Java)."""
        if isinstance(t, StructType):
            ids = [self._next_id() for _ in t.fields]
            return StructType(*(
                self._fresh_field(f, fid, f"{path}.{f.name}")
                for f, fid in zip(t.fields, ids, strict=True)
            ))
        if isinstance(t, ListType):
            element_id = self._next_id()
            return ListType(element_id, self._fresh(t.element_type, f"{path}.element"),
                            t.element_required)
        if isinstance(t, MapType):
            key_id = self._next_id()
            value_id = self._next_id()
            key_type = self._fresh(t.key_type, f"{path}.key")
            return MapType(key_id, key_type, value_id,
                           self._fresh(t.value_type, f"{path}.value"), t.value_required)
        self._check_type_version(t, path)
        return t

    def _fresh_field(self, f: NestedField, field_id: int, path: str) -> NestedField:
        t = self._fresh(f.field_type, path)
        if isinstance(t, UnknownType) and f.required:
            raise ValidationError("a column of type unknown must be optional", field=path)
        return NestedField(field_id, f.name, t, f.required, f.doc,
                           self._default(t, f.initial_default, path, "initial-default"),
                           self._default(t, f.write_default, path, "write-default"))

    # ------------------------------------------------------------------ changes
    def add_column(
        self,
        path: str | Sequence[str],
        field_type: IcebergType | str,
        doc: str | None = None,
        required: bool = False,
        initial_default: Any = None,
        write_default: Any = None,
    ) -> SchemaUpdate:
        """Add a column; ``path`` is ``"name"`` or ``"parent.name"`` (a list's ``"l.element"``
        or a map's ``"m.value"`` struct, or the list/map itself), or a sequence of names.

        Spec "Schema Evolution" / "Default values": new ids for the column and its nested
        fields; ``write_default`` defaults to ``initial_default``; a required column needs a
        non-null ``initial_default`` (v3) unless incompatible changes are allowed.
        """
        parent_path, name = _split(path)
        full = name
        parent_id = _ROOT
        if parent_path is not None:
            parent = self._find(parent_path)
            if parent is None:
                raise ValidationError("cannot find parent struct", field=parent_path)
            container = parent
            if isinstance(parent.field_type, MapType):
                container = parent.field_type.value_field
            elif isinstance(parent.field_type, ListType):
                container = parent.field_type.element_field
            if not isinstance(container.field_type, StructType):
                raise ValidationError("cannot add to a column that is not a struct",
                                      field=parent_path, value=str(container.field_type))
            if container.field_id in self._deletes or parent.field_id in self._deletes:
                raise ValidationError("cannot add to a column that will be deleted",
                                      field=parent_path)
            parent_id = container.field_id
            full = f"{self._schema.column_name(parent_id)}.{name}"
            existing = container.field_type.field_by_name(name, self._case_sensitive)
        else:
            existing = self._schema.struct.field_by_name(name, self._case_sensitive)
        if existing is not None and existing.field_id not in self._deletes:
            raise ValidationError("cannot add column, name already exists", field=full)
        if self._key(full) in self._added_names:
            raise ValidationError("cannot add column, it is already being added", field=full)
        t = _as_type(field_type, full)
        if required and initial_default is None and not self._allow_incompatible:
            raise ValidationError(
                "incompatible change: cannot add a required column without an initial default "
                "(spec: Default values)", field=full,
            )
        if write_default is None:
            write_default = initial_default
        last = self._last_column_id
        try:
            field_id = self._next_id()
            new = self._fresh_field(
                NestedField(field_id, name, t, required, doc, initial_default, write_default),
                field_id, full,
            )
        except IcebergError:
            self._last_column_id = last  # nothing partially applied
            raise
        self._added_names[self._key(full)] = field_id
        if parent_id != _ROOT:
            self._parents[field_id] = parent_id
        self._updates[field_id] = new
        self._added.setdefault(parent_id, []).append(field_id)
        return self

    def delete_column(self, name: str) -> SchemaUpdate:
        """Delete a column (and everything nested in it). Spec: "Schema Evolution"."""
        f = self._require(name, "delete")
        if f.field_id in self._added:
            raise ValidationError("cannot delete a column that has additions", field=name)
        if f.field_id in self._updates:
            raise ValidationError("cannot delete a column that has updates", field=name)
        if self._container_child(f):
            raise ValidationError("cannot delete a list element or a map key or value",
                                  field=name)
        for moves in self._moves.values():
            for m in moves:
                if f.field_id in (m.field_id, m.reference_id):
                    raise ValidationError("cannot delete a column that is moved or used as a "
                                          "move reference", field=name)
        self._deletes.add(f.field_id)
        return self

    def rename_column(self, name: str, new_name: str) -> SchemaUpdate:
        """Rename an existing column; its id stays. Spec: "Schema Evolution"."""
        f = self._require(name, "rename")
        if not isinstance(new_name, str) or not new_name:
            raise ValidationError("a column cannot be renamed to an empty name", field=name,
                                  value=new_name)
        self._check_not_deleted(f, name, "rename")
        if self._container_child(f):
            raise ValidationError("cannot rename a list element or a map key or value",
                                  field=name, value=new_name)
        current = self._updates.get(f.field_id, f)
        self._updates[f.field_id] = replace(current, name=new_name)
        full = self._schema.column_name(f.field_id) or name
        parent = full.rpartition(".")[0]
        renamed = f"{parent}.{new_name}" if parent else new_name
        self._identifier_names = [renamed if ident in (name, full) else ident
                                  for ident in self._identifier_names]
        return self

    def _requirement(self, name: str, required: bool) -> None:
        f = self._find_for_update(name, "update")
        if f.required == required:
            return
        self._check_not_key(f, name, "update")
        if required:
            defaulted_add = self._is_added(f.field_id) and f.initial_default is not None
            if not (defaulted_add or self._allow_incompatible):
                raise ValidationError(
                    "incompatible change: cannot make an optional column required "
                    "(existing rows may hold nulls)", field=name,
                )
        self._check_not_deleted(f, name, "update")
        self._updates[f.field_id] = replace(f, required=required)

    def make_column_optional(self, name: str) -> SchemaUpdate:
        """Allow nulls in a column, list element or map value (always compatible)."""
        self._requirement(name, False)
        return self

    def require_column(self, name: str) -> SchemaUpdate:
        """Make a column required: incompatible unless it is being added with a default."""
        self._requirement(name, True)
        return self

    def update_column(self, name: str, new_type: IcebergType | str | None = None, *,
                      doc: str | None = None) -> SchemaUpdate:
        """Promote a primitive column's type and/or set its doc.

        Spec "Schema Evolution", valid type promotions: int -> long, float -> double,
        decimal(P, S) -> decimal(P', S) with P' > P (the reference implementation allows no
        other, also not in v3).
        """
        f = self._find_for_update(name, "update")
        self._check_not_deleted(f, name, "update")
        self._check_not_key(f, name, "update")
        updated = f
        if new_type is not None:
            t = _as_type(new_type, name)
            if t != f.field_type:
                if not isinstance(t, PrimitiveType) or not isinstance(f.field_type, PrimitiveType):
                    raise ValidationError("only primitive columns can change type", field=name,
                                          value=f"{f.field_type} -> {t}")
                if not is_promotion_allowed(f.field_type, t, format_version=2):
                    raise ValidationError(
                        "cannot change column type (valid promotions: int -> long, float -> "
                        "double, decimal(P, S) -> decimal(P', S) with P' > P)", field=name,
                        value=f"{f.field_type} -> {t}",
                    )
                updated = replace(updated, field_type=t)
        if doc is not None and doc != f.doc:
            updated = replace(updated, doc=doc)
        if updated is not f:
            self._updates[f.field_id] = updated
        return self

    def update_column_doc(self, name: str, doc: str | None) -> SchemaUpdate:
        """Set (or with None: remove) a column's doc string."""
        f = self._find_for_update(name, "update")
        self._check_not_deleted(f, name, "update")
        if f.doc != doc:
            self._updates[f.field_id] = replace(f, doc=doc)
        return self

    def update_column_default(self, name: str, write_default: Any) -> SchemaUpdate:
        """Change a column's ``write-default`` (the ``initial-default`` never changes).

        Spec: "Default values" (the value must be valid for the column's type); Appendix E: a
        write-default is forward compatible, so it is allowed before v3 (as Java does).
        """
        f = self._find_for_update(name, "update")
        self._check_not_deleted(f, name, "update")
        value = self._default(f.field_type, write_default, name, "write-default")
        if value != f.write_default or type(value) is not type(f.write_default):
            self._updates[f.field_id] = replace(f, write_default=value)
        return self

    # -- moves
    def _move(self, name: str, move: _Move) -> None:
        parent_id = self._parents.get(move.field_id)
        if parent_id is not None:
            parent = self._schema.field_by_id(parent_id)
            if parent is not None and not isinstance(parent.field_type, StructType):
                raise ValidationError("cannot move fields in a list or map", field=name,
                                      value=str(parent.field_type))
        if move.reference_id is not None \
                and self._parents.get(move.reference_id) != parent_id:
            raise ValidationError("cannot move a field to a different struct", field=name,
                                  value=self._column_name(move.reference_id))
        for fid in (move.field_id, move.reference_id):
            if fid is not None and fid in self._deletes:
                raise ValidationError("cannot move a column that will be deleted (or next to "
                                      "one)", field=self._column_name(fid))
        self._moves.setdefault(_ROOT if parent_id is None else parent_id, []).append(move)

    def _move_ids(self, name: str, other: str | None, where: str) -> tuple[int, int | None]:
        fid = self._find_for_move(name)
        if fid is None:
            raise ValidationError("cannot move missing column", field=name)
        if other is None:
            return fid, None
        ref = self._find_for_move(other)
        if ref is None:
            raise ValidationError(f"cannot move {name} {where} missing column", field=other)
        if ref == fid:
            raise ValidationError(f"cannot move a column {where} itself", field=name)
        return fid, ref

    def move_first(self, name: str) -> SchemaUpdate:
        """Move a column to the start of its struct. Spec: "Schema Evolution" (reordering)."""
        fid, _ = self._move_ids(name, None, "first")
        self._move(name, _Move(fid, "first"))
        return self

    def move_before(self, name: str, before: str) -> SchemaUpdate:
        """Move a column just before another column of the same struct."""
        fid, ref = self._move_ids(name, before, "before")
        self._move(name, _Move(fid, "before", ref))
        return self

    def move_after(self, name: str, after: str) -> SchemaUpdate:
        """Move a column just after another column of the same struct."""
        fid, ref = self._move_ids(name, after, "after")
        self._move(name, _Move(fid, "after", ref))
        return self

    def set_identifier_fields(self, names: Iterable[str]) -> SchemaUpdate:
        """Replace the identifier fields by names in the *evolved* schema.

        Checked in :meth:`apply` (spec "Identifier Field IDs": required primitive columns, not
        float or double, not inside a list, map or optional struct).
        """
        if isinstance(names, str):
            names = [names]
        self._identifier_names = list(dict.fromkeys(names))
        return self

    # ------------------------------------------------------------------ apply
    def apply(self, *, schema_id: int | None = None) -> tuple[Schema, int]:
        """The evolved schema and the new ``last-column-id``.

        Without changes the input schema is returned as is. Otherwise the new schema gets
        ``schema_id`` (default: the input's id + 1; a table re-numbers it or reuses the id of an
        equal earlier schema).
        """
        self._check_identifier_deletes()
        fields = self._struct_fields(self._schema.fields, _ROOT)
        try:
            draft = Schema(*fields, schema_id=self._schema.schema_id)
        except ValidationError as e:
            raise ValidationError(f"invalid schema after update: {e.message}", field=e.field,
                                  **({"value": e.value} if e.has_value else {})) from None
        ident: list[int] = []
        for name in self._identifier_names:
            fid = draft.find_field_id(name, self._case_sensitive)
            if fid is None:
                raise ValidationError("identifier field not found in the evolved schema",
                                      field=name)
            ident.append(fid)
        new_id = self._schema.schema_id + 1 if schema_id is None else schema_id
        try:
            result = Schema(*fields, schema_id=new_id, identifier_field_ids=tuple(ident))
        except ValidationError as e:
            raise ValidationError(f"invalid identifier field: {e.message}", field=e.field,
                                  **({"value": e.value} if e.has_value else {})) from None
        if result.same_schema(self._schema) \
                and result.identifier_field_ids == self._schema.identifier_field_ids:
            return self._schema, self._last_column_id
        return result, self._last_column_id

    def _check_identifier_deletes(self) -> None:
        """Spec "Identifier Field IDs": an identifier field (or its struct) cannot be deleted
        unless the identifier fields are replaced too."""
        for name in self._identifier_names:
            f = self._find(name)
            if f is None:
                continue
            if f.field_id in self._deletes:
                raise ValidationError("cannot delete an identifier field (set new identifier "
                                      "fields to drop it)", field=name)
            for parent in self._schema.ancestors(f.field_id):
                if parent.field_id in self._deletes:
                    raise ValidationError(
                        f"cannot delete {self._column_name(parent.field_id)}: it contains "
                        "identifier field " + name, field=self._column_name(parent.field_id),
                    )

    def _struct_fields(self, fields: tuple[NestedField, ...], parent_id: int
                       ) -> list[NestedField]:
        out = [self._field(f) for f in fields if f.field_id not in self._deletes]
        out.extend(self._updates[i] for i in self._added.get(parent_id, []))
        for move in self._moves.get(parent_id, []):
            moving = next(f for f in out if f.field_id == move.field_id)
            out.remove(moving)
            if move.kind == "first":
                out.insert(0, moving)
            else:
                at = next(i for i, f in enumerate(out) if f.field_id == move.reference_id)
                out.insert(at if move.kind == "before" else at + 1, moving)
        return out

    def _field(self, f: NestedField) -> NestedField:
        update = self._updates.get(f.field_id, f)
        t = update.field_type if isinstance(update.field_type, PrimitiveType) \
            else self._type(f.field_type, f.field_id)
        if update is f and t is f.field_type:
            return f
        return replace(update, field_type=t)

    def _type(self, t: IcebergType, field_id: int) -> IcebergType:
        if isinstance(t, StructType):
            return StructType(*self._struct_fields(t.fields, field_id))
        if isinstance(t, ListType):
            element = self._field(t.element_field)
            return ListType(t.element_id, element.field_type, element.required)
        if isinstance(t, MapType):
            value = self._field(t.value_field)
            return MapType(t.key_id, t.key_type, t.value_id, value.field_type, value.required)
        return t


def check_schema_sources(
    schema: Schema,
    spec: PartitionSpec | None = None,
    sort_order: SortOrder | None = None,
) -> None:
    """Check that every source column of ``spec`` and ``sort_order`` is still in ``schema``.

    The table-level rule behind deleting a column (the reference implementation refuses a new
    schema that drops a source of the default spec or sort order): void partition fields are
    exempt, as they read no column. Raises ``ValidationError`` naming the field and the id.
    """
    if spec is not None:
        for pf in spec.fields:
            if pf.is_void:
                continue
            for sid in pf.source_ids:
                if schema.field_by_id(sid) is None:
                    raise ValidationError(
                        f"cannot delete column {sid}: partition field {pf.name} of spec "
                        f"{spec.spec_id} reads it", field=pf.name, value=sid,
                    )
    if sort_order is not None:
        for i, sf in enumerate(sort_order.fields):
            for sid in sf.source_ids:
                if schema.field_by_id(sid) is None:
                    raise ValidationError(
                        f"cannot delete column {sid}: sort field {i} of sort order "
                        f"{sort_order.order_id} reads it", field=f"sort field {i} ({sf})",
                        value=sid,
                    )

