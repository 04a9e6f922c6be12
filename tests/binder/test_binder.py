"""Binder (issue 19): ``binder/postBuild``'s steps in a fresh virtual environment - installing
icenb with its ``lab`` extra from a copy of the checkout, building the demo warehouse, writing
JupyterLab's settings overrides - then the tour executed there by that environment's Jupyter,
top to bottom, without an error. mybinder's image adds Java and graphviz (``binder/apt.txt``)
and Python 3.11 (``runtime.txt``); the tour needs neither Java nor Spark."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _checkout_copy(dest: Path) -> None:
    """The files of the checkout (what mybinder clones; uncommitted ones too), no ignored ones."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.mark.timeout(1200)
def test_post_build_then_the_tour_runs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _checkout_copy(repo)
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    bindir = env_dir / "bin"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "VIRTUAL_ENV": str(env_dir),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for var in ("PYTHONPATH", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        env.pop(var, None)
    build = subprocess.run(["bash", str(repo / "binder" / "postBuild")], cwd=repo, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (repo / "warehouse" / ".icenb-demo").exists()
    overrides = env_dir / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert json.loads(overrides.read_text())[
        "@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    out = tmp_path / "tour-run.ipynb"
    run = subprocess.run([str(bindir / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                          "--ExecutePreprocessor.kernel_name=python3", "--output", str(out),
                          str(repo / "notebooks" / "00-start-here.ipynb")],
                         cwd=repo / "notebooks", env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    cells = json.loads(out.read_text())["cells"]
    errors = [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == []
    assert sys.prefix != str(env_dir)  # the tour ran in the fresh environment, not this one
