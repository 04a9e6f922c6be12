"""EXPERIMENTAL format-version 4 row deltas: merge-on-read deletes and updates with data DVs.

Proposal, "Row Delta": *"A Row Delta can be performed at the Root Manifest level by adding a
root level file delete vector and adding a new root level file"*; "A Complex Row Delta with
Modified Delete Vectors": *"All delete files are removed with delete vectors applied to delete
manifests, new delete vectors are created in new delete manifests (or at the Root.) Updated data
files can be created in new data manifests (or at the Root.)"* (docs/v4-layout.md §13).

:class:`V4RowDelta` adds data DVs (Puffin, type 1) and data files as :class:`V4Append` places
new files (root entries up to ``write.v4.root-entry-limit``, else one leaf per kind and spec);
a new DV for a data file that already has one replaces it: the old DV is removed as
:class:`V4Overwrite` removes files (DELETED in the root, a manifest DV over its delete leaf).
The new DV must hold the old one's positions (spec, "Deletion Vectors": at most one DV per data
file), as :func:`icenb.table.row_level._write_position_deletes` writes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icenb.errors import IcebergError, ValidationError
from icenb.io.content_manifest import write_leaf_manifest
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind
from icenb.spec.manifest import DataFile, FileContent
from icenb.spec.snapshot import Operation, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.merging_producer import _Counts
from icenb.table.snapshot_producer import (
    CHANGED_PARTITION_COUNT,
    _add_totals,
    _int_property,
    commit_snapshot,
)
from icenb.table.v4_producer import DEFAULT_ROOT_ENTRY_LIMIT, ROOT_ENTRY_LIMIT, content_entry_of
from icenb.table.v4_remove import V4Overwrite

if TYPE_CHECKING:
    from icenb.spec.manifest import FileScanTask
    from icenb.table.table import Table

__all__ = ["V4RowDelta", "v4_row_delta"]


class V4RowDelta(V4Overwrite):
    """Add data DVs and data files to an EXPERIMENTAL v4 table in one snapshot (operation
    ``append`` for rows only, ``delete`` for DVs only, else ``overwrite``: Java's
    ``BaseRowDelta``); see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dvs: list[DataFile] = []

    def operation(self) -> str:
        if self._files and not self._dvs:
            return str(Operation.APPEND)
        if self._dvs and not self._files:
            return str(Operation.DELETE)
        if not self._files and not self._dvs:
            return str(Operation.DELETE if self._remove_paths else Operation.APPEND)
        return str(Operation.OVERWRITE)

    def add_rows(self, files: Iterable[DataFile]) -> V4RowDelta:
        """Add data files written elsewhere."""
        self.add_files(files)
        return self

    def add_deletes(self, files: Iterable[DataFile]) -> V4RowDelta:
        """Add data DVs; each replaces the live DV of its data file, if any (v4 position
        deletes are DVs only; one new DV per data file)."""
        for f in files:
            if (not isinstance(f, DataFile) or f.content != FileContent.POSITION_DELETES
                    or f.content_offset is None or f.referenced_data_file is None):
                raise ValidationError("a v4 row delta adds deletion vectors only",
                                      field="content", file=getattr(f, "file_path", None))
            if any(d.referenced_data_file == f.referenced_data_file for d in self._dvs):
                raise ValidationError("two new deletion vectors for one data file",
                                      field="referenced_data_file", file=f.file_path,
                                      value=f.referenced_data_file)
            self._dvs.append(f)
        self._added = None
        return self

    @property
    def deletes(self) -> tuple[DataFile, ...]:
        return tuple(self._dvs)

    def _removes(self, e: ContentEntry, data_paths: set[str]) -> bool:
        """Also a live DV of a data file that gets a new DV (docs/v4-layout.md §13)."""
        if e.content_type == ContentType.POSITION_DELETE and any(
                d.referenced_data_file == e.referenced_file for d in self._dvs):
            return True
        return super()._removes(e, data_paths)

    def _new_entries(self, base: TableMetadata) -> list[ContentEntry]:
        """The new DVs then the new data files: ADDED root entries when there are at most
        ``write.v4.root-entry-limit`` of them, else one leaf per (kind, spec), delete leaves
        first (the proposal's drawing: DVM2 before DM2). Written once per operation."""
        if self._added is not None:
            return self._added
        entries = [content_entry_of(f, base) for f in [*self._dvs, *self._files]]
        limit = _int_property(base.properties, ROOT_ENTRY_LIMIT, DEFAULT_ROOT_ENTRY_LIMIT)
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
            leaves.append(write_leaf_manifest(
                self._io, location, kind, group, partition_spec_id=spec_id,
                schema=base.schema, partition_type=spec.partition_type(base.schema),
                properties=base.properties))
            self._written.append(location)
            self._manifests_written.append(location)
        self._added = leaves
        return leaves

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        """Java's row-delta summary: added files and DVs, removed (replaced) DVs, totals."""
        counts = _Counts()
        partitions: set[tuple[int, tuple[Any, ...]]] = set()
        for f, added in [*((f, True) for f in [*self._files, *self._dvs]),
                         *((f, False) for f in self._removed)]:
            counts.add(f, added)
            partitions.add((f.spec_id, f.partition))
        out = counts.properties()
        out[CHANGED_PARTITION_COUNT] = str(len(partitions))
        _add_totals(out, parent, counts.totals())
        return out


def v4_row_delta(table: Table, hits: Sequence[tuple[FileScanTask, pa.Table]],
                 new_rows: pa.Table | None, *, branch: str,
                 snapshot_properties: Mapping[str, str] | None) -> Snapshot:
    """Commit a merge-on-read delete (``new_rows`` None) or update on a v4 table: a DV per hit
    data file holding its old DV's positions and the hit rows' ``_pos``, plus ``new_rows``.
    Concurrent commits are not validated yet (as :mod:`icenb.table.v4_remove`)."""
    from icenb.table.row_level import _write_position_deletes

    catalog, identifier = table._writable()
    producer = V4RowDelta(catalog, identifier, table.io, branch=branch,
                          snapshot_properties=snapshot_properties)
    written: list[str] = []
    try:
        producer.check_branch(table.metadata)
        added, _ = _write_position_deletes(table, hits, producer.commit_uuid, written)
        producer.add_deletes(added)
        if new_rows is not None and new_rows.num_rows:
            producer.write(new_rows, table.metadata)
    except BaseException:
        for location in written:
            with contextlib.suppress(IcebergError):
                table.io.delete(location, missing_ok=True)
        producer.abort()
        raise
    producer._written.extend(written)
    return commit_snapshot(table, producer)
