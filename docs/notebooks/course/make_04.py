"""Write notebooks/course/04-row-level-deletes.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/course/make_04.py``, then
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
04-row-level-deletes.ipynb`` and ``python docs/notebooks/course/_course.py clean <it>``.
"""

from __future__ import annotations

from _course import Cell, code, md, write

NAME = "04-row-level-deletes"

CELLS: list[Cell] = [
    md("deletes-question", """
# 04 — Row-level deletes: when does a delete apply?

A v2+ table can delete single rows without rewriting the files that hold them: it writes a
**delete file** and readers apply it (spec: *Row-level Deletes*). There are two kinds:

- **position deletes** name a data file and a row position in it — written as a *position
  delete file* (v2) or a *deletion vector* (DV, a bitmap in a Puffin file, v3);
- **equality deletes** name column values (`id = 3`): any row with those values is deleted.

But *which* rows does a delete file reach? Not every row that matches it: only rows in files
that are **older** than the delete, in the **same partition**. This lesson acts out each part of
that rule (spec: *Scan Planning*), reproduces the spec's equality-delete example, and writes the
same delete three ways side by side."""),
    code("deletes-setup", """
import pandas as pd
import pyarrow.parquet as pq

import icenb
from icenb.demo import scratch
from icenb.exercise import check
from icenb.spec.types import LongType
from icenb.spec.values import from_bound_bytes

pd.set_option("display.width", 120)
pd.set_option("display.max_colwidth", 80)
wh = scratch("04-row-level-deletes")  # a fresh warehouse in scratch/04-row-level-deletes


def ids_of(f):
    \"\"\"The range of `id` a data or equality delete file holds, from its bounds (field 1).\"\"\"
    low, high = (from_bound_bytes(LongType(), b[1]) for b in (f.lower_bounds, f.upper_bounds))
    return f"id {low}" if low == high else f"ids {low}-{high}"


def files(table):
    \"\"\"The current snapshot's live files, named by what they hold, with the data sequence
    number each one has after inheritance and the data files each delete file applies to.\"\"\"
    kinds = {"data_file": "data", "equality_delete": "equality delete",
             "delete_file": "position delete", "deletion_vector": "deletion vector"}
    entries = [e for _, e in table.metadata_tree().entries() if e.status.name != "DELETED"]
    name = {e.file.file_path: kinds[e.kind] + (
        "" if e.kind in ("delete_file", "deletion_vector") else " " + ids_of(e.file))
        for e in entries}
    rows = [{"file": name[e.file.file_path], "data seq": e.sequence_number,
             "spec": e.file.spec_id, "partition": ", ".join(map(str, e.file.partition)) or "-",
             "rows": e.file.record_count,
             "applies to": ", ".join(sorted(name[p] for p in e.applies_to)) or "-"}
            for e in entries]
    return pd.DataFrame(rows).sort_values(["data seq", "file"]).set_index("file")


def rows(table):
    return table.to_pandas().sort_values(["id", "name"], ignore_index=True)"""),
    md("deletes-seq-md", """
## 1. A delete reaches only older rows

Every commit gets the next **sequence number**, and every file it adds inherits it as its
**data sequence number** (spec: *Sequence Numbers*). The rule for an equality delete: it applies
to a data file only when the data file's data sequence number is **strictly less** than the
delete's.

We load the spec's little zoo (S1), delete the key `id = 3` with an equality delete (S2), then
append a row with `id = 3` again (S3).

*Predict before you run: after S3, is there a row with `id = 3`? If so, which one?*"""),
    code("deletes-seq-act", """
zoo = wh.create_table("zoo.animals", "id long not null, category string, name string",
                      format_version=3)
zoo.append([{"id": 1, "category": "marsupial", "name": "Koala"},
            {"id": 2, "category": "toy", "name": "Teddy"},
            {"id": 3, "category": None, "name": "Grizzly"},
            {"id": 4, "category": None, "name": "Polar"}])
zoo.delete_by_key([{"id": 3}], on="id")
zoo.append([{"id": 3, "category": None, "name": "Grizzly, back again"}])
rows(zoo)"""),
    md("deletes-seq-tree-md", """
The old Grizzly is gone and the new one survived. The metadata tree shows why: the
equality delete file was committed at sequence number 2; it applies to the file of S1 (data
sequence number 1 < 2) and not to the file of S3 (3 is not < 2). The table below the drawing
lists each file's data sequence number and what each delete file applies to."""),
    code("deletes-seq-tree", """
zoo.metadata_tree()"""),
    code("deletes-seq-files", """
files(zoo)"""),
    md("deletes-seq-inherit-md", """
Where does a file's data sequence number come from? A manifest entry is written with
`null` and **inherits** the sequence number of its manifest from the manifest list when it is
read (spec: *Sequence Number Inheritance*) — that is what lets a writer reuse its manifests when
a commit is retried (lesson 05; lesson 01 prints a raw manifest with those nulls). The
snapshots and their sequence numbers:"""),
    code("deletes-seq-inherit", """
pd.DataFrame([
    {"snapshot": f"S{i}", "operation": s.summary.operation, "sequence number": s.sequence_number}
    for i, s in enumerate(sorted(zoo.snapshots, key=lambda s: s.sequence_number), start=1)
]).set_index("snapshot")"""),
    md("deletes-scope-rules", """
## The scope rules

From *Scan Planning*, a delete applies to a data file when all of these hold:

| delete | data files | data sequence number | partition |
|---|---|---|---|
| deletion vector (v3) | its `referenced_data_file` | data's **≤** DV's | same |
| position delete file | `referenced_data_file` if set, else any | data's **≤** delete's | same |
| equality delete file | any | data's **<** delete's | same, **or** delete unpartitioned |

(For the partition, "same" means the same spec id and the same partition values; an equality
delete stored with an unpartitioned spec is a *global* delete.)

Two special cases follow: position deletes (files and DVs) apply to data files **of the same
commit** (equal sequence numbers) — so a writer can delete a row it added in the same commit —
while equality deletes never do; and an equality delete stored with an unpartitioned spec applies
across all partitions. Both are acted out below. A DV also replaces the position delete files of
its data file: when a DV exists, readers ignore those files."""),
    md("deletes-same-commit-md", """
## 2. Deletes and rows of the same commit

An **upsert** replaces rows by key in one commit: it writes an equality delete of the keys *and*
the new rows, both with the commit's sequence number.

*Predict before you run: we upsert Koala (`id = 1`) with a new name. The commit's equality delete
matches `id = 1` — does it delete the new Koala too?*"""),
    code("deletes-same-commit-act", """
zoo.upsert([{"id": 1, "category": "marsupial", "name": "Koala, renamed"}], on="id")
rows(zoo)"""),
    code("deletes-same-commit-files", """
files(zoo)"""),
    md("deletes-same-commit-explain", """
The upsert's equality delete and its new data file share data sequence number 4, and an
equality delete needs the data file's number to be *strictly less*: it reaches the old Koala
(sequence number 1) but not the new one. This is exactly why the rule is `<` for equality
deletes. A position delete or DV of the same commit *would* apply (`≤`): it names a file and a
position, so it can only mean a row the writer chose to delete.

Note what "applies to" means in these tables: the delete file is **in scope** for that data
file (sequence numbers and partition allow it). Whether a row actually matches is decided when
the file is read: the upsert's delete applies to the file of the new Grizzly (`data id 3`) but
deletes nothing there."""),
    md("deletes-same-commit-dv-md", """
When does a writer delete, by position, a row it writes in the same commit? A streaming
upsert does: Flink, for instance, when one key is upserted twice before a commit, deletes the
first version by position in the file it is still writing. No public icenb write does that, so
we build such a commit with icenb's own building blocks (the row-delta producer a merge-on-read
write uses): one new data file with two rows, and a DV of that same file deleting its first
row (position 0).

*Predict before you run: both files get sequence number 2. Does the DV apply?*
"""),
    code("deletes-same-commit-dv", """
from icenb.table.commit import table_producer
from icenb.table.commit.producer import commit_snapshot
from icenb.table.commit.row_delta import RowDelta
from icenb.table.write.delete_files import write_deletion_vectors
from icenb.table.write.locations import location_provider

same = wh.create_table("zoo.same_commit", "id long not null, name string", format_version=3)
same.append([{"id": 1, "name": "Koala"}])
md = same.metadata
producer = table_producer("row_delta", same, RowDelta)
with producer.aborted_on_error():
    (new_file,) = producer.write_data([{"id": 2, "name": "Teddy, first version"},
                                       {"id": 2, "name": "Teddy, second version"}], md)
    dv = write_deletion_vectors(same.io, [(new_file, [0])],   # delete position 0 of new_file
                                location_provider=location_provider(md.location, md.properties),
                                operation_id=producer.commit_uuid)
    producer.track_written([f.file_path for f in dv])
    producer.add_deletes(dv)
    commit_snapshot(same, producer)
icenb.side_by_side(files(same), rows(same), titles=["files", "rows read"])
"""),
    md("deletes-same-commit-dv-explain", """
The DV and the data file it names share data sequence number 2, and the DV applies (`≤`): the
first Teddy is gone, the second stays. Had this been an equality delete of `id = 2`, it would have
reached neither Teddy (`<`).
"""),
    md("deletes-spec-example-md", """
## 3. The spec's equality-delete example, and null

The spec (*Equality Delete Files*) uses this table:

```text
 1: id | 2: category | 3: name
-------|-------------|---------
 1     | marsupial   | Koala
 2     | toy         | Teddy
 3     | NULL        | Grizzly
 4     | NULL        | Polar
```

`id = 3` is an equality delete file with `equality_ids=[1]` and one row `3` (section 1 wrote
exactly that). `id = 4 AND category IS NULL` is a file with `equality_ids=[1, 2]`: a `null` in a
delete column matches a row whose value is `null` (it means `IS NULL`, not SQL's `= NULL`).

*Predict before you run: we also delete `(id = 2, category = null)`. Which rows are left?*"""),
    code("deletes-spec-example-act", """
example = wh.create_table("zoo.example", "id long not null, category string, name string",
                          format_version=3)
example.append([{"id": 1, "category": "marsupial", "name": "Koala"},
                {"id": 2, "category": "toy", "name": "Teddy"},
                {"id": 3, "category": None, "name": "Grizzly"},
                {"id": 4, "category": None, "name": "Polar"}])
example.delete_by_key([{"id": 3}], on="id")
example.delete_by_key([{"id": 4, "category": None}], on=["id", "category"])
example.delete_by_key([{"id": 2, "category": None}], on=["id", "category"])
rows(example)"""),
    md("deletes-spec-example-files-md", """
Polar matched `id = 4 AND category IS NULL`; Teddy did not match `id = 2 AND category IS
NULL` (its category is `toy`). Here are the three equality delete files as stored: the field ids
of their delete columns (`equality_ids`) and their rows. icenb writes only the delete columns —
the spec's first form; the second form, with the whole deleted row, is equally valid (below)."""),
    code("deletes-spec-example-files", """
names = {f.field_id: f.name for f in example.schema.fields}
for _, e in example.metadata_tree().entries():
    if e.kind == "equality_delete":
        stored = pq.read_table(example.io.new_input(e.file.file_path).open())
        print(f"equality_ids={list(e.file.equality_ids)}",
              "(" + ", ".join(names[i] for i in e.file.equality_ids) + ")",
              "rows:", stored.to_pylist())"""),
    md("deletes-second-form-md", """
The spec's **second form** of `id = 3` stores the whole deleted row — `id`, `category`, `name`
— but still lists only `equality_ids=[1]`: the extra columns are carried along (a change stream
could use them) and take no part in matching. No public icenb write produces that form, so, as
in section 2, we build it from icenb's building blocks: an equality delete file written with all
three columns, declared with `equality_ids=[1]`.

*Predict before you run: the stored row says `category = null`. Does the delete also need a
null category to match?*
"""),
    code("deletes-second-form", """
import dataclasses

import pyarrow as pa

from icenb.table.write.delete_files import write_equality_deletes

second = wh.create_table("zoo.second_form", "id long not null, category string, name string",
                         format_version=3)
second.append([{"id": 1, "category": "marsupial", "name": "Koala"},
               {"id": 2, "category": "toy", "name": "Teddy"},
               {"id": 3, "category": None, "name": "Grizzly"},
               {"id": 4, "category": None, "name": "Polar"}])
md = second.metadata
producer = table_producer("row_delta", second, RowDelta)
with producer.aborted_on_error():
    whole_row = write_equality_deletes(
        second.io, pa.Table.from_pylist([{"id": 3, "category": None, "name": "Grizzly"}]),
        schema=md.schema, fields=md.schema.fields, specs=[md.spec], properties=md.properties,
        location_provider=location_provider(md.location, md.properties),
        format_version=md.format_version, operation_id=producer.commit_uuid)
    producer.track_written([f.file_path for f in whole_row])
    producer.add_deletes([dataclasses.replace(f, equality_ids=(1,)) for f in whole_row])
    commit_snapshot(second, producer)
for _, e in second.metadata_tree().entries():
    if e.kind == "equality_delete":
        stored = pq.read_table(second.io.new_input(e.file.file_path).open())
        print(f"equality_ids={list(e.file.equality_ids)} rows:", stored.to_pylist())
rows(second)
"""),
    md("deletes-second-form-explain", """
Grizzly is deleted, and only by `id`: Polar, whose category is null too, is untouched. The two
forms delete the same rows; the second one is larger and carries the deleted values.
"""),
    md("deletes-added-column-md", """
One more rule of *Equality Delete Files*: a delete column may be a column added to the
table after some data files were written. For those older files the column's value is read
with the normal projection rules — `null` for a new optional column — and compared as such.

*Predict before you run: we add an optional column `keeper` and delete `(id = 2, keeper =
null)`. Is Teddy, written before `keeper` existed, deleted?*"""),
    code("deletes-added-column", """
with example.update_schema() as u:
    u.add_column("keeper", "string")
example.delete_by_key([{"id": 2, "keeper": None}], on=["id", "keeper"])
rows(example)"""),
    md("deletes-added-column-explain", """
Teddy is gone: his file has no `keeper` column, so he reads `keeper = null`, which the
delete's `null` matches.

The converse rule: a delete column that is later **dropped** from the table must still be used
when the delete is applied. The Polar delete matched on `(id, category)`.

*Predict before you run: we drop `category`. Does Polar come back?*"""),
    code("deletes-dropped-column", """
with example.update_schema() as u:
    u.delete_column("category")
print("columns now:", [f.name for f in example.schema.fields])
rows(example)"""),
    md("deletes-dropped-column-explain", """
No: the reader still compares the dropped column, read from the data file and the delete file
(both have it), so Polar stays deleted although no query can name `category` any more."""),
    md("deletes-global-md", """
## 4. Global equality deletes

Delete files are tracked by partition, like data files, and normally apply only within their
partition. The exception: an equality delete stored with an **unpartitioned** spec applies to
every partition. We build a table that started unpartitioned (spec 0), then was partitioned by
`region` (spec 1). A delete by key `(id, region)` must reach files of both specs, so icenb writes
one delete file per spec: one in the partition `region=us` of spec 1, and one with spec 0.

*Predict before you run: which data files does each of the two delete files apply to?*"""),
    code("deletes-global-act", """
regions = wh.create_table("zoo.regions", "id long not null, region string not null",
                          format_version=2)
regions.append([{"id": 1, "region": "eu"}, {"id": 2, "region": "us"}])   # spec 0: one file
with regions.update_spec() as u:
    u.add_field("region")
regions.append([{"id": 1, "region": "us"}, {"id": 3, "region": "eu"}])   # spec 1: two files
regions.delete_by_key([{"id": 1, "region": "us"}], on=["id", "region"])
files(regions)"""),
    md("deletes-global-explain", """
The spec-1 delete file (partition `us`) applies to the one spec-1 data file of `us`. The
spec-0 delete file is a **global** delete: it applies to every older data file, of any spec and
partition. That is why equality deletes on an unpartitioned spec are expensive for readers —
every data file must be checked against them — and why writers partition them when they can.
The rows left:"""),
    code("deletes-global-rows", """
regions.to_pandas().sort_values(["id", "region"], ignore_index=True)"""),
    md("deletes-three-ways-md", """
## 5. One delete, three ways

The same delete — `name = 'Teddy'` — on three copies of one table of two data files:

- **(a)** format v2, merge-on-read: a **position delete file** (data file path + position);
- **(b)** format v3, merge-on-read: a **deletion vector** (spec: *Delete Formats* — position
  delete files must not be added to v3 tables);
- **(c)** copy-on-write (any version): the data file holding Teddy is **rewritten** without him.

*Predict before you run: how many files does each commit add, and how many data files does it
remove?*"""),
    code("deletes-three-ways-act", """
def toys(name, version, mode):
    t = wh.create_table(name, "id long not null, name string", format_version=version,
                        properties={"write.delete.mode": mode})
    t.append([{"id": i, "name": n} for i, n in enumerate(["Koala", "Teddy", "Grizzly"], 1)])
    t.append([{"id": i, "name": n} for i, n in enumerate(["Polar", "Panda"], 4)])
    t.delete("name = 'Teddy'")
    return t


ways = {"(a) v2 position delete file": toys("toys.v2_pos", 2, "merge-on-read"),
        "(b) v3 deletion vector": toys("toys.v3_dv", 3, "merge-on-read"),
        "(c) copy-on-write": toys("toys.v3_cow", 3, "copy-on-write")}
pd.DataFrame([{
    "way": way, "operation": t.current_snapshot.summary.operation,
    "data files added": int(t.current_snapshot.summary.get("added-data-files", 0)),
    "data files removed": int(t.current_snapshot.summary.get("deleted-data-files", 0)),
    "delete files added": int(t.current_snapshot.summary.get("added-delete-files", 0)),
    "rows in data files": int(t.current_snapshot.summary["total-records"]),
    "rows read": t.scan().count(),
} for way, t in ways.items()]).set_index("way")"""),
    md("deletes-three-ways-trees-md", """
All three read 4 rows. Merge-on-read left both data files alone (5 rows still in them) and
added one small delete file; copy-on-write replaced one data file by a new one with 2 rows, so
its readers have nothing to apply. The three metadata trees side by side:"""),
    code("deletes-three-ways-trees", """
icenb.side_by_side(*(t.metadata_tree() for t in ways.values()), titles=list(ways))"""),
    md("deletes-stats-md", """
## Delete file stats

Manifests keep the same statistics for delete files as for data files, and for a delete file
they describe the **deleted** values (spec: *Delete File Stats*): a position delete file has
bounds on `file_path` and `pos`; an equality delete file on its delete columns. A planner uses
them to skip a delete file that cannot match a scan (spec, *Scan Planning*, note 2). A DV has no
column bounds: its `record_count` is the number of deleted positions, and it points into its
Puffin file by `content_offset` and `content_size_in_bytes`.

*Predict before you run: what are the lower and upper bounds of `pos` in the v2 position delete
file?*"""),
    code("deletes-stats", """
def delete_stats(t):
    out = []
    for _, e in t.metadata_tree().entries():
        f = e.file
        if e.kind == "data_file":
            continue
        row = {"table": t.identifier[-1], "kind": e.kind, "record_count": f.record_count}
        if e.kind == "delete_file":   # pos is field 2147483545
            row["pos bounds"] = tuple(from_bound_bytes(LongType(), b[2147483545])
                                      for b in (f.lower_bounds, f.upper_bounds))
        if e.kind == "equality_delete":
            row["id bounds"] = tuple(from_bound_bytes(LongType(), b[1])
                                     for b in (f.lower_bounds, f.upper_bounds))
        if e.kind == "deletion_vector":
            row["DV blob"] = f"offset {f.content_offset}, {f.content_size_in_bytes} bytes"
        out.append(row)
    return out


pd.DataFrame(delete_stats(ways["(a) v2 position delete file"])
             + delete_stats(ways["(b) v3 deletion vector"])
             + delete_stats(zoo)).fillna("")"""),
    md("deletes-pos-file-md", """
What is inside the v2 position delete file (spec: *Position Delete Files*): rows of
`file_path` and `pos`, sorted by path then position. The optional `row` column with the deleted
row's values is absent: the spec allows it, but no implementation writes it (Appendix F,
*Position Delete Files with Row Data*). We print the data file's name, not its full path."""),
    code("deletes-pos-file", """
pos_entry = next(e for _, e in ways["(a) v2 position delete file"].metadata_tree().entries()
                 if e.kind == "delete_file")
stored = pq.read_table(ways["(a) v2 position delete file"].io.new_input(
    pos_entry.file.file_path).open())
print("columns:", stored.column_names, "| field ids:",
      [int(f.metadata[b"PARQUET:field_id"]) for f in stored.schema])
[{"file_path": "…/" + r["file_path"].rsplit("/", 1)[-1], "pos": r["pos"]}
 for r in stored.to_pylist()]"""),
    md("deletes-stats-explain", """
Teddy was row 1 of the first file (positions start at 0), so the position delete file's
`pos` bounds are both 1. The zoo's equality delete files have `id` bounds 3..3 and 1..1: a scan
for `id = 2` could skip both of them without reading them (the spec allows that skip; it does
not require it, and icenb's planner still hands them to the reader)."""),
    md("deletes-dv-bitmap-md", """
And inside the DV of table (b)? A bitmap of deleted positions (spec: *Deletion Vectors*), stored
as a `deletion-vector-v1` blob of a Puffin file. Positions are 64-bit; the bitmap splits each into
a 32-bit **key** (the high 4 bytes) and a 32-bit **sub-position** (the low 4 bytes), with one
32-bit Roaring bitmap per key. Our files are small, so every position has key 0; a position
beyond 2³² lands under key 1: 5,000,000,000 = 2³² + 705,032,704.
"""),
    code("deletes-dv-bitmap", """
from icenb.io.puffin import read_deletion_vector
from icenb.spec.deletion_vector import DeletionVector

dv_file = next(e.file for _, e in ways["(b) v3 deletion vector"].metadata_tree().entries()
               if e.kind == "deletion_vector")
stored_dv = read_deletion_vector(ways["(b) v3 deletion vector"].io.new_input(dv_file.file_path),
                                 dv_file.content_offset, dv_file.content_size_in_bytes,
                                 cardinality=dv_file.record_count)
print("table (b)'s DV deletes positions", list(stored_dv))
big = DeletionVector.from_positions([1, 2, 5_000_000_000])
{f"key {key}": list(bitmap) for key, bitmap in big.by_key.items()}
"""),
    md("deletes-rewrite-pos-md", """
## 6. From position delete files to deletion vectors

First, one more v2 delete on table (a), of rows in **both** data files: `id in (3, 4)`. It writes
one position delete file for two data files; its rows are sorted by `file_path`, then `pos`
(spec: *Position Delete Files*), so a reader can skip to its own file and stream positions.
"""),
    code("deletes-pos-file-sorted", """
legacy = ways["(a) v2 position delete file"]
legacy.delete("id in (3, 4)")
data_name = {task.data_file.file_path: "data " + ids_of(task.data_file)
             for task in legacy.scan().plan(column_stats=True).tasks}
newest = max((e for _, e in legacy.metadata_tree().entries() if e.kind == "delete_file"),
             key=lambda e: e.sequence_number)
stored = pq.read_table(legacy.io.new_input(newest.file.file_path).open()).to_pylist()
print("sorted by file_path, then pos:",
      stored == sorted(stored, key=lambda r: (r["file_path"], r["pos"])))
sorted((data_name[r["file_path"]], r["pos"]) for r in stored)
"""),
    md("deletes-rewrite-pos-md2", """
Position delete files are deprecated in v3, but an upgraded table keeps the ones it has (they
stay valid). `t.rewrite_position_deletes()` rewrites them: on a v3 table each data file's
position deletes become **one deletion vector** (spec: *Delete Formats*: a DV must contain all
deletes from existing position delete files).

*Predict before you run: table (a) now has two position delete files. After the upgrade to v3
and the rewrite, how many DVs does it have, and how many rows does each delete?*"""),
    code("deletes-rewrite-pos-act", """
legacy.upgrade(3)

from icenb.table.explore.metadata_tree import file_kind


def deletes_by_data_file(t):
    \"\"\"For each data file a scan reads (named by its ids), the delete files applied to it.\"\"\"
    kinds = {"delete_file": "position delete file", "deletion_vector": "deletion vector"}
    out = []
    for task in t.scan().plan(column_stats=True).tasks:
        out.append({"data file": "data " + ids_of(task.data_file),
                    "deletes applied": ", ".join(sorted(
                        f"{kinds[file_kind(d)]} ({d.record_count} row{'s' * (d.record_count > 1)})"
                        for d in task.delete_files))
                    or "-"})
    return pd.DataFrame(out).sort_values("data file").set_index("data file")


before = deletes_by_data_file(legacy)
result = legacy.rewrite_position_deletes()
print("rewritten:", result.rewritten_delete_files_count,
      "added:", result.added_delete_files_count,
      "operation:", legacy.current_snapshot.summary.operation)
icenb.side_by_side(before, deletes_by_data_file(legacy),
                   titles=["before: upgraded to v3", "after rewrite_position_deletes"])"""),
    md("deletes-rewrite-pos-explain", """
Both position delete files were removed and each data file now has one DV holding all its
deleted positions: for `data ids 1-3`, Teddy (from the first file) and Grizzly (from the
second), merged into one bitmap. The rows read are
unchanged — a rewrite of deletes is a `replace` commit (spec, *Snapshots*: files added and
removed *without changing table data*):"""),
    code("deletes-rewrite-pos-rows", """
legacy.to_pandas().sort_values("id", ignore_index=True)"""),
    md("deletes-rewrite-pos-puffin-md", """
Where do the two DVs live? A Puffin file may hold many DVs, each found by its offset and
length (spec: *Deletion Vectors*: there are no restrictions on the data files that DVs in the same
Puffin file reference):"""),
    code("deletes-rewrite-pos-puffin", """
dvs = [e.file for _, e in legacy.metadata_tree().entries() if e.kind == "deletion_vector"]
print(len(dvs), "DVs in", len({d.file_path for d in dvs}), "Puffin file(s)")
print("distinct offsets:", len({d.content_offset for d in dvs}) == len(dvs),
      "| first blob at offset", min(d.content_offset for d in dvs),
      "(after the file's 4-byte magic)")"""),
    md("deletes-widget-md", """
## The Deletes widget

`icenb.widgets.Deletes` stages a delete on a scratch branch and compares the two modes without
touching `main`. Its dry run works from metadata alone: the files a filter may touch (inclusive
projection and column bounds) and those it removes whole."""),
    code("deletes-widget", """
from icenb.widgets import Deletes

dry = Deletes(ways["(b) v3 deletion vector"], "id >= 4").dry_run()
print(f"{len(dry.candidates)} candidate file(s) of {dry.files_total}, "
      f"{len(dry.whole)} removed whole, "
      f"between {dry.rows_at_least} and {dry.rows_at_most} rows")"""),
    md("deletes-exercises-md", """
## Exercises

Each answer is checked against the tables above. Change `answer`, run the cell, and see."""),
    code("deletes-exercise-global", """
answer = 3  # how many data files does the global (spec 0) delete of section 4 apply to?
global_delete = next(e for _, e in regions.metadata_tree().entries()
                     if e.kind == "equality_delete" and e.file.spec_id == 0)
check(answer, expected=len(global_delete.applies_to),
      hint="an unpartitioned equality delete applies to every older data file, of any spec")""",
         wrong="1"),
    code("deletes-exercise-seq", """
answer = 4  # the data sequence number of the new Koala's data file (section 2)
new_koala = files(zoo).loc["data id 1", "data seq"]
check(answer, expected=int(new_koala),
      hint="the upsert was the table's fourth commit: its files inherit its sequence number")""",
         wrong="1"),
    code("deletes-exercise-cow", """
answer = 0  # delete files a reader of the copy-on-write table must apply
plan = ways["(c) copy-on-write"].scan().plan()
check(answer, expected=sum(len(task.delete_files) for task in plan.tasks),
      hint="copy-on-write rewrote the data file instead of writing a delete file")""",
         wrong="1"),
    md("deletes-next", """
**Next: 05 — Concurrency**: two writers at once, a conflict refused, a retry that succeeds,
and the sequence numbers a retry gets."""),
]


if __name__ == "__main__":
    print(write(CELLS, NAME))
