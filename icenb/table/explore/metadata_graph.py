"""The metadata files of several snapshots as one graph, and one snapshot laid out two ways.

:class:`MetadataGraph`: snapshots -> their manifest lists -> each distinct manifest once ->
each distinct content file once, with the entry status on every edge, so a manifest or file
that several snapshots share shows as one node with several incoming edges (the style of the
figures in the v4 single-file-commits proposal). Spec: "Manifest Lists" (``added_snapshot_id``),
"Manifests" (entry ``status``). A v4 snapshot (EXPERIMENTAL) has a root manifest instead
(:class:`RootNode`): its edges go to leaf manifests (:class:`ListEdge`), to files it holds itself
(:class:`EntryEdge` from the root) and to manifest DVs (:class:`ManifestDVNode`, which name the
leaf ordinals they remove; those leaf rows carry ``removed_by``). :func:`v4_layout` builds the
same model from content entries alone, for layouts that are not real tables.

:class:`LayoutComparison` ("root vs manifest list"): one snapshot as v1-v3 lay it out
(manifest list -> manifests) and as the v4 proposal would (one root manifest whose content
entries are the manifests). For a v1-v3 snapshot the root is derived from the manifest list as
the proposal's "Upgrade" section says (every manifest-list entry becomes a root entry); a v4
snapshot's real root is read (``derived`` False) and compared with the fewest v3 manifests that
would hold the same files.

Everything is read here, bounded by the given limits; renderers (``icenb.display``) only draw.
A file that cannot be read becomes an ``error`` on its node, never an exception.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import IcebergError, NoSuchSnapshot, UnsupportedVersion, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    read_manifest_entries,
    read_manifest_list,
    shared_manifest_cache,
)
from icenb.io.root_manifest import (
    load_manifest_dv,
    read_content_manifest,
    read_root_manifest,
)
from icenb.reprs import safe_repr
from icenb.spec.content_entry import ContentEntry, ContentType, InheritFrom, inherit
from icenb.spec.deletion_vector import deserialize_deletion_vector
from icenb.spec.manifest import EntryStatus, FileContent, ManifestContent, ManifestFile
from icenb.spec.snapshot import MAIN_BRANCH, Snapshot
from icenb.spec.table_metadata import TableMetadata

__all__ = [
    "ContentType",
    "DVEdge",
    "EntryEdge",
    "FileNode",
    "LayoutComparison",
    "ListEdge",
    "ManifestDVNode",
    "ManifestNode",
    "MetadataGraph",
    "RootEntry",
    "RootManifest",
    "RootNode",
    "SnapshotNode",
    "V4Layout",
    "build_layout_comparison",
    "build_metadata_graph",
    "default_graph_snapshots",
    "resolve_snapshot",
    "root_from_manifest_list",
    "v4_layout",
]

#: Snapshots the graph shows when none are named: the last few of main's lineage.
DEFAULT_GRAPH_SNAPSHOTS = 4

_ENTRY_COLUMNS = (
    "data_file.file_path", "data_file.content", "data_file.file_format",
    "data_file.record_count", "data_file.file_size_in_bytes",
    "data_file.referenced_data_file", "data_file.content_offset",
)
_READ_ERRORS = (IcebergError, OSError, ValueError, KeyError, pa.ArrowException)


def _why(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _status_name(status: int | None) -> str:
    try:
        return EntryStatus(int(status)).name if status is not None else "UNKNOWN"
    except ValueError:
        return f"STATUS {status}"


@safe_repr
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
    root_manifest: str | None = None  # a v4 snapshot's root (then manifest_list is None)
    label: str | None = None          # a drawn-only snapshot's name (v4_layout)

    @property
    def has_root(self) -> bool:
        """A v4 snapshot: one root manifest instead of a manifest list."""
        return self.root_manifest is not None


@safe_repr
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


@safe_repr
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


@safe_repr
@dataclass(frozen=True)
class ListEdge:
    """A manifest list holding a manifest: ADDED when the manifest was added by that snapshot
    (its ``added_snapshot_id``), else EXISTING."""

    snapshot_id: int
    manifest_path: str
    status: str


@safe_repr
@dataclass(frozen=True)
class EntryEdge:
    """A manifest entry: the manifest, the file, and the entry's status and snapshot."""

    manifest_path: str
    file_path: str
    status: str                    # ADDED / EXISTING / DELETED
    snapshot_id: int | None
    sequence_number: int | None
    content_offset: int | None = None  # the DV's blob offset (None for other files)
    ordinal: int | None = None     # v4: the entry's position in its manifest
                                   # (docs/v4-layout.md#ordinals)
    removed_by: tuple[str, ...] = ()  # v4: keys of the manifest DVs that remove this row

    @property
    def file_key(self) -> tuple[str, int | None]:
        """The :attr:`FileNode.key` of the entry's file."""
        return (self.file_path, self.content_offset)


