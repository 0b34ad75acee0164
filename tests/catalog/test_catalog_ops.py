"""Namespace and table operations, the same assertions on SQLite, PostgreSQL and the filesystem
catalog (where Java's HadoopCatalog supports less, the refusals are asserted instead)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from catalog_helpers import commit_snapshot

from frazil.catalog import Catalog, PropertiesUpdateSummary
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchWarehouseError,
    TableAlreadyExistsError,
    UnsupportedError,
)
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table.update import AddSchemaUpdate, SetCurrentSchemaUpdate
from frazil.types import NestedField, StringType


def is_fs(catalog: Catalog) -> bool:
    return isinstance(catalog, FileSystemCatalog)


def warehouse(catalog: Catalog) -> str:
    return catalog.properties["warehouse"]


# ---- namespaces


def test_namespace_lifecycle(catalog: Catalog) -> None:
    if getattr(catalog, "uri", "").startswith("sqlite"):
        # the embedded SQLite file does not exist before the first write: a read says so
        # (tests/catalog/test_default_database.py)
        with pytest.raises(NoSuchWarehouseError, match=r"catalog\.db"):
            catalog.list_namespaces()
    else:
        assert catalog.list_namespaces() == []
    assert not catalog.namespace_exists("db")
    catalog.create_namespace("db")
    assert catalog.namespace_exists("db")
    assert catalog.namespace_exists(("db",))
    with pytest.raises(NamespaceAlreadyExistsError, match="db"):
        catalog.create_namespace("db")
    catalog.create_namespace_if_not_exists("db")
    catalog.create_namespace_if_not_exists("other")
    catalog.create_namespace(("db", "sub"))
    catalog.create_namespace("db.sub.leaf")
    assert catalog.list_namespaces() == [("db",), ("other",)]
    assert catalog.list_namespaces("db") == [("db", "sub")]
    assert catalog.list_namespaces(("db", "sub")) == [("db", "sub", "leaf")]
    assert catalog.list_namespaces("db.sub.leaf") == []
    with pytest.raises(NoSuchNamespaceError, match="missing"):
        catalog.list_namespaces("missing")
    catalog.drop_namespace("other")
    assert not catalog.namespace_exists("other")
    with pytest.raises(NoSuchNamespaceError, match="other"):
        catalog.drop_namespace("other")
    catalog.drop_namespace("db.sub.leaf")
    assert catalog.list_namespaces("db.sub") == []


def test_namespace_names_are_not_patterns(catalog: Catalog) -> None:
    # SQL LIKE wildcards in a name must not match other namespaces.
    catalog.create_namespace("a_b")
    assert not catalog.namespace_exists("a%")
    assert not catalog.namespace_exists("axb")
    assert catalog.list_namespaces("a_b") == []


def test_drop_namespace_with_tables(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    catalog.create_table("db.t", schema)
    with pytest.raises(NamespaceNotEmptyError, match="db"):
        catalog.drop_namespace("db")
    catalog.drop_table("db.t")
    catalog.drop_namespace("db")
    assert not catalog.namespace_exists("db")


def test_namespace_properties(catalog: Catalog) -> None:
    if is_fs(catalog):
        with pytest.raises(UnsupportedError, match=r"namespace db.*supports"):
            catalog.create_namespace("db", {"owner": "me"})
        catalog.create_namespace("db")
        assert catalog.load_namespace_properties("db") == {"location": f"{warehouse(catalog)}/db"}
        with pytest.raises(UnsupportedError, match=r"namespace db.*supports"):
            catalog.update_namespace_properties("db", updates={"a": "b"})
        return
    catalog.create_namespace("db", {"owner": "me", "comment": "c"})
    props = catalog.load_namespace_properties("db")
    assert props == {"owner": "me", "comment": "c", "location": f"{warehouse(catalog)}/db"}
    summary = catalog.update_namespace_properties(
        "db", removals={"comment", "nope"}, updates={"owner": "you", "new": "1"}
    )
    assert summary == PropertiesUpdateSummary(
        removed=["comment"], updated=["new", "owner"], missing=["nope"]
    )
    assert catalog.load_namespace_properties("db") == {
        "owner": "you",
        "new": "1",
        "location": f"{warehouse(catalog)}/db",
    }
    with pytest.raises(NoSuchNamespaceError, match="missing"):
        catalog.load_namespace_properties("missing")
    with pytest.raises(NoSuchNamespaceError, match="missing"):
        catalog.update_namespace_properties("missing", updates={"a": "b"})


def test_namespace_location_property_places_tables(sql_catalog: Catalog, schema: Schema) -> None:
    # (the filesystem catalog stores no namespace properties: tables live in the Hadoop layout)
    elsewhere = f"{warehouse(sql_catalog)}-elsewhere/ns"
    sql_catalog.create_namespace("db", {"location": elsewhere})
    table = sql_catalog.create_table("db.t", schema)
    assert table.location() == f"{elsewhere}/t"


# ---- tables


def test_create_and_load_table(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.events", schema, properties={"owner": "me"})
    assert table.identifier == ("db", "events")
    # Default location: <warehouse>/<namespace levels>/<table>, as Java's JDBC and Hadoop.
    assert table.location() == f"{warehouse(catalog)}/db/events"
    assert table.format_version == 2
    assert dict(table.properties) == {"owner": "me"}
    assert [f.name for f in table.schema().fields] == ["id", "name"]
    assert table.metadata_location is not None
    assert os.path.exists(table.metadata_location)
    name = os.path.basename(table.metadata_location)
    if is_fs(catalog):
        assert name == "v1.metadata.json"
    else:
        assert name.startswith("00000-") and name.endswith(".metadata.json")
    assert os.path.dirname(table.metadata_location) == f"{table.location()}/metadata"
    assert catalog.table_exists("db.events")
    assert catalog.table_exists(("db", "events"))
    loaded = catalog.load_table(("db", "events"))
    assert loaded == table
    assert TableMetadata.from_json(Path(table.metadata_location).read_bytes()) == table.metadata
    assert catalog.list_tables("db") == [("db", "events")]


def test_create_table_errors(catalog: Catalog, schema: Schema) -> None:
    with pytest.raises(NoSuchNamespaceError, match="nowhere"):
        catalog.create_table("nowhere.t", schema)
    catalog.create_namespace("db")
    first = catalog.create_table("db.t", schema)
    with pytest.raises(TableAlreadyExistsError, match=r"db.t"):
        catalog.create_table("db.t", schema)
    assert catalog.create_table_if_not_exists("db.t", schema) == first
    assert catalog.load_table("db.t") == first
    with pytest.raises(NoSuchTableError, match=r"db.missing"):
        catalog.load_table("db.missing")
    assert not catalog.table_exists("db.missing")
    with pytest.raises(NoSuchTableError, match=r"db.missing"):
        catalog.drop_table("db.missing")
    with pytest.raises(NoSuchNamespaceError, match="missing"):
        catalog.list_tables("missing")


def test_create_table_from_pyarrow_schema(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
    table = catalog.create_table("db.t", arrow)
    fields = table.schema().fields
    assert [(f.field_id, f.name, f.required) for f in fields] == [(1, "id", True), (2, "s", False)]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_format_version_property(catalog: Catalog, schema: Schema, version: int) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema, properties={"format-version": str(version)})
    assert table.format_version == version
    assert "format-version" not in table.properties
    assert catalog.load_table("db.t").format_version == version


def test_create_table_transaction(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    tx = catalog.create_table_transaction("db.t", schema)
    assert not catalog.table_exists("db.t")  # nothing is written before the commit
    tx.set_properties(a="1")
    with tx.update_schema() as update:
        update.add_column("extra", StringType())
    table = tx.commit_transaction()
    assert catalog.table_exists("db.t")
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == table.metadata_location
    assert loaded.properties["a"] == "1"
    assert [f.name for f in loaded.schema().fields] == ["id", "name", "extra"]
    # One metadata file: the staged changes land in the table's first version.
    assert loaded.metadata.metadata_log == ()


def test_create_transaction_loses_to_concurrent_create(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    tx = catalog.create_table_transaction("db.t", schema)
    winner = catalog.create_table("db.t", schema)
    with pytest.raises(TableAlreadyExistsError, match=r"db.t"):
        tx.commit_transaction()
    assert catalog.load_table("db.t") == winner
    metadata_dir = Path(os.path.dirname(winner.metadata_location or ""))
    files = [p.name for p in metadata_dir.glob("*.metadata.json")]
    assert files == [os.path.basename(winner.metadata_location or "")]


def test_commit_updates(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    first_location = table.metadata_location
    table.transaction().set_properties(k="v").commit_transaction()
    assert table.properties["k"] == "v"
    name = os.path.basename(table.metadata_location or "")
    if is_fs(catalog):
        assert name == "v2.metadata.json"
        hint = Path(table.location()) / "metadata" / "version-hint.text"
        assert hint.read_text().strip() == "2"
    else:
        assert name.startswith("00001-")
    assert [e.metadata_file for e in table.metadata.metadata_log] == [first_location]
    with table.update_schema() as update:
        update.add_column("more", StringType())
    loaded = catalog.load_table("db.t")
    assert loaded == table
    assert [f.name for f in loaded.schema().fields] == ["id", "name", "more"]
    assert len(loaded.metadata.metadata_log) == 2


def test_list_and_drop_tables(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    catalog.create_namespace("db.sub")
    catalog.create_namespace("other")
    for name in ("db.b", "db.a", "db.sub.c", "other.d"):
        catalog.create_table(name, schema)
    assert catalog.list_tables("db") == [("db", "a"), ("db", "b")]
    assert catalog.list_tables("db.sub") == [("db", "sub", "c")]
    # Tables are not namespaces.
    assert catalog.list_namespaces("db") == [("db", "sub")]
    location = catalog.load_table("db.a").location()
    catalog.drop_table("db.a")
    assert not catalog.table_exists("db.a")
    assert catalog.list_tables("db") == [("db", "b")]
    if not is_fs(catalog):
        # Without purge the files stay (the filesystem catalog deletes the directory, as
        # Java's HadoopCatalog does, since there the files are the table).
        assert os.listdir(f"{location}/metadata")


def test_drop_table_purge(catalog: Catalog, schema: Schema, tmp_path: Path) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    paths = []
    for i in range(4):
        p = data_dir / f"f{i}.parquet"
        p.write_bytes(b"x")
        paths.append(str(p))
    commit_snapshot(table, paths[:2])
    commit_snapshot(table, paths[2:])
    metadata_dir = Path(table.location()) / "metadata"
    assert len(list(metadata_dir.glob("*.avro"))) == 4
    unrelated = data_dir / "not-in-table.parquet"
    unrelated.write_bytes(b"y")
    # The data files lie outside the table location: purged only on request (test_purge_scope).
    catalog.drop_table("db.t", purge=True, delete_outside_location=True)
    assert not catalog.table_exists("db.t")
    assert [p.name for p in data_dir.iterdir()] == ["not-in-table.parquet"]
    assert not metadata_dir.exists() or list(metadata_dir.iterdir()) == []


def test_rename_table(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    catalog.create_namespace("archive")
    table = catalog.create_table("db.t", schema)
    if is_fs(catalog):
        with pytest.raises(UnsupportedError, match=r"db.t.*supports"):
            catalog.rename_table("db.t", "archive.t")
        return
    renamed = catalog.rename_table("db.t", "archive.t2")
    assert renamed.identifier == ("archive", "t2")
    assert renamed.metadata_location == table.metadata_location
    assert not catalog.table_exists("db.t")
    assert catalog.list_tables("archive") == [("archive", "t2")]
    assert catalog.list_tables("db") == []
    catalog.create_table("db.other", schema)
    with pytest.raises(TableAlreadyExistsError, match=r"db.other"):
        catalog.rename_table("archive.t2", "db.other")
    with pytest.raises(NoSuchTableError, match=r"db.gone"):
        catalog.rename_table("db.gone", "db.new")
    with pytest.raises(NoSuchNamespaceError, match="nowhere"):
        catalog.rename_table("archive.t2", "nowhere.t2")
    # The renamed table still commits.
    renamed.transaction().set_properties(x="y").commit_transaction()
    assert catalog.load_table("archive.t2").properties["x"] == "y"


def test_register_table(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    location = table.metadata_location or ""
    if is_fs(catalog):
        with pytest.raises(UnsupportedError, match=r"db.copy.*supports"):
            catalog.register_table("db.copy", location)
        return
    registered = catalog.register_table("db.copy", location)
    assert registered.metadata == table.metadata
    assert registered.metadata_location == location
    assert catalog.load_table("db.copy").metadata_location == location
    with pytest.raises(TableAlreadyExistsError, match=r"db.copy"):
        catalog.register_table("db.copy", location)
    with pytest.raises(NoSuchNamespaceError, match="nowhere"):
        catalog.register_table("nowhere.t", location)


def test_gzip_metadata_and_previous_versions(catalog: Catalog, schema: Schema) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t",
        schema,
        properties={
            "write.metadata.compression-codec": "gzip",
            "write.metadata.previous-versions-max": "2",
            "write.metadata.delete-after-commit.enabled": "true",
        },
    )
    locations = [table.metadata_location]
    for i in range(4):
        table.transaction().set_properties(i=str(i)).commit_transaction()
        locations.append(table.metadata_location)
    assert all(str(loc).endswith(".gz.metadata.json") for loc in locations)
    assert Path(str(locations[-1])).read_bytes()[:2] == b"\x1f\x8b"
    log = [e.metadata_file for e in table.metadata.metadata_log]
    assert log == locations[-3:-1]
    # Files dropped from the log were deleted after the commits; the log's and current remain.
    remaining = sorted(str(p) for p in (Path(table.location()) / "metadata").glob("*.json"))
    assert remaining == sorted(str(loc) for loc in locations[-3:])
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == locations[-1]
    assert loaded.properties["i"] == "3"


def test_write_metadata_path(sql_catalog: Catalog, schema: Schema, tmp_path: Path) -> None:
    sql_catalog.create_namespace("db")
    custom = tmp_path / "custom-metadata"
    table = sql_catalog.create_table(
        "db.t", schema, properties={"write.metadata.path": str(custom)}
    )
    assert os.path.dirname(table.metadata_location or "") == str(custom)
    table.transaction().set_properties(a="b").commit_transaction()
    assert os.path.dirname(table.metadata_location or "") == str(custom)
    assert os.path.basename(table.metadata_location or "").startswith("00001-")


def test_explicit_location(sql_catalog: Catalog, schema: Schema, tmp_path: Path) -> None:
    sql_catalog.create_namespace("db")
    table = sql_catalog.create_table("db.t", schema, location=str(tmp_path / "x") + "/")
    assert table.location() == str(tmp_path / "x")


def test_filesystem_refuses_custom_location(tmp_path: Path, schema: Schema) -> None:
    from frazil.catalog import load_catalog

    catalog = load_catalog("fs", type="hadoop", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    with pytest.raises(UnsupportedError, match=r"db\.t"):
        catalog.create_table("db.t", schema, location=str(tmp_path / "elsewhere"))


def test_filesystem_load_probes_past_stale_hint(tmp_path: Path, schema: Schema) -> None:
    from frazil.catalog import load_catalog

    catalog = load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    for i in range(3):
        table.transaction().set_properties(i=str(i)).commit_transaction()
    hint = Path(table.location()) / "metadata" / "version-hint.text"
    hint.write_text("2")  # stale, as after a crash between the commit and the hint update
    assert catalog.load_table("db.t").metadata_location == table.metadata_location
    hint.unlink()  # missing: fall back to listing
    assert catalog.load_table("db.t").metadata_location == table.metadata_location
    hint.write_text("garbage")
    assert catalog.load_table("db.t").metadata_location == table.metadata_location


def test_filesystem_reads_java_style_gzip_versions(tmp_path: Path, schema: Schema) -> None:
    from frazil.catalog import load_catalog

    catalog = load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t", schema, properties={"write.metadata.compression-codec": "gzip"}
    )
    assert os.path.basename(table.metadata_location or "") == "v1.gz.metadata.json"
    table.transaction().set_properties(a="b").commit_transaction()
    assert os.path.basename(table.metadata_location or "") == "v2.gz.metadata.json"
    assert catalog.load_table("db.t").properties["a"] == "b"


def test_filesystem_refuses_object_store(tmp_path: Path) -> None:
    from frazil.catalog import load_catalog
    from frazil.io.local import LocalFileIO

    class NoAtomicCreate(LocalFileIO):
        @property
        def supports_atomic_create(self) -> bool:
            return False

    import sys

    module = sys.modules[__name__]
    module.NoAtomicCreate = NoAtomicCreate  # type: ignore[attr-defined]
    with pytest.raises(UnsupportedError, match="atomic"):
        load_catalog(
            "fs",
            type="filesystem",
            warehouse=str(tmp_path),
            **{"py-io-impl": f"{__name__}.NoAtomicCreate"},
        )


def test_schema_change_conflict_is_validation_not_retry(catalog: Catalog, schema: Schema) -> None:
    """A stale schema update against a changed schema fails on its requirement."""
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    stale = catalog.load_table("db.t")
    with table.update_schema() as update:
        update.add_column("a", StringType())
    wider = Schema(*schema.fields, NestedField(3, "b", StringType()), schema_id=1)
    from frazil.exceptions import CommitFailedError
    from frazil.table.transaction import requirements_for

    updates = [AddSchemaUpdate(wider, 3), SetCurrentSchemaUpdate(-1)]
    with pytest.raises(CommitFailedError, match=r"db.t"):
        catalog.commit_table(stale, requirements_for(stale.metadata, updates), updates)
    assert catalog.load_table("db.t") == table


def test_sql_schema_v0_and_views(sql_catalog: Catalog, schema: Schema, tmp_path: Path) -> None:
    """A database with the Java V0 schema (no ``iceberg_type``) works; in a V1 database, view
    rows (written by Java or iceberg-rust) are not tables, and a table row alone makes its
    namespace exist (as in Java and PyIceberg)."""
    from sqlalchemy import text

    from frazil.catalog.sql import SqlCatalog

    assert isinstance(sql_catalog, SqlCatalog)
    sql_catalog.create_namespace("db")
    table = sql_catalog.create_table("db.t", schema)
    with sql_catalog.engine.begin() as conn:
        assert conn.execute(text("SELECT iceberg_type FROM iceberg_tables")).scalar() == "TABLE"
        conn.execute(
            text(
                "INSERT INTO iceberg_tables VALUES "
                "('test', 'views', 'v', '/somewhere/v.metadata.json', NULL, 'VIEW'),"
                "('test', 'implicit', 't', :loc, NULL, NULL)"
            ),
            {"loc": table.metadata_location},
        )
    assert sql_catalog.list_tables("db") == [("db", "t")]
    assert sql_catalog.list_tables("views") == []
    assert not sql_catalog.table_exists("views.v")
    with pytest.raises(NoSuchTableError, match=r"views\.v"):
        sql_catalog.load_table("views.v")
    assert sql_catalog.namespace_exists("implicit")
    assert sql_catalog.load_table("implicit.t").metadata == table.metadata

    v0_uri = f"sqlite:///{tmp_path}/v0.db"
    from sqlalchemy import create_engine

    engine = create_engine(v0_uri)
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
                "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, "
                "metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
                "PRIMARY KEY (catalog_name, table_namespace, table_name))"
            )
        )
    engine.dispose()
    from frazil.catalog import load_catalog

    v0 = load_catalog("v0", uri=v0_uri, warehouse=str(tmp_path / "v0wh"))
    v0.create_namespace("db")
    t = v0.create_table("db.t", schema)
    t.transaction().set_properties(a="b").commit_transaction()
    assert v0.list_tables("db") == [("db", "t")]
    assert v0.load_table("db.t").properties["a"] == "b"
    v0.close()  # type: ignore[attr-defined]
