"""ViewVersions: a view's version log, clickable; each version's SQL, schema and summary; the
difference between two versions; and, where the view is writable, replace, rollback and
dialect changes through the same calls a user makes (view spec: "Versions", "version-log").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import ipywidgets as w
import pyarrow as pa

from icenb.display import html as h
from icenb.display import render, view_version_timeline
from icenb.errors import NotFound, ValidationError
from icenb.labels import t
from icenb.reprs import safe_repr
from icenb.table import View
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
from icenb.widgets.time_travel import rows_html


@safe_repr
class ViewVersions(StaticSnapshot, w.VBox):  # type: ignore[misc]
    """Browse (and, when writable, change) a view's versions. ``ViewVersions(v)`` or
    ``v.versions_widget()``.

    Programmatic surface: :meth:`select`, :attr:`version_id`, :attr:`sql` (dialect -> SQL of
    the selection), :meth:`compare` (the ``v.compare`` object).
    """

    def __init__(self, view: View, *, page_size: int = 20) -> None:
        self._view = view
        self._selected: int | None = None
        self._other: int | None = None
        self._comparison: Any = None
        self._page_size = page_size
        self._rows: pa.Table | None = None
        self._syncing = False
        self._work = Background()

        self.error = ErrorBox()
        self.header = w.HTML()
        self.graph = GraphView(height="200px", parent_key="ArrowLeft",
                               status=t("click a version; shift-click another to compare"))
        self.picker = w.Dropdown(description=t("version"), layout=w.Layout(width="340px"))
        self.as_of = w.Text(continuous_update=False,
                            placeholder=t("version as of: ISO time or epoch ms"),
                            layout=w.Layout(width="280px"))
        self.as_of_go = w.Button(description=t("go"), layout=w.Layout(width="50px"))
        self.resolution = w.HTML()
        self.details = w.HTML()
        self.details.add_class("icenb-vv-details")
        self.sql_panel = w.HTML()
        self.sql_panel.add_class("icenb-vv-sql")
        self.diff_panel = w.HTML(value=h.document(h.muted(t(
            "shift-click a second version (or call .compare(a, b)) to see what changed"))))
        self.diff_panel.add_class("icenb-vv-diff")
        self.run_button = w.Button(description=t("run on Spark"),
                                   tooltip=t("run this version's Spark SQL (starts a local "
                                             "session on first use)"))
        self.rows_panel = w.HTML(value=h.document(h.muted(t(
            "rows are read only when you ask: Spark runs the version's SQL"))))
        self.rows_panel.add_class("icenb-vv-rows")
        self.tabs = w.Tab(children=[w.VBox([self.details, self.sql_panel]), self.diff_panel,
                                    w.VBox([self.run_button, self.rows_panel])])
        for i, title in enumerate(("Version", "Difference", "Rows")):
            self.tabs.set_title(i, t(title))
        self.actions = self._build_actions()
        super().__init__(children=[
            self.header, self.error, w.HBox([self.picker, self.as_of, self.as_of_go]),
            self.resolution, self.graph, self.tabs, self.actions])
        self.add_class("icenb-vv")

        self.graph.observe(self._on_pick, names=["selected", "compare"])
        self.picker.observe(self._on_picker, names="value")
        self.as_of_go.on_click(lambda _b: self._on_as_of())
        self.as_of.observe(lambda _c: self._on_as_of(), names="value")
        self.run_button.on_click(lambda _b: self._guard(self._run))
        self._redraw()
        self._guard(lambda: self.select(view.current_version_id))

    # ------------------------------------------------------------------ programmatic surface

    @property
    def view(self) -> View:
        return self._view

    @property
    def version_id(self) -> int | None:
        return self._selected

    @property
    def other_version_id(self) -> int | None:
        return self._other

    @property
    def sql(self) -> dict[str, str]:
        """Dialect -> SQL of the selected version."""
        if self._selected is None:
            return {}
        v = self._view.version(self._selected)
        return _sql_by_dialect(v)

    @property
    def rows(self) -> pa.Table:
        """The rows of the last Spark run (waits for it)."""
        self._work.wait()
        if self._rows is None:
            raise NotFound("no version has been run yet: call .run()", field="rows")
        return self._rows

    def select(self, version_id: int) -> int:
        """Select a retained version by id; the panels follow."""
        v = self._view.version(version_id)
        self._selected = v.version_id
        if self._other == self._selected:
            self._other = None
            self._comparison = None
        self._sync()
        self._show_version()
        if self._other is not None:
            self._show_diff()
        return v.version_id

    def select_at(self, when: int | datetime | str) -> int:
        """Select the version that was current at ``when`` (``v.version_at``)."""
        v = self._view.version_at(when)
        self.resolution.value = h.document(h.muted(
            t("version {id}: current at {when} per the version log", id=v.version_id,
              when=when)))
        return self.select(v.version_id)

    def compare(self, a: int, b: int) -> Any:
        """Select ``a``, compare it with ``b``; returns ``v.compare(a, b)``."""
        self.select(a)
        self._other = self._view.version(b).version_id
        self._sync()
        self._show_diff()
        return self._comparison

    def run(self) -> pa.Table:
        """Run the selected version on Spark; returns the first page of rows."""
        self._run()
        return self.rows

    # ------------------------------------------------------------------ drawing and sync

    def _guard(self, fn: Callable[[], object]) -> None:
        guarded(self.error, fn)

    def _redraw(self) -> None:
        v = self._view
        graph = view_version_timeline(v.version_log)
        self.graph.show(graph)
        self._syncing = True
        try:
            self.picker.options = [
                (f"{t('version {id}', id=x.version_id)} · {utc(x.timestamp_ms)}"
                 + (f" ({t('current')})" if x.version_id == v.current_version_id else ""),
                 x.version_id)
                for x in sorted(v.versions, key=lambda x: x.version_id)]
            if self._selected is not None and self._selected in [x.version_id for x in
                                                                  v.versions]:
                self.picker.value = self._selected
        finally:
            self._syncing = False
        if v.catalog is not None and hasattr(self, "drop_dialect"):
            self.drop_dialect.options = list(v.current_version.dialects)
        writable = "" if v.catalog is not None else " · " + t("read-only")
        sub = t("{n} versions retained · current {id} · {log} log entries", n=len(v.versions),
                id=v.current_version_id, log=len(v.version_log))
        self.header.value = h.document(
            f'<div class="icenb-head"><span class="icenb-kind">{h.esc(t("View versions"))}'
            f'</span><span class="icenb-title">{h.esc(v.name)}</span>'
            f'<span class="icenb-sub">{h.esc(sub)}{h.esc(writable)}</span></div>')

    def _sync(self) -> None:
        self._syncing = True
        try:
            sel = None if self._selected is None else self.graph.node_for(
                version_id=self._selected)
            oth = None if self._other is None else self.graph.node_for(version_id=self._other)
            # a version in the log several times: prefer its latest entry
            with self.graph.hold_sync():
                self.graph.selected = _latest(self.graph, self._selected) or sel or ""
                self.graph.compare = _latest(self.graph, self._other) or oth or ""
            if self._selected is not None:
                self.picker.value = self._selected
        finally:
            self._syncing = False

    def _on_pick(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        vid = self.graph.version_of(change["new"]) if change["new"] else None
        if change["name"] == "selected":
            if vid is not None and vid != self._selected:
                self._guard(lambda: self.select(vid))
        elif vid != self._other:
            def other() -> None:
                self._other = vid if vid != self._selected else None
                self._sync()
                self._show_diff()
            self._guard(other)

    def _on_picker(self, change: dict[str, Any]) -> None:
        if not self._syncing and change["new"] is not None and change["new"] != self._selected:
            self._guard(lambda: self.select(change["new"]))

    def _on_as_of(self) -> None:
        text = self.as_of.value.strip()
        if text:
            when: int | str = int(text) if text.lstrip("-").isdigit() else text
            self._guard(lambda: self.select_at(when))

    # ------------------------------------------------------------------ panels

    def _show_version(self) -> None:
        v = self._view
        vid = self._selected
        if vid is None:
            return
        ver = v.version(vid)
        schema = v.schema_for(vid)
        rows = [(t("version id"), h.code(ver.version_id)),
                (t("time (UTC)"), h.esc(utc(ver.timestamp_ms))),
                (t("schema id"), h.esc(ver.schema_id)),
                (t("default catalog"), h.esc(ver.default_catalog) if ver.default_catalog
                 else h.muted(t("none"))),
                (t("default namespace"), h.esc(".".join(ver.default_namespace)) or
                 h.muted(t("none"))),
                (t("dialects"), h.esc(", ".join(ver.dialects)))]
        rows += [(f"{t('summary')}: {k}", h.esc(val)) for k, val in sorted(ver.summary.items())]
        if vid == v.current_version_id:
            rows.append(("", h.badge(t("current"), "current")))
        self.details.value = h.document(
            f'<div class="icenb-card">{h.kv(rows)}'
            + h.section(t("Schema"), render(schema).html, open=True) + "</div>")
        parts = []
        for dialect, sql in _sql_by_dialect(ver).items():
            parts.append(h.section(f"SQL ({dialect})", h.pre(sql), open=True))
        code = (f"v.sql_for({ver.dialects[0]!r}, version_id={vid})" if ver.dialects
                else f"v.version({vid})")
        self.sql_panel.value = h.document("".join(parts) + code_block(code))

    def _show_diff(self) -> None:
        a, b = self._selected, self._other
        if a is None or b is None:
            self._comparison = None
            self.diff_panel.value = h.document(h.muted(t(
                "shift-click a second version (or call .compare(a, b)) to see what changed")))
            return
        try:
            self._comparison = self._view.compare(a, b)
            body = render(self._comparison).html
        except Exception as e:
            self._comparison = None
            self.diff_panel.value = error_html(e)
            return
        self.diff_panel.value = h.document(body + code_block(f"v.compare({a}, {b})"))

    def _run(self) -> None:
        vid = self._selected
        if vid is None:
            raise ValidationError("select a version first", field="version_id")
        view, size = self._view, self._page_size
        self._rows = None
        self.rows_panel.value = spinner_html(t("running version {id} on Spark…", id=vid))

        def work() -> pa.Table:
            table: pa.Table = view.to_spark(vid).limit(size).toArrow()
            return table

        def done(rows: pa.Table) -> None:
            self._rows = rows
            self.rows_panel.value = h.document(
                h.muted(t("first {n:,} rows of version {id}", n=rows.num_rows, id=vid))
                + rows_html(rows) + code_block(f"v.to_spark({vid}).limit({size})"))

        def failed(err: BaseException) -> None:
            self.rows_panel.value = error_html(err)

        self._work.run(work, done, failed)

    # ------------------------------------------------------------------ actions

    def _build_actions(self) -> w.Widget:
        if self._view.catalog is None:
            return w.HTML(h.document(h.muted(t(
                "read-only (opened by location): no replace or rollback"))))
        self.new_sql = w.Textarea(placeholder=t("new SQL for a replace"), rows=3,
                                  layout=w.Layout(width="100%"))
        self.new_dialect = w.Text(value="spark", description=t("dialect"),
                                  layout=w.Layout(width="220px"))
        self.keep_dialects = w.Checkbox(value=True, description=t("keep the other dialects"),
                                        indent=False)
        self.preview_button = w.Button(description=t("preview"), layout=w.Layout(width="auto"))
        self.replace_button = w.Button(description=t("replace"), button_style="primary",
                                       disabled=True)
        self.rollback_button = w.Button(description=t("roll back to selected"),
                                        layout=w.Layout(width="auto"))
        self.drop_dialect = w.Dropdown(description=t("drop dialect"), options=[],
                                       layout=w.Layout(width="260px"))
        self.drop_button = w.Button(description=t("drop it"), layout=w.Layout(width="auto"))
        self.preview_panel = w.HTML()
        self.confirm = Confirm(self.error, self._after_action)
        self.preview_button.on_click(lambda _b: self._guard(self._preview))
        self.replace_button.on_click(lambda _b: self._guard(self._ask_replace))
        self.rollback_button.on_click(lambda _b: self._guard(self._ask_rollback))
        self.drop_button.on_click(lambda _b: self._guard(self._ask_drop))
        self.new_sql.observe(lambda _c: setattr(self.replace_button, "disabled", True),
                             names="value")
        return w.VBox([
            w.HTML(h.document(h.muted(t("change the view (each change is one commit)")))),
            self.new_sql, w.HBox([self.new_dialect, self.keep_dialects, self.preview_button,
                                  self.replace_button]),
            self.preview_panel,
            w.HBox([self.rollback_button, self.drop_dialect, self.drop_button]),
            self.confirm])

    def _staged(self) -> dict[str, str]:
        sql = self.new_sql.value.strip()
        dialect = self.new_dialect.value.strip() or "spark"
        if not sql:
            raise ValidationError("type the new SQL first", field="sql", value=sql)
        reps: dict[str, str] = {}
        if self.keep_dialects.value:
            reps.update({d: q for d, q in _sql_by_dialect(self._view.current_version).items()
                         if d.lower() != dialect.lower()})
        reps[dialect] = sql
        return reps

    def _preview(self) -> None:
        reps = self._staged()
        view = self._view
        self.preview_panel.value = spinner_html(t("Spark derives the schema…"))

        def work() -> Any:
            return view.derive_schema(reps)

        def done(schema: Any) -> None:
            same = _equivalent_version(view, reps, schema)
            note = (h.badge(t("equivalent to version {id}: a replace reuses it", id=same), "warn")
                    if same is not None else "")
            self.preview_panel.value = h.document(
                h.section(t("Schema Spark derives"), render(schema).html, open=True) + note
                + code_block(f"v.replace({reps!r})"))
            self.replace_button.disabled = False

        def failed(err: BaseException) -> None:
            self.preview_panel.value = error_html(err)
            self.replace_button.disabled = True

        self._work.run(work, done, failed)

    def _ask(self, action: Callable[[], object], question: str) -> None:
        self.confirm.ask(action, question)

    def _after_action(self) -> None:
        self._redraw()
        self.select(self._view.current_version_id)

    def _ask_replace(self) -> None:
        reps = self._staged()
        self._ask(lambda: self._view.replace(reps),
                  t("replace the view's SQL?") + f"  v.replace({reps!r})")

    def _ask_rollback(self) -> None:
        vid = self._selected
        if vid is None:
            raise ValidationError("select a version first", field="version_id")
        self._ask(lambda: self._view.rollback_to(vid),
                  t("make version {id} current again?", id=vid) + f"  v.rollback_to({vid})")

    def _ask_drop(self) -> None:
        dialect = self.drop_dialect.value
        if not dialect:
            raise ValidationError("pick a dialect to drop", field="dialect", value=dialect)
        reps = {d: q for d, q in _sql_by_dialect(self._view.current_version).items()
                if d != dialect}
        if not reps:
            raise ValidationError("a view version needs at least one dialect",
                                  field="dialect", value=dialect)
        self._ask(lambda: self._view.replace(reps, schema=self._view.schema),
                  t("drop the {dialect} SQL (a new version; refused unless "
                    "replace.drop-dialect.allowed=true)?", dialect=repr(dialect))
                  + f"  v.replace({reps!r}, schema=v.schema)")

    def __repr__(self) -> str:
        return (f"ViewVersions({self._view.name!r}, version_id={self._selected}, "
                f"other_version_id={self._other})")

    # ------------------------------------------------------------------ static snapshot

    def static_text(self) -> str:
        v = self._view
        lines = [f"ViewVersions({v.name}): "
                 + t("{n} versions, current {id}", n=len(v.versions), id=v.current_version_id)]
        if self._selected is not None:
            lines.append(t("selected: version {id}", id=self._selected))
            for dialect, sql in self.sql.items():
                lines.append(f"  {dialect}: {' '.join(sql.split())[:200]}")
        if self._other is not None:
            lines.append(t("compared with: version {id}", id=self._other))
        if self.graph.graph is not None:
            lines.append(self.graph.graph.text)
        lines.append(f"({t(INTERACTIVE_NOTE)})")
        return "\n".join(lines)

    def static_html(self) -> str:
        parts = [self.header.value, h.muted(t(INTERACTIVE_NOTE))]
        if self.graph.graph is not None:
            parts.append(h.section(t("Version log"), self.graph.graph.html_fragment(),
                                   open=True))
        if self._selected is not None:
            parts.append(h.section(t("Version {id}", id=self._selected),
                                   self.details.value + self.sql_panel.value, open=True))
        if self._comparison is not None:
            parts.append(h.section(t("Difference {a} → {b}", a=self._selected, b=self._other),
                                   render(self._comparison).html, open=True))
        return f'<div class="icenb-card">{"".join(parts)}</div>'


def _latest(graph: GraphView, version_id: int | None) -> str | None:
    """The node of the latest log entry of ``version_id`` (a version can be current twice)."""
    if version_id is None:
        return None
    want = str(version_id)
    found = [k for k, n in graph.nodes.items() if n.get("version_id") == want]
    return max(found, key=lambda k: int(k[1:]) if k[1:].isdigit() else -1) if found else None


def _equivalent_version(view: View, reps: Mapping[str, str], schema: Any) -> int | None:
    """A retained version with the same SQL per dialect, schema fields and defaults: the one a
    replace would reuse (view spec: equivalent versions are not added twice; as Java)."""
    want = {d.lower(): s for d, s in reps.items()}
    current = view.current_version
    for ver in view.versions:
        have = {d.lower(): q for d, q in _sql_by_dialect(ver).items()}
        if have != want or ver.default_namespace != current.default_namespace or \
                ver.default_catalog != current.default_catalog:
            continue
        if view.schema_for(ver.version_id).as_struct() == schema.as_struct():
            return ver.version_id
    return None


def _sql_by_dialect(version: Any) -> dict[str, str]:
    """Dialect -> SQL of a view version's SQL representations (unknown kinds skipped)."""
    out: dict[str, str] = {}
    for dialect in version.dialects:
        sql = version.sql_for(dialect)
        if sql is not None:
            out[dialect] = sql
    return out
