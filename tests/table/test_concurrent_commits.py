"""Many writers, one table: 8 processes x 25 appends through each catalog. Every append must land
exactly once, in one linear history with strictly increasing sequence numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from frazil.catalog import load_catalog
from frazil.manifest import read_manifest_list, read_manifests
from frazil.schema import Schema
from frazil.types import LongType, NestedField

WORKERS = 8
APPENDS = 25
WORKER = Path(__file__).with_name("append_worker.py")

pytestmark = pytest.mark.slow

# Retries as a busy table would configure them: 8 writers collide often, and the default of 4
# retries is for tables with occasional conflicts.
RETRY = {
    "commit.retry.num-retries": "200",
    "commit.retry.min-wait-ms": "10",
    "commit.retry.max-wait-ms": "500",
}


def live_data_files(table: Any) -> list[str]:
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    manifest_list = read_manifest_list(table.io.read(snapshot.manifest_list))
    rows = manifest_list.to_pylist()
    datas = table.io.read_many([r["manifest_path"] for r in rows])
    paths: list[str] = []
    for entries in read_manifests(datas, rows, columns=["status", "data_file.file_path"]):
        for status, data_file in zip(
            entries.column("status").to_pylist(),
            entries.column("data_file").to_pylist(),
            strict=True,
        ):
            if status != 2:  # DELETED entries are not live
                paths.append(data_file["file_path"])
    return paths


def run_writers(props: dict[str, str], tmp_path: Path) -> list[str]:
    catalog = load_catalog("concurrency", **props)
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("db.events", schema, properties=RETRY)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    args = [json.dumps(props), "db.events"]
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), *args, str(w), str(APPENDS), str(data_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    for p in procs:
        _, err = p.communicate(timeout=540)
        assert p.returncode == 0, err[-4000:]
    table.refresh()
    expected = sorted(
        f"{data_dir}/w{w}-{i:03d}.parquet" for w in range(WORKERS) for i in range(APPENDS)
    )
    check_history(table, expected)
    return expected


def check_history(table: Any, expected_paths: list[str]) -> None:
    snapshots = {s.snapshot_id: s for s in table.snapshots()}
    assert len(snapshots) == WORKERS * APPENDS
    chain = []
    s = table.current_snapshot()
    while s is not None:
        chain.append(s)
        s = snapshots.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    # One linear history through every snapshot, oldest first with no parent.
    assert len(chain) == WORKERS * APPENDS
    chain.reverse()
    assert chain[0].parent_snapshot_id is None
    sequence_numbers = [s.sequence_number for s in chain]
    assert sequence_numbers == sorted(set(sequence_numbers))
    assert sequence_numbers[-1] == table.metadata.last_sequence_number
    assert all(s.operation == "append" for s in chain)
    assert [int(s.summary["total-data-files"]) for s in chain] == list(range(1, len(chain) + 1))
    paths = live_data_files(table)
    assert len(paths) == len(set(paths)), "a data file was committed twice"
    assert sorted(p.removeprefix("file:") for p in paths) == expected_paths


def test_sqlite(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    run_writers({"type": "sql", "warehouse": str(warehouse)}, tmp_path)


def test_filesystem(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    run_writers({"type": "filesystem", "warehouse": str(warehouse)}, tmp_path)


def test_postgresql(tmp_path: Path, postgres_url: str) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    run_writers({"type": "sql", "uri": postgres_url, "warehouse": str(warehouse)}, tmp_path)
