"""Java side of the changelog tests: Iceberg's Spark ``create_changelog_view`` over Hadoop-layout
warehouses (icenb-written or Java-written), and Spark SQL writes that build Java tables; one JVM.

Usage (inside .venv-ref):
  python java_changelog.py --requests REQUESTS.json --output RESULTS.json

Requests:
- {"op": "sql", "warehouse": DIR, "statements": [...]}: the statements run in Spark with a
  HadoopCatalog named ``hc`` rooted at DIR (as java_hadoop_catalog.py); returns
  {"snapshots": {"db.t": [snapshot ids of main, oldest first], ...}} for the tables named in
  "tables" (optional).
- {"op": "changelog", "warehouse": DIR, "table": "db.t", "start": ID | null, "end": ID | null,
  "identifier_columns": [...] | null}: ``CALL hc.system.create_changelog_view(...)`` with
  ``start-snapshot-id`` / ``end-snapshot-id`` (start exclusive, end inclusive; null: from the
  first snapshot / to the current one) and, when given, ``identifier_columns`` (then Java
  computes UPDATE_BEFORE / UPDATE_AFTER); returns the view's rows as java_read.py normalizes
  them: {"columns": [...], "rows": [[...], ...]} (with "count_only": true, only {"count": N},
  for benchmarks). Java refuses some tables (e.g. "Delete files
  are currently not supported in changelog scans"): the result is then {"ok": false, "error"}.

One warehouse per batch: the batch's Spark session keeps the ``hc`` catalog it opened first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _catalog(spark: Any, warehouse: str) -> None:
    """The HadoopCatalog ``hc`` rooted at ``warehouse`` (java_hadoop_catalog.py's)."""
    from java_hadoop_catalog import _sql as run_sql

    run_sql(spark, {"warehouse": warehouse, "statements": []})


def _sql(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_hadoop_catalog import _sql as run_sql

    run_sql(spark, request)
    snapshots = {}
    for name in request.get("tables") or ():
        rows = spark.sql(f"SELECT snapshot_id FROM hc.{name}.history "
                         "WHERE is_current_ancestor ORDER BY made_current_at").collect()
        snapshots[name] = [int(r[0]) for r in rows]
    return {"ok": True, "snapshots": snapshots}


_VIEWS = iter(range(1_000_000))


def _changelog(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import normalize

    _catalog(spark, request["warehouse"])
    options = []
    for key, option in (("start", "start-snapshot-id"), ("end", "end-snapshot-id")):
        if request.get(key) is not None:
            options += [f"'{option}'", f"'{int(request[key])}'"]
    view = f"icenb_changes_{next(_VIEWS)}"
    args = [f"table => 'hc.{request['table']}'", f"changelog_view => '{view}'"]
    if options:
        args.append(f"options => map({', '.join(options)})")
    if request.get("identifier_columns") is not None:
        columns = ", ".join(f"'{c}'" for c in request["identifier_columns"])
        args.append(f"identifier_columns => array({columns})")
    spark.sql(f"CALL hc.system.create_changelog_view({', '.join(args)})").collect()
    df = spark.table(view)
    if request.get("count_only"):
        count = df.count()
        spark.catalog.dropTempView(view)
        return {"ok": True, "count": int(count)}
    rows = [[normalize(v) for v in row] for row in df.collect()]
    spark.catalog.dropTempView(view)
    return {"ok": True, "columns": df.columns, "rows": rows}


def _dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import _read as read_rows
    from java_read import by_op

    return by_op({"sql": _sql, "changelog": _changelog}, read_rows)(spark, request)


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
