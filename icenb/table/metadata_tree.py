"""One snapshot's metadata files as a tree: table metadata -> manifest list -> manifests -> files.

:func:`build_metadata_tree` reads, once, everything the picture needs and nothing more: the
snapshot's manifest list, and only the manifests that will be drawn (``max_manifests``, head and
tail in manifest-list order; the rest are counted from the manifest list alone), keeping at most
``max_files`` entries of each (head and tail, with counts by status of all of them). It also
works out which drawn data files each drawn live delete file applies to (spec: "Scan
Planning"). Renderers (``icenb.display.metadata_tree``) only draw what the tree holds.

The model is layered so that the v4 single-file-commits layout fits later without a new
renderer: :class:`TreeIndex` is "the node between the table metadata and the manifests". In
v1-v3 it is the snapshot's manifest list (``kind="manifest_list"``); a v4 snapshot will give a
``kind="root"`` index (its root manifest), whose rows are manifests (and, later, files held in
the root directly), drawn the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    read_manifest_entries,
    read_manifest_list_table,
    shared_manifest_cache,
)
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestFile,
    manifest_files_from_arrow,
)
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.metadata_graph import resolve_snapshot
from icenb.table.scan_planning import _content_files, match_deletes

__all__ = [
    "HiddenManifests",
    "MetadataTree",
    "TreeEntry",
    "TreeIndex",
    "TreeManifest",
    "build_metadata_tree",
    "file_kind",
]


def file_kind(f: DataFile) -> str:
    """The node kind of a content file: data_file, delete_file (position deletes),
    deletion_vector (a v3 DV: position deletes in a Puffin file) or equality_delete."""
    if f.content == FileContent.DATA:
        return "data_file"
    if f.content == FileContent.EQUALITY_DELETES:
        return "equality_delete"
    if f.file_format == FileFormat.PUFFIN:
        return "deletion_vector"
    return "delete_file"


@dataclass(frozen=True)
class TreeEntry:
    """One drawn manifest entry (spec: Manifest Entry Fields) and, for a live delete file, the
    paths of the drawn data files it applies to (spec: Scan Planning)."""

    status: EntryStatus
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    file: DataFile
    applies_to: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """The file's node kind (see :func:`file_kind`)."""
        return file_kind(self.file)


@dataclass(frozen=True)
class TreeManifest:
    """A drawn manifest: its manifest-list entry and the kept entries.

    ``entries`` holds the first ``entries_head`` entries then the last ones (manifest order);
    ``entries_hidden`` were left out between them. ``added``/``existing``/``deleted`` count
    every entry of the manifest by status, ``entries_total`` all of them.
    """

    position: int
    manifest: ManifestFile
    entries: tuple[TreeEntry, ...] = ()
    entries_head: int = 0
    entries_hidden: int = 0
    added: int = 0
    existing: int = 0
    deleted: int = 0
    entries_total: int = 0

    @property
    def kind(self) -> str:
        """data_manifest or delete_manifest."""
        return ("delete_manifest" if self.manifest.content == ManifestContent.DELETES
                else "data_manifest")


@dataclass(frozen=True)
class HiddenManifests:
    """What the manifest list says about the manifests that are not drawn (None: unknown,
    e.g. v1 lists without counts)."""

    data_manifests: int = 0
    delete_manifests: int = 0
    added_files: int | None = 0
    existing_files: int | None = 0
    deleted_files: int | None = 0
    rows: int | None = 0

    @property
    def count(self) -> int:
        """How many manifests are hidden."""
        return self.data_manifests + self.delete_manifests


@dataclass(frozen=True)
class TreeIndex:
    """The node listing a snapshot's manifests: the manifest list (v1-v3, ``kind
    "manifest_list"``; ``location`` None for a v1 snapshot listing its manifests in the
    metadata) or, in v4, the root manifest (``kind "root"``).

    ``manifests`` holds the first ``manifests_head`` drawn manifests then the last ones;
    ``hidden`` summarizes the ones between (read from the index only).
    """

    kind: str
    location: str | None
    manifests: tuple[TreeManifest, ...] = ()
    manifests_head: int = 0
    manifests_total: int = 0
    hidden: HiddenManifests = field(default_factory=HiddenManifests)


