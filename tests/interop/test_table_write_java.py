"""The partition values and partition paths of frazil's appends (tests/table/test_table_write.py)
against the Java reference (Iceberg 1.10.2).

* Values: for every row of every data file frazil writes, Java's own transforms (``Transforms``
  through the FrazilOracle subprocess) compute the partition value of the row's source value;
  it equals the file's partition value in frazil's manifest. identity, bucket, truncate, year,
  month, day and hour over every type they apply to (time, uuid and fixed included).
* Paths: Spark with Iceberg's runtime writes the same rows into tables with the same specs; each
  row lands under the same partition directory (``name=human-value/...``) in both engines.

Rows hold nulls, negative numbers and times before 1970 (where floor division matters).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_reference import Err, JavaOracle, ReferenceUnavailable
from peers import java_reference_session, peer_missing
from test_write_java import _live_files, _local

from frazil import values
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
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    # py4j leaves its sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "l", LongType()),
    NestedField(4, "dec", DecimalType(9, 2)),
    NestedField(5, "d", DateType()),
    NestedField(6, "ts", TimestampType()),
    NestedField(7, "tstz", TimestamptzType()),
    NestedField(8, "s", StringType()),
    NestedField(9, "b", BinaryType()),
    NestedField(10, "bool", BooleanType()),
    NestedField(11, "f", FloatType()),
    NestedField(12, "x", DoubleType()),
    # Spark 3.5 cannot write these three; their values are checked against Java's transforms
    NestedField(13, "t", TimeType()),
    NestedField(14, "u", UUIDType()),
    NestedField(15, "fx", FixedType(4)),
)
SPARK_COLUMNS = ["id", "i", "l", "dec", "d", "ts", "tstz", "s", "b", "bool", "f", "x"]
SPARK_DDL = (
    "id bigint NOT NULL, i int, l bigint, dec decimal(9, 2), d date, ts timestamp_ntz, "
    "tstz timestamp, s string, b binary, bool boolean, f float, x double"
)

# (column, transform, partition field name as Spark's DDL names it). Each group is one table;
# a spec may hold only one of year/month/day/hour per column, hence four groups for the dates.
GROUPS: dict[str, list[tuple[str, str, str]]] = {
    "identity": [
        *((c, "identity", c) for c in ("i", "l", "dec", "d", "ts", "tstz", "s", "b", "bool")),
        ("f", "identity", "f"),
        ("x", "identity", "x"),
        ("d", "year", "d_year"),
        ("ts", "month", "ts_month"),
        ("tstz", "day", "tstz_day"),
    ],
    "bucket": [
        ("i", "bucket[7]", "i_bucket"),
        ("l", "bucket[5]", "l_bucket"),
        ("dec", "bucket[3]", "dec_bucket"),
        ("d", "bucket[4]", "d_bucket"),
        ("ts", "bucket[6]", "ts_bucket"),
        ("tstz", "bucket[2]", "tstz_bucket"),
        ("s", "bucket[8]", "s_bucket"),
        ("b", "bucket[9]", "b_bucket"),
        ("d", "month", "d_month"),
        ("ts", "day", "ts_day"),
        ("tstz", "hour", "tstz_hour"),
    ],
    "truncate": [
        ("i", "truncate[10]", "i_trunc"),
        ("l", "truncate[100]", "l_trunc"),
        ("dec", "truncate[50]", "dec_trunc"),
        ("s", "truncate[2]", "s_trunc"),
        ("b", "truncate[3]", "b_trunc"),
        ("d", "day", "d_day"),
        ("ts", "hour", "ts_hour"),
        ("tstz", "year", "tstz_year"),
    ],
    "time": [("ts", "year", "ts_year"), ("tstz", "month", "tstz_month")],
}
# Types Spark cannot write: values only (against Java's transforms).
JAVA_ONLY_GROUP = [
    ("t", "identity", "t"),
    ("u", "identity", "u"),
    ("fx", "identity", "fx"),
    ("t", "bucket[5]", "t_bucket"),
    ("u", "bucket[3]", "u_bucket"),
    ("fx", "bucket[4]", "fx_bucket"),
]
SPARK_DDL_TRANSFORM = {
    "identity": "{c}",
    "year": "years({c})",
    "month": "months({c})",
    "day": "days({c})",
    "hour": "hours({c})",
}


def _spec(fields: list[tuple[str, str, str]]) -> PartitionSpec:
    return PartitionSpec(
        *(
            PartitionField(SCHEMA.find_field(c).field_id, 1000 + i, parse(t), name)
            for i, (c, t, name) in enumerate(fields)
        )
    )


def _spark_partitioning(fields: list[tuple[str, str, str]]) -> str:
    out = []
    for column, transform, _ in fields:
        if "[" in transform:
            kind, arg = transform.rstrip("]").split("[")
            out.append(f"{kind}({arg}, {column})")
        else:
            out.append(SPARK_DDL_TRANSFORM[transform].format(c=column))
    return ", ".join(out)


def rows(n: int = 64) -> pa.Table:
    base = dt.datetime(1969, 12, 30, 22, 50)
    strings = ["a b", "é/ü", "x+y=z", "ok", "100%", "~t", "", "日本語テキスト"]
    floats = [0.5, -1.25, 3.0, 1e7, 0.001, -2.0]

    def maybe(i: int, every: int, value: Any) -> Any:
        return None if i % every == 0 else value

    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "i": pa.array([maybe(i, 11, (i * 37) % 200 - 100) for i in range(n)], pa.int32()),
            "l": pa.array(
                [maybe(i, 13, (i * 7919) % 100_003 * (-1) ** i * 10**9) for i in range(n)],
                pa.int64(),
            ),
            "dec": pa.array(
                [maybe(i, 7, decimal.Decimal((i * 29) % 400 - 200) / 4) for i in range(n)],
                pa.decimal128(9, 2),
            ),
            "d": pa.array(
                [maybe(i, 9, dt.date(1969, 12, 3) + dt.timedelta(days=23 * i)) for i in range(n)],
                pa.date32(),
            ),
            "ts": pa.array(
                [maybe(i, 17, base + dt.timedelta(minutes=1777 * i)) for i in range(n)],
                pa.timestamp("us"),
            ),
            "tstz": pa.array(
                [
                    maybe(i, 19, base - dt.timedelta(hours=397 * i, microseconds=i))
                    for i in range(n)
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "s": pa.array([maybe(i, 5, strings[i % len(strings)]) for i in range(n)]),
            "b": pa.array(
                [maybe(i, 6, bytes([(i * 31 + k) % 256 for k in range(i % 5)])) for i in range(n)],
                pa.binary(),
            ),
            "bool": pa.array([maybe(i, 4, i % 3 == 0) for i in range(n)], pa.bool_()),
            "f": pa.array([maybe(i, 8, floats[i % len(floats)]) for i in range(n)], pa.float32()),
            "x": pa.array([maybe(i, 10, floats[(i + 2) % len(floats)]) for i in range(n)]),
            "t": pa.array(
                [maybe(i, 3, dt.time(i % 24, (i * 7) % 60, i % 60, i * 1001)) for i in range(n)],
                pa.time64("us"),
            ),
            "u": pa.array(
                [
                    maybe(i, 12, uuid.UUID(int=(i * 0x9E3779B97F4A7C15) % 2**128).bytes)
                    for i in range(n)
                ],
                pa.binary(16),
            ),
            "fx": pa.array(
                [maybe(i, 14, bytes([i, 255 - i, i * 3 % 256, 7])) for i in range(n)], pa.binary(4)
            ),
        }
    )


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("table-write-java")


@pytest.fixture(scope="module")
def spark(warehouse: Path) -> Any:
    session = java_reference_session(warehouse / "java")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def oracle() -> Any:
    try:
        with JavaOracle() as o:
            yield o
    except ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(warehouse / "frazil"))
    cat.create_namespace("db")
    return cat


def _partition_dir(path: str) -> str:
    return _local(path).split("/data/", 1)[1].rsplit("/", 1)[0]


def _frazil_write(catalog: Any, name: str, fields: list[tuple[str, str, str]]) -> Any:
    table = catalog.create_table(("db", name), SCHEMA, partition_spec=_spec(fields))
    table.append(rows())
    return table


def _source_json(value: Any, type_: Any) -> str:
    return "null" if value is None else json.dumps(values.to_json(value, type_))


@pytest.mark.parametrize("group", [*GROUPS, "java_only"])
def test_partition_values_are_java_transforms_of_the_rows(
    catalog: Any, oracle: Any, group: str
) -> None:
    fields = JAVA_ONLY_GROUP if group == "java_only" else GROUPS[group]
    table = _frazil_write(catalog, f"values_{group}", fields)
    spec = table.spec()
    requests, ours = [], []
    files = _live_files(table)
    for f in files:
        content = pq.read_table(_local(f.file_path)).to_pylist()
        assert len(f.partition) == len(fields)
        for row in content:
            for pf, value in zip(spec.fields, f.partition, strict=True):
                source = SCHEMA.find_field(pf.source_id)
                result_type = pf.transform.result_type(source.field_type)
                requests.append(
                    (
                        source.field_type.to_json(),
                        str(pf.transform),
                        _source_json(row[source.name], source.field_type),
                    )
                )
                ours.append((row["id"], pf.name, value, result_type))
    assert sum(f.record_count for f in files) == rows().num_rows
    answers = oracle.transform(requests)
    for (row_id, name, value, result_type), answer in zip(ours, answers, strict=True):
        assert not isinstance(answer, Err), f"row {row_id}, {name}: Java refused: {answer}"
        java = json.loads(answer.split("\t", 1)[1])
        theirs = None if java is None else values.from_json(java, result_type)
        assert value == theirs, f"row {row_id}, {name}: frazil {value!r}, Java {theirs!r}"


@pytest.mark.parametrize("group", list(GROUPS))
def test_rows_land_in_the_partition_directories_java_writes(
    spark: Any, catalog: Any, group: str
) -> None:
    fields = GROUPS[group]
    table = _frazil_write(catalog, f"paths_{group}", fields)
    ours: dict[int, str] = {}
    for f in _live_files(table):
        for row_id in pq.read_table(_local(f.file_path), columns=["id"])["id"].to_pylist():
            ours[row_id] = _partition_dir(f.file_path)

    name = f"ref.db.paths_{group}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ref.db").collect()
    spark.sql(
        f"CREATE TABLE {name} ({SPARK_DDL}) USING iceberg "
        f"PARTITIONED BY ({_spark_partitioning(fields)}) "
        "TBLPROPERTIES ('write.spark.fanout.enabled'='true')"
    ).collect()
    java_spec = [
        (f.name(), str(f.transform()))
        for f in spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, name
        )
        .spec()
        .fields()
    ]
    assert java_spec == [(n, t) for _, t, n in fields]
    data = rows().select(SPARK_COLUMNS)
    frame = spark.createDataFrame(data.to_pylist(), schema=spark.table(name).schema)
    frame.writeTo(name).append()
    theirs = {
        r["id"]: _partition_dir(r["_file"])
        for r in spark.sql(f"SELECT id, _file FROM {name}").collect()
    }
    assert len(theirs) == data.num_rows
    differ = {i: (ours[i], theirs[i]) for i in theirs if ours.get(i) != theirs[i]}
    assert not differ, f"{len(differ)} rows differ (frazil, Java):\n" + "\n".join(
        f"{i}:\n  {a}\n  {b}" for i, (a, b) in sorted(differ.items())[:4]
    )
