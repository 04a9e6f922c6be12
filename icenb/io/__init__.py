"""Bytes: files by location (local, object stores, HDFS) and the metadata files stored in them.

May import icenb.spec and icenb.errors, never a higher layer (DESIGN.md, Architecture).
"""

from __future__ import annotations

from icenb.io.avro import avro_file_metadata, read_avro, read_avro_tables
from icenb.io.file_io import (
    FileEntry,
    FileIO,
    FileIOError,
    InputFile,
    IOStats,
    OutputFile,
    join_location,
    parse_location,
)
from icenb.io.metadata_files import (
    find_current_metadata,
    load_table_metadata,
    load_view_metadata_file,
    read_metadata_json,
    write_metadata_file,
)

__all__ = [
    "FileEntry",
    "FileIO",
    "FileIOError",
    "IOStats",
    "InputFile",
    "OutputFile",
    "avro_file_metadata",
    "find_current_metadata",
    "join_location",
    "load_table_metadata",
    "load_view_metadata_file",
    "parse_location",
    "read_avro",
    "read_avro_tables",
    "read_metadata_json",
    "write_metadata_file",
]
