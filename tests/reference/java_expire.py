"""Write tables, expire snapshots and read tables with the Java reference (Spark 3.5), one JVM.

Usage (inside .venv-ref):
  python java_expire.py --warehouse DIR --requests REQUESTS.json --output RESULTS.json

Tables live in a Hadoop catalog ``ref`` rooted at DIR (``ref.db.t`` is ``DIR/db/t``), which
icenb's FilesystemCatalog opens too. Requests, one result each, in order:

- {"op": "sql", "statements": [...]} runs Spark SQL -> {"ok"}.
- {"op": "set_ref", "location", "name", "type": "tag"|"branch", "snapshot_index": k,
  "max_ref_age_ms", "min_snapshots_to_keep", "max_snapshot_age_ms"} creates (or replaces) a
  ref at the k-th snapshot (metadata order; -1: current) through ``ManageSnapshots``.
- {"op": "snapshots", "location"} -> {"ok", "snapshots": [[id, timestamp_ms], ...]}.
- {"op": "expire", "location", "sidecar", "older_than_index": k | null, "retain_last": n | null,
  "expire_indexes": [k, ...]} copies the table's current metadata file to
  ``sidecar/metadata/v1.metadata.json`` and runs ``ExpireSnapshots`` there (reachable-file
  cleanup forced, ``deleteWith`` recording paths, so no file is deleted): older_than is the
  k-th snapshot's timestamp. -> {"ok", "older_than_ms", "snapshot_ids" (explicit), "expired"
  (ids), "refs" (after), "deleted" (paths), "metadata_file" (Java's committed metadata)}.
- any other request reads rows / metadata tables as java_read_written.py does.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


class _Recorder:
    """A ``java.util.function.Consumer<String>`` recording the paths Java would delete."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def accept(self, path: Any) -> None:
        self.paths.append(str(path))

    class Java:
        implements = ("java.util.function.Consumer",)


def _table(spark: Any, location: str) -> Any:
    sc = spark.sparkContext
    tables = sc._jvm.org.apache.iceberg.hadoop.HadoopTables(sc._jsc.hadoopConfiguration())
    return tables.load(os.path.abspath(location))


def _snapshots(table: Any) -> list[Any]:
    return list(table.snapshots())


def _set_ref(spark: Any, r: dict[str, Any]) -> dict[str, Any]:
    table = _table(spark, r["location"])
    snaps = _snapshots(table)
    index = r.get("snapshot_index", -1)
    sid = table.currentSnapshot().snapshotId() if index == -1 else snaps[index].snapshotId()
    manage = table.manageSnapshots()
    name = r["name"]
    exists = table.refs().containsKey(name)
    if r.get("type", "tag") == "tag":
        manage = manage.replaceTag(name, sid) if exists else manage.createTag(name, sid)
    else:
        manage = manage.replaceBranch(name, sid) if exists else manage.createBranch(name, sid)
    if r.get("max_ref_age_ms") is not None:
        manage = manage.setMaxRefAgeMs(name, int(r["max_ref_age_ms"]))
    if r.get("min_snapshots_to_keep") is not None:
        manage = manage.setMinSnapshotsToKeep(name, int(r["min_snapshots_to_keep"]))
    if r.get("max_snapshot_age_ms") is not None:
        manage = manage.setMaxSnapshotAgeMs(name, int(r["max_snapshot_age_ms"]))
    manage.commit()
    return {"ok": True, "snapshot_id": int(sid)}


def _current_metadata_file(location: str) -> str:
    meta = os.path.join(location, "metadata")
    with open(os.path.join(meta, "version-hint.text"), encoding="utf-8") as f:
        version = int(f.read().strip())
    return os.path.join(meta, f"v{version}.metadata.json")


def _expire(spark: Any, r: dict[str, Any]) -> dict[str, Any]:
    from pyspark.java_gateway import ensure_callback_server_started

    gateway = spark.sparkContext._gateway
    ensure_callback_server_started(gateway)
    jvm = spark.sparkContext._jvm
    sidecar = os.path.abspath(r["sidecar"])
    os.makedirs(os.path.join(sidecar, "metadata"), exist_ok=True)
    shutil.copyfile(_current_metadata_file(os.path.abspath(r["location"])),
                    os.path.join(sidecar, "metadata", "v1.metadata.json"))
    with open(os.path.join(sidecar, "metadata", "version-hint.text"), "w") as f:
        f.write("1")
    table = _table(spark, sidecar)
    snaps = _snapshots(table)
    before = [int(s.snapshotId()) for s in snaps]
    expire = table.expireSnapshots()
    older_than = None
    if r.get("older_than_index") is not None:
        older_than = int(snaps[r["older_than_index"]].timestampMillis())
        expire = expire.expireOlderThan(older_than)
    if r.get("retain_last") is not None:
        expire = expire.retainLast(int(r["retain_last"]))
    explicit = [before[i] for i in r.get("expire_indexes") or []]
    for sid in explicit:
        expire = expire.expireSnapshotId(sid)
    recorder = _Recorder()
    expire = expire.deleteWith(recorder)
    # Force Java's reachable-file cleanup (icenb's rule) even for a table with one ref.
    types = gateway.new_array(jvm.java.lang.Class, 1)
    types[0] = jvm.java.lang.Boolean.TYPE
    method = expire.getClass().getDeclaredMethod("withIncrementalCleanup", types)
    method.setAccessible(True)
    args = gateway.new_array(jvm.java.lang.Object, 1)
    args[0] = jvm.java.lang.Boolean.FALSE
    if not explicit:
        method.invoke(expire, args)
    expire.commit()
    table.refresh()
    after = {int(s.snapshotId()) for s in table.snapshots()}
    refs = {str(k): int(v.snapshotId()) for k, v in dict(table.refs()).items()}
    return {"ok": True, "older_than_ms": older_than, "snapshot_ids": explicit,
            "expired": [s for s in before if s not in after], "refs": refs,
            "deleted": sorted(recorder.paths),
            "metadata_file": _current_metadata_file(sidecar)}


def _sql(spark: Any, r: dict[str, Any]) -> dict[str, Any]:
    for statement in r["statements"]:
        spark.sql(statement).collect()
    return {"ok": True}


def _snapshot_list(spark: Any, r: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "snapshots": [[int(s.snapshotId()), int(s.timestampMillis())]
                                      for s in _snapshots(_table(spark, r["location"]))]}


def _dispatch(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    from java_read import by_op
    from java_read_written import _dispatch as read_written

    ops = {"sql": _sql, "set_ref": _set_ref, "snapshots": _snapshot_list, "expire": _expire}
    return by_op(ops, read_written)(spark, request)


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve): --warehouse DIR in ``args``, one Spark session."""
    from java_read import reads

    return reads(_dispatch, warehouse_arg=True)(ref, requests, args)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from java_read import run_batch

    return run_batch(_dispatch, argv, warehouse_arg=True)


if __name__ == "__main__":
    sys.exit(main())
