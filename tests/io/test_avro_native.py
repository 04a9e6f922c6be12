"""The native (polars) Avro path gives exactly the tables icenb's own decoder gives."""

from __future__ import annotations

import json

import pytest

from icenb.io import avro, avro_compiled
from icenb.io.avro import avro_arrow_schema, avro_file_metadata, read_avro_tables
from icenb.io.avro_native import available, read_tables
from tests.reference_fixtures import JavaTables

PLANNING_COLUMNS = ["status", "snapshot_id", "sequence_number", "file_sequence_number",
                    "data_file.content", "data_file.file_path", "data_file.partition",
                    "data_file.record_count", "data_file.lower_bounds"]


def _lockstep(files: list[tuple[str, bytes]], columns: list[str] | None,
              monkeypatch: pytest.MonkeyPatch) -> list:  # type: ignore[type-arg]
    with monkeypatch.context() as m:
        m.setattr(avro, "NATIVE_MAX_FILES", 0)
        m.setenv(avro_compiled.DISABLE_ENV, "1")
        return read_avro_tables(files, columns=columns)


def test_polars_is_installed() -> None:
    assert available()  # a dependency of icenb: planning a few manifests relies on it


@pytest.mark.parametrize("columns", [None, PLANNING_COLUMNS])
def test_every_java_manifest_decodes_the_same_natively(
        java_tables: JavaTables, monkeypatch: pytest.MonkeyPatch,
        columns: list[str] | None) -> None:
    paths = sorted(java_tables.root.rglob("*.avro"))
    native_count = 0
    for path in paths:
        data = path.read_bytes()
        files = [(str(path), data)]
        schema = json.loads(avro_file_metadata(str(path), data)["avro.schema"])
        target = avro_arrow_schema(str(path), schema, columns)
        if len(target) == 0:
            continue  # a manifest list under a manifest projection: nothing to compare
        native = read_tables(files, target)
        expected = _lockstep(files, columns, monkeypatch)
        if native is None:
            continue
        native_count += 1
        assert native[0].schema.equals(expected[0].schema, check_metadata=True), path
        assert native[0].equals(expected[0]), path
    manifests = [p for p in paths if "-m" in p.name and not p.name.startswith("snap-")]
    assert native_count >= len(manifests) > 100  # every Java manifest goes natively
