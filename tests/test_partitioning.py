"""Partition specs and sort orders: JSON per version, unknown transforms, validation."""

from __future__ import annotations

import pytest

from frazil.exceptions import InvalidArgumentError, ParseError, UnsupportedError
from frazil.partitioning import (
    PartitionField,
    PartitionSpec,
    UnknownTransform,
    parse_transform,
    validate_spec,
)
from frazil.schema import Schema
from frazil.sorting import (
    NullOrder,
    SortDirection,
    SortField,
    SortOrder,
    validate_sort_order,
)
from frazil.transforms import parse
from frazil.types import (
    DateType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    UnknownType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestampType()),
    NestedField(3, "s", StructType(NestedField(4, "x", IntegerType()))),
    NestedField(5, "l", ListType(6, StructType(NestedField(7, "y", IntegerType())), True)),
    NestedField(8, "f", FloatType()),
)


def test_spec_json_and_partition_type() -> None:
    spec = PartitionSpec(
        PartitionField(1, 1000, parse("bucket[16]"), "id_bucket"),
        PartitionField(2, 1001, parse("day"), "ts_day"),
        PartitionField(4, 1002, parse("identity"), "x"),
        spec_id=3,
    )
    obj = spec.to_json()
    assert obj == {
        "spec-id": 3,
        "fields": [
            {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1000},
            {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1001},
            {"name": "x", "transform": "identity", "source-id": 4, "field-id": 1002},
        ],
    }
    assert PartitionSpec.from_json(obj) == spec
    assert spec.partition_type(SCHEMA) == StructType(
        NestedField(1000, "id_bucket", IntegerType()),
        NestedField(1001, "ts_day", DateType()),
        NestedField(1002, "x", IntegerType()),
    )
    assert spec.last_assigned_field_id == 1002 and not spec.is_unpartitioned()
    validate_spec(spec, SCHEMA)


def test_partition_type_of_a_spec_whose_source_was_dropped() -> None:
    spec = PartitionSpec(PartitionField(42, 1000, parse("void"), "gone"))
    assert spec.partition_type(SCHEMA) == StructType(NestedField(1000, "gone", UnknownType()))


def test_v1_field_ids_default_from_1000() -> None:
    obj = {"spec-id": 0, "fields": [{"name": "a", "transform": "identity", "source-id": 1}] * 1}
    obj["fields"].append({"name": "b", "transform": "void", "source-id": 2})
    spec = PartitionSpec.from_json(obj, v1=True)
    assert [f.field_id for f in spec.fields] == [1000, 1001]
    with pytest.raises(ParseError, match=r"fields\[0\].field-id: required"):
        PartitionSpec.from_json(obj)


def test_unknown_transforms_are_kept_on_read_and_refused_on_write() -> None:
    t = parse_transform("zorder")
    assert isinstance(t, UnknownTransform) and str(t) == "zorder"
    assert not t.preserves_order and not t.can_transform(LongType())
    assert t.result_type(LongType()) == StringType()
    spec = PartitionSpec(PartitionField(1, 1000, t, "z"))
    assert PartitionSpec.from_json(spec.to_json()) == spec
    with pytest.raises(UnsupportedError, match="unknown transform zorder"):
        validate_spec(spec, SCHEMA)
    # a known transform with a bad parameter is an error even when reading
    with pytest.raises(ParseError, match="truncate width"):
        parse_transform("truncate[-1]", "t")


def test_multi_argument_fields_write_source_ids() -> None:
    field = PartitionField(1, 1000, UnknownTransform("zorder"), "z", (1, 2))
    assert field.to_json() == {
        "name": "z",
        "transform": "zorder",
        "source-ids": [1, 2],
        "field-id": 1000,
    }
    # a reader accepts both forms, when they agree
    both = {**field.to_json(), "source-id": 1}
    assert PartitionField.from_json(both, "f", None) == field
    with pytest.raises(ParseError, match="disagrees"):
        PartitionField.from_json({**both, "source-id": 2}, "f", None)


def test_duplicate_ids_and_names_in_a_spec() -> None:
    f = {"name": "a", "transform": "identity", "source-id": 1, "field-id": 1000}
    with pytest.raises(ParseError, match="duplicate partition field id 1000"):
        PartitionSpec.from_json({"spec-id": 0, "fields": [f, {**f, "name": "b"}]})
    with pytest.raises(ParseError, match="duplicate partition field name 'a'"):
        PartitionSpec.from_json({"spec-id": 0, "fields": [f, {**f, "field-id": 1001}]})


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (PartitionField(99, 1000, parse("identity"), "p"), "id 99 is not in the schema"),
        (PartitionField(3, 1000, parse("identity"), "p"), "is a struct, not a primitive"),
        (PartitionField(7, 1000, parse("identity"), "p"), "nested in a list or map"),
        (PartitionField(8, 1000, parse("bucket[2]"), "p"), "cannot be applied to float"),
        (PartitionField(2, 1000, parse("day"), "id"), "conflicts with a schema column"),
    ],
)
def test_spec_validation(field: PartitionField, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        validate_spec(PartitionSpec(field), SCHEMA)


def test_identity_may_reuse_its_column_name() -> None:
    validate_spec(PartitionSpec(PartitionField(1, 1000, parse("identity"), "id")), SCHEMA)


def test_sort_order_json() -> None:
    order = SortOrder(
        SortField(1, parse("identity")),
        SortField(2, parse("day"), SortDirection.DESC),
        SortField(4, parse("bucket[4]"), SortDirection.ASC, NullOrder.NULLS_LAST),
        order_id=2,
    )
    assert order.fields[0].null_order == NullOrder.NULLS_FIRST
    assert order.fields[1].null_order == NullOrder.NULLS_LAST
    obj = order.to_json()
    assert obj["fields"][1] == {
        "transform": "day",
        "source-id": 2,
        "direction": "desc",
        "null-order": "nulls-last",
    }
    assert SortOrder.from_json(obj) == order
    validate_sort_order(order, SCHEMA)
    assert SortOrder().order_id == 0 and SortOrder().is_unsorted()


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {
                "order-id": 0,
                "fields": [
                    {
                        "transform": "identity",
                        "source-id": 1,
                        "direction": "asc",
                        "null-order": "nulls-first",
                    }
                ],
            },
            "reserved for the unsorted",
        ),
        ({"order-id": 1, "fields": []}, "has no fields"),
        (
            {
                "order-id": 1,
                "fields": [
                    {
                        "transform": "identity",
                        "source-id": 1,
                        "direction": "asc",
                        "null-order": "first",
                    }
                ],
            },
            "null-order: 'first' is not one of",
        ),
    ],
)
def test_bad_sort_orders(obj: dict, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        SortOrder.from_json(obj)


def test_sort_order_validation() -> None:
    with pytest.raises(InvalidArgumentError, match="not in the schema"):
        validate_sort_order(SortOrder(SortField(42)), SCHEMA)
    with pytest.raises(InvalidArgumentError, match="cannot be applied"):
        validate_sort_order(SortOrder(SortField(8, parse("bucket[2]"))), SCHEMA)
    with pytest.raises(UnsupportedError, match="unknown transform"):
        validate_sort_order(SortOrder(SortField(1, UnknownTransform("z"))), SCHEMA)
