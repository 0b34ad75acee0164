"""The DynamoDB catalog against moto's DynamoDB (server mode, loopback): the item layout Java and
PyIceberg use (PyIceberg 0.12's DynamoDbCatalog creates, loads and lists frazil's tables and the
other way round), commits as Java's conditional update on ``v``, namespaces, rename and drop,
hostile identifiers, credentials, and 4 writer processes committing concurrently."""

from __future__ import annotations

import itertools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from aws_moto import ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, boto_client, client_props, free_port
from peers import import_peer

from frazil.catalog import load_catalog
from frazil.catalog.dynamodb import DynamoDbCatalog
from frazil.exceptions import (
    CatalogBusyError,
    CommitFailedError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})


def _item(dynamo: DynamoDbCatalog, identifier: str, namespace: str) -> dict[str, Any]:
    out: dict[str, Any] = dynamo.dynamodb.get_item(
        TableName=dynamo.table_name,
        Key={"identifier": {"S": identifier}, "namespace": {"S": namespace}},
        ConsistentRead=True,
    )["Item"]
    return out


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(
        zip(table.column("id").to_pylist(), table.column("name").to_pylist(), strict=True)
    )


def test_create_commit_load_and_item_layout(
    dynamo: DynamoDbCatalog, namespace: str, warehouse: Path
) -> None:
    t = dynamo.create_table(f"{namespace}.t", ROWS.schema)
    assert t.metadata.location == f"{warehouse}/{namespace}.db/t"
    created = _item(dynamo, f"{namespace}.t", namespace)
    assert created["p.table_type"] == {"S": "ICEBERG"}
    assert created["p.metadata_location"] == {"S": t.metadata_location}
    assert {"v", "created_at", "updated_at"} <= set(created)
    t.append(ROWS)
    first = t.metadata_location
    t.append(ROWS.slice(0, 1))
    item = _item(dynamo, f"{namespace}.t", namespace)
    assert item["p.metadata_location"] == {"S": t.metadata_location}
    assert item["p.previous_metadata_location"] == {"S": first}
    assert item["v"] != created["v"]  # every commit sets a new version
    assert item["created_at"] == created["created_at"]
    got = dynamo.load_table(f"{namespace}.t").scan().to_arrow()
    assert _rows(got) == [(1, "a"), (1, "a"), (2, "b"), (3, "c")]
    assert dynamo.list_tables(namespace) == [(namespace, "t")]


def test_version_changed_under_the_commit_is_a_lost_race(
    dynamo: DynamoDbCatalog, moto_url: str, namespace: str, warehouse: Path
) -> None:
    """Another writer's commit lands between this commit's read of the item and its
    conditional update: the condition on ``v`` fails, CommitFailedError, nothing changed."""
    t = dynamo.create_table(
        f"{namespace}.race", ROWS.schema, properties={"commit.retry.num-retries": "0"}
    )
    other = load_catalog(
        "other", type="dynamodb", warehouse=str(warehouse), **client_props("dynamodb", moto_url)
    )
    real_item, real_swap = dynamo._table_item, dynamo._swap_pointer
    state = {"in_swap": False, "done": False}

    def swap(*args: Any) -> bool:
        state["in_swap"] = True
        try:
            return real_swap(*args)
        finally:
            state["in_swap"] = False

    def item_then_lose(ident: Any) -> Any:
        out = real_item(ident)
        if state["in_swap"] and not state["done"]:
            state["done"] = True
            other.load_table(f"{namespace}.race").append(ROWS)
        return out

    dynamo._table_item = item_then_lose  # type: ignore[method-assign]
    dynamo._swap_pointer = swap  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitFailedError):
            t.append(ROWS.slice(0, 1))
    finally:
        dynamo._table_item, dynamo._swap_pointer = real_item, real_swap  # type: ignore[method-assign]
    assert state["done"]
    now = dynamo.load_table(f"{namespace}.race")
    assert now.scan().to_arrow().num_rows == 3
    assert len(list(Path(now.metadata.location, "metadata").glob("*.metadata.json"))) == 2


