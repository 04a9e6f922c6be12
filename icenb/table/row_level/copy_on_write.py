"""Copy-on-write row deletes and overwrites of a table, each one commit.

A copy-on-write delete (Iceberg Java / Spark's ``write.delete.mode=copy-on-write``, the
default) plans the data files the filter may match (spec: Scan Planning), removes those whose
rows all match, and rewrites those where only some rows match: their live rows (current
deletes applied) that do not match are written to new data files, and the old file is removed,
all in one ``overwrite`` snapshot (:class:`~icenb.table.commit.overwrite.OverwriteFiles`).
Conflict detection follows Spark's copy-on-write commit: validation from the scanned snapshot
with the filter as conflict detection filter; concurrent deletes always conflict; concurrent
appends of possibly matching rows conflict under ``serializable`` isolation
(``write.delete.isolation-level``, the default) and are kept under ``snapshot``.

Rows where the filter is null (e.g. ``x > 1`` with ``x`` null) do not match and are kept, as
Iceberg expressions evaluate them. A copy-on-write update
(:func:`icenb.table.row_level.merge_on_read.update`)
uses the same plan with the matching rows read too, and writes them back changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import ValidationError
from icenb.progress import READING_DATA_FILES, progress
from icenb.reprs import safe_repr
from icenb.spec.evaluators import evaluate_arrow
from icenb.spec.expressions import ALWAYS_TRUE, AlwaysTrue, Expression, bind
from icenb.spec.manifest import DataFile
from icenb.spec.properties import WRITE_DELETE_MODE, WRITE_UPDATE_MODE
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit import table_producer
from icenb.table.commit.merging import MergingSnapshotProducer
from icenb.table.commit.overwrite import DeleteFiles, OverwriteFiles, ReplacePartitions
from icenb.table.commit.producer import branch_snapshot, commit_snapshot
from icenb.table.commit.validation import FileFilter, IsolationLevel, as_expression, isolation_level
from icenb.table.row_level.lineage import with_lineage_fields
from icenb.table.scan import Scan
from icenb.table.scan.planning import plan_files
from icenb.table.scan.read import read_task

if TYPE_CHECKING:
    from icenb.io.file_io import FileIO
    from icenb.table.table import Table

__all__ = ["CopyOnWritePlan", "delete_mode", "delete_rows", "dynamic_partition_overwrite",
           "overwrite_rows", "plan_copy_on_write", "update_mode"]

COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"


@safe_repr
@dataclass(frozen=True)
class CopyOnWritePlan:
    """What a copy-on-write change does: files to remove, the rows of them that do not match
    (written back as they are) and, when asked for, the live rows that match."""

    snapshot_id: int | None
    remove: tuple[DataFile, ...]
    keep_rows: pa.Table | None
    deleted_rows: int
    matched_rows: pa.Table | None = None


def _expression(filter: str | Expression) -> Expression:
    return as_expression(filter, "filter")


def plan_copy_on_write(io: FileIO, metadata: TableMetadata, filter: str | Expression, *,
                       branch: str = MAIN_BRANCH, case_sensitive: bool = True,
                       read_matches: bool = False) -> CopyOnWritePlan:
    """Which files a copy-on-write change of the rows matching ``filter`` removes, and the
    live rows of partly matching files that must be written back (read with their deletes
    applied, so deleted rows stay deleted). With ``read_matches`` (an update), every such
    file is read and its matching live rows are returned too. On v3+ tables the rows come
    with ``_row_id`` and ``_last_updated_sequence_number``, which the rewrite keeps
    (:mod:`icenb.table.row_level.lineage`)."""
    expr = _expression(filter)
    schema = metadata.schema
    bound = bind(expr, schema, case_sensitive)  # validates the filter first
    snap = branch_snapshot(metadata, branch)
    if snap is None:
        return CopyOnWritePlan(None, (), None, 0)
    plan = plan_files(io, metadata, snapshot_id=snap.snapshot_id, row_filter=expr,
                      case_sensitive=case_sensitive, schema=schema)
    read_schema = with_lineage_fields(metadata, schema)
    name_mapping = Scan(io, metadata, snap.snapshot_id, schema).name_mapping
    flt = FileFilter(expr, schema, metadata.specs_by_id, case_sensitive)
    remove: list[DataFile] = []
    keep: list[pa.Table] = []
    hits: list[pa.Table] = []
    deleted = 0
    tasks = plan.tasks
    with progress(READING_DATA_FILES, total=len(tasks)) as read:
        for task in tasks:
            read.advance()  # counted as it starts: the steps below may skip the rest
            f = task.data_file
            if not read_matches and not task.delete_files and flt.must_match(f):
                remove.append(f)
                deleted += f.record_count
                continue
            rows = read_task(io, replace(task, residual_filter=True), read_schema,
                             name_mapping=name_mapping)
            if rows.num_rows == 0:
                continue
            mask = evaluate_arrow(bound, rows) if not isinstance(bound, AlwaysTrue) else None
            matched = rows.num_rows if mask is None else int(pc.sum(mask).as_py() or 0)
            if matched == 0:
                continue
            remove.append(f)
            deleted += matched
            if read_matches:
                hits.append(rows if mask is None else rows.filter(mask))
            if mask is not None and matched < rows.num_rows:
                keep.append(rows.filter(pc.invert(mask)))
    kept = pa.concat_tables(keep) if keep else None
    hit = pa.concat_tables(hits) if hits else None
    return CopyOnWritePlan(snap.snapshot_id, tuple(remove), kept, deleted, hit)


def validate_copy_on_write(producer: MergingSnapshotProducer, metadata: TableMetadata,
                           plan: CopyOnWritePlan, expr: Expression,
                           operation: str = "delete") -> None:
    """Spark's copy-on-write conflict detection (see the module docstring); the isolation
    level is ``write.<operation>.isolation-level``."""
    if plan.snapshot_id is not None:
        producer.validate_from_snapshot(plan.snapshot_id)
    producer.conflict_detection_filter(expr)
    producer.validate_no_conflicting_deletes()
    if isolation_level(metadata.properties, operation) == IsolationLevel.SERIALIZABLE:
        producer.validate_no_conflicting_data()


def replace_matching_rows(producer: OverwriteFiles, io: FileIO, metadata: TableMetadata,
                          filter: str | Expression, *, branch: str = MAIN_BRANCH,
                          case_sensitive: bool = True) -> None:
    """Have ``producer`` remove the rows matching ``filter`` copy-on-write: files whose rows
    all match go, partly matching files are rewritten now without those rows; with the
    conflict validations of :func:`validate_copy_on_write`. Used by overwrites that add their
    own data (here and in the Spark writer)."""
    expr = _expression(filter)
    plan = plan_copy_on_write(io, metadata, expr, branch=branch, case_sensitive=case_sensitive)
    validate_copy_on_write(producer, metadata, plan, expr)
    for f in plan.remove:
        producer.delete_file(f)
    if plan.keep_rows is not None and plan.keep_rows.num_rows:
        try:
            producer.write_data(plan.keep_rows, metadata, moved=True)
        except BaseException:
            producer.abort()
            raise


def delete_rows(table: Table, filter: str | Expression, *, branch: str = MAIN_BRANCH,
                snapshot_properties: Mapping[str, str] | None = None,
                case_sensitive: bool = True) -> Snapshot | None:
    """Copy-on-write delete of the rows matching ``filter``; the new snapshot, or None when
    no row matched (no snapshot is added). When only whole files go, the snapshot is a
    ``delete`` (Java's ``DeleteFiles``), else an ``overwrite``."""
    if table.metadata.format_version >= 4:  # EXPERIMENTAL v4: root entries / manifest DVs
        from icenb.table.commit.v4_overwrite import v4_delete_rows

        return v4_delete_rows(table, filter, branch=branch,
                              snapshot_properties=snapshot_properties,
                              case_sensitive=case_sensitive)
    md = table.metadata
    expr = _expression(filter)
    plan = plan_copy_on_write(table.io, md, expr, branch=branch, case_sensitive=case_sensitive)
    if not plan.remove:
        return None
    rewrite = plan.keep_rows is not None and plan.keep_rows.num_rows > 0
    # whole files only: a ``delete`` snapshot (Java's DeleteFiles), else an ``overwrite``
    producer: OverwriteFiles | DeleteFiles = (
        table_producer("overwrite", table, OverwriteFiles, branch=branch,
                       snapshot_properties=snapshot_properties) if rewrite else
        table_producer("delete", table, DeleteFiles, branch=branch,
                       snapshot_properties=snapshot_properties))
    producer.case_sensitive(case_sensitive)
    validate_copy_on_write(producer, md, plan, expr)
    for f in plan.remove:
        producer.delete_file(f)
    with producer.aborted_on_error():
        if plan.keep_rows is not None and plan.keep_rows.num_rows:
            producer.write_data(plan.keep_rows, md, moved=True)
        return commit_snapshot(table, producer)


def overwrite_rows(table: Table, data: Any, filter: str | Expression | None = None, *,
                   branch: str = MAIN_BRANCH,
                   snapshot_properties: Mapping[str, str] | None = None,
                   case_sensitive: bool = True) -> Snapshot:
    """Replace the rows matching ``filter`` (None: every row) by ``data`` in one
    ``overwrite`` snapshot. Without a filter every file is removed (Java's
    ``overwriteByRowFilter(alwaysTrue)``, re-applied on conflicts); with one, matching rows
    are deleted copy-on-write (see :func:`delete_rows`) and ``data`` added."""
    if table.metadata.format_version >= 4:  # EXPERIMENTAL v4: root entries / manifest DVs
        from icenb.table.commit.v4_overwrite import v4_overwrite_rows

        return v4_overwrite_rows(table, data, filter, branch=branch,
                                 snapshot_properties=snapshot_properties,
                                 case_sensitive=case_sensitive)
    md = table.metadata
    producer = table_producer("overwrite", table, OverwriteFiles, branch=branch,
                              snapshot_properties=snapshot_properties)
    producer.case_sensitive(case_sensitive)
    producer.check_branch(md)
    if filter is None:
        producer.overwrite_by_row_filter(ALWAYS_TRUE)
    else:
        replace_matching_rows(producer, table.io, md, filter, branch=branch,
                              case_sensitive=case_sensitive)
    try:
        producer.write_data(data, md)
    except BaseException:
        producer.abort()
        raise
    return commit_snapshot(table, producer)


def dynamic_partition_overwrite(table: Table, data: Any, *, branch: str = MAIN_BRANCH,
                                snapshot_properties: Mapping[str, str] | None = None
                                ) -> Snapshot:
    """Replace the partitions ``data`` has rows in by ``data`` (Java's ``ReplacePartitions``;
    an unpartitioned table is replaced whole, as Spark's dynamic overwrite). As Spark's
    default, concurrent commits are re-applied without conflict validation."""
    md = table.metadata
    producer = table_producer("replace_partitions", table, ReplacePartitions, branch=branch,
                              snapshot_properties=snapshot_properties)
    snap = branch_snapshot(md, branch)
    if snap is not None:
        producer.validate_from_snapshot(snap.snapshot_id)
    producer.write_data(data, md)
    return commit_snapshot(table, producer)


def _write_mode(properties: Mapping[str, str], mode: str | None, key: str, what: str) -> str:
    raw = mode if mode is not None else properties.get(key, COPY_ON_WRITE)
    value = str(raw).strip().lower()
    if value not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise ValidationError(f"{what} mode must be copy-on-write or merge-on-read",
                              field="mode" if mode is not None else key, value=raw)
    return value


def delete_mode(properties: Mapping[str, str], mode: str | None) -> str:
    """The delete mode to use: ``mode`` or ``write.delete.mode`` (default copy-on-write)."""
    return _write_mode(properties, mode, WRITE_DELETE_MODE, "delete")


def update_mode(properties: Mapping[str, str], mode: str | None) -> str:
    """The update mode to use: ``mode`` or ``write.update.mode`` (default copy-on-write, as
    Iceberg Java's ``TableProperties.UPDATE_MODE_DEFAULT``)."""
    return _write_mode(properties, mode, WRITE_UPDATE_MODE, "update")
