"""Metadata tables (``table.inspect``) against Iceberg Java's, and their shapes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from icenb.errors import NoSuchSnapshot
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import ManifestCache
from icenb.table.explore.inspect import InspectTables
from icenb.table.table import Table, open_table
from tests.reference.java_read import normalize
from tests.reference_fixtures import JavaTables, run_reference_batch

# Metadata tables of the whole table (the reference refuses a snapshot for the all_* ones).
TABLE_WIDE = ("snapshots", "history", "refs", "metadata_log_entries", "all_manifests",
              "all_entries", "all_files", "all_data_files", "all_delete_files")
# Metadata tables of one snapshot (Java: the ``snapshot-id`` read option).
PER_SNAPSHOT = ("manifests", "entries", "files", "data_files", "delete_files", "partitions",
                "position_deletes")
ALL_KINDS = TABLE_WIDE + PER_SNAPSHOT

# A request: (table name, metadata table, snapshot id or None for the default).
Key = tuple[str, str, int | None]

# Why Java (through Spark 3.5) cannot read some metadata tables of the corpus at all: Spark has
# no time or geo types (they appear in readable_metrics and row), and Java cannot bind a
# partition field whose source column a REPLACE TABLE dropped. Ours must still read them.
JAVA_LIMITS = ("Spark does not support time fields", "Cannot convert unknown type to Spark",
               "Cannot find source column for partition field")


def _open(java_tables: JavaTables, name: str) -> Table:
    return open_table(str(java_tables.location(name)), io=FileIO())


def _java_source(java_tables: JavaTables, entry: dict[str, Any]) -> str:
    """What Java loads: a Hadoop table by directory, other layouts by metadata file."""
    if entry["catalog"] == "hadoop":
        return str(java_tables.location(entry["name"]))
    return str(java_tables.latest(entry["name"]).path)


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


def spark_type(t: pa.DataType) -> str:
    """Spark's ``simpleString`` of the type Spark would give an Arrow column."""
    simple = {pa.int32(): "int", pa.int64(): "bigint", pa.string(): "string",
              pa.bool_(): "boolean", pa.binary(): "binary", pa.float32(): "float",
              pa.float64(): "double", pa.date32(): "date"}
    if t in simple:
        return simple[t]
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_map(t):
        return f"map<{spark_type(t.key_type)},{spark_type(t.item_type)}>"
    if pa.types.is_list(t):
        return f"array<{spark_type(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{spark_type(f.type)}" for f in t) + ">"
    return str(t)


