"""Reprs of types, fields, schemas, partition specs and sort orders (spec: Schemas, Partitioning,
Sorting).

A schema is drawn as a tree: struct, list and map children are indented under their parent,
and every nested field counts toward ``display_max_fields``. Partition and sort fields name
their source columns only when a schema is given (``spec_fragment``/``sort_order_fragment``);
a spec or order alone shows source ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.reprs import safe_repr
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.sort_order import NullOrder, SortField, SortOrder
from icenb.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    NestedType,
    StructType,
)
from icenb.spec.values import to_human

__all__ = [
    "field_rows",
    "fold_html",
    "fold_text",
    "partition_spec_repr",
    "schema_repr",
    "sort_order_fragment",
    "sort_order_repr",
    "spec_fragment",
    "type_name",
]


# --------------------------------------------------------------------------- types


def type_name(t: IcebergType) -> str:
    """A short type label: primitives as the spec writes them, nested types by their kind."""
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return "list"
    if isinstance(t, MapType):
        return "map"
    return str(t)


@register(IcebergType)
def type_repr(typ: IcebergType) -> Rendered:
    """A type as one line (spec: Schemas and Data Types); nested types as a field tree."""
    if isinstance(typ, NestedType) and typ.fields:
        rows, n_hidden, total = _tree(typ.fields, frozenset())
        body = _fields_html(rows, n_hidden)
        return Rendered(h.card(t("Type"), type_name(typ), h.muted(fmt.plural(total, "field")),
                               body), str(typ))
    return Rendered(h.code(str(typ)), str(typ))


# --------------------------------------------------------------------------- fields


@safe_repr
@dataclass(frozen=True)
class FieldRow:
    """One line of a schema tree: the field and how deep it sits."""

    depth: int
    field: NestedField
    identifier: bool


def _walk(fields: Sequence[NestedField], depth: int, ident: frozenset[int]
          ) -> Iterator[FieldRow]:
    for f in fields:
        yield FieldRow(depth, f, f.field_id in ident)
        t = f.field_type
        if isinstance(t, NestedType):
            yield from _walk(t.fields, depth + 1, ident)


def _count(fields: Sequence[NestedField]) -> int:
    n = 0
    for f in fields:
        n += 1
        if isinstance(f.field_type, NestedType):
            n += _count(f.field_type.fields)
    return n


def _tree(fields: Sequence[NestedField], ident: frozenset[int]
          ) -> tuple[list[FieldRow], int, int]:
    """Rows to show (head then tail), the number hidden between them, and the total count.

    Only the shown rows are built: the walk stops after the head, and the tail comes from a
    second walk that skips the counted middle (cost is the count, not the rendering).
    """
    limit = get_options().display_max_fields
    total = _count(fields)
    if total <= limit:
        return list(_walk(fields, 0, ident)), 0, total
    tail_n = limit // 2
    head_n = limit - tail_n
    rows: list[FieldRow] = []
    for i, row in enumerate(_walk(fields, 0, ident)):
        if i < head_n or i >= total - tail_n:
            rows.append(row)
    return rows, total - limit, total


def field_rows(schema: Schema) -> tuple[list[FieldRow], int, int]:
    """The schema's tree rows as shown under ``display_max_fields``: (rows, hidden, total)."""
    return _tree(schema.fields, frozenset(schema.identifier_field_ids))


def _default(f: NestedField, value: object) -> str:
    return to_human(f.field_type, value)


def _defaults_text(f: NestedField) -> str:
    """Spec: Default values (v3) - ``initial-default`` fills old rows, ``write-default`` new."""
    parts = []
    if f.initial_default is not None:
        parts.append(f"initial-default={fmt.cut(_default(f, f.initial_default))}")
    if f.write_default is not None:
        parts.append(f"write-default={fmt.cut(_default(f, f.write_default))}")
    return ", ".join(parts)


def _fields_html(rows: list[FieldRow], n_hidden: int) -> str:
    with_defaults = any(r.field.initial_default is not None or r.field.write_default is not None
                        for r in rows)
    with_docs = any(r.field.doc for r in rows)
    headers = [t("id"), t("name"), t("type"), ""]
    if with_defaults:
        headers.append(t("defaults"))
    if with_docs:
        headers.append(t("doc"))
    cells: list[list[str]] = []
    for r in rows:
        f = r.field
        pad = "&#160;&#160;&#160;" * r.depth
        marker = "└ " if r.depth else ""
        name = f"{pad}{h.muted(marker) if marker else ''}{h.code(f.name)}"
        req = t("required") if f.required else h.muted(t("optional"))
        if r.identifier:
            req += " " + h.badge(t("identifier"), "info")
        row = [h.esc(f.field_id), name, h.code(type_name(f.field_type)), req]
        if with_defaults:
            row.append(h.esc(_defaults_text(f)))
        if with_docs:
            row.append(h.esc(f.doc or ""))
        cells.append(row)
    return fold_html(headers, cells, n_hidden, "fields")


