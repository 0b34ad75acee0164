"""The ``frazil`` Python data source (PySpark 4.x; tests/spark/conftest.py leaves this module
out on 3.5): reads equal frazil's local scan, Spark's filters are pushed down (fewer files
planned, rows still exact), writes append and overwrite in one commit each."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "user_id", LongType(), True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "kind", StringType()),
    NestedField(4, "value", DoubleType()),
)
SPEC = PartitionSpec(PartitionField(3, 1000, parse("identity"), "kind"))


def events(n: int, offset: int = 0) -> pa.Table:
    start = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
    ids = range(offset, offset + n)
    return pa.table(
        {
            "user_id": pa.array(list(ids), pa.int64()),
            "ts": pa.array(
                [start + dt.timedelta(minutes=i) for i in ids], pa.timestamp("us", "UTC")
            ),
            "kind": pa.array([f"k{i % 4}" for i in ids]),
            "value": pa.array([i / 2 for i in ids]),
        }
    )


@pytest.fixture
def setup(spark: Any, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    import frazil.spark

    frazil.spark.register_data_source(spark, pushdown=True)
    cat = load_catalog("ds", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table("db.events", SCHEMA, partition_spec=SPEC)
    t.append(events(200))
    options = {"catalog": "ds", "catalog.warehouse": str(tmp_path)}
    return cat, options


def rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["user_id"])


def test_read(spark: Any, setup: Any) -> None:
    cat, options = setup
    df = spark.read.format("frazil").options(**options).load("db.events")
    assert rows(df.toArrow()) == rows(cat.load_table("db.events").scan().to_arrow())
    first = cat.load_table("db.events").current_snapshot().snapshot_id
    cat.load_table("db.events").append(events(10, 1000))
    old = spark.read.format("frazil").options(**options).option("snapshot-id", str(first))
    assert old.load("db.events").count() == 200
    assert spark.read.format("frazil").options(**options).load("db.events").count() == 210


def test_filter_pushdown(spark: Any, setup: Any) -> None:
    from pyspark.sql import functions as F

    from frazil.spark.datasource import FrazilReader

    cat, options = setup
    df = spark.read.format("frazil").options(**options).load("db.events")
    got = df.where((F.col("kind") == "k1") & (F.col("user_id") > 100)).toArrow()
    expected = cat.load_table("db.events").scan(row_filter="kind = 'k1' AND user_id > 100")
    assert rows(got) == rows(expected.to_arrow())
    # the pushed filters prune: one partition of four is planned
    reader = FrazilReader({**options, "path": "db.events"})
    from pyspark.sql.datasource import EqualTo, GreaterThan

    left = list(reader.pushFilters([EqualTo(("kind",), "k1"), GreaterThan(("value",), 3.0)]))
    assert left == [GreaterThan(("value",), 3.0)]  # doubles are re-checked by Spark
    assert len(reader.partitions()) == 1
    # floats, NaN and nulls stay exact
    got = df.where(F.col("value") >= 50.5).toArrow()
    assert rows(got) == rows(
        cat.load_table("db.events").scan(row_filter="value >= 50.5").to_arrow()
    )


def test_pushed_not_keeps_sql_meaning(spark: Any, setup: Any, tmp_path: Path) -> None:
    """Spark's filters are SQL's: NOT (kind = 'k1') is unknown, so not kept, for a null kind.
    frazil's expressions are the spec's (Not(EqualTo) keeps nulls), so a pushed NOT gains
    IS NOT NULL; the rows equal Spark's own evaluation of the same filter over the same rows."""
    from pyspark.sql import functions as F

    cat, options = setup
    t = cat.load_table("db.events")
    extra = events(8, 500).set_column(
        2, "kind", pa.array([None, "k1", None, "k2", None, None, "k1", "k3"])
    )
    t.append(extra.set_column(3, "value", pa.array([None, float("nan"), 1.0, None] * 2)))
    df = spark.read.format("frazil").options(**options).load("db.events")
    plain = spark.createDataFrame(t.scan().to_arrow())  # Spark evaluates the same rows itself
    for cond in (
        ~(F.col("kind") == "k1"),
        ~F.col("kind").isin("k1", "k2"),
        ~(F.col("value") < 3.0),
        ~(F.col("value") > 3.0),
        ~F.col("kind").startswith("k1"),
        ~F.col("kind").isNull(),
        F.col("value") > 90.0,
    ):
        want = sorted(r["user_id"] for r in plain.where(cond).collect())
        got = sorted(r["user_id"] for r in df.where(cond).collect())
        assert got == want, str(cond)


