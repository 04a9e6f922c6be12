"""Row deltas (Java's ``BaseRowDelta``): data rows and delete files added, delete files removed in
one snapshot, validated against concurrent commits (spec: "Scan Planning", "Commit Conflict
Resolution and Retry")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from icenb.errors import CommitConflict, ValidationError
from icenb.io.manifest_reader import read_manifest_list
from icenb.spec.expressions import Expression
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
)
from icenb.spec.snapshot import (
    Operation,
    Snapshot,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import MergingSnapshotProducer, read_entries
from icenb.table.commit.validation import DELETED_DATA_OPS

__all__ = ["RowDelta"]


class RowDelta(MergingSnapshotProducer):
    """Add data rows and delete files, remove delete files (Java's ``BaseRowDelta``):
    operation ``append`` for rows only, ``delete`` for deletes only, else ``overwrite``."""

    def operation(self) -> str:
        if self._added_data and not self._added_deletes:
            return str(Operation.APPEND)
        if self._added_deletes and not self._added_data:
            return str(Operation.DELETE)
        if not self._added_data and not self._added_deletes:
            return str(Operation.DELETE if self._remove_paths else Operation.APPEND)
        return str(Operation.OVERWRITE)

    def add_rows(self, files: Iterable[DataFile]) -> RowDelta:
        self._add_data(files)
        return self

    def add_deletes(self, files: Iterable[DataFile]) -> RowDelta:
        self._add_delete_files(files)
        return self

    def remove_deletes(self, files: Iterable[DataFile]) -> RowDelta:
        """Remove delete files (e.g. DVs or file-scoped position deletes merged into a new
        DV)."""
        for f in files:
            if not isinstance(f, DataFile) or f.content == FileContent.DATA:
                raise ValidationError("remove_deletes takes delete files", field="content",
                                      file=getattr(f, "file_path", None))
            self._remove(f)
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> RowDelta:
        super().validate_from_snapshot(snapshot_id)
        return self

    def conflict_detection_filter(self, expr: str | Expression) -> RowDelta:
        super().conflict_detection_filter(expr)
        return self

    def validate_data_files_exist(self, paths: Iterable[str]) -> RowDelta:
        """Data files the new deletes reference must still be live at commit, else
        ``CommitConflict``."""
        for p in paths:
            if not isinstance(p, str):
                raise ValidationError("paths must be strings", field="paths", value=p)
            self._referenced_data_files.add(p)
        return self

    def validate_no_conflicting_data_files(self) -> RowDelta:
        self._validate_data = True
        return self

    def validate_no_conflicting_delete_files(self) -> RowDelta:
        self._validate_deletes = True
        return self

    def _validate(self, base: TableMetadata, parent: Snapshot | None,
                  removed_data: Sequence[DataFile]) -> None:
        if parent is None:
            if self._referenced_data_files:
                raise CommitConflict("data files referenced by the new deletes are not in "
                                     "the table", file=sorted(self._referenced_data_files)[0],
                                     field="validate_data_files_exist")
            return
        if self._referenced_data_files:
            self._check_live(base, parent)
        if self._validate_data:
            self._validate_added_data_files(base, parent, self._conflict_filter)
        if self._validate_deletes:
            self._validate_no_new_delete_files(base, parent, self._conflict_filter)
        self._validate_added_dvs(base, parent)

    def _check_live(self, base: TableMetadata, parent: Snapshot) -> None:
        """The data files the new deletes reference are still in the table: none was deleted
        by a snapshot since the starting one (Java's ``validateDataFilesExist``; nothing to
        read when no commit came in between). Without a starting snapshot, the parent's live
        files are checked."""
        if self._starting_snapshot_id is not None:
            gone = {f.file_path for _, f in self._new_entries(
                base, parent, DELETED_DATA_OPS, ManifestContent.DATA, EntryStatus.DELETED)}
            missing = sorted(self._referenced_data_files & gone)
        else:
            live: set[str] = set()
            for m in read_manifest_list(self._io, parent, base.format_version):
                if m.content == ManifestContent.DATA and (m.has_added_files()
                                                          or m.has_existing_files()):
                    live.update(e.data_file.file_path for e in read_entries(self._io, m, base)
                                if e.is_live)
            missing = sorted(self._referenced_data_files - live)
        if missing:
            raise CommitConflict("data files referenced by the new deletes are no longer in "
                                 "the table (removed concurrently)", file=missing[0],
                                 field="validate_data_files_exist", value=len(missing))
