"""Branches, tags and history of a writable table: create, replace, rename, remove and
fast-forward refs, set retention, roll back, set the current snapshot and cherry-pick.

Spec sections: "Snapshot References", "Snapshot Retention Policy", "Table Metadata Fields"
(``snapshot-log``: every move of ``main`` is logged with the commit time) and "Commit Conflict
Resolution and Retry". Behaviour and checks follow Iceberg Java 1.10's ``ManageSnapshots``
(``UpdateSnapshotReferencesOperation``, ``SetSnapshotOperation``, ``CherryPickOperation``):

* every request is checked when it is made, on the table as loaded, before anything is
  written; a batch (:class:`ManageSnapshots`) sees the refs as its earlier requests left them;
* a ref keeps its retention settings when it moves (Java's ``SnapshotRef.builderFrom``);
* ``rollback_to`` a snapshot needs an ancestor of the branch head; to a time it picks the
  newest ancestor committed strictly before that time (Java's ``rollbackToTime``);
  ``set_current_snapshot`` takes any snapshot;
* ``create_branch`` without a snapshot on a table without one commits an empty ``append``
  snapshot to the new branch, as Java does (``main`` stays empty unless it is the branch);
* ``cherry_pick`` fast-forwards the branch when the picked snapshot's parent is the branch head
  (any operation); otherwise it re-adds the data files an ``append`` added, as a new ``append``
  snapshot (merging manifests per ``commit.manifest-merge.enabled``, as Java's merging
  ``CherryPickOperation``), or re-applies a dynamic partition overwrite
  (``replace-partitions=true``) as a :class:`~icenb.table.commit.overwrite.ReplacePartitions`
  whose parent must be an ancestor of the branch and whose partitions must not have changed
  since; the new snapshot's summary has ``source-snapshot-id`` (and ``published-wap-id`` for
  a ``wap.id``). On an EXPERIMENTAL v4 table the picked append is re-applied as a
  :class:`~icenb.table.commit.v4_append.V4Append` (docs/v4-layout.md#maintenance), a dynamic
  overwrite as
  a :class:`~icenb.table.commit.v4_replace_partitions.V4ReplacePartitions`
  (docs/v4-layout.md#dynamic-overwrite). A snapshot that
  is already an ancestor of the branch, or was already picked into it, or whose ``wap.id`` was
  already published there, is refused, as is any other operation.

``publish_changes`` (Spark's procedure of that name, write-audit-publish) finds the one snapshot
whose summary ``wap.id`` is the given id and cherry-picks it; none, several, or one published
already on the branch is refused naming ``wap.id``.

A ref change is one metadata commit ``[RemoveSnapshotRef..., SetSnapshotRef...]`` with
``AssertTableUUID`` and ``AssertRefSnapshotId`` for every ref the requests named (its snapshot
when the requests were made, or absent). When another writer moved the table pointer the
commit is retried on the new state (:func:`icenb.table.commit.metadata_change.commit_change`),
unless a
named ref changed meanwhile: that raises ``CommitConflict`` (Java would re-apply a rollback on
the new head; icenb refuses to discard a concurrent commit to the branch being reset).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import (
    CommitConflict,
    NoSuchSnapshot,
    ValidationError,
)
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.spec.manifest import DataFile, EntryStatus, FileContent
from icenb.spec.snapshot import (
    MAIN_BRANCH,
    PUBLISHED_WAP_ID,
    REPLACE_PARTITIONS,
    SOURCE_SNAPSHOT_ID,
    WAP_ID,
    Operation,
    Snapshot,
    SnapshotRef,
    SnapshotRefType,
)
from icenb.spec.table_metadata import TableMetadata, iso_utc
from icenb.spec.table_updates import (
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveSnapshotRef,
    SetSnapshotRef,
    TableUpdate,
)
from icenb.table.commit.append import MergeAppend
from icenb.table.commit.merging import merge_enabled
from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement
from icenb.table.commit.overwrite import ReplacePartitions
from icenb.table.commit.producer import (
    Attempt,
    FastAppend,
    SnapshotProducer,
    commit_snapshot,
    commit_to_table,
)
from icenb.table.commit.v4_append import V4Append
from icenb.table.commit.v4_replace_partitions import V4ReplacePartitions

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = [
    "PUBLISHED_WAP_ID",
    "REPLACE_PARTITIONS",
    "SOURCE_SNAPSHOT_ID",
    "UNSET",
    "WAP_ID",
    "ManageSnapshots",
    "Unset",
    "cherry_pick",
    "create_branch",
    "publish_changes",
]

# Snapshot summary keys (Java's SnapshotSummary).



class Unset:
    """The default of a retention argument that is not given (None clears the setting)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset()


