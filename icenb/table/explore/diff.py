"""What changed between two snapshots: content files added and removed, rows by file metadata,
and which new delete files apply to which data files.

Spec: "Manifests" (an entry that is not DELETED is live), "Scan Planning" (a deletion vector
or a position delete with ``referenced_data_file`` applies to that file; other position deletes
to data files of the same spec and partition with a data sequence number <= theirs; equality
deletes to the same partition, or all files when unpartitioned, with a smaller one).

:func:`diff_snapshots` reads the two snapshots' manifests (explicit I/O). It keeps exact counts
and sums, and the files themselves only up to ``max_files`` per list (head and tail by path), so
a diff of two huge snapshots stays small. :meth:`SnapshotDiff.rows` reads data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    LiveFiles,
    ManifestCache,
    live_data_files,
    shared_manifest_cache,
)
from icenb.reprs import safe_repr
from icenb.spec.human import partition_text
from icenb.spec.manifest import EntryStatus, FileContent, FileFormat
from icenb.spec.snapshot import Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.explore.evolution_history import resolve_snapshot
from icenb.table.scan.delete_index import match_deletes
from icenb.table.scan.v4_planning import snapshot_entries

__all__ = ["DeleteApplication", "FileInfo", "FileSet", "SnapshotDiff", "diff_snapshots",
           "entry_keys"]

#: Files kept per list (added data, removed data, ...) for display; counts stay exact.
DEFAULT_MAX_FILES = 1000

_COLUMNS = tuple(f"data_file.{n}" for n in (
    "content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
    "referenced_data_file", "equality_ids", "lower_bounds", "upper_bounds", "content_offset"))

DELETION_VECTOR = "deletion vector"
POSITION_DELETE = "position delete"
EQUALITY_DELETE = "equality delete"


@safe_repr
@dataclass(frozen=True)
class FileInfo:
    """One added or removed content file, as its manifest entry describes it."""

    path: str
    content: int  # 0 data, 1 position deletes, 2 equality deletes
    file_format: str
    record_count: int
    file_size_in_bytes: int
    spec_id: int
    partition: tuple[tuple[str, Any], ...]  # (partition field name, value), non-null fields
    sequence_number: int | None
    referenced_data_file: str | None
    partition_text: str = ""  # ``ts_month=2024-03`` (the transforms' human strings)
    content_offset: int | None = None  # a deletion vector's blob offset in its Puffin file

    @property
    def key(self) -> tuple[str, int | None]:
        """What identifies the entry: one Puffin file holds many DVs (spec: Deletion Vectors,
        ``content_offset``), so the path alone does not; None offset for other files."""
        return (self.path, self.content_offset)

    @property
    def kind(self) -> str:
        """``data``, ``deletion vector``, ``position delete`` or ``equality delete``."""
        if self.content == FileContent.DATA:
            return "data"
        if self.content == FileContent.EQUALITY_DELETES:
            return EQUALITY_DELETE
        if self.file_format.upper() == FileFormat.PUFFIN.name:
            return DELETION_VECTOR
        return POSITION_DELETE


@safe_repr
@dataclass(frozen=True)
class FileSet:
    """Files added (or removed): exact ``count``, ``records`` and ``size_in_bytes``; the files
    themselves sorted by path, only ``head`` and ``tail`` when more than kept."""

    count: int
    records: int
    size_in_bytes: int
    head: tuple[FileInfo, ...]
    tail: tuple[FileInfo, ...]  # empty unless files were left out between head and tail
    by_kind: tuple[tuple[str, int, int], ...] = ()  # (FileInfo.kind, files, records), exact

    @property
    def kept(self) -> tuple[FileInfo, ...]:
        return self.head + self.tail

    @property
    def omitted(self) -> int:
        """Files neither in head nor tail."""
        return self.count - len(self.head) - len(self.tail)

    def sample(self, limit: int) -> tuple[tuple[FileInfo, ...], int, tuple[FileInfo, ...]]:
        """At most ``limit`` files as (head, number hidden, tail), the tail being the last."""
        if self.count <= limit and not self.omitted:
            return self.kept, 0, ()
        t = min(limit // 2, len(self.tail) or len(self.head))
        h = limit - t
        kept_head = self.head[:h]
        tail_src = self.tail if self.tail else self.head[h:]
        kept_tail = tail_src[len(tail_src) - t:] if t else ()
        return kept_head, self.count - len(kept_head) - len(kept_tail), kept_tail

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Any:
        return iter(self.kept)


@safe_repr
@dataclass(frozen=True)
class DeleteApplication:
    """A delete file new in ``b`` and the live data files of ``b`` it applies to."""

    delete: FileInfo
    data_file_count: int
    data_files: tuple[str, ...]  # paths, first ``max_files`` by path

    @property
    def rows(self) -> int:
        """Rows the delete file holds (positions, or equality keys), from its record_count."""
        return self.delete.record_count


@dataclass(frozen=True)
class SnapshotDiff:
    """Files and rows that differ between snapshot ``a`` and snapshot ``b``."""

    metadata: TableMetadata
    io: FileIO
    a: Snapshot
    b: Snapshot
    a_label: str  # what the caller passed (a ref name or the id)
    b_label: str
    a_is_ancestor: bool
    data_added: FileSet
    data_removed: FileSet
    deletes_added: FileSet
    deletes_removed: FileSet
    applications: tuple[DeleteApplication, ...]  # for the kept added delete files
    data_files_hit: int  # distinct live data files of b that some added delete applies to
    unchanged_data_files: int
    unchanged_delete_files: int

    @property
    def records_added(self) -> int:
        """Records in added data files (file metadata)."""
        return self.data_added.records

    @property
    def records_removed(self) -> int:
        """Records in removed data files (file metadata)."""
        return self.data_removed.records

    @property
    def rows_deleted(self) -> int:
        """Rows held by added delete files (positions or keys; file metadata)."""
        return self.deletes_added.records

    @property
    def is_empty(self) -> bool:
        return not (self.data_added.count or self.data_removed.count
                    or self.deletes_added.count or self.deletes_removed.count)

    def rows(self) -> tuple[pa.Table, pa.Table]:
        """(rows removed, rows added) going from ``a`` to ``b``, by reading data (explicit I/O).

        The net of the changelog from ``a`` to ``b`` (:meth:`Table.changes`), for any two
        snapshots: only data files whose rows can differ are read (files live on one side
        only, and files whose applicable deletes differ), in parallel, each once, with ``b``'s
        schema; the rows both sides hold cancel one for one, columnar (a row present twice in
        ``a`` and once in ``b`` is removed once).
        """
        from icenb.table.explore.changelog import changed_rows, net_rows

        schema = self.metadata.schema_for_snapshot(self.b.snapshot_id)
        [(deleted, inserted)] = changed_rows(self.io, self.metadata,
                                             [(self.a.snapshot_id, self.b.snapshot_id)], schema,
                                             reduce=net_rows)
        return deleted, inserted

    def __repr__(self) -> str:
        return (f"SnapshotDiff({self.a.snapshot_id} -> {self.b.snapshot_id}: "
                f"+{self.data_added.count}/-{self.data_removed.count} data files, "
                f"+{self.deletes_added.count}/-{self.deletes_removed.count} delete files)")


# --------------------------------------------------------------------------- diffing


def _paths(entries: pa.Table) -> pa.Array:
    return pc.struct_field(entries.column("data_file"), "file_path").combine_chunks() \
        if entries.num_rows else pa.array([], pa.string())


def _offsets(entries: pa.Table) -> pa.Array:
    """``content_offset`` per entry (null for files that are not deletion vectors)."""
    df = entries.column("data_file")
    if df.type.get_field_index("content_offset") < 0:
        return pa.nulls(entries.num_rows, pa.int64())
    return pc.struct_field(df, "content_offset").combine_chunks()


def entry_keys(entries: pa.Table) -> pa.Array:
    """One string per entry naming its file: the path, and a DV's ``content_offset`` (one
    Puffin file holds many DVs; spec: Deletion Vectors)."""
    offsets = pc.fill_null(pc.cast(_offsets(entries), pa.string()), "")
    return pc.binary_join_element_wise(_paths(entries), offsets, "\x00")


def _only_in(left: pa.Table, right: pa.Table) -> pa.Table:
    """Entries of ``left`` whose (file path, content_offset) is not among ``right``'s."""
    if left.num_rows == 0 or right.num_rows == 0:
        return left
    mask = pc.invert(pc.is_in(entry_keys(left), value_set=entry_keys(right)))
    return left.filter(mask)


