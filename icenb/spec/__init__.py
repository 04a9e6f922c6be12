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
"""
