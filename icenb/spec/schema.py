"""Schemas: the table's struct of columns, field lookup, identifier fields, JSON (Appendix C).

Spec sections: "Schemas and Data Types", "Identifier Field IDs", "Schema Evolution" (type
promotion), Appendix C "Schemas".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from icenb.errors import IcebergError, InvalidMetadata, ValidationError
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    as_object,
    field_path,
    int_value,
    invalid,
    json_list,
    opt_int,
    opt_str,
    req_bool,
    req_int,
    req_str,
)
from icenb.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    NestedType,
    PrimitiveType,
    StructType,
    TimestampNanoType,
    TimestampType,
    UnknownType,
    parse_type_string,
)

__all__ = [
    "MAX_FIELD_ID",
    "Schema",
    "field_from_json",
    "field_to_json",
    "is_promotion_allowed",
    "reserved_field_id_error",
    "schema_from_json",
    "schema_to_json",
    "type_from_json",
    "type_to_json",
]

#: Largest id a user field may have; larger ids are reserved for metadata columns.
#: Spec: "Reserved Field IDs" (Integer.MAX_VALUE - 200).
MAX_FIELD_ID = 2**31 - 1 - 200


def reserved_field_id_error(field_id: int, field: str, subject: str | None = None
                            ) -> ValidationError:
    """The refusal of an id a table may not use: above :data:`MAX_FIELD_ID` (spec: "Reserved
    Field IDs") or negative. ``subject`` says whose id it is (default: the field ``field``)."""
    who = subject or f"field {field!r}"
    if field_id < 0:
        return ValidationError(f"{who} has id {field_id}: field ids cannot be negative",
                               field=field, value=field_id)
    return ValidationError(
        f"{who} has id {field_id}, in the range {MAX_FIELD_ID + 1}..{2**31 - 1} (above "
        f"Integer.MAX_VALUE - 200) reserved for metadata columns such as _file and _pos "
        f"(spec: Reserved Field IDs)", field=field, value=field_id)


def is_promotion_allowed(source: IcebergType, target: IcebergType, format_version: int = 3) -> bool:
    """Whether a column of type ``source`` may evolve to ``target`` (spec: Schema Evolution).

    int -> long, float -> double, decimal(P, S) -> decimal(P', S) with P' >= P; with v3 also
    date -> timestamp/timestamp_ns and unknown -> any type. Equal types are always allowed.
    """
    if source == target:
        return True
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType):
        return (
            isinstance(target, DecimalType)
            and target.scale == source.scale
            and target.precision >= source.precision
        )
    if format_version >= 3:
        if isinstance(source, DateType):
            return isinstance(target, (TimestampType, TimestampNanoType))
        if isinstance(source, UnknownType):
            return True
    return False


