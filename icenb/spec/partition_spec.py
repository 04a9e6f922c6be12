"""Partition specs: fields, partition type, JSON, evolution rules and user strings.

Spec sections: "Partitioning", "Partition Transforms", "Partition Evolution", Appendix C
"Partition Specs", Appendix E (``source-id`` / ``source-ids`` by format version).

A *partition tuple* (the partition values of one data file) is a Python ``tuple`` ordered like
the spec's fields; each element uses the value representation of the field's result type
(see :mod:`icenb.spec.types`), ``None`` for null.

A :class:`PartitionSpec` is not bound to a schema (a table keeps specs across schema changes);
methods that need column types take the schema as an argument. Reading metadata tolerates
unknown transforms and dropped source columns; building or evolving a spec (``build_*``,
``evolve_*``, :meth:`PartitionSpec.validate`) enforces the writer rules.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, TypeVar, cast

from icenb.errors import (
    IcebergError,
    InvalidMetadata,
    UnsupportedFeature,
    UnsupportedVersion,
    ValidationError,
)
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    as_object,
    field_path,
    int_value,
    invalid,
    missing_field,
    opt_int,
    req_str,
    require,
)
from icenb.spec.schema import Schema
from icenb.spec.transforms import Transform, parse_transform
from icenb.spec.types import IcebergType, NestedField, PrimitiveType, StructType, UnknownType

__all__ = [
    "PARTITION_DATA_ID_START",
    "UNPARTITIONED",
    "UNPARTITIONED_LAST_ASSIGNED_ID",
    "PartitionField",
    "PartitionSpec",
    "UnboundPartitionField",
    "build_partition_spec",
    "default_partition_name",
    "evolve_partition_spec",
    "parse_partition_field",
    "parse_partition_fields",
    "parse_term",
    "partition_fields_from_json",
    "partition_fields_to_json",
    "partition_path",
    "partition_spec_from_json",
    "partition_spec_to_json",
    "source_ids_from_json",
    "source_ids_to_json",
    "transform_from_json",
    "unified_partition_type",
]

T = TypeVar("T")

#: First partition field id; v1 readers assign ids 1000, 1001, ... by position.
#: Spec: Appendix C "Partition Specs" (field-id), "Partition Evolution".
PARTITION_DATA_ID_START = 1000
#: ``last-partition-id`` of a table that never had a partition field.
UNPARTITIONED_LAST_ASSIGNED_ID = PARTITION_DATA_ID_START - 1

_SUPPORTED_VERSIONS = (1, 2, 3, 4)
_TIME_TRANSFORMS = ("year", "month", "day", "hour")
_PARAM_RE = re.compile(r"(bucket|truncate)\[(\d+)\]")


# --------------------------------------------------------------------------- transform helpers


def _kind(t: Transform) -> str:
    """The transform's name without parameters (``bucket[16]`` -> ``bucket``)."""
    return str(t).split("[", 1)[0]


def _is_void(t: Transform) -> bool:
    return t.is_void


def _is_unknown(t: Transform) -> bool:
    return t.is_unknown


def check_field_format_version(format_version: int) -> None:
    if format_version not in _SUPPORTED_VERSIONS:
        raise UnsupportedVersion("unsupported table format version", field="format-version",
                                 value=format_version)


def source_ids_of(ids: Any, what: str, label: str) -> tuple[int, ...]:
    """A partition or sort field's source column ids: one int, or a non-empty sequence of ints."""
    out = (ids,) if isinstance(ids, int) and not isinstance(ids, bool) else tuple(ids)
    if not out or not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        raise ValidationError(f"a {what} field needs one or more integer source ids",
                              field=label, value=ids)
    return out


def sources_of(sources: Any, what: str) -> tuple[str | int, ...]:
    """The columns a user names for a partition or sort field: one name or id, or several."""
    out = tuple((sources,) if isinstance(sources, (str, int)) else sources)
    if not out:
        raise ValidationError(f"a {what} field needs a source column", field="sources")
    return out


def single_source(items: list[T], what: str, text: str) -> T:
    """The one item parsed from a user's ``text``."""
    if len(items) != 1:
        raise ValidationError(f"expected exactly one {what}", field="term", value=text)
    return items[0]


# --------------------------------------------------------------------------- model


@safe_repr
@dataclass(frozen=True)
class PartitionField:
    """One partition field: source column id(s), partition field id, transform and name.

    Spec: "Partitioning". ``source_ids`` has one id for every transform defined today;
    multi-argument transforms (v3) have several.
    """

    source_ids: tuple[int, ...]
    field_id: int
    transform: Transform
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "source_ids",
                           source_ids_of(self.source_ids, "partition", str(self.name)))
        if not isinstance(self.field_id, int) or isinstance(self.field_id, bool):
            raise ValidationError("partition field id must be an int", field=str(self.name),
                                  value=self.field_id)
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError("partition field name must be a non-empty string",
                                  field="name", value=self.name)

    @property
    def source_id(self) -> int:
        """The first (for single-argument transforms: the only) source column id."""
        return self.source_ids[0]

    @property
    def is_void(self) -> bool:
        return _is_void(self.transform)

    def __str__(self) -> str:
        sources = ", ".join(str(i) for i in self.source_ids)
        return f"{self.field_id}: {self.name}: {self.transform}({sources})"


