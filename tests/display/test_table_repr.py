"""The table card and the warehouse, catalog, ref-change and expiry cards."""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.spec.table_metadata import LazySequence, table_metadata_from_json
from icenb.table.table import Table
from icenb.table.warehouse import Warehouse

EVIL = '<b>&"x"'
EVIL_HTML = "&lt;b&gt;&amp;&quot;x&quot;"
DAY_MS = 86_400_000


def _rows(html: str) -> list[list[str]]:
    """Table rows of an HTML fragment as lists of cell texts (tags stripped)."""
    out = []
    for tr in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr)]
        if cells:
            out.append(cells)
    return out


def _section(html: str, title: str) -> str:
    """The body of the collapsible section titled ``title``."""
    m = re.search(r"<summary>" + re.escape(title) + r"(.*?)</summary>(.*?)</details>", html,
                  re.S)
    assert m is not None, f"no section {title!r}"
    return m.group(2)


def _batch(ids: list[int], day: int) -> pa.Table:
    ts = pa.array([dt.datetime(2024, 1, day)] * len(ids), pa.timestamp("us"))
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": ts,
                     "data": [f"r{i}" for i in ids]})


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return icenb.warehouse(tmp_path)


@pytest.fixture
def table(wh: Warehouse) -> Table:
    t = wh.create_table("db.events", "id long not null, ts timestamp, data string",
                        partition_by=["day(ts)"], sort_by=["id desc"])
    t.append(_batch([1, 2, 3], 1))
    t.create_tag("v1", max_ref_age_ms=7 * DAY_MS)
    t.append(_batch([4, 5], 2))
    t.create_branch("audit", min_snapshots_to_keep=3, max_snapshot_age_ms=36 * 3_600_000)
    t.set_properties({EVIL: "<i>value</i>"})
    t.delete("id = 4", mode="merge-on-read")
    return t


def test_table_card_header_summary_and_sections(table: Table) -> None:
    md = table.metadata
    cur = md.current_snapshot_id
    html = render(table).html
    assert '<span class="icenb-title">db.events</span>' in html
    assert f"format v2 · 3 snapshots · 3 refs · current {cur}" in html
    summary = table.current_snapshot.summary  # type: ignore[union-attr]
    assert summary is not None
    # the totals are those of the current snapshot's summary
    assert summary["total-records"] == "5" and summary["total-delete-files"] == "1"
    assert "5 rows · 2 data files · 1 delete file · " in html
    for title in ("Schema", "Partition spec", "Sort order", "Branches &amp; tags",
                  "Recent snapshots", "Properties", "Metadata"):
        assert f"<summary>{title}" in html
    assert "<details open><summary>Schema" in html  # the schema is open, the rest folded
    spec = _section(html, "Partition spec")
    assert "ts_day" in spec and "day" in spec and "ts" in spec
    assert "id" in _section(html, "Sort order") and "desc" in _section(html, "Sort order")


def test_branches_and_tags_main_first_with_retention(table: Table) -> None:
    md = table.metadata
    refs = _rows(_section(render(table).html, "Branches &amp; tags"))
    assert [r[:2] for r in refs] == [["maincurrent", "branch"], ["audit", "branch"],
                                     ["v1", "tag"]]
    assert refs[0][2] == str(md.current_snapshot_id)
    assert refs[1][3] == "keep ≥ 3 snapshots · snapshots ≤ 36h old"
    assert refs[2][3] == "ref expires after 7d"
    assert refs[2][2] == str(md.refs["v1"].snapshot_id)


def test_recent_snapshots_newest_first_with_changes_and_refs(table: Table) -> None:
    md = table.metadata
    html = render(table).html
    rows = _rows(_section(html, "Recent snapshots"))
    snaps = sorted(md.snapshots, key=lambda s: s.timestamp_ms, reverse=True)
    assert [r[0] for r in rows] == [str(s.snapshot_id) for s in snaps]
    delete, second, first = rows
    assert delete[2:5] == ["delete", "+1 delete", "+1 pos. deletes"]
    assert delete[5] == "currentmain"
    assert second[2:5] == ["append", "+1", "+2"] and second[5] == "audit"
    assert first[2:5] == ["append", "+1", "+3"] and first[5] == "v1"
    assert "t.snapshots draws the tree" in html


