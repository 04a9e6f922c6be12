"""Single values (spec Appendix D): binary, bound and JSON forms, coercion, order, display."""

from __future__ import annotations

import json
import math
import struct
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import InvalidMetadata, UnsupportedFeature, ValidationError
from icenb.spec import values
from icenb.spec.schema import field_from_json, field_to_json, schema_from_json, schema_to_json
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
    IcebergType,
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
from icenb.spec.values import (
    coerce,
    compare,
    from_bound_bytes,
    from_bytes,
    from_json,
    to_bound_bytes,
    to_bytes,
    to_human,
    to_json,
    wkb_to_wkt,
    wkt_to_wkb,
)

SPEC_UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
DAY_2017_11_16 = 17486  # days from 1970-01-01
MICROS_2017_11_16T22_31_08 = 1510871468000000


def f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


# --------------------------------------------------------------------------- binary golden

BINARY_GOLDEN: list[tuple[IcebergType, Any, str]] = [
    (BooleanType(), False, "00"),
    (BooleanType(), True, "01"),
    (IntegerType(), 34, "22000000"),
    (IntegerType(), -1, "ffffffff"),
    (LongType(), 34, "2200000000000000"),
    (FloatType(), 1.0, "0000803f"),
    (FloatType(), -0.0, "00000080"),
    (DoubleType(), 1.0, "000000000000f03f"),
    (DateType(), DAY_2017_11_16, "4e440000"),
    (TimeType(), 81068123456, (81068123456).to_bytes(8, "little").hex()),
    (TimestampType(), MICROS_2017_11_16T22_31_08,
     MICROS_2017_11_16T22_31_08.to_bytes(8, "little").hex()),
    (TimestamptzType(), -1, "ffffffffffffffff"),
    (TimestampNanoType(), 1510871468000000001, (1510871468000000001).to_bytes(8, "little").hex()),
    (TimestamptzNanoType(), 1, "0100000000000000"),
    (StringType(), "iceberg", b"iceberg".hex()),
    (StringType(), "é", "c3a9"),
    # Appendix B, note 3: the uuid's bytes are F7 9C 3E 09 67 7C 4B BD A4 79 3F 34 9C B7 85 E7
    (UUIDType(), SPEC_UUID, "f79c3e09677c4bbda4793f349cb785e7"),
    (FixedType(4), b"\x00\x01\x02\x03", "00010203"),
    (BinaryType(), b"\x00\x01\x02\xff", "000102ff"),
    (BinaryType(), b"", ""),
    (DecimalType(9, 2), Decimal("14.20"), "058c"),
    (DecimalType(9, 2), Decimal("-14.20"), "fa74"),
    (GeometryType(), bytes.fromhex("01010000000000000000003e400000000000002440"),
     "01010000000000000000003e400000000000002440"),
]


@pytest.mark.parametrize(("t", "value", "hex_bytes"), BINARY_GOLDEN)
def test_binary_single_value_golden(t: IcebergType, value: Any, hex_bytes: str) -> None:
    """Spec: Appendix D, Binary single-value serialization (and Appendix B's uuid bytes)."""
    assert to_bytes(t, value).hex() == hex_bytes
    back = from_bytes(t, bytes.fromhex(hex_bytes))
    assert back == value and type(back) is type(value)


def test_uuid_bytes_are_big_endian_as_in_appendix_b() -> None:
    expected = bytes([0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                      0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7])
    assert to_bytes(UUIDType(), SPEC_UUID) == expected
    assert from_bytes(UUIDType(), bytearray(expected)) == SPEC_UUID


@pytest.mark.parametrize(
    ("unscaled_value", "hex_bytes"),
    [(0, "00"), (-1, "ff"), (1, "01"), (127, "7f"), (128, "0080"), (-128, "80"),
     (-129, "ff7f"), (255, "00ff"), (256, "0100"), (32767, "7fff"), (32768, "008000"),
     (-32768, "8000"), (-32769, "ff7fff"), (10**38 - 1, "4b3b4ca85a86c47a098a223fffffffff"),
     (-(10**38) + 1, "b4c4b357a5793b85f675ddc000000001")],
)
def test_decimal_uses_minimum_bytes(unscaled_value: int, hex_bytes: str) -> None:
    """Spec: Appendix D: decimals use the minimum number of two's-complement bytes."""
    t = DecimalType(38, 0)
    value = Decimal(unscaled_value)
    assert to_bytes(t, value).hex() == hex_bytes
    assert from_bytes(t, bytes.fromhex(hex_bytes)) == value


def test_decimal_read_accepts_any_length_and_keeps_the_type_scale() -> None:
    t = DecimalType(9, 2)
    padded = from_bytes(t, b"\x00\x00\x05\x8c")  # e.g. written as a fixed-size value
    assert padded == Decimal("14.20") and str(padded) == "14.20"
    assert str(from_bytes(t, b"\xff\xff")) == "-0.01"
    assert str(from_bytes(DecimalType(5, -2), b"\x7b")) == "1.23E+4"  # 123 * 10**2
    with pytest.raises(ValidationError):
        from_bytes(t, b"")


def test_boolean_reads_any_non_zero_byte_as_true() -> None:
    assert from_bytes(BooleanType(), b"\x02") is True
    assert from_bytes(BooleanType(), b"\xff") is True
    assert from_bytes(BooleanType(), b"\x00") is False


@pytest.mark.parametrize(
    ("t", "data", "expected"),
    [
        (LongType(), struct.pack("<i", -5), -5),
        (LongType(), struct.pack("<i", 2**31 - 1), 2**31 - 1),
        (DoubleType(), struct.pack("<f", 1.5), 1.5),
        (DoubleType(), struct.pack("<f", -0.0), -0.0),
        (TimestampType(), struct.pack("<i", DAY_2017_11_16), DAY_2017_11_16 * 86_400_000_000),
        (TimestampType(), struct.pack("<i", -1), -86_400_000_000),
        (TimestampNanoType(), struct.pack("<i", DAY_2017_11_16),
         DAY_2017_11_16 * 86_400_000_000_000),
    ],
)
def test_bounds_written_before_a_type_promotion(t: IcebergType, data: bytes, expected: Any) -> None:
    """Spec: Schema Evolution: a bound's length tells the type it was written with."""
    got = from_bytes(t, data)
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected)


