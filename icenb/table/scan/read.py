"""Read a file scan task into Arrow: project the data file by field id, apply deletes, filter.

The same code runs on a laptop and inside Spark executors (DESIGN: "Spark for data"): it takes a
:class:`~icenb.io.file_io.FileIO`, a :class:`~icenb.spec.manifest.FileScanTask` and the
projected schema, and returns a ``pyarrow.Table`` whose fields carry ``PARQUET:field_id``.

Steps (spec: "Column Projection", "Scan Planning", "Row-level deletes"):

1. Columns are matched to the schema by field id (by name through a name mapping when the file
   has no ids); renamed, reordered and dropped columns follow; promoted types are cast. A field
   the file lacks takes its identity partition value, else its ``initial-default``, else null.
2. Position deletes (rows of Parquet delete files whose ``file_path`` is this data file) and
   deletion vectors remove rows by position; equality deletes remove rows whose equality
   columns equal a delete row's, nulls equal to nulls. An equality column dropped from the
   table since is still used: read from the data file by field id for matching only.
3. The residual filter keeps the matching rows.
4. Metadata columns in the projection (``_file``, ``_pos``, ``_spec_id``, ``_partition``,
   ``_deleted``, ``_row_id``, ``_last_updated_sequence_number``) are filled in per task.

Decisions: a file is read whole (row positions are the file's row numbers); equality columns
and residual columns not in the projection are read and dropped at the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import CorruptFile, UnsupportedFeature, ValidationError
from icenb.io.data_files.avro import read_avro_file
from icenb.io.data_files.orc import read_orc_file
from icenb.io.data_files.parquet import read_parquet_file
from icenb.io.file_io import FileIO
from icenb.io.puffin import read_deletion_vector
from icenb.progress import READING_DATA_FILES, progress
from icenb.spec.arrow_schema import (
    FIELD_ID_KEY,
    arrow_constant,
    arrow_field,
    arrow_field_id,
    to_arrow_schema,
    to_arrow_type,
)
from icenb.spec.evaluators import evaluate_arrow
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    bind,
    referenced_field_ids,
)
from icenb.spec.manifest import DataFile, FileContent, FileFormat, FileScanTask
from icenb.spec.metadata_columns import (
    DELETED,
    FILE_PATH,
    LAST_UPDATED_SEQUENCE_NUMBER,
    PARTITION_FIELD_ID,
    ROW_ID,
    ROW_POSITION,
    SPEC_ID,
    is_metadata_column,
)
from icenb.spec.schema import Schema
from icenb.spec.transforms import IdentityTransform
from icenb.spec.types import (
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
)
from icenb.table.scan.planning import ScanPlan

__all__ = ["NameMapping", "project_table", "read_data_file", "read_plan", "read_task"]

#: Field ids of the position delete file columns (spec: Position Delete Files).
_DELETE_FILE_PATH_ID = 2147483546
_DELETE_POS_ID = 2147483545

#: The v3 row lineage metadata columns (spec: "Row Lineage").
_ROW_LINEAGE_IDS = frozenset({ROW_ID.field_id, LAST_UPDATED_SEQUENCE_NUMBER.field_id})

#: A name mapping (spec: "Column Projection", ``schema.name-mapping.default``): the parsed JSON
#: list of ``{"field-id": id, "names": [...], "fields": [...]}`` objects.
NameMapping = Sequence[Mapping[str, Any]]


# --------------------------------------------------------------------------- public API


def read_plan(io: FileIO, plan: ScanPlan, schema: Schema | None = None, *,
              name_mapping: NameMapping | None = None) -> pa.Table:
    """All rows of a planned scan (every task, in order), projected to ``schema``
    (default: the plan's schema)."""
    projection = plan.schema if schema is None else schema
    tasks = plan.tasks
    tables = []
    with progress(READING_DATA_FILES, total=len(tasks)) as read:
        for task in tasks:
            tables.append(read_task(io, task, projection, name_mapping=name_mapping))
            read.advance()
    if not tables:
        return to_arrow_schema(projection).empty_table()
    return pa.concat_tables(tables)


def read_task(io: FileIO, task: FileScanTask, schema: Schema, *,
              name_mapping: NameMapping | None = None) -> pa.Table:
    """The live rows of one task's data file that match its residual, projected to ``schema``.

    Spec: "Column Projection" (ids, defaults, identity partition values) and "Row-level
    deletes" (position deletes, deletion vectors, equality deletes). Top-level metadata columns
    in ``schema`` (:mod:`icenb.spec.metadata_columns`) are filled in as the reference
    implementation does: ``_file``, ``_pos`` (position in the file, before deletes),
    ``_spec_id``, ``_partition`` (the file's partition widened by field id to the column's
    type), v3 ``_row_id`` / ``_last_updated_sequence_number`` (the file's stored value, else
    ``first_row_id + _pos`` / the data sequence number; null without a ``first_row_id``), and
    ``_deleted``: when it is selected, deleted rows are kept and marked instead of dropped.
    """
    data_file = task.data_file
    if not task.is_whole_file:
        # Positions (_pos, position deletes) count from the file's first row: a split would
        # need the rows before it; icenb plans whole files.
        raise UnsupportedFeature("reading part of a data file (a split task) is not supported",
                                 file=data_file.file_path, field="start",
                                 value=f"{task.start}+{task.length}")
    residual = _residual(task)
    if isinstance(residual, AlwaysFalse):
        return to_arrow_schema(schema).empty_table()
    meta_fields = [f for f in schema.fields if is_metadata_column(f.field_id)]
    data_schema = schema
    if meta_fields:
        data_schema = Schema(*(f for f in schema.fields if not is_metadata_column(f.field_id)),
                             schema_id=schema.schema_id)
    eq_deletes = [d for d in task.delete_files if d.content == FileContent.EQUALITY_DELETES]
    extra_ids: set[int] = set()
    for d in eq_deletes:
        extra_ids.update(d.equality_ids or ())
    dropped = _DroppedKeys.of(io, eq_deletes, task.schema, name_mapping)
    extra_ids -= dropped.ids
    bound: Expression | None = None
    if not isinstance(residual, AlwaysTrue):
        bound = bind(residual, task.schema)
        extra_ids.update(referenced_field_ids(bound))
    read_schema = _with_fields(data_schema, task.schema, extra_ids)
    lineage = [f for f in meta_fields if f.field_id in _ROW_LINEAGE_IDS]
    if lineage:  # materialized lineage values are read from the file when it has them
        read_schema = Schema(*read_schema.fields, *lineage, schema_id=read_schema.schema_id)
    constants = _identity_partition_values(task)
    raw = _read_file(io, data_file, read_schema, name_mapping, also=dropped.tops)
    table = project_table(raw, read_schema, constants=constants, file=data_file.file_path)
    table = dropped.with_data_columns(table, raw)
    if meta_fields:
        table = _with_metadata_columns(table, task, meta_fields)

    mark_deleted = any(f.field_id == DELETED.field_id for f in meta_fields)
    deleted: np.ndarray[Any, Any] | None = None
    keep = _position_keep_mask(io, task, table.num_rows)
    if keep is not None:
        if mark_deleted:
            deleted = ~keep
        else:
            table = table.filter(pa.array(keep, pa.bool_()))
    for delete in eq_deletes:
        if table.num_rows == 0:
            break
        hit = _equality_delete_mask(io, delete, task.schema, table, name_mapping, dropped)
        if mark_deleted:
            deleted = hit if deleted is None else deleted | hit
        else:
            table = table.filter(pa.array(~hit, pa.bool_()))
    if mark_deleted:
        flags = np.zeros(table.num_rows, dtype=bool) if deleted is None else deleted
        table = _set_column(table, DELETED, pa.array(flags, pa.bool_()))
    if bound is not None and table.num_rows:
        table = table.filter(evaluate_arrow(bound, table))
    if read_schema is not schema or dropped.ids:
        table = project_table(table, schema, file=data_file.file_path)
    return table


def read_data_file(io: FileIO, data_file: DataFile, schema: Schema, *,
                   constants: Mapping[int, Any] | None = None,
                   name_mapping: NameMapping | None = None) -> pa.Table:
    """Every row of a data file, projected by field id to ``schema`` (no deletes applied)."""
    raw = _read_file(io, data_file, schema, name_mapping)
    return project_table(raw, schema, constants=constants, file=data_file.file_path)


def project_table(table: pa.Table, schema: Schema, *,
                  constants: Mapping[int, Any] | None = None,
                  file: str | None = None) -> pa.Table:
    """Arrow data with field-id metadata projected to an Iceberg schema.

    Spec: "Column Projection". ``constants`` maps field ids to values (identity partition
    values) used for fields the data lacks.
    """
    if not schema.fields:  # no column: keep the row count (metadata columns may follow)
        return table.select([])
    by_id = _children_by_id(table.schema)
    n = table.num_rows
    columns: list[pa.ChunkedArray | pa.Array] = []
    for f in schema.fields:
        idx = by_id.get(f.field_id)
        if idx is None:
            columns.append(_missing(f, n, constants))
            continue
        col = table.column(idx)
        chunks = [_project(chunk, table.schema.field(idx), f, file) for chunk in col.chunks]
        target = to_arrow_type(f.field_type)
        columns.append(pa.chunked_array(chunks, type=target))
    return pa.Table.from_arrays(columns, schema=to_arrow_schema(schema))


# --------------------------------------------------------------------------- projection


def _children_by_id(fields: Iterable[pa.Field]) -> dict[int, int]:
    out: dict[int, int] = {}
    for i, f in enumerate(fields):
        fid = arrow_field_id(f)
        if fid is not None:
            out.setdefault(fid, i)
    return out


def _missing(f: NestedField, n: int, constants: Mapping[int, Any] | None) -> pa.Array:
    """A column the file lacks: identity partition value, else initial default, else null.

    Spec: "Column Projection" (values for field ids not present in a data file)."""
    if constants is not None and f.field_id in constants:
        return arrow_constant(f.field_type, constants[f.field_id], n)
    if f.initial_default is not None:
        return arrow_constant(f.field_type, f.initial_default, n)
    if f.required:
        raise ValidationError("a required field is missing from the data file and has no "
                              "initial default", field=f.name, value=f.field_id)
    return arrow_constant(f.field_type, None, n)


def _project(arr: pa.Array, file_field: pa.Field, f: NestedField, file: str | None) -> pa.Array:
    """One column (a chunk) projected to an Iceberg field, recursively by field id."""
    t = f.field_type
    target = to_arrow_type(t)
    src = file_field.type
    if isinstance(t, StructType):
        if not pa.types.is_struct(src):
            raise _mismatch(file_field, f, file)
        assert isinstance(arr, pa.StructArray)
        child_ids = _children_by_id(src)
        children = []
        for child in t.fields:
            idx = child_ids.get(child.field_id)
            if idx is None:
                children.append(_missing(child, len(arr), None))
            else:
                children.append(_project(arr.field(idx), src.field(idx), child, file))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=[arrow_field(c) for c in t.fields],
                                          mask=mask)
    if isinstance(t, ListType):
        if not (pa.types.is_list(src) or pa.types.is_large_list(src)):
            raise _mismatch(file_field, f, file)
        assert isinstance(arr, (pa.ListArray, pa.LargeListArray))
        values = _project(arr.values, src.value_field, t.element_field, file)
        offsets = arr.offsets.cast(pa.int32())
        mask = arr.is_null() if arr.null_count else None
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
    if isinstance(t, MapType):
        if not pa.types.is_map(src):
            raise _mismatch(file_field, f, file)
        assert isinstance(arr, pa.MapArray)
        keys = _project(arr.keys, src.key_field, t.key_field, file)
        items = _project(arr.items, src.item_field, t.value_field, file)
        mask = arr.is_null() if arr.null_count else None
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=mask)
    assert isinstance(t, PrimitiveType)
    if pa.types.is_dictionary(src):
        arr = arr.cast(src.value_type)
        src = src.value_type
    if isinstance(src, pa.ExtensionType):
        arr = arr.storage
        src = src.storage_type
    if src == target:
        return arr
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise CorruptFile(f"cannot read column as {t}: {e}", file=file, field=f.name,
                          value=str(src)) from None


