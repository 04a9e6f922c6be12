"""Tests for icenb.io.avro: Avro container files decoded into Arrow, checked against fastavro."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import math
import pickle
import uuid
import zlib
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import CorruptFile, UnsupportedFeature
from icenb.io import avro_compiled
from icenb.io.avro import (
    FIELD_ID_KEY,
    MAGIC,
    avro_arrow_schema,
    avro_file_metadata,
    read_avro,
    read_avro_tables,
)
from tests.reference_fixtures import JavaTables

UTC = dt.timezone.utc


@pytest.fixture(autouse=True)
def _lockstep_and_row_wise_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about icenb's own decoders; the compiled path has test_avro_compiled."""
    monkeypatch.setenv(avro_compiled.DISABLE_ENV, "1")

# --------------------------------------------------------------------------- helpers


def canon(value: Any, typ: pa.DataType) -> Any:
    """A comparable form of a fastavro value or an Arrow to_pylist value of Arrow type typ."""
    if value is None:
        return None
    if pa.types.is_struct(typ):
        return {f.name: canon(value.get(f.name), f.type) for f in typ}
    if pa.types.is_map(typ):
        if isinstance(value, dict):  # fastavro: an Avro map
            items = list(value.items())
        else:  # fastavro: an Iceberg logical map (list of key/value records); Arrow: tuples
            items = [(v["key"], v["value"]) if isinstance(v, dict) else v for v in value]
        return [(canon(k, typ.key_type), canon(v, typ.item_type)) for k, v in items]
    if pa.types.is_list(typ):
        return [canon(v, typ.value_type) for v in value]
    if isinstance(value, dt.datetime):
        return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def assert_same_as_fastavro(data: bytes, table: pa.Table, name: str = "") -> None:
    expected = list(fastavro.reader(io.BytesIO(data)))
    typ = pa.struct(list(table.schema))
    got = table.to_pylist()
    assert len(got) == len(expected), name
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert canon(g, typ) == canon(e, typ), f"{name} record {i}"


def write(schema: Any, records: list[dict[str, Any]], codec: str = "null",
          **kwargs: Any) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec, **kwargs)
    return buf.getvalue()


def _zz(n: int) -> bytes:
    """Zigzag varint encoding of n."""
    v = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _avro_bytes(b: bytes) -> bytes:
    return _zz(len(b)) + b


SYNC = bytes(range(16))


def container(schema: Any, blocks: list[tuple[int, bytes]], codec: str = "null",
              sync: bytes = SYNC) -> bytes:
    """A container file written by hand: blocks of (record count, already encoded payload)."""
    meta = {"avro.schema": json.dumps(schema).encode(), "avro.codec": codec.encode()}
    out = bytearray(MAGIC)
    out += _zz(len(meta))
    for k, v in meta.items():
        out += _avro_bytes(k.encode()) + _avro_bytes(v)
    out += _zz(0) + sync
    for count, payload in blocks:
        out += _zz(count) + _zz(len(payload)) + payload + sync
    return bytes(out)


def split_blocks(data: bytes) -> tuple[Any, list[tuple[int, bytes]]]:
    """(schema, raw blocks) of a null-codec file, to re-encode it by hand."""
    reader = fastavro.block_reader(io.BytesIO(data))
    schema = reader.writer_schema
    blocks = []
    for block in reader:
        buf = io.BytesIO()
        for rec in block:
            fastavro.schemaless_writer(buf, schema, rec)
        blocks.append((block.num_records, buf.getvalue()))
    return schema, blocks


# --------------------------------------------------------------------------- rich schema


def _opt(name: str, typ: Any, fid: int) -> dict[str, Any]:
    return {"name": name, "type": ["null", typ], "default": None, "field-id": fid}


POINT = {"type": "record", "name": "point", "fields": [
    {"name": "x", "type": "double", "field-id": 301},
    {"name": "label", "type": ["null", "string"], "field-id": 302},
]}

