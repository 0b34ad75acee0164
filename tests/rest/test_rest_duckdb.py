"""DuckDB 1.5's iceberg extension ATTACHes ``frazil serve`` (OAuth2 client credentials) and
reads the rows PyIceberg wrote through it."""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from peers import import_peer
from rest_helpers import CLIENT_ID, CLIENT_SECRET, auth_config, uvicorn_server

from frazil.catalog.sql import SqlCatalog
from frazil.server.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from duckdb_peer import duckdb_with_iceberg

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SqlCatalog, str]]:
    wh = tmp_path_factory.mktemp("rest-duckdb")
    catalog = SqlCatalog("served", warehouse=str(wh))
    with uvicorn_server(create_app(catalog, auth=auth_config())) as url:
        yield catalog, url
    catalog.close()


def test_duckdb_attaches_and_reads(served: tuple[SqlCatalog, str]) -> None:
    import_peer("pyiceberg")
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.expressions import EqualTo

    catalog, url = served
    rest = RestCatalog(
        "rc",
        uri=url,
        credential=f"{CLIENT_ID}:{CLIENT_SECRET}",
        **{"oauth2-server-uri": f"{url}/v1/oauth/tokens"},
    )
    rest.create_namespace("db")
    data = pa.table({"id": pa.array(range(20), pa.int64()), "tag": ["x", "y"] * 10})
    table = rest.create_table("db.t", data.schema, properties={"format-version": "2"})
    table.append(data)
    table.delete(EqualTo("id", 4))

    con = duckdb_with_iceberg()
    # the REST catalog's HTTP goes through httpfs, loaded from its wheel (offline)
    httpfs = import_peer("duckdb_extension_httpfs")
    (ext,) = glob.glob(f"{os.path.dirname(httpfs.__file__)}/extensions/*/httpfs.duckdb_extension")
    con.execute(f"LOAD '{ext}'")
    con.execute(
        f"CREATE SECRET frazil_rest (TYPE iceberg, CLIENT_ID '{CLIENT_ID}', "
        f"CLIENT_SECRET '{CLIENT_SECRET}', OAUTH2_SERVER_URI '{url}/v1/oauth/tokens')"
    )
    con.execute(
        f"ATTACH '' AS cat (TYPE iceberg, SECRET frazil_rest, ENDPOINT '{url}', "
        "ACCESS_DELEGATION_MODE 'none')"
    )
    rows = con.execute("SELECT id, tag FROM cat.db.t ORDER BY id").fetchall()
    assert rows == [(i, "xy"[i % 2]) for i in range(20) if i != 4]
    ours = catalog.load_table("db.t").scan().to_arrow().sort_by("id")
    assert list(zip(ours["id"].to_pylist(), ours["tag"].to_pylist(), strict=True)) == rows
