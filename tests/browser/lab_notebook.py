"""A notebook open in JupyterLab in a Playwright page: run it, read the kernel, check errors."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.browser.jupyter_lab import KERNELSPEC, THEMES, LabServer

# What ipywidgets' JupyterLab manager shows instead of a widget it could not display.
WIDGET_ERRORS = ("Error displaying widget", "Click to show javascript error")
WIDGET_LOADING = "Loading widget..."

# Console errors that say nothing about the widgets: none known so far.
BENIGN_CONSOLE: tuple[re.Pattern[str], ...] = ()

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# JavaScript: the notebook panel open on a path (``P(path)``), defined in every evaluate.
_PANEL = """const P = (path) => Array.from(window.jupyterapp.shell.widgets('main'))
  .find(w => w.context && w.context.path === path && w.content && w.content.model);"""

_OPEN_STATE_JS = (
    "(path) => {"
    + _PANEL
    + """
  if (!window.jupyterapp) return {ready: false, dialog: null};
  const dialog = document.querySelector('.jp-Dialog');
  const panel = P(path);
  const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {
    ready: !!(panel && panel.context.isReady && kernel),
    dialog: dialog ? dialog.innerText : null,
  };
}"""
)

_RUN_STATE_JS = (
    "(path) => {"
    + _PANEL
    + """
  const panel = P(path);
  const cells = panel.content.model.cells;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const state = {done: 0, total: 0, errors: [], status: kernel ? kernel.status : 'none'};
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    state.total++;
    for (const o of c.outputs.toJSON()) {
      if (o.output_type === 'error') {
        state.errors.push(`cell ${i}: ${o.ename}: ${o.evalue}\\n${o.traceback.join('\\n')}`);
      }
    }
    if (c.executionCount !== null && c.executionState !== 'running') state.done++;
  }
  const dialog = document.querySelector('.jp-Dialog');
  state.dialog = dialog ? dialog.innerText : null;
  return state;
}"""
)

_EXECUTE_JS = (
    "async ([path, code]) => {"
    + _PANEL
    + """
  const kernel = P(path).sessionContext.session.kernel;
  const future = kernel.requestExecute({code, store_history: false, stop_on_error: true});
  let out = '', error = null;
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type, c = msg.content;
    if (t === 'stream') out += c.text;
    else if (t === 'execute_result') out += c.data['text/plain'] + '\\n';
    else if (t === 'error') error = `${c.ename}: ${c.evalue}\\n${c.traceback.join('\\n')}`;
  };
  await future.done;
  return {out, error};
}"""
)

_THEME_JS = """async (name) => {
  await window.jupyterapp.commands.execute('apputils:change-theme', {theme: name});
  return true;
}"""

_THEME_READY_JS = """([name, light]) => document.body.dataset.jpThemeName === name
  && document.body.dataset.jpThemeLight === String(light)
  && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim() !== ''
  && !document.querySelector('.jp-Dialog')
  && !document.getElementById('jupyterlab-splash')"""


def write_notebook(path: Path, cells: list[str]) -> None:
    """Write a notebook of code cells (nbformat 4.5) naming the server's python3 kernel."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": KERNELSPEC,
            "language_info": {"name": "python"},
        },
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source.strip("\n"),
            }
            for i, source in enumerate(cells)
        ],
    }
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


