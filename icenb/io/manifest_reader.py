"""Read a snapshot's manifest list and manifests into Arrow tables (DESIGN: "Metadata at
columnar speed").

Spec: "Manifest Lists", "Manifests", "Sequence Number Inheritance", "First Row ID Inheritance",
Appendix E (reading v1 metadata).

* :func:`read_manifest_list` / :func:`read_manifest_list_table`: a snapshot's manifests, from its
  manifest-list file (Appendix E defaults for v1 lists) or, for old v1 snapshots, from its
  ``manifests`` list of paths. For the latter, as the reference implementation does, each entry
  gets the file's length, spec id 0 (the manifest header's ``partition-spec-id`` is what decides
  when entries are read), sequence numbers 0 and the snapshot's id as ``added_snapshot_id``.
* :func:`read_manifest_entries`: many manifests' bytes read and decompressed in parallel
  (threads: I/O and zlib release the GIL), decoded in :func:`~icenb.io.avro.read_avro_tables`
  batches of about :data:`DECODE_BATCH_BYTES` (progress: ``Reading manifests``, per batch),
  inheritance applied per manifest, concatenated into one table (a chunk per manifest).
* :class:`ManifestCache`: decoded manifests (inheritance applied) by (path, length,
  projection, and the manifest-list values inheritance depends on, e.g. ``first_row_id`` after
  a v3 upgrade), and decoded manifest lists by path. Both files are immutable, so a warm read
  opens and decodes nothing.

Partition structs differ between specs. The concatenated ``data_file.partition`` column is the
union of all partition fields, matched by partition field id (the Arrow field metadata
``PARQUET:field_id``), ordered by field id, each named as in the highest spec id that has it;
entries of a spec without a field hold null there (as Iceberg Java's ``files`` metadata table,
``Partitioning.partitionType``). Same-id fields of different types (a promoted identity source)
are cast to a common type. The ``partition_spec_id`` column tells which fields are meaningful.
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import CorruptFile, InvalidMetadata, NoSuchSnapshot
from icenb.io.avro import FIELD_ID_KEY, avro_file_metadata, read_avro_tables
from icenb.io.file_io import FileIO
from icenb.options import get_options
from icenb.progress import READING_MANIFESTS, progress
from icenb.reprs import safe_repr
from icenb.spec.manifest import (
    FORMAT_VERSION_KEY,
    PARTITION_SPEC_ID_KEY,
    EntryStatus,
    FileContent,
    ManifestFile,
    apply_inheritance,
    apply_manifest_list_defaults,
    manifest_files_from_arrow,
)
from icenb.spec.snapshot import TOTAL_DATA_FILES, Snapshot
from icenb.spec.table_metadata import TableMetadata

__all__ = [
    "DEFAULT_MAX_WORKERS",
    "DecodedManifest",
    "LiveFiles",
    "ManifestCache",
    "concat_entry_tables",
    "live_data_files",
    "read_manifest_entries",
    "read_manifest_list",
    "read_manifest_list_table",
    "read_manifest_tables",
    "shared_manifest_cache",
]

#: Threads reading (and then decompressing) manifests at once; decoding is one batch after.
DEFAULT_MAX_WORKERS = 8

# Columns inheritance needs, added to any projection.
_INHERITANCE_COLUMNS = (
    "status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file.content",
    "data_file.record_count", "data_file.first_row_id",
)
_EXTRA_COLUMNS = ("manifest_path", "partition_spec_id", "manifest_content")


# --------------------------------------------------------------------------- manifest lists


def read_manifest_list_table(io: FileIO, snapshot: Snapshot, format_version: int, *,
                             cache: ManifestCache | None = None) -> pa.Table:
    """A snapshot's manifest list as an Arrow table (one row per manifest, Avro field names),
    with Appendix E defaults (``content``, sequence numbers 0 in v1 lists).

    With a ``cache``, the decoded list is kept by path (a manifest list is immutable) and a
    warm read opens no file.
    """
    if snapshot.manifest_list is None:
        files = read_manifest_list(io, snapshot, format_version)
        return _manifest_files_table(files)
    location = snapshot.manifest_list
    key: CacheKey = (_LIST_TAG, location)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit.table
    data = io.new_input(location).read()
    decoded = read_avro_tables([(location, data)])[0]
    _check_required(decoded, location, avro_file_metadata(location, data))
    summary = snapshot.summary
    total = "0" if summary is None else str(summary.get(TOTAL_DATA_FILES, "0")).strip()
    if decoded.num_rows == 0 and total.isdigit() and int(total) > 0:
        # an Avro file cut right after its header is a valid empty file
        raise CorruptFile("manifest list holds no manifest, its snapshot summary counts "
                          f"{total} data files (a truncated file?)", file=location,
                          field=TOTAL_DATA_FILES)
    table = apply_manifest_list_defaults(decoded)
    if cache is not None:
        cache.put(key, DecodedManifest(table, None, None))
    return table


#: manifest_file fields every format version requires (spec: Manifest Lists), and those v2
#: added as required.
_REQUIRED_V1 = ("manifest_path", "manifest_length", "partition_spec_id")
_REQUIRED_V2 = ("content", "sequence_number", "min_sequence_number", "added_snapshot_id",
                "added_files_count", "existing_files_count", "deleted_files_count")


def _check_required(table: pa.Table, location: str, header: Mapping[str, bytes]) -> None:
    """A manifest list without a field its format version requires, or with a null in one, is
    damaged - a flipped byte in its Avro schema renames a field, which would otherwise read as
    missing and take Appendix E's v1 default (``content`` 0: a delete manifest read as data):
    ``CorruptFile`` naming the file and field. The version is the list's own
    ``format-version`` header (a v1 list stays v1 after an upgrade)."""
    version = header.get(FORMAT_VERSION_KEY, b"1")
    required = _REQUIRED_V1 + (_REQUIRED_V2 if version not in (b"1", b"") else ())
    for name in required:
        if name not in table.column_names:
            raise CorruptFile("manifest list lacks a required field (a damaged file?)",
                              file=location, field=name)
        if table.column(name).null_count:
            raise CorruptFile("manifest list has a null in a required field", file=location,
                              field=name)


def read_manifest_list(io: FileIO, snapshot: Snapshot, format_version: int) -> list[ManifestFile]:
    """A snapshot's manifests (spec: Manifest Lists), from its manifest list or, in v1, from
    its ``manifests`` paths (spec: Snapshots, ``manifests``)."""
    if snapshot.manifest_list is not None:
        table = read_manifest_list_table(io, snapshot, format_version)
        return manifest_files_from_arrow(table, file=snapshot.manifest_list)
    if snapshot.manifests is None:
        raise InvalidMetadata("snapshot has neither a manifest list nor manifests",
                              field=f"snapshots[{snapshot.snapshot_id}].manifest-list")
    # As the reference implementation: length from the file, spec 0, sequence numbers 0.
    return [
        ManifestFile(manifest_path=path, manifest_length=io.new_input(path).size,
                     partition_spec_id=0, added_snapshot_id=snapshot.snapshot_id)
        for path in snapshot.manifests
    ]


def _manifest_files_table(files: Sequence[ManifestFile]) -> pa.Table:
    """The columns of a decoded manifest list, built from ManifestFile objects."""
    return pa.table({
        "manifest_path": pa.array([f.manifest_path for f in files], pa.string()),
        "manifest_length": pa.array([f.manifest_length for f in files], pa.int64()),
        "partition_spec_id": pa.array([f.partition_spec_id for f in files], pa.int32()),
        "content": pa.array([int(f.content) for f in files], pa.int32()),
        "sequence_number": pa.array([f.sequence_number for f in files], pa.int64()),
        "min_sequence_number": pa.array([f.min_sequence_number for f in files], pa.int64()),
        "added_snapshot_id": pa.array([f.added_snapshot_id for f in files], pa.int64()),
        "added_files_count": pa.array([f.added_files_count for f in files], pa.int32()),
        "existing_files_count": pa.array([f.existing_files_count for f in files], pa.int32()),
        "deleted_files_count": pa.array([f.deleted_files_count for f in files], pa.int32()),
        "added_rows_count": pa.array([f.added_rows_count for f in files], pa.int64()),
        "existing_rows_count": pa.array([f.existing_rows_count for f in files], pa.int64()),
        "deleted_rows_count": pa.array([f.deleted_rows_count for f in files], pa.int64()),
        "first_row_id": pa.array([f.first_row_id for f in files], pa.int64()),
    })


# --------------------------------------------------------------------------- cache


@safe_repr
@dataclass(frozen=True)
class DecodedManifest:
    """A cached decoded file: a manifest's entry table (inherited values filled in, manifest
    columns appended) with what its header says, or a manifest list's table (header None)."""

    table: pa.Table
    partition_spec_id: int | None
    format_version: int | None

    @property
    def nbytes(self) -> int:
        """Bytes of every buffer held (each counted once)."""
        return int(self.table.get_total_buffer_size())