def test_namespaces(dynamo: DynamoDbCatalog, warehouse: Path) -> None:
    dynamo.create_namespace("dn", {"location": f"{warehouse}/dn_here", "owner": "ana"})
    assert ("dn",) in dynamo.list_namespaces()
    assert dynamo.load_namespace_properties("dn") == {
        "location": f"{warehouse}/dn_here",
        "owner": "ana",
    }
    s = dynamo.update_namespace_properties("dn", removals={"owner", "nope"}, updates={"a": "1"})
    assert (s.removed, s.updated, s.missing) == (["owner"], ["a"], ["nope"])
    assert dynamo.load_namespace_properties("dn") == {"location": f"{warehouse}/dn_here", "a": "1"}
    t = dynamo.create_table("dn.t", ROWS.schema)
    assert t.metadata.location == f"{warehouse}/dn_here/t"
    with pytest.raises(NamespaceAlreadyExistsError):
        dynamo.create_namespace("dn")
    with pytest.raises(NamespaceNotEmptyError):
        dynamo.drop_namespace("dn")
    dynamo.drop_table("dn.t")
    dynamo.drop_namespace("dn")
    assert not dynamo.namespace_exists("dn")
    with pytest.raises(NoSuchNamespaceError):
        dynamo.drop_namespace("dn")
    # Nested namespaces as Java stores them (levels joined with ".").
    dynamo.create_namespace(("outer", "inner"))
    assert dynamo.list_namespaces("outer") == [("outer", "inner")]
    assert ("outer",) in dynamo.list_namespaces()
    assert dynamo.list_namespaces(("outer", "inner")) == []
    with pytest.raises(NoSuchNamespaceError):
        dynamo.list_namespaces("nowhere")


def test_rename_drop_register_and_errors(dynamo: DynamoDbCatalog, namespace: str) -> None:
    t = dynamo.create_table(f"{namespace}.old", ROWS.schema)
    t.append(ROWS)
    with pytest.raises(TableAlreadyExistsError):
        dynamo.create_table(f"{namespace}.old", ROWS.schema)
    moved = dynamo.rename_table(f"{namespace}.old", f"{namespace}.new")
    assert moved.metadata_location == t.metadata_location
    assert dynamo.list_tables(namespace) == [(namespace, "new")]
    with pytest.raises(NoSuchTableError):
        dynamo.load_table(f"{namespace}.old")
    dynamo.create_table(f"{namespace}.other", ROWS.schema)
    with pytest.raises(TableAlreadyExistsError):
        dynamo.rename_table(f"{namespace}.new", f"{namespace}.other")
    with pytest.raises(NoSuchNamespaceError):
        dynamo.rename_table(f"{namespace}.new", "missing_ns.x")
    registered = dynamo.register_table(f"{namespace}.again", t.metadata_location)
    assert registered.scan().to_arrow().num_rows == 3
    dynamo.drop_table(f"{namespace}.again")
    with pytest.raises(NoSuchTableError):
        dynamo.drop_table(f"{namespace}.again")
    with pytest.raises(NoSuchNamespaceError):
        dynamo.create_table("missing_ns.t", ROWS.schema)


