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
  plus position deletes / DVs of the old ones.

Conflict validation follows Java's Spark writers: from the snapshot read, with the filter as
conflict detection filter; data files deleted from must still exist; the isolation level
(``write.delete|update|merge.isolation-level``, default ``serializable``) adds the check that no
matching data was added concurrently; delete files added concurrently always conflict.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.catalog import LoadedTable
from icenb.errors import IcebergError, UnsupportedFeature, ValidationError
from icenb.io.manifest_reader import read_manifest_list, shared_manifest_cache
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysTrue, Expression, In, bind
from icenb.spec.manifest import (
    DataFile,
    FileContent,
    FileFormat,
    FileScanTask,
    ManifestContent,
)
from icenb.spec.metadata_columns import ROW_POSITION
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.arrow_schema import to_arrow_type
from icenb.table.data_writer import conform_to_schema, location_provider, write_data_files
from icenb.table.delete_writer import (
    check_equality_partitioning,
    equality_fields,
    is_file_scoped,
    load_positions,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes,
)
from icenb.table.scan import Scan
from icenb.table.scan_planning import _content_files, plan_files
from icenb.table.snapshot_producer import as_arrow_table
from icenb.table.task_reader import read_task

if TYPE_CHECKING:
    from icenb.table.merging_producer import RowDelta
    from icenb.table.table import Table

__all__ = ["delete_by_key", "delete_merge_on_read", "update", "upsert"]

DELETE_ISOLATION_LEVEL = "write.delete.isolation-level"
UPDATE_ISOLATION_LEVEL = "write.update.isolation-level"
MERGE_ISOLATION_LEVEL = "write.merge.isolation-level"
_LEVELS = ("serializable", "snapshot")
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


def _isolation(md: TableMetadata, key: str) -> str:
    level = md.properties.get(key, "serializable").strip().lower()
    if level not in _LEVELS:
        raise ValidationError("isolation level must be serializable or snapshot", field=key,
                              value=md.properties.get(key))
    return level


def _branch_snapshot(md: TableMetadata, branch: str) -> Snapshot | None:
    """The snapshot a write to ``branch`` builds on (a new branch starts from ``main``)."""
    ref = md.refs.get(branch)
    if ref is None:
        return md.current_snapshot()
    if not ref.is_branch:
        raise ValidationError(f"{branch!r} is a tag: only branches can be written to",
                              field="branch", value=branch)
    return md.snapshot_by_id(ref.snapshot_id)


def _expression(filter: str | Expression, md: TableMetadata) -> Expression:
    expr = parse(filter) if isinstance(filter, str) else filter
    bind(expr, md.schema, True)  # unknown columns / bad literals fail before anything is read
    return expr


def _row_delta(table: Table, branch: str, snapshot_properties: Mapping[str, str] | None
               ) -> RowDelta:
    from icenb.table.merging_producer import RowDelta

    catalog, identifier = table._writable()
    return RowDelta(catalog, identifier, table.io, branch=branch,
                    snapshot_properties=snapshot_properties)


def _operation_id(producer: Any) -> str:
    value = getattr(producer, "commit_uuid", None)
    return value if isinstance(value, str) else str(uuid.uuid4())


def _commit(table: Table, producer: RowDelta, written: Sequence[str], branch: str
            ) -> Snapshot:
    """Commit ``producer`` on the table as loaded; the branch's new snapshot. On failure the
    written files are gone (the producer tracks them) and the Table shows the catalog's state."""
    base: LoadedTable = table._loaded()
    try:
        producer.track_written(written)
        committed = producer.commit(base)
    except BaseException:
        with contextlib.suppress(IcebergError):
            table.refresh()
        raise
    table._committed(committed)
    snap = committed.metadata.snapshot_for_ref(branch)
    assert snap is not None
    return snap


def _abort(table: Table, written: Iterable[str]) -> None:
    for location in written:
        with contextlib.suppress(IcebergError):
            table.io.delete(location, missing_ok=True)


def _matching(table: Table, snap: Snapshot, expr: Expression, columns: tuple[str, ...] | None
              ) -> list[tuple[FileScanTask, pa.Table]]:
    """Per planned task, its live rows matching ``expr`` (``columns`` + ``_pos``)."""
    md = table.metadata
    names = tuple(f.name for f in md.schema.fields) if columns is None else columns
    scan = Scan(table.io, md, snap.snapshot_id, md.schema, row_filter=expr,
                columns=(*names, ROW_POSITION.name))
    mapping = scan.name_mapping
    out = []
    for task in scan.plan().tasks:
        rows = read_task(table.io, task, scan.schema, name_mapping=mapping)
        if rows.num_rows:
            out.append((task, rows))
    return out


def _positions(rows: pa.Table) -> npt.NDArray[np.int64]:
    return np.asarray(rows.column(ROW_POSITION.name).to_numpy(), dtype=np.int64)


