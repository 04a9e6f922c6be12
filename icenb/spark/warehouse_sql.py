"""Spark SQL over a warehouse: ``wh.sql(query)`` (and the ``%%sql`` cell magic).

The query is parsed by Spark's own parser and its table references are resolved against the
warehouse (:mod:`icenb.spark.view_sql` does the parsing and rewriting); Spark then analyzes and
runs it. What a name means, in order (as Iceberg's ``SparkCatalog`` over a catalog does):

1. a CTE in scope, a temporary view of the session or ``global_temp.v``: Spark's;
2. the catalog part: ``<catalog>.a.b`` where ``<catalog>`` is the warehouse's catalog name
   (``wh.catalog.name``) drops it; a one-part name ``t`` is ``<namespace>.t`` (``wh.sql(...,
   namespace=...)``, default ``default``, Spark's current namespace);
3. a view of the warehouse: its current version's Spark SQL, resolved the same way with the
   view's own default catalog and namespace, its columns named as the view's schema;
4. a table of the warehouse;
5. else, when the name without its last part is a table: the last part is
   - a metadata table (case-insensitive, Iceberg's Spark names): ``snapshots``, ``history``,
     ``refs``, ``metadata_log_entries``, ``manifests``, ``entries``, ``files``, ``data_files``,
     ``delete_files``, ``partitions``, ``position_deletes``, ``all_manifests``,
     ``all_entries``, ``all_files``, ``all_data_files``, ``all_delete_files``: the rows of
     ``t.inspect.<name>()`` (:mod:`icenb.table.explore.inspect`);
   - ``branch_<name>``, ``tag_<name>``, ``snapshot_id_<id>``, ``at_timestamp_<ms>``: the
     table at that ref, snapshot or time (not combinable with ``AS OF``).

So ``db.t.snapshots`` is a table named ``snapshots`` in namespace ``db.t`` when there is one,
and the snapshots of table ``db.t`` otherwise, exactly as in Iceberg (``BaseMetastoreCatalog``
tries the table first). Every other name is looked up in the warehouse: Spark's own catalog
tables are not visible (temporary views are).

Time travel (``VERSION AS OF`` a snapshot id, a branch or a tag; ``TIMESTAMP AS OF``;
``FOR SYSTEM_VERSION / SYSTEM_TIME AS OF``) reads the table as ``t.at(...)`` does, with the
schema rules of Iceberg's Spark integration. On metadata tables, as Iceberg: the snapshot
tables (``manifests``, ``entries``, ``files``, ``data_files``, ``delete_files``, ``partitions``,
``position_deletes``) show that snapshot; ``snapshots``, ``history``, ``refs`` and
``metadata_log_entries`` list the whole table whatever the state (the state must exist, as
Java checks); the ``all_*`` tables refuse it (Java: "Cannot select snapshot").

Errors are icenb errors naming what is missing: ``NoSuchTable`` (the name as resolved, and
what a metadata name would have needed), ``NoSuchSnapshot`` (the table and the snapshot id,
ref or time), ``ValidationError`` (SQL Spark cannot parse or analyze: Spark's message, field
``sql``), ``UnsupportedFeature`` (time travel on a view or an ``all_*`` table).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icenb.errors import (
    IcebergError,
    NoSuchSnapshot,
    NoSuchTable,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.reprs import safe_repr
from icenb.spark.session import get_spark, register
from icenb.spark.view_sql import TimeTravel, run_sql
from icenb.table.scan import Scan
from icenb.table.table import Table

if TYPE_CHECKING:
    from icenb.table.warehouse import Warehouse

__all__ = ["METADATA_TABLES", "WarehouseResolver", "warehouse_sql"]

#: The metadata tables of ``t.inspect``, by their Spark names.
METADATA_TABLES: tuple[str, ...] = (
    "snapshots", "history", "refs", "metadata_log_entries", "manifests", "entries", "files",
    "data_files", "delete_files", "partitions", "position_deletes", "all_manifests",
    "all_entries", "all_files", "all_data_files", "all_delete_files")
#: Metadata tables of one snapshot (``AS OF`` picks it).
_OF_A_SNAPSHOT = frozenset({"manifests", "entries", "files", "data_files", "delete_files",
                            "partitions", "position_deletes"})
#: Metadata tables of the whole table (``AS OF`` must name an existing state; rows unchanged).
_OF_THE_TABLE = frozenset({"snapshots", "history", "refs", "metadata_log_entries"})

#: Iceberg's ``SparkCatalog`` selectors after a table name.
_SELECTORS = (
    (re.compile(r"at_timestamp_(\d+)"), "timestamp"),
    (re.compile(r"snapshot_id_(\d+)"), "snapshot"),
    (re.compile(r"branch_(.*)", re.DOTALL), "branch"),
    (re.compile(r"tag_(.*)", re.DOTALL), "tag"),
)

#: Spark's current namespace in a new session: where one-part names are looked up.
DEFAULT_NAMESPACE = ("default",)


def _name(identifier: Sequence[str]) -> str:
    return ".".join(identifier)


def _travel_text(tt: TimeTravel) -> str:
    if tt.snapshot_id is not None:
        return f"VERSION AS OF {tt.snapshot_id}"
    if tt.ref is not None:
        return f"VERSION AS OF {tt.ref!r}"
    return f"TIMESTAMP AS OF {tt.timestamp_ms} (epoch ms)"


def _named(error: NoSuchSnapshot, table: str) -> NoSuchSnapshot:
    """The error with the table's name in front of its message."""
    kwargs: dict[str, Any] = {"file": error.file, "field": error.field}
    if error.has_value:
        kwargs["value"] = error.value
    return NoSuchSnapshot(f"table {table}: {error.message}", **kwargs)


