"""Progress of long work: a bar in a notebook, one updating line in a terminal, else nothing.

``with progress(READING_MANIFESTS, total=n) as p: ... p.advance()`` around a loop of many
steps. Nothing shows for work shorter than :data:`SHOW_AFTER_SECONDS`; after that the work shows
(a ticker thread redraws it while a step takes long) until it ends, when it is cleared. Tasks
opened inside one another share one display: ``Appending rows > Writing data files 3/10``.

Where it shows (``icenb.set_options(progress=...)``; while that is ``"auto"``, the environment
variable ``ICENB_PROGRESS`` may name another mode):

- ``"auto"``: in a Jupyter kernel, an updating display output (``IPython.display`` with a
  ``display_id``: static HTML with a ``<progress>`` element and a text fallback; no script);
  on a terminal (stderr is a TTY), one line redrawn with ``\\r``; elsewhere (CI logs, captured
  test output, Spark workers) nothing;
- ``"always"``: as ``"auto"``, and on a stderr that is not a TTY a plain line now and then;
- ``"never"``: nothing.

A notebook output starts and ends empty: the display is created with no data, filled by
updates and emptied when the work ends, so neither a saved notebook nor nbval (which records
only the first message of a display) keeps a trace of it.

Cheap when hidden: a hidden task is a counter (``advance`` adds to it); a shown one also reads
the clock per step, and draws at most every :attr:`_Sink.interval` seconds. Drawing never
raises: a display that fails turns the progress off for the rest of the work.

Descriptions are short constant English labels (the constants below, :data:`LABELS`), drawn
through the label catalog (:func:`icenb.labels.t`) so they show in the display language.
A top-level module that imports only :mod:`icenb.options`: every layer may report progress.
"""

from __future__ import annotations

import html
import math
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from icenb.options import PROGRESS_MODES, get_options
from icenb.reprs import safe_repr

__all__ = [
    "ENV_VAR",
    "LABELS",
    "MODES",
    "SHOW_AFTER_SECONDS",
    "Progress",
    "current_mode",
    "progress",
]

#: Where progress shows (see the module docstring).
MODES = PROGRESS_MODES
#: The environment variable read while the ``progress`` option is ``"auto"``.
ENV_VAR = "ICENB_PROGRESS"
#: Work shorter than this shows nothing.
SHOW_AFTER_SECONDS = 1.0

# ---- labels: every description, a short constant (the label catalog translates them)
APPENDING = "Appending rows"
OVERWRITING = "Overwriting rows"
DELETING_ROWS = "Deleting rows"
UPDATING_ROWS = "Updating rows"
UPDATING_TABLE = "Updating table"
READING_TABLE = "Reading table"
READING_MANIFESTS = "Reading manifests"
READING_DATA_FILES = "Reading data files"
WRITING_ROWS = "Writing rows"
EXPIRING_SNAPSHOTS = "Expiring snapshots"
REMOVING_ORPHAN_FILES = "Removing orphan files"
LISTING_FILES = "Listing files"
DELETING_FILES = "Deleting files"
PURGING_TABLE = "Purging table"
WRITING_WITH_SPARK = "Writing with Spark"
STARTING_SPARK = "Starting Spark"
BUILDING_DEMO = "Building the demo warehouse"

#: Every description icenb reports progress with (for the label catalog and its tests).
LABELS = (APPENDING, OVERWRITING, DELETING_ROWS, UPDATING_ROWS, UPDATING_TABLE, READING_TABLE,
          READING_MANIFESTS, READING_DATA_FILES, WRITING_ROWS, EXPIRING_SNAPSHOTS,
          REMOVING_ORPHAN_FILES, LISTING_FILES, DELETING_FILES, PURGING_TABLE,
          WRITING_WITH_SPARK, STARTING_SPARK, BUILDING_DEMO)

# ---- seams (tests replace them): the clock, whether a ticker thread redraws, IPython's display
_clock: Callable[[], float] = time.monotonic
_THREADED = True


def _translate(text: str) -> str:
    """``text`` in the display language (English when the label catalog is not there)."""
    try:
        from icenb.labels import t
    except ImportError:
        return text
    return t(text)


def current_mode() -> str:
    """The mode in effect: the ``progress`` option, else (when it is ``"auto"``)
    ``$ICENB_PROGRESS`` when that names a mode."""
    chosen = get_options().progress
    if chosen == "auto":
        env = os.environ.get(ENV_VAR, "").strip().lower()
        if env in MODES:
            return env
    return chosen


# --------------------------------------------------------------------------- sinks


class _Sink:
    """Where a progress line goes."""

    #: Seconds between two redraws.
    interval = 0.1

    def show(self, text: str, fraction: float | None) -> None:
        raise NotImplementedError

    def clear(self, text: str) -> None:
        raise NotImplementedError


class _StreamSink(_Sink):
    """A terminal line redrawn in place (TTY), or a plain line every few seconds (not a TTY,
    only when progress is forced on)."""

    def __init__(self, stream: TextIO, tty: bool) -> None:
        self._stream = stream
        self._tty = tty
        self._width = 0  # characters of the line on screen
        self.interval = 0.1 if tty else 10.0

    def show(self, text: str, fraction: float | None) -> None:
        if fraction is not None:
            filled = round(fraction * 20)
            text = f"{text} [{'#' * filled}{'.' * (20 - filled)}]"
        if not self._tty:
            self._stream.write(text + "\n")
            self._stream.flush()
            return
        columns = shutil.get_terminal_size((80, 24)).columns - 1
        text = text[:max(columns, 10)]
        self._stream.write("\r" + text.ljust(self._width))
        self._stream.flush()
        self._width = len(text)

    def clear(self, text: str) -> None:
        if not self._tty:
            self._stream.write(text + "\n")
        else:
            self._stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self._stream.flush()


