"""Schema history and partition spec history: a grid (rows = field ids, columns = versions)
and a graph of versions left to right with their changes on the edges.

Spec: "Schema Evolution" and "Partition Evolution" (fields are tracked by id). Draws what
:meth:`Table.schema_history` / :meth:`Table.spec_history` hold; reads nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from icenb.display.kit import dot as d
from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit.graph import Graph
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.table.explore.evolution_history import (
    DEFAULT,
    DOC,
    DROPPED,
    IDENTIFIER,
    MOVED,
    OPTIONAL,
    REQUIRED,
    FieldChange,
    FieldVersion,
    PartitionFieldVersion,
    SchemaHistory,
    SpecHistory,
    SpecUsage,
)

__all__ = ["schema_graph", "spec_graph"]

T = TypeVar("T")

#: change kind -> badge kind
_BADGE: dict[str, str] = {
    "added": "added", "dropped": "deleted", "renamed": "info", "promoted": "warn",
    "optional": "muted", "required": "warn", "doc": "muted", "default": "muted",
    "moved": "muted", "identifier": "info", "transform": "warn", "voided": "deleted",
}
_LEGEND = "type? = optional; [..] = changes from the version before"
#: Change kinds whose text is ``<path> <kind>``: the kind is a word to translate.
_WORD_KINDS = frozenset({OPTIONAL, REQUIRED, DOC, DEFAULT, MOVED})
_IDENTIFIER_PREFIX = "identifier fields: "


def _text(c: FieldChange) -> str:
    """A change's text with its English words in the display language (names stay)."""
    if c.kind in _WORD_KINDS and c.text.endswith(" " + c.kind):
        return c.text[: -len(c.kind)] + t(c.kind)
    if c.kind == IDENTIFIER and c.text.startswith(_IDENTIFIER_PREFIX):
        return t("identifier fields: {names}", names=c.text[len(_IDENTIFIER_PREFIX):])
    return c.text


class _LazyRows(Sequence[T]):
    """A sequence whose items are built only when read, so folding builds only shown rows."""

    def __init__(self, n: int, build: Callable[[int], T]) -> None:
        self._n = n
        self._build = build

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...

    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self._build(k) for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._build(i)


def _columns(n: int) -> tuple[list[int], int]:
    """Version columns shown (indices, an ellipsis index -1 where folded) and hidden count."""
    head, hidden, tail = fmt.fold(range(n), get_options().display_max_snapshots)
    cols = list(head) + ([-1] if hidden else []) + list(tail)
    return cols, hidden


def _badges(changes: Sequence[FieldChange]) -> str:
    return "".join(h.badge(t(c.kind), _BADGE.get(c.kind, "info")) for c in changes)


def _marks(changes: Sequence[FieldChange]) -> str:
    return f"[{', '.join(t(c.kind) for c in changes)}]" if changes else ""


def _changes_text(changes: Sequence[FieldChange], limit: int = 6) -> str:
    shown = [_text(c) for c in changes[:limit]]
    if len(changes) > limit:
        shown.append(fmt.hidden(len(changes) - limit, "changes"))
    return ", ".join(shown)


# --------------------------------------------------------------------------- schema history


def _schema_cell_html(v: FieldVersion | None, changes: Sequence[FieldChange]) -> str:
    if v is None:
        dropped = [c for c in changes if c.kind == DROPPED]
        return _badges(dropped) if dropped else ""
    req = "" if v.required else "?"
    return f"{h.code(v.name)} {h.esc(v.type + req)} {_badges(changes)}".rstrip()


def _schema_cell_text(v: FieldVersion | None, changes: Sequence[FieldChange]) -> str:
    if v is None:
        return f"[{t('dropped')}]" if any(c.kind == DROPPED for c in changes) else ""
    req = "" if v.required else "?"
    marks = _marks(changes)
    return f"{v.name} {v.type}{req}" + (f" {marks}" if marks else "")


def _schema_header(hist: SchemaHistory, i: int) -> str:
    if i < 0:
        return "…"
    s = hist.schemas[i]
    return t("schema {id}", id=s.schema_id) + (f" ({t('current')})" if s.is_current else "")


