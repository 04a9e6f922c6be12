"""The same reads with a Spark master whose executors are separate processes (issue 3, "Done
when": nothing may depend on state that exists only in the driver)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from icenb.spark import MASTER_ENV

REPO = Path(__file__).resolve().parents[2]
MASTER = "local-cluster[2,1,1024]"


def test_reads_run_in_separate_executor_processes(java_tables_dir: Path,
                                                   tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    env = {**os.environ, MASTER_ENV: MASTER}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.spark.cluster_check", str(java_tables_dir), str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0 and out.exists(), proc.stderr[-4000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["master"] == MASTER  # started by get_spark() from $ICENB_SPARK_MASTER
    assert result["mismatches"] == []
    assert result["reads"] >= 10
    tasks = result["tasks"]
    assert len(tasks) > 2
    jvms = {t["jvm"] for t in tasks}
    # Every read task ran in a Python worker of an executor JVM, never of the driver's, and
    # both executors took part.
    assert None not in jvms and result["driver_jvm"] not in jvms
    assert len(jvms) == 2
    assert result["driver_python"] not in {t["python"] for t in tasks}
