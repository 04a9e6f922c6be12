"""Reprs of types, fields, schemas, partition specs and sort orders."""

from __future__ import annotations

import gzip
import re

import icenb
from icenb.display import mimebundle, render, reset_options
from icenb.display.schema_repr import sort_order_fragment, spec_fragment
from icenb.spec.partition_spec import PartitionField, PartitionSpec
from icenb.spec.schema import Schema
from icenb.spec.sort_order import NullOrder, SortDirection, SortField, SortOrder
from icenb.spec.table_metadata import table_metadata_from_json
from icenb.spec.transforms import parse_transform
from icenb.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)
from tests.reference_fixtures import JavaTables

EVIL = '<b>&"x"'


def nested_schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), True),
        NestedField(2, EVIL, StringType(), doc="a <doc>"),
        NestedField(3, "point", StructType(
            NestedField(4, "x", DoubleType(), True),
            NestedField(5, "tags", ListType(6, StringType()))), False),
        NestedField(7, "m", MapType(8, StringType(), 9, IntegerType())),
        schema_id=3, identifier_field_ids=[1],
    )


def _cells(html: str) -> list[list[str]]:
    """The text of every table row's cells (tags stripped), in order."""
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [re.sub(r"<[^>]+>", "", c).replace("&#160;", "").strip()
                 for c in re.findall(r"<td>(.*?)</td>", tr)]
        if cells:
            rows.append(cells)
    return rows


def test_schema_text_is_an_indented_tree_with_identifier_and_doc() -> None:
    with reset_options():
        assert repr(nested_schema()).splitlines() == [
            "Schema 3 (identifier: id)",
            " 1  id           long    required  [identifier]",
            ' 2  <b>&"x"      string  optional  -- a <doc>',
            " 3  point        struct  optional",
            " 4    x          double  required",
            " 5    tags       list    optional",
            " 6      element  string  optional",
            " 7  m            map     optional",
            " 8    key        string  required",
            " 9    value      int     optional",
        ]


def test_schema_html_lists_every_nested_field_in_order_and_escapes() -> None:
    with reset_options():
        html = render(nested_schema()).html
    rows = _cells(html)
    assert [r[0] for r in rows] == [str(i) for i in range(1, 10)]
    assert rows[5][1:3] == ["└ element", "string"]
    assert "identifier" in rows[0][3] and "identifier" not in rows[1][3]
    assert "&lt;b&gt;&amp;&quot;x&quot;" in html and EVIL not in html
    assert "a &lt;doc&gt;" in html
    assert "4 columns · 9 fields with nested · identifier: id" in html
    assert render(nested_schema()).html == html  # deterministic


def test_schema_folds_nested_fields_beyond_the_limit() -> None:
    with icenb.set_options(display_max_fields=4):
        r = render(nested_schema())
    assert "… 5 more fields …" in r.html
    ids = [row[0] for row in _cells(r.html) if row and row[0].isdigit()]
    assert ids == ["1", "2", "8", "9"]
    lines = r.text.splitlines()
    assert lines[3].strip() == "… 5 more fields …"
    assert [ln.split()[0] for ln in lines[1:3] + lines[4:]] == ["1", "2", "8", "9"]


def test_v3_defaults_are_shown() -> None:
    s = Schema(NestedField(1, "id", LongType(), True),
               NestedField(2, "n", IntegerType(), False, initial_default=34, write_default=35),
               NestedField(3, "s", StringType(), False, write_default="hi"))
    with reset_options():
        r = render(s)
    assert "initial-default=34, write-default=35" in r.text
    assert "write-default=hi" in r.text
    rows = _cells(r.html)
    assert rows[1][4] == "initial-default=34, write-default=35"


def test_types_and_fields_keep_their_repr_and_render_one_line() -> None:
    assert repr(LongType()) == "LongType()"
    assert render(LongType()).html == "<code>long</code>"
    assert mimebundle(TimestampType())["text/plain"] == "timestamp"
    nested = render(nested_schema().find_field("point"))
    assert [r[0] for r in _cells(nested.html)] == ["3", "4", "5", "6"]
    assert repr(NestedField(1, "id", LongType(), True)).startswith("NestedField(field_id=1")


