"""Removing and replacing data files (spec: "Commit Conflict Resolution and Retry"):
:class:`DeleteFiles` (Java's ``StreamingDelete``), :class:`OverwriteFiles` (``BaseOverwriteFiles``)
and :class:`ReplacePartitions` (``BaseReplacePartitions``, dynamic partition overwrite)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from icenb.errors import CommitConflict
from icenb.spec.expressions import AlwaysTrue, Expression
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    ManifestContent,
    ManifestFile,
)
from icenb.spec.snapshot import (
    REPLACE_PARTITIONS,
    Operation,
    Snapshot,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import MergingSnapshotProducer
from icenb.table.commit.validation import ADDED_DATA_OPS, DELETED_DATA_OPS, NEW_DELETE_OPS

__all__ = ["DeleteFiles", "OverwriteFiles", "ReplacePartitions"]


class DeleteFiles(MergingSnapshotProducer):
    """Remove whole data files (Java's ``StreamingDelete``: operation ``delete``)."""

    def operation(self) -> str:
        return str(Operation.DELETE)

    def delete_file(self, file: DataFile) -> DeleteFiles:
        self._remove(file)
        return self

    def delete_by_path(self, path: str) -> DeleteFiles:
        self._remove(path)
        return self

    def delete_from_row_filter(self, expr: str | Expression) -> DeleteFiles:
        """Remove every file whose rows all match; a data file where only some rows may match
        raises ``ValidationError`` (whole files only, as Java)."""
        self._delete_rows_matching(expr)
        return self


class OverwriteFiles(MergingSnapshotProducer):
    """Add and remove data files in one ``overwrite`` snapshot (Java's ``BaseOverwriteFiles``)
    with optional conflict validation."""

    def operation(self) -> str:
        return str(Operation.OVERWRITE)

    def add_file(self, file: DataFile) -> OverwriteFiles:
        self._add_data([file])
        return self

    def add_files(self, files: Iterable[DataFile]) -> OverwriteFiles:
        self._add_data(files)
        return self

    def delete_file(self, file: DataFile | str) -> OverwriteFiles:
        self._remove(file)
        return self

    def overwrite_by_row_filter(self, expr: str | Expression) -> OverwriteFiles:
        self._delete_rows_matching(expr)
        return self


class ReplacePartitions(MergingSnapshotProducer):
    """Dynamic partition overwrite: the partitions of the added files are replaced (Java's
    ``BaseReplacePartitions``: operation ``overwrite``, summary ``replace-partitions=true``);
    an unpartitioned table is replaced whole."""

    def operation(self) -> str:
        return str(Operation.OVERWRITE)

    def add_file(self, file: DataFile) -> ReplacePartitions:
        self._add_data([file])
        return self

    def add_files(self, files: Iterable[DataFile]) -> ReplacePartitions:
        self._add_data(files)
        return self

    def validate_no_conflicting_data(self) -> ReplacePartitions:
        self._validate_data = True
        return self

    def validate_no_conflicting_deletes(self) -> ReplacePartitions:
        self._validate_deletes = True
        return self

    def _extra_summary(self) -> dict[str, str]:
        return {REPLACE_PARTITIONS: "true"}

    def _manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        self._drop_partitions = set()
        self._row_filter = None
        if base.spec.is_unpartitioned:
            self._row_filter = AlwaysTrue()
        else:
            for f in self._added_data:
                spec = self._spec(base, f.spec_id)
                if spec.is_unpartitioned:
                    self._row_filter = AlwaysTrue()
                self._drop_partitions.add((f.spec_id, f.partition))
        return super()._manifests(base, parent)

    def _validate(self, base: TableMetadata, parent: Snapshot | None,
                  removed_data: Sequence[DataFile]) -> None:
        if parent is None:
            return
        whole = self._row_filter is not None
        if self._validate_data:
            if whole:
                self._validate_added_data_files(base, parent, None)
            else:
                self._check_partitions(base, parent, ADDED_DATA_OPS, ManifestContent.DATA,
                                       EntryStatus.ADDED, "added data")
        if self._validate_deletes:
            if whole:
                self._validate_deleted_data_files(base, parent, None)
                self._validate_no_new_delete_files(base, parent, None)
            else:
                self._check_partitions(base, parent, DELETED_DATA_OPS, ManifestContent.DATA,
                                       EntryStatus.DELETED, "deleted data")
                self._check_partitions(base, parent, NEW_DELETE_OPS, ManifestContent.DELETES,
                                       EntryStatus.ADDED, "added delete")

    def _check_partitions(self, base: TableMetadata, parent: Snapshot | None,
                          ops: frozenset[str], content: ManifestContent, status: EntryStatus,
                          what: str) -> None:
        for snap, f in self._new_entries(base, parent, ops, content, status):
            if (f.spec_id, f.partition) in self._drop_partitions:
                raise CommitConflict(
                    f"found a conflicting {what} file in a replaced partition (snapshot "
                    f"{snap.snapshot_id})", file=f.file_path,
                    field="validate_no_conflicting_data", value=f.partition)