RICH = {
    "type": "record",
    "name": "rich",
    "namespace": "test",
    "fields": [
        {"name": "b", "type": "boolean", "field-id": 1},
        {"name": "i", "type": "int", "field-id": 2},
        {"name": "l", "type": "long", "field-id": 3},
        {"name": "f", "type": "float", "field-id": 4},
        {"name": "d", "type": "double", "field-id": 5},
        {"name": "s", "type": "string", "field-id": 6},
        {"name": "by", "type": "bytes", "field-id": 7},
        _opt("fx", {"type": "fixed", "name": "fx3", "size": 3}, 8),
        _opt("date", {"type": "int", "logicalType": "date"}, 9),
        _opt("time", {"type": "long", "logicalType": "time-micros"}, 10),
        _opt("ts", {"type": "long", "logicalType": "timestamp-micros",
                    "adjust-to-utc": False}, 11),
        _opt("tstz", {"type": "long", "logicalType": "timestamp-micros",
                      "adjust-to-utc": True}, 12),
        _opt("dec_b", {"type": "bytes", "logicalType": "decimal", "precision": 9,
                       "scale": 2}, 13),
        _opt("dec_f", {"type": "fixed", "name": "dec16", "size": 16, "logicalType": "decimal",
                       "precision": 38, "scale": 10}, 14),
        _opt("uid", {"type": "fixed", "name": "uuid_fixed", "size": 16,
                     "logicalType": "uuid"}, 15),
        _opt("oi", "int", 16),
        _opt("os", "string", 17),
        _opt("points", {"type": "array", "items": POINT, "element-id": 18}, 19),
        _opt("nested", {"type": "array", "element-id": 20,
                        "items": {"type": "array", "items": ["null", "long"],
                                  "element-id": 21}}, 22),
        _opt("amap", {"type": "map", "values": ["null", "long"], "key-id": 23,
                      "value-id": 24}, 25),
        _opt("imap", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k26_v27", "fields": [
                {"name": "key", "type": "int", "field-id": 26},
                {"name": "value", "type": ["null", "bytes"], "field-id": 27}]}}, 28),
        _opt("again", "point", 29),
        {"name": "color", "type": {"type": "enum", "name": "color",
                                   "symbols": ["RED", "GREEN"]}, "field-id": 30},
        _opt("ts_ms", {"type": "long", "logicalType": "timestamp-millis"}, 31),
        _opt("t_ms", {"type": "int", "logicalType": "time-millis"}, 32),
    ],
}

I64 = (-(2**63), 2**63 - 1)
I32 = (-(2**31), 2**31 - 1)


def rich_record(k: int) -> dict[str, Any]:
    full = k % 3 != 2
    return {
        "b": k % 2 == 0,
        "i": [0, -1, 1, *I32][k % 5],
        "l": [0, -1, 300, *I64][k % 5],
        "f": [0.5, -1.25, float("inf"), 3.0e38][k % 4],
        "d": [0.1, -2.5e300, float("-inf"), 1e-300][k % 4],
        "s": ["", "plain", "ünïcødé ✓ 漢字 🧊", "x" * 300][k % 4],
        "by": [b"", b"\x00\xff", bytes(range(256))][k % 3],
        "fx": b"abc" if full else None,
        "date": dt.date(2024, 1, 1) + dt.timedelta(days=k) if full else None,
        "time": dt.time(12, 30, 15, 123456) if full else None,
        "ts": dt.datetime(2024, 1, 1, 0, 0, 0, k) if full else None,
        "tstz": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC) if full else None,
        "dec_b": [decimal.Decimal("-1234567.89"), decimal.Decimal("0.01"),
                  decimal.Decimal("0.00")][k % 3] if full else None,
        "dec_f": decimal.Decimal("-12345678901234567890.1234567891") if full else None,
        "uid": uuid.UUID(int=k * 7919 + 1).bytes if full else None,
        "oi": k if full else None,
        "os": f"s{k}" if full else None,
        "points": [{"x": k + 0.5, "label": None if j % 2 else f"p{j}"} for j in range(k % 4)]
        if full else None,
        "nested": [[None, 1, -2], [], [2**40]] if full else None,
        "amap": {"a": 1, "ü": None, "c": -(2**50)} if full else None,
        "imap": [{"key": 1, "value": b"x"}, {"key": -5, "value": None}] if full else None,
        "again": {"x": -1.0, "label": "again"} if full else None,
        "color": ["RED", "GREEN"][k % 2],
        "ts_ms": dt.datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=UTC) if full else None,
        "t_ms": dt.time(1, 2, 3, 4000) if full else None,
    }