#: A cache key: (path, length, projection, ...) for manifests (the rest is what inheritance
#: depends on), (``"<manifest-list>"``, path) for manifest lists.
CacheKey = tuple[Any, ...]
_LIST_TAG = "<manifest-list>"


class _Sized(Protocol):
    @property
    def nbytes(self) -> int: ...


@safe_repr
class ManifestCache:
    """LRU cache of decoded manifests by (path, length, projection, inherited values), of
    planning's compact data manifests (:mod:`icenb.io.compact_manifest`) and of decoded
    manifest lists by path; thread-safe.

    Bounded by ``max_bytes`` of Arrow buffers (None: the ``manifest_cache_bytes`` option, read
    at each store) and ``max_entries``; the least recently used values are dropped first.
    Accounting is exact: a value's ``nbytes`` are the buffers it holds, and values that share
    one ``block`` of buffers (manifests compacted together) count that block once, until the
    last of them is dropped. ``hits`` / ``misses`` count lookups.
    """

    def __init__(self, max_bytes: int | None = None, max_entries: int = 100_000) -> None:
        self._max_bytes = max_bytes
        self.max_entries = max_entries
        self._items: OrderedDict[CacheKey, Any] = OrderedDict()
        self._blocks: dict[int, list[int]] = {}  # id(block) -> [values holding it, bytes]
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def max_bytes(self) -> int:
        """The byte budget (the ``manifest_cache_bytes`` option unless set here)."""
        if self._max_bytes is not None:
            return self._max_bytes
        return get_options().manifest_cache_bytes

    @max_bytes.setter
    def max_bytes(self, value: int | None) -> None:
        self._max_bytes = value

    def get(self, key: CacheKey) -> Any:
        """The cached value, or None (a hit moves it to the most recently used end)."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item

    def _add(self, value: Any) -> None:
        block = getattr(value, "block", None)
        if block is None:
            self._bytes += value.nbytes
            return
        held = self._blocks.get(id(block))
        if held is None:
            self._blocks[id(block)] = [1, block.nbytes]
            self._bytes += block.nbytes
        else:
            held[0] += 1

    def _drop(self, value: Any) -> None:
        block = getattr(value, "block", None)
        if block is None:
            self._bytes -= value.nbytes
            return
        held = self._blocks[id(block)]
        held[0] -= 1
        if held[0] == 0:
            del self._blocks[id(block)]
            self._bytes -= held[1]

    def put(self, key: CacheKey, value: _Sized) -> None:
        """Store a decoded value, evicting least recently used ones over the bounds."""
        budget = self.max_bytes
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._drop(old)
            if value.nbytes > budget:
                return
            self._items[key] = value
            self._add(value)
            while self._items and (self._bytes > budget
                                   or len(self._items) > self.max_entries):
                _, dropped = self._items.popitem(last=False)
                self._drop(dropped)

    def discard(self, key: CacheKey) -> None:
        """Drop one value if cached."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._drop(old)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()
            self._blocks.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        """Arrow bytes held."""
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __repr__(self) -> str:
        return (f"ManifestCache({len(self)} manifests, {self.nbytes} bytes, "
                f"hits={self.hits}, misses={self.misses})")


