"""``frazil.server.app`` in-process (Starlette's TestClient): the endpoints' answers, commits
with requirements, creates built from updates, multi-table atomicity, scan planning with paged
plan tasks, auth and hardening. Expected values come from the OpenAPI spec's shapes and from
the catalog under the server, not from the server's own code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from rest_helpers import TestClient, auth_config, token_for

from frazil.catalog.sql import SqlCatalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.server.app import create_app
from frazil.transforms import parse as transform
from frazil.types import LongType, NestedField, StringType

SCHEMA_JSON = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False},
        {"id": 2, "name": "cat", "type": "string", "required": False},
    ],
}
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "cat", StringType(), required=False),
)


def _table_with_rows(catalog: SqlCatalog, name: str = "t", files: int = 1) -> Any:
    catalog.create_namespace_if_not_exists("db")
    spec = PartitionSpec(PartitionField(2, 1000, transform("identity"), "cat"))
    t = catalog.create_table(
        ("db", name),
        SCHEMA,
        partition_spec=spec,
        properties={"write.delete.mode": "merge-on-read"},
    )
    for i in range(files):
        t.append(pa.table({"id": pa.array([i, i + 100], pa.int64()), "cat": [f"c{i}", f"c{i}"]}))
    return t


# ---- namespaces


def test_namespaces_and_pagination(client: Any) -> None:
    for name in ("a", "b", "c", "d", "e"):
        assert client.post("/v1/namespaces", json={"namespace": [name]}).status_code == 200
    assert client.post("/v1/namespaces", json={"namespace": ["a", "x"]}).status_code == 200
    assert client.post("/v1/namespaces", json={"namespace": ["a"]}).status_code == 409
    seen, token = [], None
    while True:
        params = {"pageSize": "2", **({"pageToken": token} if token else {})}
        body = client.get("/v1/namespaces", params=params).json()
        seen += body["namespaces"]
        token = body.get("next-page-token")
        if not token:
            break
    assert seen == [["a"], ["b"], ["c"], ["d"], ["e"]]
    assert client.get("/v1/namespaces", params={"parent": "a"}).json()["namespaces"] == [["a", "x"]]
    assert client.head("/v1/namespaces/a%1Fx").status_code == 204
    assert client.head("/v1/namespaces/zz").status_code == 404
    r = client.post(
        "/v1/namespaces/b/properties", json={"removals": ["gone"], "updates": {"k": "v"}}
    )
    assert r.json() == {"updated": ["k"], "removed": [], "missing": ["gone"]}
    assert client.get("/v1/namespaces/b").json()["properties"]["k"] == "v"
    assert client.delete("/v1/namespaces/b").status_code == 204
    assert client.get("/v1/namespaces/b").json()["error"]["type"] == "NoSuchNamespaceException"
    assert client.get("/v1/namespaces", params={"pageSize": "0"}).status_code == 400
    assert client.get("/v1/namespaces", params={"pageToken": "!!"}).status_code == 400


# ---- tables


def test_create_load_commit_conflict(client: Any, catalog: SqlCatalog) -> None:
    client.post("/v1/namespaces", json={"namespace": ["db"]})
    r = client.post("/v1/namespaces/db/tables", json={"name": "t", "schema": SCHEMA_JSON})
    assert r.status_code == 200
    created = r.json()
    assert created["metadata-location"] == catalog.load_table("db.t").metadata_location
    uuid = created["metadata"]["table-uuid"]
    commit = {
        "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
        "updates": [{"action": "set-properties", "updates": {"owner": "me"}}],
    }
    r = client.post("/v1/namespaces/db/tables/t", json=commit)
    assert r.status_code == 200, r.text
    assert catalog.load_table("db.t").metadata.properties["owner"] == "me"
    assert r.json()["metadata-location"] == catalog.load_table("db.t").metadata_location
    stale = {
        "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 7}],
        "updates": [{"action": "set-properties", "updates": {"owner": "you"}}],
    }
    before = catalog.load_table("db.t").metadata_location
    r = client.post("/v1/namespaces/db/tables/t", json=stale)
    assert r.status_code == 409
    assert r.json()["error"]["type"] == "CommitFailedException"
    assert "schema" in r.json()["error"]["message"]
    assert catalog.load_table("db.t").metadata_location == before
    assert client.post(
        "/v1/namespaces/db/tables", json={"name": "t", "schema": SCHEMA_JSON}
    ).json()["error"]["type"] == ("AlreadyExistsException")


def test_snapshots_refs_and_drop_purge(client: Any, catalog: SqlCatalog) -> None:
    t = _table_with_rows(catalog, files=2)
    t.manage_snapshots().create_tag(t.metadata.snapshots[0].snapshot_id, "first").commit()
    full = client.get("/v1/namespaces/db/tables/t").json()["metadata"]
    refs = client.get("/v1/namespaces/db/tables/t", params={"snapshots": "refs"}).json()["metadata"]
    assert len(full["snapshots"]) == 2 and len(refs["snapshots"]) == 2
    t.manage_snapshots().remove_tag("first").commit()
    refs = client.get("/v1/namespaces/db/tables/t", params={"snapshots": "refs"}).json()["metadata"]
    assert [s["snapshot-id"] for s in refs["snapshots"]] == [t.metadata.current_snapshot_id]
    files = list(Path(t.metadata.location).rglob("*.parquet"))
    assert files
    assert (
        client.delete("/v1/namespaces/db/tables/t", params={"purgeRequested": "true"}).status_code
        == 204
    )
    assert not catalog.table_exists("db.t")
    assert not any(f.exists() for f in files)


def test_stage_create_then_create_from_updates(client: Any, catalog: SqlCatalog) -> None:
    client.post("/v1/namespaces", json={"namespace": ["db"]})
    staged = client.post(
        "/v1/namespaces/db/tables",
        json={"name": "s", "schema": SCHEMA_JSON, "stage-create": True, "properties": {"a": "b"}},
    ).json()
    assert "metadata-location" not in staged
    assert not catalog.table_exists("db.s")
    m = staged["metadata"]
    # the updates a Java or PyIceberg staged create sends, building the table from empty
    updates = [
        {"action": "assign-uuid", "uuid": m["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": m["schemas"][0], "last-column-id": 2},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": m["location"]},
        {"action": "set-properties", "updates": {"a": "b"}},
    ]
    r = client.post(
        "/v1/namespaces/db/tables/s",
        json={"requirements": [{"type": "assert-create"}], "updates": updates},
    )
    assert r.status_code == 200, r.text
    t = catalog.load_table("db.s")
    assert str(t.metadata.table_uuid) == m["table-uuid"]
    assert t.metadata.format_version == 2 and t.metadata.properties["a"] == "b"
    assert [f.name for f in t.schema().fields] == ["id", "cat"]
    # again: the table exists now
    r = client.post(
        "/v1/namespaces/db/tables/s",
        json={"requirements": [{"type": "assert-create"}], "updates": updates},
    )
    assert r.status_code == 409
    # a create without a schema is refused, nothing written
    r = client.post(
        "/v1/namespaces/db/tables/u",
        json={"requirements": [{"type": "assert-create"}], "updates": updates[8:]},
    )
    assert r.status_code == 400 and "schema" in r.json()["error"]["message"]
    assert not catalog.table_exists("db.u")


def test_register_and_rename(client: Any, catalog: SqlCatalog, tmp_path: Path) -> None:
    t = _table_with_rows(catalog)
    location = t.metadata_location
    catalog.drop_table("db.t")
    r = client.post(
        "/v1/namespaces/db/register", json={"name": "again", "metadata-location": location}
    )
    assert r.status_code == 200 and r.json()["metadata-location"] == location
    r = client.post(
        "/v1/tables/rename",
        json={
            "source": {"namespace": ["db"], "name": "again"},
            "destination": {"namespace": ["db"], "name": "moved"},
        },
    )
    assert r.status_code == 204
    assert catalog.list_tables("db") == [("db", "moved")]
    outside = tmp_path / "elsewhere.metadata.json"
    outside.write_bytes(Path(location).read_bytes())
    r = client.post(
        "/v1/namespaces/db/register", json={"name": "evil", "metadata-location": str(outside)}
    )
    assert r.status_code == 400 and not catalog.table_exists("db.evil")


def test_multi_table_transaction_is_all_or_nothing(client: Any, catalog: SqlCatalog) -> None:
    a = _table_with_rows(catalog, "a")
    b = _table_with_rows(catalog, "b")
    before = {n: catalog.load_table(("db", n)).metadata_location for n in ("a", "b")}
    good = {
        "identifier": {"namespace": ["db"], "name": "a"},
        "requirements": [{"type": "assert-table-uuid", "uuid": str(a.metadata.table_uuid)}],
        "updates": [{"action": "set-properties", "updates": {"x": "1"}}],
    }
    bad = {
        "identifier": {"namespace": ["db"], "name": "b"},
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 12345}],
        "updates": [{"action": "set-properties", "updates": {"x": "1"}}],
    }
    r = client.post("/v1/transactions/commit", json={"table-changes": [good, bad]})
    assert r.status_code == 409, r.text
    after = {n: catalog.load_table(("db", n)).metadata_location for n in ("a", "b")}
    assert after == before
    metadata_files = sorted(Path(a.metadata.location, "metadata").glob("*.metadata.json"))
    assert len(metadata_files) == len(a.metadata.metadata_log) + 1  # nothing left behind
    bad["requirements"] = [
        {
            "type": "assert-ref-snapshot-id",
            "ref": "main",
            "snapshot-id": b.metadata.current_snapshot_id,
        }
    ]
    r = client.post("/v1/transactions/commit", json={"table-changes": [good, bad]})
    assert r.status_code == 204, r.text
    for n in ("a", "b"):
        assert catalog.load_table(("db", n)).metadata.properties["x"] == "1"


# ---- scan planning


def _all_tasks(client: Any, path: str, body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    plan = client.post(f"{path}/plan", json=body).json()
    assert plan["status"] == "completed", plan
    if "plan-tasks" not in plan:
        return plan["file-scan-tasks"], plan["delete-files"]
    tasks: list[Any] = []
    deletes: list[Any] = []
    # a page may hand out further plan tasks (the spec's ScanTasks): followed in order
    pending = list(plan["plan-tasks"])
    while pending:
        page = client.post(f"{path}/tasks", json={"plan-task": pending.pop(0)}).json()
        tasks += page["file-scan-tasks"]
        deletes += page["delete-files"]
        pending += page.get("plan-tasks", [])
    return tasks, deletes


def test_plan_small_and_paged(catalog: SqlCatalog) -> None:
    t = _table_with_rows(catalog, files=5)
    t.delete("id = 101")
    expected = sorted(t.scan().to_arrow().column("id").to_pylist())
    paths = {task.file.file_path for task in t.scan().plan_files()}
    path = "/v1/namespaces/db/tables/t"
    for page_size in (100, 2):
        app = create_app(catalog, auth=auth_config(), plan_page_size=page_size)
        with TestClient(app) as c:
            c.headers["Authorization"] = f"Bearer {token_for(c)}"
            tasks, deletes = _all_tasks(c, path, {})
            assert {x["data-file"]["file-path"] for x in tasks} == paths
            with_deletes = [x for x in tasks if x.get("delete-file-references")]
            assert len(with_deletes) == 1 and deletes
            filtered, _ = _all_tasks(
                c, path, {"filter": {"type": "eq", "term": "cat", "value": "c3"}, "select": ["id"]}
            )
            assert [x["data-file"]["partition"] for x in filtered] == [["c3"]]
            plan = c.post(f"{path}/plan", json={}).json()
            assert c.get(f"{path}/plan/{plan['plan-id']}").json()["status"] == "completed"
            assert c.delete(f"{path}/plan/{plan['plan-id']}").status_code == 204
            assert c.get(f"{path}/plan/{plan['plan-id']}").status_code == 404
            r = c.post(f"{path}/tasks", json={"plan-task": "forged:0"})
            assert r.json()["error"]["type"] == "NoSuchPlanTaskException"
    assert len(expected) == 9


def test_plan_streamed_pages(catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan is served while it is planned: the manifests are planned one at a time (here a
    batch each, released one by one), the first answer lists the pages planned by then, each
    page the pages planned since, every page once; a page not handed out yet is unknown; a
    planning error after the first answer fails the pages that need the missing rows."""
    import threading

    from frazil.table.scan import arrow_plan

    t = _table_with_rows(catalog, files=6)  # six manifests of a file each
    expected = {task.file.file_path for task in t.scan().plan_files()}
    release = threading.Semaphore(0)
    fail_after: list[int] = []
    streamed = arrow_plan.ScanPlan.streamed.__func__  # type: ignore[attr-defined]

    def gated(cls: Any, plan: Any, groups: Any, ptype: Any) -> Any:
        head, batches = streamed(cls, plan, groups, ptype)

        def one_at_a_time() -> Any:
            for i, b in enumerate(batches):
                if i >= 3:  # the first page (2 tasks) and the row after it come at once
                    assert release.acquire(timeout=30)
                if fail_after and i >= fail_after[0]:
                    from frazil.exceptions import FrazilError

                    raise FrazilError("manifest gone")
                yield b

        return head, one_at_a_time()

    monkeypatch.setattr(arrow_plan.ScanPlan, "streamed", classmethod(gated))
    path = "/v1/namespaces/db/tables/t"
    app = create_app(catalog, auth=auth_config(), plan_page_size=2)
    with TestClient(app) as c:
        c.headers["Authorization"] = f"Bearer {token_for(c)}"
        plan = c.post(f"{path}/plan", json={}).json()
        assert plan["status"] == "completed" and plan["plan-tasks"]
        handed = list(plan["plan-tasks"])
        assert len(handed) == 2  # 3 tasks planned: pages 0 and 1
        plan_id = plan["plan-id"]
        r = c.post(f"{path}/tasks", json={"plan-task": f"{plan_id}:10"})
        assert r.json()["error"]["type"] == "NoSuchPlanTaskException"
        first = c.post(f"{path}/tasks", json={"plan-task": handed[0]}).json()
        assert "plan-tasks" not in first  # nothing planned since
        got = [x["data-file"]["file-path"] for x in first["file-scan-tasks"]]
        pending = handed[1:]
        for _ in range(3):
            release.release()
        while pending:
            page = c.post(f"{path}/tasks", json={"plan-task": pending.pop(0)}).json()
            got += [x["data-file"]["file-path"] for x in page["file-scan-tasks"]]
            pending += page.get("plan-tasks", [])
            handed += page.get("plan-tasks", [])
        assert sorted(got) == sorted(expected) and len(got) == 6
        assert len(handed) == len(set(handed)) == 3
        listed = c.get(f"{path}/plan/{plan_id}").json()
        assert listed["plan-tasks"] == handed

        fail_after.append(3)
        plan = c.post(f"{path}/plan", json={}).json()
        release.release()
        page = c.post(f"{path}/tasks", json={"plan-task": plan["plan-tasks"][1]})
        assert page.status_code == 500, page.text
        assert "manifest gone" in page.json()["error"]["message"]


