"""Reserved field ids (spec: "Reserved Field IDs"): ids above 2147483447 (Integer.MAX_VALUE -
200) belong to metadata columns such as ``_file`` and ``_pos``; a table must not use them.

As Iceberg Java 1.10: a new table's schema gets fresh ids (``TableMetadata.newTableMetadata``
renumbers it, so an id the caller chose never reaches the table), and metadata written by another
engine that already uses a reserved id still reads. Stricter than Java, as the spec says tables
must not use them: icenb never commits a schema with such an id, and names the field, the id and
the range when it refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.schema import MAX_FIELD_ID, Schema
from icenb.spec.table_metadata import to_json_string
from icenb.spec.table_updates import AddSchema, SetCurrentSchema
from icenb.spec.types import IntegerType, LongType, NestedField, StringType, StructType
from icenb.table.table import Table
from tests.spec.test_table_updates import base_table, commit, to_doc

RESERVED = 2147483500
RANGE = "2147483448..2147483647"


def test_the_limit_is_integer_max_value_minus_200() -> None:
    assert MAX_FIELD_ID == 2147483447 == 2**31 - 1 - 200


def test_create_table_renumbers_a_reserved_id_as_java_does(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", Schema(NestedField(RESERVED, "x", IntegerType()),
                                       NestedField(MAX_FIELD_ID + 1, "y", StringType())))
    assert [(f.field_id, f.name) for f in t.schema.fields] == [(1, "x"), (2, "y")]
    assert t.metadata.last_column_id == 2


@pytest.mark.parametrize(("schema", "name", "fid"), [
    (Schema(NestedField(1, "id", LongType()), NestedField(RESERVED, "odd", StringType())),
     "odd", RESERVED),
    (Schema(NestedField(1, "id", LongType()), NestedField(MAX_FIELD_ID + 1, "edge", LongType())),
     "edge", MAX_FIELD_ID + 1),
    (Schema(NestedField(1, "id", LongType()),
            NestedField(4, "s", StructType(NestedField(2**31 - 1, "inner", IntegerType())))),
     "s.inner", 2**31 - 1),
])
def test_adding_a_schema_with_a_reserved_id_is_refused_naming_field_id_and_range(
        schema: Schema, name: str, fid: int) -> None:
    md = base_table()
    before = to_doc(md)
    with pytest.raises(ValidationError) as e:
        commit(md, AddSchema(schema), SetCurrentSchema())
    assert (e.value.field, e.value.value) == (name, fid)
    assert f"'{name}'" in str(e.value) and str(fid) in str(e.value) and RANGE in str(e.value)
    assert "Reserved Field IDs" in str(e.value)
    assert to_doc(md) == before


def test_the_largest_allowed_id_is_accepted() -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(MAX_FIELD_ID, "last", LongType()))
    md = commit(base_table(), AddSchema(schema), SetCurrentSchema())
    assert md.schema.find_field_id("last") == MAX_FIELD_ID
    assert md.last_column_id == MAX_FIELD_ID


def foreign_table(root: Path) -> Table:
    """A table whose metadata another engine wrote with column ``odd`` at a reserved id."""
    wh = icenb.warehouse(root / "wh")
    t = wh.create_table("db.t", "id long")
    t.append(pa.table({"id": [1, 2]}))
    doc = json.loads(to_json_string(t.metadata))
    schema = next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])
    schema["fields"].append({"id": RESERVED, "name": "odd", "type": "string", "required": False})
    doc["last-column-id"] = RESERVED
    path = root / "foreign.metadata.json"
    path.write_text(json.dumps(doc))
    wh.catalog.register_table(("db", "foreign"), str(path))
    return wh.table("db.foreign")


@pytest.fixture
def foreign(tmp_path: Path) -> Table:
    return foreign_table(tmp_path)


def test_a_table_another_engine_wrote_with_a_reserved_id_still_reads(foreign: Table) -> None:
    assert foreign.schema.find_field_id("odd") == RESERVED
    assert foreign.to_arrow().to_pylist() == [{"id": 1, "odd": None}, {"id": 2, "odd": None}]


def test_evolving_such_a_table_is_refused_naming_the_reserved_id(foreign: Table) -> None:
    before = foreign.metadata_location
    with pytest.raises(ValidationError) as e, foreign.update_schema() as update:
        update.add_column("more", "int")
    assert (e.value.field, e.value.value) == ("last-column-id", RESERVED + 1)
    assert RANGE in str(e.value)
    with pytest.raises(ValidationError) as e, foreign.update_schema() as update:
        update.rename_column("id", "key")
    assert (e.value.field, e.value.value) == ("odd", RESERVED)
    assert foreign.refresh().metadata_location == before
