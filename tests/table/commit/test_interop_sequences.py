"""Scripted operation sequences on v1, v2 and v3 tables, read by Iceberg Java 1.10 and PyIceberg.

One warehouse holds four tables: ``db.v1``, ``db.v2`` and ``db.v3`` go through a script mixing
every authoring operation of a format version (appends of pandas, Arrow and lists of dicts with
manifest merging on, schema evolution, partition evolution, sort order, copy-on-write and
merge-on-read deletes, upsert, delete by key, update, overwrite with a filter, dynamic
overwrite, a branch written to, a tag, a cherry-pick, a rollback and, last, snapshot expiry);
``db.upgraded`` is written as v1, upgraded to v2, then to v3, with row-level changes in between.

One JVM (tests/reference/java_session.py) answers two batches: before expiry, the rows of every
snapshot and every ref and the metadata tables of several snapshots; after expiry, the same for
what is left, and it must refuse the expired snapshots. PyIceberg 0.12's SqlCatalog lists and
loads the tables and reads every snapshot except those with equality deletes, which 0.12 cannot
read (it raises "PyIceberg does not yet support equality deletes").
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import icenb
from icenb.spec.manifest import FileContent
from icenb.table import Table
from icenb.table.warehouse import Warehouse
from tests.reference.java_read import normalize
from tests.reference_fixtures import JAVA_TIMEOUT_S, REFERENCE_DIR, reference_python
from tests.table.commit.test_append import plain
from tests.table.explore.test_inspect import compare

DDL = "id long not null, s string, v float, d date, amount decimal(9, 2), n int"
PARTITION_BY = ["month(d)"]
PROPERTIES = {"commit.manifest.min-count-to-merge": "3",
              "commit.manifest.target-size-bytes": "1048576"}
# Metadata tables compared for the current snapshot and a few earlier ones.
SNAPSHOT_TABLES = ("files", "entries", "manifests", "partitions")
TABLE_WIDE = ("snapshots", "refs")
Row = dict[str, Any]
# A read: (table, "snapshot" / "ref" / metadata table / "expired", snapshot id or ref name).
Key = tuple[str, str, Any]


def rows(ids: Sequence[int], tag: str = "r", *, extra: bool = False,
         dropped_v: bool = False) -> list[Row]:
    """Rows with these ids: every column set, nulls sprinkled in."""
    out = []
    for i in ids:
        r: Row = {"id": i, "s" if not extra else "name": None if i % 7 == 6 else f"{tag}{i}",
                  "v": i / 2, "d": dt.date(2024, 1 + i % 3, 1 + i % 28),
                  "amount": Decimal(f"{i}.{i % 100:02d}"), "n": i * 10}
        if extra:
            r["extra"] = None if i % 5 == 0 else f"x{i}"
        if dropped_v:
            del r["v"]
        out.append(r)
    return out


def normalized(table: pa.Table) -> list[list[Any]]:
    """Rows as java_read.py normalizes Spark's, in a canonical order."""
    types = [f.type for f in table.schema]
    out = [[normalize(plain(v, types[i])) for i, v in enumerate(row.values())]
           for row in table.to_pylist()]
    return sorted(out, key=lambda r: json.dumps(r))


# --------------------------------------------------------------------------- the Java session


class JavaSession:
    """tests/reference/java_session.py: one JVM, started at once, answering batches."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [str(reference_python()), str(REFERENCE_DIR / "java_session.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8")
        self._ready = False

    def _line(self) -> Any:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            _, err = self._proc.communicate(timeout=JAVA_TIMEOUT_S)
            raise RuntimeError("java_session.py ended: " + "\n".join(err.splitlines()[-30:]))
        return json.loads(line)

    def ask(self, requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Java's answers to a batch of java_read_written.py requests."""
        assert self._proc.stdin is not None
        if not self._ready:
            assert self._line() == {"ready": True}
            self._ready = True
        self._proc.stdin.write(json.dumps(list(requests)) + "\n")
        self._proc.stdin.flush()
        results: list[dict[str, Any]] = self._line()
        return results

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()


# --------------------------------------------------------------------------- the scripts


