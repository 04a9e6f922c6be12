"""The metadata files of several snapshots as one graph, and one snapshot laid out two ways.

:class:`MetadataGraph`: snapshots -> their manifest lists -> each distinct manifest once ->
each distinct content file once, with the entry status on every edge, so a manifest or file
that several snapshots share shows as one node with several incoming edges (the style of the
figures in the v4 single-file-commits proposal). Spec: "Manifest Lists" (``added_snapshot_id``),
"Manifests" (entry ``status``).

:class:`LayoutComparison` ("root vs manifest list"): one snapshot as v1-v3 lay it out
(manifest list -> manifests) and as the v4 proposal would (one root manifest whose content
entries are the manifests). The root is derived from the manifest list as the proposal's
"Upgrade" section says (every manifest-list entry becomes a root entry); a real root manifest
(:class:`RootManifest`) can be passed instead once v4 tables are written.

Everything is read here, bounded by the given limits; renderers (``icenb.display``) only draw.
A file that cannot be read becomes an ``error`` on its node, never an exception.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, NoSuchSnapshot, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    read_manifest_entries,
    read_manifest_list,
    shared_manifest_cache,
)
from icenb.spec.manifest import EntryStatus, FileContent, ManifestContent, ManifestFile
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.table_metadata import TableMetadata

__all__ = [
    "ContentType",
    "EntryEdge",
    "FileNode",
    "LayoutComparison",
    "ListEdge",
    "ManifestNode",
    "MetadataGraph",
    "RootEntry",
    "RootManifest",
    "SnapshotNode",
    "build_layout_comparison",
    "build_metadata_graph",
    "default_graph_snapshots",
    "resolve_snapshot",
    "root_from_manifest_list",
]

#: Snapshots the graph shows when none are named: the last few of main's lineage.
DEFAULT_GRAPH_SNAPSHOTS = 4

_ENTRY_COLUMNS = (
    "data_file.file_path", "data_file.content", "data_file.file_format",
    "data_file.record_count", "data_file.file_size_in_bytes",
    "data_file.referenced_data_file", "data_file.content_offset",
)
_READ_ERRORS = (IcebergError, OSError, ValueError, KeyError, pa.ArrowException)


class ContentType(enum.IntEnum):
    """A v4 content entry's ``content_type`` (field 134 of the v4 single-file-commits proposal;
    3-5 only in a root manifest). Experimental: the proposal is not adopted."""

    DATA = 0
    POSITION_DELETE = 1
    EQUALITY_DELETE = 2
    DATA_MANIFEST = 3
    DELETE_MANIFEST = 4
    MANIFEST_DV = 5


def _why(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _status_name(status: int | None) -> str:
    try:
        return EntryStatus(int(status)).name if status is not None else "UNKNOWN"
    except ValueError:
        return f"STATUS {status}"


@dataclass(frozen=True)
class SnapshotNode:
    """A snapshot of the graph and what its manifest list holds (``error`` when unreadable)."""

    snapshot_id: int
    parent_id: int | None
    timestamp_ms: int
    sequence_number: int
    operation: str | None
    manifest_list: str | None      # None: a v1 snapshot listing manifests in the metadata
    current: bool
    refs: tuple[str, ...]
    manifests_total: int           # entries of its manifest list
    manifests_hidden: int          # of those, not drawn (bounded)
    data_manifests: int
    delete_manifests: int
    live_data_files: int | None    # added + existing counts of its data manifests
    live_delete_files: int | None
    error: str | None = None


@dataclass(frozen=True)
class ManifestNode:
    """A distinct manifest file (drawn once however many manifest lists include it)."""

    path: str
    content: int                   # ManifestContent: 0 data, 1 deletes
    added_snapshot_id: int
    sequence_number: int
    partition_spec_id: int
    length: int
    added_files: int | None
    existing_files: int | None
    deleted_files: int | None
    entries_total: int | None      # None when the entries were not read
    entries_hidden: int = 0
    error: str | None = None

    @property
    def kind(self) -> str:
        """Node kind: ``data_manifest`` or ``delete_manifest``."""
        return "delete_manifest" if self.content == ManifestContent.DELETES else "data_manifest"


@dataclass(frozen=True)
class FileNode:
    """A distinct content file: data file, position delete file, deletion vector or equality
    delete file (spec: Manifests, ``data_file.content``; v3 Deletion Vectors are Puffin)."""

    path: str
    content: int
    file_format: str
    record_count: int | None
    size_in_bytes: int | None
    referenced_data_file: str | None = None
    content_offset: int | None = None  # a deletion vector's blob offset in its Puffin file

    @property
    def key(self) -> tuple[str, int | None]:
        """What identifies the node: one Puffin file holds many DVs (spec: Deletion Vectors,
        ``content_offset``), so the path alone does not; None offset for other files."""
        return (self.path, self.content_offset)

    @property
    def kind(self) -> str:
        """Node kind: ``data_file``, ``delete_file``, ``deletion_vector``, ``equality_delete``."""
        if self.content == FileContent.EQUALITY_DELETES:
            return "equality_delete"
        if self.content == FileContent.POSITION_DELETES:
            return ("deletion_vector" if self.file_format.upper() == "PUFFIN"
                    else "delete_file")
        return "data_file"


@dataclass(frozen=True)
class ListEdge:
    """A manifest list holding a manifest: ADDED when the manifest was added by that snapshot
    (its ``added_snapshot_id``), else EXISTING."""

    snapshot_id: int
    manifest_path: str
    status: str


@dataclass(frozen=True)
class EntryEdge:
    """A manifest entry: the manifest, the file, and the entry's status and snapshot."""

    manifest_path: str
    file_path: str
    status: str                    # ADDED / EXISTING / DELETED
    snapshot_id: int | None
    sequence_number: int | None
    content_offset: int | None = None  # the DV's blob offset (None for other files)

    @property
    def file_key(self) -> tuple[str, int | None]:
        """The :attr:`FileNode.key` of the entry's file."""
        return (self.file_path, self.content_offset)


