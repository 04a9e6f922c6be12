"""A data manifest's live entries in the compact form planning keeps and caches.

DESIGN, "Metadata at columnar speed"; spec: "Manifests" (``data_file`` fields 108-110, 137,
125, 128), "Scan Planning". A decoded manifest holds its column metrics as Arrow maps (field id
-> count or Appendix D bound bytes): per item a 4-byte key and an offset besides the value, and
every entry (DELETED ones too) and every column kept. Planning needs less:

* only live entries of the manifest's own content (a data manifest's data files);
* ``data_file`` without the metric maps (``entries``), ``manifest_path`` dictionary-encoded;
* the metrics as one column per (map, field id) (``metrics``: ``value_counts.1``,
  ``lower_bounds.1`` ...; counts in the narrowest integer type that holds them, bounds as the
  stored bytes, fixed-size when all have one length), so pruning reads the columns a filter
  names without searching maps, and the maps are rebuilt (:func:`restore_metrics`) only for
  the entries a plan returns with stats.

Manifests decoded together are compacted together (Arrow work per group, not per manifest):
each :class:`CompactManifest` is a slice of its group's :class:`Block`, whose buffers are
copies of their own (nothing of the decoded batch stays alive). A cache counts a block once
(:attr:`Block.nbytes`), until it holds none of its manifests: its accounting is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.io.avro import expect_decoding
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    CacheKey,
    ManifestCache,
    concat_entry_tables,
    read_manifest_tables,
)
from icenb.reprs import safe_repr
from icenb.spec.manifest import EntryStatus, FileContent, ManifestFile

__all__ = ["METRIC_MAPS", "Block", "CompactManifest", "DecodedGroup", "compact_data_manifests",
           "compact_manifests", "concat_metrics", "decode_data_manifests",
           "finish_data_manifests", "metric_column", "restore_metrics", "runs"]

#: The ``data_file`` metric maps planning reads (``column_sizes`` is never decoded for it).
METRIC_MAPS = ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
               "upper_bounds")


@safe_repr
@dataclass(frozen=True)
class CompactManifest:
    """One data manifest's live data entries as planning keeps them (see the module doc).

    ``entries``: the columns of :func:`~icenb.io.manifest_reader.read_manifest_entries`
    without the metric maps; ``metrics``: the same rows, a column per (map, field id), and a
    boolean ``<map>`` column where some entry's map itself is null; ``data_file_type``: the
    decoded ``data_file`` struct type with its maps, to rebuild them in place.
    """

    entries: pa.Table
    metrics: pa.Table
    data_file_type: pa.StructType
    block: Block
    start: int = 0  # first row in the block's tables

    @property
    def num_rows(self) -> int:
        return int(self.entries.num_rows)

    @property
    def nbytes(self) -> int:
        """Bytes of the buffers held (those of the whole block this manifest shares)."""
        return self.block.nbytes


_TAG = "<planning>"


def _key(m: ManifestFile, stats: bool) -> CacheKey:
    """The file and the manifest-list values inheritance and the added columns use."""
    return (_TAG, stats, m.manifest_path, m.manifest_length, m.added_snapshot_id,
            m.sequence_number, m.first_row_id, m.partition_spec_id, int(m.content))


@safe_repr
@dataclass
class DecodedGroup:
    """Some data manifests read for planning: the compact forms the cache had (None where
    not), and the missing ones decoded (their indices and entry tables), not yet compacted."""

    manifests: Sequence[ManifestFile]
    found: list[CompactManifest | None]
    missing: list[int]
    tables: list[pa.Table]


def decode_data_manifests(io: FileIO, manifests: Sequence[ManifestFile],
                          columns: Sequence[str], stats: bool,
                          cache: ManifestCache | None, plan_bytes: int = 0) -> DecodedGroup:
    """The first half of :func:`compact_data_manifests` (reading and decoding, mostly without
    the GIL): a thread runs it for the next group while the caller compacts this one.
    ``plan_bytes``: the stored bytes of all the groups a plan reads (the compiled decoder is
    loaded for a large plan even though each group is small)."""
    found: list[CompactManifest | None] = []
    for m in manifests:
        hit = None
        if cache is not None:
            hit = cache.get(_key(m, True))
            if hit is None and not stats:
                hit = cache.get(_key(m, False))
        found.append(hit)
    missing = [i for i, c in enumerate(found) if c is None]
    if missing:
        expect_decoding(plan_bytes)
    tables = read_manifest_tables(io, [manifests[i] for i in missing], columns=columns) \
        if missing else []
    return DecodedGroup(manifests, found, missing, tables)


def finish_data_manifests(group: DecodedGroup, stats: bool, cache: ManifestCache | None
                          ) -> list[CompactManifest]:
    """The second half of :func:`compact_data_manifests`: the decoded manifests compacted
    (and cached); every manifest's compact form, in order."""
    out = list(group.found)
    for i, compact in zip(group.missing, compact_manifests(group.tables), strict=True):
        out[i] = compact
        if cache is not None:
            cache.put(_key(group.manifests[i], stats), compact)
            if stats:
                cache.discard(_key(group.manifests[i], False))
    group.tables = []
    return [c for c in out if c is not None]


