"""TableOperations: what an operation needs of a table, and nothing else (Iceberg Java's
``TableOperations``): the state the next commit starts from, where it commits, how a committed
state is shown, and the table's FileIO; and :class:`CommitReport`, what a snapshot commit did
(``Table.last_commit``).

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

__all__ = ["CommitReport", "TableOperations"]


@safe_repr
@dataclass(frozen=True)
class CommitReport:
    """What one snapshot commit through a table handle did (spec: "Commit Conflict Resolution
    and Retry"): the snapshot it added, its operation, the branch it moved (None: staged, no
    ref moved - write-audit-publish), how many attempts it took (1: no other writer got in
    between; each retry re-applied the change on the table another writer had moved) and the
    ``wap.id`` it was staged with."""

    snapshot_id: int
    operation: str
    branch: str | None
    attempts: int
    wap_id: str | None = None

    @property
    def retries(self) -> int:
        """Attempts after the first: each followed a conflict with another writer's commit,
        and re-applied the change on the table as that writer left it."""
        return self.attempts - 1

    @property
    def staged(self) -> bool:
        """Whether the snapshot was staged (no ref moved)."""
        return self.branch is None


def _ignore(report: CommitReport) -> None:
    """The default for :attr:`TableOperations.reported`."""


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
    #: Keep what a snapshot commit did on the table object (``Table.last_commit``).
    reported: Callable[[CommitReport], None] = _ignore
