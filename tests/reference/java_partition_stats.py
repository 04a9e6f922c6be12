"""Partition statistics with the Java reference (Iceberg 1.10 ``PartitionStatsHandler``), one JVM.

Usage (inside .venv-ref):
  python java_partition_stats.py --requests REQUESTS.json --output RESULTS.json

Requests:
- {"op": "compute", "metadata_file": ..., "snapshot_id": ..., "scratch": DIR}: the metadata
  file is copied (decompressed, without its ``partition-statistics``, so Java does a full
  compute) to DIR/metadata/v1.metadata.json and loaded with ``HadoopTables``; Java's
  ``computeAndWriteStatsFile(table, snapshot_id)`` writes its file under DIR/metadata (never
  next to the original table). Result: {"path", "size", "rows"} (rows as Java reads them back).
- {"op": "read", "metadata_file": ...}: every registered partition statistics file of the
  table, read with ``readPartitionStatsFile`` and the schema Java derives from the table:
  {"files": [{"snapshot_id", "path", "size", "rows"}]}.
A row is {"partition": [values...], "spec_id", "data_record_count", ..., "dv_count"}; values in
Java's internal representation (dates as days, timestamps as microseconds, decimals as strings,
binary as hex).
"""

from __future__ import annotations

import decimal
import gzip
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _value(jvm: Any, v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    name = str(v.getClass().getName())
    if "ByteBuffer" in name:
        return bytes(jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(v)).hex()
    return str(v.toString())


def _rows(jvm: Any, stats: Any) -> list[dict[str, Any]]:
    out = []
    obj = jvm.java.lang.Class.forName("java.lang.Object")
    it = stats.iterator()
    while it.hasNext():
        s = it.next()
        p = s.partition()
        out.append({
            "partition": [_value(jvm, p.get(i, obj))
                          for i in range(p.size())],
            "spec_id": s.specId(),
            "data_record_count": s.dataRecordCount(),
            "data_file_count": s.dataFileCount(),
            "total_data_file_size_in_bytes": s.totalDataFileSizeInBytes(),
            "position_delete_record_count": s.positionDeleteRecordCount(),
            "position_delete_file_count": s.positionDeleteFileCount(),
            "equality_delete_record_count": s.equalityDeleteRecordCount(),
            "equality_delete_file_count": s.equalityDeleteFileCount(),
            "total_record_count": s.totalRecords(),
            "last_updated_at": s.lastUpdatedAt(),
            "last_updated_snapshot_id": s.lastUpdatedSnapshotId(),
            "dv_count": s.dvCount(),
        })
    return out


def _read_file(spark: Any, table: Any, path: str) -> list[dict[str, Any]]:
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    ptype = ice.Partitioning.partitionType(table)
    version = ice.TableUtil.formatVersion(table)
    schema = ice.PartitionStatsHandler.schema(ptype, version)
    stats = ice.PartitionStatsHandler.readPartitionStatsFile(schema, table.io().newInputFile(path))
    try:
        return _rows(jvm, stats)
    finally:
        stats.close()


def _static(spark: Any, metadata_file: str) -> Any:
    jvm = spark._jvm
    io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
    ops = jvm.org.apache.iceberg.StaticTableOperations(os.path.abspath(metadata_file), io)
    return jvm.org.apache.iceberg.BaseTable(ops, metadata_file)


def _compute(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    source = request["metadata_file"]
    with open(source, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    doc.pop("partition-statistics", None)
    meta_dir = os.path.join(request["scratch"], "metadata")
    os.makedirs(meta_dir, exist_ok=True)
    with open(os.path.join(meta_dir, "v1.metadata.json"), "w", encoding="utf-8") as out:
        json.dump(doc, out)
    with open(os.path.join(meta_dir, "version-hint.text"), "w", encoding="utf-8") as out:
        out.write("1")
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(
        os.path.abspath(request["scratch"]))
    written = jvm.org.apache.iceberg.PartitionStatsHandler.computeAndWriteStatsFile(
        table, int(request["snapshot_id"]))
    if written is None:
        return {"ok": True, "path": None, "size": None, "rows": []}
    path = str(written.path())
    return {"ok": True, "path": path, "size": int(written.fileSizeInBytes()),
            "rows": _read_file(spark, table, path)}


def _read(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    table = _static(spark, request["metadata_file"])
    files = []
    for f in table.partitionStatisticsFiles():
        path = str(f.path())
        files.append({"snapshot_id": int(f.snapshotId()), "path": path,
                      "size": int(f.fileSizeInBytes()), "rows": _read_file(spark, table, path)})
    return {"ok": True, "files": files}


def _dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import _read as read_rows
    from java_read import by_op

    return by_op({"compute": _compute, "read": _read}, read_rows)(spark, request)


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
