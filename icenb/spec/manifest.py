"""Manifests and manifest lists: their schemas (v1-v3), entries, and read-time inheritance.

Spec sections: "Manifests", "Manifest Entry Fields", "Sequence Number Inheritance",
"First Row ID Inheritance", "Manifest Lists", Appendix A (Avro), Appendix C (content file and
file scan task JSON), Appendix E (read defaults).

Two representations, as DESIGN.md ("Metadata at columnar speed") asks:

* Columnar: a manifest decoded into a ``pyarrow.Table`` whose columns carry the Avro field names
  (``status``, ``snapshot_id``, ``sequence_number``, ``file_sequence_number``,
  ``data_file: struct<...>``). :func:`apply_inheritance` fills inherited values with vectorized
  Arrow compute; :func:`apply_manifest_list_defaults` does the same for a manifest list.
* Per-entry Python objects (:class:`DataFile`, :class:`ManifestEntry`, :class:`ManifestFile`)
  for the few entries a person looks at, and for writers (``to_avro_record``).

This module does no I/O: decoding and encoding Avro bytes belong to ``icenb.io``.
"""

from __future__ import annotations

import enum
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, InvalidMetadata, ValidationError
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec._json_fields import (
    as_object,
    field_path,
    json_list,
    opt_int,
    opt_long,
    opt_str,
    req_int,
    req_long,
    req_str,
    require,
)
from icenb.spec.expression_json import expression_from_json, expression_to_json
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysFalse, AlwaysTrue
from icenb.spec.manifest_evaluator import PartitionFieldSummary, decode_field_summaries
from icenb.spec.metadata_columns import DELETE_FILE_PATH
from icenb.spec.partition_spec import (
    PartitionSpec,
    partition_spec_from_json,
    partition_spec_to_json,
)
from icenb.spec.schema import Schema, schema_from_json, schema_to_json
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
    decimal_required_bytes,
)

__all__ = [
    "BLOCK_SIZE_DEFAULT",
    "CONTENT_KEY",
    "FORMAT_VERSION_KEY",
    "MANIFEST_LIST_FIRST_ROW_ID_KEY",
    "MANIFEST_LIST_PARENT_SNAPSHOT_ID_KEY",
    "MANIFEST_LIST_SEQUENCE_NUMBER_KEY",
    "MANIFEST_LIST_SNAPSHOT_ID_KEY",
    "PARTITION_SPEC_ID_KEY",
    "PARTITION_SPEC_KEY",
    "SCHEMA_ID_KEY",
    "SCHEMA_KEY",
    "ContentKind",
    "DataFile",
    "EntryStatus",
    "FieldSummary",
    "FileContent",
    "FileFormat",
    "FileScanTask",
    "ManifestContent",
    "ManifestEntry",
    "ManifestFile",
    "apply_inheritance",
    "apply_manifest_list_defaults",
    "avro_field_name",
    "avro_schema",
    "content_file_from_json",
    "content_file_to_json",
    "data_file_read_type",
    "data_file_type",
    "file_scan_task_from_json",
    "file_scan_task_to_json",
    "inherit_entries",
    "manifest_entry_read_type",
    "manifest_entry_type",
    "manifest_file_read_type",
    "manifest_file_type",
    "manifest_files_from_arrow",
    "manifest_list_metadata",
    "manifest_metadata",
]

SUPPORTED_VERSIONS = (1, 2, 3)


def _check_version(format_version: int) -> None:
    if format_version not in SUPPORTED_VERSIONS:
        raise ValidationError("manifests exist in format versions 1 to 3",
                              field="format_version", value=format_version)


# --------------------------------------------------------------------------- enums & keys


class ManifestContent(enum.IntEnum):
    """What a manifest tracks (spec: Manifest Lists, field 517)."""

    DATA = 0
    DELETES = 1


class FileContent(enum.IntEnum):
    """What a content file holds (spec: Manifests, data_file field 134)."""

    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class ContentKind(str, enum.Enum):
    """What a content file is, in the one vocabulary icenb uses everywhere (spec: "Delete
    Formats"): data, a position delete file, a deletion vector (a position delete blob in a
    Puffin file, v3+, "Deletion Vectors") or an equality delete file. :attr:`DataFile.kind`."""

    DATA = "data"
    POSITION_DELETES = "position deletes"
    DELETION_VECTOR = "deletion vector"
    EQUALITY_DELETES = "equality deletes"

    @property
    def is_delete(self) -> bool:
        """Anything but data."""
        return self is not ContentKind.DATA


class EntryStatus(enum.IntEnum):
    """A manifest entry's status (spec: Manifests, manifest_entry field 0)."""

    EXISTING = 0
    ADDED = 1
    DELETED = 2


class FileFormat(str, enum.Enum):
    """A content file's format (spec: data_file field 101; written upper-case by Java)."""

    AVRO = "avro"
    ORC = "orc"
    PARQUET = "parquet"
    PUFFIN = "puffin"

    @classmethod
    def parse(cls, text: Any, *, field: str = "file_format") -> FileFormat:
        """Read a format name in any case (``"PARQUET"``, ``"parquet"``)."""
        if isinstance(text, FileFormat):
            return text
        if isinstance(text, str):
            try:
                return cls(text.lower())
            except ValueError:
                pass
        raise InvalidMetadata("unknown file format", field=field, value=text)


# Manifest file key-value metadata (spec: Manifests).
SCHEMA_KEY = "schema"
SCHEMA_ID_KEY = "schema-id"
PARTITION_SPEC_KEY = "partition-spec"
PARTITION_SPEC_ID_KEY = "partition-spec-id"
FORMAT_VERSION_KEY = "format-version"
CONTENT_KEY = "content"
# Manifest list key-value metadata (as the reference implementation writes it).
MANIFEST_LIST_SNAPSHOT_ID_KEY = "snapshot-id"
MANIFEST_LIST_PARENT_SNAPSHOT_ID_KEY = "parent-snapshot-id"
MANIFEST_LIST_SEQUENCE_NUMBER_KEY = "sequence-number"
MANIFEST_LIST_FIRST_ROW_ID_KEY = "first-row-id"

#: v1 data_file block_size_in_bytes: "Always write a default in v1" (the reference writes 64 MiB).
BLOCK_SIZE_DEFAULT = 64 * 1024 * 1024

_CONTENT_NAMES = {ManifestContent.DATA: "data", ManifestContent.DELETES: "deletes"}


def manifest_metadata(
    schema: Schema, spec: PartitionSpec, format_version: int,
    content: ManifestContent = ManifestContent.DATA,
) -> dict[str, str]:
    """The key-value metadata a manifest of ``format_version`` must carry (spec: Manifests)."""
    _check_version(format_version)
    meta = {
        SCHEMA_KEY: json.dumps(schema_to_json(schema), separators=(",", ":")),
        SCHEMA_ID_KEY: str(schema.schema_id),
        PARTITION_SPEC_KEY: json.dumps(
            partition_spec_to_json(spec, format_version)["fields"], separators=(",", ":")),
        PARTITION_SPEC_ID_KEY: str(spec.spec_id),
        FORMAT_VERSION_KEY: str(format_version),
    }
    if format_version >= 2:
        meta[CONTENT_KEY] = _CONTENT_NAMES[ManifestContent(content)]
    elif content != ManifestContent.DATA:
        raise ValidationError("v1 manifests hold data files only", field="content", value=content)
    return meta


