"""A table's changelog: the rows each snapshot of a range inserted, deleted and updated, as
Iceberg's Spark ``create_changelog_view`` procedure (over the incremental changelog scan) gives.

Spec: "Scan Planning" (which delete files apply to which data files), "Row Lineage"
(``_row_id``), "Reserved Field IDs" (``_change_type``, ``_change_ordinal``,
``_commit_snapshot_id``).

**Range.** ``start`` exclusive, ``end`` inclusive: the snapshots are ``end``'s ancestors after
``start``, oldest first, and ``start`` must be an ancestor of ``end``. No ``start`` (or a time
before the first snapshot) starts at the table's creation, or, once older snapshots have
expired, after the oldest ancestor left (the files only expired snapshots held may be deleted:
what that ancestor changed cannot be read). ``replace`` snapshots
(compactions: "files were added and removed without changing table data") are skipped and take
no ordinal, as in Java; ``_change_ordinal`` is a snapshot's position among the others.

**What a snapshot changed** is computed from its files, columnar, never row by row in Python:
its parent's state and its own are planned (:func:`~icenb.table.scan.planning.plan_files`;
manifests come from the shared cache) and every data file whose live rows can differ is read
once, in a thread pool:

- a data file the snapshot added: its rows live in the snapshot (less any the snapshot itself
  deleted) are INSERTs;
- a data file it removed: its rows live in the parent (the parent's deletes applied) are
  DELETEs;
- a data file live in both whose applicable delete files differ (a new position delete file, a
  deletion vector replacing an older one, an equality delete applying to older data files, each
  as "Scan Planning" matches them): rows live in the parent and not in the snapshot are
  DELETEs (only positions the older DV did not hold), rows live in the snapshot and not in the
  parent (a delete file dropped while its data file stays) are INSERTs.

**Carry-overs and updates**, within one snapshot, as Java's ``create_changelog_view``:

- a DELETE and an INSERT with equal values in every column cancel out (a copy-on-write rewrite
  carries unchanged rows into a new file), one for one;
- with ``identifier_columns``, a DELETE and an INSERT with equal identifier values become
  UPDATE_BEFORE and UPDATE_AFTER; two DELETEs (or two INSERTs) with the same identifier values
  in one snapshot are refused, as Java refuses them (Java pairs the first of several INSERTs;
  icenb names the key instead);
- on a v3+ table without ``identifier_columns``, rows are paired by ``_row_id`` (a rule of
  icenb's; no engine pairs by row lineage today): a DELETE and an INSERT with the same non-null
  ``_row_id`` become an update (a row id held by several rows of one side pairs nothing); rows
  with the same row id and values cancel first, then the rest by values alone (rows rewritten
  without their lineage). ``identifier_columns=()`` pairs nothing.

**Columns**: those of the end state (the schema ``t.at(end)`` reads with), then
``_change_type``, ``_change_ordinal``, ``_commit_snapshot_id`` (Java's changelog columns), then,
on v3+ tables, ``_row_id`` (each row's lineage id; null where the table has none). **Order**: by
ordinal; within a snapshot DELETEs, then UPDATE_BEFORE / UPDATE_AFTER pairs, then INSERTs.

**Where Java agrees.** Iceberg Java 1.10's changelog scan refuses a range in which any
(non-``replace``) snapshot lists a delete manifest, its own or an older one still in its
manifest list ("Delete files are currently not supported in changelog scans"): from a
merge-on-read delete or update, a deletion vector, an ``upsert`` or a ``delete_by_key`` on,
until an overwrite drops every delete file. Where it answers (appends, copy-on-write deletes,
updates and merges, static and dynamic overwrites, rollbacks, ``replace`` compactions; v1-v3,
written by Java or by icenb), icenb returns the same rows (tests/table/explore/
test_changelog_java.py); elsewhere the rules above apply, and the net of each snapshot's
changes equals the difference of its parent's rows and its own.

The work is done when :meth:`Table.changes` is called; a :class:`Changelog` holds Arrow and its
reprs read nothing.
"""

from __future__ import annotations

import os
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, NoSuchSnapshot, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import shared_manifest_cache
from icenb.progress import READING_DATA_FILES, READING_TABLE, progress
from icenb.reprs import safe_repr
from icenb.spec.arrow_schema import to_arrow_schema
from icenb.spec.manifest import FileScanTask
from icenb.spec.metadata_columns import (
    CHANGE_ORDINAL,
    CHANGE_TYPE,
    CHANGELOG_COLUMNS,
    COMMIT_SNAPSHOT_ID,
    DELETED,
    ROW_ID,
    tracks_row_lineage,
)
from icenb.spec.schema import Schema
from icenb.spec.snapshot import MAIN_BRANCH, Operation, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.engine import engine
from icenb.table.explore.diff import entry_keys
from icenb.table.explore.row_match import cancel_equal_rows, split_codes
from icenb.table.scan.planning import ScanPlan, plan_files
from icenb.table.scan.pruning import struct_column
from icenb.table.scan.read import NameMapping, read_task

