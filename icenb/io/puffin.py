"""Puffin files: blobs (statistics, deletion vectors) followed by a JSON footer.

Spec: Puffin spec. A file is ``Magic Blob1 ... BlobN Footer`` with Magic ``PFA1``; the footer is
``Magic FooterPayload FooterPayloadSize Flags Magic``: the payload is UTF-8 JSON ``FileMetadata``
(LZ4-framed when flag bit 0 of byte 0 is set), its size and the flags are 4-byte little-endian.

Reading works on ``bytes`` or on any object with ``size`` and ``read_range(offset, length)``
(``icenb.io.file_io.InputFile``); every malformed file raises ``CorruptFile`` naming the file and
the field at fault. Writing builds the whole file in memory with an uncompressed footer laid out
exactly as the reference implementation writes it (compact JSON, same key order and escaping).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Protocol

from icenb.errors import CorruptFile, InvalidMetadata, UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    as_object,
    field_path,
    int_value,
    json_list,
    opt_str,
    req_long,
    req_str,
    str_map,
)
from icenb.spec.deletion_vector import (
    DELETION_VECTOR_V1,
    DeletionVector,
    deserialize_deletion_vector,
    serialize_deletion_vector,
)
from icenb.spec.metadata_columns import ROW_POSITION

__all__ = [
    "CARDINALITY",
    "CREATED_BY",
    "DELETION_VECTOR_V1",
    "MAGIC",
    "REFERENCED_DATA_FILE",
    "Blob",
    "BlobMetadata",
    "FileMetadata",
    "PuffinFile",
    "PuffinReader",
    "RangeReadable",
    "build_puffin",
    "deletion_vector_blob",
    "file_metadata_from_json",
    "file_metadata_to_json",
    "read_deletion_vector",
    "write_puffin",
]

MAGIC = b"PFA1"
CREATED_BY = "created-by"  # Puffin spec, Common properties
REFERENCED_DATA_FILE = "referenced-data-file"  # deletion-vector-v1 blob properties
CARDINALITY = "cardinality"
CODECS = ("lz4", "zstd")  # Puffin spec, Compression codecs

_FOOTER_STRUCT = struct.Struct("<i4s4s")  # payload size, flags, magic
_FOOTER_STRUCT_LENGTH = _FOOTER_STRUCT.size  # 12
_MIN_FOOTER_LENGTH = len(MAGIC) + _FOOTER_STRUCT_LENGTH  # an empty payload: 16
_FLAG_FOOTER_COMPRESSED = 0x01  # byte 0, bit 0
_TAIL_READ_AHEAD = 16 * 1024  # one range read usually covers the whole footer
_MAX_COALESCED_READ = 16 * 1024 * 1024
_MAX_DECOMPRESSED = 2**31 - 1


class RangeReadable(Protocol):
    """What the reader needs of a file: its size and range reads (``InputFile`` has both)."""

    @property
    def size(self) -> int: ...

    def read_range(self, offset: int, length: int) -> bytes: ...


Source = bytes | bytearray | memoryview | RangeReadable


def _frozen_map(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return value if isinstance(value, MappingProxyType) else MappingProxyType(dict(value or {}))


# --------------------------------------------------------------------------- model
@safe_repr
@dataclass(frozen=True)
class BlobMetadata:
    """One blob's entry in a Puffin footer (spec: Puffin spec, BlobMetadata)."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "properties", _frozen_map(self.properties))

    def __hash__(self) -> int:
        return hash((self.type, self.fields, self.snapshot_id, self.sequence_number, self.offset,
                     self.length, self.compression_codec, frozenset(self.properties.items())))


@safe_repr
@dataclass(frozen=True)
class FileMetadata:
    """A Puffin footer: the blobs and the file's properties (spec: Puffin spec, FileMetadata)."""

    blobs: tuple[BlobMetadata, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "blobs", tuple(self.blobs))
        object.__setattr__(self, "properties", _frozen_map(self.properties))

    def __hash__(self) -> int:
        return hash((self.blobs, frozenset(self.properties.items())))


