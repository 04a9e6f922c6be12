"""Snapshot producers: turn written files into a new snapshot and commit it with retries.

Spec sections: "Snapshots" (summary, ``first-row-id``/``added-rows``), "Manifests", "Manifest
Lists", "Sequence Numbers", "Row Lineage", "Commit Conflict Resolution and Retry" and Appendix F
("Optional Snapshot Summary Fields"). Layout and behaviour follow Iceberg Java 1.10's
``SnapshotProducer`` / ``FastAppend``:

* one snapshot id and one commit UUID per operation, kept across retries; manifests are
  ``<metadata>/<commit-uuid>-m<N>.avro``, manifest lists ``snap-<id>-<attempt>-<uuid>.avro``;
* a fast append writes one manifest of ADDED entries for the new files and lists it before the
  parent's manifests (unchanged);
* the summary has the ``added-*`` counts, ``changed-partition-count`` and the ``total-*``
  counters carried over from the parent's summary (a total the parent lacks is left out; the
  first snapshot starts totals at 0);
* the commit is ``[AddSnapshot, SetSnapshotRef(branch)]`` with ``AssertRefSnapshotId(branch,
  parent)``; on ``CommitConflict`` the table is reloaded and the change re-applied (appends
  always re-apply: the manifest is reused, the manifest list rewritten on the new parent) up to
  ``commit.retry.num-retries`` times with exponential backoff (``commit.retry.min-wait-ms``,
  ``max-wait-ms``, ``total-timeout-ms``);
* a commit that finally fails deletes every file the operation wrote (data files, manifests,
  manifest lists; the catalog deletes its metadata file) - except when the outcome is unknown
  (``CommitStateUnknown``), where files may be referenced and are kept;
* a staged producer (:meth:`SnapshotProducer.stage_only`, Java's ``stageOnly()``, used for
  write-audit-publish) commits ``[AddSnapshot]`` only: the snapshot joins the table's
  snapshots, built on the branch head, and no ref moves (so no ref is asserted either);
* how many attempts the commit took is kept (:attr:`SnapshotProducer.attempts`) and reported to
  the table (``Table.last_commit``, a :class:`~icenb.table.operations.CommitReport`).
"""

from __future__ import annotations

