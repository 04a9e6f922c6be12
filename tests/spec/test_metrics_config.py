"""Metrics modes from table properties (``write.metadata.metrics.*``), as Java's MetricsConfig.

Agreement with Iceberg Java for whole tables (defaults, overrides, sort-order promotion, the
inferred-column limit) is checked in tests/table/write/test_data_writer.py, in that module's JVM.
"""

from __future__ import annotations

import pytest

from icenb.errors import IcebergWarning, ValidationError
from icenb.spec.metrics_config import (
    DEFAULT_MODE,
    MetricsConfig,
    MetricsMode,
    limit_field_ids,
    parse_metrics_mode,
)
from icenb.spec.schema import Schema
from icenb.spec.sort_order import SortField, SortOrder
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    IntegerType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

F = NestedField


@pytest.mark.parametrize(("text", "expected"), [
    ("none", "none"), ("COUNTS", "counts"), ("Full", "full"), ("truncate(16)", "truncate(16)"),
    ("TRUNCATE(3)", "truncate(3)"),
])
def test_parse_modes(text: str, expected: str) -> None:
    assert str(parse_metrics_mode(text)) == expected


@pytest.mark.parametrize("text", ["truncate(0)", "truncate( 4)", "truncate", " full", "all",
                                  "truncate(99999999999)"])
def test_invalid_modes(text: str) -> None:
    with pytest.raises(ValidationError):
        parse_metrics_mode(text)


def test_mode_properties() -> None:
    assert MetricsMode("truncate", 16) == DEFAULT_MODE and DEFAULT_MODE.truncate_length == 16
    assert not MetricsMode("none").keeps_counts
    assert MetricsMode("counts").keeps_counts and not MetricsMode("counts").keeps_bounds
    assert MetricsMode("full").keeps_bounds and MetricsMode("full").truncate_length is None
    with pytest.raises(ValidationError):
        MetricsMode("truncate", 0)


SCHEMA = Schema(
    F(1, "a", IntegerType()), F(2, "s", StructType(F(5, "x", IntegerType()),
                                                   F(6, "y", StringType()))),
    F(3, "l", ListType(7, IntegerType())), F(4, "m", MapType(8, StringType(), 9, IntegerType())),
)


def test_defaults_and_overrides() -> None:
    config = MetricsConfig.from_properties({
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.s.y": "full",
    }, SCHEMA)
    assert str(config.column_mode("a")) == "counts"
    assert str(config.mode_for(SCHEMA, 6)) == "full"
    assert str(MetricsConfig.from_properties({}, SCHEMA).mode_for(SCHEMA, 7)) == "truncate(16)"


def test_sorted_columns_keep_bounds_unless_configured() -> None:
    order = SortOrder(1, (SortField((1,), parse_transform("identity")),
                          SortField((5,), parse_transform("bucket[8]")),
                          SortField((6,), parse_transform("truncate[2]"))))
    config = MetricsConfig.from_properties({"write.metadata.metrics.default": "none",
                                            "write.metadata.metrics.column.s.y": "counts"},
                                           SCHEMA, order)
    assert str(config.column_mode("a")) == "truncate(16)"  # sorted: promoted
    assert str(config.column_mode("s.x")) == "none"  # bucket does not preserve order
    assert str(config.column_mode("s.y")) == "counts"  # a configured column wins
    full = MetricsConfig.from_properties({"write.metadata.metrics.default": "full"}, SCHEMA,
                                         order)
    assert str(full.column_mode("a")) == "full"


def test_invalid_configured_modes_fall_back_with_a_warning() -> None:
    with pytest.warns(IcebergWarning, match="column a"):
        config = MetricsConfig.from_properties({
            "write.metadata.metrics.default": "counts",
            "write.metadata.metrics.column.a": "bogus"}, SCHEMA)
    assert str(config.column_mode("a")) == "counts"
    with pytest.warns(IcebergWarning, match="default"):
        config = MetricsConfig.from_properties({"write.metadata.metrics.default": "x"}, SCHEMA)
    assert config.default_mode == DEFAULT_MODE


def test_limit_field_ids_order() -> None:
    # a struct's own primitive fields first, then nested ones depth first
    assert limit_field_ids(SCHEMA, 1) == {1}
    assert limit_field_ids(SCHEMA, 2) == {1, 5}
    assert limit_field_ids(SCHEMA, 4) == {1, 5, 6, 7}
    assert limit_field_ids(SCHEMA, 6) == {1, 5, 6, 7, 8, 9}
    assert limit_field_ids(SCHEMA, 100) == {1, 5, 6, 7, 8, 9}


def test_wide_tables_keep_metrics_for_the_first_columns() -> None:
    props = {"write.metadata.metrics.max-inferred-column-defaults": "2"}
    config = MetricsConfig.from_properties(props, SCHEMA)
    assert [str(config.column_mode(n)) for n in ("a", "s.x", "s.y", "l.element")] == \
        ["truncate(16)", "truncate(16)", "none", "none"]
    # six primitive columns fit a limit of six: the default applies everywhere
    props["write.metadata.metrics.max-inferred-column-defaults"] = "6"
    assert str(MetricsConfig.from_properties(props, SCHEMA).column_mode("m.value")) == \
        "truncate(16)"
    with pytest.warns(IcebergWarning):
        MetricsConfig.from_properties(
            {"write.metadata.metrics.max-inferred-column-defaults": "-1"}, SCHEMA)
    with pytest.raises(ValidationError):
        MetricsConfig.from_properties(
            {"write.metadata.metrics.max-inferred-column-defaults": "many"}, SCHEMA)


def test_validate_referenced_columns() -> None:
    config = MetricsConfig.from_properties({"write.metadata.metrics.column.nope": "full"})
    with pytest.raises(ValidationError) as e:
        config.validate_referenced_columns(SCHEMA)
    assert e.value.field == "write.metadata.metrics.column.nope"
    MetricsConfig.from_properties({"write.metadata.metrics.column.s.y": "full"}) \
        .validate_referenced_columns(SCHEMA)