def _schema_grid(hist: SchemaHistory, html: bool) -> str:
    opts = get_options()
    cols, hidden_cols = _columns(len(hist.schemas))
    headers = [t("id"), t("field")] + [_schema_header(hist, i) for i in cols]
    more = h.muted(fmt.hidden(hidden_cols, "schemas")) if html else \
        "(" + t("{n:,} more", n=hidden_cols) + ")"

    def row(k: int) -> list[str]:
        f = hist.fields[k]
        latest = f.latest
        cells: list[str] = []
        for i in cols:
            if i < 0:
                cells.append(more)
            elif html:
                cells.append(_schema_cell_html(f.versions[i], f.changes[i]))
            else:
                cells.append(_schema_cell_text(f.versions[i], f.changes[i]))
        if html:
            label = h.code(latest.path) + (" " + h.badge(t("dropped"), "deleted")
                                           if f.dropped else "")
            return [h.esc(f.field_id), label, *cells]
        return [str(f.field_id), latest.path + (f" ({t('dropped')})" if f.dropped else ""),
                *cells]

    rows = _LazyRows(len(hist.fields), row)
    if html:
        return h.table(headers, rows, limit=opts.display_max_fields, what="fields")
    return tx.table(headers, rows, limit=opts.display_max_fields, what="fields")


def _schema_versions(hist: SchemaHistory, html: bool) -> str:
    opts = get_options()
    headers = [t("schema"), t("fields"), t("snapshots"), t("changes from the schema before")]

    def row(i: int) -> list[str]:
        s = hist.schemas[i]
        n_fields = len(list(_iter_ids(s.schema.fields)))
        changes = _changes_text(s.changes)
        if html:
            cur = " " + h.badge(t("current"), "current") if s.is_current else ""
            return [h.esc(s.schema_id) + cur, h.esc(fmt.count(n_fields)),
                    h.esc(fmt.count(s.snapshot_count)), h.esc(changes)]
        return [str(s.schema_id) + (" *" if s.is_current else ""), fmt.count(n_fields),
                fmt.count(s.snapshot_count), changes]

    rows = _LazyRows(len(hist.schemas), row)
    if html:
        return h.table(headers, rows, limit=opts.display_max_snapshots, what="schemas")
    return tx.table(headers, rows, limit=opts.display_max_snapshots, what="schemas")


def _iter_ids(fields: Sequence[Any]) -> Any:
    for f in fields:
        yield f.field_id
        inner = getattr(f.field_type, "fields", None)
        if inner:
            yield from _iter_ids(inner)


def _version_graph(title: str, name: str, labels: Sequence[tuple[str, str, bool]],
                   edges: Sequence[str], kind: str, what: str) -> tuple[str, str]:
    """DOT and text outline of versions left to right; ``labels``: (id, label, current)."""
    g = d.Dot(name, rankdir="LR")
    head, n_hidden, tail = fmt.fold(range(len(labels)), get_options().display_max_snapshots)
    order = list(head) + ([-1] if n_hidden else []) + list(tail)
    lines = [title]
    prev: str | None = None
    prev_index: int | None = None
    for i in order:
        if i < 0:
            node = "folded"
            g.node(node, fmt.hidden(n_hidden, what), kind="folded", style="rounded,dashed")
            lines.append(f"  {fmt.hidden(n_hidden, what)}")
        else:
            node_id, label, current = labels[i]
            node = node_id
            g.node(node, label, kind=kind, penwidth="2.5" if current else "1")
            change = edges[i]
            lines.append(f"  {label.replace(chr(10), ', ')}"
                         + (f" ({t('current')})" if current else "")
                         + (f": {change}" if change and i > 0 else ""))
        if prev is not None:
            if i >= 0 and prev_index is not None and prev_index == i - 1 and edges[i]:
                g.edge(prev, node, label=fmt.cut(edges[i]))
            else:
                g.edge(prev, node)
        prev, prev_index = node, (i if i >= 0 else None)
    return g.source(), "\n".join(lines)


