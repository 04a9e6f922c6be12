"""icenb.demo.scratch: a notebook's own warehouse, emptied on each run, and nothing else touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from icenb.demo import SCRATCH_MARKER, scratch
from icenb.errors import ValidationError


def test_a_second_run_starts_empty(tmp_path: Path) -> None:
    wh = scratch("lesson-01", root=tmp_path)
    wh.create_table("db.t", "id long").append([{"id": 1}])
    assert wh.tables("db") == ["db.t"]
    again = scratch("lesson-01", root=tmp_path)
    assert (tmp_path / "lesson-01" / SCRATCH_MARKER).is_file()
    assert ("db",) not in again.namespaces()
    assert not (tmp_path / "lesson-01" / "db").exists()


def test_a_folder_it_did_not_make_is_never_emptied(tmp_path: Path) -> None:
    mine = tmp_path / "precious"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ValidationError, match="refusing") as err:
        scratch("precious", root=tmp_path)
    assert err.value.field == "path"
    assert (mine / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("name", ["", "../up", "a/b", ".hidden", "x y"])
def test_bad_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValidationError) as err:
        scratch(name, root=tmp_path)
    assert err.value.field == "name"
    assert list(tmp_path.iterdir()) == []
