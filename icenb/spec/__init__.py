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

The package face re-exports what the widget layer uses without reaching into modules: the
snapshot-summary keys, schemas and partition specs with their JSON, the schema and spec
builders (``SchemaUpdate``, ``SpecUpdate``) and partition terms and transforms.
"""

from __future__ import annotations

from icenb.spec.expression_parser import parse
from icenb.spec.partition_spec import PartitionSpec, parse_term
from icenb.spec.partition_spec_update import SpecUpdate
from icenb.spec.projection import project_inclusive, project_strict
from icenb.spec.schema import Schema, schema_to_json
from icenb.spec.schema_update import SchemaUpdate, check_schema_sources
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
from icenb.spec.transforms import bucket_hash, parse_transform
from icenb.spec.values import coerce, to_human

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
    "PartitionSpec",
    "Schema",
    "SchemaUpdate",
    "SpecUpdate",
    "bucket_hash",
    "check_schema_sources",
    "coerce",
    "parse",
    "parse_term",
    "parse_transform",
    "project_inclusive",
    "project_strict",
    "schema_to_json",
    "to_human",
]
