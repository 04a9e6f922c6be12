"""Draw a :class:`~icenb.table.explore.metadata_graph.MetadataGraph` (several snapshots' metadata,
each
shared manifest or file once, ADDED/EXISTING/DELETED on the edges, as in the figures of the v4
single-file-commits proposal) and a :class:`~icenb.table.explore.metadata_graph.LayoutComparison`
("root vs manifest list"). Only what the objects hold is drawn; nothing is read here.

The comparison is two graphs side by side (``html.columns``), not one DOT with two clusters:
each side stays a :class:`~icenb.display.kit.graph.Graph` of its own (saveable, readable alone),
Graphviz does not stretch one side to align ranks with the other, and on a narrow notebook the
columns wrap instead of shrinking one wide picture.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit.dot import PALETTE, Dot, FileNames, quote
from icenb.display.kit.fmt import (
    count,
    cut,
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
    table_place,
    timestamp,
)
from icenb.display.kit.graph import FIT_WIDTH_PX, Graph
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.table.explore.metadata_graph import (
    ContentType,
    DVEdge,
    EntryEdge,
    FileNode,
    LayoutComparison,
    ListEdge,
    ManifestDVNode,
    ManifestNode,
    MetadataGraph,
    SnapshotNode,
    V4Layout,
)
from icenb.table.explore.snapshot_labels import snapshot_labels

__all__ = ["layout_comparison_figures", "metadata_graph_figure", "v4_layout_figure"]

V4_CAPTION = ("v4 proposal (experimental, not adopted): how the first v4 commit would lay out "
              "this state")
V4_REAL_CAPTION = "v4 root manifest (experimental format: the single-file-commits proposal)"
V4_LAYOUT_CAPTION = ("Drawn from content entries (no table): snapshot → root manifest → "
                     "entries; edge labels: entry status and leaf ordinals.")
V4_GRAPH_NOTE = (" v4 (experimental): #n = a leaf row's ordinal; a manifest DV names the rows "
                 "it removes, drawn dotted grey.")
V3_CAPTION = "v1-v3: snapshot → manifest list → manifests → files"

_FILE_WORDS = {"data_file": "Data file", "delete_file": "Position delete file",
               "deletion_vector": "Deletion vector", "equality_delete": "Equality delete file"}
_TYPE_KINDS = {ContentType.DATA: "data_file", ContentType.POSITION_DELETE: "delete_file",
               ContentType.EQUALITY_DELETE: "equality_delete",
               ContentType.DATA_MANIFEST: "data_manifest",
               ContentType.DELETE_MANIFEST: "delete_manifest",
               ContentType.MANIFEST_DV: "manifest_dv"}


def _short(name: str, limit: int = 32) -> str:
    """A long file name shortened in the middle (uuids make names long), for node labels."""
    return middle(name, limit)


def _edge_style(status: str) -> dict[str, str]:
    """ADDED bold, EXISTING plain, DELETED dashed (the status is also the edge label)."""
    if status == "ADDED":
        return {"penwidth": "1.6"}
    if status == "DELETED":
        return {"style": "dashed"}
    return {}


class _Ids:
    """Short names (M1, D1, DV1: the v4 proposal's letters, FileNames) for the nodes, in
    graph order; snapshots by their table-wide label
    (S3, snapshot_labels; full ids for a large table; S1, S2, ... in graph order for a drawn
    layout without a table). ``node`` holds the DOT ids of the snapshot nodes."""

    def __init__(self, g: MetadataGraph) -> None:
        self.node = {s.snapshot_id: f"S{i + 1}" for i, s in enumerate(g.snapshots)}
        labels = snapshot_labels(g.table_snapshots)
        self.snapshot = (self.node if not g.table_snapshots else
                         {s.snapshot_id: labels.get(s.snapshot_id, str(s.snapshot_id))
                          for s in g.snapshots})
        self.manifest = {m.path: f"M{i + 1}" for i, m in enumerate(g.manifests)}
        # files numbered in the order they were added (sequence number, then graph order), as
        # the proposal numbers them; file and manifest DVs share one DV sequence (a manifest
        # DV first on a tie)
        seq: dict[tuple[str, int | None], int] = {}
        for e in g.entry_edges:
            if e.sequence_number is not None:
                seq[e.file_key] = min(seq.get(e.file_key, e.sequence_number), e.sequence_number)
        late = 1 << 62
        order = sorted([(seq.get(f.key, late), 1, i) for i, f in enumerate(g.files)]
                       + [(late if d.sequence_number is None else d.sequence_number, 0, i)
                          for i, d in enumerate(g.manifest_dvs)])
        names = FileNames()
        self.file: dict[tuple[str, int | None], str] = {}
        self.dv: dict[str, str] = {}
        for _, is_file, i in order:
            if is_file:
                self.file[g.files[i].key] = names.file(g.files[i].kind)
            else:
                self.dv[g.manifest_dvs[i].key] = names.next("DV")
        self.root = {r.location: t("root of {id}", id=self.snapshot.get(r.snapshot_id, "?"))
                     for r in g.roots}


class _View:
    """What is drawn under the current display options (the graph may hold more)."""

    def __init__(self, g: MetadataGraph) -> None:
        opts = get_options()
        head, n_hidden, tail = fold(g.snapshots, opts.display_max_snapshots)
        self.snapshots: list[SnapshotNode] = [*head, *tail]
        self.snapshots_hidden = n_hidden + g.snapshots_hidden
        # the graph itself left out the oldest ones: their placeholder goes first
        self.snapshots_fold_at = len(head) if n_hidden else 0
        self.lists: dict[int, list[ListEdge]] = {}
        self.lists_hidden: dict[int, int] = {}
        shown_ids = {s.snapshot_id for s in self.snapshots}
        by_snap: dict[int, list[ListEdge]] = {}
        for e in g.list_edges:
            if e.snapshot_id in shown_ids:
                by_snap.setdefault(e.snapshot_id, []).append(e)
        for s in self.snapshots:
            edges = by_snap.get(s.snapshot_id, [])
            lh, ln, lt = fold(edges, opts.display_max_manifests)
            self.lists[s.snapshot_id] = [*lh, *lt]
            self.lists_hidden[s.snapshot_id] = ln + s.manifests_hidden
        reached = {e.manifest_path for es in self.lists.values() for e in es}
        self.manifests: list[ManifestNode] = [m for m in g.manifests if m.path in reached]
        by_manifest: dict[str, list[EntryEdge]] = {}
        for fe in g.entry_edges:
            if fe.manifest_path in reached:
                by_manifest.setdefault(fe.manifest_path, []).append(fe)
        self.entries: dict[str, list[EntryEdge]] = {}
        self.entries_hidden: dict[str, int] = {}
        for m in self.manifests:
            es = by_manifest.get(m.path, [])
            eh, en, et = fold(es, opts.display_max_files)
            self.entries[m.path] = [*eh, *et]
            self.entries_hidden[m.path] = en + m.entries_hidden
        # v4 roots: files held by the root itself, and manifest DVs
        root_at = {r.location: r.snapshot_id for r in g.roots if r.snapshot_id in shown_ids}
        self.root_files: dict[int, list[EntryEdge]] = {}
        self.root_files_hidden: dict[int, int] = {}
        for fe in g.entry_edges:
            if fe.manifest_path in root_at:
                self.root_files.setdefault(root_at[fe.manifest_path], []).append(fe)
        for sid in list(self.root_files):
            rh, rn, rt = fold(self.root_files[sid], opts.display_max_files)
            self.root_files[sid] = [*rh, *rt]
            self.root_files_hidden[sid] = rn
        self.dv_edges: dict[int, list[DVEdge]] = {}
        for de in g.dv_edges:
            if de.snapshot_id in shown_ids:
                self.dv_edges.setdefault(de.snapshot_id, []).append(de)
        dvs_reached = {de.dv_key for es in self.dv_edges.values() for de in es}
        self.dvs: list[ManifestDVNode] = [d for d in g.manifest_dvs if d.key in dvs_reached]
        files_reached = {e.file_key for es in self.entries.values() for e in es}
        files_reached |= {e.file_key for es in self.root_files.values() for e in es}
        self.files: list[FileNode] = [f for f in g.files if f.key in files_reached]
        self.file_by_key = {f.key: f for f in self.files}


# --------------------------------------------------------------------------- labels


def _snapshot_label(s: SnapshotNode, short_id: str) -> str:
    if s.label is not None:
        return f"{short_id} · {_short(s.label, 40)}"
    lines = [f"{t('Snapshot')} {s.snapshot_id}" if short_id == str(s.snapshot_id)
             else f"{short_id} · {t('Snapshot')}",
             f"{s.operation or t('no operation')} · {t('seq {n}', n=s.sequence_number)}",
             timestamp(s.timestamp_ms)]
    if s.refs:
        lines.append(names([_short(r, 24) for r in s.refs], 3))
    return "\n".join(lines)


def _root_label(s: SnapshotNode) -> str:
    lines = [t("Root manifest")]
    if s.label is None and s.root_manifest is not None:
        lines.append(_short(file_name(s.root_manifest), 36))
    lines.append(t("unreadable") if s.error is not None
                 else plural(s.manifests_total, "entry", "entries"))
    return "\n".join(lines)


def _ordinals(d: ManifestDVNode, limit: int = 8) -> str:
    """``#1, #3`` (the leaf rows the DV removes), or why they are not known."""
    if d.ordinals is None:
        return t("ordinals not read") if d.error is None else t("unreadable")
    shown = [f"#{o}" for o in d.ordinals[:limit]]
    more = d.cardinality - len(shown)
    return ", ".join(shown) + (", " + t("+{n:,} more", n=more) if more > 0 else "")


def _dv_label(d: ManifestDVNode, short_id: str) -> str:
    return "\n".join([f"{short_id} · {t('Manifest DV')}", t("inline") if d.inline else
                      _short(file_name(d.location)),
                      t("removes {ordinals}", ordinals=plural(d.cardinality, "row"))])


def _entry_label(e: EntryEdge, ids: _Ids) -> str:
    """A leaf row's edge label: ordinal (v4), status, and the DVs that remove it."""
    label = e.status if e.ordinal is None else f"#{e.ordinal} {e.status}"
    if e.removed_by:
        label += "\n" + t("removed by {dvs}",
                          dvs=", ".join(ids.dv.get(k, "DV") for k in e.removed_by))
    return label


def _list_label(s: SnapshotNode, base: str) -> str:
    if s.has_root:
        return _root_label(s)
    if s.manifest_list is None:
        lines = [t("Manifests (v1: listed in the metadata)")]
    else:
        lines = [t("Manifest list"), _short(file_name(short_path(s.manifest_list, base)), 36)]
    if s.error is not None:
        lines.append(t("unreadable"))
    else:
        lines.append(plural(s.manifests_total, "manifest"))
    return "\n".join(lines)


def _manifest_label(m: ManifestNode, short_id: str) -> str:
    word = t("Delete manifest" if m.kind == "delete_manifest" else "Data manifest")
    lines = [f"{short_id} · {word}", _short(file_name(m.path))]
    if m.error is not None:
        lines.append(t("unreadable"))
    elif m.entries_total is not None:
        lines.append(plural(m.entries_total, "entry", "entries"))
    return "\n".join(lines)


def _node_file_name(f: FileNode, shorten: bool = True) -> str:
    """The file's name; a deletion vector's with ``@offset``, as one Puffin file holds many."""
    name = _short(file_name(f.path)) if shorten else file_name(f.path)
    return name if f.content_offset is None else f"{name}@{f.content_offset}"


def _file_label(f: FileNode, short_id: str) -> str:
    lines = [f"{short_id} · {t(_FILE_WORDS.get(f.kind, 'File'))}", _node_file_name(f)]
    facts = []
    if f.record_count is not None:
        facts.append(plural(f.record_count, "row"))
    if f.size_in_bytes is not None:
        facts.append(size(f.size_in_bytes))
    if facts:
        lines.append(" · ".join(facts))
    if f.referenced_data_file:
        lines.append("→ " + _short(file_name(f.referenced_data_file)))
    return "\n".join(lines)


# --------------------------------------------------------------------------- DOT


def _draw_leaves(dot: Dot, g: MetadataGraph, view: _View, ids: _Ids, prefix: str,
                 manifests: Sequence[ManifestNode]) -> None:
    """Manifest nodes, their entries' file nodes, and the entry edges (status labels)."""
    for m in manifests:
        mid = f"{prefix}{ids.manifest[m.path]}"
        dot.node(mid, _manifest_label(m, ids.manifest[m.path]), kind=m.kind,
                 tooltip=short_path(m.path, g.location))
        for e in view.entries.get(m.path, []):
            f = view.file_by_key.get(e.file_key)
            if f is None:
                continue
            fid = f"{prefix}{ids.file[f.key]}"
            dot.node(fid, _file_label(f, ids.file[f.key]), kind=f.kind,
                     tooltip=short_path(f.path, g.location))
            if e.removed_by:   # a manifest DV removes this row: dimmed, struck through
                dot.edge(mid, fid, label=_entry_label(e, ids), style="dotted",
                         color=PALETTE["removed"][1], fontcolor=PALETTE["removed"][1])
            else:
                dot.edge(mid, fid, label=_entry_label(e, ids), **_edge_style(e.status))
        n = view.entries_hidden.get(m.path, 0)
        if n:
            dot.node(f"{mid}_more", hidden(n, "entries"), kind="folded")
            dot.edge(mid, f"{mid}_more", style="dotted")
        if m.error is not None:
            dot.node(f"{mid}_err", cut(t("not read: {error}", error=m.error)), kind="removed")
            dot.edge(mid, f"{mid}_err", style="dotted")
    # a deletion vector names the data file it applies to (spec: referenced_data_file)
    for f in view.files:
        target = ids.file.get((f.referenced_data_file or "", None))
        fid = f"{prefix}{ids.file[f.key]}"
        if target and dot.has_node(fid) and dot.has_node(f"{prefix}{target}"):
            dot.edge(fid, f"{prefix}{target}", label=t("applies to"), style="dashed",
                     constraint="false")


def _draw_root(dot: Dot, view: _View, ids: _Ids, s: SnapshotNode, lid: str, base: str) -> None:
    """A v4 root's own entries: content files at the root and manifest DVs, each DV with an
    edge to the leaf it applies to naming the ordinals it removes (the proposal's drawings)."""
    for e in view.root_files.get(s.snapshot_id, []):
        f = view.file_by_key.get(e.file_key)
        if f is None:
            continue
        fid = ids.file[f.key]
        dot.node(fid, _file_label(f, fid), kind=f.kind, tooltip=short_path(f.path, base))
        dot.edge(lid, fid, label=e.status, **_edge_style(e.status))
    n = view.root_files_hidden.get(s.snapshot_id, 0)
    if n:
        dot.node(f"{lid}_fmore", hidden(n, "files"), kind="folded")
        dot.edge(lid, f"{lid}_fmore", style="dotted")
    by_key = {d.key: d for d in view.dvs}
    for de in view.dv_edges.get(s.snapshot_id, []):
        d = by_key.get(de.dv_key)
        if d is None:
            continue
        did = ids.dv[d.key]
        if not dot.has_node(did):
            dot.node(did, _dv_label(d, did), kind="manifest_dv",
                     tooltip=short_path(d.location, base))
            target = ids.manifest.get(d.referenced_file)
            if target is not None and any(m.path == d.referenced_file for m in view.manifests):
                dot.edge(did, target, label=f"{t('applies to')}\n"
                         + t("removes {ordinals}", ordinals=_ordinals(d)),
                         style="dashed", constraint="false")
            if d.error is not None:
                dot.node(f"{did}_err", cut(t("not read: {error}", error=d.error)),
                         kind="removed")
                dot.edge(did, f"{did}_err", style="dotted")
        dot.edge(lid, did, label=de.status, **_edge_style(de.status))


def metadata_graph_dot(g: MetadataGraph, rankdir: str = "TB") -> str:
    """The DOT source of the multi-snapshot graph (top-down, snapshots in a row; ``"LR"``:
    left to right, snapshots in a column)."""
    view, ids = _View(g), _Ids(g)
    dot = Dot("metadata_graph", rankdir=rankdir)
    snap_ids: list[str] = []
    for i, s in enumerate(view.snapshots):
        if i == view.snapshots_fold_at and view.snapshots_hidden:
            dot.node("S_more", hidden(view.snapshots_hidden, "snapshots"), kind="folded")
            snap_ids.append("S_more")
        sid = ids.node[s.snapshot_id]
        snap_ids.append(sid)
        dot.node(sid, _snapshot_label(s, ids.snapshot[s.snapshot_id]),
                 kind="snapshot_current" if s.current else "snapshot",
                 tooltip="" if s.label is not None else t("snapshot {id}", id=s.snapshot_id))
    if view.snapshots_hidden and view.snapshots_fold_at >= len(view.snapshots):
        dot.node("S_more", hidden(view.snapshots_hidden, "snapshots"), kind="folded")
        snap_ids.append("S_more")
    list_ids: list[str] = []
    for s in view.snapshots:
        sid = ids.node[s.snapshot_id]
        lid = f"L{sid[1:]}"
        list_ids.append(lid)
        dot.node(lid, _list_label(s, g.location),
                 kind="root" if s.has_root else "manifest_list",
                 tooltip=short_path(s.root_manifest or s.manifest_list or "", g.location))
        dot.edge(sid, lid)
        if s.has_root:
            _draw_root(dot, view, ids, s, lid, g.location)
        for e in view.lists[s.snapshot_id]:
            dot.edge(lid, ids.manifest[e.manifest_path], label=e.status, **_edge_style(e.status))
        n = view.lists_hidden[s.snapshot_id]
        if n:
            dot.node(f"{lid}_more", hidden(n, "manifests"), kind="folded")
            dot.edge(lid, f"{lid}_more", style="dotted")
        if s.error is not None:
            dot.node(f"{lid}_err", cut(t("not read: {error}", error=s.error)), kind="removed")
            dot.edge(lid, f"{lid}_err", style="dotted")
    # oldest first: top-down, a row of snapshots above a row of their lists; left to right,
    # one column with each snapshot above its list (a column less across)
    lid_of = {f"S{lid[1:]}": lid for lid in list_ids}
    rows = ([[x for sid in snap_ids for x in (sid, lid_of.get(sid)) if x]] if rankdir == "LR"
            else [snap_ids, list_ids])
    for row in rows:
        if row:
            dot.same_rank(row)
            for a, b in itertools.pairwise(row):
                dot.edge(a, b, style="invis")
    _draw_leaves(dot, g, view, ids, "", view.manifests)
    return dot.source()


def _record_text(text: str) -> str:
    """Text for a Graphviz record field: record syntax characters and quotes escaped."""
    out = []
    for ch in cut(text):
        if ch in '{}|<>"\\':
            out.append("\\" + ch)
        elif ch in "\r\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _top_table(dot: Dot, node_id: str, title: str, subtitle: str, kind: str,
               rows: Sequence[tuple[str, str, str, str]], n_hidden: int,
               rankdir: str = "TB") -> None:
    """A manifest list or root manifest drawn as a record, one row (and port) per entry:
    (port, name, content, status). A record, not an HTML-like table label: the WebAssembly
    renderer has no HTML-label support (no expat), records render everywhere."""
    head = _record_text(title) + (f"\\n{_record_text(subtitle)}" if subtitle else "")
    fields = [head]
    for port, name, content, status in rows:
        tag = f"<{_record_text(port)}> "   # on the cell the row's edge leaves from
        first, last = ("", tag) if rankdir == "LR" else (tag, "")
        fields.append(f"{{{first}{_record_text(name)}|{_record_text(content)}"
                      f"|{last}{_record_text(status)}}}")
    if n_hidden:
        fields.append(_record_text(hidden(n_hidden, "entries")))
    if not rows:
        fields.append(_record_text(t("no entries")))
    fill, stroke = PALETTE.get(kind, PALETTE["folded"])
    # top-down graphs stack a record's fields left to right unless wrapped in braces
    label = "|".join(fields) if rankdir == "LR" else "{" + "|".join(fields) + "}"
    dot.raw(f'{quote(node_id)} [shape="Mrecord" style="filled" fillcolor="{fill}" '
            f'color="{stroke}" class="{kind}" label="{label}"];')


