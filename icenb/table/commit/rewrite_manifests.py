"""Rewrite a branch's data manifests, clustered by partition (Iceberg Java 1.10's
``RewriteManifests`` / Spark's ``rewrite_manifests`` procedure).

Spec sections: "Manifests" (EXISTING entries carry their snapshot id and explicit sequence
numbers), "Manifest Lists", "Sequence Numbers", "Row Lineage" (an existing file keeps its
``first_row_id``), "Commit Conflict Resolution and Retry" and Appendix F (summary fields).

* The data manifests of the branch head (of one partition spec with ``spec_id``, else of every
  spec) are read; per spec, a group that is one manifest already within the target size is
  kept as it is (Java's action does nothing then); the others are rewritten.
* Per spec, the live entries (ADDED and EXISTING; DELETED ones are dropped) are sorted by
  partition tuple (spec order, nulls first) and written into
  ``ceil(bytes of the old manifests / target)`` manifests of about equal entry counts (Java's
  Spark action: ``repartitionByRange`` on the partition), ``commit.manifest.target-size-bytes``
  (8 MiB) or ``target_manifest_size_bytes``; a partition's entries are not split across two
  manifests when a cut can move to a partition boundary.
* Every entry becomes EXISTING with its snapshot id, data and file sequence numbers and (v3)
  ``first_row_id`` kept, so no row changes identity; delete manifests are kept as they are.
  (Java 1.10's Spark action drops ``first_row_id``: its rewritten rows get new ``_row_id`` s
  from ``next-row-id``; tests/table/commit/test_rewrite_maintenance_java.py shows it.)
* Operation ``replace``, summary ``manifests-created``, ``manifests-kept``,
  ``manifests-replaced``, ``entries-processed`` and the unchanged ``total-*`` counters.
* Conflicts: each attempt re-reads the branch head. When a concurrent commit changed the
  manifests to rewrite (an append added one, a delete rewrote one), the rewrite is planned
  again on the new head and the manifests the earlier attempt wrote are deleted. Java's
  ``BaseRewriteManifests`` re-validates that every replaced manifest is still in the current
  snapshot and fails when one is gone; the rewrite changes no row, so planning again is safe.
  When the new head has nothing left to rewrite (another writer just rewrote it), nothing is
  committed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc

from icenb.catalog import Catalog, Identifier, LoadedTable
from icenb.errors import UnsupportedVersion, ValidationError
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import read_manifest_entries, read_manifest_list
from icenb.reprs import safe_repr
from icenb.spec.manifest import EntryStatus, ManifestContent, ManifestEntry, ManifestFile
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.properties import MANIFEST_TARGET_SIZE_BYTES, int_property
from icenb.spec.schema import Schema
from icenb.spec.snapshot import (
    CHANGED_PARTITION_COUNT,
    ENTRIES_PROCESSED,
    MAIN_BRANCH,
    MANIFESTS_CREATED,
    MANIFESTS_KEPT,
    MANIFESTS_REPLACED,
    Operation,
    Snapshot,
)
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.values import sort_key
from icenb.table.commit.producer import (
    SnapshotProducer,
    add_totals,
    branch_snapshot,
    commit_to_table,
)
from icenb.table.scan.planning import content_files_of

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["DEFAULT_MANIFEST_TARGET_SIZE", "NothingToRewrite", "RewriteManifests",
           "RewriteManifestsResult", "committed_note", "existing_entries", "refuse_v4",
           "rewrite_manifests"]

#: Java's ``commit.manifest.target-size-bytes`` default (8 MiB).
DEFAULT_MANIFEST_TARGET_SIZE = 8 * 1024 * 1024


@safe_repr
@dataclass(frozen=True)
class RewriteManifestsResult:
    """What :meth:`Table.rewrite_manifests` did: how many data manifests it replaced and
    wrote, and the ``replace`` snapshot (None when nothing needed rewriting)."""

    rewritten_manifests_count: int
    added_manifests_count: int
    snapshot: Snapshot | None = None

    def __repr__(self) -> str:
        return (f"RewriteManifestsResult({self.rewritten_manifests_count} manifests rewritten "
                f"into {self.added_manifests_count}, {committed_note(self.snapshot)})")


def refuse_v4(md: TableMetadata, operation: str, why: str) -> None:
    """``UnsupportedVersion`` for a maintenance ``operation`` on an EXPERIMENTAL v4 table."""
    if md.format_version >= 4:
        raise UnsupportedVersion(
            f"{operation} is not supported on EXPERIMENTAL format-version 4 tables: {why} "
            "(docs/v4-layout.md)", field="format-version", value=md.format_version)


def committed_note(snapshot: Snapshot | None) -> str:
    """``snapshot <id>`` or ``no commit``, for a maintenance result's repr."""
    return "no commit" if snapshot is None else f"snapshot {snapshot.snapshot_id}"


