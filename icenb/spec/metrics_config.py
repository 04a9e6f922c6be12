"""Which column metrics a writer keeps: the ``write.metadata.metrics.*`` table properties.

Spec: "Manifests" (``data_file`` metrics maps) and the table properties of the configuration
page; the rules follow the reference implementation's ``MetricsConfig`` (Java 1.10):

* ``write.metadata.metrics.default`` sets the mode of every column (default ``truncate(16)``);
* ``write.metadata.metrics.column.<name>`` overrides one column (full dotted name, as
  :meth:`Schema.column_name` spells it: ``s.a``, ``l.element``, ``m.key``);
* without a configured default, a table with more primitive columns than
  ``write.metadata.metrics.max-inferred-column-defaults`` (default 100) keeps ``truncate(16)``
  only for the first ones (breadth first within each struct) and ``none`` for the rest;
* columns of the sort order under an order-preserving transform get at least ``truncate(16)``.

Modes: ``none`` (no metrics), ``counts`` (value, null and NaN counts), ``truncate(N)`` (counts
and bounds; string bounds cut to N code points, binary bounds to N bytes) and ``full``.
An unparseable mode falls back as the reference implementation does (a configured column to the
default mode, the default to ``truncate(16)``) and warns with :class:`IcebergWarning`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from icenb.errors import IcebergWarning, ValidationError
from icenb.reprs import safe_repr
from icenb.spec.properties import (
    METRICS_COLUMN_PREFIX,
    METRICS_DEFAULT,
    METRICS_MAX_INFERRED_COLUMNS,
)
from icenb.spec.schema import Schema
from icenb.spec.sort_order import SortOrder
from icenb.spec.types import ListType, MapType, PrimitiveType, StructType, VariantType

__all__ = [
    "COLUMN_MODE_PREFIX",
    "DEFAULT_MODE",
    "DEFAULT_MODE_PROPERTY",
    "MAX_INFERRED_COLUMNS_DEFAULT",
    "MAX_INFERRED_COLUMNS_PROPERTY",
    "MetricsConfig",
    "MetricsMode",
    "limit_field_ids",
    "parse_metrics_mode",
]

DEFAULT_MODE_PROPERTY = METRICS_DEFAULT
COLUMN_MODE_PREFIX = METRICS_COLUMN_PREFIX
MAX_INFERRED_COLUMNS_PROPERTY = METRICS_MAX_INFERRED_COLUMNS
MAX_INFERRED_COLUMNS_DEFAULT = 100

Kind = Literal["none", "counts", "truncate", "full"]


@safe_repr
@dataclass(frozen=True)
class MetricsMode:
    """One column's metrics mode; ``length`` is the truncation width of ``truncate(N)``."""

    kind: Kind
    length: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("none", "counts", "truncate", "full"):
            raise ValidationError("unknown metrics mode", field="mode", value=self.kind)
        if self.kind == "truncate":
            if not isinstance(self.length, int) or self.length <= 0:
                raise ValidationError("truncate length must be a positive integer",
                                      field="mode", value=self.length)
        elif self.length is not None:
            raise ValidationError(f"metrics mode {self.kind} takes no length", field="mode",
                                  value=self.length)

    @property
    def keeps_counts(self) -> bool:
        """Value, null and NaN counts are kept (every mode but ``none``)."""
        return self.kind != "none"

    @property
    def keeps_bounds(self) -> bool:
        """Lower and upper bounds are kept (``truncate(N)`` and ``full``)."""
        return self.kind in ("truncate", "full")

    @property
    def truncate_length(self) -> int | None:
        """Width bounds of strings/binary are cut to; None when not truncated (``full``)."""
        return self.length if self.kind == "truncate" else None

    def __str__(self) -> str:
        return f"truncate({self.length})" if self.kind == "truncate" else self.kind


NONE = MetricsMode("none")
COUNTS = MetricsMode("counts")
FULL = MetricsMode("full")
DEFAULT_MODE = MetricsMode("truncate", 16)

_TRUNCATE = re.compile(r"truncate\((\d+)\)")


def parse_metrics_mode(text: str) -> MetricsMode:
    """Parse ``none``, ``counts``, ``full`` (any case) or ``truncate(N)`` with N > 0."""
    if not isinstance(text, str):
        raise ValidationError("a metrics mode must be a string", field="mode", value=text)
    lowered = text.lower()
    if lowered in ("none", "counts", "full"):
        return MetricsMode(lowered)  # type: ignore[arg-type]
    m = _TRUNCATE.fullmatch(lowered)
    if m is None:
        raise ValidationError("invalid metrics mode (expected none, counts, truncate(N) or "
                              "full)", field="mode", value=text)
    length = int(m.group(1))
    if not 0 < length < 2**31:
        raise ValidationError("truncate length must be between 1 and 2^31 - 1", field="mode",
                              value=text)
    return MetricsMode("truncate", length)


def _mode_or(text: str, fallback: MetricsMode, what: str) -> MetricsMode:
    try:
        return parse_metrics_mode(text)
    except ValidationError:
        warnings.warn(f"ignoring invalid metrics mode for {what}: {text!r} (using {fallback})",
                      IcebergWarning, stacklevel=3)
        return fallback


