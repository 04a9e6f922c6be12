"""FileIO over pyarrow.fs: locations, reads, listing, errors naming the file, atomic create."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from icenb.errors import (
    AlreadyExists,
    CorruptFile,
    IcebergError,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.io import FileEntry, FileIO, FileIOError, join_location, parse_location

# --------------------------------------------------------------------------- locations


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/tmp/t/v1.metadata.json", ("file", "", "/tmp/t/v1.metadata.json")),
        ("file:/tmp/t/x", ("file", "", "/tmp/t/x")),
        ("file:///tmp/t/x", ("file", "", "/tmp/t/x")),
        ("file://localhost/tmp/t/x", ("file", "", "/tmp/t/x")),
        ("FILE:/tmp/x", ("file", "", "/tmp/x")),
        # Hadoop path strings are not percent-encoded: "%20" is three characters of the name.
        ("file:/tmp/a%20b", ("file", "", "/tmp/a%20b")),
        ("file:/tmp/a b/c", ("file", "", "/tmp/a b/c")),
        ("/tmp/t/../u//x", ("file", "", "/tmp/u/x")),
        ("s3://bucket/a/b.json", ("s3", "bucket", "/a/b.json")),
        ("s3a://bucket/a", ("s3", "bucket", "/a")),
        ("s3n://bucket/a", ("s3", "bucket", "/a")),
        ("gs://bucket/a", ("gs", "bucket", "/a")),
        ("gcs://bucket/a", ("gs", "bucket", "/a")),
        ("hdfs://namenode:8020/wh/t", ("hdfs", "namenode:8020", "/wh/t")),
        ("viewfs://cluster/wh", ("viewfs", "cluster", "/wh")),
    ],
)
def test_parse_location(location: str, expected: tuple[str, str, str]) -> None:
    assert parse_location(location) == expected


def test_relative_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_location("wh/t") == ("file", "", str(tmp_path / "wh" / "t"))
    (tmp_path / "x.json").write_bytes(b"{}")
    assert FileIO().new_input("x.json").read() == b"{}"


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ("", ValidationError),
        ("file://otherhost/tmp/x", UnsupportedFeature),
        ("s3:///key-without-bucket", ValidationError),
    ],
)
def test_bad_locations(location: str, error: type[IcebergError]) -> None:
    with pytest.raises(error):
        parse_location(location)


def test_unsupported_scheme_names_the_location() -> None:
    with pytest.raises(UnsupportedFeature, match="foo") as info:
        FileIO().new_input("foo://host/x.json").read()
    assert info.value.file == "foo://host/x.json"


@pytest.mark.parametrize(
    ("base", "names", "expected"),
    [
        ("/wh/t", ("metadata", "v1.metadata.json"), "/wh/t/metadata/v1.metadata.json"),
        ("/wh/t/", ("metadata",), "/wh/t/metadata"),
        ("s3://b/t", ("metadata",), "s3://b/t/metadata"),
        ("s3://b/", ("t",), "s3://b/t"),
        ("file:/wh", ("x",), "file:/wh/x"),
    ],
)
def test_join_location(base: str, names: tuple[str, ...], expected: str) -> None:
    assert join_location(base, *names) == expected


# --------------------------------------------------------------------------- object stores
# No network here: only check that URIs reach the right pyarrow filesystem, built offline.


def _reduced(fs: object) -> dict[str, object]:
    """The constructor arguments pyarrow would pickle a filesystem with."""
    args = fs.__reduce__()[1][0]
    assert isinstance(args, dict)
    return args


def test_s3_uris_resolve_to_one_configured_s3_filesystem() -> None:
    io = FileIO({
        "s3.region": "eu-west-1",
        "s3.anonymous": "true",
        "s3.endpoint": "http://localhost:9000",
        "s3.connect-timeout": "2.5",
        "unrelated.property": "ignored",
    })
    fs, path = io.resolve("s3a://bucket/wh/t/metadata/v1.metadata.json")
    assert isinstance(fs, pafs.S3FileSystem)
    assert path == "bucket/wh/t/metadata/v1.metadata.json"
    args = _reduced(fs)
    assert args["region"] == "eu-west-1"
    assert args["anonymous"] is True
    assert (args["scheme"], args["endpoint_override"]) == ("http", "localhost:9000")
    assert args["connect_timeout"] == 2.5
    for alias in ("s3", "s3n"):
        again, again_path = io.resolve(f"{alias}://bucket/wh/t")
        assert again is fs  # cached per scheme and bucket
        assert again_path == "bucket/wh/t"


def test_s3_credentials_are_passed_to_pyarrow() -> None:
    io = FileIO({"client.region": "us-west-2", "s3.access-key-id": "AK",
                 "s3.secret-access-key": "SK", "s3.session-token": "TOK"})
    args = _reduced(io.resolve("s3://bucket/x")[0])
    assert (args["region"], args["access_key"], args["secret_key"], args["session_token"]) == (
        "us-west-2", "AK", "SK", "TOK")


def test_gcs_uris_resolve_to_gcs_filesystem() -> None:
    io = FileIO({"gcs.no-auth": "true", "gcs.project-id": "proj"})
    fs, path = io.resolve("gs://bucket/wh/t")
    assert isinstance(fs, pafs.GcsFileSystem)
    assert path == "bucket/wh/t"
    assert _reduced(fs)["project_id"] == "proj"
    assert io.resolve("gcs://bucket/other")[0] is fs


def test_a_bad_numeric_property_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match=r"s3\.connect-timeout"):
        FileIO({"s3.region": "us-east-1", "s3.connect-timeout": "soon"}).resolve("s3://b/x")


def test_registered_filesystem_stands_in_for_an_object_store(tmp_path: Path) -> None:
    io = FileIO(filesystems={"s3": pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())})
    loc = "s3://bucket/wh/t/metadata/v1.metadata.json"
    io.new_output(loc).create(b"{}")
    assert (tmp_path / "bucket/wh/t/metadata/v1.metadata.json").read_bytes() == b"{}"
    assert io.new_input(loc).read() == b"{}"
    assert io.list_dir("s3://bucket/wh/t/metadata") == [FileEntry("v1.metadata.json", 2, False)]
    with pytest.raises(AlreadyExists) as info:
        io.new_output(loc).create(b"[]")
    assert info.value.file == loc
    assert not io.supports_atomic_create(loc)
    assert io.supports_atomic_create(str(tmp_path / "x"))


# --------------------------------------------------------------------------- reading


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "dir" / "data.bin"
    path.parent.mkdir()
    path.write_bytes(bytes(range(256)) * 4)
    return path


def test_every_spelling_of_a_local_file_reads_it(data_file: Path) -> None:
    io = FileIO()
    expected = data_file.read_bytes()
    spellings = [str(data_file), f"file:{data_file}", f"file://{data_file}",
                 f"file://localhost{data_file}"]
    for loc in spellings:
        f = io.new_input(loc)
        assert f.location == loc
        assert f.exists()
        assert f.size == len(expected)
        assert f.read() == expected
    assert io.resolve(spellings[0])[0] is io.resolve(spellings[1])[0]


def test_read_range_and_open(data_file: Path) -> None:
    f = FileIO().new_input(str(data_file))
    assert f.read_range(250, 10) == bytes([250, 251, 252, 253, 254, 255, 0, 1, 2, 3])
    assert f.read_range(1024, 0) == b""
    with f.open() as stream:
        stream.seek(1020)
        assert stream.read() == bytes([252, 253, 254, 255])


def test_a_short_read_is_a_corrupt_file(data_file: Path) -> None:
    io = FileIO()
    with pytest.raises(CorruptFile, match="short read") as info:
        io.new_input(str(data_file)).read_range(1020, 8)
    assert info.value.file == str(data_file)
    with pytest.raises(CorruptFile, match="expected 2000 bytes"):
        io.new_input(str(data_file), size=2000).read()


def test_negative_range_is_rejected(data_file: Path) -> None:
    with pytest.raises(ValidationError):
        FileIO().new_input(str(data_file)).read_range(-1, 4)


def test_missing_files_are_not_found_naming_the_location(tmp_path: Path) -> None:
    io = FileIO()
    loc = f"file:{tmp_path}/nope/v1.metadata.json"
    operations: list[Callable[[], object]] = [
        lambda: io.new_input(loc).read(),
        lambda: io.new_input(loc).read_range(0, 1),
        lambda: io.new_input(loc).size,
        lambda: io.new_input(loc).open(),
        lambda: io.list_dir(f"file:{tmp_path}/nope"),
        lambda: io.delete(loc),
    ]
    for operation in operations:
        with pytest.raises(NotFound) as info:
            operation()
        assert info.value.file is not None and info.value.file.startswith(f"file:{tmp_path}/nope")
        assert "nope" in str(info.value)
    assert not io.exists(loc)
    assert io.stat(loc) is None
    io.delete(loc, missing_ok=True)


def test_reading_a_directory_is_a_file_io_error(tmp_path: Path) -> None:
    with pytest.raises(FileIOError, match="directory") as info:
        FileIO().new_input(str(tmp_path)).read()
    assert isinstance(info.value, OSError)  # also catchable as an OSError
    assert info.value.file == str(tmp_path)
    with pytest.raises(FileIOError, match="directory"):
        _ = FileIO().new_input(str(tmp_path)).size
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(FileIOError, match="not a directory"):
        FileIO().list_dir(str(tmp_path / "f"))


class _DenyingFileSystem:
    """A stand-in filesystem whose reads fail as an OS would without permission (even for root)."""

    type_name = "deny"

    def open_input_stream(self, path: str, compression: object = None) -> object:
        raise PermissionError(13, "Permission denied", path)

    def open_input_file(self, path: str) -> object:
        raise OSError("connection reset by peer\nretry details...")


def test_os_errors_become_file_io_errors_naming_the_location() -> None:
    io = FileIO(filesystems={"file": _DenyingFileSystem()})
    with pytest.raises(FileIOError, match="permission denied") as info:
        io.new_input("/wh/t/v1.metadata.json").read()
    assert info.value.file == "/wh/t/v1.metadata.json"
    with pytest.raises(FileIOError, match="connection reset by peer") as info:
        io.new_input("/wh/t/v1.metadata.json").read_range(0, 1)
    assert "retry details" not in str(info.value)


def test_list_dir_stat_and_delete(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_bytes(b"12345")
    (tmp_path / "a").mkdir()
    io = FileIO()
    assert io.list_dir(f"file:{tmp_path}") == [FileEntry("a", None, True),
                                               FileEntry("b.json", 5, False)]
    assert io.stat(str(tmp_path / "b.json")) == FileEntry("b.json", 5, False)
    assert io.stat(str(tmp_path / "a")) == FileEntry("a", None, True)
    io.delete(str(tmp_path / "b.json"))
    assert [e.name for e in io.list_dir(str(tmp_path))] == ["a"]
    assert (io.stats.listed, io.stats.deleted) == (2, 1)


def test_stats_and_hook_count_every_opened_file(data_file: Path, tmp_path: Path) -> None:
    io = FileIO()
    seen: list[str] = []
    io.on_open = seen.append
    other = tmp_path / "other.bin"
    other.write_bytes(b"xyz")
    io.new_input(str(data_file)).read()
    io.new_input(str(other)).read_range(1, 2)
    io.new_input(str(other)).open().close()
    _ = io.new_input(str(data_file)).size  # a lookup, not an open
    assert io.exists(str(other))
    assert io.stats.opened == 3
    assert io.stats.bytes_read == 1024 + 2
    assert seen == [str(data_file), str(other), str(other)]
    io.stats.reset()
    assert io.stats.as_dict() == {"opened": 0, "bytes_read": 0, "listed": 0, "created": 0,
                                  "deleted": 0}


def test_file_io_pickles_its_configuration_only() -> None:
    io = FileIO({"s3.region": "eu-west-1"})
    io.stats.add("opened", 5)
    clone = pickle.loads(pickle.dumps(io))
    assert clone.properties == {"s3.region": "eu-west-1"}
    assert clone.stats.opened == 0


# --------------------------------------------------------------------------- creating


def test_create_makes_parents_and_refuses_to_overwrite(tmp_path: Path) -> None:
    io = FileIO()
    loc = f"file://{tmp_path}/t/metadata/v1.metadata.json"
    out = io.new_output(loc)
    out.create(b"first")
    assert (tmp_path / "t/metadata/v1.metadata.json").read_bytes() == b"first"
    with pytest.raises(AlreadyExists) as info:
        out.create(b"second")
    assert info.value.file == loc
    assert loc in str(info.value)
    assert (tmp_path / "t/metadata/v1.metadata.json").read_bytes() == b"first"
    out.create(b"third", overwrite=True)
    assert (tmp_path / "t/metadata/v1.metadata.json").read_bytes() == b"third"
    assert os.listdir(tmp_path / "t/metadata") == ["v1.metadata.json"]  # no temporary left
    assert io.stats.created == 2


def test_create_into_a_file_as_directory_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(FileIOError) as info:
        FileIO().new_output(str(tmp_path / "f" / "x.json")).create(b"{}")
    assert info.value.file == str(tmp_path / "f" / "x.json")


def test_racing_threads_exactly_one_creates(tmp_path: Path) -> None:
    io = FileIO()
    writers = 8
    for round_ in range(20):
        loc = str(tmp_path / f"v{round_}.metadata.json")
        barrier = threading.Barrier(writers)
        outcome: dict[int, str] = {}

        def write(i: int, loc: str = loc, barrier: threading.Barrier = barrier,
                  outcome: dict[int, str] = outcome) -> None:
            payload = f"writer {i} ".encode() * 20_000  # big enough to overlap in time
            barrier.wait()
            try:
                io.new_output(loc).create(payload)
                outcome[i] = "won"
            except AlreadyExists:
                outcome[i] = "lost"

        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i, result in outcome.items() if result == "won"]
        assert len(outcome) == writers
        assert len(winners) == 1
        assert Path(loc).read_bytes() == f"writer {winners[0]} ".encode() * 20_000
    assert sorted(os.listdir(tmp_path)) == sorted(f"v{r}.metadata.json" for r in range(20))


def _create_all(directory: str, names: int, writer: int) -> list[int]:
    """In a separate process: try to create every name; return the ones this writer won."""
    io = FileIO()
    won = []
    for n in range(names):
        try:
            io.new_output(f"{directory}/{n:05d}.json").create(f"{writer}".encode() * 50_000)
            won.append(n)
        except AlreadyExists:
            pass
    return won


def test_racing_processes_exactly_one_creates_each_file(tmp_path: Path) -> None:
    names, writers = 60, 2
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=writers, mp_context=context) as pool:
        futures = [pool.submit(_create_all, str(tmp_path), names, w) for w in range(writers)]
        results = [f.result(timeout=120) for f in futures]
    all_won = sorted(n for won in results for n in won)
    assert all_won == list(range(names))  # every file created exactly once
    for writer, won in enumerate(results):
        for n in won:
            assert (tmp_path / f"{n:05d}.json").read_bytes() == f"{writer}".encode() * 50_000
    assert len(os.listdir(tmp_path)) == names
