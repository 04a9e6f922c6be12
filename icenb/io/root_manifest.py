"""Write and read v4 root, data and delete manifests (EXPERIMENTAL, unadopted format).

Source: the "Iceberg Single File Commits" proposal (``shared/specs/v4-single-file-commits.txt``);
the choices it leaves open are in ``docs/v4-layout.md``. A v4 manifest is an Avro object
container of :data:`~icenb.spec.content_entry.CONTENT_ENTRY_TYPE` records (the proposal's field
ids) whose key-value metadata holds ``format-version`` = ``4`` and ``content`` = ``root``,
``data`` or ``delete`` (plus Avro's ``avro.schema`` / ``avro.codec``). Encoding reuses the
v1-v3 writer's container code and codecs (``icenb.io.manifest_writer``); decoding reuses the
columnar Avro reader (``icenb.io.avro``), so a manifest can also be read as an Arrow table.

* :func:`write_leaf_manifest` writes a data or delete manifest and returns the root entry
  (``DATA_MANIFEST`` / ``DELETE_MANIFEST``, ADDED) with ``manifest_stats`` and the children's
  aggregated ``content_stats``.
* :func:`write_root_manifest` writes a snapshot's root: it fills the commit's sequence number
  into new manifest entries' ``min_sequence_number`` and, given the table's next row id,
  assigns ``first_row_id`` to ADDED data files and data manifests that lack one.
* :func:`read_root_manifest` / :func:`read_leaf_manifest` read, check the structural rules
  (:func:`~icenb.spec.content_entry.check_manifest`, :func:`~icenb.spec.content_entry.check_leaf`)
  and apply inheritance; :func:`load_manifest_dv` reads a manifest DV inline or from Puffin.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import pyarrow as pa

from icenb.errors import (
    CorruptFile,
    IcebergError,
    InvalidMetadata,
    UnsupportedVersion,
    ValidationError,
)
from icenb.io.avro import avro_file_metadata, read_avro, read_avro_records, read_avro_tables
from icenb.io.file_io import FileIO
from icenb.io.manifest_writer import (
    AvroCodec,
    avro_codec,
    avro_container,
    avro_sync_marker,
    partition_summaries,
)
from icenb.io.puffin import (
    CREATED_BY,
    build_puffin,
    deletion_vector_blob,
    read_deletion_vector,
)
from icenb.reprs import safe_repr
from icenb.spec import values
from icenb.spec.content_entry import (
    CONTENT_ENTRY_RECORD,
    CONTENT_ENTRY_TYPE,
    CONTENT_KEY,
    FORMAT_VERSION,
    FORMAT_VERSION_KEY,
    ContentEntry,
    ContentStats,
    ContentType,
    DeletionVectorRef,
    InheritFrom,
    ManifestKind,
    ManifestStats,
    VersionInfo,
    check_leaf,
    check_manifest,
    inherit,
    manifest_counts,
    manifest_kind_for,
)
from icenb.spec.deletion_vector import (
    DeletionVector,
    PositionsLike,
    deserialize_deletion_vector,
    serialize_deletion_vector,
)
from icenb.spec.manifest import EntryStatus, FileFormat, avro_schema
from icenb.spec.properties import V4_MANIFEST_DV_STORAGE
from icenb.spec.schema import Schema
from icenb.spec.types import StructType

__all__ = [
    "MANIFEST_DV_INLINE",
    "MANIFEST_DV_PUFFIN",
    "MANIFEST_DV_STORAGE",
    "UNASSIGNED_SEQUENCE_NUMBER",
    "ContentManifest",
    "LeafManifest",
    "LegacyLeafReader",
    "RootManifestInfo",
    "aggregate_content_stats",
    "clear_decoded_manifests",
    "content_manifest_header",
    "decode_content_manifest",
    "decode_content_manifest_table",
    "decode_content_manifest_tables",
    "encode_content_manifest",
    "inline_manifest_dv",
    "leaf_manifest_entry",
    "load_manifest_dv",
    "manifest_dv_storage",
    "read_content_manifest",
    "read_leaf_manifest",
    "read_leaves",
    "read_root_manifest",
    "write_leaf_manifest",
    "write_puffin_manifest_dv",
    "write_puffin_manifest_dvs",
    "write_root_manifest",
]

#: ``manifest_stats.min_sequence_number`` of a manifest written for a commit not yet made;
#: :func:`write_root_manifest` replaces it with the commit's sequence number.
UNASSIGNED_SEQUENCE_NUMBER = -1


@lru_cache(maxsize=1)
def _schema_json() -> str:
    return json.dumps(avro_schema(CONTENT_ENTRY_TYPE, CONTENT_ENTRY_RECORD),
                      separators=(",", ":"), ensure_ascii=False)


def content_manifest_header(kind: ManifestKind, codec: AvroCodec | None = None
                            ) -> dict[str, str]:
    """A v4 manifest's key-value metadata (proposal: "V4 Manifest Key Value Metadata": only
    ``format-version`` and ``content``; schema and spec are not written) and Avro's keys."""
    return {
        "avro.schema": _schema_json(),
        "avro.codec": (codec or avro_codec()).name,
        FORMAT_VERSION_KEY: str(FORMAT_VERSION),
        CONTENT_KEY: ManifestKind(kind).value,
    }


