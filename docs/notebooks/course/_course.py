"""Shared writer for the course notebooks (``notebooks/course/``): one cell list per lesson, in
English and (for lessons 01 and 02) Chinese, every cell with a stable id that docs/course.md cites.

A lesson script lists :class:`Cell` values; :func:`write` turns them into a notebook for one
language. Code is the same in both languages; the line ``#LANGUAGE`` in a code cell becomes
``icenb.set_options(language="zh")`` in the Chinese notebook (drawings' labels in Chinese) and
disappears in the English one. ``python docs/notebooks/course/_course.py clean NB...`` drops
``metadata.widgets`` from executed notebooks.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

COURSE = Path(__file__).resolve().parents[3] / "notebooks" / "course"
LANGUAGE_LINE = "#LANGUAGE\n"
ZH_LINE = 'icenb.set_options(language="zh")  # 图中的标签使用中文\n'


@dataclass(frozen=True)
class Cell:
    """One cell: ``kind`` "md" or "code"; ``zh`` the Chinese text of a markdown cell;
    ``wrong`` marks an exercise cell and carries a wrong answer (a Python literal)."""

    id: str
    kind: str
    en: str
    zh: str | None = None
    wrong: str | None = None
    tags: tuple[str, ...] = field(default=())


_BLOCK_START = re.compile(r"^(\s*([-*] |[>|#]|\d+\. |```)|\s*$)")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def _wide_mark(ch: str) -> bool:
    """Full-width punctuation: no space on either side."""
    return unicodedata.east_asian_width(ch) in "WFA" and unicodedata.category(ch)[0] == "P"


def unwrap_zh(text: str) -> str:
    """Chinese prose with its source line breaks removed: a break inside a paragraph would show
    as a space between two characters. Lines that start a block (list item, heading, table row,
    fence, blank) keep their break; other lines join the previous one, with no separator between
    two Chinese characters and a space next to Latin text."""
    out: list[str] = []
    for line in text.split("\n"):
        if out and out[-1].strip() and not _BLOCK_START.match(line) \
                and not out[-1].lstrip().startswith(("|", "```", "#")):
            left, right = out[-1].rstrip(), line.strip()
            tight = (_wide(left[-1]) and _wide(right[0])) or _wide_mark(left[-1]) \
                or _wide_mark(right[0])
            out[-1] = left + ("" if tight else " ") + right
        else:
            out.append(line)
    return "\n".join(out)


def md(id: str, en: str, zh: str | None = None) -> Cell:
    return Cell(id, "md", en, zh)


def code(id: str, source: str, *, wrong: str | None = None,
         tags: tuple[str, ...] = ()) -> Cell:
    return Cell(id, "code", source, wrong=wrong, tags=tags)


def write(cells: list[Cell], name: str, lang: str = "en") -> Path:
    """Write ``notebooks/course/<name>.ipynb`` (``<name>.zh.ipynb`` for ``lang="zh"``)."""
    ids = [c.id for c in cells]
    assert len(set(ids)) == len(ids), f"duplicate cell ids in {name}"
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    out = []
    for c in cells:
        if c.kind == "md":
            assert lang != "zh" or c.zh is not None, f"{c.id}: no Chinese text"
            text = unwrap_zh(c.zh) if lang == "zh" and c.zh is not None else c.en
            cell = new_markdown_cell(text.strip("\n"))
        else:
            src = c.en.lstrip("\n").replace(LANGUAGE_LINE, ZH_LINE if lang == "zh" else "")
            cell = new_code_cell(src.rstrip("\n"))
            if c.wrong is not None:
                cell.metadata["icenb"] = {"exercise": True, "wrong_answer": c.wrong}
            if c.tags:
                cell.metadata["tags"] = list(c.tags)
        cell.id = c.id
        out.append(cell)
    nb.cells = out
    COURSE.mkdir(parents=True, exist_ok=True)
    path = COURSE / (f"{name}.zh.ipynb" if lang == "zh" else f"{name}.ipynb")
    nbformat.write(nb, path)
    return path


def clean(paths: list[str]) -> None:
    """Drop widget state from executed notebooks (it holds model ids that change every run)."""
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, p)


if __name__ == "__main__":
    if sys.argv[1:2] == ["clean"]:
        clean(sys.argv[2:])
