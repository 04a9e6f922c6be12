"""The embedded warehouse: a local directory with a SQLite catalog, where tables are created,
listed, loaded and dropped (DESIGN: ``icenb.warehouse(path)``).

Schemas for ``create_table`` come as an icenb :class:`~icenb.spec.schema.Schema`, a pyarrow
schema, a Spark ``StructType`` or a column list in a small DDL
(``"id long not null, ts timestamptz, name string"``, :mod:`icenb.spec.schema_ddl`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from icenb.catalog import (
    FilesystemCatalog,
    Identifier,
    NamespaceLike,
    SqlCatalog,
    open_warehouse_catalog,
    to_identifier,
)
from icenb.errors import AlreadyExists, ValidationError
from icenb.reprs import safe_repr
from icenb.spec.partition_spec import UnboundPartitionField, build_partition_spec
from icenb.spec.properties import check_properties
from icenb.spec.schema import Schema
from icenb.spec.schema_ddl import parse_schema
from icenb.spec.sort_order import UnboundSortField, build_sort_order
from icenb.spec.table_updates import new_table_metadata
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
    check_new_type,
)
from icenb.spec.view_updates import new_view_metadata
from icenb.table.engine import engine
from icenb.table.table import Table
from icenb.table.view import (
    SPARK_DIALECT,
    View,
    derive_schema,
    engine_version,
    load_view,
    now_ms,
    view_representations,
)

__all__ = ["Warehouse", "current_warehouse", "parse_schema", "schema_from_arrow", "to_schema",
           "warehouse"]


# --------------------------------------------------------------------------- Arrow schemas


def _arrow_type(t: pa.DataType, path: str, next_id: Iterator[int]) -> IcebergType:
    """The Iceberg type of an Arrow type (nanosecond timestamps become microsecond ones, as
    Spark and PyIceberg's default; unsigned ints widen when they fit)."""
    if pa.types.is_dictionary(t):
        return _arrow_type(t.value_type, path, next_id)
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or \
            pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return IntegerType()
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return LongType()
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_float64(t):
        return DoubleType()
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return StringType()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return BinaryType()
    if isinstance(t, pa.UuidType):
        return UUIDType()
    if pa.types.is_fixed_size_binary(t):
        return FixedType(t.byte_width)
    if pa.types.is_date(t):
        return DateType()
    if pa.types.is_time(t):
        return TimeType()
    if pa.types.is_timestamp(t):
        return TimestampType() if t.tz is None else TimestamptzType()
    if pa.types.is_struct(t):
        return StructType(*_arrow_fields(list(t), path, next_id))
    if pa.types.is_map(t):
        key_id, value_id = next(next_id), next(next_id)
        return MapType(key_id, _arrow_type(t.key_type, f"{path}.key", next_id), value_id,
                       _arrow_type(t.item_type, f"{path}.value", next_id),
                       not t.item_field.nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or pa.types.is_list_view(t):
        element_id = next(next_id)
        return ListType(element_id, _arrow_type(t.value_type, f"{path}.element", next_id),
                        not t.value_field.nullable)
    raise ValidationError(f"no Iceberg type for Arrow type {t}", field=path, value=str(t))


def _arrow_fields(fields: Sequence[pa.Field], prefix: str | None,
                  next_id: Iterator[int]) -> list[NestedField]:
    ids = [next(next_id) for _ in fields]
    out = []
    for fid, f in zip(ids, fields, strict=True):
        path = f.name if prefix is None else f"{prefix}.{f.name}"
        out.append(NestedField(fid, f.name, _arrow_type(f.type, path, next_id),
                               not f.nullable))
    return out


def schema_from_arrow(schema: pa.Schema) -> Schema:
    """An Iceberg schema from an Arrow schema (provisional ids; non-nullable = required)."""
    counter = iter(range(1, 1 << 30))
    return Schema(*_arrow_fields(list(schema), None, counter))


def _is_spark_schema(schema: Any) -> bool:
    return (type(schema).__module__.startswith("pyspark.sql")
            and type(schema).__name__ == "StructType")


def to_schema(schema: Schema | pa.Schema | str | Any) -> Schema:
    """A schema from what ``create_table`` accepts: Schema, pyarrow schema, DDL string or a
    Spark ``StructType`` (e.g. ``df.schema``)."""
    if isinstance(schema, Schema):
        return schema
    if _is_spark_schema(schema):
        return engine().schema_from_engine(schema)
    if isinstance(schema, pa.Schema):
        return schema_from_arrow(schema)
    if isinstance(schema, str):
        return parse_schema(schema)
    raise ValidationError("a schema is an icenb Schema, a pyarrow schema, a DDL string or a "
                          "Spark StructType",
                          field="schema", value=type(schema).__name__)


# --------------------------------------------------------------------------- warehouse


def _terms(items: str | Sequence[Any] | None, label: str) -> list[Any]:
    if items is None:
        return []
    if isinstance(items, str):
        return [items]
    out = list(items)
    for item in out:
        if not isinstance(item, (str, UnboundPartitionField, UnboundSortField)):
            raise ValidationError(f"{label} items are strings", field=label, value=item)
    return out


@safe_repr
class Warehouse:
    """A local warehouse directory and its catalog: by default SQLite (``<path>/catalog.db``,
    the schema of Iceberg's JDBC catalog, so PyIceberg's ``SqlCatalog`` opens it too); with
    ``catalog="filesystem"`` the Hadoop layout (``vN.metadata.json`` and
    ``version-hint.text`` under each table, as Iceberg Java's ``HadoopCatalog``)."""

    def __init__(self, path: str | os.PathLike[str], *, name: str = "default",
                 catalog: str = "sql") -> None:
        if catalog == "sql":
            self._catalog: SqlCatalog | FilesystemCatalog = open_warehouse_catalog(path,
                                                                                   name=name)
        elif catalog == "filesystem":
            text = os.fspath(path)
            if not isinstance(text, str) or not text or "://" in text:
                raise ValidationError("an embedded warehouse is a local directory path",
                                      field="path", value=text)
            root = os.path.abspath(text)
            os.makedirs(root, exist_ok=True)
            self._catalog = FilesystemCatalog(root, name=name)
        else:
            raise ValidationError('catalog must be "sql" or "filesystem"', field="catalog",
                                  value=catalog)
        global _CURRENT
        _CURRENT = self  # the notebook's warehouse for %%sql: the one opened last

    @property
    def catalog(self) -> SqlCatalog | FilesystemCatalog:
        """The warehouse's catalog."""
        return self._catalog

    @property
    def location(self) -> str:
        """The warehouse directory (absolute)."""
        warehouse = self._catalog.warehouse
        assert warehouse is not None
        return warehouse

    def _table(self, ident: Identifier) -> Table:
        loaded = self._catalog.load_table(ident)
        return Table(loaded.metadata, loaded.io, opened_from=loaded.metadata_location,
                     catalog=self._catalog, identifier=loaded.identifier)

    def create_namespace(self, namespace: NamespaceLike,
                         properties: Mapping[str, str] | None = None) -> None:
        """Create a namespace (``AlreadyExists`` when it exists)."""
        self._catalog.create_namespace(namespace, properties)

    def namespaces(self, parent: NamespaceLike = ()) -> list[tuple[str, ...]]:
        """The namespaces directly under ``parent``."""
        return self._catalog.list_namespaces(parent)

    def _ensure_namespace(self, namespace: tuple[str, ...]) -> None:
        for depth in range(1, len(namespace) + 1):
            if not self._catalog.namespace_exists(namespace[:depth]):
                with contextlib.suppress(AlreadyExists):  # another writer made it meanwhile
                    self._catalog.create_namespace(namespace[:depth])

    def create_table(self, name: NamespaceLike, schema: Schema | pa.Schema | str | Any, *,
                     partition_by: str | Sequence[str] | None = None,
                     sort_by: str | Sequence[str] | None = None, format_version: int = 2,
                     properties: Mapping[str, str] | None = None,
                     location: str | None = None) -> Table:
        """Create an empty table (``AlreadyExists`` when the name is taken). Its namespace is
        created when missing; the location defaults to ``<warehouse>/<namespace>/<name>``.

        ``partition_by``: terms such as ``"day(ts)"``, ``"bucket(16, id)"``,
        ``"truncate(4, s)"``, ``"id"`` (Java's default field names); ``sort_by``: ``"id"``,
        ``"ts desc nulls last"``. Everything is validated before anything is written.
        ``format_version=4`` is EXPERIMENTAL: the unadopted single-file-commits proposal
        (docs/v4-layout.md), readable by icenb only.
        """
        ident = to_identifier(name)
        if len(ident) < 2:
            raise ValidationError("a table name needs a namespace (\"db.table\")",
                                  field="name", value=name)
        parsed = to_schema(schema)
        spec = build_partition_spec(parsed, _terms(partition_by, "partition_by"))
        order = build_sort_order(parsed, _terms(sort_by, "sort_by"))
        check_properties(properties or {})  # refused at the door (issue 17)
        for f in parsed.fields:
            check_new_type(f.field_type, field=f.name)
        self._ensure_namespace(ident[:-1])
        table_location = location or self._catalog.default_table_location(ident)
        metadata = new_table_metadata(parsed, spec, order, table_location, properties or {},
                                      format_version)
        loaded = self._catalog.create_table(ident, metadata)
        return Table(loaded.metadata, loaded.io, opened_from=loaded.metadata_location,
                     catalog=self._catalog, identifier=loaded.identifier)

    def table(self, name: NamespaceLike) -> Table:
        """The table ``name`` (``NoSuchTable`` when there is none), writable."""
        return self._table(to_identifier(name))

    def tables(self, namespace: NamespaceLike | None = None) -> list[str]:
        """Names (``"db.events"``) of the tables in a namespace, or of every table."""
        found = (self._catalog.all_tables() if namespace is None
                 else self._catalog.list_tables(namespace))
        return [".".join(ident) for ident in found]

    def drop_table(self, name: NamespaceLike, purge: bool = False) -> None:
        """Remove a table from the catalog; ``purge`` also deletes its files."""
        self._catalog.drop_table(name, purge=purge)

    # ------------------------------------------------------------------ views

    def create_view(self, name: NamespaceLike, sql: str | Mapping[str, str], *,
                    dialect: str = SPARK_DIALECT, schema: Schema | pa.Schema | str | Any = None,
                    default_namespace: Sequence[str] | None = None,
                    default_catalog: str | None = None,
                    properties: Mapping[str, str] | None = None,
                    comment: str | None = None, spark: Any = None) -> View:
        """Create a view (``AlreadyExists`` when a table or view has the name): ``sql`` in
        ``dialect``, or ``{dialect: sql}`` for several representations.

        Without ``schema`` the Spark SQL is analyzed on Spark (no rows are read) against this
        warehouse's tables to derive it. ``default_namespace`` (how the SQL's one-part table
        names resolve) defaults to the view's namespace. ``comment`` is stored as the view
        property ``comment``, as Spark does. Everything is checked before anything is written.
        """
        ident = to_identifier(name)
        if len(ident) < 2:
            raise ValidationError("a view name needs a namespace (\"db.view\")",
                                  field="name", value=name)
        reps = view_representations(sql, dialect)
        namespace = ident[:-1] if default_namespace is None else tuple(default_namespace)
        if schema is None:
            parsed = derive_schema(reps, self._table, namespace,
                                   default_catalog, self._catalog, spark)
        else:
            parsed = to_schema(schema)
        props = dict(properties or {})
        if comment is not None:
            props["comment"] = comment
        self._ensure_namespace(ident[:-1])
        metadata = new_view_metadata(self._catalog.default_view_location(ident), parsed, reps,
                                     default_namespace=namespace,
                                     default_catalog=default_catalog, properties=props,
                                     timestamp_ms=now_ms(), engine_name="icenb",
                                     engine_version=engine_version())
        loaded = self._catalog.create_view(ident, metadata)
        return View._from_loaded(loaded, self._catalog)

    def view(self, name: NamespaceLike) -> View:
        """The view ``name`` (``NoSuchView`` when there is none), writable."""
        return load_view(self._catalog, name)

    def views(self, namespace: NamespaceLike | None = None) -> list[str]:
        """Names (``"db.recent"``) of the views in a namespace, or of every view."""
        found = (self._catalog.all_views() if namespace is None
                 else self._catalog.list_views(namespace))
        return [".".join(ident) for ident in found]

    def drop_view(self, name: NamespaceLike) -> None:
        """Remove a view from the catalog (its metadata files are deleted, as Java does)."""
        self._catalog.drop_view(name, purge=True)

    def rename_view(self, name: NamespaceLike, new_name: NamespaceLike) -> View:
        """Give a view another name (``AlreadyExists`` when a table or view has it)."""
        self._catalog.rename_view(name, new_name)
        return self.view(new_name)

    def register_view(self, name: NamespaceLike, metadata_location: str) -> View:
        """Add an existing view to the catalog by its metadata file."""
        return View._from_loaded(self._catalog.register_view(name, metadata_location),
                                 self._catalog)

    # ------------------------------------------------------------------ SQL

    def sql(self, query: str, *, namespace: str | Sequence[str] | None = None,
            spark: Any = None) -> Any:
        """A Spark DataFrame of a Spark SQL query over this warehouse (analyzed now, run when
        the DataFrame is): its tables and views, time travel (``VERSION AS OF`` a snapshot id,
        branch or tag, ``TIMESTAMP AS OF``, ``db.t.branch_audit``, ``db.t.tag_v1``) and the
        metadata tables of ``t.inspect`` by Iceberg's Spark names (``db.t.snapshots``,
        ``db.t.files VERSION AS OF 123``, ...); the session's temporary views work too.

        The query's filters prune the manifests and files each table read plans (as
        ``t.scan(filter=...)`` would), and the DataFrame stays right however often it runs.
        ``namespace`` (``"db"`` or ``["a", "b"]``): where one-part table names are looked up
        (default ``default``, Spark's). How names resolve, and the errors (``NoSuchTable``,
        ``NoSuchSnapshot``, ``ValidationError`` with Spark's message): in
        :mod:`icenb.spark.warehouse_sql`. Commands (``DROP``, ``INSERT``) are refused.
        """
        if namespace is None:
            parts: tuple[str, ...] = ("default",)
        elif isinstance(namespace, str):
            parts = tuple(namespace.split("."))
        else:
            parts = tuple(namespace)
        return engine().warehouse_sql(query, self, namespace=parts, spark=spark)

    def __repr__(self) -> str:
        return f"Warehouse({self.location!r})"


#: The warehouse opened last in this process (``%%sql`` runs against it by default).
_CURRENT: Warehouse | None = None


def current_warehouse() -> Warehouse | None:
    """The warehouse opened last in this process (``icenb.warehouse(...)``), or None."""
    return _CURRENT


def warehouse(path: str | os.PathLike[str], *, name: str = "default",
              catalog: str = "sql") -> Warehouse:
    """The embedded warehouse at ``path`` (a local directory, created when missing), with a
    SQLite catalog (``catalog="sql"``, the default) or in the Hadoop layout
    (``catalog="filesystem"``)."""
    return Warehouse(path, name=name, catalog=catalog)
