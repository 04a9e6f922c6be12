"""Merge-on-read row-level changes: delete by filter, delete by key, upsert, update.

Each is one ``RowDelta`` commit (spec: "Row-level Deletes", "Commit Conflict Resolution and
Retry"); only v2+ tables have row-level deletes (a v1 table raises ``ValidationError``):

* :func:`delete_merge_on_read` plans the branch's snapshot with the filter, reads the matching
  live rows' positions (existing deletes applied, so deleted rows are not deleted again) and
  writes position delete files (v2) or deletion vectors (v3: a data file's new DV is the union
  with its previous DV and file-scoped position deletes, which the commit removes: one DV per
  data file);
* :func:`delete_by_key` writes equality delete files of the key columns (default: the schema's
  identifier fields) for every partition spec that has live data;
* :func:`upsert` writes equality deletes of the rows' keys and the rows, in one snapshot: the new
  rows have the delete's sequence number, so only older rows are deleted;
* :func:`update` reads the matching rows, applies the assignments and writes the changed rows
  plus position deletes / DVs of the old ones; or, copy-on-write (``write.update.mode``'s
  default, the only mode of v1 tables), rewrites the files holding them in one ``OverwriteFiles``
  commit planned and validated as a copy-on-write delete
  (:mod:`icenb.table.row_level.copy_on_write`).

Conflict validation follows Java's Spark writers: from the snapshot read, with the filter as
conflict detection filter; data files deleted from must still exist; the isolation level
(``write.delete|update|merge.isolation-level``, default ``serializable``) adds the check that no
matching data was added concurrently; delete files added concurrently always conflict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.io.manifest_reader import read_manifest_list
from icenb.progress import READING_DATA_FILES, progress
from icenb.spec.arrow_schema import to_arrow_type
from icenb.spec.expressions import AlwaysTrue, Expression, In, bind
from icenb.spec.manifest import (
    DataFile,
    FileContent,
    FileScanTask,
    ManifestContent,
)
from icenb.spec.metadata_columns import ROW_LINEAGE, ROW_POSITION
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import NestedField
from icenb.table.commit import table_producer
from icenb.table.commit.overwrite import OverwriteFiles
from icenb.table.commit.producer import as_arrow_table, branch_snapshot, commit_snapshot
from icenb.table.commit.row_delta import RowDelta
from icenb.table.commit.validation import (
    as_expression,
    isolation_level,
    validate_row_delta,
)
from icenb.table.row_level.copy_on_write import (
    MERGE_ON_READ,
    CopyOnWritePlan,
    plan_copy_on_write,
    update_mode,
    validate_copy_on_write,
)
from icenb.table.row_level.lineage import modified_rows, reads_lineage, table_columns
from icenb.table.scan import Scan
from icenb.table.scan.read import read_task
from icenb.table.write.conform import conform_to_schema
from icenb.table.write.delete_files import (
    check_equality_partitioning,
    equality_fields,
    is_file_scoped,
    load_positions,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes,
)
from icenb.table.write.locations import location_provider

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["delete_by_key", "delete_merge_on_read", "update", "upsert"]

#: Up to this many keys, an upsert's conflict filter is ``key IN (...)``; beyond, the whole table.
_MAX_FILTER_KEYS = 1000

Assignment = Any  # a literal value, or a callable(rows: pa.Table) -> array-like / scalar


# --------------------------------------------------------------------------- helpers


def _require_v2(md: TableMetadata, what: str) -> None:
    if md.format_version < 2:
        raise ValidationError(
            f"{what} needs row-level deletes, which format version 1 tables do not have: "
            "upgrade the table (t.upgrade(2)) or use mode='copy-on-write'",
            file=md.source_file, field="format-version", value=md.format_version)


def _expression(filter: str | Expression, md: TableMetadata) -> Expression:
    expr = as_expression(filter, "filter")
    bind(expr, md.schema, True)  # unknown columns / bad literals fail before anything is read
    return expr


def _row_delta(table: Table, branch: str, snapshot_properties: Mapping[str, str] | None
               ) -> RowDelta:
    from icenb.table.commit import table_producer

    return table_producer("row_delta", table, RowDelta, branch=branch,
                          snapshot_properties=snapshot_properties)


def _commit_staged(table: Table, producer: RowDelta, stage: Callable[[list[str]], bool]
                   ) -> Snapshot | None:
    """Run ``stage(written)``, which writes files (their paths go to ``written``) and adds
    them to ``producer``, then commit; None when ``stage`` says there is nothing to commit.
    On any failure (an interrupt included) the written files are gone, unless the commit's
    outcome is unknown, and the Table shows the catalog's state."""
    written: list[str] = []
    with producer.aborted_on_error():
        try:
            staged = stage(written)
        finally:  # the producer deletes them with its own files when it fails or is aborted
            producer.track_written(written)
        if not staged:
            producer.abort()
            return None
        return commit_snapshot(table, producer)


