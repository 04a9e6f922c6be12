"""icenb: explore and author Apache Iceberg tables and views in Jupyter."""

from __future__ import annotations

from icenb import errors
from icenb.table import Scan, Table
from icenb.table import open_table as open  # icenb.open(location)

__version__ = "0.1.0"

__all__ = ["Scan", "Table", "__version__", "errors", "open"]
