"""Benchmark: metadata written per commit and manifests read to plan, format v3 vs v4 twins.

Issue 7 item 7; single-file-commits proposal goals: one new metadata file (besides the table
metadata JSON) for a small commit, and metadata written proportional to the change, not to the
table (docs/v4-layout.md#appends, #removals, #row-deltas). Twin tables, format-version 3 and 4, same
schema
(``id long, p int``, identity-partitioned by ``p``), same files:

- table A: ``--small`` data files (default 1,000) added in one metadata-level append;
- table B: ``--manifests`` appends (default 10) of ``--per-manifest`` files (default 1,000):
  v3 ``FastAppend`` writes one manifest per append, v4 ``V4Append`` one leaf per append
  (``write.v4.root-entry-limit`` default 2 < files per append).

The bulk files are :class:`DataFile` records only (100 rows each, ids ``[100 i, 100 i + 99]``,
column bounds and counts; no Parquet file), except one real Parquet file of 10 rows (shared by
both twins) in table B's last append, which the row deltas read. Commits measured, each through
the user API (``Table.append`` / ``Table.delete``):

(a)  a one-row append to table A;  (a') the same to table B;
(b)  deleting one (metadata-only) data file of table B (copy-on-write delete by an id range that
     its bounds match exactly: v3 rewrites that file's manifest, v4 adds an inline manifest DV);
(c)  a row delta: a merge-on-read delete of one row of the real file (a new DV);
(c') a second one on the same file (the new DV replaces the first).

Per commit: files and bytes the commit wrote under the table location, by listing it before and
after, split by kind (manifest list / root manifest, manifests / leaves, Puffin DVs; the table
metadata JSON separately; data files are not metadata and not shown). Then (d) for the commit:
each twin has one :class:`FileIO` and :class:`ManifestCache` for the run, which planned the
parent snapshot before the commit; shown: files opened and bytes read planning the new snapshot
with that cache, and files decoded (cache misses, plus the v4 root, which is not cached). Both
twins must plan the same live data files, records and delete files, and have the same summary
totals (asserted); nothing asserts on sizes or time.

Run: ``python tests/benchmarks/bench_v4_commits.py [--small 1000] [--manifests 10]
[--per-manifest 1000]`` or ``pytest -s tests/benchmarks/bench_v4_commits.py``.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyarrow as pa

import icenb
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import ManifestCache
from icenb.spec.manifest import DataFile, FileFormat
from icenb.spec.snapshot import Snapshot
from icenb.table.commit.producer import FastAppend, commit_snapshot
from icenb.table.commit.v4_append import V4Append
from icenb.table.scan.planning import ScanPlan, plan_files
from icenb.table.table import Table
from icenb.table.write.data_files import write_data_files
from icenb.table.write.locations import location_provider

ROWS_PER_FILE = 100
FILES_PER_PARTITION = 100
REAL_ROWS = 10
KINDS = ("top", "manifests", "puffin", "json")
KIND_LABELS = {"top": "manifest list | root", "manifests": "manifests | leaves",
               "puffin": "Puffin DVs", "json": "table metadata JSON"}


# --------------------------------------------------------------------------- building


def _long(v: int) -> bytes:
    return struct.pack("<q", v)


def _int(v: int) -> bytes:
    return struct.pack("<i", v)


def _fake_files(root: str, start: int, count: int) -> list[DataFile]:
    """``count`` data file records (no file behind them) for files ``start ..``: 100 rows,
    ids ``[100 i, 100 i + 99]``, ``p = i // 100``, full bounds and counts."""
    out = []
    for i in range(start, start + count):
        lo, p = i * ROWS_PER_FILE, i // FILES_PER_PARTITION
        out.append(DataFile(
            file_path=f"{root}/shared/data/p={p}/f-{i:06d}.parquet",
            file_format=FileFormat.PARQUET, partition=(p,), record_count=ROWS_PER_FILE,
            file_size_in_bytes=1_000 + i % 97,
            column_sizes={1: 600, 2: 100},
            value_counts={1: ROWS_PER_FILE, 2: ROWS_PER_FILE},
            null_value_counts={1: 0, 2: 0},
            lower_bounds={1: _long(lo), 2: _int(p)},
            upper_bounds={1: _long(lo + ROWS_PER_FILE - 1), 2: _int(p)}))
    return out


def _real_file(root: str, t: Table, first_id: int) -> DataFile:
    """One real Parquet file of ``REAL_ROWS`` rows under ``<root>/shared`` (both twins list
    it): the row deltas read it."""
    md = t.metadata
    p = first_id // (ROWS_PER_FILE * FILES_PER_PARTITION)
    rows = pa.table({"id": pa.array(range(first_id, first_id + REAL_ROWS), pa.int64()),
                     "p": pa.array([p] * REAL_ROWS, pa.int32())})
    files = write_data_files(t.io, rows, md.schema, md.spec, md.sort_order, md.properties,
                             location_provider(f"{root}/shared", {}),
                             format_version=md.format_version, operation_id="real")
    assert len(files) == 1
    return files[0]


