"""Where the widget layer plugs into the facades: ``Table.time_travel()`` and
``View.versions_widget()`` build widgets through factories that the composition root
(``icenb/__init__.py``) registers, so this layer never imports ``icenb.widgets``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from icenb.errors import UnsupportedFeature

_FACTORIES: dict[str, Callable[..., Any]] = {}


def register_widget(name: str, factory: Callable[..., Any]) -> None:
    """Register the factory that builds the widget called ``name`` (e.g. ``"TimeTravel"``)."""
    _FACTORIES[name] = factory


def build_widget(name: str, *args: Any, **kwargs: Any) -> Any:
    """The widget ``name`` built on ``args``; a clear error when no factory is registered."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnsupportedFeature(f"the {name} widget is not available: import icenb (the "
                                 "package) to register the widgets", field="widget", value=name)
    return factory(*args, **kwargs)
