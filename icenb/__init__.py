"""icenb: explore and author Apache Iceberg tables and views in Jupyter."""

from __future__ import annotations

from icenb import errors

__version__ = "0.1.0"

__all__ = ["__version__", "errors"]
