"""Read Iceberg metadata tables (``snapshots``, ``files``, ...) with the Java reference, in one JVM.

Usage (inside .venv-ref):
  python java_inspect.py --requests REQUESTS.json --output RESULTS.json

REQUESTS.json holds {"requests": [{"location": "/abs/table/dir", "table": "snapshots"}, ...]}
(optionally "snapshot_id", and "retry_without": columns to drop and read again when reading
fails; the result's "dropped" lists those dropped). Each is read as
``spark.read.format("iceberg").option("snapshot-id", sid).load(location + "#" + table)``: a
Hadoop table by path (or a metadata file, for other layouts) names its metadata tables with a
``#name`` suffix. RESULTS.json gets {"results": [{"ok": true, "columns": [...], "types": [...],
"rows": [{column: value}, ...]} | {"ok": false, "error": ...}]}; ``types`` are Spark's
``simpleString`` of each column. Rows are dicts by column name; structs (``Row``) become dicts
by field name too, so a struct normalizes (see :func:`java_read.normalize`) as sorted
``[name, value]`` pairs, as a map does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _plain(value: Any) -> Any:
    """pyspark's value with every ``Row`` turned into a dict by field name."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _cause(e: Exception) -> str:
    """The Java exception's message, not py4j's "An error occurred while calling o123.load"."""
    lines = str(e).splitlines() or [repr(e)]
    return next((line.strip(": ") for line in lines if "Exception:" in line), lines[0])


def _read(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import normalize

    reader = spark.read.format("iceberg")
    if request.get("snapshot_id") is not None:
        reader = reader.option("snapshot-id", str(request["snapshot_id"]))
    dropped: list[str] = []
    try:
        df = reader.load(os.path.abspath(request["location"]) + "#" + request["table"])
        try:
            collected = df.collect()
        except Exception:
            # Some reads fail only because of one column (Java cannot read position deletes'
            # ``row`` of a table with list columns from ORC/Avro files): retry without it.
            dropped = [c for c in request.get("retry_without", []) if c in df.columns]
            if not dropped:
                raise
            df = df.drop(*dropped)
            collected = df.collect()
    except Exception as e:
        raise RuntimeError(_cause(e)) from None
    rows = [{k: normalize(_plain(v)) for k, v in row.asDict(recursive=False).items()}
            for row in collected]
    types = [f.dataType.simpleString() for f in df.schema.fields]
    return {"ok": True, "columns": df.columns, "types": types, "rows": rows, "dropped": dropped}


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve) in one Spark session of ``ref``."""
    from java_read import reads

    return reads(_read)(ref, requests, args)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from java_read import run_batch

    return run_batch(_read, argv)


if __name__ == "__main__":
    sys.exit(main())