@dataclass
class Script:
    """A table's sequence: each committed step's label and snapshot (None: no snapshot)."""

    name: str
    format_version: int
    steps: list[tuple[str, int | None]] = field(default_factory=list)
    expired: tuple[int, ...] = ()
    #: Before expiry: the snapshot operations and (content, format) of every delete file.
    operations: set[str] = field(default_factory=set)
    delete_files: set[tuple[int, str]] = field(default_factory=set)
    #: Manifests of the third append's snapshot (merging on: fewer than the three appends').
    manifests_after_third_append: int = 0

    def did(self, label: str, snap: Any) -> Any:
        sid = getattr(snap, "snapshot_id", None)
        self.steps.append((label, sid))
        return snap


def script_table(wh: Warehouse, name: str, fv: int) -> tuple[Table, Script]:
    """Run the scripted sequence on a new table of format version ``fv`` (all but expiry)."""
    sc = Script(name, fv)
    t = wh.create_table(name, DDL, partition_by=PARTITION_BY, format_version=fv,
                        properties=PROPERTIES)
    arrow_schema = t.scan().to_arrow().schema
    sc.did("append dicts", t.append(rows(range(0, 10))))
    sc.did("append arrow", t.append(pa.Table.from_pylist(rows(range(10, 20)),
                                                         schema=arrow_schema)))
    sc.did("append pandas (merges manifests)",
           t.append(pd.DataFrame(rows(range(20, 30))).astype({"v": "float32", "n": "int32"})))
    sc.manifests_after_third_append = t.inspect.manifests().num_rows
    with t.update_schema() as u:
        u.rename_column("s", "name")
        u.update_column("v", "double")
        u.update_column("n", "long")
        u.update_column("amount", "decimal(12, 2)")
        if fv >= 3:
            u.add_column("extra", "string", initial_default="dflt")
        else:
            u.add_column("extra", "string")
    sc.did("schema: rename, widen, add", None)
    sc.did("append after schema change", t.append(rows(range(30, 40), extra=True)))
    with t.update_spec() as s:
        s.add_field("bucket(4, id)")
    sc.did("partition evolution", None)
    t.replace_sort_order("id desc")
    sc.did("sort order", None)
    sc.did("append with new spec, sorted", t.append(rows(range(40, 50), extra=True)))
    sc.did("copy-on-write delete", t.delete("id < 5", mode="copy-on-write"))
    if fv >= 2:
        sc.did("merge-on-read delete",
               t.delete("id >= 12 and id < 15", mode="merge-on-read"))
        sc.did("merge-on-read delete again (same files)",
               t.delete("id = 16 or id = 33", mode="merge-on-read"))
        sc.did("upsert", t.upsert(rows([20, 21, 22, 100], "up", extra=True), on=["id", "d"]))
        sc.did("delete by key", t.delete_by_key([{"id": 31, "d": dt.date(2024, 2, 4)}],
                                                  on=["id", "d"]))
        sc.did("update", t.update({"name": "upd", "n": 7}, "id >= 40 and id <= 42"))
    sc.did("overwrite with filter",
           t.overwrite(rows([200, 201, 202], "ow", extra=True), "id >= 45"))
    sc.did("dynamic partition overwrite",
           t.dynamic_partition_overwrite(rows([300, 301], "dyn", extra=True)))
    with t.update_schema() as u:
        u.delete_column("v")
    sc.did("schema: drop column", None)
    tagged = t.current_snapshot
    assert tagged is not None
    t.create_tag("t1")
    sc.did("tag", None)
    t.create_branch("dev")
    sc.did("branch", None)
    dev1 = sc.did("append to branch",
                  t.append(rows([400, 401], "dev", extra=True, dropped_v=True), branch="dev"))
    sc.did("delete on branch", t.delete("id = 6", branch="dev"))
    sc.did("append to main", t.append(rows([500, 501], "main", extra=True, dropped_v=True)))
    sc.did("cherry-pick the branch's append", t.cherry_pick(dev1.snapshot_id))
    sc.did("rollback", t.rollback_to(tagged.snapshot_id))
    sc.did("append after rollback",
           t.append(rows([600, 601, 602], "after", extra=True, dropped_v=True)))
    return t, sc


