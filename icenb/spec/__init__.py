"""The pure model of Iceberg's formats: no I/O, no Spark, no Jupyter.

Modules, named as the spec names things:

- ``types``, ``schema``, ``metadata_columns``: data types, schemas, reserved columns.
- ``values``: single-value serialization (Appendix D), coercion of user literals, ordering.
- ``transforms``: partition transforms (scalar and vectorized over Arrow).
- ``partition_spec``, ``sort_order``: partition specs and sort orders, their JSON and evolution.
- ``expressions``, ``expression_parser``, ``evaluators``, ``metrics_evaluator``,
  ``manifest_evaluator``, ``projection``: filters, their evaluation and projection (Scan Planning).
- ``snapshot``, ``table_metadata``: table metadata of format v1-v3 (Table Metadata, Appendix C/E).
- ``manifest``, ``deletion_vector``: manifest and manifest-list model, deletion-vector blobs.
- ``view_metadata``: view metadata (the released view spec and the early draft).

The package face re-exports the snapshot-summary keys (``snapshot``), what the widget layer
reads of a snapshot without reaching into modules.
"""

from __future__ import annotations

from icenb.spec.snapshot import (
    ADDED_DATA_FILES,
    ADDED_DELETE_FILES,
    ADDED_EQ_DELETES,
    ADDED_POS_DELETES,
    ADDED_RECORDS,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
    TOTAL_DATA_FILES,
    TOTAL_DELETE_FILES,
    TOTAL_RECORDS,
)

__all__ = [
    "ADDED_DATA_FILES",
    "ADDED_DELETE_FILES",
    "ADDED_EQ_DELETES",
    "ADDED_POS_DELETES",
    "ADDED_RECORDS",
    "DELETED_DATA_FILES",
    "DELETED_RECORDS",
    "TOTAL_DATA_FILES",
    "TOTAL_DELETE_FILES",
    "TOTAL_RECORDS",
]
