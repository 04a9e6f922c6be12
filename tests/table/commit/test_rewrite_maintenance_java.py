"""``rewrite_manifests`` and ``rewrite_position_deletes`` against Iceberg Java 1.10 (Spark 3.5),
one batch through the reference JVM.

icenb writes twin tables with the same commits; on the ``i_`` twin icenb runs its rewrite, on
the ``j_`` twin Java runs its own procedure (``CALL hc.system.rewrite_manifests`` /
``rewrite_position_delete_files``). Java then reads icenb's results: the rows (``_row_id`` and
``_last_updated_sequence_number`` on v3) and its ``files`` and ``manifests`` metadata tables,
which must agree with icenb's ``inspect``. icenb reads Java's results the same way, and both
rewrites end with the same counts of manifests / delete files and the same summary keys.

Differences with Java, each asserted below:

* ``rewrite_manifests`` on v3: icenb's entries keep their ``first_row_id``, so rows keep their
  ``_row_id``; Java 1.10's Spark action writes the entries without it and the new manifest
  inherits a fresh range from ``next-row-id``: every row gets a new id (against the spec's
  "Row Lineage": a row id is kept by moves). Its summary says ``entries-processed`` 0 (the
  action adds whole manifests), icenb counts the entries it wrote;
* with no spec id, icenb rewrites the manifests of every partition spec, Java's action only
  those of the current spec;
* ``rewrite_position_delete_files`` wants 5 files per partition unless ``rewrite-all`` (icenb:
  every partition with two files or dangling deletes), so Java runs with ``rewrite-all``; Java
  writes one file per data file (``write.delete.granularity=file``, its default), icenb one per
  partition, as its merge-on-read deletes; both drop dangling deletes and, on v3, write one DV
  per data file;
* a DV counts in ``added-files-size`` with its blob size in both (icenb's summary code, since
  tests/table/commit/test_summary_sizes.py); file sizes themselves differ between the writers,
  so sizes are not compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.spec.properties import (
    MANIFEST_MERGE_ENABLED,
    MANIFEST_TARGET_SIZE_BYTES,
    WRITE_DELETE_MODE,
)
from icenb.table import Table
from icenb.table.warehouse import Warehouse
from tests.reference_fixtures import run_reference_batch

LINEAGE = ["_row_id", "_last_updated_sequence_number"]

#: name -> (format version, upgraded from v2 before the rewrite, kind of rewrite)
TWINS: dict[str, tuple[int, bool, str]] = {
    "manifests_v2": (2, False, "manifests"),
    "manifests_v3": (3, False, "manifests"),
    "manifests_evolved": (2, False, "evolved"),
    "manifests_split": (2, False, "split"),
    "deletes_v2": (2, False, "deletes"),
    "dangling_v2": (2, False, "dangling"),
    "deletes_upgraded": (2, True, "deletes"),
}

MANIFEST_COLUMNS = ["content", "path", "length", "partition_spec_id", "added_snapshot_id",
                    "added_data_files_count", "existing_data_files_count",
                    "deleted_data_files_count", "added_delete_files_count",
                    "existing_delete_files_count", "deleted_delete_files_count"]
FILE_COLUMNS = ["content", "file_path", "file_format", "spec_id", "record_count",
                "file_size_in_bytes", "referenced_data_file", "content_offset",
                "content_size_in_bytes"]
MANIFEST_KINDS = ("manifests", "evolved", "split")
SPLIT_TARGET = 10_000
SUMMARY_KEYS = ("manifests-created", "manifests-kept", "manifests-replaced",
                "entries-processed")


def _columns(t: Table) -> list[str]:
    return ["id", "p", *LINEAGE] if t.format_version >= 3 else ["id", "p"]


def _twin(wh: Warehouse, name: str, version: int, upgraded: bool, kind: str) -> Table:
    properties = {MANIFEST_MERGE_ENABLED: "false", WRITE_DELETE_MODE: "merge-on-read"}
    if kind == "split":  # about a third of the four manifests' bytes: three manifests
        properties[MANIFEST_TARGET_SIZE_BYTES] = str(SPLIT_TARGET)
    t = wh.create_table(name, "id long, p string", format_version=version, partition_by="p",
                        properties=properties)
    for i in range(4):
        if kind == "evolved" and i == 2:
            with t.update_spec() as update:
                update.add_field("bucket(2, id)")
        t.append([{"id": 10 * i + j, "p": "abc"[j % 3]} for j in range(6)])
    if kind in ("deletes", "dangling"):
        for k in range(3 if kind == "dangling" else 6):
            t.delete(f"id = {k} or id = {30 + k}")
    if kind == "dangling":
        t.set_properties({WRITE_DELETE_MODE: "copy-on-write"})
        t.delete("id = 3")  # the file of ids 0 and 3 goes: the delete of id 0 dangles
    if upgraded:
        t.upgrade(3)
    return t


def _rewrite(t: Table, kind: str) -> Any:
    return (t.rewrite_manifests() if kind in MANIFEST_KINDS
            else t.rewrite_position_deletes())


def _call(name: str, kind: str) -> str:
    if kind in MANIFEST_KINDS:
        return f"CALL hc.system.rewrite_manifests(table => 'db.{name}')"
    return (f"CALL hc.system.rewrite_position_delete_files(table => 'db.{name}', "
            "options => map('rewrite-all', 'true'))")


def _rows(t: Table) -> list[list[Any]]:
    cols = _columns(t)
    return sorted([r[c] for c in cols] for r in t.scan(columns=cols).to_arrow().to_pylist())


def _inspected(t: Table, table: str, columns: list[str]) -> list[list[Any]]:
    got = getattr(t.inspect, table)()
    return sorted([r.get(c) for c in columns] for r in got.to_pylist())


@dataclass
class Scenario:
    wh: Warehouse
    before: dict[str, list[list[Any]]]
    results: dict[str, Any]
    calls: dict[str, dict[str, Any]]
    reads: dict[tuple[str, str], dict[str, Any]]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    root: Path = tmp_path_factory.mktemp("rewrite_maintenance_java")
    wh = icenb.warehouse(root / "wh", name="hc", catalog="filesystem")
    before: dict[str, list[list[Any]]] = {}
    results: dict[str, Any] = {}
    requests: list[dict[str, Any]] = []
    for name, (version, upgraded, kind) in TWINS.items():
        java = _twin(wh, f"db.j_{name}", version, upgraded, kind)
        mine = _twin(wh, f"db.i_{name}", version, upgraded, kind)
        before[name] = _rows(mine)
        results[name] = _rewrite(mine, kind)
        requests.append({"op": "sql", "warehouse": str(wh.location),
                         "statements": [_call(f"j_{name}", kind)]})
        del java
    keys: list[tuple[str, str]] = []
    for name in TWINS:
        for prefix in ("i", "j"):
            t = wh.table(f"db.{prefix}_{name}")
            keys.append((f"{prefix}_{name}", "rows"))
            requests.append({"location": t.location, "columns": _columns(t)})
        t = wh.table(f"db.i_{name}")
        for table, cols in (("manifests", MANIFEST_COLUMNS), ("files", FILE_COLUMNS)):
            keys.append((f"i_{name}", table))
            requests.append({"location": f"{t.location}#{table}", "columns": cols})
    answers = run_reference_batch("java_hadoop_catalog.py", requests)
    calls = dict(zip(TWINS, answers[:len(TWINS)], strict=True))
    reads = dict(zip(keys, answers[len(TWINS):], strict=True))
    return Scenario(wh, before, results, calls, reads)


def _java(scenario: Scenario, key: str, what: str) -> list[list[Any]]:
    got = scenario.reads[(key, what)]
    assert got["ok"], got
    return sorted(got["rows"])


def _summary(t: Table) -> dict[str, str]:
    snap = t.current_snapshot
    assert snap is not None and snap.summary is not None
    assert snap.summary.operation == "replace"
    return dict(snap.summary.properties)


def test_java_ran_its_procedures(scenario: Scenario) -> None:
    for name, answer in scenario.calls.items():
        assert answer["ok"], (name, answer)


@pytest.mark.parametrize("name", list(TWINS))
def test_java_reads_icenb_rewrites_as_icenb_does(scenario: Scenario, name: str) -> None:
    t = scenario.wh.table(f"db.i_{name}")
    assert scenario.results[name].snapshot == t.current_snapshot
    rows = _rows(t)
    assert _unnumbered(rows, name) == scenario.before[name]  # no row changed, nor its lineage
    assert _java(scenario, f"i_{name}", "rows") == rows
    assert _java(scenario, f"i_{name}", "manifests") == _inspected(t, "manifests",
                                                                   MANIFEST_COLUMNS)
    assert _java(scenario, f"i_{name}", "files") == _inspected(t, "files", FILE_COLUMNS)


@pytest.mark.parametrize("name", list(TWINS))
def test_icenb_reads_java_rewrites_and_both_read_the_same_rows(scenario: Scenario,
                                                              name: str) -> None:
    java_twin = scenario.wh.table(f"db.j_{name}")
    java_rows = _rows(java_twin)
    assert _java(scenario, f"j_{name}", "rows") == java_rows
    icenb_rows = _rows(scenario.wh.table(f"db.i_{name}"))
    if name == "manifests_v3":  # Java gives every row a new id (see the module)
        assert [r[:2] for r in java_rows] == [r[:2] for r in icenb_rows]
        assert {r[2] for r in java_rows}.isdisjoint({r[2] for r in icenb_rows})
    else:  # the first commit after an upgrade numbers the rows alike in both engines
        assert java_rows == icenb_rows


def _unnumbered(rows: list[list[Any]], name: str) -> list[list[Any]]:
    """Rows as before the rewrite: an upgraded table's rows get their ids at the first commit
    after the upgrade (spec: "Row Lineage for Upgraded Tables"), this rewrite."""
    return [[*r[:2], None, None] for r in rows] if TWINS[name][1] else rows


@pytest.mark.parametrize("name", [n for n, v in TWINS.items() if v[2] == "manifests"])
def test_rewrite_manifests_ends_as_javas(scenario: Scenario, name: str) -> None:
    java_twin = scenario.wh.table(f"db.j_{name}")
    icenb_twin = scenario.wh.table(f"db.i_{name}")
    java_manifests = java_twin.inspect.manifests().to_pylist()
    icenb_manifests = icenb_twin.inspect.manifests().to_pylist()
    assert len(icenb_manifests) == len(java_manifests) == 1
    for m in (*java_manifests, *icenb_manifests):
        assert (m["added_data_files_count"], m["existing_data_files_count"]) == (0, 12)
    java_summary, icenb_summary = _summary(java_twin), _summary(icenb_twin)
    for key in SUMMARY_KEYS:
        assert key in java_summary and key in icenb_summary, key
    same = [k for k in SUMMARY_KEYS if k != "entries-processed"]
    assert {k: java_summary[k] for k in same} == {k: icenb_summary[k] for k in same}
    assert icenb_summary["entries-processed"] == "12"
    assert java_summary["entries-processed"] == "0"


def test_rewrite_manifests_of_every_spec_where_java_rewrites_the_current_one(
        scenario: Scenario) -> None:
    """With no ``spec_id``, icenb rewrites the manifests of every spec (one per spec here);
    Java's action only those of the table's current spec."""
    specs = {}
    for prefix in ("i", "j"):
        t = scenario.wh.table(f"db.{prefix}_manifests_evolved")
        specs[prefix] = sorted(m["partition_spec_id"] for m in t.inspect.manifests().to_pylist())
    assert specs == {"i": [0, 1], "j": [0, 0, 1]}


def test_a_target_size_splits_into_as_many_manifests_as_java_clustered_alike(
        scenario: Scenario) -> None:
    """``commit.manifest.target-size-bytes`` on both twins: ``ceil(bytes / target)``
    manifests in both engines, each holding one partition (``p`` has three values)."""
    for prefix in ("i", "j"):
        t = scenario.wh.table(f"db.{prefix}_manifests_split")
        manifests = t.inspect.manifests().to_pylist()
        assert len(manifests) == 3, prefix
        bounds = sorted((s["lower_bound"], s["upper_bound"])
                        for m in manifests for s in m["partition_summaries"])
        assert bounds == [("a", "a"), ("b", "b"), ("c", "c")], prefix


#: name -> (icenb's delete files, Java's) after the rewrite
DELETE_FILES = {"deletes_v2": (3, 6), "dangling_v2": (3, 5), "deletes_upgraded": (6, 6)}


@pytest.mark.parametrize("name", list(DELETE_FILES))
def test_rewrite_position_deletes_ends_as_javas(scenario: Scenario, name: str) -> None:
    java_twin = scenario.wh.table(f"db.j_{name}")
    icenb_twin = scenario.wh.table(f"db.i_{name}")
    java_deletes = java_twin.inspect.delete_files().to_pylist()
    icenb_deletes = icenb_twin.inspect.delete_files().to_pylist()
    assert (len(icenb_deletes), len(java_deletes)) == DELETE_FILES[name]
    java_summary, icenb_summary = _summary(java_twin), _summary(icenb_twin)
    same = ("total-records", "total-data-files", "total-position-deletes")
    if name == "dangling_v2":  # icenb leaves partitions with one file and nothing dangling
        assert (icenb_summary["removed-delete-files"], java_summary["removed-delete-files"]) \
            == ("1", "3")
    else:
        same += ("removed-position-delete-files", "removed-delete-files")
    assert {k: icenb_summary.get(k) for k in same} == {k: java_summary.get(k) for k in same}
    for summary, deletes in ((icenb_summary, icenb_deletes), (java_summary, java_deletes)):
        assert summary["total-delete-files"] == str(len(deletes))
    if name == "dangling_v2":  # the delete of id 0 is gone in both
        assert icenb_summary["total-position-deletes"] == "5"
    if TWINS[name][1]:  # v3: one DV per data file in both
        for deletes in (icenb_deletes, java_deletes):
            assert {d["file_format"] for d in deletes} == {"PUFFIN"}
            referenced = [d["referenced_data_file"] for d in deletes]
            assert len(referenced) == len(set(referenced))
        assert icenb_summary["added-dvs"] == java_summary["added-dvs"] == "6"
