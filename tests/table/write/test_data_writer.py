"""Writing data files from Arrow: validation, partitioning, sorting, Parquet, metrics, locations.

Metrics and locations are checked against Iceberg Java 1.10 in one JVM for the module
(tests/reference/java_metrics.py): ``ParquetUtil.fileMetrics`` on the very files icenb wrote
(column sizes, value and null counts, bounds where parquet statistics carry them) and Java's
own Parquet writer re-writing the rows it read from icenb's file (NaN counts and exact bounds).
Spec: "Manifests" (metrics), Appendix A (Parquet), Appendix D (bounds), "Partitioning", "Sorting".
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import struct
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.io.file_io import FileIO
from icenb.spec import values
from icenb.spec.manifest import DataFile
from icenb.spec.metrics_config import MetricsConfig
from icenb.spec.partition_spec import UNPARTITIONED, PartitionField, PartitionSpec
from icenb.spec.schema import Schema, schema_to_json
from icenb.spec.sort_order import UNSORTED, SortField, SortOrder, sort_order_to_json
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)
from icenb.table.write.conform import conform_to_schema
from icenb.table.write.data_files import write_data_files
from icenb.table.write.locations import (
    DefaultLocationProvider,
    ObjectStoreLocationProvider,
    location_provider,
)
from icenb.table.write.metrics import compute_metrics, truncate_binary_max, truncate_string_max
from icenb.table.write.partitioning import partition_and_sort
from tests.reference_fixtures import run_reference_batch

F = NestedField


def _write(tmp: Path, data: pa.Table, schema: Schema, *, spec: PartitionSpec = UNPARTITIONED,
           order: SortOrder = UNSORTED, properties: dict[str, str] | None = None,
           format_version: int = 2) -> list[DataFile]:
    props = properties or {}
    return write_data_files(FileIO(), data, schema, spec, order, props,
                            location_provider(str(tmp), props), format_version=format_version)


# ------------------------------------------------------------------------ Java comparison cases
# Field ids follow Java's fresh-id order (a struct's fields, then each child depth first), so a
# table Java creates from the schema keeps them (checked by test_java_kept_the_field_ids).

ALL_TYPES = Schema(
    F(1, "b", BooleanType()), F(2, "i", IntegerType(), required=True), F(3, "l", LongType()),
    F(4, "f", FloatType()), F(5, "d", DoubleType()), F(6, "dec9", DecimalType(9, 2)),
    F(7, "dec18", DecimalType(18, 4)), F(8, "dec38", DecimalType(38, 10)), F(9, "date", DateType()),
    F(10, "time", TimeType()), F(11, "ts", TimestampType()), F(12, "tstz", TimestamptzType()),
    F(13, "ts_ns", TimestampNanoType()), F(14, "tstz_ns", TimestamptzNanoType()),
    F(15, "s", StringType()), F(16, "u", UUIDType()), F(17, "fx", FixedType(3)),
    F(18, "bin", BinaryType()),
    F(19, "st", StructType(F(23, "x", DoubleType()), F(24, "inner", StructType(
        F(25, "y", StringType()))))),
    F(20, "li", ListType(26, IntegerType())),
    F(21, "ls", ListType(27, StructType(F(28, "z", LongType())))),
    F(22, "m", MapType(29, StringType(), 30, DoubleType())),
)

ASTRAL = "\U0001f600"  # outside the BMP: one code point, two UTF-16 units


def _all_types_data() -> pa.Table:
    u1, u2 = uuid.UUID(int=1), uuid.UUID("ffffffff-0000-0000-0000-000000000000")
    return pa.table({
        "b": pa.array([True, None, False, True], pa.bool_()),
        "i": pa.array([5, -3, 2**31 - 1, 0], pa.int32()),
        "l": pa.array([None, -(2**63), 7, 2**40], pa.int64()),
        "f": pa.array([1.5, float("nan"), -0.0, None], pa.float32()),
        "d": pa.array([float("inf"), -2.25, float("nan"), 0.0], pa.float64()),
        "dec9": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-99.99"),
                          decimal.Decimal("0.00")], pa.decimal128(9, 2)),
        "dec18": pa.array([decimal.Decimal("12345678901234.5678"), decimal.Decimal("-1.0000"),
                           None, None], pa.decimal128(18, 4)),
        "dec38": pa.array([decimal.Decimal("1" * 28 + "." + "1" * 10), None,
                           decimal.Decimal("-0.0000000001"), decimal.Decimal(0)],
                          pa.decimal128(38, 10)),
        "date": pa.array([dt.date(1970, 1, 1), dt.date(1969, 12, 31), None,
                          dt.date(9999, 12, 31)], pa.date32()),
        "time": pa.array([dt.time(0, 0), dt.time(23, 59, 59, 999999), None, dt.time(12)],
                         pa.time64("us")),
        "ts": pa.array([dt.datetime(2024, 2, 29, 1, 2, 3, 4), None,
                        dt.datetime(1900, 1, 1), dt.datetime(2024, 1, 1)], pa.timestamp("us")),
        "tstz": pa.array([0, 1_700_000_000_000_000, None, -1], pa.timestamp("us", tz="UTC")),
        "ts_ns": pa.array([1, None, 1_700_000_000_123_456_789, -5], pa.timestamp("ns")),
        "tstz_ns": pa.array([None, 7, 8, 9], pa.timestamp("ns", tz="UTC")),
        "s": pa.array(["héllo wörld, this is longer than sixteen", "", None,
                       ASTRAL * 20 + "z"], pa.string()),
        "u": pa.array([u1.bytes, u2.bytes, None, u1.bytes], pa.binary(16)),
        "fx": pa.array([b"abc", b"\xff\xff\xff", None, b"\x00\x00\x01"], pa.binary(3)),
        "bin": pa.array([b"\x00" * 3, b"\x01\xff" * 12, None, b"\xfe" + b"\xff" * 30],
                        pa.binary()),
        "st": pa.array([{"x": 1.0, "inner": {"y": "a"}}, None,
                        {"x": None, "inner": None}, {"x": float("nan"), "inner": {"y": "zz"}}],
                       pa.struct([("x", pa.float64()),
                                  ("inner", pa.struct([("y", pa.string())]))])),
        "li": pa.array([[1, 2], [], None, [None, 3]], pa.list_(pa.int32())),
        "ls": pa.array([[{"z": 1}], None, [{"z": None}, None], []],
                       pa.list_(pa.struct([("z", pa.int64())]))),
        "m": pa.array([[("a", 1.0)], None, [], [("b", float("nan")), ("c", None)]],
                      pa.map_(pa.string(), pa.float64())),
    })


MODES_SCHEMA = Schema(
    F(1, "id", LongType(), required=True), F(2, "name", StringType()), F(3, "blob", BinaryType()),
    F(4, "score", DoubleType()), F(5, "hidden", StringType()), F(6, "nested", StructType(
        F(7, "a", StringType()), F(8, "b", IntegerType()))),
)
MODES_PROPS = {
    "write.metadata.metrics.default": "counts",
    "write.metadata.metrics.column.name": "full",
    "write.metadata.metrics.column.blob": "truncate(2)",
    "write.metadata.metrics.column.hidden": "none",
    "write.metadata.metrics.column.nested.a": "truncate(1)",
}
MODES_ORDER = SortOrder(1, (SortField((1,), parse_transform("identity"), "desc", "nulls-last"),
                            SortField((8,), parse_transform("bucket[4]")),))


def _modes_data() -> pa.Table:
    return pa.table({
        "id": pa.array([3, 1, 2], pa.int64()),
        "name": ["a" * 40 + "z", "b" * 5000, None],
        "blob": pa.array([b"\x10\x20\x30", b"\x01", None], pa.binary()),
        "score": [float("nan"), 2.0, None],
        "hidden": ["x", "y", "z"],
        "nested": pa.array([{"a": "hello", "b": 1}, {"a": "\U0010ffff\U0010ffff", "b": 2}, None],
                           pa.struct([("a", pa.string()), ("b", pa.int32())])),
    })


WIDE = Schema(*(F(i, f"c{i}", IntegerType()) for i in range(1, 106)),
              F(106, "tail", StructType(F(107, "t1", IntegerType()))))
EDGES = Schema(
    F(1, "only_nan", DoubleType()), F(2, "neg_zero", DoubleType()), F(3, "pos_zero", FloatType()),
    F(4, "both_zero", DoubleType()), F(5, "all_null", DoubleType()),
    F(6, "max_cp", StringType()), F(7, "before_surrogates", StringType()),
    F(8, "ff_bytes", BinaryType()), F(9, "short", StringType()),
)


def _edges_data() -> pa.Table:
    nan = float("nan")
    return pa.table({
        "only_nan": pa.array([nan, nan, None], pa.float64()),
        "neg_zero": pa.array([-0.0, -0.0, None], pa.float64()),
        "pos_zero": pa.array([0.0, 0.0, 0.0], pa.float32()),
        "both_zero": pa.array([0.0, -0.0, nan], pa.float64()),
        "all_null": pa.array([None, None, None], pa.float64()),
        "max_cp": ["\U0010ffff" * 17, "a", None],
        "before_surrogates": ["a" * 15 + "\ud7ff" + "tail", "a", "B\ud7ff"],
        "ff_bytes": pa.array([b"\xff" * 17, b"\x00", None], pa.binary()),
        "short": ["b", "a", "c"],
    })


CASES: dict[str, dict[str, Any]] = {
    "all_types": {"schema": ALL_TYPES, "data": _all_types_data, "props": {}, "version": 3,
                  "order": UNSORTED},
    "modes": {"schema": MODES_SCHEMA, "data": _modes_data, "props": MODES_PROPS, "version": 2,
              "order": MODES_ORDER},
    "wide": {"schema": WIDE, "version": 2, "order": UNSORTED, "props": {},
             "data": lambda: pa.table({**{f"c{i}": pa.array([i, -i], pa.int32())
                                          for i in range(1, 106)},
                                       "tail": pa.array([{"t1": 1}, {"t1": 2}],
                                                        pa.struct([("t1", pa.int32())]))})},
    "wide_limit": {"schema": WIDE, "version": 2, "order": UNSORTED,
                   "props": {"write.metadata.metrics.max-inferred-column-defaults": "3"},
                   "data": lambda: CASES["wide"]["data"]()},
    "edges": {"schema": EDGES, "data": _edges_data, "props": {}, "version": 2,
              "order": UNSORTED},
    "edges_full": {"schema": EDGES, "data": _edges_data, "version": 2, "order": UNSORTED,
                   "props": {"write.metadata.metrics.default": "full"}},
}

LOCATION_CASES = [
    ("s3://bucket/db/tbl", {}),
    ("s3://bucket/db/tbl/", {"write.data.path": "s3://other/data/"}),
    ("s3://bucket/db/tbl", {"write.object-storage.enabled": "true"}),
    ("s3://bucket/db/tbl", {"write.object-storage.enabled": "true",
                            "write.object-storage.partitioned-paths": "false"}),
    ("s3://bucket/db/tbl", {"write.object-storage.enabled": "true",
                            "write.data.path": "s3://entropy/store"}),
    ("/tmp/wh/ns/t", {"write.object-storage.enabled": "true",
                      "write.object-storage.path": "/tmp/objects"}),
    ("/tmp/wh/ns/t", {"write.object-storage.path": "/tmp/objects"}),
    ("/tmp/wh/ns/t", {"write.folder-storage.path": "/tmp/folders"}),
    ("/tmp/wh/ns/t", {"write.object-storage.enabled": "true",
                      "write.folder-storage.path": "/tmp/folders"}),
    ("s3://bucket/tbl", {"write.object-storage.enabled": "true",
                         "write.data.path": "s3://x/y"}),
]
LOCATION_FILES = [("00000-0-abc-00001.parquet", None),
                  ("00003-7-d7d1c0de-00012.parquet", "ts_day=2024-01-01/b=a+b%2Fc"),
                  ("x.parquet", "k=%E2%82%AC")]


def _java_names(props: dict[str, str]) -> list[str]:
    """What Java's ``newDataLocation(spec, partition, file)`` passes to ``newDataLocation``."""
    flat = props.get("write.object-storage.enabled") == "true" and \
        props.get("write.object-storage.partitioned-paths") == "false"
    return [f if p is None or flat else f"{p}/{f}" for f, p in LOCATION_FILES]