RICH_RECORDS = [rich_record(k) for k in range(40)]


# --------------------------------------------------------------------------- Java reference files


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def java_avro_files(java_tables: JavaTables) -> list[Path]:
    return sorted(java_tables.root.rglob("*.avro"))


def test_every_java_avro_file_decodes_like_fastavro(java_tables: JavaTables) -> None:
    paths = java_avro_files(java_tables)
    assert len(paths) > 50  # manifests and manifest lists of every scenario
    files = [(str(p), p.read_bytes()) for p in paths]
    tables = read_avro_tables(files)
    assert len(tables) == len(files)
    threaded = read_avro_tables(files, threads=3)  # blocks decompressed in threads
    for a, b in zip(tables, threaded, strict=True):  # same bytes (NaN != NaN in equals)
        assert a.schema == b.schema and _ipc(a) == _ipc(b)
    schemas = set()
    for (name, data), table in zip(files, tables, strict=True):
        assert_same_as_fastavro(data, table, name)
        schemas.add(avro_file_metadata(name, data)["avro.schema"])
    assert len(schemas) > 3  # the batch really mixed several writer schemas


def test_java_manifest_columns_use_avro_field_names(java_tables: JavaTables) -> None:
    seen = set()
    for path in java_avro_files(java_tables):
        data = path.read_bytes()
        meta = avro_file_metadata(str(path), data)
        table = read_avro(str(path), data)
        if b"manifest_entry" not in meta["avro.schema"]:
            continue
        fv = meta.get("format-version", b"1")
        seen.add(fv)
        assert table.column_names[:2] == ["status", "snapshot_id"]
        if fv != b"1":
            assert {"sequence_number", "file_sequence_number"} <= set(table.column_names)
        assert table.schema.field("status").metadata == {FIELD_ID_KEY: b"0"}
        df = table.schema.field("data_file").type
        assert df.field("file_path").type == pa.string()
        assert pa.types.is_map(df.field("lower_bounds").type)
        assert df.field("lower_bounds").type.key_type == pa.int32()
        assert {"partition-spec", "schema"} <= set(meta)
        if fv != b"1":
            assert meta["content"] in (b"data", b"deletes")
    assert {b"1", b"2", b"3"} <= seen


def test_java_manifest_list_projection(java_tables: JavaTables) -> None:
    for path in java_avro_files(java_tables):
        data = path.read_bytes()
        if b"manifest_file" not in avro_file_metadata(str(path), data)["avro.schema"]:
            continue
        full = read_avro(str(path), data)
        part = read_avro(str(path), data, columns=["manifest_path", "partitions.contains_null"])
        assert part.column_names == ["manifest_path", "partitions"]
        assert part.column("manifest_path").equals(full.column("manifest_path"))
        elem = part.schema.field("partitions").type.value_type
        assert [f.name for f in elem] == ["contains_null"]
        if full.num_rows:
            want = [[{"contains_null": s["contains_null"]} for s in p] if p is not None else None
                    for p in full.column("partitions").to_pylist()]
            assert part.column("partitions").to_pylist() == want
        return
    pytest.fail("no manifest list among the Java files")


def test_manifest_projection_keeps_selected_fields_only(java_tables: JavaTables) -> None:
    paths = [p for p in java_avro_files(java_tables) if p.name.endswith("-m0.avro")]
    files = [(str(p), p.read_bytes()) for p in paths]
    cols = ["status", "sequence_number", "data_file.partition", "data_file.lower_bounds",
            "data_file.no_such_field", "nope"]
    full = read_avro_tables(files)
    proj = read_avro_tables(files, columns=cols)
    for f, p in zip(full, proj, strict=True):
        assert p.column_names[0] == "status"
        assert set(p.column_names) <= {"status", "sequence_number", "data_file"}
        df = p.schema.field("data_file").type
        assert [x.name for x in df] == ["partition", "lower_bounds"]
        assert p.column("status").equals(f.column("status"))
        full_df = f.column("data_file").combine_chunks()
        proj_df = p.column("data_file").combine_chunks()
        for name in ("partition", "lower_bounds"):
            assert proj_df.field(name).to_pylist() == full_df.field(name).to_pylist()


