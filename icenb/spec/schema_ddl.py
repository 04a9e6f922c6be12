"""Schemas written as a small DDL: ``"id long not null, ts timestamptz, name string"``.

Each column is ``name type [not null | null] [comment 'text']``; types are Iceberg's type
strings (spec: Appendix C: ``decimal(9,2)``, ``fixed[16]``, ``timestamp_ns``, ...) plus
``struct<name: type, ...>``, ``list<type>`` and ``map<type, type>`` (nested fields may be
``not null`` too), and the aliases ``integer``, ``bigint``, ``bool``, ``array<...>``. Names may be
quoted with backticks. Field ids are assigned in order, as a new table's are (spec: "Schemas").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from icenb.errors import ValidationError
from icenb.reprs import safe_repr
from icenb.spec.schema import Schema
from icenb.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
    parse_type_string,
)

__all__ = ["parse_schema"]

_TOKEN_RE = re.compile(r"""\s*(?:
    (?P<quoted>`(?:[^`]|``)*`)
  | (?P<string>'(?:[^']|'')*')
  | (?P<number>-?\d+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_.$]*)
  | (?P<punct>[<>(),:\[\]])
)""", re.VERBOSE)

_ALIASES = {"integer": "int", "bigint": "long", "bool": "boolean", "array": "list"}


@safe_repr
@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    pos: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if m is None or m.end() == pos:
            raise ValidationError(f"unexpected character at position {pos}", field="schema",
                                  value=text)
        kind = m.lastgroup or "punct"
        out.append(_Token(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


class _SchemaParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.next_id = 0

    def error(self, message: str) -> ValidationError:
        where = self.toks[self.i].pos if self.i < len(self.toks) else len(self.text)
        return ValidationError(f"{message} (at position {where})", field="schema",
                               value=self.text)

    def peek(self) -> _Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def at(self, *words: str) -> bool:
        t = self.peek()
        return t is not None and t.kind in ("word", "punct") and t.text.lower() in words

    def take(self) -> _Token:
        t = self.peek()
        if t is None:
            raise self.error("unexpected end of the schema")
        self.i += 1
        return t

    def expect(self, text: str) -> None:
        if not self.at(text):
            raise self.error(f"expected {text!r}")
        self.i += 1

    def fresh_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def name(self) -> str:
        t = self.take()
        if t.kind == "quoted":
            return t.text[1:-1].replace("``", "`")
        if t.kind != "word":
            raise self.error("expected a column name")
        return t.text

    def fields(self, end: str | None) -> list[NestedField]:
        out: list[NestedField] = []
        while True:
            out.append(self.field(nested=end is not None))
            if self.at(","):
                self.i += 1
                continue
            break
        if end is not None:
            self.expect(end)
        elif self.peek() is not None:
            raise self.error("expected ',' or the end")
        names = [f.name for f in out]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ValidationError("duplicate column name", field=dup, value=self.text)
        return out

    def field(self, *, nested: bool) -> NestedField:
        name = self.name()
        if nested and self.at(":"):
            self.i += 1
        fid = self.fresh_id()
        t = self.type()
        required = self.nullability()
        doc = None
        if self.at("comment"):
            self.i += 1
            tok = self.take()
            if tok.kind != "string":
                raise self.error("expected a quoted comment")
            doc = tok.text[1:-1].replace("''", "'")
        return NestedField(fid, name, t, required, doc)

    def nullability(self) -> bool:
        if self.at("not"):
            self.i += 1
            self.expect("null")
            return True
        if self.at("null"):
            self.i += 1
        return False

    def type(self) -> IcebergType:
        t = self.take()
        if t.kind != "word":
            raise self.error("expected a type")
        word = _ALIASES.get(t.text.lower(), t.text.lower())
        if word == "struct":
            self.expect("<")
            return StructType(*self.fields(">"))
        if word == "list":
            self.expect("<")
            element_id = self.fresh_id()
            element = self.type()
            required = self.nullability()
            self.expect(">")
            return ListType(element_id, element, required)
        if word == "map":
            self.expect("<")
            key_id, value_id = self.fresh_id(), self.fresh_id()
            key = self.type()
            self.expect(",")
            value = self.type()
            required = self.nullability()
            self.expect(">")
            return MapType(key_id, key, value_id, value, required)
        text = word
        if self.at("(", "["):  # decimal(p, s), fixed[n], fixed(n), geometry(crs) ...
            close = ")" if self.take().text == "(" else "]"
            args: list[str] = []
            while not self.at(close):
                args.append(self.take().text)
            self.i += 1
            text = (f"fixed[{''.join(args)}]" if word == "fixed"
                    else f"{word}({''.join(args)})")
        return parse_type_string(text, field=text)


def parse_schema(text: str) -> Schema:
    """A schema from a DDL column list (see the module docstring), with provisional ids."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("a schema string needs at least one column", field="schema",
                              value=text)
    return Schema(*_SchemaParser(text).fields(None))