def _matching(table: Table, snap: Snapshot, expr: Expression, columns: tuple[str, ...] | None,
              *, lineage: bool = False) -> list[tuple[FileScanTask, pa.Table]]:
    """Per planned task, its live rows matching ``expr`` (``columns`` + ``_pos``, and with
    ``lineage`` on v3+ tables ``_row_id`` and ``_last_updated_sequence_number``)."""
    md = table.metadata
    names = tuple(f.name for f in md.schema.fields) if columns is None else columns
    if lineage and reads_lineage(md):
        names = (*names, *(f.name for f in ROW_LINEAGE))
    scan = Scan(table.io, md, snap.snapshot_id, md.schema, row_filter=expr,
                columns=(*names, ROW_POSITION.name))
    mapping = scan.name_mapping
    out = []
    tasks = scan.plan().tasks
    with progress(READING_DATA_FILES, total=len(tasks)) as read:
        for task in tasks:
            rows = read_task(table.io, task, scan.schema, name_mapping=mapping)
            if rows.num_rows:
                out.append((task, rows))
            read.advance()
    return out


def _positions(rows: pa.Table) -> npt.NDArray[np.int64]:
    return np.asarray(rows.column(ROW_POSITION.name).to_numpy(), dtype=np.int64)


def write_deletes_for_hits(table: Table,
                            hits: Sequence[tuple[FileScanTask, pa.Table]],
                            operation_id: str, written: list[str]
                            ) -> tuple[list[DataFile], list[DataFile]]:
    """Position delete files (v2) or DVs (v3) for the hit rows; (added, to remove)."""
    md = table.metadata
    provider = location_provider(md.location, md.properties)
    if md.format_version < 3:
        added = write_position_deletes(
            table.io, [(task.data_file, _positions(rows)) for task, rows in hits],
            specs=md.specs_by_id, schema=md.schema, properties=md.properties,
            location_provider=provider, operation_id=operation_id)
        written.extend(f.file_path for f in added)
        return added, []
    removed: dict[tuple[str, int | None], DataFile] = {}
    merged: list[tuple[DataFile, npt.NDArray[np.int64]]] = []
    for task, rows in sorted(hits, key=lambda h: h[0].data_file.file_path):
        path = task.data_file.file_path
        parts = [_positions(rows)]
        for d in task.delete_files:
            if d.content != FileContent.POSITION_DELETES:
                continue
            parts.append(load_positions(table.io, d, path))
            if is_file_scoped(d):
                removed.setdefault((d.file_path, d.content_offset), d)
        merged.append((task.data_file, np.unique(np.concatenate(parts))))
    added = write_deletion_vectors(table.io, merged, location_provider=provider,
                                   operation_id=operation_id)
    written.extend({f.file_path: None for f in added})
    return added, list(removed.values())


