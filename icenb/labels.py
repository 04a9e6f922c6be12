"""Labels in the display language (``icenb.set_options(language="zh")``, ``$ICENB_LANGUAGE``).

Every user-visible label of a repr, graph or widget is written in English and passed through
:func:`t`, which looks it up in the Chinese catalog (:mod:`icenb.labels_zh`, vocabulary of the
Chinese specs and glossary) when the language is ``zh``. Values, names, paths, SQL and spec
field names are never passed through it. A label missing from the catalog shows in English:
reprs never raise. A top-level module, importable by every layer that draws.
"""

from __future__ import annotations

from typing import Any

from icenb.labels_zh import COUNTERS, ZH
from icenb.options import get_options

__all__ = ["ZH", "catalog", "counted", "is_zh", "language", "more", "t"]


def language() -> str:
    """The label language in effect: ``"en"`` or ``"zh"``."""
    return get_options().language


def is_zh() -> bool:
    """Whether labels are drawn in Chinese."""
    return get_options().language == "zh"


def catalog() -> dict[str, str]:
    """The English -> Chinese label catalog (a copy)."""
    return dict(ZH)


def t(text: str, /, **values: Any) -> str:
    """``text`` (an English label) in the display language, ``{name}`` fields filled from
    ``values`` as ``str.format`` fills them; English when the catalog lacks it."""
    template = ZH.get(text, text) if is_zh() else text
    if not values:
        return template
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):  # a broken translation: the English one
        return text.format(**values)


def counted(n: int, word: str, words: str | None = None) -> str:
    """``1 file``, ``3 files``; in Chinese ``3 个文件`` (or the noun's own counter)."""
    if not is_zh():
        return f"{n:,} {word if n == 1 else (words or word + 's')}"
    return f"{n:,} {_zh_noun(word)}"


def _zh_noun(word: str) -> str:
    """A Chinese noun with its counter (``个快照``, ``行``)."""
    counter = COUNTERS.get(word)
    return counter if counter is not None else "个" + t(word)


def more(n: int, what: str) -> str:
    """The ellipsis line for ``n`` hidden ``what`` (plural): ``… 9,960 more snapshots …``."""
    if not is_zh():
        return f"… {n:,} more {what} …"
    return f"… 另有 {n:,} {_zh_noun(what)} …"
