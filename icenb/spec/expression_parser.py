"""Parse the row filters people type (``"id = 5 and ts >= '2024-01-01'"``) into expressions.

The grammar is a small SQL ``WHERE`` dialect; keywords are case-insensitive and ``NOT`` binds
tighter than ``AND``, which binds tighter than ``OR``::

    expr       := or_expr
    or_expr    := and_expr (OR and_expr)*
    and_expr   := not_expr (AND not_expr)*
    not_expr   := NOT not_expr | '(' expr ')' | TRUE | FALSE | predicate
    predicate  := operand cmp operand                  -- cmp: = == != <> < <= > >=
                | column [NOT] IN '(' literal, ... ')'
                | column [NOT] BETWEEN literal AND literal
                | column [NOT] LIKE 'prefix%'           -- prefix patterns only
                | column IS [NOT] NULL | column IS [NOT] NAN
                | starts_with(column, 'p') | not_starts_with(column, 'p')
                | is_nan(column) | not_nan(column) | is_null(column) | not_null(column)
                | column                                -- a boolean column: column = true
    column     := name ('.' name)*                      -- name: identifier or `back quoted`
    literal    := [-|+] number | 'string' | TRUE | FALSE | X'hex'
                | DATE 'yyyy-mm-dd' | TIME '...' | TIMESTAMP '...' | TIMESTAMPTZ '...'
                | UUID '...'

Numbers without a point are ``int``, with a point ``Decimal``, with an exponent ``float``.
A literal may be on either side of a comparison (``5 < id`` is ``id > 5``). Errors raise
:class:`~icenb.errors.ExpressionParseError` with the position and the offending token.
"""

from __future__ import annotations

import datetime as _dt
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icenb.errors import ExpressionParseError, ValidationError
from icenb.reprs import safe_repr
from icenb.spec.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    EqualTo,
    Expression,
    Not,
    Operation,
    Or,
    Reference,
    predicate,
)

__all__ = ["parse"]

_CMP_OPS = {
    "=": Operation.EQ,
    "==": Operation.EQ,
    "!=": Operation.NOT_EQ,
    "<>": Operation.NOT_EQ,
    "<": Operation.LT,
    "<=": Operation.LT_EQ,
    ">": Operation.GT,
    ">=": Operation.GT_EQ,
}
_RESERVED = {"and", "or", "not", "in", "is", "null", "true", "false", "like", "between"}
_TYPED_LITERALS = {"date", "time", "timestamp", "timestamptz", "timestamp_ntz", "timestamp_ltz",
                   "uuid"}
_FUNCTIONS = {
    "starts_with": Operation.STARTS_WITH,
    "startswith": Operation.STARTS_WITH,
    "not_starts_with": Operation.NOT_STARTS_WITH,
    "is_nan": Operation.IS_NAN,
    "isnan": Operation.IS_NAN,
    "not_nan": Operation.NOT_NAN,
    "is_null": Operation.IS_NULL,
    "isnull": Operation.IS_NULL,
    "not_null": Operation.NOT_NULL,
    "is_not_null": Operation.NOT_NULL,
    "isnotnull": Operation.NOT_NULL,
}
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_OPERATOR = re.compile(r"==|!=|<>|<=|>=|=|<|>")


@safe_repr
@dataclass(frozen=True)
class _Token:
    kind: str  # name, qname, string, number, hex, op, '(', ')', ',', '.', '-', '+', eof
    text: str
    pos: int
    value: Any = None

    @property
    def word(self) -> str | None:
        """The lower-cased keyword spelled by an unquoted name token."""
        return self.text.lower() if self.kind == "name" else None


def parse(text: str) -> Expression:
    """Parse a filter string into an unbound expression (see the module docstring)."""
    if not isinstance(text, str):
        raise ExpressionParseError("a filter must be a string", value=text)
    parser = _Parser(text, _tokenize(text))
    if parser.peek().kind == "eof":
        raise ExpressionParseError("empty filter expression", field=text, value=text)
    expr = parser.parse_or()
    tok = parser.peek()
    if tok.kind != "eof":
        parser.fail(tok, "unexpected token after the end of the expression")
    return expr


# --------------------------------------------------------------------------- tokenizer


