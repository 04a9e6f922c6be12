"""Build view metadata with the Java reference's ``ViewMetadata.Builder``, in one JVM.

Usage (inside .venv-ref):
  python java_view_builder.py --requests REQUESTS.json --output RESULTS.json

Requests ({"requests": [...]}), one result each, in order:

- {"base": <view metadata JSON text> | null, "steps": [step, ...]}
  -> ``ViewMetadata.builder()`` (base null) or ``ViewMetadata.buildFrom(base)``, each step
  applied in order, then ``build()``; result {"ok", "metadata": <ViewMetadataParser.toJson>,
  "clock": [before_ms, after_ms]} (the system clock around the build, for log entries Java
  stamps with the current time).

Steps (one key each):
  {"assign_uuid": str}, {"set_location": str}, {"set_properties": {..}},
  {"remove_properties": [..]}, {"set_current_version_id": int},
  {"set_current_version": {"version": <view version JSON>, "schema": <schema JSON>}}.

An error gives {"ok": false, "error": "<Java exception message>", "error_class": "..."}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any


def _now_ms() -> int:
    return int(time.time() * 1000)


class JavaViewBuilder:
    """A bare JVM with the Iceberg runtime jar, driving ViewMetadata.Builder directly."""

    def __init__(self, gateway: Any | None = None) -> None:
        from refspark import java_gateway

        self.gateway = gateway if gateway is not None else java_gateway()
        self.jvm = self.gateway.jvm
        self.ice = self.jvm.org.apache.iceberg

    def _map(self, values: dict[str, str]) -> Any:
        out = self.jvm.java.util.HashMap()
        for k, v in values.items():
            out.put(k, v)
        return out

    def _set(self, values: list[str]) -> Any:
        out = self.jvm.java.util.HashSet()
        for v in values:
            out.add(v)
        return out

    def _version(self, doc: dict[str, Any]) -> Any:
        node = self.ice.util.JsonUtil.mapper().readTree(json.dumps(doc))
        return self.ice.view.ViewVersionParser.fromJson(node)

    def _step(self, builder: Any, step: dict[str, Any]) -> Any:
        (name, arg), = step.items()
        if name == "assign_uuid":
            return builder.assignUUID(arg)
        if name == "set_location":
            return builder.setLocation(arg)
        if name == "set_properties":
            return builder.setProperties(self._map(arg))
        if name == "remove_properties":
            return builder.removeProperties(self._set(arg))
        if name == "set_current_version_id":
            return builder.setCurrentVersionId(int(arg))
        if name == "set_current_version":
            schema = self.ice.SchemaParser.fromJson(json.dumps(arg["schema"]))
            return builder.setCurrentVersion(self._version(arg["version"]), schema)
        raise ValueError(f"unknown step {name!r}")

    def run(self, r: dict[str, Any]) -> dict[str, Any]:
        view = self.ice.view
        try:
            base = r.get("base")
            builder = (view.ViewMetadata.builder() if base is None
                       else view.ViewMetadata.buildFrom(view.ViewMetadataParser.fromJson(base)))
            before = _now_ms()
            for step in r.get("steps") or []:
                builder = self._step(builder, step)
            md = builder.build()
            after = _now_ms()
            return {"ok": True, "metadata": json.loads(view.ViewMetadataParser.toJson(md)),
                    "clock": [before, after]}
        except Exception as exc:  # report it and go on with the batch
            from batch import java_error  # beside this script, as refspark

            return java_error(exc)


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve), on ``ref``'s gateway."""
    tool = JavaViewBuilder(ref.gateway)
    return [tool.run(r) for r in requests]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from batch import main as batch_main

    return batch_main(serve, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
