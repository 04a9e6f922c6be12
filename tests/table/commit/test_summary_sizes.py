"""Snapshot summaries count a deletion vector by its blob, as Java's SnapshotSummary does: DVs of
one commit share a Puffin file, and ``added-files-size`` / ``total-files-size`` add up each DV's
``content_size_in_bytes``, not the Puffin file once per DV."""

from __future__ import annotations

from pathlib import Path

import icenb
from icenb.spec.manifest import FileContent


def test_dv_sizes_in_summaries_are_blob_sizes(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, p string", partition_by=["p"], format_version=3)
    t.append([{"id": i, "p": "ab"[i % 2]} for i in range(20)])
    before = int(t.current_snapshot.summary["total-files-size"])
    t.delete("id IN (1, 2, 3, 4)", mode="merge-on-read")
    summary = t.current_snapshot.summary
    dvs = [f for f in t.inspect.files().to_pylist()
           if f["content"] == FileContent.POSITION_DELETES.value]
    assert len(dvs) == 2 and len({f["file_path"] for f in dvs}) == 1  # two DVs, one Puffin file
    blobs = sum(f["content_size_in_bytes"] for f in dvs)
    assert int(summary["added-dvs"]) == 2
    assert int(summary["added-files-size"]) == blobs < dvs[0]["file_size_in_bytes"] * 2
    assert int(summary["total-files-size"]) == before + blobs
