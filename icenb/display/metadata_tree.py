"""Draw a :class:`~icenb.table.explore.metadata_tree.MetadataTree`: one snapshot as table metadata
->
manifest list -> manifests -> files, top-down, with dashed "applies to" edges from delete files
to the data files they apply to (spec: "Scan Planning"). Only what the tree holds is drawn.

The manifest list and each manifest are drawn as tables, one row (and port) per entry, so each
edge leaves the row of the entry it stands for. The index node's title comes from its kind
(``manifest_list`` now, ``root`` for v4 later), so a v4 tree draws with the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from icenb.display.kit import html as h
from icenb.display.kit.dot import Cell, Dot, FileNames, table_label
from icenb.display.kit.fmt import (
    count,
    file_name,
    first,
    fold,
    hidden,
    middle,
    names,
    plural,
    short_path,
    size,
    snapshot_label,
)
from icenb.display.kit.graph import Graph
from icenb.display.manifest_repr import content_noun, content_word, partition_text, status_badge
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.reprs import safe_repr
from icenb.spec.manifest import DataFile, EntryStatus, ManifestContent
from icenb.table.explore.metadata_tree import (
    HiddenManifests,
    MetadataTree,
    TreeEntry,
    TreeIndex,
    TreeManifest,
    TreeManifestDV,
)

__all__ = ["metadata_tree_dot", "metadata_tree_figure", "metadata_tree_text"]

_INDEX_TITLES = {"manifest_list": "Manifest list", "root": "Root manifest"}
_NAME_LIMIT = 36


def _short(name: str, limit: int = _NAME_LIMIT) -> str:
    """A long file name shortened in the middle (uuids make names long)."""
    return middle(name, limit)


def _status(e: TreeEntry) -> str:
    try:
        return EntryStatus(e.status).name
    except ValueError:
        return str(e.status)


def _row_status(e: TreeEntry) -> str:
    """A leaf row's status; v4 rows with their ordinal, and marked when a manifest DV
    removes them."""
    text = _status(e) if e.ordinal is None else f"#{e.ordinal} {_status(e)}"
    return text + (" ✗ " + t("removed by DV") if e.removed else "")


def _dv_text(d: TreeManifestDV) -> str:
    shown = ", ".join(f"#{o}" for o in d.ordinals[:8])
    more = d.cardinality - min(len(d.ordinals), 8)
    return t("removes {ordinals}", ordinals=shown) + (", " + t("+{n:,} more", n=more)
                                                      if more > 0 else "")


def _manifest_word(m: TreeManifest) -> str:
    return t("Delete manifest" if m.manifest.content == ManifestContent.DELETES
             else "Data manifest")


def _manifest_noun(m: TreeManifest) -> str:
    return t("delete manifest" if m.manifest.content == ManifestContent.DELETES
             else "data manifest")


# --------------------------------------------------------------------------- view


@safe_repr
@dataclass
class _View:
    """What is drawn under the display options in effect (the tree may hold more)."""

    manifests: list[TreeManifest]
    fold_at: int            # index in ``manifests`` where the folded manifests go
    manifests_hidden: int
    hidden: HiddenManifests
    entries: dict[int, tuple[list[TreeEntry], int, int]]  # position -> (entries, fold at, n)
    # (path, DV offset) -> D<n>, DV<n>, ... (dot.FileNames), in drawing order: one Puffin
    # file holds many deletion vectors (spec: Deletion Vectors, content_offset)
    file_ids: dict[tuple[str, int | None], str]
    dv_ids: list[str] = field(default_factory=list)   # the root's manifest DVs: DV<n>

    def fid(self, f: DataFile) -> str:
        """The drawn name of a content file."""
        return self.file_ids[(f.file_path, f.content_offset)]

    def data_id(self, path: str) -> str | None:
        """The drawn name of a data file (what a delete applies to), None when not drawn."""
        return self.file_ids.get((path, None))


def _refold(items: Sequence[object], head: int, n_hidden: int, limit: int
            ) -> tuple[list[int], int, int]:
    """Indices of ``items`` to show, where the fold goes, and how many are hidden in all."""
    if len(items) <= limit:
        return list(range(len(items))), head, n_hidden
    h_part, n, t_part = fold(range(len(items)), limit)
    return [*h_part, *t_part], len(h_part), n_hidden + n


def _view(tree: MetadataTree) -> _View:
    opts = get_options()
    index = tree.index
    if index is None:
        return _View([], 0, 0, HiddenManifests(), {}, {})
    shown, fold_at, n_hidden = _refold(index.manifests, index.manifests_head,
                                       max(index.manifests_total - len(index.manifests), 0),
                                       opts.display_max_manifests)
    manifests = [index.manifests[i] for i in shown]
    kept = set(shown)
    extra = [m for i, m in enumerate(index.manifests) if i not in kept]
    hidden_sum = _add_hidden(index.hidden, extra)
    entries: dict[int, tuple[list[TreeEntry], int, int]] = {}
    drawn = list(index.files)   # v4: files held by the root, then each manifest's
    for m in manifests:
        idx, at, n = _refold(m.entries, m.entries_head, m.entries_hidden, opts.display_max_files)
        es = [m.entries[i] for i in idx]
        entries[m.position] = (es, at, n)
        drawn += es
    # named as the v4 proposal names them (D1, DV1, ...; dot.FileNames), in the order they
    # were added (data sequence number, then drawing order); the root's manifest DVs first
    names = FileNames()
    dv_ids = [names.next("DV") for _ in index.manifest_dvs]
    file_ids: dict[tuple[str, int | None], str] = {}
    late = 1 << 62
    for _, _, e in sorted((late if e.sequence_number is None else e.sequence_number, i, e)
                          for i, e in enumerate(drawn)):
        key = (e.file.file_path, e.file.content_offset)
        if key not in file_ids:
            file_ids[key] = names.file(e.kind)
    return _View(manifests, fold_at, n_hidden, hidden_sum, entries, file_ids, dv_ids)


def _add_hidden(base: HiddenManifests, more: Sequence[TreeManifest]) -> HiddenManifests:
    """The summary of hidden manifests with more (drawn, then folded at render time) added."""
    if not more:
        return base

    def add(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a + b

    out = base
    for m in more:
        mf = m.manifest
        deletes = mf.content == ManifestContent.DELETES
        rows = add(mf.added_rows_count, mf.existing_rows_count)
        out = HiddenManifests(
            out.data_manifests + (0 if deletes else 1), out.delete_manifests + int(deletes),
            add(out.added_files, mf.added_files_count),
            add(out.existing_files, mf.existing_files_count),
            add(out.deleted_files, mf.deleted_files_count), add(out.rows, rows))
    return out


def _hidden_text(n: int, s: HiddenManifests) -> str:
    """``… 988 more manifests …`` and what the manifest list says about them."""
    parts = []
    if s.count:
        parts.append(t("{data} data, {deletes} delete", data=count(s.data_manifests),
                       deletes=count(s.delete_manifests)))
    if s.added_files is not None and s.existing_files is not None:
        parts.append(f"{plural(s.added_files + s.existing_files, 'live file')}")
    if s.rows is not None:
        parts.append(plural(s.rows, "row"))
    return hidden(n, "manifests") + (f" ({'; '.join(parts)})" if parts else "")


# --------------------------------------------------------------------------- labels


def _counts(m: TreeManifest) -> str:
    mf = m.manifest
    return (f"+{count(mf.added_files_count)} ={count(mf.existing_files_count)} "
            f"-{count(mf.deleted_files_count)}")


def _label(tree: MetadataTree) -> str:
    """The drawn snapshot's short label (S3) or full id."""
    return snapshot_label(tree.table_snapshots, tree.snapshot_id)


