"""An Iceberg table: its metadata, scans of its snapshots and, through a catalog, its writes.

``icenb.open(location)`` loads the table metadata (spec: "Table Metadata") read-only; a table
loaded from a catalog (``icenb.warehouse(path).table(name)``) can also append and evolve, one
commit each. ``Table.scan`` and ``Table.at`` build :class:`~icenb.table.scan.Scan` objects for
the current state or a past one (spec: "Snapshot References", Appendix F "Point in Time Reads").
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import Any, Concatenate, ParamSpec, TypeVar

import pyarrow as pa

from icenb.catalog import Catalog, Identifier, LoadedTable, NamespaceLike, open_catalog
from icenb.errors import (
    IcebergError,
    IcebergWarning,
    NoSuchNamespace,
    NoSuchSnapshot,
    NoSuchTable,
    NoSuchView,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata
from icenb.options import get_options
from icenb.progress import (
    APPENDING,
    DELETING_ROWS,
    EXPIRING_SNAPSHOTS,
    OVERWRITING,
    REMOVING_ORPHAN_FILES,
    UPDATING_ROWS,
    UPDATING_TABLE,
    progress,
)
from icenb.reprs import safe_repr
from icenb.spec.expressions import Expression
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.partition_spec_update import SpecUpdate
from icenb.spec.schema import Schema
from icenb.spec.schema_update import SchemaUpdate
from icenb.spec.snapshot import (
    MAIN_BRANCH,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotRef,
)
from icenb.spec.sort_order import SortField, SortOrder, UnboundSortField
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit import manage_snapshots as refs_ops
from icenb.table.commit import metadata_change as table_update
from icenb.table.commit import new_producer
from icenb.table.commit.producer import RetryPolicy, commit_snapshot, refresh_on_error
from icenb.table.engine import Overwrite, engine
from icenb.table.explore.changelog import Changelog, table_changes
from icenb.table.explore.diff import SnapshotDiff, diff_snapshots
from icenb.table.explore.evolution_history import (
    SchemaHistory,
    SpecHistory,
    schema_history,
    spec_history,
)
from icenb.table.explore.history import MetadataLog, SnapshotLog, Snapshots
from icenb.table.explore.inspect import InspectTables
from icenb.table.explore.metadata_graph import (
    LayoutComparison,
    MetadataGraph,
    build_layout_comparison,
    build_metadata_graph,
    default_graph_snapshots,
    resolve_snapshot,
)
from icenb.table.explore.metadata_tree import MetadataTree, build_metadata_tree
from icenb.table.interactive import build_widget
from icenb.table.operations import CommitReport, TableOperations
from icenb.table.row_level.dry_run import DeleteDryRun
from icenb.table.scan import Scan, short_text

__all__ = ["Table", "load_table", "open_table"]


def _is_spark_dataframe(data: Any) -> bool:
    """A pyspark DataFrame (classic or Connect), recognized without importing pyspark."""
    return type(data).__module__.split(".")[0] == "pyspark" and hasattr(data, "sparkSession")


def timestamp_to_ms(value: datetime | str) -> int:
    """Epoch milliseconds of a datetime or ISO-8601 string; a naive time is taken as UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError("not an ISO-8601 timestamp", field="timestamp",
                                  value=value) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    delta = value - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_P = ParamSpec("_P")
_R = TypeVar("_R")

#: ``NotFound`` errors of a lookup (a name or an id), not of a file that is gone.
_LOOKUPS = (NoSuchTable, NoSuchView, NoSuchNamespace, NoSuchSnapshot)


def _listed_files(metadata: TableMetadata) -> set[str]:
    """The files a metadata document names itself: manifest lists, v4 root manifests and
    statistics files (a missing one is a damaged table, not a stale handle)."""
    out: set[str] = set()
    for snap in metadata.snapshots:
        out.update(p for p in (snap.manifest_list, snap.root_manifest) if p is not None)
    out.update(f.statistics_path for f in metadata.statistics)
    out.update(f.statistics_path for f in metadata.partition_statistics)
    return out


