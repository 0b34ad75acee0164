"""frazil's Hive catalog against a real Hive Metastore 2.3.9: namespaces, tables and views as the
metastore holds them, the commit lock released on every path, a held lock ending in the
documented error, hostile identifiers refused before anything exists, no secrets in messages."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.catalog.hive import HiveCatalog, HiveLockTimeoutError
from frazil.catalog.hive._thrift.hive_metastore import ttypes
from frazil.exceptions import (
    CatalogBusyError,
    CatalogError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _rows(table: Any) -> list[tuple[int, str]]:
    return sorted((r["id"], r["name"]) for r in table.scan().to_arrow().to_pylist())


def _hms(catalog: HiveCatalog, db: str, name: str) -> Any:
    with catalog._client("test") as client:
        return client.get_table_req(ttypes.GetTableRequest(dbName=db, tblName=name)).table


def _locks(catalog: HiveCatalog) -> list[Any]:
    with catalog._client("test") as client:
        return list(client.show_locks(ttypes.ShowLocksRequest()).locks or [])


def _files(root: str) -> list[str]:
    path = root.removeprefix("file://").removeprefix("file:")
    return sorted(str(p) for p in Path(path).rglob("*") if p.is_file())


def test_load_catalog_type_hive_and_uri_inference(metastore: Any) -> None:
    explicit = load_catalog("a", type="hive", uri=metastore.uri)
    inferred = load_catalog("b", uri=metastore.uri)
    assert isinstance(explicit, HiveCatalog) and isinstance(inferred, HiveCatalog)
    assert ("default",) in inferred.list_namespaces()


def test_namespaces_are_databases(catalog: HiveCatalog, metastore: Any) -> None:
    catalog.create_namespace("ns_props", {"comment": "sales", "owner_team": "x"})
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace("ns_props")
    props = catalog.load_namespace_properties("ns_props")
    assert props["comment"] == "sales" and props["owner_team"] == "x"
    assert props["location"].endswith("/ns_props.db")
    with catalog._client("test") as client:
        database = client.get_database("ns_props")
    assert database.description == "sales" and database.parameters == {"owner_team": "x"}
    summary = catalog.update_namespace_properties("ns_props", {"owner_team", "nope"}, {"k": "v"})
    assert summary.removed == ["owner_team"] and summary.missing == ["nope"]
    assert summary.updated == ["k"]
    assert catalog.load_namespace_properties("ns_props")["k"] == "v"
    assert "owner_team" not in catalog.load_namespace_properties("ns_props")
    assert ("ns_props",) in catalog.list_namespaces()
    assert catalog.list_namespaces("ns_props") == []
    with pytest.raises(InvalidArgumentError, match="one level"):
        catalog.create_namespace(("a", "b"))
    assert not catalog.namespace_exists(("ns_props", "b"))
    catalog.create_table("ns_props.t", SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("ns_props")
    catalog.drop_table("ns_props.t")
    catalog.drop_namespace("ns_props")
    assert not catalog.namespace_exists("ns_props")
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace("ns_props")


def test_table_is_stored_as_java_stores_it(catalog: HiveCatalog, db: str) -> None:
    table = catalog.create_table(f"{db}.events", SCHEMA, properties={"owner": "me"})
    tbl = _hms(catalog, db, "events")
    assert tbl.tableType == "EXTERNAL_TABLE"
    assert tbl.parameters["EXTERNAL"] == "TRUE" and tbl.parameters["table_type"] == "ICEBERG"
    assert tbl.parameters["metadata_location"] == table.metadata_location
    assert "previous_metadata_location" not in tbl.parameters
    assert tbl.parameters["owner"] == "me"
    assert tbl.parameters["uuid"] == str(table.metadata.table_uuid)
    assert [(c.name, c.type) for c in tbl.sd.cols] == [("id", "bigint"), ("name", "string")]
    assert tbl.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    first = table.metadata_location
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=SCHEMA))
    table = catalog.load_table(f"{db}.events")
    tbl = _hms(catalog, db, "events")
    assert tbl.parameters["previous_metadata_location"] == first
    assert tbl.parameters["metadata_location"] == table.metadata_location
    snapshot = table.metadata.current_snapshot()
    assert tbl.parameters["current-snapshot-id"] == str(snapshot.snapshot_id)
    assert tbl.parameters["numRows"] == "2" and tbl.parameters["numFiles"] == "1"
    assert tbl.parameters["snapshot-count"] == "1"
    # A property the commit removes leaves the metastore too.
    with table.transaction() as tx:
        tx.remove_properties("owner")
    assert "owner" not in _hms(catalog, db, "events").parameters
    assert catalog.list_tables(db) == [(db, "events")]
    assert _rows(catalog.load_table(f"{db}.events")) == [(1, "a"), (2, "b")]
    assert _locks(catalog) == []


def test_rename_register_drop_and_purge(catalog: HiveCatalog, db: str) -> None:
    table = catalog.create_table(f"{db}.a", SCHEMA)
    table.append(pa.table({"id": [1], "name": ["x"]}, schema=SCHEMA))
    renamed = catalog.rename_table(f"{db}.a", f"{db}.b")
    assert _rows(renamed) == [(1, "x")]
    assert not catalog.table_exists(f"{db}.a")
    catalog.create_table(f"{db}.c", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table(f"{db}.b", f"{db}.c")
    location = renamed.metadata_location
    catalog.drop_table(f"{db}.b")
    assert _files(renamed.metadata.location)  # a plain drop keeps the files
    registered = catalog.register_table(f"{db}.again", location)
    assert _rows(registered) == [(1, "x")]
    with pytest.raises(TableAlreadyExistsError):
        catalog.register_table(f"{db}.again", location)
    catalog.purge_table(f"{db}.again")
    assert _files(renamed.metadata.location) == []
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{db}.again")


def test_a_plain_hive_table_is_not_an_iceberg_table(catalog: HiveCatalog, db: str) -> None:
    from frazil.catalog.hive.tables import new_hms_table

    tbl = new_hms_table(db, "plain", "me")
    tbl.parameters = {}
    tbl.tableType = "MANAGED_TABLE"
    tbl.sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("a", "int", None)],
        serdeInfo=ttypes.SerDeInfo(serializationLib="x", parameters={}),
    )
    with catalog._client("test") as client:
        client.create_table(tbl)
    assert not catalog.table_exists(f"{db}.plain")
    assert catalog.list_tables(db) == []
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{db}.plain")
    with pytest.raises(NoSuchTableError, match="as an Iceberg table"):
        catalog.drop_table(f"{db}.plain")


def test_views(catalog: HiveCatalog, db: str) -> None:
    catalog.create_table(f"{db}.t", SCHEMA)
    view = catalog.create_view(f"{db}.v", SCHEMA, f"SELECT * FROM {db}.t")
    tbl = _hms(catalog, db, "v")
    assert tbl.tableType == "VIRTUAL_VIEW" and tbl.parameters["table_type"] == "ICEBERG-VIEW"
    assert tbl.parameters["metadata_location"] == view.metadata_location
    assert catalog.list_views(db) == [(db, "v")] and catalog.list_tables(db) == [(db, "t")]
    assert not catalog.table_exists(f"{db}.v")
    first = view.metadata_location
    view.replace_version().with_query("spark", f"SELECT id, name FROM {db}.t").with_schema(
        SCHEMA
    ).commit()
    assert _hms(catalog, db, "v").parameters["previous_metadata_location"] == first
    assert catalog.load_view(f"{db}.v").metadata_location == view.metadata_location
    catalog.rename_view(f"{db}.v", f"{db}.w")
    assert catalog.list_views(db) == [(db, "w")]
    catalog.drop_view(f"{db}.w")
    assert catalog.list_views(db) == []
    assert _locks(catalog) == []


@pytest.mark.parametrize(
    "ident",
    [
        ("..", "t"),
        ("ok", "a/b"),
        ("ok", "nul\x00"),
        ("ok", "x" * 300),
        ("../..", "t"),
        ("ok", ".."),
    ],
)
def test_hostile_identifiers_are_refused_before_anything_exists(
    catalog: HiveCatalog, metastore: Any, ident: tuple[str, str]
) -> None:
    before_files = _files(metastore.warehouse)
    with catalog._client("test") as client:
        before_dbs = client.get_all_databases()
    with pytest.raises(InvalidArgumentError):
        catalog.create_namespace(ident[0] if ident[0] != "ok" else ident[1])
    if ident[0] == "ok":
        catalog.create_namespace_if_not_exists("ok")
        before_dbs = sorted({*before_dbs, "ok"})
        before_files = _files(metastore.warehouse)
    with pytest.raises(InvalidArgumentError):
        catalog.create_table(ident, SCHEMA)
    with catalog._client("test") as client:
        assert sorted(client.get_all_databases()) == sorted(before_dbs)
        if ident[0] == "ok":
            assert client.get_all_tables("ok") == []
    assert _files(metastore.warehouse) == before_files


def test_commit_waits_for_a_held_lock_then_names_it(
    catalog: HiveCatalog, metastore: Any, db: str
) -> None:
    """A lock held elsewhere (a writer gone without unlocking): the commit times out after the
    configured wait with an error naming the held lock, releases its own waiting request, and
    commits once the lock is released with ``release_lock``."""
    table = catalog.create_table(f"{db}.locked", SCHEMA)
    with catalog._client("test") as client:
        held = client.lock(
            ttypes.LockRequest(
                component=[
                    ttypes.LockComponent(
                        type=ttypes.LockType.EXCLUSIVE,
                        level=ttypes.LockLevel.TABLE,
                        dbname=db,
                        tablename="locked",
                    )
                ],
                user="ghost",
                hostname="gone-host",
                agentInfo="killed-writer",
            )
        )
    assert held.state == ttypes.LockState.ACQUIRED
    impatient = load_catalog(
        "hms",
        type="hive",
        uri=metastore.uri,
        warehouse=metastore.warehouse,
        **{"lock-timeout-ms": "1500", "lock-check-max-wait-time": "0.2"},
    )
    stale = impatient.load_table(f"{db}.locked")
    with pytest.raises(HiveLockTimeoutError) as info:
        with stale.transaction() as tx:
            tx.set_properties({"k": "v"})
    err = info.value
    assert err.holder == held.lockid
    assert f"lock {held.lockid}" in str(err) and "ghost@gone-host" in str(err)
    assert f"release_lock({held.lockid})" in str(err)
    # Only the held lock remains: the waiting request was released.
    assert [lk.lockid for lk in _locks(catalog)] == [held.lockid]
    assert catalog.load_table(f"{db}.locked").metadata_location == table.metadata_location
    impatient.release_lock(held.lockid)
    impatient.release_lock(held.lockid)  # gone already: no error
    stale.append(pa.table({"id": [7], "name": ["z"]}, schema=SCHEMA))
    assert _rows(catalog.load_table(f"{db}.locked")) == [(7, "z")]
    assert _locks(catalog) == []


def test_lock_retries_bound_the_wait(catalog: HiveCatalog, metastore: Any, db: str) -> None:
    """PyIceberg's ``lock-check-retries`` caps the polls of a waiting lock."""
    catalog.create_table(f"{db}.r", SCHEMA)
    with catalog._client("test") as client:
        held = client.lock(
            ttypes.LockRequest(
                component=[
                    ttypes.LockComponent(
                        type=ttypes.LockType.EXCLUSIVE,
                        level=ttypes.LockLevel.TABLE,
                        dbname=db,
                        tablename="r",
                    )
                ],
                user="u",
                hostname="h",
            )
        )
    try:
        few = load_catalog(
            "hms",
            uri=metastore.uri,
            **{"lock-check-retries": "2", "lock-check-min-wait-time": "0.01"},
        )
        with pytest.raises(HiveLockTimeoutError, match="timed out"):
            few.load_table(f"{db}.r").append(pa.table({"id": [1], "name": ["a"]}, schema=SCHEMA))
        assert [lk.lockid for lk in _locks(catalog)] == [held.lockid]
    finally:
        catalog.release_lock(held.lockid)


