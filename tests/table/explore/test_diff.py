"""Table.diff, Table.schema_history and Table.spec_history on tables icenb writes.

Diffs are checked against the ``files`` inspect table of each snapshot (the live file sets) and
``rows()`` against full reads of both snapshots; histories against the evolution steps made.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import NoSuchSnapshot, ValidationError
from icenb.table import Table
from icenb.table.explore.diff import DELETION_VECTOR, POSITION_DELETE, SnapshotDiff

SCHEMA = "id long not null, ts timestamp, kind string"


def rows(lo: int, hi: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(lo, hi), pa.int64()),
        "ts": pa.array([dt.datetime(2024, 1, 1 + i % 3) for i in range(lo, hi)],
                       pa.timestamp("us")),
        "kind": [f"k{i % 2}" for i in range(lo, hi)],
    })


def make(tmp_path: Path, *, version: int = 2, mode: str = "merge-on-read",
         partition_by: list[str] | None = None) -> Table:
    wh = icenb.warehouse(tmp_path)
    return wh.create_table("db.t", SCHEMA, partition_by=partition_by, format_version=version,
                           properties={"write.delete.mode": mode})


def sid(t: Table) -> int:
    snap = t.current_snapshot
    assert snap is not None
    return snap.snapshot_id


def live(t: Table, snapshot_id: int) -> dict[str, dict[str, Any]]:
    """path -> the ``files`` row of every live file (data and delete) of a snapshot."""
    files = t.inspect.files(snapshot_id).to_pylist()
    return {r["file_path"]: r for r in files}


def multiset(table: pa.Table) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.values()) for r in table.to_pylist())


def check_against_inspect(t: Table, d: SnapshotDiff) -> None:
    """The diff's files and counts are exactly the difference of the two ``files`` tables."""
    a, b = live(t, d.a.snapshot_id), live(t, d.b.snapshot_id)

    def expect(side: dict[str, dict[str, Any]], other: dict[str, dict[str, Any]],
               data: bool) -> set[str]:
        return {p for p, r in side.items() if p not in other and (r["content"] == 0) == data}

    for fs, want in ((d.data_added, expect(b, a, True)), (d.data_removed, expect(a, b, True)),
                     (d.deletes_added, expect(b, a, False)),
                     (d.deletes_removed, expect(a, b, False))):
        assert fs.count == len(want)
        assert {f.path for f in fs.kept} == want
        src = b if fs in (d.data_added, d.deletes_added) else a
        assert fs.records == sum(src[p]["record_count"] for p in want)
        assert fs.size_in_bytes == sum(src[p]["file_size_in_bytes"] for p in want)
    assert d.unchanged_data_files == sum(1 for p, r in b.items() if r["content"] == 0
                                         and p in a)


def check_rows(t: Table, d: SnapshotDiff) -> None:
    """rows() is the multiset difference of full reads of a and b (with b's schema)."""
    removed, added = d.rows()
    before = multiset(t.at(d.a.snapshot_id).to_arrow())
    after = multiset(t.at(d.b.snapshot_id).to_arrow())
    assert multiset(removed) == before - after
    assert multiset(added) == after - before


def test_diff_of_appends(tmp_path: Path) -> None:
    t = make(tmp_path, partition_by=["day(ts)"])
    t.append(rows(0, 10))
    s1 = sid(t)
    t.append(rows(10, 16))
    t.append(rows(16, 20))
    d = t.diff(s1, "main")
    assert d.a.snapshot_id == s1 and d.b.snapshot_id == sid(t) and d.a_is_ancestor
    assert d.data_added.count == 6  # 3 days per append
    assert d.records_added == 10 and d.records_removed == 0
    assert d.deletes_added.count == 0 and not d.applications
    assert d.data_added.by_kind == (("data", 6, 10),)
    check_against_inspect(t, d)
    removed, added = d.rows()
    assert removed.num_rows == 0
    assert sorted(added.column("id").to_pylist()) == list(range(10, 20))
    check_rows(t, d)
    # reversed: what the later snapshot has is removed
    back = t.diff("main", s1)
    assert back.data_removed.count == 6 and back.records_removed == 10
    assert not back.a_is_ancestor
    assert t.diff(s1, s1).is_empty


