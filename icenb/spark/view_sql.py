"""Run Spark SQL with its table references resolved against icenb tables: a view's SQL
(``View.to_spark``, schemas of new versions) and any query over a warehouse (``Warehouse.sql``,
:mod:`icenb.spark.warehouse_sql`, which also defines how a name becomes a table, a view, a
metadata table or a table state).

A view version stores its SQL with a ``default-catalog`` and ``default-namespace`` used to
resolve the identifiers in it (view spec: "Versions"). Spark cannot resolve icenb tables by
name (icenb registers no Spark catalog), so the SQL is parsed with Spark's own parser (through
py4j, ``sessionState.sqlParser.parseQuery``: the exact grammar Spark runs, and queries only -
a command such as ``DROP TABLE`` is refused, never run), its plan is walked for table
references (``UnresolvedRelation``, also inside CTEs and subquery expressions, and
``RelationTimeTravel`` for ``VERSION | TIMESTAMP AS OF``), each reference is resolved to an
icenb read and registered as a uniquely named temporary view, and the SQL text is rewritten
with those names in place of the references (same spans the parser reports). Spark then
analyzes the rewritten SQL; the temporary views are dropped right after analysis (the analyzed
plan holds the reads, as PySpark's own ``spark.sql(query, df=...)`` relies on).

Name resolution, as Spark with Iceberg's view support, except that the session's temporary
views stay visible (Iceberg's Spark integration hides them inside a view; icenb also runs
ad-hoc SQL with this, where a user's temp views must work):

- a CTE name in scope (``WITH RECURSIVE``: also inside its own definition), a temporary view
  of the session (one part) or a global temporary view (``global_temp.v``) is left to Spark;
- ``t`` is ``<default-namespace>.t``; ``a.t`` is namespace ``a``; ``c.a.t`` where ``c`` is the
  default catalog (or one of ``catalog_names``) drops ``c``; any other name is a namespace path.

Time travel as Iceberg's ``SparkCatalog``: ``VERSION AS OF`` a number is a snapshot id, any
other text a branch or tag; ``TIMESTAMP AS OF`` (and ``FOR SYSTEM_VERSION | SYSTEM_TIME AS
OF``) is evaluated by Spark as a timestamp in the session time zone, in epoch milliseconds.
A reference without an alias keeps its last name part as alias, so ``t.col`` works; column
references qualified by more parts (``db.t.col``) are rewritten to ``t.col``.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spark.session import get_spark, register
from icenb.spark.spark_types import schema_from_spark
from icenb.spec.schema import Schema
from icenb.table.scan import Scan
from icenb.table.table import Table

__all__ = ["Resolve", "TimeTravel", "is_spark_error", "run_sql", "run_view_sql",
           "scala_list", "table_resolver", "view_schema"]


@dataclass(frozen=True)
class TimeTravel:
    """The table state an ``AS OF`` clause asks for: exactly one field is set."""

    snapshot_id: int | None = None
    ref: str | None = None
    timestamp_ms: int | None = None

    def scan(self, table: Table) -> Scan:
        """The scan of ``table`` at this state (schema rules of :meth:`Table.scan`/``at``)."""
        if self.snapshot_id is not None:
            return table.scan(snapshot_id=self.snapshot_id)
        if self.ref is not None:
            return table.scan(ref=self.ref)
        if self.timestamp_ms is not None:
            return table.at(timestamp_ms=self.timestamp_ms)
        raise ValidationError("a time travel needs a snapshot id, ref or timestamp",
                              field="time_travel", value=self)


#: ``resolve(identifier, time_travel)``: a Spark DataFrame of an icenb table's rows.
Resolve = Callable[[tuple[str, ...], TimeTravel | None], Any]


def table_resolver(load: Callable[[tuple[str, ...]], Table], spark: Any = None) -> Resolve:
    """A :data:`Resolve` from a table loader (e.g. ``Warehouse.table``): the table's current
    rows, or the state a time travel asks for, read through the ``icenb`` data source; and,
    as in ``Warehouse.sql``, a table's metadata tables (``db.t.snapshots``) and states
    (``db.t.branch_audit``) by Iceberg's Spark names (:mod:`icenb.spark.warehouse_sql`)."""
    from icenb.spark.warehouse_sql import CatalogResolver  # it imports this module

    resolver = CatalogResolver(load, get_spark() if spark is None else register(spark))
    return resolver


# --------------------------------------------------------------------------- plan walking


@safe_repr
@dataclass
class _Reference:
    """A table reference in the SQL text: its name, ``AS OF`` clause and span."""

    parts: tuple[str, ...]
    start: int
    stop: int  # inclusive, as Spark's Origin (code point indexes, as ANTLR counts)
    time_travel: TimeTravel | None
    aliased: bool
    table_statement: bool
    identifier: tuple[str, ...] = ()


