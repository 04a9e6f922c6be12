"""Row lineage against Iceberg Java 1.10 (Spark 3.5), one JVM for the module.

Twin v3 tables are written by icenb with the same appends (so their rows have the same ids);
Java runs an ``UPDATE`` / ``DELETE`` / ``MERGE`` on one twin (copy-on-write and merge-on-read)
and icenb the same change on the other. Both engines read both twins with ``_row_id`` and
``_last_updated_sequence_number``: each reads what the other wrote identically, and icenb's
rewrite gives every row the lineage Java's gives it. A random sequence of icenb rewrites (as the
model test runs) is read by Java too, snapshot by snapshot.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.spec.properties import WRITE_DELETE_MODE, WRITE_MERGE_MODE, WRITE_UPDATE_MODE
from icenb.table import Table
from icenb.table.warehouse import Warehouse
from tests.reference_fixtures import run_reference_batch
from tests.table.row_level.test_row_lineage import DDL, LINEAGE, OPS, Model, _check, _step

COLUMNS = ["id", "v", *LINEAGE]

#: (name, Java statement on the table ``{t}``, icenb's same change, write mode)
CHANGES: list[tuple[str, str, Any, str]] = [
    ("update_cow", "UPDATE {t} SET v = 'B' WHERE id IN (2, 6)",
     lambda t: t.update({"v": "B"}, "id IN (2, 6)"), "copy-on-write"),
    ("update_mor", "UPDATE {t} SET v = 'B' WHERE id IN (2, 6)",
     lambda t: t.update({"v": "B"}, "id IN (2, 6)"), "merge-on-read"),
    ("delete_cow", "DELETE FROM {t} WHERE id = 3",
     lambda t: t.delete("id = 3"), "copy-on-write"),
    ("delete_mor", "DELETE FROM {t} WHERE id = 3",
     lambda t: t.delete("id = 3"), "merge-on-read"),
]
#: Java only: icenb has no MERGE; icenb reads Java's result as Java does.
MERGES = [("merge_cow", "copy-on-write"), ("merge_mor", "merge-on-read")]
MERGE = ("MERGE INTO {t} t USING (SELECT 5 AS id, 1 AS part, 'E' AS v UNION ALL "
         "SELECT 9, 0, 'i') u ON t.id = u.id WHEN MATCHED THEN UPDATE SET v = u.v "
         "WHEN NOT MATCHED THEN INSERT *")


def _twin(wh: Warehouse, name: str, mode: str, format_version: int = 3) -> Table:
    t = wh.create_table(f"db.{name}", DDL, format_version=format_version, properties={
        WRITE_UPDATE_MODE: mode, WRITE_DELETE_MODE: mode, WRITE_MERGE_MODE: mode})
    t.append([{"id": i, "part": 0, "v": c} for i, c in enumerate("abcd", 1)])
    t.append([{"id": i, "part": 1, "v": c} for i, c in ((5, "e"), (6, "f"))])
    return t


def _rows(t: Table, snapshot_id: int | None = None) -> list[list[Any]]:
    scan = t.scan(columns=COLUMNS, snapshot_id=snapshot_id)
    return sorted([r[c] for c in COLUMNS] for r in scan.to_arrow().to_pylist())


@dataclass
class Scenario:
    wh: Warehouse
    java_first: list[dict[str, Any]]
    java_reads: dict[tuple[str, int | None], dict[str, Any]]
    history: list[int]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    root: Path = tmp_path_factory.mktemp("lineage_java")
    wh = icenb.warehouse(root / "wh", name="hc", catalog="filesystem")
    statements = []
    for name, sql, change, mode in CHANGES:
        _twin(wh, f"j_{name}", mode)
        change(_twin(wh, f"i_{name}", mode))
        statements.append(sql.format(t=f"hc.db.j_{name}"))
    for name, mode in MERGES:
        _twin(wh, f"j_{name}", mode)
        statements.append(MERGE.format(t=f"hc.db.j_{name}"))
    # the first rewrite after an upgrade from v2: rows had no ids yet
    for prefix in ("j", "i"):
        _twin(wh, f"{prefix}_upgraded", "copy-on-write", format_version=2).upgrade(3)
    wh.table("db.i_upgraded").update({"v": "B"}, "id IN (2, 6)")
    statements.append("UPDATE hc.db.j_upgraded SET v = 'B' WHERE id IN (2, 6)")
    # a random sequence of every icenb rewrite (the model test's steps)
    rng = random.Random(7)
    t = wh.create_table("db.random", DDL, format_version=3, partition_by="part")
    model = Model()
    history = []
    for i in range(14):
        op = "append" if i < 2 else OPS[i % len(OPS)]
        fresh, modified = _step(t, model, rng, op)
        _check(t, model, fresh, modified, op)
        assert t.current_snapshot is not None
        history.append(t.current_snapshot.snapshot_id)
    first = run_reference_batch("java_hadoop_catalog.py", [
        {"op": "sql", "warehouse": str(wh.location), "statements": statements}])
    keys: list[tuple[str, int | None]] = []
    requests: list[dict[str, Any]] = []
    for name in wh.tables("db"):
        short = name.split(".")[-1]
        table = wh.table(name)
        for sid in (history if short == "random" else [None]):
            keys.append((short, sid))
            requests.append({"location": table.location, "columns": COLUMNS,
                             "snapshot_id": sid})
    reads = run_reference_batch("java_hadoop_catalog.py", requests)
    return Scenario(wh, first, dict(zip(keys, reads, strict=True)), history)


def _java(scenario: Scenario, name: str, sid: int | None = None) -> list[list[Any]]:
    got = scenario.java_reads[(name, sid)]
    assert got["ok"], got
    return sorted(got["rows"])


def test_java_ran_its_rewrites(scenario: Scenario) -> None:
    assert scenario.java_first[0]["ok"], scenario.java_first[0]


@pytest.mark.parametrize("name", [c[0] for c in CHANGES])
def test_icenb_rewrites_as_java_does_and_each_reads_the_other(scenario: Scenario,
                                                             name: str) -> None:
    java_twin = scenario.wh.table(f"db.j_{name}")
    icenb_twin = scenario.wh.table(f"db.i_{name}")
    assert len(java_twin.snapshots) == len(icenb_twin.snapshots) == 3
    java_rows = _java(scenario, f"j_{name}")
    # icenb reads Java's rewrite as Java does, and Java icenb's
    assert _rows(java_twin) == java_rows
    assert _java(scenario, f"i_{name}") == _rows(icenb_twin)
    # the same change gives every row the same lineage in both engines
    assert _rows(icenb_twin) == java_rows
    if name.startswith("update"):
        assert [r for r in java_rows if r[0] == 2] == [[2, "B", 1, 3]]


@pytest.mark.parametrize("name", [m[0] for m in MERGES])
def test_icenb_reads_java_merges_as_java_does(scenario: Scenario, name: str) -> None:
    t = scenario.wh.table(f"db.j_{name}")
    rows = _rows(t)
    assert rows == _java(scenario, f"j_{name}")
    by_id = {r[0]: r for r in rows}
    assert by_id[5][1:] == ["E", 4, 3]  # matched: id kept, sequence number of the merge
    assert by_id[1][1:] == ["a", 0, 1]


def test_java_reads_icenb_rewrites_snapshot_by_snapshot(scenario: Scenario) -> None:
    t = scenario.wh.table("db.random")
    for sid in scenario.history:
        assert _java(scenario, "random", sid) == _rows(t, sid), sid


def test_the_first_rewrite_after_an_upgrade_numbers_rows_as_java_does(
        scenario: Scenario) -> None:
    """Before the first commit after the upgrade, rows read no lineage ("Row Lineage for
    Upgraded Tables"): Java writes the rows its rewrite moves as new rows (the rewrite's
    sequence number), and so does icenb; every row gets an id (which id is the writer's
    choice of file order). Files the rewrite does not touch keep their own sequence number."""
    java_rows = _java(scenario, "j_upgraded")
    icenb_rows = _rows(scenario.wh.table("db.i_upgraded"))
    assert _rows(scenario.wh.table("db.j_upgraded")) == java_rows
    assert _java(scenario, "i_upgraded") == icenb_rows

    def without_ids(rows: list[list[Any]]) -> list[list[Any]]:
        return [[r[0], r[1], r[3]] for r in rows]

    assert without_ids(icenb_rows) == without_ids(java_rows)
    assert sorted(r[2] for r in icenb_rows) == sorted(r[2] for r in java_rows) == list(range(6))
    assert [r[3] for r in icenb_rows] == [3, 3, 3, 3, 3, 3]
