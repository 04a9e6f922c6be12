"""Manifests and manifest lists: schemas, records, inheritance, JSON (icenb.spec.manifest).

Golden data: the spec's row lineage example, and manifests written by Iceberg Java (java_tables),
decoded here with fastavro (test-only).
"""

from __future__ import annotations

import io
import itertools
import json
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from icenb.errors import InvalidMetadata, ValidationError
from icenb.io import load_table_metadata
from icenb.spec.expressions import EqualTo
from icenb.spec.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    FileFormat,
    FileScanTask,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    apply_inheritance,
    apply_manifest_list_defaults,
    avro_field_name,
    avro_schema,
    content_file_from_json,
    content_file_to_json,
    data_file_read_type,
    data_file_type,
    file_scan_task_from_json,
    file_scan_task_to_json,
    inherit_entries,
    manifest_entry_read_type,
    manifest_entry_type,
    manifest_file_read_type,
    manifest_file_type,
    manifest_files_from_arrow,
    manifest_list_metadata,
    manifest_metadata,
)
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema, schema_from_json
from icenb.spec.transforms import BucketTransform, IdentityTransform
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

UNPARTITIONED = StructType()
PART = StructType(NestedField(1000, "cat", StringType()),
                  NestedField(1001, "id_bucket", IntegerType()))


def _ids(t: StructType) -> list[int]:
    return [f.field_id for f in t.fields]


# --------------------------------------------------------------------------- enums & schemas

def test_enum_values_are_the_specs() -> None:
    assert [int(c) for c in ManifestContent] == [0, 1]
    assert [int(c) for c in FileContent] == [0, 1, 2]
    assert FileContent.EQUALITY_DELETES.name == "EQUALITY_DELETES"
    assert (EntryStatus.EXISTING, EntryStatus.ADDED, EntryStatus.DELETED) == (0, 1, 2)
    assert FileFormat.parse("PARQUET") is FileFormat.PARQUET
    assert FileFormat.parse("puffin") is FileFormat.PUFFIN
    with pytest.raises(InvalidMetadata):
        FileFormat.parse("csv")


def test_data_file_fields_per_version() -> None:
    v1, v2, v3 = (data_file_type(PART, v) for v in (1, 2, 3))
    assert _ids(v1) == [100, 101, 102, 103, 104, 105, 108, 109, 110, 137, 125, 128, 131, 132, 140]
    assert _ids(v2) == [134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135,
                        140, 143]
    assert _ids(v3)[-5:] == [140, 142, 143, 144, 145]
    assert v3.field(102).field_type == PART  # type: ignore[union-attr]
    assert _ids(manifest_entry_type(PART, 1)) == [0, 1, 2]
    assert _ids(manifest_entry_type(PART, 2)) == [0, 1, 3, 4, 2]
    with pytest.raises(ValidationError):
        data_file_type(PART, 4)


def test_manifest_file_fields_per_version() -> None:
    assert _ids(manifest_file_type(1)) == [500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514,
                                           519]
    v2 = manifest_file_type(2)
    assert _ids(v2) == [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519]
    assert all(v2.field(i).required for i in (504, 512, 515))  # type: ignore[union-attr]
    assert not manifest_file_type(1).field(504).required  # type: ignore[union-attr]
    assert _ids(manifest_file_type(3))[-1] == 520


def test_read_types_are_optional_supersets() -> None:
    read = data_file_read_type(PART)
    assert 105 not in _ids(read)  # v1-only field: ignored by v2+ readers
    assert set(_ids(data_file_type(PART, 2))) <= set(_ids(read))
    assert not read.field(134).required and read.field(100).required  # type: ignore[union-attr]
    entry = manifest_entry_read_type(PART)
    assert _ids(entry) == [0, 1, 3, 4, 2]
    mf = manifest_file_read_type()
    assert not any(mf.field(i).required for i in (517, 515, 516, 504, 520))  # type: ignore[union-attr]
    assert mf.field(500).required  # type: ignore[union-attr]


