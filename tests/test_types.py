from __future__ import annotations

import pytest

from frazil.exceptions import FrazilError, ParseError
from frazil.types import (
    DecimalType,
    FixedType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzNanoType,
    UnknownType,
    parse_type,
    type_from_json,
)

# Appendix C: every primitive type string of v1 to v3.
SPEC_TYPE_STRINGS = [
    "unknown",
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "fixed[16]",
    "binary",
    "decimal(9,2)",
]


@pytest.mark.parametrize("text", SPEC_TYPE_STRINGS)
def test_primitive_strings_round_trip(text: str) -> None:
    assert str(parse_type(text)) == text


def test_parameterized_types_accept_whitespace() -> None:
    assert parse_type("decimal(9, 2)") == DecimalType(9, 2)
    assert parse_type(" decimal( 38 ,10 ) ") == DecimalType(38, 10)
    assert parse_type("fixed[ 4 ]") == FixedType(4)
    assert parse_type("TIMESTAMPTZ_NS") == TimestamptzNanoType()
    assert parse_type("unknown") == UnknownType()


@pytest.mark.parametrize(
    "text",
    ["", "integer", "decimal(39,0)", "decimal(9)", "fixed[x]", "fixed(4)", "list<int>", "int "],
)
def test_malformed_type_strings(text: str) -> None:
    if text == "int ":  # surrounding whitespace is tolerated
        assert parse_type(text) == IntegerType()
        return
    with pytest.raises(ParseError):
        parse_type(text)


def test_nested_json_round_trip() -> None:
    t = StructType(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "tags", ListType(3, StringType(), element_required=False)),
        NestedField(4, "props", MapType(5, StringType(), 6, DecimalType(9, 2), False), doc="d"),
    )
    assert type_from_json(t.to_json()) == t
    # the Java reference's form (the spec allows both); was "decimal(9,2)" before
    assert t.to_json()["fields"][2]["type"]["value"] == "decimal(9, 2)"


def test_bad_type_json() -> None:
    with pytest.raises(FrazilError):
        type_from_json({"type": "struct"})
    with pytest.raises(FrazilError):
        type_from_json({"type": "tuple", "fields": []})
    with pytest.raises(FrazilError):
        type_from_json(42)
