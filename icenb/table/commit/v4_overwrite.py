"""EXPERIMENTAL format-version 4 removals of whole files: deletes and overwrites.

Proposal, "Removing a data file / delete file": *"A new Root Manifest is created with either an
ADDED Delete Vector which removes the data or delete file from a child manifest. We do not allow
the copy on write behavior ... of removing and adding a child manifest with a net change to the
data ... Whenever a change is made to leaf manifests, it should be marked by newly added
Manifest Delete Vectors."* Examples "Removing a File From the Root Manifest", "... From a Leaf
Manifest", "Overwrite Files in Root Manifest", "... in Leaf Manifest" (docs/v4-layout.md#removals).

:class:`V4Overwrite` removes files and adds new ones in one snapshot: a removed root entry
becomes DELETED in the new root; a removed leaf entry is marked by a manifest DV over its leaf
(unioned with the leaf's live DV, which becomes DELETED); a leaf is never rewritten. Data DVs of
removed data files go with them (proposal, "Removing Data Files": *"requires removing any
corresponding DV to prevent orphans"*). :func:`v4_delete_rows` / :func:`v4_overwrite_rows` are
the copy-on-write delete and overwrite of :mod:`icenb.table.row_level.copy_on_write` for v4 tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from icenb.errors import CommitConflict, IcebergError, ValidationError
from icenb.io.file_io import join_location
from icenb.io.root_manifest import (
    MANIFEST_DV_INLINE,
    ContentManifest,
    LeafManifest,
    inline_manifest_dv,
    manifest_dv_storage,
    read_leaves,
    write_puffin_manifest_dvs,
)
from icenb.spec import values
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind, VersionInfo
from icenb.spec.deletion_vector import DeletionVector
from icenb.spec.expressions import ALWAYS_TRUE, Expression
from icenb.spec.manifest import DataFile, EntryStatus, FieldSummary, FileContent
from icenb.spec.snapshot import CHANGED_PARTITION_COUNT, MAIN_BRANCH, Operation, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import SummaryCounts
from icenb.table.commit.producer import (
    add_totals,
    commit_snapshot,
    metadata_dir,
)
from icenb.table.commit.v4_append import V4Append
from icenb.table.commit.v4_upgrade import legacy_leaf_reader, parent_root
from icenb.table.commit.v4_validation import V4Validation
from icenb.table.scan.v4_planning import manifest_entry_of

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["V4Overwrite", "v4_delete_rows", "v4_overwrite_rows", "validate_copy_on_write"]


def _deleted(e: ContentEntry) -> ContentEntry:
    """``e`` as the DELETED entry of this commit: resolved sequence numbers kept, snapshot id
    null = "deleted by this snapshot" (docs/v4-layout.md#inheritance)."""
    vi = e.version_info
    return replace(e, version_info=VersionInfo(EntryStatus.DELETED, None, vi.sequence_number,
                                               vi.file_sequence_number))


class V4Overwrite(V4Validation, V4Append):
    """Remove whole files from, and add data files to, an EXPERIMENTAL v4 table in one
    snapshot (operation ``delete`` when nothing is added, else ``overwrite``); see the module
    docstring. New files are placed as :class:`V4Append` places them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._remove_paths: dict[str, None] = {}
        #: Per path to remove given as a DataFile: (spec id, partition tuple), to skip leaves
        #: whose partition summaries exclude it; None for a path given as a string.
        self._remove_parts: dict[str, tuple[int, tuple[Any, ...]] | None] = {}
        self._removed_data: list[DataFile] = []  # data files the pruned attempt removes
        self._removed: list[DataFile] = []
        self._first_parent: int | bool | None = False  # False: no attempt yet
        #: An overwrite is an ``overwrite`` snapshot even when it adds no file (as v3).
        self.overwrite = False
        self._init_validation()  # concurrent-commit checks, docs/v4-layout.md#removals

    def operation(self) -> str:
        return str(Operation.OVERWRITE if self._files or self.overwrite else Operation.DELETE)

    def delete_file(self, file: DataFile | str) -> V4Overwrite:
        """Remove a data file (or an equality delete file), by object or path; its data DVs
        are removed with it."""
        path = file.file_path if isinstance(file, DataFile) else file
        if not isinstance(path, str) or not path:
            raise ValidationError("expected a DataFile or a file path", field="file",
                                  value=file)
        self._remove_paths[path] = None
        part = (file.spec_id, tuple(file.partition)) if isinstance(file, DataFile) else None
        if self._remove_parts.get(path, part) is not None or path not in self._remove_parts:
            self._remove_parts[path] = part
        return self

    @property
    def removed_files(self) -> tuple[DataFile, ...]:
        """The files the last attempt removed (data files and their DVs)."""
        return tuple(self._removed)

    # ------------------------------------------------------------------ the tree

    #: The lowest data sequence number of the data files the attempt keeps (and the table's
    #: last sequence number): delete files below it apply to nothing and go (as v3).
    _min_data_seq: int | None = None

    def _delete_partitions(self) -> list[tuple[int, tuple[Any, ...]]]:
        """(spec id, partition) of further delete files :meth:`_removes` may remove (a
        subclass's), so that delete leaves that may hold them are read."""
        return []

    def _removes(self, e: ContentEntry, data_paths: set[str]) -> bool:
        """Whether a live file entry goes: named by path (data / equality delete files), a
        data DV of a removed data file (a DV's location is a shared Puffin file; a v2
        position delete file carried from before an upgrade stays, as v3 keeps it), or a
        delete file older than every kept data file (v3's ``MergingSnapshotProducer``)."""
        seq = e.version_info.sequence_number
        if (e.content_type in (ContentType.POSITION_DELETE, ContentType.EQUALITY_DELETE)
                and self._min_data_seq is not None and seq is not None
                and 0 < seq < self._min_data_seq):
            return True
        if e.content_type == ContentType.POSITION_DELETE:  # a v2 file stays, as in v3
            return e.deletion_vector is not None and e.referenced_file in data_paths
        return e.content_type in (ContentType.DATA, ContentType.EQUALITY_DELETE) and (
            e.location in self._remove_paths)

    def _check_found(self, parent: Snapshot | None, found: set[str]) -> None:
        """Every file to remove must be live: ``ValidationError`` on the first attempt,
        ``CommitConflict`` when a concurrent commit removed it (spec: Commit Conflict
        Resolution and Retry)."""
        parent_id = None if parent is None else parent.snapshot_id
        if self._first_parent is False:
            self._first_parent = parent_id
        missing = sorted(set(self._remove_paths) - found)
        if not missing:
            return
        if parent_id != self._first_parent:
            raise CommitConflict("files to remove are no longer in the table (a concurrent "
                                 "commit removed them)", file=missing[0], field="delete_file",
                                 value=len(missing))
        raise ValidationError("files to remove are not in the table", file=missing[0],
                              field="delete_file", value=len(missing))

    def _data_file(self, base: TableMetadata, e: ContentEntry) -> DataFile:
        spec = base.spec_by_id(e.partition_spec_id)
        assert spec is not None
        return manifest_entry_of(e, spec.partition_type(base.schema)).data_file

    def _new_root_entries(self, base: TableMetadata, parent: Snapshot | None
                          ) -> list[ContentEntry]:
        """The parent root with the removals applied (see the class docstring), then the
        ADDED entries; sets :attr:`removed_files`."""
        if parent is None:
            self._check_found(parent, set())
            self._validate_attempt(base, parent)
            return self._new_entries(base)
        root = parent_root(self._io, base, parent)
        self._reapply_overwrite_all(base, parent)
        live_root = [e for e in root.entries if e.is_live]
        # leaves that may hold a file to remove first; every leaf only if some file is missing
        out = self._apply_removals(base, parent, root, live_root, pruned=True)
        if out is None:
            out = self._apply_removals(base, parent, root, live_root, pruned=False)
        assert out is not None
        self._validate_attempt(base, parent)
        new = self._new_entries(base)
        return self._compact(base, out) + new

    #: An overwrite without filter: on a retry, data files committed since the first attempt
    #: are removed too and files removed meanwhile are no conflict (v3's
    #: ``overwriteByRowFilter(alwaysTrue)``, docs/v4-layout.md#removals).
    remove_concurrent_data = False

    def _reapply_overwrite_all(self, base: TableMetadata, parent: Snapshot) -> None:
        first = self._first_parent
        if not self.remove_concurrent_data or first is False or first is True:
            return
        if parent.snapshot_id == first:
            return
        from icenb.table.commit.v4_validation import snapshot_changes, snapshots_since

        added: dict[str, DataFile] = {}
        gone: set[str] = set()
        for snap in reversed(snapshots_since(base, parent, first)):
            ch = snapshot_changes(self._io, base, snap)
            for f in ch.removed:
                added.pop(f.file_path, None)
                gone.add(f.file_path)
            for f in ch.added:
                if f.content == FileContent.DATA:
                    added[f.file_path] = f
        for path in gone:
            self._remove_paths.pop(path, None)
            self._remove_parts.pop(path, None)
        for f in added.values():
            self.delete_file(f)

    def _validate_attempt(self, base: TableMetadata, parent: Snapshot | None) -> None:
        """Conflict validation against the snapshots since the start (v4_validation), with
        the data files this attempt replaces; before the attempt writes anything."""
        removed = [f for f in self._removed if f.content == FileContent.DATA]
        named = [f for f in removed if f.file_path in self._remove_paths]
        self._validate_concurrent(base, parent, named or removed, self._new_dvs())

    def _new_dvs(self) -> list[DataFile]:
        """The data DVs this commit adds (a row delta's): no concurrent DV may target the
        same data file."""
        return []

    def _leaves_to_read(self, base: TableMetadata, root: ContentManifest,
                        data_paths: set[str] | None) -> list[ContentEntry] | None:
        """The live leaf entries of ``root`` that may hold a file to remove (by the partition
        summaries in their aggregated stats, docs/v4-layout.md#removals), a data DV or delete file
        of one, or a delete file older than every kept data file; data leaves when
        ``data_paths`` is None, else delete leaves. None: cannot tell, read every leaf."""
        dv_targets = {e.referenced_file for e in root.entries
                      if e.is_live and e.content_type == ContentType.MANIFEST_DV}
        want: list[tuple[int, tuple[Any, ...]]] = []
        for path in self._remove_paths:
            part = self._remove_parts.get(path)
            if part is None:
                return None
            want.append(part)
        if data_paths is not None:
            want.extend((f.spec_id, tuple(f.partition)) for f in self._removed_data)
            want.extend(self._delete_partitions())
        out: list[ContentEntry] = []
        for e in root.entries:
            if not (e.is_live and e.content_type.is_manifest):
                continue
            is_data = e.content_type == ContentType.DATA_MANIFEST
            if is_data != (data_paths is None):
                continue
            ms = e.manifest_stats
            seq = None if ms is None else ms.min_sequence_number
            if ms is None or seq is None or seq < 0 or e.location in dv_targets:
                out.append(e)  # its live files' lowest sequence number is needed
                continue
            if (not is_data and self._min_data_seq is not None
                    and 0 < seq < self._min_data_seq):
                out.append(e)
                continue
            spec = base.spec_by_id(e.partition_spec_id)
            summaries = None if e.content_stats is None else e.content_stats.partitions
            if spec is None or summaries is None:
                out.append(e)
                continue
            ptype = spec.partition_type(base.schema)
            if any(sid == e.partition_spec_id and may_hold(summaries, ptype, part)
                   for sid, part in want):
                out.append(e)
        return out

    def _apply_removals(self, base: TableMetadata, parent: Snapshot, root: ContentManifest,
               live_root: list[ContentEntry], *, pruned: bool) -> list[ContentEntry] | None:
        """The parent's live root entries with the removals applied and new manifest DVs,
        reading only the leaves that may be concerned when ``pruned`` (None: cannot prune);
        sets :attr:`removed_files`; raises when a file to remove is missing and not
        ``pruned``."""
        legacy = legacy_leaf_reader(self._io, base)
        data_sel = self._leaves_to_read(base, root, None) if pruned else None
        if pruned and data_sel is None:
            return None

        every: list[LeafManifest] = []

        def read(sel: list[ContentEntry] | None, data: bool) -> dict[str, LeafManifest]:
            if sel is None:
                if not every:
                    every.extend(read_leaves(self._io, root, legacy=legacy))
                got = every
            else:
                got = read_leaves(self._io, replace(root, entries=tuple(
                    [*sel, *(e for e in root.entries
                             if e.content_type == ContentType.MANIFEST_DV)])), legacy=legacy)
            return {leaf.root_entry.location: leaf for leaf in got
                    if (leaf.manifest.kind == ManifestKind.DATA) == data}

        leaves = read(data_sel, True)
        data_leaves = [lf for lf in leaves.values() if lf.manifest.kind == ManifestKind.DATA]
        # data files first: their removal decides which data DVs go
        data_paths = {e.location for e in live_root
                      if e.content_type == ContentType.DATA and e.location in self._remove_paths}
        for leaf in data_leaves:
            data_paths.update(e.location for e in leaf.live_entries()
                              if e.location in self._remove_paths)
        kept_seqs = [e.version_info.sequence_number for e in live_root
                     if e.content_type == ContentType.DATA and e.location not in data_paths]
        for leaf in data_leaves:
            kept_seqs.extend(e.version_info.sequence_number for e in leaf.live_entries()
                             if e.location not in data_paths)
        if data_sel is not None:  # leaves not read: their live files' lowest sequence number
            read_locations = set(leaves)
            kept_seqs.extend(
                e.manifest_stats.min_sequence_number for e in live_root
                if e.content_type == ContentType.DATA_MANIFEST
                and e.location not in read_locations and e.manifest_stats is not None)
        self._min_data_seq = min([base.last_sequence_number,
                                  *(s for s in kept_seqs if s is not None)])
        removed: list[DataFile] = []
        if pruned:
            self._removed_data = [self._data_file(base, e) for leaf in data_leaves
                                  for e in leaf.live_entries() if e.location in data_paths]
            self._removed_data += [self._data_file(base, e) for e in live_root
                                   if e.content_type == ContentType.DATA
                                   and e.location in data_paths]
            delete_sel = self._leaves_to_read(base, root, data_paths)
            if delete_sel is None:
                return None
            leaves.update(read(delete_sel, False))
        else:
            leaves.update(read(None, False))
        leaves = {e.location: leaves[e.location] for e in root.entries  # root order
                  if e.location in leaves and e.content_type.is_manifest}
        new_ordinals: dict[str, list[int]] = {}
        for leaf in leaves.values():
            for i, e in enumerate(leaf.entries):
                if e.is_live and i not in leaf.deleted and self._removes(e, data_paths):
                    new_ordinals.setdefault(leaf.root_entry.location, []).append(i)
                    removed.append(self._data_file(base, e))
        out: list[ContentEntry] = []
        for e in live_root:
            if e.content_type.is_manifest or e.content_type == ContentType.MANIFEST_DV:
                replaced = (e.content_type == ContentType.MANIFEST_DV
                            and e.referenced_file in new_ordinals)
                out.append(_deleted(e) if replaced else e.with_status(EntryStatus.EXISTING))
            elif self._removes(e, data_paths):
                out.append(_deleted(e))
                removed.append(self._data_file(base, e))
            else:
                out.append(e.with_status(EntryStatus.EXISTING))
        found = {f.file_path for f in removed}
        if pruned and not set(self._remove_paths) <= found:
            return None  # some file may be in a leaf not read: read them all
        self._check_found(parent, found)
        out.extend(self._manifest_dvs(base, [
            (leaves[location].root_entry, _union(leaves[location], ordinals))
            for location, ordinals in new_ordinals.items()]))
        self._removed = removed
        return out

    #: Manifest DV Puffin files this operation wrote (numbers their names).
    _dv_files = 0

    def _manifest_dvs(self, base: TableMetadata,
                      dvs: list[tuple[ContentEntry, DeletionVector]]) -> list[ContentEntry]:
        """The attempt's new manifest DVs (leaf entry, ordinals): inline, or with
        ``write.v4.manifest-dv.storage`` = ``puffin`` the blobs of one Puffin file
        ``<commit-uuid>-dv<N>.puffin`` in the metadata directory, an attempt file
        (docs/v4-layout.md#manifest-dvs)."""
        if not dvs:
            return []
        if manifest_dv_storage(base.properties) == MANIFEST_DV_INLINE:
            return [inline_manifest_dv(target, dv) for target, dv in dvs]
        from icenb._version import __version__

        files = self._written if self._attempt is None else self._attempt[2]
        location = join_location(metadata_dir(base),
                                 f"{self._commit_uuid}-dv{self._dv_files}.puffin")
        self._dv_files += 1
        files.append(location)  # a failed attempt deletes it (snapshot_producer._cleanup)
        return write_puffin_manifest_dvs(self._io, location, dvs,
                                         created_by=f"icenb {__version__}")

    def _root_entries(self, base: TableMetadata, parent: Snapshot | None
                      ) -> list[ContentEntry]:
        """The parent's entries with removals applied, in their order, then new manifest DVs,
        then the added files (the proposal's drawings)."""
        return self._new_root_entries(base, parent)

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        """Java's summary of an overwrite / delete: added and removed counts, changed
        partitions, totals."""
        counts = SummaryCounts()
        partitions: set[tuple[int, tuple[Any, ...]]] = set()
        for f, added in [*((f, True) for f in self._files),
                         *((f, False) for f in self._removed)]:
            counts.add(f, added)
            partitions.add((f.spec_id, f.partition))
        out = counts.properties()
        out[CHANGED_PARTITION_COUNT] = str(len(partitions))
        add_totals(out, parent, counts.totals())
        return out


def may_hold(summaries: tuple[FieldSummary, ...], ptype: Any, partition: tuple[Any, ...]
              ) -> bool:
    """Whether a leaf whose partition field summaries are ``summaries`` may hold a file of
    ``partition`` (a tuple of the spec's ``ptype``); anything undecidable keeps the leaf."""
    fields = ptype.fields
    if len(summaries) != len(fields) or len(partition) != len(fields):
        return True
    for f, s, v in zip(fields, summaries, partition, strict=True):
        if v is None:
            if not s.contains_null:
                return False
            continue
        if isinstance(v, float) and v != v:
            if s.contains_nan is False:
                return False
            continue
        if s.lower_bound is None or s.upper_bound is None:
            continue
        try:
            key = values.sort_key(f.field_type, v)
            if key < values.sort_key(f.field_type, values.from_bytes(f.field_type,
                                                                      s.lower_bound)):
                return False
            if key > values.sort_key(f.field_type, values.from_bytes(f.field_type,
                                                                     s.upper_bound)):
                return False
        except (IcebergError, TypeError, ValueError):
            continue
    return True


def _union(leaf: LeafManifest, ordinals: Iterable[int]) -> DeletionVector:
    """The leaf's new manifest DV: its live DV's ordinals and the new ones (docs/v4-layout.md
    docs/v4-layout.md#manifest-dvs: one live DV per leaf)."""
    return leaf.deleted | DeletionVector.from_positions(sorted(ordinals))


# --------------------------------------------------------------------------- table operations


def _producer(table: Table, branch: str, snapshot_properties: Mapping[str, str] | None
              ) -> V4Overwrite:
    from icenb.table.commit import table_producer

    return table_producer("overwrite", table, V4Overwrite, branch=branch,
                          snapshot_properties=snapshot_properties)


def validate_copy_on_write(producer: V4Overwrite, metadata: TableMetadata,
                           snapshot_id: int | None, expr: str | Expression,
                           operation: str = "delete") -> None:
    """Spark's copy-on-write conflict detection, as v3's (``copy_on_write._validated``): from
    the scanned snapshot, with the filter; concurrent deletes for replaced files conflict,
    concurrent appends the filter may match too under ``serializable`` isolation
    (``write.<operation>.isolation-level``, docs/v4-layout.md#removals)."""
    from icenb.table.commit.validation import IsolationLevel, isolation_level

    if snapshot_id is not None:
        producer.validate_from_snapshot(snapshot_id)
    producer.conflict_detection_filter(expr)
    producer.validate_no_conflicting_deletes()
    if isolation_level(metadata.properties, operation) == IsolationLevel.SERIALIZABLE:
        producer.validate_no_conflicting_data()


def _stage(producer: V4Overwrite, table: Table, filter: str | Expression, branch: str,
           case_sensitive: bool, *, validate: bool = True) -> bool:
    """Have ``producer`` remove the files holding rows matching ``filter`` and write back
    their other live rows (a data file is rewritten, never a leaf manifest), validated as a
    copy-on-write change of ``filter`` when ``validate``; whether any row matched."""
    from icenb.table.row_level.copy_on_write import plan_copy_on_write

    md = table.metadata
    plan = plan_copy_on_write(table.io, md, filter, branch=branch,
                              case_sensitive=case_sensitive)
    producer.case_sensitive(case_sensitive)
    if validate:
        validate_copy_on_write(producer, md, plan.snapshot_id, filter)
    for f in plan.remove:
        producer.delete_file(f)
    if plan.keep_rows is not None and plan.keep_rows.num_rows:
        producer.write(plan.keep_rows, md, moved=True)
    return bool(plan.remove)


def v4_delete_rows(table: Table, filter: str | Expression, *, branch: str = MAIN_BRANCH,
                   snapshot_properties: Mapping[str, str] | None = None,
                   case_sensitive: bool = True) -> Snapshot | None:
    """Copy-on-write delete on a v4 table: files whose rows all match are removed (a
    ``delete`` snapshot), partly matching ones replaced by their remaining rows (an
    ``overwrite``); None when no row matched. Validated against concurrent commits as v3
    (:func:`validate_copy_on_write`)."""
    producer = _producer(table, branch, snapshot_properties)
    try:
        if not _stage(producer, table, filter, branch, case_sensitive):
            return None
    except BaseException:
        producer.abort()
        raise
    return commit_snapshot(table, producer)


def v4_overwrite_rows(table: Table, data: Any, filter: str | Expression | None = None, *,
                      branch: str = MAIN_BRANCH,
                      snapshot_properties: Mapping[str, str] | None = None,
                      case_sensitive: bool = True) -> Snapshot:
    """Replace the rows matching ``filter`` (None: every row) by ``data`` in one
    ``overwrite`` snapshot of a v4 table (remove + add, see :func:`v4_delete_rows`). Without a
    filter nothing is validated and files appended concurrently are removed too (v3's
    ``overwriteByRowFilter(alwaysTrue)`` re-applied on retries, docs/v4-layout.md#removals)."""
    producer = _producer(table, branch, snapshot_properties)
    producer.overwrite = True
    try:
        producer.check_branch(table.metadata)
        if filter is None:
            producer.remove_concurrent_data = True
        _stage(producer, table, ALWAYS_TRUE if filter is None else filter, branch,
               case_sensitive, validate=filter is not None)
        producer.write(data, table.metadata)
    except BaseException:
        producer.abort()
        raise
    return commit_snapshot(table, producer)