# --------------------------------------------------------------------------- manifests


_CACHES: weakref.WeakKeyDictionary[FileIO, ManifestCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def shared_manifest_cache(io: FileIO) -> ManifestCache:
    """The cache of decoded manifest lists and manifests read through ``io`` (bounded, LRU),
    which scans and inspect tables use by default: manifest files are immutable, so planning
    the same snapshot again reads nothing. It lives as long as ``io``: a table opened anew
    starts cold and sees files as they are now (e.g. expired ones gone)."""
    with _CACHES_LOCK:
        cache = _CACHES.get(io)
        if cache is None:
            cache = _CACHES[io] = ManifestCache()
        return cache


def _header_int(meta: dict[str, bytes], key: str, name: str) -> int | None:
    raw = meta.get(key)
    if raw is None:
        return None
    try:
        return int(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CorruptFile("manifest header value is not an integer", file=name, field=key,
                          value=raw) from None


def _read_all(io: FileIO, manifests: Sequence[ManifestFile], max_workers: int
              ) -> list[bytes]:
    """The bytes of each manifest, read by a small thread pool (sizes are checked)."""
    def read(m: ManifestFile) -> bytes:
        return io.new_input(m.manifest_path, size=m.manifest_length).read()

    if len(manifests) <= 1 or max_workers <= 1:
        return [read(m) for m in manifests]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(manifests))) as pool:
        return list(pool.map(read, manifests))


