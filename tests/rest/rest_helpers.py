"""Helpers of the REST server tests: a SQL catalog, the app over it (in-process through
Starlette's TestClient), and a loopback uvicorn server on a free port (in a thread). The
fixtures are re-exported by this folder's conftest.py; tests import the rest from here (a
module named ``conftest`` would be ambiguous across test folders)."""

from __future__ import annotations

import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from frazil.catalog.sql import SqlCatalog
from frazil.server.app import create_app
from frazil.server.auth import AuthConfig

with warnings.catch_warnings():
    # Starlette 1.x suggests httpx2 for its test client; httpx is what is installed.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

CLIENT_ID = "tester"
CLIENT_SECRET = "s3cret-for-tests"


def auth_config(lifetime_s: int = 3600) -> AuthConfig:
    return AuthConfig.from_secrets({CLIENT_ID: CLIENT_SECRET}, token_lifetime_s=lifetime_s)


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[SqlCatalog]:
    cat = SqlCatalog("rest", warehouse=str(tmp_path / "wh"))
    yield cat
    cat.close()


def token_for(client: Any, client_id: str = CLIENT_ID, secret: str = CLIENT_SECRET) -> str:
    r = client.post(
        "/v1/oauth/tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            "scope": "catalog",
        },
    )
    assert r.status_code == 200, r.text
    return str(r.json()["access_token"])


@pytest.fixture
def client(catalog: SqlCatalog) -> Iterator[Any]:
    """A TestClient with a valid bearer token set."""
    app = create_app(catalog, auth=auth_config())
    with TestClient(app) as c:
        c.headers["Authorization"] = f"Bearer {token_for(c)}"
        yield c


@contextmanager
def uvicorn_server(app: Any) -> Iterator[str]:
    """Serves ``app`` on 127.0.0.1 in a thread; yields its URL; stops it cleanly."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
