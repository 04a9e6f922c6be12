"""icenb's widgets in a real JupyterLab: TimeTravel and ViewVersions rendered, clicked, compared.

One notebook builds a small table (an append, a tag, a second append, a branch with its own
append, a copy-on-write delete, a rollback, an append after it) and a view replaced twice, then
shows ``TimeTravel(t)`` and ``ViewVersions(v)``. Each test works in both themes: a click on a
snapshot or version node must reach Python and update the panels with what the table or view
holds there; a shift-click must show the difference ``t.diff`` / ``v.compare`` computes. What
Python holds is read back through the notebook's kernel. Screenshots of each widget in each
theme are written to /tmp/icenb-browser-shots/ for people to look at.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.conftest import OpenNotebook
from tests.browser.lab_notebook import LabNotebook

SHOTS = Path("/tmp/icenb-browser-shots")
THEMES = ["light", "dark"]
KINDS = {"a", "b", "c", "d", "dev"}  # the kind column's values: one per appended row
SELECTED = re.compile(r"\bicenb-gv-selected\b")  # the class of the selected node
COMPARED = re.compile(r"\bicenb-gv-compare\b")  # and of the node it is compared with

# The SQL of the view's three versions: none is a substring of another.
VIEW_SQL = {
    1: "SELECT id FROM db.t",
    2: "SELECT id, kind FROM db.t",
    3: "SELECT kind FROM db.t WHERE id > 1",
}

CELLS = [
    """
import json
import tempfile

import icenb
from icenb.widgets import TimeTravel, ViewVersions

wh = icenb.warehouse(tempfile.mkdtemp(prefix="icenb-browser-"))
t = wh.create_table("db.t", "id long, kind string", format_version=2)
s1 = t.append([{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}]).snapshot_id
t.create_tag("v1")
s2 = t.append([{"id": 3, "kind": "c"}]).snapshot_id
t.create_branch("dev")
s_dev = t.append([{"id": 10, "kind": "dev"}], branch="dev").snapshot_id
s3 = t.delete("id = 1").snapshot_id
t.rollback_to(s2)
s4 = t.append([{"id": 4, "kind": "d"}]).snapshot_id
SNAPSHOTS = {"s1": s1, "s2": s2, "s_dev": s_dev, "s3": s3, "s4": s4}
""",
    """
tt = TimeTravel(t)
tt
""",
    f"""
v = wh.create_view("db.v", {VIEW_SQL[1]!r}, schema="id long")
v.replace({VIEW_SQL[2]!r}, schema="id long, kind string")
v.replace({VIEW_SQL[3]!r}, schema="kind string")
vv = ViewVersions(v)
vv
""",
]


@pytest.fixture(scope="module")
def nb(open_notebook: OpenNotebook) -> Iterator[LabNotebook]:
    notebook = open_notebook("widgets.ipynb", CELLS)
    yield notebook


@pytest.fixture(scope="module")
def snapshots(nb: LabNotebook) -> dict[str, int]:
    """Name in the notebook (s1, s2, s_dev, s3, s4) -> snapshot id."""
    ids: dict[str, int] = json.loads(nb.execute("print(json.dumps(SNAPSHOTS))"))
    return ids


def kernel_json(nb: LabNotebook, expression: str) -> Any:
    """The value of a Python expression in the notebook's kernel, through JSON."""
    return json.loads(nb.execute(f"print(json.dumps({expression}))"))


def kernel_reaches(nb: LabNotebook, expression: str, expected: Any, timeout: float = 15) -> None:
    """Wait until a Python expression's JSON value equals expected.

    A click marks the node in the page at once; the widget's state reaches the kernel later
    (ipywidgets holds a model's next update until the kernel has answered its previous one),
    so code run in the kernel right after a click can still see the state before it.
    """
    deadline = time.monotonic() + timeout
    while (value := kernel_json(nb, expression)) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert value == expected, f"{expression} is {value!r} in the kernel after {timeout:g} s"


def tree(nb: LabNotebook) -> Locator:
    """TimeTravel's snapshot tree: the first of its two GraphViews (the second is the strip)."""
    return nb.page.locator(".icenb-tt .icenb-gv").first


def snapshot_node(nb: LabNotebook, sid: int) -> Locator:
    return tree(nb).locator(f'g[data-snapshot-id="{sid}"]')


def version_node(nb: LabNotebook, version_id: int) -> Locator:
    return nb.page.locator(f'.icenb-vv .icenb-gv g[data-version-id="{version_id}"]').first


