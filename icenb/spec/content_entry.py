"""V4 content entries and root/leaf manifests (EXPERIMENTAL, unadopted format).

Source: the "Iceberg Single File Commits" proposal (``shared/specs/v4-single-file-commits.txt``),
sections "V4 content entry structure", "version_info struct", "deletion_vector struct",
"V4 Manifest Key Value Metadata", "Root Manifests", "Commit Procedure". No engine implements it;
the choices the proposal leaves open are written down in ``docs/v4-layout.md``.

Pure model: immutable :class:`ContentEntry` (every field of the proposal's table, with its
field id), the per-``content_type`` validity rules (:meth:`ContentEntry.check`), the rules of
one manifest (:func:`check_manifest`) and of one root entry with its leaf
(:func:`check_leaf`), and sequence-number / first-row-id inheritance (:func:`inherit`).
Avro encoding and decoding belong to ``icenb.io.root_manifest``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from icenb.errors import InvalidMetadata, UnsupportedFeature
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.manifest import (
    COLUMN_SIZES,
    FIELD_SUMMARY,
    KEY_METADATA,
    LOWER_BOUNDS,
    NAN_VALUE_COUNTS,
    NULL_VALUE_COUNTS,
    PARTITIONS,
    UPPER_BOUNDS,
    VALUE_COUNTS,
    DataFile,
    EntryStatus,
    FieldSummary,
    FileFormat,
    ManifestContent,
    ManifestFile,
)
from icenb.spec.snapshot import ROOT_MANIFEST_KEY
from icenb.spec.types import (
    BinaryType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

__all__ = [
    "ALLOWED_CONTENT",
    "CONTENT_ENTRY_RECORD",
    "CONTENT_ENTRY_TYPE",
    "CONTENT_KEY",
    "CONTENT_STATS_TYPE",
    "DELETION_VECTOR_TYPE",
    "FORMAT_VERSION",
    "FORMAT_VERSION_KEY",
    "MANIFEST_STATS_TYPE",
    "ROOT_MANIFEST_KEY",
    "VERSION_INFO_TYPE",
    "ContentEntry",
    "ContentStats",
    "ContentType",
    "DeletionVectorRef",
    "EntryStatus",
    "InheritFrom",
    "LegacyPositionDeletes",
    "ManifestKind",
    "ManifestStats",
    "VersionInfo",
    "check_leaf",
    "check_manifest",
    "inherit",
    "manifest_counts",
    "manifest_file_of",
    "manifest_kind_for",
    "snapshot_root_manifest",
]

#: The experimental format version these files carry (key-value metadata ``format-version``).
FORMAT_VERSION = 4
#: Manifest key-value metadata keys (proposal: "V4 Manifest Key Value Metadata").
FORMAT_VERSION_KEY = "format-version"
CONTENT_KEY = "content"
#: Avro record name of a content entry (icenb's choice; nested records are ``r<field id>``).
CONTENT_ENTRY_RECORD = "content_entry"


class ContentType(enum.IntEnum):
    """A content entry's ``content_type`` (field 134); 3, 4 and 5 only in a root manifest."""

    DATA = 0
    POSITION_DELETE = 1
    EQUALITY_DELETE = 2
    DATA_MANIFEST = 3
    DELETE_MANIFEST = 4
    MANIFEST_DV = 5

    @property
    def is_manifest(self) -> bool:
        """A leaf data or delete manifest (types 3, 4)."""
        return self in (ContentType.DATA_MANIFEST, ContentType.DELETE_MANIFEST)

    @property
    def is_deletion_vector(self) -> bool:
        """A data DV or a manifest DV (types 1, 5): ``deletion_vector`` must be set."""
        return self in (ContentType.POSITION_DELETE, ContentType.MANIFEST_DV)


class ManifestKind(str, enum.Enum):
    """A v4 manifest's ``content`` key-value metadata: ``root``, ``data`` or ``delete``."""

    ROOT = "root"
    DATA = "data"
    DELETE = "delete"


#: Content types each kind of manifest may hold (proposal: "Root Manifests"; adaptive tree
#: table "Manifest Type / Allowed Content").
ALLOWED_CONTENT: Mapping[ManifestKind, frozenset[ContentType]] = MappingProxyType({
    ManifestKind.ROOT: frozenset(ContentType),
    ManifestKind.DATA: frozenset({ContentType.DATA}),
    ManifestKind.DELETE: frozenset({ContentType.POSITION_DELETE, ContentType.EQUALITY_DELETE}),
})


def manifest_kind_for(content_type: ContentType) -> ManifestKind:
    """The leaf kind a root entry of type 3 or 4 points to."""
    if content_type == ContentType.DATA_MANIFEST:
        return ManifestKind.DATA
    if content_type == ContentType.DELETE_MANIFEST:
        return ManifestKind.DELETE
    raise InvalidMetadata("only data and delete manifest entries point to leaf manifests",
                          field="content_type", value=int(content_type))


# --------------------------------------------------------------------------- schema


# No doc strings: the Avro schema is written into every manifest's header, and a small
# header keeps a one-entry root small (docs/v4-layout.md#manifest-files).
def _req(fid: int, name: str, t: Any, doc: str | None = None) -> NestedField:
    return NestedField(fid, name, t, required=True)


