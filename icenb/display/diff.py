"""A snapshot diff: a summary line, folded tables of files added and removed, and a small graph
(snapshot a -> b, the changed files, delete -> data "applies to" edges).

Spec: "Scan Planning" (which deletes apply). Draws what :meth:`Table.diff` holds; reads nothing.
"""

from __future__ import annotations

from icenb.display.kit import dot as d
from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit.graph import Graph
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.table.explore.diff import (
    DELETION_VECTOR,
    EQUALITY_DELETE,
    DeleteApplication,
    FileInfo,
    FileSet,
    SnapshotDiff,
)

__all__ = ["diff_graph", "summary"]

_KIND_NODE = {"data": "data_file", DELETION_VECTOR: "deletion_vector",
              EQUALITY_DELETE: "equality_delete"}


def _kind_words(kind: str, n: int) -> str:
    if kind == "data":
        return fmt.plural(n, "data file")
    if kind == DELETION_VECTOR:
        return fmt.plural(n, "deletion vector")
    return fmt.plural(n, f"{kind} file")


def _added_deletes(diff: SnapshotDiff) -> list[str]:
    out = []
    for kind, n, rows in diff.deletes_added.by_kind:
        words = t("+{what} deleting {rows}", what=_kind_words(kind, n),
                  rows=fmt.plural(rows, "row"))
        apps = [a for a in diff.applications if a.delete.kind == kind]
        targets = {p for a in apps for p in a.data_files}
        if len(targets) == 1 and sum(a.data_file_count for a in apps) == n == len(apps):
            words += " " + t("in {file}", file=fmt.file_name(next(iter(targets))))
        elif diff.data_files_hit and len(diff.deletes_added.by_kind) == 1:
            words += " " + t("in {file}", file=fmt.plural(diff.data_files_hit, "data file"))
        out.append(words)
    return out


def summary(diff: SnapshotDiff) -> str:
    """One line: ``+2 data files (+1,000 rows), -1 data file (-500 rows), +1 deletion vector
    deleting 3 rows in data-0001.parquet``."""
    parts = []
    if diff.data_added.count:
        parts.append(f"+{fmt.plural(diff.data_added.count, 'data file')} "
                     f"(+{fmt.plural(diff.data_added.records, 'row')})")
    if diff.data_removed.count:
        parts.append(f"-{fmt.plural(diff.data_removed.count, 'data file')} "
                     f"(-{fmt.plural(diff.data_removed.records, 'row')})")
    parts.extend(_added_deletes(diff))
    for kind, n, rows in diff.deletes_removed.by_kind:
        parts.append(t("-{what} (no longer deleting {rows})", what=_kind_words(kind, n),
                       rows=fmt.plural(rows, "row")))
    return ", ".join(parts) if parts else t("no file changed")


def _partition(f: FileInfo) -> str:
    return f.partition_text or ", ".join(f"{k}={v}" for k, v in f.partition) or "-"


def _short(diff: SnapshotDiff, sid: int) -> str:
    """A snapshot's short label (S3) in the diffed table, or its full id."""
    return fmt.snapshot_label(diff.metadata, sid)


def _snapshot_title(diff: SnapshotDiff) -> tuple[str, str]:
    """``v1 (S3) → main (S8)`` and a sub-line with the relation, times and full ids."""
    def name(label: str, sid: int) -> str:
        short = _short(diff, sid)
        return short if label in (str(sid), short) else f"{label} ({short})"

    a, b = diff.a.snapshot_id, diff.b.snapshot_id
    title = f"{name(diff.a_label, a)} → {name(diff.b_label, b)}"
    rel = t("a is an ancestor of b") if diff.a_is_ancestor else t("a is not an ancestor of b")
    when = f"{fmt.timestamp(diff.a.timestamp_ms)} → {fmt.timestamp(diff.b.timestamp_ms)}"
    legend = "; ".join(f"{_short(diff, x)} = {x}" for x in dict.fromkeys((a, b))
                       if _short(diff, x) != str(x))
    return title, f"{rel}; {when}" + (f"; {legend}" if legend else "")


_Apps = dict[tuple[str, int | None], DeleteApplication]


def _at(f: FileInfo, name: str) -> str:
    """``name`` with a deletion vector's ``@offset`` (one Puffin file holds many DVs)."""
    return name if f.content_offset is None else f"{name}@{f.content_offset}"


