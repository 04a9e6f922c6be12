"""Every committed notebook was run top to bottom before it was committed.

nbval compares fresh outputs with the committed ones, so those must come from one clean run:
a restarted kernel, every cell executed once, in order, without errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(p for p in NOTEBOOKS_DIR.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        notebook: dict[str, Any] = json.load(f)
    return notebook


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _code_cells(notebook: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index among all cells, cell) of every code cell that has code in it."""
    return [
        (index, cell)
        for index, cell in enumerate(notebook.get("cells", []))
        if cell.get("cell_type") == "code" and _source(cell).strip()
    ]


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: str(p.relative_to(NOTEBOOKS_DIR)))
def notebook(request: pytest.FixtureRequest) -> tuple[Path, dict[str, Any]]:
    path: Path = request.param
    return path, _load(path)


def test_notebook_format_and_kernel(notebook: tuple[Path, dict[str, Any]]) -> None:
    path, nb = notebook
    assert nb.get("nbformat") == 4, f"{path.name}: nbformat {nb.get('nbformat')}, expected 4"
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name")
    assert kernel == "python3", (
        f"{path.name}: kernelspec {kernel!r}; use the 'python3' kernel of .venv (make lab)"
    )


def test_notebook_ran_once_in_order(notebook: tuple[Path, dict[str, Any]]) -> None:
    path, nb = notebook
    cells = _code_cells(nb)
    counts = [cell.get("execution_count") for _, cell in cells]
    not_run = [index for index, cell in cells if cell.get("execution_count") is None]
    assert not not_run, f"{path.name}: code cells {not_run} were never executed"
    expected = list(range(1, len(cells) + 1))
    assert counts == expected, (
        f"{path.name}: execution counts {counts}, expected {expected}: "
        "restart the kernel and run all cells before committing"
    )


def test_notebook_has_no_errors(notebook: tuple[Path, dict[str, Any]]) -> None:
    path, nb = notebook
    errors = [
        f"cell {index}: {output.get('ename')}: {output.get('evalue')}"
        for index, cell in _code_cells(nb)
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, f"{path.name}: committed outputs contain errors: {errors}"
