"""The view endpoints of ``frazil serve`` in-process: list (paginated), create, load, HEAD,
replace (``CommitViewRequest``), drop and rename, with the spec's errors; request bodies are
written here as the OpenAPI document shapes them, not built by frazil's wire module."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from rest_helpers import TestClient, auth_config, token_for

from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.server.app import create_app

NS = "/v1/namespaces/db"
WRONG_UUID = "00000000-0000-0000-0000-000000000000"
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
    ],
}


def _version(version_id: int, sql: str, schema_id: int = 0) -> dict[str, Any]:
    return {
        "version-id": version_id,
        "timestamp-ms": 1_700_000_000_000 + version_id,
        "schema-id": schema_id,
        "summary": {"engine-name": "test-engine", "engine-version": "1"},
        "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}],
        "default-namespace": ["db"],
    }


def _create(name: str, sql: str = "SELECT id, name FROM db.t", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "schema": SCHEMA,
        "view-version": _version(1, sql),
        "properties": {"owner": "tests"},
        **extra,
    }


@pytest.fixture
def served(client: Any, catalog: SqlCatalog) -> Any:
    catalog.create_namespace("db")
    catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("name", pa.string())]))
    return client


def _error(r: Any, status: int, kind: str) -> str:
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert (error["code"], error["type"]) == (status, kind), error
    return str(error["message"])


def test_config_advertises_view_endpoints(client: Any) -> None:
    endpoints = set(client.get("/v1/config").json()["endpoints"])
    assert {
        "GET /v1/{prefix}/namespaces/{namespace}/views",
        "POST /v1/{prefix}/namespaces/{namespace}/views",
        "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/views/rename",
    } <= endpoints


def test_no_view_endpoints_over_a_catalog_without_views(tmp_path: Any) -> None:
    catalog = FileSystemCatalog("fs", warehouse=str(tmp_path / "wh"))
    assert not catalog.supports_views()
    with TestClient(create_app(catalog, auth=auth_config())) as c:
        c.headers["Authorization"] = f"Bearer {token_for(c)}"
        endpoints = c.get("/v1/config").json()["endpoints"]
        assert endpoints and not [e for e in endpoints if "/views" in e]
        _error(c.get(f"{NS}/views"), 404, "NotFoundException")


def test_create_load_head_and_the_catalog_sees_it(served: Any, catalog: SqlCatalog) -> None:
    r = served.post(f"{NS}/views", json=_create("v"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) >= {"metadata-location", "metadata"}
    meta = body["metadata"]
    assert meta["format-version"] == 1
    assert meta["current-version-id"] == 1
    assert meta["properties"] == {"owner": "tests"}
    (version,) = meta["versions"]
    assert version["representations"] == [
        {"type": "sql", "sql": "SELECT id, name FROM db.t", "dialect": "spark"}
    ]
    assert version["summary"]["engine-name"] == "test-engine"
    assert [f["name"] for f in meta["schemas"][0]["fields"]] == ["id", "name"]

    # the catalog under the server holds the same view
    view = catalog.load_view(("db", "v"))
    assert view.metadata_location == body["metadata-location"]
    assert view.metadata.to_dict() == meta

    loaded = served.get(f"{NS}/views/v")
    assert loaded.status_code == 200
    assert loaded.json()["metadata-location"] == body["metadata-location"]
    assert loaded.json()["metadata"] == meta
    assert served.head(f"{NS}/views/v").status_code == 204
    assert served.head(f"{NS}/views/nope").status_code == 404
    assert served.head(f"{NS}/views/t").status_code == 404  # a table, not a view


def test_create_errors(served: Any) -> None:
    assert served.post(f"{NS}/views", json=_create("v")).status_code == 200
    _error(served.post(f"{NS}/views", json=_create("v")), 409, "AlreadyExistsException")
    _error(served.post(f"{NS}/views", json=_create("t")), 409, "AlreadyExistsException")
    _error(
        served.post("/v1/namespaces/nope/views", json=_create("v")),
        404,
        "NoSuchNamespaceException",
    )
    message = _error(
        served.post(f"{NS}/views", json=_create("w", location="/etc/w")),
        400,
        "IllegalArgumentException",
    )
    assert "location" in message
    bad = _create("w")
    del bad["view-version"]
    assert "view-version" in _error(
        served.post(f"{NS}/views", json=bad), 400, "BadRequestException"
    )
    _error(served.post(f"{NS}/views", json=_create("..")), 400, "IllegalArgumentException")
    assert not served.get(f"{NS}/views").json()["identifiers"][1:]


def test_list_paginated(served: Any) -> None:
    for name in ["c", "a", "b"]:
        assert served.post(f"{NS}/views", json=_create(name)).status_code == 200
    everything = served.get(f"{NS}/views").json()
    assert everything["identifiers"] == [{"namespace": ["db"], "name": n} for n in "abc"]
    seen, token = [], None
    while True:
        query = "?pageSize=2" + (f"&pageToken={token}" if token else "")
        page = served.get(f"{NS}/views{query}").json()
        seen += [i["name"] for i in page["identifiers"]]
        token = page.get("next-page-token")
        if not token:
            break
    assert seen == ["a", "b", "c"]
    _error(served.get("/v1/namespaces/nope/views"), 404, "NoSuchNamespaceException")


def test_replace_through_commit_view_request(served: Any, catalog: SqlCatalog) -> None:
    created = served.post(f"{NS}/views", json=_create("v")).json()
    view_uuid = created["metadata"]["view-uuid"]
    new_schema = {**SCHEMA, "schema-id": 1, "fields": SCHEMA["fields"][:1]}
    commit = {
        "identifier": {"namespace": ["db"], "name": "v"},
        "requirements": [{"type": "assert-view-uuid", "uuid": view_uuid}],
        "updates": [
            {"action": "add-schema", "schema": new_schema},
            {"action": "add-view-version", "view-version": _version(2, "SELECT id FROM db.t", -1)},
            {"action": "set-current-view-version", "view-version-id": -1},
            {"action": "set-properties", "updates": {"comment": "replaced"}},
        ],
    }
    r = served.post(f"{NS}/views/v", json=commit)
    assert r.status_code == 200, r.text
    meta = r.json()["metadata"]
    current = next(v for v in meta["versions"] if v["version-id"] == meta["current-version-id"])
    assert current["representations"][0]["sql"] == "SELECT id FROM db.t"
    schema = next(s for s in meta["schemas"] if s["schema-id"] == current["schema-id"])
    assert [f["name"] for f in schema["fields"]] == ["id"]
    assert meta["properties"] == {"owner": "tests", "comment": "replaced"}
    assert r.json()["metadata-location"] != created["metadata-location"]
    view = catalog.load_view("db.v")
    assert view.metadata_location == r.json()["metadata-location"]
    assert view.sql_for("spark") is not None
    assert view.sql_for("spark").sql == "SELECT id FROM db.t"  # type: ignore[union-attr]

    # a failed requirement is a 409 and changes nothing
    stale = {**commit, "requirements": [{"type": "assert-view-uuid", "uuid": WRONG_UUID}]}
    _error(served.post(f"{NS}/views/v", json=stale), 409, "CommitFailedException")
    unknown = {"updates": [{"action": "no-such-action"}]}
    assert "no-such-action" in _error(
        served.post(f"{NS}/views/v", json=unknown), 400, "BadRequestException"
    )
    _error(served.post(f"{NS}/views/nope", json=commit), 400, "BadRequestException")
    _error(
        served.post(
            f"{NS}/views/nope",
            json={**commit, "identifier": {"namespace": ["db"], "name": "nope"}},
        ),
        404,
        "NoSuchViewException",
    )
    outside = {"updates": [{"action": "set-location", "location": "/etc/elsewhere"}]}
    _error(served.post(f"{NS}/views/v", json=outside), 400, "IllegalArgumentException")
    assert catalog.load_view("db.v").metadata_location == r.json()["metadata-location"]


def test_rename_and_drop(served: Any, catalog: SqlCatalog) -> None:
    assert served.post(f"{NS}/views", json=_create("v")).status_code == 200
    assert served.post(f"{NS}/views", json=_create("w")).status_code == 200

    def rename(src: str, dst: str) -> Any:
        return served.post(
            "/v1/views/rename",
            json={
                "source": {"namespace": ["db"], "name": src},
                "destination": {"namespace": ["db"], "name": dst},
            },
        )

    _error(rename("v", "w"), 409, "AlreadyExistsException")
    _error(rename("nope", "x"), 404, "NoSuchViewException")
    assert rename("v", "renamed").status_code == 204
    _error(served.get(f"{NS}/views/v"), 404, "NoSuchViewException")
    assert served.get(f"{NS}/views/renamed").status_code == 200
    assert catalog.view_exists("db.renamed") and not catalog.view_exists("db.v")

    assert served.delete(f"{NS}/views/renamed").status_code == 204
    _error(served.delete(f"{NS}/views/renamed"), 404, "NoSuchViewException")
    _error(served.get(f"{NS}/views/renamed"), 404, "NoSuchViewException")
    assert catalog.list_views("db") == [("db", "w")]
    assert catalog.table_exists("db.t")  # a view's drop leaves tables alone
