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
     table at that ref, snapshot or time (not combinable with ``AS OF``);
   - ``changes``: the table's changelog from its first snapshot to the current one
     (``t.changes(None)``: ``_change_type``, ``_change_ordinal``, ``_commit_snapshot_id``),
     computed when the query is analyzed; no ``AS OF``, as Iceberg's changelog table. Unlike
     that table, which keeps copy-on-write carry-overs and pairs no updates, it is what
     ``create_changelog_view`` gives (carry-overs removed), updates paired by ``_row_id`` on v3.

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

Pruning: Spark's filters prune the planning of every table read, without the risk of Spark
4.1-4.3's pushdown (:mod:`icenb.spark.datasource`: a pushdown's plan kept on a reused
relation). A probe resolves the query with numbered reads that plan nothing and has Spark's
optimizer place its filters; for each read, the conjuncts of the filter right above each of its
scans are translated as Spark translates filters for a data source
(``DataSourceStrategy.translateFilter``, ``OR`` included) and then to icenb expressions
(:func:`icenb.spark.pushdown.superset_expression`: exact, or looser where icenb compares
differently). The query is then resolved again with reads that carry, as their own ``filter``,
the OR over their scans of those expressions (none when a scan of the read has no such
filter). Such a read means the same rows for every query of the DataFrame, and Spark still
applies all of its filters, so the rows are those of the query without pruning.

Errors are icenb errors naming what is missing: ``NoSuchTable`` (the name as resolved, and
what a metadata name would have needed), ``NoSuchSnapshot`` (the table and the snapshot id,
ref or time), ``ValidationError`` (SQL Spark cannot parse or analyze: Spark's message, field
``sql``), ``UnsupportedFeature`` (time travel on a view or an ``all_*`` table).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import datasource as sds

from icenb.errors import (
    IcebergError,
    NoSuchSnapshot,
    NoSuchTable,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.reprs import safe_repr
from icenb.spark.pushdown import FilterTree, before_gregorian, superset_expression
from icenb.spark.session import get_spark, register
from icenb.spark.view_sql import TimeTravel, is_spark_error, run_sql, scala_list
from icenb.spec.expressions import AlwaysTrue, Expression, and_, or_
from icenb.spec.schema import Schema
from icenb.table.scan import Scan
from icenb.table.table import Table

if TYPE_CHECKING:
    from icenb.table.warehouse import Warehouse

__all__ = ["METADATA_TABLES", "CatalogResolver", "warehouse_sql"]

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

#: Iceberg's Spark name of a table's changelog (``SparkChangelogTable``).
_CHANGES = "changes"

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
class CatalogResolver:
    """Resolves the table references of a query against a catalog's tables (and views, when
    it can load them; see the module docstring). One per query, so every reference to a table
    reads one loaded state."""

    load_table: Callable[[tuple[str, ...]], Table]
    spark: Any
    #: Loads a view (None: names are tables only, as in a view's SQL run from ``View``).
    load_view: Callable[[tuple[str, ...]], Any] | None = None
    #: The catalog's own names (a view's SQL resolved with it drops them).
    catalog_names: tuple[str, ...] = ()
    #: Where the tables live, for errors.
    location: str | None = None
    #: Extra data source options of every table read (e.g. ``icenb.plan-log``).
    read_options: Mapping[str, str] = field(default_factory=dict)
    #: Resolving for the probe: reads are numbered and plan nothing.
    probe: bool = False
    #: Filters baked into the reads, by read number (from a probe).
    baked: Mapping[int, Expression] = field(default_factory=dict)
    _tables: dict[tuple[str, ...], Table | None] = field(default_factory=dict)
    _views: dict[tuple[str, ...], Any] = field(default_factory=dict)
    _metadata: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    _expanding: list[tuple[str, ...]] = field(default_factory=list)
    _reads: int = 0
    #: The schema each numbered read resolves names with (its scan's table schema).
    schemas: dict[int, Schema] = field(default_factory=dict)

    def restart(self, *, probe: bool = False,
                baked: Mapping[int, Expression] | None = None) -> None:
        """Resolve the query again (same loaded tables and views, reads numbered from 0)."""
        self.probe, self.baked, self._reads = probe, dict(baked or {}), 0

    def _table(self, identifier: tuple[str, ...]) -> Table | None:
        if identifier not in self._tables:
            if len(identifier) < 2:
                self._tables[identifier] = None
            else:
                try:
                    self._tables[identifier] = self.load_table(identifier)
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
                              file=self.location, field="sql",
                              value=_name(identifier))
        return self._of_table(base, identifier, time_travel)

    # ------------------------------------------------------------------ views

    def _view(self, identifier: tuple[str, ...]) -> Any:
        if len(identifier) < 2 or self.load_view is None:
            return None
        if identifier not in self._views:
            try:
                self._views[identifier] = self.load_view(identifier)
            except NotFound:
                self._views[identifier] = None
        return self._views[identifier]

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
                         catalog_names=self.catalog_names, spark=self.spark,
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
        from icenb.spark.datasource import PROBE, READ_NUMBER

        number = self._reads
        self._reads += 1
        scan = self._scan(table, name, time_travel)
        self.schemas[number] = scan.table_schema
        options = dict(self.read_options)
        if self.probe:
            options.update({PROBE: "true", READ_NUMBER: str(number)})
        elif number in self.baked:
            scan = scan.filter(self.baked[number])
        return read_scan(scan, self.spark, options=options)

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
        if meta == _CHANGES:
            if time_travel is not None:
                raise UnsupportedFeature(f"{table_name}.changes takes no AS OF (Iceberg: AS OF "
                                         "is not supported for changelogs)", field="sql",
                                         value=_travel_text(time_travel))
            key = (id(base), _CHANGES, None)
            if key not in self._metadata:
                self._metadata[key] = base.changes(None).to_spark(self.spark)
            return self._metadata[key]
        raise NoSuchTable(
            f"no table or view named {_name(identifier)} in the warehouse; {table_name} is a "
            f"table, and {last!r} is none of its metadata tables ({', '.join(METADATA_TABLES)})"
            " nor changes, branch_<name>, tag_<name>, snapshot_id_<id>, at_timestamp_<ms>",
            file=self.location, field="sql", value=_name(identifier))

    def _snapshot_id(self, table: Table, name: str, time_travel: TimeTravel) -> int | None:
        return self._scan(table, name, time_travel).snapshot_id

    def _metadata_table(self, table: Table, name: str, meta: str,
                        time_travel: TimeTravel | None) -> Any:
        key = (id(table), meta, time_travel)
        if key in self._metadata:
            return self._metadata[key]
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
        self._metadata[key] = self.spark.createDataFrame(_nullable(rows))
        return self._metadata[key]


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


