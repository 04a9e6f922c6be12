"""Delete file writers: position delete files, deletion vectors (Puffin), equality delete files.

Golden values: the spec ("Position Delete Files", "Deletion Vectors", "Equality Delete Files")
and Java 1.10's writers (metrics of ``PositionDeleteWriter``, names of ``OutputFileFactory``,
Puffin layout of ``BaseDVFileWriter``; DV bytes against Java in
tests/table/row_level/test_row_level.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import icenb
from icenb.errors import UnsupportedFeature, ValidationError
from icenb.io.puffin import PuffinReader
from icenb.spec.deletion_vector import deserialize_deletion_vector
from icenb.spec.manifest import DataFile, FileContent, FileFormat
from icenb.table import Table
from icenb.table.scan.read import read_data_file
from icenb.table.write.delete_files import (
    POSITION_DELETE_SCHEMA,
    equality_fields,
    is_file_scoped,
    load_positions,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes,
)
from icenb.table.write.locations import location_provider

PATH_ID, POS_ID = 2147483546, 2147483545


def _table(tmp_path: Path, fv: int = 2, **props: str) -> Table:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long not null, s string, x double, d date",
                        partition_by=["bucket(2, id)"], format_version=fv, properties=props)
    t.append([{"id": i, "s": f"s{i}", "x": i / 2} for i in range(20)])
    return t


def _data_files(t: Table) -> list[DataFile]:
    return sorted((task.data_file for task in t.scan().plan().tasks), key=lambda f: f.file_path)


def test_position_delete_files_are_sorted_per_partition_with_java_metrics(
        tmp_path: Path) -> None:
    t = _table(tmp_path)
    a, b = _data_files(t)
    files = write_position_deletes(
        t.io, [(b, [3, 1]), (a, [7, 2, 2])], specs=t.metadata.specs_by_id, schema=t.schema,
        properties=t.properties, location_provider=location_provider(t.location, t.properties),
        operation_id="op")
    assert [os.path.basename(f.file_path) for f in files] == [
        "00000-0-op-00001-deletes.parquet", "00000-0-op-00002-deletes.parquet"]
    by_partition = {f.partition: f for f in files}
    assert by_partition[a.partition].file_path.startswith(
        a.file_path.rsplit("/", 1)[0] + "/")  # in the data file's partition directory
    fa = by_partition[a.partition]
    assert fa.content == FileContent.POSITION_DELETES and fa.file_format == FileFormat.PARQUET
    assert fa.spec_id == a.spec_id and fa.record_count == 2
    rows = read_data_file(t.io, fa, POSITION_DELETE_SCHEMA).to_pylist()
    assert rows == [{"file_path": a.file_path, "pos": 2}, {"file_path": a.file_path, "pos": 7}]
    # Java's PositionDeleteWriter: sizes, no counts, bounds as one file is referenced
    assert set(fa.column_sizes or {}) == {PATH_ID, POS_ID}
    assert fa.value_counts is None and fa.null_value_counts is None
    assert fa.lower_bounds == {PATH_ID: a.file_path.encode(), POS_ID: (2).to_bytes(8, "little")}
    assert fa.upper_bounds == {PATH_ID: a.file_path.encode(), POS_ID: (7).to_bytes(8, "little")}
    assert fa.referenced_data_file is None and is_file_scoped(fa)
    assert list(load_positions(t.io, fa, a.file_path)) == [2, 7]
    assert list(load_positions(t.io, fa, b.file_path)) == []


def test_a_file_for_several_data_files_has_no_bounds_and_is_not_file_scoped(
        tmp_path: Path) -> None:
    t = _table(tmp_path)
    a, b = _data_files(t)
    b_same = type(b)(**{**b.__dict__, "partition": a.partition})  # same partition as a
    files = write_position_deletes(
        t.io, [(b_same, [4, 0]), (a, [1])], specs=t.metadata.specs_by_id, schema=t.schema,
        properties=t.properties, location_provider=location_provider(t.location, t.properties))
    (f,) = files
    paths = [r["file_path"] for r in read_data_file(t.io, f, POSITION_DELETE_SCHEMA).to_pylist()]
    assert paths == sorted(paths) and f.record_count == 3
    assert f.lower_bounds is None and f.upper_bounds is None and not is_file_scoped(f)


def test_position_deletes_roll_at_the_delete_target_size(tmp_path: Path) -> None:
    t = _table(tmp_path, **{"write.delete.target-file-size-bytes": "1",
                            "write.target-file-size-bytes": "999999999"})
    a, _ = _data_files(t)
    files = write_position_deletes(
        t.io, [(a, np.arange(300))], specs=t.metadata.specs_by_id, schema=t.schema,
        properties=t.properties, location_provider=location_provider(t.location, t.properties))
    assert len(files) > 1 and sum(f.record_count for f in files) == 300


def test_negative_positions_are_refused_before_writing(tmp_path: Path) -> None:
    t = _table(tmp_path)
    a, _ = _data_files(t)
    before = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    with pytest.raises(ValidationError):
        write_position_deletes(
            t.io, [(a, [-1, 2])], specs=t.metadata.specs_by_id, schema=t.schema,
            properties=t.properties,
            location_provider=location_provider(t.location, t.properties))
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == before


def test_one_puffin_file_holds_one_dv_per_data_file(tmp_path: Path) -> None:
    t = _table(tmp_path, fv=3)
    a, b = _data_files(t)
    dvs = write_deletion_vectors(
        t.io, [(a, [5, 1]), (b, [0]), (a, [9])],
        location_provider=location_provider(t.location, t.properties), operation_id="op")
    assert len({d.file_path for d in dvs}) == 1
    assert os.path.basename(dvs[0].file_path) == "00000-0-op-00001-deletes.puffin"
    assert [d.referenced_data_file for d in dvs] == [a.file_path, b.file_path]
    assert [d.record_count for d in dvs] == [3, 1]
    reader = PuffinReader(t.io.new_input(dvs[0].file_path).read())
    assert reader.properties["created-by"].startswith("icenb ")
    for d, blob in zip(dvs, reader.blobs, strict=True):
        assert d.file_format == FileFormat.PUFFIN and d.content == FileContent.POSITION_DELETES
        assert (d.content_offset, d.content_size_in_bytes) == (blob.offset, blob.length)
        assert blob.type == "deletion-vector-v1" and blob.compression_codec is None
        assert (blob.snapshot_id, blob.sequence_number) == (-1, -1)
        assert blob.fields == (2147483645,)
        assert dict(blob.properties) == {"referenced-data-file": d.referenced_data_file,
                                         "cardinality": str(d.record_count)}
        assert d.partition == (a if d.referenced_data_file == a.file_path else b).partition
        assert d.file_size_in_bytes == reader.file_size
    positions = deserialize_deletion_vector(reader.read_blob(reader.blobs[0]))
    assert list(positions) == [1, 5, 9]
    assert list(load_positions(t.io, dvs[0], a.file_path)) == [1, 5, 9]
    assert is_file_scoped(dvs[0])


def test_no_positions_write_no_puffin_file(tmp_path: Path) -> None:
    t = _table(tmp_path, fv=3)
    a, _ = _data_files(t)
    assert write_deletion_vectors(
        t.io, [(a, [])], location_provider=location_provider(t.location, t.properties)) == []


def test_equality_deletes_hold_the_key_columns_per_partition(tmp_path: Path) -> None:
    t = _table(tmp_path)
    fields = equality_fields(t.schema, ["id", "s"])
    keys = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["s1", "s2", None]})
    files = write_equality_deletes(
        t.io, keys, schema=t.schema, fields=fields, specs=[t.spec],
        properties=t.properties, location_provider=location_provider(t.location, t.properties),
        format_version=2)
    assert sum(f.record_count for f in files) == 3
    parts = [f.partition for f in files]
    assert len(parts) == len(set(parts)) and set(parts) <= {(0,), (1,)}  # one per partition
    for f in files:
        assert f.content == FileContent.EQUALITY_DELETES and f.equality_ids == (1, 2)
        assert f.value_counts is not None and set(f.value_counts) == {1, 2}
        assert f.lower_bounds is not None and 1 in f.lower_bounds
        assert f.file_path.endswith("-deletes.parquet")


@pytest.mark.parametrize(("names", "error"), [
    (["nope"], ValidationError), (["x"], ValidationError), ([], ValidationError),
    (["id", "id"], ValidationError)])
def test_bad_equality_fields_are_refused(tmp_path: Path, names: list[str],
                                         error: type[Exception]) -> None:
    t = _table(tmp_path)
    with pytest.raises(error):
        equality_fields(t.schema, names)


def test_equality_keys_must_hold_the_partition_source(tmp_path: Path) -> None:
    t = _table(tmp_path)
    with pytest.raises(ValidationError, match="id_bucket"):
        write_equality_deletes(
            t.io, pa.table({"s": ["a"]}), schema=t.schema,
            fields=equality_fields(t.schema, ["s"]), specs=[t.spec], properties=t.properties,
            location_provider=location_provider(t.location, t.properties), format_version=2)
    assert not list(tmp_path.rglob("*-deletes.parquet"))


def test_nested_keys_are_unsupported(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.n", "id long, st struct<a: int>")
    with pytest.raises(UnsupportedFeature):
        equality_fields(t.schema, ["st.a"])