def _opt(fid: int, name: str, t: Any, doc: str | None = None) -> NestedField:
    return NestedField(fid, name, t, required=False)


def _bare(f: NestedField) -> NestedField:
    """A v3 field reused with its id and type, without its doc string."""
    return NestedField(f.field_id, f.name, f.field_type, required=f.required)


VERSION_INFO_TYPE = StructType(
    _req(0, "status", IntegerType(), "0: EXISTING 1: ADDED 2: DELETED"),
    _opt(1, "snapshot_id", LongType(), "Snapshot that added (or deleted) the entry"),
    _opt(3, "sequence_number", LongType(), "Data sequence number"),
    _opt(4, "file_sequence_number", LongType(), "Sequence number when the file was added"),
)
DELETION_VECTOR_TYPE = StructType(
    _opt(144, "offset", LongType(), "Offset of the DV blob in the file"),
    _opt(145, "size_in_bytes", LongType(), "Length of the DV blob"),
    _opt(146, "inline_content", BinaryType(), "Serialized deletion-vector-v1 blob (inline)"),
)
#: Partition tuple of a file: partition field id -> Appendix D bytes (null value: null).
PARTITION_VALUES = _opt(150, "partition", MapType(151, IntegerType(), 152, BinaryType(), False),
                        "Partition field id to single-value bytes")
_FIELD_SUMMARY = StructType(*(_bare(f) for f in FIELD_SUMMARY.fields))
CONTENT_STATS_TYPE = StructType(
    *(_bare(f) for f in (COLUMN_SIZES, VALUE_COUNTS, NULL_VALUE_COUNTS, NAN_VALUE_COUNTS,
                         LOWER_BOUNDS, UPPER_BOUNDS)),
    PARTITION_VALUES,
    _opt(PARTITIONS.field_id, PARTITIONS.name, ListType(508, _FIELD_SUMMARY, True)),
)
MANIFEST_STATS_TYPE = StructType(
    _req(504, "added_files_count", IntegerType()),
    _req(505, "existing_files_count", IntegerType()),
    _req(506, "deleted_files_count", IntegerType()),
    _req(512, "added_rows_count", LongType()),
    _req(513, "existing_rows_count", LongType()),
    _req(514, "deleted_rows_count", LongType()),
    _req(516, "min_sequence_number", LongType()),
)
#: The content entry record, fields in the proposal's table order with its field ids.
CONTENT_ENTRY_TYPE = StructType(
    _req(134, "content_type", IntegerType(),
         "0: DATA 1: POSITION_DELETE 2: EQUALITY_DELETE 3: DATA_MANIFEST 4: DELETE_MANIFEST "
         "5: MANIFEST_DV"),
    _req(100, "location", StringType(), "Location of the file"),
    _req(101, "file_format", StringType(), "avro, orc, parquet or puffin"),
    _opt(5, "version_info", VERSION_INFO_TYPE),
    _opt(147, "deletion_vector", DELETION_VECTOR_TYPE),
    _req(148, "partition_spec_id", IntegerType()),
    _opt(140, "sort_order_id", IntegerType()),
    _req(103, "record_count", LongType(), "Records in the file, or a DV's cardinality"),
    _opt(104, "file_size_in_bytes", LongType()),
    _opt(149, "content_stats", CONTENT_STATS_TYPE),
    _opt(521, "manifest_stats", MANIFEST_STATS_TYPE),
    _opt(143, "referenced_file", StringType()),
    _bare(KEY_METADATA),
    _opt(132, "split_offsets", ListType(133, LongType(), True)),
    _opt(135, "equality_ids", ListType(136, IntegerType(), True)),
    _opt(142, "first_row_id", LongType()),
)


# --------------------------------------------------------------------------- parts


@dataclass(frozen=True)
class VersionInfo:
    """``version_info`` (field 5): status and the (inheritable) snapshot id and sequence
    numbers; None means inherited (proposal: "V4 content entry version_info struct")."""

    status: EntryStatus = EntryStatus.ADDED
    snapshot_id: int | None = None
    sequence_number: int | None = None
    file_sequence_number: int | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "status", EntryStatus(self.status))
        except ValueError:
            raise InvalidMetadata("status must be 0 (EXISTING), 1 (ADDED) or 2 (DELETED)",
                                  field="version_info.status", value=self.status) from None

    def to_avro_record(self) -> dict[str, Any]:
        return {"status": int(self.status), "snapshot_id": self.snapshot_id,
                "sequence_number": self.sequence_number,
                "file_sequence_number": self.file_sequence_number}


@dataclass(frozen=True)
class DeletionVectorRef:
    """``deletion_vector`` (field 147): a deletion-vector-v1 blob inline (``inline_content``)
    or at ``offset``/``size_in_bytes`` of the Puffin file at the entry's ``location``."""

    offset: int | None = None
    size_in_bytes: int | None = None
    inline_content: bytes | None = None

    @property
    def is_inline(self) -> bool:
        """Whether the blob is stored in the manifest itself."""
        return self.inline_content is not None

    def to_avro_record(self) -> dict[str, Any]:
        return {"offset": self.offset, "size_in_bytes": self.size_in_bytes,
                "inline_content": self.inline_content}


