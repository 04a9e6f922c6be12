"""The demo warehouse (issue 19): what it holds, that a second build keeps it, that ``--force``
rebuilds it and a foreign folder is refused, and that PyIceberg lists and reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

import icenb
from icenb.demo import MARKER, build
from icenb.demo.__main__ import main
from icenb.errors import ValidationError
from icenb.spec.manifest import FileContent


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo") / "warehouse"
    assert main([str(root)]) == 0
    return root


def test_it_holds_every_concept_the_notebooks_teach(demo: Path) -> None:
    wh = icenb.warehouse(demo)
    assert wh.tables("shop") == ["shop.customers", "shop.events", "shop.events_v3",
                                 "shop.events_v4", "shop.legacy", "shop.orders"]
    events = wh.table("shop.events")
    assert events.format_version == 3
    assert set(events.refs) == {"main", "dev", "day-1", "release-1"}
    assert len(events.metadata.schemas) == 2 and len(events.metadata.partition_specs) == 2
    assert [f.name for f in events.schema.fields] == ["id", "ts", "event_type", "qty", "price"]
    assert str(events.schema.find_field("qty").field_type) == "long"  # promoted from int
    ops = [s.summary["operation"] for s in events.snapshots]
    assert ops.count("append") == 7 and "delete" in ops and "overwrite" in ops
    contents = {FileContent(c) for c in events.inspect.files().column("content").to_pylist()}
    assert contents == {FileContent.DATA, FileContent.POSITION_DELETES}  # deletion vectors
    assert any(f.endswith(".puffin") for f in events.inspect.files().column("file_path")
               .to_pylist())
    # the rolled-back mistake (a delete of every row) was expired: one delete is left
    assert ops.count("delete") == 1
    days = {r["ts"].date() for r in events.to_arrow().to_pylist()}
    assert len(days) == 4
    orders, customers = wh.table("shop.orders"), wh.table("shop.customers")
    assert set(orders.inspect.files().column("content").to_pylist()) == {0, 1}
    assert 2 in customers.inspect.files().column("content").to_pylist()  # equality deletes
    assert {r["customer"]: r["tier"] for r in customers.to_arrow().to_pylist()}["c1"] == "gold"
    legacy = wh.table("shop.legacy")
    assert legacy.format_version == 2 and legacy.to_arrow().num_rows == 15
    v3, v4 = wh.table("shop.events_v3"), wh.table("shop.events_v4")
    assert v4.format_version == 4
    assert sorted(v3.to_arrow().to_pylist(), key=lambda r: r["id"]) == \
        sorted(v4.to_arrow().to_pylist(), key=lambda r: r["id"])
    view = wh.view("shop.big_spenders")
    assert len(view.versions) == 3 and view.dialects() == ("spark", "trino")


def test_a_second_build_leaves_it_and_force_rebuilds_it(demo: Path, tmp_path: Path) -> None:
    before = {n: icenb.warehouse(demo).table(n).metadata_location
              for n in icenb.warehouse(demo).tables("shop")}
    build(demo)
    assert {n: icenb.warehouse(demo).table(n).metadata_location for n in before} == before
    copy = tmp_path / "wh"
    build(copy)
    (copy / "notes.txt").write_text("mine")
    first = icenb.warehouse(copy).table("shop.events").metadata_location
    build(copy, force=True)
    assert icenb.warehouse(copy).table("shop.events").metadata_location != first
    assert not Path(first).exists()  # the old build's files went with it
    assert (copy / "notes.txt").read_text() == "mine"  # only what a build wrote is replaced
    assert (copy / MARKER).exists()


def test_it_lives_beside_other_tables_and_never_takes_a_shop_it_did_not_build(
        tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path / "mine")
    wh.create_table("work.t", "id long").append([{"id": 1}])
    build(tmp_path / "mine")
    build(tmp_path / "mine", force=True)
    assert wh.table("work.t").to_arrow().num_rows == 1  # kept
    other = icenb.warehouse(tmp_path / "other")
    other.create_table("shop.mine", "id long")
    with pytest.raises(ValidationError, match="not icenb's demo"):
        build(tmp_path / "other", force=True)
    assert other.tables("shop") == ["shop.mine"] and not (tmp_path / "other" / MARKER).exists()


def test_pyiceberg_lists_and_reads_it(demo: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("default", uri=f"sqlite:///{demo}/catalog.db",
                         warehouse=f"file://{demo}")
    assert sorted(catalog.list_tables("shop")) == [
        ("shop", n) for n in ("customers", "events", "events_v3", "events_v4", "legacy",
                              "orders")]
    wh = icenb.warehouse(demo)
    for name in ("events", "events_v3", "legacy", "orders"):
        theirs = catalog.load_table(("shop", name)).scan().to_arrow()
        ours = wh.table(f"shop.{name}").to_arrow()
        key = ours.column_names[0]
        assert theirs.sort_by(key).to_pylist() == ours.sort_by(key).to_pylist(), name
    # customers holds equality deletes, which PyIceberg 0.12 does not read (its limitation)
    with pytest.raises(ValueError, match="equality deletes"):
        catalog.load_table(("shop", "customers")).scan().to_arrow()


def test_two_processes_building_at_once_get_one_demo(tmp_path: Path) -> None:
    """The English and the Chinese tour open ``../warehouse`` at the same time in CI: the
    second build waited for the first instead of finding a half-built ``shop`` namespace."""
    import subprocess
    import sys

    root = tmp_path / "shared"
    code = "import sys; from icenb.demo import build; build(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root)], stderr=subprocess.PIPE)
             for _ in range(2)]
    errors = [p.communicate()[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    assert len(icenb.warehouse(root).tables("shop")) == 6
