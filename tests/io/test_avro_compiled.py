"""The compiled (numba) Avro path gives exactly the tables icenb's lockstep decoder gives, and
hands malformed data back to it (which names the file)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import CorruptFile, UnsupportedFeature
from icenb.io import avro, avro_compiled
from icenb.io.avro import avro_arrow_schema, read_avro_tables
from tests.io.test_avro import (
    FUZZ_BASES,
    HYPO_RECORD,
    RICH,
    RICH_RECORDS,
    _raw,
    _zz,
    assert_same_as_fastavro,
    canon,
    container,
    split_blocks,
    write,
)
from tests.reference_fixtures import JavaTables

PLANNING_COLUMNS = ["status", "snapshot_id", "sequence_number", "file_sequence_number",
                    "data_file.content", "data_file.file_path", "data_file.partition",
                    "data_file.record_count", "data_file.lower_bounds",
                    "data_file.upper_bounds", "data_file.null_value_counts"]


def compiled(files: list[tuple[str, bytes]], columns: list[str] | None = None,
             threads: int = 1) -> list[pa.Table] | None:
    """The files (one writer schema) decoded by the compiled path alone."""
    parsed = [avro._parse(name, data) for name, data in files]
    target = avro_arrow_schema(files[0][0], json.loads(parsed[0].schema_text), columns)
    return avro_compiled.decode_files(
        [p.blocks for p in parsed], parsed[0].schema_text, avro._keep_for(columns),
        None if columns is None else tuple(columns), target, threads)


def lockstep(files: list[tuple[str, bytes]], columns: list[str] | None = None
             ) -> list[pa.Table]:
    """The files decoded by the lockstep numpy decoder (no compiled, native or row-wise path)."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv(avro_compiled.DISABLE_ENV, "1")
        m.setattr(avro, "NATIVE_MAX_FILES", 0)
        m.setattr(avro, "ROWWISE_MAX_LANES", 0)
        return read_avro_tables(files, columns=columns)


def assert_same(got: list[pa.Table] | None, expected: list[pa.Table], what: str = "") -> None:
    assert got is not None, what
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.schema.equals(e.schema, check_metadata=True), what
        if not g.equals(e):  # NaN != NaN for equals(): compare values with NaNs spelled out
            typ = pa.struct(list(g.schema))
            assert [canon(r, typ) for r in g.to_pylist()] == [
                canon(r, typ) for r in e.to_pylist()], what


def test_numba_is_installed() -> None:
    assert avro_compiled.available()  # a dependency: planning over many manifests relies on it


@pytest.mark.parametrize("columns", [None, PLANNING_COLUMNS, ["data_file.file_path"]])
def test_every_java_avro_file_decodes_the_same_compiled(
        java_tables: JavaTables, columns: list[str] | None) -> None:
    paths = sorted(java_tables.root.rglob("*.avro"))
    manifests = [p for p in paths if "-m" in p.name and not p.name.startswith("snap-")]
    assert len(manifests) > 100
    decoded = 0
    for path in paths:
        files = [(str(path), path.read_bytes())]
        expected = lockstep(files, columns)
        assert_same(compiled(files, columns), expected, str(path))
        decoded += 1
    assert decoded == len(paths)
    # many manifests at once, in two threads: the same tables, in file order
    batch = [(str(p), p.read_bytes()) for p in manifests[:40]]
    by_schema: dict[bytes, list[tuple[str, bytes]]] = {}
    for name, data in batch:
        by_schema.setdefault(avro._parse(name, data).schema_text, []).append((name, data))
    for group in by_schema.values():
        assert_same(compiled(group, columns, threads=2), lockstep(group, columns))


@pytest.mark.parametrize("codec", ["null", "deflate"])
@pytest.mark.parametrize("interval", [1, 300, 64_000])
def test_rich_records_every_type_and_block_size(codec: str, interval: int) -> None:
    """Every Avro type icenb maps (decimals on bytes and fixed, enums, uuids, logical maps,
    nested arrays, nulls at every level), one record per block up to one block in all."""
    files = [("rich.avro", write(RICH, RICH_RECORDS, codec=codec, sync_interval=interval))]
    got = compiled(files)
    assert_same(got, lockstep(files))
    assert got is not None
    assert_same_as_fastavro(files[0][1], got[0])


def test_projection_of_nested_fields() -> None:
    files = [("r.avro", write(RICH, RICH_RECORDS, sync_interval=400))]
    for columns in (["l", "points.label", "amap", "imap.key", "again.x", "nested"],
                    ["dec_b", "dec_f", "color", "uid"], ["again"], []):
        got = compiled(files, columns)
        assert_same(got, lockstep(files, columns), str(columns))
        assert got is not None and got[0].num_rows == len(RICH_RECORDS)


def test_records_that_grow_after_the_first_need_more_room() -> None:
    """Capacities are estimated from the first record; later, larger records (maps of 0 then
    200 items) take the exact counting pass."""
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
        {"name": "a", "type": ["null", {"type": "array", "items": "long"}]}]}
    records = [{"m": {}, "a": None}] + [
        {"m": {f"k{j}": (None if j % 3 else "v" * j) for j in range(200)},
         "a": list(range(k))} for k in range(50)]
    files = [("grow.avro", write(schema, records, sync_interval=10_000))]
    got = compiled(files)
    assert_same(got, lockstep(files))
    assert got is not None and len(got[0].column("m")[50].as_py()) == 200


