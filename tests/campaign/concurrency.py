"""Campaign: writers in separate processes commit to one table at once (issue 17).

Each run creates a table - SQLite or filesystem catalog, format v2, v3 or v4 in turn - and
starts ``workers`` processes that each make ``ops`` commits: appends, copy-on-write and
merge-on-read deletes of their own rows and schema changes, retrying a ``CommitConflict`` on a
reloaded table as an application would (``tests/table/_table_workers.py``). A run **held**
when every acknowledged snapshot is an ancestor of main, the rows are exactly those appended and
not deleted, and every entry of the metadata log names a file that exists. Otherwise it
**lost** a commit, read **wrong** rows, has a **broken** log, or a **raw** exception escaped a
worker.

``python tests/campaign/concurrency.py 20`` makes 20 runs and prints the figures.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import Counter
from pathlib import Path

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.io.file_io import FileIO
from tests.table._table_workers import (
    IDENT,
    WorkerLog,
    create_test_table,
    open_test_catalog,
    table_worker,
)

SETUPS = [(kind, version) for version in (2, 3, 4) for kind in ("sql", "filesystem")]


def _check(kind: str, root: Path, logs: list[WorkerLog]) -> str:
    table = icenb.load_table(open_test_catalog(kind, str(root)), IDENT)
    head = table.metadata.current_snapshot_id
    ancestry = set() if head is None else {s.snapshot_id for s in table.metadata.ancestors(head)}
    committed = [sid for log in logs for sid in log.snapshots]
    if len(committed) != len(set(committed)) or not set(committed) <= ancestry:
        return "lost"
    deleted = {i for log in logs for i in log.deleted}
    expected = sorted(i for log in logs for i in log.appended if i not in deleted)
    if sorted(table.scan(columns=["id"]).to_arrow().column("id").to_pylist()) != expected:
        return "wrong"
    io: FileIO = table.io
    if not all(io.exists(entry.metadata_file) for entry in table.metadata_log):
        return "broken"
    return "held"


def run(runs: int, root: Path, *, workers: int = 4, ops: int = 20) -> tuple[Counter[str], int]:
    """``runs`` runs; the outcome counts and the number of acknowledged commits."""
    counts: Counter[str] = Counter()
    acknowledged = 0
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:  # one pool: the processes import icenb once
        for n in range(runs):
            kind, version = SETUPS[n % len(SETUPS)]
            where = root / f"run-{n}"
            where.mkdir()
            create_test_table(kind, str(where), version, {"commit.retry.num-retries": "1",
                                                          "commit.retry.min-wait-ms": "5"})
            try:
                logs = pool.starmap(table_worker,
                                    [(kind, str(where), w + n * workers, ops)
                                     for w in range(workers)])
            except Exception:  # a worker failed with something else than a conflict
                counts["raw"] += 1
                continue
            acknowledged += sum(len(log.snapshots) + len(log.columns) for log in logs)
            counts[_check(kind, where, logs)] += 1
    return counts, acknowledged


def report(counts: Counter[str], acknowledged: int) -> str:
    return (f"concurrent runs: {sum(counts.values())} ({acknowledged} acknowledged commits), "
            f"held {counts['held']}, lost {counts['lost']}, wrong {counts['wrong']}, "
            f"broken log {counts['broken']}, raw {counts['raw']}")


if __name__ == "__main__":
    import tempfile

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory(prefix="icenb-concurrency-") as d:
        print(report(*run(n, Path(d))))
    os._exit(0)
