"""Iceberg data and delete files in Parquet (spec: Appendix A, "Parquet": type mapping, field
ids, 3-level lists and maps), beside :mod:`~icenb.io.data_files.orc` and
:mod:`~icenb.io.data_files.avro`: reading columns by field id (a name mapping gives ids to files
written without them), and writing: Java's ``write.parquet.*`` properties and defaults, the
Arrow table handed to the writer (``unknown`` columns left out, uuids annotated), split offsets
and files rolled at ``write.target-file-size-bytes``.
"""

from __future__ import annotations

import contextlib
import math
import posixpath
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from icenb.errors import CorruptFile, FileIOError, IcebergError, UnsupportedFeature
from icenb.io.arrow_arrays import combined, list_offsets, map_as_list, null_mask
from icenb.io.file_io import FileIO, InputFile
from icenb.spec.arrow_schema import FIELD_ID_KEY, arrow_field_id, to_arrow_type
from icenb.spec.properties import (
    DEFAULT_FILE_FORMAT,
    PARQUET_COMPRESSION,
    PARQUET_COMPRESSION_LEVEL,
    PARQUET_DICT_SIZE_BYTES,
    PARQUET_PAGE_ROW_LIMIT,
    PARQUET_PAGE_SIZE_BYTES,
    PARQUET_ROW_GROUP_SIZE_BYTES,
    WRITE_TARGET_FILE_SIZE_BYTES,
    int_property,
    optional_int_property,
)
from icenb.spec.schema import Schema
from icenb.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
    UnknownType,
    UUIDType,
)

__all__ = [
    "DEFAULT_COMPRESSION",
    "DEFAULT_TARGET_FILE_SIZE",
    "ParquetFileWriter",
    "ParquetWriteOptions",
    "SchemaMapper",
    "parquet_field",
    "read_parquet_file",
    "split_offsets_of",
    "write_rolling",
    "writer_table",
]

#: Gives field ids to the Arrow schema of a file written without them (a name mapping).
SchemaMapper = Callable[[pa.Schema], pa.Schema]

# Table properties (names and defaults of the reference implementation's TableProperties).
DEFAULT_COMPRESSION = "zstd"
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024
DEFAULT_ROW_GROUP_SIZE = 128 * 1024 * 1024
DEFAULT_PAGE_SIZE = 1024 * 1024
DEFAULT_PAGE_ROW_LIMIT = 20_000
DEFAULT_DICT_SIZE = 2 * 1024 * 1024

_CODECS = {"zstd": "zstd", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4",
           "brotli": "brotli", "uncompressed": "none", "none": "none"}


@dataclass(frozen=True)
class ParquetWriteOptions:
    """Parquet writer settings from table properties (Java's names and defaults)."""

    compression: str = DEFAULT_COMPRESSION
    compression_level: int | None = None
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE
    page_size: int = DEFAULT_PAGE_SIZE
    page_row_limit: int = DEFAULT_PAGE_ROW_LIMIT
    dict_size: int = DEFAULT_DICT_SIZE

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> ParquetWriteOptions:
        """Read ``write.parquet.*`` and ``write.target-file-size-bytes``; bad values raise."""
        fmt = properties.get(DEFAULT_FILE_FORMAT, "parquet").strip().lower()
        if fmt != "parquet":
            raise UnsupportedFeature("only Parquet data files can be written",
                                     field=DEFAULT_FILE_FORMAT, value=fmt)
        codec_raw = properties.get(PARQUET_COMPRESSION, DEFAULT_COMPRESSION)
        codec = _CODECS.get(codec_raw.strip().lower())
        if codec is None:
            raise UnsupportedFeature("unsupported Parquet compression codec",
                                     field=PARQUET_COMPRESSION, value=codec_raw)
        return cls(
            compression=codec,
            compression_level=optional_int_property(properties, PARQUET_COMPRESSION_LEVEL,
                                                    None, minimum=-(2**31)),
            target_file_size=int_property(properties, WRITE_TARGET_FILE_SIZE_BYTES,
                                          DEFAULT_TARGET_FILE_SIZE, minimum=1),
            row_group_size=int_property(properties, PARQUET_ROW_GROUP_SIZE_BYTES,
                                        DEFAULT_ROW_GROUP_SIZE, minimum=1),
            page_size=int_property(properties, PARQUET_PAGE_SIZE_BYTES, DEFAULT_PAGE_SIZE,
                                   minimum=1),
            page_row_limit=int_property(properties, PARQUET_PAGE_ROW_LIMIT,
                                        DEFAULT_PAGE_ROW_LIMIT, minimum=1),
            dict_size=int_property(properties, PARQUET_DICT_SIZE_BYTES, DEFAULT_DICT_SIZE,
                                   minimum=1),
        )


