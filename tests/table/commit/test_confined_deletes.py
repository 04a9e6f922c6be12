"""Nothing outside a table is deleted unasked (issue 17): expiry keeps unreferenced files
outside the table's folders (and says so), delete-after-commit never deletes a metadata-log
entry that names a file outside the table, and remove_orphan_files deletes only old,
unreferenced files under the table's own folders."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.table_updates import SetProperties
from icenb.table import Table
from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement


def _table(root: Path) -> Table:
    t = icenb.warehouse(root / "wh").create_table("db.t", "id long")
    t.append([{"id": 1}])
    return t


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_expiry_keeps_a_file_outside_the_table(tmp_path: Path) -> None:
    """A data file written by another engine outside the table's folder, referenced only by
    an expired snapshot, is kept and reported; delete_outside_table=True takes it."""
    t = _table(tmp_path)
    outside = tmp_path / "elsewhere.parquet"
    inside = next((tmp_path / "wh" / "db" / "t" / "data").iterdir())
    outside.write_bytes(inside.read_bytes())
    from icenb.spec.manifest import DataFile, FileFormat
    from icenb.table.commit.producer import FastAppend, commit_snapshot

    catalog, ident = t.operations.commit_target()
    p = FastAppend(catalog, ident, t.io)
    p.add_files([DataFile(file_path=str(outside), file_format=FileFormat.PARQUET,
                          record_count=1, file_size_in_bytes=outside.stat().st_size)])
    commit_snapshot(t, p)
    t.delete("true", "copy-on-write")  # the outside file is no longer live
    first = [s.snapshot_id for s in t.snapshots][:2]
    result = t.expire_snapshots(snapshot_ids=first)
    assert str(outside) in result.kept_outside and outside.exists()
    assert not inside.exists()  # the table's own unreferenced file went
    t2 = _table(tmp_path / "b")
    outside2 = tmp_path / "elsewhere2.parquet"
    outside2.write_bytes(outside.read_bytes())
    catalog, ident = t2.operations.commit_target()
    p = FastAppend(catalog, ident, t2.io)
    p.add_files([DataFile(file_path=str(outside2), file_format=FileFormat.PARQUET,
                          record_count=1, file_size_in_bytes=outside2.stat().st_size)])
    commit_snapshot(t2, p)
    t2.delete("true", "copy-on-write")
    t2.expire_snapshots(snapshot_ids=[s.snapshot_id for s in t2.snapshots][:2],
                        delete_outside_table=True)
    assert not outside2.exists()  # asked explicitly


def test_delete_after_commit_never_deletes_a_file_the_log_names_outside(tmp_path: Path) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    t = _table(tmp_path)
    # a metadata file whose log names the victim, as a crafted or foreign file could
    change = MetadataChange([SetProperties({"write.metadata.delete-after-commit.enabled": "true",
                                            "write.metadata.previous-versions-max": "1"})],
                            uuid_requirement(t.metadata))
    commit_change(t, lambda _m: change)
    location = t.metadata_location
    doc = json.loads(Path(location).read_text())
    doc["metadata-log"].insert(0, {"timestamp-ms": 1, "metadata-file": str(victim)})
    Path(location).write_text(json.dumps(doc))
    t = icenb.warehouse(tmp_path / "wh").table("db.t")
    for i in range(3):
        t.append([{"id": 10 + i}])
    assert victim.read_text() == "keep me"
    assert len(t.metadata.metadata_log) == 1  # the log was cut: own files fell off


def test_remove_orphan_files(tmp_path: Path) -> None:
    t = _table(tmp_path)
    data = tmp_path / "wh" / "db" / "t" / "data"
    meta = tmp_path / "wh" / "db" / "t" / "metadata"
    old_orphan = data / "00000-crashed.parquet"
    old_orphan.write_bytes(b"PAR1")
    _age(old_orphan, 4 * 86400)
    new_orphan = data / "00001-in-flight.parquet"
    new_orphan.write_bytes(b"PAR1")
    stray_manifest = meta / "deadbeef-m0.avro"
    stray_manifest.write_bytes(b"Obj")
    _age(stray_manifest, 4 * 86400)
    hidden = data / ".hidden.crc"
    hidden.write_bytes(b"x")
    _age(hidden, 4 * 86400)
    outside = tmp_path / "wh" / "db" / "not-the-table.parquet"
    outside.write_bytes(b"PAR1")
    _age(outside, 4 * 86400)
    for f in list(data.iterdir()) + list(meta.iterdir()):  # the table's own files are old too
        if f not in (new_orphan,):
            _age(f, 5 * 86400)
    rows = t.to_arrow().to_pylist()
    dry = t.remove_orphan_files(dry_run=True)
    assert sorted(dry.orphans) == sorted([str(old_orphan), str(stray_manifest)])
    assert dry.too_recent == 1 and old_orphan.exists() and dry.deleted == ()
    done = t.remove_orphan_files()
    assert sorted(done.deleted) == sorted(dry.orphans)
    assert not old_orphan.exists() and not stray_manifest.exists()
    assert new_orphan.exists() and hidden.exists() and outside.exists()
    assert icenb.warehouse(tmp_path / "wh").table("db.t").to_arrow().to_pylist() == rows
    recent = t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000)
    assert recent.deleted == (str(new_orphan),)
    with pytest.raises(ValidationError, match="older_than"):
        t.remove_orphan_files(older_than=[1])  # type: ignore[arg-type]