@safe_repr
@dataclass(frozen=True)
class RootNode:
    """A v4 snapshot's root manifest (proposal: "Root Manifests"): where it is, how many entries
    of each ``content_type`` it holds, how many were not drawn (bounded), or why it is
    unreadable. Its entries are the graph's edges: :class:`ListEdge` to leaf manifests,
    :class:`EntryEdge` (``manifest_path`` = the root) to files, :class:`DVEdge` to manifest
    DVs."""

    snapshot_id: int
    location: str
    entries_total: int
    entries_hidden: int
    type_counts: tuple[tuple[ContentType, int], ...]
    error: str | None = None

    def count(self, content_type: ContentType) -> int:
        """Entries of one content type (shown or not)."""
        return sum(n for t, n in self.type_counts if t == content_type)


@safe_repr
@dataclass(frozen=True)
class ManifestDVNode:
    """A manifest delete vector (content type 5): the leaf manifest it applies to and the
    ordinals (docs/v4-layout.md#ordinals) it removes; drawn once however many roots carry it."""

    key: str
    location: str
    referenced_file: str
    added_snapshot_id: int | None
    sequence_number: int | None
    cardinality: int
    ordinals: tuple[int, ...] | None   # None when not read (Puffin, unreadable, undrawn)
    inline: bool
    error: str | None = None


@safe_repr
@dataclass(frozen=True)
class DVEdge:
    """A root holding a manifest DV, with the entry's status."""

    snapshot_id: int
    dv_key: str
    status: str


@dataclass(frozen=True)
class MetadataGraph:
    """Snapshots, their manifest lists, distinct manifests and files, and the edges between;
    ``name`` is the table's catalog name (None when opened by location), ``table_snapshots``
    the table's snapshots (for short snapshot labels: snapshot_labels)."""

    location: str
    format_version: int
    snapshots: tuple[SnapshotNode, ...]
    manifests: tuple[ManifestNode, ...]
    files: tuple[FileNode, ...]
    list_edges: tuple[ListEdge, ...]
    entry_edges: tuple[EntryEdge, ...]
    entries: bool = True           # whether manifests were read (file nodes present)
    snapshots_hidden: int = 0      # asked for but left out (bounded)
    roots: tuple[RootNode, ...] = ()            # v4 snapshots' root manifests
    manifest_dvs: tuple[ManifestDVNode, ...] = ()
    dv_edges: tuple[DVEdge, ...] = ()
    name: str | None = None
    table_snapshots: tuple[Snapshot, ...] = ()

    def root(self, snapshot_id: int) -> RootNode | None:
        """The root manifest node of a v4 snapshot."""
        return next((r for r in self.roots if r.snapshot_id == snapshot_id), None)

    def manifest_dv(self, key: str) -> ManifestDVNode | None:
        """The manifest DV node with this key."""
        return next((d for d in self.manifest_dvs if d.key == key), None)

    def root_files(self, snapshot_id: int) -> tuple[EntryEdge, ...]:
        """The entries for content files held directly by a v4 snapshot's root."""
        r = self.root(snapshot_id)
        return () if r is None else tuple(e for e in self.entry_edges
                                           if e.manifest_path == r.location)

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
                  cache: ManifestCache | None, ordinals: bool = False
                  ) -> tuple[list[FileNode], list[EntryEdge], int, int]:
    """The shown entries of one manifest (head and tail), the total and the hidden count;
    ``ordinals``: note each entry's position (a v3 manifest under a v4 root,
    docs/v4-layout.md#ordinals)."""
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
                               content_offset=_opt_int(offsets[i]),
                               ordinal=keep[i] if ordinals else None))
    return files, edges, n, n - len(keep)


