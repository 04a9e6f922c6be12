"""A read of one table state: a snapshot, a row filter and a column selection (immutable).

The package face is the :class:`Scan` facade; beside it ``planning`` (which files and deletes a
scan needs), ``read`` (reading planned tasks) and ``v4_planning`` (EXPERIMENTAL root manifests).

Spec: "Scan Planning" (planning is :func:`~icenb.table.scan.planning.plan_files`, reading is
:func:`~icenb.table.scan.read.read_plan`). Each refinement (``filter``, ``select``) returns a
new :class:`Scan`; nothing is read until ``plan``, ``to_arrow``, ``to_pandas`` or ``count``.

Decisions: filters are parsed and bound when given, so a bad expression or an unknown column
fails at once; ``count`` sums the files' record counts when no delete file and no residual
filter applies, else it reads and counts the rows.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, InvalidMetadata, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import shared_manifest_cache
from icenb.progress import READING_TABLE, progress
from icenb.reprs import safe_repr
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysTrue, Expression, and_, bind
from icenb.spec.metadata_columns import PARTITION_FIELD_ID, metadata_column, partition_column
from icenb.spec.partition_spec import unified_partition_type
from icenb.spec.properties import NAME_MAPPING
from icenb.spec.schema import Schema
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.types import NestedField
from icenb.table.engine import engine
from icenb.table.scan.planning import ScanPlan, plan_files
from icenb.table.scan.read import NameMapping, read_plan

__all__ = ["NAME_MAPPING_PROPERTY", "Scan"]

#: Table property holding the default name mapping (spec: "Column Projection").
NAME_MAPPING_PROPERTY = NAME_MAPPING

_REPR_LIMIT = 200

#: Name of the partition metadata column (its type depends on the table).
_PARTITION = "_partition"


def short_text(text: str, limit: int = _REPR_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _projection(metadata: TableMetadata, table_schema: Schema, columns: tuple[str, ...],
                case_sensitive: bool) -> Schema:
    """The selected columns of ``table_schema``, then the selected metadata columns.

    ``_partition`` has the table's unified partition type over all specs (as the reference
    implementation's ``Partitioning.partitionType``, with the current schema)."""
    data: list[str] = []
    extra: dict[int, NestedField] = {}
    for name in columns:
        if table_schema.find_field_id(name, case_sensitive) is not None:
            data.append(name)
            continue
        key = name if case_sensitive else name.lower()
        if key == _PARTITION:
            ptype = unified_partition_type(metadata.partition_specs, metadata.schema)
            extra.setdefault(PARTITION_FIELD_ID, partition_column(ptype))
            continue
        meta = metadata_column(key)
        if meta is None:
            data.append(name)  # unknown: select() names it in its error
        else:
            extra.setdefault(meta.field_id, meta)
    selected = table_schema.select(*data, case_sensitive=case_sensitive)
    if not extra:
        return selected
    return Schema(*selected.fields, *extra.values(), schema_id=selected.schema_id,
                  identifier_field_ids=selected.identifier_field_ids)


