"""Schema evolution: each rule of spec "Schema Evolution" and each refusal."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil.exceptions import ValidationError
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortField, SortOrder
from frazil.table.update import (
    AddSchemaUpdate,
    AssertCurrentSchemaId,
    SetCurrentSchemaUpdate,
    new_table_metadata,
    update_table_metadata,
)
from frazil.table.update.schema import UpdateSchema, promotion_allowed
from frazil.transforms import parse
from frazil.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    UnknownType,
    VariantType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "data", StringType()),
    NestedField(3, "i", IntegerType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DecimalType(9, 2)),
    NestedField(6, "day", DateType()),
    NestedField(
        7, "s", StructType(NestedField(8, "a", IntegerType()), NestedField(9, "b", StringType()))
    ),
    NestedField(10, "pts", ListType(11, StructType(NestedField(12, "x", FloatType())), True)),
    NestedField(13, "m", MapType(14, StringType(), 15, IntegerType(), False)),
    NestedField(16, "bday", DateType()),
    identifier_field_ids=[1],
)


def table(version: int = 2, **kw: Any) -> TableMetadata:
    return new_table_metadata(SCHEMA, "s3://b/t", format_version=version, **kw)


def evolve(m: TableMetadata, change: Any, **kw: Any) -> tuple[TableMetadata, Schema]:
    update = UpdateSchema(m, **kw)
    change(update)
    updates, requirements = update.updates_and_requirements()
    new = update_table_metadata(m, updates, requirements)
    return new, new.schema()


def names(schema: Schema) -> list[str]:
    return [f.name for f in schema.fields]


# ---- adding


def test_add_columns_top_level_nested_and_in_collections() -> None:
    m = table()

    def change(u: UpdateSchema) -> None:
        u.add_column("n", IntegerType(), doc="new")
        u.add_column(("s", "c"), "string")
        u.add_column(("pts", "y"), DoubleType())
        u.add_column(
            "nested",
            StructType(
                NestedField(0, "p", ListType(0, LongType())), NestedField(0, "q", BooleanType())
            ),
        )

    new, schema = evolve(m, change)
    assert names(schema)[-2:] == ["n", "nested"]
    assert schema.find_field("n") == NestedField(17, "n", IntegerType(), False, "new")
    assert schema.find_field("s.c").field_id == 18
    assert schema.find_field("pts.element.y").field_id == 19
    # a new struct's own fields first, then their children
    assert schema.find_field("nested").field_id == 20
    assert schema.find_field("nested.p").field_id == 21
    assert schema.find_field("nested.q").field_id == 22
    assert schema.find_field("nested.p.element").field_id == 23
    assert new.last_column_id == 23 and schema.schema_id == 1


def test_add_column_into_a_column_added_in_the_same_change() -> None:
    _, schema = evolve(
        table(),
        lambda u: u.add_column("st", StructType()).add_column(("st", "inner"), IntegerType()),
    )
    assert schema.find_field("st.inner").field_id == 18


def test_add_into_the_element_struct_of_a_list_added_in_the_same_change() -> None:
    _, schema = evolve(
        table(),
        lambda u: u.add_column(
            "ls", ListType(0, StructType(NestedField(0, "a", IntegerType())))
        ).add_column(("ls", "b"), StringType()),
    )
    element = schema.find_type("ls.element")
    assert [f.name for f in element.fields] == ["a", "b"]  # type: ignore[attr-defined]
    with pytest.raises(ValidationError, match="name already exists"):
        UpdateSchema(table()).add_column(
            "ls", ListType(0, StructType(NestedField(0, "a", IntegerType())))
        ).add_column(("ls", "a"), StringType())


def test_the_update_produces_add_schema_and_set_current_schema() -> None:
    m = table()
    update = UpdateSchema(m).add_column("n", IntegerType())
    updates, requirements = update.updates_and_requirements()
    assert updates == [AddSchemaUpdate(update.apply(), 17), SetCurrentSchemaUpdate(-1)]
    assert requirements == [AssertCurrentSchemaId(0)]
    assert UpdateSchema(m).updates_and_requirements() == ([], [])


def test_context_manager_commits_through_the_callback() -> None:
    seen: list[Any] = []
    with UpdateSchema(table(), on_commit=lambda u, r: seen.append((u, r))) as update:
        update.add_column("n", IntegerType())
    assert len(seen) == 1 and isinstance(seen[0][0][0], AddSchemaUpdate)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.add_column("data", IntegerType()), "name already exists"),
        (lambda u: u.add_column(("s", "a"), IntegerType()), "name already exists"),
        (lambda u: u.add_column("a.b", IntegerType()), "ambiguous name"),
        (lambda u: u.add_column(("nope", "x"), IntegerType()), "cannot find column 'nope'"),
        (lambda u: u.add_column(("data", "x"), IntegerType()), "not a struct"),
        (
            lambda u: u.add_column("r", IntegerType(), required=True),
            "required column 'r' without a default",
        ),
        (lambda u: u.add_column("t", TimestampNanoType()), "needs format version 3"),
        (
            lambda u: u.add_column("v", IntegerType(), default_value=1),
            "defaults need format version 3",
        ),
        (lambda u: u.delete_column("s").add_column(("s", "z"), IntegerType()), "parent is deleted"),
    ],
)
def test_add_refusals(change: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        change(UpdateSchema(table()))


def test_required_column_allowed_as_an_incompatible_change() -> None:
    _, schema = evolve(
        table(),
        lambda u: u.add_column("r", IntegerType(), required=True),
        allow_incompatible_changes=True,
    )
    assert schema.find_field("r").required


def test_v3_defaults() -> None:
    m = table(3)
    new, schema = evolve(
        m,
        lambda u: (
            u.add_column("r", IntegerType(), required=True, default_value=7)
            .add_column("p", StructType(NestedField(0, "x", IntegerType())), default_value={})
            .add_column("u", UnknownType())
            .add_column("v", VariantType())
        ),
    )
    r = schema.find_field("r")
    assert (r.required, r.initial_default, r.write_default) == (True, 7, 7)
    assert schema.find_field("p").initial_default == {}
    _, schema2 = evolve(new, lambda u: u.update_column_default("r", 9))
    r2 = schema2.find_field("r")
    assert (r2.initial_default, r2.write_default) == (7, 9)  # initial-default never changes
    for change, message in [
        (lambda u: u.add_column("x", VariantType(), default_value=1), "must default to null"),
        (lambda u: u.add_column("x", IntegerType(), default_value="a"), "invalid default"),
        (
            lambda u: u.add_column("x", StructType(), default_value={"a": 1}),
            "struct default must be empty",
        ),
        (
            lambda u: u.add_column("x", ListType(0, IntegerType()), default_value=[1]),
            "cannot have a default",
        ),
    ]:
        with pytest.raises(ValidationError, match=message):
            change(UpdateSchema(m))
    with pytest.raises(ValidationError, match="defaults need format version 3"):
        UpdateSchema(table()).update_column_default("i", 1)


# ---- deleting


def test_delete_columns() -> None:
    _, schema = evolve(table(), lambda u: u.delete_column("data").delete_column(("s", "a")))
    assert "data" not in names(schema)
    assert [f.name for f in schema.find_type("s").fields] == ["b"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.delete_column("nope"), "cannot find column 'nope'"),
        (lambda u: u.delete_column("id"), "cannot delete identifier field 'id'"),
        (lambda u: u.add_column("n", IntegerType()).delete_column("n"), "added in this change"),
        (lambda u: u.rename_column("data", "x").delete_column("data"), "has updates"),
        (lambda u: u.delete_column("i"), "partition field 'i_bucket' of the current"),
        (lambda u: u.delete_column("s"), "partition field 's_a' of the current"),
        (lambda u: u.delete_column("f"), "the default sort order uses it"),
    ],
)
def test_delete_refusals(change: Any, message: str) -> None:
    m = table(
        partition_spec=PartitionSpec(
            PartitionField(3, 1000, parse("bucket[4]"), "i_bucket"),
            PartitionField(8, 1001, parse("identity"), "s_a"),
        ),
        sort_order=SortOrder(SortField(4)),
    )
    with pytest.raises(ValidationError, match=message):
        change(UpdateSchema(m))


def test_delete_a_column_only_an_old_spec_or_a_void_field_uses() -> None:
    m = table(1, partition_spec=PartitionSpec(PartitionField(3, 1000, parse("void"), "i_null")))
    _, schema = evolve(m, lambda u: u.delete_column("i"))
    assert "i" not in names(schema)


# ---- renaming


def test_rename_keeps_ids() -> None:
    m = table()
    _, schema = evolve(
        m, lambda u: u.rename_column("data", "payload").rename_column(("s", "a"), "aa")
    )
    assert schema.find_field("payload").field_id == m.schema().find_field("data").field_id
    assert schema.find_field("s.aa").field_id == m.schema().find_field("s.a").field_id


def test_swap_names_through_a_delete_and_case_insensitive_lookup() -> None:
    _, schema = evolve(
        table(), lambda u: u.delete_column("DATA").rename_column("I", "data"), case_sensitive=False
    )
    assert schema.find_field("data").field_id == 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.rename_column("data", "i"), "the name exists"),
        (lambda u: u.rename_column(("pts", "element"), "e"), "fixed names"),
        (lambda u: u.delete_column("data").rename_column("data", "x"), "deleted in this change"),
        (lambda u: u.rename_column("data", ""), "non-empty"),
    ],
)
def test_rename_refusals(change: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        change(UpdateSchema(table()))


def test_rename_a_column_added_in_the_same_change() -> None:
    _, schema = evolve(table(), lambda u: u.add_column("n", IntegerType()).rename_column("n", "m2"))
    assert schema.find_field("m2").field_id == 17


# ---- type promotion


@pytest.mark.parametrize(
    ("source", "target", "v2", "v3"),
    [
        (IntegerType(), LongType(), True, True),
        (FloatType(), DoubleType(), True, True),
        (DecimalType(9, 2), DecimalType(18, 2), True, True),
        (DecimalType(9, 2), DecimalType(9, 2), True, True),
        (DecimalType(9, 2), DecimalType(8, 2), False, False),
        (DecimalType(9, 2), DecimalType(10, 3), False, False),
        (DateType(), TimestampType(), False, True),
        (DateType(), TimestampNanoType(), False, True),
        (DateType(), TimestamptzType(), False, False),
        (UnknownType(), StringType(), False, True),
        (LongType(), IntegerType(), False, False),
        (IntegerType(), StringType(), False, False),
        (DoubleType(), FloatType(), False, False),
    ],
)
def test_promotion_table(source: IcebergType, target: IcebergType, v2: bool, v3: bool) -> None:
    assert promotion_allowed(source, target, 2) is v2
    assert promotion_allowed(source, target, 3) is v3


def test_promotions_apply() -> None:
    _, schema = evolve(
        table(),
        lambda u: (
            u.update_column("i", LongType())
            .update_column("f", DoubleType())
            .update_column("d", DecimalType(12, 2))
            .update_column(("pts", "element", "x"), DoubleType())
            .update_column(("m", "value"), LongType())
        ),
    )
    assert schema.find_type("i") == LongType() and schema.find_type("f") == DoubleType()
    assert schema.find_type("d") == DecimalType(12, 2)
    assert schema.find_type("pts.element.x") == DoubleType()
    assert schema.find_type("m.value") == LongType()


def test_v3_date_promotion_and_partition_sources() -> None:
    m = table(
        3,
        partition_spec=PartitionSpec(
            PartitionField(6, 1000, parse("month"), "day_month"),
            PartitionField(16, 1001, parse("bucket[4]"), "bday_bucket"),
        ),
    )
    _, schema = evolve(m, lambda u: u.update_column("day", TimestampType()))
    assert schema.find_type("day") == TimestampType()  # month(date) == month(timestamp)
    with pytest.raises(ValidationError, match="partition field 'bday_bucket'"):
        UpdateSchema(m).update_column("bday", TimestampType())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.update_column("i", StringType()), "not a valid type promotion"),
        (lambda u: u.update_column("id", IntegerType()), "not a valid type promotion"),
        (lambda u: u.update_column("day", TimestampType()), "in format version 2"),
        (lambda u: u.update_column("s", StringType()), "only primitive types"),
        (lambda u: u.update_column("i", StructType()), "only primitive types"),
        (lambda u: u.update_column(("m", "key"), LongType()), "cannot update map key"),
        (lambda u: u.update_column("data", required=True), "cannot make optional column 'data'"),
    ],
)
def test_update_refusals(change: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        change(UpdateSchema(table()))


def test_nullability_and_doc() -> None:
    m = table()
    _, schema = evolve(
        m, lambda u: u.make_column_optional("i").update_column("data", doc="the data")
    )
    assert not schema.find_field("i").required
    assert schema.find_field("data").doc == "the data"
    _, schema2 = evolve(
        m, lambda u: u.update_column("data", required=True), allow_incompatible_changes=True
    )
    assert schema2.find_field("data").required


def test_making_an_identifier_field_optional_is_refused_on_apply() -> None:
    with pytest.raises(ValidationError, match="must be required"):
        UpdateSchema(table()).make_column_optional("id").apply()


# ---- moves


def test_moves() -> None:
    _, schema = evolve(
        table(),
        lambda u: (
            u.move_first("data")
            .move_after("id", "i")
            .move_before("f", "data")
            .move_first(("s", "b"))
        ),
    )
    assert names(schema)[:5] == ["f", "data", "i", "id", "d"]
    assert [f.name for f in schema.find_type("s").fields] == ["b", "a"]  # type: ignore[attr-defined]


def test_move_an_added_column() -> None:
    _, schema = evolve(table(), lambda u: u.add_column("n", IntegerType()).move_after("n", "id"))
    assert names(schema)[:3] == ["id", "n", "data"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.move_after("id", "id"), "itself"),
        (lambda u: u.move_before("id", ("s", "a")), "different structs"),
        (lambda u: u.move_first("nope"), "cannot find column"),
        (lambda u: u.delete_column("data").move_after("id", "data"), "deleted column"),
        (lambda u: u.move_after("id", "data").delete_column("data"), "moved in this change"),
    ],
)
def test_move_refusals(change: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        change(UpdateSchema(table()))


# ---- identifier fields


def test_set_identifier_fields() -> None:
    _, schema = evolve(
        table(),
        lambda u: u.add_column("k", StringType(), required=True).set_identifier_fields("id", "k"),
        allow_incompatible_changes=True,
    )
    assert schema.identifier_field_ids == (1, 17)
    _, schema2 = evolve(table(), lambda u: u.set_identifier_fields())
    assert schema2.identifier_field_ids == ()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("data",), "must be required"),
        (("s",), "must be a primitive"),
        (("pts.element.x",), "float or double"),
        (("nope",), "cannot find column"),
    ],
)
def test_identifier_refusals(fields: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        UpdateSchema(table()).set_identifier_fields(*fields).apply()


def test_evolved_schema_serializes_and_reuses_an_identical_schema() -> None:
    m = table()
    new, _ = evolve(m, lambda u: u.add_column("n", IntegerType()))
    back, schema = evolve(new, lambda u: u.delete_column("n"))
    # the result equals schema 0, so the builder reuses it instead of adding a third schema
    assert schema.schema_id == 0 and len(back.schemas) == 2
    assert TableMetadata.from_json(back.to_json()) == back


def test_a_required_column_keeps_a_write_default() -> None:
    m, _ = evolve(
        table(3), lambda u: u.add_column("r", IntegerType(), required=True, default_value=1)
    )
    with pytest.raises(ValidationError, match="cannot remove the write default of required"):
        UpdateSchema(m).update_column_default("r", None)
    _, schema = evolve(m, lambda u: u.make_column_optional("r").update_column_default("r", None))
    assert schema.find_field("r").write_default is None
    assert schema.find_field("r").initial_default == 1


# ---- property: any sequence of accepted changes gives a valid, committable schema

_ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "add_nested", "delete", "rename", "promote", "optional", "move"]),
        st.integers(0, 30),
        st.integers(0, 30),
    ),
    max_size=12,
)


@given(_ops, st.sampled_from([2, 3]))
def test_accepted_changes_always_commit(ops: list[tuple[str, int, int]], version: int) -> None:
    m = table(version)
    update = UpdateSchema(m)
    base = m.schema()
    paths = [n for n in base.column_names() if ".element" not in n and ".key" not in n]
    for op, a, b in ops:
        path = tuple(paths[a % len(paths)].split("."))
        other = tuple(paths[b % len(paths)].split("."))
        try:
            if op == "add":
                update.add_column(f"c{a}", IntegerType())
            elif op == "add_nested":
                update.add_column(("s", f"n{a}"), StringType())
            elif op == "delete":
                update.delete_column(path)
            elif op == "rename":
                update.rename_column(path, f"r{b}")
            elif op == "promote":
                update.update_column(path, LongType())
            elif op == "optional":
                update.make_column_optional(path)
            else:
                update.move_before(path, other)
        except ValidationError:
            continue  # refused changes leave the update usable
    try:
        updates, requirements = update.updates_and_requirements()
    except ValidationError:
        return  # e.g. an identifier field made optional: refused as a whole
    new = update_table_metadata(m, updates, requirements)
    schema = new.schema()
    ids = list(schema._all_ids())
    assert len(ids) == len(set(ids))
    assert new.last_column_id >= schema.highest_field_id
    # surviving columns keep their ids and only widen
    for field_id in schema.field_ids & base.field_ids:
        before, after = base.find_type(field_id), schema.find_type(field_id)
        if before.is_primitive:
            assert promotion_allowed(before, after, version)
    assert TableMetadata.from_json(new.to_json()) == new


# ---- union by name


def test_union_by_name_adds_widens_and_relaxes() -> None:
    m = table()
    incoming = Schema(
        # narrower: id stays long
        NestedField(100, "id", IntegerType(), True),
        NestedField(101, "i", LongType(), True, doc="widened"),
        NestedField(102, "s", StructType(NestedField(103, "c", StringType()))),
        NestedField(104, "pts", ListType(105, StructType(NestedField(106, "x", DoubleType())))),
        NestedField(107, "new", MapType(108, StringType(), 109, IntegerType())),
    )
    _, schema = evolve(m, lambda u: u.union_by_name(incoming))
    base = m.schema()
    assert schema.find_type("id") == LongType() and schema.find_field("id").required
    assert schema.find_type("i") == LongType() and schema.find_field("i").doc == "widened"
    assert not schema.find_field("i").required  # required in the new schema: never tightened
    assert schema.find_field("s.c").field_id > base.highest_field_id
    assert schema.find_type("pts.element.x") == DoubleType()
    new = schema.find_field("new")
    assert new.field_id > base.highest_field_id and not new.required
    assert isinstance(new.field_type, MapType) and new.field_type.key_id > new.field_id
    # every existing column is still there with its id
    assert base.field_ids <= schema.field_ids


def test_union_by_name_refusals() -> None:
    with pytest.raises(ValidationError, match="different kinds of type"):
        UpdateSchema(table()).union_by_name(Schema(NestedField(1, "s", StringType())))
    with pytest.raises(ValidationError, match="not a valid type promotion"):
        UpdateSchema(table()).union_by_name(Schema(NestedField(1, "data", IntegerType())))
