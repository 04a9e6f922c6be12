"""Partition statistics files (spec: "Partition Statistics"): computed, written and registered by
``Table.compute_partition_stats``, read by ``read_partition_stats`` / ``Table.partition_stats``.

Oracle: Iceberg Java 1.10's ``PartitionStatsHandler`` in one JVM: it computes the statistics of
the Java-written corpus tables (evolved specs, position deletes, deletion vectors, equality
deletes, expired snapshots) and of icenb-written tables, and reads the files icenb registered.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import IcebergError, NoSuchSnapshot, NotFound, UnsupportedFeature
from icenb.spec.partition_spec import unified_partition_type
from icenb.table import Table
from icenb.table.commit.partition_statistics import compute_partition_stats, read_partition_stats
from tests.reference_fixtures import JavaTables, run_reference_batch

UTC = dt.timezone.utc
COUNTS = ("spec_id", "data_record_count", "data_file_count", "total_data_file_size_in_bytes",
          "position_delete_record_count", "position_delete_file_count",
          "equality_delete_record_count", "equality_delete_file_count", "total_record_count",
          "last_updated_at", "last_updated_snapshot_id", "dv_count")


def internal_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as the Java script reports them: partition values in the internal representation
    (days, microseconds, decimal strings, binary hex), v1/v2 files with ``dv_count`` 0."""
    part = table.column("partition").combine_chunks()
    values = []
    for i, f in enumerate(part.type):
        arr = part.field(i)
        if pa.types.is_date32(f.type):
            arr = arr.cast(pa.int32())
        elif pa.types.is_timestamp(f.type) or pa.types.is_time(f.type):
            arr = arr.cast(pa.int64())
        py = arr.to_pylist()
        if pa.types.is_decimal(f.type) or isinstance(f.type, pa.UuidType):
            py = [None if v is None else str(v) for v in py]
        elif pa.types.is_binary(f.type) or pa.types.is_fixed_size_binary(f.type):
            py = [None if v is None else v.hex() for v in py]
        values.append(py)
    out = []
    for r, row in enumerate(table.drop_columns(["partition"]).to_pylist()):
        item: dict[str, Any] = {"partition": [v[r] for v in values]}
        item.update({k: row.get(k, 0 if k == "dv_count" else None) for k in COUNTS})
        out.append(item)
    return out


