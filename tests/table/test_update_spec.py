"""Partition evolution (spec "Partition Evolution") and sort order replacement."""

from __future__ import annotations

from typing import Any

import pytest

from frazil.exceptions import ValidationError
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table.update import (
    AddPartitionSpecUpdate,
    AddSortOrderUpdate,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedPartitionId,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    new_table_metadata,
    update_table_metadata,
)
from frazil.table.update.sort_order import ReplaceSortOrder
from frazil.table.update.spec import UpdateSpec, default_partition_name
from frazil.transforms import parse
from frazil.types import (
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestampType()),
    NestedField(3, "data", StringType()),
    NestedField(4, "x", DoubleType()),
    NestedField(5, "s", StructType(NestedField(6, "a", IntegerType()))),
)


def table(version: int = 2) -> TableMetadata:
    spec = PartitionSpec(
        PartitionField(1, 1000, parse("bucket[16]"), "id_bucket"),
        PartitionField(2, 1001, parse("day"), "ts_day"),
    )
    return new_table_metadata(SCHEMA, "s3://b/t", spec, format_version=version)


def evolve(m: TableMetadata, change: Any) -> TableMetadata:
    update = UpdateSpec(m)
    change(update)
    updates, requirements = update.updates_and_requirements()
    return update_table_metadata(m, updates, requirements)


def fields(spec: PartitionSpec) -> list[tuple[int, int, str, str]]:
    return [(f.source_id, f.field_id, str(f.transform), f.name) for f in spec.fields]


@pytest.mark.parametrize(
    ("column", "transform", "name"),
    [
        ("id", "identity", "id"),
        ("id", "bucket[16]", "id_bucket_16"),
        ("data", "truncate[4]", "data_trunc_4"),
        ("ts", "hour", "ts_hour"),
        ("ts", "void", "ts_null"),
    ],
)
def test_default_names(column: str, transform: str, name: str) -> None:
    assert default_partition_name(column, parse(transform)) == name


def test_add_remove_rename_in_v2() -> None:
    m = table()
    new = evolve(
        m,
        lambda u: (
            u.add_field("data", "truncate[4]")
            .add_field("s.a", parse("identity"), "sa")
            .remove_field("id_bucket")
            .rename_field("ts_day", "day")
        ),
    )
    assert fields(new.spec()) == [
        (2, 1001, "day", "day"),
        (3, 1002, "truncate[4]", "data_trunc_4"),
        (6, 1003, "identity", "sa"),
    ]
    assert new.spec().spec_id == 1 and new.last_partition_id == 1003


def test_updates_and_requirements() -> None:
    m = table()
    update = UpdateSpec(m).add_identity("data")
    updates, requirements = update.updates_and_requirements()
    assert updates == [AddPartitionSpecUpdate(update.apply()), SetDefaultSpecUpdate(-1)]
    assert requirements == [AssertDefaultSpecId(0), AssertLastAssignedPartitionId(1001)]
    assert UpdateSpec(m).updates_and_requirements() == ([], [])


def test_field_ids_are_reused_for_an_equivalent_field_of_an_earlier_spec() -> None:
    m = table()
    dropped = evolve(m, lambda u: u.remove_field("id_bucket"))
    readded = evolve(dropped, lambda u: u.add_field("id", "bucket[16]"))
    assert fields(readded.spec()) == [
        (2, 1001, "day", "ts_day"),
        (1, 1000, "bucket[16]", "id_bucket"),
    ]
    # no new id was spent, and the result is a new spec (order differs from spec 0)
    assert readded.last_partition_id == 1001 and readded.spec().spec_id == 2
    # a different transform of the same column gets a fresh id
    other = evolve(dropped, lambda u: u.add_field("id", "bucket[8]"))
    assert fields(other.spec())[-1] == (1, 1002, "bucket[8]", "id_bucket_8")


def test_remove_then_add_back_in_one_change_cancels() -> None:
    m = table()
    update = UpdateSpec(m).remove_field("ts_day").add_field("ts", "day")
    assert update.updates_and_requirements() == ([], [])


def test_an_existing_spec_is_reused() -> None:
    m = table()
    one = evolve(m, lambda u: u.add_identity("data"))
    back = evolve(one, lambda u: u.remove_field("data"))
    assert back.default_spec_id == 0 and len(back.partition_specs) == 2


