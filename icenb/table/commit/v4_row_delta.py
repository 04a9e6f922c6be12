"""EXPERIMENTAL format-version 4 row deltas: merge-on-read deletes and updates with data DVs.

Proposal, "Row Delta": *"A Row Delta can be performed at the Root Manifest level by adding a
root level file delete vector and adding a new root level file"*; "A Complex Row Delta with
Modified Delete Vectors": *"All delete files are removed with delete vectors applied to delete
manifests, new delete vectors are created in new delete manifests (or at the Root.) Updated data
files can be created in new data manifests (or at the Root.)"* (docs/v4-layout.md#row-deltas).

:class:`V4RowDelta` adds data DVs (Puffin, type 1) and data files as :class:`V4Append` places
new files (root entries up to ``write.v4.root-entry-limit``, else one leaf per kind and spec);
a new DV for a data file that already has one replaces it: the old DV is removed as
:class:`V4Overwrite` removes files (DELETED in the root, a manifest DV over its delete leaf).
The new DV must hold the old one's positions (spec, "Deletion Vectors": at most one DV per data
file), as :func:`icenb.table.row_level.merge_on_read.write_deletes_for_hits` writes it.

Equality delete files (type 2, ``equality_ids``) are added the same way (proposal, "Adding data
files": *"The same procedure is used for Equality Deletes or Delete Vectors"*):
:func:`v4_equality_delta` is ``delete_by_key`` and ``upsert`` of
:mod:`icenb.table.row_level.merge_on_read`
on a v4 table (docs/v4-layout.md#equality-deletes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icenb.errors import IcebergError, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.root_manifest import read_root_manifest, write_leaf_manifest
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind
from icenb.spec.manifest import DataFile, FileContent
from icenb.spec.properties import int_property
from icenb.spec.snapshot import CHANGED_PARTITION_COUNT, Operation, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import SummaryCounts
from icenb.table.commit.producer import (
    add_totals,
    commit_snapshot,
)
from icenb.table.commit.v4_append import (
    DEFAULT_ROOT_ENTRY_LIMIT,
    ROOT_ENTRY_LIMIT,
    content_entry_of,
)
from icenb.table.commit.v4_overwrite import V4Overwrite
from icenb.table.commit.validation import validate_row_delta

if TYPE_CHECKING:
    from icenb.spec.expressions import Expression
    from icenb.spec.manifest import FileScanTask
    from icenb.table.table import Table

__all__ = ["V4RowDelta", "v4_equality_delta", "v4_live_data_spec_ids", "v4_row_delta"]


class V4RowDelta(V4Overwrite):
    """Add data DVs, equality delete files and data files to an EXPERIMENTAL v4 table in one
    snapshot (operation ``append`` for rows only, ``delete`` for deletes only, else
    ``overwrite``: Java's ``BaseRowDelta``); see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dvs: list[DataFile] = []
        self._eq_deletes: list[DataFile] = []

    def operation(self) -> str:
        deletes = self._dvs or self._eq_deletes
        if self._files and not deletes:
            return str(Operation.APPEND)
        if deletes and not self._files:
            return str(Operation.DELETE)
        if not self._files and not deletes:
            return str(Operation.DELETE if self._remove_paths else Operation.APPEND)
        return str(Operation.OVERWRITE)

    def add_rows(self, files: Iterable[DataFile]) -> V4RowDelta:
        """Add data files written elsewhere."""
        self.add_files(files)
        return self

    def add_deletes(self, files: Iterable[DataFile]) -> V4RowDelta:
        """Add data DVs and equality delete files; a DV replaces the live DV of its data file,
        if any (v4 position deletes are DVs only; one new DV per data file). An equality
        delete file needs ``equality_ids`` (spec: "Equality Delete Files")."""
        for f in files:
            if isinstance(f, DataFile) and f.content == FileContent.EQUALITY_DELETES:
                if not f.equality_ids:
                    raise ValidationError("an equality delete file needs equality_ids",
                                          field="equality_ids", file=f.file_path)
                self._eq_deletes.append(f)
                continue
            if (not isinstance(f, DataFile) or f.content != FileContent.POSITION_DELETES
                    or f.content_offset is None or f.referenced_data_file is None):
                raise ValidationError("a v4 row delta adds deletion vectors and equality "
                                      "deletes only", field="content",
                                      file=getattr(f, "file_path", None))
            if any(d.referenced_data_file == f.referenced_data_file for d in self._dvs):
                raise ValidationError("two new deletion vectors for one data file",
                                      field="referenced_data_file", file=f.file_path,
                                      value=f.referenced_data_file)
            self._dvs.append(f)
        self._added = None
        return self

    @property
    def deletes(self) -> tuple[DataFile, ...]:
        """The added delete files: DVs, then equality delete files."""
        return (*self._dvs, *self._eq_deletes)

    #: v3 ``RowDelta``'s validation rules (docs/v4-layout.md#row-deltas)
    _row_delta_rules = True

    def _new_dvs(self) -> list[DataFile]:
        return list(self._dvs)

    def validate_no_conflicting_data_files(self) -> V4RowDelta:
        """Java's ``RowDelta`` name of :meth:`validate_no_conflicting_data`."""
        self.validate_no_conflicting_data()
        return self

    def validate_no_conflicting_delete_files(self) -> V4RowDelta:
        """Java's ``RowDelta`` name of :meth:`validate_no_conflicting_deletes`."""
        self.validate_no_conflicting_deletes()
        return self

    def _delete_partitions(self) -> list[tuple[int, tuple[Any, ...]]]:
        """The partitions of data files getting a new DV: delete leaves to read."""
        return [(d.spec_id, tuple(d.partition)) for d in self._dvs]

    def _removes(self, e: ContentEntry, data_paths: set[str]) -> bool:
        """Also a live DV of a data file that gets a new DV (docs/v4-layout.md#row-deltas)."""
        if e.content_type == ContentType.POSITION_DELETE and any(
                d.referenced_data_file == e.referenced_file for d in self._dvs):
            return True
        return super()._removes(e, data_paths)

    def _new_entries(self, base: TableMetadata) -> list[ContentEntry]:
        """The new DVs, equality deletes, then data files: ADDED root entries when there are
        at most ``write.v4.root-entry-limit`` of them, else one leaf per (kind, spec), delete
        leaves first (the proposal's drawing: DVM2 before DM2). Written once per operation."""
        if self._added is not None:
            return self._added
        entries = [content_entry_of(f, base)
                   for f in [*self._dvs, *self._eq_deletes, *self._files]]
        limit = int_property(base.properties, ROOT_ENTRY_LIMIT, DEFAULT_ROOT_ENTRY_LIMIT,
                             minimum=0)
        if len(entries) <= limit:
            self._added = entries
            return entries
        groups: dict[tuple[ManifestKind, int], list[ContentEntry]] = {}
        for e in entries:
            kind = (ManifestKind.DATA if e.content_type == ContentType.DATA
                    else ManifestKind.DELETE)
            groups.setdefault((kind, e.partition_spec_id), []).append(e)
        leaves: list[ContentEntry] = []
        for (kind, spec_id), group in groups.items():
            spec = base.spec_by_id(spec_id)
            assert spec is not None  # checked by content_entry_of
            location = self._new_manifest_location(base)
            self._written.append(location)
            self._manifests_written.append(location)
            leaves.append(write_leaf_manifest(
                self._io, location, kind, group, partition_spec_id=spec_id,
                schema=base.schema, partition_type=spec.partition_type(base.schema),
                properties=base.properties))
        self._added = leaves
        return leaves

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        """Java's row-delta summary: added files and DVs, removed (replaced) DVs, totals."""
        counts = SummaryCounts()
        partitions: set[tuple[int, tuple[Any, ...]]] = set()
        for f, added in [*((f, True) for f in [*self._files, *self.deletes]),
                         *((f, False) for f in self._removed)]:
            counts.add(f, added)
            partitions.add((f.spec_id, f.partition))
        out = counts.properties()
        out[CHANGED_PARTITION_COUNT] = str(len(partitions))
        add_totals(out, parent, counts.totals())
        return out


def _new_row_delta(table: Table, branch: str, snapshot_properties: Mapping[str, str] | None
                   ) -> V4RowDelta:
    from icenb.table.commit import table_producer

    return table_producer("row_delta", table, V4RowDelta, branch=branch,
                          snapshot_properties=snapshot_properties)


def v4_row_delta(table: Table, hits: Sequence[tuple[FileScanTask, pa.Table]],
                 new_rows: pa.Table | None, *, branch: str,
                 snapshot_properties: Mapping[str, str] | None,
                 snapshot: Snapshot | None = None, conflict_filter: Expression | None = None,
                 isolation: str | None = None) -> Snapshot:
    """Commit a merge-on-read delete (``new_rows`` None) or update on a v4 table: a DV per hit
    data file holding its old DV's positions and the hit rows' ``_pos``, plus ``new_rows``.
    With ``isolation`` (the level of ``write.delete|update.isolation-level``), validated
    against commits since ``snapshot`` as v3
    (:func:`~icenb.table.commit.validation.validate_row_delta`); a concurrent DV for a hit
    data file always conflicts."""
    from icenb.spec.expressions import ALWAYS_TRUE
    from icenb.table.row_level.merge_on_read import write_deletes_for_hits

    producer = _new_row_delta(table, branch, snapshot_properties)
    written: list[str] = []
    try:
        producer.check_branch(table.metadata)
        if isolation is not None:
            validate_row_delta(producer, None if snapshot is None else snapshot.snapshot_id,
                               ALWAYS_TRUE if conflict_filter is None else conflict_filter,
                               (t.data_file.file_path for t, _ in hits), isolation)
        added, _ = write_deletes_for_hits(table, hits, producer.commit_uuid, written)
        producer.add_deletes(added)
        if new_rows is not None and new_rows.num_rows:
            producer.write(new_rows, table.metadata, moved=True)
    except BaseException:
        for location in written:
            with contextlib.suppress(IcebergError):
                table.io.delete(location, missing_ok=True)
        producer.abort()
        raise
    producer._written.extend(written)
    return commit_snapshot(table, producer)


def v4_live_data_spec_ids(io: FileIO, snapshot: Snapshot) -> list[int]:
    """Partition specs of a v4 snapshot that may hold live data, in root order: live data file
    entries, and live data manifests with added or existing files not all removed by their
    manifest DV (whose ordinals are live entries, docs/v4-layout.md#removals) - as v3 reads them
    from the manifest list for ``delete_by_key`` / ``upsert``."""
    assert snapshot.root_manifest is not None
    root = read_root_manifest(io, snapshot.root_manifest, snapshot_id=snapshot.snapshot_id,
                              sequence_number=snapshot.sequence_number)
    live = [e for e in root.entries if e.is_live]
    removed = {e.referenced_file: e.record_count for e in live
               if e.content_type == ContentType.MANIFEST_DV}
    ids: dict[int, None] = {}
    for e in live:
        if e.content_type == ContentType.DATA:
            ids.setdefault(e.partition_spec_id, None)
        elif e.content_type == ContentType.DATA_MANIFEST and e.manifest_stats is not None:
            ms = e.manifest_stats
            files = ms.added_files_count + ms.existing_files_count
            if files > removed.get(e.location, 0):
                ids.setdefault(e.partition_spec_id, None)
    return list(ids)


def v4_equality_delta(table: Table, snapshot: Snapshot | None, keys: pa.Table,
                      names: Sequence[str], rows: pa.Table | None, *, branch: str,
                      snapshot_properties: Mapping[str, str] | None,
                      isolation: str | None = None) -> Snapshot | None:
    """Commit ``delete_by_key`` (``rows`` None) or ``upsert`` on a v4 table: equality delete
    files of ``keys`` for each spec with live data, plus ``rows``, in one snapshot; the new
    rows inherit the deletes' sequence number, so only older rows are deleted (spec: "Scan
    Planning"). None when there is nothing to commit. With ``isolation``, validated as v3
    with the keys as conflict filter
    (:func:`~icenb.table.commit.validation.validate_row_delta`,
    docs/v4-layout.md#equality-deletes)."""
    from icenb.table.row_level.merge_on_read import equality_deletes_of, key_filter

    producer = _new_row_delta(table, branch, snapshot_properties)
    written: list[str] = []
    try:
        producer.check_branch(table.metadata)
        deletes = equality_deletes_of(table, snapshot, keys, names, producer.commit_uuid,
                                    written)
        if deletes:
            producer.add_deletes(deletes)
        if isolation is not None:
            validate_row_delta(producer, None if snapshot is None else snapshot.snapshot_id,
                               key_filter(keys), (), isolation)
        if rows is not None:
            producer.write(rows, table.metadata)
        elif not deletes:
            producer.abort()
            return None
    except BaseException:
        for location in written:
            with contextlib.suppress(IcebergError):
                table.io.delete(location, missing_ok=True)
        producer.abort()
        raise
    producer._written.extend(written)
    return commit_snapshot(table, producer)