def _comparison_label(c: LayoutComparison) -> str:
    """The compared snapshot's short label (S3) or full id."""
    return snapshot_label(c.graph.table_snapshots, c.snapshot_id)


def _comparison_dots(c: LayoutComparison, rankdir: str = "TB") -> tuple[str, str]:
    """DOT of the v1-v3 side and of the v4 side (top-down, or ``"LR"``: left to right)."""
    east = ":e" if rankdir == "LR" else ""   # a row's edge leaves its right side
    g = c.graph
    view, ids = _View(g), _Ids(g)
    snap = c.snapshot
    label = _comparison_label(c)
    sid_label = (f"{t('Snapshot')} {label}" if snap is None else
                 f"{t('Snapshot')} {label}\n{snap.operation or t('no operation')} · "
                 f"{t('seq {n}', n=snap.sequence_number)}")
    tip = t("snapshot {id}", id=c.snapshot_id)
    manifests = view.manifests
    # left: manifest list
    left = Dot("manifest_list_layout", rankdir=rankdir)
    left.node("S", sid_label, kind="snapshot", tooltip=tip)
    rows: list[tuple[str, str, str, str]] = []
    edges = view.lists.get(c.snapshot_id, [])
    for e in edges:
        m = g.manifest(e.manifest_path)
        content = "deletes" if m is not None and m.kind == "delete_manifest" else "data"
        rows.append((ids.manifest[e.manifest_path],
                     f"{ids.manifest[e.manifest_path]} {_short(file_name(e.manifest_path), 28)}",
                     content, e.status))
    list_name = "" if snap is None or snap.manifest_list is None else _short(
        file_name(snap.manifest_list), 40)
    list_title = t("Manifest list")
    if snap is not None and snap.has_root:
        # a v4 snapshot has no manifest list: the fewest v3 manifests holding its files
        list_title = t("Manifest list (v3 equivalent)")
        list_name = t("not written: a v4 snapshot")
        for kind, word in (("data", "data files"), ("deletes", "delete files")):
            n = sum(1 for e in view.root_files.get(c.snapshot_id, [])
                    if e.status != "DELETED" and (
                        (view.file_by_key[e.file_key].kind == "data_file") == (kind == "data")))
            if n:
                rows.append((f"X{kind}", t("1 manifest for the root's {files}",
                                           files=plural(n, word[:-1])), kind, "ADDED"))
    _top_table(left, "L", list_title, list_name, "manifest_list", rows,
               view.lists_hidden.get(c.snapshot_id, 0), rankdir)
    left.edge("S", "L")
    for e in edges:
        left.edge(f"L:{ids.manifest[e.manifest_path]}{east}", ids.manifest[e.manifest_path])
    if snap is not None and snap.error is not None:
        left.node("L_err", cut(t("not read: {error}", error=snap.error)), kind="removed")
        left.edge("L", "L_err", style="dotted")
    _draw_leaves(left, g, view, ids, "", manifests)
    # right: root manifest
    right = Dot("root_manifest_layout", rankdir=rankdir)
    right.node("S", sid_label, kind="snapshot", tooltip=tip)
    root = c.root
    opts = get_options()
    head, n_hidden, tail = fold(root.entries, opts.display_max_manifests)
    shown = [*head, *tail]
    root_rows: list[tuple[str, str, str, str]] = []
    leaves: list[ManifestNode] = []
    others: list[tuple[str, str, str, str | None]] = []   # (port, kind, location, referenced)
    for i, re in enumerate(shown):
        known = ids.manifest.get(re.location) if re.content_type.is_manifest else None
        port = known or f"E{i + 1}"
        root_rows.append((port, f"{known + ' ' if known else ''}"
                                f"{_short(file_name(re.location), 28)}",
                          re.content_type.name, re.status))
        m = g.manifest(re.location)
        if re.content_type in (ContentType.DATA_MANIFEST, ContentType.DELETE_MANIFEST) \
                and m is not None:
            leaves.append(m)
        else:
            others.append((port, _TYPE_KINDS.get(re.content_type, "folded"), re.location,
                           re.referenced_file))
    total_hidden = n_hidden + max(root.entries_total - len(root.entries), 0)
    title = t("Root manifest (derived)" if root.derived else "Root manifest")
    sub = "" if root.location is None else _short(file_name(root.location), 40)
    _top_table(right, "R", title, sub, "root", root_rows, total_hidden, rankdir)
    right.edge("S", "R")
    leaf_ports = {ids.manifest[m.path] for m in leaves}
    for port, *_ in root_rows:
        if port in leaf_ports:
            right.edge(f"R:{port}{east}", f"v4{port}")
    for port, kind, location, referenced in others:
        right.node(f"v4{port}", _short(file_name(location)), kind=kind,
                   tooltip=short_path(location, g.location))
        right.edge(f"R:{port}{east}", f"v4{port}")
        if referenced and referenced in ids.manifest:
            right.edge(f"v4{port}", f"v4{ids.manifest[referenced]}", label=t("applies to"),
                       style="dashed")
    _draw_leaves(right, g, view, ids, "v4", leaves)
    return left.source(), right.source()


