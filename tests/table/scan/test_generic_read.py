"""Tables Spark 3.5 cannot load, checked row for row against Iceberg Java's generic reader.

Iceberg Java's Spark 3.5 integration fails on time, timestamp_ns, variant, geometry, geography
and unknown columns, so tests/table/scan/test_task_reader.py cannot compare those tables. Here
every snapshot and every ref of them is read by ``IcebergGenerics`` (which reads Parquet, ORC
and Avro files and applies every kind of delete; tests/reference/java_generic_read.py) and by
``Table.at(...).to_arrow()``, both turned into the canonical JSON described there.

Spec: "Column Projection", "Row-level deletes", Appendix A (type mappings), "Point in Time
Reads" (a snapshot or tag reads with the snapshot's schema, a branch with the current one).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import IcebergError
from tests.reference.java_generic_read import (
    date_text,
    float_value,
    sorted_pairs,
    time_text,
    timestamp_text,
)
from tests.reference_fixtures import JavaTables, ReferenceEnvError, run_reference_batch
from tests.table.scan.test_task_reader import _spark_unsupported

#: The corpus tables Spark 3.5 cannot load (see SPARK_UNSUPPORTED in test_task_reader.py).
GENERIC_TABLES = (
    "db.java_v1_special_types",
    "db.java_v2_special_types",
    "db.java_v3_defaults",
    "db.java_v2_file_formats",
    "db.java_v3_types",
)

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _plain_type(t: pa.DataType) -> pa.DataType:
    """``t`` with timestamps, times and dates as their integers (exact, unlike ``as_py``)."""
    if pa.types.is_timestamp(t) or pa.types.is_time(t):
        return pa.int64()
    if pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        # Nullable: a null struct's children may hold nulls even where they are required.
        return pa.struct([t.field(i).with_type(_plain_type(t.field(i).type)).with_nullable(True)
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_plain_type(t.key_type)),
                       t.item_field.with_type(_plain_type(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_plain_type(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_plain_type(t.value_type)))
    return t


def _canonical(value: Any, t: pa.DataType) -> Any:
    """A value of ``t`` (read through :func:`_plain_type`) in java_generic_read's JSON form."""
    if value is None:
        return None
    if pa.types.is_timestamp(t):
        per_second = _PER_SECOND[t.unit]
        seconds, fraction = divmod(value, per_second)
        return timestamp_text(seconds, fraction * (1_000_000_000 // per_second))
    if pa.types.is_time(t):
        return time_text(value * (1_000_000_000 // _PER_SECOND[t.unit]))
    if pa.types.is_date32(t):
        return date_text(value)
    if pa.types.is_struct(t):
        return [_canonical(value[t.field(i).name], t.field(i).type)
                for i in range(t.num_fields)]
    if pa.types.is_map(t):
        return sorted_pairs([[_canonical(k, t.key_type), _canonical(v, t.item_type)]
                             for k, v in value])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_canonical(v, t.value_type) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float):
        return float_value(value)
    if pa.types.is_decimal(t):
        return str(value)
    return value


def canonical_rows(table: pa.Table) -> list[list[Any]]:
    """Rows of an Arrow table as lists of canonical JSON values."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        plain_type = _plain_type(field.type)
        plain = (column if plain_type == field.type else column.cast(plain_type)).to_pylist()
        columns.append([_canonical(v, field.type) for v in plain])
    return [list(row) for row in zip(*columns, strict=True)]


@dataclass(frozen=True)
class GenericCase:
    """One read done by Java's generic reader (``request``) and icenb (``read``)."""

    table: str
    label: str
    request: dict[str, Any]
    read: Callable[[], pa.Table]

    def __str__(self) -> str:
        return f"{self.table} {self.label}"


def _cases(java_tables: JavaTables, name: str) -> list[GenericCase]:
    location = str(java_tables.location(name))
    table = icenb.open(location)
    cases = [GenericCase(name, f"snapshot {s.snapshot_id}",
                         {"location": location, "snapshot_id": s.snapshot_id},
                         table.at(s.snapshot_id).to_arrow)
             for s in table.snapshots]
    for ref_name, ref in sorted(table.refs.items()):
        kind = "branch" if ref.is_branch else "tag"
        cases.append(GenericCase(name, f"{kind} {ref_name}", {"location": location,
                                                             "ref": ref_name},
                                 table.at(ref_name).to_arrow))
    return cases


@pytest.fixture(scope="module")
def generic_reads(java_tables: JavaTables) -> list[tuple[GenericCase, dict[str, Any]]]:
    """Every snapshot and ref of the tables Spark cannot load, read by Java (one JVM)."""
    cases = [c for name in GENERIC_TABLES for c in _cases(java_tables, name)]
    try:
        results = run_reference_batch("java_generic_read.py", [c.request for c in cases])
    except ReferenceEnvError as exc:
        pytest.fail(str(exc), pytrace=False)
    return list(zip(cases, results, strict=True))


def _dumps(rows: list[list[Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True) for r in rows)


def _mismatch(case: GenericCase, java: dict[str, Any]) -> str | None:
    """Why icenb's read differs from Java's, column by column (None: they agree)."""
    if not java["ok"]:
        return f"{case}: Java failed: {java['error']}"
    try:
        table = case.read()
    except IcebergError as e:
        return f"{case}: icenb raised {e!r}; Java read {len(java['rows'])} rows"
    if table.column_names != java["columns"]:
        return f"{case}: columns {table.column_names} != Java's {java['columns']}"
    got = canonical_rows(table)
    if _dumps(got) == _dumps(java["rows"]):
        return None
    # Rows paired by their first column (the tables' identifier field ``id``).
    ours = {json.dumps(r[0]): r for r in got}
    theirs = {json.dumps(r[0]): r for r in java["rows"]}
    lines = [f"{case}: {len(got)} rows vs Java's {len(java['rows'])}"]
    for key in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(key), theirs.get(key)
        if a is None or b is None:
            side = "Java" if a is None else "icenb"
            lines.append(f"  {table.column_names[0]}={key}: only in {side}")
            continue
        for column, x, y in zip(table.column_names, a, b, strict=True):
            if x != y:
                lines.append(f"  {table.column_names[0]}={key} column {column}: "
                             f"icenb {x!r}, Java {y!r}")
    return "\n".join(lines)


def test_every_snapshot_and_ref_reads_as_javas_generic_reader_reads_it(
        java_tables: JavaTables, generic_reads: list[tuple[GenericCase, dict[str, Any]]]) -> None:
    expected = sum(len(icenb.open(java_tables.location(n)).snapshots)
                   + len(icenb.open(java_tables.location(n)).refs) for n in GENERIC_TABLES)
    assert len(generic_reads) == expected
    assert {c.table for c, _ in generic_reads} == set(GENERIC_TABLES)
    problems = [m for c, j in generic_reads if (m := _mismatch(c, j)) is not None]
    assert not problems, "\n".join(problems)


def test_generic_tables_are_all_the_tables_spark_cannot_load(java_tables: JavaTables) -> None:
    unloadable = set()
    for entry in java_tables.entries("table"):
        table = icenb.open(java_tables.latest(entry["name"]).path)
        if any(_spark_unsupported(f.field_type) for f in table.schema.fields):
            unloadable.add(entry["name"])
    assert unloadable == set(GENERIC_TABLES)


def _result(reads: list[tuple[GenericCase, dict[str, Any]]], table: str,
            label: str) -> tuple[GenericCase, dict[str, Any]]:
    case, java = next((c, j) for c, j in reads if c.table == table and c.label == label)
    assert java["ok"], java.get("error")
    return case, java


def test_equality_deletes_in_orc_and_avro_are_applied(
        java_tables: JavaTables, generic_reads: list[tuple[GenericCase, dict[str, Any]]]) -> None:
    name = "db.java_v2_file_formats"
    table = icenb.open(java_tables.location(name))
    before, after = table.snapshots[-2].snapshot_id, table.snapshots[-1].snapshot_id
    deleted = {10_000_000_010, 10_000_000_020}  # the first ORC and the first Avro row
    for label in (f"snapshot {before}", f"snapshot {after}", "branch main"):
        case, java = _result(generic_reads, name, label)
        java_ids = {r[0] for r in java["rows"]}
        icenb_ids = set(case.read().column("id").to_pylist())
        assert java_ids == icenb_ids
        assert (deleted <= java_ids) == (label == f"snapshot {before}"), label
        assert len(java_ids) == (9 if label == f"snapshot {before}" else 7)


def test_snapshot_reads_use_their_schema_and_branch_reads_the_current_one(
        generic_reads: list[tuple[GenericCase, dict[str, Any]]]) -> None:
    name = "db.java_v3_types"
    _, branch = _result(generic_reads, name, "branch main")
    case, snapshot = _result(generic_reads, name, f"snapshot {branch['snapshot_id']}")
    assert snapshot["columns"] == ["id", "ts_ns", "tstz_ns", "u", "f16", "t", "st"]
    assert branch["columns"][:7] == snapshot["columns"]
    assert {"variant", "unknown", "geometry", "geography"} <= set(branch["columns"])
    assert case.read().column_names == snapshot["columns"]


def test_nanosecond_timestamps_keep_every_digit(
        generic_reads: list[tuple[GenericCase, dict[str, Any]]]) -> None:
    case, java = _result(generic_reads, "db.java_v3_types", "branch main")
    [row] = java["rows"]
    assert row[1:3] == ["2024-05-06T07:08:09.123456789", "2024-05-06T07:08:09.987654321"]
    [ours] = canonical_rows(case.read())
    assert ours[1:3] == row[1:3]


def test_columns_added_with_defaults_read_their_initial_default(
        generic_reads: list[tuple[GenericCase, dict[str, Any]]]) -> None:
    case, java = _result(generic_reads, "db.java_v3_defaults", "branch main")
    [row] = java["rows"]
    assert row[-2:] == [5, "x"]  # added_with_default, added_required: not in the data file
    [ours] = canonical_rows(case.read())
    assert ours == row


def test_canonical_form_of_arrow_values() -> None:
    """The icenb side of the canonical JSON, on values whose Java form is known."""
    table = pa.table({
        "ts": pa.array([-1], pa.timestamp("us")),
        "tz_ns": pa.array([1_714_979_289_123_456_789], pa.timestamp("ns", tz="UTC")),
        "t": pa.array([86_399_999_999], pa.time64("us")),
        "d": pa.array([-719_162], pa.date32()),
        "f": pa.array([float("nan")], pa.float32()),
        "m": pa.array([[(b"\x01", [1.5])]], pa.map_(pa.binary(1), pa.list_(pa.float64()))),
        "st": pa.array([{"metadata": b"\x01", "value": b""}],
                       pa.struct([("metadata", pa.binary()), ("value", pa.binary())])),
    })
    assert canonical_rows(table) == [[
        "1969-12-31T23:59:59.999999000", "2024-05-06T07:08:09.123456789",
        "23:59:59.999999000", "0001-01-01", "nan", [["01", [1.5]]], ["01", ""]]]
