"""Conflict validation of v1-v3 commits (spec: "Commit Conflict Resolution and Retry"; Java's
``MergingSnapshotProducer`` validations): isolation levels, the operations each check looks at,
and the filter that decides whether a file may hold rows a conflict filter matches."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from icenb.errors import ValidationError
from icenb.spec.evaluators import row_evaluator
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import AlwaysFalse, AlwaysTrue, Expression, bind
from icenb.spec.manifest import (
    DataFile,
    FileContent,
)
from icenb.spec.metrics_evaluator import FileMetrics, inclusive_match, strict_match
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.projection import project_inclusive_bound, project_strict_bound
from icenb.spec.schema import Schema

__all__ = ["ADDED_DATA_OPS", "DELETED_DATA_OPS", "NEW_DELETE_OPS", "FileFilter", "IsolationLevel",
           "RowDeltaValidation", "as_expression", "isolation_level", "validate_row_delta"]

# Operations whose snapshots each validation looks at (Java's MergingSnapshotProducer).
ADDED_DATA_OPS = frozenset({"append", "overwrite"})
DELETED_DATA_OPS = frozenset({"overwrite", "replace", "delete"})
NEW_DELETE_OPS = frozenset({"overwrite", "delete"})


class IsolationLevel:
    """Write isolation levels (Java's ``IsolationLevel``)."""

    SERIALIZABLE = "serializable"
    SNAPSHOT = "snapshot"


def isolation_level(properties: Mapping[str, str], operation: str) -> str:
    """``write.<delete|update|merge>.isolation-level`` (default serializable)."""
    key = f"write.{operation}.isolation-level"
    raw = str(properties.get(key, IsolationLevel.SERIALIZABLE)).strip().lower()
    if raw not in (IsolationLevel.SERIALIZABLE, IsolationLevel.SNAPSHOT):
        raise ValidationError("isolation level must be serializable or snapshot", field=key,
                              value=raw)
    return raw


def as_expression(expr: str | Expression, field: str) -> Expression:
    if isinstance(expr, str):
        return parse(expr)
    if isinstance(expr, Expression):
        return expr
    raise ValidationError("a filter must be a string or an Expression", field=field,
                          value=type(expr).__name__)


# --------------------------------------------------------------------------- file matching


class FileFilter:
    """A row filter evaluated on files: may rows match (inclusive partition projection and
    metrics), must every row match (strict projection or strict metrics)? As Java's
    ``ManifestFilterManager`` evaluator."""

    def __init__(self, expr: Expression, schema: Schema, specs: Mapping[int, PartitionSpec],
                 case_sensitive: bool) -> None:
        self.expr = expr
        self.schema = schema
        self.bound = bind(expr, schema, case_sensitive)
        self._specs = specs
        self._case_sensitive = case_sensitive
        self._by_spec: dict[int, tuple[Callable[[Any], bool], Callable[[Any], bool]]] = {}

    def _spec_tests(self, spec_id: int) -> tuple[Callable[[Any], bool], Callable[[Any], bool]]:
        tests = self._by_spec.get(spec_id)
        if tests is None:
            spec = self._specs[spec_id]
            inclusive = row_evaluator(project_inclusive_bound(spec, self.schema, self.expr,
                                                              self._case_sensitive))
            strict = row_evaluator(project_strict_bound(spec, self.schema, self.expr,
                                                        self._case_sensitive))
            tests = (inclusive, strict)
            self._by_spec[spec_id] = tests
        return tests

    def _partition(self, f: DataFile) -> dict[int, Any]:
        spec = self._specs[f.spec_id]
        return {pf.field_id: v for pf, v in zip(spec.fields, f.partition, strict=False)}

    def _metrics(self, f: DataFile) -> FileMetrics:
        return FileMetrics.from_serialized(self.schema, f.record_count, f.value_counts,
                                           f.null_value_counts, f.nan_value_counts,
                                           f.lower_bounds, f.upper_bounds)

    def partition_might_match(self, f: DataFile) -> bool:
        return self._spec_tests(f.spec_id)[0](self._partition(f))

    def might_match(self, f: DataFile) -> bool:
        if isinstance(self.bound, AlwaysTrue):
            return True
        if isinstance(self.bound, AlwaysFalse):
            return False
        if not self.partition_might_match(f):
            return False
        return f.content != FileContent.DATA or inclusive_match(self.bound, self._metrics(f))

    def must_match(self, f: DataFile) -> bool:
        if isinstance(self.bound, AlwaysTrue):
            return True
        if isinstance(self.bound, AlwaysFalse):
            return False
        if self._spec_tests(f.spec_id)[1](self._partition(f)):
            return True
        return f.content == FileContent.DATA and strict_match(self.bound, self._metrics(f))


class RowDeltaValidation(Protocol):
    """What a row delta of any format version offers to validate against concurrent commits
    (Java's ``RowDelta`` methods): :class:`~icenb.table.commit.row_delta.RowDelta` and
    :class:`~icenb.table.commit.v4_row_delta.V4RowDelta`."""

    def validate_from_snapshot(self, snapshot_id: int | None) -> Any: ...
    def conflict_detection_filter(self, expr: str | Expression) -> Any: ...
    def validate_data_files_exist(self, paths: Iterable[str]) -> Any: ...
    def validate_no_conflicting_data_files(self) -> Any: ...
    def validate_no_conflicting_delete_files(self) -> Any: ...


def validate_row_delta(producer: RowDeltaValidation, snapshot_id: int | None,
                       expr: Expression, referenced: Iterable[str], isolation: str) -> None:
    """The merge-on-read validation of every row delta (Spark's ``SparkPositionDeltaWrite``):
    from the scanned snapshot with the operation's filter; the data files the new deletes
    reference must still exist; concurrent delete files the filter may match conflict, and
    under ``serializable`` isolation concurrent data files it may match."""
    producer.validate_from_snapshot(snapshot_id)
    producer.conflict_detection_filter(expr)
    paths = list(dict.fromkeys(referenced))
    if paths:
        producer.validate_data_files_exist(paths)
    if isolation == IsolationLevel.SERIALIZABLE:
        producer.validate_no_conflicting_data_files()
    producer.validate_no_conflicting_delete_files()
