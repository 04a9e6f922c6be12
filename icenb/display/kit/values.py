"""Bounds and partition values as every view shows them: the column's or transform's human
value (:mod:`icenb.spec.human`), or the stored bytes as hex when the ``display_raw_bounds``
option asks for them (``icenb.set_options(display_raw_bounds=True)``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from icenb.options import get_options
from icenb.spec import human
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.types import IcebergType

__all__ = ["bound", "bounds_are_raw", "partition", "partition_value"]


def bounds_are_raw() -> bool:
    """Whether bounds are shown as stored (hex): the ``display_raw_bounds`` option."""
    return get_options().display_raw_bounds


def bound(field_type: IcebergType | None, raw: bytes | None) -> str:
    """A lower/upper bound as the column type's value, or hex on request / when the type is
    unknown (Appendix D single-value serialization)."""
    return human.bound_text(field_type, raw, raw_hex=bounds_are_raw())


def partition_value(spec: PartitionSpec | None, schemas: Schema | Sequence[Schema],
                    name: str, value: Any) -> str:
    """One partition field's value by its transform's human string (``ts_month`` 682 is
    ``2026-11``); the value as stored when ``display_raw_bounds`` is on."""
    pairs = human.partition_pairs(spec, schemas, {name: value}, raw=bounds_are_raw())
    return pairs[0][1]


def partition(spec: PartitionSpec | None, schemas: Schema | Sequence[Schema],
              values: Sequence[Any] | Mapping[str, Any], *, names: bool = True) -> str:
    """A partition tuple (or struct) as ``ts_month=2026-11, id_bucket=3``; the stored
    values when ``display_raw_bounds`` is on."""
    return human.partition_text(spec, schemas, values, names=names, raw=bounds_are_raw())
