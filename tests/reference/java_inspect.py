"""Read Iceberg metadata tables (``snapshots``, ``files``, ...) with the Java reference, in one JVM.

Usage (inside .venv-ref):
  python java_inspect.py --requests REQUESTS.json --output RESULTS.json

REQUESTS.json holds {"requests": [{"location": "/abs/table/dir", "table": "snapshots"}, ...]}
(optionally "snapshot_id"). Each is read as
``spark.read.format("iceberg").load(location + "#" + table)``: a Hadoop table by path names its
metadata tables with a ``#name`` suffix. RESULTS.json gets {"results": [{"ok": true, "columns":
[...], "rows": [{column: value}, ...]} | {"ok": false, "error": ...}]}. Rows are dicts by column
name; structs (``Row``) become dicts by field name too, so a struct normalizes (see
:func:`java_read.normalize`) as sorted ``[name, value]`` pairs, as a map does.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["main"]


def _plain(value: Any) -> Any:
    """pyspark's value with every ``Row`` turned into a dict by field name."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _read(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import normalize

    reader = spark.read.format("iceberg")
    if request.get("snapshot_id") is not None:
        reader = reader.option("snapshot-id", str(request["snapshot_id"]))
    df = reader.load(os.path.abspath(request["location"]) + "#" + request["table"])
    rows = [{k: normalize(_plain(v)) for k, v in row.asDict(recursive=False).items()}
            for row in df.collect()]
    return {"ok": True, "columns": df.columns, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from java_read import run_batch

    return run_batch(_read, argv)


if __name__ == "__main__":
    sys.exit(main())
