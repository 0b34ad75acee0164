"""Stress: many writers and crashed writers on one table, on SQLite, PostgreSQL, the filesystem
catalog and through ``frazil serve`` (frazil's REST client against its REST server, over SQLite),
all with the default ``commit.retry.*`` settings.

* 8 processes x 25 appends, while a ninth process deletes, overwrites and changes the schema:
  every append lands exactly once, every delete and overwrite lands (none starves), and the
  history is one linear chain with strictly increasing sequence numbers. The expected rows are
  the ones the workers were told to write, not anything frazil computed.
* A writer of 30 commits (appends, deletes, overwrites, schema changes) killed with SIGKILL at
  8 random points and restarted, then run to the end: after every kill the table loads, every
  snapshot reads, and no metadata references a missing file.

The seed of the kill times is printed; ``FRAZIL_STRESS_SEED`` replays a run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from rest_server_process import ServerProcess

from frazil.catalog import Catalog, load_catalog
from frazil.manifest import read_manifest_list, read_manifests
from frazil.schema import Schema
from frazil.table import Table
from frazil.types import LongType, NestedField

pytestmark = pytest.mark.slow

WORKER = Path(__file__).with_name("stress_worker.py")
APPENDERS = 8
APPENDS = 25
ROUNDS = 6  # the mutator's: 3 commits each, plus a schema change every fourth
OFFSET = 500_000
MUTATOR_BASE = 200_000
CRASH_COMMITS = 30
KILLS = 8
KINDS = ["sqlite", "postgresql", "filesystem", "rest"]


def catalog_props(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    if kind == "sqlite":
        return {"type": "sql", "warehouse": str(warehouse)}
    if kind == "postgresql":
        url = request.getfixturevalue("postgres_url")
        return {"type": "sql", "uri": url, "warehouse": str(warehouse)}
    if kind == "rest":
        # One server process for the test; the writers (and the killed ones) are its clients.
        server = ServerProcess(warehouse).__enter__()
        request.addfinalizer(lambda: server.__exit__(None, None, None))
        return {"type": "rest", "uri": server.uri, "credential": server.credential}
    return {"type": "filesystem", "warehouse": str(warehouse)}


def create(props: dict[str, str]) -> tuple[Catalog, Table]:
    catalog = load_catalog("stress", **props)
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "v", LongType()))
    return catalog, catalog.create_table("db.t", schema)  # default properties only


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(p: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = p.communicate(timeout=900)
    assert p.returncode == 0, err[-4000:]
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def linear_history(table: Table) -> list[Any]:
    """The snapshots from the first to the current one, checked to be every snapshot, linked
    by parent ids, with strictly increasing sequence numbers."""
    snapshots = {s.snapshot_id: s for s in table.snapshots()}
    chain = []
    s = table.current_snapshot()
    while s is not None:
        chain.append(s)
        s = snapshots.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    chain.reverse()
    assert len(chain) == len(snapshots), "a snapshot is not on the main branch's history"
    assert chain[0].parent_snapshot_id is None
    sequence_numbers = [s.sequence_number for s in chain]
    assert sequence_numbers == sorted(set(sequence_numbers))
    assert sequence_numbers[-1] == table.metadata.last_sequence_number
    return chain


def referenced_files(table: Table) -> set[str]:
    """Every file the table's metadata references: manifest lists, manifests, data and delete
    files of every snapshot."""
    out: set[str] = set()
    for snap in table.snapshots():
        assert snap.manifest_list is not None
        out.add(snap.manifest_list)
        rows = read_manifest_list(table.io.read(snap.manifest_list)).to_pylist()
        out.update(r["manifest_path"] for r in rows)
        datas = table.io.read_many([r["manifest_path"] for r in rows])
        for entries in read_manifests(datas, rows, columns=["data_file.file_path"]):
            paths = pc.struct_field(entries.column("data_file"), "file_path")
            out.update(paths.to_pylist())
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_appenders_and_a_mutator_with_default_retries(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    props = catalog_props(kind, tmp_path, request)
    _, table = create(props)
    conf = json.dumps(props)
    started = time.monotonic()
    procs = [start("append", conf, "db.t", str(w), str(APPENDS)) for w in range(APPENDERS)]
    procs.append(start("mutate", conf, "db.t", str(ROUNDS)))
    results = [finish(p) for p in procs]
    elapsed = time.monotonic() - started
    retries = sum(r["retries"] for r in results)
    print(f"{kind}: {len(procs)} writers, {elapsed:.1f} s, {retries} retries: {results}")

    table.refresh()
    chain = linear_history(table)
    schema_changes = ROUNDS // 4
    assert len(chain) == APPENDERS * APPENDS + 3 * ROUNDS
    assert len(table.schemas()) == 1 + schema_changes
    tags = [s.summary.get("stress.writer") for s in chain if s.summary.get("stress.writer")]
    assert sorted(tags) == sorted(f"w{w}-{i}" for w in range(APPENDERS) for i in range(APPENDS))

    got = table.scan().to_arrow()
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a row landed twice"
    appended = {w * 1000 + i for w in range(APPENDERS) for i in range(APPENDS)}
    mutated = {MUTATOR_BASE + 2 * k + 1: k for k in range(ROUNDS)}
    assert set(ids) == appended | {a + OFFSET for a in appended} | set(mutated)
    values = dict(zip(ids, got.column("v").to_pylist(), strict=True))
    assert {i: values[i] for i in mutated} == mutated  # every overwrite landed, in order

    missing = [p for p in referenced_files(table) if not table.io.exists(p)]
    assert missing == []


@pytest.mark.parametrize("kind", KINDS)
def test_writer_killed_at_random_points(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    props = catalog_props(kind, tmp_path, request)
    catalog, _ = create(props)
    seed = int(os.environ.get("FRAZIL_STRESS_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    print(f"{kind}: FRAZIL_STRESS_SEED={seed}")
    conf = json.dumps(props)
    kills = 0
    for attempt in range(KILLS + 1):
        p = start("crash", conf, "db.t", str(CRASH_COMMITS))
        assert p.stdout is not None
        p.stdout.readline()  # "ready": imported, about to commit
        if attempt < KILLS:  # the last one runs to the end
            # kill inside one of the next three commits, at a random moment of it: a delay
            # alone may outlast all the work on a fast machine (then nothing is left to kill)
            for _ in range(rng.randint(1, 3)):
                if not p.stdout.readline():
                    break
            time.sleep(rng.uniform(0.0, 0.1))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
        _, err = p.communicate(timeout=600)
        assert attempt < KILLS or p.returncode == 0, err[-4000:]
        table = catalog.load_table("db.t")  # loads after every kill
        if table.snapshots():
            linear_history(table)
        for snap in table.snapshots():
            table.scan(snapshot_id=snap.snapshot_id).to_arrow()  # every snapshot reads
        missing = [f for f in referenced_files(table) if not table.io.exists(f)]
        assert missing == [], f"seed {seed}: references to missing files"
    assert len(table.metadata.metadata_log) + 1 >= CRASH_COMMITS
    print(f"{kind}: {kills} kills")
    assert kills >= 5
