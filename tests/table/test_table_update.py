"""Schema, partition, sort order and property changes of a writable table, committed through the
catalog; reading across them (icenb and Iceberg Java 1.10, every snapshot, one JVM)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import CommitConflict, UnsupportedFeature, ValidationError
from icenb.spec.schema_update import SchemaUpdate
from icenb.table import Table
from icenb.table.warehouse import Warehouse
from tests.reference_fixtures import run_reference_batch
from tests.table.commit.test_append import _files, normalized

D1, D2, D3, D4 = (dt.date(2024, 1, k) for k in range(1, 5))


@dataclass
class Evolved:
    warehouse: Warehouse
    #: snapshot ids, oldest first, with the column names and rows each must read.
    expected: list[tuple[int, list[str], list[list[Any]]]]


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory) -> Evolved:
    """One v2 table: append, evolve schema, append, evolve spec and schema, append, sort and
    set properties, append."""
    wh = icenb.warehouse(tmp_path_factory.mktemp("evolution"))
    t = wh.create_table("db.t", "id long not null, s string, n int, d date",
                        partition_by=["d"], format_version=2)
    s1 = t.append([{"id": 1, "s": "a", "n": 10, "d": D1}, {"id": 2, "s": "b", "n": 20, "d": D2}])
    with t.update_schema() as u:
        u.add_column("score", "double").rename_column("s", "name").update_column("n", "long")
    s2 = t.append([{"id": 3, "name": "c", "n": 30, "d": D3, "score": 1.5}])
    with t.update_spec() as sp:
        sp.add_field("bucket(4, id)")
    with t.update_schema() as u:
        u.delete_column("n").add_column("tag", "string")
    s3 = t.append([{"id": 4, "name": "d", "d": D4, "score": 2.5, "tag": "x"}])
    t.replace_sort_order("id", "name desc nulls last")
    t.set_properties({"owner": "me", "write.parquet.compression-codec": "snappy"})
    s4 = t.append([{"id": 5, "name": None, "d": None, "score": None, "tag": "y"}])
    r1 = [[1, "a", 10, "2024-01-01"], [2, "b", 20, "2024-01-02"]]
    r2 = [[1, "a", 10, "2024-01-01", None], [2, "b", 20, "2024-01-02", None],
          [3, "c", 30, "2024-01-03", 1.5]]
    r3 = [[i, n, d, sc, None] for i, n, _, d, sc in r2] + [[4, "d", "2024-01-04", 2.5, "x"]]
    r4 = [*r3, [5, None, None, None, "y"]]
    cols3 = ["id", "name", "d", "score", "tag"]
    return Evolved(wh, [
        (s1.snapshot_id, ["id", "s", "n", "d"], r1),
        (s2.snapshot_id, ["id", "name", "n", "d", "score"], r2),
        (s3.snapshot_id, cols3, r3),
        (s4.snapshot_id, cols3, r4),
    ])


def test_evolved_table_reloads_with_every_change(evolved: Evolved) -> None:
    t = evolved.warehouse.table("db.t")
    assert [(f.field_id, f.name, str(f.field_type)) for f in t.schema.fields] == [
        (1, "id", "long"), (2, "name", "string"), (4, "d", "date"), (5, "score", "double"),
        (6, "tag", "string")]
    assert [s.schema_id for s in t.metadata.schemas] == [0, 1, 2]
    assert t.metadata.current_schema_id == 2 and t.metadata.last_column_id == 6
    assert str(t.metadata.schemas[1].find_field("n").field_type) == "long"
    assert [(f.name, str(f.transform), f.field_id) for f in t.spec.fields] == [
        ("d", "identity", 1000), ("id_bucket_4", "bucket[4]", 1001)]
    assert t.spec.spec_id == 1 and t.metadata.last_partition_id == 1001
    assert [(f.source_id, str(f.direction), str(f.null_order)) for f in t.sort_order.fields] == [
        (1, "asc", "nulls-first"), (2, "desc", "nulls-last")]
    assert t.sort_order.order_id == 1
    assert t.properties["owner"] == "me"
    # Each snapshot records the schema it was written with.
    assert [s.schema_id for s in t.snapshots] == [0, 1, 2, 2]


def test_reads_across_evolution_show_nulls_and_new_names(evolved: Evolved) -> None:
    t = evolved.warehouse.table("db.t")
    for sid, columns, expected in evolved.expected:
        got = t.at(sid).to_arrow()
        assert got.column_names == columns
        assert normalized(got) == expected
    current = t.scan().to_arrow()
    assert current.column_names == ["id", "name", "d", "score", "tag"]
    assert normalized(current) == evolved.expected[-1][2]
    assert t.scan(filter="name = 'a'").to_arrow().column("id").to_pylist() == [1]


@pytest.fixture(scope="module")
def java(evolved: Evolved) -> list[dict[str, Any]]:
    location = evolved.warehouse.table("db.t").metadata_location
    requests = [{"metadata_file": location, "snapshot_id": sid}
                for sid, _, _ in evolved.expected]
    return run_reference_batch("java_read_written.py", requests)


def test_java_reads_every_evolved_snapshot_as_icenb(evolved: Evolved,
                                                    java: list[dict[str, Any]]) -> None:
    t = evolved.warehouse.table("db.t")
    for (sid, columns, expected), theirs in zip(evolved.expected, java, strict=True):
        assert theirs["ok"], theirs
        assert theirs["columns"] == columns
        assert sorted(theirs["rows"], key=lambda r: r[0]) == expected
        assert normalized(t.at(sid).to_arrow()) == expected


# --------------------------------------------------------------------------- each operation


def _new(tmp_path: Path, **kwargs: Any) -> tuple[Warehouse, Table]:
    wh = icenb.warehouse(tmp_path)
    return wh, wh.create_table("db.t", "id long not null, s string, d date", **kwargs)


def test_each_operation_is_one_commit(tmp_path: Path) -> None:
    wh, t = _new(tmp_path)
    meta = tmp_path / "db" / "t" / "metadata"

    def count() -> int:
        return len(list(meta.glob("*.metadata.json")))

    with t.update_schema() as u:
        u.add_column("x", "int")
    assert count() == 2 and wh.table("db.t").schema.find_field("x").field_id == 4
    with t.update_spec() as sp:
        sp.add_field("month(d)")
    assert count() == 3 and [f.name for f in wh.table("db.t").spec.fields] == ["d_month"]
    order = t.replace_sort_order("s desc", "id")
    assert count() == 4 and wh.table("db.t").sort_order == order == t.sort_order
    t.set_properties({"a": "1", "b": "2"})
    t.remove_properties(["a", "missing"])
    assert count() == 6
    assert {k: v for k, v in wh.table("db.t").properties.items() if k in "ab"} == {"b": "2"}
    assert t.replace_sort_order().is_unsorted and wh.table("db.t").sort_order.is_unsorted
    assert t.metadata_location == wh.table("db.t").metadata_location
    # No change: no commit.
    with t.update_schema():
        pass
    with t.update_spec():
        pass
    assert count() == 7


def test_an_exception_in_the_block_commits_nothing(tmp_path: Path) -> None:
    wh, t = _new(tmp_path)
    before = t.metadata_location
    with pytest.raises(RuntimeError), t.update_schema() as u:
        u.add_column("x", "int")
        raise RuntimeError("changed my mind")
    assert wh.table("db.t").metadata_location == before
    assert [f.name for f in wh.table("db.t").schema.fields] == ["id", "s", "d"]
    assert t.metadata_location == before


def _break_identifier(u: SchemaUpdate) -> None:
    u.delete_column("id")


@pytest.mark.parametrize("change", [
    lambda u: u.update_column("s", "int"),
    _break_identifier,
    lambda u: u.delete_column("d"),
], ids=["string->int", "drop identifier", "drop partition source"])
def test_invalid_evolution_is_refused_and_changes_nothing(
        tmp_path: Path, change: Callable[[SchemaUpdate], Any]) -> None:
    wh, t = _new(tmp_path, partition_by=["day(d)"])
    with t.update_schema() as u:
        u.set_identifier_fields(["id"])
    before = _files(tmp_path / "db" / "t")
    location = t.metadata_location
    with pytest.raises(ValidationError), t.update_schema() as u:
        change(u)
    assert _files(tmp_path / "db" / "t") == before
    assert wh.table("db.t").metadata_location == location == t.metadata_location


def test_dropping_a_sort_column_is_refused(tmp_path: Path) -> None:
    wh, t = _new(tmp_path, sort_by=["s"])
    location = t.metadata_location
    with pytest.raises(ValidationError, match="sort"), t.update_schema() as u:
        u.delete_column("s")
    assert wh.table("db.t").metadata_location == location


@pytest.mark.parametrize("call", [
    lambda t: t.set_properties({"format-version": "3"}),
    lambda t: t.remove_properties(["current-snapshot-id"]),
    lambda t: t.set_properties({"a": 1}),
], ids=["set reserved", "remove reserved", "non-string value"])
def test_bad_property_changes_are_refused(tmp_path: Path, call: Callable[[Table], Any]) -> None:
    wh, t = _new(tmp_path)
    location = t.metadata_location
    with pytest.raises(ValidationError):
        call(t)
    assert wh.table("db.t").metadata_location == location == t.metadata_location


def test_a_table_opened_by_location_cannot_evolve(tmp_path: Path) -> None:
    _new(tmp_path)
    ro = icenb.open(str(tmp_path / "db" / "t"))
    with pytest.raises(UnsupportedFeature), ro.update_schema() as u:
        u.add_column("x", "int")
    with pytest.raises(UnsupportedFeature):
        ro.set_properties({"a": "b"})


# --------------------------------------------------------------------------- concurrency


def test_a_stale_schema_update_conflicts_and_the_first_change_stays(tmp_path: Path) -> None:
    wh, _ = _new(tmp_path)
    a, b = wh.table("db.t"), wh.table("db.t")
    with a.update_schema() as u:
        u.add_column("x", "int")
    with pytest.raises(CommitConflict) as info, b.update_schema() as u:
        u.add_column("y", "int")
    assert info.value.field == "assert-current-schema-id"
    assert [f.name for f in wh.table("db.t").schema.fields] == ["id", "s", "d", "x"]
    assert b.schema == a.schema  # refreshed to what won
    with b.update_schema() as u:  # on the refreshed table it works
        u.add_column("y", "int")
    assert [f.field_id for f in wh.table("db.t").schema.fields] == [1, 2, 3, 4, 5]


def test_a_stale_spec_update_conflicts(tmp_path: Path) -> None:
    wh, _ = _new(tmp_path)
    a, b = wh.table("db.t"), wh.table("db.t")
    with a.update_spec() as sp:
        sp.add_field("bucket(2, id)")
    with pytest.raises(CommitConflict) as info, b.update_spec() as sp:
        sp.add_field("d")
    assert info.value.field == "assert-default-spec-id"
    assert [f.name for f in wh.table("db.t").spec.fields] == ["id_bucket_2"]


def test_a_schema_update_retries_over_a_concurrent_append(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wh, _ = _new(tmp_path)
    a, b = wh.table("db.t"), wh.table("db.t")
    waits: list[float] = []
    monkeypatch.setattr("icenb.table.commit.metadata_change.time.sleep", waits.append)
    snap = b.append([{"id": 1, "s": "a", "d": D1}])
    with a.update_schema() as u:  # a is stale: the pointer moved, the schema did not
        u.add_column("x", "int")
    assert len(waits) == 1
    t = wh.table("db.t")
    assert t.current_snapshot == snap and "x" in [f.name for f in t.schema.fields]
    assert a.metadata_location == t.metadata_location
    assert t.scan().to_arrow().to_pylist() == [{"id": 1, "s": "a", "d": D1, "x": None}]


@pytest.mark.parametrize("properties_first", [True, False])
def test_an_append_and_a_property_update_both_land(tmp_path: Path,
                                                   properties_first: bool) -> None:
    wh, _ = _new(tmp_path, properties={"commit.retry.min-wait-ms": "1"})
    a, b = wh.table("db.t"), wh.table("db.t")
    if properties_first:
        a.set_properties({"owner": "me"})
        b.append([{"id": 1}])
    else:
        b.append([{"id": 1}])
        a.set_properties({"owner": "me"})
    t = wh.table("db.t")
    assert t.properties["owner"] == "me"
    assert t.scan().to_arrow().column("id").to_pylist() == [1]
    assert len(t.metadata.metadata_log) == 2  # the files before the two changes


def test_evolved_schema_is_what_appends_write(tmp_path: Path) -> None:
    wh, t = _new(tmp_path)
    t.append(pa.table({"id": pa.array([1], pa.int64()), "s": ["a"], "d": [D1]}))
    with t.update_schema() as u:
        u.rename_column("s", "label").move_first("s")  # moves name the old column
    t.append([{"id": 2, "label": "b"}])
    got = wh.table("db.t").scan().to_arrow()
    assert got.column_names == ["label", "id", "d"]
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == [
        {"label": "a", "id": 1, "d": D1}, {"label": "b", "id": 2, "d": None}]
