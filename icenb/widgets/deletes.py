"""Deletes: delete rows and watch what it does. A predicate checked as it is typed; the mode
(copy-on-write, merge-on-read - position delete files in v2, deletion vectors in v3 and v4 - or
equality deletes by key); a target branch, by default a scratch branch ``icenb-try-N`` so
``main`` stays untouched until published (fast-forward). A dry run from metadata alone, the
exact rows matched, and after the commit the new snapshot in the graph, the delete files or
files rewritten, live against deleted rows per file, and what every later scan pays (spec:
"Row-level Deletes", "Deletion Vectors", "Scan Planning"; Spark's write-audit-publish).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as w
import pyarrow as pa
import pyarrow.compute as pc

from icenb.display import html as h
from icenb.display import snapshot_tree
from icenb.errors import IcebergError, ValidationError
from icenb.labels import t
from icenb.reprs import safe_repr
from icenb.spec import parse
from icenb.table import DeleteDryRun, Table
from icenb.widgets.authoring import table_name
from icenb.widgets.graph_view import GraphView
from icenb.widgets.panels import (
    INTERACTIVE_NOTE,
    Confirm,
    ErrorBox,
    StaticSnapshot,
    code_block,
    guarded,
)
from icenb.widgets.time_travel import rows_html

__all__ = ["COPY_ON_WRITE", "EQUALITY", "MERGE_ON_READ", "DeleteEffect", "DeletePreview",
           "Deletes", "ModeComparison"]

COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
EQUALITY = "equality"
MODES = (COPY_ON_WRITE, MERGE_ON_READ, EQUALITY)
SCRATCH_PREFIX = "icenb-try-"
MAIN = "main"


@safe_repr
@dataclass(frozen=True)
class DeletePreview:
    """The rows a delete would remove, exact (read with pyarrow, deletes applied): ``rows``
    (the table's columns plus ``_file`` and ``_pos``) and per data file the rows matched."""

    filter: str
    snapshot_id: int | None
    rows: pa.Table
    files: dict[str, int]

    @property
    def count(self) -> int:
        return int(self.rows.num_rows)


@safe_repr
@dataclass(frozen=True)
class DeleteEffect:
    """What a committed delete did: the new snapshot, files added (delete files or DVs with
    their cardinality, or rewritten data files) and removed (sizes), and the delete files a
    scan of the branch applies afterwards."""

    snapshot_id: int
    parent_id: int | None
    operation: str
    added: tuple[tuple[str, str, int, int], ...]    # (path, kind, records, bytes)
    removed: tuple[tuple[str, str, int, int], ...]
    bytes_written: int
    delete_files_to_apply: int
    live_rows: int


@safe_repr
@dataclass(frozen=True)
class ModeComparison:
    """The same delete run copy-on-write and merge-on-read on two scratch branches."""

    filter: str
    effects: dict[str, DeleteEffect]


def _scratch_name(table: Table) -> str:
    taken = set(table.refs)
    n = 1
    while f"{SCRATCH_PREFIX}{n}" in taken:
        n += 1
    return f"{SCRATCH_PREFIX}{n}"


class Deletes(StaticSnapshot, w.VBox):  # type: ignore[misc]
    """Delete rows on a scratch branch and watch the effect. ``Deletes(t)``.

    Programmatic surface: :attr:`filter`, :attr:`mode`, :attr:`branch` (default a scratch
    branch ``icenb-try-N``), :meth:`dry_run` (metadata only), :meth:`preview` (matched rows
    and files, exact), :meth:`commit` (the new snapshot id), :meth:`publish` (fast-forwards
    ``main`` to the branch), :meth:`compare_modes`, :meth:`undo`.
    """

    def __init__(self, table: Table, filter: str = "", *, mode: str | None = None,
                 branch: str | None = None, key: Sequence[str] | None = None,
                 sample_rows: int = 20) -> None:
        self._table = table
        self._filter = ""
        self._mode = COPY_ON_WRITE if table.metadata.format_version < 2 else MERGE_ON_READ
        self._branch = branch or _scratch_name(table)
        self._key = list(key) if key else list(table.schema.identifier_field_names)
        self._sample_rows = sample_rows
        self._effect: DeleteEffect | None = None
        self._last_preview: DeletePreview | None = None
        self._last_dry_run: DeleteDryRun | None = None
        self._created_branch: str | None = None
        self._last_code = ""

        self.error = ErrorBox()
        self.header = w.HTML()
        self.filter_input = w.Text(placeholder=t("predicate, e.g. id < 10"),
                                   continuous_update=True, layout=w.Layout(width="360px"))
        self.filter_input.add_class("icenb-del-filter")
        self.filter_state = w.HTML()
        self.mode_input = w.ToggleButtons(options=list(MODES), value=self._mode)
        self.key_input = w.Text(value=", ".join(self._key), placeholder=t("key columns"),
                                description=t("key"), layout=w.Layout(width="260px"))
        self.branch_input = w.Combobox(value=self._branch, ensure_option=False,
                                       description=t("branch"), layout=w.Layout(width="300px"))
        self.dry_button = w.Button(description=t("dry run"))
        self.preview_button = w.Button(description=t("preview rows"))
        self.commit_button = w.Button(description=t("commit"), button_style="danger")
        self.commit_button.add_class("icenb-del-commit")
        self.publish_button = w.Button(description=t("publish to main"), disabled=True)
        self.compare_button = w.Button(description=t("compare modes"))
        self.undo_button = w.Button(description=t("undo"), disabled=True)
        self.confirm = Confirm(self.error, self._redraw)
        self.graph = GraphView(height="300px", parent_key="ArrowDown",
                               status=t("the table's snapshots; the delete's snapshot is "
                                        "selected"))
        self.dry_panel = w.HTML()
        self.dry_panel.add_class("icenb-del-dry")
        self.preview_panel = w.HTML()
        self.preview_panel.add_class("icenb-del-preview")
        self.effect_panel = w.HTML()
        self.effect_panel.add_class("icenb-del-effect")
        self.compare_panel = w.HTML()
        super().__init__(children=[
            self.header, self.error, w.HBox([self.filter_input, self.filter_state]),
            w.HBox([self.mode_input, self.key_input]), self.branch_input,
            w.HBox([self.dry_button, self.preview_button, self.commit_button,
                    self.publish_button, self.compare_button, self.undo_button]),
            self.confirm, self.dry_panel, self.preview_panel, self.graph, self.effect_panel,
            self.compare_panel])
        self.add_class("icenb-del")

        self.filter_input.observe(lambda c: self._on_filter(c["new"]), names="value")
        self.mode_input.observe(lambda c: guarded(self.error, lambda: self._set_mode(
            c["new"])), names="value")
        self.key_input.observe(lambda c: self._set_key(c["new"]), names="value")
        self.branch_input.observe(lambda c: self._set_branch(c["new"]), names="value")
        self.dry_button.on_click(lambda _b: guarded(self.error, self.dry_run))
        self.preview_button.on_click(lambda _b: guarded(self.error, self.preview))
        self.commit_button.on_click(lambda _b: guarded(self.error, self._ask_commit))
        self.publish_button.on_click(lambda _b: guarded(self.error, self._ask_publish))
        self.compare_button.on_click(lambda _b: guarded(self.error, self.compare_modes))
        self.undo_button.on_click(lambda _b: guarded(self.error, self._ask_undo))
        if mode is not None:
            self._set_mode(mode)
        if filter:
            self.filter = filter
        self._redraw()

    # ------------------------------------------------------------------ programmatic surface

    @property
    def table(self) -> Table:
        return self._table

    @property
    def filter(self) -> str:
        """The delete's predicate (checked against the schema when set)."""
        return self._filter

    @filter.setter
    def filter(self, value: str) -> None:
        self._check_filter(value)
        self._filter = value
        if self.filter_input.value != value:
            self.filter_input.value = value

    @property
    def mode(self) -> str:
        """``copy-on-write``, ``merge-on-read`` (v2+) or ``equality`` (v2+, by :attr:`key`)."""
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self._set_mode(value)

    @property
    def key(self) -> list[str]:
        """The key columns of an equality delete (default: the schema's identifier fields)."""
        return list(self._key)

    @key.setter
    def key(self, value: Sequence[str]) -> None:
        self._key = [value] if isinstance(value, str) else list(value)

    @property
    def branch(self) -> str:
        """The branch the delete commits to: a scratch branch ``icenb-try-N`` by default
        (created from ``main`` on the first commit), or ``main``."""
        return self._branch

    @branch.setter
    def branch(self, value: str) -> None:
        self._set_branch(value)

    @property
    def effect(self) -> DeleteEffect | None:
        """What the last commit did."""
        return self._effect

    def dry_run(self) -> DeleteDryRun:
        """From metadata alone (manifests): candidate files, files removed whole, bounds on
        the rows (``t.delete_dry_run``)."""
        self._require_filter()
        d = self._table.delete_dry_run(self._filter, branch=self._read_branch())
        self._last_dry_run = d
        self.dry_panel.value = h.document(_dry_run_html(d))
        return d

    def preview(self) -> DeletePreview:
        """The exact rows the delete would remove (read with pyarrow, deletes applied), with
        the rows matched per data file."""
        self._require_filter()
        snap = self._table.refs.get(self._read_branch())
        snapshot_id = None if snap is None else snap.snapshot_id
        columns = [f.name for f in self._table.schema.fields]
        rows = self._table.scan(self._filter, snapshot_id=snapshot_id) \
            .select(*columns, "_file", "_pos").to_arrow()
        files: dict[str, int] = {}
        if rows.num_rows:
            vc = pc.value_counts(rows.column("_file"))
            files = dict(zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist(),
                             strict=True))
        p = DeletePreview(self._filter, snapshot_id, rows, files)
        self._last_preview = p
        shown = rows.drop_columns(["_pos"]).slice(0, self._sample_rows)
        names = pc.replace_substring_regex(shown.column("_file"), r"^.*/", "")
        shown = shown.set_column(shown.schema.get_field_index("_file"), "_file", names)
        per_file = h.table([t("data file"), t("rows matched")],
                           [[h.code(k.rsplit("/", 1)[-1]), str(v)] for k, v in files.items()])
        self.preview_panel.value = h.document(h.section(
            t("Preview: {n} row(s) match in {files} file(s)", n=p.count, files=len(files)),
            per_file + rows_html(shown), open=True))
        return p

    def commit(self) -> int:
        """Delete the matching rows on :attr:`branch` (creating a scratch branch from
        ``main`` first); the new snapshot id. Refused when nothing matches."""
        self._require_filter()
        tbl = self._table
        matched = self.preview()  # exact: what the effect's per-file table compares against
        branch = self._branch
        created = False
        if branch not in tbl.refs:
            main = tbl.refs.get(MAIN)
            if main is None:
                raise ValidationError("the table has no snapshot to branch from",
                                      field="branch", value=branch)
            tbl.create_branch(branch, main.snapshot_id)
            created = True
        try:
            snap = self._delete(branch)
        except BaseException:
            if created:
                with contextlib.suppress(IcebergError):
                    tbl.remove_branch(branch)
            raise
        if snap is None:
            if created:
                tbl.remove_branch(branch)
            raise ValidationError("no live row matches the filter: nothing to delete",
                                  field="filter", value=self._filter)
        if created:
            self._created_branch = branch
        self._effect = _effect_of(tbl, snap.snapshot_id)
        self._last_code = self.code()
        self._redraw()
        self.graph.selected = self.graph.node_for(snapshot_id=snap.snapshot_id) or ""
        self.effect_panel.value = h.document(_effect_html(self._effect)
                                             + _per_file_html(tbl, matched)
                                             + code_block(self._last_code))
        return int(snap.snapshot_id)

    def publish(self) -> int:
        """Fast-forward ``main`` to :attr:`branch` (write-audit-publish); ``main``'s new
        snapshot id."""
        if self._branch == MAIN:
            raise ValidationError("the delete was committed to main: nothing to publish",
                                  field="branch", value=MAIN)
        ref = self._table.fast_forward(MAIN, self._branch)
        self._redraw()
        return int(ref.snapshot_id)

    def undo(self) -> None:
        """Undo the last commit: drop the scratch branch this widget created, or roll the
        branch back to the delete's parent."""
        e = self._effect
        if e is None:
            raise ValidationError("nothing to undo: no delete was committed here", field="undo")
        if self._created_branch == self._branch and self._branch != MAIN:
            self._table.remove_branch(self._branch)
            self._created_branch = None
        elif e.parent_id is not None:
            self._table.rollback_to(e.parent_id, branch=self._branch)
        self._effect = None
        self.effect_panel.value = h.document(h.muted(t("undone")))
        self._redraw()

    def compare_modes(self) -> ModeComparison:
        """Run this delete copy-on-write and merge-on-read, each on a new scratch branch
        (dropped afterwards), and compare bytes written and what later scans pay."""
        self._require_filter()
        t = self._table
        main = t.refs.get(MAIN)
        if main is None:
            raise ValidationError("the table has no snapshot", field="branch", value=MAIN)
        effects: dict[str, DeleteEffect] = {}
        modes = [COPY_ON_WRITE] + ([MERGE_ON_READ] if t.metadata.format_version >= 2 else [])
        for mode in modes:
            name = _scratch_name(t)
            t.create_branch(name, main.snapshot_id)
            try:
                snap = t.delete(self._filter, mode, branch=name)
                if snap is not None:
                    effects[mode] = _effect_of(t, snap.snapshot_id)
            finally:
                t.remove_branch(name)
        result = ModeComparison(self._filter, effects)
        self.compare_panel.value = h.document(_comparison_html(result))
        self._redraw()
        return result

    def code(self) -> str:
        """The Python that makes the delete."""
        lines = []
        if self._branch != MAIN:
            lines.append(f"t.create_branch({self._branch!r})  # from main's snapshot")
        if self._mode == EQUALITY:
            lines.append(f"keys = t.scan({self._filter!r}).select(*{self._key!r}).to_arrow()")
            lines.append(f"t.delete_by_key(keys, on={self._key!r}, branch={self._branch!r})")
        else:
            lines.append(f"t.delete({self._filter!r}, {self._mode!r}, "
                         f"branch={self._branch!r})")
        return "\n".join(lines)

    # ------------------------------------------------------------------ actions

    def _delete(self, branch: str) -> Any:
        t = self._table
        if self._mode != EQUALITY:
            return t.delete(self._filter, self._mode, branch=branch)
        if not self._key:
            raise ValidationError("an equality delete needs key columns (the schema has no "
                                  "identifier fields): set .key", field="key")
        snap = t.refs[branch].snapshot_id
        keys = t.scan(self._filter, snapshot_id=snap).select(*self._key).to_arrow()
        if keys.num_rows == 0:
            return None
        return t.delete_by_key(keys, on=self._key, branch=branch)

    def _read_branch(self) -> str:
        """The branch a dry run or preview reads: the target once it exists, else main."""
        return self._branch if self._branch in self._table.refs else MAIN

    def _require_filter(self) -> None:
        if not self._filter.strip():
            raise ValidationError("type a predicate first", field="filter", value=self._filter)

    def _check_filter(self, value: str) -> None:
        expr = parse(value)
        self._table.scan(expr)  # binds against the schema: unknown columns, bad literals

    def _on_filter(self, value: str) -> None:
        columns = ", ".join(f"{f.name} {f.field_type}" for f in self._table.schema.fields)
        if not value.strip():
            self._filter = ""
            self.filter_state.value = h.document(h.muted(t("columns: {columns}",
                                                           columns=columns)))
            return
        try:
            self._check_filter(value)
        except IcebergError as e:
            self.filter_state.value = h.document(h.error(str(e)) + h.muted(
                " · " + t("columns: {columns}", columns=columns)))
            return
        self._filter = value
        self.filter_state.value = h.document(h.muted(t("✓ valid")))

    def _set_mode(self, value: str) -> None:
        if value not in MODES:
            raise ValidationError(f"mode must be one of {', '.join(MODES)}", field="mode",
                                  value=value)
        if value != COPY_ON_WRITE and self._table.metadata.format_version < 2:
            raise ValidationError("format v1 tables have no delete files: only copy-on-write",
                                  field="mode", value=value)
        self._mode = value
        if self.mode_input.value != value:
            self.mode_input.value = value

    def _set_key(self, text: str) -> None:
        self._key = [k.strip() for k in text.split(",") if k.strip()]

    def _set_branch(self, value: str) -> None:
        value = value.strip()
        if not value:
            return
        self._branch = value
        if self.branch_input.value != value:
            self.branch_input.value = value

    def _ask_commit(self) -> None:
        where = "main" if self._branch == MAIN else t("branch {name}", name=self._branch)
        self.confirm.ask(self.commit, t("delete rows where {filter} ({mode}) on {where}?",
                                        filter=self._filter, mode=self._mode, where=where))

    def _ask_publish(self) -> None:
        self.confirm.ask(self.publish, t("fast-forward main to {branch}?", branch=self._branch))

    def _ask_undo(self) -> None:
        what = (t("drop branch {name}", name=self._branch)
                if self._created_branch == self._branch
                else t("roll {name} back to the delete's parent", name=self._branch))
        self.confirm.ask(self.undo, t("undo: {what}?", what=what))

    # ------------------------------------------------------------------ drawing

    def _redraw(self) -> None:
        tbl = self._table
        md = tbl.metadata
        main = tbl.refs.get(MAIN)
        target = tbl.refs.get(self._branch)
        state = (t("not created yet (made from main on commit)") if target is None
                 else t("at {id}", id=target.snapshot_id))
        self.header.value = h.document(
            f"<b>Deletes</b> {h.code(table_name(tbl))} " + h.muted(
                t("format v{v} · main at {main} · target {branch}: {state}",
                  v=md.format_version, main="-" if main is None else main.snapshot_id,
                  branch=self._branch, state=state)))
        self.branch_input.options = sorted(set(tbl.refs) | {self._branch})
        self.graph.show(snapshot_tree(tbl.snapshots))
        self.publish_button.disabled = (target is None or self._branch == MAIN
                                        or main is None
                                        or target.snapshot_id == main.snapshot_id)
        self.undo_button.disabled = self._effect is None

    # ------------------------------------------------------------------ static snapshot

    def static_text(self) -> str:
        lines = [f"Deletes({table_name(self._table)}): "
                 + t("filter {filter}, mode {mode}, branch {branch}", filter=repr(self._filter),
                     mode=self._mode, branch=self._branch)]
        d = self._last_dry_run
        if d is not None:
            lines.append(t("dry run: {n} candidate file(s) of {total}, {whole} removed whole, "
                           "rows {least}..{most}", n=len(d.candidates), total=d.files_total,
                           whole=len(d.whole), least=d.rows_at_least, most=d.rows_at_most))
        p = self._last_preview
        if p is not None:
            lines.append(t("preview: {n} row(s) in {files} file(s)", n=p.count,
                           files=len(p.files)))
        e = self._effect
        if e is not None:
            lines.append(t("committed: snapshot {id} ({op}), {added} file(s) added, {removed} "
                           "removed, {bytes} B written, scans now apply {deletes} delete "
                           "file(s)", id=e.snapshot_id, op=e.operation, added=len(e.added),
                           removed=len(e.removed), bytes=e.bytes_written,
                           deletes=e.delete_files_to_apply))
        if self._last_code:
            lines.append(self._last_code)
        lines.append(f"({t(INTERACTIVE_NOTE)})")
        return "\n".join(lines)

    def static_html(self) -> str:
        parts = [self.header.value, h.muted(t(INTERACTIVE_NOTE)), self.dry_panel.value,
                 self.preview_panel.value, self.effect_panel.value, self.compare_panel.value]
        if self.graph.graph is not None:
            parts.append(h.section(t("Snapshots"), self.graph.graph.html_fragment(),
                                   open=True))
        return f'<div class="icenb-card">{"".join(parts)}</div>'