def encode_content_manifest(path: str, kind: ManifestKind, entries: Sequence[ContentEntry], *,
                            properties: Mapping[str, str] | None = None,
                            sync_marker: bytes | None = None) -> bytes:
    """The bytes of a v4 manifest of ``entries`` (checked with :func:`check_manifest`;
    ``properties`` are the table's, choosing the Avro codec as for v1-v3 manifests)."""
    kind = ManifestKind(kind)
    for i, e in enumerate(entries):
        if not isinstance(e, ContentEntry):
            raise InvalidMetadata("entries must be ContentEntry objects", file=path,
                                  field=f"entries[{i}]", value=type(e).__name__)
    check_manifest(kind, entries, file=path)
    codec = avro_codec(properties)
    header = content_manifest_header(kind, codec)
    try:
        return avro_container(header, header["avro.schema"], (e.to_avro_record() for e in entries),
                          codec, avro_sync_marker(sync_marker), path)
    except IcebergError as e:
        raise e.with_file(path) from None


# --------------------------------------------------------------------------- stats


def _sum_maps(maps: list[Mapping[int, int] | None]) -> dict[int, int] | None:
    """Per column, the sum over children; a column some child lacks is dropped (unknown)."""
    if not maps or any(m is None for m in maps):
        return None
    keys = set.intersection(*(set(m) for m in maps if m is not None))
    return {k: sum(m[k] for m in maps if m is not None) for k in sorted(keys)}


def _bounds(children: Sequence[ContentStats], schema: Schema, lower: bool
            ) -> dict[int, bytes] | None:
    """Per column, the lowest lower (highest upper) bound over children. A column keeps a
    bound only if every child has one or holds only nulls in it, so pruning stays safe."""
    pick = min if lower else max
    cols: set[int] = set()
    for c in children:
        b = c.lower_bounds if lower else c.upper_bounds
        cols.update(b or ())
    out: dict[int, bytes] = {}
    for col in sorted(cols):
        f = schema.field_by_id(col)
        if f is None:
            continue
        found: list[tuple[Any, bytes]] = []
        for c in children:
            b = (c.lower_bounds if lower else c.upper_bounds) or {}
            if col in b:
                v = values.from_bytes(f.field_type, b[col], field=f"bounds.{col}")
                found.append((values.sort_key(f.field_type, v), b[col]))
                continue
            nulls = (c.null_value_counts or {}).get(col)
            total = (c.value_counts or {}).get(col)
            if nulls is None or total is None or nulls != total:
                break
        else:
            if found:
                out[col] = pick(found, key=lambda kv: kv[0])[1]
    return out or None


