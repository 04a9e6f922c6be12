"""Write notebooks/course/05-concurrency.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/course/make_05.py``, then
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
05-concurrency.ipynb`` and ``python docs/notebooks/course/_course.py clean <it>``.
"""

from __future__ import annotations

from _course import Cell, code, md, write

NAME = "05-concurrency"

CELLS: list[Cell] = [
    md("conc-question", """
# 05 — Concurrency: what happens when two writers commit at once?

Iceberg has no lock server. Its concurrency rests on one **atomic swap**: a commit replaces
the table's current metadata file by a new one, and the swap succeeds only if the current file is
still the one the writer started from (spec: *Optimistic Concurrency*). A writer that loses the
race does not fail at once: it checks whether its change still makes sense on the new state and,
if so, applies it again and retries (spec: *Commit Conflict Resolution and Retry*).

We play two writers, `w1` and `w2`: two handles on the same table, each loaded from the
warehouse, exactly as two notebooks or two jobs would have them."""),
    code("conc-setup", """
import os

import pandas as pd

import icenb
from icenb.demo import scratch
from icenb.exercise import check

pd.set_option("display.width", 120)
wh = scratch("05-concurrency")  # a fresh warehouse in scratch/05-concurrency
t = wh.create_table("bank.payments", "id long not null, account string not null, amount int",
                    partition_by=["account"], format_version=3)
t.append([{"id": 1, "account": "ann", "amount": 10},
          {"id": 2, "account": "bob", "amount": 20},
          {"id": 3, "account": "cy", "amount": 30}])


def metadata_files(table):
    \"\"\"The table's metadata JSON files: one per committed version.\"\"\"
    folder = os.path.join(table.location, "metadata")
    return sorted(f for f in os.listdir(folder) if f.endswith(".metadata.json"))


def ids(table):
    return sorted(table.refresh().to_pandas()["id"])


print(len(metadata_files(t)), "metadata files so far")"""),
    md("conc-appends-md", """
## 1. Two appends at once

Both writers load the table at the same snapshot S1. `w1` appends and commits first: the
table's current metadata moves on. Then `w2` appends from its stale view.

*Predict before you run: does `w2`'s append fail? If not, what sequence number does its snapshot
get — 2, like `w1`'s, or 3?*"""),
    code("conc-appends-act", """
w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
print("both loaded at sequence number", w1.current_snapshot.sequence_number,
      w2.current_snapshot.sequence_number)
s_w1 = w1.append([{"id": 4, "account": "ann", "amount": 40}])
print("after w1's commit, w2 still reads sequence number", w2.current_snapshot.sequence_number)
s_w2 = w2.append([{"id": 5, "account": "cy", "amount": 50}])
print("w1:", s_w1.summary.operation, "sequence number", s_w1.sequence_number,
      "| attempts:", w1.last_commit.attempts)
w2_attempts = w2.last_commit.attempts
print("w2:", s_w2.summary.operation, "sequence number", s_w2.sequence_number,
      "| attempts:", w2_attempts,
      "| parent is w1's snapshot:", s_w2.parent_snapshot_id == s_w1.snapshot_id)"""),
    md("conc-appends-explain", """
`w2`'s first attempt built a snapshot on S1 with sequence number 2, and the swap failed:
the current metadata was no longer the one it started from. An append has **no requirements**
(it only adds files), so `w2` re-applied it on the new state — parent S2, sequence number **3** —
and the second attempt won. The spec (*Sequence Numbers*) says exactly this: the sequence number
is assigned optimistically and reassigned on retry.

What did the retry rewrite? Not the data file, not the manifest: new entries are written with a
`null` sequence number and inherit the one of their manifest from the manifest list (spec:
*Sequence Number Inheritance*). Only the manifest list is rewritten; its file name carries the
attempt number (`snap-<snapshot id>-<attempt>-<commit uuid>.avro`):"""),
    code("conc-appends-files", """
print("w1's manifest list: attempt", os.path.basename(s_w1.manifest_list).split("-")[2])
print("w2's manifest list: attempt", os.path.basename(s_w2.manifest_list).split("-")[2])
t.refresh()
t.snapshots"""),
    code("conc-appends-tree", """
t.metadata_tree()"""),
    md("conc-appends-tree-md", """
In the tree, `w2`'s data file (the newest manifest) has data sequence number 3 although
its manifest was written during attempt 1: the value comes from the manifest list at read time.
Each successful commit also wrote one new metadata file — the versions the atomic swap moves
between:"""),
    code("conc-metadata-files", """
[name.split("-")[0] + "-….metadata.json" for name in metadata_files(t)]"""),
    md("conc-snapshot-ids-md", """
Without a lock server, who hands out snapshot ids? Each writer picks its own. Appendix F
(*Assignment of Snapshot IDs*) asks for positive ids that are unlikely to collide — the Java
implementation derives them from a random UUID — and for a check that the id is not already in
the table. The ids of our three snapshots, and the `current-snapshot-id` of a table that has no
snapshot yet, as format v2 and v3 write it (Java's `-1` before v3, `null` from v3 on):
"""),
    code("conc-snapshot-ids", """
import json

snapshot_ids = [s.snapshot_id for s in t.snapshots]
print("positive longs:", all(0 < i < 2**63 for i in snapshot_ids),
      "| distinct:", len(set(snapshot_ids)) == len(snapshot_ids))
for version in (2, 3):
    empty = wh.create_table(f"bank.empty_v{version}", "id long", format_version=version)
    raw = json.loads(empty.io.new_input(empty.metadata_location).open().read())
    print(f"empty v{version} table: current-snapshot-id =",
          json.dumps(raw.get("current-snapshot-id")))
"""),
    md("conc-rules-md", """
## What a retry must check

*Commit Conflict Resolution and Retry* lists what each kind of operation verifies before it is
re-applied on a newer state:

| operation | validated on retry |
|---|---|
| append | nothing: it can always be applied |
| replace (compaction, format change) | the files it replaces are still in the table (section 5) |
| delete of specific files (copy-on-write, merge-on-read) | those files are still in the table |
| delete by an expression (whole files, `where ts < X`) | nothing: it can always be applied |
| schema or partition spec change | the schema has not changed since the base version |

Engines add checks of their own and name them by **isolation level**, a table property per
operation (`write.delete.isolation-level`, `write.update.isolation-level`,
`write.merge.isolation-level`; Iceberg Java's default, and icenb's, is `serializable`):

- **serializable**: a row-level delete, update or merge also fails if a concurrent commit
  *added data* its filter may match: the result must be what running the commits one after
  the other, in the order they committed, would give;
- **snapshot**: only conflicts on the files and deletes it touches fail it; rows added
  concurrently are simply not seen by it."""),
    md("conc-conflict-md", """
## 2. A conflict refused: delete vs. a concurrent append

`w2` deletes all of Bob's payments while `w1` concurrently appends a new one. The table is
`serializable` (the default).

*Predict before you run: does `w2`'s delete commit? If it did, would Bob's new payment
survive?*"""),
    code("conc-conflict-act", """
w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
w1.append([{"id": 6, "account": "bob", "amount": 60}])
files_before = len(metadata_files(t))
try:
    w2.delete("account = 'bob'")
except icenb.errors.CommitConflict as e:
    print("CommitConflict:", e.field, "-", e.value)
print("metadata files:", files_before, "->", len(metadata_files(t)), "| rows:", ids(t))"""),
    md("conc-conflict-explain", """
Refused: `w1`'s new file lies in partition `bob`, which the delete's filter may match
(`validate_no_conflicting_data`). Had the delete committed on the new state, it would have
removed only what `w2` had seen (payment 2) and left payment 6. But in the table's history the
delete would come *after* the append, and "delete all of Bob's payments" run after the append
leaves none: serializable isolation refuses that. Nothing changed: no metadata file was added, and
a refused commit deletes whatever files it had written.
The remedy is the application's: reload and run the delete again, now over the new
state."""),
    code("conc-conflict-retry", """
w2.refresh()
w2.delete("account = 'bob'")
print("rows:", ids(t))"""),
    md("conc-elsewhere-md", """
Serializable does not mean "every concurrent write conflicts". The check asks whether
the other commit added files that **may** hold rows the delete's filter matches — by partition
and column bounds. An append to another account cannot.

*Predict before you run: `w1` appends a payment of Cy while `w2` deletes Ann's payments. Does
`w2`'s delete commit, and after how many attempts?*"""),
    code("conc-elsewhere-act", """
w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
w1.append([{"id": 7, "account": "cy", "amount": 70}])
w2.delete("account = 'ann'")
print("attempts:", w2.last_commit.attempts, "| rows:", ids(t))"""),
    md("conc-elsewhere-explain", """
Retried once and committed: `w1`'s new file is in partition `cy`, which `account = 'ann'`
cannot match, and the files `w2` deletes are still in the table. How often a writer retries and
how long it waits between attempts are table properties too: `commit.retry.num-retries`
(default 4), `commit.retry.min-wait-ms`, `commit.retry.max-wait-ms` and
`commit.retry.total-timeout-ms`."""),
    md("conc-snapshot-md", """
## 3. The same race under snapshot isolation

We set `write.delete.isolation-level` to `snapshot` and replay the race.

*Predict before you run: does the delete commit now? Does Bob's concurrent payment survive?*"""),
    code("conc-snapshot-act", """
t.set_properties({"write.delete.isolation-level": "snapshot"})
t.append([{"id": 8, "account": "bob", "amount": 80}])
w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
w1.append([{"id": 9, "account": "bob", "amount": 90}])
w2.delete("account = 'bob'")
print("attempts:", w2.last_commit.attempts, "| rows:", ids(t))"""),
    md("conc-snapshot-explain", """
Committed, after one retry: under snapshot isolation, data added concurrently is no
conflict. The delete removed what it had seen — payment 8 — and payment 9, appended by `w1`
meanwhile, survives although the delete committed after it: the delete acted on the snapshot
it read. Whether that is acceptable is the application's call; that is what the isolation level
chooses."""),
    md("conc-same-file-md", """
## 4. Two deletes of the same file

Some conflicts fail under **every** isolation level. Here both writers delete different
rows of Ann's file with merge-on-read deletion vectors. A data file may have at most one DV
(spec: *Deletion Vectors*), and a DV must hold all of its file's deletes — `w2`'s DV, built from
its stale view, would lose `w1`'s.

*Predict before you run: with the table still at `snapshot` isolation, does `w2`'s delete
commit?*"""),
    code("conc-same-file-act", """
t.append([{"id": 10, "account": "ann", "amount": 100},
          {"id": 11, "account": "ann", "amount": 110}])
w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
w1.delete("id = 10", mode="merge-on-read")
try:
    w2.delete("id = 11", mode="merge-on-read")
except icenb.errors.CommitConflict as e:
    print("CommitConflict:", e.field, "-", e.value)
print("rows:", ids(t))"""),
    md("conc-same-file-explain", """
Refused by `validate_no_conflicting_deletes`: `w1` committed a delete file that applies
to rows `w2`'s filter matches. The same holds for copy-on-write: a delete that rewrites a file
must verify the file is still in the table (the spec's rule for deletes of specific files)."""),
    md("conc-compaction-md", """
## 5. A compaction racing a delete, and an append

A compaction is a `replace`: it must verify that the files it replaces are still in the table.

*Predict before you run: `w1` deletes one row copy-on-write (rewriting its file) while `w2`
compacts the three small files. Then `w1` appends while `w2` compacts again. Which compaction
commits?*"""),
    code("conc-compaction-act", """
logs = wh.create_table("bank.logs", "id long not null", format_version=3)
for i in range(3):
    logs.append([{"id": i * 10 + j} for j in range(3)])
w1 = wh.table("bank.logs")
w2 = wh.table("bank.logs")
w1.delete("id = 11", mode="copy-on-write")
try:
    w2.rewrite_data_files(min_input_files=2)
except icenb.errors.CommitConflict as e:
    print("compaction vs delete: CommitConflict -", e.message)
w1 = wh.table("bank.logs")
w2 = wh.table("bank.logs")
w1.append([{"id": 99}])
done = w2.rewrite_data_files(min_input_files=2)
print("compaction vs append: committed after", w2.last_commit.attempts, "attempts,",
      done.rewritten_data_files_count, "files into", done.added_data_files_count)
print("rows:", ids(logs))"""),
    md("conc-compaction-explain", """
The first compaction was refused: one of the files it meant to replace had been removed
by `w1`'s delete, and re-applying it would resurrect row 11. The second was re-applied on the
new state: the appended file was not among the files it replaces, and the appended row is
still there (a compaction never drops rows it did not read)."""),
    md("conc-schema-md", """
## 6. Two schema changes, two partition spec changes

*Predict before you run: `w1` and `w2` each add a column. Does the second one commit? And when
each adds a partition field?*"""),
    code("conc-schema-act", """
w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
with w1.update_schema() as u:
    u.add_column("note", "string")
try:
    with w2.update_schema() as u:
        u.add_column("memo", "string")
except icenb.errors.CommitConflict as e:
    print("CommitConflict:", e.message)
print("columns:", [f.name for f in t.refresh().schema.fields])

w1 = wh.table("bank.payments")
w2 = wh.table("bank.payments")
with w1.update_spec() as u:
    u.add_field("bucket(4, id)")
try:
    with w2.update_spec() as u:
        u.add_field("truncate(10, amount)")
except icenb.errors.CommitConflict as e:
    print("CommitConflict:", e.message)
print("partition fields:", [f.name for f in t.refresh().spec.fields])"""),
    md("conc-schema-explain", """
Both refused, as the spec requires: a schema change is validated against the schema it was
based on, and that schema is no longer current; a partition spec change, likewise, against the
default spec it was based on. (Re-applying "add column `memo`" blindly could
collide with a concurrent change of the same column; the writer must look again.)"""),
    md("conc-exercises-md", """
## Exercises"""),
    code("conc-exercise-attempts", """
answer = 2  # how many attempts did w2's append in section 1 take?
check(answer, expected=w2_attempts,
      hint="one failed swap, then one that won")""", wrong="1"),
    code("conc-exercise-seq", """
answer = 3  # the sequence number w2's append finally got
check(answer, expected=s_w2.sequence_number,
      hint="the number is reassigned on retry: one more than w1's")""", wrong="2"),
    code("conc-exercise-isolation", """
answer = "snapshot"  # the isolation level under which the delete of section 3 committed
check(answer, expected=t.properties["write.delete.isolation-level"],
      hint="look at the table property write.delete.isolation-level")""",
         wrong='"serializable"'),
    md("conc-next", """
**Next: 06 — Maintenance**: expiring snapshots (the retention algorithm step by step),
orphan files, compaction, manifest rewriting and write-audit-publish."""),
]


if __name__ == "__main__":
    print(write(CELLS, NAME))
