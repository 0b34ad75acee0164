"""Reading an Iceberg table written by PyIceberg: frazil vs PyIceberg, DuckDB, Polars and plain
``pyarrow.dataset`` over the same files, in one run.

The table (built once by PyIceberg 0.12 and cached outside the repository, see ``CACHE``):
20,000,040 rows in 120 zstd Parquet files (one fast append each, as a stream of events lands),
v2, unpartitioned, 11 columns: ``id`` long (required), ``ts`` timestamp (the 120 appends cover
30 days in order, so files are clustered by time as appended event data is), ``user_id`` and
``session_id`` longs, ``amount`` double, ``qty`` int, ``category`` and ``country`` low-cardinality
strings, ``score`` double, ``flag`` bool, ``note`` string; ``user_id`` and ``amount`` are 1% null.
Unpartitioned because that is what a PyIceberg ``append`` of an un-designed table gives, and it
leaves the filter case to the readers' file and row-group pruning rather than to the planner's
partition pruning. A second catalog entry (``db.events_del``, registered on the same metadata)
has 5% of the rows (``user_id < 50000``) deleted by v2 position delete files written by frazil's
merge-on-read ``delete``: one position delete file per data file.

Cases (each reader returns one ``pyarrow.Table``; Polars' and DuckDB's conversion counted):

- ``full``: every column of every row;
- ``filter``: ``id, ts, amount, category`` where ``ts`` is in a 7-day range and ``amount > 900``
  (no NaN in ``amount``, so SQL's and the Iceberg spec's semantics agree);
- ``deleted``: every column of the table with position deletes;
- ``point``: every column of one user's rows (``user_id = 424242``, 22 rows of 20M, scattered
  through the files: no statistics prune them, so a reader that decodes only its filter column
  before the others is ahead).

``pyarrow.dataset`` over the current data files is the floor (for ``filter`` with the same
filter expression; for ``deleted`` it reads without applying deletes, so it returns 5% more rows
and is shown only as a reference). Every reader runs in its own child process: one warm-up read,
then ``ROUNDS`` timed reads; wall is their median, CPU the process CPU over the timed reads divided
by their number, peak RSS the child's ``VmHWM`` minus its resident set after imports and table load.
Every reader's rows are checked equal (count, sum of ``id``) to the others'.

    FRAZIL_BENCH_CACHE=~/.cache/frazil-bench \
    .venv/bin/python -m pytest benches/test_read_bench.py -m benchmark -p no:cacheprovider

The table is printed at the end and, on a full run, written to benches/read_results.md.
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
FILES = 6 if SMOKE else 120
PER_FILE = 3_334 if SMOKE else 166_667
ROWS = FILES * PER_FILE
ROUNDS = 1 if SMOKE else 3
DAYS = 30
START_US = 1_704_067_200_000_000  # 2024-01-01
ROOT = Path(__file__).resolve().parent.parent
CACHE = (
    Path(os.environ.get("FRAZIL_BENCH_CACHE", Path.home() / ".cache" / "frazil-bench")).expanduser()
    / f"read-{ROWS}-{FILES}-v2"
)
RESULTS_MD = Path(__file__).with_name("read_results.md")
READERS = ("frazil", "pyiceberg", "duckdb", "polars", "pyarrow.dataset")
CASES = ("full", "filter", "deleted", "point")
POINT_USER = 424_242  # one user's events: 22 rows of the 20M
FILTER_COLUMNS = ("id", "ts", "amount", "category")
FILTER_FROM = "2024-01-10T00:00:00"
FILTER_TO = "2024-01-17T00:00:00"
FILTER_AMOUNT = 900.0
_RESULTS: dict[tuple[str, str], dict[str, Any]] = {}


def _chunk(rng: np.random.Generator, i: int) -> pa.Table:
    n = PER_FILE
    first = i * n
    span = DAYS * 86_400_000_000
    ts = START_US + np.arange(first, first + n) * (span // ROWS)
    ts += rng.integers(-60_000_000, 60_000_000, n)
    categories = np.array(["books", "games", "garden", "music", "sports", "tools", "toys", "food"])
    countries = np.array(["BR", "DE", "FR", "IN", "JP", "US", "GB", "ES", "IT", "MX", "CA", "AU"])
    user = rng.integers(0, 1_000_000, n)
    amount = rng.random(n) * 1000
    return pa.table(
        {
            "id": pa.array(np.arange(first, first + n), pa.int64()),
            "ts": pa.array(ts, pa.timestamp("us")),
            "user_id": pa.array(user, pa.int64(), mask=rng.random(n) < 0.01),
            "session_id": pa.array(rng.integers(0, 2**40, n), pa.int64()),
            "amount": pa.array(amount, pa.float64(), mask=rng.random(n) < 0.01),
            "qty": pa.array(rng.integers(0, 100, n).astype(np.int32)),
            "category": pa.array(categories[rng.integers(0, len(categories), n)]),
            "country": pa.array(countries[rng.integers(0, len(countries), n)]),
            "score": pa.array(rng.normal(size=n)),
            "flag": pa.array(rng.integers(0, 2, n).astype(bool)),
            "note": pa.array(np.char.add("note-", rng.integers(0, 100_000, n).astype(str))),
        }
    ).cast(
        pa.schema(
            [pa.field("id", pa.int64(), nullable=False)]
            + [
                pa.field(n, t)
                for n, t in [
                    ("ts", pa.timestamp("us")),
                    ("user_id", pa.int64()),
                    ("session_id", pa.int64()),
                    ("amount", pa.float64()),
                    ("qty", pa.int32()),
                    ("category", pa.string()),
                    ("country", pa.string()),
                    ("score", pa.float64()),
                    ("flag", pa.bool_()),
                    ("note", pa.string()),
                ]
            ]
        )
    )


def _build(root: Path) -> dict[str, str]:
    """Writes the table with PyIceberg (and the deletes with frazil) under ``root``; the marker
    ``tables.json`` is written last, so an interrupted build is redone."""
    from pyiceberg.catalog.sql import SqlCatalog

    from frazil.catalog import load_catalog

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    uri = f"sqlite:///{root}/catalog.db"
    warehouse = f"file://{root}/warehouse"
    cat = SqlCatalog("bench", uri=uri, warehouse=warehouse)
    cat.create_namespace("db")
    rng = np.random.default_rng(28)
    first = _chunk(rng, 0)
    table = cat.create_table("db.events", schema=first.schema)
    table.append(first)
    for i in range(1, FILES):
        table.append(_chunk(rng, i))
    plain = cat.load_table("db.events").metadata_location

    fcat = load_catalog("bench", type="sql", uri=uri, warehouse=warehouse)
    deleted = fcat.register_table("db.events_del", plain)
    with deleted.transaction() as tx:
        tx.set_properties({"write.delete.mode": "merge-on-read"})
    fcat.load_table("db.events_del").delete("user_id < 50000")
    info = {"plain": plain, "deleted": fcat.load_table("db.events_del").metadata_location}
    (root / "tables.json").write_text(json.dumps(info))
    return info


@pytest.fixture(scope="module")
def tables() -> dict[str, str]:
    done = CACHE / "tables.json"
    if done.exists():
        loaded: dict[str, str] = json.loads(done.read_text())
        return loaded
    return _build(CACHE)


_CHILD = r"""
import json, os, statistics, sys, time
reader, case, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
meta = json.loads(sys.argv[4])
cols, t_from, t_to, amount, point_user = json.loads(sys.argv[5])
import pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset as ds

