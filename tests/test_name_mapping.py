"""Name mapping (Appendix C "Name Mapping Serialization")."""

from __future__ import annotations

import json

import pytest

from frazil.exceptions import ParseError
from frazil.metadata.name_mapping import (
    MappedField,
    NameMapping,
    create_mapping_from_schema,
    parse_mapping_from_json,
)
from frazil.schema import Schema
from frazil.types import (
    DoubleType,
    IntegerType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

SPEC_EXAMPLE = """[ { "field-id": 1, "names": ["id", "record_id"] },
   { "field-id": 2, "names": ["data"] },
   { "field-id": 3, "names": ["location"], "fields": [
       { "field-id": 4, "names": ["latitude", "lat"] },
       { "field-id": 5, "names": ["longitude", "long"] }
     ] } ]"""


def test_spec_example_round_trips() -> None:
    mapping = parse_mapping_from_json(SPEC_EXAMPLE)
    assert mapping.find("record_id") == MappedField(("id", "record_id"), 1)
    assert mapping.find("location", "lat") == MappedField(("latitude", "lat"), 4)
    assert mapping.find("location", "nope") is None
    assert json.loads(mapping.to_json()) == json.loads(SPEC_EXAMPLE)
    assert parse_mapping_from_json(mapping.to_json()) == mapping


def test_unmapped_names_and_empty_names() -> None:
    mapping = parse_mapping_from_json('[{"names": ["extra"]}, {"field-id": 7, "names": []}]')
    assert mapping.fields[0].field_id is None and mapping.fields[1].names == ()
    assert json.loads(mapping.to_json()) == [{"names": ["extra"]}, {"field-id": 7, "names": []}]


def test_derived_from_a_schema() -> None:
    schema = Schema(
        NestedField(1, "id", IntegerType(), True),
        NestedField(2, "loc", StructType(NestedField(3, "lat", DoubleType()))),
        NestedField(4, "tags", ListType(5, StringType(), True)),
        NestedField(6, "m", MapType(7, StringType(), 8, IntegerType(), False)),
    )
    mapping = create_mapping_from_schema(schema)
    assert mapping == NameMapping(
        [
            MappedField(("id",), 1),
            MappedField(("loc",), 2, (MappedField(("lat",), 3),)),
            MappedField(("tags",), 4, (MappedField(("element",), 5),)),
            MappedField(("m",), 6, (MappedField(("key",), 7), MappedField(("value",), 8))),
        ]
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "invalid JSON"),
        ("{}", "expected a JSON list"),
        ('[{"field-id": 1}]', r"name-mapping\[0\].names: expected a JSON list, got null"),
        ('[{"names": [1]}]', r"names\[0\]: expected a string"),
        ('[{"names": [], "field-id": "1"}]', "field-id: expected a 32-bit integer"),
        ('[{"names": ["a\\ud800"], "field-id": 1}]', r"default\[0\]\.names\[0\]: .*surrogate"),
    ],
)
def test_malformed_mappings(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_mapping_from_json(text)


def test_table_property() -> None:
    from frazil.table.update import SetPropertiesUpdate, new_table_metadata, update_table_metadata

    schema = Schema(NestedField(1, "id", IntegerType(), True))
    m = new_table_metadata(schema, "s3://b/t")
    assert m.name_mapping() is None
    mapping = create_mapping_from_schema(m.schema())
    m = update_table_metadata(
        m, [SetPropertiesUpdate({"schema.name-mapping.default": mapping.to_json()})]
    )
    assert m.name_mapping() == mapping