def _stage_position_deletes(table: Table, producer: RowDelta, snap: Snapshot,
                            hits: Sequence[tuple[FileScanTask, pa.Table]], expr: Expression,
                            level: str, written: list[str]) -> None:
    """Delete the hit rows by position (v2) or DV (v3) in ``producer``, validated as a
    merge-on-read delete of ``expr``."""
    added, removed = write_deletes_for_hits(table, hits, producer.commit_uuid, written)
    producer.add_deletes(added)
    if removed:
        producer.remove_deletes(removed)
    validate_row_delta(producer, None if snap is None else snap.snapshot_id, expr,
                       (t.data_file.file_path for t, _ in hits), level)


# --------------------------------------------------------------------------- delete by filter


def delete_merge_on_read(table: Table, filter: str | Expression, *,
                         branch: str = MAIN_BRANCH,
                         snapshot_properties: Mapping[str, str] | None = None
                         ) -> Snapshot | None:
    """Delete the rows matching ``filter`` with position deletes (v2) or deletion vectors (v3);
    the new snapshot, or None when no live row matches (nothing is committed)."""
    table.operations.commit_target()
    md = table.metadata
    _require_v2(md, "a merge-on-read delete")
    level = isolation_level(md.properties, "delete")
    expr = _expression(filter, md)
    snap = branch_snapshot(md, branch)
    if snap is None:
        return None
    hits = _matching(table, snap, expr, ())
    if not hits:
        return None
    if md.format_version >= 4:  # EXPERIMENTAL, docs/v4-layout.md#row-deltas
        from icenb.table.commit.v4_row_delta import v4_row_delta

        return v4_row_delta(table, hits, None, branch=branch,
                            snapshot_properties=snapshot_properties, snapshot=snap,
                            conflict_filter=expr, isolation=level)
    producer = _row_delta(table, branch, snapshot_properties)

    def stage(written: list[str]) -> bool:
        _stage_position_deletes(table, producer, snap, hits, expr, level, written)
        return True

    return _commit_staged(table, producer, stage)


# --------------------------------------------------------------------------- equality deletes


def _live_data_spec_ids(table: Table, snap: Snapshot) -> list[int]:
    """Partition specs of the snapshot's data manifests that may hold live files."""
    if snap.root_manifest is not None:  # EXPERIMENTAL v4, docs/v4-layout.md#equality-deletes
        from icenb.table.commit.v4_row_delta import v4_live_data_spec_ids

        return v4_live_data_spec_ids(table.io, snap)
    ids: dict[int, None] = {}
    for m in read_manifest_list(table.io, snap, table.metadata.format_version):
        if m.content != ManifestContent.DATA:
            continue
        if m.added_files_count == 0 and m.existing_files_count == 0:
            continue
        ids.setdefault(m.partition_spec_id, None)
    return list(ids)


def _key_names(table: Table, on: str | Sequence[str] | None) -> list[str]:
    if on is None:
        names = list(table.schema.identifier_field_names)
        if not names:
            raise ValidationError("give the key columns (on=[...]): the table schema has no "
                                  "identifier fields", field="on", value=None)
        return names
    return [on] if isinstance(on, str) else list(on)


def _keys_table(data: Any, table: Table, names: Sequence[str]) -> pa.Table:
    """The key columns of ``data`` (other table columns are ignored), conformed to their
    types; unknown columns and missing key columns raise."""
    arrow = as_arrow_table(data, table.schema)
    for name in arrow.column_names:
        if table.schema.field_by_name(name) is None:
            raise ValidationError("column is not in the table schema", field=name,
                                  value=list(arrow.column_names))
    missing = [n for n in names if n not in arrow.column_names]
    if missing:
        raise ValidationError("the data lacks key columns", field="on", value=missing)
    return arrow.select(list(names))


def key_filter(keys: pa.Table) -> Expression:
    if keys.num_columns != 1 or keys.num_rows > _MAX_FILTER_KEYS:
        return AlwaysTrue()
    values = [v for v in keys.column(0).to_pylist() if v is not None]
    if not values:
        return AlwaysTrue()
    try:
        return In(keys.column_names[0], tuple(values))
    except IcebergError:
        return AlwaysTrue()


