"""Static HTML building blocks: one style block per output, theme-aware, no JavaScript.

Colors are CSS variables chained to JupyterLab's (``--jp-*``), then VS Code's, then a neutral
default, so light and dark themes both read well. Sections collapse with ``<details>``, which
needs neither ids nor scripts, so the same object always renders to the same HTML.
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Sequence
from typing import Any

from icenb.display.fmt import cut, fold_rows, hidden

STYLE = """<style>
.icenb{--icenb-fg:var(--jp-content-font-color0,var(--vscode-editor-foreground,#1f2328));
--icenb-fg2:var(--jp-content-font-color2,var(--vscode-descriptionForeground,#656d76));
--icenb-bg:var(--jp-layout-color0,transparent);
--icenb-bg2:var(--jp-layout-color2,rgba(127,127,127,.10));
--icenb-border:var(--jp-border-color2,rgba(127,127,127,.35));
--icenb-accent:var(--jp-brand-color1,#1976d2);
--icenb-warn:var(--jp-warn-color1,#d97706);--icenb-error:var(--jp-error-color1,#d32f2f);
--icenb-ok:var(--jp-success-color1,#388e3c);
--icenb-mono:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,monospace);
color:var(--icenb-fg);font-family:var(--jp-ui-font-family,system-ui,sans-serif);
font-size:13px;line-height:1.4;max-width:100%;overflow-x:auto}
.icenb .icenb-card{border:1px solid var(--icenb-border);border-radius:6px;padding:6px 10px;
margin:2px 0;background:var(--icenb-bg)}
.icenb .icenb-head{display:flex;flex-wrap:wrap;gap:8px;align-items:baseline}
.icenb .icenb-kind{font-size:11px;text-transform:uppercase;letter-spacing:.05em;
color:var(--icenb-fg2)}
.icenb .icenb-title{font-weight:600;font-size:14px}
.icenb .icenb-sub,.icenb .icenb-muted,.icenb .icenb-count{color:var(--icenb-fg2)}
.icenb .icenb-count{font-weight:400;margin-left:6px;font-size:12px}
.icenb details{margin:4px 0}
.icenb summary{cursor:pointer;font-weight:600;padding:2px 0}
.icenb details>div,.icenb details>table,.icenb details>pre{margin-left:14px}
.icenb table.icenb-t{border-collapse:collapse;margin:3px 0;font-size:12px}
.icenb table.icenb-t th{text-align:left;font-weight:600;color:var(--icenb-fg2);
border-bottom:1px solid var(--icenb-border);padding:2px 10px 2px 0}
.icenb table.icenb-t td{padding:1px 10px 1px 0;vertical-align:top;text-align:left;
border-bottom:1px solid var(--icenb-bg2)}
.icenb table.icenb-kv td:first-child{color:var(--icenb-fg2);padding-right:14px}
.icenb table.icenb-t td.icenb-num,.icenb table.icenb-t th.icenb-num{text-align:right;
font-variant-numeric:tabular-nums}
.icenb tr.icenb-fold td{color:var(--icenb-fg2);font-style:italic;text-align:center}
.icenb code,.icenb .icenb-mono{font-family:var(--icenb-mono);font-size:12px}
.icenb pre{font-family:var(--icenb-mono);font-size:12px;white-space:pre-wrap;margin:2px 0}
.icenb .icenb-badge{display:inline-block;border-radius:8px;padding:0 6px;font-size:11px;
border:1px solid currentColor;margin-right:3px;white-space:nowrap}
.icenb .icenb-b-branch{color:var(--icenb-ok)}.icenb .icenb-b-tag{color:var(--icenb-warn)}
.icenb .icenb-b-current,.icenb .icenb-b-info{color:var(--icenb-accent)}
.icenb .icenb-b-added{color:var(--icenb-ok)}.icenb .icenb-b-deleted{color:var(--icenb-error)}
.icenb .icenb-b-existing,.icenb .icenb-b-muted{color:var(--icenb-fg2)}
.icenb .icenb-b-warn{color:var(--icenb-warn)}
.icenb .icenb-error{color:var(--icenb-error)}
.icenb .icenb-cols{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.icenb .icenb-cols>div{flex:1 1 320px;min-width:0}
.icenb .icenb-graph img{max-width:100%;height:auto}
.icenb .icenb-graph g.edge path,.icenb .icenb-graph g.edge polygon{
stroke:var(--icenb-fg2)}
.icenb .icenb-graph g.edge polygon{fill:var(--icenb-fg2)}
.icenb .icenb-graph g.edge text,.icenb .icenb-graph g.cluster>text,
.icenb .icenb-graph g.graph>text{fill:var(--icenb-fg)}
.icenb .icenb-graph g.cluster>polygon{stroke:var(--icenb-border)}
.icenb .icenb-graph g.node.icenb-plain text{fill:var(--icenb-fg)}
</style>"""


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
