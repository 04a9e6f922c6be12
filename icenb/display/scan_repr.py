"""Scans, scan plans and file scan tasks (spec: "Scan Planning", Appendix C "File Scan Task").

A :class:`~icenb.table.scan.Scan` is shown without planning it; a
:class:`~icenb.table.scan.planning.ScanPlan` shows its counts and a folded list of tasks whose
Python objects are built only for the shown rows (``ScanPlan.take``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icenb.display.kit import fmt
from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit import values as vals
from icenb.display.registry import Rendered, register, render
from icenb.display.table_repr import folded_table
from icenb.labels import t
from icenb.options import get_options
from icenb.spec.expressions import AlwaysTrue
from icenb.spec.manifest import DataFile, FileContent, FileScanTask
from icenb.spec.partition_spec import PartitionSpec
from icenb.spec.schema import Schema
from icenb.table.scan import Scan
from icenb.table.scan.planning import ScanPlan

__all__ = ["delete_kind", "partition_text", "residual_text"]


def delete_kind(f: DataFile) -> str:
    """``DV``, ``position`` or ``equality`` (spec: "Deletion Vectors", "Delete Formats")."""
    if f.content == FileContent.EQUALITY_DELETES:
        return "equality"
    if f.content == FileContent.POSITION_DELETES:
        return "DV" if f.is_deletion_vector else "position"
    return "data"


def partition_text(spec: PartitionSpec, schema: Schema, values: Sequence[Any]) -> str:
    """``name=value, ...`` with each value in its transform's human form (spec: Partitioning;
    :func:`icenb.display.kit.values.partition`)."""
    if not spec.fields:
        return "-"
    return vals.partition(spec, schema, values)


def residual_text(residual: Any) -> str:
    """The filter left to apply to a file's rows: ``-`` when the partition decides it all."""
    if residual is True:
        return "-"
    if residual is False:
        return t("false (no row matches)")
    return str(residual)


def _deletes_summary(deletes: Sequence[DataFile]) -> str:
    if not deletes:
        return "-"
    counts: dict[str, int] = {}
    for d in deletes:
        kind = delete_kind(d)
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {t(k)}" for k, n in sorted(counts.items()))


# --------------------------------------------------------------------------- Scan


@register(Scan)
def _scan(s: Scan) -> Rendered:
    """What a scan will read, without planning it (no I/O)."""
    md = s.metadata
    cols = t("all columns") if s.columns is None else ", ".join(s.columns)
    snap = s.snapshot_id
    snap_text = t("none (empty table: reads no file)") if snap is None else str(snap)
    refs = sorted(n for n, r in md.refs.items() if snap is not None and r.snapshot_id == snap)
    if refs:
        snap_text += f" ({', '.join(refs)})"
    flt = t("none (all rows)") if isinstance(s.row_filter, AlwaysTrue) else str(s.row_filter)
    pairs = [
        ("snapshot", snap_text),
        ("filter", flt),
        ("columns", cols),
        ("case sensitive", t("yes") if s.case_sensitive else t("no")),
        ("schema", t("schema {id}", id=s.table_schema.schema_id) + " · "
         + t("{columns} projected", columns=fmt.plural(len(s.schema.fields), 'column'))),
    ]
    hint = t("s.plan() lists the files to read; s.to_arrow() / s.to_pandas() read them")
    body = (h.kv((t(k), h.code(v) if k in ("filter", "snapshot") else h.esc(v))
                 for k, v in pairs)
            + h.section(t("Projected schema"), render(s.schema).html)
            + f"<div>{h.muted(hint)}</div>")
    title = fmt.table_place(None, md.location)
    html = h.card(t("Scan"), title, h.esc(t("snapshot {id}", id=snap) if snap is not None
                                          else t("empty")), body)
    shown = [(t(k), v) for k, v in pairs]
    text = (t("Scan of {location}", location=fmt.table_place(None, md.location))
            + f"\n{tx.kv(shown, indent='  ')}\n  ({hint})")
    return Rendered(html, text)


# --------------------------------------------------------------------------- ScanPlan


def _sum(table: pa.Table, name: str) -> int:
    """The sum of a ``data_file`` field over the entries (vectorized; 0 when empty)."""
    if table.num_rows == 0:
        return 0
    value = pc.sum(pc.struct_field(table.column("data_file"), name)).as_py()
    return int(value or 0)


def _task_row(task: FileScanTask) -> tuple[list[str], list[str]]:
    f = task.data_file
    path = f.file_path
    part = partition_text(task.spec, task.schema, f.partition)
    deletes = _deletes_summary(task.delete_files)
    residual = residual_text(task.residual_filter)
    html = [f'<span title="{h.esc(f.file_path, 4000)}">{h.code(fmt.file_name(path))}</span>',
            h.esc(part), h.esc(fmt.count(f.record_count)), h.esc(fmt.size(f.file_size_in_bytes)),
            h.esc(deletes), h.code(residual) if residual != "-" else "-"]
    text = [fmt.cut(fmt.file_name(path)), fmt.cut(part), fmt.count(f.record_count),
            fmt.size(f.file_size_in_bytes), deletes, fmt.cut(residual)]
    return html, text


