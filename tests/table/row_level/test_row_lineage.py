"""Row lineage through every rewrite (v3 spec: "Row lineage assignment"), v3 and v4.

The rules: a row a rewrite moves keeps its ``_row_id``; an unchanged row keeps its
``_last_updated_sequence_number``; a modified row gets the rewriting commit's sequence number;
new rows (appends, equality-delete upserts) get fresh ids that no row ever had. The model test
runs random sequences of every kind of rewrite and checks each snapshot against a model of the
rules; the other tests pin one operation each and what lands in the data files.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.manifest import DataFile
from icenb.spec.properties import MANIFEST_MIN_MERGE_COUNT, V4_COMPACTION_MIN_COUNT
from icenb.table import Table
from icenb.table.warehouse import Warehouse

LINEAGE = ("_row_id", "_last_updated_sequence_number")
DDL = "id long not null, part int, v string"


def lineage(t: Table) -> dict[int, tuple[str, int, int]]:
    """id -> (v, _row_id, _last_updated_sequence_number) of the table's live rows."""
    rows = t.scan(columns=["id", "v", *LINEAGE]).to_arrow().to_pylist()
    return {r["id"]: (r["v"], r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}


def seq(t: Table) -> int:
    snap = t.current_snapshot
    assert snap is not None
    return snap.sequence_number


def data_files(t: Table) -> list[DataFile]:
    return [task.data_file for task in t.scan().plan().tasks]


def local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return icenb.warehouse(tmp_path / "wh")


def four_rows(wh: Warehouse, name: str, fv: int, **kw: Any) -> Table:
    t = wh.create_table(name, DDL, format_version=fv, **kw)
    t.append([{"id": i, "part": 0, "v": c} for i, c in enumerate("abcd", 1)])
    t.append([{"id": i, "part": 1, "v": c} for i, c in ((5, "e"), (6, "f"))])
    return t


@pytest.mark.parametrize("fv", [3, 4])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_update_keeps_row_ids_and_bumps_only_modified_rows(wh: Warehouse, fv: int,
                                                          mode: str) -> None:
    t = four_rows(wh, "db.t", fv)
    before = lineage(t)
    assert [before[i][1:] for i in range(1, 7)] == [(0, 1), (1, 1), (2, 1), (3, 1), (4, 2), (5, 2)]
    t.update({"v": "B"}, "id = 2", mode=mode)
    after = lineage(t)
    assert after[2] == ("B", 1, seq(t))
    for i in (1, 3, 4, 5, 6):  # unchanged rows, also those copy-on-write moved
        assert after[i] == before[i]


@pytest.mark.parametrize("fv", [3, 4])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_delete_keeps_the_lineage_of_the_rows_left(wh: Warehouse, fv: int, mode: str) -> None:
    t = four_rows(wh, "db.t", fv)
    before = lineage(t)
    t.delete("id = 3", mode=mode)
    after = lineage(t)
    assert after == {i: v for i, v in before.items() if i != 3}


@pytest.mark.parametrize("fv", [3, 4])
def test_overwrite_by_filter_keeps_moved_rows_and_numbers_new_ones(wh: Warehouse,
                                                                  fv: int) -> None:
    t = four_rows(wh, "db.t", fv)
    before = lineage(t)
    next_id = t.metadata.next_row_id
    t.overwrite([{"id": 10, "part": 0, "v": "x"}], "id IN (1, 2)")
    after = lineage(t)
    for i in (3, 4, 5, 6):
        assert after[i] == before[i]
    assert after[10][0] == "x" and after[10][2] == seq(t)
    assert next_id is not None and after[10][1] >= next_id


@pytest.mark.parametrize("fv", [3, 4])
def test_dynamic_overwrite_and_upsert_add_new_rows(wh: Warehouse, fv: int) -> None:
    t = four_rows(wh, "db.t", fv, partition_by="part")
    before = lineage(t)
    t.dynamic_partition_overwrite([{"id": 5, "part": 1, "v": "E"}])
    after = lineage(t)
    assert {i: after[i] for i in range(1, 5)} == {i: before[i] for i in range(1, 5)}
    assert 6 not in after
    assert after[5][1] not in {r[1] for r in before.values()}  # replaced: a new row
    # an upsert is equality deletes + new rows: the key's row is a new row (spec)
    t.upsert([{"id": 2, "part": 0, "v": "U"}], on=["id", "part"])
    upserted = lineage(t)
    assert upserted[2][0] == "U" and upserted[2][2] == seq(t)
    assert upserted[2][1] not in {r[1] for r in after.values()}
    assert {i: upserted[i] for i in (1, 3, 4, 5)} == {i: after[i] for i in (1, 3, 4, 5)}


@pytest.mark.parametrize(("fv", "to"), [(1, 3), (2, 3), (1, 4), (2, 4)])
def test_upgraded_tables_assign_row_ids_to_older_rows_on_the_next_commit(
        wh: Warehouse, fv: int, to: int) -> None:
    t = four_rows(wh, "db.t", fv)
    t.upgrade(to)
    # "Row Lineage for Upgraded Tables": snapshots before the upgrade have no row ids
    assert {r[1] for r in lineage(t).values()} == {None}
    t.append([{"id": 7, "part": 1, "v": "g"}])
    first = lineage(t)
    ids = [r[1] for r in first.values()]
    assert None not in ids and len(set(ids)) == 7
    assert all(r[2] is not None for r in first.values())
    t.update({"v": "B"}, "id = 2")
    t.update({"v": "E"}, "id = 5", mode="merge-on-read")
    last = lineage(t)
    assert last[2][1:] == (first[2][1], seq(t) - 1)
    assert last[5][1:] == (first[5][1], seq(t))
    for i in (1, 3, 4, 6, 7):
        assert last[i] == first[i]


def test_rewritten_files_store_lineage_only_where_the_rules_need_it(wh: Warehouse) -> None:
    t = four_rows(wh, "db.t", 3)
    assert all(not set(LINEAGE) & set(pq.read_schema(local(f.file_path)).names)
               for f in data_files(t))  # new rows only: inherited
    t.update({"v": "B"}, "id = 2")
    added = [f for f in data_files(t) if f.record_count == 4]
    assert len(added) == 1
    stored = pq.read_table(local(added[0].file_path))
    by_id = dict(zip(stored["id"].to_pylist(),
                     zip(stored["_row_id"].to_pylist(),
                         stored["_last_updated_sequence_number"].to_pylist(), strict=True),
                     strict=True))
    # rule 1: ids copied; rule 3: unchanged rows copy theirs; rule 2: modified rows null
    assert by_id == {1: (0, 1), 2: (1, None), 3: (2, 1), 4: (3, 1)}
    field_ids = {f.name: f.metadata[b"PARQUET:field_id"] for f in stored.schema
                 if f.metadata}
    assert field_ids["_row_id"] == b"2147483540"
    assert field_ids["_last_updated_sequence_number"] == b"2147483539"


def test_new_rows_cannot_bring_lineage_columns(wh: Warehouse) -> None:
    t = four_rows(wh, "db.t", 3)
    snapshots = len(t.snapshots)
    rows = t.scan(columns=["id", "part", "v", "_row_id"]).to_arrow()
    def upsert(data: pa.Table) -> object:
        return t.upsert(data, on="id")

    writes: list[Callable[[pa.Table], object]] = [t.append, t.overwrite, upsert]
    for write in writes:
        with pytest.raises(ValidationError) as e:
            write(rows)
        assert e.value.field == "_row_id"
    assert len(t.refresh().snapshots) == snapshots


# --------------------------------------------------------------------------- model test


@dataclass
class Model:
    """What the rules say each live row's lineage is: id -> (v, row id, sequence number)."""

    rows: dict[int, tuple[str, int | None, int | None]] = field(default_factory=dict)
    parts: dict[int, int] = field(default_factory=dict)
    seen_ids: set[int] = field(default_factory=set)
    next_key: int = 1

    def new_rows(self, rng: random.Random, n: int, part: int | None = None
                 ) -> list[dict[str, Any]]:
        out = []
        for _ in range(n):
            k = self.next_key
            self.next_key += 1
            out.append({"id": k, "part": rng.randrange(3) if part is None else part,
                        "v": f"n{k}"})
        return out


def _check(t: Table, model: Model, fresh: set[int], modified: set[int], what: str) -> None:
    got = lineage(t)
    s = seq(t)
    assert set(got) == set(model.rows), what
    ids = [r[1] for r in got.values()]
    assert None not in ids and len(set(ids)) == len(ids), what
    for k, (v, rid, sq) in got.items():
        want_v, want_rid, want_seq = model.rows[k]
        assert v == want_v, (what, k)
        if k in fresh:
            assert rid not in model.seen_ids and sq == s, (what, k, rid, sq)
        elif k in modified:
            assert (rid, sq) == (want_rid, s), (what, k)
        else:
            assert (rid, sq) == (want_rid, want_seq), (what, k)
        model.rows[k] = (v, rid, sq)
    model.seen_ids |= set(ids)


def _pick(rng: random.Random, model: Model) -> list[int]:
    keys = sorted(model.rows)
    return rng.sample(keys, rng.randint(1, max(1, len(keys) // 3))) if keys else []


def _in(keys: list[int]) -> str:
    return f"id IN ({', '.join(map(str, keys))})"


def _step(t: Table, model: Model, rng: random.Random, op: str) -> tuple[set[int], set[int]]:
    """Run ``op``; (fresh keys, modified keys), with ``model.rows`` values updated."""
    if op == "append" or not model.rows:
        rows = model.new_rows(rng, rng.randint(1, 6))
        t.append(rows)
        for r in rows:
            model.rows[r["id"]] = (r["v"], None, None)
            model.parts[r["id"]] = r["part"]
        return {r["id"] for r in rows}, set()
    keys = _pick(rng, model)
    if op.startswith("update"):
        value = f"u{len(t.snapshots)}"
        t.update({"v": value}, _in(keys), mode=op.removeprefix("update-"))
        for k in keys:
            model.rows[k] = (value, *model.rows[k][1:])
        return set(), set(keys)
    if op.startswith("delete"):
        t.delete(_in(keys), mode=op.removeprefix("delete-"))
        for k in keys:
            del model.rows[k]
        return set(), set()
    if op == "overwrite":
        rows = model.new_rows(rng, rng.randint(0, 3))
        t.overwrite(rows, _in(keys))
        for k in keys:
            del model.rows[k]
        for r in rows:
            model.rows[r["id"]] = (r["v"], None, None)
            model.parts[r["id"]] = r["part"]
        return {r["id"] for r in rows}, set()
    if op == "dynamic":
        part = rng.randrange(3)
        rows = model.new_rows(rng, rng.randint(1, 3), part)
        t.dynamic_partition_overwrite(rows)
        for k in [k for k in model.rows if model.parts[k] == part]:
            del model.rows[k]
        for r in rows:
            model.rows[r["id"]] = (r["v"], None, None)
            model.parts[r["id"]] = part
        return {r["id"] for r in rows}, set()
    assert op == "upsert"
    value = f"x{len(t.snapshots)}"
    rows = [{"id": k, "part": model.parts[k], "v": value} for k in keys]
    t.upsert(rows, on=["id", "part"])
    for k in keys:
        model.rows[k] = (value, None, None)
    return set(keys), set()


OPS = ("append", "update-copy-on-write", "update-merge-on-read", "delete-copy-on-write",
       "delete-merge-on-read", "overwrite", "dynamic", "upsert")


@pytest.mark.parametrize(("fv", "seed"), [(3, 1), (3, 2), (4, 1), (4, 2)])
def test_random_rewrites_follow_the_row_lineage_rules(wh: Warehouse, fv: int,
                                                     seed: int) -> None:
    rng = random.Random(seed)
    props = ({MANIFEST_MIN_MERGE_COUNT: "3"} if fv == 3 else {V4_COMPACTION_MIN_COUNT: "3"})
    t = wh.create_table("db.t", DDL, format_version=fv, partition_by="part",
                        properties=props)
    model = Model()
    history: list[tuple[int, dict[int, tuple[str, int | None, int | None]]]] = []
    for i in range(18):
        op = "append" if i < 2 else rng.choice(OPS)
        fresh, modified = _step(t, model, rng, op)
        _check(t, model, fresh, modified, f"step {i}: {op}")
        snap = t.current_snapshot
        assert snap is not None
        history.append((snap.snapshot_id, dict(model.rows)))
    # time travel reads each snapshot's lineage as it was committed
    for snapshot_id, rows in history[-4:]:
        got = t.at(snapshot_id).select("id", "v", *LINEAGE).to_arrow().to_pylist()
        assert {r["id"]: (r["v"], r["_row_id"], r["_last_updated_sequence_number"])
                for r in got} == rows


def test_a_column_named_like_a_lineage_column_does_not_block_rewrites(wh: Warehouse) -> None:
    t = wh.create_table("db.c", "id long, _row_id long", format_version=3)
    t.append([{"id": i, "_row_id": 100 + i} for i in range(4)])
    t.update({"_row_id": 7}, "id = 1")
    t.delete("id = 2")
    t.update({"_row_id": 8}, "id = 3", mode="merge-on-read")
    rows = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 0, "_row_id": 100}, {"id": 1, "_row_id": 7},
                    {"id": 3, "_row_id": 8}]
    changes = t.changes(None, identifier_columns="id").to_pandas()
    assert list(changes.columns)[:2] == ["id", "_row_id"] and len(changes) == 9
