# Chinese prose uses full-width punctuation on purpose:
# ruff: noqa: RUF001
"""Write notebooks/course/02-hidden-partitioning-and-pruning.ipynb and its Chinese twin.

Run: ``.venv/bin/python docs/notebooks/course/make_02.py``, then execute each notebook with
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
02-hidden-partitioning-and-pruning.ipynb`` (and the .zh one) and drop widget state with
``.venv/bin/python docs/notebooks/course/_course.py clean notebooks/course/02-*.ipynb``.
"""

from __future__ import annotations

from _course import Cell, code, md, write

NAME = "02-hidden-partitioning-and-pruning"

CELLS: list[Cell] = [
    md("pruning-question", """
# 02 — Hidden partitioning and pruning: how does a query on `ts` read only the days it needs?

A table of click events is partitioned by **day** of its timestamp and by a **bucket** of the
customer id. Nobody who queries it ever names a partition column: they filter on `ts` and
`customer_id`, the columns they know. Iceberg derives the partition filter from the query
(spec: *Partitioning*: "the correct partition filters are always derived from column
predicates") — **hidden partitioning** — and then skips, without opening them:

1. whole **manifests**, by the partition ranges the manifest list keeps for each one;
2. **data files**, by their partition values;
3. more data files, by their **column bounds** (lower/upper value of each column).

This lesson makes every skip visible, with the reason (spec: *Scan Planning*).
""", """
# 02 — 隐藏分区与剪枝：按 `ts` 查询时，怎样只读需要的那几天？

一张点击事件表按时间戳的**天**和客户 id 的**桶**分区。查询它的人从不写分区列：他们按自己知道的
列 `ts` 和
`customer_id` 过滤。Iceberg 从查询推导出分区过滤条件（规范：*Partitioning*：“正确的分区过滤条件
总是由列谓词
推导出来”）——这就是**隐藏分区**——然后不打开文件就跳过：

1. 整个**清单**：依据清单列表为每个清单保存的分区范围（分区统计信息）；
2. **数据文件**：依据它们的分区值；
3. 更多的数据文件：依据它们的**列界值**（每列的下界和上界）。

本课让每一次跳过都看得见，并给出原因（规范：*Scan Planning*，扫描计划）。
"""),
    code("pruning-setup", """
import datetime as dt
import tempfile

import pandas as pd

import icenb
from icenb.display.registry import mimebundle
from icenb.errors import IcebergError
from icenb.exercise import check
from icenb.io.avro import read_avro
from icenb.spec.evaluators import row_evaluator
from icenb.spec.expression_parser import parse
from icenb.spec.expressions import bind
from icenb.spec.manifest_evaluator import ManifestEvaluator, decode_field_summaries
from icenb.spec.metrics_evaluator import FileMetrics, inclusive_match
from icenb.spec.projection import project_inclusive, project_inclusive_bound, project_strict
from icenb.spec.values import coerce

#LANGUAGE
pd.set_option("display.width", 120)
pd.set_option("display.max_colwidth", 80)
root = tempfile.mkdtemp(prefix="icenb-course-")
wh = icenb.warehouse(root)


class Shown:
    \"\"\"Any icenb drawing, displayed with the temporary folder written as warehouse/.\"\"\"

    def __init__(self, drawing):
        self.drawing = drawing

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = mimebundle(self.drawing, include, exclude)
        return {k: v.replace("file://", "").replace(root, "warehouse") for k, v in bundle.items()}


events = wh.create_table(
    "web.events",
    "event_id long not null, customer_id int, amount double, ts timestamptz",
    partition_by=["day(ts)", "bucket(4, customer_id)"],
    # keep one manifest per append (an append merges small manifests by default, lesson 06)
    properties={"commit.manifest-merge.enabled": "false"},
)
event_id = 0
for day in range(1, 31):  # one append a day: 30 commits, 30 manifests
    batch = []
    for k in range(40):
        event_id += 1
        batch.append({"event_id": event_id, "customer_id": event_id * 7 % 50,
                      "amount": float(event_id * 37 % 500),
                      "ts": dt.datetime(2026, 11, day, k % 24, k, tzinfo=dt.timezone.utc)})
    events.append(batch)
print(len(events.inspect.manifests()), "manifests,", len(events.inspect.files()), "data files,",
      events.current_snapshot.summary["total-records"], "rows")
"""),
    md("pruning-hidden-md", """
## Hidden partitioning

The rows we appended had no `ts_day` and no bucket column. The partition spec says how to derive
them (spec: *Partition Transforms*): `ts_day = day(ts)` and `customer_id_bucket =
bucket[4](customer_id)`. icenb computed them while writing, split each day's batch into one
file per bucket, and recorded the values in the manifests. The spec and one day's files:
""", """
## 隐藏分区

我们追加的行里没有 `ts_day`，也没有桶列。分区规范说明如何推导它们（规范：*Partition Transforms*
，转换）：
`ts_day = day(ts)` 以及 `customer_id_bucket = bucket[4](customer_id)`。icenb 在写入时计算它们，
把每天的
一批行按桶拆成每桶一个文件，并把分区值记录在清单里。分区规范和某一天的文件：
"""),
    code("pruning-spec", """
events.spec
"""),
    code("pruning-partitions", """
files = events.inspect.files().to_pandas()
files["ts_day"] = files["partition"].map(lambda p: str(p["ts_day"]))
files["customer_id_bucket"] = files["partition"].map(lambda p: p["customer_id_bucket"])
one_day = files[files["ts_day"] == "2026-11-01"]
one_day[["ts_day", "customer_id_bucket", "record_count"]].sort_values(
    "customer_id_bucket", ignore_index=True)
"""),
    md("pruning-day-predict", """
## 1. Skipping manifests: a filter on `ts`

Each daily append wrote its own manifest, so the manifest list holds 30 manifests, each
summarizing one day. (The table was created with `commit.manifest-merge.enabled=false` so that
they stay apart: by default an append merges small manifests once there are 100 of them, and
those of an older partition spec at once, as Iceberg Java's merge append does; lesson 06 rewrites
manifests on purpose.)

*Predict before you run:* the query asks for `ts >= 2026-11-25T00:00Z`. How many of the 30
manifests will planning skip?
""", """
## 1. 跳过清单：按 `ts` 过滤

每天的追加写了自己的清单，所以清单列表里有 30 个清单，每个概括一天。（建表时设置了
`commit.manifest-merge.enabled=false`，让它们保持分开：默认情况下，
小清单达到 100 个时追加会合并它们，
旧分区规范的清单则立即合并，与 Iceberg Java 的 merge append 一样；第 06 课会专门改写清单。）

*先预测再运行*：查询条件是 `ts >= 2026-11-25T00:00Z`。扫描计划会跳过 30 个清单中的几个？
"""),
    code("pruning-plan-day", """
late = "ts >= '2026-11-25T00:00:00+00:00'"
plan = events.scan(late).plan()
print(f"manifests skipped: {plan.manifests_skipped} of {plan.manifests_total}; data files read: "
      f"{plan.files_selected} of {len(events.inspect.files())}")
Shown(plan)
"""),
    md("pruning-why-md", """
### Why: the manifest list's partition summaries

Planning never opened 24 manifests. To see why, we redo planning by hand with icenb's spec
layer, the same evaluators the planner uses. `explain(table, filter)` reads the manifest list
raw (as in lesson 01) and, for each manifest, projects the filter onto the manifest's own
partition spec and tests it against the manifest's **partition summaries** (lower and upper
partition value per field). For each manifest it keeps, it reads the entries and tests each live
data file, first by its **partition tuple**, then by its **column metrics**
(`inclusive_match`: "could any row of this file match?").
""", """
### 原因：清单列表中的分区统计信息

有 24 个清单从未被打开。为了看清原因，我们用 icenb 的规范层手工重做一遍扫描计划，用的正是计划器
使用的求值器。
`explain(table, filter)` 像第 01 课那样读取清单列表原文，对每个清单把过滤条件投影到该清单自己的
分区规范上，
并用清单的**分区统计信息**（每个分区字段的分区值下界和上界）检验。对保留下来的每个清单，它读出条
目，逐个检验
存活的数据文件：先看它的**分区元组**，再看它的**列指标**（`inclusive_match`：“这个文件中有没有可
能有行匹配？”）。
"""),
    code("pruning-explain-helper", """
def human(spec, schema, i, value):
    \"\"\"A partition value as people write it: 2026-11-30 (a day), 2026-11-30-18 (an hour).\"\"\"
    field = spec.fields[i]
    return field.transform.to_human_string(schema.find_type(field.source_ids[0]), value)


def explain(table, row_filter):
    \"\"\"Every manifest and live data file of the current snapshot, and why planning reads or
    skips it (spec: Scan Planning).\"\"\"
    expr, schema, io = parse(row_filter), table.schema, table.io
    listing = read_avro("manifest list", io.new_input(table.current_snapshot.manifest_list).read())
    manifests, data_files = [], []
    for m in listing.to_pylist():
        spec = table.metadata.specs_by_id[m["partition_spec_id"]]
        ptype = spec.partition_type(schema)
        summaries = decode_field_summaries(ptype, m["partitions"])
        keep = ManifestEvaluator.for_row_filter(spec, schema, expr).eval(summaries)
        name = f"M{len(manifests) + 1}"
        manifests.append({
            "manifest": name, "spec": spec.spec_id,
            "partition ranges": ", ".join(
                f"{f.name} {human(spec, schema, i, s.lower_bound)}.."
                f"{human(spec, schema, i, s.upper_bound)}"
                for i, (f, s) in enumerate(zip(ptype.fields, summaries, strict=True))),
            "planning": "read" if keep else "skipped: partition summaries"})
        if not keep:
            continue
        partition_may_match = row_evaluator(project_inclusive_bound(spec, schema, expr))
        bound = bind(expr, schema)
        for entry in read_avro("manifest", io.new_input(m["manifest_path"]).read()).to_pylist():
            if entry["status"] == 2:  # DELETED entries are not used in a scan
                continue
            f = entry["data_file"]
            part = {pf.field_id: coerce(pf.field_type, v)
                    for pf, v in zip(ptype.fields, f["partition"].values(), strict=True)}
            metrics = FileMetrics.from_serialized(
                schema, f["record_count"], dict(f["value_counts"]), dict(f["null_value_counts"]),
                dict(f["nan_value_counts"] or []), dict(f["lower_bounds"]),
                dict(f["upper_bounds"]))
            if not partition_may_match(part):
                why = "skipped: partition value"
            elif not inclusive_match(bound, metrics):
                why = "skipped: column bounds"
            else:
                why = "read"
            data_files.append({
                "manifest": name,
                "partition": ", ".join(f"{pf.name}={human(spec, schema, i, part[pf.field_id])}"
                                       for i, pf in enumerate(ptype.fields)),
                "event_id bounds": f"{metrics.lower_bounds[1]}..{metrics.upper_bounds[1]}",
                "planning": why})
    return pd.DataFrame(manifests), pd.DataFrame(data_files)


manifests, data_files = explain(events, late)
manifests
"""),
    md("pruning-why-day-md", """
`M1` is the newest manifest (the manifest list puts the last append first). The six manifests
whose `ts_day` range reaches 2026-11-25 are read; the other 24 are skipped on their summaries
alone. Inside the six, every file may match, so all 24 files are read:
""", """
`M1` 是最新的清单（清单列表把最后一次追加放在最前面）。`ts_day` 范围到达 2026-11-25 的六个清单被
读取；
其余 24 个仅凭分区统计信息就被跳过。这六个清单里的每个文件都可能匹配，所以 24 个文件全部读取：
"""),
    code("pruning-why-day-files", """
data_files["planning"].value_counts()
"""),
    md("pruning-inclusive-md", """
## 2. Inclusive and strict projection

How does `ts >= …` become a test on `ts_day`? By **projection** through the partition
transform (spec: *Scan Planning*). The spec's example: for a table partitioned by
`ts_day = day(ts)`, the scan predicate `ts > X` has the **inclusive projection**
`ts_day >= day(X)`: every row matching `ts > X` lies in a partition matching
`ts_day >= day(X)`. It is *inclusive* because it may also admit rows that do not match (the
rest of day X). The **strict projection** (note 1) matches a partition only if *every* row in it
must match: `ts_day > day(X)`. A transform that cannot say anything projects to `true`
(inclusive) or `false` (strict) — a bucket cannot answer a range, and no partition field is
derived from `event_id`:
""", """
## 2. 包含投影与严格投影

`ts >= …` 如何变成对 `ts_day` 的检验？通过分区转换做**投影**（规范：*Scan Planning*）。规范中的
例子：
按 `ts_day = day(ts)` 分区的表，扫描谓词 `ts > X` 的**包含投影**（inclusive projection）是
`ts_day >= day(X)`：每一行匹配 `ts > X` 的数据都位于匹配 `ts_day >= day(X)` 的分区中。它之所以“
包含”，
是因为它也可能放进不匹配的行（X 当天的其余部分）。**严格投影**（strict projection，注 1）只在分区中
*每一行*都必然匹配时才匹配该分区：`ts_day > day(X)`。无法给出判断的转换，包含投影为 `true`，严格
投影为
`false`——桶回答不了范围问题，而 `event_id` 上没有分区字段：
"""),
    code("pruning-inclusive-projection", """
X = "'2026-11-25T10:00:00+00:00'"
for predicate in [f"ts > {X}", f"ts >= {X}", f"ts < {X}", f"ts = {X}",
                  "customer_id = 7", "customer_id != 7", "customer_id in (7, 8)",
                  "event_id > 100"]:
    expr = parse(predicate)
    print(f"{predicate:38} inclusive: {project_inclusive(events.spec, events.schema, expr)!s:42}"
          f" strict: {project_strict(events.spec, events.schema, expr)}")
"""),
    md("pruning-strict-md", """
The strict projection decides the **residual**: the part of the filter a reader must still check
row by row in each file. For `ts > 2026-11-28T12:00Z`, files of days 29 and 30 match strictly
(residual `true`: every row matches, no row-level filtering needed), while files of day 28
match only inclusively and keep the residual `ts > …`. The plan's tasks carry it:
""", """
严格投影决定**残余过滤条件**（residual）：读者在每个文件里仍需逐行检查的那部分过滤条件。对
`ts > 2026-11-28T12:00Z`，29 日和 30 日的文件严格匹配（残余为 `true`：每行都匹配，无需逐行过滤），
28 日的文件只包含匹配，保留残余 `ts > …`。计划中的任务带着残余条件：
"""),
    code("pruning-strict-residual", """
noon = events.scan("ts > '2026-11-28T12:00:00+00:00'").plan()
tasks = pd.DataFrame(
    {"ts_day": human(events.spec, events.schema, 0, task.data_file.partition[0]),
     "bucket": task.data_file.partition[1],
     "residual": str(task.residual_filter)} for task in noon.tasks)
tasks.sort_values(["ts_day", "bucket"], ignore_index=True)
"""),
    md("pruning-bucket-predict", """
## 3. Skipping files by partition value: a bucket

*Predict before you run:* add `customer_id = 7` to the filter. The manifests read stay the
same six. How many of their 24 files will be read?
""", """
## 3. 按分区值跳过文件：桶

*先预测再运行*：在过滤条件里加上 `customer_id = 7`。读取的清单仍是那六个。它们的 24 个文件中会读
几个？
"""),
    code("pruning-bucket", """
late_customer = late + " and customer_id = 7"
plan = events.scan(late_customer).plan()
print(f"manifests skipped: {plan.manifests_skipped} of {plan.manifests_total}; data files read: "
      f"{plan.files_selected} of {len(events.inspect.files())}")
manifests, data_files = explain(events, late_customer)
data_files.head(8)
"""),
    md("pruning-bucket-hash-md", """
Why bucket 3? `bucket[N]` is `(murmur3_x86_32(value) & Integer.MAX_VALUE) % N` (spec: *Bucket
Transform Details*), with the hash of each type defined in *Appendix B* (an `int` hashes as the
8-byte little-endian `long`, so `34` and `34L` land in the same bucket). Notebook
[01 — Types and transforms](../01-types-and-transforms.ipynb) checks every Appendix B example
(cell `a46d979a`); here is the one value the filter needs:
""", """
为什么是桶 3？`bucket[N]` 等于 `(murmur3_x86_32(value) & Integer.MAX_VALUE) % N`（规范
：*Bucket Transform
Details*），每种类型的哈希在 *Appendix B* 中定义（`int` 按 8 字节小端序的 `long` 哈希，所
以 `34` 和 `34L`
落在同一个桶）。笔记本 [01 — 类型与转换](../01-types-and-transforms.ipynb) 检验了 Appendix B 的
全部例子
（单元格 `a46d979a`）；这里只算过滤条件需要的那一个值：
"""),
    code("pruning-bucket-hash", """
from icenb.spec.transforms import BucketTransform, bucket_hash
from icenb.spec.types import IntegerType, LongType

h = bucket_hash(IntegerType(), 7)
print("murmur3(7) =", h, "| bucket[4](7) =", (h & 0x7FFFFFFF) % 4,
      "| icenb's transform:", BucketTransform(4).apply(IntegerType(), 7))
print("Appendix B: hash(34) =", bucket_hash(IntegerType(), 34),
      "= hash(34L) =", bucket_hash(LongType(), 34))
"""),
    md("pruning-metrics-predict", """
## 4. Skipping files by column bounds (metrics)

`event_id` is not a partition source, so partition summaries cannot help: every manifest is
read. But each manifest entry keeps the lower and upper `event_id` of its file (spec: *Manifests*,
`lower_bounds` / `upper_bounds`), and event ids grow with time.

*Predict before you run:* `event_id between 100 and 130`. How many manifests are skipped, and
how many of the 120 files are read?
""", """
## 4. 按列界值（指标）跳过文件

`event_id` 不是分区的源列，所以分区统计信息帮不上忙：每个清单都要读。但每个清单条目都保存了它的
文件中
`event_id` 的下界和上界（规范：*Manifests*，`lower_bounds` / `upper_bounds`），而事件 id 随时间
增长。

*先预测再运行*：`event_id between 100 and 130`。跳过几个清单？120 个文件中读几个？
"""),
    code("pruning-metrics", """
by_id = "event_id between 100 and 130"
plan = events.scan(by_id).plan()
print(f"manifests skipped: {plan.manifests_skipped} of {plan.manifests_total}; data files read: "
      f"{plan.files_selected} of {len(events.inspect.files())}")
manifests, data_files = explain(events, by_id)
print(data_files["planning"].value_counts().to_string())
data_files[data_files["planning"] == "read"]
"""),
    md("pruning-metrics-weak-md", """
Bounds prune only when values cluster by file. `amount` is spread evenly over every file, so
each file's bounds span nearly the whole range and a filter on it skips (almost) nothing — the
reason writers sort data (spec: *Sorting*; lesson 06 compacts a table into sorted files):
""", """
只有当值按文件聚集时，界值才能剪枝。`amount` 在每个文件中分布均匀，每个文件的界值几乎覆盖整个取
值范围，
对它的过滤（几乎）什么也跳不过——这正是写入者要排序数据的原因（规范：*Sorting*；第 06 课把表合并
成有序文件）：
"""),
    code("pruning-metrics-weak", """
plan = events.scan("amount >= 490").plan()
print(f"amount >= 490: data files read: {plan.files_selected} of {len(events.inspect.files())}")
"""),
    md("pruning-evolution-md", """
## 5. Partition evolution: old files keep their old spec

Traffic grew; from December the table is partitioned by **hour** instead of day. Partition
evolution changes the spec for new data only (spec: *Partition Evolution*): a new spec with a new
id, field ids kept for the fields that stay (`customer_id_bucket` keeps 1001), a new field id for
`ts_hour`, and no data file rewritten. Planning converts the filter "using the partition spec
that was used to write the manifest file regardless of the current partition spec" (spec: *Scan
Planning*).
""", """
## 5. 分区演化：旧文件保留旧的分区规范

流量增长了；从十二月起表改为按**小时**而不是按天分区。分区演化只改变新数据的分区规范（规范
：*Partition
Evolution*，分区演化）：一个带新 id 的新分区规范，保留下来的字段沿用原来的分区字段id
（`customer_id_bucket` 仍是 1001），`ts_hour` 得到新的分区字段id，不改写任何数据文件。扫描计划“
使用写出该清单
文件时的分区规范，而不管当前的分区规范”来转换过滤条件（规范：*Scan Planning*）。
"""),
    code("pruning-evolve-spec", """
with events.update_spec() as update:
    update.remove_field("ts_day")
    update.add_field("hour(ts)")
events.append([{"event_id": 1200 + k, "customer_id": k % 50, "amount": 1.0,
                "ts": dt.datetime(2026, 12, 1, k % 24, tzinfo=dt.timezone.utc)}
               for k in range(1, 49)])
events.spec_history()
"""),
    md("pruning-evolution-predict", """
*Predict before you run:* `ts >= 2026-11-30T18:00Z`. Which manifests are read: how many written
with spec 0 (by day), how many with spec 1 (by hour)?
""", """
*先预测再运行*：`ts >= 2026-11-30T18:00Z`。哪些清单会被读取：用分区规范 0（按天）写出的有几个，
用分区规范 1
（按小时）写出的有几个？
"""),
    code("pruning-evolved-plan", """
evening = "ts >= '2026-11-30T18:00:00+00:00'"
manifests, data_files = explain(events, evening)
print("projected onto spec 0:", project_inclusive(events.metadata.specs_by_id[0], events.schema,
                                                  parse(evening)))
hour = project_inclusive(events.spec, events.schema, parse(evening))
print(f"projected onto spec 1: {hour}  (hour {hour.literal} is "
      f"{human(events.spec, events.schema, 1, hour.literal)})")
manifests.head(4)
"""),
    md("pruning-evolved-files-md", """
The December manifest (`M1`, spec 1) is tested with the `ts_hour` projection (an hour partition
value is a number of hours since 1970; `2026-11-30-18` is how people read it); every December hour
is after the filter, so all its files are read. The November 30 manifest (spec 0) is tested with
the `ts_day` projection; the 29 older manifests are skipped. The files each kept manifest gives:
""", """
十二月的清单（`M1`，分区规范 1）用 `ts_hour` 的投影检验（小时分区值是 1970 年以来的小时数，人们读作
`2026-11-30-18`）；十二月的每个小时都在过滤条件之后，所以它的文件全部读取；
11 月 30 日的清单（分区规范 0）用 `ts_day` 的投影检验；更早的 29 个清单被跳过。每个保留下来的清
单给出的文件：
"""),
    code("pruning-evolved-files", """
data_files.groupby(["manifest", "planning"]).size()
"""),
    md("pruning-spec-rules-md", """
## 6. The partition spec's own rules

A few rules of *Partitioning* and *Partition Evolution*, each acted on a scratch table so that
`web.events` stays as it is:

- two specs with the same fields (source ids, transforms, names) are **equivalent**: a writer
  must not create a new spec when an equivalent one exists, and must **reuse the partition field
  id** of an equivalent field. Going from day to hour and back to day makes spec 0 current again;
- in **v1**, partition field ids were not tracked, so a field is never really dropped: it is
  replaced by the `void` transform (always null) to keep the positions of the others;
- a source column must be a **primitive** (not a map or a list, possibly nested in a struct);
- a field with an **unknown transform** is ignored for filtering: its inclusive projection is
  `true` and its strict projection `false` (spec: *Scan Planning*).
""", """
## 6. 分区规范自身的规则

*Partitioning* 和 *Partition Evolution* 中的几条规则，每条都在一张临时表上演示，`web.events` 保
持不变：

- 字段相同（源列id、转换、名字都相同）的两个分区规范是**等价**的：已有等价规范时，写入者不得创建
新规范，
  并且必须**沿用**等价字段的**分区字段id**。从按天改为按小时再改回按天，分区规范 0 重新成为当前
规范；
- 在 **v1** 中没有跟踪分区字段id，所以字段从不真正删除：它被替换为 `void` 转换（总是 null），以
保持其他字段的位置；
- 源列必须是**基本类型**（不能是 map 或 list，可以嵌套在 struct 中）；
- **未知转换**的字段在过滤时被忽略：它的包含投影为 `true`，严格投影为 `false`（规范
：*Scan Planning*）。
"""),
    code("pruning-spec-rules", """
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.transforms import parse_transform


def specs(table):
    return {s.spec_id: [f"{f.field_id}: {f.name} {f.transform}" for f in s.fields]
            for s in table.metadata.specs_by_id.values()}


scratch = wh.create_table("web.scratch", "id long, ts timestamptz, tags map<string, string>",
                          partition_by=["day(ts)"])
with scratch.update_spec() as update:
    update.remove_field("ts_day")
    update.add_field("hour(ts)")
with scratch.update_spec() as update:
    update.remove_field("ts_hour")
    update.add_field("day(ts)")
print("equivalent spec reused: current spec", scratch.spec.spec_id, specs(scratch))

old = wh.create_table("web.v1_table", "id long, ts timestamptz",
                      partition_by=["day(ts)", "bucket(4, id)"], format_version=1)
with old.update_spec() as update:
    update.remove_field("ts_day")
print("v1, ts_day removed:", specs(old)[old.spec.spec_id])

try:
    with scratch.update_spec() as update:
        update.add_field("tags")
except IcebergError as e:
    print("a map as source:", type(e).__name__, e)

future = PartitionSpec(spec_id=0, fields=(PartitionField(
    source_ids=(1,), field_id=1000, transform=parse_transform("zorder[2]"), name="z"),))
print("unknown transform zorder[2]: inclusive", project_inclusive(future, scratch.schema,
      parse("id = 5")), "| strict", project_strict(future, scratch.schema, parse("id = 5")))
"""),
    md("pruning-float-partitions-md", """
Partition values of `float` and `double` columns are equal only when their IEEE 754 bits are
equal, NaNs normalized first (spec: *Scan Planning*, note 3): `0.0` and `-0.0` are two
partitions. A filter `x = 0.0` matches rows of both (as numbers they are equal), so planning
keeps both files:
""", """
`float` 和 `double` 列的分区值只有在 IEEE 754 位模式相同时才相等（先规范化 NaN；
规范：*Scan Planning*，
注 3）：`0.0` 和 `-0.0` 是两个分区。过滤条件 `x = 0.0` 匹配两者的行（作为数值它们相等），
所以扫描计划保留两个文件：
"""),
    code("pruning-float-partitions", """
floats = wh.create_table("web.floats", "x double, n long", partition_by=["x"])
floats.append([{"x": 0.0, "n": 1}, {"x": -0.0, "n": 2}, {"x": float("nan"), "n": 3}])
print("partitions:", [str(f["partition"]["x"]) for f in floats.inspect.files().to_pylist()])
print("x = 0.0 plans", floats.scan("x = 0.0").plan().files_selected, "files and reads",
      floats.scan("x = 0.0").to_arrow().to_pylist())
"""),
    md("pruning-sorting-md", """
### Sorting

A **sort order** (spec: *Sorting*) lists sort fields — a source column, a transform, `asc` or
`desc`, `nulls-first` or `nulls-last` — and each data file records the `sort_order_id` it was
written with (lesson 01 prints the JSON and the manifest field; order id 0 means unsorted).
Sorted files make bounds narrow, which is what metrics pruning needs. Floating-point values sort
as Java does: `-NaN < -Infinity < -value < -0 < 0 < value < Infinity < NaN`:
""", """
### 排序

**排序顺序**（规范：*Sorting*）列出排序字段——源列、转换、`asc` 或 `desc`
、`nulls-first` 或 `nulls-last`——
每个数据文件记录写它时所用的 `sort_order_id`（第 01 课打印了 JSON 和清单字段；排序顺序 id 0 表示
未排序）。
排好序的文件界值窄，正是按指标剪枝所需要的。浮点数的排序与 Java 相同：
`-NaN < -Infinity < -value < -0 < 0 < value < Infinity < NaN`：
"""),
    code("pruning-sort-floats", """
import math
import struct

from icenb.spec.types import DoubleType
from icenb.spec.values import sort_key, to_human

negative_nan = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
doubles = [1.0, math.inf, float("nan"), -0.0, negative_nan, -math.inf, 0.0, -2.5]


def shown(v):
    sign = "-" if math.isnan(v) and math.copysign(1, v) < 0 else ""
    return sign + to_human(DoubleType(), v)


print(" < ".join(shown(v) for v in sorted(doubles, key=lambda v: sort_key(DoubleType(), v))))
"""),
    md("pruning-transforms-md", """
### The transforms, for reference

The spec's *Partition Transforms* table (identity, `bucket[N]`, `truncate[W]`, `year`, `month`,
`day`, `hour`, `void`), the *Truncate Transform Details* examples and the vectorized
transforms are acted out in notebook [01 — Types and transforms](../01-types-and-transforms.ipynb)
(cells `aa9ae784` to `b155e45e`). Every one of them projects as above: time transforms and
truncate project ranges, bucket projects only `=` and `in` (inclusive) or `!=` and `not in`
(strict), `void` projects to `true` / `false`.
""", """
### 转换一览

规范的 *Partition Transforms* 表（identity、`bucket[N]`、`truncate[W]`、`year`、`month`、`day`
、`hour`、
`void`）、*Truncate Transform Details* 的例子以及向量化转换，都在笔记本
[01 — 类型与转换](../01-types-and-transforms.ipynb) 中演示（单元格 `aa9ae784` 到 `b155e45e`）。
它们都按上面的方式
投影：时间转换和 truncate 投影范围谓词；bucket 只投影 `=` 和 `in`（包含投影）或 `!=` 和 `not in`
（严格投影）；
`void` 投影为 `true` / `false`。
"""),
    md("pruning-exercises", """
## Exercises

Answer first, then run: the cell checks your answer against the table.
""", """
## 练习

先作答再运行：单元格会用表的实际内容检查你的答案。
"""),
    code("pruning-exercise-manifests", """
answer = 28  # how many of the 31 manifests does `ts < 2026-11-04T00:00Z` skip?
early = events.scan("ts < '2026-11-04T00:00:00+00:00'").plan()
check(answer, expected=early.manifests_skipped,
      hint="three November days are before the cut; remember the December manifest")
""", wrong="27"),
    code("pruning-exercise-last-day", """
answer = "2026-11-09"  # the last ts_day the inclusive projection of `ts < 2026-11-10T00:00Z` keeps
manifests, data_files = explain(events, "ts < '2026-11-10T00:00:00+00:00'")
kept = data_files[data_files["planning"] == "read"]["partition"]
check(answer, expected=max(p.split(",")[0].removeprefix("ts_day=") for p in kept),
      hint="midnight of the 10th is excluded by '<': the projection is ts_day <= day(X - 1 µs)")
""", wrong='"2026-11-10"'),
    code("pruning-exercise-bucket-files", """
answer = 31  # how many data files does `customer_id = 7` read (all days, both specs)?
check(answer, expected=events.scan("customer_id = 7").plan().files_selected,
      hint="one bucket per November day, plus the December files whose bucket is 3")
""", wrong="30"),
    md("pruning-next", """
**What we saw:** a filter on `ts` skipped 24 of 30 manifests on their partition summaries
(hidden partitioning); the spec's inclusive projection `ts > X` → `ts_day >= day(X)` and its
strict twin, which gives residuals; a bucket filter skipping files by partition value (Appendix
B's hash); column bounds skipping files on a non-partition column; and, after partition
evolution, each manifest planned with the spec that wrote it.

Next: [03 — Schema evolution](03-schema-evolution.ipynb).
""", """
**本课看到了**：按 `ts` 过滤时，仅凭分区统计信息就跳过了 30 个清单中的 24 个（隐藏分区）；规范中
的包含投影
`ts > X` → `ts_day >= day(X)` 及其严格投影（给出残余过滤条件）；桶过滤按分区值跳过文件（
Appendix B 的哈希）；
非分区列上按列界值跳过文件；以及分区演化之后，每个清单都用写出它的分区规范来计划。

下一课：[03 — 模式演化](03-schema-evolution.ipynb)（英文）。
"""),
]


def main() -> None:
    for lang in ("en", "zh"):
        print(write(CELLS, NAME, lang))


if __name__ == "__main__":
    main()
