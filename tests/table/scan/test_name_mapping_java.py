"""Files without field ids and reserved ids, read by Iceberg Java 1.10 (Spark 3.5) and icenb
alike; one JVM batch for the module.

- A pyarrow file registered in place reads through the nested name mapping (struct fields, list
  ``element``, map ``key``/``value``) as Java's ``ApplyNameMapping`` reads it, fully and
  partially mapped (spec: "Column Projection", Appendix C "Name Mapping Serialization").
- Metadata another engine wrote with a reserved field id reads in both (spec: "Reserved Field
  IDs" binds writers; Java reads such a table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.spec.manifest import FileFormat
from icenb.spec.properties import NAME_MAPPING
from icenb.table.table import Table
from tests.spec.test_reserved_field_ids import foreign_table
from tests.table.scan.test_name_mapping import MAPPING, register, write
from tests.table.scan.test_task_reader import _icenb_rows, run_java_read


def _partial() -> list[dict[str, Any]]:
    """:data:`MAPPING` without ``y`` in the points' struct. (Java 1.10 fails to read a map whose
    value struct has no mapped child - "key ... is not in the store" - so that case of
    test_name_mapping.py, null for icenb, is not compared.)"""
    partial: list[dict[str, Any]] = json.loads(json.dumps(MAPPING))
    partial[3]["fields"][0]["fields"] = [{"field-id": 9, "names": ["x", "px"]}]
    return partial


@pytest.fixture(scope="module")
def reads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Table, dict[str, Any]]]:
    """Each case's table (as icenb reads it) and Java's read of the same metadata file."""
    root: Path = tmp_path_factory.mktemp("name_mapping_java")
    wh = icenb.warehouse(root / "wh")
    tables: dict[str, Table] = {}
    for name, fmt, large, mapping in [
            ("parquet_large", FileFormat.PARQUET, True, MAPPING),
            ("parquet_partial", FileFormat.PARQUET, False, _partial()),
            ("orc", FileFormat.ORC, False, MAPPING)]:
        t = register(wh, f"db.{name}", write(root, fmt, large), fmt, 2)
        t.set_properties({NAME_MAPPING: json.dumps(mapping)})
        tables[name] = t.refresh()
    tables["reserved_id"] = foreign_table(root / "foreign")
    results = run_java_read([{"metadata_file": t.metadata_location} for t in tables.values()])
    return {name: (t, r) for (name, t), r in zip(tables.items(), results, strict=True)}


@pytest.mark.parametrize("case", ["parquet_large", "parquet_partial", "orc", "reserved_id"])
def test_java_reads_the_rows_icenb_reads(reads: dict[str, tuple[Table, dict[str, Any]]],
                                         case: str) -> None:
    table, java = reads[case]
    assert java["ok"], java
    icenb_rows = table.to_arrow()
    assert java["columns"] == icenb_rows.column_names
    assert sorted(json.dumps(r, sort_keys=True) for r in java["rows"]) == _icenb_rows(icenb_rows)
    if case != "reserved_id":  # the mapped values are really there (not nulls on both sides)
        assert icenb_rows.column("addr").null_count == 1
