"""Puffin files (Puffin spec): golden files from Iceberg Java, byte-exact writing, validation of
every footer field, compression, deletion-vector blobs and the DV files of Java-written tables."""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import CorruptFile, UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.puffin import (
    CARDINALITY,
    CREATED_BY,
    DELETION_VECTOR_V1,
    REFERENCED_DATA_FILE,
    Blob,
    BlobMetadata,
    FileMetadata,
    PuffinReader,
    build_puffin,
    deletion_vector_blob,
    file_metadata_from_json,
    file_metadata_to_json,
    read_deletion_vector,
    write_puffin,
)
from icenb.spec.deletion_vector import DeletionVector, serialize_deletion_vector
from tests.reference_fixtures import JavaTables, java_tables, java_tables_dir  # noqa: F401

SOME_BLOB = b"abcdefghi"
OTHER_BLOB = (
    "some blob \u0000 binary data \U0001f92f that is not very very very very very very long, "
    "is it?"
).encode()


@pytest.fixture(scope="module")
def puffin_dir(testdata_dir: Path) -> Path:
    return testdata_dir / "iceberg-java" / "puffin"


def _sample_blobs(codec: str | None = None) -> list[Blob]:
    return [
        Blob("some-blob", SOME_BLOB, [1], snapshot_id=2, sequence_number=1,
             compression_codec=codec),
        Blob("some-other-blob", OTHER_BLOB, [2], snapshot_id=2, sequence_number=1,
             compression_codec=codec),
    ]


class RangeFile:
    """A RangeReadable over bytes that records its reads."""

    def __init__(self, data: bytes, location: str = "mem://f.puffin") -> None:
        self.data = data
        self.location = location
        self.reads: list[tuple[int, int]] = []

    @property
    def size(self) -> int:
        return len(self.data)

    def read_range(self, offset: int, length: int) -> bytes:
        self.reads.append((offset, length))
        return self.data[offset:offset + length]


# --------------------------------------------------------------------------- golden files
def test_golden_empty_file(puffin_dir: Path) -> None:
    data = (puffin_dir / "empty-puffin-uncompressed.bin").read_bytes()
    reader = PuffinReader(data)
    assert reader.blobs == ()
    assert dict(reader.properties) == {}
    assert reader.footer_size == 28
    assert reader.read_all() == []


@pytest.mark.parametrize(
    ("name", "codec", "footer_size"),
    [("sample-metric-data-uncompressed.bin", None, None),
     ("sample-metric-data-compressed-zstd.bin", "zstd", 314)],
)
def test_golden_sample_metric_data(
    puffin_dir: Path, name: str, codec: str | None, footer_size: int | None
) -> None:
    reader = PuffinReader((puffin_dir / name).read_bytes(), file=name)
    assert dict(reader.properties) == {CREATED_BY: "Test 1234"}
    first, second = reader.blobs
    assert (first.type, first.fields, first.offset) == ("some-blob", (1,), 4)
    assert (second.type, second.fields) == ("some-other-blob", (2,))
    assert second.offset == first.offset + first.length
    assert first.compression_codec == second.compression_codec == codec
    assert reader.read_blob(first) == SOME_BLOB
    assert reader.read_blob(second) == OTHER_BLOB
    assert reader.read_all() == [(first, SOME_BLOB), (second, OTHER_BLOB)]
    if footer_size is not None:
        assert reader.footer_size == footer_size


def test_writing_golden_uncompressed_files_reproduces_their_bytes(puffin_dir: Path) -> None:
    sample = (puffin_dir / "sample-metric-data-uncompressed.bin").read_bytes()
    assert write_puffin(_sample_blobs(), {CREATED_BY: "Test 1234"}) == sample
    empty = (puffin_dir / "empty-puffin-uncompressed.bin").read_bytes()
    assert write_puffin([]) == empty
    written = build_puffin([])
    assert (written.footer_size, written.file_size) == (28, 32)