def _column_names(schema: Schema) -> list[str]:
    return [n for i in sorted(schema.field_ids()) if (n := schema.column_name(i)) is not None]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, DataFile]:
    out = {}
    for name, case in CASES.items():
        files = _write(tmp_path_factory.mktemp(name), case["data"](), case["schema"],
                       order=case["order"], properties=case["props"],
                       format_version=case["version"])
        assert len(files) == 1
        out[name] = files[0]
    return out


@pytest.fixture(scope="module")
def java(written: dict[str, DataFile]) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    for name, case in CASES.items():
        requests.append({
            "op": "metrics", "path": written[name].file_path,
            "schema": schema_to_json(case["schema"]),
            "sort_order": sort_order_to_json(case["order"], case["version"]),
            "properties": case["props"], "format_version": case["version"],
            "columns": _column_names(case["schema"]), "rewrite": True,
        })
    for table_location, props in LOCATION_CASES:
        requests.append({"op": "locations", "table_location": table_location,
                         "properties": props, "names": _java_names(props)})
    results = run_reference_batch("java_metrics.py", requests)
    for r in results[:len(CASES)]:
        assert r["ok"], r
    return {"metrics": dict(zip(CASES, results, strict=False)),
            "locations": results[len(CASES):]}


def _ours(f: DataFile) -> dict[str, dict[str, Any]]:
    def keyed(m: dict[int, Any] | None, hexed: bool = False) -> dict[str, Any]:
        return {str(k): (v.hex() if hexed else v) for k, v in (m or {}).items()}

    return {"column_sizes": keyed(f.column_sizes), "value_counts": keyed(f.value_counts),
            "null_value_counts": keyed(f.null_value_counts),
            "nan_value_counts": keyed(f.nan_value_counts),
            "lower_bounds": keyed(f.lower_bounds, True),
            "upper_bounds": keyed(f.upper_bounds, True)}