# --------------------------------------------------------------------------- text


def _root_held(s: SnapshotNode, view: _View, ids: _Ids) -> list[str]:
    """What a v4 root holds: leaf manifests, files at the root, manifest DVs (statuses)."""
    sid = s.snapshot_id
    held = [f"{e.status} {ids.manifest[e.manifest_path]}" for e in view.lists[sid]]
    held += [f"{e.status} {ids.file[e.file_key]}" for e in view.root_files.get(sid, [])]
    held += [f"{e.status} {ids.dv[e.dv_key]}" for e in view.dv_edges.get(sid, [])]
    n = view.lists_hidden[sid] + view.root_files_hidden.get(sid, 0)
    if n:
        held.append(hidden(n, "entries"))
    return held


def _root_outline(s: SnapshotNode, view: _View, ids: _Ids) -> list[str]:
    if s.error is not None:
        return ["     " + t("root manifest not read: {error}", error=s.error)]
    where = (t("root manifest") if s.label is not None or s.root_manifest is None
             else f"{t('root manifest')} {file_name(s.root_manifest)}")
    return [f"     {where}: {', '.join(_root_held(s, view, ids)) or t('empty')}"]


def _dv_outline(view: _View, ids: _Ids) -> list[str]:
    if not view.dvs:
        return []
    lines = [t("Manifest deletion vectors (each applies to one leaf manifest):")]
    for d in view.dvs:
        target = ids.manifest.get(d.referenced_file, file_name(d.referenced_file))
        added = "" if d.added_snapshot_id is None else ", " + t(
            "added by {id}", id=ids.snapshot.get(d.added_snapshot_id, str(d.added_snapshot_id)))
        how = t("inline") if d.inline else file_name(d.location)
        lines.append("  " + t("{dv} applies to {target}, removes {ordinals} ({how})",
                              dv=ids.dv[d.key], target=target, ordinals=_ordinals(d),
                              how=how + added))
        if d.error is not None:
            lines.append("     " + t("not read: {error}", error=d.error))
    return lines