def without_total(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Java 1.10 never fills ``total_record_count``; icenb does when metadata makes it exact."""
    return sorted(({**r, "total_record_count": None} for r in rows),
                  key=lambda r: json.dumps(r, sort_keys=True))


def by_key(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


# --------------------------------------------------------------------------- the scenarios


def _partitioned(t: Table) -> bool:
    return bool(unified_partition_type(t.metadata.partition_specs, t.schema).fields)


def _icenb_tables(root: Path) -> dict[str, Table]:
    """icenb-written tables in v1/v2/v3: appends, partition evolution, a branch."""
    wh = icenb.warehouse(root / "wh")
    out = {}
    for version in (1, 2, 3):
        t = wh.create_table(f"db.t{version}", "id long not null, ts timestamptz, s string, "
                            "amount decimal(9, 2), b binary",
                            partition_by=["day(ts)", "bucket(4, id)"], format_version=version)
        def rows(lo: int, hi: int) -> list[dict[str, Any]]:
            return [{"id": i, "ts": None if i % 7 == 0 else
                     dt.datetime(2024, 1, 1 + i % 3, i % 24, tzinfo=UTC),
                     "s": f"s{i % 3}", "amount": None, "b": bytes([i % 5])}
                    for i in range(lo, hi)]
        t.append(rows(0, 20))
        t.append(rows(20, 30))
        with t.update_spec() as u:
            u.add_field("s")
            u.add_field("truncate(2, b)")
            u.remove_field("ts_day")
        t.append(rows(30, 45))
        out[f"icenb_v{version}"] = t
    return out


class Scenario:
    """Everything computed once: icenb's and Java's statistics, in one JVM batch."""

    def __init__(self, java_tables: JavaTables, root: Path) -> None:
        self.cases: list[tuple[str, Table, int]] = []
        for entry in java_tables.entries("table"):
            if entry["catalog"] != "hadoop":
                continue
            t = icenb.open(java_tables.location(entry["name"]))
            if not _partitioned(t) or t.current_snapshot is None:
                continue
            sids = {t.current_snapshot.snapshot_id, t.snapshots[0].snapshot_id}
            self.cases.extend((entry["name"], t, sid) for sid in sorted(sids))
        self.icenb = _icenb_tables(root)
        self.registered = {}
        for name, t in self.icenb.items():
            first = t.snapshots[0].snapshot_id
            self.registered[name] = [t.compute_partition_stats(first),
                                     t.compute_partition_stats()]
            self.cases.append((name, t, t.current_snapshot.snapshot_id))  # type: ignore[union-attr]
        requests: list[dict[str, Any]] = []
        for i, (_, t, sid) in enumerate(self.cases):
            requests.append({"op": "compute", "metadata_file": t.metadata_location,
                             "snapshot_id": sid, "scratch": str(root / f"java{i}")})
        for name in self.icenb:
            requests.append({"op": "read", "metadata_file": self.icenb[name].metadata_location})
        results = run_reference_batch("java_partition_stats.py", requests)
        n = len(self.cases)
        self.java_compute = results[:n]
        self.java_read = dict(zip(self.icenb, results[n:], strict=True))


@pytest.fixture(scope="module")
def scenario(java_tables: JavaTables, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return Scenario(java_tables, tmp_path_factory.mktemp("pstats"))


# --------------------------------------------------------------------------- against Java


def test_rows_equal_java_compute(scenario: Scenario) -> None:
    """Every case (Java-written corpus tables at their first and current snapshot, icenb tables):
    icenb's rows are Java's rows, total_record_count aside."""
    names = set()
    for (name, t, sid), java in zip(scenario.cases, scenario.java_compute, strict=True):
        assert java["ok"], (name, java)
        ours = compute_partition_stats(t.io, t.metadata, sid)
        assert without_total(internal_rows(ours)) == without_total(java["rows"]), (name, sid)
        names.add(name)
    # The corpus cases cover evolved specs (v1 void fields too), deletes of every kind.
    assert {"db.v1_partition_evolution", "db.v2_partition_evolution", "db.v2_merge_on_read",
            "db.v3_deletion_vectors", "db.java_v2_equality_deletes", "db.v2_copy_on_write",
            "db.v1_upgrade", "icenb_v3"} <= names


def test_icenb_reads_java_files_and_writes_the_same_layout(scenario: Scenario) -> None:
    """Java's files read by icenb give Java's rows; icenb's file for the same snapshot has the
    same Parquet schema (names, field ids, required columns, types) and Iceberg schema JSON."""
    avro = 0
    for (name, t, sid), java in zip(scenario.cases, scenario.java_compute, strict=True):
        if java["path"] is None:
            continue
        theirs = read_partition_stats(t.io, java["path"])
        assert by_key(internal_rows(theirs)) == by_key(java["rows"]), name
        ours = compute_partition_stats(t.io, t.metadata, sid)
        assert ours.schema.equals(theirs.schema.remove_metadata(), check_metadata=False)
        if not java["path"].endswith(".parquet"):  # an Avro-default table: Java wrote Avro
            avro += 1
            continue
        java_schema = pq.ParquetFile(java["path"]).schema
        loc = str(Path(java["path"]).parent / "icenb.parquet")
        from icenb.table.commit.partition_statistics import write_partition_stats

        write_partition_stats(t.io, t.metadata, sid, ours, location=loc)
        mine = pq.ParquetFile(loc)
        # The Parquet schema text minus the first lines (object address, root group name).
        assert str(mine.schema).splitlines()[2:] == str(java_schema).splitlines()[2:], name
        ours_json = json.loads(mine.metadata.metadata[b"iceberg.schema"])
        theirs_json = json.loads(pq.ParquetFile(java["path"]).metadata.metadata[
            b"iceberg.schema"])
        assert ours_json == theirs_json, name
    assert avro >= 1  # the Avro reader was exercised


def test_rows_sorted_by_partition_nulls_first(scenario: Scenario) -> None:
    """Spec: rows sorted ascending by partition, nulls first: Java's order (where partitions
    are unique; Java leaves same-partition rows of different specs in no set order)."""
    checked = 0
    for (name, t, sid), java in zip(scenario.cases, scenario.java_compute, strict=True):
        ours = [r["partition"] for r in internal_rows(compute_partition_stats(t.io, t.metadata,
                                                                               sid))]
        theirs = [r["partition"] for r in java["rows"]]
        if len({json.dumps(p) for p in theirs}) == len(theirs):
            assert ours == theirs, name
            checked += 1
    assert checked >= 10


def test_java_reads_registered_files(scenario: Scenario) -> None:
    """Java loads icenb's metadata, finds both registered files and reads icenb's rows, all
    columns (total_record_count included)."""
    for name, t in scenario.icenb.items():
        java = scenario.java_read[name]
        assert java["ok"], java
        files = {f["snapshot_id"]: f for f in java["files"]}
        for registered in scenario.registered[name]:
            got = files[registered.snapshot_id]
            assert got["path"] == registered.statistics_path
            assert got["size"] == registered.file_size_in_bytes == \
                Path(registered.statistics_path).stat().st_size
            assert got["rows"] == internal_rows(read_partition_stats(t.io, registered))
            assert got["rows"] == internal_rows(t.partition_stats(registered.snapshot_id))


# --------------------------------------------------------------------------- icenb only


def test_total_record_count_exact_or_null(java_tables: JavaTables) -> None:
    """total_record_count is the live row count when no position-delete file or equality delete
    applies (deletion vectors are exact), null otherwise."""
    dv = icenb.open(java_tables.location("db.v3_deletion_vectors"))
    stats = compute_partition_stats(dv.io, dv.metadata)
    rows = dv.scan().to_arrow()
    counts = {r["cat"]: r["cat_count"] for r in
              rows.group_by("cat").aggregate([("cat", "count")]).to_pylist()}
    for row in stats.to_pylist():
        assert row["dv_count"] >= 1
        assert row["total_record_count"] == counts[row["partition"]["cat"]]
    mor = icenb.open(java_tables.location("db.v2_merge_on_read"))
    assert set(compute_partition_stats(mor.io, mor.metadata).column(
        "total_record_count").to_pylist()) == {None}


def test_schema_per_format_version(scenario: Scenario) -> None:
    v2 = scenario.icenb["icenb_v2"].partition_stats()
    v3 = scenario.icenb["icenb_v3"].partition_stats()
    assert "dv_count" not in v2.column_names and v2.schema.field(
        "position_delete_file_count").nullable
    assert not v3.schema.field("position_delete_file_count").nullable
    assert v3.schema.field("dv_count").metadata[b"PARQUET:field_id"] == b"13"
    part = v3.schema.field("partition").type
    assert [f.metadata[b"PARQUET:field_id"] for f in part] == [b"1000", b"1001", b"1002",
                                                                b"1003"]
    assert [f.name for f in part] == ["ts_day", "id_bucket", "s", "b_trunc_2"]


def test_register_commit_and_reuse(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, s string", partition_by=["s"])
    with pytest.raises(NoSuchSnapshot):
        t.compute_partition_stats()
    t.append([{"id": 1, "s": "a"}, {"id": 2, "s": "b"}, {"id": 3, "s": "b"}])
    sid = t.current_snapshot.snapshot_id  # type: ignore[union-attr]
    with pytest.raises(NotFound):
        t.partition_stats()
    before = t.metadata_location
    f = t.compute_partition_stats()
    assert f.snapshot_id == sid and Path(f.statistics_path).name.startswith(
        f"partition-stats-{sid}-") and f.statistics_path.endswith(".parquet")
    assert Path(f.statistics_path).parent == Path(t.location) / "metadata"
    assert t.metadata_location != before
    assert wh.table("db.t").metadata.partition_statistics == (f,)
    assert t.compute_partition_stats() == f and t.metadata_location != before
    assert [(r["partition"]["s"], r["data_record_count"]) for r in
            t.partition_stats().to_pylist()] == [("a", 1), ("b", 2)]
    unregistered = t.compute_partition_stats(register=False)
    assert unregistered != f and Path(unregistered.statistics_path).exists()
    assert wh.table("db.t").metadata.partition_statistics == (f,)
    with pytest.raises(NoSuchSnapshot):
        t.compute_partition_stats(12345)


def test_refused_before_writing(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    flat = wh.create_table("db.flat", "id long")
    flat.append([{"id": 1}])
    with pytest.raises(UnsupportedFeature, match="partitioned"):
        flat.compute_partition_stats()
    t = wh.create_table("db.t", "id long, s string", partition_by=["s"])
    t.append([{"id": 1, "s": "a"}])
    read_only = icenb.open(t.metadata_location)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedFeature, match="read-only"):
        read_only.compute_partition_stats()
    assert not list((Path(t.location) / "metadata").glob("partition-stats-*"))


def test_failed_commit_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, s string", partition_by=["s"])
    t.append([{"id": 1, "s": "a"}])
    before = t.metadata_location

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise IcebergError("catalog down")

    monkeypatch.setattr(type(wh.catalog), "commit_table", refuse)
    with pytest.raises(IcebergError, match="catalog down"):
        t.compute_partition_stats()
    assert not list((Path(t.location) / "metadata").glob("partition-stats-*"))
    assert t.metadata_location == before and t.metadata.partition_statistics == ()
