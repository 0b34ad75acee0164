"""Binding: names to field ids (case-sensitive or not), literal conversion to the column type as
Java's ``Literals`` does (folding out-of-range comparisons), the exact rewrites where Java refuses
a literal between two column values, and clear errors. The Java reference itself is compared in
tests/interop/test_expressions_java.py."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

from frazil.exceptions import ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    BoundEqualTo,
    BoundGreaterThanOrEqual,
    BoundIn,
    BoundIsNull,
    BoundLessThan,
    BoundLessThanOrEqual,
    BoundReference,
    EqualTo,
    IsNull,
    Literal,
    bind,
    parse,
)
from frazil.schema import Schema
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "b", BooleanType()),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "l", LongType(), required=True),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec", DecimalType(9, 2)),
    NestedField(7, "date", DateType()),
    NestedField(8, "time", TimeType()),
    NestedField(9, "ts", TimestampType()),
    NestedField(10, "tstz", TimestamptzType()),
    NestedField(11, "ts_ns", TimestampNanoType()),
    NestedField(12, "tstz_ns", TimestamptzNanoType()),
    NestedField(13, "s", StringType()),
    NestedField(14, "u", UUIDType()),
    NestedField(15, "fx", FixedType(2)),
    NestedField(16, "bin", BinaryType()),
    NestedField(17, "st", StructType(NestedField(18, "req", IntegerType(), required=True))),
    NestedField(
        19, "rst", StructType(NestedField(20, "req", IntegerType(), required=True)), required=True
    ),
    NestedField(21, "tags", ListType(22, StringType())),
    NestedField(23, "Mixed", IntegerType()),
)


def lit(filter_text: str):
    e = bind(SCHEMA, parse(filter_text))
    return e.literal.value if hasattr(e, "literal") else e


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("b = 'TRUE'", True),
        ("i = 5", 5),
        ("i = '7'", 7),
        ("l = 5", 5),
        ("f = 1.5", 1.5),
        ("f = 0.1e0", 0.10000000149011612),  # nearest float, as Java narrows
        ("d = 1", 1.0),
        ("d = 1.25", 1.25),
        ("dec = 1", Decimal("1.00")),
        ("dec = 1.5", Decimal("1.50")),
        ("dec = '12.34'", Decimal("12.34")),
        ("dec = 1.5e0", Decimal("1.50")),
        ("date = '2024-02-29'", dt.date(2024, 2, 29)),
        ("date = 19000", dt.date(2022, 1, 8)),  # days from the epoch, as Java
        ("time = '10:11:12.5'", dt.time(10, 11, 12, 500000)),
        ("time = '10:11'", dt.time(10, 11)),
        ("ts = '2024-01-01T10:00:00'", dt.datetime(2024, 1, 1, 10)),
        ("ts = '2024-01-01 10:00:00.123456'", dt.datetime(2024, 1, 1, 10, 0, 0, 123456)),
        ("ts = '2024-01-01'", dt.datetime(2024, 1, 1)),
        ("ts = 1000000", dt.datetime(1970, 1, 1, 0, 0, 1)),  # micros, as Java
        (
            "tstz = '2024-01-01T10:00:00+02:00'",
            dt.datetime(2024, 1, 1, 8, tzinfo=dt.timezone.utc),
        ),
        ("tstz = '2024-01-01T10:00:00Z'", dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc)),
        ("ts_ns = '1970-01-01T00:00:00.000000001'", 1),
        ("ts_ns = 5", 5000),  # micros, as Java
        ("tstz_ns = '1970-01-01T00:00:01-00:00'", 1_000_000_000),
        ("s = 'x'", "x"),
        ("u = '00000000-0000-0000-0000-000000000007'", uuid.UUID(int=7)),
        ("fx = X'0102'", b"\x01\x02"),
        ("fx = '0a0b'", b"\x0a\x0b"),  # hex, the JSON form of fixed (as Java 1.11)
        ("bin = X'01'", b"\x01"),
    ],
)
def test_literal_conversion(text, value):
    e = bind(SCHEMA, parse(text))
    assert isinstance(e, BoundEqualTo)
    assert e.literal.type == e.term.type
    assert e.literal.value == value
    assert type(e.literal.value) is type(value)


def test_python_values_convert_too():
    e = bind(SCHEMA, EqualTo("ts", dt.datetime(2024, 1, 1)))
    assert e.literal == Literal(dt.datetime(2024, 1, 1), TimestampType())
    e = bind(SCHEMA, EqualTo("date", dt.datetime(2024, 1, 1)))
    assert e.literal == Literal(dt.date(2024, 1, 1), DateType())
    e = bind(SCHEMA, EqualTo("u", uuid.UUID(int=1)))
    assert e.literal.value == uuid.UUID(int=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Out of range: Java's AboveMax/BelowMin folding.
        ("i < 1099511627776", AlwaysTrue()),
        ("i <= 1099511627776", AlwaysTrue()),
        ("i != 1099511627776", AlwaysTrue()),
        ("i > 1099511627776", AlwaysFalse()),
        ("i = 1099511627776", AlwaysFalse()),
        ("i > -1099511627776", AlwaysTrue()),
        ("i < -1099511627776", AlwaysFalse()),
        ("l < 100000000000000000000", AlwaysTrue()),
        ("f < 1e39", AlwaysTrue()),
        ("f > -1e39", AlwaysTrue()),
        ("dec < 10000000", AlwaysTrue()),  # beyond decimal(9,2)
        ("dec = -10000000", AlwaysFalse()),
        ("i IN (1099511627776, 2199023255552)", AlwaysFalse()),
        ("i NOT IN (1099511627776, 2199023255552)", AlwaysTrue()),
        # Between two column values: exact rewrites (Java refuses, PyIceberg rounds).
        ("i = 1.5", AlwaysFalse()),
        ("i != 1.5", AlwaysTrue()),
        ("dec = '1.234'", AlwaysFalse()),
        # Nullability: required columns (and all their parents) never hold null.
        ("l IS NULL", AlwaysFalse()),
        ("l IS NOT NULL", AlwaysTrue()),
        ("rst.req IS NULL", AlwaysFalse()),
    ],
)
def test_folding(text, expected):
    assert bind(SCHEMA, parse(text)) == expected


def ref(name):
    field = SCHEMA.find_field(name)
    return BoundReference(field, name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i > 1.5", BoundGreaterThanOrEqual(ref("i"), Literal(2, "int"))),
        ("i < 1.5", BoundLessThanOrEqual(ref("i"), Literal(1, "int"))),
        ("i <= -1.5", BoundLessThanOrEqual(ref("i"), Literal(-2, "int"))),
        ("dec < 1.234", BoundLessThanOrEqual(ref("dec"), Literal(Decimal("1.23"), "decimal(9,2)"))),
        (
            "dec > 1.234",
            BoundGreaterThanOrEqual(ref("dec"), Literal(Decimal("1.24"), "decimal(9,2)")),
        ),
        (
            "ts >= '2024-01-01T00:00:00.0000001'",
            BoundGreaterThanOrEqual(
                ref("ts"), Literal(dt.datetime(2024, 1, 1, 0, 0, 0, 1), "timestamp")
            ),
        ),
        ("i IN (1, 1.5, 2)", BoundIn(ref("i"), [Literal(1, "int"), Literal(2, "int")])),
        ("i IN (1, 1.5)", BoundEqualTo(ref("i"), Literal(1, "int"))),
        ("st.req IS NULL", BoundIsNull(ref("st.req"))),  # its struct is optional
        ("i < 5", BoundLessThan(ref("i"), Literal(5, "int"))),
    ],
)
def test_exact_rewrites(text, expected):
    assert bind(SCHEMA, parse(text)) == expected


def test_case_insensitive_binding():
    with pytest.raises(ValidationError, match="'mixed'"):
        bind(SCHEMA, parse("mixed = 1"))
    e = bind(SCHEMA, parse("mixed = 1 AND ST.REQ = 2"), case_sensitive=False)
    assert e.left.term.name == "Mixed"
    assert e.right.term.field_id == 18


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope = 1", "cannot find field 'nope' in the schema; its fields are: b, i, l"),
        ("i IS NaN", "IsNaN cannot be used with a non-floating-point column"),
        ("s IS NOT NaN", "NotNaN cannot be used"),
        ("i LIKE 'a%'", "starts-with needs a string term"),
        ("s > 1", "cannot convert long literal 1 to string"),
        ("i = 'abc'", "'abc' is not a number"),
        ("date = '2024-13-01'", "month must be in 1..12"),
        ("date = '2024/01/01'", "not an ISO date"),
        ("ts = '2024-01-01T00:00:00+01:00'", "timestamp without zone"),
        ("tstz = '2024-01-01T00:00:00'", "has no UTC offset"),
        ("u = 'not-a-uuid'", "badly formed"),
        ("fx = X'010203'", "3 bytes, expected 2"),
        ("b = 1", "cannot convert long literal 1 to boolean"),
        ("st = 1", "cannot compare struct"),
        ("tags.element = 'a'", "inside a list or map"),
        ("bucket(4, f) = 1", "cannot be applied"),
    ],
)
def test_errors(text, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        bind(SCHEMA, parse(text))


def test_is_null_works_on_any_type_and_bound_expressions_rebind():
    e = bind(SCHEMA, IsNull("st"))
    assert isinstance(e, BoundIsNull)
    assert bind(SCHEMA, e) == e
    with pytest.raises(ValidationError, match="field id 17"):
        bind(Schema(NestedField(1, "x", LongType())), e)
