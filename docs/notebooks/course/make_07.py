"""Write notebooks/course/07-format-versions.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/course/make_07.py``, then
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
07-format-versions.ipynb`` and ``python docs/notebooks/course/_course.py clean <notebook>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _course import Cell, code, md, write

CELLS: list[Cell] = [
    md("versions-question", """
# 07 — Format versions: what changes when a table moves from v1 to v2, v3 and v4?

A table's `metadata.json` starts with `"format-version"`. The spec (*Format Versioning*) raises
that number whenever a feature would be misread by older readers: v2 added row-level deletes,
v3 new types, default values, row lineage and deletion vectors. **Appendix E: Format version
changes** lists, version by version, what writers must now write and how readers default what
older metadata lacks.

In this lesson we create a **v1** table, then upgrade it step by step — `t.upgrade(2)`,
`t.upgrade(3)`, `t.upgrade(4)` — and after each step look at three things: the fields of
`metadata.json`, the fields of the manifest list and manifests (the Avro files), and what a
writer must now do. On the way we reproduce the spec's **row lineage example** number for
number. Version 4 is icenb's **EXPERIMENTAL** implementation of the single-file-commits
proposal (lesson 08 and notebook 06), not an adopted format.

Nothing here needs Spark: icenb writes the Parquet files and the metadata itself. Tables live in
a temporary folder; where a raw JSON shows a location, we print it as `warehouse/...`."""),
    code("versions-setup", """
import json
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import icenb
from icenb.exercise import check
from icenb.io.avro import avro_file_metadata, read_avro_tables
from icenb.spec.manifest import EntryStatus

ROOT = tempfile.mkdtemp(prefix="icenb-course-")
wh = icenb.warehouse(ROOT)


def shown(value):
    \"\"\"``value`` (JSON-like) with the temporary folder printed as ``warehouse``.\"\"\"
    return json.loads(json.dumps(value).replace(ROOT, "warehouse"))


def metadata_json(t):
    \"\"\"The table's current metadata.json, parsed.\"\"\"
    return json.loads(Path(t.metadata_location.removeprefix("file://")).read_text())


def short(value, width=70):
    text = json.dumps(shown(value))
    return text if len(text) <= width else text[:width - 1] + "…"


def field_changes(before, after):
    \"\"\"The top-level metadata.json fields an operation added, removed or changed (the
    timestamps and logs every commit touches are left out).\"\"\"
    rows = []
    for key in sorted(before.keys() | after.keys()):
        if key in ("last-updated-ms", "metadata-log", "snapshot-log"):
            continue
        if key not in after:
            rows.append((key, short(before[key]), "(gone)"))
        elif key not in before:
            rows.append((key, "(absent)", short(after[key])))
        elif before[key] != after[key]:
            rows.append((key, short(before[key]), short(after[key])))
    return pd.DataFrame(rows, columns=["field", "before", "after"])


def avro_fields(location):
    \"\"\"The fields of an Avro metadata file's records, nested ones dotted, each required or
    optional (an Avro union with null), read from the file's own schema.\"\"\"
    path = location.removeprefix("file://")
    schema = json.loads(avro_file_metadata(path, Path(path).read_bytes())["avro.schema"])
    found = {}

    def walk(record, prefix):
        for f in record["fields"]:
            kind = f["type"]
            optional = isinstance(kind, list) and "null" in kind
            inner = next((k for k in kind if k != "null"), None) if isinstance(kind, list) \\
                else kind
            found[prefix + f["name"]] = "optional" if optional else "required"
            if isinstance(inner, dict) and inner.get("type") == "record" \\
                    and f["name"] == "data_file":
                walk(inner, prefix + "data_file.")

    walk(schema, "")
    return found


def avro_records(location, columns):
    \"\"\"Some columns of an Avro metadata file's records, as written (no inheritance).\"\"\"
    path = location.removeprefix("file://")
    [table] = read_avro_tables([(path, Path(path).read_bytes())], columns=columns)
    df = table.to_pandas(integer_object_nulls=True)
    for c in df.columns:
        if c.endswith("path"):
            df[c] = df[c].map(lambda p: p.rsplit("/", 1)[-1][:12] + "…")
    return df


def lineage(scan):
    \"\"\"A scan's rows, with null row ids shown as None.\"\"\"
    return scan.to_arrow().to_pandas(integer_object_nulls=True)


def header_keys(location):
    \"\"\"The Iceberg keys of an Avro metadata file's key-value metadata (not Avro's own).\"\"\"
    path = location.removeprefix("file://")
    return sorted(k for k in avro_file_metadata(path, Path(path).read_bytes())
                  if not k.startswith("avro."))


