"""The Arrow type that holds values of each Iceberg primitive type.

One mapping for the whole package (Appendix A's Parquet mapping, as pyarrow spells it): data
columns, decoded bounds and partition values all use it. A v3 ``variant`` is its unshredded
Parquet form, a struct of the binary ``metadata`` and ``value`` (spec: "Variant" in Appendix
A; Parquet's variant encoding); geometry and geography are WKB binary. Values keep the
representation of ``icenb.spec.types`` (dates as days, timestamps as micro- or nanoseconds
since the epoch).
"""

from __future__ import annotations

import pyarrow as pa

from icenb.errors import UnsupportedFeature
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
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

__all__ = ["primitive_arrow_type"]

_SIMPLE: dict[type, pa.DataType] = {
    BooleanType: pa.bool_(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    DateType: pa.date32(),
    TimeType: pa.time64("us"),
    TimestampType: pa.timestamp("us"),
    TimestamptzType: pa.timestamp("us", tz="UTC"),
    TimestampNanoType: pa.timestamp("ns"),
    TimestamptzNanoType: pa.timestamp("ns", tz="UTC"),
    UUIDType: pa.binary(16),
    UnknownType: pa.null(),
    VariantType: pa.struct([pa.field("metadata", pa.binary(), nullable=False),
                            pa.field("value", pa.binary(), nullable=False)]),
}


def primitive_arrow_type(t: IcebergType, *, large: bool = False) -> pa.DataType:
    """Arrow type for primitive ``t``; ``large`` picks 64-bit offsets for strings and binary.

    Raises ``UnsupportedFeature`` for types without an Arrow form (nested types).
    """
    simple = _SIMPLE.get(type(t))
    if simple is not None:
        return simple
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    if isinstance(t, StringType):
        return pa.large_string() if large else pa.string()
    if isinstance(t, (BinaryType, GeometryType, GeographyType)):
        return pa.large_binary() if large else pa.binary()
    raise UnsupportedFeature("no Arrow representation for this Iceberg type", value=str(t))
