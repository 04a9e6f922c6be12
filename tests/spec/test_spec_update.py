"""Partition evolution and sort-order replacement (icenb.spec.partition_spec_update and
sort_order_update) vs Iceberg Java 1.10.2.

ORACLE_CASES run through Java's UpdatePartitionSpec / ReplaceSortOrder on a Hadoop table
(tests/reference/java_evolution.py, one JVM for the module); the committed default spec (id,
fields, field ids, names) and last-partition-id, or the committed sort order, must match
icenb's result, and both must reject the same requests.
"""

from __future__ import annotations

from typing import Any

import pytest

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.spec.partition_spec import (
    PartitionSpec,
    partition_spec_from_json,
    partition_spec_to_json,
)
from icenb.spec.partition_spec_update import SpecUpdate
from icenb.spec.schema import Schema, schema_from_json, schema_to_json
from icenb.spec.sort_order import (
    UNSORTED,
    NullOrder,
    SortDirection,
    SortOrder,
    UnboundSortField,
    sort_order_from_json,
    sort_order_to_json,
)
from icenb.spec.sort_order_update import replace_sort_order
from icenb.spec.transforms import parse_transform
from tests.reference_fixtures import run_reference_batch


def F(fid: int, name: str, t: Any, required: bool = False) -> dict[str, Any]:
    return {"id": fid, "name": name, "required": required, "type": t}


SCHEMA = schema_from_json({"type": "struct", "schema-id": 0, "fields": [
    F(1, "id", "long", True), F(2, "ts", "timestamp"), F(3, "d", "date"), F(4, "s", "string"),
    F(5, "st", {"type": "struct", "fields": [F(6, "a", "int")]}),
    F(7, "l", {"type": "list", "element-id": 8, "element-required": False,
               "element": {"type": "struct", "fields": [F(9, "x", "int")]}}),
    F(10, "f", "float"),
]})


def PF(src: int, fid: int, name: str, t: str) -> dict[str, Any]:
    return {"source-id": src, "field-id": fid, "name": name, "transform": t}


def P(spec_id: int, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"spec-id": spec_id, "fields": fields}


def T(source: str, transform: str) -> dict[str, str]:
    return {"source": source, "transform": transform}


S0 = P(0, [PF(2, 1000, "ts_day", "day"), PF(1, 1001, "id_bucket", "bucket[16]")])
VOIDED = P(0, [PF(2, 1000, "ts_day", "void"), PF(1, 1001, "id_bucket", "bucket[16]")])

