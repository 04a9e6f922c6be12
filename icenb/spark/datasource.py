"""The ``icenb`` Spark data source (read side): planned file scan tasks, read on executors.

``spark.read.format("icenb").option("snapshot-id", sid).load(location)``, where ``location`` is
anything :func:`icenb.open` accepts (a table directory or a metadata file). Options, named as in
Iceberg's Spark integration where it has them:

- ``snapshot-id``, ``branch``, ``tag``, ``as-of-timestamp`` (epoch ms): which state to read (at
  most one; default the current snapshot of ``main``). Schema as the reference implementation:
  a snapshot id, a tag or a time reads with that snapshot's schema, a branch with the table's.
- ``filter``: an icenb filter (``"id > 5 and kind = 'x'"``), used to prune manifests and files
  and applied to the rows (spec: "Scan Planning").
- ``columns``: the columns to read, comma separated or a JSON list (dotted names select nested
  fields); ``case-sensitive`` (default true) for both.
- ``relocate`` (default false): read a table copied or moved since it was written from where
  its metadata file is now (as ``icenb.open(location, relocate=True)``).
- ``split-size`` / ``file-open-cost`` (bytes; defaults: the table's ``read.split.target-size``,
  128 MiB, and ``read.split.open-file-cost``, 4 MiB): how tasks are packed into Spark partitions.
- Any other option (``s3.endpoint``, ``s3.region``, ...) configures the FileIO.

Flow: ``schema()`` (at ``load()``) opens the table, resolves the snapshot and schema and pins
them, so the DataFrame's schema and rows come from the same metadata file. ``partitions()`` runs
in Spark's planner on the driver: it plans the scan (spec: "Scan Planning") and bin-packs the
file scan tasks (each file whole, at least one task per partition, by data + delete file
bytes). Each partition carries everything an executor needs - the pickled tasks, the FileIO, the
projected schema and the name mapping - and ``read()`` on the executor runs icenb's task reader
and yields Arrow batches typed for the Spark schema (:mod:`icenb.spark.spark_types`).

Errors: failures to open, resolve or plan raise icenb errors in Spark's planner; Spark reports
them as an ``AnalysisException`` (``PYTHON_DATA_SOURCE_ERROR``) whose message ends with the
icenb error (its class, message, file and field). Spark's ``where()`` filters are not pushed
into planning: Spark 4.1's ``DataSourceReader.pushFilters`` works only where the session sets
``spark.sql.python.filterPushdown.enabled`` (off by default; a reader defining it fails on other
sessions), so icenb prunes with its own ``filter`` option (and :meth:`Scan.filter`).
"""

from __future__ import annotations

import base64
import json
import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from icenb.errors import IcebergError, NoSuchSnapshot, UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata
from icenb.spark.spark_types import spark_schema, to_spark_arrow
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysTrue, Expression
from icenb.spec.manifest import FileScanTask
from icenb.spec.schema import Schema
from icenb.spec.snapshot import MAIN_BRANCH
from icenb.spec.table_metadata import TableMetadata
from icenb.table.scan import Scan
from icenb.table.table import open_table
from icenb.table.task_reader import NameMapping, read_task

__all__ = ["DATA_SOURCE_NAME", "IcenbDataSource", "IcenbReader", "ScanPartition",
           "read_options", "scan_partitions"]

#: The name of the data source: ``spark.read.format("icenb")``.
DATA_SOURCE_NAME = "icenb"

SNAPSHOT_ID = "snapshot-id"
BRANCH = "branch"
TAG = "tag"
AS_OF_TIMESTAMP = "as-of-timestamp"
FILTER = "filter"
COLUMNS = "columns"
CASE_SENSITIVE = "case-sensitive"
SPLIT_SIZE = "split-size"
FILE_OPEN_COST = "file-open-cost"
RELOCATE = "relocate"
# Set by Scan.to_spark: the schema the scan resolves names with (a branch read keeps the
# table's schema), and the row filter or metadata when they have no text form.
_SCHEMA_ID = "icenb.schema-id"
_FILTER_PICKLE = "icenb.filter-pickle"
_METADATA_PICKLE = "icenb.metadata-pickle"
_RELOCATIONS = "icenb.relocations"  # the FileIO's relocations (JSON), from Scan.to_spark
_READ_OPTIONS = frozenset({"path", "paths", SNAPSHOT_ID, BRANCH, TAG, AS_OF_TIMESTAMP, FILTER,
                           COLUMNS, CASE_SENSITIVE, SPLIT_SIZE, FILE_OPEN_COST, RELOCATE,
                           _SCHEMA_ID, _FILTER_PICKLE, _METADATA_PICKLE, _RELOCATIONS})

