"""Pytest fixtures for tests against the Iceberg Java reference implementation (Iceberg 1.10).

The reference runs in its own virtualenv (.venv-ref, from tests/reference/requirements.txt),
found at $ICENB_REF_PYTHON or <repo>/.venv-ref/bin/python, and is driven as a subprocess:

- ``java_tables_dir``: a directory of tables and views written by Java
  (tests/reference/generate_tables.py), generated once and cached under
  tests/reference/.cache/<hash of the reference scripts and requirements>/.
- ``java_tables``: the same as a :class:`JavaTables` (scenarios, metadata files, and Java's
  canonical JSON of every metadata file, computed during generation).
- ``java_canonical`` / ``java_roundtrip``: run tests/reference/java_metadata.py on files or
  JSON texts of your own (one JVM per call: batch your inputs).

A missing reference environment fails these fixtures (it does not skip them): `make test`
always builds it.  Register the fixtures with ``pytest_plugins = ["tests.reference_fixtures"]``
in tests/conftest.py, or import the fixture names into a test module.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
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


def run_reference_batch(script: str, requests: Sequence[dict[str, Any]], *,
                        args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Run a reference script of tests/reference/ (``--requests``/``--output`` JSON, one JVM,
    ``args`` added to its command line) on a batch of requests; one result each, in order."""
    if not requests:
        return []
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
    """Callable(sources, kind="auto") -> Java's canonical JSON per source (one JVM per call)."""
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
