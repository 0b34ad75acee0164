"""Metadata tables: ``inspect.files()`` and ``inspect.entries()`` on the planning benchmark's
table (benches/plan_table.py: 100 manifests x 10,000 data files, 8 columns with stats) against
PyIceberg's ``inspect.files()`` / ``inspect.entries()`` on the same table.

    .venv/bin/python -m pytest benches/test_inspect_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_inspect_bench.py -m benchmark

Both sides must give the same rows (file paths, record counts, readable metrics) before they
are timed. Smoke mode: 100 x 10 files, one round, no file written; a full run writes
benches/inspect_results.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from plan_table import ensure_table

from frazil.table.static import StaticTable

pytestmark = [pytest.mark.benchmark, pytest.mark.timeout(7200)]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ENTRIES = 10 if SMOKE else 10_000
USER_SPAN = 50_000 if SMOKE else 881_834  # the plan bench's, so its cached table is reused
ROUNDS = 1 if SMOKE else 3
RESULTS_MD = Path(__file__).with_name("inspect_results.md")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from peers import import_peer  # noqa: E402

_RESULTS: dict[str, dict[str, float]] = {}


def _median(fn: Callable[[], Any], rounds: int) -> float:
    walls = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
    return statistics.median(walls)


@pytest.fixture(scope="module")
def table_meta() -> str:
    meta, _ = ensure_table(ENTRIES, USER_SPAN)
    return meta


def _summary(rows: Any, nested: bool) -> list[tuple[Any, ...]]:
    """(path, record_count, readable lower/upper of two columns) per row, sorted."""
    df = rows.column("data_file").combine_chunks() if nested else None
    paths = (df.field("file_path") if nested else rows.column("file_path")).to_pylist()
    counts = (df.field("record_count") if nested else rows.column("record_count")).to_pylist()
    rm = rows.column("readable_metrics").combine_chunks()
    ids = rm.field("id").field("lower_bound").to_pylist()
    cats = rm.field("category").field("upper_bound").to_pylist()
    return sorted(zip(paths, counts, ids, cats, strict=True))


@pytest.mark.parametrize("method", ["files", "entries"])
def test_inspect(table_meta: str, method: str) -> None:
    import_peer("pyiceberg")
    from pyiceberg.table import StaticTable as PyStaticTable

    ours_table = StaticTable.from_metadata(table_meta)
    theirs_table = PyStaticTable.from_metadata(table_meta)
    ours = getattr(ours_table.inspect, method)()
    t0 = time.perf_counter()
    theirs = getattr(theirs_table.inspect, method)()
    pyiceberg_s = time.perf_counter() - t0  # one round: it takes minutes on 1M files
    assert ours.num_rows == theirs.num_rows == 100 * ENTRIES
    nested = method == "entries"
    assert _summary(ours, nested) == _summary(theirs, nested), f"{method}: rows differ"
    frazil_s = _median(lambda: getattr(ours_table.inspect, method)(), ROUNDS)
    _RESULTS[method] = {"frazil": frazil_s, "pyiceberg": pyiceberg_s}
    sys.stderr.write(
        f"\ninspect.{method}() on {ours.num_rows:,} files: frazil {frazil_s:.3f} s, "
        f"PyIceberg {pyiceberg_s:.3f} s ({pyiceberg_s / frazil_s:.1f}x)\n"
    )
    if not SMOKE and len(_RESULTS) == 2:
        lines = [
            "# Metadata tables benchmark",
            "",
            f"{_dt.date.today()}: plan bench table, 100 manifests x {ENTRIES:,} files; frazil "
            f"median of {ROUNDS}, PyIceberg one round.",
            "",
            "| method | frazil (s) | PyIceberg (s) | ratio |",
            "|---|---|---|---|",
        ]
        for m, r in _RESULTS.items():
            ratio = r["pyiceberg"] / r["frazil"]
            lines.append(f"| {m} | {r['frazil']:.3f} | {r['pyiceberg']:.3f} | {ratio:.1f}x |")
        RESULTS_MD.write_text("\n".join(lines) + "\n")
