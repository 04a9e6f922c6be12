"""The snapshot tree: nodes, parent edges, refs, the current marker, rollbacks, cherry-picks,
expired parents, folding of long histories, the text outline, the card, escaping."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.display import mimebundle, reset_options
from icenb.display.history.tree import snapshot_tree, summary_counts
from icenb.spec.table_metadata import table_metadata_from_json, table_metadata_to_json
from icenb.table import Table
from icenb.table.explore.history import Snapshots

NODE = re.compile(r'^\s*"([^"]+)" \[label=("(?:[^"\\]|\\.)*"|<.*>)(.*)\];$')
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"(?: \[(.*)\])?;$')


def nodes(dot: str) -> dict[str, tuple[str, str]]:
    """node id -> (label, attributes) of every node in the DOT text."""
    out = {}
    for line in dot.splitlines():
        m = NODE.match(line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def edges(dot: str) -> list[tuple[str, str, str]]:
    out = []
    for line in dot.splitlines():
        m = EDGE.match(line)
        if m:
            out.append((m.group(1), m.group(2), m.group(3) or ""))
    return out


def kind(attrs: str) -> str:
    m = re.search(r'class="([a-z_]+)"', attrs)
    assert m is not None
    return m.group(1)


@pytest.fixture(autouse=True)
def _defaults() -> Any:
    with reset_options():
        yield


def history_table(tmp_path: Path) -> tuple[Table, dict[str, int]]:
    """s0..s3 on main; tag v1 at s1; branch dev from s2 with a staged (wap) append; then main
    rolled back to s1 (orphaning s3), dev's head cherry-picked, and one more append."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, p string", partition_by=["p"])
    for i in range(4):
        t.append([{"id": i, "p": "a"}, {"id": 100 + i, "p": "b"}])
    s = [x.snapshot_id for x in t.snapshots]
    t.create_tag("v1", s[1])
    t.create_branch("dev", s[2])
    t.append([{"id": 9, "p": "c"}], branch="dev", snapshot_properties={"wap.id": "w1"})
    dev = t.refs["dev"].snapshot_id
    t.rollback_to(s[1])
    picked = t.cherry_pick(dev).snapshot_id
    t.append([{"id": 10, "p": "c"}])
    head = t.refs["main"].snapshot_id
    return t, {"s0": s[0], "s1": s[1], "s2": s[2], "s3": s[3], "dev": dev, "picked": picked,
               "head": head}


def test_summary_counts() -> None:
    assert summary_counts({"operation": "overwrite", "added-data-files": "3",
                           "added-records": "1200", "deleted-data-files": "1"}) \
        == "+3 files +1,200 rows / -1 file"
    assert summary_counts({"added-delete-files": "1", "deleted-records": "x"}) == "+1 delete file"
    assert summary_counts(None) == ""


