"""The Java reference (Spark 3.5 + Iceberg 1.10.2, ``type=rest``) uses ``frazil serve`` as its
catalog: namespaces, a partitioned table, inserts, merge-on-read deletes (v2 position deletes
and v3 deletion vectors), ALTER TABLE ADD COLUMN, a tag, a branch write and reads; then
PyIceberg's RestCatalog reads the same rows and writes more, and Java reads those."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from java_rest import rest_reference_session
from peers import import_peer
from rest_helpers import CLIENT_ID, CLIENT_SECRET, auth_config, uvicorn_server

from frazil.catalog.sql import SqlCatalog
from frazil.rest.server import create_app

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SqlCatalog, str]]:
    wh = tmp_path_factory.mktemp("rest-java")
    catalog = SqlCatalog("served", warehouse=str(wh))
    with uvicorn_server(create_app(catalog, auth=auth_config())) as url:
        yield catalog, url
    catalog.close()


@pytest.fixture(scope="module")
def spark(served: tuple[SqlCatalog, str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    url = served[1]
    conf = {
        "spark.sql.catalog.rc": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.rc.type": "rest",
        "spark.sql.catalog.rc.uri": url,
        "spark.sql.catalog.rc.credential": f"{CLIENT_ID}:{CLIENT_SECRET}",
        "spark.sql.catalog.rc.oauth2-server-uri": f"{url}/v1/oauth/tokens",
        "spark.sql.catalog.rc.cache-enabled": "false",
    }
    session = rest_reference_session(tmp_path_factory.mktemp("java-ref-wh"), **conf)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def pyiceberg_rest(served: tuple[SqlCatalog, str]) -> Any:
    import_peer("pyiceberg")
    from pyiceberg.catalog.rest import RestCatalog

    url = served[1]
    return RestCatalog(
        "rc",
        uri=url,
        credential=f"{CLIENT_ID}:{CLIENT_SECRET}",
        **{"oauth2-server-uri": f"{url}/v1/oauth/tokens"},
    )


def _sorted(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in rows)


@pytest.mark.parametrize("version", [2, 3])
def test_java_writes_through_frazil_serve(
    spark: Any, served: tuple[SqlCatalog, str], pyiceberg_rest: Any, version: int
) -> None:
    t = f"rc.db.events_v{version}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS rc.db")
    spark.sql(
        f"CREATE TABLE {t} (id BIGINT, category STRING) USING iceberg PARTITIONED BY (category) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, 'b'), (5, 'a')")
    spark.sql(f"DELETE FROM {t} WHERE id = 3")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN note STRING")
    spark.sql(f"INSERT INTO {t} VALUES (6, 'c', 'six')")
    spark.sql(f"ALTER TABLE {t} CREATE TAG before_branch")
    spark.sql(f"ALTER TABLE {t} CREATE BRANCH dev")
    spark.sql(f"INSERT INTO {t}.branch_dev VALUES (7, 'd', 'dev only')")
    main = [(1, "a", None), (2, "b", None), (4, "b", None), (5, "a", None), (6, "c", "six")]
    assert _sorted(spark.sql(f"SELECT * FROM {t}").collect()) == sorted(main)
    dev = _sorted(spark.sql(f"SELECT * FROM {t} VERSION AS OF 'dev'").collect())
    assert dev == sorted([*main, (7, "d", "dev only")])

    # the table Java committed, as the catalog under the server holds it
    ours = served[0].load_table(("db", f"events_v{version}"))
    assert ours.metadata.format_version == version
    assert set(ours.metadata.refs) == {"main", "before_branch", "dev"}
    assert any(s.summary and s.summary.get("added-delete-files") for s in ours.metadata.snapshots)
    assert _sorted([tuple(r.values()) for r in ours.scan().to_arrow().to_pylist()]) == sorted(main)

    # PyIceberg through the same server reads the rows and writes more; Java reads those
    py = pyiceberg_rest.load_table(f"db.events_v{version}")
    assert _sorted([tuple(r.values()) for r in py.scan().to_arrow().to_pylist()]) == sorted(main)
    py.append(
        pa.table(
            {
                "id": pa.array([8], pa.int64()),
                "category": ["e"],
                "note": ["from pyiceberg"],
            }
        )
    )
    after = _sorted(spark.sql(f"SELECT * FROM {t}").collect())
    assert after == sorted([*main, (8, "e", "from pyiceberg")])
    tag = _sorted(spark.sql(f"SELECT id FROM {t} VERSION AS OF 'before_branch'").collect())
    assert tag == [(1,), (2,), (4,), (5,), (6,)]