def _entries_key(m: ManifestFile, columns: tuple[str, ...] | None) -> CacheKey:
    """What a manifest's entry table depends on: the file and projection, and the manifest-list
    values inheritance and the added columns use."""
    return (m.manifest_path, m.manifest_length, columns, m.added_snapshot_id, m.sequence_number,
            m.first_row_id, m.partition_spec_id, int(m.content))


#: manifest_entry fields every version requires (spec: Manifests), and v2's ``content``.
_REQUIRED_ENTRY = ("status", "data_file.file_path", "data_file.file_format",
                   "data_file.record_count", "data_file.file_size_in_bytes")


def _check_entries(m: ManifestFile, table: pa.Table, version: int,
                   columns: Sequence[str] | None) -> None:
    """A decoded manifest must hold the required fields it was asked for, and as many ADDED,
    EXISTING and DELETED entries as its manifest-list row counts (when the list has them):
    a flipped byte that renames a field or changes a status is a ``CorruptFile`` naming the
    manifest, never a default or a dropped file read as data."""
    present = set(table.column_names)
    if "data_file" in present:
        data_file = table.schema.field("data_file").type
        present |= {f"data_file.{data_file.field(i).name}" for i in range(data_file.num_fields)}
    for path in _REQUIRED_ENTRY + (("data_file.content",) if version >= 2 else ()):
        if (columns is None or path in columns) and path not in present:
            raise CorruptFile("manifest lacks a required field (a damaged file?)",
                              file=m.manifest_path, field=path)
    if "status" not in present:
        return
    counts = pc.value_counts(table.column("status")).to_pylist()
    found = {int(c["values"]): int(c["counts"]) for c in counts if c["values"] is not None}
    for status, listed in ((EntryStatus.ADDED, m.added_files_count),
                           (EntryStatus.EXISTING, m.existing_files_count),
                           (EntryStatus.DELETED, m.deleted_files_count)):
        if listed is not None and found.get(int(status), 0) != listed:
            raise CorruptFile(f"manifest holds {found.get(int(status), 0)} {status.name} "
                              f"entries, its manifest list says {listed}", file=m.manifest_path,
                              field="status")


