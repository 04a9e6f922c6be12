"""Write row-level delete files: position deletes (v2), deletion vectors (v3), equality deletes.

Spec sections: "Row-level Deletes", "Position Delete Files", "Deletion Vectors", "Equality Delete
Files", Puffin spec ("deletion-vector-v1"). Layout follows Iceberg Java 1.10:

* file names are ``OutputFileFactory``'s with the ``deletes`` suffix
  (``00000-0-<operation>-00001-deletes.parquet`` / ``.puffin``); Parquet delete files go to the
  partition directory of the data files they delete from, a Puffin file of DVs to the data root;
* a position delete file holds ``file_path`` (id 2147483546) and ``pos`` (2147483545), sorted by
  path then position, one set of files per partition (spec id + tuple) of the data files, rolled
  at ``write.delete.target-file-size-bytes`` (64 MiB); its metrics are Java's
  ``PositionDeleteWriter``'s: column sizes, no value/null/NaN counts, and bounds only when the
  file references a single data file (then the ``file_path`` bounds equal that path, which makes
  the file "file-scoped" for readers; Java 1.10 leaves ``referenced_data_file`` unset there and so
  do we);
* deletion vectors: one Puffin file per operation, one ``deletion-vector-v1`` blob per data file
  (uncompressed, snapshot id and sequence number -1, properties ``referenced-data-file`` and
  ``cardinality``; file property ``created-by``), as Java's ``BaseDVFileWriter``; each DV is a
  POSITION_DELETES entry with format PUFFIN, ``record_count`` = cardinality, the blob's
  ``content_offset``/``content_size_in_bytes`` and the data file's partition and spec;
* equality delete files hold the equality columns only (their field ids), with the table's
  metrics config, one set of files per partition of each given spec.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import FileIOError, IcebergError, UnsupportedFeature, ValidationError
from icenb.io.data_files.parquet import ParquetWriteOptions, split_offsets_of, write_rolling
from icenb.io.file_io import FileIO
from icenb.io.puffin import CREATED_BY, build_puffin, deletion_vector_blob, read_deletion_vector
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.manifest import DataFile, FileContent, FileFormat
from icenb.spec.metadata_columns import DELETE_FILE_PATH, DELETE_FILE_POS
from icenb.spec.metrics_config import MetricsConfig, parse_metrics_mode
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import (
    DEFAULT_FILE_FORMAT,
    DELETE_FORMAT_DEFAULT,
    DELETE_PARQUET_PREFIX,
    DELETE_TARGET_FILE_SIZE_BYTES,
    PARQUET_PREFIX,
    WRITE_TARGET_FILE_SIZE_BYTES,
)
from icenb.spec.schema import Schema
from icenb.spec.sort_order import UNSORTED
from icenb.spec.types import DoubleType, FloatType, NestedField, PrimitiveType
from icenb.table.write.conform import conform_to_schema
from icenb.table.write.locations import LocationProvider
from icenb.table.write.metrics import compute_metrics
from icenb.table.write.partitioning import partition_and_sort

__all__ = [
    "DELETE_TARGET_FILE_SIZE",
    "POSITION_DELETE_SCHEMA",
    "equality_fields",
    "is_file_scoped",
    "load_positions",
    "write_deletion_vectors",
    "write_equality_deletes",
    "write_position_deletes",
]

#: Java's ``write.delete.target-file-size-bytes`` default.
DELETE_TARGET_FILE_SIZE = 64 * 1024 * 1024
_DELETE_TARGET_PROPERTY = DELETE_TARGET_FILE_SIZE_BYTES
_DELETE_FORMAT_PROPERTY = DELETE_FORMAT_DEFAULT
_DELETE_PARQUET_PREFIX = DELETE_PARQUET_PREFIX
_SUFFIX = "deletes"

#: The schema of a position delete file (spec: "Position Delete Files"), both columns required.
POSITION_DELETE_SCHEMA = Schema(
    NestedField(DELETE_FILE_PATH.field_id, DELETE_FILE_PATH.name, DELETE_FILE_PATH.field_type,
                True, DELETE_FILE_PATH.doc),
    NestedField(DELETE_FILE_POS.field_id, DELETE_FILE_POS.name, DELETE_FILE_POS.field_type,
                True, DELETE_FILE_POS.doc),
)
_FULL = MetricsConfig({}, parse_metrics_mode("full"))
_PATH_POS_IDS = (DELETE_FILE_PATH.field_id, DELETE_FILE_POS.field_id)


def _created_by() -> str:
    from icenb._version import __version__

    return f"icenb {__version__}"


def _delete_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """Table properties as seen by a delete writer: ``write.delete.parquet.*`` override
    ``write.parquet.*`` and the delete target size replaces the data one (Java's
    ``TableProperties.DELETE_*``)."""
    out = dict(properties)
    fmt = properties.get(_DELETE_FORMAT_PROPERTY)
    if fmt is not None:
        out[DEFAULT_FILE_FORMAT] = fmt
    for key, value in properties.items():
        if key.startswith(_DELETE_PARQUET_PREFIX):
            out[PARQUET_PREFIX + key[len(_DELETE_PARQUET_PREFIX):]] = value
    out[WRITE_TARGET_FILE_SIZE_BYTES] = properties.get(_DELETE_TARGET_PROPERTY,
                                                         str(DELETE_TARGET_FILE_SIZE))
    return out


class _Names:
    """``OutputFileFactory`` names with the ``deletes`` suffix; the count starts at 1."""

    def __init__(self, operation_id: str | None, partition_id: int, task_id: int) -> None:
        self.operation = operation_id or str(uuid.uuid4())
        self.partition_id = partition_id
        self.task_id = task_id
        self.count = 0

    def next(self, extension: str) -> str:
        self.count += 1
        return (f"{self.partition_id:05d}-{self.task_id}-{self.operation}-{self.count:05d}-"
                f"{_SUFFIX}.{extension}")


def _delete_written(io: FileIO, written: Iterable[str]) -> None:
    for location in written:
        with contextlib.suppress(IcebergError):
            io.delete(location, missing_ok=True)


def _as_write_error(exc: BaseException, written: list[str]) -> BaseException:
    if isinstance(exc, (OSError, pa.ArrowException)) and not isinstance(exc, IcebergError):
        return FileIOError(f"writing a delete file failed: {exc}",
                           file=written[-1] if written else None)
    return exc


def _positions(values: npt.ArrayLike | DeletionVector) -> npt.NDArray[np.int64]:
    if isinstance(values, DeletionVector):
        return values.to_numpy()
    arr = np.unique(np.asarray(values, dtype=np.int64).reshape(-1))
    if arr.size and int(arr[0]) < 0:
        raise ValidationError("row positions must not be negative", field="pos",
                              value=int(arr[0]))
    return arr


def _spec_of(specs: Mapping[int, PartitionSpec], f: DataFile) -> PartitionSpec:
    spec = specs.get(f.spec_id)
    if spec is None:
        raise ValidationError("the data file's partition spec is not in the table",
                              file=f.file_path, field="spec_id", value=f.spec_id)
    return spec


# --------------------------------------------------------------------------- position deletes


def write_position_deletes(
    io: FileIO,
    deletes: Iterable[tuple[DataFile, npt.ArrayLike | DeletionVector]],
    *,
    specs: Mapping[int, PartitionSpec],
    schema: Schema,
    properties: Mapping[str, str],
    location_provider: LocationProvider,
    operation_id: str | None = None,
    partition_id: int = 0,
    task_id: int = 0,
) -> list[DataFile]:
    """Write Parquet position delete files for (data file, row positions) pairs (spec:
    "Position Delete Files"); one DataFile each, POSITION_DELETES, in the data files' partition.

    Files of one partition hold their rows sorted by ``file_path`` then ``pos``; metrics are
    Java's (see the module docstring). Files already written are deleted when a write fails.
    """
    options = ParquetWriteOptions.from_properties(_delete_properties(properties))
    groups: dict[tuple[int, tuple[Any, ...]], dict[str, npt.NDArray[np.int64]]] = {}
    for data_file, positions in deletes:
        pos = _positions(positions)
        if not pos.size:
            continue
        _spec_of(specs, data_file)
        by_path = groups.setdefault((data_file.spec_id, data_file.partition), {})
        previous = by_path.get(data_file.file_path)
        by_path[data_file.file_path] = pos if previous is None else np.union1d(previous, pos)
    names = _Names(operation_id, partition_id, task_id)
    arrow_schema = _arrow_schema(POSITION_DELETE_SCHEMA)
    written: list[str] = []
    out: list[DataFile] = []
    try:
        for (spec_id, partition), by_path in groups.items():
            spec = specs[spec_id]
            part_path = spec.partition_path(schema, partition) if spec.is_partitioned else None
            paths = sorted(by_path)  # Java orders path strings by UTF-16 units; ASCII agrees
            table = pa.Table.from_arrays(
                [pa.array(np.repeat(np.array(paths, dtype=object),
                                    [len(by_path[p]) for p in paths]), pa.string()),
                 pa.array(np.concatenate([by_path[p] for p in paths]), pa.int64())],
                schema=arrow_schema)

            def new_location(p: str | None = part_path) -> str:
                return location_provider.new_data_location(names.next("parquet"), p)

            for location, first, size, footer in write_rolling(io, table, options,
                                                                new_location, written):
                rows = footer.num_rows
                part = table.slice(first, rows)
                metrics = compute_metrics(part, POSITION_DELETE_SCHEMA, _FULL, footer)
                single = pc.count_distinct(part.column(0)).as_py() == 1
                lower = dict(metrics.lower_bounds) if single else {}
                upper = dict(metrics.upper_bounds) if single else {}
                out.append(DataFile(
                    content=FileContent.POSITION_DELETES, file_path=location,
                    file_format=FileFormat.PARQUET, partition=partition, record_count=rows,
                    file_size_in_bytes=size, column_sizes=metrics.column_sizes,
                    lower_bounds=lower or None, upper_bounds=upper or None,
                    split_offsets=split_offsets_of(footer), spec_id=spec_id))
    except BaseException as exc:
        _delete_written(io, written)
        raise _as_write_error(exc, written) from exc
    return out


def _arrow_schema(schema: Schema) -> pa.Schema:
    from icenb.spec.arrow_schema import to_arrow_schema

    return to_arrow_schema(schema)


# --------------------------------------------------------------------------- deletion vectors


def write_deletion_vectors(
    io: FileIO,
    deletes: Iterable[tuple[DataFile, npt.ArrayLike | DeletionVector]],
    *,
    location_provider: LocationProvider,
    operation_id: str | None = None,
    partition_id: int = 0,
    task_id: int = 0,
    created_by: str | None = None,
) -> list[DataFile]:
    """Write one Puffin file with a deletion vector per data file (spec: "Deletion Vectors");
    one DV DataFile per data file, in input order (positions of a data file given twice are
    merged: a data file has at most one DV). No positions: nothing written, ``[]``."""
    merged: dict[str, tuple[DataFile, npt.NDArray[np.int64]]] = {}
    for data_file, positions in deletes:
        pos = _positions(positions)
        previous = merged.get(data_file.file_path)
        if previous is not None:
            pos = np.union1d(previous[1], pos)
        merged[data_file.file_path] = (data_file, pos)
    items = [(f, DeletionVector.from_positions(p)) for f, p in merged.values() if p.size]
    if not items:
        return []
    blobs = [deletion_vector_blob(dv, f.file_path) for f, dv in items]
    puffin = build_puffin(blobs, {CREATED_BY: created_by or _created_by()})
    names = _Names(operation_id, partition_id, task_id)
    location = location_provider.new_data_location(names.next("puffin"), None)
    try:
        io.new_output(location).create(puffin.data)
    except BaseException as exc:
        _delete_written(io, [location])
        raise _as_write_error(exc, [location]) from exc
    return [
        DataFile(content=FileContent.POSITION_DELETES, file_path=location,
                 file_format=FileFormat.PUFFIN, partition=f.partition,
                 record_count=dv.cardinality, file_size_in_bytes=puffin.file_size,
                 referenced_data_file=f.file_path, content_offset=meta.offset,
                 content_size_in_bytes=meta.length, spec_id=f.spec_id)
        for (f, dv), meta in zip(items, puffin.file_metadata.blobs, strict=True)
    ]


def is_file_scoped(delete: DataFile) -> bool:
    """Whether a position delete file applies to one data file only
    (:attr:`~icenb.spec.manifest.DataFile.is_file_scoped`)."""
    return delete.content == FileContent.POSITION_DELETES and delete.is_file_scoped


def load_positions(io: FileIO, delete: DataFile, data_file_path: str) -> npt.NDArray[np.int64]:
    """The positions a position delete file or DV deletes from ``data_file_path``."""
    if delete.is_deletion_vector:
        if delete.content_offset is None or delete.content_size_in_bytes is None:
            raise ValidationError("a deletion vector entry has no content offset or size",
                                  file=delete.file_path, field="content_offset")
        if delete.referenced_data_file not in (None, data_file_path):
            return np.zeros(0, dtype=np.int64)
        return read_deletion_vector(io.new_input(delete.file_path), delete.content_offset,
                                    delete.content_size_in_bytes,
                                    cardinality=delete.record_count,
                                    file=delete.file_path).to_numpy()
    from icenb.table.scan.read import read_data_file

    rows = read_data_file(io, delete, POSITION_DELETE_SCHEMA)
    mine = pc.fill_null(pc.equal(rows.column(0), pa.scalar(data_file_path)), False)
    return np.asarray(rows.column(1).filter(mine).to_numpy(), dtype=np.int64)


# --------------------------------------------------------------------------- equality deletes


def equality_fields(schema: Schema, names: Sequence[str]) -> list[NestedField]:
    """The equality fields named ``names``: existing, distinct, top-level primitive columns that
    are not float/double (spec: "Equality Delete Files"; nested keys are not supported here)."""
    if isinstance(names, str):
        names = [names]
    if not names:
        raise ValidationError("give at least one key column", field="on", value=list(names))
    out: list[NestedField] = []
    for name in names:
        f = schema.field_by_name(name) if isinstance(name, str) else None
        if f is None:
            raise ValidationError("key column is not in the table schema", field="on",
                                  value=name)
        if f.field_id in {g.field_id for g in out}:
            raise ValidationError("key column given twice", field="on", value=name)
        if schema.parent_id(f.field_id) is not None:
            raise UnsupportedFeature("nested key columns are not supported", field="on",
                                     value=name)
        if not isinstance(f.field_type, PrimitiveType):
            raise ValidationError("equality fields must be primitive columns (spec: Equality "
                                  "Delete Files)", field=name, value=str(f.field_type))
        if isinstance(f.field_type, (FloatType, DoubleType)):
            raise ValidationError("equality fields must not be float or double columns (spec: "
                                  "Equality Delete Files)", field=name,
                                  value=str(f.field_type))
        out.append(f)
    return out


def check_equality_partitioning(spec: PartitionSpec, schema: Schema,
                                fields: Sequence[NestedField]) -> None:
    """Rows of a partitioned spec can be deleted by key only when the key holds every partition
    source column (the delete's partition is the key's; spec: "Scan Planning")."""
    ids = {f.field_id for f in fields}
    for pf in spec.fields:
        if not pf.is_void and pf.source_id not in ids:
            raise ValidationError(
                f"the table is partitioned by {pf.name!r} (spec {spec.spec_id}), whose source "
                f"column {schema.column_name(pf.source_id)!r} is not a key column: add it to "
                "`on` (or delete by filter)", field="on",
                value=[f.name for f in fields])


def write_equality_deletes(
    io: FileIO,
    keys: pa.Table,
    *,
    schema: Schema,
    fields: Sequence[NestedField],
    specs: Sequence[PartitionSpec],
    properties: Mapping[str, str],
    location_provider: LocationProvider,
    format_version: int,
    operation_id: str | None = None,
    partition_id: int = 0,
    task_id: int = 0,
) -> list[DataFile]:
    """Write equality delete files of ``keys`` (columns named as ``fields``) for the data of
    each spec in ``specs`` (each key goes to its partition of that spec); one DataFile each,
    EQUALITY_DELETES with ``equality_ids``. Spec: "Equality Delete Files"."""
    if format_version < 2:
        raise ValidationError("v1 tables have no row-level deletes", field="format-version",
                              value=format_version)
    key_schema = Schema(*fields, schema_id=schema.schema_id)
    for spec in specs:
        check_equality_partitioning(spec, schema, fields)
    conformed = conform_to_schema(keys, key_schema, format_version=format_version)
    if conformed.num_rows == 0:
        return []
    props = _delete_properties(properties)
    options = ParquetWriteOptions.from_properties(props)
    config = MetricsConfig.from_properties(properties, key_schema)
    ids = tuple(f.field_id for f in fields)
    names = _Names(operation_id, partition_id, task_id)
    from icenb.io.data_files.parquet import writer_table

    written: list[str] = []
    out: list[DataFile] = []
    try:
        for spec in specs:
            for partition, part in partition_and_sort(conformed, key_schema, spec, UNSORTED):
                if part.num_rows == 0:
                    continue
                part_path = (spec.partition_path(schema, partition) if spec.is_partitioned
                             else None)

                def new_location(p: str | None = part_path) -> str:
                    return location_provider.new_data_location(names.next("parquet"), p)

                to_write = writer_table(part, key_schema)
                for location, first, size, footer in write_rolling(io, to_write, options,
                                                                    new_location, written):
                    rows = footer.num_rows
                    metrics = compute_metrics(part.slice(first, rows), key_schema, config,
                                              footer)
                    out.append(DataFile(
                        content=FileContent.EQUALITY_DELETES, file_path=location,
                        file_format=FileFormat.PARQUET, partition=partition,
                        record_count=rows, file_size_in_bytes=size,
                        column_sizes=metrics.column_sizes, value_counts=metrics.value_counts,
                        null_value_counts=metrics.null_value_counts,
                        nan_value_counts=metrics.nan_value_counts,
                        lower_bounds=metrics.lower_bounds, upper_bounds=metrics.upper_bounds,
                        split_offsets=split_offsets_of(footer), equality_ids=ids,
                        spec_id=spec.spec_id))
    except BaseException as exc:
        _delete_written(io, written)
        raise _as_write_error(exc, written) from exc
    return out

