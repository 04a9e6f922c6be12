"""Read tables with the Iceberg Java reference implementation (Spark 3.5), in one JVM.

Usage (inside .venv-ref):
  python java_read.py --requests REQUESTS.json --output RESULTS.json

REQUESTS.json holds {"requests": [request, ...]}; a request names the table by "location"
(a Hadoop table directory) or "metadata_file" (any metadata file, loaded as a static table),
and optionally one of "snapshot_id", "branch", "tag", "as_of_timestamp" (epoch ms), other
read "options" (a dict), a "filter" (Spark SQL, applied before the selection) and "columns"
(a selection, which may name metadata columns such as ``_file`` or ``_pos``). Each is read as
``spark.read.format("iceberg").option(...).load(location)``. RESULTS.json gets
{"results": [{"ok": true, "columns": [...], "rows": [[...], ...]} |
{"ok": false, "error": ..., "error_class": ...}]} with every value normalized by
:func:`normalize` (importable from icenb's tests, which apply the same normalization to
icenb's rows).
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["by_op", "main", "normalize", "reads", "run_batch", "serve", "serve_reads"]


def normalize(value: Any) -> Any:
    """A JSON value standing for one cell, alike for Spark's and pyarrow's Python values.

    Decimals as strings, bytes as hex, dates ISO, timestamps ISO in UTC without zone, floats
    NaN/inf as strings, structs as lists of values (field order), maps as sorted [key, value]
    pairs, lists as lists. Spark's shapes are the input: a struct is a tuple (``Row``), a map
    a dict.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(value)
        return value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return value.bytes.hex()
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.time):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, dict):  # a map
        return _pairs(value.items())
    if isinstance(value, (list, tuple)):  # a list, or a struct (pyspark Row: a tuple)
        return [normalize(v) for v in value]
    return str(value)


def _pairs(items: Any) -> list[list[Any]]:
    pairs = [[normalize(k), normalize(v)] for k, v in items]
    return sorted(pairs, key=lambda p: json.dumps(p, sort_keys=True))


#: Request keys and the Spark read options they set.
_OPTIONS = (("snapshot_id", "snapshot-id"), ("branch", "branch"), ("tag", "tag"),
            ("as_of_timestamp", "as-of-timestamp"))


def _read(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    reader = spark.read.format("iceberg")
    for key, option in _OPTIONS:
        if request.get(key) is not None:
            reader = reader.option(option, str(request[key]))
    for option, value in (request.get("options") or {}).items():
        reader = reader.option(option, str(value))
    target = request.get("metadata_file") or request["location"]
    df = reader.load(os.path.abspath(target))
    if request.get("filter"):
        df = df.where(request["filter"])
    if request.get("columns") is not None:
        df = df.select(*request["columns"])
    rows = [[normalize(v) for v in row] for row in df.collect()]
    return {"ok": True, "columns": df.columns, "rows": rows}


def _error(e: Exception) -> dict[str, Any]:
    """A failed read: the Java exception (class and first message line) when there is one."""
    java = getattr(e, "java_exception", None)
    if java is not None:
        cause = java
        while cause.getCause() is not None and cause.getCause() != cause:
            cause = cause.getCause()
        text = str(java.toString())
        return {"ok": False, "error": text.splitlines()[0][:2000],
                "error_class": str(java.getClass().getName()),
                "root_cause": str(cause.toString()).splitlines()[0][:2000]}
    return {"ok": False, "error": str(e).splitlines()[0][:2000],
            "error_class": type(e).__name__}


#: A request handler: ``read(spark, request) -> result``.
Read = Callable[[Any, dict[str, Any]], dict[str, Any]]


def by_op(ops: dict[str, Read], other: Read) -> Read:
    """A handler that runs ``ops[request["op"]]``, or ``other`` for a request without a known
    "op"."""
    def dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
        handler = ops.get(request.get("op") or "", other)
        return handler(spark, request)

    return dispatch


def serve_reads(read: Read, ref: Any, requests: list[dict[str, Any]],
                warehouse: str | None = None) -> list[dict[str, Any]]:
    """Run ``read(spark, request)`` for each request in one Spark session of ``ref`` (a
    :class:`jvm.Reference`) whose ``ref`` catalog is rooted at ``warehouse`` (else a scratch
    directory); a failed request is reported (see :func:`_error`) and the batch goes on."""
    from batch import run_each

    with ref.spark(warehouse) as spark:
        return run_each(requests, lambda request: read(spark, request), _error)


def reads(read: Read, *, warehouse_arg: bool = False) -> Callable[..., list[dict[str, Any]]]:
    """A script's ``serve(ref, requests, args)`` reading each request with ``read`` (see
    :func:`serve_reads`). With ``warehouse_arg``, a required --warehouse DIR is the root of the
    session's ``ref`` catalog."""
    def serve(ref: Any, requests: list[dict[str, Any]],
              args: Sequence[str] = ()) -> list[dict[str, Any]]:
        from batch import options

        if warehouse_arg:
            warehouse = os.path.abspath(options(args, "--warehouse").warehouse)
            return serve_reads(read, ref, requests, warehouse)
        options(args)
        return serve_reads(read, ref, requests)

    return serve


def run_batch(read: Read, argv: list[str] | None = None, *, warehouse_arg: bool = False) -> int:
    """Run ``read(spark, request)`` for each request of --requests in one Spark session.

    Results (or one error line per failed request) go to --output as {"results": [...]}. With
    ``warehouse_arg``, a required --warehouse DIR is the root of the session's ``ref`` catalog
    (else a scratch directory).
    """
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from batch import main as batch_main

    return batch_main(reads(read, warehouse_arg=warehouse_arg), argv, __doc__)


#: This script's batch (see batch.Serve): rows of each request.
serve = reads(_read)


def main(argv: list[str] | None = None) -> int:
    return run_batch(_read, argv)


if __name__ == "__main__":
    sys.exit(main())
