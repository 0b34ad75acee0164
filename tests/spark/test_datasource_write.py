"""Writes through the ``frazil`` Python data source (PySpark 4.x; conftest.py leaves this module
out on 3.5): append, static overwrite (whole and by ``overwrite-filter``), dynamic overwrite,
branches, snapshot properties, files clustered by partition and named as Java names them, and
a task attempt that fails after writing its files (never committed, its files deleted).
Expected rows are computed here from the input."""

from __future__ import annotations

import datetime as dt
import re
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType, TimestamptzType

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
SPEC = PartitionSpec(
    PartitionField(2, 1000, parse("day"), "ts_day"),
    PartitionField(3, 1001, parse("identity"), "kind"),
)
START = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
JAVA_NAME = re.compile(rf"^(\d{{5}})-(\d+)-({UUID})-0-(\d{{5}})\.parquet$")
DDL = "id long, ts timestamp, kind string"


@pytest.fixture(scope="module")
def spark(spark_factory):
    # local[2,4]: a failed task attempt is retried (up to four attempts)
    session = spark_factory(
        "frazil-datasource-write", **{"spark.master": "local[2,4]", "spark.task.maxFailures": "4"}
    )
    yield session
    session.stop()


def rows(n: int, offset: int = 0) -> pa.Table:
    ids = list(range(offset, offset + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": pa.array(
                [START + dt.timedelta(hours=5 * i) for i in ids], pa.timestamp("us", "UTC")
            ),
            "kind": pa.array([f"k{i % 2}" for i in ids]),
        }
    )


def key(r: dict[str, Any]) -> tuple[dt.date, str]:
    return r["ts"].astimezone(dt.timezone.utc).date(), r["kind"]


def by_id(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda r: r["id"])


