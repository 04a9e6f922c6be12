"""EXPERIMENTAL format-version 4: what concurrent commits changed, for conflict validation.

Spec, "Commit Conflict Resolution and Retry": a writer that retries *"must ... check that the
assumptions of the operation still hold"*. v3 reads the manifests each snapshot since the
operation's start added (:class:`~icenb.table.commit.merging.MergingSnapshotProducer`); on v4
a snapshot's changes are in its root manifest (proposal, "Commit Procedure"): file entries with
status ADDED / DELETED, ADDED leaf manifests (their ADDED entries), and new manifest DVs whose
ordinals (minus those of the DV they replace in the same root) remove leaf entries
(docs/v4-layout.md#removals). Compacted leaves (EXISTING, docs/v4-layout.md#compaction) change
nothing and are skipped.

:func:`snapshots_since` walks the parent chain; :func:`snapshot_changes` reads one snapshot;
:func:`added_files_since` / :func:`removed_files_since` give v3 :class:`DataFile` objects (via
:func:`~icenb.table.scan.v4_planning.manifest_entry_of`) with the snapshot that changed them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from icenb.errors import CommitConflict, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_list
from icenb.io.root_manifest import load_manifest_dv, read_leaf_manifest, read_root_manifest
from icenb.reprs import safe_repr
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.expressions import AlwaysTrue, Expression
from icenb.spec.manifest import DataFile, EntryStatus, FileContent
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import read_entries
from icenb.table.commit.v4_upgrade import legacy_leaf_reader
from icenb.table.commit.validation import (
    ADDED_DATA_OPS,
    DELETED_DATA_OPS,
    NEW_DELETE_OPS,
    FileFilter,
    as_expression,
)
from icenb.table.scan.v4_planning import manifest_entry_of

__all__ = [
    "SnapshotChanges",
    "V4Validation",
    "added_files_since",
    "removed_files_since",
    "snapshot_changes",
    "snapshots_since",
]


@safe_repr
@dataclass(frozen=True)
class SnapshotChanges:
    """The content files one snapshot added and removed (data and delete files, in root
    order), as v3 data files."""

    snapshot: Snapshot
    added: tuple[DataFile, ...]
    removed: tuple[DataFile, ...]


def snapshots_since(metadata: TableMetadata, parent: Snapshot | None,
                    start_id: int | None) -> list[Snapshot]:
    """The snapshots from ``parent`` back to (not including) ``start_id``, newest first (None:
    the whole history, as Java); ``CommitConflict`` when ``start_id`` is not an ancestor."""
    out: list[Snapshot] = []
    snap = parent
    while snap is not None and snap.snapshot_id != start_id:
        out.append(snap)
        snap = (None if snap.parent_snapshot_id is None
                else metadata.snapshot_by_id(snap.parent_snapshot_id))
    if start_id is not None and snap is None:
        raise CommitConflict("cannot determine history between the starting snapshot and the "
                             "current one: the starting snapshot is not an ancestor",
                             field="validate_from_snapshot", value=start_id)
    return out


def _file(metadata: TableMetadata, e: ContentEntry) -> DataFile:
    spec = metadata.spec_by_id(e.partition_spec_id)
    assert spec is not None, e.partition_spec_id
    return manifest_entry_of(e, spec.partition_type(metadata.schema)).data_file


def _by(e: ContentEntry, snapshot: Snapshot) -> bool:
    return e.version_info.snapshot_id == snapshot.snapshot_id


def _legacy_changes(io: FileIO, metadata: TableMetadata, snapshot: Snapshot) -> SnapshotChanges:
    """A snapshot with a manifest list (before an upgrade, docs/v4-layout.md#upgrade): its own
    manifests' ADDED and
    DELETED entries, as v3 reads them."""
    added: list[DataFile] = []
    removed: list[DataFile] = []
    for m in read_manifest_list(io, snapshot, metadata.format_version):
        if m.added_snapshot_id != snapshot.snapshot_id:
            continue
        for e in read_entries(io, m, metadata):
            if e.snapshot_id != snapshot.snapshot_id:
                continue
            if e.status == EntryStatus.ADDED:
                added.append(e.data_file)
            elif e.status == EntryStatus.DELETED:
                removed.append(e.data_file)
    return SnapshotChanges(snapshot, tuple(added), tuple(removed))


def snapshot_changes(io: FileIO, metadata: TableMetadata, snapshot: Snapshot
                     ) -> SnapshotChanges:
    """What ``snapshot`` itself changed (see the module docstring)."""
    if snapshot.root_manifest is None:
        return _legacy_changes(io, metadata, snapshot)
    root = read_root_manifest(io, snapshot.root_manifest, snapshot_id=snapshot.snapshot_id,
                              sequence_number=snapshot.sequence_number)
    legacy = legacy_leaf_reader(io, metadata)
    added: list[DataFile] = []
    removed: list[DataFile] = []
    leaves = {e.location: e for e in root.entries
              if e.is_live and e.content_type.is_manifest}
    replaced = {e.referenced_file: e for e in root.entries
                if not e.is_live and e.content_type == ContentType.MANIFEST_DV}
    for e in root.entries:
        t = e.content_type
        if t.is_manifest:
            if e.status != EntryStatus.ADDED or not _by(e, snapshot):
                continue
            leaf = read_leaf_manifest(io, e, root_location=root.location, legacy=legacy)
            added.extend(_file(metadata, c) for c in leaf.entries
                         if c.status == EntryStatus.ADDED and _by(c, snapshot))
        elif t == ContentType.MANIFEST_DV:
            if e.status != EntryStatus.ADDED or not _by(e, snapshot):
                continue
            target = leaves.get(e.referenced_file or "")
            if target is None:
                continue
            ordinals = set(load_manifest_dv(io, e, file=root.location).to_numpy().tolist())
            old = replaced.get(e.referenced_file)
            if old is not None:
                ordinals -= set(load_manifest_dv(io, old, file=root.location).to_numpy().tolist())
            if not ordinals:
                continue
            leaf = read_leaf_manifest(io, target, root_location=root.location, legacy=legacy)
            removed.extend(_file(metadata, leaf.entries[i]) for i in sorted(ordinals)
                           if i < len(leaf.entries) and leaf.entries[i].is_live)
        elif e.status == EntryStatus.ADDED and _by(e, snapshot):
            added.append(_file(metadata, e))
        elif e.status == EntryStatus.DELETED and e.version_info.snapshot_id in (
                None, snapshot.snapshot_id):
            removed.append(_file(metadata, e))
    return SnapshotChanges(snapshot, tuple(added), tuple(removed))


def _changes_since(io: FileIO, metadata: TableMetadata, parent: Snapshot | None,
                   start_id: int | None, operations: frozenset[str] | None
                   ) -> Iterator[SnapshotChanges]:
    for snap in snapshots_since(metadata, parent, start_id):
        if operations is not None and (snap.summary is None
                                       or str(snap.summary.operation) not in operations):
            continue
        yield snapshot_changes(io, metadata, snap)


def added_files_since(io: FileIO, metadata: TableMetadata, parent: Snapshot | None,
                      start_id: int | None, *, operations: frozenset[str] | None = None
                      ) -> Iterator[tuple[Snapshot, DataFile]]:
    """(snapshot, file) for every data or delete file added by the snapshots after
    ``start_id`` up to ``parent`` (only those whose operation is in ``operations`` when
    given), newest snapshot first."""
    for ch in _changes_since(io, metadata, parent, start_id, operations):
        for f in ch.added:
            yield ch.snapshot, f


def removed_files_since(io: FileIO, metadata: TableMetadata, parent: Snapshot | None,
                        start_id: int | None, *, operations: frozenset[str] | None = None
                        ) -> Iterator[tuple[Snapshot, DataFile]]:
    """(snapshot, file) for every data or delete file removed by the snapshots after
    ``start_id`` up to ``parent`` (see :func:`added_files_since`)."""
    for ch in _changes_since(io, metadata, parent, start_id, operations):
        for f in ch.removed:
            yield ch.snapshot, f


# --------------------------------------------------------------------------- producer mixin


_V = TypeVar("_V", bound="V4Validation")


def _message(snapshot: Snapshot, what: str, expr: Expression) -> str:
    return what.format(expr=expr, snapshot=snapshot.snapshot_id)


class V4Validation:
    """Conflict validation of a v4 producer against the snapshots committed since its start,
    with v3's settings and rules (:class:`~icenb.table.commit.merging.MergingSnapshotProducer`
    for copy-on-write, :class:`~icenb.table.commit.row_delta.RowDelta` when
    :attr:`_row_delta_rules`); mixed into
    :class:`~icenb.table.commit.v4_overwrite.V4Overwrite`, which calls
    :meth:`_validate_concurrent` once per attempt (docs/v4-layout.md#removals, #row-deltas,
    #equality-deletes)."""

    _io: FileIO
    _first_parent: int | bool | None
    #: v3 ``RowDelta`` rules (new deletes matching the filter, referenced data files exist)
    #: instead of ``OverwriteFiles``' (no new deletes for a removed data file).
    _row_delta_rules = False

    def _init_validation(self) -> None:
        self._start_set = False
        self._start_id: int | None = None
        self._conflict_filter: Expression | None = None
        self._validate_data = False
        self._validate_deletes = False
        self._referenced_data_files: dict[str, None] = {}
        self._case_sensitive = True

    def validate_from_snapshot(self: _V, snapshot_id: int | None) -> _V:
        """Validate against the snapshots committed after ``snapshot_id`` (None: the whole
        history, as Java); without this call, only the referenced files are checked."""
        self._start_set = True
        self._start_id = snapshot_id
        return self

    def conflict_detection_filter(self: _V, expr: str | Expression) -> _V:
        """Only concurrent changes that may touch rows matching ``expr`` conflict."""
        self._conflict_filter = as_expression(expr, "conflict_detection_filter")
        return self

    def case_sensitive(self: _V, value: bool) -> _V:
        self._case_sensitive = bool(value)
        return self

    def validate_no_conflicting_data(self: _V) -> _V:
        """Serializable: fail when a concurrent commit added data the filter may match."""
        self._validate_data = True
        return self

    def validate_no_conflicting_deletes(self: _V) -> _V:
        """Fail when a concurrent commit added deletes for data this commit replaces (or, for
        a row delta, deletes the filter may match)."""
        self._validate_deletes = True
        return self

    def validate_data_files_exist(self: _V, paths: Iterable[str]) -> _V:
        """Data files the new deletes reference must still be live at commit, else
        ``CommitConflict``."""
        for p in paths:
            if not isinstance(p, str):
                raise ValidationError("paths must be strings", field="paths", value=p)
            self._referenced_data_files[p] = None
        return self

    def _start(self) -> int | None:
        """The snapshot validation starts after: the one given, else the parent of the first
        attempt (what "concurrent" means without a starting snapshot)."""
        if self._start_set:
            return self._start_id
        first = self._first_parent
        return None if first is False or first is True else first

    def _validate_concurrent(self, base: TableMetadata, parent: Snapshot | None,
                             removed: Sequence[DataFile], new_dvs: Sequence[DataFile]) -> None:
        """Raise ``CommitConflict`` (file = the conflicting file, value = the filter or the
        data file) when a snapshot since the start breaks an assumption of this commit:
        v3's checks, reading what each snapshot added and removed from its root."""
        dv_targets = {d.referenced_data_file for d in new_dvs}
        if not (self._validate_data or self._validate_deletes or self._referenced_data_files
                or dv_targets):
            return
        if parent is None:
            if self._referenced_data_files:
                raise CommitConflict("data files referenced by the new deletes are not in "
                                     "the table", file=next(iter(self._referenced_data_files)),
                                     field="validate_data_files_exist")
            return
        start = self._start()
        history = snapshots_since(base, parent, start)
        if not history:
            return
        changes = [(s, snapshot_changes(self._io, base, s)) for s in history]

        def files(ops: frozenset[str], added: bool, data: bool
                  ) -> Iterator[tuple[Snapshot, DataFile]]:
            for s, ch in changes:
                if s.summary is None or str(s.summary.operation) not in ops:
                    continue
                for f in ch.added if added else ch.removed:
                    if (f.content == FileContent.DATA) == data:
                        yield s, f

        expr = self._conflict_filter
        flt = FileFilter(AlwaysTrue() if expr is None else expr, base.schema,
                          base.specs_by_id, self._case_sensitive)
        if self._referenced_data_files:
            for s, f in files(DELETED_DATA_OPS, False, True):
                if f.file_path in self._referenced_data_files:
                    raise CommitConflict(
                        f"data files referenced by the new deletes are no longer in the table "
                        f"(removed by snapshot {s.snapshot_id})", file=f.file_path,
                        field="validate_data_files_exist", value=s.snapshot_id)
        if self._validate_data:
            for s, f in files(ADDED_DATA_OPS, True, True):
                if flt.might_match(f):
                    raise CommitConflict(_message(
                        s, "found conflicting files that can contain records matching {expr}: "
                        "added by snapshot {snapshot}", flt.expr), file=f.file_path,
                        field="validate_no_conflicting_data", value=str(flt.expr))
        if self._validate_deletes and self._row_delta_rules:
            for s, d in files(NEW_DELETE_OPS, True, False):
                if flt.might_match(d):
                    raise CommitConflict(_message(
                        s, "found new conflicting delete files that can apply to records "
                        "matching {expr}: added by snapshot {snapshot}", flt.expr),
                        file=d.file_path, field="validate_no_conflicting_deletes",
                        value=str(flt.expr))
        if self._validate_deletes and not self._row_delta_rules and removed:
            self._no_new_deletes_for(base, files(NEW_DELETE_OPS, True, False), removed)
        if dv_targets:
            # "concurrent" for DVs: since the start, else since this operation's first parent
            for s, d in files(NEW_DELETE_OPS, True, False):
                if d.content_offset is not None and d.referenced_data_file in dv_targets:
                    raise CommitConflict(
                        f"found a concurrently added deletion vector (snapshot "
                        f"{s.snapshot_id})", file=d.file_path, field="referenced_data_file",
                        value=d.referenced_data_file)

    @staticmethod
    def _no_new_deletes_for(base: TableMetadata, new: Iterable[tuple[Snapshot, DataFile]],
                            removed: Sequence[DataFile]) -> None:
        """No delete file added since the start may apply to a data file this commit replaces
        (spec: Scan Planning: a DV by its referenced file, a position or equality delete by
        partition, an unpartitioned equality delete to every file)."""
        paths = {f.file_path for f in removed}
        parts = {(f.spec_id, tuple(f.partition)) for f in removed}
        for s, d in new:
            spec = base.spec_by_id(d.spec_id)
            applies = (d.referenced_data_file in paths if d.referenced_data_file is not None
                       else (d.spec_id, tuple(d.partition)) in parts
                       or (d.content == FileContent.EQUALITY_DELETES and spec is not None
                           and spec.is_unpartitioned))
            if applies:
                raise CommitConflict(
                    f"found a new delete file for a replaced data file (snapshot "
                    f"{s.snapshot_id})", file=d.file_path,
                    field="validate_no_conflicting_deletes", value=d.referenced_data_file)