def _pick(given: int | Unset | None, current: int | None) -> int | None:
    return current if isinstance(given, Unset) else given


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationError(f"a {what} name must be a non-empty string", field=what,
                              value=value)
    return value


def _snapshot_id_arg(value: object, field: str) -> int:
    if type(value) is not int:
        raise ValidationError("a snapshot id must be an integer", field=field, value=value)
    return value


def _newest_first(metadata: TableMetadata, head: int | None) -> list[Snapshot]:
    return [] if head is None else list(metadata.ancestors(head))


class ManageSnapshots:
    """Ref changes made on a table and committed together, in one commit (Java's chained
    ``table.manageSnapshots()...commit()``).

    ``with t.manage_snapshots() as m: m.create_tag("v1"); m.rollback_to(sid)`` commits when
    the block ends normally; a request that cannot be done raises at once and nothing is
    committed. Snapshot ids, ref names and retention values are checked as each request is
    made, on the refs as the earlier requests left them.
    """

    def __init__(self, table: Table) -> None:
        table.operations.commit_target()
        self._table = table
        self._base = table.metadata
        self._refs: dict[str, SnapshotRef] = dict(self._base.refs)
        self._named: dict[str, int | None] = {}  # ref -> its snapshot id in the base
        self._done = False

    # ------------------------------------------------------------------ helpers

    @property
    def refs(self) -> Mapping[str, SnapshotRef]:
        """The refs as the requests so far leave them."""
        return dict(self._refs)

    def _ref(self, name: str) -> SnapshotRef | None:
        if name not in self._named:
            base_ref = self._base.refs.get(name)
            self._named[name] = None if base_ref is None else base_ref.snapshot_id
        return self._refs.get(name)

    def _missing(self, name: str, what: str) -> NoSuchSnapshot:
        return NoSuchSnapshot(f"no {what} named {name!r}", file=self._base.source_file,
                              field="refs", value=name)

    def _existing(self, name: str, kind: str) -> SnapshotRef:
        """The ref ``name``, which must be a ``kind`` ("branch" or "tag")."""
        ref = self._ref(_name(name, kind))
        if ref is None:
            raise self._missing(name, kind)
        if ref.is_branch != (kind == "branch"):
            other = "tag" if kind == "branch" else "branch"
            raise ValidationError(f"{name!r} is a {other}, not a {kind}", field=kind, value=name)
        return ref

    def _branch(self, name: str) -> SnapshotRef:
        return self._existing(name, "branch")

    def _tag(self, name: str) -> SnapshotRef:
        return self._existing(name, "tag")

    def _new_name(self, name: str, what: str) -> str:
        _name(name, what)
        if any(ord(c) < 32 or ord(c) == 127 for c in name):  # issue 17: as catalog names
            raise ValidationError("a ref name cannot hold NUL or other control characters",
                                  field=what, value=name)
        if self._ref(name) is not None:
            raise ValidationError(f"a ref named {name!r} already exists", field=what,
                                  value=name)
        return name

    def _snapshot(self, snapshot_id: object, field: str = "snapshot_id") -> Snapshot:
        sid = _snapshot_id_arg(snapshot_id, field)
        snap = self._base.snapshot_by_id(sid)
        if snap is None:
            raise NoSuchSnapshot("no snapshot with this id in the table metadata",
                                 file=self._base.source_file, field=field, value=sid)
        return snap

    def _target(self, target: int | str, field: str) -> int:
        """A snapshot id, or the snapshot a ref (as the requests left it) points to."""
        if isinstance(target, str):
            ref = self._ref(target)
            if ref is None:
                raise self._missing(target, "branch or tag")
            return ref.snapshot_id
        return self._snapshot(target, field).snapshot_id

    def _current(self) -> int:
        main = self._ref(MAIN_BRANCH)
        if main is None:
            raise ValidationError("the table has no current snapshot: give a snapshot id",
                                  field="snapshot_id", value=None)
        return main.snapshot_id

    def _put(self, name: str, ref: SnapshotRef) -> SnapshotRef:
        self._ref(name)
        self._refs[name] = ref
        return ref

    @staticmethod
    def _moved(ref: SnapshotRef, snapshot_id: int) -> SnapshotRef:
        """``ref`` pointing at ``snapshot_id``, its retention kept."""
        return SnapshotRef(snapshot_id, ref.ref_type, ref.min_snapshots_to_keep,
                           ref.max_snapshot_age_ms, ref.max_ref_age_ms)

    # ------------------------------------------------------------------ branches and tags

    def create_branch(self, name: str, snapshot_id: int | None = None, *,
                      min_snapshots_to_keep: int | None = None,
                      max_snapshot_age_ms: int | None = None,
                      max_ref_age_ms: int | None = None) -> SnapshotRef:
        """A new branch at ``snapshot_id`` (default: the current snapshot) with optional
        retention (spec: Snapshot Retention Policy; every value must be positive)."""
        self._new_name(name, "branch")
        sid = self._current() if snapshot_id is None else self._snapshot(snapshot_id).snapshot_id
        return self._put(name, SnapshotRef(sid, SnapshotRefType.BRANCH, min_snapshots_to_keep,
                                           max_snapshot_age_ms, max_ref_age_ms))

    def create_tag(self, name: str, snapshot_id: int | None = None, *,
                   max_ref_age_ms: int | None = None) -> SnapshotRef:
        """A new tag at ``snapshot_id`` (default: the current snapshot)."""
        self._new_name(name, "tag")
        sid = self._current() if snapshot_id is None else self._snapshot(snapshot_id).snapshot_id
        return self._put(name, SnapshotRef(sid, SnapshotRefType.TAG,
                                           max_ref_age_ms=max_ref_age_ms))

    def replace_branch(self, name: str, source: int | str) -> SnapshotRef:
        """Point branch ``name`` at a snapshot id or at the snapshot of ref ``source`` (its
        retention is kept)."""
        ref = self._branch(name)
        return self._put(name, self._moved(ref, self._target(source, "source")))

    def replace_tag(self, name: str, source: int | str) -> SnapshotRef:
        """Point tag ``name`` at a snapshot id or at the snapshot of ref ``source``."""
        ref = self._tag(name)
        return self._put(name, self._moved(ref, self._target(source, "source")))

    def fast_forward(self, branch: str, to: str) -> SnapshotRef:
        """Move ``branch`` to the snapshot of ref ``to``, which must descend from the branch's
        snapshot (Java's ``fastForwardBranch``)."""
        ref = self._branch(branch)
        target = self._target(_name(to, "ref"), "to")
        if target != ref.snapshot_id and not self._base.is_ancestor(ref.snapshot_id, target):
            raise ValidationError(f"cannot fast-forward {branch!r}: its snapshot "
                                  f"{ref.snapshot_id} is not an ancestor of {to!r}",
                                  field="to", value=to)
        return self._put(branch, self._moved(ref, target))

    def remove_branch(self, name: str) -> None:
        """Remove a branch (``main`` cannot be removed); its snapshots stay until expired."""
        if name == MAIN_BRANCH:
            raise ValidationError("the main branch cannot be removed", field="branch",
                                  value=name)
        self._branch(name)
        del self._refs[name]

    def remove_tag(self, name: str) -> None:
        """Remove a tag."""
        self._tag(name)
        del self._refs[name]

    def rename_branch(self, name: str, new_name: str) -> SnapshotRef:
        """Rename a branch (not ``main``), keeping its snapshot and retention."""
        if name == MAIN_BRANCH:
            raise ValidationError("the main branch cannot be renamed", field="branch",
                                  value=name)
        ref = self._branch(name)
        self._new_name(new_name, "new_name")
        del self._refs[name]
        return self._put(new_name, ref)

    def set_branch_retention(self, name: str, *,
                             min_snapshots_to_keep: int | Unset | None = UNSET,
                             max_snapshot_age_ms: int | Unset | None = UNSET,
                             max_ref_age_ms: int | Unset | None = UNSET) -> SnapshotRef:
        """Set a branch's retention: the values given (None clears one) replace the branch's
        (spec: Snapshot Retention Policy: positive values)."""
        ref = self._branch(name)
        return self._put(name, SnapshotRef(
            ref.snapshot_id, ref.ref_type,
            _pick(min_snapshots_to_keep, ref.min_snapshots_to_keep),
            _pick(max_snapshot_age_ms, ref.max_snapshot_age_ms),
            _pick(max_ref_age_ms, ref.max_ref_age_ms)))

    def set_ref_retention(self, name: str, *, max_ref_age_ms: int | None) -> SnapshotRef:
        """Set how long a branch or tag is kept (``max-ref-age-ms``; None: forever)."""
        ref = self._ref(_name(name, "ref"))
        if ref is None:
            raise self._missing(name, "branch or tag")
        return self._put(name, SnapshotRef(ref.snapshot_id, ref.ref_type,
                                           ref.min_snapshots_to_keep, ref.max_snapshot_age_ms,
                                           max_ref_age_ms))

    # ------------------------------------------------------------------ history

    def rollback_to(self, target: int | str | datetime | None = None, /, *,
                    timestamp_ms: int | None = None, branch: str = MAIN_BRANCH) -> Snapshot:
        """Reset ``branch`` to an ancestor of its head: a snapshot id (int), the snapshot of a
        ref (a str naming one), or the newest ancestor committed strictly before a time (a
        ``datetime``, naive = UTC; an ISO-8601 string; or ``timestamp_ms=``)."""
        from icenb.table.table import timestamp_to_ms

        if (target is None) == (timestamp_ms is None):
            raise ValidationError("give exactly one of a snapshot id, ref, time or "
                                  "timestamp_ms", field="rollback_to", value=target)
        ref = self._branch(branch)
        ancestors = _newest_first(self._base, ref.snapshot_id)
        if isinstance(target, bool):
            raise ValidationError("not a snapshot id, ref or time", field="rollback_to",
                                  value=target)
        if isinstance(target, str) and self._ref(target) is None:
            with contextlib.suppress(ValidationError):
                timestamp_ms = timestamp_to_ms(target)
                target = None
            if target is not None:
                raise self._missing(target, "branch or tag (nor is it an ISO timestamp)")
        elif isinstance(target, datetime):
            timestamp_ms, target = timestamp_to_ms(target), None
        if target is None:
            ms = _snapshot_id_arg(timestamp_ms, "timestamp_ms")
            older = [s for s in ancestors if s.timestamp_ms < ms]
            if not older:
                raise ValidationError(f"cannot roll back {branch!r}: none of its snapshots was "
                                      f"committed before {iso_utc(ms)}", field="timestamp_ms",
                                      value=ms)
            snap = max(older, key=lambda s: s.timestamp_ms)
        else:
            snap = self._snapshot(self._target(target, "snapshot_id"), "snapshot_id")
            if all(s.snapshot_id != snap.snapshot_id for s in ancestors):
                raise ValidationError(f"cannot roll back {branch!r} to snapshot "
                                      f"{snap.snapshot_id}: it is not an ancestor of the "
                                      "branch's snapshot (use set_current_snapshot or "
                                      "replace_branch)", field="snapshot_id",
                                      value=snap.snapshot_id)
        self._put(branch, self._moved(ref, snap.snapshot_id))
        return snap

    def set_current_snapshot(self, snapshot_id: int) -> Snapshot:
        """Make any snapshot of the table the current one (``main``'s head), as Java's
        ``setCurrentSnapshot``; ``main`` keeps its retention."""
        snap = self._snapshot(snapshot_id)
        main = self._ref(MAIN_BRANCH)
        self._put(MAIN_BRANCH, SnapshotRef.branch(snap.snapshot_id) if main is None
                  else self._moved(main, snap.snapshot_id))
        return snap

    # ------------------------------------------------------------------ commit

    def change(self) -> MetadataChange:
        """The updates and requirements of the requests so far (removals first, as Java)."""
        updates: list[TableUpdate] = [RemoveSnapshotRef(n) for n in self._base.refs
                                      if n not in self._refs]
        updates += [SetSnapshotRef.of(n, r) for n, r in self._refs.items()
                    if self._base.refs.get(n) != r]
        requirements = uuid_requirement(self._base)
        requirements += [AssertRefSnapshotId(n, sid) for n, sid in sorted(self._named.items())]
        return MetadataChange(updates, requirements)

    def commit(self) -> None:
        """Commit the requests as one metadata commit (nothing when they change nothing)."""
        if self._done:
            raise ValidationError("these ref changes were committed already",
                                  field="manage_snapshots")
        self._done = True
        change = self.change()
        if not change.updates:
            return
        commit_change(self._table, lambda _metadata: change)

    def __enter__(self) -> ManageSnapshots:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()


