"""PyIceberg interop: frazil's SQL catalog and PyIceberg's SqlCatalog share one database (SQLite
file or PostgreSQL), each loading and committing the other's tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_helpers import commit_snapshot
from peers import import_peer

from frazil.catalog import Catalog, load_catalog

pyiceberg_sql = import_peer("pyiceberg.catalog.sql")

pytestmark = pytest.mark.interop


@pytest.fixture(params=["sqlite", "postgresql"])
def catalogs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Catalog, object]]:
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    if request.param == "sqlite":
        uri = f"sqlite:///{warehouse}/shared.db"
    else:
        uri = request.getfixturevalue("postgres_url")
    ours = load_catalog("shared", type="sql", uri=uri, warehouse=str(warehouse))
    # Created second, over the tables frazil made: PyIceberg must accept them as its own.
    theirs = pyiceberg_sql.SqlCatalog("shared", uri=uri, warehouse=f"file://{warehouse}")
    yield ours, theirs
    ours.close()  # type: ignore[attr-defined]
    theirs.engine.dispose()


def field_summary(fields: object) -> list[tuple[int, str, str, bool]]:
    return [(f.field_id, f.name, str(f.field_type), f.required) for f in fields]  # type: ignore[attr-defined]


def test_frazil_table_loads_in_pyiceberg(catalogs: tuple[Catalog, object], schema: object) -> None:
    ours, theirs = catalogs
    ours.create_namespace("db", {"owner": "frazil"})
    table = ours.create_table("db.events", schema, properties={"format-version": "2"})
    table.transaction().set_properties(committed="by-frazil").commit_transaction()
    commit_snapshot(table, ["/data/a.parquet", "/data/b.parquet"])

    assert theirs.list_namespaces() == [("db",)]  # type: ignore[attr-defined]
    assert theirs.load_namespace_properties("db")["owner"] == "frazil"  # type: ignore[attr-defined]
    assert theirs.list_tables("db") == [("db", "events")]  # type: ignore[attr-defined]
    loaded = theirs.load_table("db.events")  # type: ignore[attr-defined]
    assert loaded.metadata_location == table.metadata_location
    assert field_summary(loaded.schema().fields) == field_summary(table.schema().fields)
    assert loaded.properties["committed"] == "by-frazil"
    assert loaded.metadata.table_uuid == table.metadata.table_uuid
    assert [s.snapshot_id for s in loaded.snapshots()] == [s.snapshot_id for s in table.snapshots()]
    planned = sorted(t.file.file_path for t in loaded.scan().plan_files())
    assert planned == ["/data/a.parquet", "/data/b.parquet"]

    # PyIceberg commits on top of frazil's version; frazil sees it.
    with loaded.transaction() as tx:
        tx.set_properties(committed="by-pyiceberg")
    table.refresh()
    assert table.metadata_location == loaded.metadata_location
    assert table.properties["committed"] == "by-pyiceberg"


def test_pyiceberg_table_loads_in_frazil(catalogs: tuple[Catalog, object]) -> None:
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.types import LongType, NestedField, StringType

    ours, theirs = catalogs
    theirs.create_namespace("ns")  # type: ignore[attr-defined]
    py_schema = PySchema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "data", StringType(), required=False),
    )
    created = theirs.create_table(  # type: ignore[attr-defined]
        "ns.tbl", py_schema, location=f"{ours.properties['warehouse']}/ns/tbl"
    )
    with created.transaction() as tx:
        tx.set_properties(owner="pyiceberg")
    created = theirs.load_table("ns.tbl")  # type: ignore[attr-defined]

    assert ours.namespace_exists("ns")
    assert ours.list_namespaces() == [("ns",)]
    assert ours.list_tables("ns") == [("ns", "tbl")]
    table = ours.load_table("ns.tbl")
    assert table.metadata_location == created.metadata_location
    assert field_summary(table.schema().fields) == field_summary(created.schema().fields)
    assert table.properties["owner"] == "pyiceberg"
    assert table.metadata.table_uuid == created.metadata.table_uuid

    # frazil commits on top of PyIceberg's version (check-and-put on its location).
    table.transaction().set_properties(owner="frazil").commit_transaction()
    again = theirs.load_table("ns.tbl")  # type: ignore[attr-defined]
    assert again.metadata_location == table.metadata_location
    assert again.properties["owner"] == "frazil"

    # Rename and drop in frazil are visible to PyIceberg.
    ours.create_namespace("archive")
    ours.rename_table("ns.tbl", "archive.tbl")
    assert theirs.list_tables("archive") == [("archive", "tbl")]  # type: ignore[attr-defined]
    ours.drop_table("archive.tbl")
    assert theirs.list_tables("archive") == []  # type: ignore[attr-defined]


def test_catalogs_are_scoped_by_name(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/shared.db"
    ours = load_catalog("one", uri=uri, warehouse=str(tmp_path))
    other = pyiceberg_sql.SqlCatalog("two", uri=uri, warehouse=f"file://{tmp_path}")
    other.create_namespace("theirs")
    assert ours.list_namespaces() == []
    ours.create_namespace("mine")
    assert other.list_namespaces() == [("theirs",)]
    ours.close()  # type: ignore[attr-defined]
    other.engine.dispose()
