"""Parse metadata JSON files with the Iceberg Java reference implementation, in one JVM.

Usage (inside .venv-ref):
  python java_metadata.py canonical FILE...                 # Java's canonical JSON of each file
  python java_metadata.py compare ORIGINAL CANDIDATE ...    # pairs: does Java read them alike?
  python java_metadata.py --requests REQUESTS.json          # a batch ('-' reads stdin)
Options: --view / --table (force the metadata kind), --output FILE.

A request is {"op": "canonical", "source": S} or {"op": "compare", "original": S,
"candidate": S}, optionally with "kind": "table" | "view" | "auto" (the default: a document with
"view-uuid" is view metadata); a source S is a file path (plain or
gzip, as Java names them) or {"json": "<metadata text>"}.  REQUESTS.json holds a list of
requests or {"requests": [...]}.

One JSON document goes to stdout: {"java": {...versions}, "results": [...]}, one result per
request in order.  A file Java cannot read gives {"ok": false, "error": "<Java exception>"} and
the batch goes on.

Canonical:  TableMetadataParser.read(io, path) (or fromJson(text)), then toJson(metadata).
Result: {"ok", "canonical": <JSON value>, "input_equal": bool, "input_diff": [...]} where
input_diff lists where the input JSON differs from Java's canonical JSON (fields Java drops,
adds or rewrites).

Compare:  both sides are parsed and re-serialized by Java; they are "equal metadata" when the
two canonical JSON values are equal (objects compared as maps, arrays in order, numbers by
value).  Nothing is normalized: toJson never writes the metadata file's own location (the only
thing that differs between two files holding the same metadata), so no field needs ignoring.
Result: {"ok", "equal": bool, "diff": [{"path": JSON pointer, "original": v, "candidate": v}]}
with "<missing>" standing for an absent member or element.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from refspark import java_gateway

MISSING = "<missing>"
_ABSENT = object()
MAX_DIFFS = 200


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def json_diff(
    a: Any, b: Any, path: str = "", out: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Differences between two JSON values as (JSON pointer, left, right) records."""
    out = [] if out is None else out
    if len(out) >= MAX_DIFFS:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            json_diff(a.get(key, _ABSENT), b.get(key, _ABSENT), f"{path}/{_escape(key)}", out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            json_diff(
                a[i] if i < len(a) else _ABSENT, b[i] if i < len(b) else _ABSENT, f"{path}/{i}", out
            )
    elif not _same_scalar(a, b):
        out.append(
            {
                "path": path,
                "original": MISSING if a is _ABSENT else a,
                "candidate": MISSING if b is _ABSENT else b,
            }
        )
    return out


class JavaMetadata:
    """A JVM with Iceberg 1.10 loaded, parsing and printing metadata."""

    def __init__(self, gateway: Any | None = None) -> None:
        self.gateway = gateway if gateway is not None else java_gateway()
        jvm = self.gateway.jvm
        self.jvm = jvm
        conf = jvm.org.apache.hadoop.conf.Configuration()
        self.io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(conf)
        self.versions = {
            "iceberg": str(jvm.org.apache.iceberg.IcebergBuild.fullVersion()),
            "java": str(jvm.java.lang.System.getProperty("java.version")),
        }

    def _parse(self, source: Any, kind: str) -> tuple[Any, Any]:
        """Parse a source into (Java metadata, input JSON value or None if not JSON)."""
        jvm = self.jvm
        path = None if isinstance(source, dict) else os.path.abspath(str(source))
        try:
            raw = json.loads(source["json"]) if path is None else _read_json_file(path)
        except (OSError, ValueError):
            raw = None  # Java gives the error that counts
        if kind == "auto":
            kind = "view" if isinstance(raw, dict) and "view-uuid" in raw else "table"
        if path is None:
            text = source["json"]
            if kind == "view":
                return jvm.org.apache.iceberg.view.ViewMetadataParser.fromJson(text), raw
            return jvm.org.apache.iceberg.TableMetadataParser.fromJson(text), raw
        if kind == "view":
            meta = jvm.org.apache.iceberg.view.ViewMetadataParser.read(self.io.newInputFile(path))
        else:
            meta = jvm.org.apache.iceberg.TableMetadataParser.read(self.io, path)
        return meta, raw

    def canonical_json(self, source: Any, kind: str) -> tuple[Any, Any]:
        meta, raw = self._parse(source, kind)
        if "ViewMetadata" in str(meta.getClass().getName()):
            text = self.jvm.org.apache.iceberg.view.ViewMetadataParser.toJson(meta)
        else:
            text = self.jvm.org.apache.iceberg.TableMetadataParser.toJson(meta)
        return json.loads(text), raw

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op", "canonical")
        kind = request.get("kind", "auto")
        result: dict[str, Any] = {"op": op, "kind": kind}
        try:
            if op == "canonical":
                result["source"] = _describe(request["source"])
                try:
                    canonical, raw = self.canonical_json(request["source"], kind)
                except Exception as exc:
                    return {**result, "ok": False, "error": _java_error(exc)}
                diff = json_diff(raw, canonical)
                return {
                    **result,
                    "ok": True,
                    "canonical": canonical,
                    "input_equal": not diff,
                    "input_diff": diff,
                }
            if op == "compare":
                result["original"] = _describe(request["original"])
                result["candidate"] = _describe(request["candidate"])
                sides = {}
                for side in ("original", "candidate"):
                    try:
                        sides[side], _ = self.canonical_json(request[side], kind)
                    except Exception as exc:
                        return {**result, "ok": False, "error": f"{side}: {_java_error(exc)}"}
                diff = json_diff(sides["original"], sides["candidate"])
                out = {**result, "ok": True, "equal": not diff, "diff": diff}
                if request.get("include_canonical"):
                    out["original_canonical"] = sides["original"]
                    out["candidate_canonical"] = sides["candidate"]
                return out
            return {**result, "ok": False, "error": f"unknown op {op!r}"}
        except KeyError as exc:
            return {**result, "ok": False, "error": f"request lacks {exc}"}


def _read_json_file(path: str) -> Any:
    import gzip

    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def _describe(source: Any) -> str:
    return "<json>" if isinstance(source, dict) else str(source)


def _java_error(exc: Exception) -> str:
    """The Java exception and its causes, one per line ("caused by: ..."), without traces."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return f"{type(exc).__name__}: {exc}"
    try:
        parts = [str(java.toString())]
        cause = java.getCause()
        while cause is not None and len(parts) < 8:
            parts.append("caused by: " + str(cause.toString()))
            cause = cause.getCause()
        return "\n".join(parts)
    except Exception:
        return str(exc).splitlines()[0]


def _requests_from_argv(argv: list[str]) -> tuple[list[dict[str, Any]], str | None]:
    output = None
    kind = "auto"
    args: list[str] = []
    requests_file = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--output":
            output = argv[i + 1]
            i += 2
            continue
        if arg == "--requests":
            requests_file = argv[i + 1]
            i += 2
            continue
        if arg in ("--view", "--table"):
            kind = arg[2:]
        else:
            args.append(arg)
        i += 1
    if requests_file is not None:
        if requests_file == "-":
            doc = json.load(sys.stdin)
        else:
            with open(requests_file, encoding="utf-8") as fh:
                doc = json.load(fh)
        reqs = doc["requests"] if isinstance(doc, dict) else doc
        return [dict(r) for r in reqs], output
    if not args:
        raise SystemExit(__doc__)
    mode, rest = args[0], args[1:]
    if mode == "canonical":
        return [{"op": "canonical", "source": p, "kind": kind} for p in rest], output
    if mode == "compare":
        if len(rest) % 2:
            raise SystemExit("compare takes pairs: ORIGINAL CANDIDATE ...")
        return [
            {"op": "compare", "original": a, "candidate": b, "kind": kind}
            for a, b in zip(rest[::2], rest[1::2], strict=True)
        ], output
    raise SystemExit(f"unknown mode {mode!r}\n{__doc__}")


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """A batch of requests (see batch.Serve), on ``ref``'s gateway: one result each."""
    tool = JavaMetadata(ref.gateway)
    return [tool.run(r) for r in requests]


def main(argv: list[str]) -> int:
    from jvm import OwnJvm

    requests, output = _requests_from_argv(argv[1:])
    # Keep stdout for the JSON document: the JVM and any library print to stderr instead.
    stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with OwnJvm() as ref:
        results = serve(ref, requests)
        versions = JavaMetadata(ref.gateway).versions
    doc = {"java": versions, "results": results}
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
    else:
        json.dump(doc, stdout, ensure_ascii=False)
        stdout.write("\n")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