def test_properties_and_metadata_are_escaped_and_complete(table: Table) -> None:
    md = table.metadata
    html = render(table).html
    assert EVIL not in html and "<i>value" not in html
    props = _rows(_section(html, "Properties"))
    assert [EVIL_HTML, "&lt;i&gt;value&lt;/i&gt;"] in props
    meta = dict(_rows(_section(html, "Metadata")))
    assert meta["location"] == md.location
    assert meta["metadata file"] == table.metadata_location
    assert meta["table uuid"] == md.table_uuid
    assert meta["last sequence number"] == str(md.last_sequence_number) == "3"
    assert meta["previous metadata files"] == str(len(md.metadata_log))


def test_text_repr_is_the_card_as_text(table: Table) -> None:
    text = mimebundle(table)["text/plain"]
    md = table.metadata
    assert text.splitlines()[0] == (f"Table db.events  (format v2 · 3 snapshots · 3 refs · "
                                    f"current {md.current_snapshot_id})")
    assert text.splitlines()[1] == "  5 rows · 2 data files · 1 delete file · " + \
        text.splitlines()[1].rsplit(" · ", 1)[1]
    for line in ("Schema:", "Branches & tags:", "Properties:", "Metadata:"):
        assert line in text.splitlines()
    assert f"  {EVIL}" in text  # plain text is not escaped
    # repr() stays one line, for tracebacks, lists and logs
    one = repr(table)
    assert "\n" not in one and f"current_snapshot_id={md.current_snapshot_id}" in one
    assert "snapshots=3" in one
    assert str(table) == text  # print(table) shows the card


def test_empty_table(wh: Warehouse) -> None:
    t = wh.create_table("db.empty", "id long")
    r = render(t)
    assert "empty table (no snapshot yet)" in r.html and "empty table" in r.text
    assert "no snapshots" in r.html and "no branches or tags" in r.html
    assert "format v2 · 0 snapshots · 0 refs · no current snapshot" in r.html


def test_refs_and_properties_fold(table: Table) -> None:
    for i in range(10):
        table.create_tag(f"t{i:02d}")
    table.set_properties({f"p{i:02d}": str(i) for i in range(30)})
    with icenb.set_options(display_max_rows=4):
        r = render(table)
    refs = _section(r.html, "Branches &amp; tags")
    assert [row[0] for row in _rows(refs)] == ["maincurrent", "audit", "t09", "v1"]
    assert "… 9 more refs …" in refs
    props = _section(r.html, "Properties")
    assert [row[0] for row in _rows(props)] == [EVIL_HTML, "p00", "p29",
                                                "write.parquet.compression-codec"]
    assert "… 28 more properties …" in props
    assert "… 9 more refs …" in r.text and "… 28 more properties …" in r.text


def _many_snapshots(table: Table, n: int) -> dict[str, Any]:
    """The table's metadata JSON with ``n`` snapshots in one chain, timestamps increasing."""
    loc = table.metadata_location
    assert loc is not None
    doc = json.loads(Path(loc.removeprefix("file:")).read_text())
    template = doc["snapshots"][0]
    snaps = []
    for i in range(1, n + 1):
        s = copy.deepcopy(template)
        s.update({"snapshot-id": i, "sequence-number": i,
                  "timestamp-ms": 1_700_000_000_000 + i * 1000})
        if i > 1:
            s["parent-snapshot-id"] = i - 1
        else:
            s.pop("parent-snapshot-id", None)
        snaps.append(s)
    doc.update({"snapshots": snaps, "current-snapshot-id": n, "last-sequence-number": n,
                "snapshot-log": [], "refs": {"main": {"snapshot-id": n, "type": "branch"},
                                             "old": {"snapshot-id": 1, "type": "tag"}}})
    return doc


def test_ten_thousand_snapshots_parse_only_the_shown_ones(table: Table) -> None:
    md = table_metadata_from_json(json.dumps(_many_snapshots(table, 10_000)))
    assert isinstance(md.snapshots, LazySequence)
    t = Table(md, table.io, opened_from="memory")
    start = time.perf_counter()
    with reset_options():
        r = render(t)
    elapsed = time.perf_counter() - start
    print(f"table card, 10,000 snapshots: {elapsed * 1000:.1f} ms, {len(r.html):,} chars html")
    assert md.snapshots.parsed_count <= 20 + 2  # the shown ones, the current one and the tag
    rows = _rows(_section(r.html, "Recent snapshots"))
    assert [row[0] for row in rows[:20]] == [str(i) for i in range(10_000, 9_980, -1)]
    assert "… 9,980 more older snapshots …" in r.html and "… 9,980 more older snapshots …" in \
        r.text
    assert "format v2 · 10,000 snapshots · 2 refs · current 10000" in r.html


