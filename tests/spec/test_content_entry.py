"""V4 content entries (experimental single-file-commits proposal): field ids against the
proposal's tables, the per-content_type rules, manifest and root/leaf rules, inheritance."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import InvalidMetadata, ValidationError
from icenb.spec.content_entry import (
    CONTENT_ENTRY_TYPE,
    CONTENT_STATS_TYPE,
    DELETION_VECTOR_TYPE,
    MANIFEST_STATS_TYPE,
    VERSION_INFO_TYPE,
    ContentEntry,
    ContentStats,
    ContentType,
    DeletionVectorRef,
    EntryStatus,
    InheritFrom,
    ManifestKind,
    ManifestStats,
    VersionInfo,
    check_leaf,
    check_manifest,
    inherit,
    snapshot_root_manifest,
)
from icenb.spec.manifest import FieldSummary, FileFormat
from icenb.spec.types import (
    DateType,
    IntegerType,
    NestedField,
    StringType,
    StructType,
)

# --------------------------------------------------------------------------- proposal tables

# Transcribed from the proposal's "V4 content entry structure" table (single-file-commits).
PROPOSAL_IDS = {
    "content_type": (134, True), "location": (100, True), "file_format": (101, True),
    "version_info": (5, False), "deletion_vector": (147, False),
    "partition_spec_id": (148, True), "sort_order_id": (140, False),
    "record_count": (103, True), "file_size_in_bytes": (104, False),
    "content_stats": (149, False), "manifest_stats": (521, False),
    "referenced_file": (143, False), "key_metadata": (131, False),
    "split_offsets": (132, False), "equality_ids": (135, False), "first_row_id": (142, False),
}


def _proposal_rows(text: str, start: str, end: str) -> dict[str, tuple[int, bool]]:
    """``name -> (id, required)`` of a tab-separated table of the proposal between two
    headings (first occurrences: the single-file-commits version of the table)."""
    section = text[text.index(start):text.index(end, text.index(start))]
    rows: dict[str, tuple[int, bool]] = {}
    for line in section.splitlines():
        cells = line.split("\t")
        m = re.match(r"^(\d+)", cells[0])
        if m is None or len(cells) < 4:
            continue
        name = cells[1].replace(" ", "")
        required = "required" in " ".join(cells[2:4])
        rows[name] = (int(m.group(1)), required)
    return rows


@pytest.fixture(scope="module")
def proposal(testdata_dir: Path) -> str:
    return (testdata_dir.parent / "specs" / "v4-single-file-commits.txt").read_text()


def test_entry_field_ids_match_the_proposal_table(proposal: str) -> None:
    rows = _proposal_rows(proposal, "V4 content entry structure",
                          "V4 content entry version_info struct")
    assert rows == PROPOSAL_IDS
    ours = {f.name: (f.field_id, f.required) for f in CONTENT_ENTRY_TYPE.fields}
    assert ours == PROPOSAL_IDS


def test_nested_struct_ids_match_the_proposal(proposal: str) -> None:
    vi = _proposal_rows(proposal, "V4 content entry version_info struct",
                        "V4 content entry deletion_vector struct")
    assert vi == {"status": (0, True), "snapshot_id": (1, False),
                  "sequence_number": (3, False), "file_sequence_number": (4, False)}
    assert {f.name: (f.field_id, f.required) for f in VERSION_INFO_TYPE.fields} == vi
    dv = _proposal_rows(proposal, "V4 content entry deletion_vector struct",
                        "V4 Manifest Key Value Metadata")
    assert {f.name: (f.field_id, f.required) for f in DELETION_VECTOR_TYPE.fields} == dv
    # manifest_stats ids are listed in the description of field 521
    line = next(x for x in proposal.splitlines() if x.startswith("521\tmanifest_stats"))
    listed = {n: int(i) for n, i in re.findall(r"(\w+) ?\((\d+)\)", line)}
    assert {f.name: f.field_id for f in MANIFEST_STATS_TYPE.fields} == listed
    list_ids = {f.name: (f.field_type.element_id, f.field_type.element_type)  # type: ignore[attr-defined]
                for f in CONTENT_ENTRY_TYPE.fields if f.name in ("split_offsets", "equality_ids")}
    assert (list_ids["split_offsets"][0], list_ids["equality_ids"][0]) == (133, 136)


def test_field_ids_are_unique_across_the_entry() -> None:
    ids: list[int] = []

    def walk(t: Any) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                ids.append(f.field_id)
                walk(f.field_type)
        elif hasattr(t, "element_id"):
            ids.append(t.element_id)
            walk(t.element_type)
        elif hasattr(t, "key_id"):
            ids.extend((t.key_id, t.value_id))
            walk(t.value_type)

    walk(CONTENT_ENTRY_TYPE)
    assert len(ids) == len(set(ids))
    assert {f.field_id for f in CONTENT_STATS_TYPE.fields} == {108, 109, 110, 137, 125, 128,
                                                              150, 507}


def test_content_type_values_match_the_proposal() -> None:
    assert [(t.name, int(t)) for t in ContentType] == [
        ("DATA", 0), ("POSITION_DELETE", 1), ("EQUALITY_DELETE", 2), ("DATA_MANIFEST", 3),
        ("DELETE_MANIFEST", 4), ("MANIFEST_DV", 5)]
    assert [(s.name, int(s)) for s in EntryStatus] == [("EXISTING", 0), ("ADDED", 1),
                                                        ("DELETED", 2)]


# --------------------------------------------------------------------------- builders


def data(name: str = "d1", n: int = 10, **kw: Any) -> ContentEntry:
    args: dict[str, Any] = {"content_type": ContentType.DATA, "location": f"s3://b/{name}.parquet",
                            "file_format": "parquet", "partition_spec_id": 0, "record_count": n,
                            "file_size_in_bytes": 1000}
    args.update(kw)
    return ContentEntry(**args)


def data_dv(target: str = "s3://b/d1.parquet", **kw: Any) -> ContentEntry:
    args: dict[str, Any] = {"content_type": ContentType.POSITION_DELETE,
                            "location": "s3://b/dv.puffin", "file_format": "puffin",
                            "partition_spec_id": 0, "record_count": 2, "file_size_in_bytes": 90,
                            "deletion_vector": DeletionVectorRef(offset=4, size_in_bytes=40),
                            "referenced_file": target}
    args.update(kw)
    return ContentEntry(**args)


def eq_delete(**kw: Any) -> ContentEntry:
    args: dict[str, Any] = {"content_type": ContentType.EQUALITY_DELETE,
                            "location": "s3://b/eq.parquet", "file_format": "parquet",
                            "partition_spec_id": 0, "record_count": 3, "file_size_in_bytes": 50,
                            "equality_ids": (1,)}
    args.update(kw)
    return ContentEntry(**args)


def stats(files: int = 3, rows: int = 30) -> ManifestStats:
    return ManifestStats(files, 0, 0, rows, 0, 0, 1)


def manifest(name: str = "m1", ctype: ContentType = ContentType.DATA_MANIFEST, n: int = 3,
             **kw: Any) -> ContentEntry:
    args: dict[str, Any] = {"content_type": ctype, "location": f"s3://b/{name}.avro",
                            "file_format": "avro", "partition_spec_id": 0, "record_count": n,
                            "file_size_in_bytes": 4000, "manifest_stats": stats(n, 10 * n)}
    args.update(kw)
    return ContentEntry(**args)


def manifest_dv(target: str = "s3://b/m1.avro", card: int = 1, **kw: Any) -> ContentEntry:
    args: dict[str, Any] = {"content_type": ContentType.MANIFEST_DV, "location": target,
                            "file_format": "puffin", "partition_spec_id": 0,
                            "record_count": card, "file_size_in_bytes": 30,
                            "deletion_vector": DeletionVectorRef(inline_content=b"x" * 30),
                            "referenced_file": target}
    args.update(kw)
    return ContentEntry(**args)


# --------------------------------------------------------------------------- per-type rules


def test_valid_entries_of_every_type() -> None:
    for e in (data(sort_order_id=1, split_offsets=[4, 100], first_row_id=0), data_dv(),
              eq_delete(), manifest(first_row_id=5),
              manifest("dm", ContentType.DELETE_MANIFEST, referenced_file="s3://b/m1.avro"),
              manifest_dv(), manifest_dv(location="s3://b/mdv.puffin",
                                         deletion_vector=DeletionVectorRef(4, 40))):
        assert e.is_live and e.status == EntryStatus.ADDED


BAD = [
    ("content_type", lambda: data(content_type=6)),
    ("location", lambda: data(location="")),
    ("partition_spec_id", lambda: data(partition_spec_id=None)),
    ("record_count", lambda: data(n=-1)),
    ("file_size_in_bytes", lambda: data(file_size_in_bytes=None)),
    ("file_format", lambda: data(file_format="csv")),
    ("version_info.status", lambda: data(version_info=VersionInfo(7))),
    # deletion_vector: must be defined for 1 and 5, null otherwise
    ("deletion_vector", lambda: data(deletion_vector=DeletionVectorRef(0, 10))),
    ("deletion_vector", lambda: data_dv(deletion_vector=None)),
    ("deletion_vector", lambda: manifest_dv(deletion_vector=None)),
    ("deletion_vector.inline_content",
     lambda: data_dv(deletion_vector=DeletionVectorRef(inline_content=b"abc"))),
    ("deletion_vector.size_in_bytes",
     lambda: data_dv(deletion_vector=DeletionVectorRef(offset=4))),
    ("deletion_vector.offset", lambda: data_dv(deletion_vector=DeletionVectorRef(
        size_in_bytes=4))),
    ("deletion_vector.offset", lambda: manifest_dv(deletion_vector=DeletionVectorRef(
        4, 10, b"x"))),
    ("deletion_vector", lambda: manifest_dv(deletion_vector=DeletionVectorRef())),
    ("record_count", lambda: manifest_dv(card=0)),
    ("file_format", lambda: data_dv(file_format="parquet")),
    # sort_order_id only for data files
    ("sort_order_id", lambda: eq_delete(sort_order_id=1)),
    ("sort_order_id", lambda: manifest(sort_order_id=1)),
    # manifest_stats iff 3 or 4
    ("manifest_stats", lambda: manifest(manifest_stats=None)),
    ("manifest_stats", lambda: data(manifest_stats=stats())),
    ("file_format", lambda: manifest(file_format="parquet")),
    # referenced_file: 1 and 5 need it, 4 may have it, others not
    ("referenced_file", lambda: data_dv(referenced_file=None)),
    ("referenced_file", lambda: manifest_dv(referenced_file=None)),
    ("referenced_file", lambda: data(referenced_file="s3://b/x")),
    ("referenced_file", lambda: manifest(referenced_file="s3://b/x")),
    ("referenced_file", lambda: eq_delete(referenced_file="s3://b/x")),
    # equality_ids iff 2
    ("equality_ids", lambda: eq_delete(equality_ids=None)),
    ("equality_ids", lambda: eq_delete(equality_ids=())),
    ("equality_ids", lambda: data(equality_ids=(1,))),
    # first_row_id only for 0 and 3
    ("first_row_id", lambda: eq_delete(first_row_id=0)),
    ("first_row_id", lambda: manifest("d", ContentType.DELETE_MANIFEST, first_row_id=0)),
    ("first_row_id", lambda: data(first_row_id=-1)),
    ("split_offsets", lambda: data(split_offsets=(100, 4))),
    ("split_offsets", lambda: manifest(split_offsets=(4,))),
    ("content_stats", lambda: manifest_dv(content_stats=ContentStats())),
    # sequence_number == file_sequence_number for manifests
    ("version_info.sequence_number",
     lambda: manifest(version_info=VersionInfo(EntryStatus.EXISTING, 1, 3, 4))),
]


@pytest.mark.parametrize(("field", "make"), BAD, ids=[f"{i}-{f}" for i, (f, _) in
                                                      enumerate(BAD)])
def test_each_rule_rejects_with_the_field_named(field: str, make: Any) -> None:
    with pytest.raises(InvalidMetadata) as info:
        make()
    assert info.value.field == field
    assert isinstance(info.value, ValidationError)


def test_with_status_keeps_resolved_values() -> None:
    e = data(version_info=VersionInfo(EntryStatus.ADDED, 7, 3, 3))
    ex = e.with_status(EntryStatus.EXISTING)
    assert ex.version_info == VersionInfo(EntryStatus.EXISTING, 7, 3, 3)
    assert e.with_status(EntryStatus.DELETED, 9).version_info.snapshot_id == 9


# --------------------------------------------------------------------------- Avro records

_longs = st.integers(0, 2**62)
_maybe = st.none() | _longs


@st.composite
def entries(draw: st.DrawFn) -> ContentEntry:
    ctype = draw(st.sampled_from(ContentType))
    status = draw(st.sampled_from(EntryStatus))
    vi = VersionInfo(status, draw(_maybe), draw(_maybe), draw(_maybe))
    loc = "s3://b/" + draw(st.text(min_size=1, max_size=12))
    kw: dict[str, Any] = {"content_type": ctype, "location": loc,
                          "partition_spec_id": draw(st.integers(0, 2**31 - 1)),
                          "record_count": draw(st.integers(1, 2**62)),
                          "file_size_in_bytes": draw(_longs),
                          "key_metadata": draw(st.none() | st.binary(max_size=8))}
    counts = st.dictionaries(st.integers(1, 2**31 - 1), _longs, max_size=3)
    bounds = st.dictionaries(st.integers(1, 2**31 - 1), st.binary(max_size=8), max_size=3)
    cs = ContentStats(value_counts=draw(st.none() | counts),
                      null_value_counts=draw(st.none() | counts),
                      lower_bounds=draw(st.none() | bounds), upper_bounds=draw(st.none() | bounds),
                      partition=draw(st.none() | st.dictionaries(
                          st.integers(1000, 1010), st.none() | st.binary(max_size=8))))
    if ctype == ContentType.DATA:
        kw.update(file_format=draw(st.sampled_from(["parquet", "orc", "avro"])),
                  sort_order_id=draw(st.none() | st.integers(0, 9)), content_stats=cs,
                  split_offsets=draw(st.none() | st.lists(_longs, max_size=4).map(sorted)),
                  first_row_id=draw(_maybe))
    elif ctype == ContentType.EQUALITY_DELETE:
        kw.update(file_format="parquet", content_stats=cs,
                  equality_ids=draw(st.lists(st.integers(1, 99), min_size=1, max_size=3)))
    elif ctype.is_deletion_vector:
        kw.update(file_format="puffin", referenced_file=loc + ".target")
        if ctype == ContentType.MANIFEST_DV and draw(st.booleans()):
            blob = draw(st.binary(min_size=1, max_size=40))
            kw["deletion_vector"] = DeletionVectorRef(inline_content=blob)
        else:
            kw["deletion_vector"] = DeletionVectorRef(draw(_longs), draw(st.integers(1, 2**40)))
        if ctype == ContentType.POSITION_DELETE:
            kw["content_stats"] = cs
    else:
        seq = draw(_maybe)
        kw.update(file_format="avro", content_stats=replace(cs, partitions=(
            FieldSummary(True, False, b"a", b"z"), FieldSummary(False, None, None, None))),
                  manifest_stats=ManifestStats(*(draw(st.integers(0, 2**31 - 1))
                                                 for _ in range(3)),
                                               *(draw(_longs) for _ in range(4))))
        kw["version_info"] = VersionInfo(status, vi.snapshot_id, seq, seq)
        if ctype == ContentType.DATA_MANIFEST:
            kw["first_row_id"] = draw(_maybe)
        else:
            kw["referenced_file"] = draw(st.none() | st.just("s3://b/m.avro"))
    kw.setdefault("version_info", vi)
    return ContentEntry(**kw)


@given(entries())
def test_avro_record_round_trip(e: ContentEntry) -> None:
    assert ContentEntry.from_avro_record(e.to_avro_record()) == e


def test_record_reading_names_entry_and_field() -> None:
    rec = data().to_avro_record()
    del rec["record_count"]
    with pytest.raises(InvalidMetadata) as info:
        ContentEntry.from_avro_record(rec, where="entries[4]")
    assert info.value.field == "entries[4].record_count"
    rec = data().to_avro_record() | {"equality_ids": [3]}
    with pytest.raises(InvalidMetadata) as info:
        ContentEntry.from_avro_record(rec, where="entries[2]")
    assert info.value.field == "entries[2].equality_ids"
    assert info.value.value == (3,)


def test_null_version_info_reads_as_added_and_inherited() -> None:
    rec = data().to_avro_record() | {"version_info": None}
    assert ContentEntry.from_avro_record(rec).version_info == VersionInfo(EntryStatus.ADDED)


def test_partition_tuple_round_trip_through_field_ids() -> None:
    ptype = StructType(NestedField(1000, "kind", StringType(), required=False),
                       NestedField(1001, "ts_day", DateType(), required=False))
    cs = ContentStats.for_partition(ptype, ("commit", 20624))
    assert dict(cs.partition or {}) == {1000: b"commit", 1001: (20624).to_bytes(4, "little")}
    assert cs.partition_tuple(ptype) == ("commit", 20624)
    assert ContentStats.for_partition(ptype, (None, 1)).partition_tuple(ptype) == (None, 1)
    # a later spec's field the file's map lacks reads as null
    wider = StructType(*ptype.fields, NestedField(1002, "b", IntegerType(), required=False))
    assert cs.partition_tuple(wider) == ("commit", 20624, None)
    with pytest.raises(InvalidMetadata):
        ContentStats.for_partition(ptype, ("only-one",))


# --------------------------------------------------------------------------- manifest rules


def test_leaf_that_references_a_manifest_is_rejected() -> None:
    with pytest.raises(InvalidMetadata, match="references a manifest") as info:
        check_manifest(ManifestKind.DATA, [data(), manifest()], file="s3://b/leaf.avro")
    assert (info.value.file, info.value.field) == ("s3://b/leaf.avro", "entries[1].content_type")
    assert "s3://b/m1.avro" in str(info.value)
    with pytest.raises(InvalidMetadata, match="references a manifest"):
        check_manifest(ManifestKind.DELETE, [manifest("d", ContentType.DELETE_MANIFEST)])


def test_manifest_dv_outside_the_root_is_rejected() -> None:
    for kind in (ManifestKind.DATA, ManifestKind.DELETE):
        with pytest.raises(InvalidMetadata, match="outside the root") as info:
            check_manifest(kind, [manifest_dv()], file="s3://b/leaf.avro")
        assert info.value.field == "entries[0].content_type"


def test_leaf_content_is_its_kind_only() -> None:
    check_manifest(ManifestKind.DATA, [data(), data("d2")])
    check_manifest(ManifestKind.DELETE, [data_dv(), eq_delete()])
    with pytest.raises(InvalidMetadata, match="data manifest cannot hold POSITION_DELETE"):
        check_manifest(ManifestKind.DATA, [data_dv()])
    with pytest.raises(InvalidMetadata, match="delete manifest cannot hold DATA"):
        check_manifest(ManifestKind.DELETE, [data()])


def test_root_rules() -> None:
    m1 = manifest()
    check_manifest(ManifestKind.ROOT, [m1, data("d4"), manifest_dv(), data_dv(), eq_delete()])
    with pytest.raises(InvalidMetadata, match="listed twice"):
        check_manifest(ManifestKind.ROOT, [m1, m1])
    # a DELETED entry and a live one for the same manifest is a removal, not a duplicate
    check_manifest(ManifestKind.ROOT, [m1.with_status(EntryStatus.DELETED), m1])
    with pytest.raises(InvalidMetadata, match="applies to no live manifest") as info:
        check_manifest(ManifestKind.ROOT, [m1, manifest_dv("s3://b/other.avro")])
    assert info.value.field == "entries[1].referenced_file"
    with pytest.raises(InvalidMetadata, match="no live manifest"):
        check_manifest(ManifestKind.ROOT, [m1.with_status(EntryStatus.DELETED), manifest_dv()])
    with pytest.raises(InvalidMetadata, match="second live manifest DV"):
        check_manifest(ManifestKind.ROOT, [m1, manifest_dv(), manifest_dv()])
    check_manifest(ManifestKind.ROOT, [m1, manifest_dv().with_status(EntryStatus.DELETED),
                                       manifest_dv()])
    with pytest.raises(InvalidMetadata, match="partition_spec_id"):
        check_manifest(ManifestKind.ROOT, [m1, manifest_dv(partition_spec_id=1)])


def test_leaf_pair_rules() -> None:
    leaf = [data("d1"), data("d2"), data("d3")]
    m1 = manifest(n=3, manifest_stats=ManifestStats(3, 0, 0, 30, 0, 0, 1))
    check_leaf(m1, ManifestKind.DATA, leaf, deleted_positions=[0, 2])
    with pytest.raises(InvalidMetadata, match="header says otherwise") as info:
        check_leaf(m1, ManifestKind.DELETE, leaf, file="s3://b/m1.avro")
    assert (info.value.file, info.value.value) == ("s3://b/m1.avro", "delete")
    with pytest.raises(InvalidMetadata, match="record_count"):
        check_leaf(replace(m1, record_count=4), ManifestKind.DATA, leaf)
    with pytest.raises(InvalidMetadata) as info:
        check_leaf(replace(m1, manifest_stats=ManifestStats(2, 1, 0, 20, 10, 0, 1)),
                   ManifestKind.DATA, leaf)
    assert info.value.field == "manifest_stats.added_files_count"
    with pytest.raises(InvalidMetadata, match="ordinal 3"):
        check_leaf(m1, ManifestKind.DATA, leaf, deleted_positions=[3])
    with pytest.raises(InvalidMetadata, match="references a manifest"):
        check_leaf(m1, ManifestKind.DATA, [*leaf[:2], manifest("x")])


def test_snapshot_has_exactly_one_root() -> None:
    assert snapshot_root_manifest({"snapshot-id": 1, "root-manifest": "s3://b/r.avro"}) == \
        "s3://b/r.avro"
    with pytest.raises(InvalidMetadata) as info:
        snapshot_root_manifest({"snapshot-id": 1}, file="v3.metadata.json")
    assert info.value.field == "snapshots[1].root-manifest"
    with pytest.raises(InvalidMetadata, match="no manifest-list"):
        snapshot_root_manifest({"snapshot-id": 2, "root-manifest": "r",
                                "manifest-list": "snap-2.avro"})


# --------------------------------------------------------------------------- inheritance


def test_inheritance_from_the_snapshot_and_root_entry() -> None:
    got = inherit([data("a", 5), data("b", 7, first_row_id=100),
                   data("c", 2, version_info=VersionInfo(EntryStatus.EXISTING, 3, 2, 2))],
                  InheritFrom(snapshot_id=9, sequence_number=4, first_row_id=50))
    assert [e.version_info for e in got] == [
        VersionInfo(EntryStatus.ADDED, 9, 4, 4), VersionInfo(EntryStatus.ADDED, 9, 4, 4),
        VersionInfo(EntryStatus.EXISTING, 3, 2, 2)]
    assert [e.first_row_id for e in got] == [50, 100, 55]
    # an explicit data sequence number on an ADDED entry is kept
    kept = inherit([data(version_info=VersionInfo(EntryStatus.ADDED, None, 2, None))],
                   InheritFrom(9, 4))
    assert kept[0].version_info == VersionInfo(EntryStatus.ADDED, 9, 2, 4)
    root_entry = inherit([manifest(first_row_id=70)], InheritFrom(5, 3))[0]
    assert InheritFrom.from_root_entry(root_entry) == InheritFrom(5, 3, 70)
    with pytest.raises(InvalidMetadata):
        InheritFrom.from_root_entry(manifest())


def test_existing_and_deleted_entries_need_sequence_numbers() -> None:
    for status in (EntryStatus.EXISTING, EntryStatus.DELETED):
        with pytest.raises(InvalidMetadata) as info:
            inherit([data(), data(version_info=VersionInfo(status, 1, None, 1))],
                    InheritFrom(9, 4), file="s3://b/m.avro")
        assert info.value.field == "entries[1].version_info.sequence_number"
        assert info.value.file == "s3://b/m.avro"
    deleted = inherit([data(version_info=VersionInfo(EntryStatus.DELETED, None, 1, 1))],
                      InheritFrom(9, 4))
    assert deleted[0].version_info.snapshot_id == 9  # deleted by this snapshot


def test_file_format_enum_is_shared_with_v3() -> None:
    assert data(file_format="PARQUET").file_format is FileFormat.PARQUET