def _frozen_map(m: Mapping[int, Any] | None) -> Mapping[int, Any] | None:
    return None if m is None else MappingProxyType(dict(m))


@dataclass(frozen=True)
class ContentStats:
    """``content_stats`` (field 149), icenb's layout (docs/v4-layout.md): v3's per-column
    metric maps with their v3 ids, the file's partition tuple as ``partition`` (partition field
    id -> Appendix D bytes, None for a null value), and for a manifest entry the v3 partition
    field summaries of its children (``partitions``) and aggregated column metrics."""

    column_sizes: Mapping[int, int] | None = None
    value_counts: Mapping[int, int] | None = None
    null_value_counts: Mapping[int, int] | None = None
    nan_value_counts: Mapping[int, int] | None = None
    lower_bounds: Mapping[int, bytes] | None = None
    upper_bounds: Mapping[int, bytes] | None = None
    partition: Mapping[int, bytes | None] | None = None
    partitions: tuple[FieldSummary, ...] | None = None

    def __post_init__(self) -> None:
        for name in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                     "lower_bounds", "upper_bounds", "partition"):
            object.__setattr__(self, name, _frozen_map(getattr(self, name)))
        if self.partitions is not None:
            object.__setattr__(self, "partitions", tuple(self.partitions))

    def __hash__(self) -> int:
        return hash(tuple(None if v is None else tuple(sorted(v.items()))
                          for v in (self.value_counts, self.lower_bounds, self.upper_bounds,
                                    self.partition)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContentStats):
            return NotImplemented
        names = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                 "lower_bounds", "upper_bounds", "partition")
        return all(_as_dict(getattr(self, n)) == _as_dict(getattr(other, n)) for n in names) \
            and self.partitions == other.partitions

    @classmethod
    def for_partition(cls, partition_type: StructType, partition: Sequence[Any],
                      **metrics: Any) -> ContentStats:
        """Stats holding ``partition`` (a tuple in partition-field order) and ``metrics``."""
        fields = partition_type.fields
        if len(partition) != len(fields):
            raise InvalidMetadata(f"partition has {len(partition)} values for {len(fields)} "
                                  "fields", field="content_stats.partition",
                                  value=tuple(partition))
        encoded = {f.field_id: None if v is None else values.to_bytes(
            f.field_type, v, field=f"content_stats.partition.{f.name}")
            for f, v in zip(fields, partition, strict=True)}
        return cls(partition=encoded, **metrics)

    @classmethod
    def of_file(cls, partition_type: StructType, f: DataFile) -> ContentStats:
        """The stats of a v1-v3 content file: its partition tuple and metric maps (proposal:
        "V4 content entry structure", field mapping)."""
        return cls.for_partition(
            partition_type, f.partition, column_sizes=f.column_sizes,
            value_counts=f.value_counts, null_value_counts=f.null_value_counts,
            nan_value_counts=f.nan_value_counts, lower_bounds=f.lower_bounds,
            upper_bounds=f.upper_bounds)

    def partition_tuple(self, partition_type: StructType) -> tuple[Any, ...]:
        """The partition tuple for ``partition_type`` (the entry's spec); fields the map
        lacks are null (as v3 readers treat a spec's new fields)."""
        raw = self.partition or {}
        out = []
        for f in partition_type.fields:
            b = raw.get(f.field_id)
            out.append(None if b is None else values.from_bytes(
                f.field_type, b, field=f"content_stats.partition.{f.name}"))
        return tuple(out)

    def to_avro_record(self) -> dict[str, Any]:
        def pairs(m: Mapping[int, Any] | None) -> list[dict[str, Any]] | None:
            return None if m is None else [{"key": k, "value": v} for k, v in m.items()]

        return {
            "column_sizes": pairs(self.column_sizes), "value_counts": pairs(self.value_counts),
            "null_value_counts": pairs(self.null_value_counts),
            "nan_value_counts": pairs(self.nan_value_counts),
            "lower_bounds": pairs(self.lower_bounds), "upper_bounds": pairs(self.upper_bounds),
            "partition": pairs(self.partition),
            "partitions": None if self.partitions is None
            else [s.to_avro_record() for s in self.partitions],
        }


def _as_dict(m: Mapping[int, Any] | None) -> dict[int, Any] | None:
    return None if m is None else dict(m)


@safe_repr
@dataclass(frozen=True)
class ManifestStats:
    """``manifest_stats`` (field 521): a leaf manifest's entry and row counts by status and the
    lowest data sequence number of its live entries (the v3 manifest-list fields, same ids)."""

    added_files_count: int
    existing_files_count: int
    deleted_files_count: int
    added_rows_count: int
    existing_rows_count: int
    deleted_rows_count: int
    min_sequence_number: int

    def to_avro_record(self) -> dict[str, Any]:
        return {
            "added_files_count": self.added_files_count,
            "existing_files_count": self.existing_files_count,
            "deleted_files_count": self.deleted_files_count,
            "added_rows_count": self.added_rows_count,
            "existing_rows_count": self.existing_rows_count,
            "deleted_rows_count": self.deleted_rows_count,
            "min_sequence_number": self.min_sequence_number,
        }

    @property
    def entries(self) -> int:
        """Entries of the manifest (all statuses)."""
        return self.added_files_count + self.existing_files_count + self.deleted_files_count