def compare(old, new):
    \"\"\"Fields of two versions of the same Avro record: what appeared, went, or changed.\"\"\"
    rows = [(k, old.get(k, "—"), new.get(k, "—")) for k in [*old, *[k for k in new if k not in old]]
            if old.get(k) != new.get(k)]
    return pd.DataFrame(rows, columns=["field", "before", "after"])"""),

    md("versions-v1-intro", """
## Version 1: analytic tables

Version 1 defines snapshots, manifest lists and manifests over immutable Parquet, Avro and ORC
files — everything except row-level deletes. We create a v1 table and append twice.

**Predict before you run:** does a v1 snapshot carry a sequence number? Does the v1
`metadata.json` name one schema or a list of schemas?"""),
    code("versions-v1-create", """
events = wh.create_table("course.events", "id long not null, kind string", format_version=1)
events.append([{"id": i, "kind": "signup"} for i in range(5)])
events.append([{"id": i, "kind": "click"} for i in range(5, 8)])
v1 = metadata_json(events)
print("top-level fields:", ", ".join(v1))
print()
snapshot = dict(v1["snapshots"][-1], summary={"operation": "append", "…": "…"})
print("one snapshot:", json.dumps(shown(snapshot), indent=1, ensure_ascii=False))"""),
    md("versions-v1-json", """
What the v1 metadata shows:

- **no sequence numbers**: neither a table `last-sequence-number` nor a snapshot
  `sequence-number`;
- the v1-only single fields `schema` and `partition-spec` are written beside the lists
  `schemas` / `partition-specs` that v2 will require (icenb writes both, as Iceberg Java does,
  so that old readers find what they expect);
- a snapshot points to a `manifest-list` (v1 also allowed an inline `manifests` list instead).

