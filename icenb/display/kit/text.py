"""Plain-text building blocks for consoles and untrusted notebooks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from icenb.display.kit.fmt import fold_rows, hidden


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, limit: int | None = None,
          what: str = "rows", total: int | None = None, indent: str = "") -> str:
    """Aligned columns; rows beyond ``limit`` fold into one ellipsis line."""
    head, n_hidden, tail = fold_rows(rows, limit, total)
    shown = [list(headers), *[list(r) for r in head], *[list(r) for r in tail]]
    widths = [max((len(r[i]) for r in shown if i < len(r)), default=0)
              for i in range(len(headers))]

    def line(r: Sequence[str]) -> str:
        return (indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False))).rstrip()

    out = [line(headers)]
    out.extend(line(r) for r in head)
    if n_hidden:
        out.append(indent + hidden(n_hidden, what))
    out.extend(line(r) for r in tail)
    return "\n".join(out)


def kv(rows: Iterable[tuple[str, str]], indent: str = "") -> str:
    """``key: value`` lines with aligned values."""
    items = list(rows)
    width = max((len(k) for k, _ in items), default=0)
    return "\n".join(f"{indent}{k + ':':<{width + 1}} {v}".rstrip() for k, v in items)


def indent(text: str, prefix: str = "  ") -> str:
    """Every line of ``text`` indented by ``prefix``."""
    return "\n".join(prefix + ln if ln else ln for ln in text.splitlines())