# ---- auth and hardening


def test_auth_required_and_expired(catalog: SqlCatalog) -> None:
    clock = [0.0]
    app = create_app(catalog, auth=auth_config(lifetime_s=60))
    app.state.frazil.tokens._clock = lambda: clock[0]
    with TestClient(app) as c:
        assert c.get("/v1/config").status_code == 401
        assert c.get("/v1/config", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert c.get("/v1/config", headers={"Authorization": "Basic eDp5"}).status_code == 401
        bad = c.post(
            "/v1/oauth/tokens",
            data={"grant_type": "client_credentials", "client_id": "tester", "client_secret": "x"},
        )
        assert bad.status_code == 401 and bad.json()["error"] == "invalid_client"
        token = token_for(c)
        ok = c.get("/v1/config", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200
        assert "POST /v1/{prefix}/transactions/commit" in ok.json()["endpoints"]
        clock[0] = 61.0
        expired = c.get("/v1/config", headers={"Authorization": f"Bearer {token}"})
        assert expired.status_code == 401
        assert expired.json()["error"]["type"] == "NotAuthorizedException"
        basic = c.post(
            "/v1/oauth/tokens",
            data={"grant_type": "client_credentials"},
            auth=("tester", "s3cret-for-tests"),
        )
        assert basic.status_code == 200


def test_hostile_identifiers_locations_and_sizes(catalog: SqlCatalog, tmp_path: Path) -> None:
    app = create_app(catalog, auth=auth_config(), max_body_bytes=4096)
    with TestClient(app) as c:
        c.headers["Authorization"] = f"Bearer {token_for(c)}"
        c.post("/v1/namespaces", json={"namespace": ["db"]})
        for ns in (["..", "x"], ["a/b"], ["nul\x00"], [""], []):
            r = c.post("/v1/namespaces", json={"namespace": ns})
            assert r.status_code == 400, ns
        for name in ("..", "a\\b", "x\x00"):
            r = c.post("/v1/namespaces/db/tables", json={"name": name, "schema": SCHEMA_JSON})
            assert r.status_code == 400, name
        r = c.post(
            "/v1/namespaces/db/tables",
            json={"name": "out", "schema": SCHEMA_JSON, "location": str(tmp_path / "outside")},
        )
        assert r.status_code == 400 and not catalog.table_exists("db.out")
        r = c.post(
            "/v1/namespaces", content=b"[" * 5000, headers={"content-type": "application/json"}
        )
        assert r.status_code == 413 and r.json()["error"]["code"] == 413
        r = c.post("/v1/namespaces", content=b"[" * 4000)
        assert r.status_code == 400
    assert catalog.list_namespaces() == [("db",)]


def test_vended_credentials_only_when_asked(catalog: SqlCatalog) -> None:
    _table_with_rows(catalog)
    creds = {"s3.access-key-id": "AK", "s3.secret-access-key": "SK"}
    app = create_app(catalog, no_auth=True, vended_credentials=creds)
    with TestClient(app) as c:
        plain = c.get("/v1/namespaces/db/tables/t").json()
        assert plain["config"] == {}
        vended = c.get(
            "/v1/namespaces/db/tables/t",
            headers={"X-Iceberg-Access-Delegation": "vended-credentials"},
        ).json()
        assert vended["config"] == creds


def test_requires_an_auth_choice(catalog: SqlCatalog) -> None:
    from frazil.exceptions import InvalidArgumentError

    with pytest.raises(InvalidArgumentError):
        create_app(catalog)
