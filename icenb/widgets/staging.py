"""Staged changes for the authoring widgets: a builder whose calls are recorded, replayed on a
fresh builder after every change, and explained when refused.

The widgets' ``.pending`` is a :class:`Pending`: it offers the methods of the builder the
table's own ``update_schema()`` / ``update_spec()`` yield, records each call, and never lets an
``IcebergError`` out - a refused change becomes a :class:`Problem` naming the rule, the spec
section and the field and value at fault, and stays listed (so Commit stays disabled) until it
is dropped or the staging is reset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from icenb.errors import IcebergError, ValidationError
from icenb.reprs import safe_repr

B = TypeVar("B")

__all__ = ["Change", "Pending", "Problem", "Rule", "Staging"]


@safe_repr
@dataclass(frozen=True)
class Rule:
    """A rule of the spec in plain words, and the section it comes from."""

    name: str
    words: str
    section: str


@safe_repr
@dataclass(frozen=True)
class Change:
    """One staged call: the builder method, its arguments, and the Python that makes it."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def code(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.method}({', '.join(parts)})"

    def apply(self, builder: Any) -> None:
        getattr(builder, self.method)(*self.args, **dict(self.kwargs))


@safe_repr
@dataclass(frozen=True)
class Problem:
    """Why a staged change is refused: the change, the rule it breaks (plain words and spec
    section), and the error the builder raised (its message names the field and value)."""

    change: Change | None
    rule: Rule
    error: IcebergError

    @property
    def field(self) -> str | None:
        return self.error.field

    @property
    def value(self) -> Any:
        return self.error.value

    @property
    def message(self) -> str:
        return str(self.error)

    def __str__(self) -> str:
        what = self.change.code if self.change is not None else "the staged changes together"
        return (f"{what}: {self.message}. Rule - {self.rule.name}: {self.rule.words} "
                f"(spec: {self.rule.section})")


class Staging(Generic[B]):
    """The staged :class:`Change` list of one widget. ``new_builder()`` gives a builder of the
    table's current state; ``finish(builder)`` computes the preview (and raises what the
    builder only finds when applied); ``rule_for(change, error)`` explains a refusal."""

    def __init__(self, new_builder: Callable[[], B], finish: Callable[[B], Any],
                 rule_for: Callable[[Change | None, IcebergError], Rule],
                 on_change: Callable[[], None] = lambda: None) -> None:
        self._new_builder = new_builder
        self._finish = finish
        self._rule_for = rule_for
        self._on_change = on_change
        self.changes: list[Change] = []
        self.problems: list[Problem] = []
        self.preview: Any = None

    def stage(self, change: Change) -> Problem | None:
        """Add ``change``; the problem it brings, if any."""
        self.changes.append(change)
        before = len(self.problems)
        self.evaluate()
        return self.problems[-1] if len(self.problems) > before else None

    def drop(self, index: int) -> None:
        """Remove the staged change at ``index`` (refused or not)."""
        del self.changes[index]
        self.evaluate()

    def reset(self) -> None:
        self.changes.clear()
        self.evaluate()

    def evaluate(self) -> None:
        """Replay every change on a fresh builder; refused ones become problems; then the
        preview (None while any problem exists)."""
        problems: list[Problem] = []
        builder = self._new_builder()
        for change in self.changes:
            try:
                change.apply(builder)
            except IcebergError as e:
                problems.append(Problem(change, self._rule_for(change, e), e))
            except (TypeError, ValueError, AttributeError) as e:  # a malformed call
                err = ValidationError(f"the call does not fit the builder: {e}",
                                      field=change.method)
                problems.append(Problem(change, self._rule_for(change, err), err))
        preview = None
        if self.changes and not problems:
            try:
                preview = self._finish(builder)
            except IcebergError as e:
                problems.append(Problem(None, self._rule_for(None, e), e))
        self.problems = problems
        self.preview = preview
        self._on_change()

    def replay(self, builder: B) -> None:
        """Apply every staged change to ``builder`` (the one a commit uses)."""
        for change in self.changes:
            change.apply(builder)


@safe_repr
class Pending:
    """The builder methods ``methods`` of a :class:`Staging`, recorded instead of run: each
    call stages a :class:`Change` and returns this object (chainable, as the builder); a refused
    change is recorded as a problem, never raised."""

    def __init__(self, staging: Staging[Any], methods: Sequence[str]) -> None:
        self._staging = staging
        self._methods = frozenset(methods)

    def __getattr__(self, name: str) -> Callable[..., Pending]:
        if name.startswith("_") or name not in self._methods:
            raise AttributeError(f"staged changes offer {sorted(self._methods)}, not {name!r}")

        def stage(*args: Any, **kwargs: Any) -> Pending:
            self._staging.stage(Change(name, tuple(args), dict(kwargs)))
            return self

        return stage

    def __dir__(self) -> list[str]:
        return sorted(self._methods)

    def __repr__(self) -> str:
        staged = ", ".join(c.code for c in self._staging.changes) or "nothing"
        return f"Pending({staged})"