# --------------------------------------------------------------------------- entry


def _bad(message: str, where: str, name: str, value: Any) -> InvalidMetadata:
    return InvalidMetadata(message, field=f"{where}.{name}" if where else name, value=value)


@safe_repr
@dataclass(frozen=True, kw_only=True)
class ContentEntry:
    """One record of a v4 manifest (proposal: "V4 content entry structure"), every field with
    its id: content_type 134, location 100, file_format 101, version_info 5,
    deletion_vector 147, partition_spec_id 148, sort_order_id 140, record_count 103,
    file_size_in_bytes 104, content_stats 149, manifest_stats 521, referenced_file 143,
    key_metadata 131, split_offsets 132, equality_ids 135, first_row_id 142.

    Construction checks the per-``content_type`` rules (:meth:`check`) and raises
    :class:`~icenb.errors.InvalidMetadata` naming the field and value.
    """

    content_type: ContentType
    location: str
    file_format: FileFormat
    partition_spec_id: int
    record_count: int
    version_info: VersionInfo = field(default_factory=VersionInfo)
    deletion_vector: DeletionVectorRef | None = None
    sort_order_id: int | None = None
    file_size_in_bytes: int | None = None
    content_stats: ContentStats | None = None
    manifest_stats: ManifestStats | None = None
    referenced_file: str | None = None
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    first_row_id: int | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "content_type", ContentType(self.content_type))
        except ValueError:
            raise InvalidMetadata("content_type must be 0 to 5", field="content_type",
                                  value=self.content_type) from None
        object.__setattr__(self, "file_format",
                           FileFormat.parse(self.file_format, field="file_format"))
        for name in ("split_offsets", "equality_ids"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, tuple):
                object.__setattr__(self, name, tuple(v))
        self.check()

    # ---- accessors

    @property
    def status(self) -> EntryStatus:
        """``version_info.status``."""
        return self.version_info.status

    @property
    def is_live(self) -> bool:
        """Not DELETED (DELETED entries are not used in scans)."""
        return self.version_info.status != EntryStatus.DELETED

    def with_status(self, status: EntryStatus, snapshot_id: int | None = None) -> ContentEntry:
        """The entry carried into a new manifest with another status (e.g. EXISTING), keeping
        its resolved sequence numbers (``snapshot_id`` replaces the entry's when given)."""
        vi = replace(self.version_info, status=EntryStatus(status))
        if snapshot_id is not None:
            vi = replace(vi, snapshot_id=snapshot_id)
        return replace(self, version_info=vi)

    # ---- rules

    def check(self, where: str = "") -> None:
        """The proposal's per-type rules (field table): which fields each ``content_type``
        requires or forbids. Raises InvalidMetadata naming ``where``.field and the value."""
        t = self.content_type
        if not isinstance(self.location, str) or not self.location:
            raise _bad("location is required", where, "location", self.location)
        if type(self.partition_spec_id) is not int or self.partition_spec_id < 0:
            raise _bad("partition_spec_id is required (an int >= 0)", where,
                       "partition_spec_id", self.partition_spec_id)
        if type(self.record_count) is not int or self.record_count < 0:
            raise _bad("record_count must be an int >= 0", where, "record_count",
                       self.record_count)
        # "Must be defined if location is defined": location is required, so always.
        if type(self.file_size_in_bytes) is not int or self.file_size_in_bytes < 0:
            raise _bad("file_size_in_bytes must be defined (location is)", where,
                       "file_size_in_bytes", self.file_size_in_bytes)
        self._check_deletion_vector(where)
        if self.sort_order_id is not None and t != ContentType.DATA:
            raise _bad("sort_order_id can only be set for data files (content_type 0)", where,
                       "sort_order_id", self.sort_order_id)
        if t.is_manifest:
            if self.manifest_stats is None:
                raise _bad("manifest_stats must be set for data and delete manifests", where,
                           "manifest_stats", None)
            if self.file_format != FileFormat.AVRO:
                raise _bad("v4 leaf manifests are Avro files", where, "file_format",
                           self.file_format.value)
            vi = self.version_info
            if (vi.sequence_number is not None and vi.file_sequence_number is not None
                    and vi.sequence_number != vi.file_sequence_number):
                raise _bad("a manifest entry's sequence_number must equal its "
                           "file_sequence_number", where, "version_info.sequence_number",
                           vi.sequence_number)
        elif self.manifest_stats is not None:
            raise _bad("manifest_stats must be null unless content_type is 3 or 4", where,
                       "manifest_stats", self.manifest_stats)
        if t in (ContentType.POSITION_DELETE, ContentType.MANIFEST_DV):
            self._check_referenced_file(where)
        elif t != ContentType.DELETE_MANIFEST and self.referenced_file is not None:
            raise _bad("referenced_file is only for DVs (1, 5) and affiliated delete manifests "
                       "(4)", where, "referenced_file", self.referenced_file)
        if t == ContentType.EQUALITY_DELETE:
            if not self.equality_ids:
                raise _bad("equality deletes need equality_ids", where, "equality_ids",
                           self.equality_ids)
        elif self.equality_ids is not None:
            raise _bad("equality_ids must be null unless content_type is 2", where,
                       "equality_ids", self.equality_ids)
        if self.first_row_id is not None:
            if t not in (ContentType.DATA, ContentType.DATA_MANIFEST):
                raise _bad("first_row_id is only for data files (0) and data manifests (3)",
                           where, "first_row_id", self.first_row_id)
            if type(self.first_row_id) is not int or self.first_row_id < 0:
                raise _bad("first_row_id must be an int >= 0", where, "first_row_id",
                           self.first_row_id)
        if self.split_offsets is not None:
            if t not in (ContentType.DATA, ContentType.EQUALITY_DELETE):
                raise _bad("split_offsets are for data and equality delete files", where,
                           "split_offsets", self.split_offsets)
            if list(self.split_offsets) != sorted(self.split_offsets):
                raise _bad("split_offsets must be sorted ascending", where, "split_offsets",
                           self.split_offsets)
        if t == ContentType.MANIFEST_DV and self.content_stats is not None:
            raise _bad("manifest DVs carry no content_stats", where, "content_stats",
                       self.content_stats)

    def _check_referenced_file(self, where: str) -> None:
        if not self.referenced_file:
            raise _bad("a deletion vector needs referenced_file (the data file or leaf "
                       "manifest it applies to)", where, "referenced_file",
                       self.referenced_file)

    def _check_deletion_vector(self, where: str) -> None:
        t = self.content_type
        dv = self.deletion_vector
        if not t.is_deletion_vector:
            if dv is not None:
                raise _bad("deletion_vector must be null unless content_type is 1 or 5", where,
                           "deletion_vector", dv)
            return
        if dv is None:
            raise _bad("deletion_vector must be defined for content_type 1 and 5", where,
                       "deletion_vector", None)
        if self.record_count < 1:
            raise _bad("a deletion vector's record_count (its cardinality) must be >= 1",
                       where, "record_count", self.record_count)
        if self.file_format != FileFormat.PUFFIN:
            raise _bad("deletion vectors are deletion-vector-v1 (Puffin) blobs", where,
                       "file_format", self.file_format.value)
        if dv.size_in_bytes is not None and dv.offset is None:
            raise _bad("deletion_vector.size_in_bytes without offset", where,
                       "deletion_vector.offset", None)
        if dv.offset is not None:
            if dv.size_in_bytes is None:
                raise _bad("deletion_vector.size_in_bytes is required if offset is present",
                           where, "deletion_vector.size_in_bytes", None)
            if dv.offset < 0 or dv.size_in_bytes < 1:
                raise _bad("deletion_vector offset must be >= 0 and size_in_bytes >= 1", where,
                           "deletion_vector", (dv.offset, dv.size_in_bytes))
        if dv.inline_content is not None:
            if t == ContentType.POSITION_DELETE:
                raise _bad("data DVs are not inlined (they point to a Puffin blob)", where,
                           "deletion_vector.inline_content", len(dv.inline_content))
            if dv.offset is not None:
                raise _bad("a deletion vector is either inline or in a Puffin file, not both",
                           where, "deletion_vector.offset", dv.offset)
        elif dv.offset is None:
            raise _bad("a deletion vector needs inline_content or offset and size_in_bytes",
                       where, "deletion_vector", dv)

    # ---- Avro

    def to_avro_record(self) -> dict[str, Any]:
        """The Avro record (field names of :data:`CONTENT_ENTRY_TYPE`)."""
        return {
            "content_type": int(self.content_type),
            "location": self.location,
            "file_format": self.file_format.name,
            "version_info": self.version_info.to_avro_record(),
            "deletion_vector": None if self.deletion_vector is None
            else self.deletion_vector.to_avro_record(),
            "partition_spec_id": self.partition_spec_id,
            "sort_order_id": self.sort_order_id,
            "record_count": self.record_count,
            "file_size_in_bytes": self.file_size_in_bytes,
            "content_stats": None if self.content_stats is None
            else self.content_stats.to_avro_record(),
            "manifest_stats": None if self.manifest_stats is None
            else self.manifest_stats.to_avro_record(),
            "referenced_file": self.referenced_file,
            "key_metadata": self.key_metadata,
            "split_offsets": None if self.split_offsets is None else list(self.split_offsets),
            "equality_ids": None if self.equality_ids is None else list(self.equality_ids),
            "first_row_id": self.first_row_id,
        }

    @classmethod
    def from_avro_record(cls, record: Mapping[str, Any], *, where: str = "") -> ContentEntry:
        """Read a decoded record (dicts, or Arrow's ``to_pylist`` with (key, value) pairs for
        maps). A null ``version_info`` reads as ADDED with everything inherited."""
        try:
            vi = record.get("version_info")
            dv = record.get("deletion_vector")
            ms = record.get("manifest_stats")
            cs = record.get("content_stats")
            return cls(
                content_type=record["content_type"],
                location=record["location"],
                file_format=FileFormat.parse(record["file_format"],
                                             field=_path(where, "file_format")),
                version_info=VersionInfo() if vi is None else VersionInfo(
                    vi["status"], vi.get("snapshot_id"), vi.get("sequence_number"),
                    vi.get("file_sequence_number")),
                deletion_vector=None if dv is None else DeletionVectorRef(
                    dv.get("offset"), dv.get("size_in_bytes"), _plain(dv.get("inline_content"))),
                partition_spec_id=record["partition_spec_id"],
                sort_order_id=record.get("sort_order_id"),
                record_count=record["record_count"],
                file_size_in_bytes=record.get("file_size_in_bytes"),
                content_stats=None if cs is None else _stats_from_avro(cs),
                manifest_stats=None if ms is None else ManifestStats(**{
                    k: ms[k] for k in _MANIFEST_STATS_NAMES}),
                referenced_file=record.get("referenced_file"),
                key_metadata=_plain(record.get("key_metadata")),
                split_offsets=_opt_tuple(record.get("split_offsets")),
                equality_ids=_opt_tuple(record.get("equality_ids")),
                first_row_id=record.get("first_row_id"),
            )
        except KeyError as e:
            raise InvalidMetadata("missing required field",
                                  field=_path(where, str(e.args[0]))) from None
        except InvalidMetadata as e:
            if where and e.field is not None and not e.field.startswith(where):
                kwargs: dict[str, Any] = {"value": e.value} if e.has_value else {}
                raise InvalidMetadata(e.message, field=_path(where, e.field),
                                      **kwargs) from None
            raise


