"""Table and view metadata files: find the current one in a directory, read, write.

Two directory layouts exist (spec: "File System Tables", "Metastore Tables"), both under
``<location>/metadata/``:

- Hadoop: ``v<N>.metadata.json`` (gzip: ``v<N>.gz.metadata.json``, older ``v<N>.metadata.json.gz``)
  plus ``version-hint.text`` holding ``N``. As in Iceberg Java's ``HadoopTableOperations``: the
  hint is read, then versions N+1, N+2, ... are taken while they exist (a stale hint); a missing
  or unreadable hint means listing the directory and taking the highest N; a hint naming a
  version with no file is an error. When one version has several encodings, the plain file wins,
  then ``.gz.metadata.json``, then ``.metadata.json.gz`` (Java's order).
- Metastore (Hive, JDBC, REST catalogs): ``<NNNNN>-<uuid>.metadata.json`` (gzip:
  ``.gz.metadata.json``).
  The catalog's pointer is authoritative; without it the highest N is taken. Two files sharing
  the highest N (a lost commit race left its file behind) are ambiguous and raise an error naming
  both.

Compression is detected from the bytes (gzip magic ``1f 8b``), never from the name, so a
mislabelled file still reads.
"""

from __future__ import annotations

import gzip as _gzip
import json
import re
import zlib
from typing import Any, Literal, NamedTuple
from uuid import UUID

from icenb.errors import (
    CorruptFile,
    InvalidMetadata,
    NotFound,
    UnsupportedVersion,
    ValidationError,
)
from icenb.io.file_io import FileIO, join_location
from icenb.spec.table_metadata import TableMetadata, table_metadata_from_json
from icenb.spec.view_metadata import ViewMetadata, load_view_metadata

__all__ = [
    "VERSION_HINT",
    "MetadataFileName",
    "decode_metadata_bytes",
    "find_current_metadata",
    "hadoop_metadata_file_name",
    "load_table_metadata",
    "load_view_metadata_file",
    "metastore_metadata_file_name",
    "parse_metadata_file_name",
    "read_metadata_json",
    "write_metadata_file",
]

VERSION_HINT = "version-hint.text"
GZIP_MAGIC = b"\x1f\x8b"

# Extensions in Iceberg Java's order of preference for one Hadoop version.
_EXTENSIONS = (".metadata.json", ".gz.metadata.json", ".metadata.json.gz")
_EXT = r"(\.gz\.metadata\.json|\.metadata\.json\.gz|\.metadata\.json)"
_HADOOP_NAME = re.compile(r"v(0|[1-9][0-9]*)" + _EXT)
_METASTORE_NAME = re.compile(r"([0-9]+)-([^./]+)" + _EXT)
# A filesystem catalog's view versions (icenb's layout, see catalog/filesystem.py): named so that
# Java's HadoopCatalog, which takes any directory with ``*.metadata.json`` for a table, skips them.
VIEW_VERSION_HINT = "view-version-hint.text"
_VIEW_NAME = re.compile(r"v(0|[1-9][0-9]*)(\.gz)?\.view\.json")
VIEW_EXTENSIONS = (".view.json", ".gz.view.json")
_FILE_SUFFIX = re.compile(r"\.(json|gz)$", re.IGNORECASE)


class MetadataFileName(NamedTuple):
    """What a metadata file's name says: layout, version, compression, and the uuid if any."""

    layout: Literal["hadoop", "metastore"]
    version: int
    gzip: bool
    uuid: str | None


def parse_metadata_file_name(name: str) -> MetadataFileName | None:
    """Parse ``v3.metadata.json`` or ``00003-<uuid>.gz.metadata.json``; None for other names."""
    m = _HADOOP_NAME.fullmatch(name)
    if m is not None:
        return MetadataFileName("hadoop", int(m.group(1)), m.group(2) != ".metadata.json", None)
    m = _METASTORE_NAME.fullmatch(name)
    if m is not None:
        return MetadataFileName("metastore", int(m.group(1)), m.group(3) != ".metadata.json",
                                m.group(2))
    return None


def hadoop_metadata_file_name(version: int, *, gzip: bool = False) -> str:
    """``v<N>.metadata.json`` or ``v<N>.gz.metadata.json`` (spec: File System Tables)."""
    if version < 0:
        raise ValidationError("metadata version must not be negative", value=version)
    return f"v{version}{_EXTENSIONS[1] if gzip else _EXTENSIONS[0]}"