def _parquet_type(t: IcebergType) -> pa.DataType:
    """The Arrow type handed to the Parquet writer: uuid as ``arrow.uuid`` (UUID annotation)."""
    if isinstance(t, UUIDType):
        return pa.uuid()
    if isinstance(t, StructType):
        return pa.struct([parquet_field(f) for f in t.fields
                          if not isinstance(f.field_type, UnknownType)])
    if isinstance(t, ListType):
        return pa.list_(parquet_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(parquet_field(t.key_field), parquet_field(t.value_field))
    return to_arrow_type(t)


def parquet_field(f: NestedField) -> pa.Field:
    return pa.field(f.name, _parquet_type(f.field_type), nullable=not f.required,
                    metadata={FIELD_ID_KEY: str(f.field_id).encode()})


def _has_unknown(t: IcebergType) -> bool:
    if isinstance(t, UnknownType):
        return True
    if isinstance(t, (StructType, ListType, MapType)):
        return any(_has_unknown(f.field_type) for f in t.fields)
    return False


def writer_table(data: pa.Table, schema: Schema) -> pa.Table:
    """``data`` as written to Parquet: unknown columns left out, uuids annotated."""
    kept = [f for f in schema.fields if not isinstance(f.field_type, UnknownType)]
    target = pa.schema([parquet_field(f) for f in kept])
    arrays = []
    for f, target_field in zip(kept, target, strict=True):
        arr = combined(data.column(f.name))
        if arr.type != target_field.type:
            if _has_unknown(f.field_type):
                arr = _drop_unknown(arr, f.field_type)
            arr = arr.cast(target_field.type)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=target)


def _drop_unknown(arr: pa.Array, t: IcebergType) -> pa.Array:
    if isinstance(t, StructType):
        kept = [(i, f) for i, f in enumerate(t.fields) if not isinstance(f.field_type,
                                                                           UnknownType)]
        children = [_drop_unknown(arr.field(i), f.field_type) for i, f in kept]
        return pa.StructArray.from_arrays(
            children, fields=[pa.field(f.name, c.type, nullable=not f.required)
                              for (_, f), c in zip(kept, children, strict=True)],
            mask=null_mask(arr))
    if isinstance(t, ListType):
        elements = _drop_unknown(arr.flatten(), t.element_type)
        return pa.ListArray.from_arrays(list_offsets(arr, "list"), elements,
                                        mask=null_mask(arr))
    if isinstance(t, MapType):
        arr = map_as_list(arr)
        entries = arr.flatten()
        return pa.MapArray.from_arrays(
            list_offsets(arr, "map"), _drop_unknown(entries.field(0), t.key_type),
            _drop_unknown(entries.field(1), t.value_type), mask=null_mask(arr))
    return arr


def split_offsets_of(metadata: pq.FileMetaData) -> tuple[int, ...]:
    """Row-group start offsets, ascending (Java's ``ParquetUtil.getSplitOffsets``)."""
    offsets = []
    for g in range(metadata.num_row_groups):
        col = metadata.row_group(g).column(0)
        start = col.data_page_offset
        if col.has_dictionary_page and col.dictionary_page_offset is not None:
            start = min(start, col.dictionary_page_offset)
        offsets.append(int(start))
    return tuple(sorted(offsets))


