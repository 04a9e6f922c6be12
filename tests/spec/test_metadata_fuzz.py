"""Fuzz table metadata reading: mutated documents raise only IcebergError subclasses.

Real documents (the v1/v2/v3 examples of test_table_metadata, plus Iceberg Java's files when
the reference fixtures are available) are mutated structurally (delete keys, change types,
insert garbage) and textually (truncate, flip and insert bytes). Whatever comes out of loading,
touching every lazy part, ``validate()``, writing and the history helpers must be a value or an
``IcebergError`` naming the file, never KeyError/TypeError/AttributeError/...
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icenb.errors import IcebergError, NotFound
from icenb.spec.table_metadata import (
    TableMetadata,
    table_metadata_from_json,
    table_metadata_to_json,
    to_json_string,
)
from tests.reference_fixtures import (  # noqa: F401  (pytest fixtures)
    JavaTables,
    java_tables,
    java_tables_dir,
)
from tests.spec.test_table_metadata import v1_doc, v2_doc, v3_doc

FILE = "s3://fuzz/metadata/00001-fuzz.metadata.json"
SEEDS: list[dict[str, Any]] = [v1_doc(), v2_doc(), v3_doc()]

GARBAGE: list[Any] = [None, True, False, 0, -1, 2**63, -(2**63) - 1, 1.5, "", "x", "-1",
                      [], [None], {}, {"a": 1}, [[[]]], {"type": "struct"}, 10**30]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (tuple of keys/indices) to a node of a JSON document."""
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _mutate(doc: Any, rnd: random.Random) -> Any:
    """Apply one structural mutation (the document is modified in place and returned)."""
    paths = _paths(doc)
    path = rnd.choice(paths)
    kind = rnd.choice(["delete", "retype", "insert", "duplicate"])
    if not path:
        return rnd.choice(GARBAGE) if kind == "retype" else doc
    parent = _get(doc, path[:-1])
    key = path[-1]
    if kind == "delete":
        del parent[key]
    elif kind == "retype":
        parent[key] = rnd.choice(GARBAGE)
    elif kind == "insert":
        target = _get(doc, path)
        if isinstance(target, dict):
            target[rnd.choice(["snapshot-id", "type", "fields", "zz", "operation", "-"])] = (
                rnd.choice(GARBAGE))
        elif isinstance(target, list):
            target.insert(rnd.randint(0, len(target)), rnd.choice(GARBAGE))
        else:
            parent[key] = [target]
    else:  # duplicate a sibling value under this key (e.g. an id clash)
        siblings = list(parent.values()) if isinstance(parent, dict) else list(parent)
        parent[key] = json.loads(json.dumps(rnd.choice(siblings)))
    return doc


def _mangle_text(text: bytes, rnd: random.Random) -> bytes:
    data = bytearray(text)
    kind = rnd.choice(["truncate", "flip", "insert"])
    if kind == "truncate":
        return bytes(data[: rnd.randint(0, len(data))])
    if kind == "flip":
        for _ in range(rnd.randint(1, 5)):
            i = rnd.randrange(len(data))
            data[i] ^= 1 << rnd.randrange(8)
        return bytes(data)
    i = rnd.randint(0, len(data))
    return bytes(data[:i]) + bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4))) + bytes(
        data[i:])


def _exercise(md: TableMetadata) -> None:
    """Touch everything a user could touch; each step may only raise an IcebergError."""
    steps: list[Callable[[], Any]] = [
        lambda: list(md.snapshots),
        lambda: list(md.snapshot_log),
        lambda: list(md.metadata_log),
        lambda: list(md.statistics),
        lambda: list(md.partition_statistics),
        md.validate,
        lambda: table_metadata_to_json(md),
        lambda: to_json_string(md, indent=2),
        md.current_snapshot,
        lambda: md.snapshot_for_ref("main"),
        lambda: repr(md),
        lambda: (md.schema, md.spec, md.sort_order),
    ]
    for entry in list(md.snapshot_log)[:3] if _safe(lambda: list(md.snapshot_log)) else []:
        steps.append(lambda e=entry: md.snapshot_as_of(e.timestamp_ms))
    for raw in md.snapshots.raw[:3] if hasattr(md.snapshots, "raw") else []:
        sid = raw.get("snapshot-id") if isinstance(raw, dict) else None
        if isinstance(sid, int):
            steps.append(lambda s=sid: list(md.ancestors(s)))
            steps.append(lambda s=sid: md.schema_for_snapshot(s))
            steps.append(lambda s=sid: md.is_ancestor(s, s))
    for step in steps:
        try:
            step()
        except NotFound:
            pass
        except IcebergError as e:
            assert e.file == FILE, f"error without the file name: {e!r}"


def _safe(fn: Callable[[], Any]) -> bool:
    try:
        fn()
        return True
    except IcebergError:
        return False


def _load_and_exercise(data: bytes | dict[str, Any]) -> None:
    try:
        md = table_metadata_from_json(data, file=FILE)
    except IcebergError as e:
        assert e.file == FILE, f"error without the file name: {e!r}"
        return
    _exercise(md)


FUZZ = settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)


@FUZZ
@given(st.sampled_from(range(len(SEEDS))), st.integers(1, 4), st.randoms(use_true_random=False))
def test_structural_mutations(seed: int, count: int, rnd: random.Random) -> None:
    doc: Any = json.loads(json.dumps(SEEDS[seed]))
    for _ in range(count):
        doc = _mutate(doc, rnd)
    _load_and_exercise(json.dumps(doc).encode())
    if isinstance(doc, dict):
        _load_and_exercise(doc)


@FUZZ
@given(st.sampled_from(range(len(SEEDS))), st.randoms(use_true_random=False))
def test_text_mutations(seed: int, rnd: random.Random) -> None:
    text = json.dumps(SEEDS[seed], indent=1).encode()
    _load_and_exercise(_mangle_text(text, rnd))


@settings(max_examples=200, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(
        st.sampled_from(["format-version", "location", "schemas", "snapshots", "refs",
                         "current-snapshot-id", "table-uuid", "fields", "snapshot-id", "x"]),
        c, max_size=5),
    max_leaves=20))
def test_random_json(doc: Any) -> None:
    _load_and_exercise(json.dumps(doc).encode())


def test_deeply_nested_json() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    _load_and_exercise(deep)
    nested: Any = {"type": "struct", "fields": []}
    for i in range(3000):
        nested = {"type": "list", "element-id": i + 10, "element": nested,
                  "element-required": False}
    doc = v2_doc()
    doc["schemas"][0]["fields"][1]["type"] = nested
    _load_and_exercise(json.dumps(doc).encode() if _dumpable(doc) else b"{}")


def _dumpable(doc: Any) -> bool:
    try:
        json.dumps(doc)
        return True
    except RecursionError:
        return False


def test_java_metadata_files_survive_mutation(java_tables: JavaTables) -> None:  # noqa: F811
    """The same mutations applied to every kind of file Iceberg Java wrote."""
    rnd = random.Random(1234)
    seen: set[tuple[str, int]] = set()
    for f in java_tables.metadata_files(kind="table"):
        if (f.name, f.format_version) in seen:  # one file per table and version is plenty
            continue
        seen.add((f.name, f.format_version))
        data = f.path.read_bytes()
        text = gzip.decompress(data) if f.gzip else data
        for _ in range(10):
            doc: Any = json.loads(text)
            for _ in range(rnd.randint(1, 3)):
                doc = _mutate(doc, rnd)
            _load_and_exercise(json.dumps(doc).encode())
            _load_and_exercise(_mangle_text(text, rnd))
