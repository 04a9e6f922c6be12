"""The one walk over the files a snapshot references, for format v1-v3 and the EXPERIMENTAL v4.

v1-v3 snapshot (spec: "Manifest Lists", "Manifests"): its manifest list, the manifests it
lists, and the content files their entries name. v4 snapshot (proposal: "Root Manifest";
docs/v4-layout.md, "Reachability"): its root manifest, the root's file entries, its leaf
manifests (v4, or v1-v3 ones carried by an upgrade) and their entries, the Puffin files of
Puffin manifest DVs (inline ones have no file of their own), and a data DV's Puffin file (its
``location``).

Two readings of "references": ``live_only=True`` (expiry, Java's ``ReachableFileCleanup``) keeps
what a reader of the snapshot can reach — live entries, live leaves, minus the ordinals the
root's manifest DV for a leaf deletes; ``live_only=False`` (purge, Java's
``CatalogUtil.dropTableData``) takes every file named anywhere, DELETED entries included. Each
manifest or leaf is read once however many snapshots name it.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow.compute as pc

from icenb.errors import IcebergError, UnsupportedVersion
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.io.root_manifest import load_manifest_dv, read_content_manifest, read_root_manifest
from icenb.progress import LISTING_FILES, progress
from icenb.spec.content_entry import ContentEntry, ContentType, manifest_file_of
from icenb.spec.manifest import EntryStatus, FileContent, ManifestFile
from icenb.spec.table_metadata import TableMetadata

__all__ = ["CONTENT_KINDS", "FILE_KINDS", "V4_FILE_KINDS", "SnapshotFiles"]

#: Kinds of files, in the order results list them.
FILE_KINDS = ("data_files", "position_delete_files", "equality_delete_files", "manifest_dvs",
              "manifests", "root_manifests", "manifest_lists", "statistics_files")
#: The kinds only a v4 table has.
V4_FILE_KINDS = ("manifest_dvs", "root_manifests")
#: The kinds that hold rows (data and deletes), as opposed to metadata.
CONTENT_KINDS = ("data_files", "position_delete_files", "equality_delete_files")

_CONTENT_KIND = {int(FileContent.DATA): "data_files",
                 int(FileContent.POSITION_DELETES): "position_delete_files",
                 int(FileContent.EQUALITY_DELETES): "equality_delete_files"}
_ENTRY_KIND = {ContentType.DATA: "data_files",
               ContentType.POSITION_DELETE: "position_delete_files",
               ContentType.EQUALITY_DELETE: "equality_delete_files"}

# (live, kind, path) of every record of a manifest, in file order (ordinal = position).
_Records = list[tuple[bool, str, str]]


class SnapshotFiles:
    """The files each snapshot of ``metadata`` references, by kind (:data:`FILE_KINDS`).

    With ``failures`` (a list), a manifest list, root or manifest that cannot be read is
    recorded there as ``(location, reason)`` and skipped; without it, the error is raised.
    """

    def __init__(self, io: FileIO, metadata: TableMetadata, *,
                 failures: list[tuple[str, str]] | None = None) -> None:
        self._io = io
        self._metadata = metadata
        self._failures = failures
        self._records: dict[str, _Records] = {}

    def _failed(self, location: str, err: IcebergError) -> None:
        if self._failures is None:
            raise err
        self._failures.append((location, str(err)))

    def _v3_manifest(self, m: ManifestFile) -> _Records:
        """Every record of a v1-v3 manifest, in file order."""
        hit = self._records.get(m.manifest_path)
        if hit is not None:
            return hit
        version = min(self._metadata.format_version, 3)
        t = read_manifest_entries(self._io, [m], version,
                                  columns=("data_file.file_path", "data_file.content"))
        out: _Records = []
        if t.num_rows:
            df = t.column("data_file")
            for status, content, path in zip(
                    t.column("status").to_pylist(),
                    pc.struct_field(df, "content").to_pylist(),
                    pc.struct_field(df, "file_path").to_pylist(), strict=True):
                out.append((status != int(EntryStatus.DELETED),
                            _CONTENT_KIND.get(content, "data_files"), path))
        self._records[m.manifest_path] = out
        return out

    def _leaf(self, e: ContentEntry) -> _Records:
        """Every record of the leaf a root entry names, in ordinal order (docs/v4-layout.md,
        "Ordinals")."""
        hit = self._records.get(e.location)
        if hit is not None:
            return hit
        try:
            m = read_content_manifest(self._io, e.location, length=e.file_size_in_bytes)
        except UnsupportedVersion:  # a v1-v3 manifest carried by an upgrade
            return self._v3_manifest(manifest_file_of(e))
        out = [(x.is_live, _ENTRY_KIND.get(x.content_type, "data_files"), x.location)
               for x in m.entries]
        self._records[e.location] = out
        return out

    def files(self, snapshot_id: int, *, live_only: bool = True) -> dict[str, set[str]]:
        """The paths ``snapshot_id`` references, by kind (``statistics_files`` stays empty:
        statistics belong to the table metadata, not to a snapshot)."""
        snap = self._metadata.snapshot_by_id(snapshot_id)
        out: dict[str, set[str]] = {kind: set() for kind in FILE_KINDS}
        if snap is None:
            return out
        if snap.root_manifest is None:
            if snap.manifest_list is not None:
                out["manifest_lists"].add(snap.manifest_list)
            try:
                version = min(self._metadata.format_version, 3)
                manifests = read_manifest_list(self._io, snap, version)
            except IcebergError as err:
                self._failed(snap.manifest_list or str(snapshot_id), err)
                return out
            for m in manifests:
                out["manifests"].add(m.manifest_path)
                try:
                    records = self._v3_manifest(m)
                except IcebergError as err:
                    self._failed(m.manifest_path, err)
                    continue
                _add(out, records, live_only, ())
            return out
        out["root_manifests"].add(snap.root_manifest)
        try:
            root = read_root_manifest(self._io, snap.root_manifest, snapshot_id=snapshot_id,
                                      sequence_number=snap.sequence_number)
        except IcebergError as err:
            self._failed(snap.root_manifest, err)
            return out
        dvs: dict[str | None, tuple[int, ContentEntry]] = {}
        for i, entry in enumerate(root.entries):
            if live_only and not entry.is_live:
                continue
            if entry.content_type == ContentType.MANIFEST_DV:
                if entry.is_live:
                    dvs[entry.referenced_file] = (i, entry)
                if entry.deletion_vector is not None and not entry.deletion_vector.is_inline:
                    out["manifest_dvs"].add(entry.location)
            elif not entry.content_type.is_manifest:
                out[_ENTRY_KIND[entry.content_type]].add(entry.location)
        for leaf in root.entries:
            if not leaf.content_type.is_manifest or (live_only and not leaf.is_live):
                continue
            out["manifests"].add(leaf.location)
            deleted: set[int] = set()
            found = dvs.get(leaf.location)
            try:
                if live_only and found is not None:
                    i, dv_entry = found
                    dv = load_manifest_dv(self._io, dv_entry, file=root.location,
                                          where=f"entries[{i}]")
                    deleted = {int(x) for x in dv.to_numpy()}
                records = self._leaf(leaf)
            except IcebergError as err:
                self._failed(leaf.location, err)
                continue
            _add(out, records, live_only, deleted)
        return out

    def all_files(self, snapshot_ids: Iterable[int] | None = None, *,
                  live_only: bool = True) -> dict[str, set[str]]:
        """The union of :meth:`files` over ``snapshot_ids`` (default: every snapshot)."""
        ids = ([s.snapshot_id for s in self._metadata.snapshots] if snapshot_ids is None
               else list(snapshot_ids))
        out: dict[str, set[str]] = {kind: set() for kind in FILE_KINDS}
        with progress(LISTING_FILES, total=len(ids)) as task:
            for sid in ids:
                for kind, paths in self.files(sid, live_only=live_only).items():
                    out[kind] |= paths
                task.advance()
        return out


def _add(out: dict[str, set[str]], records: _Records, live_only: bool,
         deleted: set[int] | tuple[()]) -> None:
    for ordinal, (live, kind, path) in enumerate(records):
        if not live_only or (live and ordinal not in deleted):
            out[kind].add(path)
