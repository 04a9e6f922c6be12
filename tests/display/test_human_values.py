"""Bounds and partition values as human values in every view; hex only on request (issue 22)."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display.registry import render
from icenb.spec import human
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    DateType,
    DecimalType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    UUIDType,
)
from icenb.spec.values import to_bytes

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "ts", TimestampType(), required=False),
                NestedField(3, "d", DateType(), required=False),
                NestedField(4, "name", StringType(), required=False),
                NestedField(5, "amt", DecimalType(9, 2), required=False),
                NestedField(6, "u", UUIDType(), required=False))


def _spec(*fields: tuple[int, str, str]) -> PartitionSpec:
    return PartitionSpec(0, tuple(PartitionField((src,), 1000 + i, parse_transform(tr), name)
                                  for i, (src, tr, name) in enumerate(fields)))


@pytest.mark.parametrize(("source", "transform", "value", "shown"), [
    (2, "month", 682, "2026-11"),
    (2, "month", 682.0, "2026-11"),           # a nullable int that went through pandas
    (2, "day", 20784, "2026-11-27"),
    (2, "day", dt.date(2026, 11, 27), "2026-11-27"),   # Arrow date32 of a day partition
    (2, "hour", 20784 * 24 + 6, "2026-11-27-06"),
    (2, "year", 56, "2026"),
    (1, "bucket[4]", 1.0, "1"),
    (1, "bucket[4]", 3, "3"),
    (4, "truncate[2]", "ad", "ad"),
    (3, "identity", dt.date(2026, 11, 27), "2026-11-27"),
    (3, "identity", 20784, "2026-11-27"),
    (5, "identity", decimal.Decimal("12.50"), "12.50"),
    (2, "month", None, "null"),
])
def test_partition_values_by_transform(source: int, transform: str, value: Any,
                                       shown: str) -> None:
    pf = PartitionField((source,), 1000, parse_transform(transform), "p")
    assert human.partition_value_text(pf.transform, SCHEMA.find_type(source), value) == shown


def test_partition_text_tuple_and_struct() -> None:
    spec = _spec((2, "month", "ts_month"), (1, "bucket[8]", "id_bucket"))
    assert human.partition_text(spec, SCHEMA, (682, 5)) == "ts_month=2026-11, id_bucket=5"
    assert human.partition_text(spec, SCHEMA, {"ts_month": 682, "id_bucket": 5.0}) == (
        "ts_month=2026-11, id_bucket=5")
    assert human.partition_text(spec, SCHEMA, (682, 5), raw=True) == "ts_month=682, id_bucket=5"


@pytest.mark.parametrize(("fid", "value", "shown"), [
    (1, 17, "17"),
    (2, 1795759500000000, "2026-11-27T06:05:00"),
    (3, 20784, "2026-11-27"),
    (4, "ada", "ada"),
    (5, decimal.Decimal("12.50"), "12.50"),
    (6, uuid.UUID("12345678-1234-5678-1234-567812345678"),
     "12345678-1234-5678-1234-567812345678"),
])
def test_bounds_decoded_by_column_type(fid: int, value: Any, shown: str) -> None:
    t = SCHEMA.find_type(fid)
    raw = to_bytes(t, value)
    assert human.bound_text(t, raw) == shown
    assert human.bound_text(t, raw, raw_hex=True) == raw.hex()
    assert human.bound_text(None, raw) == raw.hex()        # type unknown: hex


@pytest.fixture
def table(tmp_path: Path) -> Any:
    wh = icenb.warehouse(str(tmp_path))
    t = wh.create_table("s.e", "id long, ts timestamp, d date, name string, amt decimal(9,2)",
                        partition_by=["month(ts)", "bucket(4, id)", "day(d)"],
                        format_version=2)
    t.append([{"id": 1, "ts": dt.datetime(2026, 11, 27, 6, 5), "d": dt.date(2026, 11, 27),
               "name": "ada", "amt": decimal.Decimal("12.50")},
              {"id": 5, "ts": dt.datetime(2026, 11, 28, 7, 0), "d": dt.date(2026, 11, 27),
               "name": "bob", "amt": decimal.Decimal("1.25")}])
    return t


def test_data_file_and_manifest_reprs_show_values(table: Any) -> None:
    tree = table.metadata_tree()
    f = next(e for _, e in tree.entries()).file
    text = render(f).text
    assert "ts_month=2026-11" in text and "d_day=2026-11-27" in text and "682" not in text
    assert "2026-11-27T06:05:00" in render(f).html or "2026-11-28T07:00:00" in text
    assert "ada" in text or "bob" in text
    assert "(hex)" not in text
    manifest = render(tree.index.manifests[0].manifest).text
    assert "ts_month" in manifest and "2026-11" in manifest and "(hex)" not in manifest
    with icenb.set_options(display_raw_bounds=True):
        raw = render(f).text
        assert "lower (hex)" in raw and "ts_month=682" in raw
        assert "(hex)" in render(tree.index.manifests[0].manifest).text


def test_metadata_tree_labels_partitions_by_transform(table: Any) -> None:
    r = render(table.metadata_tree())
    assert "ts_month=2026-11" in r.text and "d_day=2026-11-27" in r.text
    assert "ts_month=682" not in r.text + r.html


def test_raw_bounds_option_is_validated() -> None:
    with pytest.raises(icenb.errors.ValidationError):
        icenb.set_options(display_raw_bounds=1)


def test_icenb_session_start_keeps_child_stderr_out_of_the_cell(tmp_path: Path,
                                                                capfd: Any) -> None:
    """A child launched while icenb starts its JVM writes its console to the log file, not to
    this process's stderr (what a notebook kernel shows); stderr works again afterwards."""
    from icenb.spark.session import _jvm_stderr_to

    log = tmp_path / "spark.log"
    code = "import sys; sys.stderr.write('WARN NativeCodeLoader: noise\\n')"
    with _jvm_stderr_to(str(log)):
        subprocess.run([sys.executable, "-c", code], check=True)
    os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert "WARN" not in err and "after" in err
    assert "WARN NativeCodeLoader" in log.read_text()


