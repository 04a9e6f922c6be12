"""What every reference script does with a batch: run each request, report failures as data.

Runs inside the reference environment (.venv-ref); the scripts import it from their own
directory, as they import refspark.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["java_error", "read_requests", "run_each", "write_results"]


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