def _mismatch(file_field: pa.Field, f: NestedField, file: str | None) -> CorruptFile:
    return CorruptFile(f"column has type {file_field.type}, the schema says {f.field_type}",
                       file=file, field=f.name, value=f.field_id)


#: The reader of each data file format (spec: Appendix A).
_READERS = {FileFormat.PARQUET: read_parquet_file, FileFormat.ORC: read_orc_file,
            FileFormat.AVRO: read_avro_file}


def _read_file(io: FileIO, f: DataFile, schema: Schema | None,
               name_mapping: NameMapping | None, *, also: Iterable[int] = ()) -> pa.Table:
    """A data or delete file's columns needed by ``schema`` (all when None) and the top-level
    columns of ids ``also``, by file format."""
    fmt = f.file_format
    read = _READERS.get(fmt)
    if read is None:
        raise UnsupportedFeature(f"reading {fmt.value} data or delete files is not supported",
                                 file=f.file_path, field="file_format", value=fmt.value)
    mapper = None
    if name_mapping is not None:
        def mapper(s: pa.Schema) -> pa.Schema:
            return _apply_name_mapping(s, name_mapping)
    table = read(io.new_input(f.file_path), name_mapping=mapper,
                 field_ids=None if schema is None else {*schema.field_ids(), *also})
    if table.num_rows != f.record_count:
        # the manifest's record_count is the file's row count (spec: data_file field 103), for
        # delete files too: a damaged footer that still parses would otherwise read as fewer
        # or more rows - fewer deletes bring deleted rows back
        raise CorruptFile(f"the file has {table.num_rows} rows, its manifest entry says "
                          f"{f.record_count}", file=f.file_path, field="record_count",
                          value=table.num_rows)
    return table


