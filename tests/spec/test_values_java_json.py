"""Times, timestamps, dates and binary in JSON single-value form: icenb's text is exactly Java's
(``SingleValueParser``, via tests/reference/java_single_values.py in one JVM), and icenb reads
both its own and the older fixed-digit spellings back to the same value (spec: Appendix D)."""

from __future__ import annotations

from typing import Any

import pytest

from icenb.spec.types import (
    BinaryType,
    DateType,
    FixedType,
    IcebergType,
    PrimitiveType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)
from icenb.spec.values import from_json, to_json
from tests.reference_fixtures import run_reference_batch

_H = 3_600_000_000  # micros per hour
_DAY_2024_01_02 = 19724 * 86_400_000_000  # 2024-01-02T00:00 in micros

# (type, internal value): 0 micros, whole minutes, one tenth, millis only, millis with a
# trailing zero, a lone micro, full micros, nanos, negative (pre-1970) and far years.
CASES: list[tuple[PrimitiveType, Any]] = [
    (TimeType(), 0),
    (TimeType(), 12 * _H + 34 * 60_000_000),
    (TimeType(), 12 * _H + 500_000),
    (TimeType(), 12 * _H + 789_000),
    (TimeType(), 12 * _H + 780_000),
    (TimeType(), 12 * _H + 100),
    (TimeType(), 24 * _H - 1),
    (TimestampType(), _DAY_2024_01_02),
    (TimestampType(), _DAY_2024_01_02 + 56_500_000),
    (TimestampType(), _DAY_2024_01_02 + 56_789_000),
    (TimestampType(), _DAY_2024_01_02 + 56_123_456),
    (TimestampType(), -1),
    (TimestampType(), 253_402_300_800_000_000),  # +10000-01-01
    (TimestamptzType(), 0),
    (TimestamptzType(), _DAY_2024_01_02 + 120_000),
    (TimestamptzType(), -315_619_200_000_000 + 1),  # 1960-01-01T00:00:00.000001
    (TimestampNanoType(), _DAY_2024_01_02 * 1000),
    (TimestampNanoType(), _DAY_2024_01_02 * 1000 + 123_456_789),
    (TimestampNanoType(), _DAY_2024_01_02 * 1000 + 123_456_000),
    (TimestamptzNanoType(), _DAY_2024_01_02 * 1000 + 120_000_000),
    (TimestamptzNanoType(), -1),
    (DateType(), 19724),
    (DateType(), -719_893),  # -0001-01-01 (ISO expanded year)
    (BinaryType(), b"\x00\x01\xab\xff"),  # hex: Java writes upper case
    (FixedType(2), b"\xca\xfe"),
]


@pytest.fixture(scope="module")
def java_texts() -> list[dict[str, Any]]:
    requests = [{"type": str(t), "json": to_json(t, v)} for t, v in CASES]
    return run_reference_batch("java_single_values.py", requests)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_json_text_is_javas(index: int, java_texts: list[dict[str, Any]]) -> None:
    t, value = CASES[index]
    ours = to_json(t, value)
    result = java_texts[index]
    assert result["ok"], result
    assert ours == result["json"]
    assert from_json(t, ours) == value


def test_known_texts() -> None:
    """Seconds always, the fraction without trailing zeros, ``+00:00`` for zoned values."""
    t: IcebergType = TimeType()
    assert to_json(t, 0) == "00:00:00"
    assert to_json(t, 12 * _H + 780_000) == "12:00:00.78"
    assert to_json(TimestamptzType(), 0) == "1970-01-01T00:00:00+00:00"
    assert to_json(TimestampNanoType(), 1) == "1970-01-01T00:00:00.000000001"


def test_older_fixed_digit_texts_still_read() -> None:
    assert from_json(TimeType(), "12:00:00.780000") == 12 * _H + 780_000
    assert from_json(TimestamptzType(), "2024-01-02T00:00:00.000000+00:00") == _DAY_2024_01_02
    assert from_json(TimestampNanoType(), "2024-01-02T00:00:00.000000000") == (
        _DAY_2024_01_02 * 1000)