def _key_specs(table: Table, snap: Snapshot, fields: Sequence[NestedField]
               ) -> list[PartitionSpec]:
    """The partition specs of the snapshot's live data; each must allow equality deletes of
    ``fields``."""
    md = table.metadata
    specs = [md.specs_by_id[i] for i in _live_data_spec_ids(table, snap)]
    for spec in specs:
        check_equality_partitioning(spec, md.schema, fields)
    return specs


def equality_deletes_of(table: Table, snap: Snapshot | None, keys: pa.Table,
                      names: Sequence[str], operation_id: str, written: list[str]
                      ) -> list[DataFile]:
    md = table.metadata
    fields = equality_fields(md.schema, names)
    if snap is None:
        return []
    specs = _key_specs(table, snap, fields)
    files = write_equality_deletes(
        table.io, keys, schema=md.schema, fields=fields, specs=specs,
        properties=md.properties, location_provider=location_provider(md.location,
                                                                        md.properties),
        format_version=md.format_version, operation_id=operation_id)
    written.extend(f.file_path for f in files)
    return files


def delete_by_key(table: Table, keys: Any, *, on: str | Sequence[str] | None = None,
                  branch: str = MAIN_BRANCH,
                  snapshot_properties: Mapping[str, str] | None = None) -> Snapshot | None:
    """Delete the rows whose key columns (``on``, default the identifier fields) equal a row of
    ``keys`` with equality delete files; the new snapshot, or None when there is nothing to
    delete from (no keys, or no data). Spec: "Equality Delete Files"."""
    table.operations.commit_target()
    md = table.metadata
    _require_v2(md, "deleting by key")
    level = isolation_level(md.properties, "delete")
    names = _key_names(table, on)
    fields = equality_fields(md.schema, names)
    key_schema_table = _keys_table(keys, table, names)
    from icenb.spec.schema import Schema

    conformed = conform_to_schema(key_schema_table, Schema(*fields),
                                  format_version=md.format_version)
    snap = branch_snapshot(md, branch)
    if snap is None or conformed.num_rows == 0:
        return None
    _key_specs(table, snap, fields)
    if md.format_version >= 4:  # EXPERIMENTAL, docs/v4-layout.md#equality-deletes
        from icenb.table.commit.v4_row_delta import v4_equality_delta

        return v4_equality_delta(table, snap, conformed, names, None, branch=branch,
                                 snapshot_properties=snapshot_properties, isolation=level)
    producer = _row_delta(table, branch, snapshot_properties)

    def stage(written: list[str]) -> bool:
        added = equality_deletes_of(table, snap, conformed, names, producer.commit_uuid, written)
        if not added:
            return False
        producer.add_deletes(added)
        validate_row_delta(producer, None if snap is None else snap.snapshot_id,
                           key_filter(conformed), (), level)
        return True

    return _commit_staged(table, producer, stage)


def upsert(table: Table, data: Any, *, on: str | Sequence[str] | None = None,
           branch: str = MAIN_BRANCH,
           snapshot_properties: Mapping[str, str] | None = None) -> Snapshot:
    """Replace the rows whose key (``on``, default the identifier fields) is in ``data`` by
    ``data``'s rows, and add the others, in one snapshot (equality deletes of the keys + the
    rows). Keys must be unique within ``data``."""
    table.operations.commit_target()
    md = table.metadata
    _require_v2(md, "an upsert")
    level = isolation_level(md.properties, "merge")
    names = _key_names(table, on)
    fields = equality_fields(md.schema, names)
    rows = conform_to_schema(as_arrow_table(data, md.schema), md.schema,
                             format_version=md.format_version)
    keys = rows.select(list(names))
    if keys.num_rows:
        counts = keys.group_by(list(names), use_threads=False).aggregate([([], "count_all")])
        dup = counts.filter(pc.greater(counts.column("count_all"), 1))
        if dup.num_rows:
            raise ValidationError("the data to upsert has duplicate keys", field="on",
                                  value=dup.slice(0, 5).drop_columns(["count_all"]).to_pylist())
    snap = branch_snapshot(md, branch)
    if snap is not None:
        _key_specs(table, snap, fields)
    if md.format_version >= 4:  # EXPERIMENTAL, docs/v4-layout.md#equality-deletes
        from icenb.table.commit.v4_row_delta import v4_equality_delta

        committed = v4_equality_delta(table, snap, keys, names, rows, branch=branch,
                                      snapshot_properties=snapshot_properties,
                                      isolation=level)
        assert committed is not None
        return committed
    producer = _row_delta(table, branch, snapshot_properties)

    def stage(written: list[str]) -> bool:
        deletes = equality_deletes_of(table, snap, keys, names, producer.commit_uuid, written)
        producer.write_data(rows, md)
        if deletes:
            producer.add_deletes(deletes)
        validate_row_delta(producer, None if snap is None else snap.snapshot_id,
                           key_filter(keys), (), level)
        return True

    committed = _commit_staged(table, producer, stage)
    assert committed is not None
    return committed


