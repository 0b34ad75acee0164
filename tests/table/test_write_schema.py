"""Input checks before a write: Arrow data against the table schema (errors naming the column,
compatible casts, defaults), as the spec's "Default values" and PyIceberg's write checks say."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest

from frazil.arrow_schema import field_id_of
from frazil.exceptions import ValidationError
from frazil.schema import Schema
from frazil.table.write.conform import conform
from frazil.types import (
    BinaryType,
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
    TimestampType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

POINT = StructType(NestedField(11, "x", IntegerType(), True), NestedField(12, "y", StringType()))
SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "p", POINT),
    NestedField(3, "l", ListType(13, TimestampType(), True)),
    NestedField(4, "m", MapType(14, StringType(), 15, DoubleType(), True)),
    NestedField(5, "name", StringType()),
)
P_TYPE = pa.struct([("x", pa.int32()), ("y", pa.string())])


def run(table: pa.Table, schema: Schema = SCHEMA, **kw: object) -> pa.RecordBatch:
    c = conform(table.schema, schema, **kw)  # type: ignore[arg-type]
    out = c.convert(table.combine_chunks().to_batches()[0])
    out.validate(full=True)
    return out


ERRORS = [
    (pa.table({"name": ["a"]}), "required column 'id' is missing from the data"),
    (pa.table({"id": pa.array([1, None], pa.int64())}), "required column 'id' has 1 null value"),
    (
        pa.table({"id": pa.array(["1"])}),
        "column 'id' has Arrow type string, which cannot be written as the table's long",
    ),
    (pa.table({"id": [1], "extra": [1]}), "column 'extra' is not in the table schema"),
    (
        pa.table({"id": [1], "p": pa.array([{"x": None, "y": "a"}], P_TYPE)}),
        "required column 'p.x' has 1 null value",
    ),
    (
        pa.table({"id": [1], "p": pa.array([{"y": "a"}], pa.struct([("y", pa.string())]))}),
        "required column 'p.x' is missing from the data",
    ),
    (
        pa.table(
            {
                "id": [1],
                "p": pa.array(
                    [{"x": 1, "z": 2}], pa.struct([("x", pa.int32()), ("z", pa.int32())])
                ),
            }
        ),
        "column 'p.z' is not in the table schema",
    ),
    (
        pa.table({"id": [1], "p": pa.array([{"x": 1}], pa.struct([("x", pa.int64())]))}),
        "column 'p.x' has Arrow type int64, which cannot be written as the table's int",
    ),
    (
        pa.table({"id": [1], "l": pa.array([[None]], pa.list_(pa.timestamp("us")))}),
        "required column 'l.element' has 1 null value",
    ),
    (
        pa.table({"id": [1], "l": pa.array([[1]], pa.list_(pa.timestamp("us", "UTC")))}),
        "column 'l.element' has Arrow type timestamp[us, tz=UTC], which cannot be written as "
        "the table's timestamp (it has a time zone, the table's has none)",
    ),
    (
        pa.table({"id": [1], "l": pa.array([[1001]], pa.list_(pa.timestamp("ns")))}),
        "column 'l.element' has nanosecond timestamps that do not fit the table's microsecond",
    ),
    (
        pa.table({"id": [1], "m": pa.array([[("k", None)]], pa.map_(pa.string(), pa.float64()))}),
        "required column 'm.value' has 1 null value",
    ),
    (
        pa.table({"id": [1], "m": pa.array([1], pa.int32())}),
        "column 'm' has Arrow type int32, which cannot be written as the table's map",
    ),
    (pa.table({"id": [1], "ID": [2]}), "column 'ID' is not in the table schema"),
    (
        pa.table({"id": pa.array([None], pa.null())}),
        "required column 'id' has only nulls (Arrow type null)",
    ),
    (
        pa.table(
            [pa.array([1], pa.int64())],
            schema=pa.schema(
                [pa.field("renamed", pa.int64(), metadata={"PARQUET:field_id": "99"})]
            ),
        ),
        "column 'renamed' (field id 99) is not in the table schema",
    ),
]


@pytest.mark.parametrize(("table", "message"), ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_errors_name_the_column(table: pa.Table, message: str) -> None:
    with pytest.raises(ValidationError) as e:
        run(table)
    assert message in str(e.value)


CASTS = [
    (IntegerType(), pa.array([1, -2], pa.int8()), [1, -2]),
    (IntegerType(), pa.array([1, 65535], pa.uint16()), [1, 65535]),
    (LongType(), pa.array([1, 2], pa.int32()), [1, 2]),
    (LongType(), pa.array([1, 2**32 - 1], pa.uint32()), [1, 2**32 - 1]),
    (FloatType(), pa.array([1.5], pa.float16()), [1.5]),
    (DoubleType(), pa.array([1.5], pa.float32()), [1.5]),
    (
        DecimalType(10, 2),
        pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
        [decimal.Decimal("1.25")],
    ),
    (DateType(), pa.array([dt.date(1960, 1, 2)], pa.date64()), [dt.date(1960, 1, 2)]),
    (TimeType(), pa.array([3600], pa.time32("s")), [dt.time(1)]),
    (TimeType(), pa.array([1_000_000_000], pa.time64("ns")), [dt.time(0, 0, 1)]),
    (TimestampType(), pa.array([-1], pa.timestamp("s")), [dt.datetime(1969, 12, 31, 23, 59, 59)]),
    (TimestampType(), pa.array([1], pa.timestamp("ms")), [dt.datetime(1970, 1, 1, 0, 0, 0, 1000)]),
    (
        TimestampType(),
        pa.array([-3000], pa.timestamp("ns")),
        [dt.datetime(1969, 12, 31, 23, 59, 59, 999997)],
    ),
    (
        TimestamptzType(),
        pa.array([0], pa.timestamp("us", "Europe/Paris")),
        [dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)],
    ),
    (StringType(), pa.array(["a"], pa.large_string()), ["a"]),
    (StringType(), pa.array(["a"], pa.string_view()), ["a"]),
    (StringType(), pa.array(["a", "b", "a"]).dictionary_encode(), ["a", "b", "a"]),
    (BinaryType(), pa.array([b"a"], pa.binary_view()), [b"a"]),
    (BinaryType(), pa.array([b"ab"], pa.binary(2)), [b"ab"]),
    (FixedType(2), pa.array([b"ab"], pa.binary(2)), [b"ab"]),
    (UUIDType(), pa.array([uuid.UUID(int=1).bytes], pa.binary(16)), [uuid.UUID(int=1)]),
]


@pytest.mark.parametrize(
    ("ice", "values", "expected"), CASTS, ids=[str(c[1].type) + "->" + str(c[0]) for c in CASTS]
)
def test_compatible_types_are_cast(ice: object, values: pa.Array, expected: list) -> None:
    schema = Schema(NestedField(1, "c", ice, False))  # type: ignore[arg-type]
    out = run(pa.table({"c": values}), schema)
    assert out.column(0).to_pylist() == expected
    assert field_id_of(out.schema.field(0)) == 1


def test_lossy_ns_timestamps_truncate_when_asked() -> None:
    schema = Schema(NestedField(1, "ts", TimestampType()))
    out = run(
        pa.table({"ts": pa.array([1001], pa.timestamp("ns"))}),
        schema,
        downcast_ns_timestamp_to_us=True,
    )
    assert out.column(0).cast(pa.int64()).to_pylist() == [1]


def test_nested_reorder_missing_optional_and_field_ids() -> None:
    data = pa.table(
        {
            "name": ["a", "b"],
            "p": pa.array(
                [{"y": "q", "x": 1}, None], pa.struct([("y", pa.string()), ("x", pa.int16())])
            ),
            "id": pa.array([1, 2], pa.int32()),
            "m": pa.array([[("k", 1.0)], None], pa.map_(pa.large_string(), pa.float32())),
        }
    )
    out = run(data)
    assert out.schema.names == ["id", "p", "l", "m", "name"]
    assert out.to_pylist() == [
        {"id": 1, "p": {"x": 1, "y": "q"}, "l": None, "m": [("k", 1.0)], "name": "a"},
        {"id": 2, "p": None, "l": None, "m": None, "name": "b"},
    ]
    # Every field, nested ones included, carries its table field id.
    p = out.schema.field("p")
    assert [field_id_of(p.type.field(i)) for i in range(2)] == [11, 12]
    m = out.schema.field("m").type
    assert (field_id_of(m.key_field), field_id_of(m.item_field)) == (14, 15)
    assert not out.schema.field("id").nullable


def test_struct_child_required_only_where_struct_is_present() -> None:
    # A null struct may hide a null required child.
    p = pa.StructArray.from_arrays(
        [pa.array([1, None], pa.int32()), pa.array(["a", "b"])],
        names=["x", "y"],
        mask=pa.array([False, True]),
    )
    out = run(pa.table({"id": pa.array([1, 2], pa.int64()), "p": p}))
    assert out.column(1).to_pylist() == [{"x": 1, "y": "a"}, None]


def test_matched_by_field_id_over_name() -> None:
    field = pa.field("other_name", pa.int64(), False, metadata={"PARQUET:field_id": "1"})
    out = run(pa.table([pa.array([7], pa.int64())], schema=pa.schema([field])))
    assert out.column(0).to_pylist() == [7]
    assert out.schema.names[0] == "id"


def test_write_defaults_fill_missing_columns() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), True),
        NestedField(2, "level", IntegerType(), True, initial_default=3, write_default=5),
        NestedField(3, "tag", StringType(), False, write_default="x"),
        NestedField(
            4,
            "pt",
            StructType(NestedField(5, "a", IntegerType(), True, write_default=1)),
            False,
            write_default={},
        ),
        NestedField(6, "nothing", StringType()),
        NestedField(7, "u", UnknownType()),
    )
    out = run(pa.table({"id": pa.array([1, 2], pa.int64())}), schema)
    assert out.to_pylist() == [
        {"id": 1, "level": 5, "tag": "x", "pt": {"a": 1}, "nothing": None},
        {"id": 2, "level": 5, "tag": "x", "pt": {"a": 1}, "nothing": None},
    ]
    # unknown columns are not stored in data files
    assert "u" not in out.schema.names


def test_unknown_column_must_be_null() -> None:
    schema = Schema(NestedField(1, "u", UnknownType()))
    run(pa.table({"u": pa.nulls(2)}), schema)
    with pytest.raises(ValidationError, match="column 'u' is of type unknown and must be all null"):
        run(pa.table({"u": pa.array([1, None])}), schema)


def test_sliced_lists_and_maps_convert() -> None:
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "l": pa.array([[1], None, [2, 3]], pa.list_(pa.timestamp("ms"))),
            "m": pa.array([[("a", 1.0)], [("b", 2.0)], None], pa.map_(pa.string(), pa.float32())),
        }
    ).slice(1, 2)
    out = run(data)
    assert out.column("l").cast(pa.list_(pa.int64())).to_pylist() == [None, [2000, 3000]]
    assert out.column("m").to_pylist() == [[("b", 2.0)], None]
