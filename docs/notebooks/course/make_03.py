"""Write notebooks/course/03-schema-evolution.ipynb.

Run: ``.venv/bin/python docs/notebooks/course/make_03.py``, then execute it with
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
03-schema-evolution.ipynb`` and drop widget state with ``.venv/bin/python
docs/notebooks/course/_course.py clean notebooks/course/03-schema-evolution.ipynb``.
"""

from __future__ import annotations

from _course import Cell, code, md, write

NAME = "03-schema-evolution"

CELLS: list[Cell] = [
    md("schema-question", """
# 03 — Schema evolution: how can a column be renamed, dropped or widened without rewriting a file?

Data files are immutable and a table may hold millions of them, written over years under older
schemas. Iceberg evolves a schema in metadata only (spec: *Schema Evolution*): every column has
a **field id**, data files store that id beside each column (lesson 01 showed it in the
Parquet footer), and readers match columns **by id, never by name or position** (spec:
*Column Projection*). This lesson walks through the spec's rules one act at a time: the spec's
column-projection example, default values, type promotion, reordering, identifier fields,
reserved ids, and name mapping for files that carry no ids at all.
"""),
    code("schema-setup", """
import json
import os
import tempfile

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import icenb
from icenb.errors import IcebergError
from icenb.exercise import check
from icenb.spec import values

pd.set_option("display.width", 120)
root = tempfile.mkdtemp(prefix="icenb-course-")
wh = icenb.warehouse(root)


def rows(table_or_scan):
    \"\"\"Rows as pandas, nulls shown as <NA> whatever the column's type.\"\"\"
    arrow = table_or_scan if isinstance(table_or_scan, pa.Table) else table_or_scan.to_arrow()
    return arrow.to_pandas(types_mapper=pd.ArrowDtype)


def schema_json(table):
    \"\"\"The current schema as the metadata file stores it (Appendix C).\"\"\"
    with open(table.metadata_location.replace("file://", ""), encoding="utf-8") as f:
        metadata = json.load(f)
    current = metadata["current-schema-id"]
    return next(s for s in metadata["schemas"] if s["schema-id"] == current)
"""),
    md("schema-projection-md", """
## 1. The spec's column-projection example

The spec: "a file may be written with schema `1: a int, 2: b string, 3: c double` and read using
projection schema `3: measurement, 2: name, 4: a`. This must select file columns `c` (renamed
to `measurement`), `b` (now called `name`), and a column of `null` values called `a`; in that
order." We write exactly that file, then evolve the table to exactly that schema: rename `c`
and `b`, drop `a`, add a new `a` (a new column gets a new id, 4), and move `measurement` first.
"""),
    code("schema-projection-write", """
readings = wh.create_table("lab.readings", "a int, b string, c double", format_version=3)
readings.append([{"a": 1, "b": "x", "c": 0.5}, {"a": 2, "b": "y", "c": 1.5}])
first = readings.current_snapshot.snapshot_id
data_file = readings.scan().plan().files.column("file_path")[0].as_py().replace("file://", "")
print("columns in the data file:",
      [(f.name, int(f.metadata[b"PARQUET:field_id"])) for f in pq.read_schema(data_file)])
"""),
    md("schema-projection-predict", """
*Predict before you run:* after the evolution, what will the two existing rows read as, column by
column? (No data file is rewritten.)
"""),
    code("schema-projection-evolve", """
with readings.update_schema() as update:
    update.rename_column("c", "measurement")
    update.rename_column("b", "name")
    update.delete_column("a")
    update.add_column("a", "int")
    update.move_first("c")  # moves name the columns as the current schema has them
readings.schema
"""),
    code("schema-projection-read", """
rows(readings)
"""),
    md("schema-projection-explained", """
The file's columns `c` (id 3) and `b` (id 2) are read as `measurement` and `name`; the new `a`
has id 4, which the file does not have, so it reads as `null` — the old `a` (id 1) is still in
the file but no longer in the schema, so it is never read. Renames and drops wrote one new
metadata file and nothing else. The spec's rules for an id missing from a file, in order:
the **identity partition value** from the manifest, a **name mapping** (section 7), the
field's **`initial-default`** (section 2), else **null**.

The old snapshot still reads with the schema it was written with (`schema-id` 0 in its
snapshot), so time travel sees the old names:
"""),
    code("schema-projection-time-travel", """
rows(readings.at(first))
"""),
    md("schema-history-md", """
Every schema the table ever had stays in the metadata file, with its `schema-id`; `last-column-id`
only grows (the dropped id 1 is never reused). `schema_history()` lines the schemas up by field
id:
"""),
    code("schema-history", """
readings.schema_history()
"""),
    md("schema-defaults-md", """
## 2. Default values (format v3)

A column added to a table with data needs a value for the rows already written. Format v3 gives
each field two defaults (spec: *Default values*): **`initial-default`**, the value of the field
in every row written before the field existed, fixed when the field is added; and
**`write-default`**, what a writer stores when it is not given a value, which may change later.
Neither rewrites a file.

*Predict before you run:* we add `unit string` with `initial_default="kPa"`, append one row
without a unit, then change the write default to `"bar"` and append another. What will the four
rows read in `unit`?
"""),
    code("schema-defaults", """
with readings.update_schema() as update:
    update.add_column("unit", "string", initial_default="kPa")
readings.append([{"measurement": 2.5, "name": "z", "a": 3}])
with readings.update_schema() as update:
    update.update_column_default("unit", "bar")
readings.append([{"measurement": 3.5, "name": "w", "a": 4}])
rows(readings).sort_values("measurement", ignore_index=True)
"""),
    md("schema-defaults-json-md", """
The two old rows have no `unit` in their file: they read the `initial-default`. The row appended
while the write default was `kPa` stored `kPa` in its file, and the last one stored `bar`. In the
metadata JSON the defaults are attributes of the field (Appendix C, *Schemas*):
"""),
    code("schema-defaults-json", """
print(json.dumps(schema_json(readings)["fields"][-1], indent=2))
"""),
    md("schema-defaults-rules-md", """
The spec's rules for adding fields: a **required** field needs a non-null default (existing rows
must have a value), and a struct's default may only be `null` or `{}` with the sub-fields'
defaults stored on the sub-fields (the spec's `point {x, y}` table). icenb refuses the first as
the spec says; it does not implement struct defaults (`{}`) yet and refuses those too:
"""),
    code("schema-defaults-refused", """
from icenb.spec.types import IntegerType, NestedField, StructType

point = StructType(NestedField(100, "x", IntegerType(), initial_default=0, write_default=0),
                   NestedField(101, "y", IntegerType(), initial_default=0, write_default=0))
for name, kwargs in [("site", {"field_type": "string", "required": True}),
                     ("point", {"field_type": point, "initial_default": {}})]:
    try:
        with readings.update_schema() as update:
            update.add_column(name, **kwargs)
    except IcebergError as e:
        print(f"{name}: {type(e).__name__}: {e}")
"""),
    md("schema-promotion-md", """
## 3. Type promotion

A column's type may change only by a **widening** promotion, because existing files keep their
old values and old bounds (spec: *Schema Evolution*):

| type | v1, v2 | v3+ |
|---|---|---|
| `int` | `long` | `long` |
| `float` | `double` | `double` |
| `decimal(P, S)` | `decimal(P', S)`, `P' > P` | `decimal(P', S)`, `P' > P` |
| `date` | — | `timestamp`, `timestamp_ns` |
| `unknown` | — | any type |

*Predict before you run:* `a` is an `int`. Which of `long`, `double` and `string` will icenb
accept?
"""),
    code("schema-promotion", """
for new_type in ["long", "double", "string"]:
    try:
        with readings.update_schema() as update:
            update.update_column("a", new_type)
        print(f"int -> {new_type}: accepted")
    except IcebergError as e:
        print(f"int -> {new_type}: refused: {e}")
        break
"""),
    md("schema-promotion-explained", """
`int -> long` is accepted; once `a` is a `long`, `long -> double` is refused (a `double` cannot
hold every `long` exactly) and so would be `string`. icenb implements the v1/v2 promotions; the
two v3 additions (`date -> timestamp`, `unknown -> any`) are refused by icenb today, as the error
message's list shows.

A promotion rewrites no file and no **bound**: the manifest still holds 4-byte bounds for `a`
in the files written while it was an `int`. The spec's rule: "the original type at the time the
file was written must be inferred" from the length — a 4-byte bound of a `long` column is an
`int`:
"""),
    code("schema-promotion-bounds", """
a_type = readings.schema.find_type("a")
for f in readings.inspect.files().to_pylist():
    raw = dict(f["lower_bounds"]).get(4)
    if raw is not None:
        print(f"a's lower bound: {len(raw)} bytes -> {values.from_bytes(a_type, raw)} ({a_type})")
"""),
    md("schema-promotion-partition-md", """
A promotion is also refused when the column is the source of a partition field whose transform
would give a different value after it (spec: *Schema Evolution*): `bucket[N]` hashes `34` and
`34L` alike (Appendix B hashes an `int` as a `long`, lesson 02), so an `int` bucket source may
become `long`; a `date` source of `bucket` may not become `timestamp`. The allowed case, acted:
`34` appended as an `int`, the column promoted, `34` appended as a `long` — the same bucket.
"""),
    code("schema-promotion-partition", """
keyed = wh.create_table("lab.keyed", "k int", partition_by=["bucket(4, k)"])
keyed.append([{"k": 34}])
with keyed.update_schema() as update:
    update.update_column("k", "long")
keyed.append([{"k": 34}])
for f in keyed.inspect.files().to_pylist():
    k_in_file = pq.read_schema(f["file_path"].replace("file://", "")).field("k").type
    print(f"k stored as {k_in_file} -> partition {f['partition']}")
"""),
    md("schema-reorder-md", """
## 4. Reordering

The order of columns is a property of the schema, not of files: `move_first`, `move_before` and
`move_after` change it, ids stay.
"""),
    code("schema-reorder", """
with readings.update_schema() as update:
    update.move_after("unit", "measurement")
print([(f.field_id, f.name) for f in readings.schema.fields])
rows(readings).head(2)
"""),
    md("schema-identifier-md", """
## 5. Identifier fields

A schema may name the fields that identify a row (`identifier-field-ids`, spec: *Identifier
Field IDs*): engines use them for upserts and equality deletes (lesson 04). Iceberg does not
enforce uniqueness. The fields must be primitive and **required**, not `float` or `double`, and
not inside a map, a list or an optional struct.

*Predict before you run:* which of `name` (an optional string), `measurement` (a double) and a
new required `sensor_id long` (initial default 0) can be identifier fields?
"""),
    code("schema-identifier", """
for candidate in ["name", "measurement"]:
    try:
        with readings.update_schema() as update:
            update.set_identifier_fields([candidate])
    except IcebergError as e:
        print(f"{candidate}: refused: {e}")
with readings.update_schema() as update:
    update.add_column("sensor_id", "long", required=True, initial_default=0)
    update.set_identifier_fields(["sensor_id"])
print("identifier-field-ids:", schema_json(readings)["identifier-field-ids"])
"""),
    md("schema-reserved-md", """
## 6. Reserved field ids

Ids above 2147483447 (`Integer.MAX_VALUE - 200`) are reserved for **metadata columns** (spec:
*Reserved Field IDs*): `_file` (2147483646), `_pos` (2147483645), `_deleted`, `_spec_id`,
`_partition`, the position-delete columns `file_path` / `pos` / `row`, the changelog's
`_change_type` / `_change_ordinal` / `_commit_snapshot_id`, and row lineage's `_row_id` /
`_last_updated_sequence_number`. A scan can select them beside the table's columns; table
columns get ids from `last-column-id` upward, far below the reserved range.
"""),
    code("schema-reserved", """
scan = readings.scan(columns=["name", "_pos", "_spec_id", "_row_id"])
print(scan.schema)
print("last-column-id:", readings.metadata.last_column_id)
"""),
    md("schema-name-mapping-md", """
## 7. Files without field ids: name mapping

A table migrated from Hive registers existing Parquet files in place (a metadata-only
migration). Those files were not written by an Iceberg writer: their columns have **no field
ids**. The spec's answer is the table property `schema.name-mapping.default` (spec: *Column
Projection*; JSON form in Appendix C, *Name Mapping Serialization*): a list of
`{"field-id", "names"}` objects, several names allowed per id (old names, aliases).

We write such a file with plain pyarrow — `id` and `full_name`, no `region` column, as Hive keeps
partition values in the path — and register it in a table partitioned by `region` (icenb's
commit layer, `FastAppend.add_files`, is how a migration adds files it did not write).

*Predict before you run:* without a name mapping, what will the file's two rows read as?
"""),
    code("schema-name-mapping-register", """
from icenb.spec.manifest import DataFile, FileFormat
from icenb.table.commit.producer import FastAppend, commit_snapshot

legacy = wh.create_table("lab.legacy", "id long, name string, region string",
                         partition_by=["region"])
path = os.path.join(root, "hive", "region=eu", "part-0.parquet")
os.makedirs(os.path.dirname(path))
pq.write_table(pa.table({"id": [10, 11], "full_name": ["ann", "ben"]}), path)
append = FastAppend(legacy.catalog, legacy.identifier, legacy.io)
append.add_files([DataFile(file_path=path, file_format=FileFormat.PARQUET, partition=("eu",),
                           record_count=2, file_size_in_bytes=os.path.getsize(path))])
commit_snapshot(legacy, append)
rows(legacy.refresh())
"""),
    md("schema-name-mapping-explained", """
`region` reads `eu`: the first rule of column projection, the identity partition value from
the manifest. `id` and `name` read `null`: the file has no ids, so nothing matches (the last
rule). Now the mapping, with `full_name` as a second name for field 2:
"""),
    code("schema-name-mapping", """
mapping = [{"field-id": 1, "names": ["id"]},
           {"field-id": 2, "names": ["name", "full_name"]},
           {"field-id": 3, "names": ["region"]}]
legacy.set_properties({"schema.name-mapping.default": json.dumps(mapping)})
rows(legacy.refresh())
"""),
    md("schema-widget-md", """
## 8. The SchemaEvolution widget

**SchemaEvolution** stages changes through the same `update_schema()` builder, checks each one
at once against these rules and explains a refusal with the spec's rule; its preview shows the
new schema and what existing files read as under it (by field id), before anything is committed.
"""),
    code("schema-widget", """
from icenb.widgets import SchemaEvolution

se = SchemaEvolution(readings)
se.pending.update_column("name", "int")  # refused: string cannot become int
print(se.problems[0])
se.reset()
se.pending.rename_column("name", "station").add_column("note", "string")
print("problems:", se.problems)
rows(se.old_files()).head(2)
"""),
    code("schema-widget-show", """
se
"""),
    md("schema-exercises", """
## Exercises
"""),
    code("schema-exercise-field-id", """
answer = 3  # which field id does `measurement` have (the column that was `c`)?
check(answer, expected=readings.schema.find_field("measurement").field_id,
      hint="a rename keeps the id")
""", wrong="1"),
    code("schema-exercise-next-id", """
answer = 7  # which id would the next added column get?
check(answer, expected=readings.metadata.last_column_id + 1,
      hint="ids come from last-column-id; dropped ids are never reused")
""", wrong="5"),
    code("schema-exercise-kpa", """
answer = 3  # how many rows of lab.readings read unit = 'kPa'?
check(answer, expected=readings.scan("unit = 'kPa'").count(),
      hint="two rows read the initial default, one stored the first write default")
""", wrong="2"),
    md("schema-next", """
**What we saw:** columns matched by field id (the spec's projection example, acted out), the
four rules for an id a file lacks (identity partition value, name mapping, initial default,
null), `initial-default` / `write-default`, widening promotions only (and 4-byte bounds read
back after `int -> long`), reordering, identifier fields, reserved metadata-column ids, and the
SchemaEvolution widget.

Next: [04 — Row-level deletes](04-row-level-deletes.ipynb).
"""),
]


def main() -> None:
    print(write(CELLS, NAME))


if __name__ == "__main__":
    main()
