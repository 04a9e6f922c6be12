"""Reprs of view metadata, view versions, representations and the version log.

Spec: "Iceberg View Spec" (View Metadata, Versions, Representations, Version log) and the early
draft (``view-spec-draft.txt``) for documents loaded as ``DraftViewMetadata``. SQL text is
escaped and shown in full up to ``SQL_LIMIT`` characters, then cut with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.registry import Rendered, register, render
from icenb.display.schema_repr import fold_html, fold_text
from icenb.display.snapshot_repr import properties_fragment
from icenb.labels import t
from icenb.options import get_options
from icenb.spec.snapshot import ENGINE_NAME  # also a view version summary key
from icenb.spec.view_metadata import (
    DraftSQLViewRepresentation,
    DraftViewMetadata,
    DraftViewVersion,
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)
from icenb.table.explore.view_diff import NULLABILITY, ColumnChange, DialectChange, ViewVersionDiff
from icenb.table.view import View

__all__ = ["SQL_LIMIT", "sql_fragment", "view_metadata_repr", "view_version_repr"]

#: Characters of one SQL text shown before it is cut (view definitions are read in full).
SQL_LIMIT = 4000


def _sql_cut(sql: str) -> str:
    if len(sql) <= SQL_LIMIT:
        return sql
    return sql[:SQL_LIMIT] + "\n" + fmt.hidden(len(sql) - SQL_LIMIT, "characters")


def sql_fragment(dialect: str, sql: str) -> Rendered:
    """One SQL representation: the dialect, then the escaped SQL in ``<pre>``."""
    text = _sql_cut(sql)
    return Rendered(f"{h.badge(dialect, 'info')}{h.pre(text)}",
                    f"[{dialect}]\n" + tx.indent(text, "  "))


def _rep_fragment(rep: Any) -> Rendered:
    if isinstance(rep, (SQLViewRepresentation, DraftSQLViewRepresentation)):
        return sql_fragment(rep.dialect, rep.sql)
    if isinstance(rep, UnknownViewRepresentation):
        keys = ", ".join(sorted(str(k) for k in rep.raw))
        note = t("unknown representation type; keys: {keys}", keys=keys)
        return Rendered(f"{h.badge(rep.type, 'warn')} {h.muted(note)}", f"[{rep.type}] {note}")
    return Rendered(h.esc(rep), fmt.cut(rep))


def _reps_fragment(reps: Sequence[Any]) -> Rendered:
    head, n_hidden, tail = fmt.fold(reps, get_options().display_max_rows)
    parts = [_rep_fragment(r) for r in (*head, *tail)]
    split = len(head)
    html = [p.html for p in parts]
    text = [p.text for p in parts]
    if n_hidden:
        line = fmt.hidden(n_hidden, "representations")
        html.insert(split, h.muted(line))
        text.insert(split, line)
    if not parts:
        return Rendered(h.muted(t("no representations")), t("no representations"))
    return Rendered("".join(html), "\n".join(text))


@register(SQLViewRepresentation, DraftSQLViewRepresentation)
def sql_representation_repr(rep: SQLViewRepresentation | DraftSQLViewRepresentation) -> Rendered:
    """A SQL representation: dialect and SQL (spec: SQL representation)."""
    return sql_fragment(rep.dialect, rep.sql)


@register(UnknownViewRepresentation)
def unknown_representation_repr(rep: UnknownViewRepresentation) -> Rendered:
    """A representation of a type icenb does not know, kept verbatim."""
    return _rep_fragment(rep)


@register(ViewHistoryEntry)
def view_history_entry_repr(e: ViewHistoryEntry) -> Rendered:
    """A version-log entry: when a version became current (spec: Version log)."""
    ts = fmt.timestamp(e.timestamp_ms)
    return Rendered(f"{h.muted(ts)} {t('version')} {h.code(e.version_id)}",
                    f"{ts}  {t('version')} {e.version_id}")


def _summary_pairs(summary: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(k, fmt.cut(summary[k])) for k in sorted(summary)]


def _namespace(ns: Sequence[str] | None) -> str:
    return ".".join(ns) if ns else "(" + t("empty") + ")"


def _version_pairs(v: ViewVersion | DraftViewVersion) -> list[tuple[str, str]]:
    pairs = [(t("version id"), str(v.version_id)),
             (t("timestamp"), fmt.timestamp(v.timestamp_ms) + " UTC")]
    if isinstance(v, ViewVersion):
        pairs += [(t("schema id"), str(v.schema_id)),
                  (t("default catalog"), v.default_catalog or t("(the view's catalog)")),
                  (t("default namespace"), _namespace(v.default_namespace))]
    else:
        parent = v.parent_version_id
        pairs.append((t("parent version"), "-" if parent is None else str(parent)))
    return pairs


@register(ViewVersion, DraftViewVersion)
def view_version_repr(v: ViewVersion | DraftViewVersion) -> Rendered:
    """A view version: ids, time, defaults, summary and every representation (spec: Versions)."""
    pairs = _version_pairs(v)
    summary = _summary_pairs(v.summary)
    reps = _reps_fragment(v.representations)
    body = h.kv((k, h.esc(val)) for k, val in pairs)
    if summary:
        body += h.section(t("summary"), h.kv((k, h.esc(val)) for k, val in summary),
                          open=True)
    body += h.section(t("representations"), reps.html, open=True,
                      count=str(len(v.representations)))
    html = h.card(t("View version"), t("version {id}", id=v.version_id),
                  h.muted(fmt.timestamp(v.timestamp_ms)), body)
    text = [f"{t('View version')} {v.version_id}", tx.kv(pairs, indent="  ")]
    if summary:
        text.append(f"  {t('summary')}:\n" + tx.kv(summary, indent="    "))
    text.append(f"  {t('representations')}:\n" + tx.indent(reps.text, "    "))
    return Rendered(html, "\n".join(text))


def _engine(summary: Mapping[str, str]) -> str:
    """``engine-name engine-version`` from a version summary (draft: ``engineVersion``)."""
    name = summary.get(ENGINE_NAME, "")
    version = summary.get("engine-version") or summary.get("engineVersion") or ""
    return f"{name} {version}".strip()


def _versions_table(md: ViewMetadata | DraftViewMetadata) -> Rendered:
    versions: Sequence[ViewVersion | DraftViewVersion] = md.versions
    head, n_hidden, tail = fmt.fold(versions, get_options().display_max_snapshots)
    html_rows, text_rows = [], []
    for v in (*head, *tail):
        current = v.version_id == md.current_version_id
        dialects = ", ".join(r.dialect for r in v.representations
                             if isinstance(r, (SQLViewRepresentation,
                                               DraftSQLViewRepresentation)))
        schema = str(v.schema_id) if isinstance(v, ViewVersion) else "-"
        op = " ".join(x for x in (v.summary.get("operation"), _engine(v.summary)) if x)
        html_rows.append([h.code(v.version_id) + (" " + h.badge(t("current"), "current")
                                                  if current else ""),
                          h.esc(fmt.timestamp(v.timestamp_ms)), h.esc(schema), h.esc(op),
                          h.esc(dialects)])
        text_rows.append([str(v.version_id) + (" *" if current else ""),
                          fmt.timestamp(v.timestamp_ms), schema, op, dialects])
    headers = [t("version"), t("timestamp"), t("schema"), t("operation / engine"),
               t("dialects")]
    return Rendered(fold_html(headers, html_rows, n_hidden, "versions"),
                    fold_text(headers, text_rows, n_hidden, "versions"))


def _log_table(log: Sequence[ViewHistoryEntry]) -> Rendered:
    head, n_hidden, tail = fmt.fold(log, get_options().display_max_snapshots)
    rows = [[fmt.timestamp(e.timestamp_ms), str(e.version_id)] for e in (*head, *tail)]
    headers = [t("timestamp"), t("version")]
    return Rendered(fold_html(headers, [[h.esc(c) for c in r] for r in rows], n_hidden,
                              "log entries"),
                    fold_text(headers, rows, n_hidden, "log entries"))


def _current_schema_id(md: ViewMetadata | DraftViewMetadata) -> int | None:
    cur = md.version_by_id(md.current_version_id)
    if isinstance(cur, ViewVersion):
        return cur.schema_id
    if isinstance(md, DraftViewMetadata):
        if md.current_schema_id is not None:
            return md.current_schema_id
        if cur is not None:
            for rep in cur.representations:
                if isinstance(rep, DraftSQLViewRepresentation) and rep.schema_id is not None:
                    return rep.schema_id
    return None


@register(ViewMetadata, DraftViewMetadata, text_repr=True)
def view_metadata_repr(md: ViewMetadata | DraftViewMetadata) -> Rendered:
    """A view card (spec: View Metadata): uuid, version, location, current SQL per dialect,
    current schema, versions, log and properties - each folded."""
    return _view_card(md)


@register(View, text_str=True)
def view_repr(view: View) -> Rendered:
    """The card of a :class:`View`: its name and metadata file, then the metadata's card."""
    return _view_card(view.metadata, name=view.name, metadata_file=view.metadata_location)


