"""Read icenb-written tables with the Java reference: rows and metadata tables, in one JVM.

Usage (inside .venv-ref):
  python java_read_written.py --requests REQUESTS.json --output RESULTS.json

A request with a "table" key (``snapshots``, ``files``, ...) reads that metadata table as
java_inspect.py does; any other request reads rows as java_read.py does (by "metadata_file",
optionally "snapshot_id", "columns", ...). Both kinds go through one Spark session, so a test
module needs one JVM for everything it asks Java.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_inspect import _read as read_metadata_table
    from java_read import _read as read_rows

    if request.get("table"):
        return read_metadata_table(spark, request)
    return read_rows(spark, request)


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