def test_avro_schema_names_types_like_java() -> None:
    t = StructType(
        NestedField(1, "u", UUIDType()),
        NestedField(2, "u2", UUIDType()),
        NestedField(3, "d", DecimalType(10, 2), required=True),
        NestedField(4, "ts", TimestampType()),
        NestedField(5, "tstz", TimestamptzType()),
        NestedField(6, "tags", MapType(7, StringType(), 8, LongType())),
        NestedField(9, "by_id", MapType(10, IntegerType(), 11, StringType(), True)),
        NestedField(12, "xs", ListType(13, StructType(NestedField(14, "a", IntegerType())))),
        NestedField(15, "1st-col", FixedType(3), doc="odd name"),
        NestedField(16, "ns", TimestampNanoType()),
        NestedField(17, "t", TimeType()),
        NestedField(18, "day", DateType()),
    )
    s = avro_schema(t, "row")
    f = {x["field-id"]: x for x in s["fields"]}
    assert s["name"] == "row" and s["type"] == "record"
    assert f[1]["type"] == ["null", {"type": "fixed", "name": "uuid_fixed", "size": 16,
                                     "logicalType": "uuid"}]
    assert f[2]["type"] == ["null", "uuid_fixed"]  # a named type is defined once
    assert f[1]["default"] is None
    assert f[3]["type"] == {"type": "fixed", "name": "decimal_10_2", "size": 5,
                            "logicalType": "decimal", "precision": 10, "scale": 2}
    assert "default" not in f[3]
    assert f[4]["type"][1] == {"type": "long", "logicalType": "timestamp-micros",
                               "adjust-to-utc": False}
    assert f[5]["type"][1]["adjust-to-utc"] is True
    assert f[6]["type"][1] == {"type": "map", "values": ["null", "long"], "key-id": 7,
                               "value-id": 8}
    assert f[9]["type"][1] == {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": "k10_v11", "fields": [
            {"name": "key", "type": "int", "field-id": 10},
            {"name": "value", "type": "string", "field-id": 11}]}}
    assert f[12]["type"][1]["element-id"] == 13
    assert f[12]["type"][1]["items"][1]["name"] == "r13"
    assert f[15]["name"] == "_1st_x2Dcol" and f[15]["iceberg-field-name"] == "1st-col"
    assert f[15]["doc"] == "odd name"
    assert f[16]["type"][1]["logicalType"] == "timestamp-nanos"
    assert f[17]["type"][1] == {"type": "long", "logicalType": "time-micros"}
    assert f[18]["type"][1] == {"type": "int", "logicalType": "date"}
    fastavro.parse_schema(s)  # a valid Avro schema


def test_avro_field_name_sanitizes_like_java() -> None:
    assert avro_field_name("id_bucket_16") == "id_bucket_16"
    assert avro_field_name("9lives") == "_9lives"
    assert avro_field_name("a.b") == "a_x2Eb"
    with pytest.raises(ValidationError):
        avro_field_name("")


def test_manifest_metadata_keys() -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "cat", StringType()),
                    schema_id=3)
    spec = PartitionSpec(7, (PartitionField((2,), 1000, IdentityTransform(), "cat"),))
    meta = manifest_metadata(schema, spec, 2, ManifestContent.DELETES)
    assert meta["schema-id"] == "3" and meta["partition-spec-id"] == "7"
    assert meta["format-version"] == "2" and meta["content"] == "deletes"
    assert json.loads(meta["partition-spec"])[0]["field-id"] == 1000
    assert schema_from_json(json.loads(meta["schema"])) == schema
    assert "content" not in manifest_metadata(schema, spec, 1)
    with pytest.raises(ValidationError):
        manifest_metadata(schema, spec, 1, ManifestContent.DELETES)
    lm = manifest_list_metadata(5, None, 9, 3, first_row_id=42)
    assert lm == {"snapshot-id": "5", "sequence-number": "9", "first-row-id": "42",
                  "format-version": "3"}


# --------------------------------------------------------------------------- objects

def _file(path: str = "s3://b/t/data/a.parquet", **kw: Any) -> DataFile:
    base: dict[str, Any] = dict(file_path=path, file_format=FileFormat.PARQUET,
                                partition=("a", 1), record_count=10, file_size_in_bytes=100)
    base.update(kw)
    return DataFile(**base)


def _manifest(**kw: Any) -> ManifestFile:
    base: dict[str, Any] = dict(manifest_path="m.avro", manifest_length=1, partition_spec_id=0,
                                sequence_number=5, min_sequence_number=5, added_snapshot_id=77)
    base.update(kw)
    return ManifestFile(**base)