def test_zstd_write_reads_back(puffin_dir: Path) -> None:
    written = build_puffin(_sample_blobs("zstd"), {CREATED_BY: "Test 1234"})
    reader = PuffinReader(written.data)
    assert reader.file_metadata == written.file_metadata
    assert [b.compression_codec for b in reader.blobs] == ["zstd", "zstd"]
    assert [data for _, data in reader.read_all()] == [SOME_BLOB, OTHER_BLOB]
    # Same footer as the reference's zstd file but for the compressed lengths (other encoder).
    golden = PuffinReader((puffin_dir / "sample-metric-data-compressed-zstd.bin").read_bytes())
    assert [replace(b, offset=0, length=0) for b in reader.blobs] == [
        replace(b, offset=0, length=0) for b in golden.blobs]
    assert reader.properties == golden.properties


def test_footer_json_layout_matches_the_reference() -> None:
    metadata = FileMetadata(
        (BlobMetadata("t", (1, 2), -1, -1, 4, 10, "zstd", {"k": "v"}),
         BlobMetadata("u", (), 5, 6, 14, 0)),
        {"a": "b"},
    )
    assert file_metadata_to_json(metadata) == (
        '{"blobs":[{"type":"t","fields":[1,2],"snapshot-id":-1,"sequence-number":-1,'
        '"offset":4,"length":10,"compression-codec":"zstd","properties":{"k":"v"}},'
        '{"type":"u","fields":[],"snapshot-id":5,"sequence-number":6,"offset":14,"length":0}],'
        '"properties":{"a":"b"}}'
    )
    assert file_metadata_from_json(file_metadata_to_json(metadata)) == metadata


def test_footer_strings_are_escaped_like_jackson() -> None:
    text = 'q"b\\s/\n\t\x01\x1f\x7f é 🤯'
    payload = file_metadata_to_json(FileMetadata((), {text: text}))
    assert payload == ('{"blobs":[],"properties":{"q\\"b\\\\s/\\n\\t\\u0001\\u001F\x7f é 🤯":'
                       '"q\\"b\\\\s/\\n\\t\\u0001\\u001F\x7f é 🤯"}}')
    assert json.loads(payload)["properties"] == {text: text}
    with pytest.raises(ValidationError, match="surrogate"):
        write_puffin([], {"x": "\ud800"})


# --------------------------------------------------------------------------- range sources
def test_reads_through_range_reads(puffin_dir: Path) -> None:
    data = (puffin_dir / "sample-metric-data-compressed-zstd.bin").read_bytes()
    source = RangeFile(data)
    reader = PuffinReader(source)
    assert reader.file == "mem://f.puffin"
    assert len(reader.blobs) == 2
    assert source.reads == [(0, len(data))]  # a small file is read in one go
    assert reader.read_blob(reader.blobs[1]) == OTHER_BLOB
    assert source.reads[-1] == (reader.blobs[1].offset, reader.blobs[1].length)


def test_large_file_reads_only_tail_footer_and_magic() -> None:
    big = Blob("big", bytes(100_000))
    data = write_puffin([big, *_sample_blobs()], {"p": "x" * 20_000})
    source = RangeFile(data)
    reader = PuffinReader(source)
    assert [b.type for b in reader.blobs] == ["big", "some-blob", "some-other-blob"]
    # The read-ahead tail, then the whole footer (it is larger), then the start magic.
    footer_start = len(data) - reader.footer_size
    assert source.reads == [(len(data) - 16_384, 16_384), (footer_start, reader.footer_size),
                            (0, 4)]
    source.reads.clear()
    assert [d for _, d in reader.read_all(reader.blobs[1:])] == [SOME_BLOB, OTHER_BLOB]
    assert len(source.reads) == 1


def test_reads_an_input_file(tmp_path: Path, puffin_dir: Path) -> None:
    path = tmp_path / "f.puffin"
    path.write_bytes((puffin_dir / "sample-metric-data-uncompressed.bin").read_bytes())
    reader = PuffinReader(FileIO().new_input(str(path)))
    assert reader.file == str(path)
    assert reader.read_blob(reader.blobs[0]) == SOME_BLOB


