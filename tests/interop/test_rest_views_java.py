"""Views through frazil's REST client against the Java reference's server logic:
``java/FrazilRestServer.java views`` routes the view endpoints to ``CatalogHandlers`` over the
reference's InMemoryCatalog. frazil creates, replaces, updates, renames and drops views; Java's
own View API (a test-only route of that server) then reads the same uuid, versions, SQL, schema
and properties; and frazil loads a view Java made with its ViewBuilder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from java_rest_server import java_rest_server

from frazil import exceptions as exc
from frazil.catalog import load_catalog
from frazil.catalog.rest import RestCatalog
from frazil.schema import Schema
from frazil.types import LongType, NestedField, StringType

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
)


@pytest.fixture(scope="module")
def java_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with java_rest_server(tmp_path_factory.mktemp("rest-java-views"), "views") as uri:
        yield uri


@pytest.fixture(scope="module")
def catalog(java_server: str) -> Iterator[RestCatalog]:
    cat = load_catalog("java_views", type="rest", uri=java_server, **{"rest.page-size": "1"})
    assert isinstance(cat, RestCatalog)
    cat.create_namespace("db")
    yield cat
    cat.close()


def _java_view(uri: str, ns: str, name: str, body: Any = None) -> dict[str, Any]:
    """What Java's View API reads of the view (``body``: create it with Java's ViewBuilder)."""
    url = f"{uri}/java/views/{ns}/{name}"
    if body is not None:
        r = requests.post(url, json=body, timeout=30)
    else:
        r = requests.get(url, timeout=30)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_java_reads_the_views_frazil_made(catalog: RestCatalog, java_server: str) -> None:
    assert catalog.supports_views()
    view = catalog.create_view(
        "db.v",
        SCHEMA,
        "SELECT id, category FROM db.t",
        properties={"comment": "made by frazil"},
    )
    java = _java_view(java_server, "db", "v")
    assert java["uuid"] == str(view.uuid)
    assert java["current-version-id"] == 1 and java["history"] == 1
    assert java["sql"] == "SELECT id, category FROM db.t"
    assert java["properties"]["comment"] == "made by frazil"
    schema = json.loads(java["schema"])
    assert [(f["id"], f["name"], f["type"]) for f in schema["fields"]] == [
        (1, "id", "long"),
        (2, "category", "string"),
    ]

    # A replace (a new version with a narrower schema), then property changes.
    narrow = Schema(NestedField(1, "id", LongType(), required=False))
    view.replace_version().with_query("spark", "SELECT id FROM db.t").with_schema(narrow).commit()
    with view.update_properties() as p:
        p.set("owner", "frazil").remove("comment")
    java = _java_view(java_server, "db", "v")
    assert java["current-version-id"] == 2 == view.current_version.version_id
    assert [v["version-id"] for v in java["versions"]] == [1, 2]
    assert java["sql"] == "SELECT id FROM db.t"
    assert [f["name"] for f in json.loads(java["schema"])["fields"]] == ["id"]
    assert java["properties"].get("owner") == "frazil" and "comment" not in java["properties"]
    assert java["history"] == 2
    # Java's metadata, loaded back by frazil, is what frazil's handle holds.
    loaded = catalog.load_view("db.v")
    assert loaded.metadata_location == view.metadata_location
    assert loaded.metadata == view.metadata

    # A stale handle: the server's assert-view-uuid passes, the rebuilt change lands.
    stale = catalog.load_view("db.v")
    with view.update_properties() as p:
        p.set("a", "1")
    with stale.update_properties() as p:
        p.set("b", "2")
    props = _java_view(java_server, "db", "v")["properties"]
    assert props.get("a") == "1" and props.get("b") == "2"

    catalog.create_view("db.w", SCHEMA, "SELECT 1")
    assert sorted(catalog.list_views("db")) == [("db", "v"), ("db", "w")]  # pages of one
    assert catalog.view_exists("db.v") and not catalog.view_exists("db.nope")
    with pytest.raises(exc.ViewAlreadyExistsError):
        catalog.create_view("db.v", SCHEMA, "SELECT 2")
    with pytest.raises(exc.NoSuchViewError):
        catalog.load_view("db.nope")

    renamed = catalog.rename_view("db.w", "db.w2")
    assert renamed.identifier == ("db", "w2")
    assert _java_view(java_server, "db", "w2")["uuid"] == str(renamed.uuid)
    catalog.drop_view("db.w2")
    assert not catalog.view_exists("db.w2")
    with pytest.raises(exc.NoSuchViewError):
        catalog.drop_view("db.w2")


def test_frazil_loads_a_view_java_made(catalog: RestCatalog, java_server: str) -> None:
    java = _java_view(
        java_server,
        "db",
        "jv",
        {"sql": "SELECT id, name FROM db.people", "replace-sql": "SELECT id FROM db.people"},
    )
    view = catalog.load_view("db.jv")
    assert str(view.uuid) == java["uuid"]
    assert [v.version_id for v in view.versions] == [1, 2]
    assert view.current_version.version_id == java["current-version-id"] == 2
    sql = view.sql_for("spark")
    assert sql is not None and sql.sql == "SELECT id FROM db.people"
    first = view.version(1)
    assert first is not None
    assert first.sql_for("spark") is not None
    assert first.sql_for("spark").sql == "SELECT id, name FROM db.people"  # type: ignore[union-attr]
    assert first.default_namespace == ("db",)
    assert [f.name for f in view.schema().fields] == ["id"]
    assert view.properties.get("made-by") == "java"
    assert len(view.history) == 2
    # frazil changes Java's view; Java reads the change.
    view.replace_version().with_query("spark", "SELECT 42 AS id").with_schema(
        view.schema()
    ).commit()
    after = _java_view(java_server, "db", "jv")
    assert after["current-version-id"] == 3 and after["sql"] == "SELECT 42 AS id"