def _sum(entries: pa.Table, name: str) -> int:
    if entries.num_rows == 0:
        return 0
    return int(pc.sum(pc.struct_field(entries.column("data_file"), name)).as_py() or 0)


def _kept_rows(entries: pa.Table, max_files: int) -> tuple[np.ndarray[Any, Any],
                                                             np.ndarray[Any, Any]]:
    """Row indices (sorted by path, then DV offset) of the head and tail kept for display."""
    if entries.num_rows == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys = pa.table({"path": _paths(entries), "offset": _offsets(entries)})
    order = np.asarray(pc.sort_indices(keys, sort_keys=[("path", "ascending"),
                                                        ("offset", "ascending")]))
    n = len(order)
    if n <= max_files:
        return order, order[:0]
    half = max_files - max_files // 2
    return order[:half], order[n - max_files // 2:]


def _partition_text(metadata: TableMetadata, spec_id: int,
                    values: tuple[tuple[str, Any], ...]) -> str:
    """``name=value`` pairs as partition paths show them (spec: Appendix C, human strings;
    :func:`icenb.spec.human.partition_text`)."""
    schemas = (metadata.schema, *reversed(metadata.schemas))
    return partition_text(metadata.spec_by_id(spec_id), schemas, dict(values))


def _file_infos(metadata: TableMetadata, entries: pa.Table, rows: np.ndarray[Any, Any]
                ) -> tuple[FileInfo, ...]:
    if len(rows) == 0:
        return ()
    sub = entries.take(pa.array(rows, pa.int64()))
    df = sub.column("data_file").combine_chunks()
    names = {f.name for f in df.type}

    def col(name: str) -> list[Any]:
        return pc.struct_field(df, name).to_pylist() if name in names else [None] * len(sub)

    parts = col("partition")
    specs = sub.column("partition_spec_id").to_pylist()
    seqs = sub.column("sequence_number").to_pylist()
    out = []
    for i, (content, path, fmt, count, size, ref, offset) in enumerate(zip(
            col("content"), col("file_path"), col("file_format"), col("record_count"),
            col("file_size_in_bytes"), col("referenced_data_file"), col("content_offset"),
            strict=True)):
        part = tuple((k, v) for k, v in (parts[i] or {}).items() if v is not None)
        spec_id = int(specs[i] or 0)
        out.append(FileInfo(str(path), int(content or 0), str(fmt or ""), int(count or 0),
                            int(size or 0), spec_id, part,
                            None if seqs[i] is None else int(seqs[i]), ref,
                            _partition_text(metadata, spec_id, part),
                            None if offset is None else int(offset)))
    return tuple(out)


def _kinds(entries: pa.Table) -> tuple[tuple[str, int, int], ...]:
    """Exact (kind, files, records) of entries, in the order data, DV, position, equality."""
    if entries.num_rows == 0:
        return ()
    df = entries.column("data_file")
    content = pc.struct_field(df, "content")
    fmt = pc.utf8_upper(pc.struct_field(df, "file_format"))
    records = pc.struct_field(df, "record_count")
    puffin = pc.equal(fmt, FileFormat.PUFFIN.name)
    masks = (
        ("data", pc.equal(content, int(FileContent.DATA))),
        (DELETION_VECTOR, pc.and_(pc.equal(content, int(FileContent.POSITION_DELETES)), puffin)),
        (POSITION_DELETE, pc.and_(pc.equal(content, int(FileContent.POSITION_DELETES)),
                                  pc.invert(puffin))),
        (EQUALITY_DELETE, pc.equal(content, int(FileContent.EQUALITY_DELETES))),
    )
    out = []
    for kind, mask in masks:
        n = int(pc.sum(pc.cast(pc.fill_null(mask, False), pa.int64())).as_py() or 0)
        if n:
            rows = int(pc.sum(pc.filter(records, pc.fill_null(mask, False))).as_py() or 0)
            out.append((kind, n, rows))
    return tuple(out)


def _file_set(metadata: TableMetadata, entries: pa.Table, max_files: int
              ) -> tuple[FileSet, np.ndarray[Any, Any]]:
    head_rows, tail_rows = _kept_rows(entries, max_files)
    fs = FileSet(int(entries.num_rows), _sum(entries, "record_count"),
                 _sum(entries, "file_size_in_bytes"), _file_infos(metadata, entries, head_rows),
                 _file_infos(metadata, entries, tail_rows), _kinds(entries))
    return fs, np.concatenate([head_rows, tail_rows])


def _live_files(io: FileIO, metadata: TableMetadata, snapshot: Snapshot,
                cache: ManifestCache) -> LiveFiles:
    """A snapshot's live data and delete file entries; on a v4 snapshot those of its root and
    live leaves, without the entries its manifest DVs remove (docs/v4-layout.md#inspect)."""
    if snapshot.root_manifest is None:
        return live_data_files(io, metadata, snapshot.snapshot_id, columns=_COLUMNS,
                               cache=cache)
    entries = snapshot_entries(io, metadata, snapshot, cache=cache).entries
    live = entries.filter(pc.not_equal(entries.column("status"),
                                       pa.scalar(int(EntryStatus.DELETED), pa.int32())))
    content = pc.struct_field(live.column("data_file"), "content")
    is_data = pc.equal(content, pa.scalar(int(FileContent.DATA), pa.int32()))
    return LiveFiles(live.filter(is_data), live.filter(pc.invert(is_data)))


def diff_snapshots(metadata: TableMetadata, io: FileIO, a: int | str, b: int | str, *,
                   max_files: int = DEFAULT_MAX_FILES) -> SnapshotDiff:
    """The diff from snapshot ``a`` to snapshot ``b`` (ids or ref names), by live file (path,
    and content_offset for deletion vectors)."""
    if isinstance(max_files, bool) or not isinstance(max_files, int) or max_files < 1:
        raise ValidationError("max_files must be a positive integer", field="max_files",
                              value=max_files)
    snap_a = resolve_snapshot(metadata, a, what="a")
    snap_b = resolve_snapshot(metadata, b, what="b")
    cache = shared_manifest_cache(io)
    live_a = _live_files(io, metadata, snap_a, cache)
    live_b = _live_files(io, metadata, snap_b, cache)

    data_added_e = _only_in(live_b.data_files, live_a.data_files)
    data_removed_e = _only_in(live_a.data_files, live_b.data_files)
    del_added_e = _only_in(live_b.delete_files, live_a.delete_files)
    del_removed_e = _only_in(live_a.delete_files, live_b.delete_files)

    data_added, _ = _file_set(metadata, data_added_e, max_files)
    data_removed, _ = _file_set(metadata, data_removed_e, max_files)
    deletes_added, kept_rows = _file_set(metadata, del_added_e, max_files)
    deletes_removed, _ = _file_set(metadata, del_removed_e, max_files)

    # Every added delete is matched (exact counts); paths are kept for the kept ones only.
    hit = 0
    targets: dict[int, list[str]] = {int(j): [] for j in kept_rows}
    counts = [0] * del_added_e.num_rows
    if del_added_e.num_rows and live_b.data_files.num_rows:
        matched = match_deletes(live_b.data_files, del_added_e, metadata.specs_by_id)
        data_paths = _paths(live_b.data_files).to_pylist()
        for i, js in enumerate(matched):
            if js:
                hit += 1
            for j in js:
                counts[j] += 1
                kept = targets.get(j)
                if kept is not None:
                    kept.append(data_paths[i])
    applications = tuple(
        DeleteApplication(info, counts[int(j)], tuple(sorted(targets[int(j)])[:max_files]))
        for info, j in zip(deletes_added.kept, kept_rows, strict=True))

    return SnapshotDiff(
        metadata, io, snap_a, snap_b, str(a), str(b),
        metadata.is_ancestor(snap_a.snapshot_id, snap_b.snapshot_id),
        data_added, data_removed, deletes_added, deletes_removed, applications, hit,
        int(live_b.data_files.num_rows) - data_added.count,
        int(live_b.delete_files.num_rows) - deletes_added.count)

