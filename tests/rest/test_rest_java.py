"""The Java reference (Spark 3.5.9 + Iceberg 1.10.2) uses ``frazil serve`` as its REST catalog:
CREATE NAMESPACE, a partitioned table, INSERT, merge-on-read DELETE (v2 position delete files,
v3 deletion vectors), ALTER TABLE ADD COLUMN, a tag, a branch write and reads. Then PyIceberg
0.12's RestCatalog reads the same rows (main, tag, branch) and appends; frazil's REST client reads
them and appends (to main and the branch); DuckDB ATTACHes the server and reads; and Java reads
everything back. Views too: Spark SQL's CREATE / CREATE OR REPLACE / ALTER ... RENAME / DROP VIEW.

Java's catalog is the reference's own ``RESTCatalog`` with the JDK's HTTP client as transport
(``tests/interop/java/JdkRestCatalog.java``: the runtime jar on PyPI lacks its shaded HttpClient
5); ``reference_session(rest=True)`` puts it and the relocated HttpCore 5 on Spark's jars. The
server is ``frazil serve`` in its own process (SQLite catalog in the warehouse)."""

from __future__ import annotations

import datetime as dt
import glob
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import import_peer, java_reference_session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from duckdb_peer import duckdb_with_iceberg
from rest_server_process import ServerProcess

from frazil.catalog.sql import SqlCatalog
from frazil.server.serve import open_catalog

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

Row = tuple[Any, ...]
D0 = dt.date(2024, 3, 1)


def _day(i: int) -> dt.date:
    return D0 + dt.timedelta(days=i % 3)


def _row(i: int, category: str, note: str | None) -> Row:
    return (i, category, _day(i), note)


# What every step adds, computed here rather than read back from any implementation.
JAVA_ROWS = [_row(i, "ab"[i % 2], None) for i in range(1, 7)]  # ids 1..6, no note column yet
JAVA_DELETED = {3}
JAVA_AFTER_ALTER = [_row(7, "c", "seven")]
JAVA_BRANCH = [_row(8, "d", "on branch")]
PYICEBERG_MAIN = [_row(9, "e", "from pyiceberg")]
FRAZIL_MAIN = [_row(10, "f", "from frazil")]
FRAZIL_BRANCH = [_row(11, "g", "frazil on branch")]

TAGGED = sorted([r for r in JAVA_ROWS if r[0] not in JAVA_DELETED] + JAVA_AFTER_ALTER)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path_factory.mktemp("rest-java") / "warehouse") as srv:
        yield srv


@pytest.fixture(scope="module")
def under(server: ServerProcess) -> Iterator[SqlCatalog]:
    """The catalog under the server, opened directly (as ``frazil serve`` opens it)."""
    catalog = open_catalog(str(server.warehouse))
    yield catalog
    catalog.close()


@pytest.fixture(scope="module")
def spark(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    conf = {
        "spark.sql.catalog.rc": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.rc.catalog-impl": "org.apache.iceberg.rest.JdkRestCatalog",
        "spark.sql.catalog.rc.uri": server.uri,
        "spark.sql.catalog.rc.credential": server.credential,
        "spark.sql.catalog.rc.oauth2-server-uri": f"{server.uri}/v1/oauth/tokens",
        "spark.sql.catalog.rc.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
        "spark.sql.catalog.rc.cache-enabled": "false",
    }
    session = java_reference_session(tmp_path_factory.mktemp("java-ref-wh"), rest=True, **conf)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def pyiceberg_rest(server: ServerProcess) -> Any:
    import_peer("pyiceberg")
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog(
        "rc",
        uri=server.uri,
        credential=server.credential,
        **{"oauth2-server-uri": f"{server.uri}/v1/oauth/tokens"},
    )


@pytest.fixture(scope="module")
def frazil_rest(server: ServerProcess) -> Iterator[Any]:
    """frazil's own REST client on the server."""
    from frazil.catalog import load_catalog

    catalog = load_catalog(
        "rc",
        type="rest",
        uri=server.uri,
        credential=server.credential,
        **{"oauth2-server-uri": f"{server.uri}/v1/oauth/tokens"},
    )
    yield catalog
    catalog.close()


def _rows(rows: list[Any]) -> list[Row]:
    return sorted(tuple(r) for r in rows)


def _dicts(table: pa.Table) -> list[Row]:
    cols = ["id", "category", "d", "note"]
    return sorted(tuple(r[c] for c in cols) for r in table.to_pylist())


def _arrow(rows: list[Row], string: pa.DataType) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "category": pa.array([r[1] for r in rows], string),
            "d": pa.array([r[2] for r in rows], pa.date32()),
            "note": pa.array([r[3] for r in rows], string),
        }
    )