def manifest_list_metadata(
    snapshot_id: int, parent_snapshot_id: int | None, sequence_number: int, format_version: int,
    first_row_id: int | None = None,
) -> dict[str, str]:
    """The key-value metadata of a manifest list, as the reference implementation writes it."""
    _check_version(format_version)
    meta = {MANIFEST_LIST_SNAPSHOT_ID_KEY: str(snapshot_id)}
    if parent_snapshot_id is not None:
        meta[MANIFEST_LIST_PARENT_SNAPSHOT_ID_KEY] = str(parent_snapshot_id)
    if format_version >= 2:
        meta[MANIFEST_LIST_SEQUENCE_NUMBER_KEY] = str(sequence_number)
    if format_version >= 3 and first_row_id is not None:
        meta[MANIFEST_LIST_FIRST_ROW_ID_KEY] = str(first_row_id)
    meta[FORMAT_VERSION_KEY] = str(format_version)
    return meta


# --------------------------------------------------------------------------- schemas

def _req(fid: int, name: str, t: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(fid, name, t, required=True, doc=doc)


def _opt(fid: int, name: str, t: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(fid, name, t, required=False, doc=doc)


# manifest_entry (spec: Manifests). Docs are those the reference implementation embeds.
STATUS = _req(0, "status", IntegerType())
SNAPSHOT_ID = _opt(1, "snapshot_id", LongType())
SEQUENCE_NUMBER = _opt(3, "sequence_number", LongType())
FILE_SEQUENCE_NUMBER = _opt(4, "file_sequence_number", LongType())
DATA_FILE_ID = 2

# data_file
CONTENT = _req(134, "content", IntegerType(),
               "Contents of the file: 0=data, 1=position deletes, 2=equality deletes")
FILE_PATH = _req(100, "file_path", StringType(), "Location URI with FS scheme")
FILE_FORMAT = _req(101, "file_format", StringType(), "File format name: avro, orc, or parquet")
PARTITION_ID = 102
PARTITION_NAME = "partition"
PARTITION_DOC = "Partition data tuple, schema based on the partition spec"
RECORD_COUNT = _req(103, "record_count", LongType(), "Number of records in the file")
FILE_SIZE = _req(104, "file_size_in_bytes", LongType(), "Total file size in bytes")
BLOCK_SIZE = _req(105, "block_size_in_bytes", LongType())
COLUMN_SIZES = _opt(108, "column_sizes", MapType(117, IntegerType(), 118, LongType(), True),
                    "Map of column id to total size on disk")
VALUE_COUNTS = _opt(109, "value_counts", MapType(119, IntegerType(), 120, LongType(), True),
                    "Map of column id to total count, including null and NaN")
NULL_VALUE_COUNTS = _opt(110, "null_value_counts",
                         MapType(121, IntegerType(), 122, LongType(), True),
                         "Map of column id to null value count")
NAN_VALUE_COUNTS = _opt(137, "nan_value_counts",
                        MapType(138, IntegerType(), 139, LongType(), True),
                        "Map of column id to number of NaN values in the column")
LOWER_BOUNDS = _opt(125, "lower_bounds", MapType(126, IntegerType(), 127, BinaryType(), True),
                    "Map of column id to lower bound")
UPPER_BOUNDS = _opt(128, "upper_bounds", MapType(129, IntegerType(), 130, BinaryType(), True),
                    "Map of column id to upper bound")
KEY_METADATA = _opt(131, "key_metadata", BinaryType(), "Encryption key metadata blob")
SPLIT_OFFSETS = _opt(132, "split_offsets", ListType(133, LongType(), True), "Splittable offsets")
EQUALITY_IDS = _opt(135, "equality_ids", ListType(136, IntegerType(), True),
                    "Equality comparison field IDs")
SORT_ORDER_ID = _opt(140, "sort_order_id", IntegerType(), "Sort order ID")
FIRST_ROW_ID = _opt(142, "first_row_id", LongType(),
                    "The first row ID assigned to the first row in the data file")
REFERENCED_DATA_FILE = _opt(
    143, "referenced_data_file", StringType(),
    "Fully qualified location (URI with FS scheme) of a data file that all deletes reference")
CONTENT_OFFSET = _opt(144, "content_offset", LongType(),
                      "The offset in the file where the content starts")
CONTENT_SIZE = _opt(145, "content_size_in_bytes", LongType(),
                    "The length of referenced content stored in the file")

# manifest_file (spec: Manifest Lists)
MANIFEST_PATH = _req(500, "manifest_path", StringType(), "Location URI with FS scheme")
MANIFEST_LENGTH = _req(501, "manifest_length", LongType(), "Total file size in bytes")
PARTITION_SPEC_ID = _req(502, "partition_spec_id", IntegerType(), "Spec ID used to write")
MANIFEST_CONTENT = _req(517, "content", IntegerType(),
                        "Contents of the manifest: 0=data, 1=deletes")
MANIFEST_SEQUENCE_NUMBER = _req(515, "sequence_number", LongType(),
                                "Sequence number when the manifest was added")
MIN_SEQUENCE_NUMBER = _req(516, "min_sequence_number", LongType(),
                           "Lowest sequence number in the manifest")
ADDED_SNAPSHOT_ID = _req(503, "added_snapshot_id", LongType(),
                         "Snapshot ID that added the manifest")
_COUNTS = (
    (504, "added_files_count", IntegerType(), "Added entry count"),
    (505, "existing_files_count", IntegerType(), "Existing entry count"),
    (506, "deleted_files_count", IntegerType(), "Deleted entry count"),
    (512, "added_rows_count", LongType(), "Added rows count"),
    (513, "existing_rows_count", LongType(), "Existing rows count"),
    (514, "deleted_rows_count", LongType(), "Deleted rows count"),
)
FIELD_SUMMARY = StructType(
    _req(509, "contains_null", BooleanType(), "True if any file has a null partition value"),
    _opt(518, "contains_nan", BooleanType(), "True if any file has a nan partition value"),
    _opt(510, "lower_bound", BinaryType(), "Partition lower bound for all files"),
    _opt(511, "upper_bound", BinaryType(), "Partition upper bound for all files"),
)
PARTITIONS = _opt(507, "partitions", ListType(508, FIELD_SUMMARY, True),
                  "Summary for each partition")
MANIFEST_KEY_METADATA = _opt(519, "key_metadata", BinaryType(), "Encryption key metadata blob")
MANIFEST_FIRST_ROW_ID = _opt(520, "first_row_id", LongType(),
                             "Starting row ID to assign to new rows in ADDED data files")


def _optional(f: NestedField) -> NestedField:
    return replace(f, required=False)


@lru_cache(maxsize=256)
def data_file_type(partition_type: StructType, format_version: int) -> StructType:
    """The ``data_file`` struct a writer of ``format_version`` writes, field order as Java's.

    Spec: Manifests (data_file); v1 carries ``block_size_in_bytes`` and no ``content``.
    """
    _check_version(format_version)
    metrics = (COLUMN_SIZES, VALUE_COUNTS, NULL_VALUE_COUNTS, NAN_VALUE_COUNTS, LOWER_BOUNDS,
               UPPER_BOUNDS, KEY_METADATA, SPLIT_OFFSETS)
    if format_version == 1:
        partition = _req(PARTITION_ID, PARTITION_NAME, partition_type)
        return StructType(FILE_PATH, FILE_FORMAT, partition, RECORD_COUNT, FILE_SIZE, BLOCK_SIZE,
                          *metrics, SORT_ORDER_ID)
    partition = _req(PARTITION_ID, PARTITION_NAME, partition_type, PARTITION_DOC)
    head = (CONTENT, FILE_PATH, FILE_FORMAT, partition, RECORD_COUNT, FILE_SIZE, *metrics,
            EQUALITY_IDS, SORT_ORDER_ID)
    if format_version == 2:
        return StructType(*head, REFERENCED_DATA_FILE)
    return StructType(*head, FIRST_ROW_ID, REFERENCED_DATA_FILE, CONTENT_OFFSET, CONTENT_SIZE)


@lru_cache(maxsize=256)
def manifest_entry_type(partition_type: StructType, format_version: int) -> StructType:
    """The ``manifest_entry`` struct a writer of ``format_version`` writes (spec: Manifests).

    ``snapshot_id`` is optional in every version, as the reference implementation writes it.
    """
    data_file = _req(DATA_FILE_ID, "data_file", data_file_type(partition_type, format_version))
    if format_version == 1:
        return StructType(STATUS, SNAPSHOT_ID, data_file)
    return StructType(STATUS, SNAPSHOT_ID, SEQUENCE_NUMBER, FILE_SEQUENCE_NUMBER, data_file)


@lru_cache(maxsize=8)
def manifest_file_type(format_version: int) -> StructType:
    """The ``manifest_file`` struct of a manifest list of ``format_version`` (spec: Manifest
    Lists); v1 counts are optional and come after ``partitions``, as Java writes them."""
    _check_version(format_version)
    if format_version == 1:
        counts = [_opt(*c) for c in _COUNTS]
        return StructType(MANIFEST_PATH, MANIFEST_LENGTH, PARTITION_SPEC_ID, ADDED_SNAPSHOT_ID,
                          *counts[:3], PARTITIONS, *counts[3:], MANIFEST_KEY_METADATA)
    fields = [MANIFEST_PATH, MANIFEST_LENGTH, PARTITION_SPEC_ID, MANIFEST_CONTENT,
              MANIFEST_SEQUENCE_NUMBER, MIN_SEQUENCE_NUMBER, ADDED_SNAPSHOT_ID,
              *(_req(*c) for c in _COUNTS), PARTITIONS, MANIFEST_KEY_METADATA]
    if format_version >= 3:
        fields.append(MANIFEST_FIRST_ROW_ID)
    return StructType(*fields)


@lru_cache(maxsize=256)
def data_file_read_type(partition_type: StructType) -> StructType:
    """A reader's ``data_file``: every v1-v3 field a reader uses, optional unless required in
    every version (spec: "Writer requirements", v2+ read behavior; v1-only fields ignored)."""
    v3 = data_file_type(partition_type, 3)
    return StructType(*(f if f.field_id in _ALWAYS_REQUIRED else _optional(f) for f in v3.fields))


_ALWAYS_REQUIRED = frozenset({0, 2, 100, 101, 102, 103, 104, 500, 501, 502, 503, 509})


@lru_cache(maxsize=256)
def manifest_entry_read_type(partition_type: StructType) -> StructType:
    """A reader's ``manifest_entry`` for v1-v3 manifests (see :func:`data_file_read_type`)."""
    data_file = _req(DATA_FILE_ID, "data_file", data_file_read_type(partition_type))
    return StructType(STATUS, SNAPSHOT_ID, SEQUENCE_NUMBER, FILE_SEQUENCE_NUMBER, data_file)


@lru_cache(maxsize=1)
def manifest_file_read_type() -> StructType:
    """A reader's ``manifest_file`` for v1-v3 manifest lists (fields added after v1 optional)."""
    return StructType(*(f if f.field_id in _ALWAYS_REQUIRED else _optional(f)
                        for f in manifest_file_type(3).fields))


# --------------------------------------------------------------------------- Avro schemas

def _is_name_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _is_name_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _sanitize_char(c: str) -> str:
    return "_" + c if c.isdigit() else "_x" + format(ord(c), "X")


def avro_field_name(name: str) -> str:
    """The Avro name of an Iceberg field: invalid characters replaced as the reference
    implementation does (a leading digit gets ``_``, others become ``_x<HEX>``)."""
    if not name:
        raise ValidationError("field names must not be empty", field="name", value=name)
    if _is_name_start(name[0]) and all(_is_name_char(c) for c in name[1:]):
        return name
    out = [name[0] if _is_name_start(name[0]) else _sanitize_char(name[0])]
    out.extend(c if _is_name_char(c) else _sanitize_char(c) for c in name[1:])
    return "".join(out)


def _option(schema: Any) -> Any:
    return schema if schema == "null" else ["null", schema]


class _AvroSchemaBuilder:
    """Builds Avro schema JSON for Iceberg types (spec: Appendix A), naming as Java does."""

    def __init__(self) -> None:
        self.defined: set[str] = set()

    def named(self, name: str, schema: dict[str, Any]) -> Any:
        """A named type: its definition the first time, a reference by name afterwards."""
        if name in self.defined:
            return name
        self.defined.add(name)
        return schema

    def struct(self, t: StructType, name: str) -> Any:
        if name in self.defined:
            return name
        self.defined.add(name)
        return {"type": "record", "name": name, "fields": [self.field(f) for f in t.fields]}

    def field(self, f: NestedField) -> dict[str, Any]:
        name = avro_field_name(f.name)
        schema = self.type(f.field_type, f.field_id)
        out: dict[str, Any] = {"name": name, "type": schema if f.required else _option(schema)}
        if f.doc is not None:
            out["doc"] = f.doc
        if not f.required:
            out["default"] = None
        if name != f.name:
            out["iceberg-field-name"] = f.name
        out["field-id"] = f.field_id
        return out

    def type(self, t: IcebergType, field_id: int) -> Any:
        if isinstance(t, StructType):
            return self.struct(t, f"r{field_id}")
        if isinstance(t, ListType):
            element = self.type(t.element_type, t.element_id)
            return {"type": "array",
                    "items": element if t.element_required else _option(element),
                    "element-id": t.element_id}
        if isinstance(t, MapType):
            key = self.type(t.key_type, t.key_id)
            value = self.type(t.value_type, t.value_id)
            value = value if t.value_required else _option(value)
            if isinstance(t.key_type, StringType):
                return {"type": "map", "values": value, "key-id": t.key_id,
                        "value-id": t.value_id}
            value_field: dict[str, Any] = {"name": "value", "type": value}
            if not t.value_required:
                value_field["default"] = None
            value_field["field-id"] = t.value_id
            record = self.named(f"k{t.key_id}_v{t.value_id}", {
                "type": "record", "name": f"k{t.key_id}_v{t.value_id}",
                "fields": [{"name": "key", "type": key, "field-id": t.key_id}, value_field]})
            return {"type": "array", "items": record, "logicalType": "map"}
        return self.primitive(t, field_id)

    def primitive(self, t: IcebergType, field_id: int) -> Any:
        simple = _AVRO_PRIMITIVES.get(type(t))
        if simple is not None:
            return dict(simple) if isinstance(simple, dict) else simple
        if isinstance(t, UUIDType):
            return self.named("uuid_fixed", {"type": "fixed", "name": "uuid_fixed", "size": 16,
                                             "logicalType": "uuid"})
        if isinstance(t, FixedType):
            name = f"fixed_{t.length}"
            return self.named(name, {"type": "fixed", "name": name, "size": t.length})
        if isinstance(t, DecimalType):
            name = f"decimal_{t.precision}_{t.scale}"
            return self.named(name, {"type": "fixed", "name": name,
                                     "size": decimal_required_bytes(t.precision),
                                     "logicalType": "decimal", "precision": t.precision,
                                     "scale": t.scale})
        if isinstance(t, VariantType):
            return self.named(f"r{field_id}", {
                "type": "record", "name": f"r{field_id}", "logicalType": "variant",
                "fields": [{"name": "metadata", "type": "bytes"},
                           {"name": "value", "type": "bytes"}]})
        raise ValidationError("type has no Avro representation", field="type", value=str(t))


_AVRO_PRIMITIVES: dict[type, Any] = {
    UnknownType: "null",
    BooleanType: "boolean",
    IntegerType: "int",
    LongType: "long",
    FloatType: "float",
    DoubleType: "double",
    StringType: "string",
    BinaryType: "bytes",
    GeometryType: "bytes",
    GeographyType: "bytes",
    DateType: {"type": "int", "logicalType": "date"},
    TimeType: {"type": "long", "logicalType": "time-micros"},
    TimestampType: {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False},
    TimestamptzType: {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
    TimestampNanoType: {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": False},
    TimestamptzNanoType: {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": True},
}


def avro_schema(struct_type: StructType, record_name: str) -> dict[str, Any]:
    """The Avro schema (JSON object) of ``struct_type`` with Iceberg's field-id properties.

    Spec: Appendix A. Optional fields are ``["null", T]`` unions defaulting to null; lists carry
    ``element-id``; string-keyed maps are Avro maps with ``key-id``/``value-id``; other maps are
    arrays of ``k<key id>_v<value id>`` records with ``logicalType: "map"``; nested records are
    named ``r<field id>`` and repeated named types are referenced by name, as Java writes them.
    """
    builder = _AvroSchemaBuilder()
    schema = builder.struct(struct_type, record_name)
    assert isinstance(schema, dict)
    return schema


# --------------------------------------------------------------------------- Avro values

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_DATE = date(1970, 1, 1)


def _micros(delta: timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _value_from_avro(t: IcebergType, v: Any) -> Any:
    """An Avro-decoded partition value (raw, or as fastavro's logical types) in the Python
    representation of ``icenb.spec.types``."""
    if v is None:
        return None
    if isinstance(t, DateType) and isinstance(v, date) and not isinstance(v, datetime):
        return (v - _EPOCH_DATE).days
    if isinstance(t, TimeType) and isinstance(v, time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, datetime):
        aware = v if v.tzinfo is not None else v.replace(tzinfo=timezone.utc)
        micros = _micros(aware - _EPOCH)
        return micros * 1000 if isinstance(t, (TimestampNanoType, TimestamptzNanoType)) else micros
    if isinstance(t, UUIDType):
        if isinstance(v, uuid.UUID):
            return v
        if isinstance(v, (bytes, bytearray)):
            return uuid.UUID(bytes=bytes(v))
        return uuid.UUID(str(v))
    if isinstance(t, DecimalType) and not isinstance(v, Decimal):
        return values.from_bytes(t, v)
    if isinstance(v, bytearray):
        return bytes(v)
    return v


def _value_to_avro(t: IcebergType, v: Any) -> Any:
    """A partition value as fastavro writes it: raw ints for dates and times, 16 bytes for
    uuids, ``Decimal`` for decimals."""
    if v is None:
        return None
    if isinstance(t, UUIDType):
        return v.bytes if isinstance(v, uuid.UUID) else bytes(v)
    return v


def _map_from_avro(raw: Any) -> dict[int, Any] | None:
    """A metrics map from Avro (an array of key/value records or of Arrow's (key, value)
    pairs, or already a mapping)."""
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        return {int(k): _plain(v) for k, v in raw.items()}
    if raw and type(raw[0]) is tuple:  # Arrow's pairs: int keys, bytes or number values
        return {int(k): v if type(v) is not bytearray and type(v) is not memoryview
                else bytes(v) for k, v in raw}
    return {int(item["key"]): _plain(item["value"]) for item in raw}


def _plain(v: Any) -> Any:
    return bytes(v) if isinstance(v, (bytearray, memoryview)) else v


def _map_to_avro(m: Mapping[int, Any] | None) -> list[dict[str, Any]] | None:
    return None if m is None else [{"key": k, "value": v} for k, v in m.items()]


def _partition_from_avro(partition_type: StructType, raw: Any) -> tuple[Any, ...]:
    fields = partition_type.fields
    if raw is None:
        return (None,) * len(fields)
    if isinstance(raw, Mapping):
        return tuple(_value_from_avro(f.field_type, raw.get(avro_field_name(f.name),
                                                            raw.get(f.name)))
                     for f in fields)
    items = list(raw)
    if len(items) != len(fields):
        raise InvalidMetadata(f"partition has {len(items)} values for {len(fields)} fields",
                              field="data_file.partition", value=raw)
    return tuple(_value_from_avro(f.field_type, v) for f, v in zip(fields, items, strict=True))


def _partition_to_avro(partition_type: StructType, partition: Sequence[Any]) -> dict[str, Any]:
    fields = partition_type.fields
    if len(partition) != len(fields):
        raise ValidationError(f"partition has {len(partition)} values for {len(fields)} fields",
                              field="partition", value=tuple(partition))
    return {avro_field_name(f.name): _value_to_avro(f.field_type, v)
            for f, v in zip(fields, partition, strict=True)}


def _opt_list(raw: Any) -> tuple[int, ...] | None:
    return None if raw is None else tuple(int(x) for x in raw)


# --------------------------------------------------------------------------- objects

@safe_repr
@dataclass(frozen=True, kw_only=True)
class DataFile:
    """A content file (data, position deletes, equality deletes or a deletion vector).

    Spec: Manifests (``data_file``). ``partition`` holds the partition tuple in partition-field
    order, values in the representation of ``icenb.spec.types``; metrics maps are by column id.
    ``spec_id`` is the partition spec of the manifest that tracks the file;
    ``data_sequence_number`` the entry's (inherited) data sequence number, set by scan planning
    (the reference implementation's ``ContentFile.dataSequenceNumber()``; None when unknown).
    """

    content: FileContent = FileContent.DATA
    file_path: str
    file_format: FileFormat
    partition: tuple[Any, ...] = ()
    record_count: int
    file_size_in_bytes: int
    column_sizes: dict[int, int] | None = None
    value_counts: dict[int, int] | None = None
    null_value_counts: dict[int, int] | None = None
    nan_value_counts: dict[int, int] | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    spec_id: int = 0
    data_sequence_number: int | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "content", FileContent(self.content))
        except ValueError:
            raise ValidationError("content must be 0 (data), 1 (position deletes) or 2 "
                                  "(equality deletes)", field="content",
                                  value=self.content) from None
        object.__setattr__(self, "file_format", FileFormat.parse(self.file_format))
        object.__setattr__(self, "partition", tuple(self.partition))
        for name in ("split_offsets", "equality_ids"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, tuple):
                object.__setattr__(self, name, tuple(v))

    @property
    def kind(self) -> ContentKind:
        """The file's :class:`ContentKind`: a position delete file in Puffin format is a
        deletion vector (spec: "Deletion Vectors", ``content_offset`` locates its blob)."""
        if self.content == FileContent.DATA:
            return ContentKind.DATA
        if self.content == FileContent.EQUALITY_DELETES:
            return ContentKind.EQUALITY_DELETES
        if self.file_format == FileFormat.PUFFIN:
            return ContentKind.DELETION_VECTOR
        return ContentKind.POSITION_DELETES

    @property
    def is_deletion_vector(self) -> bool:
        """``kind is ContentKind.DELETION_VECTOR``."""
        return self.kind is ContentKind.DELETION_VECTOR

    @property
    def referenced_file(self) -> str | None:
        """The one data file a position delete file or DV applies to: ``referenced_data_file``,
        else the value of equal lower and upper bounds of its ``file_path`` column (spec:
        "Position Delete Files"; Java's ``ContentFileUtil.referencedDataFile``); None when it
        may apply to several files, and for other kinds."""
        if self.content != FileContent.POSITION_DELETES:
            return None
        if self.referenced_data_file is not None:
            return self.referenced_data_file
        low = (self.lower_bounds or {}).get(DELETE_FILE_PATH.field_id)
        if low is None or low != (self.upper_bounds or {}).get(DELETE_FILE_PATH.field_id):
            return None
        try:
            return bytes(low).decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def is_file_scoped(self) -> bool:
        """Whether a position delete file or DV applies to one data file only (a DV always;
        Java's ``ContentFileUtil.isFileScoped``)."""
        return self.is_deletion_vector or self.referenced_file is not None

    @classmethod
    def from_avro_record(
        cls, record: Mapping[str, Any], partition_type: StructType, *, spec_id: int = 0,
        data_sequence_number: int | None = None,
    ) -> DataFile:
        """Read a decoded ``data_file`` record (Avro field names) of any format version.

        Appendix E: a missing ``content`` (v1) is data. Maps may be Avro's key/value arrays or
        mappings; partition values may be raw or fastavro's logical types.
        ``data_sequence_number`` is the entry's (inherited) one, which the record lacks.
        """
        try:
            return cls(
                content=record.get("content") or FileContent.DATA,
                file_path=record["file_path"],
                file_format=FileFormat.parse(record["file_format"],
                                             field="data_file.file_format"),
                partition=_partition_from_avro(partition_type, record.get("partition")),
                record_count=record["record_count"],
                file_size_in_bytes=record["file_size_in_bytes"],
                column_sizes=_map_from_avro(record.get("column_sizes")),
                value_counts=_map_from_avro(record.get("value_counts")),
                null_value_counts=_map_from_avro(record.get("null_value_counts")),
                nan_value_counts=_map_from_avro(record.get("nan_value_counts")),
                lower_bounds=_map_from_avro(record.get("lower_bounds")),
                upper_bounds=_map_from_avro(record.get("upper_bounds")),
                key_metadata=_plain(record.get("key_metadata")),
                split_offsets=_opt_list(record.get("split_offsets")),
                equality_ids=_opt_list(record.get("equality_ids")),
                sort_order_id=record.get("sort_order_id"),
                first_row_id=record.get("first_row_id"),
                referenced_data_file=record.get("referenced_data_file"),
                content_offset=record.get("content_offset"),
                content_size_in_bytes=record.get("content_size_in_bytes"),
                spec_id=spec_id,
                data_sequence_number=data_sequence_number,
            )
        except KeyError as e:
            raise InvalidMetadata("missing required field",
                                  field=f"data_file.{e.args[0]}") from None

    def to_avro_record(self, partition_type: StructType, format_version: int) -> dict[str, Any]:
        """The ``data_file`` record a writer of ``format_version`` writes (Java's field set).

        Appendix E: v1 files must be data files and carry ``block_size_in_bytes``.
        """
        _check_version(format_version)
        rec: dict[str, Any] = {}
        if format_version == 1:
            if self.content != FileContent.DATA:
                raise ValidationError("v1 manifests hold data files only", field="content",
                                      value=self.content)
        else:
            rec["content"] = int(self.content)
        rec["file_path"] = self.file_path
        rec["file_format"] = self.file_format.name
        rec["partition"] = _partition_to_avro(partition_type, self.partition)
        rec["record_count"] = self.record_count
        rec["file_size_in_bytes"] = self.file_size_in_bytes
        if format_version == 1:
            rec["block_size_in_bytes"] = BLOCK_SIZE_DEFAULT
        rec["column_sizes"] = _map_to_avro(self.column_sizes)
        rec["value_counts"] = _map_to_avro(self.value_counts)
        rec["null_value_counts"] = _map_to_avro(self.null_value_counts)
        rec["nan_value_counts"] = _map_to_avro(self.nan_value_counts)
        rec["lower_bounds"] = _map_to_avro(self.lower_bounds)
        rec["upper_bounds"] = _map_to_avro(self.upper_bounds)
        rec["key_metadata"] = self.key_metadata
        rec["split_offsets"] = None if self.split_offsets is None else list(self.split_offsets)
        if format_version >= 2:
            rec["equality_ids"] = None if self.equality_ids is None else list(self.equality_ids)
        rec["sort_order_id"] = self.sort_order_id
        if format_version >= 3:
            rec["first_row_id"] = self.first_row_id
        if format_version >= 2:
            rec["referenced_data_file"] = self.referenced_data_file
        if format_version >= 3:
            rec["content_offset"] = self.content_offset
            rec["content_size_in_bytes"] = self.content_size_in_bytes
        return rec


@safe_repr
@dataclass(frozen=True)
class ManifestEntry:
    """One manifest entry: status, tracking ids and the file (spec: Manifest Entry Fields)."""

    status: EntryStatus
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    data_file: DataFile

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "status", EntryStatus(self.status))
        except ValueError:
            raise ValidationError("status must be 0 (existing), 1 (added) or 2 (deleted)",
                                  field="status", value=self.status) from None

    @property
    def is_live(self) -> bool:
        """ADDED or EXISTING: the file is part of the snapshot (spec: Scan Planning)."""
        return self.status != EntryStatus.DELETED

    @classmethod
    def from_avro_record(
        cls, record: Mapping[str, Any], partition_type: StructType, *, spec_id: int = 0
    ) -> ManifestEntry:
        """Read a decoded ``manifest_entry`` record; inherited fields stay null (see
        :func:`inherit_entries`)."""
        if "status" not in record or "data_file" not in record:
            missing = "status" if "status" not in record else "data_file"
            raise InvalidMetadata("missing required field", field=f"manifest_entry.{missing}")
        return cls(
            status=record["status"],
            snapshot_id=record.get("snapshot_id"),
            sequence_number=record.get("sequence_number"),
            file_sequence_number=record.get("file_sequence_number"),
            data_file=DataFile.from_avro_record(record["data_file"], partition_type,
                                                spec_id=spec_id),
        )

    def to_avro_record(self, partition_type: StructType, format_version: int) -> dict[str, Any]:
        """The ``manifest_entry`` record of ``format_version``.

        Spec: Manifest Entry Fields: EXISTING and DELETED entries of v2+ must carry both
        sequence numbers.
        """
        _check_version(format_version)
        rec: dict[str, Any] = {"status": int(self.status), "snapshot_id": self.snapshot_id}
        if format_version >= 2:
            if self.status != EntryStatus.ADDED:
                for name in ("sequence_number", "file_sequence_number"):
                    if getattr(self, name) is None:
                        raise ValidationError(
                            f"{self.status.name} entries must carry an explicit {name}",
                            field=name, value=None)
            rec["sequence_number"] = self.sequence_number
            rec["file_sequence_number"] = self.file_sequence_number
        rec["data_file"] = self.data_file.to_avro_record(partition_type, format_version)
        return rec


@safe_repr
@dataclass(frozen=True)
class FieldSummary:
    """One partition field's summary as stored in a manifest list (bounds as bytes).

    Spec: Manifest Lists, ``field_summary``. :meth:`ManifestFile.partition_summaries` decodes
    the bounds into :class:`icenb.spec.manifest_evaluator.PartitionFieldSummary`.
    """

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None

    def to_avro_record(self) -> dict[str, Any]:
        return {"contains_null": self.contains_null, "contains_nan": self.contains_nan,
                "lower_bound": self.lower_bound, "upper_bound": self.upper_bound}


@safe_repr
@dataclass(frozen=True, kw_only=True)
class ManifestFile:
    """A manifest list entry (spec: Manifest Lists, ``manifest_file``).

    Appendix E read defaults apply to v1 lists: ``content`` 0 and sequence numbers 0; v1 counts
    may be None ("assumed to be non-zero").
    """

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: ManifestContent = ManifestContent.DATA
    sequence_number: int = 0
    min_sequence_number: int = 0
    added_snapshot_id: int
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: tuple[FieldSummary, ...] | None = None
    key_metadata: bytes | None = None
    first_row_id: int | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "content", ManifestContent(self.content))
        except ValueError:
            raise ValidationError("content must be 0 (data) or 1 (deletes)", field="content",
                                  value=self.content) from None
        parts: Any = self.partitions  # any iterable is accepted; stored as a tuple
        if parts is not None and not isinstance(parts, tuple):
            object.__setattr__(self, "partitions", tuple(parts))

    def has_added_files(self) -> bool:
        """Whether the manifest may have ADDED entries (null counts: assume yes)."""
        return self.added_files_count is None or self.added_files_count > 0

    def has_existing_files(self) -> bool:
        return self.existing_files_count is None or self.existing_files_count > 0

    def has_deleted_files(self) -> bool:
        return self.deleted_files_count is None or self.deleted_files_count > 0

    def partition_summaries(self, partition_type: StructType) -> list[PartitionFieldSummary] | None:
        """The partition summaries with bounds decoded for ``partition_type`` (unknown: None)."""
        if self.partitions is None:
            return None
        return decode_field_summaries(partition_type, [s.to_avro_record() for s in self.partitions])

    @classmethod
    def from_avro_record(cls, record: Mapping[str, Any], *, file: str | None = None
                         ) -> ManifestFile:
        """Read a decoded ``manifest_file`` record of any version, with Appendix E defaults."""
        def get(name: str, default: Any = None) -> Any:
            v = record.get(name)
            return default if v is None else v

        try:
            parts = record.get("partitions")
            return cls(
                manifest_path=record["manifest_path"],
                manifest_length=record["manifest_length"],
                partition_spec_id=record["partition_spec_id"],
                content=get("content", ManifestContent.DATA),
                sequence_number=get("sequence_number", 0),
                min_sequence_number=get("min_sequence_number", 0),
                added_snapshot_id=record["added_snapshot_id"],
                added_files_count=record.get("added_files_count"),
                existing_files_count=record.get("existing_files_count"),
                deleted_files_count=record.get("deleted_files_count"),
                added_rows_count=record.get("added_rows_count"),
                existing_rows_count=record.get("existing_rows_count"),
                deleted_rows_count=record.get("deleted_rows_count"),
                partitions=None if parts is None else tuple(
                    FieldSummary(bool(p["contains_null"]), p.get("contains_nan"),
                                 _plain(p.get("lower_bound")), _plain(p.get("upper_bound")))
                    for p in parts),
                key_metadata=_plain(record.get("key_metadata")),
                first_row_id=record.get("first_row_id"),
            )
        except KeyError as e:
            raise InvalidMetadata("missing required field", file=file,
                                  field=f"manifest_file.{e.args[0]}") from None
        except IcebergError as e:
            raise e.with_file(file) if file is not None else e from None

    def to_avro_record(self, format_version: int) -> dict[str, Any]:
        """The ``manifest_file`` record of a manifest list of ``format_version``.

        Appendix E: v1 lists hold data manifests only and omit sequence numbers; v2+ require
        the six counts; v3 delete manifests have no ``first_row_id`` (First Row ID Assignment).
        """
        _check_version(format_version)
        rec: dict[str, Any] = {
            "manifest_path": self.manifest_path,
            "manifest_length": self.manifest_length,
            "partition_spec_id": self.partition_spec_id,
        }
        if format_version == 1:
            if self.content != ManifestContent.DATA:
                raise ValidationError("v1 manifest lists hold data manifests only",
                                      field="content", value=self.content)
        else:
            rec["content"] = int(self.content)
            rec["sequence_number"] = self.sequence_number
            rec["min_sequence_number"] = self.min_sequence_number
            for _, name, _, _ in _COUNTS:
                if getattr(self, name) is None:
                    raise ValidationError(f"{name} is required in v{format_version} manifest "
                                          "lists", field=name, value=None)
        rec["added_snapshot_id"] = self.added_snapshot_id
        for _, name, _, _ in _COUNTS:
            rec[name] = getattr(self, name)
        rec["partitions"] = None if self.partitions is None else [
            p.to_avro_record() for p in self.partitions]
        rec["key_metadata"] = self.key_metadata
        if format_version >= 3:
            if self.content == ManifestContent.DELETES and self.first_row_id is not None:
                raise ValidationError("delete manifests have no first_row_id",
                                      field="first_row_id", value=self.first_row_id)
            rec["first_row_id"] = self.first_row_id
        return rec


def manifest_files_from_arrow(manifests: pa.Table, *, file: str | None = None
                              ) -> list[ManifestFile]:
    """The manifest list entries of a decoded manifest list (few rows: Python objects)."""
    return [ManifestFile.from_avro_record(r, file=file) for r in manifests.to_pylist()]


# --------------------------------------------------------------------------- inheritance

def _inherits_sequence_number(manifest: ManifestFile, status: int, format_version: int) -> bool:
    # v1 manifests: all default to 0. Else ADDED entries inherit; a manifest with sequence
    # number 0 (from a v1 manifest list) gives 0 to every entry, as the reference does.
    return format_version == 1 or manifest.sequence_number == 0 or status == EntryStatus.ADDED


def inherit_entries(
    entries: Iterable[ManifestEntry], manifest: ManifestFile, format_version: int, *,
    strict: bool = False,
) -> list[ManifestEntry]:
    """The entries of one manifest with inherited values filled in (per-entry version of
    :func:`apply_inheritance`, same rules)."""
    _check_version(format_version)
    v1_seq = 0 if format_version == 1 else manifest.sequence_number
    next_row_id = manifest.first_row_id
    out: list[ManifestEntry] = []
    for e in entries:
        seq, file_seq = e.sequence_number, e.file_sequence_number
        if _inherits_sequence_number(manifest, e.status, format_version):
            seq = v1_seq if seq is None else seq
            file_seq = v1_seq if file_seq is None else file_seq
        elif strict and (seq is None or file_seq is None):
            raise _missing_sequence_number(manifest, e.status)
        f = e.data_file
        if (next_row_id is not None and f.content == FileContent.DATA
                and f.first_row_id is None):
            f = replace(f, first_row_id=next_row_id)
            next_row_id += f.record_count
        out.append(ManifestEntry(
            e.status, manifest.added_snapshot_id if e.snapshot_id is None else e.snapshot_id,
            seq, file_seq, f))
    return out


def _missing_sequence_number(manifest: ManifestFile, status: Any) -> InvalidMetadata:
    return InvalidMetadata(
        f"{EntryStatus(status).name} entry has no sequence number (only ADDED entries inherit "
        "it)", file=manifest.manifest_path, field="sequence_number")


def _column(table: pa.Table, name: str) -> pa.Array | None:
    if name not in table.column_names:
        return None
    col = table.column(name)
    if isinstance(col, pa.ChunkedArray):  # one chunk (a decoded manifest): no copy
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def _fill(arr: pa.Array | None, n: int, value: int | None, mask: pa.Array | None,
          t: pa.DataType) -> pa.Array:
    """``arr`` (None: all null) cast to ``t``, its nulls replaced by ``value`` where ``mask``."""
    arr = pa.nulls(n, t) if arr is None else arr.cast(t)
    if value is None:
        return arr
    scalar = pa.scalar(value, t)
    if mask is None:
        return pc.fill_null(arr, scalar)
    return pc.if_else(pc.and_(pc.is_null(arr), mask), scalar, arr)


def apply_inheritance(
    entries: pa.Table, manifest: ManifestFile, format_version: int, *, strict: bool = False
) -> pa.Table:
    """A decoded manifest's entries with every inherited and defaulted value filled in.

    ``entries`` has the Avro field names (``status``, ``snapshot_id``, ``sequence_number``,
    ``file_sequence_number``, ``data_file``); ``format_version`` is the manifest's own version.
    Rules, vectorized:

    * null ``snapshot_id`` -> the manifest's ``added_snapshot_id`` (Manifest Entry Fields);
    * null ``sequence_number`` / ``file_sequence_number`` -> the manifest's sequence number,
      for ADDED entries only (Sequence Number Inheritance); v1 manifests (no such columns) and
      manifests whose list entry has sequence number 0 give 0 to every entry (Appendix E; as
      the reference implementation). EXISTING/DELETED entries without them stay null, or
      raise ``InvalidMetadata`` when ``strict``;
    * ``data_file.content`` missing or null -> 0 (Appendix E);
    * when the manifest has a ``first_row_id``: a data file (content 0) of any status with a
      null ``first_row_id`` gets the manifest's ``first_row_id`` plus the ``record_count`` sum
      of the preceding such files (First Row ID Inheritance). Delete files keep null.

    The result has those columns (and ``data_file.first_row_id``) even when the file lacked them.
    """
    _check_version(format_version)
    n = entries.num_rows
    status = _column(entries, "status")
    data_file = _column(entries, "data_file")
    if status is None or data_file is None:
        raise InvalidMetadata("decoded manifest entries need status and data_file columns",
                              file=manifest.manifest_path,
                              field="status" if status is None else "data_file")
    status = status.cast(pa.int32())
    snapshot_id = _fill(_column(entries, "snapshot_id"), n, manifest.added_snapshot_id, None,
                        pa.int64())

    inherit_all = format_version == 1 or manifest.sequence_number == 0
    seq_value = 0 if format_version == 1 else manifest.sequence_number
    seq_mask = None if inherit_all else pc.equal(status, pa.scalar(EntryStatus.ADDED, pa.int32()))
    seqs = [_fill(_column(entries, name), n, seq_value, seq_mask, pa.int64())
            for name in ("sequence_number", "file_sequence_number")]
    if strict and not inherit_all:
        for arr in seqs:
            if arr.null_count:
                bad = pc.filter(status, pc.is_null(arr))
                raise _missing_sequence_number(manifest, bad[0].as_py())

    data_file = _with_file_defaults(data_file, manifest)
    names = ["status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file"]
    columns: list[pa.Array] = [status, snapshot_id, seqs[0], seqs[1], data_file]
    for name in entries.column_names:
        if name not in names:
            names.append(name)
            columns.append(entries.column(name))
    return pa.Table.from_arrays(columns, names=names)


def _with_file_defaults(data_file: pa.Array, manifest: ManifestFile) -> pa.Array:
    """``data_file`` with ``content`` defaulted to 0 and ``first_row_id`` inherited."""
    if not pa.types.is_struct(data_file.type):
        raise InvalidMetadata("data_file must be a struct column", file=manifest.manifest_path,
                              field="data_file", value=str(data_file.type))
    struct_type = data_file.type
    names = [struct_type.field(i).name for i in range(struct_type.num_fields)]
    children = dict(zip(names, data_file.flatten(), strict=True))
    n = len(data_file)
    content = _fill(children.get("content"), n, int(FileContent.DATA), None, pa.int32())
    first_row_id = _fill(children.get("first_row_id"), n, None, None, pa.int64())
    if manifest.first_row_id is not None and n:
        record_count = children.get("record_count")
        if record_count is None:
            raise InvalidMetadata("data_file has no record_count", file=manifest.manifest_path,
                                  field="data_file.record_count")
        assign = pc.and_(pc.equal(content, pa.scalar(0, pa.int32())), pc.is_null(first_row_id))
        counts = pc.if_else(assign, record_count.cast(pa.int64()), pa.scalar(0, pa.int64()))
        before = pc.subtract(pc.cumulative_sum_checked(counts), counts)  # exclusive prefix sum
        assigned = pc.add_checked(before, pa.scalar(manifest.first_row_id, pa.int64()))
        first_row_id = pc.if_else(assign, assigned, first_row_id)
    children["content"] = content
    children["first_row_id"] = first_row_id
    out_names = names if "content" in names else ["content", *names]
    if "first_row_id" not in out_names:
        out_names.append("first_row_id")
    mask = data_file.is_null() if data_file.null_count else None
    # the fields as decoded for the children kept: ``flatten()`` drops the field-id metadata
    # of nested partition fields, and without it one partition field would split in two when
    # this manifest is concatenated with others (planning then pruned wrong files)
    known = {struct_type.field(i).name: struct_type.field(i) for i in range(struct_type.num_fields)}
    fields = [known[k].with_nullable(True) if k in known and k not in ("content", "first_row_id")
              else pa.field(k, children[k].type) for k in out_names]
    return pa.StructArray.from_arrays([children[k] for k in out_names], fields=fields, mask=mask)


def apply_manifest_list_defaults(manifests: pa.Table) -> pa.Table:
    """A decoded manifest list with Appendix E read defaults: ``content``,
    ``sequence_number`` and ``min_sequence_number`` 0 where missing (v1 lists), and a null
    ``first_row_id`` column where absent (v1/v2)."""
    n = manifests.num_rows
    out = manifests
    for name, t, default in (("content", pa.int32(), 0), ("sequence_number", pa.int64(), 0),
                             ("min_sequence_number", pa.int64(), 0),
                             ("first_row_id", pa.int64(), None)):
        arr = _fill(_column(manifests, name), n, default, None, t)
        if name in out.column_names:
            out = out.set_column(out.column_names.index(name), name, arr)
        else:
            out = out.append_column(name, arr)
    return out


# --------------------------------------------------------------------------- JSON (Appendix C)

_CONTENT_JSON = {FileContent.DATA: "DATA", FileContent.POSITION_DELETES: "POSITION_DELETES",
                 FileContent.EQUALITY_DELETES: "EQUALITY_DELETES"}
_CONTENT_FROM_JSON = {
    **{v: k for k, v in _CONTENT_JSON.items()},
    "data": FileContent.DATA, "position-deletes": FileContent.POSITION_DELETES,
    "equality-deletes": FileContent.EQUALITY_DELETES,
}
_COUNT_MAP = MapType(1, IntegerType(), 2, LongType(), True)
_BOUND_MAP = MapType(1, IntegerType(), 2, BinaryType(), True)
_METRIC_MAPS = (("column-sizes", "column_sizes", _COUNT_MAP),
                ("value-counts", "value_counts", _COUNT_MAP),
                ("null-value-counts", "null_value_counts", _COUNT_MAP),
                ("nan-value-counts", "nan_value_counts", _COUNT_MAP),
                ("lower-bounds", "lower_bounds", _BOUND_MAP),
                ("upper-bounds", "upper_bounds", _BOUND_MAP))


def content_file_to_json(f: DataFile, partition_type: StructType) -> dict[str, Any]:
    """A content file as JSON (spec: Appendix C, "Content File (Data and Delete)
    Serialization"); null partition values are left out of the ``partition`` object, and the
    v3 fields use the reference implementation's names."""
    partition = values.to_json(partition_type, dict(zip(
        (pf.field_id for pf in partition_type.fields), _partition_values(partition_type, f),
        strict=True)), field="partition")
    out: dict[str, Any] = {
        "spec-id": f.spec_id,
        "content": _CONTENT_JSON[f.content],
        "file-path": f.file_path,
        "file-format": f.file_format.name,
        "partition": {k: v for k, v in partition.items() if v is not None},
        "record-count": f.record_count,
        "file-size-in-bytes": f.file_size_in_bytes,
    }
    for key, attr, t in _METRIC_MAPS:
        m = getattr(f, attr)
        if m is not None:
            out[key] = values.to_json(t, m, field=key)
    if f.key_metadata is not None:
        out["key-metadata"] = f.key_metadata.hex()
    for key, v in (("split-offsets", f.split_offsets), ("equality-ids", f.equality_ids),
                   ("sort-order-id", f.sort_order_id), ("first-row-id", f.first_row_id),
                   ("referenced-data-file", f.referenced_data_file),
                   ("content-offset", f.content_offset),
                   ("content-size-in-bytes", f.content_size_in_bytes)):
        if v is not None:
            out[key] = list(v) if isinstance(v, tuple) else v
    return out


def _partition_values(partition_type: StructType, f: DataFile) -> tuple[Any, ...]:
    if len(f.partition) != len(partition_type.fields):
        raise ValidationError(
            f"partition has {len(f.partition)} values for {len(partition_type.fields)} fields",
            field="partition", value=f.partition)
    return f.partition


def content_file_from_json(
    obj: Any, partition_types: StructType | Mapping[int, StructType], *,
    where: str = "content-file",
) -> DataFile:
    """Read a content file's JSON (Appendix C). ``partition_types``: the partition type, or
    the types by spec id. Also accepts the reference implementation's variants: lower-case
    content/format names and a ``partition`` array."""
    obj = as_object(obj, where, "a content file")
    spec_id = req_int(obj, "spec-id", where)
    if isinstance(partition_types, StructType):
        partition_type = partition_types
    else:
        found = partition_types.get(spec_id)
        if found is None:
            raise InvalidMetadata("unknown partition spec id", field=field_path(where, "spec-id"),
                                  value=spec_id)
        partition_type = found
    content_text = req_str(obj, "content", where)
    if content_text not in _CONTENT_FROM_JSON:
        raise InvalidMetadata("unknown content", field=field_path(where, "content"),
                              value=content_text)
    partition = _partition_from_json(partition_type, obj.get("partition"),
                                     field_path(where, "partition"))
    maps: dict[str, Any] = {}
    try:
        for key, attr, t in _METRIC_MAPS:
            raw = obj.get(key)
            maps[attr] = None if raw is None else values.from_json(t, raw,
                                                                   field=field_path(where, key))
        key_metadata = opt_str(obj, "key-metadata", where)
        return DataFile(
            content=_CONTENT_FROM_JSON[content_text],
            file_path=req_str(obj, "file-path", where),
            file_format=FileFormat.parse(require(obj, "file-format", where),
                                         field=field_path(where, "file-format")),
            partition=partition,
            record_count=req_long(obj, "record-count", where),
            file_size_in_bytes=req_long(obj, "file-size-in-bytes", where),
            key_metadata=None if key_metadata is None else values.from_json(
                BinaryType(), key_metadata, field=field_path(where, "key-metadata")),
            split_offsets=_json_ints(obj, "split-offsets", where, 64),
            equality_ids=_json_ints(obj, "equality-ids", where, 32),
            sort_order_id=opt_int(obj, "sort-order-id", where),
            first_row_id=opt_long(obj, "first-row-id", where),
            referenced_data_file=opt_str(obj, "referenced-data-file", where),
            content_offset=opt_long(obj, "content-offset", where),
            content_size_in_bytes=opt_long(obj, "content-size-in-bytes", where),
            spec_id=spec_id,
            **maps,
        )
    except InvalidMetadata:
        raise
    except ValidationError as e:
        raise InvalidMetadata(e.message, field=e.field or where,
                              **({"value": e.value} if e.has_value else {})) from None


def _json_ints(obj: Mapping[str, Any], key: str, where: str, bits: int) -> tuple[int, ...] | None:
    if obj.get(key) is None:
        return None
    t = LongType() if bits == 64 else IntegerType()
    items = json_list(obj, key, where)
    return tuple(values.from_json(t, x, field=f"{field_path(where, key)}[{i}]")
                 for i, x in enumerate(items))


def _partition_from_json(partition_type: StructType, raw: Any, where: str) -> tuple[Any, ...]:
    fields = partition_type.fields
    if raw is None:
        return (None,) * len(fields)
    if isinstance(raw, list):
        if len(raw) != len(fields):
            raise InvalidMetadata(f"partition has {len(raw)} values for {len(fields)} fields",
                                  field=where, value=raw)
        return tuple(values.from_json(f.field_type, v, field=f"{where}[{i}]")
                     for i, (f, v) in enumerate(zip(fields, raw, strict=True)))
    if not isinstance(raw, Mapping):
        raise InvalidMetadata("partition must be a JSON object or array", field=where, value=raw)
    known = {str(f.field_id) for f in fields}
    extra = sorted(set(raw) - known)
    if extra:
        raise InvalidMetadata("partition has values for unknown field ids", field=where,
                              value=extra)
    return tuple(values.from_json(f.field_type, raw.get(str(f.field_id)),
                                  field=field_path(where, str(f.field_id))) for f in fields)


@safe_repr
@dataclass(frozen=True)
class FileScanTask:
    """A data file with the delete files to apply and the residual filter (spec: Appendix C,
    "File Scan Task Serialization"). ``residual_filter`` is an unbound
    :class:`~icenb.spec.expressions.Expression`, or ``True``/``False`` when the partition
    decides the filter. ``start``/``length`` give the byte range of the file to read (the
    reference implementation writes them; ``length`` None means to the end of the file)."""

    schema: Schema
    spec: PartitionSpec
    data_file: DataFile
    delete_files: tuple[DataFile, ...] = ()
    residual_filter: Any = True
    start: int = 0
    length: int | None = None

    @property
    def is_whole_file(self) -> bool:
        """Whether the task covers the whole data file (not a split of it)."""
        return self.start == 0 and (self.length is None
                                    or self.length >= self.data_file.file_size_in_bytes)


def file_scan_task_to_json(task: FileScanTask, format_version: int = 2) -> dict[str, Any]:
    """A file scan task as JSON (Appendix C); the spec is written for ``format_version``."""
    partition_type = task.spec.partition_type(task.schema)
    return {
        "schema": schema_to_json(task.schema),
        "spec": partition_spec_to_json(task.spec, format_version),
        "data-file": content_file_to_json(task.data_file, partition_type),
        "start": task.start,
        "length": task.data_file.file_size_in_bytes - task.start if task.length is None
        else task.length,
        "delete-files": [content_file_to_json(d, partition_type) for d in task.delete_files],
        "residual-filter": _residual_json(task.residual_filter, task.schema),
    }


def _residual_json(residual: Any, schema: Schema) -> Any:
    """The residual as JSON, literals typed by the task's schema (JSON input is checked)."""
    if isinstance(residual, Mapping):
        residual = expression_from_json(residual, schema)
    elif isinstance(residual, str):
        residual = parse(residual)
    return expression_to_json(residual, schema)


def file_scan_task_from_json(obj: Any, format_version: int = 2, *,
                             where: str = "file-scan-task") -> FileScanTask:
    """Read a file scan task's JSON (Appendix C); a missing residual filter means ``true``."""
    obj = as_object(obj, where, "a file scan task")
    schema = schema_from_json(require(obj, "schema", where), where=field_path(where, "schema"))
    spec = partition_spec_from_json(require(obj, "spec", where), format_version=format_version,
                                    where=field_path(where, "spec"))
    partition_type = spec.partition_type(schema)
    data_file = content_file_from_json(require(obj, "data-file", where), partition_type,
                                       where=field_path(where, "data-file"))
    deletes = tuple(
        content_file_from_json(d, partition_type, where=f"{field_path(where, 'delete-files')}[{i}]")
        for i, d in enumerate(json_list(obj, "delete-files", where)))
    raw = obj.get("residual-filter", True)
    residual: Any = expression_from_json(raw, schema, where=field_path(where, "residual-filter"))
    if isinstance(residual, AlwaysTrue | AlwaysFalse):
        residual = isinstance(residual, AlwaysTrue)
    start = obj.get("start", 0)
    length = obj.get("length")
    for key, v in (("start", start), ("length", length)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise InvalidMetadata("must be a non-negative integer", field=field_path(where, key),
                                  value=v)
    if length == data_file.file_size_in_bytes - start:
        length = None
    return FileScanTask(schema, spec, data_file, deletes, residual, start, length)

