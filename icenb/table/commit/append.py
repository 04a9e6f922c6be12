"""Appends that merge manifests: :class:`MergeAppend` (Java's ``MergeAppend``, the default when
``commit.manifest-merge.enabled`` is true; the fast append is
:class:`~icenb.table.commit.producer.FastAppend`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from icenb.spec.manifest import (
    DataFile,
)
from icenb.spec.snapshot import (
    Operation,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import MergingSnapshotProducer

__all__ = ["MergeAppend"]


class MergeAppend(MergingSnapshotProducer):
    """Append data files, merging manifests (Java's ``MergeAppend``: operation ``append``)."""

    def operation(self) -> str:
        return str(Operation.APPEND)

    def write(self, data: Any, metadata: TableMetadata) -> list[DataFile]:
        """Write and add ``data`` (as :meth:`FastAppend.write`)."""
        return self.write_data(data, metadata)

    def add_files(self, files: Iterable[DataFile]) -> None:
        """Add data files written elsewhere."""
        self._add_data(files)

    @property
    def files(self) -> tuple[DataFile, ...]:
        return tuple(self._added_data)
