"""PartitionEvolution: a table's partition spec history (fields with ids from 1000, transforms,
the files and rows each spec holds, v1's void rule), staged spec changes checked as they are
staged, a live preview of a transform on sample values (the 32-bit hash of bucket, as in the
spec's Appendix B), "where would this row land", a pruning lab that counts per spec the files
the planner keeps and prunes for a predicate, and a commit through ``t.update_spec()`` (spec:
"Partitioning", "Partition Transforms", "Partition Evolution", "Scan Planning").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as w
import pyarrow.compute as pc

from icenb.display import html as h
from icenb.display import render
from icenb.errors import IcebergError, ValidationError
from icenb.labels import t
from icenb.reprs import safe_repr
from icenb.spec import (
    PartitionSpec,
    SpecUpdate,
    bucket_hash,
    coerce,
    parse,
    parse_term,
    project_inclusive,
)
from icenb.table import Table
from icenb.widgets.authoring import Authoring
from icenb.widgets.staging import Change, Rule

__all__ = ["SPEC_RULES", "PartitionEvolution", "Pruning", "TransformPreview"]

_SECTION = "Partition Evolution"

#: The rule behind each kind of spec change, in plain words (table spec sections).
SPEC_RULES: dict[str, Rule] = {
    "add_field": Rule(
        "Adding a partition field",
        "a new partition field gets the next field id after last-partition-id (ids start at "
        "1000); its source must be a column of a type the transform accepts (bucket: ints, "
        "longs, decimals, dates, times, timestamps, strings, uuids, binary; year/month/day: "
        "dates and timestamps; hour: timestamps; truncate: ints, longs, decimals, strings, "
        "binary); the same source and transform, or the same name, cannot be added twice",
        _SECTION),
    "remove_field": Rule(
        "Removing a partition field",
        "the field leaves the new spec (format v1 keeps it as a void transform, because v1 "
        "specs must keep every field); files written under the old spec keep their "
        "partition values and still prune", _SECTION),
    "rename_field": Rule(
        "Renaming a partition field",
        "partition field names are unique within a spec and must not collide with a column "
        "name unless the field is an identity of that column", _SECTION),
}
_TOGETHER = Rule(
    "A consistent spec",
    "the staged changes together must leave a valid spec: unique names, each source column "
    "present, no field added and removed in one change", _SECTION)
_TRANSFORM = Rule(
    "Partition transforms",
    "the transform must accept the source column's type (see Partition Transforms)",
    "Partition Transforms")

_ACTIONS = {"add field": "add_field", "remove field": "remove_field",
            "rename field": "rename_field"}


@safe_repr
@dataclass(frozen=True)
class TransformPreview:
    """A transform applied to sample values of its source column: rows of (value, 32-bit
    bucket hash or None, result, result as a partition path shows it)."""

    term: str
    source: str
    transform: str
    rows: tuple[tuple[Any, int | None, Any, str], ...]


@safe_repr
@dataclass(frozen=True)
class SpecPruning:
    """One spec's files for a predicate: live data files, the files planning keeps
    (inclusive projection on the partition, then metrics), the rest pruned; the projected
    partition filter says why."""

    spec_id: int
    files: int
    kept: int
    projection: str

    @property
    def pruned(self) -> int:
        return self.files - self.kept


@safe_repr
@dataclass(frozen=True)
class Pruning:
    """A predicate's pruning per partition spec (:meth:`PartitionEvolution.prune`); indexable
    by spec id. The kept counts are the planner's (``t.scan(predicate).plan()``)."""

    predicate: str
    specs: Mapping[int, SpecPruning]

    def __getitem__(self, spec_id: int) -> SpecPruning:
        return self.specs[spec_id]

    @property
    def kept(self) -> int:
        return sum(s.kept for s in self.specs.values())

    @property
    def pruned(self) -> int:
        return sum(s.pruned for s in self.specs.values())