def aggregate_content_stats(children: Sequence[ContentEntry], *, schema: Schema | None = None,
                            partition_type: StructType | None = None) -> ContentStats:
    """The ``content_stats`` of a manifest entry: its live children's column metrics summed,
    bounds widened (with ``schema``: bounds compare as typed values), and with
    ``partition_type`` the v3 partition field summaries of all children (proposal: "A manifest
    file entry gets aggregated stats of its data file contents")."""
    live = [e.content_stats or ContentStats() for e in children if e.is_live]
    summaries = None
    if partition_type is not None:
        summaries = partition_summaries(partition_type, (
            (e.content_stats or ContentStats()).partition_tuple(partition_type)
            for e in children))
    return ContentStats(
        column_sizes=_sum_maps([c.column_sizes for c in live]),
        value_counts=_sum_maps([c.value_counts for c in live]),
        null_value_counts=_sum_maps([c.null_value_counts for c in live]),
        nan_value_counts=_sum_maps([c.nan_value_counts for c in live]),
        lower_bounds=None if schema is None or not live else _bounds(live, schema, True),
        upper_bounds=None if schema is None or not live else _bounds(live, schema, False),
        partitions=summaries,
    )


def leaf_manifest_entry(location: str, length: int, kind: ManifestKind,
                        entries: Sequence[ContentEntry], *, partition_spec_id: int,
                        schema: Schema | None = None, partition_type: StructType | None = None,
                        referenced_file: str | None = None) -> ContentEntry:
    """The ADDED root entry of a leaf manifest of ``entries``: ``record_count`` its number of
    records, ``manifest_stats`` its counts and the lowest explicit data sequence number of its
    live entries (else :data:`UNASSIGNED_SEQUENCE_NUMBER`, filled at root write), and
    aggregated ``content_stats``. Sequence numbers are inherited from the commit."""
    kind = ManifestKind(kind)
    if kind == ManifestKind.ROOT:
        raise InvalidMetadata("a root manifest has no entry in another manifest", file=location,
                              field=CONTENT_KEY, value=kind.value)
    seqs = [e.version_info.sequence_number for e in entries
            if e.is_live and e.version_info.sequence_number is not None]
    counts = manifest_counts(entries)
    stats = ManifestStats(**counts, min_sequence_number=min(seqs) if seqs
                          else UNASSIGNED_SEQUENCE_NUMBER)
    return ContentEntry(
        content_type=ContentType.DATA_MANIFEST if kind == ManifestKind.DATA
        else ContentType.DELETE_MANIFEST,
        location=location, file_format=FileFormat.AVRO, partition_spec_id=partition_spec_id,
        record_count=len(entries), file_size_in_bytes=length,
        version_info=VersionInfo(EntryStatus.ADDED),
        content_stats=aggregate_content_stats(entries, schema=schema,
                                              partition_type=partition_type),
        manifest_stats=stats, referenced_file=referenced_file)


def write_leaf_manifest(io: FileIO, location: str, kind: ManifestKind,
                        entries: Sequence[ContentEntry], *, partition_spec_id: int,
                        schema: Schema | None = None, partition_type: StructType | None = None,
                        referenced_file: str | None = None,
                        properties: Mapping[str, str] | None = None) -> ContentEntry:
    """Write a data or delete manifest at ``location`` (a new file) and return its root entry
    (:func:`leaf_manifest_entry`). Every entry must be of ``partition_spec_id``."""
    kind = ManifestKind(kind)
    if kind == ManifestKind.ROOT:
        raise InvalidMetadata("use write_root_manifest for a root manifest", file=location,
                              field=CONTENT_KEY, value=kind.value)
    for i, e in enumerate(entries):
        if e.partition_spec_id != partition_spec_id:
            raise InvalidMetadata(f"a leaf manifest holds files of one partition spec "
                                  f"({partition_spec_id})", file=location,
                                  field=f"entries[{i}].partition_spec_id",
                                  value=e.partition_spec_id)
    data = encode_content_manifest(location, kind, entries, properties=properties)
    io.new_output(location).create(data)
    return leaf_manifest_entry(location, len(data), kind, entries,
                               partition_spec_id=partition_spec_id, schema=schema,
                               partition_type=partition_type, referenced_file=referenced_file)


