"""Where a reference script's batch runs: a JVM of its own, or one shared by many batches.

A script's ``serve(ref, requests, args)`` asks ``ref`` for what it needs: ``ref.gateway`` (py4j,
with Iceberg's classes loaded) or ``with ref.spark(...) as spark`` (a Spark 3.5 session whose
``ref`` catalog is rooted at a warehouse, and optionally a ``hive`` catalog). Two holders:

- :class:`OwnJvm`, for a script run from its command line: it starts what is asked for, as the
  scripts always did (a bare JVM for the gateway, a new SparkSession per ``spark()``), and
  stops it at the end.
- :class:`SharedJvm`, for tests/reference/server.py: one SparkSession started once; every
  ``spark()`` is a new session of it (own SQL settings and catalogs, same JVM), and the gateway
  is that JVM's.

Runs only inside the reference virtualenv (.venv-ref), imported by the scripts beside it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

__all__ = ["OwnJvm", "Reference", "SharedJvm"]


class Reference(Protocol):
    """What a batch may ask of the reference implementation."""

    @property
    def gateway(self) -> Any:
        """A py4j gateway to a JVM with the Iceberg runtime on its class path."""
        ...

    def spark(self, warehouse: str | None = None, hive_warehouse: str | None = None,
              metastore_home: str | None = None) -> AbstractContextManager[Any]:
        """A context manager giving a SparkSession: HadoopCatalog ``ref`` at ``warehouse``
        (else a scratch directory); with ``hive_warehouse``, also Iceberg's HiveCatalog
        ``hive`` over an embedded Derby metastore in ``metastore_home``/metastore_db."""
        ...


class OwnJvm:
    """A batch run from a script's command line: a JVM of its own, stopped by :meth:`close`."""

    def __init__(self) -> None:
        self._gateway: Any = None
        self._spark: Any = None

    @property
    def gateway(self) -> Any:
        if self._spark is not None:
            return self._spark.sparkContext._gateway
        if self._gateway is None:
            from refspark import java_gateway

            self._gateway = java_gateway()
        return self._gateway

    @contextmanager
    def spark(self, warehouse: str | None = None, hive_warehouse: str | None = None,
              metastore_home: str | None = None) -> Iterator[Any]:
        from refspark import spark_session

        with tempfile.TemporaryDirectory() as scratch:
            home = metastore_home if hive_warehouse is not None and metastore_home else scratch
            spark = spark_session(warehouse or os.path.join(scratch, "wh"), home,
                                  hive_warehouse)
            self._spark = spark
            try:
                yield spark
            finally:
                self._spark = None
                spark.stop()

    def close(self) -> None:
        if self._gateway is not None:
            self._gateway.shutdown()
            self._gateway = None

    def __enter__(self) -> OwnJvm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SharedJvm:
    """One SparkSession (one JVM) serving batch after batch, each in sessions of its own."""

    def __init__(self, scratch: str) -> None:
        from refspark import SERVER_JAVA_OPTIONS, spark_session

        self.scratch = scratch
        self.base = spark_session(os.path.join(scratch, "wh"), scratch,
                                  java_options=SERVER_JAVA_OPTIONS)

    @property
    def gateway(self) -> Any:
        return self.base.sparkContext._gateway

    @contextmanager
    def spark(self, warehouse: str | None = None, hive_warehouse: str | None = None,
              metastore_home: str | None = None) -> Iterator[Any]:
        from refspark import activate, batch_session

        with tempfile.TemporaryDirectory(dir=self.scratch) as scratch:
            metastore = None
            if hive_warehouse is not None:
                metastore = os.path.join(metastore_home or scratch, "metastore_db")
            session = batch_session(self.base, warehouse or os.path.join(scratch, "wh"),
                                    hive_warehouse, metastore)
            try:
                yield session
            finally:
                activate(self.base)

    def alive(self) -> bool:
        """Whether the JVM still answers."""
        try:
            self.gateway.jvm.java.lang.System.currentTimeMillis()
        except Exception:
            return False
        return True

    def close(self) -> None:
        self.base.stop()
