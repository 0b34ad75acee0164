"""frazil.spark.read equals frazil's local ``table.scan(...).to_arrow()``: every type (nested,
uuid, decimal, both timestamps, fixed), filters, snapshot ids, branches and tags, selected
fields and metadata columns, an evolved schema and spec, and an empty table."""

from __future__ import annotations

import datetime as dt
import uuid
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
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
    TimestampType,
    TimestamptzType,
    UUIDType,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "b", BooleanType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec", DecimalType(20, 4)),
    NestedField(7, "day", DateType()),
    NestedField(8, "ts", TimestampType()),
    NestedField(9, "tstz", TimestamptzType()),
    NestedField(10, "s", StringType()),
    NestedField(11, "bin", BinaryType()),
    NestedField(12, "u", UUIDType()),
    NestedField(13, "fx", FixedType(3)),
    NestedField(14, "tags", ListType(15, StringType(), element_required=False)),
    NestedField(16, "attrs", MapType(17, StringType(), 18, LongType(), value_required=False)),
    NestedField(
        19,
        "point",
        StructType(
            NestedField(20, "x", DoubleType()),
            NestedField(21, "label", StringType()),
            NestedField(22, "uid", UUIDType()),
        ),
    ),
)
SPEC = PartitionSpec(
    PartitionField(9, 1000, parse("day"), "tstz_day"),
    PartitionField(1, 1001, parse("bucket[4]"), "id_bucket"),
)


def rows(n: int, offset: int = 0) -> list[dict[str, Any]]:
    out = []
    t0 = dt.datetime(2024, 5, 1, 12)
    for k in range(offset, offset + n):
        null = k % 9 == 0
        out.append(
            {
                "id": k,
                "i": None if null else k % 100 - 50,
                "b": None if null else k % 2 == 0,
                "f": None if null else (float("nan") if k % 13 == 0 else k / 8),
                "d": None if null else k * 1.5,
                "dec": None if null else Decimal(k) / 8,
                "day": None if null else dt.date(1969, 12, 20) + dt.timedelta(days=k),
                "ts": None if null else t0 + dt.timedelta(hours=5 * k, microseconds=k),
                "tstz": (t0 + dt.timedelta(hours=k // 3)).replace(tzinfo=dt.timezone.utc),
                "s": None if null else f"s{k % 17}é",
                "bin": None if null else bytes([k % 256, 0, 255]),
                "u": None if null else uuid.UUID(int=k * 0x1234567890ABCDEF1234567),
                "fx": None if null else bytes([1, 2, k % 256]),
                "tags": None if null else [f"t{k % 3}", None] if k % 4 == 0 else [],
                "attrs": None if null else [("a", k), ("b", None)],
                "point": None
                if null
                else {"x": k / 3, "label": None if k % 5 == 0 else "p", "uid": uuid.UUID(int=k)},
            }
        )
    return out


def _storage(t: pa.DataType) -> pa.DataType:
    # uuids are given as 16 bytes (pyarrow cannot build its uuid extension from Python objects)
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_storage(f.type)) for f in t])
    return t


def _raw(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, dict):
        return {k: _raw(v) for k, v in value.items()}
    return value


def arrow(table: Any, data: list[dict[str, Any]]) -> pa.Table:
    from frazil.arrow_schema import schema_to_arrow

    schema = schema_to_arrow(table.schema())
    schema = pa.schema([f.with_type(_storage(f.type)) for f in schema])
    return pa.Table.from_pylist([_raw(r) for r in data], schema=schema)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cat = load_catalog("r", warehouse=str(tmp_path_factory.mktemp("read")))
    cat.create_namespace("db")
    return cat


@pytest.fixture(scope="module")
def table(catalog: Any) -> Any:
    t = catalog.create_table(
        "db.all_types", SCHEMA, partition_spec=SPEC, properties={"format-version": "2"}
    )
    t.append(arrow(t, rows(120)))
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "v1").commit()
    t.append(arrow(t, rows(80, 120)))
    return catalog.load_table("db.all_types")


def to_arrow(df: Any) -> pa.Table:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        if hasattr(df, "toArrow"):
            return df.toArrow()
        batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches) if batches else None


