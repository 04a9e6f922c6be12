"""Java side of the row-level tests: read icenb-written tables and write reference DVs, one JVM.

Usage (inside .venv-ref):
  python java_row_level.py --requests REQUESTS.json --output RESULTS.json

A request ``{"dv": NAME, "rows": N, "where": SQL}`` makes a v3 merge-on-read table ``NAME`` of
ids 0..N-1 in one data file (so a row's position is its id), runs ``DELETE ... WHERE SQL`` and
returns the deletion vector Java wrote: the Puffin file's bytes (base64), its path and the DV
entry of the ``files`` table (referenced data file, offset, size, record count). Any other
request goes to java_read_written.py (rows by "metadata_file", metadata tables by "table").
"""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _write_dv(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    name = f"ref.db.{request['dv']}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ref.db")
    spark.sql(f"CREATE TABLE {name} (id bigint) USING iceberg TBLPROPERTIES ("
              "'format-version'='3', 'write.delete.mode'='merge-on-read')")
    spark.range(int(request["rows"])).coalesce(1).writeTo(name).append()
    spark.sql(f"DELETE FROM {name} WHERE {request['where']}")
    dvs = spark.sql(f"SELECT file_path, referenced_data_file, content_offset, "
                    f"content_size_in_bytes, record_count FROM {name}.files "
                    f"WHERE content = 1").collect()
    if len(dvs) != 1:
        raise RuntimeError(f"expected one DV, Java wrote {len(dvs)}")
    dv = dvs[0].asDict()
    path = dv["file_path"].removeprefix("file:")
    with open(path, "rb") as f:
        data = f.read()
    return {"ok": True, "puffin": base64.b64encode(data).decode("ascii"), **dv}


def _dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("dv"):
        return _write_dv(spark, request)
    from java_read_written import _dispatch as read_written

    result: dict[str, Any] = read_written(spark, request)
    return result


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