def _float_ids(schema: Schema) -> set[str]:
    return {str(i) for i in schema.field_ids()
            if isinstance(schema.find_type(i), (FloatType, DoubleType))}


def _float_ids_in_structs(schema: Schema) -> set[str]:
    return {i for i in _float_ids(schema) if schema.parent_id(int(i)) is not None}


@pytest.mark.parametrize("case", list(CASES))
def test_java_kept_the_field_ids(java: dict[str, Any], case: str) -> None:
    assert java["metrics"][case]["schema"] == schema_to_json(CASES[case]["schema"])


@pytest.mark.parametrize("case", list(CASES))
def test_java_reads_every_row(java: dict[str, Any], written: dict[str, DataFile],
                              case: str) -> None:
    assert java["metrics"][case]["rows"] == written[case].record_count


@pytest.mark.parametrize("case", list(CASES))
def test_metrics_modes_match_java(java: dict[str, Any], case: str) -> None:
    c = CASES[case]
    config = MetricsConfig.from_properties(c["props"], c["schema"], c["order"])
    ours = {name: str(config.column_mode(name)) for name in _column_names(c["schema"])}
    assert ours == java["metrics"][case]["modes"]


@pytest.mark.parametrize("case", list(CASES))
def test_footer_metrics_match_java_file_metrics(java: dict[str, Any],
                                                written: dict[str, DataFile], case: str) -> None:
    """Java measures the same file: column sizes and counts are equal; NaN counts Java cannot
    see in a footer; float bounds differ only where parquet-cpp widened a zero to -0.0/+0.0;
    string bounds only where pyarrow left a value over 4 KiB out of the statistics."""
    ours, theirs = _ours(written[case]), java["metrics"][case]["file_metrics"]
    assert theirs["record_count"] == written[case].record_count
    for key in ("column_sizes", "value_counts", "null_value_counts"):
        assert ours[key] == theirs[key], key
    assert theirs["nan_value_counts"] == {}
    schema = CASES[case]["schema"]
    skip = _float_ids(schema) | {str(i) for i in schema.field_ids() if case == "modes"
                                 and schema.column_name(i) == "name"}
    for key in ("lower_bounds", "upper_bounds"):
        assert {k: v for k, v in ours[key].items() if k not in skip} == \
            {k: v for k, v in theirs[key].items() if k not in skip}, key


