"""The two ways planning reads a v4 data leaf give the same entry table (docs/v4-layout.md
docs/v4-layout.md#planning): the columnar path (``_data_leaf_table``, straight from the Avro
columns) and the
entry-object path (``ContentEntry`` objects, rule checks, inheritance, ``entries_table``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

import icenb
from icenb.io.file_io import FileIO
from icenb.io.root_manifest import (
    decode_content_manifest,
    decode_content_manifest_table,
    read_root_manifest,
)
from icenb.spec.content_entry import InheritFrom, inherit
from icenb.table.scan.v4_planning import _data_leaf_table, entries_table


def _rows(ids: range, p: int | None) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()),
                     "p": pa.array([p] * len(ids), pa.int32()),
                     "s": pa.array([None if i % 3 else f"s{i}" for i in ids], pa.string())})


def _compare_every_leaf(t: icenb.table.Table) -> int:
    md = t.metadata
    snap = md.current_snapshot()
    assert snap is not None and snap.root_manifest is not None
    io, specs = FileIO(), dict(md.specs_by_id)
    root = read_root_manifest(io, snap.root_manifest, snapshot_id=snap.snapshot_id,
                              sequence_number=snap.sequence_number)
    compared = 0
    for leaf in root.entries:
        if not (leaf.is_live and leaf.content_type.is_manifest
                and leaf.content_type.name == "DATA_MANIFEST"):
            continue
        data = io.new_input(leaf.location).read()
        kind, raw = decode_content_manifest_table(leaf.location, data)
        m = decode_content_manifest(leaf.location, data)
        entries = inherit(m.entries, InheritFrom.from_root_entry(leaf), file=leaf.location)
        for stats in (True, False):
            fast = _data_leaf_table(leaf, kind, raw, leaf.location, specs, md.schema, stats,
                                    snap.root_manifest)
            slow = entries_table(entries, manifest_path=leaf.location, specs=specs,
                                 schema=md.schema, column_stats=stats)
            assert fast is not None, leaf.location
            assert fast.equals(slow, check_metadata=True), leaf.location
        compared += 1
    return compared


def test_added_existing_and_compacted_leaves_read_the_same_both_ways(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long not null, p int, s string", partition_by=["p"],
                        format_version=4,
                        properties={"write.v4.root-entry-limit": "0",
                                    "write.v4.compaction.min-count-to-merge": "2"})
    # ADDED leaves with several partitions, a null partition value and null-only columns
    t.append(pa.concat_tables([_rows(range(0, 5), 1), _rows(range(5, 9), None),
                               _rows(range(9, 12), 2)]))
    t.append(_rows(range(20, 24), 3))
    t.delete("p = 2")                       # a manifest DV over the first leaf
    t.append(_rows(range(30, 33), 1))       # compaction: EXISTING entries with resolved values
    assert _compare_every_leaf(t) >= 2
    assert sorted(t.to_arrow().column("id").to_pylist()) == [
        *range(0, 9), *range(20, 24), *range(30, 33)]


def test_a_bucketed_table_after_partition_evolution(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long not null, p int, s string",
                        partition_by=["bucket(4, id)"], format_version=4,
                        properties={"write.v4.root-entry-limit": "0"})
    t.append(pa.concat_tables([_rows(range(0, 10), 1), _rows(range(10, 20), 2)]))
    with t.update_spec() as u:
        u.add_field("p")
    t.append(_rows(range(40, 50), 7))
    assert _compare_every_leaf(t) == 2