def open_tab(nb: LabNotebook, widget: str, title: str) -> None:
    """Show a panel of a widget's ipywidgets Tab (hidden tabs stay in the DOM, unseen)."""
    nb.page.locator(f"{widget} .lm-TabBar-tab", has_text=title).first.click()


def assert_no_widget_error(nb: LabNotebook) -> None:
    """No ``.icenb-widget-error`` box shows text, and the page reported no error."""
    texts = [t.strip() for t in nb.page.locator(".icenb-widget-error").all_text_contents()]
    assert not any(texts), f"icenb widget errors: {texts}"
    nb.assert_healthy()


def shoot(nb: LabNotebook, name: str, selector: str) -> None:
    nb.screenshot(SHOTS / f"{name}.png", selector)


def select_snapshot(nb: LabNotebook, sid: int, *, other: int | None = None) -> None:
    """Click a snapshot node (and shift-click a second one); wait until Python has them."""
    snapshot_node(nb, sid).click()
    expect(snapshot_node(nb, sid)).to_have_class(SELECTED)
    if other is not None:
        # a shift-click on the node already compared would toggle the comparison off
        expect(snapshot_node(nb, other)).not_to_have_class(COMPARED)
        snapshot_node(nb, other).click(modifiers=["Shift"])
        expect(snapshot_node(nb, other)).to_have_class(COMPARED)
    kernel_reaches(nb, "[tt.snapshot_id, tt.other_snapshot_id]", [sid, other])


# --------------------------------------------------------------------------- TimeTravel


@pytest.mark.parametrize("theme", THEMES)
def test_time_travel_renders(nb: LabNotebook, snapshots: dict[str, int], theme: str) -> None:
    nb.set_theme(theme)
    expect(nb.page.locator(".icenb-tt")).to_be_visible()
    for sid in snapshots.values():
        expect(snapshot_node(nb, sid)).to_be_visible()
        expect(snapshot_node(nb, sid)).to_have_class(re.compile(r"\bicenb-gv-node\b"))
    assert_no_widget_error(nb)


@pytest.mark.parametrize(("theme", "name"), [("light", "s1"), ("dark", "s_dev")])
def test_click_on_a_snapshot_shows_it(
    nb: LabNotebook, snapshots: dict[str, int], theme: str, name: str
) -> None:
    nb.set_theme(theme)
    sid = snapshots[name]
    select_snapshot(nb, sid)

    summary = nb.page.locator(".icenb-tt .icenb-tt-summary")
    expect(summary.locator("table.icenb-kv tr").first).to_have_text(
        re.compile(rf"snapshot id\s*{sid}\b")
    )

    expected = sorted(kernel_json(nb, f"t.at({sid}).to_arrow().column('kind').to_pylist()"))
    assert sorted(kernel_json(nb, "tt.rows.column('kind').to_pylist()")) == expected
    open_tab(nb, ".icenb-tt", "Rows")
    rows = nb.page.locator(".icenb-tt .icenb-tt-rows")
    expect(rows).to_contain_text(str(sid))  # the spinner or the page of this snapshot
    expect(rows.locator("table")).to_have_count(1)  # the page, read in the background
    shown = sorted(t.strip() for t in rows.locator("td").all_text_contents() if t.strip() in KINDS)
    assert shown == expected
    assert_no_widget_error(nb)
    shoot(nb, f"time-travel-rows-{theme}", ".icenb-tt")


