"""The snapshot tree: parent links, branches and tags, the current snapshot, rollbacks and
cherry-picks, with long histories folded (spec: "Snapshots", "Snapshot References",
Table Metadata Fields ``snapshot-log``; cherry-pick keys as Iceberg Java writes them).

Time runs top-down, newest on top, edges from a child to its parent (the pointer the metadata
stores): the same order as the text outline and ``git log --graph``, and a long history grows
downwards, where a notebook scrolls, instead of sideways, where it shrinks the picture.

Everything is computed with dicts in one pass over the snapshots; DOT is built only for the
nodes shown (at most ``display_max_snapshots`` snapshot, fold and ref nodes together).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit.dot import Dot
from icenb.display.kit.graph import Graph, GraphNode
from icenb.display.registry import Rendered, register
from icenb.labels import t
from icenb.options import get_options
from icenb.reprs import safe_repr
from icenb.spec.snapshot import (
    ADDED_DATA_FILES,
    ADDED_DELETE_FILES,
    ADDED_RECORDS,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
    MAIN_BRANCH,
    PUBLISHED_WAP_ID,
    REMOVED_DELETE_FILES,
    SOURCE_SNAPSHOT_ID,
    WAP_ID,
    Snapshot,
    SnapshotRef,
)
from icenb.table.explore.history import Snapshots
from icenb.table.explore.snapshot_labels import snapshot_labels

__all__ = ["TreeLayout", "layout", "snapshot_tree", "summary_counts"]

_MAX_REF_NAMES = 3   # ref names listed in one label node before "+N more"


def summary_counts(summary: Mapping[str, str] | None) -> str:
    """``+3 files +1,200 rows / -1 file``: what a snapshot added and removed (Appendix F)."""
    if not summary:
        return ""

    def num(key: str) -> int | None:
        try:
            return int(summary[key]) if key in summary else None
        except (TypeError, ValueError):
            return None

    def part(sign: str, key: str, word: str, words: str | None = None) -> str | None:
        n = num(key)
        return None if not n else sign + fmt.plural(n, word, words)

    added = [part("+", ADDED_DATA_FILES, "file"), part("+", ADDED_RECORDS, "row"),
             part("+", ADDED_DELETE_FILES, "delete file")]
    removed = [part("-", DELETED_DATA_FILES, "file"), part("-", DELETED_RECORDS, "row"),
               part("-", REMOVED_DELETE_FILES, "delete file")]
    sides = [" ".join(p for p in side if p) for side in (added, removed)]
    return " / ".join(s for s in sides if s)


@safe_repr
@dataclass
class Fold:
    """A run of hidden linear history between a shown snapshot and its shown ancestor."""

    node_id: str
    count: int
    first_ms: int
    last_ms: int
    child: int          # the shown snapshot whose parent chain this is
    ancestor: int | None    # the shown snapshot the run ends at, None at the chain's end
    expired_parent: int | None = None   # the run's oldest snapshot has an expired parent


@safe_repr
@dataclass
class TreeLayout:
    """What the tree shows: chosen snapshots, folds, refs, and the special edges."""

    snaps: dict[int, Snapshot]
    order: dict[int, int]                      # snapshot id -> metadata position
    shown: list[int]                           # newest first
    missing: list[int]                         # ids refs point at that are not in the metadata
    folds: dict[int, Fold]                     # child id -> fold above it
    refs_by_snapshot: dict[int, list[tuple[str, SnapshotRef]]]
    current: int | None
    orphans: set[int]                          # shown snapshots no ref reaches
    rollbacks: list[tuple[int, int]]           # (was current, rolled back to), log order
    jumps: list[tuple[int, int]]               # other non-child moves of the current snapshot
    picks: list[tuple[int, int]]               # (new snapshot, cherry-picked source)
    hidden_refs: int = 0
    total: int = 0
    hidden_events: int = 0
    notes: list[str] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)   # S<n> labels (snapshot_labels)

    def label(self, sid: int) -> str:
        """``S3`` for a small table, else the full id."""
        return self.labels.get(sid, str(sid))

    def parent(self, sid: int) -> int | None:
        s = self.snaps.get(sid)
        return None if s is None else s.parent_snapshot_id


def _sort_refs(refs: Mapping[str, SnapshotRef]) -> list[tuple[str, SnapshotRef]]:
    """main first, then branches by name, then tags by name."""
    return sorted(refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, not kv[1].is_branch, kv[0]))


def layout(snapshots: Snapshots | Sequence[Snapshot], *, max_nodes: int | None = None,
           metadata: object = None, focus: Sequence[int] = ()) -> TreeLayout:
    """Choose what the tree shows, in O(number of snapshots); ``focus`` snapshots are
    chosen right after the refs' (e.g. the ones a person selected or unfolded)."""
    md = getattr(snapshots, "metadata", None) if metadata is None else metadata
    limit = max(1, get_options().display_max_snapshots if max_nodes is None else max_nodes)
    snaps: dict[int, Snapshot] = {}
    order: dict[int, int] = {}
    for i, s in enumerate(snapshots):
        if s.snapshot_id not in snaps:
            snaps[s.snapshot_id] = s
            order[s.snapshot_id] = i
    children: dict[int, list[int]] = {}
    for sid, s in snaps.items():
        p = s.parent_snapshot_id
        if p is not None and p != sid:
            children.setdefault(p, []).append(sid)
    refs: Mapping[str, SnapshotRef] = getattr(md, "refs", None) or {}
    current: int | None = getattr(md, "current_snapshot_id", None)
    sorted_refs = _sort_refs(refs)
    refs_by_snapshot: dict[int, list[tuple[str, SnapshotRef]]] = {}
    for name, ref in sorted_refs:
        refs_by_snapshot.setdefault(ref.snapshot_id, []).append((name, ref))

    # Snapshots reachable from a ref (or the current snapshot): one walk, each node once.
    reachable: set[int] = set()
    targets = [ref.snapshot_id for _, ref in sorted_refs]
    if current is not None:
        targets.insert(0, current)
    for target in targets:
        cur: int | None = target
        while cur is not None and cur in snaps and cur not in reachable:
            reachable.add(cur)
            cur = snaps[cur].parent_snapshot_id

    # Moves of the current snapshot that are not commits on top of it (snapshot log).
    rollbacks: list[tuple[int, int]] = []
    jumps: list[tuple[int, int]] = []
    log = getattr(md, "snapshot_log", None) or ()
    prev: int | None = None
    for entry in log:
        b = entry.snapshot_id
        if (prev is not None and b != prev and b in snaps and prev in snaps
                and snaps[b].parent_snapshot_id != prev):
            # A rollback moves back along the lineage; anything else (a branch replaced by
            # another lineage, a cherry-pick's fast-forward) is a plain jump.
            (rollbacks if _is_ancestor(snaps, b, prev) else jumps).append((prev, b))
        prev = b
    picks: list[tuple[int, int]] = []
    for sid, s in snaps.items():
        text = None if s.summary is None else s.summary.get(SOURCE_SNAPSHOT_ID)
        if text is not None and text.strip().lstrip("-").isdigit():
            picks.append((sid, int(text)))
    missing = list(dict.fromkeys(x for x in targets if x not in snaps))

    # Candidates, most important first.
    cand: list[int] = []
    for target in targets:
        if target in snaps:
            cand.append(target)
    cand += [f for f in focus if f in snaps]
    ordered = sorted(snaps, key=order.__getitem__)
    if ordered:
        cand.append(ordered[0])
    if current is not None and current in snaps:
        root = current
        steps = 0
        while steps <= len(snaps):
            p = snaps[root].parent_snapshot_id
            if p is None or p not in snaps:
                break
            root, steps = p, steps + 1
        cand.append(root)
    for target in targets:   # near ancestors of every ref
        s2 = snaps.get(target)
        for _ in range(2):
            if s2 is None or s2.parent_snapshot_id is None:
                break
            cand.append(s2.parent_snapshot_id)
            s2 = snaps.get(s2.parent_snapshot_id)
    events: list[int] = []
    for a, b in rollbacks + jumps:
        events += [a, b]
    for new, source in picks:
        events += [new, source]
    for sid, s in snaps.items():
        if s.summary is not None and (WAP_ID in s.summary or PUBLISHED_WAP_ID in s.summary):
            events.append(sid)
    events.sort(key=lambda e: -order.get(e, -1))
    cand += [e for e in events if e in snaps]
    tips = [sid for sid in snaps if sid not in children and sid not in reachable]
    tips.sort(key=lambda e: -order[e])
    cand += tips
    cand += reversed(ordered)

    lay = TreeLayout(snaps=snaps, order=order, shown=[], missing=[], folds={},
                     refs_by_snapshot=refs_by_snapshot, current=current, orphans=set(),
                     rollbacks=rollbacks, jumps=jumps, picks=picks, total=len(snaps),
                     labels=snapshot_labels(snaps.values()))
    shown: set[int] = set()
    if len(snaps) + len(missing) <= limit:
        shown = set(snaps)
        lay.missing = missing
    else:
        _choose(lay, cand, missing, children, shown, limit)
    lay.shown = sorted(shown, key=lambda e: (-snaps[e].timestamp_ms, -order[e]))
    lay.orphans = {sid for sid in shown if sid not in reachable}
    _fold_runs(lay, shown)
    lay.hidden_refs = sum(len(v) for k, v in refs_by_snapshot.items()
                          if k not in shown and k not in lay.missing)
    return lay


