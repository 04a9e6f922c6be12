"""Register icenb-written tables and views in Iceberg Java's HiveCatalog and use them, in one JVM.

Usage (inside .venv-ref):
  python java_views.py --hive DIR --requests REQUESTS.json --output RESULTS.json

One Spark 3.5 session with Iceberg 1.10's SparkCatalog ``hive`` (a HiveCatalog over an embedded
Derby metastore; its warehouse and Derby database live in DIR) serves the whole batch. Requests
({"requests": [...]}), one result each, in order:

- {"op": "create_namespace", "namespace": "db"}
- {"op": "register_table", "name": "db.t", "metadata_location": PATH}
  -> ``HiveCatalog.registerTable``.
- {"op": "register_view", "name": "db.v", "metadata_location": PATH}
  -> Iceberg 1.10.2 has no ``registerView`` (neither ``ViewCatalog`` nor ``HiveCatalog``; it
  came in a later release). The same thing is done by hand, as that later method does: the file
  is read with ``ViewMetadataParser.read`` (which keeps its location) and committed as a new view
  through the catalog's own ``ViewOperations`` (``newViewOps``, protected, called by
  reflection): ``ops.commit(null, metadata)``; with the metadata file location set, no new file
  is written and the Hive view points at PATH.
- {"op": "describe_view", "name": "db.v"} -> ``loadView``: what Java sees (see ``_describe``).
- {"op": "parse", "metadata_location": PATH} -> ``ViewMetadataParser.read`` of one file, no
  catalog (same result shape as describe_view).
- {"op": "query", "sql": "SELECT ..."} -> {"columns": [...], "rows": [[...], ...]} (Spark
  values as JSON: numbers, strings, null; anything else as its str()).
- {"op": "sql", "statements": ["CREATE OR REPLACE VIEW ...", ...]} -> runs them in order.
- {"op": "replace_version", "name": "db.v", "queries": {dialect: sql}, "schema": <schema JSON>,
  "default_namespace": ["db"] | null, "default_catalog": str | null}
  -> ``loadView(...).replaceVersion()...commit()`` (the Java API).
- {"op": "update_properties", "name": "db.v", "set": {k: v}, "remove": [k]}
  -> ``loadView(...).updateProperties()...commit()``.

Every result has "ok"; an error gives {"ok": false, "error", "error_class"} and the batch goes on.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (datetime.date, datetime.datetime, decimal.Decimal)):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _value(x) for k, x in v.items()}
    return str(v)


class JavaViews:
    """The ``hive`` SparkCatalog of one Spark session and its Iceberg HiveCatalog."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.gateway = spark.sparkContext._gateway
        self.jvm = spark.sparkContext._jvm
        self.ice = self.jvm.org.apache.iceberg
        manager = spark._jsparkSession.sessionState().catalogManager()
        self.catalog = manager.catalog("hive").icebergCatalog()
        self.io = self.ice.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())

    # ------------------------------------------------------------------ helpers
    def ident(self, name: str) -> Any:
        return self.ice.catalog.TableIdentifier.parse(name)

    def namespace(self, levels: list[str]) -> Any:
        arr = self.gateway.new_array(self.jvm.String, len(levels))
        for i, level in enumerate(levels):
            arr[i] = level
        return self.ice.catalog.Namespace.of(arr)

    def _describe(self, md: Any) -> dict[str, Any]:
        """What Java's ViewMetadata holds, field by field through its API."""
        versions = []
        for v in md.versions():
            ns = v.defaultNamespace()
            versions.append({
                "version_id": int(v.versionId()),
                "schema_id": int(v.schemaId()),
                "timestamp_ms": int(v.timestampMillis()),
                "summary": dict(v.summary()),
                "representations": [
                    {"type": str(r.type()), "dialect": str(r.dialect()), "sql": str(r.sql())}
                    for r in v.representations()
                ],
                "default_catalog": None if v.defaultCatalog() is None else str(v.defaultCatalog()),
                "default_namespace": None if ns is None else [str(x) for x in ns.levels()],
            })
        return {
            "ok": True,
            "uuid": str(md.uuid()),
            "format_version": int(md.formatVersion()),
            "location": str(md.location()),
            "metadata_location": (None if md.metadataFileLocation() is None
                                  else str(md.metadataFileLocation())),
            "current_version_id": int(md.currentVersionId()),
            "current_schema_id": int(md.currentSchemaId()),
            "versions": versions,
            "version_log": [
                {"version_id": int(h.versionId()), "timestamp_ms": int(h.timestampMillis())}
                for h in md.history()
            ],
            "schemas": [json.loads(self.ice.SchemaParser.toJson(s)) for s in md.schemas()],
            "properties": dict(md.properties()),
            "json": json.loads(self.ice.view.ViewMetadataParser.toJson(md)),
        }

    def _view_ops(self, ident: Any) -> Any:
        """The catalog's ViewOperations for ``ident`` (``newViewOps`` is protected)."""
        arg_types = self.gateway.new_array(self.jvm.java.lang.Class, 1)
        arg_types[0] = ident.getClass()
        cls = self.catalog.getClass()
        method = None
        while method is None and cls is not None:
            try:
                method = cls.getDeclaredMethod("newViewOps", arg_types)
            except Exception:  # declared higher up
                cls = cls.getSuperclass()
        if method is None:
            raise RuntimeError("the catalog has no newViewOps(TableIdentifier)")
        method.setAccessible(True)
        args = self.gateway.new_array(self.jvm.java.lang.Object, 1)
        args[0] = ident
        return method.invoke(self.catalog, args)

    # ------------------------------------------------------------------ requests
    def create_namespace(self, request: dict[str, Any]) -> dict[str, Any]:
        self.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS hive.{request['namespace']}")
        return {"ok": True}

    def register_table(self, request: dict[str, Any]) -> dict[str, Any]:
        table = self.catalog.registerTable(self.ident(request["name"]),
                                           request["metadata_location"])
        return {"ok": True,
                "metadata_location": str(table.operations().current().metadataFileLocation())}

    def register_view(self, request: dict[str, Any]) -> dict[str, Any]:
        ident = self.ident(request["name"])
        if self.catalog.viewExists(ident) or self.catalog.tableExists(ident):
            raise RuntimeError(f"{request['name']} already exists")
        metadata = self.ice.view.ViewMetadataParser.read(
            self.io.newInputFile(request["metadata_location"]))
        self._view_ops(ident).commit(None, metadata)
        view = self.catalog.loadView(ident)
        return {"ok": True, "route": "ViewOperations.commit(null, ViewMetadataParser.read(file))",
                "metadata_location": str(view.operations().current().metadataFileLocation())}

    def describe_view(self, request: dict[str, Any]) -> dict[str, Any]:
        view = self.catalog.loadView(self.ident(request["name"]))
        out = self._describe(view.operations().current())
        out["name"] = str(view.name())
        return out

    def parse(self, request: dict[str, Any]) -> dict[str, Any]:
        md = self.ice.view.ViewMetadataParser.read(
            self.io.newInputFile(request["metadata_location"]))
        return self._describe(md)

    def query(self, request: dict[str, Any]) -> dict[str, Any]:
        df = self.spark.sql(request["sql"])
        rows = [[_value(x) for x in row] for row in df.collect()]
        return {"ok": True, "columns": list(df.columns), "rows": rows}

    def sql(self, request: dict[str, Any]) -> dict[str, Any]:
        for statement in request["statements"]:
            self.spark.sql(statement).collect()
        return {"ok": True}

    def replace_version(self, request: dict[str, Any]) -> dict[str, Any]:
        view = self.catalog.loadView(self.ident(request["name"]))
        schema = self.ice.SchemaParser.fromJson(json.dumps(request["schema"]))
        replace = view.replaceVersion().withSchema(schema)
        for dialect, sql in request["queries"].items():
            replace = replace.withQuery(dialect, sql)
        if request.get("default_namespace") is not None:
            replace = replace.withDefaultNamespace(self.namespace(request["default_namespace"]))
        if request.get("default_catalog") is not None:
            replace = replace.withDefaultCatalog(request["default_catalog"])
        replace.commit()
        return {"ok": True}

    def update_properties(self, request: dict[str, Any]) -> dict[str, Any]:
        update = self.catalog.loadView(self.ident(request["name"])).updateProperties()
        for key, value in request.get("set", {}).items():
            update = update.set(key, value)
        for key in request.get("remove", []):
            update = update.remove(key)
        update.commit()
        return {"ok": True}

    def dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op not in {"create_namespace", "register_table", "register_view", "describe_view",
                      "parse", "query", "sql", "replace_version", "update_properties"}:
            raise ValueError(f"unknown op {op!r}")
        result: dict[str, Any] = getattr(self, op)(request)
        return result


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str]) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve): --hive DIR in ``args``, one Spark session of
    ``ref`` with the ``hive`` catalog (warehouse DIR/warehouse, Derby in DIR/derby)."""
    from batch import options, run_each

    hive = os.path.abspath(options(args, "--hive").hive)
    os.makedirs(hive, exist_ok=True)
    # The Derby metastore goes in <metastore home>/metastore_db; keep it under DIR.
    meta_home = os.path.join(hive, "derby")
    os.makedirs(meta_home, exist_ok=True)
    with ref.spark(hive_warehouse=os.path.join(hive, "warehouse"),
                   metastore_home=meta_home) as spark:
        return run_each(requests, JavaViews(spark).dispatch)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from batch import main as batch_main

    return batch_main(serve, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
