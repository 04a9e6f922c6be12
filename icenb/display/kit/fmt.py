"""Small value formatters shared by every repr: timestamps, sizes, counts, paths, folding."""

from __future__ import annotations

import datetime as _dt
import tempfile as _tempfile
from collections.abc import Sequence
from typing import Any, TypeVar

from icenb.labels import counted, more, t
from icenb.options import get_options
from icenb.table.explore.snapshot_labels import label_for

T = TypeVar("T")

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def timestamp(ms: int | None) -> str:
    """Epoch milliseconds as ``YYYY-MM-DD HH:MM:SS.mmm`` UTC (the spec stores ms since epoch)."""
    if ms is None:
        return "-"
    try:
        t = _EPOCH + _dt.timedelta(milliseconds=int(ms))
    except (OverflowError, ValueError, TypeError):
        return str(ms)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def size(n: int | None) -> str:
    """Bytes in binary units (``4.2 KiB``); exact below 1 KiB."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover - loop always returns


def count(n: int | None) -> str:
    """An integer with thousands separators, ``-`` when unknown."""
    return "-" if n is None else f"{int(n):,}"


def cut(text: Any, limit: int | None = None) -> str:
    """``str(text)`` cut to the display_max_string option, with an ellipsis saying so."""
    s = str(text)
    limit = get_options().display_max_string if limit is None else limit
    if len(s) <= limit:
        return s
    return s[: max(limit - 1, 1)] + "…"


def short_path(location: str, base: str | None = None) -> str:
    """A file location relative to the table location when inside it, else the location."""
    if base:
        prefix = base.rstrip("/") + "/"
        if location.startswith(prefix):
            return location[len(prefix):]
    return location


def file_name(location: str) -> str:
    """The last path segment of a location."""
    return location.rstrip("/").rsplit("/", 1)[-1]


def fold(items: Sequence[T], limit: int) -> tuple[Sequence[T], int, Sequence[T]]:
    """Split ``items`` into a head, the number hidden, and a tail, showing at most ``limit``."""
    n = len(items)
    if n <= limit:
        return items, 0, ()
    tail = limit // 2
    head = limit - tail
    return items[:head], n - limit, items[n - tail:] if tail else ()


def fold_rows(rows: Sequence[T], limit: int | None, total: int | None = None
              ) -> tuple[Sequence[T], int, Sequence[T]]:
    """``fold`` for listings: no limit shows all; ``total`` counts rows not even passed in."""
    head, n_hidden, tail = fold(rows, limit) if limit is not None else (rows, 0, ())
    if total is not None and total > len(rows):
        n_hidden += total - len(rows)
    return head, n_hidden, tail


MAX_REFS = 6  # ref names shown on one snapshot before "+N more"


def first(items: Sequence[T], limit: int = MAX_REFS) -> tuple[Sequence[T], int]:
    """The first ``limit`` items and how many more there are (the refs at one snapshot: a
    table can hold thousands of tags on it)."""
    return items[:limit], max(0, len(items) - limit)


def names(items: Sequence[str], limit: int = MAX_REFS, sep: str = ", ") -> str:
    """``a, b, c, +9 more`` (at most ``limit`` names)."""
    shown, extra = first(items, limit)
    return sep.join(list(shown) + ([t("+{n:,} more", n=extra)] if extra else []))


def hidden(n: int, what: str) -> str:
    """The ellipsis line for ``n`` hidden items: ``… 9,960 more snapshots …``."""
    return more(n, what)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 file``, ``3 files`` (in the display language)."""
    return counted(n, word, words)


def snapshot_label(metadata: Any, snapshot_id: int | None) -> str:
    """``S3`` for a snapshot of a table with at most ``display_short_ids_max`` snapshots, else
    the full id (rule: icenb.table.explore.snapshot_labels). ``metadata`` is anything with
    ``.snapshots`` (TableMetadata, Table.snapshots) or a sequence of snapshots."""
    snaps = getattr(metadata, "snapshots", metadata)
    return label_for(snaps if snaps is not None else (), snapshot_id)


def table_place(name: str | None, location: str) -> str:
    """What a title calls a table: its catalog name, else the last two components of its
    location (``v3/remove_from_leaf``), never a temporary directory's
    (``/tmp/icenb-06-x/orders`` gives ``orders``)."""
    if name:
        return name
    parts = [p for p in location.rstrip("/").replace("\\", "/").split("/") if p]
    if len(parts) < 2:
        return location
    tmp = _tempfile.gettempdir().rstrip("/").replace("\\", "/").split("/")[-1]
    parent_in_tmp = len(parts) >= 3 and parts[-3] == tmp
    return parts[-1] if parent_in_tmp or parts[-2] == tmp else "/".join(parts[-2:])


def middle(name: str, limit: int = 36) -> str:
    """A long file name shortened in the middle, for node labels (uuids make names long)."""
    if len(name) <= limit:
        return name
    tail = limit // 2
    return name[: limit - tail - 1] + "…" + name[len(name) - tail:]
