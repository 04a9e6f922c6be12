"""One name rule for every catalog (issue 17): a namespace level or a table / view name that
becomes part of a location has no '/' or '\\', is not '.' or '..', holds no NUL or control
character and is at most 255 bytes - so no name can put a table outside its namespace's
folder, and nothing is written when a name is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import icenb
from icenb.catalog.base import MAX_NAME_BYTES
from icenb.errors import ValidationError

BAD_NAMES = ["../../x", "..", ".", "a/b", "a\\b", "x\x00y", "t\n", "t\x7f", "/abs",
             "é" * (MAX_NAME_BYTES // 2 + 1)]


def _files(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root)
            for d, _dirs, files in os.walk(root) for f in files}


@pytest.fixture(params=["sql", "filesystem"])
def wh(request: pytest.FixtureRequest, tmp_path: Path) -> icenb.Warehouse:
    w = icenb.warehouse(tmp_path / "wh", catalog=request.param)
    w.create_namespace("db")
    return w


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_table_names_are_refused_and_nothing_is_written(
        wh: icenb.Warehouse, tmp_path: Path, name: str) -> None:
    before = _files(tmp_path)
    with pytest.raises(ValidationError) as err:
        wh.create_table(("db", name), "id long")
    assert err.value.field in ("table name", "namespace", "namespace level")
    assert _files(tmp_path) == before
    assert wh.tables("db") == []


@pytest.mark.parametrize("name", ["..", "a/b", "x\x00y", "."])
def test_bad_namespace_and_view_names_are_refused(wh: icenb.Warehouse, tmp_path: Path,
                                                  name: str) -> None:
    before = _files(tmp_path)
    with pytest.raises(ValidationError):
        wh.create_namespace((name,))
    with pytest.raises(ValidationError):
        wh.create_view(("db", name), "SELECT 1 AS x", schema="x int")
    with pytest.raises(ValidationError):
        wh.create_table((name, "t"), "id long")
    assert _files(tmp_path) == before


def test_a_table_cannot_be_renamed_out_of_the_rule(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    wh.create_table("db.t", "id long")
    with pytest.raises(ValidationError):
        wh.catalog.rename_table(("db", "t"), ("db", "../t"))
    assert wh.tables("db") == ["db.t"]


def test_good_names_keep_working(wh: icenb.Warehouse) -> None:
    for name in ("t", "t-1", "T_2", "données", "x y", "é" * (MAX_NAME_BYTES // 2)):
        t = wh.create_table(("db", name), "id long")
        assert os.path.basename(t.location.rstrip("/")) == name