if TYPE_CHECKING:  # same layer; only for annotations
    from icenb.table.scan import Scan
    from icenb.table.table import Table

__all__ = ["CHANGE_TYPES", "DELETE", "INSERT", "UPDATE_AFTER", "UPDATE_BEFORE", "Changelog",
           "changed_rows", "net_rows", "table_changes"]

INSERT = "INSERT"
DELETE = "DELETE"
UPDATE_BEFORE = "UPDATE_BEFORE"
UPDATE_AFTER = "UPDATE_AFTER"
#: The change types, in the order a snapshot's rows are listed.
CHANGE_TYPES = (DELETE, UPDATE_BEFORE, UPDATE_AFTER, INSERT)
_TYPE_INDEX = {name: i for i, name in enumerate(CHANGE_TYPES)}

#: Threads reading data files (reads release the GIL in Arrow's readers).
MAX_WORKERS = min(8, os.cpu_count() or 1)


# --------------------------------------------------------------------------- netting


def net_rows(deleted: pa.Table, inserted: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(rows removed, rows added): ``deleted`` and ``inserted`` less the rows they share, one
    for one (a multiset difference both ways, over every column)."""
    keep_d, keep_i = cancel_equal_rows(deleted, inserted)
    return _filtered(deleted, keep_d), _filtered(inserted, keep_i)


def _carry_overs(columns: Sequence[str] | None) -> Reduce:
    """Drop the rows a DELETE and an INSERT share, compared on ``columns`` (None: all)."""
    def reduce(deleted: pa.Table, inserted: pa.Table) -> tuple[pa.Table, pa.Table]:
        if columns is None:
            return net_rows(deleted, inserted)
        keep_d, keep_i = cancel_equal_rows(deleted.select(list(columns)),
                                           inserted.select(list(columns)))
        return _filtered(deleted, keep_d), _filtered(inserted, keep_i)

    return reduce


def _filtered(table: pa.Table, keep: np.ndarray[Any, Any]) -> pa.Table:
    if keep.all():
        return table
    return table.filter(pa.array(keep, pa.bool_()))


# --------------------------------------------------------------------------- reading changes


@safe_repr
@dataclass(frozen=True)
class _FileWork:
    """One data file whose live rows may differ between two states: its task in the state
    before (None: not live there) and after (None: not live there)."""

    step: int
    before: FileScanTask | None
    after: FileScanTask | None


class _Plans:
    """Plans of snapshots (None: the empty table), each made once, with one schema."""

    def __init__(self, io: FileIO, metadata: TableMetadata, schema: Schema) -> None:
        self._io, self._metadata, self._schema = io, metadata, schema
        self._plans: dict[int | None, ScanPlan | None] = {}

    def __call__(self, snapshot_id: int | None) -> ScanPlan | None:
        if snapshot_id not in self._plans:
            self._plans[snapshot_id] = None if snapshot_id is None else plan_files(
                self._io, self._metadata, snapshot_id=snapshot_id, schema=self._schema,
                cache=shared_manifest_cache(self._io), column_stats=False)
        return self._plans[snapshot_id]


def _paths(plan: ScanPlan | None) -> pa.Array:
    if plan is None or plan.files_selected == 0:
        return pa.array([], pa.string())
    return struct_column(plan.data_entries, "file_path")


def _rows_where(mask: Any) -> np.ndarray[Any, Any]:
    return np.flatnonzero(np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False),
                                     dtype=bool))


def _tasks(plan: ScanPlan | None, rows: np.ndarray[Any, Any]) -> list[FileScanTask]:
    if plan is None or rows.size == 0:
        return []
    return list(plan.take(rows).tasks)


def _changed_delete_rows(before: ScanPlan, after: ScanPlan
                         ) -> tuple[set[int], set[int]]:
    """Delete entries live on one side only: (rows of ``before``'s, rows of ``after``'s)."""
    kb, ka = entry_keys(before.delete_entries), entry_keys(after.delete_entries)
    gone = _rows_where(pc.invert(pc.is_in(kb, value_set=ka))) if len(kb) else np.zeros(0, int)
    new = _rows_where(pc.invert(pc.is_in(ka, value_set=kb))) if len(ka) else np.zeros(0, int)
    return {int(j) for j in gone}, {int(j) for j in new}


def _file_work(step: int, before: ScanPlan | None, after: ScanPlan | None) -> list[_FileWork]:
    """The data files whose live rows may differ from ``before`` to ``after``: those live on
    one side only, and those live on both whose applicable delete files differ."""
    pb, pa_ = _paths(before), _paths(after)
    if len(pb) == 0 or len(pa_) == 0:
        only_b = np.arange(len(pb), dtype=np.int64)
        only_a = np.arange(len(pa_), dtype=np.int64)
        where_b = np.zeros(0, np.int64)
    else:
        index = np.asarray(pc.fill_null(pc.index_in(pa_, value_set=pb), -1)
                           .to_numpy(zero_copy_only=False), dtype=np.int64)
        only_a = np.flatnonzero(index < 0)
        where_b = index
        only_b = _rows_where(pc.invert(pc.is_in(pb, value_set=pa_)))
    work = [_FileWork(step, task, None) for task in _tasks(before, only_b)]
    work += [_FileWork(step, None, task) for task in _tasks(after, only_a)]
    if before is None or after is None or where_b.size == 0:
        return work
    gone, new = _changed_delete_rows(before, after)
    if not gone and not new:
        return work
    rows_b: list[int] = []
    rows_a: list[int] = []
    per_b, per_a = before.deletes_per_file, after.deletes_per_file
    for i_a in np.flatnonzero(where_b >= 0).tolist():
        i_b = int(where_b[i_a])
        if any(j in new for j in per_a[i_a]) or any(j in gone for j in per_b[i_b]):
            rows_b.append(i_b)
            rows_a.append(i_a)
    tasks_b = _tasks(before, np.asarray(rows_b, dtype=np.int64))
    tasks_a = _tasks(after, np.asarray(rows_a, dtype=np.int64))
    return work + [_FileWork(step, b, a) for b, a in zip(tasks_b, tasks_a, strict=True)]


def _read_work(io: FileIO, work: _FileWork, schema: Schema, name_mapping: NameMapping | None
               ) -> tuple[pa.Table | None, pa.Table | None]:
    """(rows deleted, rows inserted) of one data file between the two states."""
    if work.after is None:
        assert work.before is not None
        return read_task(io, work.before, schema, name_mapping=name_mapping), None
    if work.before is None:
        return None, read_task(io, work.after, schema, name_mapping=name_mapping)
    # live on both sides: read the rows once, marking the rows the older deletes removed, and
    # only the delete flags of the newer deletes (reads the equality columns, if any)
    rows = read_task(io, work.before, Schema(*schema.fields, DELETED),
                     name_mapping=name_mapping)
    gone_before = _flags(rows.column(rows.num_columns - 1))
    rows = rows.remove_column(rows.num_columns - 1)
    gone_after = _flags(read_task(io, work.after, Schema(DELETED),
                                  name_mapping=name_mapping).column(0))
    deleted = _filtered(rows, ~gone_before & gone_after)
    inserted = _filtered(rows, gone_before & ~gone_after)
    return deleted, inserted


def _flags(column: pa.ChunkedArray) -> np.ndarray[Any, Any]:
    return np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), dtype=bool)


#: What reading keeps of a group of files: ``reduce(deleted, inserted)`` (e.g. without the
#: rows both hold).
Reduce = Callable[[pa.Table, pa.Table], tuple[pa.Table, pa.Table]]


def _match_groups(step_work: Sequence[_FileWork], schema: Schema) -> list[Any]:
    """A key per file of one step such that equal rows can only come from files with equal
    keys: the (spec, partition) when every file has one spec whose source columns are all
    read (a partition value is a function of the row), else one key for all."""
    tasks = [w.after if w.after is not None else w.before for w in step_work]
    specs = {t.spec.spec_id for t in tasks if t is not None}
    read_ids = set(schema.field_ids())
    if len(specs) != 1:
        return [None] * len(step_work)
    spec = next(t.spec for t in tasks if t is not None)
    if not all(sid in read_ids for pf in spec.fields for sid in pf.source_ids):
        return [None] * len(step_work)
    return [None if t is None else repr(tuple(t.data_file.partition)) for t in tasks]


def changed_rows(io: FileIO, metadata: TableMetadata,
                 steps: Sequence[tuple[int | None, int | None]], schema: Schema, *,
                 with_row_ids: bool = False, reduce: Reduce | None = None
                 ) -> list[tuple[pa.Table, pa.Table]]:
    """For each (before, after) pair of snapshot ids (None: the empty table), the rows whose
    liveness differs: (rows live before and not after, rows live after and not before), read
    with ``schema`` (and ``_row_id`` last when ``with_row_ids``).

    Both states are planned with ``schema``; the data files are read in a thread pool, each
    once per pair, a bounded window of files ahead. Files whose rows can be equal (one
    partition of one spec, see :func:`_match_groups`) are read together, and ``reduce`` runs on
    each such group as soon as it is read: only what it keeps is held."""
    from icenb.table.scan import Scan

    read_schema = Schema(*schema.fields, ROW_ID) if with_row_ids else schema
    empty = to_arrow_schema(read_schema).empty_table()
    plans = _Plans(io, metadata, schema)
    work: list[_FileWork] = []
    groups: list[tuple[int, Any]] = []
    for step, (before, after) in enumerate(steps):
        step_work = _file_work(step, plans(before), plans(after))
        keys = _match_groups(step_work, schema)
        ordered = sorted(range(len(step_work)), key=lambda j: (keys[j] is None, keys[j] or ""))
        work += [step_work[j] for j in ordered]
        groups += [(step, keys[j]) for j in ordered]
    name_mapping = Scan(io, metadata, None, schema).name_mapping
    deleted: list[list[pa.Table]] = [[] for _ in steps]
    inserted: list[list[pa.Table]] = [[] for _ in steps]
    held: tuple[list[pa.Table], list[pa.Table]] = ([], [])

    def flush(step: int) -> None:
        d = pa.concat_tables(held[0]) if held[0] else empty
        i = pa.concat_tables(held[1]) if held[1] else empty
        if reduce is not None and d.num_rows and i.num_rows:
            d, i = reduce(d, i)
        if d.num_rows:
            deleted[step].append(d)
        if i.num_rows:
            inserted[step].append(i)
        held[0].clear()
        held[1].clear()

    def read(item: _FileWork) -> tuple[pa.Table | None, pa.Table | None]:
        return _read_work(io, item, read_schema, name_mapping)

    with progress(READING_DATA_FILES, total=len(work)) as shown:
        for n, (d, i) in enumerate(_in_order(read, work)):
            shown.advance()
            if d is not None and d.num_rows:
                held[0].append(d)
            if i is not None and i.num_rows:
                held[1].append(i)
            if n + 1 == len(work) or groups[n + 1] != groups[n]:
                flush(groups[n][0])
    return [(pa.concat_tables(d) if d else empty, pa.concat_tables(i) if i else empty)
            for d, i in zip(deleted, inserted, strict=True)]


def _in_order(read: Callable[[_FileWork], Any], work: Sequence[_FileWork]) -> Iterator[Any]:
    """``read`` of each item, in order, in a thread pool reading at most a window of items
    ahead of the one consumed (so unconsumed results stay few)."""
    if len(work) < 2 or MAX_WORKERS < 2:
        yield from map(read, work)
        return
    window = 2 * MAX_WORKERS
    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(work))) as pool:
        pending: deque[Future[Any]] = deque(pool.submit(read, w) for w in work[:window])
        ahead = iter(work[window:])
        while pending:
            result = pending.popleft().result()
            following = next(ahead, None)
            if following is not None:
                pending.append(pool.submit(read, following))
            yield result


# --------------------------------------------------------------------------- pairing


def _key_codes(deleted: pa.Table, inserted: pa.Table, columns: Sequence[str]
               ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    return split_codes(deleted.select(list(columns)), inserted.select(list(columns)))


def _pairs(kd: np.ndarray[Any, Any], ki: np.ndarray[Any, Any],
           eligible_d: np.ndarray[Any, Any], eligible_i: np.ndarray[Any, Any], *,
           unique_inserts: bool) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Eligible deleted rows whose key no other eligible deleted row holds, and each one's
    partner: the first eligible inserted row with that key (``unique_inserts``: only where
    no other eligible inserted row holds it). Returns (deleted rows, partners)."""
    if kd.size == 0 or ki.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    k = int(max(kd.max(), ki.max())) + 1
    count_d = np.bincount(kd[eligible_d], minlength=k)
    count_i = np.bincount(ki[eligible_i], minlength=k)
    ok = (count_d == 1) & ((count_i == 1) if unique_inserts else (count_i >= 1))
    rows_i = np.flatnonzero(eligible_i)
    keys, first = np.unique(ki[rows_i], return_index=True)
    where = np.full(k, -1, dtype=np.int64)
    where[keys] = rows_i[first]
    rows_d = np.flatnonzero(eligible_d & ok[kd])
    return rows_d, where[kd[rows_d]]


def _duplicate_key(table: pa.Table, codes: np.ndarray[Any, Any], keep: np.ndarray[Any, Any],
                   columns: Sequence[str]) -> dict[str, Any] | None:
    """The identifier values of the first key more than one kept row holds, if any."""
    rows = np.flatnonzero(keep)
    if rows.size < 2:
        return None
    counts = np.bincount(codes[rows])
    dup = rows[counts[codes[rows]] > 1]
    if dup.size == 0:
        return None
    return dict(table.select(list(columns)).slice(int(dup[0]), 1).to_pylist()[0])


@safe_repr
@dataclass(frozen=True)
class _Step:
    """One snapshot's changes: the deleted and inserted tables, and for each change type the
    rows to take from ``concat(deleted, inserted)``."""

    table: pa.Table
    order: np.ndarray[Any, Any]
    types: np.ndarray[Any, Any]


def _pair_step(deleted: pa.Table, inserted: pa.Table, data_columns: Sequence[str],
               identifier_columns: Sequence[str] | None, by_row_id: bool,
               snapshot_id: int) -> _Step:
    """Cancel carry-overs and pair updates within one snapshot (see the module docstring).
    The carry-overs (most rows of a copy-on-write rewrite) are cancelled over all rows; keys
    are compared among the rows left."""
    nd, ni = deleted.num_rows, inserted.num_rows
    keep_d = np.ones(nd, bool)
    keep_i = np.ones(ni, bool)
    before = np.zeros(0, np.int64)
    after = np.zeros(0, np.int64)
    if nd and ni:
        data = list(data_columns)
        if by_row_id:
            # same values and row id: carry-overs; then updates by row id; then carry-overs
            # that lost their row id (values only)
            keep_d, keep_i = cancel_equal_rows(deleted, inserted)
            rows_d, rows_i = np.flatnonzero(keep_d), np.flatnonzero(keep_i)
            left_d, left_i = _taken(deleted, rows_d), _taken(inserted, rows_i)
            rd, ri = _key_codes(left_d, left_i, [ROW_ID.name])
            b, a = _pairs(rd, ri, _flags(pc.is_valid(left_d.column(ROW_ID.name))),
                          _flags(pc.is_valid(left_i.column(ROW_ID.name))), unique_inserts=True)
            before, after = rows_d[b], rows_i[a]
            keep_d[before] = False
            keep_i[after] = False
            rest_d, rest_i = np.flatnonzero(keep_d), np.flatnonzero(keep_i)
            kd, ki = cancel_equal_rows(_taken(deleted.select(data), rest_d),
                                       _taken(inserted.select(data), rest_i))
            keep_d[rest_d[~kd]] = False
            keep_i[rest_i[~ki]] = False
        else:
            keep_d, keep_i = cancel_equal_rows(deleted.select(data), inserted.select(data))
            if identifier_columns:
                rows_d, rows_i = np.flatnonzero(keep_d), np.flatnonzero(keep_i)
                left_d, left_i = _taken(deleted, rows_d), _taken(inserted, rows_i)
                kd, ki = _key_codes(left_d, left_i, identifier_columns)
                all_d, all_i = np.ones(rows_d.size, bool), np.ones(rows_i.size, bool)
                dup = _duplicate_key(left_d, kd, all_d, identifier_columns)
                if dup is not None:
                    raise ValidationError(
                        f"cannot pair updates: snapshot {snapshot_id} deleted several rows "
                        "with these identifier values (as Java's create_changelog_view, "
                        "icenb needs them unique)", field="identifier_columns", value=dup)
                b, a = _pairs(kd, ki, all_d, all_i, unique_inserts=False)
                before, after = rows_d[b], rows_i[a]
                keep_d[before] = False
                keep_i[after] = False
    rows_d = np.flatnonzero(keep_d)
    rows_i = np.flatnonzero(keep_i) + nd
    pairs = np.empty(2 * before.size, dtype=np.int64)
    pairs[0::2] = before
    pairs[1::2] = after + nd
    order = np.concatenate([rows_d, pairs, rows_i])
    types = np.concatenate([
        np.full(rows_d.size, _TYPE_INDEX[DELETE], np.int8),
        np.tile(np.asarray([_TYPE_INDEX[UPDATE_BEFORE], _TYPE_INDEX[UPDATE_AFTER]], np.int8),
                before.size),
        np.full(rows_i.size, _TYPE_INDEX[INSERT], np.int8)])
    return _Step(pa.concat_tables([deleted, inserted]), order, types)


def _taken(table: pa.Table, rows: np.ndarray[Any, Any]) -> pa.Table:
    return table.take(pa.array(rows, pa.int64()))


# --------------------------------------------------------------------------- the changelog


def _changelog_schema(schema: Schema, with_row_ids: bool) -> Schema:
    extra = (ROW_ID,) if with_row_ids else ()
    return Schema(*schema.fields, *CHANGELOG_COLUMNS, *extra, schema_id=schema.schema_id,
                  identifier_field_ids=schema.identifier_field_ids)


def _assemble(steps: Sequence[_Step], snapshots: Sequence[Snapshot], schema: Schema,
              with_row_ids: bool) -> pa.Table:
    out_schema = to_arrow_schema(_changelog_schema(schema, with_row_ids))
    parts = []
    names = CHANGE_TYPES
    for ordinal, (step, snap) in enumerate(zip(steps, snapshots, strict=True)):
        n = int(step.order.size)
        if n == 0:
            continue
        rows = step.table.take(pa.array(step.order, pa.int64()))
        data = [rows.column(i) for i in range(len(schema.fields))]
        kinds = pa.DictionaryArray.from_arrays(pa.array(step.types, pa.int8()),
                                               pa.array(names)).cast(pa.string())
        columns = [*data, kinds, pa.array(np.full(n, ordinal, np.int32), pa.int32()),
                   pa.array(np.full(n, snap.snapshot_id, np.int64), pa.int64())]
        if with_row_ids:
            columns.append(rows.column(ROW_ID.name))
        parts.append(pa.Table.from_arrays(columns, schema=out_schema))
    if not parts:
        return out_schema.empty_table()
    return pa.concat_tables(parts)


@safe_repr
class Changelog:
    """The rows each snapshot of a range changed (see :mod:`icenb.table.explore.changelog`).

    Computed when made (by :meth:`Table.changes`): it holds the changes as Arrow, so
    :meth:`to_arrow`, the counts and the reprs read nothing; :meth:`to_spark` hands the same
    rows to Spark.
    """

    __slots__ = ("_counts", "_end_scan", "_rows", "end", "identifier_columns",
                 "pairs_by_row_id", "schema", "snapshots", "start")

    def __init__(self, rows: pa.Table, schema: Schema, start: Snapshot | None,
                 end: Snapshot | None, snapshots: Sequence[Snapshot],
                 identifier_columns: tuple[str, ...] | None, pairs_by_row_id: bool,
                 end_scan: Scan | None = None) -> None:
        self._rows = rows
        self.schema = schema  # the output's Iceberg schema (data, changelog columns, _row_id)
        self.start = start  # the exclusive start (None: from the table's first snapshot)
        self.end = end  # the inclusive end (None: the table has no snapshot)
        self.snapshots = tuple(snapshots)  # in range, oldest first; ordinals index them
        self.identifier_columns = identifier_columns
        self.pairs_by_row_id = pairs_by_row_id
        self._end_scan = end_scan
        self._counts: dict[str, int] | None = None

    @property
    def num_rows(self) -> int:
        return int(self._rows.num_rows)

    @property
    def table_snapshots(self) -> tuple[Snapshot, ...]:
        """The table's snapshots when the changelog was made (for short labels, S3)."""
        return () if self._end_scan is None else tuple(self._end_scan.metadata.snapshots)

    def __len__(self) -> int:
        return self.num_rows

    @property
    def counts(self) -> dict[str, int]:
        """Rows per change type (every type, zeros included), in :data:`CHANGE_TYPES` order."""
        if self._counts is None:
            found = {name: 0 for name in CHANGE_TYPES}
            if self._rows.num_rows:
                values = pc.value_counts(self._rows.column(CHANGE_TYPE.name))
                for item in values.to_pylist():
                    found[str(item["values"])] = int(item["counts"])
            self._counts = found
        return dict(self._counts)

    def counts_by_snapshot(self) -> list[tuple[int, Snapshot, dict[str, int]]]:
        """(ordinal, snapshot, rows per change type) for each snapshot of the range."""
        per: dict[int, dict[str, int]] = {i: {name: 0 for name in CHANGE_TYPES}
                                          for i in range(len(self.snapshots))}
        if self._rows.num_rows:
            grouped = self._rows.group_by([CHANGE_ORDINAL.name, CHANGE_TYPE.name]).aggregate(
                [([], "count_all")])
            for r in grouped.to_pylist():
                per[int(r[CHANGE_ORDINAL.name])][str(r[CHANGE_TYPE.name])] = int(r["count_all"])
        return [(i, s, per[i]) for i, s in enumerate(self.snapshots)]

    def to_arrow(self) -> pa.Table:
        """The changes as a ``pyarrow.Table`` (fields carry their Iceberg field ids)."""
        return self._rows

    def to_pandas(self) -> Any:
        """The changes as a ``pandas.DataFrame`` (needs pandas installed)."""
        import importlib.util

        if importlib.util.find_spec("pandas") is None:
            raise IcebergError("to_pandas() needs pandas; install it (pip install pandas) "
                               "or use to_arrow()")
        return self._rows.to_pandas()

    def to_spark(self, spark: Any = None) -> Any:
        """The changes as a Spark DataFrame (``spark`` defaults to the session icenb reads
        with: the active one, else a new local one)."""
        return _to_spark(self, spark)

    def __repr__(self) -> str:
        start = "first" if self.start is None else self.start.snapshot_id
        end = None if self.end is None else self.end.snapshot_id
        counts = ", ".join(f"{n} {k}" for k, n in self.counts.items() if n)
        return (f"Changelog({start} -> {end}: {len(self.snapshots)} snapshots, "
                f"{self.num_rows} rows{': ' + counts if counts else ''})")


def _to_spark(changes: Changelog, spark: Any) -> Any:
    """A DataFrame of the changes, in the session icenb reads the end state with and with the
    Spark types that read gives the data columns (``Scan.to_spark``: the data plane's own type
    mapping), the changelog columns added; the rows are handed over as Arrow."""
    scan = changes._end_scan
    if scan is None:
        raise IcebergError("this changelog has no end state to take Spark types from")
    from pyspark.sql import types as st  # lazily: table/ never imports pyspark when imported

    base = engine().read_scan(scan, spark)  # lazy: defines a DataFrame, reads nothing
    session = base.sparkSession
    data_fields = list(base.schema.fields)
    extra = {CHANGE_TYPE.name: st.StructField(CHANGE_TYPE.name, st.StringType(), False),
             CHANGE_ORDINAL.name: st.StructField(CHANGE_ORDINAL.name, st.IntegerType(), True),
             COMMIT_SNAPSHOT_ID.name: st.StructField(COMMIT_SNAPSHOT_ID.name, st.LongType(),
                                                     True),
             ROW_ID.name: st.StructField(ROW_ID.name, st.LongType(), True)}
    fields = data_fields + [extra[f.name] for f in changes.schema.fields[len(data_fields):]]
    rows = _spark_ready(changes.to_arrow(), fields)
    return session.createDataFrame(rows, schema=st.StructType(fields))


def _spark_ready(rows: pa.Table, fields: Sequence[Any]) -> pa.Table:
    """``rows`` with the top-level values Spark's Arrow conversion cannot cast itself in the
    text icenb's Spark reads show (uuid and time columns are strings there)."""
    out = []
    for column, field in zip(rows.columns, fields, strict=True):
        if type(field.dataType).__name__ == "StringType" and not pa.types.is_string(column.type):
            if pa.types.is_fixed_size_binary(column.type):  # uuid: a rare type, a few rows
                column = pa.array([None if v is None else str(uuid.UUID(bytes=v))
                                   for v in column.to_pylist()], pa.string())
            else:  # time: HH:MM:SS.ffffff
                column = column.cast(pa.string())
        out.append(column)
    return pa.Table.from_arrays(out, names=rows.column_names)


# --------------------------------------------------------------------------- Table.changes


def _resolve(table: Table, value: int | str | datetime, what: str) -> Scan | None:
    """A scan of the state ``value`` names, as ``t.at(value)`` resolves it; None for a time
    before the table's first snapshot (the range then starts at the beginning)."""
    try:
        return table.at(value)
    except ValidationError as e:  # not a snapshot id, ref or time: name the argument
        raise ValidationError(e.message, file=e.file, field=what, value=value) from None
    except NoSuchSnapshot:
        if isinstance(value, (int, bool)) or (isinstance(value, str)
                                              and value in table.metadata.refs):
            raise
        from icenb.table.table import timestamp_to_ms

        try:
            ms = timestamp_to_ms(value)
        except ValidationError:
            raise NoSuchSnapshot(f"{what}: no branch or tag named {value!r} (nor is it an ISO "
                                 "timestamp)", file=table.metadata_location, field=what,
                                 value=value) from None
        log = table.metadata.snapshot_log
        if not log or ms < log[0].timestamp_ms:
            return None
        raise


def _start_time_ms(table: Table, value: int | str | datetime | None) -> int | None:
    """Epoch milliseconds when ``start`` is a time (a ``datetime``, or a string that names no
    ref and parses as a timestamp), else None."""
    from icenb.table.table import timestamp_to_ms

    if isinstance(value, datetime):
        return timestamp_to_ms(value)
    if not isinstance(value, str) or value in table.metadata.refs or value == MAIN_BRANCH:
        return None
    try:
        return timestamp_to_ms(value)
    except ValidationError:
        return None


def _ancestor_at(metadata: TableMetadata, end: Snapshot, ms: int) -> Snapshot | None:
    """The newest ancestor of ``end`` committed at or before ``ms``: what a time start means
    on ``end``'s line of history (as Java's ``start-timestamp``: the changes committed after
    the time), even where the snapshot log's entry at that time was later rolled back."""
    for snap in metadata.ancestors(end.snapshot_id):
        if snap.timestamp_ms <= ms:
            return snap
    return None


def _identifiers(columns: str | Sequence[str] | None, schema: Schema
                 ) -> tuple[str, ...] | None:
    if columns is None:
        return None
    if not isinstance(columns, (str, list, tuple)):
        raise ValidationError("identifier columns are a column name or a list of names",
                              field="identifier_columns", value=columns)
    names = (columns,) if isinstance(columns, str) else tuple(columns)
    top = [f.name for f in schema.fields]
    for name in names:
        if not isinstance(name, str) or name not in top:
            raise ValidationError("identifier columns are columns of the table",
                                  field="identifier_columns", value=name)
    if len(set(names)) != len(names):
        raise ValidationError("identifier columns are named once each",
                              field="identifier_columns", value=list(names))
    return names


def _range(metadata: TableMetadata, start: Snapshot | None, end: Snapshot,
           start_label: Any, end_label: Any) -> tuple[Snapshot | None, list[Snapshot]]:
    """The exclusive start and ``end``'s ancestors after it, oldest first. With no ``start``,
    the first snapshot's parent (nothing); but when history before the oldest ancestor left
    has expired, that ancestor starts the range (the files only its parent held may be gone,
    so what it changed cannot be read)."""
    if start is not None and not metadata.is_ancestor(start.snapshot_id, end.snapshot_id):
        raise ValidationError(
            f"start {start_label!r} (snapshot {start.snapshot_id}) is not an ancestor of end "
            f"{end_label!r} (snapshot {end.snapshot_id}): a changelog follows one line of "
            "history; use t.diff(a, b) to compare any two snapshots", field="start",
            value=start_label)
    chain: list[Snapshot] = []
    for snap in metadata.ancestors(end.snapshot_id):
        if start is not None and snap.snapshot_id == start.snapshot_id:
            break
        chain.append(snap)
    chain.reverse()
    if start is None and chain and chain[0].parent_snapshot_id is not None:
        return chain[0], chain[1:]
    return start, chain


def table_changes(table: Table, start: int | str | datetime | None,
                  end: int | str | datetime | None = None, *,
                  identifier_columns: str | Sequence[str] | None = None) -> Changelog:
    """:meth:`Table.changes`: resolve the range as ``t.at`` does and compute its changelog."""
    md = table.metadata
    end_scan = table.scan() if end is None else _resolve(table, end, "end")
    if end_scan is None:
        raise NoSuchSnapshot(f"end: no snapshot was current at {end!r}",
                             file=table.metadata_location, field="end", value=end)
    schema = end_scan.table_schema
    ids = _identifiers(identifier_columns, schema)
    end_snap = None if end_scan.snapshot_id is None else md.snapshot_by_id(end_scan.snapshot_id)
    start_ms = _start_time_ms(table, start)
    if start_ms is not None:
        start_snap = None if end_snap is None else _ancestor_at(md, end_snap, start_ms)
    else:
        start_scan = None if start is None else _resolve(table, start, "start")
        start_snap = None if start_scan is None or start_scan.snapshot_id is None else \
            md.snapshot_by_id(start_scan.snapshot_id)
    with_row_ids = tracks_row_lineage(md.format_version, schema)
    by_row_id = with_row_ids and ids is None
    out_schema = _changelog_schema(schema, with_row_ids)
    if end_snap is None:
        if start_snap is not None:
            raise ValidationError("the table has no current snapshot to end the range at",
                                  field="end", value=end)
        return Changelog(to_arrow_schema(out_schema).empty_table(), out_schema, None, None, (),
                         ids, by_row_id, end_scan)
    start_snap, chain = _range(md, start_snap, end_snap, start, "main" if end is None else end)
    kept = [s for s in chain if s.operation != Operation.REPLACE]
    with progress(READING_TABLE):
        data_columns = [f.name for f in schema.fields]
        steps = changed_rows(table.io, md, [(s.parent_snapshot_id, s.snapshot_id)
                                            for s in kept], schema, with_row_ids=with_row_ids,
                             reduce=_carry_overs(None if by_row_id else data_columns))
        paired = [_pair_step(d, i, data_columns, ids, by_row_id, s.snapshot_id)
                  for (d, i), s in zip(steps, kept, strict=True)]
        rows = _assemble(paired, kept, schema, with_row_ids)
    return Changelog(rows, out_schema, start_snap, end_snap, kept, ids, by_row_id, end_scan)
