"""Write a varied set of Iceberg tables with the Java reference implementation (Iceberg 1.10).

Usage (inside .venv-ref):  python tests/reference/generate_tables.py OUTPUT_DIR

OUTPUT_DIR/warehouse/db/<table>/ holds each table (a HadoopCatalog warehouse), and
OUTPUT_DIR/tables.json describes them: scenario, features and every metadata.json version file
(path relative to OUTPUT_DIR, format version, gzip or not), plus the features that could not be
produced with the Java error.  Every metadata.json version file is a test fixture.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from java_metadata import JavaMetadata
from refspark import spark_session

NS = "db"

ALL_SPARK_TYPES = """
    c_bool boolean COMMENT 'a boolean',
    c_int int,
    c_long bigint NOT NULL,
    c_float float,
    c_double double,
    c_dec9 decimal(9,2),
    c_dec38 decimal(38,10),
    c_date date,
    c_ts timestamp,
    c_ts_ntz timestamp_ntz,
    c_string string COMMENT 'ünïcødé doc ✓',
    c_binary binary,
    c_struct struct<a: int, b: string NOT NULL, nested: struct<x: double, y: array<bigint>>>,
    c_array array<string>,
    c_array_struct array<struct<k: int, v: string>>,
    c_map map<string, int>,
    c_map_complex map<int, struct<v: string, w: array<date>>>
"""

ALL_SPARK_VALUES = """
    (true, 1, 10, 1.5, 2.25, 1234567.89, 1234567890123456789012345678.0123456789,
     DATE'2024-02-29', TIMESTAMP'2024-02-29 12:34:56.123456',
     TIMESTAMP_NTZ'2024-02-29 12:34:56.123456', 'ünï', X'00FF10',
     named_struct('a', 1, 'b', 'x', 'nested', named_struct('x', 0.5, 'y', array(1L, 2L))),
     array('p', NULL, 'q'), array(named_struct('k', 1, 'v', 'one')), map('k1', 1, 'k2', NULL),
     map(7, named_struct('v', 'seven', 'w', array(DATE'1970-01-01')))),
    (NULL, NULL, -9223372036854775808, float('NaN'), double('-Infinity'), -0.01,
     -99999999999999999999999999.9999999999, DATE'1969-12-31',
     TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP_NTZ'1900-01-01 00:00:00', '', X'',
     NULL, array(), NULL, map(), NULL)
