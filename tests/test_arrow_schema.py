"""Iceberg <-> Arrow schema conversion: round trips, ids from metadata / name mapping / fresh,
PyIceberg's mapping for the same schema, unsupported types."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from frazil.arrow_schema import schema_from_arrow, schema_to_arrow, type_from_arrow, type_to_arrow
from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.metadata.name_mapping import create_mapping_from_schema
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
    MapType,
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

PRIMITIVES = [
    BooleanType(),
    IntegerType(),
    LongType(),
    FloatType(),
    DoubleType(),
    DecimalType(38, 10),
    DateType(),
    TimeType(),
    TimestampType(),
    TimestamptzType(),
    TimestampNanoType(),
    TimestamptzNanoType(),
    StringType(),
    UUIDType(),
    FixedType(7),
    BinaryType(),
]

SCHEMA = Schema(
    *(NestedField(i + 1, f"c{i}", t, i % 2 == 0) for i, t in enumerate(PRIMITIVES)),
    NestedField(
        20,
        "nested",
        StructType(
            NestedField(21, "l", ListType(22, StructType(NestedField(23, "x", UUIDType())))),
            NestedField(24, "m", MapType(25, StringType(), 26, DecimalType(9, 2), False), True),
        ),
    ),
)


@pytest.mark.parametrize("large", [True, False])
def test_round_trip(large: bool) -> None:
    arrow = schema_to_arrow(SCHEMA, large_types=large)
    assert schema_from_arrow(arrow) == SCHEMA
    assert arrow.field("c0").nullable is False and arrow.field("c1").nullable is True
    nested = arrow.field("nested").type
    assert nested.field("l").type.value_field.metadata[b"PARQUET:field_id"] == b"22"


def test_types_match_pyiceberg() -> None:
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    from pyiceberg.schema import Schema as PSchema

    peer = schema_to_pyarrow(PSchema.model_validate_json(json.dumps(SCHEMA.to_json())))
    ours = schema_to_arrow(SCHEMA)
    for i, t in enumerate(PRIMITIVES):
        # PyIceberg writes uuid as fixed_size_binary(16) in files; frazil keeps the extension
        if not isinstance(t, UUIDType):
            assert ours.field(f"c{i}").type == peer.field(f"c{i}").type, t
    assert ours.field("c13").type.storage_type == pa.binary(16)


def test_ids_from_mapping_or_fresh() -> None:
    bare = pa.schema([f.remove_metadata() for f in schema_to_arrow(SCHEMA)])
    mapped = schema_from_arrow(bare, create_mapping_from_schema(SCHEMA))
    assert mapped == SCHEMA
    fresh = schema_from_arrow(bare)
    # a struct's own fields first, then children, as fresh ids are assigned elsewhere
    assert [f.field_id for f in fresh.fields] == list(range(1, 18))
    assert sorted(fresh.field_ids) == list(range(1, 24))
    with pytest.raises(InvalidArgumentError, match="'extra'"):
        schema_from_arrow(
            bare.append(pa.field("extra", pa.int8())), create_mapping_from_schema(SCHEMA)
        )


def test_arrow_only_types() -> None:
    assert type_from_arrow(pa.uint32()) == LongType()
    assert type_from_arrow(pa.dictionary(pa.int8(), pa.string())) == StringType()
    assert type_from_arrow(pa.timestamp("ms", "Europe/Paris")) == TimestamptzType()
    assert type_from_arrow(pa.string_view()) == StringType()
    for bad in (
        pa.uint64(),
        pa.duration("s"),
        pa.decimal256(50, 2),
        pa.time32("s").__class__ and pa.month_day_nano_interval(),
    ):
        with pytest.raises(UnsupportedError):
            type_from_arrow(bad)
    with pytest.raises(UnsupportedError, match="'d'"):
        schema_from_arrow(pa.schema([("d", pa.duration("us"))]))
    assert type_to_arrow(StringType(), large_types=False) == pa.string()
