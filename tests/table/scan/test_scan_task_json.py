"""File scan tasks as JSON, against Iceberg Java's planner and parsers.

Spec: "Scan Planning" and Appendix C "File Scan Task Serialization". For tables written by
Iceberg Java, icenb's plan must pick the same data files with the same delete files and an
equivalent residual filter as Java's ``planFiles``; Java must read icenb's task JSON, and icenb
must read Java's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from icenb.io.file_io import FileIO
from icenb.io.metadata_files import load_table_metadata
from icenb.spec.expression_json import expression_from_json, expression_to_json
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysTrue, bind
from icenb.spec.manifest import FileScanTask, file_scan_task_from_json, file_scan_task_to_json
from icenb.spec.table_metadata import TableMetadata
from icenb.table import plan_files
from tests.reference_fixtures import JavaTables, run_reference_batch

# (table, filter) pairs: partition pruning on every transform, metrics pruning, residuals that
# the partition decides for some files only, and each kind of delete file.
PLANS: tuple[tuple[str, str | None], ...] = (
    ("db.v2_partition_evolution", None),
    ("db.v2_partition_evolution", "n > 2"),
    ("db.v2_partition_evolution", "cat = 'alpha' or id in (1, 5)"),
    ("db.v2_partition_evolution", "ts >= '2024-01-01T10:00:00+00:00' and amount < 3.5"),
    ("db.v2_merge_on_read", None),
    ("db.v2_merge_on_read", "cat = 'odd'"),
    ("db.v3_deletion_vectors", None),
    ("db.v3_deletion_vectors", "id > 3"),
    ("db.java_v2_equality_deletes", None),
    ("db.v1_upgrade", None),
    ("db.v2_all_types", "c_long = 10 or c_date >= '2024-06-01'"),
    ("db.v2_all_types", "c_string = 'ünï'"),
)


def _load(java_tables: JavaTables, name: str) -> TableMetadata:
    return load_table_metadata(str(java_tables.location(name)), FileIO())


def _run_java(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    results = run_reference_batch("java_tasks.py", requests)
    for r in results:
        assert r["ok"], r.get("error")
    return results


def _icenb_tasks(java_tables: JavaTables, name: str, text: str | None) -> list[FileScanTask]:
    md = _load(java_tables, name)
    return plan_files(FileIO(), md, row_filter=text or "true").tasks


def _deletes(task: FileScanTask) -> list[str]:
    return sorted(d.file_path for d in task.delete_files)


def _bound_residual(task: FileScanTask) -> Any:
    r = task.residual_filter
    expr = AlwaysTrue() if r is True else r
    return bind(expr, task.schema) if r is not False else False


@pytest.fixture(scope="module")
def java_results(java_tables: JavaTables) -> list[dict[str, Any]]:
    """Java's plans of PLANS, then Java's reading of icenb's JSON for each icenb task."""
    requests: list[dict[str, Any]] = []
    for name, text in PLANS:
        md = _load(java_tables, name)
        flt = None if text is None else expression_to_json(parse(text), md.schema)
        requests.append({"plan": str(java_tables.location(name)), "filter": flt})
    for name, text in PLANS:
        md = _load(java_tables, name)
        requests.extend({"parse_task": {"task-type": "file-scan-task",
                                        **file_scan_task_to_json(t, md.format_version)}}
                        for t in _icenb_tasks(java_tables, name, text))
    return _run_java(requests)


@pytest.mark.parametrize(("index", "name", "text"),
                         [(i, n, t) for i, (n, t) in enumerate(PLANS)])
def test_plan_matches_java_plan_files(java_tables: JavaTables,
                                      java_results: list[dict[str, Any]],
                                      index: int, name: str, text: str | None) -> None:
    md = _load(java_tables, name)
    java_tasks = [file_scan_task_from_json(t, md.format_version)
                  for t in java_results[index]["tasks"]]
    ours = _icenb_tasks(java_tables, name, text)
    assert ours, "the plan should select files"
    java_by_path = {t.data_file.file_path: t for t in java_tasks}
    assert sorted(t.data_file.file_path for t in ours) == sorted(java_by_path)
    for task in ours:
        theirs = java_by_path[task.data_file.file_path]
        assert _deletes(task) == _deletes(theirs), task.data_file.file_path
        assert task.data_file.partition == theirs.data_file.partition
        assert task.spec.spec_id == theirs.spec.spec_id
        assert _bound_residual(task) == _bound_residual(theirs), task.data_file.file_path


def test_java_reads_icenb_task_json(java_tables: JavaTables,
                                    java_results: list[dict[str, Any]]) -> None:
    parsed = iter(java_results[len(PLANS):])
    checked = 0
    for name, text in PLANS:
        md = _load(java_tables, name)
        for task in _icenb_tasks(java_tables, name, text):
            back = next(parsed)["task"]
            ours = file_scan_task_to_json(task, md.format_version)
            for key in ("file-path", "partition", "record-count", "file-size-in-bytes",
                        "spec-id", "content", "file-format"):
                assert back["data-file"][key] == ours["data-file"][key], (name, key)
            assert sorted(d["file-path"] for d in back["delete-files"]) == _deletes(task)
            assert back["schema"] == ours["schema"]
            assert back["spec"]["fields"] == ours["spec"]["fields"]
            r = back["residual-filter"]
            assert bind(expression_from_json(r, task.schema), task.schema) == \
                _bound_residual(task)
            checked += 1
    assert checked > 20


def test_residual_json_is_what_the_spec_shows(java_tables: JavaTables) -> None:
    tasks = _icenb_tasks(java_tables, "db.v2_partition_evolution", "n > 2")
    docs = [file_scan_task_to_json(t)["residual-filter"] for t in tasks]
    assert {"type": "gt", "term": "n", "value": 2} in docs
    for doc, task in zip(docs, tasks, strict=True):
        assert json.loads(json.dumps(doc)) == doc
        back = file_scan_task_from_json(file_scan_task_to_json(task))
        assert file_scan_task_to_json(back) == file_scan_task_to_json(task)
        assert back.residual_filter == task.residual_filter
