"""icenb: explore and author Apache Iceberg tables and views in Jupyter."""

from __future__ import annotations

from typing import Any

from icenb import (
    display,
    errors,
)
from icenb._version import __version__
from icenb.catalog import Catalog, FilesystemCatalog, SqlCatalog, open_catalog
from icenb.display import get_options, set_options
from icenb.display.kit.side_by_side import side_by_side
from icenb.table import Scan, Table, View, load_table, register_widget
from icenb.table import open_location as open  # icenb.open(location): a Table or a View
from icenb.table.engine import register_engine
from icenb.table.warehouse import Warehouse, warehouse


def _widget(name: str) -> Any:
    """The widget class ``name``, imported on first use (``import icenb`` stays light)."""
    import icenb.widgets

    return getattr(icenb.widgets, name)


def _spark_engine() -> Any:
    """The Spark data plane, built on first use (this is when pyspark is imported)."""
    from icenb.spark.engine import SparkEngine

    return SparkEngine()


# Composition root: the data plane table/ calls, and the widgets Table.time_travel() and
# View.versions_widget() build; both imported only when first used.
register_engine(_spark_engine)
register_widget("TimeTravel", lambda *a, **k: _widget("TimeTravel")(*a, **k))
register_widget("ViewVersions", lambda *a, **k: _widget("ViewVersions")(*a, **k))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext icenb``: the ``%%sql`` cell magic (:mod:`icenb.sql_magic`) and the
    inspect-table display, in a shell started after import."""
    from icenb.display.inspect_repr import register_ipython_formatters
    from icenb.sql_magic import load_ipython_extension as load_sql_magic

    register_ipython_formatters(ipython)
    load_sql_magic(ipython)

__all__ = [
    "Catalog",
    "FilesystemCatalog",
    "Scan",
    "SqlCatalog",
    "Table",
    "View",
    "Warehouse",
    "__version__",
    "display",
    "errors",
    "get_options",
    "load_table",
    "open",
    "open_catalog",
    "set_options",
    "side_by_side",
    "warehouse",
]