@safe_repr
@dataclass(frozen=True)
class RootManifestInfo:
    """A written root manifest: location, length, entries as written, and the snapshot's
    row-id range ``[first_row_id, next_row_id)`` (None when row ids are not assigned)."""

    location: str
    length: int
    entries: tuple[ContentEntry, ...]
    first_row_id: int | None = None
    next_row_id: int | None = None

    @property
    def added_rows(self) -> int | None:
        """Row ids assigned by this root."""
        if self.first_row_id is None or self.next_row_id is None:
            return None
        return self.next_row_id - self.first_row_id


def _assign_root(entries: Sequence[ContentEntry], sequence_number: int,
                 first_row_id: int | None, upgrade: bool
                 ) -> tuple[list[ContentEntry], int | None]:
    """Unassigned minimum sequence numbers, and first row ids: to ADDED data files and data
    manifests, then on the first v4 commit after an ``upgrade`` (as v3's manifest list, which
    lists new manifests first) to the carried data manifests written before v3 (spec: "Row
    Lineage")."""
    out: list[ContentEntry] = []
    for e in entries:
        ms = e.manifest_stats
        if ms is not None and ms.min_sequence_number == UNASSIGNED_SEQUENCE_NUMBER:
            e = replace(e, manifest_stats=replace(ms, min_sequence_number=sequence_number))
        out.append(e)
    next_row_id = first_row_id
    for added in (True, False) if upgrade else (True,):
        for i, e in enumerate(out):
            if (next_row_id is None or e.first_row_id is not None or not e.is_live
                    or (e.status == EntryStatus.ADDED) != added):
                continue
            ms = e.manifest_stats
            if e.content_type == ContentType.DATA and added:
                out[i] = replace(e, first_row_id=next_row_id)
                next_row_id += e.record_count
            elif e.content_type == ContentType.DATA_MANIFEST and ms is not None:
                out[i] = replace(e, first_row_id=next_row_id)
                next_row_id += ms.added_rows_count + ms.existing_rows_count
    return out, next_row_id


def write_root_manifest(io: FileIO, location: str, entries: Sequence[ContentEntry], *,
                        sequence_number: int, first_row_id: int | None = None,
                        properties: Mapping[str, str] | None = None,
                        sync_marker: bytes | None = None, upgrade: bool = False
                        ) -> RootManifestInfo:
    """Write a snapshot's root manifest at ``location`` (a new file). ``sequence_number`` is
    the commit's; ``first_row_id`` the table's next row id (ADDED data files and data
    manifests without one get consecutive ranges, manifests reserving added + existing rows;
    with ``upgrade``, the first commit over a manifest list, also the carried data manifests
    that have none)."""
    if sequence_number < 0:
        raise InvalidMetadata("the commit's sequence number must not be negative",
                              file=location, field="sequence_number", value=sequence_number)
    written, next_row_id = _assign_root(entries, sequence_number, first_row_id, upgrade)
    data = encode_content_manifest(location, ManifestKind.ROOT, written, properties=properties,
                                   sync_marker=sync_marker)
    io.new_output(location).create(data)
    return RootManifestInfo(location, len(data), tuple(written), first_row_id, next_row_id)


# --------------------------------------------------------------------------- manifest DVs

#: Table property: where a removal writes its new manifest DVs, ``inline`` in the root entry
#: (default) or ``puffin``: one Puffin file per commit attempt holding all its manifest DVs
#: (docs/v4-layout.md#manifest-dvs).
MANIFEST_DV_STORAGE = V4_MANIFEST_DV_STORAGE
MANIFEST_DV_INLINE = "inline"
MANIFEST_DV_PUFFIN = "puffin"


def inline_manifest_dv(target: ContentEntry, positions: DeletionVector | PositionsLike, *,
                       status: EntryStatus = EntryStatus.ADDED) -> ContentEntry:
    """A manifest DV entry (type 5) deleting the ordinals ``positions`` of the leaf manifest
    ``target`` (a root entry of type 3 or 4), its deletion-vector-v1 blob inline
    (docs/v4-layout.md: ``location`` = ``referenced_file`` = the leaf manifest)."""
    _check_target(target)
    dv = positions if isinstance(positions, DeletionVector) else (
        DeletionVector.from_positions(positions))
    _check_ordinals(dv, target)
    blob = serialize_deletion_vector(dv)
    return ContentEntry(
        content_type=ContentType.MANIFEST_DV, location=target.location,
        file_format=FileFormat.PUFFIN, partition_spec_id=target.partition_spec_id,
        record_count=dv.cardinality, file_size_in_bytes=len(blob),
        version_info=VersionInfo(status), deletion_vector=DeletionVectorRef(inline_content=blob),
        referenced_file=target.location)


