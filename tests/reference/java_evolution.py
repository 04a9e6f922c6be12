"""Run schema / partition-spec / sort-order evolution with the Iceberg Java reference, one JVM.

Usage (inside .venv-ref): python java_evolution.py --requests REQUESTS.json --output OUT.json

A request is {"metadata": <table metadata JSON>, "ops": [[op, args...], ...]}.  The metadata is
written as v1.metadata.json of a Hadoop table in a temporary directory and loaded with
HadoopTables; the ops run on ONE pending update (table.updateSchema(), table.updateSpec() or
table.replaceSortOrder(), chosen by the first op) which is then committed, so the checks of
TableMetadata.Builder (spec id reuse, v1 sequential ids, v3-only defaults, ...) apply too.

Schema ops (UpdateSchema):
  ["add", parent|null, field]        field: an Appendix C struct field object; "required",
                                     "doc" and "initial-default" pick the Java overload
  ["delete", name] ["rename", name, new] ["update_type", name, "long"] ["update_doc", name, doc]
  ["optional", name] ["require", name] ["update_default", name, field|null] (field JSON
  carrying the type and "write-default") ["move_first", name] ["move_before", name, ref]
  ["move_after", name, ref] ["identifier", [names]] ["allow_incompatible"]
  ["case_sensitive", bool]
Spec ops (UpdatePartitionSpec), a term being {"source": name, "transform": "day"|"bucket[16]"..}:
  ["spec_add", name|null, term] ["spec_remove_name", name] ["spec_remove_term", term]
  ["spec_rename", name, new] ["spec_case_sensitive", bool]
Sort op (ReplaceSortOrder): ["sort", [{"source", "transform", "direction", "null-order"}, ...]]

Result: {"ok": true, "metadata": <committed metadata JSON>} or {"ok": false, "op": index of the
failing op or "commit", "error": "<Java exception>"}.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from refspark import java_gateway


def _java_error(exc: Exception) -> str:
    java = getattr(exc, "java_exception", None)
    if java is None:
        return f"{type(exc).__name__}: {exc}"
    try:
        return str(java.toString())
    except Exception:
        return str(exc).splitlines()[0]


class JavaEvolution:
    def __init__(self, gateway: Any | None = None) -> None:
        self.gateway = gateway if gateway is not None else java_gateway()
        self.jvm = self.gateway.jvm
        self.conf = self.jvm.org.apache.hadoop.conf.Configuration()
        self.tables = self.jvm.org.apache.iceberg.hadoop.HadoopTables(self.conf)
        self.root = tempfile.mkdtemp(prefix="icenb-evolution-")
        self.count = 0

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers -------------------------------------------------------------------
    def _field(self, obj: dict[str, Any]) -> Any:
        """A Java NestedField parsed from an Appendix C field object."""
        schema = {"type": "struct", "schema-id": 0, "fields": [obj]}
        parsed = self.jvm.org.apache.iceberg.SchemaParser.fromJson(json.dumps(schema))
        return parsed.columns().get(0)

    def _term(self, term: dict[str, Any]) -> Any:
        exprs = self.jvm.org.apache.iceberg.expressions.Expressions
        transform = term["transform"]
        if transform == "identity":
            return exprs.ref(term["source"])
        t = self.jvm.org.apache.iceberg.transforms.Transforms.fromString(transform)
        return exprs.transform(term["source"], t)

    def _load(self, metadata: dict[str, Any]) -> Any:
        self.count += 1
        location = os.path.join(self.root, f"t{self.count}")
        os.makedirs(os.path.join(location, "metadata"))
        metadata = dict(metadata, location=location)
        with open(os.path.join(location, "metadata", "v1.metadata.json"), "w",
                  encoding="utf-8") as fh:
            json.dump(metadata, fh)
        with open(os.path.join(location, "metadata", "version-hint.text"), "w",
                  encoding="utf-8") as fh:
            fh.write("1")
        return self.tables.load(location)

    # -- ops -----------------------------------------------------------------------
    def _schema_op(self, u: Any, op: list[Any]) -> None:
        name = op[0]
        if name == "add":
            parent, obj = op[1], op[2]
            f = self._field(obj)
            doc = obj.get("doc")
            default = f.initialDefaultLiteral()
            method = u.addRequiredColumn if obj["required"] else u.addColumn
            method(parent, obj["name"], f.type(), doc, default)
        elif name == "delete":
            u.deleteColumn(op[1])
        elif name == "rename":
            u.renameColumn(op[1], op[2])
        elif name == "update_type":
            t = self.jvm.org.apache.iceberg.types.Types.fromPrimitiveString(op[2])
            u.updateColumn(op[1], t)
        elif name == "update_doc":
            u.updateColumnDoc(op[1], op[2])
        elif name == "optional":
            u.makeColumnOptional(op[1])
        elif name == "require":
            u.requireColumn(op[1])
        elif name == "update_default":
            literal = None if op[2] is None else self._field(op[2]).writeDefaultLiteral()
            u.updateColumnDefault(op[1], literal)
        elif name == "move_first":
            u.moveFirst(op[1])
        elif name == "move_before":
            u.moveBefore(op[1], op[2])
        elif name == "move_after":
            u.moveAfter(op[1], op[2])
        elif name == "identifier":
            names = self.jvm.java.util.ArrayList()
            for n in op[1]:
                names.add(n)
            u.setIdentifierFields(names)
        elif name == "allow_incompatible":
            u.allowIncompatibleChanges()
        elif name == "case_sensitive":
            u.caseSensitive(bool(op[1]))
        else:
            raise ValueError(f"unknown schema op {name!r}")

    def _spec_op(self, u: Any, op: list[Any]) -> None:
        name = op[0]
        if name == "spec_add":
            if op[1] is None:
                u.addField(self._term(op[2]))
            else:
                u.addField(op[1], self._term(op[2]))
        elif name == "spec_remove_name":
            u.removeField(op[1])
        elif name == "spec_remove_term":
            u.removeField(self._term(op[1]))
        elif name == "spec_rename":
            u.renameField(op[1], op[2])
        elif name == "spec_case_sensitive":
            u.caseSensitive(bool(op[1]))
        else:
            raise ValueError(f"unknown spec op {name!r}")

    def _sort(self, u: Any, fields: list[dict[str, Any]]) -> None:
        null_order = self.jvm.org.apache.iceberg.NullOrder
        for f in fields:
            nulls = null_order.NULLS_FIRST if f["null-order"] == "nulls-first" \
                else null_order.NULLS_LAST
            term = self._term(f)
            if f["direction"] == "asc":
                u.asc(term, nulls)
            else:
                u.desc(term, nulls)

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            table = self._load(request["metadata"])
        except Exception as exc:
            return {"ok": False, "op": "load", "error": _java_error(exc)}
        ops = request["ops"]
        first = ops[0][0] if ops else "add"

        def sort_op(u: Any, op: list[Any]) -> None:
            self._sort(u, op[1])

        try:
            if first.startswith("spec_"):
                update, apply_op = table.updateSpec(), self._spec_op
            elif first == "sort":
                update, apply_op = table.replaceSortOrder(), sort_op
            else:
                update, apply_op = table.updateSchema(), self._schema_op
        except Exception as exc:
            return {"ok": False, "op": "update", "error": _java_error(exc)}
        for i, op in enumerate(ops):
            try:
                apply_op(update, op)
            except Exception as exc:
                return {"ok": False, "op": i, "error": _java_error(exc)}
        try:
            update.commit()
        except Exception as exc:
            return {"ok": False, "op": "commit", "error": _java_error(exc)}
        current = table.operations().refresh()
        text = self.jvm.org.apache.iceberg.TableMetadataParser.toJson(current)
        return {"ok": True, "metadata": json.loads(text)}


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve), on ``ref``'s gateway."""
    tool = JavaEvolution(ref.gateway)
    try:
        return [tool.run(r) for r in requests]
    finally:
        tool.close()


def main(argv: list[str]) -> int:
    from jvm import OwnJvm

    requests_file = argv[argv.index("--requests") + 1]
    output = argv[argv.index("--output") + 1] if "--output" in argv else None
    with open(requests_file, encoding="utf-8") as fh:
        doc = json.load(fh)
    requests = doc["requests"] if isinstance(doc, dict) else doc
    stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with OwnJvm() as ref:
        results = serve(ref, requests)
    out = {"results": results}
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            json.dump(out, fh, ensure_ascii=False)
    else:
        json.dump(out, stdout, ensure_ascii=False)
        stdout.write("\n")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