def _view_card(md: ViewMetadata | DraftViewMetadata, *, name: str | None = None,
               metadata_file: str | None = None) -> Rendered:
    draft = isinstance(md, DraftViewMetadata)
    cur: ViewVersion | DraftViewVersion | None = md.version_by_id(md.current_version_id)
    schema_id = _current_schema_id(md)
    schema = md.schema_by_id(schema_id) if schema_id is not None else None
    pairs: list[tuple[str, str]] = [
        (t("view uuid"), md.view_uuid or "-"),
        (t("format version"), str(md.format_version)
         + (" (" + t("early draft") + ")" if draft else "")),
        (t("location"), fmt.cut(md.location)),
        (t("current version"), str(md.current_version_id)
         + ("" if cur is not None else " (" + t("missing") + ")")),
        (t("versions"), fmt.count(len(md.versions))),
        (t("version log"), fmt.count(len(md.version_log))),
        (t("schemas"), fmt.count(len(md.schemas))),
    ]
    if metadata_file is not None:
        pairs.insert(3, (t("metadata file"), fmt.cut(metadata_file)))
    if isinstance(md, ViewMetadata) and md.converted_from_draft:
        pairs.append((t("converted"), t("from an early-draft document")))
    no_version = t("current version {id} is missing", id=md.current_version_id)
    reps = _reps_fragment(cur.representations) if cur is not None else Rendered(
        h.error(no_version), no_version)
    no_schema = t("schema {id} not found", id=schema_id)
    schema_r = render(schema) if schema is not None else Rendered(h.muted(no_schema),
                                                                  no_schema)
    versions_r = _versions_table(md)
    log_r = _log_table(md.version_log)
    props_r = properties_fragment(md.properties)
    body = (h.kv((k, h.esc(v)) for k, v in pairs)
            + h.section(t("current SQL"), reps.html, open=True,
                        count=fmt.plural(len(cur.representations), "dialect")
                        if cur is not None else None)
            + h.section(t("schema"), schema_r.html, open=True,
                        count=t("id {id}", id=schema_id) if schema_id is not None else None)
            + h.section(t("versions"), versions_r.html, count=fmt.count(len(md.versions)))
            + h.section(t("version log"), log_r.html, count=fmt.count(len(md.version_log)))
            + h.section(t("properties"), props_r.html, count=str(len(md.properties))))
    if cur is not None and cur.summary:
        body += h.section(t("current version summary"),
                          h.kv((k, h.esc(v)) for k, v in _summary_pairs(cur.summary)))
    kind = t("View") if name is not None else t(
        "View metadata (draft)" if draft else "View metadata")
    title = name if name is not None else (fmt.file_name(md.location) or md.location)
    html = h.card(kind, title, h.muted(t("version {id}", id=md.current_version_id)), body)
    head = (t("View {name}  (version {id} of {n})", name=name, id=md.current_version_id,
              n=len(md.versions))
            if name is not None else
            f"{'DraftViewMetadata' if draft else 'ViewMetadata'} {md.location}")
    text = [head,
            tx.kv(pairs, indent="  "),
            f"  {t('current SQL')}:\n" + tx.indent(reps.text, "    "),
            f"  {t('schema')}:\n" + tx.indent(schema_r.text, "    "),
            f"  {t('versions')}:\n" + tx.indent(versions_r.text, "  ")]
    if md.properties:
        text.append(f"  {t('properties')}:\n" + tx.indent(props_r.text, "  "))
    return Rendered(html, "\n".join(text))