def target_size(properties: Mapping[str, str], given: int | None) -> int:
    """The manifest target size: ``given`` or ``commit.manifest.target-size-bytes``."""
    if given is None:
        return int_property(properties, MANIFEST_TARGET_SIZE_BYTES,
                            DEFAULT_MANIFEST_TARGET_SIZE, minimum=1)
    if type(given) is not int or given <= 0:
        raise ValidationError("the target manifest size must be a positive number of bytes",
                              field="target_manifest_size_bytes", value=given)
    return given


class NothingToRewrite(Exception):
    """An attempt found no manifest to rewrite on the branch head (not an error: the commit
    stops, the operation's files are deleted, and nothing is committed)."""


def _groups(manifests: Sequence[ManifestFile], spec_id: int | None, target: int
            ) -> dict[int, list[ManifestFile]]:
    """The data manifests to rewrite, per spec id: a spec's manifests unless they are one
    manifest that already fits the target (Java: ``targetNumManifests == 1`` and one match)."""
    by_spec: dict[int, list[ManifestFile]] = {}
    for m in manifests:
        if m.content == ManifestContent.DATA and spec_id in (None, m.partition_spec_id):
            by_spec.setdefault(m.partition_spec_id, []).append(m)
    return {s: ms for s, ms in by_spec.items()
            if not (len(ms) == 1 and _manifest_count(ms, target) == 1)}


def _manifest_count(manifests: Sequence[ManifestFile], target: int) -> int:
    return max(1, math.ceil(sum(m.manifest_length for m in manifests) / target))


def _partition_key(spec: PartitionSpec, schema: Schema) -> Callable[[tuple[Any, ...]], Any]:
    """A sort key of partition tuples of ``spec``: spec order per field, nulls first."""
    try:
        types = [f.field_type for f in spec.partition_type(schema).fields]
    except ValidationError:  # a source column no longer in the schema: order by text
        return lambda p: tuple((0,) if v is None else (1, repr(v)) for v in p)

    def key(p: tuple[Any, ...]) -> Any:
        return tuple((0,) if v is None else (1, sort_key(t, v))
                     for t, v in zip(types, p, strict=False))
    return key