def test_rejects_other_sources() -> None:
    with pytest.raises(ValidationError):
        PuffinReader("not bytes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- corruption
def _sample() -> bytes:
    return write_puffin(_sample_blobs(), {CREATED_BY: "Test 1234"})


def _footer_struct(data: bytes) -> tuple[int, bytes]:
    size, flags, _ = struct.unpack_from("<i4s4s", data, len(data) - 12)
    return size, flags


def _with_payload(data: bytes, payload: bytes, flags: bytes = bytes(4)) -> bytes:
    size, _ = _footer_struct(data)
    start = len(data) - 12 - size - 4
    return data[:start] + b"PFA1" + payload + struct.pack("<i", len(payload)) + flags + b"PFA1"


def _corrupt(data: bytes, file: str = "bad.puffin") -> CorruptFile:
    with pytest.raises(CorruptFile) as info:
        PuffinReader(data, file=file).file_metadata  # noqa: B018
    assert info.value.file == file
    return info.value


def test_bad_start_magic() -> None:
    err = _corrupt(b"PFA2" + _sample()[4:])
    assert err.field == "magic" and err.value == b"PFA2"


def test_bad_end_magic() -> None:
    assert _corrupt(_sample()[:-1] + b"2").field == "footer.magic"


def test_bad_footer_start_magic() -> None:
    data = bytearray(_sample())
    size, _ = _footer_struct(bytes(data))
    data[len(data) - 12 - size - 4] ^= 0xFF
    assert _corrupt(bytes(data)).field == "footer.start-magic"


@pytest.mark.parametrize("size", [-1, 10_000, 2**31 - 1])
def test_footer_payload_size_out_of_bounds(size: int) -> None:
    data = _sample()
    bad = data[:-12] + struct.pack("<i", size) + data[-8:]
    err = _corrupt(bad)
    assert err.field == "footer.payload-size" and err.value == size


def test_footer_payload_size_pointing_inside_blobs_misses_the_start_magic() -> None:
    data = _sample()
    size, _ = _footer_struct(data)
    bad = data[:-12] + struct.pack("<i", size + 10) + data[-8:]
    assert _corrupt(bad).field == "footer.start-magic"


@pytest.mark.parametrize("flags", ["02000000", "00010000", "00000080"])
def test_unknown_flags(flags: str) -> None:
    data = _sample()
    bad = data[:-8] + bytes.fromhex(flags) + data[-4:]
    err = _corrupt(bad)
    assert err.field == "footer.flags" and err.value == flags


def test_too_short_files() -> None:
    for data in (b"", b"PFA1", b"PFA1PFA1" + bytes(8) + b"PFA1"[:3]):
        assert _corrupt(data).field == "file-size"


@pytest.mark.parametrize(
    ("payload", "field", "match"),
    [
        (b"{not json", "footer-payload", "JSON"),
        (b"\xff\xfe", "footer-payload", "UTF-8"),
        (b"[]", None, "JSON object"),
        (b"{}", "blobs", "missing"),
        (b'{"blobs":{}}', "blobs", "list"),
        (b'{"blobs":[],"properties":{"a":1}}', "properties.a", "string"),
        (b'{"blobs":[{"type":"t","fields":[1],"snapshot-id":1,"sequence-number":1,'
         b'"offset":"4","length":1}]}', "blobs[0].offset", "long"),
        (b'{"blobs":[{"type":"t","fields":[1],"snapshot-id":1,"offset":4,"length":1}]}',
         "blobs[0].sequence-number", "missing"),
        (b'{"blobs":[{"type":"t","fields":[true],"snapshot-id":1,"sequence-number":1,'
         b'"offset":4,"length":1}]}', "blobs[0].fields.0", "int"),
        (b'{"blobs":[{"type":"t","fields":[],"snapshot-id":1,"sequence-number":1,'
         b'"offset":4,"length":-1}]}', "blobs[0].length", "negative"),
    ],
)
def test_invalid_footer_payload(payload: bytes, field: str | None, match: str) -> None:
    with pytest.raises(CorruptFile, match=match) as info:
        PuffinReader(_with_payload(_sample(), payload), file="f").file_metadata  # noqa: B018
    assert info.value.field == field and info.value.file == "f"


@pytest.mark.parametrize(("offset", "length"), [(0, 4), (3, 5), (4, 93), (96, 1), (2**40, 1)])
def test_blob_ranges_must_lie_between_magic_and_footer(offset: int, length: int) -> None:
    blob = {"type": "t", "fields": [], "snapshot-id": 1, "sequence-number": 1,
            "offset": offset, "length": length}
    bad = _with_payload(_sample(), json.dumps({"blobs": [blob]}).encode())
    assert _corrupt(bad).field == "blobs[0].offset"


def test_footer_size_hint_is_checked() -> None:
    data = _sample()
    size, _ = _footer_struct(data)
    assert PuffinReader(data, footer_size=size + 16).footer_size == size + 16
    with pytest.raises(CorruptFile) as info:
        PuffinReader(data, footer_size=size + 17, file="f").file_metadata  # noqa: B018
    assert info.value.field == "footer-size" and info.value.value == size + 17


def test_corrupt_zstd_blob() -> None:
    written = build_puffin(_sample_blobs("zstd"))
    data = bytearray(written.data)
    blob = written.file_metadata.blobs[1]
    data[blob.offset + 8] ^= 0xFF
    reader = PuffinReader(bytes(data), file="z.puffin")
    with pytest.raises(CorruptFile, match="zstd") as info:
        reader.read_blob(reader.blobs[1])
    assert info.value.file == "z.puffin" and "some-other-blob" in str(info.value.field)


def test_zstd_blob_without_content_size_is_corrupt() -> None:
    # A zstd frame whose header omits the content size (descriptor 0x00 + window byte).
    frame = bytes.fromhex("28b52ffd") + b"\x00\x48" + b"\x00" * 4
    data = _with_payload(b"PFA1" + frame + _sample()[4:], b"")
    payload = json.dumps({"blobs": [{"type": "t", "fields": [], "snapshot-id": 1,
                                     "sequence-number": 1, "offset": 4, "length": len(frame),
                                     "compression-codec": "zstd"}]}).encode()
    reader = PuffinReader(_with_payload(data, payload))
    with pytest.raises(CorruptFile, match="content size"):
        reader.read_blob(reader.blobs[0])


def test_unknown_codec_is_unsupported() -> None:
    payload = json.dumps({"blobs": [{"type": "t", "fields": [], "snapshot-id": 1,
                                     "sequence-number": 1, "offset": 4, "length": 9,
                                     "compression-codec": "snappy"}]}).encode()
    reader = PuffinReader(_with_payload(_sample(), payload), file="f")
    with pytest.raises(UnsupportedFeature, match="codec") as info:
        reader.read_blob(reader.blobs[0])
    assert info.value.value == "snappy" and info.value.file == "f"


def test_writer_validates_blobs() -> None:
    with pytest.raises(UnsupportedFeature):
        write_puffin([Blob("t", b"x", compression_codec="lz4")])
    with pytest.raises(ValidationError):
        write_puffin([Blob("t", b"x", compression_codec="gzip")])
    with pytest.raises(ValidationError):
        write_puffin([Blob("", b"x")])
    with pytest.raises(ValidationError):
        write_puffin([Blob("t", b"x", fields=[2**31])])
    with pytest.raises(ValidationError):
        write_puffin([Blob("t", b"x", snapshot_id=2**63)])
    with pytest.raises(ValidationError):
        write_puffin([Blob("t", b"x", properties={"a": 1})])  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match="compressed"):
        write_puffin([Blob(DELETION_VECTOR_V1, b"x", compression_codec="zstd")])


