"""Commits: snapshot producers (appends, overwrites, row deltas, v4 roots), their validation (spec:
"Commit Conflict Resolution and Retry"), metadata-only changes, snapshot management, expiry,
upgrades and partition statistics.

:func:`new_producer` is the one place that picks the producer class for an operation and a
table's format version: v1-v3 producers write a manifest list (merging manifests per
``commit.manifest-merge.enabled``), EXPERIMENTAL v4 producers a root manifest
(docs/v4-layout.md). Everything that commits a snapshot - ``Table`` methods, row-level
operations, the Spark writer - asks it. It also stages the snapshot for write-audit-publish
(Spark's ``SparkWrite``): on a table with ``write.wap.enabled=true`` and a wap id set
(``icenb.set_options(wap_id=...)``, Spark's ``spark.wap.id``) the producer only adds its
snapshot, with summary ``wap.id``, and moves no ref (``stageOnly()``); a wap id on a table
without ``write.wap.enabled`` is ignored, as in Java 1.10.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, TypeVar, overload

from icenb.catalog import Catalog, Identifier
from icenb.errors import ValidationError
from icenb.io.file_io import FileIO
from icenb.options import get_options
from icenb.spec.properties import WRITE_WAP_ENABLED, bool_property
from icenb.spec.snapshot import MAIN_BRANCH
from icenb.spec.table_metadata import TableMetadata
from icenb.table.commit.append import MergeAppend
from icenb.table.commit.merging import merge_enabled
from icenb.table.commit.overwrite import DeleteFiles, OverwriteFiles, ReplacePartitions
from icenb.table.commit.producer import FastAppend, SnapshotProducer
from icenb.table.commit.row_delta import RowDelta
from icenb.table.commit.v4_append import V4Append
from icenb.table.commit.v4_overwrite import V4Overwrite
from icenb.table.commit.v4_replace_partitions import V4ReplacePartitions
from icenb.table.commit.v4_row_delta import V4RowDelta

if TYPE_CHECKING:
    from icenb.table.table import Table

__all__ = ["ProducerKind", "new_producer", "table_producer", "wap_staging_id"]

P = TypeVar("P", bound=SnapshotProducer)


class ProducerKind(str, enum.Enum):
    """The snapshot-producing operations (Java's ``Table.newAppend``, ``newOverwrite``,
    ``newReplacePartitions``, ``newRowDelta``, ``newDelete``)."""

    APPEND = "append"
    OVERWRITE = "overwrite"
    REPLACE_PARTITIONS = "replace_partitions"
    ROW_DELTA = "row_delta"
    DELETE = "delete"


Kind = ProducerKind | Literal["append", "overwrite", "replace_partitions", "row_delta",
                               "delete"]


def wap_staging_id(metadata: TableMetadata, wap_id: str | None = None) -> str | None:
    """The wap id a write to a table whose state is ``metadata`` stages its snapshot with, or
    None when it commits as usual: ``wap_id`` (else ``icenb.set_options(wap_id=...)``) when
    the table has ``write.wap.enabled=true`` (Java's ``SparkWriteConf.wapEnabled() && wapId
    != null``). A wap id without the property is ignored, as Java 1.10 does."""
    wap = wap_id if wap_id is not None else get_options().wap_id
    if wap is None or not bool_property(metadata.properties, WRITE_WAP_ENABLED, False,
                                        strict=True):
        return None
    return wap


@overload
def new_producer(kind: Literal[ProducerKind.APPEND, "append"], catalog: Catalog,
                 identifier: Identifier, io: FileIO, metadata: TableMetadata, *,
                 branch: str = ..., snapshot_properties: Mapping[str, str] | None = ...,
                 commit_uuid: str | None = ...,
                 wap_id: str | None = ...) -> FastAppend | MergeAppend: ...
@overload
def new_producer(kind: Literal[ProducerKind.OVERWRITE, "overwrite"], catalog: Catalog,
                 identifier: Identifier, io: FileIO, metadata: TableMetadata, *,
                 branch: str = ..., snapshot_properties: Mapping[str, str] | None = ...,
                 commit_uuid: str | None = ...,
                 wap_id: str | None = ...) -> OverwriteFiles | V4Overwrite: ...
@overload
def new_producer(kind: Literal[ProducerKind.REPLACE_PARTITIONS, "replace_partitions"],
                 catalog: Catalog, identifier: Identifier, io: FileIO,
                 metadata: TableMetadata, *, branch: str = ...,
                 snapshot_properties: Mapping[str, str] | None = ...,
                 commit_uuid: str | None = ...,
                 wap_id: str | None = ...) -> ReplacePartitions | V4ReplacePartitions: ...
@overload
def new_producer(kind: Literal[ProducerKind.ROW_DELTA, "row_delta"], catalog: Catalog,
                 identifier: Identifier, io: FileIO, metadata: TableMetadata, *,
                 branch: str = ..., snapshot_properties: Mapping[str, str] | None = ...,
                 commit_uuid: str | None = ...,
                 wap_id: str | None = ...) -> RowDelta | V4RowDelta: ...
@overload
def new_producer(kind: Literal[ProducerKind.DELETE, "delete"], catalog: Catalog,
                 identifier: Identifier, io: FileIO, metadata: TableMetadata, *,
                 branch: str = ..., snapshot_properties: Mapping[str, str] | None = ...,
                 commit_uuid: str | None = ...,
                 wap_id: str | None = ...) -> DeleteFiles | V4Overwrite: ...
@overload
def new_producer(kind: Kind, catalog: Catalog, identifier: Identifier, io: FileIO,
                 metadata: TableMetadata, *, branch: str = ...,
                 snapshot_properties: Mapping[str, str] | None = ...,
                 commit_uuid: str | None = ...,
                 wap_id: str | None = ...) -> SnapshotProducer: ...


def new_producer(kind: Kind, catalog: Catalog, identifier: Identifier, io: FileIO,
                 metadata: TableMetadata, *, branch: str = MAIN_BRANCH,
                 snapshot_properties: Mapping[str, str] | None = None,
                 commit_uuid: str | None = None, wap_id: str | None = None
                 ) -> SnapshotProducer:
    """The producer of a ``kind`` operation on a table whose state is ``metadata``, committing
    to ``catalog``/``identifier`` on ``branch``. ``commit_uuid`` names the operation's files
    (manifests ``<uuid>-m<N>.avro``, manifest lists / roots ``...-<uuid>.avro``) and is kept
    across retries; a random one when None. The producer is staged for write-audit-publish
    when :func:`wap_staging_id` says so (``wap_id``: the Spark writer's ``spark.wap.id``;
    None: ``icenb.set_options(wap_id=...)``).

    ====================  =======================================  ========================
    kind                  format versions 1-3                      EXPERIMENTAL v4
    ====================  =======================================  ========================
    append                ``MergeAppend`` (``FastAppend`` when      ``V4Append``
                          ``commit.manifest-merge.enabled=false``)
    overwrite             ``OverwriteFiles``                       ``V4Overwrite``
    replace_partitions    ``ReplacePartitions``                    ``V4ReplacePartitions``
    row_delta             ``RowDelta``                             ``V4RowDelta``
    delete                ``DeleteFiles``                          ``V4Overwrite``
    ====================  =======================================  ========================
    """
    try:
        k = ProducerKind(kind)
    except ValueError:
        raise ValidationError("unknown snapshot operation", field="kind",
                              value=kind) from None
    v4 = metadata.format_version >= 4
    cls: type[SnapshotProducer]
    if k is ProducerKind.APPEND:
        cls = (V4Append if v4 else MergeAppend if merge_enabled(metadata.properties)
               else FastAppend)
    elif k is ProducerKind.OVERWRITE:
        cls = V4Overwrite if v4 else OverwriteFiles
    elif k is ProducerKind.REPLACE_PARTITIONS:
        cls = V4ReplacePartitions if v4 else ReplacePartitions
    elif k is ProducerKind.ROW_DELTA:
        cls = V4RowDelta if v4 else RowDelta
    else:
        cls = V4Overwrite if v4 else DeleteFiles
    producer = cls(catalog, identifier, io, branch=branch,
                   snapshot_properties=snapshot_properties, commit_uuid=commit_uuid)
    staged = wap_staging_id(metadata, wap_id)
    if staged is not None:
        producer.stage_only(staged)
    return producer


def table_producer(kind: Kind, table: Table, expected: type[P], *, branch: str = MAIN_BRANCH,
                   snapshot_properties: Mapping[str, str] | None = None,
                   commit_uuid: str | None = None) -> P:
    """:func:`new_producer` for ``table`` (its commit target, FileIO and metadata, through
    ``table.operations``) when the caller's path needs an ``expected`` producer class, e.g. a
    v4 path a :class:`V4RowDelta`; ``ValidationError`` naming the format version otherwise."""
    catalog, identifier = table.operations.commit_target()
    md = table.metadata
    producer = new_producer(kind, catalog, identifier, table.io, md, branch=branch,
                            snapshot_properties=snapshot_properties, commit_uuid=commit_uuid)
    if not isinstance(producer, expected):
        raise ValidationError(f"a {expected.__name__} does not commit to this table",
                              field="format-version", value=md.format_version)
    return producer
