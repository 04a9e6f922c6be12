"""EXPERIMENTAL format-version 4 commits (single-file-commits proposal, docs/v4-layout.md).

Proposal, "Commit Procedure": *"Any new commit starts by using the information in the previous
snapshot's Root manifest file"*; "Adding data files": *"A new Root Manifest is created with
either an ADDED Data File entry or a new ADDED Data Manifest Entry mapping to a new leaf Data
Manifest with the ADDED Data File entry ... All previously existing entries are marked as
EXISTING."*

:class:`V4Append` is the v4 append: the commit loop, snapshot ids, sequence numbers, summary,
retries and cleanup are :class:`~icenb.table.commit.producer.FastAppend`'s; only the tree
written for an attempt differs (a root manifest instead of a manifest list, see
:meth:`V4Append._write_tree`). An append of at most :data:`ROOT_ENTRY_LIMIT` files (table
property, default :data:`DEFAULT_ROOT_ENTRY_LIMIT`) writes one metadata file: the new root.
"""

from __future__ import annotations

import uuid
from typing import Any

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.io.file_io import join_location
from icenb.io.root_manifest import (
    write_leaf_manifest,
    write_root_manifest,
)
from icenb.spec.content_entry import (
    ContentEntry,
    ContentStats,
    ContentType,
    DeletionVectorRef,
    ManifestKind,
    VersionInfo,
)
from icenb.spec.manifest import DataFile, EntryStatus, FileContent
from icenb.spec.properties import V4_ROOT_ENTRY_LIMIT, int_property
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.producer import (
    AttemptTree,
    FastAppend,
    metadata_dir,
)

__all__ = [
    "DEFAULT_ROOT_ENTRY_LIMIT",
    "ROOT_ENTRY_LIMIT",
    "V4Append",
    "content_entry_of",
]

#: Table property: the most new files one commit adds as root entries; more go into one new
#: leaf manifest per partition spec (docs/v4-layout.md#appends). 0: always a leaf.
ROOT_ENTRY_LIMIT = V4_ROOT_ENTRY_LIMIT
#: Default of :data:`ROOT_ENTRY_LIMIT`: the proposal's append examples put one new file in the
#: root and three new files in a leaf.
DEFAULT_ROOT_ENTRY_LIMIT = 2


def content_entry_of(f: DataFile, metadata: TableMetadata) -> ContentEntry:
    """A new content file as the ADDED v4 entry a commit writes (docs/v4-layout.md#content-stats,
    #partition-tuple:
    metrics and partition tuple in ``content_stats``; snapshot id and sequence numbers left
    null to be inherited, an explicit data sequence number kept)."""
    spec = metadata.spec_by_id(f.spec_id)
    if spec is None:
        raise ValidationError("the file's partition spec is not in the table", field="spec_id",
                              file=f.file_path, value=f.spec_id)
    stats = ContentStats.of_file(spec.partition_type(metadata.schema), f)
    seq = f.data_sequence_number
    common: dict[str, Any] = dict(
        location=f.file_path, file_format=f.file_format, partition_spec_id=f.spec_id,
        record_count=f.record_count, file_size_in_bytes=f.file_size_in_bytes,
        version_info=VersionInfo(EntryStatus.ADDED, None, seq, None), content_stats=stats,
        key_metadata=f.key_metadata)
    if f.content == FileContent.DATA:
        return ContentEntry(content_type=ContentType.DATA, sort_order_id=f.sort_order_id,
                            split_offsets=f.split_offsets, first_row_id=f.first_row_id,
                            **common)
    if f.content == FileContent.EQUALITY_DELETES:
        return ContentEntry(content_type=ContentType.EQUALITY_DELETE,
                            equality_ids=f.equality_ids, split_offsets=f.split_offsets,
                            **common)
    if f.content_offset is None or f.content_size_in_bytes is None:
        raise UnsupportedFeature("v4 position deletes are deletion vectors only (proposal: "
                                 "Data Delete Vector)", file=f.file_path, field="content_offset")
    return ContentEntry(content_type=ContentType.POSITION_DELETE,
                        referenced_file=f.referenced_data_file,
                        deletion_vector=DeletionVectorRef(f.content_offset,
                                                          f.content_size_in_bytes),
                        **common)