# --------------------------------------------------------------------------- LZ4 footers
def _xxh32_short(data: bytes, seed: int = 0) -> int:
    """xxHash32 of fewer than 16 bytes (the LZ4 frame header checksum)."""
    assert len(data) < 16
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    h = (seed + p5 + len(data)) & mask
    i = 0
    while i + 4 <= len(data):
        h = rotl((h + int.from_bytes(data[i:i + 4], "little") * p3) & mask, 17) * p4 & mask
        i += 4
    for byte in data[i:]:
        h = rotl((h + byte * p5) & mask, 11) * p1 & mask
    h ^= h >> 15
    h = h * p2 & mask
    h ^= h >> 13
    h = h * p3 & mask
    return h ^ (h >> 16)


def _lz4_frame(data: bytes, *, content_size: bool = True) -> bytes:
    """An LZ4 frame of ``data`` (pyarrow's, with the content size added to its header)."""
    import pyarrow as pa

    frame = pa.Codec("lz4").compress(data, asbytes=True)
    flg, bd, hc = frame[4], frame[5], frame[6]
    assert flg == 0x60 and hc == (_xxh32_short(frame[4:6]) >> 8) & 0xFF  # checks _xxh32_short
    if not content_size:
        return bytes(frame)
    descriptor = bytes([flg | 0x08, bd]) + len(data).to_bytes(8, "little")
    checksum = bytes([(_xxh32_short(descriptor) >> 8) & 0xFF])
    return bytes(frame[:4] + descriptor + checksum + frame[7:])


