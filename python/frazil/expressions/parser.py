"""String row filters, with PyIceberg's grammar (``pyiceberg.expressions.parser``) and a little
more.

::

    filter     := or
    or         := and (OR and)*
    and        := not (AND not)*
    not        := NOT not | '(' filter ')' | TRUE | FALSE | predicate
    predicate  := term CMP literal | literal CMP term
                | term IS [NOT] NULL | term IS [NOT] NAN
                | term [NOT] IN '(' literal (',' literal)* ')'
                | term [NOT] LIKE string          (a trailing % is starts-with; no % is =)
                | term [NOT] BETWEEN literal AND literal
    CMP        := = | == | != | <> | < | <= | > | >=
    term       := column | bucket '(' int ',' column ')' | truncate '(' int ',' column ')'
                | (identity | year | month | day | hour) '(' column ')'
    column     := ident ('.' ident)*
    ident      := [A-Za-z_][A-Za-z0-9_$]* | `back``ticked` | "double \\" quoted"
    literal    := string | number | TRUE | FALSE | X'hex'
    string     := 'single quoted, '' or \\' for a quote'
    number     := [+-] digits: a long; with a point: a decimal; with an exponent: a double

A string filter means the expressions spec's predicates as written, not SQL's: ``s != 'a'`` is
``NotEqualTo("s", "a")``, true for a null ``s`` (the spec's comparisons are null-safe and every
predicate is true or false); ``NOT s = 'a'`` is ``Not(EqualTo("s", "a"))``, the same rows;
``s NOT IN ('a', 'b')`` and ``s NOT LIKE 'a%'`` keep nulls too, while ``s = 'a'``, ``s < 'b'``,
``s IN (...)`` and ``s LIKE 'a%'`` never do. For SQL's meaning write the null test out, as the
spec's "Boolean logic" section says: ``s != 'a' AND s IS NOT NULL``.

Keywords are case-insensitive. In LIKE patterns ``\\%`` is a literal percent sign and ``\\\\`` a
backslash; ``_`` has no special meaning (as in PyIceberg).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from frazil.exceptions import FrazilError, InvalidArgumentError, ParseError
from frazil.expressions.base import AlwaysFalse, AlwaysTrue, And, BooleanExpression, Not, Or
from frazil.expressions.literals import Literal
from frazil.expressions.predicates import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    StartsWith,
)
from frazil.expressions.terms import Reference, UnboundTerm, UnboundTransform

__all__ = ["parse"]

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<hex>[xX]'(?P<hexdigits>[0-9a-fA-F\s]*)')
  | (?P<str>'(?:[^'\\]|''|\\.)*')
  | (?P<bq>`(?:[^`]|``)*`)
  | (?P<dq>"(?:[^"\\]|""|\\.)*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<op><=|>=|<>|!=|==|=|<|>)
  | (?P<punct>[(),.+-])
    """,
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS = {"and", "or", "not", "is", "in", "null", "nan", "like", "between", "true", "false"}
_CMP = {
    "<": LessThan,
    "<=": LessThanOrEqual,
    ">": GreaterThan,
    ">=": GreaterThanOrEqual,
    "=": EqualTo,
    "==": EqualTo,
    "!=": NotEqualTo,
    "<>": NotEqualTo,
}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "==": "=", "!=": "!=", "<>": "!="}
_FUNCTIONS = {"identity", "year", "month", "day", "hour", "bucket", "truncate"}