def _named(tree: MetadataTree) -> str:
    """``S3 = 4529786241548886330``, or the full id alone when there is no short label."""
    label, sid = _label(tree), str(tree.snapshot_id)
    return sid if label == sid else f"{label} = {sid}"


def _metadata_label(tree: MetadataTree) -> str:
    name = (file_name(tree.metadata_location) if tree.metadata_location
            else "(" + t("not saved") + ")")
    lines = [t("Table metadata"), _short(name), t("format v{v}", v=tree.format_version)]
    snap = tree.snapshot
    if snap is not None:
        lines.append(t("snapshot {id}", id=_label(tree)))
        op = str(snap.summary.operation) if snap.summary is not None else t("no operation")
        lines.append(f"{op} · {t('seq {n}', n=snap.sequence_number)}")
        if tree.refs:
            lines.append(_short(names(tree.refs, 3)))
    return "\n".join(lines)


def _file_label(tree: MetadataTree, e: TreeEntry, fid: str) -> str:
    f = e.file
    lines = [f"{fid} · {content_word(f)}", _short(file_name(f.file_path))]
    kind = e.kind
    if kind == "deletion_vector":
        offset = f.content_offset if f.content_offset is not None else "?"
        lines.append(f"{t('offset')} {offset} · {size(f.content_size_in_bytes)}")
        lines.append(plural(f.record_count, "deleted row"))
    elif kind == "equality_delete":
        ids = f.equality_ids or ()
        lines.append(t("on {columns}", columns=_short(", ".join(
            tree.column_names.get(i, str(i)) for i in ids))))
        lines.append(plural(f.record_count, "key"))
    else:
        lines.append(f"{plural(f.record_count, 'row')} · {size(f.file_size_in_bytes)}")
    if f.partition:
        lines.append(_short(partition_text(f, tree.spec_fields.get(f.spec_id))))
    return "\n".join(lines)


