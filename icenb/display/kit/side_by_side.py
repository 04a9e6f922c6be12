"""Several displayable objects next to each other: columns that wrap in HTML, stacked in text
(e.g. a v3 manifest list next to the v4 root manifest for the same data)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icenb.display.kit import html as h
from icenb.display.kit.fmt import cut
from icenb.display.registry import Rendered, register, render, renderer_for
from icenb.labels import t

__all__ = ["SideBySide", "side_by_side"]


class SideBySide:
    """Objects shown side by side; each drawn by its own renderer (reprs never raise)."""

    def __init__(self, objects: Sequence[Any], titles: Sequence[str] | None = None) -> None:
        self.objects = tuple(objects)
        given = list(titles or ())
        self.titles = tuple(str(given[i]) if i < len(given) else ""
                            for i in range(len(self.objects)))

    def __len__(self) -> int:
        return len(self.objects)


def side_by_side(*objects: Any, titles: Sequence[str] | None = None) -> SideBySide:
    """Show ``objects`` next to each other (HTML: flex columns that wrap on narrow screens;
    text: one after the other), each under its title when ``titles`` gives one."""
    return SideBySide(objects, titles)


def _one(obj: Any) -> Rendered:
    """An object's rendering: icenb's renderer, else its own ``_repr_html_``, else its repr."""
    if renderer_for(obj) is None:
        html_repr = getattr(obj, "_repr_html_", None)
        if callable(html_repr):
            try:
                out = html_repr()
                if isinstance(out, str):
                    return Rendered(out, render(obj).text)
            except Exception:  # a foreign repr that fails falls back to the text
                pass
    return render(obj)


@register(SideBySide, text_repr=True)
def _render(s: SideBySide) -> Rendered:
    htmls: list[str] = []
    texts: list[str] = []
    for obj, title in zip(s.objects, s.titles, strict=True):
        r = _one(obj)
        head = f"<div><b>{h.esc(title, 2000)}</b></div>" if title else ""
        htmls.append(head + r.html)
        texts.append((f"== {cut(title, 200)} ==\n" if title else "") + r.text)
    if not s.objects:
        return Rendered(h.muted(t("nothing to show")), "(" + t("nothing to show") + ")")
    return Rendered(h.columns(*htmls), "\n\n".join(texts))
