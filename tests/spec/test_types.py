"""Types: parsing and printing the Appendix C type strings, equality, version gating."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import IcebergError, ValidationError
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
    decimal_required_bytes,
    min_format_version,
    parse_type_string,
)

SPEC_TYPE_STRINGS = {
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "date": DateType(),
    "time": TimeType(),
    "timestamp": TimestampType(),
    "timestamptz": TimestamptzType(),
    "timestamp_ns": TimestampNanoType(),
    "timestamptz_ns": TimestamptzNanoType(),
    "string": StringType(),
    "uuid": UUIDType(),
    "fixed[16]": FixedType(16),
    "binary": BinaryType(),
    "decimal(9,2)": DecimalType(9, 2),
    "decimal(9, 2)": DecimalType(9, 2),
    "unknown": UnknownType(),
    "variant": VariantType(),
    "geometry": GeometryType(),
    "geography": GeographyType(),
}


@pytest.mark.parametrize(("text", "expected"), sorted(SPEC_TYPE_STRINGS.items()))
def test_appendix_c_type_strings_parse(text: str, expected: object) -> None:
    assert parse_type_string(text) == expected


@pytest.mark.parametrize(("text", "expected"), sorted(SPEC_TYPE_STRINGS.items()))
def test_type_strings_print_and_parse_back(text: str, expected: object) -> None:
    t = parse_type_string(text)
    assert parse_type_string(str(t)) == t


def test_parameterized_geo_types() -> None:
    assert parse_type_string("geometry(srid:3857)") == GeometryType("srid:3857")
    assert str(GeometryType("srid:3857")) == "geometry(srid:3857)"
    g = parse_type_string("geography(EPSG:4326, karney)")
    assert g == GeographyType("EPSG:4326", "karney")
    assert parse_type_string(str(g)) == g
    assert str(GeographyType("EPSG:4326")) == "geography(EPSG:4326)"


def test_decimal_string_is_canonical_with_space() -> None:
    assert str(DecimalType(38, 10)) == "decimal(38, 10)"


@pytest.mark.parametrize("text", ["decimal(39,2)", "decimal(0,0)", "fixed[-1]", "varchar",
                                  "struct", "", "geography(x, nosuchalgo)", "list<int>"])
def test_bad_type_strings_raise_validation_error(text: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_type_string(text, field="schema.fields.c.type")
    assert isinstance(info.value, IcebergError)


def test_non_string_type_is_an_error_naming_field() -> None:
    with pytest.raises(ValidationError, match=r"field: f\.type"):
        parse_type_string(12, field="f.type")  # type: ignore[arg-type]


def test_primitive_equality_and_hash() -> None:
    assert IntegerType() == IntegerType()
    assert IntegerType() != LongType()
    assert len({DecimalType(9, 2), DecimalType(9, 2), DecimalType(9, 3), FixedType(3)}) == 3
    assert hash(StringType()) == hash(StringType())


def test_nested_types_compare_by_ids_and_children() -> None:
    a = StructType(NestedField(1, "a", IntegerType(), True))
    b = StructType(NestedField(1, "a", IntegerType(), True))
    c = StructType(NestedField(2, "a", IntegerType(), True))
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert ListType(3, StringType()) == ListType(3, StringType())
    assert ListType(3, StringType()) != ListType(3, StringType(), element_required=True)
    m = MapType(4, StringType(), 5, DoubleType())
    assert m.key_field.required and not m.value_field.required
    assert [f.name for f in m.fields] == ["key", "value"]


@pytest.mark.parametrize(
    ("precision", "size"),
    # Spec: Appendix A Avro/Parquet: the minimum bytes to hold 10^P - 1 in two's complement.
    [(1, 1), (2, 1), (3, 2), (4, 2), (9, 4), (10, 5), (18, 8), (19, 9), (38, 16)],
)
def test_decimal_required_bytes(precision: int, size: int) -> None:
    assert decimal_required_bytes(precision) == size


@given(st.integers(min_value=1, max_value=38))
def test_decimal_required_bytes_is_minimal(precision: int) -> None:
    n = decimal_required_bytes(precision)
    top = 10**precision - 1
    assert top < 2 ** (8 * n - 1)
    assert n == 1 or top >= 2 ** (8 * (n - 1) - 1)


def test_min_format_version() -> None:
    assert min_format_version(LongType()) == 1
    assert min_format_version(TimestampNanoType()) == 3
    nested = StructType(NestedField(1, "l", ListType(2, VariantType())))
    assert min_format_version(nested) == 3
    assert min_format_version(StructType(NestedField(1, "x", UUIDType()))) == 1


def test_a_deeply_nested_schema_prints() -> None:
    """Issue 17: str(schema) raised RecursionError at 200 nested structs."""
    from icenb.spec.schema import Schema
    from icenb.spec.types import LongType, NestedField, StructType

    t: StructType | LongType = LongType()
    for i in range(300):
        t = StructType(NestedField(1000 + i, f"f{i}", t, False))
    text = str(Schema(NestedField(1, "deep", t, False)))
    assert text.count("struct<") == 300 and text.endswith("long" + ">" * 300 + "\n}")
