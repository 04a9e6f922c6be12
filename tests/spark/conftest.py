"""One local SparkSession for the Spark tests, built the way a user builds their own."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

# A zone other than UTC: reads must not depend on the session's time zone, and icenb must
# leave a user's session settings alone.
USER_TIME_ZONE = "America/Los_Angeles"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A user's own local[2] session (icenb's data source is not registered on it yet)."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("icenb-tests")
               .config("spark.sql.session.timeZone", USER_TIME_ZONE)
               .config("spark.pyspark.python", sys.executable)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