def _apply_name_mapping(schema: pa.Schema, mapping: NameMapping) -> pa.Schema:
    """Field ids for a file written without them (spec: "Column Projection", name mapping)."""
    return pa.schema([_map_field(f, mapping) for f in schema])


def _map_field(f: pa.Field, mapping: NameMapping | None, name: str | None = None) -> pa.Field:
    """``f`` with the id the mapping gives its name, and its children with the ids of the
    entry's ``fields`` at every level: struct fields by name, a list's ``element``, a map's
    ``key`` and ``value`` (``name``: these fixed names, as the file's names vary). Spec:
    "Column Projection", Appendix C "Name Mapping Serialization"."""
    entry = None
    for m in mapping or ():
        if (name or f.name) in m.get("names", ()):
            entry = m
            break
    nested = entry.get("fields") if entry is not None else None
    t = f.type
    if pa.types.is_struct(t):
        t = pa.struct([_map_field(t.field(i), nested) for i in range(t.num_fields)])
    elif pa.types.is_list(t):
        t = pa.list_(_map_field(t.value_field, nested, "element"))
    elif pa.types.is_large_list(t):  # e.g. Polars' files: the Arrow schema kept in the footer
        t = pa.large_list(_map_field(t.value_field, nested, "element"))
    elif pa.types.is_map(t):
        t = pa.map_(_map_field(t.key_field, nested, "key"),
                    _map_field(t.item_field, nested, "value"))
    meta = {k: v for k, v in (f.metadata or {}).items() if k != FIELD_ID_KEY}
    if entry is not None and entry.get("field-id") is not None:
        meta[FIELD_ID_KEY] = str(entry["field-id"]).encode()
    return pa.field(f.name, t, f.nullable, metadata=meta or None)