def test_v1_rules_void_in_place_and_append() -> None:
    m = table(1)
    new = evolve(m, lambda u: u.remove_field("id_bucket").add_identity("data"))
    assert fields(new.spec()) == [
        (1, 1000, "void", "id_bucket"),
        (2, 1001, "day", "ts_day"),
        (3, 1002, "identity", "data"),
    ]
    assert TableMetadata.from_json(new.to_json()) == new


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.add_field("nope", "identity"), "cannot add partition field"),
        (lambda u: u.add_field("x", "bucket[4]"), "cannot partition 'x'"),
        (lambda u: u.add_field("id", "bucket[16]"), "duplicates existing field 'id_bucket'"),
        (lambda u: u.add_field("ts", "hour"), "duplicates existing field 'ts_day'"),
        (lambda u: u.add_field("data", "identity").add_field("data", "identity"), "redundant"),
        (lambda u: u.add_field("data", "zorder"), "unknown transform"),
        (lambda u: u.add_field("data", "identity", "ts_day"), "name already exists"),
        (lambda u: u.add_field("data", "truncate[2]", "id"), "conflicts with a schema column"),
        (lambda u: u.remove_field("nope"), "cannot find partition field 'nope'"),
        (lambda u: u.add_identity("data").remove_field("data"), "added in this change"),
        (lambda u: u.rename_field("ts_day", "d").remove_field("ts_day"), "remove and rename"),
        (lambda u: u.remove_field("ts_day").rename_field("ts_day", "d"), "rename and remove"),
        (lambda u: u.rename_field("ts_day", "id_bucket"), "the name exists"),
        (lambda u: u.rename_field("nope", "x"), "cannot find partition field"),
    ],
)
def test_refusals(change: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        evolve(table(), change)


def test_rename_an_added_field() -> None:
    new = evolve(table(), lambda u: u.add_identity("data").rename_field("data", "d"))
    assert fields(new.spec())[-1] == (3, 1002, "identity", "d")


# ---- sort order


def test_replace_sort_order() -> None:
    m = table()
    order = ReplaceSortOrder(m).asc("id").desc("ts", "day", NullOrder.NULLS_FIRST)
    updates, requirements = order.updates_and_requirements()
    assert updates == [AddSortOrderUpdate(order.apply()), SetDefaultSortOrderUpdate(-1)]
    assert requirements == [AssertDefaultSortOrderId(0)]
    new = update_table_metadata(m, updates, requirements)
    assert new.sort_order() == SortOrder(
        SortField(1, parse("identity"), SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(2, parse("day"), SortDirection.DESC, NullOrder.NULLS_FIRST),
        order_id=1,
    )
    # the same order again changes nothing; the empty order goes back to unsorted (id 0)
    assert ReplaceSortOrder(new).asc("id").desc(
        "ts", "day", NullOrder.NULLS_FIRST
    ).updates_and_requirements() == ([], [])
    unsorted = ReplaceSortOrder(new).updates_and_requirements()[0]
    assert update_table_metadata(new, unsorted).default_sort_order_id == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o.asc("nope"), "cannot sort by 'nope'"),
        (lambda o: o.asc("x", "bucket[2]"), r"cannot sort by bucket\[2\]\(x\)"),
        (lambda o: o.asc("id").desc("id"), "twice"),
        (lambda o: o.asc("s"), "cannot sort by identity"),
    ],
)
def test_sort_order_refusals(change: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        change(ReplaceSortOrder(table()))


def test_a_different_name_gets_a_fresh_id_as_in_the_reference() -> None:
    dropped = evolve(table(), lambda u: u.remove_field("id_bucket"))
    renamed = evolve(dropped, lambda u: u.add_field("id", "bucket[16]", "by_id"))
    assert fields(renamed.spec())[-1] == (1, 1002, "bucket[16]", "by_id")
    same = evolve(dropped, lambda u: u.add_field("id", "bucket[16]", "id_bucket"))
    assert fields(same.spec())[-1] == (1, 1000, "bucket[16]", "id_bucket")


def test_identity_on_geo_columns_is_refused() -> None:
    from frazil.table.update.schema import UpdateSchema
    from frazil.types import GeographyType

    m = table(3)
    updates, _ = UpdateSchema(m).add_column("g", GeographyType()).updates_and_requirements()
    m = update_table_metadata(m, updates)
    with pytest.raises(ValidationError, match="cannot partition 'g'"):
        UpdateSpec(m).add_identity("g")
    with pytest.raises(ValidationError, match="cannot sort by identity"):
        ReplaceSortOrder(m).asc("g")
