"""Format upgrades (spec: Appendix E): v1 -> v2 -> v3 and v1 -> v3, checked against Java 1.10.

Java reads every snapshot of the upgraded tables as icenb does, and Java's own upgrade of the
same metadata (``UpgradeFormatVersion`` applied by ``TableMetadata.Builder``) sets the same
fields as icenb's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import UnsupportedVersion, ValidationError
from icenb.io.manifest_reader import read_manifest_list
from icenb.table import Table
from tests.reference_fixtures import run_reference_batch
from tests.table.commit.test_append import normalized


def _ids(t: Table, sid: int) -> list[int]:
    return sorted(t.at(sid).to_arrow().column("id").to_pylist())


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    wh = icenb.warehouse(tmp_path_factory.mktemp("upgrade"))
    out: dict[str, Any] = {"wh": wh, "bases": {}}
    # v1 -> v2 -> v3, an append at each version
    t = wh.create_table("db.steps", "id long, s string", partition_by=["bucket(2, id)"],
                        format_version=1)
    t.append([{"id": 1, "s": "a"}, {"id": 2, "s": "b"}])
    t.append([{"id": 3, "s": "c"}])
    out["bases"]["steps_v2"] = (t.metadata_location, 2)
    assert t.upgrade(2) is True
    t.append([{"id": 4, "s": "d"}])
    out["bases"]["steps_v3"] = (t.metadata_location, 3)
    assert t.upgrade(3) is True
    t.append([{"id": 5, "s": "e"}])
    # v1 -> v3 directly
    d = wh.create_table("db.direct", "id long, s string", format_version=1)
    d.append([{"id": 1, "s": "a"}])
    out["bases"]["direct_v3"] = (d.metadata_location, 3)
    assert d.upgrade(3) is True
    d.append([{"id": 2, "s": "b"}])
    out["steps"], out["direct"] = t, d
    return out


def test_upgrade_steps_keep_old_metadata_readable(upgraded: dict[str, Any]) -> None:
    t: Table = upgraded["steps"]
    assert t.format_version == 3
    s1, s2, s3, s4 = t.snapshots
    assert [s.sequence_number for s in t.snapshots] == [0, 0, 1, 2]
    assert t.metadata.last_sequence_number == 2
    assert [s.first_row_id for s in t.snapshots] == [None, None, None, 0]
    # the first v3 snapshot gives every data manifest a first row id (Java's list writer)
    assert s4.added_rows == 5 and t.metadata.next_row_id == 5
    manifests = read_manifest_list(t.io, s4, 3)
    old = [m for m in manifests if m.added_snapshot_id in (s1.snapshot_id, s2.snapshot_id)]
    assert len(old) == 2 and all(m.sequence_number == 0 for m in old)
    assert {m.added_snapshot_id for m in manifests} == {s.snapshot_id for s in t.snapshots}
    assert [_ids(t, s.snapshot_id) for s in t.snapshots] == [
        [1, 2], [1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 4, 5]]
    entries = t.inspect.entries(s4.snapshot_id)
    seqs = dict(zip(entries.column("snapshot_id").to_pylist(),
                    entries.column("sequence_number").to_pylist(), strict=False))
    assert seqs[s1.snapshot_id] == 0 and seqs[s3.snapshot_id] == 1


def test_direct_upgrade_to_v3(upgraded: dict[str, Any]) -> None:
    d: Table = upgraded["direct"]
    assert d.format_version == 3
    assert d.metadata.next_row_id == 2 and d.snapshots[-1].first_row_id == 0
    assert _ids(d, d.snapshots[0].snapshot_id) == [1]
    assert _ids(d, d.snapshots[-1].snapshot_id) == [1, 2]


def test_refused_and_no_op_upgrades(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", format_version=2)
    location = t.metadata_location
    assert t.upgrade(2) is False and t.metadata_location == location
    with pytest.raises(ValidationError, match="downgrade"):
        t.upgrade(1)
    with pytest.raises(UnsupportedVersion):
        t.upgrade(5)
    with pytest.raises(ValidationError):
        t.upgrade("3")  # type: ignore[arg-type]
    assert t.metadata_location == location and t.format_version == 2
    ro = icenb.open(location)  # type: ignore[arg-type]
    with pytest.raises(icenb.errors.UnsupportedFeature):
        ro.upgrade(3)


@pytest.fixture(scope="module")
def java_rows(upgraded: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    keys, requests = [], []
    for name in ("steps", "direct"):
        t: Table = upgraded[name]
        for snap in t.snapshots:
            keys.append((name, snap.snapshot_id))
            requests.append({"metadata_file": t.metadata_location,
                             "snapshot_id": snap.snapshot_id})
    return dict(zip(keys, run_reference_batch("java_read_written.py", requests), strict=True))


@pytest.mark.parametrize("name", ["steps", "direct"])
def test_java_reads_every_snapshot_of_an_upgraded_table(
        upgraded: dict[str, Any], java_rows: dict[tuple[str, int], dict[str, Any]],
        name: str) -> None:
    t: Table = upgraded[name]
    for snap in t.snapshots:
        theirs = java_rows[(name, snap.snapshot_id)]
        assert theirs["ok"], theirs
        assert sorted(theirs["rows"]) == normalized(t.at(snap.snapshot_id).to_arrow())


def _fields(doc: dict[str, Any]) -> dict[str, Any]:
    """What an upgrade decides (everything but times and the metadata log)."""
    skip = {"last-updated-ms", "metadata-log"}
    return {k: v for k, v in doc.items() if k not in skip}


def test_java_upgrades_the_same_metadata_to_the_same_fields(upgraded: dict[str, Any]) -> None:
    requests, ours = [], []
    t: Table = upgraded["steps"]
    for key, (base_location, version) in upgraded["bases"].items():
        base = Path(base_location.removeprefix("file:")).read_text(encoding="utf-8")
        requests.append({"op": "apply", "base": base, "base_location": base_location,
                         "requirements": [],
                         "updates": [{"action": "upgrade-format-version",
                                      "format-version": version}]})
        ours.append((key, base_location))
    results = run_reference_batch("java_table_updates.py", requests)
    table = {"steps_v2": t, "steps_v3": t, "direct_v3": upgraded["direct"]}
    for (key, base_location), result in zip(ours, results, strict=True):
        assert result["ok"], result
        java = result["metadata"]
        java = json.loads(java) if isinstance(java, str) else java
        # icenb's metadata file written by the upgrade: the one logged right after the base
        log = [e.metadata_file for e in table[key].metadata.metadata_log]
        after = [*log, table[key].metadata_location][log.index(base_location) + 1]
        mine = json.loads(Path(after.removeprefix("file:")).read_text(encoding="utf-8"))
        assert set(mine) == set(java), key
        assert _fields(mine) == _fields(java), key
