"""Expression construction: PyIceberg's names and constructor shapes, the simplifications PyIceberg
and Java apply on construction, negation, operators, equality, repr and pickling."""

from __future__ import annotations

import datetime as dt
import pickle
import uuid
from decimal import Decimal

import pytest

import frazil.expressions as fe
from frazil.exceptions import InvalidArgumentError
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
    Reference,
    StartsWith,
    UnboundTransform,
    literal,
)
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

A = EqualTo("a", 1)
B = LessThan("b", 2)
C = IsNull("c")


def test_terms_are_names_or_references():
    assert EqualTo("x", 5) == EqualTo(Reference("x"), 5) == EqualTo("x", literal(5))
    assert EqualTo("x", 5).term == Reference("x")
    assert EqualTo("x", 5).literal == Literal(5, LongType())
    t = UnboundTransform("bucket[16]", "id")
    assert EqualTo(t, 3).term.ref == Reference("id")
    with pytest.raises(InvalidArgumentError):
        EqualTo(5, 5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        Reference("")


@pytest.mark.parametrize(
    ("value", "type"),
    [
        (True, BooleanType()),
        (5, LongType()),
        (2**70, LongType()),  # out of range: binding folds it to true/false
        (1.5, DoubleType()),
        ("s", StringType()),
        (Decimal("1.50"), DecimalType(3, 2)),
        (Decimal("-0.001"), DecimalType(3, 3)),
        (Decimal("1E+2"), DecimalType(3, 0)),
        (dt.date(2024, 1, 2), DateType()),
        (dt.time(1, 2, 3), TimeType()),
        (dt.datetime(2024, 1, 2, 3), TimestampType()),
        (dt.datetime(2024, 1, 2, 3, tzinfo=dt.timezone.utc), TimestamptzType()),
        (uuid.UUID(int=7), UUIDType()),
        (b"\x01", BinaryType()),
    ],
)
def test_literal_types_are_inferred(value, type):
    assert literal(value).type == type


@pytest.mark.parametrize("bad", [None, float("nan"), Decimal("NaN"), object(), [1]])
def test_null_nan_and_odd_literals_are_refused(bad):
    with pytest.raises(InvalidArgumentError):
        EqualTo("x", bad)


def test_literal_equality_distinguishes_types():
    assert Literal(1, "int") != Literal(1, "long")
    assert literal(1) != literal(True)
    assert literal(1) != literal(1.0)
    assert Literal(Decimal("1.5"), "decimal(9,2)").value == Decimal("1.50")
    with pytest.raises(InvalidArgumentError, match="digits after the point"):
        Literal(Decimal("1.234"), "decimal(9,2)")
    with pytest.raises(InvalidArgumentError):
        Literal(2**40, "int")


def test_and_or_not_simplify_as_pyiceberg_and_java():
    assert And(A, AlwaysFalse()) is AlwaysFalse()
    assert And(AlwaysFalse(), A) is AlwaysFalse()
    assert And(AlwaysTrue(), A) == A
    assert And(A, AlwaysTrue()) == A
    assert Or(A, AlwaysTrue()) is AlwaysTrue()
    assert Or(AlwaysFalse(), A) == A
    assert Or(A, AlwaysFalse()) == A
    assert Not(AlwaysTrue()) is AlwaysFalse()
    assert Not(AlwaysFalse()) is AlwaysTrue()
    assert Not(Not(A)) == A
    assert isinstance(Not(A), Not)
    assert AlwaysTrue() is AlwaysTrue()


def test_n_ary_and_or_are_balanced():
    assert And(A, B, C) == And(A, And(B, C))
    assert Or(A, B, C) == Or(A, Or(B, C))
    many = And(*[EqualTo("x", i) for i in range(4096)])
    depth, e = 0, many
    while isinstance(e, And):
        depth, e = depth + 1, e.left
    assert depth == 12


def test_set_predicates_simplify():
    assert In("x", []) is AlwaysFalse()
    assert NotIn("x", []) is AlwaysTrue()
    assert In("x", [1]) == EqualTo("x", 1)
    assert NotIn("x", [1, 1]) == NotEqualTo("x", 1)
    assert In("x", [1, 2, 2]).literals == (literal(1), literal(2))
    assert In("x", [1, 2]) == In("x", (2, 1))
    assert In("x", {1, 2}).values == {1, 2}
    with pytest.raises(InvalidArgumentError):
        In("x", "ab")


@pytest.mark.parametrize(
    ("expr", "negated"),
    [
        (LessThan("x", 1), GreaterThanOrEqual("x", 1)),
        (LessThanOrEqual("x", 1), GreaterThan("x", 1)),
        (EqualTo("x", 1), NotEqualTo("x", 1)),
        (StartsWith("s", "a"), NotStartsWith("s", "a")),
        (In("x", [1, 2]), NotIn("x", [1, 2])),
        (IsNull("x"), NotNull("x")),
        (IsNaN("x"), NotNaN("x")),
        (And(A, B), Or(~A, ~B)),
        (Or(A, B), And(~A, ~B)),
        (AlwaysTrue(), AlwaysFalse()),
    ],
)
def test_invert_negates(expr, negated):
    assert ~expr == negated
    assert ~negated == expr


def test_invert_of_not_is_its_child():
    assert ~Not(A) == A


def test_operators():
    assert (A & B) == And(A, B)
    assert (A | B) == Or(A, B)
    assert (A & AlwaysFalse()) is AlwaysFalse()
    with pytest.raises(TypeError):
        A & 1  # type: ignore[operator]


def test_expressions_are_immutable_and_hashable():
    with pytest.raises(AttributeError):
        A.term = Reference("y")  # type: ignore[misc]
    assert len({A, EqualTo("a", 1), B, In("x", [1, 2]), In("x", [2, 1])}) == 3


@pytest.mark.parametrize(
    "expr",
    [
        A,
        And(A, Or(B, Not(C))),
        In("x", ["a", "b"]),
        NotIn("x", [Decimal("1.5"), Decimal("2.25")]),
        EqualTo(UnboundTransform("truncate[4]", "s"), "abcd"),
        GreaterThan("ts", dt.datetime(2024, 1, 1)),
        LessThan("u", uuid.UUID(int=3)),
        StartsWith("s", "it's"),
        AlwaysTrue(),
    ],
)
def test_repr_evaluates_back_and_pickles(expr):
    namespace = {name: getattr(fe, name) for name in fe.__all__}
    namespace.update(datetime=dt, Decimal=Decimal, UUID=uuid.UUID)
    assert eval(repr(expr), {**namespace, "datetime": dt}) == expr
    assert pickle.loads(pickle.dumps(expr)) == expr