def _v4_file(e: ContentEntry) -> FileNode:
    """A content file (types 0-2) of a v4 manifest as a file node (same kinds as v3)."""
    dv = e.deletion_vector
    return FileNode(path=e.location, content=int(e.content_type),
                    file_format=e.file_format.value.upper(), record_count=e.record_count,
                    size_in_bytes=e.file_size_in_bytes, referenced_data_file=e.referenced_file,
                    content_offset=None if dv is None else dv.offset)


def _v4_edge(manifest: str, e: ContentEntry, ordinal: int) -> EntryEdge:
    vi = e.version_info
    dv = e.deletion_vector
    return EntryEdge(manifest_path=manifest, file_path=e.location, status=e.status.name,
                     snapshot_id=vi.snapshot_id, sequence_number=vi.sequence_number,
                     content_offset=None if dv is None else dv.offset, ordinal=ordinal)


def _dv_key(e: ContentEntry) -> str:
    """A manifest DV's identity across roots: its leaf and the commit that added it."""
    vi = e.version_info
    dv = e.deletion_vector
    blob = "" if dv is None else (f"{zlib.crc32(dv.inline_content):08x}"
                                  if dv.inline_content is not None else f"{dv.offset}")
    return f"{e.referenced_file}#dv@{vi.snapshot_id}:{vi.sequence_number}:{blob}"


#: Ordinals kept on a manifest DV node (the cardinality says how many there are).
MAX_DV_ORDINALS = 32

#: How a v4 leaf is obtained: its entries (inheritance applied) or, for a v1-v3 manifest
#: under an upgraded root, the ManifestFile the v3 reader takes; errors are raised.
LeafSource = Callable[[ContentEntry], "list[ContentEntry] | ManifestFile"]
#: The ordinals a manifest DV entry removes (None: not known without reading).
DVSource = Callable[[ContentEntry], "Positions | None"]


class Positions:
    """Ordinals of a manifest DV: membership and the sorted values (bounded for display)."""

    def __init__(self, values: Sequence[int]) -> None:
        self._set = frozenset(int(v) for v in values)

    def __contains__(self, v: object) -> bool:
        return v in self._set

    def head(self, n: int) -> tuple[int, ...]:
        """The ``n`` smallest ordinals."""
        return tuple(sorted(self._set)[:n])