def test_diff_of_copy_on_write_delete(tmp_path: Path) -> None:
    t = make(tmp_path, mode="copy-on-write")
    t.append(rows(0, 10))
    t.append(rows(10, 20))
    s1 = sid(t)
    t.delete("id = 3 or id = 12")
    d = t.diff(s1, sid(t))
    # both files rewritten (icenb writes the surviving rows into one new file)
    assert (d.data_removed.count, d.records_removed) == (2, 20)
    assert d.data_added.count >= 1 and d.records_added == 18
    assert d.deletes_added.count == 0
    check_against_inspect(t, d)
    removed, added = d.rows()
    assert sorted(removed.column("id").to_pylist()) == [3, 12]
    assert added.num_rows == 0
    check_rows(t, d)


def test_diff_of_v2_position_deletes(tmp_path: Path) -> None:
    t = make(tmp_path, partition_by=["day(ts)"])
    t.append(rows(0, 30))
    s1 = sid(t)
    t.delete("id = 4 or id = 7")  # both in day 2 (i % 3 == 1)
    t.delete("id = 5")  # day 3
    d = t.diff(s1, "main")
    assert d.data_added.count == 0 and d.data_removed.count == 0
    assert d.deletes_added.count == 2 and d.rows_deleted == 3
    assert {k for k, _, _ in d.deletes_added.by_kind} == {POSITION_DELETE}
    check_against_inspect(t, d)
    data = {p: r for p, r in live(t, sid(t)).items() if r["content"] == 0}
    day_of = {p: r["partition"] for p, r in data.items()}
    for app in d.applications:
        assert app.delete.kind == POSITION_DELETE
        assert app.data_file_count == len(app.data_files) == 1
        (target,) = app.data_files
        # a position delete applies within its partition (spec: Scan Planning)
        assert dict(app.delete.partition) == {k: v for k, v in day_of[target].items()
                                              if v is not None}
    assert sorted(a.rows for a in d.applications) == [1, 2]
    assert d.data_files_hit == 2
    removed, added = d.rows()
    assert sorted(removed.column("id").to_pylist()) == [4, 5, 7] and added.num_rows == 0
    check_rows(t, d)


def test_diff_of_v3_deletion_vectors(tmp_path: Path) -> None:
    t = make(tmp_path, version=3)
    t.append(rows(0, 10))
    (first_file,) = live(t, sid(t))  # holds ids 0..9
    t.append(rows(10, 20))
    s1 = sid(t)
    t.delete("id = 1 or id = 2 or id = 3")
    s2 = sid(t)
    d = t.diff(s1, s2)
    assert d.deletes_added.by_kind == ((DELETION_VECTOR, 1, 3),)
    (app,) = d.applications
    assert app.delete.kind == DELETION_VECTOR and app.rows == 3
    assert app.delete.referenced_data_file == app.data_files[0]
    assert app.data_files == (first_file,)
    check_against_inspect(t, d)
    check_rows(t, d)
    # a second delete on the same file merges into a new DV: the old one is removed
    t.delete("id = 8")
    d2 = t.diff(s2, "main")
    assert d2.deletes_removed.count == 1 and d2.deletes_added.count == 1
    assert d2.rows_deleted == 4  # the merged DV holds all four positions
    check_against_inspect(t, d2)
    removed, added = d2.rows()
    assert removed.column("id").to_pylist() == [8] and added.num_rows == 0
    check_rows(t, d2)


def test_diff_of_overwrite_and_across_branches(tmp_path: Path) -> None:
    t = make(tmp_path)
    t.append(rows(0, 5))
    base = sid(t)
    t.create_branch("dev")
    t.append(rows(100, 103), branch="dev")
    t.overwrite(rows(50, 52))
    d = t.diff(base, "main")
    assert (d.data_removed.count, d.records_removed) == (1, 5)
    assert (d.data_added.count, d.records_added) == (1, 2)
    check_against_inspect(t, d)
    check_rows(t, d)
    # main and dev diverged from base: neither is an ancestor of the other
    x = t.diff("dev", "main")
    assert not x.a_is_ancestor and x.a_label == "dev" and x.b_label == "main"
    assert x.data_removed.count == 2 and x.records_removed == 8  # base file + dev's append
    check_against_inspect(t, x)
    check_rows(t, x)


