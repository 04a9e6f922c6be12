"""Manifest compaction during EXPERIMENTAL format-version 4 commits (docs/v4-layout.md#compaction).

Proposal, "Manifest Compaction": *"During any commit, existing Data Files, Manifests and
Manifest Delete Vectors can be combined to reduce the total number of children under the root
manifest ... Any compactions performed must not create files which cause a net change to table
state. Combining an existing delete vector with its target is allowed, but combining entries
for new deletes produced or new data files created in the snapshot with an existing manifest to
create a new manifest is not allowed."* Example "Manifest Compaction During an Append": M1 and
M2 with their DVs become one leaf M3 (EXISTING) holding the surviving files as EXISTING.

:func:`compact_root_entries` takes the entries a commit carries from its parent root (after the
commit's own removals) and returns them with groups of small children replaced by new leaves.
Only EXISTING root files, EXISTING manifests and their EXISTING manifest DVs are combined; a
manifest that this commit marks with a new DV, and every ADDED or DELETED entry, stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.root_manifest import LegacyLeafReader, read_leaf_manifest, write_leaf_manifest
from icenb.reprs import safe_repr
from icenb.spec.content_entry import (
    ContentEntry,
    ContentType,
    LegacyPositionDeletes,
    ManifestKind,
    VersionInfo,
    manifest_kind_for,
)
from icenb.spec.manifest import EntryStatus
from icenb.spec.properties import (
    V4_COMPACTION_ENABLED,
    V4_COMPACTION_MIN_COUNT,
    V4_COMPACTION_TARGET_SIZE_BYTES,
    bool_property,
    int_property,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import pack_end

__all__ = [
    "COMPACTION_ENABLED",
    "COMPACTION_MIN_COUNT",
    "COMPACTION_TARGET_SIZE_BYTES",
    "DEFAULT_MIN_COUNT",
    "DEFAULT_TARGET_SIZE_BYTES",
    "ROOT_FILE_WEIGHT",
    "Compaction",
    "compact_root_entries",
    "compaction_enabled",
]

#: Table property: whether v4 commits compact the root's children (default true, as v3's
#: ``commit.manifest-merge.enabled``).
COMPACTION_ENABLED = V4_COMPACTION_ENABLED
#: Table property: a (kind, partition spec) group of root children is compacted once it has
#: at least this many children: root files and leaf manifests (v3's
#: ``commit.manifest.min-count-to-merge``, default 100).
COMPACTION_MIN_COUNT = V4_COMPACTION_MIN_COUNT
#: Table property: the size a compacted leaf aims at (v3's
#: ``commit.manifest.target-size-bytes``, default 8 MiB).
COMPACTION_TARGET_SIZE_BYTES = V4_COMPACTION_TARGET_SIZE_BYTES
DEFAULT_MIN_COUNT = 100
DEFAULT_TARGET_SIZE_BYTES = 8 * 1024 * 1024
#: Bytes a root-level file is counted as when packing (roughly one entry with metrics).
ROOT_FILE_WEIGHT = 1024

_FILE_KIND = {
    ContentType.DATA: ManifestKind.DATA,
    ContentType.POSITION_DELETE: ManifestKind.DELETE,
    ContentType.EQUALITY_DELETE: ManifestKind.DELETE,
}


def compaction_enabled(properties: Mapping[str, str]) -> bool:
    """``write.v4.compaction.enabled`` (default true)."""
    return bool_property(properties, COMPACTION_ENABLED, True, strict=True)


@safe_repr
@dataclass(frozen=True)
class Compaction:
    """The carried root entries after compaction, the new leaves' root entries (EXISTING) and
    the children they replaced (root files, leaves and manifest DVs)."""

    entries: tuple[ContentEntry, ...]
    written: tuple[ContentEntry, ...] = ()
    replaced: tuple[ContentEntry, ...] = ()


def _kind(e: ContentEntry) -> ManifestKind:
    if e.content_type.is_manifest:
        return manifest_kind_for(e.content_type)
    return _FILE_KIND[e.content_type]


def compact_root_entries(io: FileIO, metadata: TableMetadata, entries: Sequence[ContentEntry],
                         *, new_location: Callable[[], str], snapshot_id: int,
                         sequence_number: int, legacy: LegacyLeafReader | None = None
                         ) -> Compaction:
    """Compact the carried root ``entries`` of a commit (``snapshot_id``, ``sequence_number``)
    per the table's ``write.v4.compaction.*`` properties (docs/v4-layout.md#compaction).

    Per (kind, partition spec) group with at least the minimum count of live children, the
    eligible children (EXISTING root files; EXISTING leaves not targeted by a DV of this commit,
    except leaves already at the target size without a DV) are packed by size like v3's
    manifest merge; each bin of two or more (or holding a leaf with a DV) becomes new leaves
    whose entries are the bin's live files, EXISTING with their resolved snapshot id, sequence
    numbers and first row id. A new leaf's root entry is EXISTING with this commit's snapshot id
    and sequence number; it takes the place of the bin's first child; the bin's DVs go.
    ``new_location`` names each new leaf (the caller deletes them if the attempt fails)."""
    props = metadata.properties
    if not compaction_enabled(props):
        return Compaction(tuple(entries))
    min_count = int_property(props, COMPACTION_MIN_COUNT, DEFAULT_MIN_COUNT, minimum=0)
    target = int_property(props, COMPACTION_TARGET_SIZE_BYTES, DEFAULT_TARGET_SIZE_BYTES,
                          minimum=0)
    live_dvs: dict[str, ContentEntry] = {}
    frozen: set[str] = set()
    for e in entries:
        if e.content_type == ContentType.MANIFEST_DV and e.referenced_file is not None:
            if e.status != EntryStatus.EXISTING:
                frozen.add(e.referenced_file)  # changed by this commit: no net change allowed
            elif e.is_live:
                live_dvs[e.referenced_file] = e
    groups: dict[tuple[ManifestKind, int], list[int]] = {}
    for i, e in enumerate(entries):
        if e.is_live and e.content_type != ContentType.MANIFEST_DV:
            groups.setdefault((_kind(e), e.partition_spec_id), []).append(i)

    replace_at: dict[int, list[ContentEntry]] = {}  # first child's index -> new leaves
    dropped: set[int] = set()
    written: list[ContentEntry] = []
    replaced: list[ContentEntry] = []
    for (kind, spec_id), members in groups.items():
        if len(members) < min_count:
            continue
        candidates: list[tuple[int, int]] = []  # (index, weight)
        for i in members:
            e = entries[i]
            if e.status != EntryStatus.EXISTING:
                continue
            if not e.content_type.is_manifest:
                candidates.append((i, ROOT_FILE_WEIGHT))
                continue
            if e.location in frozen:
                continue
            size = e.file_size_in_bytes or 0
            if size >= target and e.location not in live_dvs:
                continue  # already full and clean
            candidates.append((i, size))
        for idx in pack_end([w for _, w in candidates], target):
            bin_ = [candidates[j][0] for j in idx]
            only = entries[bin_[0]]
            if len(bin_) == 1 and (not only.content_type.is_manifest
                                   or only.location not in live_dvs):
                continue  # nothing to combine
            files, used = _live_files(io, entries, bin_, live_dvs, legacy)
            if not used or (len(used) == 1 and entries[used[0]].location not in live_dvs):
                continue  # nothing left to combine (an unreadable leaf stays)
            leaf = None  # none when the bin's DVs removed every file
            if files:
                spec = metadata.spec_by_id(spec_id)
                if spec is None:
                    raise ValidationError("a root entry's partition spec is not in the table",
                                          field="partition_spec_id", value=spec_id)
                leaf = write_leaf_manifest(
                    io, new_location(), kind, files, partition_spec_id=spec_id,
                    schema=metadata.schema, partition_type=spec.partition_type(metadata.schema),
                    properties=props)
                leaf = replace(leaf, version_info=VersionInfo(
                    EntryStatus.EXISTING, snapshot_id, sequence_number, sequence_number))
                written.append(leaf)
            for i in used:
                dropped.add(i)
                replaced.append(entries[i])
                dv = live_dvs.get(entries[i].location)
                if entries[i].content_type.is_manifest and dv is not None:
                    replaced.append(dv)
            if leaf is not None:
                replace_at[used[0]] = [leaf]
    if not dropped:
        return Compaction(tuple(entries))
    gone_dvs = {e.location for e in replaced if e.content_type.is_manifest}
    out: list[ContentEntry] = []
    for i, e in enumerate(entries):
        out.extend(replace_at.get(i, ()))
        if i in dropped:
            continue
        if (e.content_type == ContentType.MANIFEST_DV and e.status == EntryStatus.EXISTING
                and e.referenced_file in gone_dvs):
            continue
        out.append(e)
    return Compaction(tuple(out), tuple(written), tuple(replaced))


def _live_files(io: FileIO, entries: Sequence[ContentEntry], bin_: list[int],
                live_dvs: Mapping[str, ContentEntry], legacy: LegacyLeafReader | None
                ) -> tuple[list[ContentEntry], list[int]]:
    """The live files of a bin's children as EXISTING entries with resolved values, and the
    children used (a v1-v3 leaf with no v4 form stays out)."""
    files: list[ContentEntry] = []
    used: list[int] = []
    for i in bin_:
        e = entries[i]
        if not e.content_type.is_manifest:
            files.append(e)
            used.append(i)
            continue
        try:
            leaf = read_leaf_manifest(io, e, manifest_dv=live_dvs.get(e.location),
                                      legacy=legacy)
        except UnsupportedFeature:
            continue  # a leaf with no v4 form is kept as it is
        if any(isinstance(f, LegacyPositionDeletes) for f in leaf.entries):
            continue  # a v2 position delete file has no v4 form: its leaf stays
        files.extend(f if f.status == EntryStatus.EXISTING else f.with_status(
            EntryStatus.EXISTING) for f in leaf.live_entries())
        used.append(i)
    return files, used
