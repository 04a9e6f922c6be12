"""Write-audit-publish against Iceberg Java 1.10 (Spark 3.5), one JVM batch of statements and one
of reads for the module.

icenb stages and publishes (with another writer's commit in between): Java reads the staged and
the published snapshot as icenb does. icenb stages, Java's ``CALL system.publish_changes``
publishes. Java stages an ``INSERT`` with ``spark.wap.id``, icenb audits and publishes it. Java
with ``spark.wap.id`` on a table without ``write.wap.enabled`` commits to main, as icenb does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.properties import WRITE_WAP_ENABLED
from icenb.spec.snapshot import PUBLISHED_WAP_ID, WAP_ID, Snapshot
from icenb.table import Table
from icenb.table.warehouse import Warehouse
from tests.reference_fixtures import run_reference_batch


def ids(t: Table, snapshot_id: int | None = None) -> list[int]:
    scan = t.scan() if snapshot_id is None else t.at(snapshot_id)
    return sorted(scan.to_arrow().column("id").to_pylist())


def _table(wh: Warehouse, name: str, wap: bool = True) -> Table:
    t = wh.create_table(f"db.{name}", "id long, p string", format_version=2,
                        properties={WRITE_WAP_ENABLED: "true"} if wap else {})
    t.append([{"id": 1, "p": "a"}, {"id": 2, "p": "b"}])
    return t


def _staged(t: Table, wap_id: str) -> list[Snapshot]:
    return [s for s in t.metadata.snapshots
            if s.summary is not None and s.summary.get(WAP_ID) == wap_id]


@dataclass
class Scenario:
    wh: Warehouse
    sql: list[dict[str, Any]]
    staged: dict[str, int]            # table -> staged snapshot id
    main_before_publish: list[int]    # java_staged's rows on main before icenb published
    java: dict[tuple[str, int | None], list[list[Any]] | str]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    root: Path = tmp_path_factory.mktemp("wap_java")
    wh = icenb.warehouse(root / "wh", name="hc", catalog="filesystem")
    staged: dict[str, int] = {}
    # icenb stages, another writer commits, icenb publishes (a cherry-pick, new snapshot)
    t = _table(wh, "i_pub")
    with icenb.set_options(wap_id="icenb-1"):
        staged["i_pub"] = t.append([{"id": 3, "p": "a"}]).snapshot_id
    wh.table("db.i_pub").append([{"id": 4, "p": "b"}])
    t.publish_changes("icenb-1")
    # icenb stages, Java publishes
    j_pub = _table(wh, "j_pub")
    with icenb.set_options(wap_id="icenb-2"):
        staged["j_pub"] = j_pub.append([{"id": 5, "p": "a"}]).snapshot_id
    _table(wh, "java_staged")
    _table(wh, "java_nowap", wap=False)
    sql = run_reference_batch("java_hadoop_catalog.py", [
        {"op": "sql", "warehouse": str(wh.location), "statements": [
            "CALL hc.system.publish_changes('db.j_pub', 'icenb-2')",
            "SET spark.wap.id = java-3",
            "INSERT INTO hc.db.java_staged VALUES (6, 'a')",
            "INSERT INTO hc.db.java_nowap VALUES (7, 'a')",
            "RESET spark.wap.id"]},
        # Java refuses to publish again what icenb published
        {"op": "sql", "warehouse": str(wh.location), "statements": [
            "CALL hc.system.publish_changes('db.i_pub', 'icenb-1')"]}])
    # icenb audits Java's staged write, then publishes it
    java_staged = wh.table("db.java_staged")
    found = _staged(java_staged, "java-3")
    staged["java_staged"] = found[0].snapshot_id if len(found) == 1 else -1
    main_before = ids(java_staged)
    if len(found) == 1:
        java_staged.publish_changes("java-3")
    keys: list[tuple[str, int | None]] = [("i_pub", staged["i_pub"]), ("i_pub", None),
                                          ("j_pub", None), ("java_staged", None),
                                          ("java_nowap", None)]
    reads = run_reference_batch("java_hadoop_catalog.py", [
        {"location": wh.table(f"db.{name}").location, "columns": ["id"], "snapshot_id": sid}
        for name, sid in keys])
    java = {k: sorted(r["rows"]) if r["ok"] else str(r) for k, r in zip(keys, reads,
                                                                          strict=True)}
    return Scenario(wh, sql, staged, main_before, java)


def test_java_ran_its_statements(scenario: Scenario) -> None:
    assert scenario.sql[0]["ok"], scenario.sql[0]


def test_java_reads_icenbs_staged_and_published_snapshots_as_icenb_does(
        scenario: Scenario) -> None:
    t = scenario.wh.table("db.i_pub")
    staged = scenario.staged["i_pub"]
    assert scenario.java[("i_pub", staged)] == [[i] for i in ids(t, staged)] == [[1], [2], [3]]
    assert scenario.java[("i_pub", None)] == [[i] for i in ids(t)] == [[1], [2], [3], [4]]
    head = t.current_snapshot
    assert head is not None and head.summary is not None
    assert head.summary[PUBLISHED_WAP_ID] == "icenb-1"


def test_java_refuses_to_publish_again_what_icenb_published(scenario: Scenario) -> None:
    again = scenario.sql[1]
    assert not again["ok"]
    # Java's DuplicateWAPCommitException: icenb's published-wap-id is what it checks
    assert "published already: icenb-1" in again["error"], again


def test_javas_publish_changes_publishes_icenbs_staged_snapshot(scenario: Scenario) -> None:
    t = scenario.wh.table("db.j_pub")
    # main's head was the staged snapshot's parent: Java fast-forwards main to it
    assert t.refs["main"].snapshot_id == scenario.staged["j_pub"]
    assert ids(t) == [1, 2, 5]
    assert scenario.java[("j_pub", None)] == [[1], [2], [5]]
    with pytest.raises(ValidationError) as e:
        t.publish_changes("icenb-2")
    assert e.value.field == WAP_ID


def test_icenb_audits_and_publishes_what_java_staged_with_spark_wap_id(
        scenario: Scenario) -> None:
    sid = scenario.staged["java_staged"]
    assert sid != -1, "Java's staged INSERT has no single snapshot with wap.id java-3"
    assert scenario.main_before_publish == [1, 2]        # Java's INSERT moved no ref
    t = scenario.wh.table("db.java_staged")
    assert ids(t, sid) == [1, 2, 6]
    assert t.refs["main"].snapshot_id == sid             # icenb's publish fast-forwarded
    assert scenario.java[("java_staged", None)] == [[1], [2], [6]]


def test_spark_wap_id_without_write_wap_enabled_commits_to_main_in_java_as_in_icenb(
        scenario: Scenario) -> None:
    t = scenario.wh.table("db.java_nowap")
    head = t.current_snapshot
    assert head is not None and head.summary is not None and WAP_ID not in head.summary
    assert ids(t) == [1, 2, 7] and scenario.java[("java_nowap", None)] == [[1], [2], [7]]
