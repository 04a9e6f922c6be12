"""TableOperations: what an operation needs of a table, and nothing else (Iceberg Java's
``TableOperations``): the state the next commit starts from, where it commits, how a committed
state is shown, and the table's FileIO.

Operations (producers, row-level changes, metadata changes, snapshot management, expiry) take
a table and ask ``table.operations`` for these, instead of reaching into ``Table``'s private
state; ``Table`` builds the object from its own fields.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from icenb.catalog import Catalog, Identifier, LoadedTable
from icenb.io.file_io import FileIO
from icenb.reprs import safe_repr
from icenb.spec.table_metadata import TableMetadata

__all__ = ["TableOperations"]


@safe_repr
@dataclass(frozen=True)
class TableOperations:
    """A table's operations (see the module docstring)."""

    #: The catalog and identifier to commit to; ``UnsupportedFeature`` for a table opened by
    #: location (read-only).
    commit_target: Callable[[], tuple[Catalog, Identifier]]
    #: The table as last loaded or committed: the base of the next commit.
    current: Callable[[], LoadedTable]
    #: Show the state a commit produced on the table object.
    committed: Callable[[LoadedTable], None]
    #: Reload the table's metadata (the catalog's current state) and return it.
    refresh: Callable[[], TableMetadata]
    #: The table's FileIO.
    io: FileIO
