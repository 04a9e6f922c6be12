"""Which function renders which class, and the safe entry points IPython calls.

Lower layers know nothing of display (DESIGN.md, Architecture): ``install()`` attaches
``_repr_mimebundle_`` (and, where asked, ``__repr__``) to the registered classes when icenb is
imported. A renderer that fails yields a readable fallback naming the error, never an exception
(DESIGN.md: "Reprs never do I/O and never raise").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from icenb.display.kit import html as h
from icenb.display.kit.fmt import cut
from icenb.labels import t
from icenb.reprs import safe_repr


@safe_repr
@dataclass(frozen=True)
class Rendered:
    """An object drawn both ways: an HTML fragment (no style block) and plain text."""

    html: str
    text: str


Renderer = Callable[[Any], Rendered]
F = TypeVar("F", bound=Renderer)

_RENDERERS: dict[type, Renderer] = {}
_TEXT_REPR: set[type] = set()
_TEXT_STR: set[type] = set()
_ORIGINAL_REPR: dict[type, Callable[[Any], str]] = {}


def register(*classes: type, text_repr: bool = False,
             text_str: bool = False) -> Callable[[F], F]:
    """Register a renderer for ``classes``; ``text_repr=True`` also makes its text their
    ``__repr__``, ``text_str=True`` their ``__str__`` (``print(obj)``) only, for classes
    whose one-line ``__repr__`` is kept for tracebacks and lists."""
    def deco(fn: F) -> F:
        for cls in classes:
            _RENDERERS[cls] = fn
            if text_repr:
                _TEXT_REPR.add(cls)
            if text_str:
                _TEXT_STR.add(cls)
        return fn
    return deco


def renderer_for(obj: Any) -> Renderer | None:
    """The renderer registered for the closest class in ``type(obj)``'s MRO."""
    for cls in type(obj).__mro__:
        fn = _RENDERERS.get(cls)
        if fn is not None:
            return fn
    return None


def _plain_repr(obj: Any) -> str:
    """The class's own repr (the one display replaced, if any); never raises, never recurses."""
    original: Callable[[Any], str] = type(obj).__repr__  # type: ignore[assignment]
    for cls in type(obj).__mro__:
        if cls in _ORIGINAL_REPR:
            original = _ORIGINAL_REPR[cls]
            break
    try:
        return str(original(obj))
    except Exception as e:  # a broken repr must not break the display
        return f"<{type(obj).__name__} (repr failed: {type(e).__name__})>"


def fallback(obj: Any, err: BaseException) -> Rendered:
    """What is shown when a renderer fails: the error, then the object's plain repr."""
    name = type(obj).__name__
    why = f"{type(err).__name__}: {err}"
    plain = _plain_repr(obj)
    text = t("<{name}: display failed ({why})>", name=name, why=why) + f"\n{plain}"
    body = h.error(t("{name} could not be displayed ({why})", name=name, why=why)) + h.pre(
        cut(plain, 4000))
    return Rendered(h.card(name, "", "", body), text)


def render(obj: Any) -> Rendered:
    """Render any object: its registered renderer, the fallback on failure, else its repr."""
    fn = renderer_for(obj)
    if fn is None:
        plain = _plain_repr(obj)
        return Rendered(h.pre(cut(plain, 4000)), plain)
    try:
        return fn(obj)
    except Exception as e:  # reprs never raise
        return fallback(obj, e)


def mimebundle(obj: Any, include: Iterable[str] | None = None,
               exclude: Iterable[str] | None = None) -> dict[str, str]:
    """The ``text/plain`` and ``text/html`` bundle IPython displays (one style block)."""
    r = render(obj)
    bundle = {"text/plain": r.text, "text/html": h.document(r.html)}
    if include is not None:
        keep = set(include)
        bundle = {k: v for k, v in bundle.items() if k in keep}
    if exclude is not None:
        drop = set(exclude)
        bundle = {k: v for k, v in bundle.items() if k not in drop}
    return bundle


def _repr_mimebundle_(self: Any, include: Iterable[str] | None = None,
                      exclude: Iterable[str] | None = None, **_: Any) -> dict[str, str]:
    return mimebundle(self, include, exclude)


def _text_repr(self: Any) -> str:
    return render(self).text


def install() -> None:
    """Attach the display methods to every registered class (idempotent)."""
    for cls in _RENDERERS:
        if "_repr_mimebundle_" not in cls.__dict__:
            cls._repr_mimebundle_ = _repr_mimebundle_  # type: ignore[attr-defined]
    for cls in _TEXT_REPR:
        if cls.__dict__.get("__repr__") is not _text_repr:
            _ORIGINAL_REPR[cls] = getattr(cls, "__repr__")  # noqa: B009
            setattr(cls, "__repr__", _text_repr)  # noqa: B010
    for cls in _TEXT_STR:
        if "__str__" not in cls.__dict__:
            setattr(cls, "__str__", _text_repr)  # noqa: B010