def test_lz4_compressed_footer() -> None:
    data = _sample()
    payload = file_metadata_to_json(PuffinReader(data).file_metadata).encode()
    compressed = _with_payload(data, _lz4_frame(payload), flags=b"\x01\0\0\0")
    reader = PuffinReader(compressed)
    assert reader.file_metadata == PuffinReader(data).file_metadata
    assert reader.read_blob(reader.blobs[1]) == OTHER_BLOB


def test_lz4_footer_without_content_size_is_corrupt() -> None:
    data = _sample()
    payload = file_metadata_to_json(PuffinReader(data).file_metadata).encode()
    bad = _with_payload(data, _lz4_frame(payload, content_size=False), flags=b"\x01\0\0\0")
    assert "content size" in _corrupt(bad).message
    assert _corrupt(_with_payload(data, payload, flags=b"\x01\0\0\0")).field == "footer.payload"


# --------------------------------------------------------------------------- round trips
_text = st.text(max_size=12)
_blob = st.builds(
    Blob,
    type=st.text(min_size=1, max_size=12),
    data=st.binary(max_size=200),
    fields=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3),
    snapshot_id=st.integers(-(2**63), 2**63 - 1),
    sequence_number=st.integers(-1, 2**63 - 1),
    compression_codec=st.sampled_from([None, "zstd"]),
    properties=st.dictionaries(_text, _text, max_size=3),
)


@given(st.lists(_blob, max_size=4), st.dictionaries(_text, _text, max_size=3))
def test_write_read_round_trip(blobs: list[Blob], properties: dict[str, str]) -> None:
    written = build_puffin(blobs, properties)
    reader = PuffinReader(RangeFile(written.data))
    assert reader.file_metadata == written.file_metadata
    assert reader.footer_size == written.footer_size
    assert dict(reader.properties) == properties
    assert [(m.type, m.fields, m.snapshot_id, m.sequence_number, dict(m.properties))
            for m in reader.blobs] == [
        (b.type, tuple(b.fields), b.snapshot_id, b.sequence_number, dict(b.properties))
        for b in blobs]
    assert [data for _, data in reader.read_all()] == [b.data for b in blobs]


# --------------------------------------------------------------------------- deletion vectors
def test_deletion_vector_blobs_round_trip() -> None:
    a = DeletionVector.from_positions([1, 3, 5, 2**32 + 1])
    written = build_puffin([deletion_vector_blob(a, "s3://b/data/a.parquet"),
                            deletion_vector_blob(range(10), "s3://b/data/b.parquet")],
                           {CREATED_BY: "icenb test"})
    reader = PuffinReader(written.data)
    first, second = reader.blobs
    assert (first.snapshot_id, first.sequence_number, first.fields) == (-1, -1, (2147483645,))
    assert list(first.properties.items()) == [
        (REFERENCED_DATA_FILE, "s3://b/data/a.parquet"), (CARDINALITY, "4")]
    assert reader.read_deletion_vector(first) == a
    assert list(reader.read_deletion_vector(second)) == list(range(10))
    assert read_deletion_vector(written.data, second.offset, second.length,
                                cardinality=10) == DeletionVector.from_positions(range(10))
    assert reader.read_blob(first) == serialize_deletion_vector(a)