class _Parts:
    """Nodes and edges collected while reading (v3 lists and v4 roots alike)."""

    def __init__(self, max_manifests: int, max_files: int, entries: bool) -> None:
        self.max_manifests, self.max_files, self.entries = max_manifests, max_files, entries
        self.snap_nodes: list[SnapshotNode] = []
        self.list_edges: list[ListEdge] = []
        self.manifest_files: dict[str, ManifestFile | ContentEntry] = {}
        self.manifests: list[ManifestNode] = []
        self.files: dict[tuple[str, int | None], FileNode] = {}
        self.entry_edges: list[EntryEdge] = []
        self.roots: list[RootNode] = []
        self.dvs: dict[str, ManifestDVNode] = {}
        self.dv_positions: dict[str, Positions] = {}
        self.dv_edges: list[DVEdge] = []

    def add_root(self, snap: SnapshotNode, root_location: str,
                 entries: Sequence[ContentEntry] | None, error: str | None,
                 read_dv: DVSource) -> None:
        """A v4 snapshot: its node, its root node, and edges to the shown root entries."""
        listed = list(entries or [])
        keep = _fold_indices(len(listed), self.max_manifests)
        counts: dict[ContentType, int] = {}
        for e in listed:
            counts[e.content_type] = counts.get(e.content_type, 0) + 1
        live = [e for e in listed if e.is_live]
        kinds = {e.location: e.content_type for e in live if e.content_type.is_manifest}

        def live_files(file_type: ContentType, leaf_type: ContentType) -> int | None:
            if error is not None:
                return None
            n = sum(1 for e in live if e.content_type == file_type)
            for e in live:
                if e.content_type == leaf_type and e.manifest_stats is not None:
                    ms = e.manifest_stats
                    n += ms.added_files_count + ms.existing_files_count
                elif (e.content_type == ContentType.MANIFEST_DV
                      and kinds.get(e.referenced_file or "") == leaf_type):
                    n -= e.record_count
            return n

        sid = snap.snapshot_id
        self.snap_nodes.append(replace(
            snap, manifests_total=len(listed), manifests_hidden=len(listed) - len(keep),
            data_manifests=counts.get(ContentType.DATA_MANIFEST, 0),
            delete_manifests=counts.get(ContentType.DELETE_MANIFEST, 0),
            live_data_files=live_files(ContentType.DATA, ContentType.DATA_MANIFEST),
            live_delete_files=_sum([
                live_files(ContentType.POSITION_DELETE, ContentType.DELETE_MANIFEST),
                sum(1 for e in live if e.content_type == ContentType.EQUALITY_DELETE)]),
            error=error))
        self.roots.append(RootNode(
            snapshot_id=sid, location=root_location, entries_total=len(listed),
            entries_hidden=len(listed) - len(keep),
            type_counts=tuple((t, counts[t]) for t in sorted(counts)), error=error))
        for i in keep:
            e = listed[i]
            if e.content_type.is_manifest:
                self.manifest_files.setdefault(e.location, e)
                self.list_edges.append(ListEdge(sid, e.location, e.status.name))
            elif e.content_type == ContentType.MANIFEST_DV:
                key = _dv_key(e)
                if key not in self.dvs:
                    self.dvs[key] = self._dv_node(key, e, read_dv)
                self.dv_edges.append(DVEdge(sid, key, e.status.name))
            else:
                f = _v4_file(e)
                self.files.setdefault(f.key, f)
                self.entry_edges.append(_v4_edge(root_location, e, i))

    def _dv_node(self, key: str, e: ContentEntry, read_dv: DVSource) -> ManifestDVNode:
        vi = e.version_info
        dv = e.deletion_vector
        error = None
        positions: Positions | None = None
        try:
            positions = read_dv(e)
        except _READ_ERRORS as err:
            error = _why(err)
        if positions is not None:
            self.dv_positions[key] = positions
        return ManifestDVNode(
            key=key, location=e.location, referenced_file=e.referenced_file or "",
            added_snapshot_id=vi.snapshot_id, sequence_number=vi.sequence_number,
            cardinality=e.record_count,
            ordinals=None if positions is None else positions.head(MAX_DV_ORDINALS),
            inline=dv is not None and dv.is_inline, error=error)

    def add_v4_leaf(self, e: ContentEntry, read_leaf: LeafSource,
                    read_v3: Callable[[ManifestFile], tuple[list[FileNode], list[EntryEdge],
                                                            int, int]] | None) -> None:
        """A leaf manifest a root lists (type 3 or 4): its node, shown entries and files."""
        vi = e.version_info
        ms = e.manifest_stats
        total: int | None = None
        hidden = 0
        error = None
        if self.entries:
            try:
                got = read_leaf(e)
                if isinstance(got, ManifestFile):
                    if read_v3 is None:
                        raise ValidationError("a v1-v3 manifest needs file access",
                                              field="location", value=e.location)
                    fs, es, total, hidden = read_v3(got)
                    for f in fs:
                        self.files.setdefault(f.key, f)
                    self.entry_edges.extend(es)
                else:
                    total = len(got)
                    keep = _fold_indices(total, self.max_files)
                    hidden = total - len(keep)
                    for i in keep:
                        f = _v4_file(got[i])
                        self.files.setdefault(f.key, f)
                        self.entry_edges.append(_v4_edge(e.location, got[i], i))
            except _READ_ERRORS as err:
                error = _why(err)
        self.manifests.append(ManifestNode(
            path=e.location,
            content=int(ManifestContent.DELETES if e.content_type == ContentType.DELETE_MANIFEST
                        else ManifestContent.DATA),
            added_snapshot_id=vi.snapshot_id if vi.snapshot_id is not None else -1,
            sequence_number=vi.sequence_number if vi.sequence_number is not None else -1,
            partition_spec_id=e.partition_spec_id, length=e.file_size_in_bytes or 0,
            added_files=None if ms is None else ms.added_files_count,
            existing_files=None if ms is None else ms.existing_files_count,
            deleted_files=None if ms is None else ms.deleted_files_count,
            entries_total=total, entries_hidden=hidden, error=error))

    def graph(self, location: str, format_version: int, snapshots_hidden: int) -> MetadataGraph:
        """The collected graph; leaf rows a carried manifest DV removes are marked."""
        removing: dict[str, list[str]] = {}
        live_keys = {d.dv_key for d in self.dv_edges if d.status != "DELETED"}
        for key, node in self.dvs.items():
            if key in live_keys and key in self.dv_positions:
                removing.setdefault(node.referenced_file, []).append(key)
        edges = []
        for ee in self.entry_edges:
            keys = removing.get(ee.manifest_path)
            if keys and ee.ordinal is not None:
                by = tuple(k for k in keys if ee.ordinal in self.dv_positions[k])
                if by:
                    ee = replace(ee, removed_by=by)
            edges.append(ee)
        return MetadataGraph(location=location, format_version=format_version,
                             snapshots=tuple(self.snap_nodes), manifests=tuple(self.manifests),
                             files=tuple(self.files.values()), list_edges=tuple(self.list_edges),
                             entry_edges=tuple(edges), entries=self.entries,
                             snapshots_hidden=snapshots_hidden, roots=tuple(self.roots),
                             manifest_dvs=tuple(self.dvs.values()),
                             dv_edges=tuple(self.dv_edges))