# --------------------------------------------------------------------------- DOT


def _ported(cells: list[str], port: str, rankdir: str) -> list[str | Cell]:
    """A table row whose edge leaves from its first cell (top-down) or its last (left to
    right, from the cell's right side)."""
    at = 0 if rankdir == "TB" else len(cells) - 1
    return [Cell(c, port=port) if i == at else c for i, c in enumerate(cells)]


def _port(node: str, port: str, rankdir: str) -> str:
    """An edge end at a row's port (leaving eastwards when drawn left to right)."""
    return f"{node}:{port}" + ("" if rankdir == "TB" else ":e")


def _draw(tree: MetadataTree, view: _View, rankdir: str = "TB") -> Dot:
    dot = Dot("metadata_tree", rankdir=rankdir)
    dot.node("meta", _metadata_label(tree), kind="metadata",
             tooltip="" if tree.snapshot is None else t("snapshot {id}", id=_named(tree)))
    index = tree.index
    if index is None:
        if tree.note:
            dot.node("note", _short(t(tree.note), 80), kind="folded")
            dot.edge("meta", "note", style="dotted")
        return dot
    _draw_index(dot, tree, index, view, rankdir)
    if rankdir == "LR":   # the metadata above its index: one column less across
        dot.same_rank(["meta", "index"])
    for m in view.manifests:
        _draw_manifest(dot, tree, m, view, rankdir)
    # a delete file applies to data files of the snapshot (spec: Scan Planning)
    listed = [e for m in view.manifests for e in view.entries[m.position][0]]
    for e in [*index.files, *listed]:
        src = view.fid(e.file)
        for path in e.applies_to:
            dst = view.data_id(path)
            if dst is not None and dst != src:
                dot.edge(src, dst, label=t("applies to"), style="dashed", constraint="false")
    return dot