def rss_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0

location = meta["deleted" if case == "deleted" else "plain"]
path = location.removeprefix("file://")
flt = case == "filter"
point = case == "point"
text = f"ts >= '{t_from}' AND ts < '{t_to}' AND amount > {amount}"
point_text = f"user_id = {point_user}"

if reader == "frazil":
    from frazil.table.static import StaticTable
    table = StaticTable.from_metadata(location)
    def read():
        if flt:
            return table.scan(row_filter=text, selected_fields=tuple(cols)).to_arrow()
        if point:
            return table.scan(row_filter=point_text).to_arrow()
        return table.scan().to_arrow()
elif reader == "pyiceberg":
    from pyiceberg.table import StaticTable
    table = StaticTable.from_metadata(location)
    def read():
        if flt:
            return table.scan(row_filter=text, selected_fields=tuple(cols)).to_arrow()
        if point:
            return table.scan(row_filter=point_text).to_arrow()
        return table.scan().to_arrow()
elif reader == "duckdb":
    sys.path.insert(0, sys.argv[6])
    from duckdb_peer import duckdb_with_iceberg
    con = duckdb_with_iceberg()
    def read():
        if flt:
            sql = (f"SELECT {', '.join(cols)} FROM iceberg_scan('{path}') WHERE "
                   f"ts >= TIMESTAMP '{t_from}' AND ts < TIMESTAMP '{t_to}' AND amount > {amount}")
        elif point:
            sql = f"SELECT * FROM iceberg_scan('{path}') WHERE {point_text}"
        else:
            sql = f"SELECT * FROM iceberg_scan('{path}')"
        return con.execute(sql).to_arrow_table()
elif reader == "polars":
    import datetime as dt
    import polars as pl
    def read():
        lf = pl.scan_iceberg(location)
        if flt:
            lf = lf.select(cols).filter(
                (pl.col("ts") >= dt.datetime.fromisoformat(t_from))
                & (pl.col("ts") < dt.datetime.fromisoformat(t_to))
                & (pl.col("amount") > amount)
            )
        if point:
            lf = lf.filter(pl.col("user_id") == point_user)
        return lf.collect().to_arrow()