def test_write(spark: Any, setup: Any) -> None:
    cat, options = setup
    data = events(50, 500)
    df = spark.createDataFrame(
        data.to_pylist(), "user_id long, ts timestamp, kind string, value double"
    )
    df.write.format("frazil").options(**options).mode("append").save("db.events")
    t = cat.load_table("db.events")
    assert len(t.snapshots()) == 2
    assert t.scan().count() == 250
    df.write.format("frazil").options(**options).mode("overwrite").save("db.events")
    t = cat.load_table("db.events")
    assert t.current_snapshot().operation == "overwrite"
    assert rows(t.scan().to_arrow()) == rows(data)


def test_read_options_and_metadata_columns(spark: Any, setup: Any) -> None:
    from frazil.exceptions import InvalidArgumentError

    cat, options = setup
    t = cat.load_table("db.events")
    first = t.current_snapshot()
    t.manage_snapshots().create_tag(first.snapshot_id, "v1").commit()
    t.manage_snapshots().create_branch(first.snapshot_id, "audit").commit()
    cat.load_table("db.events").append(events(10, 1000))
    reader = spark.read.format("frazil").options(**options)
    assert (
        reader.option("as-of-timestamp", str(first.timestamp_ms)).load("db.events").count() == 200
    )
    assert spark.read.format("frazil").options(**options, tag="v1").load("db.events").count() == 200
    branch = spark.read.format("frazil").options(**options, branch="audit").load("db.events")
    assert branch.count() == 200
    assert spark.read.format("frazil").options(**options).load("db.events").count() == 210
    with pytest.raises(Exception, match="no tag named 'audit'"):
        spark.read.format("frazil").options(**options, tag="audit").load("db.events").collect()
    from frazil.spark.read import scan_for

    with pytest.raises(InvalidArgumentError, match="choose one of"):
        scan_for(cat.load_table("db.events"), snapshot_id=first.snapshot_id, tag="v1")

    cols = "user_id,kind,_file,_pos,_spec_id,_partition"
    df = spark.read.format("frazil").options(**options).option("selected-fields", cols)
    got = df.load("db.events").toArrow()
    expected = cat.load_table("db.events").scan(selected_fields=tuple(cols.split(",")))
    want = expected.to_arrow()
    assert got.column_names == want.column_names
    assert rows(got) == rows(want)


def test_splits(spark: Any, tmp_path: Path) -> None:
    """One file of ten row groups gives several partitions with the split-size option, and the
    same rows; many small files are combined into as few partitions as cores."""
    import pyarrow.parquet as pq

    import frazil.spark
    from frazil.spark.datasource import FrazilReader

    frazil.spark.register_data_source(spark, pushdown=True)
    cat = load_catalog("splits", warehouse=str(tmp_path))
    cat.create_namespace("db")
    options = {"catalog": "splits", "catalog.warehouse": str(tmp_path)}
    t = cat.create_table("db.one", SCHEMA, properties={"write.parquet.row-group-limit": "100"})
    # The writer spreads a large append's row groups over one file per core; this test needs
    # them in one file, so the append writes on one lane.
    from unittest import mock

    with mock.patch("frazil.table.write.writer._workers", return_value=1):
        t.append(events(1000))
    (task,) = cat.load_table("db.one").scan().plan_files()
    assert pq.ParquetFile(task.file.file_path).metadata.num_row_groups == 10
    size = task.file.file_size_in_bytes // 4
    reader = FrazilReader({**options, "path": "db.one", "split-size": str(size)})
    assert len(reader.partitions()) >= 4
    df = spark.read.format("frazil").options(**options, **{"split-size": str(size)}).load("db.one")
    assert rows(df.toArrow()) == rows(pq.read_table(task.file.file_path))

    t = cat.create_table("db.many", SCHEMA)
    for k in range(10):
        t.append(events(20, 20 * k))
    reader = FrazilReader({**options, "path": "db.many", "parallelism": "2"})
    assert len(reader.partitions()) == 2
    df = spark.read.format("frazil").options(**options).load("db.many")
    assert rows(df.toArrow()) == rows(cat.load_table("db.many").scan().to_arrow())


def test_read_empty_table(spark: Any, setup: Any) -> None:
    cat, options = setup
    cat.create_table("db.nothing", SCHEMA)
    df = spark.read.format("frazil").options(**options).load("db.nothing")
    assert df.count() == 0
    assert df.columns == [f.name for f in SCHEMA.fields]
