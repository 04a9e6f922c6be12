"""ORC and Avro data and delete files, read through a table and checked row for row against
Iceberg Java (Spark 3.5) for every snapshot.

Spec: "Column Projection" (ids, name mapping), Appendix A (ORC and Avro type mappings),
"Row-level deletes".
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from icenb.io.file_io import FileIO
from icenb.spec.manifest import FileContent, FileFormat
from icenb.table import plan_files
from icenb.table.table import open_table
from tests.reference_fixtures import JavaTables
from tests.table.scan.test_task_reader import _icenb_rows, run_java_read

# Tables whose data (and delete) files are ORC or Avro; every snapshot is compared with Java.
FORMAT_TABLES = ("db.v2_orc", "db.v2_avro", "db.v3_format_switch", "db.v2_orc_imported")


@pytest.fixture(scope="module")
def java_format_rows(java_tables: JavaTables) -> dict[tuple[str, int], dict[str, Any]]:
    """Java's rows of every snapshot of the format tables (one JVM)."""
    keys = [(name, s.snapshot_id) for name in FORMAT_TABLES
            for s in open_table(java_tables.location(name)).metadata.snapshots]
    results = run_java_read([{"location": str(java_tables.location(name)), "snapshot_id": sid}
                             for name, sid in keys])
    return dict(zip(keys, results, strict=True))


@pytest.mark.parametrize("name", FORMAT_TABLES)
def test_every_snapshot_reads_as_java_reads_it(
        java_tables: JavaTables, java_format_rows: dict[tuple[str, int], dict[str, Any]],
        name: str) -> None:
    table = open_table(java_tables.location(name))
    assert len(table.metadata.snapshots) >= 2
    for snapshot in table.metadata.snapshots:
        sid = snapshot.snapshot_id
        java = java_format_rows[(name, sid)]
        assert java["ok"], java.get("error")
        rows = table.at(sid).to_arrow()
        assert rows.column_names == java["columns"], (name, sid)
        expected = sorted(json.dumps(r, sort_keys=True) for r in java["rows"])
        assert _icenb_rows(rows) == expected, (name, sid)


def _file_kinds(java_tables: JavaTables, names: tuple[str, ...]) -> set[tuple[Any, Any]]:
    kinds: set[tuple[Any, Any]] = set()
    for name in names:
        md = open_table(java_tables.location(name)).metadata
        for s in md.snapshots:
            for task in plan_files(FileIO(), md, snapshot_id=s.snapshot_id).tasks:
                kinds.add((FileContent.DATA, task.data_file.file_format))
                kinds |= {(d.content, d.file_format) for d in task.delete_files}
    return kinds


def test_format_tables_hold_orc_and_avro_data_and_delete_files(java_tables: JavaTables) -> None:
    kinds = _file_kinds(java_tables, (*FORMAT_TABLES, "db.java_v2_file_formats"))
    for fmt in (FileFormat.ORC, FileFormat.AVRO):
        assert (FileContent.DATA, fmt) in kinds
        assert (FileContent.POSITION_DELETES, fmt) in kinds
        assert (FileContent.EQUALITY_DELETES, fmt) in kinds
    assert (FileContent.DATA, FileFormat.PARQUET) in kinds
    assert (FileContent.POSITION_DELETES, FileFormat.PUFFIN) in kinds


def test_imported_orc_file_without_ids_reads_through_the_name_mapping(
        java_tables: JavaTables) -> None:
    table = open_table(java_tables.location("db.v2_orc_imported"))
    rows = table.scan().to_arrow()  # current schema: s renamed to s_renamed after the import
    assert rows.column_names == ["id", "s_renamed", "st", "m"]
    by_id = {r["id"]: r for r in rows.to_pylist()}
    assert by_id[1] == {"id": 1, "s_renamed": "1", "st": {"x": 1, "y": [1, None]},
                        "m": [("k", 1)]}
    assert by_id[10]["s_renamed"] == "ten"


# --------------------------------------------------------------- Java API: special types

_UUID = "f79c3e09677c4bbda4793f349cb785e"


def test_special_types_read_alike_from_parquet_orc_and_avro(java_tables: JavaTables) -> None:
    """uuid, fixed, time, timestamptz, decimal(38), maps with uuid and int keys: the same rows
    written by Java as Parquet, ORC and Avro files read identically (Spark cannot read time
    columns, so this table is checked against the values Java was given)."""
    table = open_table(java_tables.location("db.java_v2_file_formats"))
    rows = table.scan().to_arrow()
    assert rows.schema.field("u").type == pa.binary(16)
    assert rows.schema.field("t").type == pa.time64("us")
    assert rows.schema.field("tstz").type == pa.timestamp("us", tz="UTC")
    by_format: dict[str, list[dict[str, Any]]] = {}
    for r in rows.to_pylist():
        fmt = r["fmt"]
        r["id"] -= 10_000_000_000 + 10 * ("PARQUET", "ORC", "AVRO").index(fmt)
        r.pop("fmt")
        by_format.setdefault(fmt, []).append(r)
    for fmt in by_format:
        by_format[fmt].sort(key=lambda r: r["id"])
    # The equality deletes (one ORC, one Avro file) removed row 0 of the ORC and Avro files.
    assert [r["id"] for r in by_format["PARQUET"]] == [0, 1, 2]
    assert [r["id"] for r in by_format["ORC"]] == [1, 2]
    assert by_format["ORC"] == by_format["PARQUET"][1:]
    assert by_format["AVRO"] == by_format["PARQUET"][1:]
    one = by_format["PARQUET"][1]
    assert one["u"].hex() == _UUID + "1"
    assert one["f16"] == bytes(range(1, 17))
    assert one["t"].isoformat() == "23:59:51.123456"
    assert one["tstz"].isoformat() == "1969-12-31T23:59:51.000001+00:00"
    assert one["ts"].isoformat() == "2024-02-29T12:34:51.500000"
    assert str(one["dec"]) == "-1234567890123456789012345678.0123456781"
    assert one["s"] == {"inner_u": bytes(15) + b"\x01", "inner_f": b"\x00\xff\x01"}
    assert [t.isoformat() if t else None for t in one["l"]] == ["00:00:00.000001", None]
    assert one["m"] == [(bytes.fromhex(_UUID + "1"), 10_000_000_001)]
    assert sorted(one["mi"], key=lambda kv: kv[0]) == [(-1, None), (1, "ünï 1")]
    assert one["b"] == b"\x00\x01" and one["d"].isoformat() == "0001-01-02"
    empty = by_format["AVRO"][1]
    assert empty["id"] == 2 and all(v is None for k, v in empty.items() if k != "id")