Now the Avro side. In v1 the manifest list's counts are optional fields, and there is no
`content` (every manifest tracks data files) and no sequence number. The drawing under it is
the snapshot's metadata tree."""),
    code("versions-v1-avro", """
v1_list = avro_fields(events.current_snapshot.manifest_list)
manifest_v1 = events.inspect.manifests().to_pylist()[0]["path"]
v1_manifest = avro_fields(manifest_v1)
print("manifest list (manifest_file):", ", ".join(f"{k}{'?' if v == 'optional' else ''}"
                                              for k, v in v1_list.items()))
print()
print("manifest (manifest_entry):", ", ".join(f"{k}{'?' if v == 'optional' else ''}"
                                             for k, v in v1_manifest.items()))
events.metadata_tree()"""),
    md("versions-v1-note", """
(`?` marks an optional field.) A v1 `manifest_entry` has `status`, `snapshot_id` and the
`data_file`, whose `content` is absent: all v1 files are data files. A v1 table cannot delete
rows without rewriting files:"""),
    code("versions-v1-no-deletes", """
try:
    events.delete("id = 3", mode="merge-on-read")
except icenb.errors.ValidationError as e:
    print(type(e).__name__ + ":", str(e).split(" (file:")[0])"""),

    md("versions-v2-intro", """
## Upgrade to version 2: sequence numbers and delete files

`t.upgrade(2)` is one commit that changes the table metadata only.

**Predict before you run:** how many data files and manifests will the upgrade rewrite? Which
`metadata.json` fields will change?"""),
    code("versions-v2-upgrade", """
files_before = {p for p in Path(events.location.removeprefix("file://")).rglob("*")
                if not p.name.endswith(".metadata.json")}
events.upgrade(2)
v2 = metadata_json(events)
files_after = {p for p in Path(events.location.removeprefix("file://")).rglob("*")
               if not p.name.endswith(".metadata.json")}
print("data or manifest files written by the upgrade:", len(files_after - files_before))
field_changes(v1, v2)"""),
    md("versions-v2-read-defaults", """
No file but the new `metadata.json` was written. `format-version` changed,
`last-sequence-number` appeared at 0, and the v1-only `schema` and `partition-spec` were dropped
(v2 writers "should omit" them; `schemas` and `partition-specs` carry the same). Appendix E,
*Reading v1 metadata for v2*, says everything v1 lacks defaults to 0 — the table's and each
snapshot's sequence number, each manifest's `sequence_number` and `min_sequence_number`, every
entry's sequence numbers — and a missing `content` means data. The old manifest list and manifests
stay as they are; all v1 files remain valid (*Format Versioning*, Version 1).

The next commit writes a **v2** manifest list. It carries the old manifests unchanged, with the
defaulted sequence number 0, next to the new one with sequence number 1."""),
    code("versions-v2-append", """
events.append([{"id": 8, "kind": "signup"}])
v2 = metadata_json(events)
labels = {s.snapshot_id: f"S{i}" for i, s in enumerate(events.snapshots, 1)}
print("new snapshot's fields:", ", ".join(v2["snapshots"][-1]))
print("sequence-number:", v2["snapshots"][-1]["sequence-number"],
      " table last-sequence-number:", v2["last-sequence-number"])
records = avro_records(events.current_snapshot.manifest_list,
                       ["manifest_path", "content", "sequence_number", "min_sequence_number",
                        "added_snapshot_id", "added_rows_count"])
records.assign(added_snapshot_id=records["added_snapshot_id"].map(labels))"""),
    md("versions-v2-avro", """
The fields the v2 writer added to the manifest list, and to each manifest entry
(Appendix E, *Writing v2 metadata*): `content` (0 data, 1 deletes), `sequence_number`,
`min_sequence_number` are new and required, and the counts become required. For a manifest's
key-value metadata Appendix E requires `schema-id`, `partition-spec-id`, `format-version` and
the new `content` (`data` or `deletes`); icenb adds `content` and, as Iceberg Java does (see the
Java-written manifests in `notebooks/data/java-warehouse`), writes the schema itself as JSON
(`schema`) instead of a `schema-id`."""),
    code("versions-v2-fields", """
v2_list = avro_fields(events.current_snapshot.manifest_list)
v2_manifest_path = events.inspect.manifests().to_pylist()[0]["path"]
v2_manifest = avro_fields(v2_manifest_path)
print("manifest key-value metadata, v1:", header_keys(manifest_v1))
print("manifest key-value metadata, v2:", header_keys(v2_manifest_path))
pd.concat([compare(v1_list, v2_list).assign(file="manifest list"),
           compare(v1_manifest, v2_manifest).assign(file="manifest")], ignore_index=True)"""),
    md("versions-v2-deletes", """
What v2 is for: **row-level deletes**. A merge-on-read delete no longer rewrites the data file;
it writes a *position delete file* (`content` 1) listing the file and row position, tracked in
a delete manifest. (Lesson 04 teaches when a delete applies; here we only see that the format
now allows it.)"""),
    code("versions-v2-position-delete", """
events.delete("id = 3", mode="merge-on-read")
deletes = events.inspect.delete_files().to_pandas()
deletes[["content", "file_format", "record_count"]]"""),
    md("versions-v2-writers", """
**What a v2 writer must now do** (Appendix E, *Version 2*):

- write `last-sequence-number` in the table metadata and a `sequence-number` in every snapshot,
  one higher per commit; write `table-uuid`, `schemas` / `current-schema-id`,
  `partition-specs` / `default-spec-id`, `last-partition-id`, `sort-orders` /
  `default-sort-order-id`, and always a `manifest-list` (never an inline `manifests` list);
- in the manifest list: `content`, `sequence_number`, `min_sequence_number` and all six counts;
- in manifests: `content` in the key-value metadata and in each `data_file`, `equality_ids` for
  equality deletes; entries leave `snapshot_id` and the sequence numbers null so they are
  inherited (*Sequence Number Inheritance*);
- `block_size_in_bytes`, `file_ordinal` and `sort_columns` are gone from `data_file`.

Metadata written before the upgrade need not follow these rules; readers stay compatible with
it."""),

    md("versions-v3-intro", """
## Upgrade to version 3: types, defaults, deletion vectors, row lineage

Version 3 brings new types (`timestamp_ns`, `timestamptz_ns`, `variant`, `geometry`,
`geography`, `unknown`), default values (`initial-default`, `write-default`), multi-argument
transforms (`source-ids`), deletion vectors, encryption keys and **row lineage**. A v2 table
refuses the first two:"""),
    code("versions-v3-refused-on-v2", """
for change in (lambda u: u.add_column("country", "string", initial_default="NL"),
               lambda u: u.add_column("seen_at", "timestamp_ns")):
    try:
        with events.update_schema() as u:
            change(u)
    except icenb.errors.ValidationError as e:
        print(type(e).__name__ + ":", e)"""),
    md("versions-v3-predict", """
**Predict before you run:** after `t.upgrade(3)`, what `_row_id` does each existing row read?
And after the next append?"""),
    code("versions-v3-upgrade", """
before_upgrade = events.current_snapshot.snapshot_id
pre_v3 = metadata_json(events)
events.upgrade(3)
v3 = metadata_json(events)
upgrade_to_v3 = field_changes(pre_v3, v3)
events.create_branch("audit")  # a second branch, still at the last snapshot without row ids
display(upgrade_to_v3)
lineage_columns = ["id", "kind", "_row_id", "_last_updated_sequence_number"]
lineage(events.scan(columns=lineage_columns)).sort_values("id")"""),
    md("versions-v3-upgraded-lineage", """
The upgrade only set `next-row-id` to 0 (Appendix E, *Row lineage changes*) and rewrote
nothing; the existing snapshots keep no `first-row-id`, so every row reads a **null** `_row_id`
(spec: *Row Lineage for Upgraded Tables*). The next commit must assign ids: its manifest list
gives a `first_row_id` to **every** data manifest that lacks one, the old ones included
(*First Row ID Inheritance*: "any null `first_row_id` must be assigned via inheritance, even if
the data file is existing")."""),
    code("versions-v3-first-commit", """
events.append([{"id": 9, "kind": "click"}])
first_v3 = metadata_json(events)
labels = {s.snapshot_id: f"S{i}" for i, s in enumerate(events.snapshots, 1)}
snap = first_v3["snapshots"][-1]
print("table next-row-id:", first_v3["next-row-id"])
print("snapshot first-row-id:", snap["first-row-id"], " added-rows:", snap["added-rows"],
      " rows appended:", snap["summary"]["added-records"])
records = avro_records(events.current_snapshot.manifest_list,
                       ["manifest_path", "content", "added_snapshot_id", "added_rows_count",
                        "existing_rows_count", "first_row_id"])
display(records.assign(added_snapshot_id=records["added_snapshot_id"].map(labels)))
appended = lineage(events.scan("id = 9", columns=["_file"]))["_file"].iloc[0]
print("columns in the appended file:",
      pq.read_schema(appended.removeprefix("file://")).names)  # no lineage columns
lineage(events.scan(columns=[*lineage_columns, "_pos"])).sort_values("_row_id")"""),
    md("versions-v3-explain", """
The append added one row, yet `added-rows` is 10, every row in the table's data files
(the row deleted by the position delete still has a place in its file, so it takes an id
too): the snapshot's `added-rows` is
the *upper bound of rows given ids* (*Snapshot Row IDs*), and this commit gave ids to all of
them. The data manifests were numbered in list order — the new one first, from the
snapshot's `first-row-id` — each taking as many ids as its added and existing rows. Each
row's `_row_id` is its file's `first_row_id` plus its position `_pos` (the five `signup` rows
of the first append sit at `_pos` 0 to 4 of a file numbered from 5: ids 5 to 9), and
`_last_updated_sequence_number` is inherited from the file's data sequence number: 0 for the
rows written while the table was v1 (Appendix E's default), 1 for the v2 append and 3 for this
one.

The snapshots from before the upgrade are not modified: read as of then, the rows still have
no ids."""),
    code("versions-v3-time-travel", """
lineage(events.at(before_upgrade).select(*lineage_columns)).sort_values("id").head(3)"""),
    md("versions-v3-branches", """
Row ids are table-wide, not per branch: "the table's `next-row-id` must also be updated (even
if the new snapshot is not in the main branch)", and "new snapshots in different branches will
assign disjoint ID ranges to existing data files" (*Row Lineage for Upgraded Tables*). The
branch `audit` still points at the last snapshot without ids.

**Predict before you run:** a commit on `audit` numbers the same old rows again. Which ids do
they get there?"""),
    code("versions-v3-branch-act", """
events.append([{"id": 100, "kind": "audit"}], branch="audit")
print("next-row-id after the commit on audit:", metadata_json(events)["next-row-id"])
on_main = lineage(events.scan(columns=["id", "_row_id"])).set_index("id")
on_audit = lineage(events.at("audit").select("id", "_row_id")).set_index("id")
on_main.add_suffix(" on main").join(on_audit.add_suffix(" on audit"), how="outer").sort_index(
    ).astype("Int64")"""),
    md("versions-v3-branches-explain", """
The same rows carry one id on `main` and another, from a disjoint range, on `audit`: each
branch's first commit after the upgrade assigned ids to the files it saw, from the one
table-wide `next-row-id`, which moved although `main` did not change. (A writer may instead
copy the ids another branch assigned; icenb assigns new ones.)"""),
    md("versions-v3-dv", """
Deletes change too. A v3 writer may not add position delete files; it writes a **deletion
vector** (a bitmap in a Puffin file, one per data file at most) and must merge the older
position deletes of that data file into it (Appendix E, *Row-level delete changes*). Deleting
id 4, in the same file as id 3:"""),
    code("versions-v3-dv-act", """
events.delete("id = 4", mode="merge-on-read")
deletes = events.inspect.delete_files().to_pandas()
live_ids = lineage(events.scan(columns=["id", "_file"])).groupby("_file")["id"].agg(sorted)
deletes.assign(live_ids_of_its_data_file=deletes["referenced_data_file"].map(live_ids))[
    ["content", "file_format", "record_count", "content_offset", "content_size_in_bytes",
     "live_ids_of_its_data_file"]]"""),
    md("versions-v3-dv-explain", """
One live delete file remains: a Puffin DV holding **both** positions (ids 3 and 4); the v2
position delete file was removed in the same commit. The manifest records the DV's
`referenced_data_file`, `content_offset` and `content_size_in_bytes`, fields v3 added."""),
    md("versions-v3-multi-file", """
A v2 position delete file may cover **several** data files. Appendix E: such files "need to be
kept in table metadata until all deletes are replaced by DVs". A small table shows it: a v2
merge-on-read delete of one row in each of two files, then, on v3, one more delete in the first
file.

**Predict before you run:** after the v3 delete, how many live delete files will the table
have?"""),
    code("versions-v3-multi-file-act", """
orders = wh.create_table("course.orders", "id long not null", format_version=2)
orders.append([{"id": i} for i in range(3)])
orders.append([{"id": i} for i in range(3, 6)])
orders.delete("id = 1 or id = 4", mode="merge-on-read")  # one position delete file, two data files
orders.upgrade(3)
orders.delete("id = 2", mode="merge-on-read")  # the first data file now gets a DV
live = orders.inspect.delete_files().to_pandas()
display(live.assign(covers=live["referenced_data_file"].map(
    lambda p: "one data file" if isinstance(p, str) else "several data files"))[
    ["content", "file_format", "record_count", "covers"]])
print("rows:", sorted(r["id"] for r in orders.to_arrow().to_pylist()))"""),
    md("versions-v3-multi-file-explain", """
Two: the new DV of the first data file holds two positions (id 1, carried over from the
position delete file, and id 2), and the Parquet position delete file stays, because it still
deletes id 4 in the second file. For the first file a reader may ignore it ("readers can safely
ignore position delete files if there is a DV for a data file"); the rows read right either
way."""),
    code("versions-v3-fields", """
v3_list = avro_fields(events.current_snapshot.manifest_list)
v3_manifest = avro_fields(events.inspect.manifests().to_pylist()[0]["path"])
pd.concat([compare(v2_list, v3_list).assign(file="manifest list"),
           compare(v2_manifest, v3_manifest).assign(file="manifest")], ignore_index=True)"""),

    md("versions-v3-defaults", """
The two schema changes the v2 table refused are v3 features, so they now succeed. Rows written
before the column existed read its `initial-default` (spec: *Default values*); new rows get
its `write-default` when the writer leaves the column out."""),
    code("versions-v3-defaults-act", """
with events.update_schema() as u:
    u.add_column("country", "string", initial_default="NL", write_default="NL")
    u.add_column("seen_at", "timestamp_ns")
events.append([{"id": 11, "kind": "signup"}])
events.scan(columns=["id", "kind", "country", "seen_at"]).to_pandas().sort_values("id").tail(4)"""),
    md("versions-v3-types", """
The other v3 types are schema changes of the same kind. **Predict before you run:** which of
them does a v2 table accept?"""),
    code("versions-v3-types-act", """
new_types = ["variant", "unknown", "geometry", "geography", "timestamptz_ns"]
typed = wh.create_table("course.typed", "id long", format_version=2)
for kind in new_types:
    try:
        with typed.update_schema() as u:
            u.add_column(f"c_{kind}", kind)
    except icenb.errors.ValidationError as e:
        print("v2:", str(e).split(" (field")[0])
typed.upgrade(3)
with typed.update_schema() as u:
    for kind in new_types:
        u.add_column(f"c_{kind}", kind)
print(typed.schema)"""),
    md("versions-v3-types-explain", """
None on v2; all of them once the table is v3. (This lesson only declares the columns: icenb
does not write values of every new type yet.)"""),
    md("versions-v3-transforms", """
Two more v3 rules concern partition transforms. A transform of several columns writes
`source-ids` (a list) instead of `source-id` in the partition field JSON, and "all readers are
required to read tables with unknown partition transforms, ignoring the unsupported partition
fields when filtering". No multi-argument transform is defined yet, so we write by hand a
metadata file whose default spec uses an invented two-column `zorder` transform, and read it.

**Predict before you run:** will icenb refuse the table, or read it — and how many rows match
`id > 2`?"""),
    code("versions-v3-transforms-act", """
shapes = wh.create_table("course.shapes", "id long not null, kind string", format_version=3,
                         partition_by=["kind"])
shapes.append([{"id": i, "kind": "a" if i % 2 else "b"} for i in range(6)])
document = metadata_json(shapes)
document["partition-specs"].append({"spec-id": 1, "fields": [
    {"name": "id_kind_zorder", "transform": "zorder", "source-ids": [1, 2], "field-id": 1001}]})
document.update({"default-spec-id": 1, "last-partition-id": 1001,
                 "encryption-keys": [{"key-id": "k1", "encrypted-key-metadata": "aWNlYmVyZwo="}]})
hand_written = Path(shapes.metadata_location.removeprefix("file://")).with_name(
    "99999-hand-written.metadata.json")
hand_written.write_text(json.dumps(document))
opened = icenb.open(str(hand_written))
print(opened.spec)
print("rows with id > 2:", opened.scan("id > 2").to_arrow().num_rows)
print("encryption keys:", [k.key_id for k in opened.metadata.encryption_keys])"""),
    md("versions-v3-transforms-explain", """
icenb keeps the unknown transform as it is (`zorder(1, 2)`: two source ids) and plans without
it: the filter is applied to the rows, not through the unknown partition field. The same
hand-written file also lists a v3 `encryption-keys` entry (`key-id`, `encrypted-key-metadata`):
icenb reads and keeps the table's key list, though it neither encrypts nor decrypts files."""),
    md("lineage-rules", """
## Row lineage: the assignment rules

Spec, *Row lineage assignment*: a new row is written with null `_row_id` and
`_last_updated_sequence_number`, both inherited on read. When a row **moves** to a new file,
the writer copies its `_row_id`; if the write **modified** it, its
`_last_updated_sequence_number` is written null (so the new commit's number is inherited),
otherwise the old number is copied.

**Predict before you run:** a copy-on-write update of id 6 rewrites the file holding ids 5, 6
and 7. Which of the three rows get a new `_row_id`? Which a new sequence number?"""),
    code("lineage-rules-act", """
before = lineage(events.scan(columns=lineage_columns)).set_index("id")
events.update({"kind": "purchase"}, "id = 6", mode="copy-on-write")
after = lineage(events.scan(columns=lineage_columns)).set_index("id")
print("sequence number of the update:", events.current_snapshot.sequence_number)
for m in events.inspect.manifests().to_pylist():  # the update's manifests, as written
    if m["added_snapshot_id"] == events.current_snapshot.snapshot_id:
        written = avro_records(m["path"], ["status", "data_file.record_count",
                                           "data_file.first_row_id"])
        print([(EntryStatus(r["status"]).name, r["data_file"]["first_row_id"])
               for r in written.to_dict("records")])
before.add_suffix(" before").join(after.add_suffix(" after")).loc[[5, 6, 7]]"""),
    md("lineage-rules-explain", """
All three keep their ids; only id 6, the modified row, takes the update's sequence number; 5
and 7 moved without change and keep theirs. In the manifests the update wrote, the new file is
ADDED with a null `first_row_id` (its rows carry their ids in the file) and the old file is
DELETED with its inherited `first_row_id` written out (*First Row ID Inheritance*: "the
inherited value of `first_row_id` must be written into data file metadata when creating
existing and deleted entries"). (An upsert through **equality deletes** is the
exception: the spec treats it as a delete plus a brand-new row with a new id — notebook
`07-investigating-a-table`, cell `7b01623d`, shows it.)"""),

    md("lineage-retry", """
## Row ids and a retried commit

Row ids come from the table's `next-row-id` at commit time, so a commit that loses a race must
take new ones: "if a commit is retried, the `first-row-id` must be reassigned based on the
table's current `next-row-id`" (*Snapshot Row IDs*). Because new files are written with null
ids (inherited on read), the retry rewrites neither data files nor manifests, only the manifest
list (*Row Lineage*: "inheritance is used to allow writing data and manifest files before values
are known").

**Predict before you run:** `events` was loaded before another writer appends. What
`first-row-id` will its own append get?"""),
    code("lineage-retry-act", """
stale_next_row_id = events.metadata.next_row_id
other_writer = wh.table("course.events")
other_writer.append([{"id": 12, "kind": "click"}])
events.append([{"id": 13, "kind": "click"}])  # planned on the older state
print("next-row-id when events was loaded:", stale_next_row_id)
print("other writer: first-row-id", other_writer.current_snapshot.first_row_id,
      " added-rows", other_writer.current_snapshot.added_rows)
print("events: attempts", events.last_commit.attempts,
      " first-row-id", events.current_snapshot.first_row_id)"""),
    md("lineage-retry-explain", """
The first attempt of `events` used the `next-row-id` it had loaded; the catalog refused it (the
table had moved on), and the retry took the ids after the other writer's — no two rows share an
id. Lesson 05 is about such races in general."""),
    md("lineage-example", """
## The spec's row lineage example, number for number

Spec, *Row lineage example*: a table with `next-row-id` 1000 commits an append whose manifest
list holds an existing manifest and three new ones:

| `manifest_path` | `added_rows_count` | `existing_rows_count` | `first_row_id` |
|---|---|---|---|
| existing | 75 | 0 | 925 |
| added1 | 100 | 25 | 1000 |
| added2 | 0 | 100 | 1125 |
| added3 | 125 | 25 | 1225 |

and `added1` holds an EXISTING `data1` (25 rows, `first_row_id` 800) and two ADDED files
`data2` and `data3` of 50 rows each, which read `first_row_id` 1000 and 1050. The new
`next-row-id` is 1,375.

No single table operation writes three manifests with existing entries, so we build this
snapshot's files with the functions every icenb commit uses: `write_manifest` (the manifests)
and `write_manifest_list` (which assigns `first_row_id`s, *First Row ID Assignment*), then read
them back with icenb's reader. The data files are described, not written.

**Predict before you run:** which `first_row_id` will `added3` get?"""),
    code("lineage-example-build", """
from dataclasses import replace

from icenb.io.manifest_reader import read_manifest_entries
from icenb.io.manifest_writer import write_manifest, write_manifest_list
from icenb.spec.manifest import DataFile, EntryStatus, FileFormat, ManifestContent, ManifestEntry

example = wh.create_table("course.lineage_example", "id long", format_version=3)
folder = example.location + "/metadata/"
EARLIER, NOW = 1, 2  # ids (and sequence numbers) of an earlier snapshot and the new one


def data_file(name, rows, first_row_id=None):
    return DataFile(file_path=f"{example.location}/data/{name}.parquet",
                    file_format=FileFormat.PARQUET, record_count=rows,
                    file_size_in_bytes=1024, first_row_id=first_row_id)


def added(name, rows):
    return ManifestEntry(EntryStatus.ADDED, None, None, None, data_file(name, rows))


def existing(name, rows, first_row_id):
    return ManifestEntry(EntryStatus.EXISTING, EARLIER, EARLIER, EARLIER,
                         data_file(name, rows, first_row_id))


def manifest(name, entries, snapshot_id=NOW, first_row_id=None):
    return write_manifest(example.io, folder + name + ".avro", example.spec, example.schema, 3,
                          ManifestContent.DATA, entries, snapshot_id=snapshot_id,
                          first_row_id=first_row_id)


old = manifest("existing", [added("data0", 75)], snapshot_id=EARLIER, first_row_id=925)
old = replace(old, sequence_number=EARLIER, min_sequence_number=EARLIER)  # as committed then
manifests = [
    old,
    manifest("added1", [existing("data1", 25, 800), added("data2", 50), added("data3", 50)]),
    manifest("added2", [existing(f"data{4 + i}", 25, 825 + 25 * i) for i in range(4)]),
    manifest("added3", [existing("data8", 25, 775), added("data9", 125)]),
]
written = write_manifest_list(example.io, folder + "snap-2.avro", manifests, format_version=3,
                              snapshot_id=NOW, parent_snapshot_id=EARLIER, sequence_number=NOW,
                              first_row_id=1000)
listed = avro_records(written.manifest_list, ["manifest_path", "added_rows_count",
                                              "existing_rows_count", "first_row_id"])
listed.assign(manifest_path=[m.manifest_path.rsplit("/", 1)[-1].removesuffix(".avro")
                             for m in written.manifests])"""),
    code("lineage-example-files", """
print("snapshot first-row-id:", written.first_row_id, " new next-row-id:", written.next_row_id,
      " added-rows (ids assigned):", written.added_rows)
added1 = written.manifests[1]
as_written = avro_records(added1.manifest_path, ["status", "data_file.record_count",
                                                 "data_file.first_row_id"])
as_read = read_manifest_entries(example.io, [added1], 3).to_pylist()
pd.DataFrame({
    "status": [EntryStatus(e["status"]).name for e in as_read],
    "file_path": [e["data_file"]["file_path"].rsplit("/", 1)[-1] for e in as_read],
    "record_count": [e["data_file"]["record_count"] for e in as_read],
    "first_row_id written": [d["first_row_id"] if d["first_row_id"] is not None else "null"
                             for d in as_written["data_file"]],
    "first_row_id read": [e["data_file"]["first_row_id"] for e in as_read],
})"""),
    md("lineage-example-explain", """
Every number matches the spec. The existing manifest keeps the 925 it got when it was added;
`added1` starts at the snapshot's `first-row-id`, 1000; each next new manifest starts where the
previous one's added **and existing** rows end — `added2` adds no file yet moves the counter by
100, because an existing file without an id could be numbered there. In `added1`, `data1`
keeps its 800 (an existing file's `first_row_id` is written into the new manifest), while
`data2` and `data3` are written with null and read 1000 and 1050 (*First Row ID Inheritance*).
The table's `next-row-id` becomes 1000 + 375 = 1,375.

The spec's text says the snapshot "populates `added-rows` … 100 (50 + 50)", yet its *Snapshot
Row IDs* section defines `added-rows` as the upper bound of rows given ids, which "can be more
than the number of rows added". icenb follows the latter, as Iceberg Java does: 375, the amount
`next-row-id` moves."""),

    md("versions-v4-intro", """
## Upgrade to version 4 (EXPERIMENTAL): a root manifest instead of a manifest list

icenb's version 4 is the **Single File Commits** proposal (lesson 08, notebook 06), which no
engine implements. Its *Upgrade* section: "propagating every Manifest List Entry into a V4
RootManifest entry. The first commit to a V4 table must perform this migration."

The released spec's Appendix E has a different, still unadopted *Version 4* section: relative
paths in metadata. icenb does not write relative paths; its v4 locations stay absolute.

**Predict before you run:** how many manifests will the first v4 append rewrite?"""),
    code("versions-v4-upgrade", """
pre_v4 = metadata_json(events)
events.upgrade(4)
display(field_changes(pre_v4, metadata_json(events)))
events.append([{"id": 10, "kind": "signup"}])
v4 = metadata_json(events)
snap = v4["snapshots"][-1]
print("new snapshot fields:", ", ".join(snap))
print("manifest-list" in snap, "root-manifest" in snap)
events.metadata_tree()"""),
    md("versions-v4-explain", """
The upgrade again changed only `format-version`. The first v4 commit wrote a snapshot with a
`root-manifest` and no `manifest-list`: the root lists every manifest of the old manifest list
as EXISTING entries (`DATA_MANIFEST` / `DELETE_MANIFEST` content entries, their counts moved into
`manifest_stats`, their `first_row_id` kept) and the appended file **directly** — no manifest
was rewritten and no new leaf manifest written. Row lineage carries on. The root's records are
v4 *content entries*, a new field set:"""),
    code("versions-v4-fields", """
root_fields = avro_fields(events.current_snapshot.root_manifest)
print("root manifest (content entry):", ", ".join(
    f"{k}{'?' if v == 'optional' else ''}" for k, v in root_fields.items()))
lineage(events.scan(columns=lineage_columns)).sort_values("_row_id").tail(3)"""),
    md("versions-recap", """
## What changed, step by step

- **v1**: no sequence numbers; `schema` and `partition-spec` beside the lists; manifest-list
  counts optional, no `content`.
- **→ v2**: `format-version` 2 and `last-sequence-number`; the manifest list gains `content`,
  `sequence_number`, `min_sequence_number`, its counts become required; manifest entries gain
  sequence numbers. Writers: sequence numbers, delete files, the required fields.
- **→ v3**: `format-version` 3 and `next-row-id`; `first_row_id` in manifest lists and data
  files; `referenced_data_file`, `content_offset`, `content_size_in_bytes` for DVs. Writers:
  row ids, DVs instead of new position deletes, default values, `source-ids`.
- **→ v4 (experimental)**: `format-version` 4; snapshots name a `root-manifest` of content
  entries instead of a manifest list. Writers: the proposal's commit procedure (lesson 08).

An upgrade is always one metadata-only commit; a downgrade is refused."""),
    code("versions-no-downgrade", """
try:
    events.upgrade(3)
except icenb.errors.ValidationError as e:
    print(type(e).__name__ + ":", str(e).split(" (file:")[0])"""),

    md("versions-exercises", """
## Exercises

Each cell checks your answer against the tables above. Change `answer` and run the cell."""),
    code("versions-exercise-next-row-id", """
answer = 10  # your answer: the table's next-row-id right after the first commit on v3
check(answer, expected=first_v3["next-row-id"],
      hint="the first v3 commit gave ids to every row in the table, the old rows too")""",
         wrong="1"),
    code("versions-exercise-added3", """
answer = 1225  # your answer: the first_row_id the spec's example gives manifest added3
check(answer, expected=written.manifests[3].first_row_id,
      hint="add the added and existing rows of added1 and added2 to 1000")""", wrong="1125"),
    code("versions-exercise-field", """
answer = "next-row-id"  # your answer: the metadata.json field that t.upgrade(3) added
check(answer, expected=upgrade_to_v3.query("before == '(absent)'")["field"].iloc[0],
      hint="compare the fields before and after the upgrade to v3")""", wrong='"first-row-id"'),
    md("versions-next", """
Next: 08 — The v4 proposal in prose: the content entry, why two levels, affinity, change
detection and the alternatives the proposal discarded."""),
]


if __name__ == "__main__":
    print(write(CELLS, "07-format-versions"))
