"""Write manifests and manifest lists (Avro) as the reference implementation (Java 1.10) does.

Spec: "Manifests", "Manifest Entry Fields", "Sequence Number Inheritance", "First Row ID
Inheritance", "Manifest Lists", Appendix A (Avro), Appendix D (bounds), Appendix E.

* :func:`write_manifest` writes one manifest of entries (given as
  :class:`~icenb.spec.manifest.ManifestEntry`) and returns its manifest-list entry
  (:class:`~icenb.spec.manifest.ManifestFile`) with counts, partition summaries and length.
  Inheritable values are written per the spec: ADDED entries carry null sequence numbers (the
  commit's are inherited; an explicit data sequence number is kept), EXISTING and DELETED
  entries carry both explicitly; ADDED (and DELETED) entries carry this manifest's snapshot id,
  EXISTING ones their own; v3 ADDED data files have a null ``first_row_id`` (inherited).
  The returned manifest's ``sequence_number`` (and ``min_sequence_number`` when no live entry
  has an explicit one) is :data:`UNASSIGNED_SEQUENCE_NUMBER`, replaced by the commit's when the
  manifest list is written, so the file can be reused when a commit is retried.
* :func:`write_manifest_list` writes a snapshot's manifest list: it assigns this commit's
  sequence number to the manifests written for it and, in v3, first row ids to data manifests
  that lack one (advancing by their existing + added rows, as Java's ``ManifestListWriter``),
  and returns what the snapshot needs (:class:`ManifestListInfo`: ``next_row_id``,
  ``added_rows``).

Files match Java's byte for byte apart from the random sync marker: the same header keys in
the same order (``schema``, ``partition-spec``, ``iceberg.schema``, ...; JSON without ASCII
escapes), the same Avro schema, Java's 64,000-byte block size and its codecs (table property
``write.avro.compression-codec``: ``gzip`` = deflate level 9 by default, ``zstd`` level 1,
``snappy``, ``uncompressed``; level from ``write.avro.compression-level``).
"""

from __future__ import annotations

import io as _io
import json
import math
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa

from icenb.errors import IcebergError, ValidationError
from icenb.io.file_io import FileIO
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.manifest import (
    CONTENT_KEY,
    FORMAT_VERSION_KEY,
    MANIFEST_LIST_FIRST_ROW_ID_KEY,
    MANIFEST_LIST_PARENT_SNAPSHOT_ID_KEY,
    MANIFEST_LIST_SEQUENCE_NUMBER_KEY,
    MANIFEST_LIST_SNAPSHOT_ID_KEY,
    PARTITION_SPEC_ID_KEY,
    PARTITION_SPEC_KEY,
    SCHEMA_KEY,
    EntryStatus,
    FieldSummary,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    avro_schema,
    manifest_entry_type,
    manifest_file_type,
)
from icenb.spec.partition_spec import PartitionSpec, partition_fields_to_json
from icenb.spec.properties import AVRO_COMPRESSION, AVRO_COMPRESSION_LEVEL
from icenb.spec.schema import Schema, schema_to_json
from icenb.spec.types import DoubleType, FloatType, StructType, UUIDType

__all__ = [
    "AVRO_COMPRESSION",
    "AVRO_COMPRESSION_LEVEL",
    "SYNC_INTERVAL",
    "UNASSIGNED_SEQUENCE_NUMBER",
    "AvroCodec",
    "ManifestListInfo",
    "avro_codec",
    "encode_manifest",
    "encode_manifest_list",
    "manifest_header",
    "manifest_list_header",
    "partition_summaries",
    "write_manifest",
    "write_manifest_list",
]

#: Stand-in sequence number of a manifest written for a commit not yet made (Java's
#: ``ManifestWriter.UNASSIGNED_SEQ``); :func:`write_manifest_list` replaces it.
UNASSIGNED_SEQUENCE_NUMBER = -1
#: Uncompressed bytes after which a block is written (Avro's ``DEFAULT_SYNC_INTERVAL``, Java).
SYNC_INTERVAL = 64_000
#: Table properties choosing the Avro codec and its level (as in the reference implementation).
ICEBERG_SCHEMA_KEY = "iceberg.schema"