@pytest.mark.parametrize("case", list(CASES))
def test_metrics_match_java_writer(java: dict[str, Any], written: dict[str, DataFile],
                                   case: str) -> None:
    """Java's own Parquet writer, given the same rows: equal NaN counts and bounds, and equal
    value/null counts except for float/double fields of a struct that is null in some row
    (Java's float tracker skips those rows; its footer metrics and icenb count them as null)."""
    ours, theirs = _ours(written[case]), java["metrics"][case]["writer_metrics"]
    for key in ("nan_value_counts", "lower_bounds", "upper_bounds"):
        assert ours[key] == theirs[key], key
    skip = _float_ids_in_structs(CASES[case]["schema"])
    for key in ("value_counts", "null_value_counts"):
        assert {k: v for k, v in ours[key].items() if k not in skip} == \
            {k: v for k, v in theirs[key].items() if k not in skip}, key


def test_the_comparison_covers_what_it_claims(written: dict[str, DataFile]) -> None:
    all_types = written["all_types"]
    # list / map children: column sizes only (as Java 1.10), struct children: everything
    for fid in (26, 28, 29, 30):
        assert fid in (all_types.column_sizes or {})
        assert fid not in (all_types.value_counts or {})
    assert (all_types.value_counts or {})[25] == 4
    assert (all_types.null_value_counts or {})[25] == 2  # null struct and null inner struct
    assert (all_types.nan_value_counts or {}) == {4: 1, 5: 1, 23: 1}
    assert values.from_bound_bytes(FloatType(), (all_types.lower_bounds or {})[4]) == -0.0
    assert math.copysign(1, values.from_bound_bytes(FloatType(),
                                                    (all_types.lower_bounds or {})[4])) == -1
    # the astral-plane string is cut to 16 code points and its upper bound incremented
    s_upper = (all_types.upper_bounds or {})[15].decode()
    assert s_upper == ASTRAL * 15 + "\U0001f601"
    edges = written["edges"]
    assert 1 not in (edges.lower_bounds or {}) and (edges.nan_value_counts or {})[1] == 2
    assert 6 in (edges.lower_bounds or {}) and 6 not in (edges.upper_bounds or {})
    assert 8 in (edges.lower_bounds or {}) and 8 not in (edges.upper_bounds or {})
    assert (edges.upper_bounds or {})[7].decode() == "a" * 15 + "\ue000"
    modes = written["modes"]
    assert 5 not in (modes.value_counts or {}) and 5 not in (modes.column_sizes or {})
    assert len((modes.upper_bounds or {})[2]) == 5000  # full: the 5000-byte value untruncated
    assert (modes.lower_bounds or {})[3] == b"\x01" and (modes.upper_bounds or {})[3] == b"\x10\x21"


