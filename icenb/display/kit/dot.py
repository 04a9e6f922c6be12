"""Graphviz DOT built in pure Python, with one visual language for every graph icenb draws.

Node colors follow the v4 single-file-commits proposal's figures (snapshots light blue, root
manifests light purple, data manifests light green, delete manifests light red, manifest delete
vectors light orange, data files light yellow); the kinds it does not draw get neighbouring
tones. Fills are pastel with dark text, edges mid-grey, backgrounds transparent, so the graphs
read on light and dark themes; the HTML wrapper re-colors edges and free text by theme.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from icenb.display.kit.fmt import cut
from icenb.reprs import safe_repr

# kind -> (fill, stroke)
PALETTE: dict[str, tuple[str, str]] = {
    "snapshot": ("#e1f5fe", "#01579b"),
    "snapshot_current": ("#b3e5fc", "#01579b"),
    "metadata": ("#eceff1", "#37474f"),
    "root": ("#f3e5f5", "#4a148c"),
    "manifest_list": ("#f3e5f5", "#4a148c"),
    "data_manifest": ("#e8f5e8", "#1b5e20"),
    "delete_manifest": ("#ffebee", "#c62828"),
    "manifest_dv": ("#fed7aa", "#ea580c"),
    "data_file": ("#fff8e1", "#f57f17"),
    "delete_file": ("#fce4ec", "#ad1457"),
    "deletion_vector": ("#fde0dc", "#bf360c"),
    "equality_delete": ("#ede7f6", "#4527a0"),
    "branch": ("#e8f5e9", "#2e7d32"),
    "tag": ("#fff3e0", "#e65100"),
    "schema": ("#e3f2fd", "#1565c0"),
    "spec": ("#e0f2f1", "#00695c"),
    "view_version": ("#e1f5fe", "#01579b"),
    "folded": ("#f5f5f5", "#9e9e9e"),
    "removed": ("#f5f5f5", "#9e9e9e"),
}
TEXT_COLOR = "#1b1b1b"   # on every pastel fill
EDGE_COLOR = "#8c959f"   # mid-grey: readable on white and on dark grey
FONT = "Helvetica"


def quote(text: object) -> str:
    """A DOT double-quoted string (escapes backslash, quote and newlines)."""
    s = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + s.replace("\r", "").replace("\n", "\\n") + '"'


def record_escape(text: object, limit: int | None = None) -> str:
    """Text for one field of a record label (escapes the record syntax ``{}|<>`` and quotes)."""
    out = cut(text, limit).replace("\\", "\\\\").replace("\r", "").replace("\n", " ")
    for ch in '{}|<>"':
        out = out.replace(ch, "\\" + ch)
    return out


@safe_repr
@dataclass(frozen=True)
class Cell:
    """One cell of a table label: text and an optional port edges can start or end at.

    ``bold`` and ``color`` are kept for callers' intent; record labels draw plain text.
    """

    text: str
    bold: bool = False
    color: str | None = None
    port: str | None = None
    align: str = "LEFT"

    def render(self) -> str:
        port = f"<{record_escape(self.port)}> " if self.port else ""
        body = record_escape(self.text) or " "
        return port + body + ("\\l" if self.align == "LEFT" else "")


RECORD = "\x00record:"  # marks a label built by table_label (a record, not plain text)


def table_label(title: str, rows: Sequence[Sequence[str | Cell]], *, kind: str,
                subtitle: str | None = None, rankdir: str = "TB") -> str:
    """A node drawn as a table: a title, then one row per entry, columns aligned.

    Graphviz record labels, not HTML-like ones: the WebAssembly build of graphviz has no HTML
    labels (it draws the node id instead), while records render the same everywhere. Pass the
    result to ``Dot.node(..., html=True)``; ``rankdir`` must be the graph's.
    """
    del kind  # the node's kind gives its colors (Dot.node)
    width = max([len(r) for r in rows] + [1])
    grid = [[c if isinstance(c, Cell) else Cell(str(c)) for c in r] for r in rows]
    for r in grid:
        r.extend(Cell("") for _ in range(width - len(r)))
    head = record_escape(title) + "".join(   # a subtitle's lines stay lines
        f"\\n{record_escape(line)}" for line in (subtitle or "").split("\n") if subtitle)
    if not grid:
        body = head
    else:
        cols = "|".join("{" + "|".join(r[i].render() for r in grid) + "}" for i in range(width))
        body = f"{head}|{{{cols}}}"
    # Top-to-bottom graphs stack record fields left to right unless wrapped in braces.
    return RECORD + (f"{{{body}}}" if rankdir in ("TB", "BT") else body)


#: Letters of drawn files, as the v4 single-file-commits proposal names them (D1 data files,
#: DV1 deletion vectors, M1 manifests); the delete files it does not draw get two letters.
FILE_LETTERS = {"data_file": "D", "deletion_vector": "DV", "delete_file": "PD",
                "equality_delete": "ED"}


class FileNames:
    """Short names for the files of one drawing, numbered per letter in drawing order
    (``D1``, ``D2``, ``DV1``); manifest DVs take the next ``DV`` number, as in the proposal."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def next(self, letters: str) -> str:
        """The next name with ``letters``."""
        n = self._counts.get(letters, 0) + 1
        self._counts[letters] = n
        return f"{letters}{n}"

    def file(self, kind: str) -> str:
        """The next name for a file of node ``kind`` (a PALETTE key)."""
        return self.next(FILE_LETTERS.get(kind, "F"))


