"""Golden comparison with Iceberg Java 1.10: every metadata.json Java wrote reads, writes back
identically, and means the same things to icenb as the scenario that made it.

The tables come from tests/reference/generate_tables.py (see tests/reference_fixtures.py);
icenb.spec does no I/O, so gzip files are decompressed here.
"""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from icenb.spec.snapshot import Operation
from icenb.spec.table_metadata import (
    TableMetadata,
    table_metadata_from_json,
    table_metadata_to_json,
    to_json_string,
)
from tests.reference_fixtures import (  # noqa: F401  (pytest fixtures)
    JavaTables,
    MetadataFile,
    java_roundtrip,
    java_tables,
    java_tables_dir,
)


def _read(f: MetadataFile) -> bytes:
    data = f.path.read_bytes()
    return gzip.decompress(data) if f.gzip else data


@pytest.fixture(scope="module")
def table_files(java_tables: JavaTables) -> list[MetadataFile]:  # noqa: F811
    files = java_tables.metadata_files(kind="table")
    assert files, "the reference generated no table metadata files"
    return files


@pytest.fixture(scope="module")
def loaded(table_files: list[MetadataFile]) -> dict[Path, tuple[dict[str, Any], TableMetadata]]:
    """Every file as (raw JSON, icenb metadata read strictly)."""
    out = {}
    for f in table_files:
        data = _read(f)
        out[f.path] = (json.loads(data), table_metadata_from_json(data, file=str(f.path),
                                                                   strict=True))
    return out


def _latest(java_tables: JavaTables, loaded: dict[Path, Any],  # noqa: F811
            name: str) -> TableMetadata:
    md: TableMetadata = loaded[java_tables.latest(name).path][1]
    return md


# --------------------------------------------------------------------------- read / write


def test_java_files_cover_every_version_and_gzip(table_files: list[MetadataFile]) -> None:
    assert {f.format_version for f in table_files} == {1, 2, 3}
    assert any(f.gzip for f in table_files)
    assert len({f.name for f in table_files}) >= 20