def metastore_metadata_file_name(version: int, file_uuid: UUID | str, *, gzip: bool = False) -> str:
    """``<NNNNN>-<uuid>.metadata.json`` (spec: Metastore Tables; zero-padding as Iceberg Java)."""
    if version < 0:
        raise ValidationError("metadata version must not be negative", value=version)
    return f"{version:05d}-{file_uuid}{_EXTENSIONS[1] if gzip else _EXTENSIONS[0]}"


# --------------------------------------------------------------------------- reading


def view_file_name(version: int, *, gzip: bool = False) -> str:
    """``v<N>.view.json`` or ``v<N>.gz.view.json``: a filesystem catalog's view version file."""
    if version < 0:
        raise ValidationError("view metadata version must not be negative", value=version)
    return f"v{version}{VIEW_EXTENSIONS[1] if gzip else VIEW_EXTENSIONS[0]}"


def parse_view_file_name(name: str) -> int | None:
    """The version of a ``v<N>[.gz].view.json`` name; None for other names."""
    m = _VIEW_NAME.fullmatch(name)
    return None if m is None else int(m.group(1))


def decode_metadata_bytes(data: bytes, location: str | None = None) -> bytes:
    """The JSON bytes of a metadata file: gunzipped when they start with the gzip magic."""
    if data[:2] != GZIP_MAGIC:
        return data
    try:
        return _gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise CorruptFile(f"cannot decompress gzip metadata: {e}", file=location) from None


def read_metadata_json(location: str, io: FileIO | None = None) -> bytes:
    """The (decompressed) JSON bytes of one metadata file."""
    io = io or FileIO()
    return decode_metadata_bytes(io.new_input(location).read(), location)


def _looks_like(data: bytes, keys: tuple[str, ...]) -> bool:
    try:
        obj: Any = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(obj, dict) and all(k in obj for k in keys)


def _metadata_file(location: str, io: FileIO) -> str:
    """A metadata file's location: ``location`` itself when it names a file, else the current."""
    if _FILE_SUFFIX.search(location):
        return location
    return find_current_metadata(location, io)


def load_table_metadata(
    location: str, io: FileIO | None = None, *, strict: bool = False
) -> TableMetadata:
    """Table metadata from a metadata file or a table directory (its current metadata file).

    ``strict=True`` parses and checks the lazy parts now (``TableMetadata.validate``).
    """
    io = io or FileIO()
    file = _metadata_file(location, io)
    data = read_metadata_json(file, io)
    try:
        return table_metadata_from_json(data, file=file, strict=strict)
    except (InvalidMetadata, UnsupportedVersion):
        if _looks_like(data, ("view-uuid", "versions")):
            raise InvalidMetadata(
                "this is view metadata, not table metadata (use load_view_metadata_file)",
                file=file) from None
        raise


def load_view_metadata_file(
    location: str, io: FileIO | None = None, *, view_uuid: str | UUID | None = None
) -> ViewMetadata:
    """View metadata from a metadata file or a view directory (its current metadata file).

    ``view_uuid`` is used only to convert an early-draft document (see ``load_view_metadata``).
    """
    io = io or FileIO()
    file = _metadata_file(location, io)
    data = read_metadata_json(file, io)
    try:
        return load_view_metadata(data, file=file, view_uuid=view_uuid)
    except (InvalidMetadata, UnsupportedVersion):
        if _looks_like(data, ("table-uuid", "last-column-id")):
            raise InvalidMetadata(
                "this is table metadata, not view metadata (use load_table_metadata)",
                file=file) from None
        raise


# --------------------------------------------------------------------------- finding


def find_current_metadata(location: str, io: FileIO | None = None) -> str:
    """The current metadata file of a table or view directory (or of its ``metadata/`` dir).

    A location naming a file is returned as is. See the module docstring for the two layouts.
    Nothing there, or no metadata files: ``NotFound``; ambiguous files: ``InvalidMetadata``.
    """
    io = io or FileIO()
    entry = io.stat(location)
    if entry is None:
        raise NotFound("no table or view here: the location does not exist", file=location)
    if not entry.is_dir:
        return location
    metadata_dir = join_location(location, "metadata")
    sub = io.stat(metadata_dir)
    if sub is None or not sub.is_dir:
        metadata_dir = location  # the metadata directory itself was given (or a bare dir)
    return _current_in(metadata_dir, io)