def run_java_inspect(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of each {location, table[, snapshot_id]} metadata table as Iceberg Java reads them
    (one JVM for the whole batch)."""
    return run_reference_batch("java_inspect.py", requests)


def inspect_requests(java_tables: JavaTables) -> list[tuple[Key, dict[str, Any]]]:
    """Every metadata table of every corpus table: the table-wide ones once, the per-snapshot
    ones for every snapshot in the metadata (and for the default when there is no current
    snapshot)."""
    out: list[tuple[Key, dict[str, Any]]] = []
    for entry in java_tables.entries(kind="table"):
        name = entry["name"]
        source = _java_source(java_tables, entry)
        md = _open(java_tables, name).metadata
        for kind in TABLE_WIDE:
            out.append(((name, kind, None), {"location": source, "table": kind}))
        snapshot_ids: list[int | None] = [s.snapshot_id for s in md.snapshots]
        if md.current_snapshot_id is None:
            snapshot_ids.append(None)
        for sid in snapshot_ids:
            for kind in PER_SNAPSHOT:
                request: dict[str, Any] = {"location": source, "table": kind}
                if kind == "position_deletes":
                    request["retry_without"] = ["row"]
                if sid is not None:
                    request["snapshot_id"] = sid
                out.append(((name, kind, sid), request))
    return out


@pytest.fixture(scope="session")
def java_metadata_tables(java_tables: JavaTables) -> dict[Key, dict[str, Any]]:
    """Java's rows of every metadata table of every corpus table, read in one JVM."""
    pairs = inspect_requests(java_tables)
    results = run_java_inspect([request for _, request in pairs])
    return {key: result for (key, _), result in zip(pairs, results, strict=True)}


def compare(ours: pa.Table, java: dict[str, Any]) -> list[str]:
    """How our table differs from Java's on the columns both define (empty: it does not)."""
    if not java["ok"]:
        return [f"Java failed: {java.get('error')}"]
    problems = []
    missing = set(java["columns"]) - set(ours.column_names) - {"readable_metrics"}
    extra = set(ours.column_names) - set(java["columns"]) - set(java.get("dropped", []))
    if missing or extra:
        problems.append(f"columns: missing {sorted(missing)}, extra {sorted(extra)}")
    if [c for c in ours.column_names if c in java["columns"]] != \
            [c for c in java["columns"] if c in ours.column_names]:
        problems.append(f"column order {ours.column_names} vs {java['columns']}")
    java_types = dict(zip(java["columns"], java["types"], strict=True))
    for f in ours.schema:
        if f.name in java_types and spark_type(f.type) != java_types[f.name]:
            problems.append(f"{f.name}: type {spark_type(f.type)} vs {java_types[f.name]}")
    columns = [c for c in ours.column_names if c in java_types]
    mine, theirs = _multiset(_rows(ours), columns), _multiset(java["rows"], columns)
    if mine != theirs:
        only_ours = list((mine - theirs).elements())[:3]
        only_java = list((theirs - mine).elements())[:3]
        problems.append(f"rows differ: {len(ours)} vs {len(java['rows'])}; only ours "
                        f"{only_ours}; only Java {only_java}")
    return problems


def _ours(table: Table, kind: str, snapshot_id: int | None) -> pa.Table:
    method = getattr(table.inspect, kind)
    result: pa.Table = method() if snapshot_id is None else method(snapshot_id)
    return result


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_metadata_table_matches_java_on_every_corpus_table(
        java_tables: JavaTables, java_metadata_tables: dict[Key, dict[str, Any]],
        kind: str) -> None:
    failures: list[str] = []
    compared = 0
    for (name, k, sid), java in java_metadata_tables.items():
        if k != kind:
            continue
        ours = _ours(_open(java_tables, name), kind, sid)
        if not java["ok"] and any(limit in java["error"] for limit in JAVA_LIMITS):
            continue
        compared += 1
        failures.extend(f"{name}@{sid}: {p}" for p in compare(ours, java))
    # Java reads this metadata table of most corpus tables.
    assert compared >= len(java_tables.entries(kind="table")) * 3 // 4
    assert not failures, "\n".join(failures)


def test_corpus_has_rows_for_the_new_tables(
        java_metadata_tables: dict[Key, dict[str, Any]]) -> None:
    # The comparison above must not pass on empty tables only.
    rows: Counter[str] = Counter()
    for (_, kind, _), java in java_metadata_tables.items():
        rows[kind] += len(java.get("rows", []))
    for kind in ALL_KINDS:
        assert rows[kind] > 0, kind


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


def test_partitions_add_up_to_the_snapshot_summary(java_tables: JavaTables) -> None:
    for name in ("db.v2_merge_on_read", "db.v3_deletion_vectors", "db.v2_partition_evolution",
                 "db.java_v2_equality_deletes"):
        table = _open(java_tables, name)
        for snap in table.metadata.snapshots:
            assert snap.summary is not None
            parts = table.inspect.partitions(snap.snapshot_id)
            total = {c: sum(parts.column(c).to_pylist()) for c in parts.column_names
                     if c.endswith("_count") or c.endswith("_bytes")}
            summary = snap.summary
            assert total["record_count"] == int(summary["total-records"]), name
            assert total["file_count"] == int(summary["total-data-files"]), name
            assert total["position_delete_record_count"] + \
                total["equality_delete_record_count"] == \
                int(summary.get("total-position-deletes", 0)) + \
                int(summary.get("total-equality-deletes", 0)), name
            assert total["position_delete_file_count"] + total["equality_delete_file_count"] \
                == int(summary["total-delete-files"]), name
            # One row per partition (values under specs of equal width).
            if "partition" in parts.column_names:
                keys = list(zip(parts.column("partition").to_pylist(),
                                parts.column("spec_id").to_pylist(), strict=True))
                assert len({json.dumps(k, sort_keys=True, default=str) for k in keys}) \
                    == len(keys)


def test_position_deletes_count_what_the_delete_files_say(java_tables: JavaTables) -> None:
    for name in ("db.v2_merge_on_read", "db.v3_deletion_vectors", "db.v1_upgrade", "db.v2_orc",
                 "db.v2_avro", "db.java_v2_file_formats"):
        table = _open(java_tables, name)
        for snap in table.metadata.snapshots:
            deletes = table.inspect.delete_files(snap.snapshot_id)
            positions = table.inspect.position_deletes(snap.snapshot_id)
            pos_files = deletes.filter(pc.equal(deletes.column("content"), 1))
            assert positions.num_rows == sum(pos_files.column("record_count").to_pylist())
            per_file = Counter(positions.column("delete_file_path").to_pylist())
            for path, count in zip(pos_files.column("file_path").to_pylist(),
                                   pos_files.column("record_count").to_pylist(), strict=True):
                assert per_file[path] >= count  # a Puffin file may hold several DVs
            data_paths = set(table.inspect.data_files(snap.snapshot_id)
                             .column("file_path").to_pylist())
            assert set(positions.column("file_path").to_pylist()) <= data_paths


def test_all_manifests_lists_every_snapshots_manifests(java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.v2_copy_on_write")
    every = table.inspect.all_manifests()
    for snap in table.metadata.snapshots:
        mine = every.filter(pc.equal(every.column("reference_snapshot_id"), snap.snapshot_id))
        assert sorted(mine.column("path").to_pylist()) == \
            sorted(table.inspect.manifests(snap.snapshot_id).column("path").to_pylist())
    # all_entries reads each distinct manifest once.
    entries = table.inspect.all_entries()
    distinct = set(every.column("path").to_pylist())
    per_manifest = sum(table.inspect.entries(s.snapshot_id).num_rows
                       for s in table.metadata.snapshots)
    assert entries.num_rows <= per_manifest
    assert len(distinct) < every.num_rows


def test_a_warm_inspect_reads_no_manifest_again(java_tables: JavaTables) -> None:
    table = _open(java_tables, "db.v2_merge_on_read")
    cache = ManifestCache()
    inspect = InspectTables(table, cache=cache)
    first = inspect.all_files()
    misses = cache.misses
    assert misses > 0
    again = inspect.all_files()
    assert cache.misses == misses
    assert again.equals(first)


def test_unknown_snapshot_is_an_error(java_tables: JavaTables) -> None:
    inspect = _open(java_tables, "db.v2_refs").inspect
    assert isinstance(inspect, InspectTables)
    for kind in PER_SNAPSHOT:
        with pytest.raises(NoSuchSnapshot):
            getattr(inspect, kind)(12345)


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
    partitions = table.inspect.partitions()
    assert partitions.num_rows == 0
    assert partitions.column_names[-2:] == ["last_updated_at", "last_updated_snapshot_id"]
    deletes = table.inspect.position_deletes()
    assert deletes.num_rows == 0
    assert deletes.column_names[:3] == ["file_path", "pos", "row"]
    # Its older snapshots are still in the all_* tables.
    assert table.inspect.all_files().num_rows > 0


def test_v1_void_partition_field_of_another_type_unifies(tmp_path: Any) -> None:
    """In v1 a removed ``day(ts)`` becomes ``void(ts)``: same field id, the source's type
    (timestamp) instead of date. Files of both specs still list together, values kept."""
    import datetime

    import icenb

    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, ts timestamp",
                                               partition_by=["day(ts)"], format_version=1)
    t.append([{"id": 1, "ts": datetime.datetime(2024, 1, 1, 5)}])
    with t.update_spec() as u:
        u.remove_field("ts_day")
    t.append([{"id": 2, "ts": datetime.datetime(2024, 1, 2, 5)}])
    files = t.inspect.files()
    by_spec = dict(zip(files.column("spec_id").to_pylist(),
                       files.column("partition").to_pylist(), strict=True))
    assert by_spec == {0: {"ts_day": datetime.date(2024, 1, 1)}, 1: {"ts_day": None}}
    assert sorted(r["record_count"] for r in t.inspect.partitions().to_pylist()) == [1, 1]