# --------------------------------------------------------------------------- deletes


def _position_keep_mask(io: FileIO, task: FileScanTask, n: int) -> np.ndarray[Any, Any] | None:
    """Rows of the data file not deleted by position deletes or a deletion vector."""
    deleted: list[np.ndarray[Any, Any]] = []
    path = task.data_file.file_path
    for d in task.delete_files:
        if d.content != FileContent.POSITION_DELETES:
            continue
        if d.is_deletion_vector:
            if d.content_offset is None or d.content_size_in_bytes is None:
                raise CorruptFile("a deletion vector entry has no content offset or size",
                                  file=d.file_path, field="content_offset")
            dv = read_deletion_vector(io.new_input(d.file_path), d.content_offset,
                                      d.content_size_in_bytes, cardinality=d.record_count,
                                      file=d.file_path)
            deleted.append(dv.to_numpy())
            continue
        raw = _read_file(io, d, None, None)
        ids = _children_by_id(raw.schema)
        if _DELETE_FILE_PATH_ID not in ids or _DELETE_POS_ID not in ids:
            raise CorruptFile("a position delete file needs file_path and pos columns",
                              file=d.file_path)
        paths = raw.column(ids[_DELETE_FILE_PATH_ID])
        positions = raw.column(ids[_DELETE_POS_ID])
        mine = pc.equal(paths, pa.scalar(path, paths.type))
        pos = positions.filter(pc.fill_null(mine, False))
        deleted.append(np.asarray(pos.to_numpy(), dtype=np.int64))
    if not deleted:
        return None
    keep = np.ones(n, dtype=bool)
    for pos_array in deleted:
        inside = pos_array[(pos_array >= 0) & (pos_array < n)]
        keep[inside] = False
    return keep