@register(ScanPlan)
def _scan_plan(plan: ScanPlan) -> Rendered:
    """Planning counts and a folded task list; only shown tasks are built (spec: Scan Planning)."""
    n = plan.files_selected
    n_deletes = plan.delete_files_selected
    applied = sum(map(len, plan.deletes_per_file))
    records = _sum(plan.data_entries, "record_count")
    size = _sum(plan.data_entries, "file_size_in_bytes")
    pairs = [
        (t("snapshot"), t("none (empty table)") if plan.snapshot_id is None
         else str(plan.snapshot_id)),
        (t("filter"), t("none (all rows)") if isinstance(plan.row_filter, AlwaysTrue)
         else str(plan.row_filter)),
        (t("tasks (data files)"), t("{n:,} of {total:,} considered", n=n,
                                    total=plan.files_considered)),
        (t("records / size"), t("{rows} rows · {size} (before deletes)",
                                rows=fmt.count(records), size=fmt.size(size))),
        (t("delete files"), t("{n:,} live of {total:,} considered · {applied:,} applications "
                              "to data files", n=n_deletes, total=plan.delete_files_considered,
                              applied=applied)),
        (t("manifests"), t("{read:,} read of {total:,} ({skipped:,} skipped)",
                           read=plan.manifests_read, total=plan.manifests_total,
                           skipped=plan.manifests_skipped)),
    ]
    limit = get_options().display_max_rows
    head_idx, n_hidden, tail_idx = fmt.fold(range(n), limit)
    shown = [*head_idx, *tail_idx]
    tasks: list[FileScanTask] = []
    problem = ""
    if shown:
        try:
            tasks = list(plan.take(shown).tasks)
        except Exception as e:  # partial plan (unknown spec id ...): counts still shown
            problem = t("tasks cannot be built: {error}", error=f"{type(e).__name__}: {e}")
    headers = [t("data file"), t("partition"), t("records"), t("size"), t("deletes applied"),
               t("residual")]
    rows = [_task_row(task) for task in tasks]
    k = len(head_idx)
    task_html = folded_table(headers, [r[0] for r in rows[:k]], n_hidden,
                             [r[0] for r in rows[k:]], "tasks", text=False)
    task_text = folded_table(headers, [r[1] for r in rows[:k]], n_hidden,
                             [r[1] for r in rows[k:]], "tasks", text=True)
    body = h.kv((key, h.esc(v)) for key, v in pairs)
    if problem:
        body += h.error(problem)
    elif n:
        body += h.section(t("Tasks"), task_html, count=str(n))
    subtitle = f"{fmt.plural(n, 'task')} · {fmt.plural(n_deletes, 'delete file')}"
    # titled by what it reads; the snapshot's id is a row of the card (a plan has no table to
    # give it its short label)
    title = t("empty") if plan.snapshot_id is None else fmt.plural(n, "task")
    html = h.card(t("Scan plan"), title, h.esc(fmt.plural(n_deletes, "delete file")), body)
    text = f"{t('Scan plan')} ({subtitle})\n{tx.kv(pairs, indent='  ')}"
    if problem:
        text += f"\n  {problem}"
    elif n:
        text += f"\n  {t('Tasks')}:\n" + tx.indent(task_text, "  ")
    return Rendered(html, text)


# --------------------------------------------------------------------------- FileScanTask


@register(FileScanTask)
def _file_scan_task(task: FileScanTask) -> Rendered:
    """One data file to read, its deletes and residual filter (spec: Appendix C)."""
    f = task.data_file
    whole = task.is_whole_file
    end = (task.start + task.length) if task.length is not None else f.file_size_in_bytes
    byte_range = t("whole file") if whole else t("bytes {start:,} to {end:,}", start=task.start,
                                                 end=end)
    pairs = [
        ("data file", f.file_path),
        ("format", str(f.file_format.value).upper()),
        ("partition", f"{partition_text(task.spec, task.schema, f.partition)}"
                      f" ({t('spec {id}', id=task.spec.spec_id)})"),
        ("records", fmt.count(f.record_count)),
        ("size", fmt.size(f.file_size_in_bytes)),
        ("range", byte_range),
        ("residual filter", residual_text(task.residual_filter)),
    ]
    if f.data_sequence_number is not None:
        pairs.insert(5, ("data sequence number", str(f.data_sequence_number)))

    def row(d: DataFile) -> tuple[list[str], list[str]]:
        kind = delete_kind(d)
        badge_kind = "warn" if kind == "equality" else "deleted"
        return ([h.badge(t(kind), badge_kind), f"<code>{h.esc(d.file_path, 2000)}</code>",
                 h.esc(fmt.count(d.record_count))],
                [t(kind), fmt.cut(d.file_path), fmt.count(d.record_count)])

    deletes = list(task.delete_files)
    head, n_hidden, tail = fmt.fold(deletes, get_options().display_max_rows)
    hr = [row(d) for d in [*head, *tail]]
    headers = [t("kind"), t("delete file"), t("records")]
    k = len(head)
    body = h.kv((t(key), f"<code>{h.esc(v, 2000)}</code>" if key == "data file"
                 else h.code(v) if key == "residual filter" else h.esc(v)) for key, v in pairs)
    body += h.section(t("Delete files"), folded_table(
        headers, [r[0] for r in hr[:k]], n_hidden, [r[0] for r in hr[k:]], "delete files",
        text=False) if deletes else h.muted(t("none")), open=bool(deletes),
        count=f"{len(deletes):,}")
    html = h.card(t("File scan task"), fmt.file_name(f.file_path),
                  h.esc(t("{n} rows", n=fmt.count(f.record_count)) + " · "
                        + fmt.plural(len(deletes), 'delete file')), body)
    text = t("File scan task") + "\n" + tx.kv([(t(k), v) for k, v in pairs], indent="  ")
    if deletes:
        text += f"\n  {t('delete files')}:\n" + tx.indent(folded_table(
            headers, [r[1] for r in hr[:k]], n_hidden, [r[1] for r in hr[k:]],
            "delete files", text=True), "  ")
    return Rendered(html, text)