# --------------------------------------------------------------------------- update


def _check_assignments(set: Any, md: TableMetadata) -> None:
    """``set`` must map top-level columns of the table schema to values."""
    if not isinstance(set, Mapping) or not set:
        raise ValidationError("give the columns to set as a non-empty mapping", field="set",
                              value=set)
    schema = md.schema
    for name in set:
        f = schema.field_by_name(name) if isinstance(name, str) else None
        if f is None:
            raise ValidationError("column to set is not in the table schema", field=str(name),
                                  value=[g.name for g in schema.fields])
        if schema.parent_id(f.field_id) is not None:
            raise UnsupportedFeature("setting a nested field is not supported; set its "
                                     "top-level column", field=name)


def _assigned(rows: pa.Table, table: Table, set: Mapping[str, Assignment]) -> pa.Table:
    """``rows`` (table columns) with the assignments (checked by :func:`_check_assignments`)
    applied, conformed to the table schema (values cast to the column types)."""
    md = table.metadata
    schema = md.schema
    out = rows
    for name, value in set.items():
        f = schema.field_by_name(name)
        assert f is not None
        arrow_type = to_arrow_type(f.field_type)
        try:
            produced = value(rows) if callable(value) else value
            if isinstance(produced, (pa.Array, pa.ChunkedArray)):
                arr = produced
            elif callable(value) and isinstance(produced, (list, tuple, np.ndarray)):
                arr = pa.array(produced, type=arrow_type)
            else:
                scalar = produced if isinstance(produced, pa.Scalar) else pa.scalar(
                    produced, type=arrow_type)
                arr = pa.repeat(scalar, rows.num_rows)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            raise ValidationError(f"the value does not fit the column's type "
                                  f"{f.field_type}: {e}", field=name,
                                  value=None if callable(value) else value) from None
        if len(arr) != rows.num_rows:
            raise ValidationError("an assignment must give one value per matching row",
                                  field=name, value=len(arr))
        out = out.set_column(out.column_names.index(name), name, arr)
    return conform_to_schema(out, schema, format_version=md.format_version)