class _DroppedKeys:
    """Equality delete columns no longer in the table schema: dropped after the delete was
    written, they must still be used when applying it (spec: "Equality Delete Files").

    A dropped column is matched by field id: the data file's column of that id is read for
    matching only (nulls when the file lacks it) and left out of the result; it is compared in
    the type the delete file stores it in (the table's type when the delete was written, which
    the older data files it applies to can only be narrower than, as types only widen).
    """

    def __init__(self, ids: frozenset[int] = frozenset(),
                 rows: Mapping[str, pa.Table] | None = None,
                 types: Mapping[int, pa.DataType] | None = None,
                 tops: frozenset[int] = frozenset()) -> None:
        self.ids = ids  #: the dropped equality field ids
        self.rows = rows or {}  #: delete file path -> its rows as read (all columns)
        self.types = types or {}  #: dropped id -> its Arrow type in a delete file
        self.tops = tops  #: top-level field ids (in the delete files) holding the dropped ids

    @classmethod
    def of(cls, io: FileIO, eq_deletes: Sequence[DataFile], table_schema: Schema,
           name_mapping: NameMapping | None) -> _DroppedKeys:
        """The equality ids of ``eq_deletes`` that ``table_schema`` lacks, with the rows of
        the delete files naming them."""
        ids = frozenset(fid for d in eq_deletes for fid in d.equality_ids or ()
                        if table_schema.field_by_id(fid) is None)
        if not ids:
            return _NO_DROPPED_KEYS
        rows: dict[str, pa.Table] = {}
        types: dict[int, pa.DataType] = {}
        tops: set[int] = set()
        for d in eq_deletes:
            mine = [fid for fid in d.equality_ids or () if fid in ids]
            if not mine:
                continue
            raw = rows[d.file_path] = _read_file(io, d, None, name_mapping)
            for fid in mine:
                path = _arrow_path(raw.schema, fid)
                if path is None:
                    raise CorruptFile("an equality delete file has no column for one of its "
                                      "equality_ids", file=d.file_path, field="equality_ids",
                                      value=fid)
                top = arrow_field_id(raw.schema.field(path[0]))
                assert top is not None
                tops.add(top)
                types.setdefault(fid, _plain_type(_arrow_column(raw, path).type))
        return cls(ids, rows, types, frozenset(tops))

    @staticmethod
    def column_name(fid: int) -> str:
        """The name of the matching-only column of a dropped id (it carries no field id)."""
        return f"_dropped_equality_column_{fid}"

    def with_data_columns(self, table: pa.Table, raw: pa.Table) -> pa.Table:
        """``table`` plus the data file's (``raw``) columns of the dropped ids."""
        for fid in sorted(self.ids):
            path = _arrow_path(raw.schema, fid)
            column: pa.ChunkedArray | pa.Array = (
                pa.nulls(table.num_rows, self.types[fid]) if path is None
                else _arrow_column(raw, path))
            table = table.append_column(self.column_name(fid), column)
        return table