def _choose(lay: TreeLayout, cand: Iterable[int], missing: list[int],
            children: dict[int, list[int]], shown: set[int], limit: int) -> None:
    """Greedy selection: take candidates while snapshot + fold + ref nodes fit ``limit``.

    A walk from each chosen snapshot claims its hidden ancestors; a walk that meets another
    walk's claim found a fork, which is shown too, so folded runs stay linear and disjoint.
    """
    snaps = lay.snaps
    claim: dict[int, int] = {}   # hidden snapshot id -> walk number
    total = 0

    def ref_nodes(sid: int) -> int:
        kinds = {r.is_branch for _, r in lay.refs_by_snapshot.get(sid, ())}
        return len(kinds)

    def cost(sid: int, chosen: set[int]) -> int:
        c = 1 + ref_nodes(sid)
        p = snaps[sid].parent_snapshot_id
        if p is not None and p not in chosen:
            c += 1   # a fold node or an expired-parent node above it
        c -= sum(1 for ch in children.get(sid, ()) if ch in chosen)
        return c

    for m in missing:
        c = 1 + ref_nodes(m)
        if total + c > limit and (shown or lay.missing):
            lay.hidden_events += 1
            continue
        lay.missing.append(m)
        total += c
    walk = 0
    failures = 0
    for sid in cand:
        if sid in shown or sid not in snaps:
            continue
        walk += 1
        path: list[int] = []
        fork: int | None = None
        if sid not in claim:
            p = snaps[sid].parent_snapshot_id
            while p is not None and p in snaps and p not in shown:
                owner = claim.get(p)
                if owner is not None:
                    if owner != walk:
                        fork = p
                    break
                claim[p] = walk
                path.append(p)
                p = snaps[p].parent_snapshot_id
        delta = cost(sid, shown)
        if fork is not None:
            delta += cost(fork, shown | {sid})
        if total + delta > limit and shown:
            for q in path:
                del claim[q]
            failures += 1
            if failures > limit:   # bounded retries keep the selection O(limit * n)
                break
            continue
        shown.add(sid)
        if fork is not None:
            shown.add(fork)
        total += delta


