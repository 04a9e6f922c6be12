"""One Iceberg Java JVM answering several batches of read requests, sent while a test runs.

Usage (inside .venv-ref):
  python java_session.py

Each line on stdin is a JSON list of requests, answered as java_read_written.py answers them
(rows by "metadata_file" [+ "snapshot_id" / "branch" / "tag"], metadata tables by "table");
the answer is one JSON line on stdout: the list of results, in order. End of input stops the
JVM. A test can so ask Java about a table, change it (e.g. expire snapshots, which deletes
files earlier reads need) and ask again, with one JVM. Everything else this process or the JVM
would print goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Any

__all__ = ["main"]


def main() -> int:
    # The protocol keeps the real stdout; anything else printed (py4j, the JVM) goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    os.environ["TZ"] = "UTC"
    time.tzset()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from java_read import _error
    from java_read_written import _dispatch
    from refspark import spark_session

    with tempfile.TemporaryDirectory() as scratch:
        spark = spark_session(os.path.join(scratch, "wh"), scratch)
        try:
            answers.write(json.dumps({"ready": True}) + "\n")
            answers.flush()
            for line in sys.stdin:
                if not line.strip():
                    continue
                results: list[dict[str, Any]] = []
                for request in json.loads(line):
                    started = time.perf_counter()
                    try:
                        result = _dispatch(spark, request)
                    except Exception as e:  # report it and go on with the batch
                        result = _error(e)
                    result["seconds"] = round(time.perf_counter() - started, 3)
                    results.append(result)
                answers.write(json.dumps(results) + "\n")
                answers.flush()
        finally:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
