"""Write notebooks/course/08-v4-proposal-in-prose.ipynb (cells only; execute it with nbconvert).

Run: ``.venv/bin/python docs/notebooks/course/make_08.py``, then
``cd notebooks/course && ../../.venv/bin/jupyter nbconvert --to notebook --execute --inplace
08-v4-proposal-in-prose.ipynb`` and ``python docs/notebooks/course/_course.py clean <notebook>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _course import Cell, code, md, write

NB06 = "notebook `06-v4-single-file-commits`"

CELLS: list[Cell] = [
    md("v4prose-question", f"""
# 08 — The v4 proposal in prose: what is a content entry, and why a root and leaves?

> **EXPERIMENTAL.** "Format v4" here is the *Iceberg Single File Commits* proposal
> (`v4-single-file-commits.txt`, which also carries the earlier *Adaptive Metadata Tree*
> draft). No Iceberg release implements it; icenb's choices where it is silent are in
> `docs/v4-layout.md`.

The proposal has two halves. Its **worked examples** (appends, removals, overwrites, row
deltas, compaction, the discarded layouts) are drawn one by one, v3 beside v4, in {NB06}. This
lesson is about the **prose** around them: the *Motivation* and *Goals*, the *content entry*
that replaces both the manifest-list entry and the manifest entry, why the tree has exactly
two levels, the commit procedure's rules, the optional affinity between data and delete
manifests, change detection at the root, the open questions and the discarded alternatives.
For each we act on a small v4 table and look at what icenb wrote.

The question to keep in mind: *what does one small commit cost, and what must a reader read?*"""),
    code("v4prose-setup", """
import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd

import icenb
from icenb.exercise import check
from icenb.io.root_manifest import (
    inline_manifest_dv,
    load_manifest_dv,
    read_content_manifest,
    read_root_manifest,
)
from icenb.spec.content_entry import ContentEntry, ContentType, ManifestKind, check_manifest
from icenb.spec.human import bound_text

wh = icenb.warehouse(tempfile.mkdtemp(prefix="icenb-course-"))


def rows(*parts):
    \"\"\"Two rows in each partition p of ``parts``: one data file each (Dn is p = n).\"\"\"
    return [{"id": p * 10 + i, "p": p} for p in parts for i in range(2)]


def metadata_files(t):
    \"\"\"The table's metadata files other than the table metadata JSON.\"\"\"
    folder = Path(t.location.removeprefix("file://")) / "metadata"
    return {p.name for p in folder.iterdir() if not p.name.endswith(".metadata.json")}


def name(location, leaves):
    \"\"\"Dn for a data file of partition n, Mn for a leaf manifest (the proposal's names).\"\"\"
    if location in leaves:
        return leaves[location]
    if "/p=" in location:
        return "D" + location.split("/p=")[1].split("/")[0]
    return location.rsplit("/", 1)[-1][:8] + "…"


def root_of(t):
    \"\"\"The current snapshot's root manifest, inheritance applied.\"\"\"
    s = t.current_snapshot
    return read_root_manifest(t.io, s.root_manifest, snapshot_id=s.snapshot_id,
                              sequence_number=s.sequence_number)


def root_table(t):
    \"\"\"The current root, one row per content entry, in file order.\"\"\"
    root = root_of(t)
    leaves = {e.location: f"M{i}" for i, e in enumerate(
        (e for e in root.entries if e.content_type.is_manifest), 1)}
    out = []
    for e in root.entries:
        target = e.referenced_file
        out.append({"content_type": f"{int(e.content_type)} {e.content_type.name}",
                    "status": e.status.name,
                    "entry": {ContentType.MANIFEST_DV: "manifest DV",
                              ContentType.POSITION_DELETE: "data DV"}.get(
                                  e.content_type, name(e.location, leaves)),
                    "record_count": e.record_count,
                    "applies to": "" if target is None else name(target, leaves),
                    "removes ordinals": load_manifest_dv(t.io, e).to_numpy().tolist()
                    if e.content_type == ContentType.MANIFEST_DV else ""})
    return pd.DataFrame(out)


v3 = wh.create_table("course.v3_events", "id long, p int", partition_by=["p"], format_version=3)
v4 = wh.create_table("course.v4_events", "id long, p int", partition_by=["p"], format_version=4)
print(v4.format_version, v4.properties)"""),

    md("v4prose-motivation", """
## Motivation and goals: metadata proportional to the change

