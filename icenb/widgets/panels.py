"""What every icenb widget shares: errors shown in place, slow work off the kernel's thread,
panels that show the code reproducing them, and a static snapshot for places without a kernel.

DESIGN.md, "Widgets act through the same API a user calls": an ``IcebergError`` appears in the
widget, never a traceback; row previews run in a background thread, so the kernel keeps
answering clicks, with a spinner at once, a cancel button, and a newer request superseding an
older one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, TypeVar

import ipywidgets as w

from icenb.display import html as h
from icenb.errors import IcebergError
from icenb.labels import t
from icenb.reprs import safe_repr

T = TypeVar("T")

INTERACTIVE_NOTE = ("A static snapshot of the widget: run the notebook (trusted, with a kernel) "
                    "to make it interactive.")


def error_html(err: BaseException) -> str:
    """An error as one line of HTML: an ``IcebergError``'s message (file, field, value), or
    the type and message of anything else. Never a traceback."""
    if isinstance(err, IcebergError):
        text = f"{type(err).__name__}: {err}"
    else:
        text = t("unexpected {error}", error=f"{type(err).__name__}: {err}")
    return h.document(f'<div class="icenb-card">{h.error(text)}</div>')


class ErrorBox(w.HTML):  # type: ignore[misc]
    """Where a widget shows what went wrong (CSS class ``icenb-widget-error``)."""

    def __init__(self) -> None:
        super().__init__(value="")
        self.add_class("icenb-widget-error")
        self.layout.display = "none"
        self.error: BaseException | None = None

    def show(self, err: BaseException) -> None:
        self.error = err
        self.value = error_html(err)
        self.layout.display = ""

    def clear(self) -> None:
        self.error = None
        self.value = ""
        self.layout.display = "none"


def code_block(lines: str) -> str:
    """The Python that reproduces a panel, as a small labelled block."""
    return (f'<div class="icenb-muted" style="margin:2px 0">{h.esc(t("reproduce:"))}</div>'
            f'{h.pre(lines)}')


def spinner_html(what: str) -> str:
    """A waiting message (a CSS spinner: no script, no network)."""
    return h.document(
        '<div class="icenb-card"><span class="icenb-spin" style="display:inline-block;'
        'width:10px;height:10px;border:2px solid var(--icenb-border);border-top-color:'
        'var(--icenb-accent);border-radius:50%;animation:icenb-spin 0.8s linear infinite;'
        f'margin-right:6px"></span>{h.esc(what)}</div>'
        '<style>@keyframes icenb-spin{to{transform:rotate(360deg)}}</style>')


class Background:
    """One slow job at a time off the kernel's thread: the newest request wins.

    ``run(work, done, failed)`` starts ``work()`` in a worker thread; when it ends, ``done``
    (or ``failed`` with the exception) is called with its result unless a newer ``run`` or a
    ``cancel()`` came in meanwhile. ``wait()`` blocks until the newest job has delivered
    (for the programmatic surface and tests).
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="icenb-widget")
        self._generation = 0
        self._lock = threading.Lock()
        self._future: Future[None] | None = None

    @property
    def busy(self) -> bool:
        f = self._future
        return f is not None and not f.done()

    def run(self, work: Callable[[], T], done: Callable[[T], None],
            failed: Callable[[BaseException], None]) -> None:
        with self._lock:
            self._generation += 1
            mine = self._generation

        def job() -> None:
            try:
                result = work()
            except BaseException as e:  # shown in the widget, never raised into the kernel
                if self._current(mine):
                    failed(e)
                return
            if self._current(mine):
                try:
                    done(result)
                except BaseException as e:
                    failed(e)

        self._future = self._pool.submit(job)

    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation

    def cancel(self) -> None:
        """Drop the running job's result (its thread finishes; nothing is shown)."""
        with self._lock:
            self._generation += 1

    def wait(self, timeout: float | None = 600) -> None:
        f = self._future
        if f is not None:
            f.result(timeout=timeout)


@safe_repr
class StaticSnapshot:
    """Mixin: the widget's mimebundle also carries a deterministic ``text/plain`` and a static
    ``text/html`` of its current state (shown where no widget state was saved: nbval, GitHub,
    exported HTML, untrusted notebooks)."""

    def static_html(self) -> str:
        raise NotImplementedError

    def static_text(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data: dict[str, Any] = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        try:
            data["text/plain"] = self.static_text()
            data["text/html"] = h.document(self.static_html())
        except Exception as e:  # a snapshot never breaks the display of the live widget
            data["text/plain"] = (f"{type(self).__name__} ("
                                  + t("no static snapshot: {error}", error=e) + ")")
        return data


def utc(ms: int) -> str:
    """Epoch milliseconds as a UTC time to the millisecond (as the reprs print times)."""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def guarded(errors: ErrorBox, fn: Callable[[], object]) -> None:
    """Run a person's action: an error shows in ``errors``, never as a traceback."""
    try:
        errors.clear()
        fn()
    except Exception as e:
        errors.show(e)


class Confirm(w.HBox):  # type: ignore[misc]
    """"Do this?" with confirm / cancel: every change a widget commits is asked first, with
    the Python call that does the same. ``after`` runs once a confirmed action succeeded."""

    def __init__(self, errors: ErrorBox, after: Callable[[], object]) -> None:
        self.question = w.HTML()
        self.yes = w.Button(description=t("confirm"), button_style="danger",
                            layout=w.Layout(width="90px"))
        self.no = w.Button(description=t("cancel"), layout=w.Layout(width="80px"))
        super().__init__([self.question, self.yes, self.no], layout=w.Layout(display="none"))
        self._errors = errors
        self._after = after
        self._pending: Callable[[], object] | None = None
        self.yes.on_click(lambda _b: guarded(self._errors, self._confirmed))
        self.no.on_click(lambda _b: self.ask(None, ""))

    def ask(self, action: Callable[[], object] | None, question: str) -> None:
        self._pending = action
        self.question.value = h.document(h.esc(question))
        self.layout.display = "" if action is not None else "none"

    def _confirmed(self) -> None:
        action, self._pending = self._pending, None
        self.layout.display = "none"
        if action is not None:
            action()
            self._after()