@safe_repr
@dataclass(frozen=True)
class Blob:
    """A blob to write: its uncompressed ``data`` and footer fields.

    ``compression_codec="zstd"`` compresses ``data`` on write; ``snapshot_id`` and
    ``sequence_number`` default to -1, as the spec requires for deletion vectors.
    """

    type: str
    data: bytes
    fields: Sequence[int] = ()
    snapshot_id: int = -1
    sequence_number: int = -1
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", bytes(self.data))
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "properties", _frozen_map(self.properties))


@safe_repr
@dataclass(frozen=True)
class PuffinFile:
    """A written Puffin file: its bytes and the footer they end with."""

    data: bytes = field(repr=False)
    file_metadata: FileMetadata
    footer_size: int

    @property
    def file_size(self) -> int:
        return len(self.data)


# --------------------------------------------------------------------------- footer JSON
def file_metadata_from_json(
    payload: str | bytes | bytearray | memoryview, *, file: str | None = None
) -> FileMetadata:
    """Parse a footer payload (UTF-8 JSON ``FileMetadata``); errors are ``CorruptFile``."""
    if not isinstance(payload, str):
        try:
            payload = bytes(payload).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptFile(f"Puffin footer payload is not UTF-8: {exc.reason}",
                              file=file, field="footer-payload") from None
    try:
        obj = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise CorruptFile(f"Puffin footer payload is not valid JSON: {exc}",
                          file=file, field="footer-payload") from None
    try:
        return _file_metadata(obj)
    except InvalidMetadata as exc:
        raise CorruptFile(f"invalid Puffin footer: {exc.message}", file=file, field=exc.field,
                          **({"value": exc.value} if exc.has_value else {})) from None


def _file_metadata(obj: Any) -> FileMetadata:
    obj = as_object(obj, "", "the Puffin footer payload")
    raw_blobs = json_list(obj, "blobs", "", required=True)
    blobs = tuple(_blob_metadata(b, f"blobs[{i}]") for i, b in enumerate(raw_blobs))
    return FileMetadata(blobs, str_map(obj, "properties", ""))


def _blob_metadata(obj: Any, where: str) -> BlobMetadata:
    obj = as_object(obj, where, "a Puffin blob metadata")
    fields = json_list(obj, "fields", where, required=True)
    at = field_path(where, "fields")
    field_ids = tuple(int_value(f, at, str(i)) for i, f in enumerate(fields))
    offset = req_long(obj, "offset", where)
    length = req_long(obj, "length", where)
    for key, value in (("offset", offset), ("length", length)):
        if value < 0:
            raise InvalidMetadata("must not be negative", field=field_path(where, key),
                                  value=value)
    return BlobMetadata(
        type=req_str(obj, "type", where),
        fields=field_ids,
        snapshot_id=req_long(obj, "snapshot-id", where),
        sequence_number=req_long(obj, "sequence-number", where),
        offset=offset,
        length=length,
        compression_codec=opt_str(obj, "compression-codec", where),
        properties=str_map(obj, "properties", where),
    )