# --------------------------------------------------------------------------- effects


def _kind(content: int, file_format: str) -> str:
    """A file's kind in the one vocabulary of ``icenb.spec.manifest.ContentKind``."""
    if content == 0:
        return "data"
    if content == 2:
        return "equality deletes"
    return "deletion vector" if file_format.upper() == "PUFFIN" else "position deletes"


def _effect_of(t: Table, snapshot_id: int) -> DeleteEffect:
    """Read what snapshot ``snapshot_id`` changed (``t.diff`` of it and its parent)."""
    snap = t.metadata.snapshot_by_id(snapshot_id)
    assert snap is not None
    parent = snap.parent_snapshot_id
    added: list[tuple[str, str, int, int]] = []
    removed: list[tuple[str, str, int, int]] = []
    if parent is not None:
        d = t.diff(parent, snapshot_id)
        for sets, out in (((d.data_added, d.deletes_added), added),
                          ((d.data_removed, d.deletes_removed), removed)):
            for fs in sets:
                out.extend((f.path, _kind(f.content, f.file_format), f.record_count,
                            f.file_size_in_bytes) for f in fs.kept)
    scan = t.scan(snapshot_id=snapshot_id)
    plan = scan.plan()
    live = scan.count()
    operation = "?" if snap.summary is None else str(snap.summary.operation)
    return DeleteEffect(snapshot_id, parent, operation, tuple(added),
                        tuple(removed), sum(a[3] for a in added),
                        plan.delete_files_selected, live)