def _entry_text(e: EntryEdge, ids: _Ids) -> str:
    text = f"{e.status} {ids.file[e.file_key]}"
    if e.ordinal is not None:
        text = f"#{e.ordinal} {text}"
    if e.removed_by:
        text += " (" + t("removed by {dvs}",
                         dvs=", ".join(ids.dv.get(k, "DV") for k in e.removed_by)) + ")"
    return text


def _text_outline(g: MetadataGraph, view: _View, ids: _Ids) -> list[str]:
    lines = [t("Snapshots (each root manifest and what it holds):") if g.roots and all(
        s.has_root for s in view.snapshots) else
        t("Snapshots (each manifest list or root manifest and what it holds):") if g.roots else
        t("Snapshots (each manifest list and the manifests it holds):")]
    if not view.snapshots:
        lines.append(f"  ({t('no snapshots')})")
    for i, s in enumerate(view.snapshots):
        if i == view.snapshots_fold_at and view.snapshots_hidden:
            lines.append("  " + hidden(view.snapshots_hidden, "snapshots"))
        refs = f" [{names(s.refs)}]" if s.refs else ""
        if s.label is not None:
            lines.append(f"  {ids.snapshot[s.snapshot_id]} {s.label}")
        else:
            lines.append(f"  {ids.snapshot[s.snapshot_id]} "
                         f"{t('snapshot {id}', id=s.snapshot_id)} "
                         f"{s.operation or '-'} {t('seq {n}', n=s.sequence_number)} "
                         f"{timestamp(s.timestamp_ms)}{refs}"
                         f"{' (' + t('current') + ')' if s.current else ''}")
        if s.has_root:
            lines.extend(_root_outline(s, view, ids))
            continue
        if s.error is not None:
            lines.append("     " + t("manifest list not read: {error}", error=s.error))
            continue
        held = [f"{e.status} {ids.manifest[e.manifest_path]}"
                for e in view.lists[s.snapshot_id]]
        n = view.lists_hidden[s.snapshot_id]
        if n:
            held.append(hidden(n, "manifests"))
        where = (t("manifests in metadata") if s.manifest_list is None
                 else f"{t('manifest list')} {file_name(s.manifest_list)}")
        lines.append(f"     {where}: {', '.join(held) or t('empty')}")
    if view.snapshots_hidden and view.snapshots_fold_at >= len(view.snapshots):
        lines.append("  " + hidden(view.snapshots_hidden, "snapshots"))
    if view.manifests:
        lines.append(t("Manifests (each once; EXISTING in a later list = reused):"))
    for m in view.manifests:
        added_by = ids.snapshot.get(m.added_snapshot_id, str(m.added_snapshot_id))
        word = t("delete manifest" if m.kind == "delete_manifest" else "data manifest")
        lines.append(f"  {ids.manifest[m.path]} {word} {file_name(m.path)} "
                     f"({t('added by {id}', id=added_by)})")
        if m.error is not None:
            lines.append("     " + t("not read: {error}", error=m.error))
            continue
        if not g.entries:
            continue
        held = [_entry_text(e, ids) for e in view.entries[m.path]]
        n = view.entries_hidden[m.path]
        if n:
            held.append(hidden(n, "entries"))
        lines.append(f"     {t('entries')}: {', '.join(held) or t('none')}")
    lines.extend(_dv_outline(view, ids))
    if view.files:
        lines.append(t("Files") + ":")
        rows = [[ids.file[f.key], t(_FILE_WORDS.get(f.kind, "file").lower()),
                 _node_file_name(f, shorten=False),
                 count(f.record_count), size(f.size_in_bytes)] for f in view.files]
        lines.append(tx.table([t("id"), t("kind"), t("file"), t("rows"), t("size")], rows,
                              indent="  "))
    return lines