# --------------------------------------------------------------------------- version diff


def _diff_lines(lines: tuple[str, ...]) -> list[str]:
    """A unified diff's lines, its ``--- version a`` / ``+++ version b`` heads in the display
    language."""
    out = []
    for line in lines:
        head, _, rest = line.partition(" version ")
        if head in ("---", "+++") and rest.isdigit():
            line = f"{head} {t('version {id}', id=rest)}"
        out.append(line)
    return out


def _diff_html(lines: list[str]) -> str:
    """A unified diff with added lines green and removed lines red (escaped, not cut)."""
    out = []
    for line in lines:
        if line.startswith(("+++", "---")):
            out.append(h.muted(line))
        elif line.startswith("+"):
            out.append(f'<span class="icenb-b-added">{h.esc(line, 100_000)}</span>')
        elif line.startswith("-"):
            out.append(f'<span class="icenb-b-deleted">{h.esc(line, 100_000)}</span>')
        elif line.startswith("@@"):
            out.append(h.muted(line))
        else:
            out.append(h.esc(line, 100_000))
    return "<pre>" + "\n".join(out) + "</pre>"


def _dialect_summary(d: DialectChange) -> str:
    if d.sql_a is None:
        return "added"
    if d.sql_b is None:
        return "removed"
    return "changed" if d.changed else "unchanged"