@pytest.fixture
def env(spark: Any, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    import frazil.spark

    frazil.spark.register_data_source(spark)
    cat = load_catalog("dsw", warehouse=str(tmp_path))
    cat.create_namespace("db")
    cat.create_table("db.t", SCHEMA, partition_spec=SPEC)
    return cat, {"catalog": "dsw", "catalog.warehouse": str(tmp_path)}


def df_of(spark: Any, table: pa.Table, parts: int = 3) -> Any:
    return spark.createDataFrame(table.to_pylist(), DDL).repartition(parts)


def data_files(table: Any) -> list[Any]:
    return [t.file for t in table.scan().plan_files()]


def on_disk(table: Any) -> set[str]:
    root = Path(table.location().removeprefix("file:")) / "data"
    return {str(p) for p in root.rglob("*.parquet")}


def test_append_clustered_and_named_as_java(spark: Any, env: Any) -> None:
    cat, options = env
    data = rows(120)
    df_of(spark, data).write.format("frazil").options(**options).mode("append").save("db.t")
    table = cat.load_table("db.t")
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(data.to_pylist())
    files = data_files(table)
    partitions = {key(r) for r in data.to_pylist()}
    # three Spark partitions (round robin), each writes the partitions it saw, one file each
    assert len(partitions) < len(files) <= 3 * len(partitions)
    operations = set()
    counts: dict[str, list[int]] = {}
    for f in files:
        m = JAVA_NAME.match(Path(f.file_path).name)
        assert m is not None, f.file_path
        assert int(m.group(1)) < 3
        operations.add(m.group(3))
        counts.setdefault(m.group(2), []).append(int(m.group(4)))
        written = pq.read_table(f.file_path.removeprefix("file:")).to_pylist()
        assert {key(r) for r in written} == {tuple(f.partition)}  # one partition per file
    assert len(operations) == 1
    for numbers in counts.values():  # a task counts its files from 1 (Java's fileCount)
        assert sorted(numbers) == list(range(1, len(numbers) + 1))


def test_overwrites(spark: Any, env: Any) -> None:
    cat, options = env
    first = rows(100)
    df_of(spark, first).write.format("frazil").options(**options).mode("append").save("db.t")

    # dynamic: only the partitions of the new rows (day 2024-03-02, kind k1) are replaced
    new = pa.table(
        {
            "id": pa.array([1000, 1001], pa.int64()),
            "ts": pa.array(
                [START + dt.timedelta(days=1, hours=h) for h in (1, 2)], pa.timestamp("us", "UTC")
            ),
            "kind": pa.array(["k1", "k1"]),
        }
    )
    writer = df_of(spark, new, 1).write.format("frazil").options(**options)
    writer.option("overwrite-mode", "dynamic").mode("overwrite").save("db.t")
    table = cat.load_table("db.t")
    snap = table.current_snapshot()
    assert snap.operation == "overwrite" and snap.summary["replace-partitions"] == "true"
    replaced = {key(r) for r in new.to_pylist()}
    expected = [r for r in first.to_pylist() if key(r) not in replaced] + new.to_pylist()
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(expected)

    # static, by a filter on the partition source: kind k0 replaced, k1 kept
    k0 = rows(4, 500).filter(pa.compute.equal(rows(4, 500)["kind"], "k0"))
    writer = df_of(spark, k0, 1).write.format("frazil").options(**options)
    writer.option("overwrite-filter", "kind = 'k0'").mode("overwrite").save("db.t")
    table.refresh()
    expected = [r for r in expected if r["kind"] != "k0"] + k0.to_pylist()
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(expected)

    # static, whole table
    last = rows(9, 900)
    df_of(spark, last).write.format("frazil").options(**options).mode("overwrite").save("db.t")
    table.refresh()
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(last.to_pylist())
    assert table.current_snapshot().operation == "overwrite"


def test_branch_and_snapshot_properties(spark: Any, env: Any) -> None:
    cat, options = env
    df_of(spark, rows(20)).write.format("frazil").options(**options).mode("append").save("db.t")
    writer = df_of(spark, rows(6, 100)).write.format("frazil").options(**options)
    writer.option("branch", "audit").option("snapshot-property.app", "etl").option(
        "snapshot-property.run", "7"
    ).mode("append").save("db.t")
    table = cat.load_table("db.t")
    head = table.snapshot_by_name("audit")
    assert head.summary["app"] == "etl" and head.summary["run"] == "7"
    assert table.scan().count() == 20
    assert table.scan().use_ref("audit").count() == 6
    # dynamic overwrite on the branch
    new = rows(6, 100).filter(pa.compute.equal(rows(6, 100)["kind"], "k0"))
    w = df_of(spark, new, 1).write.format("frazil").options(**options).option("branch", "audit")
    w.option("overwrite-mode", "dynamic").mode("overwrite").save("db.t")
    table.refresh()
    assert table.scan().count() == 20
    assert table.scan().use_ref("audit").count() == 6


class _FailingWriterMixin:
    def write(self, iterator: Any) -> Any:
        from pyspark import TaskContext

        message = super().write(iterator)  # type: ignore[misc]
        ctx = TaskContext.get()
        if ctx is not None and ctx.attemptNumber() == 0 and ctx.partitionId() == 0:
            # the attempt wrote its files, then dies without reporting them
            written = "\n".join(message.paths)
            marker = Path(self.options["catalog.warehouse"]) / "failed-attempt"  # type: ignore[attr-defined]
            marker.write_text(written)
            raise RuntimeError("injected failure after writing")
        return message


def _failing_source() -> Any:
    from frazil.spark.datasource import FrazilDataSource, FrazilWriter

    class FailingWriter(_FailingWriterMixin, FrazilWriter):
        pass

    class FailingSource(FrazilDataSource):
        @classmethod
        def name(cls) -> str:
            return "frazil_failing"

        def writer(self, schema: Any, overwrite: bool) -> Any:
            return FailingWriter(dict(self.options), overwrite)

    return FailingSource


def test_failed_attempt_never_committed(spark: Any, env: Any) -> None:
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cat, options = env
    spark.dataSource.register(_failing_source())
    data = rows(80)
    df_of(spark, data).write.format("frazil_failing").options(**options).mode("append").save("db.t")
    table = cat.load_table("db.t")
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(data.to_pylist())
    committed = {f.file_path.removeprefix("file:") for f in data_files(table)}
    # the failed attempt wrote files, which were swept: every data file on disk is committed
    failed = (Path(options["catalog.warehouse"]) / "failed-attempt").read_text().split()
    assert failed and not {p.removeprefix("file:") for p in failed} & committed
    assert on_disk(table) == committed
    attempts = {JAVA_NAME.match(Path(p).name).group(2) for p in committed}  # type: ignore[union-attr]
    assert len(attempts) == 3  # three tasks, one committed attempt each


def test_failed_job_leaves_nothing(spark: Any, env: Any) -> None:
    """A task failing on every attempt fails the job: Spark calls ``abort`` with the other
    tasks' messages, whose files are deleted; nothing is committed."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType as SparkLong

    cat, options = env

    def fail_on_7(i):  # no type hints: PySpark 4 would infer an Arrow UDF from them
        if i == 7:
            raise RuntimeError("injected failure")
        return i

    boom = F.udf(fail_on_7, SparkLong())

    df = df_of(spark, rows(60)).withColumn("id", boom("id"))
    with pytest.raises(Exception, match="injected failure"):
        df.write.format("frazil").options(**options).mode("append").save("db.t")
    table = cat.load_table("db.t")
    assert table.current_snapshot() is None
    assert on_disk(table) == set()
