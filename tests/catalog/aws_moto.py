"""moto's AWS services in server mode on loopback, for the Glue and DynamoDB catalog tests, and a
thin proxy in front of its Glue that EMULATES what moto leaves out of Glue:

- Glue's optimistic lock: ``UpdateTable`` with a ``VersionId`` that is no longer the table's
  current version is answered with Glue's ``ConcurrentModificationException`` (moto ignores
  ``VersionId``). The check and the forwarded update run under one lock, as Glue applies them
  atomically.
- IAM refusals: operations named in ``deny`` are answered with ``AccessDeniedException``.
- S3 Tables federation: databases named in ``s3tables`` report a ``FederatedDatabase`` with
  connection type ``aws:s3tables``, and a table created there without a location is given one
  under ``managed_root`` (S3 Tables assigns the storage).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ACCESS_KEY = "AKIAFRAZILTEST000001"
SECRET_KEY = "frazil-secret-key-never-shown"
SESSION_TOKEN = "frazil-session-token-never-shown"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _OneRequestAtATime:
    """A WSGI wrapper that runs moto's requests one at a time.

    DynamoDB applies a conditional write atomically; moto evaluates the condition and then
    writes, in Python, with nothing held between the two, so two threads of its server can both
    pass ``#v = :old`` and both write: a lost commit that real DynamoDB never allows (seen in CI
    as one missing append of the four-writer test)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: Any, start_response: Any) -> Any:
        with self.lock:
            # Materialized under the lock: the response body is where moto's work may be done;
            # closed there too, as a WSGI server closes the body it was given.
            body = self.app(environ, start_response)
            try:
                return list(body)
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's server on 127.0.0.1 (all services), one request at a time, stopped on exit."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    class QuietHandler(MotoRequestHandler):
        def log(self, *args: Any) -> None:
            pass

    app = _OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    """moto's server on loopback, one per test module (the Glue and DynamoDB tests)."""
    from peers import import_peer

    import_peer("moto")
    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with moto_server() as url:
        yield url
    patch.undo()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse"
    path.mkdir()
    return path


def client_props(prefix: str, endpoint: str) -> dict[str, str]:
    return {
        f"{prefix}.endpoint": endpoint,
        f"{prefix}.region": REGION,
        f"{prefix}.access-key-id": ACCESS_KEY,
        f"{prefix}.secret-access-key": SECRET_KEY,
        f"{prefix}.session-token": SESSION_TOKEN,
    }


def boto_client(service: str, endpoint: str) -> Any:
    import boto3

    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


class GlueEmulator:
    """The proxy (see the module docstring); ``url`` is its endpoint, ``conflicts`` counts the
    stale updates it refused."""

    def __init__(self, moto_url: str, managed_root: str | None = None) -> None:
        self.moto_host, self.moto_port = moto_url.removeprefix("http://").split(":")
        self.glue = boto_client("glue", moto_url)
        self.lock = threading.Lock()
        self.s3tables: set[str] = set()
        self.deny: set[str] = set()
        self.managed_root = managed_root
        self.conflicts = 0
        self.updates = 0
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                target = self.headers.get("X-Amz-Target", "")
                status, headers, out = emulator.handle(target, body, dict(self.headers))
                self.send_response(status)
                for k, v in headers:
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def forward(
        self, body: bytes, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection(self.moto_host, int(self.moto_port), timeout=60)
        try:
            sent = {k: v for k, v in headers.items() if k.lower() not in ("content-length", "host")}
            conn.request("POST", "/", body=body, headers=sent)
            r = conn.getresponse()
            return r.status, r.getheaders(), r.read()
        finally:
            conn.close()

    def handle(
        self, target: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        op = target.rsplit(".", 1)[-1]
        request = json.loads(body or b"{}")
        if op in self.deny:
            error = {"__type": "AccessDeniedException", "Message": f"not authorized to {op}"}
            return 400, [("Content-Type", "application/x-amz-json-1.1")], json.dumps(error).encode()
        if op == "UpdateTable" and "VersionId" in request:
            with self.lock:  # the version check and the update are one step, as in Glue
                current = self.glue.get_table(
                    DatabaseName=request["DatabaseName"], Name=request["TableInput"]["Name"]
                )["Table"]["VersionId"]
                if str(current) != str(request["VersionId"]):
                    self.conflicts += 1
                    error = {
                        "__type": "ConcurrentModificationException",
                        "Message": f"Update table failed due to concurrent modifications "
                        f"(version {request['VersionId']} is not the current {current})",
                    }
                    return (
                        400,
                        [("Content-Type", "application/x-amz-json-1.1")],
                        json.dumps(error).encode(),
                    )
                self.updates += 1
                return self.forward(body, headers)
        if op == "CreateTable" and request.get("DatabaseName") in self.s3tables:
            table_input = request["TableInput"]
            sd = table_input.setdefault("StorageDescriptor", {})
            if not sd.get("Location") and self.managed_root:
                sd["Location"] = f"{self.managed_root}/{uuid.uuid4().hex}--table-s3"
            body = json.dumps(request).encode()
        status, out_headers, out = self.forward(body, headers)
        if op == "GetDatabase" and status == 200 and request.get("Name") in self.s3tables:
            answer = json.loads(out)
            answer["Database"]["FederatedDatabase"] = {
                "Identifier": f"arn:aws:s3tables:{REGION}:123456789012:bucket/{request['Name']}",
                "ConnectionName": "aws:s3tables",
                "ConnectionType": "aws:s3tables",
            }
            out = json.dumps(answer).encode()
        return status, out_headers, out