# --------------------------------------------------------------------------- empty branch


class _EmptyBranchAppend(FastAppend):
    """Java's ``createBranch`` on a table without snapshots: an empty fast append to the new
    branch, which takes the requested retention."""

    def __init__(self, table: Table, name: str, ref: SnapshotRef) -> None:
        catalog, identifier = table.operations.commit_target()
        super().__init__(catalog, identifier, table.io, branch=name)
        self._ref_settings = ref

    def _apply(self, base: TableMetadata, attempt: int, files: list[str]) -> Attempt:
        if base.refs.get(self.branch) is not None:
            raise CommitConflict(f"ref {self.branch!r} was created concurrently",
                                 field="assert-ref-snapshot-id", value=self.branch)
        if base.current_snapshot_id is not None:
            raise CommitConflict("the table got a snapshot concurrently: create the branch "
                                 "from it", field="current-snapshot-id",
                                 value=base.current_snapshot_id)
        built = super()._apply(base, attempt, files)
        r = self._ref_settings
        updates = [SetSnapshotRef(self.branch, u.snapshot_id, SnapshotRefType.BRANCH,
                                  r.min_snapshots_to_keep, r.max_snapshot_age_ms,
                                  r.max_ref_age_ms) if isinstance(u, SetSnapshotRef) else u
                   for u in built.updates]
        return Attempt(updates, [*built.requirements, *uuid_requirement(base)])