# (name, format version, specs (last is the default), ops, last-partition-id or None)
Case = tuple[str, int, list[dict[str, Any]], list[list[Any]], int | None]
ORACLE_CASES: list[Case] = [
    ("add with default names", 2, [S0], [
        ["spec_add", None, T("s", "truncate[4]")], ["spec_add", None, T("id", "identity")],
        ["spec_add", None, T("d", "year")], ["spec_add", None, T("st.a", "bucket[8]")]], None),
    ("v1 add with default names", 1, [S0], [
        ["spec_add", None, T("s", "truncate[4]")], ["spec_add", None, T("ts", "void")]], None),
    ("add named", 3, [S0], [["spec_add", "by_month", T("d", "month")]], None),
    ("add hour while day exists", 2, [S0], [["spec_add", None, T("ts", "hour")]], None),
    ("add two time transforms", 2, [S0], [
        ["spec_add", None, T("ts", "hour")], ["spec_add", None, T("ts", "month")]], None),
    ("add two time transforms to unpartitioned", 2, [P(0, [])], [
        ["spec_add", None, T("ts", "day")], ["spec_add", None, T("ts", "hour")]], None),
    ("add duplicate", 2, [S0], [["spec_add", None, T("ts", "day")]], None),
    ("add duplicate name", 2, [S0], [["spec_add", "ts_day", T("d", "day")]], None),
    ("add same field twice", 2, [S0], [
        ["spec_add", "a1", T("s", "identity")], ["spec_add", "a2", T("s", "identity")]], None),
    ("add two with one name", 2, [S0], [
        ["spec_add", "a1", T("s", "identity")], ["spec_add", "a1", T("d", "identity")]], None),
    ("name is another column", 2, [S0], [["spec_add", "s", T("id", "bucket[4]")]], None),
    ("name is own column", 2, [S0], [["spec_add", "s", T("s", "bucket[4]")]], None),
    ("identity and void of a column", 2, [S0], [
        ["spec_add", None, T("s", "identity")], ["spec_add", None, T("s", "void")]], None),
    ("bad transform for type", 2, [S0], [["spec_add", None, T("s", "day")]], None),
    ("bucket of float", 2, [S0], [["spec_add", None, T("f", "bucket[2]")]], None),
    ("source in a list", 2, [S0], [["spec_add", None, T("l.element.x", "identity")]], None),
    ("source is a struct", 2, [S0], [["spec_add", None, T("st", "identity")]], None),
    ("missing source", 2, [S0], [["spec_add", None, T("nope", "identity")]], None),
    ("remove and re-add", 2, [S0], [
        ["spec_remove_name", "ts_day"], ["spec_add", None, T("ts", "day")]], None),
    ("remove and re-add named", 2, [S0], [
        ["spec_remove_name", "ts_day"], ["spec_add", "dd", T("ts", "day")]], None),
    ("remove day add hour", 2, [S0], [
        ["spec_remove_term", T("ts", "day")], ["spec_add", None, T("ts", "hour")]], None),
    ("remove all", 2, [S0], [["spec_remove_name", "ts_day"], ["spec_remove_name", "id_bucket"]],
     None),
    ("v1 remove becomes void", 1, [S0], [["spec_remove_name", "ts_day"]], None),
    ("v1 remove and add the name", 1, [S0], [
        ["spec_remove_name", "ts_day"], ["spec_add", "ts_day", T("ts", "hour")]], None),
    ("v1 add over a void name", 1, [VOIDED], [["spec_add", None, T("ts", "day")]], None),
    ("v1 rename to a void name", 1, [VOIDED], [["spec_rename", "id_bucket", "ts_day"]], None),
    ("v1 non-sequential ids", 1, [P(0, [PF(2, 1000, "ts_day", "day")])], [
        ["spec_add", None, T("s", "identity")]], 1005),
    ("v2 last-partition-id ahead", 2, [P(0, [PF(2, 1000, "ts_day", "day")])], [
        ["spec_add", None, T("s", "identity")]], 1005),
    ("reuse field id of earlier spec", 2, [S0, P(1, [PF(1, 1001, "id_bucket", "bucket[16]")])],
     [["spec_add", None, T("ts", "day")]], None),
    ("reuse id and name, back to spec 0", 2,
     [P(0, [PF(2, 1000, "my_day", "day")]), P(1, [])], [["spec_add", None, T("ts", "day")]],
     None),
    ("other name gets new id", 2, [P(0, [PF(2, 1000, "my_day", "day")]), P(1, [])],
     [["spec_add", "other", T("ts", "day")]], None),
    ("v1 never reuses ids", 1, [P(0, [PF(2, 1000, "ts_day", "day")]),
                                P(1, [PF(2, 1000, "ts_day", "void")])],
     [["spec_add", None, T("ts", "day")]], None),
    ("rename", 2, [S0], [["spec_rename", "ts_day", "day_of_ts"]], None),
    ("rename to existing", 2, [S0], [["spec_rename", "ts_day", "id_bucket"]], None),
    ("rename then remove", 2, [S0], [["spec_rename", "ts_day", "x"],
                                     ["spec_remove_name", "ts_day"]], None),
    ("remove then rename", 2, [S0], [["spec_remove_name", "ts_day"],
                                     ["spec_rename", "ts_day", "x"]], None),
    ("remove missing", 2, [S0], [["spec_remove_name", "nope"]], None),
    ("remove added", 2, [S0], [["spec_add", None, T("s", "identity")],
                               ["spec_remove_name", "s"]], None),
    ("rename added", 2, [S0], [["spec_add", None, T("s", "identity")],
                               ["spec_rename", "s", "s2"]], None),
    ("remove twice", 2, [S0], [["spec_remove_name", "ts_day"],
                               ["spec_remove_term", T("ts", "day")]], None),
    ("rename to a column name", 2, [S0], [["spec_rename", "ts_day", "s"]], None),
    ("rename to own column name", 2, [S0], [["spec_rename", "ts_day", "ts"]], None),
    ("case insensitive", 2, [S0], [["spec_case_sensitive", False],
                                   ["spec_add", None, T("S", "identity")]], None),
    ("unknown transform in spec", 3, [P(0, [PF(2, 1000, "z", "zorder")])],
     [["spec_add", None, T("s", "identity")]], None),
]


