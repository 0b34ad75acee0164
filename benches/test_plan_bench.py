"""Scan planning through the public API: frazil vs PyIceberg 0.12 vs Polars 2.1's native planner.

The table (benches/plan_table.py: 100 manifests x 10,000 data files, day-partitioned on a
timestamp, bounds and counts on 8 columns, two of them strings) is generated once and cached.
Each case plans one filter and reads every task's ``task.file.file_path`` and
``task.file.record_count``, as an application would:

    for task in table.scan(row_filter=F).plan_files(): task.file.file_path; task.file.record_count

- frazil: ``StaticTable.from_metadata`` (loaded once, outside the timing), the loop above, median
  of 5 rounds (3 where one takes over 10 s) after the agreement check's round; and
  ``scan.plan_files_arrow().tasks`` (the Arrow plan, one row per task) where the scan has it
  ("n/a" otherwise). Peak RSS of both, each in a fresh child process (its peak resident set
  after planning minus its peak after the imports and the table load).
- PyIceberg: ``StaticTable.from_metadata(...).scan(row_filter=F).plan_files()``, the same loop,
  one round (minutes on the full table).
- Polars: ``pl.scan_iceberg(table).filter(E).explain()`` with the ``polars-iceberg`` planner.
  Polars exposes no task list: ``explain()`` is the cheapest public call that plans (it resolves
  the scan into a Parquet scan over the planned files, with their statistics for skipping) and
  reads no data. Its planner alone (``polars.io.iceberg._plugin.plugin_scan``, private) is timed
  too, and gives the planned paths for the agreement check.

Before timing, every planner must select the same set of data files for the case.

    .venv/bin/python -m pytest benches/test_plan_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_plan_bench.py -m benchmark

A second table, written by PyIceberg 0.12 itself (benches/pyiceberg_table.py, the shape of the
shared ``make_big_table.py``: 100 commits x 10,000 files, found at ``$FRAZIL_BENCH_PYICEBERG_TABLE``
or generated into the bench cache), holds **one Avro block per manifest entry**, as the tables
most Python users have do; the same planners run on it with the issue-29 filters, its 1M entries
are decoded on one thread, and ``inspect.files()`` is timed against PyIceberg's.

Smoke mode: 100 x 10 files, one round, no file written. A full run writes benches/plan_results.md.
Under ``CI=true`` a missing peer (PyIceberg, Polars, polars-iceberg) fails the run.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from bench_report import register_report
from plan_table import (
    DAY0,
    DAYS_PER_MANIFEST,
    ID_WIDTH,
    N_MANIFESTS,
    day_of,
    ensure_table,
    table_dir,
)
from pyiceberg_table import BASE_DAY as PY_BASE_DAY
from pyiceberg_table import CATEGORIES, MEAN_ROWS
from pyiceberg_table import DAYS_PER_COMMIT as PY_DAYS_PER_COMMIT
from pyiceberg_table import ENV as PY_ENV
from pyiceberg_table import USER_SPAN as PY_USER_SPAN
from pyiceberg_table import ensure_table as ensure_pyiceberg_table

from frazil import _native
from frazil.table.static import StaticTable

# a case runs PyIceberg once and frazil several times over 1M files: minutes, not the suite's 600 s
pytestmark = [pytest.mark.benchmark, pytest.mark.timeout(3600)]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ENTRIES = 10 if SMOKE else 10_000
ROUNDS = 1 if SMOKE else 5
SLOW_ROUND_S = 10.0  # a frazil case whose first round takes longer is timed over 3 rounds
TOTAL = N_MANIFESTS * ENTRIES
# user_id's lower bounds are uniform below USER_SPAN: `user_id < 1000` keeps 1000 / USER_SPAN of
# the files (the table: 1,134 of 1M); in smoke mode 2% (about 20 of 1,000)
USER_SPAN = 50_000 if SMOKE else 881_834
RESULTS_MD = Path(__file__).with_name("plan_results.md")
COMMAND = ".venv/bin/python -m pytest benches/test_plan_bench.py -m benchmark -p no:cacheprovider"

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from peers import peer_missing, peers_required  # noqa: E402

_DAY = day_of(DAY0 + DAYS_PER_MANIFEST * 5 + 1)  # the middle day of manifest 5
_NEXT = _DAY + _dt.timedelta(days=1)
_ID_LO = (TOTAL // 2) * ID_WIDTH + 12_345
_ID_HI = _ID_LO + 37 * ID_WIDTH  # about 37.5 files' id ranges meet it (plan_table.py)


@dataclass(frozen=True)
class Case:
    id: str
    label: str
    row_filter: str | None  # frazil's and PyIceberg's filter string
    polars: Callable[[], Any] | None  # the same filter as a Polars expression


def _pl() -> Any:
    import polars as pl

    return pl


CASES = [
    Case(
        "one-day",
        "one day of `ts` (summaries keep 1 manifest)",
        f"ts >= '{_DAY}T00:00:00' AND ts < '{_NEXT}T00:00:00'",
        lambda: (
            (_pl().col("ts") >= _dt.datetime(_DAY.year, _DAY.month, _DAY.day))
            & (_pl().col("ts") < _dt.datetime(_NEXT.year, _NEXT.month, _NEXT.day))
        ),
    ),
    Case(
        "id",
        "`id` range (file metrics only; every manifest read)",
        f"id >= {_ID_LO} AND id <= {_ID_HI}",
        lambda: (_pl().col("id") >= _ID_LO) & (_pl().col("id") <= _ID_HI),
    ),
    Case(
        "user-id",
        "`user_id < 1000`",
        "user_id < 1000",
        lambda: _pl().col("user_id") < 1000,
    ),
    Case(
        "strings",
        "`category = 'music' AND country = 'FR'`",
        "category = 'music' AND country = 'FR'",
        lambda: (_pl().col("category") == "music") & (_pl().col("country") == "FR"),
    ),
    Case("all", "no filter (every file a task)", None, None),
]


# the PyIceberg-written table (benches/pyiceberg_table.py): 100 commits, one manifest each
PY_COMMITS = 100
PY_PER = 10 if SMOKE else 10_000
PY_TOTAL = PY_COMMITS * PY_PER
_PY_DAY = day_of(PY_BASE_DAY + PY_DAYS_PER_COMMIT * 5 + 1)  # the middle day of commit 5
_PY_NEXT = _PY_DAY + _dt.timedelta(days=1)
# ids run consecutively through the files; a range of 37 mean files' rows from the middle meets
# about 38 files
_PY_ID_LO = PY_TOTAL * MEAN_ROWS // 2 + 12_345
_PY_ID_HI = _PY_ID_LO + 37 * MEAN_ROWS
assert "music" in CATEGORIES and PY_USER_SPAN > 1000

PY_CASES = [
    Case(
        "one-day",
        "one day of `ts` (summaries keep 1 manifest)",
        f"ts >= '{_PY_DAY}T00:00:00' AND ts < '{_PY_NEXT}T00:00:00'",
        lambda: (
            (_pl().col("ts") >= _dt.datetime(_PY_DAY.year, _PY_DAY.month, _PY_DAY.day))
            & (_pl().col("ts") < _dt.datetime(_PY_NEXT.year, _PY_NEXT.month, _PY_NEXT.day))
        ),
    ),
    Case(
        "id",
        "`id` range (file metrics only; every manifest read)",
        f"id >= {_PY_ID_LO} AND id <= {_PY_ID_HI}",
        lambda: (_pl().col("id") >= _PY_ID_LO) & (_pl().col("id") <= _PY_ID_HI),
    ),
    *CASES[2:],
]


@dataclass
class Row:
    case: Case
    table: str = "frazil"  # which table: "frazil" (plan_table.py) or "pyiceberg"
    tasks: int = 0
    times: dict[str, float] = field(default_factory=dict)  # column -> seconds
    cpu_wall: float | None = None
    rounds: int = 0
    rss_mb: dict[str, float] = field(default_factory=dict)  # "iterate"/"arrow" -> MB
    notes: dict[str, str] = field(default_factory=dict)  # column -> why there is no number
    agreement: str = ""


ROWS: dict[str, Row] = {}  # "<table>:<case id>" -> its row
#: per table, the manifest decoder on one thread: seconds, CPU seconds, entries, deflate bytes
DECODE: dict[str, dict[str, float]] = {}
#: inspect.files() of the PyIceberg-written table: "frazil"/"pyiceberg" -> seconds, and "rows"
INSPECT: dict[str, float] = {}


# --------------------------------------------------------------------------------------------
# the planners


def _frazil_iterate(table: StaticTable, row_filter: str | None) -> list[tuple[str, int]]:
    out = []
    for task in table.scan(row_filter=row_filter).plan_files():
        out.append((task.file.file_path, task.file.record_count))
    return out


def _frazil_count(table: StaticTable, row_filter: str | None) -> int:
    """The timed loop: reads both fields of every task, keeps nothing."""
    n = records = 0
    for task in table.scan(row_filter=row_filter).plan_files():
        if task.file.file_path:
            n += 1
        records += task.file.record_count
    return n


def _has_arrow_plan(table: StaticTable) -> bool:
    return hasattr(table.scan(), "plan_files_arrow")


def _frazil_arrow(table: StaticTable, row_filter: str | None) -> pa.Table:
    scan: Any = table.scan(row_filter=row_filter)
    tasks = scan.plan_files_arrow().tasks
    assert isinstance(tasks, pa.Table), type(tasks)
    return tasks


def _arrow_paths(tasks: pa.Table) -> set[str]:
    """The data file paths of an Arrow plan: a ``file_path`` column, or a ``file`` /
    ``data_file`` struct column with a ``file_path`` field."""
    if "file_path" in tasks.column_names:
        return set(tasks.column("file_path").to_pylist())
    for name in ("file", "data_file"):
        if name in tasks.column_names:
            col = tasks.column(name).combine_chunks()
            return set(col.field("file_path").to_pylist())
    raise AssertionError(f"no file paths in the Arrow plan's columns {tasks.column_names}")


def _pyiceberg_table(meta: str) -> Any:
    from pyiceberg.table import StaticTable as PyStaticTable

    return PyStaticTable.from_metadata(meta)


def _pyiceberg_iterate(table: Any, row_filter: str | None) -> list[tuple[str, int]]:
    scan = table.scan() if row_filter is None else table.scan(row_filter=row_filter)
    return [(t.file.file_path, t.file.record_count) for t in scan.plan_files()]


def _polars_explain(pyi_table: Any, case: Case) -> int:
    """``explain()`` of the filtered scan: plans it; returns the number of files planned."""
    pl = _pl()
    lf = pl.scan_iceberg(pyi_table)
    if case.polars is not None:
        lf = lf.filter(case.polars())
    text = lf.explain()
    m = re.search(r"SCAN \[([^\]]*?)(?:, \.\.\. (\d+) other sources)?\]", text)
    if m is None:
        if "EMPTY" in text or "DF []" in text:
            return 0
        raise AssertionError(f"Polars' plan names no Parquet scan:\n{text}")
    # the first sources are listed (paths hold no ", "), the rest counted
    return m.group(1).count(", ") + 1 + int(m.group(2) or 0)


def _polars_plugin(pyi_table: Any, case: Case) -> Any:
    """Polars' planner alone (its private entry point): a LazyFrame scanning the planned files."""
    from polars.io.iceberg._plugin import plugin_scan
    from pyiceberg.expressions import parser

    return plugin_scan(
        pyi_table,
        snapshot_id=None,
        from_snapshot_id_exclusive=None,
        to_snapshot_id_inclusive=None,
        projection=None,
        filter_columns=None,
        statistics_columns=None,
        iceberg_table_filter=None if case.row_filter is None else parser.parse(case.row_filter),
        limit=None,
        use_metadata_statistics=True,
        fast_deletion_count=False,
        user_storage_options=None,
    )


