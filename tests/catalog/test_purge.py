"""Purge: ``drop_table(name, purge=True)`` removes every file of a v1, v2, v3 and v4 table, in
both catalogs, and never a file outside the table's folders, whatever its metadata names."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import icenb
from icenb.catalog.base import reachable_files
from icenb.io.snapshot_files import SnapshotFiles
from icenb.spec.snapshot import BlobMetadata, MetadataLogEntry, StatisticsFile
from icenb.table import Table


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_file()}


def _register_statistics(t: Table, path: Path) -> None:
    """A table-statistics (Puffin) entry for the current snapshot, committed as a catalog
    commit (icenb writes no Puffin statistics of its own yet)."""
    path.write_bytes(b"PFA1" + b"\0" * 12 + b"PFA1")
    md = t.metadata
    sid = md.current_snapshot_id
    assert sid is not None and t.catalog is not None and t.identifier is not None
    stats = StatisticsFile(sid, str(path), path.stat().st_size, 8,
                           (BlobMetadata("apache-datasketches-theta-v1", sid, 1, (1,)),))
    new = dataclasses.replace(md, statistics=(*md.statistics, stats))
    t.catalog.commit_table(t.identifier, t.metadata_location, new, base_metadata=md)


def _build(root: Path, catalog: str, version: int) -> tuple[icenb.Warehouse, Table]:
    wh = icenb.warehouse(root / "wh", catalog=catalog)
    props = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
    if version == 4:
        props.update({"write.v4.root-entry-limit": "0",
                      "write.v4.manifest-dv.storage": "puffin"})
    t = wh.create_table("db.t", "id long not null, kind string", partition_by=["kind"],
                        format_version=min(version, 3) if version == 4 else version,
                        properties=props)
    t.append([{"id": i, "kind": "a" if i % 2 else "b"} for i in range(10)])
    if version == 4:
        t.upgrade(4)
    t.append([{"id": i, "kind": "c"} for i in range(10, 14)])
    if version >= 2:
        t.delete("id = 3")                        # position deletes (v2) or a DV (v3, v4)
        t.delete_by_key([{"id": 11, "kind": "c"}], on=["id", "kind"])  # equality deletes
    t.delete("kind = 'b'", mode="copy-on-write")   # whole files leave: v4 manifest DVs
    t.overwrite([{"id": 99, "kind": "a"}], "kind = 'a'")
    t.compute_partition_stats()
    _register_statistics(t, Path(t.location) / "metadata" / "stats-1.puffin")
    return wh, t


@pytest.mark.parametrize("catalog", ["sql", "filesystem"])
@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_purge_removes_every_file_of_the_table(tmp_path: Path, catalog: str,
                                               version: int) -> None:
    wh, t = _build(tmp_path, catalog, version)
    table_dir = Path(t.location)
    before = _files(table_dir)
    kinds = {p.rsplit(".", 1)[-1] for p in before}
    assert {"parquet", "avro", "json"} <= kinds
    if version >= 3:
        assert "puffin" in kinds                  # DVs (and v4 manifest DVs)
    if version == 4:
        assert any(Path(p).name.startswith("root-") for p in before)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the table's")
    wh.drop_table("db.t", purge=True)
    assert _files(table_dir) == set(), sorted(_files(table_dir))
    assert outside.read_text() == "not the table's"


def test_the_walk_without_live_only_sees_deleted_entries(tmp_path: Path) -> None:
    _, t = _build(tmp_path, "sql", 4)
    walk = SnapshotFiles(t.io, t.metadata)
    live = walk.all_files(live_only=True)
    every = walk.all_files(live_only=False)
    for kind, paths in live.items():
        assert paths <= every[kind], kind
    assert every["manifest_dvs"] and every["root_manifests"]


def test_purge_keeps_files_outside_the_table_that_its_metadata_names(tmp_path: Path) -> None:
    """Metadata may name any file (a crafted metadata-log entry or statistics path): purge
    keeps it, says so, and deletes the rest."""
    wh = icenb.warehouse(tmp_path / "wh")
    t = wh.create_table("db.t", "id long")
    t.append([{"id": 1}])
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    sneaky = tmp_path / "wh" / "db" / "t" / ".." / ".." / ".." / "precious.txt"
    md = t.metadata
    assert t.catalog is not None and t.identifier is not None and md.current_snapshot_id
    crafted = dataclasses.replace(
        md, metadata_log=(*md.metadata_log, MetadataLogEntry(1, str(victim))),
        statistics=(StatisticsFile(md.current_snapshot_id, os.fspath(sneaky), 7, 1, ()),))
    t.catalog.commit_table(t.identifier, t.metadata_location, crafted, base_metadata=md)
    loaded = t.catalog.load_table(t.identifier)
    failures: list[tuple[str, str]] = []
    listed = reachable_files(loaded.metadata, loaded.io, loaded.metadata_location,
                             failures=failures)
    assert str(victim) not in listed and os.fspath(sneaky) not in listed
    assert {f for f, _ in failures} >= {str(victim), os.fspath(sneaky)}
    with pytest.warns(icenb.errors.IcebergWarning, match="outside the table"):
        wh.drop_table("db.t", purge=True)
    assert victim.read_text() == "keep me"
    assert _files(tmp_path / "wh" / "db" / "t") == set()
