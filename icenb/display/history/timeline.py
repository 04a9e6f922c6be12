"""Version logs as timelines: the snapshot log, the metadata log and a view's version log.

Time runs left to right, one node per log entry; a move back to an entry that was current
before is labelled "rollback" (table spec: Table Metadata Fields ``snapshot-log`` and
``metadata-log``; view spec: "version-log": "If the view has been updated and rolled back, this
will show it"). Long logs fold to a head and a tail of ``display_max_snapshots`` entries; only
the shown entries are formatted, so the cost does not grow with the log.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit.dot import PALETTE, Dot
from icenb.display.kit.graph import Graph, GraphNode
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.reprs import safe_repr
from icenb.table.explore.history import MetadataLog, SnapshotLog, Snapshots, ViewVersionLog
from icenb.table.explore.snapshot_labels import snapshot_labels

__all__ = ["metadata_log_timeline", "snapshot_log_timeline", "snapshot_strip",
           "view_version_timeline"]

_ROLLBACK_COLOR = "#c62828"


class _LazyRows(Sequence[list[str]]):
    """Rows built on demand, so folding a 10,000-entry log formats only the rows shown."""

    def __init__(self, n: int, row: Callable[[int], list[str]]) -> None:
        self._n = n
        self._row = row

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> list[str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[str]]: ...

    def __getitem__(self, index: int | slice) -> list[str] | list[list[str]]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        return self._row(index)


@safe_repr
@dataclass(frozen=True)
class _Node:
    label: str
    kind: str
    bold: bool = False
    greyed: bool = False
    snapshot_id: int | None = None
    version_id: int | None = None
    tooltip: str = ""


@safe_repr
@dataclass(frozen=True)
class _Timeline:
    """What differs between the three logs; the drawing and folding are shared."""

    name: str
    what: str                       # "entries", "metadata files", ...
    one: str                        # "entry", "metadata file", ...
    n: int
    time: Callable[[int], int]
    node: Callable[[int], _Node]
    rollbacks: frozenset[int]       # indexes whose entry moved back to an earlier state
    headers: tuple[str, ...]
    html_row: Callable[[int], list[str]]
    text_row: Callable[[int], list[str]]


#: A timeline wider than this (points, estimated from its labels) wraps into rows.
_FIT_PT = 660


def _rows(order: Sequence[str], labels: Mapping[str, str]) -> list[list[str]]:
    """A long left-to-right chain cut into rows that fit a notebook (one row when it fits)."""
    def width(node: str) -> float:   # Helvetica 10 pt: ~5 pt a character, plus margins
        return max((len(x) for x in labels.get(node, "").splitlines()), default=4) * 5.0 + 20

    gap = 30.0   # the edge between two neighbours
    rows: list[list[str]] = [[]]
    used = 0.0
    for node in order:
        if rows[-1] and used + width(node) > _FIT_PT:
            rows.append([])
            used = 0.0
        rows[-1].append(node)
        used += width(node) + gap
    return rows


def _draw_rows(dot: Dot, rows: list[list[str]],
               edges: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    """The chain's edges; in several rows, each row one rank read left to right, the rows
    stacked below one another (an invisible edge between their first nodes) and the edge
    from a row's end to the next row's start left out of the layout."""
    if len(rows) > 1:
        dot.graph_attrs["rankdir"] = "TB"
    row_of = {node: i for i, row in enumerate(rows) for node in row}
    for a, b, attrs in edges:
        if row_of.get(a) != row_of.get(b):
            attrs = {**attrs, "constraint": "false"}
        dot.edge(a, b, **attrs)
    if len(rows) > 1:
        for row in rows:
            dot.same_rank(row)
        for upper, lower in itertools.pairwise(rows):
            dot.edge(upper[0], lower[0], style="invis")


def _graph(tl: _Timeline, title: str, kind: str) -> Graph:
    limit = get_options().display_max_snapshots
    head, n_hidden, tail = fmt.fold(range(tl.n), limit)
    dot = Dot(tl.name, rankdir="LR")
    order: list[str] = []
    drawn: dict[str, str] = {}
    edges: list[tuple[str, str, dict[str, Any]]] = []
    prev: str | None = None
    shown = [*head, None, *tail] if n_hidden else list(head)
    lines: list[str] = []
    nodes: dict[str, GraphNode] = {}
    for i in shown:
        if i is None:
            first, last = head[-1] + 1, tail[0] - 1 if tail else tl.n - 1
            backs = sum(1 for r in tl.rollbacks if first <= r <= last)
            label = (f"… {fmt.plural(n_hidden, tl.one, tl.what)} …\n"
                     f"{fmt.timestamp(tl.time(first))} -\n{fmt.timestamp(tl.time(last))}")
            if backs:
                label += f"\n{fmt.plural(backs, 'rollback')}"
            node_id = "fold"
            dot.node(node_id, label, kind="folded", style="rounded,filled,dashed")
            order.append(node_id)
            drawn[node_id] = label
            lines.append(f"  : {label.splitlines()[0]}"
                         + (f" ({fmt.plural(backs, 'rollback')})" if backs else ""))
            if prev is not None:
                edges.append((prev, node_id, {}))
            prev = node_id
            continue
        nd = tl.node(i)
        attrs: dict[str, Any] = {}
        if nd.bold:
            attrs.update(style="rounded,filled,bold", penwidth="2.2")
        elif nd.greyed:
            attrs.update(style="rounded,filled,dashed", fontcolor="#6e7781")
        node_id = f"e{i}"
        if nd.tooltip:
            attrs["tooltip"] = nd.tooltip
        dot.node(node_id, nd.label, kind=nd.kind, **attrs)
        order.append(node_id)
        drawn[node_id] = nd.label
        nodes[node_id] = GraphNode(" ".join(nd.label.splitlines()), nd.kind,
                                   snapshot_id=nd.snapshot_id, version_id=nd.version_id,
                                   parents=() if prev is None else (prev,))
        if prev is not None and prev in nodes:
            nodes[prev] = replace(nodes[prev], children=(*nodes[prev].children, node_id))
        back = i in tl.rollbacks
        if prev is not None:
            edges.append((prev, node_id, {"label": t("rollback"), "style": "dashed",
                                          "color": _ROLLBACK_COLOR,
                                          "fontcolor": _ROLLBACK_COLOR} if back else {}))
        lines.append(f"{'<' if back else '-'} " + " ".join(nd.label.splitlines())
                     + (f"  ({t('rollback')})" if back else ""))
        prev = node_id
    _draw_rows(dot, _rows(order, drawn), edges)
    caption = (t("showing {limit:,} of {n:,} {what} (display_max_snapshots={limit})",
                 limit=limit, n=tl.n, what=t(tl.what)) if n_hidden else "")
    return Graph(dot.source(), "\n".join(lines), title=title, kind=kind, caption=caption,
                 nodes=nodes)


def _render(tl: _Timeline, kind: str, title: str, subtitle: str) -> Rendered:
    graph = _graph(tl, title, kind)
    limit = get_options().display_max_snapshots
    headers = [t(x) for x in tl.headers]
    table_html = h.table(headers, _LazyRows(tl.n, tl.html_row), limit=limit, what=tl.what)
    table_text = tx.table(headers, _LazyRows(tl.n, tl.text_row), limit=limit,
                          what=tl.what, indent="  ")
    body = graph.html_fragment() + h.section(t("Entries"), table_html, count=f"{tl.n:,}")
    text = f"{kind}: {title}" + (f", {subtitle}" if subtitle else "")
    if tl.n:
        text += "\n" + table_text
    return Rendered(h.card(kind, title, h.muted(subtitle) if subtitle else "", body), text)


# --------------------------------------------------------------------------- snapshot log


def _snapshot_log(log: SnapshotLog) -> _Timeline:
    md = log.metadata
    n = len(log)
    labels = snapshot_labels(md.snapshots)

    def name(i: int) -> str:
        sid = log[i].snapshot_id
        return labels.get(sid, str(sid))
    backs: set[int] = set()
    seen: set[int] = set()
    for i, entry in enumerate(log):
        sid = entry.snapshot_id
        if i and sid != log[i - 1].snapshot_id:
            prev = md.snapshot_by_id(log[i - 1].snapshot_id)
            snap = md.snapshot_by_id(sid)
            if prev is not None and snap is not None:   # both known: back along the lineage
                back = md.is_ancestor(sid, prev.snapshot_id)
            else:   # one has expired: back to a snapshot that was current before
                back = sid in seen
            if back:
                backs.add(i)
        seen.add(sid)

    def is_current(i: int) -> bool:
        return i == n - 1 and log[i].snapshot_id == md.current_snapshot_id

    def op(i: int) -> str:
        snap = md.snapshot_by_id(log[i].snapshot_id)
        if snap is None:
            return "(" + t("expired") + ")"
        return "" if snap.operation is None else str(snap.operation)

    def node(i: int) -> _Node:
        e = log[i]
        expired = md.snapshot_by_id(e.snapshot_id) is None
        label = f"{fmt.timestamp(e.timestamp_ms)}\n{name(i)}\n{op(i)}".rstrip()
        if is_current(i):
            label += f"\n({t('current')})"
        return _Node(label, "removed" if expired else
                     "snapshot_current" if is_current(i) else "snapshot",
                     bold=is_current(i), greyed=expired,
                     snapshot_id=None if expired else e.snapshot_id,
                     tooltip=t("snapshot {id}", id=e.snapshot_id))

    def note(i: int) -> list[tuple[str, str]]:
        return _notes(i in backs, is_current(i))

    return _Timeline(
        name="snapshot_log", what="entries", one="entry", n=n, time=lambda i: log[i].timestamp_ms,
        node=node, rollbacks=frozenset(backs),
        headers=("#", "time (UTC)", "label", "snapshot", "operation", "note"),
        html_row=lambda i: [str(i + 1), h.esc(fmt.timestamp(log[i].timestamp_ms)),
                            h.esc(name(i)), h.code(log[i].snapshot_id), h.esc(op(i)),
                            "".join(h.badge(x, k) for x, k in note(i))],
        text_row=lambda i: [str(i + 1), fmt.timestamp(log[i].timestamp_ms), name(i),
                            str(log[i].snapshot_id), op(i), " ".join(x for x, _ in note(i))])


def _notes(rollback: bool, current: bool) -> list[tuple[str, str]]:
    """The badges of one log entry: rollback, current."""
    return [b for b, on in (((t("rollback"), "warn"), rollback),
                            ((t("current"), "current"), current)) if on]


def snapshot_log_timeline(log: SnapshotLog) -> Graph:
    """The snapshot log (``Table.history``) as a left-to-right timeline."""
    return _graph(_snapshot_log(log), _log_title(len(log), "entry", "entries"),
                  t("Snapshot log"))


def _log_title(n: int, word: str, words: str) -> str:
    return fmt.plural(n, word, words)


@register(SnapshotLog, text_repr=True)
def _render_snapshot_log(log: SnapshotLog) -> Rendered:
    tl = _snapshot_log(log)
    sub = f"{fmt.plural(len(tl.rollbacks), 'rollback')}" if tl.rollbacks else ""
    return _render(tl, t("Snapshot log"), _log_title(len(log), "entry", "entries"), sub)


# --------------------------------------------------------------------------- metadata log


def _metadata_log(log: MetadataLog) -> _Timeline:
    md = log.metadata
    current = log.metadata_location
    n = len(log) + 1   # the previous files, then the current one

    def file(i: int) -> str:
        if i < len(log):
            return log[i].metadata_file
        return current if current is not None else "(" + t(
            "current metadata, location unknown") + ")"

    def time(i: int) -> int:
        return log[i].timestamp_ms if i < len(log) else md.last_updated_ms

    def node(i: int) -> _Node:
        last = i == n - 1
        name = fmt.file_name(file(i))   # version and uuid: the uuid's first block is enough
        short = name if len(name) <= 20 else name[:14] + "…"
        label = f"{short}\n{fmt.timestamp(time(i))}"
        return _Node(label + (f"\n({t('current')})" if last else ""), "metadata", bold=last,
                     tooltip=name)

    def path(i: int) -> str:
        return fmt.short_path(file(i), md.location)

    return _Timeline(
        name="metadata_log", what="metadata files", one="metadata file", n=n, time=time, node=node,
        rollbacks=frozenset(), headers=("#", "time (UTC)", "metadata file", "note"),
        html_row=lambda i: [str(i + 1), h.esc(fmt.timestamp(time(i))), h.code(path(i)),
                            h.badge(t("current"), "current") if i == n - 1 else ""],
        text_row=lambda i: [str(i + 1), fmt.timestamp(time(i)), fmt.cut(path(i)),
                            t("current") if i == n - 1 else ""])


def metadata_log_timeline(log: MetadataLog) -> Graph:
    """The metadata log (``Table.metadata_log``) ending at the current metadata file."""
    return _graph(_metadata_log(log), fmt.plural(len(log) + 1, "metadata file"),
                  t("Metadata log"))


@register(MetadataLog, text_repr=True)
def _render_metadata_log(log: MetadataLog) -> Rendered:
    return _render(_metadata_log(log), t("Metadata log"),
                   fmt.plural(len(log) + 1, "metadata file"),
                   t("{files} + the current one", files=fmt.plural(len(log), "previous file")))


# --------------------------------------------------------------------------- view version log


def _view_log(log: ViewVersionLog) -> _Timeline:
    md = log.metadata
    n = len(log)
    versions = {v.version_id: v for v in md.versions}
    backs: set[int] = set()
    for i, entry in enumerate(log):
        vid = entry.version_id
        # Version ids grow with each new version, so a move to a lower id goes back to one
        # that was current before (or whose log entry has been trimmed).
        if i and vid < log[i - 1].version_id:
            backs.add(i)

    def is_current(i: int) -> bool:
        return i == n - 1 and log[i].version_id == md.current_version_id

    def detail(i: int) -> str:
        v = versions.get(log[i].version_id)
        if v is None:
            return "(" + t("not retained") + ")"
        parts = [p for p in (v.operation, v.engine_name) if p]
        return " · ".join(parts)

    def node(i: int) -> _Node:
        e = log[i]
        gone = e.version_id not in versions
        label = f"{t('version {id}', id=e.version_id)}\n{fmt.timestamp(e.timestamp_ms)}"
        if detail(i):
            label += "\n" + fmt.cut(detail(i), 40)
        if is_current(i):
            label += f"\n({t('current')})"
        return _Node(label, "removed" if gone else "view_version", bold=is_current(i),
                     greyed=gone, version_id=None if gone else e.version_id)

    def note(i: int) -> list[tuple[str, str]]:
        return _notes(i in backs, is_current(i))

    return _Timeline(
        name="view_versions", what="entries", one="entry", n=n, time=lambda i: log[i].timestamp_ms,
        node=node, rollbacks=frozenset(backs),
        headers=("#", "time (UTC)", "version", "details", "note"),
        html_row=lambda i: [str(i + 1), h.esc(fmt.timestamp(log[i].timestamp_ms)),
                            h.code(log[i].version_id), h.esc(detail(i)),
                            "".join(h.badge(x, k) for x, k in note(i))],
        text_row=lambda i: [str(i + 1), fmt.timestamp(log[i].timestamp_ms),
                            str(log[i].version_id), fmt.cut(detail(i), 60),
                            " ".join(x for x, _ in note(i))])


def view_version_timeline(log: ViewVersionLog) -> Graph:
    """A view's version log as a timeline: which version was current when, rollbacks marked."""
    return _graph(_view_log(log), _log_title(len(log), "entry", "entries"),
                  t("View version log"))