def compact_data_manifests(io: FileIO, manifests: Sequence[ManifestFile],
                           columns: Sequence[str], stats: bool,
                           cache: ManifestCache | None) -> list[CompactManifest]:
    """The compact form of each data manifest: from ``cache`` when there, else decoded with
    ``columns`` (which hold the metric maps when ``stats``) and cached. A manifest cached with
    its metrics serves a plan without them; caching it with metrics replaces the form
    without."""
    return finish_data_manifests(decode_data_manifests(io, manifests, columns, stats, cache),
                                 stats, cache)


def metric_column(name: str, field_id: int) -> str:
    """The ``metrics`` column of one map's values for one field id."""
    return f"{name}.{field_id}"


class Block:
    """The tables some compact manifests are slices of (decoded and compacted together): a
    cache counts their bytes once, and frees them when it holds none of those manifests."""

    __slots__ = ("entries", "metrics", "nbytes")

    def __init__(self, entries: pa.Table, metrics: pa.Table) -> None:
        self.entries = entries
        self.metrics = metrics
        self.nbytes = int(entries.get_total_buffer_size() + metrics.get_total_buffer_size())


def runs(compacts: Sequence[CompactManifest]) -> list[tuple[pa.Table, pa.Table]]:
    """The (entries, metrics) of ``compacts`` in order, as few tables as possible: manifests
    that follow each other in one block read as one slice of it (no copy)."""
    out: list[tuple[pa.Table, pa.Table]] = []
    i = 0
    while i < len(compacts):
        first = compacts[i]
        end = first.start + first.num_rows
        j = i + 1
        while j < len(compacts) and compacts[j].block is first.block \
                and compacts[j].start == end:
            end += compacts[j].num_rows
            j += 1
        if j == i + 1:
            out.append((first.entries, first.metrics))
        else:
            b = first.block
            out.append((b.entries.slice(first.start, end - first.start),
                        b.metrics.slice(first.start, end - first.start)))
        i = j
    return out


