"""Read (and rewrite) manifest lists and manifests with the Java reference, in one JVM.

Usage (inside .venv-ref):
  python java_manifests.py --requests REQUESTS.json --output RESULTS.json

Each request: {"snapshot": <snapshot JSON with "manifest-list">, "schema": <schema JSON>,
"specs": [<partition spec JSON>, ...], "rewrite_dir": "/abs/dir" | null}. Java parses the
snapshot (``SnapshotParser.fromJson``), reads its manifest list (``Snapshot.allManifests``), and
each manifest with ``ManifestFiles.read`` / ``readDeleteManifest`` given the specs by id (all
entries, with inherited values, as ``ManifestReader.entries()``; and the live files of the
public iterator). With a ``rewrite_dir``, Java also writes each manifest's entries again with
its own ``ManifestWriter`` (``add`` / ``existing`` / ``delete``) and reports the resulting
``ManifestFile``. Byte values are hex; partition values are ``Conversions.toByteBuffer``.
Results line up with requests: {"ok": true, "manifests": [...]} or {"ok": false, "error": ...}.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import traceback
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "serve"]


def _hex(jvm: Any, buf: Any) -> str | None:
    if buf is None:
        return None
    return bytes(jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buf)).hex()


def _int_map(m: Any) -> dict[str, int] | None:
    if m is None:
        return None
    return {str(e.getKey()): int(e.getValue()) for e in m.entrySet()}


def _bytes_map(jvm: Any, m: Any) -> dict[str, str] | None:
    if m is None:
        return None
    return {str(e.getKey()): _hex(jvm, e.getValue()) for e in m.entrySet()}


def _list(values: Any) -> list[int] | None:
    return None if values is None else [int(v) for v in values]


def _manifest_file(jvm: Any, m: Any) -> dict[str, Any]:
    parts = m.partitions()
    return {
        "path": m.path(),
        "length": m.length(),
        "partition_spec_id": m.partitionSpecId(),
        "content": m.content().id(),
        "sequence_number": m.sequenceNumber(),
        "min_sequence_number": m.minSequenceNumber(),
        "added_snapshot_id": m.snapshotId(),
        "added_files_count": m.addedFilesCount(),
        "existing_files_count": m.existingFilesCount(),
        "deleted_files_count": m.deletedFilesCount(),
        "added_rows_count": m.addedRowsCount(),
        "existing_rows_count": m.existingRowsCount(),
        "deleted_rows_count": m.deletedRowsCount(),
        "partitions": None if parts is None else [
            {"contains_null": p.containsNull(), "contains_nan": p.containsNaN(),
             "lower_bound": _hex(jvm, p.lowerBound()), "upper_bound": _hex(jvm, p.upperBound())}
            for p in parts],
        "key_metadata": _hex(jvm, m.keyMetadata()),
        "first_row_id": m.firstRowId(),
    }


_LONGS = frozenset({"LONG", "TIME", "TIMESTAMP", "TIMESTAMP_NANO"})


def _partition_hex(jvm: Any, t: Any, v: Any) -> str | None:
    """``Conversions.toByteBuffer`` of a partition value, as hex. py4j hands Java longs and
    floats to Python as int/float (exactly) but would pass small longs back as Integer and
    floats as Double, so those two are packed here (little-endian, Appendix D)."""
    if v is None:
        return None
    type_id = t.typeId().toString()
    if type_id in _LONGS:
        return struct.pack("<q", v).hex()
    if type_id == "FLOAT":
        return struct.pack("<f", v).hex()
    return _hex(jvm, jvm.org.apache.iceberg.types.Conversions.toByteBuffer(t, v))


def _content_file(jvm: Any, f: Any, spec: Any) -> dict[str, Any]:
    ptype = spec.partitionType().fields()
    obj = jvm.java.lang.Object().getClass()
    partition = [_partition_hex(jvm, ptype.get(i).type(), f.partition().get(i, obj))
                 for i in range(ptype.size())]
    out = {
        "content": f.content().id(),
        "file_path": f.location(),
        "file_format": f.format().toString(),
        "spec_id": f.specId(),
        "partition": partition,
        "record_count": f.recordCount(),
        "file_size_in_bytes": f.fileSizeInBytes(),
        "column_sizes": _int_map(f.columnSizes()),
        "value_counts": _int_map(f.valueCounts()),
        "null_value_counts": _int_map(f.nullValueCounts()),
        "nan_value_counts": _int_map(f.nanValueCounts()),
        "lower_bounds": _bytes_map(jvm, f.lowerBounds()),
        "upper_bounds": _bytes_map(jvm, f.upperBounds()),
        "key_metadata": _hex(jvm, f.keyMetadata()),
        "split_offsets": _list(f.splitOffsets()),
        "equality_ids": _list(f.equalityFieldIds()),
        "sort_order_id": f.sortOrderId(),
        "first_row_id": f.firstRowId(),
        "data_sequence_number": f.dataSequenceNumber(),
        "file_sequence_number": f.fileSequenceNumber(),
        "pos": f.pos(),
    }
    if f.content().id() != 0:
        out["referenced_data_file"] = f.referencedDataFile()
        out["content_offset"] = f.contentOffset()
        out["content_size_in_bytes"] = f.contentSizeInBytes()
    else:
        out["referenced_data_file"] = None
        out["content_offset"] = None
        out["content_size_in_bytes"] = None
    return out


def _entries_method(gateway: Any) -> Any:
    """``ManifestReader.entries()`` (package-private) through reflection."""
    jvm = gateway.jvm
    # Iceberg's classes come from the class path of a bare JVM, or from spark.jars (Spark's
    # class loader, not the system one) in a shared one: the context class loader has both.
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.lang.Class.forName("org.apache.iceberg.ManifestReader", False, loader)
    method = cls.getDeclaredMethod("entries", gateway.new_array(jvm.java.lang.Class, 0))
    method.setAccessible(True)
    return method


def _read(gateway: Any, io: Any, request: dict[str, Any]) -> dict[str, Any]:
    jvm = gateway.jvm
    ib = jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(json.dumps(request["schema"]))
    specs = jvm.java.util.HashMap()
    for spec_json in request["specs"]:
        spec = ib.PartitionSpecParser.fromJson(schema, json.dumps(spec_json))
        specs.put(spec.specId(), spec)
    snapshot = ib.SnapshotParser.fromJson(json.dumps(request["snapshot"]))
    entries_method = _entries_method(gateway)
    no_args = gateway.new_array(jvm.java.lang.Object, 0)
    out = []
    manifests = snapshot.allManifests(io)
    for m in manifests:
        info = _manifest_file(jvm, m)
        is_data = m.content().id() == 0
        reader = (ib.ManifestFiles.read(m, io, specs) if is_data
                  else ib.ManifestFiles.readDeleteManifest(m, io, specs))
        spec = reader.spec()
        entries = []
        it = entries_method.invoke(reader, no_args).iterator()
        while it.hasNext():
            e = it.next()
            entries.append({"status": e.status().id(), "snapshot_id": e.snapshotId(),
                            "data_sequence_number": e.dataSequenceNumber(),
                            "file_sequence_number": e.fileSequenceNumber(),
                            "file": _content_file(jvm, e.file(), spec)})
        reader.close()
        info["entries"] = entries
        live_reader = (ib.ManifestFiles.read(m, io, specs) if is_data
                       else ib.ManifestFiles.readDeleteManifest(m, io, specs))
        live = []
        it = live_reader.iterator()
        while it.hasNext():
            live.append(_content_file(jvm, it.next(), spec))
        live_reader.close()
        info["live"] = live
        # The spec as Java reads it from the manifest's own header (no specs given).
        header_reader = (ib.ManifestFiles.read(m, io) if is_data
                         else ib.ManifestFiles.readDeleteManifest(m, io, None))
        info["header_spec"] = json.loads(ib.PartitionSpecParser.toJson(header_reader.spec()))
        info["header_schema"] = json.loads(ib.SchemaParser.toJson(header_reader.spec().schema()))
        header_reader.close()
        if request.get("rewrite_dir"):
            info["rewrite"] = _rewrite(gateway, io, m, specs, spec, request)
        out.append(info)
    return {"ok": True, "manifests": out}


def _rewrite(gateway: Any, io: Any, m: Any, specs: Any, spec: Any,
             request: dict[str, Any]) -> dict[str, Any]:
    """Java's ManifestWriter given the same entries: its ManifestFile and file."""
    jvm = gateway.jvm
    ib = jvm.org.apache.iceberg
    version = int(request["format_version"])
    path = os.path.join(request["rewrite_dir"], "java-" + os.path.basename(m.path()))
    out_file = io.newOutputFile(path)
    snapshot_id = jvm.java.lang.Long.valueOf(str(m.snapshotId()))
    is_data = m.content().id() == 0
    writer = (ib.ManifestFiles.write(version, spec, out_file, snapshot_id) if is_data
              else ib.ManifestFiles.writeDeleteManifest(version, spec, out_file, snapshot_id))
    reader = (ib.ManifestFiles.read(m, io, specs) if is_data
              else ib.ManifestFiles.readDeleteManifest(m, io, specs))
    it = _entries_method(gateway).invoke(
        reader, gateway.new_array(jvm.java.lang.Object, 0)).iterator()
    while it.hasNext():
        e = it.next()
        status = e.status().id()
        f = e.file()
        if status == 1:
            explicit = e.dataSequenceNumber() != m.sequenceNumber()
            if version >= 2 and explicit:
                writer.add(f, e.dataSequenceNumber())
            else:
                writer.add(f)
        elif status == 0:
            writer.existing(f, e.snapshotId(), e.dataSequenceNumber(),
                            jvm.java.lang.Long.valueOf(str(e.fileSequenceNumber())))
        else:
            writer.delete(f, e.dataSequenceNumber(),
                          jvm.java.lang.Long.valueOf(str(e.fileSequenceNumber())))
    reader.close()
    writer.close()
    result = _manifest_file(jvm, writer.toManifestFile())
    result["file"] = path
    return result


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve), on ``ref``'s gateway."""
    gateway = ref.gateway
    jvm = gateway.jvm
    io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(jvm.org.apache.hadoop.conf.Configuration())
    results: list[dict[str, Any]] = []
    for request in requests:
        try:
            results.append(_read(gateway, io, request))
        except Exception as e:  # report it and go on with the batch
            results.append({"ok": False, "error": f"{type(e).__name__}: {e}"[:4000],
                            "traceback": traceback.format_exc()[-4000:]})
    return results


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from batch import main as batch_main

    return batch_main(serve, argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
