"""icenb.progress: where progress shows, when, and what it draws (fake clock, stream, display)."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

import icenb
from icenb import progress as progress_module
from icenb.errors import ValidationError
from icenb.options import reset_options
from icenb.progress import (
    APPENDING,
    LABELS,
    READING_MANIFESTS,
    SHOW_AFTER_SECONDS,
    WRITING_ROWS,
    current_mode,
    progress,
)


class FakeStream(io.StringIO):
    """A stderr that is (or is not) a terminal."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeHandle:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def update(self, bundle: dict[str, str], *, raw: bool = False) -> None:
        assert raw
        self.log.append(("update", dict(bundle)))


class FakeDisplay:
    """IPython's ``display`` as the notebook form calls it."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def __call__(self, *objs: Any, display_id: bool = False, **kwargs: Any) -> FakeHandle:
        self.log.append(("display", objs, display_id))
        return FakeHandle(self.log)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeClock]:
    """A fake clock, no ticker thread, no kernel, no ``$ICENB_PROGRESS``, default options."""
    fake = FakeClock()
    monkeypatch.setattr(progress_module, "_clock", fake)
    monkeypatch.setattr(progress_module, "_THREADED", False)
    monkeypatch.setattr(progress_module, "_in_kernel", lambda: False)
    monkeypatch.delenv(progress_module.ENV_VAR, raising=False)
    with reset_options():
        yield fake


def stderr(monkeypatch: pytest.MonkeyPatch, tty: bool) -> FakeStream:
    stream = FakeStream(tty)
    monkeypatch.setattr(sys, "stderr", stream)
    return stream


def work(clock: FakeClock, seconds: float, steps: int = 4) -> None:
    """``steps`` steps spread over ``seconds`` of the fake clock."""
    with progress(READING_MANIFESTS, total=steps) as p:
        for _ in range(steps):
            clock.now += seconds / steps
            p.advance()


def test_long_work_on_a_terminal_draws_one_line_and_clears_it(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    work(clock, 2.0)
    text = out.getvalue()
    assert "\n" not in text
    assert text.startswith("\rReading manifests 2/4  1.0 s [##########..........]")
    assert "Reading manifests 3/4  1.5 s" in text
    assert text.endswith("\r")
    assert text.rsplit("\r", 2)[-2].strip() == ""  # the line is blanked at the end


def test_short_work_draws_nothing(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    work(clock, SHOW_AFTER_SECONDS * 0.9, steps=20)
    assert out.getvalue() == ""


def test_redraws_are_spaced(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    with progress(READING_MANIFESTS, total=1000) as p:
        clock.now += 1.0
        for _ in range(1000):  # 1,000 steps within 0.05 s: drawn once
            clock.now += 0.00005
            p.advance()
    assert out.getvalue().count("Reading manifests") == 1


def test_never_draws_nothing(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    with icenb.set_options(progress="never"):
        work(clock, 5.0)
    assert out.getvalue() == ""


def test_auto_draws_nothing_where_stderr_is_not_a_terminal(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=False)
    work(clock, 5.0)
    assert out.getvalue() == ""


def test_always_writes_plain_lines_where_stderr_is_not_a_terminal(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=False)
    with icenb.set_options(progress="always"):
        work(clock, 2.0)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    # the first line after the delay, none within the next 10 s, and the final state
    assert lines == ["Reading manifests 2/4  1.0 s [##########..........]",
                     "Reading manifests 4/4  2.0 s"]


def test_the_environment_variable_sets_the_auto_mode(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=False)
    monkeypatch.setenv(progress_module.ENV_VAR, "always")
    assert current_mode() == "always"
    work(clock, 2.0)
    assert "Reading manifests" in out.getvalue()
    monkeypatch.setenv(progress_module.ENV_VAR, "never")
    with icenb.set_options(progress="always"):  # an explicit option wins
        assert current_mode() == "always"
    assert current_mode() == "never"
    monkeypatch.setenv(progress_module.ENV_VAR, "sometimes")  # not a mode: ignored
    assert current_mode() == "auto"


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValidationError, match="progress must be one of"):
        icenb.set_options(progress="loud")


def test_tasks_inside_one_another_share_one_line(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    with progress(APPENDING) as outer:
        clock.now += 0.6
        work(clock, 0.8, steps=2)  # each part alone is short; together they show
        with progress(WRITING_ROWS, total=2) as inner:
            clock.now += 0.5
            inner.advance()
        outer.advance()
    text = out.getvalue()
    assert "Appending rows > Reading manifests 2/2  1.4 s" in text
    assert "Appending rows > Writing rows 1/2  1.9 s" in text
    assert text.endswith("\r")


def test_hidden_progress_only_counts(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    stderr(monkeypatch, tty=False)
    with progress(READING_MANIFESTS, total=3) as p:
        p.advance(2)
        assert p._bar is None
        assert progress_module._active is None
    assert p.done == 2


def test_the_notebook_form_updates_one_output_that_starts_and_ends_empty(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    display = FakeDisplay()
    monkeypatch.setattr(progress_module, "_in_kernel", lambda: True)
    monkeypatch.setattr(progress_module, "_ipython_display", lambda: display)
    work(clock, 2.0)
    assert out.getvalue() == ""  # not on stderr
    assert display.log[0] == ("display", (), True)  # an empty output, filled by updates
    updates = [bundle for kind, bundle in display.log[1:]]
    assert all(kind == "update" for kind, _ in display.log[1:])
    first = updates[0]
    assert first["text/plain"] == "Reading manifests 2/4  1.0 s"
    assert '<progress value="50.0" max="100"></progress>' in first["text/html"]
    assert "<script" not in first["text/html"] and "http" not in first["text/html"]
    assert updates[-1] == {}  # emptied at the end: no trace in a saved notebook


def test_the_notebook_form_without_a_total_is_indeterminate(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    display = FakeDisplay()
    monkeypatch.setattr(progress_module, "_in_kernel", lambda: True)
    monkeypatch.setattr(progress_module, "_ipython_display", lambda: display)
    with progress(APPENDING) as p:
        clock.now += 1.5
        p.advance()
    bundle = display.log[1][1]
    assert "<progress></progress>" in bundle["text/html"]
    assert bundle["text/plain"] == "Appending rows 1  1.5 s"


def test_a_kernel_without_ipython_display_falls_back_to_the_stream(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    monkeypatch.setattr(progress_module, "_in_kernel", lambda: True)
    monkeypatch.setattr(progress_module, "_ipython_display", lambda: None)
    work(clock, 2.0)
    assert "Reading manifests" in out.getvalue()


def test_outside_a_kernel_nothing_is_imported_from_ipython(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real kernel check
    monkeypatch.setattr(progress_module, "_clock", clock)
    monkeypatch.setattr(progress_module, "_THREADED", False)
    monkeypatch.setitem(sys.modules, "IPython", None)  # not importable
    stderr(monkeypatch, tty=False)
    assert progress_module._in_kernel() is False
    work(clock, 2.0)


def test_a_failing_display_never_fails_the_work(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no frontend")

    monkeypatch.setattr(progress_module, "_in_kernel", lambda: True)
    monkeypatch.setattr(progress_module, "_ipython_display", lambda: broken)
    with progress(READING_MANIFESTS, total=4) as p:
        for _ in range(4):
            clock.now += 1.0
            p.advance()
    assert p.done == 4
    assert progress_module._active is None


def test_an_interrupt_clears_the_line_and_propagates(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    with pytest.raises(KeyboardInterrupt), progress(READING_MANIFESTS, total=4) as p:
        clock.now += 1.5
        p.advance()
        raise KeyboardInterrupt
    assert "Reading manifests 1/4" in out.getvalue()
    assert out.getvalue().endswith("\r")
    assert progress_module._active is None


def test_the_ticker_draws_while_a_step_takes_long(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    monkeypatch.setattr(progress_module, "_THREADED", True)
    with progress(READING_MANIFESTS, total=4):
        clock.now += 1.5  # no step comes: the ticker thread draws
        deadline = time.monotonic() + 10
        while "Reading manifests 0/4" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "Reading manifests 0/4  1.5 s" in out.getvalue()


def test_labels_are_short_constants() -> None:
    assert len(set(LABELS)) == len(LABELS)
    for label in LABELS:
        assert label == label.strip() and 0 < len(label) <= 30
        assert "{" not in label and "%" not in label
    names = [n for n in dir(progress_module) if n.isupper() and
             isinstance(getattr(progress_module, n), str) and n not in ("ENV_VAR",)]
    assert {getattr(progress_module, n) for n in names} == set(LABELS)


def test_a_task_entered_twice_nests_the_second_time(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stderr(monkeypatch, tty=True)
    task = progress(READING_MANIFESTS, total=2)
    with task:
        clock.now += 0.5
    with progress(APPENDING):
        with task:  # now inside another task: leaving it keeps the outer one's display
            clock.now += 1.0
            task.advance()
        assert progress_module._active is not None
    assert progress_module._active is None
    assert "Appending rows > Reading manifests 1/2" in out.getvalue()
