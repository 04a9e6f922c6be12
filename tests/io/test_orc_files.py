"""ORC data and delete files written by Iceberg Java, read with field ids (spec Appendix A: ORC)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

from icenb.errors import CorruptFile
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.data_files.orc import iceberg_orc_schema, read_orc_file
from icenb.io.file_io import FileIO
from tests.reference_fixtures import JavaTables


def _ids(t: pa.DataType | pa.Schema) -> dict[str, object]:
    """Field name -> (id, nested ids) of every field, recursively."""
    out: dict[str, object] = {}
    fields = list(t) if isinstance(t, pa.Schema) else [t.field(i) for i in range(t.num_fields)]
    for f in fields:
        fid = int(f.metadata[FIELD_ID_KEY]) if f.metadata and FIELD_ID_KEY in f.metadata else None
        ft = f.type
        if pa.types.is_struct(ft):
            out[f.name] = (fid, _ids(ft))
        elif pa.types.is_list(ft):
            out[f.name] = (fid, _ids(pa.struct([ft.value_field])))
        elif pa.types.is_map(ft):
            out[f.name] = (fid, _ids(pa.struct([ft.key_field, ft.item_field])))
        else:
            out[f.name] = fid
    return out


def _data_files(java_tables: JavaTables, name: str, pattern: str) -> list[Path]:
    found = sorted(Path(java_tables.location(name)).glob(pattern))
    assert found, (name, pattern)
    return found


def test_java_orc_file_has_every_id_and_iceberg_types(java_tables: JavaTables) -> None:
    [path] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.orc")
    table = read_orc_file(FileIO().new_input(str(path)))
    schema = table.schema
    assert _ids(schema) == {
        "id": 1, "u": 2, "f16": 3, "t": 4, "tstz": 5, "ts": 6, "dec": 7,
        "s": (8, {"inner_u": 15, "inner_f": 16}),
        "l": (9, {"item": 17}),
        "m": (10, {"key": 18, "value": 19}),
        "mi": (11, {"key": 20, "value": 21}),
        "b": 12, "d": 13, "fmt": 14,
    }
    # ORC binary with iceberg.binary-type, long with iceberg.long-type=TIME, timestamps in ns
    # with iceberg.timestamp-unit=MICROS become the Parquet path's Arrow types.
    assert schema.field("u").type == pa.binary(16)
    assert schema.field("f16").type == pa.binary(16)
    assert schema.field("s").type.field("inner_f").type == pa.binary(3)
    assert schema.field("t").type == pa.time64("us")
    assert schema.field("l").type.value_type == pa.time64("us")
    assert schema.field("m").type.key_type == pa.binary(16)
    assert schema.field("tstz").type == pa.timestamp("us", tz="UTC")
    assert schema.field("ts").type == pa.timestamp("us")
    assert schema.field("b").type == pa.binary()
    assert schema.field("dec").type == pa.decimal128(38, 10)
    row = {r["id"]: r for r in table.to_pylist()}[10_000_000_011]
    assert row["t"].isoformat() == "23:59:51.123456"
    assert row["tstz"].isoformat() == "1969-12-31T23:59:51.000001+00:00"
    assert row["m"] == [(bytes.fromhex("f79c3e09677c4bbda4793f349cb785e1"), 10_000_000_001)]
    assert not any(k.startswith(b"iceberg.") for k in schema.field("t").metadata)


def test_projection_by_field_id_keeps_file_order_and_row_count(java_tables: JavaTables) -> None:
    [path] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.orc")
    table = read_orc_file(FileIO().new_input(str(path)), field_ids={14, 1, 8, 999})
    assert table.column_names == ["id", "s", "fmt"]
    assert table.num_rows == 3
    nothing = read_orc_file(FileIO().new_input(str(path)), field_ids=set())
    assert nothing.num_columns == 0 and nothing.num_rows == 3


def test_position_delete_file_has_reserved_ids(java_tables: JavaTables) -> None:
    [path] = _data_files(java_tables, "db.v2_orc", "data/*-deletes.orc")
    table = read_orc_file(FileIO().new_input(str(path)))
    assert _ids(table.schema) == {"file_path": 2147483546, "pos": 2147483545}
    assert table.num_rows >= 1
    assert all(p.endswith(".orc") for p in table.column("file_path").to_pylist())


def test_name_mapping_applies_only_to_files_without_ids(java_tables: JavaTables) -> None:
    [imported] = _data_files(java_tables, "db.v2_orc_imported", "imported/*.orc")
    [with_ids] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.orc")
    calls = []

    def mapping(schema: pa.Schema) -> pa.Schema:
        calls.append(schema.names)
        ids = {"id": b"1", "s": b"2", "st": b"3", "m": b"4"}
        return pa.schema([f.with_metadata({FIELD_ID_KEY: ids[f.name]}) for f in schema])

    table = read_orc_file(FileIO().new_input(str(imported)), name_mapping=mapping,
                          field_ids={1, 2})
    assert calls == [["id", "s", "st", "m"]]
    assert table.column_names == ["id", "s"]
    assert _ids(table.schema) == {"id": 1, "s": 2}
    assert table.column("s").to_pylist() == ["0", "1", "2"]
    read_orc_file(FileIO().new_input(str(with_ids)), name_mapping=mapping)
    assert len(calls) == 1
    unmapped = read_orc_file(FileIO().new_input(str(imported)))
    assert _ids(unmapped.schema)["id"] is None


def test_nanosecond_timestamps_keep_their_unit(tmp_path: Path) -> None:
    meta = {"iceberg.id": "1", "iceberg.timestamp-unit": "NANOS"}
    field = pa.field("ts", pa.timestamp("ns", tz="UTC"), metadata=meta)
    po.write_table(pa.table([pa.array([1_000_000_001], field.type)], schema=pa.schema([field])),
                   tmp_path / "ns.orc")
    table = read_orc_file(FileIO().new_input(str(tmp_path / "ns.orc")))
    assert table.schema.field("ts").type == pa.timestamp("ns", tz="UTC")
    assert table.column("ts").cast(pa.int64()).to_pylist() == [1_000_000_001]


def test_sub_microsecond_digits_are_rounded_down_as_java_does(tmp_path: Path) -> None:
    """A file from another writer with nanoseconds in a micros column (no timestamp-unit
    attribute), also inside a list: floor to micros, like Iceberg's Spark ORC readers."""
    ts = pa.timestamp("ns")
    fields = [pa.field("ts", ts, metadata={"iceberg.id": "1"}),
              pa.field("l", pa.list_(pa.field("item", ts, metadata={"iceberg.id": "3"})),
                       metadata={"iceberg.id": "2"})]
    values = [1_000_000_001, -1, -1_000, None]
    data = pa.table([pa.array(values, ts), pa.array([[v] for v in values], pa.list_(ts))],
                    schema=pa.schema(fields))
    po.write_table(data, tmp_path / "ns.orc")
    table = read_orc_file(FileIO().new_input(str(tmp_path / "ns.orc")))
    assert table.schema.field("ts").type == pa.timestamp("us")
    expected = [1_000_000, -1, -1, None]
    assert table.column("ts").cast(pa.int64()).to_pylist() == expected
    assert [v[0] for v in table.column("l").cast(pa.list_(pa.int64())).to_pylist()] == expected
    assert _ids(table.schema) == {"ts": 1, "l": (2, {"item": 3})}


