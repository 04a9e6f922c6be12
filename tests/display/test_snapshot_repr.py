"""Reprs of snapshots, summaries, refs, log entries, statistics files and table metadata."""

from __future__ import annotations

import copy
import datetime as dt
import gzip
import json
import re
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.display import render, reset_options
from icenb.display.snapshot_repr import summary_fragment
from icenb.spec.snapshot import (
    BlobMetadata,
    MetadataLogEntry,
    PartitionStatisticsFile,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    Summary,
)
from icenb.spec.table_metadata import LazySequence, TableMetadata, table_metadata_from_json
from icenb.table.table import Table
from tests.reference_fixtures import JavaTables

EVIL = '<b>&"x"'
DAY_MS = 86_400_000


def _cells(html: str) -> list[list[str]]:
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr)]
        if cells:
            rows.append(cells)
    return rows


@pytest.fixture
def table(tmp_path: Path) -> Table:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long not null, ts timestamp, data string",
        partition_by=["day(ts)"], sort_by=["id desc"])
    ts = pa.array([dt.datetime(2024, 1, 1)] * 3, pa.timestamp("us"))
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "ts": ts,
                       "data": ["a", "b", "c"]}))
    t.create_tag("v1", max_ref_age_ms=7 * DAY_MS)
    t.create_branch("audit", min_snapshots_to_keep=3, max_snapshot_age_ms=36 * 3_600_000)
    t.set_properties({EVIL: "<i>value</i>"})
    t.delete("id = 1")
    return t


def test_table_metadata_card(table: Table) -> None:
    md = table.metadata
    with reset_options():
        r = render(md)
    kv = dict(row for row in _cells(r.html) if len(row) == 2)
    assert kv["format version"] == "2"
    assert kv["table uuid"] == md.table_uuid
    assert kv["location"] == md.location
    assert kv["last sequence number"] == "2"
    assert kv["last column id"] == "3"
    assert kv["current snapshot"] == str(md.current_snapshot_id)
    assert kv["contains"].startswith("1 schema, 1 spec, 1 sort order, 2 snapshots, 3 refs")
    # the current schema is embedded as its own card, the spec names its source column
    assert '<span class="icenb-kind">Schema</span>' in r.html
    assert ["1000", "ts_day", "day", "ts (2)"] in _cells(r.html)
    assert ["identity", "id (1)", "desc", "nulls last"] in _cells(r.html)
    # refs: badges and retention
    refs = {row[0]: row for row in _cells(r.html) if row[0] in ("main", "v1", "audit")
            and len(row) == 4}
    assert refs["v1"][1:] == ["tag", str(md.refs["v1"].snapshot_id), "max-ref-age=7d"]
    assert refs["audit"][3] == "min-snapshots-to-keep=3, max-snapshot-age=36h"
    assert 'icenb-b-tag">v1<' in r.html and 'icenb-b-branch">audit<' in r.html
    # properties are escaped
    assert "&lt;b&gt;&amp;&quot;x&quot;" in r.html and EVIL not in r.html
    assert "&lt;i&gt;value&lt;/i&gt;" in r.html
    assert render(md).html == r.html  # deterministic


def test_table_metadata_text_keeps_the_one_line_repr_first(table: Table) -> None:
    md = table.metadata
    text = repr(md)
    first = text.splitlines()[0]
    assert first.startswith("TableMetadata(format_version=2, ")
    assert f"current_snapshot_id={md.current_snapshot_id}" in first
    assert "  current schema:" in text and "    Schema 0" in text
    assert "ts_day" in text
    assert re.search(rf"^    v1 +tag +{md.refs['v1'].snapshot_id} +max-ref-age=7d$", text, re.M)


def test_snapshot_card_groups_the_summary(table: Table) -> None:
    snap = table.current_snapshot
    assert snap is not None and snap.summary is not None
    r = render(snap)
    rows = _cells(r.html)
    kv = {row[0]: row[1] for row in rows if len(row) == 2}
    assert kv["snapshot id"] == str(snap.snapshot_id)
    assert kv["parent"] == str(snap.parent_snapshot_id)
    assert kv["sequence number"] == "2"
    assert kv["operation"] == str(snap.operation)
    assert kv["manifest list"] == snap.manifest_list
    s = snap.summary
    groups = {row[0]: row[1:] for row in rows if len(row) == 4}
    assert groups["data files"] == [s.get("added-data-files", ""), s.get("deleted-data-files", ""),
                                    s["total-data-files"]]
    assert groups["records"][2] == s["total-records"] == "2"
    assert groups["size"][2] == f"{int(s['total-files-size'])} B"
    assert ["engine-name", "icenb"] in rows  # other keys after the groups
    assert r.text.splitlines()[0] == f"Snapshot {snap.snapshot_id}"


def test_summary_fragment_formats_escapes_and_folds() -> None:
    props = {"added-data-files": "1200", "total-files-size": str(3 * 1024 * 1024),
             "added-records": "not-a-number", EVIL: "<v>"}
    props.update({f"k{i:02}": str(i) for i in range(30)})
    with icenb.set_options(display_max_rows=4):
        r = summary_fragment(Summary("append", props))
    rows = _cells(r.html)
    assert ["data files", "1,200", "", ""] in rows
    assert ["records", "not-a-number", "", ""] in rows
    assert ["size", "", "", "3.0 MiB"] in rows
    assert "… 27 more summary properties …" in r.html and "… 27 more summary properties …" in r.text
    assert "&lt;b&gt;&amp;&quot;x&quot;" in r.html  # shown in the head (file order)
    assert 'icenb-b-added">append<' in r.html
    assert summary_fragment(None).text == "no summary"
    assert "added-data-files" not in r.text  # grouped keys are not repeated