@safe_repr
@dataclass
class WarehouseResolver:
    """Resolves the table references of a query against a warehouse (see the module
    docstring); one per query, so every reference to a table reads one loaded state."""

    warehouse: Warehouse
    spark: Any
    _tables: dict[tuple[str, ...], Table | None] = field(default_factory=dict)
    _expanding: list[tuple[str, ...]] = field(default_factory=list)

    def _table(self, identifier: tuple[str, ...]) -> Table | None:
        if identifier not in self._tables:
            if len(identifier) < 2:
                self._tables[identifier] = None
            else:
                try:
                    self._tables[identifier] = self.warehouse.table(identifier)
                except NotFound:
                    self._tables[identifier] = None
        return self._tables[identifier]

    def __call__(self, identifier: tuple[str, ...], time_travel: TimeTravel | None) -> Any:
        view = self._view(identifier)
        if view is not None:
            if time_travel is not None:
                raise UnsupportedFeature(f"{_name(identifier)} is a view: time travel "
                                         "(AS OF) applies to tables", field="sql",
                                         value=_travel_text(time_travel))
            return self._expand(identifier, view)
        table = self._table(identifier)
        if table is not None:
            return self._read(table, _name(identifier), time_travel)
        base = self._table(identifier[:-1]) if len(identifier) >= 3 else None
        if base is None:
            raise NoSuchTable(f"no table or view named {_name(identifier)} in the warehouse",
                              file=self.warehouse.location, field="sql",
                              value=_name(identifier))
        return self._of_table(base, identifier, time_travel)

    # ------------------------------------------------------------------ views

    def _view(self, identifier: tuple[str, ...]) -> Any:
        if len(identifier) < 2:
            return None
        try:
            return self.warehouse.view(identifier)
        except NotFound:
            return None

    def _expand(self, identifier: tuple[str, ...], view: Any) -> Any:
        if identifier in self._expanding:
            chain = " -> ".join(_name(i) for i in (*self._expanding, identifier))
            raise ValidationError(f"view {_name(identifier)} refers to itself: {chain}",
                                  field="sql", value=_name(identifier))
        version = view.current_version
        try:
            sql = view.sql_for("spark")
        except IcebergError as e:
            raise UnsupportedFeature(f"view {_name(identifier)} has no Spark SQL to run "
                                     f"({e.message})", field="sql",
                                     value=_name(identifier)) from None
        self._expanding.append(identifier)
        try:
            df = run_sql(sql, self, default_catalog=version.default_catalog,
                         default_namespace=version.default_namespace,
                         catalog_names=(self.warehouse.catalog.name,), spark=self.spark,
                         what=f"view {_name(identifier)}")
        finally:
            self._expanding.pop()
        names = [f.name for f in view.schema.fields]
        if len(names) == len(df.columns) and names != list(df.columns):
            df = df.toDF(*names)  # the view's column names, as Iceberg's ResolveViews
        return df

    # ------------------------------------------------------------------ tables

    def _scan(self, table: Table, name: str, time_travel: TimeTravel | None) -> Scan:
        try:
            return table.scan() if time_travel is None else time_travel.scan(table)
        except NoSuchSnapshot as e:
            raise _named(e, name) from None

    def _read(self, table: Table, name: str, time_travel: TimeTravel | None) -> Any:
        from icenb.spark import read_scan

        return read_scan(self._scan(table, name, time_travel), self.spark)

    def _of_table(self, base: Table, identifier: tuple[str, ...],
                  time_travel: TimeTravel | None) -> Any:
        table_name, last = _name(identifier[:-1]), identifier[-1]
        meta = last.lower()
        if meta in METADATA_TABLES:
            return self._metadata_table(base, table_name, meta, time_travel)
        for pattern, kind in _SELECTORS:
            match = pattern.fullmatch(last)
            if match is None:
                continue
            if time_travel is not None:
                raise ValidationError(f"{_name(identifier)} already names a state of "
                                      f"{table_name}: it cannot take AS OF as well",
                                      field="sql", value=_travel_text(time_travel))
            value = match.group(1)
            if kind == "timestamp":
                selected = TimeTravel(timestamp_ms=int(value))
            elif kind == "snapshot":
                selected = TimeTravel(snapshot_id=int(value))
            else:
                ref = base.metadata.refs.get(value)
                if ref is None or ref.is_branch != (kind == "branch"):
                    raise NoSuchSnapshot(f"table {table_name} has no {kind} named {value!r}",
                                         file=base.metadata_location, field="refs",
                                         value=value)
                selected = TimeTravel(ref=value)
            return self._read(base, table_name, selected)
        raise NoSuchTable(
            f"no table or view named {_name(identifier)} in the warehouse; {table_name} is a "
            f"table, and {last!r} is none of its metadata tables ({', '.join(METADATA_TABLES)})"
            " nor branch_<name>, tag_<name>, snapshot_id_<id>, at_timestamp_<ms>",
            file=self.warehouse.location, field="sql", value=_name(identifier))

    def _snapshot_id(self, table: Table, name: str, time_travel: TimeTravel) -> int | None:
        return self._scan(table, name, time_travel).snapshot_id

    def _metadata_table(self, table: Table, name: str, meta: str,
                        time_travel: TimeTravel | None) -> Any:
        inspect = table.inspect
        if time_travel is None:
            rows = getattr(inspect, meta)()
        elif meta in _OF_A_SNAPSHOT:
            sid = self._snapshot_id(table, name, time_travel)
            rows = getattr(inspect, meta)(sid)
        elif meta in _OF_THE_TABLE:
            self._snapshot_id(table, name, time_travel)  # the state must exist (as Java)
            rows = getattr(inspect, meta)()
        else:
            raise UnsupportedFeature(f"{name}.{meta} covers every snapshot: it takes no AS OF "
                                     "(Iceberg: Cannot select snapshot)", field="sql",
                                     value=_travel_text(time_travel))
        return self.spark.createDataFrame(_nullable(rows))


