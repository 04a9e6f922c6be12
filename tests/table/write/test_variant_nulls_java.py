"""Null variants icenb wrote, read by Iceberg Java 1.10's generic reader (``IcebergGenerics``,
tests/reference/java_generic_read.py; Spark 3.5 cannot load a variant column) as nulls, in one
JVM batch for the module. Spec: "Variant"; Appendix A (Parquet variant group).

Java 1.10's Parquet variant reader calls commons-lang3's ``Streams.of(Iterable)`` (3.13+), and
the reference JVM has Spark 3.5's commons-lang3 3.12 first on its classpath: every read of a
variant column then fails with ``NoSuchMethodError``, whoever wrote the file. Those reads are
expected failures (:data:`OLD_LANG3`); with commons-lang3 3.16 first on the driver classpath
Java reads these tables as the tests below expect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from icenb.table.table import Table
from tests.reference_fixtures import ReferenceEnvError, run_reference_batch
from tests.table.scan.test_generic_read import canonical_rows
from tests.table.write.test_variant_nulls import (
    appended_nested_nulls,
    appended_variant_nulls,
    nested_table,
    variant_table,
)


@pytest.fixture(scope="module")
def reads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Table, dict[str, Any]]]:
    """Each table as icenb wrote it and Java's read of its current metadata file."""
    root: Path = tmp_path_factory.mktemp("variant_nulls_java")
    tables = {"top": appended_variant_nulls(variant_table(root / "top")),
              "nested": appended_nested_nulls(nested_table(root / "nested"))}
    try:
        results = run_reference_batch("java_generic_read.py",
                                      [{"metadata_file": t.metadata_location}
                                       for t in tables.values()])
    except ReferenceEnvError as exc:
        pytest.fail(str(exc), pytrace=False)
    return {name: (t, r) for (name, t), r in zip(tables.items(), results, strict=True)}


#: The reference JVM's classpath problem (see the module docstring), not a read failure.
OLD_LANG3 = "org.apache.commons.lang3.stream.Streams.of(java.lang.Iterable)"


def _read_by_java(java: dict[str, Any]) -> None:
    if not java["ok"] and OLD_LANG3 in java["error"]:
        pytest.xfail("reference JVM: Spark 3.5's commons-lang3 3.12 lacks Streams.of(Iterable), "
                     "which Java 1.10's Parquet variant reader calls")
    assert java["ok"], java


def _sorted(rows: list[list[Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def test_java_reads_top_level_null_variants_as_nulls(
        reads: dict[str, tuple[Table, dict[str, Any]]]) -> None:
    table, java = reads["top"]
    _read_by_java(java)
    assert java["columns"] == ["id", "v"]
    assert _sorted(java["rows"]) == _sorted([[i, None] for i in range(1, 7)])
    assert _sorted(java["rows"]) == _sorted(canonical_rows(table.to_arrow()))


def test_java_reads_nested_null_variants_as_nulls(
        reads: dict[str, tuple[Table, dict[str, Any]]]) -> None:
    table, java = reads["nested"]
    _read_by_java(java)
    assert _sorted(java["rows"]) == _sorted([
        [1, None, None, None, None],
        [2, [1, None], [None, None], [["k", None]], None],
        [3, [2, None], [], None, [1.5]]])
    assert _sorted(java["rows"]) == _sorted(canonical_rows(table.to_arrow()))