@safe_repr
@dataclass
class _Qualified:
    """A column reference or star with a qualifier of two or more parts."""

    parts: tuple[str, ...]
    start: int
    stop: int
    star: bool


@safe_repr
@dataclass
class _Found:
    references: list[_Reference] = field(default_factory=list)
    qualified: list[_Qualified] = field(default_factory=list)


def scala_list(scala_seq: Any) -> list[Any]:
    """The items of a Scala collection reached through py4j."""
    it = scala_seq.iterator()
    out = []
    while it.hasNext():
        out.append(it.next())
    return out


def _span(node: Any) -> tuple[int, int] | None:
    origin = node.origin()
    start, stop = origin.startIndex(), origin.stopIndex()
    if not start.isDefined() or not stop.isDefined():
        return None
    return int(start.get()), int(stop.get())


class _Walker:
    def __init__(self, sql: str, spark: Any, timestamp_ms: Callable[[str], int]) -> None:
        self.sql = sql
        self.session = session = spark._jsparkSession
        self.timestamp_ms = timestamp_ms
        self.case_sensitive = session.conf().get("spark.sql.caseSensitive") == "true"
        self.global_temp = session.conf().get("spark.sql.globalTempDatabase")
        self.found = _Found()
        self.subquery_class = spark._jvm.java.lang.Class.forName(
            "org.apache.spark.sql.catalyst.expressions.SubqueryExpression")

    def key(self, name: str) -> str:
        return name if self.case_sensitive else name.lower()

    def text(self, start: int, stop: int) -> str:
        return self.sql[start:stop + 1]

    def is_temp_view(self, parts: Sequence[str]) -> bool:
        catalog = self.session.sessionState().catalog()
        if len(parts) == 1:
            return bool(catalog.getTempView(parts[0]).isDefined())
        return len(parts) == 2 and self.key(parts[0]) == self.key(self.global_temp)

    def plan(self, node: Any, ctes: frozenset[str], parent: Any = None) -> None:
        name = node.nodeName()
        if name == "UnresolvedRelation":
            self.relation(node, node, None, ctes, parent)
            return
        if name == "RelationTimeTravel":
            relation = node.relation()
            if relation.nodeName() == "UnresolvedRelation":
                self.relation(relation, node, self.time_travel(node), ctes, parent)
                return
            self.plan(relation, ctes, node)
            return
        self.expressions(node, ctes)
        if name == "UnresolvedWith":
            names = [(str(p._1()), p._2()) for p in scala_list(node.cteRelations())]
            recursive = bool(node.allowRecursion())  # WITH RECURSIVE (Spark 4.1)
            visible = set(ctes)
            for cte, definition in names:
                scope = visible | {self.key(cte)} if recursive else set(visible)
                self.plan(definition, frozenset(scope), node)
                visible.add(self.key(cte))
            self.plan(node.child(), frozenset(visible), node)
            return
        for child in scala_list(node.children()):
            self.plan(child, ctes, node)

    def expressions(self, node: Any, ctes: frozenset[str]) -> None:
        for expression in scala_list(node.expressions()):
            self.expression(expression, ctes)

    def expression(self, expr: Any, ctes: frozenset[str]) -> None:
        name = expr.nodeName()
        if name == "UnresolvedAttribute":
            parts = tuple(str(p) for p in scala_list(expr.nameParts()))
            span = _span(expr)
            if len(parts) >= 3 and span is not None:
                self.found.qualified.append(_Qualified(parts, *span, star=False))
        elif name == "UnresolvedStar":
            target = expr.target()
            span = _span(expr)
            if target.isDefined() and span is not None:
                parts = tuple(str(p) for p in scala_list(target.get()))
                if len(parts) >= 2:
                    self.found.qualified.append(_Qualified(parts, *span, star=True))
        if self.subquery_class.isInstance(expr):
            self.plan(expr.plan(), ctes)
        for child in scala_list(expr.children()):
            self.expression(child, ctes)

    def relation(self, relation: Any, node: Any, time_travel: TimeTravel | None,
                 ctes: frozenset[str], parent: Any) -> None:
        parts = tuple(str(p) for p in scala_list(relation.multipartIdentifier()))
        if time_travel is None and (
                (len(parts) == 1 and self.key(parts[0]) in ctes) or self.is_temp_view(parts)):
            return
        first, last = _span(relation), _span(node)
        if first is None or last is None:
            raise UnsupportedFeature("Spark's parser gave no position for a table reference",
                                     field="sql", value=".".join(parts))
        start, stop = first[0], last[1]
        aliased = False
        if parent is not None and parent.nodeName() in ("SubqueryAlias",
                                                        "UnresolvedSubqueryColumnAliases"):
            parent_span = _span(parent)
            aliased = parent_span is not None and parent_span[0] == start
        table_statement = re.search(r"(?i)\btable\s*$", self.sql[:start]) is not None
        self.found.references.append(_Reference(parts, start, stop, time_travel, aliased,
                                                table_statement))

    def time_travel(self, node: Any) -> TimeTravel:
        version = node.version()
        if version.isDefined():
            text = str(version.get())
            if re.fullmatch(r"[+-]?\d+", text.strip()):
                return TimeTravel(snapshot_id=int(text))
            return TimeTravel(ref=text)
        timestamp = node.timestamp()
        if not timestamp.isDefined():
            raise ValidationError("an AS OF clause without a version or timestamp", field="sql")
        span = _span(timestamp.get())
        expr = self.text(*span) if span is not None else str(timestamp.get().sql())
        return TimeTravel(timestamp_ms=self.timestamp_ms(expr))


