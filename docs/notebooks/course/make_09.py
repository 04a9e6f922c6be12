"""Write notebooks/course/09-view-spec-draft.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/course/make_09.py``, then
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
09-view-spec-draft.ipynb`` and ``python docs/notebooks/course/_course.py clean <notebook>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _course import Cell, code, md, write

# The draft's Appendix A, the metadata after step 4, as the draft prints it (with its "=>"
# notes, trailing commas and one missing bracket): the object this lesson loads.
DRAFT_EXAMPLE = r'''{
  "format-version" : 1,
  "location" : "s3n://my_company/my/warehouse/anorwood.db/common_view",
  "current-version-id" : 2,
  "properties" : {  => shows properties of the view
    "comment" : "View captures count of the data from the table"
  },
  "versions" : [ {
    "version-id" : 1,
    "parent-version-id" : -1,
    "timestamp-ms" : 1573518431292,
    "summary" : {
      "operation" : "create",
      "engineVersion" : "presto-350",
    },
    "representations" : [ {
      "type" : "sql",
      "sql" : "SELECT *\nFROM\n  base_tab\n",
      "dialect" : "presto",
      "schema-id" : 1,
      "default-catalog" : "iceberg",
      "default-namespace" : [ "anorwood" ]
    } ],
    "properties" : { }
  }, {
    "version-id" : 2,
    "parent-version-id" : 1, => Version 2 was created on top of version 1
    "timestamp-ms" : 1573518440265,
    "summary" : {
      "operation" : "replace", => The replace operation caused this latest version creation
      "engineVersion" : "spark-2.4.4",
    },
    "representations" : [ {
      "type" : "sql",
      "sql" : "SELECT \"count\"(*) my_cnt\nFROM\n  base_tab\n",
      "dialect" : "spark",
      "schema-id" : 2,
      "default-catalog" : "iceberg",
      "default-namespace" : [ "anorwood" ]
    },
  } ],
  "version-log" : [ {
    "timestamp-ms" : 1573518431292,
    "version-id" : 1
  }, {
    "timestamp-ms" : 1573518440265,
    "version-id" : 2
  } ],
  "schemas": [ { => Schema of the view expressed in Iceberg types
    "schema-id": 1,
    "type" : "struct",
    "fields" : [ {
      "id" : 0,
      "name" : "c1",
      "required" : false,
      "type" : "int",
      "doc" : "" => Column comment
    }, {
      "id" : 1,
      "name" : "c2",
      "required" : false,
      "type" : "string",
      "doc" : ""
    } ]
  }, { => Schema change is reflected here
    "schema-id": 2,
    "type" : "struct",
    "fields" : [ {
      "id" : 0,
      "name" : "my_cnt",
      "required" : false,
      "type" : "long",
      "doc" : ""
    } ]
  } ],
  "current-schema-id": 2
}'''

FIELD_ROWS = [
    ("what", "draft (`view-spec-draft.txt`)", "released (`view-spec.md`)"),
    ("---", "---", "---"),
    ("view identity", "—", "`view-uuid`, required"),
    ("current schema", "top-level `current-schema-id` (optional)",
     "the current version's `schema-id`"),
    ("`schemas`", "optional", "required"),
    ("a version's schema", "`schema-id` on each representation",
     "`schema-id` on the version, required"),
    ("default catalog / namespace", "on each representation",
     "on the version (`default-namespace` required)"),
    ("a version's parent", "`parent-version-id`", "— (the version log is the history)"),
    ("summary", "`operation` required (`create`, `replace`), `engine-version` "
     "(`engineVersion` in the example)", "`engine-name`, `engine-version`, both optional"),
    ("column names and comments of `CREATE VIEW v (a COMMENT '…', …)`",
     "`field-aliases`, `field-docs` on the representation",
     "part of the version's schema (names and `doc`)"),
    ("representations", "one type, `sql`, with `dialect`",
     "the same, and \"only one SQL representation per dialect\""),
    ("`version.history.num-entries`", "a \"table property\"", "a view property"),
]
FIELD_TABLE = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in FIELD_ROWS)

CELLS: list[Cell] = [
    md("view-question", """
# 09 — The view spec draft: how did an early view document become today's view metadata?

An Iceberg **view** stores a query, not data: its metadata file holds the view's versions, each
with its SQL (one *representation* per SQL dialect) and the schema the query returns, plus a
*version log* of which version was current when. The first public draft of the view spec
(`view-spec-draft.txt`) already had these parts, but in different places; the released spec
(`view-spec.md`, which wins) moved several of them, renamed one and added the `view-uuid`.