"""


class Generator:
    """Runs the scenarios against one SparkSession and records what was written."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = os.path.abspath(out_dir)
        self.warehouse = os.path.join(self.out_dir, "warehouse")
        self.scratch = os.path.join(self.out_dir, "_scratch")
        os.makedirs(self.warehouse, exist_ok=True)
        os.makedirs(self.scratch, exist_ok=True)
        self.hive_warehouse = os.path.join(self.out_dir, "hive-warehouse")
        self.spark = spark_session(self.warehouse, self.scratch, self.hive_warehouse)
        self.jvm = self.spark._jvm
        self.gateway = self.spark.sparkContext._gateway
        hadoop_conf = self.spark.sparkContext._jsc.hadoopConfiguration()
        self.catalog = self.jvm.org.apache.iceberg.hadoop.HadoopCatalog(hadoop_conf, self.warehouse)
        self.tables: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []
        self.impossible: list[dict[str, str]] = []
        self.timings: dict[str, float] = {}
        self.sql(f"CREATE NAMESPACE IF NOT EXISTS ref.{NS}")

    # ---------------------------------------------------------------- helpers
    def sql(self, query: str) -> list[Any]:
        """Run one Spark SQL statement to completion."""
        return list(self.spark.sql(query).collect())

    def insert_named(self, table: str, values: dict[str, str]) -> None:
        """INSERT one row giving some columns by name; the others are NULL."""
        exprs = []
        for f in self.spark.table(table).schema.fields:
            exprs.append(values.get(f.name, f"CAST(NULL AS {f.dataType.simpleString()})"))
        self.sql(f"INSERT INTO {table} SELECT {', '.join(exprs)}")

    def ident(self, name: str) -> Any:
        return self.jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"{NS}.{name}")

    def load(self, name: str) -> Any:
        return self.catalog.loadTable(self.ident(name))

    def snapshot_ids(self, name: str) -> list[int]:
        rows = self.sql(f"SELECT snapshot_id FROM ref.{NS}.{name}.snapshots ORDER BY committed_at")
        return [int(r[0]) for r in rows]

    def current_snapshot_id(self, name: str) -> int:
        snap = self.load(name).currentSnapshot()
        return int(snap.snapshotId())

    def attempt(self, table: str, feature: str, fn: Callable[[], Any]) -> bool:
        """Try an optional feature; record the Java error when the reference cannot do it."""
        try:
            fn()
            return True
        except Exception as exc:
            message = str(exc)
            causes = re.findall(r"Caused by: ([^\n]+)", message)
            java = causes[-1] if causes else None
            if java is None:
                found = re.search(r"((?:java|org)\.[\w.$]+(?:Exception|Error)[^\n]*)", message)
                java = found.group(1) if found else None
            self.impossible.append(
                {"table": table, "feature": feature, "error": (java or message).strip()[:500]}
            )
            print(f"  ! {table}: {feature} failed: {self.impossible[-1]['error']}", file=sys.stderr)
            return False

    def types(self) -> Any:
        return self.jvm.org.apache.iceberg.types.Types

    def lit(self, value: Any, to_type: Any | None = None) -> Any:
        literal = self.jvm.org.apache.iceberg.expressions.Literal.of(value)
        return literal.to(to_type) if to_type is not None else literal

    def field(
        self,
        fid: int,
        name: str,
        ftype: Any,
        required: bool = False,
        doc: str | None = None,
        initial: Any = None,
        write: Any = None,
    ) -> Any:
        nf = self.types().NestedField
        builder = nf.required(name) if required else nf.optional(name)
        builder = builder.withId(fid).ofType(ftype)
        if doc is not None:
            builder = builder.withDoc(doc)
        if initial is not None:
            builder = builder.withInitialDefault(initial)
        if write is not None:
            builder = builder.withWriteDefault(write)
        return builder.build()

    def schema(self, fields: list[Any], identifier_ids: list[int] | None = None) -> Any:
        jvm = self.jvm
        columns = jvm.java.util.ArrayList()
        for f in fields:
            columns.add(f)
        if identifier_ids:
            ids = jvm.java.util.HashSet()
            for i in identifier_ids:
                ids.add(i)
            return jvm.org.apache.iceberg.Schema(columns, ids)
        return jvm.org.apache.iceberg.Schema(columns)

    def java_create(self, name: str, schema: Any, spec: Any | None, props: dict[str, str]) -> Any:
        jprops = self.jvm.java.util.HashMap()
        for k, v in props.items():
            jprops.put(k, v)
        if spec is None:
            spec = self.jvm.org.apache.iceberg.PartitionSpec.unpartitioned()
        return self.catalog.createTable(self.ident(name), schema, spec, jprops)

    def java_write(
        self, table: Any, rows: list[dict[str, Any]], file_format: str = "PARQUET"
    ) -> Any:
        """Write rows (Java values) to one data file per partition; return the files."""
        jvm = self.jvm
        schema, spec = table.schema(), table.spec()
        factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(schema, spec)
        fmt = getattr(jvm.org.apache.iceberg.FileFormat, file_format)
        by_partition: dict[str, tuple[Any, list[Any]]] = {}
        for row in rows:
            record = jvm.org.apache.iceberg.data.GenericRecord.create(schema)
            for key, value in row.items():
                record.setField(key, value)
            key_obj = None
            path_key = ""
            if spec.isPartitioned():
                key_obj = jvm.org.apache.iceberg.PartitionKey(spec, schema)
                # PartitionKey reads internal values (micros, days): wrap the generic record.
                wrapper = jvm.org.apache.iceberg.data.InternalRecordWrapper(schema.asStruct())
                key_obj.partition(wrapper.wrap(record))
                path_key = key_obj.toPath()
            by_partition.setdefault(path_key, (key_obj, []))[1].append(record)
        files = []
        for n, (key_obj, records) in enumerate(by_partition.values()):
            filename = f"java-{int(time.time() * 1000)}-{n}.{file_format.lower()}"
            if key_obj is None:
                location = table.locationProvider().newDataLocation(filename)
            else:
                location = table.locationProvider().newDataLocation(spec, key_obj, filename)
            out = jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(
                table.io().newOutputFile(location)
            )
            writer = factory.newDataWriter(out, fmt, key_obj)
            for record in records:
                writer.write(record)
            writer.close()
            files.append(writer.toDataFile())
        return files

    def java_append(
        self, table: Any, rows: list[dict[str, Any]], file_format: str = "PARQUET"
    ) -> None:
        append = table.newAppend()
        for data_file in self.java_write(table, rows, file_format):
            append.appendFile(data_file)
        append.commit()

    # ------------------------------------------------------------- scenarios
    def scenarios(self) -> list[tuple[str, str, Callable[[str], list[str]]]]:
        """(table name, description, function returning the features it exercised)."""
        return [
            ("v1_all_types", "format v1, every type Spark SQL can declare", self.all_types(1)),
            ("v2_all_types", "format v2, every type Spark SQL can declare", self.all_types(2)),
            ("v3_all_types", "format v3, every type Spark SQL can declare", self.all_types(3)),
            (
                "v1_partition_evolution",
                "v1 partition evolution (void transforms)",
                self.partition_evolution(1),
            ),
            (
                "v2_partition_evolution",
                "v2 partition evolution, every transform",
                self.partition_evolution(2),
            ),
            ("v3_partition_evolution", "v3 partition evolution", self.partition_evolution(3)),
            ("v1_schema_evolution", "v1 schema evolution", self.schema_evolution(1)),
            (
                "v2_schema_evolution",
                "v2 schema evolution and identifier fields",
                self.schema_evolution(2),
            ),
            ("v3_schema_evolution", "v3 schema evolution", self.schema_evolution(3)),
            (
                "v2_merge_on_read",
                "v2 position deletes: DELETE/UPDATE/MERGE merge-on-read",
                self.merge_on_read(2),
            ),
            ("v3_deletion_vectors", "v3 deletion vectors, row lineage", self.merge_on_read(3)),
            ("v2_copy_on_write", "v2 overwrites and copy-on-write deletes", self.copy_on_write),
            ("v2_refs", "branches and tags with retention settings", self.refs),
            ("v2_sort_orders", "sort order evolution and distribution", self.sort_orders),
            ("v2_properties", "table properties set/unset, comment", self.properties),
            ("v1_upgrade", "v1 -> v2 -> v3 format upgrades", self.upgrade(1)),
            ("v2_upgrade", "v2 with deletes -> v3", self.upgrade(2)),
            ("v2_expire_snapshots", "snapshot expiry, capped metadata log", self.expire),
            ("v2_rollback_wap", "rollback, set-current, WAP staging + cherrypick", self.rollback),
            ("v2_maintenance", "rewrites and table/partition statistics", self.maintenance),
            ("v1_replace_table", "v1 REPLACE TABLE AS SELECT", self.replace(1)),
            ("v2_replace_table", "v2 REPLACE TABLE AS SELECT", self.replace(2)),
            ("v1_gzip", "v1 gzip-compressed metadata from the start", self.gzip_table(1)),
            ("v2_gzip_switch", "v2 switching to gzip metadata midway", self.gzip_switch),
            ("v3_gzip", "v3 gzip-compressed metadata", self.gzip_table(3)),
            (
                "java_v2_special_types",
                "Java API: uuid, fixed[16], time (v2)",
                self.java_special_types(2),
            ),
            (
                "java_v1_special_types",
                "Java API: uuid, fixed[16], time (v1)",
                self.java_special_types(1),
            ),
            (
                "java_v3_types",
                "Java API: v3 types (ns timestamps, variant, geo, unknown)",
                self.java_v3_types,
            ),
            ("java_v3_defaults", "Java API: v3 column defaults", self.java_v3_defaults),
            ("java_v2_equality_deletes", "Java API: equality deletes", self.equality_deletes),
            (
                "v2_orc",
                "ORC data and delete files: every Spark type, evolution",
                self.formats("orc"),
            ),
            (
                "v2_avro",
                "Avro data and delete files: every Spark type, evolution",
                self.formats("avro"),
            ),
            (
                "v3_format_switch",
                "v3 data files in Parquet, then ORC, then Avro",
                self.format_switch,
            ),
            (
                "v2_orc_imported",
                "ORC file without field ids added with a name mapping",
                self.orc_imported,
            ),
            (
                "java_v2_file_formats",
                "Java API: special types in Parquet, ORC and Avro files, equality deletes",
                self.java_file_formats,
            ),
        ]

    def all_types(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} ({ALL_SPARK_TYPES}) USING iceberg "
                f"COMMENT 'all Spark SQL types' TBLPROPERTIES ('format-version'='{version}')"
            )
            self.sql(f"INSERT INTO {t} VALUES {ALL_SPARK_VALUES}")
            return ["all-spark-types", "nested-types", "column-docs", "append"]

        return run

    def partition_evolution(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} (id bigint, ts timestamp, d date, cat string, n int, "
                f"amount decimal(10,2)) USING iceberg PARTITIONED BY (cat) "
                f"TBLPROPERTIES ('format-version'='{version}')"
            )
            ins = (
                f"INSERT INTO {t} VALUES "
                "(1, TIMESTAMP'2024-01-01 10:00:00', DATE'2024-01-01', 'alpha', 5, 1.25),"
                "(2, TIMESTAMP'2023-06-15 23:59:59', DATE'2023-06-15', 'beta', 17, -3.50),"
                "(3, NULL, NULL, NULL, NULL, NULL)"
            )
            self.sql(ins)
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)")
            self.sql(ins)
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD years(ts)")
            self.sql(f"ALTER TABLE {t} DROP PARTITION FIELD cat")
            self.sql(ins)
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD months(d) AS d_month")
            self.sql(f"ALTER TABLE {t} REPLACE PARTITION FIELD d_month WITH days(d) AS d_day")
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD hours(ts)")
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD truncate(2, cat) AS cat_prefix")
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD truncate(10, n)")
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD truncate(100, amount)")
            self.sql(ins)
            self.sql(f"ALTER TABLE {t} DROP PARTITION FIELD bucket(4, id)")
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(16, id) AS id_bucket16")
            self.sql(ins)
            # Re-adding a field that existed before reuses the older spec when identical.
            self.sql(f"ALTER TABLE {t} DROP PARTITION FIELD id_bucket16")
            self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(16, id) AS id_bucket16")
            return [
                "partition-evolution",
                "identity",
                "bucket",
                "truncate",
                "year",
                "month",
                "day",
                "hour",
                "replace-partition-field",
            ] + (["void-transform"] if version == 1 else [])

        return run

    def schema_evolution(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} (id int NOT NULL, region string NOT NULL, name string, "
                "price float, amount decimal(9,2), info struct<a: int, b: string>, "
                "tags array<string>, attrs map<string, struct<p: int>>, "
                "points array<struct<x: int, y: int>>) USING iceberg "
                f"TBLPROPERTIES ('format-version'='{version}')"
            )
            ins_values = (
                "(1, 'eu', 'one', 1.5, 10.25, named_struct('a', 1, 'b', 'b1'), array('t'), "
                "map('k', named_struct('p', 1)), array(named_struct('x', 1, 'y', 2)))"
            )
            self.sql(f"INSERT INTO {t} VALUES {ins_values}")
            self.sql(f"ALTER TABLE {t} SET IDENTIFIER FIELDS id")
            self.sql(f"ALTER TABLE {t} ADD COLUMN score double COMMENT 'added later'")
            self.sql(f"ALTER TABLE {t} ADD COLUMN info.c bigint")
            self.sql(f"ALTER TABLE {t} ADD COLUMN attrs.value.q string")
            self.sql(f"ALTER TABLE {t} ADD COLUMN points.element.z int")
            self.sql(f"ALTER TABLE {t} ADD COLUMNS (extra1 string, extra2 array<int>)")
            self.insert_named(t, {"id": "2", "region": "'us'", "name": "'two'"})
            self.sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")
            self.sql(f"ALTER TABLE {t} RENAME COLUMN info.b TO bee")
            self.sql(f"ALTER TABLE {t} DROP COLUMN tags")
            self.sql(f"ALTER TABLE {t} DROP COLUMN extra1")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN price TYPE double")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN amount TYPE decimal(12,2)")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN points.element.x TYPE bigint")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN score FIRST")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN info.c FIRST")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN full_name AFTER region")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN full_name COMMENT 'display name'")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN amount DROP NOT NULL")
            self.sql(f"ALTER TABLE {t} SET IDENTIFIER FIELDS id, region")
            self.insert_named(t, {"id": "3000000000", "region": "'ap'", "full_name": "'three'"})
            # Java API: re-add a dropped name (new field id), and make a column required.
            table = self.load(name)
            string = self.types().StringType.get()
            table.updateSchema().addColumn(None, "tags", string, None, None).commit()
            table.updateSchema().allowIncompatibleChanges().requireColumn("full_name").commit()
            self.sql(f"ALTER TABLE {t} DROP IDENTIFIER FIELDS region")
            return [
                "schema-evolution",
                "add-column",
                "add-nested-column",
                "rename",
                "drop",
                "reorder",
                "type-promotion",
                "decimal-widening",
                "identifier-fields",
                "docs",
                "required-columns",
            ]

        return run

    def merge_on_read(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} (id bigint, cat string, v string) USING iceberg "
                "PARTITIONED BY (cat) TBLPROPERTIES ("
                f"'format-version'='{version}', 'write.delete.mode'='merge-on-read', "
                "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
            )
            self.spark.range(0, 40).selectExpr(
                "id",
                "CASE WHEN id % 2 = 0 THEN 'even' ELSE 'odd' END AS cat",
                "CAST(id AS string) AS v",
            ).repartition(2).writeTo(t).append()
            self.sql(f"DELETE FROM {t} WHERE id % 5 = 0")
            self.sql(f"UPDATE {t} SET v = 'updated' WHERE id IN (3, 4)")
            self.spark.range(35, 45).selectExpr(
                "id", "'odd' AS cat", "'merged' AS v"
            ).createOrReplaceTempView("src")
            self.sql(
                f"MERGE INTO {t} t USING src s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT *"
            )
            self.sql(f"DELETE FROM {t} WHERE id = 7")
            features = ["merge-on-read", "delete", "update", "merge", "overwrite"]
            features.append("deletion-vectors" if version >= 3 else "position-deletes")
            if version >= 3:
                features.append("row-lineage")
            return features

        return run

    def copy_on_write(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, day date, v string) USING iceberg "
            "PARTITIONED BY (day) TBLPROPERTIES ('format-version'='2')"
        )
        self.sql(
            f"INSERT INTO {t} VALUES (1, DATE'2024-01-01', 'a'), (2, DATE'2024-01-02', 'b'), "
            "(3, DATE'2024-01-03', 'c')"
        )
        self.sql(f"INSERT INTO {t} VALUES (4, DATE'2024-01-01', 'd')")
        self.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        self.sql(f"INSERT OVERWRITE {t} VALUES (5, DATE'2024-01-02', 'e')")
        self.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "static")
        self.sql(f"INSERT OVERWRITE {t} PARTITION (day = DATE'2024-01-03') VALUES (6, 'f')")
        self.sql(f"DELETE FROM {t} WHERE id = 1")  # rewrite part of a file
        self.sql(f"DELETE FROM {t} WHERE day = DATE'2024-01-02'")  # whole partition, metadata-only
        self.sql(f"UPDATE {t} SET v = 'z' WHERE id = 4")
        self.sql(f"DELETE FROM {t}")
        self.sql(f"INSERT INTO {t} VALUES (7, DATE'2024-02-01', 'g')")
        return ["overwrite", "dynamic-overwrite", "copy-on-write", "delete", "empty-snapshot"]

    def refs(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, v string) USING iceberg TBLPROPERTIES "
            "('format-version'='2', 'history.expire.max-snapshot-age-ms'='86400000', "
            "'history.expire.min-snapshots-to-keep'='2', "
            "'history.expire.max-ref-age-ms'='604800000')"
        )
        self.sql(f"INSERT INTO {t} VALUES (1, 'a')")
        first = self.current_snapshot_id(name)
        self.sql(f"ALTER TABLE {t} CREATE TAG `release-1` RETAIN 30 DAYS")
        self.sql(f"ALTER TABLE {t} CREATE TAG forever")
        self.sql(
            f"ALTER TABLE {t} CREATE BRANCH dev RETAIN 7 DAYS "
            "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS"
        )
        self.sql(f"ALTER TABLE {t} CREATE BRANCH audit WITH SNAPSHOT RETENTION 5 SNAPSHOTS")
        self.sql(f"ALTER TABLE {t} CREATE BRANCH scratch WITH SNAPSHOT RETENTION 1 HOURS")
        self.sql(f"INSERT INTO {t}.branch_dev VALUES (2, 'dev-only')")
        self.sql(f"INSERT INTO {t}.branch_dev VALUES (3, 'dev-only')")
        self.sql(f"INSERT INTO {t} VALUES (4, 'main')")
        self.sql(f"ALTER TABLE {t} CREATE TAG `old` AS OF VERSION {first} RETAIN 365 DAYS")
        self.sql(f"ALTER TABLE {t} REPLACE TAG forever RETAIN 10 DAYS")
        self.sql(f"ALTER TABLE {t} DROP BRANCH scratch")
        self.sql(f"INSERT INTO {t}.branch_audit VALUES (5, 'audit')")
        self.sql(f"ALTER TABLE {t} CREATE BRANCH staging")
        self.sql(f"INSERT INTO {t}.branch_staging VALUES (6, 'staged')")
        self.sql(f"CALL ref.system.fast_forward('{NS}.{name}', 'main', 'staging')")
        self.sql(f"ALTER TABLE {t} CREATE OR REPLACE BRANCH audit")
        return ["branches", "tags", "ref-retention", "branch-writes", "fast-forward"]

    def sort_orders(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, ts timestamp, category string, price double) "
            "USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2')"
        )
        self.sql(f"ALTER TABLE {t} WRITE ORDERED BY category ASC NULLS LAST, id DESC")
        self.sql(f"INSERT INTO {t} VALUES (1, TIMESTAMP'2024-01-01 00:00:00', 'x', 1.0)")
        self.sql(
            f"ALTER TABLE {t} WRITE LOCALLY ORDERED BY days(ts), bucket(4, id) DESC NULLS FIRST"
        )
        self.sql(f"ALTER TABLE {t} WRITE ORDERED BY truncate(2, category), price DESC NULLS LAST")
        self.sql(f"ALTER TABLE {t} WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id")
        self.sql(f"INSERT INTO {t} VALUES (2, TIMESTAMP'2024-01-02 00:00:00', 'y', 2.0)")
        self.sql(f"ALTER TABLE {t} WRITE UNORDERED")
        self.sql(f"ALTER TABLE {t} WRITE ORDERED BY category ASC NULLS LAST, id DESC")
        return ["sort-orders", "sort-transforms", "distribution-mode", "unsorted"]

    def properties(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint) USING iceberg COMMENT 'table with properties' "
            "TBLPROPERTIES ('format-version'='2', 'team'='alice', "
            "'write.parquet.compression-codec'='zstd', 'commit.retry.num-retries'='7', "
            "'custom.key.with.dots'='v', 'note'='ünïcødé ✓ \"quoted\" \\\\ back', "
            "'empty'='', 'write.metadata.metrics.default'='truncate(16)', "
            "'write.metadata.metrics.column.id'='full')"
        )
        self.sql(f"INSERT INTO {t} VALUES (1)")
        self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('team'='bob', 'added'='yes')")
        self.sql(f"ALTER TABLE {t} UNSET TBLPROPERTIES ('custom.key.with.dots', 'empty')")
        self.sql(f"COMMENT ON TABLE {t} IS 'changed comment'")
        return ["properties", "unicode-properties", "comment"]

    def upgrade(self, start: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
                f"TBLPROPERTIES ('format-version'='{start}')"
            )
            self.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'b')")
            if start == 1:
                self.sql(f"ALTER TABLE {t} DROP PARTITION FIELD cat")
                self.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(2, id)")
                self.sql(f"INSERT INTO {t} VALUES (5, 'c')")
                self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='2')")
            self.sql(
                f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
                "'write.update.mode'='merge-on-read')"
            )
            self.sql(f"INSERT INTO {t} VALUES (6, 'a'), (7, 'b')")
            self.sql(f"DELETE FROM {t} WHERE id IN (1, 6)")
            self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')")
            self.sql(f"INSERT INTO {t} VALUES (8, 'a')")
            self.sql(f"DELETE FROM {t} WHERE id IN (2, 8)")
            self.sql(f"UPDATE {t} SET cat = 'z' WHERE id = 3")
            features = ["format-upgrade", "v2-to-v3", "position-deletes", "deletion-vectors"]
            return ["v1-to-v2", "void-transform", *features] if start == 1 else features

        return run

    def expire(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2', "
            "'write.metadata.previous-versions-max'='3')"
        )
        for i in range(6):
            self.sql(f"INSERT INTO {t} VALUES ({i})")
        self.sql(f"ALTER TABLE {t} CREATE TAG keep_me AS OF VERSION {self.snapshot_ids(name)[1]}")
        now = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)
        self.sql(
            f"CALL ref.system.expire_snapshots(table => '{NS}.{name}', "
            f"older_than => TIMESTAMP '{now:%Y-%m-%d %H:%M:%S}', retain_last => 2)"
        )
        self.sql(f"INSERT INTO {t} VALUES (100)")
        self.sql(f"DELETE FROM {t} WHERE id = 3")
        return ["expire-snapshots", "metadata-log-capped", "snapshot-log-gaps", "tag"]

    def rollback(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(f"CREATE TABLE {t} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2')")
        for i in range(4):
            self.sql(f"INSERT INTO {t} VALUES ({i})")
        ids = self.snapshot_ids(name)
        self.sql(f"CALL ref.system.rollback_to_snapshot('{NS}.{name}', {ids[1]})")
        self.sql(f"INSERT INTO {t} VALUES (10)")
        self.sql(f"CALL ref.system.set_current_snapshot('{NS}.{name}', {ids[3]})")
        self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.wap.enabled'='true')")
        self.spark.conf.set("spark.wap.id", "wap-1")
        self.sql(f"INSERT INTO {t} VALUES (20)")
        self.spark.conf.unset("spark.wap.id")
        staged = [
            int(r[0])
            for r in self.sql(
                f"SELECT snapshot_id FROM {t}.snapshots WHERE summary['wap.id'] = 'wap-1'"
            )
        ]
        self.sql(f"CALL ref.system.cherrypick_snapshot('{NS}.{name}', {staged[0]})")
        now = dt.datetime.now(dt.timezone.utc)
        self.sql(f"INSERT INTO {t} VALUES (30)")
        self.sql(
            f"CALL ref.system.rollback_to_timestamp('{NS}.{name}', "
            f"TIMESTAMP '{now:%Y-%m-%d %H:%M:%S.%f}')"
        )
        return ["rollback", "set-current-snapshot", "wap", "cherrypick", "non-linear-history"]

    def maintenance(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
            "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
        )
        for i in range(3):
            self.sql(f"INSERT INTO {t} VALUES ({i}, 'a'), ({i + 10}, 'b')")
        self.sql(f"DELETE FROM {t} WHERE id = 1")
        features = ["rewrite"]
        self.attempt(
            name,
            "rewrite_position_delete_files",
            lambda: self.sql(
                f"CALL ref.system.rewrite_position_delete_files(table => '{NS}.{name}', "
                "options => map('rewrite-all', 'true'))"
            ),
        )
        self.sql(
            f"CALL ref.system.rewrite_data_files(table => '{NS}.{name}', "
            "options => map('rewrite-all', 'true'))"
        )
        self.sql(f"CALL ref.system.rewrite_manifests('{NS}.{name}')")
        if self.attempt(
            name,
            "compute_table_stats (statistics)",
            lambda: self.sql(f"CALL ref.system.compute_table_stats(table => '{NS}.{name}')"),
        ):
            features.append("statistics")
        if self.attempt(
            name,
            "compute_partition_stats (partition-statistics)",
            lambda: self.sql(f"CALL ref.system.compute_partition_stats(table => '{NS}.{name}')"),
        ):
            features.append("partition-statistics")
        self.sql(f"INSERT INTO {t} VALUES (99, 'c')")
        if self.attempt(
            name,
            "compute_table_stats on a second snapshot",
            lambda: self.sql(f"CALL ref.system.compute_table_stats(table => '{NS}.{name}')"),
        ):
            features.append("statistics-multiple-snapshots")
        return features

    def replace(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
                f"TBLPROPERTIES ('format-version'='{version}', 'keep'='me')"
            )
            self.sql(f"INSERT INTO {t} VALUES (1, 'a')")
            self.sql(f"ALTER TABLE {t} WRITE ORDERED BY id")
            features = ["replace-table", "schema-reuse", "spec-reuse"]
            if self.attempt(
                name,
                "CREATE OR REPLACE TABLE AS SELECT with a new partition spec",
                lambda: self.sql(
                    f"CREATE OR REPLACE TABLE {t} USING iceberg PARTITIONED BY (bucket(2, key)) "
                    f"TBLPROPERTIES ('format-version'='{version}', 'replaced'='true') "
                    "AS SELECT CAST(id AS string) AS key, id * 2 AS value FROM range(5)"
                ),
            ):
                features.append("rtas")
            # Bringing back a column name whose identity partition field existed before fails:
            # "Cannot create identity partition sourced from different field in schema".
            self.attempt(
                name,
                "REPLACE TABLE re-creating a dropped identity-partitioned column",
                lambda: self.sql(
                    f"REPLACE TABLE {t} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
                    f"TBLPROPERTIES ('format-version'='{version}')"
                ),
            )
            self.sql(
                f"REPLACE TABLE {t} (id bigint, label string, extra int) USING iceberg "
                f"PARTITIONED BY (bucket(3, id)) TBLPROPERTIES ('format-version'='{version}')"
            )
            # In v1 the replaced spec keeps a void field whose source column is gone, and the
            # Spark writer fails with "Cannot build accessor for field: null".
            if self.attempt(
                name,
                "INSERT after REPLACE TABLE dropped a partition source column",
                lambda: self.sql(f"INSERT INTO {t} VALUES (3, 'c', 3)"),
            ):
                features.append("append-after-replace")
            return features

        return run

    def gzip_table(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} (id bigint, s string) USING iceberg PARTITIONED BY "
                f"(truncate(1, s)) TBLPROPERTIES ('format-version'='{version}', "
                "'write.metadata.compression-codec'='gzip')"
            )
            self.sql(f"INSERT INTO {t} VALUES (1, 'abc'), (2, 'xyz')")
            self.sql(f"INSERT INTO {t} VALUES (3, 'abc')")
            self.sql(f"ALTER TABLE {t} ADD COLUMN extra double")
            return ["gzip-metadata"]

        return run

    def gzip_switch(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(f"CREATE TABLE {t} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2')")
        self.sql(f"INSERT INTO {t} VALUES (1)")
        self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.metadata.compression-codec'='gzip')")
        self.sql(f"INSERT INTO {t} VALUES (2)")
        self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.metadata.compression-codec'='none')")
        self.sql(f"INSERT INTO {t} VALUES (3)")
        return ["gzip-metadata", "mixed-compression"]

    # -------------------------------------------------- Java API scenarios
    def java_special_types(self, version: int) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            jvm, T = self.jvm, self.types()
            schema = self.schema(
                [
                    self.field(1, "id", T.LongType.get(), required=True),
                    self.field(2, "u", T.UUIDType.get(), doc="a uuid"),
                    self.field(3, "f16", T.FixedType.ofLength(16)),
                    self.field(4, "t", T.TimeType.get()),
                    self.field(5, "ts", T.TimestampType.withZone()),
                    self.field(6, "b", T.BinaryType.get()),
                    self.field(
                        7,
                        "s",
                        T.StructType.of(
                            [
                                T.NestedField.optional(8, "inner_u", T.UUIDType.get()),
                                T.NestedField.optional(9, "inner_f", T.FixedType.ofLength(3)),
                            ]
                        ),
                    ),
                    self.field(10, "l", T.ListType.ofOptional(11, T.TimeType.get())),
                    self.field(
                        12, "m", T.MapType.ofRequired(13, 14, T.UUIDType.get(), T.LongType.get())
                    ),
                ],
                identifier_ids=[1],
            )
            spec = (
                jvm.org.apache.iceberg.PartitionSpec.builderFor(schema)
                .bucket("u", 4)
                .identity("t")
                .build()
            )
            table = self.java_create(name, schema, spec, {"format-version": str(version)})
            rows = []
            for i in range(3):
                rows.append(
                    {
                        "id": 10_000_000_000 + i,  # > 2**31 so py4j passes a java.lang.Long
                        "u": jvm.java.util.UUID.fromString(
                            f"f79c3e09-677c-4bbd-a479-3f349cb785e{i}"
                        ),
                        "f16": bytearray(range(i, i + 16)),
                        "t": jvm.java.time.LocalTime.parse(f"12:34:5{i}.123456"),
                        "ts": jvm.java.time.OffsetDateTime.parse(
                            f"2024-01-0{i + 1}T10:00:00+00:00"
                        ),
                        "b": jvm.java.nio.ByteBuffer.wrap(bytearray(b"\x00\x01" * i)),
                    }
                )
            self.java_append(table, rows)
            table.updateSchema().addColumn(None, "u2", T.UUIDType.get(), None, None).commit()
            table.updateSpec().addField(
                "f16_bucket", jvm.org.apache.iceberg.expressions.Expressions.bucket("f16", 8)
            ).commit()
            nulls = jvm.org.apache.iceberg.NullOrder
            exprs = jvm.org.apache.iceberg.expressions.Expressions
            table.replaceSortOrder().asc(exprs.ref("t"), nulls.NULLS_FIRST).desc(
                exprs.bucket("u", 4), nulls.NULLS_LAST
            ).commit()
            return ["uuid", "fixed", "time", "timestamptz", "java-api", "identifier-fields"]

        return run

    def java_v3_types(self, name: str) -> list[str]:
        jvm, T = self.jvm, self.types()
        features = ["java-api", "timestamp_ns", "timestamptz_ns", "uuid", "fixed", "time"]
        fields = [
            self.field(1, "id", T.LongType.get(), required=True),
            self.field(2, "ts_ns", T.TimestampNanoType.withoutZone()),
            self.field(3, "tstz_ns", T.TimestampNanoType.withZone()),
            self.field(4, "u", T.UUIDType.get()),
            self.field(5, "f16", T.FixedType.ofLength(16)),
            self.field(6, "t", T.TimeType.get()),
            self.field(
                7,
                "st",
                T.StructType.of(
                    [T.NestedField.optional(8, "inner_ns", T.TimestampNanoType.withZone())]
                ),
            ),
        ]
        schema = self.schema(fields, identifier_ids=[1])
        spec = jvm.org.apache.iceberg.PartitionSpec.builderFor(schema).bucket("id", 4).build()
        table = self.java_create(name, schema, spec, {"format-version": "3"})

        def write() -> None:
            rows = [
                {
                    "id": 20_000_000_000,
                    "ts_ns": jvm.java.time.LocalDateTime.parse("2024-05-06T07:08:09.123456789"),
                    "tstz_ns": jvm.java.time.OffsetDateTime.parse("2024-05-06T07:08:09.987654321Z"),
                    "u": jvm.java.util.UUID.fromString("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
                    "f16": bytearray(range(16)),
                    "t": jvm.java.time.LocalTime.parse("23:59:59.999999"),
                }
            ]
            self.java_append(table, rows)

        if self.attempt(name, "write a data file with v3 types via GenericAppenderFactory", write):
            features.append("v3-data")
        # Types the Parquet writers cannot store yet are added by schema evolution after the data.
        later: list[tuple[str, Callable[[], Any]]] = [
            ("variant", lambda: T.VariantType.get()),
            ("unknown", lambda: T.UnknownType.get()),
            ("geometry", lambda: T.GeometryType.crs84()),
            ("geometry-crs", lambda: T.GeometryType.of("srid:3857")),
            ("geography", lambda: T.GeographyType.crs84()),
            (
                "geography-crs-algorithm",
                lambda: T.GeographyType.of(
                    "srid:4269", jvm.org.apache.iceberg.types.EdgeAlgorithm.KARNEY
                ),
            ),
        ]
        for feature, make in later:

            def add(feature: str = feature, make: Callable[[], Any] = make) -> None:
                col = feature.replace("-", "_")
                table.updateSchema().addColumn(None, col, make(), None, None).commit()

            if self.attempt(name, f"v3 type {feature}", add):
                features.append(feature)
        exprs = jvm.org.apache.iceberg.expressions.Expressions
        table.updateSpec().addField(exprs.day("ts_ns")).addField(exprs.hour("tstz_ns")).commit()
        return features

    def java_v3_defaults(self, name: str) -> list[str]:
        jvm, T = self.jvm, self.types()
        big = jvm.java.math.BigDecimal
        features = ["java-api", "initial-default", "write-default"]
        candidates: list[tuple[str, Any, Callable[[], Any]]] = [
            ("d_bool", T.BooleanType.get(), lambda: self.lit(True)),
            ("d_int", T.IntegerType.get(), lambda: self.lit(42)),
            ("d_long", T.LongType.get(), lambda: self.lit(-7, T.LongType.get())),
            ("d_float", T.FloatType.get(), lambda: self.lit(1.5, T.FloatType.get())),
            ("d_double", T.DoubleType.get(), lambda: self.lit(-0.25)),
            ("d_dec", T.DecimalType.of(9, 2), lambda: self.lit(big("123.45"))),
            ("d_date", T.DateType.get(), lambda: self.lit("2024-02-29", T.DateType.get())),
            ("d_time", T.TimeType.get(), lambda: self.lit("12:34:56.789", T.TimeType.get())),
            (
                "d_ts",
                T.TimestampType.withoutZone(),
                lambda: self.lit("2024-02-29T12:34:56.123456", T.TimestampType.withoutZone()),
            ),
            (
                "d_tstz",
                T.TimestampType.withZone(),
                lambda: self.lit("2024-02-29T12:34:56.123456+00:00", T.TimestampType.withZone()),
            ),
            (
                "d_ts_ns",
                T.TimestampNanoType.withoutZone(),
                lambda: self.lit(
                    "2024-02-29T12:34:56.123456789", T.TimestampNanoType.withoutZone()
                ),
            ),
            (
                "d_tstz_ns",
                T.TimestampNanoType.withZone(),
                lambda: self.lit(
                    "2024-02-29T12:34:56.123456789+00:00", T.TimestampNanoType.withZone()
                ),
            ),
            ("d_string", T.StringType.get(), lambda: self.lit("dëfault ✓")),
            (
                "d_uuid",
                T.UUIDType.get(),
                lambda: self.lit(
                    jvm.java.util.UUID.fromString("f79c3e09-677c-4bbd-a479-3f349cb785e7")
                ),
            ),
            (
                "d_fixed",
                T.FixedType.ofLength(4),
                lambda: self.lit(bytearray(b"\x00\x01\xfe\xff"), T.FixedType.ofLength(4)),
            ),
            ("d_binary", T.BinaryType.get(), lambda: self.lit(bytearray(b"\xca\xfe"))),
        ]
        fields = [self.field(1, "id", T.LongType.get(), required=True)]
        fid = 2
        for col, ctype, make in candidates:

            def probe(col: str = col, ctype: Any = ctype, make: Callable[[], Any] = make) -> None:
                s = self.schema([self.field(1, col, ctype, initial=make(), write=make())])
                self.java_create("probe_default", s, None, {"format-version": "3"})
                self.catalog.dropTable(self.ident("probe_default"), True)

            if self.attempt(name, f"default value for {col}", probe):
                fields.append(self.field(fid, col, ctype, initial=make(), write=make()))
                fid += 1
        table = self.java_create(name, self.schema(fields), None, {"format-version": "3"})
        self.java_append(table, [{"id": 30_000_000_000}])

        def evolve() -> None:
            update = table.updateSchema()
            update.addColumn(None, "added_with_default", T.IntegerType.get(), "doc", self.lit(5))
            update.commit()
            table.updateSchema().addRequiredColumn(
                None, "added_required", T.StringType.get(), None, self.lit("x")
            ).commit()
            table.updateSchema().updateColumnDefault("d_int", self.lit(43)).commit()

        if self.attempt(name, "evolve defaults (add column with default, update default)", evolve):
            features += ["add-column-with-default", "update-write-default"]
        return features

    def equality_deletes(self, name: str) -> list[str]:
        jvm, T = self.jvm, self.types()
        schema = self.schema(
            [
                self.field(1, "id", T.LongType.get(), required=True),
                self.field(2, "cat", T.StringType.get()),
                self.field(3, "v", T.StringType.get()),
            ],
            identifier_ids=[1],
        )
        spec = jvm.org.apache.iceberg.PartitionSpec.builderFor(schema).identity("cat").build()
        table = self.java_create(name, schema, spec, {"format-version": "2"})
        rows = [{"id": 10_000_000_000 + i, "cat": "ab"[i % 2], "v": f"v{i}"} for i in range(6)]
        self.java_append(table, rows)
        eq_ids = self.gateway.new_array(jvm.int, 1)
        eq_ids[0] = 1
        eq_schema = table.schema().select(["id"])
        factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(
            table.schema(), table.spec(), eq_ids, eq_schema, None
        )
        row_delta = table.newRowDelta()
        for cat, ids in (("a", [0, 2]), ("b", [3])):
            key = jvm.org.apache.iceberg.PartitionKey(table.spec(), table.schema())
            probe = jvm.org.apache.iceberg.data.GenericRecord.create(table.schema())
            probe.setField("cat", cat)
            key.partition(probe)
            location = table.locationProvider().newDataLocation(
                table.spec(), key, f"eq-delete-{cat}.parquet"
            )
            out = jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(
                table.io().newOutputFile(location)
            )
            writer = factory.newEqDeleteWriter(out, jvm.org.apache.iceberg.FileFormat.PARQUET, key)
            for i in ids:
                rec = jvm.org.apache.iceberg.data.GenericRecord.create(eq_schema)
                rec.setField("id", 10_000_000_000 + i)
                writer.write(rec)
            writer.close()
            row_delta.addDeletes(writer.toDeleteFile())
        row_delta.commit()
        self.sql(f"INSERT INTO ref.{NS}.{name} VALUES (20000000000, 'a', 'spark')")
        return ["java-api", "equality-deletes", "row_delta", "identifier-fields"]

    # ------------------------------------------------------ data file formats
    def formats(self, file_format: str) -> Callable[[str], list[str]]:
        def run(name: str) -> list[str]:
            t = f"ref.{NS}.{name}"
            self.sql(
                f"CREATE TABLE {t} ({ALL_SPARK_TYPES}) USING iceberg TBLPROPERTIES ("
                f"'format-version'='2', 'write.format.default'='{file_format}', "
                f"'write.delete.format.default'='{file_format}', "
                "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
            )
            self.sql(f"INSERT INTO {t} VALUES {ALL_SPARK_VALUES}")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN c_int TYPE bigint")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN c_float TYPE double")
            self.sql(f"ALTER TABLE {t} ALTER COLUMN c_dec9 TYPE decimal(12,2)")
            self.sql(f"ALTER TABLE {t} RENAME COLUMN c_string TO c_text")
            self.sql(f"ALTER TABLE {t} RENAME COLUMN c_struct.a TO a_renamed")
            self.sql(f"ALTER TABLE {t} DROP COLUMN c_binary")
            self.sql(f"ALTER TABLE {t} ADD COLUMN c_binary binary")
            self.insert_named(
                t,
                {
                    "c_long": "3",
                    "c_int": "5000000000",
                    "c_float": "double('NaN')",
                    "c_text": "'日本語 ✓'",
                    "c_binary": "X'CAFE'",
                    "c_struct": "named_struct('a_renamed', 7, 'b', 'ß', 'nested', NULL)",
                    "c_map": "map('ключ', 3)",
                },
            )
            self.sql(f"DELETE FROM {t} WHERE c_long = 10")
            self.sql(f"UPDATE {t} SET c_text = 'updated' WHERE c_long = 3")
            return [
                f"{file_format}-data-files",
                f"{file_format}-delete-files",
                "all-spark-types",
                "nested-types",
                "schema-evolution",
                "type-promotion",
                "rename",
                "position-deletes",
            ]

        return run

    def format_switch(self, name: str) -> list[str]:
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, cat string, ts timestamp, v string) USING iceberg "
            "PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='3', "
            "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
        )
        self.sql(
            f"INSERT INTO {t} VALUES (1, 'a', TIMESTAMP'2024-01-01 01:02:03', 'parquet'), "
            "(2, 'b', NULL, 'parquet')"
        )
        for fmt, ids in (("orc", (3, 4)), ("avro", (5, 6))):
            self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.format.default'='{fmt}')")
            self.sql(
                f"INSERT INTO {t} VALUES ({ids[0]}, 'a', TIMESTAMP'2024-02-01 00:00:00', '{fmt}'), "
                f"({ids[1]}, 'b', NULL, '{fmt} ✓')"
            )
        self.sql(f"DELETE FROM {t} WHERE id IN (1, 3, 6)")
        return [
            "parquet-data-files",
            "orc-data-files",
            "avro-data-files",
            "deletion-vectors",
            "row-lineage",
        ]

    def orc_imported(self, name: str) -> list[str]:
        """An ORC file written by Spark's own ORC writer (no Iceberg ids), appended by the Java
        API with the table's default name mapping (as add_files does, minus its slow scan)."""
        jvm = self.jvm
        t = f"ref.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, s string, st struct<x: int, y: array<bigint>>, "
            "m map<string, bigint>) USING iceberg TBLPROPERTIES ('format-version'='2', "
            "'write.format.default'='orc')"
        )
        table = self.load(name)
        path = os.path.join(table.location(), "imported")
        self.spark.sql(
            "SELECT CAST(id AS bigint) AS id, CAST(id AS string) AS s, "
            "named_struct('x', CAST(id AS int), 'y', array(id, NULL)) AS st, "
            "map('k', id) AS m FROM range(3)"
        ).coalesce(1).write.orc(path)
        orc_file = sorted(f for f in os.listdir(path) if f.endswith(".orc"))[0]
        location = os.path.join(path, orc_file)
        mapping = jvm.org.apache.iceberg.mapping.MappingUtil.create(table.schema())
        table.updateProperties().set(
            "schema.name-mapping.default",
            jvm.org.apache.iceberg.mapping.NameMappingParser.toJson(mapping),
        ).commit()
        data_file = (
            jvm.org.apache.iceberg.DataFiles.builder(table.spec())
            .withPath(location)
            .withFormat(jvm.org.apache.iceberg.FileFormat.ORC)
            .withFileSizeInBytes(os.path.getsize(location))
            .withRecordCount(3)
            .build()
        )
        table.newAppend().appendFile(data_file).commit()
        self.sql(f"INSERT INTO {t} VALUES (10, 'ten', named_struct('x', 10, 'y', array(1L)), NULL)")
        self.sql(f"ALTER TABLE {t} RENAME COLUMN s TO s_renamed")
        return ["orc-data-files", "name-mapping", "files-without-field-ids"]

    def java_file_formats(self, name: str) -> list[str]:
        """The same rows written as a Parquet, an ORC and an Avro file, plus equality deletes."""
        jvm, T = self.jvm, self.types()
        inner = T.StructType.of(
            [
                T.NestedField.optional(9, "inner_u", T.UUIDType.get()),
                T.NestedField.optional(10, "inner_f", T.FixedType.ofLength(3)),
            ]
        )
        schema = self.schema(
            [
                self.field(1, "id", T.LongType.get(), required=True),
                self.field(2, "u", T.UUIDType.get()),
                self.field(3, "f16", T.FixedType.ofLength(16)),
                self.field(4, "t", T.TimeType.get()),
                self.field(5, "tstz", T.TimestampType.withZone()),
                self.field(6, "ts", T.TimestampType.withoutZone()),
                self.field(7, "dec", T.DecimalType.of(38, 10)),
                self.field(8, "s", inner),
                self.field(11, "l", T.ListType.ofOptional(12, T.TimeType.get())),
                self.field(
                    13, "m", T.MapType.ofOptional(14, 15, T.UUIDType.get(), T.LongType.get())
                ),
                self.field(
                    16, "mi", T.MapType.ofOptional(17, 18, T.IntegerType.get(), T.StringType.get())
                ),
                self.field(19, "b", T.BinaryType.get()),
                self.field(20, "d", T.DateType.get()),
                self.field(21, "fmt", T.StringType.get()),
            ],
            identifier_ids=[1],
        )
        table = self.java_create(name, schema, None, {"format-version": "2"})
        base = 10_000_000_000
        for k, fmt in enumerate(("PARQUET", "ORC", "AVRO")):
            rows: list[dict[str, Any]] = []
            for i in range(3):
                rid = base + 10 * k + i
                if i == 2:
                    rows.append({"id": rid, "fmt": fmt})
                    continue
                struct = jvm.org.apache.iceberg.data.GenericRecord.create(inner)
                struct.setField(
                    "inner_u",
                    jvm.java.util.UUID.fromString(f"00000000-0000-0000-0000-00000000000{i}"),
                )
                struct.setField("inner_f", bytearray(b"\x00\xff" + bytes([i])))
                times = jvm.java.util.ArrayList()
                times.add(jvm.java.time.LocalTime.parse("00:00:00.000001"))
                times.add(None)
                uuid_map = jvm.java.util.HashMap()
                uuid_map.put(
                    jvm.java.util.UUID.fromString(f"f79c3e09-677c-4bbd-a479-3f349cb785e{i}"),
                    base + i,
                )
                int_map = jvm.java.util.HashMap()
                int_map.put(i, f"ünï {i}")
                int_map.put(-1, None)
                rows.append(
                    {
                        "id": rid,
                        "u": jvm.java.util.UUID.fromString(
                            f"f79c3e09-677c-4bbd-a479-3f349cb785e{i}"
                        ),
                        "f16": bytearray(range(i, i + 16)),
                        "t": jvm.java.time.LocalTime.parse(f"23:59:5{i}.123456"),
                        "tstz": jvm.java.time.OffsetDateTime.parse(
                            f"1969-12-31T23:59:5{i}.000001+00:00"
                        ),
                        "ts": jvm.java.time.LocalDateTime.parse(f"2024-02-29T12:34:5{i}.5"),
                        "dec": jvm.java.math.BigDecimal(
                            f"-1234567890123456789012345678.012345678{i}"
                        ),
                        "s": struct,
                        "l": times,
                        "m": uuid_map,
                        "mi": int_map,
                        "b": jvm.java.nio.ByteBuffer.wrap(bytearray(b"\x00\x01" * i)),
                        "d": jvm.java.time.LocalDate.parse(f"0001-01-0{i + 1}"),
                        "fmt": fmt,
                    }
                )
            self.java_append(table, rows, fmt)
        eq_ids = self.gateway.new_array(jvm.int, 1)
        eq_ids[0] = 1
        eq_schema = table.schema().select(["id"])
        factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(
            table.schema(), table.spec(), eq_ids, eq_schema, None
        )
        row_delta = table.newRowDelta()
        for k, fmt in enumerate(("ORC", "AVRO")):
            location = table.locationProvider().newDataLocation(f"eq-delete.{fmt.lower()}")
            out = jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(
                table.io().newOutputFile(location)
            )
            writer = factory.newEqDeleteWriter(
                out, getattr(jvm.org.apache.iceberg.FileFormat, fmt), None
            )
            rec = jvm.org.apache.iceberg.data.GenericRecord.create(eq_schema)
            rec.setField("id", base + 10 * (k + 1))
            writer.write(rec)
            writer.close()
            row_delta.addDeletes(writer.toDeleteFile())
        row_delta.commit()
        return [
            "java-api",
            "parquet-data-files",
            "orc-data-files",
            "avro-data-files",
            "uuid",
            "fixed",
            "time",
            "timestamptz",
            "equality-deletes",
            "orc-delete-files",
            "avro-delete-files",
        ]

    # ------------------------------------------- Hive catalog: tables and views
    def hive_scenarios(self) -> list[tuple[str, str, str, Callable[[str], list[str]]]]:
        """(kind, name, description, function) for the HiveCatalog warehouse."""
        return [
            (
                "table",
                "hive_table",
                "HiveCatalog table (NNNNN-uuid.metadata.json names)",
                self.hive_table,
            ),
            (
                "view",
                "sql_view",
                "Spark SQL view: replace, properties, column comments",
                self.sql_view,
            ),
            (
                "view",
                "java_multi_dialect_view",
                "Java API view: dialects, default namespace, "
                "capped version history, plain (non-gzip) metadata",
                self.java_view,
            ),
        ]

    def iceberg_hive_catalog(self) -> Any:
        manager = self.spark._jsparkSession.sessionState().catalogManager()
        return manager.catalog("hive").icebergCatalog()

    def hive_table(self, name: str) -> list[str]:
        t = f"hive.{NS}.{name}"
        self.sql(
            f"CREATE TABLE {t} (id bigint, s string, ts timestamp) USING iceberg "
            "PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2')"
        )
        self.sql(
            f"INSERT INTO {t} VALUES (1, 'a', TIMESTAMP'2024-01-01 00:00:00'), "
            "(2, 'b', TIMESTAMP'2024-01-02 00:00:00')"
        )
        self.sql(f"ALTER TABLE {t} ADD COLUMN extra int")
        self.sql(f"INSERT INTO {t} VALUES (3, 'c', TIMESTAMP'2024-01-03 00:00:00', 3)")
        return ["hive-catalog", "uuid-metadata-names"]

    def sql_view(self, name: str) -> list[str]:
        v = f"hive.{NS}.{name}"
        self.sql(
            f"CREATE VIEW {v} (id COMMENT 'the id', s COMMENT 'ünïcødé') COMMENT 'a view' "
            f"TBLPROPERTIES ('team'='analytics') AS SELECT id, s FROM hive.{NS}.hive_table "
            "WHERE id > 0"
        )
        self.sql(f"CREATE OR REPLACE VIEW {v} AS SELECT id, s, extra FROM hive.{NS}.hive_table")
        self.sql(f"ALTER VIEW {v} SET TBLPROPERTIES ('k2'='v2', 'team'='data')")
        self.sql(f"ALTER VIEW {v} UNSET TBLPROPERTIES ('k2')")
        self.sql(f"CREATE OR REPLACE VIEW {v} AS SELECT count(*) AS n FROM hive.{NS}.hive_table")
        return ["view", "view-replace", "view-properties", "gzip-metadata", "view-schema-change"]

    def java_view(self, name: str) -> list[str]:
        jvm, T = self.jvm, self.types()
        catalog = self.iceberg_hive_catalog()
        ident = self.ident(name)
        ns_parts = self.gateway.new_array(jvm.String, 1)
        ns_parts[0] = NS
        namespace = jvm.org.apache.iceberg.catalog.Namespace.of(ns_parts)
        schema = self.schema(
            [
                self.field(1, "id", T.LongType.get(), doc="identifier"),
                self.field(2, "s", T.StringType.get()),
            ]
        )
        view = (
            catalog.buildView(ident)
            .withSchema(schema)
            .withDefaultNamespace(namespace)
            .withDefaultCatalog("hive")
            .withQuery("spark", "SELECT id, s FROM hive_table")
            .withQuery("trino", 'SELECT "id", "s" FROM "hive_table"')
            .withProperty("write.metadata.compression-codec", "none")
            .withProperty("version.history.num-entries", "3")
            .withProperty("comment", "built with the Java API")
            .create()
        )
        for i in range(4):
            schema_i = (
                self.schema(
                    [
                        self.field(1, "id", T.LongType.get()),
                        self.field(2, f"s{i}", T.StringType.get()),
                    ]
                )
                if i % 2
                else schema
            )
            view = catalog.loadView(ident)
            (
                view.replaceVersion()
                .withSchema(schema_i)
                .withDefaultNamespace(namespace)
                .withQuery("spark", f"SELECT id, s AS s{i} FROM hive_table WHERE id > {i}")
                .withQuery("trino", f'SELECT "id", "s" AS "s{i}" FROM "hive_table" WHERE id > {i}')
                .commit()
            )
        catalog.loadView(ident).updateProperties().set("owner-note", "ø").commit()
        return [
            "view",
            "java-api",
            "dialects",
            "default-namespace",
            "version-history-cap",
            "plain-view-metadata",
        ]

    # ------------------------------------------------------------------ run
    def run(self, only: set[str] | None = None) -> None:
        for name, description, fn in self.scenarios():
            if only and name not in only:
                continue
            start = time.monotonic()
            print(f"- {name}", file=sys.stderr)
            features = fn(name)
            self.timings[name] = round(time.monotonic() - start, 2)
            self.tables.append(
                {
                    "name": f"{NS}.{name}",
                    "catalog": "hadoop",
                    "scenario": description,
                    "features": features,
                }
            )
        hive = [h for h in self.hive_scenarios() if not only or h[1] in only]
        if hive:
            self.sql(f"CREATE NAMESPACE IF NOT EXISTS hive.{NS}")
        for kind, name, description, fn in hive:
            start = time.monotonic()
            print(f"- {name}", file=sys.stderr)
            features = fn(name)
            self.timings[name] = round(time.monotonic() - start, 2)
            entry = {
                "name": f"{NS}.{name}",
                "catalog": "hive",
                "scenario": description,
                "features": features,
            }
            (self.views if kind == "view" else self.tables).append(entry)

    def canonical(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Java's canonical JSON of every metadata file (java_metadata.py's canonical op)."""
        tool = JavaMetadata(self.gateway)
        out = {}
        for entry in summary["tables"] + summary["views"]:
            for f in entry["metadata_files"]:
                source = os.path.join(self.out_dir, f["path"])
                result = tool.run({"op": "canonical", "source": source})
                result["source"] = f["path"]
                out[f["path"]] = result
        return out

    def describe(self) -> dict[str, Any]:
        """Summarize every table and view and its metadata files (relative paths)."""
        jvm = self.jvm
        for entry in self.tables + self.views:
            if entry["catalog"] == "hive":
                ns, short = entry["name"].split(".")
                table_dir = os.path.join(self.hive_warehouse, f"{ns}.db", short)
            else:
                table_dir = os.path.join(self.warehouse, *entry["name"].split("."))
            meta_dir = os.path.join(table_dir, "metadata")
            files = []
            for fname in os.listdir(meta_dir):
                # HadoopCatalog: v<N>[.gz].metadata.json; others: <NNNNN>-<uuid>[.gz].metadata.json
                m = re.fullmatch(r"(?:v(\d+)|(\d+)-[0-9a-f-]{36})(\.gz)?\.metadata\.json", fname)
                if not m:
                    continue
                path = os.path.join(meta_dir, fname)
                opener = gzip.open if m.group(3) else open
                with opener(path, "rt", encoding="utf-8") as fh:
                    doc = json.load(fh)
                item = {
                    "path": os.path.relpath(path, self.out_dir),
                    "version": int(m.group(1) or m.group(2)),
                    "format_version": doc["format-version"],
                    "gzip": bool(m.group(3)),
                }
                if "snapshots" in doc or "table-uuid" in doc:
                    item["snapshots"] = len(doc.get("snapshots", []))
                else:
                    item["view_versions"] = len(doc.get("versions", []))
                files.append(item)
            files.sort(key=lambda f: f["version"])
            entry["location"] = os.path.relpath(table_dir, self.out_dir)
            entry["format_versions"] = sorted({f["format_version"] for f in files})
            entry["metadata_files"] = files
        return {
            "iceberg_version": str(jvm.org.apache.iceberg.IcebergBuild.fullVersion()),
            "spark_version": self.spark.version,
            "java_version": str(jvm.java.lang.System.getProperty("java.version")),
            "warehouse": "warehouse",
            "hive_warehouse": "hive-warehouse",
            "tables": self.tables,
            "views": self.views,
            "impossible": self.impossible,
            "timings_s": self.timings,
        }


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = argv[1]
    only = set(argv[2:]) or None
    start = time.monotonic()
    gen = Generator(out_dir)
    try:
        gen.run(only)
        summary = gen.describe()
        canonical = gen.canonical(summary)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        gen.spark.stop()
        shutil.rmtree(gen.scratch, ignore_errors=True)
    summary["generation_s"] = round(time.monotonic() - start, 1)
    with open(os.path.join(gen.out_dir, "tables.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1, ensure_ascii=False)
    with open(os.path.join(gen.out_dir, "canonical.json"), "w", encoding="utf-8") as fh:
        json.dump(canonical, fh, ensure_ascii=False)
    n_files = sum(len(t["metadata_files"]) for t in summary["tables"] + summary["views"])
    print(
        f"{len(summary['tables'])} tables, {len(summary['views'])} views, "
        f"{n_files} metadata files in "
        f"{summary['generation_s']} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