@register(ViewVersionLog, text_repr=True)
def _render_view_log(log: ViewVersionLog) -> Rendered:
    tl = _view_log(log)
    sub = t("current version {id}", id=log.metadata.current_version_id)
    if tl.rollbacks:
        sub += f" · {fmt.plural(len(tl.rollbacks), 'rollback')}"
    return _render(tl, t("View version log"), _log_title(len(log), "entry", "entries"), sub)


# --------------------------------------------------------------------------- snapshot strip

_STRIP_WIDTH = 860        # px of the time axis
_STRIP_LEFT = 96          # px for lane names
_LANE_HEIGHT = 26
_MAX_LANES = 8            # branches beyond this share one lane ("other branches")
_STRIP_BUCKET = 4         # px: snapshots closer than this on one lane share a node
_SCHEMA_COLOR = "#6a1b9a"
_SPEC_COLOR = "#00695c"
_MUTED = "#8c959f"


def _strip_lanes(md: Any, snaps: Mapping[int, Any]) -> tuple[list[str], dict[int, int]]:
    """Lane names (main first, then branches by name, then the rest) and each snapshot's lane:
    a snapshot belongs to the first branch, in that order, whose history holds it."""
    branches = sorted((n for n, r in md.refs.items() if r.is_branch),
                      key=lambda n: (n != "main", n))
    if "main" not in branches and md.current_snapshot_id is not None:
        branches.insert(0, "main")
    shown = branches[:_MAX_LANES - 1]
    names = [*shown] + ([t("other branches")] if len(branches) > len(shown) else [])
    lane_of: dict[int, int] = {}
    for b in branches:
        lane = names.index(b) if b in names else len(names) - 1
        head = (md.current_snapshot_id if b == "main" and "main" not in md.refs
                else md.refs[b].snapshot_id)
        cur = snaps.get(head)
        while cur is not None and cur.snapshot_id not in lane_of:
            lane_of[cur.snapshot_id] = lane
            cur = None if cur.parent_snapshot_id is None else snaps.get(cur.parent_snapshot_id)
    if any(sid not in lane_of for sid in snaps):
        names.append(t("no branch"))
        for sid in snaps:
            lane_of.setdefault(sid, len(names) - 1)
    return names, lane_of


