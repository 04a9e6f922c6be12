"""Write data files from Arrow: the batch writer (:func:`write_data_files`) and the streaming
writer Spark tasks use (:class:`RollingDataWriter`). Each conforms rows to the table schema
(:mod:`.conform`), partitions and sorts them (:mod:`.partitioning`), names files
(:mod:`.locations`), writes Parquet (:mod:`icenb.io.data_files.parquet`) and collects metrics
(:mod:`.metrics`). This is the code Spark executors run (pure pyarrow); the driver commits the
results.
"""

from __future__ import annotations

import contextlib
import math
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, ValidationError
from icenb.io.data_files.parquet import (
    ParquetFileWriter,
    ParquetWriteOptions,
    parquet_field,
    split_offsets_of,
    write_rolling,
    writer_table,
)
from icenb.io.file_io import FileIO
from icenb.progress import WRITING_ROWS, progress
from icenb.spec.manifest import DataFile, FileContent, FileFormat
from icenb.spec.metadata_columns import ROW_LINEAGE, lineage_columns
from icenb.spec.metrics_config import MetricsConfig
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.sort_order import UNSORTED, SortOrder
from icenb.spec.types import (
    UnknownType,
)
from icenb.table.write.conform import conform_to_schema
from icenb.table.write.locations import LocationProvider, data_file_name
from icenb.table.write.metrics import MetricsAccumulator, compute_metrics
from icenb.table.write.partitioning import partition_and_sort, sort_columns

__all__ = ["DEFAULT_WRITE_BUFFER_BYTES", "RollingDataWriter", "with_row_lineage",
           "write_data_files"]


def write_data_files(
    io: FileIO,
    data: pa.Table | pa.RecordBatch,
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    properties: Mapping[str, str],
    location_provider: LocationProvider,
    *,
    format_version: int,
    partition_id: int = 0,
    task_id: int = 0,
    operation_id: str | None = None,
) -> list[DataFile]:
    """Write ``data`` as Parquet data files of the table and describe each as a DataFile.

    Validates and casts (:func:`conform_to_schema`), checks the spec and sort order against the
    schema, partitions and sorts (:func:`partition_and_sort`), then writes each partition in
    files rolled at ``write.target-file-size-bytes``, named as Java's ``OutputFileFactory``
    (``partition_id`` is the Spark partition, ``task_id`` the attempt, ``operation_id`` one
    UUID per write) and placed by ``location_provider``. Nothing is written when validation
    fails; files already written are deleted when a later write fails.
    """
    if format_version not in (1, 2, 3, 4):  # 4: as 3 (EXPERIMENTAL)
        raise ValidationError("format version must be 1 to 4", field="format-version",
                              value=format_version)
    options = ParquetWriteOptions.from_properties(properties)
    spec.validate(schema)
    sort_order.validate(schema)
    data, schema = with_row_lineage(data, schema, format_version)
    config = MetricsConfig.from_properties(properties, schema, sort_order)
    conformed = conform_to_schema(data, schema, format_version=format_version)
    parts = partition_and_sort(conformed, schema, spec, sort_order)
    operation = operation_id or str(uuid.uuid4())
    counter = [0]

    def next_name() -> str:
        counter[0] += 1
        return data_file_name(partition_id, task_id, operation, counter[0])

    written: list[str] = []
    files: list[DataFile] = []
    try:
        with progress(WRITING_ROWS, total=conformed.num_rows) as task:
            for partition, part in parts:
                if part.num_rows == 0:
                    continue
                path = spec.partition_path(schema, partition) if spec.is_partitioned else None

                def new_location(p: str | None = path) -> str:
                    return location_provider.new_data_location(next_name(), p)

                to_write = writer_table(part, schema)
                for location, first, size, metadata in write_rolling(io, to_write, options,
                                                                      new_location, written):
                    rows = metadata.num_rows
                    metrics = compute_metrics(part.slice(first, rows), schema, config, metadata)
                    files.append(DataFile(
                        content=FileContent.DATA, file_path=location,
                        file_format=FileFormat.PARQUET, partition=partition, record_count=rows,
                        file_size_in_bytes=size, column_sizes=metrics.column_sizes,
                        value_counts=metrics.value_counts,
                        null_value_counts=metrics.null_value_counts,
                        nan_value_counts=metrics.nan_value_counts,
                        lower_bounds=metrics.lower_bounds, upper_bounds=metrics.upper_bounds,
                        split_offsets=split_offsets_of(metadata),
                        sort_order_id=sort_order.order_id, spec_id=spec.spec_id,
                    ))
                    task.advance(rows)
    except BaseException as exc:
        for location in written:
            with contextlib.suppress(IcebergError):
                io.delete(location, missing_ok=True)
        if isinstance(exc, (OSError, pa.ArrowException)) and not isinstance(exc, IcebergError):
            from icenb.errors import FileIOError

            raise FileIOError(f"writing a data file failed: {exc}",
                              file=written[-1] if written else None) from exc
        raise
    return files


