"""Scan planning checked against tables written by Iceberg Java (spec: Scan Planning)."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from icenb.errors import NoSuchSnapshot, ValidationError
from icenb.io.avro import FIELD_ID_KEY
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    live_data_files,
    read_manifest_list,
    read_manifest_list_table,
)
from icenb.io.metadata_files import load_table_metadata
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import bind
from icenb.spec.manifest import FileContent, FileFormat, file_scan_task_to_json
from icenb.spec.metrics_evaluator import FileMetrics, inclusive_match
from icenb.spec.partition_spec import UNPARTITIONED, PartitionField, PartitionSpec
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.transforms import IdentityTransform
from icenb.table import ScanPlan, plan_files
from icenb.table.scan.delete_index import match_deletes
from icenb.table.scan.read import read_plan
from tests.reference_fixtures import JavaTables

DELETE_TABLES = ("db.v2_merge_on_read", "db.v3_deletion_vectors", "db.java_v2_equality_deletes",
                 "db.v1_upgrade", "db.v2_upgrade")


def _load(java_tables: JavaTables, name: str) -> TableMetadata:
    return load_table_metadata(str(java_tables.location(name)), FileIO())


def _paths(plan: ScanPlan) -> list[str]:
    return sorted(plan.files.column("file_path").to_pylist())


def _check_deletes(name: str, plan: ScanPlan) -> int:
    """Every matched delete obeys the spec's sequence-number / partition rules; returns the
    number of (data file, delete file) pairs."""
    pairs = 0
    selected = {t.data_file.file_path for t in plan.tasks}
    seqs = plan.data_entries.column("sequence_number").to_pylist()
    delete_seqs = plan.delete_entries.column("sequence_number").to_pylist()
    for i, task in enumerate(plan.tasks):
        data = task.data_file
        for j, delete in zip(plan.deletes_per_file[i], task.delete_files, strict=True):
            pairs += 1
            where = f"{name}: {delete.file_path} -> {data.file_path}"
            if delete.content == FileContent.EQUALITY_DELETES:
                assert seqs[i] < delete_seqs[j], where
                global_delete = plan.specs[delete.spec_id].is_unpartitioned
                assert global_delete or (delete.spec_id == data.spec_id
                                         and delete.partition == data.partition), where
            else:
                assert seqs[i] <= delete_seqs[j], where
                assert delete.spec_id == data.spec_id, where
                assert delete.partition == data.partition, where
                if delete.referenced_data_file is not None:
                    assert delete.referenced_data_file == data.file_path, where
    # and every delete the rules apply is matched (scalar oracle over all pairs)
    deletes = plan.delete_entries.column("data_file").to_pylist()
    for i, task in enumerate(plan.tasks):
        data = task.data_file
        expected = set()
        for j, rec in enumerate(deletes):
            spec_id = plan.delete_entries.column("partition_spec_id")[j].as_py()
            same = spec_id == data.spec_id and rec_partition(plan, j) == data.partition
            bounds = _path_bounds(rec)
            ref = rec.get("referenced_data_file") or (bounds[0] if bounds[0] == bounds[1]
                                                       else None)
            if rec["content"] == 2:
                glob = plan.specs[spec_id].is_unpartitioned
                if seqs[i] < delete_seqs[j] and (same or glob):
                    expected.add(j)
            elif same and seqs[i] <= delete_seqs[j] and ref in (None, data.file_path):
                expected.add(j)
        dvs = {j for j in expected if deletes[j]["file_format"].upper() == "PUFFIN"}
        if dvs:
            expected = {j for j in expected if deletes[j]["content"] == 2} | dvs
        assert set(plan.deletes_per_file[i]) == expected, f"{name}: {data.file_path}"
    for delete in (f for t in plan.tasks for f in t.delete_files):
        if delete.file_format == FileFormat.PUFFIN:
            assert delete.content_offset is not None
            assert delete.referenced_data_file in selected, name
    return pairs


def rec_partition(plan: ScanPlan, j: int) -> tuple[object, ...]:
    spec = plan.specs[plan.delete_entries.column("partition_spec_id")[j].as_py()]
    part = plan.delete_entries.column("data_file")[j].as_py()["partition"]
    by_name = dict(part.items()) if part else {}
    return tuple(by_name.get(pf.name) for pf in spec.fields)


def _path_bounds(rec: dict[str, object]) -> tuple[str | None, str | None]:
    out: list[str | None] = []
    for key in ("lower_bounds", "upper_bounds"):
        items = dict(rec.get(key) or [])  # type: ignore[call-overload]
        raw = items.get(2147483546)
        out.append(None if raw is None else bytes(raw).decode())
    return out[0], out[1]


def test_unfiltered_plans_select_live_data_files_of_every_snapshot(
        java_tables: JavaTables) -> None:
    cache = ManifestCache()
    snapshots = 0
    pairs: dict[str, int] = {}
    for entry in java_tables.entries("table"):
        name = entry["name"]
        md = _load(java_tables, name)
        for snap in md.snapshots:
            io = FileIO()
            plan = plan_files(io, md, snapshot_id=snap.snapshot_id, cache=cache)
            live = live_data_files(io, md, snap.snapshot_id, cache=cache)
            expected = sorted(pc.struct_field(live.data_files.column("data_file"),
                                              "file_path").to_pylist())
            where = f"{name} snapshot {snap.snapshot_id}"
            assert _paths(plan) == expected, where
            assert plan.files_selected == plan.files_considered == len(expected), where
            assert plan.delete_files_selected == live.delete_files.num_rows, where
            assert len(plan.tasks) == len(expected)
            summary: dict[str, str] = dict(snap.summary or {})
            if "total-records" in summary:
                total = sum(t.data_file.record_count for t in plan.tasks)
                assert total == int(summary["total-records"]), where
            if name in DELETE_TABLES:
                pairs[name] = pairs.get(name, 0) + _check_deletes(where, plan)
            snapshots += 1
    assert snapshots > 50
    # every table with deletes has some matched to data files
    assert set(pairs) == set(DELETE_TABLES)
    assert all(n > 0 for n in pairs.values()), pairs


def test_every_live_delete_file_applies_somewhere_in_current_snapshots(
        java_tables: JavaTables) -> None:
    for name in DELETE_TABLES:
        plan = plan_files(FileIO(), _load(java_tables, name))
        used = {j for idx in plan.deletes_per_file for j in idx}
        assert plan.delete_files_selected > 0, name
        assert used == set(range(plan.delete_files_selected)), name


def test_deletion_vectors_apply_only_to_their_file(java_tables: JavaTables) -> None:
    plan = plan_files(FileIO(), _load(java_tables, "db.v3_deletion_vectors"))
    dvs = [(t.data_file.file_path, d) for t in plan.tasks for d in t.delete_files
           if d.file_format == FileFormat.PUFFIN]
    assert dvs
    for path, dv in dvs:
        assert dv.referenced_data_file == path
    files = plan.files
    with_deletes = [p for p, d in zip(files.column("file_path").to_pylist(),
                                      files.column("delete_files").to_pylist(), strict=True) if d]
    assert sorted(with_deletes) == sorted(p for p, _ in dvs)


FILTERS = ["id = 1", "id > 3", "cat = 'alpha'", "cat = 'nope'", "starts_with(cat, 'be')",
           "ts >= '2024-01-01T00:00:00+00:00'", "d < '2023-07-01'", "n > 7 and id < 100",
           "amount > 1.5", "id in (2, 3, 99)", "cat is null", "id = 1 or cat = 'beta'"]


@pytest.mark.parametrize("name", ["db.v1_partition_evolution", "db.v2_partition_evolution",
                                  "db.v3_partition_evolution"])
def test_filtered_plans_keep_exactly_the_files_whose_metrics_may_match(
        java_tables: JavaTables, name: str) -> None:
    md = _load(java_tables, name)
    full = plan_files(FileIO(), md)
    # each file holds one row, so its bounds are its values and inclusive = exact
    assert {t.data_file.record_count for t in full.tasks} == {1}
    pruned_some = False
    for text in FILTERS:
        bound = bind(parse(text), md.schema)
        plan = plan_files(FileIO(), md, row_filter=text)
        expected = sorted(
            t.data_file.file_path for t in full.tasks
            if inclusive_match(bound, FileMetrics.from_serialized(
                md.schema, t.data_file.record_count, t.data_file.value_counts,
                t.data_file.null_value_counts, t.data_file.nan_value_counts,
                t.data_file.lower_bounds, t.data_file.upper_bounds)))
        assert _paths(plan) == expected, text
        assert plan.files_considered <= full.files_selected
        pruned_some |= plan.files_selected < full.files_selected
    assert pruned_some


def test_selective_filter_skips_manifests_without_opening_them(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_partition_evolution")
    snap = md.current_snapshot()
    assert snap is not None
    manifests = read_manifest_list(FileIO(), snap, md.format_version)
    io = FileIO()
    plan = plan_files(io, md, row_filter="cat = 'nope'")
    assert plan.files_selected == 0
    assert plan.manifests_total == len(manifests)
    assert plan.manifests_skipped > 0
    assert plan.manifests_read + plan.manifests_skipped == plan.manifests_total
    assert io.stats.opened == plan.manifests_read + 1 < len(manifests) + 1

    io = FileIO()
    everything = plan_files(io, md)
    assert io.stats.opened == everything.manifests_read + 1


def test_false_filter_opens_only_the_manifest_list(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_partition_evolution")
    io = FileIO()
    plan = plan_files(io, md, row_filter="false")
    assert plan.files_selected == 0 and plan.tasks == []
    assert io.stats.opened == 1


def test_residuals_drop_what_the_partition_decides(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_partition_evolution")
    plan = plan_files(FileIO(), md, row_filter="cat = 'alpha' and n > 0")
    assert plan.tasks
    for task in plan.tasks:
        residual = str(task.residual_filter)
        if task.spec.spec_id in (0, 1):  # identity(cat): the partition decides cat = 'alpha'
            assert "cat" not in residual and "n" in residual
    unfiltered = plan_files(FileIO(), md)
    assert {t.residual_filter for t in unfiltered.tasks} == {True}


def test_tasks_serialize_as_json(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_merge_on_read")
    plan = plan_files(FileIO(), md)
    docs = [file_scan_task_to_json(t, md.format_version) for t in plan.tasks]
    assert any(d["delete-files"] for d in docs)
    for d, t in zip(docs, plan.tasks, strict=True):
        assert d["data-file"]["file-path"] == t.data_file.file_path
        assert d["data-file"]["spec-id"] == t.spec.spec_id
        json.dumps(d)


def test_unknown_snapshot_and_empty_table(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_merge_on_read")
    with pytest.raises(NoSuchSnapshot):
        plan_files(FileIO(), md, snapshot_id=123)
    empty = plan_files(FileIO(), _load(java_tables, "db.v1_replace_table"))
    assert empty.snapshot_id is None and empty.tasks == [] and empty.files.num_rows == 0


def test_case_insensitive_filter(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_partition_evolution")
    a = plan_files(FileIO(), md, row_filter="CAT = 'alpha'", case_sensitive=False)
    b = plan_files(FileIO(), md, row_filter="cat = 'alpha'")
    assert _paths(a) == _paths(b) and a.files_selected < a.files_considered


# --------------------------------------------------------------------------- synthetic deletes

_PART = pa.struct([pa.field("cat", pa.string(), metadata={FIELD_ID_KEY: "1000"})])
_BOUNDS = pa.map_(pa.int32(), pa.binary())


def _entries(rows: list[tuple[int, str, str, int, int, str | None, str | None]]) -> pa.Table:
    """(content, path, format, seq, spec id, partition cat, referenced/bounded path) rows."""
    df_type = pa.struct([
        pa.field("content", pa.int32()), pa.field("file_path", pa.string()),
        pa.field("file_format", pa.string()), pa.field("partition", _PART),
        pa.field("lower_bounds", _BOUNDS), pa.field("upper_bounds", _BOUNDS),
        pa.field("referenced_data_file", pa.string()),
    ])
    files = []
    for content, path, fmt, _, _, cat, ref in rows:
        by_bounds = ref is not None and fmt != "PUFFIN"
        bounds = [(2147483546, ref.encode())] if by_bounds and ref is not None else None
        files.append({"content": content, "file_path": path, "file_format": fmt,
                      "partition": {"cat": cat}, "lower_bounds": bounds,
                      "upper_bounds": bounds, "referenced_data_file": None if by_bounds
                      else ref})
    return pa.table({
        "sequence_number": pa.array([r[3] for r in rows], pa.int64()),
        "partition_spec_id": pa.array([r[4] for r in rows], pa.int32()),
        "data_file": pa.array(files, df_type),
    })


def test_match_deletes_follows_the_sequence_number_and_partition_rules() -> None:
    spec = PartitionSpec(1, (PartitionField((1,), 1000, IdentityTransform(), "cat"),))
    specs = {0: UNPARTITIONED, 1: spec}
    data = _entries([(0, "a1", "PARQUET", 5, 1, "a", None),
                     (0, "a2", "PARQUET", 7, 1, "a", None),
                     (0, "b1", "PARQUET", 5, 1, "b", None),
                     (0, "u1", "PARQUET", 5, 0, None, None),
                     (0, "u6", "PARQUET", 6, 0, None, None)])
    deletes = _entries([
        (1, "pos-a", "PARQUET", 5, 1, "a", None),      # 0: seq 5 >= a1's 5, not a2's 7
        (2, "eq-a", "PARQUET", 5, 1, "a", None),       # 1: needs data seq < 5: none
        (2, "eq-a6", "PARQUET", 6, 1, "a", None),      # 2: a1 only
        (2, "eq-global", "PARQUET", 6, 0, None, None),  # 3: every file with seq < 6
        (1, "pos-ref-b1", "PARQUET", 9, 1, "b", "b1"),  # 4: b1 by file_path bounds
        (1, "pos-ref-a1-in-b", "PARQUET", 9, 1, "b", "a1"),  # 5: wrong partition: nothing
        (1, "dv-a2", "PUFFIN", 7, 1, "a", "a2"),       # 6: a2, seq 7 <= 7
        (1, "pos-a9", "PARQUET", 9, 1, "a", None),     # 7: a1 (a2 has a DV instead)
    ])
    matched = match_deletes(data, deletes, specs)
    assert matched == ((0, 2, 3, 7), (6,), (3, 4), (3,), ())


# --------------------------------------------------------------------------- opened files


def _summary_may_contain(listing: pa.Table, value: str) -> list[str]:
    """Oracle: the manifests whose identity-partition summary (one string field) may hold
    ``value`` (UTF-8 bytes order = code point order) and that have live files."""
    out = []
    for row in listing.to_pylist():
        (summary,) = row["partitions"]
        live = (row["added_files_count"] or 0) + (row["existing_files_count"] or 0)
        if live and summary["lower_bound"] <= value.encode() <= summary["upper_bound"]:
            out.append(row["manifest_path"])
    return out


@pytest.mark.parametrize(("name", "column", "value"), [
    ("db.v2_merge_on_read", "cat", "even"),  # a delete manifest holds only 'odd'
    ("db.v2_maintenance", "cat", "c"),
])
def test_planning_and_reading_never_open_more_than_pruning_requires(
        java_tables: JavaTables, name: str, column: str, value: str) -> None:
    md = _load(java_tables, name)
    snap = md.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    listing = read_manifest_list_table(FileIO(), snap, md.format_version)
    expected_manifests = _summary_may_contain(listing, value)
    assert 0 < len(expected_manifests) < listing.num_rows

    io = FileIO()
    opened: list[str] = []
    io.on_open = opened.append
    cache = ManifestCache()
    plan = plan_files(io, md, row_filter=f"{column} = '{value}'", cache=cache)
    assert opened[0] == snap.manifest_list
    assert sorted(opened[1:]) == sorted(expected_manifests)
    assert io.stats.opened == 1 + len(expected_manifests) == 1 + plan.manifests_read
    assert plan.tasks and all(t.data_file.partition == (value,) for t in plan.tasks)

    # reading opens each matching task's data file (and its deletes), and nothing else
    opened.clear()
    rows = read_plan(io, plan)
    assert rows.num_rows > 0
    needed = [t.data_file.file_path for t in plan.tasks] + \
        [d.file_path for t in plan.tasks for d in t.delete_files]
    assert sorted(opened) == sorted(needed)  # no manifest or list again

    # a warm re-plan of the same snapshot opens nothing: manifests and list are cached
    opened.clear()
    again = plan_files(io, md, row_filter=f"{column} = '{value}'", cache=cache)
    assert opened == []
    assert _paths(again) == _paths(plan)
    assert again.deletes_per_file == plan.deletes_per_file


# --------------------------------------------------------------------------- sub-plans (take)


def _selections(n: int) -> list[list[int]]:
    """Row selections of a plan with ``n`` files: runs, single rows, reversed, repeated, none."""
    return [list(range(n)), list(range(1, n)), [n - 1], list(reversed(range(n))),
            [0, n - 1, 0], []]


@pytest.mark.parametrize("name", DELETE_TABLES)
def test_take_plans_exactly_those_files_with_their_deletes(java_tables: JavaTables,
                                                           name: str) -> None:
    md = _load(java_tables, name)
    for snap in md.snapshots:
        plan = plan_files(FileIO(), md, snapshot_id=snap.snapshot_id)
        for rows in _selections(plan.files_selected):
            forms: list[Any] = [rows, np.asarray(rows, dtype=np.int64)]
            if rows and rows == list(range(rows[0], rows[0] + len(rows))):
                forms.append(range(rows[0], rows[0] + len(rows)))
            for picked in forms:
                sub = plan.take(picked)
                assert sub.tasks == [plan.tasks[i] for i in rows], (name, rows)
                referenced = {j for i in rows for j in plan.deletes_per_file[i]}
                assert sub.delete_files_selected == len(referenced)
                assert _paths(sub) == sorted(plan.files.column("file_path")
                                             .take(pa.array(rows, pa.int64())).to_pylist())
                assert (sub.snapshot_id, sub.files_considered) == \
                    (plan.snapshot_id, plan.files_considered)


def test_take_reindexes_files_sharing_and_reordering_deletes(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v1_upgrade")
    base = plan_files(FileIO(), md)
    assert base.files_selected >= 3 and base.delete_files_selected >= 4
    # Files that share deletes and reference several, in any order (as equality deletes do).
    per_file = [(), (1, 3), (0, 1, 2, 3), (2,)] + [()] * (base.files_selected - 4)
    plan = dataclasses.replace(base, deletes_per_file=tuple(per_file))
    delete_paths = plan.delete_entries.column("data_file").combine_chunks() \
        .field("file_path").to_pylist()
    for rows in ([1, 3], [3, 1], [2], [0], [3, 2, 1]):
        sub = plan.take(rows)
        assert sub.tasks == [plan.tasks[i] for i in rows]
        used = sorted({j for i in rows for j in per_file[i]})
        assert sub.delete_entries.column("data_file").combine_chunks().field("file_path") \
            .to_pylist() == [delete_paths[j] for j in used]
        assert [[delete_paths[used[k]] for k in ks] for ks in sub.deletes_per_file] == \
            [[delete_paths[j] for j in per_file[i]] for i in rows]


def test_reading_the_pieces_of_a_plan_reads_the_plan(java_tables: JavaTables) -> None:
    md = _load(java_tables, "db.v2_merge_on_read")
    io = FileIO()
    plan = plan_files(io, md, row_filter="id > 2")
    n = plan.files_selected
    pieces = [plan.take(range(i, min(i + 2, n))) for i in range(0, n, 2)]
    whole = read_plan(io, plan)
    assert pa.concat_tables([read_plan(io, p) for p in pieces]).equals(whole)
    restored = pickle.loads(pickle.dumps(pieces[-1]))
    assert restored.tasks == pieces[-1].tasks


def test_take_refuses_rows_the_plan_does_not_have(java_tables: JavaTables) -> None:
    plan = plan_files(FileIO(), _load(java_tables, "db.v2_merge_on_read"))
    n = plan.files_selected
    for rows in ([n], [-1], range(n - 1, n + 1), range(-1, 1)):
        with pytest.raises(ValidationError, match="row index out of range"):
            plan.take(rows)


def test_partition_field_ids_survive_inheritance_so_cached_manifests_plan_alike(
        tmp_path: Any) -> None:
    """The decoded partition struct keeps its field ids (and spec order) after inheritance:
    without them, manifests decoded by different paths (a small read, then a large batch)
    split one partition field in two when concatenated, and a warm plan of the 100,000-file
    benchmark table kept 341 of the 351 files a cold plan keeps (issue 18's pruning lab)."""
    import datetime as dt

    import icenb
    from icenb.io.manifest_reader import ManifestCache, read_manifest_entries, read_manifest_list

    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id int, ts timestamp", partition_by=["day(ts)", "bucket(4, id)"])
    for day in (1, 2, 3):
        t.append([{"id": i, "ts": dt.datetime(2024, 1, day)} for i in range(8)])
    snap = t.current_snapshot
    assert snap is not None
    manifests = read_manifest_list(t.io, snap, 2)
    entries = read_manifest_entries(t.io, manifests[:1], 2)
    ptype = entries.schema.field("data_file").type.field("partition").type
    fields = [ptype.field(i) for i in range(ptype.num_fields)]
    assert [f.name for f in fields] == ["ts_day", "id_bucket"]
    assert [(f.metadata or {}).get(FIELD_ID_KEY) for f in fields] == [b"1000", b"1001"]
    cache = ManifestCache()
    cold = {f: plan_files(t.io, t.metadata, row_filter=f).files_selected
            for f in ("id = 3", "ts >= '2024-01-03T00:00:00'")}
    plan_files(t.io, t.metadata, row_filter="ts >= '2024-01-03T00:00:00'", cache=cache)
    assert plan_files(t.io, t.metadata, row_filter="id = 3", cache=cache).files_selected \
        == cold["id = 3"]
