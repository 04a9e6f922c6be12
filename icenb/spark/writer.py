"""The ``icenb`` Spark data source, write side: executors write data files, the driver commits.

``df.write.format("icenb").mode("append").option("warehouse", path).save("db.events")``
appends ``df`` to the table ``db.events`` of a catalog, as one snapshot (DESIGN: "write:
executors write files, driver commits"). The table is loaded from its catalog because a write
commits through the catalog (a table opened by location is read-only). Addressing options:

- ``warehouse``: an icenb warehouse directory (:func:`icenb.warehouse`, its ``catalog.db``), or
- ``catalog``: any catalog location :func:`icenb.open_catalog` accepts (a SQLite catalog file
  or ``sqlite:///`` URI; a filesystem catalog's directory); exactly one of the two;
- ``catalog-name`` (default ``default``): the catalog's name (SQL catalogs key rows by it);
- the saved path is the table identifier (``"db.events"``; ``"a.b.events"`` for nested
  namespaces).

Other options: ``branch`` (default ``main``; created from the current snapshot when missing),
``snapshot-property.<key>`` (a summary property of the new snapshot, as Iceberg's Spark
writer), ``wap-id`` (write-audit-publish: on a table with ``write.wap.enabled=true`` the
snapshot is staged with that ``wap.id``, no ref moves; a Python data source cannot read the
session conf, so ``spark.wap.id`` reaches it only through :func:`write_dataframe`, i.e.
``Table.append`` / ``overwrite`` of a Spark DataFrame, which passes ``icenb.set_options(
wap_id=...)`` or else the session's ``spark.wap.id``), and anything else configures the FileIO
(``s3.endpoint``, ...).

Modes: ``append``; ``overwrite`` replaces, in one ``overwrite`` snapshot,
- with ``partitionOverwriteMode=dynamic`` (Spark's option name; the session setting
  ``spark.sql.sources.partitionOverwriteMode`` does not reach a Python data source): every
  partition the DataFrame has rows for (:class:`~icenb.table.commit.overwrite.ReplacePartitions`,
  as Iceberg's Spark ``overwritePartitions``);
- otherwise (``static``): the rows matching ``overwrite-filter`` (an icenb filter string; the
  files holding them are rewritten without them on the driver, copy-on-write), or every row
  when no filter is given (Java's ``overwriteByRowFilter(alwaysTrue)``).

EXPERIMENTAL format-version 4 tables (docs/v4-layout.md#maintenance): appends commit a ``V4Append``,
static overwrites a ``V4Overwrite``, dynamic partition overwrites a ``V4ReplacePartitions``
(docs/v4-layout.md#dynamic-overwrite).

Flow: ``writer()`` (driver, at ``save()``) loads the table, checks the DataFrame's columns and
types against the table schema (a wrong name or type fails before any task runs) and pins what
tasks need - schema, spec, sort order, properties, location, format version, FileIO - with one
operation id. ``write()`` (each task, on an executor) conforms its Arrow batches to the table
schema and writes them with a :class:`~icenb.table.write.data_files.RollingDataWriter`, files named
``{partition:05d}-{task attempt id}-{operation id}-{n:05d}.parquet`` (Java's
``OutputFileFactory``), and returns a commit message with their DataFiles. ``commit()`` (driver)
adds every task's files to one producer (a merge append as ``Table.append``, or see "Modes")
whose commit UUID is the operation id (so manifests and the manifest list carry it too) and
commits it on the catalog's current state, with the producer's retry loop (spec: "Commit
Conflict Resolution and Retry"). ``abort()`` (driver, when a task or the commit failed) deletes
the data files the tasks wrote - those their messages list and any file under the data location
named with the operation id (a task killed when the job failed reports nothing), once at once
and once again after ``ABORT_GRACE_SECONDS`` - unless a snapshot of this operation is in the
table (an unknown commit outcome that in fact succeeded). A failing task deletes its own files
(``RollingDataWriter``). A killed task still writing after that can leave orphan files.

Decision: a task streams its Arrow batches through one
:class:`~icenb.table.write.data_files.RollingDataWriter` (fanout: one open file per table partition,
as the Python data source API cannot ask Spark to cluster or sort a task's rows the way Java's
``RequiresDistributionAndOrdering`` does), so a task's memory is bounded by its write buffers
(``DEFAULT_WRITE_BUFFER_BYTES``), not its row count; rolling by ``write.target-file-size-bytes``
and the file counter span the whole task. Tables with a sort order: each file is sorted (rows
buffered per partition within the same bound, sorted when it is reached).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from icenb import errors
from icenb.catalog import (
    Catalog,
    Identifier,
    LoadedTable,
    open_catalog,
    open_warehouse_catalog,
    to_identifier,
)
from icenb.errors import CommitStateUnknown, IcebergError, ValidationError
from icenb.io.file_io import FileIO
from icenb.options import get_options
from icenb.progress import WRITING_WITH_SPARK, progress
from icenb.reprs import safe_repr
from icenb.spark.spark_types import spark_to_arrow_schema
from icenb.spec.manifest import DataFile
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import WRITE_DATA_PATH
from icenb.spec.schema import Schema
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.sort_order import SortOrder
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.producer import SnapshotProducer
from icenb.table.engine import Overwrite
from icenb.table.write.conform import conform_to_schema
from icenb.table.write.data_files import RollingDataWriter
from icenb.table.write.locations import location_provider

__all__ = ["ABORT_GRACE_SECONDS", "IcenbCommitMessage", "IcenbWriter", "Overwrite",
           "WriteTarget", "append_dataframe", "delete_operation_files",
           "find_operation_snapshot", "make_writer", "write_dataframe", "write_task"]

WAREHOUSE = "warehouse"
CATALOG = "catalog"
CATALOG_NAME = "catalog-name"
BRANCH = "branch"
OVERWRITE_MODE = "partitionOverwriteMode"
OVERWRITE_FILTER = "overwrite-filter"
SNAPSHOT_PROPERTY_PREFIX = "snapshot-property."
WAP_ID_OPTION = "wap-id"
#: Spark's session conf of the write-audit-publish id (Iceberg's ``SparkSQLProperties.WAP_ID``).
SPARK_WAP_ID = "spark.wap.id"
# Set by append_dataframe (Table.append): the table's own catalog object (pickled), its
# identifier (JSON list) and the operation id the driver looks its snapshot up by.
_CATALOG_PICKLE = "icenb.catalog-pickle"
_IDENTIFIER = "icenb.identifier"
_OPERATION_ID = "icenb.operation-id"
#: How long ``abort`` waits before it looks for killed tasks' files a second time (Spark's
#: ``spark.python.task.killTimeout`` default).
ABORT_GRACE_SECONDS = 2.0
_WRITE_OPTIONS = frozenset({"path", "paths", WAREHOUSE, CATALOG, CATALOG_NAME, BRANCH,
                            OVERWRITE_MODE, OVERWRITE_FILTER, _CATALOG_PICKLE, _IDENTIFIER,
                            _OPERATION_ID, WAP_ID_OPTION})


# --------------------------------------------------------------------------- tasks


@safe_repr
@dataclass(frozen=True)
class WriteTarget:
    """What a write task needs of the table (pinned at ``writer()``; pickled into tasks)."""

    io: FileIO
    schema: Schema
    spec: PartitionSpec
    sort_order: SortOrder
    properties: Mapping[str, str]
    location: str
    format_version: int
    operation_id: str

    @classmethod
    def of(cls, metadata: TableMetadata, io: FileIO, operation_id: str) -> WriteTarget:
        return cls(io, metadata.schema, metadata.spec, metadata.sort_order,
                   dict(metadata.properties), metadata.location, metadata.format_version,
                   operation_id)


@safe_repr
@dataclass(frozen=True)
class IcenbCommitMessage(WriterCommitMessage):
    """A task's result: the data files it wrote (``partition_id``/``task_id`` as in their
    names)."""

    files: tuple[DataFile, ...]
    partition_id: int
    task_id: int


def write_task(target: WriteTarget, batches: Iterable[pa.RecordBatch] | pa.Table, *,
               partition_id: int, task_id: int) -> list[DataFile]:
    """Conform and write one task's rows as data files of the target table (no commit),
    streaming: batches go through a :class:`~icenb.table.write.data_files.RollingDataWriter`, so a
    task holds at most its write buffers, not its partition. On failure the task's files are
    deleted."""
    writer = RollingDataWriter(
        target.io, target.schema, target.spec, target.sort_order, target.properties,
        location_provider(target.location, target.properties),
        format_version=target.format_version, partition_id=partition_id, task_id=task_id,
        operation_id=target.operation_id)
    with writer:
        for batch in [batches] if isinstance(batches, pa.Table) else batches:
            writer.write(batch)
        return writer.close()


def _data_root(target: WriteTarget) -> str:
    """Where the location provider puts data files: ``write.data.path`` or ``<table>/data``."""
    configured = target.properties.get(WRITE_DATA_PATH)
    return (configured or f"{target.location.rstrip('/')}/data").rstrip("/")


def delete_operation_files(target: WriteTarget) -> int:
    """Delete every data file of the target's operation under the table's data location (by
    the operation id in its name), including those of tasks whose results Spark dropped (a
    killed task reports nothing); the number deleted. Used when the operation did not commit.
    """
    deleted = 0
    pending = [_data_root(target)]
    io = target.io
    while pending:
        directory = pending.pop()
        try:
            entries = io.list_dir(directory)
        except IcebergError:
            continue  # missing (nothing written there) or unreadable
        for entry in entries:
            location = f"{directory}/{entry.name}"
            if entry.is_dir:
                pending.append(location)
            elif target.operation_id in entry.name:
                with contextlib.suppress(IcebergError):
                    io.delete(location, missing_ok=True)
                    deleted += 1
    return deleted


# --------------------------------------------------------------------------- commit


def _producer(catalog: Catalog, identifier: Identifier, io: FileIO, base: LoadedTable,
              files: Sequence[DataFile], *, overwrite: Overwrite | None, branch: str,
              snapshot_properties: Mapping[str, str], operation_id: str,
              wap_id: str | None = None) -> SnapshotProducer:
    """The producer that commits a Spark write's files (see "Modes" in the module), from
    :func:`icenb.table.commit.new_producer`; its commit UUID is the operation id, which
    :func:`find_operation_snapshot` looks for. A static overwrite removes the files whose
    rows all match and rewrites the partly matching ones here, on the driver."""
    from icenb.spec.expressions import ALWAYS_TRUE
    from icenb.table.commit import new_producer
    from icenb.table.commit.overwrite import OverwriteFiles
    from icenb.table.row_level.copy_on_write import plan_copy_on_write, replace_matching_rows

    md = base.metadata
    if overwrite is None:
        append = new_producer("append", catalog, identifier, io, md, branch=branch,
                           snapshot_properties=snapshot_properties, commit_uuid=operation_id,
                           wap_id=wap_id)
        append.add_files(files)
        return append
    if overwrite.dynamic:  # no conflict validation, re-applied on retries
        dynamic = new_producer("replace_partitions", catalog, identifier, io, md, branch=branch,
                           snapshot_properties=snapshot_properties, commit_uuid=operation_id,
                           wap_id=wap_id)
        dynamic.check_branch(md)
        dynamic.add_files(files)
        return dynamic
    producer = new_producer("overwrite", catalog, identifier, io, md, branch=branch,
                           snapshot_properties=snapshot_properties, commit_uuid=operation_id,
                           wap_id=wap_id)
    producer.check_branch(md)
    if isinstance(producer, OverwriteFiles):
        if overwrite.filter is None:
            producer.overwrite_by_row_filter(ALWAYS_TRUE)
        else:
            replace_matching_rows(producer, io, md, overwrite.filter, branch=branch)
        producer.add_files(files)
        return producer
    # EXPERIMENTAL v4 (docs/v4-layout.md#maintenance): remove and rewrite by the copy-on-write plan
    producer.overwrite = True
    plan = plan_copy_on_write(io, md, ALWAYS_TRUE if overwrite.filter is None
                              else overwrite.filter, branch=branch)
    for f in plan.remove:
        producer.delete_file(f)
    if plan.keep_rows is not None and plan.keep_rows.num_rows:
        try:
            producer.write(plan.keep_rows, md, moved=True)
        except BaseException:
            producer.abort()
            raise
    producer.add_files(files)
    return producer


def find_operation_snapshot(metadata: TableMetadata, operation_id: str) -> Snapshot | None:
    """The snapshot committed by operation ``operation_id`` (its manifest list, or on v4 its
    root manifest, is named ``snap-`` / ``root-<id>-<attempt>-<operation id>.avro``), or
    None."""
    suffix = f"-{operation_id}.avro"
    for snap in metadata.snapshots:
        top = snap.manifest_list if snap.manifest_list is not None else snap.root_manifest
        if top is not None and top.endswith(suffix):
            return snap
    return None


def _plain(error: IcebergError) -> IcebergError:
    return error.with_traceback(None)


class IcenbWriter(DataSourceArrowWriter):
    """Writes on executors (``write``), commits or aborts on the driver. Pickled into every
    task and into the commit worker: holds only the catalog, the identifier and the target."""

    def __init__(self, catalog: Catalog, identifier: Identifier, target: WriteTarget, *,
                 branch: str, snapshot_properties: Mapping[str, str],
                 overwrite: Overwrite | None = None, wap_id: str | None = None) -> None:
        self._catalog = catalog
        self._identifier = identifier
        self._target = target
        self._branch = branch
        self._snapshot_properties = dict(snapshot_properties)
        self._overwrite = overwrite
        self._wap_id = wap_id

    @property
    def target(self) -> WriteTarget:
        return self._target

    def write(self, iterator: Iterator[pa.RecordBatch]) -> IcenbCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        task_id = context.taskAttemptId() if context is not None else 0
        try:
            files = write_task(self._target, iterator, partition_id=partition_id,
                               task_id=task_id)
        except IcebergError as e:
            raise _plain(e) from None
        return IcenbCommitMessage(tuple(files), partition_id, task_id)

    @staticmethod
    def _files(messages: Sequence[WriterCommitMessage | None]) -> list[DataFile]:
        return [f for m in messages if isinstance(m, IcenbCommitMessage) for f in m.files]

    def commit(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        files = self._files(messages)
        producer: SnapshotProducer | None = None
        try:
            base = self._catalog.load_table(self._identifier)
            producer = _producer(self._catalog, self._identifier, self._target.io, base, files,
                                 overwrite=self._overwrite, branch=self._branch,
                                 snapshot_properties=self._snapshot_properties,
                                 operation_id=self._target.operation_id, wap_id=self._wap_id)
            producer.commit(base)
        except CommitStateUnknown as e:
            raise _plain(e) from None  # files may be referenced: keep them
        except IcebergError as e:
            if producer is not None:
                producer.abort()  # what the driver wrote (rewritten files, manifests)
            self._delete(files)  # the tasks' files
            raise _plain(e) from None

    def abort(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        """Delete the data files of the operation: those the messages list and, as a task
        killed when the job failed reports none, every file named with the operation id."""
        try:
            current = self._catalog.load_table(self._identifier).metadata
        except IcebergError:
            return  # cannot tell whether a commit landed: keep the files (orphans, not loss)
        if find_operation_snapshot(current, self._target.operation_id) is None:
            self._delete(self._files(messages))
            delete_operation_files(self._target)
            # Tasks Spark killed may still be writing (a Python worker that has its input
            # finishes its files): look again once they have had time to stop.
            time.sleep(ABORT_GRACE_SECONDS)
            delete_operation_files(self._target)

    def _delete(self, files: Sequence[DataFile]) -> None:
        for f in files:
            with contextlib.suppress(IcebergError):
                self._target.io.delete(f.file_path, missing_ok=True)


# --------------------------------------------------------------------------- driver side


def _decode_catalog(text: str) -> Catalog:
    from icenb.spark.datasource import decode_option

    catalog = decode_option(text, _CATALOG_PICKLE)
    if not isinstance(catalog, Catalog):
        raise ValidationError("not a catalog written by icenb", field=_CATALOG_PICKLE)
    return catalog


def _catalog_of(options: Mapping[str, str]) -> Catalog:
    """The catalog the options name (``warehouse`` or ``catalog``; see the module)."""
    if options.get(_CATALOG_PICKLE):
        return _decode_catalog(options[_CATALOG_PICKLE])
    io_properties = {k: str(v) for k, v in options.items()
                     if k not in _WRITE_OPTIONS and not k.startswith(SNAPSHOT_PROPERTY_PREFIX)}
    name = options.get(CATALOG_NAME) or "default"
    warehouse, catalog = options.get(WAREHOUSE), options.get(CATALOG)
    if bool(warehouse) == bool(catalog):
        raise ValidationError(
            "name the table's catalog with exactly one of .option('warehouse', <icenb "
            "warehouse dir>) or .option('catalog', <catalog location>), then "
            ".save('<namespace>.<table>')", field="warehouse / catalog",
            value=(warehouse, catalog))
    if warehouse:
        return open_warehouse_catalog(warehouse, name=name, io=FileIO(io_properties))
    assert catalog is not None
    return open_catalog(catalog, name=name, properties=io_properties)


def _identifier_of(options: Mapping[str, str]) -> Identifier:
    raw = options.get(_IDENTIFIER)
    if raw:
        return to_identifier(tuple(json.loads(raw)))
    path = options.get("path")
    if not path:
        raise ValidationError("give the table identifier: .save('<namespace>.<table>')",
                              field="path")
    return to_identifier(path)


def _check_columns(spark_schema: StructType, schema: Schema, format_version: int) -> None:
    """Refuse, before any task runs, columns not in the table and types that do not fit."""
    empty = spark_to_arrow_schema(spark_schema).empty_table()
    conform_to_schema(empty, schema, format_version=format_version)


def make_writer(options: Mapping[str, str], schema: StructType, overwrite: bool) -> IcenbWriter:
    """The writer for ``DataSource.writer`` (driver): load the table, check the columns, pin
    the write target."""
    catalog = _catalog_of(options)
    identifier = _identifier_of(options)
    loaded = catalog.load_table(identifier)
    md = loaded.metadata
    branch = options.get(BRANCH) or MAIN_BRANCH
    ref = md.refs.get(branch)
    if ref is not None and not ref.is_branch:
        raise ValidationError(f"{branch!r} is a tag: only branches can be written to",
                              field=BRANCH, value=branch)
    _check_columns(schema, md.schema, md.format_version)
    mode = _overwrite_of(options, md, overwrite)
    operation_id = options.get(_OPERATION_ID) or str(uuid.uuid4())
    snapshot_properties = {k[len(SNAPSHOT_PROPERTY_PREFIX):]: str(v) for k, v in options.items()
                           if k.startswith(SNAPSHOT_PROPERTY_PREFIX)}
    return IcenbWriter(catalog, loaded.identifier, WriteTarget.of(md, loaded.io, operation_id),
                       branch=branch, snapshot_properties=snapshot_properties, overwrite=mode,
                       wap_id=options.get(WAP_ID_OPTION) or None)


def _overwrite_of(options: Mapping[str, str], metadata: TableMetadata,
                  overwrite: bool) -> Overwrite | None:
    """The overwrite the options ask for (None: an append); the filter is checked against
    the schema here, before any task runs."""
    raw_mode = options.get(OVERWRITE_MODE)
    flt = options.get(OVERWRITE_FILTER)
    if not overwrite:
        if flt or raw_mode:
            raise ValidationError(f"{OVERWRITE_FILTER!r} and {OVERWRITE_MODE!r} need "
                                  "mode('overwrite')", field="mode", value="append")
        return None
    dynamic_mode = (raw_mode or "static").strip().lower()
    if dynamic_mode not in ("static", "dynamic"):
        raise ValidationError("partitionOverwriteMode must be 'static' or 'dynamic'",
                              field=OVERWRITE_MODE, value=raw_mode)
    if dynamic_mode == "dynamic":
        if flt:
            raise ValidationError("a dynamic overwrite replaces the partitions the data "
                                  "touches: it takes no filter", field=OVERWRITE_FILTER,
                                  value=flt)
        return Overwrite(dynamic=True)
    if flt:
        from icenb.spec.expression_parser import parse
        from icenb.spec.expressions import bind

        bind(parse(flt), metadata.schema)  # ValidationError naming the column or literal
    return Overwrite(dynamic=False, filter=flt or None)


_ERROR_LINE = re.compile(r"icenb\.errors\.(\w+): (.*)")


def _icenb_error(exc: BaseException) -> IcebergError | None:
    """The icenb error a Spark exception reports (its last ``icenb.errors.X: message`` line),
    rebuilt as that class with that message; None when it reports none."""
    found = _ERROR_LINE.findall(str(exc))
    if not found:
        return None
    name, message = found[-1]
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, IcebergError)):
        return None
    error = cls.__new__(cls)
    IcebergError.__init__(error, message.strip())
    return error


def _session_wap_id(df: Any) -> str | None:
    """The ``spark.wap.id`` of ``df``'s session (None when unset or without a session)."""
    conf = getattr(getattr(df, "sparkSession", None), "conf", None)
    value = None if conf is None else conf.get(SPARK_WAP_ID, None)
    return str(value) if value else None


