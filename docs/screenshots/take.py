"""Take PNG screenshots of a notebook as JupyterLab renders it, in the light and the dark theme.

Not a test and not run in CI: a tool for reviewing how the rich displays look. It needs
/usr/bin/chromium (Debian: ``apt-get install -y chromium``), the dev venv's JupyterLab and
websocket-client (a JupyterLab dependency); it talks to Chromium over the DevTools protocol.

    python docs/screenshots/take.py notebooks/05-seeing-a-table.ipynb \\
        [--out docs/screenshots] [--themes light,dark] [--cells 3,7]

The notebook is copied to a temporary directory and marked trusted there (``jupyter trust``), so
HTML outputs render unsanitized, as they do for the user who ran it. No kernel code runs: the
stored outputs are shown. Files written, for ``05-seeing-a-table.ipynb``: ``05-<theme>.png`` (the
whole notebook, up to --max-height CSS pixels) and, for each index N in --cells (0-based position
in the notebook's ``cells`` list), ``05-cell-N-<theme>.png``: that cell's output area.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import websocket

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script: the shared server code is in tests/browser/

from tests.browser.jupyter_lab import (  # noqa: E402
    CHROMIUM,
    JUPYTER,
    THEMES,
    JupyterLabError,
    jupyter_env,
    jupyter_lab,
    log_tail,
    stop_process,
    wait_http,
)

WIDTH = 1400  # CSS pixels of the browser window

# Selectors of JupyterLab 4's DOM: the notebook scrolls inside its "outer" element.
NOTEBOOK = ".jp-NotebookPanel .jp-Notebook"
SCROLLER = NOTEBOOK + " .jp-WindowedPanel-outer"
CELL = NOTEBOOK + " .jp-WindowedPanel-viewport > .jp-Cell"


class ScreenshotError(JupyterLabError):
    """A step of taking the screenshots failed (server, browser or page did not get ready)."""


# --------------------------------------------------------------------------- Chromium over CDP


class Browser:
    """One headless Chromium page driven through the DevTools protocol (JSON over a websocket)."""

    def __init__(self, ws: websocket.WebSocket) -> None:
        self._ws = ws
        self._ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result, skipping the events that arrive meanwhile."""
        msg_id = next(self._ids)
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self._ws.recv())
            if reply.get("id") != msg_id:
                continue
            if "error" in reply:
                raise ScreenshotError(f"{method}: {reply['error']}")
            result: dict[str, Any] = reply["result"]
            return result

    def eval(self, expression: str) -> Any:
        """Evaluate JavaScript in the page (awaiting promises) and return its JSON value."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise ScreenshotError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def viewport(self, height: int, scale: float) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=WIDTH,
            height=height,
            deviceScaleFactor=scale,
            mobile=False,
        )

    def png(self, path: Path, clip: dict[str, float] | None = None) -> int:
        """Save a PNG of the viewport (or of clip, in CSS pixels); return its size in bytes."""
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        path.write_bytes(data)
        return len(data)


@contextlib.contextmanager
def chromium(tmp: Path) -> Iterator[Browser]:
    """Start headless Chromium with a throw-away profile; yield a Browser on its first page."""
    if not CHROMIUM.exists():
        raise ScreenshotError(f"{CHROMIUM} missing: apt-get install -y chromium")
    profile = tmp / "chromium-profile"
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--disable-background-networking",  # no network here: no refused connections in the log
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        "--mute-audio",
        "--force-color-profile=srgb",
        "--font-render-hinting=none",
        f"--window-size={WIDTH},1000",
        "about:blank",
    ]
    if os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    log_path = tmp / "chromium.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    ws: websocket.WebSocket | None = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise ScreenshotError(f"Chromium did not start:{log_tail(log_path)}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        targets = json.loads(
            wait_http(f"http://127.0.0.1:{port}/json/list", proc, "Chromium", log_path)
        )
        page = next(t for t in targets if t["type"] == "page")
        ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], suppress_origin=True, timeout=120
        )
        browser = Browser(ws)
        browser.call("Page.enable")
        browser.call("Runtime.enable")
        yield browser
    finally:
        if ws is not None:
            ws.close()
        stop_process(proc, "Chromium")
        log.close()


# --------------------------------------------------------------------------- the page

_READY_JS = """(() => {
  const app = window.jupyterapp;
  const nb = document.querySelector(__NOTEBOOK__);
  if (!app || !nb || document.querySelector('.jp-Dialog')) return -1;
  const cells = document.querySelectorAll(__CELL__);
  const pending = nb.querySelectorAll('.jp-MarkdownCell:not(.jp-mod-rendered)').length;
  return pending ? -1 : cells.length;
})()"""


def _wait_rendered(browser: Browser, n_cells: int) -> None:
    """Wait until every cell is in the DOM and rendered, fonts loaded, and the height is stable."""
    js = _READY_JS.replace("__NOTEBOOK__", json.dumps(NOTEBOOK)).replace(
        "__CELL__", json.dumps(CELL)
    )
    deadline = time.monotonic() + 90
    while browser.eval(js) != n_cells:
        if time.monotonic() > deadline:
            raise ScreenshotError(f"the notebook did not render its {n_cells} cells in 90 s")
        time.sleep(0.25)
    browser.eval("document.fonts.ready.then(() => true)")
    last, stable = -1, 0
    while stable < 4 and time.monotonic() < deadline:  # unchanged for 4 polls (~1 s)
        height = browser.eval(f"document.querySelector({json.dumps(SCROLLER)}).scrollHeight")
        stable = stable + 1 if height == last else 0
        last = height
        time.sleep(0.25)


_TIDY_CSS = """
.jp-cell-toolbar, .jp-Notebook .jp-Collapser, .jp-InputArea-editor .cm-cursorLayer {
  display: none !important;
}
"""


def _tidy(browser: Browser) -> None:
    """Collapse the side panels, hide cell toolbars and selection marks, scroll to the top."""
    browser.eval(
        """(() => {
      const shell = window.jupyterapp.shell;
      shell.collapseLeft(); shell.collapseRight();
      if (!document.getElementById('icenb-shots-css')) {
        const style = document.createElement('style');
        style.id = 'icenb-shots-css';
        style.textContent = __CSS__;
        document.head.appendChild(style);
      }
      document.activeElement && document.activeElement.blur();
      document.querySelectorAll('.jp-mod-active, .jp-mod-selected').forEach(
        e => e.classList.remove('jp-mod-active', 'jp-mod-selected'));
      document.querySelectorAll(__SCROLLER__).forEach(e => { e.scrollTop = 0; });
      return true;
    })()""".replace("__CSS__", json.dumps(_TIDY_CSS)).replace("__SCROLLER__", json.dumps(SCROLLER))
    )


def _untrusted_cells(browser: Browser) -> list[int]:
    """Indices of code cells with outputs that JupyterLab treats as untrusted (sanitized)."""
    value = browser.eval("""(() => {
      const panel = Array.from(window.jupyterapp.shell.widgets('main'))
        .find(w => w.content && w.content.model && w.content.model.cells);
      const cells = panel.content.model.cells;
      const bad = [];
      for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type === 'code' && c.outputs.length && !c.trusted) bad.push(i);
      }
      return bad;
    })()""")
    return [int(i) for i in value]


def _notebook_height(browser: Browser) -> int:
    """CSS height the window needs to show the whole notebook (chrome above it included)."""
    value = browser.eval(f"""(() => {{
      const box = document.querySelector({json.dumps(SCROLLER)});
      const top = box.getBoundingClientRect().top;
      const below = window.innerHeight - box.getBoundingClientRect().bottom;
      return Math.ceil(top + box.scrollHeight + below);
    }})()""")
    return int(value)


def _cell_box(browser: Browser, index: int, scroll: bool) -> dict[str, float] | None:
    """Bounding box (CSS pixels) of a cell's output area, or of the cell if it has no output."""
    value = browser.eval(f"""(() => {{
      const cell = document.querySelectorAll({json.dumps(CELL)})[{index}];
      if (!cell) return null;
      const out = cell.querySelector('.jp-Cell-outputWrapper');
      const el = out && out.getBoundingClientRect().height > 1 ? out : cell;
      if ({json.dumps(scroll)}) el.scrollIntoView({{block: 'start'}});
      const r = el.getBoundingClientRect();
      // Right edge of what is drawn (text, graphics, boxes with a border or background), so a
      // narrow card is not shot with the empty width of the notebook beside it.
      let right = r.left + 80;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {{
        let box = null;
        if (n.nodeType === Node.TEXT_NODE) {{
          if (!n.textContent.trim()) continue;
          const range = document.createRange();
          range.selectNodeContents(n);
          box = range.getBoundingClientRect();
        }} else {{
          const cs = getComputedStyle(n);
          const drawn = ['svg', 'img', 'canvas', 'table'].includes(n.localName)
            || parseFloat(cs.borderRightWidth) > 0 || cs.backgroundColor !== 'rgba(0, 0, 0, 0)';
          const whole = n.classList.contains('jp-OutputArea-output');
          if (drawn && !whole) box = n.getBoundingClientRect();
        }}
        if (box && box.width > 0) right = Math.max(right, box.right);
      }}
      right = Math.min(r.right, right + 16);
      // whole pixels inside the box, and not its top row: no trace of the input above
      const x = Math.ceil(r.left), y = Math.ceil(r.top) + 1;
      return {{x, y, width: Math.floor(right) - x, height: Math.floor(r.bottom) - y}};
    }})()""")
    if value is None:
        return None
    return {k: float(v) for k, v in value.items()}


