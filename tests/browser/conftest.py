"""Fixtures of the browser tests: one JupyterLab server, one Chromium, notebooks opened in it.

The server (tests/browser/jupyter_lab.py) and the browser live for the whole session; a test
module opens its notebook once (``open_notebook``), runs it, and its tests click in it, switching
the theme with JupyterLab's own command instead of restarting anything. Playwright drives
Debian's Chromium through ``executable_path``: the ``playwright`` wheel brings only its driver,
and ``playwright install`` cannot download browsers here. Timings of the server start, the
notebooks and every test are printed at the end of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, ViewportSize, sync_playwright

from tests.browser.jupyter_lab import (
    CHROMIUM,
    CHROMIUM_ARGS,
    KERNELSPEC,
    JupyterLabError,
    LabServer,
    jupyter_lab,
)
from tests.browser.lab_notebook import LabNotebook, write_notebook

VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}

# Seconds of each phase, printed by pytest_terminal_summary.
TIMINGS: list[tuple[str, float]] = []


def record_timing(what: str, started: float) -> float:
    """Note how long ``what`` took since ``started`` (time.monotonic()); return the seconds."""
    seconds = time.monotonic() - started
    TIMINGS.append((what, seconds))
    return seconds


OpenNotebook = Callable[[str, list[str]], LabNotebook]


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """One JupyterLab for the whole session, serving a temporary directory, light theme first."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    workdir = tmp / "work"
    workdir.mkdir()
    started = time.monotonic()
    try:
        with jupyter_lab(workdir, tmp, "light") as server:
            record_timing("jupyter lab: server answering", started)
            specs = server.api("kernelspecs")["kernelspecs"]
            if KERNELSPEC["name"] not in specs:
                pytest.fail(
                    f"the server finds no {KERNELSPEC['name']!r} kernel (it has {sorted(specs)}):"
                    " is ipykernel installed in .venv?",
                    pytrace=False,
                )
            yield server
    except JupyterLabError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's headless Chromium under Playwright; a missing Chromium fails, never skips."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests drive Debian's Chromium"
            " (`apt-get install -y chromium`; `make test` installs it when run as root)."
            " Playwright's own browsers are not used: never `playwright install`.",
            pytrace=False,
        )
    started = time.monotonic()
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        record_timing("chromium: launched", started)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def open_notebook(browser: Browser, lab_server: LabServer) -> Iterator[OpenNotebook]:
    """Write a notebook of the given code cells, open it in a new page, run it all.

    Returns once every cell ran without error and every widget output left "Loading widget...".

    The notebooks stay open (a module keeps its own in a fixture) until the session ends.
    """
    opened: list[LabNotebook] = []

    def open_(name: str, cells: list[str]) -> LabNotebook:
        write_notebook(lab_server.root_dir / name, cells)
        started = time.monotonic()
        context = browser.new_context(viewport=VIEWPORT)
        notebook = LabNotebook(context.new_page(), lab_server, name)
        opened.append(notebook)
        notebook.open()
        record_timing(f"{name}: JupyterLab loaded, kernel started", started)
        notebook.run_all()
        notebook.wait_widgets()
        record_timing(f"{name}: opened and all cells run", started)
        return notebook

    yield open_
    for notebook in opened:
        notebook.close()


# --------------------------------------------------------------------------- timings report

_TEST_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "tests/browser/" in report.nodeid:
        _TEST_SECONDS[report.nodeid] = _TEST_SECONDS.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS and not _TEST_SECONDS:
        return
    terminalreporter.section("browser tests: timings (s)")
    for what, seconds in TIMINGS:
        terminalreporter.write_line(f"{seconds:7.2f}  {what}")
    for nodeid, seconds in _TEST_SECONDS.items():
        terminalreporter.write_line(f"{seconds:7.2f}  {nodeid} (setup + call + teardown)")
    total = sum(_TEST_SECONDS.values())
    terminalreporter.write_line(f"{total:7.2f}  all browser tests")