def _dv_file(properties: dict[str, str], codec: str | None = None) -> PuffinReader:
    blob = {"type": DELETION_VECTOR_V1, "fields": [2147483645], "snapshot-id": -1,
            "sequence-number": -1, "offset": 4, "length": 50, "properties": properties}
    if codec:
        blob["compression-codec"] = codec
    payload = json.dumps({"blobs": [blob]}).encode()
    data = b"PFA1" + serialize_deletion_vector([1, 3, 5, 7, 9]) + b"PFA1" + payload
    data += struct.pack("<i", len(payload)) + bytes(4) + b"PFA1"
    return PuffinReader(data, file="dv.puffin")


def test_deletion_vector_blob_properties_are_checked() -> None:
    ok = {REFERENCED_DATA_FILE: "a.parquet", CARDINALITY: "5"}
    reader = _dv_file(ok)
    assert list(reader.read_deletion_vector(reader.blobs[0])) == [1, 3, 5, 7, 9]
    for props, field in [
        ({CARDINALITY: "5"}, "properties"),
        ({REFERENCED_DATA_FILE: "a"}, "properties.cardinality"),
        ({REFERENCED_DATA_FILE: "a", CARDINALITY: "-5"}, "properties.cardinality"),
        ({REFERENCED_DATA_FILE: "a", CARDINALITY: "6"}, "cardinality"),
    ]:
        reader = _dv_file(props)
        with pytest.raises(CorruptFile) as info:
            reader.read_deletion_vector(reader.blobs[0])
        assert info.value.file == "dv.puffin" and info.value.field is not None
        assert info.value.field.endswith(field)
    reader = _dv_file(ok, codec="zstd")
    with pytest.raises(CorruptFile, match="compressed"):
        reader.read_deletion_vector(reader.blobs[0])
    with pytest.raises(ValidationError, match="not a deletion-vector-v1"):
        PuffinReader(_sample()).read_deletion_vector(PuffinReader(_sample()).blobs[0])


def test_read_deletion_vector_by_range_checks_bounds() -> None:
    source = write_puffin([deletion_vector_blob([4], "a")])
    with pytest.raises(CorruptFile):
        read_deletion_vector(source, 4, 10_000, file="f")
    with pytest.raises(CorruptFile) as info:
        read_deletion_vector(RangeFile(source), 5, 20, file="f")
    assert info.value.file == "f"


# --------------------------------------------------------------------------- Java tables
def test_java_deletion_vector_files(java_tables: JavaTables) -> None:  # noqa: F811
    """Every Puffin file Java wrote for the reference tables: each DV decodes with the declared
    cardinality, references an existing data file, and icenb rewrites the file byte for byte."""
    io = FileIO()
    files = sorted(
        p for e in java_tables.entries("table")
        for p in (java_tables.root / e["location"]).rglob("*.puffin")
    )
    dv_table = java_tables.location("db.v3_deletion_vectors")
    assert any(dv_table in p.parents for p in files)
    for path in files:
        reader = PuffinReader(io.new_input(str(path)))
        assert reader.properties[CREATED_BY].startswith("Apache Iceberg 1.10")
        assert reader.blobs
        rebuilt = []
        for blob in reader.blobs:
            assert blob.type == DELETION_VECTOR_V1
            assert (blob.snapshot_id, blob.sequence_number) == (-1, -1)
            dv = reader.read_deletion_vector(blob)
            cardinality = int(blob.properties[CARDINALITY])
            assert len(dv) == cardinality > 0
            referenced = blob.properties[REFERENCED_DATA_FILE]
            assert Path(referenced.removeprefix("file:")).is_file(), referenced
            assert read_deletion_vector(io.new_input(str(path)), blob.offset, blob.length,
                                        cardinality=cardinality) == dv
            rebuilt.append(deletion_vector_blob(dv, referenced))
        assert write_puffin(rebuilt, reader.properties) == path.read_bytes()