class _NotebookSink(_Sink):
    """A display output updated in place; created empty and emptied at the end (see the module
    docstring). ``display`` is IPython's (``display(display_id=True)`` returns a handle whose
    ``update(bundle, raw=True)`` replaces the output's data)."""

    interval = 0.25

    def __init__(self, display: Callable[..., Any]) -> None:
        self._display = display
        self._handle: Any = None

    def show(self, text: str, fraction: float | None) -> None:
        if self._handle is None:
            self._handle = self._display(display_id=True)
        bar = ("<progress></progress>" if fraction is None
               else f'<progress value="{fraction * 100:.1f}" max="100"></progress>')
        markup = ('<div class="icenb-progress" style="display:flex;align-items:center;gap:0.6em;'
                  "font-family:var(--jp-ui-font-family,sans-serif);"
                  'font-size:var(--jp-ui-font-size1,13px)">'
                  f"{bar}<span>{html.escape(text)}</span></div>")
        self._handle.update({"text/plain": text, "text/html": markup}, raw=True)

    def clear(self, text: str) -> None:
        if self._handle is not None:
            self._handle.update({}, raw=True)


def _in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (IPython with a kernel attached)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # a half-imported or odd IPython: not a notebook
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _ipython_display() -> Callable[..., Any] | None:
    try:
        from IPython.display import display
    except ImportError:
        return None
    return display


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:  # a closed or odd stream
        return False


def _sink(mode: str) -> _Sink | None:
    """Where progress goes in ``mode`` here, or None (hidden)."""
    if mode == "never":
        return None
    if _in_kernel():
        display = _ipython_display()
        if display is not None:
            return _NotebookSink(display)
    stream = sys.stderr
    if stream is None:
        return None
    tty = _isatty(stream)
    if not tty and mode != "always":
        return None
    return _StreamSink(stream, tty)


# --------------------------------------------------------------------------- the bar


def _count(n: int) -> str:
    return f"{n:,}"


class _Bar:
    """One display shared by the tasks open inside one another; redrawn by the steps of the
    innermost task (at most every ``sink.interval``) and by a ticker thread while none come."""

    def __init__(self, sink: _Sink, clock: Callable[[], float]) -> None:
        self.sink = sink
        self.clock = clock
        self.started = clock()
        self.due = self.started + SHOW_AFTER_SECONDS  # the clock time of the next redraw
        self.tasks: tuple[Progress, ...] = ()
        self.shown = False
        self.closed = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if _THREADED:
            self._thread = threading.Thread(target=self._tick, name="icenb-progress",
                                            daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(min(max(self.due - self.clock(), 0.01), 0.25)):
            self.refresh()

    def text(self, now: float) -> tuple[str, float | None]:
        parts = []
        fraction = None
        for task in self.tasks:
            part = _translate(task.description)
            if task.total is not None:
                part += f" {_count(min(task.done, task.total))}/{_count(task.total)}"
                fraction = min(task.done / task.total, 1.0) if task.total > 0 else 1.0
            elif task.done:
                part += f" {_count(task.done)}"
            parts.append(part)
        return f"{' > '.join(parts)}  {now - self.started:.1f} s", fraction

    def refresh(self) -> None:
        """Draw now if a redraw is due (another thread drawing: skip)."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            now = self.clock()
            if self.closed or now < self.due or not self.tasks:
                return
            self.due = now + self.sink.interval
            text, fraction = self.text(now)
            self.sink.show(text, fraction)
            self.shown = True
        except Exception:  # drawing never fails the work: no more progress for it
            self.closed = True
            self.due = math.inf
        finally:
            self._lock.release()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)
        locked = self._lock.acquire(timeout=1.0)
        try:
            if self.shown and not self.closed:
                self.sink.clear(self.text(self.clock())[0])
        except Exception:  # drawing never fails the work
            pass
        finally:
            self.closed = True
            self.due = math.inf
            if locked:
                self._lock.release()


_active: _Bar | None = None  # the display of the outermost task open now


@safe_repr
class Progress:
    """A task: a context manager (``with progress(...) as p``) whose :meth:`advance` counts
    its steps. ``total`` (steps, None when unknown) may be set once known."""

    __slots__ = ("_bar", "_top", "description", "done", "total")

    def __init__(self, description: str, total: int | None = None) -> None:
        self.description = description
        self.total = total
        self.done = 0
        self._bar: _Bar | None = None
        self._top = False

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more steps done (redraws when a redraw is due)."""
        self.done += n
        bar = self._bar
        if bar is not None and bar.clock() >= bar.due:
            bar.refresh()

    def __enter__(self) -> Progress:
        global _active
        self._top = False
        bar = _active
        if bar is None or bar.closed:
            sink = _sink(current_mode())
            if sink is None:
                return self
            bar = _Bar(sink, _clock)
            _active = bar
            self._top = True
            bar.start()
        self._bar = bar
        bar.tasks = (*bar.tasks, self)
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        bar = self._bar
        if bar is None:
            return
        self._bar = None
        if self._top:
            if _active is bar:
                _active = None
            bar.close()  # drawn last with its tasks
        bar.tasks = tuple(t for t in bar.tasks if t is not self)

    def __repr__(self) -> str:
        total = "" if self.total is None else f"/{self.total}"
        return f"Progress({self.description!r}, {self.done}{total})"


def progress(description: str, total: int | None = None) -> Progress:
    """A task to report: ``with progress(READING_DATA_FILES, total=len(tasks)) as p:`` then
    ``p.advance()`` per step. ``description`` is one of the label constants of this module."""
    return Progress(description, total)
