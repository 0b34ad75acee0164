"""The Java reference (Iceberg 1.10.2 in Spark 3.5, Hadoop catalog over the same warehouse as
frazil's filesystem catalog) reads what frazil appends: the same rows, the same partition values
and metrics bounds in its ``files`` table, scans whose planned files for a filter are a subset
of all files holding every matching row; its own writes of the same rows land in the same
partition directories; its location providers give the same object-storage locations."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from peers import java_reference_session

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.manifest.content_file import DataFile, data_files_from_entries
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table.write.locations import LocationProvider
from frazil.transforms import parse
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestampType()),
    NestedField(3, "d", DateType()),
    NestedField(4, "s", StringType()),
    NestedField(5, "n", IntegerType()),
    NestedField(6, "dec", DecimalType(9, 2)),
    NestedField(7, "x", DoubleType()),
)
COLUMNS = ["id", "ts", "d", "s", "n", "dec", "x"]
# Partition field names as Spark's DDL names them, so both engines' paths compare.
SPEC = PartitionSpec(
    PartitionField(2, 1000, parse("day"), "ts_day"),
    PartitionField(1, 1001, parse("bucket[4]"), "id_bucket"),
    PartitionField(4, 1002, parse("truncate[2]"), "s_trunc"),
)
PATH_SPEC = PartitionSpec(
    PartitionField(2, 1000, parse("hour"), "ts_hour"),
    PartitionField(3, 1001, parse("identity"), "d"),
    PartitionField(4, 1002, parse("identity"), "s"),
    PartitionField(6, 1003, parse("identity"), "dec"),
    PartitionField(5, 1004, parse("truncate[10]"), "n_trunc"),
    PartitionField(7, 1005, parse("identity"), "x"),
)
PATH_DDL = "hours(ts), d, s, dec, truncate(10, n), x"


def rows(n: int = 240) -> pa.Table:
    base = dt.datetime(1969, 12, 31, 18, 15)
    strings = ["a b", "é/ü", "x+y=z", "ok", "100%", "~t", "*_.-"]
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "ts": pa.array(
                [None if i % 17 == 0 else base + dt.timedelta(minutes=41 * i) for i in range(n)],
                pa.timestamp("us"),
            ),
            "d": pa.array(
                [
                    None if i % 19 == 0 else dt.date(1969, 12, 29) + dt.timedelta(days=i // 60)
                    for i in range(n)
                ],
                pa.date32(),
            ),
            "s": pa.array([None if i % 13 == 0 else strings[i % len(strings)] for i in range(n)]),
            "n": pa.array([None if i % 11 == 0 else (i % 40) - 20 for i in range(n)], pa.int32()),
            "dec": pa.array(
                [None if i % 7 == 0 else decimal.Decimal((i % 9) - 4) / 4 for i in range(n)],
                pa.decimal128(9, 2),
            ),
            "x": pa.array(
                [None if i % 9 == 0 else [0.5, -1.25, 1e7, 0.001, 2.0][i % 5] for i in range(n)]
            ),
        }
    )


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("write-wh")


@pytest.fixture(scope="module")
def spark(warehouse: Path) -> Any:
    session = java_reference_session(
        warehouse,
        **{
            "spark.sql.catalog.ref.cache-enabled": "false",
            "spark.sql.session.timeZone": "UTC",
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> Any:
    cat = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    cat.create_namespace_if_not_exists("db")
    return cat


def _java_table(spark: Any, name: str) -> Any:
    jvm = spark._jvm
    catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
        spark._jsc.hadoopConfiguration(), spark.conf.get("spark.sql.catalog.ref.warehouse")
    )
    return catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"))


def _local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def _live_files(table: Any) -> list[DataFile]:
    snap = table.current_snapshot()
    out = []
    for row in fm.read_manifest_list(table.io.read(snap.manifest_list)).to_pylist():
        entries = fm.read_manifest(table.io.read(row["manifest_path"]), row)
        out += [
            f
            for f in data_files_from_entries(entries, row["partition_spec_id"])
            if f.extra["status"] != 2
        ]
    return out


def _spark_rows(spark: Any, name: str) -> list[tuple[Any, ...]]:
    got = spark.sql(f"SELECT {', '.join(COLUMNS)} FROM ref.db.{name} ORDER BY id").collect()
    return [tuple(r) for r in got]


def _expected(data: pa.Table) -> list[tuple[Any, ...]]:
    return [tuple(r[c] for c in COLUMNS) for r in data.sort_by("id").to_pylist()]


def _planned(spark: Any, name: str, expression: Any) -> set[str]:
    scan = _java_table(spark, name).newScan().filter(expression)
    it = scan.planFiles().iterator()
    out = set()
    while it.hasNext():
        out.add(_local(str(it.next().file().location())))
    return out


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("partitioned", [False, True])
def test_java_reads_frazil_appends(
    spark: Any, catalog: Any, version: int, partitioned: bool
) -> None:
    name = f"app_{version}_{'p' if partitioned else 'u'}"
    table = catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_spec=SPEC if partitioned else PartitionSpec(),
        properties={"format-version": str(version), "write.target-file-size-bytes": "6000"},
    )
    data = rows()
    table.append(data)
    table.append(data.slice(0, 40).set_column(0, "id", pa.array(range(1000, 1040), pa.int64())))
    everything = pa.concat_tables(
        [data, data.slice(0, 40).set_column(0, "id", pa.array(range(1000, 1040), pa.int64()))]
    )

    # SELECT * ORDER BY id: exactly the rows frazil wrote (repr: NaN-free, exact types).
    assert repr(_spark_rows(spark, name)) == repr(_expected(everything))

    # The files table: same files, record counts, partition values and bounds.
    files = {_local(f.file_path): f for f in _live_files(table)}
    partition = "partition, " if partitioned else ""  # unpartitioned: no such column
    java = spark.sql(
        f"SELECT file_path, record_count, {partition}lower_bounds, upper_bounds, "
        f"null_value_counts FROM ref.db.{name}.files"
    ).collect()
    assert sorted(_local(r["file_path"]) for r in java) == sorted(files)
    for r in java:
        f = files[_local(r["file_path"])]
        assert r["record_count"] == f.record_count
        assert {k: bytes(v) for k, v in r["lower_bounds"].items()} == f.lower_bounds
        assert {k: bytes(v) for k, v in r["upper_bounds"].items()} == f.upper_bounds
        assert dict(r["null_value_counts"]) == f.null_value_counts
        if partitioned:
            p = r["partition"]
            assert (p["ts_day"], p["id_bucket"], p["s_trunc"]) == f.partition

    # Split offsets as Java's API reads them (its files table drops them when the projection
    # also has other metrics columns, for files of any writer).
    jt = _java_table(spark, name)
    offsets = {}
    for snapshot in jt.snapshots():
        it = snapshot.addedDataFiles(jt.io()).iterator()
        while it.hasNext():
            jf = it.next()
            offsets[_local(str(jf.location()))] = tuple(jf.splitOffsets())
    assert offsets == {path: f.split_offsets for path, f in files.items()}

    # Java's scans prune with frazil's metrics: a subset of the files, holding every match.
    E = spark._jvm.org.apache.iceberg.expressions.Expressions
    filters = [
        (E.greaterThan("id", 5), pc.field("id") > 5),
        (E.greaterThan("id", 230), pc.field("id") > 230),
        (E.lessThan("id", 10), pc.field("id") < 10),
        (E.equal("s", "ok"), pc.field("s") == "ok"),
        (
            E.lessThan("ts", "1969-12-31T23:00:00"),
            pc.field("ts") < pa.scalar(dt.datetime(1969, 12, 31, 23), pa.timestamp("us")),
        ),
        (E.isNull("n"), pc.field("n").is_null()),
        (
            E.greaterThanOrEqual("dec", "0.50"),
            pc.field("dec") >= pa.scalar(decimal.Decimal("0.50"), pa.decimal128(9, 2)),
        ),
    ]
    for java_filter, arrow_filter in filters:
        planned = _planned(spark, name, java_filter)
        assert planned <= set(files)
        needed = {path for path in files if pq.read_table(path).filter(arrow_filter).num_rows > 0}
        assert needed <= planned, str(java_filter)
    # and it does prune
    assert len(_planned(spark, name, E.greaterThan("id", 5000))) == 0


def test_same_partition_paths_as_java(spark: Any, catalog: Any) -> None:
    data = rows(120)
    ours = catalog.create_table("db.paths_fz", SCHEMA, partition_spec=PATH_SPEC)
    ours.append(data)
    spark.sql(
        "CREATE TABLE ref.db.paths_java (id bigint NOT NULL, ts timestamp_ntz, d date, s string, "
        f"n int, dec decimal(9, 2), x double) USING iceberg PARTITIONED BY ({PATH_DDL})"
    ).collect()
    frame = spark.createDataFrame(data.to_pylist(), schema=spark.table("ref.db.paths_java").schema)
    frame.writeTo("ref.db.paths_java").append()

    def dirs(files: list[str]) -> set[str]:
        return {_local(p).split("/data/", 1)[1].rsplit("/", 1)[0] for p in files}

    java_files = [
        r[0] for r in spark.sql("SELECT file_path FROM ref.db.paths_java.files").collect()
    ]
    assert dirs([f.file_path for f in _live_files(ours)]) == dirs(java_files)


@pytest.mark.parametrize(
    "props",
    [
        {"write.object-storage.enabled": "true"},
        {"write.object-storage.enabled": "true", "write.object-storage.partitioned-paths": "false"},
        {"write.object-storage.enabled": "true", "write.data.path": "s3://other/place"},
        {"write.data.path": "s3://other/place/"},
        {},
    ],
)
def test_locations_match_java(spark: Any, props: dict[str, str]) -> None:
    jvm = spark._jvm
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    location = "s3://bucket/warehouse/db/tbl"
    java = jvm.org.apache.iceberg.LocationProviders.locationsFor(location, jprops)
    ours = LocationProvider(location, props)
    for name in [
        "00000-0-abc-00001.parquet",
        "00007-3-6a1e0b3c-2f6e-4b8e-9a51-1d4f0c2e9f77-00042.parquet",
    ]:
        assert ours.new_data_location(name) == str(java.newDataLocation(name))
        # Java's newDataLocation(spec, partition, name) is newDataLocation("<path>/<name>"),
        # or ignores the partition when object storage leaves partition paths out.
        leaves_out = props.get("write.object-storage.enabled") and (
            props.get("write.object-storage.partitioned-paths") == "false"
        )
        expected = java.newDataLocation(name if leaves_out else "a=1/b=x+y/" + name)
        assert ours.new_data_location(name, "a=1/b=x+y") == str(expected)