@dataclass
class Options:
    """What to shoot: see main() for the command line."""

    notebook: Path
    out: Path
    themes: list[str]
    cells: list[int]
    max_height: int
    scale: float
    cell_scale: float


def _shoot_theme(
    browser: Browser, url: str, n_cells: int, opts: Options, theme: str, prefix: str
) -> list[Path]:
    """Open the notebook in a JupyterLab already set to theme; save its PNGs."""
    written: list[Path] = []
    browser.viewport(1000, opts.scale)
    browser.call("Page.navigate", url=url)
    _wait_rendered(browser, n_cells)
    untrusted = _untrusted_cells(browser)
    if untrusted:
        raise ScreenshotError(f"cells {untrusted} are untrusted: their HTML would be sanitized")
    _tidy(browser)
    height = min(_notebook_height(browser), opts.max_height)
    browser.viewport(height, opts.scale)
    _wait_rendered(browser, n_cells)
    _tidy(browser)
    path = opts.out / f"{prefix}-{theme}.png"
    size = browser.png(path)
    written.append(path)
    print(f"{path}  {WIDTH}x{height} CSS px at x{opts.scale:g}  {size / 1e6:.2f} MB")
    for index in opts.cells:
        box = _cell_box(browser, index, scroll=False)
        if box is None:
            raise ScreenshotError(f"cell {index} not found in the page")
        browser.viewport(max(1000, int(box["height"]) + 200), opts.cell_scale)
        _wait_rendered(browser, n_cells)
        _tidy(browser)
        _cell_box(browser, index, scroll=True)
        time.sleep(0.3)
        box = _cell_box(browser, index, scroll=False) or box
        path = opts.out / f"{prefix}-cell-{index}-{theme}.png"
        size = browser.png(path, box)
        written.append(path)
        print(
            f"{path}  {box['width']:.0f}x{box['height']:.0f} CSS px at x{opts.cell_scale:g}  "
            f"{size / 1e6:.2f} MB"
        )
    return written