def write_puffin_manifest_dv(io: FileIO, location: str, target: ContentEntry,
                             positions: DeletionVector | PositionsLike) -> ContentEntry:
    """Write the manifest DV for ``target`` as a deletion-vector-v1 blob in a new Puffin file
    at ``location`` and return its ADDED entry (offset/size_in_bytes of the blob)."""
    return write_puffin_manifest_dvs(io, location, [(target, positions)])[0]


def write_puffin_manifest_dvs(
        io: FileIO, location: str,
        dvs: Sequence[tuple[ContentEntry, DeletionVector | PositionsLike]], *,
        created_by: str | None = None) -> list[ContentEntry]:
    """Write the manifest DVs ``(target leaf entry, ordinals)`` of one commit as the
    deletion-vector-v1 blobs of one new Puffin file at ``location`` (blob
    ``referenced-data-file`` = the leaf manifest, docs/v4-layout.md#manifest-dvs); their ADDED
    entries,
    in order, each naming its blob by ``offset``/``size_in_bytes``."""
    if not dvs:
        raise InvalidMetadata("a manifest DV Puffin file holds at least one DV", file=location,
                              field="dvs", value=0)
    checked: list[tuple[ContentEntry, DeletionVector]] = []
    for target, positions in dvs:
        _check_target(target)
        dv = positions if isinstance(positions, DeletionVector) else (
            DeletionVector.from_positions(positions))
        _check_ordinals(dv, target)
        checked.append((target, dv))
    props = {CREATED_BY: created_by} if created_by else None
    puffin = build_puffin([deletion_vector_blob(dv, t.location) for t, dv in checked], props)
    io.new_output(location).create(puffin.data)
    return [ContentEntry(
        content_type=ContentType.MANIFEST_DV, location=location, file_format=FileFormat.PUFFIN,
        partition_spec_id=target.partition_spec_id, record_count=dv.cardinality,
        file_size_in_bytes=len(puffin.data),
        deletion_vector=DeletionVectorRef(offset=blob.offset, size_in_bytes=blob.length),
        referenced_file=target.location)
        for (target, dv), blob in zip(checked, puffin.file_metadata.blobs, strict=True)]


def manifest_dv_storage(properties: Mapping[str, str]) -> str:
    """The table property :data:`MANIFEST_DV_STORAGE`: how removals write manifest DVs,
    ``inline`` (default) or ``puffin`` (docs/v4-layout.md#manifest-dvs); anything else is a
    ValidationError naming the property."""
    raw = properties.get(MANIFEST_DV_STORAGE, MANIFEST_DV_INLINE)
    value = raw.strip().lower()
    if value not in (MANIFEST_DV_INLINE, MANIFEST_DV_PUFFIN):
        raise ValidationError(f"{MANIFEST_DV_STORAGE} must be {MANIFEST_DV_INLINE!r} or "
                              f"{MANIFEST_DV_PUFFIN!r}", field=MANIFEST_DV_STORAGE, value=raw)
    return value


def _check_target(target: ContentEntry) -> None:
    if not target.content_type.is_manifest:
        raise InvalidMetadata("manifest DVs apply to data or delete manifests",
                              field="target.content_type", value=int(target.content_type))


def _check_ordinals(dv: DeletionVector, target: ContentEntry) -> None:
    if dv.cardinality == 0:
        raise InvalidMetadata("a manifest DV deletes at least one ordinal", field="positions",
                              value=0)
    top = int(dv.to_numpy().max())
    if top >= target.record_count:
        raise InvalidMetadata(f"ordinal beyond the manifest's {target.record_count} rows",
                              file=target.location, field="positions", value=top)


