"""Deletion vectors (Puffin spec, "deletion-vector-v1 blob type"): golden blobs written by Iceberg
Java, byte-exact re-serialization, the 64-bit Roaring examples, corruption and round trips."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64

from icenb.errors import CorruptFile, ValidationError
from icenb.spec.deletion_vector import (
    MAGIC,
    MAX_KEY,
    MAX_POSITION,
    DeletionVector,
    deserialize_deletion_vector,
    deserialize_roaring64,
    serialize_deletion_vector,
    serialize_roaring64,
)

B = 2**32
C = 65536


def _all_container_types() -> list[int]:
    return [
        5, 7, *range(C + 1, C + 1000), *range(2 * C + 1, 3 * C - 1),
        B + 10, B + 20, *range(B + C + 10, B + C + 500), *range(B + 2 * C + 1, B + 3 * C - 1),
    ]


# The positions the testdata README lists for each golden blob.
GOLDEN = {
    "empty-position-index.bin": [],
    "small-alternating-values-position-index.bin": [1, 3, 5, 7, 9],
    "small-and-large-values-position-index.bin": [100, 101, 2**31 - 1 + 100, 2**31 - 1 + 101],
    "all-container-types-position-index.bin": _all_container_types(),
}


@pytest.fixture(scope="module")
def deletes_dir(testdata_dir: Path) -> Path:
    return testdata_dir / "iceberg-java" / "deletes"


def _frame(vector: bytes, *, crc: int | None = None) -> bytes:
    body = MAGIC + vector
    crc = zlib.crc32(body) if crc is None else crc
    return struct.pack(">I", len(body)) + body + struct.pack(">I", crc)


# --------------------------------------------------------------------------- golden files
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_blob_decodes_to_readme_positions(deletes_dir: Path, name: str) -> None:
    expected = GOLDEN[name]
    dv = deserialize_deletion_vector((deletes_dir / name).read_bytes(),
                                     cardinality=len(expected), file=name)
    assert dv.to_numpy().tolist() == expected
    assert list(dv) == expected
    assert dv.cardinality == len(dv) == len(expected)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_serializing_readme_positions_reproduces_golden_bytes(deletes_dir: Path, name: str) -> None:
    golden = (deletes_dir / name).read_bytes()
    assert serialize_deletion_vector(GOLDEN[name]) == golden
    # Decoded vectors (containers as Java wrote them) serialize to the same bytes.
    assert serialize_deletion_vector(deserialize_deletion_vector(golden)) == golden


def test_golden_all_container_types_uses_array_bitmap_and_run_containers(deletes_dir: Path) -> None:
    dv = deserialize_deletion_vector(
        (deletes_dir / "all-container-types-position-index.bin").read_bytes())
    assert [key for key, _ in dv.bitmaps] == [0, 1]
    low = dv.by_key[0]
    assert {5, 7, C + 1, 2 * C + 1, 3 * C - 2} <= set(low)
    assert 3 * C - 1 not in low and C + 1000 not in low
    assert B + 20 in dv and B + 21 not in dv and B + 3 * C - 2 in dv


@pytest.mark.parametrize("name", ["64mapempty.bin", "64map32bitvals.bin", "64mapspreadvals.bin"])
def test_roaring64_examples_read_like_croaring(deletes_dir: Path, name: str) -> None:
    data = (deletes_dir / name).read_bytes()
    dv = deserialize_roaring64(data, file=name)
    assert list(dv) == list(BitMap64.deserialize(data))  # CRoaring's own 64-bit reader


def test_roaring64_example_values(deletes_dir: Path) -> None:
    assert len(deserialize_roaring64((deletes_dir / "64mapempty.bin").read_bytes())) == 0
    assert list(deserialize_roaring64((deletes_dir / "64map32bitvals.bin").read_bytes())) == (
        list(range(10)))
    spread = deserialize_roaring64((deletes_dir / "64mapspreadvals.bin").read_bytes())
    assert list(spread) == [key * B + low for key in range(10) for low in range(10)]


def test_roaring64_high_keys_are_rejected(deletes_dir: Path) -> None:
    with pytest.raises(CorruptFile, match="invalid key") as info:
        deserialize_roaring64((deletes_dir / "64maphighvals.bin").read_bytes(),
                              file="64maphighvals.bin")
    assert info.value.file == "64maphighvals.bin"
    assert info.value.field == "bitmaps[0].key"
    assert info.value.value == 0xEFBDBFEF > MAX_KEY


# --------------------------------------------------------------------------- writer layout
def test_writer_fills_key_gaps_with_empty_bitmaps_like_the_reference() -> None:
    vector = serialize_roaring64([2 * B + 1])
    (count,) = struct.unpack_from("<Q", vector)
    assert count == 3
    empty = BitMap().serialize()
    assert vector[8:12 + len(empty)] == struct.pack("<I", 0) + empty
    assert deserialize_roaring64(vector) == DeletionVector.from_positions([2 * B + 1])


def test_writer_stays_sparse_for_far_keys() -> None:
    vector = serialize_roaring64([5, MAX_POSITION])
    assert struct.unpack_from("<Q", vector) == (2,)
    assert list(deserialize_roaring64(vector)) == [5, MAX_POSITION]
    assert list(BitMap64.deserialize(vector)) == [5, MAX_POSITION]


def test_reader_accepts_sparse_keys() -> None:
    vector = (struct.pack("<QI", 1, 3) + BitMap([4]).serialize())
    assert list(deserialize_deletion_vector(_frame(vector), cardinality=1)) == [3 * B + 4]


def test_writer_run_length_encodes() -> None:
    dense = serialize_deletion_vector(range(1000, 200_000))
    assert len(dense) < 100  # 4 one-run containers, not 199,000 2-byte array entries
    assert list(deserialize_deletion_vector(dense)) == list(range(1000, 200_000))


# --------------------------------------------------------------------------- corruption
@pytest.fixture
def blob() -> bytes:
    return serialize_deletion_vector([1, 3, 5, 7, 9])


def test_flipped_crc_byte_is_corrupt(blob: bytes) -> None:
    bad = blob[:-1] + bytes([blob[-1] ^ 0xFF])
    with pytest.raises(CorruptFile, match="CRC") as info:
        deserialize_deletion_vector(bad, file="dv.puffin")
    assert (info.value.file, info.value.field) == ("dv.puffin", "crc")


def test_flipped_vector_byte_fails_the_crc(blob: bytes) -> None:
    bad = bytearray(blob)
    bad[20] ^= 0x01
    with pytest.raises(CorruptFile) as info:
        deserialize_deletion_vector(bytes(bad))
    assert info.value.field == "crc"


def test_wrong_magic_is_corrupt(blob: bytes) -> None:
    bad = blob[:4] + b"\xd1\xd3\x39\x65" + blob[8:]
    with pytest.raises(CorruptFile, match="magic") as info:
        deserialize_deletion_vector(bad, file="f")
    assert info.value.field == "magic" and info.value.value == "d1d33965"


@pytest.mark.parametrize("delta", [-1, 1, 1000])
def test_wrong_length_field_is_corrupt(blob: bytes, delta: int) -> None:
    (length,) = struct.unpack_from(">I", blob)
    bad = struct.pack(">I", length + delta) + blob[4:]
    with pytest.raises(CorruptFile) as info:
        deserialize_deletion_vector(bad)
    assert info.value.field == "length" and info.value.value == length + delta


@pytest.mark.parametrize("cut", [1, 4, len(b"\0" * 11)])
def test_truncated_blob_is_corrupt(blob: bytes, cut: int) -> None:
    with pytest.raises(CorruptFile) as info:
        deserialize_deletion_vector(blob[:-cut])
    assert info.value.field == "length"


def test_wrong_cardinality_is_corrupt(blob: bytes) -> None:
    assert len(deserialize_deletion_vector(blob, cardinality=5)) == 5
    with pytest.raises(CorruptFile, match="cardinality") as info:
        deserialize_deletion_vector(blob, cardinality=6, file="x.puffin")
    assert (info.value.file, info.value.field, info.value.value) == ("x.puffin", "cardinality", 6)


@pytest.mark.parametrize(
    ("vector", "field", "message"),
    [
        (b"\0" * 4, "bitmap-count", "too short"),
        (struct.pack("<Q", 5), "bitmap-count", "does not fit"),
        (struct.pack("<QI", 1, 0) + BitMap([1]).serialize() + b"\0", "bitmaps", "trailing"),
        (struct.pack("<QI", 2, 1) + BitMap([1]).serialize() + struct.pack("<I", 1)
         + BitMap([2]).serialize(), "bitmaps[1].key", "ascend"),
        (struct.pack("<QI", 1, 0) + struct.pack("<I", 99) + b"\0" * 8, "bitmaps[0].cookie",
         "cookie"),
        (struct.pack("<QI", 1, 0) + BitMap([1, 2, 3]).serialize()[:-2], "bitmaps[0]",
         "truncated"),
        (struct.pack("<QI", 1, 0) + BitMap([1, 2]).serialize()[:-2] + struct.pack("<H", 0),
         "bitmaps[0]", "increasing"),
    ],
)
def test_malformed_vectors_are_corrupt(vector: bytes, field: str, message: str) -> None:
    with pytest.raises(CorruptFile, match=message) as info:
        deserialize_deletion_vector(_frame(vector), file="f")
    assert info.value.field == field and info.value.file == "f"


# --------------------------------------------------------------------------- the model
def test_from_positions_accepts_lists_numpy_and_bitmap64() -> None:
    positions = [9, 3, B + 1, 3]
    expected = [3, 9, B + 1]
    assert list(DeletionVector.from_positions(positions)) == expected
    assert list(DeletionVector.from_positions(np.array(positions, dtype=np.uint64))) == expected
    assert list(DeletionVector.from_positions(np.array([9, 3, 3], dtype=np.int32))) == [3, 9]
    assert list(DeletionVector.from_positions(BitMap64(positions))) == expected
    assert DeletionVector.from_positions(np.array([])) == DeletionVector()


@pytest.mark.parametrize("bad", [[-1], [MAX_POSITION + 1], [2**64], [1.5], [True]])
def test_from_positions_rejects_invalid_positions(bad: list[object]) -> None:
    with pytest.raises(ValidationError) as info:
        DeletionVector.from_positions(bad)  # type: ignore[arg-type]
    assert info.value.field == "positions"


def test_from_positions_rejects_invalid_numpy_positions() -> None:
    for arr in (np.array([-5]), np.array([2**63], dtype=np.uint64), np.array([1.0])):
        with pytest.raises(ValidationError):
            DeletionVector.from_positions(arr)


def test_queries() -> None:
    dv = DeletionVector.from_positions([0, 10, 11, 12, B + 3])
    assert 10 in dv and B + 3 in dv
    assert 13 not in dv and -1 not in dv and "10" not in dv and B not in dv
    assert dv.to_numpy().dtype == np.int64
    with pytest.raises(ValueError):
        dv.to_numpy()[0] = 5  # read-only: the vector stays immutable
    assert dv.is_deleted(np.array([0, 1, 12, 13, B + 3, B + 4])).tolist() == [
        True, False, True, False, True, False]
    assert DeletionVector().is_deleted([1, 2]).tolist() == [False, False]
    assert not DeletionVector() and dv


def test_union_and_equality() -> None:
    a = DeletionVector.from_positions([1, 2, B])
    b = DeletionVector.from_positions([2, 3, 2 * B])
    assert list(a | b) == [1, 2, 3, B, 2 * B]
    assert a.union(b, DeletionVector.from_positions([0])) == DeletionVector.from_positions(
        [0, 1, 2, 3, B, 2 * B])
    assert DeletionVector.from_positions([3, 1]) == DeletionVector.from_positions([1, 3])
    assert hash(DeletionVector.from_positions([3, 1])) == hash(
        DeletionVector.from_positions([1, 3]))
    assert list(a) == [1, 2, B]  # unchanged


def test_constructor_drops_empty_bitmaps_and_checks_keys() -> None:
    from pyroaring import FrozenBitMap

    assert DeletionVector(((0, FrozenBitMap()), (1, FrozenBitMap([2])))).bitmaps == (
        (1, FrozenBitMap([2])),)
    with pytest.raises(ValidationError):
        DeletionVector(((2, FrozenBitMap([1])), (1, FrozenBitMap([1]))))
    with pytest.raises(ValidationError):
        DeletionVector(((MAX_KEY + 1, FrozenBitMap([1])),))


def test_repr_is_bounded() -> None:
    text = repr(DeletionVector.from_positions(range(1000)))
    assert text.startswith("DeletionVector(cardinality=1000, positions=[0, 1, 2")
    assert text.endswith(", 9, ...])")
    assert repr(DeletionVector()) == "DeletionVector(cardinality=0, positions=[])"


# --------------------------------------------------------------------------- round trips
_position = st.one_of(
    st.integers(0, 2**17),
    st.integers(B - 70_000, B + 70_000),
    st.integers(0, 40 * B),
    st.integers(0, MAX_POSITION),
)
_ranges = st.lists(st.tuples(st.integers(0, 3 * B), st.integers(0, 5000)), max_size=3)


@given(st.sets(_position, max_size=300), _ranges)
def test_round_trip(points: set[int], ranges: list[tuple[int, int]]) -> None:
    positions = set(points)
    for start, n in ranges:
        positions.update(range(start, start + n))
    expected = sorted(positions)
    blob = serialize_deletion_vector(positions)
    dv = deserialize_deletion_vector(blob, cardinality=len(expected))
    assert dv.to_numpy().tolist() == expected
    assert dv == DeletionVector.from_positions(expected)
    assert serialize_deletion_vector(dv) == blob
    # CRoaring's 64-bit reader sees the same positions in the vector.
    assert list(BitMap64.deserialize(blob[8:-4])) == expected