def test_schema_conversion_ignores_fields_without_attributes() -> None:
    schema = iceberg_orc_schema(pa.schema([pa.field("x", pa.binary()),
                                           pa.field("y", pa.int64())]))
    assert schema == pa.schema([pa.field("x", pa.binary()), pa.field("y", pa.int64())])
    assert schema.field("x").metadata is None


@pytest.mark.parametrize("damage", ["first half", "no tail", "garbage", "empty"])
def test_truncated_or_garbage_orc_is_corrupt_file(java_tables: JavaTables, tmp_path: Path,
                                                  damage: str) -> None:
    [path] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.orc")
    data = path.read_bytes()
    bad = {"first half": data[: len(data) // 2], "no tail": data[:-10],
           "garbage": b"not an orc file" * 10, "empty": b""}[damage]
    target = tmp_path / "damaged.orc"
    target.write_bytes(bad)
    with pytest.raises(CorruptFile) as info:
        read_orc_file(FileIO().new_input(str(target)))
    assert info.value.file == str(target)


def test_fixed_column_with_values_of_another_length_is_corrupt(tmp_path: Path) -> None:
    meta = {"iceberg.id": "1", "iceberg.binary-type": "FIXED", "iceberg.length": "16"}
    field = pa.field("f", pa.binary(), metadata=meta)
    po.write_table(pa.table([pa.array([b"abc"])], schema=pa.schema([field])),
                   tmp_path / "fixed.orc")
    with pytest.raises(CorruptFile, match=r"fixed\.orc") as info:
        read_orc_file(FileIO().new_input(str(tmp_path / "fixed.orc")))
    assert info.value.field == "f"