_MAGIC = b"Obj\x01"
_SUPPORTED_VERSIONS = (1, 2, 3)


# --------------------------------------------------------------------------- codecs


@safe_repr
@dataclass(frozen=True)
class AvroCodec:
    """An Avro block codec: its ``avro.codec`` name and compression level."""

    name: str  # "null", "deflate", "snappy", "zstandard"
    level: int | None = None

    def compress(self, data: bytes) -> bytes:
        """One block's payload, compressed as the Avro spec defines for this codec."""
        if self.name == "null":
            return data
        if self.name == "deflate":
            c = zlib.compressobj(9 if self.level is None else self.level, zlib.DEFLATED, -15)
            return c.compress(data) + c.flush()
        if self.name == "snappy":  # raw snappy, then the big-endian CRC32 of the input
            body: bytes = pa.Codec("snappy").compress(data, asbytes=True)
            return body + (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "big")
        out: bytes = pa.Codec("zstd", compression_level=self.level).compress(data, asbytes=True)
        return out


# Java's names (Avro.Codec) -> (Avro codec, default level).
_CODECS = {"uncompressed": ("null", None), "gzip": ("deflate", 9), "zstd": ("zstandard", 1),
           "snappy": ("snappy", None)}


def avro_codec(properties: Mapping[str, str] | None = None) -> AvroCodec:
    """The codec table ``properties`` ask for (``write.avro.compression-codec``, default gzip,
    i.e. deflate level 9, and ``write.avro.compression-level``), as the reference does."""
    props = properties or {}
    name = str(props.get(AVRO_COMPRESSION, "gzip")).lower()
    if name not in _CODECS:
        raise ValidationError(f"unsupported Avro codec (use one of {', '.join(_CODECS)})",
                              field=AVRO_COMPRESSION, value=props.get(AVRO_COMPRESSION))
    avro_name, level = _CODECS[name]
    raw_level = props.get(AVRO_COMPRESSION_LEVEL)
    if raw_level is not None and level is not None:
        try:
            level = int(raw_level)
        except (TypeError, ValueError):
            raise ValidationError("compression level must be an integer",
                                  field=AVRO_COMPRESSION_LEVEL, value=raw_level) from None
        low, high = (0, 9) if avro_name == "deflate" else (-131072, 22)
        if not low <= level <= high:
            raise ValidationError(f"compression level must be in [{low}, {high}]",
                                  field=AVRO_COMPRESSION_LEVEL, value=raw_level)
    return AvroCodec(avro_name, level)


# --------------------------------------------------------------------------- Avro container


def _long(n: int) -> bytes:
    """An Avro long: zig-zag then base-128 varint."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _bytes(b: bytes) -> bytes:
    return _long(len(b)) + b


@lru_cache(maxsize=256)
def _parsed(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json), named_schemas={})


def avro_container(header: Mapping[str, str], schema_json: str, records: Iterable[dict[str, Any]],
               codec: AvroCodec, sync: bytes, path: str) -> bytes:
    """An Avro object container file: header (metadata in the given order, one map block),
    then blocks of at least :data:`SYNC_INTERVAL` uncompressed bytes (the last may be less)."""
    out = bytearray(_MAGIC)
    out += _long(len(header))
    for key, value in header.items():
        out += _bytes(key.encode("utf-8")) + _bytes(value.encode("utf-8"))
    out += _long(0) + sync
    parsed = _parsed(schema_json)
    buf = _io.BytesIO()
    count = 0

    def flush() -> None:
        payload = codec.compress(buf.getvalue())
        out.extend(_long(count) + _long(len(payload)) + payload + sync)
        buf.seek(0)
        buf.truncate()

    for i, rec in enumerate(records):
        try:
            fastavro.schemaless_writer(buf, parsed, rec)
        except (TypeError, ValueError, OverflowError, KeyError, AttributeError) as e:
            raise ValidationError(f"record {i} does not match the Avro schema: {e}",
                                  file=path) from None
        count += 1
        if buf.tell() >= SYNC_INTERVAL:
            flush()
            count = 0
    if count:
        flush()
    return bytes(out)


def avro_sync_marker(sync_marker: bytes | None) -> bytes:
    if sync_marker is None:
        return os.urandom(16)
    if not isinstance(sync_marker, bytes) or len(sync_marker) != 16:
        raise ValidationError("an Avro sync marker has 16 bytes", field="sync_marker",
                              value=sync_marker)
    return sync_marker


def _check_version(format_version: int) -> None:
    if format_version not in _SUPPORTED_VERSIONS:
        raise ValidationError("manifests exist in format versions 1 to 3",
                              field="format_version", value=format_version)


def _dumps(obj: Any) -> str:
    """Compact JSON without ASCII escapes, as Java's Jackson writes header values."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _struct_schema_json(struct: StructType) -> str:
    """The ``iceberg.schema`` header: the Iceberg JSON of the file's record type."""
    return _dumps(schema_to_json(Schema(*struct.fields, schema_id=0)))


