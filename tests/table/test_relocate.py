"""Reading a table that was copied or moved after it was written (``relocate=True``).

Iceberg metadata records absolute locations (spec: "Table Metadata" ``location``; manifest lists,
manifests and data files are absolute paths), so a copied table still points at the original.
"""

from __future__ import annotations

import pickle
import shutil
import warnings
from pathlib import Path

import pytest

import icenb
from icenb.errors import IcebergWarning, NotFound
from icenb.io.file_io import FileIO
from tests.reference_fixtures import JavaTables


@pytest.fixture
def copied(java_tables: JavaTables, tmp_path: Path) -> tuple[Path, Path]:
    src = java_tables.location("db.v3_deletion_vectors")
    dst = tmp_path / "moved" / "events"
    shutil.copytree(src, dst)
    return src, dst


def test_relocated_table_reads_every_file_from_the_copy(copied: tuple[Path, Path]) -> None:
    src, dst = copied
    table = icenb.open(dst, relocate=True)
    opened: list[str] = []
    table.io.on_open = opened.append
    for snapshot in table.snapshots:
        relocated = table.at(snapshot.snapshot_id).to_arrow()
        original = icenb.open(src).at(snapshot.snapshot_id).to_arrow()
        assert relocated.sort_by("id").equals(original.sort_by("id"))
    assert opened
    assert all(table.io.relocate(p).startswith(str(dst)) for p in opened)
    # Metadata still tells where the table was written.
    assert table.location.rstrip("/").endswith(str(src).lstrip("/").split("/", 1)[-1])
    assert str(src) in table.inspect.files().column("file_path")[0].as_py()


def test_a_missing_file_in_the_copy_is_named(copied: tuple[Path, Path]) -> None:
    _, dst = copied
    victim = next((dst / "data").rglob("*.parquet"))
    victim.unlink()
    with pytest.raises(NotFound) as info:
        icenb.open(dst, relocate=True).scan().to_arrow()
    assert info.value.file is not None and "data" in info.value.file


def test_without_relocate_the_recorded_location_is_read(copied: tuple[Path, Path]) -> None:
    src, dst = copied
    table = icenb.open(dst)
    opened: list[str] = []
    table.io.on_open = opened.append
    table.scan().to_arrow()
    assert opened and all(p.replace("file:", "").startswith(str(src)) for p in opened)


def test_relocations_map_longest_prefix_and_survive_pickling() -> None:
    io = FileIO(relocations={"/old": "/new", "/old/deeper": "/elsewhere", "s3://b/t": "/local/t"})
    assert io.relocate("/old/x.parquet") == "/new/x.parquet"
    assert io.relocate("file:/old/x") == "/new/x"
    assert io.relocate("file:///old/x") == "/new/x"
    assert io.relocate("/old/deeper/y") == "/elsewhere/y"
    assert io.relocate("/older/z") == "/older/z"
    assert io.relocate("s3://b/t/data/f.parquet") == "/local/t/data/f.parquet"
    again = pickle.loads(pickle.dumps(io))
    assert again.relocate("/old/deeper/y") == "/elsewhere/y"


def test_opening_a_moved_table_without_relocate_warns(copied: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    src, dst = copied
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        icenb.open(dst)  # the recorded location still exists: nothing to warn about
        icenb.open(dst, relocate=True)
    # As on another machine: the recorded location does not exist there.
    elsewhere = FileIO(relocations={str(src): str(tmp_path / "nowhere")})
    with pytest.warns(IcebergWarning, match="relocate=True"):
        icenb.open(dst, io=elsewhere)