import contextlib
import random
import re
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icenb.catalog import Catalog, Identifier, LoadedTable
from icenb.errors import (
    CommitConflict,
    CommitStateUnknown,
    IcebergError,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.file_io import FileIO, join_location
from icenb.io.manifest_reader import read_manifest_list
from icenb.io.manifest_writer import write_manifest, write_manifest_list
from icenb.reprs import safe_repr
from icenb.spec.arrow_schema import to_arrow_schema
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icenb.spec.metadata_columns import lineage_columns
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import (
    COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_MIN_RETRY_WAIT_MS,
    COMMIT_NUM_RETRIES,
    COMMIT_TOTAL_RETRY_TIME_MS,
    WRITE_METADATA_PATH,
    int_property,
    lenient_int_property,
)
from icenb.spec.schema import Schema
from icenb.spec.snapshot import (
    ADDED_DATA_FILES,
    ADDED_FILE_SIZE,
    ADDED_RECORDS,
    CHANGED_PARTITION_COUNT,
    ENGINE_NAME,
    MAIN_BRANCH,
    TOTAL_DATA_FILES,
    TOTAL_DELETE_FILES,
    TOTAL_EQ_DELETES,
    TOTAL_FILE_SIZE,
    TOTAL_POS_DELETES,
    TOTAL_RECORDS,
    WAP_ID,
    Operation,
    Snapshot,
    SnapshotRefType,
    Summary,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.table_updates import (
    AddSnapshot,
    AssertRefSnapshotId,
    SetSnapshotRef,
    TableRequirement,
    TableUpdate,
    apply_updates,
    check_requirements,
)
from icenb.table.operations import CommitReport
from icenb.table.write.data_files import write_data_files
from icenb.table.write.locations import location_provider

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = [
    "COMMIT_MAX_RETRY_WAIT_MS",
    "COMMIT_MIN_RETRY_WAIT_MS",
    "COMMIT_NUM_RETRIES",
    "COMMIT_TOTAL_RETRY_TIME_MS",
    "FastAppend",
    "RetryPolicy",
    "SnapshotProducer",
    "as_arrow_table",
    "branch_snapshot",
    "commit_snapshot",
    "commit_to_table",
    "new_snapshot_id",
    "refresh_on_error",
]

# Table properties of the commit loop (names and defaults of Java's TableProperties).
_WRITE_METADATA_PATH = WRITE_METADATA_PATH

# Summary keys (Java's SnapshotSummary), in the order Java writes them for an append.
ADDED_FILES = ADDED_DATA_FILES
_TOTALS = (TOTAL_RECORDS, TOTAL_FILE_SIZE, TOTAL_DATA_FILES, TOTAL_DELETE_FILES,
           TOTAL_POS_DELETES, TOTAL_EQ_DELETES)


def new_snapshot_id(taken: Iterable[int] = ()) -> int:
    """A random positive 63-bit snapshot id not in ``taken`` (as Java: a UUID's two halves
    XORed, sign bit cleared)."""
    used = set(taken)
    while True:
        u = uuid.uuid4().int
        sid = ((u >> 64) ^ (u & ((1 << 64) - 1))) & ((1 << 63) - 1)
        if sid not in used and sid != 0:
            return sid




@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a conflicting commit is retried (Java's ``Tasks`` retry with
    exponential backoff: wait ``min_wait_ms * 2**(n-1)`` capped at ``max_wait_ms``, +-10%)."""

    num_retries: int = 4
    min_wait_ms: int = 100
    max_wait_ms: int = 60_000
    total_timeout_ms: int = 1_800_000

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> RetryPolicy:
        """The policy of a table's ``commit.retry.*`` properties."""
        return cls._read(properties, int_property)

    @classmethod
    def for_commit(cls, properties: Mapping[str, str]) -> RetryPolicy:
        """The policy a commit uses: as :meth:`from_properties`, but a value already in the
        metadata that icenb cannot use gives the default and a ``PropertyWarning`` - a bad
        value must not lock the table (set_properties refuses it at the door)."""
        return cls._read(properties, lenient_int_property)

    @classmethod
    def _read(cls, properties: Mapping[str, str], read: Callable[..., int]) -> RetryPolicy:
        return cls(read(properties, COMMIT_NUM_RETRIES, cls.num_retries, minimum=0),
                   read(properties, COMMIT_MIN_RETRY_WAIT_MS, cls.min_wait_ms, minimum=0),
                   read(properties, COMMIT_MAX_RETRY_WAIT_MS, cls.max_wait_ms, minimum=0),
                   read(properties, COMMIT_TOTAL_RETRY_TIME_MS, cls.total_timeout_ms,
                        minimum=0))

    def wait_ms(self, retry: int) -> float:
        """Milliseconds to wait before retry number ``retry`` (1 for the first retry)."""
        base = min(self.min_wait_ms * 2.0 ** (retry - 1), float(self.max_wait_ms))
        return float(base * (1.0 + random.uniform(-0.1, 0.1)))

    def backoff(self, attempt: int, started: float,
                sleep: Callable[[float], None] | None = None) -> bool:
        """After conflicting attempt ``attempt`` of a commit begun at ``started``
        (``time.monotonic()``): False when retries or time are used up, else wait and True."""
        elapsed_ms = (time.monotonic() - started) * 1000
        if attempt > self.num_retries or elapsed_ms >= self.total_timeout_ms:
            return False
        (sleep or time.sleep)(self.wait_ms(attempt) / 1000.0)
        return True


def _check_branch(metadata: TableMetadata, branch: str) -> None:
    """``ValidationError`` when ``branch`` names a tag (spec: Snapshot References: only
    branches take new snapshots)."""
    ref = metadata.refs.get(branch)
    if ref is not None and not ref.is_branch:
        raise ValidationError(f"{branch!r} is a tag: only branches can be written to",
                              field="branch", value=branch)


def _branch_head(metadata: TableMetadata, branch: str) -> Snapshot | None:
    """The branch's snapshot; a branch that does not exist yet starts from the current
    snapshot (Java's ``SnapshotUtil.latestSnapshot``)."""
    ref = metadata.refs.get(branch)
    if ref is None:
        return metadata.current_snapshot()
    return metadata.snapshot_by_id(ref.snapshot_id)


def branch_snapshot(metadata: TableMetadata, branch: str) -> Snapshot | None:
    """The snapshot a write to ``branch`` builds on; ``ValidationError`` for a tag."""
    _check_branch(metadata, branch)
    return _branch_head(metadata, branch)


@contextlib.contextmanager
def refresh_on_error(table: Table) -> Iterator[None]:
    """On any error in the block, ``table`` is reloaded (so it shows the catalog's state) and
    the error raised again."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(IcebergError):
            table.refresh()
        raise


def commit_to_table(table: Table, producer: SnapshotProducer) -> LoadedTable:
    """Commit ``producer`` on ``table`` as last loaded and show the result on ``table``; on
    failure (an interrupt included) ``table`` shows the catalog's state and nothing the
    operation wrote is left, unless the commit's outcome is unknown."""
    with refresh_on_error(table), producer.aborted_on_error():
        committed = producer.commit(table.operations.current())
    table.operations.committed(committed)
    table.operations.reported(producer.report())
    return committed


def commit_snapshot(table: Table, producer: SnapshotProducer) -> Snapshot:
    """:func:`commit_to_table`; the new head of the producer's branch, or the staged snapshot
    of a staged producer."""
    metadata = commit_to_table(table, producer).metadata
    snap = (metadata.snapshot_by_id(producer.snapshot_id) if producer.staged
            and producer.snapshot_id is not None else metadata.snapshot_for_ref(producer.branch))
    assert snap is not None
    return snap


def metadata_dir(metadata: TableMetadata) -> str:
    """Where a table's metadata files (and manifests) go: ``write.metadata.path`` or
    ``<location>/metadata``."""
    configured = metadata.properties.get(_WRITE_METADATA_PATH)
    return configured.rstrip("/") if configured else join_location(metadata.location,
                                                                     "metadata")


# --------------------------------------------------------------------------- input data


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns")


def _check_integral(values: Sequence[Any], name: str) -> None:
    """Only safe casts into an integer column: a float or Decimal with a fraction (101.5 into
    a ``long``) is refused naming the column and row, as the Arrow and pandas paths refuse
    it; an integral one (``3.0``) is the same number and is accepted."""
    for i, v in enumerate(values):
        if isinstance(v, (float, Decimal)) and not isinstance(v, bool):
            try:
                integral = v == int(v)
            except (OverflowError, ValueError):  # inf, nan
                integral = False
            if not integral:
                raise ValidationError(f"row {i}: {v!r} is not an integer: casting it to the "
                                      "column's integer type would lose its fraction",
                                      field=name, value=v)


def _check_temporal(values: Sequence[Any], name: str) -> None:
    """A float is no date, time or timestamp (Arrow would silently truncate ``3.5`` to day 3),
    so it is refused naming the column and row; ints count units (days, microseconds) as in
    Arrow."""
    for i, v in enumerate(values):
        if isinstance(v, (float, Decimal)):
            raise ValidationError(f"row {i}: {v!r} is a fractional number, not a date, time "
                                  "or timestamp", field=name, value=v)


def _check_no_lost_values(values: Sequence[Any], arr: pa.Array, name: str) -> None:
    """Every value given is still there: Arrow's conversion turns some values it cannot read
    (a ``str`` into a ``fixed`` column) into null instead of raising; refused, naming the row."""
    given = sum(v is None for v in values)
    if arr.null_count == given:
        return
    valid = arr.is_valid().to_pylist()
    row = next(i for i, v in enumerate(values) if v is not None and not valid[i])
    raise ValidationError(f"row {row}: {values[row]!r} cannot be stored in this column (its "
                          "conversion gave no value)", field=name, value=values[row])


def _rows_table(rows: Sequence[Any], schema: Schema) -> pa.Table:
    """A list of dicts as Arrow, each column built with the table's Arrow type. No rows is an
    empty table of the table's schema: ``append([])`` commits an empty append, as appending
    an empty Arrow table does (and as Java's ``newAppend().commit()`` without files)."""
    if not rows:
        return to_arrow_schema(schema).empty_table()
    names: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValidationError("rows must be dicts (column name -> value)",
                                  field=f"data[{i}]", value=type(row).__name__)
        for key in row:
            names.setdefault(key, None)
    arrow_schema = to_arrow_schema(schema)
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for name in names:
        if not isinstance(name, str) or arrow_schema.get_field_index(name) < 0:
            raise ValidationError("column is not in the table schema", field=str(name),
                                  value=[f.name for f in schema.fields])
        f = arrow_schema.field(name)
        values = [row.get(name) for row in rows]
        if pa.types.is_integer(f.type):
            _check_integral(values, name)
        elif pa.types.is_temporal(f.type):
            _check_temporal(values, name)
        try:
            arr = pa.array(values, type=f.type)
            _check_no_lost_values(values, arr, name)
            arrays.append(arr)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            bad = next((v for v in values if v is not None), None)
            raise ValidationError(f"values do not fit the column's type "
                                  f"{schema.find_field(name).field_type}: {e}", field=name,
                                  value=bad) from None
        fields.append(f.with_nullable(True))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def refuse_row_lineage(names: Sequence[str], schema: Schema) -> None:
    """``ValidationError`` when new rows come with ``_row_id`` / ``_last_updated_sequence_number``:
    new rows get both by inheritance (v3 spec: "Row lineage assignment"); only icenb's own
    rewrites carry the lineage of rows they move, so copied ids cannot collide."""
    for name in lineage_columns(names, schema):
        raise ValidationError(
            "a row lineage column cannot be written: new rows get their row id and "
            "sequence number by inheritance (spec: Row lineage assignment), and rewrites "
            "(update, delete, overwrite by filter) keep the lineage of the rows they move",
            field=name)


def as_arrow_table(data: Any, schema: Schema) -> pa.Table:
    """Data to write as an Arrow table: a pyarrow Table, RecordBatch or RecordBatchReader, a
    pandas DataFrame (its index is dropped) or a list of dicts (typed by the table schema)."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if _is_pandas(data):
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise ValidationError(f"the DataFrame cannot be converted to Arrow: {e}",
                                  field="data") from None
    if isinstance(data, (list, tuple)):
        return _rows_table(data, schema)
    raise ValidationError("data to write must be a pyarrow Table or RecordBatch, a pandas "
                          "DataFrame or a list of dicts", field="data",
                          value=type(data).__name__)


# --------------------------------------------------------------------------- summary


def add_totals(summary: dict[str, str], parent: Snapshot | None,
                added: Mapping[str, int]) -> None:
    """``total-*`` = the parent's total + what was added (a total the parent lacks is left
    out, as Java's ``SnapshotProducer.updateTotal``; no parent: totals start at 0)."""
    previous: Mapping[str, str] | None = (
        None if parent is None else (parent.summary if parent.summary is not None else {}))
    for key in _TOTALS:
        before = "0" if previous is None else previous.get(key)
        if before is None:
            continue
        try:
            value = int(before)
        except ValueError:
            continue
        summary[key] = str(value + added.get(key, 0))


# --------------------------------------------------------------------------- producers


@dataclass(frozen=True)
class AttemptTree:
    """The top metadata file an attempt wrote: a manifest list (v1-v3) or a root manifest
    (v4), and the row-id range it assigned (v3+)."""

    manifest_list: str | None = None
    root_manifest: str | None = None
    first_row_id: int | None = None
    added_rows: int | None = None


@safe_repr
@dataclass
class Attempt:
    """What one commit attempt asks of the catalog."""

    updates: list[TableUpdate]
    requirements: list[TableRequirement]


#: What a caller-given commit UUID may hold (it becomes part of file names).
_COMMIT_UUID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,63}")


class SnapshotProducer(ABC):
    """Builds a snapshot on the current state of a branch and commits it, retrying on
    conflicts (see the module docstring). Subclasses say which manifests the snapshot has."""

    def __init__(self, catalog: Catalog, identifier: Identifier, io: FileIO, *,
                 branch: str = MAIN_BRANCH,
                 snapshot_properties: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] | None = None,
                 commit_uuid: str | None = None) -> None:
        if not isinstance(branch, str) or not branch:
            raise ValidationError("a branch name must be a non-empty string", field="branch",
                                  value=branch)
        self._catalog = catalog
        self._identifier = identifier
        self._io = io
        self._branch = branch
        self._snapshot_properties = dict(snapshot_properties or {})
        if commit_uuid is not None and not _COMMIT_UUID.fullmatch(str(commit_uuid)):
            raise ValidationError("a commit UUID names files: letters, digits, '-' and '_' "
                                  "only", field="commit_uuid", value=commit_uuid)
        self._commit_uuid = commit_uuid or str(uuid.uuid4())
        self._snapshot_id: int | None = None
        self._manifest_count = 0
        self._sleep = sleep
        #: Files written for the operation that every attempt uses (data files, manifests).
        self._written: list[str] = []
        #: The manifests among them (those an attempt that lost may leave unused).
        self._manifests_written: list[str] = []
        #: Whether a commit failed while the catalog swapped the pointer (files are kept).
        self._outcome_unknown = False
        #: Whether a commit succeeded (the files are the table's now: never deleted here).
        self._landed = False
        #: Java's ``stageOnly()``: add the snapshot, move no ref (write-audit-publish).
        self._stage_only = False
        #: Commit attempts made by the last :meth:`commit` (1: no conflict).
        self._attempts = 0

    @property
    def commit_uuid(self) -> str:
        """The operation's UUID (in data file, manifest and manifest list names)."""
        return self._commit_uuid

    @property
    def branch(self) -> str:
        return self._branch

    @property
    def staged(self) -> bool:
        """Whether the commit only adds the snapshot (no ref moves): :meth:`stage_only`."""
        return self._stage_only

    @property
    def snapshot_id(self) -> int | None:
        """The new snapshot's id (None before the first attempt)."""
        return self._snapshot_id

    @property
    def attempts(self) -> int:
        """Commit attempts the last :meth:`commit` made: 1 when it did not conflict, one more
        per retry on another writer's commit (spec: "Commit Conflict Resolution and Retry")."""
        return self._attempts

    def stage_only(self, wap_id: str | None = None) -> None:
        """Stage the snapshot instead of moving the branch (Java's ``stageOnly()``); with
        ``wap_id`` its summary has ``wap.id`` (Spark's write-audit-publish), so
        ``Table.publish_changes(wap_id)`` finds and cherry-picks it."""
        self._stage_only = True
        if wap_id is not None:
            self._snapshot_properties[WAP_ID] = wap_id

    def report(self) -> CommitReport:
        """What the last successful :meth:`commit` did (``ValidationError`` before one)."""
        if not self._landed or self._snapshot_id is None:
            raise ValidationError("the operation has not committed", field="snapshot_id")
        return CommitReport(snapshot_id=self._snapshot_id, operation=self.operation(),
                            branch=None if self._stage_only else self._branch,
                            attempts=self._attempts,
                            wap_id=self._snapshot_properties.get(WAP_ID))

    @property
    def written_files(self) -> tuple[str, ...]:
        """Data files and manifests written so far (kept across retries)."""
        return tuple(self._written)

    @abstractmethod
    def operation(self) -> str:
        """The summary's ``operation``."""

    @abstractmethod
    def _manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        """The new snapshot's manifests, built on ``parent`` of ``base``."""

    @abstractmethod
    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        """The summary properties (without ``operation``)."""

    def _snapshot_id_for(self, base: TableMetadata) -> int:
        if self._snapshot_id is None or base.snapshot_by_id(self._snapshot_id) is not None:
            self._snapshot_id = new_snapshot_id(s.snapshot_id for s in base.snapshots)
        return self._snapshot_id

    def _new_manifest_location(self, base: TableMetadata) -> str:
        self._manifest_count += 1
        return join_location(metadata_dir(base),
                             f"{self._commit_uuid}-m{self._manifest_count - 1}.avro")

    def _write_manifest(self, base: TableMetadata, spec: PartitionSpec,
                        content: ManifestContent, entries: Sequence[ManifestEntry],
                        snapshot_id: int) -> ManifestFile:
        """Write the operation's next manifest (deleted if the commit finally fails)."""
        location = self._new_manifest_location(base)
        # listed before it is written: an interrupt as it is written still has it deleted
        self._written.append(location)
        self._manifests_written.append(location)
        return write_manifest(self._io, location, spec, base.schema, base.format_version,
                              content, list(entries), snapshot_id=snapshot_id,
                              properties=base.properties)

    def _write_rows(self, data: Any, metadata: TableMetadata, operation_id: str, *,
                    moved: bool = False) -> list[DataFile]:
        """Validate and write ``data`` as data files of the table (driver-local), named by
        ``operation_id``; nothing is written when validation fails. ``moved``: the rows are
        existing rows a rewrite moves, which may carry row lineage columns
        (:func:`~icenb.table.write.data_files.with_row_lineage`); other rows are new rows."""
        self.check_branch(metadata)
        schema = metadata.schema
        table = as_arrow_table(data, schema)
        if not moved:
            refuse_row_lineage(table.column_names, schema)
        files = write_data_files(
            self._io, table, schema, metadata.spec, metadata.sort_order, metadata.properties,
            location_provider(metadata.location, metadata.properties),
            format_version=metadata.format_version, operation_id=operation_id)
        self._written.extend(f.file_path for f in files)
        return files

    def _parent(self, base: TableMetadata) -> Snapshot | None:
        """The branch's snapshot (see :func:`branch_snapshot`)."""
        return _branch_head(base, self._branch)

    def check_branch(self, base: TableMetadata) -> None:
        """``ValidationError`` when the target ref is a tag."""
        _check_branch(base, self._branch)

    def _apply(self, base: TableMetadata, attempt: int, files: list[str]) -> Attempt:
        """Write this attempt's manifest list (its location goes to ``files`` first) and
        describe the commit on ``base``."""
        self.check_branch(base)
        parent = self._parent(base)
        ref = base.refs.get(self._branch)
        snapshot_id = self._snapshot_id_for(base)
        version = base.format_version
        sequence_number = base.last_sequence_number + 1 if version >= 2 else 0
        tree = self._write_tree(base, parent, snapshot_id, sequence_number, attempt, files)
        summary = {**self._snapshot_properties, **self._summary(base, parent),
                   ENGINE_NAME: "icenb"}
        snapshot = Snapshot(
            snapshot_id=snapshot_id,
            timestamp_ms=max(int(time.time() * 1000), base.last_updated_ms),
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            sequence_number=sequence_number,
            manifest_list=tree.manifest_list,
            summary=Summary(self.operation(), summary),
            schema_id=base.current_schema_id,
            first_row_id=tree.first_row_id if version >= 3 else None,
            added_rows=tree.added_rows if version >= 3 else None,
            root_manifest=tree.root_manifest,
        )
        if self._stage_only:  # Java's stageOnly(): the snapshot is added, no ref moves
            return Attempt(updates=[AddSnapshot(snapshot)], requirements=[])
        expected = (ref.snapshot_id if ref is not None else
                    base.current_snapshot_id if self._branch == MAIN_BRANCH else None)
        set_ref = (SetSnapshotRef(self._branch, snapshot_id, SnapshotRefType.BRANCH)
                   if ref is None else SetSnapshotRef(
                       self._branch, snapshot_id, SnapshotRefType.BRANCH,
                       ref.min_snapshots_to_keep, ref.max_snapshot_age_ms, ref.max_ref_age_ms))
        return Attempt(
            updates=[AddSnapshot(snapshot), set_ref],
            requirements=[AssertRefSnapshotId(self._branch, expected)])

    def _write_tree(self, base: TableMetadata, parent: Snapshot | None, snapshot_id: int,
                    sequence_number: int, attempt: int, files: list[str]) -> AttemptTree:
        """Write this attempt's top metadata file (its location goes to ``files``): the
        manifest list of :meth:`_manifests` (format versions 1-3). v4 producers override this;
        the others refuse a v4 table (``UnsupportedFeature``)."""
        version = base.format_version
        if version >= 4:
            raise UnsupportedFeature(
                f"{self.operation()!r} is not implemented for EXPERIMENTAL format-version 4 "
                "tables yet (docs/v4-layout.md)", field="format-version", value=version)
        manifests = self._manifests(base, parent)
        list_location = join_location(
            metadata_dir(base), f"snap-{snapshot_id}-{attempt}-{self._commit_uuid}.avro")
        files.append(list_location)
        info = write_manifest_list(
            self._io, list_location, manifests, format_version=version,
            snapshot_id=snapshot_id,
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            sequence_number=sequence_number,
            first_row_id=base.next_row_id if version >= 3 else None,
            properties=base.properties)
        return AttemptTree(manifest_list=list_location, first_row_id=info.first_row_id,
                     added_rows=info.added_rows)

    def _delete(self, locations: Iterable[str]) -> None:
        for location in locations:
            with contextlib.suppress(IcebergError):
                self._io.delete(location, missing_ok=True)

    def _cleanup(self, attempt_files: Iterable[str]) -> None:
        """Delete everything the operation wrote (it left no trace in the table)."""
        self._delete(attempt_files)
        self._delete(self._written)
        self._written.clear()

    def commit(self, base: LoadedTable) -> LoadedTable:
        """Commit on ``base`` (the table as last loaded), retrying on conflicts; the table as
        committed. Raises ``CommitConflict`` when every attempt conflicted; nothing the operation
        wrote is left then (nor on any other error, except ``CommitStateUnknown`` and an
        interrupt while the catalog swaps the pointer: :attr:`outcome_unknown`)."""
        policy = RetryPolicy.for_commit(base.metadata.properties)
        started = time.monotonic()
        attempt = 0
        current = base
        while True:
            attempt += 1
            self._attempts = attempt
            attempt_files: list[str] = []
            try:
                built = self._apply(current.metadata, attempt, attempt_files)
                check_requirements(current.metadata, built.requirements)
                new_metadata = apply_updates(current.metadata, built.updates,
                                             metadata_location=current.metadata_location)
            except BaseException:
                self._cleanup(attempt_files)
                raise
            try:
                committed = self._catalog.commit_table(
                    self._identifier, current.metadata_location, new_metadata,
                    base_metadata=current.metadata)
                self._landed = True
            except CommitStateUnknown:
                self._outcome_unknown = True
                raise  # the files may be referenced now: keep them
            except CommitConflict:
                self._delete(attempt_files)
                if not policy.backoff(attempt, started, self._sleep):
                    self._cleanup(())
                    raise
                try:
                    current = self._catalog.load_table(self._identifier)
                except BaseException:
                    self._cleanup(())
                    raise
                continue
            except IcebergError:
                self._cleanup(attempt_files)  # the catalog says the pointer did not move
                raise
            except BaseException:
                # Anything else (an interrupt, a bug) leaves the outcome unknown: files are kept.
                self._outcome_unknown = True
                raise
            return committed

    def abort(self) -> None:
        """Delete what the operation wrote, without committing (nothing once it committed)."""
        if not self._landed:
            self._cleanup(())

    @property
    def outcome_unknown(self) -> bool:
        """Whether a commit failed while the catalog swapped the pointer: the operation's files
        may be referenced now, so they are kept."""
        return self._outcome_unknown

    @contextlib.contextmanager
    def aborted_on_error(self) -> Iterator[None]:
        """On any error in the block (an interrupt included) delete what the operation wrote,
        unless it committed or its commit's outcome is unknown; the error is raised again.
        Around writing and committing, so an interrupt between the two leaves no file behind."""
        try:
            yield
        except BaseException:
            if not self._outcome_unknown:
                self.abort()
            raise


