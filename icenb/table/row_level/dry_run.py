"""A delete's dry run from metadata alone (spec: "Scan Planning"): the data files a filter may
match (inclusive projection of the filter onto each file's partition spec, then its column
metrics), the files whose every row matches and a copy-on-write delete would remove whole
(strict projection, or strict metrics), and bounds on the rows deleted. Nothing is read but
manifests.
"""

from __future__ import annotations

from dataclasses import dataclass

from icenb.io.file_io import FileIO
from icenb.reprs import safe_repr
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import Expression
from icenb.spec.manifest import DataFile
from icenb.spec.snapshot import MAIN_BRANCH
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.producer import branch_snapshot
from icenb.table.commit.validation import FileFilter
from icenb.table.scan.planning import plan_files

__all__ = ["DeleteDryRun", "delete_dry_run"]


@safe_repr
@dataclass(frozen=True)
class DeleteDryRun:
    """What a delete of ``filter`` on ``branch`` would touch, from metadata alone.

    ``candidates``: live data files the filter may match; ``whole``: those every row of which
    matches (removed whole by copy-on-write, no file read); ``partial``: the rest (read to find
    the rows). ``delete_files``: delete files a scan of the candidates applies today.
    ``rows_at_least`` / ``rows_at_most`` bound the rows deleted (records of whole files without
    deletes, and of every candidate)."""

    filter: str
    branch: str
    snapshot_id: int | None
    files_total: int
    candidates: tuple[DataFile, ...]
    whole: tuple[DataFile, ...]
    partial: tuple[DataFile, ...]
    delete_files: int
    rows_at_least: int
    rows_at_most: int

    @property
    def files_pruned(self) -> int:
        return self.files_total - len(self.candidates)


def delete_dry_run(io: FileIO, metadata: TableMetadata, filter: str | Expression, *,
                   branch: str = MAIN_BRANCH, case_sensitive: bool = True) -> DeleteDryRun:
    """The :class:`DeleteDryRun` of deleting ``filter`` from ``branch`` (see the module)."""
    expr = parse(filter) if isinstance(filter, str) else filter
    snap = branch_snapshot(metadata, branch)
    if snap is None:
        return DeleteDryRun(str(expr), branch, None, 0, (), (), (), 0, 0, 0)
    plan = plan_files(io, metadata, snapshot_id=snap.snapshot_id, row_filter=expr,
                      case_sensitive=case_sensitive, schema=metadata.schema)
    flt = FileFilter(expr, metadata.schema, metadata.specs_by_id, case_sensitive)
    candidates: list[DataFile] = []
    whole: list[DataFile] = []
    partial: list[DataFile] = []
    deletes: set[str] = set()
    low = high = 0
    for task in plan.tasks:
        f = task.data_file
        candidates.append(f)
        high += f.record_count
        deletes.update(d.file_path for d in task.delete_files)
        if flt.must_match(f):
            whole.append(f)
            if not task.delete_files:
                low += f.record_count
        else:
            partial.append(f)
    return DeleteDryRun(str(expr), branch, snap.snapshot_id, plan.files_considered,
                        tuple(candidates), tuple(whole), tuple(partial), len(deletes), low,
                        high)