class V4Append(FastAppend):
    """Append data files to an EXPERIMENTAL v4 table (operation ``append``): the new root keeps
    the parent root's live entries as EXISTING (their manifests untouched, DELETED entries
    dropped), and adds the new files as ADDED root entries when there are at most
    ``write.v4.root-entry-limit`` of them, else one ADDED leaf data manifest per spec
    (proposal: "Appends To the Root Manifest", "Appends to the Root Manifest using new Data
    Manifests")."""

    _added: list[ContentEntry] | None = None
    _writes = 0

    def write(self, data: Any, metadata: TableMetadata, *, moved: bool = False
              ) -> list[DataFile]:
        """Write ``data`` as data files of the table and add them. Data file names count from 1
        per operation id, so a later write of the same operation (an overwrite writes the kept
        rows, then the new ones) takes its own id instead of overwriting the first files.
        ``moved``: existing rows a rewrite moves, carrying their row lineage."""
        operation_id = self._commit_uuid if not self._writes else str(uuid.uuid4())
        files = self._write_rows(data, metadata, operation_id, moved=moved)
        self._writes += 1
        self._files.extend(files)
        return files
    #: The attempt being written: snapshot id, sequence number, the attempt's files.
    _attempt: tuple[int, int, list[str]] | None = None

    def _new_entries(self, base: TableMetadata) -> list[ContentEntry]:
        """The ADDED root entries for the appended files; leaves are written once per
        operation (their entries inherit snapshot id and sequence number, so a retry with
        another snapshot id reuses them)."""
        if self._added is not None:
            return self._added
        entries = [content_entry_of(f, base) for f in self._files]
        limit = int_property(base.properties, ROOT_ENTRY_LIMIT, DEFAULT_ROOT_ENTRY_LIMIT,
                             minimum=0)
        if len(entries) <= limit:
            self._added = entries
            return entries
        by_spec: dict[int, list[ContentEntry]] = {}
        for e in entries:
            by_spec.setdefault(e.partition_spec_id, []).append(e)
        leaves: list[ContentEntry] = []
        for spec_id, group in by_spec.items():
            spec = base.spec_by_id(spec_id)
            assert spec is not None  # checked by content_entry_of
            location = self._new_manifest_location(base)
            self._written.append(location)
            self._manifests_written.append(location)
            leaves.append(write_leaf_manifest(
                self._io, location, ManifestKind.DATA, group, partition_spec_id=spec_id,
                schema=base.schema, partition_type=spec.partition_type(base.schema),
                properties=base.properties))
        self._added = leaves
        return leaves

    def _carried(self, base: TableMetadata, parent: Snapshot | None) -> list[ContentEntry]:
        """The parent root's live entries as EXISTING, with their resolved snapshot ids,
        sequence numbers and row ids (docs/v4-layout.md#inheritance)."""
        if parent is None:
            return []
        from icenb.table.commit.v4_upgrade import parent_root

        return [e if e.status == EntryStatus.EXISTING else e.with_status(EntryStatus.EXISTING)
                for e in parent_root(self._io, base, parent).entries if e.is_live]

    def _compact(self, base: TableMetadata, carried: list[ContentEntry]) -> list[ContentEntry]:
        """The one compaction hook of every v4 producer: the carried entries (after the
        commit's removals, before its new entries) with small children combined per
        ``write.v4.compaction.*`` (docs/v4-layout.md#compaction). New leaves are attempt files."""
        if self._attempt is None:
            return carried
        from icenb.table.commit.v4_compaction import compact_root_entries
        from icenb.table.commit.v4_upgrade import legacy_leaf_reader

        snapshot_id, sequence_number, files = self._attempt

        def location() -> str:
            loc = self._new_manifest_location(base)
            files.append(loc)
            return loc

        result = compact_root_entries(
            self._io, base, carried, new_location=location, snapshot_id=snapshot_id,
            sequence_number=sequence_number, legacy=legacy_leaf_reader(self._io, base))
        self.compacted = result.replaced
        return list(result.entries)

    #: Children the last attempt's compaction replaced (root files, leaves, manifest DVs).
    compacted: tuple[ContentEntry, ...] = ()

    def _root_entries(self, base: TableMetadata, parent: Snapshot | None
                      ) -> list[ContentEntry]:
        """The attempt's root entries: the parent's in their order (compacted,
        :meth:`_compact`), then the new ones (the order of the proposal's drawings)."""
        new = self._new_entries(base)  # leaves of the operation first: stable names
        return self._compact(base, self._carried(base, parent)) + new

    def _write_tree(self, base: TableMetadata, parent: Snapshot | None, snapshot_id: int,
                    sequence_number: int, attempt: int, files: list[str]) -> AttemptTree:
        """Write the attempt's root manifest of :meth:`_root_entries` (the one root writer of
        every v4 producer); the parent's data manifests written before v3 get first row ids
        on the first commit after an upgrade."""
        if base.format_version < 4:
            raise ValidationError(f"{type(self).__name__} commits to format-version 4 tables "
                                  "only", field="format-version", value=base.format_version)
        self._attempt = (snapshot_id, sequence_number, files)
        entries = self._root_entries(base, parent)
        location = join_location(
            metadata_dir(base), f"root-{snapshot_id}-{attempt}-{self._commit_uuid}.avro")
        files.append(location)
        info = write_root_manifest(self._io, location, entries, sequence_number=sequence_number,
                                   first_row_id=base.next_row_id, properties=base.properties,
                                   upgrade=parent is not None and parent.root_manifest is None)
        return AttemptTree(root_manifest=location, first_row_id=info.first_row_id,
                     added_rows=info.added_rows)

