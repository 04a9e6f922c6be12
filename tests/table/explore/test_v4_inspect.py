"""Metadata tables, partition statistics, history views and reprs of EXPERIMENTAL format-version 4
tables (docs/v4-layout.md#inspect): on every snapshot they give the answers of a v3 twin built with
the same operations, except the columns and tables whose meaning is the layout itself (named
where they are excluded)."""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.display import render
from icenb.io.manifest_reader import ManifestCache
from icenb.spec.manifest import EntryStatus
from icenb.table.scan.v4_planning import snapshot_entries
from icenb.table.table import Table

ADDED, EXISTING, DELETED = (int(s) for s in (EntryStatus.ADDED, EntryStatus.EXISTING,
                                             EntryStatus.DELETED))


def _rows(*parts: int) -> list[dict[str, Any]]:
    """Two rows in each partition ``p`` of ``parts``: one data file Dp per partition."""
    return [{"id": p * 10 + i, "p": p} for p in parts for i in range(2)]


# The operations, each run on both tables; the comment says where v4 puts the change
# (default write.v4.root-entry-limit 2).
_OPS: list[tuple[str, Any]] = [
    ("append D1", lambda t: t.append(_rows(1))),                       # a root entry
    ("append D2 D3 D4", lambda t: t.append(_rows(2, 3, 4))),           # a new leaf
    ("delete p=1, p=3", lambda t: t.delete("p = 1 or p = 3")),          # DELETED root + mDV
    ("merge-on-read delete", lambda t: t.delete("id = 21", mode="merge-on-read")),  # data DV
    ("overwrite p=4 by D5", lambda t: t.overwrite(_rows(5), "p = 4")),  # mDV union + root D5
]


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Table, Table]:
    """A v4 table and its v3 twin after the same operations (one snapshot each)."""
    wh = icenb.warehouse(tmp_path_factory.mktemp("wh"))
    v4 = wh.create_table("db.v4", "id long, p int", partition_by=["p"], format_version=4)
    v3 = wh.create_table("db.v3", "id long, p int", partition_by=["p"], format_version=3)
    for _, op in _OPS:
        op(v4)
        op(v3)
    assert len(v4.metadata.snapshots) == len(v3.metadata.snapshots) == len(_OPS)
    return v4, v3


def _pairs(twins: tuple[Table, Table]) -> list[tuple[int, int]]:
    v4, v3 = twins
    return [(a.snapshot_id, b.snapshot_id)
            for a, b in zip(v4.metadata.snapshots, v3.metadata.snapshots, strict=True)]


def _name(path: str | None) -> str | None:
    """A data file as Dp (one data file per partition in these tables)."""
    if path is None:
        return None
    part = next((s for s in path.split("/") if s.startswith("p=")), None)
    return path.rsplit("/", 1)[-1] if part is None else "D" + part.removeprefix("p=")


#: Differs by layout: a file added after a removal gets its ``first_row_id`` from the table's
#: ``next-row-id``, which v3 advances further (its rewritten manifest reserves ids for the
#: EXISTING rows, docs/v4-layout.md#removals); the rows' ``_row_id``s are the same
#: (test_v4_overwrite).
_LAYOUT_COLUMNS = ("first_row_id",)