def _per_file_html(tbl: Table, matched: DeletePreview) -> str:
    """Per data file the delete touched: its records, the rows this delete removed, and what
    stays live of it (the deletes before this one applied)."""
    if not matched.files:
        return ""
    records: dict[str, int] = {}
    plan = tbl.scan(snapshot_id=matched.snapshot_id).plan()
    if plan.files_selected:
        files = plan.files
        records = dict(zip(files.column("file_path").to_pylist(),
                           files.column("record_count").to_pylist(), strict=True))
    live = tbl.scan(snapshot_id=matched.snapshot_id).select("_file").to_arrow()
    live_counts: dict[str, int] = {}
    if live.num_rows:
        vc = pc.value_counts(live.column("_file"))
        live_counts = dict(zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist(),
                               strict=True))
    rows = [[h.code(path.rsplit("/", 1)[-1]), str(records.get(path, "?")),
             str(live_counts.get(path, 0)), str(n), str(live_counts.get(path, 0) - n)]
            for path, n in matched.files.items()]
    return h.section(t("Per data file: live against deleted rows"),
                     h.table([t(x) for x in ("data file", "records", "live before",
                                             "deleted now", "live after")], rows), open=True)


def _dry_run_html(d: DeleteDryRun) -> str:
    rows = [(t("snapshot read"), str(d.snapshot_id)),
            (t("live data files"), str(d.files_total)),
            (t("candidates (inclusive projection + metrics)"), str(len(d.candidates))),
            (t("pruned without reading"), str(d.files_pruned)),
            (t("removed whole (strict projection or metrics)"), str(len(d.whole))),
            (t("to read (partly matching)"), str(len(d.partial))),
            (t("delete files applied to the candidates"), str(d.delete_files)),
            (t("rows deleted"), t("at least {least}, at most {most}", least=d.rows_at_least,
                                  most=d.rows_at_most))]
    return h.section(t("Dry run (metadata only): {filter}", filter=d.filter), h.kv(rows),
                     open=True)


