"""Plan a table scan: the data files a filter may match, with the delete files to apply.

Spec: "Scan Planning". Steps (DESIGN: "Metadata at columnar speed"; all masks are Arrow):

1. Manifests: the row filter is projected inclusively onto each manifest's partition spec and
   evaluated on the manifest list's partition field summaries; manifests that cannot match,
   and manifests known to hold no added or existing files, are never opened.
2. Files: live entries (status not DELETED) of the manifests read are kept when the projected
   partition filter matches their partition, and, for data files, when the row filter may
   match their column metrics (inclusive metrics evaluation).
3. Deletes: live delete files that survive the partition filter are matched to data files by
   the spec's rules: a position delete applies to data files of the same spec and partition
   with a data sequence number <= its own (narrowed to one file by ``referenced_data_file``
   or equal ``file_path`` bounds); an equality delete applies to data files of the same spec
   and partition, or to every data file when its spec is unpartitioned, with a data sequence
   number < its own; a v3 deletion vector (a Puffin position delete) applies only to its
   ``referenced_data_file``, and where one applies, position delete files for that data file
   are not applied (as the reference implementation).
4. Residuals: per task, the part of the row filter the partition does not decide
   (:class:`~icenb.spec.projection.ResidualEvaluator`).

Decisions where the spec leaves room: delete files are pruned by partition only, not by their
metrics (an equality delete's metrics on a non-key column say nothing about the data rows it
deletes); a spec whose projection or partition columns cannot be resolved is not pruned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, NoSuchSnapshot, ValidationError
from icenb.io.compact_manifest import (
    CompactManifest,
    DecodedGroup,
    concat_metrics,
    decode_data_manifests,
    finish_data_manifests,
    restore_metrics,
    runs,
)
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    concat_entry_tables,
    read_manifest_entries,
    read_manifest_list_table,
)
from icenb.reprs import safe_repr
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    bind,
    unbind,
)
from icenb.spec.human import attach_types
from icenb.spec.manifest import (
    DataFile,
    FileScanTask,
    ManifestContent,
    ManifestFile,
    manifest_files_from_arrow,
)
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.projection import ResidualEvaluator
from icenb.spec.schema import Schema
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import NestedField, StructType, UnknownType
from icenb.table.scan.delete_index import match_deletes, partition_keys
from icenb.table.scan.pruning import (
    Projections,
    compact_metrics_mask,
    manifest_mask,
    partition_mask,
    select_files,
    select_rows,
    struct_array,
    struct_column,
    take_rows,
)

__all__ = ["ScanPlan", "content_files_of", "plan_files"]


# What planning decodes of each manifest entry (Avro paths; absent ones are ignored): all
# but ``column_sizes``, and the metrics maps only when they are wanted.
_PLANNING_COLUMNS: tuple[str, ...] = (
    "status", "snapshot_id", "sequence_number", "file_sequence_number",
    *(f"data_file.{name}" for name in (
        "content", "file_path", "file_format", "partition", "record_count",
        "file_size_in_bytes", "block_size_in_bytes", "key_metadata", "split_offsets",
        "equality_ids", "sort_order_id", "first_row_id", "referenced_data_file",
        "content_offset", "content_size_in_bytes")),
)
_STATS_COLUMNS: tuple[str, ...] = tuple(
    f"data_file.{name}" for name in ("value_counts", "null_value_counts", "nan_value_counts",
                                     "lower_bounds", "upper_bounds"))


@safe_repr
@dataclass(frozen=True)
class ScanPlan:
    """The result of planning: selected data entries, matched deletes and counts.

    ``data_entries`` / ``delete_entries`` are manifest entry tables (columns of
    :func:`~icenb.io.manifest_reader.read_manifest_entries`, without ``column_sizes``, and
    data entries without the other metrics when planned with ``column_stats=False``; for
    v1-v3 tables ``manifest_path`` is dictionary-encoded and data entries are slices of the
    compact manifests planning caches, not copied when every entry of a group of manifests is
    selected, see :mod:`icenb.io.compact_manifest`); ``deletes_per_file[i]`` holds the row indices
    in ``delete_entries`` of the deletes that apply to data entry ``i``. ``tasks`` and
    ``files`` are built on first access.
    """

    snapshot_id: int | None
    schema: Schema
    specs: Mapping[int, PartitionSpec]
    row_filter: Expression
    case_sensitive: bool
    data_entries: pa.Table
    delete_entries: pa.Table
    deletes_per_file: tuple[tuple[int, ...], ...]
    manifests_total: int = 0
    manifests_read: int = 0
    files_considered: int = 0
    delete_files_considered: int = 0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def manifests_skipped(self) -> int:
        """Manifests never opened (summaries exclude the filter, or no live files)."""
        return self.manifests_total - self.manifests_read

    @property
    def files_selected(self) -> int:
        """Data files the scan must read."""
        return int(self.data_entries.num_rows)

    @property
    def delete_files_selected(self) -> int:
        """Live delete files that survived pruning (whether or not matched to a file)."""
        return int(self.delete_entries.num_rows)

    @cached_property
    def files(self) -> pa.Table:
        """One row per selected data file, with the paths of the delete files to apply."""
        df = self.data_entries.column("data_file")
        names = [f.name for f in df.type]
        cols: dict[str, Any] = {}
        for name in ("file_path", "file_format", "partition", "record_count",
                     "file_size_in_bytes"):
            if name in names:
                cols[name] = pc.struct_field(df, name)
        cols["partition_spec_id"] = self.data_entries.column("partition_spec_id")
        cols["sequence_number"] = self.data_entries.column("sequence_number")
        cols["file_sequence_number"] = self.data_entries.column("file_sequence_number")
        paths = struct_column(self.delete_entries, "file_path").to_pylist() \
            if self.delete_entries.num_rows else []
        cols["delete_files"] = pa.array(
            [[paths[j] for j in idx] for idx in self.deletes_per_file], pa.list_(pa.string()))
        return pa.table(cols)

    @cached_property
    def tasks(self) -> list[FileScanTask]:
        """A :class:`FileScanTask` per selected data file (Python objects: for a few files).

        ``residual_filter`` is ``True`` when the partition decides the filter, else the
        unbound residual :class:`Expression`.
        """
        deletes = content_files_of(self.delete_entries, self.specs, self.schema)
        data = content_files_of(self.data_entries, self.specs, self.schema)
        residuals: dict[int, ResidualEvaluator | None] = {}
        out = []
        for i, f in enumerate(data):
            spec = self.specs[f.spec_id]
            if f.spec_id not in residuals:
                try:
                    residuals[f.spec_id] = ResidualEvaluator(spec, self.schema,
                                                             self.row_filter,
                                                             self.case_sensitive)
                except IcebergError:
                    residuals[f.spec_id] = None
            evaluator = residuals[f.spec_id]
            expr = self.row_filter
            if evaluator is not None:
                expr = evaluator.residual_for(
                    {pf.field_id: v for pf, v in zip(spec.fields, f.partition, strict=True)})
            residual: Any = True if isinstance(expr, AlwaysTrue) else \
                False if isinstance(expr, AlwaysFalse) else unbind(expr)
            out.append(FileScanTask(self.schema, spec, f,
                                    tuple(deletes[j] for j in self.deletes_per_file[i]),
                                    residual))
        return out

    def take(self, rows: Sequence[int] | range | np.ndarray[Any, Any]) -> ScanPlan:
        """The plan of only these data entries (row indices, in this order), with only the delete
        entries they reference (``deletes_per_file`` re-indexed; order kept).

        Splits a plan cheaply: e.g. one small, picklable sub-plan per Spark partition whose
        :attr:`tasks` are built where it is read. Its tasks are those of the same rows of this
        plan; the planning counters (manifests, files considered, stats) are this plan's.
        A contiguous ascending run of rows is sliced, not copied.
        """
        n = self.files_selected
        if isinstance(rows, range) and rows.step == 1:
            if rows.start < 0 or rows.stop > n:
                raise ValidationError("row index out of range", field="rows",
                                      value=f"{rows.start}..{rows.stop - 1} of {n}")
            data = self.data_entries.slice(rows.start, max(len(rows), 0))
            per_file = self.deletes_per_file[rows.start:rows.stop]
        else:
            idx = np.asarray(rows, dtype=np.int64).reshape(-1)
            if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
                bad = int(idx.min()) if int(idx.min()) < 0 else int(idx.max())
                raise ValidationError("row index out of range", field="rows",
                                      value=f"{bad} of {n}")
            data = take_rows(self.data_entries, idx)
            per_file = tuple(self.deletes_per_file[i] for i in idx.tolist())
        used = sorted(set(chain.from_iterable(per_file)))
        deletes = self.delete_entries
        if len(used) < self.delete_files_selected:
            deletes = take_rows(deletes, np.asarray(used, dtype=np.int64))
            new_index = {old: new for new, old in enumerate(used)}
            per_file = tuple(tuple(new_index[j] for j in js) if js else () for js in per_file)
        return ScanPlan(
            self.snapshot_id, self.schema, self.specs, self.row_filter, self.case_sensitive,
            data, deletes, tuple(per_file), manifests_total=self.manifests_total,
            manifests_read=self.manifests_read, files_considered=self.files_considered,
            delete_files_considered=self.delete_files_considered, stats=dict(self.stats))

    def __repr__(self) -> str:
        return (f"ScanPlan(snapshot_id={self.snapshot_id}, files={self.files_selected}/"
                f"{self.files_considered}, deletes={self.delete_files_selected}, manifests="
                f"{self.manifests_read}/{self.manifests_total})")


# --------------------------------------------------------------------------- planning


def plan_files(
    io: FileIO,
    metadata: TableMetadata,
    *,
    snapshot_id: int | None = None,
    row_filter: str | Expression = "true",
    case_sensitive: bool = True,
    cache: ManifestCache | None = None,
    schema: Schema | None = None,
    column_stats: bool = True,
) -> ScanPlan:
    """Plan a scan of a snapshot (default: the current one). Spec: Scan Planning.

    ``schema`` overrides the schema the filter is bound to and the plan reads with (default:
    the snapshot's schema; a branch read uses the table's current schema). Manifests are
    decoded without ``column_sizes`` (planning never uses it); ``column_stats=False`` also
    skips the other column metrics of data files unless the filter needs them (as Iceberg
    Java's ``planFiles`` without ``includeColumnStats``), and the plan's data files carry none
    either way (metrics a filter needs prune files, and stay in the cache).
    ``cache`` keeps decoded manifest lists and manifests: a warm re-plan opens no file.
    """
    expr = parse(row_filter) if isinstance(row_filter, str) else row_filter
    if snapshot_id is None:
        snapshot = metadata.current_snapshot()
        default_schema = metadata.schema
    else:
        snapshot = metadata.snapshot_by_id(snapshot_id)
        if snapshot is None:
            raise NoSuchSnapshot("no such snapshot in the table metadata",
                                 file=metadata.source_file, field="snapshot-id",
                                 value=snapshot_id)
        default_schema = metadata.schema_for_snapshot(snapshot_id)
    if schema is None:
        schema = default_schema
    bound = bind(expr, schema, case_sensitive)
    specs = dict(metadata.specs_by_id)
    if snapshot is None:
        empty = read_manifest_entries(io, [], metadata.format_version)
        return ScanPlan(None, schema, specs, expr, case_sensitive, empty, empty, ())
    if snapshot.root_manifest is not None:  # EXPERIMENTAL format version 4: a root manifest
        from icenb.table.scan.v4_planning import plan_root_manifest

        return plan_root_manifest(io, metadata, snapshot, schema=schema, expr=expr, bound=bound,
                                  case_sensitive=case_sensitive, column_stats=column_stats,
                                  cache=cache)
    projections = Projections(specs, schema, expr, case_sensitive)

    # 1. manifests
    manifest_list = read_manifest_list_table(io, snapshot, metadata.format_version, cache=cache)
    keep = manifest_mask(manifest_list, projections, cache, snapshot.manifest_list)
    chosen_rows = np.flatnonzero(keep)
    chosen = manifest_files_from_arrow(
        manifest_list if len(chosen_rows) == len(keep) else
        manifest_list.take(pa.array(chosen_rows, pa.int64())), file=snapshot.manifest_list)
    data_manifests = [m for m in chosen if m.content == ManifestContent.DATA]
    delete_manifests = [m for m in chosen if m.content != ManifestContent.DATA]
    stats = column_stats or not isinstance(bound, AlwaysTrue)
    delete_entries = read_manifest_entries(
        io, delete_manifests, metadata.format_version, cache=cache,
        columns=_PLANNING_COLUMNS + _STATS_COLUMNS)

    # 2. files: data manifests streamed in groups, delete files masked over all entries
    selected, data_considered = _select_data_files(io, data_manifests, cache, projections,
                                                   schema, bound, stats, column_stats)
    selected_deletes, deletes_considered = select_files(delete_entries, False, projections,
                                                         schema, AlwaysTrue())

    # 3. deletes
    matched = match_deletes(selected, selected_deletes, specs)
    return ScanPlan(
        snapshot.snapshot_id, schema, specs, expr, case_sensitive, selected, selected_deletes,
        matched, manifests_total=manifest_list.num_rows, manifests_read=len(chosen),
        files_considered=data_considered, delete_files_considered=deletes_considered,
    )


#: Stored bytes of data manifests decoded and pruned at a time: a plan holds the compact
#: selected entries plus about two groups of decoded manifests (the next group decodes while
#: this one is pruned), whatever the table's size.
PLAN_GROUP_BYTES = 4 << 20


def _groups(manifests: Sequence[ManifestFile]) -> list[list[ManifestFile]]:
    out: list[list[ManifestFile]] = []
    group: list[ManifestFile] = []
    size = 0
    for m in manifests:
        group.append(m)
        size += max(m.manifest_length or 0, 0)
        if size >= PLAN_GROUP_BYTES:
            out.append(group)
            group, size = [], 0
    if group:
        out.append(group)
    return out


def _select_data_files(io: FileIO, manifests: Sequence[ManifestFile],
                       cache: ManifestCache | None, projections: Projections, schema: Schema,
                       bound: Expression, stats: bool, keep_stats: bool
                       ) -> tuple[pa.Table, int]:
    """The live data files of ``manifests`` that may match (spec: Scan Planning, steps 2), and
    how many live ones there were. Manifests are decoded group by group into their compact
    form (:mod:`icenb.io.compact_manifest`, cached), the next group decoding in a thread
    while this one is pruned; only the selected entries are kept, with their metric maps
    only when ``keep_stats``. ``stats``: the metrics are decoded (a filter or the caller
    needs them)."""
    if not manifests:
        return read_manifest_entries(io, [], 2), 0
    columns = _PLANNING_COLUMNS + (_STATS_COLUMNS if stats else ())
    groups = _groups(manifests)

    plan_bytes = sum(max(m.manifest_length or 0, 0) for m in manifests)

    def load(group: list[ManifestFile]) -> DecodedGroup:
        return decode_data_manifests(io, group, columns, stats, cache, plan_bytes)

    parts: list[pa.Table] = []
    considered = 0
    if len(groups) == 1:  # nothing to overlap: no thread
        compacts = finish_data_manifests(load(groups[0]), stats, cache)
        return _select_compact(compacts, projections, schema, bound, keep_stats)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: Future[DecodedGroup] | None = pool.submit(load, groups[0])
        for i in range(len(groups)):
            assert pending is not None
            decoded = pending.result()
            pending = pool.submit(load, groups[i + 1]) if i + 1 < len(groups) else None
            compacts = finish_data_manifests(decoded, stats, cache)
            del decoded
            part, n = _select_compact(compacts, projections, schema, bound, keep_stats)
            considered += n
            if part.num_rows or not parts:
                parts.append(part)
            del compacts
    return concat_entry_tables(parts), considered


def _select_compact(compacts: Sequence[CompactManifest], projections: Projections,
                    schema: Schema, bound: Expression, stats: bool) -> tuple[pa.Table, int]:
    """The entries of some compact manifests that may match, and how many there were."""
    parts = runs(compacts)
    entries = parts[0][0] if len(parts) == 1 else concat_entry_tables([e for e, _ in parts])
    n = entries.num_rows
    if n == 0:
        return entries, 0
    keep = partition_mask(entries, projections)
    metrics = [m for _, m in parts]
    if keep.any():
        keep &= compact_metrics_mask(entries, metrics, keep, schema, bound)
    selected = select_rows(entries, keep)
    if stats and selected.num_rows:
        chosen = []
        start = 0
        for t in metrics:
            part = keep[start:start + t.num_rows]
            start += t.num_rows
            if part.all():
                chosen.append(t)
            elif part.any():
                chosen.append(t.filter(pa.array(part, pa.bool_())))
        names = sorted({name for t in chosen for name in t.column_names})
        wide = pa.table(concat_metrics(chosen, names)) if names else \
            pa.table({"_": pa.nulls(selected.num_rows)}).select([])
        selected = restore_metrics(selected, wide, compacts[0].data_file_type)
    return selected, n


# --------------------------------------------------------------------------- tasks


def unified_partition_struct(spec: PartitionSpec, schema: Schema) -> StructType:
    """The spec's partition type; a field whose source is gone reads as ``unknown``."""
    try:
        return spec.partition_type(schema)
    except IcebergError:
        return StructType(*(NestedField(pf.field_id, pf.name, UnknownType(), False)
                            for pf in spec.fields))


def content_files_of(entries: pa.Table, specs: Mapping[int, PartitionSpec], schema: Schema
                   ) -> list[DataFile]:
    """DataFile objects for the entries (partition tuples in their spec's field order)."""
    if entries.num_rows == 0:
        return []
    records = struct_array(entries.column("data_file")).to_pylist()
    spec_ids = [int(s) for s in entries.column("partition_spec_id").to_pylist()]
    partitions: list[Sequence[Any]] = [()] * entries.num_rows
    arr = np.asarray(spec_ids)
    for sid in set(spec_ids):
        rows = np.flatnonzero(arr == sid)
        spec = specs[sid]
        for r, key in zip(rows, partition_keys(entries, rows, spec), strict=True):
            partitions[int(r)] = key
    seqs = entries.column("sequence_number").to_pylist()
    types = {sid: unified_partition_struct(specs[sid], schema) for sid in set(spec_ids)}
    out = []
    for rec, sid, part, seq in zip(records, spec_ids, partitions, seqs, strict=True):
        rec["partition"] = list(part)
        out.append(attach_types(DataFile.from_avro_record(
            rec, types[sid], spec_id=sid, data_sequence_number=None if seq is None else int(seq)),
            schema, specs[sid]))  # so its display shows bounds and partitions as values
    return out
