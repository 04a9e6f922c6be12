"""Campaign: ``kill -9`` a writer at a random moment, again and again (issue 17).

A child process loads one table and commits random operations - appends, copy-on-write and
merge-on-read deletes, overwrites, schema changes, expiry - logging each one before it starts
and after it is acknowledged (fsynced). The parent kills it with SIGKILL at a random time, then
opens the table fresh. A kill **held** when the table opens, every acknowledged snapshot is in
its history, its rows are exactly the rows after the last acknowledged operation or after the
one in flight (committed just before the kill), and it takes a new commit. Otherwise the kill
**lost** a commit, left a **partial** table (unreadable, or rows of neither state) or a
**raw** (non-``IcebergError``) exception escaped when reading.

``python tests/campaign/crashes.py 50`` kills 50 times and prints the figures.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.errors import IcebergError
from tests.table._table_workers import IDENT, create_test_table, open_test_catalog

REPO = Path(__file__).resolve().parents[2]
OPS = ("append", "append", "delete-cow", "delete-mor", "overwrite", "schema", "expire")


def _apply(ids: set[int], op: dict[str, Any]) -> set[int]:
    """The row ids after ``op`` (the model the table must match)."""
    if op["op"] == "append":
        return ids | set(op["ids"])
    if op["op"] in ("delete-cow", "delete-mor"):
        return ids - {op["id"]}
    if op["op"] == "overwrite":
        return (ids - {op["id"]}) | {op["new"]}
    return ids


def _replay(log: Path) -> tuple[set[int], dict[str, Any] | None, list[int]]:
    """The ids after every acknowledged operation, the operation in flight, and the
    acknowledged snapshot ids."""
    ids: set[int] = set()
    pending: dict[str, Any] | None = None
    snapshots: list[int] = []
    for line in log.read_text().splitlines():
        if not line.endswith("}"):
            continue  # a line torn by the kill
        record = json.loads(line)
        if record["at"] == "begin":
            pending = record
        elif record["at"] == "resolved" and pending is not None:  # the check's finding
            if record["committed"]:
                ids = _apply(ids, pending)
            pending = None
        elif record["at"] == "done" and pending is not None:
            ids = _apply(ids, pending)
            if record.get("snapshot") is not None:
                snapshots.append(record["snapshot"])
            pending = None
    return ids, pending, snapshots


def worker(kind: str, root: str, log_path: str, seed: int) -> None:
    """Commit random operations until killed, logging each before and after."""
    rnd = random.Random(seed)
    ids, _pending, _snaps = _replay(Path(log_path))
    next_id = max(ids, default=0) + 1 + seed * 1_000_000
    table = icenb.load_table(open_test_catalog(kind, root), IDENT)
    with open(log_path, "a") as log:
        def write(record: dict[str, Any]) -> None:
            log.write(json.dumps(record) + "\n")
            log.flush()
            os.fsync(log.fileno())

        write({"at": "ready"})
        while True:
            op = rnd.choice(OPS)
            if (op.startswith("delete") or op == "overwrite") and not ids:
                op = "append"
            record: dict[str, Any] = {"at": "begin", "op": op}
            if op == "append":
                record["ids"] = [next_id, next_id + 1, next_id + 2]
                next_id += 3
            elif op.startswith("delete") or op == "overwrite":
                record["id"] = rnd.choice(sorted(ids))
                if op == "overwrite":
                    record["new"] = next_id
                    next_id += 1
            write(record)
            snapshot = None
            if op == "append":
                snapshot = table.append([{"id": i, "w": 0} for i in record["ids"]])
            elif op.startswith("delete"):
                snapshot = table.delete(f"id = {record['id']}", mode="copy-on-write"
                                        if op == "delete-cow" else "merge-on-read")
            elif op == "overwrite":
                snapshot = table.overwrite([{"id": record["new"], "w": 0}],
                                           f"id = {record['id']}")
            elif op == "schema":
                with table.update_schema() as u:
                    u.add_column(f"c{next_id}", "string")
                next_id += 1
            else:
                table.expire_snapshots(int(time.time() * 1000), retain_last=3)
            write({"at": "done", "snapshot": None if snapshot is None
                   else snapshot.snapshot_id})
            ids = _apply(ids, record)


def _main_ancestry(table: Any) -> set[int]:
    head = table.metadata.current_snapshot_id
    return set() if head is None else {s.snapshot_id for s in table.metadata.ancestors(head)}


def _check(kind: str, root: Path, log: Path) -> str:
    """One outcome of the kill just made: held, lost, partial or raw."""
    ids, pending, snapshots = _replay(log)
    try:
        table = icenb.load_table(open_test_catalog(kind, str(root)), IDENT)
        got = set(table.scan(columns=["id"]).to_arrow().column("id").to_pylist())
        history = {s.snapshot_id for s in table.snapshots}
        # Acknowledged snapshots still alive must be ancestors of main (expiry may drop some).
        alive = [s for s in snapshots if s in history]
        if any(s not in _main_ancestry(table) for s in alive) or \
                (snapshots and snapshots[-1] not in history):
            return "lost"
        states = [ids] + ([_apply(ids, pending)] if pending is not None else [])
        if got not in states:
            return "partial"
        if pending is not None:  # whether the operation in flight committed
            with log.open("a") as f:
                f.write(json.dumps({"at": "resolved", "committed": got != ids}) + "\n")
        table.append([{"id": -1, "w": 0}])  # it takes a commit...
        table.delete("id = -1")  # ...and another
    except IcebergError as e:
        print(f"{root}: partial: {e}", file=sys.stderr)
        return "partial"
    except Exception as e:  # the campaign counts, it does not stop
        print(f"{root}: raw: {type(e).__name__}: {e}", file=sys.stderr)
        return "raw"
    return "held"


def run(kills: int, root: Path, seed: int = 17) -> Counter[str]:
    """``kills`` kills spread over four tables (SQLite and filesystem catalogs, v2 and v3);
    the outcome counts."""
    rnd = random.Random(seed)
    counts: Counter[str] = Counter()
    setups = [("sql", 2), ("filesystem", 3), ("sql", 3), ("filesystem", 2)]
    for kind, version in setups:
        (root / f"{kind}-v{version}").mkdir()
        create_test_table(kind, str(root / f"{kind}-v{version}"), version)
    for n in range(kills):
        kind, version = setups[n % len(setups)]
        where = root / f"{kind}-v{version}"
        log = where / "ops.log"
        log.touch()
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__)), "worker", kind, str(where), str(log),
             str(n + 1)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not (log.exists() and log.read_text().count('"ready"') > n // len(setups)):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the writer did not start: {proc.stderr.read()!r}"
                                   if proc.stderr else "the writer did not start")
            time.sleep(0.02)
        time.sleep(rnd.uniform(0.0, 1.5))
        if proc.poll() is not None:  # it stopped by itself: an error in the writer
            counts["raw"] += 1
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            print(f"kill {n}: the writer failed by itself: {err[-600:]}", file=sys.stderr)
            continue
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
        counts[_check(kind, where, log)] += 1
    return counts


def report(counts: Counter[str]) -> str:
    return (f"kills: {sum(counts.values())}, held {counts['held']}, lost {counts['lost']}, "
            f"partial {counts['partial']}, raw {counts['raw']}")


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="icenb-kills-") as d:
            print(report(run(int(sys.argv[1]), Path(d))))
