"""String row filters: a table of filters and the expressions they mean, errors with positions,
and agreement with PyIceberg's parser (``pyiceberg.expressions.parser.parse``) on the strings it
accepts."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from peers import import_peer

from frazil.exceptions import ParseError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Literal,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
    UnboundTransform,
    parse,
)

CASES = [
    ("id > 5", GreaterThan("id", 5)),
    ("id >= 5", GreaterThanOrEqual("id", 5)),
    ("id < 5", LessThan("id", 5)),
    ("id <= 5", LessThanOrEqual("id", 5)),
    ("id = 5", EqualTo("id", 5)),
    ("id == 5", EqualTo("id", 5)),
    ("id != 5", NotEqualTo("id", 5)),
    ("id <> 5", NotEqualTo("id", 5)),
    ("5 < id", GreaterThan("id", 5)),
    ("5 >= id", LessThanOrEqual("id", 5)),
    ("'a' = s", EqualTo("s", "a")),
    ("id = -5", EqualTo("id", -5)),
    ("id = +5", EqualTo("id", 5)),
    ("id = - 5", EqualTo("id", -5)),
    ("x > 1.5", GreaterThan("x", Decimal("1.5"))),
    ("x > -0.25", GreaterThan("x", Decimal("-0.25"))),
    ("x > .5", GreaterThan("x", Decimal(".5"))),
    ("x > 1e3", GreaterThan("x", 1000.0)),
    ("x > -2.5E-3", GreaterThan("x", -0.0025)),
    ("x > 12345678901234567890", GreaterThan("x", 12345678901234567890)),
    ("s = 'it''s'", EqualTo("s", "it's")),
    ("s = 'it\\'s'", EqualTo("s", "it's")),
    ("s = ''", EqualTo("s", "")),
    ("s = 'AND OR'", EqualTo("s", "AND OR")),
    ("b = true", EqualTo("b", True)),
    ("b = FALSE", EqualTo("b", False)),
    ("b = X'01fF'", EqualTo("b", b"\x01\xff")),
    ("ts < '2024-01-01T00:00:00'", LessThan("ts", "2024-01-01T00:00:00")),
    ("x IS NULL", IsNull("x")),
    ("x is not null", NotNull("x")),
    ("x IS NaN", IsNaN("x")),
    ("x IS NOT NAN", NotNaN("x")),
    ("x IN (1, 2, 3)", In("x", [1, 2, 3])),
    ("x in ('a','b')", In("x", ["a", "b"])),
    ("x NOT IN (1, 2)", NotIn("x", [1, 2])),
    ("x IN (1)", EqualTo("x", 1)),
    ("x not in (1)", NotEqualTo("x", 1)),
    ("x IN (1, -2.5, 'a')", In("x", [1, Decimal("-2.5"), "a"])),
    ("s LIKE 'ab%'", StartsWith("s", "ab")),
    ("s like 'ab'", EqualTo("s", "ab")),
    ("s NOT LIKE 'ab%'", NotStartsWith("s", "ab")),
    ("s LIKE 'a\\%b%'", StartsWith("s", "a%b")),
    ("s LIKE 'a_b%'", StartsWith("s", "a_b")),
    ("s LIKE '%'", StartsWith("s", "")),
    ("x BETWEEN 1 AND 5", And(GreaterThanOrEqual("x", 1), LessThanOrEqual("x", 5))),
    ("x NOT BETWEEN 1 AND 5", Not(And(GreaterThanOrEqual("x", 1), LessThanOrEqual("x", 5)))),
    ("a = 1 AND b = 2", And(EqualTo("a", 1), EqualTo("b", 2))),
    ("a = 1 and b = 2 and c = 3", And(EqualTo("a", 1), EqualTo("b", 2), EqualTo("c", 3))),
    ("a = 1 OR b = 2 AND c = 3", Or(EqualTo("a", 1), And(EqualTo("b", 2), EqualTo("c", 3)))),
    ("(a = 1 OR b = 2) AND c = 3", And(Or(EqualTo("a", 1), EqualTo("b", 2)), EqualTo("c", 3))),
    ("NOT a = 1", Not(EqualTo("a", 1))),
    ("not not a = 1", EqualTo("a", 1)),
    ("NOT a = 1 AND b = 2", And(Not(EqualTo("a", 1)), EqualTo("b", 2))),
    ("NOT (a = 1 AND b = 2)", Not(And(EqualTo("a", 1), EqualTo("b", 2)))),
    ("((a = 1))", EqualTo("a", 1)),
    ("true", AlwaysTrue()),
    ("FALSE", AlwaysFalse()),
    ("a = 1 AND true", EqualTo("a", 1)),
    ("a = 1 OR true", AlwaysTrue()),
    ("a.b.c = 1", EqualTo("a.b.c", 1)),
    ("`a b` = 1", EqualTo("a b", 1)),
    ('"a b" = 1', EqualTo("a b", 1)),
    ("`x``y` = 1", EqualTo("x`y", 1)),
    ('"x\\"y" = 1', EqualTo('x"y', 1)),
    ("`in` = 1", EqualTo("in", 1)),
    ("s.`weird.name` = 1", EqualTo("s.weird.name", 1)),
    ("col_1$ = 1", EqualTo("col_1$", 1)),
    ("day = 1", EqualTo("day", 1)),
    ("bucket(16, id) = 3", EqualTo(UnboundTransform("bucket[16]", "id"), 3)),
    ("truncate(4, s) = 'abcd'", EqualTo(UnboundTransform("truncate[4]", "s"), "abcd")),
    ("DAY(ts) >= '2024-01-01'", GreaterThanOrEqual(UnboundTransform("day", "ts"), "2024-01-01")),
    ("year(a.ts) IS NULL", IsNull(UnboundTransform("year", "a.ts"))),
    ("  id\t>\n5  ", GreaterThan("id", 5)),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_parse(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_str_parses_back(text, expected):
    assert parse(str(expected)) == expected


def test_the_issue_example():
    e = parse("id > 5 AND ts < '2024-01-01T00:00:00' AND category IN ('a', 'b')")
    assert e == And(
        GreaterThan("id", 5), LessThan("ts", "2024-01-01T00:00:00"), In("category", ["a", "b"])
    )


def test_number_literal_types():
    assert parse("x = 1").literal == Literal(1, "long")
    assert parse("x = 1.50").literal == Literal(Decimal("1.50"), "decimal(3,2)")
    assert parse("x = 1e0").literal == Literal(1.0, "double")


@pytest.mark.parametrize(
    ("text", "position", "message"),
    [
        ("id >", 4, "expected a literal"),
        ("id > 5 AND", 10, "expected a column name"),
        ("id 5", 3, "expected a comparison"),
        ("id > 5 x", 7, "expected AND, OR"),
        ("(id > 5", 7, "expected ')'"),
        ("id IN ()", 7, "expected a literal"),
        ("id IN (1, )", 10, "expected a literal"),
        ("id IS 5", 6, "expected NULL or NaN"),
        ("id NOT = 5", 7, "expected IN, LIKE or BETWEEN"),
        ("s LIKE '%a'", 7, "only a trailing '%'"),
        ("s LIKE 5", 7, "expected a quoted pattern"),
        ("s = 'open", 4, "unexpected character"),
        ("id > 5 ; drop", 7, "unexpected character"),
        ("id = null", 5, "expected a literal"),
        ("b = X'123'", 4, "even number"),
        ("bucket(x, id) = 1", 7, "integer parameter"),
        ("5 = 6", 4, "expected a column name"),
        ("", 0, "expected a column name"),
    ],
)
def test_errors_name_the_position(text, position, message):
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        parse(text)
    assert info.value.position == position  # type: ignore[attr-defined]
    assert f"position {position}" in str(info.value)


def test_parse_passes_expressions_through_and_refuses_other_types():
    e = EqualTo("a", 1)
    assert parse(e) is e  # type: ignore[arg-type]
    with pytest.raises(ParseError):
        parse(5)  # type: ignore[arg-type]


# -- PyIceberg agreement ---------------------------------------------------------------------

PYICEBERG_STRINGS = [
    "id > 5",
    "id >= -5",
    "5 < id",
    "id = 5 AND s = 'a'",
    "a = 1 OR b = 2 AND c = 3",
    "(a = 1 OR b = 2) AND NOT c = 3",
    "x == 1",
    "x <> 1",
    "x != 'it''s'",
    "x IN (1, 2, 3)",
    "x NOT IN ('a', 'b')",
    "x IN (1)",
    "x IS NULL",
    "x IS NOT NULL",
    "x IS NaN",
    "x is not nan",
    "s LIKE 'abc%'",
    "s NOT LIKE 'abc%'",
    "s LIKE 'abc'",
    "x BETWEEN 1 AND 3",
    "a.b.c = 1",
    '"a b" = 1',
    "b = true",
    "b = FALSE",
    "true",
    "false",
    "x > 1.5",
    "x IN (1.5, 2.25)",
    "ts < '2024-01-01T00:00:00' AND category IN ('a', 'b')",
]


def _from_pyiceberg(e):
    """The frazil expression with the same structure as a PyIceberg expression."""
    import pyiceberg.expressions as pe

    import frazil.expressions as fe

    if isinstance(e, pe.AlwaysTrue):
        return AlwaysTrue()
    if isinstance(e, pe.AlwaysFalse):
        return AlwaysFalse()
    if isinstance(e, (pe.And, pe.Or)):
        cls = And if isinstance(e, pe.And) else Or
        return cls(_from_pyiceberg(e.left), _from_pyiceberg(e.right))
    if isinstance(e, pe.Not):
        return Not(_from_pyiceberg(e.child))
    cls = getattr(fe, type(e).__name__)
    name = e.term.name
    if isinstance(e, pe.UnaryPredicate):
        return cls(name)
    if isinstance(e, pe.SetPredicate):
        return cls(name, [lit.value for lit in e.literals])
    return cls(name, e.literal.value)


@pytest.mark.parametrize("text", PYICEBERG_STRINGS)
def test_same_as_pyiceberg(text):
    pyiceberg_parser = import_peer("pyiceberg.expressions.parser")
    assert parse(text) == _from_pyiceberg(pyiceberg_parser.parse(text))