def snapshot_strip(snapshots: Snapshots, *,
                   spec_changes: Mapping[int, int] | None = None) -> Graph:
    """Every snapshot on a time axis, one lane per branch, with markers: schema changes (the
    snapshot's ``schema-id`` differs from its parent's), first writes with a new partition
    spec (``spec_changes``: snapshot id -> spec id, found by the caller in manifest lists),
    rollbacks in the snapshot log, and tags.

    Snapshots closer than a few pixels on one lane share a node (the newest stands for them),
    so the drawing stays bounded (axis width / 4 nodes per lane) whatever the history.
    The SVG follows Graphviz's structure (``<g class="node">`` with the node id as ``<title>``)
    so the same clickable view serves it and the snapshot tree.
    """
    md = snapshots.metadata
    snaps = {s.snapshot_id: s for s in snapshots}
    labels = snapshot_labels(snaps.values())
    spec_changes = spec_changes or {}
    names, lane_of = _strip_lanes(md, snaps) if snaps else ([], {})
    times = [s.timestamp_ms for s in snaps.values()]
    t0, t1 = (min(times), max(times)) if times else (0, 1)
    span = max(t1 - t0, 1)

    def x_of(ms: int) -> float:
        return _STRIP_LEFT + 8 + (ms - t0) / span * (_STRIP_WIDTH - 16)

    rolled_to: dict[int, int] = {}   # snapshot id -> log time it became current by a rollback
    log = md.snapshot_log
    backs = _snapshot_log(SnapshotLog(log, md)).rollbacks if log else frozenset()
    for i in backs:
        rolled_to[log[i].snapshot_id] = log[i].timestamp_ms
    tags: dict[int, list[str]] = {}
    for name, ref in sorted(md.refs.items()):
        if not ref.is_branch:
            tags.setdefault(ref.snapshot_id, []).append(name)

    # One node per (lane, column of _STRIP_BUCKET px): the newest snapshot there stands for
    # the others.
    buckets: dict[tuple[int, int], list[int]] = {}
    for sid in sorted(snaps, key=lambda k: (snaps[k].timestamp_ms, k)):
        column = int(x_of(snaps[sid].timestamp_ms) / _STRIP_BUCKET)
        buckets.setdefault((lane_of[sid], column), []).append(sid)
    rep_of: dict[int, str] = {}
    for members in buckets.values():
        for sid in members:
            rep_of[sid] = f"t{members[-1]}"

    height = 22 + _LANE_HEIGHT * max(len(names), 1) + 18
    width = _STRIP_LEFT + _STRIP_WIDTH + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}pt" height="{height}pt" '
           f'viewBox="0 0 {width} {height}" font-family="Helvetica,sans-serif" font-size="10">',
           '<g id="graph0" class="graph">']
    for lane, name in enumerate(names):
        y = 22 + lane * _LANE_HEIGHT + _LANE_HEIGHT / 2
        out.append(f'<g class="lane"><line x1="{_STRIP_LEFT}" y1="{y:.1f}" x2="{width - 8}" '
                   f'y2="{y:.1f}" stroke="{_MUTED}" stroke-width="0.6" stroke-dasharray="3,3"/>'
                   f'<text x="{_STRIP_LEFT - 6}" y="{y + 3:.1f}" text-anchor="end" '
                   f'fill="{_MUTED}">{h.esc(fmt.cut(name, 14))}</text></g>')
    axis_y = 22 + _LANE_HEIGHT * max(len(names), 1) + 12
    if times:
        for k in range(5):
            ms = t0 + span * k // 4
            anchor = "start" if k == 0 else "end" if k == 4 else "middle"
            out.append(f'<text class="axis" x="{x_of(ms):.1f}" y="{axis_y}" fill="{_MUTED}" '
                       f'text-anchor="{anchor}">{h.esc(fmt.timestamp(ms))}</text>')
    nodes: dict[str, GraphNode] = {}
    order = sorted(buckets.items(), key=lambda kv: (kv[0][0], kv[0][1]))
    prev_in_lane: dict[int, str] = {}
    for (lane, _col), members in order:
        sid = members[-1]
        s = snaps[sid]
        node_id = f"t{sid}"
        x = x_of(s.timestamp_ms)
        y = 22 + lane * _LANE_HEIGHT + _LANE_HEIGHT / 2
        current = sid == md.current_snapshot_id or any(m == md.current_snapshot_id
                                                       for m in members)
        fill, stroke = PALETTE["snapshot_current" if current else "snapshot"]
        short = labels.get(sid)
        lines = [f"{short + ' = ' if short else ''}{sid} {fmt.timestamp(s.timestamp_ms)} "
                 f"{s.operation or ''}".rstrip()]
        if len(members) > 1:
            lines.append(t("and {snapshots} at this point of the axis",
                           snapshots=fmt.plural(len(members) - 1, "earlier snapshot")))
        marks: list[str] = []
        for m in members:
            snap = snaps[m]
            par = (snaps.get(snap.parent_snapshot_id) if snap.parent_snapshot_id is not None
                   else None)
            if (par is not None and snap.schema_id is not None and par.schema_id is not None
                    and snap.schema_id != par.schema_id):
                lines.append(t("schema {a} -> {b} at {id}", a=par.schema_id, b=snap.schema_id,
                               id=m))
                marks.append("schema")
            if m in spec_changes:
                lines.append(t("first write with partition spec {spec} at {id}",
                               spec=spec_changes[m], id=m))
                marks.append("spec")
            if m in rolled_to:
                lines.append(t("rolled back to {id} at {time}", id=m,
                               time=fmt.timestamp(rolled_to[m])))
                marks.append("rollback")
            if m in tags:
                lines.append(t("tag") + ": " + ", ".join(tags[m]))
                marks.append("tag")
        r = 4.5 if len(members) == 1 else 5.5
        g = [f'<g id="strip_{sid}" class="node snapshot"><title>{node_id}</title>',
             f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}" stroke="{stroke}" '
             f'stroke-width="{2.2 if current else 1}"/>']
        if "schema" in marks:
            g.append(f'<path d="M{x:.1f},{y - 13:.1f} l3.5,3.5 l-3.5,3.5 l-3.5,-3.5 z" '
                     f'fill="{_SCHEMA_COLOR}"><title>{h.esc(t("schema change"))}</title></path>')
        if "spec" in marks:
            g.append(f'<rect x="{x - 3:.1f}" y="{y + 7:.1f}" width="6" height="6" '
                     f'fill="{_SPEC_COLOR}"/>')
        if "rollback" in marks:
            g.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r + 3}" fill="none" '
                     f'stroke="{_ROLLBACK_COLOR}" stroke-width="1.4" stroke-dasharray="2,1.5"/>')
        if "tag" in marks:
            fill_t, stroke_t = PALETTE["tag"]
            g.append(f'<path d="M{x + 5:.1f},{y - 9:.1f} l6,0 l0,5 l-6,0 z" fill="{fill_t}" '
                     f'stroke="{stroke_t}" stroke-width="0.8"/>')
        g.append("</g>")
        out.append("".join(g))
        label = "; ".join(lines)
        before = prev_in_lane.get(lane)
        nodes[node_id] = GraphNode(label, "snapshot", snapshot_id=sid,
                                   parents=() if before is None else (before,))
        if before is not None:
            nodes[before] = replace(nodes[before], children=(node_id,))
        prev_in_lane[lane] = node_id
    out.append("</g></svg>")
    legend = t("◆ schema change · ■ first write with a new partition spec · dashed ring: "
               "rolled back to · flag: tag")
    text_lines = [f"{name}: " + t("{n:,} snapshots",
                                  n=sum(1 for v in lane_of.values() if v == i))
                  for i, name in enumerate(names)]
    return Graph("", "\n".join(text_lines), title=fmt.plural(len(snaps), "snapshot"),
                 kind=t("Snapshot timeline"), caption=legend, nodes=nodes, svg="".join(out))