In this lesson we load the **draft's own example** with icenb, convert it to the released
format and compare the two field by field; then we author a view the released way — create it,
replace it, roll it back — and watch its versions and version log. Notebook `04-views` tells
the same story with Spark running the views; here no Spark is needed: every view is given its
schema."""),
    code("view-setup", """
import json
import re
import tempfile
import uuid
from pathlib import Path

import pandas as pd

import icenb
from icenb.exercise import check
from icenb.spec.view_metadata import (
    is_draft_view_metadata,
    view_metadata_from_json,
    view_metadata_to_json,
)

ROOT = tempfile.mkdtemp(prefix="icenb-course-")
wh = icenb.warehouse(ROOT)


def shown(value):
    \"\"\"``value`` (JSON-like) with the temporary folder printed as ``warehouse``.\"\"\"
    return json.loads(json.dumps(value).replace(ROOT, "warehouse"))


def fields_of(obj, prefix=""):
    \"\"\"The field names of a view metadata JSON object, one level into versions and their
    first representation.\"\"\"
    names = {prefix + k for k in obj}
    for v in obj.get("versions", [])[:1]:
        names |= {"versions[]." + k for k in v}
        for r in v.get("representations", [])[:1]:
            names |= {"versions[].representations[]." + k for k in r}
    return names"""),

    md("view-draft-example", """
## The draft's own example

The draft ends with *Appendix A: An Example*: four statements (`CREATE TABLE base_tab`, an
`INSERT`, `CREATE VIEW common_view AS SELECT * FROM base_tab`, then `CREATE OR REPLACE VIEW
common_view AS SELECT count(*) AS my_cnt FROM base_tab`) and the metadata file after step 3 and
after step 4. We take the step-4 file, as printed in the draft.