def test_diff_keeps_exact_counts_but_few_files(tmp_path: Path) -> None:
    t = make(tmp_path, partition_by=["id"])
    t.append(rows(0, 1))
    s1 = sid(t)
    t.append(rows(1, 41))  # 40 files, one per id
    d = t.diff(s1, "main", max_files=6)
    assert d.data_added.count == 40 and d.data_added.records == 40
    assert len(d.data_added.head) == 3 and len(d.data_added.tail) == 3
    assert d.data_added.omitted == 34
    paths = sorted(live(t, sid(t)))
    assert [f.path for f in d.data_added.kept] == [p for p in paths if p in
                                                    {f.path for f in d.data_added.kept}]
    head, hidden, tail = d.data_added.sample(4)
    assert len(head) == 2 and len(tail) == 2 and hidden == 36
    assert tail[-1].path == max(f.path for f in d.data_added.kept)


def test_diff_rejects_unknown_snapshots(tmp_path: Path) -> None:
    t = make(tmp_path)
    t.append(rows(0, 2))
    with pytest.raises(NoSuchSnapshot) as e:
        t.diff(123, "main")
    assert e.value.value == 123
    with pytest.raises(NoSuchSnapshot):
        t.diff("nope", "main")
    with pytest.raises(ValidationError):
        t.diff(sid(t), sid(t), max_files=0)


# --------------------------------------------------------------------------- histories


