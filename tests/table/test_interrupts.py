"""Interrupting long work (``KeyboardInterrupt``: Jupyter's "interrupt the kernel", Ctrl-C).

The rule (DESIGN.md, Errors: "Failing operations leave the table exactly as it was"), for an
interrupt that lands while files are written, before the catalog is asked to swap the pointer:

- append, delete (copy-on-write and merge-on-read): the interrupt propagates as
  ``KeyboardInterrupt``, the catalog points at the same metadata file, the files under the
  table are those of before (none added, none changed), the rows are the same;
- expiry interrupted before its commit: nothing changed; after its commit (while deleting):
  the table is the committed one, whole and readable, and every file deleted so far was one
  no kept snapshot references (what is left of those is for ``remove_orphan_files``).

An interrupt while the catalog swaps the pointer leaves the outcome unknown: the files are
kept (tests/table/commit/test_append.py, ``test_an_unknown_outcome_keeps_the_files``).

Interrupts are injected where the real work is: a Parquet write of a data or delete file, or
just after a manifest, manifest list or Puffin file is created (the file exists, the interrupt
arrives before the code that wrote it goes on).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.io.data_files.parquet import ParquetFileWriter
from icenb.io.file_io import FileIO, OutputFile
from icenb.io.snapshot_files import SnapshotFiles
from icenb.table import Table
from icenb.table.commit.producer import SnapshotProducer
from icenb.table.warehouse import Warehouse

VERSIONS = [2, 3]
NOW = "2999-01-01T00:00:00+00:00"  # expiry and orphan removal: every snapshot is old enough


def rows(start: int, n: int) -> list[dict[str, Any]]:
    return [{"id": i, "part": i % 4, "s": f"row {i}"} for i in range(start, start + n)]


@dataclass
class Setup:
    warehouse: Warehouse
    table: Table
    root: Path  # the table's directory


@pytest.fixture(params=VERSIONS, ids=lambda v: f"v{v}")
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Setup:
    """A partitioned table with two snapshots (each appends a file to each of 4 partitions)."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, part int, s string", partition_by=["part"],
                        format_version=request.param)
    t.append(rows(0, 40))
    t.append(rows(40, 40))
    root = Path(t.location.removeprefix("file:"))
    assert root.is_dir() and (root / "data").is_dir()
    return Setup(wh, t, root)


@dataclass(frozen=True)
class State:
    metadata_location: str
    files: dict[str, str]  # path under the table -> sha256 of its bytes
    rows: list[dict[str, Any]]


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def state(s: Setup) -> State:
    """What the catalog and the file system say now (a fresh load, not the handle)."""
    fresh = s.warehouse.table("db.t")
    assert fresh.metadata_location is not None
    data = fresh.to_arrow().sort_by("id").to_pylist()
    return State(fresh.metadata_location, files_under(s.root), data)


# --------------------------------------------------------------------------- injections


def interrupt_parquet_write(monkeypatch: pytest.MonkeyPatch, nth: int) -> list[int]:
    """The ``nth`` Parquet row-group write (data or position delete file) is interrupted."""
    real = ParquetFileWriter.write
    calls = [0]

    def write(self: ParquetFileWriter, table: pa.Table) -> None:
        calls[0] += 1
        if calls[0] == nth:
            raise KeyboardInterrupt
        real(self, table)

    monkeypatch.setattr(ParquetFileWriter, "write", write)
    return calls


def interrupt_after_creating(monkeypatch: pytest.MonkeyPatch, pattern: str,
                             nth: int = 1) -> list[int]:
    """The interrupt arrives just after the ``nth`` file whose location matches ``pattern`` was
    created (the file is complete and stays unless the operation deletes it)."""
    real = OutputFile.create
    calls = [0]

    def create(self: OutputFile, data: bytes, *, overwrite: bool = False) -> None:
        real(self, data, overwrite=overwrite)
        if re.search(pattern, self.location):
            calls[0] += 1
            if calls[0] == nth:
                raise KeyboardInterrupt

    monkeypatch.setattr(OutputFile, "create", create)
    return calls


