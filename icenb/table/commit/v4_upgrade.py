"""Upgrade a v3 table to EXPERIMENTAL format-version 4 without rewriting its manifests.

Proposal, "Upgrade": *"Migrating from a V3 Manifest List to a V4 Root Manifest requires just
propagating every Manifest List Entry into a V4 RootManifest entry. The first commit to a V4
table must perform this migration."* icenb's choices: docs/v4-layout.md#upgrade.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from icenb.errors import InvalidMetadata
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_list
from icenb.io.root_manifest import ContentManifest, LegacyLeafReader, read_root_manifest
from icenb.spec.content_entry import (
    ContentEntry,
    ContentStats,
    ContentType,
    LegacyPositionDeletes,
    ManifestKind,
    ManifestStats,
    VersionInfo,
    manifest_file_of,
)
from icenb.spec.manifest import (
    ContentKind,
    DataFile,
    EntryStatus,
    FileFormat,
    ManifestContent,
    ManifestFile,
)
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata

__all__ = [
    "legacy_leaf_reader",
    "manifest_file_of",
    "root_entries_of_manifest_list",
    "root_entry_of",
]


def _count(v: int | None, name: str, m: ManifestFile) -> int:
    if v is None:
        raise InvalidMetadata("a v4 root entry needs the manifest list's counts",
                              file=m.manifest_path, field=name)
    return v


def root_entry_of(m: ManifestFile) -> ContentEntry:
    """The EXISTING root entry (type 3 or 4) of a v3 manifest-list entry: same file, counts as
    ``manifest_stats``, partition summaries as ``content_stats.partitions``, sequence numbers,
    adding snapshot and ``first_row_id`` kept (docs/v4-layout.md#upgrade)."""
    stats = ManifestStats(
        _count(m.added_files_count, "added_files_count", m),
        _count(m.existing_files_count, "existing_files_count", m),
        _count(m.deleted_files_count, "deleted_files_count", m),
        _count(m.added_rows_count, "added_rows_count", m),
        _count(m.existing_rows_count, "existing_rows_count", m),
        _count(m.deleted_rows_count, "deleted_rows_count", m),
        m.min_sequence_number)
    is_data = m.content == ManifestContent.DATA
    return ContentEntry(
        content_type=ContentType.DATA_MANIFEST if is_data else ContentType.DELETE_MANIFEST,
        location=m.manifest_path, file_format=FileFormat.AVRO,
        partition_spec_id=m.partition_spec_id, record_count=stats.entries,
        version_info=VersionInfo(EntryStatus.EXISTING, m.added_snapshot_id, m.sequence_number,
                                 m.sequence_number),
        file_size_in_bytes=m.manifest_length,
        content_stats=ContentStats(partitions=m.partitions), manifest_stats=stats,
        key_metadata=m.key_metadata, first_row_id=m.first_row_id if is_data else None)


def root_entries_of_manifest_list(io: FileIO, metadata: TableMetadata, parent: Snapshot
                                  ) -> list[ContentEntry]:
    """The root entries the first v4 commit carries from a manifest-list parent, in list
    order (proposal: "Upgrade")."""
    return [root_entry_of(m) for m in read_manifest_list(io, parent, 3)]


def parent_root(io: FileIO, metadata: TableMetadata, parent: Snapshot) -> ContentManifest:
    """The root a v4 commit builds on: the parent's root manifest, or on the first v4 commit
    after an upgrade its manifest list as root entries (docs/v4-layout.md#upgrade)."""
    if parent.root_manifest is None:
        return ContentManifest(parent.manifest_list or "", ManifestKind.ROOT,
                               tuple(root_entries_of_manifest_list(io, metadata, parent)), 0)
    return read_root_manifest(io, parent.root_manifest, snapshot_id=parent.snapshot_id,
                              sequence_number=parent.sequence_number)


def legacy_position_deletes(f: DataFile, metadata: TableMetadata, version_info: VersionInfo
                            ) -> LegacyPositionDeletes:
    """A v2 position delete file of a v1-v3 manifest as the read-only entry a v4 commit
    carries (its partition tuple and metrics in ``content_stats``, as a v4 file's)."""
    spec = metadata.spec_by_id(f.spec_id)
    if spec is None:
        raise InvalidMetadata("the file's partition spec is not in the table", field="spec_id",
                              file=f.file_path, value=f.spec_id)
    stats = ContentStats.of_file(spec.partition_type(metadata.schema), f)
    return LegacyPositionDeletes(
        content_type=ContentType.POSITION_DELETE, location=f.file_path,
        file_format=f.file_format, partition_spec_id=f.spec_id, record_count=f.record_count,
        file_size_in_bytes=f.file_size_in_bytes, version_info=version_info,
        content_stats=stats, referenced_file=f.referenced_file,
        key_metadata=f.key_metadata)


def legacy_leaf_reader(io: FileIO, metadata: TableMetadata) -> LegacyLeafReader:
    """A reader of the v1-v3 manifests a v4 root lists after an upgrade: every record in file
    order (ordinal = position, docs/v4-layout.md#ordinals) as a content entry with its status and
    every inherited value (snapshot id, sequence numbers, first row id) explicit, as v3's
    reader resolves them from the root entry (:func:`manifest_file_of`). A position delete file
    that is not a DV is a :class:`~icenb.spec.content_entry.LegacyPositionDeletes`."""
    from icenb.table.commit.merging import read_entries
    from icenb.table.commit.v4_append import content_entry_of

    def read(root_entry: ContentEntry) -> Sequence[ContentEntry]:
        out: list[ContentEntry] = []
        for e in read_entries(io, manifest_file_of(root_entry), metadata):
            vi = VersionInfo(e.status, e.snapshot_id, e.sequence_number,
                             e.file_sequence_number)
            if e.data_file.kind is ContentKind.POSITION_DELETES:
                out.append(legacy_position_deletes(e.data_file, metadata, vi))
            else:
                out.append(replace(content_entry_of(e.data_file, metadata), version_info=vi))
        return out

    return read