def _fields_text(rows: list[FieldRow], n_hidden: int) -> str:
    lines: list[list[str]] = []
    for r in rows:
        f = r.field
        extra = []
        if r.identifier:
            extra.append("[" + t("identifier") + "]")
        d = _defaults_text(f)
        if d:
            extra.append(d)
        if f.doc:
            extra.append(f"-- {fmt.cut(f.doc)}")
        lines.append([str(f.field_id), "  " * r.depth + f.name, type_name(f.field_type),
                      t("required") if f.required else t("optional"), "  ".join(extra)])
    id_w = max((len(x[0]) for x in lines), default=0)
    widths = [max((tx.width(x[i]) for x in lines), default=0) for i in range(1, 4)]

    def line(x: list[str]) -> str:
        cols = [x[0].rjust(id_w + 1),
                *(tx.pad(c, w) for c, w in zip(x[1:4], widths, strict=True)), x[4]]
        return "  ".join(cols).rstrip()

    head_n = len(lines) - len(lines) // 2 if n_hidden else len(lines)
    out = [line(x) for x in lines[:head_n]]
    if n_hidden:
        out.append(" " + fmt.hidden(n_hidden, "fields"))
        out.extend(line(x) for x in lines[head_n:])
    return "\n".join(out)


@register(NestedField)
def nested_field_repr(f: NestedField) -> Rendered:
    """A field: id, name, type, required, doc and defaults; nested children as a tree."""
    rows, n_hidden, _ = _tree((f,), frozenset())
    return Rendered(_fields_html(rows, n_hidden), _fields_text(rows, n_hidden))


# --------------------------------------------------------------------------- schema


def _identifier_names(schema: Schema) -> tuple[str, ...]:
    return tuple(schema.column_name(i) or t("id {id}", id=i)
                 for i in schema.identifier_field_ids)


@register(Schema, text_repr=True)
def schema_repr(schema: Schema) -> Rendered:
    """A schema as an indented field tree (spec: Schemas; identifier fields marked)."""
    rows, n_hidden, total = field_rows(schema)
    names = _identifier_names(schema)
    ident = f" ({t('identifier')}: {', '.join(names)})" if names else ""
    top = len(schema.fields)
    sub_parts = [fmt.plural(top, "column")]
    if total != top:
        sub_parts.append(t("{fields} with nested", fields=fmt.plural(total, "field")))
    if names:
        sub_parts.append(t("identifier") + ": " + ", ".join(names))
    html = h.card(t("Schema"), t("schema {id}", id=schema.schema_id),
                  h.esc(" · ".join(sub_parts)),
                  _fields_html(rows, n_hidden) if rows else h.muted(t("no columns")))
    text = f"{t('Schema')} {schema.schema_id}{ident}"
    if rows:
        text += "\n" + _fields_text(rows, n_hidden)
    return Rendered(html, text)


# --------------------------------------------------------------------------- partition spec


def _source(ids: Sequence[int], schema: Schema | None) -> tuple[str, str]:
    """(html, text) naming source columns; ids only without a schema, flagged when missing."""
    html_parts, text_parts = [], []
    for i in ids:
        if schema is None:
            html_parts.append(h.esc(i))
            text_parts.append(str(i))
            continue
        name = schema.column_name(i)
        if name is None:
            html_parts.append(f"{h.esc(i)} {h.badge(t('not in schema'), 'warn')}")
            text_parts.append(f"{i} ({t('not in schema')})")
        else:
            html_parts.append(f"{h.code(name)} {h.muted(f'({i})')}")
            text_parts.append(f"{name} ({i})")
    return ", ".join(html_parts), ", ".join(text_parts)


def _spec_rows(spec: PartitionSpec, schema: Schema | None
               ) -> tuple[list[list[str]], list[list[str]], int]:
    limit = get_options().display_max_rows
    head, n_hidden, tail = fmt.fold(spec.fields, limit)
    html_rows, text_rows = [], []
    for f in (*head, *tail):
        src_h, src_t = _source(f.source_ids, schema)
        tr = h.code(f.transform) + (" " + h.badge("void", "muted") if f.is_void else "")
        html_rows.append([h.esc(f.field_id), h.code(f.name), tr, src_h])
        text_rows.append([str(f.field_id), f.name, str(f.transform), src_t])
    return html_rows, text_rows, n_hidden