def test_map_lookup_works_on_stats_columns(java_tables: JavaTables) -> None:
    path = next(p for p in java_avro_files(java_tables) if p.name.endswith("-m0.avro"))
    table = read_avro(str(path), path.read_bytes())
    bounds = table.column("data_file").combine_chunks().field("lower_bounds")
    found = pc.map_lookup(bounds, pa.scalar(1, pa.int32()), "first").to_pylist()
    expected = [dict(m).get(1) if m is not None else None for m in bounds.to_pylist()]
    assert found == expected


# --------------------------------------------------------------------------- types and shapes


def test_arrow_schema_of_rich_schema() -> None:
    s = avro_arrow_schema("rich.avro", RICH)
    assert s.field("b").type == pa.bool_() and not s.field("b").nullable
    assert s.field("i").type == pa.int32()
    assert s.field("f").type == pa.float32()
    assert s.field("fx").type == pa.binary(3) and s.field("fx").nullable
    assert s.field("date").type == pa.date32()
    assert s.field("time").type == pa.time64("us")
    assert s.field("ts").type == pa.timestamp("us")
    assert s.field("tstz").type == pa.timestamp("us", tz="UTC")
    assert s.field("ts_ms").type == pa.timestamp("ms", tz="UTC")
    assert s.field("t_ms").type == pa.time32("ms")
    assert s.field("dec_b").type == pa.decimal128(9, 2)
    assert s.field("dec_f").type == pa.decimal128(38, 10)
    assert s.field("uid").type == pa.binary(16)
    assert s.field("color").type == pa.string()
    amap = s.field("amap").type
    assert amap.key_type == pa.string() and amap.item_type == pa.int64()
    assert amap.key_field.metadata == {FIELD_ID_KEY: b"23"}
    assert amap.item_field.metadata == {FIELD_ID_KEY: b"24"}
    imap = s.field("imap").type
    assert pa.types.is_map(imap) and imap.key_type == pa.int32()
    assert imap.key_field.metadata == {FIELD_ID_KEY: b"26"}
    assert imap.item_field.nullable
    points = s.field("points").type
    assert points.value_field.metadata == {FIELD_ID_KEY: b"18"}
    assert points.value_type.field("x").metadata == {FIELD_ID_KEY: b"301"}
    assert s.field("again").type == points.value_type  # a named type referenced again
    assert s.field("nested").type.value_type.value_field.nullable
    assert s.field("l").metadata == {FIELD_ID_KEY: b"3"}


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2", "xz"])
def test_rich_records_every_codec(codec: str) -> None:
    data = write(RICH, RICH_RECORDS, codec=codec, sync_interval=500)
    table = read_avro(f"rich.{codec}.avro", data)
    assert table.num_rows == len(RICH_RECORDS)
    assert_same_as_fastavro(data, table, codec)
    assert read_avro("x", write(RICH, RICH_RECORDS)).equals(table)


def test_snappy_blocks() -> None:
    plain = write(RICH, RICH_RECORDS, sync_interval=700)
    schema, blocks = split_blocks(plain)
    codec = pa.Codec("snappy")
    snappy_blocks = [
        (n, codec.compress(b, asbytes=True) + zlib.crc32(b).to_bytes(4, "big"))
        for n, b in blocks
    ]
    assert len(snappy_blocks) > 1
    data = container(schema, snappy_blocks, codec="snappy")
    assert read_avro("s.avro", data).equals(read_avro("p.avro", plain))
    # a flipped CRC byte is caught
    n, b = snappy_blocks[0]
    broken = container(schema, [(n, b[:-1] + bytes([b[-1] ^ 1]))], codec="snappy")
    with pytest.raises(CorruptFile, match="CRC") as exc:
        read_avro("bad-snappy.avro", broken)
    assert exc.value.file == "bad-snappy.avro"


