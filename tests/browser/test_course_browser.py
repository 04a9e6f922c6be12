"""The course (issue 22), every lesson top to bottom in a real JupyterLab: each runs without
error output and with every widget rendered, its exercises pass with the committed answers, and
each exercise's check fails when the cell is run again with a wrong answer.

A lesson's exercise cell (``notebooks/course/*.ipynb``) assigns ``answer = ...`` first and ends
with the ``check(...)`` call; its metadata carries a wrong answer
(``{"icenb": {"exercise": true, "wrong_answer": "4"}}``). The wrong answer is put in place of the
first assignment and the check is run again in the lesson's own kernel, after the lesson ran.
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import OpenNotebook
from tests.browser.jupyter_lab import LabServer
from tests.browser.lab_notebook import LabNotebook
from tests.browser.test_widgets_browser import assert_no_widget_error

COURSE = Path(__file__).resolve().parents[2] / "notebooks" / "course"
LESSONS = sorted(p.name for p in COURSE.glob("*.ipynb"))


def _cells(name: str) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads((COURSE / name).read_text(encoding="utf-8"))["cells"]
    return cells


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def exercises(name: str) -> list[dict[str, Any]]:
    """The lesson's exercise cells."""
    return [c for c in _cells(name) if c["cell_type"] == "code"
            and c.get("metadata", {}).get("icenb", {}).get("exercise")]


def with_answer(source: str, answer: str) -> str:
    """The exercise cell's code with ``answer`` assigned instead of the first assignment, and the
    final ``check(...)`` result printed as ``passed=True|False``."""
    tree = ast.parse(source)
    first, last = tree.body[0], tree.body[-1]
    starts = isinstance(first, ast.Assign) and [ast.unparse(t) for t in first.targets] == ["answer"]
    assert starts, f"an exercise cell must start with `answer = ...`:\n{source}"
    assert isinstance(first, ast.Assign)
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call), (
        f"an exercise cell must end with the check(...) call:\n{source}")
    first.value = ast.parse(answer, mode="eval").body
    tree.body[-1] = ast.parse(f"print('passed=' + str(bool({ast.unparse(last.value)})))").body[0]
    return ast.unparse(tree)


def test_every_lesson_has_checked_exercises() -> None:
    assert LESSONS, f"no lessons in {COURSE}"
    for name in LESSONS:
        found = exercises(name)
        assert found, f"{name}: no exercise cell (metadata icenb.exercise)"
        for cell in found:
            wrong = cell["metadata"]["icenb"].get("wrong_answer")
            assert isinstance(wrong, str) and wrong.strip(), f"{name}: no wrong_answer"
            with_answer(_source(cell), wrong)  # well formed
            outputs = json.dumps(cell.get("outputs", []), ensure_ascii=False)
            assert "✓" in outputs, f"{name}: the committed answer of an exercise is not right"


@pytest.fixture(scope="module", params=LESSONS)
def lesson(request: pytest.FixtureRequest, open_notebook: OpenNotebook,
           lab_server: LabServer) -> Iterator[LabNotebook]:
    name: str = request.param
    # run in a copy of notebooks/course/ without its notebooks (a lesson's data files resolve as
    # in JupyterLab, its scratch warehouse is its own: nbval may run the same lesson meanwhile)
    workdir = lab_server.root_dir / "course"
    if not workdir.exists():
        shutil.copytree(COURSE, workdir, ignore=shutil.ignore_patterns("*.ipynb", "scratch"))
    cells = [f"import os\nos.chdir({str(workdir)!r})"]
    cells += [_source(c) for c in _cells(name) if c["cell_type"] == "code"]
    yield open_notebook(f"course-{name}", cells)


def test_lesson_runs_and_its_exercises_check(lesson: LabNotebook) -> None:
    assert_no_widget_error(lesson)
    name = lesson.path.removeprefix("course-")
    for cell in exercises(name):
        source = _source(cell)
        right = lesson.execute(with_answer(source, ast.unparse(ast.parse(source).body[0].value)))
        assert "passed=True" in right, f"{name}: the committed answer fails its check:\n{source}"
        wrong_answer = cell["metadata"]["icenb"]["wrong_answer"]
        wrong = lesson.execute(with_answer(source, wrong_answer))
        assert "passed=False" in wrong, f"{name}: a wrong answer ({wrong_answer}) passes:\n{source}"
    lesson.close()  # one lesson's kernel at a time on two cores
