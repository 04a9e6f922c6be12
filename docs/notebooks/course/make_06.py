"""Write notebooks/course/06-maintenance.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/course/make_06.py``, then
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
06-maintenance.ipynb`` and ``python docs/notebooks/course/_course.py clean <it>``.
"""

from __future__ import annotations

from _course import Cell, code, md, write

NAME = "06-maintenance"

CELLS: list[Cell] = [
    md("maint-question", """
# 06 — Maintenance: what does a table keep, and how do you tidy it?

Files in an Iceberg table are never changed in place (spec: *File System Operations*: in-place
write, seekable reads, deletes — no rename, no random-access writes). Every commit adds files,
and old snapshots keep old files alive for time travel. So a table grows until someone decides
what to keep. This lesson walks through the tools:

1. **expire snapshots** — the spec's retention algorithm, step by step, with the snapshot tree
   before and after and the files it deletes;
2. **remove orphan files** — files no snapshot knows about (a crashed writer's);
3. **compaction** (`rewrite_data_files`) — many small files into few, in a `replace` snapshot;
4. **manifest rewriting** (`rewrite_manifests`);
5. **write-audit-publish** — stage a commit, check it, then publish it;
6. **old metadata files** — how many `metadata.json` versions a table keeps."""),
    code("maint-setup", """
import os
import time

import pandas as pd

import icenb
from icenb.demo import scratch
from icenb.exercise import check

pd.set_option("display.width", 120)
wh = scratch("06-maintenance")  # a fresh warehouse in scratch/06-maintenance


def batch(first, n, kind="view"):
    return [{"id": i, "kind": kind} for i in range(first, first + n)]


def labels(table):
    \"\"\"S1, S2, ... in commit order, as the snapshot tree draws them.\"\"\"
    ordered = sorted(table.snapshots, key=lambda s: (s.sequence_number, s.timestamp_ms))
    return {s.snapshot_id: f"S{i}" for i, s in enumerate(ordered, start=1)}"""),
    md("maint-history-md", """
## A history to expire

Seven commits on `events`, with every kind of ref the spec has (*Snapshot References*):

- S1, S2 appends; tag **`q1`** on S2, kept only 1 ms (`max-ref-age-ms`);
- S3 a copy-on-write delete that rewrites S2's file; tag **`release`** on S3 (kept forever);
- S4 an append; branch **`exp`** from S4, which keeps at least 3 snapshots
  (`min-snapshots-to-keep`) but none by age (`max-snapshot-age-ms` = 1 ms); S5 on `exp`;
- S6, S7 appends on `main`. The table's default `history.expire.min-snapshots-to-keep` is 2."""),
    code("maint-history", """
t = wh.create_table("shop.events", "id long not null, kind string", format_version=3,
                    properties={"history.expire.min-snapshots-to-keep": "2"})


def commit(action):
    action()
    time.sleep(0.01)  # distinct commit times, so "older than" is never a tie


commit(lambda: t.append(batch(0, 5)))
commit(lambda: t.append(batch(5, 5, "click")))
t.create_tag("q1", max_ref_age_ms=1)
commit(lambda: t.delete("kind = 'click' and id < 7", mode="copy-on-write"))
t.create_tag("release")
commit(lambda: t.append(batch(10, 5)))
t.create_branch("exp", min_snapshots_to_keep=3, max_snapshot_age_ms=1)
commit(lambda: t.append(batch(100, 2), branch="exp"))
commit(lambda: t.append(batch(15, 5)))
commit(lambda: t.append(batch(20, 5)))
S = {name: sid for sid, name in labels(t).items()}
t.snapshots"""),
    code("maint-refs", """
def setting(value):
    return "-" if value is None else value


pd.DataFrame([{"ref": name, "type": ref.ref_type.value, "snapshot": labels(t)[ref.snapshot_id],
               "min-snapshots-to-keep": setting(ref.min_snapshots_to_keep),
               "max-snapshot-age-ms": setting(ref.max_snapshot_age_ms),
               "max-ref-age-ms": setting(ref.max_ref_age_ms)}
              for name, ref in t.refs.items()]).set_index("ref")"""),
    md("maint-retention-md", """
## The retention algorithm, step by step

*Snapshot Retention Policy* in the spec:

1. start with an empty set of snapshots to retain;
2. remove any ref (other than `main`) whose snapshot is older than its `max-ref-age-ms`;
3. for each branch and tag, retain the snapshot it points at;
4. for each branch, retain its ancestors until one is **both** older than `max-snapshot-age-ms`
   **and** not among the first `min-snapshots-to-keep` of the branch (its head counts);
5. expire every snapshot not retained.

A ref's own settings win; missing ones fall back to the table's `history.expire.*` properties
(here `min-snapshots-to-keep` = 2; `max-snapshot-age-ms` is replaced by the `older_than` we pass:
S6's commit time, so S6 and S7 are "young").

*Predict before you run: which snapshots expire?*"""),
    code("maint-retention-walk", """
now = time.time() * 1000
older_than = t.snapshot(S["S6"]).timestamp_ms
default_min = int(t.properties["history.expire.min-snapshots-to-keep"])
name = labels(t)

refs = dict(t.refs)
for ref_name, ref in list(refs.items()):
    age = now - t.snapshot(ref.snapshot_id).timestamp_ms
    if ref_name != "main" and ref.max_ref_age_ms is not None and age > ref.max_ref_age_ms:
        del refs[ref_name]
        print(f"step 2: remove {ref_name!r} ({name[ref.snapshot_id]} is older than "
              f"{ref.max_ref_age_ms} ms)")
retain = {ref.snapshot_id for ref in refs.values()}
print("step 3: refs retain", sorted(name[s] for s in retain))
for ref_name, ref in refs.items():
    if not ref.is_branch:
        continue
    keep = ref.min_snapshots_to_keep or default_min
    cutoff = now - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms else older_than
    kept, stop = [], "its first snapshot"
    for n, snap in enumerate(t.metadata.ancestors(ref.snapshot_id)):
        if snap.timestamp_ms < cutoff and n >= keep:   # older AND beyond the first `keep`
            stop = name[snap.snapshot_id]
            break
        kept.append(name[snap.snapshot_id])
        retain.add(snap.snapshot_id)
    print(f"step 4: branch {ref_name!r} (min {keep}) retains {kept}, stops at {stop}")
expire = sorted(name[s.snapshot_id] for s in t.snapshots if s.snapshot_id not in retain)
print("step 5: expire", expire)"""),
    md("maint-expire-md", """
icenb's `expire_snapshots` runs the same algorithm. With `dry_run=True` it only reports what
it would expire and which files it would delete — files that only expired snapshots use:"""),
    code("maint-expire-dry", """
dry = t.expire_snapshots(older_than=older_than, dry_run=True)
print("would expire:", sorted(name[s] for s in dry.expired_snapshot_ids),
      "| removes refs:", list(dry.removed_refs))
print("same as the walk above:", sorted(name[s] for s in dry.expired_snapshot_ids) == expire)
replaced = next(e.file.file_path for _, e in t.metadata_tree().entries()
                if e.status.name == "DELETED")   # S2's file, which S3 rewrote
print("the file S3 replaced is still on disk:", t.io.exists(replaced))
{kind: n for kind, n in dry.counts.items() if n}"""),
    md("maint-expire-before-md", """
**Before**: the metadata graph of every snapshot of `main`, each manifest and file drawn once
(a manifest reused by a later snapshot gets an EXISTING edge). S2's data file is still
referenced by S2 (through `q1`) though S3 removed it from the table."""),
    code("maint-expire-before", """
t.metadata_graph([s.snapshot_id for s in t.metadata.ancestors(t.refs["main"].snapshot_id)])"""),
    code("maint-expire-act", """
result = t.expire_snapshots(older_than=older_than)
print("expired:", sorted(name[s] for s in result.expired_snapshot_ids))
print("deleted:", {kind: n for kind, n in result.counts.items() if n})
t.snapshots"""),
    md("maint-expire-after-md", """
**After**: S1 and S2 are gone, and so is `q1`. S3 says its parent expired. The deleted
files are exactly those no kept snapshot reaches: S1's and S2's manifest lists, the manifest S2
added and the data file S3 had replaced. S1's data file stays: S3 and later still read it.
Until the expiry, the replaced file sat on disk unchanged: a file is written once, never altered
or renamed, and leaves only by deletion (*File System Operations*). Every ref still reads.
The graph of `main` has lost S1 and S2, their manifest lists and the manifest only S2
had; S3's manifest still records S2's data file as a DELETED entry (the history of S3), but
the file itself is gone from disk:"""),
    code("maint-expire-after", """
for ref in ("main", "release", "exp"):
    print(f"{ref:8}", t.at(ref).count(), "rows")
print("the file S3 replaced is still on disk:", t.io.exists(replaced))
t.metadata_graph([s.snapshot_id for s in t.metadata.ancestors(t.refs["main"].snapshot_id)])"""),
    md("maint-orphans-md", """
## Orphan files

A writer that crashes after writing data files but before committing leaves **orphans**:
files in the table's folder that no snapshot references. Expiry never sees them (it only
deletes what expired snapshots referenced). `remove_orphan_files` lists the folder and compares.
It only takes files older than `older_than` (default: 3 days), because a file written a moment
ago may belong to a commit still in flight.

We fake two crashed writes: one file four days old, one just now.

*Predict before you run: how many files does the dry run list, and how many does it leave as
too recent?*"""),
    code("maint-orphans-act", """
data_dir = os.path.join(t.location, "data")
for stray, days in (("crashed-writer-0001.parquet", 4), ("in-flight-0002.parquet", 0)):
    path = os.path.join(data_dir, stray)
    with open(path, "wb") as f:
        f.write(b"PAR1 not a real file")
    when = time.time() - days * 86400
    os.utime(path, (when, when))

dry = t.remove_orphan_files(dry_run=True)
print("would delete:", [os.path.basename(p) for p in dry.orphans], "| too recent:", dry.too_recent)
done = t.remove_orphan_files()
print("deleted:", [os.path.basename(p) for p in done.deleted])
left = sorted(f for f in os.listdir(data_dir) if f.startswith(("crash", "in-")))
print("left in data/:", left)"""),
    md("maint-compact-md", """
## Compaction: many small files into few

Streaming and frequent appends make many small files; each costs a file open at read time.
`rewrite_data_files` reads the rows of small files and writes them as fewer, larger files in a
**`replace`** snapshot — the spec's operation for files added and removed *without changing table
data* (*Snapshots*). On a v3 table, rows keep their `_row_id` (*Row Lineage*).

*Predict before you run: 8 appends of 25 rows each in one partition. How many data files after
compaction?*"""),
    code("maint-compact-act", """
logs = wh.create_table("shop.logs", "id long not null, level string", format_version=3)
for i in range(8):
    logs.append([{"id": i * 25 + j, "level": "info" if j % 5 else "warn"} for j in range(25)])
lineage = ["id", "_row_id", "_last_updated_sequence_number"]
rows_before = logs.scan().select(*lineage).to_pandas().sort_values("id", ignore_index=True)
files_before = len(logs.scan().plan().tasks)

compacted = logs.rewrite_data_files()
print("data files:", files_before, "->", len(logs.scan().plan().tasks))
print("rewritten:", compacted.rewritten_data_files_count,
      "added:", compacted.added_data_files_count,
      "| operation:", logs.current_snapshot.summary.operation)"""),
    code("maint-compact-lineage", """
rows_after = logs.scan().select(*lineage).to_pandas().sort_values("id", ignore_index=True)
print("rows unchanged:", rows_after[["id"]].equals(rows_before[["id"]]))
print("row ids kept:", rows_after["_row_id"].equals(rows_before["_row_id"]))
rows_after.head(3)"""),
    md("maint-compact-tree-md", """
`_last_updated_sequence_number` did not change either: a compaction moves rows, it does
not update them. The metadata tree after the compaction: one new data file ADDED, the eight
old ones marked DELETED in the `replace` snapshot. Each append had written its own manifest, and
the compaction rewrote each of them to mark its file DELETED, plus one manifest for the new
file: nine manifests for one live file."""),
    code("maint-compact-tree", """
logs.metadata_tree()"""),
    md("maint-compact-seq-md", """
One more number to look at: the new file's **sequence numbers**. A manifest entry has two, the
*data* sequence number (how old the rows are, used to decide which deletes apply) and the *file*
sequence number (the commit that added the file). Usually both are the commit's. A compaction
writes rows that are older than its own commit, so it gives the new file an explicit, older data
sequence number (spec: *Sequence Number Inheritance*: "the data sequence number must be provided
explicitly and not inherited"; the file sequence number is still the commit's).

*Predict before you run: the compaction was commit 9, started on commit 8. What are the new
file's data and file sequence numbers?*"""),
    code("maint-compact-seq", """
new_file = next(e for _, e in logs.metadata_tree().entries() if e.status.name == "ADDED")
print("compaction commit: sequence number", compacted.snapshot.sequence_number)
print("its file: data sequence number", new_file.sequence_number,
      "| file sequence number", new_file.file_sequence_number)"""),
    md("maint-compact-seq-explain", """
Data sequence number 8, file sequence number 9. Why it matters: an equality delete committed
while a compaction runs must still reach the rows the compaction copies. We race the two, as in
lesson 05: `w1` deletes the key `id = 11` with an equality delete while `w2` compacts.

*Predict before you run: after both commit, is row 11 back?*"""),
    code("maint-compact-race", """
race = wh.create_table("shop.race", "id long not null", format_version=3)
for i in range(4):
    race.append([{"id": i * 10 + j} for j in range(3)])
w1 = wh.table("shop.race")
w2 = wh.table("shop.race")
w1.delete_by_key([{"id": 11}], on="id")           # commit 5
w2.rewrite_data_files(min_input_files=2)          # started on commit 4, retried, commit 6
print("compaction attempts:", w2.last_commit.attempts, "| row 11 back:",
      11 in set(race.refresh().to_pandas()["id"]))
pd.DataFrame([{"file": e.kind, "data seq": e.sequence_number, "file seq": e.file_sequence_number,
               "applies to": len(e.applies_to) or "-"}
              for _, e in race.metadata_tree().entries() if e.status.name != "DELETED"])"""),
    md("maint-compact-race-explain", """
The compacted file keeps data sequence number 4 (the commit the compaction started from) though
it was added by commit 6; the equality delete (5) is newer than 4, so it still applies to it and
row 11 stays deleted. Had the new file taken sequence number 6, the delete would no longer apply
to it (`<` fails) and row 11 would be back."""),
    md("maint-manifests-md", """
## Rewriting manifests

Each append wrote its own manifest ("fast append", spec: *Snapshots*), so the manifest list
holds many small manifests; planning opens each one. `rewrite_manifests` rewrites the data
manifests into a few, clustered by partition, in another `replace` snapshot. Live entries move
as EXISTING and keep their snapshot ids and sequence numbers; DELETED entries are dropped.

*Predict before you run: how many data manifests are left after the rewrite?*"""),
    code("maint-manifests-act", """
def data_manifests(table):
    return sum(1 for m in table.metadata_tree().index.manifests if m.kind == "data_manifest")


print("data manifests before:", data_manifests(logs))
rewritten = logs.rewrite_manifests()
print("rewritten:", rewritten.rewritten_manifests_count, "into", rewritten.added_manifests_count,
      "| operation:", logs.current_snapshot.summary.operation)
print("data manifests after:", data_manifests(logs))
logs.metadata_tree()"""),
    md("maint-wap-md", """
## Write-audit-publish

With `write.wap.enabled=true`, a write made under a **WAP id** is *staged*: it becomes a
snapshot with summary `wap.id` but no ref moves, so readers of `main` do not see it. You audit
the staged snapshot (time travel to it), then publish it: a cherry-pick onto `main` (spec,
Appendix F, *Other Fields*: `wap.id`, `published-wap-id`, `source-snapshot-id`).

*Predict before you run: how many rows does `main` have right after the staged write?*"""),
    code("maint-wap-stage", """
logs.set_properties({"write.wap.enabled": "true"})
rows_main = logs.scan().count()
with icenb.set_options(wap_id="audit-1"):
    logs.append([{"id": 1000 + j, "level": "error"} for j in range(10)])
staged = next(s for s in logs.snapshots if s.summary.get("wap.id") == "audit-1")
print("main:", rows_main, "->", logs.scan().count(), "rows (unchanged)")
print("main's head is the staged snapshot:",
      logs.refs["main"].snapshot_id == staged.snapshot_id)"""),
    md("maint-wap-audit-md", """
The audit reads the staged snapshot like any other. Meanwhile another writer appends to
`main`, so the staged snapshot's parent is no longer `main`'s head."""),
    code("maint-wap-audit", """
audit = logs.at(staged.snapshot_id).to_pandas()
print("audit: rows", len(audit), "| duplicated ids:", int(audit["id"].duplicated().sum()),
      "| levels:", sorted(audit["level"].unique()))
other = logs.append([{"id": 2000, "level": "info"}])   # another writer (no wap id): not staged"""),
    md("maint-wap-publish-md", """
*Predict before you run: publishing cherry-picks the staged append onto `main`. Does `main`
get the staged snapshot itself, or a new one?*"""),
    code("maint-wap-publish", """
published = logs.publish_changes("audit-1")
print("main:", logs.scan().count(), "rows")
print("new snapshot:", published.snapshot_id != staged.snapshot_id,
      "| published-wap-id:", published.summary.get("published-wap-id"),
      "| source is the staged one:",
      published.summary.get("source-snapshot-id") == str(staged.snapshot_id))
logs.snapshots"""),
    md("maint-wap-explain", """
A new snapshot: its parent had moved, so the staged append's files were re-added on top of
`main`'s head (as a retried append would be). Had `main` not moved, publishing would simply
fast-forward `main` to the staged snapshot. Publishing `audit-1` a second time is refused:"""),
    code("maint-wap-again", """
try:
    logs.publish_changes("audit-1")
except icenb.errors.ValidationError as e:
    print(type(e).__name__, "-", e.message)"""),
    md("maint-metadata-files-md", """
## Old metadata files

Expiry and orphan removal leave one kind of file alone: the **table metadata files**. Every
commit writes a new `metadata.json` (lessons 01 and 05), and the metadata log lists the previous
ones. Two table properties keep them in check: `write.metadata.previous-versions-max` (how many
previous files the log keeps, default 100) and `write.metadata.delete-after-commit.enabled`
(delete the files that fall off the log). A third makes each file smaller:
`write.metadata.compression-codec=gzip`, written with the suffix `.gz.metadata.json` that some
readers need (Appendix F, *Naming for GZIP compressed Metadata JSON files*).

*Predict before you run: a table with `previous-versions-max=2` and delete-after-commit gets five
appends. How many metadata files are left in its folder?*"""),
    code("maint-metadata-files", """
meta = wh.create_table("shop.meta", "id long", format_version=3, properties={
    "write.metadata.previous-versions-max": "2",
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.compression-codec": "gzip"})
for i in range(5):
    meta.append([{"id": i}])
folder = os.path.join(meta.location, "metadata")
left = sorted(f for f in os.listdir(folder) if f.endswith("metadata.json"))
print(len(left), "metadata files:", [f[:6] + "…" + f[f.index(".gz"):] for f in left])
meta.metadata_log"""),
    md("maint-metadata-files-explain", """
Six commits (the create and five appends) wrote six metadata files; the log keeps the current
one and two previous ones, and the three older files were deleted as they fell off it."""),
    md("maint-operations-md", """
## The four snapshot operations

Every snapshot's summary names its `operation` (spec: *Snapshots*), which tools like expiry use
to skip snapshots that cannot matter to them:

- `append` — only data files added;
- `replace` — files added and removed *without changing table data* (compaction, rewrites);
- `overwrite` — data and delete files added and removed in a logical overwrite;
- `delete` — data files removed and/or delete files added to delete rows.

*Predict before you run: which operation does each of these five commits record?* (1) an append;
(2) a delete of a whole partition; (3) a merge-on-read delete of one row; (4) a copy-on-write
delete of one row of a two-row file; (5) a compaction.""" ),
    code("maint-operations", """
ops = wh.create_table("shop.ops", "id long not null, part string not null",
                      partition_by=["part"], format_version=3)
steps = {
    "(1) append": lambda: ops.append([{"id": i, "part": p} for i, p in
                                      enumerate("aaabb", start=1)]),
    "(2) delete part = 'b'": lambda: ops.delete("part = 'b'"),
    "(3) merge-on-read delete id = 1": lambda: ops.delete("id = 1", mode="merge-on-read"),
    "(4) copy-on-write delete id = 2": lambda: ops.delete("id = 2", mode="copy-on-write"),
    "(5) compaction": lambda: ops.rewrite_data_files(rewrite_all=True),
}
summary = []
for step, action in steps.items():
    action()
    s = ops.current_snapshot.summary
    summary.append({"commit": step, "operation": s.operation,
                    "data files +": s.get("added-data-files", "0"),
                    "data files -": s.get("deleted-data-files", "0"),
                    "delete files +": s.get("added-delete-files", "0"),
                    "delete files -": s.get("removed-delete-files", "0")})
pd.DataFrame(summary).set_index("commit")"""),
    md("maint-operations-explain", """
Deleting a whole partition only drops files from the manifests (`delete`, no file
written); the merge-on-read delete adds a DV (`delete`); the copy-on-write delete removes a file
and adds its rewrite (`overwrite`) — and removes the file's DV too, whose deleted row the rewrite
left out; the compaction replaces a file by one holding the same rows (`replace`). The counts
come from the summary's optional metrics (spec, Appendix F: *Optional Snapshot Summary
Fields*)."""),
    md("maint-exercises-md", """
## Exercises"""),
    code("maint-exercise-expired", """
answer = 2  # how many snapshots did expire_snapshots remove from events?
check(answer, expected=len(result.expired_snapshot_ids),
      hint="walk the five steps: which snapshots does no ref and no branch walk keep?")""",
         wrong="3"),
    code("maint-exercise-exp", """
answer = 3  # how many snapshots of the exp branch's history are left after the expiry?
exp_history = list(t.metadata.ancestors(t.refs["exp"].snapshot_id))
check(answer, expected=len(exp_history),
      hint="its max-snapshot-age-ms keeps none by age; its min-snapshots-to-keep decides")""",
         wrong="1"),
    code("maint-exercise-compact", """
answer = "replace"  # the operation of the compaction's snapshot
check(answer, expected=compacted.snapshot.summary.operation,
      hint="files added and removed without changing table data")""",
         wrong='"overwrite"'),
    md("maint-next", """
**Next: 07 — Format versions**: a v1 table upgraded to v2, v3 and v4, and what each step
changes."""),
]


if __name__ == "__main__":
    print(write(CELLS, NAME))