def test_small_objects() -> None:
    ref = SnapshotRef.branch(5, min_snapshots_to_keep=3, max_snapshot_age_ms=DAY_MS)
    assert render(ref).text == "branch -> 5 (min-snapshots-to-keep=3, max-snapshot-age=1d)"
    assert render(SnapshotRef.tag(6)).text == "tag -> 6"
    assert render(SnapshotLogEntry(0, 7)).text == "1970-01-01 00:00:00.000  7"
    assert render(MetadataLogEntry(1000, "s3://b/<m>.json")).html == (
        '<span class="icenb-muted">1970-01-01 00:00:01.000</span> <code>s3://b/&lt;m&gt;.json</code>')
    blob = BlobMetadata("apache-datasketches-theta-v1", 9, 3, (1, 2), {"ndv": "10"})
    stats = StatisticsFile(9, "/w/t/metadata/s.stats", 2048, 100, (blob,))
    r = render(stats)
    assert ["apache-datasketches-theta-v1", "9", "3", "1, 2", "ndv=10"] in _cells(r.html)
    assert "size:        2.0 KiB" in r.text
    assert "2.0 KiB" in render(PartitionStatisticsFile(9, "/p.parquet", 2048)).text
    # small objects keep their own one-line repr
    assert repr(ref).startswith("SnapshotRef(snapshot_id=5")


def _many_snapshots(table: Table, n: int) -> dict[str, Any]:
    """The table's metadata JSON with ``n`` snapshots in one chain (and as many log entries)."""
    loc = table.metadata_location
    assert loc is not None
    doc = json.loads(Path(loc.removeprefix("file:")).read_text())
    template = doc["snapshots"][0]
    snaps, log = [], []
    for i in range(1, n + 1):
        s = copy.deepcopy(template)
        s.update({"snapshot-id": i, "sequence-number": i, "timestamp-ms": 1_700_000_000_000 + i})
        if i > 1:
            s["parent-snapshot-id"] = i - 1
        else:
            s.pop("parent-snapshot-id", None)
        snaps.append(s)
        log.append({"snapshot-id": i, "timestamp-ms": 1_700_000_000_000 + i})
    doc.update({"snapshots": snaps, "snapshot-log": log, "current-snapshot-id": n,
                "last-sequence-number": n,
                "refs": {"main": {"snapshot-id": n, "type": "branch"},
                         "old": {"snapshot-id": 1, "type": "tag"}}})
    return doc


def test_ten_thousand_snapshots_parse_only_the_shown_ones(table: Table) -> None:
    md = table_metadata_from_json(json.dumps(_many_snapshots(table, 10_000)))
    assert isinstance(md.snapshots, LazySequence)
    start = time.perf_counter()
    with reset_options():
        r = render(md)
    elapsed = time.perf_counter() - start
    print(f"render 10,000-snapshot metadata: {elapsed * 1000:.1f} ms")
    assert md.snapshots.parsed_count <= 40 + 2  # the shown ones, plus current and the tag
    assert "… 9,960 more snapshots …" in r.html and "… 9,960 more snapshots …" in r.text
    assert "… 9,960 more snapshot log entries …" in r.html
    ids = [row[0].split()[0] for row in _cells(r.html) if row and row[0][:1].isdigit()
           and len(row) == 6]
    assert ids[:20] == [str(i) for i in range(1, 21)]
    assert ids[-20:] == [str(i) for i in range(9981, 10_001)]


def test_an_unreadable_snapshot_becomes_an_error_row(table: Table) -> None:
    doc = _many_snapshots(table, 5)
    doc["snapshots"][2]["timestamp-ms"] = "yesterday"
    md = table_metadata_from_json(json.dumps(doc))
    r = render(md)
    assert "could not be displayed" not in r.html  # not the fallback card
    assert "snapshots[2]" in r.html and "snapshots[2]: unreadable" in r.text
    assert sum(1 for row in _cells(r.html) if len(row) == 6 and row[0][:1].isdigit()) == 4


def test_a_broken_object_falls_back_instead_of_raising(table: Table) -> None:
    md = table.metadata
    broken = TableMetadata.__new__(TableMetadata)
    broken.__dict__.update({k: getattr(md, k) for k in ("format_version", "location")})
    r = render(broken)
    assert "could not be displayed" in r.html and "TableMetadata" in r.text


def test_java_tables_render(java_tables: JavaTables) -> None:
    for name in ("db.v2_refs", "db.v2_maintenance", "db.v2_expire_snapshots",
                 "db.v3_deletion_vectors", "db.v1_partition_evolution"):
        f = java_tables.latest(name)
        data = f.path.read_bytes()
        md = table_metadata_from_json(gzip.decompress(data) if f.gzip else data)
        r = render(md)
        assert "could not be displayed" not in r.html, name
        for ref_name in md.refs:
            assert f">{ref_name}<" in r.html
        for stats in md.statistics:
            sr = render(stats)
            for blob in stats.blob_metadata:
                assert blob.blob_type in sr.text
        for s in md.snapshots[-3:]:
            assert str(s.snapshot_id) in r.text