**Predict before you run:** will a JSON parser accept the draft's example as printed?"""),
    code("view-draft-text", f"""
DRAFT_EXAMPLE = r'''{DRAFT_EXAMPLE}'''

try:
    json.loads(DRAFT_EXAMPLE)
except json.JSONDecodeError as e:
    print("not JSON:", e)"""),
    md("view-draft-clean", """
It is not JSON: the draft annotates its example with `=> note` comments, leaves trailing commas
and misses the `]` that closes version 2's representations. We remove exactly those three
artefacts and nothing else:"""),
    code("view-draft-cleaned", """
text = re.sub(r"=>.*$", "", DRAFT_EXAMPLE, flags=re.MULTILINE)  # the notes
text = text.replace('[ "anorwood" ]\\n    },\\n  } ],', '[ "anorwood" ]\\n    } ]\\n  } ],')
text = re.sub(r",(\\s*[}\\]])", r"\\1", text)  # trailing commas
draft_json = json.loads(text)
print("draft document?", is_draft_view_metadata(draft_json))
draft = view_metadata_from_json(draft_json)
try:  # "Implementations must throw an exception if the view's version is higher"
    view_metadata_from_json({**draft_json, "format-version": 2})
except icenb.errors.UnsupportedVersion as e:
    print(type(e).__name__ + ":", e)
draft"""),
    md("view-draft-fields", f"""
icenb recognises a draft document by the fields only the draft has and loads it as
`DraftViewMetadata`, as written. Its summary above already shows what the draft keeps where
the released spec does not: the versions have **no schema of their own** (the `schema` column
is `-`) — the draft puts `schema-id` on each SQL representation — and there is no view UUID.

## Draft versus released, field by field

{FIELD_TABLE}

`DraftViewMetadata.to_released()` converts a draft deterministically. **Predict before you
run:** which fields will the released document have that the draft lacks, and which will
disappear?"""),
    code("view-convert", """
released = draft.to_released()
released_json = view_metadata_to_json(released)
draft_fields, released_fields = fields_of(draft_json), fields_of(released_json)
pd.DataFrame({
    "only in the draft": pd.Series(sorted(draft_fields - released_fields), dtype=object),
    "only in the released form": pd.Series(sorted(released_fields - draft_fields), dtype=object),
}).fillna("")"""),
    code("view-converted-version", """
print(json.dumps(released_json["versions"][1], indent=1))
print("view-uuid:", released_json["view-uuid"])"""),
    md("view-convert-explain", """
What the conversion did, field by field:

- **`view-uuid`** is new and required (released: "implementations must throw an exception if a
  view's UUID does not match"). A draft has none, so icenb derives one from the location
  (a name-based UUID): the same draft file always converts to the same UUID.
- **`schema-id`, `default-catalog`, `default-namespace`** moved from the representation up to
  the version: a released version has one schema and one set of defaults for all its
  representations.
- **`current-schema-id`** is gone: the current version's `schema-id` says the same.
- **`parent-version-id`** has no released field; icenb keeps it in the summary as a string, so
  nothing is lost. The summary keeps `operation` (the draft required it; released engines may
  still write it) and copies the example's camel-case **`engineVersion`** to the released key
  **`engine-version`**.

The version log, properties, location and the two schemas carry over unchanged."""),

    md("view-aliases", """
## Field aliases and field docs

`CREATE VIEW v (alias_name COMMENT 'docs', alias_name2, ...) AS SELECT col1, col2, ...` names
and documents the view's columns. The draft stores these as two lists on the representation,
`field-aliases` and `field-docs`, one entry per column, `null` meaning none. The released spec
drops both: the aliases and comments "must be part of the view version's schema".

The draft's example has no aliases, so we give version 2 one: `CREATE OR REPLACE VIEW
common_view (row_count COMMENT 'rows in base_tab') AS SELECT count(*) ...`.

**Predict before you run:** after conversion, what is version 2's column called, and how many
schemas does the view have?"""),
    code("view-aliases-act", """
aliased_json = json.loads(json.dumps(draft_json))
rep = aliased_json["versions"][1]["representations"][0]
rep["field-aliases"], rep["field-docs"] = ["row_count"], ["rows in base_tab"]
aliased = view_metadata_from_json(aliased_json).to_released()
print("version 2 reads schema", aliased.version_by_id(2).schema_id)
print(aliased.schema_for_version(2))
print("schemas:", [s.schema_id for s in aliased.schemas])"""),
    md("view-aliases-explain", """
The alias renamed `my_cnt` to `row_count` and its doc became the field's `doc`. Since the
query's own schema (2) still exists and other versions could use it, the aliased schema is a
**new** schema, 3, and version 2 points to it. What the released form cannot say any more is
*which* columns were aliased: the names are simply the schema's names.

## The released format, authored

The released spec's Appendix A uses a view with aliases from the start:

```sql
USE prod.default
CREATE OR REPLACE VIEW event_agg (event_count COMMENT 'Count of events', event_date)
COMMENT 'Daily event counts' AS
SELECT COUNT(1), CAST(event_ts AS DATE) FROM events GROUP BY 2
```

We create it with icenb: the aliases and the comment go into the schema we pass, the view
comment into the property `comment`, as the spec's example shows."""),
    code("view-create", """
events = wh.create_table("default.events", "event_ts timestamptz, id long")
event_agg = wh.create_view(
    "default.event_agg",
    "SELECT\\n    COUNT(1), CAST(event_ts AS DATE)\\nFROM events\\nGROUP BY 2",
    schema="event_count int comment 'Count of events', event_date date",
    comment="Daily event counts", default_catalog="prod")
created = view_metadata_to_json(event_agg.metadata)
print(json.dumps(shown(created), indent=1))"""),
    md("view-create-explain", """
Every required released field is there: `view-uuid`, `format-version` 1, `location`,
`schemas`, `current-version-id`, `versions` (with `schema-id`, `default-namespace` and the
optional `default-catalog` on the version), `version-log`. The summary carries `engine-name`
and `engine-version` (and `operation`, the key the draft required). The
file itself is gzip-compressed JSON, as Iceberg Java writes view metadata.

**Predict before you run:** the spec's second step replaces the SQL with one that names the
table fully (`prod.default.events`). Will the replace add a schema? A version? A log entry?"""),
    code("view-replace", """
reader = wh.view("default.event_agg")  # a second reader, loaded now
event_agg.replace(
    "SELECT\\n    COUNT(1), CAST(event_ts AS DATE)\\nFROM prod.default.events\\nGROUP BY 2",
    schema="event_count int comment 'Count of events', event_date date")
after = view_metadata_to_json(event_agg.metadata)
print("schemas:", [s["schema-id"] for s in after["schemas"]],
      " versions:", [v["version-id"] for v in after["versions"]],
      " current:", after["current-version-id"])
print("log:", [e["version-id"] for e in after["version-log"]])
print("the other reader still sees version", reader.current_version_id,
      "until it refreshes:", reader.refresh().current_version_id)
event_agg.compare(1, 2)"""),
    md("view-replace-explain", """
As in the spec's example, one new version (2) with the same `schema-id` — an identical schema is
reused, not added — and one more log entry. Versions are immutable: the replace did not edit
version 1, it added version 2 and moved `current-version-id`.

*Metadata Location*: the replace wrote a **new** metadata file and swapped the catalog's pointer
to it atomically; "readers use the version of the view that was current when they loaded the
view metadata and are not affected by changes until they refresh" — the second reader above
kept version 1 until `refresh()`. Writers, too, commit "optimistically, assuming that the
current metadata location will not be changed": two writers that loaded the same metadata
change the view at once.

## The version log and a rollback

*Version log*: "a version can appear multiple times in the version log, indicating that the
view definition was rolled back". The log records when each version became **current**, which
is not when it was created."""),
    code("view-race", """
writer_a, writer_b = wh.view("default.event_agg"), wh.view("default.event_agg")
writer_a.update_properties({"owner": "analytics"})
writer_b.update_properties({"reviewed": "yes"})  # planned on the state before writer_a's swap
print(sorted(wh.view("default.event_agg").properties.items()))"""),
    md("view-race-explain", """
Writers swap optimistically: `writer_b` built its change on metadata that was no longer
current, so its swap failed and icenb rebuilt the change on the new metadata and swapped again;
both properties are there, nothing was lost. Now the version log after a rollback.

**Predict before you run:** after rolling back to version 1, how many versions and how many log
entries will the view have?"""),
    code("view-rollback", """
event_agg.rollback_to(1)
print("current version:", event_agg.current_version_id,
      " versions:", [v.version_id for v in event_agg.versions])
folder = Path(event_agg.metadata_location.removeprefix("file://")).parent
print("metadata files:", len(list(folder.glob("*.metadata.json"))), "(one per change)")
event_agg.version_log"""),
    md("view-rollback-explain", """
Still two versions, but three log entries: version 1 is current again and the log says so.
Every change — create, replace, rollback — wrote a new, self-sufficient metadata file
(*Overview*); each holds the history needed to roll back.
`version_at(time)` answers "which definition was in force then?" from the log (notebook
`04-views`, cell `1ef1c700`).

## Representations and dialects

A version may hold several representations — one per SQL dialect — and all must express the
same query. A new dialect therefore means a new version."""),
    code("view-dialects", """
spark_sql = event_agg.sql_for("spark")
event_agg.replace({
    "spark": spark_sql,
    "trino": "SELECT count(*), CAST(event_ts AS date) FROM events GROUP BY 2",
}, schema="event_count int comment 'Count of events', event_date date")
for rep in event_agg.current_version.representations:
    print(f"[{rep.dialect}] {rep.sql!r}")
try:
    event_agg.replace("SELECT 1 AS event_count, current_date() AS event_date",
                      schema="event_count int, event_date date")
except icenb.errors.IcebergError as e:
    print(type(e).__name__ + ":", str(e).split(" (file:")[0])"""),
    md("view-dialects-explain", """
Dropping the `trino` representation is refused: a replace that loses a dialect the current
version has would silently break that engine's readers, so Iceberg's reference implementation
refuses it unless the view property `replace.drop-dialect.allowed` is `true` (not in the spec
text; see notebook `04-views`, cells `d66098bd` and `c9b6d201`). How many versions a view keeps
is the view property `version.history.num-entries` (notebook `04-views`, cell `7c91f812`).

## The ViewVersions widget

`ViewVersions` (or `v.versions_widget()`) shows the version log as a clickable graph, each
version's SQL per dialect and schema, and the difference between two versions (shift-click)."""),
    code("view-widget", """
from icenb.widgets import ViewVersions

ViewVersions(event_agg)"""),

    md("view-exercises", """
## Exercises

Each cell checks your answer against the views above. Change `answer` and run the cell."""),
    code("view-exercise-uuid-source", """
answer = "location"  # your answer: the draft field the converted view-uuid is derived from
check(answer, expected=next(k for k, v in draft_json.items() if isinstance(v, str)
                            and uuid.uuid5(uuid.NAMESPACE_URL, v) == released.uuid),
      hint="the same draft file always gets the same UUID; views at different places differ")""",
         wrong='"version-log"'),
    code("view-exercise-log", """
answer = 4  # your answer: how many entries has event_agg's version log now?
check(answer, expected=len(event_agg.metadata.version_log),
      hint="create, replace, rollback, a replace with two dialects: each moved the current")""",
         wrong="3"),
    code("view-exercise-alias-schema", """
answer = 3  # your answer: the schema id version 2 of the aliased draft reads when converted
check(answer, expected=aliased.version_by_id(2).schema_id,
      hint="an alias changes the column's name, so the schema is a new one")""", wrong="2"),
    md("view-end", """
This is the course's last lesson. The coverage of every spec section by lesson and cell is in
`docs/course.md`; back to the start: `00-start-here`."""),
]


if __name__ == "__main__":
    print(write(CELLS, "09-view-spec-draft"))