def metadata_graph_text(g: MetadataGraph) -> str:
    """The console outline of the graph."""
    view, ids = _View(g), _Ids(g)
    head = (t("Metadata graph of {location} (format v{v})",
              location=table_place(g.name, g.location),
              v=g.format_version) + ": "
            f"{plural(len(g.snapshots), 'snapshot')}, {plural(len(g.manifests), 'manifest')}, "
            f"{plural(len(g.files), 'file')}")
    return "\n".join([head, *_text_outline(g, view, ids)])


def metadata_graph_figure(g: MetadataGraph) -> Graph:
    """The graph as a :class:`Graph` (``.dot``, ``.svg()``, ``.save(path)``)."""
    return Graph(metadata_graph_dot(g), metadata_graph_text(g), kind=t("Metadata graph"),
                 title=t("{snapshots} of {location}",
                         snapshots=plural(len(g.snapshots), "snapshot"),
                         location=table_place(g.name, g.location)),
                 caption=t("One node per manifest and file, shared across snapshots; edge "
                           "labels: entry status (ADDED / EXISTING / DELETED).")
                 + (t(V4_GRAPH_NOTE) if g.roots else ""),
                 wide_dot=metadata_graph_dot(g, "LR"))


def v4_layout_figure(layout: V4Layout) -> Graph:
    """A drawn v4 layout (:func:`~icenb.table.explore.metadata_graph.v4_layout`) as a
    :class:`Graph`,
    drawn by the same code as a real v4 table's metadata graph."""
    g = layout.graph
    view, ids = _View(g), _Ids(g)
    title = layout.title or t("v4 layout")
    lines = [title + " (" + t("v4 layout, drawn: experimental single-file-commits proposal")
             + ")", *_text_outline(g, view, ids)]
    if layout.note:
        lines.append(t("Note: {note}", note=layout.note))
    return Graph(metadata_graph_dot(g), "\n".join(lines), kind=t("v4 layout"), title=title,
                 caption=layout.note or t(V4_LAYOUT_CAPTION), wide_dot=metadata_graph_dot(g, "LR"))