def test_lock_disabled_needs_hive_4(catalog: HiveCatalog, metastore: Any, db: str) -> None:
    """``engine.hive.lock-enabled=false`` commits with Hive 4's check-and-put; Hive 2.3 lacks
    it, which is a clear error and no change."""
    table = catalog.create_table(
        f"{db}.nolock", SCHEMA, properties={"engine.hive.lock-enabled": "false"}
    )
    with pytest.raises(CatalogError, match="needs a Hive 4 metastore"):
        table.append(pa.table({"id": [1], "name": ["a"]}, schema=SCHEMA))
    assert catalog.load_table(f"{db}.nolock").metadata_location == table.metadata_location


def test_fail_over_and_no_secrets(metastore: Any, caplog: pytest.LogCaptureFixture) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    secret = "s3cr3t-value-never-shown"
    props = {
        "s3.secret-access-key": secret,
        "s3.access-key-id": "AKIAEXAMPLE",
        "warehouse": metastore.warehouse,
    }
    caplog.set_level(logging.DEBUG)
    both = load_catalog("fo", uri=f"thrift://127.0.0.1:{dead},{metastore.uri}", **props)
    assert ("default",) in both.list_namespaces()
    none = load_catalog("fo", uri=f"thrift://127.0.0.1:{dead}", **props)
    with pytest.raises(CatalogBusyError) as info:
        none.list_namespaces()
    for text in (repr(both), repr(none), str(info.value), caplog.text):
        assert secret not in text and "AKIAEXAMPLE" not in text
    with pytest.raises(InvalidArgumentError) as bad:
        load_catalog("fo", type="hive", uri=f"http://user:{secret}@host:1")
    assert secret not in str(bad.value)