def canonical(value: Any) -> Any:
    """Values as Spark returns them: uuids as strings, maps as key/value pairs, NaN comparable."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, tuple):
        return tuple(canonical(v) for v in value)
    return value


def local_rows(scan: Any) -> list[dict[str, Any]]:
    out = [canonical(r) for r in scan.to_arrow().to_pylist()]
    return sorted(out, key=repr)


def spark_rows(df: Any) -> list[dict[str, Any]]:
    got = to_arrow(df)
    if got is None:
        return []
    return sorted((canonical(r) for r in got.to_pylist()), key=repr)


def test_types_and_schema(spark: Any, catalog: Any, table: Any) -> None:
    import frazil.spark as fspark

    df = fspark.read(spark, "db.all_types", catalog)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["ts"] == "timestamp_ntz"
    assert types["tstz"] == "timestamp"
    assert types["u"] == "string"
    assert types["fx"] == "binary"
    assert types["dec"] == "decimal(20,4)"
    assert types["attrs"] == "map<string,bigint>"
    assert types["point"] == "struct<x:double,label:string,uid:string>"
    assert not df.schema["id"].nullable
    assert spark_rows(df) == local_rows(table.scan())
    assert df.count() == 200
    # small tasks share Spark partitions, one per core
    assert df.rdd.getNumPartitions() == spark.sparkContext.defaultParallelism


@pytest.mark.parametrize(
    "row_filter",
    [
        "id < 50",
        "s = 's3é' OR i IS NULL",
        "tstz >= '2024-05-03T00:00:00+00:00'",
        "dec > 10.5 AND b = true",
        "f > 3.0",  # the spec's NaN: neither greater nor smaller than 3.0
        "day < '1970-01-01'",
        "s LIKE 's1%'",
    ],
)
def test_filters(spark: Any, catalog: Any, table: Any, row_filter: str) -> None:
    import frazil.spark as fspark

    # no uuid columns: frazil's reader cannot filter a batch holding uuids down to no rows
    # (pyarrow's filter fails building empty extension arrays), locally or in Spark
    fields = [f.name for f in SCHEMA.fields if f.name not in ("u", "point")]
    df = fspark.read(spark, "db.all_types", catalog, row_filter=row_filter, selected_fields=fields)
    expected = local_rows(table.scan(row_filter=row_filter, selected_fields=tuple(fields)))
    assert expected
    assert spark_rows(df) == expected


@pytest.mark.parametrize("shape", ["or", "and", "in"])
def test_huge_filters(spark: Any, catalog: Any, table: Any, shape: str) -> None:
    """Chains of 100k terms and a 100k-literal IN: the residual goes to the executors as text
    and is evaluated natively there (issue 26: these used to crash the process)."""
    import frazil.spark as fspark
    from frazil.expressions import And, EqualTo, In, NotEqualTo, Or

    keys = range(0, 200_000, 2)
    expr = {
        "or": lambda: Or(*[EqualTo("id", k) for k in keys]),
        "and": lambda: And(*[NotEqualTo("id", k) for k in keys]),
        "in": lambda: In("id", list(keys)),
    }[shape]()
    df = fspark.read(spark, "db.all_types", catalog, row_filter=expr, selected_fields=["id"])
    ids = sorted(r["id"] for r in df.collect())
    every = sorted(table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist())
    want = [i for i in every if (i % 2 == 0) == (shape != "and")]
    assert ids == want and want


def test_time_travel_and_selection(spark: Any, catalog: Any, table: Any) -> None:
    import frazil.spark as fspark

    first = table.snapshots()[0].snapshot_id
    df = fspark.read(spark, "db.all_types", catalog, snapshot_id=first)
    assert spark_rows(df) == local_rows(table.scan(snapshot_id=first))
    assert df.count() == 120
    df = fspark.read(spark, "db.all_types", catalog, ref="v1", selected_fields=["id", "point.x"])
    assert df.columns == ["id", "point"]
    assert spark_rows(df) == local_rows(table.scan(selected_fields=("id", "point.x")).use_ref("v1"))
    df = fspark.read(
        spark, "db.all_types", catalog, selected_fields=["s", "_file", "_pos", "_spec_id"]
    )
    assert spark_rows(df) == local_rows(
        table.scan(selected_fields=("s", "_file", "_pos", "_spec_id"))
    )


def test_evolved_schema_and_spec(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    t = catalog.create_table(
        "db.evolving", SCHEMA, partition_spec=SPEC, properties={"format-version": "3"}
    )
    t.append(arrow(t, rows(40)))
    with t.update_schema() as u:
        u.rename_column("s", "text")
        u.add_column("extra", LongType())
    with t.update_spec() as u:
        u.add_identity("i")
    t = catalog.load_table("db.evolving")
    more = arrow(t, [{**r, "text": r.pop("s"), "extra": 7} for r in rows(30, 40)])
    t.append(more)
    t = catalog.load_table("db.evolving")
    df = fspark.read(spark, "db.evolving", catalog)
    assert spark_rows(df) == local_rows(t.scan())
    f = "text = 's2é' OR extra = 7"
    sel = ("id", "text", "extra", "i", "tstz")  # no uuids (see test_filters)
    df = fspark.read(spark, "db.evolving", catalog, row_filter=f, selected_fields=sel)
    assert spark_rows(df) == local_rows(t.scan(row_filter=f, selected_fields=sel))


def test_empty_table(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    catalog.create_table("db.empty", SCHEMA)
    df = fspark.read(spark, "db.empty", catalog)
    assert df.count() == 0
    assert [f.name for f in df.schema.fields] == [f.name for f in SCHEMA.fields]


# ---------------------------------------------------------------------------------------------
# Spark's own Parquet reader for plans with nothing left for Iceberg's rules to do

PLAIN = Schema(
    *(f for f in SCHEMA.fields if f.name not in ("u", "point")),
    NestedField(
        19,
        "point",
        StructType(NestedField(20, "x", DoubleType()), NestedField(21, "label", StringType())),
    ),
)


def _plan_text(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _read_by_spark(df: Any) -> bool:
    return "FileScan parquet" in _plan_text(df)


@pytest.fixture(scope="module")
def plain(catalog: Any) -> Any:
    """A table of every type Spark's Parquet reader reads as Iceberg does, written before and
    after a rename, an added column (missing from the first files) and a dropped one."""
    t = catalog.create_table(
        "db.plain", PLAIN, partition_spec=SPEC, properties={"format-version": "2"}
    )
    t.append(arrow(t, rows(60)))
    with t.update_schema() as u:
        u.rename_column("s", "text")
        u.add_column("extra", LongType())
        u.delete_column("bin")
    t = catalog.load_table("db.plain")
    t.append(arrow(t, [{**r, "text": r.pop("s"), "extra": r["id"] * 3} for r in rows(40, 60)]))
    return catalog.load_table("db.plain")


def test_spark_reader_reads_what_frazil_reads(spark: Any, catalog: Any, plain: Any) -> None:
    import frazil.spark as fspark

    want = local_rows(plain.scan())
    assert len(want) == 100
    by = {r: fspark.read(spark, "db.plain", catalog, reader=r) for r in ("auto", "spark", "frazil")}
    assert _read_by_spark(by["auto"]) and _read_by_spark(by["spark"])
    assert not _read_by_spark(by["frazil"])
    for reader, df in by.items():
        assert df.columns == [f.name for f in plain.schema().fields], reader
        assert spark_rows(df) == want, reader
    # an older snapshot is read with its own schema (its files have `s` and `bin`)
    first = plain.snapshots()[0].snapshot_id
    df = fspark.read(spark, "db.plain", catalog, snapshot_id=first, reader="spark")
    assert spark_rows(df) == local_rows(plain.scan(snapshot_id=first))
    # a nested projection
    df = fspark.read(spark, "db.plain", catalog, selected_fields=["id", "point.x"], reader="spark")
    assert df.columns == ["id", "point"]
    assert spark_rows(df) == local_rows(plain.scan(selected_fields=("id", "point.x")))


def test_spark_reader_takes_filters_the_partitions_decide(
    spark: Any, catalog: Any, plain: Any
) -> None:
    import frazil.spark as fspark
    from frazil.exceptions import InvalidArgumentError

    decided = "tstz >= '2024-05-02T00:00:00+00:00'"  # whole days of day(tstz)
    df = fspark.read(spark, "db.plain", catalog, row_filter=decided)
    assert _read_by_spark(df)
    want = local_rows(plain.scan(row_filter=decided))
    assert want and len(want) < 100
    assert spark_rows(df) == want
    # rows must still be filtered: frazil's reader applies the spec's NaN and null rules
    for undecided in ("id < 50", "f > 3.0", "NOT (i < 0)"):
        df = fspark.read(spark, "db.plain", catalog, row_filter=undecided)
        assert not _read_by_spark(df)
        assert spark_rows(df) == local_rows(plain.scan(row_filter=undecided))
        with pytest.raises(InvalidArgumentError, match="residual filter"):
            fspark.read(spark, "db.plain", catalog, row_filter=undecided, reader="spark")


def test_spark_reader_refusals(spark: Any, catalog: Any, plain: Any, table: Any) -> None:
    """Each plan Spark's reader would read differently from Iceberg goes to frazil's reader
    (``reader="spark"`` says why), and ``auto`` still reads it right."""
    import frazil.spark as fspark
    from frazil.exceptions import InvalidArgumentError
    from frazil.metadata.name_mapping import (
        DEFAULT_NAME_MAPPING_PROPERTY,
        create_mapping_from_schema,
    )

    def refused(name: str, match: str, **kwargs: Any) -> None:
        with pytest.raises(InvalidArgumentError, match=match):
            fspark.read(spark, name, catalog, reader="spark", **kwargs)
        df = fspark.read(spark, name, catalog, **kwargs)
        assert not _read_by_spark(df)
        t = catalog.load_table(name)
        fields = tuple(kwargs.get("selected_fields", ("*",)))
        assert spark_rows(df) == local_rows(t.scan(selected_fields=fields))

    refused("db.all_types", "column 'u' is of type uuid")
    refused("db.plain", "metadata columns", selected_fields=["id", "_file", "_pos"])
    refused("db.plain", "split options", options={"split-size": "1000"})

    deleted = catalog.create_table(
        "db.plain_deletes",
        PLAIN,
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    deleted.append(arrow(deleted, rows(50)))
    deleted.delete("id < 5")
    refused("db.plain_deletes", "delete files")

    promoted = catalog.create_table("db.plain_promoted", PLAIN)
    promoted.append(arrow(promoted, rows(20)))
    with promoted.update_schema() as u:
        u.update_column("i", LongType())
    refused("db.plain_promoted", "promoted from int to long")

    mapped = catalog.create_table("db.plain_mapped", PLAIN)
    mapped.append(arrow(mapped, rows(20)))
    mapping = create_mapping_from_schema(mapped.schema()).to_json()
    with mapped.transaction() as tx:
        tx.set_properties({DEFAULT_NAME_MAPPING_PROPERTY: mapping})
    refused("db.plain_mapped", "name mapping")

    cased = catalog.create_table(
        "db.plain_cased", Schema(NestedField(1, "a", LongType()), NestedField(2, "A", LongType()))
    )
    cased.append(pa.table({"a": [1, 2], "A": [3, 4]}))
    refused("db.plain_cased", "differ only in case")

    # a partition directory named by a value holding `*`: Spark would glob the file's path
    globbed = catalog.create_table(
        "db.plain_globbed",
        Schema(NestedField(1, "k", StringType()), NestedField(2, "n", LongType())),
        partition_spec=PartitionSpec(PartitionField(1, 1000, parse("identity"), "k")),
    )
    globbed.append(pa.table({"k": ["a*b", "aXb", "a*b"], "n": [1, 2, 3]}))
    refused("db.plain_globbed", "glob character")

    spark.conf.set("spark.sql.files.ignoreMissingFiles", "true")
    try:
        refused("db.plain", "ignoreMissingFiles")
    finally:
        spark.conf.unset("spark.sql.files.ignoreMissingFiles")
    with pytest.raises(InvalidArgumentError, match="reader must be one of"):
        fspark.read(spark, "db.plain", catalog, reader="jvm")


def test_spark_reader_names_the_table_of_a_missing_file(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark
    from frazil.exceptions import FrazilIOError

    t = catalog.create_table("db.plain_missing", PLAIN)
    t.append(arrow(t, rows(10)))
    (task,) = t.scan().plan_files()
    path = task.file.file_path
    Path(path.removeprefix("file:")).unlink()
    with pytest.raises(FrazilIOError, match=r"db\.plain_missing") as raised:
        fspark.read(spark, "db.plain_missing", catalog)
    assert path.removeprefix("file:") in str(raised.value)