# --------------------------------------------------------------------------- headers


def manifest_header(schema: Schema, spec: PartitionSpec, format_version: int,
                    content: ManifestContent = ManifestContent.DATA,
                    codec: AvroCodec | None = None) -> dict[str, str]:
    """A manifest's key-value metadata, keys in the order Java's writer stores them.

    Spec: Manifests (``schema``, ``partition-spec``, ``partition-spec-id``, ``format-version``,
    v2+ ``content``); the Avro writer adds ``avro.schema``, ``avro.codec`` and
    ``iceberg.schema``. Partition fields are written as Java's ``toJsonFields`` (name,
    transform, source id(s), field id).
    """
    _check_version(format_version)
    content = ManifestContent(content)
    if format_version == 1 and content != ManifestContent.DATA:
        raise ValidationError("v1 manifests hold data files only", field="content",
                              value=content)
    entry_type = manifest_entry_type(spec.partition_type(schema), format_version)
    fields = []
    for f in partition_fields_to_json(spec, format_version):
        item = {"name": f["name"], "transform": f["transform"]}
        item.update((k, v) for k, v in f.items() if k not in ("name", "transform", "field-id"))
        item["field-id"] = f["field-id"]
        fields.append(item)
    header = {
        SCHEMA_KEY: _dumps(schema_to_json(schema)),
        "avro.schema": _dumps(avro_schema(entry_type, "manifest_entry")),
        "avro.codec": (codec or avro_codec()).name,
        FORMAT_VERSION_KEY: str(format_version),
        PARTITION_SPEC_ID_KEY: str(spec.spec_id),
        ICEBERG_SCHEMA_KEY: _struct_schema_json(entry_type),
        PARTITION_SPEC_KEY: _dumps(fields),
    }
    if format_version >= 2:
        header[CONTENT_KEY] = "deletes" if content == ManifestContent.DELETES else "data"
    return header


def manifest_list_header(snapshot_id: int, parent_snapshot_id: int | None,
                         sequence_number: int, format_version: int,
                         first_row_id: int | None = None,
                         codec: AvroCodec | None = None) -> dict[str, str]:
    """A manifest list's key-value metadata as Java writes it (a missing parent is the text
    ``null``; ``sequence-number`` from v2, ``first-row-id`` in v3)."""
    _check_version(format_version)
    file_type = manifest_file_type(format_version)
    header = {
        "avro.schema": _dumps(avro_schema(file_type, "manifest_file")),
        "avro.codec": (codec or avro_codec()).name,
        MANIFEST_LIST_SNAPSHOT_ID_KEY: str(snapshot_id),
    }
    if format_version >= 3:
        header[MANIFEST_LIST_FIRST_ROW_ID_KEY] = str(first_row_id)
    header[FORMAT_VERSION_KEY] = str(format_version)
    if format_version >= 2:
        header[MANIFEST_LIST_SEQUENCE_NUMBER_KEY] = str(sequence_number)
    header[ICEBERG_SCHEMA_KEY] = _struct_schema_json(file_type)
    header[MANIFEST_LIST_PARENT_SNAPSHOT_ID_KEY] = (
        "null" if parent_snapshot_id is None else str(parent_snapshot_id))
    return header


