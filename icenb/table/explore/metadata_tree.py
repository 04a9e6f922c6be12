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

from icenb.errors import UnsupportedVersion, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    read_manifest_entries,
    read_manifest_list_table,
    shared_manifest_cache,
)
from icenb.io.root_manifest import (
    load_manifest_dv,
    read_content_manifest,
    read_root_manifest,
)
from icenb.reprs import safe_repr
from icenb.spec.content_entry import ContentEntry, ContentType, InheritFrom, inherit
from icenb.spec.human import attach_types
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestFile,
    manifest_files_from_arrow,
)
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.v4_upgrade import manifest_file_of
from icenb.table.explore.metadata_graph import resolve_snapshot
from icenb.table.scan.delete_index import match_deletes
from icenb.table.scan.planning import content_files_of
from icenb.table.scan.v4_planning import entries_table

__all__ = [
    "HiddenManifests",
    "MetadataTree",
    "TreeEntry",
    "TreeIndex",
    "TreeManifest",
    "TreeManifestDV",
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
    if f.is_deletion_vector:
        return "deletion_vector"
    return "delete_file"


@safe_repr
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
    ordinal: int | None = None     # v4: position in its manifest (docs/v4-layout.md#ordinals)
    removed: bool = False          # v4: a manifest DV of the root removes this leaf row

    @property
    def kind(self) -> str:
        """The file's node kind (see :func:`file_kind`)."""
        return file_kind(self.file)


@safe_repr
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
    root_status: EntryStatus | None = None  # v4: the root entry's status

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


@safe_repr
@dataclass(frozen=True)
class TreeManifestDV:
    """A v4 root's manifest DV (content type 5): the drawn leaf it applies to (its
    ``position``, None when not drawn) and the leaf ordinals it removes."""

    status: EntryStatus
    location: str
    referenced_file: str
    manifest_position: int | None
    ordinals: tuple[int, ...]
    cardinality: int
    inline: bool


@safe_repr
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
    files: tuple[TreeEntry, ...] = ()        # v4: content files held by the root itself
    files_hidden: int = 0
    manifest_dvs: tuple[TreeManifestDV, ...] = ()


@dataclass(frozen=True)
class MetadataTree:
    """One snapshot's metadata files, read once and bounded (see the module docstring).

    ``index`` is None when there is no snapshot to draw (an empty table); ``note`` says why.
    ``spec_fields`` names the partition fields of each spec id, ``column_names`` the columns
    of the drawn equality deletes' ``equality_ids`` (so renderers need no metadata);
    ``table_snapshots`` are the table's snapshots, for the drawn one's short label (S3).
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
    table_snapshots: tuple[Snapshot, ...] = ()

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


@safe_repr
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


def _applies_to(drawn: Sequence[_Drawn | pa.Table], metadata: TableMetadata
                ) -> dict[tuple[int, int], tuple[str, ...]]:
    """For each drawn live delete entry (manifest index, entry index), the drawn live data
    files it applies to (spec: Scan Planning; match_deletes holds the rules)."""
    data_rows: list[pa.Table] = []
    delete_rows: list[pa.Table] = []
    delete_keys: list[tuple[int, int]] = []
    live = pa.scalar(int(EntryStatus.DELETED), pa.int32())
    for mi, d in enumerate(drawn):
        kept = d if isinstance(d, pa.Table) else d.kept
        if kept.num_rows == 0:
            continue
        t = kept.append_column("_i", pa.array(range(kept.num_rows), pa.int64()))
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
    if snap.root_manifest is not None:
        index = _root_index(io, metadata, snap, max_manifests, max_files, cache)
        return MetadataTree(metadata.location, where, metadata.format_version, snap, refs,
                            index, spec_fields=_spec_fields(metadata),
                            column_names=_column_names(metadata, index),
                            table_snapshots=tuple(metadata.snapshots))
    listing = read_manifest_list_table(io, snap, metadata.format_version, cache=cache)
    n = listing.num_rows
    shown, head = _fold_positions(n, max_manifests)
    hidden_rows = [i for i in range(head, n - (len(shown) - head))]
    manifests = (manifest_files_from_arrow(listing.take(pa.array(shown, pa.int64())),
                                           file=snap.manifest_list) if shown else [])
    for m in manifests:  # so its display shows the partition summaries as values
        attach_types(m, metadata.schema, metadata.specs_by_id.get(m.partition_spec_id))
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
            files = content_files_of(kept, metadata.specs_by_id, metadata.schema)
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
                        spec_fields=_spec_fields(metadata), column_names=names,
                        table_snapshots=tuple(metadata.snapshots))


def _column_names(metadata: TableMetadata, index: TreeIndex) -> dict[int, str]:
    names: dict[int, str] = {}
    entries = [*index.files, *(e for m in index.manifests for e in m.entries)]
    for e in entries:
        for fid in e.file.equality_ids or ():
            col = metadata.schema.column_name(fid)
            if col is not None:
                names[fid] = col
    return names


def _v4_kept(entries: Sequence[ContentEntry], path: str, metadata: TableMetadata
             ) -> tuple[pa.Table, list[DataFile]]:
    """v4 file entries as v3 entry rows (v4_planning's conversion) and their DataFiles."""
    if not entries:
        return pa.table({}), []
    t = entries_table(entries, manifest_path=path, specs=metadata.specs_by_id,
                      schema=metadata.schema, file=path)
    return t, content_files_of(t, metadata.specs_by_id, metadata.schema)


def _tree_entries(t: pa.Table, files: Sequence[DataFile], ordinals: Sequence[int] | None,
                  removed: frozenset[int], applies: Mapping[int, tuple[str, ...]]
                  ) -> tuple[TreeEntry, ...]:
    if not files:
        return ()
    status = t.column("status").to_pylist()
    snaps = t.column("snapshot_id").to_pylist()
    seqs = t.column("sequence_number").to_pylist()
    fseqs = t.column("file_sequence_number").to_pylist()
    out = []
    for i, f in enumerate(files):
        o = None if ordinals is None else ordinals[i]
        out.append(TreeEntry(EntryStatus(status[i]), snaps[i], seqs[i], fseqs[i], f,
                             applies.get(i, ()), o, o is not None and o in removed))
    return tuple(out)


def _root_index(io: FileIO, metadata: TableMetadata, snap: Snapshot, max_manifests: int,
                max_files: int, cache: ManifestCache) -> TreeIndex:
    """A v4 snapshot's root manifest as the tree's index (kind "root"): its files, its leaf
    manifests (drawn ones read; DV-removed rows marked) and its manifest DVs
    (docs/v4-layout.md#root-pointer, #manifest-dvs, #ordinals). Unreadable files raise, as for v1-v3
    trees."""
    root_loc = snap.root_manifest or ""
    root = read_root_manifest(io, root_loc, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    leaves = [e for e in root.entries if e.content_type.is_manifest]
    files = [(i, e) for i, e in enumerate(root.entries) if not e.content_type.is_manifest
             and e.content_type != ContentType.MANIFEST_DV]
    dv_entries = [e for e in root.entries if e.content_type == ContentType.MANIFEST_DV]
    removing: dict[str, frozenset[int]] = {}
    dv_ordinals: list[tuple[int, ...]] = []
    for e in dv_entries:
        ords = tuple(int(v) for v in load_manifest_dv(io, e, file=root_loc).to_numpy())
        dv_ordinals.append(ords)
        if e.is_live and e.referenced_file is not None:
            removing[e.referenced_file] = removing.get(e.referenced_file, frozenset()) | \
                frozenset(ords)
    shown, head = _fold_positions(len(leaves), max_manifests)
    fshown, _ = _fold_positions(len(files), max_files)
    root_kept, root_files = _v4_kept([files[i][1] for i in fshown], root_loc, metadata)
    kept_tables: list[pa.Table] = [root_kept]
    drawn: list[tuple[int, ContentEntry, pa.Table, list[DataFile], list[int], int, int,
                      tuple[int, int, int], int]] = []
    for pos in shown:
        e = leaves[pos]
        try:
            m = read_content_manifest(io, e.location, length=e.file_size_in_bytes)
        except UnsupportedVersion:   # a v1-v3 manifest under an upgraded root
                                     # (docs/v4-layout.md#upgrade)
            v3 = read_manifest_entries(io, [manifest_file_of(e)], 3, cache=cache)
            n = v3.num_rows
            keep, khead = _fold_positions(n, max_files)
            kept = v3.take(pa.array(keep, pa.int64()))
            fs = content_files_of(kept, metadata.specs_by_id, metadata.schema)
            drawn.append((pos, e, kept, fs, keep, khead, n - len(keep), _status_counts(v3), n))
            kept_tables.append(kept)
            continue
        entries = inherit(m.entries, InheritFrom.from_root_entry(e, file=root_loc),
                          file=m.location)
        n = len(entries)
        keep, khead = _fold_positions(n, max_files)
        kept, fs = _v4_kept([entries[i] for i in keep], m.location, metadata)
        counts = (sum(1 for x in entries if x.status == EntryStatus.ADDED),
                  sum(1 for x in entries if x.status == EntryStatus.EXISTING),
                  sum(1 for x in entries if x.status == EntryStatus.DELETED))
        drawn.append((pos, e, kept, fs, keep, khead, n - len(keep), counts, n))
        kept_tables.append(kept)
    applies = _applies_to(kept_tables, metadata)
    tree_manifests = []
    for di, (pos, e, kept, fs, keep, khead, n_hidden, counts, n) in enumerate(drawn):
        per = {i: v for (mi, i), v in applies.items() if mi == di + 1}
        tree_manifests.append(TreeManifest(
            pos, manifest_file_of(e),
            _tree_entries(kept, fs, keep, removing.get(e.location, frozenset()), per),
            khead, n_hidden, *counts, n, root_status=e.status))
    root_per = {i: v for (mi, i), v in applies.items() if mi == 0}
    hidden_leaves = [manifest_file_of(leaves[i]) for i in range(len(leaves)) if i not in
                     set(shown)]
    positions = {leaves[p].location: p for p in shown}
    dvs = tuple(TreeManifestDV(
        e.status, e.location, e.referenced_file or "", positions.get(e.referenced_file or ""),
        ords[:64], e.record_count,
        e.deletion_vector is not None and e.deletion_vector.is_inline)
        for e, ords in zip(dv_entries, dv_ordinals, strict=True))
    return TreeIndex("root", root_loc, tuple(tree_manifests), head, len(leaves),
                     _hidden_from_files(hidden_leaves),
                     files=_tree_entries(root_kept, root_files, None, frozenset(), root_per),
                     files_hidden=len(files) - len(fshown), manifest_dvs=dvs)


def _hidden_from_files(ms: Sequence[ManifestFile]) -> HiddenManifests:
    if not ms:
        return HiddenManifests()
    deletes = sum(1 for m in ms if m.content == ManifestContent.DELETES)

    def total(name: str) -> int | None:
        vals = [getattr(m, name) for m in ms]
        return None if any(v is None for v in vals) else sum(vals)

    added_rows, existing_rows = total("added_rows_count"), total("existing_rows_count")
    return HiddenManifests(
        data_manifests=len(ms) - deletes, delete_manifests=deletes,
        added_files=total("added_files_count"), existing_files=total("existing_files_count"),
        deleted_files=total("deleted_files_count"),
        rows=None if added_rows is None or existing_rows is None else added_rows + existing_rows)


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