def shoot(opts: Options) -> list[Path]:
    """Take every screenshot asked for, one JupyterLab server per theme; return the PNGs."""
    nb_json = json.loads(opts.notebook.read_text(encoding="utf-8"))
    n_cells = len(nb_json["cells"])
    bad = [i for i in opts.cells if not 0 <= i < n_cells]
    if bad:
        raise ScreenshotError(f"--cells {bad}: the notebook has cells 0..{n_cells - 1}")
    prefix = opts.notebook.name.split("-", 1)[0]
    opts.out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="icenb-shots-") as tmp_name:
        tmp = Path(tmp_name)
        workdir = tmp / "work"
        workdir.mkdir()
        copy = workdir / opts.notebook.name
        shutil.copyfile(opts.notebook, copy)
        subprocess.run(
            [str(JUPYTER), "trust", str(copy)],
            env=jupyter_env(tmp),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with chromium(tmp) as browser:
            for theme in opts.themes:
                with jupyter_lab(workdir, tmp, theme) as server:
                    page = server.url(copy.name)
                    written += _shoot_theme(browser, page, n_cells, opts, theme, prefix)
    return written


def _int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument(
        "--themes", default="light,dark", help="comma-separated, of: " + ", ".join(THEMES)
    )
    parser.add_argument(
        "--cells",
        type=_int_list,
        default=[],
        help="0-based indices into the notebook's cells, e.g. 3,7",
    )
    parser.add_argument(
        "--max-height",
        type=int,
        default=9000,
        help="cap, in CSS pixels, of the whole-notebook screenshot",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="device scale factor of the whole-notebook screenshot",
    )
    parser.add_argument(
        "--cell-scale",
        type=float,
        default=2.0,
        help="device scale factor of the per-cell screenshots",
    )
    args = parser.parse_args(argv)
    themes = [t.strip() for t in args.themes.split(",") if t.strip()]
    unknown = [t for t in themes if t not in THEMES]
    if unknown:
        parser.error(f"unknown theme(s) {unknown}; known: {', '.join(THEMES)}")
    opts = Options(
        args.notebook.resolve(),
        args.out.resolve(),
        themes,
        args.cells,
        args.max_height,
        args.scale,
        args.cell_scale,
    )
    started = time.monotonic()
    try:
        shoot(opts)
    except JupyterLabError as exc:  # ScreenshotError included
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"done in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