@pytest.mark.parametrize("content_size", [True, False])
def test_zstd_blocks(content_size: bool) -> None:
    import zstandard  # dev extra: builds zstd frames with and without a content size
    plain = write(RICH, RICH_RECORDS, sync_interval=900)
    schema, blocks = split_blocks(plain)
    assert len(blocks) > 1
    comp = zstandard.ZstdCompressor(write_content_size=content_size)
    data = container(schema, [(n, comp.compress(b)) for n, b in blocks], codec="zstandard")
    assert read_avro("z.avro", data).equals(read_avro("p.avro", plain))


def test_empty_file_zero_blocks() -> None:
    data = write(RICH, [])
    table = read_avro("empty.avro", data)
    assert table.num_rows == 0
    assert table.schema == avro_arrow_schema("empty.avro", RICH)


def test_block_with_zero_records_and_many_small_blocks() -> None:
    schema, blocks = split_blocks(write(RICH, RICH_RECORDS, sync_interval=1))
    assert len(blocks) == len(RICH_RECORDS)  # one record per block
    data = container(schema, [(0, b""), *blocks[:5], (0, b""), *blocks[5:]])
    table = read_avro("blocks.avro", data)
    assert_same_as_fastavro(data, table)


def test_array_written_in_several_blocks() -> None:
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "z", "type": "int"}]}
    # record 1: a = [1, 2] + [3] (second block with a negative count and a byte size),
    #           m = {"k": 7} + {"j": -1}
    rec1 = (_zz(2) + _zz(1) + _zz(2) + _zz(-1) + _zz(1) + _zz(3) + _zz(0)
            + _zz(1) + _avro_bytes(b"k") + _zz(7) + _zz(-1) + _zz(3) + _avro_bytes(b"j")
            + _zz(-1) + _zz(0) + _zz(42))
    rec2 = _zz(0) + _zz(0) + _zz(-42)  # empty array and map
    data = container(schema, [(2, rec1 + rec2), (1, rec2)])
    table = read_avro("blocks.avro", data)
    assert table.to_pylist() == [
        {"a": [1, 2, 3], "m": [("k", 7), ("j", -1)], "z": 42},
        {"a": [], "m": [], "z": -42},
        {"a": [], "m": [], "z": -42},
    ]
    assert_same_as_fastavro(data, table)


def test_projection_of_nested_fields() -> None:
    data = write(RICH, RICH_RECORDS, sync_interval=400)
    full = read_avro("r.avro", data)
    cols = ["l", "points.label", "amap", "imap.key", "again.x", "nested"]
    proj = read_avro("r.avro", data, columns=cols)
    assert proj.column_names == ["l", "points", "nested", "amap", "imap", "again"]
    assert proj.schema == avro_arrow_schema("r.avro", RICH, columns=cols)
    assert [f.name for f in proj.schema.field("points").type.value_type] == ["label"]
    assert proj.schema.field("imap").type == full.schema.field("imap").type  # maps stay whole
    for name in ("l", "nested", "amap", "imap"):
        assert proj.column(name).equals(full.column(name))
    assert proj.column("again").to_pylist() == [
        None if a is None else {"x": a["x"]} for a in full.column("again").to_pylist()]
    assert proj.column("points").to_pylist() == [
        None if ps is None else [{"label": p["label"]} for p in ps]
        for ps in full.column("points").to_pylist()]
    nothing = read_avro("r.avro", data, columns=[])
    assert (nothing.num_columns, nothing.num_rows) == (0, len(RICH_RECORDS))
    assert read_avro_tables([]) == []


def test_nulls_everywhere() -> None:
    records = [{k: (v if f["name"] in {"b", "i", "l", "f", "d", "s", "by", "color"} else None)
                for k, v, f in zip(rich_record(0), rich_record(0).values(), RICH["fields"],
                                   strict=True)} for _ in range(5)]
    data = write(RICH, records)
    table = read_avro("nulls.avro", data)
    assert table.column("points").null_count == 5
    assert table.column("amap").null_count == 5
    assert_same_as_fastavro(data, table)


