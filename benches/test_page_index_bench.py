"""Selective reads of files that carry a Parquet page index (as Java's writer, and now frazil's,
write every file): frazil vs PyIceberg, DuckDB, Polars and plain ``pyarrow.dataset``, in one run.

The table (built once and cached outside the repository, see ``CACHE``): 20,000,000 rows in 20
zstd Parquet files of one row group each per million rows, sorted by ``id`` (as a table sorted
by its write order, or compacted by a sort order, is), written by pyarrow with a page index and
the table's field ids, and added to a frazil table with ``add_files``. Columns: ``id`` long,
``ts`` timestamp (one per millisecond, in ``id`` order), ``user_id`` long, ``amount`` double,
``category`` string.

Cases, every column read, each reader returning one ``pyarrow.Table``:

- ``range``: ``id`` in a range of 20,000 rows inside one file (0.1% of the table);
- ``point``: one ``id``;
- ``time``: ``ts`` in a 10-second window (10,000 rows).

The row group statistics keep one row group in each case; the page index narrows that to a
page or two of its million rows. Readers run in child processes (a warm-up read, then the
median of ``ROUNDS``), as in ``test_read_bench.py``; every reader's rows are checked equal
(count, sum of ``id``).

    .venv/bin/python -m pytest benches/test_page_index_bench.py -m benchmark -p no:cacheprovider
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from bench_report import register_report

pytestmark = [pytest.mark.benchmark]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
FILES = 2 if SMOKE else 20
PER_FILE = 50_000 if SMOKE else 1_000_000
ROWS = FILES * PER_FILE
ROUNDS = 1 if SMOKE else 7
START_US = 1_704_067_200_000_000  # 2024-01-01
ROOT = Path(__file__).resolve().parent.parent
CACHE = (
    Path(os.environ.get("FRAZIL_BENCH_CACHE", Path.home() / ".cache" / "frazil-bench")).expanduser()
    / f"page-index-{ROWS}-{FILES}-v1"
)
RESULTS_MD = Path(__file__).with_name("page_index_results.md")
READERS = ("frazil", "pyiceberg", "duckdb", "polars", "pyarrow.dataset")
_LO = ROWS // 2 + 12_345
CASES: dict[str, tuple[int, int]] = {
    # (lowest id, highest id + 1): ts follows id (one per millisecond)
    "range": (_LO, _LO + ROWS // 1000),
    "point": (_LO + 7, _LO + 8),
    "time": (_LO + 3_000, _LO + 3_000 + ROWS // 2000),
}


def _chunk(rng: np.random.Generator, i: int) -> pa.Table:
    ids = np.arange(i * PER_FILE, (i + 1) * PER_FILE, dtype=np.int64)
    schema = pa.schema(
        [
            pa.field(name, t, metadata={b"PARQUET:field_id": str(k + 1).encode()})
            for k, (name, t) in enumerate(
                [
                    ("id", pa.int64()),
                    ("ts", pa.timestamp("us")),
                    ("user_id", pa.int64()),
                    ("amount", pa.float64()),
                    ("category", pa.string()),
                ]
            )
        ]
    )
    categories = np.array(["music", "books", "games", "food", "travel"])
    return pa.table(
        [
            pa.array(ids),
            pa.array(START_US + ids * 1000, pa.timestamp("us")),
            pa.array(rng.integers(0, 1_000_000, PER_FILE)),
            pa.array(rng.random(PER_FILE) * 1000),
            pa.array(categories[rng.integers(0, 5, PER_FILE)]),
        ],
        schema=schema,
    )


def _build(root: Path) -> str:
    import pyarrow.parquet as pq

    from frazil.catalog import load_catalog
    from frazil.schema import Schema
    from frazil.types import DoubleType, LongType, NestedField, StringType, TimestampType

    shutil.rmtree(root, ignore_errors=True)
    (root / "files").mkdir(parents=True)
    rng = np.random.default_rng(29)
    paths = []
    for i in range(FILES):
        path = root / "files" / f"part-{i:03d}.parquet"
        pq.write_table(
            _chunk(rng, i), path, compression="zstd", write_page_index=True, row_group_size=PER_FILE
        )
        paths.append(str(path))
    cat = load_catalog(
        "bench", type="sql", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh"
    )
    cat.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "user_id", LongType(), required=False),
        NestedField(4, "amount", DoubleType(), required=False),
        NestedField(5, "category", StringType(), required=False),
    )
    table = cat.create_table("db.sorted", schema)
    table.add_files(paths)
    location = cat.load_table("db.sorted").metadata_location
    assert location is not None
    (root / "table.json").write_text(json.dumps(location))
    return location


@pytest.fixture(scope="module")
def location() -> str:
    done = CACHE / "table.json"
    if done.exists():
        loaded: str = json.loads(done.read_text())
        return loaded
    return _build(CACHE)


_CHILD = r"""
import datetime as dt, json, os, statistics, sys, time
reader, column, lo, hi, rounds, location, start_us = sys.argv[1:8]
lo, hi, rounds, start_us = int(lo), int(hi), int(rounds), int(start_us)
import pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset as ds

def rss_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0

