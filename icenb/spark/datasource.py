"""The ``icenb`` Spark data source: planned file scan tasks, read on executors (this module);
appends, written on executors and committed on the driver (:mod:`icenb.spark.writer`).

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
in Spark's planner on the driver: it plans the scan (spec: "Scan Planning"; Arrow tables) and
bin-packs the data files on the plan's Arrow columns (each file whole, at least one per
partition, by data + delete file bytes), building no Python object per file. Each partition
carries everything an executor needs - its slice of the plan as Arrow (the data entries of its
files, the delete entries they reference) and, pickled once for all partitions, the plan's
schema, specs and filter, the FileIO, the projected schema and the name mapping - and
``read()`` on the executor builds the slice's file scan tasks, runs icenb's task reader and
yields Arrow batches typed for the Spark schema (:mod:`icenb.spark.spark_types`).

Filter pushdown (option ``pushdown``, default false): with ``pushdown=true``, Spark's
``where()`` / SQL ``WHERE`` filters on the read are pushed into planning
(``DataSourceReader.pushFilters``, PySpark 4.1+) when the session sets
``spark.sql.python.filterPushdown.enabled=true`` (sessions icenb starts do; Spark's default is
off). :mod:`icenb.spark.pushdown` turns them into an icenb expression ANDed with the read's
``filter``: it prunes manifests and files and filters rows; every filter icenb does not
evaluate exactly stays with Spark. It is off by default because Spark 4.1 to 4.3 keep the
partitions and reader planned by a filter pushdown on the loaded relation (the DataFrame), not
on the query: a later query of the same DataFrame that pushes no filter (``df.count()`` after
``df.where(...).show()``), or a second scan of it in one query (a self-join, a union, a CTE
used twice), reads the first query's pruned files and returns wrong rows. A DataFrame read with
``pushdown=true`` must therefore serve one query. ``Warehouse.sql`` prunes without this risk:
it reads the filters Spark's optimizer places on each read of the query and gives them to
fresh reads as their own ``filter`` (:mod:`icenb.spark.warehouse_sql`).

PySpark refuses a reader that defines ``pushFilters`` on a session without the flag
(``DATA_SOURCE_PUSHDOWN_DISABLED``) and tells a data source nothing of the flag, so
``reader()`` asks the PySpark planner that calls it: its filter-pushdown planner, or the
``enable_pushdown`` flag of its plain planner (PySpark 4.1 to 4.3). Only then does it return
:class:`IcenbFilteringReader`; anything else gets :class:`IcenbReader`, which takes no filters
and works on every session.

``icenb.plan-log`` (an option, or a FileIO property of the table read): a local file to which
each planning appends one JSON line (snapshot, filter, manifests total and read, the data
files planned) and each executor one line per file it opens (``{"opened": location}``): how
tests and curious users see what a Spark query opened.

Errors: failures to open, resolve or plan raise icenb errors in Spark's planner; Spark reports
them as an ``AnalysisException`` (``PYTHON_DATA_SOURCE_ERROR``) whose message ends with the
icenb error (its class, message, file and field).
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.types import StructType

from icenb.errors import IcebergError, NoSuchSnapshot, UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata
from icenb.reprs import safe_repr
from icenb.spark.spark_types import spark_schema, to_spark_arrow
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysTrue, Expression, and_
from icenb.spec.manifest import FileScanTask
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import READ_SPLIT_OPEN_FILE_COST, READ_SPLIT_TARGET_SIZE
from icenb.spec.schema import Schema
from icenb.spec.snapshot import MAIN_BRANCH
from icenb.spec.table_metadata import TableMetadata
from icenb.table.scan import Scan
from icenb.table.scan.planning import ScanPlan
from icenb.table.scan.read import NameMapping, read_task
from icenb.table.table import open_table

__all__ = ["DATA_SOURCE_NAME", "PLAN_LOG", "PUSHDOWN_CONF", "IcenbDataSource",
           "IcenbFilteringReader", "IcenbReader", "ScanPartition", "read_options",
           "scan_partitions"]

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
#: ``true``: take Spark's filters into planning, where the session allows it (default false).
PUSHDOWN = "pushdown"
#: A local file each planning (and each executor's file opens) of the read is logged to.
PLAN_LOG = "icenb.plan-log"
#: Set by icenb.spark.warehouse_sql: ``true`` on the reads of a query it only optimizes (they
#: plan nothing), and each table read's number in the query.
PROBE = "icenb.probe"
READ_NUMBER = "icenb.read-number"
#: The Spark setting that lets a Python data source take filters (off by default in Spark).
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
# Set by Scan.to_spark: the schema the scan resolves names with (a branch read keeps the
# table's schema), and the row filter or metadata when they have no text form.
_SCHEMA_ID = "icenb.schema-id"
_FILTER_PICKLE = "icenb.filter-pickle"
_METADATA_PICKLE = "icenb.metadata-pickle"
_RELOCATIONS = "icenb.relocations"  # the FileIO's relocations (JSON), from Scan.to_spark
_READ_OPTIONS = frozenset({"path", "paths", SNAPSHOT_ID, BRANCH, TAG, AS_OF_TIMESTAMP, FILTER,
                           COLUMNS, CASE_SENSITIVE, SPLIT_SIZE, FILE_OPEN_COST, RELOCATE,
                           PUSHDOWN, PLAN_LOG, PROBE, READ_NUMBER, _SCHEMA_ID, _FILTER_PICKLE,
                           _METADATA_PICKLE, _RELOCATIONS})

#: Table properties and defaults for packing tasks (as Iceberg's ``read.split.*``).
SPLIT_SIZE_PROPERTY = READ_SPLIT_TARGET_SIZE
OPEN_FILE_COST_PROPERTY = READ_SPLIT_OPEN_FILE_COST
DEFAULT_SPLIT_SIZE = 128 * 1024 * 1024
DEFAULT_OPEN_FILE_COST = 4 * 1024 * 1024
#: Rows per Arrow batch handed to Spark.
BATCH_ROWS = 65_536


def encode_option(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def decode_option(text: str, option: str) -> Any:
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


@safe_repr
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
    plan_log: str | None = None
    pushdown: bool = False
    probe: bool = False

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
        md: TableMetadata = decode_option(pickled, _METADATA_PICKLE)
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
        row_filter = decode_option(options[_FILTER_PICKLE], _FILTER_PICKLE)
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
        file_open_cost=_int_option(options, FILE_OPEN_COST),
        plan_log=options.get(PLAN_LOG) or None,
        pushdown=_bool_option(options, PUSHDOWN, False),
        probe=_bool_option(options, PROBE, False))


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
        options[_METADATA_PICKLE] = encode_option(metadata)
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
            options[_FILTER_PICKLE] = encode_option(row_filter)
    if columns is not None:
        options[COLUMNS] = json.dumps(list(columns))
    options[CASE_SENSITIVE] = "true" if case_sensitive else "false"
    return options


# --------------------------------------------------------------------------- partitions


@safe_repr
@dataclass(frozen=True)
class _Shared:
    """What every partition of one read carries alike: how to read, and the plan's header
    (``delete_schema`` has no columns when no file of the plan has deletes)."""

    io: FileIO
    schema: Schema  # the projected read schema
    name_mapping: NameMapping | None
    snapshot_id: int | None
    plan_schema: Schema
    specs: Mapping[int, PartitionSpec]
    row_filter: Expression
    case_sensitive: bool
    data_schema: pa.Schema  # Arrow schemas of the plan's data and delete entries
    delete_schema: pa.Schema
    plan_log: str | None = None  # where executors log the files they open (PLAN_LOG)


#: Compressed bytes and their size before compression.
_Blob = tuple[bytes, int]
#: Codecs: what all partitions share is compressed once, hard; each partition's rows fast.
_SHARED_CODEC = "zstd"
_ROWS_CODEC = "lz4"


def _squeeze(raw: Any, codec: str) -> _Blob:
    return pa.compress(raw, codec, asbytes=True), len(raw)


def _unsqueeze(blob: _Blob, codec: str) -> Any:
    return pa.decompress(blob[0], blob[1], codec)


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    batches = table.to_batches()
    return batches[0] if len(batches) == 1 else table.combine_chunks().to_batches()[0]


def _has_dictionary(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_dictionary(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_dictionary(t.key_type) or _has_dictionary(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_dictionary(t.value_type)
    return False


def _rows_blob(batch: pa.RecordBatch) -> _Blob:
    """Rows as one Arrow IPC record batch message (no schema: it is shared), compressed; as a
    whole IPC stream when a column is dictionary-encoded (a lone message cannot carry the
    dictionaries)."""
    if any(_has_dictionary(f.type) for f in batch.schema):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        return _squeeze(sink.getvalue(), _ROWS_CODEC)
    return _squeeze(batch.serialize(), _ROWS_CODEC)


def _read_rows(blob: _Blob | None, schema: pa.Schema) -> pa.Table:
    if blob is None:
        return schema.empty_table()
    if any(_has_dictionary(f.type) for f in schema):
        return pa.ipc.open_stream(_unsqueeze(blob, _ROWS_CODEC)).read_all()
    batch = pa.ipc.read_record_batch(_unsqueeze(blob, _ROWS_CODEC), schema)
    return pa.Table.from_batches([batch])


#: Shared states decoded in this process, by their bytes: a Python worker reading many
#: partitions of one read decodes them once.
_DECODED: dict[bytes, _Shared] = {}
_DECODED_MAX = 16


def _decode_shared(blob: _Blob) -> _Shared:
    shared = _DECODED.get(blob[0])
    if shared is None:
        shared = pickle.loads(_unsqueeze(blob, _SHARED_CODEC))
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.clear()
        _DECODED[blob[0]] = shared
    return shared


@safe_repr
class ScanPartition(InputPartition):
    """One Spark partition: its slice of the scan plan as Arrow (the data entries of its files
    and the delete entries they reference), with what an executor needs to read them.

    Built on the driver without any per-file Python object; :attr:`plan` and :attr:`tasks`
    are decoded where they are used (on the executor). What all partitions of a read share
    is pickled once and carried as bytes.
    """

    def __init__(self, index: int, shared: _Blob, data: _Blob, deletes: _Blob | None,
                 deletes_per_file: tuple[tuple[int, ...], ...], files: int) -> None:
        super().__init__(index)
        self.index = index
        self.files = files
        self._shared = shared
        self._data = data
        self._deletes = deletes
        self._deletes_per_file = deletes_per_file

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_decoded")}

    def _shared_state(self) -> _Shared:
        shared: _Shared | None = self.__dict__.get("_decoded_shared")
        if shared is None:
            shared = _decode_shared(self._shared)
            self._decoded_shared = shared
        return shared

    @property
    def plan(self) -> ScanPlan:
        """The sub-plan of this partition's files (``ScanPlan.take`` of their rows)."""
        plan: ScanPlan | None = self.__dict__.get("_decoded_plan")
        if plan is None:
            sh = self._shared_state()
            plan = ScanPlan(sh.snapshot_id, sh.plan_schema, sh.specs, sh.row_filter,
                            sh.case_sensitive, _read_rows(self._data, sh.data_schema),
                            _read_rows(self._deletes, sh.delete_schema),
                            self._deletes_per_file)
            self._decoded_plan = plan
        return plan

    @property
    def tasks(self) -> tuple[FileScanTask, ...]:
        """The file scan tasks of this partition, in planning order."""
        return tuple(self.plan.tasks)

    @property
    def io(self) -> FileIO:
        """The FileIO the files are read through."""
        return self._shared_state().io

    @property
    def schema(self) -> Schema:
        """The projected schema the rows are read with."""
        return self._shared_state().schema

    @property
    def name_mapping(self) -> NameMapping | None:
        """The table's default name mapping (for files written without field ids)."""
        return self._shared_state().name_mapping

    @property
    def plan_log(self) -> str | None:
        """The file executors log opened files to (the ``icenb.plan-log`` option), if any."""
        return self._shared_state().plan_log

    def __repr__(self) -> str:
        return f"ScanPartition({self.index}, files={self.files})"