_NO_DROPPED_KEYS = _DroppedKeys()


def _arrow_path(fields: Iterable[pa.Field], fid: int) -> list[int] | None:
    """Child indexes leading to the field with id ``fid`` through structs, or None."""
    for i, f in enumerate(fields):
        if arrow_field_id(f) == fid:
            return [i]
        if pa.types.is_struct(f.type):
            rest = _arrow_path(f.type, fid)
            if rest is not None:
                return [i, *rest]
    return None


def _arrow_column(table: pa.Table, path: list[int]) -> pa.ChunkedArray:
    col = table.column(path[0])
    return pc.struct_field(col, path[1:]) if len(path) > 1 else col


def _plain_type(t: pa.DataType) -> pa.DataType:
    """A dictionary's value type, else ``t``."""
    return t.value_type if pa.types.is_dictionary(t) else t


def _comparable(data: pa.ChunkedArray, deletes: pa.ChunkedArray, file: str, fid: int
                ) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """A dropped column's data and delete values in one type: the delete file's (else the
    data file's, should the delete's be the narrower one)."""
    target = _plain_type(deletes.type)
    deletes = deletes.cast(target) if deletes.type != target else deletes
    if data.type == target:
        return data, deletes
    try:
        return data.cast(target), deletes
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:
        return data, deletes.cast(_plain_type(data.type))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise CorruptFile(f"a dropped equality delete column has type {target}, the data "
                          f"file's has {data.type}: {e}", file=file, field="equality_ids",
                          value=fid) from None


