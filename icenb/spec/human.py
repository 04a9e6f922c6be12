"""Human strings of partition values and column bounds: one formatter for every view.

Partition values are shown by their transform's human string (spec: Partitioning, Appendix C
"partition paths": ``month`` 682 is ``2026-11``, ``day`` ``2026-11-27``, ``hour``
``2026-11-27-06``, ``bucket``/``truncate`` as ints or text, identity by the source type).
Lower/upper bounds are decoded from Appendix D single-value serialization and shown as the
column type's value (dates, ISO timestamps, text, decimals, uuids). Hex is the fallback when
a type is unknown or the bytes do not decode, and is shown on request (``raw=True``).

Values that passed through pandas may arrive as floats (nullable ints) or as ``date``
objects (Arrow ``date32``); they are brought back to the transform's int before rendering.
Pure: no I/O; never raises.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icenb.reprs import safe_repr
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.transforms import IdentityTransform, Transform
from icenb.spec.types import (
    BinaryType,
    DateType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
)
from icenb.spec.values import from_bound_bytes, to_human

__all__ = ["BOUND_BYTES", "ValueTypes", "attach_types", "attached_types", "bound_hex",
           "bound_text", "partition_bound_text", "partition_pairs", "partition_text",
           "partition_value_text", "plain", "source_type", "types_from_tag", "types_tag"]

#: Bytes of a bound shown as hex before ``…``.
BOUND_BYTES = 16

_EPOCH_DAY = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_TS = (TimestampType, TimestamptzType)
_TS_NS = (TimestampNanoType, TimestamptzNanoType)


def bound_hex(raw: bytes | bytearray | memoryview | None) -> str:
    """Bound bytes as hex, cut after :data:`BOUND_BYTES` bytes; ``-`` when absent."""
    if raw is None:
        return "-"
    b = bytes(raw)
    return b[:BOUND_BYTES].hex() + ("…" if len(b) > BOUND_BYTES else "")


def bound_text(field_type: IcebergType | None, raw: bytes | bytearray | memoryview | None,
               *, raw_hex: bool = False) -> str:
    """A lower/upper bound as the column type's value (Appendix D decoded); hex when
    ``raw_hex``, when the type is unknown or when the bytes do not decode. ``-`` when absent."""
    if raw is None:
        return "-"
    if raw_hex or field_type is None:
        return bound_hex(raw)
    try:
        value = from_bound_bytes(field_type, bytes(raw))
    except Exception:  # a display nicety: undecodable bytes are shown as they are
        return bound_hex(raw)
    if isinstance(value, tuple):  # geometry/geography bound: a point
        return "(" + ", ".join(f"{c:g}" for c in value) + ")"
    if isinstance(field_type, (BinaryType, FixedType)):
        return "0x" + bound_hex(value)
    return to_human(field_type, value)


def _as_int(value: Any) -> Any:
    """A float holding an int (pandas' nullable ints) as that int; other values unchanged."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _ordinal(value: Any, source: IcebergType) -> Any:
    """Arrow/pandas renderings of a transform result brought back to the spec's int."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        micros = (value - _EPOCH) // _dt.timedelta(microseconds=1)
        return micros * 1000 if isinstance(source, _TS_NS) else micros
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DAY).days
    return _as_int(value)


def plain(value: Any) -> str:
    """A value whose type is unknown: ``null``, ints that became floats as ints, else str."""
    return "null" if value is None else str(_as_int(value))


def partition_value_text(transform: Transform, source: IcebergType | None, value: Any) -> str:
    """One partition value by its transform's human string (``"null"`` for None); the value
    as it is when the source type is unknown or the transform cannot render it."""
    if value is None:
        return "null"
    value = _as_int(value)
    if source is None:
        return str(value)
    if isinstance(transform, IdentityTransform):
        value = _ordinal(value, source) if isinstance(
            source, (DateType, *_TS, *_TS_NS)) else value
    elif not isinstance(source, (IntegerType, LongType)) or isinstance(value, _dt.date):
        value = _ordinal(value, source)
    try:
        return transform.to_human_string(source, value)
    except Exception:  # a display nicety: fall back to the value
        return str(value)


def source_type(field: PartitionField, schemas: Schema | Sequence[Schema]) -> IcebergType | None:
    """The type of a partition field's source column in the first schema that has it."""
    for schema in [schemas] if isinstance(schemas, Schema) else schemas:
        f = schema.field_by_id(field.source_id)
        if f is not None:
            return f.field_type
    return None


def partition_bound_text(field: PartitionField, schemas: Schema | Sequence[Schema],
                         raw: bytes | bytearray | memoryview | None, *,
                         raw_hex: bool = False) -> str:
    """A manifest's partition summary bound (spec: Manifest Lists, ``field_summary``: the
    serialized transform result) by the transform's human string; hex as :func:`bound_text`."""
    if raw is None:
        return "-"
    source = source_type(field, schemas)
    if raw_hex or source is None:
        return bound_hex(raw)
    try:
        value = from_bound_bytes(field.transform.result_type(source), bytes(raw))
    except Exception:  # undecodable bytes are shown as they are
        return bound_hex(raw)
    return partition_value_text(field.transform, source, value)


def partition_pairs(spec: PartitionSpec | None, schemas: Schema | Sequence[Schema],
                    values: Sequence[Any] | Mapping[str, Any], *, raw: bool = False
                    ) -> list[tuple[str, str]]:
    """``(name, human value)`` per partition field. ``values`` is a tuple in the spec's field
    order or a mapping by partition field name (an inspect ``partition`` struct); fields of a
    mapping the spec lacks, and every field when ``raw``, keep their value as it is."""
    fields = {} if spec is None else {f.name: f for f in spec.fields}
    if isinstance(values, Mapping):
        items = list(values.items())
    else:
        names = [f.name for f in spec.fields] if spec is not None else []
        items = [(names[i] if i < len(names) else str(i), v) for i, v in enumerate(values)]
    out = []
    for name, value in items:
        pf = None if raw else fields.get(name)
        text = (partition_value_text(pf.transform, source_type(pf, schemas), value)
                if pf is not None else plain(value))
        out.append((name, text))
    return out


def partition_text(spec: PartitionSpec | None, schemas: Schema | Sequence[Schema],
                   values: Sequence[Any] | Mapping[str, Any], *, names: bool = True,
                   raw: bool = False) -> str:
    """``ts_month=2026-11, id_bucket=3`` (``names=False``: ``2026-11, 3``; ``raw``: the stored
    values, ``ts_month=682``); ``""`` when there are no fields."""
    pairs = partition_pairs(spec, schemas, values, raw=raw)
    return ", ".join(f"{k}={v}" if names else v for k, v in pairs)


# --------------------------------------------------------------------------- attached types

#: id(obj) -> (weak reference to obj, its types); an entry goes when its object does. Kept out
#: of the object itself, so that ``type(f)(**f.__dict__)``, pickling and copying see only fields.
_ATTACHED: dict[int, tuple[weakref.ref[Any], ValueTypes]] = {}


@safe_repr
@dataclass(frozen=True)
class ValueTypes:
    """What a content file's or manifest's values need to be shown: the table's schemas
    (newest first) and the partition spec the object was written with."""

    schemas: tuple[Schema, ...]
    spec: PartitionSpec | None

    def field_type(self, field_id: int) -> IcebergType | None:
        """The type of column ``field_id`` in the newest schema that has it."""
        for schema in self.schemas:
            f = schema.field_by_id(field_id)
            if f is not None:
                return f.field_type
        return None


def attach_types(obj: Any, schemas: Schema | Sequence[Schema], spec: PartitionSpec | None
                 ) -> Any:
    """Remember on ``obj`` (a DataFile or ManifestFile read from a table) the types its bounds
    and partition values have, so its display can show them as values; returns ``obj``.

    Not a field: equality, hashing, ``dataclasses.replace``, copies and pickles do not see it.
    Objects that cannot be weakly referenced are returned unchanged.
    """
    types = ValueTypes((schemas,) if isinstance(schemas, Schema) else tuple(schemas), spec)
    key = id(obj)
    try:
        ref = weakref.ref(obj, functools.partial(_forget, key))
    except TypeError:
        return obj
    _ATTACHED[key] = (ref, types)
    return obj


def _forget(key: int, ref: weakref.ref[Any]) -> None:
    found = _ATTACHED.get(key)
    if found is not None and found[0] is ref:
        del _ATTACHED[key]


def attached_types(obj: Any) -> ValueTypes | None:
    """The :class:`ValueTypes` attached to ``obj``, None when there are none."""
    found = _ATTACHED.get(id(obj))
    if found is None or found[0]() is not obj:
        return None
    return found[1]


# --------------------------------------------------------------------------- tags of Arrow tables


def types_tag(schemas: Sequence[Schema], specs: Sequence[PartitionSpec]) -> bytes:
    """Schema metadata for a metadata-table result (``t.inspect.files()``): every column's type
    by field id, every partition field's transform and source type by name (newest wins), so
    its display can show bounds and partition values as values. The data is not changed."""
    from icenb.spec.schema import type_to_json  # schema JSON lives beside the schema model

    columns: dict[str, Any] = {}
    for schema in schemas:  # oldest first: a newer schema overwrites
        for fid, f in _all_fields(schema).items():
            columns[str(fid)] = type_to_json(f.field_type)
    partition: dict[str, Any] = {}
    for spec in sorted(specs, key=lambda sp: sp.spec_id):
        for pf in spec.fields:
            src = source_type(pf, list(reversed(list(schemas))))
            if src is not None:
                partition[pf.name] = [str(pf.transform), type_to_json(src)]
    return json.dumps({"columns": columns, "partition": partition}).encode()


def _all_fields(schema: Schema) -> dict[int, Any]:
    out: dict[int, Any] = {}
    stack = list(schema.fields)
    while stack:
        f = stack.pop()
        out[f.field_id] = f
        stack.extend(getattr(f.field_type, "fields", ()) or ())
    return out


def types_from_tag(tag: bytes | str | None
                   ) -> tuple[dict[int, IcebergType], dict[str, tuple[Transform, IcebergType]]]:
    """What :func:`types_tag` wrote: column types by id, partition transforms by name (both
    empty when the tag is absent or unreadable)."""
    from icenb.spec.schema import type_from_json
    from icenb.spec.transforms import parse_transform

    if not tag:
        return {}, {}
    try:
        obj = json.loads(tag)
        columns = {int(k): type_from_json(v) for k, v in obj.get("columns", {}).items()}
        partition = {k: (parse_transform(v[0]), type_from_json(v[1]))
                     for k, v in obj.get("partition", {}).items()}
    except Exception:  # a display nicety: no types, values as stored
        return {}, {}
    return columns, partition
