"""The Glue catalog against moto's Glue (server mode, loopback): the stored layout checked
against PyIceberg 0.12's own Glue column builder, namespaces, errors, hostile identifiers,
credentials kept out of messages, and S3 Tables databases (federation emulated in front of moto,
see aws_moto.GlueEmulator)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from aws_moto import ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, GlueEmulator, client_props, free_port

from frazil.catalog import load_catalog
from frazil.catalog.glue import GlueCatalog
from frazil.exceptions import (
    CatalogBusyError,
    CatalogError,
    CommitFailedError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]})


def _raw(glue: GlueCatalog, database: str, table: str) -> dict[str, Any]:
    out: dict[str, Any] = glue.glue.get_table(DatabaseName=database, Name=table)["Table"]
    return out


def test_table_stored_as_java_and_pyiceberg_store_it(glue: GlueCatalog, database: str) -> None:
    pyiceberg_glue = pytest.importorskip("pyiceberg.catalog.glue")
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("price", pa.decimal128(10, 2)),
            ("at", pa.timestamp("us", tz="UTC")),
            ("tags", pa.list_(pa.string())),
            ("attrs", pa.map_(pa.string(), pa.int32())),
            ("point", pa.struct([("x", pa.float64()), ("y", pa.float32())])),
        ]
    )
    t = glue.create_table(f"{database}.layout", schema)
    first = t.metadata_location
    with t.update_schema() as u:
        u.rename_column("price", "cost")
    t = glue.load_table(f"{database}.layout")
    raw = _raw(glue, database, "layout")
    assert raw["TableType"] == "EXTERNAL_TABLE"
    params = raw["Parameters"]
    assert params["table_type"] == "ICEBERG"
    assert params["metadata_location"] == t.metadata_location
    assert params["previous_metadata_location"] == first
    assert raw["StorageDescriptor"]["Location"] == t.metadata.location
    # The columns PyIceberg 0.12 would write for the same metadata (read by PyIceberg).
    from pyiceberg.table import StaticTable

    peer = StaticTable.from_metadata(t.metadata_location)
    assert raw["StorageDescriptor"]["Columns"] == pyiceberg_glue._to_columns(peer.metadata)
    by_name = {c["Name"]: c for c in raw["StorageDescriptor"]["Columns"]}
    assert by_name["price"]["Parameters"]["iceberg.field.current"] == "false"
    assert by_name["cost"]["Parameters"] == {
        "iceberg.field.id": "2",
        "iceberg.field.optional": "true",
        "iceberg.field.current": "true",
    }
    assert by_name["id"]["Parameters"]["iceberg.field.optional"] == "false"


def test_create_append_load_exact_rows(glue: GlueCatalog, database: str, warehouse: Path) -> None:
    t = glue.create_table(f"{database}.events", ROWS.schema)
    assert t.metadata.location == f"{warehouse}/{database}.db/events"
    t.append(ROWS)
    t.append(ROWS.slice(0, 1))
    got = glue.load_table(f"{database}.events").scan().to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == [1, 1, 2, 3]
    assert got.column("name").to_pylist() == ["a", "a", "b", "c"]
    assert glue.list_tables(database) == [(database, "events")]
    assert glue.table_exists(f"{database}.events")


def test_namespaces(glue: GlueCatalog, warehouse: Path) -> None:
    glue.create_namespace("ns_props", {"location": f"{warehouse}/custom", "owner": "ana"})
    assert ("ns_props",) in glue.list_namespaces()
    assert glue.list_namespaces("ns_props") == []
    assert glue.load_namespace_properties("ns_props") == {
        "location": f"{warehouse}/custom",
        "owner": "ana",
    }
    summary = glue.update_namespace_properties(
        "ns_props", removals={"owner", "nope"}, updates={"a": "1"}
    )
    assert (summary.removed, summary.updated, summary.missing) == (["owner"], ["a"], ["nope"])
    assert glue.load_namespace_properties("ns_props") == {
        "location": f"{warehouse}/custom",
        "a": "1",
    }
    t = glue.create_table("ns_props.t", ROWS.schema)
    assert t.metadata.location == f"{warehouse}/custom/t"
    with pytest.raises(NamespaceAlreadyExistsError):
        glue.create_namespace("ns_props")
    with pytest.raises(NamespaceNotEmptyError):
        glue.drop_namespace("ns_props")
    glue.drop_table("ns_props.t")
    glue.drop_namespace("ns_props")
    assert not glue.namespace_exists("ns_props")
    with pytest.raises(NoSuchNamespaceError):
        glue.drop_namespace("ns_props")
    with pytest.raises(NoSuchNamespaceError):
        glue.load_namespace_properties("ns_props")
    with pytest.raises(InvalidArgumentError, match="one level"):
        glue.create_namespace("a.b")


def test_errors_map_onto_frazil_exceptions(glue: GlueCatalog, database: str) -> None:
    with pytest.raises(NoSuchTableError):
        glue.load_table(f"{database}.missing")
    with pytest.raises(NoSuchNamespaceError):
        glue.create_table("no_such_db.t", ROWS.schema)
    with pytest.raises(NoSuchNamespaceError):
        glue.list_tables("no_such_db")
    glue.create_table(f"{database}.t", ROWS.schema)
    with pytest.raises(TableAlreadyExistsError):
        glue.create_table(f"{database}.t", ROWS.schema)
    with pytest.raises(NoSuchTableError):
        glue.drop_table(f"{database}.missing")
    # A Glue table that is not Iceberg (Hive's) is neither loaded, listed nor dropped.
    glue.glue.create_table(
        DatabaseName=database,
        TableInput={"Name": "hive_t", "TableType": "EXTERNAL_TABLE", "Parameters": {}},
    )
    with pytest.raises(NoSuchTableError, match="not an Iceberg table"):
        glue.load_table(f"{database}.hive_t")
    with pytest.raises(NoSuchTableError, match="not an Iceberg table"):
        glue.drop_table(f"{database}.hive_t")
    with pytest.raises(TableAlreadyExistsError, match="non-Iceberg"):
        glue.create_table(f"{database}.hive_t", ROWS.schema)
    assert glue.list_tables(database) == [(database, "t")]


def test_rename_and_register(glue: GlueCatalog, database: str) -> None:
    t = glue.create_table(f"{database}.old", ROWS.schema)
    t.append(ROWS)
    renamed = glue.rename_table(f"{database}.old", f"{database}.new")
    assert renamed.metadata_location == t.metadata_location
    assert glue.list_tables(database) == [(database, "new")]
    assert glue.load_table(f"{database}.new").scan().to_arrow().num_rows == 3
    registered = glue.register_table(f"{database}.again", t.metadata_location)
    assert registered.scan().to_arrow().num_rows == 3
    with pytest.raises(TableAlreadyExistsError):
        glue.register_table(f"{database}.again", t.metadata_location)
    with pytest.raises(NoSuchTableError):
        glue.rename_table(f"{database}.old", f"{database}.x")


def test_stale_version_is_a_lost_race(
    glue: GlueCatalog, glue_emulator: GlueEmulator, database: str
) -> None:
    """A commit whose UpdateTable carries a version another writer replaced gets Glue's
    ConcurrentModificationException (emulated in front of moto): CommitFailedError, the new
    metadata file is deleted and the table is unchanged."""
    t = glue.create_table(
        f"{database}.race", ROWS.schema, properties={"commit.retry.num-retries": "0"}
    )
    real = glue._get_table
    other = load_catalog(
        "other",
        type="glue",
        warehouse=glue.properties["warehouse"],
        **client_props("glue", glue_emulator.url),
    )

    real_swap = glue._swap_pointer
    state = {"in_swap": False, "done": False}

    def swap(*args: Any) -> bool:
        state["in_swap"] = True
        try:
            return real_swap(*args)
        finally:
            state["in_swap"] = False

    def read_then_lose(db: str, name: str) -> Any:
        out = real(db, name)
        if state["in_swap"] and not state["done"]:
            # The pointer swap's read: another writer commits between it and this writer's
            # UpdateTable, whose VersionId is then stale.
            state["done"] = True
            other.load_table(f"{database}.race").append(ROWS)
        return out

    before = glue_emulator.conflicts
    glue._get_table = read_then_lose  # type: ignore[method-assign]
    glue._swap_pointer = swap  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitFailedError):
            t.append(ROWS.slice(0, 1))
    finally:
        glue._get_table = real  # type: ignore[method-assign]
        glue._swap_pointer = real_swap  # type: ignore[method-assign]
    assert glue_emulator.conflicts == before + 1
    now = glue.load_table(f"{database}.race")
    assert now.scan().to_arrow().num_rows == 3
    metadata_dir = Path(now.metadata.location) / "metadata"
    names = sorted(p.name for p in metadata_dir.glob("*.metadata.json"))
    assert len(names) == 2  # the create's and the other writer's: the loser's file is gone


HOSTILE = ["..", ".", "a/b", "x\x00y", "tab\tle", "n" * 300, ""]


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_identifiers_refused_before_anything_is_created(
    glue: GlueCatalog, database: str, warehouse: Path, bad: str
) -> None:
    databases = glue.glue.get_databases()["DatabaseList"]
    with pytest.raises((InvalidArgumentError, NoSuchTableError)):
        glue.create_namespace((bad,))
    with pytest.raises((InvalidArgumentError, NoSuchTableError)):
        glue.create_table((database, bad), ROWS.schema)
    with pytest.raises((InvalidArgumentError, NoSuchTableError, NoSuchNamespaceError)):
        glue.create_table((bad, "t"), ROWS.schema)
    t = glue.create_table(f"{database}.ok", ROWS.schema)
    with pytest.raises((InvalidArgumentError, NoSuchTableError)):
        glue.rename_table(f"{database}.ok", (database, bad))
    assert glue.glue.get_databases()["DatabaseList"] == databases
    assert [x["Name"] for x in glue.glue.get_tables(DatabaseName=database)["TableList"]] == ["ok"]
    # Nothing was written outside the one table's directory.
    written = {p.relative_to(warehouse).parts[:2] for p in warehouse.rglob("*") if p.is_file()}
    assert written == {(f"{database}.db", "ok")}
    assert t.metadata.location == f"{warehouse}/{database}.db/ok"


def test_credentials_never_in_reprs_errors_or_logs(
    glue_emulator: GlueEmulator, warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    props = client_props("glue", glue_emulator.url)
    caplog.set_level(logging.DEBUG, logger="frazil")
    glue = load_catalog("creds", type="glue", warehouse=str(warehouse), **props)
    glue.create_namespace("creds_db")
    glue.create_table("creds_db.t", ROWS.schema).append(ROWS)
    shown = [repr(glue), str(glue), repr(glue.load_table("creds_db.t"))]
    # An unreachable endpoint and a refused call: the messages name neither secret.
    dead = load_catalog(
        "dead",
        type="glue",
        warehouse=str(warehouse),
        **{**props, "glue.endpoint": f"http://127.0.0.1:{free_port()}", "glue.max-retries": "0"},
    )
    with pytest.raises(CatalogBusyError) as busy:
        dead.list_namespaces()
    glue_emulator.deny.add("GetTables")
    try:
        with pytest.raises(CatalogError, match="AccessDeniedException") as refused:
            glue.list_tables("creds_db")
    finally:
        glue_emulator.deny.discard("GetTables")
    for error in (busy.value, refused.value):
        shown += [str(error), repr(error), str(error.__cause__)]
    shown += [r.getMessage() for r in caplog.records]
    for text in shown:
        for secret in (SECRET_KEY, SESSION_TOKEN):
            assert secret not in text
    assert ACCESS_KEY not in " ".join(shown[:3])


def test_s3_tables_database(glue: GlueCatalog, glue_emulator: GlueEmulator) -> None:
    """A database federated with S3 Tables (emulated in front of moto): S3 Tables assigns the
    location, a location of the caller's is refused, commits land there."""
    glue_emulator.s3tables.add("s3t_db")
    glue.create_namespace("s3t_db")
    with pytest.raises(InvalidArgumentError, match="S3 Tables"):
        glue.create_table("s3t_db.t", ROWS.schema, location="/tmp/elsewhere")
    assert glue.list_tables("s3t_db") == []
    t = glue.create_table("s3t_db.t", ROWS.schema)
    assert glue_emulator.managed_root is not None
    assert t.metadata.location.startswith(glue_emulator.managed_root)
    assert t.metadata.location.endswith("--table-s3")
    t.append(ROWS)
    raw = _raw(glue, "s3t_db", "t")
    assert raw["Parameters"]["table_type"] == "ICEBERG"
    assert "format" not in raw["Parameters"]
    assert raw["Parameters"]["metadata_location"] == glue.load_table("s3t_db.t").metadata_location
    assert glue.load_table("s3t_db.t").scan().to_arrow().num_rows == 3
    with pytest.raises(TableAlreadyExistsError):
        glue.create_table("s3t_db.t", ROWS.schema)
