"""Read tables with Iceberg Java's generic reader (``IcebergGenerics``), in one JVM.

For tables Spark 3.5 cannot load (time, timestamp_ns, variant, geometry, unknown columns):
the generic reader reads Parquet, ORC and Avro data files into ``org.apache.iceberg.data.
Record`` values and applies position deletes, deletion vectors and equality deletes
(``GenericReader`` with ``GenericDeleteFilter``, all in iceberg-spark-runtime's jar).

Usage (inside .venv-ref):
  python java_generic_read.py --requests REQUESTS.json --output RESULTS.json

A request names the table by "location" (a Hadoop table directory) or "metadata_file" (loaded
as a static table), one of "snapshot_id" or "ref" (a branch or tag; neither: the current
snapshot), and optionally "columns" (top-level names, returned in that order). Result:
{"ok": true, "columns": [...], "rows": [[...], ...], "snapshot_id": ..., "schema_id": ...}
(or {"ok": false, "error": ...}), each value in the canonical JSON form below.

Schema: ``IcebergGenerics.ScanBuilder`` has no ``useRef``; its ``useSnapshot`` reads with the
snapshot's schema (``TableScan.useSnapshot``). So the schema is taken from the core
``TableScan`` (``useSnapshot(id)`` or ``useRef(name)``: a branch reads with the table's current
schema, a tag with its snapshot's) and passed to the generic reader with ``project``.

Canonical JSON of one value (``icenb``'s tests convert Arrow values to the same form):
null; booleans, integers and strings as themselves; floats as floats, NaN and infinities as
``repr`` strings; decimals as Python's ``str(Decimal)`` (py4j turns a ``BigDecimal`` into a
``Decimal`` of the same digits and exponent); binary, fixed, uuid, geometry and geography as
lowercase hex of their bytes; dates as ISO ``YYYY-MM-DD``; times as ``HH:MM:SS.nnnnnnnnn``;
timestamps of either precision, with or without zone, as UTC
``YYYY-MM-DDTHH:MM:SS.nnnnnnnnn``; structs as lists in field order; a variant as
``[metadata hex, value hex]`` (its serialized form, as the two binary fields of the Parquet
variant group); lists as lists; maps as [key, value] pairs sorted by their JSON text; unknown
as null.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["date_text", "float_value", "main", "serve", "sorted_pairs", "time_text",
           "timestamp_text"]

_EPOCH = datetime.datetime(1970, 1, 1)
_NANOS = 1_000_000_000


def timestamp_text(seconds: int, nanos: int) -> str:
    """A timestamp (seconds since the epoch in UTC plus 0-999999999 ns) as ISO with 9 digits."""
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    return f"{moment.isoformat(timespec='seconds')}.{nanos:09d}"


def time_text(nanos_of_day: int) -> str:
    """A time of day (nanoseconds since midnight) as ``HH:MM:SS.nnnnnnnnn``."""
    seconds, nanos = divmod(nanos_of_day, _NANOS)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{nanos:09d}"


def date_text(days: int) -> str:
    """A date (days since the epoch) as ISO."""
    return (_EPOCH.date() + datetime.timedelta(days=days)).isoformat()


def float_value(value: float) -> float | str:
    """A float, with NaN and infinities (not JSON numbers) as their ``repr``."""
    return repr(value) if math.isnan(value) or math.isinf(value) else value


def sorted_pairs(pairs: list[list[Any]]) -> list[list[Any]]:
    """Map entries in a stable order."""
    return sorted(pairs, key=lambda p: json.dumps(p, sort_keys=True))


class _Converter:
    """Java values of generic records to canonical JSON (py4j calls per value: small tables)."""

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        self.utc = jvm.java.time.ZoneOffset.UTC
        # Iceberg's classes come from spark.jars: Spark's class loader, not the system one.
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()

        def cls(name: str) -> Any:
            return jvm.java.lang.Class.forName(name, False, loader)

        self.interfaces = [
            (cls("org.apache.iceberg.data.Record"), self._struct),
            (cls("org.apache.iceberg.variants.Variant"), self._variant),
            (cls("java.nio.ByteBuffer"), self._buffer),
            (cls("java.util.List"), self._list),
            (cls("java.util.Map"), self._map),
        ]
        self.by_class: dict[str, Callable[[Any], Any]] = {
            "java.time.LocalDate": lambda v: date_text(v.toEpochDay()),
            "java.time.LocalTime": lambda v: time_text(v.toNanoOfDay()),
            "java.time.LocalDateTime": lambda v: timestamp_text(v.toEpochSecond(self.utc),
                                                                v.getNano()),
            "java.time.OffsetDateTime": lambda v: timestamp_text(v.toEpochSecond(),
                                                                 v.getNano()),
            "java.util.UUID": lambda v: str(v.toString()).replace("-", ""),
        }

    def __call__(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return float_value(value)
        if isinstance(value, decimal.Decimal):  # py4j converts java.math.BigDecimal
            return str(value)
        if isinstance(value, (bytes, bytearray)):  # byte[] (fixed)
            return bytes(value).hex()
        name = str(value.getClass().getName())
        handler = self.by_class.get(name)
        if handler is None:
            handler = next((h for c, h in self.interfaces if c.isInstance(value)), None)
            if handler is None:
                raise TypeError(f"no canonical form for Java class {name}")
            self.by_class[name] = handler
        return handler(value)

    def _struct(self, record: Any) -> list[Any]:
        return [self(record.get(i)) for i in range(record.size())]

    def _buffer(self, buffer: Any) -> str:
        return bytes(self.jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buffer)).hex()

    def _serialized(self, part: Any) -> str:
        buffer = self.jvm.java.nio.ByteBuffer.allocate(part.sizeInBytes())
        buffer.order(self.jvm.java.nio.ByteOrder.LITTLE_ENDIAN)
        part.writeTo(buffer, 0)
        return bytes(buffer.array()).hex()

    def _variant(self, variant: Any) -> list[str]:
        return [self._serialized(variant.metadata()), self._serialized(variant.value())]

    def _list(self, items: Any) -> list[Any]:
        return [self(v) for v in items]

    def _map(self, entries: Any) -> list[list[Any]]:
        it = entries.entrySet().iterator()
        pairs = []
        while it.hasNext():
            entry = it.next()
            pairs.append([self(entry.getKey()), self(entry.getValue())])
        return sorted_pairs(pairs)


def _load(spark: Any, request: dict[str, Any]) -> Any:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    if request.get("metadata_file"):
        io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(conf)
        ops = jvm.org.apache.iceberg.StaticTableOperations(
            os.path.abspath(request["metadata_file"]), io)
        return jvm.org.apache.iceberg.BaseTable(ops, request["metadata_file"])
    return jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(
        os.path.abspath(request["location"]))


def _read(spark: Any, request: dict[str, Any]) -> dict[str, Any]:
    jvm = spark._jvm
    table = _load(spark, request)
    scan = table.newScan()
    if request.get("snapshot_id") is not None:
        scan = scan.useSnapshot(int(request["snapshot_id"]))
    elif request.get("ref") is not None:
        scan = scan.useRef(request["ref"])
    snapshot = scan.snapshot()
    schema = scan.schema()
    schema_id = int(schema.schemaId())
    names = [str(f.name()) for f in schema.columns()]
    columns = request.get("columns") or names
    if request.get("columns"):
        selection = jvm.java.util.ArrayList()
        for c in columns:
            selection.add(c)
        schema = schema.select(selection)
    convert = _Converter(jvm)
    rows: list[list[Any]] = []
    if snapshot is not None:
        builder = jvm.org.apache.iceberg.data.IcebergGenerics.read(table)
        records = builder.useSnapshot(snapshot.snapshotId()).project(schema).build()
        try:
            it = records.iterator()
            while it.hasNext():
                record = it.next()
                rows.append([convert(record.getField(c)) for c in columns])
        finally:
            records.close()
    return {"ok": True, "columns": list(columns), "rows": rows,
            "snapshot_id": None if snapshot is None else int(snapshot.snapshotId()),
            "schema_id": schema_id}


def serve(ref: Any, requests: list[dict[str, Any]],
          args: Sequence[str] = ()) -> list[dict[str, Any]]:
    """This script's batch (see batch.Serve) in one Spark session of ``ref``."""
    from java_read import reads  # type: ignore[import-not-found]

    results: list[dict[str, Any]] = reads(_read)(ref, requests, args)
    return results


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from java_read import run_batch  # type: ignore[import-not-found]

    return int(run_batch(_read, argv))


if __name__ == "__main__":
    sys.exit(main())