def _draw_index(dot: Dot, tree: MetadataTree, index: TreeIndex, view: _View,
                rankdir: str) -> None:
    title = t(_INDEX_TITLES.get(index.kind, index.kind))
    sub = (_short(file_name(index.location)) if index.location
           else t("v1: manifests listed in the metadata"))
    rows: list[list[str | Cell]] = []
    for i, m in enumerate(view.manifests):
        if i == view.fold_at and view.manifests_hidden:
            rows.append([Cell(hidden(view.manifests_hidden, "manifests"))])
        word = "deletes" if m.manifest.content == ManifestContent.DELETES else "data"
        rows.append(_ported([f"M{m.position + 1}", word, _counts(m) if m.root_status is None
                             else f"{m.root_status.name} {_counts(m)}"], f"m{m.position}",
                            rankdir))
    if view.manifests_hidden and view.fold_at >= len(view.manifests):
        rows.append([Cell(hidden(view.manifests_hidden, "manifests"))])
    if index.kind == "root":
        for i, e in enumerate(index.files):
            rows.append(_ported([view.fid(e.file), content_noun(e.file),
                                 _status(e)], f"f{i}", rankdir))
        if index.files_hidden:
            rows.append([Cell(hidden(index.files_hidden, "files"))])
        for i, d in enumerate(index.manifest_dvs):
            rows.append(_ported([view.dv_ids[i], t("manifest DV"), d.status.name], f"d{i}",
                                rankdir))
    if not rows:
        rows.append([Cell(t("no manifests"))])
    subtitle = f"{sub}\n{plural(index.manifests_total, 'manifest')}"
    if index.kind == "root":
        subtitle += (f" · {plural(len(index.files) + index.files_hidden, 'file')}"
                     f" · {plural(len(index.manifest_dvs), 'manifest DV')}")
    dot.node("index", table_label(title, rows, kind=index.kind, subtitle=subtitle,
                                  rankdir=rankdir),
             kind=index.kind, html=True)
    dot.edge("meta", "index")
    if index.kind == "root":
        _draw_root_parts(dot, tree, index, view, rankdir)
    if view.manifests_hidden:
        dot.node("index_more", _hidden_text(view.manifests_hidden, view.hidden), kind="folded")
        dot.edge("index", "index_more", style="dotted")


def _draw_root_parts(dot: Dot, tree: MetadataTree, index: TreeIndex, view: _View,
                     rankdir: str) -> None:
    """A v4 root's own files and its manifest DVs (each pointing at its leaf)."""
    for i, e in enumerate(index.files):
        fid = view.fid(e.file)
        dot.node(fid, _file_label(tree, e, fid), kind=e.kind)
        attrs = {"style": "dashed"} if e.status == EntryStatus.DELETED else {}
        dot.edge(_port("index", f"f{i}", rankdir), fid, **attrs)
    drawn = {m.position for m in view.manifests}
    for i, d in enumerate(index.manifest_dvs):
        did = view.dv_ids[i]
        dot.node(did, "\n".join([f"{did} · {t('Manifest DV')}", t("inline") if d.inline
                                 else _short(file_name(d.location)),
                                 f"{d.status.name} · {plural(d.cardinality, 'row')}"]),
                 kind="manifest_dv")
        attrs = {"style": "dashed"} if d.status == EntryStatus.DELETED else {}
        dot.edge(_port("index", f"d{i}", rankdir), did, **attrs)
        if d.manifest_position is not None and d.manifest_position in drawn:
            dot.edge(did, f"M{d.manifest_position + 1}",
                     label=f"{t('applies to')}\n{_dv_text(d)}", style="dashed",
                     constraint="false")


def _draw_manifest(dot: Dot, tree: MetadataTree, m: TreeManifest, view: _View,
                   rankdir: str) -> None:
    mid = f"M{m.position + 1}"
    entries, at, n_hidden = view.entries[m.position]
    rows: list[list[str | Cell]] = []
    for i, e in enumerate(entries):
        if i == at and n_hidden:
            rows.append([Cell(hidden(n_hidden, "entries"))])
        rows.append(_ported([_row_status(e), _short(file_name(e.file.file_path), 28),
                             count(e.file.record_count)], f"e{i}", rankdir))
    if n_hidden and at >= len(entries):
        rows.append([Cell(hidden(n_hidden, "entries"))])
    if not rows:
        rows.append([Cell(t("no entries"))])
    subtitle = (f"{_short(file_name(m.manifest.manifest_path))}\n"
                f"{plural(m.entries_total, 'entry', 'entries')} · "
                f"{t('spec {id}', id=m.manifest.partition_spec_id)} · "
                f"{t('seq {n}', n=m.manifest.sequence_number)}")
    dot.node(mid, table_label(f"{mid} · {_manifest_word(m)}", rows, kind=m.kind,
                              subtitle=subtitle, rankdir=rankdir), kind=m.kind, html=True)
    dot.edge(_port("index", f"m{m.position}", rankdir), mid)
    for i, e in enumerate(entries):
        fid = view.fid(e.file)
        dot.node(fid, _file_label(tree, e, fid), kind=e.kind)
        attrs = {"style": "dashed"} if e.status == EntryStatus.DELETED else {}
        if e.removed:
            attrs = {"style": "dotted", "label": t("removed by DV")}
        dot.edge(_port(mid, f"e{i}", rankdir), fid, **attrs)