# --------------------------------------------------------------------------- running


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _identifier(parts: tuple[str, ...], default_namespace: tuple[str, ...],
                catalogs: frozenset[str]) -> tuple[str, ...]:
    """The icenb identifier of a table reference (view spec: "default-catalog",
    "default-namespace"; Spark's catalog-and-identifier rule)."""
    if len(parts) >= 3 and parts[0] in catalogs:
        parts = parts[1:]
    if len(parts) == 1:
        return (*default_namespace, parts[0])
    return parts


@contextmanager
def _quiet_spark_errors() -> Iterator[None]:
    """Mute PySpark's logging of SQL errors that icenb re-raises as its own."""
    loggers = [logging.getLogger(n) for n in ("SQLQueryContextLogger",
                                              "DataFrameQueryContextLogger")]
    saved = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, was in zip(loggers, saved, strict=True):
            lg.disabled = was


def _spark_message(e: BaseException) -> str:
    get = getattr(e, "getMessage", None)
    text = get() if callable(get) else None
    return str(text if text else e).strip()


def is_spark_error(e: BaseException) -> bool:
    """Whether ``e`` is an error Spark raised (in Python or through py4j)."""
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
    from pyspark.errors import PySparkException

    return isinstance(e, (PySparkException, Py4JJavaError))


def _java_session(spark: Any) -> Any:
    session = getattr(spark, "_jsparkSession", None)
    if session is None:
        raise UnsupportedFeature("running a view's SQL needs a classic SparkSession (py4j); "
                                 "Spark Connect sessions are not supported", field="spark",
                                 value=type(spark).__name__)
    return session


@safe_repr
@dataclass
class _Prepared:
    sql: str
    views: dict[str, str]  # temp view name -> the original text it replaces


def _prepare(sql: str, resolve: Resolve, spark: Any, default_catalog: str | None,
             default_namespace: tuple[str, ...], catalog_names: Collection[str],
             what: str = "a view's SQL") -> _Prepared:
    """Parse ``sql``, resolve its table references and register them as temp views."""
    if not isinstance(sql, str) or not sql.strip():
        raise ValidationError(f"{what} must be a non-empty string", field="sql", value=sql)
    session = _java_session(spark)

    def timestamp_ms(expr: str) -> int:
        try:
            with _quiet_spark_errors():
                row = spark.sql(f"SELECT unix_micros(CAST(({expr}) AS TIMESTAMP))").head()
        except Exception as e:
            if not is_spark_error(e):
                raise
            raise ValidationError(f"not a time travel timestamp: {_spark_message(e)}",
                                  field="sql", value=expr) from None
        if row is None or row[0] is None:
            raise ValidationError("the time travel timestamp is null", field="sql", value=expr)
        micros = int(row[0])
        return micros // 1000 if micros >= 0 else -(-micros // 1000)  # Java's toMillis

    try:
        with _quiet_spark_errors():
            plan = session.sessionState().sqlParser().parseQuery(sql)
    except Exception as e:
        if not is_spark_error(e):
            raise
        raise ValidationError(f"Spark cannot parse the SQL: {_spark_message(e)}", field="sql",
                              value=sql) from None
    walker = _Walker(sql, spark, timestamp_ms)
    walker.plan(plan, frozenset())
    catalogs = frozenset(n for n in (default_catalog, *catalog_names) if n)
    namespace = tuple(default_namespace)
    refs = walker.found.references
    names: dict[tuple[tuple[str, ...], TimeTravel | None], str] = {}
    views: dict[str, str] = {}
    tag = uuid.uuid4().hex[:12]
    try:
        for ref in refs:
            ref.identifier = _identifier(ref.parts, namespace, catalogs)
            key = (ref.identifier, ref.time_travel)
            if key not in names:
                df = resolve(ref.identifier, ref.time_travel)
                view = f"__icenb_{tag}_{len(names)}"
                df.createOrReplaceTempView(view)
                names[key] = view
                views[view] = ".".join(ref.identifier)
    except BaseException:
        _drop(spark, views)
        raise
    edits: list[tuple[int, int, str]] = []
    for ref in refs:
        view = names[(ref.identifier, ref.time_travel)]
        text = view if ref.aliased or ref.table_statement else f"{view} AS {_quote(ref.parts[-1])}"
        edits.append((ref.start, ref.stop, text))
    edits.extend(_qualifier_edits(walker.found.qualified, refs, catalogs))
    return _Prepared(_apply(sql, edits), views)


