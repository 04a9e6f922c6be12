"""Iceberg data and delete files in Avro, read into Arrow with Iceberg field ids.

Iceberg writes Avro data files with its ids in the writer schema (spec Appendix A "Avro"):
``field-id`` on record fields, ``element-id`` on arrays, ``key-id``/``value-id`` on maps, and
maps with non-string keys as arrays of key/value records (``logicalType: map``); logical types
date, time-micros, timestamp-micros/nanos with ``adjust-to-utc``, decimal on fixed, uuid on
fixed(16). :mod:`icenb.io.avro` (the columnar decoder used for manifests) decodes all of them
into the Arrow types of Appendix A's Parquet mapping, ids as ``PARQUET:field_id``; this module
adds projection by field id and the name mapping for files written without ids.

Decision: the file is read whole into memory (Avro has no column chunks to seek to); columns
not selected are skipped while decoding without building Arrow data.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection

import pyarrow as pa

from icenb.errors import CorruptFile
from icenb.io.avro import FIELD_ID_KEY, avro_arrow_schema, avro_file_metadata, read_avro
from icenb.io.file_io import InputFile

__all__ = ["read_avro_file"]

#: A function giving ids to the fields of a file written without them (a name mapping).
SchemaMapper = Callable[[pa.Schema], pa.Schema]


def _top_level_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    return int(raw) if raw is not None else None


def read_avro_file(input_file: InputFile, *, field_ids: Collection[int] | None = None,
                   name_mapping: SchemaMapper | None = None) -> pa.Table:
    """The top-level columns of an Avro data or delete file whose field ids are in ``field_ids``
    (all when None), with ids as ``PARQUET:field_id`` field metadata.

    ``name_mapping`` gives ids to a file that has none (spec: "Column Projection"); malformed
    or truncated files raise :class:`~icenb.errors.CorruptFile` naming the file.
    """
    location = input_file.location
    data = input_file.read()
    meta = avro_file_metadata(location, data)
    raw_schema = meta.get("avro.schema")
    if raw_schema is None:
        raise CorruptFile("Avro header has no avro.schema", file=location)
    try:
        writer_schema = json.loads(raw_schema)
    except ValueError as e:
        raise CorruptFile(f"avro.schema is not valid JSON: {e}", file=location) from None
    schema = avro_arrow_schema(location, writer_schema)
    mapped = False
    if name_mapping is not None and all(_top_level_id(f) is None for f in schema):
        schema = name_mapping(schema)
        mapped = True
    names = schema.names
    if field_ids is not None:
        wanted = set(field_ids)
        names = [f.name for f in schema if _top_level_id(f) in wanted]
    table = read_avro(location, data, columns=names)
    if not mapped:
        return table
    selected = pa.schema([schema.field(name) for name in table.column_names])
    return pa.Table.from_arrays(table.columns, schema=selected)