def test_batch_with_different_schemas_keeps_file_order() -> None:
    small = {"type": "record", "name": "s", "fields": [{"name": "v", "type": "long"}]}
    files = [
        ("a.avro", write(RICH, RICH_RECORDS[:7], codec="deflate")),
        ("b.avro", write(small, [{"v": k} for k in range(1000)], sync_interval=100)),
        ("c.avro", write(RICH, [])),
        ("d.avro", write(RICH, RICH_RECORDS[7:], codec="null", sync_interval=300)),
        ("e.avro", write(small, [{"v": -1}])),
    ]
    tables = read_avro_tables(files)
    assert [t.num_rows for t in tables] == [7, 1000, 0, 33, 1]
    # each table owns its buffers: pickling one file's table does not carry the whole batch
    assert tables[4].get_total_buffer_size() < 1000
    assert len(pickle.dumps(tables[0])) < 2 * len(pickle.dumps(read_avro("a", files[0][1])))
    for (name, data), table in zip(files, tables, strict=True):
        assert table.equals(read_avro(name, data))
        assert_same_as_fastavro(data, table, name)


# --------------------------------------------------------------------------- corruption


def _good() -> bytes:
    return write(RICH, RICH_RECORDS[:10], codec="deflate")


def _raw(records: int = 3) -> tuple[Any, bytes]:
    schema, blocks = split_blocks(write(RICH, RICH_RECORDS[:records]))
    return schema, b"".join(b for _, b in blocks)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: b"Obj\x02" + _good()[4:], "bad magic"),
        (lambda: b"", "bad magic"),
        (lambda: _good()[:30], "truncated"),
        (lambda: _good()[:-1], "sync marker mismatch|truncated"),
        (lambda: _good()[:-40], "truncated block"),
        (lambda: _good() + b"\x02\x02\x00" + bytes(16), "sync marker mismatch"),
        (lambda: _good() + b"\xff" * 11, "varint overflow"),
        (lambda: container(_raw()[0], [(4, _raw()[1])]), "count"),
        (lambda: container(_raw()[0], [(2, _raw()[1])]), "block count mismatch"),
        (lambda: container(_raw()[0], [(3, _raw()[1] + b"\x00")]), "block count mismatch"),
        (lambda: container(_raw()[0], [(3, _raw()[1])], codec="deflate"), "deflate"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "s", "type": "string"}]}, [(1, b"\x04\xff\xfe")]), "UTF-8"),
        (lambda: container({"type": "record", "name": "r", "fields": [  # long strings: views
            {"name": "s", "type": "string"}]}, [(1, _zz(40) + b"a" * 30 + b"\xff" * 10)]),
         "UTF-8"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "s", "type": "string"}]}, [(1, b"\x10ab")]), "past the end|count"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "i", "type": "long"}]}, [(1, b"\xff" * 12)]), "varint overflow"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "i", "type": "int"}]}, [(1, _zz(2**40))]), "32-bit"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "o", "type": ["null", "int"]}]}, [(1, _zz(2) + _zz(1))]), "union branch"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "a", "type": {"type": "array", "items": "int"}}]}, [(1, _zz(10**9))]),
         "exceeds"),
        (lambda: container({"type": "record", "name": "r", "fields": [
            {"name": "e", "type": {"type": "enum", "name": "e", "symbols": ["A"]}}]},
            [(1, _zz(3))]), "enum"),
    ],
)
def test_corrupt_files_raise_corrupt_file(make: Any, message: str) -> None:
    with pytest.raises(CorruptFile, match=message) as exc:
        read_avro("bad.avro", make())
    assert exc.value.file == "bad.avro"