def load_manifest_dv(io: FileIO, entry: ContentEntry, *, file: str | None = None,
                     where: str = "") -> DeletionVector:
    """The ordinals a manifest DV (type 5) deletes, inline or from its Puffin file; a blob
    whose cardinality disagrees with the entry's ``record_count`` raises CorruptFile naming
    ``file`` (the root) and the entry's ``record_count``."""
    if entry.content_type != ContentType.MANIFEST_DV or entry.deletion_vector is None:
        raise InvalidMetadata("not a manifest DV entry", file=file,
                              field=f"{where}.content_type" if where else "content_type",
                              value=int(entry.content_type))
    ref = entry.deletion_vector
    field = f"{where}.record_count" if where else "record_count"
    try:
        if ref.inline_content is not None:
            dv = deserialize_deletion_vector(ref.inline_content, file=file)
        else:
            assert ref.offset is not None and ref.size_in_bytes is not None
            dv = read_deletion_vector(io.new_input(entry.location), ref.offset,
                                      ref.size_in_bytes, file=entry.location)
    except CorruptFile as e:
        raise e.with_file(file or entry.location) from None
    if dv.cardinality != entry.record_count:
        raise CorruptFile(f"manifest DV for {entry.referenced_file} holds {dv.cardinality} "
                          "ordinals, its entry's record_count says otherwise",
                          file=file or entry.location, field=field, value=entry.record_count)
    return dv


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class ContentManifest:
    """A decoded v4 manifest: where it is, its kind (header ``content``) and entries in file
    order (the position of an entry is its ordinal for manifest DVs)."""

    location: str
    kind: ManifestKind
    entries: tuple[ContentEntry, ...]
    length: int

    def live_entries(self) -> list[ContentEntry]:
        """Entries not DELETED."""
        return [e for e in self.entries if e.is_live]