@pytest.mark.interop
def test_pyiceberg_shares_the_catalog(
    dynamo: DynamoDbCatalog, moto_url: str, namespace: str, warehouse: Path
) -> None:
    import_peer("pyiceberg")
    from pyiceberg.catalog.dynamodb import DynamoDbCatalog as PyIcebergDynamo

    props = client_props("dynamodb", moto_url)
    client = __import__("boto3").client(
        "dynamodb",
        endpoint_url=moto_url,
        region_name=props["dynamodb.region"],
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    peer = PyIcebergDynamo("peer", client=client, warehouse=str(warehouse))
    # frazil's table, read by PyIceberg.
    ft = dynamo.create_table(f"{namespace}.from_frazil", ROWS.schema)
    ft.append(ROWS)
    assert (namespace,) in peer.list_namespaces()
    assert (namespace, "from_frazil") in peer.list_tables(namespace)
    pt = peer.load_table(f"{namespace}.from_frazil")
    assert pt.metadata_location == dynamo.load_table(f"{namespace}.from_frazil").metadata_location
    assert _rows(pt.scan().to_arrow()) == _rows(ROWS)
    # PyIceberg's table (it cannot commit to it), read and committed to by frazil.
    peer.create_namespace("peer_ns", {"k": "v"})
    assert dynamo.load_namespace_properties("peer_ns") == {"k": "v"}
    peer.create_table("peer_ns.from_pyiceberg", schema=ROWS.schema)
    assert dynamo.list_tables("peer_ns") == [("peer_ns", "from_pyiceberg")]
    t = dynamo.load_table("peer_ns.from_pyiceberg")
    t.append(ROWS)
    assert _rows(peer.load_table("peer_ns.from_pyiceberg").scan().to_arrow()) == _rows(ROWS)


HOSTILE = ["..", ".", "a/b", "x\x00y", "tab\tle", "n" * 300, "", "dot.ted"]


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_identifiers_refused_before_anything_is_created(
    dynamo: DynamoDbCatalog, namespace: str, warehouse: Path, bad: str
) -> None:
    before = dynamo.dynamodb.scan(TableName=dynamo.table_name)["Items"]
    with pytest.raises((InvalidArgumentError, NoSuchTableError)):
        dynamo.create_namespace((bad,))
    with pytest.raises((InvalidArgumentError, NoSuchTableError)):
        dynamo.create_table((namespace, bad), ROWS.schema)
    with pytest.raises((InvalidArgumentError, NoSuchTableError, NoSuchNamespaceError)):
        dynamo.create_table((bad, "t"), ROWS.schema)
    after = dynamo.dynamodb.scan(TableName=dynamo.table_name)["Items"]
    key = lambda i: (i["identifier"]["S"], i["namespace"]["S"])  # noqa: E731
    assert sorted(map(key, after)) == sorted(map(key, before))
    assert not any(p.is_file() for p in warehouse.rglob("*"))


def test_credentials_never_in_reprs_errors_or_logs(
    moto_url: str, warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="frazil")
    props = client_props("dynamodb", moto_url)
    dynamo = load_catalog("creds", type="dynamodb", warehouse=str(warehouse), **props)
    dynamo.create_namespace("creds_ns")
    dynamo.create_table("creds_ns.t", ROWS.schema).append(ROWS)
    shown = [repr(dynamo), str(dynamo), repr(dynamo.load_table("creds_ns.t"))]
    with pytest.raises(CatalogBusyError) as busy:
        load_catalog(
            "dead",
            type="dynamodb",
            warehouse=str(warehouse),
            **{**props, "dynamodb.endpoint": f"http://127.0.0.1:{free_port()}"},
        )
    shown += [str(busy.value), repr(busy.value), str(busy.value.__cause__)]
    shown += [r.getMessage() for r in caplog.records]
    for text in shown:
        for secret in (SECRET_KEY, SESSION_TOKEN):
            assert secret not in text


def test_the_server_applies_a_conditional_write_atomically(moto_url: str) -> None:
    """The fixture, not frazil: of six updates conditioned on the same version, exactly one
    lands, as in DynamoDB. moto alone lets several pass the check before any writes (a lost
    commit in the four-writer test); a tiny switch interval makes that race near-certain."""
    import threading

    client = boto_client("dynamodb", moto_url)
    client.create_table(
        TableName="atomic_check",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    clients = [boto_client("dynamodb", moto_url) for _ in range(6)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for trial in range(20):
            old = f"{trial}-old"
            client.put_item(TableName="atomic_check", Item={"k": {"S": "a"}, "v": {"S": old}})
            barrier = threading.Barrier(len(clients))
            winners: list[int] = []

            def update(
                i: int,
                old: str = old,
                barrier: threading.Barrier = barrier,
                winners: list[int] = winners,
            ) -> None:
                barrier.wait()
                try:
                    clients[i].update_item(
                        TableName="atomic_check",
                        Key={"k": {"S": "a"}},
                        UpdateExpression="SET v = :new",
                        ConditionExpression="v = :old",
                        ExpressionAttributeValues={":new": {"S": f"new-{i}"}, ":old": {"S": old}},
                    )
                    winners.append(i)
                except clients[i].exceptions.ConditionalCheckFailedException:
                    pass

            threads = [threading.Thread(target=update, args=(i,)) for i in range(len(clients))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(winners) == 1, f"trial {trial}: {len(winners)} conditional updates landed"
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.slow
def test_four_writer_processes_every_commit_once(
    dynamo: DynamoDbCatalog, moto_url: str, namespace: str, warehouse: Path
) -> None:
    writers, appends = 4, 10
    identifier = f"{namespace}.concurrent"
    schema = pa.schema([("writer", pa.int32()), ("n", pa.int32())])
    dynamo.create_table(
        identifier,
        schema,
        properties={"commit.retry.min-wait-ms": "10", "commit.retry.max-wait-ms": "200"},
    )
    props = {"type": "dynamodb", "warehouse": str(warehouse), **client_props("dynamodb", moto_url)}
    script = str(Path(__file__).with_name("dynamodb_writer.py"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, script, json.dumps(props), identifier, str(i), str(appends)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for i in range(writers)
    ]
    for p in procs:
        out, err = p.communicate(timeout=400)
        assert p.returncode == 0, err.decode()[-2000:]
        assert json.loads(out.decode().strip().splitlines()[-1])["landed"] == appends
    table = dynamo.load_table(identifier)
    rows = table.scan().to_arrow()
    got = sorted(zip(rows.column("writer").to_pylist(), rows.column("n").to_pylist(), strict=True))
    assert got == [(i, n) for i in range(writers) for n in range(appends)]
    snapshots = sorted(table.metadata.snapshots, key=lambda s: s.sequence_number)
    assert len(snapshots) == writers * appends
    for parent, child in itertools.pairwise(snapshots):
        assert child.parent_snapshot_id == parent.snapshot_id
    # The metadata log is one chain too: every landed commit's file, nothing else referenced.
    assert len(table.metadata.metadata_log) == min(writers * appends, 100)