class LabNotebook:
    """One notebook open in its own browser page, and the errors that page reported."""

    def __init__(self, page: Page, server: LabServer, path: str) -> None:
        self.page = page
        self.server = server
        self.path = path
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []
        page.on("pageerror", lambda exc: self.page_errors.append(f"{exc}\n{exc.stack}"))
        page.on("console", self._on_console)

    def _on_console(self, msg: ConsoleMessage) -> None:
        if msg.type != "error":
            return
        text = msg.text
        if any(p.search(text) for p in BENIGN_CONSOLE):
            return
        loc = msg.location
        self.console_errors.append(f"{text} ({loc.get('url', '')}:{loc.get('lineNumber', '')})")

    def _fail(self, message: str) -> None:
        pytest.fail(f"{self.path}: {message}\nserver log:{self.server.log_tail()}", pytrace=False)

    def open(self, timeout: float = 60) -> None:
        """Load JupyterLab on the notebook and wait for its kernel session."""
        self.page.goto(self.server.url(self.path))
        deadline = time.monotonic() + timeout
        while True:
            state = self.page.evaluate(_OPEN_STATE_JS, self.path)
            if state["dialog"]:
                self._fail(f"a dialog opened instead of the notebook: {state['dialog']!r}")
            if state["ready"]:
                break
            if time.monotonic() > deadline:
                self._fail(f"JupyterLab did not open the notebook with a kernel in {timeout:g} s")
            time.sleep(0.1)

    def run_all(self, timeout: float = 120) -> None:
        """Run every cell (not awaiting the command) and wait until all ran; fail on an error."""
        self.page.evaluate(
            "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return 1; }"
        )
        deadline = time.monotonic() + timeout
        while True:
            state = self.page.evaluate(_RUN_STATE_JS, self.path)
            if state["errors"]:
                self._fail("a cell raised:\n" + _ANSI.sub("", "\n".join(state["errors"])))
            if state["dialog"]:
                self._fail(f"a dialog opened while running: {state['dialog']!r}")
            if state["done"] == state["total"] and state["status"] == "idle":
                return
            if time.monotonic() > deadline:
                self._fail(f"cells did not finish in {timeout:g} s: {state}")
            time.sleep(0.1)

    def wait_widgets(self, timeout: float = 30) -> None:
        """Wait until no widget output still shows "Loading widget..." (its view rendered)."""
        try:
            self.page.wait_for_function(
                "(text) => !document.body.innerText.includes(text)",
                arg=WIDGET_LOADING,
                timeout=timeout * 1000,
            )
        except PlaywrightTimeoutError:
            self._fail(f"a widget still shows {WIDGET_LOADING!r} after {timeout:g} s")

    def execute(self, code: str) -> str:
        """Run code in the notebook's kernel (no cell); return its printed output."""
        result: dict[str, Any] = self.page.evaluate(_EXECUTE_JS, [self.path, code])
        if result["error"]:
            pytest.fail(f"kernel code failed:\n{code}\n{_ANSI.sub('', result['error'])}")
        out: str = result["out"]
        return out

    def set_theme(self, theme: str) -> None:
        """Switch JupyterLab to the light or dark theme and wait until it applies.

        The switch shows JupyterLab's splash screen, which is removed 200 ms after it fades:
        waiting for that avoids a page error of JupyterLab's when themes change faster.
        """
        name = THEMES[theme]
        current = self.page.evaluate("() => document.body.dataset.jpThemeName")
        if current != name:
            self.page.evaluate(_THEME_JS, name)
        self.page.wait_for_function(_THEME_READY_JS, arg=[name, theme == "light"], timeout=30_000)

    def problems(self) -> list[str]:
        """Page errors, console errors, and widgets that failed to display, so far."""
        found = [f"page error: {e}" for e in self.page_errors]
        found += [f"console error: {e}" for e in self.console_errors]
        text: str = self.page.evaluate("() => document.body.innerText")
        found += [
            f"widget output: {line.strip()}"
            for line in text.splitlines()
            if any(error in line for error in WIDGET_ERRORS)
        ]
        return found

    def assert_healthy(self) -> None:
        """Fail if the page reported an error or a widget could not be displayed."""
        found = self.problems()
        if found:
            pytest.fail(f"{self.path}:\n  " + "\n  ".join(found), pytrace=False)

    def screenshot(self, path: Path, selector: str | None = None) -> Path:
        """Save a PNG of the page, or of the first element matching selector."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if selector is None:
            self.page.screenshot(path=str(path))
            return path
        # The notebook scrolls inside JupyterLab's fixed-height layout: make the window tall
        # enough for the whole element, shoot it, and restore the window.
        element = self.page.locator(selector).first
        before = self.page.viewport_size
        box = element.bounding_box()
        if before is not None and box is not None and box["height"] > before["height"] - 200:
            height = min(int(box["height"]) + 400, 6000)
            self.page.set_viewport_size({"width": before["width"], "height": height})
        try:
            element.scroll_into_view_if_needed()
            element.screenshot(path=str(path), animations="disabled")
        finally:
            if before is not None:
                self.page.set_viewport_size(before)
        return path

    def close(self) -> None:
        """Shut the notebook's kernel down and close its page."""
        if self.page.is_closed():
            return
        try:
            self.page.evaluate(
                "async (path) => {" + _PANEL + " const p = P(path);"
                " if (p) await p.sessionContext.shutdown(); return 1; }",
                self.path,
            )
        finally:
            self.page.context.close()
