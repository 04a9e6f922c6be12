"""Commits under concurrency and crashes, in both catalogs (DESIGN: "Commits are optimistic and
atomic"; issue 4: every successful commit is in the history, a killed writer leaves the table
at its last committed state).

Four processes make 25 commits each against one table, retrying on ``CommitConflict``; every
commit sets its own property, so a lost update would lose a property. Then a writer is killed
(SIGKILL) between writing its metadata file and swapping the pointer, and (SQL) inside the
transaction after its UPDATE, before COMMIT.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from icenb.catalog import Catalog, SqlCatalog
from icenb.io.metadata_files import load_table_metadata
from tests.catalog._metadata import new_metadata, updated
from tests.catalog._workers import IDENT, commit_worker, open_test_catalog

REPO = Path(__file__).resolve().parents[2]
WORKERS = 4
COMMITS = 25


def _setup(kind: str, root: Path) -> Catalog:
    catalog = open_test_catalog(kind, str(root))
    if isinstance(catalog, SqlCatalog):
        catalog.initialize()
    catalog.create_namespace("db")
    # Keep the whole chain in the log, so it can be checked end to end.
    catalog.create_table(IDENT, new_metadata(catalog.default_table_location(IDENT), properties={
        "write.metadata.previous-versions-max": "1000"}))
    return catalog


@pytest.mark.parametrize("kind", ["sql", "filesystem"])
def test_four_processes_commit_and_nothing_is_lost(kind: str, tmp_path: Path) -> None:
    catalog = _setup(kind, tmp_path)
    first = catalog.load_table(IDENT).metadata_location
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(WORKERS) as pool:
        results = pool.starmap(commit_worker,
                               [(kind, str(tmp_path), w, COMMITS) for w in range(WORKERS)])
    succeeded = [loc for done, _ in results for loc in done]
    conflicts = sum(c for _, c in results)
    print(f"{kind}: {len(succeeded)} commits, {conflicts} conflicts retried")
    assert len(succeeded) == WORKERS * COMMITS == len(set(succeeded))

    final = catalog.load_table(IDENT)
    # No update lost: every commit's property is there.
    assert {k for k in final.metadata.properties if k.startswith("c.")} == {
        f"c.w{w}-{j}" for w in range(WORKERS) for j in range(COMMITS)}
    # The metadata-log is one unbroken chain from the created file through every commit.
    chain = [e.metadata_file for e in final.metadata.metadata_log] + [final.metadata_location]
    assert chain[0] == first
    assert len(chain) == len(set(chain)) == WORKERS * COMMITS + 1
    assert set(succeeded) == set(chain[1:])
    # Each commit was applied on the file just before it in the chain, and that file's own
    # log is the chain up to it.
    position = {loc: i for i, loc in enumerate(chain)}
    for w, (done, _) in enumerate(results):
        for j, location in enumerate(done):
            assert final.metadata.properties[f"c.w{w}-{j}"] == chain[position[location] - 1]
    for i in (1, len(chain) // 2, len(chain) - 1):
        md = load_table_metadata(chain[i], catalog.io)
        assert [e.metadata_file for e in md.metadata_log] == chain[:i]
    # Failed attempts left no metadata files (SQL deletes them; filesystem never made them).
    metadata_dir = tmp_path / "db" / "t" / "metadata"
    names = sorted(p.name for p in metadata_dir.iterdir())
    expected = sorted(Path(c).name for c in chain)
    if kind == "filesystem":
        assert expected == sorted(f"v{i}.metadata.json" for i in range(1, len(chain) + 1))
        expected.append("version-hint.text")
    assert names == sorted(expected)
    if isinstance(catalog, SqlCatalog):
        assert final.previous_metadata_location == chain[-2]


def _crash(kind: str, root: Path, point: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "tests.catalog._workers", "crash", kind,
                           str(root), point], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize(("kind", "point"), [
    ("sql", "before-swap"), ("sql", "before-commit"), ("filesystem", "before-swap")])
def test_a_writer_killed_mid_commit_leaves_the_table_as_it_was(
        kind: str, point: str, tmp_path: Path) -> None:
    catalog = _setup(kind, tmp_path)
    before = catalog.load_table(IDENT)
    before = catalog.commit_table(IDENT, before.metadata_location,
                                  updated(before.metadata, set_properties={"step": "1"}))
    _crash(kind, tmp_path, point)
    if kind == "sql":  # the killed transaction's journal is still there (hot)
        assert (tmp_path / "catalog.db-journal").exists() == (point == "before-commit")

    reader = open_test_catalog(kind, str(tmp_path))  # read-only connections for SQL
    after = reader.load_table(IDENT)
    assert after.metadata_location == before.metadata_location
    assert after.metadata == before.metadata
    assert "crashed" not in after.metadata.properties
    # The table still takes commits from where it was.
    again = catalog.commit_table(IDENT, after.metadata_location,
                                 updated(after.metadata, set_properties={"step": "2"}))
    assert reader.load_table(IDENT).metadata_location == again.metadata_location
    assert [e.metadata_file for e in again.metadata.metadata_log][-1] == before.metadata_location
