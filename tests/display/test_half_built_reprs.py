"""Reprs never raise, not even on a half-built object (DESIGN.md: "Reprs never do I/O and never
raise; output stays bounded on huge tables").

An object is half-built when ``__new__`` ran but ``__init__`` did not, or failed midway (a
dataclass whose ``__post_init__`` refused a value, a table whose metadata could not be read).
Tracebacks, debuggers and Jupyter still print it. This walks every module of the package, takes
every class that defines a repr method of its own (dataclass-generated ones included), and
calls each on an instance that has no attributes at all.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pytest

import icenb
from icenb.reprs import safe_repr

#: The methods Python and IPython call to show an object.
REPR_METHODS = ("__repr__", "__str__", "_repr_html_", "_repr_markdown_", "_repr_mimebundle_")
#: More characters than any fallback, far fewer than an unbounded dump.
BOUND = 10_000


def _modules() -> list[ModuleType]:
    """Every module of the package; one whose optional dependency is missing is left out."""
    found = []
    for info in pkgutil.walk_packages(icenb.__path__, "icenb."):
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:  # e.g. pyspark absent: the Spark data plane is optional
            continue
    return found


def _classes_of(owner: ModuleType | type, module: str) -> Iterator[type]:
    """The classes defined in ``module`` reachable from ``owner``, nested classes included."""
    for value in vars(owner).values():
        if isinstance(value, type) and value.__module__ == module and value is not owner:
            yield value
            yield from _classes_of(value, module)


def _repr_classes() -> list[type]:
    """Every icenb class that defines (not only inherits) one of :data:`REPR_METHODS`."""
    seen: dict[str, type] = {}
    for module in _modules():
        for cls in _classes_of(module, module.__name__):
            if any(name in vars(cls) for name in REPR_METHODS):
                seen.setdefault(f"{cls.__module__}.{cls.__qualname__}", cls)
    return [seen[name] for name in sorted(seen)]


def _instantiable(cls: type) -> type:
    """``cls``, or for an abstract class a subclass whose abstract methods are stubs (the
    instance still runs ``cls``'s own repr methods)."""
    if not inspect.isabstract(cls):
        return cls
    stubs = {name: (lambda *_a, **_k: None) for name in cls.__abstractmethods__}
    return type(cls.__name__, (cls,), stubs)


def _half_built(cls: type) -> Any:
    """An instance whose ``__init__`` never ran, or None when no such thing can exist (an
    enum member, an immutable tuple whose ``__new__`` needs every field)."""
    if issubclass(cls, enum.Enum):
        return None
    concrete = _instantiable(cls)
    for make in (lambda: concrete.__new__(concrete), lambda: object.__new__(concrete)):
        try:
            return make()
        except TypeError:
            continue
    return None


CLASSES = _repr_classes()
#: The classes a half-built instance of can exist (not enums nor NamedTuples).
HALF_BUILT = [c for c in CLASSES if _half_built(c) is not None]


def _check(obj: Any, name: str) -> str | None:
    """Why ``obj.<name>()`` broke the promise, or None when it kept it."""
    method: Callable[[], Any] = getattr(obj, name)
    try:
        result = method()
    except Exception as e:
        return f"{name} raised {type(e).__name__}: {e}"
    if name == "_repr_mimebundle_":
        if result is None:
            return None
        if not isinstance(result, (dict, tuple)):
            return f"{name} returned {type(result).__name__}"
        data = result[0] if isinstance(result, tuple) else result
        size = sum(len(v) for v in data.values() if isinstance(v, str))
    else:
        if not isinstance(result, str):
            return f"{name} returned {type(result).__name__}, not str"
        size = len(result)
    return f"{name} returned {size} characters" if size >= BOUND else None


def test_the_walk_reaches_every_layer() -> None:
    """A walk that silently found nothing would pass every check below."""
    packages = {cls.__module__.split(".")[1] for cls in CLASSES}
    print(f"{len(CLASSES)} classes define a repr method; "
          f"{len(HALF_BUILT)} checked half-built")
    assert {"spec", "io", "catalog", "table", "display", "widgets", "spark"} <= packages
    assert len(CLASSES) > 200


@pytest.mark.parametrize("cls", HALF_BUILT, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_half_built_reprs_never_raise(cls: type) -> None:
    obj = _half_built(cls)
    problems = [p for name in REPR_METHODS if name in vars(cls)
                if (p := _check(obj, name)) is not None]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- the decorator


@safe_repr
@dataclass
class _Node:
    name: str
    children: list[_Node] = field(default_factory=list)
    parent: _Node | None = None

    def _repr_html_(self) -> str:
        return f"<b>{self.name}</b>"


@dataclass
class _PlainNode:
    name: str
    children: list[_PlainNode] = field(default_factory=list)
    parent: _PlainNode | None = None


def test_a_complete_object_shows_as_before() -> None:
    root, plain = _Node("root"), _PlainNode("root")
    root.children.append(_Node("leaf", parent=root))
    plain.children.append(_PlainNode("leaf", parent=plain))
    assert repr(root) == repr(plain).replace("_PlainNode", "_Node")  # cycles print "..." too
    assert "parent=..." in repr(root)
    assert root._repr_html_() == "<b>root</b>"


def test_a_failing_repr_shows_the_class_and_the_error() -> None:
    half = object.__new__(_Node)
    assert repr(half) == "<_Node (repr failed: AttributeError: '_Node' object has no attribute " \
                         "'name')>"
    assert half._repr_html_().startswith("<pre>&lt;_Node (repr failed: AttributeError")


def test_the_fallback_is_short_and_a_repr_that_calls_itself_ends() -> None:
    class Loud(Exception):
        def __str__(self) -> str:
            return "x" * 100_000

    @safe_repr
    class Broken:
        def __repr__(self) -> str:
            raise Loud

        def __str__(self) -> str:
            return str(self)  # without the guard: RecursionError

        def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
            raise RuntimeError("no\nbundle")

    obj = Broken()
    assert repr(obj).startswith("<Broken (repr failed: Loud: xxx") and len(repr(obj)) < 200
    assert str(obj) == "..."
    assert obj._repr_mimebundle_() == {
        "text/plain": "<Broken (repr failed: RuntimeError: no bundle)>",
        "text/html": "<pre>&lt;Broken (repr failed: RuntimeError: no bundle)&gt;</pre>",
    }
