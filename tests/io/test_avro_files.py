"""Avro data and delete files written by Iceberg Java, read with field ids (spec Appendix A:
Avro)."""

from __future__ import annotations

from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from icenb.errors import CorruptFile
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.data_files.avro import read_avro_file
from icenb.io.file_io import FileIO
from tests.io.test_orc_files import _data_files, _ids
from tests.reference_fixtures import JavaTables


def test_java_avro_file_has_every_id_and_iceberg_types(java_tables: JavaTables) -> None:
    [path] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.avro")
    table = read_avro_file(FileIO().new_input(str(path)))
    schema = table.schema
    assert _ids(schema) == {
        "id": 1, "u": 2, "f16": 3, "t": 4, "tstz": 5, "ts": 6, "dec": 7,
        "s": (8, {"inner_u": 15, "inner_f": 16}),
        "l": (9, {"element": 17}),
        "m": (10, {"key": 18, "value": 19}),  # uuid keys: an array of key/value records
        "mi": (11, {"key": 20, "value": 21}),
        "b": 12, "d": 13, "fmt": 14,
    }
    assert schema.field("u").type == pa.binary(16)
    assert schema.field("t").type == pa.time64("us")
    assert schema.field("tstz").type == pa.timestamp("us", tz="UTC")
    assert schema.field("ts").type == pa.timestamp("us")
    assert schema.field("dec").type == pa.decimal128(38, 10)
    assert schema.field("m").type.key_type == pa.binary(16)
    row = {r["id"]: r for r in table.to_pylist()}[10_000_000_021]
    assert sorted(row["mi"], key=lambda kv: kv[0]) == [(-1, None), (1, "ünï 1")]
    assert str(row["dec"]) == "-1234567890123456789012345678.0123456781"
    assert row["d"].isoformat() == "0001-01-02"


def test_string_map_ids_come_from_key_and_value_ids(java_tables: JavaTables) -> None:
    paths = _data_files(java_tables, "db.v2_avro", "data/*.avro")
    data = next(p for p in paths if not p.name.endswith("-deletes.avro"))
    table = read_avro_file(FileIO().new_input(str(data)), field_ids={16, 17})
    assert _ids(table.schema) == {"c_map": (16, {"key": 28, "value": 29}),
                                  "c_map_complex": (17, {"key": 30, "value": (31, {
                                      "v": 32, "w": (33, {"element": 34})})})}


def test_projection_by_field_id_and_row_count(java_tables: JavaTables) -> None:
    [path] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.avro")
    table = read_avro_file(FileIO().new_input(str(path)), field_ids={14, 1, 999})
    assert table.column_names == ["id", "fmt"]
    assert table.column("fmt").to_pylist() == ["AVRO"] * 3
    nothing = read_avro_file(FileIO().new_input(str(path)), field_ids=set())
    assert nothing.num_columns == 0 and nothing.num_rows == 3


def test_position_and_equality_delete_files(java_tables: JavaTables) -> None:
    [pos] = _data_files(java_tables, "db.v2_avro", "data/*-deletes.avro")[:1]
    table = read_avro_file(FileIO().new_input(str(pos)))
    assert _ids(table.schema) == {"file_path": 2147483546, "pos": 2147483545}
    [eq] = _data_files(java_tables, "db.java_v2_file_formats", "data/eq-delete.avro")
    deletes = read_avro_file(FileIO().new_input(str(eq)))
    assert _ids(deletes.schema) == {"id": 1}
    assert deletes.column("id").to_pylist() == [10_000_000_020]


def _write_without_ids(path: Path) -> None:
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ]}
    with path.open("wb") as out:
        fastavro.writer(out, schema, [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": []}])


def test_name_mapping_applies_only_to_files_without_ids(tmp_path: Path,
                                                        java_tables: JavaTables) -> None:
    path = tmp_path / "no-ids.avro"
    _write_without_ids(path)
    calls = []

    def mapping(schema: pa.Schema) -> pa.Schema:
        calls.append(schema.names)
        tags = pa.list_(schema.field("tags").type.value_field.with_metadata(
            {FIELD_ID_KEY: b"3"}))
        return pa.schema([schema.field("id").with_metadata({FIELD_ID_KEY: b"1"}),
                          pa.field("tags", tags, metadata={FIELD_ID_KEY: b"2"})])

    table = read_avro_file(FileIO().new_input(str(path)), name_mapping=mapping, field_ids={2})
    assert calls == [["id", "tags"]]
    assert _ids(table.schema) == {"tags": (2, {"element": 3})}
    assert table.column("tags").to_pylist() == [["a"], []]
    [with_ids] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.avro")
    read_avro_file(FileIO().new_input(str(with_ids)), name_mapping=mapping)
    assert len(calls) == 1


@pytest.mark.parametrize("damage", ["first half", "no tail", "garbage", "empty", "bad block"])
def test_truncated_or_garbage_avro_is_corrupt_file(java_tables: JavaTables, tmp_path: Path,
                                                   damage: str) -> None:
    [path] = _data_files(java_tables, "db.java_v2_file_formats", "data/java-*.avro")
    data = path.read_bytes()
    bad = {"first half": data[: len(data) // 2], "no tail": data[:-10],
           "garbage": b"not an avro file" * 10, "empty": b"",
           "bad block": data[:-40] + b"\xff" * 24 + data[-16:]}[damage]
    target = tmp_path / "damaged.avro"
    target.write_bytes(bad)
    with pytest.raises(CorruptFile) as info:
        read_avro_file(FileIO().new_input(str(target)))
    assert info.value.file == str(target)
