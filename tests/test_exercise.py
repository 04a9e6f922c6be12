"""The course's exercise checker: right answers pass, wrong ones fail and keep the answer hidden."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import icenb
from icenb.exercise import check, same_answer


@pytest.mark.parametrize(("answer", "expected"), [
    (2, 2), (2.0, 2), (Decimal("2.50"), 2.5), (" S3 ", "s3"), ([1, 2], [1, 2]),
    ({"a", "b"}, ["b", "a"]), ({"x": 1}, {"x": 1.0}), (float("nan"), float("nan")),
    ((1, "A"), [1, "a"]), (2, np.int64(2)), ([3, 1], [np.int32(3), np.int64(1)]),
    (7, pa.scalar(7)), ("s2", pa.scalar("S2")), (0.5, np.float32(0.5)),
])
def test_equal_answers_pass(answer: object, expected: object) -> None:
    assert same_answer(answer, expected)
    assert check(answer, expected).passed


@pytest.mark.parametrize(("answer", "expected"), [
    (3, 2), (True, 1), ("2", 2), ([2, 1], [1, 2]), ({"a"}, {"a", "b"}), ({"x": 2}, {"x": 1}),
    (None, 0), (2.0000001, 2), ("S4", "S3"), (3, np.int64(2)), (True, np.int64(1)),
])
def test_wrong_answers_fail(answer: object, expected: object) -> None:
    assert not same_answer(answer, expected)
    result = check(answer, expected, hint="look at the plan")
    assert not result
    assert "Not yet" in repr(result) and "look at the plan" in result._repr_html_()


def test_a_wrong_answer_does_not_reveal_the_expected_one() -> None:
    result = check(41, 1234567, hint="count the files")
    assert "1234567" not in repr(result) and "1234567" not in result._repr_html_()


def test_right_answer_shows_the_explanation_and_chinese_labels() -> None:
    assert "because" in repr(check(1, 1, explanation="because"))
    with icenb.set_options(language="zh"):
        assert "正确" in repr(check(1, 1)) and "还不对" in repr(check(0, 1))


def test_an_uncomparable_answer_is_wrong_not_an_error() -> None:
    class Weird:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no")
        __hash__ = object.__hash__
    assert not check(Weird(), Weird()).passed
