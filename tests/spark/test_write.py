"""frazil.spark.write: executors write the files, the driver commits once.

Round trips through frazil.spark.read and frazil's local reader (v2 and v3, partitioned by
day(ts) and bucket(16, user_id)), append vs overwrite (whole table, by partition filter, refused
for a filter that splits files), a task attempt that fails after writing its files (its files
are never committed and are deleted), and two concurrent writes (both land, one retried).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import UnsupportedError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import (
    DoubleType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

pytestmark = [
    pytest.mark.spark,
    # py4j and PySpark's result sockets are closed by the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "user_id", LongType(), True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "kind", StringType()),
    NestedField(4, "value", DoubleType()),
)
SPEC = PartitionSpec(
    PartitionField(2, 1000, parse("day"), "ts_day"),
    PartitionField(1, 1001, parse("bucket[16]"), "user_id_bucket"),
)
START = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def spark(spark_factory):
    # local[2,4]: up to four attempts per task, so a failed first attempt is retried
    session = spark_factory(
        "frazil-spark-write", **{"spark.master": "local[2,4]", "spark.task.maxFailures": "4"}
    )
    yield session
    session.stop()


def events(n: int, offset: int = 0) -> pa.Table:
    ids = list(range(offset, offset + n))
    return pa.table(
        {
            "user_id": pa.array([i * 7919 % 1000 for i in ids], pa.int64()),
            "ts": pa.array(
                [START + dt.timedelta(minutes=17 * i) for i in ids], pa.timestamp("us", "UTC")
            ),
            "kind": pa.array([None if i % 11 == 0 else f"k{i % 5}" for i in ids]),
            "value": pa.array([i / 4 for i in ids], pa.float64()),
        }
    )


def to_df(spark: Any, table: pa.Table) -> Any:
    schema = "user_id long, ts timestamp, kind string, value double"
    return spark.createDataFrame(table.to_pylist(), schema).repartition(3)


def to_arrow(df: Any) -> pa.Table:
    """A Spark DataFrame collected as Arrow (PySpark 3.5 has no public toArrow)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        if hasattr(df, "toArrow"):
            return df.toArrow()
        return pa.Table.from_batches(df._collect_as_arrow(), schema=None)


def sorted_rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: (r["user_id"], r["ts"], r["value"]))


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def make_table(catalog: Any, version: int = 2, spec: PartitionSpec = SPEC, **props: str) -> Any:
    return catalog.create_table(
        "db.events",
        SCHEMA,
        partition_spec=spec,
        properties={"format-version": str(version), **props},
    )


@pytest.mark.parametrize("version", [2, 3])
def test_round_trip(spark: Any, catalog: Any, version: int) -> None:
    import frazil.spark as fspark

    make_table(catalog, version)
    data = events(600)
    snap = fspark.write(to_df(spark, data), "db.events", catalog)
    assert snap.operation == "append"
    table = catalog.load_table("db.events")
    assert table.current_snapshot().snapshot_id == snap.snapshot_id
    assert len(table.snapshots()) == 1
    local = table.scan().to_arrow()
    assert sorted_rows(local) == sorted_rows(data)
    via_spark = to_arrow(fspark.read(spark, "db.events", catalog))
    assert sorted_rows(via_spark) == sorted_rows(data)
    # files are partitioned: one per (day, bucket) that has rows, clustered by the shuffle
    tasks = list(table.scan().plan_files())
    keys = {t.file.partition for t in tasks}
    assert len(tasks) == len(keys)
    for t in tasks:
        assert "ts_day=" in t.file.file_path and "user_id_bucket=" in t.file.file_path
    # the catalog may be given by properties too
    props = {"name": "w", **catalog.properties}
    fspark.write(to_df(spark, events(10, 600)), "db.events", props)
    assert catalog.load_table("db.events").scan().count() == 610


