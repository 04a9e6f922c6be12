"""The authoring widgets in a real JupyterLab (issue 18): SchemaEvolution, PartitionEvolution and
Deletes driven through their forms in Chromium, with what Python holds read back through the
notebook's kernel.

- an illegal promotion disables Commit and shows the rule;
- add + commit gives the new field id ``last-column-id + 1`` and the history updates;
- the bucket preview equals the spec's Appendix B values;
- a partition commit increments the spec id and the partition field id;
- a merge-on-read delete of ``id < 10`` on a v3 table commits to the scratch branch, the graph
  gains one node, the DV's cardinality equals the previewed count, and ``main`` is unchanged
  until publish.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.conftest import OpenNotebook
from tests.browser.lab_notebook import LabNotebook
from tests.browser.test_widgets_browser import (
    assert_no_widget_error,
    kernel_json,
    kernel_reaches,
    shoot,
)

CELLS = [
    """
import json
import tempfile

import icenb
from icenb.widgets import Deletes, PartitionEvolution, SchemaEvolution

wh = icenb.warehouse(tempfile.mkdtemp(prefix="icenb-authoring-"))
st = wh.create_table("db.s", "id long, name string", format_version=3)
st.append([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
pt = wh.create_table("db.p", "id int, ts timestamp", partition_by=["day(ts)"], format_version=2)
dt = wh.create_table("db.d", "id long, v string", format_version=3,
                     properties={"write.delete.mode": "merge-on-read"})
dt.append([{"id": i, "v": str(i)} for i in range(30)])
dt.append([{"id": i, "v": str(i)} for i in range(30, 60)])
MAIN = dt.refs["main"].snapshot_id
""",
    "se = SchemaEvolution(st)\nse",
    "pe = PartitionEvolution(pt)\npe",
    "dl = Deletes(dt)\ndl",
]


@pytest.fixture(scope="module")
def nb(open_notebook: OpenNotebook) -> Iterator[LabNotebook]:
    yield open_notebook("authoring.ipynb", CELLS)


def widget(nb: LabNotebook, css: str) -> Locator:
    return nb.page.locator(css).first


def button(root: Locator, text: str) -> Locator:
    return root.locator("button", has_text=re.compile(rf"^\s*{re.escape(text)}\s*$")).first


def fill(root: Locator, placeholder: str, value: str) -> None:
    """Type into a text box of the widget (found by the start of its placeholder); Enter sends
    boxes that update on submit."""
    box = root.locator(f'input[placeholder^="{placeholder}"]').first
    box.fill(value)
    box.press("Enter")


def test_an_illegal_promotion_disables_commit_and_shows_the_rule(nb: LabNotebook) -> None:
    se = widget(nb, ".icenb-se")
    expect(se).to_be_visible()
    se.locator("select").first.select_option("change type (promote)")
    fill(se, "column", "name")
    fill(se, "type / new name", "int")
    kernel_reaches(nb, "[se.column.value, se.value.value]", ["name", "int"])
    button(se, "stage").click()
    staged = se.locator(".icenb-se-staged")
    expect(staged).to_contain_text("Type promotion")
    expect(staged).to_contain_text("int to long")
    expect(staged).to_contain_text("Schema Evolution")
    expect(se.locator(".icenb-se-commit")).to_be_disabled()
    assert kernel_json(nb, "[p.rule.name for p in se.problems]") == ["Type promotion"]
    shoot(nb, "schema-evolution-refused", ".icenb-se")
    button(se, "reset").click()
    kernel_reaches(nb, "len(se.changes)", 0)
    expect(staged).not_to_contain_text("Type promotion")


def test_add_and_commit_gives_the_next_field_id(nb: LabNotebook) -> None:
    se = widget(nb, ".icenb-se")
    last = kernel_json(nb, "st.metadata.last_column_id")
    se.locator("select").first.select_option("add column")
    fill(se, "column", "score")
    fill(se, "type / new name", "double")
    kernel_reaches(nb, "[se.column.value, se.value.value]", ["score", "double"])
    button(se, "stage").click()
    expect(se.locator(".icenb-se-preview")).to_contain_text("score")
    commit = se.locator(".icenb-se-commit")
    expect(commit).to_be_enabled()
    commit.click()
    button(se, "confirm").click()
    kernel_reaches(nb, "st.schema.find_field('score').field_id if "
                       "st.schema.field_by_name('score') else None", last + 1)
    assert kernel_json(nb, "st.metadata.last_column_id") == last + 1
    expect(se.locator(".icenb-se-effect")).to_contain_text("Committed")
    expect(se).to_contain_text("2 schema(s)")  # the header and the history follow
    assert_no_widget_error(nb)
    shoot(nb, "schema-evolution-committed", ".icenb-se")


def test_the_bucket_preview_is_appendix_b(nb: LabNotebook) -> None:
    pe = widget(nb, ".icenb-pe")
    fill(pe, "bucket(16, id)", "bucket(16, id)")
    fill(pe, "values to transform", "34")
    panel = pe.locator(".icenb-pe-transform")
    expect(panel).to_contain_text("2017239379")  # Appendix B: hash of int 34
    expect(panel).to_contain_text("Appendix B")
    rows = panel.locator("tr")
    expect(rows.nth(1)).to_contain_text("3")  # 2017239379 % 16
    shoot(nb, "partition-evolution-bucket", ".icenb-pe")


def test_a_partition_commit_increments_spec_and_field_ids(nb: LabNotebook) -> None:
    pe = widget(nb, ".icenb-pe")
    before = kernel_json(nb, "[pt.metadata.default_spec_id, pt.metadata.last_partition_id]")
    pe.locator("select").first.select_option("add field")
    fill(pe, "bucket(16, id)", "bucket(16, id)")
    kernel_reaches(nb, "pe.term.value", "bucket(16, id)")
    button(pe, "stage").click()
    expect(pe.locator(".icenb-pe-preview")).to_contain_text("id_bucket_16")
    pe.locator(".icenb-pe-commit").click()
    button(pe, "confirm").click()
    kernel_reaches(nb, "[pt.metadata.default_spec_id, pt.metadata.last_partition_id]",
                   [before[0] + 1, before[1] + 1])
    expect(pe.locator(".icenb-pe-effect")).to_contain_text("Committed")
    assert_no_widget_error(nb)


def test_a_merge_on_read_delete_goes_to_the_scratch_branch(nb: LabNotebook) -> None:
    dl = widget(nb, ".icenb-del")
    fill(dl, "predicate", "id < 10")
    kernel_reaches(nb, "dl.filter", "id < 10")
    expect(dl).to_contain_text("valid")
    button(dl, "preview rows").click()
    expect(dl.locator(".icenb-del-preview")).to_contain_text("10 row(s) match")
    nodes = dl.locator(".icenb-gv g[data-snapshot-id]")
    before = nodes.count()
    dl.locator(".icenb-del-commit").click()
    button(dl, "confirm").click()
    kernel_reaches(nb, "dl.effect is not None", True)
    expect(nodes).to_have_count(before + 1)
    effect = kernel_json(nb, "[dl.branch, [(k, n) for _p, k, n, _b in dl.effect.added], "
                             "dt.refs['main'].snapshot_id == MAIN, "
                             "dt.refs[dl.branch].snapshot_id]")
    branch, added, main_unchanged, head = effect
    assert branch == "icenb-try-1" and added == [["deletion vector", 10]] and main_unchanged
    expect(dl.locator(".icenb-del-effect")).to_contain_text("deletion vector")
    expect(dl.locator(f'.icenb-gv g[data-snapshot-id="{head}"]')).to_have_class(
        re.compile(r"\bicenb-gv-selected\b"))
    shoot(nb, "deletes-committed", ".icenb-del")
    button(dl, "publish to main").click()
    button(dl, "confirm").click()
    kernel_reaches(nb, "dt.refs['main'].snapshot_id", head)
    assert kernel_json(nb, "dt.scan().count()") == 50
    assert_no_widget_error(nb)
