"""``frazil serve --catalog-uri thrift://...``: the REST server in front of a Hive Metastore; a
REST client's commits land in the metastore, where the Hive catalog sees them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

pytestmark = pytest.mark.interop

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "rest"))


def test_rest_server_over_a_hive_metastore(metastore: Any, catalog: Any) -> None:
    pytest.importorskip("starlette")
    from rest_helpers import uvicorn_server

    from frazil.catalog import load_catalog
    from frazil.catalog.hive import HiveCatalog
    from frazil.server.app import create_app
    from frazil.server.serve import open_catalog

    served = open_catalog(metastore.warehouse, metastore.uri, "served")
    assert isinstance(served, HiveCatalog)
    with uvicorn_server(create_app(served, no_auth=True)) as url:
        rest = load_catalog("rest", uri=url)
        rest.create_namespace("via_rest")
        schema = pa.schema([("id", pa.int64())])
        table = rest.create_table("via_rest.t", schema)
        table.append(pa.table({"id": [1, 2]}, schema=schema))
        direct = catalog.load_table("via_rest.t")
        assert direct.metadata_location == rest.load_table("via_rest.t").metadata_location
        assert sorted(direct.scan().to_arrow().column("id").to_pylist()) == [1, 2]
        direct.append(pa.table({"id": [3]}, schema=schema))
        ids = rest.load_table("via_rest.t").scan().to_arrow().column("id").to_pylist()
        assert sorted(ids) == [1, 2, 3]