def spec_fragment(spec: PartitionSpec, schema: Schema | None = None) -> Rendered:
    """A partition spec's fields; source column names resolved only when ``schema`` is given.

    Spec: Partitioning. A spec with no fields, or only ``void`` fields (v1 drops), is shown as
    unpartitioned.
    """
    title = t("spec {id}", id=spec.spec_id)
    if not spec.fields:
        return Rendered(f"{h.muted(title + ':')} {h.badge(t('unpartitioned'), 'muted')}",
                        f"{title}: {t('unpartitioned')}")
    html_rows, text_rows, n_hidden = _spec_rows(spec, schema)
    headers = [t("field id"), t("name"), t("transform"), t("source")]
    note = " " + h.badge(t("unpartitioned"), "muted") if spec.is_unpartitioned else ""
    html = f"{h.muted(title)}{note}" + fold_html(headers, html_rows, n_hidden,
                                                     "partition fields")
    head_line = title + (" (" + t("unpartitioned: all fields void") + ")"
                         if spec.is_unpartitioned else "")
    text = head_line + "\n" + fold_text(headers, text_rows, n_hidden, "partition fields")
    return Rendered(html, text)


def fold_html(headers: list[str], rows: list[list[str]], n_hidden: int, what: str) -> str:
    """An HTML table of rows already folded (head + tail, as ``fmt.fold`` splits them) with the
    fold line between head and tail."""
    if not n_hidden:
        return h.table(headers, rows, what=what)
    split = len(rows) - len(rows) // 2
    table = h.table(headers, rows[:split], what=what)
    line = (f'<tr class="icenb-fold"><td colspan="{len(headers)}">'
            f"{h.esc(fmt.hidden(n_hidden, what))}</td></tr>")
    rest = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows[split:])
    return table[: -len("</tbody></table>")] + line + rest + "</tbody></table>"


def fold_text(headers: list[str], rows: list[list[str]], n_hidden: int, what: str,
               indent: str = "  ") -> str:
    if not n_hidden:
        return tx.table(headers, rows, what=what, indent=indent)
    split = len(rows) - len(rows) // 2
    full = tx.table(headers, rows, what=what, indent=indent).splitlines()
    return "\n".join([*full[: 1 + split], indent + fmt.hidden(n_hidden, what), *full[1 + split:]])


@register(PartitionSpec)
def partition_spec_repr(spec: PartitionSpec) -> Rendered:
    """A partition spec alone (source ids; the table card resolves names with its schema)."""
    r = spec_fragment(spec, None)
    return Rendered(h.card(t("Partition spec"), t("spec {id}", id=spec.spec_id), "", r.html),
                    r.text)


@register(PartitionField)
def partition_field_repr(f: PartitionField) -> Rendered:
    """One partition field: id, name, transform and source ids (spec: Partitioning)."""
    sources = ", ".join(str(i) for i in f.source_ids)
    html = (f"{h.muted(f.field_id)} {h.code(f.name)} = {h.code(f.transform)}"
            f"({h.esc(sources)})")
    return Rendered(html, str(f))


# --------------------------------------------------------------------------- sort order


def _sort_field_text(f: SortField, src: str) -> str:
    nulls = t("nulls first") if f.null_order is NullOrder.NULLS_FIRST else t("nulls last")
    name = str(f.transform)
    expr = src if name == "identity" else f"{name}({src})"
    return f"{expr} {f.direction.value} {nulls}"


def sort_order_fragment(order: SortOrder, schema: Schema | None = None) -> Rendered:
    """A sort order's fields; source names resolved only when ``schema`` is given.

    Spec: Sorting. Order id 0 with no fields is the unsorted order.
    """
    title = t("sort order {id}", id=order.order_id)
    if order.is_unsorted:
        return Rendered(f"{h.muted(title + ':')} {h.badge(t('unsorted'), 'muted')}",
                        f"{title}: {t('unsorted')}")
    limit = get_options().display_max_rows
    head, n_hidden, tail = fmt.fold(order.fields, limit)
    html_rows, text_rows = [], []
    for f in (*head, *tail):
        src_h, src_t = _source(f.source_ids, schema)
        nulls = t(f.null_order.value.replace("-", " "))
        html_rows.append([h.code(f.transform), src_h, h.esc(f.direction.value), h.esc(nulls)])
        text_rows.append([str(f.transform), src_t, f.direction.value, nulls])
    headers = [t("transform"), t("source"), t("direction"), t("nulls")]
    html = h.muted(title) + fold_html(headers, html_rows, n_hidden, "sort fields")
    text = title + "\n" + fold_text(headers, text_rows, n_hidden, "sort fields")
    return Rendered(html, text)


@register(SortOrder)
def sort_order_repr(order: SortOrder) -> Rendered:
    """A sort order alone (source ids; the table card resolves names with its schema)."""
    r = sort_order_fragment(order, None)
    return Rendered(h.card(t("Sort order"), t("sort order {id}", id=order.order_id), "", r.html),
                    r.text)


@register(SortField)
def sort_field_repr(f: SortField) -> Rendered:
    """One sort field: transform of source ids, direction, null order (spec: Sorting)."""
    text = _sort_field_text(f, ", ".join(str(i) for i in f.source_ids))
    return Rendered(h.code(text), str(f))
