"""A data or delete file that fails while it is written, after others of the same write were
rolled (issue 17): no file of the failed write is left under the table, the table is unchanged,
and the error (``FileIOError``) names the file being written, not the one before it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icenb
from icenb.errors import FileIOError
from icenb.io.data_files import parquet
from icenb.io.file_io import FileIO
from icenb.spec.partition_spec import UNPARTITIONED
from icenb.spec.schema import Schema
from icenb.spec.sort_order import UNSORTED
from icenb.spec.types import LongType, NestedField, StringType
from icenb.table import Table
from icenb.table.write.data_files import RollingDataWriter
from icenb.table.write.locations import location_provider

#: Every row in a file of its own: a write of n rows rolls n files.
ONE_ROW_FILES = {"write.target-file-size-bytes": "1",
                 "write.delete.target-file-size-bytes": "1"}
FAILING = 3  # the third file of the write fails
STAGES = ("open", "write", "close")


class FailingFile:
    """Makes the ``FAILING``-th Parquet file a write opens fail at ``stage`` (inside pyarrow,
    under icenb's writer) and records the locations of the files opened."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
        self.opened: list[str] = []
        self.failed = False
        opened, real_open = self.opened, parquet.ParquetFileWriter.__init__
        real_init = pq.ParquetWriter.__init__
        real_write, real_close = pq.ParquetWriter.write_table, pq.ParquetWriter.close

        def failing() -> bool:
            if len(opened) == FAILING and not self.failed:
                self.failed = True
                return True
            return False

        def record(writer: Any, io: FileIO, location: str, *args: Any, **kwargs: Any) -> None:
            opened.append(location)
            real_open(writer, io, location, *args, **kwargs)

        def init(writer: Any, *args: Any, **kwargs: Any) -> None:
            if stage == "open" and failing():
                raise OSError(28, "No space left on device")
            real_init(writer, *args, **kwargs)

        def write_table(writer: Any, *args: Any, **kwargs: Any) -> None:
            if stage == "write" and failing():
                raise pa.ArrowInvalid("a value the Parquet writer cannot write")
            real_write(writer, *args, **kwargs)

        def close(writer: Any) -> None:
            real_close(writer)
            if stage == "close" and failing():
                raise OSError(5, "Input/output error")

        monkeypatch.setattr(parquet.ParquetFileWriter, "__init__", record)
        monkeypatch.setattr(pq.ParquetWriter, "__init__", init)
        monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
        monkeypatch.setattr(pq.ParquetWriter, "close", close)

    @property
    def location(self) -> str:
        """The file that failed."""
        assert self.failed and len(self.opened) >= FAILING
        return self.opened[FAILING - 1]


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def rows(t: Table) -> list[dict[str, Any]]:
    return sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])


#: A write that rolls at least ``FAILING`` data or delete files on a table of ids 0..9.
WRITES: dict[str, Callable[[Table], Any]] = {
    "append": lambda t: t.append([{"id": i, "s": f"new {i}"} for i in range(10, 16)]),
    "overwrite": lambda t: t.overwrite([{"id": i, "s": "over"} for i in range(20, 26)],
                                       "id < 5"),
    "merge-on-read delete": lambda t: t.delete("id < 8", mode="merge-on-read"),
}


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("write", list(WRITES))
def test_a_failed_file_leaves_the_table_as_it_was_and_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str, stage: str) -> None:
    wh = icenb.warehouse(tmp_path / "wh")
    t = wh.create_table("db.t", "id long, s string", format_version=2,
                        properties=ONE_ROW_FILES)
    t.append(pa.table({"id": pa.array(range(10), pa.int64()),
                       "s": [f"old {i}" for i in range(10)]}))
    root = Path(t.location)
    before_files, before_rows = files_under(root), rows(t)
    failing = FailingFile(monkeypatch, stage)
    with pytest.raises(FileIOError) as e:
        WRITES[write](t)
    monkeypatch.undo()
    assert e.value.file == failing.location
    assert failing.location in str(e.value)
    assert files_under(root) == before_files
    assert rows(wh.table("db.t")) == before_rows
    assert rows(t) == before_rows


@pytest.mark.parametrize("stage", STAGES)
def test_the_streaming_writer_removes_a_failed_file_and_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "s", StringType()))
    writer = RollingDataWriter(FileIO(), schema, UNPARTITIONED, UNSORTED, ONE_ROW_FILES,
                               location_provider(str(tmp_path), ONE_ROW_FILES),
                               format_version=2, operation_id="op",
                               buffer_bytes=1)  # every batch goes to disk at once
    failing = FailingFile(monkeypatch, stage)
    with pytest.raises(FileIOError) as e:
        for i in range(6):
            writer.write(pa.table({"id": pa.array([i], pa.int64()), "s": [f"row {i}"]}))
        writer.close()
    monkeypatch.undo()
    assert e.value.file == failing.location
    assert failing.location in str(e.value)
    assert files_under(tmp_path) == set()