def test_corrupt_file_in_a_batch_is_named() -> None:
    schema, raw = _raw()
    good = ("good.avro", container(schema, [(3, raw)]))
    bad = ("bad.avro", container(schema, [(2, raw)]))
    with pytest.raises(CorruptFile) as exc:
        read_avro_tables([good, bad, good])
    assert exc.value.file == "bad.avro"
    with pytest.raises(CorruptFile) as exc:
        read_avro_tables([good, bad, good], threads=2)
    assert exc.value.file == "bad.avro"


def test_metadata_of_corrupt_header() -> None:
    with pytest.raises(CorruptFile, match="bad magic") as exc:
        avro_file_metadata("m.avro", b"PAR1")
    assert exc.value.file == "m.avro"


def test_unsupported_codec_and_union() -> None:
    schema, raw = _raw()
    with pytest.raises(UnsupportedFeature, match="lz4") as exc:
        read_avro("c.avro", container(schema, [(3, raw)], codec="lz4"))
    assert exc.value.file == "c.avro"
    union = {"type": "record", "name": "r", "fields": [
        {"name": "u", "type": ["int", "string"]}]}
    with pytest.raises(UnsupportedFeature, match="union") as exc:
        read_avro("u.avro", write(union, [{"u": 1}]))
    assert exc.value.file == "u.avro" and exc.value.field == "u"


def test_recursive_schema_is_unsupported() -> None:
    node = {"type": "record", "name": "node", "fields": [
        {"name": "v", "type": "int"}, {"name": "next", "type": ["null", "node"]}]}
    data = write(node, [{"v": 1, "next": {"v": 2, "next": None}}])
    with pytest.raises(UnsupportedFeature, match="recursive") as exc:
        read_avro("rec.avro", data)
    assert exc.value.file == "rec.avro"


def test_file_metadata() -> None:
    data = write(RICH, RICH_RECORDS[:2], codec="deflate",
                 metadata={"format-version": "2", "content": "data"})
    meta = avro_file_metadata("m.avro", data)
    assert meta["format-version"] == b"2"
    assert meta["avro.codec"] == b"deflate"
    assert json.loads(meta["avro.schema"])["name"] == "test.rich"


# --------------------------------------------------------------------------- property-based

OPT = st.none()
POINTS = st.lists(st.fixed_dictionaries({"x": st.floats(), "label": OPT | st.text()}),
                  max_size=4)
HYPO_RECORD = st.fixed_dictionaries({
    "b": st.booleans(),
    "i": st.integers(*I32),
    "l": st.integers(*I64),
    "f": st.floats(width=32),
    "d": st.floats(),
    "s": st.text(max_size=30),
    "by": st.binary(max_size=30),
    "fx": OPT | st.binary(min_size=3, max_size=3),
    "date": OPT | st.dates(),
    "time": OPT | st.times(),
    "ts": OPT | st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    "tstz": OPT | st.datetimes(min_value=dt.datetime(1, 1, 2),
                               max_value=dt.datetime(9999, 12, 30), timezones=st.just(UTC)),
    "dec_b": OPT | st.decimals(min_value=-(10**6), max_value=10**6, places=2),
    "dec_f": OPT | st.decimals(min_value=-(10**27), max_value=10**27, places=10),
    "uid": OPT | st.uuids().map(lambda u: u.bytes),
    "oi": OPT | st.integers(*I32),
    "os": OPT | st.text(),
    "points": OPT | POINTS,
    "nested": OPT | st.lists(st.lists(OPT | st.integers(*I64), max_size=3), max_size=3),
    "amap": OPT | st.dictionaries(st.text(max_size=5), OPT | st.integers(*I64), max_size=3),
    "imap": OPT | st.lists(st.fixed_dictionaries({"key": st.integers(*I32),
                                                  "value": OPT | st.binary(max_size=5)}),
                           max_size=3),
    "again": OPT | st.fixed_dictionaries({"x": st.floats(), "label": OPT | st.text()}),
    "color": st.sampled_from(["RED", "GREEN"]),
    "ts_ms": st.none(),
    "t_ms": st.none(),
})


@settings(max_examples=60)
@given(records=st.lists(HYPO_RECORD, max_size=12), interval=st.integers(1, 2000),
       codec=st.sampled_from(["null", "deflate"]))