def _polars_plugin_paths(pyi_table: Any, case: Case) -> set[str]:
    """The paths Polars' planner selected, from its plan's serialization."""
    lf = _polars_plugin(pyi_table, case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # json serialization is deprecated, and the only view
        plan = json.loads(lf.serialize(format="json"))
    return set(_source_paths(plan))


def _source_paths(node: Any) -> list[str]:
    if isinstance(node, dict):
        sources = node.get("sources")
        if isinstance(sources, dict) and "Paths" in sources:
            return [p["inner"] if isinstance(p, dict) else p for p in sources["Paths"]]
        return [p for v in node.values() for p in _source_paths(v)]
    if isinstance(node, list):
        return [p for v in node for p in _source_paths(v)]
    return []


def _polars_available() -> str | None:
    """Why Polars' native planner cannot be a peer here (None: it can)."""
    for module in ("polars", "polars_iceberg"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (requirements-dev.txt pins it)"
    try:
        from polars.io.iceberg._plugin import use_plugin_planner

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if not use_plugin_planner():
                return "Polars would plan with PyIceberg, not its native planner"
    except Exception as e:  # a broken install, or the PerformanceWarning of a missing plugin
        return f"Polars' native planner is unavailable: {e}"
    return None


# --------------------------------------------------------------------------------------------
# timing and memory


def _time(fn: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Median wall time of ``rounds`` calls, and CPU time / wall time over them."""
    walls = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return statistics.median(walls), cpu / wall if wall > 0 else 0.0


_RSS_CHILD = r"""
import json, resource, sys
from frazil.table.static import StaticTable
import pyarrow

def peak_kb():
    # VmHWM belongs to this process's own address space; ru_maxrss would start at the parent's
    # peak (Linux keeps it across fork and exec), and the bench's parent holds GBs of tasks
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

meta, row_filter, mode = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
table = StaticTable.from_metadata(meta)
scan = table.scan(row_filter=row_filter)
base = peak_kb()
if mode == "arrow":
    n = scan.plan_files_arrow().tasks.num_rows
else:
    n = records = 0
    for task in scan.plan_files():
        if task.file.file_path:
            n += 1
        records += task.file.record_count
print(json.dumps({"n": n, "base_kb": base, "peak_kb": peak_kb()}))
"""


def _peak_rss_mb(meta: str, row_filter: str | None, mode: str) -> tuple[float, int]:
    """Peak RSS growth (MB) of planning in a fresh process, and the number of tasks it saw."""
    out = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, meta, json.dumps(row_filter), mode],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=os.environ.copy(),
    )
    if out.returncode != 0:
        raise AssertionError(f"RSS child ({mode}) failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return (r["peak_kb"] - r["base_kb"]) / 1024, r["n"]


# --------------------------------------------------------------------------------------------
# fixtures and the test


@pytest.fixture(scope="module")
def table_meta() -> str:
    meta, generated = ensure_table(ENTRIES, USER_SPAN)
    sys.stderr.write(
        f"\nplan bench table: {table_dir(ENTRIES, USER_SPAN)} "
        f"({'generated' if generated else 'cached'})\n"
    )
    return meta


@pytest.fixture(scope="module")
def frazil_table(table_meta: str) -> StaticTable:
    return StaticTable.from_metadata(table_meta)


@pytest.fixture(scope="module")
def pyiceberg_table(table_meta: str) -> Any:
    if importlib.util.find_spec("pyiceberg") is None:
        peer_missing("pyiceberg is not installed", module_level=False)
    return _pyiceberg_table(table_meta)


@pytest.fixture(scope="module")
def polars_why_not() -> str | None:
    why = _polars_available()
    if why is not None and peers_required():
        peer_missing(f"Polars cannot be a planning peer: {why}")
    return why


@pytest.fixture(scope="module")
def py_table_meta() -> str:
    if importlib.util.find_spec("pyiceberg") is None:
        peer_missing("pyiceberg is not installed (it writes this table)", module_level=False)
    meta, where, generated = ensure_pyiceberg_table(PY_COMMITS, PY_PER)
    sys.stderr.write(
        f"\nPyIceberg-written plan bench table: {where} ({'generated' if generated else 'found'})\n"
    )
    return meta


@pytest.fixture(scope="module")
def py_frazil_table(py_table_meta: str) -> StaticTable:
    return StaticTable.from_metadata(py_table_meta)


@pytest.fixture(scope="module")
def py_pyiceberg_table(py_table_meta: str) -> Any:
    return _pyiceberg_table(py_table_meta)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan(
    case: Case,
    table_meta: str,
    frazil_table: StaticTable,
    pyiceberg_table: Any,
    polars_why_not: str | None,
) -> None:
    _plan_case("frazil", case, table_meta, frazil_table, pyiceberg_table, polars_why_not)


@pytest.mark.parametrize("case", PY_CASES, ids=[c.id for c in PY_CASES])
def test_plan_pyiceberg_written(
    case: Case,
    py_table_meta: str,
    py_frazil_table: StaticTable,
    py_pyiceberg_table: Any,
    polars_why_not: str | None,
) -> None:
    """The same planners on the PyIceberg-written table (one Avro block per manifest entry)."""
    _plan_case(
        "pyiceberg", case, py_table_meta, py_frazil_table, py_pyiceberg_table, polars_why_not
    )


def _plan_case(
    table: str,
    case: Case,
    table_meta: str,
    frazil_table: StaticTable,
    pyiceberg_table: Any,
    polars_why_not: str | None,
) -> None:
    if not SMOKE:
        assert _native.build_profile == "release", "benchmarks need a release build"
    row = ROWS.setdefault(f"{table}:{case.id}", Row(case, table))

    # the files each planner selects, before any timing (also each planner's warm-up)
    t0 = time.perf_counter()
    ours = _frazil_iterate(frazil_table, case.row_filter)
    first = time.perf_counter() - t0
    paths = {p for p, _ in ours}
    assert len(paths) == len(ours), "frazil planned a data file twice"
    row.tasks = len(ours)
    t0 = time.perf_counter()
    theirs = _pyiceberg_iterate(pyiceberg_table, case.row_filter)
    row.times["pyiceberg"] = time.perf_counter() - t0  # its one round
    assert set(theirs) == set(ours), (
        f"{case.id}: frazil and PyIceberg disagree ({len(ours)} vs {len(theirs)} tasks; "
        f"path and record_count pairs)"
    )
    agreed = ["PyIceberg"]
    arrow = _has_arrow_plan(frazil_table)
    if arrow:
        assert _arrow_paths(_frazil_arrow(frazil_table, case.row_filter)) == paths, (
            f"{case.id}: frazil's Arrow plan and its tasks disagree"
        )
        agreed.append("frazil Arrow plan")
    else:
        row.notes["arrow"] = "n/a"
    if polars_why_not is None:
        planned = _polars_plugin_paths(pyiceberg_table, case)
        assert planned == paths, (
            f"{case.id}: Polars planned {len(planned)} files, frazil {len(paths)}"
        )
        explained = _polars_explain(pyiceberg_table, case)
        assert explained == len(paths), (
            f"{case.id}: Polars' explain() planned {explained} files, frazil {len(paths)} (is "
            "the filter pushed down?)"
        )
        agreed.append("Polars")
    else:
        row.notes["polars"] = row.notes["polars-plugin"] = "unavailable"
    row.agreement = "same files: " + ", ".join(agreed)

    # timing: fewer rounds where one takes minutes (the median of 3 still)
    rounds = ROUNDS if first < SLOW_ROUND_S else min(ROUNDS, 3)
    row.rounds = rounds
    row.times["frazil"], row.cpu_wall = _time(
        lambda: _frazil_count(frazil_table, case.row_filter), rounds
    )
    if arrow:
        row.times["arrow"], _ = _time(lambda: _frazil_arrow(frazil_table, case.row_filter), rounds)
    if polars_why_not is None:
        row.times["polars"], _ = _time(lambda: _polars_explain(pyiceberg_table, case), ROUNDS)
        row.times["polars-plugin"], _ = _time(lambda: _polars_plugin(pyiceberg_table, case), ROUNDS)

    # peak RSS, each in a fresh process
    for mode in ("iterate", "arrow") if arrow else ("iterate",):
        mb, n = _peak_rss_mb(table_meta, case.row_filter, mode)
        assert n == row.tasks, f"{case.id}: the RSS child ({mode}) planned {n} tasks"
        row.rss_mb[mode] = mb


# --------------------------------------------------------------------------------------------
# the table


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return f"{cpu}, {os.cpu_count()} logical CPUs, load average (1/5/15 min) {load} at the end"


def _git() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            cwd=Path(__file__).parent,
        )
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def _s(t: float | None) -> str:
    if t is None:
        return "—"
    return f"{t:.3f}" if t < 10 else f"{t:.1f}"


def _x(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "—"
    r = b / a
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2f}x"


def _cell(row: Row, key: str) -> str:
    if key in row.times:
        return _s(row.times[key])
    return row.notes.get(key, "—")


def _targets() -> list[str]:
    out = []

    def line(what: str, ok: bool, got: str) -> None:
        out.append(f"- {what}: {'PASS' if ok else 'FAIL'} ({got})")

    r = ROWS.get("frazil:one-day")
    if r and "frazil" in r.times and "pyiceberg" in r.times:
        x = r.times["pyiceberg"] / r.times["frazil"]
        line("one day at least 50x PyIceberg", x >= 50, f"{x:,.0f}x")
    for cid, limit in (("id", 0.5), ("user-id", 0.5), ("strings", 1.5), ("all", 1.5)):
        r = ROWS.get(f"frazil:{cid}")
        if r and "frazil" in r.times:
            t = r.times["frazil"]
            line(f"{r.case.label}: iterating the tasks under {limit} s", t < limit, f"{t:.3f} s")
    if "frazil" in DECODE:
        line(*_decode_target(DECODE["frazil"]))
    r = ROWS.get("frazil:all")
    if r:
        if "arrow" in r.times:
            t, mb = r.times["arrow"], r.rss_mb.get("arrow")
            ok = t < 0.7 and mb is not None and mb < 1024
            line(
                "the Arrow plan of 1M tasks under 0.7 s, peak RSS under 1 GB",
                ok,
                f"{t:.3f} s, {mb:,.0f} MB" if mb is not None else f"{t:.3f} s",
            )
        else:
            out.append(
                "- the Arrow plan of 1M tasks under 0.7 s, peak RSS under 1 GB: n/a "
                "(no `DataScan.plan_files_arrow` in this build)"
            )
    return out


def _decode_target(d: dict[str, float]) -> tuple[str, bool, str]:
    return (
        f"decoding the {d['entries']:,.0f} manifest entries (string bounds, every stats map; "
        f"{d['deflate'] / 1e6:,.0f} MB of deflate Avro in {d['blocks']:,.0f} blocks) on one "
        "thread under 1.5 s",
        d["seconds"] < 1.5,
        f"{d['seconds']:.3f} s wall, {d['cpu']:.3f} s CPU",
    )


def _targets_29() -> list[str]:
    """Issue 29's targets, on the PyIceberg-written table."""
    out = []

    def line(what: str, ok: bool, got: str) -> None:
        out.append(f"- {what}: {'PASS' if ok else 'FAIL'} ({got})")

    for case in PY_CASES:
        r = ROWS.get(f"pyiceberg:{case.id}")
        if r is None or "frazil" not in r.times:
            continue
        t, polars = r.times["frazil"], r.times.get("polars-plugin")
        if polars is not None and case.row_filter is not None:
            x = polars / t
            line(f"{case.label}: at least 3x Polars' planner", x >= 3, f"{x:.2f}x")
        if case.id in ("id", "user-id"):
            line(f"{case.label}: under 1.0 s", t < 1.0, f"{t:.3f} s")
    if "pyiceberg" in DECODE:
        line(*_decode_target(DECODE["pyiceberg"]))
    return out


@pytest.mark.parametrize("table", ["frazil", "pyiceberg"])
def test_decode_one_thread(table: str, request: pytest.FixtureRequest) -> None:
    """Issues 14 and 29: the manifest decoder on manifests with string bounds, every stats map
    decoded, one thread: 1M entries under 1.5 s, in large blocks (plan_table.py, as Java and
    frazil write them) and in PyIceberg's one block per entry."""
    from frazil.manifest import read_manifest_list

    fixture = "frazil_table" if table == "frazil" else "py_frazil_table"
    t: StaticTable = request.getfixturevalue(fixture)
    snapshot = t.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    listed = read_manifest_list(t.io.read(snapshot.manifest_list)).to_pylist()
    datas = [t.io.read(m["manifest_path"]) for m in listed]
    inherits = [(m["added_snapshot_id"], m["sequence_number"], m["first_row_id"]) for m in listed]

    def decode() -> int:
        batches = _native.manifest_read_many(datas, inherits, None, 1)
        return sum(pa.table(b).num_rows for b in batches)

    entries = decode()  # warm-up, and the count
    assert entries == (N_MANIFESTS * ENTRIES if table == "frazil" else PY_TOTAL)
    cpu0 = time.process_time()
    seconds, _ = _time(decode, ROUNDS)
    cpu = (time.process_time() - cpu0) / ROUNDS
    blocks = sum(_avro_blocks(d) for d in datas)
    DECODE[table] = dict(
        seconds=seconds, cpu=cpu, entries=entries, deflate=sum(len(d) for d in datas), blocks=blocks
    )


def _varint(b: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return (value >> 1) ^ -(value & 1), i


def _avro_blocks(data: bytes) -> int:
    """The number of blocks of an Avro container file, from their headers."""
    i = 4
    while True:  # the header's metadata map
        n, i = _varint(data, i)
        if n == 0:
            break
        if n < 0:
            _, i = _varint(data, i)
        for _ in range(abs(n)):
            size, i = _varint(data, i)
            size, i = _varint(data, i + size)
            i += size
    i += 16
    blocks = 0
    while i < len(data):
        _, i = _varint(data, i)
        size, i = _varint(data, i)
        i += size + 16
        blocks += 1
    return blocks


def test_inspect_files_pyiceberg_written(
    py_frazil_table: StaticTable, py_pyiceberg_table: Any
) -> None:
    """``inspect.files()`` of the PyIceberg-written table, frazil against PyIceberg (one round
    each, after frazil's warm-up); both must list every data file."""
    t0 = time.perf_counter()
    ours = py_frazil_table.inspect.files()
    first = time.perf_counter() - t0
    INSPECT["frazil"], _ = _time(py_frazil_table.inspect.files, 1 if first > SLOW_ROUND_S else 3)
    t0 = time.perf_counter()
    theirs = py_pyiceberg_table.inspect.files()
    INSPECT["pyiceberg"] = time.perf_counter() - t0
    assert ours.num_rows == theirs.num_rows == PY_TOTAL
    assert set(ours.column("file_path").to_pylist()) == set(theirs.column("file_path").to_pylist())
    INSPECT["rows"] = ours.num_rows


def _report() -> list[str]:
    if not ROWS:
        return []
    slow = ", ".join(r.case.id for r in ROWS.values() if r.rounds and r.rounds < ROUNDS)
    header = [
        "case",
        "tasks",
        "frazil s (iterate)",
        "frazil CPU/wall",
        "frazil s (Arrow plan)",
        "PyIceberg s",
        "Polars s (`explain()`)",
        "Polars planner s (`plugin_scan`)",
        "frazil vs PyIceberg",
        "frazil vs Polars `explain()`",
        "frazil vs Polars planner",
        "peak RSS MB (iterate / Arrow)",
    ]
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {_machine()}",
        f"- frazil {_native.__version__} ({_native.build_profile} build, git {_git()}), PyIceberg "
        f"{_version('pyiceberg')}, Polars {_version('polars')} with polars-iceberg "
        f"{_version('polars-iceberg')}, pyarrow {pa.__version__}, Python "
        f"{platform.python_version()}",
        f"- frazil-written table: {N_MANIFESTS} manifests x {ENTRIES:,} data files = {TOTAL:,}, "
        f"v2, `day(ts)`-partitioned, bounds and counts on 8 columns (2 strings), deflate in "
        f"large blocks; local files (page cache); generated by benches/plan_table.py into "
        f"`{table_dir(ENTRIES, USER_SPAN)}`",
        f"- PyIceberg-written table: {PY_COMMITS} fast appends x {PY_PER:,} data files = "
        f"{PY_TOTAL:,} in {PY_COMMITS} manifests, the same shape, written by PyIceberg "
        f"{_version('pyiceberg')} (benches/pyiceberg_table.py, or `${PY_ENV}`) with one deflate "
        "block per manifest entry",
        f"- timing: frazil and Polars median of {ROUNDS} round(s) (frazil: 3 where a round "
        f"took over {SLOW_ROUND_S:g} s: {slow or 'none'}) after the agreement check's round, "
        "PyIceberg one round; each planner's table is loaded once, outside the timing",
    ]
    for table, title in (
        ("pyiceberg", "PyIceberg-written table (one Avro block per entry; issue 29)"),
        ("frazil", "frazil-written table (large blocks; issue 14)"),
    ):
        rows = [r for r in ROWS.values() if r.table == table]
        if rows:
            lines += ["", f"### {title}", "", *_rows_table(header, rows)]
    if DECODE:
        lines += [
            "",
            "Decoding every manifest entry on one thread (`_native.manifest_read_many`):",
            "",
        ]
        for table, d in DECODE.items():
            lines.append(
                f"- {table}-written: {d['entries']:,.0f} entries, {d['blocks']:,.0f} blocks, "
                f"{d['deflate'] / 1e6:,.0f} MB: {d['seconds']:.3f} s wall, {d['cpu']:.3f} s CPU"
            )
    if INSPECT:
        lines += [
            "",
            f"`inspect.files()` of the PyIceberg-written table ({INSPECT['rows']:,.0f} rows): "
            f"frazil {_s(INSPECT['frazil'])} s, PyIceberg {_s(INSPECT['pyiceberg'])} s "
            f"({_x(INSPECT['frazil'], INSPECT['pyiceberg'])}).",
        ]
    if not SMOKE:
        lines += [
            "",
            "Targets (issue 29, the PyIceberg-written table, frazil's task iteration against "
            "Polars' `plugin_scan`):",
            "",
            *_targets_29(),
            "",
            "Targets (issue 14, the frazil-written table, frazil's task iteration unless said):",
            "",
            *_targets(),
        ]
    lines += ["", "What is measured:", "", *NOTES]
    why = _polars_available()
    if why is not None:
        lines.append(f"- Polars was not run: {why}.")
    agreement = sorted({r.agreement for r in ROWS.values()})
    lines += ["", "Checked before timing: " + "; ".join(agreement) + " (every case)."]
    return lines


def _rows_table(header: list[str], rows: list[Row]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        f = r.times.get("frazil")
        rss = " / ".join(
            f"{r.rss_mb[m]:,.0f}" if m in r.rss_mb else "n/a" for m in ("iterate", "arrow")
        )
        cells = [
            r.case.label,
            f"{r.tasks:,}",
            _cell(r, "frazil"),
            "—" if r.cpu_wall is None else f"{r.cpu_wall:.2f}",
            _cell(r, "arrow"),
            _cell(r, "pyiceberg"),
            _cell(r, "polars"),
            _cell(r, "polars-plugin"),
            _x(f, r.times.get("pyiceberg")),
            _x(f, r.times.get("polars")),
            _x(f, r.times.get("polars-plugin")),
            rss,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


NOTES = [
    "- frazil (iterate): `for task in table.scan(row_filter=F).plan_files(): "
    "task.file.file_path; task.file.record_count` on a `StaticTable`; CPU/wall above 1 means "
    "both cores were used.",
    "- frazil (Arrow plan): `table.scan(row_filter=F).plan_files_arrow().tasks`, a pyarrow "
    "Table with one row per task (n/a where the build has no `plan_files_arrow`).",
    "- PyIceberg: `StaticTable.from_metadata(m).scan(row_filter=F).plan_files()`, the same loop.",
    "- Polars (`explain()`): `pl.scan_iceberg(pyiceberg_table).filter(E).explain()`, planned by "
    "the native polars-iceberg plugin. Polars has no public per-task API; `explain()` is the "
    "cheapest public call that plans: it resolves the scan into a Parquet scan over the planned "
    "files with their metadata statistics, and reads no data. Manifest names carry no UUID, so "
    "Polars' in-process manifest cache stays off and each round plans from the files.",
    "- Polars planner (`plugin_scan`): `polars.io.iceberg._plugin.plugin_scan` (private), the "
    "planner alone with the filter as a PyIceberg expression; its plan's serialized sources are "
    "the paths checked against frazil's.",
    "- pyiceberg-core 0.11.0 (iceberg-rust's binding) is not a column: from Python it exposes "
    "transforms, manifest and manifest-list decoders and a DataFusion table provider "
    "(`pyiceberg_core.datafusion.IcebergDataFusionTable`, which needs the `datafusion` package), "
    "but no scan planner and no task list.",
    "- peak RSS: the peak resident set (`VmHWM`) of a fresh `python -c` child after planning "
    "(and iterating) minus its peak after the imports and the table load. Not `ru_maxrss`: "
    "Linux carries it across fork and exec, so a child of the bench's process (GBs of "
    "PyIceberg tasks) would start at its parent's peak.",
]


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    register_report(
        request,
        "frazil-plan-bench-report",
        lambda: (
            "scan planning: frazil vs PyIceberg vs Polars"
            + (" (SMOKE MODE: 100 x 10 files, 1 round; numbers are meaningless)" if SMOKE else "")
        ),
        _report,
        results_md=None if SMOKE else RESULTS_MD,
        heading="Scan planning: frazil vs PyIceberg vs Polars (issues 14 and 29)",
        command=COMMAND,
    )
