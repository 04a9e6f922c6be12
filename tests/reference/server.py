"""One reference JVM (Iceberg Java through PySpark 3.5) answering the batches of a test session.

Usage (inside .venv-ref; tests/reference_fixtures.py starts it once per pytest process):
  python server.py

Each line on stdin is a call, ``{"script": "java_read.py", "args": [...], "requests": [...]}``:
what ``python SCRIPT ARGS --requests ... --output ...`` would do, run by the script's
``serve(ref, requests, args)`` (see batch.py) in this process's JVM instead of a new one. The
answer is one JSON line on stdout: ``{"ok": true, "results": [...]}`` (one result per request, in
order, as the script writes them to --output), or ``{"ok": false, "error": "<traceback>"}`` when
the script itself failed (as a non-zero exit would say). The first line is ``{"ready": true}``
once the JVM is up. End of input stops the JVM. Everything else this process or the JVM prints
goes to stderr.

Every call runs in a fresh working directory and in Spark sessions of its own (own SQL
settings and catalogs; see jvm.SharedJvm), so calls see each other only through the files they
name. If the JVM stops answering after a call, the server says so and exits (the next call
starts a new one).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import traceback
from typing import Any

__all__ = ["main"]

HERE = os.path.dirname(os.path.abspath(__file__))


def call(ref: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Run one call in a fresh working directory; the script's results or its failure."""
    script = str(request["script"])
    name = script.removesuffix(".py")
    if os.sep in name or not os.path.isfile(os.path.join(HERE, f"{name}.py")):
        return {"ok": False, "error": f"no reference script {script!r} in {HERE}"}
    started = os.getcwd()
    try:
        with tempfile.TemporaryDirectory(prefix="call-", dir=ref.scratch) as cwd:
            os.chdir(cwd)
            try:
                module = importlib.import_module(name)
                results = module.serve(ref, list(request["requests"]),
                                       [str(a) for a in request.get("args", [])])
            finally:
                os.chdir(started)
    except BaseException as e:  # argparse's SystemExit too: the script failed, not the server
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"ok": False, "error": traceback.format_exc()[-8000:]}
    return {"ok": True, "results": results}


def main() -> int:
    # The protocol keeps the real stdout; anything else printed (py4j, the JVM) goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.path.insert(0, HERE)
    from batch import utc
    from jvm import SharedJvm

    utc()
    with tempfile.TemporaryDirectory(prefix="icenb-reference-") as scratch:
        os.chdir(scratch)
        ref = SharedJvm(scratch)
        try:
            answers.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
            answers.flush()
            for line in sys.stdin:
                if not line.strip():
                    continue
                answer = call(ref, json.loads(line))
                alive = ref.alive()
                if not alive and answer["ok"]:
                    answer = {"ok": False, "error": "the reference JVM stopped answering"}
                answers.write(json.dumps(answer) + "\n")
                answers.flush()
                if not alive:
                    return 1
        finally:
            if ref.alive():
                ref.close()
            os.chdir(HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