def create_branch(table: Table, name: str, snapshot_id: int | None = None, *,
                  min_snapshots_to_keep: int | None = None,
                  max_snapshot_age_ms: int | None = None,
                  max_ref_age_ms: int | None = None) -> SnapshotRef:
    """``Table.create_branch``: a ref commit, or on a table without a current snapshot (and no
    ``snapshot_id``) an empty snapshot committed to the new branch (as Java)."""
    m = ManageSnapshots(table)
    if snapshot_id is not None or table.metadata.current_snapshot_id is not None:
        ref = m.create_branch(name, snapshot_id, min_snapshots_to_keep=min_snapshots_to_keep,
                              max_snapshot_age_ms=max_snapshot_age_ms,
                              max_ref_age_ms=max_ref_age_ms)
        m.commit()
        return ref
    m._new_name(name, "branch")
    settings = SnapshotRef.branch(1, min_snapshots_to_keep=min_snapshots_to_keep,
                                  max_snapshot_age_ms=max_snapshot_age_ms,
                                  max_ref_age_ms=max_ref_age_ms)  # checks the values
    producer = _EmptyBranchAppend(table, name, settings)
    commit_to_table(table, producer)
    return table.metadata.refs[name]


# --------------------------------------------------------------------------- cherry-pick


def _added_data_files(table: Table, snap: Snapshot) -> list[DataFile]:
    """The data files ``snap`` added (entries ADDED by it, in manifests it wrote), ready to be
    added again: sequence numbers and row ids left to inheritance."""
    from icenb.table.scan.planning import content_files_of

    md = table.metadata
    if snap.root_manifest is not None:
        return _added_v4_data_files(table, snap)
    version = min(md.format_version, 3)
    manifests = [m for m in read_manifest_list(table.io, snap, version)
                 if m.added_snapshot_id == snap.snapshot_id]
    entries = read_manifest_entries(table.io, manifests, version)
    if entries.num_rows == 0:
        return []
    content = pc.struct_field(entries.column("data_file"), "content")
    mask = pc.and_(
        pc.and_(pc.equal(entries.column("status"), pa.scalar(int(EntryStatus.ADDED),
                                                             pa.int32())),
                pc.equal(entries.column("snapshot_id"), pa.scalar(snap.snapshot_id,
                                                                  pa.int64()))),
        pc.equal(content, pa.scalar(int(FileContent.DATA), pa.int32())))
    files = content_files_of(entries.filter(mask), md.specs_by_id, md.schema)
    return [replace(f, first_row_id=None, data_sequence_number=None) for f in files]