def _fold_runs(lay: TreeLayout, shown: set[int]) -> None:
    """One fold per shown snapshot whose parent is hidden: count and time range of the run."""
    snaps = lay.snaps
    owner: dict[int, int] = {}   # hidden id -> child whose fold holds it
    for sid in lay.shown:
        p = snaps[sid].parent_snapshot_id
        if p is None or p not in snaps or p in shown:
            continue
        count, first, last = 0, snaps[p].timestamp_ms, snaps[p].timestamp_ms
        ancestor: int | None = None
        expired: int | None = None
        q: int | None = p
        while q is not None:
            if q in shown:
                ancestor = q
                break
            if q not in snaps:
                expired = q
                break
            if q in owner:   # merged into another run (only on inconsistent input): join it
                break
            owner[q] = sid
            count += 1
            ts = snaps[q].timestamp_ms
            first, last = min(first, ts), max(last, ts)
            q = snaps[q].parent_snapshot_id
        lay.folds[sid] = Fold(f"fold_{sid}", count, first, last, sid, ancestor, expired)


# --------------------------------------------------------------------------- drawing


def _node_lines(lay: TreeLayout, sid: int) -> list[str]:
    s = lay.snaps[sid]
    lines = [lay.label(sid), fmt.timestamp(s.timestamp_ms)]
    op = "" if s.operation is None else str(s.operation)
    counts = summary_counts(s.summary)
    lines.append((op + "  " + counts).strip() or f"({t('no summary')})")
    parent = lay.snaps.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    if (parent is not None and s.schema_id is not None and parent.schema_id is not None
            and parent.schema_id != s.schema_id):
        lines.append(t("schema {a} → {b}", a=parent.schema_id, b=s.schema_id))
    if s.summary is not None:
        if PUBLISHED_WAP_ID in s.summary:
            lines.append(t("published wap.id {id}",
                           id=fmt.cut(s.summary[PUBLISHED_WAP_ID], 40)))
        elif WAP_ID in s.summary:
            lines.append(t("staged wap.id {id}", id=fmt.cut(s.summary[WAP_ID], 40)))
        src = s.summary.get(SOURCE_SNAPSHOT_ID)
        if src is not None:
            try:
                gone = int(src) not in lay.snaps
            except ValueError:
                gone = True
            if gone:
                lines.append(t("cherry-picked from {id}", id=fmt.cut(src, 30))
                             + f" ({t('expired')})")
    if sid == lay.current:
        lines.append(f"({t('current')})")
    elif sid in lay.orphans:
        lines.append(f"({t('not on any branch or tag')})")
    return lines


