"""Views through the REST catalog client against the fake server (``fake_server.py``): what is
sent (``CreateViewRequest``, ``CommitViewRequest`` with ``assert-view-uuid``, the rename body),
the endpoints it needs advertised, pagination, and the error mapping (NoSuchViewError,
ViewAlreadyExistsError, a 409 retried by the view's commit loop, a 5xx with an unknown outcome).
The fake's SQL catalog underneath is the record of what landed; the Java reference reads views
frazil made in ``tests/interop/test_rest_client_java.py``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from frazil import exceptions as exc
from frazil.catalog import load_catalog
from frazil.catalog.rest import RestCatalog
from frazil.rest import wire
from frazil.schema import Schema
from frazil.types import LongType, NestedField, StringType
from frazil.view.updates import AssertViewUUID

from .fake_server import FakeRest

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
)
FAST = {"rest.retry.min-wait-ms": "1", "rest.retry.max-wait-ms": "5"}
VIEW_ENDPOINTS = [e for e in wire.ENDPOINTS if "/views" in e]


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeRest]:
    server = FakeRest(tmp_path, endpoints=sorted(wire.DEFAULT_ENDPOINTS) + VIEW_ENDPOINTS)
    yield server
    server.close()


def _catalog(fake: FakeRest, **props: str) -> RestCatalog:
    cat = load_catalog("t", type="rest", uri=fake.uri, **{**FAST, **props})
    assert isinstance(cat, RestCatalog)
    cat.create_namespace_if_not_exists("db")
    return cat


def _error(code: int, type_: str, message: str = "injected") -> tuple[int, object, dict[str, str]]:
    return code, {"error": {"message": message, "type": type_, "code": code}}, {}


def test_views_need_advertised_endpoints(fake: FakeRest) -> None:
    fake.endpoints = None  # the spec's default list has no view endpoints
    cat = _catalog(fake)
    assert not cat.supports_views()
    assert not cat.view_exists("db.v")
    with pytest.raises(exc.UnsupportedError):
        cat.create_view("db.v", SCHEMA, "SELECT 1")
    assert not fake.seen("GET", "/views") and not fake.seen("POST", "/views")
    fake.endpoints = sorted(wire.DEFAULT_ENDPOINTS) + VIEW_ENDPOINTS
    assert _catalog(fake).supports_views()


def test_view_lifecycle_over_rest(fake: FakeRest) -> None:
    cat = _catalog(fake, **{"rest.page-size": "2"})
    assert cat.supports_views()
    view = cat.create_view(
        "db.v",
        SCHEMA,
        "SELECT id, category FROM db.t",
        properties={"comment": "first"},
        summary={"note": "x"},
    )
    create = fake.seen("POST", "/namespaces/db/views$")[-1]
    sent = json.loads(create.body)
    assert set(sent) == {"name", "schema", "view-version", "properties"}
    assert sent["name"] == "v" and sent["properties"] == {"comment": "first"}
    version = sent["view-version"]
    assert version["version-id"] == 1 and version["default-namespace"] == ["db"]
    assert version["representations"] == [
        {"type": "sql", "sql": "SELECT id, category FROM db.t", "dialect": "spark"}
    ]
    assert version["summary"]["note"] == "x" and version["summary"]["engine-name"] == "frazil"
    assert [f["name"] for f in sent["schema"]["fields"]] == ["id", "category"]

    # What the server's catalog holds is what the client was answered.
    held = fake.catalog.load_view("db.v")
    assert view.metadata_location == held.metadata_location
    assert view.uuid == held.uuid and view.catalog is cat
    assert cat.load_view("db.v") == view

    for name in ("a", "b", "c"):
        cat.create_view(f"db.{name}", SCHEMA, f"SELECT * FROM db.{name}0")
    assert sorted(cat.list_views("db")) == [("db", n) for n in ("a", "b", "c", "v")]
    assert len(fake.seen("GET", "/namespaces/db/views$")) == 2  # pages of two

    assert cat.view_exists("db.v") and not cat.view_exists("db.nope")
    assert fake.seen("HEAD", "/views/v$")
    fake.endpoints = [e for e in fake.endpoints or [] if not e.startswith("HEAD")]
    cat2 = _catalog(fake)
    gets = len(fake.seen("GET", "/views/v$"))
    assert cat2.view_exists("db.v") and not cat2.view_exists("db.nope")
    assert len(fake.seen("GET", "/views/v$")) == gets + 1  # GET where HEAD is not served

    # Replace: a new version through CommitViewRequest.
    view.replace_version().with_query("spark", "SELECT id FROM db.t").with_schema(
        Schema(NestedField(1, "id", LongType(), required=False))
    ).commit()
    commit = json.loads(fake.seen("POST", "/views/v$")[-1].body)
    assert commit["identifier"] == {"namespace": ["db"], "name": "v"}
    assert commit["requirements"] == [{"type": "assert-view-uuid", "uuid": str(view.uuid)}]
    actions = [u["action"] for u in commit["updates"]]
    assert "add-view-version" in actions and "set-current-view-version" in actions
    held = fake.catalog.load_view("db.v")
    assert held.current_version.version_id == 2 == view.current_version.version_id
    assert held.sql_for("spark") is not None
    assert held.sql_for("spark").sql == "SELECT id FROM db.t"  # type: ignore[union-attr]
    assert view.metadata_location == held.metadata_location

    with view.update_properties() as p:
        p.set("owner", "me").remove("comment")
    assert fake.catalog.load_view("db.v").properties == {"owner": "me"}

    renamed = cat.rename_view("db.v", "db.w")
    rename = json.loads(fake.seen("POST", "/v1/views/rename$")[-1].body)
    assert rename == {
        "source": {"namespace": ["db"], "name": "v"},
        "destination": {"namespace": ["db"], "name": "w"},
    }
    assert renamed.identifier == ("db", "w") and renamed.uuid == view.uuid
    assert not cat.view_exists("db.v")
    cat.drop_view("db.w")
    assert not fake.catalog.view_exists("db.w")


def test_view_errors_map_onto_frazil_exceptions(fake: FakeRest) -> None:
    cat = _catalog(fake)
    with pytest.raises(exc.NoSuchViewError, match=r"db\.nope"):
        cat.load_view("db.nope")
    with pytest.raises(exc.NoSuchViewError):
        cat.drop_view("db.nope")
    with pytest.raises(exc.NoSuchViewError):
        cat.rename_view("db.nope", "db.other")
    cat.create_view("db.v", SCHEMA, "SELECT 1")
    with pytest.raises(exc.ViewAlreadyExistsError):
        cat.create_view("db.v", SCHEMA, "SELECT 2")
    with pytest.raises(exc.NoSuchNamespaceError):
        cat.create_view("nons.v", SCHEMA, "SELECT 2")
    # Untyped answers are read by what the request was about.
    fake.fail("GET", "/views/v$", (404, {"error": {"message": "gone", "code": 404}}, {}))
    with pytest.raises(exc.NoSuchViewError, match="gone"):
        cat.load_view("db.v")
    fake.fail("POST", "/namespaces/db/views$", _error(409, "AlreadyExistsException", "taken"))
    with pytest.raises(exc.ViewAlreadyExistsError, match="taken"):
        cat.create_view("db.x", SCHEMA, "SELECT 3")
    fake.fail("GET", "/views/v$", _error(404, "NoSuchViewException", "no view"))
    with pytest.raises(exc.NoSuchViewError, match="no view"):
        cat.load_view("db.v")


def test_view_commit_conflict_is_retried_and_5xx_is_unknown(fake: FakeRest) -> None:
    cat = _catalog(fake)
    view = cat.create_view("db.v", SCHEMA, "SELECT 1")
    stale = cat.load_view("db.v")
    with view.update_properties() as p:
        p.set("a", "1")
    # A 409 (as after a lost race) makes the view refresh and retry.
    fake.fail("POST", "/views/v$", _error(409, "CommitFailedException", "conflict"))
    with stale.update_properties() as p:
        p.set("b", "2")
    assert len(fake.seen("POST", "/views/v$")) == 3
    assert fake.catalog.load_view("db.v").properties == {"a": "1", "b": "2"}
    # A requirement that fails on the server (another view under that name now) is a 409 too.
    other = cat.load_view("db.v")
    cat.drop_view("db.v")
    cat.create_view("db.v", SCHEMA, "SELECT 1")
    with pytest.raises(exc.CommitFailedError):
        cat.commit_view(other, [AssertViewUUID(other.uuid)], [])
    fake.fail("POST", "/views/v$", 500)
    with pytest.raises(exc.CommitStateUnknownError):
        with cat.load_view("db.v").update_properties() as p:
            p.set("c", "3")
    assert len(fake.seen("POST", "/views/v$")) == 5  # never repeated