def test_an_unreadable_snapshot_is_a_row_not_a_failure(table: Table) -> None:
    doc = _many_snapshots(table, 5)
    doc["snapshots"][2]["summary"] = "not a summary"
    md = table_metadata_from_json(json.dumps(doc))
    r = render(Table(md, table.io, opened_from="memory"))
    assert "could not be displayed" not in r.html  # not the fallback card
    rows = _rows(_section(r.html, "Recent snapshots"))
    assert [row[0] for row in rows] == ["5", "4", "unreadable", "2", "1"]
    assert rows[2][1] == "snapshots[2]" and "(unreadable)  snapshots[2]" in r.text


def test_a_summary_without_totals_and_a_v1_snapshot(table: Table) -> None:
    doc = _many_snapshots(table, 2)
    for s in doc["snapshots"]:
        s["summary"] = {"operation": "append"}
    md = table_metadata_from_json(json.dumps(doc))
    r = render(Table(md, table.io, opened_from="memory"))
    assert "no totals in the current snapshot&#x27;s summary" in r.html
    assert [row[2:5] for row in _rows(_section(r.html, "Recent snapshots"))] == \
        [["append", "-", "-"]] * 2


def test_a_broken_table_falls_back_instead_of_raising() -> None:
    broken = Table.__new__(Table)
    r = render(broken)
    assert "could not be displayed" in r.html and "Table" in r.text


def test_rendering_is_deterministic(table: Table, wh: Warehouse) -> None:
    again = wh.table("db.events")
    assert render(table).html == render(table).html == render(again).html
    assert repr(table) == repr(again)


def test_warehouse_and_catalog_cards_do_no_io(wh: Warehouse, table: Table,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cat = wh.catalog

    def no_io(*_: Any, **__: Any) -> Any:
        raise AssertionError("a repr listed the catalog")
    for name in ("list_namespaces", "list_tables", "all_tables", "load_table",
                 "namespace_exists"):
        monkeypatch.setattr(type(cat), name, no_io)
    r = render(wh)
    kv = dict(_rows(r.html))
    assert kv["catalog name"] == "default" and kv["warehouse"] == wh.location
    assert kv["database"].endswith("catalog.db")
    assert "wh.tables()" in r.html and "wh.namespaces()" in r.text
    c = render(cat)
    assert "SqlCatalog" in c.html and "cat.list_namespaces()" in c.text
    assert repr(wh) == f"Warehouse({wh.location!r})"  # small objects keep their repr


def test_filesystem_catalog_card(tmp_path: Path) -> None:
    w = icenb.warehouse(tmp_path / f"x{EVIL}", catalog="filesystem")
    r = render(w.catalog)
    kv = dict(_rows(r.html))
    assert kv["kind"] == "filesystem catalog (Hadoop layout)"
    assert kv["warehouse"].endswith("x" + EVIL_HTML)
    assert EVIL not in r.html


def test_manage_snapshots_shows_pending_changes(table: Table) -> None:
    md = table.metadata
    cur = md.current_snapshot_id
    with table.manage_snapshots() as m:
        m.create_tag("release")
        m.remove_branch("audit")
        m.replace_tag("v1", cur)  # type: ignore[arg-type]
        r = render(m)
        assert "pending" in r.html
        assert _rows(r.html) == [
            ["audit", "removed", f"branch → {md.refs['audit'].snapshot_id}", "-"],
            ["release", "added", "-", f"tag → {cur}"],
            ["v1", "changed", f"tag → {md.refs['v1'].snapshot_id}", f"tag → {cur}"]]
    assert "committed" in render(m).text


def test_expire_snapshots_result(table: Table) -> None:
    table.remove_tag("v1")
    table.remove_branch("audit")
    first = table.metadata.snapshots[0].snapshot_id
    with icenb.set_options(display_max_rows=1):
        r = render(table.expire_snapshots(older_than=2**62, retain_last=1, dry_run=True))
    assert "dry run" in r.html
    kv = dict(row for row in _rows(r.html) if len(row) == 2 and not row[1].startswith("/"))
    assert kv["expired snapshots"] == f"2: {first}, … 1 more snapshots …"
    assert kv["would delete manifest lists"] == "2"
    files = _rows(_section(r.html, "Files"))
    assert [row[0] for row in files] == ["manifest lists"]
    assert "… 1 more files …" in _section(r.html, "Files")
    assert re.search(r"would delete manifest lists: +2\n", r.text)