def _json_string(text: str) -> str:
    """A JSON string escaped as Jackson does: short escapes, ``\\u00XX`` (upper-case hex) for
    other control characters, everything else verbatim."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20:
            short = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}.get(ch)
            out.append(short or f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _json_properties(properties: Mapping[str, str]) -> str:
    items = (f"{_json_string(k)}:{_json_string(v)}" for k, v in properties.items())
    return "{" + ",".join(items) + "}"


def _blob_json(blob: BlobMetadata) -> str:
    parts = [
        f'"type":{_json_string(blob.type)}',
        f'"fields":[{",".join(str(f) for f in blob.fields)}]',
        f'"snapshot-id":{blob.snapshot_id}',
        f'"sequence-number":{blob.sequence_number}',
        f'"offset":{blob.offset}',
        f'"length":{blob.length}',
    ]
    if blob.compression_codec is not None:
        parts.append(f'"compression-codec":{_json_string(blob.compression_codec)}')
    if blob.properties:
        parts.append(f'"properties":{_json_properties(blob.properties)}')
    return "{" + ",".join(parts) + "}"


def file_metadata_to_json(metadata: FileMetadata) -> str:
    """The footer payload JSON, laid out as the reference writer does (compact, fixed key
    order, empty ``properties`` omitted)."""
    text = '{"blobs":[' + ",".join(_blob_json(b) for b in metadata.blobs) + "]"
    if metadata.properties:
        text += f',"properties":{_json_properties(metadata.properties)}'
    return text + "}"


# --------------------------------------------------------------------------- compression
def _zstd_content_size(data: bytes) -> int | None:
    """Frame_Content_Size from a Zstandard frame header (zstd compression format, 3.1.1)."""
    if len(data) < 5 or data[:4] != b"\x28\xb5\x2f\xfd":
        raise ValueError("not a Zstandard frame")
    descriptor = data[4]
    fcs_flag, single_segment, dict_flag = descriptor >> 6, descriptor >> 5 & 1, descriptor & 3
    pos = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    size_bytes = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if size_bytes == 0:
        return None
    if len(data) < pos + size_bytes:
        raise ValueError("truncated Zstandard frame header")
    size = int.from_bytes(data[pos:pos + size_bytes], "little")
    return size + 256 if size_bytes == 2 else size


def _lz4_content_size(data: bytes) -> int | None:
    """Content Size from an LZ4 frame descriptor (LZ4 frame format)."""
    if len(data) < 7 or data[:4] != b"\x04\x22\x4d\x18":
        raise ValueError("not an LZ4 frame")
    flags = data[4]
    if flags >> 6 != 1:
        raise ValueError("unsupported LZ4 frame version")
    if not flags & 0x08:
        return None
    if len(data) < 14:
        raise ValueError("truncated LZ4 frame header")
    return int.from_bytes(data[6:14], "little")


def _decompress(codec: str | None, data: bytes, *, file: str | None, field: str) -> bytes:
    """``data`` decoded with a Puffin codec: one frame whose header holds the content size."""
    if codec is None:
        return data
    if codec not in CODECS:
        raise UnsupportedFeature("unsupported Puffin compression codec", file=file, field=field,
                                 value=codec)
    import pyarrow as pa

    try:
        size = _zstd_content_size(data) if codec == "zstd" else _lz4_content_size(data)
    except ValueError as exc:
        raise CorruptFile(f"invalid {codec} data: {exc}", file=file, field=field) from None
    if size is None:
        raise CorruptFile(f"{codec} frame lacks the content size the Puffin spec requires",
                          file=file, field=field)
    if size > _MAX_DECOMPRESSED:
        raise CorruptFile(f"{codec} frame content size too large", file=file, field=field,
                          value=size)
    try:
        out = pa.Codec(codec).decompress(data, decompressed_size=size, asbytes=True)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise CorruptFile(f"invalid {codec} data: {exc}", file=file, field=field) from None
    return bytes(out)


def _compress(codec: str | None, data: bytes, *, field: str) -> bytes:
    if codec is None:
        return data
    if codec == "lz4":
        raise UnsupportedFeature("writing lz4 blobs is not supported (use zstd)", field=field,
                                 value=codec)
    if codec != "zstd":
        raise ValidationError(f"unknown Puffin compression codec, expected one of {CODECS}",
                              field=field, value=codec)
    import pyarrow as pa

    return bytes(pa.Codec("zstd").compress(data, asbytes=True))


# --------------------------------------------------------------------------- reading
def _location(source: object, file: str | None) -> str | None:
    if file is not None:
        return file
    location = getattr(source, "location", None)
    return location if isinstance(location, str) else None


class _Input:
    """Range reads over bytes or a ``RangeReadable``, naming the file in errors."""

    def __init__(self, source: Source, file: str | None) -> None:
        self.file = _location(source, file)
        self._bytes: memoryview | None = None
        self._source: RangeReadable | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._bytes = memoryview(source).cast("B")
        elif callable(getattr(source, "read_range", None)):
            self._source = source
        else:
            raise ValidationError("a Puffin source must be bytes or have size and read_range",
                                  file=self.file, value=type(source).__name__)

    @cached_property
    def size(self) -> int:
        """The file's size (asked of the source only when needed)."""
        if self._bytes is not None:
            return len(self._bytes)
        assert self._source is not None
        return int(self._source.size)

    def read(self, offset: int, length: int, field: str) -> bytes:
        if offset < 0 or length < 0:
            raise CorruptFile(f"invalid range: {length} bytes at offset {offset}",
                              file=self.file, field=field)
        if self._bytes is not None:
            if offset + length > len(self._bytes):
                raise CorruptFile(f"range [{offset}, {offset + length}) is outside the file of "
                                  f"{len(self._bytes)} bytes", file=self.file, field=field)
            return bytes(self._bytes[offset:offset + length])
        assert self._source is not None
        data = bytes(self._source.read_range(offset, length))
        if len(data) != length:
            raise CorruptFile(f"short read: wanted {length} bytes at offset {offset}, got "
                              f"{len(data)}", file=self.file, field=field)
        return data