def _write(method: Callable[Concatenate[Table, _P], _R]) -> Callable[Concatenate[Table, _P], _R]:
    """Mark a method as a write of the table, redone when the handle was stale.

    A write plans on the state the handle loaded. When another writer has since removed files
    that state lists (e.g. expired its snapshots), the write fails with ``NotFound``: then the
    table is refreshed and the whole write is run again on the new state, as a conflicting
    commit is re-applied (spec: "Commit Conflict Resolution and Retry"), within the table's
    ``commit.retry.*`` policy (:class:`RetryPolicy`). The error is raised as it is when the
    write committed, when the table has not moved on since it was loaded, or when the current
    metadata itself lists the missing file. Long writes show progress (:mod:`icenb.progress`)."""

    label = _PROGRESS_LABELS.get(method.__name__, UPDATING_TABLE)

    @functools.wraps(method)
    def run(self: Table, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        started = time.monotonic()
        attempt = 0
        # data that reads once (a RecordBatchReader, a generator) may be consumed by the
        # failed attempt: redoing would write nothing, so such a write is never redone
        once = any(isinstance(a, (pa.RecordBatchReader, Iterator))
                   for a in (*args, *kwargs.values()))
        with progress(label):
            while True:
                attempt += 1
                loaded_from, commits = self._opened_from, self._commits
                try:
                    return method(self, *args, **kwargs)
                except NotFound as error:
                    if (once or self._commits != commits
                            or not self._moved_past(error, loaded_from)
                            or not RetryPolicy.for_commit(self._metadata.properties).backoff(
                                attempt, started)):
                        raise

    return run


#: The progress description of each write (the others: ``Updating table``).
_PROGRESS_LABELS = {
    "append": APPENDING, "overwrite": OVERWRITING, "dynamic_partition_overwrite": OVERWRITING,
    "delete": DELETING_ROWS, "delete_by_key": DELETING_ROWS, "update": UPDATING_ROWS,
    "upsert": UPDATING_ROWS, "expire_snapshots": EXPIRING_SNAPSHOTS,
    "remove_orphan_files": REMOVING_ORPHAN_FILES,
}


@safe_repr
class Table:
    """A table's metadata, with scans of its snapshots; writes when loaded from a catalog.

    Built by :func:`icenb.open` (read-only) or by a catalog / warehouse. Everything but
    :meth:`refresh`, the writes and the execution methods of the scans it makes works on the
    loaded metadata, without I/O.
    """

    def __init__(self, metadata: TableMetadata, io: FileIO, *, opened_from: str,
                 catalog: Catalog | None = None, identifier: Identifier | None = None) -> None:
        self._metadata = metadata
        self._io = io
        self._opened_from = opened_from
        self._catalog = catalog
        self._identifier = identifier
        self._commits = 0  # commits made through this handle (see ``_write``)
        self._last_commit: CommitReport | None = None

    @property
    def catalog(self) -> Catalog | None:
        """The catalog the table was loaded from (None when opened by location)."""
        return self._catalog

    @property
    def identifier(self) -> Identifier | None:
        """The table's identifier in :attr:`catalog` (None when opened by location)."""
        return self._identifier

    # ------------------------------------------------------------------ metadata

    @property
    def metadata(self) -> TableMetadata:
        """The loaded table metadata."""
        return self._metadata

    @property
    def io(self) -> FileIO:
        """The FileIO the table reads through."""
        return self._io

    @property
    def location(self) -> str:
        """The table's base location (``location`` in the metadata)."""
        return self._metadata.location

    @property
    def metadata_location(self) -> str | None:
        """The metadata file the current state was read from."""
        return self._metadata.source_file

    @property
    def format_version(self) -> int:
        """The table's format version (1, 2 or 3)."""
        return self._metadata.format_version

    @property
    def schema(self) -> Schema:
        """The current schema."""
        return self._metadata.schema

    @property
    def spec(self) -> PartitionSpec:
        """The default partition spec."""
        return self._metadata.spec

    @property
    def sort_order(self) -> SortOrder:
        """The default sort order."""
        return self._metadata.sort_order

    @property
    def properties(self) -> Mapping[str, str]:
        """The table properties."""
        return self._metadata.properties

    @property
    def snapshots(self) -> Snapshots:
        """Every snapshot in the metadata, in metadata order (a tuple; shows as the tree)."""
        return Snapshots(self._metadata.snapshots, self._metadata, self.metadata_location)

    @property
    def current_snapshot(self) -> Snapshot | None:
        """The current snapshot of ``main``, or None for an empty table."""
        return self._metadata.current_snapshot()

    @property
    def refs(self) -> Mapping[str, SnapshotRef]:
        """Branches and tags by name (``main`` included when there is a current snapshot)."""
        return self._metadata.refs

    @property
    def inspect(self) -> InspectTables:
        """Metadata tables (snapshots, history, refs, manifests, entries, files, ...) as Arrow."""
        return InspectTables(self)

    @property
    def history(self) -> SnapshotLog:
        """The snapshot log: when each snapshot became current (spec: ``snapshot-log``)."""
        return SnapshotLog(self._metadata.snapshot_log, self._metadata, self.metadata_location)

    @property
    def metadata_log(self) -> MetadataLog:
        """Previous metadata files, oldest first (spec: ``metadata-log``)."""
        return MetadataLog(self._metadata.metadata_log, self._metadata, self.metadata_location)

    def snapshot(self, snapshot_id: int) -> Snapshot:
        """The snapshot with this id; ``NoSuchSnapshot`` when absent (e.g. expired)."""
        if type(snapshot_id) is not int:
            raise ValidationError("a snapshot id is an integer", field="snapshot-id",
                                  value=snapshot_id)
        snap = self._metadata.snapshot_by_id(snapshot_id)
        if snap is None:
            raise NoSuchSnapshot("no snapshot with this id in the table metadata",
                                 file=self.metadata_location, field="snapshot-id",
                                 value=snapshot_id)
        return snap

    def refresh(self) -> Table:
        """Reload the metadata: the newest metadata file when opened from a directory (a
        metadata file never changes, so a table opened from a file stays as it is); the
        catalog's current metadata when loaded from a catalog."""
        if self._catalog is not None and self._identifier is not None:
            loaded = self._catalog.load_table(self._identifier)
            self._metadata = loaded.metadata
            self._opened_from = loaded.metadata_location
        elif self._opened_from != self._metadata.source_file:
            self._metadata = load_table_metadata(self._opened_from, self._io)
        return self

    # ------------------------------------------------------------------ writes

    def _writable(self) -> tuple[Catalog, Identifier]:
        """The catalog and identifier to commit to; a table opened by location is read-only."""
        if self._catalog is None or self._identifier is None:
            raise UnsupportedFeature(
                "this table was opened by location and is read-only: load it from a catalog "
                "(icenb.warehouse(path).table(name) or icenb.load_table) to write to it",
                file=self.metadata_location, field="catalog")
        return self._catalog, self._identifier

    def _loaded(self) -> LoadedTable:
        """The table as last loaded or committed (the base of the next commit)."""
        _, identifier = self._writable()
        return LoadedTable(identifier, self._opened_from, self._metadata, self._io)

    def _committed(self, committed: LoadedTable) -> None:
        """Show the state a commit produced."""
        self._metadata = committed.metadata
        self._opened_from = committed.metadata_location
        self._commits += 1
        self._last_commit = None  # until a snapshot producer reports (see ``last_commit``)

    def _reported(self, report: CommitReport) -> None:
        self._last_commit = report

    @property
    def last_commit(self) -> CommitReport | None:
        """What the last commit through this handle did, when it was a snapshot commit made in
        this process (append, overwrite, delete, update, ... and a cherry-pick that re-adds
        files): snapshot id, operation, branch (None: staged), ``attempts`` and ``retries``
        (spec: "Commit Conflict Resolution and Retry"). None before any, after a metadata or
        ref change, and after a write of a Spark DataFrame (committed by a Spark worker)."""
        return self._last_commit

    def _moved_past(self, error: NotFound, loaded_from: str) -> bool:
        """Whether ``error``, raised by a write planned on the state loaded from
        ``loaded_from``, is a file that state listed and the catalog's table no longer needs:
        the table (refreshed now) has moved on and its metadata does not list the file."""
        if (self._catalog is None or self._identifier is None or error.file is None
                or isinstance(error, _LOOKUPS)):
            return False
        try:
            fresh = self.refresh().metadata
        except IcebergError:
            return False
        return self._opened_from != loaded_from and error.file not in _listed_files(fresh)

    @property
    def operations(self) -> TableOperations:
        """What operations need of this table (:class:`~icenb.table.operations.TableOperations`):
        the commit target, the current state, how a commit is shown, refresh, FileIO."""
        return TableOperations(commit_target=self._writable, current=self._loaded,
                               committed=self._committed,
                               refresh=lambda: self.refresh().metadata, io=self._io,
                               reported=self._reported)

    def update_schema(self, *, allow_incompatible_changes: bool = False,
                      case_sensitive: bool = True) -> AbstractContextManager[SchemaUpdate]:
        """``with t.update_schema() as u: u.add_column("c", "string")`` evolves the schema in
        one commit when the block ends (spec: "Schema Evolution"); it fails with
        ``CommitConflict`` when the schema changed concurrently."""
        return table_update.update_schema(
            self, allow_incompatible_changes=allow_incompatible_changes,
            case_sensitive=case_sensitive)

    def update_spec(self, *, case_sensitive: bool = True) -> AbstractContextManager[SpecUpdate]:
        """``with t.update_spec() as u: u.add_field("bucket(16, id)")`` evolves the default
        partition spec in one commit when the block ends (spec: "Partition Evolution")."""
        return table_update.update_spec(self, case_sensitive=case_sensitive)

    @_write
    def set_current_schema(self, schema_id: int) -> None:
        """Make an earlier schema current again in one commit: undoes a schema change (spec:
        Table Metadata Fields ``current-schema-id``)."""
        table_update.set_current_schema(self, schema_id)

    @_write
    def set_default_spec(self, spec_id: int) -> None:
        """Make an earlier partition spec the default again in one commit: undoes a spec
        change (spec: "Partition Evolution")."""
        table_update.set_default_spec(self, spec_id)

    @_write
    def replace_sort_order(self, *fields: str | UnboundSortField | SortField,
                           case_sensitive: bool = True) -> SortOrder:
        """Make ``fields`` (``"id"``, ``"ts desc nulls last"``; none: unsorted) the default sort
        order in one commit; the new order (spec: "Sorting")."""
        return table_update.replace_sort_order_of(self, fields, case_sensitive=case_sensitive)

    @_write
    def set_properties(self, properties: Mapping[str, str]) -> None:
        """Set table properties in one commit."""
        table_update.set_properties(self, properties)

    @_write
    def remove_properties(self, keys: Iterable[str]) -> None:
        """Remove table properties in one commit (absent keys are ignored)."""
        table_update.remove_properties(self, keys)

    def _write_spark(self, df: Any, overwrite: Overwrite | None, branch: str,
                     snapshot_properties: Mapping[str, str] | None) -> Snapshot:
        """Write a Spark DataFrame through the ``icenb`` data source (:mod:`icenb.spark.writer`:
        tasks write the files, the driver commits one snapshot)."""
        catalog, identifier = self._writable()
        with refresh_on_error(self):
            committed, snap = engine().write_dataframe(
                df, catalog, identifier, overwrite=overwrite, branch=branch,
                snapshot_properties=snapshot_properties)
        self._committed(committed)
        return snap

    @_write
    def append(self, data: Any, *, branch: str = MAIN_BRANCH,
               snapshot_properties: Mapping[str, str] | None = None) -> Snapshot:
        """Append rows (pyarrow Table/RecordBatch, pandas DataFrame, list of dicts or Spark
        DataFrame) as one new snapshot of ``branch`` (created from the current snapshot when
        missing); the snapshot. A Spark DataFrame is written by Spark tasks and committed once
        on the driver (:mod:`icenb.spark.writer`).

        Validated and cast against the table schema before anything is written; a commit that
        conflicts is re-applied on the new state (spec: "Commit Conflict Resolution and
        Retry"); a commit that finally fails leaves no file behind.
        """
        catalog, identifier = self._writable()
        if _is_spark_dataframe(data):
            return self._write_spark(data, None, branch, snapshot_properties)
        producer = new_producer("append", catalog, identifier, self._io, self._metadata,
                                branch=branch, snapshot_properties=snapshot_properties)
        with producer.aborted_on_error():  # an interrupt in between leaves no file either
            producer.write(data, self._metadata)
            return commit_snapshot(self, producer)

    # ------------------------------------------------------------------ partition statistics

    @_write
    def compute_partition_stats(self, snapshot_id: int | None = None, *,
                                register: bool = True) -> PartitionStatisticsFile:
        """Compute the partition statistics of a snapshot (default: the current one), write
        them as ``metadata/partition-stats-<id>-<uuid>.parquet`` and, with ``register``,
        register the file in one commit (spec: "Partition Statistics"); the file's entry. A
        snapshot that already has a registered file gets that file back."""
        from icenb.table.commit.partition_statistics import compute_and_register

        return compute_and_register(self, snapshot_id, register=register)

    def partition_stats(self, snapshot_id: int | None = None) -> pa.Table:
        """The rows of the partition statistics file registered for a snapshot (default: the
        current one) as Arrow; ``NotFound`` when none is registered."""
        from icenb.errors import NotFound
        from icenb.table.commit.partition_statistics import read_partition_stats

        snap = self.current_snapshot if snapshot_id is None else self.snapshot(snapshot_id)
        for f in self._metadata.partition_statistics:
            if snap is not None and f.snapshot_id == snap.snapshot_id:
                return read_partition_stats(self._io, f)
        raise NotFound("no partition statistics file is registered for this snapshot "
                       "(compute_partition_stats() makes one)", file=self.metadata_location,
                       field="partition-statistics",
                       value=None if snap is None else snap.snapshot_id)

    # ------------------------------------------------------------------ refs

    def manage_snapshots(self) -> refs_ops.ManageSnapshots:
        """``with t.manage_snapshots() as m: m.create_tag("v1"); m.rollback_to(sid)``: ref
        changes committed together, in one commit, when the block ends (Java's chained
        ``ManageSnapshots``; see :mod:`icenb.table.commit.manage_snapshots`)."""
        return refs_ops.ManageSnapshots(self)

    @_write
    def create_branch(self, name: str, snapshot_id: int | None = None, *,
                      min_snapshots_to_keep: int | None = None,
                      max_snapshot_age_ms: int | None = None,
                      max_ref_age_ms: int | None = None) -> SnapshotRef:
        """Create branch ``name`` at ``snapshot_id`` (default: the current snapshot; on a table
        without one, an empty snapshot is committed to the branch, as Java does), with optional
        retention (spec: "Snapshot References", "Snapshot Retention Policy"); the new ref."""
        return refs_ops.create_branch(
            self, name, snapshot_id, min_snapshots_to_keep=min_snapshots_to_keep,
            max_snapshot_age_ms=max_snapshot_age_ms, max_ref_age_ms=max_ref_age_ms)

    @_write
    def create_tag(self, name: str, snapshot_id: int | None = None, *,
                   max_ref_age_ms: int | None = None) -> SnapshotRef:
        """Create tag ``name`` at ``snapshot_id`` (default: the current snapshot); the ref."""
        with self.manage_snapshots() as m:
            return m.create_tag(name, snapshot_id, max_ref_age_ms=max_ref_age_ms)

    @_write
    def replace_branch(self, name: str, source: int | str) -> SnapshotRef:
        """Point branch ``name`` at a snapshot id or at ref ``source``'s snapshot (retention
        kept); the ref."""
        with self.manage_snapshots() as m:
            return m.replace_branch(name, source)

    @_write
    def replace_tag(self, name: str, source: int | str) -> SnapshotRef:
        """Point tag ``name`` at a snapshot id or at ref ``source``'s snapshot; the ref."""
        with self.manage_snapshots() as m:
            return m.replace_tag(name, source)

    @_write
    def fast_forward(self, branch: str, to: str) -> SnapshotRef:
        """Move ``branch`` to ref ``to``'s snapshot, which must descend from the branch's."""
        with self.manage_snapshots() as m:
            return m.fast_forward(branch, to)

    @_write
    def rename_branch(self, name: str, new_name: str) -> SnapshotRef:
        """Rename a branch (not ``main``); the ref."""
        with self.manage_snapshots() as m:
            return m.rename_branch(name, new_name)

    @_write
    def remove_branch(self, name: str) -> None:
        """Remove a branch (not ``main``); its snapshots stay until they expire."""
        with self.manage_snapshots() as m:
            m.remove_branch(name)

    @_write
    def remove_tag(self, name: str) -> None:
        """Remove a tag."""
        with self.manage_snapshots() as m:
            m.remove_tag(name)

    @_write
    def set_branch_retention(
            self, name: str, *, min_snapshots_to_keep: int | refs_ops.Unset | None = refs_ops.UNSET,
            max_snapshot_age_ms: int | refs_ops.Unset | None = refs_ops.UNSET,
            max_ref_age_ms: int | refs_ops.Unset | None = refs_ops.UNSET) -> SnapshotRef:
        """Set a branch's retention: the settings given replace its own (None clears one;
        spec: "Snapshot Retention Policy": positive values); the ref."""
        with self.manage_snapshots() as m:
            return m.set_branch_retention(
                name, min_snapshots_to_keep=min_snapshots_to_keep,
                max_snapshot_age_ms=max_snapshot_age_ms, max_ref_age_ms=max_ref_age_ms)

    @_write
    def set_ref_retention(self, name: str, *, max_ref_age_ms: int | None) -> SnapshotRef:
        """Set how long a branch or tag is kept (``max-ref-age-ms``; None: forever)."""
        with self.manage_snapshots() as m:
            return m.set_ref_retention(name, max_ref_age_ms=max_ref_age_ms)

    @_write
    def rollback_to(self, target: int | str | datetime | None = None, /, *,
                    timestamp_ms: int | None = None, branch: str = MAIN_BRANCH) -> Snapshot:
        """Reset ``branch`` (default ``main``) to one of its ancestors: a snapshot id, a ref's
        snapshot (a ref name), or the newest ancestor committed strictly before a time
        (``datetime``, ISO-8601 string or ``timestamp_ms=``), as Java's ``rollbackTo`` /
        ``rollbackToTime``; the snapshot now at the head."""
        with self.manage_snapshots() as m:
            return m.rollback_to(target, timestamp_ms=timestamp_ms, branch=branch)

    @_write
    def set_current_snapshot(self, snapshot_id: int) -> Snapshot:
        """Make any snapshot the current one (``main``'s head), as Java's
        ``setCurrentSnapshot``; the snapshot."""
        with self.manage_snapshots() as m:
            return m.set_current_snapshot(snapshot_id)

    @_write
    def cherry_pick(self, snapshot_id: int, *, branch: str = MAIN_BRANCH) -> Snapshot:
        """Apply snapshot ``snapshot_id``'s change to ``branch``: fast-forward when its parent
        is the branch head, else re-add an append's files as a new snapshot (Java's
        ``cherrypick``); the branch's new head."""
        return refs_ops.cherry_pick(self, snapshot_id, branch=branch)

    @_write
    def publish_changes(self, wap_id: str, *, branch: str = MAIN_BRANCH) -> Snapshot:
        """Publish the snapshot staged with ``wap.id`` = ``wap_id`` (write-audit-publish:
        ``icenb.set_options(wap_id=...)`` on a ``write.wap.enabled`` table) by cherry-picking it
        onto ``branch`` (Spark's ``publish_changes`` procedure); the branch's new head.
        ``ValidationError`` naming ``wap.id`` when no snapshot or several carry it, or when it
        was published already."""
        return refs_ops.publish_changes(self, wap_id, branch=branch)

    # ------------------------------------------------------------------ compaction

    @_write
    def rewrite_data_files(self, filter: str | Expression = "true", *, strategy: str = "binpack",
                           sort_order: str | Sequence[str] | None = None,
                           target_file_size_bytes: int | None = None,
                           min_input_files: int | None = None,
                           delete_file_threshold: int | None = None, rewrite_all: bool = False,
                           branch: str = MAIN_BRANCH,
                           snapshot_properties: Mapping[str, str] | None = None) -> Any:
        """Compact small (or too large) data files of the partitions ``filter`` may match into
        files of about ``target_file_size_bytes`` (default ``write.target-file-size-bytes``),
        deletes applied, in one ``replace`` snapshot, planned as Iceberg Java's
        ``rewrite_data_files`` (``strategy`` ``binpack`` or ``sort``, ``min_input_files``
        default 5); a :class:`~icenb.table.commit.rewrite_data_files.RewriteDataFilesResult`
        (its ``snapshot`` None when nothing needed rewriting). v3 rows keep their lineage."""
        from icenb.table.commit.rewrite_data_files import rewrite_data_files

        return rewrite_data_files(
            self, filter, strategy=strategy, sort_order=sort_order,
            target_file_size_bytes=target_file_size_bytes, min_input_files=min_input_files,
            delete_file_threshold=delete_file_threshold, rewrite_all=rewrite_all,
            branch=branch, snapshot_properties=snapshot_properties)

    # ------------------------------------------------------------------ maintenance

    @_write
    def rewrite_manifests(self, *, spec_id: int | None = None,
                          target_manifest_size_bytes: int | None = None,
                          branch: str = MAIN_BRANCH,
                          snapshot_properties: Mapping[str, str] | None = None) -> Any:
        """Rewrite the branch's data manifests (of every spec, or of ``spec_id``) into
        manifests clustered by partition of about ``target_manifest_size_bytes`` (default
        ``commit.manifest.target-size-bytes``) in one ``replace`` snapshot, as Iceberg Java's
        ``rewrite_manifests``; entries keep their snapshot ids, sequence numbers and row ids. A
        :class:`~icenb.table.commit.rewrite_manifests.RewriteManifestsResult` (its ``snapshot``
        None when nothing needed rewriting). Unlike Java's procedure, whose default is the
        current spec only, no ``spec_id`` means every spec. Not on EXPERIMENTAL v4 tables."""
        from icenb.table.commit.rewrite_manifests import rewrite_manifests

        return rewrite_manifests(self, spec_id=spec_id,
                                 target_manifest_size_bytes=target_manifest_size_bytes,
                                 branch=branch, snapshot_properties=snapshot_properties)

    @_write
    def rewrite_position_deletes(self, filter: str | Expression = "true", *,
                                 branch: str = MAIN_BRANCH,
                                 snapshot_properties: Mapping[str, str] | None = None) -> Any:
        """Merge the position delete files of each partition ``filter`` may match into fewer
        files, dropping deletes of rows no longer live, in one ``replace`` snapshot (Iceberg
        Java's ``rewrite_position_delete_files``); on v3 tables position delete files become
        deletion vectors, one per data file. A :class:`~icenb.table.commit.
        rewrite_position_deletes.RewritePositionDeletesResult` (its ``snapshot`` None when
        nothing needed rewriting). Not on EXPERIMENTAL v4 tables."""
        from icenb.table.commit.rewrite_position_deletes import rewrite_position_deletes

        return rewrite_position_deletes(self, filter, branch=branch,
                                        snapshot_properties=snapshot_properties)

    # ------------------------------------------------------------------ expiry and upgrades

    @_write
    def expire_snapshots(self, older_than: datetime | str | int | None = None, *,
                         retain_last: int | None = None,
                         snapshot_ids: Iterable[int] | None = None, clean_files: bool = True,
                         dry_run: bool = False, delete_outside_table: bool = False) -> Any:
        """Remove snapshots the retention policy no longer keeps (spec: "Snapshot Retention
        Policy"; ``older_than`` a time or epoch ms, ``retain_last`` a count, replacing the
        table's ``history.expire.*`` defaults; ``snapshot_ids`` expire too) in one commit, then
        delete the files only they used; an :class:`~icenb.table.commit.expire_snapshots.
        ExpireSnapshotsResult`. ``dry_run`` only tells what would be expired and deleted.
        Files outside the table's location are kept and listed (``kept_outside``) unless
        ``delete_outside_table=True``."""
        from icenb.table.commit.expire_snapshots import expire_snapshots

        older_than_ms: int | None
        if older_than is None or (isinstance(older_than, int)
                                  and not isinstance(older_than, bool)):
            older_than_ms = older_than
        elif isinstance(older_than, (datetime, str)):
            older_than_ms = timestamp_to_ms(older_than)
        else:
            raise ValidationError("older_than must be a datetime, ISO string or epoch ms",
                                  field="older_than", value=older_than)
        return expire_snapshots(self, older_than_ms=older_than_ms, retain_last=retain_last,
                                snapshot_ids=snapshot_ids, clean_files=clean_files,
                                dry_run=dry_run, delete_outside_table=delete_outside_table)

    @_write
    def remove_orphan_files(self, older_than: datetime | str | int | None = None, *,
                            dry_run: bool = False) -> Any:
        """Delete the files under the table's location that no snapshot, ref, statistics file
        or metadata-log entry references and that are older than ``older_than`` (default: 3
        days ago, so files of a write still in flight are never taken) - what crashes and
        interrupted writes leave (Spark's ``remove_orphan_files``); an
        :class:`~icenb.table.commit.remove_orphan_files.OrphanFiles`. ``dry_run`` only lists
        them. Nothing outside the table's folders is listed or deleted."""
        from icenb.table.commit.remove_orphan_files import remove_orphan_files

        older_than_ms: int | None = None
        if isinstance(older_than, (datetime, str)):
            older_than_ms = timestamp_to_ms(older_than)
        elif isinstance(older_than, int) and not isinstance(older_than, bool):
            older_than_ms = older_than
        elif older_than is not None:
            raise ValidationError("older_than must be a datetime, ISO string or epoch ms",
                                  field="older_than", value=older_than)
        self.refresh()
        return remove_orphan_files(self, older_than_ms=older_than_ms, dry_run=dry_run)

    @_write
    def upgrade(self, format_version: int) -> bool:
        """Upgrade the table's format version (1 -> 2 -> 3; spec: Appendix E) in one commit;
        False when it already has it. Nothing is rewritten; a downgrade is refused."""
        from icenb.table.commit.upgrade import upgrade_format_version

        return upgrade_format_version(self, format_version)

    # ------------------------------------------------------------------ row-level changes

    @_write
    def delete_by_key(self, keys: Any, *, on: str | Sequence[str] | None = None,
                      branch: str = MAIN_BRANCH,
                      snapshot_properties: Mapping[str, str] | None = None) -> Snapshot | None:
        """Delete the rows whose key columns (``on``; default the schema's identifier fields)
        equal a row of ``keys`` (Arrow, pandas or list of dicts), with equality delete files
        in one snapshot (v2+; spec: "Equality Delete Files"); None when nothing to delete."""
        from icenb.table.row_level.merge_on_read import delete_by_key

        return delete_by_key(self, keys, on=on, branch=branch,
                             snapshot_properties=snapshot_properties)

    @_write
    def upsert(self, data: Any, *, on: str | Sequence[str] | None = None,
               branch: str = MAIN_BRANCH,
               snapshot_properties: Mapping[str, str] | None = None) -> Snapshot:
        """Insert ``data``'s rows, replacing the rows with the same key (``on``; default the
        identifier fields), in one snapshot: equality deletes of the keys + the new rows (v2+).
        Keys must be unique within ``data``."""
        from icenb.table.row_level.merge_on_read import upsert

        return upsert(self, data, on=on, branch=branch, snapshot_properties=snapshot_properties)

    @_write
    def update(self, set: Mapping[str, Any], filter: str | Expression = "true", *,
               mode: str | None = None, branch: str = MAIN_BRANCH,
               snapshot_properties: Mapping[str, str] | None = None) -> Snapshot | None:
        """Set columns of the rows matching ``filter``: ``t.update({"s": "x"}, "id < 10")``. A
        value is a literal (cast to the column type) or a callable of the matching rows (Arrow)
        returning a value or one value per row. One ``overwrite`` snapshot; None when no row
        matches. ``mode`` (default: table property ``write.update.mode``, else
        ``copy-on-write``): copy-on-write rewrites the files holding matching rows;
        merge-on-read (v2+) adds the changed rows and deletes the old ones by position /
        deletion vector."""
        from icenb.table.row_level.merge_on_read import update

        return update(self, set, filter, mode=mode, branch=branch,
                      snapshot_properties=snapshot_properties)

    # ------------------------------------------------------------------ overwrite and delete

    @_write
    def delete(self, filter: str | Expression, mode: str | None = None, *,
               branch: str = MAIN_BRANCH,
               snapshot_properties: Mapping[str, str] | None = None) -> Snapshot | None:
        """Delete the rows matching ``filter`` in one snapshot; None when no row matches.
        ``mode`` (default: table property ``write.delete.mode``, else ``copy-on-write``):
        copy-on-write removes whole matching files and rewrites partly matching ones
        (:mod:`icenb.table.row_level.copy_on_write`); merge-on-read writes delete files (v2+)."""
        from icenb.table.row_level.copy_on_write import MERGE_ON_READ, delete_mode, delete_rows

        self._writable()
        if delete_mode(self._metadata.properties, mode) == MERGE_ON_READ:
            from icenb.table.row_level.merge_on_read import delete_merge_on_read

            return delete_merge_on_read(self, filter, branch=branch,
                                        snapshot_properties=snapshot_properties)
        return delete_rows(self, filter, branch=branch, snapshot_properties=snapshot_properties)

    def delete_dry_run(self, filter: str | Expression, *, branch: str = MAIN_BRANCH,
                       case_sensitive: bool = True) -> DeleteDryRun:
        """What deleting ``filter`` from ``branch`` would touch, from metadata alone: candidate
        files (inclusive projection and metrics), files removed whole (strict projection or
        metrics), bounds on the rows (:mod:`icenb.table.row_level.dry_run`). Reads manifests
        only."""
        from icenb.table.row_level.dry_run import delete_dry_run

        return delete_dry_run(self._io, self._metadata, filter, branch=branch,
                              case_sensitive=case_sensitive)

    @_write
    def overwrite(self, data: Any, filter: str | Expression | None = None, *,
                  branch: str = MAIN_BRANCH,
                  snapshot_properties: Mapping[str, str] | None = None) -> Snapshot:
        """Replace the rows matching ``filter`` (None: all rows) by ``data`` in one
        ``overwrite`` snapshot (matching rows deleted copy-on-write). A Spark DataFrame is
        written by Spark tasks; the driver rewrites partly matching files and commits."""
        from icenb.table.row_level.copy_on_write import overwrite_rows

        if _is_spark_dataframe(data):
            return self._write_spark(data, Overwrite(filter=None if filter is None
                                                     else str(filter)),
                                     branch, snapshot_properties)
        return overwrite_rows(self, data, filter, branch=branch,
                              snapshot_properties=snapshot_properties)

    @_write
    def dynamic_partition_overwrite(self, data: Any, *, branch: str = MAIN_BRANCH,
                                    snapshot_properties: Mapping[str, str] | None = None
                                    ) -> Snapshot:
        """Replace every partition ``data`` has rows in by ``data``'s rows, in one
        ``overwrite`` snapshot (summary ``replace-partitions=true``); an unpartitioned table
        is replaced whole, as Spark's dynamic partition overwrite."""
        from icenb.table.row_level.copy_on_write import dynamic_partition_overwrite

        if _is_spark_dataframe(data):
            return self._write_spark(data, Overwrite(dynamic=True), branch,
                                     snapshot_properties)
        if self._metadata.format_version >= 4:  # EXPERIMENTAL v4
                                                # (docs/v4-layout.md#dynamic-overwrite)
            from icenb.table.commit.v4_replace_partitions import v4_dynamic_partition_overwrite

            return v4_dynamic_partition_overwrite(self, data, branch=branch,
                                                  snapshot_properties=snapshot_properties)
        return dynamic_partition_overwrite(self, data, branch=branch,
                                           snapshot_properties=snapshot_properties)

    # ------------------------------------------------------------------ scans

    def _ref_scan_state(self, name: str) -> tuple[int, Schema]:
        """Snapshot id and schema for a ref: branch -> current schema, tag -> snapshot's."""
        md = self._metadata
        ref = md.refs.get(name)
        snap = md.snapshot_for_ref(name)
        if snap is None:
            if ref is None and name != MAIN_BRANCH:
                raise NoSuchSnapshot(f"no branch or tag named {name!r}",
                                     file=self.metadata_location, field="refs", value=name)
            raise NoSuchSnapshot(f"ref {name!r} points to no snapshot in the metadata",
                                 file=self.metadata_location, field=f"refs.{name}",
                                 value=None if ref is None else ref.snapshot_id)
        if ref is None or ref.is_branch:
            return snap.snapshot_id, md.schema
        return snap.snapshot_id, md.schema_for_snapshot(snap.snapshot_id)

    def scan(self, filter: str | Expression = "true",
             columns: str | tuple[str, ...] | list[str] | None = None,
             snapshot_id: int | None = None, ref: str | None = None,
             case_sensitive: bool = True) -> Scan:
        """A scan of the current snapshot, or of ``snapshot_id`` or ``ref``. ``columns`` is a
        sequence of names, or one name as a string.

        Schema used, as the reference implementation: a snapshot id or a tag reads with that
        snapshot's schema; a branch (and the default, ``main``) with the table's current schema.
        """
        if snapshot_id is not None and ref is not None:
            raise ValidationError("give snapshot_id or ref, not both", field="ref", value=ref)
        if ref is not None and not isinstance(ref, str):
            raise ValidationError("a ref is a branch or tag name", field="ref", value=ref)
        md = self._metadata
        if snapshot_id is not None:
            sid: int | None = self.snapshot(snapshot_id).snapshot_id
            schema = md.schema_for_snapshot(snapshot_id)
        elif ref is not None:
            sid, schema = self._ref_scan_state(ref)
        else:
            current = md.current_snapshot()
            sid, schema = (None if current is None else current.snapshot_id), md.schema
        return Scan(self._io, md, sid, schema, row_filter=filter,
                    columns=tuple(columns) if isinstance(columns, list) else columns,
                    case_sensitive=case_sensitive)

    def to_arrow(self) -> pa.Table:
        """Every row of the current snapshot as Arrow (``scan().to_arrow()``)."""
        return self.scan().to_arrow()

    def to_pandas(self) -> Any:
        """Every row of the current snapshot as a pandas DataFrame (``scan().to_pandas()``)."""
        return self.scan().to_pandas()

    def at(self, when: int | str | datetime | None = None, /, *,
           timestamp_ms: int | None = None) -> Scan:
        """A scan of the table as it was: at a snapshot id (int), a branch or tag (str), or a
        time (``datetime``, naive = UTC; an ISO-8601 string; or ``timestamp_ms=``).

        A time picks the snapshot that was current then from the snapshot log (spec: Appendix
        F, "Point in Time Reads"). A string is a ref name when such a ref exists, else it must
        be an ISO timestamp. An int is always a snapshot id. Schema: a snapshot id, a tag or a
        time reads with the snapshot's schema; a branch with the table's current schema.
        """
        if (when is None) == (timestamp_ms is None):
            raise ValidationError("give exactly one of a snapshot id, ref, time, or "
                                  "timestamp_ms", field="at", value=when)
        md = self._metadata
        if timestamp_ms is not None:
            return self._as_of(timestamp_ms)
        if isinstance(when, bool):
            raise ValidationError("not a snapshot id, ref or time", field="at", value=when)
        if isinstance(when, int):
            return self.scan(snapshot_id=when)
        if isinstance(when, datetime):
            return self._as_of(timestamp_to_ms(when))
        if isinstance(when, str):
            if when in md.refs or when == MAIN_BRANCH:
                return self.scan(ref=when)
            try:
                ms = timestamp_to_ms(when)
            except ValidationError:
                raise NoSuchSnapshot(f"no branch or tag named {when!r} (nor is it an ISO "
                                     "timestamp)", file=self.metadata_location, field="refs",
                                     value=when) from None
            return self._as_of(ms)
        raise ValidationError("not a snapshot id, ref or time", field="at", value=when)

    def _as_of(self, timestamp_ms: int) -> Scan:
        snap = self._metadata.snapshot_as_of(timestamp_ms)
        return Scan(self._io, self._metadata, snap.snapshot_id,
                    self._metadata.schema_for_snapshot(snap.snapshot_id))

    def metadata_graph(self, snapshots: Sequence[int | str] | None = None, *,
                       entries: bool = True) -> MetadataGraph:
        """Several snapshots' manifest lists (v4: root manifests), manifests and files as one
        graph, each shared manifest or file drawn once (a ``MetadataGraph``; default: the last 4
        snapshots of main). Reads are bounded by the display options (manifests and files per
        node)."""
        opts = get_options()
        md = self._metadata
        if snapshots is None:
            ids = default_graph_snapshots(md, min(4, opts.display_max_snapshots))
        else:
            ids = [resolve_snapshot(md, s, metadata_location=self.metadata_location).snapshot_id
                   for s in snapshots]
        return build_metadata_graph(self._io, md, ids, entries=entries,
                                    max_snapshots=opts.display_max_snapshots,
                                    max_manifests=opts.display_max_manifests,
                                    max_files=opts.display_max_files,
                                    name=None if self._identifier is None
                                    else ".".join(self._identifier))

    def compare_layouts(self, snapshot: int | str | None = None) -> LayoutComparison:
        """"Root vs manifest list": one snapshot (default: current) as v1-v3 lay it out and as
        the v4 single-file-commits proposal's first commit would (a ``LayoutComparison``)."""
        md = self._metadata
        if snapshot is None:
            current = md.current_snapshot()
            if current is None:
                raise NoSuchSnapshot("the table has no current snapshot",
                                     file=self.metadata_location, field="current-snapshot-id")
            sid = current.snapshot_id
        else:
            sid = resolve_snapshot(md, snapshot,
                                   metadata_location=self.metadata_location).snapshot_id
        opts = get_options()
        return build_layout_comparison(self._io, md, sid,
                                       max_manifests=opts.display_max_manifests,
                                       max_files=opts.display_max_files)

    def schema_history(self) -> SchemaHistory:
        """Every schema and every field id across them: added, renamed, promoted, dropped
        (spec: "Schema Evolution"); which snapshots used which schema. No I/O."""
        return schema_history(self._metadata)

    def spec_history(self, snapshot: int | str | None = None) -> SpecHistory:
        """Every partition spec, partition fields by id, and the live files and rows per spec
        in ``snapshot`` (id or ref; default current), read from its manifest list only (v4: its
        root and live leaves)."""
        return spec_history(self._metadata, self._io, snapshot)

    def diff(self, a: int | str, b: int | str, *, max_files: int = 1000) -> SnapshotDiff:
        """Files added and removed from snapshot ``a`` to ``b`` (ids or ref names), rows by file
        metadata, and which new deletes apply to which data files; ``.rows()`` reads the
        rows. Reads both snapshots' manifests; keeps at most ``max_files`` files per list."""
        return diff_snapshots(self._metadata, self._io, a, b, max_files=max_files)

    def changes(self, start: int | str | datetime | None,
                end: int | str | datetime | None = None, *,
                identifier_columns: str | Sequence[str] | None = None) -> Changelog:
        """The rows each snapshot after ``start`` up to ``end`` changed, as Iceberg's Spark
        ``create_changelog_view``: ``_change_type`` (INSERT, DELETE, UPDATE_BEFORE,
        UPDATE_AFTER), ``_change_ordinal`` and ``_commit_snapshot_id`` after the columns (and
        ``_row_id`` on v3+). ``start`` (exclusive; None: from the first snapshot) and ``end``
        (inclusive; None: the current snapshot of main) are what :meth:`at` takes; ``start``
        must be an ancestor of ``end``. Updates pair by ``identifier_columns`` when given, else
        on v3+ by ``_row_id`` (``()``: no pairing); a DELETE and an INSERT of one snapshot with
        equal values (a copy-on-write carry-over) cancel out. Reads the files the snapshots
        added and removed, in parallel; the :class:`Changelog` holds the rows as Arrow
        (rules: :mod:`icenb.table.explore.changelog`)."""
        return table_changes(self, start, end, identifier_columns=identifier_columns)

    def metadata_tree(self, snapshot: int | str | None = None) -> MetadataTree:
        """One snapshot (id or ref; default current) as metadata -> manifest list -> manifests
        -> files, reading only the manifests drawn (bounded by the display options)."""
        opts = get_options()
        return build_metadata_tree(self._io, self._metadata, snapshot,
                                   metadata_location=self.metadata_location,
                                   max_manifests=opts.display_max_manifests,
                                   max_files=opts.display_max_files)

    def time_travel(self, **options: Any) -> Any:
        """The interactive :class:`icenb.widgets.TimeTravel` on this table: a clickable
        snapshot tree and timeline, the table as it was at any snapshot, and A/B differences."""
        return build_widget("TimeTravel", self, **options)

    def __repr__(self) -> str:
        md = self._metadata
        return (f"Table({short_text(md.location)!r}, format_version={md.format_version}, "
                f"current_snapshot_id={md.current_snapshot_id}, "
                f"snapshots={len(md.snapshots)}, schema_id={md.current_schema_id})")


def open_table(location: str | os.PathLike[str], *, io: FileIO | None = None,
               properties: Mapping[str, str] | None = None, relocate: bool = False) -> Table:
    """Open a table read-only from a metadata file or a table directory (its current metadata
    file, spec: "File System Tables" / "Metastore Tables"). ``properties`` configure the
    FileIO built when ``io`` is not given.

    ``relocate=True`` reads a table that was copied or moved after it was written: the files
    it lists under its recorded ``location`` are read from the directory the metadata file was
    found in (metadata and inspect tables still show the recorded paths).
    """
    if io is not None and properties is not None:
        raise ValidationError("give io or properties, not both", field="properties")
    location = os.fspath(location)
    io = io if io is not None else FileIO(properties)
    metadata = load_table_metadata(location, io)
    if relocate:
        io = _relocated_io(io, metadata)
    else:
        _warn_if_moved(io, metadata)
    return Table(metadata, io, opened_from=location)


def _table_dir(metadata: TableMetadata) -> str | None:
    """The table directory the metadata file was read from (its ``metadata/`` parent)."""
    source = metadata.source_file
    if source is None:
        return None
    here = source.rstrip("/").rsplit("/", 1)[0]
    if here.rsplit("/", 1)[-1] == "metadata":
        here = here.rsplit("/", 1)[0]
    return here


def _same_location(a: str, b: str) -> bool:
    def plain(x: str) -> str:
        x = x.removeprefix("file://") if x.startswith("file:///") else x.removeprefix("file:")
        return os.path.normpath(x) if "://" not in x else x.rstrip("/")
    return plain(a) == plain(b)


def _relocated_io(io: FileIO, metadata: TableMetadata) -> FileIO:
    """A FileIO reading the table's recorded location from where its metadata file is now."""
    here = _table_dir(metadata)
    if here is None:
        raise ValidationError("relocate needs a table opened from a file",
                              field="relocate", value=True)
    recorded = metadata.location.rstrip("/")
    if _same_location(io.relocate(recorded), here):
        return io
    return FileIO(io.properties, filesystems=io.filesystems,
                  relocations={**io.relocations, recorded: here})


def _warn_if_moved(io: FileIO, metadata: TableMetadata) -> None:
    """Warn when the table was found away from its recorded location and that is gone: its
    files would be looked for where it was written (one existence check)."""
    here = _table_dir(metadata)
    recorded = io.relocate(metadata.location.rstrip("/"))
    if here is None or _same_location(recorded, here):
        return
    try:
        gone = not io.exists(recorded)
    except IcebergError:
        return
    if gone:
        warnings.warn(IcebergWarning(
            f"this table was written at {recorded} (its recorded location), which does not "
            f"exist; its metadata was found under {here}. Its files are listed by their "
            "original paths: open it with relocate=True to read them from where it is now."),
            stacklevel=3)


def load_table(catalog: Catalog | str | os.PathLike[str], identifier: NamespaceLike) -> Table:
    """The table ``identifier`` (``"ns.table"`` or a tuple) of a catalog, or of the catalog at a
    location (a warehouse directory or a SQLite catalog database, see
    :func:`icenb.catalog.open_catalog`). :meth:`Table.refresh` asks the catalog again."""
    cat = catalog if isinstance(catalog, Catalog) else open_catalog(os.fspath(catalog))
    loaded = cat.load_table(identifier)
    return Table(loaded.metadata, loaded.io, opened_from=loaded.metadata_location,
                 catalog=cat, identifier=loaded.identifier)