def metadata_json(version: int, specs: list[dict[str, Any]], last: int | None,
                  orders: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    sj = schema_to_json(SCHEMA)
    orders = orders or [{"order-id": 0, "fields": []}]
    out: dict[str, Any] = {
        "format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "unused", "last-sequence-number": 0, "last-updated-ms": 1,
        "last-column-id": 10, "current-schema-id": 0, "schemas": [sj],
        "default-spec-id": specs[-1]["spec-id"], "partition-specs": specs,
        "last-partition-id": last if last is not None else max(
            [999] + [f["field-id"] for s in specs for f in s["fields"]]),
        "default-sort-order-id": orders[-1]["order-id"], "sort-orders": orders,
        "properties": {}, "current-snapshot-id": -1, "refs": {}, "snapshots": [],
        "snapshot-log": [], "metadata-log": [],
    }
    if version == 1:
        out["schema"] = sj
        out["partition-spec"] = specs[-1]["fields"]
        del out["last-sequence-number"]
    if version >= 3:
        out["next-row-id"] = 0
        out["current-snapshot-id"] = None
    return out


def _term(t: dict[str, str]) -> tuple[str, str]:
    return t["source"], t["transform"]


def run_icenb(version: int, specs: list[dict[str, Any]], ops: list[list[Any]],
              last: int | None) -> tuple[PartitionSpec, int]:
    history = [partition_spec_from_json(s, format_version=version) for s in specs]
    last_id = last if last is not None else max(s.last_assigned_field_id for s in history)
    sensitive = ["spec_case_sensitive", False] not in ops
    u = SpecUpdate(history[-1], SCHEMA, last_id, format_version=version, history=history,
                   case_sensitive=sensitive)
    for op in ops:
        if op[0] == "spec_add":
            u.add_field(*_term(op[2]), name=op[1])
        elif op[0] == "spec_remove_name":
            u.remove_field(op[1])
        elif op[0] == "spec_remove_term":
            source, transform = _term(op[1])
            u.remove_field(f"{transform.replace('[', '(').replace(']', ', ')}{source})"
                           if "[" in transform else f"{transform}({source})")
        elif op[0] == "spec_rename":
            u.rename_field(op[1], op[2])
    return u.apply()


SORT_CASES: list[tuple[str, list[dict[str, str]], str]] = [
    ("sort two fields", [
        {"source": "ts", "transform": "day", "direction": "desc", "null-order": "nulls-last"},
        {"source": "id", "transform": "bucket[4]", "direction": "asc",
         "null-order": "nulls-first"}], "day(ts) DESC NULLS LAST, bucket(4, id)"),
    ("sort same as existing", [
        {"source": "d", "transform": "identity", "direction": "asc",
         "null-order": "nulls-first"}], "d"),
    ("sort empty", [], ""),
    ("sort struct", [{"source": "st", "transform": "identity", "direction": "asc",
                      "null-order": "nulls-first"}], "st"),
    ("sort bad transform", [{"source": "s", "transform": "day", "direction": "asc",
                             "null-order": "nulls-first"}], "day(s)"),
    ("sort duplicate column", [
        {"source": "id", "transform": "identity", "direction": "asc",
         "null-order": "nulls-first"},
        {"source": "id", "transform": "identity", "direction": "desc",
         "null-order": "nulls-first"}], "id ASC NULLS FIRST, id DESC NULLS FIRST"),
]
EXISTING_ORDER = {"order-id": 1, "fields": [
    {"transform": "identity", "source-id": 3, "direction": "asc", "null-order": "nulls-first"}]}


@pytest.fixture(scope="module")
def java_results() -> dict[str, dict[str, Any]]:
    requests = [{"metadata": metadata_json(v, specs, last), "ops": ops}
                for _, v, specs, ops, last in ORACLE_CASES]
    names = [c[0] for c in ORACLE_CASES]
    orders = [{"order-id": 0, "fields": []}, EXISTING_ORDER]
    for name, fields, _ in SORT_CASES:
        requests.append({"metadata": metadata_json(2, [S0], None, orders),
                         "ops": [["sort", fields]]})
        names.append(name)
    requests.append({"metadata": metadata_json(2, [S0], None, orders), "ops": [["sort", [
        {"source": "l.element.x", "transform": "identity", "direction": "asc",
         "null-order": "nulls-first"}]]]})
    names.append("sort list element")
    return dict(zip(names, run_reference_batch("java_evolution.py", requests), strict=True))


def _default_spec(md: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in md["partition-specs"] if s["spec-id"] == md["default-spec-id"])


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_same_result_as_java(case: Case, java_results: dict[str, dict[str, Any]]) -> None:
    name, version, specs, ops, last = case
    java = java_results[name]
    try:
        spec, last_id = run_icenb(version, specs, ops, last)
    except ValidationError as e:
        assert not java["ok"], f"icenb rejects ({e}) but Java accepts"
        return
    assert java["ok"], f"Java rejects ({java['error']}) but icenb accepts"
    assert partition_spec_to_json(spec, version) == _default_spec(java["metadata"])
    assert last_id == java["metadata"]["last-partition-id"]


@pytest.mark.parametrize("case", SORT_CASES, ids=[c[0] for c in SORT_CASES])
def test_sort_order_same_as_java(case: tuple[str, list[dict[str, str]], str],
                                 java_results: dict[str, dict[str, Any]]) -> None:
    name, _, text = case
    java = java_results[name]
    existing = [UNSORTED, sort_order_from_json(EXISTING_ORDER, format_version=2)]
    try:
        order = replace_sort_order(SCHEMA, text, existing=existing)
    except ValidationError as e:
        assert not java["ok"], f"icenb rejects ({e}) but Java accepts"
        return
    assert java["ok"], f"Java rejects ({java['error']}) but icenb accepts"
    md = java["metadata"]
    assert order.order_id == md["default-sort-order-id"]
    java_order = next(o for o in md["sort-orders"] if o["order-id"] == order.order_id)
    assert sort_order_to_json(order, 2) == java_order


def test_divergence_sort_by_list_element(java_results: dict[str, dict[str, Any]]) -> None:
    """Java accepts a sort on a field inside a list; icenb refuses (rows have no one value)."""
    assert java_results["sort list element"]["ok"]
    with pytest.raises(ValidationError, match="inside a list or map"):
        replace_sort_order(SCHEMA, "l.element.x")


# --------------------------------------------------------------------------- unit tests


def spec(*fields: tuple[int, int, str, str], spec_id: int = 0) -> PartitionSpec:
    return partition_spec_from_json(
        P(spec_id, [PF(s, i, n, t) for s, i, n, t in fields]), format_version=2)


def test_add_fields_default_names_and_ids() -> None:
    new, last = (SpecUpdate(spec(), SCHEMA, 999, format_version=2)
                 .add_field("day(ts)").add_field("bucket(16, id)").add_field("s", "truncate[4]")
                 .add_field("d", parse_transform("identity")).apply())
    assert [(f.field_id, f.name, str(f.transform)) for f in new.fields] == [
        (1000, "ts_day", "day"), (1001, "id_bucket_16", "bucket[16]"),
        (1002, "s_trunc_4", "truncate[4]"), (1003, "d", "identity")]
    assert (new.spec_id, last) == (1, 1003)


def test_redundant_and_duplicate_fields() -> None:
    u = SpecUpdate(spec((2, 1000, "ts_day", "day")), SCHEMA, 1000, format_version=2)
    with pytest.raises(ValidationError, match="duplicate partition field") as err:
        u.add_field("day(ts)")
    assert err.value.field == "ts_day"
    u.add_field("hour(ts)")  # allowed: the day field is not added by this update (as Java)
    with pytest.raises(ValidationError, match="redundant partition field") as err:
        u.add_field("month(ts)")
    assert err.value.field == "ts_month"
    new, _ = u.apply()
    assert [f.name for f in new.fields] == ["ts_day", "ts_hour"]


def test_remove_by_name_or_term_and_v1_void() -> None:
    base = spec((2, 1000, "ts_day", "day"), (1, 1001, "id_bucket", "bucket[16]"))
    v2, _ = SpecUpdate(base, SCHEMA, 1001, format_version=2).remove_field("day(ts)").apply()
    assert [f.field_id for f in v2.fields] == [1001]
    v1, last = SpecUpdate(base, SCHEMA, 1001, format_version=1).remove_field("ts_day").apply()
    assert [(f.field_id, f.name, str(f.transform)) for f in v1.fields] == [
        (1000, "ts_day", "void"), (1001, "id_bucket", "bucket[16]")]
    assert last == 1001
    with pytest.raises(ValidationError, match="cannot find partition field") as err:
        SpecUpdate(base, SCHEMA, 1001, format_version=2).remove_field("hour(ts)")
    assert err.value.field == "hour(ts)"


def test_v1_readd_renames_void_and_takes_new_id() -> None:
    voided = spec((2, 1000, "ts_day", "void"), (1, 1001, "id_bucket", "bucket[16]"))
    new, last = SpecUpdate(voided, SCHEMA, 1001, format_version=1).add_field("day(ts)").apply()
    assert [(f.field_id, f.name, str(f.transform)) for f in new.fields] == [
        (1000, "ts_day_1000", "void"), (1001, "id_bucket", "bucket[16]"),
        (1002, "ts_day", "day")]
    assert last == 1002


def test_v2_reuses_field_id_of_earlier_spec() -> None:
    s0 = spec((2, 1000, "ts_day", "day"), (1, 1001, "id_bucket", "bucket[16]"))
    s1 = spec((1, 1001, "id_bucket", "bucket[16]"), spec_id=1)
    new, last = SpecUpdate(s1, SCHEMA, 1001, format_version=2, history=[s0, s1]) \
        .add_field("day(ts)").apply()
    assert [(f.field_id, f.name) for f in new.fields] == [(1001, "id_bucket"), (1000, "ts_day")]
    assert (new.spec_id, last) == (2, 1001)
    s1b = spec((2, 1000, "ts_day", "day"), spec_id=1)
    back, _ = SpecUpdate(s1b, SCHEMA, 1001, format_version=2, history=[s0, s1b]) \
        .add_field("bucket(16, id)", name="id_bucket").apply()
    assert back is s0  # equivalent to an existing spec: its id is reused


def test_name_conflicts_with_columns() -> None:
    base = spec((2, 1000, "ts_day", "day"))
    with pytest.raises(ValidationError, match="not its source") as err:
        SpecUpdate(base, SCHEMA, 1000, format_version=2).rename_field("ts_day", "s").apply()
    assert err.value.field == "s"
    new, _ = SpecUpdate(base, SCHEMA, 1000, format_version=2).rename_field("ts_day", "ts").apply()
    assert new.fields[0].name == "ts"


def test_invalid_sources_and_transforms() -> None:
    u = SpecUpdate(spec(), SCHEMA, 999, format_version=2)
    for term, message in (("day(s)", "cannot be applied"), ("bucket(2, f)", "cannot be applied"),
                          ("st", "non-primitive"), ("l.element.x", "inside a list"),
                          ("nope", "cannot find source column")):
        with pytest.raises(ValidationError, match=message):
            u.add_field(term)
    assert u.apply() == (spec(), 999)


def test_unknown_transform_blocks_update() -> None:
    with pytest.raises(UnsupportedFeature, match="unknown transform"):
        SpecUpdate(spec((2, 1000, "z", "zorder")), SCHEMA, 1000, format_version=3)


def test_v1_requires_sequential_ids() -> None:
    with pytest.raises(ValidationError, match="sequential ids") as err:
        SpecUpdate(spec((2, 1000, "ts_day", "day")), SCHEMA, 1005, format_version=1) \
            .add_field("s").apply()
    assert err.value.value == 1006


def test_failed_add_leaves_update_unchanged() -> None:
    u = SpecUpdate(spec((2, 1000, "ts_day", "day")), SCHEMA, 1000, format_version=2)
    with pytest.raises(ValidationError):
        u.add_field("ts_day_x", "identity")
    with pytest.raises(ValidationError):
        u.add_field("d", "identity", name="ts_day")
    new, last = u.add_field("s").apply()
    assert [(f.field_id, f.name) for f in new.fields] == [(1000, "ts_day"), (1001, "s")]
    assert last == 1001


def test_replace_sort_order() -> None:
    order = replace_sort_order(SCHEMA, "ts DESC NULLS LAST, bucket(4, id)")
    assert order.order_id == 1
    first = order.fields[0]
    assert (first.source_ids, first.direction, first.null_order) == (
        (2,), SortDirection.DESC, NullOrder.NULLS_LAST)
    assert replace_sort_order(SCHEMA, "") is UNSORTED
    again = replace_sort_order(SCHEMA, [UnboundSortField(("ts",), parse_transform("identity"),
                                                         SortDirection.DESC),
                                        "bucket(4, id)"], existing=[UNSORTED, order])
    assert again is order
    other = replace_sort_order(SCHEMA, "id", existing=[UNSORTED, order])
    assert other.order_id == 2
    with pytest.raises(ValidationError, match="non-primitive"):
        replace_sort_order(SCHEMA, "st")
    with pytest.raises(ValidationError):
        replace_sort_order(SCHEMA, "nope")


def test_sort_order_unknown_transform_rejected() -> None:
    schema = Schema(*SCHEMA.fields)
    bad = SortOrder(1, (sort_order_from_json(
        {"order-id": 1, "fields": [{"transform": "zorder", "source-id": 1, "direction": "asc",
                                    "null-order": "nulls-first"}]}, format_version=3).fields))
    with pytest.raises(UnsupportedFeature):
        replace_sort_order(schema, bad.fields)
