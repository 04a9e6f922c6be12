"""Expire snapshots: remove them from the table metadata, then delete the files only they used.

Spec: "Snapshot Retention Policy" (which snapshots and refs a table keeps), "Snapshot
Reference" (``min-snapshots-to-keep``, ``max-snapshot-age-ms``, ``max-ref-age-ms`` with the
``history.expire.*`` table defaults), "Table Statistics" / "Partition Statistics". The steps:

1. refs other than ``main`` whose snapshot is older than their ``max-ref-age-ms`` are removed;
2. every remaining ref's snapshot is retained; for each remaining branch, its ancestors are
   retained, newest first, while they are among the first ``min-snapshots-to-keep`` or not older
   than ``max-snapshot-age-ms`` (the walk stops at the first ancestor that is neither);
3. every other snapshot expires.

Decisions where the spec is silent follow Iceberg Java 1.10's ``RemoveSnapshots``:

* ``older_than`` / ``retain_last`` replace the table defaults (``expireOlderThan`` /
  ``retainLast``); a branch's own ``max-snapshot-age-ms`` / ``min-snapshots-to-keep`` still win;
* a snapshot no ref reaches (a rolled-back or staged snapshot) is kept while it is not older
  than the table-level age limit (Java's ``unreferencedSnapshotsToRetain``);
* ``snapshot_ids`` expire in addition to what the policy expires, even when the policy would
  keep them; a snapshot a kept ref points at cannot be named;
* ``gc.enabled`` other than ``true`` refuses the operation (deleting files may corrupt
  other tables).

The commit is ``RemoveSnapshotRef`` for each dropped ref, ``RemoveStatistics`` /
``RemovePartitionStatistics`` and ``RemoveSnapshots``, retried on conflicts (the retention is
computed again on the new state). Only after it succeeded are files deleted, with Java's
"reachable files" rule (``ReachableFileCleanup``): a file is deleted when an expired snapshot
references it and no kept snapshot does, in any role (a Puffin file holding deletion vectors
stays while any kept snapshot names it) - manifest lists, manifests, the content files live in
them; statistics and partition statistics files no longer registered. EXPERIMENTAL v4 snapshots
reach files through their root manifest: its live file entries, its live leaves (v4 or, after
an upgrade, v1-v3 manifests) minus the ordinals its manifest DVs delete, and the Puffin files of
manifest DVs (docs/v4-layout.md#maintenance). Whole-file reachability per snapshot matters there: a
file
a manifest DV removed is gone from every later snapshot while its leaf is still referenced.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icenb.catalog.base import is_inside, table_roots
from icenb.errors import IcebergError, NoSuchSnapshot, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.snapshot_files import CONTENT_KINDS, FILE_KINDS, V4_FILE_KINDS, SnapshotFiles
from icenb.progress import DELETING_FILES, LISTING_FILES, progress
from icenb.reprs import safe_repr
from icenb.spec.properties import (
    GC_ENABLED,
    MAX_REF_AGE_MS,
    MAX_SNAPSHOT_AGE_MS,
    MIN_SNAPSHOTS_TO_KEEP,
    bool_property,
    lenient_int_property,
)
from icenb.spec.snapshot import MAIN_BRANCH, SnapshotRef
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.table_updates import (
    RemovePartitionStatistics,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    TableUpdate,
    apply_updates,
)

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = [
    "FILE_KINDS",
    "MAX_REF_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS",
    "MIN_SNAPSHOTS_TO_KEEP",
    "V4_FILE_KINDS",
    "ExpireSnapshotsResult",
    "RetentionPlan",
    "expire_snapshots",
    "files_to_delete",
    "plan_retention",
]

_DEFAULT_MIN_SNAPSHOTS = 1
_DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * 24 * 60 * 60 * 1000  # 5 days
_FOREVER = 2**63 - 1

# Kinds of deleted files (FILE_KINDS, from icenb.io.snapshot_files), in the order they are
# deleted (as Java's ``DeletedFileType``; v4 adds ``manifest_dvs``, Puffin files of manifest
# DVs, and ``root_manifests``).


def _gc_enabled(properties: Mapping[str, str]) -> bool:
    """``gc.enabled`` as Java's ``PropertyUtil`` and icenb's purge read it: only ``true``."""
    return bool_property(properties, GC_ENABLED, True)


# --------------------------------------------------------------------------- retention


@safe_repr
@dataclass(frozen=True)
class RetentionPlan:
    """What the retention policy keeps of a table's metadata (spec: Snapshot Retention
    Policy): the refs and snapshots kept, and the refs and snapshots to remove."""

    retained_refs: Mapping[str, SnapshotRef]
    retained_snapshot_ids: frozenset[int]
    removed_refs: tuple[str, ...]
    expired_snapshot_ids: tuple[int, ...]


def plan_retention(metadata: TableMetadata, *, now_ms: int, older_than_ms: int | None = None,
                   retain_last: int | None = None,
                   snapshot_ids: Iterable[int] = ()) -> RetentionPlan:
    """Which refs and snapshots ``metadata`` keeps at ``now_ms`` (see the module docstring).

    ``older_than_ms`` / ``retain_last`` replace the table's ``history.expire.*`` defaults;
    ``snapshot_ids`` expire as well (``ValidationError`` when a kept ref points at one,
    ``NoSuchSnapshot`` when one is not in the table).
    """
    props = metadata.properties
    default_older_than = (older_than_ms if older_than_ms is not None else
                          now_ms - lenient_int_property(props, MAX_SNAPSHOT_AGE_MS,
                                                 _DEFAULT_MAX_SNAPSHOT_AGE_MS))
    default_min = (retain_last if retain_last is not None else
                   lenient_int_property(props, MIN_SNAPSHOTS_TO_KEEP, _DEFAULT_MIN_SNAPSHOTS))
    default_max_ref_age = lenient_int_property(props, MAX_REF_AGE_MS, _FOREVER)
    explicit = list(dict.fromkeys(snapshot_ids))
    for sid in explicit:
        if metadata.snapshot_by_id(sid) is None:
            raise NoSuchSnapshot("cannot expire a snapshot that is not in the table",
                                 file=metadata.source_file, field="snapshot_ids", value=sid)

    # Step 2: drop refs (never main) whose snapshot is older than their max-ref-age-ms.
    retained_refs: dict[str, SnapshotRef] = {}
    for name, ref in metadata.refs.items():
        snap = metadata.snapshot_by_id(ref.snapshot_id)
        if name == MAIN_BRANCH:
            retained_refs[name] = ref
            continue
        max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_max_ref_age
        if snap is not None and now_ms - snap.timestamp_ms <= max_age:
            retained_refs[name] = ref
    # Step 3: every kept ref's snapshot.
    retained: set[int] = {ref.snapshot_id for ref in retained_refs.values()}
    for sid in explicit:
        names = sorted(n for n, r in retained_refs.items() if r.snapshot_id == sid)
        if names:
            raise ValidationError(f"cannot expire snapshot {sid}: it is referenced by "
                                  f"{', '.join(names)}", field="snapshot_ids", value=sid)
    # Step 4: each kept branch's ancestors, within its count or age limit.
    reachable: set[int] = set()
    for ref in retained_refs.values():
        if not ref.is_branch:
            reachable.add(ref.snapshot_id)
            continue
        older_than = (now_ms - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None
                      else default_older_than)
        keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else default_min
        kept = 0
        walking = True
        for ancestor in metadata.ancestors(ref.snapshot_id):
            reachable.add(ancestor.snapshot_id)
            if walking and (kept < keep or ancestor.timestamp_ms >= older_than):
                retained.add(ancestor.snapshot_id)
                kept += 1
            else:
                walking = False
    # Snapshots no kept ref reaches are kept while young enough (Java).
    for snap in metadata.snapshots:
        if snap.snapshot_id not in reachable and snap.timestamp_ms >= default_older_than:
            retained.add(snap.snapshot_id)
    retained.difference_update(explicit)
    # Step 5: every other snapshot expires.
    expired = tuple(s.snapshot_id for s in metadata.snapshots if s.snapshot_id not in retained)
    removed_refs = tuple(n for n in metadata.refs if n not in retained_refs)
    return RetentionPlan(retained_refs, frozenset(retained), removed_refs, expired)


def _changes(metadata: TableMetadata, plan: RetentionPlan) -> list[TableUpdate]:
    updates: list[TableUpdate] = [RemoveSnapshotRef(n) for n in plan.removed_refs]
    expired = set(plan.expired_snapshot_ids)
    updates += [RemoveStatistics(s.snapshot_id) for s in metadata.statistics
                if s.snapshot_id in expired]
    updates += [RemovePartitionStatistics(s.snapshot_id) for s in metadata.partition_statistics
                if s.snapshot_id in expired]
    if plan.expired_snapshot_ids:
        updates.append(RemoveSnapshots(plan.expired_snapshot_ids))
    return updates


# --------------------------------------------------------------------------- files


def _statistics_paths(metadata: TableMetadata) -> set[str]:
    return ({s.statistics_path for s in metadata.statistics}
            | {s.statistics_path for s in metadata.partition_statistics})


def files_to_delete(io: FileIO, before: TableMetadata, after: TableMetadata,
                    *, clean_content: bool = True) -> dict[str, tuple[str, ...]]:
    """The files expiring ``before`` into ``after`` leaves unreferenced, by kind (see
    :data:`FILE_KINDS`): every file an expired snapshot references that no kept snapshot
    references in any role (Java's ``ReachableFileCleanup``, extended to v4 roots, leaves and
    manifest DVs). ``clean_content=False`` keeps data and delete files (only metadata files
    are listed)."""
    kept_ids = {s.snapshot_id for s in after.snapshots}
    expired = [s.snapshot_id for s in before.snapshots if s.snapshot_id not in kept_ids]
    out: dict[str, set[str]] = {kind: set() for kind in FILE_KINDS}
    if expired:
        reach = SnapshotFiles(io, before)
        kept: set[str] = set()
        with progress(LISTING_FILES, total=len(expired) + len(kept_ids)) as task:
            for sid in expired:
                for kind, paths in reach.files(sid).items():
                    out[kind] |= paths
                task.advance()
            for sid in sorted(kept_ids):
                for paths in reach.files(sid).values():
                    kept |= paths
                task.advance()
        for kind in FILE_KINDS:
            out[kind] -= kept
        if not clean_content:
            for kind in CONTENT_KINDS:
                out[kind] = set()
    out["statistics_files"] = _statistics_paths(before) - _statistics_paths(after)
    return {kind: tuple(sorted(paths)) for kind, paths in out.items()}


# --------------------------------------------------------------------------- result


@safe_repr
@dataclass(frozen=True)
class ExpireSnapshotsResult:
    """What :meth:`Table.expire_snapshots` did (or, with ``dry_run``, would do)."""

    expired_snapshot_ids: tuple[int, ...]
    removed_refs: tuple[str, ...]
    #: Deleted (or, dry run: deletable) file paths by kind (:data:`FILE_KINDS`).
    deleted_files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Files that could not be deleted (kept; the table no longer needs them).
    failed_deletes: tuple[str, ...] = ()
    #: Unreferenced files outside the table's location (its folder and ``write.*.path``): kept,
    #: unless ``delete_outside_table=True`` (issue 17: nothing outside a table is deleted unasked).
    kept_outside: tuple[str, ...] = ()
    dry_run: bool = False
    committed: bool = False
    #: The table's format version (v4 results also list :data:`V4_FILE_KINDS`).
    format_version: int | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The file kinds this result reports: :data:`FILE_KINDS`, without the v4-only kinds
        for a v1-v3 table (unless some were deleted)."""
        v4 = self.format_version is not None and self.format_version >= 4
        return tuple(k for k in FILE_KINDS
                     if v4 or k not in V4_FILE_KINDS or self.count(k))

    def count(self, kind: str) -> int:
        """How many files of ``kind`` (see :data:`FILE_KINDS`) were (or would be) deleted."""
        return len(self.deleted_files.get(kind, ()))

    @property
    def counts(self) -> dict[str, int]:
        """Deleted file counts by kind."""
        return {kind: self.count(kind) for kind in self.kinds}

    @property
    def deleted_paths(self) -> frozenset[str]:
        """Every deleted (or deletable) path."""
        return frozenset(p for paths in self.deleted_files.values() for p in paths)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts.items() if v)
        verb = "would delete" if self.dry_run else "deleted"
        ids = ", ".join(str(s) for s in self.expired_snapshot_ids[:10])
        more = "" if len(self.expired_snapshot_ids) <= 10 else ", ..."
        refs = f", removed_refs={list(self.removed_refs)}" if self.removed_refs else ""
        failed = f", failed_deletes={len(self.failed_deletes)}" if self.failed_deletes else ""
        return (f"ExpireSnapshotsResult({'dry run, ' if self.dry_run else ''}"
                f"expired {len(self.expired_snapshot_ids)} snapshot(s) [{ids}{more}]{refs}, "
                f"{verb}: {counts or 'no files'}{failed})")


