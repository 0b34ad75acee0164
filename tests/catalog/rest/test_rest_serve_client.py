"""frazil's REST client against ``frazil serve`` in its own process (``ServerProcess``): views
(the SQL catalog under the server holds what the client made), and server-side scan planning
compared with client-side planning of the same table (a partitioned v2 table with position
deletes from a merge-on-read delete), tasks and rows, with plans paged by ``--plan-page-size``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from rest_server_process import ServerProcess

from frazil.catalog import load_catalog
from frazil.catalog.rest import RestCatalog
from frazil.expressions.json import to_json_text
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.server.serve import open_catalog
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::ResourceWarning")]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
)
SPEC = PartitionSpec(PartitionField(2, 1000, parse("identity"), "category"))
PAGE = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    warehouse = tmp_path_factory.mktemp("rest-serve-client") / "warehouse"
    with ServerProcess(warehouse, extra_args=("--plan-page-size", str(PAGE))) as srv:
        yield srv


def _catalog(server: ServerProcess, **props: str) -> RestCatalog:
    cat = load_catalog(
        "served",
        type="rest",
        uri=server.uri,
        credential=server.credential,
        **{"oauth2-server-uri": f"{server.uri}/v1/oauth/tokens", **props},
    )
    assert isinstance(cat, RestCatalog)
    return cat


def _data(ids: list[int], cats: list[str]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "category": pa.array(cats, pa.string())})


def _rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in t.to_pylist())


def test_views_through_frazil_serve(server: ServerProcess) -> None:
    cat = _catalog(server)
    assert cat.supports_views()
    cat.create_namespace("views")
    view = cat.create_view("views.v", SCHEMA, "SELECT * FROM db.t", properties={"k": "1"})
    view.replace_version().with_query("spark", "SELECT id FROM db.t").with_schema(
        Schema(NestedField(1, "id", LongType(), required=False))
    ).commit()
    with view.update_properties() as p:
        p.set("k", "2")
    cat.create_view("views.w", SCHEMA, "SELECT 1", properties={"k": "w"})
    assert sorted(cat.list_views("views")) == [("views", "v"), ("views", "w")]
    assert cat.view_exists("views.v") and not cat.view_exists("views.nope")
    cat.rename_view("views.w", "views.w2")
    cat.drop_view("views.w2")

    under = open_catalog(str(server.warehouse))
    try:
        held = under.load_view("views.v")
        assert held.metadata_location == view.metadata_location
        assert held.metadata == view.metadata
        assert [v.version_id for v in held.versions] == [1, 2]
        sql = held.sql_for("spark")
        assert sql is not None and sql.sql == "SELECT id FROM db.t"
        assert held.properties["k"] == "2"
        assert under.list_views("views") == [("views", "v")]
    finally:
        under.close()


@pytest.fixture(scope="module")
def planned_table(server: ServerProcess) -> str:
    return _make_planned_table(server)


def _make_planned_table(server: ServerProcess) -> str:
    """A partitioned v2 table of 12 data files in 3 partitions with position deletes."""
    cat = _catalog(server)
    cat.create_namespace("plan")
    t = cat.create_table(
        "plan.t",
        SCHEMA,
        partition_spec=SPEC,
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    for start in range(0, 40, 10):
        ids = list(range(start, start + 10))
        t.append(_data(ids, [("a", "b", "c")[i % 3] for i in ids]))
    t.delete("id = 4 or id = 13 or id = 35")
    assert any(f.delete_files for f in t.scan().plan_files())
    return "plan.t"


FILTERS = ["", "category = 'a'", "id > 20", "id > 12 and category = 'b'", "id < 0"]


def _task_view(tasks: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            t.file.file_path,
            t.file.record_count,
            t.file.partition,
            tuple(sorted(d.file_path for d in t.delete_files)),
            to_json_text(t.residual),
        )
        for t in tasks
    )


@pytest.mark.parametrize("row_filter", FILTERS)
def test_server_planning_equals_client_planning(
    server: ServerProcess, planned_table: str, row_filter: str
) -> None:
    client = _catalog(server, **{"rest.scan-planning": "client"}).load_table(planned_table)
    remote = _catalog(server, **{"rest.scan-planning": "server"}).load_table(planned_table)
    local_scan = client.scan(row_filter) if row_filter else client.scan()
    remote_scan = remote.scan(row_filter) if row_filter else remote.scan()
    assert remote_scan._planner is not None and local_scan._planner is None

    local_tasks = list(local_scan.plan_files())
    remote_tasks = list(remote_scan.plan_files())
    assert _task_view(remote_tasks) == _task_view(local_tasks)
    assert _rows(remote_scan.to_arrow()) == _rows(local_scan.to_arrow())
    assert remote_scan.count() == local_scan.count() == local_scan.to_arrow().num_rows

    # The Arrow plan: the same rows whichever side planned.
    local_plan = local_scan.plan_files_arrow()
    remote_plan = remote_scan.plan_files_arrow()
    assert len(remote_plan) == len(local_plan) == len(local_tasks)
    assert _plan_view(remote_plan) == _plan_view(local_plan)
    assert _task_view(remote_plan.file_scan_tasks()) == _task_view(local_tasks)


def _plan_view(plan: Any) -> list[tuple[Any, ...]]:
    deletes = plan.delete_files.column("file_path").to_pylist()
    rows = plan.tasks.select(
        ["file_path", "record_count", "partition", "spec_id", "content", "file_size_in_bytes"]
    ).to_pylist()
    refs = plan.tasks.column("delete_file_references").to_pylist()
    residuals = plan.tasks.column("residual").to_pylist()
    return sorted(
        (
            json.dumps(r, sort_keys=True, default=str),
            tuple(sorted(deletes[i] for i in ref)),
            res,
        )
        for r, ref, res in zip(rows, refs, residuals, strict=True)
    )


def test_server_planning_pages(server: ServerProcess, planned_table: str) -> None:
    """More tasks than a page: the plan comes back as plan tasks fetched one page at a time."""
    remote = _catalog(server, **{"rest.scan-planning": "server"}).load_table(planned_table)
    tasks = list(remote.scan().plan_files())
    assert len(tasks) > 3 * PAGE
    from frazil.catalog.rest.planning import plan_table_scan_request

    cat = remote.catalog
    assert isinstance(cat, RestCatalog)
    first = cat._plan_request(
        remote.identifier, "POST", "/plan", "table", plan_table_scan_request(remote.scan())
    )
    assert first["status"] == "completed"
    assert first["plan-tasks"] and not first.get("file-scan-tasks")
    # The first answer lists the pages planned by then; each page lists those planned since:
    # every page handed out once, together the plan.
    tokens = list(first["plan-tasks"])
    pending = list(tokens)
    while pending:
        page = cat._plan_request(
            remote.identifier, "POST", "/tasks", "plan-task", {"plan-task": pending.pop(0)}
        )
        pending += page.get("plan-tasks", [])
        tokens += page.get("plan-tasks", [])
    assert len(tokens) == len(set(tokens)) == -(-len(tasks) // PAGE)


def test_frazil_serve_accepts_the_reports(server: ServerProcess, planned_table: str) -> None:
    """The reports frazil builds for a scan and a commit are answered 204 by frazil serve."""
    from frazil.table.metrics_report import ScanCounts, commit_report, scan_report

    cat = _catalog(server)
    assert cat.supports("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics")
    table = cat.load_table(planned_table)
    scan = table.scan("id > 3").select("id")
    counts = ScanCounts()
    for task in scan.plan_files():
        counts.add(task)
    assert counts.positional >= 1
    snapshot = table.current_snapshot()
    assert snapshot is not None
    path = cat._table_path(table.identifier, "/metrics")
    for report in (
        scan_report(table.name(), scan, counts, 1_000),
        commit_report(table.name(), snapshot, 2_000),
    ):
        response = cat._http.request("POST", path, about="table", body=report, ok=(204,))
        assert response.status_code == 204
    # And the background path: reports go out after a scan and a commit without an error.
    table.scan().to_arrow()
    table.append(_data([100], ["a"]))
    cat.flush_metrics()
    lines = [line for line in server.log().splitlines() if "/tables/t/metrics" in line]
    assert len(lines) >= 4 and all(" 204 " in line for line in lines)


def test_format_v4_table_through_frazil_serve(server: ServerProcess) -> None:
    """An (experimental) v4 table made, written and read over REST: the served metadata file has
    no location and relative paths; the client resolves them against the location it is given."""
    cat = _catalog(server)
    cat.create_namespace("v4")
    t = cat.create_table(
        "v4.t",
        SCHEMA,
        properties={"format-version": "4", "write.delete.mode": "merge-on-read"},
    )
    t.append(_data([1, 2, 3], ["a", "b", "a"]))
    t.append(_data([4, 5], ["c", "c"]))
    t.delete("id = 2")
    t = cat.load_table("v4.t")
    assert t.metadata.format_version == 4
    assert _rows(t.scan().to_arrow()) == [(1, "a"), (3, "a"), (4, "c"), (5, "c")]
    assert _rows(t.scan(row_filter="id > 3").to_arrow()) == [(4, "c"), (5, "c")]
    location = t.metadata.location or ""
    assert all(
        task.file.file_path.startswith(f"{location}/data/") for task in t.scan().plan_files()
    )
    raw = json.loads(t.io.read(t.metadata_location or ""))
    assert "location" not in raw
    assert raw["snapshots"][-1]["manifest-list"].startswith("metadata/")


def test_paged_plans_survive_a_server_restart(tmp_path: Any) -> None:
    """A paged plan is recorded in the server's catalog database: after the server process
    restarts (a new process on the same SQLite catalog), its remaining pages are fetched from
    the new process and together are the plan frazil's client-side planner makes."""
    warehouse = tmp_path / "warehouse"
    args = ("--plan-page-size", str(PAGE))
    with ServerProcess(warehouse, extra_args=args) as first:
        table = _make_planned_table(first)
        cat = _catalog(first)
        remote = cat.load_table(table)
        from frazil.catalog.rest.planning import plan_table_scan_request

        body = plan_table_scan_request(remote.scan(row_filter="id > 12"))
        plan = cat._plan_request(remote.identifier, "POST", "/plan", "table", body)
        # fetchPlanningResult lists every page once the plan is planned (and recorded)
        tokens = cat._plan_request(remote.identifier, "GET", f"/plan/{plan['plan-id']}", "plan")[
            "plan-tasks"
        ]
        assert len(tokens) >= 2
        pages = [cat._plan_request(remote.identifier, "POST", "/tasks", "plan-task",
                                   {"plan-task": tokens[0]})]  # fmt: skip
    with ServerProcess(warehouse, extra_args=args) as second:
        cat = _catalog(second)
        for token in tokens[1:]:
            pages.append(
                cat._plan_request(
                    remote.identifier, "POST", "/tasks", "plan-task", {"plan-task": token}
                )
            )
        fetched = cat._plan_request(remote.identifier, "GET", f"/plan/{plan['plan-id']}", "plan")
        assert fetched["plan-tasks"] == tokens
        local = _catalog(second, **{"rest.scan-planning": "client"}).load_table(table)
        expected = {t.file.file_path for t in local.scan(row_filter="id > 12").plan_files()}
        got = [t["data-file"]["file-path"] for p in pages for t in p["file-scan-tasks"]]
        assert sorted(got) == sorted(expected)
        # cancelled: gone from the database too
        r = cat._http.session.delete(
            f"{second.uri}/v1/namespaces/plan/tables/t/plan/{plan['plan-id']}",
            headers=cat._http.auth.headers(),
        )
        assert r.status_code == 204
    with ServerProcess(warehouse, extra_args=args) as third:
        cat = _catalog(third)
        with pytest.raises(Exception, match="plan task"):
            cat._plan_request(
                remote.identifier, "POST", "/tasks", "plan-task", {"plan-task": tokens[1]}
            )