_MANIFEST_STATS_NAMES = tuple(f.name for f in MANIFEST_STATS_TYPE.fields)


@safe_repr
@dataclass(frozen=True, kw_only=True)
class LegacyPositionDeletes(ContentEntry):
    """A position delete file that is not a deletion vector (a v2 Parquet, Avro or ORC file)
    as a record of a v1-v3 delete manifest that a v4 root lists after an upgrade (proposal:
    "Upgrade"). It has no v4 form - v4 position deletes are DVs (proposal: "Data Delete
    Vector") - so it is only read: it applies at planning as in v3, a commit that replaces
    it removes it with a manifest DV over its manifest, and it is never written
    (:meth:`to_avro_record` raises). ``referenced_file`` is its one data file when it is
    file-scoped (:attr:`icenb.spec.manifest.DataFile.referenced_file`), else None."""

    def _check_referenced_file(self, where: str) -> None:
        return None  # a partition-scoped file applies to several data files

    def _check_deletion_vector(self, where: str) -> None:
        if self.content_type != ContentType.POSITION_DELETE or self.deletion_vector is not None:
            raise _bad("a legacy position delete file has content_type 1 and no "
                       "deletion_vector", where, "deletion_vector", self.deletion_vector)
        if self.file_format == FileFormat.PUFFIN:
            raise _bad("a Puffin position delete is a deletion vector", where,
                       "file_format", self.file_format.value)

    def to_avro_record(self) -> dict[str, Any]:
        raise UnsupportedFeature("a v2 position delete file has no v4 content entry "
                                 "(proposal: Data Delete Vector); it stays in its v1-v3 "
                                 "manifest", file=self.location, field="deletion_vector")


