"""Run the notebooks under nbval: this environment's kernel, outputs compared after sanitizing.

The checkout's root conftest (kept out of notebooks/, which a user opens in JupyterLab): plain
`pytest`, `pytest notebooks/` and `pytest --nbval notebooks/` all behave the same, from any
working directory. Options given on the command line win over these defaults.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SANITIZE_FILE = Path(__file__).resolve().parent / "tests" / "nbval_sanitize.cfg"


def pytest_configure(config: pytest.Config) -> None:
    option = config.option
    if not hasattr(option, "nbval"):  # nbval is not installed: notebooks are not collected
        return
    if not (option.nbval or option.nbval_lax):
        option.nbval = True
    if not (option.nbval_kernel_name or option.nbval_current_env or option.current_env):
        option.nbval_current_env = True  # the kernel runs this interpreter (.venv), not a spec
    if option.nbval_sanitize_with is None and option.sanitize_with is None:
        option.nbval_sanitize_with = str(SANITIZE_FILE)
