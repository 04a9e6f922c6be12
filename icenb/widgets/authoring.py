"""What the authoring widgets share (SchemaEvolution, PartitionEvolution): a staging area of
builder calls, a live preview, the explanation of every refused change, a Commit button that
stays disabled while a problem exists, the effect of a commit drawn before and after with the
Python that does the same, and a confirmed one-click undo.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import ipywidgets as w

from icenb.display import html as h
from icenb.errors import IcebergError, ValidationError
from icenb.labels import t
from icenb.table import Table
from icenb.widgets.panels import (
    INTERACTIVE_NOTE,
    Confirm,
    ErrorBox,
    StaticSnapshot,
    code_block,
    guarded,
)
from icenb.widgets.staging import Change, Pending, Problem, Rule, Staging

__all__ = ["Authoring", "problem_text", "problems_html", "table_name"]


def table_name(table: Table) -> str:
    """The table's catalog name, else the last folder of its location."""
    ident = table.identifier
    return ".".join(ident) if ident else table.location.rstrip("/").rsplit("/", 1)[-1]


def problem_text(p: Problem) -> str:
    """A refused change in one line (``str(problem)`` in the display language)."""
    what = p.change.code if p.change is not None else t("the staged changes together")
    return t("{what}: {message}. Rule - {rule}: {words} (spec: {section})", what=what,
             message=p.message, rule=t(p.rule.name), words=t(p.rule.words),
             section=p.rule.section)


def problems_html(problems: list[Problem]) -> str:
    """Each refused change with the rule in plain words, its spec section and the field and
    value at fault."""
    items = []
    for p in problems:
        what = (h.code(p.change.code) if p.change is not None
                else h.esc(t("the staged changes together")))
        at = []
        if p.field is not None:
            at.append(f"{h.esc(t('field'))} {h.code(str(p.field))}")
        if p.error.has_value:
            at.append(f"{h.esc(t('value'))} {h.code(repr(p.value))}")
        spec = t("(spec: {section})", section=p.rule.section)
        items.append(
            f'<li class="icenb-problem">{what}: {h.error(p.message)}'
            f'<div><b>{h.esc(t(p.rule.name))}</b>: {h.esc(t(p.rule.words), 2000)} '
            f'{h.muted(spec)}'
            f'{" · " + ", ".join(at) if at else ""}</div></li>')
    return f'<ul class="icenb-problems">{"".join(items)}</ul>'