def test_unpartitioned_and_distribution_none(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    make_table(catalog, 2, PartitionSpec(), **{"write.distribution-mode": "none"})
    data = events(100)
    fspark.write(to_df(spark, data), "db.events", catalog)
    table = catalog.load_table("db.events")
    assert sorted_rows(table.scan().to_arrow()) == sorted_rows(data)
    assert len(list(table.scan().plan_files())) == 3  # one per Spark partition


def test_overwrite(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    make_table(catalog, 2)
    fspark.write(to_df(spark, events(300)), "db.events", catalog)
    new = events(200, 50)
    snap = fspark.write(to_df(spark, new), "db.events", catalog, mode="overwrite")
    assert snap.operation == "overwrite"
    table = catalog.load_table("db.events")
    assert sorted_rows(table.scan().to_arrow()) == sorted_rows(new)

    # by a filter selecting whole partitions: the day of 2024-03-01 is replaced
    day = "ts >= '2024-03-01T00:00:00+00:00' AND ts < '2024-03-02T00:00:00+00:00'"
    before = table.scan().to_arrow()
    first_day = table.scan(row_filter=day).to_arrow()
    assert 0 < first_day.num_rows < before.num_rows
    replacement = events(5, 0)  # rows of 2024-03-01
    fspark.write(
        to_df(spark, replacement), "db.events", catalog, mode="overwrite", overwrite_filter=day
    )
    table.refresh()
    kept = [r for r in before.to_pylist() if r not in first_day.to_pylist()]
    expected = sorted(
        kept + replacement.to_pylist(), key=lambda r: (r["user_id"], r["ts"], r["value"])
    )
    assert sorted_rows(table.scan().to_arrow()) == expected

    # a filter that matches some rows of a file and not others is refused (as Java's
    # overwriteByRowFilter), unless row-level deletes exist; nothing is left behind
    has_delete = hasattr(table.transaction(), "delete")
    if not has_delete:
        files_before = set(_data_files(table))
        with pytest.raises(UnsupportedError, match="only whole files"):
            fspark.write(
                to_df(spark, events(3, 5000)),
                "db.events",
                catalog,
                mode="overwrite",
                overwrite_filter="value > 300.1",
            )
        assert set(_data_files(table)) == files_before


def _data_files(table: Any) -> list[str]:
    root = Path(table.location().removeprefix("file:")) / "data"
    return sorted(str(p) for p in root.rglob("*.parquet"))


def test_failed_attempt_files_never_committed(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    make_table(catalog, 3)
    data = events(400)

    def fail_first_attempt(files: list[Any]) -> None:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx.attemptNumber() == 0 and ctx.partitionId() == 0:
            # the attempt wrote its files and dies without cleaning up (a killed executor)
            os._exit(3)
        if ctx.attemptNumber() == 0 and ctx.partitionId() == 1:
            raise RuntimeError("injected failure after writing")

    fspark.write(to_df(spark, data), "db.events", catalog, _executor_hook=fail_first_attempt)
    table = catalog.load_table("db.events")
    assert sorted_rows(table.scan().to_arrow()) == sorted_rows(data)
    committed = {t.file.file_path.removeprefix("file:") for t in table.scan().plan_files()}
    on_disk = set(_data_files(table))
    # the failed attempts' files are gone: every data file on disk is committed
    assert on_disk == committed


def test_failed_job_leaves_nothing(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    make_table(catalog, 2)

    def always_fail(files: list[Any]) -> None:
        from pyspark import TaskContext

        if TaskContext.get().partitionId() == 0:
            raise RuntimeError("injected failure")

    with pytest.raises(Exception, match="injected failure"):
        fspark.write(to_df(spark, events(200)), "db.events", catalog, _executor_hook=always_fail)
    table = catalog.load_table("db.events")
    assert table.current_snapshot() is None
    assert _data_files(table) == []


def test_concurrent_writes_both_commit(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    make_table(catalog, 2, **{"commit.retry.min-wait-ms": "10"})
    a, b = events(200), events(200, 200)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []
    snaps: list[Any] = []

    # both writes load the table before either commits, so one commit must retry
    from frazil.table import Table

    original = Table.transaction

    def synced(self: Any) -> Any:
        barrier.wait(timeout=120)
        return original(self)

    def run(data: pa.Table) -> None:
        try:
            snaps.append(fspark.write(to_df(spark, data), "db.events", catalog))
        except BaseException as e:
            errors.append(e)

    Table.transaction = synced  # type: ignore[method-assign]
    try:
        threads = [threading.Thread(target=run, args=(d,)) for d in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        Table.transaction = original  # type: ignore[method-assign]
    assert not errors, errors
    table = catalog.load_table("db.events")
    assert len(table.snapshots()) == 2
    assert sorted_rows(table.scan().to_arrow()) == sorted_rows(pa.concat_tables([a, b]))
    # the retried commit's snapshot has the other as parent
    parents = {s.parent_snapshot_id for s in table.snapshots()}
    assert None in parents and parents - {None} <= {s.snapshot_id for s in snaps}


def test_branch_and_properties(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    make_table(catalog, 2)
    fspark.write(to_df(spark, events(20)), "db.events", catalog)
    snap = fspark.write(
        to_df(spark, events(5, 100)),
        "db.events",
        catalog,
        snapshot_properties={"app": "test"},
        branch="audit",
    )
    table = catalog.load_table("db.events")
    assert snap.summary["app"] == "test"
    assert table.refs()["audit"].snapshot_id == snap.snapshot_id
    assert table.scan().count() == 20
    # a new branch starts without a parent (Java's SnapshotProducer), then grows from its head
    assert table.scan().use_ref("audit").count() == 5
    fspark.write(to_df(spark, events(7, 200)), "db.events", catalog, branch="audit")
    assert fspark.read(spark, "db.events", catalog, ref="audit").count() == 12
    assert fspark.read(spark, "db.events", catalog).count() == 20
