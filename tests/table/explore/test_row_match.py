"""Row codes and the cancellation of equal rows (icenb.table.explore.row_match): exact on every
type, and the large-table path (hashes of exact components, checked pair by pair) agreeing with
the exact codes, collisions included."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import icenb.table.explore.row_match as row_match
from icenb.table.explore.changelog import net_rows
from icenb.table.explore.row_match import cancel_equal_rows, row_codes


def _rows(table: pa.Table) -> Counter[str]:
    return Counter(repr(tuple(r.values())) for r in table.to_pylist())


def test_row_codes_tell_rows_apart_by_every_value() -> None:
    table = pa.table({
        "i": pa.array([1, 1, 1, None, None, 1], pa.int64()),
        "f": pa.array([float("nan"), float("nan"), 0.5, None, None, float("nan")]),
        "st": pa.array([{"a": 1, "b": "x"}, {"a": 1, "b": "x"}, None, {"a": None, "b": None},
                        {"a": None, "b": None}, {"a": 1, "b": "y"}],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "l": pa.array([[1, 2], [1, 2], [], None, None, [2, 1]], pa.list_(pa.int64())),
        "m": pa.array([[("k", 1)], [("k", 1)], None, [], None, [("k", 1)]],
                      pa.map_(pa.string(), pa.int64())),
        "fx": pa.array([b"ab", b"ab", b"cd", None, None, b"ab"], pa.binary(2)),
    })
    codes = row_codes(table)
    assert codes[0] == codes[1]  # NaN equals NaN, nested values compared by value
    assert codes[3] != codes[4]  # a null map and an empty one differ
    assert len(set(codes.tolist())) == 5
    assert codes[5] != codes[0]  # struct and list contents count
    sliced = row_codes(table.slice(1, 5))  # a slice keeps telling its rows apart (and alike)
    assert len(set(sliced.tolist())) == 5
    doubled = row_codes(pa.concat_tables([table.slice(3, 3), table.slice(0, 3)]))
    assert doubled[3] == doubled[4] and doubled[3] != doubled[0]
    assert row_codes(table.select([])).tolist() == [0] * 6


def test_net_rows_cancels_one_for_one() -> None:
    def rows(*specs: tuple[int, str | None]) -> pa.Table:
        return pa.table({"id": pa.array([i for i, _ in specs], pa.int64()),
                         "s": pa.array([s for _, s in specs], pa.string())})

    a = rows((1, "a"), (1, "a"), (2, "b"), (3, None))
    b = rows((1, "a"), (3, None), (4, "d"))
    removed, added = net_rows(a, b)
    assert removed.to_pylist() == [{"id": 1, "s": "a"}, {"id": 2, "s": "b"}]
    assert added.to_pylist() == [{"id": 4, "s": "d"}]
    assert net_rows(a.slice(0, 0), b)[1].num_rows == 3
    assert net_rows(a, b.slice(0, 0))[0].num_rows == 4


def _random_side(rng: random.Random, n: int) -> pa.Table:
    words = ["", "a", "short", "exactly-16-bytes", "a string longer than sixteen bytes #1",
             "a string longer than sixteen bytes #2", "ü-unicode", None]
    return pa.table({
        "i": pa.array([rng.choice([None, 0, 1, 2, -1, 2**40]) for _ in range(n)], pa.int64()),
        "d": pa.array([rng.choice([None, 0.0, -0.0, 1.5, float("nan")]) for _ in range(n)]),
        "s": pa.array([rng.choice(words) for _ in range(n)], pa.string()),
        "b": pa.array([rng.choice([None, True, False]) for _ in range(n)]),
        "ts": pa.array([rng.choice([None, 0, 10**15]) for _ in range(n)], pa.timestamp("us")),
        "dec": pa.array([rng.choice([None, 1, 2]) for _ in range(n)], pa.decimal128(10, 2)),
        "l": pa.array([rng.choice([None, [], [1], [1, 2]]) for _ in range(n)],
                      pa.list_(pa.int32())),
        "st": pa.array([rng.choice([None, {"x": 1}, {"x": None}]) for _ in range(n)],
                       pa.struct([("x", pa.int16())])),
    })


def _check(left: pa.Table, right: pa.Table) -> None:
    kl, kr = cancel_equal_rows(left, right)
    removed, added = left.filter(pa.array(kl)), right.filter(pa.array(kr))
    before, after = _rows(left), _rows(right)
    assert _rows(removed) == before - after
    assert _rows(added) == after - before


@pytest.mark.parametrize("seed", range(4))
def test_the_large_table_path_agrees_with_exact_codes(seed: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    left = _random_side(rng, 400)
    right = pa.concat_tables([left.slice(0, 300), _random_side(rng, 150)])
    right = right.take(pa.array(rng.sample(range(right.num_rows), right.num_rows)))
    _check(left, right)  # small: exact codes
    monkeypatch.setattr(row_match, "SMALL", 0)
    _check(left, right)
    _check(left.slice(37, 200), right.slice(11))  # offsets into the buffers
    _check(pa.concat_tables([left, left]), right)  # chunked columns


def test_hash_collisions_fall_back_to_exact_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_match, "SMALL", 0)

    def weak(x: Any) -> Any:  # every row in a handful of hash groups
        return np.asarray(x, dtype=np.uint64) & np.uint64(3)

    monkeypatch.setattr(row_match, "_mix", weak)
    rng = random.Random(9)
    left = _random_side(rng, 300)
    right = pa.concat_tables([left.slice(100), _random_side(rng, 120)])
    _check(left, right)
    # strings equal in length, head and tail but not in the middle are told apart
    a = pa.table({"s": ["prefix--AAAA--middle--suffix", "x"]})
    b = pa.table({"s": ["prefix--BBBB--middle--suffix", "x"]})
    kl, kr = cancel_equal_rows(a, b)
    assert kl.tolist() == [True, False] and kr.tolist() == [True, False]


def test_nans_of_any_bits_cancel_on_both_paths() -> None:
    """Every NaN is one value (Java's ``Double.equals``), small tables and large alike."""
    quiet = np.array([np.nan, 1.0])
    other = quiet.copy()
    other.view(np.uint64)[0] = np.uint64(0x7FF8000000000001)  # another NaN payload
    for n in (1, row_match.SMALL):
        left = pa.table({"x": pa.array(np.tile(quiet, n))})
        right = pa.table({"x": pa.array(np.tile(other, n))})
        keep_left, keep_right = row_match.cancel_equal_rows(left, right)
        assert not keep_left.any() and not keep_right.any(), n
