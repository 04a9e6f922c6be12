"""Version logs as timelines: the snapshot log, the metadata log and a view's version log.

Time runs left to right, one node per log entry; a move back to an entry that was current
before is labelled "rollback" (table spec: Table Metadata Fields ``snapshot-log`` and
``metadata-log``; view spec: "version-log": "If the view has been updated and rolled back, this
will show it"). Long logs fold to a head and a tail of ``display_max_snapshots`` entries; only
the shown entries are formatted, so the cost does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload

from icenb.display import fmt
from icenb.display import html as h
from icenb.display import text as tx
from icenb.display.dot import Dot
from icenb.display.graph import Graph
from icenb.display.registry import Rendered, register
from icenb.options import get_options
from icenb.table.history import MetadataLog, SnapshotLog, ViewVersionLog

__all__ = ["metadata_log_timeline", "snapshot_log_timeline", "view_version_timeline"]

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


@dataclass(frozen=True)
class _Node:
    label: str
    kind: str
    bold: bool = False
    greyed: bool = False


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


def _graph(tl: _Timeline, title: str, kind: str) -> Graph:
    limit = get_options().display_max_snapshots
    head, n_hidden, tail = fmt.fold(range(tl.n), limit)
    dot = Dot(tl.name, rankdir="LR")
    prev: str | None = None
    shown = [*head, None, *tail] if n_hidden else list(head)
    lines: list[str] = []
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
            lines.append(f"  : {label.splitlines()[0]}"
                         + (f" ({fmt.plural(backs, 'rollback')})" if backs else ""))
            if prev is not None:
                dot.edge(prev, node_id)
            prev = node_id
            continue
        nd = tl.node(i)
        attrs: dict[str, Any] = {}
        if nd.bold:
            attrs.update(style="rounded,filled,bold", penwidth="2.2")
        elif nd.greyed:
            attrs.update(style="rounded,filled,dashed", fontcolor="#6e7781")
        node_id = f"e{i}"
        dot.node(node_id, nd.label, kind=nd.kind, **attrs)
        back = i in tl.rollbacks
        if prev is not None:
            if back:
                dot.edge(prev, node_id, label="rollback", style="dashed",
                         color=_ROLLBACK_COLOR, fontcolor=_ROLLBACK_COLOR)
            else:
                dot.edge(prev, node_id)
        lines.append(f"{'<' if back else '-'} " + " ".join(nd.label.splitlines())
                     + ("  (rollback)" if back else ""))
        prev = node_id
    caption = (f"showing {limit:,} of {tl.n:,} {tl.what} (display_max_snapshots={limit})"
               if n_hidden else "")
    return Graph(dot.source(), "\n".join(lines), title=title, kind=kind, caption=caption)


def _render(tl: _Timeline, kind: str, title: str, subtitle: str) -> Rendered:
    graph = _graph(tl, title, kind)
    limit = get_options().display_max_snapshots
    table_html = h.table(list(tl.headers), _LazyRows(tl.n, tl.html_row), limit=limit,
                         what=tl.what)
    table_text = tx.table(list(tl.headers), _LazyRows(tl.n, tl.text_row), limit=limit,
                          what=tl.what, indent="  ")
    body = graph.html_fragment() + h.section("Entries", table_html, count=f"{tl.n:,}")
    text = f"{kind}: {title}" + (f", {subtitle}" if subtitle else "")
    if tl.n:
        text += "\n" + table_text
    return Rendered(h.card(kind, title, h.muted(subtitle) if subtitle else "", body), text)


# --------------------------------------------------------------------------- snapshot log


def _snapshot_log(log: SnapshotLog) -> _Timeline:
    md = log.metadata
    n = len(log)
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
            return "(expired)"
        return "" if snap.operation is None else str(snap.operation)

    def node(i: int) -> _Node:
        e = log[i]
        expired = md.snapshot_by_id(e.snapshot_id) is None
        label = f"{fmt.timestamp(e.timestamp_ms)}\n{e.snapshot_id}\n{op(i)}".rstrip()
        if is_current(i):
            label += "\n(current)"
        return _Node(label, "removed" if expired else
                     "snapshot_current" if is_current(i) else "snapshot",
                     bold=is_current(i), greyed=expired)

    def note(i: int) -> list[tuple[str, str]]:
        return _notes(i in backs, is_current(i))

    return _Timeline(
        name="snapshot_log", what="entries", one="entry", n=n, time=lambda i: log[i].timestamp_ms,
        node=node, rollbacks=frozenset(backs),
        headers=("#", "time (UTC)", "snapshot", "operation", "note"),
        html_row=lambda i: [str(i + 1), h.esc(fmt.timestamp(log[i].timestamp_ms)),
                            h.code(log[i].snapshot_id), h.esc(op(i)),
                            "".join(h.badge(t, k) for t, k in note(i))],
        text_row=lambda i: [str(i + 1), fmt.timestamp(log[i].timestamp_ms),
                            str(log[i].snapshot_id), op(i), " ".join(t for t, _ in note(i))])


def _notes(rollback: bool, current: bool) -> list[tuple[str, str]]:
    """The badges of one log entry: rollback, current."""
    return [b for b, on in ((("rollback", "warn"), rollback), (("current", "current"), current))
            if on]


def snapshot_log_timeline(log: SnapshotLog) -> Graph:
    """The snapshot log (``Table.history``) as a left-to-right timeline."""
    return _graph(_snapshot_log(log), _log_title(len(log), "entry", "entries"),
                  "Snapshot log")


def _log_title(n: int, word: str, words: str) -> str:
    return fmt.plural(n, word, words)


@register(SnapshotLog, text_repr=True)
def _render_snapshot_log(log: SnapshotLog) -> Rendered:
    tl = _snapshot_log(log)
    sub = f"{fmt.plural(len(tl.rollbacks), 'rollback')}" if tl.rollbacks else ""
    return _render(tl, "Snapshot log", _log_title(len(log), "entry", "entries"), sub)


# --------------------------------------------------------------------------- metadata log


def _metadata_log(log: MetadataLog) -> _Timeline:
    md = log.metadata
    current = log.metadata_location
    n = len(log) + 1   # the previous files, then the current one

    def file(i: int) -> str:
        if i < len(log):
            return log[i].metadata_file
        return current if current is not None else "(current metadata, location unknown)"

    def time(i: int) -> int:
        return log[i].timestamp_ms if i < len(log) else md.last_updated_ms

    def node(i: int) -> _Node:
        last = i == n - 1
        label = f"{fmt.file_name(file(i))}\n{fmt.timestamp(time(i))}"
        return _Node(label + ("\n(current)" if last else ""), "metadata", bold=last)

    def path(i: int) -> str:
        return fmt.short_path(file(i), md.location)

    return _Timeline(
        name="metadata_log", what="metadata files", one="metadata file", n=n, time=time, node=node,
        rollbacks=frozenset(), headers=("#", "time (UTC)", "metadata file", "note"),
        html_row=lambda i: [str(i + 1), h.esc(fmt.timestamp(time(i))), h.code(path(i)),
                            h.badge("current", "current") if i == n - 1 else ""],
        text_row=lambda i: [str(i + 1), fmt.timestamp(time(i)), fmt.cut(path(i)),
                            "current" if i == n - 1 else ""])


def metadata_log_timeline(log: MetadataLog) -> Graph:
    """The metadata log (``Table.metadata_log``) ending at the current metadata file."""
    return _graph(_metadata_log(log), fmt.plural(len(log) + 1, "metadata file"),
                  "Metadata log")


@register(MetadataLog, text_repr=True)
def _render_metadata_log(log: MetadataLog) -> Rendered:
    return _render(_metadata_log(log), "Metadata log",
                   fmt.plural(len(log) + 1, "metadata file"),
                   f"{fmt.plural(len(log), 'previous file')} + the current one")


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
            return "(not retained)"
        parts = [p for p in (v.operation, v.engine_name) if p]
        return " · ".join(parts)

    def node(i: int) -> _Node:
        e = log[i]
        gone = e.version_id not in versions
        label = f"version {e.version_id}\n{fmt.timestamp(e.timestamp_ms)}"
        if detail(i):
            label += "\n" + fmt.cut(detail(i), 40)
        if is_current(i):
            label += "\n(current)"
        return _Node(label, "removed" if gone else "view_version", bold=is_current(i),
                     greyed=gone)

    def note(i: int) -> list[tuple[str, str]]:
        return _notes(i in backs, is_current(i))

    return _Timeline(
        name="view_versions", what="entries", one="entry", n=n, time=lambda i: log[i].timestamp_ms,
        node=node, rollbacks=frozenset(backs),
        headers=("#", "time (UTC)", "version", "details", "note"),
        html_row=lambda i: [str(i + 1), h.esc(fmt.timestamp(log[i].timestamp_ms)),
                            h.code(log[i].version_id), h.esc(detail(i)),
                            "".join(h.badge(t, k) for t, k in note(i))],
        text_row=lambda i: [str(i + 1), fmt.timestamp(log[i].timestamp_ms),
                            str(log[i].version_id), fmt.cut(detail(i), 60),
                            " ".join(t for t, _ in note(i))])


def view_version_timeline(log: ViewVersionLog) -> Graph:
    """A view's version log as a timeline: which version was current when, rollbacks marked."""
    return _graph(_view_log(log), _log_title(len(log), "entry", "entries"), "View version log")


@register(ViewVersionLog, text_repr=True)
def _render_view_log(log: ViewVersionLog) -> Rendered:
    tl = _view_log(log)
    sub = f"current version {log.metadata.current_version_id}"
    if tl.rollbacks:
        sub += f" · {fmt.plural(len(tl.rollbacks), 'rollback')}"
    return _render(tl, "View version log", _log_title(len(log), "entry", "entries"), sub)