def schema_graph(hist: SchemaHistory) -> Graph:
    """Schema versions as nodes left to right, each edge labelled with what changed."""
    labels = [(f"schema_{s.schema_id}",
               f"{t('schema {id}', id=s.schema_id)}\n"
               f"{fmt.plural(len(list(_iter_ids(s.schema.fields))), 'field')}"
               f"\n{fmt.plural(s.snapshot_count, 'snapshot')}", s.is_current)
              for s in hist.schemas]
    edges = ["\n".join(_text(c) for c in s.changes[:8])
             + (f"\n{fmt.hidden(len(s.changes) - 8, 'changes')}" if len(s.changes) > 8 else "")
             for s in hist.schemas]
    dot, text = _version_graph(t("schema versions"), "schema_history", labels, edges,
                               "schema", "schemas")
    return Graph(dot, text, title=t("Schema versions"), kind=t("Schema history"),
                 caption=t("one node per schema, edges list the changes from one to the next"))


@register(SchemaHistory, text_repr=True)
def _schema_history(hist: SchemaHistory) -> Rendered:
    n = len(hist.schemas)
    current = t("current schema {id}", id=hist.current_schema_id)
    sub = f"{fmt.plural(n, 'schema')}, {fmt.plural(len(hist.fields), 'field id')}, {current}"
    without = t("{snapshots} without a known schema id",
                snapshots=fmt.plural(hist.snapshots_without_schema, "snapshot"))
    extra = h.muted(without) if hist.snapshots_without_schema else ""
    graph = schema_graph(hist)
    legend = t(_LEGEND)
    body = (h.section(t("Fields by id across schemas"), _schema_grid(hist, True), open=True,
                      count=fmt.plural(len(hist.fields), "field"))
            + h.muted(legend)
            + h.section(t("Schema versions"), _schema_versions(hist, True), count=str(n))
            + extra + h.section(t("Graph"), graph.html_fragment()))
    text = "\n".join([f"{t('Schema history')}: {sub}", "", _schema_grid(hist, False), legend,
                      "", _schema_versions(hist, False)]
                     + ([t("{n:,} snapshots without a known schema id",
                            n=hist.snapshots_without_schema)]
                        if hist.snapshots_without_schema else []))
    card_sub = f"{fmt.plural(len(hist.fields), 'field id')}, {current}"
    return Rendered(h.card(t("Schema history"), fmt.plural(n, "schema"), h.esc(card_sub),
                           body), text)


# --------------------------------------------------------------------------- spec history


def _spec_cell_html(v: PartitionFieldVersion | None, changes: Sequence[FieldChange]) -> str:
    if v is None:
        dropped = [c for c in changes if c.kind == DROPPED]
        return _badges(dropped) if dropped else ""
    return f"{h.code(v.name)} {h.esc(v.term)} {_badges(changes)}".rstrip()


def _spec_cell_text(v: PartitionFieldVersion | None, changes: Sequence[FieldChange]) -> str:
    if v is None:
        return f"[{t('dropped')}]" if any(c.kind == DROPPED for c in changes) else ""
    marks = _marks(changes)
    return f"{v.name} {v.term}" + (f" {marks}" if marks else "")


def _spec_header(hist: SpecHistory, i: int) -> str:
    if i < 0:
        return "…"
    s = hist.specs[i]
    return t("spec {id}", id=s.spec_id) + (f" ({t('default')})" if s.is_default else "")


def _spec_grid(hist: SpecHistory, html: bool) -> str:
    opts = get_options()
    cols, hidden_cols = _columns(len(hist.specs))
    headers = [t("id"), t("field"), t("source")] + [_spec_header(hist, i) for i in cols]
    more = h.muted(fmt.hidden(hidden_cols, "specs")) if html else \
        "(" + t("{n:,} more", n=hidden_cols) + ")"

    def row(k: int) -> list[str]:
        f = hist.fields[k]
        latest = f.latest
        cells = []
        for i in cols:
            if i < 0:
                cells.append(more)
            elif html:
                cells.append(_spec_cell_html(f.versions[i], f.changes[i]))
            else:
                cells.append(_spec_cell_text(f.versions[i], f.changes[i]))
        gone = f.removed
        if html:
            label = h.code(latest.name) + (" " + h.badge(t("removed"), "deleted") if gone
                                           else "")
            return [h.esc(f.field_id), label, h.esc(latest.source), *cells]
        return [str(f.field_id), latest.name + (f" ({t('removed')})" if gone else ""),
                latest.source, *cells]

    rows = _LazyRows(len(hist.fields), row)
    if not hist.fields:
        none = t("no partition fields in any spec")
        return h.muted(none) if html else f"({none})"
    if html:
        return h.table(headers, rows, limit=opts.display_max_fields, what="fields")
    return tx.table(headers, rows, limit=opts.display_max_fields, what="fields")


