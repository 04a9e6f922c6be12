"""Data-file metrics, metrics modes and data locations from the Java reference, in one JVM.

Usage (inside .venv-ref):
  python java_metrics.py --requests REQUESTS.json --output RESULTS.json

Requests (a list under "requests"), each one of:
- {"op": "metrics", "path": "/abs/file.parquet" | null, "schema": <schema JSON>,
   "sort_order": <sort order JSON> | null, "properties": {...}, "format_version": N,
   "columns": [full column names], "rewrite": bool}:
  creates a Hadoop table with that schema, sort order and properties (unpartitioned) and
  returns "schema" (the table's schema JSON, to check Java kept the field ids), "modes"
  (``MetricsConfig.forTable(table).columnMode(name)`` for each column), and for a "path":
  "file_metrics" = ``ParquetUtil.fileMetrics(file, MetricsConfig.forTable(table))`` and, with
  "rewrite", "writer_metrics": the file appended to the table, read back with
  ``IcebergGenerics`` and written again by Java's generic Parquet appender (whose metrics are
  what Java records for a file it writes itself), plus "rows" (rows Java read).
  Metrics are {"record_count", "column_sizes", "value_counts", "null_value_counts",
  "nan_value_counts", "lower_bounds", "upper_bounds"}, maps keyed by field id string, bounds hex.
- {"op": "locations", "table_location": "...", "properties": {...}, "names": [...]}:
  ``LocationProviders.locationsFor(location, properties).newDataLocation(name)`` for each name.
Results line up with requests: {"ok": true, ...} or {"ok": false, "error": ...}.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]

_COUNTER = [0]


def _java_map(spark: Any, items: dict[str, str]) -> Any:
    m = spark._jvm.java.util.HashMap()
    for k, v in items.items():
        m.put(str(k), str(v))
    return m


def _long_map(m: Any) -> dict[str, int]:
    if m is None:
        return {}
    return {str(k): int(m.get(k)) for k in m.keySet()}


def _bytes_map(spark: Any, m: Any) -> dict[str, str]:
    if m is None:
        return {}
    to_array = spark._jvm.org.apache.iceberg.util.ByteBuffers.toByteArray
    return {str(k): bytes(to_array(m.get(k))).hex() for k in m.keySet()}


def _metrics(spark: Any, m: Any) -> dict[str, Any]:
    count = m.recordCount()
    return {
        "record_count": None if count is None else int(count),
        "column_sizes": _long_map(m.columnSizes()),
        "value_counts": _long_map(m.valueCounts()),
        "null_value_counts": _long_map(m.nullValueCounts()),
        "nan_value_counts": _long_map(m.nanValueCounts()),
        "lower_bounds": _bytes_map(spark, m.lowerBounds()),
        "upper_bounds": _bytes_map(spark, m.upperBounds()),
    }


def _create_table(spark: Any, request: dict[str, Any], scratch: str) -> Any:
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    conf = spark._jsc.hadoopConfiguration()
    schema = ice.SchemaParser.fromJson(json.dumps(request["schema"]))
    order = ice.SortOrder.unsorted()
    if request.get("sort_order"):
        order = ice.SortOrderParser.fromJson(schema, json.dumps(request["sort_order"]))
    props = dict(request.get("properties") or {})
    props["format-version"] = str(request.get("format_version", 2))
    _COUNTER[0] += 1
    location = os.path.join(scratch, "tables", f"t{_COUNTER[0]}")
    return jvm.org.apache.iceberg.hadoop.HadoopTables(conf).create(
        schema, ice.PartitionSpec.unpartitioned(), order, _java_map(spark, props), location)


def _run_metrics(spark: Any, request: dict[str, Any], scratch: str) -> dict[str, Any]:
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    table = _create_table(spark, request, scratch)
    config = ice.MetricsConfig.forTable(table)
    out: dict[str, Any] = {
        "ok": True,
        "schema": json.loads(ice.SchemaParser.toJson(table.schema())),
        "modes": {c: str(config.columnMode(c).toString()) for c in request.get("columns", [])},
    }
    path = request.get("path")
    if not path:
        return out
    conf = spark._jsc.hadoopConfiguration()
    input_file = ice.hadoop.HadoopInputFile.fromLocation(path, conf)
    out["file_metrics"] = _metrics(spark, ice.parquet.ParquetUtil.fileMetrics(input_file,
                                                                              config))
    if request.get("rewrite"):
        data_file = (ice.DataFiles.builder(table.spec()).withPath(path)
                     .withFileSizeInBytes(input_file.getLength())
                     .withRecordCount(out["file_metrics"]["record_count"])
                     .withFormat(ice.FileFormat.PARQUET).build())
        table.newAppend().appendFile(data_file).commit()
        records = jvm.org.apache.iceberg.data.IcebergGenerics.read(table).build()
        rows = jvm.java.util.ArrayList()
        it = records.iterator()
        while it.hasNext():
            rows.add(it.next().copy())
        records.close()
        factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(
            table, table.schema(), table.spec(), jvm.java.util.HashMap(), None, None, None)
        target = os.path.join(scratch, f"rewrite-{_COUNTER[0]}.parquet")
        appender = factory.newAppender(ice.Files.localOutput(target), ice.FileFormat.PARQUET)
        appender.addAll(rows)
        appender.close()
        out["writer_metrics"] = _metrics(spark, appender.metrics())
        out["rows"] = int(rows.size())
    return out


def _run_locations(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    provider = spark._jvm.org.apache.iceberg.LocationProviders.locationsFor(
        request["table_location"], _java_map(spark, request.get("properties") or {}))
    return {"ok": True,
            "locations": [str(provider.newDataLocation(n)) for n in request["names"]]}


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve) in one Spark session of ``ref``; the tables it
    creates live in a scratch directory removed afterwards."""
    from java_read import reads

    scratch = tempfile.mkdtemp(prefix="icenb-java-metrics-")

    def run(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "metrics":
            return _run_metrics(spark, request, scratch)
        if request.get("op") == "locations":
            return _run_locations(spark, request)
        raise ValueError(f"unknown request {sorted(request)}")

    try:
        return reads(run)(ref, requests, args)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from batch import main as batch_main

    return batch_main(serve, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
