"""Processes for the catalog concurrency and crash tests (run by spawn or as ``python -m``).

``commit_worker`` commits ``commits`` property changes to one table, retrying on
``CommitConflict``. Run as a script, ``crash <kind> <root> <point>`` commits once and is killed
(SIGKILL) at ``point``: before the pointer swap, or inside the SQL transaction before COMMIT.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from icenb.catalog import Catalog, FilesystemCatalog, SqlCatalog
from icenb.errors import CommitConflict
from tests.catalog._metadata import updated

IDENT = ("db", "t")


def open_test_catalog(kind: str, root: str) -> Catalog:
    if kind == "sql":
        return SqlCatalog(os.path.join(root, "catalog.db"), warehouse=root)
    return FilesystemCatalog(root)


def commit_worker(kind: str, root: str, worker: int, commits: int) -> tuple[list[str], int]:
    """(metadata locations of this worker's successful commits, conflicts retried)."""
    catalog = open_test_catalog(kind, root)
    done: list[str] = []
    conflicts = 0
    for j in range(commits):
        while True:
            loaded = catalog.load_table(IDENT)
            new = updated(loaded.metadata,
                          set_properties={f"c.w{worker}-{j}": loaded.metadata_location})
            try:
                result = catalog.commit_table(IDENT, loaded.metadata_location, new,
                                              base_metadata=loaded.metadata)
            except CommitConflict:
                conflicts += 1
                continue
            done.append(result.metadata_location)
            break
    return done, conflicts


def _die(*_: Any, **__: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


def crash(kind: str, root: str, point: str) -> None:
    catalog = open_test_catalog(kind, root)
    loaded = catalog.load_table(IDENT)
    if point == "before-swap" and kind == "sql":
        SqlCatalog._swap = _die  # type: ignore[method-assign]
    elif point == "before-commit":
        SqlCatalog._end_transaction = _die  # type: ignore[method-assign]
    elif point == "before-swap":
        os.link = _die  # the temporary file is written; linking it is the swap
    else:
        raise SystemExit(f"unknown point {point}")
    catalog.commit_table(IDENT, loaded.metadata_location,
                         updated(loaded.metadata, set_properties={"crashed": "yes"}))
    raise SystemExit("not killed")


if __name__ == "__main__":
    if sys.argv[1] == "crash":
        crash(sys.argv[2], sys.argv[3], sys.argv[4])
