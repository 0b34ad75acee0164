"""ORC and Avro data files between frazil and the Java reference (Iceberg 1.10.2 in Spark 3.5).

Spark writes tables with ``write.format.default`` avro (and orc): partitioned, every Spark type
(decimal, uuid and fixed added through the Java API), nested structs, lists and maps (string
and int keys), a schema evolution (rename, int -> long, an added column) and a merge-on-read
DELETE whose position deletes are Avro (``write.delete.format.default``); frazil reads the same
rows as Spark's ``SELECT``. frazil writes ORC and Avro tables; Spark reads the rows frazil wrote.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import java_reference_session

from frazil.catalog import load_catalog
from frazil.schema import Schema
from frazil.table.static import StaticTable
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    UUIDType,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

COLUMNS = (
    "id bigint, b boolean, i int, f float, d double, dec decimal(10, 2), big decimal(30, 4), "
    "dt date, ts timestamp, tsn timestamp_ntz, s string, bin binary, "
    "st struct<x: int, y: string>, arr array<struct<p: int, q: string>>, "
    "m map<string, int>, mi map<int, string>"
)


def _row(i: int) -> str:
    s = "NULL" if i % 4 == 3 else f"'s{i % 3}'"
    return (
        f"({i}, {str(i % 2 == 0).lower()}, {i * 10}, {i}.5, {i}.25, {i}.10, {i}123456789.1234, "
        f"DATE '2024-01-0{1 + i % 3}', TIMESTAMP '2024-01-0{1 + i % 3} 0{i % 10}:00:00', "
        f"TIMESTAMP_NTZ '2023-12-31 10:00:00', {s}, X'0{i % 10}FF', "
        f"named_struct('x', {i}, 'y', 'y{i}'), array(named_struct('p', {i}, 'q', 'q')), "
        f"map('k{i}', {i}), map({i}, 'v{i}'))"
    )


def _sql(spark: Any, text: str) -> list[Any]:
    return spark.sql(text).collect()


def _java_table(spark: Any, location: Path) -> Any:
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(str(location))


def _create(spark: Any, warehouse: Path, fmt: str) -> None:
    name = f"ref.db.j_{fmt}"
    _sql(
        spark,
        f"CREATE TABLE {name} ({COLUMNS}) USING iceberg PARTITIONED BY (s, bucket(2, id)) "
        f"TBLPROPERTIES ('format-version'='2', 'write.format.default'='{fmt}', "
        f"'write.delete.format.default'='{fmt}', 'write.delete.mode'='merge-on-read')",
    )
    types = spark._jvm.org.apache.iceberg.types.Types
    table = _java_table(spark, warehouse / "db" / f"j_{fmt}")
    (
        table.updateSchema()
        .addColumn("u", types.UUIDType.get())
        .addColumn("fx", types.FixedType.ofLength(3))
        .commit()
    )
    _sql(spark, f"REFRESH TABLE {name}")
    values = ", ".join(
        _row(i)[:-1] + f", '{uuid.UUID(int=i * 7919)}', X'0{i % 10}0102')" for i in range(8)
    )
    _sql(spark, f"INSERT INTO {name} VALUES {values}")
    _sql(spark, f"ALTER TABLE {name} RENAME COLUMN s TO s_renamed")
    _sql(spark, f"ALTER TABLE {name} ALTER COLUMN i TYPE bigint")
    _sql(spark, f"ALTER TABLE {name} ADD COLUMN added string")
    values = ", ".join(
        _row(i)[:-1] + f", '{uuid.UUID(int=i)}', X'AABBCC', 'a{i}')" for i in range(8, 12)
    )
    _sql(spark, f"INSERT INTO {name} VALUES {values}")
    _sql(spark, f"DELETE FROM {name} WHERE id % 5 = 1")


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("formats-wh")
    spark = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        for fmt in ("avro", "orc"):
            _create(spark, warehouse, fmt)
        yield spark, warehouse
    finally:
        spark.stop()


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else v
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return ("tz", v.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat())
        return v.isoformat()
    if isinstance(v, dict):
        return {str(k): _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {str(k): _norm(x) for k, x in v}  # Arrow maps read as lists of pairs
        return [_norm(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    rows = [{k: _norm(v) for k, v in r.items()} for r in table.to_pylist()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _spark(spark: Any, sql: str) -> pa.Table:
    batches = spark.sql(sql)._collect_as_arrow()
    return pa.Table.from_batches(batches) if batches else pa.table({})


@pytest.mark.parametrize("fmt", ["avro", "orc"])
def test_java_written_tables_read_as_spark_reads_them(java: Any, fmt: str) -> None:
    spark, warehouse = java
    table = StaticTable.from_metadata(str(warehouse / "db" / f"j_{fmt}"))
    files = list(table.scan().plan_files())
    assert {f.file.file_format for f in files} == {fmt.upper()}
    deletes = {d.file_format for f in files for d in f.delete_files}
    assert deletes == {fmt.upper()}, "the DELETE wrote position delete files in the format"
    ours = table.scan().to_arrow()
    theirs = _spark(spark, f"SELECT * FROM ref.db.j_{fmt}")
    assert ours.column_names == theirs.column_names
    assert ours.num_rows == theirs.num_rows == 12 - 3  # ids 1, 6 and 11 deleted
    assert _rows(ours) == _rows(theirs)
    # a projection and a filter on a renamed, promoted column
    ours = table.scan(row_filter="i >= 40", selected_fields=("id", "i", "added")).to_arrow()
    theirs = _spark(spark, f"SELECT id, i, added FROM ref.db.j_{fmt} WHERE i >= 40")
    assert _rows(ours) == _rows(theirs)


SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(
        3, "st", StructType(NestedField(4, "x", LongType()), NestedField(5, "y", DateType()))
    ),
    NestedField(6, "l", ListType(7, DoubleType(), element_required=False)),
    NestedField(8, "m", MapType(9, StringType(), 10, LongType(), value_required=False)),
    NestedField(11, "mi", MapType(12, IntegerType(), 13, StringType(), value_required=False)),
    NestedField(14, "u", UUIDType()),
    NestedField(15, "fx", FixedType(3)),
    NestedField(16, "tz", TimestamptzType()),
    NestedField(17, "dec", DecimalType(20, 3)),
)


def _frazil_rows(n: int) -> pa.Table:
    def pick(i: int, v: Any) -> Any:
        return None if i % 5 == 4 else v

    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": [pick(i, f"s{i % 3}") for i in range(n)],
            "st": [pick(i, {"x": i, "y": dt.date(2020, 1, 1 + i % 28)}) for i in range(n)],
            "l": [pick(i, [i / 2, None]) for i in range(n)],
            "m": pa.array(
                [pick(i, [(f"k{i}", i)]) for i in range(n)], pa.map_(pa.string(), pa.int64())
            ),
            "mi": pa.array(
                [pick(i, [(i, f"v{i}")]) for i in range(n)], pa.map_(pa.int32(), pa.string())
            ),
            "u": pa.array([uuid.UUID(int=i * 31).bytes for i in range(n)], pa.binary(16)).cast(
                pa.uuid()
            ),
            "fx": pa.array([pick(i, bytes([i % 256, 1, 2])) for i in range(n)], pa.binary(3)),
            "tz": pa.array(
                [
                    pick(i, dt.datetime(2024, 1, 1, i % 24, tzinfo=dt.timezone.utc))
                    for i in range(n)
                ],
                pa.timestamp("us", "UTC"),
            ),
            "dec": pa.array(
                [pick(i, decimal.Decimal(i) / 8) for i in range(n)], pa.decimal128(20, 3)
            ),
        }
    )


@pytest.mark.parametrize("fmt", ["avro", "orc"])
def test_frazil_written_tables_read_by_spark(java: Any, fmt: str) -> None:
    spark, warehouse = java
    catalog = load_catalog("w", type="filesystem", warehouse=str(warehouse))
    ident = ("db", f"f_{fmt}")
    table = catalog.create_table(
        ident,
        SCHEMA,
        properties={"write.format.default": fmt, "format-version": "2"},
    )
    data = _frazil_rows(40)
    table.append(data)
    table = catalog.load_table(ident)
    files = [t.file for t in table.scan().plan_files()]
    assert files and all(
        f.file_format == fmt.upper() and f.file_path.endswith(f".{fmt}") for f in files
    )
    ours = table.scan().to_arrow()
    assert _rows(ours) == _rows(data)
    location = table.metadata.location.removeprefix("file://")
    # Spark reads uuid as a string and fixed as binary; _norm compares them as text and hex.
    theirs = pa.Table.from_batches(spark.read.format("iceberg").load(location)._collect_as_arrow())
    assert theirs.num_rows == 40
    assert _rows(theirs) == _rows(ours)
