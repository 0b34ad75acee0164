"""Row filters with many terms: frazil's native row filter vs pyarrow's ``is_in``.

10M rows (smoke mode: 10k) of a long ``id`` (random, 10% null) and a string ``key``:

- in memory, per 1M-row batch: a 10k-literal ``In`` and a 1k-term ``OR`` of ``id = k`` through
  :class:`frazil.table.scan.filter.RowFilter` (what every scan applies to its rows) against
  ``pyarrow.compute.is_in`` with the same values (pyarrow's fastest equivalent: its expression
  of 1k ORs is far slower, and 10k of them crashed the process before issue 26); the same for a
  10k-string ``In``;
- through the public API, the same ``In`` as ``table.scan(row_filter=...).to_arrow()`` over a
  table of 8 files, against ``pyarrow.dataset`` reading the same files with ``isin``.

    .venv/bin/python -m pytest benches/test_filter_bench.py -m benchmark -p no:cacheprovider
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
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest
from bench_report import register_report, time_rounds

from frazil.expressions import EqualTo, In, Or, bind
from frazil.schema import Schema
from frazil.table.scan.filter import RowFilter
from frazil.types import LongType, NestedField, StringType

pytestmark = [pytest.mark.benchmark]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ROWS = 10_000 if SMOKE else 10_000_000
BATCH = 1_000 if SMOKE else 1_000_000
FILES = 8
ROUNDS = 1 if SMOKE else 5
RESULTS_MD = Path(__file__).with_name("filter_results.md")
SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "key", StringType()))
_TIMES: dict[str, dict[str, dict[str, float]]] = {}

rng = np.random.default_rng(11)
IDS = rng.integers(0, 2 * ROWS, ROWS)
VALID = rng.random(ROWS) >= 0.1
KEYS_10K = sorted({int(x) for x in rng.integers(0, 2 * ROWS, 10_000)})
KEYS_1K = KEYS_10K[:1000]
WORDS = [f"key-{i}" for i in range(0, 40_000, 4)]  # 10k strings


@pytest.fixture(scope="module")
def batches() -> list[pa.RecordBatch]:
    data = pa.table(
        {
            "id": pa.array(IDS, pa.int64(), mask=~VALID),
            "key": pa.array([f"key-{i}" for i in IDS % 40_000], pa.large_string()),
        }
    )
    return data.to_batches(max_chunksize=BATCH)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory, batches: list[pa.RecordBatch]) -> Any:
    from frazil.catalog import load_catalog

    warehouse = tmp_path_factory.mktemp("filter-bench")
    catalog = load_catalog("bench", type="sql", warehouse=str(warehouse))
    catalog.create_namespace("db")
    data = pa.Table.from_batches(batches)
    t = catalog.create_table("db.t", SCHEMA)
    per = ROWS // FILES
    for i in range(FILES):
        t.append(data.slice(i * per, per))
    return t


def _files(table: Any) -> list[str]:
    return [task.file.file_path.removeprefix("file:") for task in table.scan().plan_files()]


CASES: dict[str, tuple[Callable[[], Any], str, Any]] = {
    "id IN (10k longs)": (lambda: In("id", KEYS_10K), "id", KEYS_10K),
    "OR of 1k id = k": (lambda: Or(*[EqualTo("id", k) for k in KEYS_1K]), "id", KEYS_1K),
    "key IN (10k strings)": (lambda: In("key", WORDS), "key", WORDS),
}


@pytest.mark.parametrize("case", list(CASES))
def test_in_memory(batches: list[pa.RecordBatch], case: str) -> None:
    make, column, values = CASES[case]
    f = RowFilter(bind(SCHEMA, make()), SCHEMA)
    value_set = pa.array(values, batches[0].schema.field(column).type)
    # the same rows: is_in is null for a null id, which a filter drops
    for b in batches[:2]:
        theirs = pc.fill_null(pc.is_in(b.column(column), value_set=value_set), False)
        assert f.mask(b).equals(theirs)

    def ours() -> None:
        for b in batches:
            f.mask(b)

    def pyarrow_is_in() -> None:
        for b in batches:
            pc.is_in(b.column(column), value_set=value_set)

    if not SMOKE:
        ours(), pyarrow_is_in()
    _TIMES[case] = {
        "frazil RowFilter": time_rounds(ours, ROUNDS),
        "pyarrow is_in": time_rounds(pyarrow_is_in, ROUNDS),
    }


def test_through_the_scan(table: Any) -> None:
    expr = In("id", KEYS_10K)
    files = _files(table)
    dataset_filter = pc.field("id").isin(KEYS_10K)
    ours = table.scan(row_filter=expr).to_arrow()
    theirs = ds.dataset(files, format="parquet").to_table(filter=dataset_filter)
    assert ours.num_rows == theirs.num_rows
    fns = {
        "frazil scan().to_arrow()": lambda: table.scan(row_filter=expr).to_arrow(),
        "pyarrow.dataset isin": lambda: ds.dataset(files, format="parquet").to_table(
            filter=dataset_filter
        ),
    }
    if not SMOKE:
        for fn in fns.values():
            fn()
    _TIMES["scan with id IN (10k), 8 files"] = {k: time_rounds(v, ROUNDS) for k, v in fns.items()}


def _report() -> list[str]:
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs, load "
        f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}, pyarrow {pa.__version__}",
        f"- input: {ROWS:,} rows (long id 10% null, string key), {BATCH:,}-row batches; "
        f"median of {ROUNDS} rounds after a warm-up",
        "",
        "| case | implementation | seconds | M rows/s | CPU/wall |",
        "|---|---|---|---|---|",
    ]
    for case, impls in _TIMES.items():
        for impl, t in impls.items():
            s = t["median"]
            lines.append(
                f"| {case} | {impl} | {s:.3f} | {ROWS / s / 1e6:.0f} | {t['cpu'] / t['wall']:.2f} |"
            )
    return lines


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    def title() -> str:
        head = "row filters: frazil's native evaluation vs pyarrow is_in"
        return head + (" (SMOKE MODE: numbers are meaningless)" if SMOKE else "")

    register_report(
        request,
        "frazil-filter-bench-report",
        title,
        lambda: _report() if _TIMES else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Row filters: frazil's native evaluation vs pyarrow's is_in",
        command=".venv/bin/python -m pytest benches/test_filter_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
