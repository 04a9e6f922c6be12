"""Plan scans and parse scan-task / expression JSON with the Java reference, in one JVM.

Usage (inside .venv-ref):
  python java_tasks.py --requests REQUESTS.json --output RESULTS.json

Requests (a list under "requests"), each one of:
- {"plan": "/abs/table/dir", "snapshot_id": 1 | null, "filter": <expression JSON> | null}:
  ``table.newScan().useSnapshot(..).filter(ExpressionParser.fromJson(filter, schema))
  .planFiles()``; the result's "tasks" are ``ScanTaskParser.toJson`` of each task (parsed).
- {"parse_task": <file scan task JSON from icenb>}: ``ScanTaskParser.fromJson`` then
  ``toJson``: what Java reads from icenb's JSON.
- {"parse_expression": <expression JSON>, "schema_of": "/abs/table/dir"}: ``ExpressionParser``
  read with that table's schema and written back.
Results line up with requests: {"ok": true, ...} or {"ok": false, "error": ...}.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _table(spark: Any, location: str) -> Any:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    return jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(os.path.abspath(location))


def _run(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    jvm = spark._jvm
    parser = jvm.org.apache.iceberg.expressions.ExpressionParser
    tasks_parser = jvm.org.apache.iceberg.ScanTaskParser
    if "plan" in request:
        table = _table(spark, request["plan"])
        scan = table.newScan()
        if request.get("snapshot_id") is not None:
            scan = scan.useSnapshot(int(request["snapshot_id"]))
        if request.get("filter") is not None:
            scan = scan.filter(parser.fromJson(json.dumps(request["filter"]), table.schema()))
        out = []
        iterable = scan.planFiles()
        try:
            it = iterable.iterator()
            while it.hasNext():
                out.append(json.loads(tasks_parser.toJson(it.next())))
        finally:
            iterable.close()
        return {"ok": True, "tasks": out}
    if "parse_task" in request:
        task = tasks_parser.fromJson(json.dumps(request["parse_task"]), True)
        return {"ok": True, "task": json.loads(tasks_parser.toJson(task))}
    if "parse_expression" in request:
        schema = _table(spark, request["schema_of"]).schema()
        expr = parser.fromJson(json.dumps(request["parse_expression"]), schema)
        return {"ok": True, "expression": json.loads(parser.toJson(expr))}
    raise ValueError(f"unknown request {sorted(request)}")


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve) in one Spark session of ``ref``."""
    from java_read import reads

    return reads(_run)(ref, requests, args)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from java_read import run_batch

    return run_batch(_run, argv)


if __name__ == "__main__":
    sys.exit(main())
