"""A streamed append in bounded memory: a ``RecordBatchReader`` of more rows than the writer may
hold, appended in a child process (its own peak RSS), rolls files at the target size, commits
once, and every row lands (count and sum of ids read back by pyarrow, not frazil)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from frazil.table import StaticTable

pytestmark = [pytest.mark.slow]

WORKER = Path(__file__).with_name("stream_append_worker.py")
ROWS = 28_000_000
# Generous: the writer holds a 64 MB input chunk (and its sorted copy), 128 MB of rows
# buffered for row groups, 256 MB queued for the encoder and pyarrow's buffers; the input is
# about 1.5 GB, so a writer that held it would pass this bound.
BOUND_BYTES = 1200 * 1024 * 1024


def test_streamed_append_peak_memory_is_bounded(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(WORKER), str(tmp_path), str(ROWS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    grown = (out["peak_kb"] - out["before_kb"]) * 1024
    assert out["input_bytes"] > BOUND_BYTES
    assert grown < BOUND_BYTES, f"peak RSS grew by {grown / 2**20:.0f} MB"

    table = StaticTable.from_metadata(out["metadata"])
    assert len(table.snapshots()) == 1
    files = [task.file for task in table.scan().plan_files()]
    assert {f.partition for f in files} == {(0,), (1,), (2,), (3,)}
    assert len(files) > 4  # rolled at 64 MB
    paths = [f.file_path.removeprefix("file://") for f in files]
    data = ds.dataset(paths, format="parquet")
    assert data.count_rows() == ROWS
    assert pc.sum(data.to_table(columns=["id"]).column("id")).as_py() == ROWS * (ROWS - 1) // 2
