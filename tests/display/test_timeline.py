"""Timelines of the snapshot log, the metadata log and a view's version log: one node per entry,
rollbacks labelled, the current entry marked, folding, tables, escaping, partial input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display import mimebundle, reset_options
from icenb.display.history.timeline import (
    metadata_log_timeline,
    snapshot_log_timeline,
    view_version_timeline,
)
from icenb.display.kit.fmt import file_name, timestamp
from icenb.spec.table_metadata import table_metadata_from_json
from icenb.spec.view_metadata import ViewMetadata, view_metadata_from_json
from icenb.table.explore.history import SnapshotLog, ViewVersionLog, view_version_log
from tests.display.test_snapshot_tree import _big_metadata, edges, history_table, kind, nodes


@pytest.fixture(autouse=True)
def _defaults() -> Any:
    with reset_options():
        yield


def test_snapshot_log_timeline_labels_the_rollback(tmp_path: Path) -> None:
    t, s = history_table(tmp_path)
    log = t.history
    ids = [e.snapshot_id for e in log]
    # s0 s1 s2 s3, rolled back to s1, the cherry-pick, the last append
    assert ids == [s["s0"], s["s1"], s["s2"], s["s3"], s["s1"], s["picked"], s["head"]]
    g = snapshot_log_timeline(log)
    # seven entries do not fit one notebook-wide row: rows of neighbours, read left to right
    assert 'rankdir="TB"' in g.dot and '{rank=same; "e0" "e1"' in g.dot
    ns, es = nodes(g.dot), edges(g.dot)
    assert list(ns) == [f"e{i}" for i in range(7)]
    for i, e in enumerate(log):
        short = next(x for x in ("S1", "S2", "S3", "S4", "S5", "S6", "S7")
                     if f"\\n{x}\\n" in ns[f"e{i}"][0])   # the short label, full id as tooltip
        assert f'tooltip="snapshot {e.snapshot_id}"' in ns[f"e{i}"][1], short
        assert timestamp(e.timestamp_ms) in ns[f"e{i}"][0]
    chain = [(a, b) for a, b, attrs in es if "invis" not in attrs]   # invisible: row stacking
    assert chain == [(f"e{i}", f"e{i + 1}") for i in range(6)]
    # the edge from a row's end to the next row's start does not pull the rows into a staircase
    assert all("constraint" in attrs for a, b, attrs in es if (a, b) == ("e3", "e4"))
    assert [(a, b) for a, b, attrs in es if "rollback" in attrs] == [("e3", "e4")]
    label, attrs = ns["e6"]
    assert kind(attrs) == "snapshot_current" and "bold" in attrs and "(current)" in label
    assert sum("bold" in a for _, a in ns.values()) == 1
    text = repr(log)
    assert text.splitlines()[0] == "Snapshot log: 7 entries, 1 rollback"
    assert re.search(rf"^  5 .* {s['s1']} +append +rollback$", text, re.M)
    assert re.search(rf"^  7 .* {s['head']} +append +current$", text, re.M)
    with icenb.set_options(display_graph_renderer="none"):
        html = mimebundle(log)["text/html"]
    assert html.count("<style>") == 1
    assert 'icenb-b-warn">rollback<' in html and 'icenb-b-current">current<' in html


def test_snapshot_log_folds_and_stays_bounded(tmp_path: Path) -> None:
    md = table_metadata_from_json(_big_metadata(tmp_path, 10_000))
    log = SnapshotLog(md.snapshot_log, md)
    assert len(log) == 10_002
    g = snapshot_log_timeline(log)
    ns = nodes(g.dot)
    limit = icenb.get_options().display_max_snapshots
    assert len(ns) == limit + 1
    assert "… 9,962 entries …" in ns["fold"][0]
    assert {"e0", "e19", "e9982", "e10001"} <= set(ns) and "e20" not in ns
    # the rollback (entry 10000 goes back to 10995) is among the tail, labelled
    assert [(a, b) for a, b, attrs in edges(g.dot) if "rollback" in attrs] == [
        ("e9999", "e10000")]
    with icenb.set_options(display_max_snapshots=4, display_graph_renderer="none"):
        g4 = snapshot_log_timeline(log)
        bundle = mimebundle(log)
    assert len(nodes(g4.dot)) == 5 and "… 9,998 entries …" in nodes(g4.dot)["fold"][0]
    assert "rollback" not in nodes(g4.dot)["fold"][0]   # the rollback is shown, not folded
    assert [(a, b) for a, b, attrs in edges(g4.dot) if "rollback" in attrs] == [
        ("fold", "e10000")]
    with icenb.set_options(display_max_snapshots=2):
        assert "1 rollback" in nodes(snapshot_log_timeline(log).dot)["fold"][0]
    assert "… 9,998 more entries …" in bundle["text/html"]
    assert "… 9,998 more entries …" in bundle["text/plain"]
    assert bundle["text/html"].count("<tr>") <= 4 + 3
    assert len(bundle["text/plain"].splitlines()) == 1 + 1 + 4 + 1


def test_metadata_log_ends_at_the_current_file(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    for i in range(3):
        t.append([{"id": i}])
    log = t.metadata_log
    assert len(log) == 3
    g = metadata_log_timeline(log)
    ns = nodes(g.dot)
    assert list(ns) == ["e0", "e1", "e2", "e3"]
    for i, e in enumerate(log):
        assert file_name(e.metadata_file)[:14] in ns[f"e{i}"][0]   # the full name a hover away
        assert f'tooltip="{file_name(e.metadata_file)}"' in ns[f"e{i}"][1]
        assert kind(ns[f"e{i}"][1]) == "metadata" and "bold" not in ns[f"e{i}"][1]
    assert t.metadata_location is not None
    last_label, last_attrs = ns["e3"]
    assert file_name(t.metadata_location)[:14] in last_label and "(current)" in last_label
    assert timestamp(t.metadata.last_updated_ms) in last_label and "bold" in last_attrs
    text = repr(log)
    assert text.splitlines()[0] == ("Metadata log: 4 metadata files, 3 previous files + the "
                                    "current one")
    assert text.splitlines()[-1].endswith("current")
    assert "metadata/00003-" in text.splitlines()[-1]   # relative to the table location
    with icenb.set_options(display_max_snapshots=2, display_graph_renderer="none"):
        out = mimebundle(log)
        folded = nodes(metadata_log_timeline(log).dot)
    assert "… 2 more metadata files …" in out["text/html"]
    assert list(folded) == ["e0", "fold", "e3"] and "… 2 metadata files …" in folded["fold"][0]


def view_doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "view-uuid": "3c6a7b8e-5d1f-4c2a-9e0b-7f1d2c3b4a59",
        "format-version": 1,
        "location": "s3://bucket/wh/db/v",
        "properties": {},
        "schemas": [{"schema-id": 0, "type": "struct",
                     "fields": [{"id": 1, "name": "x", "required": False, "type": "long"}]}],
        "current-version-id": 2,
        "versions": [
            {"version-id": v, "timestamp-ms": 1_700_000_000_000 + v, "schema-id": 0,
             "summary": {"engine-name": 'Spark <b>&"x"', "operation": "replace"},
             "default-namespace": ["db"],
             "representations": [{"type": "sql", "dialect": "spark", "sql": f"SELECT {v}"}]}
            for v in (2, 3)],
        "version-log": [
            {"timestamp-ms": 1_700_000_000_000, "version-id": 1},
            {"timestamp-ms": 1_700_000_100_000, "version-id": 2},
            {"timestamp-ms": 1_700_000_200_000, "version-id": 3},
            {"timestamp-ms": 1_700_000_300_000, "version-id": 2},
        ],
    }
    doc.update(changes)
    return doc


def test_view_version_log_with_a_rollback() -> None:
    md = view_metadata_from_json(view_doc())
    assert isinstance(md, ViewMetadata)
    log = view_version_log(md, "s3://bucket/wh/db/v/metadata/00003.metadata.json")
    assert isinstance(log, ViewVersionLog) and [e.version_id for e in log] == [1, 2, 3, 2]
    assert log.metadata is md and log.metadata_location is not None
    g = view_version_timeline(log)
    ns, es = nodes(g.dot), edges(g.dot)
    assert [ns[f"e{i}"][0].split("\\n")[0] for i in range(4)] == [
        '"version 1', '"version 2', '"version 3', '"version 2']
    # version 1 is no longer retained: greyed; the others are view versions
    assert kind(ns["e0"][1]) == "removed" and "(not retained)" in ns["e0"][0]
    assert kind(ns["e1"][1]) == "view_version"
    assert [(a, b) for a, b, attrs in es if "rollback" in attrs] == [("e2", "e3")]
    assert "bold" in ns["e3"][1] and "(current)" in ns["e3"][0]
    assert '"x\\"' in ns["e1"][0]   # the quote in the engine name is DOT-escaped
    text = repr(log)
    assert text.splitlines()[0] == ("View version log: 4 entries, current version 2 · "
                                    "1 rollback")
    assert re.search(r"^  4 .* 2 +replace · .* +rollback current$", text, re.M)
    with icenb.set_options(display_graph_renderer="none"):
        html = mimebundle(log)["text/html"]
    assert "Spark &lt;b&gt;&amp;&quot;x&quot;" in html and 'Spark <b>&"x"' not in html
    assert 'icenb-b-warn">rollback<' in html
    assert mimebundle(log)["text/html"] == mimebundle(log)["text/html"]


def test_view_version_log_folds() -> None:
    entries = [{"timestamp-ms": 1_700_000_000_000 + i, "version-id": 2 + i % 2}
               for i in range(500)]
    md = view_metadata_from_json(view_doc(**{"version-log": entries}))
    assert isinstance(md, ViewMetadata)
    with icenb.set_options(display_max_snapshots=6):
        g = view_version_timeline(view_version_log(md))
    ns = nodes(g.dot)
    assert len(ns) == 7 and "… 494 entries …" in ns["fold"][0]
    assert "247 rollbacks" in ns["fold"][0]   # every move from 3 back to 2 is one


def test_empty_logs_render(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    assert repr(t.history) == "Snapshot log: 0 entries"
    assert nodes(snapshot_log_timeline(t.history).dot) == {}
    out = mimebundle(t.metadata_log)
    assert "display failed" not in out["text/plain"]
    assert out["text/plain"].startswith("Metadata log: 1 metadata file,")
