"""Write notebooks/07-investigating-a-table.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/make_07.py`` then
``cd notebooks && ../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
07-investigating-a-table.ipynb``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS: list[tuple[str, str]] = [
    ("md", """# 07 — Investigating a table: what happened to these rows, and when?

An analyst is handed a table someone else wrote and a question: *this account looks wrong —
when did it change, what was it before, and who deleted the others?* Iceberg keeps the whole
answer: every commit is a snapshot, and a snapshot's manifests say which files it added and
removed and which delete files it wrote. This notebook asks the analyst's questions four ways:

1. **row lineage** — on a v3 table every row carries a `_row_id` that survives rewrites, and
   `_last_updated_sequence_number`, the commit that last changed it (spec: *Row Lineage*);
2. **the changelog** — `t.changes(start, end)`: the rows each commit inserted, deleted and
   updated, as Iceberg's Spark `create_changelog_view` gives them;
3. **the net difference** of two snapshots, `t.diff(a, b)`;
4. **SQL with time travel** over the warehouse: `wh.sql(...)` and the `%%sql` cell magic.

First we write a table with a messy history: appends, copy-on-write and merge-on-read updates
and deletes, an upsert, a bad load rolled back, and a branch."""),
    ("code", """import datetime as dt
import time

import pandas as pd

from icenb.demo import scratch

pd.set_option("display.width", 120)
wh = scratch("07-investigating-a-table")
accounts = wh.create_table(
    "crm.accounts",
    "account_id long not null, region string not null, owner string, tier string, "
    "balance decimal(12, 2)",
    partition_by=["region"],
    format_version=3,
    properties={"write.update.mode": "copy-on-write", "write.delete.mode": "merge-on-read"},
)
with accounts.update_schema() as u:
    u.set_identifier_fields(["account_id"])


def rows(*specs):
    return pd.DataFrame(
        [dict(zip(["account_id", "region", "owner", "tier", "balance"], s, strict=True))
         for s in specs]
    ).astype({"balance": "object"})"""),
    ("md", """## The history

Each step is one commit. We note what each one was for in the snapshot summary
(`snapshot_properties`), as a careful writer would; an analyst usually finds only the
operation."""),
    ("code", """from decimal import Decimal as D

steps = {}


def commit(note, action):
    action({"note": note})
    steps[note] = accounts.current_snapshot.snapshot_id


commit("initial load", lambda p: accounts.append(rows(
    (1, "eu", "ada", "gold", D("1200.00")), (2, "eu", "bob", "silver", D("80.50")),
    (3, "us", "cy", "silver", D("310.00")), (4, "us", "dee", "bronze", D("15.00")),
    (5, "eu", "eve", "bronze", D("0.00")), (6, "us", "fay", "gold", D("990.00")),
    (7, "apac", "gus", "silver", D("450.00")), (8, "apac", "hal", "bronze", D("25.00")),
), snapshot_properties=p))
commit("new accounts", lambda p: accounts.append(rows(
    (9, "eu", "ivy", "bronze", D("60.00")), (10, "us", "jo", "silver", D("130.00")),
), snapshot_properties=p))
commit("tier upgrade (copy-on-write update)", lambda p: accounts.update(
    {"tier": "gold"}, "account_id IN (3, 7)", snapshot_properties=p))
commit("close dormant account (merge-on-read delete)", lambda p: accounts.delete(
    "account_id = 5", snapshot_properties=p))

monday = dt.datetime.now(dt.timezone.utc)  # the analyst's "last Monday": this moment
time.sleep(0.01)

commit("balance correction (merge-on-read update)", lambda p: accounts.update(
    {"balance": D("95.50")}, "account_id = 2", mode="merge-on-read", snapshot_properties=p))
commit("CRM sync (upsert: equality deletes)", lambda p: accounts.upsert(rows(
    (7, "apac", "ian", "gold", D("450.00")), (11, "apac", "kim", "bronze", D("5.00")),
), on=["account_id", "region"], snapshot_properties=p))
accounts.create_branch("audit")
commit("bad load", lambda p: accounts.append(rows(
    (12, "eu", "???", None, D("-1.00")),
), snapshot_properties=p))
accounts.rollback_to(steps["CRM sync (upsert: equality deletes)"])
commit("GDPR erasure (copy-on-write delete)", lambda p: accounts.delete(
    "account_id = 9", mode="copy-on-write", snapshot_properties=p))
