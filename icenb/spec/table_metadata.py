"""Table metadata (format versions 1 to 3, and EXPERIMENTAL 4): model, JSON reading/writing,
history lookups.

Format version 4 is the unadopted *single-file commits* proposal
(``shared/specs/v4-single-file-commits.txt``; icenb's choices in ``docs/v4-layout.md``): the
table fields are v3's, and a snapshot points to one ``root-manifest`` instead of a manifest list
(snapshots from before an upgrade keep theirs). No engine reads such tables.

Spec sections: "Table Metadata", "Table Metadata Fields", "Snapshots", "Snapshot References",
"Table Statistics", "Partition Statistics", "Encryption Keys", Appendix C "Table Metadata and
Snapshots", Appendix E (reading defaults and writing rules per version), Appendix F "Point in
Time Reads".

Loading is lazy where tables grow: ``snapshots``, ``snapshot-log``, ``metadata-log``,
``statistics`` and ``partition-statistics`` keep their raw JSON and build objects on first access
(a 10,000-snapshot file loads about as fast as ``json.loads`` of it). Everything small (schemas,
specs, sort orders, refs, keys, top-level fields) is parsed and checked at load, and so are the
cross references (current schema/spec/sort order, current snapshot, refs). A malformed item in a
lazy part raises ``InvalidMetadata`` (naming the file and e.g. ``snapshots[3].timestamp-ms``)
when it is first read; :meth:`TableMetadata.validate` (or ``strict=True``) checks everything now.
Writing always validates.

Unknown top-level fields are kept in ``extra`` and written back verbatim (after the known ones).

Decisions where the spec is silent follow Iceberg Java 1.10: ``current-snapshot-id`` of -1 (or
null) means no current snapshot and is written as -1 for v1/v2 and null for v3; a missing
``refs`` with a current snapshot gives an implicit ``main`` branch; a v1 ``partition-spec`` gets
field ids from 1000; a v1 table without ``last-partition-id`` uses the highest partition field id
(999 when none); a v1 table without sort orders gets the unsorted order 0; ``next-row-id`` is
read and written only for v3.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from functools import cached_property, partial
from types import MappingProxyType
from typing import Any, Generic, TypeVar, overload

from icenb.errors import (
    CorruptFile,
    IcebergError,
    InvalidMetadata,
    NoSuchSnapshot,
    UnsupportedVersion,
)
from icenb.reprs import safe_repr
from icenb.spec._json_fields import (
    as_object,
    json_list,
    missing_field,
    opt_int,
    opt_long,
    opt_str,
    req_int,
    req_long,
    req_str,
    str_map,
    wrong_type,
)
from icenb.spec.partition_spec import (
    PartitionSpec,
    partition_fields_from_json,
    partition_fields_to_json,
    partition_spec_from_json,
    partition_spec_to_json,
)
from icenb.spec.schema import Schema, schema_from_json, schema_to_json
from icenb.spec.snapshot import (
    MAIN_BRANCH,
    EncryptedKey,
    MetadataLogEntry,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    encrypted_key_from_json,
    encrypted_key_to_json,
    metadata_log_entry_from_json,
    metadata_log_entry_to_json,
    partition_statistics_file_from_json,
    partition_statistics_file_to_json,
    snapshot_from_json,
    snapshot_log_entry_from_json,
    snapshot_log_entry_to_json,
    snapshot_ref_from_json,
    snapshot_ref_to_json,
    snapshot_to_json,
    statistics_file_from_json,
    statistics_file_to_json,
)
from icenb.spec.sort_order import UNSORTED, SortOrder, sort_order_from_json, sort_order_to_json

_orjson: Any
try:
    import orjson as _orjson_module

    _orjson = _orjson_module
except ImportError:  # pragma: no cover - orjson is optional; the stdlib parser is the fallback
    _orjson = None

__all__ = [
    "MAX_FORMAT_VERSION",
    "MAX_UPGRADE_FORMAT_VERSION",
    "MAX_WRITE_FORMAT_VERSION",
    "LazySequence",
    "TableMetadata",
    "table_metadata_from_json",
    "table_metadata_to_json",
    "to_json_string",
]

#: Highest table format version this module reads and writes. 4 is EXPERIMENTAL: the
#: single-file-commits proposal (docs/v4-layout.md), not an adopted Iceberg version.
MAX_FORMAT_VERSION = 4
#: Highest format version icenb creates tables of. 4 is EXPERIMENTAL (docs/v4-layout.md).
MAX_WRITE_FORMAT_VERSION = 4
#: Highest format version a table can be upgraded to (v3 -> v4: docs/v4-layout.md#upgrade).
MAX_UPGRADE_FORMAT_VERSION = 4

T = TypeVar("T")


def iso_utc(timestamp_ms: int) -> str:
    """Epoch milliseconds as an ISO-8601 UTC time for messages (``1999-01-01T00:00:00.000Z``);
    the number itself when no calendar date holds it."""
    try:
        when = datetime.fromtimestamp(timestamp_ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(timestamp_ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


# --------------------------------------------------------------------------- lazy sequences


@safe_repr
class LazySequence(Sequence[T], Generic[T]):
    """A read-only list kept as raw JSON items and parsed item by item on first access.

    Errors from parsing an item are ``InvalidMetadata`` naming the file and item path.
    Compares equal to any sequence with equal items (tuples, lists, other lazy sequences).
    """

    __slots__ = ("_file", "_items", "_parse", "_raw", "_where")

    def __init__(self, raw: list[Any], parse: Callable[[Any, str], T], where: str,
                 file: str | None = None) -> None:
        self._raw = raw
        self._parse = parse
        self._where = where
        self._file = file
        self._items: list[T | None] = [None] * len(raw)

    @property
    def raw(self) -> list[Any]:
        """The raw JSON items (read-only by convention)."""
        return self._raw

    def _get(self, index: int) -> T:
        item = self._items[index]
        if item is None:
            try:
                item = self._parse(self._raw[index], f"{self._where}[{index}]")
            except IcebergError as e:
                raise (e.with_file(self._file) if self._file else e) from None
            except RecursionError:
                raise InvalidMetadata("nested too deeply", file=self._file,
                                      field=f"{self._where}[{index}]") from None
            self._items[index] = item
        return item

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self._get(i) for i in range(*index.indices(len(self._raw))))
        n = len(self._raw)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("index out of range")
        return self._get(index)

    def __iter__(self) -> Iterator[T]:
        for i in range(len(self._raw)):
            yield self._get(i)

    def __reversed__(self) -> Iterator[T]:
        for i in range(len(self._raw) - 1, -1, -1):
            yield self._get(i)

    def materialize(self) -> tuple[T, ...]:
        """Parse every item now (raising the first error) and return them as a tuple."""
        return tuple(self)

    @property
    def parsed_count(self) -> int:
        """How many items have been built so far (for tests and reprs)."""
        return sum(1 for x in self._items if x is not None)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, LazySequence) and other._parse is self._parse \
                and other._raw == self._raw:
            return True
        if isinstance(other, (str, bytes)) or not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"<{len(self._raw)} {self._where} ({self.parsed_count} parsed)>"


def _freeze_seq(value: Sequence[T] | None) -> Sequence[T]:
    if isinstance(value, (LazySequence, tuple)):
        return value
    return tuple(value or ())


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True, kw_only=True)
class TableMetadata:
    """The content of a table metadata file, for format versions 1, 2 and 3 (immutable).

    Spec: "Table Metadata Fields". v1 documents are normalized: ``schema`` becomes
    ``schemas=[schema]``; ``partition-spec`` becomes spec 0; ``last_sequence_number`` and every
    snapshot's ``sequence_number`` default to 0 (Appendix E). ``current_snapshot_id`` is None
    when there is no current snapshot. ``refs`` always has ``main`` when there is a current
    snapshot. ``next_row_id`` (v3 row lineage) is None before v3.
    """

    format_version: int
    table_uuid: str | None
    location: str
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    sort_orders: tuple[SortOrder, ...]
    default_sort_order_id: int
    last_sequence_number: int = 0
    properties: Mapping[str, str] = field(default_factory=dict)
    current_snapshot_id: int | None = None
    snapshots: Sequence[Snapshot] = ()
    snapshot_log: Sequence[SnapshotLogEntry] = ()
    metadata_log: Sequence[MetadataLogEntry] = ()
    refs: Mapping[str, SnapshotRef] = field(default_factory=dict)
    statistics: Sequence[StatisticsFile] = ()
    partition_statistics: Sequence[PartitionStatisticsFile] = ()
    next_row_id: int | None = None
    encryption_keys: tuple[EncryptedKey, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "schemas", tuple(self.schemas))
        setattr_(self, "partition_specs", tuple(self.partition_specs))
        setattr_(self, "sort_orders", tuple(self.sort_orders))
        setattr_(self, "encryption_keys", tuple(self.encryption_keys))
        for name in ("snapshots", "snapshot_log", "metadata_log", "statistics",
                     "partition_statistics"):
            setattr_(self, name, _freeze_seq(getattr(self, name)))
        for name in ("properties", "refs", "extra"):
            value = getattr(self, name)
            if not isinstance(value, MappingProxyType):
                setattr_(self, name, MappingProxyType(dict(value)))
        self._check()

    def _check(self) -> None:
        """Cheap structural checks run on every instance (spec: Table Metadata Fields)."""
        v = self.format_version
        if type(v) is not int or not 1 <= v <= MAX_FORMAT_VERSION:
            raise UnsupportedVersion(
                f"unsupported table format version {v!r} (icenb supports 1 to "
                f"{MAX_FORMAT_VERSION})", field="format-version", value=v)
        if v >= 2 and self.table_uuid is None:
            raise InvalidMetadata(f"missing required field (table-uuid is required in v{v})",
                                  field="table-uuid")
        if v >= 3 and self.next_row_id is None:
            raise InvalidMetadata("missing required field (next-row-id is required in v3)",
                                  field="next-row-id")
        if self.next_row_id is not None and self.next_row_id < 0:
            raise InvalidMetadata("next-row-id must not be negative", field="next-row-id",
                                  value=self.next_row_id)
        if self.last_sequence_number < 0:
            raise InvalidMetadata("last-sequence-number must not be negative",
                                  field="last-sequence-number", value=self.last_sequence_number)
        _unique_ids("schemas", "schema-id", [s.schema_id for s in self.schemas])
        _unique_ids("partition-specs", "spec-id", [s.spec_id for s in self.partition_specs])
        _unique_ids("sort-orders", "order-id", [o.order_id for o in self.sort_orders])
        _unique_ids("encryption-keys", "key-id", [k.key_id for k in self.encryption_keys])
        if self.schema_by_id(self.current_schema_id) is None:
            raise InvalidMetadata("current-schema-id does not match any schema",
                                  field="current-schema-id", value=self.current_schema_id)
        if self.spec_by_id(self.default_spec_id) is None:
            raise InvalidMetadata("default-spec-id does not match any partition spec",
                                  field="default-spec-id", value=self.default_spec_id)
        if self.sort_order_by_id(self.default_sort_order_id) is None:
            raise InvalidMetadata("default-sort-order-id does not match any sort order",
                                  field="default-sort-order-id",
                                  value=self.default_sort_order_id)
        current = self.current_snapshot_id
        index = self._snapshot_index if (current is not None or self.refs) else {}
        if current is not None and current not in index:
            raise InvalidMetadata("current-snapshot-id does not match any snapshot",
                                  field="current-snapshot-id", value=current)
        for name, ref in self.refs.items():
            if ref.snapshot_id not in index:
                raise InvalidMetadata("reference points to a snapshot that is not in snapshots",
                                      field=f"refs.{name}.snapshot-id", value=ref.snapshot_id)
        main = self.refs.get(MAIN_BRANCH)
        if main is not None:
            if current is None:
                raise InvalidMetadata("the main branch is set but current-snapshot-id is not",
                                      field="refs.main.snapshot-id", value=main.snapshot_id)
            if main.snapshot_id != current:
                raise InvalidMetadata(
                    f"current-snapshot-id {current} does not match the main branch",
                    field="refs.main.snapshot-id", value=main.snapshot_id)
            if not main.is_branch:
                raise InvalidMetadata("main must be a branch", field="refs.main.type",
                                      value=main.ref_type.value)

    @property
    def source_file(self) -> str | None:
        """The file this metadata was read from, when the reader was told (named in errors)."""
        found: str | None = self.__dict__.get("_source_file")
        return found

    def validate(self) -> None:
        """Parse and check every lazy part now (all snapshots, logs, statistics).

        Raises the first ``InvalidMetadata`` found. Also checks that snapshot ids are unique and
        that no snapshot's sequence number exceeds ``last-sequence-number`` (v2+).
        """
        try:
            self._validate()
        except IcebergError as e:
            file = self.source_file
            raise (e.with_file(file) if file else e) from None

    def _validate(self) -> None:
        for seq in (self.snapshots, self.snapshot_log, self.metadata_log, self.statistics,
                    self.partition_statistics):
            if isinstance(seq, LazySequence):
                seq.materialize()
        seen: set[int] = set()
        for i, snap in enumerate(self.snapshots):
            if snap.snapshot_id in seen:
                raise InvalidMetadata("duplicate snapshot id", field=f"snapshots[{i}].snapshot-id",
                                      value=snap.snapshot_id)
            seen.add(snap.snapshot_id)
            if snap.root_manifest is not None and self.format_version < 4:
                raise InvalidMetadata(f"only format version 4 snapshots have a root manifest "
                                      f"(this table is v{self.format_version})",
                                      field=f"snapshots[{i}].root-manifest",
                                      value=snap.root_manifest)
            if self.format_version >= 2 and snap.sequence_number > self.last_sequence_number:
                raise InvalidMetadata(
                    f"snapshot sequence number is greater than last-sequence-number "
                    f"{self.last_sequence_number}", field=f"snapshots[{i}].sequence-number",
                    value=snap.sequence_number)

    # -- equality / display / pickling ---------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle/copy support (read-only mappings do not pickle by themselves)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("properties", "refs", "extra"):
            values[name] = dict(values[name])
        return (_rebuild, (values, self.source_file))

    def __hash__(self) -> int:
        return hash((self.format_version, self.table_uuid, self.location, self.last_updated_ms,
                     self.last_sequence_number, self.current_snapshot_id, len(self.snapshots)))

    def __repr__(self) -> str:
        return (f"TableMetadata(format_version={self.format_version}, "
                f"table_uuid={self.table_uuid!r}, location={self.location!r}, "
                f"current_snapshot_id={self.current_snapshot_id}, "
                f"snapshots={len(self.snapshots)}, schemas={len(self.schemas)}, "
                f"refs={sorted(self.refs)})")

    # -- current objects ------------------------------------------------------------
    @property
    def schema(self) -> Schema:
        """The current schema."""
        found = self.schema_by_id(self.current_schema_id)
        assert found is not None  # checked in __post_init__
        return found

    @property
    def spec(self) -> PartitionSpec:
        """The default partition spec."""
        found = self.spec_by_id(self.default_spec_id)
        assert found is not None
        return found

    @property
    def sort_order(self) -> SortOrder:
        """The default sort order."""
        found = self.sort_order_by_id(self.default_sort_order_id)
        assert found is not None
        return found

    @cached_property
    def _schemas_by_id(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in self.schemas}

    @cached_property
    def _specs_by_id(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in self.partition_specs}

    @cached_property
    def _orders_by_id(self) -> dict[int, SortOrder]:
        return {o.order_id: o for o in self.sort_orders}

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return self._schemas_by_id.get(schema_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec | None:
        return self._specs_by_id.get(spec_id)

    def sort_order_by_id(self, order_id: int) -> SortOrder | None:
        return self._orders_by_id.get(order_id)

    @property
    def specs_by_id(self) -> Mapping[int, PartitionSpec]:
        """All partition specs by id (manifests name the spec they were written with)."""
        return MappingProxyType(self._specs_by_id)

    # -- snapshots ---------------------------------------------------------------------
    @cached_property
    def _snapshot_index(self) -> dict[int, int]:
        """Snapshot id -> position in ``snapshots``, built without parsing unread snapshots."""
        snaps = self.snapshots
        if isinstance(snaps, LazySequence):
            return _raw_snapshot_index(snaps)
        index: dict[int, int] = {}
        for i, s in enumerate(snaps):
            if s.snapshot_id in index:
                raise InvalidMetadata("duplicate snapshot id",
                                      field=f"snapshots[{i}].snapshot-id", value=s.snapshot_id)
            index[s.snapshot_id] = i
        return index

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        """The snapshot with this id, or None (e.g. expired)."""
        pos = self._snapshot_index.get(snapshot_id)
        return None if pos is None else self.snapshots[pos]

    def current_snapshot(self) -> Snapshot | None:
        """The table's current snapshot (main branch), or None for an empty table."""
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def snapshot_for_ref(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points to, or None if there is no such ref.

        Spec: Snapshot References ("main" always exists when there is a current snapshot).
        """
        ref = self.refs.get(name)
        if ref is None:
            return self.current_snapshot() if name == MAIN_BRANCH else None
        return self.snapshot_by_id(ref.snapshot_id)

    def ancestors(self, snapshot_id: int) -> Iterator[Snapshot]:
        """The snapshot and its ancestors, newest first; stops where a parent has expired."""
        seen: set[int] = set()
        snap = self.snapshot_by_id(snapshot_id)
        while snap is not None:
            if snap.snapshot_id in seen:
                raise InvalidMetadata("snapshot ancestry has a cycle", file=self.source_file,
                                      field="snapshots.parent-snapshot-id",
                                      value=snap.snapshot_id)
            seen.add(snap.snapshot_id)
            yield snap
            parent = snap.parent_snapshot_id
            snap = None if parent is None else self.snapshot_by_id(parent)

    def is_ancestor(self, ancestor_id: int, snapshot_id: int) -> bool:
        """Whether ``ancestor_id`` is ``snapshot_id`` or one of its (unexpired) ancestors.

        Constant time after one linear pass over the parent links (``_ancestry_spans``), so a
        check per snapshot-log entry stays linear in the log, not quadratic.
        """
        spans = self._ancestry_spans
        below = spans.get(snapshot_id)
        if below is None:   # unknown, or on a parent cycle: the walk raises or finds nothing
            return any(s.snapshot_id == ancestor_id for s in self.ancestors(snapshot_id))
        above = spans.get(ancestor_id)
        return above is not None and above[0] <= below[0] and below[1] <= above[1]

    @cached_property
    def _ancestry_spans(self) -> dict[int, tuple[int, int]]:
        """Snapshot id -> (entry, exit) step of one depth-first walk of the parent tree.

        ``a`` is an ancestor of ``b`` exactly when ``a``'s span holds ``b``'s. A snapshot whose
        parent has expired is a root (spec: Snapshots, ``parent-snapshot-id``); snapshots on a
        parent cycle are reached from no root and get no span.
        """
        index = self._snapshot_index
        children: dict[int, list[int]] = {}
        roots: list[int] = []
        for sid, pos in index.items():
            parent = self.snapshots[pos].parent_snapshot_id
            if parent is None or parent not in index:
                roots.append(sid)
            else:
                children.setdefault(parent, []).append(sid)
        spans: dict[int, tuple[int, int]] = {}
        step = 0
        for root in roots:
            stack: list[tuple[int, bool]] = [(root, False)]
            while stack:
                sid, leaving = stack.pop()
                if leaving:
                    spans[sid] = (spans[sid][0], step)
                else:
                    spans[sid] = (step, -1)
                    stack.append((sid, True))
                    stack.extend((child, False) for child in children.get(sid, ()))
                step += 1
        return spans

    def snapshot_as_of(self, timestamp_ms: int) -> Snapshot:
        """The snapshot that was current at ``timestamp_ms``, from the snapshot log.

        Spec: Appendix F "Point in Time Reads": the last log entry at or before the time.
        Raises ``NoSuchSnapshot`` naming the timestamp when there is none (or it has expired).
        """
        found: SnapshotLogEntry | None = None
        for entry in self.snapshot_log:
            if entry.timestamp_ms <= timestamp_ms:
                found = entry
        if found is None:
            raise NoSuchSnapshot(
                f"no snapshot was current at or before timestamp {timestamp_ms} "
                f"({iso_utc(timestamp_ms)}; the snapshot log starts later or is empty)",
                file=self.source_file, field="snapshot-log",
                value=timestamp_ms)
        snap = self.snapshot_by_id(found.snapshot_id)
        if snap is None:
            raise NoSuchSnapshot(
                f"snapshot {found.snapshot_id}, current at timestamp {timestamp_ms}, has expired",
                file=self.source_file, field="snapshot-log", value=timestamp_ms)
        return snap

    def schema_for_snapshot(self, snapshot_id: int) -> Schema:
        """The schema a snapshot was written with (its ``schema-id``), else the current schema.

        Raises ``NoSuchSnapshot`` when the snapshot is not in the metadata.
        """
        snap = self.snapshot_by_id(snapshot_id)
        if snap is None:
            raise NoSuchSnapshot("no such snapshot", file=self.source_file, field="snapshot-id",
                                 value=snapshot_id)
        if snap.schema_id is not None:
            found = self.schema_by_id(snap.schema_id)
            if found is not None:
                return found
        return self.schema


def _rebuild(values: dict[str, Any], source_file: str | None) -> TableMetadata:
    md = TableMetadata(**values)
    if source_file is not None:
        object.__setattr__(md, "_source_file", source_file)
    return md


def _unique_ids(where: str, key: str, ids: list[Any]) -> None:
    seen: set[Any] = set()
    for i, x in enumerate(ids):
        if x in seen:
            raise InvalidMetadata(f"duplicate {key}", field=f"{where}[{i}].{key}", value=x)
        seen.add(x)


def _raw_snapshot_index(snaps: LazySequence[Snapshot]) -> dict[int, int]:
    """Index raw snapshot JSON by id; a malformed item is parsed to raise its precise error."""
    raw_items = snaps.raw
    try:  # fast path: well-formed, unique, in-range ids
        index = {s["snapshot-id"]: i for i, s in enumerate(raw_items)}
        if len(index) == len(raw_items) and all(type(k) is int for k in index) and (
            not index or (min(index) >= -(2**63) and max(index) < 2**63)
        ):
            return index
    except (TypeError, KeyError, IndexError):
        pass
    index = {}
    for i, raw in enumerate(snaps.raw):
        sid = raw.get("snapshot-id") if type(raw) is dict else None
        if type(sid) is not int or not -(2**63) <= sid < 2**63:
            sid = snaps[i].snapshot_id  # raises InvalidMetadata for a truly bad item
        if sid in index:
            raise InvalidMetadata("duplicate snapshot id", file=snaps._file,
                                  field=f"snapshots[{i}].snapshot-id", value=sid)
        index[sid] = i
    return index


# --------------------------------------------------------------------------- reading

_KNOWN_FIELDS = frozenset({
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
    "last-column-id", "schema", "schemas", "current-schema-id", "partition-spec",
    "partition-specs", "default-spec-id", "last-partition-id", "properties",
    "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log", "sort-orders",
    "default-sort-order-id", "refs", "statistics", "partition-statistics", "next-row-id",
    "encryption-keys",
})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(data: str | bytes | bytearray | memoryview) -> Any:
    """Parse JSON text (orjson when installed, else the standard library)."""
    if isinstance(data, memoryview):
        data = data.tobytes()
    if isinstance(data, (bytes, bytearray)):
        if data[:3] == b"\xef\xbb\xbf":
            data = data[3:]
    elif data[:1] == "\ufeff":
        data = data[1:]
    if _orjson is not None:
        return _orjson.loads(data)
    return json.loads(data, parse_constant=_reject_constant)


def table_metadata_from_json(
    data: str | bytes | bytearray | memoryview | Mapping[str, Any],
    *,
    file: str | None = None,
    strict: bool = False,
) -> TableMetadata:
    """Read table metadata from JSON text/bytes or an already-parsed JSON object.

    ``file`` (the metadata file's location) is named in every error. Malformed JSON raises
    ``CorruptFile``; a missing required field or a wrong JSON type raises ``InvalidMetadata``
    naming the field; a format version other than 1 to 4 (4: EXPERIMENTAL) raises
    ``UnsupportedVersion``.
    ``strict=True`` also parses and checks the lazy parts now (see ``TableMetadata.validate``).
    A mapping is used as is (its lists back the lazy parts): do not modify it afterwards.
    """
    if isinstance(data, (str, bytes, bytearray, memoryview)):
        try:
            obj = _loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError, TypeError) as e:
            raise CorruptFile(f"malformed JSON: {e}", file=file) from None
    else:
        obj = data
    try:
        md = _parse(obj, file)
        if file is not None:
            object.__setattr__(md, "_source_file", file)
        if strict:
            md.validate()
    except IcebergError as e:
        raise (e.with_file(file) if file else e) from None
    except RecursionError:
        raise InvalidMetadata("nested too deeply", file=file) from None
    return md


def _parse(obj: Any, file: str | None) -> TableMetadata:
    obj = as_object(obj, "", "table metadata")
    version = req_int(obj, "format-version", "", bits=None)
    if not 1 <= version <= MAX_FORMAT_VERSION:
        raise UnsupportedVersion(
            f"unsupported table format version {version} (icenb supports 1 to "
            f"{MAX_FORMAT_VERSION})", field="format-version", value=version)
    v2 = version >= 2

    table_uuid = req_str(obj, "table-uuid", "") if v2 else opt_str(obj, "table-uuid", "")
    location = req_str(obj, "location", "")
    last_seq = req_long(obj, "last-sequence-number", "") if v2 else 0
    last_updated = req_long(obj, "last-updated-ms", "")
    last_column_id = req_int(obj, "last-column-id", "")

    # schemas (v1: the deprecated single "schema")
    if v2 or "schemas" in obj:
        current_schema_id = req_int(obj, "current-schema-id", "")
        schemas = _each(obj, "schemas", schema_from_json)
    else:
        if "schema" not in obj:
            raise InvalidMetadata("missing required field (v1 needs schema or schemas)",
                                  field="schemas")
        schema = schema_from_json(obj["schema"], where="schema")
        schemas = (schema,)
        current_schema_id = schema.schema_id

    # partition specs (v1: the deprecated "partition-spec" field list, ids from 1000)
    if v2 or "partition-specs" in obj:
        default_spec_id = req_int(obj, "default-spec-id", "")
        specs = _each(obj, "partition-specs",
                      partial(partition_spec_from_json, format_version=version))
    else:
        raw_fields = json_list(obj, "partition-spec", "", required=True)
        specs = (partition_fields_from_json(raw_fields, format_version=version, spec_id=0,
                                            where="partition-spec"),)
        default_spec_id = 0

    last_partition_id = opt_int(obj, "last-partition-id", "")
    if last_partition_id is None:
        if v2:
            raise missing_field("", "last-partition-id")
        last_partition_id = max(s.last_assigned_field_id for s in specs)

    # sort orders (v1: optional; default to the unsorted order 0)
    if v2 or "sort-orders" in obj:
        default_order_id = req_int(obj, "default-sort-order-id", "")
        orders = _each(obj, "sort-orders", partial(sort_order_from_json, format_version=version))
    else:
        orders = (UNSORTED,)
        default_order_id = UNSORTED.order_id

    properties = str_map(obj, "properties", "")
    current = opt_long(obj, "current-snapshot-id", "")
    if current == -1:
        current = None

    raw_refs = obj.get("refs")
    refs: dict[str, SnapshotRef] = {}
    if raw_refs is not None:
        if not isinstance(raw_refs, Mapping):
            raise wrong_type("", "refs", raw_refs, "a JSON object")
        for name, raw_ref in raw_refs.items():
            refs[name] = snapshot_ref_from_json(raw_ref, where=f"refs.{name}")
    elif current is not None:
        refs[MAIN_BRANCH] = SnapshotRef.branch(current)

    next_row_id = None
    if version >= 3:
        next_row_id = req_long(obj, "next-row-id", "")
    keys = _each(obj, "encryption-keys", encrypted_key_from_json, required=False)

    def lazy(key: str, parse: Callable[[Any, str], T]) -> LazySequence[T]:
        return LazySequence(json_list(obj, key, ""), parse, key, file)

    extra = {k: v for k, v in obj.items() if k not in _KNOWN_FIELDS}
    return TableMetadata(
        format_version=version,
        table_uuid=table_uuid,
        location=location,
        last_sequence_number=last_seq,
        last_updated_ms=last_updated,
        last_column_id=last_column_id,
        schemas=schemas,
        current_schema_id=current_schema_id,
        partition_specs=specs,
        default_spec_id=default_spec_id,
        last_partition_id=last_partition_id,
        sort_orders=orders,
        default_sort_order_id=default_order_id,
        properties=properties,
        current_snapshot_id=current,
        snapshots=lazy("snapshots", _SNAPSHOT_PARSERS[version]),
        snapshot_log=lazy("snapshot-log", _parse_snapshot_log_entry),
        metadata_log=lazy("metadata-log", _parse_metadata_log_entry),
        refs=refs,
        statistics=lazy("statistics", _parse_statistics_file),
        partition_statistics=lazy("partition-statistics", _parse_partition_statistics_file),
        next_row_id=next_row_id,
        encryption_keys=keys,
        extra=extra,
    )


def _each(obj: Mapping[str, Any], key: str, parse: Callable[..., T],
          required: bool = True) -> tuple[T, ...]:
    """``parse(item, where="key[i]")`` for every item of the top-level list ``key``."""
    return tuple(parse(item, where=f"{key}[{i}]")
                 for i, item in enumerate(json_list(obj, key, "", required)))


def _parse_snapshot_v1(obj: Any, where: str) -> Snapshot:
    return snapshot_from_json(obj, format_version=1, where=where)


def _parse_snapshot_v2(obj: Any, where: str) -> Snapshot:
    return snapshot_from_json(obj, format_version=2, where=where)


def _parse_snapshot_v3(obj: Any, where: str) -> Snapshot:
    return snapshot_from_json(obj, format_version=3, where=where)


def _parse_snapshot_v4(obj: Any, where: str) -> Snapshot:
    return snapshot_from_json(obj, format_version=4, where=where)


_SNAPSHOT_PARSERS: dict[int, Callable[[Any, str], Snapshot]] = {
    1: _parse_snapshot_v1, 2: _parse_snapshot_v2, 3: _parse_snapshot_v3, 4: _parse_snapshot_v4,
}


def _parse_snapshot_log_entry(obj: Any, where: str) -> SnapshotLogEntry:
    return snapshot_log_entry_from_json(obj, where=where)


def _parse_metadata_log_entry(obj: Any, where: str) -> MetadataLogEntry:
    return metadata_log_entry_from_json(obj, where=where)


def _parse_statistics_file(obj: Any, where: str) -> StatisticsFile:
    return statistics_file_from_json(obj, where=where)


def _parse_partition_statistics_file(obj: Any, where: str) -> PartitionStatisticsFile:
    return partition_statistics_file_from_json(obj, where=where)


# --------------------------------------------------------------------------- writing


def table_metadata_to_json(md: TableMetadata) -> dict[str, Any]:
    """Serialize table metadata as Iceberg Java 1.10 writes it for ``md.format_version``.

    Appendix E: v1 also writes the deprecated ``schema`` and ``partition-spec`` and no
    ``last-sequence-number``; v3 writes ``next-row-id``. Validates ``md`` first (all lazy parts
    are parsed). Unknown fields from ``md.extra`` come last, verbatim.
    """
    md.validate()
    v = md.format_version
    out: dict[str, Any] = {"format-version": v}
    if md.table_uuid is not None:
        out["table-uuid"] = md.table_uuid
    out["location"] = md.location
    if v >= 2:
        out["last-sequence-number"] = md.last_sequence_number
    out["last-updated-ms"] = md.last_updated_ms
    out["last-column-id"] = md.last_column_id
    if v == 1:
        out["schema"] = schema_to_json(md.schema)
    out["current-schema-id"] = md.current_schema_id
    out["schemas"] = [schema_to_json(s) for s in md.schemas]
    if v == 1:
        out["partition-spec"] = partition_fields_to_json(md.spec, v)
    out["default-spec-id"] = md.default_spec_id
    out["partition-specs"] = [partition_spec_to_json(s, v) for s in md.partition_specs]
    out["last-partition-id"] = md.last_partition_id
    out["default-sort-order-id"] = md.default_sort_order_id
    out["sort-orders"] = [sort_order_to_json(o, v) for o in md.sort_orders]
    out["properties"] = dict(md.properties)
    if md.current_snapshot_id is not None:
        out["current-snapshot-id"] = md.current_snapshot_id
    else:
        out["current-snapshot-id"] = None if v >= 3 else -1
    if v >= 3:
        out["next-row-id"] = md.next_row_id
    if md.encryption_keys:
        out["encryption-keys"] = [encrypted_key_to_json(k) for k in md.encryption_keys]
    out["refs"] = {name: snapshot_ref_to_json(r) for name, r in md.refs.items()}
    out["snapshots"] = [snapshot_to_json(s, v) for s in md.snapshots]
    out["statistics"] = [statistics_file_to_json(s) for s in md.statistics]
    out["partition-statistics"] = [partition_statistics_file_to_json(s)
                                   for s in md.partition_statistics]
    out["snapshot-log"] = [snapshot_log_entry_to_json(e) for e in md.snapshot_log]
    out["metadata-log"] = [metadata_log_entry_to_json(e) for e in md.metadata_log]
    for key, value in md.extra.items():
        if key not in out:
            out[key] = copy.deepcopy(value)
    return out


def to_json_string(md: TableMetadata, indent: int | None = None) -> str:
    """Table metadata as JSON text: compact by default, or indented by ``indent`` spaces."""
    obj = table_metadata_to_json(md)
    if _orjson is not None and indent in (None, 2):
        try:
            opts = _orjson.OPT_INDENT_2 if indent == 2 else 0
            return str(_orjson.dumps(obj, option=opts).decode("utf-8"))
        except TypeError:  # e.g. an integer beyond 64 bits in ``extra``
            pass
    if indent is None:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(obj, indent=indent, ensure_ascii=False)