*Motivation*: "an Iceberg commit requires writing at least 3 files: 1 metadata.json, 1
manifest list and 1 manifest file", and removing a file rewrites the whole manifest that lists
it, so "metadata changes [are] proportional to the size of the table rather than the set of
changes". The *Goals*: (1a) a small operation writes a **single** new metadata file, (2)
manifests written and read proportional to the operation, (3) **aggregate metrics** at the top
level, (4) the root manifest **reflects the last change**.

**Predict before you run:** five small appends of one file each. How many metadata files
(besides `metadata.json`) does each table write?"""),
    code("v4prose-goal-1", """
written = {"v3": [], "v4": []}
for part in range(1, 6):
    for label, t in (("v3", v3), ("v4", v4)):
        before = metadata_files(t)
        t.append(rows(part))
        written[label].append(len(metadata_files(t) - before))
for label, t in (("v3", v3), ("v4", v4)):
    folder = Path(t.location.removeprefix("file://")) / "metadata"
    size = sum((folder / f).stat().st_size for f in metadata_files(t))
    print(f"{label}: {len(metadata_files(t))} metadata files kept, {size / 1024:.1f} KiB")
pd.DataFrame(written, index=[f"append {i}" for i in range(1, 6)])"""),
    md("v4prose-goal-1-explain", """
v3 writes a manifest and a manifest list per commit, and keeps them all for time travel: the
*Adaptive Metadata Tree*'s "high metadata storage footprint". v4 writes one root manifest per
commit:
the new file goes **directly into the root** while the root holds few files (icenb's
`write.v4.root-entry-limit`, default 2 new files per commit; bigger commits write a leaf). As
files pile up in the root, *Metadata Tree Maintenance* (compaction) flushes them into leaves —
the drawing of this case is {NB06}, cell `25ae93cb`. Every commit still writes a new table
metadata JSON besides: removing it is the proposal's one *Non-Goal*. Here is the root after the
five appends:"""
       .replace("{NB06}", NB06)),
    code("v4prose-root", """
root_table(v4)"""),

    md("v4prose-entry", """
## The content entry

*Proposed Manifest Structure*, point 1: "Every entry in a manifest is now referred to as a
**content entry**" — one record type for the root and for both kinds of leaf. Its fields are
the proposal's table *V4 content entry structure*. Here they are as icenb writes them, read from
the Avro schema inside the root file we just wrote (`?` = optional):"""),
    code("v4prose-entry-schema", """
import json

from icenb.io.avro import avro_file_metadata

root_path = v4.current_snapshot.root_manifest.removeprefix("file://")
header = avro_file_metadata(root_path, Path(root_path).read_bytes())
schema = json.loads(header["avro.schema"])


def described(f):
    kind = f["type"]
    optional = isinstance(kind, list) and "null" in kind
    inner = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if isinstance(inner, dict) and inner.get("type") == "record":
        inner = "struct{" + ", ".join(g["name"] for g in inner["fields"]) + "}"
    elif isinstance(inner, dict):
        inner = inner.get("logicalType", inner.get("type"))
    return {"field id": f["field-id"], "name": f["name"],
            "required": "optional" if optional else "required", "type": str(inner)[:70]}


print("key-value metadata:", {k: v.decode() for k, v in header.items()
                              if not k.startswith("avro.")})
pd.DataFrame([described(f) for f in schema["fields"]])"""),
    md("v4prose-entry-explain", """
The *Summary of Changes* in five points, each visible above:

1. one record, the **content entry**, whose `content_type` (134) says what it is: 0 DATA,
   1 POSITION_DELETE (a data DV), 2 EQUALITY_DELETE, 3 DATA_MANIFEST, 4 DELETE_MANIFEST,
   5 MANIFEST_DV;
2. the new type **5, MANIFEST_DV**, "can only be defined in the root manifest";
3. a **`deletion_vector`** struct (147: `offset`, `size_in_bytes`, `inline_content`) that must
   be set for types 1 and 5 and null otherwise;
4. a **`version_info`** struct (5: `status`, `snapshot_id`, `sequence_number`,
   `file_sequence_number`) — "an isolated structure that can be modified (e.g. changing
   state)";
5. a **`manifest_stats`** struct (521: the six counts and `min_sequence_number`), set exactly
   for types 3 and 4.

The key-value metadata holds only `format-version` and `content` (`root`, `data` or
`delete`): the proposal drops the serialized schema and partition spec that v3 repeats in
every manifest header. `content_stats` (149) is where the proposal puts column statistics
("Column Stats Improvements", not part of the document); icenb fills it with v3's metric maps
and the partition tuple (`docs/v4-layout.md#content-stats`).

icenb's model enforces these per-type rules when an entry is built or read. **Predict before
you run:** which of these three entries will icenb accept?"""),
    code("v4prose-entry-rules", """
