"""``frazil serve``: runs :func:`frazil.server.app.create_app` on uvicorn.

The catalog is the SQL catalog: SQLite in the warehouse (``<warehouse>/catalog.db``, the file
``load_catalog(warehouse=...)`` opens too; ``frazil_catalog.db`` when only that old name exists)
unless ``--catalog-uri`` names another database (``postgresql+psycopg://...``) or a Hive Metastore
(``thrift://host:9083[,thrift://...]``: the Hive catalog, new tables under the warehouse unless
their database has a location). ``--catalog-type glue`` (or ``dynamodb``) serves that catalog
instead (:func:`open_typed_catalog`, :func:`serve_catalog`). uvicorn handles SIGINT and SIGTERM:
it stops accepting connections and waits for requests in flight (commits included) before the
process exits.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from frazil.catalog.sql import SqlCatalog, default_sqlite_file
from frazil.exceptions import InvalidArgumentError
from frazil.server.auth import load_auth_config

__all__ = ["open_catalog", "open_typed_catalog", "serve", "serve_catalog"]

logger = logging.getLogger("frazil.server.app")


def open_catalog(warehouse: str, catalog_uri: str | None = None, name: str = "frazil") -> Any:
    """The catalog ``frazil serve`` serves: SQL, or Hive for a ``thrift://`` uri."""
    if catalog_uri is not None and catalog_uri.strip().lower().startswith("thrift://"):
        from frazil.catalog.hive import HiveCatalog

        return HiveCatalog(name, uri=catalog_uri, warehouse=warehouse)
    if catalog_uri is None:
        path = os.path.abspath(warehouse)
        os.makedirs(path, exist_ok=True)
        catalog_uri = f"sqlite:///{default_sqlite_file(path)}"
        warehouse = path
    return SqlCatalog(name, uri=catalog_uri, warehouse=warehouse)


def open_typed_catalog(
    warehouse: str,
    catalog_type: str,
    name: str = "frazil",
    catalog_properties: Mapping[str, str] | None = None,
) -> Any:
    """Catalog ``name`` of ``catalog_type`` (``glue``, ``dynamodb``, ...) as
    :func:`~frazil.catalog.load_catalog` builds it: ``catalog_properties`` over the catalog's
    configuration (``.frazil.yaml``, ``FRAZIL_CATALOG__<NAME>__*``: where credentials belong,
    rather than a command line)."""
    from frazil.catalog import load_catalog

    props = dict(catalog_properties or {})
    return load_catalog(name, type=catalog_type, warehouse=warehouse, **props)


def _check_auth_choice(auth_config: str | None, no_auth: bool) -> None:
    if (auth_config is None) == (not no_auth):
        raise InvalidArgumentError("give --auth-config FILE, or --no-auth to serve without auth")


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
    _check_auth_choice(auth_config, no_auth)  # before the catalog is opened
    serve_catalog(
        open_catalog(warehouse, catalog_uri, name),
        warehouse,
        host=host,
        port=port,
        auth_config=auth_config,
        no_auth=no_auth,
        name=name,
        vended_credentials=vended_credentials,
        allow_external_locations=allow_external_locations,
        log_level=log_level,
        plan_page_size=plan_page_size,
    )


def serve_catalog(
    catalog: Any,
    warehouse: str,
    *,
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
    """Serves ``catalog`` (any frazil catalog) until interrupted."""
    # Imported on use: uvicorn and starlette (the app) come with the `server` extra.
    import uvicorn

    from frazil.server.app import create_app

    _check_auth_choice(auth_config, no_auth)
    auth = load_auth_config(auth_config) if auth_config is not None else None
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
