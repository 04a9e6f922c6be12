"""Planning's compact data manifests (icenb.io.compact_manifest), the cache's byte budget and its
exact accounting of shared blocks, and streamed planning against the whole-table reading."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import icenb
from icenb.errors import ValidationError
from icenb.io.compact_manifest import compact_manifests, restore_metrics, runs
from icenb.io.file_io import FileIO
from icenb.io.manifest_reader import (
    ManifestCache,
    read_manifest_entries,
    read_manifest_list,
    read_manifest_tables,
)
from icenb.io.metadata_files import load_table_metadata
from icenb.options import get_options, reset_options
from icenb.table.scan import planning
from icenb.table.scan.planning import plan_files
from tests.reference_fixtures import JavaTables

_COUNTS = pa.map_(pa.int32(), pa.int64())
_BOUNDS = pa.map_(pa.int32(), pa.binary())


def _entries(rows: list[dict[str, Any]], path: str = "m.avro") -> pa.Table:
    """A decoded data manifest's entry table (the shape read_manifest_entries gives)."""
    data_file = pa.array([{
        "content": r.get("content", 0), "file_path": r["path"], "file_format": "PARQUET",
        "partition": {"x": r.get("x")}, "record_count": r.get("rows", 10),
        "file_size_in_bytes": 100, "value_counts": r.get("vc"),
        "null_value_counts": r.get("nc"), "lower_bounds": r.get("lo"),
        "upper_bounds": r.get("hi"),
    } for r in rows], pa.struct([
        ("content", pa.int32()), ("file_path", pa.string()), ("file_format", pa.string()),
        ("partition", pa.struct([("x", pa.int32())])), ("record_count", pa.int64()),
        ("file_size_in_bytes", pa.int64()), ("value_counts", _COUNTS),
        ("null_value_counts", _COUNTS), ("lower_bounds", _BOUNDS), ("upper_bounds", _BOUNDS),
    ]))
    n = len(rows)
    return pa.table({
        "status": pa.array([r.get("status", 1) for r in rows], pa.int32()),
        "snapshot_id": pa.array([1] * n, pa.int64()),
        "sequence_number": pa.array([1] * n, pa.int64()),
        "file_sequence_number": pa.array([1] * n, pa.int64()),
        "data_file": data_file,
        "manifest_path": pa.array([path] * n, pa.string()),
        "partition_spec_id": pa.array([0] * n, pa.int32()),
        "manifest_content": pa.array([0] * n, pa.int32()),
    })


def _maps(table: pa.Table) -> list[dict[str, Any]]:
    df = table.column("data_file")
    out = []
    for row in df.to_pylist():
        out.append({k: (None if row[k] is None else sorted(row[k]))
                    for k in ("value_counts", "null_value_counts", "lower_bounds",
                              "upper_bounds")})
    return out


def test_compact_keeps_live_data_entries_and_rebuilds_their_maps() -> None:
    regular = _entries([
        {"path": f"a{i}", "vc": [(1, 10), (2, 10)], "nc": [(1, 0), (2, 3)],
         "lo": [(1, b"\x01"), (2, b"a")], "hi": [(1, b"\x09"), (2, b"z")]}
        for i in range(3)], "m1.avro")
    irregular = _entries([
        {"path": "b0", "vc": [(2, 5)], "nc": None, "lo": [(1, b"\x02")], "hi": []},
        {"path": "deleted", "status": 2, "vc": [(1, 1)]},
        {"path": "delete-file", "content": 1, "vc": [(1, 1)]},
        {"path": "b1", "vc": [(1, 7), (3, 2**40)], "nc": [(3, 1)], "lo": None, "hi": None},
    ], "m2.avro")
    compacts = compact_manifests([regular, irregular])
    assert [c.num_rows for c in compacts] == [3, 2]  # DELETED and delete files dropped
    assert compacts[0].block is compacts[1].block
    entries = compacts[1].entries
    assert "value_counts" not in [f.name for f in entries.schema.field("data_file").type]
    assert pa.types.is_dictionary(entries.schema.field("manifest_path").type)
    assert entries.column("manifest_path").to_pylist() == ["m2.avro"] * 2
    assert compacts[1].metrics.column("value_counts.3").to_pylist() == [None, 2**40]
    for compact, source in zip(compacts, (regular, irregular), strict=True):
        live = source.filter(pc.and_(pc.not_equal(source.column("status"), 2), pc.equal(
            pc.struct_field(source.column("data_file"), "content"), 0)))
        restored = restore_metrics(compact.entries, compact.metrics, compact.data_file_type)
        assert restored.schema.field("data_file").type == live.schema.field("data_file").type
        assert _maps(restored) == _maps(live)
        assert pc.struct_field(restored.column("data_file"), "file_path").to_pylist() == \
            pc.struct_field(live.column("data_file"), "file_path").to_pylist()
    (whole,) = runs(compacts)  # consecutive manifests of one block: one slice, no copy
    assert whole[0].num_rows == 5


def _block_value(nbytes: int, block: Any = None) -> Any:
    class Value:
        pass

    v = Value()
    v.nbytes = nbytes if block is None else block.nbytes  # type: ignore[attr-defined]
    v.block = block  # type: ignore[attr-defined]
    return v