def metadata_tree_dot(tree: MetadataTree, rankdir: str = "TB") -> str:
    """The DOT source of the tree (top-down; ``rankdir="LR"``: left to right)."""
    return _draw(tree, _view(tree), rankdir).source()


# --------------------------------------------------------------------------- text


def _text_lines(tree: MetadataTree, view: _View) -> list[str]:
    meta = (file_name(tree.metadata_location) if tree.metadata_location
            else "(" + t("not saved") + ")")
    head = t("Table metadata {file} (format v{v})", file=meta, v=tree.format_version)
    snap = tree.snapshot
    if snap is not None:
        op = str(snap.summary.operation) if snap.summary is not None else t("no operation")
        head += " · " + t("snapshot {id} ({op}, seq {n})", id=_named(tree), op=op,
                          n=snap.sequence_number)
        if tree.refs:
            head += " [" + names(tree.refs) + "]"
    lines = [head]
    index = tree.index
    if index is None:
        if tree.note:
            lines.append(f"  ({t(tree.note)})")
        return lines
    where = (file_name(index.location) if index.location
             else t("v1: manifests listed in the metadata"))
    extra = ""
    if index.kind == "root":
        extra = (f", {plural(len(index.files) + index.files_hidden, 'file')}, "
                 f"{plural(len(index.manifest_dvs), 'manifest DV')}")
    lines.append(f"  {t(_INDEX_TITLES.get(index.kind, index.kind))} {where} · "
                 f"{plural(index.manifests_total, 'manifest')}{extra}")
    for e in index.files:
        lines.extend(_entry_text(tree, e, view, "    "))
    if index.files_hidden:
        lines.append("    " + hidden(index.files_hidden, "files"))
    for i, d in enumerate(index.manifest_dvs):
        target = ("M" + str(d.manifest_position + 1) if d.manifest_position is not None
                  else file_name(d.referenced_file))
        lines.append(f"    {d.status.name:<8} {view.dv_ids[i]} {t('manifest DV')} → {target}, "
                     f"{_dv_text(d)}")
    for i, m in enumerate(view.manifests):
        if i == view.fold_at and view.manifests_hidden:
            lines.append("    " + _hidden_text(view.manifests_hidden, view.hidden))
        lines.extend(_manifest_text(tree, m, view))
    if view.manifests_hidden and view.fold_at >= len(view.manifests):
        lines.append("    " + _hidden_text(view.manifests_hidden, view.hidden))
    return lines


def _manifest_text(tree: MetadataTree, m: TreeManifest, view: _View) -> list[str]:
    out = [f"    M{m.position + 1} {_manifest_noun(m)} "
           f"{file_name(m.manifest.manifest_path)} · "
           f"{plural(m.entries_total, 'entry', 'entries')} "
           + t("({added} added, {existing} existing, {deleted} deleted)", added=m.added,
               existing=m.existing, deleted=m.deleted)]
    entries, at, n_hidden = view.entries[m.position]
    for i, e in enumerate(entries):
        if i == at and n_hidden:
            out.append("      " + hidden(n_hidden, "entries"))
        out.extend(_entry_text(tree, e, view, "      "))
    if n_hidden and at >= len(entries):
        out.append("      " + hidden(n_hidden, "entries"))
    return out


def _entry_text(tree: MetadataTree, e: TreeEntry, view: _View, indent: str) -> list[str]:
    f = e.file
    fid = view.fid(f)
    status = _row_status(e)
    line = (f"{indent}{status:<8} {fid} {content_noun(f)} "
            f"{file_name(f.file_path)} · {plural(f.record_count, 'row')}")
    if f.partition:
        line += " · " + partition_text(f, tree.spec_fields.get(f.spec_id))
    out = [line]
    targets = [view.data_id(p) or file_name(p) for p in e.applies_to]
    if targets:
        out.append(f"{indent}  {t('applies to')} " + ", ".join(targets))
    return out