def _current_in(metadata_dir: str, io: FileIO) -> str:
    hint = join_location(metadata_dir, VERSION_HINT)
    version = _read_version_hint(hint, io)
    if version is not None:
        current = _hadoop_file(metadata_dir, version, io)
        if current is None:
            raise NotFound(
                f"{VERSION_HINT} names version {version}, but no v{version} metadata file "
                "exists", file=hint)
        while (newer := _hadoop_file(metadata_dir, version + 1, io)) is not None:
            version, current = version + 1, newer
        return current
    return _current_by_listing(metadata_dir, io)


def _read_version_hint(hint: str, io: FileIO) -> int | None:
    """The version in ``version-hint.text``; None when it is missing or unreadable as a number."""
    try:
        data = io.new_input(hint).read()
    except NotFound:
        return None
    lines = data.decode("utf-8", errors="replace").strip().splitlines()
    text = lines[0].strip() if lines else ""
    if text.isascii() and text.isdigit():
        return int(text)
    parsed = parse_metadata_file_name(text)  # some writers store the file name
    if parsed is not None and parsed.layout == "hadoop":
        return parsed.version
    return None


def _hadoop_file(metadata_dir: str, version: int, io: FileIO) -> str | None:
    """The file of Hadoop version ``version`` in Java's order of encodings, or None."""
    for ext in _EXTENSIONS:
        candidate = join_location(metadata_dir, f"v{version}{ext}")
        if io.exists(candidate):
            return candidate
    return None


def _current_by_listing(metadata_dir: str, io: FileIO) -> str:
    hadoop: dict[int, list[str]] = {}
    metastore: dict[int, list[str]] = {}
    views: dict[int, str] = {}
    for entry in io.list_dir(metadata_dir):
        if entry.is_dir:
            continue
        parsed = parse_metadata_file_name(entry.name)
        if parsed is not None:
            target = hadoop if parsed.layout == "hadoop" else metastore
            target.setdefault(parsed.version, []).append(entry.name)
        elif (view_version := parse_view_file_name(entry.name)) is not None:
            views.setdefault(view_version, entry.name)
    if views and not hadoop and not metastore:
        return _current_view_file(metadata_dir, views, io)
    if hadoop and metastore:
        examples = [max(hadoop.items())[1][0], max(metastore.items())[1][0]]
        raise InvalidMetadata(
            "both v<N>.metadata.json and <N>-<uuid>.metadata.json files and no "
            f"{VERSION_HINT}: cannot tell which layout is current", file=metadata_dir,
            value=examples)
    if hadoop:
        version, names = max(hadoop.items())
        best = min(names, key=lambda n: _EXTENSIONS.index(n[len(f"v{version}"):]))
        return join_location(metadata_dir, best)
    if metastore:
        version, names = max(metastore.items())
        if len(names) > 1:
            raise InvalidMetadata(
                f"{len(names)} metadata files share the highest version {version} "
                f"({', '.join(sorted(names))}): only the catalog knows which is current",
                file=metadata_dir, value=sorted(names))
        return join_location(metadata_dir, names[0])
    raise NotFound("no metadata files (v<N>.metadata.json or <N>-<uuid>.metadata.json)",
                   file=metadata_dir)


def _current_view_file(metadata_dir: str, views: dict[int, str], io: FileIO) -> str:
    """A filesystem catalog's current view file: the view hint's version and any newer one
    that exists, else (no usable hint) the highest version listed."""
    version = _read_version_hint(join_location(metadata_dir, VIEW_VERSION_HINT), io)
    if version is None or version not in views:
        return join_location(metadata_dir, views[max(views)])
    while version + 1 in views:
        version += 1
    return join_location(metadata_dir, views[version])


# --------------------------------------------------------------------------- writing


def write_metadata_file(
    location: str, data: bytes | str, io: FileIO | None = None, *, gzip: bool = False
) -> None:
    """Create a metadata file that must not exist yet (``AlreadyExists`` otherwise).

    ``gzip=True`` compresses (with a zero timestamp, so equal metadata gives equal bytes). The
    create is atomic on a local filesystem (see ``OutputFile.create``): commits rely on it.
    """
    io = io or FileIO()
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if gzip:
        payload = _gzip.compress(payload, mtime=0)
    io.new_output(location).create(payload)