path = location.removeprefix("file://")
if column == "ts":
    t_lo = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=start_us + lo * 1000)
    t_hi = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=start_us + hi * 1000)
    text = f"ts >= '{t_lo.isoformat()}' AND ts < '{t_hi.isoformat()}'"
    a, b = t_lo.isoformat(sep=" "), t_hi.isoformat(sep=" ")
    sql = f"ts >= TIMESTAMP '{a}' AND ts < TIMESTAMP '{b}'"
    lo_v, hi_v = t_lo, t_hi
else:
    text = f"id >= {lo} AND id < {hi}"
    sql = text
    lo_v, hi_v = lo, hi

if reader == "frazil":
    from frazil.table.static import StaticTable
    table = StaticTable.from_metadata(location)
    def read():
        return table.scan(row_filter=text).to_arrow()
elif reader == "pyiceberg":
    from pyiceberg.table import StaticTable
    table = StaticTable.from_metadata(location)
    def read():
        return table.scan(row_filter=text).to_arrow()
elif reader == "duckdb":
    sys.path.insert(0, sys.argv[8])
    from duckdb_peer import duckdb_with_iceberg
    con = duckdb_with_iceberg()
    def read():
        return con.execute(f"SELECT * FROM iceberg_scan('{path}') WHERE {sql}").to_arrow_table()
elif reader == "polars":
    import polars as pl
    def read():
        return pl.scan_iceberg(location).filter(
            (pl.col(column) >= lo_v) & (pl.col(column) < hi_v)).collect().to_arrow()
else:
    from frazil.table.static import StaticTable
    files = [t.file.file_path.removeprefix("file://").removeprefix("file:")
             for t in StaticTable.from_metadata(location).scan().plan_files()]
    def read():
        scalar = (lambda v: pa.scalar(v, pa.timestamp("us"))) if column == "ts" else pa.scalar
        e = (pc.field(column) >= scalar(lo_v)) & (pc.field(column) < scalar(hi_v))
        return ds.dataset(files, format="parquet").to_table(filter=e)

base = rss_kb("VmRSS:")
first = read()
check = {"rows": first.num_rows, "sum_id": int(pc.sum(first.column("id")).as_py() or 0)}
del first
walls = []
cpu0 = time.process_time()
for _ in range(rounds):
    t = time.perf_counter()
    out = read()
    walls.append(time.perf_counter() - t)
    del out
print(json.dumps({**check, "wall": statistics.median(walls),
                  "cpu": (time.process_time() - cpu0) / rounds,
                  "peak_mb": (rss_kb("VmHWM:") - base) / 1024}))
"""

_RESULTS: dict[tuple[str, str], dict[str, Any]] = {}


def _run(reader: str, case: str, location: str) -> dict[str, Any]:
    lo, hi = CASES[case]
    column = "ts" if case == "time" else "id"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            reader,
            column,
            str(lo),
            str(hi),
            str(ROUNDS),
            location,
            str(START_US),
            str(ROOT / "tests" / "interop"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        env=env,
    )
    if out.returncode != 0:
        raise AssertionError(f"{reader} {case} failed:\n{out.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("case", list(CASES))
def test_readers(location: str, case: str) -> None:
    for reader in READERS:
        _RESULTS[(case, reader)] = _run(reader, case, location)
    lo, hi = CASES[case]
    want = (hi - lo, sum(range(lo, hi)))
    for reader in READERS:
        got = _RESULTS[(case, reader)]
        assert (got["rows"], got["sum_id"]) == want, (reader, case, got)


def _report() -> list[str]:
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs, load "
        f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}, pyarrow {pa.__version__}",
        f"- table: {ROWS:,} rows sorted by `id`, {FILES} zstd Parquet files of one row group, "
        "with a page index (pyarrow's default pages of 1 MB), added to a frazil table",
        "- cases: `range` = 0.1% of the ids, `point` = one id, `time` = a 10-second `ts` window; "
        "every column",
        f"- each reader in its own process: a warm-up read, then the median of {ROUNDS}; CPU per "
        "read; peak RSS = growth over the process after imports and table load",
        "",
        "| case | reader | ms | vs frazil | CPU ms | peak RSS MB | rows |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in CASES:
        ours = _RESULTS.get((case, "frazil"))
        for reader in READERS:
            r = _RESULTS.get((case, reader))
            if r is None:
                continue
            ratio = f"{r['wall'] / ours['wall']:.1f}x" if ours else "—"
            lines.append(
                f"| {case} | {reader} | {r['wall'] * 1000:.1f} | {ratio} | {r['cpu'] * 1000:.1f} "
                f"| {r['peak_mb']:.0f} | {r['rows']:,} |"
            )
    return lines


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    def title() -> str:
        head = "selective reads with a page index: frazil vs PyIceberg, DuckDB, Polars, pyarrow"
        return head + (" (SMOKE MODE: numbers are meaningless)" if SMOKE else "")

    register_report(
        request,
        "frazil-page-index-bench-report",
        title,
        lambda: _report() if _RESULTS else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Selective reads of files with a page index: frazil vs PyIceberg, DuckDB, Polars "
        "and pyarrow",
        command=".venv/bin/python -m pytest benches/test_page_index_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
