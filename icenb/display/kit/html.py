"""Static HTML building blocks: one style block per output, theme-aware, no JavaScript.

Colors are CSS variables chained to JupyterLab's (``--jp-*``), then VS Code's, then a neutral
default, so light and dark themes both read well. Sections collapse with ``<details>``, which
needs neither ids nor scripts, so the same object always renders to the same HTML.
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from icenb.display.kit.fmt import cut, fold_rows, hidden

#: The palette and layout of every output (``static/icenb.css``, a package resource the widgets'
#: front end shares), as one ``<style>`` block.
STYLE = ("<style>\n" + resources.files("icenb.display").joinpath("static/icenb.css")
         .read_text(encoding="utf-8") + "</style>")


def esc(value: Any, limit: int | None = None) -> str:
    """A value as escaped HTML text, cut to the display_max_string option."""
    return _html.escape(cut(value, limit), quote=True)


def document(body: str) -> str:
    """One whole output: the style block, then ``body`` inside the themed container."""
    return f'<div class="icenb">{STYLE}{body}</div>'


def card(kind: str, title: str, subtitle: str = "", body: str = "") -> str:
    """A bordered card: a kind label, an escaped title and subtitle (HTML), then ``body``."""
    sub = f'<span class="icenb-sub">{subtitle}</span>' if subtitle else ""
    return (f'<div class="icenb-card"><div class="icenb-head"><span class="icenb-kind">'
            f'{esc(kind)}</span><span class="icenb-title">{esc(title)}</span>{sub}</div>'
            f"{body}</div>")


def section(title: str, body: str, *, open: bool = False, count: str | None = None) -> str:
    """A collapsible section; ``count`` (text) is shown beside the title."""
    extra = f'<span class="icenb-count">{esc(count)}</span>' if count else ""
    return (f"<details{' open' if open else ''}><summary>{esc(title)}{extra}</summary>"
            f"<div>{body}</div></details>")


def badge(text: str, kind: str = "info") -> str:
    """A small rounded label: kinds branch, tag, current, added, existing, deleted, warn, muted."""
    return f'<span class="icenb-badge icenb-b-{esc(kind)}">{esc(text)}</span>'


def code(text: Any) -> str:
    """Escaped monospace text."""
    return f"<code>{esc(text)}</code>"


def muted(text: Any) -> str:
    """Escaped secondary text."""
    return f'<span class="icenb-muted">{esc(text)}</span>'


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, limit: int | None = None,
          what: str = "rows", total: int | None = None) -> str:
    """A table of HTML cells (already escaped); rows beyond ``limit`` fold into one line.

    ``total`` is the real row count when ``rows`` is itself only a part of it.
    """
    shown_head, n_hidden, tail = fold_rows(rows, limit, total)
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    out = [f'<table class="icenb-t"><thead><tr>{head}</tr></thead><tbody>']
    out.extend(_row(r) for r in shown_head)
    if n_hidden:
        out.append(f'<tr class="icenb-fold"><td colspan="{max(len(headers), 1)}">'
                   f"{esc(hidden(n_hidden, what))}</td></tr>")
    out.extend(_row(r) for r in tail)
    out.append("</tbody></table>")
    return "".join(out)


def _row(cells: Sequence[str]) -> str:
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def kv(rows: Iterable[tuple[str, str]]) -> str:
    """A two-column key/value table; keys are escaped, values are HTML."""
    body = "".join(f"<tr><td>{esc(k)}</td><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="icenb-t icenb-kv"><tbody>{body}</tbody></table>'


def columns(*parts: str) -> str:
    """Side-by-side blocks that wrap on narrow screens."""
    return '<div class="icenb-cols">' + "".join(f"<div>{p}</div>" for p in parts) + "</div>"


def pre(text: str) -> str:
    """Escaped preformatted text (not cut)."""
    return f"<pre>{_html.escape(text)}</pre>"


def error(text: str) -> str:
    """An escaped error line."""
    return f'<div class="icenb-error">{esc(text, 2000)}</div>'
