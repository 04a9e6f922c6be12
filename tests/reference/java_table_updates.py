"""Create table metadata and apply REST-style updates with the Java reference, in one JVM.

Usage (inside .venv-ref):
  python java_table_updates.py --requests REQUESTS.json --output RESULTS.json

Requests ({"requests": [...]}), one result each, in order:

- {"op": "create", "schema": <schema JSON>, "spec": <spec JSON> | null,
  "sort_order": <sort order JSON> | null, "location": str, "properties": {..}}
  -> ``TableMetadata.newTableMetadata(schema, spec, sortOrder, location, properties)``;
  result {"ok", "metadata": <TableMetadataParser.toJson>, "clock": [before_ms, after_ms]}.
- {"op": "apply", "base": <metadata JSON text>, "base_location": str | null,
  "requirements": [<REST requirement JSON>], "updates": [<REST update JSON>]}
  -> each requirement's ``validate(base)`` (a failure gives {"ok": false, "conflict": msg}),
  then ``TableMetadata.buildFrom(base)`` with every ``MetadataUpdate.applyTo(builder)`` and
  ``build()``; result {"ok", "metadata", "clock"}.  ``base_location`` is the base's metadata
  file (``TableMetadataParser.fromJson(location, json)``), so the build logs it.
- {"op": "roundtrip", "updates": [...], "requirements": [...]} -> Java's parse-then-toJson of
  each; result {"ok", "updates": [...], "requirements": [...]}.
- {"op": "reserved"} -> {"ok", "reserved": sorted TableProperties.RESERVED_PROPERTIES}.

An error gives {"ok": false, "error": "<Java exception>", "error_class": "..."}.
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


class JavaUpdates:
    """A bare JVM with the Iceberg runtime jar, driving TableMetadata directly."""

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

    def _requirement_parser(self) -> Any:
        from py4j.java_gateway import JavaPackage

        # the class moved from rest.requests to the core package; py4j names a missing class
        # as a JavaPackage
        found = self.ice.UpdateRequirementParser
        if isinstance(found, JavaPackage):
            found = self.ice.rest.requests.UpdateRequirementParser
        return found

    def create(self, r: dict[str, Any]) -> dict[str, Any]:
        ice = self.ice
        schema = ice.SchemaParser.fromJson(json.dumps(r["schema"]))
        if r.get("spec") is None:
            spec = ice.PartitionSpec.unpartitioned()
        else:
            spec = ice.PartitionSpecParser.fromJson(schema, json.dumps(r["spec"]))
        if r.get("sort_order") is None:
            order = ice.SortOrder.unsorted()
        else:
            order = ice.SortOrderParser.fromJson(schema, json.dumps(r["sort_order"]))
        before = _now_ms()
        md = ice.TableMetadata.newTableMetadata(schema, spec, order, r["location"],
                                                self._map(r.get("properties") or {}))
        after = _now_ms()
        return {"ok": True, "metadata": json.loads(ice.TableMetadataParser.toJson(md)),
                "clock": [before, after]}

    def apply(self, r: dict[str, Any]) -> dict[str, Any]:
        ice = self.ice
        location = r.get("base_location")
        if location is None:
            base = ice.TableMetadataParser.fromJson(r["base"])
        else:
            base = ice.TableMetadataParser.fromJson(location, r["base"])
        parser = self._requirement_parser()
        for req in r.get("requirements") or []:
            requirement = parser.fromJson(json.dumps(req))
            try:
                requirement.validate(base)
            except Exception as exc:
                java = getattr(exc, "java_exception", None)
                if java is None:
                    raise
                return {"ok": False, "conflict": str(java.getMessage()),
                        "error_class": str(java.getClass().getName())}
        builder = ice.TableMetadata.buildFrom(base)
        before = _now_ms()
        for update in r.get("updates") or []:
            ice.MetadataUpdateParser.fromJson(json.dumps(update)).applyTo(builder)
        md = builder.build()
        after = _now_ms()
        return {"ok": True, "metadata": json.loads(ice.TableMetadataParser.toJson(md)),
                "clock": [before, after]}

    def roundtrip(self, r: dict[str, Any]) -> dict[str, Any]:
        ice = self.ice
        parser = self._requirement_parser()
        updates = [json.loads(ice.MetadataUpdateParser.toJson(
            ice.MetadataUpdateParser.fromJson(json.dumps(u)))) for u in r.get("updates") or []]
        reqs = [json.loads(parser.toJson(parser.fromJson(json.dumps(q))))
                for q in r.get("requirements") or []]
        return {"ok": True, "updates": updates, "requirements": reqs}

    def reserved(self, r: dict[str, Any]) -> dict[str, Any]:
        names = sorted(str(x) for x in self.ice.TableProperties.RESERVED_PROPERTIES)
        return {"ok": True, "reserved": names}

    def run(self, r: dict[str, Any]) -> dict[str, Any]:
        op = r.get("op")
        handler = {"create": self.create, "apply": self.apply, "roundtrip": self.roundtrip,
                   "reserved": self.reserved}.get(str(op))
        if handler is None:
            return {"ok": False, "error": f"unknown op {op!r}", "error_class": "python"}
        try:
            return handler(r)
        except Exception as exc:  # report it and go on with the batch
            from batch import java_error  # beside this script, as refspark

            return java_error(exc)


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve), on ``ref``'s gateway."""
    tool = JavaUpdates(ref.gateway)
    return [tool.run(r) for r in requests]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from batch import main as batch_main

    return batch_main(serve, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