def _bulk_append(t: Table, files: Sequence[DataFile]) -> Snapshot:
    """A metadata-level append: v3 ``FastAppend`` (one manifest), v4 ``V4Append`` (a leaf
    above the root-entry limit)."""
    catalog, identifier = t._writable()
    producer = (V4Append if t.metadata.format_version >= 4 else FastAppend)(
        catalog, identifier, t.io)
    producer.add_files(files)
    return commit_snapshot(t, producer)


def _twins(wh: icenb.Warehouse, name: str) -> tuple[Table, Table]:
    return tuple(  # type: ignore[return-value]
        wh.create_table(f"db.{name}_v{v}", "id long, p int", partition_by=["p"],
                        format_version=v) for v in (3, 4))


# --------------------------------------------------------------------------- measuring


def _listing(t: Table) -> dict[str, int]:
    """Every file under the table location, with its size."""
    base = t.location.removeprefix("file://")
    out: dict[str, int] = {}
    for dirpath, _, names in os.walk(base):
        for n in names:
            path = os.path.join(dirpath, n)
            out[path] = os.path.getsize(path)
    return out


def _kind(path: str) -> str | None:
    name = os.path.basename(path)
    if name.endswith(".metadata.json"):
        return "json"
    if name.endswith(".puffin"):
        return "puffin"
    if name.endswith(".avro"):
        return "top" if name.startswith(("snap-", "root-")) else "manifests"
    return None  # data files, catalog files


@dataclass
class Written:
    """Files and bytes one commit wrote, by kind."""

    files: dict[str, int]
    bytes: dict[str, int]

    @classmethod
    def between(cls, before: dict[str, int], after: dict[str, int]) -> Written:
        files = dict.fromkeys(KINDS, 0)
        size = dict.fromkeys(KINDS, 0)
        for path, n in after.items():
            kind = _kind(path)
            if path not in before and kind is not None:
                files[kind] += 1
                size[kind] += n
        return cls(files, size)

    @property
    def metadata_files(self) -> int:
        """Metadata files besides the table metadata JSON (manifest lists/roots, manifests)."""
        return self.files["top"] + self.files["manifests"]

    @property
    def metadata_bytes(self) -> int:
        return self.bytes["top"] + self.bytes["manifests"]


@dataclass
class Planned:
    """What planning the new snapshot read with the parent's plan cached."""

    opened: int
    bytes_read: int
    decoded: int
    plan: ScanPlan


class Planner:
    """A twin's planner: one :class:`FileIO` and one :class:`ManifestCache` for the run, so the
    snapshot before a commit is cached when the new one is planned."""

    def __init__(self) -> None:
        self.io, self.cache = FileIO(), ManifestCache()

    def warm(self, t: Table) -> None:
        """Plan the current snapshot (a no-op read when it is cached already)."""
        plan_files(self.io, t.metadata, cache=self.cache)

    def plan(self, t: Table, snap: Snapshot) -> Planned:
        """Plan ``snap`` with the parent's plan cached; what it opened and decoded."""
        self.io.stats.reset()
        misses = self.cache.misses
        plan = plan_files(self.io, t.metadata, snapshot_id=snap.snapshot_id, cache=self.cache)
        decoded = self.cache.misses - misses + (1 if snap.root_manifest is not None else 0)
        return Planned(self.io.stats.opened, self.io.stats.bytes_read, decoded, plan)


def _same_plan(p3: ScanPlan, p4: ScanPlan, twins: tuple[Table, Table]) -> None:
    """Both twins plan the same live data files (the shared ones by path, each twin's own
    written ones by count: their names hold a commit UUID), records and delete files."""
    f3, f4 = p3.files, p4.files

    def paths(files: pa.Table, t: Table) -> list[str]:
        return sorted("<own>" if p.startswith(t.location) else p
                      for p in files.column("file_path").to_pylist())

    assert paths(f3, twins[0]) == paths(f4, twins[1])
    assert sum(f3.column("record_count").to_pylist()) == sum(
        f4.column("record_count").to_pylist())
    assert p3.delete_files_selected == p4.delete_files_selected
    assert sorted(map(len, f3.column("delete_files").to_pylist())) == sorted(
        map(len, f4.column("delete_files").to_pylist()))


@dataclass
class Figure:
    label: str
    written: tuple[Written, Written]
    planned: tuple[Planned, Planned]


