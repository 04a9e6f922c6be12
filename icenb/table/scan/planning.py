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
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, InvalidMetadata, NoSuchSnapshot, ValidationError
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    read_manifest_entries,
    read_manifest_list_table,
)
from icenb.spec.evaluators import evaluate_arrow
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    bind,
    referenced_field_ids,
    unbind,
)
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    FileScanTask,
    ManifestContent,
    avro_field_name,
    manifest_files_from_arrow,
)
from icenb.spec.manifest_evaluator import evaluate_manifests_arrow, summaries_table
from icenb.spec.metrics_evaluator import evaluate_inclusive_arrow, metrics_table
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.projection import ResidualEvaluator, project_inclusive_bound
from icenb.spec.schema import Schema
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import NestedField, StructType, UnknownType

__all__ = ["POSITION_DELETE_FILE_PATH_ID", "ScanPlan", "match_deletes", "plan_files"]

#: Field id of ``file_path`` in position delete files (spec: Position Delete Files).
POSITION_DELETE_FILE_PATH_ID = 2147483546

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
_METRIC_COLUMNS = ("record_count", "value_counts", "null_value_counts", "nan_value_counts",
                   "lower_bounds", "upper_bounds")


@dataclass(frozen=True)
class ScanPlan:
    """The result of planning: selected data entries, matched deletes and counts.

    ``data_entries`` / ``delete_entries`` are manifest entry tables (columns of
    :func:`~icenb.io.manifest_reader.read_manifest_entries`, without ``column_sizes``, and
    without the other metrics when planned with ``column_stats=False``; one chunk per manifest,
    never copied when every entry is selected); ``deletes_per_file[i]`` holds the row indices
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
        paths = _struct_column(self.delete_entries, "file_path").to_pylist() \
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
            data = _take_rows(self.data_entries, idx)
            per_file = tuple(self.deletes_per_file[i] for i in idx.tolist())
        used = sorted(set(chain.from_iterable(per_file)))
        deletes = self.delete_entries
        if len(used) < self.delete_files_selected:
            deletes = _take_rows(deletes, np.asarray(used, dtype=np.int64))
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
    Java's ``planFiles`` without ``includeColumnStats``), so the plan's data files carry none.
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
    keep = _manifest_mask(manifest_list, projections)
    chosen_rows = np.flatnonzero(keep)
    chosen = manifest_files_from_arrow(
        manifest_list if len(chosen_rows) == len(keep) else
        manifest_list.take(pa.array(chosen_rows, pa.int64())), file=snapshot.manifest_list)
    data_manifests = [m for m in chosen if m.content == ManifestContent.DATA]
    delete_manifests = [m for m in chosen if m.content != ManifestContent.DATA]
    stats = column_stats or not isinstance(bound, AlwaysTrue)
    data_entries = read_manifest_entries(
        io, data_manifests, metadata.format_version, cache=cache,
        columns=_PLANNING_COLUMNS + (_STATS_COLUMNS if stats else ()))
    delete_entries = read_manifest_entries(
        io, delete_manifests, metadata.format_version, cache=cache,
        columns=_PLANNING_COLUMNS + _STATS_COLUMNS)

    # 2. files: masks over all entries (chunked columns, no copy of the entry structs)
    selected, data_considered = select_files(data_entries, True, projections, schema, bound)
    selected_deletes, deletes_considered = select_files(delete_entries, False, projections,
                                                         schema, AlwaysTrue())

    # 3. deletes
    matched = match_deletes(selected, selected_deletes, specs)
    return ScanPlan(
        snapshot.snapshot_id, schema, specs, expr, case_sensitive, selected, selected_deletes,
        matched, manifests_total=manifest_list.num_rows, manifests_read=len(chosen),
        files_considered=data_considered, delete_files_considered=deletes_considered,
    )


def select_files(entries: pa.Table, data: bool, projections: Projections, schema: Schema,
                  bound: Expression) -> tuple[pa.Table, int]:
    """The live data (or delete) files of ``entries`` that may match the filter, and how many
    live ones there were (spec: Scan Planning; a data manifest holds only data files and a
    delete manifest only delete files, other entries are ignored)."""
    if entries.num_rows == 0:
        return entries, 0
    live = _bools(pc.not_equal(entries.column("status"),
                               pa.scalar(int(EntryStatus.DELETED), pa.int32())))
    content = pc.struct_field(entries.column("data_file"), "content")
    is_data = _bools(pc.equal(content, pa.scalar(int(FileContent.DATA), pa.int32())))
    live &= is_data if data else ~is_data
    keep = live & _partition_mask(entries, projections)
    if data:
        keep &= _metrics_mask(entries, keep, schema, bound)
    return _select(entries, keep), int(live.sum())


def _bools(mask: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, Any]:
    """A boolean Arrow mask as numpy (null: false)."""
    filled = pc.fill_null(mask, False)
    if isinstance(filled, pa.ChunkedArray):
        if filled.num_chunks == 0:
            return np.zeros(0, dtype=bool)
        filled = filled.combine_chunks()
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)


def _take_rows(entries: pa.Table, rows: np.ndarray[Any, Any]) -> pa.Table:
    """These rows of ``entries`` (a zero-copy slice when they are one ascending run)."""
    if rows.size == 0:
        return entries.slice(0, 0)
    first = int(rows[0])
    if int(rows[-1]) - first == rows.size - 1 and (rows.size == 1 or bool(
            (np.diff(rows) == 1).all())):
        return entries.slice(first, int(rows.size))
    return entries.take(pa.array(rows, pa.int64()))


def _select(entries: pa.Table, mask: np.ndarray[Any, Any]) -> pa.Table:
    """The rows of ``entries`` where mask is true (the table itself when all are)."""
    if mask.all():
        return entries
    if not mask.any():
        return entries.slice(0, 0)
    return entries.filter(pa.array(mask, pa.bool_()))


class Projections:
    """The inclusive projection of the row filter per spec id (None: cannot prune)."""

    def __init__(self, specs: Mapping[int, PartitionSpec], schema: Schema, expr: Expression,
                 case_sensitive: bool) -> None:
        self.specs = specs
        self.schema = schema
        self.expr = expr
        self.case_sensitive = case_sensitive
        self._cache: dict[int, tuple[Expression, StructType] | None] = {}

    def get(self, spec_id: int) -> tuple[Expression, StructType] | None:
        """The projected filter bound to the spec's partition type, and that type."""
        if spec_id not in self._cache:
            spec = self.specs.get(spec_id)
            result: tuple[Expression, StructType] | None = None
            if spec is not None:
                try:
                    projected = project_inclusive_bound(spec, self.schema, self.expr,
                                                        self.case_sensitive)
                    if not isinstance(projected, AlwaysTrue):
                        result = (projected, spec.partition_type(self.schema))
                except IcebergError:
                    result = None  # e.g. a source column no longer in the schema
            self._cache[spec_id] = result
        return self._cache[spec_id]