def test_random_records_decode_like_fastavro(records: list[dict[str, Any]], interval: int,
                                             codec: str) -> None:
    data = write(RICH, records, codec=codec, sync_interval=interval)
    assert_same_as_fastavro(data, read_avro("h.avro", data))


@settings(max_examples=25)
@given(batches=st.lists(st.lists(HYPO_RECORD, max_size=5), min_size=1, max_size=4))
def test_random_batches_equal_single_file_decoding(batches: list[list[dict[str, Any]]]) -> None:
    files = [(f"f{i}.avro", write(RICH, recs, sync_interval=150))
             for i, recs in enumerate(batches)]
    for (name, data), table in zip(files, read_avro_tables(files), strict=True):
        single = read_avro(name, data)
        assert table.schema == single.schema
        typ = pa.struct(list(table.schema))
        assert [canon(r, typ) for r in table.to_pylist()] == [
            canon(r, typ) for r in single.to_pylist()]


FUZZ_BASES = [write(RICH, RICH_RECORDS[:12], codec=c, sync_interval=300)
              for c in ("null", "deflate")]


@settings(max_examples=200)
@given(base=st.sampled_from(FUZZ_BASES),
       edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                      min_size=1, max_size=4),
       cut=st.none() | st.floats(0, 1))
def test_damaged_bytes_raise_typed_errors(base: bytes, edits: list[tuple[float, int]],
                                          cut: float | None) -> None:
    data = bytearray(base)
    for where, byte in edits:
        data[int(where * len(data))] = byte
    if cut is not None:
        data = data[: int(cut * len(data))]
    try:
        read_avro("damaged.avro", bytes(data))
    except (CorruptFile, UnsupportedFeature) as e:
        assert e.file == "damaged.avro"


def test_small_plain_files_decode_row_wise_exactly_like_lockstep(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest list of many manifests in one block goes through fastavro (cheaper than 1,000
    lockstep steps on one lane): the same Arrow table, projection included."""
    from icenb.io import avro
    from icenb.spec.manifest import avro_schema, manifest_file_type

    schema = avro_schema(manifest_file_type(2), "manifest_file")
    records = [{
        "manifest_path": f"s3://b/m{i}.avro", "manifest_length": 1000 + i,
        "partition_spec_id": i % 3, "content": i % 2, "sequence_number": i,
        "min_sequence_number": i, "added_snapshot_id": 2**62 + i,
        "added_files_count": i, "existing_files_count": 0, "deleted_files_count": 0,
        "added_rows_count": 10 * i, "existing_rows_count": 0, "deleted_rows_count": 0,
        "partitions": None if i % 5 == 0 else [
            {"contains_null": i % 2 == 0, "contains_nan": None if i % 3 else False,
             "lower_bound": None if i % 7 == 0 else i.to_bytes(4, "little"),
             "upper_bound": b"\xff\xfe"}],
        "key_metadata": None} for i in range(300)]
    files = [("list.avro", write(schema, records, codec="deflate")),
             ("tiny.avro", write(schema, records[:3]))]
    projections = [None, ["manifest_path", "partitions.upper_bound"]]
    rowwise = [read_avro_tables(files, columns=c) for c in projections]
    monkeypatch.setattr(avro, "ROWWISE_MAX_LANES", 0)
    lockstep = [read_avro_tables(files, columns=c) for c in projections]
    for a_tables, b_tables in zip(rowwise, lockstep, strict=True):
        for a, b in zip(a_tables, b_tables, strict=True):
            assert a.schema == b.schema and _ipc(a) == _ipc(b)
    assert rowwise[0][0].num_rows == 300
    assert rowwise[1][0].column_names == ["manifest_path", "partitions"]
    # damaged data still names what is wrong (the lockstep decoder decides)
    monkeypatch.setattr(avro, "ROWWISE_MAX_LANES", 8)
    schema_json, blocks = split_blocks(write(schema, records[:20]))
    with pytest.raises(CorruptFile, match="block count mismatch"):
        read_avro("bad.avro", container(schema_json, [(19, b"".join(b for _, b in blocks))]))