def _fold_label(f: Fold) -> str:
    text = f"… {fmt.plural(f.count, 'snapshot')} …\n{fmt.timestamp(f.first_ms)}"
    if f.count > 1:
        text += f" -\n{fmt.timestamp(f.last_ms)}"
    return text


def _is_ancestor(snaps: Mapping[int, Snapshot], ancestor: int, sid: int) -> bool:
    """Whether ``ancestor`` is on ``sid``'s parent chain (spec: Snapshots, parent-snapshot-id)."""
    seen: set[int] = set()
    cur = snaps[sid].parent_snapshot_id if sid in snaps else None
    while cur is not None and cur not in seen:
        if cur == ancestor:
            return True
        seen.add(cur)
        cur = snaps[cur].parent_snapshot_id if cur in snaps else None
    return False


def snapshot_tree(snapshots: Snapshots | Sequence[Snapshot], *,
                  max_nodes: int | None = None, focus: Sequence[int] = ()) -> Graph:
    """The snapshot tree of ``snapshots`` (``Table.snapshots``) as a :class:`Graph`, with
    ``focus`` snapshots shown when they fit (see :func:`layout`)."""
    return _draw(layout(snapshots, max_nodes=max_nodes, focus=focus))


def fold_members(snapshots: Snapshots | Sequence[Snapshot], fold_node: str) -> list[int]:
    """The snapshots a fold node (``fold_<child id>``) of the drawn tree stands for, newest
    first: the child's hidden ancestors, up to the next shown one (a fold is a linear run)."""
    if not fold_node.startswith("fold_"):
        return []
    try:
        child = int(fold_node[len("fold_"):])
    except ValueError:
        return []
    by_id = {s.snapshot_id: s for s in snapshots}
    out: list[int] = []
    cur = by_id.get(child)
    while cur is not None and cur.parent_snapshot_id is not None and len(out) <= len(by_id):
        parent = by_id.get(cur.parent_snapshot_id)
        if parent is None:
            break
        out.append(parent.snapshot_id)
        cur = parent
    return out