def test_promoted_date_bound_out_of_nanosecond_range_fails() -> None:
    """Spec: date -> timestamp_ns: values outside the promoted type's range must fail."""
    with pytest.raises(ValidationError, match="out of range"):
        from_bytes(TimestampNanoType(), struct.pack("<i", 2**31 - 1))


@pytest.mark.parametrize(
    ("t", "data"),
    [
        (IntegerType(), b"\x01\x00"),
        (LongType(), b"\x01\x00\x00"),
        (TimestamptzType(), b"\x00\x00\x00\x00"),  # date -> timestamptz is no promotion
        (FloatType(), b"\x00" * 8),
        (BooleanType(), b""),
        (UUIDType(), b"\x00" * 15),
        (FixedType(4), b"\x00" * 3),
        (FixedType(4), b"\x00" * 5),
        (StringType(), b"\xff\xfe"),
        (TimeType(), struct.pack("<q", 86_400_000_000)),
        (TimeType(), struct.pack("<q", -1)),
    ],
)
def test_bad_binary_values_are_rejected(t: IcebergType, data: bytes) -> None:
    with pytest.raises(ValidationError):
        from_bytes(t, data)


NOT_BINARY = [
    StructType(NestedField(1, "a", IntegerType())),
    ListType(2, IntegerType()),
    MapType(3, StringType(), 4, IntegerType()),
    UnknownType(),
    VariantType(),
]


@pytest.mark.parametrize("t", NOT_BINARY, ids=str)
def test_types_without_binary_form(t: IcebergType) -> None:
    """Spec: Appendix D: struct, list, map, unknown and variant: "Not supported"."""
    with pytest.raises(ValidationError, match="not supported"):
        to_bytes(t, {1: 1} if isinstance(t, StructType) else [1])
    with pytest.raises(ValidationError, match="not supported"):
        from_bytes(t, b"\x01")


@pytest.mark.parametrize(
    ("t", "value", "message"),
    [
        (FixedType(4), b"\x00" * 3, "exactly 4 bytes"),
        (DecimalType(9, 2), Decimal("14.2"), "scale must be 2"),
        (DecimalType(9, 2), Decimal("14.200"), "scale must be 2"),
        (DecimalType(3, 2), Decimal("14.20"), "more than 3 digits"),
        (DecimalType(9, 2), Decimal("NaN"), "finite"),
        (DecimalType(9, 2), 14.2, "decimal"),
        (IntegerType(), 2**31, "out of range"),
        (IntegerType(), True, "expected an int"),
        (LongType(), 2**63, "out of range"),
        (TimeType(), 86_400_000_000, "out of range"),
        (FloatType(), 1e39, "32-bit float"),
        (DoubleType(), 1, "expected a float"),
        (BooleanType(), 1, "expected a bool"),
        (StringType(), b"x", "expected a str"),
        (StringType(), "\ud800", "UTF-8"),
        (UUIDType(), str(SPEC_UUID), "uuid.UUID"),
    ],
)
def test_invalid_values_do_not_serialize(t: IcebergType, value: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as info:
        to_bytes(t, value, field="col")
    assert info.value.field == "col"
    assert info.value.has_value


def test_null_has_no_binary_form() -> None:
    with pytest.raises(ValidationError, match="null"):
        to_bytes(IntegerType(), None)


# --------------------------------------------------------------------------- bounds


def test_nan_is_never_a_bound_but_signed_zeros_are() -> None:
    """Spec: Manifests data_file note [2]: NaNs are not permitted as lower or upper bounds."""
    for t in (FloatType(), DoubleType()):
        with pytest.raises(ValidationError, match="NaN"):
            to_bound_bytes(t, math.nan, field="f")
        assert to_bound_bytes(t, -0.0) == to_bytes(t, -0.0)
        assert math.copysign(1, from_bound_bytes(t, to_bound_bytes(t, -0.0))) == -1
    assert to_bound_bytes(IntegerType(), 34) == b"\x22\x00\x00\x00"
    assert from_bound_bytes(StringType(), b"ice") == "ice"


@pytest.mark.parametrize(
    ("point", "layout"),
    [
        ((1.0, 2.0), "<2d"),
        ((1.0, 2.0, 3.0), "<3d"),
        ((1.0, 2.0, math.nan, 4.0), "<4d"),
        ((1.0, 2.0, 3.0, 4.0), "<4d"),
    ],
)
def test_geospatial_bounds_are_points(point: tuple[float, ...], layout: str) -> None:
    """Spec (released v3): Appendix D, Bound serialization: x:y, x:y:z, x:y:NaN:m, x:y:z:m."""
    for t in (GeometryType(), GeographyType()):
        data = to_bound_bytes(t, point)
        assert data == struct.pack(layout, *point)
        back = from_bound_bytes(t, data)
        assert len(back) == len(point)
        assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(back, point,
                                                                               strict=True))


def test_geospatial_bound_normalizes_unset_dimensions() -> None:
    assert len(to_bound_bytes(GeometryType(), (1, 2, math.nan, math.nan))) == 16
    assert len(to_bound_bytes(GeometryType(), (1, 2, 3, math.nan))) == 24


@pytest.mark.parametrize("bad", [(1.0,), (math.nan, 1.0), "POINT (1 2)", (1, 2, 3, 4, 5)])
def test_bad_geospatial_bounds(bad: Any) -> None:
    with pytest.raises(ValidationError):
        to_bound_bytes(GeometryType(), bad)


def test_geospatial_bound_with_wrong_length() -> None:
    with pytest.raises(ValidationError, match="16, 24 or 32"):
        from_bound_bytes(GeographyType(), b"\x00" * 8)


def test_variant_bounds_are_not_supported_yet() -> None:
    with pytest.raises(UnsupportedFeature):
        from_bound_bytes(VariantType(), b"\x01")
    with pytest.raises(UnsupportedFeature):
        to_bound_bytes(VariantType(), b"\x01")


# --------------------------------------------------------------------------- order


def test_float_order_is_ieee_total_order() -> None:
    """Spec: Sorting: -NaN < -Infinity < -value < -0 < 0 < value < Infinity < NaN."""
    ordered = [-math.nan, -math.inf, -1.5, -0.0, 0.0, 1e-300, 1.5, math.inf, math.nan]
    for t in (FloatType(), DoubleType()):
        for i, a in enumerate(ordered):
            for j, b in enumerate(ordered):
                assert compare(t, a, b) == (i > j) - (i < j), (a, b)


