"""Partition transforms: Appendix B hashes, truncate/time rules, parsing, Arrow == scalar.

Golden values come from the spec (Appendix B, "Truncate Transform Details") and from the Java
reference implementation 1.10.2 (marked "Java"), computed once with its Transform API.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any

import mmh3
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TimeTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
    _murmur3_longs,
    bucket_hash,
    hash_long,
    parse_transform,
)
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
    PrimitiveType,
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

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
INT, LONG, DATE, TIME = IntegerType(), LongType(), DateType(), TimeType()
TS, TSTZ, TS_NS, TSTZ_NS = (
    TimestampType(), TimestamptzType(), TimestampNanoType(), TimestamptzNanoType(),
)
STRING, UUID_T, BINARY = StringType(), UUIDType(), BinaryType()
DEC = DecimalType(9, 2)
MAX_BUCKETS = 2**31 - 1  # bucket[MAX] of a hash h is h & MAX: shows the raw hash through apply


def micros(iso: str) -> int:
    """Microseconds from the epoch of an ISO timestamp (naive = UTC), independent of icenb."""
    t = dt.datetime.fromisoformat(iso)
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    delta = t - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def nanos(iso: str) -> int:
    """Nanoseconds from the epoch; accepts up to 9 fractional digits."""
    head, _, frac = iso.partition(".")
    offset = ""
    for sign in "+-":
        if sign in frac:
            frac, _, rest = frac.partition(sign)
            offset = sign + rest
    digits = (frac + "000000000")[:9]
    return micros(head + offset) * 1000 + int(digits)


def days(iso: str) -> int:
    return (dt.date.fromisoformat(iso) - dt.date(1970, 1, 1)).days


# --------------------------------------------------------------------------- Appendix B

APPENDIX_B = [
    (INT, 34, 2017239379),
    (LONG, 34, 2017239379),
    (DEC, Decimal("14.20"), -500754589),
    (DATE, days("2017-11-16"), -653330422),
    (TIME, (22 * 3600 + 31 * 60 + 8) * 1_000_000, -662762989),
    (TS, micros("2017-11-16T22:31:08"), -2047944441),
    (TS, micros("2017-11-16T22:31:08.000001"), -1207196810),
    (TSTZ, micros("2017-11-16T14:31:08-08:00"), -2047944441),
    (TSTZ, micros("2017-11-16T14:31:08.000001-08:00"), -1207196810),
    (STRING, "iceberg", 1210000089),
    (UUID_T, uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (FixedType(4), bytes([0, 1, 2, 3]), -188683207),
    (BINARY, bytes([0, 1, 2, 3]), -188683207),
    # not valid bucket sources, hashed for completeness (Appendix B, second table)
    (BooleanType(), True, 1392991556),
    (FloatType(), 1.0, -142385009),
    (FloatType(), 0.0, 1669671676),
    (FloatType(), -0.0, 1669671676),
    (DoubleType(), 1.0, -142385009),
    (DoubleType(), 0.0, 1669671676),
    (DoubleType(), -0.0, 1669671676),
]


def _as_values(arr: Any) -> list[Any]:
    """Arrow results as the spec's Python values (day results are date32: compare int days)."""
    if pa.types.is_date32(arr.type):
        arr = arr.cast(pa.int32())
    return list(arr.to_pylist())


@pytest.mark.parametrize(("source_type", "value", "expected"), APPENDIX_B,
                         ids=[f"{t}-{v}" for t, v, _ in APPENDIX_B])
def test_appendix_b_hash_values(source_type: IcebergType, value: Any, expected: int) -> None:
    assert bucket_hash(source_type, value) == expected


@pytest.mark.parametrize(("source_type", "value", "expected"), [
    row for row in APPENDIX_B if BucketTransform(1).can_transform(row[0])
])
def test_bucket_applies_the_appendix_b_hash(source_type: IcebergType, value: Any,
                                             expected: int) -> None:
    assert BucketTransform(MAX_BUCKETS).apply(source_type, value) == expected & MAX_BUCKETS
    assert BucketTransform(16).apply(source_type, value) == (expected & MAX_BUCKETS) % 16


NS_ROWS = [
    # (value, hash of the value as micros (Java 1.10), hash of the raw nanos (older v3 draft))
    ("2017-11-16T22:31:08", -2047944441, -737750069),
    ("2017-11-16T22:31:08.000001", -1207196810, -976603392),
    ("2017-11-16T22:31:08.000000001", -2047944441, -160215926),
]


