"""Metadata tables (``table.inspect``) against Iceberg Java's, and their shapes."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icenb.errors import NoSuchSnapshot
from icenb.io.file_io import FileIO
from icenb.table.inspect import InspectTables
from icenb.table.table import Table, open_table
from tests.reference.java_read import normalize
from tests.reference_fixtures import JAVA_TIMEOUT_S, REFERENCE_DIR, JavaTables, reference_python

COMPARED_TABLES = (
    "db.v2_refs",
    "db.v2_merge_on_read",
    "db.v3_deletion_vectors",
    "db.v2_partition_evolution",
    "db.v1_upgrade",
)
INSPECT_TABLES = ("snapshots", "history", "refs", "metadata_log_entries", "manifests", "entries",
                  "files", "data_files", "delete_files")


def _open(java_tables: JavaTables, name: str) -> Table:
    return open_table(str(java_tables.location(name)), io=FileIO())


def _plain(value: Any, t: pa.DataType) -> Any:
    """A pyarrow Python value shaped as java_inspect.py shapes Spark's: structs and maps as
    dicts (by field name / key), lists as lists."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        return {t.field(i).name: _plain(value[t.field(i).name], t.field(i).type)
                for i in range(t.num_fields)}
    if pa.types.is_map(t):
        return {k: _plain(v, t.item_type) for k, v in value}
    if pa.types.is_list(t):
        return [_plain(v, t.value_type) for v in value]
    return value


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    types = {f.name: f.type for f in table.schema}
    return [{k: normalize(_plain(v, types[k])) for k, v in row.items()}
            for row in table.to_pylist()]


def _multiset(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> Counter[str]:
    return Counter(json.dumps([r[c] for c in columns], sort_keys=True) for r in rows)


def run_java_inspect(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of each {location, table} metadata table as Iceberg Java reads them (one JVM)."""
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "requests.json"
        out = Path(tmp) / "results.json"
        req.write_text(json.dumps({"requests": list(requests)}), encoding="utf-8")
        proc = subprocess.run(
            [str(reference_python()), str(REFERENCE_DIR / "java_inspect.py"),
             "--requests", str(req), "--output", str(out)],
            cwd=tmp, capture_output=True, timeout=JAVA_TIMEOUT_S, check=False)
        if proc.returncode != 0 or not out.exists():
            tail = proc.stderr.decode(errors="replace").splitlines()[-40:]
            pytest.fail("java_inspect.py failed:\n" + "\n".join(tail), pytrace=False)
        results: list[dict[str, Any]] = json.loads(out.read_text("utf-8"))["results"]
    return results


@pytest.fixture(scope="session")
def java_inspect_rows(java_tables: JavaTables) -> dict[tuple[str, str], dict[str, Any]]:
    """Java's rows of every compared metadata table, read in one JVM."""
    keys = [(name, kind) for name in COMPARED_TABLES for kind in INSPECT_TABLES]
    results = run_java_inspect([{"location": str(java_tables.location(name)), "table": kind}
                                for name, kind in keys])
    return dict(zip(keys, results, strict=True))


@pytest.mark.parametrize("kind", INSPECT_TABLES)
@pytest.mark.parametrize("name", COMPARED_TABLES)
def test_metadata_tables_match_java(
        java_tables: JavaTables, java_inspect_rows: dict[tuple[str, str], dict[str, Any]],
        name: str, kind: str) -> None:
    java = java_inspect_rows[(name, kind)]
    assert java["ok"], java.get("error")
    ours: pa.Table = getattr(_open(java_tables, name).inspect, kind)()
    # Every column we produce is one Java has, and only readable_metrics is missing.
    assert set(ours.column_names) <= set(java["columns"])
    assert set(java["columns"]) - set(ours.column_names) <= {"readable_metrics"}
    columns = ours.column_names
    assert _multiset(_rows(ours), columns) == _multiset(java["rows"], columns)


def test_files_of_an_older_snapshot_match_its_summary(java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.v2_merge_on_read")
    for snap in table.metadata.snapshots:
        assert snap.summary is not None
        data = table.inspect.data_files(snap.snapshot_id)
        deletes = table.inspect.delete_files(snap.snapshot_id)
        both = table.inspect.files(snap.snapshot_id)
        assert data.num_rows == int(snap.summary["total-data-files"])
        assert deletes.num_rows == int(snap.summary["total-delete-files"])
        assert both.num_rows == data.num_rows + deletes.num_rows
        assert sum(data.column("record_count").to_pylist()) == \
            int(snap.summary["total-records"])
        manifests = table.inspect.manifests(snap.snapshot_id)
        assert set(manifests.column("added_snapshot_id").to_pylist()) <= \
            {s.snapshot_id for s in table.metadata.snapshots}


def test_unknown_snapshot_is_an_error(java_tables: JavaTables) -> None:
    inspect = _open(java_tables, "db.v2_refs").inspect
    assert isinstance(inspect, InspectTables)
    with pytest.raises(NoSuchSnapshot):
        inspect.files(12345)


def test_history_marks_current_ancestors(java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.v2_refs")
    history = table.inspect.history().to_pylist()
    current = table.metadata.current_snapshot_id
    assert history[-1]["snapshot_id"] == current
    assert history[-1]["is_current_ancestor"] is True
    snaps = table.inspect.snapshots()
    assert snaps.schema.field("committed_at").type == pa.timestamp("us", tz="UTC")
    assert snaps.num_rows == len(table.metadata.snapshots)


def test_table_without_current_snapshot_has_empty_snapshot_tables(
        java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.v1_replace_table")
    assert table.metadata.current_snapshot_id is None
    assert table.inspect.manifests().num_rows == 0
    assert table.inspect.entries().column_names == [
        "status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file"]
    files = table.inspect.files()
    assert files.num_rows == 0
    assert files.column_names[:4] == ["content", "file_path", "file_format", "spec_id"]