def test_manifest_file_v1_record_gets_appendix_e_defaults() -> None:
    rec = {"manifest_path": "m.avro", "manifest_length": 10, "partition_spec_id": 0,
           "added_snapshot_id": 1, "added_files_count": None, "partitions": None}
    mf = ManifestFile.from_avro_record(rec)
    assert (mf.content, mf.sequence_number, mf.min_sequence_number) == (0, 0, 0)
    assert mf.has_added_files() and mf.has_deleted_files()  # null counts: assume non-zero
    with pytest.raises(InvalidMetadata, match="manifest_length"):
        ManifestFile.from_avro_record({"manifest_path": "m"}, file="snap.avro")


def test_manifest_file_writer_rules() -> None:
    deletes = _manifest(content=ManifestContent.DELETES)
    with pytest.raises(ValidationError):
        deletes.to_avro_record(1)  # v1 lists hold data manifests only
    with pytest.raises(ValidationError, match="added_files_count"):
        _manifest().to_avro_record(2)  # counts are required from v2
    with pytest.raises(ValidationError, match="first_row_id"):
        _manifest(content=ManifestContent.DELETES, first_row_id=3, **_counts()).to_avro_record(3)
    rec = _manifest(first_row_id=3, **_counts()).to_avro_record(3)
    assert rec["first_row_id"] == 3 and rec["sequence_number"] == 5
    assert "sequence_number" not in _manifest(**_counts()).to_avro_record(1)


def _counts() -> dict[str, int]:
    return dict(added_files_count=1, existing_files_count=0, deleted_files_count=0,
                added_rows_count=10, existing_rows_count=0, deleted_rows_count=0)


def test_partition_summaries_decode_bounds() -> None:
    mf = _manifest(partitions=[FieldSummary(False, None, b"a", b"z"),
                               FieldSummary(True, False, b"\x01\x00\x00\x00", None)])
    s = mf.partition_summaries(PART)
    assert s is not None and (s[0].lower_bound, s[0].upper_bound) == ("a", "z")
    assert s[1].contains_null and s[1].lower_bound == 1 and s[1].upper_bound is None


def test_entry_writer_rules() -> None:
    existing = ManifestEntry(EntryStatus.EXISTING, 1, None, None, _file())
    with pytest.raises(ValidationError, match="sequence_number"):
        existing.to_avro_record(PART, 2)
    assert "sequence_number" not in existing.to_avro_record(PART, 1)
    with pytest.raises(ValidationError):
        ManifestEntry(5, 1, None, None, _file())  # type: ignore[arg-type]
    dv = _file(content=FileContent.POSITION_DELETES)
    with pytest.raises(ValidationError):
        dv.to_avro_record(PART, 1)
    rec = _file().to_avro_record(PART, 1)
    assert rec["block_size_in_bytes"] == 64 * 1024 * 1024 and "content" not in rec
    assert rec["file_format"] == "PARQUET" and rec["partition"] == {"cat": "a", "id_bucket": 1}


# --------------------------------------------------------------------------- inheritance

def _entries_table(rows: list[dict[str, Any]]) -> pa.Table:
    df_type = pa.struct([("content", pa.int32()), ("file_path", pa.string()),
                         ("record_count", pa.int64()), ("first_row_id", pa.int64())])
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("status", pa.int32()), ("snapshot_id", pa.int64()), ("sequence_number", pa.int64()),
        ("file_sequence_number", pa.int64()), ("data_file", df_type)]))


def _row(status: int, path: str, count: int, frid: int | None = None, content: int = 0,
         seq: int | None = None, snap: int | None = None) -> dict[str, Any]:
    return {"status": status, "snapshot_id": snap, "sequence_number": seq,
            "file_sequence_number": seq,
            "data_file": {"content": content, "file_path": path, "record_count": count,
                          "first_row_id": frid}}


def test_row_lineage_example_from_the_spec() -> None:
    # Spec "Row lineage example": manifest added1 has first_row_id 1000.
    table = _entries_table([_row(0, "data1", 25, 800, seq=3, snap=1), _row(1, "data2", 50),
                            _row(1, "data3", 50)])
    out = apply_inheritance(table, _manifest(first_row_id=1000), 3)
    files = out.column("data_file").to_pylist()
    assert [f["first_row_id"] for f in files] == [800, 1000, 1050]
    assert out.column("sequence_number").to_pylist() == [3, 5, 5]
    assert out.column("snapshot_id").to_pylist() == [1, 77, 77]