def _canon(t: Table, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with paths named (data files Dp, DVs by their data file), snapshot ids as
    positions and the layout columns left out, sorted; the same for a v4 table and its twin
    when they agree."""
    pos = {s.snapshot_id: i for i, s in enumerate(t.metadata.snapshots)}
    out = []
    for r in rows:
        r = dict(r)
        if "data_file" in r:
            r["data_file"] = dict(r["data_file"])
        df = r.get("data_file", r)
        for key in _LAYOUT_COLUMNS:
            df.pop(key, None)
        for key in ("file_path", "referenced_data_file"):
            if key in df and df[key] is not None:
                ref = df.get("referenced_data_file")
                df[key] = ("DV " + str(_name(ref)) if key == "file_path" and ref is not None
                           else _name(df[key]))
        for key in ("snapshot_id", "last_updated_snapshot_id"):
            if r.get(key) is not None:
                r[key] = pos[r[key]]
        out.append(r)
    return sorted(out, key=repr)


def _drop(table: pa.Table, *names: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = table.drop_columns(
        [n for n in names if n in table.column_names]).to_pylist()
    return rows


# --------------------------------------------------------------------------- file-level tables


@pytest.mark.parametrize("name", ["files", "data_files", "delete_files"])
def test_file_tables_equal_the_twins_on_every_snapshot(twins: tuple[Table, Table],
                                                       name: str) -> None:
    v4, v3 = twins
    for a, b in _pairs(twins):
        mine = _canon(v4, getattr(v4.inspect, name)(a).to_pylist())
        theirs = _canon(v3, getattr(v3.inspect, name)(b).to_pylist())
        assert mine == theirs
    assert {r["file_path"] for r in _canon(v4, v4.inspect.files().to_pylist())} == {
        "D2", "D5", "DV D2"}
    ids = {_name(r["file_path"]): r["first_row_id"] for r in v4.inspect.data_files().to_pylist()}
    assert ids == {"D2": 2, "D5": 8}  # D1 0-1, D2-D4 2-7 (v3's twin gives D5 12)


def test_entries_equal_the_twins_but_status(twins: tuple[Table, Table]) -> None:
    """Live entries equal the twin's except ``status`` (v4 carries root entries as EXISTING
    where v3's fast append keeps the old manifest's ADDED) and the v4-only ``manifest_path``;
    the entries removed by a snapshot read DELETED by that snapshot in both."""
    v4, v3 = twins
    for i, (a, b) in enumerate(_pairs(twins)):
        mine = _canon(v4, _drop(v4.inspect.entries(a), "manifest_path"))
        theirs = _canon(v3, v3.inspect.entries(b).to_pylist())

        def live(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return sorted(({k: v for k, v in r.items() if k != "status"} for r in rows
                           if r["status"] != DELETED), key=repr)

        def removed_here(rows: list[dict[str, Any]], at: int = i) -> list[Any]:
            return sorted(repr(r) for r in rows
                          if r["status"] == DELETED and r["snapshot_id"] == at)

        assert live(mine) == live(theirs)
        assert removed_here(mine) == removed_here(theirs)


def test_entries_show_where_each_v4_entry_is(twins: tuple[Table, Table]) -> None:
    """``manifest_path`` names the root or the leaf; a leaf entry a manifest DV removes reads
    DELETED by the snapshot that added the DV; a DELETED root entry by its snapshot."""
    v4, _ = twins
    snaps = v4.metadata.snapshots
    s3 = snaps[2]
    rows = v4.inspect.entries(s3.snapshot_id).to_pylist()
    where = {(_name(r["data_file"]["file_path"]), r["status"]): r for r in rows}
    assert set(where) == {("D1", DELETED), ("D2", ADDED), ("D3", DELETED), ("D4", ADDED)}
    assert where[("D1", DELETED)]["manifest_path"] == s3.root_manifest
    assert where[("D1", DELETED)]["snapshot_id"] == s3.snapshot_id
    leaf = where[("D2", ADDED)]["manifest_path"]
    assert leaf != s3.root_manifest and where[("D3", DELETED)]["manifest_path"] == leaf
    assert where[("D3", DELETED)]["snapshot_id"] == s3.snapshot_id
    assert where[("D2", ADDED)]["snapshot_id"] == snaps[1].snapshot_id
    # the next commit drops the root's DELETED D1 (docs/v4-layout.md#appends); the leaf's DV stays
    later = {(_name(r["data_file"]["file_path"]), r["status"])
             for r in v4.inspect.entries(snaps[3].snapshot_id).to_pylist()}
    assert ("D1", DELETED) not in later and ("D3", DELETED) in later
    # the overwrite replaces the leaf's DV by one holding D3 and D4: each stays attributed to
    # the snapshot that removed it
    last = {_name(r["data_file"]["file_path"]): r["snapshot_id"]
            for r in v4.inspect.entries().to_pylist() if r["status"] == DELETED}
    assert last == {"D3": snaps[2].snapshot_id, "D4": snaps[4].snapshot_id}


def test_partitions_and_position_deletes_equal_the_twins(twins: tuple[Table, Table]) -> None:
    v4, v3 = twins
    for a, b in _pairs(twins):
        assert _canon(v4, _drop(v4.inspect.partitions(a), "last_updated_at")) == _canon(
            v3, _drop(v3.inspect.partitions(b), "last_updated_at"))
        assert _canon(v4, _drop(v4.inspect.position_deletes(a), "delete_file_path")) == _canon(
            v3, _drop(v3.inspect.position_deletes(b), "delete_file_path"))
    pd = v4.inspect.position_deletes().to_pylist()
    assert [(_name(r["file_path"]), r["pos"]) for r in pd] == [("D2", 1)]


def test_all_file_tables_hold_every_file_ever_live(twins: tuple[Table, Table]) -> None:
    """The all_* tables list a file once per distinct manifest: a v4 root is a manifest of its
    own (a root file repeats per root), so only the distinct files are the twin's."""
    v4, v3 = twins
    for name in ("all_files", "all_data_files", "all_delete_files"):
        mine = {r["file_path"] for r in _canon(v4, getattr(v4.inspect, name)().to_pylist())}
        theirs = {r["file_path"] for r in _canon(v3, getattr(v3.inspect, name)().to_pylist())}
        assert mine == theirs
    assert {r["file_path"] for r in _canon(v4, v4.inspect.all_data_files().to_pylist())} == {
        "D1", "D2", "D3", "D4", "D5"}
    entries = v4.inspect.all_entries().to_pylist()
    d1 = [r for r in entries if _name(r["data_file"]["file_path"]) == "D1"]
    assert sorted(r["status"] for r in d1) == sorted([ADDED, EXISTING, DELETED])  # roots 1-3
    # D3: ADDED in the leaf (roots 2), DELETED under the manifest DV of roots 3-5: two rows
    d3 = [r for r in entries if _name(r["data_file"]["file_path"]) == "D3"]
    assert sorted(r["status"] for r in d3) == sorted([ADDED, DELETED])