def _header_kind(location: str, data: bytes) -> ManifestKind:
    meta = avro_file_metadata(location, data)
    version = meta.get(FORMAT_VERSION_KEY)
    if version is None:
        raise UnsupportedVersion("not a v4 manifest: no format-version in its header",
                                 file=location, field=FORMAT_VERSION_KEY)
    if version != str(FORMAT_VERSION).encode():
        raise UnsupportedVersion("not a v4 manifest", file=location, field=FORMAT_VERSION_KEY,
                                 value=version.decode("utf-8", "replace"))
    raw = meta.get(CONTENT_KEY)
    try:
        return ManifestKind((raw or b"").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InvalidMetadata("a v4 manifest's content must be root, data or delete",
                              file=location, field=CONTENT_KEY, value=raw) from None


def decode_content_manifest_table(location: str, data: bytes, *,
                                  columns: Sequence[str] | None = None
                                  ) -> tuple[ManifestKind, pa.Table]:
    """A v4 manifest's kind and its entries as an Arrow table (columns named as the Avro
    fields, ``version_info`` etc. as structs; for planning), header checked."""
    kind = _header_kind(location, data)
    return kind, read_avro(location, data, columns=columns)


def decode_content_manifest_tables(files: Sequence[tuple[str, bytes]], *,
                                   columns: Sequence[str] | None = None, threads: int = 1
                                   ) -> list[tuple[ManifestKind, pa.Table] | Exception]:
    """Many v4 manifests decoded in one columnar batch (``threads`` as
    :func:`~icenb.io.avro.read_avro_tables`); per file, in order, what
    :func:`decode_content_manifest_table` gives for it alone: its kind and table, or the error
    it raises (returned, not raised, so that a caller can raise it in its own order)."""
    out: list[tuple[ManifestKind, pa.Table] | Exception | None] = [None] * len(files)
    kinds: list[tuple[int, ManifestKind]] = []
    for i, (location, data) in enumerate(files):
        try:
            kinds.append((i, _header_kind(location, data)))
        except Exception as err:  # handed back as this file's outcome
            out[i] = err
    if kinds:
        batch = [files[i] for i, _ in kinds]
        try:
            tables = read_avro_tables(batch, columns=columns, threads=threads)
        except Exception:  # one file spoils the batch: each alone gives its own error
            for i, kind in kinds:
                try:
                    out[i] = (kind, read_avro(files[i][0], files[i][1], columns=columns))
                except Exception as err:
                    out[i] = err
        else:
            for (i, kind), table in zip(kinds, tables, strict=True):
                out[i] = (kind, table)
    return [o for o in out if o is not None]


#: Files of at most this many records are decoded record by record (fastavro): a root of a
#: few dozen entries decodes in ~1 ms instead of ~70 ms through the columnar decoder, whose
#: fixed cost per file dominates; bigger leaves go columnar (polars / compiled), then to dicts.
ROWWISE_MAX_RECORDS = 256

#: Bounds of the process-wide cache of decoded manifests (:func:`decode_content_manifest`):
#: entries held in all (a decoded entry with full column metrics is a few KiB of Python
#: objects) and files.
DECODED_CACHE_MAX_ENTRIES = 20_000
DECODED_CACHE_MAX_FILES = 4_096


class _DecodedCache:
    """LRU of decoded manifests keyed by location *and the file's bytes*: a hit needs the
    very same bytes, so a rewritten or corrupted file is never served stale (manifests are
    immutable; the key costs one hash and, on a hit, one compare of the bytes)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, bytes], ContentManifest] = OrderedDict()
        self._entries = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, bytes]) -> ContentManifest | None:
        with self._lock:
            m = self._items.get(key)
            if m is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return m

    def put(self, key: tuple[str, bytes], m: ContentManifest) -> None:
        n = len(m.entries)
        if n > DECODED_CACHE_MAX_ENTRIES:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._entries -= len(old.entries)
            self._items[key] = m
            self._entries += n
            while self._items and (self._entries > DECODED_CACHE_MAX_ENTRIES
                                   or len(self._items) > DECODED_CACHE_MAX_FILES):
                _, dropped = self._items.popitem(last=False)
                self._entries -= len(dropped.entries)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._entries = 0


_DECODED = _DecodedCache()


def clear_decoded_manifests() -> None:
    """Drop the process-wide cache of decoded v4 manifests (memory; tests)."""
    _DECODED.clear()


def decode_content_manifest(location: str, data: bytes) -> ContentManifest:
    """Decode a v4 manifest's bytes into entries, checking each entry's rules and the
    manifest's (:func:`check_manifest`); errors name ``location``, the entry and field.
    Decoded manifests are cached by location and bytes (immutable files: re-planning and
    inspecting a table do not decode its manifests again)."""
    key = (location, bytes(data))
    hit = _DECODED.get(key)
    if hit is not None:
        return hit
    m = _decode_content_manifest(location, data)
    _DECODED.put(key, m)
    return m


def _decode_content_manifest(location: str, data: bytes) -> ContentManifest:
    kind = _header_kind(location, data)
    records: Sequence[Mapping[str, Any]] | None = read_avro_records(
        location, data, max_records=ROWWISE_MAX_RECORDS)
    if records is None:
        records = read_avro(location, data).to_pylist()
    entries: list[ContentEntry] = []
    for i, rec in enumerate(records):
        try:
            entries.append(ContentEntry.from_avro_record(rec, where=f"entries[{i}]"))
        except IcebergError as e:
            raise e.with_file(location) from None
    check_manifest(kind, entries, file=location)
    return ContentManifest(location, kind, tuple(entries), len(data))


def read_content_manifest(io: FileIO, location: str, *, length: int | None = None
                          ) -> ContentManifest:
    """Read and decode the v4 manifest at ``location`` (``length`` checked when given)."""
    data = io.new_input(location, size=length).read()
    return decode_content_manifest(location, data)


def read_root_manifest(io: FileIO, location: str, *, snapshot_id: int, sequence_number: int
                       ) -> ContentManifest:
    """A snapshot's root manifest (its one root: the header must say ``root``), entries with
    the snapshot's id and sequence number inherited where null."""
    m = read_content_manifest(io, location)
    if m.kind != ManifestKind.ROOT:
        raise InvalidMetadata("a snapshot must point to a root manifest", file=location,
                              field=CONTENT_KEY, value=m.kind.value)
    entries = inherit(m.entries, InheritFrom(snapshot_id, sequence_number), file=location)
    return replace(m, entries=tuple(entries))


@dataclass(frozen=True)
class LeafManifest:
    """A leaf manifest read through its root entry: all entries (inherited values filled),
    the ordinals its manifest DV deletes, and the entries that remain live."""

    manifest: ContentManifest
    root_entry: ContentEntry
    deleted: DeletionVector

    @property
    def entries(self) -> tuple[ContentEntry, ...]:
        """Every entry in file order."""
        return self.manifest.entries

    def live_entries(self) -> list[ContentEntry]:
        """Entries neither DELETED nor removed by the manifest DV."""
        return [e for i, e in enumerate(self.manifest.entries)
                if e.is_live and i not in self.deleted]


#: Reads a v1-v3 manifest a root entry points to (after an upgrade, docs/v4-layout.md#upgrade) as
#: content entries in file order, every inherited value explicit; supplied by the table layer.
LegacyLeafReader = Callable[[ContentEntry], Sequence[ContentEntry]]


def read_leaf_manifest(io: FileIO, root_entry: ContentEntry, *,
                       manifest_dv: ContentEntry | None = None,
                       root_location: str | None = None, where: str = "",
                       legacy: LegacyLeafReader | None = None) -> LeafManifest:
    """Read the leaf manifest a root entry (type 3 or 4, inheritance applied) points to, with
    its manifest DV (a type 5 entry of the same root) applied, checking the pair's rules
    (:func:`check_leaf`: kind, depth <= 2, record_count, manifest_stats, DV ordinals). A leaf
    whose header is not v4 is read by ``legacy`` when given (ordinals = record positions in
    the v1-v3 manifest, docs/v4-layout.md#ordinals), else ``UnsupportedVersion``."""
    if manifest_dv is not None and manifest_dv.referenced_file != root_entry.location:
        raise InvalidMetadata("the manifest DV applies to another manifest", file=root_location,
                              field="referenced_file", value=manifest_dv.referenced_file)
    deleted = DeletionVector() if manifest_dv is None else load_manifest_dv(
        io, manifest_dv, file=root_location, where=where)
    try:
        m = read_content_manifest(io, root_entry.location,
                                  length=root_entry.file_size_in_bytes)
    except UnsupportedVersion:
        if legacy is None:
            raise
        kind = manifest_kind_for(root_entry.content_type)
        old = tuple(legacy(root_entry))
        check_leaf(root_entry, kind, old, deleted_positions=_top(deleted),
                   file=root_entry.location)
        length = root_entry.file_size_in_bytes or 0
        return LeafManifest(ContentManifest(root_entry.location, kind, old, length),
                            root_entry, deleted)
    check_leaf(root_entry, m.kind, m.entries, deleted_positions=_top(deleted),
               file=m.location)
    entries = inherit(m.entries, InheritFrom.from_root_entry(root_entry, file=root_location),
                      file=m.location)
    return LeafManifest(replace(m, entries=tuple(entries)), root_entry, deleted)


def read_leaves(io: FileIO, root: ContentManifest, *,
                legacy: LegacyLeafReader | None = None) -> list[LeafManifest]:
    """Every live leaf manifest of a root (read with :func:`read_root_manifest`), in root
    order, each with its live manifest DV applied; errors name the root and the entry.
    ``legacy`` reads v1-v3 leaves (see :func:`read_leaf_manifest`)."""
    dvs = {e.referenced_file: (i, e) for i, e in enumerate(root.entries)
           if e.is_live and e.content_type == ContentType.MANIFEST_DV}
    out = []
    for e in root.entries:
        if not (e.is_live and e.content_type.is_manifest):
            continue
        i, dv = dvs.get(e.location, (-1, None))
        out.append(read_leaf_manifest(io, e, manifest_dv=dv, root_location=root.location,
                                      where=f"entries[{i}]" if dv is not None else "",
                                      legacy=legacy))
    return out


def _top(dv: DeletionVector) -> list[int]:
    """The highest ordinal (enough to check they all fall inside the leaf)."""
    return [] if not dv else [int(dv.to_numpy().max())]
