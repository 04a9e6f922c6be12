"""The Spark data plane behind ``icenb.table.engine``: reads through the ``icenb`` data source,
writes through Spark tasks with a driver commit, view SQL analyzed and run by Spark."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icenb.catalog import Catalog, Identifier, LoadedTable
from icenb.spec.schema import Schema
from icenb.spec.snapshot import Snapshot
from icenb.table.engine import Overwrite
from icenb.table.scan import Scan
from icenb.table.table import Table

if TYPE_CHECKING:
    from icenb.table.warehouse import Warehouse

__all__ = ["SparkEngine"]


class SparkEngine:
    """:class:`icenb.table.engine.DataPlane` on PySpark (imported only when built)."""

    def read_scan(self, scan: Scan, spark: Any) -> Any:
        from icenb.spark import read_scan

        return read_scan(scan, spark)

    def write_dataframe(self, df: Any, catalog: Catalog, identifier: Identifier, *,
                        overwrite: Overwrite | None, branch: str,
                        snapshot_properties: Mapping[str, str] | None
                        ) -> tuple[LoadedTable, Snapshot]:
        from icenb.spark.writer import write_dataframe

        return write_dataframe(df, catalog, identifier, overwrite=overwrite, branch=branch,
                               snapshot_properties=snapshot_properties)

    def view_rows(self, sql: str, load: Callable[[tuple[str, ...]], Table], *,
                  default_catalog: str | None, default_namespace: Sequence[str],
                  catalog_names: Collection[str], spark: Any) -> Any:
        from icenb.spark.view_sql import run_view_sql, table_resolver

        return run_view_sql(sql, table_resolver(load, spark), default_catalog=default_catalog,
                            default_namespace=default_namespace, catalog_names=catalog_names,
                            spark=spark)

    def view_schema(self, sql: str, load: Callable[[tuple[str, ...]], Table], *,
                    default_catalog: str | None, default_namespace: Sequence[str],
                    catalog_names: Collection[str], spark: Any) -> Schema:
        from icenb.spark.view_sql import table_resolver, view_schema

        return view_schema(sql, table_resolver(load, spark), default_catalog=default_catalog,
                           default_namespace=default_namespace, catalog_names=catalog_names,
                           spark=spark)

    def warehouse_sql(self, query: str, warehouse: Warehouse, *, namespace: Sequence[str],
                      spark: Any) -> Any:
        from icenb.spark.warehouse_sql import warehouse_sql

        return warehouse_sql(query, warehouse, namespace=namespace, spark=spark)

    def schema_from_engine(self, schema: Any) -> Schema:
        from icenb.spark.spark_types import schema_from_spark

        return schema_from_spark(schema)
