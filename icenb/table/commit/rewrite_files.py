"""Rewriting files without changing table data (Java's ``BaseRewriteFiles``): operation
``replace`` (spec: "Snapshots", operation ``replace`` - "data and delete files were added and
removed without changing table data"; "Commit Conflict Resolution and Retry").

:class:`RewriteFiles` removes data files and delete files and adds the data files that hold
the same live rows, on the merging producer (:mod:`.merging`: manifests filtered and merged,
DVs of removed data files and delete files older than every live data file dropped, summary
counts as Java writes them). Its conflict checks, as Java's:

* ``validate_from_snapshot`` (the snapshot the rewrite read): every file to remove must still
  be live at commit, else ``CommitConflict`` (Java's ``failMissingDeletePaths``);
* no delete file added since then may apply to a rewritten data file (Java's
  ``validateNoNewDeletesForDataFiles``): its rows would come back in the new files.
  Equality deletes are ignored when the new files take the starting sequence number
  (:meth:`RewriteFiles.data_sequence_number`): they still apply to the new files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from icenb.errors import CommitConflict, ValidationError
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.snapshot import Operation, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import MergingSnapshotProducer
from icenb.table.commit.validation import NEW_DELETE_OPS

__all__ = ["RewriteFiles"]


class RewriteFiles(MergingSnapshotProducer):
    """Replace data (and delete) files by data files holding the same live rows, in one
    ``replace`` snapshot (Java's ``BaseRewriteFiles``; see the module docstring)."""

    _data_sequence_number: int | None = None

    def operation(self) -> str:
        return str(Operation.REPLACE)

    def delete_file(self, file: DataFile) -> RewriteFiles:
        """Remove a data file or a delete file (a DV by its offset in its Puffin file)."""
        if not isinstance(file, DataFile):
            raise ValidationError("expected a DataFile to remove", field="file",
                                  value=type(file).__name__)
        self._remove(file)
        return self

    def add_file(self, file: DataFile) -> RewriteFiles:
        self._add_data([file])
        return self

    def add_files(self, files: Iterable[DataFile]) -> RewriteFiles:
        self._add_data(files)
        return self

    def data_sequence_number(self, sequence_number: int) -> RewriteFiles:
        """The data sequence number of the added files (Java's
        ``RewriteFiles.dataSequenceNumber``): the starting snapshot's, so delete files
        committed after it still apply to the rewritten rows (spec: "Scan Planning", an
        equality delete applies to data files of a lower data sequence number)."""
        if (not isinstance(sequence_number, int) or isinstance(sequence_number, bool)
                or sequence_number < 0):
            raise ValidationError("a data sequence number is a non-negative int",
                                  field="data_sequence_number", value=sequence_number)
        self._data_sequence_number = sequence_number
        return self

    def _added_data_sequence_number(self) -> int | None:
        return self._data_sequence_number

    def validate_from_snapshot(self, snapshot_id: int | None) -> RewriteFiles:
        super().validate_from_snapshot(snapshot_id)
        return self

    def _write_manifest(self, base: TableMetadata, spec: PartitionSpec,
                        content: ManifestContent, entries: Sequence[ManifestEntry],
                        snapshot_id: int) -> ManifestFile:
        seq = self._data_sequence_number
        if seq is not None and base.format_version >= 2 and content == ManifestContent.DATA:
            # the files this snapshot adds carry the starting sequence number explicitly
            # (written and merged manifests alike; spec: Sequence Number Inheritance)
            entries = [replace(e, sequence_number=seq)
                       if e.status == EntryStatus.ADDED and e.sequence_number is None else e
                       for e in entries]
        return super()._write_manifest(base, spec, content, entries, snapshot_id)

    def _validate(self, base: TableMetadata, parent: Snapshot | None,
                  removed_data: Sequence[DataFile]) -> None:
        if parent is None or not removed_data:
            return
        paths = {f.file_path for f in removed_data}
        parts = {(f.spec_id, f.partition) for f in removed_data}
        skip_equality = self._data_sequence_number is not None
        for snap, d in self._new_entries(base, parent, NEW_DELETE_OPS,
                                         ManifestContent.DELETES, EntryStatus.ADDED):
            if d.content == FileContent.EQUALITY_DELETES:
                spec = base.spec_by_id(d.spec_id)
                applies = not skip_equality and (
                    (d.spec_id, d.partition) in parts
                    or (spec is not None and spec.is_unpartitioned))
            else:
                target = d.referenced_file
                applies = (target in paths if target is not None
                           else (d.spec_id, d.partition) in parts)
            if applies:
                raise CommitConflict(
                    f"a delete file added concurrently (snapshot {snap.snapshot_id}) applies "
                    "to a rewritten data file: its rows would come back", file=d.file_path,
                    field="validate_no_new_deletes_for_data_files",
                    value=d.referenced_file or d.partition)
