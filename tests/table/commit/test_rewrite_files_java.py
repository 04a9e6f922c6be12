"""Data file compaction against Iceberg Java 1.10 (Spark 3.5), one batch of the reference JVM.

Twin tables are written by icenb with the same appends and the same merge-on-read delete; icenb
compacts one (``Table.rewrite_data_files``) and Java's ``rewrite_data_files`` procedure the
other, with ``min-input-files`` 2. Java reads icenb's result as icenb does (rows, and on v3
``_row_id`` / ``_last_updated_sequence_number``), both twins hold the same rows with the same
lineage, and both compactions rewrite the same files into the same number of files, remove the
same v3 DVs and write the same ``replace`` summary counts.

Differences from Java, on purpose: on v2, Java 1.10 keeps the position delete files of the
rewritten files (dangling, until its ``remove-dangling-deletes`` option rewrites them away in a
second commit); icenb removes the file-scoped ones in the ``replace`` commit itself. Java's
``binpack`` writes rows in the order it reads them, icenb's writer in the table's sort order
(the same files' rows, other positions), so the files' bytes differ. Java splits a large
group over Spark tasks, icenb writes a group in one run. The v3 ``next-row-id`` after the
``replace`` snapshot is Java's: both assign ids to the rows of the new manifests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.table import Table
from icenb.table.commit.rewrite_data_files import (
    RewriteDataFilesResult,
    execute_rewrite,
    plan_rewrite,
)
from icenb.table.warehouse import Warehouse
from tests.reference_fixtures import run_reference_batch

DDL = "id long not null, part int, s string"
LINEAGE = ["_row_id", "_last_updated_sequence_number"]
MIN2 = "options => map('min-input-files','2')"
#: (name, format version, how the twins are made, icenb's call, Java's CALL arguments)
CASES: list[tuple[str, int, str, dict[str, Any], str]] = [
    ("v2", 2, "deletes", {"min_input_files": 2}, MIN2),
    ("v3", 3, "deletes", {"min_input_files": 2}, MIN2),
    ("v3_sort", 3, "deletes",
     {"min_input_files": 2, "strategy": "sort", "sort_order": "id DESC"},
     "strategy => 'sort', sort_order => 'id DESC', " + MIN2),
    ("v2_equality", 2, "equality", {"min_input_files": 2}, MIN2),
    ("v2_evolved", 2, "evolved", {"min_input_files": 2}, MIN2),
    ("v2_all", 2, "single", {"rewrite_all": True}, "options => map('rewrite-all','true')"),
]
COUNTS = ("added-data-files", "deleted-data-files", "added-records", "deleted-records",
          "total-records", "total-data-files")


def _append(t: Table, i: int) -> None:
    t.append([{"id": i * 10 + j, "part": j % 2, "s": f"r{i}-{j}"} for j in range(10)])


def _twin(wh: Warehouse, name: str, version: int, kind: str) -> Table:
    """Twins made the same way: ``deletes`` 4 appends and a merge-on-read delete,
    ``equality`` equality deletes (and a later append), ``evolved`` 3 unpartitioned files
    then 2 appends after partitioning by ``part``, ``single`` one file per partition."""
    t = wh.create_table(f"db.{name}", DDL, format_version=version,
                        partition_by=None if kind == "evolved" else "part",
                        properties={"write.delete.mode": "merge-on-read"})
    for i in range(1 if kind == "single" else 3 if kind == "evolved" else 4):
        _append(t, i)
    if kind == "deletes":
        t.delete("id IN (3, 12)")
    elif kind == "equality":
        t.delete_by_key([{"id": 5, "part": 1}, {"id": 22, "part": 0}], on=["id", "part"])
        _append(t, 9)
    elif kind == "evolved":
        with t.update_spec() as u:
            u.add_field("part")
        _append(t, 7)
        _append(t, 8)
    return t


def _columns(version: int) -> list[str]:
    return ["id", "part", "s", *(LINEAGE if version >= 3 else [])]


def _rows(t: Table) -> list[list[Any]]:
    cols = _columns(t.metadata.format_version)
    return sorted([r[c] for c in cols] for r in t.scan(columns=cols).to_arrow().to_pylist())


def _raced(wh: Warehouse) -> None:
    """A compaction planned before an equality delete of id 7 and a later append commit: the
    delete must stay, its rows deleted in the compacted files (which take the starting, older
    data sequence number)."""
    t = _twin(wh, "i_raced", 2, "single")
    for i in (1, 2):
        _append(t, i)
    plan = plan_rewrite(t.io, t.metadata, min_input_files=2)
    wh.table("db.i_raced").delete_by_key([{"id": 7, "part": 1}], on=["id", "part"])
    wh.table("db.i_raced").append([{"id": 1000, "part": 5, "s": "late"}])
    execute_rewrite(t, plan)


@dataclass
class Scenario:
    wh: Warehouse
    results: dict[str, RewriteDataFilesResult]
    before: dict[str, list[list[Any]]]
    sql: dict[str, Any]
    reads: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    root: Path = tmp_path_factory.mktemp("rewrite_java")
    wh = icenb.warehouse(root / "wh", name="hc", catalog="filesystem")
    results: dict[str, RewriteDataFilesResult] = {}
    before: dict[str, list[list[Any]]] = {}
    statements = []
    for name, version, kind, kwargs, call in CASES:
        _twin(wh, f"j_{name}", version, kind)
        t = _twin(wh, f"i_{name}", version, kind)
        before[name] = _rows(t)
        results[name] = t.rewrite_data_files(**kwargs)
        statements.append(f"CALL hc.system.rewrite_data_files(table => 'db.j_{name}', {call})")
    sql = run_reference_batch("java_hadoop_catalog.py", [
        {"op": "sql", "warehouse": str(wh.location), "statements": statements}])[0]
    _raced(wh)
    keys, requests = ["i_raced"], [{"location": wh.table("db.i_raced").location,
                                    "columns": _columns(2)}]
    for name, version, _, _, _ in CASES:
        for prefix in ("i", "j"):
            keys.append(f"{prefix}_{name}")
            requests.append({"location": wh.table(f"db.{prefix}_{name}").location,
                             "columns": _columns(version)})
    reads = run_reference_batch("java_hadoop_catalog.py", requests)
    return Scenario(wh, results, before, sql, dict(zip(keys, reads, strict=True)))


def _java(scenario: Scenario, key: str) -> list[list[Any]]:
    got = scenario.reads[key]
    assert got["ok"], got
    return sorted(got["rows"])


def test_java_ran_its_compactions(scenario: Scenario) -> None:
    assert scenario.sql["ok"], scenario.sql


def test_java_reads_a_compaction_raced_by_an_equality_delete(scenario: Scenario) -> None:
    rows = _rows(scenario.wh.table("db.i_raced"))
    assert _java(scenario, "i_raced") == rows
    assert 7 not in {r[0] for r in rows} and len(rows) == 30


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_java_reads_icenb_compaction_and_both_twins_agree(scenario: Scenario,
                                                          name: str) -> None:
    icenb_twin = scenario.wh.table(f"db.i_{name}")
    java_twin = scenario.wh.table(f"db.j_{name}")
    rows = _rows(icenb_twin)
    assert rows == scenario.before[name]  # compaction changes no row (nor its lineage)
    assert _java(scenario, f"i_{name}") == rows
    assert _rows(java_twin) == _java(scenario, f"j_{name}") == rows


def _data_sequence_numbers(t: Table) -> list[int]:
    """The data sequence numbers of the live data files (spec: Sequence Number Inheritance)."""
    return sorted(e["sequence_number"] for e in t.inspect.entries().to_pylist()
                  if e["status"] != 2 and e["data_file"]["content"] == 0)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_same_files_rewritten_as_java(scenario: Scenario, name: str) -> None:
    """Java's procedure result is its snapshot's summary: the same counts on both twins, the
    new files take the same (starting) sequence number, v3 ``next-row-id`` is Java's."""
    result = scenario.results[name]
    java_twin = scenario.wh.table(f"db.j_{name}")
    icenb_twin = scenario.wh.table(f"db.i_{name}")
    js, its = java_twin.current_snapshot, icenb_twin.current_snapshot
    assert js is not None and its is not None and result.snapshot is not None
    assert js.summary is not None and its.summary is not None
    assert str(js.summary.operation) == str(its.summary.operation) == "replace"
    assert {k: js.summary.get(k) for k in COUNTS} == {k: its.summary.get(k) for k in COUNTS}
    assert result.rewritten_data_files_count == int(js.summary["deleted-data-files"])
    assert result.added_data_files_count == int(js.summary["added-data-files"])
    assert result.removed_delete_files_count == int(its.summary.get("removed-delete-files", 0))
    removed = js.summary.get("removed-delete-files")
    if name == "v2":
        # Java 1.10 keeps v2 position delete files of rewritten files (dangling until its
        # remove-dangling-deletes option); icenb removes those in the replace commit
        assert removed is None and its.summary["removed-delete-files"] == "2"
    else:  # v3: both remove the DVs of rewritten files; older equality deletes both drop
        assert removed == its.summary.get("removed-delete-files")
    assert js.sequence_number == its.sequence_number
    assert _data_sequence_numbers(java_twin) == _data_sequence_numbers(icenb_twin)
    assert java_twin.metadata.next_row_id == icenb_twin.metadata.next_row_id


def test_the_figures(scenario: Scenario) -> None:
    """Small tables, files before -> after (also in the report)."""
    got = {name: (r.rewritten_data_files_count, r.added_data_files_count)
           for name, r in scenario.results.items()}
    assert got == {"v2": (8, 2), "v3": (8, 2), "v3_sort": (8, 2), "v2_equality": (10, 2),
                   "v2_evolved": (7, 4), "v2_all": (2, 2)}


def test_sorted_rewrite_writes_files_in_the_order(scenario: Scenario) -> None:
    t = scenario.wh.table("db.i_v3_sort")
    files = t.inspect.data_files().to_pylist()
    assert len(files) == 2
    for f in files:
        ids = [r["id"] for r in t.scan(f"part = {f['partition']['part']}",
                                       columns=["id"]).to_arrow().to_pylist()]
        assert ids == sorted(ids, reverse=True)