def test_orders_of_other_types() -> None:
    assert compare(BooleanType(), False, True) == -1
    assert compare(IntegerType(), -5, 3) == -1
    assert compare(DecimalType(9, 2), Decimal("1.10"), Decimal("1.02")) == 1
    # code point order, not UTF-16 order: U+FFFF < U+10000
    assert compare(StringType(), "\uffff", "\U00010000") == -1
    assert compare(StringType(), "a", "ab") == -1
    # uuids compare as unsigned 128-bit big-endian numbers (Java's UUID.compareTo is signed)
    assert compare(UUIDType(), uuid.UUID("80000000-0000-0000-0000-000000000000"),
                   uuid.UUID("7fffffff-ffff-ffff-ffff-ffffffffffff")) == 1
    assert compare(BinaryType(), b"\x80", b"\x7f") == 1
    assert compare(FixedType(2), b"\x00\x01", b"\x00\x01") == 0
    s = StructType(NestedField(1, "a", IntegerType()), NestedField(2, "b", StringType()))
    assert compare(s, {1: 1, 2: "b"}, {1: 1, 2: "a"}) == 1
    assert compare(s, {1: None, 2: "z"}, {1: 0}) == -1  # nulls first
    assert compare(ListType(3, IntegerType()), [1, 2], [1, 2, 0]) == -1


@pytest.mark.parametrize(
    ("t", "a", "b"),
    [
        (MapType(1, StringType(), 2, IntegerType()), {"a": 1}, {"a": 2}),
        (GeometryType(), b"", b""),
        (IntegerType(), None, 1),
        (IntegerType(), "1", 2),
    ],
)
def test_values_without_order(t: IcebergType, a: Any, b: Any) -> None:
    with pytest.raises(ValidationError):
        compare(t, a, b)


@given(st.text(), st.text())
def test_string_order_is_utf8_byte_order(a: str, b: str) -> None:
    ea, eb = a.encode(), b.encode()
    assert compare(StringType(), a, b) == (ea > eb) - (ea < eb)


@given(st.uuids(), st.uuids())
def test_uuid_order_is_byte_order(a: uuid.UUID, b: uuid.UUID) -> None:
    assert compare(UUIDType(), a, b) == (a.bytes > b.bytes) - (a.bytes < b.bytes)


@given(st.floats(allow_nan=False), st.floats(allow_nan=False))
def test_double_order_matches_numbers(a: float, b: float) -> None:
    if a == b == 0:
        expected = (math.copysign(1, a) > math.copysign(1, b)) - (
            math.copysign(1, a) < math.copysign(1, b))
    else:
        expected = (a > b) - (a < b)
    assert compare(DoubleType(), a, b) == expected


# --------------------------------------------------------------------------- JSON golden

POINT = StructType(NestedField(1, "id", IntegerType(), True), NestedField(2, "data", StringType()))