def _path(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _plain(v: Any) -> Any:
    return bytes(v) if isinstance(v, (bytearray, memoryview)) else v


def _opt_tuple(raw: Any) -> tuple[int, ...] | None:
    return None if raw is None else tuple(int(x) for x in raw)


def _map(raw: Any) -> dict[int, Any] | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        return {int(k): _plain(v) for k, v in raw.items()}
    out: dict[int, Any] = {}
    for item in raw:
        if isinstance(item, tuple):
            out[int(item[0])] = _plain(item[1])
        else:
            out[int(item["key"])] = _plain(item["value"])
    return out


def _stats_from_avro(cs: Mapping[str, Any]) -> ContentStats:
    parts = cs.get("partitions")
    return ContentStats(
        column_sizes=_map(cs.get("column_sizes")), value_counts=_map(cs.get("value_counts")),
        null_value_counts=_map(cs.get("null_value_counts")),
        nan_value_counts=_map(cs.get("nan_value_counts")),
        lower_bounds=_map(cs.get("lower_bounds")), upper_bounds=_map(cs.get("upper_bounds")),
        partition=_map(cs.get("partition")),
        partitions=None if parts is None else tuple(
            FieldSummary(p["contains_null"], p.get("contains_nan"),
                         _plain(p.get("lower_bound")), _plain(p.get("upper_bound")))
            for p in parts),
    )


# --------------------------------------------------------------------------- manifest rules


def check_manifest(kind: ManifestKind, entries: Sequence[ContentEntry], *,
                   file: str | None = None) -> None:
    """The rules one manifest can be checked against on its own (proposal: "Root Manifests",
    "Proposal" (leaves are leaf), "Manifest DVs only in the root", adaptive tree "at most 1
    leaf manifest DV for a given leaf manifest"):

    * a leaf holds only its kind's content: no manifests (the tree has depth <= 2) and no
      manifest DVs; data leaves hold data files, delete leaves DVs and equality deletes;
    * at most one live data DV per data file (table spec, "Deletion Vectors");
    * in a root, a live manifest is listed once, every live manifest DV applies to a live
      data or delete manifest of the same root, and at most one live DV per manifest.

    Raises InvalidMetadata naming ``file``, ``entries[i].field`` and the value.
    """
    kind = ManifestKind(kind)
    allowed = ALLOWED_CONTENT[kind]
    for i, e in enumerate(entries):
        t = e.content_type
        if t in allowed:
            continue
        where = f"entries[{i}].content_type"
        if t.is_manifest:
            raise InvalidMetadata(f"a leaf {kind.value} manifest references a manifest (v4 "
                                  "trees have depth <= 2: only the root lists manifests)",
                                  file=file, field=where, value=f"{t.name} {e.location}")
        if t == ContentType.MANIFEST_DV:
            raise InvalidMetadata("a manifest deletion vector outside the root manifest "
                                  "(manifest DVs are only allowed in the root)", file=file,
                                  field=where, value=f"{t.name} -> {e.referenced_file}")
        raise InvalidMetadata(f"a {kind.value} manifest cannot hold {t.name} entries",
                              file=file, field=where, value=int(t))
    dv_of_file: dict[str, int] = {}
    for i, e in enumerate(entries):
        if e.is_live and e.content_type == ContentType.POSITION_DELETE:
            ref = e.referenced_file or ""
            if ref in dv_of_file:  # table spec, "Deletion Vectors": one DV per data file
                raise InvalidMetadata(f"a second live deletion vector for one data file (also "
                                      f"entries[{dv_of_file[ref]}])", file=file,
                                      field=f"entries[{i}].referenced_file", value=ref)
            dv_of_file[ref] = i
    if kind != ManifestKind.ROOT:
        return
    manifests: dict[str, int] = {}
    for i, e in enumerate(entries):
        if e.is_live and e.content_type.is_manifest:
            if e.location in manifests:
                first = manifests[e.location]
                raise InvalidMetadata(f"manifest listed twice (also entries[{first}])",
                                      file=file, field=f"entries[{i}].location",
                                      value=e.location)
            manifests[e.location] = i
    dv_for: dict[str, int] = {}
    for i, e in enumerate(entries):
        if not e.is_live or e.content_type != ContentType.MANIFEST_DV:
            continue
        target = e.referenced_file or ""
        if target not in manifests:
            raise InvalidMetadata("manifest DV applies to no live manifest of this root",
                                  file=file, field=f"entries[{i}].referenced_file", value=target)
        if target in dv_for:
            raise InvalidMetadata(f"a second live manifest DV for one manifest (also "
                                  f"entries[{dv_for[target]}])", file=file,
                                  field=f"entries[{i}].referenced_file", value=target)
        dv_for[target] = i
        m = entries[manifests[target]]
        if m.partition_spec_id != e.partition_spec_id:
            raise InvalidMetadata("a manifest DV's partition_spec_id must be its manifest's",
                                  file=file, field=f"entries[{i}].partition_spec_id",
                                  value=e.partition_spec_id)


def check_leaf(root_entry: ContentEntry, kind: ManifestKind, leaf: Sequence[ContentEntry], *,
               deleted_positions: Sequence[int] = (), file: str | None = None) -> None:
    """Rules of one root entry (type 3 or 4) and the leaf it points to: the leaf's kind
    matches, it holds only its kind's content (:func:`check_manifest`), the entry's
    ``record_count`` is the leaf's number of records and its ``manifest_stats`` are the
    leaf's counts (aggregated stats of its children), and manifest-DV positions (ordinals)
    fall inside the leaf. ``file`` names the leaf."""
    expected = manifest_kind_for(root_entry.content_type)
    if ManifestKind(kind) != expected:
        raise InvalidMetadata(f"the root lists this file as a {expected.value} manifest but "
                              "its header says otherwise", file=file, field=CONTENT_KEY,
                              value=ManifestKind(kind).value)
    check_manifest(kind, leaf, file=file)
    if root_entry.record_count != len(leaf):
        raise InvalidMetadata(f"the root entry's record_count disagrees with the leaf's "
                              f"{len(leaf)} entries", file=file, field="record_count",
                              value=root_entry.record_count)
    ms = root_entry.manifest_stats
    if ms is not None:
        actual = manifest_counts(leaf)
        for name in ("added_files_count", "existing_files_count", "deleted_files_count",
                     "added_rows_count", "existing_rows_count", "deleted_rows_count"):
            if getattr(ms, name) != actual[name]:
                raise InvalidMetadata(f"the root entry's manifest_stats disagree with the "
                                      f"leaf ({actual[name]})", file=file,
                                      field=f"manifest_stats.{name}", value=getattr(ms, name))
    for p in deleted_positions:
        if not 0 <= p < len(leaf):
            raise InvalidMetadata(f"manifest DV deletes ordinal {p}, the leaf has {len(leaf)} "
                                  "rows", file=file, field="deletion_vector", value=p)


def manifest_counts(entries: Sequence[ContentEntry]) -> dict[str, int]:
    """Entry and row counts by status (the ``manifest_stats`` counts of a leaf)."""
    out = dict.fromkeys(("added_files_count", "existing_files_count", "deleted_files_count",
                         "added_rows_count", "existing_rows_count", "deleted_rows_count"), 0)
    names = {EntryStatus.ADDED: "added", EntryStatus.EXISTING: "existing",
             EntryStatus.DELETED: "deleted"}
    for e in entries:
        n = names[e.status]
        out[f"{n}_files_count"] += 1
        out[f"{n}_rows_count"] += e.record_count
    return out


def snapshot_root_manifest(snapshot: Mapping[str, Any], *, file: str | None = None) -> str:
    """The root manifest location of a v4 snapshot's JSON object: exactly one root per
    snapshot (proposal: "Every snapshot has exactly one Root Manifest"), named by
    :data:`ROOT_MANIFEST_KEY`, and no manifest list (docs/v4-layout.md#root-pointer)."""
    sid = snapshot.get("snapshot-id")
    where = f"snapshots[{sid}]"
    root = snapshot.get(ROOT_MANIFEST_KEY)
    for old in ("manifest-list", "manifests"):
        if snapshot.get(old) is not None:
            raise InvalidMetadata(f"a v4 snapshot has one root manifest and no {old}",
                                  file=file, field=f"{where}.{old}", value=snapshot[old])
    if not isinstance(root, str) or not root:
        raise InvalidMetadata("a v4 snapshot needs exactly one root manifest", file=file,
                              field=f"{where}.{ROOT_MANIFEST_KEY}", value=root)
    return root


# --------------------------------------------------------------------------- inheritance


@safe_repr
@dataclass(frozen=True)
class InheritFrom:
    """What null ``version_info`` fields and ``first_row_id`` inherit: for a root, its
    snapshot's id and sequence number; for a leaf, its root entry's (resolved) values and
    ``first_row_id`` (docs/v4-layout.md, "Sequence-number inheritance")."""

    snapshot_id: int
    sequence_number: int
    first_row_id: int | None = None

    @classmethod
    def from_root_entry(cls, entry: ContentEntry, *, file: str | None = None) -> InheritFrom:
        """The values a leaf inherits from its (already inherited) root entry."""
        vi = entry.version_info
        if vi.snapshot_id is None or vi.sequence_number is None:
            raise InvalidMetadata("a root entry must have resolved snapshot id and sequence "
                                  "number before its leaf inherits them", file=file,
                                  field="version_info", value=vi)
        return cls(vi.snapshot_id, vi.sequence_number, entry.first_row_id)


def inherit(entries: Sequence[ContentEntry], source: InheritFrom, *,
            file: str | None = None) -> list[ContentEntry]:
    """Entries with inherited values filled in (proposal: version_info "Inherited when null";
    sequence numbers only for ADDED; First Row ID Inheritance for ADDED data files).

    A null ``snapshot_id`` takes the source's; ADDED entries take its sequence number for
    null sequence numbers; EXISTING and DELETED entries must carry both sequence numbers.
    Data files (type 0) with a null ``first_row_id`` get consecutive ids from
    ``source.first_row_id`` in entry order (only when it is set).
    """
    out: list[ContentEntry] = []
    next_row_id = source.first_row_id
    for i, e in enumerate(entries):
        vi = e.version_info
        snap = source.snapshot_id if vi.snapshot_id is None else vi.snapshot_id
        seq, fseq = vi.sequence_number, vi.file_sequence_number
        if vi.status == EntryStatus.ADDED:
            seq = source.sequence_number if seq is None else seq
            fseq = source.sequence_number if fseq is None else fseq
        elif seq is None or fseq is None:
            raise InvalidMetadata(f"{vi.status.name} entries must carry explicit sequence "
                                  "numbers (only ADDED entries inherit them)", file=file,
                                  field=f"entries[{i}].version_info."
                                  f"{'sequence_number' if seq is None else 'file_sequence_number'}",
                                  value=None)
        first_row_id = e.first_row_id
        if (e.content_type == ContentType.DATA and first_row_id is None
                and next_row_id is not None):
            first_row_id = next_row_id
            next_row_id += e.record_count
        new_vi = VersionInfo(vi.status, snap, seq, fseq)
        if new_vi == vi and first_row_id == e.first_row_id:
            out.append(e)
        else:
            out.append(replace(e, version_info=new_vi, first_row_id=first_row_id))
    return out


def manifest_file_of(e: ContentEntry) -> ManifestFile:
    """The v3 manifest-list entry a root entry over a v1-v3 manifest stands for, so the v3
    reader applies its inheritance (snapshot id, sequence number, first row id)."""
    ms = e.manifest_stats
    vi = e.version_info
    if ms is None or vi.snapshot_id is None or vi.sequence_number is None:
        raise InvalidMetadata("a root entry over a v3 manifest needs manifest_stats, "
                              "snapshot id and sequence number", field="manifest_stats",
                              value=e.location)
    cs = e.content_stats
    return ManifestFile(
        manifest_path=e.location, manifest_length=e.file_size_in_bytes or 0,
        partition_spec_id=e.partition_spec_id,
        content=ManifestContent.DATA if e.content_type == ContentType.DATA_MANIFEST
        else ManifestContent.DELETES,
        sequence_number=vi.sequence_number, min_sequence_number=ms.min_sequence_number,
        added_snapshot_id=vi.snapshot_id, added_files_count=ms.added_files_count,
        existing_files_count=ms.existing_files_count, deleted_files_count=ms.deleted_files_count,
        added_rows_count=ms.added_rows_count, existing_rows_count=ms.existing_rows_count,
        deleted_rows_count=ms.deleted_rows_count,
        partitions=None if cs is None else cs.partitions, key_metadata=e.key_metadata,
        first_row_id=e.first_row_id)