def _nullable_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _nullable_type(t.field(i).type), True,
                                   t.field(i).metadata) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _nullable_type(t.item_type))
    if pa.types.is_list(t):
        return pa.list_(_nullable_type(t.value_type))
    if pa.types.is_large_list(t):
        return pa.large_list(_nullable_type(t.value_type))
    return t


def _nullable(rows: pa.Table) -> pa.Table:
    """``rows`` with every field nullable: Spark refuses a null struct whose fields are
    required (``position_deletes.row`` of a table with required columns)."""
    schema = pa.schema([pa.field(f.name, _nullable_type(f.type), True, f.metadata)
                        for f in rows.schema], metadata=rows.schema.metadata)
    return rows if schema.equals(rows.schema) else rows.cast(schema)


def warehouse_sql(query: str, warehouse: Warehouse, *,
                  namespace: Sequence[str] = DEFAULT_NAMESPACE, spark: Any = None) -> Any:
    """A Spark DataFrame of ``query`` with its names resolved against ``warehouse`` (see the
    module docstring); analyzed here, run when the DataFrame is."""
    spark = get_spark() if spark is None else register(spark)
    resolver = WarehouseResolver(warehouse, spark)
    return run_sql(query, resolver, default_catalog=None, default_namespace=tuple(namespace),
                   catalog_names=(warehouse.catalog.name,), spark=spark)
