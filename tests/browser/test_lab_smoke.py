"""The browser-test machinery works: JupyterLab runs the venv's kernel and widgets talk to Python.

An ipywidgets Button whose Python ``on_click`` handler changes a Label, and a minimal anywidget
whose front end changes a trait that a Python observer answers, clicked in a real Chromium page,
in the light and the dark theme.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import OpenNotebook
from tests.browser.jupyter_lab import VENV
from tests.browser.lab_notebook import LabNotebook

CELLS = [
    """
import sys

import anywidget
import ipywidgets as w
import traitlets

print(sys.executable)
""",
    """
label = w.Label("clicks: 0")
label.add_class("smoke-label")
button = w.Button(description="Go")
button.add_class("smoke-button")
clicks = 0


def on_click(_button):
    global clicks
    clicks += 1
    label.value = f"clicks: {clicks}"


button.on_click(on_click)
w.VBox([button, label])
""",
    '''
class Echo(anywidget.AnyWidget):
    """The front end counts clicks in `value`; Python answers in `echoed`."""

    _esm = """
    function render({ model, el }) {
      const button = document.createElement("button");
      button.className = "smoke-any";
      const show = () => {
        button.textContent = `value ${model.get("value")}; ${model.get("echoed")}`;
      };
      button.addEventListener("click", () => {
        model.set("value", model.get("value") + 1);
        model.save_changes();
      });
      model.on("change", show);
      show();
      el.appendChild(button);
    }
    export default { render };
    """
    value = traitlets.Int(0).tag(sync=True)
    echoed = traitlets.Unicode("python has not answered").tag(sync=True)

    @traitlets.observe("value")
    def _answer(self, change):
        self.echoed = f"python saw {change['new']}"


echo = Echo()
echo
''',
]

THEMES = ["light", "dark"]


@pytest.fixture(scope="module")
def smoke(open_notebook: OpenNotebook) -> Iterator[LabNotebook]:
    yield open_notebook("smoke.ipynb", CELLS)


def test_kernel_runs_the_project_venv(smoke: LabNotebook) -> None:
    executable = smoke.execute("import sys; print(sys.executable)").strip()
    assert executable.startswith(str(VENV)), executable


@pytest.mark.parametrize("theme", THEMES)
def test_widgets_render(smoke: LabNotebook, theme: str) -> None:
    smoke.set_theme(theme)
    expect(smoke.page.locator(".smoke-button")).to_be_visible()
    expect(smoke.page.locator(".smoke-label")).to_have_text(re.compile(r"clicks: \d+"))
    expect(smoke.page.locator(".smoke-any")).to_be_visible()
    smoke.assert_healthy()


@pytest.mark.parametrize("theme", THEMES)
def test_button_click_reaches_python(smoke: LabNotebook, theme: str) -> None:
    smoke.set_theme(theme)
    before = int(smoke.execute("print(clicks)"))
    smoke.page.locator(".smoke-button").click()
    expect(smoke.page.locator(".smoke-label")).to_have_text(f"clicks: {before + 1}")
    assert int(smoke.execute("print(clicks)")) == before + 1
    smoke.assert_healthy()


@pytest.mark.parametrize("theme", THEMES)
def test_anywidget_click_reaches_python(smoke: LabNotebook, theme: str) -> None:
    smoke.set_theme(theme)
    before = int(smoke.execute("print(echo.value)"))
    smoke.page.locator(".smoke-any").click()
    expect(smoke.page.locator(".smoke-any")).to_have_text(
        f"value {before + 1}; python saw {before + 1}"
    )
    smoke.assert_healthy()