def _real_leaf(io: FileIO, root_location: str) -> LeafSource:
    def read(e: ContentEntry) -> list[ContentEntry] | ManifestFile:
        from icenb.table.commit.v4_upgrade import manifest_file_of

        try:
            m = read_content_manifest(io, e.location, length=e.file_size_in_bytes)
        except UnsupportedVersion:
            return manifest_file_of(e)   # a v1-v3 manifest after an upgrade
                                         # (docs/v4-layout.md#upgrade)
        return inherit(m.entries, InheritFrom.from_root_entry(e, file=root_location),
                       file=m.location)
    return read


def _real_dv(io: FileIO, root_location: str) -> DVSource:
    def read(e: ContentEntry) -> Positions:
        dv = load_manifest_dv(io, e, file=root_location)
        return Positions([int(v) for v in dv.to_numpy()])
    return read


def build_metadata_graph(io: FileIO, metadata: TableMetadata, snapshot_ids: Sequence[int], *,
                         entries: bool = True, max_snapshots: int = 40,
                         max_manifests: int = 12, max_files: int = 8,
                         cache: ManifestCache | None = None,
                         name: str | None = None) -> MetadataGraph:
    """Read the manifest lists (v4: root manifests) of ``snapshot_ids`` (at most
    ``max_snapshots``, the last ones kept) and, with ``entries``, their manifests, each
    distinct file once (at most ``max_manifests`` manifests / root entries per snapshot and
    ``max_files`` entries per manifest; the rest are counted as hidden). Unreadable files
    become ``error`` fields."""
    cache = shared_manifest_cache(io) if cache is None else cache
    ids = list(dict.fromkeys(snapshot_ids))
    snapshots_hidden = max(len(ids) - max_snapshots, 0)
    ids = ids[snapshots_hidden:]
    refs = _refs_by_snapshot(metadata)
    parts = _Parts(max_manifests, max_files, entries)
    v3_version = min(metadata.format_version, 3)
    for sid in ids:
        snap = metadata.snapshot_by_id(sid)
        if snap is None:
            raise NoSuchSnapshot("no such snapshot in the table metadata",
                                 file=metadata.source_file, field="snapshot-id", value=sid)
        if snap.root_manifest is not None:
            root_loc = snap.root_manifest
            try:
                root_entries: list[ContentEntry] | None = list(read_root_manifest(
                    io, root_loc, snapshot_id=snap.snapshot_id,
                    sequence_number=snap.sequence_number).entries)
                error = None
            except _READ_ERRORS as e:
                root_entries, error = None, _why(e)
            base = replace(_snapshot_node(snap, metadata, refs, [], 0, error),
                           root_manifest=root_loc)
            parts.add_root(base, root_loc, root_entries, error, _real_dv(io, root_loc))
            continue
        try:
            listed = read_manifest_list(io, snap, v3_version)
            error = None
        except _READ_ERRORS as e:
            listed, error = [], _why(e)
        keep = _fold_indices(len(listed), max_manifests)
        parts.snap_nodes.append(_snapshot_node(snap, metadata, refs, listed,
                                               len(listed) - len(keep), error))
        for i in keep:
            m = listed[i]
            parts.manifest_files.setdefault(m.manifest_path, m)
            status = "ADDED" if m.added_snapshot_id == sid else "EXISTING"
            parts.list_edges.append(ListEdge(sid, m.manifest_path, status))

    def read_v3(m: ManifestFile) -> tuple[list[FileNode], list[EntryEdge], int, int]:
        return _read_entries(io, m, v3_version, max_files, cache, ordinals=bool(parts.roots))

    root_of = {r.snapshot_id: r.location for r in parts.roots}
    roots_by_leaf = {le.manifest_path: root_of[le.snapshot_id] for le in parts.list_edges
                     if le.snapshot_id in root_of}
    for path, held in parts.manifest_files.items():
        if isinstance(held, ContentEntry):
            parts.add_v4_leaf(held, _real_leaf(io, roots_by_leaf.get(path, "")), read_v3)
            continue
        m = held
        total: int | None = None
        hidden = 0
        error = None
        if entries:
            try:
                fs, es, total, hidden = read_v3(m)
                for f in fs:
                    parts.files.setdefault(f.key, f)
                parts.entry_edges.extend(es)
            except _READ_ERRORS as e:
                error = _why(e)
        parts.manifests.append(ManifestNode(
            path=path, content=int(m.content), added_snapshot_id=m.added_snapshot_id,
            sequence_number=m.sequence_number, partition_spec_id=m.partition_spec_id,
            length=m.manifest_length, added_files=m.added_files_count,
            existing_files=m.existing_files_count, deleted_files=m.deleted_files_count,
            entries_total=total, entries_hidden=hidden, error=error))
    return replace(parts.graph(metadata.location, metadata.format_version, snapshots_hidden),
                   name=name, table_snapshots=tuple(metadata.snapshots))