def with_row_lineage(data: pa.Table | pa.RecordBatch, schema: Schema, format_version: int
                     ) -> tuple[pa.Table | pa.RecordBatch, Schema]:
    """The rows and the write schema for rows that may carry row lineage.

    Rows moved by a rewrite carry ``_row_id`` and ``_last_updated_sequence_number`` (v3 spec:
    "Row lineage assignment": the row id is copied, the sequence number copied when the row is
    unchanged and null when modified); such rows are written with both lineage fields after the
    table's columns, as Iceberg Java's writers do. Lineage columns that are null in every row
    are dropped: inheritance gives those values (a file of new rows omits them).
    """
    names = lineage_columns(data.schema.names, schema)
    if not names:
        return data, schema
    if format_version < 3:
        raise ValidationError("row lineage columns exist from format version 3 on (spec: Row "
                              "Lineage)", field=names[0], value=format_version)
    if all(data.column(n).null_count == data.num_rows for n in names):
        return data.drop_columns(names), schema
    return data, Schema(*schema.fields, *ROW_LINEAGE, schema_id=schema.schema_id,
                        identifier_field_ids=schema.identifier_field_ids)


# --------------------------------------------------------------------------- streaming writer

#: Arrow bytes a :class:`RollingDataWriter` may hold (row groups being filled, rows waiting to
#: be sorted) before it writes the largest buffer out.
DEFAULT_WRITE_BUFFER_BYTES = 256 * 1024 * 1024