def _root_text(c: LayoutComparison, ids: _Ids) -> list[str]:
    root = c.root
    opts = get_options()
    head, n_hidden, tail = fold(root.entries, opts.display_max_manifests)
    where = (t("derived from the manifest list (proposal: Upgrade)") if root.derived
             else file_name(root.location or ""))
    lines = [f"  {t('root manifest')}, {where}: "
             f"{plural(root.entries_total, 'entry', 'entries')}"]
    for i, e in enumerate([*head, *tail]):
        if i == len(head) and n_hidden:
            lines.append("    " + hidden(n_hidden, "entries"))
        if e.content_type == ContentType.MANIFEST_DV:
            target = ids.manifest.get(e.referenced_file or "", "")
            lines.append(f"    {e.status:<8} {e.content_type.name:<15} {t('applies to')} "
                         f"{target or file_name(e.referenced_file or '')}")
            continue
        known = ids.manifest.get(e.location, "")
        lines.append(f"    {e.status:<8} {e.content_type.name:<15} {known + ' ' if known else ''}"
                     f"{file_name(e.location)}")
    rest = root.entries_total - len(root.entries)
    if rest > 0:
        lines.append("    " + hidden(rest, "entries"))
    return lines


def _rows_text(c: LayoutComparison) -> list[list[str]]:
    return [[t(r.what), count(r.manifest_list), count(r.root_manifest)] for r in c.rows()]