class PuffinReader:
    """Reads a Puffin file's footer (on first use) and its blobs. Spec: Puffin spec.

    ``source`` is ``bytes`` or an object with ``size`` and ``read_range`` (an ``InputFile``);
    ``file`` names it in errors (default: its ``location``). ``footer_size``, when known (a
    statistics file's ``file-footer-size-in-bytes``), is checked against the file.
    """

    def __init__(self, source: Source, *, file: str | None = None,
                 footer_size: int | None = None) -> None:
        self._input = _Input(source, file)
        self._footer_size_hint = footer_size

    @property
    def file(self) -> str | None:
        return self._input.file

    @property
    def file_size(self) -> int:
        return self._input.size

    @property
    def file_metadata(self) -> FileMetadata:
        """The footer's ``FileMetadata`` (read and validated once)."""
        return self._footer[0]

    @property
    def blobs(self) -> tuple[BlobMetadata, ...]:
        return self.file_metadata.blobs

    @property
    def properties(self) -> Mapping[str, str]:
        return self.file_metadata.properties

    @property
    def footer_size(self) -> int:
        """Bytes of the footer, from its start magic to the end of the file."""
        return self._footer[1]

    @cached_property
    def _footer(self) -> tuple[FileMetadata, int]:
        inp, file = self._input, self._input.file
        size = inp.size
        if size < len(MAGIC) + _MIN_FOOTER_LENGTH:
            raise CorruptFile(f"file of {size} bytes is too short to be a Puffin file",
                              file=file, field="file-size", value=size)
        tail_length = min(size, max(_TAIL_READ_AHEAD, self._footer_size_hint or 0))
        tail_start = size - tail_length
        tail = inp.read(tail_start, tail_length, "footer")
        payload_size, flags, end_magic = _FOOTER_STRUCT.unpack_from(
            tail, tail_length - _FOOTER_STRUCT_LENGTH)
        if end_magic != MAGIC:
            raise CorruptFile("Puffin footer does not end with the magic PFA1", file=file,
                              field="footer.magic", value=end_magic)
        footer_size = payload_size + _MIN_FOOTER_LENGTH
        if payload_size < 0 or footer_size > size - len(MAGIC):
            raise CorruptFile(f"footer payload size does not fit in a file of {size} bytes",
                              file=file, field="footer.payload-size", value=payload_size)
        if self._footer_size_hint is not None and self._footer_size_hint != footer_size:
            raise CorruptFile(f"the file's footer is {footer_size} bytes, not the size given",
                              file=file, field="footer-size", value=self._footer_size_hint)
        if flags[0] & ~_FLAG_FOOTER_COMPRESSED or any(flags[1:]):
            raise CorruptFile("unknown Puffin footer flags are set", file=file,
                              field="footer.flags", value=flags.hex())
        footer_start = size - footer_size
        if footer_start >= tail_start:
            footer = tail[footer_start - tail_start:]
        else:
            footer = inp.read(footer_start, footer_size, "footer")
        start_magic = tail[:4] if tail_start == 0 else inp.read(0, len(MAGIC), "magic")
        if start_magic != MAGIC:
            raise CorruptFile("not a Puffin file: it does not start with the magic PFA1",
                              file=file, field="magic", value=start_magic)
        if footer[:4] != MAGIC:
            raise CorruptFile("Puffin footer does not start with the magic PFA1", file=file,
                              field="footer.start-magic", value=footer[:4])
        payload = footer[4:4 + payload_size]
        if flags[0] & _FLAG_FOOTER_COMPRESSED:
            payload = _decompress("lz4", payload, file=file, field="footer.payload")
        metadata = file_metadata_from_json(payload, file=file)
        blob_end = footer_start
        for i, blob in enumerate(metadata.blobs):
            if blob.offset < len(MAGIC) or blob.offset + blob.length > blob_end:
                raise CorruptFile(
                    f"blob bytes [{blob.offset}, {blob.offset + blob.length}) are not between "
                    f"the start magic and the footer (at {blob_end})",
                    file=file, field=f"blobs[{i}].offset", value=blob.offset)
        return metadata, footer_size

    def read_blob(self, blob: BlobMetadata) -> bytes:
        """The blob's bytes, decompressed per its ``compression-codec``."""
        field_name = f"blob {blob.type}@{blob.offset}"
        raw = self._input.read(blob.offset, blob.length, field_name)
        return _decompress(blob.compression_codec, raw, file=self.file, field=field_name)

    def read_all(
        self, blobs: Iterable[BlobMetadata] | None = None
    ) -> list[tuple[BlobMetadata, bytes]]:
        """``(metadata, bytes)`` of ``blobs`` (default: all), reading nearby blobs at once."""
        wanted = list(self.blobs if blobs is None else blobs)
        if not wanted:
            return []
        start = min(b.offset for b in wanted)
        end = max(b.offset + b.length for b in wanted)
        if end - start > _MAX_COALESCED_READ:
            return [(b, self.read_blob(b)) for b in wanted]
        span = self._input.read(start, end - start, "blobs")
        out = []
        for b in wanted:
            raw = span[b.offset - start:b.offset - start + b.length]
            name = f"blob {b.type}@{b.offset}"
            out.append((b, _decompress(b.compression_codec, raw, file=self.file, field=name)))
        return out

    def read_deletion_vector(self, blob: BlobMetadata) -> DeletionVector:
        """Decode a ``deletion-vector-v1`` blob, checking its properties and ``cardinality``.

        Spec: Puffin spec, "deletion-vector-v1 blob type" (properties must include
        ``referenced-data-file`` and ``cardinality``; the blob is never compressed).
        """
        where = f"blob {blob.type}@{blob.offset}"
        if blob.type != DELETION_VECTOR_V1:
            raise ValidationError(f"not a {DELETION_VECTOR_V1} blob", file=self.file,
                                  field=f"{where}.type", value=blob.type)
        if blob.compression_codec is not None:
            raise CorruptFile(f"{DELETION_VECTOR_V1} blobs must not be compressed",
                              file=self.file, field=f"{where}.compression-codec",
                              value=blob.compression_codec)
        if REFERENCED_DATA_FILE not in blob.properties:
            raise CorruptFile(f"{DELETION_VECTOR_V1} blob lacks the {REFERENCED_DATA_FILE} "
                              "property", file=self.file, field=f"{where}.properties")
        raw = blob.properties.get(CARDINALITY)
        if raw is None or not raw.isascii() or not raw.isdigit():
            raise CorruptFile(f"{DELETION_VECTOR_V1} blob needs a decimal {CARDINALITY} "
                              "property", file=self.file, field=f"{where}.properties.cardinality",
                              value=raw)
        raw_blob = self._input.read(blob.offset, blob.length, where)
        return deserialize_deletion_vector(raw_blob, cardinality=int(raw), file=self.file)


