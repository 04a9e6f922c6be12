"""Hadoop-layout tables between icenb's FilesystemCatalog and Iceberg Java 1.10's HadoopCatalog
(spec: "File System Tables"), both ways.

icenb writes v1/v2/v3 tables through ``FilesystemCatalog`` (create, appends, a schema change,
properties, partition statistics); Java's ``HadoopCatalog`` lists and loads them and reads every
snapshot's rows (by table directory, through ``version-hint.text``). Java writes tables with
Spark SQL through a ``HadoopCatalog``; icenb's filesystem catalog loads them and appends; Java
reads every snapshot again. Two JVM batches: Java must run before and after icenb's appends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.catalog import FilesystemCatalog
from icenb.spec.partition_spec import build_partition_spec
from icenb.spec.schema import schema_to_json
from icenb.spec.sort_order import build_sort_order
from icenb.spec.table_updates import new_table_metadata
from icenb.table import Table
from icenb.table.warehouse import parse_schema
from tests.reference.java_read import normalize
from tests.reference_fixtures import run_reference_batch

VERSIONS = (1, 2, 3)


def create_table(catalog: FilesystemCatalog, name: str, ddl: str, partition_by: list[str],
                 version: int, properties: dict[str, str] | None = None) -> Table:
    """How a user gets a writable table of a filesystem catalog today: build the metadata,
    ``catalog.create_table``, then ``icenb.load_table(catalog, name)``."""
    schema = parse_schema(ddl)
    metadata = new_table_metadata(schema, build_partition_spec(schema, partition_by),
                                  build_sort_order(schema, []),
                                  catalog.default_table_location(name), properties or {},
                                  version)
    catalog.create_table(name, metadata)
    return icenb.load_table(catalog, name)


def icenb_rows(t: Table, snapshot_id: int) -> list[list[Any]]:
    table = t.scan(snapshot_id=snapshot_id).to_arrow()
    return sorted(([normalize(v) for v in row.values()] for row in table.to_pylist()),
                  key=json.dumps)


def java_rows(result: dict[str, Any]) -> list[list[Any]]:
    assert result["ok"], result
    return sorted(result["rows"], key=json.dumps)


class Scenario:
    def __init__(self, root: Path) -> None:
        # icenb writes
        self.icenb_wh = root / "icenb_wh"
        cat = FilesystemCatalog(self.icenb_wh)
        cat.create_namespace("db")
        self.icenb_tables: dict[str, Table] = {}
        for v in VERSIONS:
            t = create_table(cat, f"db.t{v}", "id long not null, s string, d date", ["s"], v,
                             {"owner": "icenb"})
            t.append([{"id": i, "s": f"s{i % 2}", "d": None} for i in range(5)])
            with t.update_schema() as u:
                u.add_column("x", "double")
            t.append([{"id": i, "s": "s9", "x": i / 2} for i in range(5, 8)])
            t.set_properties({"comment": "written by icenb"})
            t.compute_partition_stats()
            self.icenb_tables[f"db.t{v}"] = t
        # Java writes, in the same first JVM
        self.java_wh = root / "java_wh"
        statements = []
        for v in VERSIONS:
            statements += [
                f"CREATE TABLE hc.db.j{v} (id bigint, s string) USING iceberg PARTITIONED BY (s)"
                f" TBLPROPERTIES ('format-version'='{v}')",
                f"INSERT INTO hc.db.j{v} VALUES (1, 'a'), (2, 'b'), (3, 'a')",
                f"ALTER TABLE hc.db.j{v} ADD COLUMN x double",
                f"INSERT INTO hc.db.j{v} VALUES (4, 'b', 0.5)",
            ]
        requests: list[dict[str, Any]] = [
            {"op": "sql", "warehouse": str(self.java_wh), "statements": statements},
            {"op": "catalog", "warehouse": str(self.icenb_wh)},
        ]
        self.first_reads: list[tuple[str, int]] = []
        for name, t in self.icenb_tables.items():
            for snap in t.snapshots:
                requests.append({"location": t.location, "snapshot_id": snap.snapshot_id})
                self.first_reads.append((name, snap.snapshot_id))
        results = run_reference_batch("java_hadoop_catalog.py", requests)
        assert results[0]["ok"], results[0]
        self.java_catalog_of_icenb = results[1]
        self.java_rows_of_icenb = results[2:]
        # icenb loads Java's tables and appends
        jcat = FilesystemCatalog(self.java_wh)
        self.java_tables_before = {".".join(i): icenb.load_table(jcat, i)
                                   for i in jcat.list_tables("db")}
        self.java_tables: dict[str, Table] = {}
        for name in self.java_tables_before:
            t = icenb.load_table(jcat, name)
            t.append([{"id": 10, "s": "c", "x": 1.5}, {"id": 11, "s": "a", "x": None}])
            self.java_tables[name] = t
        requests = [{"op": "catalog", "warehouse": str(self.java_wh)}]
        self.second_reads: list[tuple[str, int]] = []
        for name, t in self.java_tables.items():
            for snap in t.snapshots:
                requests.append({"location": t.location, "snapshot_id": snap.snapshot_id})
                self.second_reads.append((name, snap.snapshot_id))
        results = run_reference_batch("java_hadoop_catalog.py", requests)
        self.java_catalog_of_java = results[0]
        self.java_rows_of_java = results[1:]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return Scenario(tmp_path_factory.mktemp("fsjava"))


def test_java_hadoop_catalog_lists_and_loads_icenb_tables(scenario: Scenario) -> None:
    got = scenario.java_catalog_of_icenb
    assert got["ok"], got
    assert sorted(got["tables"]) == ["db.t1", "db.t2", "db.t3"]
    for name, t in scenario.icenb_tables.items():
        java = got["tables"][name]
        assert java["format_version"] == t.format_version
        assert java["current"] == t.current_snapshot.snapshot_id  # type: ignore[union-attr]
        assert java["snapshots"] == [s.snapshot_id for s in t.snapshots]
        assert java["schema"]["fields"] == schema_to_json(t.schema)["fields"]
        assert java["properties"]["owner"] == "icenb"
        assert java["properties"]["comment"] == "written by icenb"
    # the Hadoop layout on disk: v<N>.metadata.json and the version hint
    meta = Path(scenario.icenb_tables["db.t2"].location) / "metadata"
    versions = sorted(p.name for p in meta.glob("v*.metadata.json"))
    assert (meta / "version-hint.text").read_text().strip() == str(len(versions))


def test_java_reads_every_icenb_snapshot(scenario: Scenario) -> None:
    assert len(scenario.first_reads) == 3 * 2
    for (name, sid), result in zip(scenario.first_reads, scenario.java_rows_of_icenb,
                                   strict=True):
        t = scenario.icenb_tables[name]
        assert java_rows(result) == icenb_rows(t, sid), (name, sid)


def test_icenb_appends_to_java_tables_and_java_reads_them(scenario: Scenario) -> None:
    assert sorted(scenario.java_tables) == ["db.j1", "db.j2", "db.j3"]
    got = scenario.java_catalog_of_java
    assert got["ok"], got
    for name, t in scenario.java_tables.items():
        before = scenario.java_tables_before[name]
        assert t.format_version == int(name[-1])
        assert len(t.snapshots) == len(before.snapshots) + 1
        java = got["tables"][name]
        assert java["current"] == t.current_snapshot.snapshot_id  # type: ignore[union-attr]
        assert java["snapshots"] == [s.snapshot_id for s in t.snapshots]
    assert len(scenario.second_reads) == 3 * 3
    for (name, sid), result in zip(scenario.second_reads, scenario.java_rows_of_java,
                                   strict=True):
        t = scenario.java_tables[name]
        assert java_rows(result) == icenb_rows(t, sid), (name, sid)
    last = scenario.java_rows_of_java[2]
    assert sorted(r[0] for r in last["rows"]) == [1, 2, 3, 4, 10, 11]