JSON_GOLDEN: list[tuple[IcebergType, Any, Any]] = [
    (BooleanType(), True, True),
    (IntegerType(), 34, 34),
    (LongType(), 34, 34),
    (FloatType(), 1.0, 1.0),
    (DoubleType(), 1.0, 1.0),
    (DecimalType(9, 2), Decimal("14.20"), "14.20"),
    (DecimalType(9, -20), Decimal("2E+20"), "2E+20"),
    (DateType(), DAY_2017_11_16, "2017-11-16"),
    (TimeType(), 81068123456, "22:31:08.123456"),
    (TimestampType(), MICROS_2017_11_16T22_31_08 + 123456, "2017-11-16T22:31:08.123456"),
    (TimestamptzType(), MICROS_2017_11_16T22_31_08 + 123456, "2017-11-16T22:31:08.123456+00:00"),
    (TimestampNanoType(), (MICROS_2017_11_16T22_31_08 + 123456) * 1000 + 789,
     "2017-11-16T22:31:08.123456789"),
    (TimestamptzNanoType(), (MICROS_2017_11_16T22_31_08 + 123456) * 1000 + 789,
     "2017-11-16T22:31:08.123456789+00:00"),
    (StringType(), "iceberg", "iceberg"),
    (UUIDType(), SPEC_UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    # The spec's example is "000102ff"; Java (and so icenb) writes upper case hex.
    (FixedType(4), b"\x00\x01\x02\xff", "000102FF"),
    (BinaryType(), b"\x00\x01\x02\xff", "000102FF"),
    (POINT, {1: 1, 2: "bar"}, {"1": 1, "2": "bar"}),
    (ListType(3, IntegerType()), [1, 2, 3], [1, 2, 3]),
    (MapType(4, StringType(), 5, IntegerType()), {"a": 1, "b": 2},
     {"keys": ["a", "b"], "values": [1, 2]}),
    (GeometryType(), bytes.fromhex("01010000000000000000003e400000000000002440"), "POINT (30 10)"),
    (GeographyType(), bytes.fromhex("01010000000000000000003e400000000000002440"),
     "POINT (30 10)"),
]


@pytest.mark.parametrize(("t", "value", "doc"), JSON_GOLDEN)
def test_json_single_value_golden(t: IcebergType, value: Any, doc: Any) -> None:
    """Spec: Appendix D, JSON single-value serialization: every example of the table."""
    assert to_json(t, value) == doc
    assert from_json(t, doc) == value
    assert from_json(t, json.loads(json.dumps(doc))) == value


def test_json_decimal_keeps_scale_and_negative_scale_uses_the_negated_exponent() -> None:
    assert to_json(DecimalType(9, 2), Decimal("0.00")) == "0.00"
    assert to_json(DecimalType(9, 2), Decimal("-0.05")) == "-0.05"
    assert to_json(DecimalType(9, 0), Decimal("14")) == "14"
    assert to_json(DecimalType(9, -2), Decimal("123E+2")) == "123E+2"
    assert to_json(DecimalType(9, -2), Decimal("-123E+2")) == "-123E+2"
    # Java writes 1.23E+4 for the same value; both read back as scale -2
    assert from_json(DecimalType(9, -2), "1.23E+4") == Decimal("123E+2")


@pytest.mark.parametrize(
    ("t", "doc", "message"),
    [
        (DecimalType(9, 2), "14.2", "scale must be 2"),  # Java: "the scale doesn't match"
        (DecimalType(9, 2), "14.200", "scale must be 2"),
        (DecimalType(9, 2), 14.2, "JSON string"),
        (DecimalType(3, 2), "14.20", "more than 3 digits"),
        (DecimalType(9, 2), "1_4.20", "not a decimal"),
        (DecimalType(9, 2), "NaN", "not a decimal"),
        (IntegerType(), 34.0, "expected an int"),
        (IntegerType(), True, "expected an int"),
        (IntegerType(), 2**31, "out of range"),
        (LongType(), "34", "expected an int"),
        (BooleanType(), 1, "JSON boolean"),
        (FloatType(), "1.0", "JSON number"),
        (FloatType(), 1e39, "32-bit float"),
        (DoubleType(), True, "JSON number"),
        (DateType(), "2017-11-31", "not a valid date"),
        (DateType(), "2017-11-16T00:00:00", "ISO-8601 date"),
        (TimeType(), "24:00:00", "not a valid time"),
        (TimeType(), "22:31:08.1234567", "more precise"),
        (TimestampType(), "2017-11-16T22:31:08+00:00", "must not have an offset"),
        (TimestampType(), "2017-11-16 22:31:08", "ISO-8601 timestamp"),
        (TimestampType(), "2017-11-16T22:31:08.1234567", "more precise"),
        (TimestamptzType(), "2017-11-16T22:31:08", "must include a zone offset"),
        (TimestamptzType(), "2017-11-16T14:31:08-08:00", "must be \\+00:00"),
        (TimestamptzNanoType(), "2017-11-16T22:31:08.123456789+01:00", "must be \\+00:00"),
        (UUIDType(), "f79c3e09677c4bbda4793f349cb785e7", "uuid string"),
        (UUIDType(), "not-a-uuid", "uuid string"),
        (FixedType(4), "000102", "4 bytes"),
        (BinaryType(), "0001f", "hexadecimal"),
        (BinaryType(), "00 01", "hexadecimal"),
        (StringType(), 5, "JSON string"),
        (GeometryType(), "POINT (1)", "WKT"),
        (UnknownType(), 1, "only null"),
        (VariantType(), {}, "variant"),
        (POINT, {"1": 1, "9": 2}, "not a field id"),
        (POINT, {"id": 1}, "not a field id"),
        (POINT, {"1": None}, "required field"),
        (POINT, [1, "bar"], "JSON object"),
        (ListType(3, IntegerType(), True), [1, None], "required element"),
        (ListType(3, IntegerType()), {"1": 1}, "JSON array"),
        (MapType(4, StringType(), 5, IntegerType()), {"keys": ["a"], "values": []}, "length"),
        (MapType(4, StringType(), 5, IntegerType()), {"a": 1}, "keys"),
        (MapType(4, StringType(), 5, IntegerType()), {"keys": ["a", "a"], "values": [1, 2]},
         "duplicate"),
        (MapType(4, StringType(), 5, IntegerType()), {"keys": [None], "values": [1]}, "null"),
    ],
)
def test_bad_json_values(t: IcebergType, doc: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as info:
        from_json(t, doc, field="col")
    assert info.value.field is not None and info.value.field.startswith("col")


def test_json_errors_name_the_nested_field() -> None:
    t = StructType(NestedField(1, "location", StructType(NestedField(2, "lat", DoubleType()))))
    with pytest.raises(ValidationError) as info:
        from_json(t, {"1": {"2": "north"}}, field="point")
    assert info.value.field == "point.location.lat"
    assert info.value.value == "north"


def test_json_timestamptz_accepts_any_zero_offset_spelling() -> None:
    for text in ("2017-11-16T22:31:08Z", "2017-11-16T22:31:08-00:00",
                 "2017-11-16T22:31:08+00:00:00", "2017-11-16t22:31:08+00:00"):
        assert from_json(TimestamptzType(), text) == MICROS_2017_11_16T22_31_08


def test_json_times_read_any_fraction_length_and_minutes_only() -> None:
    assert from_json(TimeType(), "22:31") == (22 * 60 + 31) * 60_000_000
    assert from_json(TimestampType(), "2017-11-16T22:31:08.1") == MICROS_2017_11_16T22_31_08 + (
        100_000)
    assert from_json(TimestampType(), "2017-11-16T22:31:08.123456000") == (
        MICROS_2017_11_16T22_31_08 + 123456)
    assert to_json(TimestampType(), MICROS_2017_11_16T22_31_08) == "2017-11-16T22:31:08"


def test_json_float_specials_are_strings_like_java() -> None:
    assert to_json(DoubleType(), math.inf) == "Infinity"
    assert to_json(FloatType(), -math.inf) == "-Infinity"
    assert to_json(DoubleType(), math.nan) == "NaN"
    assert math.isnan(from_json(DoubleType(), "NaN"))
    assert from_json(FloatType(), "-Infinity") == -math.inf
    assert from_json(DoubleType(), 3) == 3.0 and isinstance(from_json(DoubleType(), 3), float)


def test_json_float_is_the_shortest_text_of_the_float32() -> None:
    stored = f32(0.1)
    assert json.dumps(to_json(FloatType(), stored)) == "0.1"
    assert from_json(FloatType(), 0.1) == stored


def test_json_hex_reads_either_case_and_writes_uppercase_as_java() -> None:
    assert from_json(BinaryType(), "000102ff") == b"\x00\x01\x02\xff"
    assert from_json(BinaryType(), "000102FF") == b"\x00\x01\x02\xff"
    assert to_json(FixedType(2), b"\xab\xcd") == "ABCD"


def test_json_dates_far_from_epoch() -> None:
    assert to_json(DateType(), 0) == "1970-01-01"
    assert to_json(DateType(), -1) == "1969-12-31"
    assert to_json(DateType(), -719528) == "0000-01-01"
    assert to_json(DateType(), -719529) == "-0001-12-31"
    assert to_json(DateType(), 2932897) == "+10000-01-01"
    assert to_json(DateType(), 2**31 - 1) == "+5881580-07-11"
    assert to_json(DateType(), -(2**31)) == "-5877641-06-23"
    assert from_json(DateType(), "-5877641-06-23") == -(2**31)
    assert to_json(TimestampType(), -1) == "1969-12-31T23:59:59.999999"
    assert to_json(TimestampType(), -(2**63)) == "-290308-12-21T19:59:05.224192"
    assert to_json(TimestampType(), 2**63 - 1) == "+294247-01-10T04:00:54.775807"
    assert to_json(TimestamptzNanoType(), -1) == "1969-12-31T23:59:59.999999999+00:00"
    with pytest.raises(ValidationError, match="out of range"):
        from_json(DateType(), "+5881580-07-12")
    with pytest.raises(ValidationError, match="out of range"):
        from_json(TimestampType(), "+294247-01-10T04:00:54.775808")


def test_json_struct_fields_may_be_missing_or_null() -> None:
    assert from_json(POINT, {"1": 5}) == {1: 5}
    assert from_json(POINT, {"1": 5, "2": None}) == {1: 5, 2: None}
    assert from_json(POINT, {}) == {}
    assert to_json(POINT, {1: 5}) == {"1": 5}
    with pytest.raises(ValidationError, match="field id"):
        to_json(POINT, {"id": 5})
    with pytest.raises(ValidationError, match="required"):
        to_json(POINT, {1: None})


def test_json_nested_values() -> None:
    t = MapType(1, StringType(), 2, ListType(3, StructType(
        NestedField(4, "at", TimestamptzType()), NestedField(5, "amount", DecimalType(9, 2)))))
    value = {"x": [{4: 0, 5: Decimal("1.50")}, None], "y": []}
    doc = {"keys": ["x", "y"], "values": [
        [{"4": "1970-01-01T00:00:00+00:00", "5": "1.50"}, None], []]}
    assert to_json(t, value) == doc
    assert from_json(t, doc) == value
    assert to_json(t, None) is None and from_json(t, None) is None


def test_map_keys_that_python_cannot_hash_are_rejected() -> None:
    t = MapType(1, ListType(2, IntegerType()), 3, IntegerType())
    with pytest.raises(ValidationError, match="cannot be held"):
        from_json(t, {"keys": [[1]], "values": [1]})


# --------------------------------------------------------------------------- coercion

TS = MICROS_2017_11_16T22_31_08


@pytest.mark.parametrize(
    ("t", "given", "expected"),
    [
        (BooleanType(), "TRUE", True),
        (BooleanType(), False, False),
        (IntegerType(), "42", 42),
        (IntegerType(), " -7 ", -7),
        (IntegerType(), 3.0, 3),
        (IntegerType(), Decimal("12"), 12),
        (LongType(), 2**63 - 1, 2**63 - 1),
        (FloatType(), 0.1, f32(0.1)),
        (FloatType(), "1.5", 1.5),
        (FloatType(), 1, 1.0),
        (DoubleType(), Decimal("0.1"), 0.1),
        (DoubleType(), "-Infinity", -math.inf),
        (DoubleType(), "inf", math.inf),
        (DecimalType(9, 2), Decimal("14.2"), Decimal("14.20")),
        (DecimalType(9, 2), "14.200", Decimal("14.20")),
        (DecimalType(9, 2), "-14.200", Decimal("-14.20")),
        (DecimalType(9, 2), 14.2, Decimal("14.20")),
        (DecimalType(9, 2), 14, Decimal("14.00")),
        (DecimalType(9, 2), "-0", Decimal("0.00")),
        (DecimalType(5, -2), 12300, Decimal("123E+2")),
        (DecimalType(38, 10), "1234567890123456789012345678.0123456789",
         Decimal("1234567890123456789012345678.0123456789")),
        (DateType(), "2017-11-16", DAY_2017_11_16),
        (DateType(), date(2017, 11, 16), DAY_2017_11_16),
        (DateType(), datetime(2017, 11, 16), DAY_2017_11_16),
        (DateType(), date(1, 1, 1), -719162),
        (DateType(), 5, 5),
        (TimeType(), "22:31:08.5", 81068500000),
        (TimeType(), time(22, 31, 8, 500000), 81068500000),
        (TimeType(), timedelta(hours=1), 3_600_000_000),
        (TimestampType(), "2017-11-16T22:31:08", TS),
        (TimestampType(), "2017-11-16 22:31:08", TS),
        (TimestampType(), "2017-11-16", TS - (22 * 3600 + 31 * 60 + 8) * 1_000_000),
        (TimestampType(), datetime(2017, 11, 16, 22, 31, 8), TS),
        (TimestampType(), date(2017, 11, 16), TS - (22 * 3600 + 31 * 60 + 8) * 1_000_000),
        (TimestampType(), datetime(1900, 1, 1, 0, 0, 0, 1), -2208988799999999),
        # Appendix B's test values: 14:31:08-08:00 is 22:31:08 UTC
        (TimestamptzType(), "2017-11-16T14:31:08-08:00", TS),
        (TimestamptzType(), "2017-11-16T14:31:08.000001-08:00", TS + 1),
        (TimestamptzType(), "2017-11-16 22:31:08Z", TS),
        (TimestamptzType(), "2017-11-16 22:31:08", TS),  # naive text is UTC
        (TimestamptzType(), "2017-11-16 23:31:08+0100", TS),
        (TimestamptzType(), datetime(2017, 11, 16, 22, 31, 8), TS),  # naive datetime is UTC
        (TimestamptzType(), datetime(2017, 11, 16, 14, 31, 8,
                                     tzinfo=timezone(timedelta(hours=-8))), TS),
        (TimestampNanoType(), "2017-11-16T22:31:08.000000001", TS * 1000 + 1),
        (TimestamptzNanoType(), "2017-11-16T14:31:08.000000001-08:00", TS * 1000 + 1),
        (TimestampNanoType(), datetime(2017, 11, 16, 22, 31, 8, 1), TS * 1000 + 1000),
        (StringType(), "iceberg", "iceberg"),
        (UUIDType(), "F79C3E09-677C-4BBD-A479-3F349CB785E7", SPEC_UUID),
        (UUIDType(), SPEC_UUID.bytes, SPEC_UUID),
        (FixedType(2), "0x00ff", b"\x00\xff"),
        (FixedType(2), bytearray(b"ab"), b"ab"),
        (BinaryType(), "00FF", b"\x00\xff"),
        (GeometryType(), "POINT (30 10)",
         bytes.fromhex("01010000000000000000003e400000000000002440")),
        (UnknownType(), None, None),
        (POINT, {"id": 1, "data": "x"}, {1: 1, 2: "x"}),
        (POINT, {1: "7"}, {1: 7}),
        (ListType(3, DateType()), ("2024-01-01", None), [19723, None]),
        (MapType(4, StringType(), 5, DecimalType(4, 1)), {"a": "1.5"}, {"a": Decimal("1.5")}),
    ],
)
def test_coerce(t: IcebergType, given: Any, expected: Any) -> None:
    got = coerce(t, given)
    assert got == expected
    assert type(got) is type(expected)
    values.validate(t, got)


@pytest.mark.parametrize(
    ("t", "given", "message"),
    [
        (BooleanType(), 1, "bool"),
        (BooleanType(), "yes", "bool"),
        (IntegerType(), 2**31, "out of range"),
        (IntegerType(), "4.5", "not an integer"),
        (IntegerType(), 4.5, "not an integer"),
        (IntegerType(), True, "int"),
        (LongType(), float("nan"), "not an integer"),
        (FloatType(), 1e39, "32-bit"),
        (FloatType(), "1e39", "32-bit"),
        (DoubleType(), "1e400", "out of range"),
        (DoubleType(), 10**400, "out of range"),
        (DoubleType(), "one", "not a number"),
        (DecimalType(9, 2), "14.205", "more fractional digits"),
        (DecimalType(9, 2), Decimal("0.001"), "more fractional digits"),
        (DecimalType(9, 2), 10**7, "more than 9 digits"),
        (DecimalType(5, -2), 12345, "more fractional digits"),
        (DecimalType(9, 2), float("inf"), "finite"),
        (DecimalType(9, 2), Decimal("NaN"), "finite"),
        (DecimalType(9, 2), True, "decimal"),
        (DateType(), "2024-02-30", "not a valid date"),
        (DateType(), "2024-01-01T10:00", "ISO-8601 date"),
        (DateType(), datetime(2024, 1, 1, 10), "time of day"),
        (DateType(), 2**31, "out of range"),
        (TimeType(), time(1, tzinfo=timezone.utc), "zone"),
        (TimeType(), "10:00:00.0000001", "more precise"),
        (TimeType(), timedelta(days=1), "out of range"),
        (TimestampType(), "2024-01-01T10:00:00+01:00", "offset"),
        (TimestampType(), datetime(2024, 1, 1, tzinfo=timezone.utc), "aware datetime"),
        (TimestampType(), "2024-01-01T10:00:00.123456789", "more precise"),
        (TimestampType(), "2024-13-01", "not an ISO-8601 timestamp"),
        (TimestampType(), "yesterday", "not an ISO-8601 timestamp"),
        (TimestampNanoType(), "2300-01-01", "out of range"),
        (TimestamptzType(), "2024-01-01T10:00:00+25:00", "not an ISO-8601 timestamp"),
        (StringType(), 5, "str"),
        (UUIDType(), "nope", "not a uuid"),
        (FixedType(2), b"abc", "exactly 2 bytes"),
        (BinaryType(), "xyz", "hexadecimal"),
        (GeometryType(), b"\x01\x01\x00\x00\x00", "WKB"),
        (GeometryType(), "CIRCLE (1 2)", "WKT"),
        (UnknownType(), 1, "only null"),
        (POINT, {"nope": 1}, "no such field"),
        (POINT, {"id": None}, "required"),
        (POINT, {"id": 1, 1: 2}, "given twice"),
        (ListType(3, IntegerType(), True), [None], "required element"),
        (ListType(3, IntegerType()), "12", "expected a list"),
        (MapType(4, StringType(), 5, IntegerType(), True), {"a": None}, "required map value"),
        (MapType(4, IntegerType(), 5, IntegerType()), {"1": 1, 1: 2}, "duplicate"),
    ],
)
def test_coerce_rejects(t: IcebergType, given: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        coerce(t, given, field="col")


def test_coerce_variant_is_unsupported() -> None:
    with pytest.raises(UnsupportedFeature):
        coerce(VariantType(), {"a": 1})


def test_coerce_numpy_scalars() -> None:
    np = pytest.importorskip("numpy")
    assert coerce(IntegerType(), np.int16(5)) == 5
    assert coerce(BooleanType(), np.bool_(True)) is True
    assert coerce(FloatType(), np.float32(0.1)) == f32(0.1)
    assert coerce(DoubleType(), np.float64(2.5)) == 2.5
    assert coerce(DateType(), np.datetime64("2017-11-16")) == DAY_2017_11_16
    assert coerce(TimestampNanoType(), np.datetime64("2017-11-16T22:31:08.000000001")) == (
        TS * 1000 + 1)
    assert coerce(TimestampType(), np.datetime64("NaT")) is None
    with pytest.raises(ValidationError):
        coerce(IntegerType(), np.int64(2**40))


def test_coerce_pandas_timestamps() -> None:
    pd = pytest.importorskip("pandas")
    assert coerce(TimestampNanoType(), pd.Timestamp("2017-11-16T22:31:08.000000001")) == (
        TS * 1000 + 1)
    assert coerce(TimestamptzType(), pd.Timestamp("2017-11-16T14:31:08-08:00")) == TS
    assert coerce(TimestampType(), pd.NaT) is None
    with pytest.raises(ValidationError, match="more precise"):
        coerce(TimestampType(), pd.Timestamp("2017-11-16T22:31:08.000000001"))


def test_coerce_accepts_shapely_like_objects() -> None:
    class Shape:
        wkb = bytes.fromhex("01010000000000000000003e400000000000002440")

    assert coerce(GeometryType(), Shape()) == Shape.wkb


# --------------------------------------------------------------------------- display


@pytest.mark.parametrize(
    ("t", "value", "text"),
    [
        (BooleanType(), True, "true"),
        (IntegerType(), -3, "-3"),
        (FloatType(), f32(0.1), "0.1"),
        (DoubleType(), 1e20, "1e+20"),
        (DoubleType(), math.nan, "NaN"),
        (DoubleType(), -math.inf, "-Infinity"),
        (DecimalType(9, 2), Decimal("14.20"), "14.20"),
        (DecimalType(9, -20), Decimal("2E+20"), "2E+20"),
        (DateType(), 19723, "2024-01-01"),
        (TimeType(), 36_000_000_000, "10:00:00"),
        (TimeType(), 36_000_500_000, "10:00:00.500"),
        (TimestampType(), 1704103200000001, "2024-01-01T10:00:00.000001"),
        (TimestampType(), 1704103200000000, "2024-01-01T10:00:00"),
        (TimestamptzType(), 1704103200000000, "2024-01-01T10:00:00+00:00"),
        (TimestampNanoType(), 1704103200000000001, "2024-01-01T10:00:00.000000001"),
        (StringType(), "a b", "a b"),
        (UUIDType(), SPEC_UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        (BinaryType(), b"\x00\xff", "0x00ff"),
        (GeometryType(), bytes.fromhex("01010000000000000000003e400000000000002440"),
         "POINT (30 10)"),
        (POINT, {1: 1, 2: "bar"}, '{id: 1, data: "bar"}'),
        (ListType(3, DateType()), [0, None], "[1970-01-01, null]"),
        (MapType(4, StringType(), 5, IntegerType()), {"a": 1}, '{"a": 1}'),
        (IntegerType(), None, "null"),
    ],
)
def test_to_human(t: IcebergType, value: Any, text: str) -> None:
    assert to_human(t, value) == text


def test_to_human_never_raises() -> None:
    assert to_human(IntegerType(), "not an int") == "'not an int'"
    assert to_human(GeometryType(), b"\x09") == repr(b"\x09")


# --------------------------------------------------------------------------- geometry


@pytest.mark.parametrize(
    "wkt",
    [
        "POINT (30 10)",
        "POINT Z (1 2 3)",
        "POINT M (1 2 4)",
        "POINT ZM (1 2 3 4)",
        "POINT EMPTY",
        "LINESTRING (30 10, 10 30, 40 40)",
        "LINESTRING EMPTY",
        "POLYGON ((30 10, 40 40, 20 40, 10 20, 30 10), (20 30, 35 35, 30 20, 20 30))",
        "MULTIPOINT ((10 40), (40 30), EMPTY)",
        "MULTILINESTRING ((10 10, 20 20), (40 40, 30 30))",
        "MULTIPOLYGON (((30 20, 45 40, 10 40, 30 20)), ((15 5, 40 10, 10 20, 5 10, 15 5)))",
        "GEOMETRYCOLLECTION (POINT (40 10), LINESTRING (10 10, 20 20))",
        "GEOMETRYCOLLECTION EMPTY",
        "POINT (-0.5 1e+20)",
    ],
)
def test_wkt_round_trips_through_wkb(wkt: str) -> None:
    """Spec (released v3): Appendix D JSON form of geometry is WKT; Appendix G (ISO WKB)."""
    assert wkb_to_wkt(wkt_to_wkb(wkt)) == wkt


def test_wkt_reading_is_lenient_in_spelling() -> None:
    assert wkb_to_wkt(wkt_to_wkb("point(30 10)")) == "POINT (30 10)"
    assert wkb_to_wkt(wkt_to_wkb("POINT (1 2 3)")) == "POINT Z (1 2 3)"
    assert wkb_to_wkt(wkt_to_wkb("MULTIPOINT (1 2, 3 4)")) == "MULTIPOINT ((1 2), (3 4))"


def test_wkb_reading_accepts_big_endian_and_iso_dimensions() -> None:
    big = bytes.fromhex("00000003e9") + struct.pack(">3d", 1, 2, 3)  # POINT Z, big-endian
    assert wkb_to_wkt(big) == "POINT Z (1 2 3)"
    assert wkt_to_wkb("POINT Z (1 2 3)") == b"\x01" + struct.pack("<I3d", 1001, 1, 2, 3)


@pytest.mark.parametrize(
    "data",
    [b"", b"\x02\x01\x00\x00\x00", b"\x01\x08\x00\x00\x00",
     b"\x01\x02\x00\x00\x00\xff\xff\xff\xff", wkt_to_wkb("POINT (1 2)") + b"\x00"],
)
def test_bad_wkb(data: bytes) -> None:
    with pytest.raises(ValidationError, match="WKB"):
        wkb_to_wkt(data)


@pytest.mark.parametrize(
    "text",
    ["", "POINT", "POINT (1)", "POINT (1 2", "POINT Z (1 2)", "LINESTRING (1 2, 3 4 5)",
     "TRIANGLE ((0 0, 1 0, 0 1, 0 0))", "POINT (1 2) junk"],
)
def test_bad_wkt(text: str) -> None:
    with pytest.raises(ValidationError, match="WKT"):
        wkt_to_wkb(text)


# --------------------------------------------------------------------------- round trips

DECIMAL_TYPES = st.builds(
    DecimalType, st.integers(1, 38), st.integers(-10, 40)
)


@st.composite
def decimal_values(draw: st.DrawFn) -> tuple[IcebergType, Any]:
    t = draw(DECIMAL_TYPES)
    bound = 10**t.precision - 1
    return t, values.from_unscaled(draw(st.integers(-bound, bound)), t.scale)


coords = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def geometries(draw: st.DrawFn) -> tuple[IcebergType, Any]:
    n = draw(st.sampled_from([2, 3, 4]))
    dims = {2: "", 3: " Z", 4: " ZM"}[n]
    point = st.tuples(*[coords] * n).map(lambda c: " ".join(repr(x) for x in c))
    kind = draw(st.sampled_from(["POINT", "LINESTRING", "MULTIPOINT"]))
    pts = draw(st.lists(point, min_size=1, max_size=4))
    if kind == "POINT":
        text = f"POINT{dims} ({pts[0]})"
    elif kind == "LINESTRING":
        text = f"LINESTRING{dims} ({', '.join(pts)})"
    else:
        text = f"MULTIPOINT{dims} ({', '.join(f'({p})' for p in pts)})"
    return draw(st.sampled_from([GeometryType(), GeographyType()])), wkt_to_wkb(text)


def _typed(t: IcebergType, strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return strategy.map(lambda v: (t, v))


PRIMITIVES: st.SearchStrategy[tuple[IcebergType, Any]] = st.one_of(
    _typed(BooleanType(), st.booleans()),
    _typed(IntegerType(), st.integers(-(2**31), 2**31 - 1)),
    _typed(LongType(), st.integers(-(2**63), 2**63 - 1)),
    _typed(FloatType(), st.floats(width=32)),
    _typed(DoubleType(), st.floats()),
    decimal_values(),
    _typed(DateType(), st.integers(-(2**31), 2**31 - 1)),
    _typed(TimeType(), st.integers(0, 86_400_000_000 - 1)),
    *(_typed(t, st.integers(-(2**63), 2**63 - 1)) for t in (
        TimestampType(), TimestamptzType(), TimestampNanoType(), TimestamptzNanoType())),
    _typed(StringType(), st.text()),
    _typed(UUIDType(), st.uuids()),
    st.integers(0, 20).flatmap(
        lambda n: _typed(FixedType(n), st.binary(min_size=n, max_size=n))),
    _typed(BinaryType(), st.binary()),
)
BINARY_PRIMITIVES = st.one_of(PRIMITIVES, geometries())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    return bool(type(a) is type(b) and a == b and str(a) == str(b))


@given(BINARY_PRIMITIVES)
def test_binary_round_trip(tv: tuple[IcebergType, Any]) -> None:
    t, v = tv
    data = to_bytes(t, v)
    assert _same(from_bytes(t, data), v)
    assert to_bytes(t, from_bytes(t, data)) == data


@given(BINARY_PRIMITIVES)
def test_json_round_trip(tv: tuple[IcebergType, Any]) -> None:
    t, v = tv
    text = json.dumps(to_json(t, v), allow_nan=False)  # always strict JSON
    assert _same(from_json(t, json.loads(text)), v)


@given(BINARY_PRIMITIVES)
def test_human_text_coerces_back(tv: tuple[IcebergType, Any]) -> None:
    t, v = tv
    assert _same(coerce(t, to_human(t, v)), v)


@given(decimal_values())
def test_decimal_bytes_are_minimal(tv: tuple[IcebergType, Any]) -> None:
    t, v = tv
    data = to_bytes(t, v)
    assert int.from_bytes(data, "big", signed=True) == values.unscaled(v)
    if len(data) > 1:  # one byte less could not hold it: the top 9 bits are not all equal
        top = int.from_bytes(data[:2], "big") >> 7
        assert top not in (0, 0x1FF)


NESTED = StructType(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "tags", ListType(3, StringType())),
    NestedField(4, "attrs", MapType(5, StringType(), 6, DecimalType(10, 3))),
    NestedField(7, "loc", StructType(NestedField(8, "lat", DoubleType()),
                                     NestedField(9, "at", TimestamptzNanoType()))),
)


@given(st.fixed_dictionaries(
    {1: st.integers(-(2**63), 2**63 - 1)},
    optional={
        2: st.none() | st.lists(st.none() | st.text(max_size=5), max_size=3),
        4: st.none() | st.dictionaries(
            st.text(max_size=3),
            st.none() | st.integers(-(10**10) + 1, 10**10 - 1).map(
                lambda u: values.from_unscaled(u, 3)), max_size=3),
        7: st.none() | st.fixed_dictionaries(
            {}, optional={8: st.floats(), 9: st.integers(-(2**63), 2**63 - 1)}),
    },
))
def test_nested_json_round_trip(value: dict[int, Any]) -> None:
    text = json.dumps(to_json(NESTED, value), allow_nan=False)
    back = from_json(NESTED, json.loads(text))
    assert json.dumps(to_json(NESTED, back), allow_nan=False) == text
    assert back.keys() == value.keys()


# --------------------------------------------------------------------------- schema defaults


def test_schema_field_defaults_round_trip() -> None:
    """Spec: Appendix C: defaults use the JSON single-value form (uuid, decimal, struct...)."""
    fields = [
        {"id": 1, "name": "u", "required": True, "type": "uuid",
         "initial-default": "f79c3e09-677c-4bbd-a479-3f349cb785e7",
         "write-default": "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
        {"id": 2, "name": "d", "required": False, "type": "decimal(9, 2)",
         "initial-default": "14.20", "write-default": "-0.50"},
        {"id": 3, "name": "point", "required": False,
         "type": {"type": "struct", "fields": [
             {"id": 4, "name": "x", "required": True, "type": "int", "initial-default": 0,
              "write-default": 0},
             {"id": 5, "name": "y", "required": True, "type": "int", "initial-default": 0,
              "write-default": 0}]},
         "initial-default": {}, "write-default": {}},
        {"id": 6, "name": "ts", "required": False, "type": "timestamptz",
         "initial-default": "2017-11-16T22:31:08+00:00"},
        {"id": 7, "name": "tags", "required": False,
         "type": {"type": "list", "element-id": 8, "element": "string",
                  "element-required": True},
         "write-default": ["a", "b"]},
    ]
    parsed = [field_from_json(f) for f in fields]
    assert parsed[0].initial_default == SPEC_UUID
    assert parsed[1].initial_default == Decimal("14.20")
    assert parsed[1].write_default == Decimal("-0.50")
    assert parsed[2].initial_default == {} and parsed[2].write_default == {}
    assert parsed[2].field_type.fields[0].initial_default == 0  # type: ignore[attr-defined]
    assert parsed[3].initial_default == MICROS_2017_11_16T22_31_08
    assert parsed[4].write_default == ["a", "b"]
    assert [field_to_json(f) for f in parsed] == fields
    schema = schema_from_json({"type": "struct", "schema-id": 0, "fields": fields})
    assert schema_from_json(schema_to_json(schema)) == schema


def test_schema_default_with_wrong_decimal_scale_names_the_field() -> None:
    doc = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "d", "required": False, "type": "decimal(9, 2)",
         "initial-default": "14.2"}]}
    with pytest.raises(InvalidMetadata, match="scale") as info:
        schema_from_json(doc)
    assert info.value.field == "schema.d.initial-default"


def test_float_json_near_the_float32_maximum() -> None:
    """Found by hypothesis: a short text of such a value rounds above the float32 range."""
    v = 3.4025001647762064e38
    assert values.from_json(FloatType(), values.to_json(FloatType(), v)) == values.coerce(
        FloatType(), v)