def test_first_row_id_counts_only_null_data_files() -> None:
    table = _entries_table([
        _row(1, "a", 10), _row(1, "dv", 4, content=1), _row(0, "old", 7, seq=2),
        _row(2, "gone", 3, seq=2), _row(1, "kept", 5, frid=3), _row(1, "b", 1)])
    files = apply_inheritance(table, _manifest(first_row_id=100), 3).column(
        "data_file").to_pylist()
    # existing and deleted data files with null first_row_id are assigned too; DVs never are
    assert [f["first_row_id"] for f in files] == [100, None, 110, 117, 3, 120]
    no_ids = apply_inheritance(table, _manifest(), 3).column("data_file").to_pylist()
    assert [f["first_row_id"] for f in no_ids] == [None, None, None, None, 3, None]


def test_sequence_numbers_inherit_for_added_only() -> None:
    table = _entries_table([_row(1, "a", 1), _row(0, "b", 1, seq=2), _row(0, "c", 1)])
    out = apply_inheritance(table, _manifest(), 2)
    assert out.column("sequence_number").to_pylist() == [5, 2, None]
    assert out.column("file_sequence_number").to_pylist() == [5, 2, None]
    with pytest.raises(InvalidMetadata, match="EXISTING") as err:
        apply_inheritance(table, _manifest(), 2, strict=True)
    assert err.value.file == "m.avro"
    # a manifest with sequence number 0 (listed by a v1 manifest list) gives 0 to all
    zero = apply_inheritance(table, _manifest(sequence_number=0), 2)
    assert zero.column("sequence_number").to_pylist() == [0, 2, 0]


def test_v1_manifest_without_sequence_columns() -> None:
    table = pa.table({"status": pa.array([1, 0], pa.int32()),
                      "snapshot_id": pa.array([None, 4], pa.int64()),
                      "data_file": pa.array([{"file_path": "a", "record_count": 3}] * 2)})
    out = apply_inheritance(table, _manifest(sequence_number=0), 1)
    assert out.column_names == ["status", "snapshot_id", "sequence_number",
                                "file_sequence_number", "data_file"]
    assert out.column("sequence_number").to_pylist() == [0, 0]
    files = out.column("data_file").to_pylist()
    assert files[0] == {"content": 0, "file_path": "a", "record_count": 3, "first_row_id": None}
    assert out.column("snapshot_id").to_pylist() == [77, 4]
    empty = apply_inheritance(table.slice(0, 0), _manifest(first_row_id=9), 3)
    assert empty.num_rows == 0


def test_manifest_list_defaults() -> None:
    table = pa.table({"manifest_path": ["a"], "manifest_length": [1], "partition_spec_id": [0],
                      "added_snapshot_id": [3]})
    out = apply_manifest_list_defaults(table)
    assert out.to_pylist()[0] | {} == {
        "manifest_path": "a", "manifest_length": 1, "partition_spec_id": 0,
        "added_snapshot_id": 3, "content": 0, "sequence_number": 0, "min_sequence_number": 0,
        "first_row_id": None}
    assert manifest_files_from_arrow(out)[0].added_snapshot_id == 3


def _reference_inheritance(rows: list[dict[str, Any]], m: ManifestFile, version: int
                           ) -> list[dict[str, Any]]:
    """Per-row restatement of the spec's rules (and Java's seq-0 rule), for comparison."""
    out = []
    next_id = m.first_row_id
    for r in rows:
        r = json.loads(json.dumps(r))
        if r["snapshot_id"] is None:
            r["snapshot_id"] = m.added_snapshot_id
        for k in ("sequence_number", "file_sequence_number"):
            if r[k] is None:
                if version == 1:
                    r[k] = 0
                elif r["status"] == 1 or m.sequence_number == 0:
                    r[k] = m.sequence_number
        f = r["data_file"]
        if next_id is not None and f["content"] == 0 and f["first_row_id"] is None:
            f["first_row_id"] = next_id
            next_id += f["record_count"]
        out.append(r)
    return out


_rows = st.lists(st.builds(
    _row, st.integers(0, 2), st.text(max_size=3), st.integers(0, 1000),
    st.none() | st.integers(0, 10**6), st.integers(0, 2), st.none() | st.integers(0, 50),
    st.none() | st.integers(1, 9)), max_size=30)