def _fail(text: str, pos: int, token: str, message: str) -> ExpressionParseError:
    err = ExpressionParseError(f"{message} at position {pos}", field=text, value=token)
    err.position = pos  # type: ignore[attr-defined]
    return err


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        start = i
        if c in "xX" and i + 1 < n and text[i + 1] == "'":
            body, i = _read_quoted(text, i + 1, "'")
            try:
                value = bytes.fromhex(body)
            except ValueError:
                raise _fail(text, start, text[start:i], "invalid hex in binary literal") from None
            tokens.append(_Token("hex", text[start:i], start, value))
        elif c.isalpha() or c == "_":
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            tokens.append(_Token("name", text[start:i], start))
        elif c == "`":
            body, i = _read_quoted(text, i, "`")
            if not body:
                raise _fail(text, start, text[start:i], "empty quoted column name")
            tokens.append(_Token("qname", text[start:i], start, body))
        elif c == "'":
            body, i = _read_quoted(text, i, "'")
            tokens.append(_Token("string", text[start:i], start, body))
        elif c == '"':
            raise _fail(text, start, c, "use single quotes for strings and backticks for names")
        elif c.isdigit() or (
            c == "." and i + 1 < n and text[i + 1].isdigit()
            and not (tokens and tokens[-1].kind in ("name", "qname", ")"))
        ):
            m = _NUMBER.match(text, i)
            assert m is not None
            i = m.end()
            if i < n and (text[i].isalpha() or text[i] == "_"):
                raise _fail(text, start, text[start:i + 1], "invalid number")
            tokens.append(_Token("number", m.group(0), start, _number(m.group(0))))
        else:
            m = _OPERATOR.match(text, i)
            if m:
                i = m.end()
                tokens.append(_Token("op", m.group(0), start))
            elif c in "(),.-+":
                i += 1
                tokens.append(_Token(c, c, start))
            else:
                raise _fail(text, start, c, f"unexpected character {c!r}")
    tokens.append(_Token("eof", "", n))
    return tokens


def _read_quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """Read a quoted run starting at the quote at ``i``; a doubled quote escapes itself."""
    start = i
    i += 1
    out: list[str] = []
    while True:
        j = text.find(quote, i)
        if j < 0:
            what = "string" if quote == "'" else "quoted name"
            raise _fail(text, start, text[start:start + 20], f"unterminated {what}")
        out.append(text[i:j])
        if j + 1 < len(text) and text[j + 1] == quote:
            out.append(quote)
            i = j + 2
            continue
        return "".join(out), j + 1


def _number(text: str) -> int | Decimal | float:
    if "e" in text or "E" in text:
        return float(text)
    if "." in text:
        return Decimal(text)
    return int(text)


# --------------------------------------------------------------------------- parser


@safe_repr
@dataclass
class _Column:
    name: str
    token: _Token


@safe_repr
@dataclass
class _Literal:
    value: Any
    token: _Token