def test_locations_match_java(java: dict[str, Any]) -> None:
    for (table_location, props), result in zip(LOCATION_CASES, java["locations"], strict=True):
        if not result["ok"]:  # Java refuses deprecated properties
            with pytest.raises(ValidationError, match="deprecated"):
                location_provider(table_location, props)
            continue
        provider = location_provider(table_location, props)
        ours = [provider.new_data_location(f, p) for f, p in LOCATION_FILES]
        assert ours == result["locations"], (table_location, props)


# ------------------------------------------------------------------------ locations and names


def test_location_provider_kinds() -> None:
    assert location_provider("/t", {}) == DefaultLocationProvider("/t/data")
    provider = location_provider("s3://b/db/t", {"write.object-storage.enabled": "true"})
    assert isinstance(provider, ObjectStoreLocationProvider) and provider.context is None
    with pytest.raises(UnsupportedFeature):
        location_provider("/t", {"write.location-provider.impl": "com.example.Provider"})
    with pytest.raises(ValidationError):
        location_provider("/t", {"write.object-storage.enabled": "yes"})


def test_file_names_partition_paths_and_counters(tmp_path: Path) -> None:
    schema = Schema(F(1, "id", LongType()), F(2, "s", StringType()))
    spec = PartitionSpec(1, (PartitionField((2,), 1000, parse_transform("identity"), "s"),))
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a/b c", None, "a/b c"]})
    files = write_data_files(FileIO(), data, schema, spec, UNSORTED, {},
                             location_provider(str(tmp_path), {}), format_version=2,
                             partition_id=3, task_id=9, operation_id="op")
    names = [os.path.relpath(f.file_path, tmp_path) for f in files]
    assert names == ["data/s=a%2Fb+c/00003-9-op-00001.parquet",
                     "data/s=null/00003-9-op-00002.parquet"]
    assert [f.partition for f in files] == [("a/b c",), (None,)]
    assert [f.record_count for f in files] == [2, 1]
    assert all(f.spec_id == 1 and f.sort_order_id == 0 for f in files)
    assert all(os.path.getsize(f.file_path) == f.file_size_in_bytes for f in files)


# ------------------------------------------------------------------------ Parquet files


def test_parquet_file_layout(tmp_path: Path) -> None:
    [f] = _write(tmp_path, _all_types_data(), ALL_TYPES, format_version=3)
    pf = pq.ParquetFile(f.file_path)
    text = str(pf.metadata.schema)
    assert "field_id=16 u (UUID)" in text
    assert "int32 field_id=6 dec9 (Decimal(precision=9, scale=2))" in text
    assert "int64 field_id=7 dec18" in text
    assert "fixed_len_byte_array(16) field_id=8 dec38" in text
    assert "field_id=20 li (List)" in text and "field_id=26 element" in text
    assert "field_id=22 m (Map)" in text
    assert "isAdjustedToUTC=false, timeUnit=nanoseconds" in text
    assert pf.metadata.row_group(0).column(0).compression == "ZSTD"
    assert f.split_offsets == (4,)
    back = pq.read_table(f.file_path)
    assert back.column("s").to_pylist() == _all_types_data().column("s").to_pylist()
    assert back.num_rows == 4