def test_every_java_metadata_file_reads_strictly_and_writes(
    table_files: list[MetadataFile], loaded: dict[Path, tuple[dict[str, Any], TableMetadata]]
) -> None:
    for f in table_files:
        raw, md = loaded[f.path]
        assert md.format_version == f.format_version == raw["format-version"]
        assert md.table_uuid == raw["table-uuid"]
        assert md.source_file == str(f.path)
        assert to_json_string(md)


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    """JSON pointers where two JSON values differ (objects as maps, arrays in order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted({*a, *b}) for d in _diff(a.get(k, _ABSENT), b.get(k, _ABSENT),
                                                          f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path} (length {len(a)} != {len(b)})"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _diff(x, y, f"{path}/{i}")]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


_ABSENT = "<absent>"

# Single-value JSON (Appendix D) of column defaults is written by icenb.spec.values as the spec's
# examples show (time with 6 fraction digits, lowercase hex); Java trims zeros and uses uppercase
# hex. Both read back as the same values (checked by the Java round trip below).
_DEFAULTS = ("/initial-default", "/write-default")


def test_icenb_writes_what_java_writes(
    table_files: list[MetadataFile], loaded: dict[Path, tuple[dict[str, Any], TableMetadata]]
) -> None:
    """icenb's JSON equals Java's own serialization of each file (values and field order)."""
    checked = 0
    mismatches = []
    for f in table_files:
        if f.canonical is None:
            continue
        mine = table_metadata_to_json(loaded[f.path][1])
        checked += 1
        diff = [d for d in _diff(f.canonical, mine) if not d.split(":")[0].endswith(_DEFAULTS)]
        if list(mine) != list(f.canonical):
            diff.append(f"top-level field order {list(mine)}")
        if diff:
            mismatches.append(f"{f.path.name} of {f.name} (v{f.format_version}): {diff[:3]}")
    assert checked == len(table_files)
    assert not mismatches, "\n".join(mismatches)


def test_java_reads_icenb_rewrite_as_the_same_metadata(
    table_files: list[MetadataFile],
    loaded: dict[Path, tuple[dict[str, Any], TableMetadata]],
    java_roundtrip: Any,  # noqa: F811
) -> None:
    pairs = [(f.path, to_json_string(loaded[f.path][1]).encode()) for f in table_files]
    results = java_roundtrip(pairs, kind="table")
    assert len(results) == len(pairs)
    bad = []
    for f, r in zip(table_files, results, strict=True):
        if not (r.get("ok") and r.get("equal")):
            detail = r.get("error") or json.dumps(r.get("diff", [])[:3])[:400]
            bad.append(f"{f.path.name} of {f.name} (v{f.format_version}): {detail}")
    assert not bad, "\n".join(bad)


def test_gzip_and_plain_files_of_one_table_agree(
    java_tables: JavaTables,  # noqa: F811
    loaded: dict[Path, tuple[dict[str, Any], TableMetadata]],
) -> None:
    files = [f for f in java_tables.metadata_files(kind="table", feature="mixed-compression")]
    assert {f.gzip for f in files} == {True, False}
    uuids = {loaded[f.path][1].table_uuid for f in files}
    assert len(uuids) == 1


# --------------------------------------------------------------------------- semantic facts


def test_raw_facts_of_every_file(
    table_files: list[MetadataFile], loaded: dict[Path, tuple[dict[str, Any], TableMetadata]]
) -> None:
    for f in table_files:
        raw, md = loaded[f.path]
        assert len(md.snapshots) == len(raw.get("snapshots", []))
        raw_current = raw.get("current-snapshot-id")
        expected = None if raw_current in (None, -1) else raw_current
        assert md.current_snapshot_id == expected
        current_schema = next(s for s in raw["schemas"]
                              if s["schema-id"] == raw["current-schema-id"])
        assert [fl.name for fl in md.schema.fields] == [x["name"] for x in
                                                        current_schema["fields"]]
        assert {n: r.snapshot_id for n, r in md.refs.items()} == {
            n: r["snapshot-id"] for n, r in raw.get("refs", {}).items()}
        if expected is not None:
            assert md.refs["main"].snapshot_id == expected


def test_history_helpers_agree_with_the_logs(
    table_files: list[MetadataFile], loaded: dict[Path, tuple[dict[str, Any], TableMetadata]]
) -> None:
    for f in table_files:
        _, md = loaded[f.path]
        current = md.current_snapshot()
        if current is None:
            continue
        # Java appends the new current snapshot to the snapshot log on every change
        assert md.snapshot_log[-1].snapshot_id == current.snapshot_id
        assert md.snapshot_as_of(md.last_updated_ms).snapshot_id == current.snapshot_id
        for entry in md.snapshot_log:
            last_at_ts = [e for e in md.snapshot_log if e.timestamp_ms <= entry.timestamp_ms][-1]
            if md.snapshot_by_id(last_at_ts.snapshot_id) is not None:
                assert md.snapshot_as_of(entry.timestamp_ms).snapshot_id == (
                    last_at_ts.snapshot_id)
        chain = list(md.ancestors(current.snapshot_id))
        assert chain[0] == current
        for child, parent in itertools.pairwise(chain):
            assert child.parent_snapshot_id == parent.snapshot_id
            assert parent.sequence_number <= child.sequence_number
            assert md.is_ancestor(parent.snapshot_id, current.snapshot_id)
        assert md.schema_for_snapshot(current.snapshot_id).schema_id == (
            current.schema_id if current.schema_id is not None else md.current_schema_id)


def test_refs_scenario(java_tables: JavaTables,  # noqa: F811
                       loaded: dict[Path, Any]) -> None:
    md = _latest(java_tables, loaded, "db.v2_refs")
    tags = {n: r for n, r in md.refs.items() if r.is_tag}
    branches = {n: r for n, r in md.refs.items() if r.is_branch}
    assert {"release-1", "forever", "old"} <= set(tags)
    assert {"main", "dev", "audit", "staging"} <= set(branches)
    assert "scratch" not in md.refs  # dropped
    assert tags["forever"].max_ref_age_ms == 10 * 86_400_000  # replaced with RETAIN 10 DAYS
    dev = branches["dev"]
    assert (dev.min_snapshots_to_keep, dev.max_snapshot_age_ms, dev.max_ref_age_ms) == (
        3, 2 * 86_400_000, 7 * 86_400_000)
    # dev has two commits of its own that main never saw
    dev_snap = md.snapshot_for_ref("dev")
    main_snap = md.snapshot_for_ref("main")
    assert dev_snap is not None and main_snap is not None
    assert not md.is_ancestor(dev_snap.snapshot_id, main_snap.snapshot_id)
    assert md.snapshot_for_ref("old") == list(md.ancestors(main_snap.snapshot_id))[-1]
    # fast-forward: main moved to staging's snapshot
    assert md.refs["main"].snapshot_id == md.refs["staging"].snapshot_id


def test_schema_evolution_scenario(java_tables: JavaTables,  # noqa: F811
                                   loaded: dict[Path, Any]) -> None:
    for version in (1, 2, 3):
        md = _latest(java_tables, loaded, f"db.v{version}_schema_evolution")
        assert len(md.schemas) > 5
        names = [f.name for f in md.schema.fields]
        assert names[0] == "score" and "full_name" in names and "name" not in names
        assert "extra1" not in names
        full_name = md.schema.find_field("full_name")
        assert full_name.doc == "display name" and full_name.required
        tags = md.schema.find_field("tags")
        first = md.schemas[0].find_field("tags")
        assert tags.field_id != first.field_id  # re-added: a new id
        assert md.schema.identifier_field_names == ("id",)
        assert md.last_column_id >= md.schema.highest_field_id
        assert str(md.schema.find_type("amount")) == "decimal(12, 2)"


def test_partition_evolution_scenario(java_tables: JavaTables,  # noqa: F811
                                      loaded: dict[Path, Any]) -> None:
    for version in (1, 2, 3):
        md = _latest(java_tables, loaded, f"db.v{version}_partition_evolution")
        assert len(md.partition_specs) > 3
        assert "id_bucket16" in [f.name for f in md.spec.fields]
        assert md.last_partition_id == max(s.last_assigned_field_id for s in md.partition_specs)
        first_spec = min(md.partition_specs, key=lambda s: s.spec_id)
        assert [str(f.transform) for f in first_spec.fields] == ["identity"]
        if version == 1:  # v1 drops fields by replacing their transform with void
            assert any(f.is_void for f in md.spec.fields)
        else:
            assert not any(f.is_void for f in md.spec.fields)


def test_upgrade_scenario(java_tables: JavaTables,  # noqa: F811
                          loaded: dict[Path, Any]) -> None:
    files = [f for f in java_tables.metadata_files(kind="table") if f.name == "db.v1_upgrade"]
    assert [f.format_version for f in files] == sorted(f.format_version for f in files)
    assert {f.format_version for f in files} == {1, 2, 3}
    md = _latest(java_tables, loaded, "db.v1_upgrade")
    assert md.format_version == 3 and md.next_row_id is not None
    by_time = sorted(md.snapshots, key=lambda s: s.sequence_number)
    # snapshots committed while the table was v1 read with sequence number 0 (Appendix E)
    assert by_time[0].sequence_number == 0
    assert by_time[-1].sequence_number == md.last_sequence_number > 0
    # row lineage starts at the v3 upgrade: later snapshots have first-row-id, earlier ones not
    lineage = [s for s in md.snapshots if s.first_row_id is not None]
    assert lineage and any(s.first_row_id is None for s in md.snapshots)
    for s in lineage:
        assert s.added_rows is not None
        assert s.first_row_id + s.added_rows <= md.next_row_id
    v2_files = [loaded[f.path][1] for f in files if f.format_version == 2]
    assert all(m.next_row_id is None for m in v2_files)


def test_expire_scenario(java_tables: JavaTables,  # noqa: F811
                         loaded: dict[Path, Any]) -> None:
    md = _latest(java_tables, loaded, "db.v2_expire_snapshots")
    assert len(md.metadata_log) <= 3  # write.metadata.previous-versions-max
    current = md.current_snapshot()
    assert current is not None
    chain = list(md.ancestors(current.snapshot_id))
    # the oldest retained snapshot's parent has expired: ancestry stops there
    assert chain[-1].parent_snapshot_id is not None
    assert md.snapshot_by_id(chain[-1].parent_snapshot_id) is None
    keep = md.snapshot_for_ref("keep_me")
    assert keep is not None and md.refs["keep_me"].is_tag
    with pytest.raises(Exception, match="no snapshot was current"):
        md.snapshot_as_of(md.snapshot_log[0].timestamp_ms - 1)


def test_rollback_scenario(java_tables: JavaTables,  # noqa: F811
                           loaded: dict[Path, Any]) -> None:
    md = _latest(java_tables, loaded, "db.v2_rollback_wap")
    current = md.current_snapshot()
    assert current is not None
    newest = max(md.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number))
    assert newest.snapshot_id != current.snapshot_id  # rolled back past it
    assert not md.is_ancestor(newest.snapshot_id, current.snapshot_id)
    # the WAP-staged snapshot was cherry-picked (fast-forwarded) into main's history
    staged = [s for s in md.snapshots if s.summary is not None and "wap.id" in s.summary]
    assert staged and staged[0].operation is Operation.APPEND
    assert md.is_ancestor(staged[0].snapshot_id, current.snapshot_id)
    # the snapshot log records every change of the current snapshot, including rollbacks
    logged = [e.snapshot_id for e in md.snapshot_log]
    assert len(logged) > len(set(logged)) or len(logged) > len(list(
        md.ancestors(current.snapshot_id)))


def test_maintenance_statistics(java_tables: JavaTables,  # noqa: F811
                                loaded: dict[Path, Any]) -> None:
    entry = next(e for e in java_tables.entries("table") if e["name"] == "db.v2_maintenance")
    md = _latest(java_tables, loaded, "db.v2_maintenance")
    assert any(s.operation is Operation.REPLACE for s in md.snapshots)
    if "statistics" not in entry["features"]:
        pytest.skip("Java could not compute table statistics in this environment")
    assert md.statistics
    for stats in md.statistics:
        assert md.snapshot_by_id(stats.snapshot_id) is not None
        assert stats.blob_metadata and all(b.fields for b in stats.blob_metadata)
        assert stats.file_footer_size_in_bytes < stats.file_size_in_bytes
    if "partition-statistics" in entry["features"]:
        assert all(md.snapshot_by_id(p.snapshot_id) is not None
                   for p in md.partition_statistics)


def test_v3_files_have_row_lineage(table_files: list[MetadataFile],
                                   loaded: dict[Path, Any]) -> None:
    for f in table_files:
        if f.format_version != 3:
            continue
        md: TableMetadata = loaded[f.path][1]
        assert md.next_row_id is not None
        for s in md.snapshots:
            if s.first_row_id is not None:
                assert s.first_row_id + (s.added_rows or 0) <= md.next_row_id
