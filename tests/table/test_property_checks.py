"""Bad property values are refused at the door, and one already in a table's metadata never
locks the table (issue 17): set_properties and create_table check every property icenb reads;
commit retries, expiry and metadata retention read a bad existing value as the default with a
PropertyWarning, so the value can be removed through icenb."""

from __future__ import annotations

import datetime as dt
import os
import warnings
from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.properties import PropertyWarning
from icenb.spec.table_updates import SetProperties
from icenb.table import Table
from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement

BAD = [("commit.retry.num-retries", "-1"), ("commit.retry.num-retries", "abc"),
       ("commit.retry.min-wait-ms", "1.5"), ("history.expire.min-snapshots-to-keep", "0"),
       ("write.target-file-size-bytes", "0"), ("commit.manifest-merge.enabled", "yes"),
       ("write.delete.mode", "merge-on-write"),
       ("write.delete.isolation-level", "strict"), ("write.parquet.compression-codec", "zip"),
       ("write.metadata.compression-codec", "bzip2"), ("write.format.default", "csv"),
       ("write.v4.manifest-dv.storage", "file"), ("", "x"), ("gc.enabled", "maybe"),
       ("write.metadata.delete-after-commit.enabled", "1")]


def _files(root: Path) -> set[str]:
    return {os.path.join(d, f) for d, _x, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize(("key", "value"), BAD)
def test_set_properties_refuses_values_icenb_cannot_use(tmp_path: Path, key: str,
                                                        value: str) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    before = t.metadata_location
    with pytest.raises(ValidationError) as err:
        t.set_properties({key: value})
    assert err.value.field in (key, "properties") and (err.value.value in (value, key))
    assert t.refresh().metadata_location == before


@pytest.mark.parametrize(("key", "value"), BAD[:5])
def test_create_table_refuses_them_and_writes_nothing(tmp_path: Path, key: str,
                                                      value: str) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    wh.create_namespace("db")
    before = _files(tmp_path)
    with pytest.raises(ValidationError):
        wh.create_table("db.t", "id long", properties={key: value})
    assert _files(tmp_path) == before and wh.tables("db") == []


def test_a_refused_create_table_does_not_even_create_its_namespace(tmp_path: Path) -> None:
    """The namespace was created before the properties and types were checked."""
    wh = icenb.warehouse(tmp_path / "wh")
    for bad in ({"properties": {"commit.retry.num-retries": "-1"}}, {"schema": "d decimal(5, 6)"}):
        with pytest.raises(ValidationError):
            wh.create_table("fresh.t", bad.get("schema", "id long"),
                            properties=bad.get("properties"))
        assert wh.namespaces() == []


def _written_by_another_engine(t: Table, props: dict[str, str]) -> None:
    """Put values in the metadata the way another engine would (no icenb check)."""
    change = MetadataChange([SetProperties(props)], uuid_requirement(t.metadata))
    commit_change(t, lambda _metadata: change)


def test_a_bad_value_in_the_metadata_never_locks_the_table(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    t.append([{"id": 1}])
    _written_by_another_engine(t, {"commit.retry.num-retries": "-1",
                                   "history.expire.min-snapshots-to-keep": "abc",
                                   "write.metadata.previous-versions-max": "x"})
    with pytest.warns(PropertyWarning, match="commit.retry.num-retries"):
        t.append([{"id": 2}])
    with pytest.warns(PropertyWarning):
        t.create_tag("v2")
    with pytest.warns(PropertyWarning, match="min-snapshots-to-keep"):
        t.expire_snapshots()
    with pytest.warns(PropertyWarning):
        t.remove_properties(["commit.retry.num-retries", "history.expire.min-snapshots-to-keep",
                             "write.metadata.previous-versions-max"])
    assert "commit.retry.num-retries" not in t.properties
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [1, 2]
    with warnings.catch_warnings():  # and nothing warns any more
        warnings.simplefilter("error", PropertyWarning)
        t.append([{"id": 3}])


def test_lossy_casts_are_refused_on_the_rows_path(tmp_path: Path) -> None:
    """append([{"id": 101.5}]) into a long column stored 101; now it is refused naming the
    column and the row, as the Arrow and pandas paths refuse a float column."""
    from decimal import Decimal

    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, n int")
    for bad in (101.5, float("nan"), float("inf"), Decimal("1.5")):
        with pytest.raises(ValidationError, match="row 1") as err:
            t.append([{"id": 1, "n": 1}, {"id": bad, "n": 1}])
        assert err.value.field == "id"
    assert t.metadata.snapshots == ()
    t.append([{"id": 3.0, "n": 4}])  # the same number: accepted
    assert t.to_arrow().to_pylist() == [{"id": 3, "n": 4}]


def test_fractional_numbers_are_no_dates_or_times(tmp_path: Path) -> None:
    """3.5 into a date column was stored as 1970-01-04; now a float into a date, time or
    timestamp column is refused naming column and row (ints still count days/microseconds)."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "d date, ts timestamp, tz timestamptz")
    for column in ("d", "ts", "tz"):
        with pytest.raises(ValidationError, match="row 0") as err:
            t.append([{column: 3.5}])
        assert err.value.field == column and err.value.value == 3.5
    assert t.metadata.snapshots == ()
    t.append([{"d": 3, "ts": 1_000_000}])
    assert t.to_arrow().to_pylist() == [{"d": dt.date(1970, 1, 4),
                                         "ts": dt.datetime(1970, 1, 1, 0, 0, 1), "tz": None}]


def test_columns_given_as_one_string_is_one_name(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, i int, d int")
    t.append([{"id": 1, "i": 2, "d": 3}])
    assert t.scan(columns="id").to_arrow().column_names == ["id"]
    assert t.scan(columns=["i", "d"]).to_arrow().column_names == ["i", "d"]


def test_relative_paths_and_empty_fixed_types_are_refused(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    for key in ("write.metadata.path", "write.data.path"):
        with pytest.raises(ValidationError, match="absolute path or a URI"):
            t.set_properties({key: "relative/dir"})
    t.set_properties({"write.data.path": str(tmp_path / "elsewhere")})
    with pytest.raises(ValidationError, match="fixed"):
        icenb.warehouse(tmp_path).create_table("db.u", "s struct<a: fixed[0]>")
    with pytest.raises(ValidationError, match="fixed"), t.update_schema() as u:
        u.add_column("f", "fixed[0]")
    assert t.schema.field_by_name("f") is None
    # Parquet's DECIMAL needs 0 <= scale <= precision: such a column could never take data
    with pytest.raises(ValidationError, match="scale") as err, t.update_schema() as u:
        u.add_column("n", "decimal(5, 6)")
    assert err.value.value == "decimal(5, 6)"


def test_an_empty_list_appends_an_empty_snapshot(tmp_path: Path) -> None:
    """``append([])`` said "required column is missing"; no rows is now an empty table of the
    table's schema, committed as an empty append exactly as an empty Arrow table is."""
    import pyarrow as pa

    t = icenb.warehouse(tmp_path).create_table("db.t", "id long not null, s string")
    empty_list = t.append([])
    empty_arrow = t.append(pa.table({"id": pa.array([], pa.int64())}))
    for snap in (empty_list, empty_arrow):
        assert snap.summary["operation"] == "append"
        assert snap.summary["total-records"] == "0" and "added-data-files" not in snap.summary
    assert t.to_arrow().num_rows == 0 and len(t.snapshots) == 2


def test_aware_and_naive_datetimes_are_placed_on_utc(tmp_path: Path) -> None:
    """Documented rule: an aware datetime is converted to UTC; into a ``timestamp`` (no zone)
    column its UTC wall-clock time is stored, into ``timestamptz`` the instant. A naive one is
    taken as UTC in a ``timestamptz`` column (as Arrow and Spark with a UTC session do)."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "id int, ts timestamp, tz timestamptz")
    plus2 = dt.timezone(dt.timedelta(hours=2))
    t.append([{"id": 1, "ts": dt.datetime(2024, 1, 1, 12, tzinfo=plus2),
               "tz": dt.datetime(2024, 1, 1, 12, tzinfo=plus2)},
              {"id": 2, "ts": dt.datetime(2024, 1, 1, 12), "tz": dt.datetime(2024, 1, 1, 12)}])
    rows = {r["id"]: r for r in t.to_arrow().to_pylist()}
    assert rows[1]["ts"] == dt.datetime(2024, 1, 1, 10)
    assert rows[1]["tz"] == dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc)
    assert rows[2]["ts"] == dt.datetime(2024, 1, 1, 12)
    assert rows[2]["tz"] == dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc)
