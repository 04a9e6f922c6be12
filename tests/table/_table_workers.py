"""Writer processes for the table concurrency and crash tests (run by spawn or ``python -m``).

``table_worker`` makes ``commits`` commits to one table: appends of rows whose ids belong to the
worker, deletes of rows the worker appended earlier (copy-on-write and merge-on-read in turn)
and schema changes (a new column). A commit that fails with ``CommitConflict`` is counted and
tried again on a reloaded table, as an application would. Run as a script,
``crash <kind> <root> <point>`` appends once and is killed (SIGKILL) at ``point``.
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

import icenb
from icenb.catalog import Catalog, FilesystemCatalog, SqlCatalog
from icenb.errors import CommitConflict
from icenb.spec.partition_spec import build_partition_spec
from icenb.spec.sort_order import build_sort_order
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.table_updates import new_table_metadata
from icenb.table.table import Table
from icenb.table.warehouse import to_schema

IDENT = ("db", "t")
ROWS_PER_APPEND = 3


def open_test_catalog(kind: str, root: str) -> Catalog:
    if kind == "sql":
        return SqlCatalog(os.path.join(root, "catalog.db"), warehouse=root)
    return FilesystemCatalog(root)


def create_test_table(kind: str, root: str, format_version: int,
                      properties: dict[str, str] | None = None) -> Table:
    """``db.t (id long, w int)`` partitioned by ``w`` (one partition per worker)."""
    catalog = open_test_catalog(kind, root)
    catalog.create_namespace(("db",))
    schema = to_schema("id long not null, w int not null")
    metadata: TableMetadata = new_table_metadata(
        schema, build_partition_spec(schema, ["w"]), build_sort_order(schema, []),
        os.path.join(root, "db", "t"), properties or {}, format_version)
    catalog.create_table(IDENT, metadata)
    return icenb.load_table(catalog, IDENT)


def append_ids(worker: int, j: int) -> list[int]:
    """The ids a worker's ``j``-th operation appends (disjoint across workers and steps)."""
    return [worker * 100_000 + j * 10 + k for k in range(ROWS_PER_APPEND)]


@dataclass
class WorkerLog:
    appended: list[int] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)
    conflicts: dict[str, int] = field(default_factory=dict)


def _retry(log: WorkerLog, kind: str, table: Table, action: Any) -> Any:
    while True:
        try:
            return action()
        except CommitConflict:
            log.conflicts[kind] = log.conflicts.get(kind, 0) + 1
            table.refresh()


def table_worker(kind: str, root: str, worker: int, commits: int) -> WorkerLog:
    """Run ``commits`` commits (see the module docstring); what this worker committed."""
    table = icenb.load_table(open_test_catalog(kind, root), IDENT)
    log = WorkerLog()
    for j in range(commits):
        step = j % 5
        if step == 3 and log.appended:
            victim = log.appended[-2]  # the middle row of the last append
            mode = "copy-on-write" if (j // 5) % 2 == 0 else "merge-on-read"
            if table.format_version == 1:
                mode = "copy-on-write"
            snap = _retry(log, "delete", table,
                          lambda v=victim, m=mode: table.delete(f"id = {v}", mode=m))
            assert snap is not None, f"worker {worker}: deleting {victim} found nothing"
            log.deleted.append(victim)
            log.snapshots.append(snap.snapshot_id)
        elif step == 4:
            name = f"c_w{worker}_{j}"

            def add_column(n: str = name) -> None:
                with table.update_schema() as u:
                    u.add_column(n, "string")

            _retry(log, "schema", table, add_column)
            log.columns.append(name)
        else:
            ids = append_ids(worker, j)
            snap = _retry(log, "append", table, lambda i=ids: table.append(
                [{"id": x, "w": worker} for x in i]))
            log.appended.extend(ids)
            log.snapshots.append(snap.snapshot_id)
    return log


def _die(*_: Any, **__: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


def crash(kind: str, root: str, point: str, op: str = "append") -> None:
    """Append one row (``op`` "append") or delete row ``id = 1`` ("delete-cow",
    "delete-mor"), SIGKILLed at ``point`` of the commit."""
    import icenb.table.commit.merging as merging
    import icenb.table.commit.producer as producer

    table = icenb.load_table(open_test_catalog(kind, root), IDENT)
    if point == "after-data-files":
        producer.write_manifest = _die  # type: ignore[attr-defined]
        merging.write_manifest = _die  # type: ignore[attr-defined]
    elif point == "after-manifest":
        producer.write_manifest_list = _die  # type: ignore[attr-defined]
    elif point == "after-manifest-list":
        catalog_type = SqlCatalog if kind == "sql" else FilesystemCatalog
        catalog_type.commit_table = _die  # type: ignore[method-assign]
    elif point == "during-swap":
        if kind == "sql":  # inside the catalog's transaction, before COMMIT
            SqlCatalog._end_transaction = _die  # type: ignore[method-assign]
        else:  # v<N+1>.metadata.json exists, version-hint.text not yet updated
            FilesystemCatalog._write_version_hint = _die  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown point {point}")
    if op == "append":
        table.append([{"id": -1, "w": 0}])
    else:
        table.delete("id = 1", mode="copy-on-write" if op == "delete-cow" else "merge-on-read")
    raise SystemExit("the commit finished: the crash point was never reached")


if __name__ == "__main__":
    if sys.argv[1] == "crash":
        crash(*sys.argv[2:])