def _equality_delete_mask(io: FileIO, delete: DataFile, table_schema: Schema,
                          table: pa.Table, name_mapping: NameMapping | None,
                          dropped: _DroppedKeys = _NO_DROPPED_KEYS) -> np.ndarray[Any, Any]:
    """The rows whose equality columns equal a delete row's (nulls equal nulls); columns of
    ``dropped`` ids are ``table``'s matching-only columns.

    Spec: "Equality Delete Files"."""
    ids = list(delete.equality_ids or ())
    if not ids:
        raise CorruptFile("an equality delete file has no equality_ids", file=delete.file_path,
                          field="equality_ids")
    # Equality columns may be nested: locate them by id path in both tables.
    delete_schema = _with_fields(Schema(), table_schema,
                                 {fid for fid in ids if fid not in dropped.ids})
    raw = dropped.rows.get(delete.file_path)
    if raw is None:
        raw = _read_file(io, delete, delete_schema, name_mapping)
    deletes = project_table(raw, delete_schema, file=delete.file_path)
    if deletes.num_rows == 0:
        return np.zeros(table.num_rows, dtype=bool)
    data_cols = []
    delete_cols = []
    for fid in ids:
        if fid in dropped.ids:
            path = _arrow_path(raw.schema, fid)
            assert path is not None  # checked when the delete file was read
            data_col, delete_col = _comparable(table.column(dropped.column_name(fid)),
                                               _arrow_column(raw, path), delete.file_path, fid)
            data_cols.append(data_col)
            delete_cols.append(delete_col)
        else:
            data_cols.append(_column_by_id(table, table_schema, fid))
            delete_cols.append(_column_by_id(deletes, table_schema, fid))
    if len(ids) == 1:
        values = delete_cols[0].combine_chunks() if isinstance(
            delete_cols[0], pa.ChunkedArray) else delete_cols[0]
        hit = pc.is_in(data_cols[0], value_set=values, skip_nulls=False)
    else:
        keys = set(zip(*(_hashable(c.to_pylist()) for c in delete_cols), strict=True))
        rows = zip(*(_hashable(c.to_pylist()) for c in data_cols), strict=True)
        hit = pa.array([r in keys for r in rows], pa.bool_())
    filled = pc.fill_null(hit, False)
    if isinstance(filled, pa.ChunkedArray):
        filled = filled.combine_chunks() if filled.num_chunks else pa.array([], pa.bool_())
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)


def _hashable(values: list[Any]) -> list[Any]:
    return [_freeze(v) for v in values]


def _freeze(v: Any) -> Any:
    if isinstance(v, dict):
        return tuple((k, _freeze(x)) for k, x in v.items())
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


def _column_by_id(table: pa.Table, schema: Schema, fid: int) -> pa.ChunkedArray:
    """A (possibly nested) column of projected data by its field id."""
    path = [a.field_id for a in schema.ancestors(fid)] + [fid]
    top = _children_by_id(table.schema)
    col = table.column(top[path[0]])
    for child_id in path[1:]:
        children = _children_by_id(col.type)
        col = pc.struct_field(col, [children[child_id]])
    return col


# --------------------------------------------------------------------------- helpers


def _residual(task: FileScanTask) -> Expression:
    r = task.residual_filter
    if r is True:
        return AlwaysTrue()
    if r is False:
        return AlwaysFalse()
    if isinstance(r, Expression):
        return r
    if isinstance(r, str):
        return parse(r)
    raise UnsupportedFeature("a residual filter in JSON form is not supported yet",
                             field="residual-filter", value=r)


def _with_fields(schema: Schema, table_schema: Schema, field_ids: set[int]) -> Schema:
    """``schema`` plus the top-level fields of ``table_schema`` holding ``field_ids``
    (columns needed for deletes or filters); ``schema`` itself when nothing is added."""
    present = set(schema.field_ids())
    extra: list[NestedField] = []
    for fid in sorted(field_ids):
        if fid in present:
            continue
        ancestors = table_schema.ancestors(fid)
        top_id = ancestors[0].field_id if ancestors else fid
        if top_id in present:
            # The top-level column is projected but lacks this nested field: read it whole.
            top = table_schema.field_by_id(top_id)
            assert top is not None
            fields = tuple(top if f.field_id == top_id else f for f in schema.fields)
            schema = Schema(*fields, schema_id=schema.schema_id)
            present = set(schema.field_ids())
            continue
        top = table_schema.field_by_id(top_id)
        if top is None:
            raise ValidationError("field id not in the table schema", value=fid)
        extra.append(top)
        present |= {top_id}
        present |= set(Schema(top).field_ids())
    if not extra:
        return schema
    return Schema(*schema.fields, *extra, schema_id=schema.schema_id)


def _identity_partition_values(task: FileScanTask) -> dict[int, Any]:
    """Source field id -> identity partition value of the task's data file."""
    out: dict[int, Any] = {}
    for pf, value in zip(task.spec.fields, task.data_file.partition, strict=False):
        if isinstance(pf.transform, IdentityTransform):
            out.setdefault(pf.source_ids[0], value)
    return out


