"""Partition evolution as a pure builder.

Spec sections: "Partition Evolution" (field ids never change; v1: removed fields become void,
no reordering, new fields at the end), "Partitioning" (unique names and ids, equivalent specs),
"Partition Transforms". Rules the spec leaves open follow the reference
implementation (Iceberg Java 1.10 ``BaseUpdatePartitionSpec``, ``PartitionSpec.Builder`` and
``TableMetadata.Builder``):

* v2+: an added field reuses the field id of an equal field (same source and transform, and the
  requested name if one is given) of any earlier spec, with that field's name; removing and
  re-adding a field in one update keeps it.
* Default names of added fields: ``ts_day``, ``id_bucket_16``, ``s_trunc_4``, ``id`` (identity),
  ``ts_null`` (void); a void field whose name a new or renamed field takes is renamed
  ``<name>_<field id>``.
* Two time transforms (year/month/day/hour) of one column cannot both be *added* in one update;
  adding ``hour(ts)`` while ``day(ts)`` is already in the spec is allowed (as Java).
* A partition name may equal a schema column name only when that column is the field's source.
* v1 specs must number their fields 1000, 1001, ... in order.
* The result reuses the spec id of an equivalent spec already in the table.

Example::

    u = SpecUpdate(spec, schema, last_partition_id=1001, format_version=2, history=specs)
    u.add_field("bucket(16, id)").remove_field("ts_day").add_field("hour(ts)")
    new_spec, last_partition_id = u.apply()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spec.partition_spec import (
    PARTITION_DATA_ID_START,
    PartitionField,
    PartitionSpec,
    check_source_column,
    default_partition_name,
    parse_term,
)
from icenb.spec.schema import Schema
from icenb.spec.transforms import Transform, parse_transform

__all__ = ["SpecUpdate"]

_TIME = ("year", "month", "day", "hour")


def _kind(t: Transform) -> str:
    return str(t).split("[", 1)[0]


@safe_repr
@dataclass(frozen=True)
class _Resolved:
    source_id: int
    column: str
    transform: Transform

    @property
    def key(self) -> tuple[int, str]:
        return (self.source_id, str(self.transform))

    def __str__(self) -> str:
        return f"{self.transform}({self.column})"


class SpecUpdate:
    """Pending changes to partition spec ``spec``; nothing happens until :meth:`apply`.

    ``schema`` is the table's current schema, ``last_partition_id`` the table's
    ``last-partition-id`` and ``history`` every spec of the table (for id reuse and spec-id
    assignment; ``spec`` itself may or may not be included).
    """

    def __init__(
        self,
        spec: PartitionSpec,
        schema: Schema,
        last_partition_id: int,
        *,
        format_version: int,
        history: Sequence[PartitionSpec] = (),
        case_sensitive: bool = True,
    ) -> None:
        if format_version not in (1, 2, 3, 4):
            raise ValidationError("unsupported table format version", field="format-version",
                                  value=format_version)
        for f in spec.fields:
            if f.transform.is_unknown:
                raise UnsupportedFeature("cannot update a partition spec with an unknown "
                                         "transform", field=f.name, value=str(f.transform))
        self._spec = spec
        self._schema = schema
        self._format_version = format_version
        self._case_sensitive = case_sensitive
        specs = {s.spec_id: s for s in history}
        specs.setdefault(spec.spec_id, spec)
        self._history = [specs[i] for i in sorted(specs)]
        self._last = max(last_partition_id, spec.last_assigned_field_id)
        self._by_name = {f.name: f for f in spec.fields}
        self._by_key = {(f.source_id, str(f.transform)): f for f in spec.fields}
        self._adds: list[PartitionField] = []
        self._added_by_key: dict[tuple[int, str], PartitionField] = {}
        self._added_by_name: dict[str, PartitionField] = {}
        self._added_time: dict[int, PartitionField] = {}
        self._deletes: set[int] = set()
        self._renames: dict[str, str] = {}

    @property
    def spec(self) -> PartitionSpec:
        """The spec being evolved (unchanged)."""
        return self._spec

    # ------------------------------------------------------------------ terms
    def _resolve(self, term: str, transform: Transform | str | None) -> _Resolved:
        if transform is None:
            sources, t = parse_term(term)
            column = sources[0]
        else:
            column = term
            t = transform if isinstance(transform, Transform) \
                else parse_transform(transform, field="transform")
        f = self._schema.field_by_name(column, self._case_sensitive)
        if f is None:
            raise ValidationError("cannot find source column", field=column,
                                  value=str(t))
        name = self._schema.column_name(f.field_id) or column
        if t.is_unknown:
            raise UnsupportedFeature("cannot partition by an unknown transform", field=name,
                                     value=str(t))
        check_source_column(name, f.field_id, t, self._schema)
        return _Resolved(f.field_id, name, t)

    # ------------------------------------------------------------------ changes
    def add_field(self, term: str, transform: Transform | str | None = None,
                  name: str | None = None) -> SpecUpdate:
        """Add a partition field: ``add_field("day(ts)")``, ``add_field("id", "bucket[16]")``,
        ``add_field("bucket(16, id)", name="b")``. Spec: "Partition Evolution"."""
        if name is not None and name in self._added_by_name:
            raise ValidationError("cannot add two partition fields with the same name",
                                  field=name)
        r = self._resolve(term, transform)
        existing = self._by_key.get(r.key)
        if existing is not None and existing.field_id in self._deletes:
            # removed and re-added in one update: keep the field (and maybe rename it)
            self._deletes.discard(existing.field_id)
            if name is not None and name != existing.name:
                try:
                    self.rename_field(existing.name, name)
                except ValidationError:
                    self._deletes.add(existing.field_id)
                    raise
            return self
        if existing is not None:
            raise ValidationError(f"cannot add duplicate partition field {r}: it is already "
                                  f"in the spec as {existing.name}", field=existing.name,
                                  value=str(r))
        added = self._added_by_key.get(r.key)
        if added is not None:
            raise ValidationError(f"cannot add duplicate partition field {r}: already added",
                                  field=added.name, value=str(r))
        new = self._recycle_or_create(r, name)
        if _kind(new.transform) in _TIME:
            other = self._added_time.get(new.source_id)
            if other is not None:
                raise ValidationError(
                    f"cannot add redundant partition field {new.name}: it conflicts with "
                    f"{other.name} (two time transforms of one column)", field=new.name,
                    value=str(r),
                )
        if new.name in self._added_by_name:
            raise ValidationError("cannot add two partition fields with the same name",
                                  field=new.name, value=str(r))
        clash = self._by_name.get(new.name)
        if clash is not None and clash.field_id not in self._deletes and not clash.is_void:
            raise ValidationError("cannot add duplicate partition field name",
                                  field=new.name, value=str(r))
        if clash is not None:  # a void or removed field gives its name up
            self._rename_void(clash)
        self._last = max(self._last, new.field_id)
        self._added_by_key[r.key] = new
        self._added_by_name[new.name] = new
        if _kind(new.transform) in _TIME:
            self._added_time[new.source_id] = new
        self._adds.append(new)
        return self

    def _recycle_or_create(self, r: _Resolved, name: str | None) -> PartitionField:
        """v2+: an equal field of an earlier spec keeps its id and name; else a new id."""
        if self._format_version >= 2:
            for spec in reversed(self._history):
                for f in spec.fields:
                    if f.source_ids == (r.source_id,) and str(f.transform) == str(r.transform) \
                            and (name is None or f.name == name):
                        return f
        if name is None:
            name = default_partition_name(r.column, r.transform, evolution=True)
        return PartitionField((r.source_id,), self._last + 1, r.transform, name)

    def _rename_void(self, field: PartitionField) -> None:
        """A void (or removed) field yields its name to a new one: ``<name>_<field id>``."""
        self._renames[field.name] = f"{field.name}_{field.field_id}"

    def remove_field(self, name_or_term: str) -> SpecUpdate:
        """Remove a field by partition name (``"ts_day"``) or by term (``"day(ts)"``).

        v1 keeps the field as a void transform (spec "Partition Evolution").
        """
        field = self._by_name.get(name_or_term)
        if field is None:
            if name_or_term in self._added_by_name:
                raise ValidationError("cannot remove a newly added partition field",
                                      field=name_or_term)
            try:
                r = self._resolve(name_or_term, None)
            except ValidationError:
                raise ValidationError("cannot find partition field to remove",
                                      field=name_or_term) from None
            if r.key in self._added_by_key:
                raise ValidationError("cannot remove a newly added partition field",
                                      field=name_or_term, value=str(r))
            field = self._by_key.get(r.key)
            if field is None:
                raise ValidationError("cannot find partition field to remove",
                                      field=name_or_term, value=str(r))
        elif name_or_term in self._added_by_name:
            raise ValidationError("cannot remove a newly added partition field",
                                  field=name_or_term)
        if field.name in self._renames:
            raise ValidationError("cannot rename and remove the same partition field",
                                  field=field.name)
        self._deletes.add(field.field_id)
        return self

    def rename_field(self, name: str, new_name: str) -> SpecUpdate:
        """Rename a partition field of the current spec (its id stays)."""
        if not isinstance(new_name, str) or not new_name:
            raise ValidationError("a partition field cannot be renamed to an empty name",
                                  field=name, value=new_name)
        if name in self._added_by_name:
            raise ValidationError("cannot rename a newly added partition field", field=name)
        field = self._by_name.get(name)
        if field is None:
            raise ValidationError("cannot find partition field to rename", field=name)
        if field.field_id in self._deletes:
            raise ValidationError("cannot remove and rename the same partition field",
                                  field=name)
        clash = self._by_name.get(new_name)
        if clash is not None and clash.is_void and clash is not field:
            self._rename_void(clash)
        self._renames[name] = new_name
        return self

    # ------------------------------------------------------------------ apply
    def apply(self) -> tuple[PartitionSpec, int]:
        """The evolved spec and the new ``last-partition-id``.

        Returns an equivalent existing spec of ``history`` (ids and all) when there is one, else
        a new spec with the next spec id. Without changes the input spec is returned.
        """
        void = parse_transform("void")
        fields: list[PartitionField] = []
        for f in self._spec.fields:
            name = self._renames.get(f.name, f.name)
            if f.field_id not in self._deletes:
                fields.append(PartitionField(f.source_ids, f.field_id, f.transform, name))
            elif self._format_version == 1:
                fields.append(PartitionField(f.source_ids, f.field_id, void, name))
        fields.extend(self._adds)
        try:
            candidate = PartitionSpec(self._spec.spec_id, tuple(fields))
        except ValidationError as e:
            raise ValidationError(f"invalid partition spec after update: {e.message}",
                                  field=e.field, **({"value": e.value} if e.has_value else {})
                                  ) from None
        self._check(candidate)
        last = max(self._last, candidate.last_assigned_field_id)
        if candidate.fields == self._spec.fields:
            return self._spec, last
        for existing in self._history:
            if existing.compatible_with(candidate):
                return existing, last
        spec_id = max(s.spec_id for s in self._history) + 1
        return PartitionSpec(spec_id, candidate.fields), last

    def _check(self, spec: PartitionSpec) -> None:
        """Names vs. columns, source compatibility and v1 ids (reference-implementation rules)."""
        for f in spec.fields:
            column = self._schema.field_by_name(f.name)  # case-sensitive, as Java's builder
            if column is not None and column.field_id not in f.source_ids:
                raise ValidationError(
                    "partition name equals a schema column that is not its source",
                    field=f.name, value=str(f),
                )
            if not f.is_void:
                check_source_column(f.name, f.source_id, f.transform, self._schema)
        if self._format_version == 1:
            for i, f in enumerate(spec.fields):
                if f.field_id != PARTITION_DATA_ID_START + i:
                    raise ValidationError(
                        "v1 partition fields must have sequential ids starting at "
                        f"{PARTITION_DATA_ID_START} (spec: Partition Evolution)",
                        field=f.name, value=f.field_id,
                    )