def test_tree_of_a_table_with_branches_rollback_and_cherry_pick(tmp_path: Path) -> None:
    t, s = history_table(tmp_path)
    g = snapshot_tree(t.snapshots)
    ns, es = nodes(g.dot), edges(g.dot)
    snap_nodes = {k for k in ns if k.startswith("s")}
    assert snap_nodes == {f"s{x.snapshot_id}" for x in t.snapshots}   # all 7 shown, none folded
    assert not any(k.startswith("fold") for k in ns)
    # parent edges child -> parent
    parent_edges = {(a, b) for a, b, attrs in es if attrs == ""}
    for x in t.snapshots:
        if x.parent_snapshot_id is not None:
            assert (f"s{x.snapshot_id}", f"s{x.parent_snapshot_id}") in parent_edges
    # the current snapshot: its own kind, bold, "(current)"
    label, attrs = ns[f"s{s['head']}"]
    assert kind(attrs) == "snapshot_current" and "bold" in attrs and "(current)" in label
    assert label.startswith('"S7\\n') and "append  +1 file +1 row" in label
    assert f'tooltip="snapshot {s["head"]}"' in attrs   # the full id a hover away
    assert sum(1 for _, a in ns.values() if "snapshot_current" in a) == 1
    # refs as small nodes pointing at their snapshot
    main_label, main_attrs = ns[f"branch_{s['head']}"]
    assert main_label == '"main"' and kind(main_attrs) == "branch"
    assert ns[f"branch_{s['dev']}"][0] == '"dev"'
    assert ns[f"tag_{s['s1']}"][0] == '"v1"' and kind(ns[f"tag_{s['s1']}"][1]) == "tag"
    assert (f"tag_{s['s1']}", f"s{s['s1']}") in {(a, b) for a, b, _ in es}
    # s3 was orphaned by the rollback: greyed; the rollback edge goes s3 -> s1 (log order)
    assert kind(ns[f"s{s['s3']}"][1]) == "removed" and "not on any branch" in ns[f"s{s['s3']}"][0]
    assert all(kind(ns[f"s{x}"][1]) != "removed" for x in (s["s0"], s["s1"], s["s2"], s["dev"]))
    rollbacks = [(a, b) for a, b, attrs in es if 'label=" rollback "' in attrs]
    assert rollbacks == [(f"s{s['s3']}", f"s{s['s1']}")]
    assert 'style="dashed"' in next(a for x, y, a in es if (x, y) == rollbacks[0])
    # the cherry-pick: dotted edge from the new snapshot to its source; the source is staged
    picks = [(a, b, attrs) for a, b, attrs in es if "cherry-picked from" in attrs]
    assert [(a, b) for a, b, _ in picks] == [(f"s{s['picked']}", f"s{s['dev']}")]
    assert 'style="dotted"' in picks[0][2]
    assert "published wap.id w1" in ns[f"s{s['picked']}"][0]
    assert "staged wap.id w1" in ns[f"s{s['dev']}"][0]
    assert g.caption == "1 rollback in the snapshot log"


def test_text_outline_is_newest_first_with_lanes(tmp_path: Path) -> None:
    t, s = history_table(tmp_path)
    lines = snapshot_tree(t.snapshots).text.splitlines()
    ids = [int(m.group(1)) for ln in lines if (m := re.search(r"[*] S\d+ (\d+)", ln))]
    by_id = {x.snapshot_id: x for x in t.snapshots}
    assert len(ids) == 7 and [by_id[i].timestamp_ms for i in ids] == sorted(
        (by_id[i].timestamp_ms for i in ids), reverse=True)
    assert lines[0].startswith(f"* S7 {s['head']} (current, main) ")
    assert f"[cherry-picked from {s['dev']}]" in lines[1]
    dev_line = next(ln for ln in lines if str(s["dev"]) in ln and "(dev)" in ln)
    assert dev_line.startswith("| * ")   # a second lane
    assert any(f"{s['s3']}" in ln and "[not on any ref]" in ln for ln in lines)
    assert next(ln for ln in lines if f" {s['s1']} " in ln).startswith(f"* S2 {s['s1']} (tag: v1)")
    assert "|/" in lines   # lanes joining their common parent
    # the console repr is the outline under a header
    text = repr(t.snapshots)
    assert text.splitlines()[0] == (f"Snapshots: 7 snapshots, current {s['head']}, "
                                    "2 branches, 1 tag")
    assert lines[0] in text


def test_card_lists_the_shown_snapshots_with_ref_badges(tmp_path: Path) -> None:
    t, s = history_table(tmp_path)
    with icenb.set_options(display_graph_renderer="none"):
        html = mimebundle(t.snapshots)["text/html"]
        again = mimebundle(t.snapshots)["text/html"]
    assert html == again   # deterministic
    assert html.count("<style>") == 1 and "digraph" in html
    assert "Snapshots shown" in html and "7 of 7" in html
    row = re.search(rf"<tr><td>S7</td><td><code>{s['head']}</code></td>.*?</tr>", html)
    assert row is not None
    assert 'icenb-b-current">current<' in row.group(0) and 'icenb-b-branch">main<' in row.group(0)
    row_v1 = re.search(rf"<tr><td>S2</td><td><code>{s['s1']}</code></td>.*?</tr>", html)
    assert row_v1 is not None and 'icenb-b-tag">tag: v1<' in row_v1.group(0)


