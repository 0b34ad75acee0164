"""Views shared with the Java reference (Iceberg 1.10.2 in Spark 3.5) through one JDBC catalog
database on PostgreSQL: a view Spark SQL creates loads in frazil with its SQL, schema and
versions (and frazil rewrites its metadata file byte for byte); a view frazil creates is queried,
listed and described by Spark; a replace by either side is read by the other; a name held by a
table or a view is refused by both. One Spark session for the module.

Needs PostgreSQL's JDBC driver (Debian's ``libpostgresql-jdbc-java``, or a jar named by
``FRAZIL_TEST_PG_JDBC_JAR``) besides the Java reference."""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import java_reference_session, peer_missing

from frazil.catalog import load_catalog
from frazil.exceptions import TableAlreadyExistsError, ViewAlreadyExistsError
from frazil.view.metadata import ViewMetadata

pytestmark = [
    pytest.mark.interop,
    # py4j leaves its sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

PG_JDBC_JARS = ("/usr/share/java/postgresql.jar",)


def _pg_jdbc_jar() -> str:
    for jar in (os.environ.get("FRAZIL_TEST_PG_JDBC_JAR"), *PG_JDBC_JARS):
        if jar and os.path.exists(jar):
            return jar
    peer_missing(
        "PostgreSQL's JDBC driver is not installed (apt-get install libpostgresql-jdbc-java, or "
        "set FRAZIL_TEST_PG_JDBC_JAR)"
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, postgres_server: Any) -> Iterator[Any]:
    jar = _pg_jdbc_jar()
    wh = tmp_path_factory.mktemp("views-wh")
    url = postgres_server.create_database(f"views_java_{os.getpid()}")
    interop = str(Path(__file__).resolve().parents[1] / "interop")
    if interop not in sys.path:
        sys.path.insert(0, interop)
    from java_reference import reference_jars

    spark = java_reference_session(
        wh,
        **{
            "spark.jars": ",".join([*reference_jars(), jar]),
            "spark.sql.catalog.jdb": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.jdb.type": "jdbc",
            "spark.sql.catalog.jdb.uri": "jdbc:postgresql://" + url.split("@", 1)[1],
            "spark.sql.catalog.jdb.jdbc.user": "postgres",
            "spark.sql.catalog.jdb.warehouse": str(wh),
            "spark.sql.catalog.jdb.cache-enabled": "false",
        },
    )
    catalog = load_catalog("jdb", type="sql", uri=url, warehouse=str(wh))
    spark.sql("CREATE NAMESPACE jdb.db")
    spark.sql("CREATE TABLE jdb.db.t (id bigint, name string) USING iceberg")
    spark.sql("INSERT INTO jdb.db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    try:
        yield spark, catalog
    finally:
        catalog.close()
        spark.stop()


def _java_view(spark: Any, name: str) -> Any:
    """The view as the Java catalog loads it (no caching)."""
    jvm = spark._jvm
    cat = spark._jsparkSession.sessionState().catalogManager().catalog("jdb").icebergCatalog()
    return cat.loadView(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(name))


def _describe(spark: Any, name: str) -> dict[str, str]:
    return {r[0]: r[1] for r in spark.sql(f"DESCRIBE EXTENDED {name}").collect()}


def test_frazil_loads_a_view_spark_created(env: Any) -> None:
    spark, catalog = env
    spark.sql(
        "CREATE VIEW jdb.db.sv COMMENT 'big ids' AS SELECT id, name FROM jdb.db.t WHERE id > 1"
    )
    view = catalog.load_view("db.sv")
    java = _java_view(spark, "db.sv")
    assert view.sql_for("spark").sql == java.sqlFor("spark").sql()  # type: ignore[union-attr]
    assert view.sql_for("spark").sql == "SELECT id, name FROM jdb.db.t WHERE id > 1"  # type: ignore[union-attr]
    assert view.schema().column_names() == ["id", "name"]
    assert [str(f.field_type) for f in view.schema().fields] == ["long", "string"]
    assert [v.version_id for v in view.versions] == [java.currentVersion().versionId()] == [1]
    assert view.current_version.summary["engine-name"] == "spark"
    assert view.properties["comment"] == "big ids"
    assert str(view.uuid) == java.uuid().toString()
    # frazil writes Java's metadata file back byte for byte
    raw = Path(view.metadata_location).read_bytes()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    assert ViewMetadata.from_json(raw).to_json().encode() == text
    # listings agree: the view is a view, not a table
    assert ("db", "sv") in catalog.list_views("db")
    assert ("db", "sv") not in catalog.list_tables("db")
    shown = {r.viewName for r in spark.sql("SHOW VIEWS IN jdb.db").collect()}
    assert {n for _, n in catalog.list_views("db")} == shown
    # Spark replaces it; frazil sees version 2 and the version log
    spark.sql("CREATE OR REPLACE VIEW jdb.db.sv AS SELECT id FROM jdb.db.t")
    view.refresh()
    assert [v.version_id for v in view.versions] == [1, 2]
    assert [e.version_id for e in view.history] == [1, 2]
    assert view.schema().column_names() == ["id"]


def test_spark_queries_a_view_frazil_created(env: Any) -> None:
    spark, catalog = env
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    view = catalog.create_view(
        "db.fv", schema, "SELECT id, name FROM t WHERE id <= 2", properties={"comment": "small"}
    )
    rows = spark.sql("SELECT * FROM jdb.db.fv ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, "b")]
    assert "fv" in {r.viewName for r in spark.sql("SHOW VIEWS IN jdb.db").collect()}
    described = spark.sql("DESCRIBE jdb.db.fv").collect()
    assert [(r.col_name, r.data_type) for r in described] == [("id", "bigint"), ("name", "string")]
    extended = _describe(spark, "jdb.db.fv")
    # no default catalog: the view's own catalog; the default namespace is the view's
    assert extended["View Catalog and Namespace"] == "jdb.db"
    assert extended["Comment"] == "small"
    java = _java_view(spark, "db.fv")
    assert java.sqlFor("spark").sql() == "SELECT id, name FROM t WHERE id <= 2"
    assert java.uuid().toString() == str(view.uuid)
    assert java.properties().get("comment") == "small"

    # frazil replaces it; Java reads the new version
    view.replace_version().with_query("spark", "SELECT id, upper(name) AS name FROM t").with_schema(
        schema
    ).commit()
    java = _java_view(spark, "db.fv")
    assert java.currentVersion().versionId() == 2
    assert [v.versionId() for v in java.versions()] == [1, 2]
    assert java.sqlFor("spark").sql() == "SELECT id, upper(name) AS name FROM t"
    rows = spark.sql("SELECT * FROM jdb.db.fv ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "A"), (2, "B"), (3, "C")]

    # Java's own commit on top (a property) loads back in frazil
    spark.sql("ALTER VIEW jdb.db.fv SET TBLPROPERTIES ('team' = 'java')")
    view.refresh()
    assert view.properties["team"] == "java" and view.current_version.version_id == 2


def test_names_are_shared_with_java(env: Any) -> None:
    spark, catalog = env
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_view("db.t", schema, "SELECT 1 AS id")
    spark.sql("CREATE VIEW jdb.db.jv AS SELECT id FROM jdb.db.t")
    with pytest.raises(ViewAlreadyExistsError):
        catalog.create_view("db.jv", schema, "SELECT 1 AS id")
    with pytest.raises(ViewAlreadyExistsError):
        catalog.create_table("db.jv", schema)
    catalog.create_table("db.ft", schema)
    with pytest.raises(Exception, match="already exists"):
        spark.sql("CREATE VIEW jdb.db.ft AS SELECT 1 AS id")
    # a frazil rename and drop are seen by Java
    catalog.rename_view("db.jv", "db.jv2")
    shown = {r.viewName for r in spark.sql("SHOW VIEWS IN jdb.db").collect()}
    assert "jv2" in shown and "jv" not in shown
    catalog.drop_view("db.jv2")
    assert "jv2" not in {r.viewName for r in spark.sql("SHOW VIEWS IN jdb.db").collect()}
    assert json.loads(json.dumps(catalog.list_tables("db"))) == [["db", "ft"], ["db", "t"]]
