"""Reading Parquet through frazil's scan vs reading the same files with plain pyarrow.

A v2 table of 8M rows (smoke mode: 8k) in 16 Parquet files written by frazil's writer (zstd,
10 columns: longs, doubles, strings, a timestamp, a decimal), unpartitioned. Both readers read
every column of every file into one ``pyarrow.Table`` in this process; frazil plans natively,
projects by field id and applies its (here empty) deletes and residuals on the way. The issue's
target: frazil within 15% of plain pyarrow.

    .venv/bin/python -m pytest benches/test_read_bench.py -m benchmark -p no:cacheprovider

The table is printed at the end and, on a full run, written to benches/read_results.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from bench_report import register_report, time_rounds

pytestmark = [pytest.mark.benchmark]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ROWS = 8_000 if SMOKE else 8_000_000
FILES = 16
ROUNDS = 1 if SMOKE else 5
RESULTS_MD = Path(__file__).with_name("read_results.md")
_TIMES: dict[str, dict[str, float]] = {}


def _batch(rng: np.random.Generator, n: int, start: int) -> pa.Table:
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    return pa.table(
        {
            "id": pa.array(np.arange(start, start + n), pa.int64()),
            "user_id": pa.array(rng.integers(0, 1_000_000, n), pa.int64()),
            "a": pa.array(rng.random(n)),
            "b": pa.array(rng.normal(size=n)),
            "kind": pa.array(words[rng.integers(0, len(words), n)]),
            "note": pa.array([f"note-{i % 9973}" for i in range(n)]),
            "ts": pa.array(
                1_704_067_200_000_000 + rng.integers(0, 14 * 86_400_000_000, n),
                pa.timestamp("us"),
            ),
            "count": pa.array(rng.integers(0, 100, n), pa.int64()),
            "score": pa.array(rng.random(n) * 100),
            "flag": pa.array(rng.integers(0, 2, n).astype(bool)),
        }
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from frazil.catalog import load_catalog

    warehouse = tmp_path_factory.mktemp("read-bench")
    catalog = load_catalog("bench", type="sql", warehouse=str(warehouse))
    catalog.create_namespace("db")
    rng = np.random.default_rng(7)
    first = _batch(rng, ROWS // FILES, 0)
    t = catalog.create_table("db.t", first.schema)
    with t.transaction() as tx:
        tx.append(first)
    for i in range(1, FILES):
        t.append(_batch(rng, ROWS // FILES, i * (ROWS // FILES)))
    return t


def _files(table: Any) -> list[str]:
    return [task.file.file_path.removeprefix("file:") for task in table.scan().plan_files()]


def test_readers_agree(table: Any) -> None:
    ours = table.scan().to_arrow().sort_by("id")
    theirs = ds.dataset(_files(table), format="parquet").to_table().sort_by("id")
    assert ours.num_rows == theirs.num_rows == ROWS
    assert ours.select(theirs.column_names).equals(
        theirs.cast(ours.select(theirs.column_names).schema)
    )


@pytest.mark.parametrize("impl", ["pyarrow.dataset", "pyarrow.parquet", "frazil scan"])
def test_read_throughput(table: Any, impl: str) -> None:
    import pyarrow.parquet as pq

    files = _files(table)
    fns: dict[str, Callable[[], Any]] = {
        "pyarrow.dataset": lambda: ds.dataset(files, format="parquet").to_table(),
        "pyarrow.parquet": lambda: pq.read_table(files),
        "frazil scan": lambda: table.scan().to_arrow(),
    }
    fn = fns[impl]
    if not SMOKE:
        fn()  # warm-up: page cache, thread pools
    _TIMES[impl] = time_rounds(fn, ROUNDS)


def _report() -> list[str]:
    base = _TIMES.get("pyarrow.dataset", {}).get("median")
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs, load "
        f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}, pyarrow {pa.__version__}",
        f"- input: {ROWS:,} rows, 10 columns, {FILES} zstd Parquet files written by frazil; "
        f"median of {ROUNDS} rounds after a warm-up, files in the page cache",
        "",
        "| reader | seconds | M rows/s | vs pyarrow.dataset | CPU/wall |",
        "|---|---|---|---|---|",
    ]
    for impl, t in _TIMES.items():
        s = t["median"]
        ratio = f"{s / base:.2f}x the time" if base else "—"
        lines.append(
            f"| {impl} | {s:.3f} | {ROWS / s / 1e6:.1f} | {ratio} | {t['cpu'] / t['wall']:.2f} |"
        )
    return lines


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    def title() -> str:
        head = "reading Parquet: frazil scan vs pyarrow"
        return head + (" (SMOKE MODE: numbers are meaningless)" if SMOKE else "")

    register_report(
        request,
        "frazil-read-bench-report",
        title,
        lambda: _report() if _TIMES else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Reading Parquet: frazil's scan vs plain pyarrow",
        command=".venv/bin/python -m pytest benches/test_read_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
