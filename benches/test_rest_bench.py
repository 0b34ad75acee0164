"""The REST catalog: ``frazil serve`` under load, and scan planning through it.

One run, one server process (``frazil serve`` over its default SQLite catalog, OAuth2 on, on
loopback; the clients share the machine's cores with it):

- ``loadTable``: ``GET .../tables/{table}`` of a table with 20 snapshots, from 1, 4 and 16
  concurrent clients (threads, each with its own pooled ``requests`` session and token): p50 and
  p99 latency and requests per second; and frazil's ``catalog.load_table`` (request, JSON parse,
  TableMetadata) from one client.
- commits: 1, 4 and 16 concurrent frazil clients, each committing property changes to its own
  table (``table.transaction().set_properties(...)``): commits per second and p50 latency; and
  the same with all clients on one table (conflicts refreshed and retried by frazil).
- planning the plan bench's table (benches/plan_table.py: 100 manifests x 10,000 files, string
  bounds, 8 stats columns), registered in the server's catalog, iterating every task's
  ``file.file_path`` and ``file.record_count``: through the server's planning endpoint
  (``rest.scan-planning=server``: the server plans a manifest at a time while it serves the
  pages planned so far, writing each page of 1,000 tasks natively from its Arrow plan; frazil's
  client fetches two pages ahead, reads them natively into the same Arrow columns and streams
  views of them), planned by frazil's client from the manifests (``rest.scan-planning=client``),
  and by PyIceberg 0.12's ``RestCatalog`` (one round each): planning from the manifests itself,
  and through frazil serve's planning endpoint (``scan-planning-mode=server``).

    .venv/bin/python -m pytest benches/test_rest_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_rest_bench.py -m benchmark

Smoke mode: 100 x 10 files, a few requests. A full run writes benches/rest_results.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests
from bench_report import register_report
from plan_table import DAY0, DAYS_PER_MANIFEST, ID_WIDTH, N_MANIFESTS, day_of, ensure_table

from frazil import _native
from frazil.catalog import load_catalog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from peers import peer_missing
from rest_server_process import ServerProcess

pytestmark = [pytest.mark.benchmark, pytest.mark.timeout(3600)]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ENTRIES = 10 if SMOKE else 10_000
USER_SPAN = 50_000 if SMOKE else 881_834  # as benches/test_plan_bench.py
TOTAL = N_MANIFESTS * ENTRIES
CLIENTS = (1, 4, 16)
LOAD_REQUESTS = 20 if SMOKE else 2_000  # per concurrency level, spread over the clients
COMMITS = 4 if SMOKE else 200  # per concurrency level
PLAN_ROUNDS = 1 if SMOKE else 3
RESULTS_MD = Path(__file__).with_name("rest_results.md")
COMMAND = ".venv/bin/python -m pytest benches/test_rest_bench.py -m benchmark -p no:cacheprovider"

_DAY = day_of(DAY0 + DAYS_PER_MANIFEST * 5 + 1)
_NEXT = _DAY + _dt.timedelta(days=1)
_ID_LO = (TOTAL // 2) * ID_WIDTH + 12_345
_ID_HI = _ID_LO + 37 * ID_WIDTH
PLAN_CASES = (
    ("one-day", "one day of `ts`", f"ts >= '{_DAY}T00:00:00' AND ts < '{_NEXT}T00:00:00'"),
    ("id", "`id` range (file metrics only)", f"id >= {_ID_LO} AND id <= {_ID_HI}"),
    ("user-id", "`user_id < 1000`", "user_id < 1000"),
    ("strings", "`category = 'music' AND country = 'FR'`", "category = 'music' AND country = 'FR'"),
)
# PyIceberg takes minutes on the string case (benches/plan_results.md): planned in full runs only
# where it finishes in reasonable time.
PYICEBERG_CASES = {"one-day", "id", "user-id"} if not SMOKE else {c for c, _, _ in PLAN_CASES}


@dataclass
class Results:
    load: dict[int, dict[str, float]] = field(default_factory=dict)
    load_frazil: dict[str, float] = field(default_factory=dict)
    commits: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: str = ""
    load_avg: str = ""


RESULTS = Results()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _token(server: ServerProcess) -> str:
    client_id, secret = server.credential.split(":", 1)
    r = requests.post(
        f"{server.uri}/v1/oauth/tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            "scope": "catalog",
        },
        timeout=30,
    )
    r.raise_for_status()
    return str(r.json()["access_token"])


def _concurrently(n: int, work: Callable[[int], list[float]]) -> tuple[list[float], float]:
    """Runs ``work(i)`` on ``n`` threads at once; all latencies and the wall time."""
    out: list[list[float]] = [[] for _ in range(n)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(n + 1)

    def run(i: int) -> None:
        try:
            barrier.wait()
            out[i] = work(i)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return [x for xs in out for x in xs], wall


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    if not SMOKE:
        assert _native.build_profile == "release", "benchmarks need a release build"
    RESULTS.started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    warehouse = tmp_path_factory.mktemp("rest-bench") / "warehouse"
    # The plan table lives in the bench cache, outside the server's warehouse: registered as is.
    with ServerProcess(warehouse, extra_args=("--allow-external-locations",)) as srv:
        yield srv


@pytest.fixture(scope="module")
def catalog(server: ServerProcess) -> Any:
    cat = load_catalog("bench", type="rest", uri=server.uri, credential=server.credential)
    cat.create_namespace("bench")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    table = cat.create_table("bench.small", schema)
    for i in range(20):
        table.append(pa.table({"id": [i], "s": [str(i)]}, schema=schema))
    return cat


@pytest.mark.parametrize("clients", CLIENTS)
def test_load_table(
    clients: int, server: ServerProcess, catalog: Any, request: pytest.FixtureRequest
) -> None:
    _register(request)
    token = _token(server)
    url = f"{server.uri}/v1/namespaces/bench/tables/small"
    per_client = max(1, LOAD_REQUESTS // clients)

    def work(_: int) -> list[float]:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        session.get(url, timeout=60).raise_for_status()  # warm the connection
        lat = []
        for _ in range(per_client):
            t = time.perf_counter()
            r = session.get(url, timeout=60)
            lat.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text[:300]
        return lat

    lat, wall = _concurrently(clients, work)
    RESULTS.load[clients] = {
        "p50": _percentile(lat, 0.5),
        "p99": _percentile(lat, 0.99),
        "rps": len(lat) / wall,
        "n": len(lat),
    }
    if clients == 1:
        lat = []
        for _ in range(per_client):
            t = time.perf_counter()
            catalog.load_table("bench.small")
            lat.append(time.perf_counter() - t)
        RESULTS.load_frazil.update(p50=_percentile(lat, 0.5), p99=_percentile(lat, 0.99))


@pytest.mark.parametrize("shared", [False, True], ids=["own-tables", "one-table"])
@pytest.mark.parametrize("clients", CLIENTS)
def test_commits(
    clients: int, shared: bool, server: ServerProcess, catalog: Any, request: pytest.FixtureRequest
) -> None:
    _register(request)
    schema = pa.schema([("id", pa.int64())])
    names = [f"bench.c{clients}_{'one' if shared else i}" for i in range(clients)]
    for name in set(names):
        catalog.create_table(name, schema)
    per_client = max(1, COMMITS // clients)

    def work(i: int) -> list[float]:
        cat = load_catalog(f"c{i}", type="rest", uri=server.uri, credential=server.credential)
        table = cat.load_table(names[i])
        lat = []
        for k in range(per_client):
            t = time.perf_counter()
            table.transaction().set_properties({f"k{i}": str(k)}).commit_transaction()
            lat.append(time.perf_counter() - t)
        return lat

    lat, wall = _concurrently(clients, work)
    RESULTS.commits[("one table" if shared else "own tables", clients)] = {
        "cps": len(lat) / wall,
        "p50": _percentile(lat, 0.5),
        "p99": _percentile(lat, 0.99),
    }
    for i, name in enumerate(names):  # every client's last commit landed, none was lost
        props = catalog.load_table(name).metadata.properties
        assert props.get(f"k{i}") == str(per_client - 1), f"{name}: client {i}'s commits lost"


@pytest.fixture(scope="module")
def plan_table(server: ServerProcess, catalog: Any) -> str:
    meta, _ = ensure_table(ENTRIES, USER_SPAN)
    catalog.register_table("bench.plan", meta)
    return meta


def _iterate(tasks: Any) -> set[tuple[str, int]]:
    out = set()
    for task in tasks:
        out.add((task.file.file_path, task.file.record_count))
    return out


@pytest.mark.parametrize("case", PLAN_CASES, ids=[c[0] for c in PLAN_CASES])
def test_planning(
    case: tuple[str, str, str],
    server: ServerProcess,
    plan_table: str,
    request: pytest.FixtureRequest,
) -> None:
    _register(request)
    case_id, _, row_filter = case
    row: dict[str, Any] = {}
    answers = {}
    for mode in ("server", "client"):
        cat = load_catalog(
            f"plan-{mode}",
            type="rest",
            uri=server.uri,
            credential=server.credential,
            **{"rest.scan-planning": mode},
        )
        table = cat.load_table("bench.plan")
        answers[mode] = _iterate(table.scan(row_filter=row_filter).plan_files())
        walls = []
        for _ in range(PLAN_ROUNDS):
            t = time.perf_counter()
            _iterate(table.scan(row_filter=row_filter).plan_files())
            walls.append(time.perf_counter() - t)
        row[mode] = statistics.median(walls)
    assert answers["server"] == answers["client"], f"{case_id}: server and client plans differ"
    row["tasks"] = len(answers["server"])
    if case_id in PYICEBERG_CASES:
        try:
            from pyiceberg.catalog.rest import RestCatalog
        except ImportError:
            peer_missing("pyiceberg is not installed")
        table = RestCatalog(
            "peer",
            uri=server.uri,
            credential=server.credential,
            **{"oauth2-server-uri": f"{server.uri}/v1/oauth/tokens"},
        ).load_table("bench.plan")
        t = time.perf_counter()
        theirs = _iterate(table.scan(row_filter=row_filter).plan_files())
        row["pyiceberg"] = time.perf_counter() - t
        assert theirs == answers["client"], f"{case_id}: PyIceberg plans differently"
    try:
        from pyiceberg.catalog.rest import RestCatalog
    except ImportError:
        peer_missing("pyiceberg is not installed")
    table = RestCatalog(
        "peer-server",
        uri=server.uri,
        credential=server.credential,
        **{"oauth2-server-uri": f"{server.uri}/v1/oauth/tokens", "scan-planning-mode": "server"},
    ).load_table("bench.plan")
    t = time.perf_counter()
    theirs = _iterate(table.scan(row_filter=row_filter).plan_files())
    row["pyiceberg-server"] = time.perf_counter() - t
    assert theirs == answers["client"], f"{case_id}: PyIceberg through the server differs"
    RESULTS.plans[case_id] = row


def _ms(s: float) -> str:
    return f"{s * 1000:.1f}"


def _lines() -> list[str]:
    out = [
        f"- date: {RESULTS.started}; machine: {platform.machine()}, {os.cpu_count()} logical "
        f"CPUs; load average at start {RESULTS.load_avg} (server and clients share the CPUs)",
        f"- frazil {version('frazil')} ({_native.build_profile} build), Python "
        f"{platform.python_version()}, PyIceberg {_version('pyiceberg')}, uvicorn "
        f"{_version('uvicorn')}, Starlette {_version('starlette')}",
        f"- server: `frazil serve` (SQLite catalog, OAuth2 bearer tokens) on loopback; plan "
        f"table {N_MANIFESTS} manifests x {ENTRIES:,} files",
        "",
        "| loadTable (20 snapshots) | p50 ms | p99 ms | requests/s |",
        "|---|---|---|---|",
    ]
    for clients, r in sorted(RESULTS.load.items()):
        out.append(
            f"| raw GET, {clients} client(s) | {_ms(r['p50'])} | {_ms(r['p99'])} | {r['rps']:.0f} |"
        )
    if RESULTS.load_frazil:
        out.append(
            f"| frazil `catalog.load_table`, 1 client | {_ms(RESULTS.load_frazil['p50'])} | "
            f"{_ms(RESULTS.load_frazil['p99'])} | |"
        )
    out += ["", "| commits (set-properties via frazil) | commits/s | p50 ms | p99 ms |"]
    out.append("|---|---|---|---|")
    for (kind, clients), r in sorted(RESULTS.commits.items()):
        out.append(
            f"| {kind}, {clients} client(s) | {r['cps']:.1f} | {_ms(r['p50'])} | {_ms(r['p99'])} |"
        )
    out += [
        "",
        "| planning, iterate every task | tasks | frazil, server-side (s) | frazil, client-side "
        "(s) | PyIceberg 0.12, client-side (s) | PyIceberg 0.12, server-side (s) |",
        "|---|---|---|---|---|---|",
    ]
    for case_id, label, _ in PLAN_CASES:
        r = RESULTS.plans.get(case_id)
        if r is None:
            continue
        py = f"{r['pyiceberg']:.3f}" if "pyiceberg" in r else "not run (minutes)"
        pys = f"{r['pyiceberg-server']:.3f}" if "pyiceberg-server" in r else "not run"
        out.append(
            f"| {label} | {r['tasks']:,} | {r['server']:.3f} | {r['client']:.3f} | {py} | {pys} |"
        )
    return out


def _version(name: str) -> str:
    try:
        return version(name)
    except Exception:
        return "?"


def _register(request: pytest.FixtureRequest) -> None:
    register_report(
        request,
        "rest-bench-report",
        lambda: (
            "REST catalog: frazil serve under load, planning through it"
            + (" (SMOKE MODE: numbers are meaningless)" if SMOKE else "")
        ),
        _lines,
        results_md=None if SMOKE else RESULTS_MD,
        heading="REST catalog benchmark",
        command=COMMAND,
    )