# --------------------------------------------------------------------------- manifests


def test_manifests_list_the_roots_live_leaves(twins: tuple[Table, Table]) -> None:
    """One row per live leaf (root files are in no row); the v4 column
    ``manifest_dv_removed_count`` counts the leaf's entries its root's manifest DV removes."""
    v4, _ = twins
    s = v4.metadata.snapshots
    assert v4.inspect.manifests(s[0].snapshot_id).num_rows == 0  # D1 is in the root
    rows = [v4.inspect.manifests(x.snapshot_id).to_pylist() for x in s[1:]]
    assert all(len(r) == 1 for r in rows)
    leaf = rows[0][0]
    assert leaf["content"] == 0 and leaf["added_snapshot_id"] == s[1].snapshot_id
    assert leaf["added_data_files_count"] == 3 and leaf["partition_spec_id"] == 0
    assert [p["lower_bound"] for p in leaf["partition_summaries"]] == ["2"]
    assert [p["upper_bound"] for p in leaf["partition_summaries"]] == ["4"]
    assert [r[0]["path"] for r in rows] == [leaf["path"]] * 4  # never rewritten
    assert [r[0]["manifest_dv_removed_count"] for r in rows] == [0, 1, 1, 2]
    every = v4.inspect.all_manifests()
    assert every.column("reference_snapshot_id").to_pylist() == [x.snapshot_id for x in s[1:]]
    snaps = v4.inspect.snapshots()
    assert snaps.column("root_manifest").to_pylist() == [x.root_manifest for x in s]
    assert snaps.column("manifest_list").null_count == len(s)


