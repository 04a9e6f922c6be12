"""The base of the v1-v3 snapshot producers that remove files and merge manifests (Iceberg Java
1.10's ``MergingSnapshotProducer``); the operations are :mod:`.append` (merge append),
:mod:`.overwrite` (delete, overwrite, dynamic partition overwrite) and :mod:`.row_delta`, their
conflict checks :mod:`.validation`.

Spec sections: "Manifests" (entry status; EXISTING and DELETED entries carry explicit sequence
numbers), "Sequence Numbers", "Row Lineage" (first row ids of existing files kept), "Scan
Planning" (which delete files apply to which data files), "Commit Conflict Resolution and
Retry" and Appendix F (summary fields). What every producer here does, as Java does:

* new data files go into one new manifest per partition spec, new delete files into one new
  delete manifest per spec; both are listed first;
* the parent's manifests are *filtered*: a manifest holding a file to remove is rewritten with
  that entry DELETED (this snapshot's id, sequence numbers kept) and the others EXISTING
  (their snapshot ids and sequence numbers kept, DELETED entries of older snapshots dropped);
  untouched manifests are reused as they are;
* delete files no data file can need any more are dropped: those with a data sequence number
  below every remaining data file's (Java's ``dropDeleteFilesOlderThan``) and, in v3, deletion
  vectors of removed data files;
* data and delete manifests are then merged per ``commit.manifest-merge.enabled``,
  ``commit.manifest.min-count-to-merge`` and ``commit.manifest.target-size-bytes`` (bin
  packing from the end, the new manifest's bin merged only when it reaches the minimum
  count: Java's ``ManifestMergeManager``);
* validations (conflict detection) run on every attempt against the snapshots committed since
  the starting snapshot and raise ``CommitConflict`` (not retried); a plain pointer conflict
  is retried by re-applying on the new state.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icenb.catalog import Catalog, Identifier, LoadedTable
from icenb.errors import CommitConflict, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.spec.expressions import AlwaysTrue, Expression, or_
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import (
    MANIFEST_MERGE_ENABLED,
    MANIFEST_MIN_MERGE_COUNT,
    MANIFEST_TARGET_SIZE_BYTES,
    bool_property,
    int_property,
)
from icenb.spec.snapshot import (
    ADDED_DATA_FILES,
    ADDED_DELETE_FILES,
    ADDED_DVS,
    ADDED_EQ_DELETE_FILES,
    ADDED_EQ_DELETES,
    ADDED_FILE_SIZE,
    ADDED_POS_DELETE_FILES,
    ADDED_POS_DELETES,
    ADDED_RECORDS,
    CHANGED_PARTITION_COUNT,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
    MAIN_BRANCH,
    REMOVED_DELETE_FILES,
    REMOVED_DVS,
    REMOVED_EQ_DELETE_FILES,
    REMOVED_EQ_DELETES,
    REMOVED_FILE_SIZE,
    REMOVED_POS_DELETE_FILES,
    REMOVED_POS_DELETES,
    TOTAL_DATA_FILES,
    TOTAL_DELETE_FILES,
    TOTAL_EQ_DELETES,
    TOTAL_FILE_SIZE,
    TOTAL_POS_DELETES,
    TOTAL_RECORDS,
    Snapshot,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.producer import (
    SnapshotProducer,
    add_totals,
)
from icenb.table.commit.validation import (
    ADDED_DATA_OPS,
    DELETED_DATA_OPS,
    NEW_DELETE_OPS,
    FileFilter,
    as_expression,
)
from icenb.table.scan.planning import content_files_of

__all__ = [
    "MergingSnapshotProducer",
    "SummaryCounts",
    "content_size",
    "merge_enabled",
    "pack_end",
    "read_entries",
]

# Table properties (names and defaults of Java's TableProperties).
_DEFAULT_MIN_MERGE_COUNT = 100
_DEFAULT_TARGET_SIZE = 8 * 1024 * 1024

# Summary keys (Java's SnapshotSummary).


def merge_enabled(properties: Mapping[str, str]) -> bool:
    """``commit.manifest-merge.enabled`` (default true)."""
    return bool_property(properties, MANIFEST_MERGE_ENABLED, True, strict=True)


# --------------------------------------------------------------------------- reading entries


def read_entries(io: FileIO, manifest: ManifestFile, metadata: TableMetadata
                 ) -> list[ManifestEntry]:
    """A manifest's entries as objects, inherited values (snapshot ids, sequence numbers,
    first row ids) made explicit (spec: Sequence Number Inheritance, First Row ID
    Inheritance)."""
    table = read_manifest_entries(io, [manifest], metadata.format_version)
    if table.num_rows == 0:
        return []
    files = content_files_of(table, metadata.specs_by_id, metadata.schema)
    statuses = table.column("status").to_pylist()
    snapshot_ids = table.column("snapshot_id").to_pylist()
    seqs = table.column("sequence_number").to_pylist()
    file_seqs = table.column("file_sequence_number").to_pylist()
    return [ManifestEntry(EntryStatus(st), sid, seq, fseq, f)
            for st, sid, seq, fseq, f in zip(statuses, snapshot_ids, seqs, file_seqs, files,
                                              strict=True)]


# --------------------------------------------------------------------------- summary


@dataclass
class SummaryCounts:
    """What a commit added and removed, for the summary (Java's SnapshotSummary.Builder)."""

    added_size: int = 0
    removed_size: int = 0
    added_files: int = 0
    removed_files: int = 0
    added_eq_files: int = 0
    removed_eq_files: int = 0
    added_pos_files: int = 0
    removed_pos_files: int = 0
    added_dvs: int = 0
    removed_dvs: int = 0
    added_delete_files: int = 0
    removed_delete_files: int = 0
    added_records: int = 0
    deleted_records: int = 0
    added_pos_deletes: int = 0
    removed_pos_deletes: int = 0
    added_eq_deletes: int = 0
    removed_eq_deletes: int = 0

    def add(self, f: DataFile, added: bool) -> None:
        sign = "added" if added else "removed"
        size = content_size(f)
        if added:
            self.added_size += size
        else:
            self.removed_size += size
        if f.content == FileContent.DATA:
            if added:
                self.added_files += 1
                self.added_records += f.record_count
            else:
                self.removed_files += 1
                self.deleted_records += f.record_count
            return
        setattr(self, f"{sign}_delete_files", getattr(self, f"{sign}_delete_files") + 1)
        if f.content == FileContent.POSITION_DELETES:
            kind = "dvs" if f.is_deletion_vector else "pos_files"
            setattr(self, f"{sign}_{kind}", getattr(self, f"{sign}_{kind}") + 1)
            setattr(self, f"{sign}_pos_deletes",
                    getattr(self, f"{sign}_pos_deletes") + f.record_count)
        else:
            setattr(self, f"{sign}_eq_files", getattr(self, f"{sign}_eq_files") + 1)
            setattr(self, f"{sign}_eq_deletes",
                    getattr(self, f"{sign}_eq_deletes") + f.record_count)

    def properties(self) -> dict[str, str]:
        pairs = (  # Java's SnapshotSummary order
            (ADDED_DATA_FILES, self.added_files), (DELETED_DATA_FILES, self.removed_files),
            (ADDED_EQ_DELETE_FILES, self.added_eq_files),
            (REMOVED_EQ_DELETE_FILES, self.removed_eq_files),
            (ADDED_POS_DELETE_FILES, self.added_pos_files),
            (REMOVED_POS_DELETE_FILES, self.removed_pos_files),
            (ADDED_DVS, self.added_dvs), (REMOVED_DVS, self.removed_dvs),
            (ADDED_DELETE_FILES, self.added_delete_files),
            (REMOVED_DELETE_FILES, self.removed_delete_files),
            (ADDED_RECORDS, self.added_records), (DELETED_RECORDS, self.deleted_records),
            (ADDED_FILE_SIZE, self.added_size), (REMOVED_FILE_SIZE, self.removed_size),
            (ADDED_POS_DELETES, self.added_pos_deletes),
            (REMOVED_POS_DELETES, self.removed_pos_deletes),
            (ADDED_EQ_DELETES, self.added_eq_deletes),
            (REMOVED_EQ_DELETES, self.removed_eq_deletes),
        )
        return {k: str(v) for k, v in pairs if v > 0}

    def totals(self) -> dict[str, int]:
        return {
            TOTAL_RECORDS: self.added_records - self.deleted_records,
            TOTAL_FILE_SIZE: self.added_size - self.removed_size,
            TOTAL_DATA_FILES: self.added_files - self.removed_files,
            TOTAL_DELETE_FILES: self.added_delete_files - self.removed_delete_files,
            TOTAL_POS_DELETES: self.added_pos_deletes - self.removed_pos_deletes,
            TOTAL_EQ_DELETES: self.added_eq_deletes - self.removed_eq_deletes,
        }


# --------------------------------------------------------------------------- bin packing


def content_size(f: DataFile) -> int:
    """A content file's bytes as Java's ``ContentFileUtil.contentSizeInBytes`` (snapshot
    summaries, maintenance results): a DV's blob, not the Puffin file it shares with other
    DVs; else the file's size."""
    if f.is_deletion_vector and f.content_size_in_bytes is not None:
        return f.content_size_in_bytes
    return f.file_size_in_bytes


def pack_end(weights: Sequence[int], target: int) -> list[list[int]]:
    """Indices of ``weights`` in bins of at most ``target`` (a heavier item alone), packed
    greedily from the end with a lookback of one, so the first bin is the under-filled one
    (Java's ``ListPacker.packEnd`` as ``ManifestMergeManager`` uses it)."""
    bins: list[list[int]] = []
    current: list[int] = []
    weight = 0
    for i in reversed(range(len(weights))):
        w = weights[i]
        if current and weight + w > target:
            bins.append(current)
            current, weight = [], 0
        current.append(i)
        weight += w
    if current:
        bins.append(current)
    return [list(reversed(b)) for b in reversed(bins)]


# --------------------------------------------------------------------------- the producer


class MergingSnapshotProducer(SnapshotProducer):
    """Adds data and delete files, removes files (by object, path, row filter or partition),
    filters and merges manifests, validates against concurrent commits (see the module
    docstring)."""

    _isolation_operation = "delete"

    def __init__(self, catalog: Catalog, identifier: Identifier, io: FileIO, *,
                 branch: str = MAIN_BRANCH,
                 snapshot_properties: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] | None = None,
                 commit_uuid: str | None = None) -> None:
        super().__init__(catalog, identifier, io, branch=branch,
                         snapshot_properties=snapshot_properties, sleep=sleep,
                         commit_uuid=commit_uuid)
        self._added_data: list[DataFile] = []
        self._added_deletes: list[DataFile] = []
        self._remove_paths: set[str] = set()  # data or delete files to remove, by path
        # A Puffin file holds many DVs: those removed as DataFiles are matched by offset too.
        self._remove_whole: set[str] = set()
        self._remove_dv_offsets: dict[str, set[int | None]] = {}
        self._row_filter: Expression | None = None
        self._drop_partitions: set[tuple[int, tuple[Any, ...]]] = set()
        self._case_sensitive = True
        # validation settings
        self._starting_snapshot_id: int | None = None
        self._conflict_filter: Expression | None = None
        self._validate_data = False
        self._validate_deletes = False
        self._fail_missing_paths = True
        self._referenced_data_files: set[str] = set()
        # per snapshot id: new manifests and rewritten / merged ones (reused across retries)
        self._new_manifests: dict[tuple[int, str], list[ManifestFile]] = {}
        self._rewritten: dict[tuple[Any, ...], tuple[ManifestFile, list[DataFile]]] = {}
        self._merged: dict[tuple[Any, ...], ManifestFile] = {}
        self._removed: list[DataFile] = []
        self._used: set[str] = set()
        self._first_base: TableMetadata | None = None
        self._writes = 0

    # ------------------------------------------------------------------ building

    def track_written(self, paths: Iterable[str]) -> None:
        """Files the operation wrote elsewhere (e.g. by Spark tasks): deleted if the commit
        finally fails or is aborted."""
        for p in paths:
            if not isinstance(p, str):
                raise ValidationError("paths must be strings", field="paths", value=p)
            self._written.append(p)

    def _add_data(self, files: Iterable[DataFile]) -> None:
        for f in files:
            if not isinstance(f, DataFile) or f.content != FileContent.DATA:
                raise ValidationError("expected data files", field="content",
                                      file=getattr(f, "file_path", None),
                                      value=getattr(f, "content", type(f).__name__))
            self._added_data.append(f)

    def _add_delete_files(self, files: Iterable[DataFile]) -> None:
        for f in files:
            if not isinstance(f, DataFile) or f.content == FileContent.DATA:
                raise ValidationError("expected delete files (position, equality or DV)",
                                      field="content", file=getattr(f, "file_path", None),
                                      value=getattr(f, "content", type(f).__name__))
            if f.content == FileContent.EQUALITY_DELETES and not f.equality_ids:
                raise ValidationError("an equality delete file needs equality_ids",
                                      field="equality_ids", file=f.file_path)
            if f.is_deletion_vector and (f.referenced_data_file is None or f.content_offset is None
                              or f.content_size_in_bytes is None):
                raise ValidationError("a deletion vector needs referenced_data_file, "
                                      "content_offset and content_size_in_bytes",
                                      field="referenced_data_file", file=f.file_path)
            self._added_deletes.append(f)

    def _remove(self, file_or_path: DataFile | str) -> None:
        path = file_or_path.file_path if isinstance(file_or_path, DataFile) else file_or_path
        if not isinstance(path, str) or not path:
            raise ValidationError("expected a DataFile or a file path", field="file",
                                  value=file_or_path)
        self._remove_paths.add(path)
        if isinstance(file_or_path, DataFile) and file_or_path.is_deletion_vector:
            self._remove_dv_offsets.setdefault(path, set()).add(file_or_path.content_offset)
        else:
            self._remove_whole.add(path)

    def _delete_rows_matching(self, expr: str | Expression) -> None:
        e = as_expression(expr, "filter")
        if self._row_filter is None:
            self._row_filter = e
        else:
            self._row_filter = or_(self._row_filter, e)

    def case_sensitive(self, value: bool) -> MergingSnapshotProducer:
        self._case_sensitive = bool(value)
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> MergingSnapshotProducer:
        """Validate against the snapshots committed after ``snapshot_id`` (None: the whole
        history, as Java)."""
        self._starting_snapshot_id = snapshot_id
        return self

    def conflict_detection_filter(self, expr: str | Expression) -> MergingSnapshotProducer:
        """Only concurrent changes that may touch rows matching ``expr`` conflict."""
        self._conflict_filter = as_expression(expr, "conflict_detection_filter")
        return self

    def write_data(self, data: Any, metadata: TableMetadata, *,
                   moved: bool = False) -> list[DataFile]:
        """Write ``data`` (anything ``Table.append`` takes) as data files of the table and add
        them; nothing is written when validation fails. ``moved``: existing rows a rewrite
        moves, carrying their row lineage (v3+)."""
        # file names count from 1 per operation id: a later write needs its own id
        files = self._write_rows(data, metadata,
                                 self._commit_uuid if not self._writes else str(uuid.uuid4()),
                                 moved=moved)
        self._writes += 1
        self._added_data.extend(files)
        return files

    @property
    def added_data_files(self) -> tuple[DataFile, ...]:
        return tuple(self._added_data)

    @property
    def added_delete_files(self) -> tuple[DataFile, ...]:
        return tuple(self._added_deletes)

    @property
    def removed_files(self) -> tuple[DataFile, ...]:
        """The files the last attempt removed (data and delete files)."""
        return tuple(self._removed)

    # ------------------------------------------------------------------ validation

    def _history(self, base: TableMetadata, parent: Snapshot | None) -> list[Snapshot]:
        """Snapshots after the starting snapshot up to ``parent``, newest first."""
        out: list[Snapshot] = []
        snap = parent
        while snap is not None and snap.snapshot_id != self._starting_snapshot_id:
            out.append(snap)
            snap = (None if snap.parent_snapshot_id is None
                    else base.snapshot_by_id(snap.parent_snapshot_id))
        if self._starting_snapshot_id is not None and snap is None:
            raise CommitConflict("cannot determine history between the starting snapshot and "
                                 "the current one: the starting snapshot is not an ancestor",
                                 field="validate_from_snapshot",
                                 value=self._starting_snapshot_id)
        return out

    def _new_entries(self, base: TableMetadata, parent: Snapshot | None, ops: frozenset[str],
                     content: ManifestContent, status: EntryStatus
                     ) -> Iterable[tuple[Snapshot, DataFile]]:
        """Files that snapshots since the starting one added (or deleted) in their own
        manifests, for snapshots of the given operations."""
        for snap in self._history(base, parent):
            if snap.summary is None or str(snap.summary.operation) not in ops:
                continue
            for m in read_manifest_list(self._io, snap, base.format_version):
                if m.added_snapshot_id != snap.snapshot_id or m.content != content:
                    continue
                for e in read_entries(self._io, m, base):
                    if e.status == status and e.snapshot_id == snap.snapshot_id:
                        yield snap, e.data_file

    def _filter(self, base: TableMetadata, expr: Expression | None) -> FileFilter:
        return FileFilter(AlwaysTrue() if expr is None else expr, base.schema,
                           base.specs_by_id, self._case_sensitive)

    def _conflict_if_matching(self, base: TableMetadata, parent: Snapshot | None,
                              expr: Expression | None, ops: frozenset[str],
                              content: ManifestContent, status: EntryStatus, what: str,
                              field: str) -> None:
        """``CommitConflict`` when a file of :meth:`_new_entries` may hold rows matching
        ``expr`` (None: any); ``what`` words the message (``{expr}`` and ``{snapshot}``)."""
        flt = self._filter(base, expr)
        for snap, f in self._new_entries(base, parent, ops, content, status):
            if flt.might_match(f):
                raise CommitConflict(what.format(expr=flt.expr, snapshot=snap.snapshot_id),
                                     file=f.file_path, field=field, value=str(flt.expr))

    def _validate_added_data_files(self, base: TableMetadata, parent: Snapshot | None,
                                   expr: Expression | None) -> None:
        self._conflict_if_matching(
            base, parent, expr, ADDED_DATA_OPS, ManifestContent.DATA, EntryStatus.ADDED,
            "found conflicting files that can contain records matching {expr}: added by "
            "snapshot {snapshot}", "validate_no_conflicting_data")

    def _validate_deleted_data_files(self, base: TableMetadata, parent: Snapshot | None,
                                     expr: Expression | None) -> None:
        self._conflict_if_matching(
            base, parent, expr, DELETED_DATA_OPS, ManifestContent.DATA, EntryStatus.DELETED,
            "found conflicting deleted files that can contain records matching {expr}: "
            "deleted by snapshot {snapshot}", "validate_no_conflicting_deletes")

    def _validate_no_new_delete_files(self, base: TableMetadata, parent: Snapshot | None,
                                      expr: Expression | None) -> None:
        self._conflict_if_matching(
            base, parent, expr, NEW_DELETE_OPS, ManifestContent.DELETES, EntryStatus.ADDED,
            "found new conflicting delete files that can apply to records matching {expr}: "
            "added by snapshot {snapshot}", "validate_no_conflicting_deletes")

    def _validate_no_new_deletes_for(self, base: TableMetadata, parent: Snapshot | None,
                                     data_files: Sequence[DataFile]) -> None:
        """No delete file added since the start may apply to a data file being removed
        (spec: Scan Planning rules; newer deletes always have a higher sequence number)."""
        if not data_files:
            return
        paths = {f.file_path for f in data_files}
        parts = {(f.spec_id, f.partition) for f in data_files}
        for snap, d in self._new_entries(base, parent, NEW_DELETE_OPS,
                                         ManifestContent.DELETES, EntryStatus.ADDED):
            spec = base.spec_by_id(d.spec_id)
            applies = (d.referenced_data_file in paths if d.referenced_data_file is not None
                       else (d.spec_id, d.partition) in parts
                       or (d.content == FileContent.EQUALITY_DELETES and spec is not None
                           and spec.is_unpartitioned))
            if applies:
                raise CommitConflict(
                    f"found a new delete file for a replaced data file (snapshot "
                    f"{snap.snapshot_id})", file=d.file_path,
                    field="validate_no_conflicting_deletes", value=d.referenced_data_file)

    def _validate_added_dvs(self, base: TableMetadata, parent: Snapshot | None) -> None:
        """No DV added concurrently for a data file this commit adds a DV for (v3)."""
        referenced = {f.referenced_data_file for f in self._added_deletes if f.is_deletion_vector}
        if not referenced:
            return
        saved = self._starting_snapshot_id
        if saved is None and self._first_base is not None:
            # no starting snapshot: concurrent means since this operation's first base
            first = self._parent(self._first_base)
            self._starting_snapshot_id = None if first is None else first.snapshot_id
        try:
            found = [(snap, d) for snap, d in self._new_entries(
                base, parent, NEW_DELETE_OPS, ManifestContent.DELETES, EntryStatus.ADDED)
                if d.is_deletion_vector and d.referenced_data_file in referenced
                and d.file_path not in self._remove_paths]
        finally:
            self._starting_snapshot_id = saved
        for snap, d in found:
            raise CommitConflict(
                f"found a concurrently added deletion vector (snapshot "
                f"{snap.snapshot_id})", file=d.file_path, field="referenced_data_file",
                value=d.referenced_data_file)

    def validate_no_conflicting_data(self) -> MergingSnapshotProducer:
        """Serializable: fail when a concurrent commit added data the filter may match."""
        self._validate_data = True
        return self

    def validate_no_conflicting_deletes(self) -> MergingSnapshotProducer:
        """Fail when a concurrent commit deleted matching data or added deletes for it."""
        self._validate_deletes = True
        return self

    def _validate(self, base: TableMetadata, parent: Snapshot | None,
                  removed_data: Sequence[DataFile]) -> None:
        """Conflict detection (Java's ``BaseOverwriteFiles.validate``; subclasses refine)."""
        if parent is None:
            return
        row_filter = self._row_filter
        if self._validate_data:
            expr = (self._conflict_filter if self._conflict_filter is not None else
                    row_filter if row_filter is not None and not self._remove_paths else None)
            self._validate_added_data_files(base, parent, expr)
        if self._validate_deletes:
            if row_filter is not None:
                expr = self._conflict_filter if self._conflict_filter is not None else row_filter
                self._validate_no_new_delete_files(base, parent, expr)
                self._validate_deleted_data_files(base, parent, expr)
            if removed_data:
                self._validate_no_new_deletes_for(
                    base, parent, [f for f in removed_data if f.file_path in self._remove_paths]
                    or list(removed_data))

    # ------------------------------------------------------------------ manifests

    def _spec(self, base: TableMetadata, spec_id: int) -> PartitionSpec:
        spec = base.spec_by_id(spec_id)
        if spec is None:
            raise ValidationError("the file's partition spec is not in the table",
                                  field="spec_id", value=spec_id)
        return spec

    def _write_new(self, base: TableMetadata, snapshot_id: int, files: Sequence[DataFile],
                   content: ManifestContent) -> list[ManifestFile]:
        key = (snapshot_id, content.name)
        cached = self._new_manifests.get(key)
        if cached is not None:
            return cached
        by_spec: dict[int, list[DataFile]] = {}
        for f in files:
            by_spec.setdefault(f.spec_id, []).append(f)
        out: list[ManifestFile] = []
        for spec_id in sorted(by_spec, reverse=True):
            entries = [ManifestEntry(EntryStatus.ADDED, snapshot_id, None, None, f)
                       for f in by_spec[spec_id]]
            out.append(self._write_manifest(base, self._spec(base, spec_id), content, entries,
                                            snapshot_id))
        self._new_manifests[key] = out
        return out

    def _should_remove(self, f: DataFile, flt: FileFilter | None, seq: int | None,
                       min_data_seq: int | None, removed_paths: set[str]) -> bool:
        is_delete = f.content != FileContent.DATA
        if f.file_path in self._remove_paths and (
                f.file_path in self._remove_whole or not f.is_deletion_vector
                or f.content_offset in self._remove_dv_offsets.get(f.file_path, ())):
            return True
        if (f.spec_id, f.partition) in self._drop_partitions:
            return True
        if is_delete:
            if (min_data_seq is not None and seq is not None and 0 < seq < min_data_seq):
                return True
            if f.is_deletion_vector and f.referenced_data_file in removed_paths:
                return True
        if flt is not None and flt.might_match(f):
            if flt.must_match(f):
                return True
            if not is_delete:
                raise ValidationError(
                    f"cannot delete file where some, but not all, rows match filter "
                    f"{flt.expr}", file=f.file_path, field="filter", value=str(flt.expr))
        return False

    def _filter_manifest(self, base: TableMetadata, m: ManifestFile, snapshot_id: int,
                         flt: FileFilter | None, min_data_seq: int | None,
                         removed_paths: set[str]) -> tuple[ManifestFile, list[DataFile]]:
        """The manifest, rewritten when it holds files to remove; the removed files."""
        if not (m.has_added_files() or m.has_existing_files()):
            return m, []
        key = (m.manifest_path, snapshot_id, min_data_seq, frozenset(removed_paths)
               if m.content == ManifestContent.DELETES else None)
        cached = self._rewritten.get(key)
        if cached is not None:
            return cached
        entries = read_entries(self._io, m, base)
        removed: list[DataFile] = []
        keep: list[ManifestEntry] = []
        for e in entries:
            if e.status == EntryStatus.DELETED:
                keep.append(e)
                continue
            if self._should_remove(e.data_file, flt, e.sequence_number, min_data_seq,
                                   removed_paths):
                removed.append(e.data_file)
                keep.append(ManifestEntry(EntryStatus.DELETED, snapshot_id, e.sequence_number,
                                          e.file_sequence_number, e.data_file))
            else:
                keep.append(e)
        if not removed:
            result = (m, removed)
        else:
            out = [ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number,
                                 e.file_sequence_number, e.data_file)
                   if e.status != EntryStatus.DELETED else e
                   for e in keep
                   if e.status != EntryStatus.DELETED or e.snapshot_id == snapshot_id]
            written = self._write_manifest(base, self._spec(base, m.partition_spec_id),
                                           m.content, out, snapshot_id)
            result = (written, removed)
        self._rewritten[key] = result
        return result

    def _merge(self, base: TableMetadata, manifests: list[ManifestFile], snapshot_id: int,
               content: ManifestContent) -> list[ManifestFile]:
        """Java's ``ManifestMergeManager.mergeManifests``: per spec (highest id first), pack
        from the end; a bin with the first manifest merges only at the minimum count."""
        props = base.properties
        if not manifests or not merge_enabled(props):
            return manifests
        min_count = int_property(props, MANIFEST_MIN_MERGE_COUNT, _DEFAULT_MIN_MERGE_COUNT,
                                 minimum=0)
        target = int_property(props, MANIFEST_TARGET_SIZE_BYTES, _DEFAULT_TARGET_SIZE,
                              minimum=0)
        first = manifests[0]
        groups: dict[int, list[ManifestFile]] = {}
        for m in manifests:
            groups.setdefault(m.partition_spec_id, []).append(m)
        out: list[ManifestFile] = []
        for spec_id in sorted(groups, reverse=True):
            group = groups[spec_id]
            for idx in pack_end([m.manifest_length for m in group], target):
                bin_ = [group[i] for i in idx]
                if len(bin_) == 1 or (first in bin_ and len(bin_) < min_count):
                    out.extend(bin_)
                else:
                    out.append(self._merged_manifest(base, bin_, snapshot_id, content))
        return out

    def _merged_manifest(self, base: TableMetadata, bin_: list[ManifestFile],
                         snapshot_id: int, content: ManifestContent) -> ManifestFile:
        key = (tuple(m.manifest_path for m in bin_), snapshot_id)
        cached = self._merged.get(key)
        if cached is not None:
            return cached
        entries: list[ManifestEntry] = []
        for m in bin_:
            for e in read_entries(self._io, m, base):
                if e.status == EntryStatus.DELETED:
                    if e.snapshot_id == snapshot_id:  # deletes of older snapshots dropped
                        entries.append(e)
                elif e.status == EntryStatus.ADDED and e.snapshot_id == snapshot_id:
                    entries.append(ManifestEntry(EntryStatus.ADDED, snapshot_id, None, None,
                                                 e.data_file))
                else:
                    entries.append(ManifestEntry(EntryStatus.EXISTING, e.snapshot_id,
                                                 e.sequence_number, e.file_sequence_number,
                                                 e.data_file))
        merged = self._write_manifest(base, self._spec(base, bin_[0].partition_spec_id),
                                      content, entries, snapshot_id)
        self._merged[key] = merged
        return merged

    def _manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        assert self._snapshot_id is not None
        snapshot_id = self._snapshot_id
        if self._first_base is None:
            self._first_base = base
        if self._added_deletes and base.format_version < 2:
            raise ValidationError("delete files need format version 2 or later",
                                  field="format_version", value=base.format_version)
        if base.format_version < 3 and any(f.is_deletion_vector for f in self._added_deletes):
            raise ValidationError("deletion vectors need format version 3",
                                  field="format_version", value=base.format_version)
        existing = [] if parent is None else read_manifest_list(self._io, parent,
                                                                base.format_version)
        flt = None if self._row_filter is None else self._filter(base, self._row_filter)
        # data manifests first: their removals decide which delete files are dangling
        removed: list[DataFile] = []
        data_out: list[ManifestFile] = []
        for m in existing:
            if m.content != ManifestContent.DATA:
                continue
            if self._needs_filtering():
                m, gone = self._filter_manifest(base, m, snapshot_id, flt, None, set())
                removed.extend(gone)
            data_out.append(m)
        removed_paths = {f.file_path for f in removed}
        seqs = [m.min_sequence_number for m in data_out if m.min_sequence_number >= 0]
        min_data_seq: int | None = (min([base.last_sequence_number, *seqs])
                                    if base.format_version >= 2 else None)
        added_seq = self._added_data_sequence_number()
        if min_data_seq is not None and added_seq is not None and self._added_data:
            # files added with an older sequence number (a compaction's starting one) still
            # need the delete files committed since: they are not dangling
            min_data_seq = min(min_data_seq, added_seq)
        dv_paths = removed_paths if base.format_version >= 3 else set()
        deletes_out: list[ManifestFile] = []
        removed_deletes: list[DataFile] = []
        for m in existing:
            if m.content != ManifestContent.DELETES:
                continue
            if self._needs_filtering() or (min_data_seq is not None
                                           and m.min_sequence_number < min_data_seq) or dv_paths:
                m, gone = self._filter_manifest(base, m, snapshot_id, flt, min_data_seq,
                                                dv_paths)
                removed_deletes.extend(gone)
            deletes_out.append(m)
        self._check_removals(parent, removed_paths | {f.file_path for f in removed_deletes})
        self._validate(base, parent, removed)
        self._removed = removed + removed_deletes
        new_data = self._write_new(base, snapshot_id, self._added_data, ManifestContent.DATA)
        new_deletes = self._write_new(base, snapshot_id, self._added_deletes,
                                      ManifestContent.DELETES)
        manifests = (self._merge(base, new_data + data_out, snapshot_id, ManifestContent.DATA)
                     + self._merge(base, new_deletes + deletes_out, snapshot_id,
                                   ManifestContent.DELETES))
        self._used = {m.manifest_path for m in manifests}
        return manifests

    def _added_data_sequence_number(self) -> int | None:
        """The data sequence number the added data files are written with, when not the new
        snapshot's (None: inherited)."""
        return None

    def _needs_filtering(self) -> bool:
        return bool(self._remove_paths or self._row_filter is not None or self._drop_partitions)

    def _check_removals(self, parent: Snapshot | None, removed_paths: set[str]) -> None:
        """Files asked to be removed by path must be live: missing at the first attempt is a
        ``ValidationError``; gone after a concurrent commit a ``CommitConflict`` (spec: Commit
        Conflict Resolution and Retry: a commit that replaces files checks they are still
        there)."""
        if not self._fail_missing_paths:
            return
        missing = sorted(self._remove_paths - removed_paths)
        if not missing:
            return
        start = None if self._first_base is None else self._parent(self._first_base)
        start_id = (self._starting_snapshot_id if self._starting_snapshot_id is not None
                    else None if start is None else start.snapshot_id)
        if parent is not None and parent.snapshot_id != start_id:
            raise CommitConflict("files to remove are no longer in the table (a concurrent "
                                 "commit removed them)", file=missing[0],
                                 field="delete_file", value=len(missing))
        raise ValidationError("files to remove are not in the table", file=missing[0],
                              field="delete_file", value=len(missing))

    # ------------------------------------------------------------------ summary

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        counts = SummaryCounts()
        partitions: set[tuple[int, tuple[Any, ...]]] = set()
        for f in [*self._added_data, *self._added_deletes]:
            counts.add(f, True)
            partitions.add((f.spec_id, f.partition))
        for f in self._removed:
            counts.add(f, False)
            partitions.add((f.spec_id, f.partition))
        out = {**self._extra_summary(), **counts.properties()}
        out[CHANGED_PARTITION_COUNT] = str(len(partitions))
        add_totals(out, parent, counts.totals())
        return out

    def _extra_summary(self) -> dict[str, str]:
        return {}

    # ------------------------------------------------------------------ commit

    def commit(self, base: LoadedTable) -> LoadedTable:
        """Commit (see :meth:`SnapshotProducer.commit`); manifests written by attempts that
        lost are deleted after success."""
        committed = super().commit(base)
        self._delete([p for p in self._manifests_written if p not in self._used])
        return committed