@pytest.mark.parametrize(
    ("theme", "pair"),
    [("light", ("s2", "s3")), ("dark", ("s1", "s4"))],
    ids=["light-s2-s3", "dark-s1-s4"],
)
def test_shift_click_shows_the_difference(
    nb: LabNotebook, snapshots: dict[str, int], theme: str, pair: tuple[str, str]
) -> None:
    nb.set_theme(theme)
    a, b = snapshots[pair[0]], snapshots[pair[1]]
    select_snapshot(nb, a, other=b)

    expected = kernel_json(
        nb,
        f"""(lambda d, rows: {{
            "added": [f.path.rsplit("/", 1)[-1] for f in d.data_added.kept],
            "removed": [f.path.rsplit("/", 1)[-1] for f in d.data_removed.kept],
            "rows_removed": rows[0].num_rows, "rows_added": rows[1].num_rows,
        }})(t.diff({a}, {b}), t.diff({a}, {b}).rows())""",
    )
    assert expected["added"] or expected["removed"], expected
    assert kernel_json(nb, "[tt.diff.a.snapshot_id, tt.diff.b.snapshot_id]") == [a, b]

    open_tab(nb, ".icenb-tt", "Difference")
    diff = nb.page.locator(".icenb-tt .icenb-tt-diff")
    # titled by the snapshots' short labels (S2 → S4), the full ids a line away (a = <id>)
    label_a, label_b = kernel_json(
        nb, "(lambda f: [f.snapshot_label(t.metadata, s) for s in "
        f"({a}, {b})])(__import__('icenb.display.kit.fmt', fromlist=['fmt']))")
    expect(diff).to_contain_text(f"{label_a} → {label_b}")
    expect(diff).to_contain_text(f"a = {a}")
    expect(diff).to_contain_text(f"b = {b}")
    added, removed = len(expected["added"]), len(expected["removed"])
    expect(diff).to_contain_text(re.compile(rf"data files\s*\+{added} / -{removed}"))
    for name in expected["added"] + expected["removed"]:
        expect(diff).to_contain_text(name)
    # the changed rows, read in the background
    expect(diff).to_contain_text(f"Rows removed ({expected['rows_removed']})")
    expect(diff).to_contain_text(f"Rows added ({expected['rows_added']})")
    assert_no_widget_error(nb)
    shoot(nb, f"time-travel-diff-{theme}", ".icenb-tt")


def test_select_from_python_moves_the_page(nb: LabNotebook, snapshots: dict[str, int]) -> None:
    sid = snapshots["s3"]
    nb.execute(f"tt.select({sid})")
    expect(snapshot_node(nb, sid)).to_have_class(SELECTED)
    summary = nb.page.locator(".icenb-tt .icenb-tt-summary")
    expect(summary.locator("table.icenb-kv tr").first).to_have_text(
        re.compile(rf"snapshot id\s*{sid}\b")
    )
    assert_no_widget_error(nb)


# --------------------------------------------------------------------------- ViewVersions


@pytest.mark.parametrize("theme", THEMES)
def test_view_versions_renders(nb: LabNotebook, theme: str) -> None:
    nb.set_theme(theme)
    expect(nb.page.locator(".icenb-vv")).to_be_visible()
    for version_id in VIEW_SQL:
        expect(version_node(nb, version_id)).to_be_visible()
    assert_no_widget_error(nb)


@pytest.mark.parametrize(("theme", "version_id"), [("light", 1), ("dark", 2)])
def test_click_on_a_version_shows_its_sql(nb: LabNotebook, theme: str, version_id: int) -> None:
    nb.set_theme(theme)
    version_node(nb, version_id).click()
    expect(version_node(nb, version_id)).to_have_class(SELECTED)
    kernel_reaches(nb, "[vv.version_id, vv.sql]", [version_id, {"spark": VIEW_SQL[version_id]}])
    open_tab(nb, ".icenb-vv", "Version")
    sql = nb.page.locator(".icenb-vv .icenb-vv-sql")
    expect(sql).to_contain_text(VIEW_SQL[version_id])
    for other, text in VIEW_SQL.items():
        if other != version_id:
            expect(sql).not_to_contain_text(text)
    assert_no_widget_error(nb)
    shoot(nb, f"view-versions-sql-{theme}", ".icenb-vv")


@pytest.mark.parametrize(
    ("theme", "pair"), [("light", (1, 3)), ("dark", (2, 1))], ids=["light-1-3", "dark-2-1"]
)
def test_shift_click_shows_the_view_difference(
    nb: LabNotebook, theme: str, pair: tuple[int, int]
) -> None:
    nb.set_theme(theme)
    a, b = pair
    version_node(nb, a).click()
    expect(version_node(nb, a)).to_have_class(SELECTED)
    expect(version_node(nb, b)).not_to_have_class(COMPARED)  # a shift-click would toggle it off
    version_node(nb, b).click(modifiers=["Shift"])
    expect(version_node(nb, b)).to_have_class(COMPARED)
    kernel_reaches(nb, "[vv.version_id, vv.other_version_id]", [a, b])
    open_tab(nb, ".icenb-vv", "Difference")
    diff = nb.page.locator(".icenb-vv .icenb-vv-diff")
    expect(diff).to_contain_text(VIEW_SQL[a])
    expect(diff).to_contain_text(VIEW_SQL[b])
    assert_no_widget_error(nb)
    shoot(nb, f"view-versions-diff-{theme}", ".icenb-vv")