@safe_repr
class Scan:
    """A planned-on-demand read of one snapshot (or of an empty table when ``snapshot_id`` is
    None), with the schema the read uses (``table_schema``), a row filter and a projection."""

    __slots__ = ("_case_sensitive", "_columns", "_io", "_metadata", "_projection",
                 "_row_filter", "_snapshot_id", "_table_schema")

    def __init__(self, io: FileIO, metadata: TableMetadata, snapshot_id: int | None,
                 table_schema: Schema, *, row_filter: str | Expression = "true",
                 columns: str | tuple[str, ...] | None = None,
                 case_sensitive: bool = True) -> None:
        expr = parse(row_filter) if isinstance(row_filter, str) else row_filter
        bind(expr, table_schema, case_sensitive)  # fail now on unknown columns or bad literals
        projection = table_schema
        if isinstance(columns, str):  # one name, not its characters (issue 17)
            columns = (columns,)
        if columns is not None and (not isinstance(columns, (tuple, list))
                                    or not all(isinstance(c, str) for c in columns)):
            raise ValidationError("columns are a column name or a list of names",
                                  field="columns", value=columns)
        if columns is not None:
            columns = tuple(columns)
            projection = _projection(metadata, table_schema, columns, case_sensitive)
        self._io = io
        self._metadata = metadata
        self._snapshot_id = snapshot_id
        self._table_schema = table_schema
        self._row_filter = expr
        self._columns = columns
        self._case_sensitive = case_sensitive
        self._projection = projection

    def _with(self, *, row_filter: Expression | None = None,
              columns: tuple[str, ...] | None = None) -> Scan:
        return Scan(self._io, self._metadata, self._snapshot_id, self._table_schema,
                    row_filter=self._row_filter if row_filter is None else row_filter,
                    columns=self._columns if columns is None else columns,
                    case_sensitive=self._case_sensitive)

    # ------------------------------------------------------------------ properties

    @property
    def snapshot_id(self) -> int | None:
        """The snapshot read (None: the table has no snapshot; the scan is empty)."""
        return self._snapshot_id

    @property
    def metadata(self) -> TableMetadata:
        """The table metadata this scan reads."""
        return self._metadata

    @property
    def io(self) -> FileIO:
        """The FileIO the scan reads through."""
        return self._io

    @property
    def name_mapping(self) -> NameMapping | None:
        """The table's default name mapping (for data files written without field ids)."""
        return self._name_mapping()

    @property
    def row_filter(self) -> Expression:
        """The row filter (unbound), the AND of every filter given."""
        return self._row_filter

    @property
    def columns(self) -> tuple[str, ...] | None:
        """The selected column names, or None for all columns."""
        return self._columns

    @property
    def case_sensitive(self) -> bool:
        """Whether column names in filters and selections are matched case-sensitively."""
        return self._case_sensitive

    @property
    def table_schema(self) -> Schema:
        """The whole schema this read resolves names with (snapshot's or table's current)."""
        return self._table_schema

    @property
    def schema(self) -> Schema:
        """The projected schema: the selected columns of :attr:`table_schema` (in its order),
        then the selected metadata columns (in the order given)."""
        return self._projection

    # ------------------------------------------------------------------ refinements

    def filter(self, expr: str | Expression) -> Scan:
        """A scan that also requires ``expr`` (ANDed with the current filter)."""
        new = parse(expr) if isinstance(expr, str) else expr
        combined = new if isinstance(self._row_filter, AlwaysTrue) else and_(self._row_filter,
                                                                             new)
        return self._with(row_filter=combined)

    def select(self, *columns: str) -> Scan:
        """A scan of only these columns (dotted names select nested fields). Metadata columns
        may be selected too: ``_file``, ``_pos``, ``_spec_id``, ``_partition``, ``_deleted``,
        ``_row_id`` and ``_last_updated_sequence_number`` (a table column of the same name
        wins)."""
        return self._with(columns=tuple(columns))

    # ------------------------------------------------------------------ execution

    def plan(self, *, column_stats: bool = False) -> ScanPlan:
        """The data files (and delete files) this scan reads. Spec: Scan Planning.

        As Iceberg Java's ``planFiles``, the planned data files carry no column metrics
        unless ``column_stats=True`` (metrics the filter needs are read and prune files).
        Decoded manifest lists and manifests are kept in the table's FileIO's
        :func:`~icenb.io.manifest_reader.shared_manifest_cache` (they are immutable), so
        planning the same snapshot again reads no file."""
        return plan_files(self._io, self._metadata, snapshot_id=self._snapshot_id,
                          row_filter=self._row_filter, case_sensitive=self._case_sensitive,
                          schema=self._table_schema, cache=shared_manifest_cache(self._io),
                          column_stats=column_stats)

    def _name_mapping(self) -> NameMapping | None:
        text = self._metadata.properties.get(NAME_MAPPING_PROPERTY)
        if text is None:
            return None
        try:
            mapping: Any = json.loads(text)
        except ValueError as e:
            raise InvalidMetadata(f"name mapping is not JSON: {e}",
                                  file=self._metadata.source_file,
                                  field=f"properties.{NAME_MAPPING_PROPERTY}") from None
        if not isinstance(mapping, list):
            raise InvalidMetadata("name mapping must be a JSON list",
                                  file=self._metadata.source_file,
                                  field=f"properties.{NAME_MAPPING_PROPERTY}")
        return mapping

    def _read(self, plan: ScanPlan) -> pa.Table:
        if self._snapshot_id is None:
            from icenb.spec.arrow_schema import to_arrow_schema
            return to_arrow_schema(self.schema).empty_table()
        return read_plan(self._io, plan, self.schema, name_mapping=self._name_mapping())

    def to_arrow(self) -> pa.Table:
        """Every matching row, as a ``pyarrow.Table`` with the projected schema."""
        with progress(READING_TABLE):
            return self._read(self.plan())

    def page(self, offset: int, limit: int) -> pa.Table:
        """Rows ``offset`` to ``offset + limit`` in plan order (files as planned, rows in file
        order), reading only the files up to the last row wanted: a preview of a large table.
        Rows deleted by position, DV or equality deletes are already gone, as in
        :meth:`to_arrow`."""
        if type(offset) is not int or type(limit) is not int or offset < 0 or limit < 0:
            raise ValidationError("offset and limit must be >= 0", field="page",
                                  value=(offset, limit))
        with progress(READING_TABLE):
            return self._page(offset, limit)

    def _page(self, offset: int, limit: int) -> pa.Table:
        plan = self.plan()
        if self._snapshot_id is None or plan.files_selected == 0:
            return self._read(plan).slice(0, 0)
        parts: list[pa.Table] = []
        seen = 0
        for i in range(plan.files_selected):
            if seen >= offset + limit:
                break
            part = self._read(plan.take(np.asarray([i], dtype=np.int64)))
            lo, hi = max(offset - seen, 0), min(offset + limit - seen, part.num_rows)
            if hi > lo:
                parts.append(part.slice(lo, hi - lo))
            seen += part.num_rows
        if not parts:
            return self._read(plan.take(np.asarray([0], dtype=np.int64))).slice(0, 0)
        return pa.concat_tables(parts)

    def to_spark(self, spark: Any = None) -> Any:
        """Every matching row, as a Spark DataFrame read by the ``icenb`` data source (planned
        on the driver, read on executors); ``spark`` defaults to the active session, else a
        new local one."""
        return engine().read_scan(self, spark)

    def to_pandas(self) -> Any:
        """Every matching row, as a ``pandas.DataFrame`` (needs pandas installed)."""
        if importlib.util.find_spec("pandas") is None:
            raise IcebergError("to_pandas() needs pandas; install it (pip install pandas) "
                               "or use to_arrow()")
        return self.to_arrow().to_pandas()

    def count(self) -> int:
        """The number of matching rows: from file metadata when no delete or residual filter
        applies, else by reading."""
        with progress(READING_TABLE):
            return self._count()

    def _count(self) -> int:
        plan = self.plan()
        if plan.files_selected == 0:
            return 0
        no_deletes = all(len(d) == 0 for d in plan.deletes_per_file)
        if no_deletes and (isinstance(self._row_filter, AlwaysTrue)
                           or all(t.residual_filter is True for t in plan.tasks)):
            return int(pc.sum(plan.files.column("record_count")).as_py() or 0)
        return int(self._read(plan).num_rows)

    def __repr__(self) -> str:
        cols = "*" if self._columns is None else ", ".join(self._columns)
        text = short_text(str(self._row_filter))
        return (f"Scan(snapshot_id={self._snapshot_id}, filter={text!r}"
                f", columns={short_text(cols)!r})")