def test_compression_codec_property(tmp_path: Path) -> None:
    schema = Schema(F(1, "x", LongType()))
    data = pa.table({"x": pa.array(range(10), pa.int64())})
    [f] = _write(tmp_path, data, schema,
                 properties={"write.parquet.compression-codec": "gzip"})
    assert pq.ParquetFile(f.file_path).metadata.row_group(0).column(0).compression == "GZIP"
    with pytest.raises(UnsupportedFeature):
        _write(tmp_path, data, schema, properties={"write.parquet.compression-codec": "lzo"})


def test_files_roll_at_the_target_size(tmp_path: Path) -> None:
    schema = Schema(F(1, "x", LongType()), F(2, "s", StringType()))
    n = 20_000
    data = pa.table({"x": pa.array(range(n), pa.int64()),
                     "s": [f"row {i} {uuid.UUID(int=i * 7919)}" for i in range(n)]})
    target = 64 * 1024
    files = _write(tmp_path, data, schema,
                   properties={"write.target-file-size-bytes": str(target),
                               "write.parquet.compression-codec": "uncompressed"})
    assert len(files) > 3
    assert sum(f.record_count for f in files) == n
    assert all(f.file_size_in_bytes >= target for f in files[:-1])
    assert [int(f.file_path[-13:-8]) for f in files] == list(range(1, len(files) + 1))
    back = pa.concat_tables(pq.read_table(f.file_path) for f in files)
    assert back.column("x").to_pylist() == list(range(n))
    for f in files:  # metrics describe each file, not the whole input
        first = pq.read_table(f.file_path).column("x")
        assert values.from_bound_bytes(LongType(), (f.lower_bounds or {})[1]) == first[0].as_py()
        assert (f.value_counts or {})[1] == f.record_count


def test_empty_input_writes_nothing(tmp_path: Path) -> None:
    schema = Schema(F(1, "x", LongType()))
    assert _write(tmp_path, pa.table({"x": pa.array([], pa.int64())}), schema) == []
    assert not (tmp_path / "data").exists()


def test_unknown_columns_are_not_stored(tmp_path: Path) -> None:
    schema = Schema(F(1, "x", LongType()), F(2, "nothing", UnknownType()))
    [f] = _write(tmp_path, pa.table({"x": pa.array([1], pa.int64())}), schema,
                 format_version=3)
    assert pq.read_table(f.file_path).column_names == ["x"]
    assert 2 not in (f.value_counts or {})


def test_variant_values_are_refused_and_nulls_written(tmp_path: Path) -> None:
    """Only null variants can be written (tests/table/write/test_variant_nulls.py)."""
    schema = Schema(F(1, "v", VariantType()))
    value = pa.array([{"metadata": b"\x01\x00\x00", "value": b"\x00"}],
                     pa.struct([("metadata", pa.binary()), ("value", pa.binary())]))
    with pytest.raises(UnsupportedFeature):
        _write(tmp_path, pa.table({"v": value}), schema, format_version=3)
    files = _write(tmp_path, pa.table({"v": pa.nulls(2)}), schema, format_version=3)
    assert pq.read_table(files[0].file_path).column("v").null_count == 2


def test_compute_metrics_without_footer_has_no_sizes() -> None:
    schema = Schema(F(1, "x", DoubleType()))
    data = conform_to_schema(pa.table({"x": [1.0, float("nan")]}), schema, format_version=2)
    m = compute_metrics(data, schema, MetricsConfig())
    assert m.column_sizes == {} and m.nan_value_counts == {1: 1}
    assert m.lower_bounds == {1: struct.pack("<d", 1.0)}


def test_truncation_helpers() -> None:
    assert truncate_string_max("abc", 16) == "abc"
    assert truncate_string_max("ab" + "\U0010ffff" * 3, 3) == "ac"
    assert truncate_string_max("\U0010ffff" * 3, 2) is None
    assert truncate_binary_max(b"\x01\xff\xff", 2) == b"\x02"
    assert truncate_binary_max(b"\xff\xff\x00", 2) is None


# ------------------------------------------------------------------------ validation


SIMPLE = Schema(F(1, "id", LongType(), required=True), F(2, "name", StringType()),
                F(3, "pt", StructType(F(4, "x", DoubleType(), required=True),
                                      F(5, "tag", StringType()))))