def _qualifier_edits(qualified: list[_Qualified], refs: list[_Reference],
                     catalogs: frozenset[str]) -> list[tuple[int, int, str]]:
    """Rewrite ``db.t.col`` / ``cat.db.t.*`` to ``t.col`` / ``t.*`` for references that
    lost their multi-part qualifier (unaliased ones, now aliased by their last part)."""
    full: list[tuple[str, ...]] = []
    for ref in refs:
        if ref.aliased or ref.table_statement:
            continue
        names = [ref.parts, ref.identifier]
        names.extend((c, *ref.identifier) for c in catalogs)
        for name in names:
            for k in range(2, len(name) + 1):
                full.append(tuple(p.lower() for p in name[-k:]))
    edits = []
    for q in qualified:
        lowered = tuple(p.lower() for p in q.parts)
        for k in range(len(lowered) - (0 if q.star else 1), 1, -1):
            if lowered[:k] in full:
                rest = q.parts[k:]
                text = ".".join(_quote(p) for p in (q.parts[k - 1], *rest))
                edits.append((q.start, q.stop, text + (".*" if q.star else "")))
                break
    return edits


def _apply(sql: str, edits: list[tuple[int, int, str]]) -> str:
    """The SQL with each span (inclusive code point indexes, as Spark reports) replaced;
    a span met twice (a node shared in the plan) is replaced once."""
    unique = {(start, stop): text for start, stop, text in edits}
    for (start, stop), text in sorted(unique.items(), reverse=True):
        sql = sql[:start] + text + sql[stop + 1:]
    return sql


def _drop(spark: Any, views: dict[str, str]) -> None:
    for view in views:
        spark.catalog.dropTempView(view)


def _analyze(sql: str, resolve: Resolve, spark: Any, default_catalog: str | None,
             default_namespace: Sequence[str], catalog_names: Collection[str],
             what: str = "a view's SQL") -> Any:
    spark = get_spark() if spark is None else register(spark)
    prepared = _prepare(sql, resolve, spark, default_catalog, tuple(default_namespace),
                        catalog_names, what)
    try:
        with _quiet_spark_errors():
            return spark.sql(prepared.sql)
    except Exception as e:
        if not is_spark_error(e):
            raise
        message = _spark_message(e)
        for view, original in prepared.views.items():
            message = message.replace(view, original)
        where = "" if what == "a view's SQL" else f" ({what})"
        raise ValidationError(f"Spark cannot run the SQL{where}: {message}", field="sql",
                              value=sql) from None
    finally:
        _drop(spark, prepared.views)


def run_sql(sql: str, resolve: Resolve, *, default_catalog: str | None,
            default_namespace: Sequence[str], catalog_names: Collection[str] = (),
            spark: Any = None, what: str = "the SQL") -> Any:
    """A Spark DataFrame of a Spark SQL query, its table references resolved with
    ``resolve`` (see the module docstring; ``what`` names the query in errors): the engine
    of :func:`run_view_sql` and of ``Warehouse.sql``."""
    return _analyze(sql, resolve, spark, default_catalog, default_namespace, catalog_names,
                    what)


def run_view_sql(sql: str, resolve: Resolve, *, default_catalog: str | None,
                 default_namespace: Sequence[str], catalog_names: Collection[str] = (),
                 spark: Any = None) -> Any:
    """A Spark DataFrame of a view's Spark-dialect SQL, its table references resolved with
    ``resolve`` (see the module docstring); analyzed here, run when the DataFrame is.

    ``catalog_names``: other catalog names that mean the tables ``resolve`` knows (e.g. the
    warehouse's catalog name). Errors: SQL Spark cannot parse or analyze (or a command) ->
    ``ValidationError`` (field ``sql``); a missing table -> what ``resolve`` raises
    (``NoSuchTable``).
    """
    return _analyze(sql, resolve, spark, default_catalog, default_namespace, catalog_names)


def view_schema(sql: str, resolve: Resolve, *, default_catalog: str | None,
                default_namespace: Sequence[str], catalog_names: Collection[str] = (),
                spark: Any = None) -> Schema:
    """The Iceberg schema of a view's result, from Spark's analysis (no rows are read): field
    ids fresh from 1, Spark's nullability as ``required`` (view spec: "schema-id")."""
    df = _analyze(sql, resolve, spark, default_catalog, default_namespace, catalog_names)
    return schema_from_spark(df.schema)