def metadata_tree_text(tree: MetadataTree) -> str:
    """The plain-text outline (an indented tree) for consoles."""
    return "\n".join(_text_lines(tree, _view(tree)))


def metadata_tree_figure(tree: MetadataTree) -> Graph:
    """The tree as a :class:`~icenb.display.kit.graph.Graph` (SVG in notebooks, ``.dot``,
    ``.text``): top-down, or left to right when that is too wide for a notebook."""
    view = _view(tree)
    title = (t("snapshot {id}", id=_label(tree)) if tree.snapshot is not None
             else t("no snapshot"))
    return Graph(_draw(tree, view).source(), "\n".join(_text_lines(tree, view)), title=title,
                 kind=t("Metadata tree"), caption=t(tree.note) if tree.note else "",
                 wide_dot=_draw(tree, view, "LR").source())


# --------------------------------------------------------------------------- HTML


def _manifest_rows(view: _View) -> list[list[str]]:
    rows = []
    for m in view.manifests:
        mf = m.manifest
        word = "deletes" if mf.content == ManifestContent.DELETES else "data"
        rows.append([h.esc(f"M{m.position + 1}"), h.badge(word, "muted"),
                     h.code(_short(file_name(mf.manifest_path))), h.esc(mf.partition_spec_id),
                     h.esc(mf.sequence_number), h.esc(count(mf.added_files_count)),
                     h.esc(count(mf.existing_files_count)), h.esc(count(mf.deleted_files_count)),
                     h.esc(count(m.entries_total))])
    return rows


def _file_rows(tree: MetadataTree, view: _View) -> list[list[str]]:
    rows = []
    held: list[tuple[str, TreeEntry]] = []
    if tree.index is not None:
        held += [("root", e) for e in tree.index.files]
    held += [(f"M{m.position + 1}", e) for m in view.manifests
             for e in view.entries[m.position][0]]
    for where, e in held:
        f = e.file
        applies = ", ".join(view.data_id(p) or file_name(p) for p in e.applies_to)
        rows.append([h.esc(view.fid(f)), h.esc(where),
                     status_badge(e.status)
                     + (h.badge(t("removed by DV"), "deleted") if e.removed else ""),
                     h.esc(content_noun(f)),
                     h.code(_short(short_path(f.file_path, tree.location), 60)),
                     h.esc(partition_text(f, tree.spec_fields.get(f.spec_id))),
                     h.esc(count(f.record_count)), h.esc(size(f.file_size_in_bytes)),
                     h.esc(e.sequence_number if e.sequence_number is not None else "-"),
                     h.esc(applies or "-")])
    return rows


@register(MetadataTree, text_repr=True)
def _render(tree: MetadataTree) -> Rendered:
    fig = metadata_tree_figure(tree)
    view = _view(tree)
    parts = [t("format v{v}", v=tree.format_version)]
    if tree.snapshot is not None and _named(tree) != str(tree.snapshot_id):
        parts.append(t("snapshot {id}", id=_named(tree)))
    if tree.metadata_location:
        parts.append(file_name(tree.metadata_location))
    shown, more = first(tree.refs)
    sub = "".join(h.badge(r, "branch") for r in shown) + \
        h.muted((t("+{n:,} more", n=more) + " · " if more else "") + " · ".join(parts))
    body = fig.html_fragment()
    limit = get_options().display_max_rows
    if tree.index is not None:
        body += h.section(t("Manifests"), h.table(
            [t(x) for x in ("id", "content", "file", "spec", "seq", "added files", "existing",
                            "deleted", "entries")], _manifest_rows(view), limit=limit,
            what="manifests", total=tree.index.manifests_total), open=True,
            count=str(tree.index.manifests_total))
        file_rows = _file_rows(tree, view)
        body += h.section(t("Files"), h.table(
            [t(x) for x in ("id", "manifest", "status", "kind", "file", "partition", "records",
                            "size", "data seq", "applies to")], file_rows, limit=limit,
            what="files"), count=str(len(file_rows)))
    return Rendered(h.card(t("Metadata tree"), fig.title, sub, body), fig.text)
