"""Remove orphan files: files in a table's folders that nothing in its metadata references,
left by crashed or interrupted writes (Iceberg's ``DeleteOrphanFiles`` action / Spark's
``remove_orphan_files`` procedure; spec: "File System Operations").

What is kept: every file any snapshot references (data and delete files, manifests, manifest
lists, v4 root and leaf manifests, manifest DVs - :mod:`icenb.io.snapshot_files`), statistics and
partition statistics files, the current metadata file and every ``metadata-log`` entry, and the
filesystem catalog's ``version-hint.text``; files modified after ``older_than`` (default three
days ago, Java's default) so a write in flight is never taken; and, as Java's hidden-path filter,
names starting with ``.`` or ``_``. Only the table's folders (its location and ``write.data.path``
/ ``write.metadata.path``) are listed: nothing outside the table is ever deleted.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icenb.catalog.base import is_inside, reachable_files, table_roots
from icenb.errors import IcebergError, NotFound, ValidationError
from icenb.io.file_io import FileIO, join_location
from icenb.progress import DELETING_FILES, progress
from icenb.reprs import safe_repr

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["DEFAULT_ORPHAN_AGE_MS", "OrphanFiles", "remove_orphan_files"]

#: Files younger than this are never orphans (Java's ``DeleteOrphanFiles`` default: 3 days).
DEFAULT_ORPHAN_AGE_MS = 3 * 24 * 3600 * 1000
_VERSION_HINT = "version-hint.text"


@safe_repr
@dataclass(frozen=True)
class OrphanFiles:
    """The outcome of :func:`remove_orphan_files`."""

    orphans: tuple[str, ...]        # unreferenced and old enough (deleted unless dry_run)
    deleted: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    too_recent: int                 # unreferenced files younger than older_than: kept
    files_scanned: int
    older_than_ms: int
    dry_run: bool

    def __repr__(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        return (f"OrphanFiles({self.files_scanned} files scanned, {len(self.orphans)} orphans "
                f"({verb} {len(self.orphans) if self.dry_run else len(self.deleted)}), "
                f"{self.too_recent} too recent, {len(self.failed)} failed)")


def remove_orphan_files(table: Table, *, older_than_ms: int | None = None,
                        dry_run: bool = False) -> OrphanFiles:
    """List (and unless ``dry_run`` delete) ``table``'s orphan files (see the module)."""
    now = int(time.time() * 1000)
    cutoff = now - DEFAULT_ORPHAN_AGE_MS if older_than_ms is None else older_than_ms
    if type(cutoff) is not int:
        raise ValidationError("older_than must be a time", field="older_than", value=cutoff)
    io = table.io
    md = table.metadata
    location = table.metadata_location
    failures: list[tuple[str, str]] = []
    keep = set(reachable_files(md, io, location, include_content=True, failures=failures))
    roots = table_roots(md, location)
    keep |= {join_location(r, "metadata", _VERSION_HINT) for r in roots}
    orphans: list[str] = []
    too_recent = 0
    scanned = 0
    for path, modified_ms in _walk(io, roots):
        scanned += 1
        if path in keep or not is_inside(path, roots):
            continue
        if modified_ms is None or modified_ms >= cutoff:
            too_recent += 1
            continue
        orphans.append(path)
    deleted: list[str] = []
    failed: list[tuple[str, str]] = []
    if not dry_run:
        with progress(DELETING_FILES, total=len(orphans)) as task:
            for path in orphans:
                try:
                    io.delete(path, missing_ok=True)
                    deleted.append(path)
                except IcebergError as e:
                    failed.append((path, str(e)))
                task.advance()
    return OrphanFiles(tuple(orphans), tuple(deleted), tuple(failed), too_recent, scanned,
                       cutoff, dry_run)


def _walk(io: FileIO, roots: list[str]) -> list[tuple[str, int | None]]:
    """Every file under ``roots`` (each once), hidden names skipped, with its mtime."""
    out: dict[str, int | None] = {}
    seen_dirs: set[str] = set()
    pending = deque(r for r in dict.fromkeys(roots))
    while pending:
        directory = pending.popleft()
        if directory in seen_dirs:
            continue
        seen_dirs.add(directory)
        try:
            entries = io.list_dir_modified(directory)
        except NotFound:
            continue
        for e, modified_ms in entries:
            if e.name.startswith((".", "_")):
                continue
            path = join_location(directory, e.name)
            if e.is_dir:
                pending.append(path)
            else:
                out[path] = modified_ms
    return list(out.items())