@dataclass(frozen=True)
class MetadataGraph:
    """Snapshots, their manifest lists, distinct manifests and files, and the edges between."""

    location: str
    format_version: int
    snapshots: tuple[SnapshotNode, ...]
    manifests: tuple[ManifestNode, ...]
    files: tuple[FileNode, ...]
    list_edges: tuple[ListEdge, ...]
    entry_edges: tuple[EntryEdge, ...]
    entries: bool = True           # whether manifests were read (file nodes present)
    snapshots_hidden: int = 0      # asked for but left out (bounded)

    def manifest(self, path: str) -> ManifestNode | None:
        """The manifest node for ``path``."""
        return next((m for m in self.manifests if m.path == path), None)

    def file(self, path: str, content_offset: int | None = None) -> FileNode | None:
        """The file node for ``path`` (and ``content_offset``, for a deletion vector)."""
        return next((f for f in self.files if f.key == (path, content_offset)), None)

    def edges_into_manifest(self, path: str) -> tuple[ListEdge, ...]:
        """Every manifest list's edge to this manifest (several = the manifest is reused)."""
        return tuple(e for e in self.list_edges if e.manifest_path == path)

    def edges_into_file(self, path: str, content_offset: int | None = None
                        ) -> tuple[EntryEdge, ...]:
        """Every manifest's entry for this file (a DV: its ``content_offset`` too)."""
        return tuple(e for e in self.entry_edges if e.file_key == (path, content_offset))

    def __repr__(self) -> str:
        return (f"MetadataGraph({len(self.snapshots)} snapshots, {len(self.manifests)} "
                f"manifests, {len(self.files)} files)")


# --------------------------------------------------------------------------- building


def resolve_snapshot(metadata: TableMetadata, ident: int | str, *,
                     metadata_location: str | None = None) -> Snapshot:
    """A snapshot named by id (int) or by branch or tag (str); NoSuchSnapshot when absent."""
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        raise ValidationError("a snapshot is named by its id or a branch or tag name",
                              field="snapshot", value=ident)
    snap = (metadata.snapshot_by_id(ident) if isinstance(ident, int)
            else metadata.snapshot_for_ref(ident))
    if snap is None:
        field = "snapshot-id" if isinstance(ident, int) else "refs"
        raise NoSuchSnapshot("no such snapshot, branch or tag in the table metadata",
                             file=metadata_location or metadata.source_file, field=field,
                             value=ident)
    return snap


def default_graph_snapshots(metadata: TableMetadata, limit: int) -> list[int]:
    """The last ``limit`` snapshots of main's lineage, oldest first (spec: Snapshots,
    ``parent-snapshot-id``; the lineage stops where a parent has expired)."""
    head = metadata.snapshot_for_ref(MAIN_BRANCH)
    if head is None or limit < 1:
        return []
    out: list[int] = []
    for snap in metadata.ancestors(head.snapshot_id):
        out.append(snap.snapshot_id)
        if len(out) >= limit:
            break
    return out[::-1]


def _fold_indices(n: int, limit: int) -> list[int]:
    """The indices kept when showing at most ``limit`` of ``n`` items: a head and a tail."""
    if n <= limit:
        return list(range(n))
    tail = limit // 2
    head = limit - tail
    return [*range(head), *range(n - tail, n)]


