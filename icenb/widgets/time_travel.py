"""TimeTravel: click a snapshot and see the table as it was; pick two and see what changed.

Built only on the public faces of ``icenb.table`` and ``icenb.display``: the snapshot tree and
a time-scaled strip of every snapshot (branch lanes; schema, partition-spec, rollback and tag
markers) as clickable graphs, a ref picker, a slider over a ref's ancestors and an "as of"
field resolved as ``t.at(...)`` resolves it (spec: Appendix F, "Point in Time Reads"). For the
selection: its summary, metadata tree, files and a page of rows; for an A/B pair: the metadata,
file, manifest and row differences (``t.diff``). Every panel shows the code that reproduces it.
Metadata panels never start Spark; rows are read with pyarrow in a background thread, with
Spark only on request. Writable tables get tag, branch, rollback and set-current actions, each
confirmed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import ipywidgets as w
import pyarrow as pa

from icenb.display import (
    fold_members,
    get_options,
    metadata_tree_figure,
    render,
    snapshot_strip,
    snapshot_tree,
)
from icenb.display import html as h
from icenb.errors import IcebergError, NoSuchSnapshot, ValidationError
from icenb.labels import t
from icenb.reprs import safe_repr
from icenb.spec import (
    ADDED_DATA_FILES,
    ADDED_DELETE_FILES,
    ADDED_EQ_DELETES,
    ADDED_POS_DELETES,
    ADDED_RECORDS,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
    TOTAL_DATA_FILES,
    TOTAL_DELETE_FILES,
    TOTAL_RECORDS,
)
from icenb.table import Table, timestamp_to_ms
from icenb.widgets.graph_view import GraphView
from icenb.widgets.panels import (
    INTERACTIVE_NOTE,
    Background,
    Confirm,
    ErrorBox,
    StaticSnapshot,
    code_block,
    error_html,
    guarded,
    spinner_html,
    utc,
)

# An int that names no snapshot and lies in this range is read as epoch milliseconds.
_EPOCH_MS_MAX = 10**13
_ROW_CELL_LIMIT = 80


def _name(table: Table) -> str:
    """The table's catalog name, else the last folder of its location (as its repr)."""
    ident = table.identifier
    return ".".join(ident) if ident else table.location.rstrip("/").rsplit("/", 1)[-1]


#: How the reproduce-code names the table (as the README and notebooks do).
_T = "t"


def rows_html(rows: pa.Table, *, offset: int = 0) -> str:
    """A page of rows as a small HTML table (cells cut, nulls shown as null)."""
    if rows.num_columns == 0:
        return h.muted(t("no columns"))
    cols = [rows.column(i).to_pylist() for i in range(rows.num_columns)]
    body = []
    for r in range(rows.num_rows):
        cells = [h.esc(str(offset + r))]
        for c in cols:
            v = c[r]
            cells.append(h.muted("null") if v is None else h.esc(v, _ROW_CELL_LIMIT))
        body.append(cells)
    return h.table(["#", *rows.column_names], body)