class PartitionEvolution(Authoring):
    """Evolve a table's partition spec by staging changes. ``PartitionEvolution(t)``.

    Programmatic surface: :attr:`pending` (the methods of the builder ``t.update_spec()``
    yields, recorded; a refused change is listed in :attr:`problems`, never raised),
    :attr:`problems`, :attr:`preview` (the resulting ``PartitionSpec``, None while problems
    exist), :meth:`commit`, :meth:`reset`, :meth:`prune` (per spec id: files kept and
    pruned); also :meth:`transform_preview`, :meth:`where`, :meth:`undo`, :meth:`code`.
    """

    what = "partition spec"
    methods = tuple(sorted(_ACTIONS.values()))
    css = "icenb-pe"

    def __init__(self, table: Table, *, sample_values: int = 8) -> None:
        self._sample_values = sample_values
        self._last_partition_id: int | None = None
        self._pruning: Pruning | None = None
        super().__init__(table)

    # ------------------------------------------------------------------ surface

    @property
    def preview(self) -> PartitionSpec | None:
        """The spec a commit would make the default (an equal earlier spec's id when one
        exists), or None while problems exist or nothing is staged."""
        out = self._staging.preview
        return out if isinstance(out, PartitionSpec) else None

    @property
    def last_partition_id(self) -> int | None:
        return self._last_partition_id if self.preview is not None else None

    def prune(self, predicate: str) -> Pruning:
        """For ``predicate``, per partition spec of the current snapshot: live data files, the
        files the planner keeps and the files it prunes, and the predicate projected onto the
        spec (inclusive projection: why files written under an old spec still prune)."""
        md = self._table.metadata
        expr = parse(predicate)
        plan = self._table.scan(predicate).plan()
        kept: dict[int, int] = {}
        if plan.files_selected:
            ids = plan.files.column("partition_spec_id")
            for v, n in zip(*_counts(ids), strict=True):
                kept[int(v)] = int(n)
        totals: dict[int, int] = {}
        for sv in self._table.spec_history().specs:
            if sv.usage is not None and sv.usage.data_files:
                totals[sv.spec.spec_id] = sv.usage.data_files
        out: dict[int, SpecPruning] = {}
        for spec_id in sorted(set(totals) | set(kept)):
            spec = md.spec_by_id(spec_id)
            try:
                projected = str(project_inclusive(spec, md.schema, expr)) if spec else "?"
            except IcebergError as e:
                projected = "(" + t("cannot project: {error}", error=e) + ")"
            out[spec_id] = SpecPruning(spec_id, max(totals.get(spec_id, 0),
                                                    kept.get(spec_id, 0)),
                                       kept.get(spec_id, 0), projected)
        self._pruning = Pruning(predicate, out)
        self.pruning_panel.value = h.document(_pruning_html(self._pruning))
        return self._pruning

    def transform_preview(self, term: str, values: Sequence[Any] | None = None
                          ) -> TransformPreview:
        """``term`` (``"bucket(16, id)"``, ``"day(ts)"``) applied to ``values`` (typed as the
        source column; default: the first distinct values of the column in the table)."""
        schema = self._table.schema
        sources, transform = parse_term(term)
        field = schema.field_by_name(sources[0])
        if field is None:
            raise ValidationError("cannot find source column", field=sources[0], value=term)
        typ = field.field_type
        if not transform.can_transform(typ):
            raise ValidationError(f"{transform} cannot transform {typ}", field=sources[0],
                                  value=term)
        if values is None:
            col = self._table.scan().select(sources[0]).page(0, 200).column(0)
            values = [v for v in pc.unique(col).to_pylist() if v is not None]
            values = values[:self._sample_values]
        rows = []
        is_bucket = str(transform).startswith("bucket")
        for raw in values:
            v = coerce(typ, raw, field=sources[0])
            result = transform.apply(typ, v)
            # as a partition path shows it: month 682 is 2026-11 (spec: Appendix C)
            rows.append((raw, bucket_hash(typ, v) if is_bucket else None, result,
                         transform.to_human_string(typ, result)))
        return TransformPreview(term, sources[0], str(transform), tuple(rows))

    def where(self, row: Mapping[str, Any]) -> str:
        """The partition path a row (column name -> value) lands in under :attr:`preview`
        (else the current default spec)."""
        spec = self.preview or self._table.spec
        schema = self._table.schema
        values = []
        for pf in spec.fields:
            src = schema.find_field(pf.source_ids[0])
            name = schema.column_name(pf.source_ids[0]) or src.name
            raw = row.get(name)
            v = None if raw is None else coerce(src.field_type, raw, field=name)
            values.append(pf.transform.apply(src.field_type, v))
        return spec.partition_path(schema, values) if spec.fields else "(unpartitioned)"

    def _now_current(self) -> PartitionSpec:
        return self._table.spec

    # ------------------------------------------------------------------ builder and rules

    def _new_builder(self) -> SpecUpdate:
        md = self._table.metadata
        return SpecUpdate(md.spec, md.schema, md.last_partition_id,
                          format_version=md.format_version, history=md.partition_specs)

    def _finish(self, builder: SpecUpdate) -> PartitionSpec:
        spec, last = builder.apply()
        self._last_partition_id = last
        return spec

    def _rule_for(self, change: Change | None, error: IcebergError) -> Rule:
        text = str(error).lower()
        if "transform" in text and ("cannot" in text or "type" in text):
            return _TRANSFORM
        if change is None:
            return _TOGETHER
        return SPEC_RULES.get(change.method, _TOGETHER)

    def _builder_call(self) -> str:
        return "update_spec()"

    def _commit_staged(self) -> None:
        with self._table.update_spec() as u:
            self._staging.replay(u)

    def _undo(self, before: Any) -> None:
        self._table.set_default_spec(before.default_spec_id)

    # ------------------------------------------------------------------ form

    def _form(self) -> w.Widget:
        self.action = w.Dropdown(options=[(t(a), a) for a in _ACTIONS], value="add field",
                                 layout=w.Layout(width="150px"))
        self.term = w.Combobox(placeholder=t("bucket(16, id) · day(ts) · field name"),
                               ensure_option=False, layout=w.Layout(width="260px"))
        self.field_name = w.Text(placeholder=t("name (optional) / new name"),
                                 layout=w.Layout(width="200px"))
        self.samples = w.Text(placeholder=t("values to transform, comma separated (optional)"),
                              continuous_update=False, layout=w.Layout(width="360px"))
        self.transform_panel = w.HTML()
        self.transform_panel.add_class("icenb-pe-transform")
        self.term.observe(lambda _c: self._show_transform(), names="value")
        self.samples.observe(lambda _c: self._show_transform(), names="value")
        self.predicate = w.Text(placeholder=t("predicate for the pruning lab, e.g. ts > "
                                              "'2024-01-02T00:00:00'"),
                                continuous_update=False, layout=w.Layout(width="420px"))
        self.prune_button = w.Button(description=t("count files"))
        self.pruning_panel = w.HTML()
        self.pruning_panel.add_class("icenb-pe-pruning")
        self.prune_button.on_click(lambda _b: self._guard_prune())
        self.predicate.observe(lambda _c: self._guard_prune(), names="value")
        return w.VBox([w.HBox([self.action, self.term, self.field_name]),
                       w.HBox([self.samples]), self.transform_panel])

    def _extra(self) -> list[w.Widget]:
        return [w.HBox([self.predicate, self.prune_button]), self.pruning_panel]

    def _guard_prune(self) -> None:
        if not self.predicate.value.strip():
            return
        try:
            self.error.clear()
            self.prune(self.predicate.value)
        except Exception as e:
            self.error.show(e)

    def _show_transform(self) -> None:
        term = self.term.value.strip()
        if not term or "(" not in term:
            self.transform_panel.value = ""
            return
        typed = [v.strip() for v in self.samples.value.split(",") if v.strip()]
        try:
            pv = self.transform_preview(term, typed or None)
        except Exception as e:
            self.transform_panel.value = h.document(h.error(str(e)))
            return
        self.transform_panel.value = h.document(_transform_html(pv))

    def _form_change(self) -> Change:
        method = _ACTIONS[self.action.value]
        term = self.term.value.strip()
        name = self.field_name.value.strip()
        if method == "add_field":
            return Change(method, (term,), {"name": name} if name else {})
        if method == "rename_field":
            return Change(method, (term, name))
        return Change(method, (term,))

    # ------------------------------------------------------------------ pictures

    def _header_facts(self) -> list[str]:
        md = self._table.metadata
        return [t("default spec {id}", id=md.default_spec_id),
                f"last-partition-id {md.last_partition_id}",
                t("{n} spec(s)", n=len(md.partition_specs))]

    def _history_html(self) -> str:
        if hasattr(self, "term"):
            spec = self._table.spec
            self.term.options = [f.name for f in spec.fields]
        note = ""
        if self._table.metadata.format_version == 1:
            note = h.muted(t("format v1: a removed partition field stays in the spec as void "
                             "(v1 specs keep every field)"))
        return h.section(t("Partition spec history"),
                         note + render(self._table.spec_history()).html, open=False)

    def _preview_html(self) -> str:
        spec = self.preview
        if spec is None:
            return h.muted(t("the preview appears when every staged change is allowed"))
        md = self._table.metadata
        rows = [[str(f.field_id), h.code(f.name), h.code(str(f.transform)),
                 h.code(md.schema.column_name(f.source_ids[0]) or "?")] for f in spec.fields]
        facts = h.kv([("default-spec-id", f"{md.default_spec_id} → {spec.spec_id}"),
                      ("last-partition-id",
                       f"{md.last_partition_id} → {self._last_partition_id}")])
        body = facts + (h.table([t("field id"), t("name"), t("transform"), t("source")], rows)
                        if rows else h.muted(t("unpartitioned")))
        return h.section(t("Preview: the new default spec"), body, open=True)

    def _effect_html(self, before: Any) -> str:
        after = self._table.metadata
        rows = [("default-spec-id", f"{before.default_spec_id} → {after.default_spec_id}"),
                ("last-partition-id",
                 f"{before.last_partition_id} → {after.last_partition_id}")]
        old = {f.field_id: f for f in before.spec.fields}
        new = {f.field_id: f for f in after.spec.fields}
        fields = []
        for fid in sorted(set(old) | set(new)):
            a, b = old.get(fid), new.get(fid)
            change = (h.badge(t("added"), "added") if a is None
                      else h.badge(t("removed"), "deleted") if b is None
                      else h.badge(t("changed"), "warn") if a != b else "")
            fields.append([str(fid), h.code("" if a is None else f"{a.name} {a.transform}"),
                           h.code("" if b is None else f"{b.name} {b.transform}"), change])
        return h.section(t("Committed: the default spec before and after"), h.kv(rows)
                         + h.table([t("field id"), t("before"), t("after"), t("change")],
                                   fields)
                         + render(self._table.spec_history()).html, open=True)


def _counts(ids: Any) -> tuple[list[Any], list[int]]:
    vc = pc.value_counts(ids)
    return vc.field("values").to_pylist(), vc.field("counts").to_pylist()


def _transform_html(pv: TransformPreview) -> str:
    bucket = any(r[1] is not None for r in pv.rows)
    headers = [pv.source, *([t("32-bit hash (Appendix B)")] if bucket else []), pv.transform,
               t("in a path")]
    body = [[h.esc(repr(r[0])), *([h.esc(str(r[1]))] if bucket else []), h.esc(str(r[2])),
             h.code(r[3])] for r in pv.rows]
    return h.section(t("Transform preview: {term}", term=pv.term), h.table(headers, body),
                     open=True)


def _pruning_html(p: Pruning) -> str:
    rows = [[str(s.spec_id), str(s.files), str(s.kept), str(s.pruned), h.code(s.projection)]
            for s in p.specs.values()]
    return h.section(t("Pruning lab: {predicate}", predicate=p.predicate),
                     h.table([t(x) for x in ("spec", "files", "kept", "pruned",
                                             "projected filter")], rows), open=True)