def read_deletion_vector(
    source: Source,
    offset: int,
    length: int,
    *,
    cardinality: int | None = None,
    file: str | None = None,
) -> DeletionVector:
    """Read and decode the deletion vector at ``offset``/``length`` of a Puffin file without
    its footer (a DV entry's ``content_offset``, ``content_size_in_bytes``, ``record_count``).

    Spec: table spec, "Deletion Vectors"."""
    inp = _Input(source, file)
    raw = inp.read(offset, length, f"deletion vector@{offset}")
    return deserialize_deletion_vector(raw, cardinality=cardinality, file=inp.file)


# --------------------------------------------------------------------------- writing
def deletion_vector_blob(
    positions: DeletionVector | Iterable[int], referenced_data_file: str
) -> Blob:
    """A ``deletion-vector-v1`` blob for the data file at ``referenced_data_file``, with the
    properties and field id the reference writer uses. Spec: Puffin spec, deletion-vector-v1."""
    dv = positions if isinstance(positions, DeletionVector) else (
        DeletionVector.from_positions(positions))
    return Blob(
        type=DELETION_VECTOR_V1,
        data=serialize_deletion_vector(dv),
        fields=(ROW_POSITION.field_id,),
        properties={REFERENCED_DATA_FILE: referenced_data_file, CARDINALITY: str(dv.cardinality)},
    )