def test_cache_counts_a_shared_block_once_and_frees_it_with_its_last_value() -> None:
    compacts = compact_manifests([_entries([{"path": "a", "vc": [(1, 1)]}], "m1"),
                                  _entries([{"path": "b", "vc": [(1, 1)]}], "m2")])
    block = compacts[0].block
    assert block.nbytes == compacts[1].nbytes > 0
    cache = ManifestCache(max_bytes=10 * block.nbytes)
    cache.put(("a",), compacts[0])
    cache.put(("b",), compacts[1])
    assert cache.nbytes == block.nbytes
    cache.discard(("a",))
    assert cache.nbytes == block.nbytes
    cache.discard(("b",))
    assert cache.nbytes == 0 and len(cache) == 0
    # eviction drops least recently used values until the budget holds
    small = ManifestCache(max_bytes=block.nbytes + 10)
    small.put(("a",), compacts[0])
    small.put(("x",), _block_value(20))
    assert small.get(("a",)) is None and small.nbytes == 20


def test_the_cache_budget_is_an_option() -> None:
    with reset_options():
        assert get_options().manifest_cache_bytes == 640 * 1024 * 1024
        cache = ManifestCache()
        assert cache.max_bytes == get_options().manifest_cache_bytes
        with icenb.set_options(manifest_cache_bytes=100):
            assert cache.max_bytes == 100
            cache.put(("big",), _block_value(200))
            assert len(cache) == 0
            cache.put(("small",), _block_value(50))
            assert cache.nbytes == 50
        assert ManifestCache(max_bytes=7).max_bytes == 7
        for bad in (0, -1, True, "1GB", 1.5):
            with pytest.raises(ValidationError):
                icenb.set_options(manifest_cache_bytes=bad)


@pytest.mark.parametrize("name", ["db.v2_partition_evolution", "db.v2_merge_on_read",
                                  "db.v2_maintenance"])
def test_streamed_groups_plan_as_one_group_and_warm_plans_open_nothing(
        java_tables: JavaTables, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    md = load_table_metadata(str(java_tables.location(name)))
    filters = ["true", "id > 3", "id < 2 or id > 5"]
    whole = {f: plan_files(FileIO(), md, row_filter=f, column_stats=True) for f in filters}
    monkeypatch.setattr(planning, "PLAN_GROUP_BYTES", 1)  # a group per manifest
    cache = ManifestCache()
    for f in filters:
        io = FileIO()
        cold = plan_files(io, md, row_filter=f, cache=cache, column_stats=True)
        io.stats.reset()
        warm = plan_files(io, md, row_filter=f, cache=cache, column_stats=True)
        assert io.stats.opened == 0
        for plan in (cold, warm):
            assert plan.files_selected == whole[f].files_selected
            assert plan.files_considered == whole[f].files_considered
            assert plan.files.column("file_path").to_pylist() == \
                whole[f].files.column("file_path").to_pylist()
            assert _maps(plan.data_entries) == _maps(whole[f].data_entries)
    # a plan without stats is served by what plans with stats cached
    io = FileIO()
    plan_files(io, md, row_filter="true", cache=cache, column_stats=False)
    assert io.stats.opened == 0


def test_compact_entries_hold_what_decoding_gives(java_tables: JavaTables) -> None:
    md = load_table_metadata(str(java_tables.location("db.v2_partition_evolution")))
    snap = md.current_snapshot()
    assert snap is not None
    io = FileIO()
    manifests = [m for m in read_manifest_list(io, snap, md.format_version) if m.content == 0]
    tables = read_manifest_tables(io, manifests)
    whole = read_manifest_entries(io, manifests, md.format_version)
    compacts = compact_manifests(tables)
    assert sum(c.num_rows for c in compacts) == pc.sum(pc.and_(
        pc.not_equal(whole.column("status"), 2),
        pc.equal(pc.struct_field(whole.column("data_file"), "content"), 0))).as_py()


def test_deflate_blocks_inflate_alike_with_and_without_isal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import zlib

    from icenb.io import avro

    data = bytes(range(256)) * 300 + b"manifest" * 5000
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    blob = c.compress(data) + c.flush()
    assert avro._inflate_function()(blob) == data
    monkeypatch.setitem(sys.modules, "isal", None)  # not installed: zlib
    assert avro._inflate_function()(blob) == data


def test_several_manifests_per_kernel_run_decode_as_one_each(java_tables: JavaTables) -> None:
    import json

    from icenb.io import avro, avro_compiled

    if not avro_compiled.available():
        pytest.skip("numba not installed")
    md = load_table_metadata(str(java_tables.location("db.v2_maintenance")))
    io = FileIO()
    paths = {m.manifest_path for snap in md.snapshots
             for m in read_manifest_list(io, snap, md.format_version)}
    parsed = [avro._parse(p, io.new_input(p).read()) for p in sorted(paths)]
    parsed = [p for p in parsed if p.schema_text == parsed[0].schema_text]
    assert len(parsed) > 2
    target = avro.avro_arrow_schema(parsed[0].name, json.loads(parsed[0].schema_text))
    keep = avro._keep_for(None)
    blocks = [p.blocks for p in parsed]
    one = avro_compiled.decode_files(blocks, parsed[0].schema_text, keep, None, target)
    grouped = avro_compiled.decode_files(blocks, parsed[0].schema_text, keep, None, target,
                                         threads=2, files_per_call=2)
    assert one is not None and grouped is not None
    assert [t.num_rows for t in grouped] == [t.num_rows for t in one]
    for a, b in zip(one, grouped, strict=True):
        assert a.equals(b)
