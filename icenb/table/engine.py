"""The data plane as ``table/`` sees it: what a table, scan or view asks of an engine, and the
registry the composition root fills (DESIGN.md, Architecture: ``table/engine.py``).

``table/`` never imports ``icenb.spark``: it calls :func:`engine`, which builds the registered
engine on first use. ``icenb/__init__.py`` registers the Spark engine lazily, so ``import
icenb`` still imports no pyspark, and metadata work never starts Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from icenb.catalog import Catalog, Identifier, LoadedTable
from icenb.errors import UnsupportedFeature
from icenb.spec.schema import Schema
from icenb.spec.snapshot import Snapshot

if TYPE_CHECKING:  # same layer; only for annotations
    from icenb.table.scan import Scan
    from icenb.table.table import Table
    from icenb.table.warehouse import Warehouse

__all__ = ["DataPlane", "Overwrite", "engine", "register_engine"]


@dataclass(frozen=True)
class Overwrite:
    """What an ``overwrite`` write replaces: ``dynamic`` partitions, or (static) the rows
    matching ``filter`` (None: every row)."""

    dynamic: bool = False
    filter: str | None = None


class DataPlane(Protocol):
    """What ``table/`` asks of the engine that moves data (Spark: ``icenb.spark.engine``)."""

    def read_scan(self, scan: Scan, spark: Any) -> Any:
        """A DataFrame of exactly the rows and columns of ``scan.to_arrow()``."""

    def write_dataframe(self, df: Any, catalog: Catalog, identifier: Identifier, *,
                        overwrite: Overwrite | None, branch: str,
                        snapshot_properties: Mapping[str, str] | None
                        ) -> tuple[LoadedTable, Snapshot]:
        """Write ``df`` (tasks write files, the driver commits one snapshot)."""

    def view_rows(self, sql: str, load: Callable[[tuple[str, ...]], Table], *,
                  default_catalog: str | None, default_namespace: Sequence[str],
                  catalog_names: Collection[str], spark: Any) -> Any:
        """A DataFrame of a view's SQL, table names resolved with ``load``."""

    def view_schema(self, sql: str, load: Callable[[tuple[str, ...]], Table], *,
                    default_catalog: str | None, default_namespace: Sequence[str],
                    catalog_names: Collection[str], spark: Any) -> Schema:
        """The Iceberg schema of a view's result (nothing is read)."""

    def warehouse_sql(self, query: str, warehouse: Warehouse, *, namespace: Sequence[str],
                      spark: Any) -> Any:
        """A DataFrame of a SQL query over a warehouse's tables, views and metadata tables."""

    def schema_from_engine(self, schema: Any) -> Schema:
        """An Iceberg schema from the engine's own schema object (Spark's ``StructType``)."""


_FACTORY: Callable[[], DataPlane] | None = None
_ENGINE: DataPlane | None = None


def register_engine(factory: Callable[[], DataPlane]) -> None:
    """Register the data plane; ``factory`` runs on first use (it may import pyspark)."""
    global _FACTORY, _ENGINE
    _FACTORY, _ENGINE = factory, None


def engine() -> DataPlane:
    """The registered data plane, built on first use."""
    global _ENGINE
    if _ENGINE is None:
        if _FACTORY is None:
            raise UnsupportedFeature("no data plane is registered: import icenb (the package) "
                                     "to register the Spark engine", field="engine")
        _ENGINE = _FACTORY()
    return _ENGINE