def _tree_nodes(lay: TreeLayout) -> dict[str, GraphNode]:
    """The pickable nodes of the drawn tree (snapshots and folds) with their neighbours."""
    shown = set(lay.shown)
    parent_node: dict[str, str] = {}
    for sid in lay.shown:
        f = lay.folds.get(sid)
        p = lay.snaps[sid].parent_snapshot_id
        if f is not None:
            parent_node[f"s{sid}"] = f.node_id
            if f.ancestor is not None:
                parent_node[f.node_id] = f"s{f.ancestor}"
        elif p is not None and p in shown:
            parent_node[f"s{sid}"] = f"s{p}"
    children: dict[str, list[str]] = {}
    for child, parent in parent_node.items():
        children.setdefault(parent, []).append(child)
    nodes: dict[str, GraphNode] = {}
    for sid in lay.shown:
        key = f"s{sid}"
        nodes[key] = GraphNode(
            _oneline(lay, sid), "snapshot", snapshot_id=sid,
            parents=tuple(x for x in (parent_node.get(key),) if x),
            children=tuple(children.get(key, ())))
        f = lay.folds.get(sid)
        if f is not None:
            nodes[f.node_id] = GraphNode(
                " ".join(_fold_label(f).split("\n")) + f" ({t('click to show them')})", "folded",
                fold=True, parents=tuple(x for x in (parent_node.get(f.node_id),) if x),
                children=(key,))
    return nodes


def _draw(lay: TreeLayout) -> Graph:
    dot = Dot("snapshots", rankdir="TB")
    ref_nodes: list[tuple[str, str]] = []
    for sid in lay.shown:
        kind = ("snapshot_current" if sid == lay.current
                else "removed" if sid in lay.orphans else "snapshot")
        attrs: dict[str, Any] = {}
        if sid == lay.current:
            attrs.update(style="rounded,filled,bold", penwidth="2.2")
        elif sid in lay.orphans:
            attrs.update(style="rounded,filled,dashed", fontcolor="#6e7781")
        dot.node(f"s{sid}", "\n".join(_node_lines(lay, sid)), kind=kind,
                 tooltip=t("snapshot {id}", id=sid), **attrs)
    for m in lay.missing:
        dot.node(f"s{m}", f"{m}\n({t('missing from the metadata')})", kind="removed",
                 style="rounded,dashed", fontcolor="#6e7781")
    for sid in lay.shown:
        p = lay.snaps[sid].parent_snapshot_id
        if p is None:
            continue
        f = lay.folds.get(sid)
        if f is not None:
            dot.node(f.node_id, _fold_label(f), kind="folded", style="rounded,filled,dashed")
            dot.edge(f"s{sid}", f.node_id)
            if f.ancestor is not None:
                dot.edge(f.node_id, f"s{f.ancestor}")
            elif f.expired_parent is not None:
                dot.node(f"x{f.expired_parent}", f"{t('expired parent')}\n{f.expired_parent}",
                         kind="folded", style="rounded,dashed", fontsize="8")
                dot.edge(f.node_id, f"x{f.expired_parent}", style="dashed")
        elif p in lay.snaps:
            dot.edge(f"s{sid}", f"s{p}")
        else:
            dot.node(f"x{p}", f"{t('expired parent')}\n{p}", kind="folded", style="rounded,dashed",
                     fontsize="8")
            dot.edge(f"s{sid}", f"x{p}", style="dashed")
    shown = set(lay.shown)
    for a, b in lay.rollbacks:
        if a in shown and b in shown:
            dot.edge(f"s{a}", f"s{b}", label=t("rollback"), style="dashed", constraint="false",
                     color="#c62828", fontcolor="#c62828")
    for a, b in lay.jumps:
        if a in shown and b in shown:
            dot.edge(f"s{a}", f"s{b}", label=t("set current"), style="dashed",
                     constraint="false")
    for new, src in lay.picks:
        if new in shown and src in shown:
            dot.edge(f"s{new}", f"s{src}", label=t("cherry-picked from"), style="dotted",
                     constraint="false")
    for sid in [*lay.shown, *lay.missing]:
        refs = lay.refs_by_snapshot.get(sid, [])
        for is_branch, kind in ((True, "branch"), (False, "tag")):
            names = [n for n, r in refs if r.is_branch == is_branch]
            if not names:
                continue
            node_id = f"{kind}_{sid}"
            dot.node(node_id, fmt.names(names, _MAX_REF_NAMES), kind=kind, fontsize="9",
                     height="0.2")
            dot.edge(node_id, f"s{sid}", arrowhead="none", style="solid")
            ref_nodes.append((node_id, f"s{sid}"))
    for node_id, target in ref_nodes:
        dot.same_rank([node_id, target])
    title = f"{fmt.plural(lay.total, 'snapshot')}"
    caption = _caption(lay)
    return Graph(dot.source(), _outline(lay), title=title, kind=t("Snapshot tree"),
                 caption=caption, nodes=_tree_nodes(lay))