class _Token:
    __slots__ = ("kind", "pos", "text", "value")

    def __init__(self, kind: str, text: str, pos: int, value: Any = None) -> None:
        self.kind, self.text, self.pos, self.value = kind, text, pos, value

    def is_kw(self, *words: str) -> bool:
        return self.kind == "kw" and self.value in words


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _error(text, pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind == "hexdigits":
            kind = "hex"
        raw = m.group()
        if kind == "ident":
            lower = raw.lower()
            if lower in _KEYWORDS:
                tokens.append(_Token("kw", raw, pos, lower))
            else:
                tokens.append(_Token("ident", raw, pos, raw))
        elif kind == "bq":
            tokens.append(_Token("ident", raw, pos, raw[1:-1].replace("``", "`")))
        elif kind == "dq":
            inner = raw[1:-1].replace('""', '"')
            tokens.append(_Token("ident", raw, pos, re.sub(r'\\(["\\])', r"\1", inner)))
        elif kind == "str":
            inner = raw[1:-1].replace("''", "'").replace("\\'", "'")
            tokens.append(_Token("str", raw, pos, inner))
        elif kind == "hex":
            digits = re.sub(r"\s", "", m.group("hexdigits"))
            if len(digits) % 2:
                raise _error(text, pos, "a hex literal needs an even number of digits")
            tokens.append(_Token("hex", raw, pos, bytes.fromhex(digits)))
        elif kind != "ws":
            tokens.append(_Token(kind or "", raw, pos, raw))
        pos = m.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


def _error(text: str, pos: int, why: str) -> ParseError:
    pointer = " " * pos + "^"
    err = ParseError(f"cannot parse row filter at position {pos}: {why}\n  {text}\n  {pointer}")
    err.position = pos  # type: ignore[attr-defined]
    return err


class _Group:
    """The filter being read at one level of parentheses: the disjunction's finished
    conjunctions, the conjunction being read, and the NOTs before the next operand."""

    __slots__ = ("ands", "nots", "ors")

    def __init__(self) -> None:
        self.ors: list[BooleanExpression] = []
        self.ands: list[BooleanExpression] = []
        self.nots = 0

    def add(self, operand: BooleanExpression) -> None:
        # NOT NOT x is x (as Not(Not(x)) builds).
        self.ands.append(Not(operand) if self.nots % 2 else operand)
        self.nots = 0

    def end_conjunction(self) -> None:
        self.ors.append(self.ands[0] if len(self.ands) == 1 else And(*self.ands))
        self.ands = []

    def close(self) -> BooleanExpression:
        self.end_conjunction()
        return self.ors[0] if len(self.ors) == 1 else Or(*self.ors)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def peek(self, n: int = 1) -> _Token:
        return self.tokens[min(self.i + n, len(self.tokens) - 1)]

    def next(self) -> _Token:
        t = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return t

    def error(self, why: str, tok: _Token | None = None) -> ParseError:
        t = tok or self.tok
        found = "the end of the filter" if t.kind == "end" else repr(t.text)
        return _error(self.text, t.pos, f"{why}, found {found}")

    def expect_punct(self, p: str) -> None:
        if not (self.tok.kind == "punct" and self.tok.text == p):
            raise self.error(f"expected {p!r}")
        self.next()

    def parse(self) -> BooleanExpression:
        """The boolean layer (``or``/``and``/``not``/parentheses) with a heap stack instead of
        recursive descent, so any nesting parses; each run of ``a OR b OR c`` (and of ``AND``)
        becomes a balanced tree (``Or(*items)``)."""
        outer: list[_Group] = []
        group = _Group()
        while True:
            # an operand: NOT*, then '(' (a new group), a constant or a predicate
            t = self.tok
            if t.is_kw("not"):
                self.next()
                group.nots += 1
                continue
            if t.kind == "punct" and t.text == "(":
                self.next()
                outer.append(group)
                group = _Group()
                continue
            if t.is_kw("true", "false") and self.peek().kind != "op":
                self.next()
                operand: BooleanExpression = AlwaysTrue() if t.value == "true" else AlwaysFalse()
            else:
                operand = self.predicate()
            # after an operand: AND, OR, ')' closing groups, or the end
            while True:
                group.add(operand)
                t = self.tok
                if t.is_kw("and"):
                    self.next()
                    break
                if t.is_kw("or"):
                    self.next()
                    group.end_conjunction()
                    break
                if not outer:
                    if t.kind != "end":
                        raise self.error("expected AND, OR or the end of the filter")
                    return group.close()
                self.expect_punct(")")
                operand = group.close()
                group = outer.pop()

    def predicate(self) -> BooleanExpression:
        start = self.tok
        if self.starts_literal():
            lit = self.literal()
            op = self.tok
            if op.kind != "op":
                raise self.error("expected a comparison operator after a literal")
            self.next()
            term = self.term()
            return self.build(start, _CMP[_FLIP[op.text]], term, lit)
        term = self.term()
        t = self.tok
        if t.kind == "op":
            self.next()
            return self.build(start, _CMP[t.text], term, self.literal())
        if t.is_kw("is"):
            self.next()
            negated = False
            if self.tok.is_kw("not"):
                self.next()
                negated = True
            if self.tok.is_kw("null"):
                self.next()
                return NotNull(term) if negated else IsNull(term)
            if self.tok.is_kw("nan"):
                self.next()
                return NotNaN(term) if negated else IsNaN(term)
            raise self.error("expected NULL or NaN after IS")
        negated = False
        if t.is_kw("not"):
            self.next()
            negated = True
            if not self.tok.is_kw("in", "like", "between"):
                raise self.error("expected IN, LIKE or BETWEEN after NOT")
        if self.tok.is_kw("in"):
            self.next()
            self.expect_punct("(")
            lits = [self.literal()]
            while self.tok.kind == "punct" and self.tok.text == ",":
                self.next()
                lits.append(self.literal())
            self.expect_punct(")")
            return self.build(start, NotIn if negated else In, term, lits)
        if self.tok.is_kw("like"):
            self.next()
            pattern = self.tok
            if pattern.kind != "str":
                raise self.error("expected a quoted pattern after LIKE")
            self.next()
            e = self.like(term, pattern)
            return e.negate() if negated else e
        if self.tok.is_kw("between"):
            self.next()
            low = self.literal()
            if not self.tok.is_kw("and"):
                raise self.error("expected AND in BETWEEN")
            self.next()
            high = self.literal()
            e = And(
                self.build(start, GreaterThanOrEqual, term, low),
                self.build(start, LessThanOrEqual, term, high),
            )
            return Not(e) if negated else e
        raise self.error("expected a comparison, IS, IN, LIKE or BETWEEN")

    def build(self, start: _Token, cls: Any, term: UnboundTerm, lits: Any) -> BooleanExpression:
        try:
            out: BooleanExpression = cls(term, lits)
        except FrazilError as e:
            raise _error(self.text, start.pos, str(e)) from None
        return out

    def like(self, term: UnboundTerm, pattern: _Token) -> BooleanExpression:
        out, wildcard, i, s = [], False, 0, pattern.value
        while i < len(s):
            c = s[i]
            if c == "\\" and i + 1 < len(s) and s[i + 1] in "%\\":
                out.append(s[i + 1])
                i += 2
                continue
            if c == "%":
                if i != len(s) - 1:
                    raise _error(
                        self.text, pattern.pos, "LIKE supports only a trailing '%' wildcard"
                    )
                wildcard = True
            else:
                out.append(c)
            i += 1
        prefix = "".join(out)
        return StartsWith(term, prefix) if wildcard else EqualTo(term, prefix)

    def starts_literal(self) -> bool:
        t = self.tok
        if t.kind in ("num", "str", "hex") or t.is_kw("true", "false"):
            return True
        return t.kind == "punct" and t.text in "+-" and self.peek().kind == "num"

    def literal(self) -> Literal:
        t = self.next()
        if t.kind == "str":
            return Literal(t.value)
        if t.kind == "hex":
            return Literal(t.value)
        if t.is_kw("true", "false"):
            return Literal(t.value == "true")
        sign = ""
        if t.kind == "punct" and t.text in "+-" and self.tok.kind == "num":
            sign = t.text
            t = self.next()
        if t.kind == "num":
            text = sign + t.text
            if "e" in text or "E" in text:
                return Literal(float(text))
            if "." in text:
                return Literal(Decimal(text))
            return Literal(int(text))
        raise self.error("expected a literal (a number, 'string', true, false or X'hex')", t)

    def ident(self) -> str:
        t = self.tok
        if t.kind != "ident":
            raise self.error("expected a column name")
        self.next()
        name: str = t.value
        return name

    def column(self) -> Reference:
        parts = [self.ident()]
        while self.tok.kind == "punct" and self.tok.text == ".":
            self.next()
            parts.append(self.ident())
        return Reference(".".join(parts))

    def term(self) -> UnboundTerm:
        t = self.tok
        is_call = self.peek().kind == "punct" and self.peek().text == "("
        if (
            t.kind == "ident"
            and t.value.lower() in _FUNCTIONS
            and is_call
            and t.text[0] not in '`"'
        ):
            name = t.value.lower()
            self.next()
            self.next()
            spec = name
            if name in ("bucket", "truncate"):
                n = self.tok
                if n.kind != "num" or not n.text.isdigit():
                    raise self.error(f"expected the integer parameter of {name}")
                self.next()
                self.expect_punct(",")
                spec = f"{name}[{n.text}]"
            col = self.column()
            self.expect_punct(")")
            try:
                return UnboundTransform(spec, col)
            except FrazilError as e:
                raise _error(self.text, t.pos, str(e)) from None
        return self.column()


def parse(text: str) -> BooleanExpression:
    """Parses a row filter such as ``"id > 5 AND ts < '2024-01-01T00:00:00'"`` into an unbound
    expression; raises :class:`~frazil.exceptions.ParseError` naming the position."""
    if isinstance(text, BooleanExpression):
        return text
    if not isinstance(text, str):
        raise ParseError(f"a row filter must be a string, got {type(text).__name__}")
    return _Parser(text).parse()


def as_filter(row_filter: str | BooleanExpression | None) -> BooleanExpression:
    """A row filter as an operation takes it: text (parsed), an expression, or ``None`` for every
    row; anything else raises :class:`~frazil.exceptions.InvalidArgumentError`."""
    if row_filter is None:
        return AlwaysTrue()
    if isinstance(row_filter, str):
        return parse(row_filter)
    if not isinstance(row_filter, BooleanExpression):
        raise InvalidArgumentError(f"expected a filter string or expression, got {row_filter!r}")
    return row_filter