def test_table_wide_tables_equal_the_twins(twins: tuple[Table, Table]) -> None:
    v4, v3 = twins
    for name in ("snapshots", "history", "refs", "metadata_log_entries"):
        mine, theirs = getattr(v4.inspect, name)(), getattr(v3.inspect, name)()
        assert mine.num_rows == theirs.num_rows
    assert v4.inspect.snapshots()["summary"].to_pylist() == \
        v3.inspect.snapshots()["summary"].to_pylist()


# --------------------------------------------------------------------------- stats, history


def _with_files(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["data_file_count"] or r["position_delete_file_count"]
            or r["equality_delete_file_count"] or r.get("dv_count")]


def test_partition_stats_equal_the_twins(twins: tuple[Table, Table]) -> None:
    """Rows of partitions with live files are the twin's. A partition whose files are all
    removed keeps a row of zeros only while some manifest still lists a DELETED entry of it,
    which is the layout's: v3's fast append keeps a manifest with DELETED D1 and its rewrite
    drops DELETED D3; v4's next root drops the root's DELETED D1, its leaf's manifest DV keeps
    D3 (docs/v4-layout.md#inspect)."""
    v4, v3 = twins
    for a, b in _pairs(twins):
        f4, f3 = v4.compute_partition_stats(a), v3.compute_partition_stats(b)
        mine = _canon(v4, _drop(v4.partition_stats(a), "last_updated_at"))
        theirs = _canon(v3, _drop(v3.partition_stats(b), "last_updated_at"))
        assert _with_files(mine) == _with_files(theirs)
        assert f4.snapshot_id == a and f3.snapshot_id == b
    last = _canon(v4, v4.partition_stats().to_pylist())
    assert {r["partition"]["p"]: (r["data_file_count"], r["dv_count"],
                                  r["last_updated_snapshot_id"]) for r in last} == {
        2: (1, 1, 3), 3: (0, 0, 2), 4: (0, 0, 4), 5: (1, 0, 4)}
    twin = _canon(v3, v3.partition_stats().to_pylist())
    assert {r["partition"]["p"] for r in twin} == {1, 2, 4, 5}


def test_diff_equals_the_twins(twins: tuple[Table, Table]) -> None:
    v4, v3 = twins
    pairs = _pairs(twins)
    steps = [*itertools.pairwise(pairs), (pairs[0], pairs[-1])]
    for (a4, a3), (b4, b3) in steps:
        d4, d3 = v4.diff(a4, b4), v3.diff(a3, b3)
        for part in ("data_added", "data_removed", "deletes_added", "deletes_removed"):
            s4, s3 = getattr(d4, part), getattr(d3, part)
            assert (s4.count, s4.records, s4.by_kind) == (s3.count, s3.records, s3.by_kind)
            assert sorted(_name(f.path) or "" for f in s4.head if f.content == 0) == sorted(
                _name(f.path) or "" for f in s3.head if f.content == 0)
        assert (d4.data_files_hit, d4.unchanged_data_files, d4.unchanged_delete_files) == (
            d3.data_files_hit, d3.unchanged_data_files, d3.unchanged_delete_files)
    d = v4.diff(pairs[2][0], pairs[3][0])
    assert d.deletes_added.count == 1 and d.data_files_hit == 1


def test_spec_and_schema_history_equal_the_twins(twins: tuple[Table, Table]) -> None:
    """Files and rows per spec are the twin's; manifest counts are the layout's (v4: live
    leaves only, root files are in none)."""
    v4, v3 = twins
    for a, b in _pairs(twins):
        (u4,), (u3,) = (v4.spec_history(a).specs[0].usage,), (v3.spec_history(b).specs[0].usage,)
        assert u4 is not None and u3 is not None
        assert (u4.data_files, u4.data_records, u4.delete_files, u4.delete_records) == (
            u3.data_files, u3.data_records, u3.delete_files, u3.delete_records)
    u = v4.spec_history().specs[0].usage
    assert u is not None and (u.data_manifests, u.delete_manifests) == (1, 0)
    assert (u.data_files, u.data_records, u.delete_files, u.delete_records) == (2, 4, 1, 1)
    assert str(v4.schema_history()) == str(v3.schema_history())


