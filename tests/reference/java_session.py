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
from typing import Any

__all__ = ["main"]


def main() -> int:
    # The protocol keeps the real stdout; anything else printed (py4j, the JVM) goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from batch import utc
    from java_read_written import serve
    from jvm import SharedJvm

    utc()
    with tempfile.TemporaryDirectory() as scratch:
        ref = SharedJvm(scratch)
        try:
            answers.write(json.dumps({"ready": True}) + "\n")
            answers.flush()
            for line in sys.stdin:
                if not line.strip():
                    continue
                results: list[dict[str, Any]] = serve(ref, json.loads(line))
                answers.write(json.dumps(results) + "\n")
                answers.flush()
        finally:
            ref.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
