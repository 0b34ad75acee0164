"""Encrypted tables through ``frazil serve``'s app and frazil's REST client: the client writes
encrypted files with its own KMS and commits the new ``encryption-keys`` and snapshot ``key-id``
through the server, which passes them through untouched; scans planned by the client and by the
server (which decrypts the manifests with its catalog's KMS and returns each data file's
``key-metadata`` in the tasks) read the same rows; no file holds plaintext."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pyarrow as pa
import pytest
from rest_helpers import CLIENT_ID, CLIENT_SECRET, auth_config, uvicorn_server

from frazil.catalog import load_catalog
from frazil.catalog.sql import SqlCatalog
from frazil.expressions import EqualTo
from frazil.server.app import create_app

pytestmark = [pytest.mark.filterwarnings("ignore::ResourceWarning")]

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
MARKER = "MARKER-rest-41f0"


def test_encrypted_table_through_rest(tmp_path: Path) -> None:
    kms = {
        "encryption.kms-impl": "frazil.encryption.InMemoryKms",
        "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode(),
    }
    under = SqlCatalog("rest", warehouse=str(tmp_path / "wh"), **kms)
    try:
        with uvicorn_server(create_app(under, auth=auth_config())) as uri:

            def client(**props: str):  # type: ignore[no-untyped-def]
                return load_catalog(
                    "c",
                    type="rest",
                    uri=uri,
                    credential=f"{CLIENT_ID}:{CLIENT_SECRET}",
                    **{"oauth2-server-uri": f"{uri}/v1/oauth/tokens", **kms, **props},
                )

            cat = client()
            cat.create_namespace("db")
            props = {"format-version": "3", "encryption.key-id": "master-1"}
            t = cat.create_table("db.t", SCHEMA, properties=props)
            t.append(pa.table({"id": [1, 2], "v": [MARKER, "b"]}, schema=SCHEMA))
            cat.load_table("db.t").append(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA))
            expect = [{"id": 1, "v": MARKER}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]

            t = cat.load_table("db.t")
            held = under.load_table("db.t")
            # The keys the client made are what the server stored, untouched.
            assert t.metadata.encryption_keys == held.metadata.encryption_keys
            assert [s.key_id for s in t.snapshots()] == [s.key_id for s in held.snapshots()]
            assert len(t.metadata.encryption_keys) == 3
            assert t.scan().to_arrow().sort_by("id").to_pylist() == expect

            served_catalog = client(**{"rest.scan-planning": "server"})
            served = served_catalog.load_table("db.t")
            assert type(served_catalog._scan_planner(served)).__name__ == "ServerPlanner"
            tasks = list(served.scan(row_filter=EqualTo("id", 3)).plan_files())
            assert tasks and all(task.file.key_metadata for task in tasks)
            assert served.scan().to_arrow().sort_by("id").to_pylist() == expect
    finally:
        under.close()
    for p in (tmp_path / "wh").rglob("*"):
        if p.is_file():
            assert MARKER.encode() not in p.read_bytes(), p