@safe_repr
class TimeTravel(StaticSnapshot, w.VBox):  # type: ignore[misc]
    """Travel in a table's history. ``TimeTravel(t)`` or ``t.time_travel()``.

    Programmatic surface: :meth:`select` (as ``t.at``), :attr:`snapshot_id`, :meth:`compare`,
    :attr:`diff` (the ``t.diff`` of the pair), :attr:`rows` (the current page, pyarrow).
    """

    def __init__(self, table: Table, *, page_size: int = 20,
                 max_nodes: int | None = None) -> None:
        self._table = table
        self._page_size = page_size
        self._page = 0
        self._selected: int | None = None
        self._other: int | None = None
        self._diff: Any = None
        self._rows: pa.Table | None = None
        self._rows_error: BaseException | None = None
        self._use_spark = False
        self._focus: list[int] = []
        self._max_nodes = max_nodes if max_nodes is not None else \
            get_options().display_max_snapshots
        self._syncing = False
        self._ancestors: list[int] = []
        self._work = Background()
        self._diff_work = Background()
        #: how the last :meth:`select` resolved its argument, in words
        self.explanation = ""

        self.error = ErrorBox()
        self.header = w.HTML()
        self.tree = GraphView(height="380px", parent_key="ArrowDown",
                              status=t("click a snapshot; shift-click a second one to compare"))
        self.strip = GraphView(height="190px", parent_key="ArrowLeft",
                               status=t("every snapshot in time, one lane per branch"))
        self.ref_picker = w.Dropdown(description=t("ref"), layout=w.Layout(width="320px"))
        self.slider = w.IntSlider(min=0, max=0, value=0, readout=False, continuous_update=True,
                                  description=t("ancestors"), layout=w.Layout(width="420px"))
        self.slider_label = w.HTML()
        self.as_of = w.Text(continuous_update=False,
                            placeholder=t("as of: ISO time, epoch ms, id or ref"),
                            layout=w.Layout(width="300px"))
        self.as_of_go = w.Button(description=t("go"), layout=w.Layout(width="50px"))
        self.resolution = w.HTML()
        self.summary = w.HTML()
        self.summary.add_class("icenb-tt-summary")
        self.metadata_graph = GraphView(height="420px", status=t("scroll to zoom, drag to pan"))
        self.metadata_panel = w.HTML()
        self.metadata_panel.add_class("icenb-tt-metadata")
        self.files = w.HTML()
        self.files.add_class("icenb-tt-files")
        self.rows_panel = w.HTML()
        self.rows_panel.add_class("icenb-tt-rows")
        self.prev_page = w.Button(description=t("◀ previous"), layout=w.Layout(width="100px"))
        self.next_page = w.Button(description=t("next ▶"), layout=w.Layout(width="100px"))
        self.page_label = w.Label()
        self.spark_toggle = w.ToggleButton(description=t("read with Spark"), value=False,
                                           tooltip=t("read the page through Spark (starts a "
                                                     "local session on first use)"))
        self.cancel = w.Button(description=t("cancel"), button_style="warning",
                               layout=w.Layout(width="80px", display="none"))
        self.diff_panel = w.HTML(value=h.document(h.muted(t(
            "shift-click a second snapshot (or call .compare(a, b)) to see what changed"))))
        self.diff_panel.add_class("icenb-tt-diff")
        self.tabs = w.Tab(children=[
            self.summary, w.VBox([self.metadata_graph, self.metadata_panel]), self.files,
            w.VBox([w.HBox([self.prev_page, self.next_page, self.page_label,
                            self.spark_toggle, self.cancel]), self.rows_panel]),
            self.diff_panel])
        for i, title in enumerate(("Summary", "Metadata tree", "Files", "Rows", "Difference")):
            self.tabs.set_title(i, t(title))
        self.actions = self._build_actions()

        super().__init__(children=[
            self.header, self.error,
            w.HBox([self.ref_picker, self.as_of, self.as_of_go]), self.resolution,
            w.HBox([self.slider, self.slider_label]),
            self.tree, self.strip, self.tabs, self.actions])
        self.add_class("icenb-tt")

        self.tree.observe(self._on_graph_pick, names=["selected", "compare"])
        self.strip.observe(self._on_graph_pick, names=["selected", "compare"])
        self.tree.on_expand(self._expand)
        self.ref_picker.observe(self._on_ref, names="value")
        self.slider.observe(self._on_slider, names="value")
        self.as_of_go.on_click(lambda _b: self._on_as_of())
        self.as_of.observe(lambda _c: self._on_as_of(), names="value")
        self.prev_page.on_click(lambda _b: self._turn(-1))
        self.next_page.on_click(lambda _b: self._turn(1))
        self.spark_toggle.observe(self._on_spark, names="value")
        self.cancel.on_click(lambda _b: self._cancel_rows())

        self._redraw()
        current = table.metadata.current_snapshot_id
        if current is not None:
            self._guard(lambda: self.select(current))
        else:
            self.summary.value = h.document(h.muted(t("the table has no snapshot yet")))

    # ------------------------------------------------------------------ programmatic surface

    @property
    def table(self) -> Table:
        return self._table

    @property
    def snapshot_id(self) -> int | None:
        """The selected snapshot's id."""
        return self._selected

    @property
    def other_snapshot_id(self) -> int | None:
        """The second snapshot of a comparison, if any."""
        return self._other

    @property
    def diff(self) -> Any:
        """``t.diff(a, b)`` for the compared pair (None without a second snapshot)."""
        return self._diff

    @property
    def rows(self) -> pa.Table:
        """The current page of the selected snapshot's rows, in its schema (waits for the
        background read). Raises the read's error, if it failed."""
        self._work.wait()
        if self._rows_error is not None:
            raise self._rows_error
        if self._rows is None:
            raise NoSuchSnapshot("no snapshot is selected", field="snapshot_id")
        return self._rows

    def select(self, when: int | str | datetime | None = None, /, *,
               timestamp_ms: int | None = None) -> int:
        """Select a snapshot as ``t.at`` finds it: an id, a branch or tag name, a time
        (``datetime``, ISO string, or ``timestamp_ms=``). An int that names no snapshot is
        read as epoch milliseconds. Returns the snapshot id; the panels follow."""
        sid, how = self._resolve(when, timestamp_ms)
        self.explanation = how
        self.resolution.value = h.document(h.muted(how))
        self._select_id(sid)
        return sid

    def compare(self, a: int | str | datetime, b: int | str | datetime) -> Any:
        """Select ``a`` and compare it with ``b``; returns ``t.diff(a, b)``."""
        sid_a, _ = self._resolve(a, None)
        sid_b, _ = self._resolve(b, None)
        self._select_id(sid_a, rows=False)
        self._set_other(sid_b)
        self._load_rows()   # after the file difference: the kernel answers first
        return self._diff

    def page(self, number: int) -> pa.Table:
        """Show page ``number`` (0-based) of the selection's rows and return it."""
        self._page = max(0, number)
        self._load_rows()
        return self.rows

    # ------------------------------------------------------------------ resolving

    def _resolve(self, when: Any, timestamp_ms: int | None) -> tuple[int, str]:
        md = self._table.metadata
        if timestamp_ms is None and isinstance(when, int) and not isinstance(when, bool) \
                and md.snapshot_by_id(when) is None and 0 <= when < _EPOCH_MS_MAX:
            timestamp_ms, when = when, None
        if isinstance(when, str) and when.strip().lstrip("-").isdigit():
            number = int(when.strip())
            if md.snapshot_by_id(number) is not None:
                when = number
            elif 0 <= number < _EPOCH_MS_MAX:
                timestamp_ms, when = number, None
        scan = self._table.at(when, timestamp_ms=timestamp_ms) if timestamp_ms is not None \
            else self._table.at(when)
        sid = scan.snapshot_id
        if sid is None:
            raise NoSuchSnapshot("the table has no snapshot", field="at", value=when)
        return sid, self._explain(sid, when, timestamp_ms)

    def _explain(self, sid: int, when: Any, timestamp_ms: int | None) -> str:
        md = self._table.metadata
        if timestamp_ms is not None or (isinstance(when, (datetime, str)) and \
                when not in md.refs and when != "main"):
            ms = timestamp_ms
            if ms is None:
                ms = timestamp_to_ms(when)
            entry = None
            for e in md.snapshot_log:
                if e.timestamp_ms <= ms:
                    entry = e
            at = " " + t("since {time}", time=utc(entry.timestamp_ms)) if entry is not None else ""
            return t("snapshot {id}: current on main at {time} UTC{since} (the last "
                     "snapshot-log entry at or before that time; spec Appendix F)", id=sid,
                     time=utc(ms), since=at)
        if isinstance(when, str):
            ref = md.refs.get(when)
            kind = "branch" if ref is None or ref.is_branch else "tag"
            return t("snapshot {id}: the head of {kind} `{ref}`", id=sid, kind=t(kind), ref=when)
        return t("snapshot {id}", id=sid)

    # ------------------------------------------------------------------ selection

    def _guard(self, fn: Callable[[], object]) -> None:
        guarded(self.error, fn)

    def _select_id(self, sid: int, *, draw: bool = True, rows: bool = True) -> None:
        """Select ``sid``; ``draw=False`` (slider steps) leaves a hidden snapshot folded in
        the tree instead of re-laying it out (the strip always shows it)."""
        md = self._table.metadata
        if md.snapshot_by_id(sid) is None:
            raise NoSuchSnapshot("no snapshot with this id", file=self._table.metadata_location,
                                 field="snapshot-id", value=sid)
        self._selected = sid
        if self._other == sid:
            self._other = None
            self._diff = None
        self._page = 0
        if draw:
            self._ensure_drawn(sid)
        self._sync_graphs()
        self._sync_slider()
        self._show_summary()
        self._show_metadata()
        if rows:
            self._load_rows()
        if self._other is not None:
            self._show_diff()

    def _set_other(self, sid: int | None) -> None:
        if sid is not None and sid == self._selected:
            sid = None
        self._other = sid
        if sid is not None:
            self._ensure_drawn(sid)
        self._sync_graphs()
        self._show_diff()

    def _ensure_drawn(self, sid: int) -> None:
        if self.tree.node_for(snapshot_id=sid) is None:
            self._focus = [sid, *[f for f in self._focus if f != sid]][:64]
            self._draw_tree()

    def _sync_graphs(self) -> None:
        self._syncing = True
        try:
            for view in (self.tree, self.strip):
                sel = None if self._selected is None else view.node_for(snapshot_id=self._selected)
                oth = None if self._other is None else view.node_for(snapshot_id=self._other)
                with view.hold_sync():
                    view.selected = sel or ""
                    view.compare = oth or ""
        finally:
            self._syncing = False

    def _on_graph_pick(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        view: GraphView = change["owner"]
        node = change["new"]
        sid = view.snapshot_of(node) if node else None
        if change["name"] == "selected":
            if sid is not None and sid != self._selected:
                self._guard(lambda: self._select_id(sid))
        else:
            if sid != self._other:
                self._guard(lambda: self._set_other(sid))

    def _expand(self, node_id: str) -> None:
        def run() -> None:
            members = fold_members(self._table.snapshots, node_id)
            budget = get_options().display_max_snapshots
            self._focus = [*members[:budget], *self._focus][:budget * 4]
            self._max_nodes += min(len(members), budget)
            self._draw_tree()
            self._sync_graphs()
        self._guard(run)

    def _on_ref(self, change: dict[str, Any]) -> None:
        name = change["new"]
        if name:
            self._guard(lambda: self.select(name))

    def _on_slider(self, change: dict[str, Any]) -> None:
        if self._syncing or not self._ancestors:
            return
        i = change["new"]
        if 0 <= i < len(self._ancestors) and self._ancestors[i] != self._selected:
            sid = self._ancestors[i]
            self._guard(lambda: self._select_id(sid, draw=False))

    def _on_as_of(self) -> None:
        text = self.as_of.value.strip()
        if text:
            self._guard(lambda: self.select(text))

    def _sync_slider(self) -> None:
        """The slider runs over the ancestors of the picked ref (else of the selection's
        newest descendant on main, else of the selection itself), oldest first."""
        md = self._table.metadata
        sid = self._selected
        if sid is None:
            return
        head: int | None = None
        ref = self.ref_picker.value
        if ref and ref in md.refs and md.is_ancestor(sid, md.refs[ref].snapshot_id):
            head = md.refs[ref].snapshot_id
        elif md.current_snapshot_id is not None and md.is_ancestor(sid, md.current_snapshot_id):
            head = md.current_snapshot_id
        else:
            head = sid
        if not self._ancestors or self._ancestors[-1] != head:
            self._ancestors = [s.snapshot_id for s in md.ancestors(head)][::-1]
        self._syncing = True
        try:
            with self.slider.hold_sync():
                self.slider.max = max(len(self._ancestors) - 1, 0)
                if sid in self._ancestors:
                    self.slider.value = self._ancestors.index(sid)
        finally:
            self._syncing = False
        pos = self._ancestors.index(sid) + 1 if sid in self._ancestors else 0
        snap = md.snapshot_by_id(sid)
        when = "" if snap is None else utc(snap.timestamp_ms)
        self.slider_label.value = h.document(h.muted(
            t("{pos:,} of {n:,}", pos=pos, n=len(self._ancestors)) + f" · {sid} · {when}"))

    # ------------------------------------------------------------------ drawing

    def _draw_tree(self) -> None:
        """Redraw the snapshot tree only (a fold opened, a hidden snapshot selected): the
        strip, ref picker and header depend on the metadata alone."""
        self.tree.show(snapshot_tree(self._table.snapshots, max_nodes=self._max_nodes,
                                     focus=self._focus))

    def _redraw(self) -> None:
        """Redraw everything drawn from the metadata (first draw, and after an action)."""
        tbl = self._table
        md = tbl.metadata
        self._draw_tree()
        self.strip.show(snapshot_strip(tbl.snapshots, spec_changes=self._spec_changes()))
        refs = sorted(md.refs.items(), key=lambda kv: (kv[0] != "main", not kv[1].is_branch,
                                                       kv[0]))
        options = [(t("— branch or tag —"), "")] + [
            (f"{name} ({t('branch') if r.is_branch else t('tag')}) → {r.snapshot_id}", name)
            for name, r in refs]
        self._syncing = True
        try:
            keep = self.ref_picker.value if self.ref_picker.value in md.refs else ""
            self.ref_picker.options = options
            self.ref_picker.value = keep
        finally:
            self._syncing = False
        n_branches = sum(1 for r in md.refs.values() if r.is_branch)
        writable = "" if tbl.catalog is not None else " · " + t("read-only")
        sub = t("format v{v} · {snapshots:,} snapshots · {branches} branches · {tags} tags",
                v=md.format_version, snapshots=len(md.snapshots), branches=n_branches,
                tags=len(md.refs) - n_branches)
        self.header.value = h.document(
            f'<div class="icenb-head"><span class="icenb-kind">{h.esc(t("Time travel"))}</span>'
            f'<span class="icenb-title">{h.esc(_name(tbl))}</span>'
            f'<span class="icenb-sub">{h.esc(sub)}{h.esc(writable)}</span></div>')

    def _spec_changes(self) -> dict[int, int]:
        """Snapshot id -> partition spec id of the first live manifest written with each spec
        after the first, from the manifest lists of the refs' heads (a few reads; nothing when
        the table has one spec or a list cannot be read)."""
        md = self._table.metadata
        if len(md.partition_specs) < 2:
            return {}
        first: dict[int, tuple[int, int]] = {}   # spec id -> (sequence number, snapshot id)
        heads = {r.snapshot_id for r in md.refs.values()}
        for head in heads:
            try:
                manifests = self._table.inspect.manifests(head)
            except IcebergError:
                continue
            if "partition_spec_id" not in manifests.column_names:
                continue
            specs = manifests.column("partition_spec_id").to_pylist()
            added = manifests.column("added_snapshot_id").to_pylist()
            for spec_id, sid in zip(specs, added, strict=True):
                snap = md.snapshot_by_id(sid) if sid is not None else None
                if snap is None or spec_id is None:
                    continue
                key = (snap.sequence_number, sid)
                if spec_id not in first or key < first[spec_id]:
                    first[spec_id] = key
        oldest = min(first.items(), key=lambda kv: kv[1], default=None)
        return {sid: spec for spec, (_, sid) in first.items()
                if oldest is None or spec != oldest[0]}

    # ------------------------------------------------------------------ panels

    def _show_summary(self) -> None:
        md = self._table.metadata
        sid = self._selected
        snap = None if sid is None else md.snapshot_by_id(sid)
        if snap is None:
            return
        refs = [f"{n} ({t('branch') if r.is_branch else t('tag')})"
                for n, r in sorted(md.refs.items()) if r.snapshot_id == sid]
        summary = dict(snap.summary or {})
        rows: list[tuple[str, str]] = [
            (t("snapshot id"), h.code(snap.snapshot_id)),
            (t("parent"), h.code(snap.parent_snapshot_id) if snap.parent_snapshot_id is not None
             else h.muted(t("none"))),
            (t("time (UTC)"), h.esc(utc(snap.timestamp_ms))),
            (t("operation"), h.esc(snap.operation or "")),
            (t("sequence number"), h.esc(snap.sequence_number)),
            (t("schema id"), h.esc(snap.schema_id)),
        ]
        if md.format_version >= 3:
            rows.append((t("first row id"), h.esc(snap.first_row_id)))
            rows.append((t("added rows"), h.esc(snap.added_rows)))
        rows.append((t("refs here"), h.esc(", ".join(refs)) if refs else h.muted(t("none"))))
        if snap.manifest_list:
            rows.append((t("manifest list"), h.code(snap.manifest_list)))
        if snap.root_manifest:
            rows.append((t("root manifest"), h.code(snap.root_manifest)))
        keys = (ADDED_DATA_FILES, DELETED_DATA_FILES, ADDED_DELETE_FILES,
                ADDED_RECORDS, DELETED_RECORDS, TOTAL_RECORDS, TOTAL_DATA_FILES,
                TOTAL_DELETE_FILES, ADDED_POS_DELETES, ADDED_EQ_DELETES)
        for k in keys:
            if k in summary:
                rows.append((k, h.esc(summary[k])))
        code = (f"{_T}.snapshot({sid})\n{_T}.at({sid}).to_pandas()\n"
                f"{_T}.at({sid}).to_spark()")
        self.summary.value = h.document(
            f'<div class="icenb-card">{h.kv(rows)}{code_block(code)}</div>')

    def _show_metadata(self) -> None:
        """The selection's metadata tree (metadata.json -> manifest list or v4 root ->
        manifests -> files) as a zoomable drawing, the same one ``t.metadata_tree(sid)``
        shows, with its outline."""
        sid = self._selected
        try:
            figure = metadata_tree_figure(self._table.metadata_tree(sid))
        except Exception as e:
            self.metadata_panel.value = error_html(e)
            self.metadata_graph.layout.display = "none"
            return
        self.metadata_graph.layout.display = ""
        self.metadata_graph.show(figure)
        self.metadata_panel.value = h.document(
            (h.muted(figure.caption) if figure.caption else "")
            + h.section(t("Outline"), h.pre(figure.text))
            + code_block(f"{_T}.metadata_tree({sid})"))

    def _load_rows(self) -> None:
        sid = self._selected
        if sid is None:
            return
        tbl, page, size, spark = self._table, self._page, self._page_size, self._use_spark
        self._rows = None
        self._rows_error = None
        how = "Spark" if spark else "pyarrow"
        self.rows_panel.value = spinner_html(t(
            "reading rows {start:,}-{end:,} of snapshot {id} with {how}…", start=page * size,
            end=(page + 1) * size - 1, id=sid, how=how))
        self.files.value = spinner_html(t("planning the files…"))
        self.cancel.layout.display = ""
        self.page_label.value = t("page {n}", n=page + 1)

        def work() -> tuple[Any, pa.Table]:
            scan = tbl.at(sid)
            plan = scan.plan()
            if spark:
                df = scan.to_spark()
                rows = df.offset(page * size).limit(size).toArrow()
            else:
                rows = scan.page(page * size, size)
            return plan, rows

        def done(result: tuple[Any, pa.Table]) -> None:
            plan, rows = result
            self._rows = rows
            self.cancel.layout.display = "none"
            self.files.value = h.document(render(plan).html + code_block(
                f"{_T}.at({sid}).plan().files"))
            end = page * size + rows.num_rows
            more = "" if rows.num_rows == size else f" ({t('last page')})"
            code = (f"{_T}.at({sid}).page({page * size}, {size})" if not spark else
                    f"{_T}.at({sid}).to_spark().offset({page * size}).limit({size})")
            self.rows_panel.value = h.document(
                h.muted(t("rows {start:,}-{end:,}{more} of snapshot {id}, in its schema "
                          "(read with {how})", start=page * size,
                          end=max(end - 1, page * size), more=more, id=sid, how=how))
                + rows_html(rows, offset=page * size) + code_block(code))

        def failed(err: BaseException) -> None:
            self._rows_error = err
            self.cancel.layout.display = "none"
            self.rows_panel.value = error_html(err)
            self.files.value = error_html(err)

        self._work.run(work, done, failed)

    def _turn(self, step: int) -> None:
        if self._selected is None:
            return
        if step > 0 and self._rows is not None and self._rows.num_rows < self._page_size:
            return
        self._page = max(0, self._page + step)
        self._guard(self._load_rows)

    def _on_spark(self, change: dict[str, Any]) -> None:
        self._use_spark = bool(change["new"])
        self._guard(self._load_rows)

    def _cancel_rows(self) -> None:
        self._work.cancel()
        self.cancel.layout.display = "none"
        self.rows_panel.value = h.document(h.muted(t("cancelled")))
        self.files.value = h.document(h.muted(t("cancelled")))

    def _show_diff(self) -> None:
        a, b = self._selected, self._other
        if a is None or b is None:
            self._diff = None
            self.diff_panel.value = h.document(h.muted(t(
                "shift-click a second snapshot (or call .compare(a, b)) to see what changed")))
            return
        try:
            self._diff = self._table.diff(a, b)
            files_html = render(self._diff).html
            meta_html = self._metadata_difference(a, b)
            manifests_html = self._manifest_difference(a, b)
        except Exception as e:
            self._diff = None
            self.diff_panel.value = error_html(e)
            return
        head = (meta_html + files_html + manifests_html)
        code = f"d = {_T}.diff({a}, {b})\nremoved, added = d.rows()"
        self.diff_panel.value = h.document(head + spinner_html(t("reading changed rows…"))
                                           + code_block(code))
        diff = self._diff

        def work() -> tuple[pa.Table, pa.Table]:
            removed, added = diff.rows()
            return removed, added

        def done(result: tuple[pa.Table, pa.Table]) -> None:
            removed, added = result
            limit = self._page_size
            parts = [h.section(t("Rows removed ({n:,})", n=removed.num_rows),
                               rows_html(removed.slice(0, limit)), open=True),
                     h.section(t("Rows added ({n:,})", n=added.num_rows),
                               rows_html(added.slice(0, limit)), open=True)]
            self.diff_panel.value = h.document(head + "".join(parts) + code_block(code))

        def failed(err: BaseException) -> None:
            self.diff_panel.value = h.document(head) + error_html(err)

        self._diff_work.run(work, done, failed)

    def _metadata_difference(self, a: int, b: int) -> str:
        md = self._table.metadata
        sa, sb = md.snapshot_by_id(a), md.snapshot_by_id(b)
        if sa is None or sb is None:
            return ""
        fields: list[tuple[str, Callable[[Any], Any]]] = [
            ("time (UTC)", lambda s: utc(s.timestamp_ms)),
            ("operation", lambda s: s.operation),
            ("sequence number", lambda s: s.sequence_number),
            ("schema id", lambda s: s.schema_id),
            ("total records", lambda s: (s.summary or {}).get(TOTAL_RECORDS)),
            ("total data files", lambda s: (s.summary or {}).get(TOTAL_DATA_FILES)),
            ("total delete files", lambda s: (s.summary or {}).get(TOTAL_DELETE_FILES)),
        ]
        if md.format_version >= 3:
            fields.append(("first row id", lambda s: s.first_row_id))
        rows = []
        for label, get in fields:
            va, vb = get(sa), get(sb)
            mark = "" if va == vb else h.badge(t("changed"), "warn")
            rows.append([h.esc(t(label)), h.esc(va), h.esc(vb), mark])
        return h.section(t("Metadata"), h.table(["", f"a = {a}", f"b = {b}", ""], rows),
                         open=True)

    def _manifest_difference(self, a: int, b: int) -> str:
        """Manifests (v4: root entries) reused by b, new in b, and gone from a."""
        md = self._table.metadata
        if md.format_version >= 4:
            return ""
        ins = self._table.inspect
        pa_ = set(ins.manifests(a).column("path").to_pylist())
        pb = set(ins.manifests(b).column("path").to_pylist())
        reused, new, gone = len(pa_ & pb), sorted(pb - pa_), sorted(pa_ - pb)
        rows = [[h.esc(t("reused (the same file in both)")), h.esc(f"{reused:,}")],
                [h.esc(t("written for b (new or rewritten)")), h.esc(f"{len(new):,}")],
                [h.esc(t("only in a (replaced or dropped)")), h.esc(f"{len(gone):,}")]]
        return h.section(t("Manifests"), h.table(["", t("manifests")], rows), open=True)

    # ------------------------------------------------------------------ actions

    def _build_actions(self) -> w.Widget:
        if self._table.catalog is None:
            return w.HTML(h.document(h.muted(t(
                "read-only (opened by location): no tag, branch or rollback actions"))))
        self.ref_name = w.Text(placeholder=t("tag or branch name"),
                               layout=w.Layout(width="200px"))
        buttons = [("tag here", self._do_tag), ("branch here", self._do_branch),
                   ("roll back main here", self._do_rollback),
                   ("set current here", self._do_set_current)]
        self.action_buttons = []
        for label, fn in buttons:
            b = w.Button(description=t(label), layout=w.Layout(width="auto"))
            b.on_click(lambda _b, fn=fn: self._guard(fn))
            self.action_buttons.append(b)
        self.confirm = Confirm(self.error, self._after_action)
        return w.VBox([w.HBox([self.ref_name, *self.action_buttons]), self.confirm])

    def _ask(self, action: Callable[[], object], question: str) -> None:
        self.confirm.ask(action, question)

    def _after_action(self) -> None:
        self._redraw()
        self._sync_graphs()
        if self._selected is not None:
            self._show_summary()

    def _need_selection(self) -> int:
        if self._selected is None:
            raise ValidationError("select a snapshot first", field="snapshot_id")
        return self._selected

    def _need_name(self) -> str:
        name = str(self.ref_name.value).strip()
        if not name:
            raise ValidationError("type a name for the tag or branch", field="name",
                                  value=name)
        return name

    def _do_tag(self) -> None:
        sid, name = self._need_selection(), self._need_name()
        self._ask(lambda: self._table.create_tag(name, sid),
                  t("create tag {name} at snapshot {id}?", name=repr(name), id=sid)
                  + f"  t.create_tag({name!r}, {sid})")

    def _do_branch(self) -> None:
        sid, name = self._need_selection(), self._need_name()
        self._ask(lambda: self._table.create_branch(name, sid),
                  t("create branch {name} at snapshot {id}?", name=repr(name), id=sid)
                  + f"  t.create_branch({name!r}, {sid})")

    def _do_rollback(self) -> None:
        sid = self._need_selection()
        self._ask(lambda: self._table.rollback_to(sid),
                  t("roll main back to snapshot {id}?", id=sid) + f"  t.rollback_to({sid})")

    def _do_set_current(self) -> None:
        sid = self._need_selection()
        self._ask(lambda: self._table.set_current_snapshot(sid),
                  t("make snapshot {id} current on main?", id=sid)
                  + f"  t.set_current_snapshot({sid})")

    def __repr__(self) -> str:
        return (f"TimeTravel({_name(self._table)!r}, snapshot_id={self._selected}, "
                f"other_snapshot_id={self._other})")

    # ------------------------------------------------------------------ static snapshot

    def static_text(self) -> str:
        md = self._table.metadata
        lines = [f"TimeTravel({_name(self._table)}): "
                 + t("{n:,} snapshots", n=len(md.snapshots))]
        if self._selected is not None:
            snap = md.snapshot_by_id(self._selected)
            op = "" if snap is None or snap.operation is None else f" ({snap.operation})"
            lines.append(t("selected: snapshot {id}", id=self._selected) + op)
        if self._other is not None:
            lines.append(t("compared with: snapshot {id}", id=self._other))
            if self._diff is not None:
                lines.append(repr(self._diff))
        if self.tree.graph is not None:
            lines.append(self.tree.graph.text)
        lines.append(f"({t(INTERACTIVE_NOTE)})")
        return "\n".join(lines)

    def static_html(self) -> str:
        parts = [self.header.value, h.muted(t(INTERACTIVE_NOTE))]
        if self._selected is not None:
            parts.append(h.section(t("Selected snapshot"), self.summary.value, open=True))
        if self._other is not None and self._diff is not None:
            parts.append(h.section(t("Difference {a} → {b}", a=self._selected, b=self._other),
                                   render(self._diff).html, open=True))
        if self.tree.graph is not None:
            parts.append(h.section(t("Snapshot tree"), self.tree.graph.html_fragment(),
                                   open=True))
        return f'<div class="icenb-card">{"".join(parts)}</div>'