def _entries_table(m: ManifestFile, table: pa.Table, spec_id: int | None,
                   version: int | None) -> pa.Table:
    """One decoded manifest with inherited values and the manifest columns appended."""
    # A manifest without format-version in its header was written by a v1 writer.
    t = apply_inheritance(table, m, 1 if version is None else version)
    n = t.num_rows
    sid = spec_id if spec_id is not None else m.partition_spec_id
    return t.append_column("manifest_path", pa.repeat(pa.scalar(m.manifest_path), n)) \
        .append_column("partition_spec_id", pa.repeat(pa.scalar(sid, pa.int32()), n)) \
        .append_column("manifest_content", pa.repeat(pa.scalar(int(m.content), pa.int32()), n))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic GC paused while manifests decode: the decoders allocate many small
    objects (no cycles), and gen-2 passes over a large cache cost 0.1-0.25 s per 100
    manifests. The previous state is restored (a GC the user disabled stays off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _decode(io: FileIO, manifests: Sequence[ManifestFile], columns: tuple[str, ...] | None,
            cache: ManifestCache | None, max_workers: int, files_per_call: int = 1
            ) -> list[pa.Table]:
    """Each manifest's entry table (from the cache when there), the missing ones decoded in
    one batch; a manifest listed twice is read once."""
    keys = [_entries_key(m, columns) for m in manifests]
    out: list[pa.Table | None] = []
    for k in keys:
        hit = cache.get(k) if cache is not None else None
        out.append(None if hit is None else hit.table)
    missing: dict[CacheKey, list[int]] = {}
    for i, t in enumerate(out):
        if t is None:
            missing.setdefault(keys[i], []).append(i)
    if missing:
        with progress(READING_MANIFESTS, total=len(missing)) as task:
            for batch in _batches(list(missing.items()), manifests):
                _decode_batch(io, batch, manifests, columns, cache, max_workers, out,
                              files_per_call)
                task.advance(len(batch))
    return [t for t in out if t is not None]


#: Stored manifest bytes read and decoded in one batch: a plan of many manifests is decoded
#: batch after batch (progress moves, one batch's bytes are held at a time), each batch large
#: enough that batching costs nothing measurable (more than ``icenb.io.avro.COMPILED_MIN_BYTES``
#: once decompressed, so a large plan keeps the decoder it had).
DECODE_BATCH_BYTES = 32 << 20


def _batches(pending: list[tuple[CacheKey, list[int]]], manifests: Sequence[ManifestFile]
             ) -> Iterator[list[tuple[CacheKey, list[int]]]]:
    """``pending`` in consecutive batches of about :data:`DECODE_BATCH_BYTES` stored bytes."""
    batch: list[tuple[CacheKey, list[int]]] = []
    size = 0
    for item in pending:
        batch.append(item)
        size += max(manifests[item[1][0]].manifest_length or 0, 0)
        if size >= DECODE_BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _decode_batch(io: FileIO, batch: list[tuple[CacheKey, list[int]]],
                  manifests: Sequence[ManifestFile], columns: tuple[str, ...] | None,
                  cache: ManifestCache | None, max_workers: int,
                  out: list[pa.Table | None], files_per_call: int = 1) -> None:
    """Read and decode the manifests of ``batch`` in one go; each entry table goes to ``out`` at
    the indices the manifest was listed at (and into the cache)."""
    todo = [manifests[idx[0]] for _, idx in batch]
    blobs = _read_all(io, todo, max_workers)
    named = [(m.manifest_path, b) for m, b in zip(todo, blobs, strict=True)]
    with gc_paused():
        tables = read_avro_tables(named, columns=columns, threads=max_workers,
                                  files_per_call=files_per_call)
        for (key, idx), m, (name, blob), table in zip(batch, todo, named, tables,
                                                      strict=True):
            meta = avro_file_metadata(name, blob)
            spec_id = _header_int(meta, PARTITION_SPEC_ID_KEY, name)
            version = _header_int(meta, FORMAT_VERSION_KEY, name)
            if (version or 1) < 2 and (m.sequence_number or 0) > 0:
                # only a v2+ writer gives a manifest a sequence number; read as v1, its
                # entries would inherit sequence number 0 and deletes would not apply
                raise CorruptFile("manifest claims format v1 (or none) but its manifest "
                                  f"list gives it sequence number {m.sequence_number}",
                                  file=name, field=FORMAT_VERSION_KEY, value=version)
            _check_entries(m, table, 1 if version is None else version, columns)
            entries = _entries_table(m, table, spec_id, version)
            if cache is not None:
                cache.put(key, DecodedManifest(entries, spec_id, version))
            for i in idx:
                out[i] = entries


def read_manifest_entries(
    io: FileIO,
    manifests: Sequence[ManifestFile],
    format_version: int,
    *,
    columns: Sequence[str] | None = None,
    cache: ManifestCache | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
) -> pa.Table:
    """All entries of ``manifests`` in one table (one chunk per manifest), inherited values
    filled in.

    Columns: ``status``, ``snapshot_id``, ``sequence_number``, ``file_sequence_number``,
    ``data_file`` (struct; ``partition`` unified across specs, see the module docstring), then
    ``manifest_path``, ``partition_spec_id`` (the manifest header's, else the list's) and
    ``manifest_content``. ``columns`` projects dotted Avro paths (``"data_file.file_path"``);
    the columns inheritance needs are always read. ``format_version`` is the table's; a
    manifest's own header ``format-version`` wins when present (Spec: Sequence Number
    Inheritance, First Row ID Inheritance, Appendix E). With a ``cache``, a manifest read
    before (same file, projection and manifest-list values) is neither opened nor decoded.
    """
    projection: tuple[str, ...] | None = None
    if columns is not None:
        projection = tuple(sorted({*columns, *_INHERITANCE_COLUMNS}))
    return concat_entry_tables(_decode(io, manifests, projection, cache, max_workers))


#: Manifests decoded in one run of the compiled decoder by :func:`read_manifest_tables`.
FILES_PER_DECODE = 12


def read_manifest_tables(
    io: FileIO,
    manifests: Sequence[ManifestFile],
    *,
    columns: Sequence[str] | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
) -> list[pa.Table]:
    """Each manifest's entry table, as :func:`read_manifest_entries` builds them, decoded now
    (no cache): for callers that copy what they keep (the tables may be slices of buffers
    that several manifests decoded together share)."""
    projection: tuple[str, ...] | None = None
    if columns is not None:
        projection = tuple(sorted({*columns, *_INHERITANCE_COLUMNS}))
    return _decode(io, manifests, projection, None, max_workers,
                   files_per_call=FILES_PER_DECODE)


def concat_entry_tables(tables: Sequence[pa.Table]) -> pa.Table:
    """Entry tables (a chunk each) as one, ``data_file.partition`` unified across specs (see
    the module docstring); an empty table with the basic columns when there are none."""
    if not tables:
        return _empty_entries()
    return pa.concat_tables(_unify_partitions(list(tables)), promote_options="permissive")


def _empty_entries() -> pa.Table:
    data_file = pa.struct([
        pa.field("content", pa.int32()), pa.field("file_path", pa.string()),
        pa.field("file_format", pa.string()), pa.field("partition", pa.struct([])),
        pa.field("record_count", pa.int64()), pa.field("file_size_in_bytes", pa.int64()),
        pa.field("first_row_id", pa.int64()),
    ])
    return pa.schema([
        pa.field("status", pa.int32()), pa.field("snapshot_id", pa.int64()),
        pa.field("sequence_number", pa.int64()), pa.field("file_sequence_number", pa.int64()),
        pa.field("data_file", data_file), pa.field("manifest_path", pa.string()),
        pa.field("partition_spec_id", pa.int32()), pa.field("manifest_content", pa.int32()),
    ]).empty_table()


def _field_key(f: pa.Field) -> tuple[int, str]:
    """Sort/match key of a partition field: its id (or a large one and the name without)."""
    meta = f.metadata or {}
    raw = meta.get(FIELD_ID_KEY)
    if raw is None:
        return (1 << 40, f.name)
    return (int(raw), "")


def _partition_of(table: pa.Table) -> pa.StructType | None:
    if "data_file" not in table.column_names:
        return None
    df_type = table.schema.field("data_file").type
    idx = df_type.get_field_index("partition")
    if idx < 0:
        return None
    t = df_type.field(idx).type
    return t if isinstance(t, pa.StructType) else None


def _unify_partitions(tables: list[pa.Table]) -> list[pa.Table]:
    """Give every table's ``data_file.partition`` the union struct of all partition fields."""
    # (spec id, field, whether any value is set) of each field id in each table
    found: dict[tuple[int, str], list[tuple[int, pa.Field, bool]]] = {}
    for t in tables:
        ptype = _partition_of(t)
        if ptype is None:
            continue
        spec_id = pc.max(t.column("partition_spec_id")).as_py() if t.num_rows else -1
        parts = pc.struct_field(t.column("data_file"), "partition") if t.num_rows else None
        for i, f in enumerate(ptype):
            has_values = parts is not None and pc.struct_field(parts, i).null_count < t.num_rows
            found.setdefault(_field_key(f), []).append(
                (spec_id if spec_id is not None else -1, f, has_values))
    if not found:
        return tables
    target: list[pa.Field] = []
    for key in sorted(found):
        occurrences = found[key]
        latest = max(occurrences, key=lambda o: o[0])[1]
        types = {o[1].type for o in occurrences}
        ftype = latest.type
        if len(types) > 1:
            try:
                ftype = pa.unify_schemas([pa.schema([o[1].with_name("x")]) for o in occurrences],
                                         promote_options="permissive").field(0).type
            except (pa.ArrowTypeError, pa.ArrowInvalid):
                # A v1 field replaced by void(source) keeps its id with the source type (spec:
                # Partition Evolution): its values are all null, so a typed occurrence wins.
                valued = [o for o in occurrences if o[2]] or occurrences
                ftype = max(valued, key=lambda o: o[0])[1].type
        target.append(latest.with_type(ftype).with_nullable(True))
    target_type = pa.struct(target)
    out = []
    for t in tables:
        ptype = _partition_of(t)
        if ptype is None or ptype == target_type:
            out.append(t)
            continue
        out.append(_replace_partition(t, ptype, target))
    return out


def _replace_partition(t: pa.Table, ptype: pa.StructType, target: list[pa.Field]) -> pa.Table:
    data_file = t.column("data_file").combine_chunks()
    df_type = data_file.type
    children = data_file.flatten()
    pidx = df_type.get_field_index("partition")
    partition = children[pidx]
    own = {_field_key(f): i for i, f in enumerate(ptype)}
    parts = partition.flatten()
    n = len(partition)
    arrays = []
    for f in target:
        i = own.get(_field_key(f))
        arrays.append(pa.nulls(n, f.type) if i is None or parts[i].null_count == n
                      else parts[i].cast(f.type))
    if arrays:
        new_partition = pa.StructArray.from_arrays(arrays, fields=target)
    else:
        new_partition = pa.StructArray.from_buffers(pa.struct([]), n, [None])
    children[pidx] = new_partition
    fields = [df_type.field(i) for i in range(df_type.num_fields)]
    fields[pidx] = fields[pidx].with_type(new_partition.type)
    mask = data_file.is_null() if data_file.null_count else None
    new_df = pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    return t.set_column(t.column_names.index("data_file"), "data_file", new_df)


# --------------------------------------------------------------------------- live files


class LiveFiles(NamedTuple):
    """The live content files of a snapshot: data files and delete files (entry tables)."""

    data_files: pa.Table
    delete_files: pa.Table


def live_data_files(
    io: FileIO, metadata: TableMetadata, snapshot_id: int, *,
    columns: Sequence[str] | None = None, cache: ManifestCache | None = None,
) -> LiveFiles:
    """The entries of a snapshot that are not DELETED, split by ``data_file.content``
    (0: data; 1, 2: deletes). Spec: Manifests ("status"), Scan Planning."""
    snapshot = metadata.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise NoSuchSnapshot("no such snapshot in the table metadata",
                             file=metadata.source_file, field="snapshot-id", value=snapshot_id)
    manifests = read_manifest_list(io, snapshot, metadata.format_version)
    entries = read_manifest_entries(io, manifests, metadata.format_version, columns=columns,
                                    cache=cache)
    if entries.num_columns and entries.column(0).num_chunks > 64:
        # one chunk per manifest: filtering 1,000 chunks costs ~100x filtering one
        entries = entries.combine_chunks()
    live = entries.filter(pc.not_equal(entries.column("status"),
                                       pa.scalar(int(EntryStatus.DELETED), pa.int32())))
    content = pc.struct_field(live.column("data_file"), "content")
    is_data = pc.equal(content, pa.scalar(int(FileContent.DATA), pa.int32()))
    return LiveFiles(live.filter(is_data), live.filter(pc.invert(is_data)))
