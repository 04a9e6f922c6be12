"""Wrong argument types give an IcebergError naming the argument, never a raw TypeError or
AttributeError (issue 17): every public call below with every bad value."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import IcebergError

BAD: list[Any] = [5, None, 1.5, object(), [1], {"a": 1}, b"x", -1, "", "nope"]


def _calls(tmp_path: Path) -> dict[str, Callable[[Any], Any]]:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, ts timestamp", partition_by=["day(ts)"])
    t.append([{"id": 1, "ts": dt.datetime(2024, 1, 1)}])
    return {
        "scan(filter)": lambda v: t.scan(v), "scan(columns)": lambda v: t.scan(columns=v),
        "scan(snapshot_id)": lambda v: t.scan(snapshot_id=v),
        "scan(ref)": lambda v: t.scan(ref=v), "at": lambda v: t.at(v),
        "append": lambda v: t.append(v), "delete": lambda v: t.delete(v),
        "create_tag": lambda v: t.create_tag(v), "rollback_to": lambda v: t.rollback_to(v),
        "set_properties": lambda v: t.set_properties(v),
        "remove_properties": lambda v: t.remove_properties(v),
        "expire_snapshots": lambda v: t.expire_snapshots(v),
        "expire_snapshots(retain_last)": lambda v: t.expire_snapshots(retain_last=v),
        "diff": lambda v: t.diff(v, v), "upgrade": lambda v: t.upgrade(v),
        "page": lambda v: t.scan().page(v, v), "snapshot": lambda v: t.snapshot(v),
        "warehouse.table": lambda v: wh.table(v),
        "warehouse.create_table(schema)": lambda v: wh.create_table("db.x", v),
        "warehouse.create_table(name)": lambda v: wh.create_table(v, "id long"),
        "icenb.open": lambda v: icenb.open(v),
    }


def test_bad_argument_types_are_named(tmp_path: Path) -> None:
    raw = []
    for name, call in _calls(tmp_path).items():
        for value in BAD:
            try:
                call(value)
            except IcebergError:
                continue
            except Exception as e:
                raw.append(f"{name}({value!r}): {type(e).__name__}: {e}")
    assert not raw, "\n".join(raw)


@pytest.mark.parametrize("value", [5, [1], "key=value"])
def test_set_properties_needs_a_mapping(tmp_path: Path, value: Any) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    with pytest.raises(IcebergError) as err:
        t.set_properties(value)
    assert err.value.field == "properties"


def test_a_timestamp_out_of_range_is_named_in_inspect(tmp_path: Path) -> None:
    """A snapshot timestamp-ms of 2**62 (damaged or hostile metadata) raised OverflowError
    in inspect; it is an InvalidMetadata naming the field and value (issue 17)."""
    import json

    from icenb.errors import InvalidMetadata

    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    t.append([{"id": 1}])
    location = Path(t.metadata_location)
    doc = json.loads(location.read_text())
    doc["snapshots"][0]["timestamp-ms"] = 2**62
    doc["snapshot-log"][0]["timestamp-ms"] = 2**62
    location.write_text(json.dumps(doc))
    damaged = icenb.open(str(location))
    for name in ("snapshots", "history", "partitions"):
        with pytest.raises(InvalidMetadata) as err:
            getattr(damaged.inspect, name)()
        assert err.value.field == "timestamp-ms" and err.value.value == 2**62
    assert "Table" in repr(damaged)  # the repr still draws


def test_ref_names_and_times_are_named(tmp_path: Path) -> None:
    """A NUL in a branch name was accepted; a time before the first snapshot was reported in
    epoch milliseconds only (now also as the ISO time the user typed)."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    t.append([{"id": 1}])
    with pytest.raises(IcebergError, match="control characters"):
        t.create_branch("a\x00b")
    assert set(t.refs) == {"main"}
    for call in (lambda: t.at("1999-01-01T00:00:00"), lambda: t.rollback_to("1999-01-01")):
        with pytest.raises(IcebergError, match=r"1999-01-01T00:00:00\.000Z"):
            call()