@dataclass(frozen=True)
class MetadataTree:
    """One snapshot's metadata files, read once and bounded (see the module docstring).

    ``index`` is None when there is no snapshot to draw (an empty table); ``note`` says why.
    ``spec_fields`` names the partition fields of each spec id, ``column_names`` the columns
    of the drawn equality deletes' ``equality_ids`` (so renderers need no metadata).
    """

    location: str
    metadata_location: str | None
    format_version: int
    snapshot: Snapshot | None
    refs: tuple[str, ...] = ()
    index: TreeIndex | None = None
    note: str | None = None
    spec_fields: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    column_names: Mapping[int, str] = field(default_factory=dict)

    @property
    def snapshot_id(self) -> int | None:
        """The drawn snapshot's id."""
        return None if self.snapshot is None else self.snapshot.snapshot_id

    def entries(self) -> list[tuple[TreeManifest, TreeEntry]]:
        """Every drawn entry with its manifest, in drawing order."""
        if self.index is None:
            return []
        return [(m, e) for m in self.index.manifests for e in m.entries]


def _fold_positions(n: int, limit: int) -> tuple[list[int], int]:
    """Indices shown (head then tail) of ``n`` items under ``limit``, and how many are head."""
    if n <= limit:
        return list(range(n)), n
    tail = limit // 2
    head = limit - tail
    return [*range(head), *range(n - tail, n)], head


def _sum_or_none(table: pa.Table, name: str) -> int | None:
    """The sum of a count column; None when any value is unknown (v1 lists may omit counts)."""
    if name not in table.column_names:
        return None
    col = table.column(name)
    if col.null_count:
        return None
    total = pc.sum(col).as_py()
    return 0 if total is None else int(total)


def _hidden_summary(table: pa.Table, rows: Sequence[int]) -> HiddenManifests:
    if not rows:
        return HiddenManifests()
    part = table.take(pa.array(rows, pa.int64()))
    content = part.column("content").to_pylist()
    deletes = sum(1 for c in content if c == int(ManifestContent.DELETES))
    added_rows = _sum_or_none(part, "added_rows_count")
    existing_rows = _sum_or_none(part, "existing_rows_count")
    return HiddenManifests(
        data_manifests=len(content) - deletes, delete_manifests=deletes,
        added_files=_sum_or_none(part, "added_files_count"),
        existing_files=_sum_or_none(part, "existing_files_count"),
        deleted_files=_sum_or_none(part, "deleted_files_count"),
        rows=None if added_rows is None or existing_rows is None else added_rows + existing_rows)


def _status_counts(entries: pa.Table) -> tuple[int, int, int]:
    """(added, existing, deleted) entries."""
    status = np.asarray(entries.column("status").to_numpy(zero_copy_only=False))
    return (int((status == int(EntryStatus.ADDED)).sum()),
            int((status == int(EntryStatus.EXISTING)).sum()),
            int((status == int(EntryStatus.DELETED)).sum()))


@dataclass
class _Drawn:
    """A drawn manifest while it is built: the kept entry rows and their files."""

    position: int
    manifest: ManifestFile
    kept: pa.Table
    files: list[DataFile]
    head: int
    hidden: int
    counts: tuple[int, int, int]
    total: int


