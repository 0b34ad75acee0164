"""Scan planning: frazil's ``plan_files`` vs PyIceberg's ``DataScan.plan_files()``.

The table is the issue's: 100 manifests x 10,000 data files (smoke mode: 100 x 10), v2,
partitioned by ``day(ts)``, each file with value, null and NaN counts, column sizes and
lower/upper bounds on 8 columns; manifest ``m`` holds days ``19000 + 3m .. 19000 + 3m + 2``.
Manifests and the manifest list are encoded by frazil's writers, the metadata file is written
directly, and PyIceberg opens it with ``StaticTable.from_metadata``. Cases:

- (a) ``c1`` in a narrow range: only file metrics prune, every manifest is read;
- (b) one day of ``ts``: partition summaries keep one manifest;
- (c) no filter: every file is a task (1M).

frazil plans as a scan does by default (``include_column_stats=False``, the Java reference's
default: tasks carry no column stats, and with no filter and no equality deletes the stats maps
are not even decoded); case (c) is also timed with ``include_column_stats=True``, PyIceberg's
only mode, as its own row. Both planners must select the same data files before any timing.
frazil is timed over several rounds (median); PyIceberg, which takes minutes on the full table,
once per case.

    .venv/bin/python -m pytest benches/test_scan_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_scan_bench.py -m benchmark

The table is printed at the end and, on a full run, written to benches/scan_results.md.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from bench_report import register_report
from pyiceberg.expressions import parser as pyi_parser
from pyiceberg.table import StaticTable

import frazil.manifest as fm
from frazil import _native
from frazil.expressions import AlwaysTrue, parse
from frazil.io.local import LocalFileIO
from frazil.metadata import TableMetadata
from frazil.table.planning import PlannedFiles, plan_files
from frazil.table.update.snapshot import MANIFEST_FILE_SCHEMA

pytestmark = [pytest.mark.benchmark]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
N_MANIFESTS = 100
ENTRIES = 10 if SMOKE else 10_000
ROUNDS = 1 if SMOKE else 5
SEED = 0x5CA7
N_COLUMNS = 8
SNAPSHOT_ID = 1
DAY0 = 19_000
RESULTS_MD = Path(__file__).with_name("scan_results.md")

FIELDS = [
    {"id": i, "name": f"c{i}", "required": False, "type": "long" if i % 2 else "double"}
    for i in range(1, N_COLUMNS + 1)
] + [{"id": 9, "name": "ts", "required": False, "type": "timestamptz"}]
SCHEMA = {"type": "struct", "schema-id": 0, "fields": FIELDS}
SPEC_FIELDS = [{"source-id": 9, "field-id": 1000, "name": "ts_day", "transform": "day"}]

_DAY = _dt.date(1970, 1, 1) + _dt.timedelta(days=DAY0 + 3 * 5 + 1)  # inside manifest 5
# (a): c1 bounds are uniform lower in [-2^40, 2^40) plus a width below 2^20; this range keeps
# about 0.1% of the files.
_LO = 1 << 30
CASES = {
    "a": (
        "(a) c1 range, metrics only (all manifests read)",
        f"c1 >= {_LO} AND c1 <= {_LO + (1 << 30)}",
    ),
    "b": (
        "(b) one day, summaries keep 1 manifest",
        f"ts >= '{_DAY}T00:00:00+00:00' AND ts < '{_DAY + _dt.timedelta(days=1)}T00:00:00+00:00'",
    ),
    "c": ("(c) no filter (every file a task)", None),
}
TARGETS = {"a": 1.0, "b": 0.050, "c": 2.0}
MIN_SPEEDUP = 50.0


def _int_map(keys: np.ndarray, values: np.ndarray, n: int) -> pa.MapArray:
    offsets = pa.array(np.arange(0, N_COLUMNS * (n + 1), N_COLUMNS, dtype=np.int32))
    return pa.MapArray.from_arrays(offsets, pa.array(keys, pa.int32()), pa.array(values))


def _bounds(raw: list[bytes], n: int) -> pa.MapArray:
    offsets = pa.array(np.arange(0, N_COLUMNS * (n + 1), N_COLUMNS, dtype=np.int32))
    keys = pa.array(np.tile(np.arange(1, N_COLUMNS + 1, dtype=np.int32), n))
    return pa.MapArray.from_arrays(offsets, keys, pa.array(raw, pa.binary()))


def _encode(lower: np.ndarray, upper: np.ndarray, n: int) -> tuple[list[bytes], list[bytes]]:
    """Bounds per column type: longs as int64, doubles as float64 (Appendix D)."""
    lo = lower.reshape(n, N_COLUMNS).copy()
    up = upper.reshape(n, N_COLUMNS).copy()
    lo_b = lo.astype("<i8").tobytes()
    up_b = up.astype("<i8").tobytes()
    lo_f = lo.astype("<f8").tobytes()
    up_f = up.astype("<f8").tobytes()
    out_lo, out_up = [], []
    for r in range(n):
        for c in range(N_COLUMNS):
            k = (r * N_COLUMNS + c) * 8
            odd = (c + 1) % 2 == 1  # field ids 1, 3, ... are longs
            out_lo.append((lo_b if odd else lo_f)[k : k + 8])
            out_up.append((up_b if odd else up_f)[k : k + 8])
    return out_lo, out_up


def _entries(rng: np.random.Generator, m: int, n: int) -> pa.Table:
    keys = np.tile(np.arange(1, N_COLUMNS + 1, dtype=np.int32), n)
    counts = rng.integers(1, 1_000_000, n)
    lower = rng.integers(-(2**40), 2**40, n * N_COLUMNS)
    upper = lower + rng.integers(0, 2**20, n * N_COLUMNS)
    lo, up = _encode(lower, upper, n)
    day = pa.array((DAY0 + 3 * m + rng.integers(0, 3, n)).astype(np.int32)).cast(pa.date32())
    partition = pa.StructArray.from_arrays(
        [day], fields=[pa.field("ts_day", pa.date32(), metadata={"PARQUET:field_id": "1000"})]
    )
    paths = pa.array(
        [f"s3://bucket/warehouse/db/events/data/{m:03d}-{i:06d}-0001.parquet" for i in range(n)]
    )
    data_file = pa.StructArray.from_arrays(
        [
            pa.array(np.zeros(n, np.int32)),
            paths,
            pa.array(["PARQUET"] * n),
            partition,
            pa.array(counts),
            pa.array(counts * 37),
            _int_map(keys, rng.integers(0, 2**30, n * N_COLUMNS), n),
            _int_map(keys, np.repeat(counts, N_COLUMNS), n),
            _int_map(keys, np.zeros(n * N_COLUMNS, np.int64), n),
            _int_map(keys, np.zeros(n * N_COLUMNS, np.int64), n),
            _bounds(lo, n),
            _bounds(up, n),
            pa.array([[4]] * n, pa.list_(pa.int64())),
            pa.array(np.zeros(n, np.int32)),
        ],
        names=[
            "content",
            "file_path",
            "file_format",
            "partition",
            "record_count",
            "file_size_in_bytes",
            "column_sizes",
            "value_counts",
            "null_value_counts",
            "nan_value_counts",
            "lower_bounds",
            "upper_bounds",
            "split_offsets",
            "sort_order_id",
        ],
    )
    return pa.table(
        {
            "status": pa.array(np.ones(n, np.int32)),
            "snapshot_id": pa.array([None] * n, pa.int64()),
            "sequence_number": pa.array([None] * n, pa.int64()),
            "file_sequence_number": pa.array([None] * n, pa.int64()),
            "data_file": data_file,
        }
    )


@pytest.fixture(scope="module")
def table_location(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_table(tmp_path_factory.mktemp("scan_bench"))


def write_table(root: Path) -> str:
    """Writes the benchmark table under ``root``; returns its metadata file's path."""
    rng = np.random.default_rng(SEED)
    rows = []
    for m in range(N_MANIFESTS):
        entries = _entries(rng, m, ENTRIES)
        body = fm.write_manifest(
            entries,
            format_version=2,
            schema=json.dumps(SCHEMA),
            partition_spec=json.dumps(SPEC_FIELDS),
            schema_id=0,
            partition_spec_id=0,
        )
        path = root / f"manifest-{m:03d}.avro"
        path.write_bytes(body)
        s = fm.summarize_manifest(entries)
        rows.append(
            {
                **s,
                "manifest_path": str(path),
                "manifest_length": len(body),
                "partition_spec_id": 0,
                "content": 0,
                "sequence_number": 1,
                "min_sequence_number": 1,
                "added_snapshot_id": SNAPSHOT_ID,
                "key_metadata": None,
                "first_row_id": None,
            }
        )
    list_path = root / "snap-1.avro"
    list_path.write_bytes(
        fm.write_manifest_list(
            pa.Table.from_pylist(rows, schema=MANIFEST_FILE_SCHEMA),
            format_version=2,
            snapshot_id=SNAPSHOT_ID,
            sequence_number=1,
        )
    )
    metadata = {
        "format-version": 2,
        "table-uuid": "5e5b5f2a-6d8c-4c1e-9a55-3b1d5e0c0001",
        "location": str(root),
        "last-sequence-number": 1,
        "last-updated-ms": 1_700_000_000_000,
        "last-column-id": 9,
        "current-schema-id": 0,
        "schemas": [SCHEMA],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": SPEC_FIELDS}],
        "last-partition-id": 1000,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": SNAPSHOT_ID,
        "refs": {"main": {"snapshot-id": SNAPSHOT_ID, "type": "branch"}},
        "snapshots": [
            {
                "snapshot-id": SNAPSHOT_ID,
                "sequence-number": 1,
                "timestamp-ms": 1_700_000_000_000,
                "manifest-list": str(list_path),
                "summary": {"operation": "append"},
                "schema-id": 0,
            }
        ],
        "snapshot-log": [],
        "metadata-log": [],
    }
    meta_path = root / "v1.metadata.json"
    meta_path.write_text(json.dumps(metadata))
    return str(meta_path)