def _caption(lay: TreeLayout) -> str:
    parts = []
    n_shown = len(lay.shown)
    if n_shown < lay.total:
        parts.append(t("showing {shown:,} of {total:,} snapshots (display_max_snapshots={limit})",
                       shown=n_shown, total=lay.total,
                       limit=get_options().display_max_snapshots))
    if lay.hidden_refs:
        parts.append(t("{refs} on snapshots not shown",
                       refs=fmt.plural(lay.hidden_refs, "ref")))
    if lay.rollbacks:
        parts.append(t("{rollbacks} in the snapshot log",
                       rollbacks=fmt.plural(len(lay.rollbacks), "rollback")))
    return "; ".join(parts)


# --------------------------------------------------------------------------- text outline


def _ref_badges(lay: TreeLayout, sid: int) -> list[tuple[str, str]]:
    """(text, badge kind) for the refs at ``sid``, current first."""
    out: list[tuple[str, str]] = []
    if sid == lay.current:
        out.append((t("current"), "current"))
    refs, more = fmt.first(lay.refs_by_snapshot.get(sid, ()))
    for name, ref in refs:
        out.append((name, "branch") if ref.is_branch else (f"{t('tag')}: {name}", "tag"))
    if more:
        out.append((t("+{n:,} more refs", n=more), "muted"))
    return out


def _oneline(lay: TreeLayout, sid: int) -> str:
    s = lay.snaps.get(sid)
    badges = _ref_badges(lay, sid)
    refs = f" ({', '.join(fmt.cut(x, 40) for x, _ in badges)})" if badges else ""
    if s is None:
        return f"{sid}{refs} {t('missing from the metadata')}"
    name = f"{lay.labels[sid]} {sid}" if sid in lay.labels else str(sid)
    op = "" if s.operation is None else f" {s.operation}"
    counts = summary_counts(s.summary)
    extra = []
    src = None if s.summary is None else s.summary.get(SOURCE_SNAPSHOT_ID)
    if src is not None:
        extra.append(t("cherry-picked from {id}", id=fmt.cut(src, 30)))
    if sid in lay.orphans:
        extra.append(t("not on any ref"))
    if s.parent_snapshot_id is not None and s.parent_snapshot_id not in lay.snaps:
        extra.append(t("parent {id} expired", id=s.parent_snapshot_id))
    tail = f" [{'; '.join(extra)}]" if extra else ""
    return (f"{name}{refs} {fmt.timestamp(s.timestamp_ms)}{op}"
            f"{'  ' + counts if counts else ''}{tail}")


def _outline(lay: TreeLayout) -> str:
    """``git log --graph --oneline`` style, newest first: one lane per line of descent."""
    items: list[tuple[str, str, str | None]] = []   # (key, text, parent key)
    for sid in lay.shown:
        f = lay.folds.get(sid)
        p = lay.snaps[sid].parent_snapshot_id
        pkey = (f.node_id if f is not None else None if p is None or p not in lay.snaps
                else f"s{p}")
        items.append((f"s{sid}", _oneline(lay, sid), pkey))
    for m in lay.missing:
        items.append((f"s{m}", _oneline(lay, m), None))
    entries: list[tuple[tuple[int, int], int, tuple[str, str, str | None]]] = []
    for idx, it in enumerate(items):
        sid = int(it[0][1:])
        s = lay.snaps.get(sid)
        key = (s.timestamp_ms, lay.order[sid]) if s is not None else (2**63, 0)
        entries.append((key, idx, it))
        f = lay.folds.get(sid)
        if f is not None:
            span = fmt.timestamp(f.first_ms)
            if f.count > 1:
                span += f" - {fmt.timestamp(f.last_ms)}"
            text = f"… {fmt.plural(f.count, 'snapshot')} … ({span})"
            if f.expired_parent is not None:
                text += f" [{t('parent {id} expired', id=f.expired_parent)}]"
            pk = None if f.ancestor is None else f"s{f.ancestor}"
            entries.append(((f.last_ms, lay.order[sid]), idx, (f.node_id, text, pk)))
    # Newest first; a fold sorts just below its child (same position key, after it).
    entries.sort(key=lambda e: (-e[0][0], -e[0][1], e[2][0].startswith("fold")))
    lanes: list[str | None] = []
    lines = []
    for _, _, (node, text, pkey) in entries:
        cols = [i for i, w in enumerate(lanes) if w == node]
        if cols:
            col = cols[0]
            if len(cols) > 1:
                for c in cols[1:]:
                    lanes[c] = None
                lines.append(_lane_row(lanes, cols[1:], col))
        else:
            col = lanes.index(None) if None in lanes else len(lanes)
            if col == len(lanes):
                lanes.append(None)
        while len(lanes) > col + 1 and lanes[-1] is None:
            lanes.pop()
        mark = ":" if node.startswith("fold") else "*"
        prefix = " ".join(mark if i == col else ("|" if w is not None else " ")
                          for i, w in enumerate(lanes))
        lines.append(f"{prefix} {text}".rstrip() if prefix.strip() else f"{mark} {text}")
        lanes[col] = pkey
        while lanes and lanes[-1] is None:
            lanes.pop()
    return "\n".join(lines)


