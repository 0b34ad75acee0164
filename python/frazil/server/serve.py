"""``frazil serve``: runs :func:`frazil.server.app.create_app` on uvicorn.

The catalog is the SQL catalog: SQLite in the warehouse (``<warehouse>/catalog.db``) unless
``--catalog-uri`` names another database (``postgresql+psycopg://...``), or a Hive Metastore
(``thrift://host:9083[,thrift://...]``: the Hive catalog, new tables under the warehouse unless
their database has a location). uvicorn handles SIGINT
and SIGTERM: it stops accepting connections and waits for requests in flight (commits included)
before the process exits.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from frazil.catalog.sql import SqlCatalog
from frazil.exceptions import InvalidArgumentError
from frazil.server.auth import load_auth_config

__all__ = ["open_catalog", "serve"]

logger = logging.getLogger("frazil.server.app")

SQLITE_FILE = "catalog.db"


def open_catalog(warehouse: str, catalog_uri: str | None = None, name: str = "frazil") -> Any:
    """The catalog ``frazil serve`` serves: SQL, or Hive for a ``thrift://`` uri."""
    if catalog_uri is not None and catalog_uri.strip().lower().startswith("thrift://"):
        from frazil.catalog.hive import HiveCatalog

        return HiveCatalog(name, uri=catalog_uri, warehouse=warehouse)
    if catalog_uri is None:
        path = os.path.abspath(warehouse)
        os.makedirs(path, exist_ok=True)
        catalog_uri = f"sqlite:///{os.path.join(path, SQLITE_FILE)}"
        warehouse = path
    return SqlCatalog(name, uri=catalog_uri, warehouse=warehouse)


def serve(
    warehouse: str,
    *,
    catalog_uri: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8181,
    auth_config: str | None = None,
    no_auth: bool = False,
    name: str = "frazil",
    vended_credentials: Mapping[str, str] | None = None,
    allow_external_locations: bool = False,
    log_level: str = "info",
    plan_page_size: int = 1_000,
) -> None:
    """Serves the catalog until interrupted."""
    # Imported on use: uvicorn and starlette (the app) come with the `server` extra.
    import uvicorn

    from frazil.server.app import create_app

    if (auth_config is None) == (not no_auth):
        raise InvalidArgumentError("give --auth-config FILE, or --no-auth to serve without auth")
    auth = load_auth_config(auth_config) if auth_config is not None else None
    catalog = open_catalog(warehouse, catalog_uri, name)
    app = create_app(
        catalog,
        auth=auth,
        no_auth=no_auth,
        vended_credentials=vended_credentials,
        allow_external_locations=allow_external_locations,
        plan_page_size=plan_page_size,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,  # frazil.server.app logs one line per request itself
        timeout_graceful_shutdown=30,
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print(f"frazil REST catalog {name!r} on http://{shown}:{port} (warehouse {warehouse})")
    if no_auth:
        print("authentication is OFF (--no-auth)")
    server.run()
