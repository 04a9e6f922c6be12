"""Rewrite position delete files (Iceberg Java 1.10's ``RewritePositionDeleteFiles`` action /
Spark's ``rewrite_position_delete_files`` procedure), in one ``replace`` commit.

Spec sections: "Row-level Deletes", "Position Delete Files", "Deletion Vectors" (a v3 writer
must merge a data file's existing position deletes into its one DV), "Scan Planning" (which
delete applies to which data file), "Commit Conflict Resolution and Retry".

Per partition (spec id + tuple) of the position delete files the filter may match (inclusive
partition projection, as Java filters the ``position_deletes`` table by partition):

* a position is *live* when its data file is live in the branch head, in the delete's partition,
  with a data sequence number not above the delete's; other positions are *dangling* and dropped;
* v2 tables: a partition with two or more position delete files, or with dangling positions, is
  rewritten into Parquet position delete files (rolled at ``write.delete.target-file-size-bytes``);
* v3 tables: every Parquet/ORC/Avro position delete file (left from v2, e.g. after an upgrade)
  is merged, with the data file's existing DV, into one deletion vector per data file (Puffin);
  a DV whose data file is no longer live is dropped. Other DVs are kept as they are;
* the new delete files get the commit's sequence number: a position delete only ever applies to
  the data files it names, which are older, so nothing else changes what it deletes.

Differences from Java's action (checked against it in tests/table/commit/
test_rewrite_maintenance_java.py): every partition with something to merge or drop is rewritten
(Java's bin-packing wants 5 files in a partition, ``min-input-files``, unless ``rewrite-all``);
icenb writes one position delete file per partition, as its merge-on-read deletes, where Java
1.10 writes one per data file (``write.delete.granularity=file``). Both drop dangling deletes and
write DVs on v3 tables.

Conflicts: a concurrent commit that removed one of the delete files or a data file they
reference, or (v3) added a DV for one of those data files, makes the commit fail with
``CommitConflict``; any other concurrent commit is retried on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.reprs import safe_repr
from icenb.spec.expressions import Expression
from icenb.spec.manifest import DataFile, EntryStatus, FileContent, ManifestContent, ManifestFile
from icenb.spec.snapshot import MAIN_BRANCH, Operation, Snapshot
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.merging import content_size
from icenb.table.commit.producer import branch_snapshot, commit_to_table
from icenb.table.commit.rewrite_manifests import committed_note, existing_entries, refuse_v4
from icenb.table.commit.row_delta import RowDelta
from icenb.table.commit.validation import FileFilter, as_expression
from icenb.table.scan.planning import content_files_of
from icenb.table.write.delete_files import (
    POSITION_DELETE_SCHEMA,
    load_positions,
    write_deletion_vectors,
    write_position_deletes,
)
from icenb.table.write.locations import location_provider

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["RewritePositionDeletes", "RewritePositionDeletesResult", "rewrite_position_deletes"]

Partition = tuple[int, tuple[Any, ...]]


@safe_repr
@dataclass(frozen=True)
class RewritePositionDeletesResult:
    """What :meth:`Table.rewrite_position_deletes` did: delete files (and their content bytes:
    a DV's blob, a file's size) replaced and written, and the ``replace`` snapshot (None when
    nothing needed rewriting)."""

    rewritten_delete_files_count: int
    added_delete_files_count: int
    rewritten_bytes_count: int
    added_bytes_count: int
    snapshot: Snapshot | None = None

    def __repr__(self) -> str:
        return (f"RewritePositionDeletesResult({self.rewritten_delete_files_count} delete "
                f"files ({self.rewritten_bytes_count:,} bytes) rewritten into "
                f"{self.added_delete_files_count} ({self.added_bytes_count:,} bytes), "
                f"{committed_note(self.snapshot)})")


class RewritePositionDeletes(RowDelta):
    """Replace delete files by merged ones (Java's ``RewriteFiles`` of delete files:
    operation ``replace``), validated as a row delta (see the module)."""

    def operation(self) -> str:
        return str(Operation.REPLACE)

    def _filter_manifest(self, base: TableMetadata, m: ManifestFile, snapshot_id: int,
                         flt: FileFilter | None, min_data_seq: int | None,
                         removed_paths: set[str]) -> tuple[ManifestFile, list[DataFile]]:
        """Only delete files are replaced: data manifests are kept unread."""
        if m.content == ManifestContent.DATA:
            return m, []
        return super()._filter_manifest(base, m, snapshot_id, flt, min_data_seq, removed_paths)


@safe_repr
@dataclass
class _LiveData:
    """A live data file: its data sequence number and the file."""

    sequence_number: int
    file: DataFile


@safe_repr
@dataclass
class _Plan:
    """The delete files to remove and the positions (per live data file) to write again."""

    removed: list[DataFile] = field(default_factory=list)
    positions: dict[str, tuple[DataFile, list[npt.NDArray[np.int64]]]] = field(
        default_factory=dict)

    def keep(self, data: DataFile, pos: npt.NDArray[np.int64]) -> None:
        self.positions.setdefault(data.file_path, (data, []))[1].append(pos)

    def merged(self) -> list[tuple[DataFile, npt.NDArray[np.int64]]]:
        return [(f, np.unique(np.concatenate(parts))) for f, parts in
                (self.positions[p] for p in sorted(self.positions))]


def _live_deletes(io: FileIO, md: TableMetadata, manifests: Sequence[ManifestFile]
                  ) -> list[tuple[int, DataFile]]:
    """The live position delete files of delete ``manifests`` (read together), with their
    data sequence numbers."""
    deletes = [m for m in manifests if m.content == ManifestContent.DELETES
               and (m.has_added_files() or m.has_existing_files())]
    return [(e.sequence_number or 0, e.data_file) for e in existing_entries(io, deletes, md)
            if e.data_file.content == FileContent.POSITION_DELETES]


def _live_data(io: FileIO, md: TableMetadata, manifests: Sequence[ManifestFile],
               paths: set[str]) -> dict[str, _LiveData]:
    """The live data files among ``paths``, by path: data manifests are read as Arrow
    columns and only the files asked for become objects."""
    data = [m for m in manifests if m.content == ManifestContent.DATA
            and (m.has_added_files() or m.has_existing_files())]
    if not paths or not data:
        return {}
    entries = read_manifest_entries(io, data, md.format_version)
    if entries.num_rows == 0:
        return {}
    file_paths = pc.struct_field(entries.column("data_file"), "file_path")
    wanted = pc.and_(pc.not_equal(entries.column("status"), int(EntryStatus.DELETED)),
                     pc.is_in(file_paths, value_set=pa.array(sorted(paths), pa.string())))
    picked = entries.filter(wanted)
    seqs = picked.column("sequence_number").to_pylist()
    files = content_files_of(picked, md.specs_by_id, md.schema)
    return {f.file_path: _LiveData(seq or 0, f) for f, seq in zip(files, seqs, strict=True)}


def _positions_by_path(io: FileIO, delete: DataFile) -> dict[str, npt.NDArray[np.int64]]:
    """The positions a position delete file holds, per data file path (a DV: none read, its
    data file's path only: it is read when merged)."""
    if delete.is_deletion_vector:
        return {delete.referenced_data_file or "": np.zeros(0, dtype=np.int64)}
    from icenb.table.scan.read import read_data_file

    rows = read_data_file(io, delete, POSITION_DELETE_SCHEMA)
    codes = pc.dictionary_encode(rows.column(0)).combine_chunks()
    index = np.asarray(codes.indices.to_numpy(zero_copy_only=False))
    pos = np.asarray(rows.column(1).to_numpy(), dtype=np.int64)
    order = np.argsort(index, kind="stable")
    bounds = np.flatnonzero(np.diff(index[order])) + 1
    names = codes.dictionary.to_pylist()
    return {names[int(index[part[0]])]: pos[part]
            for part in np.split(order, bounds) if part.size}


def _applies(live: _LiveData | None, seq: int, delete: DataFile) -> bool:
    """Whether a delete's positions for this data file still delete live rows (spec: Scan
    Planning: same partition, data sequence number not above the delete's)."""
    return (live is not None and live.file.spec_id == delete.spec_id
            and live.file.partition == delete.partition and live.sequence_number <= seq)


def _plan(io: FileIO, md: TableMetadata, snap: Snapshot, flt: FileFilter) -> _Plan:
    """What to remove and write (see the module)."""
    manifests = read_manifest_list(io, snap, md.format_version)
    groups: dict[Partition, list[tuple[int, DataFile]]] = {}
    for seq, d in _live_deletes(io, md, manifests):
        if flt.partition_might_match(d):
            groups.setdefault((d.spec_id, d.partition), []).append((seq, d))
    # the positions of each group's files (DVs: their data file), then which data files live
    held = {key: [(seq, d, _positions_by_path(io, d)) for seq, d in groups[key]]
            for key in sorted(groups, key=repr)}
    data = _live_data(io, md, manifests, {path for group in held.values()
                                          for _, _, by_path in group for path in by_path})
    plan = _Plan()
    v3 = md.format_version >= 3
    for group in held.values():
        files = [(seq, d, by_path) for seq, d, by_path in group if not d.is_deletion_vector]
        dvs = [(seq, d, by_path) for seq, d, by_path in group if d.is_deletion_vector]
        kept: list[tuple[DataFile, npt.NDArray[np.int64]]] = []
        dangling = False
        for seq, d, by_path in files:
            for path, pos in by_path.items():
                live = data.get(path)
                if _applies(live, seq, d):
                    assert live is not None
                    kept.append((live.file, pos))
                else:
                    dangling = True
        touched = {f.file_path for f, _ in kept}
        stale = [not _applies(data.get(d.referenced_data_file or ""), seq, d)
                 for seq, d, _ in dvs]
        if v3:
            if not files and not any(stale):
                continue
            for (_, d, _), gone in zip(dvs, stale, strict=True):
                path = d.referenced_data_file or ""
                if gone:
                    plan.removed.append(d)
                elif path in touched:  # merged with the file's position deletes
                    plan.removed.append(d)
                    kept.append((data[path].file, load_positions(io, d, path)))
        elif len(files) < 2 and not dangling:
            continue
        plan.removed.extend(d for _, d, _ in files)
        for f, pos in kept:
            plan.keep(f, pos)
    return plan


def _write(table: Table, plan: _Plan, operation_id: str, written: list[str]) -> list[DataFile]:
    """The plan's positions as DVs (v3) or position delete files (v2)."""
    md = table.metadata
    provider = location_provider(md.location, md.properties)
    merged = plan.merged()
    if md.format_version >= 3:
        added = write_deletion_vectors(table.io, merged, location_provider=provider,
                                       operation_id=operation_id)
    else:
        added = write_position_deletes(table.io, merged, specs=md.specs_by_id, schema=md.schema,
                                       properties=md.properties, location_provider=provider,
                                       operation_id=operation_id)
    written.extend(dict.fromkeys(f.file_path for f in added))
    return added


def rewrite_position_deletes(table: Table, filter: str | Expression = "true", *,
                             branch: str = MAIN_BRANCH,
                             snapshot_properties: Mapping[str, str] | None = None
                             ) -> RewritePositionDeletesResult:
    """Merge ``table``'s position delete files per partition (v3: into DVs) and drop dangling
    deletes, in one ``replace`` commit (see the module); nothing is committed when nothing
    needs it."""
    md = table.metadata
    refuse_v4(md, "rewrite_position_deletes", "their deletes are deletion vectors only")
    expr = as_expression(filter, "filter")
    flt = FileFilter(expr, md.schema, md.specs_by_id, True)
    catalog, identifier = table.operations.commit_target()
    snap = branch_snapshot(md, branch)
    empty = RewritePositionDeletesResult(0, 0, 0, 0, None)
    if snap is None or md.format_version < 2:
        return empty
    plan = _plan(table.io, md, snap, flt)
    if not plan.removed:
        return empty
    producer = RewritePositionDeletes(catalog, identifier, table.io, branch=branch,
                                      snapshot_properties=snapshot_properties)
    written: list[str] = []
    with producer.aborted_on_error():
        try:
            added = _write(table, plan, producer.commit_uuid, written)
        finally:
            producer.track_written(written)
        producer.add_deletes(added).remove_deletes(plan.removed)
        producer.validate_from_snapshot(snap.snapshot_id)
        # the data files the new deletes delete from must still be live
        producer.validate_data_files_exist(sorted(plan.positions))
        committed = commit_to_table(table, producer)
    return RewritePositionDeletesResult(
        len(plan.removed), len(added), sum(content_size(f) for f in plan.removed),
        sum(content_size(f) for f in added), committed.metadata.snapshot_for_ref(branch))