class Authoring(StaticSnapshot, w.VBox):  # type: ignore[misc]
    """The staging, preview, commit and undo of one kind of metadata change (see the module
    docstring); subclasses give the builder, the rules, the form and the pictures."""

    #: What is changed, in words ("schema", "partition spec").
    what = ""
    #: The builder methods staged changes may call.
    methods: tuple[str, ...] = ()
    #: CSS class of the widget root.
    css = ""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._staging: Staging[Any] = Staging(self._new_builder, self._finish,
                                              self._rule_for, self._staged_changed)
        self.pending = Pending(self._staging, self.methods)
        #: The table's metadata before the last commit through this widget (for undo).
        self._before: Any = None
        self._last_code = ""

        self.error = ErrorBox()
        self.header = w.HTML()
        self.history = w.HTML()
        self.staged = w.HTML()
        self.staged.add_class(f"{self.css}-staged")
        self.preview_panel = w.HTML()
        self.preview_panel.add_class(f"{self.css}-preview")
        self.effect = w.HTML()
        self.effect.add_class(f"{self.css}-effect")
        self.stage_button = w.Button(description=t("stage"), button_style="info",
                                     layout=w.Layout(width="80px"))
        self.drop_button = w.Button(description=t("drop last"), layout=w.Layout(width="90px"))
        self.reset_button = w.Button(description=t("reset"), layout=w.Layout(width="70px"))
        self.commit_button = w.Button(description=t("commit"), button_style="success",
                                      disabled=True, layout=w.Layout(width="90px"))
        self.commit_button.add_class(f"{self.css}-commit")
        self.undo_button = w.Button(description=t("undo"), disabled=True,
                                    layout=w.Layout(width="70px"))
        self.confirm = Confirm(self.error, self._after_action)
        form = self._form()
        self.stage_button.on_click(lambda _b: guarded(self.error, self._stage_from_form))
        self.drop_button.on_click(lambda _b: guarded(self.error, self._drop_last))
        self.reset_button.on_click(lambda _b: guarded(self.error, self.reset))
        self.commit_button.on_click(lambda _b: guarded(self.error, self._ask_commit))
        self.undo_button.on_click(lambda _b: guarded(self.error, self._ask_undo))
        super().__init__(children=[
            self.header, self.error, self.history, form,
            w.HBox([self.stage_button, self.drop_button, self.reset_button]),
            self.staged, self.preview_panel, *self._extra(),
            w.HBox([self.commit_button, self.undo_button]), self.confirm, self.effect])
        self.add_class(self.css)
        self._staging.evaluate()
        self._redraw_table()

    # ------------------------------------------------------------------ programmatic surface

    @property
    def table(self) -> Table:
        return self._table

    @property
    def changes(self) -> list[Change]:
        """The staged changes, in order (refused ones included)."""
        return list(self._staging.changes)

    @property
    def problems(self) -> list[Problem]:
        """Why staged changes are refused: each names the rule, its spec section, the field
        and value at fault. Empty when everything staged is allowed."""
        return list(self._staging.problems)

    @property
    def preview(self) -> Any:
        """What a commit would make current, or None while problems exist (or nothing is
        staged)."""
        return self._staging.preview

    def drop(self, index: int) -> None:
        """Drop the staged change at ``index``."""
        self._staging.drop(index)

    def reset(self) -> None:
        """Drop every staged change."""
        self._staging.reset()

    def commit(self) -> Any:
        """Commit the staged changes in one commit through the table's own API; refused with
        an ``IcebergError`` while problems exist or nothing is staged. The table is unchanged
        when the commit fails."""
        if self._staging.problems:
            p = self._staging.problems[0]
            raise ValidationError(
                f"{len(self._staging.problems)} staged change(s) are refused, first: {p}",
                field=p.field, **({"value": p.value} if p.error.has_value else {}))
        if not self._staging.changes:
            raise ValidationError(f"nothing staged: stage a {self.what} change first",
                                  field="pending")
        before = self._table.metadata
        code = self.code()
        self._commit_staged()
        self._before = before
        self._last_code = code
        self._staging.reset()
        self._redraw_table()
        self.effect.value = h.document(self._effect_html(before) + code_block(code))
        return self._now_current()

    def undo(self) -> Any:
        """Undo the last commit made through this widget (makes the earlier one current
        again, one commit); what is current afterwards."""
        if self._before is None:
            raise ValidationError("nothing to undo: no commit was made through this widget",
                                  field="undo")
        self._undo(self._before)
        self._before = None
        self._redraw_table()
        self.effect.value = h.document(h.muted(t(
            "undone: the {what} before the last commit is current again", what=t(self.what))))
        return self._now_current()

    def code(self) -> str:
        """The Python that commits the staged changes."""
        body = "\n".join(f"    u.{c.code}" for c in self._staging.changes) or "    pass"
        return f"with t.{self._builder_call()} as u:\n{body}"

    # ------------------------------------------------------------------ subclass hooks

    @abstractmethod
    def _new_builder(self) -> Any: ...

    @abstractmethod
    def _finish(self, builder: Any) -> Any: ...

    @abstractmethod
    def _rule_for(self, change: Change | None, error: IcebergError) -> Rule: ...

    @abstractmethod
    def _form(self) -> w.Widget: ...

    @abstractmethod
    def _form_change(self) -> Change: ...

    @abstractmethod
    def _builder_call(self) -> str: ...

    @abstractmethod
    def _commit_staged(self) -> None: ...

    @abstractmethod
    def _now_current(self) -> Any: ...

    @abstractmethod
    def _undo(self, before: Any) -> None: ...

    @abstractmethod
    def _history_html(self) -> str: ...

    @abstractmethod
    def _header_facts(self) -> list[str]: ...

    @abstractmethod
    def _preview_html(self) -> str: ...

    @abstractmethod
    def _effect_html(self, before: Any) -> str: ...

    def _extra(self) -> list[w.Widget]:
        """Panels a widget adds under the preview."""
        return []

    # ------------------------------------------------------------------ drawing

    def _stage_from_form(self) -> None:
        self._staging.stage(self._form_change())

    def _drop_last(self) -> None:
        if self._staging.changes:
            self._staging.drop(len(self._staging.changes) - 1)

    def _ask_commit(self) -> None:
        n = len(self._staging.changes)
        self.confirm.ask(self.commit, t("commit {n} staged {what} change(s) to {table}?", n=n,
                                        what=t(self.what), table=table_name(self._table)))

    def _ask_undo(self) -> None:
        self.confirm.ask(self.undo, t("undo the last {what} commit (one new commit)?",
                                      what=t(self.what)))

    def _after_action(self) -> None:
        self._redraw_table()

    def _staged_changed(self) -> None:
        if not hasattr(self, "staged"):
            return  # the first evaluation runs before the panels exist
        changes = self._staging.changes
        problems = self._staging.problems
        refused = {id(p.change) for p in problems}
        if changes:
            rows = [[str(i), h.code(c.code),
                     h.error(t("refused")) if id(c) in refused else h.esc(t("staged"))]
                    for i, c in enumerate(changes)]
            listing = h.table(["#", t("change"), t("state")], rows)
        else:
            listing = h.muted(t("no {what} change staged: use the form, or "
                                "{widget}.pending.<method>(...)", what=t(self.what),
                                widget=type(self).__name__))
        parts = [h.section(t("Staged changes"), listing, open=True)]
        if problems:
            parts.append(h.section(t("Problems ({n}): commit is disabled", n=len(problems)),
                                   problems_html(problems), open=True))
        self.staged.value = h.document("".join(parts))
        self.commit_button.disabled = bool(problems) or not changes
        try:
            self.preview_panel.value = h.document(self._preview_html())
        except IcebergError as e:
            self.preview_panel.value = h.document(h.error(str(e)))

    def _redraw_table(self) -> None:
        md = self._table.metadata
        facts = " · ".join([t("format v{v}", v=md.format_version), *self._header_facts()])
        self.header.value = h.document(
            f"<b>{type(self).__name__}</b> {h.code(table_name(self._table))} "
            + h.muted(facts))
        self.history.value = h.document(self._history_html())
        self.undo_button.disabled = self._before is None
        self._staging.evaluate()

    # ------------------------------------------------------------------ static snapshot

    def static_text(self) -> str:
        lines = [f"{type(self).__name__}({table_name(self._table)}): "
                 + t("{staged} staged, {problems} problems", staged=len(self._staging.changes),
                     problems=len(self._staging.problems))]
        lines += [f"  {t('staged')}: {c.code}" for c in self._staging.changes]
        lines += [f"  {t('problem')}: {problem_text(p)}" for p in self._staging.problems]
        if self._last_code:
            lines.append(t("last commit:") + "\n" + self._last_code)
        lines.append(f"({t(INTERACTIVE_NOTE)})")
        return "\n".join(lines)

    def static_html(self) -> str:
        parts = [self.header.value, h.muted(t(INTERACTIVE_NOTE)), self.history.value,
                 self.staged.value, self.preview_panel.value, self.effect.value]
        return f'<div class="icenb-card">{"".join(parts)}</div>'