class FastAppend(SnapshotProducer):
    """Append data files in a new manifest; the parent's manifests are kept as they are
    (Java's ``FastAppend``: operation ``append``)."""

    def __init__(self, catalog: Catalog, identifier: Identifier, io: FileIO, *,
                 branch: str = MAIN_BRANCH,
                 snapshot_properties: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] | None = None,
                 commit_uuid: str | None = None) -> None:
        super().__init__(catalog, identifier, io, branch=branch,
                         snapshot_properties=snapshot_properties, sleep=sleep,
                         commit_uuid=commit_uuid)
        self._files: list[DataFile] = []
        self._manifest: ManifestFile | None = None

    def operation(self) -> str:
        return str(Operation.APPEND)

    def write(self, data: Any, metadata: TableMetadata) -> list[DataFile]:
        """Validate and write ``data`` as data files of the table (driver-local), and add them;
        nothing is written (and the table is untouched) when validation fails."""
        files = self._write_rows(data, metadata, self._commit_uuid)
        self._files.extend(files)
        return files

    def add_files(self, files: Iterable[DataFile]) -> None:
        """Add data files written elsewhere (e.g. by Spark executors)."""
        for f in files:
            if f.content != FileContent.DATA:
                raise ValidationError("an append adds data files only", field="content",
                                      file=f.file_path, value=int(f.content))
            self._files.append(f)

    @property
    def files(self) -> tuple[DataFile, ...]:
        return tuple(self._files)

    def _new_manifest(self, base: TableMetadata, snapshot_id: int) -> ManifestFile | None:
        if not self._files:
            return None
        spec_ids = {f.spec_id for f in self._files}
        if len(spec_ids) != 1:  # one manifest per spec, as Java; we write one spec at a time
            raise ValidationError("the files to append belong to different partition specs",
                                  field="spec_id", value=sorted(spec_ids))
        spec = base.spec_by_id(spec_ids.pop())
        if spec is None:
            raise ValidationError("the files' partition spec is not in the table",
                                  field="spec_id", value=self._files[0].spec_id)
        entries = [ManifestEntry(EntryStatus.ADDED, snapshot_id, None, None, f)
                   for f in self._files]
        return self._write_manifest(base, spec, ManifestContent.DATA, entries, snapshot_id)

    def _manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        assert self._snapshot_id is not None
        if self._manifest is None or self._manifest.added_snapshot_id != self._snapshot_id:
            if self._manifest is not None:  # the snapshot id had to change: rewrite it
                self._delete([self._manifest.manifest_path])
                self._written.remove(self._manifest.manifest_path)
            self._manifest = self._new_manifest(base, self._snapshot_id)
        existing = ([] if parent is None else
                    read_manifest_list(self._io, parent, base.format_version))
        return ([] if self._manifest is None else [self._manifest]) + existing

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        records = sum(f.record_count for f in self._files)
        size = sum(f.file_size_in_bytes for f in self._files)
        partitions = {(f.spec_id, f.partition) for f in self._files}
        out: dict[str, str] = {}
        if self._files:
            out[ADDED_FILES] = str(len(self._files))
        if records:
            out[ADDED_RECORDS] = str(records)
        if size:
            out[ADDED_FILE_SIZE] = str(size)
        out[CHANGED_PARTITION_COUNT] = str(len(partitions))
        add_totals(out, parent, {TOTAL_RECORDS: records, TOTAL_FILE_SIZE: size,
                                  TOTAL_DATA_FILES: len(self._files)})
        return out