def _struct(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    return column


def _struct_column(entries: pa.Table, name: str) -> pa.Array:
    return _struct(pc.struct_field(entries.column("data_file"), name))


def _manifest_mask(manifest_list: pa.Table, projections: Projections) -> np.ndarray[Any, Any]:
    """Manifests that may hold live matching files (spec: Scan Planning, manifest skipping)."""
    n = manifest_list.num_rows
    keep = np.ones(n, dtype=bool)
    names = manifest_list.column_names
    # Manifests with only DELETED entries hold no live file (known counts only).
    if "added_files_count" in names and "existing_files_count" in names:
        added = manifest_list.column("added_files_count")
        existing = manifest_list.column("existing_files_count")
        empty = pc.and_(pc.fill_null(pc.equal(added, 0), False),
                        pc.fill_null(pc.equal(existing, 0), False))
        keep &= ~np.asarray(empty.to_numpy(zero_copy_only=False), dtype=bool)
    if "partitions" not in names or n == 0:
        return keep
    spec_ids = np.asarray(manifest_list.column("partition_spec_id").to_numpy(
        zero_copy_only=False))
    for sid in np.unique(spec_ids):
        projected = projections.get(int(sid))
        if projected is None:
            continue
        expr, ptype = projected
        rows = np.flatnonzero(spec_ids == sid)
        parts = manifest_list.column("partitions").take(pa.array(rows))
        mask = evaluate_manifests_arrow(expr, summaries_table(parts, ptype))
        keep[rows] &= np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
    return keep


def _partition_children(partition: pa.Array, fields: Sequence[tuple[int, str]]
                        ) -> dict[int, pa.Array] | None:
    """The unified partition struct's children for each field of one spec, by field id
    (None when a field cannot be found)."""
    by_id: dict[int, int] = {}
    by_name: dict[str, int] = {}
    stype = partition.type
    for i in range(stype.num_fields):
        f = stype.field(i)
        raw = (f.metadata or {}).get(FIELD_ID_KEY)
        if raw is not None:
            by_id[int(raw)] = i
        by_name[f.name] = i
    children = partition.flatten() if isinstance(partition, pa.StructArray) else []
    out: dict[int, pa.Array] = {}
    for fid, name in fields:
        idx = by_id.get(fid)
        if idx is None:
            idx = by_name.get(avro_field_name(name), by_name.get(name))
        if idx is None:
            return None
        out[fid] = children[idx]
    return out


def _partition_mask(entries: pa.Table, projections: Projections) -> np.ndarray[Any, Any]:
    """Entries whose partition may match the projected filter of their spec."""
    n = entries.num_rows
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    spec_ids = np.asarray(entries.column("partition_spec_id").to_numpy(), dtype=np.int64)
    partition: pa.Array | None = None
    if (spec_ids == spec_ids[0]).all():
        unique = [int(spec_ids[0])]
    else:
        unique = [int(sid) for sid in np.unique(spec_ids)]
    for sid in unique:
        projected = projections.get(sid)
        if projected is None:
            continue
        expr, ptype = projected
        if isinstance(expr, AlwaysFalse):
            keep[spec_ids == sid] = False
            continue
        if partition is None:
            partition = _struct(pc.struct_field(entries.column("data_file"), "partition"))
        rows = np.flatnonzero(spec_ids == sid)
        part = partition if len(rows) == n else partition.take(pa.array(rows))
        children = _partition_children(part, [(f.field_id, f.name) for f in ptype.fields])
        if children is None:
            continue
        batch = pa.RecordBatch.from_arrays(list(children.values()),
                                           names=[str(fid) for fid in children])
        mask = evaluate_arrow(expr, batch, {fid: str(fid) for fid in children})
        keep[rows] = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
    return keep


def _metrics_mask(entries: pa.Table, candidates: np.ndarray[Any, Any], schema: Schema,
                  bound: Expression) -> np.ndarray[Any, Any]:
    """Of the candidate rows, those whose column metrics may hold rows matching the bound row
    filter (other rows: true); only the referenced columns' metrics are decoded."""
    n = entries.num_rows
    keep = np.ones(n, dtype=bool)
    rows = np.flatnonzero(candidates)
    if len(rows) == 0 or isinstance(bound, AlwaysTrue):
        return keep
    df = entries.column("data_file")
    present = [f.name for f in df.type if f.name in _METRIC_COLUMNS]
    files = pa.table({name: pc.struct_field(df, name) for name in present})
    if len(rows) < n:
        files = files.take(pa.array(rows, pa.int64()))
    stats = metrics_table(files, schema, referenced_field_ids(bound))
    mask = evaluate_inclusive_arrow(bound, stats)
    keep[rows] = np.asarray(pc.fill_null(mask, True).to_numpy(zero_copy_only=False), dtype=bool)
    return keep


# --------------------------------------------------------------------------- delete matching


def _partition_keys(entries: pa.Table, rows: np.ndarray[Any, Any], spec: PartitionSpec
                    ) -> list[tuple[Any, ...]]:
    """Partition tuples (Python values, in spec field order) of some entries of one spec."""
    if not spec.fields:
        return [()] * len(rows)
    partition = _struct(pc.struct_field(entries.column("data_file"), "partition"))
    children = _partition_children(partition.take(pa.array(rows, pa.int64())),
                                   [(pf.field_id, pf.name) for pf in spec.fields])
    if children is None:  # fields missing: every value is unknown (null)
        return [(None,) * len(spec.fields)] * len(rows)
    return list(zip(*(children[pf.field_id].to_pylist() for pf in spec.fields), strict=True))


def _path_bound(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _map_items(raw: Any) -> dict[int, Any] | None:
    """An Arrow map (list of pairs) or Avro key/value records as a dict."""
    if raw is None or isinstance(raw, dict):
        return raw
    return {int(k): v for k, v in (
        (item["key"], item["value"]) if isinstance(item, dict) else item for item in raw)}


def _map_get(raw: Any, key: int) -> Any:
    items = _map_items(raw)
    return None if items is None else items.get(key)


def match_deletes(data: pa.Table, deletes: pa.Table, specs: Mapping[int, PartitionSpec]
                   ) -> tuple[tuple[int, ...], ...]:
    """For each data entry, the delete entries that apply (spec: Scan Planning)."""
    n = int(data.num_rows)
    if deletes.num_rows == 0 or n == 0:
        return ((),) * n
    ddf = _struct(deletes.column("data_file"))
    dnames = {f.name for f in ddf.type}

    def dcol(name: str) -> list[Any]:
        if name not in dnames:
            return [None] * deletes.num_rows
        return list(pc.struct_field(ddf, name).to_pylist())

    d_content, d_format, d_paths = dcol("content"), dcol("file_format"), dcol("file_path")
    d_ref, d_lower, d_upper = dcol("referenced_data_file"), dcol("lower_bounds"), \
        dcol("upper_bounds")
    d_seq = [0 if s is None else int(s) for s in deletes.column("sequence_number").to_pylist()]
    d_spec = [int(s) for s in deletes.column("partition_spec_id").to_pylist()]
    d_keys: list[tuple[Any, ...] | None] = [None] * deletes.num_rows
    for sid in set(d_spec):
        spec = specs.get(sid)
        if spec is None:
            continue
        rows = np.flatnonzero(np.asarray(d_spec) == sid)
        for r, key in zip(rows, _partition_keys(deletes, rows, spec), strict=True):
            d_keys[int(r)] = key

    dv_by_path: dict[str, list[int]] = {}
    pos_by_path: dict[str, list[int]] = {}
    pos_by_part: dict[tuple[int, tuple[Any, ...] | None], list[int]] = {}
    eq_by_part: dict[tuple[int, tuple[Any, ...] | None], list[int]] = {}
    eq_global: list[int] = []
    for j in range(deletes.num_rows):
        part = (d_spec[j], d_keys[j])
        if d_content[j] == FileContent.POSITION_DELETES:
            ref = d_ref[j]
            if ref is None:
                lower = _path_bound(_map_get(d_lower[j], POSITION_DELETE_FILE_PATH_ID))
                upper = _path_bound(_map_get(d_upper[j], POSITION_DELETE_FILE_PATH_ID))
                if lower is not None and lower == upper:
                    ref = lower
            if str(d_format[j]).upper() == FileFormat.PUFFIN.name and d_ref[j] is not None:
                if d_ref[j] in dv_by_path:
                    # spec, "Deletion Vectors": at most one deletion vector per data file
                    raise InvalidMetadata("two live deletion vectors for one data file",
                                          file=str(d_paths[j]), field="referenced_data_file",
                                          value=d_ref[j])
                dv_by_path.setdefault(d_ref[j], []).append(j)
            elif ref is not None:
                pos_by_path.setdefault(ref, []).append(j)
            else:
                pos_by_part.setdefault(part, []).append(j)
        else:
            spec = specs.get(d_spec[j])
            if spec is not None and spec.is_unpartitioned:
                eq_global.append(j)
            else:
                eq_by_part.setdefault(part, []).append(j)

    paths = _struct_column(data, "file_path").to_pylist()
    seqs = [0 if s is None else int(s) for s in data.column("sequence_number").to_pylist()]
    spec_ids = [int(s) for s in data.column("partition_spec_id").to_pylist()]
    scoped = {sid for sid, _ in pos_by_part} | {sid for sid, _ in eq_by_part} | \
        {d_spec[j] for js in pos_by_path.values() for j in js}
    keys: list[tuple[Any, ...] | None] = [None] * n
    spec_arr = np.asarray(spec_ids)
    for sid in scoped:
        spec = specs.get(sid)
        if spec is None:
            continue
        rows = np.flatnonzero(spec_arr == sid)
        for r, key in zip(rows, _partition_keys(data, rows, spec), strict=True):
            keys[int(r)] = key

    out: list[tuple[int, ...]] = []
    for i in range(n):
        seq, part = seqs[i], (spec_ids[i], keys[i])
        found = [j for j in dv_by_path.get(paths[i], ()) if seq <= d_seq[j]]
        if not found:
            found = [j for j in pos_by_path.get(paths[i], ())
                     if seq <= d_seq[j] and (d_spec[j], d_keys[j]) == part]
            found += [j for j in pos_by_part.get(part, ()) if seq <= d_seq[j]]
        found += [j for j in eq_by_part.get(part, ()) if seq < d_seq[j]]
        found += [j for j in eq_global if seq < d_seq[j]]
        out.append(tuple(sorted(found)) if found else ())
    return tuple(out)



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
    records = _struct(entries.column("data_file")).to_pylist()
    spec_ids = [int(s) for s in entries.column("partition_spec_id").to_pylist()]
    partitions: list[Sequence[Any]] = [()] * entries.num_rows
    arr = np.asarray(spec_ids)
    for sid in set(spec_ids):
        rows = np.flatnonzero(arr == sid)
        spec = specs[sid]
        for r, key in zip(rows, _partition_keys(entries, rows, spec), strict=True):
            partitions[int(r)] = key
    seqs = entries.column("sequence_number").to_pylist()
    types = {sid: unified_partition_struct(specs[sid], schema) for sid in set(spec_ids)}
    out = []
    for rec, sid, part, seq in zip(records, spec_ids, partitions, seqs, strict=True):
        rec["partition"] = list(part)
        out.append(DataFile.from_avro_record(
            rec, types[sid], spec_id=sid, data_sequence_number=None if seq is None else int(seq)))
    return out