def _frazil(location: str, expr: str | None, stats: bool = False) -> PlannedFiles:
    io = LocalFileIO()
    meta = TableMetadata.from_json(io.read(location), location)
    return plan_files(
        io,
        meta,
        meta.current_snapshot(),
        parse(expr) if expr else AlwaysTrue(),
        include_column_stats=stats,
    )


def _pyiceberg(location: str, expr: str | None) -> list[Any]:
    table = StaticTable.from_metadata(location)
    return list(table.scan(row_filter=pyi_parser.parse(expr) if expr else "True").plan_files())


def _frazil_paths(p: PlannedFiles) -> set[str]:
    return {
        path
        for m in p.data
        for path in m.entries.column("data_file").combine_chunks().field("file_path").to_pylist()
    }


_TIMES: dict[str, dict[str, Any]] = {}


def _time(fn: Callable[[], Any], rounds: int) -> tuple[float, float, Any]:
    walls, cpus, out = [], [], None
    for _ in range(rounds):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), sum(cpus) / sum(walls), out


@pytest.mark.parametrize("case", list(CASES))
def test_plan_files(table_location: str, case: str) -> None:
    label, expr = CASES[case]
    if not SMOKE:
        assert _native.build_profile == "release", "benchmarks need a release build"
        _frazil(table_location, expr)  # warm-up (page cache, imports)
    f_median, f_cpu, planned = _time(lambda: _frazil(table_location, expr), ROUNDS)
    p_median, p_cpu, tasks = _time(lambda: _pyiceberg(table_location, expr), 1)
    ours = _frazil_paths(planned)
    theirs = {t.file.file_path for t in tasks}
    assert ours == theirs, f"{label}: planners disagree ({len(ours)} vs {len(theirs)} files)"
    if case == "b":
        assert len(planned.data) == 1
    _TIMES[case] = {
        "label": label,
        "tasks": len(ours),
        "frazil": f_median,
        "frazil_cpu": f_cpu,
        "pyiceberg": p_median,
        "pyiceberg_cpu": p_cpu,
    }
    if case == "c":
        s_median, s_cpu, with_stats = _time(lambda: _frazil(table_location, expr, True), ROUNDS)
        assert _frazil_paths(with_stats) == theirs
        df = with_stats.data[0].entries.column("data_file").type
        assert df.get_field_index("lower_bounds") >= 0
        _TIMES["c_stats"] = {
            **_TIMES["c"],
            "label": "(c) no filter, include_column_stats=True",
            "frazil": s_median,
            "frazil_cpu": s_cpu,
        }