def layout_comparison_figures(c: LayoutComparison) -> tuple[Graph, Graph]:
    """The two sides as graphs: (v1-v3 manifest list layout, v4 root manifest layout)."""
    left_dot, right_dot = _comparison_dots(c)
    left_wide, right_wide = _comparison_dots(c, "LR")
    half = FIT_WIDTH_PX / 2   # shown side by side
    g = c.graph
    view, ids = _View(g), _Ids(g)
    outline = _text_outline(g, view, ids)
    caption = t(V4_CAPTION if c.root.derived else V4_REAL_CAPTION)
    title = t("snapshot {id}", id=_comparison_label(c))
    left = Graph(left_dot, "\n".join([t(V3_CAPTION), *outline]),
                 kind=t("Manifest list layout"), title=title, caption=t(V3_CAPTION),
                 wide_dot=left_wide, fit_width=half)
    right = Graph(right_dot, "\n".join([caption, *_root_text(c, ids)]),
                  kind=t("Root manifest layout"), title=title, caption=caption,
                  wide_dot=right_wide, fit_width=half)
    return left, right


# --------------------------------------------------------------------------- HTML


def _manifest_rows(g: MetadataGraph, view: _View, ids: _Ids) -> list[list[str]]:
    rows = []
    for m in view.manifests:
        incoming = g.edges_into_manifest(m.path)
        held_by = ", ".join(f"{ids.snapshot.get(e.snapshot_id, '?')} {e.status}"
                            for e in incoming)
        entries = (t("not read: {error}", error=m.error) if m.error is not None
                   else count(m.entries_total))
        rows.append([h.esc(ids.manifest[m.path]),
                     h.badge("deletes" if m.kind == "delete_manifest" else "data", "muted"),
                     h.code(file_name(m.path)),
                     h.esc(ids.snapshot.get(m.added_snapshot_id, str(m.added_snapshot_id))),
                     h.esc(held_by), h.esc(entries)])
    return rows


def _file_rows(g: MetadataGraph, view: _View, ids: _Ids) -> list[list[str]]:
    rows = []
    for f in view.files:
        into = g.edges_into_file(f.path, f.content_offset)
        held_by = ", ".join(
            f"{ids.manifest.get(e.manifest_path) or ids.root.get(e.manifest_path, '?')} "
            f"{e.status}" + (" (" + t("removed by {dvs}", dvs=", ".join(
                ids.dv.get(k, "DV") for k in e.removed_by)) + ")" if e.removed_by else "")
            for e in into)
        where = short_path(f.path, g.location)
        if f.content_offset is not None:
            where += f"@{f.content_offset}"
        rows.append([h.esc(ids.file[f.key]), h.esc(t(_FILE_WORDS.get(f.kind, "file"))),
                     h.code(where), h.esc(count(f.record_count)),
                     h.esc(size(f.size_in_bytes)), h.esc(held_by)])
    return rows


def _snapshot_rows(view: _View, ids: _Ids) -> list[list[str]]:
    rows = []
    for s in view.snapshots:
        shown, more = first(s.refs)
        refs = "".join(h.badge(r, "info") for r in shown) + \
            (h.muted(" " + t("+{n:,} more", n=more)) if more else "")
        if s.current:
            refs += h.badge(t("current"), "current")
        if s.has_root:
            held = (t("not read: {error}", error=s.error) if s.error is not None
                    else t("root: ") + ", ".join(_root_held(s, view, ids)))
        else:
            held = (t("not read: {error}", error=s.error) if s.error is not None
                    else ", ".join(f"{e.status} {ids.manifest[e.manifest_path]}"
                                   for e in view.lists[s.snapshot_id]))
            if view.lists_hidden[s.snapshot_id]:
                held += ", " + hidden(view.lists_hidden[s.snapshot_id], "manifests")
        rows.append([h.esc(ids.snapshot[s.snapshot_id]),
                     h.esc(s.label) if s.label is not None else h.code(s.snapshot_id),
                     h.esc(s.operation or "-"), h.esc(s.sequence_number),
                     h.esc(timestamp(s.timestamp_ms)), refs, h.esc(held)])
    return rows


