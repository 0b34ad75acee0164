"""Many processes committing to one table through one metastore: 8 frazil writers (one linear
history, every row exactly once), frazil beside PyIceberg writers, and a frazil writer killed
with SIGKILL while it holds the table lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.catalog.hive import HiveLockTimeoutError
from frazil.catalog.hive._thrift.hive_metastore import ttypes

pytestmark = [pytest.mark.interop, pytest.mark.slow]

WRITER = Path(__file__).resolve().parent / "hive_writer.py"
SCHEMA = pa.schema([("id", pa.int64()), ("writer", pa.int32())])


def _env() -> dict[str, str]:
    # The writers import frazil as this process does (the installed wheel in CI, where the
    # checkout's python/ has no native module): the environment is passed on unchanged.
    return dict(os.environ)


def _spawn(kind: str, uri: str, table: str, worker: int, n: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), kind, uri, table, str(worker), str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _reap(procs: list[subprocess.Popen[str]]) -> None:
    for q in procs:
        if q.poll() is None:
            q.kill()
        q.communicate()


def _wait_all(procs: list[subprocess.Popen[str]], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _reap(procs)
            raise AssertionError(f"writers did not finish within {timeout_s} s") from None
        if p.returncode != 0:
            _reap(procs)  # no writer (or its pipes) outlives a failed test
        assert p.returncode == 0, f"writer failed: {err[-3000:]}"
        assert out.strip().startswith("done")


def _assert_linear(table: Any, expected_ids: list[int]) -> None:
    snapshots = table.metadata.snapshots
    by_id = {s.snapshot_id: s for s in snapshots}
    chain = []
    current = table.metadata.current_snapshot()
    while current is not None:
        chain.append(current)
        current = by_id.get(current.parent_snapshot_id) if current.parent_snapshot_id else None
    assert len(chain) == len(snapshots) == len(expected_ids)  # one linear history
    ids = table.scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == sorted(expected_ids)  # every row exactly once


def _locks(catalog: Any) -> list[Any]:
    with catalog._client("test") as client:
        return list(client.show_locks(ttypes.ShowLocksRequest()).locks or [])


def test_eight_frazil_writers_make_one_linear_history(
    metastore: Any, catalog: Any, db: str
) -> None:
    catalog.create_table(f"{db}.busy", SCHEMA)
    started = time.monotonic()
    procs = [_spawn("frazil", metastore.uri, f"{db}.busy", w, 25) for w in range(8)]
    _wait_all(procs, 540)
    elapsed = time.monotonic() - started
    table = catalog.load_table(f"{db}.busy")
    _assert_linear(table, [w * 1000 + i for w in range(8) for i in range(25)])
    assert _locks(catalog) == []  # every lock requested was released
    print(f"8 frazil writers x 25 appends: {elapsed:.1f} s")


def test_frazil_beside_pyiceberg_writers(metastore: Any, catalog: Any, db: str) -> None:
    """4 frazil and 4 PyIceberg processes, 10 appends each. PyIceberg 0.12 has no commit retry
    of its own, so its writer retries a lost commit itself (hive_writer.py)."""
    pytest.importorskip("pyiceberg")
    catalog.create_table(f"{db}.mixed", SCHEMA)
    started = time.monotonic()
    procs = [
        _spawn("frazil" if w < 4 else "pyiceberg", metastore.uri, f"{db}.mixed", w, 10)
        for w in range(8)
    ]
    _wait_all(procs, 540)
    elapsed = time.monotonic() - started
    table = catalog.load_table(f"{db}.mixed")
    _assert_linear(table, [w * 1000 + i for w in range(8) for i in range(10)])
    print(f"4 frazil + 4 PyIceberg writers x 10 appends: {elapsed:.1f} s")


def test_a_killed_writer_holding_the_lock(metastore: Any, catalog: Any, db: str) -> None:
    """SIGKILL of a frazil writer holding the lock: the next writer gets the documented error
    naming the dead writer's lock after its configured wait, the table stays readable, and
    after ``release_lock`` the next commit lands."""
    table = catalog.create_table(f"{db}.killed", SCHEMA)
    table.append(pa.table({"id": [1], "writer": [0]}, schema=SCHEMA))
    holder = _spawn("hold", metastore.uri, f"{db}.killed", 9, 1)
    assert holder.stdout is not None
    line = holder.stdout.readline()
    assert line.startswith("holding"), holder.stderr.read() if holder.stderr else line
    held = [lk for lk in _locks(catalog) if lk.tablename == "killed"]
    assert len(held) == 1 and held[0].agentInfo.startswith("frazil-")
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate(timeout=30)  # reaps it and closes its pipes

    impatient = load_catalog("hms", uri=metastore.uri, **{"lock-timeout-ms": "3000"})
    started = time.monotonic()
    with pytest.raises(HiveLockTimeoutError) as info:
        impatient.load_table(f"{db}.killed").append(
            pa.table({"id": [2], "writer": [1]}, schema=SCHEMA)
        )
    assert time.monotonic() - started < 60
    assert info.value.holder == held[0].lockid
    assert f"release_lock({held[0].lockid})" in str(info.value)
    # Readable meanwhile: the killed writer changed nothing.
    assert catalog.load_table(f"{db}.killed").scan().to_arrow().column("id").to_pylist() == [1]
    impatient.release_lock(held[0].lockid)
    impatient.load_table(f"{db}.killed").append(pa.table({"id": [2], "writer": [1]}, schema=SCHEMA))
    ids = sorted(catalog.load_table(f"{db}.killed").scan().to_arrow().column("id").to_pylist())
    assert ids == [1, 2]
    assert [lk for lk in _locks(catalog) if lk.tablename == "killed"] == []