@given(rows=_rows, seq=st.integers(0, 60), frid=st.none() | st.integers(0, 10**9),
       version=st.sampled_from([1, 2, 3]))
def test_inheritance_matches_per_row_reference(rows: list[dict[str, Any]], seq: int,
                                               frid: int | None, version: int) -> None:
    m = _manifest(sequence_number=seq, first_row_id=frid)
    expected = _reference_inheritance(rows, m, version)
    assert apply_inheritance(_entries_table(rows), m, version).to_pylist() == expected
    entries = [ManifestEntry(r["status"], r["snapshot_id"], r["sequence_number"],
                             r["file_sequence_number"],
                             _file(r["data_file"]["file_path"], content=r["data_file"]["content"],
                                   record_count=r["data_file"]["record_count"],
                                   first_row_id=r["data_file"]["first_row_id"]))
               for r in rows]
    got = inherit_entries(entries, m, version)
    assert [(e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file.first_row_id)
            for e in got] == [(r["snapshot_id"], r["sequence_number"],
                               r["file_sequence_number"], r["data_file"]["first_row_id"])
                              for r in expected]


# --------------------------------------------------------------------------- JSON

def test_content_file_json_matches_appendix_c() -> None:
    f = _file(column_sizes={3: 100, 4: 200}, lower_bounds={3: b"\x01\x00\x00\x00"},
              key_metadata=b"\x00" * 4, split_offsets=(128, 256), sort_order_id=1, spec_id=1)
    obj = content_file_to_json(f, PART)
    assert obj["content"] == "DATA" and obj["file-format"] == "PARQUET"
    assert obj["partition"] == {"1000": "a", "1001": 1}
    assert obj["column-sizes"] == {"keys": [3, 4], "values": [100, 200]}
    assert obj["lower-bounds"] == {"keys": [3], "values": ["01000000"]}
    assert obj["key-metadata"] == "00000000" and obj["split-offsets"] == [128, 256]
    assert content_file_from_json(obj, {1: PART}) == f
    # Java 1.10+ forms: partition as an array, upper-case hex, lower-case names
    java = dict(obj, partition=["a", None], content="position-deletes", **{"file-format": "puffin"})
    java["lower-bounds"] = {"keys": [3], "values": ["0A000000"]}
    g = content_file_from_json(java, PART)
    assert g.content == FileContent.POSITION_DELETES and g.partition == ("a", None)
    assert g.lower_bounds == {3: b"\x0a\x00\x00\x00"} and g.file_format is FileFormat.PUFFIN
    with pytest.raises(InvalidMetadata, match="spec-id"):
        content_file_from_json(obj, {2: PART})
    with pytest.raises(InvalidMetadata, match="partition"):
        content_file_from_json(dict(obj, partition={"999": 1}), PART)


_PARTITION_TYPES: list[tuple[IcebergType, st.SearchStrategy[Any]]] = [
    (IntegerType(), st.integers(-(2**31), 2**31 - 1)),
    (LongType(), st.integers(-(2**63), 2**63 - 1)),
    (StringType(), st.text()),
    (BooleanType(), st.booleans()),
    (DateType(), st.integers(-10**6, 10**6)),
    (TimeType(), st.integers(0, 86_400 * 10**6 - 1)),
    (TimestampType(), st.integers(-(2**50), 2**50)),
    (TimestamptzType(), st.integers(-(2**50), 2**50)),
    (TimestampNanoType(), st.integers(-(2**62), 2**62)),
    (UUIDType(), st.uuids()),
    (FixedType(3), st.binary(min_size=3, max_size=3)),
    (BinaryType(), st.binary(max_size=8)),
    (DecimalType(9, 2), st.decimals(-(10**7) + 1, 10**7 - 1, places=2)),
    (FloatType(), st.floats(width=32, allow_nan=False)),
    (DoubleType(), st.floats(allow_nan=False)),
]