def _int64(column: pa.ChunkedArray) -> np.ndarray[Any, Any]:
    filled = pc.fill_null(column, 0)
    if isinstance(filled, pa.ChunkedArray):
        filled = filled.combine_chunks() if filled.num_chunks else pa.array([], pa.int64())
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64)


def _file_weights(plan: ScanPlan, open_cost: int) -> np.ndarray[Any, Any]:
    """Per data file of ``plan``: its bytes plus those of the delete files applied to it, at
    least ``open_cost`` (as Iceberg's ``read.split.open-file-cost``)."""
    sizes = _int64(pc.struct_field(plan.data_entries.column("data_file"), "file_size_in_bytes"))
    per_file = plan.deletes_per_file
    if plan.delete_entries.num_rows:
        counts = np.fromiter(map(len, per_file), dtype=np.int64, count=len(per_file))
        total = int(counts.sum())
        if total:
            delete_sizes = _int64(pc.struct_field(plan.delete_entries.column("data_file"),
                                                  "file_size_in_bytes"))
            flat = np.fromiter(chain.from_iterable(per_file), dtype=np.int64, count=total)
            cumulative = np.concatenate(([0], np.cumsum(delete_sizes[flat])))
            ends = np.cumsum(counts)
            sizes = sizes + cumulative[ends] - cumulative[ends - counts]
    weights: np.ndarray[Any, Any] = np.maximum(sizes, open_cost)
    return weights