# --------------------------------------------------------------------------- summaries


def _uuid_key(v: Any) -> tuple[int, int]:
    """Java's ``UUID.compareTo`` order: the two 64-bit halves compared as signed longs."""
    n = v.int
    return _signed64(n >> 64), _signed64(n & 0xFFFF_FFFF_FFFF_FFFF)


def _signed64(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def partition_summaries(partition_type: StructType,
                        partitions: Iterable[Sequence[Any]]) -> tuple[FieldSummary, ...]:
    """Per partition field: whether a null or NaN occurs, and the lower/upper bound of the
    other values (Appendix D bytes), over every tuple given (spec: Manifest Lists,
    ``field_summary``), as Java's ``PartitionSummary``: -0.0 before 0.0, and UUIDs in Java's
    ``UUID.compareTo`` order (signed halves; the spec defines no UUID order), so that readers
    using the reference implementation's comparators never prune a matching manifest."""
    fields = partition_type.fields
    n = len(fields)
    has_null = [False] * n
    has_nan = [False] * n
    lows: list[Any] = [None] * n
    highs: list[Any] = [None] * n
    low_keys: list[Any] = [None] * n
    high_keys: list[Any] = [None] * n
    floats = [isinstance(f.field_type, (FloatType, DoubleType)) for f in fields]
    uuids = [isinstance(f.field_type, UUIDType) for f in fields]
    for tup in partitions:
        for i in range(n):
            v = tup[i]
            if v is None:
                has_null[i] = True
                continue
            if floats[i] and math.isnan(v):
                has_nan[i] = True
                continue
            key = _uuid_key(v) if uuids[i] else values.sort_key(fields[i].field_type, v)
            if lows[i] is None or key < low_keys[i]:
                lows[i], low_keys[i] = v, key
            if highs[i] is None or key > high_keys[i]:
                highs[i], high_keys[i] = v, key
    out = []
    for i, f in enumerate(fields):
        t = f.field_type
        out.append(FieldSummary(
            contains_null=has_null[i], contains_nan=has_nan[i],
            lower_bound=None if lows[i] is None else values.to_bytes(t, lows[i], field=f.name),
            upper_bound=None if highs[i] is None else values.to_bytes(t, highs[i], field=f.name),
        ))
    return tuple(out)


# --------------------------------------------------------------------------- manifests


def _check_file(e: ManifestEntry, i: int, spec: PartitionSpec, partition_type: StructType,
                format_version: int, content: ManifestContent) -> None:
    """What a writer must check of one entry's file (content, spec, partition values, DVs)."""
    f = e.data_file
    where = f"entries[{i}]"
    if content == ManifestContent.DATA and f.content != FileContent.DATA:
        raise ValidationError("data manifests hold data files only",
                              field=f"{where}.data_file.content", value=int(f.content))
    if content == ManifestContent.DELETES and f.content == FileContent.DATA:
        raise ValidationError("delete manifests hold delete files only",
                              field=f"{where}.data_file.content", value=int(f.content))
    if f.spec_id != spec.spec_id:
        raise ValidationError(f"the file was written for partition spec {f.spec_id}, the "
                              f"manifest is for spec {spec.spec_id}",
                              field=f"{where}.data_file.spec_id", value=f.spec_id)
    fields = partition_type.fields
    if len(f.partition) != len(fields):
        raise ValidationError(f"partition has {len(f.partition)} values for {len(fields)} "
                              "partition fields", field=f"{where}.data_file.partition",
                              value=f.partition)
    for pf, v in zip(fields, f.partition, strict=True):
        if v is not None:
            values.validate(pf.field_type, v, field=f"{where}.data_file.partition.{pf.name}")
    if f.content == FileContent.EQUALITY_DELETES and not f.equality_ids:
        raise ValidationError("equality delete files need equality_ids",
                              field=f"{where}.data_file.equality_ids", value=f.equality_ids)
    if f.is_deletion_vector:
        # Deletion vectors (spec: Deletion Vectors): v3 position deletes in a Puffin blob.
        if format_version < 3 or f.content != FileContent.POSITION_DELETES:
            raise ValidationError("Puffin delete files are v3 deletion vectors (position "
                                  "deletes)", field=f"{where}.data_file.file_format",
                                  value=f.file_format.name)
        for name in ("referenced_data_file", "content_offset", "content_size_in_bytes"):
            if getattr(f, name) is None:
                raise ValidationError(f"a deletion vector needs {name}",
                                      field=f"{where}.data_file.{name}", value=None)


def _entry_record(e: ManifestEntry, i: int, partition_type: StructType, format_version: int,
                  snapshot_id: int) -> tuple[dict[str, Any], int | None]:
    """The Avro record of one entry with inheritable values as the spec wants them written,
    and its explicit data sequence number (None when inherited)."""
    status = e.status
    where = f"entries[{i}]"
    if status == EntryStatus.EXISTING:
        if e.snapshot_id is None:
            raise ValidationError("EXISTING entries must carry the id of the snapshot that "
                                  "added the file", field=f"{where}.snapshot_id", value=None)
        entry_snapshot = e.snapshot_id
    else:  # the snapshot where the file was added, or deleted if status is 2
        entry_snapshot = snapshot_id
    rec: dict[str, Any] = {"status": int(status), "snapshot_id": entry_snapshot}
    data_seq: int | None = None
    if format_version >= 2:
        if status == EntryStatus.ADDED:
            # Sequence Number Inheritance: null, unless the data logically belongs to an
            # older sequence number; the file sequence number is always the commit's.
            if e.sequence_number is not None and e.sequence_number >= 0:
                data_seq = e.sequence_number
            rec["sequence_number"] = data_seq
            rec["file_sequence_number"] = None
        else:
            for name in ("sequence_number", "file_sequence_number"):
                if getattr(e, name) is None:
                    raise ValidationError(f"{status.name} entries must carry an explicit "
                                          f"{name}", field=f"{where}.{name}", value=None)
            data_seq = e.sequence_number
            rec["sequence_number"] = e.sequence_number
            rec["file_sequence_number"] = e.file_sequence_number
    elif e.sequence_number is not None and e.sequence_number >= 0:
        data_seq = e.sequence_number
    f = e.data_file
    data_file = f.to_avro_record(partition_type, format_version)
    if format_version >= 3 and f.first_row_id is not None and (
            status == EntryStatus.ADDED or f.content != FileContent.DATA):
        data_file["first_row_id"] = None  # First Row ID Inheritance: assigned on read
    rec["data_file"] = data_file
    return rec, data_seq


def encode_manifest(
    path: str,
    spec: PartitionSpec,
    schema: Schema,
    format_version: int,
    content: ManifestContent,
    entries: Sequence[ManifestEntry],
    *,
    snapshot_id: int,
    first_row_id: int | None = None,
    properties: Mapping[str, str] | None = None,
    sync_marker: bytes | None = None,
) -> tuple[bytes, ManifestFile]:
    """The bytes of a manifest and its manifest-list entry (see :func:`write_manifest`)."""
    _check_version(format_version)
    content = ManifestContent(content)
    codec = avro_codec(properties)
    header = manifest_header(schema, spec, format_version, content, codec)
    if first_row_id is not None and (format_version < 3 or content != ManifestContent.DATA):
        raise ValidationError("first_row_id is for v3 data manifests", field="first_row_id",
                              value=first_row_id)
    if first_row_id is not None and first_row_id < 0:
        raise ValidationError("first_row_id must not be negative", field="first_row_id",
                              value=first_row_id)
    partition_type = spec.partition_type(schema)
    counts = {s: [0, 0] for s in EntryStatus}
    min_seq: int | None = None
    records = []
    for i, e in enumerate(entries):
        if not isinstance(e, ManifestEntry):
            raise ValidationError("entries must be ManifestEntry objects",
                                  field=f"entries[{i}]", value=type(e).__name__)
        _check_file(e, i, spec, partition_type, format_version, content)
        rec, data_seq = _entry_record(e, i, partition_type, format_version, snapshot_id)
        records.append(rec)
        counts[e.status][0] += 1
        counts[e.status][1] += e.data_file.record_count
        if e.is_live and data_seq is not None and (min_seq is None or data_seq < min_seq):
            min_seq = data_seq
    summaries = partition_summaries(partition_type, (e.data_file.partition for e in entries))
    try:
        data = avro_container(header, header["avro.schema"], records, codec,
                          avro_sync_marker(sync_marker), path)
    except IcebergError as e:
        raise e.with_file(path) from None
    manifest = ManifestFile(
        manifest_path=path,
        manifest_length=len(data),
        partition_spec_id=spec.spec_id,
        content=content,
        sequence_number=UNASSIGNED_SEQUENCE_NUMBER,
        min_sequence_number=UNASSIGNED_SEQUENCE_NUMBER if min_seq is None else min_seq,
        added_snapshot_id=snapshot_id,
        added_files_count=counts[EntryStatus.ADDED][0],
        existing_files_count=counts[EntryStatus.EXISTING][0],
        deleted_files_count=counts[EntryStatus.DELETED][0],
        added_rows_count=counts[EntryStatus.ADDED][1],
        existing_rows_count=counts[EntryStatus.EXISTING][1],
        deleted_rows_count=counts[EntryStatus.DELETED][1],
        partitions=summaries,
        first_row_id=first_row_id,
    )
    return data, manifest


def write_manifest(
    io: FileIO,
    path: str,
    spec: PartitionSpec,
    schema: Schema,
    format_version: int,
    content: ManifestContent,
    entries: Sequence[ManifestEntry],
    *,
    snapshot_id: int,
    first_row_id: int | None = None,
    properties: Mapping[str, str] | None = None,
) -> ManifestFile:
    """Write a manifest of ``entries`` at ``path`` (a new file) and return its manifest-list
    entry, whose sequence numbers are assigned by :func:`write_manifest_list`.

    ``schema`` is the table schema the files were written with, ``snapshot_id`` the snapshot
    being committed, ``properties`` the table properties (codec). ``first_row_id`` (v3 data
    manifests) is usually left None: the manifest list assigns it. Every file must belong to
    ``spec`` and match ``content``; nothing is written when an entry is invalid.
    """
    data, manifest = encode_manifest(path, spec, schema, format_version, content, entries,
                                     snapshot_id=snapshot_id, first_row_id=first_row_id,
                                     properties=properties)
    io.new_output(path).create(data)
    return manifest


# --------------------------------------------------------------------------- manifest lists


@safe_repr
@dataclass(frozen=True)
class ManifestListInfo:
    """A written manifest list: its location and length, the manifests as written (sequence
    numbers and first row ids assigned) and, in v3, the snapshot's row-id range: rows
    ``[first_row_id, next_row_id)`` were assigned, ``added_rows`` of them (spec: Snapshots,
    ``first-row-id`` / ``added-rows``; the table's new ``next-row-id`` is ``next_row_id``)."""

    manifest_list: str
    length: int
    manifests: tuple[ManifestFile, ...]
    first_row_id: int | None = None
    next_row_id: int | None = None
    added_rows: int | None = None


def _assign(m: ManifestFile, i: int, snapshot_id: int, sequence_number: int,
            format_version: int) -> ManifestFile:
    """``m`` with this commit's sequence number where unassigned (only for manifests this
    snapshot added); v1 lists carry none (read as 0, Appendix E)."""
    if not isinstance(m, ManifestFile):
        raise ValidationError("manifests must be ManifestFile objects", field=f"manifests[{i}]",
                              value=type(m).__name__)
    seq, min_seq = m.sequence_number, m.min_sequence_number
    if UNASSIGNED_SEQUENCE_NUMBER in (seq, min_seq) and m.added_snapshot_id != snapshot_id:
        raise ValidationError(
            f"manifest from snapshot {m.added_snapshot_id} has no sequence number (only "
            f"manifests written for snapshot {snapshot_id} inherit this commit's)",
            file=m.manifest_path, field=f"manifests[{i}].sequence_number", value=seq)
    for name, v in (("sequence_number", seq), ("min_sequence_number", min_seq)):
        if v < UNASSIGNED_SEQUENCE_NUMBER:
            raise ValidationError("sequence numbers must not be negative",
                                  file=m.manifest_path, field=f"manifests[{i}].{name}", value=v)
    if format_version == 1:
        return replace(m, sequence_number=0, min_sequence_number=0)
    if seq == UNASSIGNED_SEQUENCE_NUMBER:
        seq = sequence_number
    if min_seq == UNASSIGNED_SEQUENCE_NUMBER:
        min_seq = sequence_number
    if (seq, min_seq) == (m.sequence_number, m.min_sequence_number):
        return m
    return replace(m, sequence_number=seq, min_sequence_number=min_seq)


def encode_manifest_list(
    path: str,
    manifests: Sequence[ManifestFile],
    *,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int,
    first_row_id: int | None = None,
    properties: Mapping[str, str] | None = None,
    sync_marker: bytes | None = None,
) -> tuple[bytes, ManifestListInfo]:
    """The bytes of a manifest list and what was written (see :func:`write_manifest_list`)."""
    _check_version(format_version)
    if format_version >= 2 and sequence_number < 0:
        raise ValidationError("the commit's sequence number must not be negative",
                              field="sequence_number", value=sequence_number)
    if format_version >= 3:
        if first_row_id is None or first_row_id < 0:
            raise ValidationError("v3 manifest lists need the table's next row id as "
                                  "first_row_id", field="first_row_id", value=first_row_id)
    elif first_row_id is not None:
        raise ValidationError("first_row_id is for v3 manifest lists", field="first_row_id",
                              value=first_row_id)
    written: list[ManifestFile] = []
    next_row_id = first_row_id
    for i, m in enumerate(manifests):
        m = _assign(m, i, snapshot_id, sequence_number, format_version)
        if (next_row_id is not None and m.content == ManifestContent.DATA
                and m.first_row_id is None):
            # First Row ID Assignment: room for existing and added rows, as Java reserves.
            if m.existing_rows_count is None or m.added_rows_count is None:
                raise ValidationError("data manifests need row counts to assign row ids",
                                      file=m.manifest_path, field=f"manifests[{i}]")
            reserved = m.existing_rows_count + m.added_rows_count
            m = replace(m, first_row_id=next_row_id)
            next_row_id += reserved
        written.append(m)
    codec = avro_codec(properties)
    header = manifest_list_header(snapshot_id, parent_snapshot_id, sequence_number,
                                  format_version, first_row_id, codec)
    try:
        records = [m.to_avro_record(format_version) for m in written]
        data = avro_container(header, header["avro.schema"], records, codec,
                          avro_sync_marker(sync_marker), path)
    except IcebergError as e:
        raise e.with_file(path) from None
    added = None if next_row_id is None or first_row_id is None else next_row_id - first_row_id
    return data, ManifestListInfo(path, len(data), tuple(written), first_row_id, next_row_id,
                                  added)


def write_manifest_list(
    io: FileIO,
    path: str,
    manifests: Sequence[ManifestFile],
    *,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int,
    first_row_id: int | None = None,
    properties: Mapping[str, str] | None = None,
) -> ManifestListInfo:
    """Write a snapshot's manifest list at ``path`` (a new file).

    Manifests written for this snapshot (``added_snapshot_id == snapshot_id``) with an
    unassigned sequence number get ``sequence_number`` (spec: Sequence Number Inheritance); a
    manifest of another snapshot without one is an error. In v3, ``first_row_id`` is the
    table's ``next-row-id``; data manifests without a first row id get the next free one (spec:
    First Row ID Inheritance); the result tells the snapshot's ``added_rows`` and the table's
    new ``next_row_id``.
    """
    data, info = encode_manifest_list(
        path, manifests, format_version=format_version, snapshot_id=snapshot_id,
        parent_snapshot_id=parent_snapshot_id, sequence_number=sequence_number,
        first_row_id=first_row_id, properties=properties)
    io.new_output(path).create(data)
    return info
