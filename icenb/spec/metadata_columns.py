"""Reserved metadata columns (spec: "Reserved Field IDs"; v3 row lineage).

Ids above :data:`icenb.spec.schema.MAX_FIELD_ID` are reserved; these are the ones with meaning.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from icenb.spec.types import (
    BooleanType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

if TYPE_CHECKING:
    from icenb.spec.schema import Schema

__all__ = [
    "CHANGELOG_COLUMNS",
    "CHANGE_ORDINAL",
    "CHANGE_TYPE",
    "COMMIT_SNAPSHOT_ID",
    "DELETED",
    "DELETE_FILE_PATH",
    "DELETE_FILE_POS",
    "DELETE_FILE_ROW_FIELD_ID",
    "FILE_PATH",
    "LAST_UPDATED_SEQUENCE_NUMBER",
    "METADATA_COLUMNS",
    "PARTITION_FIELD_ID",
    "ROW_ID",
    "ROW_LINEAGE",
    "ROW_POSITION",
    "SPEC_ID",
    "delete_row_column",
    "is_metadata_column",
    "lineage_columns",
    "metadata_column",
    "partition_column",
    "tracks_row_lineage",
]

FILE_PATH = NestedField(2147483646, "_file", StringType(), True,
                        "Path of the file in which a row is stored")
ROW_POSITION = NestedField(2147483645, "_pos", LongType(), True,
                           "Ordinal position of a row in the source data file")
DELETED = NestedField(2147483644, "_deleted", BooleanType(), True,
                      "Whether the row has been deleted")
SPEC_ID = NestedField(2147483643, "_spec_id", IntegerType(), True,
                      "Spec ID used to track the file containing a row")
PARTITION_FIELD_ID = 2147483642
DELETE_FILE_PATH = NestedField(2147483546, "file_path", StringType(), True,
                               "Path of a file, used in position-based delete files")
DELETE_FILE_POS = NestedField(2147483545, "pos", LongType(), True,
                              "Ordinal position of a row, used in position-based delete files")
DELETE_FILE_ROW_FIELD_ID = 2147483544
#: v3 row lineage (spec: Row Lineage): optional because they are null until inherited.
ROW_ID = NestedField(2147483540, "_row_id", LongType(), False,
                     "Implicit row ID that is automatically assigned")
LAST_UPDATED_SEQUENCE_NUMBER = NestedField(
    2147483539, "_last_updated_sequence_number", LongType(), False,
    "Sequence number when the row was last updated",
)
#: Changelog columns (spec: "Reserved Field IDs"; Iceberg Java's ``MetadataColumns``): what a
#: changelog row is, and which commit of the range made it. Not readable from data files.
CHANGE_TYPE = NestedField(2147483543, "_change_type", StringType(), True,
                          "Record type in changelog")
CHANGE_ORDINAL = NestedField(2147483542, "_change_ordinal", IntegerType(), False,
                             "Change ordinal in changelog")
COMMIT_SNAPSHOT_ID = NestedField(2147483541, "_commit_snapshot_id", LongType(), False,
                                 "Commit snapshot ID")
#: The changelog columns in the order a changelog shows them (as Iceberg Java's changelog).
CHANGELOG_COLUMNS = (CHANGE_TYPE, CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID)

#: The two row lineage fields, in the order writers put them after the table's columns.
ROW_LINEAGE = (ROW_ID, LAST_UPDATED_SEQUENCE_NUMBER)


def lineage_columns(names: Iterable[str], schema: Schema) -> list[str]:
    """Which of ``names`` are row lineage columns (``_row_id``,
    ``_last_updated_sequence_number``) rather than columns of ``schema``, in
    :data:`ROW_LINEAGE` order."""
    present = set(names)
    return [f.name for f in ROW_LINEAGE
            if f.name in present and schema.field_by_name(f.name) is None]


def tracks_row_lineage(format_version: int, schema: Schema) -> bool:
    """Whether rows of a table carry row lineage: format version 3 and later (spec: Row
    Lineage), unless a column of ``schema`` takes one of the lineage names."""
    return format_version >= 3 and not any(schema.field_by_name(f.name) is not None
                                           for f in ROW_LINEAGE)


def partition_column(partition_type: StructType) -> NestedField:
    """The ``_partition`` column for a table whose unified partition type is ``partition_type``."""
    return NestedField(PARTITION_FIELD_ID, "_partition", partition_type, False,
                       "Partition to which a row belongs")


def delete_row_column(row_type: StructType) -> NestedField:
    """The ``row`` column of a position delete file (deleted row values)."""
    return NestedField(DELETE_FILE_ROW_FIELD_ID, "row", row_type, False,
                       "Deleted row values, used in position-based delete files")


METADATA_COLUMNS: dict[str, NestedField] = {
    f.name: f
    for f in (FILE_PATH, ROW_POSITION, DELETED, SPEC_ID, ROW_ID, LAST_UPDATED_SEQUENCE_NUMBER)
}
_RESERVED_IDS = {f.field_id for f in METADATA_COLUMNS.values()} | {
    PARTITION_FIELD_ID, DELETE_FILE_PATH.field_id, DELETE_FILE_POS.field_id,
    DELETE_FILE_ROW_FIELD_ID, *(f.field_id for f in CHANGELOG_COLUMNS),
}


def metadata_column(name: str) -> NestedField | None:
    """The table-level metadata column called ``name`` (``_file``, ``_pos``...), if any."""
    return METADATA_COLUMNS.get(name)


def is_metadata_column(field_id: int) -> bool:
    """Whether ``field_id`` is one of the reserved metadata column ids."""
    return field_id in _RESERVED_IDS