def update(table: Table, set: Mapping[str, Assignment], filter: str | Expression = "true", *,
           branch: str = MAIN_BRANCH, mode: str | None = None,
           snapshot_properties: Mapping[str, str] | None = None) -> Snapshot | None:
    """Set columns of the rows matching ``filter`` in one ``overwrite`` snapshot; None when no
    row matches. ``mode`` (default: ``write.update.mode``, else copy-on-write): copy-on-write
    rewrites the files holding matching rows; merge-on-read (v2+) writes the changed rows and
    deletes the old ones by position (v2) or DV (v3). A value is a literal (cast to the column
    type) or a callable taking the matching rows (Arrow) and returning a value or an array."""
    table.operations.commit_target()
    md = table.metadata
    chosen = update_mode(md.properties, mode)
    if chosen == MERGE_ON_READ:
        _require_v2(md, "a merge-on-read update")
    level = isolation_level(md.properties, "update")
    _check_assignments(set, md)
    expr = _expression(filter, md)
    snap = branch_snapshot(md, branch)
    if snap is None:
        return None
    if chosen != MERGE_ON_READ:
        return _update_copy_on_write(table, set, expr, branch, snapshot_properties)
    hits = _matching(table, snap, expr, None, lineage=True)
    if not hits:
        return None
    old = pa.concat_tables([rows for _, rows in hits])
    new_rows = modified_rows(_assigned(table_columns(old, md.schema), table, set), old)
    if md.format_version >= 4:  # EXPERIMENTAL, docs/v4-layout.md#row-deltas
        from icenb.table.commit.v4_row_delta import v4_row_delta

        return v4_row_delta(table, hits, new_rows, branch=branch,
                            snapshot_properties=snapshot_properties, snapshot=snap,
                            conflict_filter=expr, isolation=level)
    producer = _row_delta(table, branch, snapshot_properties)

    def stage(written: list[str]) -> bool:
        _stage_position_deletes(table, producer, snap, hits, expr, level, written)
        producer.write_data(new_rows, md, moved=True)
        return True

    return _commit_staged(table, producer, stage)


def _update_copy_on_write_v4(table: Table, plan: CopyOnWritePlan, expr: Expression,
                             rows: pa.Table, branch: str,
                             snapshot_properties: Mapping[str, str] | None) -> Snapshot:
    """The copy-on-write update of a v4 table: the rewritten files leave as DELETED root entries
    or through manifest DVs, the rewritten rows come in, in one ``overwrite`` snapshot
    validated as v3's (``write.update.isolation-level``, docs/v4-layout.md#removals)."""
    from icenb.table.commit.v4_overwrite import V4Overwrite, validate_copy_on_write

    producer = table_producer("overwrite", table, V4Overwrite, branch=branch,
                              snapshot_properties=snapshot_properties)
    producer.overwrite = True
    try:
        producer.check_branch(table.metadata)
        validate_copy_on_write(producer, table.metadata, plan.snapshot_id, expr, "update")
        for f in plan.remove:
            producer.delete_file(f)
        producer.write(rows, table.metadata, moved=True)
    except BaseException:
        producer.abort()
        raise
    return commit_snapshot(table, producer)


def _update_copy_on_write(table: Table, set: Mapping[str, Assignment], expr: Expression,
                          branch: str, snapshot_properties: Mapping[str, str] | None
                          ) -> Snapshot | None:
    """Rewrite the files holding rows matching ``expr`` (live rows only: earlier deletes stay
    applied) with the matching rows changed and the others as they were, in one
    ``overwrite`` snapshot validated as Spark's copy-on-write update (isolation level
    ``write.update.isolation-level``)."""
    md = table.metadata
    plan = plan_copy_on_write(table.io, md, expr, branch=branch, read_matches=True)
    if plan.matched_rows is None:
        return None
    matched = plan.matched_rows
    parts = [modified_rows(_assigned(table_columns(matched, md.schema), table, set), matched)]
    if plan.keep_rows is not None:
        keep = plan.keep_rows
        kept = conform_to_schema(table_columns(keep, md.schema), md.schema,
                                 format_version=md.format_version)
        for name in keep.column_names[len(md.schema.fields):]:  # row lineage, as read
            kept = kept.append_column(name, keep.column(name))
        parts.insert(0, kept)
    rows = pa.concat_tables(parts)
    if md.format_version >= 4:  # EXPERIMENTAL, docs/v4-layout.md#removals
        return _update_copy_on_write_v4(table, plan, expr, rows, branch, snapshot_properties)
    producer = table_producer("overwrite", table, OverwriteFiles, branch=branch,
                              snapshot_properties=snapshot_properties)
    producer.check_branch(md)
    validate_copy_on_write(producer, md, plan, expr, "update")
    for f in plan.remove:
        producer.delete_file(f)
    try:
        producer.write_data(rows, md, moved=True)
    except BaseException:
        producer.abort()
        raise
    return commit_snapshot(table, producer)
