"""Two versions of a view side by side: what their SQL, schema and defaults changed.

View spec ("Versions"): each version carries its own SQL representations, schema id, default
catalog and default namespace. A view's schema is derived from its query each time, so field
ids carry no identity across versions (Java assigns them afresh): columns are matched by name.
No I/O: everything comes from the loaded view metadata.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from icenb.reprs import safe_repr
from icenb.spec.schema import Schema
from icenb.spec.types import NestedField
from icenb.spec.view_metadata import ViewMetadata, ViewVersion

__all__ = ["ColumnChange", "DialectChange", "ViewVersionDiff", "diff_view_versions"]

ADDED, REMOVED, TYPE, NULLABILITY, DOC, MOVED = (
    "added", "removed", "type", "nullability", "doc", "moved")


@safe_repr
@dataclass(frozen=True)
class ColumnChange:
    """One top-level column's change from version ``a`` to ``b`` (``before``/``after`` text)."""

    kind: str
    name: str
    before: str | None
    after: str | None


@safe_repr
@dataclass(frozen=True)
class DialectChange:
    """One dialect's SQL in both versions (None where absent) and its unified diff lines."""

    dialect: str
    sql_a: str | None
    sql_b: str | None
    diff: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.sql_a != self.sql_b


@safe_repr
@dataclass(frozen=True)
class ViewVersionDiff:
    """What changed from version ``a`` to version ``b`` of one view."""

    view_name: str
    a: ViewVersion
    b: ViewVersion
    schema_a: Schema
    schema_b: Schema
    dialects: tuple[DialectChange, ...]
    columns: tuple[ColumnChange, ...]
    defaults: tuple[tuple[str, str, str], ...]  # (what, in a, in b) of changed defaults

    @property
    def same(self) -> bool:
        """Whether nothing a reader of the view would see differs."""
        return not (self.columns or self.defaults or any(d.changed for d in self.dialects))

    def __repr__(self) -> str:
        changed = [d.dialect for d in self.dialects if d.changed]
        return (f"ViewVersionDiff({self.view_name!r}, {self.a.version_id} -> "
                f"{self.b.version_id}, sql_changed={changed}, columns={len(self.columns)})")


def _type_text(f: NestedField) -> str:
    return str(f.field_type) + ("" if f.required else "?")


def _column_changes(a: Schema, b: Schema) -> list[ColumnChange]:
    before = {f.name: f for f in a.fields}
    after = {f.name: f for f in b.fields}
    out: list[ColumnChange] = []
    for f in b.fields:
        old = before.get(f.name)
        if old is None:
            out.append(ColumnChange(ADDED, f.name, None, _type_text(f)))
            continue
        if str(old.field_type) != str(f.field_type):
            out.append(ColumnChange(TYPE, f.name, str(old.field_type), str(f.field_type)))
        if old.required != f.required:
            out.append(ColumnChange(NULLABILITY, f.name,
                                    "required" if old.required else "optional",
                                    "required" if f.required else "optional"))
        if (old.doc or "") != (f.doc or ""):
            out.append(ColumnChange(DOC, f.name, old.doc, f.doc))
    out.extend(ColumnChange(REMOVED, f.name, _type_text(f), None)
               for f in a.fields if f.name not in after)
    kept_a = [f.name for f in a.fields if f.name in after]
    kept_b = [f.name for f in b.fields if f.name in before]
    if kept_a != kept_b:
        out.extend(ColumnChange(MOVED, name, str(kept_a.index(name)), str(kept_b.index(name)))
                   for name in kept_b if kept_a.index(name) != kept_b.index(name))
    return out


def _dialect_changes(a: ViewVersion, b: ViewVersion) -> list[DialectChange]:
    names: list[str] = []
    for d in (*a.dialects, *b.dialects):
        if d.lower() not in [n.lower() for n in names]:
            names.append(d)
    out = []
    for d in names:
        sql_a, sql_b = a.sql_for(d), b.sql_for(d)
        diff = tuple(difflib.unified_diff(
            (sql_a or "").splitlines(), (sql_b or "").splitlines(),
            f"version {a.version_id}", f"version {b.version_id}", lineterm="", n=2))
        out.append(DialectChange(d, sql_a, sql_b, diff))
    return out


def diff_view_versions(metadata: ViewMetadata, a: ViewVersion, b: ViewVersion,
                       view_name: str) -> ViewVersionDiff:
    """Compare two versions of ``metadata`` (spec: "Versions")."""
    schema_a = metadata.schema_for_version(a)
    schema_b = metadata.schema_for_version(b)
    defaults = []
    if a.default_catalog != b.default_catalog:
        defaults.append(("default catalog", str(a.default_catalog), str(b.default_catalog)))
    if a.default_namespace != b.default_namespace:
        defaults.append(("default namespace", ".".join(a.default_namespace),
                         ".".join(b.default_namespace)))
    return ViewVersionDiff(view_name, a, b, schema_a, schema_b,
                           tuple(_dialect_changes(a, b)), tuple(_column_changes(schema_a,
                                                                               schema_b)),
                           tuple(defaults))
