"""SchemaEvolution: a table's schema history, staged schema changes checked as they are staged
with the rule behind every refusal, a preview (the new schema with field ids, ``last-column-id``,
``current-schema-id``, the metadata JSON difference, and what existing data files read as under
it), a commit through ``t.update_schema()``, and undo (spec: "Schema Evolution", "Default
values", "Identifier Field IDs", "Column Projection").
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import ipywidgets as w
import pyarrow as pa

from icenb.display import html as h
from icenb.display import render
from icenb.errors import IcebergError
from icenb.labels import t
from icenb.spec import Schema, SchemaUpdate, check_schema_sources, schema_to_json
from icenb.table import Scan, Table
from icenb.widgets.authoring import Authoring
from icenb.widgets.panels import Background, spinner_html
from icenb.widgets.staging import Change, Rule
from icenb.widgets.time_travel import rows_html

__all__ = ["SCHEMA_RULES", "SchemaEvolution"]

_SECTION = "Schema Evolution"

#: The rule behind each kind of schema change, in plain words (table spec sections).
SCHEMA_RULES: dict[str, Rule] = {
    "add_column": Rule(
        "Adding a column",
        "a new column (and each field nested in its type) gets the next id after "
        "last-column-id; its name must be new among its siblings; a required column needs a "
        "non-null initial default (format v3) unless incompatible changes are allowed, "
        "because existing rows have no value for it", _SECTION),
    "delete_column": Rule(
        "Dropping a column",
        "a column is dropped by id and its id is never reused; an identifier field, or the "
        "source of a partition field or sort field, cannot be dropped", _SECTION),
    "rename_column": Rule(
        "Renaming a column",
        "columns are tracked by id, so a rename keeps every existing file readable; the new "
        "name must not be taken by a sibling", _SECTION),
    "update_column": Rule(
        "Type promotion",
        "only widening promotions are valid: int to long, float to double, decimal(P, S) to "
        "decimal(P', S) with P' > P; every other change (string to int, long to int, a "
        "nested type) would change what existing values mean", _SECTION),
    "make_column_optional": Rule(
        "Making a column optional", "a required column can always become optional", _SECTION),
    "require_column": Rule(
        "Making a column required",
        "an optional column cannot become required unless incompatible changes are "
        "allowed: existing files may hold nulls in it", _SECTION),
    "update_column_doc": Rule("Column doc", "any column's doc can change", _SECTION),
    "update_column_default": Rule(
        "Default values",
        "format v3 only: a column's write-default can change at any time (it applies to "
        "rows written later); its initial-default is set when it is added and never changes",
        "Default values"),
    "move_first": Rule("Column order", "a column moves within its own struct", _SECTION),
    "move_before": Rule(
        "Column order",
        "a column moves within its own struct, before another column of the same struct, "
        "and never relative to itself", _SECTION),
    "move_after": Rule(
        "Column order",
        "a column moves within its own struct, after another column of the same struct, "
        "and never relative to itself", _SECTION),
    "set_identifier_fields": Rule(
        "Identifier fields",
        "identifier fields are required primitive columns (not float or double), not nested "
        "in a list or map or in an optional struct", "Identifier Field IDs"),
}
_TOGETHER = Rule(
    "A consistent schema",
    "the staged changes together must leave a valid schema: unique names among siblings, "
    "identifier fields present and required, every partition and sort source column kept",
    _SECTION)
_FORMAT = Rule(
    "Format version",
    "v3 types (timestamp_ns, variant, geometry, unknown) and default values need format "
    "version 3", "Schema Evolution")

_NAMES = Rule(
    "Naming columns",
    "a staged change names a column of the current schema, or one added earlier in the "
    "same change set (columns renamed in it keep their old name until the commit, as in the "
    "reference implementation); names are unique among siblings", _SECTION)
_SOURCES = Rule(
    "Partition and sort sources",
    "a column that a partition field or sort field uses cannot be dropped, and must keep a "
    "type its transform accepts", "Partition Evolution")
#: Messages that name a more precise rule than the method does.
_BY_MESSAGE: tuple[tuple[tuple[str, ...], Rule], ...] = (
    (("not supported until v3", "format version", "format-version"), _FORMAT),
    (("missing column", "cannot find", "already exists", "already being added",
      "duplicate field name"), _NAMES),
    (("partition field", "partition spec", "sort order", "sort field"), _SOURCES),
    (("identifier",), SCHEMA_RULES["set_identifier_fields"]),
    (("cannot change column type", "promot"), SCHEMA_RULES["update_column"]),
    (("default",), SCHEMA_RULES["update_column_default"]),
)

#: Form actions -> builder method.
_ACTIONS = {
    "add column": "add_column", "rename": "rename_column", "drop": "delete_column",
    "make optional": "make_column_optional", "make required": "require_column",
    "change type (promote)": "update_column", "set doc": "update_column_doc",
    "set write default": "update_column_default", "move first": "move_first",
    "move before": "move_before", "move after": "move_after",
    "identifier fields": "set_identifier_fields",
}


def _json_value(text: str) -> Any:
    """A default typed in the form: JSON when it parses (1, 1.5, true, "x"), else the text."""
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


class SchemaEvolution(Authoring):
    """Evolve a table's schema by staging changes. ``SchemaEvolution(t)``.

    Programmatic surface: :attr:`pending` (the methods of the builder ``t.update_schema()``
    yields, recorded; a refused change is listed in :attr:`problems`, never raised),
    :attr:`problems`, :attr:`preview` (the resulting ``Schema``, None while problems exist),
    :meth:`commit`, :meth:`reset`; also :meth:`old_files` (existing rows read under the
    preview), :meth:`undo` and :meth:`code`.
    """

    what = "schema"
    methods = tuple(sorted(set(_ACTIONS.values()) | {"allow_incompatible_changes"}))
    css = "icenb-se"

    def __init__(self, table: Table, *, allow_incompatible_changes: bool = False,
                 sample_rows: int = 10) -> None:
        self._allow = allow_incompatible_changes
        self._sample_rows = sample_rows
        self._last_column_id: int | None = None
        self._work = Background()
        super().__init__(table)

    # ------------------------------------------------------------------ surface

    @property
    def preview(self) -> Schema | None:
        """The schema a commit would make current (with the id the table gives it), or None
        while problems exist or nothing is staged."""
        out = self._staging.preview
        return out if isinstance(out, Schema) else None

    @property
    def last_column_id(self) -> int | None:
        """``last-column-id`` after the staged changes (None without a preview)."""
        return self._last_column_id if self.preview is not None else None

    def old_files(self) -> pa.Table:
        """Rows of the existing data files (the current snapshot) read under :attr:`preview`,
        projected by field id: a renamed column still reads, a dropped one is gone, an added
        one is null or its initial default (spec: "Column Projection"). No Spark."""
        schema = self.preview or self._table.schema
        snap = self._table.current_snapshot
        scan = Scan(self._table.io, self._table.metadata,
                    None if snap is None else snap.snapshot_id, schema)
        return scan.page(0, self._sample_rows)

    def _now_current(self) -> Schema:
        return self._table.schema

    # ------------------------------------------------------------------ builder and rules

    def _new_builder(self) -> SchemaUpdate:
        md = self._table.metadata
        return SchemaUpdate(md.schema, md.last_column_id, format_version=md.format_version,
                            allow_incompatible_changes=self._allow)

    def _finish(self, builder: SchemaUpdate) -> Schema:
        md = self._table.metadata
        schema, last_column_id = builder.apply()
        check_schema_sources(schema, md.spec, md.sort_order)
        same = [s for s in md.schemas if s == schema]
        schema_id = same[0].schema_id if same else max(s.schema_id for s in md.schemas) + 1
        self._last_column_id = last_column_id
        return Schema(*schema.fields, schema_id=schema_id,
                      identifier_field_ids=schema.identifier_field_ids)

    def _rule_for(self, change: Change | None, error: IcebergError) -> Rule:
        text = str(error).lower()
        for words, rule in _BY_MESSAGE:
            if any(w in text for w in words):
                return rule
        if change is None:
            return _TOGETHER
        return SCHEMA_RULES.get(change.method, _TOGETHER)

    def _builder_call(self) -> str:
        return ("update_schema(allow_incompatible_changes=True)" if self._allow
                else "update_schema()")

    def _commit_staged(self) -> None:
        with self._table.update_schema(allow_incompatible_changes=self._allow) as u:
            self._staging.replay(u)

    def _undo(self, before: Any) -> None:
        self._table.set_current_schema(before.current_schema_id)

    # ------------------------------------------------------------------ form

    def _form(self) -> w.Widget:
        self.action = w.Dropdown(options=[(t(a), a) for a in _ACTIONS], value="add column",
                                 layout=w.Layout(width="190px"))
        self.column = w.Combobox(placeholder=t("column (a.b for nested)"), ensure_option=False,
                                 layout=w.Layout(width="200px"))
        self.value = w.Text(placeholder=t("type / new name / other column / default"),
                            layout=w.Layout(width="260px"))
        self.doc = w.Text(placeholder=t("doc (optional)"), layout=w.Layout(width="160px"))
        self.required = w.Checkbox(description=t("required"), indent=False,
                                   layout=w.Layout(width="90px"))
        self.initial_default = w.Text(placeholder=t("initial default (v3, JSON)"),
                                      layout=w.Layout(width="170px"))
        self.incompatible = w.Checkbox(description=t("allow incompatible changes"),
                                       value=self._allow, indent=False)
        self.incompatible.observe(self._on_incompatible, names="value")
        self.old_rows_panel = w.HTML()
        self.old_rows_panel.add_class("icenb-se-old-files")
        self.old_rows_button = w.Button(description=t("read old files"),
                                        tooltip=t("existing data files read under the preview"))
        self.old_rows_button.on_click(lambda _b: self._read_old_files())
        return w.VBox([
            w.HBox([self.action, self.column, self.value]),
            w.HBox([self.doc, self.required, self.initial_default, self.incompatible])])

    def _extra(self) -> list[w.Widget]:
        return [w.HBox([self.old_rows_button]), self.old_rows_panel]

    def _on_incompatible(self, change: dict[str, Any]) -> None:
        self._allow = bool(change["new"])
        self._staging.evaluate()

    def _form_change(self) -> Change:
        method = _ACTIONS[self.action.value]
        col = self.column.value.strip()
        val = self.value.value.strip()
        if method == "add_column":
            kwargs: dict[str, Any] = {}
            if self.doc.value.strip():
                kwargs["doc"] = self.doc.value.strip()
            if self.required.value:
                kwargs["required"] = True
            default = _json_value(self.initial_default.value)
            if default is not None:
                kwargs["initial_default"] = default
            return Change(method, (col, val), kwargs)
        if method in ("rename_column", "move_before", "move_after"):
            return Change(method, (col, val))
        if method == "update_column":
            return Change(method, (col, val))
        if method == "update_column_doc":
            return Change(method, (col, self.doc.value.strip() or val))
        if method == "update_column_default":
            return Change(method, (col, _json_value(val)))
        if method == "set_identifier_fields":
            names = [n.strip() for n in (val or col).split(",") if n.strip()]
            return Change(method, (names,))
        return Change(method, (col,))

    # ------------------------------------------------------------------ pictures

    def _header_facts(self) -> list[str]:
        md = self._table.metadata
        return [t("current schema {id}", id=md.current_schema_id),
                f"last-column-id {md.last_column_id}", t("{n} schema(s)", n=len(md.schemas))]

    def _history_html(self) -> str:
        if hasattr(self, "column"):
            schema = self._table.schema
            names = (schema.column_name(fid) for fid in sorted(schema.field_ids()))
            self.column.options = [n for n in names if n is not None]
        return h.section(t("Schema history"), render(self._table.schema_history()).html,
                         open=False)

    def _preview_html(self) -> str:
        schema = self.preview
        if schema is None:
            return h.muted(t("the preview appears when every staged change is allowed"))
        md = self._table.metadata
        facts = h.kv([("current-schema-id", f"{md.current_schema_id} → {schema.schema_id}"),
                      ("last-column-id", f"{md.last_column_id} → {self._last_column_id}")])
        before = json.dumps(schema_to_json(md.schema), indent=1).splitlines()
        after = json.dumps(schema_to_json(schema), indent=1).splitlines()
        diff = "\n".join(difflib.unified_diff(before, after, t("current schema"),
                                              t("new schema"), lineterm="", n=1))
        return (h.section(t("Preview: the new schema"), facts + render(schema).html, open=True)
                + h.section(t("Metadata JSON difference"),
                            h.pre(diff or f"({t('no difference')})"))
                + h.section(t("What existing data files read as"),
                            h.muted(t("press 'read old files' (or call .old_files())"))))

    def _read_old_files(self) -> None:
        self.old_rows_panel.value = spinner_html(t("reading existing data files ..."))

        def done(rows: pa.Table) -> None:
            self.old_rows_panel.value = h.document(rows_html(rows))

        def failed(e: BaseException) -> None:
            self.old_rows_panel.value = h.document(h.error(str(e)))

        self._work.run(self.old_files, done, failed)

    def _effect_html(self, before: Any) -> str:
        after = self._table.metadata
        new, old = after.schema, before.schema
        rows = [("current-schema-id", f"{before.current_schema_id} → {new.schema_id}"),
                ("last-column-id", f"{before.last_column_id} → {after.last_column_id}")]
        return h.section(t("Committed: the schema before and after"), h.kv(rows)
                         + h.table([t("field id"), t("before"), t("after"), t("change")],
                                   _field_rows(old, new))
                         + render(self._table.schema_history()).html, open=True)


def _field_text(schema: Schema, fid: int) -> str:
    name = schema.column_name(fid)
    if name is None:
        return ""
    f = schema.find_field(fid)
    return f"{name} {f.field_type}{'' if f.required else '?'}"


def _field_rows(old: Schema, new: Schema) -> list[list[str]]:
    """One row per field id of either schema, changed ones marked (new, dropped, renamed,
    promoted, made optional or required, doc or default changed)."""
    rows = []
    for fid in sorted(set(old.field_ids()) | set(new.field_ids())):
        a, b = _field_text(old, fid), _field_text(new, fid)
        if not a:
            change = h.badge(t("added"), "added")
        elif not b:
            change = h.badge(t("dropped"), "deleted")
        elif a != b or old.find_field(fid) != new.find_field(fid):
            change = h.badge(t("changed"), "warn")
        else:
            change = ""
        rows.append([str(fid), h.code(a), h.code(b), change])
    return rows