def compact_manifests(tables: Sequence[pa.Table]) -> list[CompactManifest]:
    """The compact form of decoded data manifests (inheritance applied, manifest columns
    appended; one table each): their live data entries, maps split into columns. They are
    compacted together (Arrow work per group, not per manifest) into buffers of their own
    that they share (:attr:`CompactManifest.block`)."""
    if not tables:
        return []
    group = concat_entry_tables(tables)
    sizes = np.array([t.num_rows for t in tables], np.int64)
    status = group.column("status")
    data_file = group.column("data_file")
    content = pc.struct_field(data_file, "content")
    live = pc.and_(pc.not_equal(status, pa.scalar(int(EntryStatus.DELETED), status.type)),
                   pc.equal(content, pa.scalar(int(FileContent.DATA), content.type)))
    live_np = np.asarray(pc.fill_null(live, False).to_numpy(), dtype=bool) \
        if group.num_rows else np.zeros(0, bool)
    all_live = bool(live_np.all())
    keep = None if all_live else pa.array(live_np, pa.bool_())
    owner = np.repeat(np.arange(len(tables)), sizes)
    live_sizes = sizes if all_live else np.bincount(owner[live_np], minlength=len(tables))

    def own(col: pa.ChunkedArray) -> pa.Array:
        arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        return arr if keep is None else arr.filter(keep)

    df_type: pa.StructType = group.schema.field("data_file").type
    n = int(live_sizes.sum())
    df_chunks = data_file.chunks
    kept_fields: list[pa.Field] = []
    kept_children: list[pa.Array] = []
    metrics: dict[str, pa.Array] = {}
    for i in range(df_type.num_fields):
        f = df_type.field(i)
        child = own(pa.chunked_array([c.field(i) for c in df_chunks], f.type))
        if f.name in METRIC_MAPS:
            _split_map(f.name, child, metrics)
        else:
            kept_fields.append(f)
            kept_children.append(child)
    valid = own(pa.chunked_array([c.is_valid() for c in df_chunks], pa.bool_()))
    mask = None if valid.false_count == 0 else pc.invert(valid)
    new_df = pa.StructArray.from_arrays(kept_children, fields=kept_fields, mask=mask) \
        if kept_fields else pa.Array.from_buffers(pa.struct([]), n, [None], children=[])
    columns: list[pa.Array] = []
    for name in group.column_names:
        if name == "data_file":
            columns.append(new_df)
        elif name == "manifest_path":
            paths = pa.array([t.column(name)[0].as_py() if t.num_rows else "" for t in tables],
                             pa.string())
            index = np.repeat(np.arange(len(tables), dtype=np.int32), live_sizes)
            columns.append(pa.DictionaryArray.from_arrays(pa.array(index), paths))
        else:
            columns.append(own(group.column(name)))
    entries = pa.Table.from_arrays(columns, names=group.column_names)
    wide = pa.table(metrics) if metrics else pa.table({"_": pa.nulls(n)}).select([])
    block = Block(entries, wide)
    out = []
    start = 0
    for size in live_sizes.tolist():
        out.append(CompactManifest(entries.slice(start, size), wide.slice(start, size),
                                   df_type, block, start))
        start += size
    return out