def test_snapshot_entries_reads_each_leaf_once(twins: tuple[Table, Table]) -> None:
    """The helper behind the tables: a warm cache opens only the root."""
    v4, _ = twins
    snap = v4.current_snapshot
    assert snap is not None
    cache = ManifestCache()
    cold = snapshot_entries(v4.io, v4.metadata, snap, cache=cache)
    v4.io.stats.reset()
    warm = snapshot_entries(v4.io, v4.metadata, snap, cache=cache)
    assert v4.io.stats.opened == 1  # the root
    assert warm.entries.equals(cold.entries)
    assert warm.removed == {warm.leaves[0].location: 2}


# --------------------------------------------------------------------------- reprs


def test_reprs_show_v4_and_do_no_io(twins: tuple[Table, Table]) -> None:
    """Table and snapshot cards count from the summary like the twin's, name the root
    manifest, and open no file."""
    v4, v3 = twins
    snap = v4.current_snapshot
    assert snap is not None
    v4.io.stats.reset()
    card, scard = render(v4), render(snap)
    assert v4.io.stats.as_dict() == {"opened": 0, "bytes_read": 0, "listed": 0, "created": 0,
                                     "deleted": 0}
    assert "format v4 (experimental)" in card.text
    twin = render(v3).text
    line4 = next(ln for ln in card.text.splitlines() if " row" in ln and "data file" in ln)
    line3 = next(ln for ln in twin.splitlines() if " row" in ln and "data file" in ln)
    assert line4 == line3
    assert snap.root_manifest is not None
    assert "root manifest" in scard.text and snap.root_manifest.rsplit("/", 1)[-1] in scard.html
    assert "manifest list" not in scard.text


def test_an_upgraded_table_reads_both_layouts(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Snapshots from before ``upgrade(4)`` are read through their manifest lists; after it, a
    v3 manifest listed by the root is a leaf like any other (manifest DV applied)."""
    wh = icenb.warehouse(tmp_path_factory.mktemp("up"))
    t = wh.create_table("db.t", "id long, p int", partition_by=["p"], format_version=3)
    t.append(_rows(1, 2))
    t.upgrade(4)
    t.append(_rows(3))
    t.delete("p = 1")
    s = t.metadata.snapshots
    assert s[0].manifest_list is not None and s[2].root_manifest is not None
    assert sorted(_name(r["file_path"]) for r in t.inspect.files().to_pylist()) == ["D2", "D3"]
    entries = {(_name(r["data_file"]["file_path"]), r["status"], r["manifest_path"])
               for r in t.inspect.entries().to_pylist()}
    (m,) = t.inspect.manifests(s[0].snapshot_id).to_pylist()
    assert entries == {("D1", DELETED, m["path"]), ("D2", ADDED, m["path"]),
                       ("D3", EXISTING, s[2].root_manifest)}
    (leaf,) = t.inspect.manifests().to_pylist()
    assert leaf["path"] == m["path"] and leaf["manifest_dv_removed_count"] == 1
    assert m["manifest_dv_removed_count"] == 0
    assert t.inspect.all_manifests().column("reference_snapshot_id").to_pylist() == [
        x.snapshot_id for x in s]
    d = t.diff(s[0].snapshot_id, s[2].snapshot_id)
    assert (d.data_added.count, d.data_removed.count, d.unchanged_data_files) == (1, 1, 1)
    u = t.spec_history().specs[0].usage
    assert u is not None and (u.data_files, u.data_records) == (2, 4)