# --------------------------------------------------------------------------- drawn layouts


@dataclass(frozen=True)
class V4Layout:
    """A v4 layout drawn from content entries alone (no table, no I/O): for layouts that are
    not, or cannot be, real tables, such as the proposal's discarded approaches. ``graph`` is
    the same model :meth:`Table.metadata_graph` gives for a real v4 table, so both draw alike.
    Experimental: the single-file-commits proposal is not adopted."""

    graph: MetadataGraph
    title: str = ""
    note: str | None = None

    def __repr__(self) -> str:
        return (f"V4Layout({self.title!r}: {len(self.graph.snapshots)} snapshots, "
                f"{len(self.graph.manifests)} leaves, {len(self.graph.manifest_dvs)} "
                "manifest DVs)")


def _resolved(entries: Sequence[ContentEntry], snapshot_id: int, sequence_number: int
              ) -> list[ContentEntry]:
    """Entries with null snapshot ids / sequence numbers filled from the drawn snapshot
    (lenient inheritance: a drawing need not carry explicit values)."""
    out = []
    for e in entries:
        vi = e.version_info
        out.append(replace(e, version_info=replace(
            vi, snapshot_id=snapshot_id if vi.snapshot_id is None else vi.snapshot_id,
            sequence_number=sequence_number if vi.sequence_number is None
            else vi.sequence_number,
            file_sequence_number=sequence_number if vi.file_sequence_number is None
            else vi.file_sequence_number)))
    return out


