"""Checked exercises for the course's lessons (``notebooks/course/``).

A lesson ends with a question whose answer the notebook computes from the table the lesson built:

    answer = 2                      # your answer
    check(answer, expected=len(plan.skipped_manifests), hint="...")

:func:`check` compares the learner's answer with the value the table gives, and returns an
:class:`ExerciseResult` that shows ✓ or ✗ in place (never raising, so a wrong answer is feedback,
not a traceback). A wrong answer does not reveal the expected one; the hint says where to look.

Answers compare loosely where a person would: numbers by value (``2 == 2.0``, floats to a relative
1e-9), strings without case or surrounding blanks, lists in order, sets and dicts as such, and a
list against a set as a set. A top-level module: it draws with :func:`icenb.labels.t` only.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Mapping, Set
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icenb.labels import t
from icenb.reprs import safe_repr

__all__ = ["ExerciseResult", "check", "same_answer"]


def _number(value: Any) -> float | None:
    """A number as a float (numpy's too: an expected value is often a column's sum), else
    None; booleans are not numbers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (numbers.Real, Decimal)):
        return float(value)
    return None


def _plain(value: Any) -> Any:
    """A pyarrow scalar (a value taken from a table) as its Python value."""
    as_py = getattr(value, "as_py", None)
    return as_py() if callable(as_py) else value


def same_answer(answer: Any, expected: Any) -> bool:
    """Whether ``answer`` is the ``expected`` value as a person would compare them."""
    answer, expected = _plain(answer), _plain(expected)
    a, e = _number(answer), _number(expected)
    if a is not None and e is not None:
        if math.isnan(a) or math.isnan(e):
            return math.isnan(a) and math.isnan(e)
        return math.isclose(a, e, rel_tol=1e-9, abs_tol=0.0)
    if isinstance(answer, str) and isinstance(expected, str):
        return answer.strip().casefold() == expected.strip().casefold()
    if isinstance(expected, Mapping):
        return (isinstance(answer, Mapping) and answer.keys() == expected.keys()
                and all(same_answer(answer[k], expected[k]) for k in expected))
    if isinstance(expected, (Set, list, tuple)) and isinstance(answer, (Set, list, tuple)):
        if isinstance(expected, Set) or isinstance(answer, Set):
            return _as_set(answer) == _as_set(expected)
        return len(answer) == len(expected) and all(
            same_answer(x, y) for x, y in zip(answer, expected, strict=True))
    return bool(answer == expected) if type(answer) is type(expected) else False


def _as_set(values: Any) -> frozenset[Any]:
    return frozenset(v.strip().casefold() if isinstance(v, str) else v for v in values)


@safe_repr
@dataclass(frozen=True)
class ExerciseResult:
    """The outcome of one :func:`check`: whether the answer is right, and what to show."""

    answer: Any
    passed: bool
    question: str = ""
    hint: str = ""
    explanation: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def _lines(self) -> list[str]:
        if self.passed:
            lines = [t("✓ Right: {answer!r}.", answer=self.answer)]
            if self.explanation:
                lines.append(self.explanation)
        else:
            lines = [t("✗ Not yet: {answer!r} is not what the table says.", answer=self.answer)]
            if self.hint:
                lines.append(t("Hint: {hint}", hint=self.hint))
        if self.question:
            lines.insert(0, self.question)
        return lines

    def __repr__(self) -> str:
        return "\n".join(self._lines())

    def _repr_html_(self) -> str:
        kind = "icenb-ok" if self.passed else "icenb-warn"
        body = "<br>".join(html.escape(line) for line in self._lines())
        return (f'<div class="icenb-exercise {kind}" style="border-left:4px solid '
                f'{"#2e7d32" if self.passed else "#e65100"};padding:4px 10px">{body}</div>')


def check(answer: Any, expected: Any, *, question: str = "", hint: str = "",
          explanation: str = "") -> ExerciseResult:
    """Compare a learner's ``answer`` with ``expected`` (computed from the lesson's table, never
    typed in) and return the result to show: ✓ with the ``explanation``, or ✗ with the ``hint``."""
    try:
        passed = same_answer(answer, expected)
    except Exception:  # an answer that cannot be compared is a wrong answer, not a traceback
        passed = False
    return ExerciseResult(answer=answer, passed=passed, question=question, hint=hint,
                          explanation=explanation)
