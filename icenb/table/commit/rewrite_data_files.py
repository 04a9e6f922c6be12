"""Data file compaction: :func:`rewrite_data_files`, one ``replace`` commit
(:class:`~icenb.table.commit.rewrite_files.RewriteFiles`; spec: "Snapshots", operation
``replace``).

Planning follows Iceberg Java 1.10's ``RewriteDataFilesSparkAction`` with its
``BinPackRewriteFilePlanner`` (the planner of both strategies):

* the live data files of the branch the filter may match are grouped by partition of the
  current spec; files of older specs form one group (their rows may belong to several new
  partitions) and are rewritten into the current spec;
* a file is selected when it is smaller than 75% of the target size or larger than 180%, or
  when its file-scoped deletes (DVs, position deletes of one file) remove >= 30% of its rows
  (``delete-ratio-threshold``), or when it has ``delete_file_threshold`` delete files or more
  (Java's ``delete-file-threshold``, off by default);
* the selected files of a partition are packed in order into groups of at most 100 GiB
  (``max-file-group-size-bytes``); a group is rewritten when it has more than one file and
  ``min_input_files`` (default 5) or more, or more than one file and more bytes than the
  target, or more bytes than 180% of the target, or a file selected for its deletes.
  ``rewrite_all`` rewrites every file the filter matches, group by group, unfiltered.

Each group's live rows (position deletes, DVs and equality deletes applied; v3 rows with
``_row_id`` and ``_last_updated_sequence_number``, which the new files store, so row lineage
is kept) are read on the driver with pyarrow (:func:`~icenb.table.scan.read.read_task`, as a
copy-on-write delete reads) and written by icenb's writer into files rolled at Java's write
size (the target plus half the way to the 180% maximum). ``binpack`` reads and writes a group
in runs of whole files of about Java's input split size (the group's bytes over its expected
output files), so memory holds about one output file's rows; it writes them in the table's
sort order (icenb's writer always does, so the files say they are sorted). ``sort`` writes a
group in the given order (default: the table's) as one sorted run, so the driver holds the
whole group (Java's sort shuffles it over Spark tasks).

The new files take the starting snapshot's data sequence number (Java's
``use-starting-sequence-number``, default true): an equality delete committed after the
rewrite started still applies to them, and the commit does not conflict with it; equality
deletes up to the start, already applied to the rows read, do not (spec: "Scan Planning").
This is done on every v2+ table, as Java does, not only when equality deletes exist: position
deletes and DVs name their data files, so the choice changes nothing else a reader sees, and
one rule is easier to check than two. DVs and
position delete files that delete rows of rewritten files only are removed with them
(Java 1.10 keeps v2 position delete files until its ``remove-dangling-deletes`` option);
other delete files go when no live data file is old enough for them (the merging producer's
rule). A
concurrent commit that removed a rewritten file, or added a position delete or DV for one,
makes the commit fail with ``CommitConflict`` and nothing is left behind.

Format version 4 (EXPERIMENTAL) is refused with ``UnsupportedVersion``: the v4 producers have
no ``replace`` yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icenb.errors import UnsupportedVersion, ValidationError
from icenb.io.data_files.parquet import DEFAULT_TARGET_FILE_SIZE
from icenb.progress import READING_DATA_FILES, progress
from icenb.reprs import safe_repr
from icenb.spec.expressions import Expression, bind
from icenb.spec.manifest import DataFile, FileContent, FileScanTask
from icenb.spec.metadata_columns import DELETE_FILE_PATH
from icenb.spec.properties import WRITE_TARGET_FILE_SIZE_BYTES, int_property
from icenb.spec.schema import Schema
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.sort_order import SortOrder, build_sort_order
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.producer import branch_snapshot, commit_snapshot
from icenb.table.commit.rewrite_files import RewriteFiles
from icenb.table.commit.validation import as_expression
from icenb.table.row_level.lineage import with_lineage_fields
from icenb.table.scan import Scan
from icenb.table.scan.planning import plan_files
from icenb.table.scan.read import read_data_file, read_task
from icenb.table.write.data_files import write_data_files
from icenb.table.write.locations import location_provider

if TYPE_CHECKING:
    from icenb.io.file_io import FileIO
    from icenb.table.table import Table

__all__ = ["BINPACK", "SORT", "RewriteDataFilesResult", "RewriteGroup", "RewritePlan",
           "execute_rewrite", "expected_output_files", "input_split_size", "plan_rewrite",
           "rewrite_data_files"]

BINPACK = "binpack"
SORT = "sort"

# Java's SizeBasedFileRewritePlanner / BinPackRewriteFilePlanner defaults.
MIN_FILE_SIZE_RATIO = 0.75
MAX_FILE_SIZE_RATIO = 1.80
MIN_INPUT_FILES = 5
DELETE_RATIO_THRESHOLD = 0.3
MAX_FILE_GROUP_SIZE_BYTES = 100 * 1024 ** 3

_DELETE_PATHS = Schema(DELETE_FILE_PATH)
_SPLIT_OVERHEAD = 5 * 1024


@safe_repr
@dataclass(frozen=True)
class RewriteDataFilesResult:
    """What :func:`rewrite_data_files` did: the columns of Java's ``rewrite_data_files``
    procedure, and the ``replace`` snapshot (None when there was nothing to rewrite)."""

    rewritten_data_files_count: int
    added_data_files_count: int
    rewritten_bytes_count: int
    removed_delete_files_count: int
    snapshot: Snapshot | None
    #: Rows read from the rewritten files (deletes applied) and written to the new ones.
    rewritten_rows_count: int = 0
    #: How many file groups were rewritten (one per partition for small tables).
    groups_count: int = 0
    strategy: str = BINPACK

    def __repr__(self) -> str:
        sid = None if self.snapshot is None else self.snapshot.snapshot_id
        return (f"RewriteDataFilesResult({self.strategy}: rewritten_data_files_count="
                f"{self.rewritten_data_files_count}, added_data_files_count="
                f"{self.added_data_files_count}, rewritten_bytes_count="
                f"{self.rewritten_bytes_count}, removed_delete_files_count="
                f"{self.removed_delete_files_count}, snapshot_id={sid})")


@safe_repr
@dataclass(frozen=True)
class RewriteGroup:
    """Data files of one partition rewritten together (Java's ``RewriteFileGroup``);
    ``partition`` is the current spec's tuple, None for files of older specs."""

    partition: tuple[Any, ...] | None
    tasks: tuple[FileScanTask, ...]

    @property
    def input_bytes(self) -> int:
        return sum(t.data_file.file_size_in_bytes for t in self.tasks)


@safe_repr
@dataclass(frozen=True)
class RewritePlan:
    """The groups to rewrite, planned on snapshot ``snapshot_id`` of ``branch``."""

    snapshot_id: int | None
    branch: str
    strategy: str
    sort_order: SortOrder
    target_file_size_bytes: int
    min_file_size_bytes: int
    write_file_size_bytes: int
    groups: tuple[RewriteGroup, ...]

    @property
    def files(self) -> tuple[DataFile, ...]:
        return tuple(t.data_file for g in self.groups for t in g.tasks)


# --------------------------------------------------------------------------- checks


def _positive_int(value: Any, field: str, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValidationError(f"{field} must be an int >= {minimum}", field=field, value=value)
    return value


def _sort_order(metadata: TableMetadata, strategy: str,
                sort_order: str | Sequence[str] | None) -> SortOrder:
    """The order the new files are written in: the given one (``sort`` only), else the
    table's; an order equal to one of the table's takes its id, another one id 0 on the
    files (``sort_order_id`` must name an order of the table)."""
    if sort_order is None:
        if strategy == SORT and metadata.sort_order.is_unsorted:
            raise ValidationError("a sort rewrite needs a sort order: the table is unsorted "
                                  "and none was given", field="sort_order", value=None)
        return metadata.sort_order
    if strategy != SORT:
        raise ValidationError("a sort order is for strategy='sort'", field="sort_order",
                              value=sort_order)
    if not isinstance(sort_order, str) and not (
            isinstance(sort_order, Sequence) and all(isinstance(s, str) for s in sort_order)):
        raise ValidationError("a sort order is a string or a list of strings",
                              field="sort_order", value=sort_order)
    order = build_sort_order(metadata.schema, sort_order)
    if order.is_unsorted:
        raise ValidationError("a sort rewrite needs at least one sort field",
                              field="sort_order", value=sort_order)
    for known in metadata.sort_orders:
        if known.same_order(order):
            return known
    return order


# --------------------------------------------------------------------------- planning


def _too_high_delete_ratio(task: FileScanTask) -> bool:
    """Java's ``tooHighDeleteRatio``: rows removed by file-scoped deletes / the file's rows."""
    if not task.delete_files or task.data_file.record_count <= 0:
        return False
    known = sum(d.record_count for d in task.delete_files if d.is_file_scoped)
    deleted = min(known, task.data_file.record_count)
    return deleted / task.data_file.record_count >= DELETE_RATIO_THRESHOLD


def plan_rewrite(io: FileIO, metadata: TableMetadata, filter: str | Expression = "true", *,
                 strategy: str = BINPACK, sort_order: str | Sequence[str] | None = None,
                 target_file_size_bytes: int | None = None, min_input_files: int | None = None,
                 delete_file_threshold: int | None = None, rewrite_all: bool = False,
                 branch: str = MAIN_BRANCH, case_sensitive: bool = True) -> RewritePlan:
    """Which files :func:`rewrite_data_files` rewrites, in which groups (see the module
    docstring); reads manifests only. Bad input raises ``ValidationError`` naming it."""
    if metadata.format_version >= 4:
        raise UnsupportedVersion("rewrite_data_files is not implemented for EXPERIMENTAL "
                                 "format-version 4 tables (their producers have no 'replace' "
                                 "yet)", field="format-version", value=metadata.format_version)
    if strategy not in (BINPACK, SORT):
        raise ValidationError("strategy must be 'binpack' or 'sort'", field="strategy",
                              value=strategy)
    if not isinstance(rewrite_all, bool):
        raise ValidationError("rewrite_all must be True or False", field="rewrite_all",
                              value=rewrite_all)
    target = (int_property(metadata.properties, WRITE_TARGET_FILE_SIZE_BYTES,
                           DEFAULT_TARGET_FILE_SIZE, minimum=1)
              if target_file_size_bytes is None
              else _positive_int(target_file_size_bytes, "target_file_size_bytes"))
    min_files = (MIN_INPUT_FILES if min_input_files is None
                 else _positive_int(min_input_files, "min_input_files"))
    threshold = (None if delete_file_threshold is None
                 else _positive_int(delete_file_threshold, "delete_file_threshold", 0))
    order = _sort_order(metadata, strategy, sort_order)
    expr = as_expression(filter, "filter")
    bind(expr, metadata.schema, case_sensitive)  # names a column the table lacks
    min_size = int(target * MIN_FILE_SIZE_RATIO)
    max_size = int(target * MAX_FILE_SIZE_RATIO)
    write_size = int(target + (max_size - target) * 0.5)
    snap = branch_snapshot(metadata, branch)
    if snap is None:
        return RewritePlan(None, branch, strategy, order, target, min_size, write_size, ())
    plan = plan_files(io, metadata, snapshot_id=snap.snapshot_id, row_filter=expr,
                      case_sensitive=case_sensitive, schema=metadata.schema)

    def for_deletes(task: FileScanTask) -> bool:
        return _too_high_delete_ratio(task) or (
            threshold is not None and len(task.delete_files) >= threshold)

    by_partition: dict[tuple[Any, ...] | None, list[FileScanTask]] = {}
    current = metadata.spec.spec_id
    for task in plan.tasks:
        f = task.data_file
        size = f.file_size_in_bytes
        if rewrite_all or size < min_size or size > max_size or for_deletes(task):
            key = tuple(f.partition) if f.spec_id == current else None
            by_partition.setdefault(key, []).append(task)
    groups: list[RewriteGroup] = []
    for key, tasks in by_partition.items():
        for packed in _pack(tasks, MAX_FILE_GROUP_SIZE_BYTES):
            size = sum(t.data_file.file_size_in_bytes for t in packed)
            many = len(packed) > 1
            if (rewrite_all or (many and len(packed) >= min_files) or (many and size > target)
                    or size > max_size or any(for_deletes(t) for t in packed)):
                groups.append(RewriteGroup(key, tuple(packed)))
    return RewritePlan(snap.snapshot_id, branch, strategy, order, target, min_size, write_size,
                       tuple(groups))


def _pack(tasks: list[FileScanTask], limit: int) -> list[list[FileScanTask]]:
    """Tasks in order into bins of at most ``limit`` bytes (a larger file alone)."""
    bins: list[list[FileScanTask]] = []
    weight = 0
    for t in tasks:
        w = t.data_file.file_size_in_bytes
        if not bins or (bins[-1] and weight + w > limit):
            bins.append([])
            weight = 0
        bins[-1].append(t)
        weight += w
    return bins


def expected_output_files(plan: RewritePlan, input_bytes: int) -> int:
    """How many files a group of ``input_bytes`` should become (Java's
    ``expectedOutputFiles``): the remainder over whole target-size files gets a file of its
    own when it is no small file, else is spread over the others unless that makes them more
    than 10% over the target."""
    target = plan.target_file_size_bytes
    if input_bytes < target:
        return 1
    with_rest, without = -(-input_bytes // target), input_bytes // target
    if input_bytes % target > plan.min_file_size_bytes:
        return with_rest
    if input_bytes / without < min(1.1 * target, plan.write_file_size_bytes):
        return without
    return with_rest


def input_split_size(plan: RewritePlan, input_bytes: int) -> int:
    """Input bytes per writing task (Java's ``inputSplitSize``): the group over its expected
    files, at least the target and at most the write size."""
    estimate = input_bytes // expected_output_files(plan, input_bytes) + _SPLIT_OVERHEAD
    if estimate < plan.target_file_size_bytes:
        return plan.target_file_size_bytes
    return min(estimate, plan.write_file_size_bytes)


# --------------------------------------------------------------------------- execution


def _dangling_position_deletes(io: FileIO, plan: RewritePlan, rewritten: set[str]
                               ) -> list[DataFile]:
    """The position delete files and DVs of the plan's tasks that delete rows of rewritten
    files only: nothing live needs them after the commit. A file-scoped one says its data file
    (spec: "Position Delete Files"); another one's ``file_path`` column is read."""
    seen: dict[tuple[str, int | None], DataFile] = {}
    for task in (t for g in plan.groups for t in g.tasks):
        for d in task.delete_files:
            if d.content == FileContent.POSITION_DELETES:
                seen.setdefault((d.file_path, d.content_offset), d)
    out: list[DataFile] = []
    for d in seen.values():
        target = d.referenced_file
        if target is not None:
            dangling = target in rewritten
        else:
            paths = read_data_file(io, d, _DELETE_PATHS).column(0).unique().to_pylist()
            dangling = set(paths) <= rewritten
        if dangling:
            out.append(d)
    return out


def _splits(plan: RewritePlan, group: RewriteGroup) -> list[list[FileScanTask]]:
    """The group's files in the runs written together: ``binpack`` packs whole files into
    runs of about :func:`input_split_size` (as Java's writing tasks; icenb reads whole files),
    ``sort`` writes the group as one run so it is sorted as a whole."""
    if plan.strategy == SORT:
        return [list(group.tasks)]
    return _pack(list(group.tasks), input_split_size(plan, group.input_bytes))


def execute_rewrite(table: Table, plan: RewritePlan, *,
                    snapshot_properties: Mapping[str, str] | None = None
                    ) -> RewriteDataFilesResult:
    """Read each group of ``plan`` (made on ``table``'s metadata), write its rows into new
    files and commit one ``replace`` snapshot (see the module docstring)."""
    if not plan.groups or plan.snapshot_id is None:
        return RewriteDataFilesResult(0, 0, 0, 0, None, strategy=plan.strategy)
    md = table.metadata
    catalog, identifier = table.operations.commit_target()
    producer = RewriteFiles(catalog, identifier, table.io, branch=plan.branch,
                            snapshot_properties=snapshot_properties)
    producer.check_branch(md)
    producer.validate_from_snapshot(plan.snapshot_id)
    start = md.snapshot_by_id(plan.snapshot_id)
    if md.format_version >= 2 and start is not None:
        producer.data_sequence_number(start.sequence_number)
    schema = md.schema
    read_schema = with_lineage_fields(md, schema)
    name_mapping = Scan(table.io, md, plan.snapshot_id, schema).name_mapping
    properties = {**md.properties, WRITE_TARGET_FILE_SIZE_BYTES: str(plan.write_file_size_bytes)}
    locations = location_provider(md.location, md.properties)
    known_order = md.sort_order_by_id(plan.sort_order.order_id)
    keep_order_id = known_order is not None and known_order.same_order(plan.sort_order)
    rewritten = {f.file_path for f in plan.files}
    rows_count = 0
    with producer.aborted_on_error():
        with progress(READING_DATA_FILES, total=len(plan.files)) as read:
            index = 0
            for group in plan.groups:
                for split in _splits(plan, group):
                    parts: list[pa.Table] = []
                    for task in split:
                        read.advance()
                        parts.append(read_task(table.io, replace(task, residual_filter=True),
                                               read_schema, name_mapping=name_mapping))
                        producer.delete_file(task.data_file)
                    rows = pa.concat_tables(parts)
                    del parts
                    if rows.num_rows == 0:
                        continue
                    rows_count += rows.num_rows
                    files = write_data_files(
                        table.io, rows, schema, md.spec, plan.sort_order, properties,
                        locations, format_version=md.format_version, partition_id=index,
                        operation_id=producer.commit_uuid)
                    index += 1
                    producer.track_written(f.file_path for f in files)
                    producer.add_files(f if keep_order_id else replace(f, sort_order_id=None)
                                       for f in files)
        for d in _dangling_position_deletes(table.io, plan, rewritten):
            producer.delete_file(d)
        snapshot = commit_snapshot(table, producer)
    removed = producer.removed_files
    data = [f for f in removed if f.file_path in rewritten]
    return RewriteDataFilesResult(
        rewritten_data_files_count=len(data),
        added_data_files_count=len(producer.added_data_files),
        rewritten_bytes_count=sum(f.file_size_in_bytes for f in data),
        removed_delete_files_count=len(removed) - len(data),
        snapshot=snapshot, rewritten_rows_count=rows_count, groups_count=len(plan.groups),
        strategy=plan.strategy)


def rewrite_data_files(table: Table, filter: str | Expression = "true", *,
                       strategy: str = BINPACK, sort_order: str | Sequence[str] | None = None,
                       target_file_size_bytes: int | None = None,
                       min_input_files: int | None = None,
                       delete_file_threshold: int | None = None, rewrite_all: bool = False,
                       branch: str = MAIN_BRANCH,
                       snapshot_properties: Mapping[str, str] | None = None
                       ) -> RewriteDataFilesResult:
    """Compact the data files of ``branch`` the filter may match into files of about the
    target size in one ``replace`` snapshot (see the module docstring); a result with no
    snapshot when nothing needs rewriting."""
    plan = plan_rewrite(table.io, table.metadata, filter, strategy=strategy,
                        sort_order=sort_order, target_file_size_bytes=target_file_size_bytes,
                        min_input_files=min_input_files,
                        delete_file_threshold=delete_file_threshold, rewrite_all=rewrite_all,
                        branch=branch)
    return execute_rewrite(table, plan, snapshot_properties=snapshot_properties)
