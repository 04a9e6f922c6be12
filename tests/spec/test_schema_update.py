"""Schema evolution (icenb.spec.schema_update) against the spec rules and Iceberg Java 1.10.2.

The oracle runs every case of ORACLE_CASES through Java's UpdateSchema on a Hadoop table
(tests/reference/java_evolution.py, one JVM for the module) and compares the committed schema
JSON and last-column-id, or that both reject the same request.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.spec import values
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema, field_from_json, schema_from_json, schema_to_json
from icenb.spec.schema_update import SchemaUpdate, check_schema_sources
from icenb.spec.sort_order import SortField, SortOrder
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    DateType,
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
)
from tests.reference_fixtures import run_reference_batch


def F(fid: int, name: str, t: Any, required: bool = False, **extra: Any) -> dict[str, Any]:
    out = {"id": fid, "name": name, "required": required, "type": t}
    out.update(extra)
    return out


BASE_FIELDS = [
    F(1, "id", "long", True),
    F(2, "ts", "timestamp"),
    F(3, "d", "date"),
    F(4, "s", {"type": "struct", "fields": [F(5, "a", "int"), F(6, "b", "string")]}),
    F(7, "l", {"type": "list", "element-id": 8, "element-required": False,
               "element": {"type": "struct", "fields": [F(9, "x", "int")]}}),
    F(10, "m", {"type": "map", "key-id": 11, "key": "string", "value-id": 12, "value": "int",
                "value-required": False}),
    F(13, "f", "float"),
    F(14, "i", "int"),
    F(15, "dec", "decimal(9, 2)"),
    F(16, "rs", {"type": "struct", "fields": [F(17, "k", "int", True)]}, True),
]


def base_schema(identifier: tuple[int, ...] = ()) -> Schema:
    doc: dict[str, Any] = {"type": "struct", "schema-id": 0, "fields": BASE_FIELDS}
    if identifier:
        doc["identifier-field-ids"] = list(identifier)
    return schema_from_json(doc)


def metadata_json(schema: Schema, version: int, last_column_id: int,
                  specs: list[dict[str, Any]] | None = None,
                  sort_order: dict[str, Any] | None = None) -> dict[str, Any]:
    """A minimal table metadata document for the Java side."""
    sj = schema_to_json(schema)
    specs = specs or [{"spec-id": 0, "fields": []}]
    orders = [{"order-id": 0, "fields": []}] + ([sort_order] if sort_order else [])
    out: dict[str, Any] = {
        "format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "unused", "last-sequence-number": 0, "last-updated-ms": 1,
        "last-column-id": last_column_id, "current-schema-id": schema.schema_id,
        "schemas": [sj], "default-spec-id": specs[-1]["spec-id"], "partition-specs": specs,
        "last-partition-id": max([999] + [f["field-id"] for s in specs for f in s["fields"]]),
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


def run_icenb(schema: Schema, version: int, ops: list[list[Any]]) -> tuple[Schema, int]:
    """Apply Java-style ops (see java_evolution.py) with SchemaUpdate."""
    sensitive = not any(op == ["case_sensitive", False] for op in ops)
    u = SchemaUpdate(schema, schema.highest_field_id, format_version=version,
                     case_sensitive=sensitive)
    for op in ops:
        name = op[0]
        if name == "add":
            parent, obj = op[1], op[2]
            f = field_from_json(obj)
            path = (parent, f.name) if parent else (f.name,)
            u.add_column(path, f.field_type, doc=f.doc, required=f.required,
                         initial_default=f.initial_default)
        elif name == "delete":
            u.delete_column(op[1])
        elif name == "rename":
            u.rename_column(op[1], op[2])
        elif name == "update_type":
            u.update_column(op[1], op[2])
        elif name == "update_doc":
            u.update_column_doc(op[1], op[2])
        elif name == "optional":
            u.make_column_optional(op[1])
        elif name == "require":
            u.require_column(op[1])
        elif name == "update_default":
            value = None if op[2] is None else field_from_json(op[2]).write_default
            u.update_column_default(op[1], value)
        elif name == "move_first":
            u.move_first(op[1])
        elif name == "move_before":
            u.move_before(op[1], op[2])
        elif name == "move_after":
            u.move_after(op[1], op[2])
        elif name == "identifier":
            u.set_identifier_fields(op[1])
        elif name == "allow_incompatible":
            u.allow_incompatible_changes()
        elif name == "case_sensitive":
            pass  # given to the constructor
        else:
            raise AssertionError(name)
    return u.apply()


# (name, format version, ops, identifier ids of the base schema)
ORACLE_CASES: list[tuple[str, int, list[list[Any]], tuple[int, ...]]] = [
    ("add optional", 2, [["add", None, F(0, "n", "string", doc="new")]], ()),
    ("add nested types fresh ids", 3, [["add", None, F(0, "n", {
        "type": "map", "key-id": 1, "key": {"type": "struct", "fields": [F(2, "k1", "int")]},
        "value-id": 3, "value-required": False,
        "value": {"type": "list", "element-id": 4, "element-required": True, "element": {
            "type": "struct", "fields": [F(5, "e1", "int"), F(6, "e2", {
                "type": "struct", "fields": [F(7, "z", "int")]})]}}})]], ()),
    ("add into struct, list and list element", 3, [
        ["add", "s", F(0, "c", "long")], ["add", "l", F(0, "y", "int")],
        ["add", "l.element", F(0, "z", "int")]], ()),
    ("add required with default v3", 3,
     [["add", None, F(0, "r", "int", True, **{"initial-default": 5})]], ()),
    ("add optional with defaults v3", 3, [
        ["add", None, F(0, "o", "date", **{"initial-default": "2024-02-29"})],
        ["add", None, F(0, "p", "decimal(9, 2)", **{"initial-default": "3.14"})]], ()),
    ("add required no default", 3, [["add", None, F(0, "r", "int", True)]], ()),
    ("add required no default allowed", 2,
     [["allow_incompatible"], ["add", None, F(0, "r", "int", True)]], ()),
    ("add default in v2", 2, [["add", None, F(0, "o", "int", **{"initial-default": 1})]], ()),
    ("add v3 type in v2", 2, [["add", None, F(0, "o", "timestamp_ns")]], ()),
    ("add unknown v3", 3, [["add", None, F(0, "u", "unknown")]], ()),
    ("add required unknown", 3,
     [["allow_incompatible"], ["add", None, F(0, "u", "unknown", True)]], ()),
    ("add to primitive", 3, [["add", "id", F(0, "c", "int")]], ()),
    ("add to map of primitives", 3, [["add", "m", F(0, "c", "int")]], ()),
    ("add existing name", 3, [["add", None, F(0, "ts", "int")]], ()),
    ("add same name twice", 3,
     [["add", None, F(0, "n", "int")], ["add", None, F(0, "n", "long")]], ()),
    ("delete and add same name", 2,
     [["delete", "ts"], ["add", None, F(0, "ts", "string")]], ()),
    ("add into deleted struct", 3, [["delete", "s"], ["add", "s", F(0, "c", "int")]], ()),
    ("add dotted name", 3, [["add", None, F(0, "a.b", "int")]], ()),
    ("delete nested and top", 2, [["delete", "s.a"], ["delete", "f"]], ()),
    ("delete all of a struct", 2, [["delete", "s.a"], ["delete", "s.b"]], ()),
    ("delete missing", 2, [["delete", "nope"]], ()),
    ("delete map key", 2, [["delete", "m.key"]], ()),
    ("delete list element", 2, [["delete", "l.element"]], ()),
    ("rename then delete", 2, [["rename", "ts", "ts2"], ["delete", "ts"]], ()),
    ("delete then rename", 2, [["delete", "ts"], ["rename", "ts", "ts2"]], ()),
    ("rename nested", 2, [["rename", "s.a", "alpha"], ["rename", "l.element.x", "ex"]], ()),
    ("rename to existing", 2, [["rename", "ts", "d"]], ()),
    ("rename swap", 2, [["rename", "ts", "d"], ["rename", "d", "ts"]], ()),
    ("rename added", 2, [["add", None, F(0, "n", "int")], ["rename", "n", "n2"]], ()),
    ("rename same name", 2, [["rename", "ts", "ts"]], ()),
    ("promote int long float double decimal", 2, [
        ["update_type", "i", "long"], ["update_type", "f", "double"],
        ["update_type", "dec", "decimal(12, 2)"], ["update_type", "m.value", "long"],
        ["update_type", "s.a", "long"]], ()),
    ("promote same type", 2, [["update_type", "i", "int"]], ()),
    ("string to int", 2, [["update_type", "s.b", "int"]], ()),
    ("long to int", 2, [["update_type", "id", "int"]], ()),
    ("decimal scale change", 2, [["update_type", "dec", "decimal(10, 3)"]], ()),
    ("decimal narrowing", 2, [["update_type", "dec", "decimal(5, 2)"]], ()),
    ("date to timestamp v3", 3, [["update_type", "d", "timestamp"]], ()),
    ("date to timestamp_ns v3", 3, [["update_type", "d", "timestamp_ns"]], ()),
    ("promote map key", 2, [["update_type", "m.key", "long"]], ()),
    ("promote deleted", 2, [["delete", "i"], ["update_type", "i", "long"]], ()),
    ("update doc", 2, [["update_doc", "ts", "event time"], ["update_doc", "s.a", "A"]], ()),
    ("make optional", 2, [["optional", "id"], ["optional", "rs.k"]], ()),
    ("require optional", 2, [["require", "ts"]], ()),
    ("require optional allowed", 2,
     [["allow_incompatible"], ["require", "ts"], ["require", "l.element"],
      ["require", "m.value"]], ()),
    ("require added with default", 3, [
        ["add", None, F(0, "n", "int", **{"initial-default": 3})], ["require", "n"]], ()),
    ("require added without default", 3,
     [["add", None, F(0, "n", "int")], ["require", "n"]], ()),
    ("optional map key", 2, [["optional", "m.key"]], ()),
    ("update write default", 3, [
        ["add", None, F(0, "n", "int", **{"initial-default": 3})],
        ["update_default", "n", F(0, "n", "int", **{"write-default": 4})],
        ["update_default", "i", F(0, "i", "int", **{"write-default": 7})]], ()),
    ("update write default v2", 2,
     [["update_default", "i", F(0, "i", "int", **{"write-default": 7})]], ()),
    ("update write default v1", 1,
     [["update_default", "i", F(0, "i", "int", **{"write-default": 7})]], ()),
    ("update write default bad value", 3,
     [["update_default", "i", F(0, "i", "string", **{"write-default": "abc"})]], ()),
    ("moves", 2, [
        ["add", None, F(0, "n", "int")], ["move_first", "n"], ["move_after", "id", "d"],
        ["move_before", "s.b", "s.a"], ["move_after", "l.element.x", "l.element.x"]], ()),
    ("moves valid", 3, [
        ["add", None, F(0, "n", "int")], ["move_first", "n"], ["move_after", "id", "d"],
        ["move_before", "s.b", "s.a"], ["add", "s", F(0, "c", "int")], ["move_first", "s.c"],
        ["move_before", "i", "ts"], ["move_after", "ts", "rs"]], ()),
    ("move across structs", 2, [["move_after", "s.a", "id"]], ()),
    ("move missing", 2, [["move_first", "nope"]], ()),
    ("move deleted", 2, [["delete", "ts"], ["move_first", "ts"]], ()),
    ("move then delete", 2, [["move_first", "ts"], ["delete", "ts"]], ()),
    ("move before deleted", 2, [["delete", "ts"], ["move_before", "id", "ts"]], ()),
    ("identifier ok", 2, [["identifier", ["id", "rs.k"]]], ()),
    ("identifier float", 2, [["identifier", ["f"]]], ()),
    ("identifier optional", 2, [["identifier", ["ts"]]], ()),
    ("identifier in optional struct", 2, [
        ["allow_incompatible"], ["require", "s.a"], ["identifier", ["s.a"]]], ()),
    ("identifier in list", 2, [
        ["allow_incompatible"], ["require", "l.element.x"], ["identifier", ["l.element.x"]]],
     ()),
    ("identifier missing", 2, [["identifier", ["nope"]]], ()),
    ("identifier renamed", 2, [["rename", "id", "key"], ["identifier", ["key"]]], ()),
    ("identifier follows rename", 2, [["rename", "id", "key"]], (1,)),
    ("delete identifier", 2, [["delete", "id"]], (1,)),
    ("delete identifier struct", 2, [["delete", "rs"]], (17,)),
    ("delete identifier replaced", 2, [["identifier", ["rs.k"]], ["delete", "id"]], (1,)),
    ("identifier added required", 3, [
        ["add", None, F(0, "key", "string", True, **{"initial-default": "x"})],
        ["identifier", ["key"]]], ()),
    ("case insensitive", 2, [
        ["case_sensitive", False], ["rename", "TS", "T2"], ["add", "S", F(0, "c", "int")],
        ["move_first", "ID"], ["update_type", "I", "long"]], ()),
    ("case sensitive miss", 2, [["rename", "TS", "T2"]], ()),
]

# Requests Java accepts but icenb rejects on purpose (documented divergences).
ICENB_STRICTER = {
    # Java records the rename of a list element and then silently ignores it.
    "rename element": "cannot rename a list element",
}


@pytest.fixture(scope="module")
def java_results() -> dict[str, dict[str, Any]]:
    requests = []
    for _name, version, ops, ident in ORACLE_CASES:
        schema = base_schema(ident)
        requests.append({"metadata": metadata_json(schema, version, schema.highest_field_id),
                         "ops": ops})
    extra = [
        # deleting partition / sort sources (table-level rule, see check_schema_sources)
        ("delete spec source", 2, [["delete", "ts"]]),
        ("delete sort source", 2, [["delete", "d"]]),
        ("delete old spec source", 2, [["delete", "i"]]),
        ("rename element", 2, [["rename", "l.element", "elem"]]),
    ]
    for _name, version, ops in extra:
        schema = base_schema()
        specs = [{"spec-id": 0, "fields": [
                     {"source-id": 14, "field-id": 1000, "name": "i", "transform": "identity"}]},
                 {"spec-id": 1, "fields": [
                     {"source-id": 2, "field-id": 1001, "name": "ts_day", "transform": "day"}]}]
        order = {"order-id": 1, "fields": [{"transform": "identity", "source-id": 3,
                                            "direction": "asc", "null-order": "nulls-first"}]}
        requests.append({"metadata": metadata_json(schema, version, 17, specs, order),
                         "ops": ops})
    names = [c[0] for c in ORACLE_CASES] + [e[0] for e in extra]
    return dict(zip(names, run_reference_batch("java_evolution.py", requests), strict=True))


def _java_schema(md: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_same_result_as_java(case: tuple[str, int, list[list[Any]], tuple[int, ...]],
                             java_results: dict[str, dict[str, Any]]) -> None:
    name, version, ops, ident = case
    java = java_results[name]
    try:
        schema, last = run_icenb(base_schema(ident), version, ops)
    except ValidationError as e:
        assert not java["ok"], f"icenb rejects ({e}) but Java accepts"
        return
    assert java["ok"], f"Java rejects ({java['error']}) but icenb accepts"
    assert schema_to_json(schema) == _java_schema(java["metadata"])
    assert last == java["metadata"]["last-column-id"]


def test_partition_and_sort_sources_like_java(java_results: dict[str, dict[str, Any]]) -> None:
    spec = PartitionSpec(1, (PartitionField((2,), 1001, parse_transform("day"), "ts_day"),))
    order = SortOrder(1, (SortField((3,), parse_transform("identity")),))
    for column, java_ok in (("ts", False), ("d", False), ("i", True)):
        key = {"ts": "delete spec source", "d": "delete sort source",
               "i": "delete old spec source"}[column]
        assert java_results[key]["ok"] is java_ok
        schema, _ = SchemaUpdate(base_schema(), 17, format_version=2) \
            .delete_column(column).apply()
        if java_ok:
            check_schema_sources(schema, spec, order)
        else:
            with pytest.raises(ValidationError) as err:
                check_schema_sources(schema, spec, order)
            assert "cannot delete column" in str(err.value)


def test_divergence_rename_list_element(java_results: dict[str, dict[str, Any]]) -> None:
    assert java_results["rename element"]["ok"]  # Java accepts and ignores it
    with pytest.raises(ValidationError, match=ICENB_STRICTER["rename element"]):
        SchemaUpdate(base_schema(), 17, format_version=2).rename_column("l.element", "elem")


# --------------------------------------------------------------------------- unit tests


def test_add_column_ids_and_defaults() -> None:
    schema, last = (SchemaUpdate(base_schema(), 17, format_version=3)
                    .add_column("score", "double", doc="points")
                    .add_column("since", DateType(), required=True, initial_default="2020-01-01")
                    .add_column("w", "long", initial_default=1, write_default=2)
                    .apply())
    assert last == 20
    assert schema.schema_id == 1
    assert schema.find_field("score") == NestedField(18, "score", schema.find_type("score"),
                                                     False, "points")
    since = schema.find_field("since")
    assert (since.field_id, since.required) == (19, True)
    assert since.initial_default == since.write_default == values.ymd_to_days(2020, 1, 1)
    w = schema.find_field("w")
    assert (w.initial_default, w.write_default) == (1, 2)


def test_last_column_id_above_highest_id_is_kept() -> None:
    _, last = SchemaUpdate(base_schema(), 40, format_version=2).add_column("n", "int").apply()
    assert last == 41


def test_nested_type_gets_fresh_ids_struct_children_first() -> None:
    t = StructType(NestedField(1, "a", ListType(2, IntegerType())),
                   NestedField(3, "b", MapType(4, StringType(), 5, LongType())))
    schema, last = SchemaUpdate(base_schema(), 17, format_version=2).add_column("n", t).apply()
    n = schema.find_field("n")
    assert n.field_id == 18
    assert isinstance(n.field_type, StructType)
    a, b = n.field_type.fields
    assert (a.field_id, b.field_id) == (19, 20)
    assert a.field_type == ListType(21, IntegerType())
    assert b.field_type == MapType(22, StringType(), 23, LongType())
    assert last == 23


@pytest.mark.parametrize(("version", "kwargs", "message"), [
    (3, {"required": True}, "without an initial default"),
    (2, {"required": True, "initial_default": 1}, "not supported until v3"),
    (2, {"initial_default": 1}, "not supported until v3"),
    (3, {"initial_default": "abc"}, "invalid initial-default for type int"),
    (3, {"initial_default": 2**40}, "invalid initial-default for type int"),
])
def test_add_column_default_rules(version: int, kwargs: dict[str, Any], message: str) -> None:
    u = SchemaUpdate(base_schema(), 17, format_version=version)
    with pytest.raises(ValidationError, match=message) as err:
        u.add_column("n", "int", **kwargs)
    assert err.value.field == "n"
    assert u.last_column_id == 17  # nothing partially applied
    assert u.apply() == (base_schema(), 17)


def test_nested_defaults_unsupported() -> None:
    t = StructType(NestedField(1, "q", IntegerType()))
    with pytest.raises(UnsupportedFeature, match="nested type"):
        SchemaUpdate(base_schema(), 17, format_version=3).add_column("n", t,
                                                                     initial_default={"q": 1})


def test_v3_types_need_v3() -> None:
    with pytest.raises(ValidationError, match="not supported until v3") as err:
        SchemaUpdate(base_schema(), 17, format_version=2).add_column("n", TimestampNanoType())
    assert err.value.value == "timestamp_ns"
    with pytest.raises(ValidationError, match="must be optional"):
        SchemaUpdate(base_schema(), 17, format_version=3, allow_incompatible_changes=True) \
            .add_column("n", "unknown", required=True)


def test_add_name_conflicts_and_parents() -> None:
    u = SchemaUpdate(base_schema(), 17, format_version=2)
    with pytest.raises(ValidationError, match="already exists") as err:
        u.add_column("s.a", "int")
    assert err.value.field == "s.a"
    with pytest.raises(ValidationError, match="cannot find parent"):
        u.add_column("nope.a", "int")
    with pytest.raises(ValidationError, match="not a struct"):
        u.add_column("id.a", "int")
    u.add_column("n", "int")
    with pytest.raises(ValidationError, match="already being added"):
        u.add_column("n", "long")
    schema, _ = u.add_column(("a.b",), "int").apply()
    assert schema.fields[-1].name == "a.b"


def test_delete_then_add_same_name_gets_new_id() -> None:
    schema, last = (SchemaUpdate(base_schema(), 17, format_version=2)
                    .delete_column("ts").add_column("ts", "string").apply())
    assert schema.find_field("ts").field_id == 18 == last
    assert schema.find_type("ts") == StringType()


@pytest.mark.parametrize(("source", "target", "ok"), [
    ("i", "long", True), ("f", "double", True), ("dec", DecimalType(10, 2), True),
    ("dec", DecimalType(9, 2), True), ("dec", DecimalType(10, 3), False),
    ("dec", DecimalType(8, 2), False), ("s.b", "int", False), ("id", "int", False),
    ("d", "timestamp", False), ("i", "string", False), ("f", "long", False),
])
def test_type_promotions(source: str, target: Any, ok: bool) -> None:
    u = SchemaUpdate(base_schema(), 17, format_version=3)
    if ok:
        schema, _ = u.update_column(source, target).apply()
        assert str(schema.find_type(source)) == str(target)
    else:
        with pytest.raises(ValidationError, match="cannot change column type") as err:
            u.update_column(source, target)
        assert err.value.field == source


def test_promotion_keeps_defaults() -> None:
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=3)
                 .add_column("n", "int", initial_default=5).apply())
    schema2, _ = SchemaUpdate(schema, 18, format_version=3).update_column("n", "long").apply()
    n = schema2.find_field("n")
    assert (n.field_type, n.initial_default, n.write_default) == (LongType(), 5, 5)
    assert schema_to_json(schema2)["fields"][-1] == {
        "id": 18, "name": "n", "required": False, "type": "long",
        "initial-default": 5, "write-default": 5}


def test_rename_and_doc() -> None:
    schema, last = (SchemaUpdate(base_schema(), 17, format_version=2)
                    .rename_column("s.a", "alpha").update_column("ts", doc="event time")
                    .apply())
    assert schema.find_field("s.alpha").field_id == 5
    assert schema.find_field("ts").doc == "event time"
    assert last == 17


def test_rename_collision_rejected_at_apply() -> None:
    u = SchemaUpdate(base_schema(), 17, format_version=2).rename_column("ts", "d")
    with pytest.raises(ValidationError, match="duplicate field name") as err:
        u.apply()
    assert err.value.field == "d"


def test_requirement_changes() -> None:
    with pytest.raises(ValidationError, match="incompatible change") as err:
        SchemaUpdate(base_schema(), 17, format_version=2).require_column("ts")
    assert err.value.field == "ts"
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=2,
                              allow_incompatible_changes=True)
                 .require_column("ts").require_column("l.element").apply())
    assert schema.find_field("ts").required
    lt = schema.find_type("l")
    assert isinstance(lt, ListType) and lt.element_required
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=2)
                 .make_column_optional("id").make_column_optional("m.value").apply())
    assert not schema.find_field("id").required
    with pytest.raises(ValidationError, match="map key"):
        SchemaUpdate(base_schema(), 17, format_version=2).make_column_optional("m.key")


def test_update_column_default() -> None:
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=3)
                 .update_column_default("dec", "1.50").apply())
    f = schema.find_field("dec")
    assert (f.initial_default, f.write_default) == (None, Decimal("1.50"))
    with pytest.raises(ValidationError, match="invalid write-default") as err:
        SchemaUpdate(base_schema(), 17, format_version=3).update_column_default("dec", "1.555")
    assert err.value.field == "dec"
    # Appendix E: write-default is forward compatible; Java 1.10 accepts it in v1/v2 too
    schema, _ = SchemaUpdate(base_schema(), 17, format_version=2) \
        .update_column_default("i", 1).apply()
    assert schema.find_field("i").write_default == 1


def test_moves() -> None:
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=2)
                 .add_column("n", "int").move_first("n").move_after("id", "d")
                 .move_before("s.b", "s.a").apply())
    assert [f.name for f in schema.fields][:4] == ["n", "ts", "d", "id"]
    st = schema.find_type("s")
    assert isinstance(st, StructType) and [f.name for f in st.fields] == ["b", "a"]
    u = SchemaUpdate(base_schema(), 17, format_version=2)
    with pytest.raises(ValidationError, match="different struct"):
        u.move_after("s.a", "id")
    with pytest.raises(ValidationError, match="itself"):
        u.move_before("id", "id")
    with pytest.raises(ValidationError, match="list or map"):
        u.move_first("l.element")


def test_delete_rules() -> None:
    u = SchemaUpdate(base_schema(), 17, format_version=2)
    for name, message in (("nope", "missing column"), ("m.key", "map key or value"),
                          ("l.element", "list element")):
        with pytest.raises(ValidationError, match=message) as err:
            u.delete_column(name)
        assert err.value.field == name
    u.rename_column("ts", "t2")
    with pytest.raises(ValidationError, match="has updates"):
        u.delete_column("ts")
    u.add_column("s.c", "int")
    with pytest.raises(ValidationError, match="has additions"):
        u.delete_column("s")


def test_identifier_fields() -> None:
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=2)
                 .set_identifier_fields(["id", "rs.k"]).apply())
    assert schema.identifier_field_ids == (1, 17)
    for names, message in ((["f"], "float or double"), (["ts"], "must be required"),
                           (["nope"], "not found")):
        with pytest.raises(ValidationError, match=message):
            SchemaUpdate(base_schema(), 17, format_version=2).set_identifier_fields(names).apply()
    with pytest.raises(ValidationError, match="float or double") as err:
        (SchemaUpdate(base_schema(), 17, format_version=2, allow_incompatible_changes=True)
         .require_column("f").set_identifier_fields(["f"]).apply())
    assert err.value.field == "f"
    with pytest.raises(ValidationError, match="optional struct"):
        (SchemaUpdate(base_schema(), 17, format_version=2, allow_incompatible_changes=True)
         .require_column("s.a").set_identifier_fields(["s.a"]).apply())
    with pytest.raises(ValidationError, match="list or map"):
        (SchemaUpdate(base_schema(), 17, format_version=2, allow_incompatible_changes=True)
         .require_column("l").require_column("l.element").require_column("l.element.x")
         .set_identifier_fields(["l.element.x"]).apply())


def test_identifier_fields_follow_renames_and_block_deletes() -> None:
    schema, _ = SchemaUpdate(base_schema((1,)), 17, format_version=2) \
        .rename_column("id", "key").apply()
    assert schema.identifier_field_names == ("key",)
    with pytest.raises(ValidationError, match="identifier field") as err:
        SchemaUpdate(base_schema((1,)), 17, format_version=2).delete_column("id").apply()
    assert err.value.field == "id"
    with pytest.raises(ValidationError, match=r"contains identifier field rs\.k"):
        SchemaUpdate(base_schema((17,)), 17, format_version=2).delete_column("rs").apply()
    schema, _ = (SchemaUpdate(base_schema((1,)), 17, format_version=2)
                 .delete_column("id").set_identifier_fields(["rs.k"]).apply())
    assert schema.identifier_field_ids == (17,)


def test_case_insensitive() -> None:
    schema, _ = (SchemaUpdate(base_schema(), 17, format_version=2, case_sensitive=False)
                 .rename_column("TS", "T2").add_column("S.c", "int").apply())
    assert schema.find_field("T2").field_id == 2
    assert schema.find_field("s.c").field_id == 18
    with pytest.raises(ValidationError, match="already exists"):
        SchemaUpdate(base_schema(), 17, format_version=2, case_sensitive=False) \
            .add_column("TS", "int")


def test_no_changes_returns_input() -> None:
    schema = base_schema()
    assert SchemaUpdate(schema, 17, format_version=2).apply() == (schema, 17)
    result, _ = SchemaUpdate(schema, 17, format_version=2).rename_column("ts", "ts").apply()
    assert result is schema


def test_input_schema_unchanged_and_json_round_trip() -> None:
    schema = base_schema()
    before = json.dumps(schema_to_json(schema))
    new, _ = (SchemaUpdate(schema, 17, format_version=3)
              .add_column("n", "int", initial_default=1).delete_column("ts").apply(schema_id=7))
    assert json.dumps(schema_to_json(schema)) == before
    assert new.schema_id == 7
    assert schema_from_json(schema_to_json(new)) == new