#: Table properties and defaults for packing tasks (as Iceberg's ``read.split.*``).
SPLIT_SIZE_PROPERTY = "read.split.target-size"
OPEN_FILE_COST_PROPERTY = "read.split.open-file-cost"
DEFAULT_SPLIT_SIZE = 128 * 1024 * 1024
DEFAULT_OPEN_FILE_COST = 4 * 1024 * 1024
#: Rows per Arrow batch handed to Spark.
BATCH_ROWS = 65_536


def _encode(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def _decode(text: str, option: str) -> Any:
    try:
        return pickle.loads(base64.b64decode(text))
    except Exception:
        raise ValidationError("not a value written by icenb", field=option) from None


def _int_option(options: Mapping[str, str], name: str) -> int | None:
    raw = options.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValidationError("not an integer", field=name, value=raw) from None


def _bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        raise ValidationError("not true or false", field=name, value=raw)
    return text == "true"


def _columns_option(raw: str | None) -> tuple[str, ...] | None:
    """``columns``: a JSON list of names, or names separated by commas."""
    if raw is None:
        return None
    text = raw.strip()
    if text.startswith("["):
        try:
            names = json.loads(text)
        except ValueError:
            raise ValidationError("not a JSON list of column names", field=COLUMNS,
                                  value=raw) from None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValidationError("not a JSON list of column names", field=COLUMNS, value=raw)
        return tuple(names)
    return tuple(n.strip() for n in text.split(",") if n.strip())


# --------------------------------------------------------------------------- read state


@dataclass(frozen=True)
class _ReadState:
    """What a read resolved at ``load()``: the metadata file, snapshot, schema and filter."""

    metadata_location: str | None
    metadata: TableMetadata | None  # only when the metadata has no file
    io: FileIO
    snapshot_id: int | None
    schema_id: int
    row_filter: Expression
    columns: tuple[str, ...] | None
    case_sensitive: bool
    read_schema: Schema
    split_size: int | None
    file_open_cost: int | None

    def scan(self) -> Scan:
        """The scan this state stands for (reloads the pinned metadata file)."""
        md = self.metadata
        if md is None:
            assert self.metadata_location is not None
            md = load_table_metadata(self.metadata_location, self.io)
        schema = md.schema_by_id(self.schema_id)
        if schema is None:
            raise ValidationError("no schema with this id in the table metadata",
                                  file=md.source_file, field="schema-id", value=self.schema_id)
        return Scan(self.io, md, self.snapshot_id, schema, row_filter=self.row_filter,
                    columns=self.columns, case_sensitive=self.case_sensitive)


def _resolve(options: Mapping[str, str]) -> _ReadState:
    """Open the table and pick the snapshot, schema, filter and columns the options ask for."""
    io_properties = {k: str(v) for k, v in options.items() if k not in _READ_OPTIONS}
    relocations = json.loads(options[_RELOCATIONS]) if options.get(_RELOCATIONS) else None
    io = FileIO(io_properties, relocations=relocations)
    pickled = options.get(_METADATA_PICKLE)
    if pickled is not None:
        md: TableMetadata = _decode(pickled, _METADATA_PICKLE)
        location = None
    else:
        location = options.get("path")
        if not location:
            raise ValidationError("give the table location: spark.read.format('icenb')"
                                  ".load(location)", field="path")
        table = open_table(location, io=io, relocate=_bool_option(options, RELOCATE, False))
        md, io = table.metadata, table.io
        location = md.source_file
    choices = {k: options[k] for k in (SNAPSHOT_ID, BRANCH, TAG, AS_OF_TIMESTAMP)
               if options.get(k) not in (None, "")}
    if len(choices) > 1:
        raise ValidationError(f"give at most one of {', '.join(choices)}",
                              field=" / ".join(choices), value=tuple(choices.values()))
    snapshot_id, schema = _pick_state(md, options)
    schema_id = _int_option(options, _SCHEMA_ID)
    if schema_id is not None:
        chosen = md.schema_by_id(schema_id)
        if chosen is None:
            raise ValidationError("no schema with this id in the table metadata",
                                  file=md.source_file, field=_SCHEMA_ID, value=schema_id)
        schema = chosen
    row_filter: Expression = AlwaysTrue()
    if options.get(_FILTER_PICKLE) is not None:
        row_filter = _decode(options[_FILTER_PICKLE], _FILTER_PICKLE)
    elif options.get(FILTER):
        row_filter = parse(options[FILTER])
    case_sensitive = _bool_option(options, CASE_SENSITIVE, True)
    scan = Scan(io, md, snapshot_id, schema, row_filter=row_filter,
                columns=_columns_option(options.get(COLUMNS)), case_sensitive=case_sensitive)
    read_schema = scan.schema
    spark_schema(read_schema)  # refuse unreadable types at load()
    return _ReadState(
        metadata_location=location, metadata=md if location is None else None, io=io,
        snapshot_id=snapshot_id, schema_id=schema.schema_id, row_filter=scan.row_filter,
        columns=scan.columns, case_sensitive=case_sensitive, read_schema=read_schema,
        split_size=_int_option(options, SPLIT_SIZE),
        file_open_cost=_int_option(options, FILE_OPEN_COST))


def _pick_state(md: TableMetadata, options: Mapping[str, str]) -> tuple[int | None, Schema]:
    """Snapshot id and schema for the snapshot-choosing options (spec: "Snapshot References";
    Appendix F, "Point in Time Reads")."""
    where = md.source_file
    sid = _int_option(options, SNAPSHOT_ID)
    if sid is not None:
        if md.snapshot_by_id(sid) is None:
            raise NoSuchSnapshot("no snapshot with this id in the table metadata", file=where,
                                 field=SNAPSHOT_ID, value=sid)
        return sid, md.schema_for_snapshot(sid)
    as_of = _int_option(options, AS_OF_TIMESTAMP)
    if as_of is not None:
        at = md.snapshot_as_of(as_of)
        return at.snapshot_id, md.schema_for_snapshot(at.snapshot_id)
    for option, want_branch in ((BRANCH, True), (TAG, False)):
        name = options.get(option)
        if not name:
            continue
        ref = md.refs.get(name)
        if ref is None and not (want_branch and name == MAIN_BRANCH):
            raise NoSuchSnapshot(f"no {option} named {name!r}", file=where, field=option,
                                 value=name)
        if ref is not None and ref.is_branch != want_branch:
            raise ValidationError(f"{name!r} is a {'branch' if ref.is_branch else 'tag'}, not "
                                  f"a {option}", file=where, field=option, value=name)
        snap = md.snapshot_for_ref(name)
        if snap is None:
            raise NoSuchSnapshot(f"{option} {name!r} points to no snapshot", file=where,
                                 field=option, value=name)
        schema = md.schema if want_branch else md.schema_for_snapshot(snap.snapshot_id)
        return snap.snapshot_id, schema
    current = md.current_snapshot()
    return (None if current is None else current.snapshot_id), md.schema


def read_options(metadata: TableMetadata, io: FileIO, *, snapshot_id: int | None,
                 schema: Schema, row_filter: Expression, columns: Sequence[str] | None,
                 case_sensitive: bool) -> dict[str, str]:
    """Data source options that read exactly this scan state (used by ``Scan.to_spark``)."""
    options = {k: str(v) for k, v in io.properties.items()}
    if io.relocations:
        options[_RELOCATIONS] = json.dumps(dict(io.relocations))
    if metadata.source_file is not None:
        options["path"] = metadata.source_file
    else:
        options[_METADATA_PICKLE] = _encode(metadata)
    if snapshot_id is not None:
        options[SNAPSHOT_ID] = str(snapshot_id)
    options[_SCHEMA_ID] = str(schema.schema_id)
    if not isinstance(row_filter, AlwaysTrue):
        text = str(row_filter)
        try:
            same = parse(text) == row_filter
        except IcebergError:
            same = False
        if same:
            options[FILTER] = text
        else:
            options[_FILTER_PICKLE] = _encode(row_filter)
    if columns is not None:
        options[COLUMNS] = json.dumps(list(columns))
    options[CASE_SENSITIVE] = "true" if case_sensitive else "false"
    return options


# --------------------------------------------------------------------------- partitions


class ScanPartition(InputPartition):
    """One Spark partition: file scan tasks with what an executor needs to read them."""

    def __init__(self, index: int, tasks: Sequence[FileScanTask], io: FileIO, schema: Schema,
                 name_mapping: NameMapping | None) -> None:
        super().__init__(index)
        self.index = index
        self.tasks = tuple(tasks)
        self.io = io
        self.schema = schema
        self.name_mapping = name_mapping

    def __repr__(self) -> str:
        return f"ScanPartition({self.index}, tasks={len(self.tasks)})"


def _task_weight(task: FileScanTask, open_cost: int) -> int:
    size = task.data_file.file_size_in_bytes + sum(d.file_size_in_bytes
                                                  for d in task.delete_files)
    return max(size, open_cost)


def _pack(tasks: Sequence[FileScanTask], split_size: int, open_cost: int
          ) -> list[list[FileScanTask]]:
    """Tasks in planning order, cut into groups of about ``split_size`` bytes (next fit)."""
    groups: list[list[FileScanTask]] = []
    current: list[FileScanTask] = []
    weight = 0
    for task in tasks:
        w = _task_weight(task, open_cost)
        if current and weight + w > split_size:
            groups.append(current)
            current, weight = [], 0
        current.append(task)
        weight += w
    if current:
        groups.append(current)
    return groups


def _size_property(md: TableMetadata, name: str, default: int) -> int:
    raw = md.properties.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValidationError("not an integer", file=md.source_file,
                              field=f"properties.{name}", value=raw) from None


def scan_partitions(scan: Scan, *, split_size: int | None = None,
                    file_open_cost: int | None = None) -> list[ScanPartition]:
    """Plan ``scan`` and pack its file scan tasks into Spark partitions (empty: no files)."""
    if scan.snapshot_id is None:
        return []
    md = scan.metadata
    split = split_size or _size_property(md, SPLIT_SIZE_PROPERTY, DEFAULT_SPLIT_SIZE)
    cost = file_open_cost if file_open_cost is not None else _size_property(
        md, OPEN_FILE_COST_PROPERTY, DEFAULT_OPEN_FILE_COST)
    if split <= 0:
        raise ValidationError("the split size must be positive", field=SPLIT_SIZE, value=split)
    tasks = scan.plan().tasks
    mapping = scan.name_mapping
    schema = scan.schema
    return [ScanPartition(i, group, scan.io, schema, mapping)
            for i, group in enumerate(_pack(tasks, split, max(cost, 0)))]


def read_partition(partition: ScanPartition) -> Iterator[pa.RecordBatch]:
    """The rows of one partition's tasks as Arrow batches in the Spark schema's types."""
    for task in partition.tasks:
        table = read_task(partition.io, task, partition.schema,
                          name_mapping=partition.name_mapping)
        if table.num_rows:
            yield from to_spark_arrow(table, partition.schema).to_batches(
                max_chunksize=BATCH_ROWS)


# --------------------------------------------------------------------------- Spark classes


def _plain(error: IcebergError) -> IcebergError:
    """The error without its traceback: Spark prints the traceback into its message."""
    return error.with_traceback(None)


class IcenbReader(DataSourceReader):
    """Plans on the driver (``partitions``) and reads partitions on executors (``read``).

    Holds only the resolved read state: Spark pickles the reader into every read task.
    """

    def __init__(self, state: _ReadState) -> None:
        self._state = state

    def partitions(self) -> list[InputPartition]:
        try:
            state = self._state
            parts = scan_partitions(state.scan(), split_size=state.split_size,
                                    file_open_cost=state.file_open_cost)
        except IcebergError as e:
            raise _plain(e) from None
        return list(parts)

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        if partition is None:  # Spark's stand-in when there are no partitions (no files)
            return iter(())
        if not isinstance(partition, ScanPartition):
            raise ValidationError("not a partition planned by the icenb data source",
                                  value=repr(partition))
        return read_partition(partition)


class IcenbDataSource(DataSource):
    """``spark.read.format("icenb")``: reads an Iceberg table through icenb (see the module)."""

    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE_NAME

    def _read_state(self) -> _ReadState:
        state: _ReadState | None = getattr(self, "_icenb_state", None)
        if state is None:
            try:
                state = _resolve(self.options)
            except IcebergError as e:
                raise _plain(e) from None
            self._icenb_state = state
        return state

    def schema(self) -> StructType:
        return spark_schema(self._read_state().read_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        state = self._read_state()
        expected = spark_schema(state.read_schema)
        if schema != expected:
            raise UnsupportedFeature("the icenb source reads the table's own schema; choose "
                                     "columns with the 'columns' option, not a schema",
                                     field="schema", value=schema.simpleString())
        return IcenbReader(state)