def _single(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def _narrow_dtype(lo: int, hi: int) -> Any:
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return dtype
    return np.int64


def _narrow(values: pa.Array) -> pa.Array:
    """Integer values in the narrowest signed type that holds them (counts)."""
    if not pa.types.is_integer(values.type) or len(values) == 0:
        return values
    lo, hi = pc.min_max(values).values()
    lo_v, hi_v = lo.as_py(), hi.as_py()
    if lo_v is None or hi_v is None:
        return values
    for t, bits in ((pa.int8(), 8), (pa.int16(), 16), (pa.int32(), 32)):
        if -(1 << (bits - 1)) <= lo_v and hi_v < (1 << (bits - 1)):
            return values.cast(t) if values.type != t else values
    return values


def _split_map(name: str, column: pa.Array, out: dict[str, pa.Array]) -> None:
    """One metric map column as a column per key (null where a row lacks the key; the last
    item wins for a repeated key, as :func:`~icenb.spec.metrics_evaluator.map_value_array`)."""
    n = len(column)
    if pa.types.is_map(column.type):
        keys_all, items_all = column.keys, column.items
    else:  # a list of key/value structs
        keys_all, items_all = column.values.field(0), column.values.field(1)
    offsets = np.asarray(column.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    if column.null_count:
        out[name] = column.is_valid()
    if n == 0 or offsets[-1] == offsets[0]:
        return
    start, stop = int(offsets[0]), int(offsets[-1])
    key_window = keys_all.slice(start, stop - start)
    items = items_all.slice(start, stop - start)
    if key_window.null_count:  # no field id: not a metric of any column
        present = np.asarray(key_window.is_valid().to_numpy(zero_copy_only=False))
        rows_all = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
        counts = np.bincount(rows_all[present], minlength=n)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        key_window = key_window.filter(pa.array(present))
        items = items.filter(pa.array(present))
        if len(key_window) == 0:
            return
    keys = np.asarray(key_window.to_numpy(zero_copy_only=False), dtype=np.int64)
    counts = np.diff(offsets)
    width = int(counts[0])
    if width and bool((counts == width).all()) and bool(
            (keys.reshape(n, width) == keys[:width]).all()) and len(set(
            keys[:width].tolist())) == width:
        # every row holds the same keys in the same order: a column is every width-th item
        if pa.types.is_integer(items.type) and items.null_count == 0:
            grid = np.asarray(items.to_numpy()).reshape(n, width)
            dtype = _narrow_dtype(int(grid.min()), int(grid.max()))
            by_key = np.ascontiguousarray(grid.T, dtype=dtype)  # one copy, a row per key
            arrow_type = pa.from_numpy_dtype(dtype)
            for j, key in enumerate(keys[:width].tolist()):
                out[metric_column(name, int(key))] = pa.Array.from_buffers(
                    arrow_type, n, [None, pa.py_buffer(by_key[j])])
            return
        order = np.arange(width, dtype=np.int64)[:, None] + \
            np.arange(0, n * width, width, dtype=np.int64)[None, :]
        taken = _narrow(items.take(pa.array(order.reshape(-1))))
        columns = [taken.slice(j * n, n) for j in range(width)]
        if pa.types.is_binary(taken.type) and taken.null_count == 0:
            columns = _fixed_width(taken, columns, n)
        for key, column_j in zip(keys[:width].tolist(), columns, strict=True):
            out[metric_column(name, int(key))] = column_j
        return
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    order = np.lexsort((rows, keys))  # by key, then row: one take, then a slice per key
    sorted_keys = keys[order]
    taken = _narrow(items.take(pa.array(order, pa.int64())))
    bounds = np.flatnonzero(np.diff(sorted_keys)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(order)]])
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        key = int(sorted_keys[s])
        seg_rows = rows[order[s:e]]
        values = taken.slice(s, e - s)
        if e - s != n or (n > 1 and bool((np.diff(seg_rows) != 1).any())):
            index = np.full(n, -1, dtype=np.int64)
            index[seg_rows] = np.arange(e - s, dtype=np.int64)  # repeated key: last wins
            values = values.take(pa.array(index, mask=index < 0))
        out[metric_column(name, key)] = values


def _field_ids(metrics: pa.Table | pa.RecordBatch, name: str) -> list[int]:
    prefix = f"{name}."
    return sorted(int(c[len(prefix):]) for c in metrics.column_names if c.startswith(prefix))


def restore_metrics(entries: pa.Table, metrics: pa.Table, data_file_type: pa.StructType
                    ) -> pa.Table:
    """``entries`` with the metric maps rebuilt into ``data_file`` (same rows as ``metrics``,
    struct fields in the order of ``data_file_type``; a map's keys in field id order)."""
    if entries.num_rows == 0:
        return entries
    data_file = _single(entries.column("data_file"))
    children = dict(zip([f.name for f in data_file.type], data_file.flatten(), strict=True))
    n = len(data_file)
    fields: list[pa.Field] = []
    arrays: list[pa.Array] = []
    for i in range(data_file_type.num_fields):
        f = data_file_type.field(i)
        if f.name in METRIC_MAPS:
            arrays.append(_rebuild_map(metrics, f, n))
            fields.append(f)
        elif f.name in children:
            arrays.append(children[f.name])
            fields.append(data_file.type.field(f.name))
    mask = data_file.is_null() if data_file.null_count else None
    new_df = pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)
    return entries.set_column(entries.column_names.index("data_file"), "data_file", new_df)