def _measure(label: str, twins: tuple[Table, Table], planners: tuple[Planner, Planner],
             change: Callable[[Table], Snapshot | None]) -> Figure:
    """Run ``change`` on both twins; what each commit wrote and what planning it read."""
    written: list[Written] = []
    planned: list[Planned] = []
    for t, planner in zip(twins, planners, strict=True):
        planner.warm(t)
        before = _listing(t)
        snap = change(t)
        assert snap is not None and snap == t.current_snapshot
        written.append(Written.between(before, _listing(t)))
        planned.append(planner.plan(t, snap))
    _same_plan(planned[0].plan, planned[1].plan, twins)
    s3, s4 = (t.current_snapshot for t in twins)
    assert s3 is not None and s4 is not None and s3.summary is not None and s4.summary
    assert {k: v for k, v in s3.summary.properties.items() if k.startswith("total-")} == {
        k: v for k, v in s4.summary.properties.items() if k.startswith("total-")}
    return Figure(label, (written[0], written[1]), (planned[0], planned[1]))


# --------------------------------------------------------------------------- report


def _ratio(a: int, b: int) -> str:
    return "-" if b == 0 else f"{a / b:.1f}x"


def _print(figures: Sequence[Figure]) -> None:
    head = f"{'figure':<44} {'v3 files':>8} {'v3 bytes':>10} {'v4 files':>8} " \
           f"{'v4 bytes':>10} {'v3/v4 B':>8}"
    print(head)
    print("-" * len(head))

    def row(name: str, f3: int, b3: int, f4: int, b4: int) -> None:
        print(f"{name:<44} {f3:>8} {b3:>10,} {f4:>8} {b4:>10,} {_ratio(b3, b4):>8}")

    for fig in figures:
        w3, w4 = fig.written
        print(fig.label)
        row("  written: metadata (excl. JSON)", w3.metadata_files, w3.metadata_bytes,
            w4.metadata_files, w4.metadata_bytes)
        for kind in KINDS:
            row(f"    {KIND_LABELS[kind]}", w3.files[kind], w3.bytes[kind], w4.files[kind],
                w4.bytes[kind])
        p3, p4 = fig.planned
        row("  (d) plan next, parent cached: opened/read", p3.opened, p3.bytes_read,
            p4.opened, p4.bytes_read)
        print(f"{'      files decoded (v3 | v4)':<44} {p3.decoded:>8} {'':>10} "
              f"{p4.decoded:>8}")


# --------------------------------------------------------------------------- the run


def run(small: int = 1_000, manifests: int = 10, per_manifest: int = 1_000) -> list[Figure]:
    """Build the twins and measure every commit; the figures (also printed)."""
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).as_posix()
        wh = icenb.warehouse(f"{root}/wh")
        t0 = time.perf_counter()
        a = _twins(wh, "a")
        small_files = _fake_files(root, 0, small)
        for t in a:
            _bulk_append(t, small_files)
        b = _twins(wh, "b")
        n = manifests * per_manifest
        real_id = n * ROWS_PER_FILE
        real = _real_file(root, b[0], real_id)
        for k in range(manifests):
            batch = _fake_files(root, k * per_manifest, per_manifest)
            if k == manifests - 1:
                batch = [*batch[:-1], real]
            for t in b:
                _bulk_append(t, batch)
        print(f"setup: table A {small} files; table B {n} files in {manifests} manifests "
              f"(1 real); {time.perf_counter() - t0:.1f} s")

        planners_a, planners_b = (Planner(), Planner()), (Planner(), Planner())
        one_row = [{"id": 10 * real_id, "p": 0}]
        figures.append(_measure(f"(a) one-row append, {small} files", a, planners_a,
                                lambda t: t.append(one_row)))
        figures.append(_measure(f"(a') one-row append, {n} files / {manifests} manifests", b,
                                planners_b,
                                lambda t: t.append(one_row)))
        lo = 5 * ROWS_PER_FILE  # file 5: in the first manifest / leaf
        figures.append(_measure(
            f"(b) delete 1 of {n} files in {manifests} manifests", b, planners_b,
            lambda t: t.delete(f"id >= {lo} and id <= {lo + ROWS_PER_FILE - 1}")))
        figures.append(_measure("(c) row delta: MoR delete of 1 row (new DV)", b, planners_b,
                                lambda t: t.delete(f"id = {real_id}", mode="merge-on-read")))
        figures.append(_measure("(c') row delta: 1 more row (DV replaced)", b, planners_b,
                                lambda t: t.delete(f"id = {real_id + 1}",
                                                   mode="merge-on-read")))
        print(f"setup + commits: {time.perf_counter() - t0:.1f} s")
    _print(figures)
    single = [f.label.split()[0] for f in figures if f.written[1].metadata_files == 1]
    print(f"v4 commits writing one metadata file besides the JSON: {len(single)} of "
          f"{len(figures)} {single}")
    return figures


def test_bench_v4_commits() -> None:
    run()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--small", type=int, default=1_000, help="files of table A")
    parser.add_argument("--manifests", type=int, default=10, help="appends building table B")
    parser.add_argument("--per-manifest", type=int, default=1_000, help="files per append")
    args = parser.parse_args(argv)
    run(args.small, args.manifests, args.per_manifest)


if __name__ == "__main__":
    main()
