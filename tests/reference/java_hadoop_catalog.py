"""Hadoop-layout warehouses with the Java reference: HadoopCatalog listing/loading, Spark SQL
writes through a HadoopCatalog, row reads; one JVM.

Usage (inside .venv-ref):
  python java_hadoop_catalog.py --requests REQUESTS.json --output RESULTS.json

Requests:
- {"op": "catalog", "warehouse": DIR}: ``HadoopCatalog`` over DIR lists every namespace (one
  level) and its tables and loads each: {"tables": {"ns.t": {"format_version", "current",
  "snapshots", "schema" (Java's JSON), "properties"}}}.
- {"op": "sql", "warehouse": DIR, "statements": [...]}: the statements run in Spark with a
  HadoopCatalog named ``hc`` rooted at DIR (registered on first use).
- {"op": "eq_delete", "warehouse": DIR, "table": "ns.t", "column": NAME, "values": [...]}:
  one row delta adds a Parquet equality delete file (Java API, ``GenericAppenderFactory``) to
  the unpartitioned table, deleting rows whose ``NAME`` (a string column) is one of
  ``values``: {"snapshot_id": ...}.
- any other request reads rows as java_read.py does (e.g. "location" + "snapshot_id").
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _catalog(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    jvm = spark._jvm
    catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
        spark._jsc.hadoopConfiguration(), os.path.abspath(request["warehouse"]))
    tables: dict[str, Any] = {}
    for ns in catalog.listNamespaces():
        for ident in catalog.listTables(ns):
            t = catalog.loadTable(ident)
            current = t.currentSnapshot()
            tables[str(ident.toString())] = {
                "format_version": int(jvm.org.apache.iceberg.TableUtil.formatVersion(t)),
                "current": None if current is None else int(current.snapshotId()),
                "snapshots": [int(s.snapshotId()) for s in t.snapshots()],
                "schema": json.loads(str(jvm.org.apache.iceberg.SchemaParser.toJson(
                    t.schema()))),
                "properties": {str(k): str(v) for k, v in dict(t.properties()).items()},
            }
    return {"ok": True, "tables": tables}


def _sql(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    spark.conf.set("spark.sql.catalog.hc", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.hc.type", "hadoop")
    spark.conf.set("spark.sql.catalog.hc.warehouse", os.path.abspath(request["warehouse"]))
    spark.conf.set("spark.sql.catalog.hc.cache-enabled", "false")
    for statement in request["statements"]:
        spark.sql(statement).collect()
    return {"ok": True}


def _eq_delete(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    catalog = ice.hadoop.HadoopCatalog(spark._jsc.hadoopConfiguration(),
                                       os.path.abspath(request["warehouse"]))
    table = catalog.loadTable(ice.catalog.TableIdentifier.parse(request["table"]))
    column = request["column"]
    eq_schema = table.schema().select([column])
    eq_ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    eq_ids[0] = eq_schema.findField(column).fieldId()
    factory = ice.data.GenericAppenderFactory(table.schema(), table.spec(), eq_ids, eq_schema,
                                              None)
    location = table.locationProvider().newDataLocation("java-eq-delete.parquet")
    out = ice.encryption.EncryptedFiles.plainAsEncryptedOutput(
        table.io().newOutputFile(location))
    writer = factory.newEqDeleteWriter(out, ice.FileFormat.PARQUET,
                                       ice.PartitionKey(table.spec(), table.schema()))
    for value in request["values"]:
        record = ice.data.GenericRecord.create(eq_schema)
        record.setField(column, value)
        writer.write(record)
    writer.close()
    table.newRowDelta().addDeletes(writer.toDeleteFile()).commit()
    table.refresh()
    return {"ok": True, "snapshot_id": int(table.currentSnapshot().snapshotId())}


def _dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import _read as read_rows
    from java_read import by_op

    return by_op({"catalog": _catalog, "sql": _sql, "eq_delete": _eq_delete},
                 read_rows)(spark, request)


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve) in one Spark session of ``ref``."""
    from java_read import reads

    return reads(_dispatch)(ref, requests, args)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from java_read import run_batch

    return run_batch(_dispatch, argv)


if __name__ == "__main__":
    sys.exit(main())