def _writer_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of the Parquet files (as :func:`writer_table` makes the data)."""
    return pa.schema([parquet_field(f) for f in schema.fields
                      if not isinstance(f.field_type, UnknownType)])


class _OpenFile:
    """A data file of one partition being written: its row-group buffer and metrics so far."""

    def __init__(self, writer: ParquetFileWriter, partition: tuple[Any, ...], index: int,
                 metrics: MetricsAccumulator) -> None:
        self.writer = writer
        self.partition = partition
        self.index = index  # its place in the writer's result
        self.metrics = metrics
        self.buffer: list[pa.Table] = []
        self.buffered_bytes = 0
        self.buffered_rows = 0
        self.flushed_bytes = 0  # Arrow bytes already in the file

    def ratio(self) -> float:
        """File bytes per Arrow byte so far (1 before the first row group)."""
        if not self.flushed_bytes:
            return 1.0
        return max(self.writer.position(), 1) / self.flushed_bytes

    def estimated_size(self) -> float:
        return self.writer.position() + self.buffered_bytes * self.ratio()


class RollingDataWriter:
    """Streams Arrow batches into the table's data files: memory stays bounded by the buffer
    budget, whatever the number of rows.

    Each batch is conformed (:func:`conform_to_schema`) and split by partition. Rows go to one
    open Parquet file per partition (``fanout``, Java's ``write.spark.fanout.enabled``
    writer) or, with ``fanout=False``, to one open partition at a time (Java's clustered
    writer: rows must arrive grouped by partition, else :class:`ValidationError`). A file's
    rows are buffered as one row group (``write.parquet.row-group-size-bytes`` of Arrow data)
    and the file is closed at ``write.target-file-size-bytes`` (estimated from the bytes
    written so far) and the next one opened. When the buffers together exceed
    ``buffer_bytes`` the largest is written out early (a smaller row group).

    Sorted tables (spec: "Sorting"; a file's ``sort_order_id`` says its rows follow that
    order): rows are buffered per partition, and a partition's rows are sorted and written
    to files of their own when the budget is exceeded and at :meth:`close`; each file is
    sorted, files of one partition may overlap. Metrics are those :func:`write_data_files`
    records for the same rows of a file. A failure in :meth:`write` or :meth:`close` (bad
    input included) deletes every file written; :meth:`abort` does so on request.
    """

    def __init__(self, io: FileIO, schema: Schema, spec: PartitionSpec, sort_order: SortOrder,
                 properties: Mapping[str, str], location_provider: LocationProvider, *,
                 format_version: int, partition_id: int = 0, task_id: int = 0,
                 operation_id: str | None = None, fanout: bool = True,
                 buffer_bytes: int = DEFAULT_WRITE_BUFFER_BYTES) -> None:
        if format_version not in (1, 2, 3, 4):  # 4: as 3 (EXPERIMENTAL)
            raise ValidationError("format version must be 1 to 4", field="format-version",
                                  value=format_version)
        self._options = ParquetWriteOptions.from_properties(properties)
        spec.validate(schema)
        sort_order.validate(schema)
        self._io = io
        self._schema = schema
        self._spec = spec
        self._sort_order = sort_order
        self._config = MetricsConfig.from_properties(properties, schema, sort_order)
        self._locations = location_provider
        self._format_version = format_version
        self._partition_id = partition_id
        self._task_id = task_id
        self._operation = operation_id or str(uuid.uuid4())
        self._fanout = fanout
        self._budget = max(1, buffer_bytes)
        self._arrow_schema = _writer_schema(schema)
        self._open: dict[tuple[Any, ...], _OpenFile] = {}
        self._sort_buffers: dict[tuple[Any, ...], list[pa.Table]] = {}
        self._sort_bytes: dict[tuple[Any, ...], int] = {}
        self._finished: set[tuple[Any, ...]] = set()  # clustered: partitions already done
        self._current: tuple[Any, ...] | None = None
        self._files: list[DataFile | None] = []
        self._written: list[str] = []
        self._count = 0
        self._done = False

    # ---------------------------------------------------------------- public

    @property
    def written(self) -> tuple[str, ...]:
        """Locations of every file written so far (open or closed)."""
        return tuple(self._written)

    def write(self, data: pa.Table | pa.RecordBatch) -> None:
        """Add rows; on any error every file written is deleted and the error raised."""
        self._check_open()
        with self._aborting():
            conformed = conform_to_schema(data, self._schema,
                                          format_version=self._format_version)
            if conformed.num_rows == 0:
                return
            for partition, part in partition_and_sort(conformed, self._schema, self._spec,
                                                      UNSORTED):
                if part.num_rows:
                    self._route(partition, part)

    def close(self) -> list[DataFile]:
        """Write what is buffered, close every file; the DataFiles in the order opened."""
        self._check_open()
        with self._aborting():
            for partition in list(self._sort_buffers):
                self._flush_sorted(partition)
            for partition in list(self._open):
                self._close_file(partition)
        self._done = True
        return [f for f in self._files if f is not None]

    def abort(self) -> None:
        """Close quietly and delete every file written (idempotent)."""
        self._done = True
        for open_file in self._open.values():
            open_file.writer.abort()
        self._open.clear()
        self._sort_buffers.clear()
        self._sort_bytes.clear()
        for location in self._written:
            with contextlib.suppress(IcebergError):
                self._io.delete(location, missing_ok=True)

    def __enter__(self) -> RollingDataWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()

    # ---------------------------------------------------------------- internals

    def _check_open(self) -> None:
        if self._done:
            raise ValidationError("the writer is closed", field="writer")

    @contextlib.contextmanager
    def _aborting(self) -> Iterator[None]:
        try:
            yield
        except BaseException as exc:
            last = self._written[-1] if self._written else None
            self.abort()
            if isinstance(exc, (OSError, pa.ArrowException)) and not isinstance(
                    exc, IcebergError):
                from icenb.errors import FileIOError

                raise FileIOError(f"writing a data file failed: {exc}", file=last) from exc
            raise

    def _route(self, partition: tuple[Any, ...], part: pa.Table) -> None:
        if not self._fanout and partition != self._current:
            if partition in self._finished:
                raise ValidationError(
                    "rows are not clustered by partition (a partition came back after "
                    "another one): use a fanout writer or sort the input by partition",
                    field="partition", value=partition)
            if self._current is not None:
                self._finish_partition(self._current)
            self._current = partition
        if self._sort_order.is_sorted:
            self._sort_buffers.setdefault(partition, []).append(part)
            self._sort_bytes[partition] = self._sort_bytes.get(partition, 0) + part.nbytes
        else:
            self._append(partition, part)
        self._enforce_budget()

    def _finish_partition(self, partition: tuple[Any, ...]) -> None:
        self._finished.add(partition)
        if partition in self._sort_buffers:
            self._flush_sorted(partition)
        if partition in self._open:
            self._close_file(partition)

    def _buffered(self) -> int:
        return (sum(self._sort_bytes.values())
                + sum(f.buffered_bytes for f in self._open.values()))

    def _enforce_budget(self) -> None:
        while self._buffered() > self._budget:
            largest_sort = max(self._sort_bytes.items(), key=lambda kv: kv[1], default=None)
            largest_file = max(self._open.values(), key=lambda f: f.buffered_bytes,
                               default=None)
            if largest_sort is not None and (largest_file is None
                                             or largest_sort[1] >= largest_file.buffered_bytes):
                self._flush_sorted(largest_sort[0])
            elif largest_file is not None and largest_file.buffered_bytes:
                self._flush(largest_file)
                if largest_file.estimated_size() >= self._options.target_file_size:
                    self._close_file(largest_file.partition)
            else:
                return

    def _flush_sorted(self, partition: tuple[Any, ...]) -> None:
        """Sort a partition's buffered rows and write them to files of their own."""
        parts = self._sort_buffers.pop(partition, [])
        self._sort_bytes.pop(partition, None)
        if not parts:
            return
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        del parts
        columns, keys = sort_columns(table, self._schema, self._sort_order)
        order = pc.sort_indices(pa.table(columns), sort_keys=keys)
        table = table.take(order)
        self._append(partition, table)
        if partition in self._open:
            self._close_file(partition)

    def _append(self, partition: tuple[Any, ...], part: pa.Table) -> None:
        """Add rows to the partition's open file(s), writing row groups and rolling files."""
        options = self._options
        start, rows = 0, part.num_rows
        per_row = max(1.0, part.nbytes / max(rows, 1))
        while start < rows:
            open_file = self._open.get(partition) or self._open_file(partition)
            room = (options.target_file_size - open_file.estimated_size()) / (
                per_row * open_file.ratio())
            group_room = (options.row_group_size - open_file.buffered_bytes) / per_row
            take = min(rows - start, max(1, math.ceil(min(room, group_room))))
            chunk = part.slice(start, take)
            start += take
            open_file.buffer.append(chunk)
            open_file.buffered_bytes += chunk.nbytes
            open_file.buffered_rows += take
            open_file.metrics.add(chunk)
            if open_file.buffered_bytes >= options.row_group_size:
                self._flush(open_file)
            if open_file.estimated_size() >= options.target_file_size:
                self._close_file(partition)

    def _open_file(self, partition: tuple[Any, ...]) -> _OpenFile:
        self._count += 1
        name = data_file_name(self._partition_id, self._task_id, self._operation, self._count)
        path = (self._spec.partition_path(self._schema, partition) if self._spec.is_partitioned
                else None)
        location = self._locations.new_data_location(name, path)
        self._written.append(location)
        writer = ParquetFileWriter(self._io, location, self._arrow_schema, self._options)
        open_file = _OpenFile(writer, partition, len(self._files),
                              MetricsAccumulator(self._schema, self._config))
        self._files.append(None)
        self._open[partition] = open_file
        return open_file

    def _flush(self, open_file: _OpenFile) -> None:
        """Write the file's buffered rows as one row group."""
        if not open_file.buffer:
            return
        parts = open_file.buffer
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        open_file.buffer = []
        open_file.writer.write(writer_table(table, self._schema))
        open_file.flushed_bytes += open_file.buffered_bytes
        open_file.buffered_bytes = 0
        open_file.buffered_rows = 0

    def _close_file(self, partition: tuple[Any, ...]) -> None:
        open_file = self._open.pop(partition)
        self._flush(open_file)
        size, metadata = open_file.writer.close()
        metrics = open_file.metrics.finish(metadata)
        self._files[open_file.index] = DataFile(
            content=FileContent.DATA, file_path=open_file.writer.location,
            file_format=FileFormat.PARQUET, partition=partition,
            record_count=metadata.num_rows, file_size_in_bytes=size,
            column_sizes=metrics.column_sizes, value_counts=metrics.value_counts,
            null_value_counts=metrics.null_value_counts,
            nan_value_counts=metrics.nan_value_counts, lower_bounds=metrics.lower_bounds,
            upper_bounds=metrics.upper_bounds, split_offsets=split_offsets_of(metadata),
            sort_order_id=self._sort_order.order_id, spec_id=self._spec.spec_id)