_COMPASS = frozenset(("n", "ne", "e", "se", "s", "sw", "w", "nw", "c"))


def _end(end: str) -> str:
    """An edge end: ``node``, ``node:port`` or ``node:port:compass`` (``compass`` one of n, e,
    s, w, ...)."""
    parts = end.split(":", 1)
    if len(parts) == 2 and parts[1].rsplit(":", 1)[-1] in _COMPASS and ":" in parts[1]:
        port, compass = parts[1].rsplit(":", 1)
        return f"{quote(parts[0])}:{quote(port)}:{compass}"
    return ":".join(quote(p) for p in parts)


class Dot:
    """A directed graph under construction; ``source()`` gives the DOT text, deterministically."""

    def __init__(self, name: str = "icenb", *, rankdir: str = "TB", **attrs: str) -> None:
        self.name = name
        self.graph_attrs: dict[str, str] = {
            "rankdir": rankdir, "bgcolor": "transparent", "fontname": FONT, "fontsize": "11",
            "nodesep": "0.25", "ranksep": "0.35", **attrs}
        self._lines: list[str] = []
        self._nodes: set[str] = set()
        self._depth = 0

    def node(self, node_id: str, label: str, *, kind: str, html: bool = False,
             **attrs: str) -> None:
        """A node of ``kind`` (a PALETTE key); ``html=True`` when ``label`` is a table_label."""
        if node_id in self._nodes:
            return
        self._nodes.add(node_id)
        fill, stroke = PALETTE.get(kind, PALETTE["folded"])
        base = {"class": kind, "shape": "box", "style": "rounded,filled", "fillcolor": fill,
                "color": stroke}
        if html:
            if not label.startswith(RECORD):
                raise ValueError("html=True takes a label built by table_label()")
            base["shape"] = "Mrecord"
            lab = '"' + label[len(RECORD):] + '"'  # fields are escaped already
        else:
            lab = quote(label)
        base.update(attrs)
        self._lines.append(f"{'  ' * (self._depth + 1)}{quote(node_id)} [label={lab}"
                           + "".join(f" {k}={quote(v)}" for k, v in base.items()) + "];")

    def has_node(self, node_id: str) -> bool:
        """Whether ``node_id`` was added."""
        return node_id in self._nodes

    def edge(self, tail: str, head: str, *, label: str | None = None, **attrs: str) -> None:
        """An edge; ``tail`` and ``head`` may name a port as ``node:port``."""
        parts = [f"label={quote(' ' + label + ' ')}"] if label else []
        parts += [f"{k}={quote(v)}" for k, v in attrs.items()]
        a, b = _end(tail), _end(head)
        extra = f" [{' '.join(parts)}]" if parts else ""
        self._lines.append(f"{'  ' * (self._depth + 1)}{a} -> {b}{extra};")

    def begin_cluster(self, name: str, label: str = "", **attrs: str) -> None:
        """Open a cluster subgraph (close it with ``end_cluster``)."""
        pad = "  " * (self._depth + 1)
        self._lines.append(f"{pad}subgraph {quote('cluster_' + name)} {{")
        self._depth += 1
        inner = {"label": label, "style": "rounded,dashed", "color": EDGE_COLOR,
                 "fontname": FONT, **attrs}
        self._lines.extend(f"{pad}  {k}={quote(v)};" for k, v in inner.items())

    def end_cluster(self) -> None:
        """Close the innermost cluster."""
        self._depth -= 1
        self._lines.append(f"{'  ' * (self._depth + 1)}}}")

    def same_rank(self, node_ids: Iterable[str]) -> None:
        """Keep these nodes on one rank."""
        ids = " ".join(quote(n) for n in node_ids)
        self._lines.append(f"{'  ' * (self._depth + 1)}{{rank=same; {ids}}}")

    def raw(self, line: str) -> None:
        """A verbatim DOT statement (for the rare attribute the builder does not cover)."""
        self._lines.append(f"{'  ' * (self._depth + 1)}{line}")

    def source(self) -> str:
        """The DOT text."""
        attrs = "".join(f"  {k}={quote(v)};\n" for k, v in self.graph_attrs.items())
        defaults = (f"  node [fontname={quote(FONT)} fontsize=\"10\" fontcolor={quote(TEXT_COLOR)}"
                    f" margin=\"0.08,0.04\"];\n"
                    f"  edge [fontname={quote(FONT)} fontsize=\"9\" color={quote(EDGE_COLOR)}"
                    f" fontcolor={quote(EDGE_COLOR)} arrowsize=\"0.7\"];\n")
        return (f"digraph {quote(self.name)} {{\n{attrs}{defaults}" + "\n".join(self._lines)
                + "\n}\n")
