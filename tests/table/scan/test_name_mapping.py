"""Name mapping at every level (spec: "Column Projection", Appendix C "Name Mapping
Serialization"): a data file written without field ids (plain pyarrow, as a Hive migration
registers it) reads through ``schema.name-mapping.default`` - struct fields by name, a list's
``element``, a map's ``key`` and ``value`` through their ``fields`` lists, as Java's
``ApplyNameMapping`` does; one case is checked against Java in test_name_mapping_java.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.spec.manifest import DataFile, FileFormat
from icenb.spec.properties import NAME_MAPPING
from icenb.table.commit.producer import FastAppend, commit_snapshot
from icenb.table.table import Table

DDL = ("id long, addr struct<city: string>, tags array<string>, "
       "pts array<struct<x: int, y: int>>, m map<string, struct<city: string>>")

#: The file's names differ from the table's at every level: only the mapping links them.
MAPPING = [
    {"field-id": 1, "names": ["id"]},
    {"field-id": 2, "names": ["addr"], "fields": [{"field-id": 6, "names": ["city", "town"]}]},
    {"field-id": 3, "names": ["tags", "labels"], "fields": [{"field-id": 7, "names": ["element"]}]},
    {"field-id": 4, "names": ["pts", "points"], "fields": [
        {"field-id": 8, "names": ["element"], "fields": [
            {"field-id": 9, "names": ["x", "px"]}, {"field-id": 10, "names": ["y", "py"]}]}]},
    {"field-id": 5, "names": ["m", "kv"], "fields": [
        {"field-id": 11, "names": ["key"]},
        {"field-id": 12, "names": ["value"], "fields": [
            {"field-id": 13, "names": ["city", "town"]}]}]},
]

MAPPED = [
    {"id": 1, "addr": {"city": "paris"}, "tags": ["a", "b"], "pts": [{"x": 1, "y": 2}],
     "m": [("home", {"city": "lyon"})]},
    {"id": 2, "addr": None, "tags": [], "pts": None, "m": [("work", {"city": None})]},
]


def legacy_file(large: bool) -> pa.Table:
    """The rows of :data:`MAPPED` under the file's own names, without field ids; ``large``:
    64-bit list offsets and strings, as Polars writes them (pyarrow keeps them in the footer)."""
    s = pa.large_string() if large else pa.string()
    lst = pa.large_list if large else pa.list_
    point = pa.struct([("px", pa.int32()), ("py", pa.int32())])
    return pa.table({
        "id": pa.array([1, 2], pa.int64()),
        "addr": pa.array([{"town": "paris"}, None], pa.struct([("town", s)])),
        "labels": pa.array([["a", "b"], []], lst(s)),
        "points": pa.array([[{"px": 1, "py": 2}], None], lst(point)),
        "kv": pa.array([[("home", {"town": "lyon"})], [("work", {"town": None})]],
                       pa.map_(s, pa.struct([("town", s)]))),
    })


def register(wh: Any, name: str, path: str, fmt: FileFormat, rows: int) -> Table:
    """A table with the file registered in place (a metadata-only migration)."""
    t: Table = wh.create_table(name, DDL)
    append = FastAppend(t.catalog, t.identifier, t.io)
    append.add_files([DataFile(file_path=path, file_format=fmt, partition=(), record_count=rows,
                               file_size_in_bytes=os.path.getsize(path))])
    commit_snapshot(t, append)
    return t.refresh()


def write(root: Path, fmt: FileFormat, large: bool) -> str:
    data = legacy_file(large)
    path = str(root / f"legacy-{int(large)}.{fmt.value.lower()}")
    if fmt == FileFormat.ORC:
        po.write_table(data, path)
    else:
        pq.write_table(data, path)
    return path


@pytest.mark.parametrize(("fmt", "large"), [
    (FileFormat.PARQUET, False), (FileFormat.PARQUET, True), (FileFormat.ORC, False)])
def test_nested_fields_read_through_the_mapping_at_every_level(
        tmp_path: Path, fmt: FileFormat, large: bool) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    path = write(tmp_path, fmt, large)
    t = register(wh, "db.legacy", path, fmt, 2)
    # without a mapping nothing matches: every column reads null (spec's last rule)
    assert all(v is None for r in t.to_arrow().to_pylist() for v in r.values())
    t.set_properties({NAME_MAPPING: json.dumps(MAPPING)})
    assert t.refresh().to_arrow().to_pylist() == MAPPED


def test_an_unmapped_nested_field_reads_null_and_the_rest_still_maps(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    t = register(wh, "db.legacy", write(tmp_path, FileFormat.PARQUET, True),
                 FileFormat.PARQUET, 2)
    partial = json.loads(json.dumps(MAPPING))
    partial[3]["fields"][0]["fields"] = [{"field-id": 9, "names": ["x", "px"]}]  # no y
    del partial[4]["fields"][1]["fields"]  # the map value's struct child: no mapping
    t.set_properties({NAME_MAPPING: json.dumps(partial)})
    rows = t.refresh().to_arrow().to_pylist()
    assert rows[0]["pts"] == [{"x": 1, "y": None}]
    assert rows[0]["m"] == [("home", {"city": None})]
    assert rows[0]["addr"] == {"city": "paris"} and rows[0]["tags"] == ["a", "b"]