from icenb.spec.content_entry import DeletionVectorRef, ManifestStats
from icenb.spec.manifest import FileFormat

attempts = {
    "data file": dict(content_type=ContentType.DATA, location="data/D1.parquet",
                      file_format=FileFormat.PARQUET, partition_spec_id=0, record_count=2,
                      file_size_in_bytes=600),
    "data DV without deletion_vector": dict(
        content_type=ContentType.POSITION_DELETE, location="data/dv.puffin",
        file_format=FileFormat.PUFFIN, partition_spec_id=0, record_count=1,
        file_size_in_bytes=400, referenced_file="data/D1.parquet"),
    "data file with manifest_stats": dict(
        content_type=ContentType.DATA, location="data/D2.parquet",
        file_format=FileFormat.PARQUET, partition_spec_id=0, record_count=2,
        file_size_in_bytes=600, manifest_stats=ManifestStats(1, 0, 0, 2, 0, 0, 1)),
}
for label, fields in attempts.items():
    try:
        ContentEntry(**fields)
        print(f"{label}: accepted")
    except icenb.errors.InvalidMetadata as e:
        print(f"{label}: {type(e).__name__}: {e}")"""),

    md("v4prose-mapping", """
## From v3 fields to content entry fields

The proposal's two mapping tables say where every field of a v3 **manifest-list entry** and of
a v3 **manifest entry** goes. We let icenb do both mappings on real metadata: the v3 table's
manifest list, converted by the same function the first v4 commit after an upgrade uses
(`root_entry_of`, lesson 07), and one data file as the v3 and v4 tables each record it.

**Predict before you run:** where does the v3 manifest list's `added_snapshot_id` end up?
And `partitions`?"""),
    code("v4prose-mapping-list", """
from icenb.io.manifest_reader import read_manifest_list
from icenb.table.commit.v4_upgrade import root_entry_of

m = read_manifest_list(v3.io, v3.current_snapshot, 3)[0]
e = root_entry_of(m)
labels = {s.snapshot_id: f"S{i}" for i, s in enumerate(v3.snapshots, 1)}


def short(v):
    if isinstance(v, str) and "/" in v:
        return "…/" + v.rsplit("/", 1)[-1][:8] + "…"
    if isinstance(v, int) and v in labels:
        return labels[v]
    if isinstance(v, tuple):
        return f"{len(v)} field summaries"
    return v


MAPPING = [  # (manifest list field, content entry field, value in the content entry)
    ("manifest_path", "location", e.location),
    ("manifest_length", "file_size_in_bytes", f"{e.file_size_in_bytes} B"),
    ("partition_spec_id", "partition_spec_id", e.partition_spec_id),
    ("content", "content_type", f"{int(e.content_type)} {e.content_type.name}"),
    ("sequence_number", "version_info.sequence_number", e.version_info.sequence_number),
    ("added_snapshot_id", "version_info.snapshot_id", e.version_info.snapshot_id),
    ("min_sequence_number", "manifest_stats.min_sequence_number",
     e.manifest_stats.min_sequence_number),
    *[(f, "manifest_stats." + f, getattr(e.manifest_stats, f))
      for f in ("added_files_count", "existing_files_count", "deleted_files_count",
                "added_rows_count", "existing_rows_count", "deleted_rows_count")],
    ("partitions", "content_stats.partitions (proposal: REMOVED)", e.content_stats.partitions),
    ("key_metadata", "key_metadata", e.key_metadata),
    ("first_row_id", "first_row_id", e.first_row_id),
]
pd.DataFrame([{"manifest list field": a,
               "v3 value": short(getattr(m, a)) if a != "manifest_length" else v,
               "content entry field": b, "v4 value": short(v)} for a, b, v in MAPPING])"""),
    md("v4prose-mapping-list-explain", """
Every value survives; only the place changes. `content` becomes the `content_type` number
("renamed … the original name of content was misleading"), the snapshot and sequence number
move into `version_info` ("shared with snapshot_id" of file entries), the counts into
`manifest_stats`. The proposal **removes** `partitions`, relocating the information to column
statistics (`lower_bound`, `upper_bound`, `null_count`, `nan_count`); icenb keeps v3's
partition summaries inside `content_stats` so that v3's manifest pruning applies unchanged
(open question 4, below). `first_row_id` now sits on the shared entry, so files and data
manifests carry it the same way.

The manifest entry side: a data file with a deletion vector, as each table records it."""),
    code("v4prose-mapping-file", """
for t in (v3, v4):
    t.delete("id = 10", mode="merge-on-read")

