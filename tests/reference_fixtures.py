"""Pytest fixtures for tests against the Iceberg Java reference implementation (Iceberg 1.10).

The reference runs in its own virtualenv (.venv-ref, from tests/reference/requirements.txt),
found at $ICENB_REF_PYTHON or <repo>/.venv-ref/bin/python, and is driven as a subprocess: one
server per pytest process (tests/reference/server.py, started on first use, one JVM) runs the
batches of every script of tests/reference/ (:func:`run_reference_batch`); $ICENB_REF_SERVER=0
runs each batch in a JVM of its own instead, through the script's command line.

- ``java_tables_dir``: a directory of tables and views written by Java
  (tests/reference/generate_tables.py), generated once and cached under
  tests/reference/.cache/<hash of the reference scripts and requirements>/.
- ``java_tables``: the same as a :class:`JavaTables` (scenarios, metadata files, and Java's
  canonical JSON of every metadata file, computed during generation).
- ``java_canonical`` / ``java_roundtrip``: run tests/reference/java_metadata.py on files or
  JSON texts of your own (a round trip to the JVM per call: batch your inputs).

A missing reference environment fails these fixtures (it does not skip them): `make test`
always builds it.  Register the fixtures with ``pytest_plugins = ["tests.reference_fixtures"]``
in tests/conftest.py, or import the fixture names into a test module.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

REPO = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO / "tests" / "reference"
CACHE_ROOT = REFERENCE_DIR / ".cache"
# Files whose content decides whether cached tables are still valid.
CACHE_INPUTS = ("generate_tables.py", "java_metadata.py", "refspark.py", "requirements.txt")
GENERATE_TIMEOUT_S = 900
JAVA_TIMEOUT_S = 600

# A metadata source: a path to a metadata file (plain or gzip), or the JSON text itself.
Source = str | os.PathLike[str] | bytes


class ReferenceEnvError(RuntimeError):
    """The reference environment is missing or a reference script failed."""


def reference_python() -> Path:
    """The .venv-ref interpreter ($ICENB_REF_PYTHON, else <repo>/.venv-ref/bin/python)."""
    configured = os.environ.get("ICENB_REF_PYTHON")
    path = Path(configured) if configured else REPO / ".venv-ref" / "bin" / "python"
    if not path.exists():
        raise ReferenceEnvError(
            f"reference Python not found at {path}: build it with `make test` (or "
            "`python3 -m venv .venv-ref && .venv-ref/bin/pip install -r "
            "tests/reference/requirements.txt`), or set ICENB_REF_PYTHON"
        )
    return path


def cache_key() -> str:
    """Hash of the reference scripts and requirements: a new hash means new tables."""
    digest = hashlib.sha256()
    for name in CACHE_INPUTS:
        digest.update(name.encode())
        digest.update((REFERENCE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def ensure_java_tables(cache_root: Path = CACHE_ROOT) -> Path:
    """Generate the Java tables once (under a file lock) and return their directory."""
    python = reference_python()
    key = cache_key()
    cache_root.mkdir(parents=True, exist_ok=True)
    out_dir = cache_root / key
    done = out_dir / "DONE"
    with open(cache_root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return out_dir
        # Tables hold absolute paths, so they are generated in place, never moved.
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir(parents=True)
        log_path = cache_root / f"{key}.log"
        with open(log_path, "wb") as log, tempfile.TemporaryDirectory() as cwd:
            proc = subprocess.run(
                [str(python), str(REFERENCE_DIR / "generate_tables.py"), str(out_dir)],
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=GENERATE_TIMEOUT_S,
                check=False,
            )
        if proc.returncode != 0:
            tail = log_path.read_text(errors="replace").splitlines()[-40:]
            raise ReferenceEnvError(
                f"generate_tables.py failed (exit {proc.returncode}); log {log_path}:\n"
                + "\n".join(tail)
            )
        done.write_text(key + "\n")
        _drop_stale(cache_root, key)
    return out_dir


def _drop_stale(cache_root: Path, key: str, max_age_s: float = 86400.0) -> None:
    """Delete tables of other script versions unused for a day (never one being generated)."""
    now = time.time()
    for lock_path in cache_root.glob("*.lock"):
        other = lock_path.with_suffix("")
        if other.name == key or not other.is_dir():
            continue
        try:
            if now - (other / "DONE").stat().st_mtime < max_age_s:
                continue
        except FileNotFoundError:
            if now - other.stat().st_mtime < max_age_s:
                continue
        with open(lock_path, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # another session is generating it
            shutil.rmtree(other, ignore_errors=True)
            (cache_root / f"{other.name}.log").unlink(missing_ok=True)


def _source_json(source: Source) -> Any:
    """A request source: {"json": text} for JSON text, else an absolute path."""
    if isinstance(source, bytes):
        return {"json": source.decode("utf-8")}
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return {"json": source}
    return str(Path(source).resolve())


class ReferenceServer:
    """tests/reference/server.py: one reference JVM answering every batch of this process.

    Started on first use (:func:`reference_server`), stopped at exit. Its stderr (Spark's logs)
    goes to a file, whose tail a failure reports.
    """

    def __init__(self, python: Path) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="icenb-reference-server-")
        self._log_path = Path(self._dir.name) / "server.log"
        self._log = open(self._log_path, "wb")  # noqa: SIM115 (closed by close())
        self._proc = subprocess.Popen(
            [str(python), str(REFERENCE_DIR / "server.py")],
            cwd=self._dir.name, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, start_new_session=True)
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="icenb-reference-server",
                                        daemon=True)
        self._reader.start()
        self._ready = False
        self._lock = threading.Lock()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output: the server exited

    def alive(self) -> bool:
        return self._proc.poll() is None

    def _failure(self, what: str) -> ReferenceEnvError:
        self._log.flush()
        tail = self._log_path.read_text(errors="replace").splitlines()[-40:]
        return ReferenceEnvError(f"{what}; server log {self._log_path}:\n" + "\n".join(tail))

    def _answer(self, timeout: float, what: str) -> Any:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            error = self._failure(f"{what}: no answer in {timeout:.0f} s")
            self.close(kill=True)
            raise error from None
        if not line:
            self._proc.wait()
            raise self._failure(f"{what}: the reference server exited "
                                f"({self._proc.returncode})")
        return json.loads(line)

    def call(self, script: str, requests: Sequence[dict[str, Any]],
             args: Sequence[str] = (), timeout: float = JAVA_TIMEOUT_S) -> list[dict[str, Any]]:
        """Run ``script``'s batch in the server's JVM; one result per request, in order."""
        with self._lock:
            if not self._ready:
                hello = self._answer(timeout, "the reference server did not start")
                if hello.get("ready") is not True:
                    raise self._failure(f"unexpected greeting {hello!r}")
                self._ready = True
            assert self._proc.stdin is not None
            line = json.dumps({"script": script, "args": list(args),
                               "requests": list(requests)})
            try:
                self._proc.stdin.write(line.encode("utf-8") + b"\n")
                self._proc.stdin.flush()
            except BrokenPipeError:
                raise self._failure(f"{script}: the reference server is gone") from None
            answer = self._answer(timeout, script)
        if not answer.get("ok"):
            raise ReferenceEnvError(f"{script} failed:\n{answer.get('error')}")
        results: list[dict[str, Any]] = answer["results"]
        return results

    def close(self, kill: bool = False) -> None:
        """Stop the server (end of input, then a kill of its process group if need be)."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        if not kill:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=60)
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        self._reader.join(timeout=10)
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
        self._dir.cleanup()


_server: ReferenceServer | None = None


def reference_server() -> ReferenceServer:
    """This process's reference server, started on first use (again if it stopped)."""
    global _server
    if _server is None or not _server.alive():
        if _server is not None:
            _server.close()
        _server = ReferenceServer(reference_python())
        atexit.register(stop_reference_server)
    return _server


def stop_reference_server() -> None:
    """Stop this process's reference server, if one runs."""
    global _server
    if _server is not None:
        server, _server = _server, None
        server.close()


def use_reference_server() -> bool:
    """Whether batches go to the shared server ($ICENB_REF_SERVER=0: a JVM per batch)."""
    return os.environ.get("ICENB_REF_SERVER", "1").strip().lower() not in ("0", "no", "false")


def run_reference_batch(script: str, requests: Sequence[dict[str, Any]], *,
                        args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Run a reference script of tests/reference/ (``args`` added to its command line) on a
    batch of requests; one result each, in order.

    The batch goes to this process's reference server (one JVM for the whole session), or,
    with $ICENB_REF_SERVER=0, to the script's own command line (``--requests``/``--output``
    JSON files, a JVM of its own). Both run the script's ``serve()``.
    """
    if not requests:
        return []
    started = time.perf_counter()
    try:
        if use_reference_server():
            return reference_server().call(script, requests, args)
        return _run_script(script, requests, args)
    finally:
        _log_batch(script, len(requests), time.perf_counter() - started)


def _log_batch(script: str, count: int, seconds: float) -> None:
    """With $ICENB_REF_LOG set, append a line per batch to that file (for timing the suite)."""
    path = os.environ.get("ICENB_REF_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{os.environ.get('PYTEST_CURRENT_TEST', '-')}\t{script}\t{count}\t"
                      f"{seconds:.2f}\n")


def _run_script(script: str, requests: Sequence[dict[str, Any]],
                args: Sequence[str]) -> list[dict[str, Any]]:
    """A batch through the script's command line, in a JVM of its own."""
    python = reference_python()
    with tempfile.TemporaryDirectory() as tmp:
        req_path = Path(tmp) / "requests.json"
        out_path = Path(tmp) / "results.json"
        req_path.write_text(json.dumps({"requests": list(requests)}), encoding="utf-8")
        proc = subprocess.run(
            [str(python), str(REFERENCE_DIR / script), *args,
             "--requests", str(req_path), "--output", str(out_path)],
            cwd=tmp,
            capture_output=True,
            timeout=JAVA_TIMEOUT_S,
            check=False,
        )
        if proc.returncode != 0 or not out_path.exists():
            tail = proc.stderr.decode(errors="replace").splitlines()[-40:]
            raise ReferenceEnvError(
                f"{script} failed (exit {proc.returncode}):\n" + "\n".join(tail)
            )
        doc = json.loads(out_path.read_text(encoding="utf-8"))
    results: list[dict[str, Any]] = doc["results"]
    return results


def run_java_metadata(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run java_metadata.py on a batch of requests (see its docstring); one result each."""
    return run_reference_batch("java_metadata.py", requests)


Kind = Literal["auto", "table", "view"]


def java_canonical_json(sources: Sequence[Source], kind: Kind = "auto") -> list[dict[str, Any]]:
    """Java's canonical JSON for each source: {"ok", "canonical", "input_equal", ...}."""
    return run_java_metadata(
        [{"op": "canonical", "source": _source_json(s), "kind": kind} for s in sources]
    )


def java_compare(
    pairs: Sequence[tuple[Source, Source]], kind: Kind = "auto"
) -> list[dict[str, Any]]:
    """For each (original, candidate): does Java read both as the same metadata?

    Each result is {"ok": bool, "equal": bool, "diff": [{"path", "original", "candidate"}]}
    or {"ok": False, "error": "original: <Java exception>" / "candidate: ..."}.
    """
    return run_java_metadata(
        [
            {
                "op": "compare",
                "original": _source_json(a),
                "candidate": _source_json(b),
                "kind": kind,
            }
            for a, b in pairs
        ]
    )


@dataclass(frozen=True)
class MetadataFile:
    """One metadata.json version file written by Java."""

    path: Path
    name: str  # "db.<table or view>"
    kind: Literal["table", "view"]
    catalog: str  # "hadoop" (v<N>.metadata.json) or "hive" (<NNNNN>-<uuid>.metadata.json)
    version: int
    format_version: int
    gzip: bool
    features: tuple[str, ...]
    canonical: dict[str, Any] | None = field(repr=False, default=None)  # Java's toJson


@dataclass(frozen=True)
class JavaTables:
    """The generated reference tables and views (tables.json) with Java's canonical JSON."""

    root: Path
    info: dict[str, Any] = field(repr=False)
    canonical: dict[str, dict[str, Any]] = field(repr=False)

    @classmethod
    def load(cls, root: Path) -> JavaTables:
        info = json.loads((root / "tables.json").read_text(encoding="utf-8"))
        canonical = json.loads((root / "canonical.json").read_text(encoding="utf-8"))
        return cls(root=root, info=info, canonical=canonical)

    def entries(self, kind: Literal["table", "view"] | None = None) -> list[dict[str, Any]]:
        """tables.json entries: name, catalog, scenario, features, location, metadata_files."""
        tables = [] if kind == "view" else self.info["tables"]
        views = [] if kind == "table" else self.info["views"]
        return [*tables, *views]

    def location(self, name: str) -> Path:
        """Directory of a table or view ("db.v2_refs")."""
        for entry in self.entries():
            if entry["name"] == name:
                return self.root / str(entry["location"])
        raise KeyError(name)

    def metadata_files(
        self,
        kind: Literal["table", "view"] | None = None,
        format_version: int | None = None,
        feature: str | None = None,
    ) -> list[MetadataFile]:
        """Every metadata file, optionally filtered."""
        out = []
        kinds: list[tuple[Literal["table", "view"], dict[str, Any]]] = [
            *(("table", e) for e in self.entries("table") if kind in (None, "table")),
            *(("view", e) for e in self.entries("view") if kind in (None, "view")),
        ]
        for entry_kind, entry in kinds:
            if feature is not None and feature not in entry["features"]:
                continue
            for f in entry["metadata_files"]:
                if format_version is not None and f["format_version"] != format_version:
                    continue
                result = self.canonical.get(f["path"], {})
                out.append(
                    MetadataFile(
                        path=self.root / f["path"],
                        name=entry["name"],
                        kind=entry_kind,
                        catalog=entry["catalog"],
                        version=f["version"],
                        format_version=f["format_version"],
                        gzip=f["gzip"],
                        features=tuple(entry["features"]),
                        canonical=result.get("canonical") if result.get("ok") else None,
                    )
                )
        return out

    def latest(self, name: str) -> MetadataFile:
        """The newest metadata file of a table or view."""
        files = [f for f in self.metadata_files() if f.name == name]
        if not files:
            raise KeyError(name)
        return max(files, key=lambda f: f.version)


@pytest.fixture(scope="session")
def java_tables_dir() -> Path:
    """Directory of tables/views written by Iceberg Java (generated once, then cached)."""
    try:
        return ensure_java_tables()
    except ReferenceEnvError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def java_tables(java_tables_dir: Path) -> JavaTables:
    """The reference tables with their metadata files and Java's canonical JSON."""
    return JavaTables.load(java_tables_dir)


@pytest.fixture(scope="session")
def java_canonical() -> Callable[..., list[dict[str, Any]]]:
    """Callable(sources, kind="auto") -> Java's canonical JSON per source (one batch per call)."""
    try:
        reference_python()
    except ReferenceEnvError as exc:
        pytest.fail(str(exc), pytrace=False)
    return java_canonical_json


@pytest.fixture(scope="session")
def java_roundtrip() -> Callable[..., list[dict[str, Any]]]:
    """Callable(pairs, kind="auto") -> per (original, candidate): equal as Java metadata?"""
    try:
        reference_python()
    except ReferenceEnvError as exc:
        pytest.fail(str(exc), pytrace=False)
    return java_compare


_GENERATOR: subprocess.Popen[bytes] | None = None


def _generate_in_background() -> None:
    """Generate the Java tables in a child process; the fixture that needs them waits on the
    cache's lock (and reports a failure). A process, not a thread: a thread of the test process
    would share the ``time`` module that some tests patch (``time.sleep``), and
    ``subprocess``'s waiting loop would spin on the patched function."""
    global _GENERATOR
    code = "from tests.reference_fixtures import ensure_java_tables as e; e()"
    with contextlib.suppress(Exception):
        _GENERATOR = subprocess.Popen([sys.executable, "-c", code], cwd=REPO,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start generating the Java tables as soon as the run is known to need them (the tests
    before the first one that does run meanwhile; the fixture then waits on the lock). Under
    pytest-xdist, one worker does it."""
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    if any("java_tables_dir" in getattr(item, "fixturenames", ()) for item in session.items):
        _generate_in_background()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session is over: stop the reference server (and a generation still running)."""
    stop_reference_server()
    if _GENERATOR is not None and _GENERATOR.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(_GENERATOR.pid, signal.SIGTERM)