def test_conform_widens_and_fills(tmp_path: Path) -> None:
    data = pa.table({"id": pa.array([1, 2], pa.int8()),
                     "pt": pa.array([{"x": 1.5}, None], pa.struct([("x", pa.float32())]))})
    out = conform_to_schema(data, SIMPLE, format_version=2)
    assert out.schema.field("id").type == pa.int64()
    assert out.schema.field("id").metadata == {b"PARQUET:field_id": b"1"}
    assert out.schema.field("pt").type.field("x").metadata == {b"PARQUET:field_id": b"4"}
    assert out.column("name").null_count == 2
    assert out.column("pt").to_pylist() == [{"x": 1.5, "tag": None}, None]


def test_write_default_fills_missing_columns_in_v3() -> None:
    schema = Schema(F(1, "id", LongType()),
                    F(2, "kind", StringType(), required=True, initial_default="a",
                      write_default="b"))
    data = pa.table({"id": pa.array([1], pa.int64())})
    assert conform_to_schema(data, schema, format_version=3).column("kind").to_pylist() == ["b"]
    with pytest.raises(ValidationError, match="required column is missing") as e:
        conform_to_schema(data, schema, format_version=2)
    assert e.value.field == "kind"


@pytest.mark.parametrize(("data", "field", "message"), [
    (pa.table({"name": ["a"]}), "id", "required column is missing"),
    (pa.table({"id": pa.array([1, None], pa.int64())}), "id", "at row 1"),
    (pa.table({"id": pa.array([1, 2], pa.int64()),
               "pt": pa.array([None, {"x": None}], pa.struct([("x", pa.float64())]))}),
     "pt.x", "at row 1"),
    (pa.table({"id": pa.array([1], pa.int64()), "extra": [1]}), "extra", "not in the table"),
    (pa.table({"id": pa.array([1], pa.int64()),
               "pt": pa.array([{"x": 1.0, "y": 2}],
                              pa.struct([("x", pa.float64()), ("y", pa.int64())]))}),
     "pt.y", "not in the table"),
    (pa.table({"ID": pa.array([1], pa.int64())}), "ID", "not in the table"),
    (pa.table({"id": pa.array(["1"])}), "id", "string to Iceberg type long"),
    (pa.table({"id": pa.array([1], pa.uint64())}), "id", "uint64"),
    (pa.table({"id": pa.array([1.0])}), "id", "double to Iceberg type long"),
    (pa.table({"id": pa.array([1], pa.int64()), "name": pa.array([b"x"])}), "name", "binary"),
    (pa.table({"id": pa.array([1], pa.int64()),
               "pt": pa.array([{"x": 1}], pa.struct([("x", pa.int64())]))}), "pt.x", "int64"),
])
def test_conform_rejects(data: pa.Table, field: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as e:
        conform_to_schema(data, SIMPLE, format_version=2)
    assert e.value.field == field


@pytest.mark.parametrize(("arrow", "iceberg", "ok"), [
    (pa.array([1], pa.decimal128(5, 2)), DecimalType(7, 2), True),
    (pa.array([1], pa.decimal128(5, 2)), DecimalType(6, 3), True),
    (pa.array([1], pa.decimal128(5, 2)), DecimalType(4, 2), False),
    (pa.array([1], pa.decimal128(5, 2)), DecimalType(9, 1), False),
    (pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("ms")), TimestampType(), True),
    (pa.array([1_000], pa.timestamp("ns")), TimestampType(), True),
    (pa.array([1_001], pa.timestamp("ns")), TimestampType(), False),  # would lose 1 ns
    (pa.array([1], pa.timestamp("us", tz="Europe/Paris")), TimestamptzType(), True),
    (pa.array([1], pa.timestamp("us")), TimestamptzType(), False),
    (pa.array([1], pa.timestamp("us", tz="UTC")), TimestampType(), False),
    (pa.array([1], pa.timestamp("us")), TimestampNanoType(), True),
    (pa.array([1.5], pa.float32()), DoubleType(), True),
    (pa.array([1.5], pa.float64()), FloatType(), False),
    (pa.array([1], pa.int32()), LongType(), True),
    (pa.array([1], pa.uint32()), IntegerType(), False),
    (pa.array(["a"], pa.large_string()), StringType(), True),
    (pa.array(["a"]).dictionary_encode(), StringType(), True),
    (pa.array([b"abc"], pa.binary(3)), FixedType(3), True),
    (pa.array([b"abc"], pa.binary()), FixedType(3), False),
    (pa.array([b"0123456789abcdef"], pa.binary(16)), UUIDType(), True),
    (pa.array([None], pa.null()), DateType(), True),
    (pa.array([dt.date(2024, 1, 1)], pa.date64()), DateType(), True),
])
def test_conform_casts(arrow: pa.Array, iceberg: Any, ok: bool) -> None:
    schema = Schema(F(1, "c", iceberg))
    data = pa.table({"c": arrow})
    if ok:
        out = conform_to_schema(data, schema, format_version=3)
        assert out.column("c").type == out.schema.field("c").type
        assert out.column("c").null_count == arrow.null_count
    else:
        with pytest.raises(ValidationError) as e:
            conform_to_schema(data, schema, format_version=3)
        assert e.value.field == "c" and str(iceberg) in str(e.value)


