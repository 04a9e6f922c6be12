"""Refs and history: branches, tags, retention, fast-forward, rollback, set current snapshot,
cherry-pick, batched ref changes; their errors, and commits under concurrency.

Tables written here in v1, v2 and v3 are read by Iceberg Java 1.10 (every branch, tag and
snapshot, and its ``refs``, ``snapshots`` and ``history`` metadata tables against icenb's inspect
tables, all in one JVM) and by PyIceberg 0.12 (refs with their retention settings).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import CommitConflict, NoSuchSnapshot, ValidationError
from icenb.spec.snapshot import SnapshotRef, SnapshotRefType
from icenb.table import Table
from icenb.table.commit.overwrite import ReplacePartitions
from icenb.table.warehouse import Warehouse
from tests.reference_fixtures import run_reference_batch
from tests.table.explore.test_inspect import compare

UTC = dt.timezone.utc


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


def ids(t: Table, when: int | str) -> list[int]:
    return sorted(t.at(when).to_arrow().column("id").to_pylist())


def new_table(tmp_path: Path, version: int = 2) -> tuple[Warehouse, Table]:
    wh = icenb.warehouse(tmp_path)
    return wh, wh.create_table("db.t", "id long, p string", partition_by=["p"],
                               format_version=version)


def overwrite_partitions(t: Table, rows: list[dict[str, Any]], branch: str,
                         properties: dict[str, str] | None = None) -> int:
    """A dynamic partition overwrite of ``branch`` (Java's ReplacePartitions); its id."""
    catalog, identifier = t._writable()
    producer = ReplacePartitions(catalog, identifier, t.io, branch=branch,
                                 snapshot_properties=properties)
    producer.write_data(rows, t.metadata)
    t._committed(producer.commit(t._loaded()))
    head = t.metadata.snapshot_for_ref(branch)
    assert head is not None
    return head.snapshot_id


# --------------------------------------------------------------------------- branches, tags


def test_branches_and_tags_keep_retention_as_they_move(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    s1 = t.append([{"id": 1, "p": "a"}]).snapshot_id
    s2 = t.append([{"id": 2, "p": "b"}]).snapshot_id
    dev = t.create_branch("dev", s1, min_snapshots_to_keep=2, max_snapshot_age_ms=3_600_000,
                          max_ref_age_ms=86_400_000)
    assert dev == SnapshotRef(s1, SnapshotRefType.BRANCH, 2, 3_600_000, 86_400_000)
    assert t.create_tag("v1", max_ref_age_ms=1000) == SnapshotRef.tag(s2, max_ref_age_ms=1000)
    assert t.replace_branch("dev", "v1").snapshot_id == s2  # from a ref
    assert t.replace_branch("dev", s1) == dev  # retention kept
    assert t.replace_tag("v1", s1) == SnapshotRef.tag(s1, max_ref_age_ms=1000)
    assert t.rename_branch("dev", "feature") == dev
    assert t.set_branch_retention("feature", min_snapshots_to_keep=5, max_ref_age_ms=None) == \
        SnapshotRef(s1, SnapshotRefType.BRANCH, 5, 3_600_000, None)
    assert t.set_ref_retention("v1", max_ref_age_ms=7) == SnapshotRef.tag(s1, max_ref_age_ms=7)
    assert t.fast_forward("feature", "main").snapshot_id == s2
    t.remove_tag("v1")
    t.remove_branch("feature")
    assert set(t.refs) == {"main"}
    again = icenb.warehouse(tmp_path).table("db.t")  # what the catalog holds
    assert again.refs == t.refs and again.history == t.history
    assert len(t.snapshots) == 2  # ref changes add no snapshot


def test_a_branch_on_a_table_without_snapshots_gets_an_empty_snapshot(tmp_path: Path) -> None:
    _, t = new_table(tmp_path, 3)
    ref = t.create_branch("audit", max_ref_age_ms=5000)
    assert t.current_snapshot is None and set(t.refs) == {"audit"}
    snap = t.snapshot(ref.snapshot_id)
    assert ref.max_ref_age_ms == 5000
    assert snap.summary is not None and snap.summary.operation == "append"
    assert snap.summary["total-records"] == "0" and snap.added_rows == 0
    assert ids(t, "audit") == []
    t.append([{"id": 1, "p": "a"}], branch="audit")
    assert ids(t, "audit") == [1]
    with pytest.raises(ValidationError, match="no current snapshot"):
        t.create_tag("nothing")


def test_main_branch_append_to_a_branch_and_reads_by_ref(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    t.append([{"id": 1, "p": "a"}])
    t.create_branch("dev")
    t.append([{"id": 2, "p": "a"}], branch="dev")
    t.create_tag("dev-1", t.refs["dev"].snapshot_id)
    assert ids(t, "dev") == [1, 2] and ids(t, "main") == [1] and ids(t, "dev-1") == [1, 2]
    assert sorted(t.scan(ref="dev").to_arrow().column("id").to_pylist()) == [1, 2]


# --------------------------------------------------------------------------- history


def test_rollback_by_id_ref_and_time_and_set_current_snapshot(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    snaps = [t.append([{"id": i, "p": "a"}]) for i in range(4)]
    _, s1, s2, s3 = (s.snapshot_id for s in snaps)
    t.create_tag("one", s1)
    assert t.rollback_to(s2).snapshot_id == s2
    log = t.history
    assert log[-1].snapshot_id == s2 and log[-1].timestamp_ms >= snaps[-1].timestamp_ms
    assert t.metadata.last_updated_ms == log[-1].timestamp_ms  # as Java logs a move of main
    assert t.rollback_to("one").snapshot_id == s1
    with pytest.raises(ValidationError, match="not an ancestor"):
        t.rollback_to(s3)  # a descendant now: roll back only goes back
    assert t.set_current_snapshot(s3).snapshot_id == s3  # any snapshot
    assert ids(t, s3) == [0, 1, 2, 3] and t.current_snapshot == snaps[3]
    # to a time: the newest ancestor committed strictly before it (Java's rollbackToTime)
    at = snaps[2].timestamp_ms
    expected = max((s for s in snaps if s.timestamp_ms < at), key=lambda s: s.timestamp_ms)
    assert t.rollback_to(timestamp_ms=at) == expected
    t.set_current_snapshot(s3)
    when = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=at)
    assert t.rollback_to(when) == expected
    t.set_current_snapshot(s3)
    assert t.rollback_to(when.isoformat()) == expected
    with pytest.raises(ValidationError) as e:
        t.rollback_to(timestamp_ms=snaps[0].timestamp_ms)
    assert e.value.field == "timestamp_ms"
    assert [e.snapshot_id for e in t.history][-6:] == [s3] + [expected.snapshot_id, s3] * 2 + [
        expected.snapshot_id]


def test_rollback_of_a_branch_leaves_main_alone(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    s0 = t.append([{"id": 0, "p": "a"}]).snapshot_id
    t.create_branch("dev", min_snapshots_to_keep=3)
    t.append([{"id": 1, "p": "a"}], branch="dev")
    log = t.history
    assert t.rollback_to(s0, branch="dev").snapshot_id == s0
    assert t.refs["dev"] == SnapshotRef.branch(s0, min_snapshots_to_keep=3)
    assert t.history == log  # only moves of main are logged


# --------------------------------------------------------------------------- cherry-pick


def test_cherry_pick_fast_forwards_when_the_parent_is_the_head(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    t.append([{"id": 1, "p": "a"}])
    t.create_branch("staged")
    picked = t.append([{"id": 2, "p": "b"}], branch="staged")
    assert t.cherry_pick(picked.snapshot_id) == picked
    assert t.current_snapshot == picked and len(t.snapshots) == 2


@pytest.mark.parametrize("version", [1, 2, 3])
def test_cherry_pick_of_an_append_adds_its_files_again(tmp_path: Path, version: int) -> None:
    _, t = new_table(tmp_path, version)
    t.append([{"id": 1, "p": "a"}])
    t.create_branch("staged")
    t.append([{"id": 2, "p": "b"}, {"id": 3, "p": "c"}], branch="staged",
             snapshot_properties={"wap.id": "w1"})
    picked = t.refs["staged"].snapshot_id
    t.append([{"id": 4, "p": "a"}])
    next_row_id = t.metadata.next_row_id
    new = t.cherry_pick(picked)
    assert new.parent_snapshot_id != picked and new.snapshot_id != picked
    assert new.summary is not None and new.summary.operation == "append"
    assert new.summary["source-snapshot-id"] == str(picked)
    assert new.summary["published-wap-id"] == "w1"
    assert new.summary["added-data-files"] == "2" and new.summary["total-records"] == "4"
    assert ids(t, "main") == [1, 2, 3, 4]
    picked_files = set(t.inspect.files(picked).column("file_path").to_pylist())
    assert picked_files <= set(t.inspect.files().column("file_path").to_pylist())
    if version == 3:  # the re-added rows get fresh row ids
        assert next_row_id is not None
        assert (new.first_row_id, new.added_rows) == (next_row_id, 2)
        assert t.metadata.next_row_id == next_row_id + 2
    before = t.metadata_location
    with pytest.raises(ValidationError, match="already picked"):
        t.cherry_pick(picked)
    with pytest.raises(ValidationError, match="already an ancestor"):
        t.cherry_pick(new.snapshot_id)
    assert t.metadata_location == before


@pytest.mark.parametrize("merge", ["true", "false"])
def test_cherry_pick_writes_manifests_as_an_append_would(tmp_path: Path, merge: str) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", properties={
        "commit.manifest-merge.enabled": merge, "commit.manifest.min-count-to-merge": "2"})
    t.append([{"id": 1}])
    t.create_branch("staged")
    picked = t.append([{"id": 2}], branch="staged").snapshot_id
    t.append([{"id": 3}])
    new = t.cherry_pick(picked)
    manifests = t.inspect.manifests(new.snapshot_id)
    # merged: the new manifest and the parent's two in one; fast: one new + the parent's two
    assert manifests.num_rows == (1 if merge == "true" else 3)
    assert ids(t, "main") == [1, 2, 3]


def test_cherry_pick_refuses_a_published_wap_id(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    t.append([{"id": 1, "p": "a"}])
    t.create_branch("a")
    t.create_branch("b")
    one = t.append([{"id": 2, "p": "b"}], branch="a", snapshot_properties={"wap.id": "w"})
    two = t.append([{"id": 3, "p": "b"}], branch="b", snapshot_properties={"wap.id": "w"})
    t.append([{"id": 4, "p": "c"}])
    t.cherry_pick(one.snapshot_id)
    with pytest.raises(ValidationError, match=r"wap\.id") as e:
        t.cherry_pick(two.snapshot_id)
    assert e.value.field == "wap.id" and e.value.value == "w"


def test_cherry_pick_of_a_dynamic_overwrite_and_of_other_operations(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    t.append([{"id": 1, "p": "a"}, {"id": 2, "p": "b"}])
    t.create_branch("staged")
    ow = overwrite_partitions(t, [{"id": 10, "p": "a"}], "staged")
    t.append([{"id": 3, "p": "c"}])  # another partition: the overwrite still applies
    new = t.cherry_pick(ow)
    assert new.summary is not None and new.summary.operation == "overwrite"
    assert new.summary["source-snapshot-id"] == str(ow)
    assert ids(t, "main") == [2, 3, 10]
    # an overwrite whose partition changed since its parent cannot be picked
    t.create_branch("staged2")
    ow2 = overwrite_partitions(t, [{"id": 20, "p": "b"}], "staged2")
    t.append([{"id": 5, "p": "b"}])
    before, files = t.metadata_location, _files(tmp_path)
    with pytest.raises(CommitConflict):
        t.cherry_pick(ow2)
    assert t.metadata_location == before and _files(tmp_path) == files


# --------------------------------------------------------------------------- batches


def test_manage_snapshots_commits_several_changes_at_once(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    s0 = t.append([{"id": 0, "p": "a"}]).snapshot_id
    s1 = t.append([{"id": 1, "p": "a"}]).snapshot_id
    before, log = t.metadata_location, len(t.metadata.metadata_log)
    with t.manage_snapshots() as m:
        m.create_tag("old", s0)
        m.create_branch("dev", s0)
        m.rename_branch("dev", "work")
        m.fast_forward("work", "main")
        m.rollback_to(s0)
        m.set_branch_retention("work", max_snapshot_age_ms=10)
    assert t.metadata_location != before
    assert len(t.metadata.metadata_log) == log + 1  # one commit for the whole block
    assert t.refs["work"] == SnapshotRef.branch(s1, max_snapshot_age_ms=10)
    assert t.refs["old"] == SnapshotRef.tag(s0) and t.refs["main"].snapshot_id == s0
    before = t.metadata_location
    with pytest.raises(RuntimeError), t.manage_snapshots() as m:
        m.remove_tag("old")
        raise RuntimeError("the block failed")
    assert t.metadata_location == before and "old" in t.refs


# --------------------------------------------------------------------------- errors


def _scenario(tmp_path: Path) -> tuple[Table, int, int]:
    _, t = new_table(tmp_path)
    s0 = t.append([{"id": 0, "p": "a"}]).snapshot_id
    s1 = t.append([{"id": 1, "p": "b"}]).snapshot_id
    t.create_branch("dev", s0)
    t.create_tag("v0", s0)
    return t, s0, s1


BAD: list[tuple[str, Callable[[Table, int, int], Any], type[Exception], str | None]] = [
    ("existing branch", lambda t, a, b: t.create_branch("dev"), ValidationError, "branch"),
    ("existing tag name", lambda t, a, b: t.create_tag("dev"), ValidationError, "tag"),
    ("unknown snapshot", lambda t, a, b: t.create_branch("x", 42), NoSuchSnapshot,
     "snapshot_id"),
    ("unknown snapshot tag", lambda t, a, b: t.create_tag("x", 42), NoSuchSnapshot,
     "snapshot_id"),
    ("replace a tag as branch", lambda t, a, b: t.replace_branch("v0", b), ValidationError,
     "branch"),
    ("replace a branch as tag", lambda t, a, b: t.replace_tag("dev", b), ValidationError,
     "tag"),
    ("remove a tag as branch", lambda t, a, b: t.remove_branch("v0"), ValidationError,
     "branch"),
    ("remove a branch as tag", lambda t, a, b: t.remove_tag("dev"), ValidationError, "tag"),
    ("remove main", lambda t, a, b: t.remove_branch("main"), ValidationError, "branch"),
    ("rename main", lambda t, a, b: t.rename_branch("main", "x"), ValidationError, "branch"),
    ("rename onto a ref", lambda t, a, b: t.rename_branch("dev", "v0"), ValidationError,
     "new_name"),
    ("missing branch", lambda t, a, b: t.remove_branch("nope"), NoSuchSnapshot, "refs"),
    ("missing source ref", lambda t, a, b: t.replace_branch("dev", "nope"), NoSuchSnapshot,
     "refs"),
    ("zero min snapshots", lambda t, a, b: t.create_branch("x", min_snapshots_to_keep=0),
     ValidationError, "min-snapshots-to-keep"),
    ("negative snapshot age", lambda t, a, b: t.set_branch_retention(
        "dev", max_snapshot_age_ms=-1), ValidationError, "max-snapshot-age-ms"),
    ("zero ref age", lambda t, a, b: t.create_tag("x", max_ref_age_ms=0), ValidationError,
     "max-ref-age-ms"),
    ("tag retention on a tag", lambda t, a, b: t.set_branch_retention(
        "v0", min_snapshots_to_keep=1), ValidationError, "branch"),
    ("fast-forward backwards", lambda t, a, b: t.fast_forward("main", "dev"),
     ValidationError, "to"),
    ("roll back to a tag's non-ancestor", lambda t, a, b: t.rollback_to(b, branch="dev"),
     ValidationError, "snapshot_id"),
    ("roll back a tag", lambda t, a, b: t.rollback_to(a, branch="v0"), ValidationError,
     "branch"),
    ("set an unknown current snapshot", lambda t, a, b: t.set_current_snapshot(42),
     NoSuchSnapshot, "snapshot_id"),
    ("rollback to nothing", lambda t, a, b: t.rollback_to(), ValidationError, "rollback_to"),
    ("rollback to a bad string", lambda t, a, b: t.rollback_to("yesterday"), NoSuchSnapshot,
     "refs"),
    ("cherry-pick an ancestor", lambda t, a, b: t.cherry_pick(a), ValidationError,
     "snapshot_id"),
    ("cherry-pick unknown", lambda t, a, b: t.cherry_pick(42), NoSuchSnapshot, "snapshot_id"),
    ("cherry-pick onto a tag", lambda t, a, b: t.cherry_pick(b, branch="v0"),
     ValidationError, "branch"),
    ("a snapshot id that is not an int", lambda t, a, b: t.create_tag("x", "1"),  # type: ignore[arg-type]
     ValidationError, "snapshot_id"),
]


@pytest.mark.parametrize(("name", "call", "error", "field_name"), BAD,
                         ids=[b[0] for b in BAD])
def test_bad_requests_change_nothing(tmp_path: Path, name: str,
                                     call: Callable[[Table, int, int], Any],
                                     error: type[Exception], field_name: str | None) -> None:
    t, s0, s1 = _scenario(tmp_path)
    before, metadata, files = t.metadata_location, t.metadata, _files(tmp_path)
    with pytest.raises(error) as e:
        call(t, s0, s1)
    assert getattr(e.value, "field", None) == field_name
    assert t.metadata_location == before and t.metadata == metadata
    assert _files(tmp_path) == files
    assert icenb.warehouse(tmp_path).table("db.t").metadata_location == before


def test_cherry_pick_refuses_operations_java_refuses(tmp_path: Path) -> None:
    _, t = new_table(tmp_path)
    t.append([{"id": 1, "p": "a"}, {"id": 2, "p": "b"}])
    t.create_branch("dev")
    t.append([{"id": 3, "p": "c"}])
    catalog, identifier = t._writable()
    from icenb.table.commit.overwrite import DeleteFiles

    producer = DeleteFiles(catalog, identifier, t.io, branch="dev")
    producer.delete_from_row_filter("p = 'a'")
    t._committed(producer.commit(t._loaded()))
    deleted = t.refs["dev"].snapshot_id
    before = t.metadata_location
    with pytest.raises(ValidationError) as e:
        t.cherry_pick(deleted)
    assert e.value.field == "operation" and e.value.value == "delete"
    assert t.metadata_location == before


# --------------------------------------------------------------------------- concurrency


def test_a_concurrent_change_of_the_same_ref_conflicts(tmp_path: Path) -> None:
    wh, a = new_table(tmp_path)
    s0 = a.append([{"id": 0, "p": "a"}]).snapshot_id
    a.append([{"id": 1, "p": "a"}])
    b = wh.table("db.t")
    a.append([{"id": 2, "p": "a"}])  # main moves under b
    files = _files(tmp_path)
    with pytest.raises(CommitConflict) as e:
        b.rollback_to(s0)  # would discard a's append
    assert e.value.field == "assert-ref-snapshot-id"
    assert _files(tmp_path) == files and b.metadata_location == a.metadata_location
    # a change of another ref is re-applied on the new state
    c = wh.table("db.t")
    a.create_branch("dev", s0)
    c.create_tag("v0", s0)
    assert set(wh.table("db.t").refs) == {"main", "dev", "v0"}
    d = wh.table("db.t")
    a.create_tag("v1", s0)
    with pytest.raises(CommitConflict):
        d.create_tag("v1", s0)  # created concurrently


# --------------------------------------------------------------------------- peers


@dataclass
class Written:
    root: Path
    warehouse: Warehouse
    names: list[str] = field(default_factory=list)


def _write_history(wh: Warehouse, name: str, version: int) -> None:
    """Every ref operation on one table (branches, tags, retention, rollback, cherry-picks)."""
    t = wh.create_table(name, "id long, p string", partition_by=["p"], format_version=version)
    t.create_branch("audit", max_ref_age_ms=604_800_000)  # an empty snapshot, as Java
    s1 = t.append([{"id": 1, "p": "a"}, {"id": 2, "p": "b"}]).snapshot_id
    s2 = t.append([{"id": 3, "p": "c"}]).snapshot_id
    t.create_tag("first", s1, max_ref_age_ms=86_400_000)
    t.create_branch("dev", min_snapshots_to_keep=2, max_snapshot_age_ms=3_600_000,
                    max_ref_age_ms=86_400_000)
    t.append([{"id": 4, "p": "a"}], branch="dev")
    s4 = t.append([{"id": 5, "p": "d"}], branch="dev").snapshot_id
    t.cherry_pick(s4)  # a new snapshot on main with source-snapshot-id
    t.create_branch("staging")
    ow = overwrite_partitions(t, [{"id": 6, "p": "b"}], "staging")
    t.append([{"id": 7, "p": "e"}])
    t.cherry_pick(ow)
    head = t.current_snapshot
    assert head is not None
    t.rollback_to(s2)
    t.set_current_snapshot(head.snapshot_id)
    t.create_branch("ff", s1)
    t.fast_forward("ff", "main")
    t.rename_branch("dev", "feature")
    t.create_tag("gone", s2)
    t.remove_tag("gone")
    t.set_branch_retention("main", min_snapshots_to_keep=5)
    t.create_branch("old", s2)
    t.rollback_to(s1, branch="old")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    root = tmp_path_factory.mktemp("refs")
    wh = icenb.warehouse(root)
    out = Written(root, wh)
    for version in (1, 2, 3):
        name = f"db.refs_v{version}"
        _write_history(wh, name, version)
        out.names.append(name)
    return out


def test_written_history_reads_as_expected(written: Written) -> None:
    for name in written.names:
        t = written.warehouse.table(name)
        assert set(t.refs) == {"main", "audit", "first", "feature", "staging", "ff", "old"}
        assert ids(t, "main") == [1, 3, 5, 6, 7] and ids(t, "staging") == [1, 3, 5, 6]
        assert ids(t, "first") == [1, 2] and ids(t, "old") == [1, 2]
        assert ids(t, "feature") == [1, 2, 3, 4, 5] and ids(t, "audit") == []
        assert ids(t, "ff") == ids(t, "main")


@pytest.fixture(scope="module")
def java(written: Written) -> dict[tuple[str, str, Any], dict[str, Any]]:
    """Java's rows of every ref and snapshot and its refs/snapshots/history tables."""
    keys: list[tuple[str, str, Any]] = []
    requests: list[dict[str, Any]] = []
    for name in written.names:
        t = written.warehouse.table(name)
        location = t.metadata_location
        for ref_name, ref in sorted(t.refs.items()):
            keys.append((name, "ref", ref_name))
            requests.append({"metadata_file": location,
                             ("branch" if ref.is_branch else "tag"): ref_name})
        for snap in t.snapshots:
            keys.append((name, "snapshot", snap.snapshot_id))
            requests.append({"metadata_file": location, "snapshot_id": snap.snapshot_id})
        for kind in ("refs", "snapshots", "history"):
            keys.append((name, kind, None))
            requests.append({"location": location, "table": kind})
    results = run_reference_batch("java_read_written.py", requests)
    return dict(zip(keys, results, strict=True))


def test_java_reads_every_ref_and_snapshot_as_icenb(
        written: Written, java: dict[tuple[str, str, Any], dict[str, Any]]) -> None:
    for name in written.names:
        t = written.warehouse.table(name)
        for ref_name in t.refs:
            theirs = java[(name, "ref", ref_name)]
            assert theirs["ok"], (name, ref_name, theirs)
            assert sorted(r[0] for r in theirs["rows"]) == ids(t, ref_name), (name, ref_name)
        for snap in t.snapshots:
            theirs = java[(name, "snapshot", snap.snapshot_id)]
            assert theirs["ok"], theirs
            assert sorted(r[0] for r in theirs["rows"]) == ids(t, snap.snapshot_id)


def test_java_metadata_tables_agree(written: Written,
                                    java: dict[tuple[str, str, Any], dict[str, Any]]) -> None:
    for name in written.names:
        t = written.warehouse.table(name)
        assert compare(t.inspect.refs(), java[(name, "refs", None)]) == [], name
        assert compare(t.inspect.snapshots(), java[(name, "snapshots", None)]) == [], name
        assert compare(t.inspect.history(), java[(name, "history", None)]) == [], name
        refs = {r["name"]: r for r in java[(name, "refs", None)]["rows"]}
        assert refs["feature"]["min_snapshots_to_keep"] == 2
        assert refs["feature"]["max_snapshot_age_in_ms"] == 3_600_000
        assert refs["first"]["max_reference_age_in_ms"] == 86_400_000


def test_pyiceberg_sees_the_refs(written: Written) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    catalog = PyIcebergSqlCatalog("default", uri=f"sqlite:///{written.root}/catalog.db",
                                  warehouse=written.root.as_uri())
    for name in written.names:
        ours = written.warehouse.table(name)
        theirs = catalog.load_table(name)
        refs = theirs.metadata.refs
        assert set(refs) == set(ours.refs)
        for ref_name, ref in ours.refs.items():
            r = refs[ref_name]
            assert (r.snapshot_id, r.snapshot_ref_type.value, r.min_snapshots_to_keep,
                    r.max_snapshot_age_ms, r.max_ref_age_ms) == (
                ref.snapshot_id, ref.ref_type.value, ref.min_snapshots_to_keep,
                ref.max_snapshot_age_ms, ref.max_ref_age_ms)
        for ref_name in ours.refs:
            got = theirs.scan(snapshot_id=refs[ref_name].snapshot_id).to_arrow()
            assert sorted(got.column("id").to_pylist()) == ids(ours, ref_name)