v3_files = v3.inspect.entries().to_pylist()
dv3 = next(r for r in v3_files if r["data_file"]["content"] == 1 and r["status"] != 2)
v4_root = root_of(v4)
dv4 = next(e for e in v4_root.entries if e.content_type == ContentType.POSITION_DELETE)


def metrics(value):
    return "—" if value is None else f"map of {len(value)} columns"


d, vi, dv = dv3["data_file"], dv4.version_info, dv4.deletion_vector
FILE_MAPPING = [  # (v3 manifest entry field, v3 value, content entry field, v4 value)
    ("status", dv3["status"], "version_info.status", int(vi.status)),
    ("sequence_number", dv3["sequence_number"], "version_info.sequence_number",
     vi.sequence_number),
    ("file_sequence_number", dv3["file_sequence_number"], "version_info.file_sequence_number",
     vi.file_sequence_number),
    ("data_file.content", d["content"], "content_type", int(dv4.content_type)),
    ("data_file.file_path", "…" + d["file_path"][-14:], "location", "…" + dv4.location[-14:]),
    ("data_file.file_format", d["file_format"], "file_format", dv4.file_format.value),
    ("data_file.record_count", d["record_count"], "record_count", dv4.record_count),
    ("data_file.referenced_data_file", name(d["referenced_data_file"], {}), "referenced_file",
     name(dv4.referenced_file, {})),
    ("data_file.content_offset", d["content_offset"], "deletion_vector.offset", dv.offset),
    ("data_file.content_size_in_bytes", d["content_size_in_bytes"],
     "deletion_vector.size_in_bytes", dv.size_in_bytes),
    ("data_file.partition", d["partition"], "content_stats.partition (proposal: REMOVED)",
     metrics(dv4.content_stats.partition)),
    ("data_file.lower_bounds", metrics(d["lower_bounds"]),
     "content_stats (proposal: column stats)", metrics(dv4.content_stats.lower_bounds)),
    ("data_file.equality_ids", d["equality_ids"], "equality_ids", dv4.equality_ids),
]
pd.DataFrame([(a, "—" if b is None else str(b), c, "—" if d is None else str(d))
              for a, b, c, d in FILE_MAPPING],
             columns=["manifest entry field", "v3 value", "content entry field", "v4 value"])"""),
    md("v4prose-mapping-file-explain", """
The `data_file` struct is gone: "the entire record for an entry in a V4 manifest will now be
referred to as a content entry". `file_path` is renamed `location` (same id, 100),
`referenced_data_file` becomes `referenced_file` (it may also name a data manifest, for
affinity), and `content_offset` / `content_size_in_bytes` move into `deletion_vector` as
`offset` / `size_in_bytes` ("*content* is redundant in the context of being grouped"). The
metric maps (`column_sizes`, `value_counts`, `null_value_counts`, `nan_value_counts`,
`lower_bounds`, `upper_bounds`) are replaced by column stats in the proposal; icenb keeps
them, with their v3 ids, inside `content_stats`. The data DV is still a Puffin blob: the
proposal allows no inline **data** DVs (below)."""),

    md("v4prose-two-levels", """
## Why exactly two levels

*Proposal*: "Data manifest and delete manifests are **leaf** manifest files. They can't link to
other data or delete manifest files. This enforces a hierarchy with at most two levels." *Why
limit tree depth to 2?* Unbounded, a writer could keep writing a new top manifest that
references the previous top to keep its writes fast; the tree grows skewed, planning must
read it level by level (no parallelism), and the table becomes unreadable "without a
flattening of manifests". Two levels keep every leaf one read away from the root, so leaves are
read in parallel, and "with larger leaf manifests, the 2 level tree scales well into the
billion file scale".

**Predict before you run:** icenb is handed a *leaf* data manifest that lists another manifest.
What does it say?"""),
    code("v4prose-two-levels-act", """
nested = ContentEntry(content_type=ContentType.DATA_MANIFEST, location="metadata/M9.avro",
                      file_format=FileFormat.AVRO, partition_spec_id=0, record_count=1,
                      file_size_in_bytes=4096,
                      manifest_stats=ManifestStats(1, 0, 0, 2, 0, 0, 1))
manifest_dv = inline_manifest_dv(nested, [0])  # type 5: "only allowed at the Root Manifest level"
for what, kind, entries in (("a manifest", ManifestKind.DATA, [nested]),
                            ("a manifest", ManifestKind.ROOT, [nested]),
                            ("a manifest DV", ManifestKind.DATA, [manifest_dv]),
                            ("a manifest DV", ManifestKind.ROOT, [nested, manifest_dv])):
    try:
        check_manifest(kind, entries, file=f"a {kind.value} manifest")
        print(f"{what} in a {kind.value} manifest: accepted")
    except icenb.errors.InvalidMetadata as e:
        print(f"{what} in a {kind.value} manifest: {str(e).split(' (file:')[0]}")"""),
    md("v4prose-two-levels-explain", """
