"""docs/course.md, the course's teaching-coverage table (issue 22): every worked example and core
concept of the table spec, the view spec draft and the v4 proposal, with the lesson and cell that
shows it. A row that says "shown" must point at a cell that exists; at least 110 of the 118 are
shown; a row not shown says why."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE_MD = ROOT / "docs" / "course.md"
NOTEBOOKS = ROOT / "notebooks"
ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*)\|\s*$")


def rows() -> list[dict[str, str]]:
    found = []
    for line in COURSE_MD.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m:
            continue
        cols = [c.strip() for c in re.split(r"(?<!\\)\|", m.group(2))]  # "\|" is a literal pipe
        assert len(cols) == 6, f"docs/course.md row {m.group(1)}: {len(cols) + 1} columns: {line}"
        spec, section, concept, lesson, cell, status = cols
        found.append({"n": m.group(1), "spec": spec, "section": section, "concept": concept,
                      "lesson": lesson.strip("`"), "cell": cell.strip("`"), "status": status})
    return found


def cell_ids(lesson: str) -> set[str]:
    notebook = json.loads((NOTEBOOKS / lesson).read_text(encoding="utf-8"))
    return {c.get("id", "") for c in notebook["cells"]}


def test_the_table_lists_every_example_and_concept_of_the_three_specs() -> None:
    found = rows()
    assert len(found) >= 118, f"docs/course.md lists {len(found)} examples and concepts"
    assert [int(r["n"]) for r in found] == list(range(1, len(found) + 1))
    specs = {r["spec"] for r in found}
    assert specs == {"table spec", "view spec draft", "v4 proposal"}, specs


def test_at_least_110_are_shown_and_the_rest_say_why() -> None:
    found = rows()
    shown = [r for r in found if r["status"].split(" (")[0] == "shown"]
    assert len(shown) >= 110, f"only {len(shown)} of {len(found)} are shown"
    for r in found:
        if r["status"].split(" (")[0] != "shown":
            assert re.match(r"(partly|not shown): \S", r["status"]), (
                f"row {r['n']} ({r['concept']}): say why it is not shown: {r['status']!r}")


def test_every_cited_cell_exists() -> None:
    cache: dict[str, set[str]] = {}
    for r in rows():
        if r["status"].startswith("not shown"):
            continue
        path = NOTEBOOKS / r["lesson"]
        assert path.is_file(), f"row {r['n']}: no notebook {r['lesson']}"
        ids = cache.setdefault(r["lesson"], cell_ids(r["lesson"]))
        for cell in (c.strip() for c in r["cell"].split(",")):
            assert cell in ids, f"row {r['n']}: {r['lesson']} has no cell {cell!r}"


def test_every_lesson_is_in_the_table() -> None:
    cited = {r["lesson"] for r in rows()}
    lessons = {f"course/{p.name}" for p in (NOTEBOOKS / "course").glob("*.ipynb")
               if not p.name.endswith(".zh.ipynb")}
    assert lessons <= cited, f"lessons cited by no row: {sorted(lessons - cited)}"