@st.composite
def _partition_and_file(draw: st.DrawFn) -> tuple[StructType, DataFile]:
    picks = draw(st.lists(st.sampled_from(range(len(_PARTITION_TYPES))), max_size=4))
    fields = [NestedField(1000 + i, f"p{i}", _PARTITION_TYPES[k][0]) for i, k in enumerate(picks)]
    partition = tuple(draw(st.none() | _PARTITION_TYPES[k][1]) for k in picks)
    content = draw(st.sampled_from(list(FileContent)))
    ints = st.integers(0, 2**62)
    counts = st.none() | st.dictionaries(st.integers(1, 10**6), ints, max_size=3)
    bounds = st.none() | st.dictionaries(st.integers(1, 10**6), st.binary(max_size=8), max_size=3)
    f = DataFile(
        content=content, file_path=draw(st.text(min_size=1)),
        file_format=draw(st.sampled_from(list(FileFormat))), partition=partition,
        record_count=draw(ints), file_size_in_bytes=draw(ints),
        column_sizes=draw(counts), value_counts=draw(counts), null_value_counts=draw(counts),
        nan_value_counts=draw(counts), lower_bounds=draw(bounds), upper_bounds=draw(bounds),
        key_metadata=draw(st.none() | st.binary(max_size=8)),
        split_offsets=draw(st.none() | st.lists(ints, max_size=3).map(tuple)),
        equality_ids=draw(st.none() | st.lists(st.integers(1, 99), max_size=3).map(tuple)),
        sort_order_id=draw(st.none() | st.integers(0, 9)),
        first_row_id=draw(st.none() | ints),
        referenced_data_file=draw(st.none() | st.text(max_size=5)),
        content_offset=draw(st.none() | ints), content_size_in_bytes=draw(st.none() | ints),
        spec_id=draw(st.integers(0, 5)))
    return StructType(*fields), f


@given(_partition_and_file())
def test_content_file_json_round_trip(pf: tuple[StructType, DataFile]) -> None:
    partition_type, f = pf
    obj = json.loads(json.dumps(content_file_to_json(f, partition_type)))
    assert content_file_from_json(obj, partition_type) == f


def _avro_round_trip(schema: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    buf = io.BytesIO()
    parsed = fastavro.parse_schema(schema)
    fastavro.schemaless_writer(buf, parsed, record)
    buf.seek(0)
    out: dict[str, Any] = fastavro.schemaless_reader(buf, parsed, None)  # type: ignore[assignment]
    return out


@settings(max_examples=60)
@given(_partition_and_file(), st.sampled_from([2, 3]))
def test_avro_record_round_trip_through_fastavro(pf: tuple[StructType, DataFile],
                                                 version: int) -> None:
    partition_type, f = pf
    # fastavro (the peer reading the bytes back) turns dates into datetime.date: years 1-9999.
    assume(all(v is None or -719_162 <= v <= 2_932_896
               for t, v in zip(partition_type.fields, f.partition, strict=True)
               if isinstance(t.field_type, DateType)))
    if version == 2:
        f = DataFile(**{**f.__dict__, "first_row_id": None, "content_offset": None,
                        "content_size_in_bytes": None})
    entry = ManifestEntry(EntryStatus.ADDED, None, None, None, f)
    schema = avro_schema(manifest_entry_type(partition_type, version), "manifest_entry")
    decoded = _avro_round_trip(schema, entry.to_avro_record(partition_type, version))
    back = ManifestEntry.from_avro_record(decoded, partition_type, spec_id=f.spec_id)
    assert back == entry


def test_file_scan_task_json_round_trip() -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "cat", StringType()))
    spec = PartitionSpec(0, (PartitionField((2,), 1000, IdentityTransform(), "cat"),
                             PartitionField((1,), 1001, BucketTransform(4), "id_bucket")))
    data = _file(spec_id=0)
    dv = _file("s3://b/t/data/d.puffin", content=FileContent.POSITION_DELETES,
               file_format=FileFormat.PUFFIN, referenced_data_file=data.file_path,
               content_offset=4, content_size_in_bytes=40)
    residual = EqualTo("id", 1)
    task = FileScanTask(schema, spec, data, (dv,), residual)
    obj = json.loads(json.dumps(file_scan_task_to_json(task)))
    assert set(obj) == {"schema", "spec", "data-file", "delete-files", "residual-filter",
                        "start", "length"}
    assert (obj["start"], obj["length"]) == (0, data.file_size_in_bytes)
    assert obj["residual-filter"] == {"type": "eq", "term": "id", "value": 1}
    assert obj["delete-files"][0]["referenced-data-file"] == data.file_path
    assert file_scan_task_from_json(obj) == task
    del obj["residual-filter"]
    assert file_scan_task_from_json(obj).residual_filter is True