def _write_position_deletes(table: Table, snap: Snapshot,
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
    merged += _sibling_dvs(table, snap, removed, {f.file_path for f, _ in merged})
    added = write_deletion_vectors(table.io, merged, location_provider=provider,
                                   operation_id=operation_id)
    written.extend({f.file_path: None for f in added})
    return added, list(removed.values())


def _sibling_dvs(table: Table, snap: Snapshot, removed: dict[tuple[str, int | None], DataFile],
                 merged: set[str]) -> list[tuple[DataFile, npt.NDArray[np.int64]]]:
    """The other live DVs stored in the Puffin files of removed DVs: carried over into the new
    Puffin file (and removed with it), so that removing a DV never drops a sibling's deletes
    whatever granularity the removal has (decision: a DV's file may be shared)."""
    puffins = {d.file_path for d in removed.values() if d.file_format == FileFormat.PUFFIN}
    if not puffins:
        return []
    md = table.metadata
    plan = plan_files(table.io, md, snapshot_id=snap.snapshot_id, schema=md.schema,
                      column_stats=False, cache=shared_manifest_cache(table.io))
    out = []
    for d in _content_files(plan.delete_entries, md.specs_by_id, md.schema):
        if (d.file_path in puffins and d.referenced_data_file is not None
                and d.referenced_data_file not in merged):
            removed.setdefault((d.file_path, d.content_offset), d)
            data = DataFile(content=FileContent.DATA, file_path=d.referenced_data_file,
                            file_format=FileFormat.PARQUET, partition=d.partition,
                            record_count=0, file_size_in_bytes=0, spec_id=d.spec_id)
            out.append((data, load_positions(table.io, d, d.referenced_data_file)))
    return out


def _validate(producer: RowDelta, snap: Snapshot | None, expr: Expression,
              referenced: Iterable[str], level: str) -> None:
    producer.validate_from_snapshot(None if snap is None else snap.snapshot_id)
    producer.conflict_detection_filter(expr)
    paths = list(dict.fromkeys(referenced))
    if paths:
        producer.validate_data_files_exist(paths)
    if level == "serializable":
        producer.validate_no_conflicting_data_files()
    producer.validate_no_conflicting_delete_files()


# --------------------------------------------------------------------------- delete by filter


def delete_merge_on_read(table: Table, filter: str | Expression, *,
                         branch: str = MAIN_BRANCH,
                         snapshot_properties: Mapping[str, str] | None = None
                         ) -> Snapshot | None:
    """Delete the rows matching ``filter`` with position deletes (v2) or deletion vectors (v3);
    the new snapshot, or None when no live row matches (nothing is committed)."""
    table._writable()
    md = table.metadata
    _require_v2(md, "a merge-on-read delete")
    level = _isolation(md, DELETE_ISOLATION_LEVEL)
    expr = _expression(filter, md)
    snap = _branch_snapshot(md, branch)
    if snap is None:
        return None
    hits = _matching(table, snap, expr, ())
    if not hits:
        return None
    producer = _row_delta(table, branch, snapshot_properties)
    written: list[str] = []
    try:
        added, removed = _write_position_deletes(table, snap, hits, _operation_id(producer),
                                                 written)
        producer.add_deletes(added)
        if removed:
            producer.remove_deletes(removed)
        _validate(producer, snap, expr, (t.data_file.file_path for t, _ in hits), level)
    except BaseException:
        _abort(table, written)
        raise
    return _commit(table, producer, written, branch)


# --------------------------------------------------------------------------- equality deletes


def _live_data_spec_ids(table: Table, snap: Snapshot) -> list[int]:
    """Partition specs of the snapshot's data manifests that may hold live files."""
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


def _key_filter(keys: pa.Table) -> Expression:
    if keys.num_columns != 1 or keys.num_rows > _MAX_FILTER_KEYS:
        return AlwaysTrue()
    values = [v for v in keys.column(0).to_pylist() if v is not None]
    if not values:
        return AlwaysTrue()
    try:
        return In(keys.column_names[0], tuple(values))
    except IcebergError:
        return AlwaysTrue()


def _equality_deletes(table: Table, snap: Snapshot | None, keys: pa.Table,
                      names: Sequence[str], operation_id: str, written: list[str]
                      ) -> list[DataFile]:
    md = table.metadata
    fields = equality_fields(md.schema, names)
    if snap is None:
        return []
    specs = [md.specs_by_id[i] for i in _live_data_spec_ids(table, snap)]
    for spec in specs:
        check_equality_partitioning(spec, md.schema, fields)
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
    table._writable()
    md = table.metadata
    _require_v2(md, "deleting by key")
    level = _isolation(md, DELETE_ISOLATION_LEVEL)
    names = _key_names(table, on)
    fields = equality_fields(md.schema, names)
    key_schema_table = _keys_table(keys, table, names)
    from icenb.spec.schema import Schema

    conformed = conform_to_schema(key_schema_table, Schema(*fields),
                                  format_version=md.format_version)
    snap = _branch_snapshot(md, branch)
    if snap is None or conformed.num_rows == 0:
        return None
    for spec_id in _live_data_spec_ids(table, snap):
        check_equality_partitioning(md.specs_by_id[spec_id], md.schema, fields)
    producer = _row_delta(table, branch, snapshot_properties)
    written: list[str] = []
    try:
        added = _equality_deletes(table, snap, conformed, names, _operation_id(producer),
                                  written)
        if not added:
            return None
        producer.add_deletes(added)
        _validate(producer, snap, _key_filter(conformed), (), level)
    except BaseException:
        _abort(table, written)
        raise
    return _commit(table, producer, written, branch)


def upsert(table: Table, data: Any, *, on: str | Sequence[str] | None = None,
           branch: str = MAIN_BRANCH,
           snapshot_properties: Mapping[str, str] | None = None) -> Snapshot:
    """Replace the rows whose key (``on``, default the identifier fields) is in ``data`` by
    ``data``'s rows, and add the others, in one snapshot (equality deletes of the keys + the
    rows). Keys must be unique within ``data``."""
    table._writable()
    md = table.metadata
    _require_v2(md, "an upsert")
    level = _isolation(md, MERGE_ISOLATION_LEVEL)
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
    snap = _branch_snapshot(md, branch)
    if snap is not None:
        for spec_id in _live_data_spec_ids(table, snap):
            check_equality_partitioning(md.specs_by_id[spec_id], md.schema, fields)
    producer = _row_delta(table, branch, snapshot_properties)
    operation_id = _operation_id(producer)
    written: list[str] = []
    try:
        deletes = _equality_deletes(table, snap, keys, names, operation_id, written)
        new_files = write_data_files(
            table.io, rows, md.schema, md.spec, md.sort_order, md.properties,
            location_provider(md.location, md.properties), format_version=md.format_version,
            operation_id=operation_id)
        written.extend(f.file_path for f in new_files)
        producer.add_rows(new_files)
        if deletes:
            producer.add_deletes(deletes)
        _validate(producer, snap, _key_filter(keys), (), level)
    except BaseException:
        _abort(table, written)
        raise
    return _commit(table, producer, written, branch)


# --------------------------------------------------------------------------- update


def _assigned(rows: pa.Table, table: Table, set: Mapping[str, Assignment]) -> pa.Table:
    """``rows`` (table columns) with the assignments applied, cast to the column types."""
    schema = table.schema
    out = rows
    for name, value in set.items():
        f = schema.field_by_name(name) if isinstance(name, str) else None
        if f is None:
            raise ValidationError("column to set is not in the table schema", field=str(name),
                                  value=[g.name for g in schema.fields])
        if schema.parent_id(f.field_id) is not None:
            raise UnsupportedFeature("setting a nested field is not supported; set its "
                                     "top-level column", field=name)
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
    return out


def update(table: Table, set: Mapping[str, Assignment], filter: str | Expression = "true", *,
           branch: str = MAIN_BRANCH, mode: str | None = None,
           snapshot_properties: Mapping[str, str] | None = None) -> Snapshot | None:
    """Set columns of the rows matching ``filter`` (merge-on-read): the changed rows are
    written as new data files and the old ones deleted by position (v2) or DV (v3), in one
    ``overwrite`` snapshot; None when no row matches. A value is a literal (cast to the column
    type) or a callable taking the matching rows (Arrow) and returning a value or an array."""
    table._writable()
    md = table.metadata
    chosen = (mode or md.properties.get("write.update.mode", "merge-on-read")).strip().lower()
    if chosen != "merge-on-read":
        raise UnsupportedFeature("only merge-on-read updates are supported", field="mode",
                                 value=mode)
    _require_v2(md, "a merge-on-read update")
    level = _isolation(md, UPDATE_ISOLATION_LEVEL)
    if not isinstance(set, Mapping) or not set:
        raise ValidationError("give the columns to set as a non-empty mapping", field="set",
                              value=set)
    expr = _expression(filter, md)
    for name in set:
        if not isinstance(name, str) or md.schema.field_by_name(name) is None:
            raise ValidationError("column to set is not in the table schema", field=str(name),
                                  value=[g.name for g in md.schema.fields])
    snap = _branch_snapshot(md, branch)
    if snap is None:
        return None
    hits = _matching(table, snap, expr, None)
    if not hits:
        return None
    names = [f.name for f in md.schema.fields]
    old = pa.concat_tables([rows.select(names) for _, rows in hits])
    new_rows = conform_to_schema(_assigned(old, table, set), md.schema,
                                 format_version=md.format_version)
    producer = _row_delta(table, branch, snapshot_properties)
    operation_id = _operation_id(producer)
    written: list[str] = []
    try:
        added, removed = _write_position_deletes(table, snap, hits, operation_id, written)
        new_files = write_data_files(
            table.io, new_rows, md.schema, md.spec, md.sort_order, md.properties,
            location_provider(md.location, md.properties), format_version=md.format_version,
            operation_id=operation_id)
        written.extend(f.file_path for f in new_files)
        producer.add_rows(new_files)
        producer.add_deletes(added)
        if removed:
            producer.remove_deletes(removed)
        _validate(producer, snap, expr, (t.data_file.file_path for t, _ in hits), level)
    except BaseException:
        _abort(table, written)
        raise
    return _commit(table, producer, written, branch)