def _report() -> list[str]:
    n = N_MANIFESTS * ENTRIES
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs; "
        f"Python {platform.python_version()}",
        f"- table: {N_MANIFESTS} manifests x {ENTRIES:,} data files = {n:,} files, v2, "
        f"day-partitioned, stats on {N_COLUMNS} columns, deflate; local files (page cache)",
        f"- timing: whole `plan_files` call from the metadata file, median of {ROUNDS} round(s) "
        "after a warm-up for frazil (all cores), one round for PyIceberg",
        "",
        "| case | tasks | frazil s | frazil CPU/wall | pyiceberg s | speed-up | target | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case, t in _TIMES.items():
        speedup = t["pyiceberg"] / t["frazil"]
        target = TARGETS[case[0]]
        met = t["frazil"] < target and speedup >= MIN_SPEEDUP
        lines.append(
            f"| {t['label']} | {t['tasks']:,} | {t['frazil']:.3f} | {t['frazil_cpu']:.2f} | "
            f"{t['pyiceberg']:.2f} | {speedup:.0f}x | < {target:g} s, >= 50x | "
            f"{'yes' if met else 'NO'} |"
        )
    return lines


TITLE = "scan planning: frazil vs pyiceberg"
SMOKE_NOTE = " (SMOKE MODE: 100 x 10 files, 1 round; numbers are meaningless)"


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    register_report(
        request,
        "frazil-scan-bench-report",
        lambda: TITLE + (SMOKE_NOTE if SMOKE else ""),
        lambda: _report() if _TIMES else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Scan planning: frazil vs PyIceberg",
        command=".venv/bin/python -m pytest benches/test_scan_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