class _Parser:
    def __init__(self, text: str, tokens: list[_Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0

    # -- helpers -------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def fail(self, tok: _Token, message: str) -> None:
        shown = tok.text if tok.kind != "eof" else "<end of input>"
        raise _fail(self.text, tok.pos, shown, message)

    def accept_word(self, word: str) -> bool:
        if self.peek().word == word:
            self.i += 1
            return True
        return False

    def expect_word(self, word: str) -> None:
        if not self.accept_word(word):
            self.fail(self.peek(), f"expected {word.upper()}")

    def expect(self, kind: str) -> _Token:
        tok = self.peek()
        if tok.kind != kind:
            self.fail(tok, f"expected {kind!r}")
        return self.next()

    # -- boolean structure ---------------------------------------------------------
    def parse_or(self) -> Expression:
        expr = self.parse_and()
        while self.accept_word("or"):
            expr = Or(expr, self.parse_and())
        return expr

    def parse_and(self) -> Expression:
        expr = self.parse_not()
        while self.accept_word("and"):
            expr = And(expr, self.parse_not())
        return expr

    def parse_not(self) -> Expression:
        if self.accept_word("not"):
            return Not(self.parse_not())
        tok = self.peek()
        if tok.kind == "(":
            self.next()
            expr = self.parse_or()
            self.expect(")")
            return expr
        if tok.word in ("true", "false") and not self._comparison_follows(1):
            self.next()
            return ALWAYS_TRUE if tok.word == "true" else ALWAYS_FALSE
        if tok.kind == "name" and self.peek(1).kind == "(" and tok.word not in _RESERVED:
            return self.parse_function()
        return self.parse_predicate()

    def _comparison_follows(self, ahead: int) -> bool:
        return self.peek(ahead).kind == "op"

    # -- predicates ----------------------------------------------------------------
    def parse_function(self) -> Expression:
        name_tok = self.next()
        op = _FUNCTIONS.get(name_tok.text.lower())
        if op is None:
            self.fail(name_tok, f"unknown function {name_tok.text!r}; known: "
                      + ", ".join(sorted(set(_FUNCTIONS))))
        assert op is not None
        self.expect("(")
        column = self.parse_column()
        if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
            self.expect(",")
            lit = self.parse_literal()
            if not isinstance(lit.value, str):
                self.fail(lit.token, f"{name_tok.text} needs a string prefix")
            self.expect(")")
            return self._build(lit.token, op, column.name, lit.value)
        self.expect(")")
        return self._build(name_tok, op, column.name)

    def parse_predicate(self) -> Expression:
        left = self.parse_operand()
        tok = self.peek()
        if tok.kind == "op":
            self.next()
            right = self.parse_operand()
            return self._comparison(left, tok, right)
        if isinstance(left, _Literal):
            self.fail(tok, "expected a comparison operator after the literal")
        assert isinstance(left, _Column)
        negated = False
        if tok.word == "not" and self.peek(1).word in ("in", "like", "between"):
            self.next()
            negated = True
            tok = self.peek()
        word = tok.word
        if word == "is":
            self.next()
            is_not = self.accept_word("not")
            what = self.next()
            if what.word == "null":
                op = Operation.NOT_NULL if is_not else Operation.IS_NULL
            elif what.word == "nan":
                op = Operation.NOT_NAN if is_not else Operation.IS_NAN
            else:
                self.fail(what, "expected NULL or NAN after IS")
            return self._build(tok, op, left.name)
        if word == "in":
            self.next()
            values = self.parse_literal_list()
            return self._build(tok, Operation.NOT_IN if negated else Operation.IN, left.name,
                               *values)
        if word == "between":
            self.next()
            low = self.parse_literal()
            self.expect_word("and")
            high = self.parse_literal()
            for lit in (low, high):
                self._check_not_null(lit, "between")
            if negated:
                return Or(self._build(low.token, Operation.LT, left.name, low.value),
                          self._build(high.token, Operation.GT, left.name, high.value))
            return And(self._build(low.token, Operation.GT_EQ, left.name, low.value),
                       self._build(high.token, Operation.LT_EQ, left.name, high.value))
        if word == "like":
            self.next()
            pattern = self.parse_literal()
            if not isinstance(pattern.value, str):
                self.fail(pattern.token, "LIKE needs a string pattern")
            return self._like(left, pattern, negated)
        if tok.kind in ("eof", ")") or tok.word in ("and", "or"):
            # a bare boolean column
            return EqualTo(Reference(left.name), True)
        self.fail(tok, "expected a comparison, IN, IS, LIKE or BETWEEN")
        raise AssertionError("unreachable")  # pragma: no cover

    def _comparison(self, left: _Column | _Literal, op_tok: _Token,
                    right: _Column | _Literal) -> Expression:
        op = _CMP_OPS[op_tok.text]
        if isinstance(left, _Column) and isinstance(right, _Column):
            self.fail(op_tok, "comparing two columns is not supported; compare a column "
                      "with a literal")
        if isinstance(left, _Literal) and isinstance(right, _Literal):
            self.fail(op_tok, "a comparison needs a column on one side")
        if isinstance(left, _Literal):
            left, right, op = right, left, op.flip()
        assert isinstance(left, _Column) and isinstance(right, _Literal)
        if right.value is None:
            hint = "IS NOT NULL" if op == Operation.NOT_EQ else "IS NULL"
            self.fail(right.token, f"comparing with NULL never matches; use '{left.name} "
                      f"{hint}'")
        return self._build(op_tok, op, left.name, right.value)

    def _like(self, column: _Column, pattern: _Literal, negated: bool) -> Expression:
        text: str = pattern.value
        prefix: list[str] = []
        i = 0
        wildcard_at = -1
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                prefix.append(text[i + 1])
                i += 2
                continue
            if c in "%_":
                wildcard_at = i
                break
            prefix.append(c)
            i += 1
        literal = "".join(prefix)
        if wildcard_at < 0:
            op = Operation.NOT_EQ if negated else Operation.EQ
            return self._build(pattern.token, op, column.name, literal)
        if text[wildcard_at] == "%" and wildcard_at == len(text) - 1:
            op = Operation.NOT_STARTS_WITH if negated else Operation.STARTS_WITH
            return self._build(pattern.token, op, column.name, literal)
        self.fail(pattern.token, "only prefix patterns ('abc%') are supported by LIKE")
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_not_null(self, lit: _Literal, where: str) -> None:
        if lit.value is None:
            self.fail(lit.token, f"NULL is not allowed in {where}; use IS NULL")

    def _build(self, tok: _Token, op: Operation, name: str, *values: Any) -> Expression:
        try:
            return predicate(op, Reference(name), *values)
        except ValidationError as e:
            self.fail(tok, e.message)
            raise AssertionError("unreachable") from None  # pragma: no cover

    # -- operands ------------------------------------------------------------------
    def parse_operand(self) -> _Column | _Literal:
        tok = self.peek()
        if tok.kind == "qname" or (
            tok.kind == "name" and tok.word not in _RESERVED and not self._typed_literal_here()
        ):
            return self.parse_column()
        return self.parse_literal()

    def _typed_literal_here(self) -> bool:
        tok = self.peek()
        return tok.word in _TYPED_LITERALS and self.peek(1).kind == "string"

    def parse_column(self) -> _Column:
        first = self.peek()
        parts = [self._name_part()]
        while self.peek().kind == ".":
            self.next()
            parts.append(self._name_part())
        return _Column(".".join(parts), first)

    def _name_part(self) -> str:
        tok = self.peek()
        if tok.kind == "qname":
            self.next()
            return str(tok.value)
        if tok.kind == "name":
            if tok.word in _RESERVED:
                self.fail(tok, f"{tok.text!r} is a keyword; quote the column name as "
                          f"`{tok.text}`")
            self.next()
            return tok.text
        self.fail(tok, "expected a column name")
        raise AssertionError("unreachable")  # pragma: no cover

    def parse_literal_list(self) -> list[Any]:
        self.expect("(")
        values: list[Any] = []
        if self.peek().kind == ")":
            self.next()
            return values
        while True:
            lit = self.parse_literal()
            self._check_not_null(lit, "IN lists")
            values.append(lit.value)
            if self.peek().kind == ",":
                self.next()
                continue
            self.expect(")")
            return values

    def parse_literal(self) -> _Literal:
        tok = self.next()
        if tok.kind in ("-", "+"):
            num = self.peek()
            if num.kind != "number":
                self.fail(num, f"expected a number after {tok.text!r}")
            self.next()
            value = num.value
            if tok.kind == "-":
                value = value.copy_negate() if isinstance(value, Decimal) else -value
            return _Literal(value, tok)
        if tok.kind in ("number", "string", "hex"):
            return _Literal(tok.value, tok)
        word = tok.word
        if word in ("true", "false"):
            return _Literal(word == "true", tok)
        if word == "null":
            return _Literal(None, tok)
        if word in _TYPED_LITERALS and self.peek().kind == "string":
            body = self.next()
            return _Literal(self._typed(word, body), tok)
        self.fail(tok, "expected a literal value")
        raise AssertionError("unreachable")  # pragma: no cover

    def _typed(self, kind: str, tok: _Token) -> Any:
        text = str(tok.value).strip()
        try:
            if kind == "date":
                return _dt.date.fromisoformat(text)
            if kind == "time":
                return _dt.time.fromisoformat(_normalize_fraction(text))
            if kind == "uuid":
                return uuid.UUID(text)
            normalized = _normalize_fraction(text.replace("Z", "+00:00").replace("z", "+00:00"))
            if normalized is None:
                return text  # sub-microsecond precision: kept as text for the column's type
            value = _dt.datetime.fromisoformat(normalized)
            if kind == "timestamptz" and value.tzinfo is None:
                value = value.replace(tzinfo=_dt.timezone.utc)
            if kind in ("timestamp", "timestamp_ntz") and value.tzinfo is not None:
                self.fail(tok, "a timestamp literal has no zone; use timestamptz '...'")
            return value
        except (ValueError, TypeError):
            self.fail(tok, f"invalid {kind} literal")
        raise AssertionError("unreachable")  # pragma: no cover


_FRACTION = re.compile(r"(\d{2}:\d{2}:\d{2})\.(\d+)")


def _normalize_fraction(text: str) -> Any:
    """Pad or check the fraction of seconds to 6 digits (Python 3.10 reads only 3 or 6)."""
    m = _FRACTION.search(text)
    if not m:
        return text
    digits = m.group(2)
    if len(digits) > 6:
        if digits[6:].strip("0"):
            return None
        digits = digits[:6]
    return text[: m.start(2)] + digits.ljust(6, "0") + text[m.end(2):]