accounts.update({"tier": "platinum"}, "account_id = 1", branch="audit",
                snapshot_properties={"note": "audit: what-if platinum tier"})
accounts.snapshots"""),
    ("md", """The tree shows the rollback (the bad load is no longer an ancestor of `main`) and the
`audit` branch, which forked after the CRM sync and took one commit of its own."""),
    ("code", """log = accounts.inspect.snapshots().to_pandas()
log.assign(note=log["summary"].map(lambda s: dict(s).get("note")))[["operation", "note"]]"""),
    ("md", """## 1. Row lineage: when did account 7 last change?

`_row_id` is the row's identity across rewrites: the copy-on-write update moved account 7 into
a new file but kept its id (spec: *Row lineage assignment*: a moved row's id is copied; a
modified row's sequence number is set to the new commit's). The CRM sync was an **upsert**,
which writes equality deletes: the spec treats that as a delete and a brand-new row, so account
7 has a new `_row_id` after it, and `_last_updated_sequence_number` names the sync."""),
    ("code", """lineage_columns = ["account_id", "owner", "tier",
                   "_row_id", "_last_updated_sequence_number"]
seq_to_note = {accounts.snapshot(sid).sequence_number: note for note, sid in steps.items()}


def lineage(scan):
    df = scan.to_pandas().sort_values("account_id")
    return df.assign(last_changed_by=df["_last_updated_sequence_number"].map(seq_to_note))


lineage(accounts.scan(columns=lineage_columns))"""),
    ("md", """Time travel shows the same rows before the sync: account 7's id was 6, and the tier
upgrade (sequence number 3) was its last change. Rows nobody touched (account 1 on `main`)
still carry the sequence number of the initial load."""),
    ("code", """lineage(accounts.at(steps["balance correction (merge-on-read update)"])
        .select(*lineage_columns)).query("account_id in (1, 3, 7)")"""),
    ("md", """## 2. The changelog: what was account 7 before, and which commit changed it?

