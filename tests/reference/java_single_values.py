"""Java's JSON single-value text (``SingleValueParser``), in one JVM.

Usage (inside .venv-ref):
  python java_single_values.py --requests REQUESTS.json --output RESULTS.json

Requests ({"requests": [...]}), one result each, in order:
{"type": "<primitive type string>", "json": <JSON value>} -> ``SingleValueParser.fromJson`` then
``toJson`` of a one-element ``list<type>`` holding it (so the value never crosses into Python,
where py4j would turn a small Long into an Integer): result {"ok": true, "json": <Java's JSON
value>}.
An error gives {"ok": false, "error": "<Java exception>"}.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve), on ``ref``'s gateway."""
    ice = ref.gateway.jvm.org.apache.iceberg
    results: list[dict[str, Any]] = []
    for request in requests:
        try:
            element = ice.types.Types.fromPrimitiveString(request["type"])
            t = ice.types.Types.ListType.ofRequired(1, element)
            value = ice.SingleValueParser.fromJson(t, json.dumps([request["json"]]))
            text = str(ice.SingleValueParser.toJson(t, value))
            results.append({"ok": True, "json": json.loads(text)[0]})
        except Exception as exc:  # reported per request
            java = getattr(exc, "java_exception", None)
            results.append({"ok": False, "error": str(java.toString()) if java else str(exc)})
    return results


def main(argv: list[str] | None = None) -> int:
    from batch import main as batch_main

    return batch_main(serve, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