def test_kerberos_is_refused_plainly(metastore: Any) -> None:
    from frazil.exceptions import UnsupportedError

    with pytest.raises(UnsupportedError, match="kerberos"):
        load_catalog("k", uri=metastore.uri, **{"hive.kerberos-authentication": "true"})


def test_ugi_is_sent(metastore: Any) -> None:
    catalog = load_catalog("u", uri=metastore.uri, ugi=f"{os.environ.get('USER', 'me')}:grp")
    assert ("default",) in catalog.list_namespaces()


def test_encrypted_table_keeps_metadata_hash(metastore: Any, tmp_path: Path) -> None:
    """Java 1.11 keeps an encrypted table's metadata hash in the metastore: base64 of the
    SHA-256 of the metadata file (computed here with hashlib); a metadata file changed behind
    the catalog's back is refused on load, never read."""
    import base64
    import hashlib

    from frazil.exceptions import ValidationError

    kms = {
        "encryption.kms-impl": "frazil.encryption.InMemoryKms",
        "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode(),
    }
    catalog = load_catalog(
        "hms_enc", type="hive", uri=metastore.uri, warehouse=metastore.warehouse, **kms
    )
    catalog.create_namespace("enc_db")
    t = catalog.create_table(
        "enc_db.t", SCHEMA, properties={"format-version": "3", "encryption.key-id": "master-1"}
    )
    t.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=SCHEMA))
    plain = catalog.create_table("enc_db.plain", SCHEMA)

    params = _hms(catalog, "enc_db", "t").parameters
    path = Path(params["metadata_location"].removeprefix("file://").removeprefix("file:"))
    want = base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()
    assert params["metadata_hash"] == want
    assert "metadata_hash" not in _hms(catalog, "enc_db", "plain").parameters
    assert plain.metadata.properties.get("encryption.key-id") is None

    fresh = load_catalog(
        "hms_enc", type="hive", uri=metastore.uri, warehouse=metastore.warehouse, **kms
    )
    assert _rows(fresh.load_table("enc_db.t")) == [(1, "a"), (2, "b")]
    # a metadata file edited in storage (the JSON is plaintext): the hash no longer matches
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(ValidationError, match="metadata_hash"):
        load_catalog(
            "hms_enc", type="hive", uri=metastore.uri, warehouse=metastore.warehouse, **kms
        ).load_table("enc_db.t")
