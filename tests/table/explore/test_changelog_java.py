"""Table.changes against Iceberg Java 1.10's ``create_changelog_view`` (Spark 3.5), one JVM.

Tables written by Java (Spark SQL: inserts, copy-on-write UPDATE / DELETE / MERGE, dynamic and
static INSERT OVERWRITE, ``rewrite_data_files``) and by icenb (appends, copy-on-write deletes,
updates and overwrites, dynamic overwrites, a rollback), v1-v3, in Hadoop-layout warehouses both
open. For every table, whole histories, single snapshots and middle ranges: icenb's rows equal
Java's, without update pairing and with ``identifier_columns`` (``_row_id`` dropped: Java has no
such column, and icenb's own pairing by row id is turned off with ``identifier_columns=()``).

Where Java refuses: exactly the ranges in which a (non-``replace``) snapshot lists a delete
manifest (after merge-on-read deletes, updates and merges, deletion vectors, upserts, until an
overwrite drops the delete files) fail in Java with "Delete files are currently not supported in
changelog scans"; icenb's changelog of those ranges is checked against the snapshots' rows
(tests/table/explore/test_changelog.py's ``check``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.table import Table
from tests.reference.java_read import normalize
from tests.reference_fixtures import run_reference_batch
from tests.table.explore.test_changelog import check

REFUSED = "Delete files are currently not supported in changelog scans"
COW = ("'write.delete.mode'='copy-on-write', 'write.update.mode'='copy-on-write', "
       "'write.merge.mode'='copy-on-write'")


def _java_statements(name: str, version: int, parted: bool, mode: str = COW) -> list[str]:
    t = f"hc.db.{name}"
    part = "PARTITIONED BY (p) " if parted else ""
    return [
        f"CREATE TABLE {t} (id bigint, p int, s string) USING iceberg {part}"
        f"TBLPROPERTIES ('format-version'='{version}', {mode})",
        f"INSERT INTO {t} VALUES (1, 0, 'a'), (2, 1, 'b'), (3, 0, 'c'), (4, 1, 'd')",
        f"INSERT INTO {t} VALUES (5, 2, 'e'), (6, 2, 'f')",
        f"UPDATE {t} SET s = 'B' WHERE id = 2",
        f"DELETE FROM {t} WHERE id = 3",
        f"MERGE INTO {t} t USING (SELECT 1 id, 0 p, 'A' s UNION ALL SELECT 9, 1, 'z') u "
        "ON t.id = u.id WHEN MATCHED THEN UPDATE SET s = u.s WHEN NOT MATCHED THEN INSERT *",
        f"CALL hc.system.rewrite_data_files(table => 'db.{name}', "
        "options => map('min-input-files', '1'))",
        f"INSERT OVERWRITE {t} SELECT id, p, concat(s, '!') FROM {t} WHERE p = 2",
        f"INSERT INTO {t} VALUES (7, 0, 'g'), (7, 0, 'g')",
    ]


JAVA_TABLES = {"j2": (2, False), "j2p": (2, True), "j3": (3, False)}
MOR = ("'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
       "'write.merge.mode'='merge-on-read'")


def _icenb_table(t: Table) -> None:
    def rows(*specs: tuple[int, int, str]) -> pa.Table:
        ids, ps, ss = zip(*specs, strict=True)
        return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array(ps, pa.int32()),
                         "s": pa.array(ss, pa.string())})

    t.append(rows((1, 0, "a"), (2, 1, "b"), (3, 0, "c"), (4, 1, "d")))
    t.append(rows((5, 2, "e"), (6, 2, "f")))
    t.update({"s": "B"}, "id = 2", mode="copy-on-write")
    t.delete("id = 3", mode="copy-on-write")
    kept = t.current_snapshot
    t.overwrite(rows((1, 0, "A"), (9, 1, "z")), "id = 1")
    assert kept is not None
    t.rollback_to(kept.snapshot_id)
    t.dynamic_partition_overwrite(rows((5, 2, "e!"), (8, 2, "h")))
    t.append(rows((7, 0, "g"), (7, 0, "g")))


ICENB_TABLES = {"i1": (1, []), "i2": (2, ["p"]), "i3": (3, ["bucket(2, id)"])}


@dataclass
class Case:
    """One table both sides read: where, its name there, its main line of snapshots."""

    warehouse: Path
    name: str  # "db.j2" (Java wrote it) or "ice.i2" (icenb did)
    line: list[int]

    def table(self) -> Table:
        return icenb.warehouse(self.warehouse, catalog="filesystem").table(self.name)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    """Java's tables (namespace ``db``) and icenb's (``ice``) in one Hadoop-layout warehouse
    (a batch's Spark session keeps the catalog it first opened)."""
    root = tmp_path_factory.mktemp("wh")
    statements = ["CREATE NAMESPACE IF NOT EXISTS hc.db"]
    for name, (version, parted) in JAVA_TABLES.items():
        statements += _java_statements(name, version, parted)
    statements += _java_statements("jmor", 2, False, MOR)
    [built] = run_reference_batch("java_changelog.py", [
        {"op": "sql", "warehouse": str(root), "statements": statements,
         "tables": [*(f"db.{n}" for n in JAVA_TABLES), "db.jmor"]}])
    assert built["ok"], built
    out = {name: Case(root, f"db.{name}", built["snapshots"][f"db.{name}"])
           for name in [*JAVA_TABLES, "jmor"]}
    wh = icenb.warehouse(root, catalog="filesystem")
    for name, (version, parted) in ICENB_TABLES.items():
        t = wh.create_table(f"ice.{name}", "id long, p int, s string", format_version=version,
                            partition_by=parted)
        _icenb_table(t)
        out[name] = Case(root, f"ice.{name}", _line(t))
    t = wh.create_table("ice.imor", "id long, p int, s string", format_version=3,
                        properties={"write.delete.mode": "merge-on-read"})
    _icenb_table(t)
    t.upsert(pa.table({"id": pa.array([4], pa.int64()), "p": pa.array([1], pa.int32()),
                       "s": ["up"]}), on="id")
    out["imor"] = Case(root, "ice.imor", _line(t))
    return out


def _line(t: Table) -> list[int]:
    snap = t.current_snapshot
    assert snap is not None
    return [s.snapshot_id for s in t.metadata.ancestors(snap.snapshot_id)][::-1]


def _ranges(line: list[int]) -> list[tuple[int | None, int | None]]:
    """The whole history, each of the first snapshots alone, and a middle range."""
    out: list[tuple[int | None, int | None]] = [(None, None), (None, line[0])]
    out += list(pairwise(line))
    if len(line) > 3:
        out.append((line[1], line[-2]))
    return out


Key = tuple[str, Any, Any, Any]


@pytest.fixture(scope="module")
def java(cases: dict[str, Case]) -> dict[Key, dict[str, Any]]:
    requests: dict[Key, dict[str, Any]] = {}
    for name, case in cases.items():
        for start, end in _ranges(case.line):
            for ids in (None, ("id",)):
                requests[(name, start, end, ids)] = {
                    "op": "changelog", "warehouse": str(case.warehouse),
                    "table": case.name, "start": start, "end": end,
                    "identifier_columns": None if ids is None else list(ids)}
    return dict(zip(requests, run_reference_batch("java_changelog.py", list(requests.values())),
                    strict=True))


def _ours(t: Table, start: int | None, end: int | None, ids: tuple[str, ...] | None
          ) -> list[list[Any]]:
    changes = t.changes(start, end, identifier_columns=ids or ()).to_arrow()
    if "_row_id" in changes.column_names:
        changes = changes.drop_columns(["_row_id"])
    return sorted(([normalize(v) for v in r.values()] for r in changes.to_pylist()), key=repr)


@pytest.mark.parametrize("name", [*JAVA_TABLES, *ICENB_TABLES])
def test_changes_equal_javas_changelog_view(cases: dict[str, Case],
                                            java: dict[Key, dict[str, Any]], name: str) -> None:
    case = cases[name]
    t = case.table()
    compared = 0
    for (table, start, end, ids), theirs in java.items():
        if table != name:
            continue
        assert theirs["ok"], (name, start, end, theirs)
        ours = _ours(t, start, end, ids)
        assert sorted(theirs["rows"], key=repr) == ours, (name, start, end, ids)
        compared += 1
    assert compared >= 10
    check(t, t.changes(None))  # and the rows net to the snapshots' rows


def test_java_skips_replace_snapshots_as_icenb_does(cases: dict[str, Case]) -> None:
    t = cases["j2"].table()
    ops = [s.operation for s in t.snapshots]
    assert "replace" in ops
    cl = t.changes(None)
    assert len(cl.snapshots) == len(ops) - 1
    assert all(s.operation != "replace" for s in cl.snapshots)


def _lists_delete_manifests(t: Table, snapshot_id: int) -> bool:
    return any(m["content"] == 1 for m in t.inspect.manifests(snapshot_id).to_pylist())


@pytest.mark.parametrize("name", ["jmor", "imor"])
def test_where_java_refuses_delete_files_icenb_follows_its_rules(
        cases: dict[str, Case], java: dict[Key, dict[str, Any]], name: str) -> None:
    """Java refuses exactly the ranges in which a snapshot (``replace`` ones aside) lists a
    delete manifest, its own or an older one still in its manifest list; it agrees with icenb
    on the others. icenb's changes of every range net to the snapshots' rows."""
    case = cases[name]
    t = case.table()
    ops = {s.snapshot_id: s for s in t.snapshots}
    for (table, start, end, ids), theirs in java.items():
        if table != name:
            continue
        line = case.line[:case.line.index(end) + 1] if end is not None else case.line
        in_range = line[line.index(start) + 1:] if start is not None else line
        refused = any(_lists_delete_manifests(t, s) for s in in_range
                      if ops[s].operation != "replace")
        assert theirs["ok"] is not refused, (name, start, end, theirs)
        if refused:
            assert REFUSED in theirs["error"]
        else:
            assert sorted(theirs["rows"], key=repr) == _ours(t, start, end, ids)
    assert any(not r["ok"] for k, r in java.items() if k[0] == name)
    for start, end in _ranges(case.line):
        check(t, t.changes(start, end))
        check(t, t.changes(start, end, identifier_columns="id"))