def test_inspect_display_shows_values_and_keeps_the_data(table: Any) -> None:
    from icenb.display.inspect_repr import arrow_table_rendered

    files = table.inspect.data_files()
    shown = arrow_table_rendered(files.select(["partition", "lower_bounds"])).html
    assert "ts_month: 2026-11" in shown and "d_day: 2026-11-27" in shown
    assert "2026-11-27T06:05:00" in shown and "12.50" in shown and "0x" not in shown
    parts = arrow_table_rendered(table.inspect.partitions().select(["partition"])).html
    assert "ts_month: 2026-11" in parts and "682" not in parts
    # the data returned to users keeps its spec types: month ordinals, serialized bounds
    assert {p["ts_month"] for p in files.column("partition").to_pylist()} == {682}
    assert all(isinstance(v, bytes) for m in files.column("lower_bounds").to_pylist()
               for _, v in m)
    with icenb.set_options(display_raw_bounds=True):
        raw = arrow_table_rendered(files.select(["partition", "lower_bounds"])).html
        assert "ts_month: 682" in raw and "0x" in raw


def test_partition_evolution_preview_shows_month_and_hour_as_paths_do(table: Any) -> None:
    from icenb.widgets import PartitionEvolution

    pe = PartitionEvolution(table)
    month = pe.transform_preview("month(ts)", ["2026-11-27T06:05:00"])
    assert month.rows[0][2] == 682 and month.rows[0][3] == "2026-11"
    hour = pe.transform_preview("hour(ts)", ["2026-11-27T06:05:00"])
    assert hour.rows[0][3] == "2026-11-27-06"


def test_attached_types_stay_out_of_the_object_and_go_with_it() -> None:
    """A DataFile rebuilt from its fields (``type(f)(**f.__dict__)``), copied or pickled sees only
    its fields; the registry forgets an object that is gone."""
    import gc

    from icenb.spec import human

    class Probe:
        pass

    probe = Probe()
    human.attach_types(probe, [], None)
    assert human.attached_types(probe) is not None and probe.__dict__ == {}
    before = len(human._ATTACHED)
    del probe
    gc.collect()
    assert len(human._ATTACHED) == before - 1