# --------------------------------------------------------------------------- Java files

def _local(path: str) -> str:
    return path.removeprefix("file:")


def _read_avro(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with open(_local(path), "rb") as fh:
        reader = fastavro.reader(fh)
        return dict(reader.metadata), list(reader)  # type: ignore[arg-type]


def _table_dirs(java_tables: Any) -> Iterator[tuple[str, Path]]:
    for entry in java_tables.entries("table"):
        yield entry["name"], java_tables.location(entry["name"])


def _partition_type(md: Any, meta: dict[str, Any]) -> StructType:
    """The partition type a manifest was written with: the table's spec by id, bound to the
    schema embedded in the manifest (the schema the writer used)."""
    spec = md.spec_by_id(int(meta["partition-spec-id"]))
    return spec.partition_type(schema_from_json(json.loads(meta["schema"])))  # type: ignore[no-any-return]


def test_java_avro_schemas_equal_ours(java_tables: Any) -> None:
    checked = set()
    for name, location in _table_dirs(java_tables):
        md = load_table_metadata(str(location))
        for path in sorted((location / "metadata").glob("*.avro")):
            meta, _ = _read_avro(str(path))
            java = json.loads(meta["avro.schema"])
            version = int(meta["format-version"])
            if java["name"] == "manifest_file":
                ours = avro_schema(manifest_file_type(version), "manifest_file")
            else:
                entry_type = manifest_entry_type(_partition_type(md, meta), version)
                ours = avro_schema(entry_type, "manifest_entry")
            assert ours == java, f"{name}: {path.name}"
            checked.add((java["name"], version))
    assert checked == {(k, v) for k in ("manifest_file", "manifest_entry") for v in (1, 2, 3)}


def test_java_manifests_inherit_like_java(java_tables: Any) -> None:
    """Inherited values agree with everything Java wrote explicitly: later EXISTING/DELETED
    copies of a file, snapshot sequence numbers, manifest min sequence numbers, and the v3
    row-id ranges of snapshots (first-row-id, added-rows)."""
    row_id_snapshots = 0
    for name, location in _table_dirs(java_tables):
        md = load_table_metadata(str(location))
        first_seen: dict[str, tuple[int, int]] = {}
        for snap in md.snapshots:
            if snap.manifest_list is None:
                continue
            list_meta, records = _read_avro(snap.manifest_list)
            manifests = [ManifestFile.from_avro_record(r) for r in records]
            live_ranges: list[tuple[int, int]] = []
            for m in manifests:
                meta, entries = _read_avro(m.manifest_path)
                version = int(meta["format-version"])
                table = apply_inheritance(pa.Table.from_pylist(entries), m, version,
                                          strict=True)
                live_seqs = []
                for e in table.to_pylist():
                    f = e["data_file"]
                    seqs = (e["sequence_number"], e["file_sequence_number"])
                    first_seen.setdefault(f["file_path"], seqs)
                    assert first_seen[f["file_path"]] == seqs, (name, f["file_path"])
                    if e["status"] == EntryStatus.ADDED and e["snapshot_id"] == m.added_snapshot_id:
                        added_by = md.snapshot_by_id(e["snapshot_id"])
                        if added_by is not None:
                            assert e["file_sequence_number"] == added_by.sequence_number
                    if e["status"] != EntryStatus.DELETED:
                        live_seqs.append(e["sequence_number"])
                        if f["content"] == 0 and f["first_row_id"] is not None:
                            live_ranges.append((f["first_row_id"],
                                                f["first_row_id"] + f["record_count"]))
                if live_seqs and version >= 2:
                    assert min(live_seqs) == m.min_sequence_number, (name, m.manifest_path)
            if snap.first_row_id is not None:
                row_id_snapshots += 1
                assert int(list_meta["first-row-id"]) == snap.first_row_id
                _check_row_id_assignment(snap, manifests, live_ranges)
    assert row_id_snapshots >= 5


def _check_row_id_assignment(snap: Any, manifests: list[ManifestFile],
                             live_ranges: list[tuple[int, int]]) -> None:
    """Spec "First Row ID Assignment": new data manifests get consecutive ids from the
    snapshot's first-row-id; the snapshot's added-rows covers them; files never overlap."""
    data = [m for m in manifests if m.content == ManifestContent.DATA]
    assert all(m.first_row_id is not None for m in data)
    new = sorted((m for m in data if m.first_row_id is not None
                  and m.first_row_id >= snap.first_row_id), key=lambda m: m.first_row_id or 0)
    next_id = snap.first_row_id
    for m in new:
        assert m.first_row_id == next_id
        next_id += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
    assert next_id == snap.first_row_id + snap.added_rows
    live_ranges.sort()
    for (_, end), (start, _) in itertools.pairwise(live_ranges):
        assert end <= start
    assert all(end <= snap.first_row_id + snap.added_rows for _, end in live_ranges)


def _avro_bytes(schema: Any, record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, record)
    return buf.getvalue()


def test_java_records_round_trip(java_tables: Any) -> None:
    """from_avro_record -> to_avro_record reproduces Java's records byte for byte."""
    checked = 0
    for _, location in _table_dirs(java_tables):
        md = load_table_metadata(str(location))
        for path in sorted((location / "metadata").glob("*.avro")):
            with open(path, "rb") as fh:
                reader = fastavro.reader(fh)
                meta = reader.metadata
                schema = fastavro.parse_schema(reader.writer_schema)
                records = list(reader)
            version = int(meta["format-version"])
            for rec in records:
                if "manifest_path" in rec:  # type: ignore[operator]
                    back = ManifestFile.from_avro_record(rec).to_avro_record(version)  # type: ignore[arg-type]
                else:
                    pt = _partition_type(md, meta)
                    entry = ManifestEntry.from_avro_record(rec, pt)  # type: ignore[arg-type]
                    back = entry.to_avro_record(pt, version)
                assert _avro_bytes(schema, back) == _avro_bytes(schema, rec), path.name  # type: ignore[arg-type]
                checked += 1
    assert checked > 100


def test_java_uuid_and_decimal_partitions_decode() -> None:
    """fastavro's logical values (date, time, Decimal) become the spec's representation."""
    pt = StructType(NestedField(1, "d", DateType()), NestedField(2, "t", TimeType()),
                    NestedField(3, "n", DecimalType(10, 2)), NestedField(4, "u", UUIDType()))
    import datetime as dt

    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    rec = {"file_path": "x", "file_format": "ORC", "record_count": 1, "file_size_in_bytes": 2,
           "partition": {"d": dt.date(2024, 1, 1), "t": dt.time(1, 0, 0, 5),
                         "n": Decimal("1.00"), "u": u.bytes}}
    f = DataFile.from_avro_record(rec, pt)
    assert f.partition == (19723, 3_600_000_005, Decimal("1.00"), u)
    assert f.content == FileContent.DATA and f.file_format is FileFormat.ORC


def test_inheritance_keeps_the_field_ids_of_partition_fields() -> None:
    """A decoder builds ``data_file`` with the partition fields' ids on the parent's type only
    (``StructArray.from_arrays(..., fields=...)``), where ``flatten()`` does not carry them;
    inheritance must keep them, or manifests decoded by different paths no longer concatenate
    into one partition struct (a warm plan then pruned wrong files)."""
    ids = [pa.field("ts_day", pa.int32(), metadata={b"PARQUET:field_id": b"1000"}),
           pa.field("id_bucket", pa.int32(), metadata={b"PARQUET:field_id": b"1001"})]
    partition = pa.StructArray.from_arrays([pa.array([1, 2], pa.int32()),
                                            pa.array([3, None], pa.int32())],
                                           names=["ts_day", "id_bucket"])
    partition_field = pa.field("partition", pa.struct(ids))
    data_file = pa.StructArray.from_arrays(
        [pa.array(["a", "b"]), partition, pa.array([1, 1], pa.int64())],
        fields=[pa.field("file_path", pa.string()), partition_field,
                pa.field("record_count", pa.int64())])
    assert data_file.flatten()[1].type.field(0).metadata is None  # what the decoder gives
    table = pa.table({"status": pa.array([1, 1], pa.int32()),
                      "snapshot_id": pa.array([None, None], pa.int64()),
                      "data_file": data_file})
    out = apply_inheritance(table, _manifest(), 2)
    ptype = out.schema.field("data_file").type.field("partition").type
    assert [ptype.field(i).metadata for i in range(2)] == [f.metadata for f in ids]
    assert out.column("data_file").to_pylist()[1]["partition"] == {"ts_day": 2,
                                                                    "id_bucket": None}
