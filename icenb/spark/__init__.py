"""The Spark data plane: session bootstrap and the ``icenb`` data source (reads).

``Scan.to_spark()`` and ``spark.read.format("icenb")`` both plan on the driver and read the
planned file scan tasks with pyarrow inside Spark's Python workers (DESIGN: "Spark for data,
Python for metadata"). Importing this package imports pyspark; nothing else in icenb does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from icenb.spark.datasource import (
    DATA_SOURCE_NAME,
    PLAN_LOG,
    PUSHDOWN,
    PUSHDOWN_CONF,
    IcenbDataSource,
    IcenbReader,
    ScanPartition,
    read_options,
    scan_partitions,
)
from icenb.spark.session import MASTER_ENV, find_java_home, get_spark, register, session_conf
from icenb.spark.spark_types import spark_arrow_schema, spark_schema, spark_type, to_spark_arrow

if TYPE_CHECKING:
    from icenb.table.scan import Scan

__all__ = [
    "DATA_SOURCE_NAME",
    "MASTER_ENV",
    "PLAN_LOG",
    "PUSHDOWN",
    "PUSHDOWN_CONF",
    "IcenbDataSource",
    "IcenbReader",
    "ScanPartition",
    "find_java_home",
    "get_spark",
    "read_options",
    "read_scan",
    "register",
    "scan_partitions",
    "session_conf",
    "spark_arrow_schema",
    "spark_schema",
    "spark_type",
    "to_spark_arrow",
]


def read_scan(scan: Scan, spark: Any = None, *, pushdown: bool = False,
              options: Mapping[str, str] | None = None) -> Any:
    """A Spark DataFrame of exactly the rows and columns of ``scan.to_arrow()``, read through
    the ``icenb`` data source (planned on the driver, read on executors).

    ``spark``: the session to use (default: :func:`get_spark`, the active session or a new
    local one). Types the Spark schema cannot hold raise ``UnsupportedFeature`` here.
    ``pushdown=True``: Spark's filters on the DataFrame prune planning (on a session with
    ``spark.sql.python.filterPushdown.enabled``); use such a DataFrame for one query only
    (:mod:`icenb.spark.datasource` says why). ``options``: more data source options.
    """
    schema = spark_schema(scan.schema)
    spark = get_spark() if spark is None else register(spark)
    all_options = read_options(scan.metadata, scan.io, snapshot_id=scan.snapshot_id,
                               schema=scan.table_schema, row_filter=scan.row_filter,
                               columns=scan.columns, case_sensitive=scan.case_sensitive)
    if pushdown:
        all_options[PUSHDOWN] = "true"
    all_options.update(options or {})
    return spark.read.format(DATA_SOURCE_NAME).schema(schema).options(**all_options).load()