def _sum(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _refs_by_snapshot(metadata: TableMetadata) -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for name in sorted(metadata.refs):
        out.setdefault(metadata.refs[name].snapshot_id, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def _snapshot_node(snap: Snapshot, metadata: TableMetadata, refs: dict[int, tuple[str, ...]],
                   manifests: Sequence[ManifestFile], hidden: int, error: str | None
                   ) -> SnapshotNode:
    data = [m for m in manifests if m.content == ManifestContent.DATA]
    deletes = [m for m in manifests if m.content == ManifestContent.DELETES]

    def live(ms: list[ManifestFile]) -> int | None:
        parts: list[int | None] = []
        for m in ms:
            parts += [m.added_files_count, m.existing_files_count]
        return None if error else _sum(parts)

    return SnapshotNode(
        snapshot_id=snap.snapshot_id, parent_id=snap.parent_snapshot_id,
        timestamp_ms=snap.timestamp_ms, sequence_number=snap.sequence_number,
        operation=None if snap.operation is None else str(snap.operation),
        manifest_list=snap.manifest_list,
        current=snap.snapshot_id == metadata.current_snapshot_id,
        refs=refs.get(snap.snapshot_id, ()), manifests_total=len(manifests),
        manifests_hidden=hidden, data_manifests=len(data), delete_manifests=len(deletes),
        live_data_files=live(data), live_delete_files=live(deletes), error=error)


def _column(table: pa.Table, name: str) -> list[object]:
    """A top-level or ``data_file.<name>`` column as a list; Nones when absent."""
    if "." in name:
        struct = table.column("data_file")
        if struct.type.get_field_index(name.split(".", 1)[1]) < 0:
            return [None] * table.num_rows
        return list(pc.struct_field(struct, name.split(".", 1)[1]).to_pylist())
    if name not in table.column_names:
        return [None] * table.num_rows
    return list(table.column(name).to_pylist())


def _opt_int(v: object) -> int | None:
    return v if isinstance(v, int) else None


def _read_entries(io: FileIO, m: ManifestFile, format_version: int, max_files: int,
                  cache: ManifestCache | None
                  ) -> tuple[list[FileNode], list[EntryEdge], int, int]:
    """The shown entries of one manifest (head and tail), the total and the hidden count."""
    table = read_manifest_entries(io, [m], format_version, columns=_ENTRY_COLUMNS, cache=cache)
    n = table.num_rows
    keep = _fold_indices(n, max_files)
    shown = table.take(pa.array(keep, pa.int64())) if keep else table.slice(0, 0)
    paths = _column(shown, "data_file.file_path")
    contents = _column(shown, "data_file.content")
    formats = _column(shown, "data_file.file_format")
    counts = _column(shown, "data_file.record_count")
    sizes = _column(shown, "data_file.file_size_in_bytes")
    refs = _column(shown, "data_file.referenced_data_file")
    offsets = _column(shown, "data_file.content_offset")
    statuses = _column(shown, "status")
    snaps = _column(shown, "snapshot_id")
    seqs = _column(shown, "sequence_number")
    files: list[FileNode] = []
    edges: list[EntryEdge] = []
    for i in range(shown.num_rows):
        path = str(paths[i])
        content = _opt_int(contents[i])
        files.append(FileNode(path=path, content=0 if content is None else content,
                              file_format=str(formats[i] or ""),
                              record_count=_opt_int(counts[i]),
                              size_in_bytes=_opt_int(sizes[i]),
                              referenced_data_file=None if refs[i] is None else str(refs[i]),
                              content_offset=_opt_int(offsets[i])))
        status = statuses[i]
        edges.append(EntryEdge(manifest_path=m.manifest_path, file_path=path,
                               status=_status_name(status if isinstance(status, int) else None),
                               snapshot_id=_opt_int(snaps[i]),
                               sequence_number=_opt_int(seqs[i]),
                               content_offset=_opt_int(offsets[i])))
    return files, edges, n, n - len(keep)


def build_metadata_graph(io: FileIO, metadata: TableMetadata, snapshot_ids: Sequence[int], *,
                         entries: bool = True, max_snapshots: int = 40,
                         max_manifests: int = 12, max_files: int = 8,
                         cache: ManifestCache | None = None) -> MetadataGraph:
    """Read the manifest lists of ``snapshot_ids`` (at most ``max_snapshots``, the last ones
    kept) and, with ``entries``, their manifests, each distinct file once (at most
    ``max_manifests`` manifests per list and ``max_files`` entries per manifest; the rest are
    counted as hidden). Unreadable files become ``error`` fields."""
    cache = shared_manifest_cache(io) if cache is None else cache
    ids = list(dict.fromkeys(snapshot_ids))
    snapshots_hidden = max(len(ids) - max_snapshots, 0)
    ids = ids[snapshots_hidden:]
    refs = _refs_by_snapshot(metadata)
    snap_nodes: list[SnapshotNode] = []
    list_edges: list[ListEdge] = []
    manifest_files: dict[str, ManifestFile] = {}
    for sid in ids:
        snap = metadata.snapshot_by_id(sid)
        if snap is None:
            raise NoSuchSnapshot("no such snapshot in the table metadata",
                                 file=metadata.source_file, field="snapshot-id", value=sid)
        try:
            listed = read_manifest_list(io, snap, metadata.format_version)
            error = None
        except _READ_ERRORS as e:
            listed, error = [], _why(e)
        keep = _fold_indices(len(listed), max_manifests)
        snap_nodes.append(_snapshot_node(snap, metadata, refs, listed,
                                         len(listed) - len(keep), error))
        for i in keep:
            m = listed[i]
            manifest_files.setdefault(m.manifest_path, m)
            status = "ADDED" if m.added_snapshot_id == sid else "EXISTING"
            list_edges.append(ListEdge(sid, m.manifest_path, status))
    manifests: list[ManifestNode] = []
    files: dict[tuple[str, int | None], FileNode] = {}
    entry_edges: list[EntryEdge] = []
    for path, m in manifest_files.items():
        total: int | None = None
        hidden = 0
        error = None
        if entries:
            try:
                fs, es, total, hidden = _read_entries(io, m, metadata.format_version,
                                                      max_files, cache)
                for f in fs:
                    files.setdefault(f.key, f)
                entry_edges.extend(es)
            except _READ_ERRORS as e:
                error = _why(e)
        manifests.append(ManifestNode(
            path=path, content=int(m.content), added_snapshot_id=m.added_snapshot_id,
            sequence_number=m.sequence_number, partition_spec_id=m.partition_spec_id,
            length=m.manifest_length, added_files=m.added_files_count,
            existing_files=m.existing_files_count, deleted_files=m.deleted_files_count,
            entries_total=total, entries_hidden=hidden, error=error))
    return MetadataGraph(location=metadata.location, format_version=metadata.format_version,
                         snapshots=tuple(snap_nodes), manifests=tuple(manifests),
                         files=tuple(files.values()), list_edges=tuple(list_edges),
                         entry_edges=tuple(entry_edges), entries=entries,
                         snapshots_hidden=snapshots_hidden)


# --------------------------------------------------------------------------- root vs list


@dataclass(frozen=True)
class RootEntry:
    """One content entry of a v4 root manifest (proposal: "content entry": ``content_type``,
    ``location``, ``version_info.status`` / ``snapshot_id`` / ``sequence_number``,
    ``manifest_stats``; ``referenced_file`` for manifest DVs)."""

    content_type: ContentType
    location: str
    status: str
    snapshot_id: int | None
    sequence_number: int | None
    file_size_in_bytes: int | None = None
    added_files: int | None = None
    existing_files: int | None = None
    deleted_files: int | None = None
    referenced_file: str | None = None


@dataclass(frozen=True)
class RootManifest:
    """A v4 root manifest: its shown entries and how many entries of each type it has in all.

    ``derived`` is True when it was computed from a v1-v3 manifest list (``location`` None),
    False for a root manifest read from a v4 table.
    """

    snapshot_id: int
    location: str | None
    entries: tuple[RootEntry, ...]
    type_counts: tuple[tuple[ContentType, int], ...]
    derived: bool = True

    @property
    def entries_total(self) -> int:
        """All entries, shown or not."""
        return sum(n for _, n in self.type_counts)

    def count(self, content_type: ContentType) -> int:
        """Entries of one content type."""
        return sum(n for t, n in self.type_counts if t == content_type)


def root_from_manifest_list(graph: MetadataGraph, snapshot_id: int) -> RootManifest:
    """The root manifest the proposal's "Upgrade" gives for a v3 snapshot: every manifest-list
    entry becomes a root entry (``DATA_MANIFEST`` / ``DELETE_MANIFEST``), marked EXISTING
    because the first v4 commit carries the v3 state over (proposal: "Upgrade", field
    mapping "manifest list field -> V4 content entry field")."""
    snap = next((s for s in graph.snapshots if s.snapshot_id == snapshot_id), None)
    if snap is None:
        raise NoSuchSnapshot("the graph does not hold this snapshot", field="snapshot-id",
                             value=snapshot_id)
    out: list[RootEntry] = []
    for edge in graph.list_edges:
        if edge.snapshot_id != snapshot_id:
            continue
        m = graph.manifest(edge.manifest_path)
        if m is None:
            continue
        ctype = (ContentType.DELETE_MANIFEST if m.content == ManifestContent.DELETES
                 else ContentType.DATA_MANIFEST)
        out.append(RootEntry(
            content_type=ctype, location=m.path, status="EXISTING",
            snapshot_id=m.added_snapshot_id, sequence_number=m.sequence_number,
            file_size_in_bytes=m.length, added_files=m.added_files,
            existing_files=m.existing_files, deleted_files=m.deleted_files))
    counts = ((ContentType.DATA_MANIFEST, snap.data_manifests),
              (ContentType.DELETE_MANIFEST, snap.delete_manifests))
    return RootManifest(snapshot_id=snapshot_id, location=None, entries=tuple(out),
                        type_counts=tuple((t, n) for t, n in counts if n), derived=True)


@dataclass(frozen=True)
class LayoutRow:
    """One line of the comparison: what is counted, the v1-v3 count and the v4 count."""

    what: str
    manifest_list: int | None
    root_manifest: int | None


@dataclass(frozen=True)
class LayoutComparison:
    """One snapshot drawn as v1-v3 (``graph``: manifest list -> manifests -> files) and as the
    v4 proposal (``root`` -> leaf manifests -> the same files)."""

    snapshot_id: int
    graph: MetadataGraph
    root: RootManifest

    @property
    def snapshot(self) -> SnapshotNode | None:
        """The compared snapshot's node."""
        return next((s for s in self.graph.snapshots if s.snapshot_id == self.snapshot_id),
                    None)

    def rows(self) -> tuple[LayoutRow, ...]:
        """Counts from the data: metadata files a reader opens each way, and what they hold."""
        snap = self.snapshot
        if snap is None or snap.error is not None:
            n_data = n_del = None
        else:
            n_data, n_del = snap.data_manifests, snap.delete_manifests
        root = self.root
        leaves = root.count(ContentType.DATA_MANIFEST) + root.count(ContentType.DELETE_MANIFEST)
        at_root = sum(root.count(t) for t in (ContentType.DATA, ContentType.POSITION_DELETE,
                                              ContentType.EQUALITY_DELETE))
        # a v1 snapshot may list its manifests in the metadata file: no manifest-list file
        top = None if snap is None or snap.error else int(snap.manifest_list is not None)
        left_total = None if n_data is None or n_del is None or top is None \
            else top + n_data + n_del
        live_data = None if snap is None else snap.live_data_files
        live_del = None if snap is None else snap.live_delete_files
        return (
            LayoutRow("top-level metadata files (manifest list / root manifest)", top, 1),
            LayoutRow("data manifests", n_data, root.count(ContentType.DATA_MANIFEST)),
            LayoutRow("delete manifests", n_del, root.count(ContentType.DELETE_MANIFEST)),
            LayoutRow("content files listed in the top-level file", 0, at_root),
            LayoutRow("manifest deletion vectors", 0, root.count(ContentType.MANIFEST_DV)),
            LayoutRow("metadata files a reader opens to plan (top-level + manifests)",
                      left_total, 1 + leaves),
            LayoutRow("live data files", live_data, live_data if root.derived else None),
            LayoutRow("live delete files", live_del, live_del if root.derived else None),
        )

    def __repr__(self) -> str:
        return (f"LayoutComparison(snapshot {self.snapshot_id}: "
                f"{len(self.graph.manifests)} manifests, root entries "
                f"{self.root.entries_total})")


def build_layout_comparison(io: FileIO, metadata: TableMetadata, snapshot_id: int, *,
                            root: RootManifest | None = None, max_manifests: int = 12,
                            max_files: int = 8, cache: ManifestCache | None = None
                            ) -> LayoutComparison:
    """Read one snapshot's metadata tree and pair it with ``root`` (by default the root manifest
    the proposal's upgrade derives from its manifest list)."""
    graph = build_metadata_graph(io, metadata, [snapshot_id], entries=True,
                                 max_manifests=max_manifests, max_files=max_files, cache=cache)
    if root is None:
        root = root_from_manifest_list(graph, snapshot_id)
    elif root.snapshot_id != snapshot_id:
        raise ValidationError("the root manifest belongs to another snapshot",
                              field="root.snapshot_id", value=root.snapshot_id)
    return LayoutComparison(snapshot_id=snapshot_id, graph=graph, root=root)
