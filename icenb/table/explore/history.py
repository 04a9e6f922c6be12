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
from icenb.spec.view_metadata import ViewHistoryEntry, ViewMetadata

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


class ViewVersionLog(tuple[ViewHistoryEntry, ...]):
    """A view's version log (which version was current when, oldest first), with the view
    metadata it came from (``.metadata``); displays as a timeline (view spec: "version-log")."""

    metadata: ViewMetadata
    metadata_location: str | None

    def __new__(cls, items: Iterable[ViewHistoryEntry], metadata: ViewMetadata,
                metadata_location: str | None = None) -> ViewVersionLog:
        obj = super().__new__(cls, items)
        obj.metadata = metadata
        obj.metadata_location = metadata_location
        return obj

    def __getnewargs__(self) -> tuple[tuple[ViewHistoryEntry, ...], ViewMetadata, str | None]:
        return (tuple(self), self.metadata, self.metadata_location)


def view_version_log(view_metadata: ViewMetadata,
                     metadata_location: str | None = None) -> ViewVersionLog:
    """The version log of ``view_metadata`` as a :class:`ViewVersionLog`."""
    return ViewVersionLog(view_metadata.version_log, view_metadata, metadata_location)