def _applies_to(drawn: Sequence[_Drawn], metadata: TableMetadata) -> dict[tuple[int, int],
                                                                          tuple[str, ...]]:
    """For each drawn live delete entry (manifest index, entry index), the drawn live data
    files it applies to (spec: Scan Planning; match_deletes holds the rules)."""
    data_rows: list[pa.Table] = []
    delete_rows: list[pa.Table] = []
    delete_keys: list[tuple[int, int]] = []
    live = pa.scalar(int(EntryStatus.DELETED), pa.int32())
    for mi, d in enumerate(drawn):
        if d.kept.num_rows == 0:
            continue
        t = d.kept.append_column("_i", pa.array(range(d.kept.num_rows), pa.int64()))
        t = t.filter(pc.not_equal(t.column("status"), live))
        content = pc.struct_field(t.column("data_file"), "content")
        is_data = pc.equal(content, pa.scalar(int(FileContent.DATA), pa.int32()))
        data_rows.append(t.filter(is_data))
        dels = t.filter(pc.invert(is_data))
        delete_rows.append(dels)
        delete_keys.extend((mi, int(i)) for i in dels.column("_i").to_pylist())
    if not delete_keys or not data_rows:
        return {}
    data = pa.concat_tables(data_rows, promote_options="permissive")
    deletes = pa.concat_tables(delete_rows, promote_options="permissive")
    if data.num_rows == 0:
        return {}
    matches = match_deletes(data, deletes, metadata.specs_by_id)
    paths = pc.struct_field(data.column("data_file"), "file_path").to_pylist()
    out: dict[tuple[int, int], list[str]] = {}
    for path, hits in zip(paths, matches, strict=True):
        for j in hits:
            out.setdefault(delete_keys[j], []).append(str(path))
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def build_metadata_tree(
    io: FileIO, metadata: TableMetadata, snapshot: int | str | None = None, *,
    metadata_location: str | None = None, max_manifests: int = 12, max_files: int = 8,
    cache: ManifestCache | None = None,
) -> MetadataTree:
    """Read one snapshot's manifest list and its drawn manifests into a :class:`MetadataTree`.

    ``snapshot``: an id, a branch or tag name, or None for the current snapshot (a table
    without one gives a tree with the metadata node only). Unknown snapshots raise
    NoSuchSnapshot; unreadable files raise the file I/O error naming the file.
    """
    if max_manifests < 1 or max_files < 1:
        raise ValidationError("max_manifests and max_files must be positive",
                              field="max_manifests" if max_manifests < 1 else "max_files",
                              value=min(max_manifests, max_files))
    where = metadata_location or metadata.source_file
    if snapshot is None:
        snap = metadata.current_snapshot()
        if snap is None:
            note = ("the table has no snapshots yet: no manifest list, manifests or files"
                    if not metadata.snapshots else
                    "the table has no current snapshot; name a snapshot id or ref")
            return MetadataTree(metadata.location, where, metadata.format_version, None,
                                note=note, spec_fields=_spec_fields(metadata))
    else:
        snap = resolve_snapshot(metadata, snapshot, metadata_location=where)
    if cache is None:
        cache = shared_manifest_cache(io)
    refs = tuple(sorted(name for name, ref in metadata.refs.items()
                        if ref.snapshot_id == snap.snapshot_id))
    listing = read_manifest_list_table(io, snap, metadata.format_version, cache=cache)
    n = listing.num_rows
    shown, head = _fold_positions(n, max_manifests)
    hidden_rows = [i for i in range(head, n - (len(shown) - head))]
    manifests = (manifest_files_from_arrow(listing.take(pa.array(shown, pa.int64())),
                                           file=snap.manifest_list) if shown else [])
    drawn: list[_Drawn] = []
    if manifests:
        entries = read_manifest_entries(io, manifests, metadata.format_version, cache=cache)
        offset = 0
        lengths = _chunk_lengths(entries, manifests)
        for pos, m, length in zip(shown, manifests, lengths, strict=True):
            t = entries.slice(offset, length)
            offset += length
            keep, khead = _fold_positions(length, max_files)
            kept = t.take(pa.array(keep, pa.int64()))
            files = _content_files(kept, metadata.specs_by_id, metadata.schema)
            drawn.append(_Drawn(pos, m, kept, files, khead, length - len(keep),
                                _status_counts(t), length))
    applies = _applies_to(drawn, metadata)
    tree_manifests: list[TreeManifest] = []
    for mi, d in enumerate(drawn):
        status = d.kept.column("status").to_pylist()
        snaps = d.kept.column("snapshot_id").to_pylist()
        seqs = d.kept.column("sequence_number").to_pylist()
        fseqs = d.kept.column("file_sequence_number").to_pylist()
        tree_entries = tuple(
            TreeEntry(EntryStatus(status[i]), snaps[i], seqs[i], fseqs[i], f,
                      applies.get((mi, i), ()))
            for i, f in enumerate(d.files))
        added, existing, deleted = d.counts
        tree_manifests.append(TreeManifest(
            d.position, d.manifest, tree_entries, d.head, d.hidden, added, existing, deleted,
            d.total))
    index = TreeIndex("manifest_list", snap.manifest_list, tuple(tree_manifests), head, n,
                      _hidden_summary(listing, hidden_rows))
    names: dict[int, str] = {}
    for tm in tree_manifests:
        for e in tm.entries:
            for fid in e.file.equality_ids or ():
                col = metadata.schema.column_name(fid)
                if col is not None:
                    names[fid] = col
    return MetadataTree(metadata.location, where, metadata.format_version, snap, refs, index,
                        spec_fields=_spec_fields(metadata), column_names=names)


def _spec_fields(metadata: TableMetadata) -> dict[int, tuple[str, ...]]:
    return {s.spec_id: tuple(f.name for f in s.fields) for s in metadata.partition_specs}


def _chunk_lengths(entries: pa.Table, manifests: Sequence[ManifestFile]) -> list[int]:
    """Rows of each manifest in the concatenated entry table (manifests in the order given;
    a manifest listed twice holds its entries twice)."""
    rows: dict[str, int] = {}
    if entries.num_rows:
        for item in pc.value_counts(entries.column("manifest_path")).to_pylist():
            rows[str(item["values"])] = int(item["counts"])
    listed: dict[str, int] = {}
    for m in manifests:
        listed[m.manifest_path] = listed.get(m.manifest_path, 0) + 1
    return [rows.get(m.manifest_path, 0) // listed[m.manifest_path] for m in manifests]