def _added_v4_data_files(table: Table, snap: Snapshot) -> list[DataFile]:
    """The data files a v4 snapshot added: ADDED data entries of its root and of the leaves
    it added (inheritance applied), as v3 files to add again (docs/v4-layout.md#maintenance)."""
    from icenb.io.root_manifest import read_leaves, read_root_manifest
    from icenb.spec.content_entry import ContentType
    from icenb.table.scan.v4_planning import manifest_entry_of

    md = table.metadata
    assert snap.root_manifest is not None
    root = read_root_manifest(table.io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    entries = list(root.entries)
    for leaf in read_leaves(table.io, root):
        if leaf.root_entry.status == EntryStatus.ADDED:
            entries += leaf.live_entries()
    out: list[DataFile] = []
    for e in entries:
        if (e.content_type == ContentType.DATA and e.status == EntryStatus.ADDED
                and e.version_info.snapshot_id == snap.snapshot_id):
            spec = md.spec_by_id(e.partition_spec_id)
            assert spec is not None
            f = manifest_entry_of(e, spec.partition_type(md.schema)).data_file
            out.append(replace(f, first_row_id=None, data_sequence_number=None))
    return out


def _ancestor_checks(base: TableMetadata, branch: str, picked: Snapshot) -> None:
    """Java's checks before re-applying a snapshot on a branch: it is not already an ancestor,
    was not picked into the branch before, and its ``wap.id`` was not published there."""
    head = base.snapshot_for_ref(branch)
    ancestors = _newest_first(base, None if head is None else head.snapshot_id)
    sid = picked.snapshot_id
    if any(s.snapshot_id == sid for s in ancestors):
        raise ValidationError(f"cannot cherry-pick snapshot {sid}: it is already an ancestor "
                              f"of {branch!r}", field="snapshot_id", value=sid)
    for s in ancestors:
        if s.summary is not None and s.summary.get(SOURCE_SNAPSHOT_ID) == str(sid):
            raise ValidationError(f"cannot cherry-pick snapshot {sid}: it was already picked "
                                  f"into {branch!r} as snapshot {s.snapshot_id}",
                                  field="snapshot_id", value=sid)
    wap_id = None if picked.summary is None else picked.summary.get(WAP_ID)
    if wap_id:
        for s in ancestors:
            if s.summary is not None and s.summary.get(PUBLISHED_WAP_ID) == wap_id:
                raise ValidationError(
                    f"duplicate request to cherry-pick wap.id {wap_id!r}: published already "
                    f"by snapshot {s.snapshot_id}", field=WAP_ID, value=wap_id)


def _check_pick_attempt(base: TableMetadata, branch: str, picked: Snapshot) -> None:
    """Checks repeated on every commit attempt of a cherry-pick (the branch may have moved)."""
    if base.snapshot_for_ref(branch) is None and branch != MAIN_BRANCH:
        raise CommitConflict(f"branch {branch!r} was removed concurrently", field="branch",
                             value=branch)
    _ancestor_checks(base, branch, picked)


class _PickChecks(SnapshotProducer):
    """Mixed into a producer that re-applies a picked snapshot: the checks run on every
    attempt (the branch may have moved) and the table UUID is asserted."""

    _picked: Snapshot
    _uuid: str | None

    def picking(self, picked: Snapshot, table_uuid: str | None) -> None:
        self._picked = picked
        self._uuid = table_uuid

    def _apply(self, base: TableMetadata, attempt: int, files: list[str]) -> Attempt:
        _check_pick_attempt(base, self.branch, self._picked)
        built = super()._apply(base, attempt, files)
        if self._uuid is not None:
            built.requirements.append(AssertTableUUID(self._uuid))
        return built


class _CherryPickFastAppend(_PickChecks, FastAppend):
    """A picked ``append`` re-applied as a fast append (new manifest first)."""


class _CherryPickMergeAppend(_PickChecks, MergeAppend):
    """A picked ``append`` re-applied as a merge append (``commit.manifest-merge.enabled``,
    as Java's ``CherryPickOperation``, a merging producer)."""


class _CherryPickV4Append(_PickChecks, V4Append):
    """A picked ``append`` re-applied on an EXPERIMENTAL v4 table
    (docs/v4-layout.md#maintenance)."""


class _CherryPickOverwrite(_PickChecks, ReplacePartitions):
    """A picked dynamic partition overwrite re-applied on a branch: its partitions replaced
    by its files, failing when they changed since the picked snapshot's parent."""


class _CherryPickV4Overwrite(_PickChecks, V4ReplacePartitions):
    """A picked dynamic partition overwrite re-applied on an EXPERIMENTAL v4 table
    (docs/v4-layout.md#dynamic-overwrite)."""


def cherry_pick(table: Table, snapshot_id: int, *, branch: str = MAIN_BRANCH) -> Snapshot:
    """``Table.cherry_pick``: see the module docstring; the branch's new head."""
    m = ManageSnapshots(table)
    picked = m._snapshot(snapshot_id)
    ref = m._branch(branch) if branch != MAIN_BRANCH or MAIN_BRANCH in table.refs else None
    head = None if ref is None else ref.snapshot_id
    if picked.parent_snapshot_id == head:  # fast-forward (Java: any operation)
        if ref is None:
            m.set_current_snapshot(picked.snapshot_id)
        else:
            m._put(branch, m._moved(ref, picked.snapshot_id))
        m.commit()
        return picked
    operation = None if picked.summary is None else str(picked.summary.operation)
    summary: Mapping[str, str] = {} if picked.summary is None else picked.summary
    dynamic = operation == Operation.OVERWRITE and summary.get(REPLACE_PARTITIONS) == "true"
    if operation != Operation.APPEND and not dynamic:
        raise ValidationError(f"cannot cherry-pick snapshot {picked.snapshot_id}: not an "
                              "append, a dynamic overwrite or a fast-forward of "
                              f"{branch!r}", field="operation", value=operation)
    _ancestor_checks(table.metadata, branch, picked)
    if dynamic and picked.parent_snapshot_id is not None and (
            head is None or not table.metadata.is_ancestor(picked.parent_snapshot_id, head)):
        raise ValidationError(f"cannot cherry-pick overwrite {picked.snapshot_id}: its parent "
                              f"is not an ancestor of {branch!r}", field="snapshot_id",
                              value=picked.snapshot_id)
    properties = {SOURCE_SNAPSHOT_ID: str(picked.snapshot_id)}
    wap_id = summary.get(WAP_ID)
    if wap_id:
        properties[PUBLISHED_WAP_ID] = wap_id
    catalog, identifier = table.operations.commit_target()
    files = _added_data_files(table, picked)
    producer: (_CherryPickFastAppend | _CherryPickMergeAppend | _CherryPickOverwrite
               | _CherryPickV4Append | _CherryPickV4Overwrite)
    if table.metadata.format_version >= 4 and dynamic:
        producer = _CherryPickV4Overwrite(catalog, identifier, table.io, branch=branch,
                                          snapshot_properties=properties)
        producer.validate_from_snapshot(picked.parent_snapshot_id)
        producer.validate_no_conflicting_data()
        producer.validate_no_conflicting_deletes()
    elif table.metadata.format_version >= 4:
        producer = _CherryPickV4Append(catalog, identifier, table.io, branch=branch,
                                       snapshot_properties=properties)
    elif dynamic:
        producer = _CherryPickOverwrite(catalog, identifier, table.io, branch=branch,
                                        snapshot_properties=properties)
        producer.validate_from_snapshot(picked.parent_snapshot_id)
        producer.validate_no_conflicting_data()
        producer.validate_no_conflicting_deletes()
    elif merge_enabled(table.metadata.properties):
        producer = _CherryPickMergeAppend(catalog, identifier, table.io, branch=branch,
                                          snapshot_properties=properties)
    else:
        producer = _CherryPickFastAppend(catalog, identifier, table.io, branch=branch,
                                         snapshot_properties=properties)
    producer.picking(picked, table.metadata.table_uuid)
    producer.add_files(files)
    return commit_snapshot(table, producer)


def publish_changes(table: Table, wap_id: str, *, branch: str = MAIN_BRANCH) -> Snapshot:
    """``Table.publish_changes``: cherry-pick the one snapshot staged with ``wap.id`` =
    ``wap_id`` onto ``branch`` (Java's ``PublishChangesProcedure``); the branch's new head.
    The table is reloaded first, as the procedure loads it: the pick builds on the branch as
    other writers left it."""
    if not isinstance(wap_id, str) or not wap_id:
        raise ValidationError("a wap id must be a non-empty string", field=WAP_ID, value=wap_id)
    md = table.operations.refresh()
    staged = [s for s in md.snapshots if s.summary is not None
              and s.summary.get(WAP_ID) == wap_id]
    if len(staged) != 1:
        found = ("no snapshot is staged with it" if not staged else "snapshots "
                 f"{', '.join(str(s.snapshot_id) for s in staged)} are all staged with it")
        raise ValidationError(f"cannot publish wap.id {wap_id!r}: {found}", field=WAP_ID,
                              value=wap_id, file=table.metadata_location)
    picked = staged[0]
    head = md.snapshot_for_ref(branch)
    published = [s.snapshot_id for s in _newest_first(md, None if head is None
                                                     else head.snapshot_id)
                 if s.snapshot_id == picked.snapshot_id or (
                     s.summary is not None and s.summary.get(PUBLISHED_WAP_ID) == wap_id)]
    if published:
        raise ValidationError(f"cannot publish wap.id {wap_id!r} again: {branch!r} has it "
                              f"since snapshot {published[-1]}", field=WAP_ID, value=wap_id,
                              file=table.metadata_location)
    return cherry_pick(table, picked.snapshot_id, branch=branch)