def upgrade_table(wh: Warehouse, name: str) -> tuple[Table, Script]:
    """v1 -> v2 -> v3 with appends and row-level changes in between."""
    sc = Script(name, 1)
    t = wh.create_table(name, DDL, partition_by=PARTITION_BY, format_version=1,
                        properties=PROPERTIES)
    sc.did("v1 append", t.append(rows(range(0, 10))))
    sc.did("v1 delete", t.delete("id = 3"))
    assert t.upgrade(2)
    sc.did("upgrade to v2", None)
    sc.did("v2 append", t.append(rows(range(10, 20))))
    sc.did("v2 merge-on-read delete", t.delete("id = 4 or id = 12", mode="merge-on-read"))
    sc.did("v2 upsert", t.upsert(rows([5, 13], "up"), on=["id", "d"]))
    assert t.upgrade(3)
    sc.did("upgrade to v3", None)
    sc.did("v3 merge-on-read delete", t.delete("id = 6 or id = 14", mode="merge-on-read"))
    sc.did("v3 update", t.update({"s": "upd"}, "id = 7 or id = 15"))
    sc.did("v3 append", t.append(rows(range(20, 25))))
    sc.format_version = 3
    return t, sc


# --------------------------------------------------------------------------- one world


@dataclass
class Reads:
    """What icenb, Java and PyIceberg read at one moment (keys: table, what, which)."""

    icenb_rows: dict[Key, pa.Table] = field(default_factory=dict)
    icenb_tables: dict[Key, pa.Table] = field(default_factory=dict)
    java: dict[Key, dict[str, Any]] = field(default_factory=dict)
    pyiceberg: dict[Key, pa.Table | BaseException] = field(
        default_factory=dict)
    #: (table, snapshot id) of the snapshots whose scans apply equality deletes.
    equality: set[tuple[str, int]] = field(default_factory=set)
    #: (table, snapshot id) of the snapshots whose scans apply deletion vectors.
    dvs: set[tuple[str, int]] = field(default_factory=set)
    java_seconds: float = 0.0


@dataclass
class World:
    root: Path
    warehouse: Warehouse
    scripts: dict[str, Script]
    before: Reads
    after: Reads
    timings: dict[str, float]


def _snapshots_with(t: Table, content: FileContent, file_format: str | None = None) -> set[int]:
    """Snapshots whose scans apply delete files of this content (and format)."""
    out = set()
    for snap in t.snapshots:
        files = t.inspect.delete_files(snap.snapshot_id)
        for c, f in zip(files.column("content").to_pylist(),
                        files.column("file_format").to_pylist(), strict=True):
            if c == content.value and file_format in (None, f):
                out.add(snap.snapshot_id)
    return out


def _read_all(wh: Warehouse, names: Sequence[str], java: JavaSession,
              earlier: Callable[[Table], list[int]], expired: Sequence[tuple[str, int]],
              pyiceberg_catalog: Any) -> Reads:
    """Every snapshot and ref by icenb, Java and PyIceberg; metadata tables of some snapshots."""
    reads = Reads()
    keys: list[Key] = []
    requests: list[dict[str, Any]] = []
    for name in names:
        t = wh.table(name)
        location = t.metadata_location
        reads.equality |= {(name, sid)
                           for sid in _snapshots_with(t, FileContent.EQUALITY_DELETES)}
        reads.dvs |= {(name, sid)
                      for sid in _snapshots_with(t, FileContent.POSITION_DELETES, "PUFFIN")}
        for snap in t.snapshots:
            key: Key = (name, "snapshot", snap.snapshot_id)
            reads.icenb_rows[key] = t.at(snap.snapshot_id).to_arrow()
            keys.append(key)
            requests.append({"metadata_file": location, "snapshot_id": snap.snapshot_id})
        for ref_name, ref in sorted(t.refs.items()):
            key = (name, "ref", ref_name)
            reads.icenb_rows[key] = t.at(ref_name).to_arrow()
            keys.append(key)
            requests.append({"metadata_file": location,
                             ("branch" if ref.is_branch else "tag"): ref_name})
        for kind in TABLE_WIDE:
            key = (name, kind, None)
            reads.icenb_tables[key] = getattr(t.inspect, kind)()
            keys.append(key)
            requests.append({"location": location, "table": kind})
        for sid in earlier(t):
            for kind in SNAPSHOT_TABLES:
                key = (name, kind, sid)
                reads.icenb_tables[key] = getattr(t.inspect, kind)(sid)
                keys.append(key)
                requests.append({"location": location, "table": kind, "snapshot_id": sid})
    for name, sid in expired:
        keys.append((name, "expired", sid))
        requests.append({"metadata_file": wh.table(name).metadata_location, "snapshot_id": sid})
    started = time.perf_counter()
    reads.java = dict(zip(keys, java.ask(requests), strict=True))
    reads.java_seconds = time.perf_counter() - started
    for name in names:
        theirs = pyiceberg_catalog.load_table(name)
        for snap in theirs.snapshots():
            try:
                got: pa.Table | BaseException = theirs.scan(
                    snapshot_id=snap.snapshot_id).to_arrow()
            except (NotImplementedError, ValueError) as e:
                got = e
            reads.pyiceberg[(name, "snapshot", snap.snapshot_id)] = got
    return reads