# --------------------------------------------------------------------------- pruning


def _conjuncts(condition: Any) -> list[Any]:
    out, stack = [], [condition]
    while stack:
        e = stack.pop()
        if e.nodeName() == "And":
            stack.extend((e.left(), e.right()))
        else:
            out.append(e)
    return out


def _is_plain_project(node: Any) -> bool:
    """A projection that only passes columns through (a filter above it filters the rows
    below it, by the same column names)."""
    return node.nodeName() == "Project" and all(
        e.nodeName() == "AttributeReference" for e in scala_list(node.projectList()))


def _read_filters(plan: Any, spark: Any) -> dict[int, list[list[Any] | None]]:
    """Per numbered table read, per scan of it in an optimized plan (subqueries included): the
    conjuncts of the filter Spark placed right above the scan (through projections that only
    pass columns), or None when nothing filters it."""
    from icenb.spark.datasource import READ_NUMBER

    subquery = spark._jvm.java.lang.Class.forName(
        "org.apache.spark.sql.catalyst.expressions.SubqueryExpression")
    found: dict[int, list[list[Any] | None]] = {}
    stack: list[tuple[Any, list[Any]]] = [(plan, [])]  # (node, its ancestors, nearest last)
    while stack:
        node, above = stack.pop()
        name = node.nodeName()
        if name in ("DataSourceV2ScanRelation", "DataSourceV2Relation", "RelationV2"):
            relation = node.relation() if name == "DataSourceV2ScanRelation" else node
            number = relation.options().get(READ_NUMBER)
            if number is not None:
                conjuncts: list[Any] | None = None
                for parent in reversed(above):
                    if parent.nodeName() == "Filter":
                        conjuncts = _conjuncts(parent.condition())
                        break
                    if not _is_plain_project(parent):
                        break
                found.setdefault(int(number), []).append(conjuncts)
        for child in scala_list(node.children()):
            stack.append((child, [*above, node]))
        expressions = scala_list(node.expressions())
        while expressions:
            expr = expressions.pop()
            if subquery.isInstance(expr):
                stack.append((expr.plan(), []))
            expressions.extend(scala_list(expr.children()))
    return found


#: ``org.apache.spark.sql.sources`` leaf filters and their PySpark data source classes.
_LEAVES = {name: getattr(sds, name) for name in (
    "EqualTo", "EqualNullSafe", "GreaterThan", "GreaterThanOrEqual", "LessThan",
    "LessThanOrEqual", "In", "IsNull", "IsNotNull", "StringStartsWith", "StringEndsWith",
    "StringContains")}


class _NoFilter(Exception):
    """A Spark filter value or shape with no Python form here."""


def _column_path(attribute: str) -> tuple[str, ...]:
    """A Spark filter's column (``a.b``; parts with dots or backticks quoted in backticks)."""
    parts, current, quoted, i = [], "", False, 0
    while i < len(attribute):
        c = attribute[i]
        if c == "`":
            if quoted and attribute[i + 1:i + 2] == "`":
                current += "`"
                i += 1
            else:
                quoted = not quoted
        elif c == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += c
        i += 1
    parts.append(current)
    return tuple(parts)


