"""Table.changes (the changelog) and SnapshotDiff.rows (its net) on tables icenb writes.

Every changelog is checked against full reads: the net of each snapshot's changes equals the
difference of its parent's rows and its own (so carry-overs cancel and nothing is missed), and
the net of a range equals the difference of its ends. The rules of update pairing, range
resolution and the columns are tested case by case; a seeded generator runs random sequences of
operations (appends, deletes and updates in both modes, upserts, deletes by key, overwrites,
rollbacks) on v1-v4 tables. Java agreement: tests/table/explore/test_changelog_java.py.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import icenb
from icenb.errors import NoSuchSnapshot, ValidationError
from icenb.spec.schema import Schema
from icenb.table import Table
from icenb.table.explore import row_match
from icenb.table.explore.changelog import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    Changelog,
)
from icenb.table.scan import Scan

DDL = "id long not null, p int, s string"
META = ("_change_type", "_change_ordinal", "_commit_snapshot_id", "_row_id")
MINUS = (DELETE, UPDATE_BEFORE)
PLUS = (INSERT, UPDATE_AFTER)
Row = tuple[Any, ...]


def rows(*specs: tuple[int, int, str | None]) -> pa.Table:
    ids, ps, ss = zip(*specs, strict=True) if specs else ((), (), ())
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array(ps, pa.int32()),
                     "s": pa.array(ss, pa.string())})


def span(lo: int, hi: int, s: str = "x") -> pa.Table:
    return rows(*((i, i % 3, f"{s}{i}") for i in range(lo, hi)))


def make(tmp_path: Path, version: int = 2, *, name: str = "db.t",
         partition_by: list[str] | None = None, **properties: str) -> Table:
    return icenb.warehouse(tmp_path).create_table(name, DDL, format_version=version,
                                                  partition_by=partition_by,
                                                  properties=properties or None)


def sid(t: Table) -> int:
    snap = t.current_snapshot
    assert snap is not None
    return snap.snapshot_id


def data_rows(table: pa.Table, columns: list[str]) -> Counter[Row]:
    return Counter(tuple(r[c] for c in columns) for r in table.to_pylist())


def state(t: Table, snapshot_id: int | None, columns: list[str],
          schema: Schema | None = None) -> Counter[Row]:
    """The rows of a snapshot (read with ``schema``, default its own), as a multiset."""
    if snapshot_id is None:
        return Counter()
    schema = t.metadata.schema_for_snapshot(snapshot_id) if schema is None else schema
    scan = Scan(t.io, t.metadata, snapshot_id, schema, columns=tuple(columns))
    return data_rows(scan.to_arrow(), columns)


def signed(cl: pa.Table, columns: list[str]) -> tuple[Counter[Row], Counter[Row]]:
    """(rows the changes remove, rows they add), each a multiset, before netting."""
    minus: Counter[Row] = Counter()
    plus: Counter[Row] = Counter()
    for r in cl.to_pylist():
        key = tuple(r[c] for c in columns)
        (minus if r["_change_type"] in MINUS else plus)[key] += 1
    return minus, plus


def check(t: Table, cl: Changelog) -> None:
    """Every snapshot's changes net to the difference of its parent's rows and its own; no
    DELETE and INSERT of one snapshot carry equal values; updates come in adjacent pairs; the
    range nets to the difference of its ends; row ids match the rows they stand for."""
    columns = [f.name for f in cl.schema.fields if f.name not in META]
    schema = Schema(*(f for f in cl.schema.fields if f.name not in META))
    table = cl.to_arrow()
    assert table.column_names[:len(columns)] == columns
    assert list(cl.counts.values()) and sum(cl.counts.values()) == cl.num_rows
    types = table.column("_change_type").to_pylist()
    ordinals = table.column("_change_ordinal").to_pylist()
    assert ordinals == sorted(ordinals)
    for i, kind in enumerate(types):
        if kind == UPDATE_BEFORE:
            assert types[i + 1] == UPDATE_AFTER and ordinals[i + 1] == ordinals[i]
            if cl.pairs_by_row_id:
                ids = table.column("_row_id")
                assert ids[i].as_py() == ids[i + 1].as_py() is not None
        if kind == UPDATE_AFTER:
            assert types[i - 1] == UPDATE_BEFORE
    with_ids = "_row_id" in table.column_names
    for ordinal, snap, counts in cl.counts_by_snapshot():
        step = table.filter(pa.compute.equal(table.column("_change_ordinal"), ordinal))
        assert set(step.column("_commit_snapshot_id").to_pylist()) <= {snap.snapshot_id}
        assert sum(counts.values()) == step.num_rows
        minus, plus = signed(step, columns)
        before = state(t, snap.parent_snapshot_id, columns, schema)
        after = state(t, snap.snapshot_id, columns, schema)
        assert plus - minus == after - before, (ordinal, snap.operation)
        assert minus - plus == before - after, (ordinal, snap.operation)
        deleted = signed(step.filter(pa.compute.equal(step.column("_change_type"), DELETE)),
                         columns)[0]
        inserted = signed(step.filter(pa.compute.equal(step.column("_change_type"), INSERT)),
                          columns)[1]
        assert not deleted & inserted, "a carry-over was not cancelled"
        if with_ids:  # each row id is the one the row had (deleted) or has (inserted)
            keyed = [*columns, "_row_id"]
            minus_ids, plus_ids = signed(step, keyed)
            assert not minus_ids - state(t, snap.parent_snapshot_id, keyed, schema)
            assert not plus_ids - state(t, snap.snapshot_id, keyed, schema)
    first = None if cl.start is None else cl.start.snapshot_id
    end = None if cl.end is None else cl.end.snapshot_id
    minus, plus = signed(table, columns)
    assert plus - minus == state(t, end, columns, schema) - state(t, first, columns, schema)
    assert minus - plus == state(t, first, columns, schema) - state(t, end, columns, schema)


def check_diff(t: Table, a: int, b: int) -> None:
    """diff(a, b).rows() is the multiset difference of full reads of a and b (b's schema)."""
    removed, added = t.diff(a, b).rows()
    columns = removed.column_names
    schema = t.metadata.schema_for_snapshot(b)
    before, after = state(t, a, columns, schema), state(t, b, columns, schema)
    assert data_rows(removed, columns) == before - after
    assert data_rows(added, columns) == after - before


def by_type(cl: Changelog, *columns: str) -> list[tuple[Any, ...]]:
    return [tuple(r[c] for c in (*columns, "_change_type", "_change_ordinal"))
            for r in cl.to_arrow().to_pylist()]


# --------------------------------------------------------------------------- operations


@pytest.mark.parametrize("version", [1, 2])
def test_appends_and_copy_on_write_changes(tmp_path: Path, version: int) -> None:
    t = make(tmp_path, version)
    t.append(span(0, 5))
    t.append(span(5, 8))
    t.delete("id = 1", mode="copy-on-write")  # rewrites the first file: 4 rows carried over
    t.update({"s": "u"}, "id = 6", mode="copy-on-write")
    t.overwrite(span(20, 22), "id >= 7")
    cl = t.changes(None)
    check(t, cl)
    assert [s.snapshot_id for s in cl.snapshots] == [s.snapshot_id for s in t.snapshots]
    assert "_row_id" not in cl.to_arrow().column_names
    assert by_type(cl, "id")[8:] == [
        (1, DELETE, 2), (6, DELETE, 3), (6, INSERT, 3), (7, DELETE, 4), (20, INSERT, 4),
        (21, INSERT, 4)]
    assert cl.counts == {DELETE: 3, UPDATE_BEFORE: 0, UPDATE_AFTER: 0, INSERT: 11}
    # with identifier columns the copy-on-write update is an update, as Java computes it
    cl = t.changes(t.snapshots[1].snapshot_id, identifier_columns="id")
    assert by_type(cl, "id", "s") == [
        (1, "x1", DELETE, 0), (6, "x6", UPDATE_BEFORE, 1), (6, "u", UPDATE_AFTER, 1),
        (7, "x7", DELETE, 2), (20, "x20", INSERT, 2), (21, "x21", INSERT, 2)]
    check(t, cl)


def test_v2_position_deletes_report_only_new_positions(tmp_path: Path) -> None:
    t = make(tmp_path, 2, partition_by=["p"])
    t.append(span(0, 12))
    s1 = sid(t)
    t.delete("id = 3 or id = 4", mode="merge-on-read")
    t.delete("id = 6 or id = 3", mode="merge-on-read")  # 3 is already gone
    t.update({"s": "u"}, "id = 7", mode="merge-on-read")
    cl = t.changes(s1)
    check(t, cl)
    assert by_type(cl, "id", "s") == [
        (3, "x3", DELETE, 0), (4, "x4", DELETE, 0), (6, "x6", DELETE, 1),
        (7, "x7", DELETE, 2), (7, "u", INSERT, 2)]
    check_diff(t, s1, sid(t))


def test_v3_deletion_vectors_and_row_id_pairing(tmp_path: Path) -> None:
    t = make(tmp_path, 3, **{"write.delete.mode": "merge-on-read"})
    t.append(span(0, 6))
    s1 = sid(t)
    t.delete("id = 1")
    t.delete("id = 2")  # a new DV replacing the first: only position 2 is new
    t.update({"s": "m"}, "id = 3", mode="merge-on-read")
    t.update({"s": "c"}, "id = 4", mode="copy-on-write")  # carries rows 0, 3, 5 over
    cl = t.changes(s1)
    check(t, cl)
    assert cl.pairs_by_row_id and cl.to_arrow().column_names[-1] == "_row_id"
    assert by_type(cl, "id", "s", "_row_id") == [
        (1, "x1", 1, DELETE, 0), (2, "x2", 2, DELETE, 1),
        (3, "x3", 3, UPDATE_BEFORE, 2), (3, "m", 3, UPDATE_AFTER, 2),
        (4, "x4", 4, UPDATE_BEFORE, 3), (4, "c", 4, UPDATE_AFTER, 3)]
    # identifier_columns=() pairs nothing; identifier columns pair as Java does
    plain = t.changes(s1, identifier_columns=())
    assert [r[3] for r in by_type(plain, "id", "s", "_row_id")] == [
        DELETE, DELETE, DELETE, INSERT, DELETE, INSERT]
    check(t, plain)
    keyed = t.changes(s1, identifier_columns=["id"])
    assert by_type(keyed, "id", "s") == [r[:2] + r[3:] for r in by_type(cl, "id", "s",
                                                                           "_row_id")]
    check_diff(t, s1, sid(t))


def test_upsert_and_delete_by_key(tmp_path: Path) -> None:
    t = make(tmp_path, 2, partition_by=["bucket(2, id)"])
    t.append(span(0, 6))
    s1 = sid(t)
    t.upsert(rows((1, 1, "new"), (9, 0, "ins")), on="id")
    t.upsert(rows((1, 1, "newer")), on="id")  # the equality delete hits the upserted row only
    t.delete_by_key(rows((2, 2, None), (42, 0, None)).select(["id"]), on="id")
    cl = t.changes(s1, identifier_columns="id")
    check(t, cl)
    assert by_type(cl, "id", "s") == [
        (1, "x1", UPDATE_BEFORE, 0), (1, "new", UPDATE_AFTER, 0), (9, "ins", INSERT, 0),
        (1, "new", UPDATE_BEFORE, 1), (1, "newer", UPDATE_AFTER, 1), (2, "x2", DELETE, 2)]
    assert by_type(t.changes(s1), "id")[:2] == [(1, DELETE, 0), (1, INSERT, 0)]
    check_diff(t, s1, sid(t))
    check_diff(t, sid(t), s1)


def test_dynamic_overwrite_rollback_and_branches(tmp_path: Path) -> None:
    t = make(tmp_path, 2, partition_by=["p"])
    t.append(span(0, 9))
    base = sid(t)
    t.create_tag("base")
    t.dynamic_partition_overwrite(rows((0, 0, "x0"), (30, 0, "o")))  # p=0 replaced
    kept = sid(t)
    t.append(span(40, 42))
    t.rollback_to(kept)
    t.create_branch("dev")
    t.append(span(50, 51), branch="dev")
    cl = t.changes("base")
    check(t, cl)
    assert [s.snapshot_id for s in cl.snapshots] == [kept]
    assert sorted(by_type(cl, "id")) == [(3, DELETE, 0), (6, DELETE, 0), (30, INSERT, 0)]
    dev = t.changes(base, "dev")
    check(t, dev)
    assert by_type(dev, "id")[-1] == (50, INSERT, 1)
    check_diff(t, t.metadata.refs["dev"].snapshot_id, sid(t))  # across branches


def test_range_resolution(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    empty = t.changes(None)
    assert empty.num_rows == 0 and empty.end is None and not empty.snapshots
    t.append(span(0, 2))
    s1 = sid(t)
    t.append(span(2, 3))
    t.append(span(3, 4))
    s3 = sid(t)
    log = t.metadata.snapshot_log
    # a time picks the snapshot current then (start exclusive); before the first: everything
    at_s1 = dt.datetime.fromtimestamp(log[0].timestamp_ms / 1000, dt.timezone.utc)
    assert [s.snapshot_id for s in t.changes(at_s1).snapshots] == \
        [s.snapshot_id for s in t.changes(s1).snapshots]
    assert t.changes("2000-01-01T00:00:00").num_rows == 4
    assert t.changes(s1, s1).num_rows == 0
    assert t.changes(s3).num_rows == 0
    assert by_type(t.changes(s1, t.snapshots[1].snapshot_id), "id") == [(2, INSERT, 0)]
    # the start must be an ancestor of the end
    with pytest.raises(ValidationError) as e:
        t.changes(s3, s1)
    assert e.value.value == s3 and str(s3) in str(e.value)
    t.rollback_to(s1)
    with pytest.raises(ValidationError):
        t.changes(s3)
    with pytest.raises(NoSuchSnapshot):
        t.changes(123)
    with pytest.raises(NoSuchSnapshot):
        t.changes("no-such-ref")
    with pytest.raises(NoSuchSnapshot):
        t.changes(None, "1999-01-01")
    with pytest.raises(ValidationError):
        t.changes(None, identifier_columns=["nope"])
    with pytest.raises(ValidationError):
        t.changes(None, identifier_columns=["id", "id"])


def test_a_time_start_follows_the_ends_line_of_history(tmp_path: Path) -> None:
    """As Java's ``start-timestamp``: the changes committed after the time on ``end``'s line,
    even when the snapshot current at that time was later rolled back."""
    t = make(tmp_path, 2)
    t.append(span(0, 2))
    s1 = sid(t)
    t.append(span(2, 3))  # rolled back below
    s2 = t.snapshot(sid(t))
    mid = dt.datetime.fromtimestamp((s2.timestamp_ms + 1) / 1000, dt.timezone.utc)
    t.rollback_to(s1)
    t.append(span(3, 4))
    changes = t.changes(mid)
    assert changes.start is not None and changes.start.snapshot_id == s1
    assert by_type(changes, "id") == [(3, INSERT, 0)]
    assert t.changes(mid.isoformat()).num_rows == 1
    with pytest.raises(ValidationError) as e:
        t.changes(None, identifier_columns=123)  # type: ignore[arg-type]
    assert e.value.field == "identifier_columns"
    with pytest.raises(ValidationError) as e:
        t.changes(1.5)  # type: ignore[arg-type]
    assert e.value.field == "start"


def test_expired_history_starts_after_the_oldest_ancestor_left(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    for lo in (0, 3, 6, 9):
        t.append(span(lo, lo + 3))
    t.delete("id = 4", mode="copy-on-write")
    before = t.changes(None)
    oldest = t.snapshots[2]
    t.expire_snapshots(snapshot_ids=[s.snapshot_id for s in t.snapshots[:2]])
    after = t.changes(None)
    assert after.start is not None and after.start.snapshot_id == oldest.snapshot_id
    assert [s.snapshot_id for s in after.snapshots] == \
        [s.snapshot_id for s in before.snapshots[3:]]
    kept = [r for r in by_type(before, "id") if r[2] >= 3]
    assert by_type(after, "id") == [(i, kind, ordinal - 3) for i, kind, ordinal in kept]
    check(t, after)
    assert repr(after).startswith(f"Changelog({oldest.snapshot_id} -> ")


def test_identifier_pairing_follows_java(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    t.append(rows((1, 0, "a"), (1, 0, "b"), (2, 0, "c")))
    s1 = sid(t)
    # two rows with id 1 deleted in one snapshot: Java refuses to compute updates
    t.overwrite(rows((1, 0, "z")), "id = 1")
    with pytest.raises(ValidationError) as e:
        t.changes(s1, identifier_columns="id")
    assert e.value.value == {"id": 1}
    assert t.changes(s1).counts[DELETE] == 2
    # one DELETE and two INSERTs with its key: the first pairs, the other stays an INSERT
    s2 = sid(t)
    t.overwrite(rows((1, 0, "y"), (1, 0, "w")), "id = 1")
    assert by_type(t.changes(s2, identifier_columns="id"), "id", "s") == [
        (1, "z", UPDATE_BEFORE, 0), (1, "y", UPDATE_AFTER, 0), (1, "w", INSERT, 0)]
    # duplicate rows appended (no delete) are plain INSERTs
    s3 = sid(t)
    t.append(rows((7, 0, "d"), (7, 0, "d")))
    assert by_type(t.changes(s3, identifier_columns="id"), "id") == [(7, INSERT, 0),
                                                                     (7, INSERT, 0)]


def test_changes_follow_the_schema_of_the_end(tmp_path: Path) -> None:
    t = make(tmp_path, 2)
    t.append(span(0, 2))
    s1 = sid(t)
    with t.update_schema() as u:
        u.add_column("extra", "double")
        u.rename_column("s", "label")
    t.append(pa.table({"id": pa.array([5], pa.int64()), "p": pa.array([1], pa.int32()),
                       "label": ["five"], "extra": [0.5]}))
    t.delete("id = 0", mode="copy-on-write")
    cl = t.changes(None)
    assert cl.to_arrow().column_names[:4] == ["id", "p", "label", "extra"]
    assert by_type(cl, "id", "label", "extra") == [
        (0, "x0", None, INSERT, 0), (1, "x1", None, INSERT, 0), (5, "five", 0.5, INSERT, 1),
        (0, "x0", None, DELETE, 2)]
    # a snapshot id end reads with that snapshot's schema, as t.at does
    assert t.changes(None, s1).to_arrow().column_names[:3] == ["id", "p", "s"]
    check(t, cl)


def test_changelog_outputs_and_reprs_do_no_io(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    t = make(tmp_path, 3)
    t.append(span(0, 30))
    t.update({"s": "u"}, "id < 25", mode="merge-on-read")
    cl = t.changes(None)
    arrow = cl.to_arrow()
    assert [f.name for f in cl.schema.fields] == arrow.column_names
    assert arrow.schema.field("_change_type").metadata[b"PARQUET:field_id"] == b"2147483543"
    assert arrow.schema.field("_change_ordinal").type == pa.int32()
    assert not arrow.schema.field("_change_type").nullable
    frame = cl.to_pandas()
    assert list(frame.columns) == arrow.column_names and len(frame) == cl.num_rows == 80

    def no_io(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a repr read a file")

    monkeypatch.setattr(type(t.io), "new_input", no_io)
    text = repr(cl)
    assert text.startswith("Changelog(first -> ") and "25 UPDATE_BEFORE" in text
    bundle = cl._repr_mimebundle_()  # type: ignore[attr-defined]
    html = bundle["text/html"]
    assert "UPDATE_AFTER" in html and "25" in html and len(html) < 200_000
    assert "… 60 more rows …" in bundle["text/plain"]  # 80 rows, display_max_rows shown


# --------------------------------------------------------------------------- random sequences


def _apply(t: Table, rng: random.Random, next_id: list[int]) -> str:
    """One random operation on ``t``; what it was."""
    v = t.format_version
    live = t.scan(columns=["id"]).to_arrow().column("id").to_pylist()
    ops: list[tuple[str, Callable[[], Any]]] = []

    def pick() -> int:
        return rng.choice(live) if live else 0

    def fresh(n: int) -> pa.Table:
        start = next_id[0]
        next_id[0] += n
        return rows(*((i, rng.randint(0, 2), f"v{i}") for i in range(start, start + n)))

    ops.append(("append", lambda: t.append(fresh(rng.randint(1, 4)))))
    ops.append(("cow delete", lambda: t.delete(f"id = {pick()}", mode="copy-on-write")))
    ops.append(("cow update", lambda: t.update({"s": f"c{rng.randint(0, 9)}"},
                                               f"id <= {pick()}", mode="copy-on-write")))
    ops.append(("overwrite", lambda: t.overwrite(fresh(1), f"p = {rng.randint(0, 2)}")))
    ops.append(("dynamic", lambda: t.dynamic_partition_overwrite(fresh(2))))
    ops.append(("duplicate", lambda: t.append(
        t.scan(f"id = {pick()}", columns=["id", "p", "s"]).to_arrow())))
    if v >= 2:
        ops.append(("mor delete", lambda: t.delete(f"id = {pick()} or id = {pick()}",
                                                   mode="merge-on-read")))
        ops.append(("mor update", lambda: t.update({"s": f"m{rng.randint(0, 9)}"},
                                                   f"id >= {pick()}", mode="merge-on-read")))
        ops.append(("upsert", lambda: t.upsert(rows((pick(), 1, f"u{rng.randint(0, 9)}")),
                                               on="id")))
        ops.append(("delete by key", lambda: t.delete_by_key(
            pa.table({"id": pa.array([pick()], pa.int64())}), on="id")))
    ancestors = [s.snapshot_id for s in t.metadata.ancestors(sid(t))] if t.current_snapshot \
        else []
    if len(ancestors) > 2 and rng.random() < 0.3:
        ops.append(("rollback", lambda: t.rollback_to(rng.choice(ancestors[1:3]))))
    name, op = rng.choice(ops)
    try:
        op()
    except ValidationError:
        return f"{name} (refused)"  # e.g. an upsert of a key held twice
    return name


@pytest.mark.parametrize(("version", "seed"), [(1, 1), (2, 2), (2, 3), (3, 4), (3, 5), (4, 6)])
def test_random_sequences_net_to_the_snapshots_rows(tmp_path: Path, version: int, seed: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if seed % 3 == 0:  # rows cancelled by the large-table path (hashes checked pair by pair)
        monkeypatch.setattr(row_match, "SMALL", 0)
    rng = random.Random(seed)
    t = make(tmp_path, version, partition_by=["bucket(2, id)"] if seed % 2 else None)
    t.append(span(0, 6))
    next_id = [100]
    done = [_apply(t, rng, next_id) for _ in range(14)]
    line = [s.snapshot_id for s in t.metadata.ancestors(sid(t))][::-1]
    for ids in (None, ()):
        cl = t.changes(None, identifier_columns=ids)
        check(t, cl)
    for _ in range(3):
        a, b = sorted(rng.sample(range(len(line)), 2))
        check(t, t.changes(line[a], line[b]))
        check_diff(t, line[a], line[b])
    others = [s.snapshot_id for s in t.snapshots]
    check_diff(t, rng.choice(others), rng.choice(others))  # any two, ancestors or not
    assert done


def test_changelog_reads_files_in_parallel(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import icenb.table.explore.changelog as changelog

    t = make(tmp_path, 2, partition_by=["p"])
    t.append(span(0, 60))
    s1 = sid(t)
    t.update({"s": "u"}, "true", mode="copy-on-write")  # rewrites the three partitions
    seen: set[int] = set()
    read = changelog.read_task

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.add(threading.get_ident())
        return read(*args, **kwargs)

    monkeypatch.setattr(changelog, "read_task", spy)
    monkeypatch.setattr(changelog, "MAX_WORKERS", 4)
    cl = t.changes(s1, identifier_columns="id")
    assert cl.counts[UPDATE_AFTER] == 60
    assert threading.get_ident() not in seen
    np.testing.assert_array_equal(
        np.asarray(cl.to_arrow().column("_change_ordinal")), np.zeros(120, np.int32))
