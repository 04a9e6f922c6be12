"""Row lineage of the rows a rewrite moves (v3 spec: "Row lineage assignment").

A rewrite (copy-on-write delete, update or overwrite by filter; a merge-on-read update) reads
the rows it moves together with their ``_row_id`` and ``_last_updated_sequence_number`` and
writes them back by the spec's three rules: the row id is copied; an unchanged row keeps its
sequence number; a modified row gets a null one, so it inherits the sequence number of the
commit that rewrites it. The writer (:func:`icenb.table.write.data_files.with_row_lineage`)
stores both columns only when some row has a value. Tables before v3 have no lineage, and
rows updated through equality deletes (an upsert) are new rows, as the spec says.
"""

from __future__ import annotations

import pyarrow as pa

from icenb.spec.metadata_columns import (
    LAST_UPDATED_SEQUENCE_NUMBER,
    ROW_ID,
    ROW_LINEAGE,
    tracks_row_lineage,
)
from icenb.spec.schema import Schema
from icenb.spec.table_metadata import TableMetadata

__all__ = ["modified_rows", "reads_lineage", "table_columns", "with_lineage_fields"]


def reads_lineage(metadata: TableMetadata) -> bool:
    """Whether rewrites carry row lineage (:func:`tracks_row_lineage`; where a column of the
    table takes a lineage name, its rows are rewritten as new rows)."""
    return tracks_row_lineage(metadata.format_version, metadata.schema)


def with_lineage_fields(metadata: TableMetadata, schema: Schema) -> Schema:
    """``schema`` (the table's) with the two lineage fields after its columns when rewrites
    carry lineage (what a rewrite reads), else ``schema``."""
    if not tracks_row_lineage(metadata.format_version, schema):
        return schema
    return Schema(*schema.fields, *ROW_LINEAGE, schema_id=schema.schema_id,
                  identifier_field_ids=schema.identifier_field_ids)


def table_columns(rows: pa.Table, schema: Schema) -> pa.Table:
    """``rows`` without the lineage (and other non-schema) columns, in schema order."""
    return rows.select([f.name for f in schema.fields])


def modified_rows(changed: pa.Table, before: pa.Table) -> pa.Table:
    """``changed`` (the table's columns of modified rows) with the row ids of ``before`` (the
    same rows as read, in the same order) and a null sequence number (rules 1 and 2); just
    ``changed`` when ``before`` has no row ids."""
    extra = before.column_names[changed.num_columns:]  # read after the table's columns
    if ROW_ID.name not in extra:
        return changed
    n = changed.num_rows
    row_ids = before.column(changed.num_columns + extra.index(ROW_ID.name))
    return (changed.append_column(ROW_ID.name, row_ids)
            .append_column(LAST_UPDATED_SEQUENCE_NUMBER.name, pa.nulls(n, pa.int64())))