class ParquetFileWriter:
    """One Parquet file being written; tracks its size and rows.

    A failure opening, writing or closing the file deletes what was written of it (this file
    only: the caller deletes the files it finished) and raises ``FileIOError`` naming it (an
    ``IcebergError`` without a file gets this one): no partial file is left behind (spec:
    "File System Operations": tables delete the files they do not use)."""

    def __init__(self, io: FileIO, location: str, schema: pa.Schema,
                 options: ParquetWriteOptions) -> None:
        self.location = location
        self.rows = 0
        self._io = io
        self._sink: pa.NativeFile | None = None
        self._writer: pq.ParquetWriter | None = None
        with self._removed_on_failure():
            fs, path = io.resolve(location)
            if fs.type_name == "local":
                fs.create_dir(posixpath.dirname(path), recursive=True)
            self._sink = fs.open_output_stream(path, compression=None)
            self._writer = pq.ParquetWriter(
                self._sink, schema, version="2.6", compression=options.compression,
                compression_level=options.compression_level, use_dictionary=True,
                write_statistics=True, data_page_size=options.page_size,
                dictionary_pagesize_limit=options.dict_size,
                max_rows_per_page=options.page_row_limit, store_schema=False,
                store_decimal_as_integer=True, use_compliant_nested_type=True,
                data_page_version="1.0", write_page_checksum=True,
            )

    @contextlib.contextmanager
    def _removed_on_failure(self) -> Iterator[None]:
        try:
            yield
        except BaseException as exc:
            self.abort()
            if isinstance(exc, IcebergError):
                if exc.file is None:
                    raise exc.with_file(self.location) from exc
                raise
            if isinstance(exc, (OSError, pa.ArrowException)):
                raise FileIOError(f"writing a Parquet file failed: {exc}",
                                  file=self.location) from exc
            raise

    def position(self) -> int:
        assert self._sink is not None
        return int(self._sink.tell())

    def write(self, table: pa.Table) -> None:
        assert self._writer is not None
        with self._removed_on_failure():
            self._writer.write_table(table, row_group_size=max(1, table.num_rows))
        self.rows += table.num_rows

    def close(self) -> tuple[int, pq.FileMetaData]:
        """Finish the file: its size and footer."""
        assert self._writer is not None and self._sink is not None
        with self._removed_on_failure():
            self._writer.close()
            metadata = self._writer.writer.metadata
            size = self.position()
            self._sink.close()
        return size, metadata

    def abort(self) -> None:
        """Close quietly and delete the file (idempotent)."""
        writer, sink, self._writer, self._sink = self._writer, self._sink, None, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        if sink is not None:
            with contextlib.suppress(Exception):
                sink.close()
        with contextlib.suppress(IcebergError):
            self._io.delete(self.location, missing_ok=True)


def write_rolling(io: FileIO, table: pa.Table, options: ParquetWriteOptions,
                   new_location: Callable[[], str],
                   written: list[str]) -> list[tuple[str, int, int, pq.FileMetaData]]:
    """Write ``table`` to one or more files of about the target size; (location, first row,
    size, footer) per file. Row groups hold about ``row_group_size`` bytes of Arrow data."""
    rows = table.num_rows
    per_row_mem = max(1.0, table.nbytes / max(rows, 1))
    group_rows = max(1, int(options.row_group_size / per_row_mem))
    out = []
    start = 0
    while start < rows:
        location = new_location()
        written.append(location)
        writer = ParquetFileWriter(io, location, table.schema, options)
        first = start
        estimate = per_row_mem
        while start < rows:
            position = writer.position()
            if writer.rows:
                estimate = max(1.0, position / writer.rows)
            room = max(1, math.ceil((options.target_file_size - position) / estimate))
            chunk = min(group_rows, rows - start, room)
            writer.write(table.slice(start, chunk))
            start += chunk
            if writer.position() >= options.target_file_size:
                break
        size, metadata = writer.close()
        out.append((location, first, size, metadata))
    return out


# --------------------------------------------------------------------------- reading


def read_parquet_file(input_file: InputFile, *, field_ids: Collection[int] | None = None,
                      name_mapping: SchemaMapper | None = None) -> pa.Table:
    """The top-level columns of a Parquet data or delete file whose field ids are in
    ``field_ids`` (all when None), ids as ``PARQUET:field_id`` field metadata.

    ``name_mapping`` gives ids to a file written without them (spec: "Column Projection");
    malformed or truncated files raise :class:`~icenb.errors.CorruptFile` naming the file.
    """
    location = input_file.location
    mapped = False
    with input_file.open() as stream:
        try:
            # pages written with a CRC are verified: a torn or flipped page is a CorruptFile,
            # never data (issue 17); pages without one (other writers) read as before
            pf = pq.ParquetFile(stream, page_checksum_verification=True)
            arrow_schema = pf.schema_arrow
            if name_mapping is not None and not any(
                    arrow_field_id(f) is not None for f in arrow_schema):
                arrow_schema = name_mapping(arrow_schema)
                mapped = True
            columns = None
            if field_ids is not None:
                wanted = set(field_ids)
                columns = [f.name for f in arrow_schema if arrow_field_id(f) in wanted]
            table = pf.read(columns=columns)
        except IcebergError:
            raise
        except Exception as e:  # a damaged footer fails in many ways (ArrowInvalid, OSError,
            # UnicodeDecodeError of a column path...): each one is a damaged file
            raise CorruptFile(f"cannot read Parquet file: {type(e).__name__}: {e}",
                              file=location) from None
    if mapped:
        table = pa.Table.from_arrays(table.columns, schema=pa.schema(
            [arrow_schema.field(name) for name in table.column_names]))
    return table
