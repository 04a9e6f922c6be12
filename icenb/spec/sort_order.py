"""Sort orders: fields, JSON (Appendix C), validation, ``satisfies`` and user strings.

Spec sections: "Sorting", Appendix C "Sort Orders", Appendix E (``source-id`` /
``source-ids`` by format version). Like partition specs, sort orders are not bound to a
schema; :meth:`SortOrder.validate` and :func:`build_sort_order` check one against a schema.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, cast

from icenb.errors import InvalidMetadata, UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    as_object,
    field_path,
    invalid,
    json_list,
    req_int,
    require,
)
from icenb.spec.partition_spec import (
    TermParser,
    check_field_format_version,
    check_source_column,
    single_source,
    source_ids_from_json,
    source_ids_of,
    source_ids_to_json,
    sources_of,
    transform_from_json,
)
from icenb.spec.schema import Schema
from icenb.spec.transforms import Transform

__all__ = [
    "UNSORTED",
    "UNSORTED_ORDER_ID",
    "NullOrder",
    "SortDirection",
    "SortField",
    "SortOrder",
    "UnboundSortField",
    "build_sort_order",
    "parse_sort_field",
    "parse_sort_order",
    "sort_order_from_json",
    "sort_order_to_json",
]

#: Order id 0 is reserved for the unsorted order (spec: "Sorting").
UNSORTED_ORDER_ID = 0


class SortDirection(str, Enum):
    """``asc`` or ``desc`` (the JSON strings of Appendix C)."""

    ASC = "asc"
    DESC = "desc"

    def __str__(self) -> str:
        return self.value


class NullOrder(str, Enum):
    """``nulls-first`` or ``nulls-last`` (the JSON strings of Appendix C)."""

    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def default_for(cls, direction: SortDirection) -> NullOrder:
        """Nulls first when ascending, last when descending (Spark's and Java's default)."""
        return cls.NULLS_FIRST if direction is SortDirection.ASC else cls.NULLS_LAST


def _enum(kind: type[SortDirection] | type[NullOrder], value: Any) -> Any:
    """The member of ``kind`` for ``value`` (a member or its JSON string)."""
    try:
        return kind(value)
    except ValueError:
        raise ValidationError(f"invalid {kind.__name__}", field=kind.__name__,
                              value=value) from None


@safe_repr
@dataclass(frozen=True)
class SortField:
    """One sort key: source column id(s), transform, direction and null order."""

    source_ids: tuple[int, ...]
    transform: Transform
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder = NullOrder.NULLS_FIRST

    def __post_init__(self) -> None:
        object.__setattr__(self, "source_ids", source_ids_of(self.source_ids, "sort", "source-ids"))
        object.__setattr__(self, "direction", _enum(SortDirection, self.direction))
        object.__setattr__(self, "null_order", _enum(NullOrder, self.null_order))

    @property
    def source_id(self) -> int:
        """The first (for single-argument transforms: the only) source column id."""
        return self.source_ids[0]

    def satisfies(self, other: SortField) -> bool:
        """Whether data sorted by this field is also sorted by ``other``.

        Same sources, direction and null order, and this transform satisfies the order of the
        other (e.g. ``identity`` satisfies ``day``, ``hour`` satisfies ``day``).
        """
        if self == other:
            return True
        if (self.source_ids != other.source_ids or self.direction != other.direction
                or self.null_order != other.null_order):
            return False
        return self.transform.satisfies_order_of(other.transform)

    def __str__(self) -> str:
        sources = ", ".join(str(i) for i in self.source_ids)
        nulls = "NULLS FIRST" if self.null_order is NullOrder.NULLS_FIRST else "NULLS LAST"
        return f"{self.transform}({sources}) {self.direction.value.upper()} {nulls}"


@safe_repr
@dataclass(frozen=True)
class SortOrder:
    """A sort order: ``order_id`` and sort fields; id 0 is the unsorted order (no fields)."""

    order_id: int
    fields: tuple[SortField, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        oid: Any = self.order_id
        if not isinstance(oid, int) or isinstance(oid, bool) or oid < 0:
            raise ValidationError("sort order id must be a non-negative int", field="order-id",
                                  value=oid)
        for f in self.fields:
            if not isinstance(cast(Any, f), SortField):
                raise ValidationError("not a SortField", field="fields", value=f)
        if self.fields and oid == UNSORTED_ORDER_ID:
            raise ValidationError("sort order id 0 is reserved for the unsorted order",
                                  field="order-id", value=oid)
        if not self.fields and oid != UNSORTED_ORDER_ID:
            raise ValidationError("the unsorted order (no fields) must have order id 0",
                                  field="order-id", value=oid)

    @property
    def is_unsorted(self) -> bool:
        return not self.fields

    @property
    def is_sorted(self) -> bool:
        return bool(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __str__(self) -> str:
        if not self.fields:
            return f"sort order {self.order_id} (unsorted)"
        return f"sort order {self.order_id} [" + ", ".join(str(f) for f in self.fields) + "]"

    def same_order(self, other: SortOrder) -> bool:
        """Same fields, ignoring ``order_id`` (a writer reuses an existing equal order)."""
        return self.fields == other.fields

    def satisfies(self, other: SortOrder) -> bool:
        """Whether data sorted by this order is also sorted by ``other``.

        Any order satisfies the unsorted order; otherwise ``other`` must not have more fields
        and each of its fields must be satisfied by this order's field at the same position.
        """
        if other.is_unsorted:
            return True
        if len(other.fields) > len(self.fields):
            return False
        return all(a.satisfies(b) for a, b in zip(self.fields, other.fields, strict=False))

    def validate(self, schema: Schema) -> None:
        """Check the fields against ``schema`` (writers): sources exist, are primitive and not
        inside a list or map, and the transform accepts the source type. Unknown transforms
        raise ``UnsupportedFeature``.
        """
        for i, f in enumerate(self.fields):
            label = f"sort field {i} ({f})"
            if f.transform.is_unknown:
                raise UnsupportedFeature("cannot write a sort order with an unknown transform",
                                         field=label, value=str(f.transform))
            if len(f.source_ids) != 1:
                raise ValidationError(f"transform {f.transform} takes exactly one source column",
                                      field=label, value=list(f.source_ids))
            check_source_column(label, f.source_id, f.transform, schema)


#: The unsorted order (id 0, no fields).
UNSORTED = SortOrder(UNSORTED_ORDER_ID, ())


# --------------------------------------------------------------------------- JSON


def _enum_from_json(kind: type[SortDirection] | type[NullOrder], value: Any,
                    where: str) -> Any:
    if isinstance(value, str):
        key = value.strip().lower().replace("_", "-").replace(" ", "-")
        for member in kind:
            if member.value == key:
                return member
    raise InvalidMetadata(f"invalid {where.rsplit('.', 1)[-1]}", field=where, value=value)


def _sort_field_from_json(obj: Any, where: str) -> SortField:
    obj = as_object(obj, where, "a sort field")
    for key in ("transform", "direction", "null-order"):
        require(obj, key, where)
    transform = transform_from_json(obj["transform"], field_path(where, "transform"))
    source_ids = source_ids_from_json(obj, where)
    direction = _enum_from_json(SortDirection, obj["direction"], field_path(where, "direction"))
    null_order = _enum_from_json(NullOrder, obj["null-order"], field_path(where, "null-order"))
    return SortField(source_ids, transform, direction, null_order)


def sort_order_from_json(obj: Any, *, format_version: int,
                         where: str = "sort-order") -> SortOrder:
    """Read a sort order object ``{"order-id": .., "fields": [..]}`` (Appendix C).

    ``source-ids`` defaults to ``[source-id]`` (Appendix E); unknown transforms are kept.
    """
    check_field_format_version(format_version)
    obj = as_object(obj, where, "a sort order")
    order_id = req_int(obj, "order-id", where, bits=None)
    fields = tuple(_sort_field_from_json(f, f"{field_path(where, 'fields')}[{i}]")
                   for i, f in enumerate(json_list(obj, "fields", where, required=True)))
    try:
        return SortOrder(order_id, fields)
    except ValidationError as e:
        raise invalid(e, where) from None


def sort_order_to_json(order: SortOrder, format_version: int) -> dict[str, Any]:
    """Serialize a sort order for table metadata of ``format_version`` (Appendix C, E)."""
    check_field_format_version(format_version)
    fields: list[dict[str, Any]] = []
    for f in order.fields:
        item: dict[str, Any] = {"transform": str(f.transform)}
        source_ids_to_json(item, f.source_ids, format_version)
        item["direction"] = f.direction.value
        item["null-order"] = f.null_order.value
        fields.append(item)
    return {"order-id": order.order_id, "fields": fields}


# --------------------------------------------------------------------------- user strings


@safe_repr
@dataclass(frozen=True)
class UnboundSortField:
    """A sort field requested by a user: sources by name or id, transform, direction, nulls."""

    sources: tuple[str | int, ...]
    transform: Transform
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", sources_of(self.sources, "sort"))
        object.__setattr__(self, "direction", _enum(SortDirection, self.direction))
        if self.null_order is not None:
            object.__setattr__(self, "null_order", _enum(NullOrder, self.null_order))

    def bind(self, schema: Schema, *, case_sensitive: bool = True) -> SortField:
        """Resolve column names to ids; the null order defaults from the direction."""
        ids = tuple(
            s if isinstance(s, int) else schema.find_field(s, case_sensitive).field_id
            for s in self.sources
        )
        nulls = self.null_order or NullOrder.default_for(self.direction)
        return SortField(ids, self.transform, self.direction, nulls)


def parse_sort_order(text: str) -> list[UnboundSortField]:
    """Parse ``"ts DESC NULLS LAST, day(ts), bucket(4, id) ASC"`` into unbound sort fields.

    Each item is a transform term (as :func:`icenb.spec.partition_spec.parse_term`) followed by
    an optional ``ASC``/``DESC`` and an optional ``NULLS FIRST``/``NULLS LAST``; without a null
    order, ascending sorts put nulls first and descending ones last.
    """
    p = TermParser(text)

    def item() -> UnboundSortField:
        sources, transform = p.term()
        direction = SortDirection.ASC
        if p.at_keyword("asc", "desc"):
            direction = SortDirection(p.next().text.lower())
        nulls: NullOrder | None = None
        if p.at_keyword("nulls"):
            p.next()
            if not p.at_keyword("first", "last"):
                raise p.error("expected FIRST or LAST after NULLS")
            nulls = NullOrder("nulls-" + p.next().text.lower())
        return UnboundSortField(sources, transform, direction, nulls)

    return [] if p.at_end() else p.comma_list(item, "ASC, DESC, NULLS, ',' or the end")


def parse_sort_field(text: str) -> UnboundSortField:
    """Parse exactly one sort item, e.g. ``"day(ts) DESC"``."""
    return single_source(parse_sort_order(text), "sort field", text)


def build_sort_order(
    schema: Schema,
    fields: str | Iterable[str | UnboundSortField],
    *,
    order_id: int = 1,
    case_sensitive: bool = True,
) -> SortOrder:
    """A validated sort order from user strings; no fields gives :data:`UNSORTED`.

    ``build_sort_order(schema, "ts DESC NULLS LAST, id")``.
    """
    items: list[UnboundSortField] = []
    if isinstance(fields, str):
        items = parse_sort_order(fields)
    else:
        for item in fields:
            if isinstance(item, str):
                items.extend(parse_sort_order(item))
            else:
                items.append(item)
    if not items:
        return UNSORTED
    order = SortOrder(order_id, tuple(u.bind(schema, case_sensitive=case_sensitive)
                                      for u in items))
    order.validate(schema)
    return order
