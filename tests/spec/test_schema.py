"""Schemas: lookup, identifier fields, promotion and Appendix C JSON round trips."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icenb.errors import IcebergError, InvalidMetadata, ValidationError
from icenb.spec.metadata_columns import (
    FILE_PATH,
    LAST_UPDATED_SEQUENCE_NUMBER,
    ROW_ID,
    is_metadata_column,
    metadata_column,
)
from icenb.spec.schema import (
    MAX_FIELD_ID,
    Schema,
    is_promotion_allowed,
    schema_from_json,
    schema_to_json,
    type_from_json,
    type_to_json,
)
from icenb.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)


def nested_schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), True),
        NestedField(2, "Data", StringType()),
        NestedField(
            3, "location", StructType(
                NestedField(4, "lat", DoubleType(), True),
                NestedField(5, "long", DoubleType(), True),
            ), True,
        ),
        NestedField(6, "points", ListType(7, StructType(
            NestedField(8, "x", LongType(), True), NestedField(9, "y", LongType(), True),
        ), True)),
        NestedField(10, "props", MapType(11, StringType(), 12, StructType(
            NestedField(13, "v", IntegerType()),
        ))),
        schema_id=3,
        identifier_field_ids=(1,),
    )


def test_lookup_by_id_and_full_dotted_name() -> None:
    s = nested_schema()
    assert s.find_field(4).name == "lat"
    assert s.find_field("location.lat").field_id == 4
    assert s.find_field("points.element.x").field_id == 8
    assert s.find_field("props.key").field_id == 11
    assert s.find_field("props.value.v").field_id == 13
    assert s.column_name(13) == "props.value.v"
    assert s.highest_field_id == 13


def test_lookup_short_names_for_list_and_map_children() -> None:
    s = nested_schema()
    assert s.find_field("points.x").field_id == 8
    assert s.find_field("props.v").field_id == 13


def test_case_insensitive_lookup() -> None:
    s = nested_schema()
    assert s.field_by_name("data") is None
    assert s.find_field("data", case_sensitive=False).field_id == 2
    assert s.find_field("LOCATION.LAT", case_sensitive=False).field_id == 4


def test_case_insensitive_ambiguity_is_an_error() -> None:
    s = Schema(NestedField(1, "a", IntegerType()), NestedField(2, "A", IntegerType()))
    with pytest.raises(ValidationError, match="ambiguous"):
        s.find_field("a", case_sensitive=False)
    assert s.find_field("A").field_id == 2


def test_missing_field_error_names_it() -> None:
    with pytest.raises(ValidationError, match="field: nope"):
        nested_schema().find_field("nope")


def test_ancestors_and_parent() -> None:
    s = nested_schema()
    assert [f.name for f in s.ancestors(8)] == ["points", "element"]
    assert s.parent_id(4) == 3
    assert s.parent_id(1) is None


def test_select_keeps_containing_structs() -> None:
    s = nested_schema().select("location.lat", "id")
    assert [f.name for f in s.fields] == ["id", "location"]
    loc = s.find_field("location").field_type
    assert isinstance(loc, StructType) and [f.name for f in loc.fields] == ["lat"]
    assert s.identifier_field_ids == (1,)


def test_duplicate_ids_and_names_rejected() -> None:
    with pytest.raises(ValidationError, match="field id 1"):
        Schema(NestedField(1, "a", IntegerType()), NestedField(1, "b", IntegerType()))
    with pytest.raises(ValidationError, match="duplicate field name"):
        Schema(NestedField(1, "a", IntegerType()), NestedField(2, "a", IntegerType()))


@pytest.mark.parametrize(
    ("fields", "ids", "message"),
    [
        ((NestedField(1, "f", FloatType(), True),), (1,), "float or double"),
        ((NestedField(1, "d", DoubleType(), True),), (1,), "float or double"),
        ((NestedField(1, "o", LongType(), False),), (1,), "must be required"),
        ((NestedField(1, "s", StructType(NestedField(2, "x", LongType(), True)), False),), (2,),
         "optional struct"),
        ((NestedField(1, "l", ListType(2, LongType(), True), True),), (2,), "list or map"),
        ((NestedField(1, "s", StructType(), True),), (1,), "primitive"),
        ((NestedField(1, "a", LongType(), True),), (9,), "not in the schema"),
    ],
)
def test_identifier_field_rules(fields: tuple[NestedField, ...], ids: tuple[int, ...],
                                message: str) -> None:
    """Spec: Identifier Field IDs."""
    with pytest.raises(ValidationError, match=message):
        Schema(*fields, identifier_field_ids=ids)


def test_identifier_field_nested_in_required_struct_is_allowed() -> None:
    s = Schema(NestedField(1, "s", StructType(NestedField(2, "x", LongType(), True)), True),
               identifier_field_ids=(2,))
    assert s.identifier_field_names == ("s.x",)


@pytest.mark.parametrize(
    ("source", "target", "version", "allowed"),
    [
        (IntegerType(), LongType(), 1, True),
        (LongType(), IntegerType(), 2, False),
        (FloatType(), DoubleType(), 1, True),
        (DoubleType(), FloatType(), 1, False),
        (DecimalType(9, 2), DecimalType(18, 2), 1, True),
        (DecimalType(9, 2), DecimalType(18, 3), 1, False),
        (DecimalType(18, 2), DecimalType(9, 2), 1, False),
        (IntegerType(), DoubleType(), 2, False),
        (DateType(), TimestampType(), 2, False),
        (DateType(), TimestampType(), 3, True),
        (DateType(), TimestampNanoType(), 3, True),
        (DateType(), TimestamptzType(), 3, False),
        (UnknownType(), StringType(), 3, True),
        (StringType(), BinaryType(), 3, False),
        (FixedType(4), FixedType(8), 2, False),
    ],
)
def test_type_promotion(source: IcebergType, target: IcebergType, version: int,
                        allowed: bool) -> None:
    """Spec: Schema Evolution, valid type promotions."""
    assert is_promotion_allowed(source, target, version) is allowed


def test_metadata_columns() -> None:
    """Spec: Reserved Field IDs, plus v3 row lineage."""
    assert FILE_PATH.field_id == 2147483646
    assert metadata_column("_pos") is not None and metadata_column("_pos").field_id == 2147483645  # type: ignore[union-attr]
    assert ROW_ID.field_id == 2147483540 and not ROW_ID.required
    assert LAST_UPDATED_SEQUENCE_NUMBER.field_id == 2147483539
    assert all(is_metadata_column(i) for i in (2147483642, 2147483546, 2147483545, 2147483544))
    assert not is_metadata_column(MAX_FIELD_ID)
    assert MAX_FIELD_ID == 2147483447


SPEC_SCHEMA_JSON: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "uuid"},
        {"id": 2, "name": "data", "required": False,
         "type": {"type": "list", "element-id": 3, "element-required": True,
                  "element": "string"}},
        {"id": 4, "name": "m", "required": False,
         "type": {"type": "map", "key-id": 5, "key": "string", "value-id": 6,
                  "value-required": False, "value": "double"}},
        {"id": 7, "name": "d", "required": True, "type": "decimal(9,2)", "doc": "money"},
    ],
}


def test_appendix_c_schema_example_parses() -> None:
    s = schema_from_json(SPEC_SCHEMA_JSON)
    assert s.find_type("data") == ListType(3, StringType(), True)
    assert s.find_type("m") == MapType(5, StringType(), 6, DoubleType(), False)
    assert s.find_field("d").doc == "money"
    assert s.find_type("d") == DecimalType(9, 2)
    assert s.identifier_field_ids == (1,)
    assert schema_from_json(schema_to_json(s)) == s


def test_field_defaults_parse_with_single_value_json() -> None:
    """Spec: Appendix C example: a uuid field with initial-default and write-default."""
    import uuid

    doc = {"type": "struct", "schema-id": 1, "fields": [
        {"id": 1, "name": "id", "required": True, "type": "uuid",
         "initial-default": "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb",
         "write-default": "ec5911be-b0a7-458c-8438-c9a3e53cffae"}]}
    s = schema_from_json(doc)
    f = s.find_field("id")
    assert f.initial_default == uuid.UUID("0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb")
    assert f.write_default == uuid.UUID("ec5911be-b0a7-458c-8438-c9a3e53cffae")
    assert schema_to_json(s)["fields"][0]["initial-default"] == (
        "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb")


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["fields"][0].pop("id"), "schema.id.id"),
        (lambda d: d["fields"][0].__setitem__("required", "yes"), "schema.id.required"),
        (lambda d: d["fields"][0].__setitem__("type", "varchar"), "schema.id.type"),
        (lambda d: d["fields"][1]["type"].pop("element-id"), "schema.data.type.element-id"),
        (lambda d: d["fields"][3].__setitem__("type", "decimal(40,2)"), "schema.d.type"),
        (lambda d: d.__setitem__("fields", {}), "schema.fields"),
        (lambda d: d.__setitem__("identifier-field-ids", [77]), "schema.identifier-field-ids"),
        (lambda d: d["fields"][0].__setitem__("initial-default", "not-a-uuid"),
         "schema.id.initial-default"),
    ],
)
def test_bad_schema_json_names_the_field(mutate: Any, field: str) -> None:
    import copy

    doc = copy.deepcopy(SPEC_SCHEMA_JSON)
    mutate(doc)
    with pytest.raises(InvalidMetadata) as info:
        schema_from_json(doc)
    assert info.value.field == field


# ------------------------------------------------------------------ property-based round trip

PRIMITIVES = st.sampled_from([
    BooleanType(), IntegerType(), LongType(), FloatType(), DoubleType(), DateType(), TimeType(),
    TimestampType(), TimestamptzType(), TimestampNanoType(), StringType(), UUIDType(),
    BinaryType(), UnknownType(),
]) | st.builds(FixedType, st.integers(0, 64)) | st.builds(
    lambda p, s: DecimalType(p, min(s, p)), st.integers(1, 38), st.integers(0, 38))

NAMES = st.text(alphabet="abcdefgXYZ_ 1.é", min_size=1, max_size=6)


@st.composite
def types_with_ids(draw: st.DrawFn, counter: list[int], depth: int = 0) -> IcebergType:
    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    kind = draw(st.sampled_from(["p", "p", "p"] + (["s", "l", "m"] if depth < 3 else [])))
    if kind == "p":
        return draw(PRIMITIVES)
    if kind == "l":
        eid = next_id()
        return ListType(eid, draw(types_with_ids(counter, depth + 1)), draw(st.booleans()))
    if kind == "m":
        kid, vid = next_id(), next_id()
        return MapType(kid, draw(PRIMITIVES), vid, draw(types_with_ids(counter, depth + 1)),
                       draw(st.booleans()))
    return StructType(*draw(struct_fields(counter, depth + 1)))


@st.composite
def struct_fields(draw: st.DrawFn, counter: list[int], depth: int = 0) -> list[NestedField]:
    names = draw(st.lists(NAMES, unique=True, max_size=4))
    out = []
    for name in names:
        counter[0] += 1
        fid = counter[0]
        out.append(NestedField(fid, name, draw(types_with_ids(counter, depth)),
                               draw(st.booleans()), draw(st.none() | st.text(max_size=5))))
    return out


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    counter = [0]
    fields = draw(struct_fields(counter))
    return Schema(*fields, schema_id=draw(st.integers(0, 100)))


@settings(max_examples=200)
@given(schemas())
def test_schema_json_round_trip(schema: Schema) -> None:
    assert schema_from_json(schema_to_json(schema)) == schema


@given(schemas())
def test_every_field_is_found_by_its_full_name(schema: Schema) -> None:
    for fid in schema.field_ids():
        name = schema.column_name(fid)
        assert name is not None
        assert schema.find_field(name).field_id == fid


@given(st.recursive(st.none() | st.integers() | st.text(max_size=4) | st.booleans(),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(
                        st.sampled_from(["type", "fields", "id", "name", "element", "key-id"]),
                        c, max_size=4), max_leaves=12))
def test_garbage_type_json_raises_only_iceberg_errors(doc: Any) -> None:
    with contextlib.suppress(IcebergError):
        type_to_json(type_from_json(doc))
