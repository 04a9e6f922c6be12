"""A table's history as sequences that know their table: snapshots, snapshot log, metadata log.

They behave as the tuples ``Table`` returned before (index, iterate, compare with tuples) and
carry the metadata they came from, so the display layer can draw them as a tree or a timeline
without reading anything (spec: "Snapshots", "Snapshot References", Table Metadata Fields
``snapshot-log`` and ``metadata-log``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from icenb.spec.snapshot import MetadataLogEntry, Snapshot, SnapshotLogEntry
from icenb.spec.table_metadata import TableMetadata

T = TypeVar("T")


class _History(tuple[T, ...]):
    """A tuple with the table metadata it was taken from (``.metadata``)."""

    metadata: TableMetadata
    metadata_location: str | None

    def __new__(cls, items: Iterable[T], metadata: TableMetadata,
                metadata_location: str | None = None) -> _History[T]:
        obj = super().__new__(cls, items)
        obj.metadata = metadata
        obj.metadata_location = metadata_location
        return obj

    def __getnewargs__(self) -> tuple[tuple[T, ...], TableMetadata, str | None]:
        return (tuple(self), self.metadata, self.metadata_location)


class Snapshots(_History[Snapshot]):
    """Every snapshot in the metadata, in metadata order; displays as the snapshot tree."""


class SnapshotLog(_History[SnapshotLogEntry]):
    """The snapshot log (which snapshot was current when); displays as a timeline."""


class MetadataLog(_History[MetadataLogEntry]):
    """Previous metadata files, oldest first; displays as a timeline ending at the current one."""
