"""Null variant values in an optional column are written as a null of the variant group
(spec: "Variant"; Appendix A: a ``group`` of ``metadata`` and ``value``, required inside it),
whether the column is omitted, passed as None, as an all-null Arrow column, or from pandas;
nested in a struct, list or map too. Non-null variant values are refused (icenb cannot write
them yet) with nothing written. The same null-group rule covers a struct with a required child.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import UnsupportedFeature, ValidationError
from icenb.table.table import Table

#: A variant as its unshredded Parquet parts: metadata v1 with no keys, the int8 value 42.
VARIANT_42 = {"metadata": b"\x01\x00\x00", "value": b"\x0c\x2a"}
VARIANT_ARROW = pa.struct([("metadata", pa.binary()), ("value", pa.binary())])


def variant_table(root: Path, name: str = "db.v") -> Table:
    return icenb.warehouse(root).create_table(name, "id long, v variant", format_version=3)


def nested_table(root: Path) -> Table:
    return icenb.warehouse(root).create_table(
        "db.n", "id long, s struct<a: int, v: variant>, l list<variant>, "
        "m map<string, variant>, pt struct<x: double not null>", format_version=3)


def appended_variant_nulls(t: Table) -> Table:
    """Every way a null variant reaches an append, one append each (ids 1-6)."""
    t.append([{"id": 1}])
    t.append([{"id": 2, "v": None}])
    t.append(pd.DataFrame({"id": [3], "v": [None]}))
    t.append(pa.table({"id": [4], "v": pa.nulls(1)}))
    t.append(pa.table({"id": [5, 6], "v": pa.array([None, None], VARIANT_ARROW)}))
    return t


def appended_nested_nulls(t: Table) -> Table:
    """Null variants under a null, a set and a partly given struct; in lists and maps (ids 1-3)."""
    t.append([{"id": 1},
              {"id": 2, "s": {"a": 1}, "l": [None, None], "m": {"k": None}},
              {"id": 3, "s": {"a": 2, "v": None}, "l": [], "pt": {"x": 1.5}}])
    return t


def _rows(t: Table) -> list[dict[str, Any]]:
    return sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])


def test_null_variants_read_back_as_nulls(tmp_path: Path) -> None:
    t = appended_variant_nulls(variant_table(tmp_path))
    assert _rows(t) == [{"id": i, "v": None} for i in range(1, 7)]
    assert len(t.snapshots) == 5


def test_the_variant_group_is_optional_and_its_parts_required(tmp_path: Path) -> None:
    t = variant_table(tmp_path)
    t.append([{"id": 1}])
    path = t.inspect.files().column("file_path")[0].as_py().removeprefix("file://")
    group = pq.read_schema(path).field("v")
    assert group.nullable
    assert [(f.name, f.type, f.nullable) for f in group.type] == [
        ("metadata", pa.binary(), False), ("value", pa.binary(), False)]
    # Appendix A: metadata and value carry no field ids.
    assert all(not (f.metadata or {}).get(b"PARQUET:field_id") for f in group.type)
    assert pq.read_table(path).column("v").null_count == 1


def test_nested_null_variants_and_a_null_struct_with_a_required_child(tmp_path: Path) -> None:
    t = appended_nested_nulls(nested_table(tmp_path))
    assert _rows(t) == [
        {"id": 1, "s": None, "l": None, "m": None, "pt": None},
        {"id": 2, "s": {"a": 1, "v": None}, "l": [None, None], "m": [("k", None)], "pt": None},
        {"id": 3, "s": {"a": 2, "v": None}, "l": [], "m": None, "pt": {"x": 1.5}}]


@pytest.mark.parametrize("data", [
    [{"id": 1, "v": None}, {"id": 2, "v": VARIANT_42}],
    pa.table({"id": [1, 2], "v": pa.array([None, VARIANT_42], VARIANT_ARROW)}),
], ids=["rows", "arrow"])
def test_a_non_null_variant_is_refused_naming_field_and_row(tmp_path: Path, data: Any) -> None:
    t = variant_table(tmp_path)
    with pytest.raises(UnsupportedFeature, match=r"non-null variant value \(row 1\)") as err:
        t.append(data)
    assert err.value.field == "v"
    assert len(t.refresh().snapshots) == 0
    assert not list((tmp_path / "db" / "v").rglob("*.parquet"))


@pytest.mark.parametrize("row, field", [
    ({"id": 1, "s": {"a": 1, "v": VARIANT_42}}, "s.v"),
    ({"id": 1, "l": [None, VARIANT_42]}, "l.element"),
    ({"id": 1, "m": {"k": VARIANT_42}}, "m.value"),
])
def test_a_nested_non_null_variant_is_refused(tmp_path: Path, row: dict[str, Any],
                                              field: str) -> None:
    t = nested_table(tmp_path)
    with pytest.raises(UnsupportedFeature, match=r"\(row 1\)") as err:
        t.append([{"id": 0}, row])
    assert err.value.field == field and len(t.refresh().snapshots) == 0


def test_a_variant_under_a_null_struct_is_not_looked_at(tmp_path: Path) -> None:
    """Arrow keeps child values under a null parent; they are not the row's value."""
    t = nested_table(tmp_path)
    v = pa.array([VARIANT_42], VARIANT_ARROW)
    s = pa.StructArray.from_arrays([pa.array([7], pa.int32()), v], names=["a", "v"],
                                   mask=pa.array([True]))
    t.append(pa.table({"id": [1], "s": s}))
    assert _rows(t)[0]["s"] is None


def test_a_required_variant_takes_no_null(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.r", "id long, v variant not null",
                                               format_version=3)
    with pytest.raises(ValidationError, match="required column is missing"):
        t.append([{"id": 1}])
    with pytest.raises(ValidationError, match="null value in required column at row 0"):
        t.append([{"id": 1, "v": None}])


def test_a_variant_column_takes_no_other_arrow_type(tmp_path: Path) -> None:
    t = variant_table(tmp_path)
    with pytest.raises(ValidationError) as err:
        t.append(pa.table({"id": [1], "v": pa.array([None], pa.string())}))
    assert err.value.field == "v"
    with pytest.raises(ValidationError, match="struct of binary metadata and value"):
        t.append(pa.table({"id": [1], "v": pa.array([None], pa.struct([("x", pa.int32())]))}))