def _values(rows: list[Row]) -> str:
    def lit(v: Any) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, dt.date):
            return f"DATE '{v.isoformat()}'"
        return f"'{v}'" if isinstance(v, str) else str(v)

    return ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows)


def _duckdb(server: ServerProcess) -> Any:
    con = duckdb_with_iceberg()
    # the REST catalog's HTTP goes through httpfs, loaded from its wheel (offline)
    httpfs = import_peer("duckdb_extension_httpfs")
    (ext,) = glob.glob(f"{os.path.dirname(httpfs.__file__)}/extensions/*/httpfs.duckdb_extension")
    con.execute(f"LOAD '{ext}'")
    client_id, secret = server.credential.split(":", 1)
    con.execute(
        f"CREATE SECRET frazil_rest (TYPE iceberg, CLIENT_ID '{client_id}', "
        f"CLIENT_SECRET '{secret}', OAUTH2_SERVER_URI '{server.uri}/v1/oauth/tokens')"
    )
    con.execute(
        f"ATTACH '' AS cat (TYPE iceberg, SECRET frazil_rest, ENDPOINT '{server.uri}', "
        "ACCESS_DELEGATION_MODE 'none')"
    )
    return con


@pytest.mark.parametrize("version", [2, 3])
def test_java_pyiceberg_frazil_duckdb_share_one_table(
    spark: Any,
    server: ServerProcess,
    under: SqlCatalog,
    pyiceberg_rest: Any,
    frazil_rest: Any,
    version: int,
) -> None:
    name = f"events_v{version}"
    t = f"rc.db.{name}"
    # v2 partitioned by identity, v3 by a days() transform
    partitioning = "category" if version == 2 else "days(d)"

    # ---- Java writes through frazil serve
    spark.sql("CREATE NAMESPACE IF NOT EXISTS rc.db")
    spark.sql(
        f"CREATE TABLE {t} (id BIGINT, category STRING, d DATE) USING iceberg "
        f"PARTITIONED BY ({partitioning}) TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {t} VALUES {_values([r[:3] for r in JAVA_ROWS])}")
    spark.sql(f"DELETE FROM {t} WHERE id IN ({', '.join(map(str, sorted(JAVA_DELETED)))})")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN note STRING")
    spark.sql(f"INSERT INTO {t} VALUES {_values(JAVA_AFTER_ALTER)}")
    spark.sql(f"ALTER TABLE {t} CREATE TAG tagged")
    spark.sql(f"ALTER TABLE {t} CREATE BRANCH b")
    spark.sql(f"INSERT INTO {t}.branch_b VALUES {_values(JAVA_BRANCH)}")

    main = TAGGED
    branch = sorted(TAGGED + JAVA_BRANCH)
    assert _rows(spark.sql(f"SELECT id, category, d, note FROM {t}").collect()) == main
    assert _rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF 'tagged'").collect()) == main
    assert _rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF 'b'").collect()) == branch

    # the delete was merge-on-read: a position delete file on v2, a deletion vector on v3
    ours = under.load_table(("db", name))
    assert ours.metadata.format_version == version
    assert set(ours.metadata.refs) == {"main", "tagged", "b"}
    (delete_summary,) = [
        s.summary or {}
        for s in ours.metadata.snapshots
        if (s.summary or {}).get("added-delete-files")
    ]
    assert delete_summary["operation"] == "delete"
    assert delete_summary["added-position-deletes"] == str(len(JAVA_DELETED))
    assert delete_summary.get("added-dvs") == ("1" if version == 3 else None)
    files = spark.sql(f"SELECT content, file_format FROM {t}.delete_files").collect()
    assert [tuple(f) for f in files] == [(1, "PUFFIN" if version == 3 else "PARQUET")]
    assert [f.name for f in ours.schema().fields] == ["id", "category", "d", "note"]

    # ---- PyIceberg reads main, tag and branch through the server, then appends to main (v2)
    py = pyiceberg_rest.load_table(f"db.{name}")
    assert _dicts(py.scan().to_arrow()) == main
    tag_id = py.snapshot_by_name("tagged").snapshot_id
    branch_id = py.snapshot_by_name("b").snapshot_id
    assert _dicts(py.scan(snapshot_id=tag_id).to_arrow()) == main
    assert _dicts(py.scan(snapshot_id=branch_id).to_arrow()) == branch
    if version == 2:  # PyIceberg 0.12 writes no v3 manifests ("Cannot write manifest ...")
        py.append(_arrow(PYICEBERG_MAIN, pa.string()))
        main = sorted(main + PYICEBERG_MAIN)

    # ---- frazil's REST client reads what Java and PyIceberg wrote, then appends to main and
    # to the branch
    ours = frazil_rest.load_table(("db", name))
    assert _dicts(ours.scan().to_arrow()) == main
    tagged_snapshot = ours.snapshot_by_name("tagged")
    branch_snapshot = ours.snapshot_by_name("b")
    assert tagged_snapshot is not None and branch_snapshot is not None
    assert _dicts(ours.scan(snapshot_id=tagged_snapshot.snapshot_id).to_arrow()) == TAGGED
    assert _dicts(ours.scan(snapshot_id=branch_snapshot.snapshot_id).to_arrow()) == branch
    ours.append(_arrow(FRAZIL_MAIN, pa.large_string()))
    ours.append(_arrow(FRAZIL_BRANCH, pa.large_string()), branch="b")
    main = sorted(main + FRAZIL_MAIN)
    branch = sorted(branch + FRAZIL_BRANCH)
    # the catalog under the server holds the same table
    direct = under.load_table(("db", name))
    assert direct.metadata_location == frazil_rest.load_table(("db", name)).metadata_location
    assert _dicts(direct.scan().to_arrow()) == main

    # ---- DuckDB ATTACHes the server and reads main
    con = _duckdb(server)
    got = con.execute(f"SELECT id, category, d, note FROM cat.db.{name}").fetchall()
    assert sorted(got) == main

    # ---- Java reads everything back
    assert _rows(spark.sql(f"SELECT id, category, d, note FROM {t}").collect()) == main
    assert _rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF 'tagged'").collect()) == TAGGED
    assert _rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF 'b'").collect()) == branch
    assert _rows(spark.sql(f"SELECT * FROM {t}.branch_b").collect()) == branch