def _rebuild_map(metrics: pa.Table, f: pa.Field, n: int) -> pa.Array:
    t = f.type
    is_map = pa.types.is_map(t)
    key_type = t.key_type if is_map else t.value_type.field(0).type
    item_type = t.item_type if is_map else t.value_type.field(1).type
    ids = _field_ids(metrics, f.name)
    cols = [_single(metrics.column(metric_column(f.name, i))) for i in ids]
    cols = [c if c.type == item_type else c.cast(item_type) for c in cols]
    valid = np.zeros((n, len(ids)), dtype=bool)
    for k, c in enumerate(cols):
        valid[:, k] = c.is_valid().to_numpy(zero_copy_only=False) if c.null_count else True
    counts = valid.sum(axis=1)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    flat = np.flatnonzero(valid.ravel())
    row, col = flat // max(len(ids), 1), flat % max(len(ids), 1)
    keys = pa.array(np.asarray(ids, np.int64)[col], key_type)
    values = pa.concat_arrays(cols).take(pa.array(col * n + row, pa.int64())) if cols \
        else pa.array([], item_type)
    map_mask = None
    if f.name in metrics.column_names:
        # null: a manifest whose maps were all present
        map_mask = pc.invert(pc.fill_null(_single(metrics.column(f.name)), True))
    if is_map:
        return pa.MapArray.from_arrays(pa.array(offsets), keys, values, type=t, mask=map_mask)
    struct = pa.StructArray.from_arrays([keys, values], fields=list(t.value_type))
    return pa.ListArray.from_arrays(pa.array(offsets), struct, type=t, mask=map_mask)


def concat_metrics(parts: Sequence[pa.Table], columns: Sequence[str]
                   ) -> dict[str, pa.ChunkedArray]:
    """The named ``metrics`` columns over several manifests' rows (null where a manifest has
    no such column), as chunked arrays (no copy where the types agree)."""
    names = [set(p.column_names) for p in parts]
    out: dict[str, pa.ChunkedArray] = {}
    for name in columns:
        present = [p.column(name) for p, have in zip(parts, names, strict=True) if name in have]
        if not present:
            continue
        t = _common_type([c.type for c in present])
        chunks: list[pa.Array] = []
        for p, have in zip(parts, names, strict=True):
            if name not in have:
                chunks.append(pa.nulls(p.num_rows, t))
                continue
            for c in p.column(name).chunks:
                chunks.append(c if c.type == t else c.cast(t))
        out[name] = pa.chunked_array(chunks, t)
    return out


def _fixed_width(taken: pa.Array, columns: list[pa.Array], n: int) -> list[pa.Array]:
    """Bound columns whose values all have one length (a long's 8 bytes...) as fixed-size
    binary: no offsets (4 bytes a value). Then the others are copied too, so that no column
    keeps ``taken`` (all the keys' bytes) alive."""
    offsets = np.frombuffer(taken.buffers()[1], np.int32)[taken.offset:taken.offset + len(taken)
                                                         + 1]
    lengths = np.diff(offsets).reshape(-1, n)
    width = lengths[:, 0]
    fixed = (lengths == width[:, None]).all(axis=1) & (width > 0)
    if not fixed.any():
        return columns
    return [c.cast(pa.binary(int(w))) if f else pa.concat_arrays([c])
            for c, f, w in zip(columns, fixed.tolist(), width.tolist(), strict=True)]


def _common_type(types: list[pa.DataType]) -> pa.DataType:
    first = types[0]
    if all(t == first for t in types):
        return first
    if all(pa.types.is_integer(t) for t in types):
        return pa.int64()
    if all(pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t) for t in types):
        return pa.binary()  # bounds of one length in some manifests, not in others
    return first
