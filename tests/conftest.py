"""Shared pytest set-up: hypothesis profiles and the golden test data location."""

from __future__ import annotations

import os
from pathlib import Path

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
