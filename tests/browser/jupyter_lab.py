"""Start a throw-away JupyterLab server from the project's .venv, for browsers to drive.

Shared by the browser tests (tests/browser/conftest.py) and the screenshot tool
(docs/screenshots/take.py). The server runs ``.venv/bin/jupyter lab`` (the widget
labextensions must be in the *server's* environment) with every Jupyter directory isolated in a
temporary directory, a random token, a free port, ``--allow-root`` when run as root,
``window.jupyterapp`` exposed, news and update checks off, and notebook windowing off (so every
cell is in the DOM). Its kernel is the venv's ``python3`` kernelspec: notebooks must name it in
their metadata (:data:`KERNELSPEC`), or JupyterLab asks "Select Kernel" and nothing runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv"
JUPYTER = VENV / "bin" / "jupyter"
CHROMIUM = Path("/usr/bin/chromium")
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

# Notebook metadata naming the kernel the server finds in the venv (share/jupyter/kernels/python3,
# installed by ipykernel; jupyter_client runs its "python" as the server's own interpreter).
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

# Chromium flags for this machine: root in a container (no sandbox), no GPU, and no network
# (without the background-networking flags Chromium floods the log with refused connections).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class JupyterLabError(RuntimeError):
    """The server (or a browser started beside it) did not start or answer."""


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab: where it listens, its token, the directory it serves."""

    base_url: str
    token: str
    root_dir: Path
    log_path: Path

    def url(self, path: str) -> str:
        """The JupyterLab URL opening path (relative to root_dir), token included."""
        return f"{self.base_url}/lab/tree/{urllib.parse.quote(path)}?token={self.token}"

    def api(self, path: str, method: str = "GET") -> Any:
        """Call the server's REST API (e.g. ``kernelspecs``); return the decoded JSON or None."""
        req = urllib.request.Request(
            f"{self.base_url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log."""
        return log_tail(self.log_path, lines)


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def stop_process(proc: subprocess.Popen[bytes], name: str) -> None:
    """Terminate a process group started by this module, then kill it if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, 15)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        print(f"{name} did not stop in 15 s: killing it", file=sys.stderr)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait(timeout=5)


def jupyter_env(tmp: Path) -> dict[str, str]:
    """Environment isolating Jupyter's data/config/runtime from the user's (trust db included)."""
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("IPYTHONDIR", "ipython"),
    ):
        env[var] = str(tmp / sub)
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    for var in ("JUPYTER_TOKEN", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTERLAB_DIR"):
        env.pop(var, None)
    env["JUPYTER_PREFER_ENV_PATH"] = "1"  # the venv's kernels and extensions before any user's
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # no debugger warning in every kernel's stderr
    return env


def write_settings(settings_dir: Path, theme: str) -> None:
    """User settings: the theme, no windowing (every cell rendered), no news/update toasts."""
    settings = {
        "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": THEMES[theme]},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "windowingMode": "none",
            "scrollPastEnd": False,
        },
    }
    for rel, value in settings.items():
        path = settings_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")


def log_tail(log: Path, lines: int = 15) -> str:
    """The last lines of a log, indented under the message that quotes them."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return "\n  ".join(["", *text.splitlines()[-lines:]])


def wait_http(
    url: str, proc: subprocess.Popen[bytes], name: str, log: Path, timeout: float = 60
) -> bytes:
    """GET url until it answers (return its body); fail if proc exits or timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise JupyterLabError(f"{name} exited with {proc.returncode}:{log_tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                body: bytes = resp.read()
                return body
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    raise JupyterLabError(f"{name} did not answer {url} in {timeout:g} s:{log_tail(log)}")


@contextlib.contextmanager
def jupyter_lab(workdir: Path, tmp: Path, theme: str = "light") -> Iterator[LabServer]:
    """Run ``jupyter lab`` headless on workdir, starting in the given theme; yield the server.

    tmp holds the isolated Jupyter directories, the user settings and the server's log.
    """
    if not JUPYTER.exists():
        raise JupyterLabError(f"{JUPYTER} missing: run `make test` (or `make lab`) to set up .venv")
    env = jupyter_env(tmp)
    settings_dir = tmp / f"settings-{theme}"
    write_settings(settings_dir, theme)
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings_dir)
    port = free_port()
    token = secrets.token_hex(16)
    log_path = tmp / f"jupyter-{theme}.log"
    log = log_path.open("wb")
    cmd = [
        str(JUPYTER),
        "lab",
        "--no-browser",
        f"--ServerApp.port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={workdir}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")  # the server refuses root otherwise (containers, CI images)
    proc = subprocess.Popen(
        cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/api/status?token={token}", proc, "jupyter lab", log_path)
        yield LabServer(base, token, workdir, log_path)
    finally:
        stop_process(proc, "jupyter lab")
        log.close()