def _pack(weights: np.ndarray[Any, Any], split_size: int) -> list[tuple[int, int]]:
    """Files in planning order cut into runs ``[start, stop)`` of about ``split_size`` bytes
    (next fit; each file whole; a file heavier than ``split_size`` alone in its run)."""
    runs: list[tuple[int, int]] = []
    start = weight = 0
    for i, w in enumerate(weights.tolist()):
        if i > start and weight + w > split_size:
            runs.append((start, i))
            start, weight = i, 0
        weight += w
    if len(weights):
        runs.append((start, len(weights)))
    return runs


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
    """Plan ``scan`` and pack its data files into Spark partitions (empty: no files).

    Packing works on the plan's Arrow columns (file sizes; no per-file Python object): files in
    planning order, each whole, next fit by data + delete file bytes (at least the open cost
    each) up to the split size, at least one file per partition.
    """
    return _plan_partitions(scan, split_size=split_size, file_open_cost=file_open_cost)[1]


def _log_line(path: str, record: Mapping[str, Any]) -> None:
    """Append one JSON line to a plan log (one write: lines of concurrent processes stay
    whole)."""
    data = (json.dumps(record, default=str) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _log_plan(path: str, plan: ScanPlan | None, scan: Scan) -> None:
    files: list[str] = []
    if plan is not None and plan.files_selected:
        files = [str(p) for p in pc.struct_field(plan.data_entries.column("data_file"),
                                                  "file_path").to_pylist()]
    _log_line(path, {
        "snapshot_id": scan.snapshot_id, "filter": str(scan.row_filter),
        "manifests_total": 0 if plan is None else plan.manifests_total,
        "manifests_read": 0 if plan is None else plan.manifests_read,
        "files": files})


def _plan_partitions(scan: Scan, *, split_size: int | None = None,
                     file_open_cost: int | None = None, plan_log: str | None = None
                     ) -> tuple[ScanPlan | None, list[ScanPartition]]:
    """:func:`scan_partitions`, with the plan it packed (None: the table has no snapshot)."""
    if scan.snapshot_id is None:
        if plan_log:
            _log_plan(plan_log, None, scan)
        return None, []
    md = scan.metadata
    split = split_size or _size_property(md, SPLIT_SIZE_PROPERTY, DEFAULT_SPLIT_SIZE)
    cost = file_open_cost if file_open_cost is not None else _size_property(
        md, OPEN_FILE_COST_PROPERTY, DEFAULT_OPEN_FILE_COST)
    if split <= 0:
        raise ValidationError("the split size must be positive", field=SPLIT_SIZE, value=split)
    plan = scan.plan()
    if plan_log:
        _log_plan(plan_log, plan, scan)
    if plan.files_selected == 0:
        return plan, []
    # One chunk per column: a partition's rows are then a slice (or one take) of one chunk.
    plan = replace(plan, data_entries=plan.data_entries.combine_chunks(),
                   delete_entries=plan.delete_entries.combine_chunks())
    has_deletes = plan.delete_files_selected > 0
    shared = _squeeze(pickle.dumps(_Shared(
        scan.io, scan.schema, scan.name_mapping, plan.snapshot_id, plan.schema,
        dict(plan.specs), plan.row_filter, plan.case_sensitive, plan.data_entries.schema,
        plan.delete_entries.schema if has_deletes else pa.schema([]), plan_log),
        protocol=pickle.HIGHEST_PROTOCOL), _SHARED_CODEC)
    data = _one_batch(plan.data_entries)
    parts = []
    for i, (start, stop) in enumerate(_pack(_file_weights(plan, max(cost, 0)), split)):
        deletes = None
        per_file = plan.deletes_per_file[start:stop]
        if has_deletes:  # the delete entries these files reference, re-indexed
            sub = plan.take(range(start, stop))
            per_file = sub.deletes_per_file
            if sub.delete_files_selected:
                deletes = _rows_blob(_one_batch(sub.delete_entries))
        parts.append(ScanPartition(i, shared, _rows_blob(data.slice(start, stop - start)),
                                   deletes, per_file, stop - start))
    return plan, parts


def read_partition(partition: ScanPartition) -> Iterator[pa.RecordBatch]:
    """The rows of one partition's tasks as Arrow batches in the Spark schema's types."""
    io, schema, mapping = partition.io, partition.schema, partition.name_mapping
    log = partition.plan_log
    if log:
        io.on_open = lambda location: _log_line(log, {"opened": location})
    for task in partition.tasks:
        table = read_task(io, task, schema, name_mapping=mapping)
        if table.num_rows:
            yield from to_spark_arrow(table, schema).to_batches(max_chunksize=BATCH_ROWS)


# --------------------------------------------------------------------------- Spark classes


def _plain(error: IcebergError) -> IcebergError:
    """The error without its traceback: Spark prints the traceback into its message."""
    return error.with_traceback(None)


class IcenbReader(DataSourceReader):
    """Plans on the driver (``partitions``) and reads partitions on executors (``read``).

    Holds only the resolved read state: Spark pickles the reader into every read task. Takes
    no filters from Spark (see :class:`IcenbFilteringReader`).
    """

    def __init__(self, state: _ReadState) -> None:
        self._state = state

    def partitions(self) -> list[InputPartition]:
        if self._state.probe:
            return []  # a read of a query that is only optimized, never run
        try:
            state = self._state
            _, parts = _plan_partitions(state.scan(), split_size=state.split_size,
                                        file_open_cost=state.file_open_cost,
                                        plan_log=state.plan_log)
        except IcebergError as e:
            raise _plain(e) from None
        return list(parts)

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        # Spark's stand-in when partitions() is empty (no files): None in Spark 4.1,
        # InputPartition(None) in later releases (4.3). Either reads no rows.
        if partition is None or (type(partition) is InputPartition and partition.value is None):
            return iter(())
        if not isinstance(partition, ScanPartition):
            raise ValidationError("not a partition planned by the icenb data source",
                                  value=repr(partition))
        return read_partition(partition)


class IcenbFilteringReader(IcenbReader):
    """:class:`IcenbReader` that takes Spark's filters into planning (``pushFilters``): used
    only where the session allows it (see the module docstring)."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        from icenb.spark.pushdown import translate_filters

        state = self._state
        try:
            table_schema = state.scan().table_schema
        except IcebergError as e:
            raise _plain(e) from None
        result = translate_filters(filters, table_schema, case_sensitive=state.case_sensitive)
        if not isinstance(result.expression, AlwaysTrue):
            combined = result.expression if isinstance(state.row_filter, AlwaysTrue) else \
                and_(state.row_filter, result.expression)
            self._state = replace(state, row_filter=combined)
        return iter(result.kept)


#: PySpark's planners that call ``DataSource.reader``: the one that pushes filters, and the
#: plain one, whose local ``enable_pushdown`` is the session's flag (PySpark 4.1 to 4.3).
_PUSHDOWN_PLANNER = "data_source_pushdown_filters.py"
_PLAIN_PLANNER_FLAG = "enable_pushdown"


def _pushdown_allowed() -> bool:
    """Whether PySpark's planner calling ``DataSource.reader`` (two frames up) takes filters.

    PySpark refuses a reader with ``pushFilters`` unless the session enables filter pushdown,
    and tells the data source nothing; its planner knows. Anything unrecognized: False (no
    pushdown, never a refused read).
    """
    try:
        frame = sys._getframe(2)
    except ValueError:
        return False
    if os.path.basename(frame.f_code.co_filename) == _PUSHDOWN_PLANNER:
        return True
    flag = frame.f_locals.get(_PLAIN_PLANNER_FLAG)
    return flag is True


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
        if state.pushdown and not state.probe and _pushdown_allowed():
            return IcenbFilteringReader(state)
        return IcenbReader(state)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """``df.write.format("icenb")``: appends through a catalog (see icenb.spark.writer)."""
        from icenb.spark.writer import make_writer

        try:
            return make_writer(self.options, schema, overwrite)
        except IcebergError as e:
            raise _plain(e) from None