def _some_snapshots(t: Table) -> list[int]:
    """The current snapshot, the first one and two in the middle."""
    ids = [s.snapshot_id for s in t.snapshots]
    current = t.current_snapshot
    picked = {ids[0], ids[len(ids) // 3], ids[2 * len(ids) // 3]}
    if current is not None:
        picked.add(current.snapshot_id)
    return sorted(picked, key=ids.index)


@pytest.fixture(scope="module")
def java_session() -> Iterator[JavaSession]:
    """The module's one JVM, started before the tables are written (its start overlaps)."""
    session = JavaSession()
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, java_session: JavaSession) -> World:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    timings: dict[str, float] = {}
    started = time.perf_counter()
    root = tmp_path_factory.mktemp("sequences")
    wh = icenb.warehouse(root)
    scripts: dict[str, Script] = {}
    for fv in (1, 2, 3):
        _, scripts[f"db.v{fv}"] = script_table(wh, f"db.v{fv}", fv)
    _, scripts["db.upgraded"] = upgrade_table(wh, "db.upgraded")
    timings["write"] = time.perf_counter() - started
    names = sorted(scripts)
    catalog = PyIcebergSqlCatalog("default", uri=f"sqlite:///{root}/catalog.db",
                                  warehouse=root.as_uri())
    started = time.perf_counter()
    before = _read_all(wh, names, java_session, _some_snapshots, [], catalog)
    timings["first batch"] = time.perf_counter() - started
    for name, sc in scripts.items():
        t = wh.table(name)
        sc.operations = {s.summary.operation for s in t.snapshots if s.summary is not None}
        deletes = t.inspect.all_delete_files()
        sc.delete_files = set(zip(deletes.column("content").to_pylist(),
                                  deletes.column("file_format").to_pylist(), strict=True))
    # Last step: expire everything older than now but the last two of main (refs keep theirs).
    started = time.perf_counter()
    for name in ("db.v1", "db.v2", "db.v3"):
        t = wh.table(name)
        result = t.expire_snapshots(older_than=int(time.time() * 1000) + 1, retain_last=2)
        assert result.committed and result.expired_snapshot_ids
        scripts[name].expired = result.expired_snapshot_ids
    timings["expire"] = time.perf_counter() - started
    started = time.perf_counter()
    expired = [(n, sid) for n in names for sid in scripts[n].expired]
    after = _read_all(wh, names, java_session,
                      lambda t: [] if t.current_snapshot is None
                      else [t.current_snapshot.snapshot_id], expired, catalog)
    timings["second batch"] = time.perf_counter() - started
    return World(root, wh, scripts, before, after, timings)


# --------------------------------------------------------------------------- the checks


def _which(world: World, phase: str) -> Reads:
    return world.before if phase == "before expiry" else world.after


PHASES = ["before expiry", "after expiry"]


def test_scripts_cover_every_operation(world: World) -> None:
    for name, sc in world.scripts.items():
        t = world.warehouse.table(name)
        assert t.format_version == sc.format_version
        assert sc.operations == {"append", "overwrite", "delete"}, name
    # Position deletes (v2, and v2 before the upgrade), DVs (v3), equality deletes (v2+).
    pos, eq = FileContent.POSITION_DELETES.value, FileContent.EQUALITY_DELETES.value
    assert world.scripts["db.v1"].delete_files == set()
    assert world.scripts["db.v2"].delete_files == {(pos, "PARQUET"), (eq, "PARQUET")}
    assert world.scripts["db.v3"].delete_files == {(pos, "PUFFIN"), (eq, "PARQUET")}
    assert world.scripts["db.upgraded"].delete_files == {(pos, "PARQUET"), (pos, "PUFFIN"),
                                                         (eq, "PARQUET")}
    v3 = world.warehouse.table("db.v3")
    assert set(v3.refs) == {"main", "dev", "t1"}
    assert v3.schema.find_field("extra").initial_default == "dflt"
    # Manifest merging kicked in: the third append's snapshot has fewer manifests than appends.
    assert [world.scripts[f"db.v{fv}"].manifests_after_third_append for fv in (1, 2, 3)] == [
        1, 1, 1]


@pytest.mark.parametrize("phase", PHASES)
def test_java_reads_every_snapshot_and_ref_as_icenb(world: World, phase: str) -> None:
    reads = _which(world, phase)
    problems = []
    compared = 0
    for key, ours in reads.icenb_rows.items():
        theirs = reads.java[key]
        if not theirs["ok"]:
            problems.append(f"{key}: Java failed: {theirs['error']}")
            continue
        compared += 1
        if theirs["columns"] != ours.column_names:
            problems.append(f"{key}: columns {theirs['columns']} vs {ours.column_names}")
        elif sorted(theirs["rows"], key=json.dumps) != normalized(ours):
            problems.append(f"{key}: rows differ ({len(theirs['rows'])} vs {ours.num_rows})")
    assert not problems, "\n".join(problems)
    assert compared >= (60 if phase == "before expiry" else 12)


@pytest.mark.parametrize("phase", PHASES)
def test_java_metadata_tables_agree_with_inspect(world: World, phase: str) -> None:
    reads = _which(world, phase)
    problems: list[str] = []
    for key, ours in reads.icenb_tables.items():
        problems.extend(f"{key}: {p}" for p in compare(ours, reads.java[key]))
    assert not problems, "\n".join(problems)
    kinds = {k for _, k, _ in reads.icenb_tables}
    assert kinds == {*SNAPSHOT_TABLES, *TABLE_WIDE}


def test_java_refuses_the_expired_snapshots(world: World) -> None:
    expired = [(k, r) for k, r in world.after.java.items() if k[1] == "expired"]
    assert len(expired) == sum(len(sc.expired) for sc in world.scripts.values()) > 0
    for key, result in expired:
        assert not result["ok"] and "Cannot find snapshot with ID" in result["error"], (key,
                                                                                      result)
    for name, sc in world.scripts.items():
        t = world.warehouse.table(name)
        remaining = {s.snapshot_id for s in t.snapshots}
        assert not remaining & set(sc.expired)
        # Every ref still reads what it read before expiry.
        for ref_name in t.refs:
            key = (name, "ref", ref_name)
            assert normalized(world.after.icenb_rows[key]) == normalized(
                world.before.icenb_rows[key]), key


@pytest.mark.parametrize("phase", PHASES)
def test_pyiceberg_reads_every_snapshot_but_equality_deletes(world: World, phase: str) -> None:
    reads = _which(world, phase)
    problems = []
    refused = 0
    for (n, kind, sid), got in reads.pyiceberg.items():
        ours = reads.icenb_rows[(n, kind, sid)]
        if isinstance(got, BaseException):
            refused += 1
            if "does not yet support equality deletes" not in str(got):
                problems.append(f"{n}@{sid}: {got!r}")
            if (n, sid) not in reads.equality:
                problems.append(f"{n}@{sid}: refused without equality deletes")
            continue
        if (n, sid) in reads.equality:
            problems.append(f"{n}@{sid}: read despite equality deletes")
        if normalized(got) != normalized(ours):
            problems.append(f"{n}@{sid}: rows differ ({got.num_rows} vs {ours.num_rows})")
    assert not problems, "\n".join(problems)
    assert refused > 0  # the v2/v3 upserts and deletes by key
    read_dvs = {k for k in reads.dvs if not isinstance(reads.pyiceberg[(k[0], "snapshot", k[1])],
                                                       BaseException)}
    # The two db.v3 merge-on-read deletes before its upsert (later snapshots of db.v3 and
    # every v3 snapshot of db.upgraded also apply equality deletes).
    assert len(read_dvs) == (2 if phase == "before expiry" else 0)


def test_pyiceberg_lists_and_loads_every_table(world: World) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    catalog = PyIcebergSqlCatalog("default", uri=f"sqlite:///{world.root}/catalog.db",
                                  warehouse=world.root.as_uri())
    assert sorted(".".join(i) for i in catalog.list_tables("db")) == sorted(world.scripts)
    for name in world.scripts:
        ours = world.warehouse.table(name)
        theirs = catalog.load_table(name)
        assert theirs.metadata_location == ours.metadata_location
        assert theirs.format_version == ours.format_version
        assert [s.snapshot_id for s in theirs.snapshots()] == [s.snapshot_id
                                                               for s in ours.snapshots]
        assert {n: r.snapshot_id for n, r in theirs.metadata.refs.items()} == {
            n: r.snapshot_id for n, r in ours.refs.items()}
        assert theirs.schema().schema_id == ours.schema.schema_id