def test_nested_required_elements_and_map_keys() -> None:
    schema = Schema(F(1, "l", ListType(2, IntegerType(), element_required=True)),
                    F(3, "m", MapType(4, StringType(), 5, LongType())))
    bad_list = pa.table({"l": pa.array([[1], [2, None]], pa.list_(pa.int32()))})
    with pytest.raises(ValidationError, match="at row 1") as e:
        conform_to_schema(bad_list, schema, format_version=2)
    assert e.value.field == "l.element"
    ok = pa.table({"l": pa.array([None, [3]], pa.list_(pa.int32())),
                   "m": pa.array([[("a", 1)], None], pa.map_(pa.string(), pa.int64()))})
    out = conform_to_schema(ok.slice(1), schema, format_version=2)
    assert out.column("l").to_pylist() == [[3]] and out.column("m").to_pylist() == [None]


def test_nothing_is_written_when_validation_fails(tmp_path: Path) -> None:
    data = pa.table({"id": pa.array([1, None], pa.int64())})
    with pytest.raises(ValidationError):
        _write(tmp_path, data, SIMPLE)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------ partition and sort


def test_partition_tuples_use_the_transforms() -> None:
    schema = Schema(F(1, "id", LongType()), F(2, "ts", TimestampType()), F(3, "u", UUIDType()))
    spec = PartitionSpec(0, (
        PartitionField((2,), 1000, parse_transform("day"), "ts_day"),
        PartitionField((1,), 1001, parse_transform("bucket[4]"), "id_bucket"),
        PartitionField((3,), 1002, parse_transform("identity"), "u"),
    ))
    u = uuid.UUID(int=42)
    rows = [(i, dt.datetime(2024, 1, 1 + i % 2, 5), u) for i in range(6)]
    data = conform_to_schema(pa.table({
        "id": pa.array([r[0] for r in rows], pa.int64()),
        "ts": pa.array([r[1] for r in rows], pa.timestamp("us")),
        "u": pa.array([r[2].bytes for r in rows], pa.binary(16))}), schema, format_version=2)
    parts = partition_and_sort(data, schema, spec, UNSORTED)
    assert sum(p.num_rows for _, p in parts) == 6
    for key, part in parts:
        for row in part.to_pylist():
            micros = values.coerce(TimestampType(), row["ts"])
            expected = (parse_transform("day").apply(TimestampType(), micros),
                        parse_transform("bucket[4]").apply(LongType(), row["id"]), u)
            assert key == expected


def test_sort_directions_null_order_and_float_total_order() -> None:
    schema = Schema(F(1, "g", IntegerType()), F(2, "v", DoubleType()))
    order = SortOrder(1, (
        SortField((1,), parse_transform("identity"), "asc", "nulls-last"),
        SortField((2,), parse_transform("identity"), "desc", "nulls-first"),
    ))
    nan = float("nan")
    data = conform_to_schema(pa.table({
        "g": pa.array([None, 1, 1, 1, 1, 1, 0], pa.int32()),
        "v": [1.0, -0.0, nan, None, 0.0, float("-inf"), 5.0]}), schema, format_version=2)
    [(key, out)] = partition_and_sort(data, schema, UNPARTITIONED, order)
    assert key == ()
    got = [(r["g"], r["v"]) for r in out.to_pylist()]
    assert got[0] == (0, 5.0) and got[-1] == (None, 1.0)
    vs = [v for g, v in got[1:6]]
    assert vs[0] is None and math.isnan(vs[1])
    assert vs[2:] == [0.0, -0.0, float("-inf")]
    assert math.copysign(1, vs[2]) == 1 and math.copysign(1, vs[3]) == -1


def test_sorted_files_record_the_order_id(tmp_path: Path) -> None:
    schema = Schema(F(1, "x", LongType()))
    order = SortOrder(3, (SortField((1,), parse_transform("identity"), "desc"),))
    [f] = _write(tmp_path, pa.table({"x": pa.array([2, 3, 1], pa.int64())}), schema,
                 order=order)
    assert f.sort_order_id == 3
    assert pq.read_table(f.file_path).column("x").to_pylist() == [3, 2, 1]