def _n(v: int | None) -> str:
    return fmt.count(v)


def _usage_cells(u: SpecUsage | None) -> list[str]:
    if u is None:
        return ["0", "0", "0", "0"]
    return [_n(u.data_files), _n(u.data_records), _n(u.delete_files), _n(u.delete_records)]


def _spec_versions(hist: SpecHistory, html: bool) -> str:
    opts = get_options()
    headers = [t(x) for x in ("spec", "fields", "data files", "records", "delete files",
                              "delete records", "changes from the spec before")]

    def row(i: int) -> list[str]:
        s = hist.specs[i]
        terms = ", ".join(v.term for v in s.fields) or t("unpartitioned")
        changes = _changes_text(s.changes)
        usage = _usage_cells(s.usage)
        if html:
            cur = " " + h.badge(t("default"), "current") if s.is_default else ""
            return [h.esc(s.spec_id) + cur, h.esc(terms), *(h.esc(c) for c in usage),
                    h.esc(changes)]
        return [str(s.spec_id) + (" *" if s.is_default else ""), terms, *usage, changes]

    rows = _LazyRows(len(hist.specs), row)
    if html:
        out = h.table(headers, rows, limit=opts.display_max_snapshots, what="specs")
    else:
        out = tx.table(headers, rows, limit=opts.display_max_snapshots, what="specs")
    for u in hist.unknown_spec_usage:
        line = t("spec id {id} (not in the metadata): {data} data files, {deletes} delete files",
                 id=u.spec_id, data=_n(u.data_files), deletes=_n(u.delete_files))
        out += ("\n" + line) if not html else h.error(line)
    return out


def spec_graph(hist: SpecHistory) -> Graph:
    """Partition specs as nodes left to right (with their file counts), edges with changes."""
    labels = []
    for s in hist.specs:
        terms = "\n".join(v.term for v in s.fields[:6]) or t("unpartitioned")
        if len(s.fields) > 6:
            terms += "\n" + fmt.hidden(len(s.fields) - 6, "fields")
        u = s.usage
        files = t("no live files") if u is None else \
            t("{data} data / {deletes} delete files", data=_n(u.data_files),
              deletes=_n(u.delete_files))
        labels.append((f"spec_{s.spec_id}", f"{t('spec {id}', id=s.spec_id)}\n{terms}\n{files}",
                       s.is_default))
    edges = ["\n".join(_text(c) for c in s.changes[:8]) for s in hist.specs]
    dot, text = _version_graph(t("partition specs"), "spec_history", labels, edges, "spec",
                               "specs")
    return Graph(dot, text, title=t("Partition specs"), kind=t("Spec history"),
                 caption=t("one node per partition spec with the live files written with it"))


@register(SpecHistory, text_repr=True)
def _spec_history(hist: SpecHistory) -> Rendered:
    n = len(hist.specs)
    where = t("no snapshot") if hist.snapshot_id is None else t("snapshot {id}",
                                                                 id=hist.snapshot_id)
    default = t("default spec {id}; files in {where}", id=hist.default_spec_id, where=where)
    sub = f"{fmt.plural(n, 'spec')}, {fmt.plural(len(hist.fields), 'partition field')}, {default}"
    graph = spec_graph(hist)
    body = (h.section(t("Partition fields by id across specs"), _spec_grid(hist, True),
                      open=True, count=fmt.plural(len(hist.fields), "field"))
            + h.section(t("Specs and the live files that use them"),
                        _spec_versions(hist, True), open=True, count=str(n))
            + h.section(t("Graph"), graph.html_fragment()))
    text = "\n".join([f"{t('Spec history')}: {sub}", "", _spec_grid(hist, False), "",
                      _spec_versions(hist, False)])
    card_sub = f"{fmt.plural(len(hist.fields), 'partition field')}, {default}"
    return Rendered(h.card(t("Partition spec history"), fmt.plural(n, "spec"),
                           h.esc(card_sub), body), text)