@safe_repr
@dataclass(frozen=True, init=False, eq=False)
class Schema:
    """A table schema: a struct of columns plus ``schema_id`` and ``identifier_field_ids``."""

    fields: tuple[NestedField, ...]
    schema_id: int
    identifier_field_ids: tuple[int, ...]

    def __init__(
        self,
        *fields: NestedField,
        schema_id: int = 0,
        identifier_field_ids: tuple[int, ...] | list[int] = (),
    ) -> None:
        object.__setattr__(self, "fields", tuple(fields))
        object.__setattr__(self, "schema_id", schema_id)
        object.__setattr__(self, "identifier_field_ids", tuple(identifier_field_ids))
        self._validate()

    # -- equality: same columns and identifier fields (the schema id is a label) --
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Schema)
            and self.fields == other.fields
            and self.schema_id == other.schema_id
            and self.identifier_field_ids == other.identifier_field_ids
        )

    def __hash__(self) -> int:
        return hash((self.fields, self.schema_id, self.identifier_field_ids))

    def same_schema(self, other: Schema) -> bool:
        """Equal columns and identifier fields, ignoring ``schema_id`` (used to reuse ids)."""
        return (
            self.fields == other.fields
            and set(self.identifier_field_ids) == set(other.identifier_field_ids)
        )

    def __repr__(self) -> str:
        return f"Schema(schema_id={self.schema_id}, fields={len(self.fields)})"

    def __str__(self) -> str:
        lines = [f"schema {self.schema_id} {{"]
        lines.extend(f"  {f}" for f in self.fields)
        lines.append("}")
        return "\n".join(lines)

    def __iter__(self) -> Iterator[NestedField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @cached_property
    def struct(self) -> StructType:
        """The schema as a struct type."""
        return StructType(*self.fields)

    def as_struct(self) -> StructType:
        return self.struct

    # -- indexes --------------------------------------------------------------------
    @cached_property
    def _index(self) -> _SchemaIndex:
        return _SchemaIndex.build(self.fields)

    @property
    def highest_field_id(self) -> int:
        """The largest field id used anywhere in the schema (0 when empty)."""
        return max(self._index.by_id, default=0)

    def field_ids(self) -> frozenset[int]:
        return frozenset(self._index.by_id)

    def field_by_id(self, field_id: int) -> NestedField | None:
        """The field (at any depth) with ``field_id``, or None."""
        return self._index.by_id.get(field_id)

    def field_by_name(self, name: str, case_sensitive: bool = True) -> NestedField | None:
        """The field called ``name`` (dotted for nested fields), or None.

        Full names spell list elements and map keys/values (``points.element.x``,
        ``m.key``); the short forms without ``element``/``value`` work too when unambiguous.
        A case-insensitive lookup that matches two fields raises ``ValidationError``.
        """
        field_id = self.find_field_id(name, case_sensitive)
        return None if field_id is None else self._index.by_id[field_id]

    def find_field_id(self, name: str, case_sensitive: bool = True) -> int | None:
        index = self._index
        if case_sensitive:
            found = index.by_name.get(name)
            return found if found is not None else index.by_short_name.get(name)
        lowered = name.lower()
        ids = index.by_lower_name.get(lowered) or index.by_lower_short_name.get(lowered)
        if not ids:
            return None
        if len(ids) > 1:
            raise ValidationError(
                "ambiguous case-insensitive column name: it matches "
                + ", ".join(sorted(index.names[i] for i in ids)),
                field=name,
            )
        return next(iter(ids))

    def find_field(self, name_or_id: str | int, case_sensitive: bool = True) -> NestedField:
        """The field with this id or dotted name; ``ValidationError`` naming it when absent."""
        if isinstance(name_or_id, int):
            found = self.field_by_id(name_or_id)
        else:
            found = self.field_by_name(name_or_id, case_sensitive)
        if found is None:
            raise ValidationError(
                "no such field in schema " + str(self.schema_id), field=str(name_or_id)
            )
        return found

    def find_type(self, name_or_id: str | int, case_sensitive: bool = True) -> IcebergType:
        return self.find_field(name_or_id, case_sensitive).field_type

    def column_name(self, field_id: int) -> str | None:
        """The full dotted name of ``field_id`` (e.g. ``location.element.lat``), or None."""
        return self._index.names.get(field_id)

    def parent_id(self, field_id: int) -> int | None:
        """The id of the struct/list/map field containing ``field_id`` (None at top level)."""
        return self._index.parents.get(field_id)

    def ancestors(self, field_id: int) -> list[NestedField]:
        """Fields containing ``field_id``, outermost first."""
        out: list[NestedField] = []
        parent = self._index.parents.get(field_id)
        while parent is not None:
            out.append(self._index.by_id[parent])
            parent = self._index.parents.get(parent)
        out.reverse()
        return out

    @property
    def identifier_field_names(self) -> tuple[str, ...]:
        return tuple(self._index.names.get(i, str(i)) for i in self.identifier_field_ids)

    def select(self, *names: str, case_sensitive: bool = True) -> Schema:
        """A schema with only the named columns (and the structs that contain them)."""
        wanted: set[int] = set()
        for name in names:
            f = self.find_field(name, case_sensitive)
            wanted.add(f.field_id)
            wanted.update(p.field_id for p in self.ancestors(f.field_id))
            wanted.update(_all_ids(f.field_type))
        return Schema(
            *_prune_fields(self.fields, wanted),
            schema_id=self.schema_id,
            identifier_field_ids=tuple(i for i in self.identifier_field_ids if i in wanted),
        )

    # -- validation ------------------------------------------------------------------
    def _validate(self) -> None:
        seen: dict[int, str] = {}
        _check_ids(self.fields, "", seen)
        for fid in self.identifier_field_ids:
            self._validate_identifier_field(fid)

    def _validate_identifier_field(self, fid: int) -> None:
        """Spec: Identifier Field IDs (required primitive, not float/double, not in list/map)."""
        f = self.field_by_id(fid)
        if f is None:
            raise ValidationError("identifier field id is not in the schema",
                                  field="identifier-field-ids", value=fid)
        name = self.column_name(fid)
        if not isinstance(f.field_type, PrimitiveType):
            raise ValidationError("identifier field must be a primitive type",
                                  field=name, value=str(f.field_type))
        if isinstance(f.field_type, (FloatType, DoubleType)):
            raise ValidationError("identifier field cannot be float or double",
                                  field=name, value=str(f.field_type))
        if not f.required:
            raise ValidationError("identifier field must be required", field=name)
        for parent in self.ancestors(fid):
            if not isinstance(parent.field_type, StructType):
                raise ValidationError("identifier field cannot be nested in a list or map",
                                      field=name)
            if not parent.required:
                raise ValidationError("identifier field cannot be nested in an optional struct",
                                      field=name)


def _check_ids(fields: tuple[NestedField, ...], prefix: str, seen: dict[int, str]) -> None:
    names: set[str] = set()
    for f in fields:
        full = prefix + f.name
        if f.name in names:
            raise ValidationError("duplicate field name", field=full)
        names.add(f.name)
        if f.field_id in seen:
            raise ValidationError(
                f"field id {f.field_id} is used by both {seen[f.field_id]} and {full}",
                field=full, value=f.field_id,
            )
        seen[f.field_id] = full
        t = f.field_type
        if isinstance(t, NestedType):
            _check_ids(t.fields, full + ".", seen)


def _all_ids(t: IcebergType) -> set[int]:
    out: set[int] = set()
    if isinstance(t, NestedType):
        for f in t.fields:
            out.add(f.field_id)
            out |= _all_ids(f.field_type)
    return out


def _prune_fields(fields: tuple[NestedField, ...], wanted: set[int]) -> list[NestedField]:
    out: list[NestedField] = []
    for f in fields:
        if f.field_id not in wanted:
            continue
        t = f.field_type
        if isinstance(t, StructType):
            t = StructType(*_prune_fields(t.fields, wanted))
        elif isinstance(t, ListType) and isinstance(t.element_type, StructType):
            t = ListType(t.element_id,
                         StructType(*_prune_fields(t.element_type.fields, wanted)),
                         t.element_required)
        elif isinstance(t, MapType) and isinstance(t.value_type, StructType):
            t = MapType(t.key_id, t.key_type, t.value_id,
                        StructType(*_prune_fields(t.value_type.fields, wanted)),
                        t.value_required)
        out.append(NestedField(f.field_id, f.name, t, f.required, f.doc,
                               f.initial_default, f.write_default))
    return out


@safe_repr
@dataclass
class _SchemaIndex:
    by_id: dict[int, NestedField]
    names: dict[int, str]
    parents: dict[int, int]
    by_name: dict[str, int]
    by_short_name: dict[str, int]
    by_lower_name: dict[str, set[int]]
    by_lower_short_name: dict[str, set[int]]

    @classmethod
    def build(cls, fields: tuple[NestedField, ...]) -> _SchemaIndex:
        idx = cls({}, {}, {}, {}, {}, {}, {})
        idx._visit(fields, "", "", None)
        for name, fid in idx.by_name.items():
            idx.by_lower_name.setdefault(name.lower(), set()).add(fid)
        for name in list(idx.by_short_name):
            if name in idx.by_name:
                del idx.by_short_name[name]
        for name, fid in idx.by_short_name.items():
            if name.lower() not in idx.by_lower_name:
                idx.by_lower_short_name.setdefault(name.lower(), set()).add(fid)
        return idx

    def _visit(self, fields: tuple[NestedField, ...], prefix: str, short_prefix: str,
               parent: int | None) -> None:
        for f in fields:
            full = prefix + f.name
            short = short_prefix + f.name
            self.by_id[f.field_id] = f
            self.names[f.field_id] = full
            self.by_name[full] = f.field_id
            if short != full:
                self.by_short_name.setdefault(short, f.field_id)
            if parent is not None:
                self.parents[f.field_id] = parent
            t = f.field_type
            if isinstance(t, StructType):
                self._visit(t.fields, full + ".", short + ".", f.field_id)
            elif isinstance(t, ListType):
                self._visit_container(t.fields, full, short, f.field_id, skip=("element",))
            elif isinstance(t, MapType):
                self._visit_container(t.fields, full, short, f.field_id, skip=("value",))

    def _visit_container(self, fields: tuple[NestedField, ...], full: str, short: str,
                         parent: int, skip: tuple[str, ...]) -> None:
        for child in fields:
            child_full = f"{full}.{child.name}"
            # short form drops "element"/"value": points.element.x -> points.x
            child_short = short if child.name in skip else f"{short}.{child.name}"
            self.by_id[child.field_id] = child
            self.names[child.field_id] = child_full
            self.by_name[child_full] = child.field_id
            self.parents[child.field_id] = parent
            t = child.field_type
            if isinstance(t, StructType):
                self._visit(t.fields, child_full + ".", child_short + ".", child.field_id)
            elif isinstance(t, ListType):
                self._visit_container(t.fields, child_full, child_short, child.field_id,
                                      skip=("element",))
            elif isinstance(t, MapType):
                self._visit_container(t.fields, child_full, child_short, child.field_id,
                                      skip=("value",))


# --------------------------------------------------------------------------- JSON


def type_from_json(obj: Any, *, where: str = "type") -> IcebergType:
    """Parse an Appendix C type JSON (a string for primitives, an object for nested types)."""
    if isinstance(obj, str):
        try:
            return parse_type_string(obj, field=where)
        except IcebergError as e:
            raise InvalidMetadata(e.message, field=where, value=obj) from None
    if not isinstance(obj, Mapping):
        raise InvalidMetadata("a type must be a string or an object", field=where, value=obj)
    kind = obj.get("type")
    if kind == "struct":
        raw_fields = json_list(obj, "fields", where, required=True)
        return StructType(*(field_from_json(f, where=where) for f in raw_fields))
    if kind == "list":
        return ListType(
            req_int(obj, "element-id", where, bits=None),
            type_from_json(obj.get("element"), where=field_path(where, "element")),
            req_bool(obj, "element-required", where),
        )
    if kind == "map":
        return MapType(
            req_int(obj, "key-id", where, bits=None),
            type_from_json(obj.get("key"), where=field_path(where, "key")),
            req_int(obj, "value-id", where, bits=None),
            type_from_json(obj.get("value"), where=field_path(where, "value")),
            req_bool(obj, "value-required", where),
        )
    raise InvalidMetadata("unknown nested type", field=field_path(where, "type"), value=kind)


def field_from_json(obj: Any, *, where: str = "fields") -> NestedField:
    """Parse one struct field object (Appendix C), including its default values."""
    from icenb.spec import values  # values depend on types only; imported late to stay light

    obj = as_object(obj, where, "a struct field")
    name = req_str(obj, "name", where)
    path = field_path(where, name)
    field_id = req_int(obj, "id", path, bits=None)
    required = req_bool(obj, "required", path)
    field_type = type_from_json(obj.get("type"), where=field_path(path, "type"))
    doc = opt_str(obj, "doc", path)
    defaults: list[Any] = []
    for key in ("initial-default", "write-default"):
        raw = obj.get(key)
        if raw is None:
            defaults.append(None)
            continue
        try:
            defaults.append(values.from_json(field_type, raw))
        except IcebergError as e:
            raise InvalidMetadata(e.message, field=f"{path}.{key}", value=raw) from None
    return NestedField(field_id, name, field_type, required, doc, defaults[0], defaults[1])


def type_to_json(t: IcebergType) -> Any:
    """Serialize a type as Appendix C JSON."""
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {
            "type": "list",
            "element-id": t.element_id,
            "element": type_to_json(t.element_type),
            "element-required": t.element_required,
        }
    if isinstance(t, MapType):
        return {
            "type": "map",
            "key-id": t.key_id,
            "key": type_to_json(t.key_type),
            "value-id": t.value_id,
            "value": type_to_json(t.value_type),
            "value-required": t.value_required,
        }
    return str(t)


def field_to_json(f: NestedField) -> dict[str, Any]:
    """Serialize one struct field (Appendix C)."""
    from icenb.spec import values

    out: dict[str, Any] = {
        "id": f.field_id,
        "name": f.name,
        "required": f.required,
        "type": type_to_json(f.field_type),
    }
    if f.doc is not None:
        out["doc"] = f.doc
    if f.initial_default is not None:
        out["initial-default"] = values.to_json(f.field_type, f.initial_default)
    if f.write_default is not None:
        out["write-default"] = values.to_json(f.field_type, f.write_default)
    return out


def schema_from_json(obj: Any, *, where: str = "schema") -> Schema:
    """Parse a schema object (Appendix C): a struct plus ``schema-id``, ``identifier-field-ids``."""
    obj = as_object(obj, where, "a schema")
    if obj.get("type", "struct") != "struct":
        raise InvalidMetadata("a schema must be a struct", field=field_path(where, "type"),
                              value=obj.get("type"))
    schema_id = opt_int(obj, "schema-id", where, bits=None) or 0
    raw_fields = json_list(obj, "fields", where, required=True)
    ident = [int_value(i, where, "identifier-field-ids", bits=None)
             for i in json_list(obj, "identifier-field-ids", where)]
    fields = [field_from_json(f, where=where) for f in raw_fields]
    try:
        return Schema(*fields, schema_id=schema_id, identifier_field_ids=tuple(ident))
    except InvalidMetadata:
        raise
    except ValidationError as e:
        raise invalid(e, where) from None


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """Serialize a schema (Appendix C)."""
    out: dict[str, Any] = {"type": "struct", "schema-id": schema.schema_id}
    if schema.identifier_field_ids:
        out["identifier-field-ids"] = list(schema.identifier_field_ids)
    out["fields"] = [field_to_json(f) for f in schema.fields]
    return out
