"""The one Iceberg-to-Arrow primitive mapping (Appendix A's Parquet mapping, as pyarrow has it)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from icenb.errors import UnsupportedFeature
from icenb.spec.arrow_types import primitive_arrow_type
from icenb.spec.types import (
    BinaryType,
    DecimalType,
    FixedType,
    GeographyType,
    GeometryType,
    IcebergType,
    ListType,
    StringType,
    TimestampNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)


@pytest.mark.parametrize(("t", "expected"), [
    (TimeType(), pa.time64("us")),
    (TimestamptzType(), pa.timestamp("us", tz="UTC")),
    (TimestampNanoType(), pa.timestamp("ns")),
    (UUIDType(), pa.binary(16)),
    (FixedType(3), pa.binary(3)),
    (DecimalType(38, 10), pa.decimal128(38, 10)),
    (UnknownType(), pa.null()),
    (GeometryType(), pa.binary()),
    (GeographyType(), pa.binary()),
    # Parquet's unshredded variant: binary metadata and value, both required.
    (VariantType(), pa.struct([pa.field("metadata", pa.binary(), nullable=False),
                               pa.field("value", pa.binary(), nullable=False)])),
])
def test_mapping(t: IcebergType, expected: pa.DataType) -> None:
    assert primitive_arrow_type(t) == expected


def test_large_offsets_for_strings_and_binary() -> None:
    assert primitive_arrow_type(StringType(), large=True) == pa.large_string()
    assert primitive_arrow_type(BinaryType(), large=True) == pa.large_binary()


def test_nested_types_are_not_primitives() -> None:
    with pytest.raises(UnsupportedFeature):
        primitive_arrow_type(ListType(1, StringType()))
