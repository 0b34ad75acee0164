"""Schemas: JSON (Appendix C) including v3 types and defaults, lookups, fresh ids, identifier
field rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil.exceptions import InvalidArgumentError, ParseError
from frazil.schema import Schema, assign_fresh_schema_ids, validate_identifier_fields
from frazil.types import (
    BooleanType,
    DoubleType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    UnknownType,
    VariantType,
    parse_type,
)

NESTED = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(
        2,
        "location",
        StructType(NestedField(3, "lat", DoubleType()), NestedField(4, "long", DoubleType())),
        True,
    ),
    NestedField(5, "tags", ListType(6, StringType(), False)),
    NestedField(
        7,
        "props",
        MapType(8, StringType(), 9, StructType(NestedField(10, "v", IntegerType())), True),
    ),
    schema_id=3,
    identifier_field_ids=[1],
)


def test_json_round_trip_and_form() -> None:
    obj = NESTED.to_json()
    assert obj["schema-id"] == 3 and obj["identifier-field-ids"] == [1]
    assert obj["fields"][2]["type"] == {
        "type": "list",
        "element-id": 6,
        "element-required": False,
        "element": "string",
    }
    assert Schema.from_json(obj) == NESTED


def test_lookups_by_id_and_full_name() -> None:
    assert NESTED.find_field("location.lat").field_id == 3
    assert NESTED.find_field("LOCATION.LAT", case_sensitive=False).field_id == 3
    assert NESTED.find_field(6).name == "element"
    assert NESTED.find_type("props.value.v") == IntegerType()
    assert NESTED.find_column_name(10) == "props.value.v"
    assert NESTED.parent_id(10) == 9 and NESTED.parent_id(1) is None
    assert NESTED.highest_field_id == 10
    with pytest.raises(InvalidArgumentError, match="no field named 'nope'"):
        NESTED.find_field("nope")
    with pytest.raises(InvalidArgumentError, match="no field with id 99"):
        NESTED.find_field(99)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("variant", VariantType()),
        ("unknown", UnknownType()),
        ("timestamp_ns", TimestampNanoType()),
        ("geometry", GeometryType()),
        ("geometry(srid:4326)", GeometryType("srid:4326")),
        ("geography", GeographyType()),
        ("geography(srid:4326)", GeographyType("srid:4326")),
        ("geography(srid:4326, spherical)", GeographyType("srid:4326", "spherical")),
        ("GEOGRAPHY(EPSG:4326,karney)", GeographyType("EPSG:4326", "karney")),
    ],
)
def test_v3_types_parse_and_print(text: str, expected: IcebergType) -> None:
    t = parse_type(text)
    assert t == expected
    assert parse_type(str(t)) == t


@pytest.mark.parametrize(
    "text", ["geometry()", "geography(srid:4326, sideways)", "geography(,spherical)", "varient"]
)
def test_malformed_v3_type_strings(text: str) -> None:
    with pytest.raises(ParseError):
        parse_type(text)


def _field(**kw: Any) -> dict[str, Any]:
    return {"id": 1, "name": "a", "required": False, "type": "int", **kw}


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (_field(type="variant", **{"initial-default": 1}), "variant column must default to null"),
        (_field(type="geometry", **{"write-default": "POINT"}), "must default to null"),
        (_field(**{"initial-default": "x"}), r"fields\[0\].initial-default: "),
        (
            _field(
                type={"type": "struct", "fields": []},
                **{"initial-default": {"a": 1}},
            ),
            "struct default must be null or {}",
        ),
        (_field(doc=5), r"fields\[0\].doc: expected a string"),
        (_field(id="1"), r"fields\[0\].id: expected a 32-bit integer"),
        (_field(type={"type": "bag"}), "unknown nested type 'bag'"),
        (_field(type=7), r"fields\[0\].type: expected a JSON object, got an integer"),
    ],
)
def test_bad_fields_are_named(field: dict[str, Any], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        Schema.from_json({"type": "struct", "schema-id": 0, "fields": [field]}, "s")


def test_defaults_are_read_and_kept_in_json_form() -> None:
    schema = Schema.from_json(
        {
            "type": "struct",
            "schema-id": 0,
            "fields": [
                _field(**{"initial-default": 34, "write-default": 35}),
                _field(
                    id=2,
                    name="p",
                    type={"type": "struct", "fields": []},
                    **{"initial-default": {}},
                ),
            ],
        }
    )
    assert schema.find_field("a").initial_default == 34
    assert schema.find_field("a").write_default == 35
    assert schema.find_field("p").initial_default == {}
    assert Schema.from_json(schema.to_json()) == schema


def test_fresh_ids_follow_the_reference_order() -> None:
    # A struct's own fields are numbered first, then each field's children.
    fresh, last = assign_fresh_schema_ids(NESTED)
    assert [f.field_id for f in fresh.fields] == [1, 2, 3, 4]
    assert fresh.find_field("location.lat").field_id == 5
    assert fresh.find_field("tags.element").field_id == 7
    assert fresh.find_field("props.key").field_id == 8
    assert fresh.find_field("props.value.v").field_id == 10
    assert last == 10 and fresh.identifier_field_ids == (1,)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (Schema(NestedField(1, "a", IntegerType()), identifier_field_ids=[1]), "must be required"),
        (
            Schema(NestedField(1, "a", DoubleType(), True), identifier_field_ids=[1]),
            "float or double",
        ),
        (
            Schema(
                NestedField(1, "a", StructType(NestedField(2, "b", LongType(), True)), True),
                identifier_field_ids=[1],
            ),
            "must be a primitive",
        ),
        (
            Schema(
                NestedField(1, "a", StructType(NestedField(2, "b", LongType(), True))),
                identifier_field_ids=[2],
            ),
            "optional struct",
        ),
        (
            Schema(
                NestedField(1, "a", ListType(2, LongType(), True), True), identifier_field_ids=[2]
            ),
            "list or map",
        ),
        (Schema(NestedField(1, "a", LongType(), True), identifier_field_ids=[3]), "not in the"),
    ],
)
def test_identifier_field_rules(schema: Schema, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        validate_identifier_fields(schema)


def test_nested_required_identifier_in_required_struct_is_fine() -> None:
    validate_identifier_fields(
        Schema(
            NestedField(1, "a", StructType(NestedField(2, "b", LongType(), True)), True),
            identifier_field_ids=[2],
        )
    )


_prims = st.sampled_from(
    [IntegerType(), LongType(), StringType(), BooleanType(), parse_type("decimal(9,2)")]
)


def _types(depth: int) -> st.SearchStrategy[IcebergType]:
    if depth == 0:
        return _prims
    inner = _types(depth - 1)
    return st.one_of(
        _prims,
        st.lists(inner, min_size=1, max_size=3).map(
            lambda ts: StructType(*(NestedField(0, f"f{i}", t) for i, t in enumerate(ts)))
        ),
        st.tuples(inner, st.booleans()).map(lambda a: ListType(0, a[0], a[1])),
        st.tuples(_prims, inner, st.booleans()).map(lambda a: MapType(0, a[0], 0, a[1], a[2])),
    )


@given(st.lists(_types(3), min_size=1, max_size=4), st.integers(0, 1000))
def test_schema_json_round_trip(types: list[IcebergType], schema_id: int) -> None:
    draft = Schema(*(NestedField(0, f"c{i}", t) for i, t in enumerate(types)))
    schema, last = assign_fresh_schema_ids(draft, schema_id=schema_id)
    assert last == schema.highest_field_id == len(schema.field_ids)
    assert Schema.from_json(schema.to_json()) == schema
