"""One metastore shared by frazil and the Java reference (Spark 3.5 + Iceberg 1.10.2 with
``spark.sql.catalog.hms.type=hive``): each creates, writes (Java also a merge-on-read DELETE and
an ALTER), evolves and reads the other's tables, rows compared exactly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from peers import java_reference_session

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.slow,
    # py4j leaves its sockets to the garbage collector (as tests/interop/test_catalog_java.py)
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture(scope="module")
def spark(metastore: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    session = java_reference_session(
        tmp_path_factory.mktemp("hadoop-wh"),
        **{
            "spark.sql.catalog.hms": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.hms.type": "hive",
            "spark.sql.catalog.hms.uri": metastore.uri,
            "spark.sql.catalog.hms.warehouse": metastore.warehouse,
        },
    )
    yield session


def _java_rows(spark: Any, name: str, order: str = "id") -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(f"SELECT * FROM hms.{name} ORDER BY {order}").collect()]


def _rows(table: Any) -> list[tuple[Any, ...]]:
    names = [f.name for f in table.schema().fields]
    out = table.scan().to_arrow().to_pylist()
    return sorted((tuple(r[n] for n in names) for r in out), key=lambda r: r[0])


def test_frazil_reads_and_writes_a_java_table(spark: Any, catalog: Any, db: str) -> None:
    spark.sql(
        f"CREATE TABLE hms.{db}.jt (id BIGINT, name STRING) USING iceberg TBLPROPERTIES "
        "('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO hms.{db}.jt VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"DELETE FROM hms.{db}.jt WHERE id = 2")
    spark.sql(f"ALTER TABLE hms.{db}.jt ADD COLUMN score DOUBLE")
    spark.sql(f"INSERT INTO hms.{db}.jt VALUES (4, 'd', 1.5)")

    table = catalog.load_table(f"{db}.jt")
    assert _rows(table) == [(1, "a", None), (3, "c", None), (4, "d", 1.5)]
    assert table.metadata.current_snapshot().summary.get("added-position-delete-files") in (
        None,
        "1",
    )
    table.append(
        pa.table(
            {"id": [5], "name": ["e"], "score": [2.5]},
            schema=pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())]),
        )
    )
    from frazil.types import StringType

    with catalog.load_table(f"{db}.jt").update_schema() as update:
        update.add_column("tag", StringType())
    spark.sql(f"REFRESH TABLE hms.{db}.jt")
    assert _java_rows(spark, f"{db}.jt") == [
        (1, "a", None, None),
        (3, "c", None, None),
        (4, "d", 1.5, None),
        (5, "e", 2.5, None),
    ]
    spark.sql(f"INSERT INTO hms.{db}.jt VALUES (6, 'f', 3.5, 't')")
    assert _rows(catalog.load_table(f"{db}.jt"))[-1] == (6, "f", 3.5, "t")


def test_java_reads_and_writes_a_frazil_table(spark: Any, catalog: Any, db: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("city", pa.string())])
    table = catalog.create_table(
        f"{db}.ft", schema, properties={"format-version": "2", "write.delete.mode": "merge-on-read"}
    )
    table.append(pa.table({"id": [1, 2, 3], "city": ["x", "y", "z"]}, schema=schema))
    assert _java_rows(spark, f"{db}.ft") == [(1, "x"), (2, "y"), (3, "z")]
    spark.sql(f"DELETE FROM hms.{db}.ft WHERE id = 1")
    spark.sql(f"ALTER TABLE hms.{db}.ft ADD COLUMN pop BIGINT")
    spark.sql(f"INSERT INTO hms.{db}.ft VALUES (4, 'w', 40)")
    mine = catalog.load_table(f"{db}.ft")
    assert _rows(mine) == [(2, "y", None), (3, "z", None), (4, "w", 40)]
    mine.delete("id = 3")
    spark.sql(f"REFRESH TABLE hms.{db}.ft")
    assert _java_rows(spark, f"{db}.ft") == [(2, "y", None), (4, "w", 40)]
    # Java's view of the metastore record: frazil's table is an Iceberg table there.
    described = {
        r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED hms.{db}.ft").collect() if r[0]
    }
    assert "Location" in described or "Provider" in described
    snapshots = [
        r[0]
        for r in spark.sql(
            f"SELECT snapshot_id FROM hms.{db}.ft.snapshots ORDER BY committed_at"
        ).collect()
    ]
    assert snapshots == [s.snapshot_id for s in catalog.load_table(f"{db}.ft").metadata.snapshots]


def test_namespaces_and_listing_are_shared(spark: Any, catalog: Any) -> None:
    spark.sql("CREATE NAMESPACE hms.java_ns")
    assert catalog.namespace_exists("java_ns")
    catalog.create_namespace("frazil_ns", {"comment": "from frazil"})
    namespaces = {r[0] for r in spark.sql("SHOW NAMESPACES IN hms").collect()}
    assert {"java_ns", "frazil_ns"} <= namespaces
    catalog.create_table("frazil_ns.t1", pa.schema([("a", pa.int32())]))
    spark.sql("CREATE TABLE hms.java_ns.t2 (a INT) USING iceberg")
    java_tables = {r[1] for r in spark.sql("SHOW TABLES IN hms.frazil_ns").collect()}
    assert java_tables == {"t1"}
    assert catalog.list_tables("java_ns") == [("java_ns", "t2")]