A manifest entry, and a manifest DV, is accepted only in the root; icenb runs the same check on
every root and leaf it reads. The proposal also fixes what each level may hold (the *Adaptive
Metadata Tree* table *Manifest Type / Allowed Content*): the root holds anything — leaf data and
delete manifests, manifest DVs, data files, data DVs, equality deletes; a leaf data manifest
holds data files; a leaf delete manifest holds DVs and equality deletes. And *"Every snapshot
has exactly one Root Manifest"*: the snapshot's `root-manifest` field names it (lesson 07, cell
`versions-v4-upgrade`).

### One manifest structure for both levels

*Why a common manifest structure throughout the tree?* — code reuse: one reader and one writer
instead of separate manifest-list and manifest code. The root and a leaf are the same kind of
Avro file; only the header's `content` differs:"""),
    code("v4prose-one-structure", """
v4.append(rows(6, 7, 8))  # three files, over the root-entry limit: a new leaf
root = root_of(v4)
leaf = next(e for e in root.entries if e.content_type.is_manifest and e.status.name == "ADDED")
leaf_path = leaf.location.removeprefix("file://")
leaf_header = avro_file_metadata(leaf_path, Path(leaf_path).read_bytes())
print("same Avro schema:", leaf_header["avro.schema"] == header["avro.schema"])
print("root content:", header["content"].decode(), "· leaf content:",
      leaf_header["content"].decode())
print("leaf manifest's entries:", [name(c.location, {}) for c in
                                  read_content_manifest(v4.io, leaf.location).entries])
display(root_table(v4))
stats = leaf.content_stats  # goal 3: the leaf's entry aggregates its files' metrics
print("the leaf's aggregate bounds in the root:", {
    v4.schema.find_field(i).name: (bound_text(v4.schema.find_field(i).field_type, low),
                                   bound_text(v4.schema.find_field(i).field_type,
                                              stats.upper_bounds[i]))
    for i, low in sorted(stats.lower_bounds.items())})"""),
    md("v4prose-aggregate-explain", """
Goal 3, *aggregate metrics*: "a manifest file entry gets aggregated stats of its data file
contents". The root entry of M1 carries the lowest and highest `id` and `p` of D6, D7 and D8,
so a planner can skip the whole leaf for `id < 50` without opening it — v3's manifest list has
only partition summaries."""),

    md("v4prose-commit", """
## The commit procedure

*Commit Procedure*: "Any new commit starts by using the information in the previous
snapshot's Root manifest file". Three rules:

- **Adding** data or delete files: a new root with the files as ADDED entries, either directly
  or in a new ADDED leaf — "the engine can determine the optimal layout". All previous entries
  are carried as EXISTING. (Above: single files went into the root, the three-file append into
  a new leaf.)
- **Removing** a file: from the root, its entry becomes DELETED in the new root; from a leaf,
  an ADDED **manifest DV** marks its ordinal as removed. "We do not allow the copy on write
  behavior … of removing and adding a child manifest with a net change to the data": a leaf is
  never rewritten to drop a file.
- **Status**: "Any changes to underlying data are marked as ADDED and anything which does not
  change the actual data of the table is marked as EXISTING."

**Predict before you run:** we delete partition 7, whose file D7 sits in the leaf just written.
Which files will the commit write, and will the leaf file change?"""),
    code("v4prose-remove-from-leaf", """
leaf_bytes = Path(leaf_path).read_bytes()
before = metadata_files(v4)
v4.delete("p = 7")
print("metadata files written:", sorted(f.split("-")[0] for f in metadata_files(v4) - before))
print("leaf file unchanged:", Path(leaf_path).read_bytes() == leaf_bytes)
root_table(v4)"""),
    md("v4prose-remove-explain", """
One file written — the new root — and the leaf untouched: the root carries the leaf as
EXISTING plus a manifest DV whose bitmap removes the leaf's ordinal 1 (its second record,
D7). icenb keeps such a small DV **inline** in the root. Goal 2b follows: an engine that
cached M1 for the previous snapshot reuses it, and reads only the new root. The drawings of
every removal, overwrite and row-delta example are in {NB06} (cells `717a0897`,
`46c04ac5`, `fc3aba36`, `d1acda5e`, `cfd8cce2`, `469a6b1c`).

*Manifest Compaction*: "During any commit, existing Data Files, Manifests and Manifest Delete
Vectors can be combined" as long as the result causes "no net change to table state": the
results are EXISTING, and the commit's own new files are never folded in. {NB06}, cell
`4b54559f`, compacts two leaves with their DVs during an append.""".replace("{NB06}", NB06)),

    md("v4prose-dv-storage", """
## Open question 1: inline or Puffin manifest DVs?

*Open Questions* 1: "Are Manifest Delete Vectors always stored inline, Puffin, or possibly
both?" Inline keeps a small removal to one file at the cost of a larger root; the proposal's
*Appendix* measures serialized Roaring bitmaps at about **2 bytes per deleted position**.
icenb reads both and writes inline unless the table property `write.v4.manifest-dv.storage` is
`puffin`.

**Predict before you run:** with `puffin`, how many metadata files will removing one more file
from the same leaf write?"""),
    code("v4prose-dv-storage-act", """
v4.set_properties({"write.v4.manifest-dv.storage": "puffin"})
before = metadata_files(v4)
v4.delete("p = 8")
print("metadata files written:", len(metadata_files(v4) - before),
      sorted(f.rsplit(".", 1)[-1] for f in metadata_files(v4) - before))
v4.set_properties({"write.v4.manifest-dv.storage": "inline"})
root_table(v4)"""),
    md("v4prose-dv-storage-explain", """
Two files: the root and a Puffin file with the DV blob. The new DV is the **union** of the old
one and the new removal (ordinals 1 and 2): a leaf has at most one live manifest DV, so the
old inline DV is DELETED in this root. How big is a DV? The proposal's *Appendix* compares
four encodings of a bit vector (LZ4, Roaring, ZSTD-3, a raw bitset) at densities 0.01 to 0.2
over 1,000 to 1,000,000 positions. **Predict before you run:** which encoding stays near two
bytes per delete when deletes are sparse?"""),
    code("v4prose-dv-sizes", """
import numpy as np
import pyarrow as pa

from icenb.spec.deletion_vector import serialize_roaring64

rng = np.random.default_rng(7)
lz4, zstd3 = pa.Codec("lz4"), pa.Codec("zstd", compression_level=3)
ROARING64_HEADER = 12  # bytes the portable 64-bit format adds to a 32-bit Roaring bitmap
cells = {}
for density in (0.01, 0.05, 0.1, 0.2):
    for n in (1_000, 10_000, 100_000, 1_000_000):
        k = int(n * density)
        positions = np.sort(rng.choice(n, size=k, replace=False))
        bits = np.zeros(n, dtype=bool)
        bits[positions] = True
        raw = np.packbits(bits, bitorder="little").tobytes()
        for method, size in (
                ("LZ4", len(lz4.compress(raw, asbytes=True))),
                ("Roaring", len(serialize_roaring64(positions)) - ROARING64_HEADER),
                ("ZSTD-3", len(zstd3.compress(raw, asbytes=True))),
                ("Raw bitset", len(raw))):
            cells.setdefault((method, density), {})[f"{n:,}"] = f"{size:,} ({size / k:.2f})"
sizes = pd.DataFrame.from_dict(cells, orient="index")
sizes.index = pd.MultiIndex.from_tuples(sizes.index, names=["method", "density"])
sizes.loc[["LZ4", "Roaring", "ZSTD-3", "Raw bitset"]]  # the proposal's order"""),
    md("v4prose-dv-sizes-explain", """
The proposal's *Appendix* table, remeasured: bytes, and in parentheses bytes per deleted
position, for random positions at four densities and four sizes. The **Roaring** row — icenb's
`deletion-vector-v1` serializer without the 12-byte header of the portable 64-bit format —
matches the proposal's to the byte wherever the positions are sparse (36, 216, 2,024, 20,136 at
density 0.01); dense cells differ a little because the random positions do. LZ4 and ZSTD-3 of
the raw bitset land near the proposal's numbers too. About two bytes per removed entry, as the
proposal says; "at a certain point, arguably it's better to just rewrite the manifest rather
than accumulating manifest DVs in the root" — which is what compaction does.

*Why not have inline data DVs?* The same reasoning in reverse: a DV over a **data file** may
cover millions of rows and reach megabytes, which would bloat the root; so data DVs stay in
Puffin files, and icenb refuses an inline one:"""),
    code("v4prose-no-inline-data-dv", """
try:
    ContentEntry(content_type=ContentType.POSITION_DELETE, location="data/D1.parquet",
                 file_format=FileFormat.PUFFIN, partition_spec_id=0, record_count=1,
                 file_size_in_bytes=40, referenced_file="data/D1.parquet",
                 deletion_vector=DeletionVectorRef(inline_content=b"..."))
except icenb.errors.InvalidMetadata as e:
    print(type(e).__name__ + ":", e)"""),

    md("v4prose-change-detection", """
## Goal 4 and open question 3: change detection at the root

*Goals* 4: "The changes from any operation should be expressed in only the changes made to the
Root manifest." A reader that wants to know what a commit did reads **one** file: the ADDED and
DELETED entries of its root. *Open question* 3 asks how a manifest DV should encode a change,
since "there are multiple potential ways"; one idea is a DV that also encodes "the diff in
positions from the previous DV". In icenb's layout the diff is recoverable from the root alone:
the replaced DV is listed as DELETED beside its ADDED successor.

**Predict before you run:** what did the last commit (the delete of partition 8) change,
according to its root alone?"""),
    code("v4prose-change-detection-act", """
root = root_of(v4)
changes = [e for e in root.entries if e.status.name != "EXISTING"]
for e in changes:
    print(e.status.name, e.content_type.name,
          load_manifest_dv(v4.io, e).to_numpy().tolist()
          if e.content_type == ContentType.MANIFEST_DV else name(e.location, {}))
old_dv, new_dv = (next(e for e in changes if e.content_type == ContentType.MANIFEST_DV
                       and e.status.name == s) for s in ("DELETED", "ADDED"))
newly_removed = sorted(set(load_manifest_dv(v4.io, new_dv).to_numpy().tolist())
                       - set(load_manifest_dv(v4.io, old_dv).to_numpy().tolist()))
print("ordinals this commit removed:", newly_removed)
summary = v4.current_snapshot.summary
print("the commit's summary:", {k: summary[k] for k in ("operation", "deleted-data-files")})"""),
    md("v4prose-change-detection-explain", """
The root says it all: the old DV (ordinal 1) DELETED, the new DV (ordinals 1, 2) ADDED, so this
commit removed ordinal 2 of the leaf — D8 — matching the summary's one deleted data file. The
proposal's discarded *"Using Multiple Delete Vectors to Keep Changes Distinct"* would have kept
both DVs live instead; {NB06}, cells `88c58620` and `886ee59f`, draws it and shows icenb
refusing such a root.""".replace("{NB06}", NB06)),

    md("v4prose-affinity", """
## Optional affinity between data and delete manifests (open question 2)

Today a planner reads data manifests and delete manifests separately and then joins them
("2-phase planning"). The proposal's option: a delete manifest may be **affiliated** with
exactly one data manifest, by naming it in `referenced_file` (type 4); a data manifest may have
several. Pros: single-pass, parallel planning of a data manifest with its delete manifests;
statistics prune delete manifests too (only those of unpruned data manifests are opened); DVs
are still replaced cheaply. Cons: large deletions with low locality (a `MERGE` on a UUID key)
make large unaffiliated delete manifests or rewrite many affiliated ones. A few
**unaffiliated** delete manifests are allowed; planning reads them for every data manifest.

icenb's model accepts an affiliated delete manifest entry; its writers write only unaffiliated
ones (no `referenced_file`), and its planner joins as v3 does — the proposal leaves affinity
optional.

**Predict before you run:** is the delete manifest in our v4 table affiliated?"""),
    code("v4prose-affinity-act", """
v4.set_properties({"write.v4.root-entry-limit": "0"})  # every new file into a leaf
v4.delete("id = 20", mode="merge-on-read")
delete_manifest = next(e for e in root_of(v4).entries
                       if e.content_type == ContentType.DELETE_MANIFEST)
print("written by icenb, referenced_file:", delete_manifest.referenced_file)
data_manifest = next(e for e in root_of(v4).entries
                     if e.content_type == ContentType.DATA_MANIFEST)
affiliated = replace(delete_manifest, referenced_file=data_manifest.location)
check_manifest(ManifestKind.ROOT, [data_manifest, affiliated], file="an affiliated root")
print("an affiliated delete manifest: accepted, it names",
      affiliated.referenced_file.rsplit("/", 1)[-1][:8] + "…")"""),
    md("v4prose-affinity-alternatives", """
The *Adaptive Metadata Tree* part weighs affinity against two **alternatives**:

- **No affinity** (today's behaviour, and icenb's): lowest write amplification, but an
  expensive join during reads and no statistics-based pruning of delete manifests.
- **Unified manifests**, each entry a (data file, DV) pair — and its variant *physical
  colocation* of data files and DVs as separate rows of one leaf: fast single-pass planning,
  but changing a DV means rewriting the data file entries and their statistics beside it.
  **Discarded** for that write (and read) amplification.

Neither alternative can be built with icenb (its model keeps data and delete leaves separate,
`ALLOWED_CONTENT`), so they stay prose here.

## Open question 4: the partition tuple

The proposal removes `data_file.partition` and the manifest list's `partitions`, letting column
statistics stand in: "nearly every transform is monotonic, with the exception of bucketing",
whose values would need stats on a derived column. Equality deletes, though, must match on the
exact partition. icenb keeps the tuple (a map from partition field id to the value's bytes in
`content_stats.partition`), so delete matching is exact for every transform:"""),
    code("v4prose-partition-tuple", """
data_entry = next(e for e in root_of(v4).entries if e.content_type == ContentType.DATA)
print(name(data_entry.location, {}), "partition tuple:",
      data_entry.content_stats.partition_tuple(v4.spec.partition_type(v4.schema)))"""),

    md("v4prose-remove-with-dv", """
## Removing a data file that has a DV

*Adaptive Metadata Tree*, "Removing Data Files": removing a data file held in a leaf "requires
removing any corresponding DV to prevent orphans … In this case, 2 leaf manifest DVs will be
produced, 1 for the data manifest and 1 for the delete manifest."

**Predict before you run:** D9 goes into a leaf (the root-entry limit is now 0), one of its
rows is deleted merge-on-read (its DV goes into a delete leaf), then the whole partition 9 is
deleted. How many manifest DVs does that last root add?"""),
    code("v4prose-remove-with-dv-act", """
v4.append(rows(9))
v4.delete("id = 90", mode="merge-on-read")
v4.delete("p = 9")
table = root_table(v4)
targets = set(table.loc[table["status"] == "ADDED", "applies to"])
table[(table["status"] != "EXISTING") | table["entry"].isin(targets)]  # new DVs, their leaves"""),
    md("v4prose-remove-with-dv-explain", """
Two ADDED manifest DVs: one removes D9's entry from its data leaf, the other removes D9's DV
from its delete leaf — neither leaf is rewritten, and no DV is left pointing at a file that is
gone."""),
    md("v4prose-tree-maintenance", """
## Metadata tree maintenance and planning

*Metadata Tree Maintenance*: files and DVs in the root are flushed to new leaves at
configurable thresholds (separate for data files and DVs: "the storage footprint is
different"), chosen so that reading the root costs about one storage round trip; many small
leaves are coalesced by periodic maintenance. icenb has one threshold,
`write.v4.root-entry-limit` (new files a commit may place in the root), and compaction
(`write.v4.compaction.*`) coalesces.

*How does planning work?* (1) read the root: leaves to read and files listed directly; (2) load
the manifest DVs of those leaves; (3) read the leaves — with their affiliated delete manifests
and every unaffiliated one — dropping entries a manifest DV removes or that are DELETED. The
planned files of our table, by where the root found them:"""),
    code("v4prose-planning", """
plan = v4.scan().plan()
print(len(plan.files), "data files planned;", v4.scan().to_arrow().num_rows, "rows")
v4.metadata_tree()"""),

    md("v4prose-upgrade", """
## Upgrade

"Migrating from a V3 Manifest List to a V4 Root Manifest requires just propagating every
Manifest List Entry into a V4 RootManifest entry. The first commit to a V4 table must perform
this migration. A V4 Root Manifest may have manifest delete vectors which apply to V3
manifests." Lesson 07 acts this out (cells `versions-v4-upgrade` and
`versions-v4-explain`).

## Exercises

Each cell checks your answer against the tables above. Change `answer` and run the cell."""),
    code("v4prose-exercise-files", """
answer = 1  # your answer: metadata files (besides metadata.json) one small v4 append wrote
check(answer, expected=written["v4"][-1],
      hint="count the new files in the metadata folder: v3 writes a manifest and a list")""",
         wrong="2"),
    code("v4prose-exercise-type", """
answer = 5  # your answer: the content_type number of a manifest delete vector
check(answer, expected=int(ContentType.MANIFEST_DV),
      hint="0-2 are files, 3 and 4 are manifests")""", wrong="1"),
    code("v4prose-exercise-ordinals", """
answer = [2]  # your answer: the leaf ordinals the delete of partition 8 removed
check(answer, expected=newly_removed,
      hint="compare the DELETED manifest DV with the ADDED one in that commit's root")""",
         wrong="[1, 2]"),
    md("v4prose-next", """
Next: 09 — The view spec draft: the draft's own example loaded and compared with the released
view format."""),
]


if __name__ == "__main__":
    print(write(CELLS, "08-v4-proposal-in-prose"))