def interrupt_before_commit(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The interrupt arrives when every data and delete file is written, before the commit
    writes its manifests."""
    calls = [0]

    def commit(self: SnapshotProducer, base: Any) -> Any:
        calls[0] += 1
        raise KeyboardInterrupt

    monkeypatch.setattr(SnapshotProducer, "commit", commit)
    return calls


MANIFEST = r"/metadata/[^/]*-m\d+\.avro$"
MANIFEST_LIST = r"/metadata/snap-[^/]*\.avro$"
PUFFIN = r"\.puffin$"

Inject = Callable[[pytest.MonkeyPatch, int], list[int]]

#: Where an interrupt lands in a write (the name is the test id).
WRITE_POINTS: dict[str, Inject] = {
    "data-file": lambda mp, version: interrupt_parquet_write(mp, 2),
    "before-commit": lambda mp, version: interrupt_before_commit(mp),
    "manifest": lambda mp, version: interrupt_after_creating(mp, MANIFEST),
    "manifest-list": lambda mp, version: interrupt_after_creating(mp, MANIFEST_LIST),
}
#: Where an interrupt lands in a merge-on-read delete: its delete file (v2 a Parquet position
#: delete file, v3 a Puffin file of deletion vectors), or its manifests.
DELETE_FILE_POINTS: dict[str, Inject] = {
    "delete-file": lambda mp, version: (interrupt_parquet_write(mp, 1) if version == 2
                                        else interrupt_after_creating(mp, PUFFIN)),
    "before-commit": lambda mp, version: interrupt_before_commit(mp),
    "manifest": lambda mp, version: interrupt_after_creating(mp, MANIFEST),
    "manifest-list": lambda mp, version: interrupt_after_creating(mp, MANIFEST_LIST),
}


def assert_interrupt_changes_nothing(s: Setup, monkeypatch: pytest.MonkeyPatch, inject: Inject,
                                     work: Callable[[Table], Any]) -> None:
    before = state(s)
    calls = inject(monkeypatch, s.table.format_version)
    with pytest.raises(KeyboardInterrupt):
        work(s.table)
    assert calls[0] > 0, "the interrupt was never reached"
    monkeypatch.undo()
    after = state(s)
    assert after.metadata_location == before.metadata_location
    assert after.files == before.files
    assert after.rows == before.rows
    # the handle shows the catalog's state and can write again
    assert s.table.metadata_location == before.metadata_location
    s.table.append(rows(1000, 4))
    assert len(s.warehouse.table("db.t").to_arrow()) == len(before.rows) + 4


# --------------------------------------------------------------------------- writes


@pytest.mark.parametrize("point", WRITE_POINTS)
def test_an_interrupted_append_leaves_the_table_as_it_was(
        setup: Setup, monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    assert_interrupt_changes_nothing(setup, monkeypatch, WRITE_POINTS[point],
                                     lambda t: t.append(rows(100, 40)))


@pytest.mark.parametrize("point", WRITE_POINTS)
def test_an_interrupted_copy_on_write_delete_leaves_the_table_as_it_was(
        setup: Setup, monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    # ids < 10 are some rows of each file of the first snapshot: those files are rewritten
    assert_interrupt_changes_nothing(setup, monkeypatch, WRITE_POINTS[point],
                                     lambda t: t.delete("id < 10", mode="copy-on-write"))


@pytest.mark.parametrize("point", DELETE_FILE_POINTS)
def test_an_interrupted_merge_on_read_delete_leaves_the_table_as_it_was(
        setup: Setup, monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    assert_interrupt_changes_nothing(setup, monkeypatch, DELETE_FILE_POINTS[point],
                                     lambda t: t.delete("id < 10", mode="merge-on-read"))


# --------------------------------------------------------------------------- expiry


def test_expiry_interrupted_before_its_commit_changes_nothing(
        setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    def plan(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    before = state(setup)
    monkeypatch.setattr("icenb.table.commit.expire_snapshots.plan_retention", plan)
    with pytest.raises(KeyboardInterrupt):
        setup.table.expire_snapshots(older_than=NOW, retain_last=1)
    monkeypatch.undo()
    assert state(setup) == before


@pytest.fixture
def deletes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """``FileIO.delete`` records each location; the third delete is interrupted."""
    real = FileIO.delete
    done: list[str] = []

    def delete(self: FileIO, location: str, *, missing_ok: bool = False) -> None:
        if len(done) == 2:
            raise KeyboardInterrupt
        real(self, location, missing_ok=missing_ok)
        done.append(location)

    monkeypatch.setattr(FileIO, "delete", delete)
    yield done


def test_expiry_interrupted_after_its_commit_deleted_only_unreferenced_files(
        setup: Setup, monkeypatch: pytest.MonkeyPatch, deletes: list[str]) -> None:
    t = setup.table
    setup.table.delete("id < 40", mode="copy-on-write")  # the first append's files go
    before = state(setup)
    kept = t.current_snapshot
    assert kept is not None
    with pytest.raises(KeyboardInterrupt):
        t.expire_snapshots(older_than=NOW, retain_last=1)
    monkeypatch.undo()
    after = state(setup)
    # committed: the catalog and the handle show the table without the expired snapshots
    assert after.metadata_location != before.metadata_location
    assert t.metadata_location == after.metadata_location
    assert [s.snapshot_id for s in t.metadata.snapshots] == [kept.snapshot_id]
    assert after.rows == before.rows
    # whole: every file the committed metadata reaches is there
    referenced = {p for paths in SnapshotFiles(t.io, t.metadata).all_files().values()
                  for p in paths} | {t.metadata_location}
    present = {str(setup.root / p) for p in after.files}
    assert {r.removeprefix("file:") for r in referenced} <= present
    # the deletes made were of unreferenced files only, and they are gone
    assert len(deletes) == 2
    for location in deletes:
        path = location.removeprefix("file:")
        assert path not in {r.removeprefix("file:") for r in referenced}
        assert not Path(path).exists()
    gone = set(before.files) - set(after.files)
    assert {str(setup.root / p) for p in gone} == {d.removeprefix("file:") for d in deletes}
    # what the interrupt left unreferenced is orphaned: remove_orphan_files takes it
    orphans = t.remove_orphan_files(older_than=NOW)
    assert orphans.deleted and not orphans.failed
    left = {str(setup.root / p) for p in files_under(setup.root)}
    assert {r.removeprefix("file:") for r in referenced} <= left
    assert state(setup).rows == before.rows


#: The operations above, and the rows each leaves.
OPERATIONS: dict[str, tuple[Callable[[Table], Any], Callable[[list[int]], list[int]]]] = {
    "append": (lambda t: t.append(rows(100, 8)), lambda ids: [*ids, *range(100, 108)]),
    "delete-copy-on-write": (lambda t: t.delete("id < 10", mode="copy-on-write"),
                             lambda ids: [i for i in ids if i >= 10]),
    "delete-merge-on-read": (lambda t: t.delete("id < 10", mode="merge-on-read"),
                             lambda ids: [i for i in ids if i >= 10]),
}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_an_interrupt_after_the_commit_keeps_what_it_committed(
        setup: Setup, monkeypatch: pytest.MonkeyPatch, operation: str) -> None:
    """The catalog took the commit, then the interrupt came (as the handle was updated): the
    files are the table's now and none is deleted."""
    work, expected = OPERATIONS[operation]
    before = state(setup)
    real = Table._committed

    def committed(self: Table, loaded: Any) -> None:
        real(self, loaded)
        raise KeyboardInterrupt

    monkeypatch.setattr(Table, "_committed", committed)
    with pytest.raises(KeyboardInterrupt):
        work(setup.table)
    monkeypatch.undo()
    after = state(setup)
    assert after.metadata_location != before.metadata_location
    assert [r["id"] for r in after.rows] == expected([r["id"] for r in before.rows])
    fresh = setup.warehouse.table("db.t")
    live = {p.removeprefix("file:") for paths in
            SnapshotFiles(fresh.io, fresh.metadata).all_files().values() for p in paths}
    assert live <= {str(setup.root / p) for p in after.files}
