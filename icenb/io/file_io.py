"""FileIO: read, write, list and delete files by location, over ``pyarrow.fs``.

A location is what Iceberg metadata stores: a plain local path (``/wh/t/metadata/v1.json``), a
``file:`` URI (``file:/x``, ``file:///x``, ``file://localhost/x``), or an object-store / HDFS
URI (``s3://``, ``s3a://`` and ``s3n://`` as S3, ``gs://``/``gcs://``, ``hdfs://``, ``viewfs://``).
Locations are not percent-decoded: Iceberg Java writes them as Hadoop path strings, in which
``%20`` is three literal characters.

Filesystems are built once per scheme and authority (bucket, name node) and reused. Catalog or
table properties configure them, with Iceberg's property names (``s3.region``, ``s3.endpoint``,
``s3.access-key-id``, ``gcs.project-id``, ...; see :data:`S3_PROPERTIES`, :data:`GCS_PROPERTIES`);
unknown properties are ignored. Every failure raises an :class:`~icenb.errors.IcebergError` that
names the location: a missing file ``NotFound``, a short read ``CorruptFile``, anything else
:class:`FileIOError`.

Commits need an atomic create-if-absent (spec: "File System Tables"). On a local filesystem
:meth:`OutputFile.create` provides it (a hard link of a fully written temporary file, which fails
if the target exists). pyarrow exposes no conditional put for object stores or HDFS, so there
``create`` checks for the target and then writes: two racing writers can both succeed and the
last one wins. :meth:`FileIO.supports_atomic_create` tells the catalog layer which case it has.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.fs as pafs

from icenb.errors import (
    AlreadyExists,
    CorruptFile,
    FileIOError,
    IcebergError,
    NotFound,
    UnsupportedFeature,
    ValidationError,
)
from icenb.reprs import safe_repr

__all__ = [
    "GCS_PROPERTIES",
    "S3_PROPERTIES",
    "FileEntry",
    "FileIO",
    "FileIOError",
    "IOStats",
    "InputFile",
    "OutputFile",
    "join_location",
    "parse_location",
]


# Scheme aliases: Hadoop's S3 connectors and GCS spellings go to one pyarrow filesystem each.
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}
_OBJECT_STORES = frozenset({"s3", "gs"})
_HADOOP = frozenset({"hdfs", "viewfs"})
_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):(.*)", re.DOTALL)

#: Iceberg property -> ``pyarrow.fs.S3FileSystem`` argument (names as in Iceberg and PyIceberg).
S3_PROPERTIES: Mapping[str, str] = {
    "s3.region": "region",
    "client.region": "region",
    "s3.endpoint": "endpoint_override",
    "s3.access-key-id": "access_key",
    "s3.secret-access-key": "secret_key",
    "s3.session-token": "session_token",
    "s3.role-arn": "role_arn",
    "s3.role-session-name": "session_name",
    "s3.proxy-uri": "proxy_options",
    "s3.connect-timeout": "connect_timeout",
    "s3.request-timeout": "request_timeout",
    "s3.anonymous": "anonymous",
    "s3.force-virtual-addressing": "force_virtual_addressing",
}
#: Iceberg property -> ``pyarrow.fs.GcsFileSystem`` argument.
GCS_PROPERTIES: Mapping[str, str] = {
    "gcs.project-id": "project_id",
    "gcs.oauth2.token": "access_token",
    "gcs.oauth2.token-expires-at": "credential_token_expiration",
    "gcs.service.host": "endpoint_override",
    "gcs.default-location": "default_bucket_location",
    "gcs.no-auth": "anonymous",
    "gcs.anonymous": "anonymous",
}
_BOOL_ARGS = frozenset({"anonymous", "force_virtual_addressing"})
_FLOAT_ARGS = frozenset({"connect_timeout", "request_timeout"})


class FileEntry(NamedTuple):
    """One directory entry: its name (not a path), size in bytes (None for a directory)."""

    name: str
    size: int | None
    is_dir: bool


def parse_location(location: str) -> tuple[str, str, str]:
    """Split a location into (scheme, authority, path); a plain path has scheme ``file``.

    Aliases are folded (``s3a``/``s3n`` -> ``s3``, ``gcs`` -> ``gs``). For ``file`` the path is
    an absolute OS path; for other schemes it is the part after the authority (starting with
    ``/`` or empty). A one-letter scheme is a Windows drive, hence a plain path.
    """
    if not isinstance(location, str) or not location:
        raise ValidationError("a location must be a non-empty string", value=location)
    match = _URI.fullmatch(location)
    if match is None or len(match.group(1)) == 1:
        return "file", "", os.path.abspath(location)
    scheme = match.group(1).lower()
    scheme = _SCHEME_ALIASES.get(scheme, scheme)
    rest = match.group(2)
    authority = ""
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
    if scheme == "file":
        if authority not in ("", "localhost"):
            raise UnsupportedFeature(
                f"file: URI with host {authority!r}: only local files are supported",
                file=location)
        return "file", "", os.path.abspath(rest or "/")
    if scheme in _OBJECT_STORES and not authority:
        raise ValidationError(f"{scheme} location without a bucket", file=location)
    return scheme, authority, rest


def join_location(base: str, *names: str) -> str:
    """``base`` followed by ``names``, separated by single slashes (works for paths and URIs)."""
    out = base
    for name in names:
        out = out.rstrip("/") + "/" + name.lstrip("/")
    return out


@safe_repr
class IOStats:
    """Counters of file operations (thread-safe); tests use them to prove what was opened."""

    _FIELDS = ("opened", "bytes_read", "listed", "created", "deleted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.opened = 0
        self.bytes_read = 0
        self.listed = 0
        self.created = 0
        self.deleted = 0

    def add(self, name: str, amount: int = 1) -> None:
        """Increase counter ``name`` by ``amount``."""
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def reset(self) -> None:
        """Set every counter to zero."""
        with self._lock:
            for name in self._FIELDS:
                setattr(self, name, 0)

    def as_dict(self) -> dict[str, int]:
        """The counters now, as a plain dict."""
        with self._lock:
            return {name: getattr(self, name) for name in self._FIELDS}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in self.as_dict().items())
        return f"IOStats({inner})"


def _first_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _translate(exc: BaseException, location: str, action: str) -> IcebergError:
    """A pyarrow/OS error as an icenb error naming the location."""
    if isinstance(exc, IcebergError):
        return exc
    code = getattr(exc, "errno", None)
    if isinstance(exc, FileNotFoundError) or code == errno.ENOENT:
        return NotFound(f"cannot {action}: no such file or directory", file=location)
    if isinstance(exc, FileExistsError) or code == errno.EEXIST:
        return AlreadyExists(f"cannot {action}: the file already exists", file=location)
    if isinstance(exc, PermissionError) or code in (errno.EACCES, errno.EPERM):
        return FileIOError(f"cannot {action}: permission denied", file=location)
    return FileIOError(f"cannot {action}: {_first_line(exc)}", file=location)


_IO_ERRORS = (OSError, pa.ArrowException)


@safe_repr
class FileIO:
    """Opens locations on local disk, object stores and HDFS through ``pyarrow.fs``.

    ``properties`` configure object-store clients (Iceberg property names, see the module
    docstring). ``filesystems`` maps a scheme (``"s3"``) or ``"scheme://authority"``
    (``"s3://bucket"``) to a ready ``pyarrow.fs.FileSystem`` to use instead of building one
    (e.g. a ``SubTreeFileSystem`` in tests); it receives the same paths pyarrow's own
    filesystem for that scheme would (``bucket/key`` for S3 and GCS).
    ``relocations`` maps a location prefix a table was written under to where its files are
    now (a table directory copied or moved elsewhere): every location starting with a key is
    read from the value instead (longest key first; ``file:`` forms of local keys match too).
    ``stats`` counts operations; ``on_open`` (if set) is called with each location opened.
    """

    def __init__(
        self,
        properties: Mapping[str, str] | None = None,
        *,
        filesystems: Mapping[str, Any] | None = None,
        relocations: Mapping[str, str] | None = None,
    ) -> None:
        self.properties: Mapping[str, str] = dict(properties or {})
        self._registered: dict[str, Any] = dict(filesystems or {})
        self.relocations: Mapping[str, str] = dict(relocations or {})
        self._prefixes = _relocation_prefixes(self.relocations)
        self._cache: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self.stats = IOStats()
        self.on_open: Callable[[str], None] | None = None

    # Pickled for Spark executors: configuration only, caches and counters start fresh.
    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_file_io, (dict(self.properties), dict(self._registered),
                                   dict(self.relocations)))

    def __repr__(self) -> str:
        return f"FileIO({len(self.properties)} properties, {self.stats!r})"

    # ------------------------------------------------------------------ resolution

    @property
    def filesystems(self) -> Mapping[str, Any]:
        """The filesystems registered at construction, by scheme or ``scheme://authority``."""
        return dict(self._registered)

    def relocate(self, location: str) -> str:
        """Where ``location`` is read from, after :attr:`relocations` (unchanged if none)."""
        for old, new in self._prefixes:
            if location.startswith(old) and (len(location) == len(old)
                                             or location[len(old)] == "/" or old.endswith("/")):
                return new + location[len(old):]
        return location

    def resolve(self, location: str) -> tuple[Any, str]:
        """The ``(pyarrow filesystem, path)`` for a location (builds the filesystem once)."""
        if self._prefixes:
            location = self.relocate(location)
        scheme, authority, path = parse_location(location)
        if scheme == "file":
            return self._filesystem(location, scheme, authority), path
        fs = self._filesystem(location, scheme, authority)
        if scheme in _OBJECT_STORES:
            return fs, authority + path.rstrip("/")
        return fs, path or "/"

    def _filesystem(self, location: str, scheme: str, authority: str) -> Any:
        key = (scheme, authority)
        fs = self._cache.get(key)
        if fs is not None:
            return fs
        with self._lock:
            fs = self._cache.get(key)
            if fs is None:
                fs = self._registered.get(f"{scheme}://{authority}")
                if fs is None:
                    fs = self._registered.get(scheme)
                if fs is None:
                    fs = self._build(location, scheme, authority)
                self._cache[key] = fs
        return fs

    def _build(self, location: str, scheme: str, authority: str) -> Any:
        try:
            if scheme == "file":
                return pafs.LocalFileSystem()
            if scheme == "s3":
                return pafs.S3FileSystem(**self._s3_args(authority))
            if scheme == "gs":
                return pafs.GcsFileSystem(**self._gcs_args())
            if scheme in _HADOOP:
                fs, _ = pafs.FileSystem.from_uri(f"{scheme}://{authority}/")
                return fs
        except IcebergError as e:
            raise e.with_file(location) from None
        except (*_IO_ERRORS, ValueError, TypeError) as e:
            raise FileIOError(f"cannot set up the {scheme} filesystem: {_first_line(e)}",
                              file=location) from None
        raise UnsupportedFeature(
            f"unsupported location scheme {scheme!r} (supported: local paths, file:, s3:, "
            "s3a:, s3n:, gs:, gcs:, hdfs:, viewfs:)", file=location)

    def _mapped(self, names: Mapping[str, str]) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for prop, arg in names.items():
            value = self.properties.get(prop)
            if value is None:
                continue
            if arg in _BOOL_ARGS:
                args[arg] = str(value).strip().lower() == "true"
            elif arg in _FLOAT_ARGS:
                args[arg] = _number(prop, value)
            else:
                args[arg] = value
        return args

    def _s3_args(self, bucket: str) -> dict[str, Any]:
        args = self._mapped(S3_PROPERTIES)
        endpoint = args.get("endpoint_override")
        if isinstance(endpoint, str) and "://" in endpoint:
            args["scheme"], args["endpoint_override"] = endpoint.split("://", 1)
        if "region" not in args and "endpoint_override" not in args:
            # Like pyarrow's from_uri: ask S3 where the bucket lives (a request, on first use).
            # If that fails, the AWS SDK's default region applies.
            with contextlib.suppress(*_IO_ERRORS):
                args["region"] = pafs.resolve_s3_region(bucket)
        return args

    def _gcs_args(self) -> dict[str, Any]:
        args = self._mapped(GCS_PROPERTIES)
        endpoint = args.get("endpoint_override")
        if isinstance(endpoint, str) and "://" in endpoint:
            args["scheme"], args["endpoint_override"] = endpoint.split("://", 1)
        expires = args.get("credential_token_expiration")
        if expires is not None:
            millis = _number("gcs.oauth2.token-expires-at", expires)
            args["credential_token_expiration"] = datetime.fromtimestamp(
                millis / 1000, tz=timezone.utc)
        return args

    def supports_atomic_create(self, location: str) -> bool:
        """Whether :meth:`OutputFile.create` is an atomic create-if-absent at this location."""
        fs, _ = self.resolve(location)
        return bool(fs.type_name == "local")

    # ------------------------------------------------------------------ operations

    def new_input(self, location: str, *, size: int | None = None) -> InputFile:
        """A file to read. ``size`` (e.g. a manifest's length) saves a lookup and is checked."""
        return InputFile(self, location, size)

    def new_output(self, location: str) -> OutputFile:
        """A file to create."""
        return OutputFile(self, location)

    def stat(self, location: str) -> FileEntry | None:
        """The entry at ``location`` (file or directory), or None when nothing is there."""
        fs, path = self.resolve(location)
        try:
            info = fs.get_file_info(path)
        except _IO_ERRORS as e:
            raise _translate(e, location, "look up") from None
        if info.type == pafs.FileType.NotFound:
            return None
        is_dir = info.type == pafs.FileType.Directory
        name = posixpath.basename(path.rstrip("/")) or path
        return FileEntry(name, None if is_dir else _opt_int(info.size), is_dir)

    def exists(self, location: str) -> bool:
        """Whether a file or directory exists at ``location``."""
        return self.stat(location) is not None

    def list_dir(self, location: str) -> list[FileEntry]:
        """The entries directly inside a directory, sorted by name. Missing -> ``NotFound``."""
        return [entry for entry, _modified in self.list_dir_modified(location)]

    def list_dir_modified(self, location: str) -> list[tuple[FileEntry, int | None]]:
        """:meth:`list_dir` with each entry's last modification (epoch ms; None when the
        store does not say)."""
        fs, path = self.resolve(location)
        self.stats.add("listed")
        try:
            infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=False))
        except NotADirectoryError:
            raise FileIOError("cannot list: not a directory", file=location) from None
        except _IO_ERRORS as e:
            raise _translate(e, location, "list directory") from None
        entries = [
            (FileEntry(
                info.base_name,
                None if info.type == pafs.FileType.Directory else _opt_int(info.size),
                info.type == pafs.FileType.Directory,
            ), None if info.mtime_ns is None else int(info.mtime_ns) // 1_000_000)
            for info in infos
        ]
        return sorted(entries, key=lambda e: e[0].name)

    def delete(self, location: str, *, missing_ok: bool = False) -> None:
        """Delete a file. A missing file raises ``NotFound`` unless ``missing_ok``."""
        fs, path = self.resolve(location)
        try:
            fs.delete_file(path)
        except _IO_ERRORS as e:
            err = _translate(e, location, "delete")
            if missing_ok and isinstance(err, NotFound):
                return
            raise err from None
        self.stats.add("deleted")

    def _opened(self, location: str) -> None:
        self.stats.add("opened")
        hook = self.on_open
        if hook is not None:
            hook(location)


def _rebuild_file_io(properties: dict[str, str], filesystems: dict[str, Any],
                     relocations: dict[str, str] | None = None) -> FileIO:
    return FileIO(properties, filesystems=filesystems, relocations=relocations)


def _relocation_prefixes(relocations: Mapping[str, str]) -> list[tuple[str, str]]:
    """(old prefix, new prefix) pairs, longest first; local paths also in ``file:`` forms."""
    pairs: dict[str, str] = {}
    for old, new in relocations.items():
        old_s, new_s = old.rstrip("/") or "/", new.rstrip("/") or "/"
        pairs[old_s] = new_s
        if old_s.startswith("/"):
            pairs["file:" + old_s] = new_s
            pairs["file://" + old_s] = new_s
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


def _number(prop: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValidationError("property must be a number", field=prop, value=value) from None


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


@safe_repr
class InputFile:
    """A file to read by location. Nothing is opened until a read."""

    __slots__ = ("_io", "_size", "location")

    def __init__(self, io: FileIO, location: str, size: int | None = None) -> None:
        self._io = io
        self.location = location
        self._size = size

    def __repr__(self) -> str:
        return f"InputFile({self.location!r})"

    @property
    def size(self) -> int:
        """The file's length in bytes (looked up once unless given). Missing -> ``NotFound``."""
        if self._size is None:
            entry = self._io.stat(self.location)
            if entry is None:
                raise NotFound("no such file", file=self.location)
            if entry.is_dir or entry.size is None:
                raise FileIOError("expected a file, found a directory", file=self.location)
            self._size = entry.size
        return self._size

    def exists(self) -> bool:
        """Whether something exists at this location."""
        return self._io.exists(self.location)

    def read(self) -> bytes:
        """The whole file. When a size was given, a file of another length is ``CorruptFile``."""
        fs, path = self._io.resolve(self.location)
        self._io._opened(self.location)
        try:
            # compression=None: never let pyarrow inflate a ".gz" name behind our back.
            with fs.open_input_stream(path, compression=None) as stream:
                data = bytes(stream.read())
        except _IO_ERRORS as e:
            raise _translate(e, self.location, "read") from None
        self._io.stats.add("bytes_read", len(data))
        if self._size is not None and len(data) != self._size:
            raise CorruptFile(f"expected {self._size} bytes, the file has {len(data)}",
                              file=self.location)
        return data

    def read_range(self, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset``; a file ending before that is ``CorruptFile``."""
        if offset < 0 or length < 0:
            raise ValidationError("offset and length must not be negative",
                                  file=self.location, value=(offset, length))
        fs, path = self._io.resolve(self.location)
        self._io._opened(self.location)
        try:
            with fs.open_input_file(path) as f:
                data = bytes(f.read_at(length, offset))
        except _IO_ERRORS as e:
            raise _translate(e, self.location, "read") from None
        self._io.stats.add("bytes_read", len(data))
        if len(data) != length:
            raise CorruptFile(
                f"short read: wanted {length} bytes at offset {offset}, got {len(data)}",
                file=self.location)
        return data

    def open(self) -> Any:
        """A seekable ``pyarrow.NativeFile`` for readers that stream (the caller closes it)."""
        fs, path = self._io.resolve(self.location)
        self._io._opened(self.location)
        try:
            return fs.open_input_file(path)
        except _IO_ERRORS as e:
            raise _translate(e, self.location, "open") from None


@safe_repr
class OutputFile:
    """A file to create by location."""

    __slots__ = ("_io", "location")

    def __init__(self, io: FileIO, location: str) -> None:
        self._io = io
        self.location = location

    def __repr__(self) -> str:
        return f"OutputFile({self.location!r})"

    def exists(self) -> bool:
        """Whether something exists at this location."""
        return self._io.exists(self.location)

    def create(self, data: bytes, *, overwrite: bool = False) -> None:
        """Write ``data`` as this file; without ``overwrite`` an existing one is ``AlreadyExists``.

        Local filesystem: readers never see a partial file, and create-if-absent is atomic
        (exactly one of several racing writers succeeds). Object stores and HDFS: see the module
        docstring (not atomic).
        """
        fs, path = self._io.resolve(self.location)
        try:
            if fs.type_name == "local":
                _create_local(path, bytes(data), overwrite)
            else:
                self._create_remote(fs, path, bytes(data), overwrite)
        except IcebergError as e:
            raise e.with_file(self.location) from None
        except _IO_ERRORS as e:
            raise _translate(e, self.location, "create") from None
        self._io.stats.add("created")

    def _create_remote(self, fs: Any, path: str, data: bytes, overwrite: bool) -> None:
        if not overwrite and fs.get_file_info(path).type != pafs.FileType.NotFound:
            raise AlreadyExists("cannot create: the file already exists")
        if fs.type_name not in ("s3", "gcs"):
            fs.create_dir(posixpath.dirname(path), recursive=True)
        with fs.open_output_stream(path, compression=None) as out:
            out.write(data)


# errno values meaning "this filesystem cannot hard-link": fall back to O_CREAT | O_EXCL.
_NO_LINK = frozenset(
    getattr(errno, name) for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK")
    if hasattr(errno, name)
)


def _create_local(path: str, data: bytes, overwrite: bool) -> None:
    """Write a temporary file beside ``path``, then link it (create-if-absent) or rename it."""
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise FileIOError("cannot create: a parent of the file is not a directory") from None
    if not overwrite and os.path.lexists(path):
        raise AlreadyExists("cannot create: the file already exists")
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        _write_new(tmp, data)
        if overwrite:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise AlreadyExists("cannot create: the file already exists") from None
            except OSError as e:
                if e.errno not in _NO_LINK:
                    raise
                _write_new(path, data)  # no hard links here: exclusive create, then write
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    _fsync_dir(parent)


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` exclusively (``AlreadyExists`` if present), write and fsync ``data``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
    except FileExistsError:
        raise AlreadyExists("cannot create: the file already exists") from None
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    """Persist a directory entry (best effort: not every OS can open a directory)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