def test_arrays_and_maps_in_several_blocks() -> None:
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "z", "type": "int"}]}
    rec1 = (_zz(2) + _zz(1) + _zz(2) + _zz(-1) + _zz(1) + _zz(3) + _zz(0)
            + _zz(1) + _zz(1) + b"k" + _zz(7) + _zz(-1) + _zz(3) + _zz(1) + b"j"
            + _zz(-1) + _zz(0) + _zz(42))
    rec2 = _zz(0) + _zz(0) + _zz(-42)
    files = [("blocks.avro", container(schema, [(2, rec1 + rec2), (0, b""), (1, rec2)]))]
    got = compiled(files)
    assert got is not None
    assert got[0].to_pylist() == [
        {"a": [1, 2, 3], "m": [("k", 7), ("j", -1)], "z": 42},
        {"a": [], "m": [], "z": -42},
        {"a": [], "m": [], "z": -42},
    ]
    assert_same(got, lockstep(files))


@settings(max_examples=60, deadline=None)
@given(records=st.lists(HYPO_RECORD, max_size=12), interval=st.integers(1, 2000),
       codec=st.sampled_from(["null", "deflate"]))
def test_random_records_decode_the_same(records: list[dict[str, Any]], interval: int,
                                        codec: str) -> None:
    files = [("h.avro", write(RICH, records, codec=codec, sync_interval=interval))]
    assert_same(compiled(files), lockstep(files))


@settings(max_examples=200, deadline=None)
@given(base=st.sampled_from(FUZZ_BASES),
       edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                      min_size=1, max_size=4))
def test_damaged_data_is_left_to_the_lockstep_decoder(base: bytes,
                                                      edits: list[tuple[float, int]]) -> None:
    """Whatever the damage, the compiled path either gives the lockstep decoder's table or
    none (never a different table, never a crash)."""
    data = bytearray(base)
    for where, byte in edits:
        data[int(where * len(data))] = byte
    files = [("damaged.avro", bytes(data))]
    try:
        parsed = avro._parse(*files[0])
        json.loads(parsed.schema_text)
        avro_arrow_schema("damaged.avro", json.loads(parsed.schema_text))
    except (CorruptFile, UnsupportedFeature, ValueError):
        return  # the header itself is damaged: never reaches a decoder
    got = compiled(files)
    try:
        expected = lockstep(files)
    except (CorruptFile, UnsupportedFeature):
        assert got is None
        return
    if got is not None:
        assert_same(got, expected)


@pytest.mark.parametrize("payload", [
    pytest.param(lambda: (4, _raw()[1]), id="more records than bytes"),
    pytest.param(lambda: (2, _raw()[1]), id="fewer records than bytes"),
    pytest.param(lambda: (3, _raw()[1] + b"\x00"), id="trailing byte"),
])
def test_malformed_blocks_fall_back_and_are_named(payload: Any) -> None:
    schema = _raw()[0]
    count, raw = payload()
    data = container(schema, [(count, raw)])
    assert compiled([("bad.avro", data)]) is None
    avro_compiled._load()  # loaded: read_avro_tables now tries the compiled path first
    with pytest.raises(CorruptFile, match="count") as exc:
        read_avro_tables([("ok.avro", write(RICH, RICH_RECORDS[:3])), ("bad.avro", data)])
    assert exc.value.file == "bad.avro"


@pytest.mark.parametrize(("schema", "payload", "message"), [
    ({"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]},
     b"\x04\xff\xfe", "UTF-8"),
    ({"type": "record", "name": "r", "fields": [{"name": "i", "type": "int"}]},
     _zz(2**40), "32-bit"),
    ({"type": "record", "name": "r", "fields": [{"name": "o", "type": ["null", "int"]}]},
     _zz(2) + _zz(1), "union branch"),
    ({"type": "record", "name": "r", "fields": [
        {"name": "e", "type": {"type": "enum", "name": "e", "symbols": ["A"]}}]},
     _zz(3), "enum"),
    ({"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": "int"}}]}, _zz(10**9), "exceeds"),
])
def test_bad_values_fall_back_and_are_named(schema: Any, payload: bytes, message: str) -> None:
    data = container(schema, [(1, payload)])
    assert compiled([("bad.avro", data)]) is None
    avro_compiled._load()
    with pytest.raises(CorruptFile, match=message) as exc:
        read_avro_tables([("bad.avro", data)])
    assert exc.value.file == "bad.avro"


def test_unions_beyond_null_are_left_to_the_lockstep_decoder() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["int", "string"]}]}
    data = write(schema, [{"u": 1}])
    parsed = avro._parse("u.avro", data)
    assert avro_compiled._compile(parsed.schema_text, avro._keep_for(None), None) is None
    avro_compiled._load()
    with pytest.raises(UnsupportedFeature, match="union"):
        read_avro_tables([("u.avro", data)])


def test_read_avro_tables_uses_it_for_large_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above COMPILED_MIN_BYTES (or once loaded) read_avro_tables decodes with the compiled
    path; the result equals lockstep's either way."""
    _, blocks = split_blocks(write(RICH, RICH_RECORDS))
    files = [(f"f{i}.avro", write(RICH, RICH_RECORDS, codec="deflate")) for i in range(3)]
    calls: list[int] = []
    real = avro_compiled.decode_files

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(avro_compiled, "decode_files", spy)
    monkeypatch.setattr(avro, "COMPILED_MIN_BYTES", 1)
    tables = read_avro_tables(files, threads=2)
    assert calls == [1]
    assert_same(tables, lockstep(files))
    assert sum(c for c, _ in blocks) == len(RICH_RECORDS)