def _python_value(value: Any) -> Any:
    """A Spark filter's literal (as py4j hands it over) as the Python value PySpark's data
    source filters carry."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, Decimal)):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    get_class = getattr(value, "getClass", None)
    if get_class is None:
        raise _NoFilter
    kind = str(get_class().getName())
    out = _java_time_value(kind, value)
    if isinstance(out, dt.date) and before_gregorian(out):
        raise _NoFilter  # the hybrid calendar's value, not Iceberg's (see pushdown)
    return out


def _java_time_value(kind: str, value: Any) -> Any:
    if kind in ("java.sql.Date", "java.time.LocalDate"):
        return dt.date.fromisoformat(str(value.toString()))
    if kind == "java.sql.Timestamp":  # an instant (Spark TIMESTAMP), to the microsecond
        micros = (int(value.getTime()) // 1000) * 1_000_000 + int(value.getNanos()) // 1000
        return _EPOCH + dt.timedelta(microseconds=micros)
    if kind == "java.time.Instant":
        micros = int(value.getEpochSecond()) * 1_000_000 + int(value.getNano()) // 1000
        return _EPOCH + dt.timedelta(microseconds=micros)
    if kind == "java.time.LocalDateTime":  # Spark TIMESTAMP_NTZ
        return dt.datetime.fromisoformat(str(value.toString()))
    raise _NoFilter


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _filter_tree(v1: Any) -> FilterTree:
    """A ``org.apache.spark.sql.sources.Filter`` (py4j) as a :data:`FilterTree`."""
    kind = str(v1.getClass().getSimpleName())
    if kind in ("And", "Or"):
        return (kind.lower(), _filter_tree(v1.left()), _filter_tree(v1.right()))
    if kind == "Not":
        return ("not", _filter_tree(v1.child()))
    cls = _LEAVES.get(kind)
    if cls is None:
        raise _NoFilter
    path = _column_path(str(v1.attribute()))
    if kind in ("IsNull", "IsNotNull"):
        return cls(path)
    if kind == "In":
        return cls(path, tuple(_python_value(v) for v in list(v1.values())))
    return cls(path, _python_value(v1.value()))


def _expression(conjunct: Any, schema: Schema, spark: Any) -> Expression | None:
    """What of one Spark conjunct icenb can filter by (looser than it or equal), or None."""
    strategy = getattr(getattr(spark._jvm.org.apache.spark.sql.execution.datasources,
                               "DataSourceStrategy$"), "MODULE$")
    translated = strategy.translateFilter(conjunct, True)
    if not translated.isDefined():
        return None
    try:
        tree = _filter_tree(translated.get())
    except _NoFilter:
        return None
    return superset_expression(tree, schema)


def _baked_filters(df: Any, resolver: CatalogResolver, spark: Any) -> dict[int, Expression]:
    """Per table read of a probe DataFrame: the OR over its scans of the AND of what icenb can
    express of each scan's filter; a read with a scan nothing filters gets none."""
    plan = df._jdf.queryExecution().optimizedPlan()
    baked: dict[int, Expression] = {}
    for number, scans in _read_filters(plan, spark).items():
        schema = resolver.schemas.get(number)
        if schema is None or any(s is None for s in scans):
            continue
        ors: list[Expression] = []
        for conjuncts in scans:
            assert conjuncts is not None
            parts = [e for e in (_expression(c, schema, spark) for c in conjuncts)
                     if e is not None]
            if not parts:
                break
            ors.append(and_(*parts))
        else:
            combined = or_(*ors)
            if not isinstance(combined, AlwaysTrue):
                baked[number] = combined
    return baked


def _probe(query: str, resolver: CatalogResolver, namespace: Sequence[str],
           spark: Any) -> dict[int, Expression]:
    """The filter each table read of ``query`` can carry: the query is resolved with reads
    that plan nothing, Spark's optimizer places its filters, and each read gets what icenb can
    express of the filters right above its scans."""
    resolver.restart(probe=True)
    df = run_sql(query, resolver, default_catalog=None, default_namespace=tuple(namespace),
                 catalog_names=resolver.catalog_names, spark=spark)
    try:
        return _baked_filters(df, resolver, spark)
    except Exception as e:
        if not is_spark_error(e):
            raise
        return {}  # no pruning; the query itself reports what is wrong when it runs


def warehouse_sql(query: str, warehouse: Warehouse, *,
                  namespace: Sequence[str] = DEFAULT_NAMESPACE, spark: Any = None,
                  prune: bool = True, read_options: Mapping[str, str] | None = None) -> Any:
    """A Spark DataFrame of ``query`` with its names resolved against ``warehouse`` (see the
    module docstring); analyzed here, run when the DataFrame is.

    ``prune`` (default): learn in a probe which filters Spark pushes to each table read and
    give the reads those filters as their own (they prune manifests and files; Spark still
    applies every filter), so the DataFrame stays right however often it is run.
    ``read_options``: more data source options of every table read.
    """
    spark = get_spark() if spark is None else register(spark)
    resolver = CatalogResolver(warehouse.table, spark, load_view=warehouse.view,
                               catalog_names=(warehouse.catalog.name,),
                               location=warehouse.location, read_options=dict(read_options or {}))
    baked = _probe(query, resolver, namespace, spark) if prune else {}
    resolver.restart(baked=baked)
    return run_sql(query, resolver, default_catalog=None, default_namespace=tuple(namespace),
                   catalog_names=(warehouse.catalog.name,), spark=spark)
