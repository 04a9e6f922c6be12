"""Expiring snapshots (spec: Snapshot Retention Policy) against Iceberg Java 1.10's ExpireSnapshots.

Java writes the scenario tables with Spark SQL (merge-on-read position deletes, v3 deletion
vectors, copy-on-write deletes, overwrites, branches and tags with their own retention) into a
Hadoop warehouse, and runs ``ExpireSnapshots`` on a copy of each table's metadata (its deletes
recorded, not done). icenb then expires the tables themselves with the same parameters: the same
snapshots and refs must go and the same files be deleted. A second JVM reads every remaining
snapshot of icenb's result: its rows must equal icenb's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.catalog import FilesystemCatalog
from icenb.errors import CommitConflict, NoSuchSnapshot, UnsupportedFeature, ValidationError
from icenb.spec.snapshot import SnapshotRefType
from icenb.spec.table_updates import SetSnapshotRef
from icenb.table import Table
from icenb.table.commit.expire_snapshots import FILE_KINDS, ExpireSnapshotsResult
from icenb.table.commit.metadata_change import MetadataChange, commit_change
from tests.reference_fixtures import run_reference_batch
from tests.table._helpers import written_by_another_engine
from tests.table.commit.test_append import normalized


def run_java(warehouse: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """java_expire.py on a batch of requests, in one JVM; one result each."""
    return run_reference_batch("java_expire.py", requests, args=["--warehouse", str(warehouse)])


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    name: str
    statements: tuple[str, ...]
    expire: dict[str, Any]
    refs: tuple[dict[str, Any], ...] = ()


def _create(name: str, version: int, props: str = "", part: str = "") -> str:
    extra = f", {props}" if props else ""
    return (f"CREATE TABLE ref.db.{name} (id bigint, s string) USING iceberg {part} "
            f"TBLPROPERTIES ('format-version'='{version}'{extra})")


def _ins(name: str, *ids: int) -> str:
    return f"INSERT INTO ref.db.{name} VALUES " + ", ".join(f"({i}, 's{i}')" for i in ids)


MOR = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'"
SCENARIOS = [
    # Position deletes and an overwrite; the three oldest snapshots expire.
    Scenario("mor_v2", (
        _create("mor_v2", 2, MOR, "PARTITIONED BY (bucket(2, id))"),
        _ins("mor_v2", 1, 2, 3), _ins("mor_v2", 4, 5), "DELETE FROM ref.db.mor_v2 WHERE id = 2",
        "INSERT OVERWRITE ref.db.mor_v2 SELECT * FROM ref.db.mor_v2 WHERE id > 3",
        _ins("mor_v2", 6)), {"older_than_index": 3}),
    # Deletion vectors: a later delete replaces a DV; Puffin files still named stay.
    Scenario("dv_v3", (
        _create("dv_v3", 3, MOR), _ins("dv_v3", 1, 2, 3, 4), _ins("dv_v3", 5, 6, 7),
        "DELETE FROM ref.db.dv_v3 WHERE id = 1", "DELETE FROM ref.db.dv_v3 WHERE id = 5",
        "DELETE FROM ref.db.dv_v3 WHERE id = 2", _ins("dv_v3", 8)), {"older_than_index": 4}),
    # Copy-on-write, refs with their own retention: an old tag expires by max-ref-age, a kept
    # tag keeps its snapshot, a branch keeps only its head (max-snapshot-age 1 ms).
    Scenario("refs_v2", (
        _create("refs_v2", 2), _ins("refs_v2", 1, 2), _ins("refs_v2", 3), _ins("refs_v2", 4),
        "ALTER TABLE ref.db.refs_v2 CREATE BRANCH b", _ins("refs_v2.branch_b", 10),
        _ins("refs_v2.branch_b", 11), "DELETE FROM ref.db.refs_v2 WHERE id = 3",
        _ins("refs_v2", 5)),
        {"older_than_index": -1, "retain_last": 1},
        refs=({"name": "old_tag", "type": "tag", "snapshot_index": 0, "max_ref_age_ms": 1},
              {"name": "keep_tag", "type": "tag", "snapshot_index": 1,
               "max_ref_age_ms": 86_400_000},
              {"name": "b", "type": "branch", "snapshot_index": 4,
               "min_snapshots_to_keep": 1, "max_snapshot_age_ms": 1})),
    # An explicit snapshot in the middle of main (its files live on in later snapshots).
    Scenario("explicit_v2", (
        _create("explicit_v2", 2), _ins("explicit_v2", 1), _ins("explicit_v2", 2),
        "DELETE FROM ref.db.explicit_v2 WHERE id = 1", _ins("explicit_v2", 3)),
        {"expire_indexes": [1]}),
    # v1, retain_last with an age that would expire all but the head.
    Scenario("retain_v1", (
        _create("retain_v1", 1, "", "PARTITIONED BY (id)"), _ins("retain_v1", 1),
        _ins("retain_v1", 2), "INSERT OVERWRITE ref.db.retain_v1 SELECT * FROM "
        "ref.db.retain_v1 WHERE id = 2", _ins("retain_v1", 3), _ins("retain_v1", 4)),
        {"older_than_index": -1, "retain_last": 3}),
]


@dataclass
class Expired:
    root: Path
    java: dict[str, dict[str, Any]]
    before: dict[str, list[int]]
    files_before: dict[str, set[str]]
    ours: dict[str, ExpireSnapshotsResult]
    dry: dict[str, ExpireSnapshotsResult]
    catalog: FilesystemCatalog


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_file() and not p.name.endswith(".crc")}


@pytest.fixture(scope="module")
def expired(tmp_path_factory: pytest.TempPathFactory) -> Expired:
    root = tmp_path_factory.mktemp("expire")
    wh = root / "wh"
    requests: list[dict[str, Any]] = []
    for sc in SCENARIOS:
        location = str(wh / "db" / sc.name)
        requests.append({"op": "sql", "statements": list(sc.statements)})
        requests += [{"op": "set_ref", "location": location, **ref} for ref in sc.refs]
        requests.append({"op": "expire", "location": location, "sidecar": str(root / sc.name),
                         **sc.expire})
    results = run_java(wh, requests)
    for r in results:
        assert r["ok"], r
    java = {sc.name: r for sc, r in zip(SCENARIOS, [r for r in results if "expired" in r],
                                         strict=True)}
    catalog = FilesystemCatalog(wh)
    before, files_before, ours, dry = {}, {}, {}, {}
    for sc in SCENARIOS:
        t = icenb.load_table(catalog, f"db.{sc.name}")
        before[sc.name] = [s.snapshot_id for s in t.snapshots]
        files_before[sc.name] = _files(wh / "db" / sc.name)
        kwargs = {"older_than": java[sc.name]["older_than_ms"],
                  "retain_last": sc.expire.get("retain_last"),
                  "snapshot_ids": java[sc.name]["snapshot_ids"] or None}
        dry[sc.name] = t.expire_snapshots(dry_run=True, **kwargs)
        assert _files(wh / "db" / sc.name) == files_before[sc.name]  # a dry run deletes nothing
        ours[sc.name] = t.expire_snapshots(**kwargs)
    return Expired(root, java, before, files_before, ours, dry, catalog)


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_same_snapshots_refs_and_files_as_java(expired: Expired, sc: Scenario) -> None:
    java, ours = expired.java[sc.name], expired.ours[sc.name]
    assert ours.committed
    assert sorted(ours.expired_snapshot_ids) == sorted(java["expired"])
    assert ours.expired_snapshot_ids, "every scenario expires something"
    t = icenb.load_table(expired.catalog, f"db.{sc.name}")
    assert {n: r.snapshot_id for n, r in t.refs.items()} == java["refs"]
    java_after = icenb.open(java["metadata_file"]).metadata
    assert [s.snapshot_id for s in t.snapshots] == [s.snapshot_id for s in java_after.snapshots]
    assert t.history == java_after.snapshot_log
    assert sorted(ours.deleted_paths) == java["deleted"]
    assert not ours.failed_deletes
    # the dry run said exactly this
    assert expired.dry[sc.name].expired_snapshot_ids == ours.expired_snapshot_ids
    assert expired.dry[sc.name].deleted_files == ours.deleted_files
    # deleted means gone; everything else is still there
    now = _files(expired.root / "wh" / "db" / sc.name)
    assert not (ours.deleted_paths & now)
    assert expired.files_before[sc.name] - now == set(ours.deleted_paths)


def test_the_scenarios_cover_every_kind_of_file(expired: Expired) -> None:
    mor, dv, refs = (expired.ours[n] for n in ("mor_v2", "dv_v3", "refs_v2"))
    assert mor.count("position_delete_files") == 1 and mor.count("data_files") >= 2
    assert dv.count("position_delete_files") == 1  # the replaced deletion vector's Puffin
    assert all(p.endswith(".puffin") for p in dv.deleted_files["position_delete_files"])
    assert refs.removed_refs == ("old_tag",)
    assert expired.ours["explicit_v2"].count("data_files") == 0  # still live later
    assert set(FILE_KINDS) == set(mor.deleted_files)
    assert "ExpireSnapshotsResult(expired 3 snapshot(s)" in repr(mor)
    assert "position_delete_files=1" in repr(mor)


def test_puffin_files_still_named_are_kept(expired: Expired) -> None:
    t = icenb.load_table(expired.catalog, "db.dv_v3")
    live = set()
    for snap in t.snapshots:
        files = t.inspect.files(snap.snapshot_id)
        live |= set(files.column("file_path").to_pylist())
    assert live and not (live & expired.ours["dv_v3"].deleted_paths)
    for path in live:
        assert Path(path.removeprefix("file:")).exists()


@pytest.fixture(scope="module")
def java_reads(expired: Expired) -> dict[tuple[str, int], dict[str, Any]]:
    keys, requests = [], []
    for sc in SCENARIOS:
        t = icenb.load_table(expired.catalog, f"db.{sc.name}")
        for snap in t.snapshots:
            keys.append((sc.name, snap.snapshot_id))
            requests.append({"metadata_file": t.metadata_location,
                             "snapshot_id": snap.snapshot_id})
    return dict(zip(keys, run_java(expired.root / "wh", requests), strict=True))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_remaining_snapshot_reads_alike_in_java(
        expired: Expired, java_reads: dict[tuple[str, int], dict[str, Any]],
        sc: Scenario) -> None:
    t = icenb.load_table(expired.catalog, f"db.{sc.name}")
    assert t.snapshots
    for snap in t.snapshots:
        theirs = java_reads[(sc.name, snap.snapshot_id)]
        assert theirs["ok"], theirs
        ours = t.at(snap.snapshot_id).to_arrow()
        assert sorted(theirs["rows"], key=lambda r: r[0]) == normalized(ours)


# --------------------------------------------------------------------------- icenb only


def _table(tmp_path: Path, n: int = 4, **props: str) -> Table:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", format_version=2, properties=props or None)
    for i in range(n):
        t.append([{"id": i}])
    return t


def _set_ref(t: Table, name: str, sid: int, kind: SnapshotRefType, **retention: int) -> None:
    def build(_: Any) -> MetadataChange:
        return MetadataChange([SetSnapshotRef(name, sid, kind, **retention)])
    commit_change(t, build)


def test_defaults_keep_young_snapshots_and_retain_last_counts(tmp_path: Path) -> None:
    t = _table(tmp_path)
    assert t.expire_snapshots().expired_snapshot_ids == ()  # 5 days by default
    ids = [s.snapshot_id for s in t.snapshots]
    now = int(time.time() * 1000) + 1
    result = t.expire_snapshots(now, retain_last=2)
    assert result.expired_snapshot_ids == tuple(ids[:2])
    assert [s.snapshot_id for s in t.snapshots] == ids[2:]
    assert result.count("manifest_lists") == 2 and result.count("manifests") == 0
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
    assert t.snapshot(ids[2]).parent_snapshot_id == ids[1]  # parents are left as they were
    with pytest.raises(NoSuchSnapshot):
        t.at(ids[0])


def test_table_properties_set_the_defaults(tmp_path: Path) -> None:
    t = _table(tmp_path, **{"history.expire.max-snapshot-age-ms": "1",
                            "history.expire.min-snapshots-to-keep": "3"})
    time.sleep(0.01)
    result = t.expire_snapshots()
    assert len(result.expired_snapshot_ids) == 1 and len(t.snapshots) == 3


def test_branch_ancestors_and_unreferenced_snapshots(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    s0, s1, s2 = (s.snapshot_id for s in t.snapshots)
    # main goes back to s1: s2 is reached by no ref and young, so it stays (as Java)
    _set_ref(t, "main", s1, SnapshotRefType.BRANCH)
    _set_ref(t, "dev", s2, SnapshotRefType.BRANCH, min_snapshots_to_keep=2)
    now = int(time.time() * 1000) + 1
    result = t.expire_snapshots(now, dry_run=True)
    assert result.expired_snapshot_ids == (s0,)  # dev keeps s2 and s1; main keeps s1
    assert result.dry_run and not result.committed
    _set_ref(t, "dev", s2, SnapshotRefType.BRANCH, min_snapshots_to_keep=1)
    result = t.expire_snapshots(now)
    assert result.expired_snapshot_ids == (s0,)
    assert {s.snapshot_id for s in t.snapshots} == {s1, s2}
    # a tag's max-ref-age drops the tag; its snapshot then expires with the rest
    _set_ref(t, "old", s1, SnapshotRefType.TAG, max_ref_age_ms=1)
    time.sleep(0.01)
    assert t.expire_snapshots(dry_run=True).removed_refs == ("old",)


def test_refused_requests_change_nothing(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    s0 = t.snapshots[0].snapshot_id
    _set_ref(t, "v1", s0, SnapshotRefType.TAG)
    before = (_files(tmp_path), t.metadata_location)
    with pytest.raises(ValidationError, match="referenced by v1"):
        t.expire_snapshots(snapshot_ids=[s0])
    with pytest.raises(NoSuchSnapshot):
        t.expire_snapshots(snapshot_ids=[12345])
    with pytest.raises(ValidationError):
        t.expire_snapshots(retain_last=0)
    with pytest.raises(ValidationError):
        t.expire_snapshots(older_than=[1])  # type: ignore[arg-type]
    # As Java's PropertyUtil (and icenb's purge): only "true" enables garbage collection.
    # icenb sets only "true"/"false"; "no" and "0" are what another engine may have written.
    for off in ("false", "no", "0"):
        written_by_another_engine(t, {"gc.enabled": off})
        with pytest.raises(ValidationError, match=r"gc\.enabled"):
            t.expire_snapshots(int(time.time() * 1000) + 1)
        assert before[0] <= _files(tmp_path)  # nothing deleted
        assert len(t.snapshots) == 3


def test_a_failed_commit_deletes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path, 3, **{"commit.retry.num-retries": "1",
                               "commit.retry.min-wait-ms": "1"})
    before, location = _files(tmp_path), t.metadata_location

    def conflict(*args: Any, **kwargs: Any) -> Any:
        raise CommitConflict("simulated concurrent commit", field="metadata_location")

    monkeypatch.setattr(t.catalog, "commit_table", conflict)
    with pytest.raises(CommitConflict):
        t.expire_snapshots(int(time.time() * 1000) + 1)
    assert _files(tmp_path) == before and t.metadata_location == location
    assert len(t.snapshots) == 3


def test_a_concurrent_append_is_kept(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    other = icenb.warehouse(tmp_path).table("db.t")
    now = int(time.time() * 1000) + 1
    other.append([{"id": 9}])  # t is now stale: its commit conflicts, and is retried
    result = t.expire_snapshots(now)
    assert len(result.expired_snapshot_ids) == 2  # the two old ones; the new head stays
    assert t.current_snapshot is not None
    assert t.current_snapshot.snapshot_id == other.current_snapshot.snapshot_id  # type: ignore
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 9]


def test_clean_files_false_deletes_nothing(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    before = _files(tmp_path)
    result = t.expire_snapshots(int(time.time() * 1000) + 1, clean_files=False)
    assert len(result.expired_snapshot_ids) == 2 and result.deleted_paths == frozenset()
    assert before <= _files(tmp_path)


def test_opened_by_location_is_read_only(tmp_path: Path) -> None:
    t = _table(tmp_path, 2)
    ro = icenb.open(t.metadata_location)  # type: ignore[arg-type]
    assert len(ro.expire_snapshots(int(time.time() * 1000) + 1,
                                   dry_run=True).expired_snapshot_ids) == 1
    with pytest.raises(UnsupportedFeature):
        ro.expire_snapshots(int(time.time() * 1000) + 1)
