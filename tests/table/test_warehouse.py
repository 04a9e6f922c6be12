"""The embedded warehouse: schema strings and Arrow schemas, create/list/load/drop tables."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.errors import AlreadyExists, NoSuchTable, UnsupportedFeature, ValidationError
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
)
from icenb.table.warehouse import parse_schema, schema_from_arrow


def _shape(schema: Schema) -> list[tuple[str, str, bool, str | None]]:
    return [(f.name, str(f.field_type), f.required, f.doc) for f in schema.fields]


# --------------------------------------------------------------------------- DDL


def test_parse_schema_primitives_and_nullability() -> None:
    s = parse_schema("id long not null, ts timestamptz, name string null, "
                     "`weird name` decimal(9, 2) comment 'it''s money', f fixed[16], "
                     "n bigint, b bool, i integer, d date, t time, tn timestamp_ns")
    assert _shape(s) == [
        ("id", "long", True, None), ("ts", "timestamptz", False, None),
        ("name", "string", False, None), ("weird name", "decimal(9, 2)", False, "it's money"),
        ("f", "fixed[16]", False, None), ("n", "long", False, None),
        ("b", "boolean", False, None), ("i", "int", False, None), ("d", "date", False, None),
        ("t", "time", False, None), ("tn", "timestamp_ns", False, None),
    ]


def test_parse_schema_nested_types_get_distinct_ids() -> None:
    s = parse_schema("loc struct<lat: double not null, lon double>, tags list<string not null>,"
                     " attrs map<string, array<int>>")
    loc, tags, attrs = s.fields
    assert isinstance(loc.field_type, StructType)
    assert [(f.name, f.required) for f in loc.field_type.fields] == [("lat", True),
                                                                      ("lon", False)]
    assert isinstance(tags.field_type, ListType) and tags.field_type.element_required
    assert isinstance(attrs.field_type, MapType)
    assert isinstance(attrs.field_type.value_type, ListType)
    assert attrs.field_type.value_type.element_type == IntegerType()
    ids = sorted(s.field_ids())
    assert len(ids) == len(set(ids)) == 9  # 3 columns, 2 struct fields, 4 list/map ids


@pytest.mark.parametrize("text", ["", "id", "id long,", "id long not", "id notatype",
                                  "id long, id string", "m map<string>", "s struct<a int",
                                  "id long extra", "id decimal(9"])
def test_parse_schema_rejects_bad_strings(text: str) -> None:
    with pytest.raises(ValidationError):
        parse_schema(text)


# --------------------------------------------------------------------------- Arrow schemas


def test_schema_from_arrow_maps_types_and_nullability() -> None:
    arrow = pa.schema([
        pa.field("i8", pa.int8()), pa.field("i64", pa.int64(), nullable=False),
        pa.field("u32", pa.uint32()), pa.field("f", pa.float32()), pa.field("d", pa.float64()),
        pa.field("s", pa.large_string()), pa.field("bin", pa.binary()),
        pa.field("fx", pa.binary(4)), pa.field("dec", pa.decimal128(10, 3)),
        pa.field("day", pa.date32()), pa.field("tm", pa.time64("us")),
        pa.field("ts", pa.timestamp("ns")), pa.field("tz", pa.timestamp("us", tz="Europe/Paris")),
        pa.field("cat", pa.dictionary(pa.int32(), pa.string())),
        pa.field("l", pa.list_(pa.field("item", pa.int32(), nullable=False))),
        pa.field("m", pa.map_(pa.string(), pa.float64())),
        pa.field("st", pa.struct([pa.field("a", pa.int64(), nullable=False)])),
    ])
    s = schema_from_arrow(arrow)
    types = {f.name: f.field_type for f in s.fields}
    assert types["i8"] == IntegerType() and types["i64"] == LongType()
    assert types["u32"] == LongType() and types["f"] == FloatType()
    assert types["d"] == DoubleType() and types["s"] == StringType()
    assert types["bin"] == BinaryType() and types["fx"] == FixedType(4)
    assert types["dec"] == DecimalType(10, 3) and types["day"] == DateType()
    assert types["tm"] == TimeType() and types["ts"] == TimestampType()
    assert types["tz"] == TimestamptzType() and types["cat"] == StringType()
    assert s.find_field("i64").required and not s.find_field("i8").required
    lst = types["l"]
    assert isinstance(lst, ListType) and lst.element_required
    assert isinstance(types["m"], MapType) and isinstance(types["st"], StructType)
    assert len(set(s.field_ids())) == 21


def test_schema_from_arrow_rejects_types_without_an_iceberg_type() -> None:
    with pytest.raises(ValidationError) as e:
        schema_from_arrow(pa.schema([pa.field("x", pa.uint64())]))
    assert e.value.field == "x"


# --------------------------------------------------------------------------- warehouse


def test_create_table_with_every_schema_kind(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    ddl = wh.create_table("db.a", "id long not null, s string")
    arrow = wh.create_table("db.b", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                               pa.field("s", pa.string())]))
    given = wh.create_table("db.c", Schema(NestedField(7, "id", LongType(), True),
                                           NestedField(9, "s", StringType())))
    for t in (ddl, arrow, given):
        assert _shape(t.schema) == [("id", "long", True, None), ("s", "string", False, None)]
        assert [f.field_id for f in t.schema.fields] == [1, 2]  # fresh ids
        assert t.format_version == 2 and t.current_snapshot is None
        assert t.location == str(tmp_path / "wh" / "db" / t.identifier[-1])
    assert wh.tables() == ["db.a", "db.b", "db.c"]
    assert (tmp_path / "wh" / "catalog.db").is_file()


def test_create_table_partition_sort_properties_version(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.events", "id long, ts timestamptz, s string, n int",
                        partition_by=["day(ts)", "bucket(16, id)", "truncate(4, s)", "n"],
                        sort_by=["id", "ts desc nulls last"], format_version=3,
                        properties={"owner": "ana"})
    assert [(f.name, str(f.transform), f.field_id) for f in t.spec.fields] == [
        ("ts_day", "day", 1000), ("id_bucket", "bucket[16]", 1001),
        ("s_trunc", "truncate[4]", 1002), ("n", "identity", 1003)]
    assert [(t.schema.column_name(f.source_ids[0]), f.direction.value, f.null_order.value)
            for f in t.sort_order.fields] == [("id", "asc", "nulls-first"),
                                              ("ts", "desc", "nulls-last")]
    assert t.format_version == 3 and t.properties["owner"] == "ana"
    again = wh.table("db.events")
    assert again.metadata.table_uuid == t.metadata.table_uuid
    assert again.spec == t.spec and again.sort_order == t.sort_order


def test_namespaces_are_created_on_demand_and_explicitly(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("a.b.t", "id long")
    assert wh.namespaces() == [("a",)] and wh.namespaces("a") == [("a", "b")]
    wh.create_namespace("other", {"owner": "bo"})
    with pytest.raises(AlreadyExists):
        wh.create_namespace("other")
    assert wh.tables("a.b") == ["a.b.t"] and wh.tables("other") == []


def test_invalid_requests_write_nothing(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    wh.create_table("db.t", "id long")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(AlreadyExists):
        wh.create_table("db.t", "id long")
    with pytest.raises(ValidationError):
        wh.create_table("db.u", "s string", partition_by=["bucket(4, nope)"])
    with pytest.raises(ValidationError):
        wh.create_table("db.u", "b boolean", partition_by=["day(b)"])
    with pytest.raises(ValidationError):
        wh.create_table("db.u", "id long", sort_by=["id sideways"])
    with pytest.raises(ValidationError):
        wh.create_table("u", "id long")  # no namespace
    with pytest.raises(ValidationError):
        wh.create_table("db.u", "t timestamp_ns", format_version=2)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert wh.tables() == ["db.t"]


def test_drop_table_with_and_without_purge(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    kept = wh.create_table("db.kept", "id long")
    kept.append([{"id": 1}])
    purged = wh.create_table("db.purged", "id long")
    purged.append([{"id": 1}])
    wh.drop_table("db.kept")
    wh.drop_table("db.purged", purge=True)
    assert wh.tables() == []
    with pytest.raises(NoSuchTable):
        wh.table("db.kept")
    assert any((tmp_path / "db" / "kept" / "data").iterdir())
    assert not [p for p in (tmp_path / "db" / "purged").rglob("*") if p.is_file()]


def test_tables_opened_by_location_are_read_only(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    t.append([{"id": 1}])
    opened = icenb.open(t.metadata_location or "")
    with pytest.raises(UnsupportedFeature, match="read-only"):
        opened.append([{"id": 2}])
    assert icenb.open(t.metadata_location or "").scan().to_arrow().num_rows == 1


def test_nanosecond_schema_needs_v3(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "ts timestamp_ns", format_version=3)
    assert t.schema.fields[0].field_type == TimestampNanoType()


def test_a_filesystem_warehouse_writes_the_hadoop_layout(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path, catalog="filesystem")
    t = wh.create_table("db.events", "id long not null, s string", partition_by="bucket(4, id)")
    t.append([{"id": i, "s": str(i)} for i in range(10)])
    with t.update_schema() as u:
        u.add_column("n", "int")
    t.append([{"id": 10, "s": "x", "n": 1}])
    assert wh.tables() == ["db.events"]
    metadata = tmp_path / "db" / "events" / "metadata"
    assert (metadata / "version-hint.text").read_text().strip() == "4"
    assert sorted(p.name for p in metadata.glob("v*.metadata.json")) == [
        f"v{i}.metadata.json" for i in range(1, 5)]
    again = icenb.load_table(tmp_path, "db.events")  # a directory without catalog.db
    assert again.metadata_location == t.metadata_location
    assert again.scan().to_arrow().num_rows == 11
    assert not (tmp_path / "catalog.db").exists()


def test_a_warehouse_catalog_kind_must_be_known(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="catalog"):
        icenb.warehouse(tmp_path, catalog="hive")
    assert list(tmp_path.iterdir()) == []