def _lane_row(lanes: list[str | None], merged: list[int], into: int) -> str:
    """The connector line drawn where lanes join a snapshot that is their common parent."""
    width = max([len(lanes), *[m + 1 for m in merged]])
    cells = [" "] * (2 * width)
    for i in range(width):
        if i == into or (i < len(lanes) and lanes[i] is not None):
            cells[2 * i] = "|"
    for m in merged:
        cells[2 * m - 1] = "/"
    return "".join(cells).rstrip()


# --------------------------------------------------------------------------- the card


def _table_html(lay: TreeLayout) -> str:
    rows: list[list[str]] = []
    for sid in lay.shown:
        s = lay.snaps[sid]
        badges = "".join(h.badge(x, k) for x, k in _ref_badges(lay, sid))
        if sid in lay.orphans:
            badges += h.badge(t("not on any ref"), "muted")
        rows.append([h.esc(lay.label(sid)), h.code(sid), h.esc(fmt.timestamp(s.timestamp_ms)),
                     h.esc("" if s.operation is None else s.operation), badges,
                     h.esc(summary_counts(s.summary))])
        f = lay.folds.get(sid)
        if f is not None:
            rows.append(["", h.muted(f"… {fmt.plural(f.count, 'snapshot')} …"),
                         h.muted(f"{fmt.timestamp(f.first_ms)} - {fmt.timestamp(f.last_ms)}"),
                         "", "", ""])
    for m in lay.missing:
        rows.append(["", h.code(m), h.muted(t("missing from the metadata")), "",
                     "".join(h.badge(x, k) for x, k in _ref_badges(lay, m)), ""])
    heads = ["label", "snapshot", "time (UTC)", "operation", "refs", "changes"]
    if not lay.labels:   # a large table: full ids only
        heads, rows = heads[1:], [r[1:] for r in rows]
    return h.table([t(x) for x in heads], rows)


@register(Snapshots, text_repr=True)
def _render_snapshots(snapshots: Snapshots) -> Rendered:
    lay = layout(snapshots)
    graph = _draw(lay)
    md = snapshots.metadata
    n_branches = sum(1 for r in md.refs.values() if r.is_branch)
    n_tags = len(md.refs) - n_branches
    cur = md.current_snapshot_id
    cur_text = ("-" if cur is None else f"{lay.labels[cur]} ({cur})" if cur in lay.labels
                else str(cur))
    sub = h.muted(t("current {id}", id=cur_text)
                  + f" · {fmt.plural(n_branches, 'branch', 'branches')}"
                  f" · {fmt.plural(n_tags, 'tag')}")
    body = graph.html_fragment() + h.section(
        t("Snapshots shown"), _table_html(lay),
        count=t("{shown:,} of {total:,}", shown=len(lay.shown), total=lay.total))
    title = fmt.plural(lay.total, "snapshot")
    head = (f"{t('Snapshots')}: {title}, {t('current {id}', id=cur)}, "
            f"{fmt.plural(n_branches, 'branch', 'branches')}, {fmt.plural(n_tags, 'tag')}")
    text = head + ("\n" + graph.text if graph.text else "")
    if graph.caption:
        text += f"\n({graph.caption})"
    return Rendered(h.card(t("Snapshots"), title, sub, body), text)