# --------------------------------------------------------------------------- operation


def expire_snapshots(table: Table, *, older_than_ms: int | None = None,
                     retain_last: int | None = None, snapshot_ids: Iterable[int] | None = None,
                     clean_files: bool = True, dry_run: bool = False,
                     now_ms: int | None = None,
                     sleep: Callable[[float], None] | None = None,
                     delete_outside_table: bool = False) -> ExpireSnapshotsResult:
    """Expire ``table``'s snapshots per the retention policy (module docstring) in one commit,
    then delete the files no kept snapshot references (``clean_files=False``: delete none).
    ``dry_run`` commits and deletes nothing; the result tells what would happen on the table
    as loaded. Interrupted (``KeyboardInterrupt``) before the commit, nothing changed; after
    it, the table is the committed one and only files it no longer references were deleted
    (those left are orphans: :func:`~icenb.table.commit.remove_orphan_files.remove_orphan_files`
    takes them)."""
    from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement

    if retain_last is not None and (type(retain_last) is not int or retain_last < 1):
        raise ValidationError("retain_last must be at least 1", field="retain_last",
                              value=retain_last)
    if older_than_ms is not None and type(older_than_ms) is not int:
        raise ValidationError("older_than must be a time", field="older_than",
                              value=older_than_ms)
    ids = () if snapshot_ids is None else tuple(snapshot_ids)
    for sid in ids:
        if type(sid) is not int:
            raise ValidationError("snapshot ids are integers", field="snapshot_ids", value=sid)
    if not dry_run:
        table.operations.commit_target()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    base = table.metadata
    if not _gc_enabled(base.properties):
        raise ValidationError("cannot expire snapshots: gc.enabled is not true (deleting files "
                              "may corrupt other tables)", field=GC_ENABLED,
                              value=base.properties.get(GC_ENABLED))

    def plan_on(metadata: TableMetadata) -> RetentionPlan:
        return plan_retention(metadata, now_ms=now, older_than_ms=older_than_ms,
                              retain_last=retain_last, snapshot_ids=ids)

    io = table.io
    if dry_run:
        plan = plan_on(base)
        after = apply_updates(base, _changes(base, plan), metadata_location=None)
        files = (files_to_delete(io, base, after) if clean_files
                 else {k: () for k in FILE_KINDS})
        return ExpireSnapshotsResult(plan.expired_snapshot_ids, plan.removed_refs, files,
                                     dry_run=True, format_version=base.format_version)

    attempts: list[tuple[TableMetadata, RetentionPlan]] = []

    def build(metadata: TableMetadata) -> MetadataChange:
        if not _gc_enabled(metadata.properties):
            raise ValidationError("cannot expire snapshots: gc.enabled is not true",
                                  field=GC_ENABLED, value=metadata.properties.get(GC_ENABLED))
        plan = plan_on(metadata)
        attempts.append((metadata, plan))
        return MetadataChange(_changes(metadata, plan), uuid_requirement(metadata))

    committed = commit_change(table, build, sleep=sleep)
    before, plan = attempts[-1]
    if not plan.expired_snapshot_ids and not plan.removed_refs:
        return ExpireSnapshotsResult((), (), {k: () for k in FILE_KINDS},
                                     format_version=before.format_version)
    if not clean_files:
        return ExpireSnapshotsResult(plan.expired_snapshot_ids, plan.removed_refs,
                                     {k: () for k in FILE_KINDS}, committed=True,
                                     format_version=before.format_version)
    files = files_to_delete(io, before, committed.metadata)
    roots = table_roots(committed.metadata, committed.metadata_location)
    outside = () if delete_outside_table else tuple(sorted(
        p for kind in FILE_KINDS for p in files[kind] if not is_inside(p, roots)))
    if outside:
        skip = set(outside)
        files = {kind: tuple(p for p in paths if p not in skip) for kind, paths in files.items()}
    failed: list[str] = []
    with progress(DELETING_FILES, total=sum(len(paths) for paths in files.values())) as task:
        for kind in FILE_KINDS:
            for path in files[kind]:
                try:
                    io.delete(path, missing_ok=True)
                except IcebergError:
                    failed.append(path)
                task.advance()
    return ExpireSnapshotsResult(plan.expired_snapshot_ids, plan.removed_refs, files,
                                 failed_deletes=tuple(failed), kept_outside=outside,
                                 committed=True,
                                 format_version=before.format_version)