def _effect_html(e: DeleteEffect) -> str:
    def table(items: tuple[tuple[str, str, int, int], ...]) -> str:
        return h.table([t("file"), t("kind"), t("records"), t("bytes")],
                       [[h.code(p.rsplit("/", 1)[-1]), h.esc(t(k)), str(n), str(b)]
                        for p, k, n, b in items]) if items else h.muted(t("none"))
    facts = h.kv([(t("snapshot"), t("{id} ({op}), parent {parent}", id=e.snapshot_id,
                                    op=e.operation, parent=e.parent_id)),
                  (t("bytes written"), str(e.bytes_written)),
                  (t("live rows now"), str(e.live_rows)),
                  (t("delete files every later scan applies"), str(e.delete_files_to_apply))])
    return h.section(t("Committed: what the delete did"), facts
                     + h.section(t("Added (delete files, DVs with cardinality, or rewritten "
                                   "data files)"), table(e.added), open=True)
                     + h.section(t("Removed"), table(e.removed), open=True), open=True)


def _comparison_html(c: ModeComparison) -> str:
    modes = list(c.effects)
    rows = [[t("files added")] + [str(len(c.effects[m].added)) for m in modes],
            [t("files removed")] + [str(len(c.effects[m].removed)) for m in modes],
            [t("bytes written")] + [str(c.effects[m].bytes_written) for m in modes],
            [t("delete files a scan applies")] + [str(c.effects[m].delete_files_to_apply)
                                                  for m in modes]]
    return h.section(t("Compare modes: {filter}", filter=c.filter), h.table(["", *modes], rows),
                     open=True)