def _eligible(t: object) -> bool:
    return isinstance(t, (PrimitiveType, VariantType))


def limit_field_ids(schema: Schema, limit: int) -> frozenset[int]:
    """The ids of the first ``limit`` primitive columns that get inferred default metrics.

    Order as the reference implementation's ``MetricsConfig.limitFieldIds``: within a struct
    its primitive fields first, then its nested fields one by one (depth first); a list adds
    its element, a map its key then value, before descending into them.
    """
    ids: list[int] = []
    seen: set[int] = set()

    def add(field_id: int) -> None:
        if field_id not in seen:
            seen.add(field_id)
            ids.append(field_id)

    def more() -> bool:
        return len(ids) < limit

    def visit(t: object) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                if not more():
                    break
                if _eligible(f.field_type):
                    add(f.field_id)
            for f in t.fields:
                if not more():
                    break
                visit(f.field_type)
        elif isinstance(t, ListType):
            if more() and _eligible(t.element_type):
                add(t.element_id)
            visit(t.element_type)
        elif isinstance(t, MapType):
            if more() and _eligible(t.key_type):
                add(t.key_id)
            if more() and _eligible(t.value_type):
                add(t.value_id)
            visit(t.key_type)
            visit(t.value_type)

    visit(schema.struct)
    return frozenset(ids)


def _count_leaves(t: object) -> int:
    """Primitive (and variant) fields at any depth, as ``TypeUtil.getProjectedIds`` counts."""
    if isinstance(t, StructType):
        return sum(1 if _eligible(f.field_type) else _count_leaves(f.field_type)
                   for f in t.fields)
    if isinstance(t, ListType):
        return 1 if _eligible(t.element_type) else _count_leaves(t.element_type)
    if isinstance(t, MapType):
        return sum(1 if _eligible(x) else _count_leaves(x) for x in (t.key_type, t.value_type))
    return 0


@safe_repr
@dataclass(frozen=True)
class MetricsConfig:
    """Metrics mode by full column name, and the mode of every other column."""

    column_modes: Mapping[str, MetricsMode] = field(default_factory=dict)
    default_mode: MetricsMode = DEFAULT_MODE

    def column_mode(self, name: str) -> MetricsMode:
        """The mode of the column with this full dotted name."""
        return self.column_modes.get(name, self.default_mode)

    def mode_for(self, schema: Schema, field_id: int) -> MetricsMode:
        """The mode of the column ``field_id`` of ``schema`` (looked up by its full name)."""
        name = schema.column_name(field_id)
        return self.default_mode if name is None else self.column_mode(name)

    @classmethod
    def from_properties(cls, properties: Mapping[str, str], schema: Schema | None = None,
                        sort_order: SortOrder | None = None) -> MetricsConfig:
        """The config a writer uses for a table with these properties, schema and sort order."""
        limit = _max_inferred(properties)
        modes: dict[str, MetricsMode] = {}
        configured = properties.get(DEFAULT_MODE_PROPERTY)
        if configured is not None:
            default = _mode_or(configured, DEFAULT_MODE, "the default")
        elif schema is None or _count_leaves(schema.struct) <= limit:
            default = DEFAULT_MODE
        else:
            for fid in limit_field_ids(schema, limit):
                name = schema.column_name(fid)
                if name is not None:
                    modes[name] = DEFAULT_MODE
            default = NONE
        if sort_order is not None and schema is not None:
            sorted_mode = DEFAULT_MODE if default.kind in ("none", "counts") else default
            for sf in sort_order.fields:
                if getattr(sf.transform, "preserves_order", False):
                    name = schema.column_name(sf.source_id)
                    if name is not None:
                        modes[name] = sorted_mode
        for key, value in properties.items():
            if key.startswith(COLUMN_MODE_PREFIX):
                column = key[len(COLUMN_MODE_PREFIX):]
                modes[column] = _mode_or(value, default, f"column {column}")
        return cls(modes, default)

    def validate_referenced_columns(self, schema: Schema) -> None:
        """Every configured column exists in ``schema`` (``ValidationError`` naming it)."""
        for name in self.column_modes:
            if schema.field_by_name(name) is None:
                raise ValidationError("metrics config names a column that is not in the schema",
                                      field=COLUMN_MODE_PREFIX + name, value=name)


def _max_inferred(properties: Mapping[str, str]) -> int:
    raw = properties.get(MAX_INFERRED_COLUMNS_PROPERTY)
    if raw is None:
        return MAX_INFERRED_COLUMNS_DEFAULT
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationError("must be an integer", field=MAX_INFERRED_COLUMNS_PROPERTY,
                              value=raw) from None
    if value < 0:
        warnings.warn(f"{MAX_INFERRED_COLUMNS_PROPERTY} is negative ({value}); using "
                      f"{MAX_INFERRED_COLUMNS_DEFAULT}", IcebergWarning, stacklevel=3)
        return MAX_INFERRED_COLUMNS_DEFAULT
    return value