@register(ViewVersionDiff)
def view_version_diff_repr(diff: ViewVersionDiff) -> Rendered:
    """Two view versions compared: SQL per dialect as a diff, columns, defaults."""
    a, b = diff.a.version_id, diff.b.version_id
    def value(c: ColumnChange, text: str | None) -> str:
        return t(text) if c.kind == NULLABILITY and text else text or ""

    col_rows = [[t(c.kind), c.name, value(c, c.before), value(c, c.after)]
                for c in diff.columns]
    headers = [t("change"), t("column"), t("version {id}", id=a), t("version {id}", id=b)]
    html_parts = []
    text_parts = [t("View {name}: version {a} -> {b}", name=diff.view_name, a=a, b=b)
                  + (" (" + t("no difference") + ")" if diff.same else "")]
    for d in diff.dialects:
        state = t(_dialect_summary(d))
        if d.changed and d.sql_a is not None and d.sql_b is not None:
            body = _diff_html(_diff_lines(d.diff))
            text = "\n".join(_diff_lines(d.diff))
        else:
            body = h.pre(d.sql_b or d.sql_a or "")
            text = d.sql_b or d.sql_a or ""
        html_parts.append(h.section(f"SQL [{d.dialect}]", body, open=d.changed, count=state))
        text_parts.append(f"  SQL [{d.dialect}] {state}:\n" + tx.indent(text, "    "))
    if col_rows:
        html_parts.append(h.section(t("columns"), h.table(headers, col_rows), open=True,
                                    count=fmt.plural(len(col_rows), "change")))
        text_parts.append(f"  {t('columns')}:\n"
                          + tx.indent(tx.table(headers, col_rows), "    "))
    else:
        html_parts.append(h.muted(t("same columns")))
        text_parts.append("  " + t("same columns"))
    if diff.defaults:
        rows = [[t(x[0]), x[1], x[2]] for x in diff.defaults]
        dh = [t("default"), t("version {id}", id=a), t("version {id}", id=b)]
        html_parts.append(h.section(t("defaults"), h.table(dh, rows), open=True))
        text_parts.append(f"  {t('defaults')}:\n" + tx.indent(tx.table(dh, rows), "    "))
    sub = h.muted(t("no difference") if diff.same else
                  t("schema {a} -> {b}", a=diff.a.schema_id, b=diff.b.schema_id))
    html = h.card(t("View versions"), f"{diff.view_name}: {a} → {b}", sub,
                  "".join(html_parts))
    return Rendered(html, "\n".join(text_parts))
