"""Views in the SQL catalog (SQLite and PostgreSQL): create, load, list, replace, properties,
rename (also across namespaces), drop; tables and views share one name space; the rows are the
Java JDBC catalog's (``iceberg_type = 'VIEW'``); a V0 database gets views only with
``jdbc.schema-version=V1``; the filesystem catalog refuses views; lost races are retried."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import sqlalchemy as sa

from frazil.catalog import Catalog, load_catalog
from frazil.exceptions import (
    CommitFailedError,
    InvalidArgumentError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    UnsupportedError,
    ValidationError,
    ViewAlreadyExistsError,
)
from frazil.view import View
from frazil.view.metadata import SQLViewRepresentation, ViewMetadata
from frazil.view.updates import AssertViewUUID, SetPropertiesUpdate

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])
SQL = "SELECT id, name FROM db.t"


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    wh = tmp_path / "wh"
    if request.param == "sqlite":
        cat = load_catalog("test", type="sql", warehouse=str(wh))
    else:
        url = request.getfixturevalue("postgres_url")
        cat = load_catalog("test", type="sql", uri=url, warehouse=str(wh))
    cat.create_namespace("db")
    yield cat
    cat.close()


def rows(cat: Any) -> list[tuple[Any, ...]]:
    with cat.engine.connect() as conn:
        return sorted(
            tuple(r)
            for r in conn.execute(
                sa.text("SELECT table_namespace, table_name, iceberg_type FROM iceberg_tables")
            )
        )


def test_create_load_list(catalog: Any) -> None:
    catalog.create_table("db.t", SCHEMA)
    view = catalog.create_view("db.v", SCHEMA, SQL, properties={"comment": "c"})
    assert isinstance(view, View)
    assert view.metadata_location.startswith(
        f"{catalog.properties['warehouse']}/db/v/metadata/00000-"
    )
    assert view.metadata_location.endswith(".gz.metadata.json")
    loaded = catalog.load_view("db.v")
    assert loaded == view
    assert loaded.sql_for("spark") == SQLViewRepresentation(SQL, "spark")
    assert loaded.schema().column_names() == ["id", "name"]
    assert [f.field_id for f in loaded.schema().fields] == [1, 2]
    assert loaded.current_version.default_namespace == ("db",)
    assert loaded.current_version.default_catalog is None
    assert loaded.current_version.summary["engine-name"] == "frazil"
    assert loaded.properties == {"comment": "c"}
    # the file is gzip JSON (the reference's default for views) and parses back
    data = Path(view.metadata_location).read_bytes()
    json.loads(gzip.decompress(data))
    assert ViewMetadata.from_json(data) == view.metadata
    # rows: one TABLE, one VIEW, as Java's JDBC catalog writes them
    assert rows(catalog) == [("db", "t", "TABLE"), ("db", "v", "VIEW")]
    assert catalog.list_tables("db") == [("db", "t")]
    assert catalog.list_views("db") == [("db", "v")]
    assert catalog.view_exists("db.v") and not catalog.view_exists("db.t")
    assert catalog.table_exists("db.t") and not catalog.table_exists("db.v")
    with pytest.raises(NoSuchViewError, match=r"view db\.t does not exist"):
        catalog.load_view("db.t")
    with pytest.raises(NoSuchTableError, match=r"db\.v"):
        catalog.load_table("db.v")


def test_create_options(catalog: Any, tmp_path: Path) -> None:
    reps = [SQLViewRepresentation("select 1", "spark"), SQLViewRepresentation("select 1", "trino")]
    view = catalog.create_view(
        ("db", "v2"),
        SCHEMA,
        reps,
        default_namespace="other.ns",
        default_catalog="prod",
        location=str(tmp_path / "elsewhere"),
        summary={"note": "x"},
        properties={"write.metadata.compression-codec": "none"},
    )
    assert view.location == str(tmp_path / "elsewhere")
    assert view.metadata_location.endswith(".metadata.json")
    assert not view.metadata_location.endswith(".gz.metadata.json")
    json.loads(Path(view.metadata_location).read_text())
    v = view.current_version
    assert v.default_namespace == ("other", "ns") and v.default_catalog == "prod"
    assert v.summary["note"] == "x" and v.representations == tuple(reps)


def test_create_refusals(catalog: Any) -> None:
    catalog.create_table("db.t", SCHEMA)
    catalog.create_view("db.v", SCHEMA, SQL)
    with pytest.raises(ViewAlreadyExistsError):
        catalog.create_view("db.v", SCHEMA, SQL)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_view("db.t", SCHEMA, SQL)
    with pytest.raises(ViewAlreadyExistsError):
        catalog.create_table("db.v", SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_view("nope.v", SCHEMA, SQL)
    with pytest.raises(InvalidArgumentError):
        catalog.create_view("db.../x", SCHEMA, SQL)
    with pytest.raises(InvalidArgumentError):
        catalog.create_view("db.a/b", SCHEMA, SQL)
    with pytest.raises(NoSuchViewError, match="expected <namespace>"):
        catalog.load_view("v")
    dup = [SQLViewRepresentation("a", "spark"), SQLViewRepresentation("b", "Spark")]
    with pytest.raises(ValidationError, match="dialect 'spark'"):
        catalog.create_view("db.w", SCHEMA, dup)
    with pytest.raises(InvalidArgumentError, match="without a query"):
        catalog.create_view("db.w", SCHEMA, [])
    assert catalog.list_views("db") == [("db", "v")]
    with pytest.raises(NoSuchViewError):
        catalog.drop_view("db.t")


def test_replace_and_properties(catalog: Any) -> None:
    view = catalog.create_view("db.v", SCHEMA, SQL)
    first = view.metadata_location
    schema2 = pa.schema([("id", pa.int64())])
    view.replace_version().with_query("spark", "SELECT id FROM db.t").with_schema(
        schema2
    ).with_default_catalog("c").commit()
    assert "/00001-" in view.metadata_location
    assert [v.version_id for v in view.versions] == [1, 2]
    assert view.current_version.default_namespace == ("db",)  # kept from the last version
    assert view.schema().column_names() == ["id"] and view.current_version.schema_id == 1
    with view.update_properties() as p:
        p.set("comment", "ids").set("a", "1")
    with view.update_properties() as p:
        p.remove("a")
    loaded = catalog.load_view("db.v")
    assert loaded.properties == {"comment": "ids"}
    assert loaded.sql_for("spark").sql == "SELECT id FROM db.t"  # type: ignore[union-attr]
    assert [e.version_id for e in loaded.history] == [1, 2]
    # replacing with the first definition makes version 1 current again (no new version)
    view.replace_version().with_query("spark", SQL).with_schema(SCHEMA).commit()
    assert [v.version_id for v in view.versions] == [1, 2] and view.current_version.version_id == 1
    # an empty change writes nothing
    before = view.metadata_location
    view.update_properties().commit()
    assert view.metadata_location == before != first
    # the previous file is kept and the pointer row names the current one
    assert Path(first).exists()
    with catalog.engine.connect() as conn:
        prev = conn.execute(
            sa.text("SELECT previous_metadata_location FROM iceberg_tables WHERE table_name = 'v'")
        ).scalar_one()
    assert prev is not None and "/00003-" in prev


def test_commit_view_by_identifier(catalog: Any) -> None:
    view = catalog.create_view("db.v", SCHEMA, SQL)
    resp = catalog.commit_view(
        "db.v", [AssertViewUUID(view.metadata.view_uuid)], [SetPropertiesUpdate({"k": "v"})]
    )
    assert resp.metadata.properties == {"k": "v"}
    assert catalog.load_view("db.v").metadata_location == resp.metadata_location
    from uuid import UUID

    with pytest.raises(CommitFailedError, match="view uuid"):
        catalog.commit_view("db.v", [AssertViewUUID(UUID(int=1))], [SetPropertiesUpdate({})])
    with pytest.raises(NoSuchViewError):
        catalog.commit_view("db.nope", [], [SetPropertiesUpdate({"k": "v"})])


def test_lost_race_is_retried_on_the_new_metadata(catalog: Any) -> None:
    view = catalog.create_view("db.v", SCHEMA, SQL)
    stale = catalog.load_view("db.v")
    with view.update_properties() as p:
        p.set("first", "1")
    # stale's base is gone: its commit fails the swap once, refreshes, and lands on top
    calls: list[str | None] = []
    real = catalog._swap_view_pointer

    def spy(ident: Any, current: str | None, new: str) -> bool:
        calls.append(current)
        return bool(real(ident, current, new))

    catalog._swap_view_pointer = spy
    stale.replace_version().with_query("spark", "SELECT 2").with_schema(SCHEMA).commit()
    assert stale.properties == {"first": "1"}
    assert stale.sql_for("spark").sql == "SELECT 2"  # type: ignore[union-attr]
    assert catalog.load_view("db.v") == stale
    # the commit read the current pointer itself, so one swap landed
    assert calls == [view.metadata_location]

    # a swap that loses (another writer between the read and the swap) is retried
    state = {"lost": False}

    def lose_once(ident: Any, current: str | None, new: str) -> bool:
        if not state["lost"]:
            state["lost"] = True
            return False
        return bool(real(ident, current, new))

    catalog._swap_view_pointer = lose_once
    with stale.update_properties() as p:
        p.set("second", "2")
    assert state["lost"] and catalog.load_view("db.v").properties == {"first": "1", "second": "2"}


def test_rename_and_drop(catalog: Any) -> None:
    catalog.create_namespace("other")
    catalog.create_table("db.t", SCHEMA)
    view = catalog.create_view("db.v", SCHEMA, SQL)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_view("db.v", "db.t")
    catalog.create_view("db.w", SCHEMA, SQL)
    with pytest.raises(ViewAlreadyExistsError):
        catalog.rename_view("db.v", "db.w")
    with pytest.raises(ViewAlreadyExistsError):
        catalog.rename_table("db.t", "db.w")
    with pytest.raises(NoSuchNamespaceError):
        catalog.rename_view("db.v", "nowhere.v")
    with pytest.raises(NoSuchViewError):
        catalog.rename_view("db.t", "other.t")  # a table is not a view
    moved = catalog.rename_view("db.v", "other.v2")
    assert moved.metadata_location == view.metadata_location
    assert catalog.list_views("db") == [("db", "w")] and catalog.list_views("other") == [
        ("other", "v2")
    ]
    with pytest.raises(NamespaceNotEmptyError, match="view"):
        catalog.drop_namespace("other")
    catalog.drop_view("other.v2")
    with pytest.raises(NoSuchViewError):
        catalog.drop_view("other.v2")
    assert catalog.list_views("other") == []
    catalog.drop_namespace("other")
    catalog.drop_table("db.t")  # dropping a table leaves the view alone
    assert catalog.list_views("db") == [("db", "w")]


def test_v0_database_needs_schema_version_v1(tmp_path: Path) -> None:
    db = tmp_path / "v0.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:  # the Java V0 schema: no iceberg_type
        conn.exec_driver_sql(
            "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace "
            "VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location "
            "VARCHAR(1000), previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, "
            "table_namespace, table_name))"
        )
    engine.dispose()
    wh = str(tmp_path / "wh")
    v0 = load_catalog("c", type="sql", uri=f"sqlite:///{db}", warehouse=wh)
    v0.create_namespace("db")
    v0.create_table("db.t", SCHEMA)
    assert not v0.supports_views()
    with pytest.raises(UnsupportedError, match="has no views"):
        v0.create_view("db.v", SCHEMA, SQL)
    with pytest.raises(UnsupportedError):
        v0.list_views("db")
    v0.close()
    v1 = load_catalog(
        "c", type="sql", uri=f"sqlite:///{db}", warehouse=wh, **{"jdbc.schema-version": "V1"}
    )
    assert v1.supports_views()
    v1.create_view("db.v", SCHEMA, SQL)
    assert v1.list_tables("db") == [("db", "t")]  # the old row (NULL type) is a table
    assert v1.list_views("db") == [("db", "v")]
    assert rows(v1) == [("db", "t", None), ("db", "v", "VIEW")]
    v1.close()


def test_filesystem_catalog_has_no_views(tmp_path: Path) -> None:
    fs: Catalog = load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    fs.create_namespace("db")
    assert not fs.supports_views()
    for call in (
        lambda: fs.create_view("db.v", SCHEMA, SQL),
        lambda: fs.load_view("db.v"),
        lambda: fs.view_exists("db.v"),
        lambda: fs.list_views("db"),
        lambda: fs.drop_view("db.v"),
        lambda: fs.rename_view("db.v", "db.w"),
        lambda: fs.commit_view("db.v", [], []),
    ):
        with pytest.raises(UnsupportedError, match="has no views"):
            call()
    fs.create_table("db.t", SCHEMA)  # tables are unaffected
