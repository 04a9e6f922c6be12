"""EXPERIMENTAL format-version 4 dynamic partition overwrite (docs/v4-layout.md#dynamic-overwrite).

v3's :class:`~icenb.table.commit.overwrite.ReplacePartitions` (Java's
``BaseReplacePartitions``) on a root manifest: each attempt removes every live file of the
parent whose (spec id, partition) is one of the added files' partitions - data files, their
data DVs and the delete files of those partitions - then adds the new files; an unpartitioned
table is replaced whole. Removals are those of :class:`~icenb.table.commit.v4_overwrite.V4Overwrite`
(proposal, "Overwrite Files in Root/Leaf Manifest": a root entry becomes DELETED, a leaf entry
is marked by a new manifest DV over its leaf; docs/v4-layout.md#removals). Operation ``overwrite``,
summary
``replace-partitions=true``; concurrent-commit validation as v3's when asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from icenb.errors import CommitConflict
from icenb.io.root_manifest import ContentManifest, read_leaves
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.manifest import DataFile, FileContent
from icenb.spec.snapshot import MAIN_BRANCH, REPLACE_PARTITIONS, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.producer import commit_snapshot
from icenb.table.commit.v4_overwrite import V4Overwrite, may_hold
from icenb.table.commit.v4_upgrade import legacy_leaf_reader, parent_root
from icenb.table.commit.v4_validation import snapshot_changes, snapshots_since
from icenb.table.commit.validation import ADDED_DATA_OPS, DELETED_DATA_OPS, NEW_DELETE_OPS

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["V4ReplacePartitions", "v4_dynamic_partition_overwrite"]

_Part = tuple[int, tuple[Any, ...]]


class V4ReplacePartitions(V4Overwrite):
    """Replace the partitions of the added data files of an EXPERIMENTAL v4 table (every row
    when the table is unpartitioned), in one ``overwrite`` snapshot; see the module
    docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.overwrite = True
        self._drop: set[_Part] = set()
        self._whole = False
        self._base: TableMetadata | None = None

    def add_file(self, file: DataFile) -> V4ReplacePartitions:
        """Add a data file: its partition is replaced."""
        self.add_files([file])
        return self

    def _partitions(self, base: TableMetadata) -> None:
        """The partitions to drop (v3's ``ReplacePartitions._manifests``): those of the added
        files; everything when the table's spec, or an added file's, is unpartitioned."""
        self._drop = {(f.spec_id, tuple(f.partition)) for f in self._files}
        self._whole = base.spec.is_unpartitioned or any(
            (s := base.spec_by_id(sid)) is not None and s.is_unpartitioned
            for sid, _ in self._drop)

    def _in_scope(self, base: TableMetadata, e: ContentEntry) -> bool:
        if self._whole:
            return True
        f = self._data_file(base, e)
        return (f.spec_id, tuple(f.partition)) in self._drop

    def _live_data_in_scope(self, base: TableMetadata, parent: Snapshot) -> list[DataFile]:
        """The parent's live data files in the partitions to drop, reading only the data
        leaves whose partition summaries may hold one (docs/v4-layout.md#removals)."""
        root = parent_root(self._io, base, parent)
        out = [self._data_file(base, e) for e in root.entries
               if e.is_live and e.content_type == ContentType.DATA and self._in_scope(base, e)]
        leaves: list[ContentEntry] = []
        for e in root.entries:
            if not (e.is_live and e.content_type == ContentType.DATA_MANIFEST):
                continue
            spec = base.spec_by_id(e.partition_spec_id)
            summaries = None if e.content_stats is None else e.content_stats.partitions
            if self._whole or spec is None or summaries is None or any(
                    sid == e.partition_spec_id
                    and may_hold(summaries, spec.partition_type(base.schema), part)
                    for sid, part in self._drop):
                leaves.append(e)
        if leaves:
            dvs = [e for e in root.entries
                   if e.is_live and e.content_type == ContentType.MANIFEST_DV]
            pruned = replace(root, entries=tuple([*leaves, *dvs]))
            for leaf in read_leaves(self._io, pruned, legacy=legacy_leaf_reader(self._io, base)):
                out.extend(self._data_file(base, e) for e in leaf.live_entries()
                           if e.content_type == ContentType.DATA and self._in_scope(base, e))
        return out

    def _new_root_entries(self, base: TableMetadata, parent: Snapshot | None
                          ) -> list[ContentEntry]:
        """Per attempt: the files to remove are the parent's live data files in the replaced
        partitions (recomputed on a retry's new parent), then :class:`V4Overwrite`'s root."""
        self._base = base
        self._partitions(base)
        self._remove_paths.clear()
        self._remove_parts.clear()
        if parent is not None:
            for f in self._live_data_in_scope(base, parent):
                self.delete_file(f)
        return super()._new_root_entries(base, parent)

    def _removes(self, e: ContentEntry, data_paths: set[str]) -> bool:
        """Also every delete file of a replaced partition (v3 drops a partition's delete
        files with its data files)."""
        if super()._removes(e, data_paths):
            return True
        return (e.content_type in (ContentType.POSITION_DELETE, ContentType.EQUALITY_DELETE)
                and self._base is not None and self._in_scope(self._base, e))

    def _delete_partitions(self) -> list[_Part]:
        return sorted(self._drop, key=repr)

    def _leaves_to_read(self, base: TableMetadata, root: ContentManifest,
                        data_paths: set[str] | None) -> list[ContentEntry] | None:
        if self._whole:
            return None  # every file goes: read every leaf
        return super()._leaves_to_read(base, root, data_paths)

    # ------------------------------------------------------------------ validation

    def _validate_attempt(self, base: TableMetadata, parent: Snapshot | None) -> None:
        """v3's ``ReplacePartitions`` checks against the snapshots since the start: a
        concurrent data file added to (``validate_no_conflicting_data``), or data file removed
        from / delete file added to (``validate_no_conflicting_deletes``), a replaced
        partition conflicts; any of them when the whole table is replaced."""
        if parent is None or not (self._validate_data or self._validate_deletes):
            return
        history = snapshots_since(base, parent, self._start())
        for snap in history:
            op = None if snap.summary is None else str(snap.summary.operation)
            checks: list[tuple[Iterable[DataFile], str, str]] = []
            ch = None
            if self._validate_data and op in ADDED_DATA_OPS:
                ch = snapshot_changes(self._io, base, snap)
                checks.append(([f for f in ch.added if f.content == FileContent.DATA],
                               "added data", "validate_no_conflicting_data"))
            if self._validate_deletes and op in DELETED_DATA_OPS | NEW_DELETE_OPS:
                ch = ch or snapshot_changes(self._io, base, snap)
                if op in DELETED_DATA_OPS:
                    checks.append(([f for f in ch.removed if f.content == FileContent.DATA],
                                   "deleted data", "validate_no_conflicting_deletes"))
                if op in NEW_DELETE_OPS:
                    checks.append(([f for f in ch.added if f.content != FileContent.DATA],
                                   "added delete", "validate_no_conflicting_deletes"))
            for files, what, field in checks:
                for f in files:
                    if self._whole or (f.spec_id, tuple(f.partition)) in self._drop:
                        scope = "the replaced table" if self._whole else "a replaced partition"
                        raise CommitConflict(
                            f"found a conflicting {what} file in {scope} (snapshot "
                            f"{snap.snapshot_id})", file=f.file_path, field=field,
                            value=f.partition)

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        """v3's: :class:`V4Overwrite`'s counts plus ``replace-partitions=true``."""
        return {REPLACE_PARTITIONS: "true", **super()._summary(base, parent)}


def v4_dynamic_partition_overwrite(table: Table, data: Any, *, branch: str = MAIN_BRANCH,
                                   snapshot_properties: Mapping[str, str] | None = None
                                   ) -> Snapshot:
    """``Table.dynamic_partition_overwrite`` on a v4 table: ``data``'s partitions replaced by
    its rows (as v3: concurrent commits re-applied on the new parent, no conflict
    validation)."""
    from icenb.table.commit import table_producer

    producer = table_producer("replace_partitions", table, V4ReplacePartitions, branch=branch,
                              snapshot_properties=snapshot_properties)
    try:
        producer.check_branch(table.metadata)
        producer.write(data, table.metadata)
    except BaseException:
        producer.abort()
        raise
    return commit_snapshot(table, producer)
