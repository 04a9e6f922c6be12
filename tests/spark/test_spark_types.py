"""Iceberg types as Spark types, and icenb's Arrow data as the Arrow Spark reads (no JVM)."""

from __future__ import annotations

import datetime
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import types as st

from icenb.errors import UnsupportedFeature
from icenb.spark.spark_types import (
    schema_from_spark,
    spark_arrow_schema,
    spark_schema,
    spark_to_arrow_schema,
    to_spark_arrow,
)
from icenb.spec.arrow_schema import to_arrow_schema
from icenb.spec.schema import Schema
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)


def test_primitive_types_map_like_icebergs_spark_integration() -> None:
    types = [BooleanType(), IntegerType(), LongType(), FloatType(), DoubleType(),
             DecimalType(38, 10), DateType(), TimestampType(), TimestamptzType(), StringType(),
             UUIDType(), FixedType(16), BinaryType(), TimeType(), GeometryType(),
             GeographyType(), UnknownType()]
    schema = Schema(*(NestedField(i + 1, f"c{i}", t) for i, t in enumerate(types)))
    assert spark_schema(schema).simpleString() == (
        "struct<c0:boolean,c1:int,c2:bigint,c3:float,c4:double,c5:decimal(38,10),c6:date,"
        "c7:timestamp_ntz,c8:timestamp,c9:string,c10:string,c11:binary,c12:binary,"
        "c13:string,c14:binary,c15:binary,c16:void>")


def test_nested_types_keep_names_nullability_and_docs() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True, doc="the key"),
        NestedField(2, "s", StructType(NestedField(3, "a", IntegerType(), required=True))),
        NestedField(4, "rs", StructType(NestedField(5, "b", IntegerType(), required=True)),
                    required=True),
        NestedField(6, "l", ListType(7, StringType(), element_required=True)),
        NestedField(8, "m", MapType(9, StringType(), 10, LongType())),
    )
    out = spark_schema(schema)
    assert out["id"] == st.StructField("id", st.LongType(), False, {"comment": "the key"})
    # A required field of a struct that may be null is nullable (a null struct's fields are
    # null in Arrow); under a required struct it stays non-null.
    assert out["s"].dataType == st.StructType([st.StructField("a", st.IntegerType(), True)])
    assert out["rs"].dataType == st.StructType([st.StructField("b", st.IntegerType(), False)])
    assert out["rs"].nullable is False
    assert out["l"].dataType == st.ArrayType(st.StringType(), containsNull=False)
    assert out["m"].dataType == st.MapType(st.StringType(), st.LongType(), True)


@pytest.mark.parametrize("t", [TimestampNanoType(), TimestamptzNanoType(), VariantType()])
def test_types_spark_cannot_hold_are_refused_naming_the_column(t: object) -> None:
    schema = Schema(NestedField(1, "id", LongType()),
                    NestedField(2, "outer", StructType(NestedField(3, "bad", t))))  # type: ignore[arg-type]
    with pytest.raises(UnsupportedFeature, match="cannot read this column through Spark") as e:
        spark_schema(schema)
    assert e.value.field == "outer.bad"


def test_uuid_time_and_fixed_values_convert_at_any_depth() -> None:
    u1, u2 = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e0"), uuid.uuid4()
    schema = Schema(
        NestedField(1, "u", UUIDType()),
        NestedField(2, "t", TimeType()),
        NestedField(3, "f", FixedType(3)),
        NestedField(4, "s", StructType(NestedField(5, "iu", UUIDType(), required=True))),
        NestedField(6, "l", ListType(7, TimeType())),
        NestedField(8, "m", MapType(9, UUIDType(), 10, FixedType(2))),
    )
    rows = [
        {"u": u1.bytes, "t": datetime.time(0, 0), "f": b"abc", "s": {"iu": u2.bytes},
         "l": [datetime.time(23, 59, 59, 999999), None], "m": [(u1.bytes, b"xy")]},
        {"u": None, "t": None, "f": None, "s": None, "l": None, "m": None},
        {"u": u2.bytes, "t": datetime.time(9, 5, 7, 1), "f": b"\x00\x01\x02", "s": None,
         "l": [], "m": [(u2.bytes, None)]},
    ]
    table = pa.Table.from_pylist(rows, schema=to_arrow_schema(schema))
    # Sliced input (offsets into shared buffers) converts the same way.
    out = to_spark_arrow(table.slice(1), schema)
    assert out.schema == spark_arrow_schema(schema)
    assert out.to_pylist() == [
        {"u": None, "t": None, "f": None, "s": None, "l": None, "m": None},
        {"u": str(u2), "t": "09:05:07.000001", "f": b"\x00\x01\x02", "s": None, "l": [],
         "m": [(str(u2), None)]},
    ]
    first = to_spark_arrow(table.slice(0, 1), schema).to_pylist()[0]
    assert first == {"u": str(u1), "t": "00:00:00.000000", "f": b"abc", "s": {"iu": str(u2)},
                     "l": ["23:59:59.999999", None], "m": [(str(u1), b"xy")]}


