"""frazil.spark.read of tables the Java reference wrote (Iceberg 1.10.2 in PySpark 3.5) equals
Spark + Java's own read: v2 with position deletes (merge-on-read delete and update), v3 with
deletion vectors, and an evolved schema and partition spec (read by Spark's own Parquet reader,
frazil's plan handing it the files, and by frazil's reader); and the Java reference reads a
table written by frazil.spark.write (v3, day(ts) and bucket(16, user_id)) with the same rows.
"""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("spark-java")
    # no table cache: the reference sees frazil's commits at once
    spark = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    sql = spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS ref.db")
    sql(
        "CREATE TABLE ref.db.v2 (id bigint, data string, cat string) USING iceberg "
        "PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    sql("INSERT INTO ref.db.v2 SELECT id, concat('d', id), concat('c', id % 3) FROM range(0, 300)")
    sql("DELETE FROM ref.db.v2 WHERE id % 7 = 0")
    sql("UPDATE ref.db.v2 SET data = 'updated' WHERE id % 11 = 0")
    sql(
        "CREATE TABLE ref.db.v3 (id bigint, data string) USING iceberg "
        "PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version'='3', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    sql("INSERT INTO ref.db.v3 SELECT id, concat('v', id) FROM range(0, 400)")
    sql("DELETE FROM ref.db.v3 WHERE id % 5 = 1")
    sql("DELETE FROM ref.db.v3 WHERE id BETWEEN 100 AND 120")
    sql(
        "CREATE TABLE ref.db.evolved (id bigint, ts timestamp, s string) USING iceberg "
        "PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2')"
    )
    sql(
        "INSERT INTO ref.db.evolved SELECT id, timestamp_seconds(1700000000 + id * 3600), "
        "concat('s', id % 4) FROM range(0, 100)"
    )
    sql("ALTER TABLE ref.db.evolved RENAME COLUMN s TO label")
    sql("ALTER TABLE ref.db.evolved ADD COLUMN extra int")
    sql("ALTER TABLE ref.db.evolved DROP PARTITION FIELD days(ts)")
    sql("ALTER TABLE ref.db.evolved ADD PARTITION FIELD bucket(3, id)")
    sql(
        "INSERT INTO ref.db.evolved SELECT id, timestamp_seconds(1700000000 + id * 3600), "
        "concat('l', id % 4), cast(id as int) FROM range(100, 160)"
    )
    from frazil.catalog import load_catalog

    catalog = load_catalog("ref", type="hadoop", warehouse=str(warehouse))
    yield spark, catalog
    spark.stop()


def _rows(df: Any) -> list[Any]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


@pytest.mark.parametrize("name", ["v2", "v3", "evolved"])
def test_read_java_tables(env: Any, name: str) -> None:
    import frazil.spark as fspark

    spark, catalog = env
    got = fspark.read(spark, f"db.{name}", catalog)
    expected = spark.table(f"ref.db.{name}")
    assert got.columns == expected.columns
    assert _rows(got) == _rows(expected)
    assert got.count() < 400 or name == "evolved"
    # without deletes (the evolved table: renamed, added and dropped columns, two specs) the
    # files go to Spark's own Parquet reader, matched by field id; frazil's reader agrees
    plan = str(got._jdf.queryExecution().executedPlan().toString())
    assert ("FileScan parquet" in plan) == (name == "evolved")
    own = fspark.read(spark, f"db.{name}", catalog, reader="frazil")
    assert "FileScan parquet" not in str(own._jdf.queryExecution().executedPlan().toString())
    assert _rows(own) == _rows(expected)


def test_read_java_tables_filtered(env: Any) -> None:
    import frazil.spark as fspark

    spark, catalog = env
    got = fspark.read(spark, "db.v2", catalog, row_filter="cat = 'c1' AND id > 100")
    expected = spark.sql("SELECT * FROM ref.db.v2 WHERE cat = 'c1' AND id > 100")
    assert _rows(got) == _rows(expected)
    got = fspark.read(
        spark, "db.evolved", catalog, row_filter="extra IS NULL", selected_fields=["id", "label"]
    )
    expected = spark.sql("SELECT id, label FROM ref.db.evolved WHERE extra IS NULL")
    assert _rows(got) == _rows(expected)


def test_java_reads_frazil_spark_write(env: Any) -> None:
    import frazil.spark as fspark
    from frazil.partitioning import PartitionField, PartitionSpec
    from frazil.schema import Schema
    from frazil.transforms import parse
    from frazil.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

    spark, catalog = env
    schema = Schema(
        NestedField(1, "user_id", LongType(), True),
        NestedField(2, "ts", TimestamptzType()),
        NestedField(3, "kind", StringType()),
        NestedField(4, "value", DoubleType()),
    )
    spec = PartitionSpec(
        PartitionField(2, 1000, parse("day"), "ts_day"),
        PartitionField(1, 1001, parse("bucket[16]"), "user_id_bucket"),
    )
    catalog.create_table(
        "db.frazil_written", schema, partition_spec=spec, properties={"format-version": "3"}
    )
    df = spark.sql(
        "SELECT id * 7919 % 1000 AS user_id, timestamp_seconds(1709251200 + id * 1000) AS ts, "
        "CASE WHEN id % 9 = 0 THEN NULL ELSE concat('k', id % 5) END AS kind, "
        "id / 4.0D AS value FROM range(0, 2000)"
    )
    fspark.write(df, "db.frazil_written", catalog)
    fspark.write(df.where("user_id < 100"), "db.frazil_written", catalog)
    java = spark.table("ref.db.frazil_written")
    local = catalog.load_table("db.frazil_written").scan().to_arrow().to_pylist()
    assert java.count() == len(local) == 2000 + df.where("user_id < 100").count()
    assert _rows(java) == _rows(fspark.read(spark, "db.frazil_written", catalog))
    # Java's partition pruning works on frazil's partition values and metrics
    assert _rows(spark.sql("SELECT * FROM ref.db.frazil_written WHERE user_id = 7")) == _rows(
        fspark.read(spark, "db.frazil_written", catalog, row_filter="user_id = 7")
    )


def test_read_java_large_file_in_splits(env: Any) -> None:
    """A Java-written file of many row groups (Java's split_offsets), with a deletion vector,
    read in several Spark partitions: the rows and metadata columns Java's own read gives."""
    import pyarrow.parquet as pq

    import frazil.spark as fspark

    spark, catalog = env
    spark.sql(
        "CREATE TABLE ref.db.big (id bigint, data string) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read', "
        "'write.parquet.row-group-size-bytes'='16384')"
    )
    spark.sql(
        "INSERT INTO ref.db.big SELECT /*+ COALESCE(1) */ id, concat('row-', id, '-', "
        "sha2(cast(id as string), 256)) FROM range(0, 30000)"
    )
    spark.sql("DELETE FROM ref.db.big WHERE id % 13 = 5")
    (task,) = catalog.load_table("db.big").scan().plan_files()
    offsets = task.file.split_offsets
    assert offsets is not None and len(offsets) >= 4
    assert len(offsets) == pq.ParquetFile(task.file.file_path).metadata.num_row_groups
    split = str(task.file.file_size_in_bytes // 4)
    got = fspark.read(spark, "db.big", catalog, options={"split-size": split})
    assert got.rdd.getNumPartitions() >= 4
    assert _rows(got) == _rows(spark.table("ref.db.big"))
    cols = ["id", "_file", "_pos", "_spec_id", "_row_id", "_last_updated_sequence_number"]
    got = fspark.read(spark, "db.big", catalog, selected_fields=cols, options={"split-size": split})
    expected = spark.sql(f"SELECT {', '.join(cols)} FROM ref.db.big")
    assert _rows(got) == _rows(expected)
    assert got.count() == 30000 - len(range(5, 30000, 13))