def _sections(g: MetadataGraph, view: _View, ids: _Ids) -> str:
    limit = get_options().display_max_rows
    def heads(*names: str) -> list[str]:
        return [t(x) for x in names]

    body = h.section(t("Snapshots"), h.table(
        heads("id", "snapshot", "operation", "seq", "time", "refs", "manifest list holds"),
        _snapshot_rows(view, ids), limit=limit, what="snapshots",
        total=len(view.snapshots) + view.snapshots_hidden), count=str(len(g.snapshots)))
    body += h.section(t("Manifests"), h.table(
        heads("id", "content", "file", "added by", "in manifest lists", "entries"),
        _manifest_rows(g, view, ids), limit=limit, what="manifests"),
        count=str(len(view.manifests)))
    if view.dvs:
        body += h.section(t("Manifest deletion vectors"), h.table(
            heads("id", "applies to", "removes", "stored", "added by"),
            [[h.esc(ids.dv[d.key]),
              h.esc(ids.manifest.get(d.referenced_file, file_name(d.referenced_file))),
              h.esc(_ordinals(d) + ("" if d.error is None
                                    else f" ({t('not read: {error}', error=d.error)})")),
              h.esc(t("inline") if d.inline else file_name(d.location)),
              h.esc("" if d.added_snapshot_id is None
                    else ids.snapshot.get(d.added_snapshot_id, str(d.added_snapshot_id)))]
             for d in view.dvs], limit=limit, what="manifest DVs"), count=str(len(view.dvs)))
    if g.entries:
        body += h.section(t("Files"), h.table(
            heads("id", "kind", "file", "rows", "size", "in manifests"),
            _file_rows(g, view, ids), limit=limit, what="files"), count=str(len(view.files)))
    return body


def _note(text: str) -> str:
    return f'<div class="icenb-muted">{h.esc(text, 2000)}</div>'


@register(MetadataGraph, text_repr=True)
def _render_graph(g: MetadataGraph) -> Rendered:
    fig = metadata_graph_figure(g)
    view, ids = _View(g), _Ids(g)
    sub = h.muted(f"{t('format v{v}', v=g.format_version)} · "
                  f"{plural(len(g.manifests), 'manifest')} · {plural(len(g.files), 'file')}")
    body = fig.html_fragment() + _sections(g, view, ids)
    return Rendered(h.card(t("Metadata graph"), fig.title, sub, body), fig.text)


@register(V4Layout, text_repr=True)
def _render_layout(layout: V4Layout) -> Rendered:
    fig = v4_layout_figure(layout)
    g = layout.graph
    sub = h.muted(f"{plural(len(g.snapshots), 'snapshot')} · "
                  f"{plural(len(g.manifests), 'leaf manifest')} · "
                  f"{plural(len(g.manifest_dvs), 'manifest DV')}")
    return Rendered(h.card(t("v4 layout"), fig.title, sub, fig.html_fragment()), fig.text)


def _picture(g: Graph) -> str:
    """A graph's picture without its caption (the caption is the heading above it)."""
    caption, g.caption = g.caption, ""
    try:
        return g.html_fragment()
    finally:
        g.caption = caption


@register(LayoutComparison, text_repr=True)
def _render_comparison(c: LayoutComparison) -> Rendered:
    left, right = layout_comparison_figures(c)
    snap_has_root = c.snapshot is not None and c.snapshot.has_root
    headers = ["", t("v1-v3 manifest list"), t("v4 root manifest")]
    rows = [[h.esc(r[0]), h.esc(r[1]), h.esc(r[2])] for r in _rows_text(c)]
    # captions as headings above the pictures, not repeated below them
    left_html = f"<div><b>{h.esc(left.caption, 2000)}</b></div>" + _picture(left)
    right_html = f"<div><b>{h.esc(right.caption, 2000)}</b></div>" + _picture(right)
    body = (h.columns(left_html, right_html)
            + h.section(t("What a reader opens"), h.table(headers, rows), open=True)
            + _note(t("Counts come from this snapshot's manifest list; the derived root has one "
                      "entry per manifest-list entry, so the counts only differ once v4 commits "
                      "put files or manifest deletion vectors in the root.")
                    if c.root.derived else
                    t("This snapshot has no manifest list (written as v4): the v1-v3 column "
                      "counts the fewest manifests that would hold the same files (its live "
                      "leaves, and one manifest per kind for the files its root holds).")
                    if snap_has_root else t("Counts come from the manifest list and the root.")))
    snap = c.snapshot
    sub = h.muted(t("snapshot {id}", id=c.snapshot_id) + ("" if snap is None else
                  f" · {snap.operation or '-'} · "
                  f"{t('seq {n}', n=snap.sequence_number)} · {timestamp(snap.timestamp_ms)}"))
    title = t("snapshot {id}", id=_comparison_label(c))
    text = "\n".join([
        f"{t('Root vs manifest list')}: {title}",
        left.text,
        right.text,
        t("What a reader opens") + ":",
        tx.table(headers, _rows_text(c), indent="  "),
    ])
    return Rendered(h.card(t("Root vs manifest list"), title, sub, body), text)
