"""Pruning in scan planning (spec: "Scan Planning"), on Arrow columns: manifests by the row
filter projected inclusively onto their partition spec and evaluated on the manifest list's
partition field summaries; manifest entries by the projected filter on their partition tuple
and, for data files, by inclusive metrics evaluation on their column metrics. Delete files are
pruned by partition only (an equality delete's metrics on a non-key column say nothing about the
rows it deletes); a spec whose projection or partition columns cannot be resolved is not pruned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.compact_manifest import concat_metrics, metric_column
from icenb.io.manifest_reader import DecodedManifest, ManifestCache
from icenb.spec.evaluators import evaluate_arrow
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    referenced_field_ids,
)
from icenb.spec.manifest import (
    EntryStatus,
    FileContent,
    avro_field_name,
)
from icenb.spec.manifest_evaluator import evaluate_manifests_arrow, summaries_table
from icenb.spec.metrics_evaluator import (
    evaluate_inclusive_arrow,
    metrics_table,
    metrics_table_of,
)
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.projection import project_inclusive_bound
from icenb.spec.schema import Schema
from icenb.spec.types import StructType

__all__ = ["Projections", "compact_metrics_mask", "manifest_mask", "partition_children",
           "partition_mask", "select_files", "select_rows", "struct_array", "struct_column",
           "take_rows", "without_metrics"]

_METRIC_COLUMNS = ("record_count", "value_counts", "null_value_counts", "nan_value_counts",
                   "lower_bounds", "upper_bounds")



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
    keep = live & partition_mask(entries, projections)
    if data:
        keep &= _metrics_mask(entries, keep, schema, bound)
    return select_rows(entries, keep), int(live.sum())


def _bools(mask: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, Any]:
    """A boolean Arrow mask as numpy (null: false)."""
    filled = pc.fill_null(mask, False)
    if isinstance(filled, pa.ChunkedArray):
        if filled.num_chunks == 0:
            return np.zeros(0, dtype=bool)
        filled = filled.combine_chunks()
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)


def take_rows(entries: pa.Table, rows: np.ndarray[Any, Any]) -> pa.Table:
    """These rows of ``entries`` (a zero-copy slice when they are one ascending run)."""
    if rows.size == 0:
        return entries.slice(0, 0)
    first = int(rows[0])
    if int(rows[-1]) - first == rows.size - 1 and (rows.size == 1 or bool(
            (np.diff(rows) == 1).all())):
        return entries.slice(first, int(rows.size))
    return entries.take(pa.array(rows, pa.int64()))


def select_rows(entries: pa.Table, mask: np.ndarray[Any, Any]) -> pa.Table:
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


def struct_array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    return column


def struct_column(entries: pa.Table, name: str) -> pa.Array:
    return struct_array(pc.struct_field(entries.column("data_file"), name))


def manifest_mask(manifest_list: pa.Table, projections: Projections,
                  cache: ManifestCache | None = None, location: str | None = None
                  ) -> np.ndarray[Any, Any]:
    """Manifests that may hold live matching files (spec: Scan Planning, manifest skipping).
    With a ``cache`` and the list's ``location``, the decoded partition summaries are kept
    (a warm plan of a large list only evaluates them)."""
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
        key = ("<partition-summaries>", location, int(sid), str(ptype))
        hit = cache.get(key) if cache is not None and location is not None else None
        if hit is None:
            parts = manifest_list.column("partitions").take(pa.array(rows))
            hit = DecodedManifest(summaries_table(parts, ptype), None, None)
            if cache is not None and location is not None:
                cache.put(key, hit)
        mask = evaluate_manifests_arrow(expr, hit.table)
        keep[rows] &= np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
    return keep


def partition_children(partition: pa.Array, fields: Sequence[tuple[int, str]]
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


def partition_mask(entries: pa.Table, projections: Projections) -> np.ndarray[Any, Any]:
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
            partition = struct_array(pc.struct_field(entries.column("data_file"), "partition"))
        rows = np.flatnonzero(spec_ids == sid)
        part = partition if len(rows) == n else partition.take(pa.array(rows))
        children = partition_children(part, [(f.field_id, f.name) for f in ptype.fields])
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


def compact_metrics_mask(entries: pa.Table, metrics: Sequence[pa.Table],
                         candidates: np.ndarray[Any, Any], schema: Schema,
                         bound: Expression) -> np.ndarray[Any, Any]:
    """:func:`_metrics_mask` on compact manifests (:mod:`icenb.io.compact_manifest`):
    ``metrics`` are their metric columns, in the order of ``entries``' rows; only the columns
    of the fields the filter references are read."""
    n = entries.num_rows
    keep = np.ones(n, dtype=bool)
    rows = np.flatnonzero(candidates)
    if len(rows) == 0 or isinstance(bound, AlwaysTrue):
        return keep
    fids = sorted(referenced_field_ids(bound))
    wanted = [metric_column(name, fid) for fid in fids for name in
              ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
               "upper_bounds")]
    columns = concat_metrics(metrics, wanted)
    take = None if len(rows) == n else pa.array(rows, pa.int64())
    record_count = struct_column(entries, "record_count")
    if take is not None:
        record_count = record_count.take(take)

    def value(name: str, fid: int) -> pa.Array | None:
        col = columns.get(metric_column(name, fid))
        if col is None:
            return None
        if take is not None:
            col = col.take(take)
        if pa.types.is_fixed_size_binary(col.type):  # compact bounds: as stored, binary
            col = col.cast(pa.binary())
        return col

    stats = metrics_table_of(record_count, value, schema, fids, len(rows))
    mask = evaluate_inclusive_arrow(bound, stats)
    keep[rows] = np.asarray(pc.fill_null(mask, True).to_numpy(zero_copy_only=False), dtype=bool)
    return keep


def without_metrics(entries: pa.Table) -> pa.Table:
    """``entries`` with ``data_file`` lacking the column metric maps (spec: Manifests, fields
    108-110, 125, 128, 137)."""
    if "data_file" not in entries.column_names or entries.num_rows == 0:
        return entries
    df = entries.column("data_file")
    fields = [f for f in df.type if f.name not in (*_METRIC_COLUMNS[1:], "column_sizes")]
    if len(fields) == df.type.num_fields:
        return entries
    chunks = []
    for chunk in df.chunks:
        mask = chunk.is_null() if chunk.null_count else None
        chunks.append(pa.StructArray.from_arrays([chunk.field(f.name) for f in fields],
                                                 fields=fields, mask=mask))
    return entries.set_column(entries.column_names.index("data_file"), "data_file",
                              pa.chunked_array(chunks, pa.struct(fields)))
