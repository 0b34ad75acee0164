"""The embedded SQLite catalog of a local warehouse: one file name for the library and `frazil
serve`, the old name still opened, and no catalog created by a read of a mistyped warehouse."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import (
    CatalogError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchWarehouseError,
)
from frazil.server.serve import open_catalog

SCHEMA = pa.schema([pa.field("id", pa.int64())])


def _tables_in(db: Path) -> list[tuple[str, str, str]]:
    # Read with the sqlite3 module, not frazil: which rows went into which file.
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT catalog_name, table_namespace, table_name FROM iceberg_tables"
        ).fetchall()


def test_library_and_serve_open_the_same_file(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    catalog = load_catalog("default", warehouse=str(wh))
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA)
    catalog.close()
    assert _tables_in(wh / "catalog.db") == [("default", "db", "t")]
    served = open_catalog(str(wh), name="default")
    assert served.uri == f"sqlite:///{wh}/catalog.db"
    assert served.list_tables("db") == [("db", "t")]
    served.close()


def test_a_warehouse_with_the_old_file_name_keeps_it(tmp_path: Path) -> None:
    wh = tmp_path / "old"
    wh.mkdir()
    # A catalog written before the rename: the JDBC catalog's tables in frazil_catalog.db.
    with sqlite3.connect(wh / "frazil_catalog.db") as conn:
        conn.execute(
            "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255), namespace "
            "VARCHAR(255), property_key VARCHAR(255), property_value VARCHAR(1000), "
            "PRIMARY KEY (catalog_name, namespace, property_key))"
        )
        conn.execute(
            "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255), table_namespace "
            "VARCHAR(255), table_name VARCHAR(255), metadata_location VARCHAR(1000), "
            "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
            "PRIMARY KEY (catalog_name, table_namespace, table_name))"
        )
        conn.execute(
            "INSERT INTO iceberg_namespace_properties VALUES ('default', 'legacy', 'exists', "
            "'true')"
        )
    catalog = load_catalog("default", warehouse=str(wh))
    assert catalog.uri == f"sqlite:///{wh}/frazil_catalog.db"
    assert catalog.list_namespaces() == [("legacy",)]
    catalog.close()
    served = open_catalog(str(wh), name="default")
    assert served.list_namespaces() == [("legacy",)]
    served.close()
    assert not (wh / "catalog.db").exists()


@pytest.mark.parametrize("mistyped", ["missing", "empty-dir"])
def test_reads_of_a_warehouse_without_a_catalog_name_the_path(
    tmp_path: Path, mistyped: str
) -> None:
    wh = tmp_path / mistyped
    if mistyped == "empty-dir":
        wh.mkdir()
    catalog = load_catalog("default", warehouse=str(wh))
    for read in (
        catalog.list_namespaces,
        lambda: catalog.list_tables("db"),
        lambda: catalog.load_table("db.t"),
    ):
        with pytest.raises(NoSuchWarehouseError) as info:
            read()
        assert str(wh / "catalog.db") in str(info.value)
        # the old handlers still catch it
        assert isinstance(info.value, CatalogError | NoSuchTableError | NoSuchNamespaceError)
    with pytest.raises(NoSuchTableError):
        catalog.load_table("db.t")
    assert not catalog.table_exists("db.t") and not catalog.namespace_exists("db")
    assert (mistyped == "empty-dir") == wh.exists()
    assert not wh.exists() or not any(wh.iterdir())  # nothing was created by the reads
    catalog.create_namespace("db")  # the first write creates the database
    assert catalog.list_namespaces() == [("db",)]
    assert (wh / "catalog.db").exists()
    catalog.close()


def test_a_database_created_by_another_process_is_seen(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    reader = load_catalog("default", warehouse=str(wh))
    writer = load_catalog("default", warehouse=str(wh))
    writer.create_namespace("db")
    writer.create_table("db.t", SCHEMA)
    assert reader.list_tables("db") == [("db", "t")]
    assert reader.load_table("db.t").schema().find_field("id").field_id == 1
    reader.close()
    writer.close()