def _file_rows(fs: FileSet, base: str, html: bool, apps: _Apps | None
               ) -> tuple[list[str], list[list[str]], int, int]:
    """Headers, the rows of the shown files (head + tail), the hidden count and where the
    ellipsis goes (after the head)."""
    head, n_hidden, tail = fs.sample(get_options().display_max_files)
    headers = [t("file"), t("kind"), t("partition"), t("records"), t("size"), t("spec")]
    if apps is not None:
        headers.append(t("applies to"))
    rows = []
    for f in (*head, *tail):
        cells = [_at(f, fmt.short_path(f.path, base)), t(f.kind), _partition(f),
                 fmt.count(f.record_count), fmt.size(f.file_size_in_bytes), str(f.spec_id)]
        if apps is not None:
            a = apps.get(f.key)
            if a is None or a.data_file_count == 0:
                cells.append(t("no live data file"))
            elif a.data_file_count == 1:
                cells.append(fmt.file_name(a.data_files[0]))
            else:
                cells.append(fmt.plural(a.data_file_count, "data file"))
        rows.append([h.code(c) if i == 0 else h.esc(c) for i, c in enumerate(cells)]
                    if html else cells)
    return headers, rows, n_hidden, len(head)


def _files_block(fs: FileSet, base: str, html: bool, apps: _Apps | None = None) -> str:
    """The files of ``fs`` as a table, already folded by ``FileSet.sample``."""
    headers, rows, n_hidden, head_n = _file_rows(fs, base, html, apps)
    if html:
        th = "".join(f"<th>{h.esc(x)}</th>" for x in headers)
        body = ["<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows]
        if n_hidden:
            body.insert(head_n, f'<tr class="icenb-fold"><td colspan="{len(headers)}">'
                                f"{h.esc(fmt.hidden(n_hidden, 'files'))}</td></tr>")
        return (f'<table class="icenb-t"><thead><tr>{th}</tr></thead><tbody>'
                f'{"".join(body)}</tbody></table>')
    lines = tx.table(headers, rows, indent="  ").splitlines()
    if n_hidden:
        lines.insert(1 + head_n, "  " + fmt.hidden(n_hidden, "files"))
    return "\n".join(lines)


def diff_graph(diff: SnapshotDiff) -> Graph:
    """Snapshot a -> snapshot b; b -> added files, a -> removed files (dashed); each added
    delete -> the data files it applies to (at most display_max_files per list)."""
    limit = get_options().display_max_files
    base = diff.metadata.location
    g = d.Dot("snapshot_diff", rankdir="LR")
    a_id, b_id = f"snap_{diff.a.snapshot_id}", f"snap_{diff.b.snapshot_id}"
    same = a_id == b_id  # a snapshot against itself: one node, no edge, nothing changed
    sides = ((a_id, "a", diff.a_label, diff.a, "snapshot"),
             (b_id, "a = b" if same else "b", diff.b_label, diff.b, "snapshot_current"))
    for node, side, label, snap, kind in sides[1:] if same else sides:
        named = f"{side}: {label}\n" if label != str(snap.snapshot_id) else f"{side}\n"
        g.node(node, f"{named}{t('snapshot {id}', id=_short(diff, snap.snapshot_id))}\n"
                     f"{snap.operation or ''}".rstrip(), kind=kind,
               tooltip=t("snapshot {id}", id=snap.snapshot_id))
    if not same:
        g.edge(a_id, b_id, label=t("ancestor") if diff.a_is_ancestor else t("compared"),
               style="bold")
        g.same_rank([a_id, b_id])   # a above b: one column less across
    lines = [t("diff {a} -> {b}: {summary}", a=_short(diff, diff.a.snapshot_id),
               b=_short(diff, diff.b.snapshot_id),
               summary=summary(diff))]
    ids: dict[tuple[str, str, int | None], str] = {}
    counter = 0

    def file_node(f: FileInfo, removed: bool) -> str:
        nonlocal counter
        key = ("r" if removed else "a", f.path, f.content_offset)
        if key in ids:
            return ids[key]
        counter += 1
        node = f"f{counter}"
        ids[key] = node
        kind = "removed" if removed else _KIND_NODE.get(f.kind, "delete_file")
        label = (f"{_at(f, fmt.middle(fmt.file_name(f.path)))}\n{t(f.kind)}, "
                 f"{fmt.plural(f.record_count, 'row')}")
        g.node(node, label, kind=kind, style="rounded,filled,dashed" if removed
               else "rounded,filled", tooltip=_at(f, fmt.short_path(f.path, base)))
        return node

    def draw(fs: FileSet, removed: bool, what: str) -> None:
        head, n_hidden, tail = fs.sample(limit)
        src = a_id if removed else b_id
        for f in (*head, *tail):
            g.edge(src, file_node(f, removed), label=t("removed") if removed else t("added"),
                   **({"style": "dashed"} if removed else {}))
            lines.append(f"  {'-' if removed else '+'} {_at(f, fmt.short_path(f.path, base))} "
                         f"({t(f.kind)}, {fmt.plural(f.record_count, 'row')})")
        if n_hidden:
            node = f"more_{what}"
            g.node(node, fmt.hidden(n_hidden, what), kind="folded")
            g.edge(src, node, style="dotted")
            lines.append(f"  {fmt.hidden(n_hidden, what)}")

    draw(diff.data_added, False, "added data files")
    draw(diff.data_removed, True, "removed data files")
    draw(diff.deletes_added, False, "added delete files")
    draw(diff.deletes_removed, True, "removed delete files")

    for app in diff.applications:
        dnode = ids.get(("a", app.delete.path, app.delete.content_offset))
        if dnode is None:
            continue
        shown = app.data_files[:limit]
        for path in shown:
            target = ids.get(("a", path, None))
            if target is None:  # an unchanged data file of b: draw it once, plain
                counter += 1
                target = f"f{counter}"
                ids[("a", path, None)] = target
                g.node(target, f"{fmt.middle(fmt.file_name(path))}\n{t('data (unchanged)')}",
                       kind="data_file", tooltip=fmt.short_path(path, base))
            g.edge(dnode, target, label=t("applies to"), style="dashed", color="#c62828")
            lines.append("  " + t("{delete} applies to {data}",
                                  delete=_at(app.delete, fmt.file_name(app.delete.path)),
                                  data=fmt.file_name(path)))
        if app.data_file_count > len(shown):
            more = f"more_targets_{dnode}"
            g.node(more, fmt.hidden(app.data_file_count - len(shown), "data files"),
                   kind="folded")
            g.edge(dnode, more, label=t("applies to"), style="dashed")
    title, _ = _snapshot_title(diff)
    return Graph(g.source(), "\n".join(lines), title=title, kind=t("Snapshot diff"),
                 caption=t("added files hang off b, removed files (dashed) off a; red dashed "
                           "edges: the data files each new delete file applies to"))


def _counts(diff: SnapshotDiff) -> list[tuple[str, str]]:
    unchanged = "({n} unchanged)"
    return [
        (t("data files"), f"+{fmt.count(diff.data_added.count)} / "
                          f"-{fmt.count(diff.data_removed.count)} "
                          + t(unchanged, n=fmt.count(diff.unchanged_data_files))),
        (t("records (file metadata)"), f"+{fmt.count(diff.records_added)} / "
                                       f"-{fmt.count(diff.records_removed)}"),
        (t("delete files"), f"+{fmt.count(diff.deletes_added.count)} / "
                            f"-{fmt.count(diff.deletes_removed.count)} "
                            + t(unchanged, n=fmt.count(diff.unchanged_delete_files))),
        (t("rows deleted by new deletes"), fmt.count(diff.rows_deleted)),
        (t("data files the new deletes apply to"), fmt.count(diff.data_files_hit)),
    ]


@register(SnapshotDiff, text_repr=True)
def _diff(diff: SnapshotDiff) -> Rendered:
    base = diff.metadata.location
    title, sub = _snapshot_title(diff)
    line = summary(diff)
    apps = {a.delete.key: a for a in diff.applications}
    lists: list[tuple[str, FileSet, _Apps | None]] = [
        ("Data files added", diff.data_added, None),
        ("Data files removed", diff.data_removed, None),
        ("Delete files added", diff.deletes_added, apps),
        ("Delete files removed", diff.deletes_removed, None),
    ]
    body = [f"<div><b>{h.esc(line, 2000)}</b></div>", h.kv(
        (k, h.esc(v)) for k, v in _counts(diff))]
    text = [f"{t('Snapshot diff')} {title}", f"  {sub}", f"  {line}",
            tx.kv(_counts(diff), indent="  ")]
    for name, fs, ap in lists:
        if fs.count:
            body.append(h.section(t(name), _files_block(fs, base, True, ap), open=True,
                                  count=fmt.plural(fs.count, "file")))
            text.append(f"{t(name)} ({fs.count:,}):")
            text.append(_files_block(fs, base, False, ap))
    if not diff.is_empty:
        body.append(h.section(t("Graph"), diff_graph(diff).html_fragment()))
    return Rendered(h.card(t("Snapshot diff"), title, h.esc(sub), "".join(body)),
                    "\n".join(text))