def _spec() -> PartitionSpec:
    return PartitionSpec(1, (
        PartitionField((1,), 1000, parse_transform("bucket[16]"), "id_bucket"),
        PartitionField((4,), 1001, parse_transform("identity"), "px"),
        PartitionField((42,), 1002, parse_transform("day"), "gone_day"),
    ))


def test_partition_spec_names_sources_only_with_a_schema() -> None:
    with reset_options():
        alone = spec_fragment(_spec())
        named = spec_fragment(_spec(), nested_schema())
    assert [r[1:] for r in _cells(alone.html)] == [
        ["id_bucket", "bucket[16]", "1"], ["px", "identity", "4"], ["gone_day", "day", "42"]]
    assert [r[3] for r in _cells(named.html)] == [
        "id (1)", "point.x (4)", "42 not in schema"]
    assert named.text.splitlines()[0] == "spec 1"
    assert "42 (not in schema)" in named.text
    assert render(_spec()).text == alone.text


def test_unpartitioned_and_void_specs_say_so() -> None:
    assert spec_fragment(PartitionSpec(0)).text == "spec 0: unpartitioned"
    assert "unpartitioned" in spec_fragment(PartitionSpec(0)).html
    void = PartitionSpec(2, (PartitionField((1,), 1000, parse_transform("void"), "id_x"),))
    r = spec_fragment(void, nested_schema())
    assert r.text.startswith("spec 2 (unpartitioned: all fields void)")
    assert "void" in r.html and "unpartitioned" in r.html


def test_partition_fields_fold() -> None:
    fields = [PartitionField((1,), 1000 + i, parse_transform(f"bucket[{i + 2}]"), f"b{i}")
              for i in range(30)]
    spec = PartitionSpec(0, tuple(fields))
    with icenb.set_options(display_max_rows=4):
        r = spec_fragment(spec)
    assert "… 26 more partition fields …" in r.html and "… 26 more partition fields …" in r.text
    assert [row[1] for row in _cells(r.html) if len(row) > 1] == ["b0", "b1", "b28", "b29"]


def test_sort_order_fragment() -> None:
    order = SortOrder(1, (
        SortField((1,), parse_transform("identity"), SortDirection.DESC, NullOrder.NULLS_LAST),
        SortField((4,), parse_transform("bucket[4]")),
    ))
    assert _cells(sort_order_fragment(order).html) == [
        ["identity", "1", "desc", "nulls last"], ["bucket[4]", "4", "asc", "nulls first"]]
    named = sort_order_fragment(order, nested_schema())
    assert [r[1] for r in _cells(named.html)] == ["id (1)", "point.x (4)"]
    assert sort_order_fragment(SortOrder(0)).text == "sort order 0: unsorted"
    assert "unsorted" in render(SortOrder(0)).html
    assert render(order.fields[0]).html == "<code>1 desc nulls last</code>"


def test_java_schemas_render_every_field(java_tables: JavaTables) -> None:
    seen_default = False
    for name in ("db.v2_schema_evolution", "db.java_v3_defaults", "db.v2_all_types",
                 "db.java_v2_special_types"):
        f = java_tables.latest(name)
        data = f.path.read_bytes()
        md = table_metadata_from_json(gzip.decompress(data) if f.gzip else data)
        with icenb.set_options(display_max_fields=10_000):
            r = render(md.schema)
        ids = [row[0] for row in _cells(r.html)]
        assert ids == [str(i) for i in _all_ids(md.schema)]
        assert r.text.splitlines()[0].startswith(f"Schema {md.schema.schema_id}")
        assert r.text.count("[identifier]") == len(md.schema.identifier_field_ids)
        for fid in _all_ids(md.schema):
            f = md.schema.find_field(fid)
            if f.initial_default is not None or f.write_default is not None:
                seen_default = True
                line = next(ln for ln in r.text.splitlines() if ln.split()[0] == str(fid))
                assert "default=" in line
    assert seen_default  # java_v3_defaults has v3 column defaults


def _all_ids(schema: Schema) -> list[int]:
    out: list[int] = []

    def walk(fields: tuple[NestedField, ...]) -> None:
        for f in fields:
            out.append(f.field_id)
            t = f.field_type
            if isinstance(t, (StructType, ListType, MapType)):
                walk(t.fields)

    walk(schema.fields)
    return out
