"""What every reference script does with a batch: run each request, report failures as data.

A script's batch logic is ``serve(ref, requests, args) -> results`` (see :data:`Serve`): its
command line runs it in a JVM of its own (:func:`main`), and tests/reference/server.py runs it in
the one JVM it keeps for a whole test session.

Runs inside the reference environment (.venv-ref); the scripts import it from their own
directory, as they import refspark.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

__all__ = ["Serve", "java_error", "main", "options", "read_requests", "run_each", "utc",
           "write_results"]

#: A script's batch: ``serve(ref, requests, args)`` -> one result per request, in order. ``ref``
#: is a :class:`jvm.Reference`, ``args`` the script's own command-line options (such as
#: ``["--warehouse", DIR]``), without --requests / --output.
Serve = Callable[[Any, list[dict[str, Any]], Sequence[str]], list[dict[str, Any]]]


def java_error(exc: Exception) -> dict[str, Any]:
    """A failed request: the Java exception's message and class when py4j raised one."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "error_class": "python"}
    return {"ok": False, "error": str(java.getMessage()),
            "error_class": str(java.getClass().getName())}


def run_each(requests: Iterable[dict[str, Any]], handle: Callable[[dict[str, Any]], dict[str, Any]],
             error: Callable[[Exception], dict[str, Any]] = java_error) -> list[dict[str, Any]]:
    """``handle`` each request in order, timed; a failure is reported and the batch goes on."""
    results = []
    for request in requests:
        started = time.perf_counter()
        try:
            result = handle(request)
        except Exception as e:  # report it and go on with the batch
            result = error(e)
        result["seconds"] = round(time.perf_counter() - started, 3)
        results.append(result)
    return results


def read_requests(path: str) -> list[dict[str, Any]]:
    """The requests of a batch file: a JSON list, or an object with a "requests" list."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    requests: list[dict[str, Any]] = doc["requests"] if isinstance(doc, dict) else doc
    return requests


def write_results(path: str, results: list[dict[str, Any]]) -> None:
    """The batch's answer file: {"results": [...]} in request order."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"results": results}, f)


class _Options(argparse.ArgumentParser):
    """Options whose errors raise (a server's batch fails; the server goes on)."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(f"bad script options: {message}")


def options(args: Sequence[str], *names: str) -> argparse.Namespace:
    """A script's own options: each of ``names`` (such as "--warehouse") takes one value and is
    required."""
    parser = _Options()
    for name in names:
        parser.add_argument(name, required=True)
    return parser.parse_args(list(args))


def utc() -> None:
    """pyspark turns timestamps into naive local datetimes: make local time UTC."""
    os.environ["TZ"] = "UTC"
    time.tzset()


def main(serve: Serve, argv: list[str] | None = None, description: str | None = None) -> int:
    """A script's command line: ``--requests FILE --output FILE`` and the script's own options;
    the batch runs in a JVM of its own, started for it and stopped after it."""
    from jvm import OwnJvm

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--requests", required=True)
    parser.add_argument("--output", required=True)
    args, rest = parser.parse_known_args(argv)
    requests = read_requests(args.requests)
    utc()
    with OwnJvm() as ref:
        results = serve(ref, requests, rest)
    write_results(args.output, results)
    return 0
