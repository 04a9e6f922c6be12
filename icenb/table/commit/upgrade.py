"""Upgrade a table's format version (spec: Appendix E "Format version changes").

Only the ``format-version`` field changes (plus a ``table-uuid`` for a v1 table that has none:
v2 requires it); nothing is rewritten. Existing v1 metadata stays valid and is read with the
Appendix E defaults (sequence numbers 0, content data); the next snapshot writes a manifest list
of the new version that carries the old manifests as they are. Upgrading to v3 starts row
lineage at ``next-row-id`` 0 (spec: Row Lineage); the first v3 snapshot assigns ``first_row_id``
to every data manifest that has none, as Iceberg Java 1.10's manifest list writer does.
Upgrading a v3 table to EXPERIMENTAL v4 rewrites nothing either; the first v4 commit turns
the parent's manifest-list entries into root entries (docs/v4-layout.md#upgrade).
A downgrade is refused (``ValidationError``); the current version is a no-op.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from icenb.errors import UnsupportedVersion, ValidationError
from icenb.spec.table_metadata import TableMetadata
from icenb.spec.table_updates import (
    AssignUUID,
    TableUpdate,
    UpgradeFormatVersion,
)

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["MAX_UPGRADE_VERSION", "upgrade_format_version"]

#: The highest format version :func:`upgrade_format_version` goes to (v4 is experimental).
MAX_UPGRADE_VERSION = 4


def _check(metadata: TableMetadata, format_version: int) -> None:
    if type(format_version) is not int:
        raise ValidationError("a format version is an integer", field="format_version",
                              value=format_version)
    if format_version > MAX_UPGRADE_VERSION or format_version < 1:
        raise UnsupportedVersion(f"cannot upgrade to format version {format_version} (icenb "
                                 f"upgrades to 2 or {MAX_UPGRADE_VERSION})",
                                 field="format_version", value=format_version)
    if format_version < metadata.format_version:
        raise ValidationError(f"cannot downgrade a v{metadata.format_version} table to "
                              f"v{format_version} (spec: Appendix E)", field="format_version",
                              value=format_version)


def upgrade_format_version(table: Table, format_version: int) -> bool:
    """Upgrade ``table`` to ``format_version`` in one commit; False when it already is."""
    from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement

    _check(table.metadata, format_version)
    if format_version == table.metadata.format_version:
        return False
    new_uuid = str(uuid.uuid4())

    def build(metadata: TableMetadata) -> MetadataChange:
        _check(metadata, format_version)
        updates: list[TableUpdate] = []
        if metadata.table_uuid is None:
            updates.append(AssignUUID(new_uuid))
        updates.append(UpgradeFormatVersion(format_version))
        return MetadataChange(updates, uuid_requirement(metadata))

    commit_change(table, build)
    return True
