"""Expressions as JSON (expressions spec, Appendix B): the exact shapes written, every accepted
variant of the current and deprecated forms, and round trips of random expressions (unbound and
bound; current and legacy; also through ``str`` and the parser)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil.exceptions import ParseError, UnsupportedError, ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    In,
    IsNull,
    LessThan,
    Literal,
    Not,
    NotIn,
    NotNull,
    Or,
    StartsWith,
    UnboundTransform,
    bind,
    from_json,
    parse,
    to_json,
)
from frazil.schema import Schema
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "d", DecimalType(9, 2)),
    NestedField(5, "ts", TimestampType()),
    NestedField(6, "x", DoubleType()),
    NestedField(7, "n", StructType(NestedField(8, "day", DateType()))),
    NestedField(9, "u", UUIDType()),
)


def ref(name):
    return {"type": "reference", "name": name}


def test_current_form_shapes():
    assert to_json(AlwaysTrue()) is True
    assert to_json(AlwaysFalse()) is False
    assert to_json(LessThan("ts", "2024-01-01")) == {
        "type": "lt",
        "left": ref("ts"),
        "right": "2024-01-01",
    }
    assert to_json(IsNull("a.b")) == {"type": "is-null", "child": ref("a.b")}
    assert to_json(In("x", [1, 2])) == {"type": "in", "child": ref("x"), "values": [1, 2]}
    assert to_json(Not(And(EqualTo("a", True), Or(EqualTo("b", 1.5), NotNull("c"))))) == {
        "type": "not",
        "child": {
            "type": "and",
            "left": {"type": "eq", "left": ref("a"), "right": True},
            "right": {
                "type": "or",
                "left": {"type": "eq", "left": ref("b"), "right": 1.5},
                "right": {"type": "not-null", "child": ref("c")},
            },
        },
    }
    # Literals that JSON cannot type by themselves carry their data-type.
    assert to_json(EqualTo("d", Decimal("1.50")))["right"] == {
        "type": "literal",
        "value": "1.50",
        "data-type": "decimal(3, 2)",  # the Java reference's form; was "decimal(3,2)"
    }
    assert to_json(EqualTo("t", dt.date(2024, 1, 2)))["right"] == {
        "type": "literal",
        "value": "2024-01-02",
        "data-type": "date",
    }
    assert to_json(EqualTo(UnboundTransform("bucket[16]", "id"), 3))["left"] == {
        "type": "apply",
        "function": {"catalog": "iceberg_functions", "identifier": ["bucket"]},
        "arguments": [16, ref("id")],
    }
    assert to_json(EqualTo(UnboundTransform("day", "ts"), "2024-01-01"))["left"] == {
        "type": "apply",
        "function": {"catalog": "iceberg_functions", "identifier": ["day"]},
        "arguments": [ref("ts")],
    }


def test_legacy_form_shapes():
    e = And(LessThan("ts", 5), In(UnboundTransform("truncate[2]", "s"), ["ab", "cd"]))
    assert to_json(e, legacy=True) == {
        "type": "and",
        "left": {"type": "lt", "term": "ts", "value": 5},
        "right": {
            "type": "in",
            "term": {"type": "transform", "transform": "truncate[2]", "term": "s"},
            "values": ["ab", "cd"],
        },
    }
    assert to_json(IsNull("x"), legacy=True) == {"type": "is-null", "term": "x"}
    assert to_json(EqualTo("d", Decimal("1.50")), legacy=True)["value"] == "1.50"


def test_bound_form_shapes():
    e = bind(
        SCHEMA,
        parse("id > 5 AND (d IN ('1.5', 2) AND (n.day = '2024-01-02' AND bucket(4, s) = 1))"),
    )
    assert to_json(e) == {
        "type": "and",
        "left": {
            "type": "gt",
            "left": {"type": "reference", "id": 1},
            "right": {"type": "literal", "value": 5, "data-type": "long"},
        },
        "right": {
            "type": "and",
            "left": {
                "type": "in",
                "child": {"type": "reference", "id": 4},
                "values": {
                    "type": "literals",
                    "values": ["1.50", "2.00"],
                    "data-type": "decimal(9, 2)",  # Java's form; was "decimal(9,2)"
                },
            },
            "right": {
                "type": "and",
                "left": {
                    "type": "eq",
                    "left": {"type": "reference", "id": 8},
                    "right": {"type": "literal", "value": "2024-01-02", "data-type": "date"},
                },
                "right": {
                    "type": "eq",
                    "left": {
                        "type": "apply",
                        "function": {"catalog": "iceberg_functions", "identifier": ["bucket"]},
                        "arguments": [4, {"type": "reference", "id": 3}],
                    },
                    "right": {"type": "literal", "value": 1, "data-type": "int"},
                },
            },
        },
    }
    assert from_json(to_json(e), SCHEMA) == e
    # The legacy form of a bound expression is what Java's ExpressionParser writes for one.
    assert to_json(e, legacy=True)["right"]["left"] == {
        "type": "in",
        "term": "d",
        "values": ["1.50", "2.00"],
    }


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (True, AlwaysTrue()),
        ("false", AlwaysFalse()),
        ({"type": "true"}, AlwaysTrue()),
        ({"type": "false"}, AlwaysFalse()),
        ({"type": "literal", "value": True}, AlwaysTrue()),
        ({"type": "lt", "term": "ts", "value": 5}, LessThan("ts", 5)),
        ({"type": "LT", "term": "ts", "value": 5}, LessThan("ts", 5)),
        (
            {"type": "lt", "term": {"type": "reference", "term": "ts"}, "value": 5},
            LessThan("ts", 5),
        ),
        ({"type": "lt", "term": "ts", "value": {"type": "literal", "value": 5}}, LessThan("ts", 5)),
        ({"type": "not-null", "term": "x"}, NotNull("x")),
        ({"type": "in", "term": "x", "values": [1, "a"]}, In("x", [1, "a"])),
        ({"type": "not-in", "term": "x", "values": [1]}, EqualTo("x", 1).negate()),
        (
            {
                "type": "eq",
                "term": {"type": "transform", "transform": "day", "term": "ts"},
                "value": "2024-01-01",
            },
            EqualTo(UnboundTransform("day", "ts"), "2024-01-01"),
        ),
        ({"type": "lt", "left": ref("x"), "right": 5}, LessThan("x", 5)),
        ({"type": "lt", "left": 5, "right": ref("x")}, GreaterThan("x", 5)),
        ({"type": "starts-with", "left": ref("s"), "right": "ab"}, StartsWith("s", "ab")),
        (
            {
                "type": "eq",
                "left": ref("d"),
                "right": {"type": "literal", "value": "1.5", "data-type": "decimal(2,1)"},
            },
            EqualTo("d", Decimal("1.5")),
        ),
        (
            {
                "type": "eq",
                "left": ref("u"),
                "right": {"type": "literal", "value": str(uuid.UUID(int=1)), "data-type": "uuid"},
            },
            EqualTo("u", uuid.UUID(int=1)),
        ),
        (
            {
                "type": "in",
                "child": ref("x"),
                "values": {"type": "literals", "values": [1, 2], "data-type": "int"},
            },
            In("x", [Literal(1, "int"), Literal(2, "int")]),
        ),
        (
            {"type": "not-in", "child": ref("x"), "values": [{"type": "literal", "value": 1}, 2]},
            NotIn("x", [1, 2]),
        ),
        (
            {
                "type": "eq",
                "left": {
                    "type": "apply",
                    "function": "bucket",
                    "arguments": [{"type": "literal", "value": 8}, ref("id")],
                },
                "right": 1,
            },
            EqualTo(UnboundTransform("bucket[8]", "id"), 1),
        ),
        (
            {
                "type": "eq",
                "left": {"type": "apply", "function": ["truncate"], "arguments": [3, ref("s")]},
                "right": "abc",
            },
            EqualTo(UnboundTransform("truncate[3]", "s"), "abc"),
        ),
        (
            {
                "type": "is-null",
                "child": {
                    "type": "apply",
                    "function": {"identifier": ["hour"]},
                    "arguments": [ref("ts")],
                },
            },
            IsNull(UnboundTransform("hour", "ts")),
        ),
    ],
)
def test_reads_every_variant(obj, expected):
    assert from_json(json.loads(json.dumps(obj))) == expected


@pytest.mark.parametrize(
    ("obj", "error", "message"),
    [
        (None, ParseError, "expected a predicate"),
        ({"type": "nope"}, ParseError, "unknown expression type"),
        ({"type": "lt", "term": "x"}, ParseError, "needs 'value'"),
        (
            {"type": "lt", "term": "x", "value": 1, "values": [1]},
            ParseError,
            "cannot have 'values'",
        ),
        ({"type": "is-null", "term": "x", "value": 1}, ParseError, "cannot have 'value'"),
        ({"type": "in", "term": "x", "values": 1}, ParseError, "list of literals"),
        ({"type": "lt", "term": "x", "value": None}, ParseError, "expected a literal value"),
        ({"type": "lt", "term": "x", "value": [1]}, ParseError, "expected a literal value"),
        ({"type": "lt", "left": 1, "right": 2}, UnsupportedError, "compare a field"),
        ({"type": "lt", "left": ref("a"), "right": ref("b")}, ParseError, "expected a literal"),
        (
            {
                "type": "eq",
                "left": ref("a"),
                "right": {"type": "literal", "value": "x", "data-type": "date"},
            },
            ParseError,
            "invalid literal",
        ),
        (
            {
                "type": "eq",
                "left": {
                    "type": "apply",
                    "function": {"catalog": "c", "identifier": ["f"]},
                    "arguments": [],
                },
                "right": 1,
            },
            UnsupportedError,
            "not supported",
        ),
        (
            {
                "type": "eq",
                "left": {"type": "apply", "function": "sqrt", "arguments": [ref("a")]},
                "right": 1,
            },
            UnsupportedError,
            "unknown function",
        ),
        (
            {
                "type": "eq",
                "left": {"type": "apply", "function": "bucket", "arguments": [ref("a")]},
                "right": 1,
            },
            ParseError,
            "takes 2",
        ),
        (
            {"type": "is-null", "child": {"type": "reference", "id": 1}},
            ValidationError,
            "needs the schema",
        ),
        ({"type": "and", "left": True}, ParseError, "needs 'right'"),
    ],
)
def test_bad_json_is_refused_clearly(obj, error, message):
    with pytest.raises(error, match=message):
        from_json(obj)


def test_id_references_need_a_known_field():
    with pytest.raises(ValidationError, match="field id 99"):
        from_json({"type": "is-null", "child": {"type": "reference", "id": 99}}, SCHEMA)
    # A plain value on an id reference is read as the field's type.
    e = from_json({"type": "eq", "left": {"type": "reference", "id": 2}, "right": 7}, SCHEMA)
    assert e == bind(SCHEMA, EqualTo("i", 7))


# -- round trips -----------------------------------------------------------------------------

names = st.sampled_from(["a", "b.c", "weird name", "x`y", "in"])
plain_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.booleans(),
)
typed_values = st.one_of(
    plain_values,
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-1000, max_value=1000),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(dt.timezone.utc)),
    st.uuids(),
    st.binary(max_size=4),
)


def predicates(values):
    term = st.one_of(
        names,
        st.builds(UnboundTransform, st.sampled_from(["bucket[4]", "day", "truncate[3]"]), names),
    )
    unary = st.builds(lambda c, t: c(t), st.sampled_from([IsNull, NotNull]), term)
    cmp = st.builds(
        lambda c, t, v: c(t, v),
        st.sampled_from([LessThan, GreaterThan, EqualTo]),
        term,
        values,
    )
    sets = st.builds(
        lambda c, t, vs: c(t, vs),
        st.sampled_from([In, NotIn]),
        term,
        st.lists(values, min_size=0, max_size=4),
    )
    return st.one_of(unary, cmp, sets, st.just(AlwaysTrue()), st.just(AlwaysFalse()))


def expressions(values):
    return st.recursive(
        predicates(values),
        lambda children: st.one_of(
            st.builds(And, children, children),
            st.builds(Or, children, children),
            st.builds(Not, children),
        ),
        max_leaves=8,
    )


@given(expressions(typed_values))
def test_current_form_round_trips(e):
    obj = to_json(e)
    assert from_json(json.loads(json.dumps(obj))) == e


@given(expressions(plain_values))
def test_legacy_form_round_trips(e):
    obj = to_json(e, legacy=True)
    assert from_json(json.loads(json.dumps(obj))) == e


@given(expressions(st.one_of(st.integers(), st.text(max_size=8), st.booleans())))
def test_str_parses_back(e):
    assert parse(str(e)) == e


bound_filters = st.lists(
    st.sampled_from(
        [
            "id > 5",
            "i IN (1, 2, 3)",
            "i NOT IN (4, 5)",
            "s LIKE 'ab%'",
            "s NOT LIKE 'x%'",
            "d >= '12.5'",
            "ts < '2024-01-01T10:00:00'",
            "x IS NaN",
            "x IS NOT NULL",
            "n.day = '2024-03-01'",
            "u = '00000000-0000-0000-0000-000000000001'",
            "bucket(8, id) = 3",
            "truncate(2, s) IN ('ab', 'cd')",
            "month(ts) > 600",
        ]
    ),
    min_size=1,
    max_size=4,
)


@given(bound_filters, st.booleans())
def test_bound_round_trips(filters, use_or):
    joined = (" OR " if use_or else " AND ").join(f"({f})" for f in filters)
    e = bind(SCHEMA, parse(joined))
    assert from_json(json.loads(json.dumps(to_json(e))), SCHEMA) == e
    # Legacy bound JSON names the fields; read back unbound, it binds to the same expression.
    assert bind(SCHEMA, from_json(to_json(e, legacy=True))) == e