def _check_blob(blob: Blob, i: int) -> None:
    where = f"blobs[{i}]"
    if not isinstance(blob.type, str) or not blob.type:
        raise ValidationError("a blob type must be a non-empty string", field=f"{where}.type",
                              value=blob.type)
    for f in blob.fields:
        if type(f) is not int or not INT_MIN <= f <= INT_MAX:
            raise ValidationError("field ids must be 32-bit ints", field=f"{where}.fields",
                                  value=f)
    for name in ("snapshot_id", "sequence_number"):
        value = getattr(blob, name)
        if type(value) is not int or not LONG_MIN <= value <= LONG_MAX:
            raise ValidationError("must be a 64-bit int", field=f"{where}.{name}", value=value)
    for k, v in blob.properties.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ValidationError("blob properties must map strings to strings",
                                  field=f"{where}.properties", value=(k, v))
    if blob.type == DELETION_VECTOR_V1 and blob.compression_codec is not None:
        raise ValidationError(f"{DELETION_VECTOR_V1} blobs must not be compressed",
                              field=f"{where}.compression_codec", value=blob.compression_codec)


def build_puffin(
    blobs: Iterable[Blob], properties: Mapping[str, str] | None = None
) -> PuffinFile:
    """A Puffin file of ``blobs`` (in order, right after the magic) with an uncompressed footer.

    Spec: Puffin spec, File structure / Footer structure.
    """
    parts = [MAGIC]
    offset = len(MAGIC)
    entries = []
    for i, blob in enumerate(blobs):
        _check_blob(blob, i)
        stored = _compress(blob.compression_codec, blob.data,
                           field=f"blobs[{i}].compression_codec")
        entries.append(BlobMetadata(blob.type, tuple(blob.fields), blob.snapshot_id,
                                    blob.sequence_number, offset, len(stored),
                                    blob.compression_codec, blob.properties))
        parts.append(stored)
        offset += len(stored)
    props = dict(properties or {})
    for k, v in props.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ValidationError("file properties must map strings to strings",
                                  field="properties", value=(k, v))
    metadata = FileMetadata(tuple(entries), props)
    try:
        payload = file_metadata_to_json(metadata).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError("footer strings must be valid Unicode (no lone surrogates)",
                              field="footer", value=exc.object[exc.start:exc.end]) from None
    if len(payload) > INT_MAX:
        raise ValidationError("Puffin footer payload too large", field="footer",
                              value=len(payload))
    footer = MAGIC + payload + _FOOTER_STRUCT.pack(len(payload), bytes(4), MAGIC)
    parts.append(footer)
    return PuffinFile(b"".join(parts), metadata, len(footer))


def write_puffin(blobs: Iterable[Blob], properties: Mapping[str, str] | None = None) -> bytes:
    """The bytes of a Puffin file of ``blobs`` (see ``build_puffin``)."""
    return build_puffin(blobs, properties).data