def _drawn_dv(e: ContentEntry) -> Positions | None:
    dv = e.deletion_vector
    if dv is None or dv.inline_content is None:
        return None
    return Positions([int(v) for v in deserialize_deletion_vector(dv.inline_content).to_numpy()])


def v4_layout(snapshots: Sequence[tuple[str, Sequence[ContentEntry]]],
              leaves: Mapping[str, Sequence[ContentEntry]] | None = None, *, title: str = "",
              note: str | None = None, max_manifests: int = 12, max_files: int = 8
              ) -> V4Layout:
    """Draw snapshots (label, root entries) and leaf manifests (location -> entries) as a v4
    metadata graph, exactly as a real v4 table's :class:`MetadataGraph` is drawn: snapshot ->
    root -> entries, leaves keyed by location, manifest DVs (inline ordinals) striking the leaf
    rows they remove. Nothing is read; a leaf missing from ``leaves`` is an error on its node.
    Snapshots get ids 1, 2, ... and sequence numbers 1, 2, ... for values left null."""
    given = {k: list(v) for k, v in (leaves or {}).items()}
    parts = _Parts(max_manifests, max_files, True)
    n = len(snapshots)
    for i, (label, entries) in enumerate(snapshots):
        sid = i + 1
        root_loc = f"{label} root manifest"
        node = SnapshotNode(snapshot_id=sid, parent_id=sid - 1 if i else None, timestamp_ms=0,
                            sequence_number=sid, operation=None, manifest_list=None,
                            current=i == n - 1, refs=(), manifests_total=0, manifests_hidden=0,
                            data_manifests=0, delete_manifests=0, live_data_files=None,
                            live_delete_files=None, root_manifest=root_loc, label=str(label))
        parts.add_root(node, root_loc, _resolved(entries, sid, sid), None, _drawn_dv)

    def leaf(e: ContentEntry) -> list[ContentEntry]:
        if e.location not in given:
            raise ValidationError("no entries given for this leaf manifest", field="leaves",
                                  value=e.location)
        vi = e.version_info
        return _resolved(given[e.location], vi.snapshot_id or 0, vi.sequence_number or 0)

    for m in parts.manifest_files.values():
        if isinstance(m, ContentEntry):
            parts.add_v4_leaf(m, leaf, None)
    return V4Layout(parts.graph("", 4, 0), title=title, note=note)


# --------------------------------------------------------------------------- root vs list


@safe_repr
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


@safe_repr
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
    live_type_counts: tuple[tuple[ContentType, int], ...] | None = None  # a real root's

    @property
    def entries_total(self) -> int:
        """All entries, shown or not."""
        return sum(n for _, n in self.type_counts)

    def count(self, content_type: ContentType) -> int:
        """Entries of one content type."""
        return sum(n for t, n in self.type_counts if t == content_type)

    def live(self, content_type: ContentType) -> int:
        """Live (not DELETED) entries of one content type: what a reader uses."""
        counts = self.type_counts if self.live_type_counts is None else self.live_type_counts
        return sum(n for t, n in counts if t == content_type)


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


