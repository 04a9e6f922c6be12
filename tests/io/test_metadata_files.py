"""Metadata files: find the current one (Hadoop and metastore layouts), read plain/gzip, write."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icenb.errors import AlreadyExists, CorruptFile, InvalidMetadata, NotFound
from icenb.io import FileIO, find_current_metadata, load_table_metadata, load_view_metadata_file
from icenb.io.metadata_files import (
    MetadataFileName,
    hadoop_metadata_file_name,
    metastore_metadata_file_name,
    parse_metadata_file_name,
    read_metadata_json,
    write_metadata_file,
)
from icenb.spec.table_metadata import table_metadata_from_json
from tests.reference_fixtures import JavaTables

# --------------------------------------------------------------------------- Java's tables


def test_java_tables_cover_both_layouts_and_gzip(java_tables: JavaTables) -> None:
    files = java_tables.metadata_files()
    assert {f.catalog for f in files} == {"hadoop", "hive"}
    assert {(f.kind, f.gzip) for f in files} >= {("table", False), ("table", True),
                                                  ("view", False), ("view", True)}


def test_finds_the_newest_metadata_of_every_java_table_and_view(java_tables: JavaTables) -> None:
    io = FileIO()
    for entry in java_tables.entries():
        name = entry["name"]
        directory = java_tables.location(name)
        latest = java_tables.latest(name).path
        assert find_current_metadata(str(directory), io) == str(latest), name
        assert find_current_metadata(str(directory / "metadata"), io) == str(latest), name
        assert find_current_metadata(f"file:{directory}/", io) == f"file:{latest}", name


def test_loads_every_java_table_from_its_directory(java_tables: JavaTables) -> None:
    for entry in java_tables.entries("table"):
        latest = java_tables.latest(entry["name"])
        md = load_table_metadata(str(java_tables.location(entry["name"])), strict=True)
        assert md.source_file == str(latest.path)
        assert md.format_version == latest.format_version
        assert Path(md.location.removeprefix("file:")) == java_tables.location(entry["name"])


def test_loads_every_java_view_from_its_directory(java_tables: JavaTables) -> None:
    for entry in java_tables.entries("view"):
        latest = java_tables.latest(entry["name"])
        md = load_view_metadata_file(f"file://{java_tables.location(entry['name'])}")
        assert md.format_version == latest.format_version
        assert Path(md.location.removeprefix("file:")) == java_tables.location(entry["name"])
        assert len(md.version_log) >= 1


def test_loads_every_java_metadata_file_plain_or_gzip(java_tables: JavaTables) -> None:
    io = FileIO()
    for f in java_tables.metadata_files():
        assert (f.path.read_bytes()[:2] == b"\x1f\x8b") == f.gzip
        if f.kind == "table":
            md = load_table_metadata(str(f.path), io)
            assert md.format_version == f.format_version
        else:
            view = load_view_metadata_file(str(f.path), io)
            assert view.format_version == f.format_version
    assert io.stats.opened == len(java_tables.metadata_files())  # one open per file, no lookups


def test_table_and_view_metadata_are_not_confused(java_tables: JavaTables) -> None:
    view = java_tables.latest("db.sql_view").path
    table = java_tables.latest("db.v2_refs").path
    with pytest.raises(InvalidMetadata, match="view metadata") as info:
        load_table_metadata(str(view))
    assert info.value.file == str(view)
    with pytest.raises(InvalidMetadata, match="table metadata") as info:
        load_view_metadata_file(str(table))
    assert info.value.file == str(table)


# --------------------------------------------------------------------------- Hadoop layout


@pytest.fixture(scope="module")
def table_json(java_tables: JavaTables) -> bytes:
    """A real (plain) table metadata document to copy into made-up directories."""
    return java_tables.latest("db.v2_refs").path.read_bytes()


def _hadoop_dir(root: Path, versions: list[str], hint: str | None) -> Path:
    metadata = root / "t" / "metadata"
    metadata.mkdir(parents=True)
    for name in versions:
        (metadata / name).write_bytes(name.encode())
    for noise in ("snap-1-1-abc.avro", "abc-m0.avro", "v9.metadata.json.tmp", "v007.metadata.json",
                  ".v9.metadata.json.1234.tmp", "00099-x.metadata.json.crc"):
        (metadata / noise).write_bytes(b"")
    if hint is not None:
        (metadata / "version-hint.text").write_text(hint)
    return root / "t"


@pytest.mark.parametrize(
    ("versions", "hint", "current"),
    [
        (["v1.metadata.json", "v2.metadata.json", "v3.metadata.json"], "3", "v3.metadata.json"),
        (["v1.metadata.json", "v2.metadata.json", "v3.metadata.json"], "3\n", "v3.metadata.json"),
        # a stale hint: later versions are found
        (["v1.metadata.json", "v2.metadata.json", "v3.metadata.json"], "1", "v3.metadata.json"),
        # a missing or unreadable hint: the highest version in the directory
        (["v1.metadata.json", "v2.metadata.json", "v10.metadata.json"], None, "v10.metadata.json"),
        (["v1.metadata.json", "v2.metadata.json"], "not a number", "v2.metadata.json"),
        (["v1.metadata.json", "v2.metadata.json"], "", "v2.metadata.json"),
        # gzip names, including the older .metadata.json.gz
        (["v1.metadata.json", "v2.gz.metadata.json"], "1", "v2.gz.metadata.json"),
        (["v1.gz.metadata.json", "v2.metadata.json.gz"], None, "v2.metadata.json.gz"),
        # one version in two encodings: Java's order (plain, .gz.metadata.json, .metadata.json.gz)
        (["v2.metadata.json.gz", "v2.gz.metadata.json", "v2.metadata.json"], None,
         "v2.metadata.json"),
        (["v2.metadata.json.gz", "v2.gz.metadata.json"], "2", "v2.gz.metadata.json"),
        # a hint holding a file name, as some writers do
        (["v1.metadata.json", "v2.metadata.json"], "v1.metadata.json", "v2.metadata.json"),
    ],
)
def test_hadoop_layout(tmp_path: Path, versions: list[str], hint: str | None,
                       current: str) -> None:
    table = _hadoop_dir(tmp_path, versions, hint)
    expected = str(table / "metadata" / current)
    assert find_current_metadata(str(table)) == expected
    assert find_current_metadata(str(table / "metadata")) == expected


def test_a_correct_hint_means_no_listing(tmp_path: Path, table_json: bytes) -> None:
    table = _hadoop_dir(tmp_path, ["v1.metadata.json"], "2")
    (table / "metadata" / "v2.metadata.json").write_bytes(table_json)
    io = FileIO()
    md = load_table_metadata(str(table), io)
    assert md.source_file == str(table / "metadata" / "v2.metadata.json")
    assert io.stats.listed == 0
    assert io.stats.opened == 2  # the hint and the metadata file, nothing else


def test_a_hint_naming_a_missing_version_is_not_found(tmp_path: Path) -> None:
    table = _hadoop_dir(tmp_path, ["v1.metadata.json", "v2.metadata.json"], "5")
    with pytest.raises(NotFound, match="version 5") as info:
        find_current_metadata(str(table))
    assert info.value.file == str(table / "metadata" / "version-hint.text")


# --------------------------------------------------------------------------- metastore layout

U1 = "0d0b6f35-6a0e-4b5e-9a50-5c0f1f8f6a11"
U2 = "9f1c2d3e-1111-4222-8333-944455556666"


def _metastore_dir(root: Path, names: list[str]) -> Path:
    metadata = root / "t" / "metadata"
    metadata.mkdir(parents=True)
    for name in [*names, "snap-5-1-x.avro", "x-m0.avro"]:
        (metadata / name).write_bytes(b"")
    return root / "t"


@pytest.mark.parametrize(
    ("names", "current"),
    [
        ([f"00000-{U1}.metadata.json", f"00001-{U2}.metadata.json"], f"00001-{U2}.metadata.json"),
        ([f"00000-{U1}.gz.metadata.json", f"00001-{U2}.gz.metadata.json"],
         f"00001-{U2}.gz.metadata.json"),
        ([f"00001-{U1}.metadata.json", f"00002-{U2}.metadata.json.gz"],
         f"00002-{U2}.metadata.json.gz"),
        # numbers, not strings: 100000 follows 99999
        ([f"99999-{U1}.metadata.json", f"100000-{U2}.metadata.json"],
         f"100000-{U2}.metadata.json"),
    ],
)
def test_metastore_layout(tmp_path: Path, names: list[str], current: str) -> None:
    table = _metastore_dir(tmp_path, names)
    assert find_current_metadata(f"file:{table}") == f"file:{table}/metadata/{current}"


def test_two_files_with_the_highest_number_are_ambiguous(tmp_path: Path) -> None:
    a, b = f"00003-{U1}.metadata.json", f"00003-{U2}.metadata.json"
    table = _metastore_dir(tmp_path, [f"00002-{U1}.metadata.json", a, b])
    with pytest.raises(InvalidMetadata) as info:
        find_current_metadata(str(table))
    assert a in str(info.value) and b in str(info.value)
    assert info.value.file == str(table / "metadata")


def test_both_layouts_without_a_hint_are_ambiguous(tmp_path: Path) -> None:
    table = _metastore_dir(tmp_path, [f"00003-{U1}.metadata.json", "v2.metadata.json"])
    with pytest.raises(InvalidMetadata, match="layout"):
        find_current_metadata(str(table))


def test_nothing_to_find_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound) as info:
        find_current_metadata(str(tmp_path / "missing"))
    assert info.value.file == str(tmp_path / "missing")
    (tmp_path / "empty" / "metadata").mkdir(parents=True)
    with pytest.raises(NotFound, match="no metadata files") as info:
        load_table_metadata(str(tmp_path / "empty"))
    assert info.value.file == str(tmp_path / "empty" / "metadata")
    with pytest.raises(NotFound) as info:
        load_table_metadata(str(tmp_path / "empty" / "metadata" / "v1.metadata.json"))
    assert info.value.file == str(tmp_path / "empty" / "metadata" / "v1.metadata.json")


def test_a_metadata_file_location_is_its_own_current_file(tmp_path: Path) -> None:
    table = _hadoop_dir(tmp_path, ["v1.metadata.json", "v2.metadata.json"], "2")
    older = str(table / "metadata" / "v1.metadata.json")
    assert find_current_metadata(older) == older


# --------------------------------------------------------------------------- reading bytes


def test_compression_is_detected_from_the_bytes_not_the_name(tmp_path: Path,
                                                             table_json: bytes) -> None:
    gz_named_plain = tmp_path / "v1.gz.metadata.json"
    gz_named_plain.write_bytes(table_json)
    plain_named_gz = tmp_path / "v2.metadata.json"
    plain_named_gz.write_bytes(gzip.compress(table_json))
    for path in (gz_named_plain, plain_named_gz):
        assert read_metadata_json(str(path)) == table_json
    expected = table_metadata_from_json(table_json)
    assert load_table_metadata(str(plain_named_gz)) == expected


def test_truncated_gzip_is_a_corrupt_file(tmp_path: Path, table_json: bytes) -> None:
    path = tmp_path / "v1.gz.metadata.json"
    path.write_bytes(gzip.compress(table_json)[:-20])
    with pytest.raises(CorruptFile) as info:
        load_table_metadata(str(path))
    assert info.value.file == str(path)
    path.write_bytes(b"\x1f\x8b" + b"garbage" * 10)
    with pytest.raises(CorruptFile):
        load_view_metadata_file(f"file:{path}")


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"format-version": 2,'])
def test_malformed_json_is_a_corrupt_file_naming_it(tmp_path: Path, content: bytes) -> None:
    table = _hadoop_dir(tmp_path, [], "1")
    (table / "metadata" / "v1.metadata.json").write_bytes(content)
    with pytest.raises(CorruptFile) as info:
        load_table_metadata(str(table))
    assert info.value.file == str(table / "metadata" / "v1.metadata.json")


# --------------------------------------------------------------------------- writing


def test_write_metadata_file_creates_once(tmp_path: Path, table_json: bytes) -> None:
    io = FileIO()
    loc = f"file:{tmp_path}/t/metadata/v1.metadata.json"
    write_metadata_file(loc, table_json, io)
    assert load_table_metadata(loc, io) == table_metadata_from_json(table_json)
    with pytest.raises(AlreadyExists) as info:
        write_metadata_file(loc, b"{}", io)
    assert info.value.file == loc
    assert read_metadata_json(loc, io) == table_json


def test_write_gzip_metadata_is_deterministic_and_readable(tmp_path: Path,
                                                           table_json: bytes) -> None:
    a, b = tmp_path / "v1.gz.metadata.json", tmp_path / "v2.gz.metadata.json"
    write_metadata_file(str(a), table_json, gzip=True)
    write_metadata_file(str(b), table_json.decode(), gzip=True)
    assert a.read_bytes()[:2] == b"\x1f\x8b"
    assert a.read_bytes() == b.read_bytes()
    assert find_current_metadata(str(tmp_path)) == str(b)
    assert load_table_metadata(str(tmp_path)) == table_metadata_from_json(table_json)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("v1.metadata.json", MetadataFileName("hadoop", 1, False, None)),
        ("v12.gz.metadata.json", MetadataFileName("hadoop", 12, True, None)),
        ("v3.metadata.json.gz", MetadataFileName("hadoop", 3, True, None)),
        (f"00004-{U1}.metadata.json", MetadataFileName("metastore", 4, False, U1)),
        (f"00004-{U1}.gz.metadata.json", MetadataFileName("metastore", 4, True, U1)),
        ("v01.metadata.json", None),
        ("v1.metadata.json.tmp", None),
        ("version-hint.text", None),
        ("snap-1-1-x.avro", None),
        ("4e9b36a8-e31f-429b-86e3-e950146addd7.metadata.json", None),
    ],
)
def test_parse_metadata_file_name(name: str, parsed: MetadataFileName | None) -> None:
    assert parse_metadata_file_name(name) == parsed


@given(st.integers(0, 10**9), st.uuids(), st.booleans())
def test_metadata_file_names_round_trip(version: int, file_uuid: object, gz: bool) -> None:
    hadoop = hadoop_metadata_file_name(version, gzip=gz)
    assert parse_metadata_file_name(hadoop) == MetadataFileName("hadoop", version, gz, None)
    metastore = metastore_metadata_file_name(version, str(file_uuid), gzip=gz)
    assert metastore[:5].isdigit()
    assert parse_metadata_file_name(metastore) == MetadataFileName(
        "metastore", version, gz, str(file_uuid))


def test_java_names_parse_as_their_layout(java_tables: JavaTables) -> None:
    for f in java_tables.metadata_files():
        parsed = parse_metadata_file_name(f.path.name)
        assert parsed is not None
        assert parsed.layout == ("hadoop" if f.catalog == "hadoop" else "metastore")
        assert (parsed.version, parsed.gzip) == (f.version, f.gzip)


def test_copied_java_table_keeps_working_when_the_hint_is_deleted(
        tmp_path: Path, java_tables: JavaTables) -> None:
    source = java_tables.location("db.v2_gzip_switch")
    shutil.copytree(source / "metadata", tmp_path / "t" / "metadata")
    (tmp_path / "t" / "metadata" / "version-hint.text").unlink()
    latest = java_tables.latest("db.v2_gzip_switch").path.name
    assert find_current_metadata(str(tmp_path / "t")) == str(tmp_path / "t/metadata" / latest)