def write_dataframe(df: Any, catalog: Catalog, identifier: Identifier, *,
                    overwrite: Overwrite | None = None, branch: str = MAIN_BRANCH,
                    snapshot_properties: Mapping[str, str] | None = None
                    ) -> tuple[LoadedTable, Snapshot]:
    """Append (``overwrite`` None) or overwrite with a Spark DataFrame through the ``icenb``
    data source (executors write, the driver commits one snapshot); the table as loaded
    afterwards and the new snapshot. With ``icenb.set_options(wap_id=...)``, or else the
    session's ``spark.wap.id``, the snapshot is staged on a ``write.wap.enabled`` table.

    An icenb error of a task or of the commit is raised as that icenb error class.
    """
    from icenb.spark.datasource import DATA_SOURCE_NAME, encode_option
    from icenb.spark.session import register

    register(df.sparkSession)
    operation_id = str(uuid.uuid4())
    options = {_CATALOG_PICKLE: encode_option(catalog), _IDENTIFIER: json.dumps(list(identifier)),
               _OPERATION_ID: operation_id, BRANCH: branch}
    if overwrite is not None:
        options[OVERWRITE_MODE] = "dynamic" if overwrite.dynamic else "static"
        if overwrite.filter is not None:
            options[OVERWRITE_FILTER] = overwrite.filter
    for key, value in (snapshot_properties or {}).items():
        options[SNAPSHOT_PROPERTY_PREFIX + key] = str(value)
    wap_id = get_options().wap_id or _session_wap_id(df)
    if wap_id:
        options[WAP_ID_OPTION] = wap_id
    try:
        with progress(WRITING_WITH_SPARK):
            (df.write.format(DATA_SOURCE_NAME)
             .mode("append" if overwrite is None else "overwrite").options(**options).save())
    except BaseException as exc:
        # Spark aborted the write (or the user interrupted it: PySpark cancels the jobs);
        # tasks it killed may have written files since. A snapshot of the operation means it
        # committed: then its files stay.
        with contextlib.suppress(IcebergError):
            current = catalog.load_table(identifier)
            if find_operation_snapshot(current.metadata, operation_id) is None:
                delete_operation_files(WriteTarget.of(current.metadata, current.io,
                                                      operation_id))
        error = _icenb_error(exc) if isinstance(exc, Exception) else None
        if error is None:
            raise
        raise error from exc
    loaded = catalog.load_table(identifier)
    snap = find_operation_snapshot(loaded.metadata, operation_id)
    if snap is None:
        raise CommitStateUnknown("Spark reported the write as done but the table has no "
                                 "snapshot of it", field="operation-id", value=operation_id)
    return loaded, snap


def append_dataframe(df: Any, catalog: Catalog, identifier: Identifier, *,
                     branch: str = MAIN_BRANCH,
                     snapshot_properties: Mapping[str, str] | None = None
                     ) -> tuple[LoadedTable, Snapshot]:
    """Append a Spark DataFrame (:func:`write_dataframe`)."""
    return write_dataframe(df, catalog, identifier, branch=branch,
                           snapshot_properties=snapshot_properties)