@dataclass(frozen=True)
class PartitionSpec:
    """A partition spec: ``spec_id`` and an ordered tuple of :class:`PartitionField`.

    Field ids and names must be unique within a spec (spec: "Partitioning").
    Equality compares ``spec_id`` and fields; see :meth:`compatible_with` and :meth:`same_spec`.
    """

    spec_id: int = 0
    fields: tuple[PartitionField, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if not isinstance(self.spec_id, int) or isinstance(self.spec_id, bool) or self.spec_id < 0:
            raise ValidationError("spec id must be a non-negative int", field="spec-id",
                                  value=self.spec_id)
        ids: dict[int, str] = {}
        names: set[str] = set()
        for f in self.fields:
            if not isinstance(cast(Any, f), PartitionField):
                raise ValidationError("not a PartitionField", field="fields", value=f)
            if f.name in names:
                raise ValidationError("partition name is used more than once", field=f.name)
            names.add(f.name)
            if f.field_id in ids:
                raise ValidationError(
                    f"partition field id {f.field_id} is used by both {ids[f.field_id]} and "
                    f"{f.name}", field=f.name, value=f.field_id,
                )
            ids[f.field_id] = f.name

    # -- properties -----------------------------------------------------------------
    @property
    def is_partitioned(self) -> bool:
        """True when some field has a non-void transform (as Java's ``isPartitioned``)."""
        return any(not f.is_void for f in self.fields)

    @property
    def is_unpartitioned(self) -> bool:
        """No fields, or only void fields (v1 tables void the fields they drop)."""
        return not self.is_partitioned

    @property
    def last_assigned_field_id(self) -> int:
        """The largest partition field id, at least 999 (``UNPARTITIONED_LAST_ASSIGNED_ID``)."""
        return max((f.field_id for f in self.fields), default=UNPARTITIONED_LAST_ASSIGNED_ID)

    @cached_property
    def _by_id(self) -> dict[int, PartitionField]:
        return {f.field_id: f for f in self.fields}

    def field_by_id(self, field_id: int) -> PartitionField | None:
        return self._by_id.get(field_id)

    def field_by_name(self, name: str) -> PartitionField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def fields_by_source_id(self, source_id: int) -> list[PartitionField]:
        """Fields that read column ``source_id`` (as one of their sources)."""
        return [f for f in self.fields if source_id in f.source_ids]

    def identity_source_ids(self) -> frozenset[int]:
        """Source column ids of identity partition fields."""
        return frozenset(f.source_id for f in self.fields if f.transform.is_identity)

    def __len__(self) -> int:
        return len(self.fields)

    def __str__(self) -> str:
        if not self.fields:
            return f"spec {self.spec_id} []"
        return f"spec {self.spec_id} [\n" + "\n".join(f"  {f}" for f in self.fields) + "\n]"

    # -- comparison -----------------------------------------------------------------
    def compatible_with(self, other: PartitionSpec) -> bool:
        """Equivalent specs: same fields in order by source ids, transform and name.

        Spec: "Partitioning" (equivalence; field ids and spec ids are ignored). Writers reuse
        an equivalent existing spec instead of adding a new one.
        """
        if len(self.fields) != len(other.fields):
            return False
        return all(
            a.source_ids == b.source_ids and str(a.transform) == str(b.transform)
            and a.name == b.name
            for a, b in zip(self.fields, other.fields, strict=True)
        )

    is_equivalent = compatible_with

    def same_spec(self, other: PartitionSpec) -> bool:
        """Same fields including partition field ids, ignoring ``spec_id``."""
        return self.fields == other.fields

    # -- schema-dependent -------------------------------------------------------------
    def partition_type(self, schema: Schema) -> StructType:
        """The struct of partition values: one optional field per partition field.

        Field ids and names are the partition field ids and names; types are the transforms'
        result types. A field whose source column is no longer in ``schema`` gets type
        ``unknown`` (as the reference implementation); an unknown transform gets the type its
        ``UnknownTransform`` reports (``string``, as in the reference implementation).
        """
        return StructType(*(
            NestedField(f.field_id, f.name, _result_type(f, schema), required=False)
            for f in self.fields
        ))

    def validate(self, schema: Schema, *, case_sensitive: bool = True) -> None:
        """Check the writer rules against ``schema``; raise ``ValidationError`` on the first fault.

        Rules (spec "Partitioning" and the reference implementation's builder): source columns
        exist, are primitive and not inside a list or map; the transform accepts the source type;
        no unknown transforms (``UnsupportedFeature``); names are unique and do not reuse a
        column name unless the field is an identity (or void) partition of that same column;
        no two non-void fields of the same source with the same transform (all time transforms
        of one column count as the same).
        """
        validate_partition_spec(self, schema, case_sensitive=case_sensitive, carried=frozenset())

    def partition_path(self, schema: Schema, values: Sequence[Any]) -> str:
        """The Hive-style path of a partition tuple; see :func:`partition_path`."""
        return partition_path(self, schema, values)


#: The spec of an unpartitioned table (spec id 0, no fields).
UNPARTITIONED = PartitionSpec(0, ())


def _source_types(f: PartitionField, schema: Schema) -> list[IcebergType] | None:
    out: list[IcebergType] = []
    for sid in f.source_ids:
        src = schema.field_by_id(sid)
        if src is None:
            return None
        out.append(src.field_type)
    return out


def _result_type(f: PartitionField, schema: Schema) -> IcebergType:
    types = _source_types(f, schema)
    if types is None:
        return UnknownType()
    return f.transform.result_type(types[0])


def validate_partition_spec(spec: PartitionSpec, schema: Schema, *, case_sensitive: bool,
              carried: frozenset[int]) -> None:
    """Writer checks; fields whose id is in ``carried`` come from an existing spec.

    Carried fields keep their names when a column of that name is their own source (whatever
    the transform), as the reference implementation does when it rebuilds an evolved spec.
    """
    lowered: dict[str, str] = {}
    dedup: dict[tuple[tuple[int, ...], str], PartitionField] = {}
    for f in spec.fields:
        t = f.transform
        if _is_unknown(t):
            raise UnsupportedFeature("cannot write a partition spec with an unknown transform",
                                     field=f.name, value=str(t))
        if not _is_void(t):
            if len(f.source_ids) != 1:
                raise ValidationError(f"transform {t} takes exactly one source column",
                                      field=f.name, value=list(f.source_ids))
            check_source_column(f.name, f.source_id, t, schema)
        # -- names
        if not case_sensitive:
            key = f.name.lower()
            if key in lowered:
                raise ValidationError("partition name is used more than once (ignoring case)",
                                      field=f.name, value=lowered[key])
            lowered[key] = f.name
        column = schema.field_by_name(f.name, case_sensitive)
        if column is not None:
            own = column.field_id in f.source_ids
            allowed = own and (f.field_id in carried or str(t) in ("identity", "void"))
            if not allowed:
                raise ValidationError(
                    "partition name conflicts with a schema column (only an identity partition "
                    "of that column may use its name)", field=f.name, value=str(t),
                )
        # -- redundancy
        if not _is_void(t):
            dkey = (f.source_ids, t.dedup_name)
            other = dedup.get(dkey)
            if other is not None:
                raise ValidationError(f"redundant partition field: {f} conflicts with {other}",
                                      field=f.name, value=str(t))
            dedup[dkey] = f


def check_source_column(name: str, source_id: int, t: Transform, schema: Schema) -> None:
    src = schema.field_by_id(source_id)
    if src is None:
        raise ValidationError("partition source column is not in the schema", field=name,
                              value=source_id)
    column = schema.column_name(source_id) or str(source_id)
    if not isinstance(src.field_type, PrimitiveType):
        raise ValidationError(f"cannot partition by non-primitive column {column}", field=name,
                              value=str(src.field_type))
    for parent in schema.ancestors(source_id):
        if not isinstance(parent.field_type, StructType):
            raise ValidationError(
                f"cannot partition by {column}: it is inside a list or map", field=name,
                value=str(parent.field_type),
            )
    if not t.can_transform(src.field_type):
        raise ValidationError(
            f"transform {t} cannot be applied to column {column} of type {src.field_type}",
            field=name, value=str(t),
        )


# --------------------------------------------------------------------------- JSON


def source_ids_from_json(obj: Mapping[str, Any], where: str) -> tuple[int, ...]:
    """Read ``source-ids`` / ``source-id`` of a partition or sort field (Appendix C, E).

    ``source-ids`` wins when present (``source-id``, if also present, must be its first
    element); otherwise ``source-ids`` defaults to ``[source-id]`` in every format version.
    """
    sid = obj.get("source-id")
    ids = obj.get("source-ids")
    if ids is not None:
        if not isinstance(ids, list) or not ids:
            raise InvalidMetadata("source-ids must be a non-empty list of ints",
                                  field=field_path(where, "source-ids"), value=ids)
        out = tuple(int_value(i, where, "source-ids", bits=None) for i in ids)
        if sid is not None and int_value(sid, where, "source-id", bits=None) != out[0]:
            raise InvalidMetadata("source-id must be the first element of source-ids",
                                  field=field_path(where, "source-id"), value=sid)
        return out
    if sid is None:
        raise missing_field(where, "source-ids")
    return (int_value(sid, where, "source-id", bits=None),)


def source_ids_to_json(out: dict[str, Any], source_ids: tuple[int, ...],
                       format_version: int) -> None:
    """Write ``source-id`` for single-column transforms; ``source-ids`` for multi-column ones.

    Spec: Appendix E. v1/v2 multi-column fields also carry ``source-id`` = the first id. The v3
    draft says to write ``source-ids`` only, but the reference implementation (1.10) requires
    ``source-id`` and cannot read a single-column field without it, so single-column fields
    keep ``source-id`` in every version (as Java writes them); multi-column fields in v3 carry
    ``source-ids`` only.
    """
    if len(source_ids) == 1:
        out["source-id"] = source_ids[0]
        return
    if format_version < 3:
        out["source-id"] = source_ids[0]
    out["source-ids"] = list(source_ids)


def transform_from_json(value: Any, where: str) -> Transform:
    """Parse a transform string; unknown transforms are kept (v3 readers must tolerate them)."""
    if not isinstance(value, str):
        raise InvalidMetadata("transform must be a JSON string", field=where, value=value)
    try:
        return parse_transform(value)
    except IcebergError as e:
        raise InvalidMetadata(e.message, field=where, value=value) from None


def _field_from_json(obj: Any, where: str, auto_id: int) -> PartitionField:
    obj = as_object(obj, where, "a partition field")
    name = req_str(obj, "name", where)
    path = f"{where}({name})"
    transform = transform_from_json(require(obj, "transform", path),
                                    field_path(path, "transform"))
    source_ids = source_ids_from_json(obj, path)
    field_id = opt_int(obj, "field-id", path, bits=None)
    try:
        return PartitionField(source_ids, auto_id if field_id is None else field_id, transform,
                              name)
    except InvalidMetadata:
        raise
    except ValidationError as e:
        raise InvalidMetadata(e.message, field=path,
                              **({"value": e.value} if e.has_value else {})) from None


def partition_fields_from_json(
    obj: Any, *, format_version: int, spec_id: int = 0, where: str = "partition-spec"
) -> PartitionSpec:
    """Read a bare list of partition fields (v1 table metadata's ``partition-spec``).

    A field without ``field-id`` gets the next id after the largest seen so far, starting at
    1000, as the reference implementation does (so plain v1 lists get 1000, 1001, ...).
    Spec: Appendix C "Partition Specs".
    """
    check_field_format_version(format_version)
    if not isinstance(obj, list):
        raise InvalidMetadata("partition fields must be a JSON list", field=where, value=obj)
    fields: list[PartitionField] = []
    last = UNPARTITIONED_LAST_ASSIGNED_ID
    for i, raw in enumerate(obj):
        f = _field_from_json(raw, f"{where}[{i}]", last + 1)
        last = max(last, f.field_id)
        fields.append(f)
    try:
        return PartitionSpec(spec_id, tuple(fields))
    except ValidationError as e:
        raise invalid(e, where) from None


def partition_spec_from_json(
    obj: Any, *, format_version: int, where: str = "partition-spec"
) -> PartitionSpec:
    """Read a partition spec object ``{"spec-id": .., "fields": [..]}`` (Appendix C).

    Accepts ``source-id`` and/or ``source-ids`` in any version (Appendix E), ``field-id``
    defaulting as in :func:`partition_fields_from_json`, and unknown transforms.
    A bare list (the v1 ``partition-spec`` form) is read as the fields of spec 0.
    """
    if isinstance(obj, list):
        return partition_fields_from_json(obj, format_version=format_version, where=where)
    obj = as_object(obj, where, "a partition spec")
    spec_id = opt_int(obj, "spec-id", where, bits=None) or 0
    return partition_fields_from_json(require(obj, "fields", where), format_version=format_version,
                                      spec_id=spec_id, where=field_path(where, "fields"))


def partition_fields_to_json(spec: PartitionSpec, format_version: int) -> list[dict[str, Any]]:
    """The spec's fields as a JSON list (for v1's ``partition-spec``; see Appendix C/E).

    ``field-id`` is written in every version (as the reference implementation does), so ids
    survive a round trip even where v1 readers would renumber them.
    """
    check_field_format_version(format_version)
    out: list[dict[str, Any]] = []
    for f in spec.fields:
        item: dict[str, Any] = {}
        source_ids_to_json(item, f.source_ids, format_version)
        item["field-id"] = f.field_id
        item["name"] = f.name
        item["transform"] = str(f.transform)
        out.append(item)
    return out


def partition_spec_to_json(spec: PartitionSpec, format_version: int) -> dict[str, Any]:
    """Serialize a partition spec object for table metadata of ``format_version``."""
    return {"spec-id": spec.spec_id, "fields": partition_fields_to_json(spec, format_version)}


# --------------------------------------------------------------------------- paths & unions


def _escape(text: str) -> str:
    """URL-encode like Java's ``URLEncoder`` (UTF-8; space -> '+'; keeps ``.-*_``)."""
    return urllib.parse.quote_plus(text, safe="*").replace("~", "%7E")


def partition_path(spec: PartitionSpec, schema: Schema, values: Sequence[Any]) -> str:
    """``name=value/...`` for a partition tuple, e.g. ``ts_day=2017-11-16/id_bucket=3``.

    Values are rendered with each transform's ``to_human_string``; names and values are
    URL-encoded as the reference implementation's ``partitionToPath`` does.
    """
    if len(values) != len(spec.fields):
        raise ValidationError(
            f"partition tuple has {len(values)} values but spec {spec.spec_id} has "
            f"{len(spec.fields)} fields", field="partition", value=tuple(values),
        )
    parts: list[str] = []
    for f, value in zip(spec.fields, values, strict=True):
        types = _source_types(f, schema)
        source_type: IcebergType = UnknownType() if types is None else types[0]
        if value is None:
            text = "null"
        elif types is None:
            text = str(value)
        else:
            text = f.transform.to_human_string(source_type, value)
        parts.append(f"{_escape(f.name)}={_escape(text)}")
    return "/".join(parts)


def unified_partition_type(specs: Iterable[PartitionSpec], schema: Schema) -> StructType:
    """The union of all specs' partition fields, ordered by field id (metadata tables).

    As the reference implementation's ``Partitioning.partitionType``: only fields whose source
    columns are all in ``schema``; names come from the spec with the highest id; a field id
    used with a different source or an incompatible transform raises ``ValidationError`` (void
    is compatible with anything, and a non-void occurrence supplies the type). Unlike the
    reference implementation (which refuses), fields with unknown transforms are left out, since
    readers must ignore unknown transforms (Appendix C).
    """
    chosen: dict[int, tuple[PartitionField, IcebergType]] = {}
    names: dict[int, str] = {}
    for spec in sorted(specs, key=lambda s: s.spec_id, reverse=True):
        for f in spec.fields:
            if _is_unknown(f.transform) or _source_types(f, schema) is None:
                continue
            existing = chosen.get(f.field_id)
            if existing is None:
                chosen[f.field_id] = (f, _result_type(f, schema))
                names[f.field_id] = f.name
                continue
            old = existing[0]
            compatible = old.source_ids == f.source_ids and (
                str(old.transform) == str(f.transform) or old.is_void or f.is_void
            )
            if not compatible:
                raise ValidationError(f"conflicting partition fields: {f} and {old}",
                                      field=f.name, value=f.field_id)
            if old.is_void and not f.is_void:
                chosen[f.field_id] = (f, _result_type(f, schema))
    return StructType(*(
        NestedField(fid, names[fid], chosen[fid][1], required=False) for fid in sorted(chosen)
    ))


# --------------------------------------------------------------------------- user strings

_TOKEN_RE = re.compile(
    r"""\s*(?:
        (?P<num>[+-]?\d+(?![\w$]))
      | (?P<ident>[^\W\d][\w$]*)
      | `(?P<bq>(?:[^`]|``)*)`
      | "(?P<dq>(?:[^"]|"")*)"
      | (?P<punct>[()\[\],.])
    )""",
    re.VERBOSE,
)


@safe_repr
@dataclass(frozen=True)
class _Token:
    kind: str  # num, ident, quoted, punct, end
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        m = _TOKEN_RE.match(text, pos)
        if m is None or m.end() == pos:
            raise ValidationError(f"unexpected character at position {pos}", field="term",
                                  value=text)
        if m.group("num") is not None:
            tokens.append(_Token("num", m.group("num"), m.start("num")))
        elif m.group("ident") is not None:
            tokens.append(_Token("ident", m.group("ident"), m.start("ident")))
        elif m.group("bq") is not None:
            tokens.append(_Token("quoted", m.group("bq").replace("``", "`"), m.start()))
        elif m.group("dq") is not None:
            tokens.append(_Token("quoted", m.group("dq").replace('""', '"'), m.start()))
        else:
            tokens.append(_Token("punct", m.group("punct"), m.start("punct")))
        pos = m.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


class TermParser:
    """Recursive-descent reader of transform terms: ``col``, ``day(ts)``, ``bucket(16, id)``."""

    _FUNCS: ClassVar[dict[str, str]] = {
        "identity": "identity",
        "bucket": "bucket", "truncate": "truncate",
        "year": "year", "years": "year",
        "month": "month", "months": "month",
        "day": "day", "days": "day", "date": "day",
        "hour": "hour", "hours": "hour", "date_hour": "hour",
        "void": "void",
    }

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    # -- token helpers
    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def next(self) -> _Token:
        tok = self.peek()
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def error(self, message: str) -> ValidationError:
        tok = self.peek()
        where = "end of input" if tok.kind == "end" else f"{tok.text!r} at position {tok.pos}"
        return ValidationError(f"{message} (found {where})", field="term", value=self.text)

    def expect_punct(self, p: str) -> None:
        tok = self.peek()
        if tok.kind != "punct" or tok.text != p:
            raise self.error(f"expected {p!r}")
        self.next()

    def at_keyword(self, *words: str) -> bool:
        tok = self.peek()
        return tok.kind == "ident" and tok.text.lower() in words

    def at_punct(self, p: str) -> bool:
        tok = self.peek()
        return tok.kind == "punct" and tok.text == p

    def at_end(self) -> bool:
        return self.peek().kind == "end"

    def comma_list(self, item: Callable[[], T], expected: str = "',' or the end") -> list[T]:
        """``item()`` for each comma-separated item, up to the end of the text."""
        out = [item()]
        while self.at_punct(","):
            self.next()
            out.append(item())
        if not self.at_end():
            raise self.error(f"expected {expected}")
        return out

    # -- grammar
    def dotted_name(self) -> str:
        parts = [self.identifier()]
        while self.at_punct("."):
            self.next()
            parts.append(self.identifier())
        return ".".join(parts)

    def identifier(self) -> str:
        tok = self.peek()
        if tok.kind not in ("ident", "quoted"):
            raise self.error("expected a column name")
        self.next()
        return tok.text

    def integer(self) -> int:
        tok = self.peek()
        if tok.kind != "num":
            raise self.error("expected an integer")
        self.next()
        return int(tok.text)

    def term(self) -> tuple[tuple[str, ...], Transform]:
        tok = self.peek()
        nxt = self.peek(1)
        if tok.kind == "ident" and nxt.kind == "punct" and nxt.text in ("(", "["):
            return self.call()
        return (self.dotted_name(),), parse_transform("identity")

    def call(self) -> tuple[tuple[str, ...], Transform]:
        name_tok = self.next()
        func = self._FUNCS.get(name_tok.text.lower())
        if func is None:
            raise ValidationError(f"unknown partition transform {name_tok.text!r}",
                                  field="term", value=self.text)
        param: int | None = None
        if self.at_punct("["):
            self.next()
            param = self.integer()
            self.expect_punct("]")
        self.expect_punct("(")
        columns: list[str] = []
        numbers: list[int] = []
        while True:
            if self.peek().kind == "num":
                numbers.append(self.integer())
            else:
                columns.append(self.dotted_name())
            if self.at_punct(","):
                self.next()
                continue
            break
        self.expect_punct(")")
        if param is not None:
            numbers.insert(0, param)
        wants_param = func in ("bucket", "truncate")
        if len(columns) != 1 or len(numbers) != (1 if wants_param else 0):
            usage = f"{func}(N, column)" if wants_param else f"{func}(column)"
            raise ValidationError(f"wrong arguments, expected {usage}", field="term",
                                  value=self.text)
        text = f"{func}[{numbers[0]}]" if wants_param else func
        try:
            transform = parse_transform(text)
        except IcebergError as e:
            raise ValidationError(e.message, field="term", value=self.text) from None
        return (columns[0],), transform


def parse_term(text: str) -> tuple[tuple[str, ...], Transform]:
    """Parse one transform term: ``ts``, ``day(ts)``, ``bucket(16, id)``, ``bucket[16](id)``.

    Accepts the Spark SQL spellings ``years/months/days/hours/date/date_hour`` and parameters
    before or after the column (``truncate(4, s)`` or ``truncate(s, 4)``). Column names may be
    dotted (``loc.lat``) and quoted with backticks or double quotes.
    """
    p = TermParser(text)
    result = p.term()
    if not p.at_end():
        raise p.error("unexpected text after the term")
    return result


@safe_repr
@dataclass(frozen=True)
class UnboundPartitionField:
    """A partition field requested by a user: sources by name or id, transform, optional name."""

    sources: tuple[str | int, ...]
    transform: Transform
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", sources_of(self.sources, "partition"))

    def bind(self, schema: Schema, *, case_sensitive: bool = True
             ) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """Source ids and their full column names (a missing id keeps its number as name)."""
        ids: list[int] = []
        names: list[str] = []
        for s in self.sources:
            if isinstance(s, int):
                ids.append(s)
                names.append(schema.column_name(s) or str(s))
            else:
                f = schema.find_field(s, case_sensitive)
                ids.append(f.field_id)
                names.append(schema.column_name(f.field_id) or s)
        return tuple(ids), tuple(names)

    def __str__(self) -> str:
        src = ", ".join(str(s) for s in self.sources)
        alias = f" AS {self.name}" if self.name else ""
        return f"{self.transform}({src}){alias}"


def parse_partition_fields(text: str) -> list[UnboundPartitionField]:
    """Parse a comma-separated list of partition terms, each optionally ``AS name``."""
    p = TermParser(text)

    def item() -> UnboundPartitionField:
        sources, transform = p.term()
        name: str | None = None
        if p.at_keyword("as"):
            p.next()
            name = p.dotted_name()
        return UnboundPartitionField(sources, transform, name)

    return p.comma_list(item)


def parse_partition_field(text: str) -> UnboundPartitionField:
    """Parse what a user types for one partition field: ``day(ts)``, ``bucket(16, id) AS b``."""
    return single_source(parse_partition_fields(text), "partition field", text)


def default_partition_name(column: str, transform: Transform, *, evolution: bool = False) -> str:
    """The reference implementation's default partition field name.

    New specs (``PartitionSpec.Builder``): ``id``, ``id_bucket``, ``s_trunc``, ``ts_year``,
    ``ts_month``, ``ts_day``, ``ts_hour``, ``x_null``. Fields added by spec evolution
    (``UpdatePartitionSpec``) include the parameter: ``id_bucket_16``, ``s_trunc_4``.
    """
    text = str(transform)
    kind = _kind(transform)
    if kind == "identity":
        return column
    m = _PARAM_RE.fullmatch(text)
    if m is not None:
        short = "bucket" if m.group(1) == "bucket" else "trunc"
        return f"{column}_{short}_{m.group(2)}" if evolution else f"{column}_{short}"
    if kind in _TIME_TRANSFORMS:
        return f"{column}_{kind}"
    if kind == "void":
        return f"{column}_null"
    return f"{column}_" + re.sub(r"\W+", "_", text).strip("_")


def _coerce_request(item: Any) -> UnboundPartitionField:
    if isinstance(item, UnboundPartitionField):
        return item
    if isinstance(item, str):
        return parse_partition_field(item)
    raise ValidationError("a partition field must be a string or UnboundPartitionField",
                          field="partition_by", value=item)


# --------------------------------------------------------------------------- building & evolution


def build_partition_spec(
    schema: Schema,
    fields: Iterable[str | UnboundPartitionField],
    *,
    spec_id: int = 0,
    case_sensitive: bool = True,
) -> PartitionSpec:
    """A new table's spec from user terms, ids from 1000, default names as Java's builder.

    ``build_partition_spec(schema, ["day(ts)", "bucket(16, id)"])`` gives fields
    ``1000: ts_day`` and ``1001: id_bucket``. Validated with :meth:`PartitionSpec.validate`.
    """
    if isinstance(fields, str):
        fields = parse_partition_fields(fields)
    out: list[PartitionField] = []
    next_id = PARTITION_DATA_ID_START
    for item in fields:
        u = _coerce_request(item)
        ids, names = u.bind(schema, case_sensitive=case_sensitive)
        name = u.name if u.name is not None else default_partition_name(names[0], u.transform)
        out.append(PartitionField(ids, next_id, u.transform, name))
        next_id += 1
    spec = PartitionSpec(spec_id, tuple(out))
    spec.validate(schema, case_sensitive=case_sensitive)
    return spec


@safe_repr
@dataclass
class _Request:
    source_ids: tuple[int, ...]
    column: str
    transform: Transform
    name: str | None

    @property
    def key(self) -> tuple[tuple[int, ...], str]:
        return (self.source_ids, str(self.transform))


def evolve_partition_spec(
    schema: Schema,
    current: PartitionSpec,
    requested: Iterable[str | UnboundPartitionField],
    *,
    format_version: int,
    specs: Iterable[PartitionSpec] = (),
    last_partition_id: int | None = None,
    case_sensitive: bool = True,
) -> tuple[PartitionSpec, int]:
    """The table's next spec holding ``requested`` fields, with partition field ids assigned.

    Spec: "Partition Evolution" and "Partitioning" (ids of equivalent fields are reused;
    writers must not add a spec equivalent to an existing one). Returns ``(spec, last id)``:

    * A requested field with the same source ids and transform as a field of ``current`` keeps
      its id (and its name unless the request names it: a rename).
    * v2+: a field of ``current`` that is not requested is dropped. A new field reuses the id of
      a field with the same source ids and transform (and the requested name, if given) from
      any spec in ``specs``; otherwise it gets ``last_partition_id + 1``, ...
    * v1: fields keep their positions: a field that is not requested is replaced by a void
      field with the same id and name, new fields are appended with new ids, and requests may
      not reorder existing fields.
    * A void field whose name a new field takes is renamed ``<name>_<field id>``.
    * Unnamed new fields get :func:`default_partition_name` (evolution style: ``id_bucket_16``).
    * When an existing spec is equivalent (:meth:`PartitionSpec.compatible_with`), it is
      returned with the unchanged last id; otherwise the new spec gets the next spec id.
    """
    check_field_format_version(format_version)
    all_specs = {s.spec_id: s for s in specs}
    all_specs.setdefault(current.spec_id, current)
    if last_partition_id is None:
        last_partition_id = max(
            (s.last_assigned_field_id for s in all_specs.values()),
            default=UNPARTITIONED_LAST_ASSIGNED_ID,
        )
    # never hand out an id some spec already uses, even if last-partition-id lags behind
    last = max([last_partition_id, *(s.last_assigned_field_id for s in all_specs.values())])

    if isinstance(requested, str):
        requested = parse_partition_fields(requested)
    requests: list[_Request] = []
    seen: set[tuple[tuple[int, ...], str]] = set()
    for item in requested:
        u = _coerce_request(item)
        ids, names = u.bind(schema, case_sensitive=case_sensitive)
        r = _Request(ids, names[0], u.transform, u.name)
        if r.key in seen:
            raise ValidationError("partition field is requested twice", field=str(u),
                                  value=str(u.transform))
        seen.add(r.key)
        requests.append(r)

    # match requests to fields of the current spec (same sources and transform)
    available: dict[tuple[tuple[int, ...], str], list[PartitionField]] = {}
    for f in current.fields:
        available.setdefault((f.source_ids, str(f.transform)), []).append(f)
    matched: list[PartitionField | None] = []
    for r in requests:
        candidates = available.get(r.key)
        matched.append(candidates.pop(0) if candidates else None)
    kept_ids = {m.field_id for m in matched if m is not None}

    void = parse_transform("void")
    fields: list[PartitionField] = []
    if format_version == 1:
        _check_v1_order(current, matched, requests)
        renamed = {m.field_id: r.name for m, r in zip(matched, requests, strict=True)
                   if m is not None and r.name is not None}
        for f in current.fields:
            if f.field_id in kept_ids:
                fields.append(PartitionField(f.source_ids, f.field_id, f.transform,
                                             renamed.get(f.field_id, f.name)))
            elif f.is_void:
                fields.append(f)
            else:  # v1 cannot drop a field: it becomes void, keeping its id and position
                fields.append(PartitionField(f.source_ids, f.field_id, void, f.name))
        for m, r in zip(matched, requests, strict=True):
            if m is None:
                last += 1
                fields.append(_new_field(r, last))
    else:
        history = [f for s in sorted(all_specs.values(), key=lambda s: -s.spec_id)
                   for f in s.fields]
        used_ids = set(kept_ids)
        for m, r in zip(matched, requests, strict=True):
            if m is not None:
                fields.append(PartitionField(m.source_ids, m.field_id, m.transform,
                                             r.name if r.name is not None else m.name))
                continue
            for old in history:  # reuse the id of an equivalent field of any spec
                if ((old.source_ids, str(old.transform)) == r.key
                        and (r.name is None or r.name == old.name)
                        and old.field_id not in used_ids):
                    r.name = old.name
                    field_id = old.field_id
                    break
            else:
                last += 1
                field_id = last
            used_ids.add(field_id)
            fields.append(_new_field(r, field_id))

    fields = _rename_shadowed_voids(fields)
    try:
        candidate = PartitionSpec(current.spec_id, tuple(fields))
    except ValidationError as e:
        raise ValidationError(f"cannot evolve the partition spec: {e.message}", field=e.field,
                              **({"value": e.value} if e.has_value else {})) from None
    for existing in sorted(all_specs.values(), key=lambda s: s.spec_id):
        if existing.compatible_with(candidate):
            return existing, last_partition_id
    validate_partition_spec(candidate, schema, case_sensitive=case_sensitive,
              carried=frozenset(f.field_id for f in current.fields))
    spec_id = max(all_specs) + 1
    new_last = max(last_partition_id, candidate.last_assigned_field_id)
    return PartitionSpec(spec_id, candidate.fields), new_last


def _check_v1_order(current: PartitionSpec, matched: list[PartitionField | None],
                    requests: list[_Request]) -> None:
    """Spec "Partition Evolution", v1: do not reorder fields; add new ones only at the end."""
    order = [current.fields.index(m) for m in matched if m is not None]
    if order != sorted(order):
        raise ValidationError(
            "v1 tables cannot reorder partition fields (spec: Partition Evolution)",
            field="partition spec", value=[str(r.transform) for r in requests],
        )
    seen_new = False
    for m in matched:
        if m is None:
            seen_new = True
        elif seen_new:
            raise ValidationError(
                "v1 tables can only add partition fields after the existing ones "
                "(spec: Partition Evolution)", field=m.name,
            )


def _new_field(r: _Request, field_id: int) -> PartitionField:
    name = r.name if r.name is not None else default_partition_name(r.column, r.transform,
                                                                    evolution=True)
    return PartitionField(r.source_ids, field_id, r.transform, name)


def _rename_shadowed_voids(fields: list[PartitionField]) -> list[PartitionField]:
    """Rename void fields whose name a non-void field also uses to ``<name>_<field id>``."""
    taken = {f.name for f in fields if not f.is_void}
    out: list[PartitionField] = []
    for f in fields:
        if f.is_void and f.name in taken:
            f = PartitionField(f.source_ids, f.field_id, f.transform, f"{f.name}_{f.field_id}")
        out.append(f)
    return out