`t.changes(start, end)` lists, for every commit after `start` up to `end` (default: the
current snapshot), the rows it inserted and deleted, computed from the files and delete files
the commit added and removed. Rows a copy-on-write rewrite merely carried into a new file
cancel out. With `identifier_columns`, a delete and an insert of the same key in one commit
become `UPDATE_BEFORE` / `UPDATE_AFTER`, as in Iceberg's `create_changelog_view`:"""),
    ("code", """changes = accounts.changes(None, identifier_columns=["account_id"])
changes"""),
    ("code", """df = changes.to_pandas()
note_of = {sid: note for note, sid in steps.items()}
df.assign(commit=df["_commit_snapshot_id"].map(note_of)).query("account_id == 7")[
    ["account_id", "owner", "tier", "_change_type", "_change_ordinal", "commit"]]"""),
    ("md", """Without `identifier_columns`, a v3 table pairs updates by `_row_id` — a rule of
icenb's (no engine pairs by row lineage yet). The copy-on-write and merge-on-read updates keep
the row id, so they pair; the upsert gave account 7 a new row, so it shows as a `DELETE` and an
`INSERT`: the lineage view of the same history."""),
    ("code", """by_row_id = accounts.changes(None).to_pandas()
by_row_id.query("account_id == 7")[["account_id", "owner", "tier", "_row_id", "_change_type",
                                   "_change_ordinal"]]"""),
    ("md", """## 3. Which commit deleted these rows?

Deletes are `DELETE` rows of the changelog; the commit's summary tells us why. Account 5 went
through a deletion vector (merge-on-read), account 9 through a copy-on-write rewrite; the bad
load never reached `main`'s history, so it does not appear."""),
    ("code", """deleted = df[df["_change_type"] == "DELETE"]
deleted.assign(commit=deleted["_commit_snapshot_id"].map(note_of))[
    ["account_id", "owner", "_change_ordinal", "commit"]]"""),
    ("md", """## 4. What changed between "last Monday" and now?

`start` may be a time: the snapshot current then (spec: Appendix F, *Point in Time Reads*).
`t.diff(a, b).rows()` gives the **net** difference of two snapshots — the changelog's rows
with the intermediate steps folded away."""),
    ("code", """accounts.changes(monday, identifier_columns=["account_id"]).to_pandas()[
    ["account_id", "owner", "balance", "_change_type", "_change_ordinal"]]"""),
    ("code", """removed, added = accounts.diff(accounts.at(monday).snapshot_id, "main").rows()
pd.concat([removed.to_pandas().assign(side="only then"),
           added.to_pandas().assign(side="only now")],
          ignore_index=True).sort_values("account_id", kind="stable")"""),
    ("md", """The `audit` branch is a separate line of history: its changes since it forked."""),
    ("code", """accounts.changes(steps["CRM sync (upsert: equality deletes)"], "audit").to_pandas()[
    ["account_id", "tier", "_change_type"]]"""),
    ("md", """## 5. The same questions in SQL

`wh.sql(query)` runs Spark SQL over the warehouse: table names resolve to icenb tables, with
Iceberg's time travel (`VERSION AS OF` a snapshot id, branch or tag; `TIMESTAMP AS OF`), the
`branch_<name>` / `tag_<name>` suffixes and the metadata tables (`crm.accounts.snapshots`,
`.history`, `.files`, ...). It returns a Spark DataFrame (a local Spark session starts on first
use). Filters in `WHERE` are pushed into icenb's planning, so only matching files are read.
Starting Spark prints the JVM's messages, which vary by machine; we start it in a cell of its
own."""),
    ("code", """from icenb.spark import get_spark

spark = get_spark()  # the JVM's start-up messages vary by machine: not compared by nbval
spark.version"""),
    ("code", """before_sync = steps["balance correction (merge-on-read update)"]
wh.sql(f\"\"\"
    SELECT now.account_id, before.owner AS owner_before, now.owner AS owner_now,
           before.tier AS tier_before, now.tier AS tier_now
    FROM crm.accounts AS now
    JOIN crm.accounts VERSION AS OF {before_sync} AS before USING (account_id)
    WHERE now.owner <> before.owner OR now.tier <> before.tier
    ORDER BY account_id
\"\"\").toPandas()"""),
    ("md", """With `%load_ext icenb`, a `%%sql` cell runs against the notebook's warehouse (the last
one opened, or the one named after `%%sql`) and shows a bounded table:"""),
    ("code", """%load_ext icenb"""),
    ("code", """%%sql
SELECT operation, summary['note'] AS note, summary['added-records'] AS added,
       summary['deleted-records'] AS deleted
FROM crm.accounts.snapshots ORDER BY committed_at"""),
    ("code", """%%sql
SELECT account_id, tier FROM crm.accounts.branch_audit
WHERE account_id <= 3 ORDER BY account_id"""),
    ("md", """## What we used

- `_row_id` / `_last_updated_sequence_number` (v3): a row's identity and its last change,
  kept through copy-on-write and merge-on-read rewrites; equality-delete upserts make new rows.
- `t.changes(start, end, identifier_columns=...)`: per-commit `INSERT` / `DELETE` /
  `UPDATE_BEFORE` / `UPDATE_AFTER`, with `_change_ordinal` and `_commit_snapshot_id`;
  `.to_arrow()`, `.to_pandas()`, `.to_spark()`.
- `t.diff(a, b).rows()`: the net difference.
- `wh.sql(...)` and `%%sql`: time travel, branches, tags and metadata tables in Spark SQL."""),
]


def main() -> None:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src)
                for kind, src in CELLS]
    for cell in nb.cells:
        if "spark = get_spark()" in cell.source:
            cell.metadata["tags"] = ["nbval-ignore-output"]
    out = Path(__file__).resolve().parents[2] / "notebooks" / "07-investigating-a-table.ipynb"
    nbformat.write(nb, out)
    print(out)


if __name__ == "__main__":
    main()
