"""frazil.spark.write against the Java reference (Iceberg 1.10.2 in PySpark 3.5):

- file names: the Java reference's own Spark writes name files as frazil does
  (``<partition id:05d>-<task attempt id>-<operation id>-<count:05d>.parquet``);
- a dynamic overwrite by frazil leaves the rows and the delete files the Java reference's own
  dynamic overwrite (``overwritePartitions``) leaves on a twin table, and Java reads frazil's
  table as such;
- a sorted table written by frazil (range distribution, sorted files) reads identically in Java;
- a task attempt that fails after writing its files: Java reads exactly the DataFrame's rows,
  and no file of the failed attempt is left.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore:distutils Version classes:DeprecationWarning"),
]

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
JAVA_NAME = re.compile(rf"^(\d{{5}})-(\d+)-({UUID})-0-(\d{{5}})\.parquet$")
EVENTS = (
    "SELECT id, id * 7919 % 1000 AS user_id, timestamp_seconds(1709251200 + id * 977) AS ts, "
    "concat('k', id % 3) AS kind FROM range(0, {n})"
)
DDL = "(id bigint, user_id bigint, ts timestamp, kind string)"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("spark-write-java")
    spark = java_reference_session(
        warehouse,
        **{
            "spark.sql.catalog.ref.cache-enabled": "false",
            # up to four attempts per task (when this module launches the session)
            "spark.master": "local[2,4]",
            "spark.task.maxFailures": "4",
        },
    )
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ref.db")
    from frazil.catalog import load_catalog

    catalog = load_catalog("ref", type="hadoop", warehouse=str(warehouse))
    yield spark, catalog
    spark.stop()


def _rows(df: Any) -> list[Any]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _names(spark: Any, table: str) -> list[str]:
    paths = spark.sql(f"SELECT file_path FROM {table}.data_files").collect()
    return [os.path.basename(r[0]) for r in paths]


def _create(spark: Any, name: str, partitioning: str, extra: str = "") -> None:
    spark.sql(f"DROP TABLE IF EXISTS ref.db.{name}")
    spark.sql(
        f"CREATE TABLE ref.db.{name} {DDL} USING iceberg PARTITIONED BY ({partitioning}) "
        f"TBLPROPERTIES ('format-version'='2'{extra})"
    )


def test_file_names_as_java(env: Any) -> None:
    import frazil.spark as fspark

    spark, catalog = env
    df = spark.sql(EVENTS.format(n=3000)).repartition(3)
    for name in ("java_named", "frazil_named"):
        _create(spark, name, "days(ts), bucket(4, user_id)")
    df.writeTo("ref.db.java_named").append()
    fspark.write(df, "db.frazil_named", catalog)
    java, ours = _names(spark, "ref.db.java_named"), _names(spark, "ref.db.frazil_named")
    for names in (java, ours):
        assert names and all(JAVA_NAME.match(n) for n in names), names[:3]
        assert len({JAVA_NAME.match(n).group(3) for n in names}) == 1  # type: ignore[union-attr]
    # both cluster by the partition values (hash distribution): one file per partition
    assert len(ours) == len(java)
    assert _rows(spark.table("ref.db.frazil_named")) == _rows(spark.table("ref.db.java_named"))


def _live_deletes(spark: Any, table: str) -> list[Any]:
    """(partition, content, record count) of the live delete files, as Java lists them."""
    rows = spark.sql(f"SELECT partition, content, record_count FROM {table}.delete_files")
    return _rows(rows)


@pytest.mark.parametrize("version", [2, 3])
def test_dynamic_overwrite_as_java(env: Any, version: int) -> None:
    """Rows, snapshot and the delete files left: the replaced partitions' deletes (v2 position
    delete files, v3 deletion vectors) go with their data files, as in Java's
    ``overwritePartitions``; the other partitions' stay."""
    import frazil.spark as fspark

    spark, catalog = env
    base = spark.sql(EVENTS.format(n=2000))
    # new rows in two of the days (and not every bucket of them)
    new = (
        spark.sql(EVENTS.format(n=300))
        .where("id % 50 < 10")
        .selectExpr("id + 100000 AS id", "user_id", "ts + INTERVAL 3 DAYS AS ts", "'new' AS kind")
    )
    mor = ", 'write.delete.mode'='merge-on-read'"
    for name in ("java_dyn", "frazil_dyn"):
        _create(spark, name, "days(ts), bucket(4, user_id)", mor)
        spark.sql(f"ALTER TABLE ref.db.{name} SET TBLPROPERTIES ('format-version'='{version}')")
        base.writeTo(f"ref.db.{name}").append()
        spark.sql(f"DELETE FROM ref.db.{name} WHERE id % 13 = 0")
    before = _live_deletes(spark, "ref.db.java_dyn")
    assert before == _live_deletes(spark, "ref.db.frazil_dyn") and before
    new.writeTo("ref.db.java_dyn").overwritePartitions()
    snap = fspark.write(new, "db.frazil_dyn", catalog, mode="overwrite", overwrite_mode="dynamic")
    assert snap is not None and snap.operation == "overwrite"
    java_snap = spark.sql(
        "SELECT operation, summary FROM ref.db.java_dyn.snapshots ORDER BY committed_at DESC"
    ).first()
    assert java_snap["operation"] == snap.operation
    assert java_snap["summary"]["replace-partitions"] == snap.summary["replace-partitions"]
    app = spark.sparkContext.applicationId
    assert java_snap["summary"]["spark.app.id"] == snap.summary["spark.app.id"] == app
    got = _rows(spark.table("ref.db.frazil_dyn"))
    assert got == _rows(spark.table("ref.db.java_dyn"))
    assert len(got) < 2000 + new.count()  # some rows were replaced
    left = _live_deletes(spark, "ref.db.java_dyn")
    assert 0 < len(left) < len(before)  # Java dropped the replaced partitions' deletes
    assert _live_deletes(spark, "ref.db.frazil_dyn") == left


