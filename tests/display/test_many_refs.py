"""A snapshot carrying thousands of refs: every view of it stays bounded (names folded)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

import icenb
from icenb.display import render, reset_options
from icenb.table import Table

N_TAGS = 2_000


@pytest.fixture(autouse=True)
def _defaults() -> object:
    with reset_options() as opts:
        yield opts


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    wh = icenb.warehouse(Path(tmp_path_factory.mktemp("refs")))
    t = wh.create_table("db.tagged", "id int not null", format_version=2)
    t.append(pa.table({"id": pa.array([1], pa.int32())}))
    with t.manage_snapshots() as m:
        for i in range(N_TAGS):
            m.create_tag(f"release-{i:05d}")
    return t


def _check(r_html: str, r_text: str, limit: int) -> None:
    """Bounded, the first names shown; N_TAGS - k more counted where the snapshot is shown."""
    for out in (r_html, r_text):
        assert len(out) < limit, len(out)
        assert "release-00000" in out  # the first names are shown, the rest counted
        assert out.count("release-") < 100, out.count("release-")
    assert re.search(r"\+1,99\d more", r_text)  # the rest of the snapshot's refs, counted


def test_every_view_of_a_snapshot_with_thousands_of_tags_is_bounded(table: Table) -> None:
    assert len(table.metadata.refs) == N_TAGS + 1
    card = render(table)
    _check(card.html, card.text, 60_000)
    snaps = render(table.snapshots)
    _check(snaps.html, snaps.text, 60_000)
    md = render(table.metadata)
    _check(md.html, md.text, 60_000)
    assert len(repr(table.metadata).splitlines()[0]) < 400
    tree = render(table.metadata_tree("release-00000"))
    _check(tree.html, tree.text, 120_000)
    graph = render(table.metadata_graph())
    _check(graph.html, graph.text, 120_000)