def test_java_views_through_frazil_serve(
    spark: Any, server: ServerProcess, under: SqlCatalog
) -> None:
    """Spark SQL's view statements through the REST catalog; the catalog under the server holds
    the same view metadata."""
    spark.sql("CREATE NAMESPACE IF NOT EXISTS rc.vdb")
    spark.sql("CREATE TABLE rc.vdb.base (id BIGINT, name STRING) USING iceberg")
    base = [(1, "one"), (2, "two"), (3, "three")]
    spark.sql(f"INSERT INTO rc.vdb.base VALUES {_values(base)}")

    spark.sql("CREATE VIEW rc.vdb.v AS SELECT id, name FROM rc.vdb.base WHERE id > 1")
    assert _rows(spark.sql("SELECT * FROM rc.vdb.v").collect()) == [(2, "two"), (3, "three")]
    view = under.load_view(("vdb", "v"))
    first = view.sql_for("spark")
    assert first is not None and "WHERE id > 1" in first.sql
    assert [f.name for f in view.schema().fields] == ["id", "name"]
    assert view.metadata.current_version_id == 1

    spark.sql("CREATE OR REPLACE VIEW rc.vdb.v AS SELECT id FROM rc.vdb.base WHERE id < 3")
    assert _rows(spark.sql("SELECT * FROM rc.vdb.v").collect()) == [(1,), (2,)]
    replaced = under.load_view(("vdb", "v"))
    assert replaced.metadata.view_uuid == view.metadata.view_uuid
    assert len(replaced.metadata.versions) == 2
    current = replaced.sql_for("spark")
    assert current is not None and "WHERE id < 3" in current.sql
    assert [f.name for f in replaced.schema().fields] == ["id"]

    names = [tuple(r)[1] for r in spark.sql("SHOW VIEWS IN rc.vdb").collect()]
    assert names == ["v"]
    spark.sql("ALTER VIEW rc.vdb.v RENAME TO rc.vdb.w")
    assert not under.view_exists(("vdb", "v"))
    assert under.load_view(("vdb", "w")).metadata.view_uuid == view.metadata.view_uuid
    assert _rows(spark.sql("SELECT * FROM rc.vdb.w").collect()) == [(1,), (2,)]

    spark.sql("DROP VIEW rc.vdb.w")
    assert under.list_views(("vdb",)) == []
    assert under.table_exists(("vdb", "base"))
