"""Damaged Avro metadata is a CorruptFile naming the file, never a plan that silently differs
(issue 17). Manifests and manifest lists carry no checksum, so icenb cross-checks them; each
case below read as wrong rows (or raised a raw KeyError) before."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pytest

import icenb
from icenb.errors import CorruptFile
from icenb.table import Table


def _table(tmp_path: Path) -> tuple[Table, list[int]]:
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long, v string", format_version=3,
        properties={"write.delete.mode": "merge-on-read"})
    t.append([{"id": i, "v": str(i)} for i in range(20)])
    t.delete("id < 5")
    return t, list(range(5, 20))


def _find(root: Path, pick: Callable[[str], bool]) -> Path:
    return next(Path(d) / f for d, _x, fs in os.walk(root) for f in fs if pick(f))


def _rewrite_manifest(t: Table, path: str, change: Callable[[list[dict[str, Any]]], None]
                      ) -> None:
    """Change a manifest's records, and its length in the current manifest list (so only the
    change is wrong, not the length icenb also checks)."""
    _rewrite(Path(path), change)
    size = Path(path).stat().st_size

    def new_length(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            if row["manifest_path"] == path:
                row["manifest_length"] = size

    _rewrite(Path(t.current_snapshot.manifest_list), new_length)  # type: ignore[union-attr]


def _rewrite(path: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    """Re-encode an Avro container with changed records (the header metadata kept)."""
    reader = fastavro.reader(io.BytesIO(path.read_bytes()))
    records = list(reader)
    change(records)
    meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in reader.metadata.items()
            if not k.startswith("avro.")}
    out = io.BytesIO()
    fastavro.writer(out, reader.writer_schema, records, metadata=meta, codec="null")
    path.write_bytes(out.getvalue())


def _rows(tmp_path: Path) -> list[int]:
    t = icenb.warehouse(tmp_path).table("db.t")
    return sorted(t.to_arrow().column("id").to_pylist())


def _delete_manifest(records: list[dict[str, Any]]) -> bool:
    return any(r["data_file"]["content"] != 0 for r in records)


def test_a_renamed_manifest_list_field_is_corrupt(tmp_path: Path) -> None:
    """A flipped byte in the list's Avro schema renamed ``content``: it was read as missing and
    took the v1 default (data), so the DV manifest was planned as data."""
    t, good = _table(tmp_path)
    path = Path(t.current_snapshot.manifest_list)  # type: ignore[union-attr]
    raw = path.read_bytes()
    # manifest_file's own field comes first (the partition summaries' fields follow)
    path.write_bytes(raw.replace(b'"name":"content"', b'"name":"cOntent"', 1))
    with pytest.raises(CorruptFile, match="required field") as err:
        _rows(tmp_path)
    assert err.value.file == str(path) and err.value.field == "content"
    path.write_bytes(raw)
    assert _rows(tmp_path) == good


def test_a_manifest_without_its_format_version_is_corrupt(tmp_path: Path) -> None:
    """A damaged ``format-version`` header key made the DV manifest read as v1: its entries
    inherited sequence number 0 and the deletes no longer applied."""
    _table(tmp_path)
    path = _find(tmp_path, lambda f: f.endswith("-m0.avro") and
                 _delete_manifest(list(fastavro.reader(io.BytesIO(
                     (Path(tmp_path) / "db" / "t" / "metadata" / f).read_bytes())))))
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"format-version", b"format-versiom", 1))
    with pytest.raises(CorruptFile, match="sequence number") as err:
        _rows(tmp_path)
    assert err.value.file == str(path)


def test_entry_counts_must_match_the_manifest_list(tmp_path: Path) -> None:
    """A status flipped from ADDED to DELETED dropped a data file from the plan."""
    t, _good = _table(tmp_path)
    data_manifest = next(m for m in icenb.warehouse(tmp_path).table("db.t").inspect.manifests()
                         .to_pylist() if m["content"] == 0)["path"]

    def drop(records: list[dict[str, Any]]) -> None:
        records[0]["status"] = 2  # DELETED

    _rewrite_manifest(t, data_manifest, drop)
    with pytest.raises(CorruptFile, match="ADDED entries") as err:
        _rows(tmp_path)
    assert err.value.file == data_manifest


def test_a_delete_file_must_hold_its_record_count(tmp_path: Path) -> None:
    """A damaged footer that still parsed read a position-delete file as fewer rows, and the
    rows it no longer deleted came back; the manifest's record count now checks delete files
    as it checks data files."""
    t = icenb.warehouse(tmp_path).create_table(
        "db.t", "id long", format_version=2, properties={"write.delete.mode": "merge-on-read"})
    t.append([{"id": i} for i in range(20)])
    t.delete("id < 5")
    manifest = next(m for m in t.inspect.manifests().to_pylist() if m["content"] == 1)["path"]

    def inflate(records: list[dict[str, Any]]) -> None:
        records[0]["data_file"]["record_count"] += 1

    _rewrite_manifest(t, manifest, inflate)
    with pytest.raises(CorruptFile, match="rows, its manifest entry says 6") as err:
        _rows(tmp_path)
    assert err.value.file is not None and err.value.file.endswith("-deletes.parquet")


def test_a_manifest_list_cut_after_its_header_is_corrupt(tmp_path: Path) -> None:
    """An Avro file cut right after its header is a valid empty file: the snapshot read as
    no rows at all. Its summary says it has data files."""
    t, _good = _table(tmp_path)
    path = Path(t.current_snapshot.manifest_list)  # type: ignore[union-attr]
    header_end = len(path.read_bytes()) - len(b"".join(_blocks(path)))
    path.write_bytes(path.read_bytes()[:header_end])
    with pytest.raises(CorruptFile, match="no manifest") as err:
        _rows(tmp_path)
    assert err.value.file == str(path)


def _blocks(path: Path) -> list[bytes]:
    """The bytes after the container header (its data blocks with their sync markers)."""
    raw = path.read_bytes()
    reader = fastavro.reader(io.BytesIO(raw))
    sync = reader._header["sync"]  # the header ends with the sync marker
    end = raw.index(sync) + len(sync)
    return [raw[end:]]


def test_a_damaged_parquet_footer_is_corrupt_not_a_decode_error(tmp_path: Path) -> None:
    """A flipped byte in a column name of the footer raised a raw UnicodeDecodeError."""
    t = icenb.warehouse(tmp_path).create_table("db.t", "id long, value string")
    t.append([{"id": 1, "value": "x"}])
    path = _find(tmp_path, lambda f: f.endswith(".parquet"))
    raw = path.read_bytes()
    at = raw.index(b"value")  # the schema element's name (the footer's first)
    path.write_bytes(raw[:at] + b"\xe8" + raw[at + 1:])
    with pytest.raises(CorruptFile) as err:
        _rows(tmp_path)
    assert err.value.file == str(path)
