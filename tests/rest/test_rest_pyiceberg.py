"""PyIceberg 0.12's ``RestCatalog`` uses ``frazil serve`` (a loopback uvicorn) as its catalog:
namespaces, a partitioned table with appends, a delete, schema evolution, a staged
create-and-write transaction, rename and drop with purge; frazil's own catalog under the server
reads the same rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import import_peer
from rest_helpers import CLIENT_ID, CLIENT_SECRET, auth_config, uvicorn_server

from frazil.catalog.sql import SqlCatalog
from frazil.server.app import create_app

pytestmark = [pytest.mark.interop, pytest.mark.slow]

import_peer("pyiceberg")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SqlCatalog, str]]:
    wh = tmp_path_factory.mktemp("rest-pyiceberg")
    catalog = SqlCatalog("served", warehouse=str(wh))
    with uvicorn_server(create_app(catalog, auth=auth_config())) as url:
        yield catalog, url
    catalog.close()


@pytest.fixture(scope="module")
def rest(served: tuple[SqlCatalog, str]) -> Any:
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog(
        "rc",
        uri=served[1],
        credential=f"{CLIENT_ID}:{CLIENT_SECRET}",
        **{"oauth2-server-uri": f"{served[1]}/v1/oauth/tokens"},
    )


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_namespaces(rest: Any) -> None:
    rest.create_namespace("ns1", {"owner": "a"})
    rest.create_namespace(("ns1", "child"))
    assert ("ns1",) in rest.list_namespaces()
    assert rest.list_namespaces("ns1") == [("ns1", "child")]
    assert rest.load_namespace_properties("ns1")["owner"] == "a"
    summary = rest.update_namespace_properties(
        "ns1", removals={"owner", "nope"}, updates={"k": "v"}
    )
    assert summary.removed == ["owner"] and summary.updated == ["k"] and summary.missing == ["nope"]
    assert rest.namespace_exists("ns1") and not rest.namespace_exists("ns9")
    rest.drop_namespace(("ns1", "child"))
    assert rest.list_namespaces("ns1") == []


def test_partitioned_table_write_delete_evolve(rest: Any, served: tuple[SqlCatalog, str]) -> None:
    from pyiceberg.expressions import LessThan
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    rest.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "category", StringType(), required=False),
    )
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "category"))
    table = rest.create_table("db.events", schema, partition_spec=spec)
    data = pa.table({"id": pa.array(range(10), pa.int64()), "category": ["a", "b"] * 5})
    table.append(data)
    table.delete(LessThan("id", 3))
    with table.update_schema() as update:
        update.add_column("note", StringType())
    table = rest.load_table("db.events")
    table.append(
        pa.table(
            {
                "id": pa.array([100], pa.int64()),
                "category": ["c"],
                "note": ["new"],
            }
        )
    )
    expected = [(i, "ab"[i % 2], None) for i in range(3, 10)] + [(100, "c", "new")]
    assert _rows(rest.load_table("db.events").scan().to_arrow()) == sorted(expected)
    # frazil, reading the catalog the server serves, sees the same rows
    ours = served[0].load_table("db.events").scan().to_arrow()
    assert _rows(ours) == sorted(expected)
    assert len(rest.load_table("db.events").metadata.snapshots) == 3
    assert rest.list_tables("db") == [("db", "events")]


def test_staged_create_and_write(rest: Any) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    rest.create_namespace_if_not_exists("db")
    schema = Schema(NestedField(1, "x", LongType(), required=False))
    txn = rest.create_table_transaction("db.staged", schema)
    assert not rest.table_exists("db.staged")
    txn.append(pa.table({"x": pa.array([1, 2, 3], pa.int64())}))
    txn.commit_transaction()
    t = rest.load_table("db.staged")
    assert sorted(t.scan().to_arrow().column("x").to_pylist()) == [1, 2, 3]
    assert t.metadata.format_version == 2


def test_rename_and_drop_with_purge(rest: Any, served: tuple[SqlCatalog, str]) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    rest.create_namespace_if_not_exists("db")
    t = rest.create_table("db.old", Schema(NestedField(1, "x", LongType(), required=False)))
    t.append(pa.table({"x": pa.array([7], pa.int64())}))
    rest.rename_table("db.old", "db.new")
    assert not rest.table_exists("db.old") and rest.table_exists("db.new")
    location = rest.load_table("db.new").metadata.location
    files = list(Path(location).rglob("*.parquet"))
    assert files
    rest.purge_table("db.new")
    assert not rest.table_exists("db.new")
    assert not any(f.exists() for f in files)


def test_server_side_planning_pages(tmp_path: Path) -> None:
    """PyIceberg 0.12 plans through frazil serve's planning endpoint (``scan-planning-mode=
    server``), over plan tasks of 2 tasks a page: the same files, record counts and rows as
    PyIceberg planning from the manifests itself."""
    from pyiceberg.catalog.rest import RestCatalog

    catalog = SqlCatalog("paged", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    t = catalog.create_table(
        "db.t",
        pa.schema([("id", pa.int64()), ("category", pa.string())]),
        properties={"format-version": "2"},
    )
    for start in range(0, 30, 5):
        ids = list(range(start, start + 5))
        t.append(
            pa.table({"id": pa.array(ids, pa.int64()), "category": ["ab"[i % 2] for i in ids]})
        )
    app = create_app(catalog, auth=auth_config(), plan_page_size=2)
    with uvicorn_server(app) as url:
        props = {"oauth2-server-uri": f"{url}/v1/oauth/tokens"}
        cred = f"{CLIENT_ID}:{CLIENT_SECRET}"
        server = RestCatalog(
            "s", uri=url, credential=cred, **props, **{"scan-planning-mode": "server"}
        )
        local = RestCatalog("c", uri=url, credential=cred, **props)
        assert server.supports_server_side_planning()
        for row_filter in ("id >= 7", "category = 'a'"):
            theirs = server.load_table("db.t").scan(row_filter=row_filter)
            ours = local.load_table("db.t").scan(row_filter=row_filter)
            files = {(f.file.file_path, f.file.record_count) for f in theirs.plan_files()}
            assert files == {(f.file.file_path, f.file.record_count) for f in ours.plan_files()}
            assert len(files) >= 3
            assert _rows(theirs.to_arrow()) == _rows(ours.to_arrow())
    catalog.close()
