"""Plain-text building blocks for consoles and untrusted notebooks."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from icenb.display.kit.fmt import fold_rows, hidden


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide (CJK) characters count two."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns (``str.ljust`` for CJK)."""
    return text + " " * (columns - width(text))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, limit: int | None = None,
          what: str = "rows", total: int | None = None, indent: str = "") -> str:
    """Aligned columns; rows beyond ``limit`` fold into one ellipsis line."""
    head, n_hidden, tail = fold_rows(rows, limit, total)
    shown = [list(headers), *[list(r) for r in head], *[list(r) for r in tail]]
    widths = [max((width(r[i]) for r in shown if i < len(r)), default=0)
              for i in range(len(headers))]

    def line(r: Sequence[str]) -> str:
        return (indent + "  ".join(pad(c, w) for c, w in zip(r, widths, strict=False))).rstrip()

    out = [line(headers)]
    out.extend(line(r) for r in head)
    if n_hidden:
        out.append(indent + hidden(n_hidden, what))
    out.extend(line(r) for r in tail)
    return "\n".join(out)


def kv(rows: Iterable[tuple[str, str]], indent: str = "") -> str:
    """``key: value`` lines with aligned values."""
    items = list(rows)
    w = max((width(k) for k, _ in items), default=0)
    return "\n".join(f"{indent}{pad(k + ':', w + 1)} {v}".rstrip() for k, v in items)


def indent(text: str, prefix: str = "  ") -> str:
    """Every line of ``text`` indented by ``prefix``."""
    return "\n".join(prefix + ln if ln else ln for ln in text.splitlines())