def test_sorted_table_reads_identically(env: Any) -> None:
    import frazil.spark as fspark

    spark, catalog = env
    _create(spark, "frazil_sorted", "days(ts)")
    spark.sql("ALTER TABLE ref.db.frazil_sorted WRITE ORDERED BY user_id DESC NULLS LAST, id")
    df = spark.sql(EVENTS.format(n=1500)).repartition(3)
    fspark.write(df, "db.frazil_sorted", catalog)
    assert _rows(spark.table("ref.db.frazil_sorted")) == _rows(df)
    # every file is sorted as the table asks (read back by Spark, file by file)
    files = spark.sql("SELECT file_path, sort_order_id FROM ref.db.frazil_sorted.data_files")
    for path, order_id in files.collect():
        assert order_id == 1
        users = [r[0] for r in spark.read.parquet(path).select("user_id").collect()]
        assert users == sorted(users, reverse=True)


def test_failed_attempt_never_committed(env: Any) -> None:
    import frazil.spark as fspark

    spark, catalog = env
    if not spark.sparkContext.master.startswith("local[2,"):
        pytest.skip("the session was launched without task retries")
    _create(spark, "frazil_retried", "days(ts)")

    def fail_first_attempt(files: list[Any]) -> None:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx.attemptNumber() == 0 and ctx.partitionId() == 0:
            raise RuntimeError("injected failure after writing")

    df = spark.sql(EVENTS.format(n=1000)).repartition(2)
    fspark.write(df, "db.frazil_retried", catalog, _executor_hook=fail_first_attempt)
    assert _rows(spark.table("ref.db.frazil_retried")) == _rows(df)
    table = catalog.load_table("db.frazil_retried")
    committed = {t.file.file_path.removeprefix("file:") for t in table.scan().plan_files()}
    root = Path(table.location().removeprefix("file:")) / "data"
    assert {str(p) for p in root.rglob("*.parquet")} == committed