def test_long_linear_history_folds(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    for i in range(25):
        t.append([{"id": i}])
    snaps = list(t.snapshots)
    t.create_tag("old", snaps[10].snapshot_id)
    with icenb.set_options(display_max_snapshots=10):
        g = snapshot_tree(t.snapshots)
        text = repr(t.snapshots)
    ns = nodes(g.dot)
    assert len(ns) <= 10
    shown = {int(k[1:]) for k in ns if k.startswith("s")}
    folds = {k: v[0] for k, v in ns.items() if k.startswith("fold")}
    hidden = [int(m.group(1).replace(",", "")) for v in folds.values()
              if (m := re.search(r"… ([\d,]+) snapshots? …", v))]
    assert len(hidden) == len(folds) and sum(hidden) + len(shown) == 25   # every one accounted
    # kept: the current snapshot, the tagged one, the first snapshot
    assert {snaps[-1].snapshot_id, snaps[10].snapshot_id, snaps[0].snapshot_id} <= shown
    assert all(kind(v[1]) == "folded" for k, v in ns.items() if k.startswith("fold"))
    # folds connect a shown snapshot to its shown ancestor
    es = {(a, b) for a, b, _ in edges(g.dot)}
    for k in folds:
        child = int(k.split("_")[1])
        assert (f"s{child}", k) in es
    assert "showing" in g.caption and "of 25 snapshots" in g.caption
    assert re.search(r"^: … \d+ snapshots … \(", text, re.M)


def test_expired_parent_and_ref_to_missing_snapshot_render(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    for i in range(4):
        t.append([{"id": i}])
    snaps = list(t.snapshots)
    t.expire_snapshots(snapshot_ids=[snaps[0].snapshot_id, snaps[1].snapshot_id])
    g = snapshot_tree(t.snapshots)
    ns = nodes(g.dot)
    gone = snaps[1].snapshot_id
    assert f"x{gone}" in ns and "expired parent" in ns[f"x{gone}"][0]
    assert (f"s{snaps[2].snapshot_id}", f"x{gone}") in {(a, b) for a, b, _ in edges(g.dot)}
    assert f"parent {gone} expired" in g.text
    # partial input: the current snapshot is not among the snapshots given
    partial = Snapshots(t.snapshots[:-1], t.metadata)
    head = snaps[3].snapshot_id
    g2 = snapshot_tree(partial)
    ns2 = nodes(g2.dot)
    assert "missing from the metadata" in ns2[f"s{head}"][0]
    assert ns2[f"branch_{head}"][0] == '"main"'
    bundle = mimebundle(partial)
    assert "missing from the metadata" in bundle["text/plain"]
    assert "display failed" not in bundle["text/plain"]


def test_ref_names_are_escaped(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    t.append([{"id": 1}])
    t.create_tag('<b>&"x"')
    g = snapshot_tree(t.snapshots)
    assert 'label="<b>&\\"x\\""' in g.dot   # a DOT quoted string, quote escaped
    with icenb.set_options(display_graph_renderer="none"):
        html = mimebundle(t.snapshots)["text/html"]
    assert "tag: &lt;b&gt;&amp;&quot;x&quot;" in html and '<b>&"x"' not in html


def _big_metadata(tmp_path: Path, n: int) -> dict[str, Any]:
    """A v2 metadata document with ``n`` linear snapshots, a tag, a side branch and a log
    with a rollback, built in memory."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long")
    doc = table_metadata_to_json(t.metadata)
    base = 1_700_000_000_000
    snaps = []
    for i in range(n):
        snap: dict[str, Any] = {
            "snapshot-id": 1000 + i, "timestamp-ms": base + i * 1000, "sequence-number": i + 1,
            "summary": {"operation": "append", "added-data-files": "1", "added-records": "10"},
            "manifest-list": f"{doc['location']}/metadata/snap-{i}.avro", "schema-id": 0}
        if i:
            snap["parent-snapshot-id"] = 1000 + i - 1
        snaps.append(snap)
    side = 1000 + n   # a branch off the middle
    snaps.append({"snapshot-id": side, "parent-snapshot-id": 1000 + n // 2,
                  "timestamp-ms": base + n * 1000, "sequence-number": n + 1,
                  "summary": {"operation": "append"}, "manifest-list": "x.avro"})
    head = 1000 + n - 1
    doc.update({
        "snapshots": snaps, "current-snapshot-id": head, "last-sequence-number": n + 1,
        "refs": {"main": {"snapshot-id": head, "type": "branch"},
                 "side": {"snapshot-id": side, "type": "branch"},
                 "t100": {"snapshot-id": 1100, "type": "tag"}},
        "snapshot-log": [{"snapshot-id": 1000 + i, "timestamp-ms": base + i * 1000}
                         for i in range(n)] + [
            {"snapshot-id": 1000 + n - 5, "timestamp-ms": base + n * 1000 + 1},
            {"snapshot-id": head, "timestamp-ms": base + n * 1000 + 2}],
    })
    return doc


def test_ten_thousand_snapshots_stay_bounded(tmp_path: Path) -> None:
    md = table_metadata_from_json(_big_metadata(tmp_path, 10_000))
    snaps = Snapshots(md.snapshots, md)
    g = snapshot_tree(snaps)
    ns = nodes(g.dot)
    limit = icenb.get_options().display_max_snapshots
    assert len(ns) <= limit + 2
    assert {"s10999", "s1100", "s1000", "s11000", "branch_10999", "branch_11000",
            "tag_1100"} <= set(ns)
    folds = [v[0] for k, v in ns.items() if k.startswith("fold")]
    hidden = sum(int(m.group(1).replace(",", "")) for v in folds
                 if (m := re.search(r"… ([\d,]+) snapshots …", v)))
    shown = sum(1 for k in ns if k.startswith("s"))
    assert hidden + shown == 10_001
    assert len(g.text.splitlines()) <= limit + 5
    es = edges(g.dot)
    assert [(a, b) for a, b, attrs in es if "rollback" in attrs] == [("s10999", "s10995")]
    assert [(a, b) for a, b, attrs in es if "set current" in attrs] == [("s10995", "s10999")]
    assert re.match(r"showing \d+ of 10,001 snapshots", g.caption)
    with icenb.set_options(display_graph_renderer="none"):
        html = mimebundle(snaps)["text/html"]
    assert len(html) < 200_000 and html.count("<tr>") <= 2 * limit + 2
    with icenb.set_options(display_max_snapshots=6):
        assert len(nodes(snapshot_tree(snaps).dot)) <= 6 + 2


def test_replacing_main_by_another_lineage_is_not_a_rollback(tmp_path: Path) -> None:
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long")
    t.append([{"id": 1}])
    s1 = t.refs["main"].snapshot_id
    t.create_branch("dev", s1)
    t.append([{"id": 2}], branch="dev")
    d1 = t.refs["dev"].snapshot_id
    t.append([{"id": 3}])
    s2 = t.refs["main"].snapshot_id
    t.replace_branch("main", "dev")  # main jumps from s2 to d1: not an ancestor of s2
    with reset_options():
        dot = snapshot_tree(t.snapshots).dot
        log_text = repr(t.history)
    assert str(s2) in dot and str(d1) in dot
    assert "rollback" not in dot and "rollback" not in log_text
    t.rollback_to(s1)  # back along main's lineage: a rollback
    with reset_options():
        assert "rollback" in snapshot_tree(t.snapshots).dot
        assert "rollback" in repr(t.history)
