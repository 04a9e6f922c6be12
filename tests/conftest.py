"""Shared pytest set-up: hypothesis profiles, the golden test data location, and how
pytest-xdist (``make test`` runs ``pytest -n 2``) shares the tests out among its workers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent

# Fixtures that drive the Iceberg Java reference implementation (tests/reference/).
pytest_plugins = ["tests.reference_fixtures"]

# No deadlines: a 2-core CI machine running Spark next door makes timings meaningless.
settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci", deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def testdata_dir() -> Path:
    """Golden files written by the Java reference implementation (shared/testdata/).

    Found at $ICENB_TESTDATA, else beside the checkout (../shared/testdata), which is where
    CI puts it. Missing data fails the test: golden files are never optional.
    """
    path = Path(os.environ.get("ICENB_TESTDATA", REPO.parent / "shared" / "testdata"))
    if not path.is_dir():
        pytest.fail(f"golden test data not found at {path} (set ICENB_TESTDATA)")
    return path


# --------------------------------------------------------------------------- pytest-xdist
#: Directories whose tests all run in one worker, one after another: they share session
#: fixtures that are slow to start (a Spark session; JupyterLab and a browser).
ONE_WORKER_DIRS = ("tests/spark", "tests/browser")
#: Modules of those directories that are units of their own: they start no Spark session in the
#: worker (test_cluster.py runs its Spark in a child process).
OWN_UNITS = ("tests/spark/test_cluster.py", "tests/spark/test_session.py")
#: The longest units (about a minute or more each), handed out first, longest first; then the
#: others in collection order.
FIRST = ("tests/spark", "tests/browser", "tests/spark/test_cluster.py")


def work_unit(nodeid: str) -> str:
    """What xdist hands to one worker at a time: a test module or notebook (so module fixtures,
    such as the tables a module writes and the Java reads of them, are built once), or a whole
    directory of :data:`ONE_WORKER_DIRS`."""
    path = nodeid.split("::", 1)[0]
    if path in OWN_UNITS:
        return path
    return next((d for d in ONE_WORKER_DIRS if path.startswith(d + "/")), path)


def _first(nodeid: str) -> int:
    unit = work_unit(nodeid)
    return FIRST.index(unit) if unit in FIRST else len(FIRST)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Schedule by :func:`work_unit`, :data:`FIRST` first, each unit to whichever worker is
    free."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def add_node_collection(self, node: Any, collection: Any) -> None:
            super().add_node_collection(node, sorted(collection, key=_first))

    config.option.loadscopereorder = False  # keep the order above, not by number of tests
    return ModuleScheduling(config, log)