# --------------------------------------------------------------------------- metadata columns


def _with_metadata_columns(table: pa.Table, task: FileScanTask,
                           fields: Sequence[NestedField]) -> pa.Table:
    """``table`` (every row of the task's file, in file order) with the metadata columns.

    As the reference implementation's ``PartitionUtil.constantsMap`` and row lineage readers
    (v3 spec: "Row Lineage"): lineage values stored in the file win; a null ``_row_id`` is
    ``first_row_id + _pos`` and a null ``_last_updated_sequence_number`` the file's data
    sequence number, both only when the file has a ``first_row_id``.
    """
    f = task.data_file
    n = table.num_rows
    positions = pa.array(np.arange(n, dtype=np.int64), pa.int64())
    for field in fields:
        fid = field.field_id
        if fid == FILE_PATH.field_id:
            column: pa.Array = arrow_constant(field.field_type, f.file_path, n)
        elif fid == ROW_POSITION.field_id:
            column = positions
        elif fid == SPEC_ID.field_id:
            column = arrow_constant(field.field_type, f.spec_id, n)
        elif fid == PARTITION_FIELD_ID:
            column = _partition_constant(task, field, n)
        elif fid == DELETED.field_id:
            column = pa.array(np.zeros(n, dtype=bool), pa.bool_())
        elif fid in _ROW_LINEAGE_IDS:
            column = _lineage_column(table, field, f, positions)
        else:
            continue  # a reserved id with no meaning for data rows: left to the projection
        table = _set_column(table, field, column)
    return table


def _lineage_column(table: pa.Table, field: NestedField, f: DataFile,
                    positions: pa.Array) -> pa.Array:
    """``_row_id`` or ``_last_updated_sequence_number``: stored value, else inherited."""
    stored = _column_or_none(table, field.field_id)
    n = table.num_rows
    if f.first_row_id is None:
        return pa.nulls(n, pa.int64())
    if field.field_id == ROW_ID.field_id:
        inherited: pa.Array = pc.add(positions, pa.scalar(f.first_row_id, pa.int64()))
    elif f.data_sequence_number is None:
        inherited = pa.nulls(n, pa.int64())
    else:
        inherited = arrow_constant(field.field_type, f.data_sequence_number, n)
    if stored is None or stored.null_count == n:
        return inherited
    result = pc.coalesce(stored.cast(pa.int64()), inherited)
    return result.combine_chunks() if isinstance(result, pa.ChunkedArray) else result


def _partition_constant(task: FileScanTask, field: NestedField, n: int) -> pa.Array:
    """The file's partition as the ``_partition`` column's struct: its spec's values by
    partition field id, null for fields of other specs; null when the struct has no fields."""
    ptype = field.field_type
    assert isinstance(ptype, StructType)
    if not ptype.fields:
        return arrow_constant(ptype, None, n)
    own = {pf.field_id: value
           for pf, value in zip(task.spec.fields, task.data_file.partition, strict=False)}
    return arrow_constant(ptype, {pf.field_id: own.get(pf.field_id) for pf in ptype.fields}, n)


def _column_or_none(table: pa.Table, field_id: int) -> pa.ChunkedArray | None:
    idx = _children_by_id(table.schema).get(field_id)
    return None if idx is None else table.column(idx)


def _set_column(table: pa.Table, field: NestedField, column: pa.Array) -> pa.Table:
    """``table`` with the column of ``field``'s id replaced (or appended)."""
    idx = _children_by_id(table.schema).get(field.field_id)
    arrow = pa.field(field.name, column.type, nullable=True,
                     metadata={FIELD_ID_KEY: str(field.field_id).encode()})
    if idx is None:
        return table.append_column(arrow, column)
    return table.set_column(idx, arrow, column)
