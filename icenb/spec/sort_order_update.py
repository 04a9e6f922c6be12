"""Sort-order replacement as a pure builder (spec: "Sorting": order id 0 is reserved for the
unsorted order; sources are primitive columns; an equal order already in the table is reused
with its id, as Iceberg Java 1.10's ``TableMetadata.Builder`` does)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from icenb.errors import ValidationError
from icenb.spec.schema import Schema
from icenb.spec.sort_order import (
    UNSORTED,
    SortField,
    SortOrder,
    UnboundSortField,
    parse_sort_order,
)

__all__ = ["replace_sort_order"]


def replace_sort_order(
    schema: Schema,
    fields: str | Iterable[str | UnboundSortField | SortField],
    *,
    existing: Sequence[SortOrder] = (),
    case_sensitive: bool = True,
) -> SortOrder:
    """The table's new sort order, validated against ``schema``.

    ``fields`` is a string like ``"ts DESC NULLS LAST, bucket(4, id)"`` or a sequence of such
    strings and sort fields. No fields gives the unsorted order (id 0). An order equal to one in
    ``existing`` (the table's orders) is returned with its id; otherwise the next id (ids start
    at 1; spec "Sorting": 0 is reserved for unsorted). Sources must be primitive columns not
    inside a list or map, and each transform must accept its source type.
    """
    items: list[UnboundSortField | SortField] = []
    if isinstance(fields, str):
        items.extend(parse_sort_order(fields))
    else:
        for item in fields:
            if isinstance(item, str):
                items.extend(parse_sort_order(item))
            elif isinstance(item, (UnboundSortField, SortField)):
                items.append(item)
            else:
                raise ValidationError("a sort field must be a string, UnboundSortField or "
                                      "SortField", field="sort_by", value=item)
    bound = tuple(
        i if isinstance(i, SortField) else i.bind(schema, case_sensitive=case_sensitive)
        for i in items
    )
    if not bound:
        return UNSORTED
    for order in existing:
        if order.fields == bound:
            order.validate(schema)
            return order
    next_id = max((o.order_id for o in existing), default=0) + 1
    order = SortOrder(next_id, bound)
    order.validate(schema)
    return order
