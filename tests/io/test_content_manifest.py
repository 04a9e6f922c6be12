"""V4 root / data / delete manifests as Avro files (experimental single-file-commits proposal):
round trips, key-value metadata and field ids, aggregated stats, manifest DVs inline and in
Puffin, and the invalid structures a reader must reject."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icenb.errors import CorruptFile, InvalidMetadata, UnsupportedVersion
from icenb.io.avro import avro_file_metadata
from icenb.io.file_io import FileIO
from icenb.io.manifest_writer import (
    avro_codec,
    avro_container,
    avro_sync_marker,
    encode_manifest,
    encode_manifest_list,
)
from icenb.io.root_manifest import (
    UNASSIGNED_SEQUENCE_NUMBER,
    aggregate_content_stats,
    content_manifest_header,
    decode_content_manifest,
    decode_content_manifest_table,
    encode_content_manifest,
    inline_manifest_dv,
    load_manifest_dv,
    read_content_manifest,
    read_leaf_manifest,
    read_leaves,
    read_root_manifest,
    write_leaf_manifest,
    write_puffin_manifest_dv,
    write_root_manifest,
)
from icenb.spec import values
from icenb.spec.content_entry import (
    CONTENT_ENTRY_TYPE,
    ContentEntry,
    ContentStats,
    ContentType,
    DeletionVectorRef,
    EntryStatus,
    ManifestKind,
    ManifestStats,
    VersionInfo,
)
from icenb.spec.deletion_vector import serialize_deletion_vector
from icenb.spec.manifest import DataFile, FieldSummary, FileFormat, ManifestContent, ManifestEntry
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.transforms import parse_transform
from icenb.spec.types import LongType, NestedField, StringType, StructType
from tests.spec.test_content_entry import data, data_dv, entries, eq_delete

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "kind", StringType(), required=False))
PTYPE = StructType(NestedField(1000, "kind", StringType(), required=False))


@pytest.fixture
def io() -> FileIO:
    return FileIO()


def _bytes_of(t: Any, v: Any) -> bytes:
    return values.to_bytes(t, v)


def file_(tmp: Path, name: str, n: int = 10, lo: int = 0, hi: int = 9, kind: str = "a",
          **kw: Any) -> ContentEntry:
    cs = ContentStats.for_partition(
        PTYPE, (kind,), value_counts={1: n, 2: n}, null_value_counts={1: 0, 2: 0},
        lower_bounds={1: _bytes_of(LongType(), lo), 2: kind.encode()},
        upper_bounds={1: _bytes_of(LongType(), hi), 2: kind.encode()})
    return data(name, n, location=str(tmp / f"{name}.parquet"), content_stats=cs, **kw)


def _raw(path: Path, kind: str, records: list[dict[str, Any]], version: str = "4") -> bytes:
    """A manifest file written without any check (for invalid-structure tests)."""
    header = content_manifest_header(ManifestKind.ROOT) | {"content": kind,
                                                           "format-version": version}
    data_ = avro_container(header, header["avro.schema"], records, avro_codec(),
                       avro_sync_marker(None), str(path))
    path.write_bytes(data_)
    return data_


# --------------------------------------------------------------------------- format


def test_header_has_only_the_proposal_keys_and_avro_schema_ids(tmp_path: Path) -> None:
    raw = encode_content_manifest(str(tmp_path / "r.avro"), ManifestKind.ROOT, [data()])
    meta = avro_file_metadata("r", raw)
    assert set(meta) == {"avro.schema", "avro.codec", "format-version", "content"}
    assert (meta["format-version"], meta["content"], meta["avro.codec"]) == (b"4", b"root",
                                                                             b"deflate")
    schema = json.loads(meta["avro.schema"])
    assert schema["name"] == "content_entry"
    assert [(f["name"], f["field-id"]) for f in schema["fields"]] == [
        (f.name, f.field_id) for f in CONTENT_ENTRY_TYPE.fields]
    nested = {f["name"]: f for f in schema["fields"]}
    vi = nested["version_info"]["type"][1]
    assert (vi["name"], [(f["name"], f["field-id"]) for f in vi["fields"]]) == (
        "r5", [("status", 0), ("snapshot_id", 1), ("sequence_number", 3),
               ("file_sequence_number", 4)])
    dv = nested["deletion_vector"]["type"][1]
    assert [(f["name"], f["field-id"]) for f in dv["fields"]] == [
        ("offset", 144), ("size_in_bytes", 145), ("inline_content", 146)]
    ms = nested["manifest_stats"]["type"][1]
    assert [f["field-id"] for f in ms["fields"]] == [504, 505, 506, 512, 513, 514, 516]
    for kind in ("data", "delete"):
        leaf = encode_content_manifest("x", ManifestKind(kind), [])
        assert avro_file_metadata("x", leaf)["content"] == kind.encode()


@pytest.mark.parametrize("codec", ["gzip", "zstd", "snappy", "uncompressed"])
def test_codecs(tmp_path: Path, codec: str) -> None:
    es = [data(f"d{i}") for i in range(50)]
    raw = encode_content_manifest("m", ManifestKind.DATA, es,
                                  properties={"write.avro.compression-codec": codec})
    assert decode_content_manifest("m", raw).entries == tuple(es)


@st.composite
def manifests(draw: st.DrawFn) -> tuple[ManifestKind, list[ContentEntry]]:
    kind = draw(st.sampled_from(ManifestKind))
    allowed = {ManifestKind.DATA: {ContentType.DATA},
               ManifestKind.DELETE: {ContentType.POSITION_DELETE, ContentType.EQUALITY_DELETE},
               ManifestKind.ROOT: set(ContentType) - {ContentType.MANIFEST_DV}}[kind]
    es = draw(st.lists(entries().filter(lambda e: e.content_type in allowed), max_size=6))
    seen: set[str] = set()
    dv_of: set[str] = set()
    unique = []
    for e in es:  # a live manifest is listed once per root
        if e.content_type.is_manifest and e.is_live:
            if e.location in seen:
                continue
            seen.add(e.location)
        if e.content_type == ContentType.POSITION_DELETE and e.is_live:
            if (e.referenced_file or "") in dv_of:  # table spec: one DV per data file
                continue
            dv_of.add(e.referenced_file or "")
        unique.append(e)
    return kind, unique


@settings(max_examples=60, suppress_health_check=[HealthCheck.filter_too_much,
                                                  HealthCheck.too_slow])
@given(manifests())
def test_manifest_round_trip(m: tuple[ManifestKind, list[ContentEntry]]) -> None:
    kind, es = m
    raw = encode_content_manifest("s3://b/m.avro", kind, es)
    back = decode_content_manifest("s3://b/m.avro", raw)
    assert (back.kind, back.entries, back.length) == (kind, tuple(es), len(raw))


def test_arrow_table_for_planning(tmp_path: Path) -> None:
    raw = encode_content_manifest("m", ManifestKind.DATA, [file_(tmp_path, "d1"),
                                                           file_(tmp_path, "d2", kind="b")])
    kind, table = decode_content_manifest_table("m", raw, columns=["location",
                                                                   "content_stats.partition"])
    assert kind == ManifestKind.DATA
    assert table.column_names == ["location", "content_stats"]
    parts = table.column("content_stats").to_pylist()
    assert [p["partition"] for p in parts] == [[(1000, b"a")], [(1000, b"b")]]


# --------------------------------------------------------------------------- leaves and root


def test_leaf_entry_carries_counts_and_aggregated_stats(tmp_path: Path, io: FileIO) -> None:
    es = [file_(tmp_path, "d1", 10, 5, 9, "b"), file_(tmp_path, "d2", 20, -3, 4, "a"),
          file_(tmp_path, "d3", 7, 100, 200, "c",
                version_info=VersionInfo(EntryStatus.DELETED, 1, 1, 1)),
          file_(tmp_path, "d4", 4, 0, 1, "a",
                version_info=VersionInfo(EntryStatus.EXISTING, 1, 2, 2))]
    m = write_leaf_manifest(io, str(tmp_path / "m1.avro"), ManifestKind.DATA, es,
                            partition_spec_id=0, schema=SCHEMA, partition_type=PTYPE)
    assert m.content_type == ContentType.DATA_MANIFEST and m.status == EntryStatus.ADDED
    assert m.record_count == 4
    assert m.file_size_in_bytes == (tmp_path / "m1.avro").stat().st_size
    assert m.manifest_stats == ManifestStats(2, 1, 1, 30, 4, 7, 2)
    cs = m.content_stats
    assert cs is not None
    assert dict(cs.value_counts or {}) == {1: 34, 2: 34}  # live children only
    assert values.from_bytes(LongType(), (cs.lower_bounds or {})[1]) == -3
    assert values.from_bytes(LongType(), (cs.upper_bounds or {})[1]) == 9
    assert ((cs.lower_bounds or {})[2], (cs.upper_bounds or {})[2]) == (b"a", b"b")
    # partition summaries of all children, as a v3 manifest list has them
    assert cs.partitions == (FieldSummary(False, False, b"a", b"c"),)
    with pytest.raises(InvalidMetadata, match="one partition spec"):
        write_leaf_manifest(io, str(tmp_path / "m2.avro"), ManifestKind.DATA,
                            [file_(tmp_path, "x", partition_spec_id=1)], partition_spec_id=0)
    assert not (tmp_path / "m2.avro").exists()


def test_aggregated_bounds_stay_safe_for_pruning(tmp_path: Path) -> None:
    no_stats = data("n", 5, location=str(tmp_path / "n.parquet"))
    all_null = data("z", 5, content_stats=ContentStats(value_counts={1: 5},
                                                       null_value_counts={1: 5}))
    a = file_(tmp_path, "a", 10, 3, 8)
    cs = aggregate_content_stats([a, no_stats], schema=SCHEMA)
    assert cs.lower_bounds is None and cs.value_counts is None  # unknown column stats
    cs = aggregate_content_stats([a, all_null], schema=SCHEMA)
    assert values.from_bytes(LongType(), (cs.lower_bounds or {})[1]) == 3
    assert dict(cs.null_value_counts or {}) == {1: 5}
    assert aggregate_content_stats([a]).lower_bounds is None  # bounds need the schema


def test_root_assigns_sequence_numbers_and_row_ids(tmp_path: Path, io: FileIO) -> None:
    leaf = [file_(tmp_path, f"d{i}", 10) for i in range(3)]
    m1 = write_leaf_manifest(io, str(tmp_path / "m1.avro"), ManifestKind.DATA, leaf,
                             partition_spec_id=0)
    assert m1.manifest_stats is not None
    assert m1.manifest_stats.min_sequence_number == UNASSIGNED_SEQUENCE_NUMBER
    info = write_root_manifest(io, str(tmp_path / "root-1.avro"),
                               [m1, file_(tmp_path, "d4", 5)], sequence_number=7,
                               first_row_id=100)
    assert [e.first_row_id for e in info.entries] == [100, 130]
    assert (info.next_row_id, info.added_rows) == (135, 35)
    root = read_root_manifest(io, info.location, snapshot_id=42, sequence_number=7)
    assert root.kind == ManifestKind.ROOT and root.length == info.length
    m1r = root.entries[0]
    assert m1r.manifest_stats is not None and m1r.manifest_stats.min_sequence_number == 7
    assert m1r.version_info == VersionInfo(EntryStatus.ADDED, 42, 7, 7)
    [leafm] = read_leaves(io, root)
    assert [e.first_row_id for e in leafm.entries] == [100, 110, 120]
    assert {e.version_info for e in leafm.entries} == {VersionInfo(EntryStatus.ADDED, 42, 7, 7)}
    with pytest.raises(InvalidMetadata):
        write_root_manifest(io, str(tmp_path / "r.avro"), [], sequence_number=-1)


def test_remove_a_file_from_a_leaf_with_an_inline_manifest_dv(tmp_path: Path, io: FileIO
                                                                ) -> None:
    """Proposal, "Removing a File From a Leaf Manifest": DV1 marks ordinal 1 (D2) of M1."""
    leaf = [file_(tmp_path, n) for n in ("D1", "D2", "D3")]
    m1 = write_leaf_manifest(io, str(tmp_path / "M1.avro"), ManifestKind.DATA, leaf,
                             partition_spec_id=0)
    a = write_root_manifest(io, str(tmp_path / "A.avro"), [m1], sequence_number=1)
    root_a = read_root_manifest(io, a.location, snapshot_id=1, sequence_number=1)
    m1_existing = root_a.entries[0].with_status(EntryStatus.EXISTING)
    dv1 = inline_manifest_dv(m1_existing, [1])
    assert (dv1.location, dv1.referenced_file, dv1.record_count) == (m1.location, m1.location, 1)
    b = write_root_manifest(io, str(tmp_path / "B.avro"), [m1_existing, dv1], sequence_number=2)
    root_b = read_root_manifest(io, b.location, snapshot_id=2, sequence_number=2)
    assert [(e.content_type, e.status) for e in root_b.entries] == [
        (ContentType.DATA_MANIFEST, EntryStatus.EXISTING),
        (ContentType.MANIFEST_DV, EntryStatus.ADDED)]
    [leafm] = read_leaves(io, root_b)
    assert [Path(e.location).stem for e in leafm.live_entries()] == ["D1", "D3"]
    assert list(leafm.deleted) == [1]
    # the M1 entry kept snapshot 1's values; the leaf still inherits them
    assert {e.version_info.snapshot_id for e in leafm.entries} == {1}
    with pytest.raises(InvalidMetadata, match="ordinal beyond"):
        inline_manifest_dv(m1_existing, [3])
    with pytest.raises(InvalidMetadata, match="data or delete manifests"):
        inline_manifest_dv(leaf[0], [0])


def test_manifest_dv_in_a_puffin_file(tmp_path: Path, io: FileIO) -> None:
    leaf = [data_dv(str(tmp_path / f"d{i}.parquet"), location=str(tmp_path / "dv.puffin"))
            for i in range(4)] + [eq_delete(location=str(tmp_path / "eq.parquet"))]
    m = write_leaf_manifest(io, str(tmp_path / "del.avro"), ManifestKind.DELETE, leaf,
                            partition_spec_id=0)
    assert m.content_type == ContentType.DELETE_MANIFEST
    dv = write_puffin_manifest_dv(io, str(tmp_path / "mdv.puffin"), m, [0, 4])
    assert dv.deletion_vector is not None and not dv.deletion_vector.is_inline
    assert dv.file_size_in_bytes == (tmp_path / "mdv.puffin").stat().st_size
    info = write_root_manifest(io, str(tmp_path / "root.avro"), [m, dv], sequence_number=3)
    root = read_root_manifest(io, info.location, snapshot_id=5, sequence_number=3)
    assert load_manifest_dv(io, root.entries[1]).to_numpy().tolist() == [0, 4]
    [leafm] = read_leaves(io, root)
    assert len(leafm.live_entries()) == 3


# --------------------------------------------------------------------------- invalid on read


def test_leaf_that_references_a_manifest_is_rejected_on_read(tmp_path: Path, io: FileIO
                                                              ) -> None:
    inner = write_leaf_manifest(io, str(tmp_path / "inner.avro"), ManifestKind.DATA, [data()],
                                partition_spec_id=0)
    bad = tmp_path / "leaf.avro"
    _raw(bad, "data", [data().to_avro_record(), inner.to_avro_record()])
    with pytest.raises(InvalidMetadata, match="references a manifest") as info:
        read_content_manifest(io, str(bad))
    assert (info.value.file, info.value.field) == (str(bad), "entries[1].content_type")
    assert str(tmp_path / "inner.avro") in str(info.value)
    # and through a root that points at it
    entry = replace(inner, location=str(bad), file_size_in_bytes=bad.stat().st_size,
                    record_count=2)
    info_root = write_root_manifest(io, str(tmp_path / "root.avro"), [entry], sequence_number=1)
    root = read_root_manifest(io, info_root.location, snapshot_id=1, sequence_number=1)
    with pytest.raises(InvalidMetadata, match="references a manifest"):
        read_leaves(io, root)


def test_root_listed_as_a_leaf_is_rejected(tmp_path: Path, io: FileIO) -> None:
    r1 = write_root_manifest(io, str(tmp_path / "r1.avro"), [data()], sequence_number=1)
    entry = ContentEntry(content_type=ContentType.DATA_MANIFEST, location=r1.location,
                         file_format="avro", partition_spec_id=0, record_count=1,
                         file_size_in_bytes=r1.length, manifest_stats=ManifestStats(
                             1, 0, 0, 10, 0, 0, 1))
    r2 = write_root_manifest(io, str(tmp_path / "r2.avro"), [entry], sequence_number=2)
    root = read_root_manifest(io, r2.location, snapshot_id=2, sequence_number=2)
    with pytest.raises(InvalidMetadata, match="header says otherwise") as info:
        read_leaves(io, root)
    assert (info.value.file, info.value.field, info.value.value) == (r1.location, "content",
                                                                     "root")
    with pytest.raises(InvalidMetadata, match="must point to a root"):
        m = write_leaf_manifest(io, str(tmp_path / "l.avro"), ManifestKind.DATA, [data()],
                                partition_spec_id=0)
        read_root_manifest(io, m.location, snapshot_id=1, sequence_number=1)


def test_manifest_dv_outside_the_root_is_rejected_on_read(tmp_path: Path, io: FileIO) -> None:
    target = replace(write_leaf_manifest(io, str(tmp_path / "m.avro"), ManifestKind.DATA,
                                         [data()], partition_spec_id=0))
    dv = inline_manifest_dv(target, [0])
    for kind in ("data", "delete"):
        bad = tmp_path / f"{kind}.avro"
        _raw(bad, kind, [dv.to_avro_record()])
        with pytest.raises(InvalidMetadata, match="outside the root") as info:
            read_content_manifest(io, str(bad))
        assert (info.value.file, info.value.field) == (str(bad), "entries[0].content_type")
    with pytest.raises(InvalidMetadata, match="outside the root"):
        encode_content_manifest("x", ManifestKind.DATA, [dv])


def test_dv_whose_cardinality_disagrees_with_its_entry(tmp_path: Path, io: FileIO) -> None:
    leaf = [data(f"d{i}") for i in range(3)]
    m = write_leaf_manifest(io, str(tmp_path / "m.avro"), ManifestKind.DATA, leaf,
                            partition_spec_id=0)
    blob = serialize_deletion_vector([1])
    lying = ContentEntry(content_type=ContentType.MANIFEST_DV, location=m.location,
                         file_format="puffin", partition_spec_id=0, record_count=2,
                         file_size_in_bytes=len(blob), referenced_file=m.location,
                         deletion_vector=DeletionVectorRef(inline_content=blob))
    info = write_root_manifest(io, str(tmp_path / "root.avro"), [m, lying], sequence_number=1)
    root = read_root_manifest(io, info.location, snapshot_id=1, sequence_number=1)
    with pytest.raises(CorruptFile, match="1 ordinals") as err:
        read_leaves(io, root)
    assert (err.value.file, err.value.field, err.value.value) == (
        info.location, "entries[1].record_count", 2)
    # the same in a Puffin file
    good = write_puffin_manifest_dv(io, str(tmp_path / "dv.puffin"), m, [0, 2])
    with pytest.raises(CorruptFile) as err:
        load_manifest_dv(io, replace(good, record_count=3), file="root.avro", where="entries[4]")
    assert (err.value.file, err.value.field, err.value.value) == ("root.avro",
                                                                  "entries[4].record_count", 3)
    # a corrupt inline blob names the root
    broken = replace(lying, record_count=1,
                     deletion_vector=DeletionVectorRef(inline_content=blob[:-1] + b"\0"))
    with pytest.raises(CorruptFile, match="CRC") as err:
        load_manifest_dv(io, broken, file="root.avro")
    assert err.value.file == "root.avro"


def test_root_entry_that_disagrees_with_its_leaf(tmp_path: Path, io: FileIO) -> None:
    m = write_leaf_manifest(io, str(tmp_path / "m.avro"), ManifestKind.DATA,
                            [data("a"), data("b")], partition_spec_id=0)
    assert m.manifest_stats is not None
    lying = replace(m, manifest_stats=replace(m.manifest_stats, added_rows_count=5))
    info = write_root_manifest(io, str(tmp_path / "r.avro"), [lying], sequence_number=1)
    root = read_root_manifest(io, info.location, snapshot_id=1, sequence_number=1)
    with pytest.raises(InvalidMetadata) as err:
        read_leaf_manifest(io, root.entries[0])
    assert (err.value.file, err.value.field, err.value.value) == (
        m.location, "manifest_stats.added_rows_count", 5)


def test_headers_other_than_v4_are_rejected(tmp_path: Path, io: FileIO) -> None:
    rec = [data().to_avro_record()]
    with pytest.raises(UnsupportedVersion) as err:
        read_content_manifest(io, str(tmp_path / "v3.avro"), length=len(
            _raw(tmp_path / "v3.avro", "data", rec, version="3")))
    assert (err.value.field, err.value.value) == ("format-version", "3")
    _raw(tmp_path / "deletes.avro", "deletes", rec)
    with pytest.raises(InvalidMetadata) as err2:
        read_content_manifest(io, str(tmp_path / "deletes.avro"))
    assert (err2.value.field, err2.value.value) == ("content", b"deletes")


def test_invalid_entry_on_read_names_file_and_entry(tmp_path: Path, io: FileIO) -> None:
    rec = data().to_avro_record() | {"equality_ids": [1]}
    _raw(tmp_path / "m.avro", "data", [data().to_avro_record(), rec])
    with pytest.raises(InvalidMetadata) as err:
        read_content_manifest(io, str(tmp_path / "m.avro"))
    assert (err.value.file, err.value.field) == (str(tmp_path / "m.avro"),
                                                 "entries[1].equality_ids")
    existing = data(version_info=VersionInfo(EntryStatus.EXISTING, 1, None, None))
    info = write_root_manifest(io, str(tmp_path / "r.avro"), [existing], sequence_number=1)
    with pytest.raises(InvalidMetadata, match="explicit sequence numbers") as err:
        read_root_manifest(io, info.location, snapshot_id=2, sequence_number=2)
    assert err.value.file == info.location


def test_one_entry_root_is_smaller_than_v3s_list_and_manifest(tmp_path: Path, io: FileIO
                                                               ) -> None:
    """Proposal goal 1a: a small append writes one metadata file (besides the JSON); here it
    is also fewer bytes than the v3 manifest list + manifest for the same file."""
    f = file_(tmp_path, "d1")
    info = write_root_manifest(io, str(tmp_path / "r.avro"), [f], sequence_number=1,
                               first_row_id=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.avro"]
    assert info.length == (tmp_path / "r.avro").stat().st_size
    schema = Schema(*SCHEMA.fields, schema_id=0)
    spec = PartitionSpec(0, (PartitionField((2,), 1000, parse_transform("identity"), "kind"),))
    v3_file = DataFile(file_path=f.location, file_format="parquet", partition=("a",),
                       record_count=10, file_size_in_bytes=1000, value_counts={1: 10, 2: 10},
                       null_value_counts={1: 0, 2: 0}, lower_bounds=dict(
                           f.content_stats.lower_bounds or {}) if f.content_stats else None)
    manifest_bytes, m = encode_manifest("m.avro", spec, schema, 3, ManifestContent.DATA,
                                        [ManifestEntry(EntryStatus.ADDED, None, None, None,
                                                       v3_file)], snapshot_id=1)
    list_bytes, _ = encode_manifest_list("snap.avro", [m], format_version=3, snapshot_id=1,
                                         parent_snapshot_id=None, sequence_number=1,
                                         first_row_id=0)
    assert info.length < len(manifest_bytes) + len(list_bytes)


def test_a_second_live_dv_for_one_data_file_is_refused(tmp_path: Path) -> None:
    """Table spec, "Deletion Vectors": at most one DV per data file; the writer refuses a
    manifest with two live DVs for one data file, naming the second entry."""
    from icenb.errors import InvalidMetadata

    dvs = [ContentEntry(content_type=ContentType.POSITION_DELETE, location=f"s3://b/dv{i}.puffin",
                        file_format=FileFormat.PUFFIN, partition_spec_id=0, record_count=1,
                        version_info=VersionInfo(EntryStatus.ADDED, None, None, None),
                        file_size_in_bytes=40, referenced_file="s3://b/d.parquet",
                        deletion_vector=DeletionVectorRef(4, 30))
           for i in range(2)]
    with pytest.raises(InvalidMetadata) as err:
        encode_content_manifest("s3://b/m.avro", ManifestKind.DELETE, dvs)
    assert (err.value.file, err.value.field, err.value.value) == (
        "s3://b/m.avro", "entries[1].referenced_file", "s3://b/d.parquet")
    one = encode_content_manifest("s3://b/m.avro", ManifestKind.DELETE,
                                  [dvs[0], dvs[1].with_status(EntryStatus.DELETED)])
    assert len(decode_content_manifest("s3://b/m.avro", one).entries) == 2
