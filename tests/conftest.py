"""Shared pytest set-up: hypothesis profiles and the golden test data location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent

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
    CI puts it. Missing data skips the test locally and fails it in CI.
    """
    path = Path(os.environ.get("ICENB_TESTDATA", REPO.parent / "shared" / "testdata"))
    if not path.is_dir():
        message = f"golden test data not found at {path} (set ICENB_TESTDATA)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