@pytest.mark.parametrize(("iso", "micros_hash", "nanos_hash"), NS_ROWS)
@pytest.mark.parametrize("source_type", [TS_NS, TSTZ_NS])
def test_timestamp_ns_hashes_as_microseconds(source_type: IcebergType, iso: str,
                                             micros_hash: int, nanos_hash: int) -> None:
    value = nanos(iso)
    assert bucket_hash(source_type, value) == micros_hash
    # same bucket as the microsecond timestamp: promotion keeps rows in their buckets
    assert BucketTransform(7).apply(source_type, value) == BucketTransform(7).apply(
        TS, value // 1000)
    # the draft's table values are the long hash of the raw nanoseconds
    assert hash_long(value) == nanos_hash


@pytest.mark.parametrize(("value", "expected"), [
    (-1, 1651860712), (-1000, 1651860712), (-1001, 709407621), (0, 1669671676),
    (999, 1669671676),
])
def test_pre_epoch_nanos_floor_to_micros_before_hashing(value: int, expected: int) -> None:
    # Java: bucket[2147483647] of timestamp_ns
    assert BucketTransform(MAX_BUCKETS).apply(TS_NS, value) == expected
    assert BucketTransform(MAX_BUCKETS).apply(TS, -2) == 709407621  # -1001 ns is -2 us


@pytest.mark.parametrize(("value", "buckets", "expected"), [
    (Decimal("0.00"), MAX_BUCKETS, 1364076727),
    (Decimal("-1.28"), MAX_BUCKETS, 267099677),
    (Decimal("1.28"), MAX_BUCKETS, 1544076949),
    (Decimal("-1.28"), 16, 13),
])
def test_decimal_bucket_minimal_twos_complement(value: Decimal, buckets: int,
                                                expected: int) -> None:
    # Java; -1.28 has unscaled -128, a single byte 0x80 in two's complement
    assert BucketTransform(buckets).apply(DEC, value) == expected


def test_decimal_hash_ignores_scale_and_value_exponent() -> None:
    assert bucket_hash(DecimalType(9, 2), Decimal("14.2")) == -500754589
    assert bucket_hash(DecimalType(4, 0), Decimal("1420")) == -500754589
    with pytest.raises(ValidationError):
        bucket_hash(DecimalType(9, 2), Decimal("14.201"))


def test_int_and_long_buckets_agree() -> None:
    for v in (0, 1, -1, 34, 2**31 - 1, -(2**31)):
        assert BucketTransform(100).apply(INT, v) == BucketTransform(100).apply(LONG, v)
    assert BucketTransform(4).apply(INT, 5) == 3  # Java


def test_uuid_bucket_accepts_its_16_bytes() -> None:
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    assert BucketTransform(MAX_BUCKETS).apply(UUID_T, u.bytes) == 1488055340
    with pytest.raises(ValidationError):
        BucketTransform(8).apply(UUID_T, b"\x00" * 15)


def test_double_hash_canonicalizes_nan() -> None:
    assert bucket_hash(DoubleType(), float("nan")) == hash_long(0x7FF8000000000000)
    assert bucket_hash(FloatType(), -float("nan")) == bucket_hash(DoubleType(), float("nan"))


@given(st.integers(-(2**63), 2**63 - 1))
def test_hash_long_is_murmur3_of_little_endian_bytes(v: int) -> None:
    assert hash_long(v) == mmh3.hash(v.to_bytes(8, "little", signed=True), 0, signed=True)


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_vectorized_murmur3_matches_mmh3(values: list[int]) -> None:
    out = _murmur3_longs(np.array(values, dtype=np.int64))
    assert [int(h) for h in out] == [hash_long(v) & 0xFFFFFFFF for v in values]


# --------------------------------------------------------------------------- truncate


@pytest.mark.parametrize(("source_type", "width", "value", "expected"), [
    # spec: Truncate Transform Details
    (INT, 10, 1, 0),
    (INT, 10, -1, -10),
    (LONG, 10, 1, 0),
    (LONG, 10, -1, -10),
    (DEC, 50, Decimal("10.65"), Decimal("10.50")),
    (STRING, 3, "iceberg", "ice"),
    (BINARY, 3, b"\x01\x02\x03\x04\x05", b"\x01\x02\x03"),
    # Java
    (INT, 10, 10, 10),
    (INT, 10, -10, -10),
    (INT, 10, -11, -20),
    (DEC, 50, Decimal("-10.65"), Decimal("-11.00")),
    (STRING, 2, "\U0001F600\U0001F601abc", "\U0001F600\U0001F601"),
    (STRING, 10, "short", "short"),
    (BINARY, 10, b"\x01", b"\x01"),
])
def test_truncate_examples(source_type: IcebergType, width: int, value: Any,
                           expected: Any) -> None:
    out = TruncateTransform(width).apply(source_type, value)
    assert out == expected
    assert type(out) is type(expected)
    if isinstance(out, Decimal):
        assert out.as_tuple().exponent == expected.as_tuple().exponent  # keeps the scale


def test_truncate_strings_by_code_points_not_bytes_or_utf16() -> None:
    t = TruncateTransform(1)
    assert t.apply(STRING, "\u00e9t\u00e9") == "\u00e9"  # 2 UTF-8 bytes, one code point
    assert t.apply(STRING, "\U0001F600x") == "\U0001F600"  # 2 UTF-16 units, one code point


def test_truncate_decimal_keeps_38_digits_exact() -> None:
    unscaled = 12345678901234567890123456789012345678
    value = Decimal("1234567890123456789012345678.9012345678")
    out = TruncateTransform(1000).apply(DecimalType(38, 10), value)
    assert out == Decimal("1234567890123456789012345678.9012345000")
    out = TruncateTransform(7).apply(DecimalType(38, 10), value)
    assert str(out) == f"{unscaled - unscaled % 7}"[:28] + "." + f"{unscaled - unscaled % 7}"[28:]


def test_truncate_int_overflow_is_an_error() -> None:
    with pytest.raises(ValidationError, match="overflow"):
        TruncateTransform(10).apply(INT, -(2**31))
    with pytest.raises(ValidationError):
        TruncateTransform(10).apply_arrow(INT, pa.array([-(2**31)], pa.int32()))
    with pytest.raises(ValidationError, match="overflow"):
        TruncateTransform(10).apply_arrow(LONG, pa.array([-(2**63)], pa.int64()))
    with pytest.raises(ValidationError, match="overflow"):
        TruncateTransform(10).apply(DecimalType(3, 0), Decimal("-995"))
    assert TruncateTransform(10).apply(DecimalType(3, 0), Decimal("995")) == Decimal("990")


# --------------------------------------------------------------------------- time transforms

# Java 1.10: (source type, value, year, month, day, hour); hour None where not applicable.
TIME_ROWS = [
    (TS, micros("2017-11-16T22:31:08"), 47, 574, 17486, 419686),
    (TS, 0, 0, 0, 0, 0),
    (TS, -1, -1, -1, -1, -1),
    (TS, -3_600_000_000, -1, -1, -1, -1),
    (TS, -3_600_000_001, -1, -1, -1, -2),
    (TS, -86_400_000_000, -1, -1, -1, -24),
    (TS, -86_400_000_001, -1, -1, -2, -25),
    (TS, -31_536_000_000_000, -1, -12, -365, -8760),
    (TS, -31_536_000_000_001, -2, -13, -366, -8761),
    (TSTZ, -1, -1, -1, -1, -1),
    (TS_NS, micros("2017-11-16T22:31:08") * 1000, 47, 574, 17486, 419686),
    (TSTZ_NS, micros("2017-11-16T22:31:08") * 1000 - 1, 47, 574, 17486, 419686),
    (TS_NS, -1, -1, -1, -1, -1),
    (TSTZ_NS, -31_536_000_000_000_001, -2, -13, -366, -8761),
    (TS_NS, -86_400_000_000_000, -1, -1, -1, -24),
    (DATE, 17486, 47, 574, 17486, None),
    (DATE, 0, 0, 0, 0, None),
    (DATE, -1, -1, -1, -1, None),
    (DATE, -31, -1, -1, -31, None),
    (DATE, -32, -1, -2, -32, None),
    (DATE, -365, -1, -12, -365, None),
    (DATE, -366, -2, -13, -366, None),
    (DATE, 59, 0, 2, 59, None),
    (DATE, -719162, -1969, -23628, -719162, None),
    (DATE, 2932896, 8029, 96359, 2932896, None),
]


@pytest.mark.parametrize(("source_type", "value", "year", "month", "day", "hour"), TIME_ROWS)
def test_time_transforms_floor_before_the_epoch(source_type: IcebergType, value: int, year: int,
                                                month: int, day: int, hour: int | None) -> None:
    assert YearTransform().apply(source_type, value) == year
    assert MonthTransform().apply(source_type, value) == month
    assert DayTransform().apply(source_type, value) == day
    if hour is None:
        assert not HourTransform().can_transform(source_type)
    else:
        assert HourTransform().apply(source_type, value) == hour


@pytest.mark.parametrize(("transform", "value", "expected"), [
    # Java toHumanString
    (YearTransform(), 47, "2017"),
    (YearTransform(), -1, "1969"),
    (YearTransform(), -1969, "0001"),
    (MonthTransform(), 574, "2017-11"),
    (MonthTransform(), -1, "1969-12"),
    (MonthTransform(), -13, "1968-12"),
    (MonthTransform(), 0, "1970-01"),
    (DayTransform(), 17486, "2017-11-16"),
    (DayTransform(), -1, "1969-12-31"),
    (DayTransform(), -366, "1968-12-31"),
    (DayTransform(), -719162, "0001-01-01"),
    (DayTransform(), 2932896, "9999-12-31"),
    (HourTransform(), 419686, "2017-11-16-22"),
    (HourTransform(), -1, "1969-12-31-23"),
    (HourTransform(), -25, "1969-12-30-23"),
    (HourTransform(), 0, "1970-01-01-00"),
    (BucketTransform(16), 3, "3"),
])
def test_to_human_string(transform: Transform, value: int, expected: str) -> None:
    source = TS if not isinstance(transform, BucketTransform) else LONG
    assert transform.to_human_string(source, value) == expected


def test_day_result_is_a_date_like_the_reference_implementation() -> None:
    assert DayTransform().result_type(TS) == DateType()
    assert DayTransform().to_human_string(DATE, days("2024-02-29")) == "2024-02-29"


@given(st.integers(micros("0001-01-01T00:00:00"), micros("9999-12-31T23:59:59.999999")))
def test_time_transforms_match_the_calendar(value: int) -> None:
    t = EPOCH + dt.timedelta(microseconds=value)
    assert YearTransform().apply(TS, value) == t.year - 1970
    assert MonthTransform().apply(TS, value) == (t.year - 1970) * 12 + t.month - 1
    assert DayTransform().apply(TS, value) == (t.date() - EPOCH.date()).days
    assert HourTransform().apply(TS, value) == value // 3_600_000_000
    assert YearTransform().to_human_string(TS, YearTransform().apply(TS, value)) == f"{t.year:04d}"
    assert MonthTransform().to_human_string(TS, MonthTransform().apply(TS, value)) == (
        f"{t.year:04d}-{t.month:02d}")
    assert DayTransform().to_human_string(TS, DayTransform().apply(TS, value)) == (
        t.date().isoformat())
    assert HourTransform().to_human_string(TS, HourTransform().apply(TS, value)) == (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}-{t.hour:02d}")
    # nanosecond types give the same partitions as the same instant in microseconds
    for transform in (YearTransform(), MonthTransform(), DayTransform(), HourTransform()):
        assert transform.apply(TS_NS, value * 1000 + 999) == transform.apply(TS, value)


def test_time_transform_result_must_fit_an_int() -> None:
    with pytest.raises(ValidationError):
        HourTransform().apply(TS, 2**63 - 1)
    with pytest.raises(ValidationError):
        HourTransform().apply_arrow(TS, pa.array([2**63 - 1], pa.timestamp("us")))


# --------------------------------------------------------------------------- types accepted

ALL_TYPES: list[PrimitiveType] = [
    BooleanType(), INT, LONG, FloatType(), DoubleType(), DEC, DATE, TIME, TS, TSTZ, TS_NS,
    TSTZ_NS, STRING, UUID_T, FixedType(4), BINARY, UnknownType(), VariantType(), GeometryType(),
    GeographyType(),
]
# Java 1.10 canTransform, per transform: the type strings accepted.
ACCEPTS = {
    "identity": {str(t) for t in ALL_TYPES} - {"variant", "geometry", "geography"},
    "bucket[16]": {"int", "long", "decimal(9, 2)", "date", "time", "timestamp", "timestamptz",
                   "timestamp_ns", "timestamptz_ns", "string", "uuid", "fixed[4]", "binary"},
    "truncate[4]": {"int", "long", "decimal(9, 2)", "string", "binary"},
    "year": {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "month": {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "day": {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "hour": {"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "void": {str(t) for t in ALL_TYPES},
}


@pytest.mark.parametrize("name", sorted(ACCEPTS))
def test_can_transform_matches_the_spec_table(name: str) -> None:
    transform = parse_transform(name)
    accepted = {str(t) for t in ALL_TYPES if transform.can_transform(t)}
    assert accepted == ACCEPTS[name]


def test_nested_types_are_not_transformable() -> None:
    nested = ListType(1, INT)
    assert not IdentityTransform().can_transform(nested)
    assert not BucketTransform(4).can_transform(StructType())


@pytest.mark.parametrize(("transform", "source_type", "expected"), [
    (IdentityTransform(), DEC, DEC),
    (BucketTransform(8), STRING, INT),
    (TruncateTransform(4), DEC, DEC),
    (TruncateTransform(4), STRING, STRING),
    (YearTransform(), DATE, INT),
    (MonthTransform(), TS_NS, INT),
    (DayTransform(), TSTZ, DATE),
    (HourTransform(), TS, INT),
    (VoidTransform(), UUID_T, UUID_T),
    (UnknownTransform("zorder"), LONG, STRING),
])
def test_result_types(transform: Transform, source_type: IcebergType,
                      expected: IcebergType) -> None:
    assert transform.result_type(source_type) == expected


@pytest.mark.parametrize(("transform", "source_type"), [
    (BucketTransform(4), FloatType()),
    (BucketTransform(4), BooleanType()),
    (TruncateTransform(4), DATE),
    (HourTransform(), DATE),
    (YearTransform(), STRING),
    (IdentityTransform(), VariantType()),
])
def test_incompatible_source_types_are_rejected(transform: Transform,
                                                source_type: IcebergType) -> None:
    with pytest.raises(ValidationError, match=str(source_type)):
        transform.result_type(source_type)
    with pytest.raises(ValidationError):
        transform.apply(source_type, 1)
    with pytest.raises(ValidationError):
        transform.apply_arrow(source_type, pa.array([1]))


@pytest.mark.parametrize(("transform", "source_type", "value"), [
    (BucketTransform(4), INT, "12"),
    (BucketTransform(4), STRING, b"bytes"),
    (BucketTransform(4), LONG, 2**64),
    (TruncateTransform(4), STRING, 12),
    (TruncateTransform(4), INT, 1.5),
    (DayTransform(), TS, "2017-11-16"),
    (BucketTransform(4), DEC, "not a number"),
])
def test_wrong_python_values_raise_validation_errors(transform: Transform,
                                                     source_type: IcebergType,
                                                     value: Any) -> None:
    with pytest.raises(ValidationError, match=re.escape(str(transform))):
        transform.apply(source_type, value)


# --------------------------------------------------------------------------- nulls, void, unknown


@pytest.mark.parametrize("transform", [
    IdentityTransform(), BucketTransform(4), TruncateTransform(4), YearTransform(),
    MonthTransform(), DayTransform(), HourTransform(), VoidTransform(),
])
def test_null_in_null_out(transform: Transform) -> None:
    source = TS if transform.can_transform(TS) else LONG
    assert transform.apply(source, None) is None
    assert transform.bind(source)(None) is None
    assert transform.to_human_string(source, None) == "null"
    out = transform.apply_arrow(source, pa.array([None, None], pa.timestamp("us")
                                                 if source == TS else pa.int64()))
    assert out.null_count == 2


def test_void_always_produces_null() -> None:
    assert VoidTransform().apply(LONG, 5) is None
    out = VoidTransform().apply_arrow(STRING, pa.array(["a", None, "b"]))
    assert out.to_pylist() == [None, None, None]
    assert out.type == pa.string()


def test_unknown_transform_is_preserved_and_cannot_be_applied() -> None:
    text = "zorder[2, 3]"
    t = parse_transform(text)
    assert isinstance(t, UnknownTransform) and t.is_unknown
    assert str(t) == text and t.to_json() == text
    assert not t.can_transform(LONG)
    assert t.result_type(LONG) == STRING
    assert not t.preserves_order
    with pytest.raises(UnsupportedFeature, match="unknown transform"):
        t.apply(LONG, 1)
    with pytest.raises(UnsupportedFeature):
        t.apply_arrow(LONG, pa.array([1]))
    assert t.to_human_string(LONG, "x") == "x"
    assert t.satisfies_order_of(UnknownTransform(text))
    assert not t.satisfies_order_of(IdentityTransform())


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(("text", "expected"), [
    ("identity", IdentityTransform()),
    ("Identity", IdentityTransform()),
    (" VOID ", VoidTransform()),
    ("bucket[16]", BucketTransform(16)),
    ("BUCKET[16]", BucketTransform(16)),
    ("bucket[ 16 ]", BucketTransform(16)),
    ("truncate[4]", TruncateTransform(4)),
    ("Truncate [20]", TruncateTransform(20)),
    ("year", YearTransform()),
    ("month", MonthTransform()),
    ("day", DayTransform()),
    ("hour", HourTransform()),
    ("bucket[2147483647]", BucketTransform(2**31 - 1)),
])
def test_parse_transform(text: str, expected: Transform) -> None:
    assert parse_transform(text) == expected


@pytest.mark.parametrize("text", [
    "bucket[0]", "bucket[-1]", "truncate[0]", "bucket", "truncate", "bucket[]", "bucket[x]",
    "bucket[2147483648]", "bucket[1.5]", "", "  ",
])
def test_parse_transform_rejects_bad_parameters(text: str) -> None:
    with pytest.raises(ValidationError):
        parse_transform(text, field="transform")


def test_parse_transform_rejects_non_strings() -> None:
    with pytest.raises(ValidationError, match="JSON string"):
        parse_transform(16)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["zorder", "year[3]", "days", "bucket(16)", "geo_tile[8]"])
def test_unrecognized_transforms_are_unknown_not_errors(text: str) -> None:
    t = parse_transform(text)
    assert t == UnknownTransform(text)
    assert str(t) == text


@pytest.mark.parametrize(("bad", "cls"), [
    (0, BucketTransform), (-3, BucketTransform), (True, BucketTransform),
    (2**31, TruncateTransform), (0, TruncateTransform), ("4", TruncateTransform),
])
def test_constructors_validate_parameters(bad: Any, cls: type[Transform]) -> None:
    with pytest.raises(ValidationError):
        cls(bad)  # type: ignore[call-arg]


def transforms() -> st.SearchStrategy[Transform]:
    positive = st.integers(1, 2**31 - 1)
    return st.one_of(
        st.sampled_from([IdentityTransform(), YearTransform(), MonthTransform(), DayTransform(),
                         HourTransform(), VoidTransform()]),
        positive.map(BucketTransform),
        positive.map(TruncateTransform),
        st.from_regex(r"[a-z_]{1,8}(\[[0-9, ]{1,6}\])?", fullmatch=True)
        .filter(lambda s: s.split("[")[0] not in {"identity", "year", "month", "day", "hour",
                                                  "void", "bucket", "truncate"})
        .map(UnknownTransform),
    )


@given(transforms())
def test_string_round_trip(t: Transform) -> None:
    assert parse_transform(str(t)) == t
    assert parse_transform(str(t).upper()) == t or t.is_unknown
    assert hash(parse_transform(str(t))) == hash(t)


def test_transforms_are_hashable_values() -> None:
    assert BucketTransform(16) == BucketTransform(16)
    assert BucketTransform(16) != BucketTransform(8)
    assert BucketTransform(4) != TruncateTransform(4)
    assert YearTransform() != MonthTransform()
    assert len({BucketTransform(16), parse_transform("bucket[16]"), DayTransform(),
                parse_transform("day")}) == 2
    with pytest.raises(AttributeError):
        BucketTransform(16).num_buckets = 3  # type: ignore[misc]


def test_dedup_names() -> None:
    assert {t.dedup_name for t in (YearTransform(), MonthTransform(), DayTransform(),
                                   HourTransform())} == {"time"}
    assert BucketTransform(16).dedup_name == "bucket[16]"
    assert TruncateTransform(3).dedup_name == "truncate[3]"
    assert IdentityTransform().dedup_name == "identity"
    assert VoidTransform().dedup_name == "void"


# --------------------------------------------------------------------------- ordering


def test_preserves_order_flags() -> None:
    # Java 1.10
    assert IdentityTransform().preserves_order
    assert TruncateTransform(3).preserves_order
    assert all(t.preserves_order for t in (YearTransform(), MonthTransform(), DayTransform(),
                                           HourTransform()))
    assert not BucketTransform(3).preserves_order
    assert not VoidTransform().preserves_order
    assert not UnknownTransform("x").preserves_order


def test_satisfies_order_of_time_and_identity() -> None:
    # Java 1.10
    order = [HourTransform(), DayTransform(), MonthTransform(), YearTransform()]
    for i, finer in enumerate(order):
        for j, coarser in enumerate(order):
            assert finer.satisfies_order_of(coarser) == (i <= j)
        assert IdentityTransform().satisfies_order_of(finer)
        assert not finer.satisfies_order_of(IdentityTransform())
    assert IdentityTransform().satisfies_order_of(TruncateTransform(3))
    assert not IdentityTransform().satisfies_order_of(BucketTransform(3))
    assert not IdentityTransform().satisfies_order_of(VoidTransform())
    assert BucketTransform(8).satisfies_order_of(BucketTransform(8))
    assert not BucketTransform(16).satisfies_order_of(BucketTransform(8))
    assert VoidTransform().satisfies_order_of(VoidTransform())


def test_satisfies_order_of_truncate_depends_on_the_source_type() -> None:
    t2, t4, t8 = TruncateTransform(2), TruncateTransform(4), TruncateTransform(8)
    assert t8.satisfies_order_of(t4, STRING) and not t4.satisfies_order_of(t8, STRING)
    assert t4.satisfies_order_of(t8, LONG) and not t8.satisfies_order_of(t4, LONG)
    assert not TruncateTransform(3).satisfies_order_of(t4, INT)
    assert t2.satisfies_order_of(t4, DEC)
    assert not t8.satisfies_order_of(t4) and t4.satisfies_order_of(t4)  # no type: equal only


@given(st.lists(st.integers(-1000, 1000), min_size=2, max_size=30),
       st.integers(1, 12), st.integers(1, 12))
def test_satisfies_order_of_holds_for_integers(values: list[int], w1: int, w2: int) -> None:
    a, b = TruncateTransform(w1), TruncateTransform(w2)
    # sort by a; break ties against b's order to expose any violation
    ordered = sorted(values, key=lambda v: (a.apply(LONG, v), -v))
    keys = [b.apply(LONG, v) for v in ordered]
    if a.satisfies_order_of(b, LONG):
        assert keys == sorted(keys)


@given(st.lists(st.text(alphabet="ab\u00e9", max_size=6), min_size=2, max_size=30),
       st.integers(1, 6), st.integers(1, 6))
def test_satisfies_order_of_holds_for_strings(values: list[str], w1: int, w2: int) -> None:
    a, b = TruncateTransform(w1), TruncateTransform(w2)
    ordered = sorted(sorted(values, reverse=True), key=lambda v: a.apply(STRING, v))
    keys = [b.apply(STRING, v) for v in ordered]
    if a.satisfies_order_of(b, STRING):
        assert keys == sorted(keys)


@given(st.integers(-(10**17), 10**17), st.integers(-(10**17), 10**17))
def test_order_preserving_transforms_are_monotone(x: int, y: int) -> None:
    lo, hi = min(x, y), max(x, y)
    for t in (IdentityTransform(), TruncateTransform(7), YearTransform(), MonthTransform(),
              DayTransform(), HourTransform()):
        assert t.apply(TS, lo) <= t.apply(TS, hi) if t.can_transform(TS) else True
    assert TruncateTransform(7).apply(LONG, lo) <= TruncateTransform(7).apply(LONG, hi)


# --------------------------------------------------------------------------- Arrow == scalar

_INT32 = st.integers(-(2**31), 2**31 - 1)
_MICROS = st.integers(micros("0001-01-01T00:00:00"), micros("9999-12-31T23:59:59.999999"))


def _decimals(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    bound = 10**precision - 1
    return st.integers(-bound, bound).map(lambda n: _exact(n, scale))


def _exact(n: int, scale: int) -> Decimal:
    return Decimal((1 if n < 0 else 0, tuple(int(c) for c in str(abs(n))), -scale))


_UUID_ARROW = pa.uuid() if hasattr(pa, "uuid") else pa.binary(16)

# (source type, Arrow type, value strategy in icenb's representation, to Arrow input)
ARROW_CASES: list[tuple[IcebergType, Any, st.SearchStrategy[Any], Any]] = [
    (INT, pa.int32(), _INT32, None),
    (LONG, pa.int64(), st.integers(-(2**63), 2**63 - 1), None),
    (DATE, pa.date32(), _INT32, None),
    (TIME, pa.time64("us"), st.integers(0, 86_400_000_000 - 1), None),
    (TS, pa.timestamp("us"), _MICROS, None),
    (TSTZ, pa.timestamp("us", tz="UTC"), _MICROS, None),
    (TS_NS, pa.timestamp("ns"), st.integers(-(2**63), 2**63 - 1), None),
    (TSTZ_NS, pa.timestamp("ns", tz="UTC"), st.integers(-(2**63), 2**63 - 1), None),
    (DEC, pa.decimal128(9, 2), _decimals(9, 2), None),
    (DecimalType(38, 10), pa.decimal128(38, 10), _decimals(38, 10), None),
    (STRING, pa.string(), st.text(max_size=12), None),
    (STRING, pa.large_string(), st.text(max_size=12), None),
    (UUID_T, _UUID_ARROW, st.uuids(), lambda u: u.bytes),
    (FixedType(4), pa.binary(4), st.binary(min_size=4, max_size=4), None),
    (BINARY, pa.binary(), st.binary(max_size=12), None),
    (BINARY, pa.large_binary(), st.binary(max_size=12), None),
]
ARROW_TRANSFORMS = st.one_of(
    st.sampled_from([YearTransform(), MonthTransform(), DayTransform(), HourTransform()]),
    st.integers(1, 2**31 - 1).map(BucketTransform),
    st.integers(1, 2**31 - 1).map(BucketTransform).filter(lambda b: b.num_buckets < 1000),
    st.integers(1, 40).map(TruncateTransform),
)


@pytest.mark.parametrize(("source_type", "arrow_type", "strategy", "to_arrow"), ARROW_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in ARROW_CASES])
@settings(max_examples=60)
@given(data=st.data())
def test_apply_arrow_matches_apply(source_type: IcebergType, arrow_type: Any,
                                   strategy: st.SearchStrategy[Any], to_arrow: Any,
                                   data: st.DataObject) -> None:
    transform = data.draw(ARROW_TRANSFORMS.filter(lambda t: t.can_transform(source_type)))
    values = data.draw(st.lists(st.none() | strategy, max_size=20))
    inputs = [v if v is None or to_arrow is None else to_arrow(v) for v in values]
    array = pa.array(inputs, type=arrow_type)
    # slice a longer array to exercise offsets
    padded = pa.concat_arrays([pa.array([None], type=arrow_type), array]).slice(1)
    arrays = (array, padded, pa.chunked_array([array[:3], array[3:]], type=arrow_type))
    try:
        expected = [transform.apply(source_type, v) for v in values]
    except ValidationError:  # e.g. truncate overflowing the type: both forms refuse
        for arr in arrays:
            with pytest.raises(ValidationError):
                transform.apply_arrow(source_type, arr)
        return
    for arr in arrays:
        out = transform.apply_arrow(source_type, arr)
        assert isinstance(out, pa.Array)
        assert _as_values(out) == expected


@given(st.lists(st.none() | _MICROS, max_size=20))
def test_identity_and_void_arrow(values: list[int | None]) -> None:
    arr = pa.array(values, type=pa.timestamp("us"))
    assert IdentityTransform().apply_arrow(TS, arr).equals(arr)
    assert VoidTransform().apply_arrow(TS, arr).null_count == len(values)


@pytest.mark.parametrize(("arrow_type", "scale"), [
    (pa.timestamp("s"), 1_000_000), (pa.timestamp("ms"), 1000), (pa.timestamp("us"), 1),
])
def test_arrow_timestamp_units_are_converted(arrow_type: Any, scale: int) -> None:
    raw = [-1, 0, 1, 1_510_871_468]
    arr = pa.array(raw, type=arrow_type)
    for t in (HourTransform(), DayTransform(), BucketTransform(16)):
        assert _as_values(t.apply_arrow(TS, arr)) == [t.apply(TS, v * scale) for v in raw]
    ns = [t * scale * 1000 for t in raw]
    assert _as_values(DayTransform().apply_arrow(TS_NS, arr)) == [
        DayTransform().apply(TS_NS, v) for v in ns]


def test_arrow_ns_timestamps_floor_for_a_micros_source() -> None:
    arr = pa.array([-1, -1001, 1001], type=pa.timestamp("ns"))
    assert _as_values(DayTransform().apply_arrow(TS, arr)) == [-1, -1, 0]
    assert BucketTransform(MAX_BUCKETS).apply_arrow(TS, arr).to_pylist() == [
        BucketTransform(MAX_BUCKETS).apply(TS, v) for v in (-1, -2, 1)]


def test_arrow_dates_and_times_in_other_units() -> None:
    d64 = pa.array([-86_400_000, 0, None], type=pa.date64())
    assert _as_values(DayTransform().apply_arrow(DATE, d64)) == [-1, 0, None]
    assert YearTransform().apply_arrow(TS, pa.array([-1], pa.date32())).to_pylist() == [-1]
    t32 = pa.array([81068], type=pa.time32("s"))
    assert BucketTransform(MAX_BUCKETS).apply_arrow(TIME, t32).to_pylist() == [
        BucketTransform(MAX_BUCKETS).apply(TIME, 81068 * 1_000_000)]


def test_arrow_unit_conversion_overflow_is_an_error() -> None:
    with pytest.raises(ValidationError, match="overflow"):
        DayTransform().apply_arrow(TS_NS, pa.array([2**62], pa.timestamp("s")))
    assert YearTransform().apply_arrow(TS_NS, pa.array([-1], pa.date32())).to_pylist() == [-1]


def test_arrow_int_source_accepts_narrow_integers() -> None:
    arr = pa.array([34, -1, None], type=pa.int8())
    assert BucketTransform(MAX_BUCKETS).apply_arrow(INT, arr).to_pylist() == [
        2017239379, BucketTransform(MAX_BUCKETS).apply(INT, -1), None]
    assert TruncateTransform(10).apply_arrow(INT, arr).to_pylist() == [30, -10, None]


def test_arrow_views_and_extension_types() -> None:
    if hasattr(pa, "string_view"):
        sv = pa.array(["iceberg", None], type=pa.string_view())
        assert BucketTransform(MAX_BUCKETS).apply_arrow(STRING, sv).to_pylist() == [
            1210000089, None]
        assert TruncateTransform(3).apply_arrow(STRING, sv).to_pylist() == ["ice", None]
    if hasattr(pa, "uuid"):
        u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
        arr = pa.array([u], type=pa.uuid())
        assert BucketTransform(MAX_BUCKETS).apply_arrow(UUID_T, arr).to_pylist() == [
            1488055340]


def test_apply_arrow_rejects_non_arrow_input() -> None:
    with pytest.raises(ValidationError, match="pyarrow"):
        BucketTransform(4).apply_arrow(LONG, [1, 2, 3])
    with pytest.raises(ValidationError):
        DayTransform().apply_arrow(TS, pa.array(["2017-11-16"]))


def test_apply_arrow_empty_chunked_array() -> None:
    out = BucketTransform(4).apply_arrow(LONG, pa.chunked_array([], type=pa.int64()))
    assert len(out) == 0 and out.type == pa.int32()


# --------------------------------------------------------------------------- human strings


def test_identity_and_truncate_human_strings_use_value_display() -> None:
    values = pytest.importorskip("icenb.spec.values")
    for source, value in ((DATE, 17486), (STRING, "a/b c"), (LONG, -5), (DEC, Decimal("1.50"))):
        assert IdentityTransform().to_human_string(source, value) == values.to_human(source,
                                                                                      value)
    assert IdentityTransform().to_human_string(DATE, 17486) == "2017-11-16"
    assert TruncateTransform(3).to_human_string(STRING, "ice") == "ice"
    assert TruncateTransform(10).to_human_string(INT, -10) == "-10"


def test_binary_human_strings_are_base64_like_java_partition_paths() -> None:
    assert IdentityTransform().to_human_string(BINARY, b"\x00\x01\x02\x03") == "AAECAw=="
    assert IdentityTransform().to_human_string(FixedType(4), b"\x00\x01\x02\x03") == "AAECAw=="
    assert TruncateTransform(3).to_human_string(BINARY, b"\x01\x02\x03") == "AQID"


def test_time_transforms_are_time_transforms() -> None:
    for t in (YearTransform(), MonthTransform(), DayTransform(), HourTransform()):
        assert isinstance(t, TimeTransform)
    assert not isinstance(BucketTransform(2), TimeTransform)