@safe_repr
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
        if snap is not None and snap.has_root:
            return self._v4_rows(snap)
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

    def _v4_rows(self, snap: SnapshotNode) -> tuple[LayoutRow, ...]:
        """A v4 snapshot: the real root against the fewest v1-v3 manifests that would hold
        the same files (its live leaves, plus one manifest per kind for the files the root
        holds itself; manifest DVs become rewritten manifests)."""
        root = self.root
        ok = snap.error is None
        data = root.live(ContentType.DATA_MANIFEST)
        dels = root.live(ContentType.DELETE_MANIFEST)
        root_data = root.live(ContentType.DATA)
        root_dels = root.live(ContentType.POSITION_DELETE) + \
            root.live(ContentType.EQUALITY_DELETE)
        v3_data = data + int(root_data > 0)
        v3_dels = dels + int(root_dels > 0)

        def known(v: int) -> int | None:
            return v if ok else None

        return (
            LayoutRow("top-level metadata files (manifest list / root manifest)", 1, 1),
            LayoutRow("data manifests", known(v3_data), known(data)),
            LayoutRow("delete manifests", known(v3_dels), known(dels)),
            LayoutRow("content files listed in the top-level file", 0,
                      known(root_data + root_dels)),
            LayoutRow("manifest deletion vectors", 0,
                      known(root.live(ContentType.MANIFEST_DV))),
            LayoutRow("metadata files a reader opens to plan (top-level + manifests)",
                      known(1 + v3_data + v3_dels), known(1 + data + dels)),
            LayoutRow("live data files", snap.live_data_files, snap.live_data_files),
            LayoutRow("live delete files", snap.live_delete_files, snap.live_delete_files),
        )

    def __repr__(self) -> str:
        return (f"LayoutComparison(snapshot {self.snapshot_id}: "
                f"{len(self.graph.manifests)} manifests, root entries "
                f"{self.root.entries_total})")


def _real_root(io: FileIO, snap: Snapshot, max_entries: int) -> RootManifest:
    """A v4 snapshot's real root manifest (``derived`` False); unreadable: no entries (the
    graph's snapshot node carries the error)."""
    loc = snap.root_manifest or ""
    try:
        entries = list(read_root_manifest(io, loc, snapshot_id=snap.snapshot_id,
                                          sequence_number=snap.sequence_number).entries)
    except _READ_ERRORS:
        return RootManifest(snap.snapshot_id, loc, (), (), derived=False, live_type_counts=())
    shown = [entries[i] for i in _fold_indices(len(entries), max_entries)]
    out = []
    for e in shown:
        vi, ms = e.version_info, e.manifest_stats
        out.append(RootEntry(
            content_type=e.content_type, location=e.location, status=e.status.name,
            snapshot_id=vi.snapshot_id, sequence_number=vi.sequence_number,
            file_size_in_bytes=e.file_size_in_bytes,
            added_files=None if ms is None else ms.added_files_count,
            existing_files=None if ms is None else ms.existing_files_count,
            deleted_files=None if ms is None else ms.deleted_files_count,
            referenced_file=e.referenced_file))

    def counts(es: Sequence[ContentEntry]) -> tuple[tuple[ContentType, int], ...]:
        c: dict[ContentType, int] = {}
        for e in es:
            c[e.content_type] = c.get(e.content_type, 0) + 1
        return tuple((t, c[t]) for t in sorted(c))

    return RootManifest(snap.snapshot_id, loc, tuple(out), counts(entries), derived=False,
                        live_type_counts=counts([e for e in entries if e.is_live]))


def build_layout_comparison(io: FileIO, metadata: TableMetadata, snapshot_id: int, *,
                            root: RootManifest | None = None, max_manifests: int = 12,
                            max_files: int = 8, cache: ManifestCache | None = None
                            ) -> LayoutComparison:
    """Read one snapshot's metadata tree and pair it with ``root`` (by default the root manifest
    the proposal's upgrade derives from its manifest list)."""
    graph = build_metadata_graph(io, metadata, [snapshot_id], entries=True,
                                 max_manifests=max_manifests, max_files=max_files, cache=cache)
    snap = metadata.snapshot_by_id(snapshot_id)
    if root is None and snap is not None and snap.root_manifest is not None:
        root = _real_root(io, snap, max_manifests)
    if root is None:
        root = root_from_manifest_list(graph, snapshot_id)
    elif root.snapshot_id != snapshot_id:
        raise ValidationError("the root manifest belongs to another snapshot",
                              field="root.snapshot_id", value=root.snapshot_id)
    return LayoutComparison(snapshot_id=snapshot_id, graph=graph, root=root)