def evolved(tmp_path: Path) -> Table:
    """A table whose schema and spec evolve over several commits, with data in between."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.e", "id int not null, ts timestamp, kind string, "
                        "loc struct<lat: double, lon: double>",
                        partition_by=["day(ts)"], format_version=2)
    t.append(pa.table({"id": pa.array([1, 2], pa.int32()),
                       "ts": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("us")),
                       "kind": ["a", "b"],
                       "loc": [{"lat": 1.0, "lon": 2.0}, None]}))
    with t.update_schema() as u:
        u.add_column("score", "double")
        u.rename_column("kind", "category")
    with t.update_schema() as u:
        u.update_column("id", "long")
        u.make_column_optional("id")
        u.rename_column("loc.lat", "latitude")
    with t.update_spec() as u:
        u.add_field("month(ts)")
        u.remove_field("ts_day")
    t.append(pa.table({"id": pa.array([3], pa.int64()),
                       "ts": pa.array([dt.datetime(2024, 3, 1)], pa.timestamp("us")),
                       "category": ["c"], "loc": [None], "score": [0.5]}))
    with t.update_schema() as u:
        u.delete_column("score")
    return t


def test_schema_history_tracks_fields_by_id(tmp_path: Path) -> None:
    t = evolved(tmp_path)
    h = t.schema_history()
    assert [s.schema_id for s in h.schemas] == [0, 1, 2, 3]
    assert [s.is_current for s in h.schemas] == [False, False, False, True]
    by_path = {f.latest.path: f for f in h.fields}
    assert by_path["id"].kinds() == {"promoted", "optional"}
    assert [None if v is None else v.type for v in by_path["id"].versions] == \
        ["int", "int", "long", "long"]
    assert by_path["category"].kinds() == {"renamed"}
    assert by_path["category"].versions[0] is not None
    assert by_path["category"].versions[0].name == "kind"
    assert by_path["loc.latitude"].kinds() == {"renamed"}  # nested field, full path
    score = by_path["score"]
    assert score.kinds() == {"added", "dropped"} and score.dropped
    assert [v is not None for v in score.versions] == [False, True, True, False]
    assert [c.text for c in h.schemas[1].changes] == ["kind -> category", "+ score double"]
    assert {c.kind for c in h.schemas[2].changes} == {"promoted", "optional", "renamed"}
    assert [c.text for c in h.schemas[3].changes] == ["- score"]
    # which snapshots used which schema (snapshot.schema_id)
    snaps = list(t.snapshots)
    assert h.schema(0).snapshot_ids == (snaps[0].snapshot_id,)
    assert h.schema(2).snapshot_ids == (snaps[1].snapshot_id,)
    assert h.schema(3).snapshot_count == 0 and h.snapshots_without_schema == 0


def test_spec_history_counts_files_per_spec(tmp_path: Path) -> None:
    t = evolved(tmp_path)
    h = t.spec_history()
    assert [s.spec_id for s in h.specs] == [0, 1] and h.default_spec_id == 1
    assert [v.term for v in h.specs[0].fields] == ["day(ts)"]
    assert [v.term for v in h.specs[1].fields] == ["month(ts)"]
    day, month = h.fields
    assert day.kinds() == {"dropped"} and month.kinds() == {"added"}
    assert day.latest.source == "ts"
    u0, u1 = h.specs[0].usage, h.specs[1].usage
    assert u0 is not None and u1 is not None
    files = t.inspect.files().to_pylist()
    per_spec = Counter(r["spec_id"] for r in files)
    assert (u0.data_files, u1.data_files) == (per_spec[0], per_spec[1]) == (1, 1)
    assert (u0.data_records, u1.data_records) == (2, 1)
    # partition values shown as partition paths show them (the transform's human string)
    (added,) = t.diff(t.snapshots[0].snapshot_id, "main").data_added.kept
    assert added.spec_id == 1 and added.partition_text == "ts_month=2024-03"
    # at the first snapshot only spec 0 has files
    first = t.spec_history(t.snapshots[0].snapshot_id)
    assert first.specs[1].usage is None and first.specs[0].usage is not None
    with pytest.raises(NoSuchSnapshot):
        t.spec_history("no-such-ref")


def test_spec_history_of_v1_voids_and_source_of_dropped_column(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.v1", "id long, b string", partition_by=["b"], format_version=1)
    with t.update_spec() as u:
        u.remove_field("b")
    with t.update_schema() as u:
        u.delete_column("b")
    h = t.spec_history()
    f = h.field(1000)
    assert f.versions[0] is not None and f.versions[0].transform == "identity"
    assert f.versions[-1] is not None and f.versions[-1].transform == "void"
    assert f.kinds() == {"voided"}
    assert f.latest.source == "b"  # resolved from an older schema
    assert h.snapshot_id is None and all(s.usage is None for s in h.specs)


def test_diff_keys_deletion_vectors_by_puffin_path_and_offset(tmp_path: Path) -> None:
    # v3: one delete writes one Puffin file holding a DV per data file (spec: Deletion Vectors)
    t = icenb.warehouse(tmp_path).create_table("db.p", "id long, p string",
                                               partition_by=["p"], format_version=3)
    t.append(pa.table({"id": pa.array(range(10), pa.int64()), "p": ["a"] * 5 + ["b"] * 5}))
    base = sid(t)
    files = {r["partition"]["p"]: r["file_path"] for r in t.inspect.files().to_pylist()}
    t.delete("id = 1 or id = 7", mode="merge-on-read")
    mid = sid(t)
    d = t.diff(base, mid)
    assert d.deletes_added.count == 2 and d.deletes_added.by_kind == ((DELETION_VECTOR, 2, 2),)
    (puffin,) = {f.path for f in d.deletes_added}
    dvs = sorted(d.applications, key=lambda a: a.delete.partition_text)
    assert [a.delete.partition_text for a in dvs] == ["p=a", "p=b"]
    assert len({a.delete.content_offset for a in dvs}) == 2
    assert [a.data_files for a in dvs] == [(files["a"],), (files["b"],)]
    assert [a.delete.referenced_data_file for a in dvs] == [files["a"], files["b"]]
    assert d.data_files_hit == 2
    check_rows(t, d)
    # a new delete in p=a replaces that DV; the Puffin file stays live for p=b's DV
    t.delete("id = 2", mode="merge-on-read")
    d2 = t.diff(mid, "main")
    assert d2.deletes_added.count == 1 and d2.deletes_removed.count == 1
    (gone,) = d2.deletes_removed
    assert gone.key == dvs[0].delete.key and gone.path == puffin
    assert d2.unchanged_delete_files == 1
    (app,) = d2.applications
    assert app.data_files == (files["a"],) and app.rows == 2
    assert d2.deletes_removed.by_kind == ((DELETION_VECTOR, 1, 1),)
    removed, added = d2.rows()
    assert removed.column("id").to_pylist() == [2] and added.num_rows == 0
