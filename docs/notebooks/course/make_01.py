# Chinese prose uses full-width punctuation on purpose:
# ruff: noqa: RUF001
"""Write notebooks/course/01-anatomy-of-a-table.ipynb and its Chinese twin (.zh.ipynb).

Run: ``.venv/bin/python docs/notebooks/course/make_01.py``, then execute each notebook with
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
01-anatomy-of-a-table.ipynb`` (and the .zh one) and drop widget state with
``.venv/bin/python docs/notebooks/course/_course.py clean notebooks/course/01-*.ipynb``.
"""

from __future__ import annotations

from _course import Cell, code, md, write

NAME = "01-anatomy-of-a-table"

CELLS: list[Cell] = [
    md("anatomy-question", """
# 01 — Anatomy of a table: what *is* an Iceberg table on disk?

A database shows you rows. Iceberg stores a table as **files that describe other files**
(spec: *Overview*): a **table metadata file** (JSON) points at the current **snapshot**; the
snapshot points at a **manifest list** (Avro); the manifest list points at **manifests** (Avro);
each manifest lists **data files** (here Parquet) with their partition values and column
metrics. Nothing is ever rewritten in place: a commit writes new files and then swaps one
pointer (spec: *Terms*, *Optimistic Concurrency*).

In this lesson we build a tiny table and, at every step, put the **raw file** beside icenb's
drawing of it: the JSON as it is on disk, the Avro records as a reader decodes them, and the
Parquet footer. Paths are shown relative to the warehouse: the temporary folder the lesson
writes into is printed as `warehouse/`.
""", """
# 01 — 表的解剖：一张 Iceberg 表在磁盘上究竟是什么？

数据库给你看的是行。Iceberg 把一张表存成**描述其他文件的文件**（规范：*Overview*）：一个**表元数
据文件**
（JSON）指向当前**快照**；快照指向一个**清单列表**（Avro）；清单列表指向若干**清单**（Avro）；每
个清单列出
**数据文件**（这里是 Parquet）以及它们的分区值和列的指标。文件从不就地改写：一次提交先写新文件，
再原子地
换掉一个指针（规范：*Terms*、*Optimistic Concurrency*）。

本课构建一张很小的表，每一步都把**原始文件**放在 icenb 的图旁边：磁盘上的 JSON 原文、读者解码出
的 Avro
记录、以及 Parquet 文件尾（footer）。路径都相对于仓库显示：本课写入的临时目录打印为 `warehouse/`。
"""),
    code("anatomy-setup", """
import datetime as dt
import json
import os
import tempfile

import pyarrow.parquet as pq

import icenb
from icenb.display.registry import mimebundle
from icenb.exercise import check
from icenb.io.avro import avro_file_metadata, read_avro
from icenb.spec import values

#LANGUAGE
root = tempfile.mkdtemp(prefix="icenb-course-")
wh = icenb.warehouse(root, catalog="filesystem")  # Iceberg's Hadoop layout: no database


def shown(text):
    \"\"\"Text with the temporary folder written as warehouse/.\"\"\"
    return str(text).replace("file://", "").replace(root, "warehouse")


class Shown:
    \"\"\"Any icenb drawing, displayed with the temporary folder written as warehouse/.\"\"\"

    def __init__(self, drawing):
        self.drawing = drawing

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {k: shown(v) for k, v in mimebundle(self.drawing, include, exclude).items()}


def raw_json(location):
    \"\"\"A metadata file as it is on disk, parsed.\"\"\"
    with open(location.replace("file://", ""), encoding="utf-8") as f:
        return json.load(f)


seen = set()


def new_files(table):
    \"\"\"The files under the table's folder that were not there at the last call.\"\"\"
    base = table.location.replace("file://", "")
    now = {os.path.relpath(os.path.join(d, f), base)
           for d, _, fs in os.walk(base) for f in fs if not f.startswith(".")}
    rank = {"json": 0, "text": 1}
    fresh = sorted(now - seen, key=lambda p: (p.startswith("data"), rank.get(p.rsplit(".")[-1], 2),
                                              not os.path.basename(p).startswith("snap-"), p))
    seen.update(now)
    for p in fresh:
        print(p)
"""),
    md("anatomy-terms", """
The spec's *Terms*, each with the file it will be in this lesson:

| term | what it is | here |
|---|---|---|
| schema | names and types of the fields | `schemas` in `v1.metadata.json` |
| partition spec | how partition values derive from data | `partition-specs`: `day(ts)` |
| snapshot | the table's state at one time: all its data files | an object in `snapshots` |
| manifest list | lists the manifests of one snapshot | `snap-….avro` |
| manifest | lists data or delete files (a subset of a snapshot) | `…-m0.avro` |
| data file | holds rows | `data/ts_day=…/….parquet` |
| delete file | marks rows deleted, by position or by value | none here; lesson 04 |
| absolute / relative path | with a URI scheme / resolved against the table location | absolute |

The spec's *Goals* show through the same files: a commit swaps one pointer, so readers never see
half a write (serializable isolation); planning reads one manifest list and only the manifests it
needs, not a directory listing (speed, scale); schemas and specs evolve in metadata (evolution,
lessons 02 and 03); partitioning is table configuration, queries filter on data values (storage
separation, lesson 02).
""", """
规范的 *Terms*（术语），以及本课中对应的文件：

| 术语 | 含义 | 本课中 |
|---|---|---|
| 模式（schema） | 字段的名字和类型 | `v1.metadata.json` 中的 `schemas` |
| 分区规范（partition spec） | 如何从数据字段推导分区值 | `partition-specs`：`ts_day = day(ts)` |
| 快照（snapshot） | 表在某一时刻的状态：它的全部数据文件 | `snapshots` 中的一个对象 |
| 清单列表（manifest list） | 列出一个快照的清单 | `snap-….avro` |
| 清单（manifest） | 列出数据文件或删除文件（快照的一个子集） | `…-m0.avro` |
| 数据文件（data file） | 存放行 | `data/ts_day=…/….parquet` |
| 删除文件（delete file） | 按位置或按值标记被删除的行 | 本课没有；见第 04 课 |
| 绝对 / 相对路径 | 带 URI scheme 的路径 / 相对表位置解析的路径 | icenb 写绝对路径 |

规范的 *Goals*（目标）也体现在这些文件里：一次提交只换一个指针，读者永远看不到写了一半的状态（可
序列化的
隔离）；扫描计划读一个清单列表和所需的清单，而不是列目录（速度、规模）；模式和分区规范在元数据中
演化（演化，
第 02、03 课）；分区是表的配置，查询按数据值过滤（存储分离，第 02 课）。
"""),
    md("anatomy-create-predict", """
## Step 1: create an empty table

*Predict before you run:* an empty table has no rows. How many files does creating it write,
and what are they?
""", """
## 第 1 步：创建一张空表

*先预测再运行*：空表没有行。创建它会写几个文件？分别是什么？
"""),
    code("anatomy-create", """
orders = wh.create_table(
    "shop.orders",
    "order_id long not null, customer string, amount double, ts timestamptz",
    partition_by=["day(ts)"],
    sort_by=["order_id"],
    format_version=2,
)
new_files(orders)
"""),
    md("anatomy-file-system-table", """
Two files. `v1.metadata.json` is the whole table: schema, partition spec, sort order,
properties, and (later) snapshots. `version-hint.text` holds the number of the current version:
this warehouse is a **file-system table** (spec: *File System Tables*), where a commit writes
`v<N+1>.metadata.json` only if no one else did (an atomic create or rename) and the highest
version wins. A **metastore table** (spec: *Metastore Tables*) keeps the same metadata files but
the pointer to the current one lives in a catalog database; we look at one at the end.
""", """
两个文件。`v1.metadata.json` 就是整张表：模式、分区规范、排序顺序、表属性，以及（之后的）快照。
`version-hint.text` 存着当前版本号：这个仓库里的表是**文件系统表**（规范：*File System Tables*）
。提交时只在
没有别人抢先的情况下写出 `v<N+1>.metadata.json`（原子性的创建或 rename 操作），版本号最大的文件
就是当前版本。
**元存储表**（规范：*Metastore Tables*）使用同样的元数据文件，但指向当前文件的指针保存在目录（
catalog）数据库里；
本课最后会看一个。
"""),
    code("anatomy-version-hint", """
meta_dir = orders.location.replace("file://", "") + "/metadata"
with open(f"{meta_dir}/version-hint.text") as hint:
    print(hint.read())
"""),
    md("anatomy-metadata-json-md", """
### The table metadata file, raw

Here is `v1.metadata.json` as written (spec: *Table Metadata Fields*, serialized as
*Appendix C* says). Read it field by field:

- `format-version`, `table-uuid`, `location` (the temporary prefix replaced by `warehouse/`);
- `last-sequence-number`, `last-updated-ms`, `last-column-id` (the highest field id ever
  assigned: new columns get ids above it);
- `schemas` + `current-schema-id` — every schema the table ever had, each with a `schema-id`;
  a field is `{"id", "name", "required", "type"}` (Appendix C, *Schemas*);
- `partition-specs` + `default-spec-id` + `last-partition-id` — a partition field is
  `{"source-id", "field-id", "name", "transform"}`; partition field ids start at 1000
  (Appendix C, *Partition Specs*);
- `sort-orders` + `default-sort-order-id` — a sort field is `{"transform", "source-id",
  "direction", "null-order"}`; order id 0 is reserved for "unsorted" (spec: *Sorting*);
- `properties`, then the history fields, still empty: `snapshots`, `refs`, `snapshot-log`,
  `metadata-log`.
""", """
### 表元数据文件原文

下面是写出来的 `v1.metadata.json`（规范：*Table Metadata Fields*，按 *Appendix C* 序列化）。逐个
字段读：

- `format-version`、`table-uuid`、`location`（临时前缀替换成了 `warehouse/`）；
- `last-sequence-number`、`last-updated-ms`、`last-column-id`（分配过的最大字段id：新列的 id 比
它大）；
- `schemas` + `current-schema-id`：表有过的每个模式，各带一个 `schema-id`；字段的形式是
  `{"id", "name", "required", "type"}`（Appendix C，*Schemas*）；
- `partition-specs` + `default-spec-id` + `last-partition-id`：分区字段的形式是
  `{"source-id", "field-id", "name", "transform"}`，分区字段id 从 1000 开始（Appendix C
，*Partition Specs*）；
- `sort-orders` + `default-sort-order-id`：排序字段
是 `{"transform", "source-id", "direction", "null-order"}`；
  排序顺序 id 0 保留给“未排序”（规范：*Sorting*）；
- `properties`，然后是还空着的历史字段：`snapshots`、`refs`、`snapshot-log`、`metadata-log`。
"""),
    code("anatomy-metadata-json", """
v1 = raw_json(orders.metadata_location)
print(shown(json.dumps(v1, indent=2)))
"""),
    md("anatomy-metadata-card", """
icenb's card of the same table reads that file (and nothing else): the schema, the spec
`ts_day = day(ts)` and the sort order come straight from the JSON above.
""", """
icenb 的表卡片读的就是这个文件（别的都不读）：模式、分区规范 `ts_day = day(ts)` 和排序顺序都直接
来自上面的 JSON。
"""),
    code("anatomy-schema-card", """
orders.schema
"""),
    md("anatomy-append-predict", """
## Step 2: append three rows on two days

*Predict before you run:* the table is partitioned by `day(ts)`, and the rows fall on two
days. How many new files will the append write? (Count data files, manifests, manifest lists
and metadata files.)
""", """
## 第 2 步：追加分布在两天的三行

*先预测再运行*：表按 `day(ts)` 分区，这些行落在两天。这次追加会写几个新文件？（数数据文件、清单
、清单列表和元数据文件。）
"""),
    code("anatomy-append", """
def at(day, hour):
    return dt.datetime(2026, 11, day, hour, tzinfo=dt.timezone.utc)


orders.append([
    {"order_id": 1, "customer": "ada", "amount": 12.5, "ts": at(1, 9)},
    {"order_id": 2, "customer": "bob", "amount": 3.0, "ts": at(1, 17)},
    {"order_id": 3, "customer": "cy", "amount": 40.0, "ts": at(2, 11)},
])
new_files(orders)
"""),
    md("anatomy-append-explained", """
Five files, bottom-up: one **data file per partition** (`data/ts_day=2026-11-01/…` and
`…-02/…`: a data file holds rows of one partition only, spec: *Partitioning*), one
**manifest** listing both (`…-m0.avro`), one **manifest list** for the new snapshot
(`snap-<snapshot id>-…avro`), and `v2.metadata.json`, which adds the snapshot and moves
`main` to it. The drawing shows that chain:
""", """
五个文件，自底向上：**每个分区一个数据文件**（`data/ts_day=2026-11-01/…` 和 `…-02/…`：一个数据文
件只含一个分区
的行，规范：*Partitioning*），一个列出这两个文件的**清单**（`…-m0.avro`），一个属于新快照的**清
单列表**
（`snap-<快照id>-…avro`），以及 `v2.metadata.json`：它加入这个快照并把 `main` 指向它。下图画出这
条链：
"""),
    code("anatomy-metadata-tree", """
orders.metadata_tree()
"""),
    md("anatomy-snapshot-json-md", """
### The snapshot, raw

In `v2.metadata.json` the snapshot is one JSON object (spec: *Snapshots*; Appendix C, *Table
Metadata and Snapshots*): `snapshot-id`, `sequence-number` (1: the first commit),
`timestamp-ms`, a `summary` whose `operation` is `append`, the `manifest-list` location and the
`schema-id` it was written with. `refs` maps the branch `main` to it, and `snapshot-log` /
`metadata-log` start recording history.
""", """
### 快照原文

在 `v2.metadata.json` 中，快照是一个 JSON 对象（规范：*Snapshots*；Appendix C，*Table Metadata and
Snapshots*）：`snapshot-id`、`sequence-number`（1：第一次提交）、`timestamp-ms`
、`operation` 为 `append` 的
`summary`（摘要）、`manifest-list` 的位置，以及写入时所用的 `schema-id`。`refs` 把分支 `main` 映
射到它，
`snapshot-log` 和 `metadata-log` 开始记录历史。
"""),
    code("anatomy-snapshot-json", """
v2 = raw_json(orders.metadata_location)
for key in ["current-snapshot-id", "refs", "snapshots", "snapshot-log", "metadata-log"]:
    print(f'"{key}":', shown(json.dumps(v2[key], indent=2)))
"""),
    md("anatomy-manifest-list-md", """
### The manifest list, raw (Avro)

The manifest list is an Avro file: a header (the Avro schema plus Iceberg's key-value metadata:
`snapshot-id`, `parent-snapshot-id`, `sequence-number`, `format-version`) and one record per
manifest (spec: *Manifest Lists*). icenb decodes it with its own Avro reader
(`icenb.io.avro.read_avro`). Each record says where the manifest is, which spec wrote it,
whether it holds data or deletes (`content` 0 or 1), its sequence numbers, how many files it
added/kept/deleted, and one **partition summary** per partition field: `contains_null`,
`contains_nan` and the lower and upper bound of the partition values in that manifest. Bounds
are stored as bytes (spec: *Appendix D*, single-value serialization: a `date` is 4 bytes,
little-endian days since 1970); we print the decoded value beside them.
""", """
### 清单列表原文（Avro）

清单列表是一个 Avro 文件：文件头（Avro 模式加上 Iceberg 的键值元数据：`snapshot-id`
、`parent-snapshot-id`、
`sequence-number`、`format-version`）和每个清单一条记录（规范：*Manifest Lists*）。icenb 用自己
的 Avro 读取器
（`icenb.io.avro.read_avro`）解码。每条记录说明清单在哪里、由哪个分区规范写出、存的是数据还是删除
（`content` 为 0 或 1）、它的序列号、添加/保留/删除了多少文件，以及每个分区字段一项**分区统计信
息**（partition
summary）：`contains_null`、`contains_nan`，以及该清单中分区值的下界和上界。界值以字节存储（规范
：*Appendix D*
单值序列化：`date` 是 4 个字节，小端序的 1970 年以来的天数）；我们把解码后的值打印在旁边。
"""),
    code("anatomy-manifest-list-raw", """
snapshot = orders.current_snapshot
data = orders.io.new_input(snapshot.manifest_list).read()
header = avro_file_metadata("manifest list", data)
print({k: v.decode() for k, v in header.items() if not k.startswith(("avro.", "iceberg."))})
manifest_list = read_avro("manifest list", data)
print(manifest_list.schema.names)
ts_day = orders.spec.partition_type(orders.schema).fields[0].field_type
for record in manifest_list.to_pylist():
    for key in ["manifest_path", "partition_spec_id", "content", "sequence_number",
                "min_sequence_number", "added_files_count", "added_rows_count"]:
        print(f"{key:20} {shown(record[key])}")
    for summary in record["partitions"]:
        low, high = summary["lower_bound"], summary["upper_bound"]
        low_day, high_day = (values.to_human(ts_day, values.from_bytes(ts_day, b))
                             for b in (low, high))
        print(f"{'partitions':20} contains_null={summary['contains_null']} "
              f"lower_bound={low.hex()} ({low_day}) upper_bound={high.hex()} ({high_day})")
"""),
    md("anatomy-manifest-md", """
### The manifest, raw (Avro)

A manifest's header carries the table `schema`, the `partition-spec` and its id, the
`format-version` and its `content` (`data` or `deletes`); its Avro schema gives every field an
Iceberg **field id** (`status` 0, `snapshot_id` 1, `data_file` 2, …: spec *Appendix A*, Avro,
and the field ids of *Manifest Entry Fields*). Each record is a **manifest entry**
(spec: *Manifest Entry Fields*): `status` (0 existing, 1 added, 2 deleted), `snapshot_id`,
`sequence_number` and `file_sequence_number` — **null here**: a new manifest leaves them out
and readers inherit them from the manifest list (spec: *Sequence Number Inheritance*) — and the
`data_file` struct (spec: *Data File Fields*): path, format, the **partition tuple**,
`record_count`, `file_size_in_bytes`, and the per-column **metrics** keyed by field id:
`value_counts`, `null_value_counts`, `lower_bounds` and `upper_bounds` (Appendix D bytes again),
and the `sort_order_id` the file was written with (1: the table's `order_id` order).
""", """
### 清单原文（Avro）

清单的文件头带有表的 `schema`、`partition-spec` 和它的 id、`format-version` 以及 `content`
（`data` 或
`deletes`）；它的 Avro 模式给每个字段一个 Iceberg **字段id**（`status` 0、`snapshot_id` 1
、`data_file` 2……：
规范 *Appendix A* 的 Avro 部分，以及 *Manifest Entry Fields* 中的字段id）。每条记录是一个**清单
条目**（规范：*Manifest Entry Fields*，清单条目字段）：`status`
（0 现有的、
1 已添加、2 已删除）、`snapshot_id`、`sequence_number` 和 `file_sequence_number`——**这里
是 null**：新清单不写
它们，读者从清单列表继承（规范：*Sequence Number Inheritance*，序列号继承）——以及 `data_file` 结
构（规范：
*Data File Fields*）：路径、格式、**分区元组**、`record_count`、`file_size_in_bytes`，以及按字段
id 存放的各列
**指标**：`value_counts`、`null_value_counts`、`lower_bounds` 和 `upper_bounds`（同样
是 Appendix D 的字节）。
"""),
    code("anatomy-manifest-raw", """
manifest_path = manifest_list.column("manifest_path")[0].as_py()
data = orders.io.new_input(manifest_path).read()
header = avro_file_metadata("manifest", data)
for key in ["format-version", "content", "partition-spec-id", "partition-spec"]:
    print(f"{key:18} {header[key].decode()}")
avro_schema = json.loads(header["avro.schema"])
print("avro.schema       ", [(f["name"], f["field-id"]) for f in avro_schema["fields"]])
entries = read_avro("manifest", data).to_pylist()
print(len(entries), "entries")
for entry in entries:
    f = entry["data_file"]
    print()
    print("status", entry["status"], "| snapshot_id", entry["snapshot_id"],
          "| sequence_number", entry["sequence_number"],
          "| file_sequence_number", entry["file_sequence_number"])
    print("file_path  ", shown(f["file_path"]).split("/shop/orders/")[1])
    print("partition  ", {k: str(v) for k, v in f["partition"].items()},
          "| record_count", f["record_count"], "| sort_order_id", f["sort_order_id"])
    for fid, low in f["lower_bounds"]:
        col = orders.schema.find_field(fid)
        high = dict(f["upper_bounds"])[fid]
        lower, upper = (values.to_human(col.field_type, values.from_bytes(col.field_type, b))
                        for b in (low, high))
        print(f"  field {fid} {col.name:9} lower={lower:26} upper={upper:26}"
              f" nulls={dict(f['null_value_counts'])[fid]}")
"""),
    md("anatomy-manifest-drawing", """
icenb draws the same manifest, its entries and their metrics, with the inherited sequence
numbers filled in:
""", """
icenb 画出同一个清单、它的条目和指标，并填上继承来的序列号：
"""),
    code("anatomy-manifest-card", """
tree = orders.metadata_tree()
Shown(tree.index.manifests[0].manifest)
"""),
    md("anatomy-parquet-md", """
### The data file's own footer (Parquet)

The bounds in the manifest summarize the data file so that a reader can skip it without opening
it. The data file keeps its own statistics in its footer. Iceberg requires every Parquet column
to carry its **field id** (spec: *Appendix A*, Parquet: the `field_id` of the Parquet schema),
because columns are matched by id, never by name (spec: *Column Projection*, lesson 03), and
maps each Iceberg type to a Parquet type: `long` → `INT64`, `double` → `DOUBLE`, `string` →
`BYTE_ARRAY` with the `String` (UTF8) annotation, `timestamptz` → `INT64` with
`Timestamp(isAdjustedToUTC=true, MICROS)`.
""", """
### 数据文件自己的文件尾（Parquet）

清单里的界值概括了数据文件，读者不打开它就能跳过。数据文件在自己的文件尾里保存统计信息。
Iceberg 要求每个
Parquet 列都带着它的**字段id**（规范：*Appendix A*，Parquet：Parquet 模式的 `field_id`），因为列
按 id 匹配，
从不按名字匹配（规范：*Column Projection*，第 03 课）；并且把每种 Iceberg 类型映射为一
种 Parquet 类型：`long` →
`INT64`，`double` → `DOUBLE`，`string` → 带 `String`（UTF8）注解的 `BYTE_ARRAY`，`timestamptz` → 带
`Timestamp(isAdjustedToUTC=true, MICROS)` 的 `INT64`。
"""),
    code("anatomy-parquet-footer", """
first_file = entries[0]["data_file"]["file_path"]
footer = pq.ParquetFile(first_file.replace("file://", "")).metadata
print("rows", footer.num_rows, "| row groups", footer.num_row_groups)
arrow_schema = pq.ParquetFile(first_file.replace("file://", "")).schema_arrow
group = footer.row_group(0)
for i, field in enumerate(arrow_schema):
    stats, column = group.column(i).statistics, footer.schema.column(i)
    logical = str(column.logical_type).split(", is_from_converted_type")[0].removesuffix(")")
    logical += ")" if "(" in logical else ""
    print(f"{field.name:9} field_id={field.metadata[b'PARQUET:field_id'].decode()}"
          f"  {column.physical_type:10} {logical:55} min={stats.min!s:26} max={stats.max}")
"""),
    md("anatomy-second-append-predict", """
## Step 3: a second append

*Predict before you run:* we append one more row. The new snapshot's manifest list — how many
manifests will it list, and what sequence number will the new data file get?
""", """
## 第 3 步：第二次追加

*先预测再运行*：再追加一行。新快照的清单列表会列出几个清单？新数据文件的序列号是多少？
"""),
    code("anatomy-second-append", """
orders.append([{"order_id": 4, "customer": "dee", "amount": 7.25, "ts": at(2, 20)}])
new_files(orders)
s2 = raw_json(orders.metadata_location)["snapshots"][-1]
print("S2: sequence-number", s2["sequence-number"], "| parent-snapshot-id is S1:",
      s2["parent-snapshot-id"] == snapshot.snapshot_id)
label = {entry.snapshot_id: f"S{i}" for i, entry in enumerate(orders.history, 1)}
for m in orders.inspect.manifests().to_pylist():
    days = m["partition_summaries"][0]
    print(f"manifest added by {label[m['added_snapshot_id']]}: "
          f"{m['added_data_files_count']} file(s),"
          f" ts_day from {days['lower_bound']} to {days['upper_bound']}")
"""),
    md("anatomy-second-append-explained", """
The append writes one new manifest for the new file and lists the old manifest again, unchanged:
two manifests, and nothing old was rewritten. (An append merges small manifests only once there
are many: `commit.manifest.min-count-to-merge`, 100 by default, as Iceberg Java's merge append
does.) The new file's data sequence number is 2 (the second commit); the first two files keep 1.
Sequence numbers order commits and decide which deletes apply to which files (spec: *Sequence
Numbers*; lesson 04). The graph draws both snapshots sharing the first manifest:
""", """
追加为新文件写一个新清单，并原样再次列出旧清单：两个清单，没有改写任何旧文件。
（只有清单很多时追加才会
合并小清单：`commit.manifest.min-count-to-merge`，默认 100，与 Iceberg Java 的 merge append 一样。）
新文件的数据序列号是 2（第二次提交）；前两个文件仍是 1。序列号给提交排序，
并决定哪些删除作用于哪些文件
（规范：*Sequence Numbers*；第 04 课）。下图画出两个快照共享第一个清单：
"""),
    code("anatomy-files-seq", """
files = orders.scan().plan().files.to_pandas()
files[["partition", "record_count", "sequence_number"]].sort_values(
    "sequence_number", kind="stable", ignore_index=True)
"""),
    code("anatomy-metadata-graph", """
orders.metadata_graph()
"""),
    md("anatomy-delete-predict", """
## Step 4: a copy-on-write delete

Files are immutable, so deleting order 2 (it shares a file with order 1) in copy-on-write mode
writes a new file with order 1 only and removes the old file from the table.

*Predict before you run:* the manifest that listed the old file cannot be edited either. What
will the new snapshot's manifests say about the old file, the new file, and the file of day 2
that did not change?
""", """
## 第 4 步：写时复制（copy-on-write）删除

文件不可变，所以以写时复制模式删除订单 2（它和订单 1 在同一个文件里）时，会写一个只含订单 1 的新
文件，并把旧文件
从表中移除。

*先预测再运行*：列出旧文件的清单同样不能修改。新快照的清单会怎样记录旧文件、新文件，以及 2 日那
个没有变化的文件？
"""),
    code("anatomy-delete", """
orders.delete("order_id = 2", mode="copy-on-write")
new_files(orders)
snapshot = orders.current_snapshot
print("operation:", snapshot.summary["operation"], "| sequence number:", snapshot.sequence_number)
status_name = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
listing = read_avro("manifest list", orders.io.new_input(snapshot.manifest_list).read())
for m in listing.to_pylist():
    name = os.path.basename(m["manifest_path"])
    print(f"manifest {name}: sequence_number {m['sequence_number']}")
    for e in read_avro("manifest", orders.io.new_input(m["manifest_path"]).read()).to_pylist():
        f = e["data_file"]
        print(f"  {status_name[e['status']]:8} (status {e['status']})"
              f" sequence_number={e['sequence_number']!s:4} file_sequence_number="
              f"{e['file_sequence_number']!s:4} {f['record_count']} row(s), ts_day="
              f"{f['partition']['ts_day']}")
print("files a scan of this snapshot reads:", orders.scan().plan().files_selected,
      "(DELETED entries are not used in a scan)")
"""),
    md("anatomy-delete-explained", """
A manifest entry's `status` says what the snapshot that wrote it did (spec: *Manifest Entry
Fields*): **ADDED** (1) the new file; **DELETED** (2) the old file, kept in the new manifest so
that the change can be read from metadata, and ignored by scans (spec: *Scan Planning*); and
**EXISTING** (0) a file carried over unchanged into a rewritten manifest. Unlike a new file, an
EXISTING or DELETED entry carries its sequence numbers explicitly, the values the file got when it
was added (spec: *Sequence Number Inheritance*). The snapshot's operation is `overwrite`: it both
added and removed data files (a commit that only removes files is a `delete`; spec: *Snapshots*,
`operation`).
""", """
清单条目的 `status` 说明写它的快照做了什么（规范：*Manifest Entry Fields*，清单条目字段）：
**ADDED**（1，已添加）新文件；**DELETED**（2，已删除）旧文件，它留在新清单里，
让变化可以从元数据读出，
扫描时忽略它（规范：*Scan Planning*）；**EXISTING**（0，现有的）原样带入改写后清单的文件。
与新文件不同，
EXISTING 和 DELETED 条目显式带着序列号，即文件被添加时得到的值（规范
：*Sequence Number Inheritance*，
序列号继承）。这个快照的操作是 `overwrite`：它既添加又删除了数据文件（只删除文件的提交是 `delete`；
规范：*Snapshots*，`operation`）。
"""),
    code("anatomy-delete-tree", """
orders.metadata_tree()
"""),
    md("anatomy-catalog-md", """
## Step 5: the same table in a catalog (a metastore table)

`icenb.warehouse(path)` without `catalog="filesystem"` keeps tables in a SQLite catalog with
the schema of Iceberg's JDBC catalog. Metadata files are named `<version>-<uuid>.metadata.json`
(no `version-hint.text`), and a commit is an atomic `UPDATE` of the row's `metadata_location`
from the old value to the new one (spec: *Metastore Tables*).
""", """
## 第 5 步：目录（catalog）中的同一张表（元存储表）

不带 `catalog="filesystem"` 的 `icenb.warehouse(path)` 把表放在一个 SQLite 目录里，使
用 Iceberg JDBC 目录的
表结构。元数据文件名是 `<版本>-<uuid>.metadata.json`（没有 `version-hint.text`），一次提交就是把
这一行的
`metadata_location` 从旧值原子地 `UPDATE` 成新值（规范：*Metastore Tables*）。
"""),
    code("anatomy-catalog-pointer", """
import sqlite3

catalog_root = tempfile.mkdtemp(prefix="icenb-course-")
in_catalog = icenb.warehouse(catalog_root).create_table("shop.orders", orders.schema)
in_catalog.append(orders.to_arrow())
with sqlite3.connect(f"{catalog_root}/catalog.db") as db:
    for row in db.execute("SELECT table_namespace, table_name, metadata_location, "
                          "previous_metadata_location FROM iceberg_tables"):
        print([str(v).replace(catalog_root, "warehouse") for v in row])
"""),
    md("anatomy-exercises", """
## Exercises

Answer from what you saw above; the cell checks your answer against the table.
""", """
## 练习

根据上面看到的内容作答；单元格会用表的实际内容检查你的答案。
"""),
    code("anatomy-exercise-manifests", """
answer = 3  # how many manifests does the current snapshot's manifest list hold?
check(answer, expected=len(orders.inspect.manifests()),
      hint="count the manifests step 4 printed: new ones, kept ones and rewritten ones")
""", wrong="2"),
    code("anatomy-exercise-metadata-files", """
answer = 4  # how many vN.metadata.json files does the file-system table have now?
check(answer, expected=len([f for f in os.listdir(meta_dir) if f.endswith(".metadata.json")]),
      hint="one for the create, one per commit")
""", wrong="3"),
    code("anatomy-exercise-seq", """
answer = 2  # the data sequence number of the file that holds order 4
files = orders.scan("order_id = 4").plan().files
check(answer, expected=files.column("sequence_number")[0].as_py(),
      hint="each commit gets the next sequence number")
""", wrong="1"),
    md("anatomy-next", """
**What we saw:** metadata JSON → snapshot → manifest list → manifests → data files, each read
raw beside its drawing; Appendix C's JSON for schema, spec, sort order, snapshot and refs;
Appendix D bytes for bounds; field ids in Parquet (Appendix A); file-system tables vs a catalog
pointer.

Next: [02 — Hidden partitioning and pruning](02-hidden-partitioning-and-pruning.ipynb): how those
partition summaries and bounds let a query skip most of the table.
""", """
**本课看到了**：元数据 JSON → 快照 → 清单列表 → 清单 → 数据文件，每一层都把原始文件放在图旁边读
；Appendix C 中
模式、分区规范、排序顺序、快照和引用的 JSON；界值的 Appendix D 字节；Parquet 中的字段id（
Appendix A）；文件系统表
与目录指针。

下一课：[02 — 隐藏分区与剪枝](02-hidden-partitioning-and-pruning.zh.ipynb)：分区统计信息和界值如
何让一次查询跳过
表的大部分。
"""),
]


def main() -> None:
    for lang in ("en", "zh"):
        print(write(CELLS, NAME, lang))


if __name__ == "__main__":
    main()