def _cuts(keys: Sequence[Any], n: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges cutting ``keys`` (sorted) into ``n`` parts of about equal size,
    each cut moved forward to the next change of key when one is near (within half a part)."""
    total = len(keys)
    n = max(1, min(n, total))
    bounds = [0]
    for i in range(1, n):
        cut = max(bounds[-1] + 1, round(i * total / n))
        slack = max(1, total // (2 * n))
        j = cut
        while j < min(total, cut + slack) and keys[j] == keys[j - 1]:
            j += 1
        if j < total and keys[j] != keys[j - 1]:
            cut = j
        if cut >= total:
            break
        bounds.append(cut)
    bounds.append(total)
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def existing_entries(io: FileIO, manifests: Sequence[ManifestFile], metadata: TableMetadata
                     ) -> list[ManifestEntry]:
    """The live entries of ``manifests`` (read together, decoded in parallel) as EXISTING
    entries: snapshot ids, sequence numbers and first row ids made explicit and kept (spec:
    Sequence Number Inheritance, First Row ID Inheritance)."""
    table = read_manifest_entries(io, manifests, metadata.format_version)
    if table.num_rows == 0:
        return []
    live = table.filter(pc.not_equal(table.column("status"), int(EntryStatus.DELETED)))
    files = content_files_of(live, metadata.specs_by_id, metadata.schema)
    columns = [live.column(c).to_pylist()
               for c in ("snapshot_id", "sequence_number", "file_sequence_number")]
    return [ManifestEntry(EntryStatus.EXISTING, sid, seq, fseq, f)
            for sid, seq, fseq, f in zip(*columns, files, strict=True)]


class RewriteManifests(SnapshotProducer):
    """Replace data manifests by manifests clustered by partition (see the module)."""

    def __init__(self, catalog: Catalog, identifier: Identifier, io: FileIO, *,
                 spec_id: int | None = None, target_size_bytes: int | None = None,
                 **options: Any) -> None:
        """``options``: :class:`SnapshotProducer`'s (branch, snapshot properties, ...)."""
        super().__init__(catalog, identifier, io, **options)
        self._spec_id = spec_id
        self._target = target_size_bytes
        #: (snapshot id, paths of the replaced manifests) -> the manifests written for them
        self._plan_key: tuple[int, tuple[str, ...]] | None = None
        self._created: list[ManifestFile] = []
        self._replaced: list[ManifestFile] = []
        self._kept: list[ManifestFile] = []
        self._entries = 0

    def operation(self) -> str:
        return str(Operation.REPLACE)

    @property
    def replaced_manifests(self) -> tuple[ManifestFile, ...]:
        """The manifests the last attempt replaced."""
        return tuple(self._replaced)

    @property
    def created_manifests(self) -> tuple[ManifestFile, ...]:
        """The manifests the last attempt wrote."""
        return tuple(self._created)

    def needs_rewrite(self, base: TableMetadata, parent: Snapshot | None) -> bool:
        """Whether ``parent`` (a snapshot of ``base``) has data manifests to rewrite."""
        if parent is None:
            return False
        target = target_size(base.properties, self._target)
        return bool(_groups(read_manifest_list(self._io, parent, base.format_version),
                            self._spec_id, target))

    def _manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        assert self._snapshot_id is not None
        manifests = ([] if parent is None
                     else read_manifest_list(self._io, parent, base.format_version))
        target = target_size(base.properties, self._target)
        groups = _groups(manifests, self._spec_id, target)
        if not groups:  # e.g. another writer rewrote them since: nothing to commit
            raise NothingToRewrite
        replaced = [m for spec_id in sorted(groups) for m in groups[spec_id]]
        key = (self._snapshot_id, tuple(m.manifest_path for m in replaced))
        if key != self._plan_key:  # first attempt, or a concurrent commit changed them
            stale = {m.manifest_path for m in self._created}
            self._delete(stale)
            self._written[:] = [p for p in self._written if p not in stale]
            self._created, self._entries = [], 0
            for spec_id in sorted(groups):
                self._rewrite_spec(base, groups[spec_id], target)
            self._plan_key = key
        replaced_paths = set(key[1])
        self._replaced = replaced
        self._kept = [m for m in manifests if m.manifest_path not in replaced_paths]
        return [*self._created, *self._kept]

    def _rewrite_spec(self, base: TableMetadata, manifests: Sequence[ManifestFile],
                      target: int) -> None:
        spec = base.spec_by_id(manifests[0].partition_spec_id)
        if spec is None:
            raise ValidationError("a manifest's partition spec is not in the table",
                                  field="partition_spec_id",
                                  value=manifests[0].partition_spec_id,
                                  file=manifests[0].manifest_path)
        entries = existing_entries(self._io, manifests, base)
        self._entries += len(entries)
        part_key = _partition_key(spec, base.schema)
        entries.sort(key=lambda e: part_key(e.data_file.partition))
        keys = [part_key(e.data_file.partition) for e in entries]
        assert self._snapshot_id is not None
        for start, end in _cuts(keys, _manifest_count(manifests, target)):
            self._created.append(self._write_manifest(
                base, spec, ManifestContent.DATA, entries[start:end], self._snapshot_id))

    def _summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        out = {MANIFESTS_CREATED: str(len(self._created)),  # in Java's order
               MANIFESTS_KEPT: str(len(self._kept)),
               MANIFESTS_REPLACED: str(len(self._replaced)),
               ENTRIES_PROCESSED: str(self._entries),
               CHANGED_PARTITION_COUNT: "0"}
        add_totals(out, parent, {})
        return out

    def commit(self, base: LoadedTable) -> LoadedTable:
        """Commit (see :meth:`SnapshotProducer.commit`); manifests of attempts that lost are
        deleted after success."""
        committed = super().commit(base)
        used = {m.manifest_path for m in self._created}
        self._delete([p for p in self._manifests_written if p not in used])
        return committed


def rewrite_manifests(table: Table, *, spec_id: int | None = None,
                      target_manifest_size_bytes: int | None = None,
                      branch: str = MAIN_BRANCH,
                      snapshot_properties: Mapping[str, str] | None = None
                      ) -> RewriteManifestsResult:
    """Rewrite ``table``'s data manifests on ``branch`` clustered by partition, in one
    ``replace`` commit (see the module); nothing is committed when no manifest needs it."""
    md = table.metadata
    refuse_v4(md, "rewrite_manifests", "their manifest tree is compacted on commit")
    if spec_id is not None and (type(spec_id) is not int or md.spec_by_id(spec_id) is None):
        raise ValidationError("no partition spec with this id in the table", field="spec_id",
                              value=spec_id)
    target_size(md.properties, target_manifest_size_bytes)
    catalog, identifier = table.operations.commit_target()
    producer = RewriteManifests(catalog, identifier, table.io, spec_id=spec_id,
                                target_size_bytes=target_manifest_size_bytes, branch=branch,
                                snapshot_properties=snapshot_properties)
    if not producer.needs_rewrite(md, branch_snapshot(md, branch)):
        return RewriteManifestsResult(0, 0, None)
    try:
        committed = commit_to_table(table, producer)
    except NothingToRewrite:  # found on a retry: the files written are gone, nothing committed
        return RewriteManifestsResult(0, 0, None)
    snap = committed.metadata.snapshot_for_ref(branch)
    return RewriteManifestsResult(len(producer.replaced_manifests),
                                  len(producer.created_manifests), snap)