def test_data_without_conversions_only_relaxes_nullability() -> None:
    schema = Schema(NestedField(1, "s", StructType(NestedField(2, "a", LongType(),
                                                               required=True))),
                    NestedField(3, "ts", TimestamptzType()))
    table = pa.Table.from_pylist([{"s": None, "ts": None}, {"s": {"a": 1}, "ts": None}],
                                 schema=to_arrow_schema(schema))
    out = to_spark_arrow(table, schema)
    assert out.schema.field("s").type == pa.struct([pa.field("a", pa.int64(), nullable=True)])
    assert out.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert out.to_pylist() == table.to_pylist()


def test_create_table_takes_a_spark_schema(tmp_path: Path) -> None:
    import icenb

    spark_schema = st.StructType([
        st.StructField("id", st.LongType(), nullable=False),
        st.StructField("ts", st.TimestampType()),
        st.StructField("local", st.TimestampNTZType()),
        st.StructField("price", st.DecimalType(10, 2)),
        st.StructField("tags", st.ArrayType(st.StringType())),
        st.StructField("attrs", st.MapType(st.StringType(), st.IntegerType())),
        st.StructField("point", st.StructType([st.StructField("x", st.DoubleType(),
                                                              nullable=False)])),
    ])
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", spark_schema, partition_by="day(ts)")
    ddl = wh.create_table(
        "db.ddl", "id long not null, ts timestamptz, local timestamp, price decimal(10, 2), "
        "tags list<string>, attrs map<string, int>, point struct<x: double not null>",
        partition_by="day(ts)")
    assert t.schema == ddl.schema
    assert t.spec == ddl.spec


def test_spark_schemas_map_to_arrow_without_pyspark_internals() -> None:
    """icenb maps Spark types to Arrow itself (pyspark's helper changed signature in 4.3)."""
    schema = st.StructType([
        st.StructField("b", st.ByteType()),
        st.StructField("s", st.ShortType()),
        st.StructField("c", st.CharType(3)),
        st.StructField("v", st.VarcharType(8)),
        st.StructField("bin", st.BinaryType(), nullable=False),
        st.StructField("d", st.DateType()),
        st.StructField("n", st.NullType()),
        st.StructField("nested", st.ArrayType(st.StructType([
            st.StructField("ts", st.TimestampType(), nullable=False)]), containsNull=False)),
    ])
    assert spark_to_arrow_schema(schema) == pa.schema([
        pa.field("b", pa.int8()),
        pa.field("s", pa.int16()),
        pa.field("c", pa.string()),
        pa.field("v", pa.string()),
        pa.field("bin", pa.binary(), nullable=False),
        pa.field("d", pa.date32()),
        pa.field("n", pa.null()),
        pa.field("nested", pa.list_(pa.field("element", pa.struct([
            pa.field("ts", pa.timestamp("us", tz="UTC"), nullable=False)]), nullable=False))),
    ])


@pytest.mark.parametrize("dt", [st.DayTimeIntervalType(), st.YearMonthIntervalType(),
                                st.CalendarIntervalType(), st.VariantType()])
def test_spark_types_without_an_iceberg_type_are_refused(dt: st.DataType) -> None:
    schema = st.StructType([st.StructField("id", st.LongType()),
                            st.StructField("m", st.MapType(st.StringType(), dt))])
    with pytest.raises(UnsupportedFeature, match="no Iceberg type") as info:
        schema_from_spark(schema)
    assert info.value.field == "m.value"
