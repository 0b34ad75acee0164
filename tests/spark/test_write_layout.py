"""frazil.spark.write: the files it lays out and the overwrite modes (PySpark 3.5 and 4.x).

Data files are named as Java's OutputFileFactory names them, each holds one partition (checked
against partition values computed here in plain Python), roll at
``write.target-file-size-bytes``, follow the table's sort order; the clustering keys Spark
shuffles by group rows exactly as the partition transforms do; ``overwrite_mode="dynamic"``
replaces only the partitions written (any transform, as Java's ReplacePartitions).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.transforms import parse
from frazil.types import DateType, LongType, NestedField, StringType, TimestamptzType

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "kind", StringType()),
)
DAY_SPEC = PartitionSpec(PartitionField(2, 1000, parse("day"), "ts_day"))
START = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
# Java's OutputFileFactory: {partitionId:05d}-{taskId}-{operationId}-{fileCount:05d}.parquet
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
JAVA_NAME = re.compile(rf"^(\d{{5}})-(\d+)-({UUID})-0-(\d{{5}})\.parquet$")


def rows(n: int, offset: int = 0, minutes: int = 37) -> pa.Table:
    ids = list(range(offset, offset + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": pa.array(
                [START + dt.timedelta(minutes=minutes * i) for i in ids],
                pa.timestamp("us", "UTC"),
            ),
            "kind": pa.array([f"k{i % 3}" for i in ids]),
        }
    )


def to_df(spark: Any, table: pa.Table, parts: int = 3) -> Any:
    # round-robin: every Spark partition holds rows of every day
    return spark.createDataFrame(
        table.to_pylist(), "id long, ts timestamp, kind string"
    ).repartition(parts)


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("layout", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def files_of(table: Any) -> list[Any]:
    return [t.file for t in table.scan().plan_files()]


def day_of(ts: dt.datetime) -> dt.date:
    return ts.astimezone(dt.timezone.utc).date()


def by_id(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("mode", ["hash", "none"])
def test_files_named_as_java_one_partition_each(spark: Any, catalog: Any, mode: str) -> None:
    import frazil.spark as fspark

    catalog.create_table(
        "db.t", SCHEMA, partition_spec=DAY_SPEC, properties={"write.distribution-mode": mode}
    )
    data = rows(300)
    fspark.write(to_df(spark, data), "db.t", catalog)
    table = catalog.load_table("db.t")
    assert by_id(table.scan().to_arrow()) == by_id(data)
    files = files_of(table)
    write_ids = set()
    for f in files:
        m = JAVA_NAME.match(Path(f.file_path).name)
        assert m is not None, f.file_path
        assert int(m.group(1)) < 3 or mode == "hash"  # the Spark partition id
        write_ids.add(m.group(3))
        # every row of the file is in the file's partition (days computed here)
        ts = pq.read_table(f.file_path.removeprefix("file:")).column("ts").to_pylist()
        assert {day_of(t) for t in ts} == {f.partition[0]}
        assert f.record_count == len(ts)
    assert len(write_ids) == 1  # one write, one operation id
    days = {day_of(t) for t in data.column("ts").to_pylist()}
    if mode == "hash":
        assert len(files) == len(days)  # clustered by the shuffle: one file per day
    else:
        assert len(days) < len(files) <= 3 * len(days)  # each task wrote the days it saw


def test_target_file_size(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    target = 32 * 1024
    catalog.create_table(
        "db.t",
        SCHEMA,
        properties={
            "write.target-file-size-bytes": str(target),
            "write.parquet.row-group-size-bytes": str(8 * 1024),
            "write.parquet.compression-codec": "uncompressed",
        },
    )
    data = rows(30_000)
    fspark.write(to_df(spark, data, parts=2), "db.t", catalog)
    table = catalog.load_table("db.t")
    files = files_of(table)
    assert sum(f.record_count for f in files) == data.num_rows
    assert len(files) >= 2 * (data.nbytes // (3 * target))  # rolled, not one file per task
    # the estimate may overshoot by about a row group
    assert all(f.file_size_in_bytes <= 2 * target for f in files)
    counts: dict[str, list[int]] = {}
    for f in files:
        m = JAVA_NAME.match(Path(f.file_path).name)
        assert m is not None
        counts.setdefault(m.group(2), []).append(int(m.group(4)))
    for numbers in counts.values():  # each task counts its files from 1
        assert sorted(numbers) == list(range(1, len(numbers) + 1))


def test_sorted_table_is_range_distributed_and_sorted(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark
    from frazil.spark.write import distribution_mode

    order = SortOrder(
        SortField(1, parse("identity"), SortDirection.DESC, NullOrder.NULLS_LAST), order_id=1
    )
    catalog.create_table("db.t", SCHEMA, partition_spec=DAY_SPEC, sort_order=order)
    table = catalog.load_table("db.t")
    assert distribution_mode(table.metadata) == "range"  # Java's default for a sorted table
    data = rows(500)
    fspark.write(to_df(spark, data), "db.t", catalog)
    table.refresh()
    assert by_id(table.scan().to_arrow()) == by_id(data)
    for f in files_of(table):
        ids = pq.read_table(f.file_path.removeprefix("file:")).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True)
        assert f.sort_order_id == 1


def test_cluster_keys_group_as_the_transforms(spark: Any) -> None:
    """The JVM expressions Spark shuffles by give rows the same key exactly when the
    partition transform gives them the same value (the transform values computed here)."""
    from pyspark.sql import functions as F

    from frazil.spark.write import _cluster_key

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    stamps = [
        epoch + dt.timedelta(minutes=m)
        for m in range(-3 * 24 * 60, 3 * 24 * 60, 13)  # around the epoch, negative days too
    ] + [
        dt.datetime(y, mo, 28, 23, 59, 59, 999999, dt.timezone.utc)
        for y in (1899, 2024)
        for mo in (1, 2, 12)
    ]
    data = [
        {"i": i, "ts": t, "d": t.date(), "n": i * 7 - 300, "s": f"é{i % 5}xyz"}
        for i, t in enumerate(stamps)
    ]
    df = spark.createDataFrame(data, "i int, ts timestamp, d date, n long, s string")
    types = {f.name: f.dataType for f in df.schema.fields}

    def micros(t: dt.datetime) -> int:
        return (t - epoch) // dt.timedelta(microseconds=1)

    def months(d: dt.date) -> int:
        return (d.year - 1970) * 12 + d.month - 1

    cases = {
        ("ts", "hour"): lambda r: micros(r["ts"]) // 3_600_000_000,
        ("ts", "day"): lambda r: micros(r["ts"]) // 86_400_000_000,
        ("ts", "month"): lambda r: months(r["ts"].astimezone(dt.timezone.utc).date()),
        ("ts", "year"): lambda r: r["ts"].astimezone(dt.timezone.utc).year,
        ("d", "day"): lambda r: r["d"],
        ("d", "month"): lambda r: months(r["d"]),
        ("d", "year"): lambda r: r["d"].year,
        ("n", "truncate[10]"): lambda r: r["n"] - r["n"] % 10,
        ("s", "truncate[2]"): lambda r: r["s"][:2],
    }
    frame = df.select(
        "*",
        *(_cluster_key(F.col(c), types[c], t).alias(f"k{i}") for i, (c, t) in enumerate(cases)),
    ).collect()
    for i, ((column, transform), expected) in enumerate(cases.items()):
        # the transform of the input values (collected timestamps are in local time)
        pairs = {(expected(data[r["i"]]), r[f"k{i}"]) for r in frame}
        values = {v for v, _ in pairs}
        keys = {k for _, k in pairs}
        # a bijection between transform values and keys
        assert len(pairs) == len(values) == len(keys), (column, transform)
        # ordered alike (range distribution)
        ranked = sorted(pairs)
        assert [k for _, k in ranked] == sorted(keys), (column, transform)
    # near the long minimum the key overflows: a null key, never an (ANSI) error
    from pyspark.sql.types import LongType as SparkLong

    extreme = spark.createDataFrame([(-(2**63),), (-(2**63) + 5,), (3,)], "n long")
    keys = extreme.select(_cluster_key(F.col("n"), SparkLong(), "truncate[10]")).collect()
    assert [k[0] for k in keys] == [None, None, 0]


@pytest.mark.parametrize("ansi", ["false", "true"])
def test_jvm_bucket_keys_equal_the_native_bucket(spark: Any, ansi: str) -> None:
    """The bucket keys Spark shuffles by, computed in JVM arithmetic, equal frazil's native
    bucket transform (Rust) for ints, longs (the extremes too), dates and timestamps, with and
    without ANSI overflow checks; null stays null."""
    import random

    from pyspark.sql import functions as F

    from frazil.spark.functions import _with_bucket_key as with_bucket_key
    from frazil.transforms import bucket

    rng = random.Random(7)
    longs = [0, 1, -1, 34, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), None]
    longs += [rng.randrange(-(2**63), 2**63) for _ in range(3000)]
    ints = [v if v is None else (v % 2**32) - 2**31 for v in longs]
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    micros = [None if v is None else v % (10**17) - 5 * 10**16 for v in longs]
    stamps = [None if m is None else epoch + dt.timedelta(microseconds=m) for m in micros]
    days = [None if v is None else v % 2_000_000 - 700_000 for v in longs]
    dates = [None if d is None else dt.date(1970, 1, 1) + dt.timedelta(days=d) for d in days]
    arrow = pa.table(
        {
            "n": pa.array(longs, pa.int64()),
            "i": pa.array(ints, pa.int32()),
            "ts": pa.array(stamps, pa.timestamp("us", "UTC")),
            "d": pa.array(dates, pa.date32()),
        }
    )
    old = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        rows = list(zip(longs, ints, stamps, dates, strict=True))
        df = spark.createDataFrame(rows, "n long, i int, ts timestamp, d date")
        types = {f.name: f.dataType for f in df.schema.fields}
        for n in (1, 16, 1000):
            keyed = df
            for c in ("n", "i", "ts", "d"):
                keyed = with_bucket_key(keyed, n, F.col(c), types[c], f"k_{c}")
            assert keyed.columns == ["n", "i", "ts", "d", "k_n", "k_i", "k_ts", "k_d"]
            got = keyed.collect()
            for c in ("n", "i", "ts", "d"):
                want = bucket(n, arrow.column(c)).to_pylist()
                assert [r[f"k_{c}"] for r in got] == want, (c, n)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", old)


def test_jvm_bucket_keys_match_the_spec_vectors(spark: Any) -> None:
    """The spec's hash vectors (its bucket transform table): with N = 2^31 - 1 the bucket is
    the hash's low 31 bits, so the JVM keys must give those hashes' low bits."""
    from frazil.spark.functions import _with_bucket_key as with_bucket_key

    vectors = {
        ("int", 34): 2017239379,
        ("long", 34): 2017239379,
        ("date", dt.date(2017, 11, 16)): -653330422,
        ("timestamp", dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=dt.timezone.utc)): -2047944441,
        (
            "timestamp",
            dt.datetime(2017, 11, 16, 22, 31, 8, 1, tzinfo=dt.timezone.utc),
        ): -1207196810,
    }
    for (sql_type, value), spec_hash in vectors.items():
        df = spark.createDataFrame([(value,)], f"v {sql_type}")
        keyed = with_bucket_key(df, 2**31 - 1, df["v"], df.schema["v"].dataType, "k")
        assert keyed.collect()[0]["k"] == spec_hash & 0x7FFF_FFFF, (sql_type, value)


def test_dynamic_overwrite_replaces_written_partitions(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    catalog.create_table("db.t", SCHEMA, partition_spec=DAY_SPEC)
    first = rows(200, minutes=60)  # 200 hours: days 2024-03-01 .. 2024-03-09
    fspark.write(to_df(spark, first), "db.t", catalog)
    table = catalog.load_table("db.t")
    before_files = {f.file_path for f in files_of(table)}

    # rows of two days only, with new ids
    replacement = pa.table(
        {
            "id": pa.array([5000 + i for i in range(40)], pa.int64()),
            "ts": pa.array(
                [START + dt.timedelta(days=2, hours=i % 24) for i in range(20)]
                + [START + dt.timedelta(days=5, hours=i % 24) for i in range(20)],
                pa.timestamp("us", "UTC"),
            ),
            "kind": pa.array(["new"] * 40),
        }
    )
    snap = fspark.write(
        to_df(spark, replacement),
        "db.t",
        catalog,
        mode="overwrite",
        overwrite_mode="dynamic",
        snapshot_properties={"job": "dyn"},
    )
    assert snap is not None
    assert snap.operation == "overwrite"
    assert snap.summary["replace-partitions"] == "true"
    assert snap.summary["job"] == "dyn"
    assert snap.summary["spark.app.id"] == spark.sparkContext.applicationId  # as Java's
    table.refresh()
    replaced_days = {day_of(START + dt.timedelta(days=d)) for d in (2, 5)}
    expected = [
        r for r in first.to_pylist() if day_of(r["ts"]) not in replaced_days
    ] + replacement.to_pylist()
    assert by_id(table.scan().to_arrow()) == sorted(expected, key=lambda r: r["id"])
    kept = before_files & {f.file_path for f in files_of(table)}
    assert len(kept) == len(before_files) - 2

    # an empty DataFrame replaces nothing and commits nothing (Java's DynamicOverwrite)
    empty = to_df(spark, replacement).limit(0)
    assert fspark.write(empty, "db.t", catalog, mode="overwrite", overwrite_mode="dynamic") is None
    table.refresh()
    assert table.current_snapshot().snapshot_id == snap.snapshot_id

    with pytest.raises(InvalidArgumentError, match="not a filter"):
        fspark.write(
            empty,
            "db.t",
            catalog,
            mode="overwrite",
            overwrite_mode="dynamic",
            overwrite_filter="id > 3",
        )
    with pytest.raises(InvalidArgumentError, match="static"):
        fspark.write(empty, "db.t", catalog, mode="overwrite", overwrite_mode="partial")


def test_dynamic_overwrite_on_a_branch_and_unpartitioned(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    catalog.create_table("db.u", SCHEMA, properties={"format-version": "2"})
    fspark.write(to_df(spark, rows(50)), "db.u", catalog)
    fspark.write(to_df(spark, rows(10, 100)), "db.u", catalog, branch="b")
    table = catalog.load_table("db.u")
    assert table.scan().use_ref("b").count() == 10
    # unpartitioned: the one partition is replaced (Java: every file of the spec)
    new = rows(7, 200)
    fspark.write(
        to_df(spark, new), "db.u", catalog, "overwrite", branch="b", overwrite_mode="dynamic"
    )
    table.refresh()
    assert by_id(table.scan().use_ref("b").to_arrow()) == by_id(new)
    assert table.scan().count() == 50  # main untouched


def test_date_partitions_dynamic(spark: Any, catalog: Any) -> None:
    """A date column's month partitions: clustering and dynamic overwrite by month."""
    import frazil.spark as fspark

    schema = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "d", DateType()))
    spec = PartitionSpec(PartitionField(2, 1000, parse("month"), "d_month"))
    catalog.create_table("db.m", schema, partition_spec=spec)
    base = dt.date(2024, 1, 1)
    data = [{"id": i, "d": base + dt.timedelta(days=i * 3)} for i in range(100)]  # ~10 months
    df = spark.createDataFrame(data, "id long, d date").repartition(2)
    fspark.write(df, "db.m", catalog)
    table = catalog.load_table("db.m")
    months = {(r["d"].year, r["d"].month) for r in data}
    assert len(files_of(table)) == len(months)
    new = [{"id": 1000 + i, "d": dt.date(2024, 2, 1 + i)} for i in range(5)]
    fspark.write(
        spark.createDataFrame(new, "id long, d date"),
        "db.m",
        catalog,
        mode="overwrite",
        overwrite_mode="dynamic",
    )
    table.refresh()
    expected = [r for r in data if (r["d"].year, r["d"].month) != (2024, 2)] + new
    got = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == sorted(expected, key=lambda r: r["id"])