else:
    from frazil.table.static import StaticTable
    files = [t.file.file_path.removeprefix("file://").removeprefix("file:")
             for t in StaticTable.from_metadata(location).scan().plan_files()]
    def read():
        d = ds.dataset(files, format="parquet")
        if flt:
            e = ((pc.field("ts") >= pa.scalar(dt_from, pa.timestamp("us")))
                 & (pc.field("ts") < pa.scalar(dt_to, pa.timestamp("us")))
                 & (pc.field("amount") > amount))
            return d.to_table(columns=list(cols), filter=e)
        if point:
            return d.to_table(filter=pc.field("user_id") == point_user)
        return d.to_table()
    import datetime as dt
    dt_from, dt_to = dt.datetime.fromisoformat(t_from), dt.datetime.fromisoformat(t_to)

base = rss_kb("VmRSS:")
first = read()
check = {"rows": first.num_rows, "sum_id": int(pc.sum(first.column("id")).as_py() or 0),
         "nbytes": first.nbytes}
del first
walls = []
cpu0 = time.process_time()
for _ in range(rounds):
    t = time.perf_counter()
    out = read()
    walls.append(time.perf_counter() - t)
    del out
cpu = (time.process_time() - cpu0) / rounds
print(json.dumps({**check, "wall": statistics.median(walls), "cpu": cpu,
                  "peak_mb": (rss_kb("VmHWM:") - base) / 1024}))
"""


def _run(reader: str, case: str, tables: dict[str, str]) -> dict[str, Any]:
    args = json.dumps([FILTER_COLUMNS, FILTER_FROM, FILTER_TO, FILTER_AMOUNT, POINT_USER])
    # The child imports frazil as this process does (the installed wheel in CI, where the
    # checkout's python/ has no native module).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            reader,
            case,
            str(ROUNDS),
            json.dumps(tables),
            args,
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


@pytest.mark.parametrize("case", CASES)
def test_readers(tables: dict[str, str], case: str) -> None:
    for reader in READERS:
        _RESULTS[(case, reader)] = _run(reader, case, tables)
    iceberg = {r: _RESULTS[(case, r)] for r in READERS if r != "pyarrow.dataset"}
    want = iceberg["pyiceberg"]
    for reader, got in iceberg.items():
        assert (got["rows"], got["sum_id"]) == (want["rows"], want["sum_id"]), (reader, case)
    floor = _RESULTS[(case, "pyarrow.dataset")]
    if case == "deleted":
        assert floor["rows"] == ROWS > want["rows"] > 0.9 * ROWS
    else:
        assert (floor["rows"], floor["sum_id"]) == (want["rows"], want["sum_id"])
    # the smoke table (20k rows) need not hold the point case's user
    assert want["rows"] > 0 or (SMOKE and case == "point")


def _report() -> list[str]:
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs, load "
        f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}, pyarrow {pa.__version__}",
        f"- table: {ROWS:,} rows, {FILES} Parquet files written by PyIceberg 0.12 (one append "
        "each), unpartitioned, 11 columns; `deleted`: 5% of rows deleted by position deletes "
        "(one delete file per data file)",
        f"- `point`: every column where `user_id = {POINT_USER}` (rows scattered through every "
        "file)",
        f"- `filter`: `{', '.join(FILTER_COLUMNS)}` where `ts >= '{FILTER_FROM}' AND ts < "
        f"'{FILTER_TO}' AND amount > {FILTER_AMOUNT}`",
        f"- each reader in its own process: a warm-up read, then the median of {ROUNDS}; CPU is "
        "per read (CPU/wall near 2 = both cores); peak RSS is the growth over the process's "
        "resident set after imports and table load; result = the Arrow result's `nbytes`",
        "- `pyarrow.dataset` reads the same data files without Iceberg (for `deleted`, without "
        "applying the deletes: 5% more rows)",
        "",
        "| case | reader | seconds | vs pyarrow.dataset | CPU/wall | peak RSS MB | result MB "
        "| RSS / result | rows |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in CASES:
        floor = _RESULTS.get((case, "pyarrow.dataset"))
        for reader in READERS:
            r = _RESULTS.get((case, reader))
            if r is None:
                continue
            ratio = f"{r['wall'] / floor['wall']:.2f}x" if floor else "—"
            result_mb = r["nbytes"] / 2**20
            # a point read's result is a few KB: RSS over it says nothing
            per_result = f"{r['peak_mb'] / result_mb:.2f}" if result_mb >= 1 else "—"
            lines.append(
                f"| {case} | {reader} | {r['wall']:.3f} | {ratio} | {r['cpu'] / r['wall']:.2f} "
                f"| {r['peak_mb']:.0f} | {result_mb:.0f} | {per_result} "
                f"| {r['rows']:,} |"
            )
    return lines


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    def title() -> str:
        head = "reading an Iceberg table: frazil vs PyIceberg, DuckDB, Polars, pyarrow"
        return head + (" (SMOKE MODE: numbers are meaningless)" if SMOKE else "")

    register_report(
        request,
        "frazil-read-bench-report",
        title,
        lambda: _report() if _RESULTS else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Reading an Iceberg table: frazil vs PyIceberg, DuckDB, Polars and pyarrow",
        command=".venv/bin/python -m pytest benches/test_read_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
