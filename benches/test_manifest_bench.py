"""Manifest decoding throughput: frazil vs fastavro vs PyIceberg's manifest reader.

The input is the issue's: 100 manifests x 10,000 entries (1M entries; smoke mode: 100 x 10),
format v2, partitioned by day, each data file with column sizes, value counts, null counts,
NaN counts and lower/upper bounds on 8 columns, deflate-compressed like Java's default. The
manifests are generated from seeded numpy arrays and encoded by frazil's writer (whose output
the Java reference reads back, see tests/interop/test_manifest_java.py), then written to files.
Every implementation reads the same files in this one process; before any timing the readers
must agree on every entry's path, record count, partition and bounds.

    .venv/bin/python -m pytest benches/test_manifest_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_manifest_bench.py -m benchmark

The comparison table is printed at the end and, on a full run, written to
benches/manifest_results.md.
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from bench_report import register_report, time_rounds

import frazil.manifest as fm

pytestmark = [pytest.mark.benchmark]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
N_MANIFESTS = 100
ENTRIES = 10 if SMOKE else 10_000
ROUNDS = 1 if SMOKE else 5  # frazil; the peers take about a minute per run, so one round
SEED = 0x1CEB
N_COLUMNS = 8
RESULTS_MD = Path(__file__).with_name("manifest_results.md")

SCHEMA_JSON = (
    '{"type":"struct","schema-id":0,"fields":['
    + ",".join(
        f'{{"id":{i},"name":"c{i}","required":false,"type":"{"long" if i % 2 else "double"}"}}'
        for i in range(1, N_COLUMNS + 1)
    )
    + ',{"id":9,"name":"ts","required":false,"type":"timestamptz"}]}'
)
SPEC_JSON = '[{"source-id":9,"field-id":1000,"name":"ts_day","transform":"day"}]'


def _int_map(keys: np.ndarray, values: np.ndarray, n: int) -> pa.MapArray:
    offsets = pa.array(np.arange(0, N_COLUMNS * (n + 1), N_COLUMNS, dtype=np.int32))
    return pa.MapArray.from_arrays(offsets, pa.array(keys, pa.int32()), pa.array(values))


def _bounds(raw: np.ndarray, n: int) -> pa.MapArray:
    fixed = pa.Array.from_buffers(pa.binary(8), len(raw), [None, pa.py_buffer(raw.tobytes())])
    offsets = pa.array(np.arange(0, N_COLUMNS * (n + 1), N_COLUMNS, dtype=np.int32))
    keys = pa.array(np.tile(np.arange(1, N_COLUMNS + 1, dtype=np.int32), n))
    return pa.MapArray.from_arrays(offsets, keys, fixed.cast(pa.binary()))


def _entries(rng: np.random.Generator, m: int, n: int) -> pa.Table:
    keys = np.tile(np.arange(1, N_COLUMNS + 1, dtype=np.int32), n)
    counts = rng.integers(1, 1_000_000, n)
    lower = rng.integers(-(2**40), 2**40, n * N_COLUMNS)
    upper = lower + rng.integers(0, 2**20, n * N_COLUMNS)
    day = pa.array(rng.integers(19_000, 19_365, n).astype(np.int32)).cast(pa.date32())
    partition = pa.StructArray.from_arrays(
        [day], fields=[pa.field("ts_day", pa.date32(), metadata={"PARQUET:field_id": "1000"})]
    )
    paths = pa.array(
        [
            f"s3://bucket/warehouse/db/events/data/ts_day=x/{m:03d}-{i:06d}-0001.parquet"
            for i in range(n)
        ]
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
            _int_map(keys, rng.integers(0, 100, n * N_COLUMNS), n),
            _int_map(keys, np.zeros(n * N_COLUMNS, np.int64), n),
            _bounds(lower, n),
            _bounds(upper, n),
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
def manifests(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, dict[str, Any]]]:
    rng = np.random.default_rng(SEED)
    root = tmp_path_factory.mktemp("manifests")
    out = []
    for m in range(N_MANIFESTS):
        data = fm.write_manifest(
            _entries(rng, m, ENTRIES),
            format_version=2,
            schema=SCHEMA_JSON,
            partition_spec=SPEC_JSON,
            schema_id=0,
            partition_spec_id=0,
            codec="deflate",
        )
        path = root / f"manifest-{m:03d}.avro"
        path.write_bytes(data)
        mf = {
            "manifest_path": str(path),
            "manifest_length": len(data),
            "added_snapshot_id": 1000 + m,
            "sequence_number": 7,
            "first_row_id": None,
        }
        out.append((path, mf))
    return out


# --------------------------------------------------------------------------------------------
# the readers


def _frazil(files: list[tuple[Path, dict[str, Any]]]) -> list[pa.Table]:
    return [fm.read_manifest(p.read_bytes(), mf) for p, mf in files]


def _frazil_threads(files: list[tuple[Path, dict[str, Any]]], threads: int) -> list[pa.Table]:
    datas = [p.read_bytes() for p, _ in files]
    return fm.read_manifests(datas, [mf for _, mf in files], threads=threads)


PLANNING_COLUMNS = [
    "data_file.file_path",
    "data_file.file_format",
    "data_file.partition",
    "data_file.file_size_in_bytes",
]


def _frazil_projected(files: list[tuple[Path, dict[str, Any]]]) -> list[pa.Table]:
    return [fm.read_manifest(p.read_bytes(), mf, columns=PLANNING_COLUMNS) for p, mf in files]


# every column but the column stats maps: what scan planning decodes by default
NO_STATS_COLUMNS = [
    "status",
    "snapshot_id",
    "sequence_number",
    "file_sequence_number",
] + [
    f"data_file.{name}"
    for name in (
        "content",
        "file_path",
        "file_format",
        "partition",
        "record_count",
        "file_size_in_bytes",
        "key_metadata",
        "split_offsets",
        "equality_ids",
        "sort_order_id",
        "first_row_id",
        "referenced_data_file",
        "content_offset",
        "content_size_in_bytes",
    )
]


def _frazil_no_stats(files: list[tuple[Path, dict[str, Any]]]) -> list[pa.Table]:
    return [fm.read_manifest(p.read_bytes(), mf, columns=NO_STATS_COLUMNS) for p, mf in files]


def _frazil_split(files: list[tuple[Path, dict[str, Any]]]) -> list[pa.Table]:
    """One manifest at a time, its blocks split over 2 threads."""
    return [fm.read_manifests([p.read_bytes()], [mf], threads=2)[0] for p, mf in files]


def _fastavro(files: list[tuple[Path, dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    return [list(fastavro.reader(io.BytesIO(p.read_bytes()))) for p, _ in files]


def _pyiceberg(files: list[tuple[Path, dict[str, Any]]]) -> list[list[Any]]:
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import ManifestContent, ManifestFile

    file_io = PyArrowFileIO()
    out = []
    for _, mf in files:
        manifest = ManifestFile.from_args(
            manifest_path=mf["manifest_path"],
            manifest_length=mf["manifest_length"],
            partition_spec_id=0,
            content=ManifestContent.DATA,
            sequence_number=mf["sequence_number"],
            min_sequence_number=mf["sequence_number"],
            added_snapshot_id=mf["added_snapshot_id"],
        )
        out.append(manifest.fetch_manifest_entry(file_io, discard_deleted=False))
    return out


def _summary_of_frazil(tables: list[pa.Table]) -> list[tuple[Any, ...]]:
    out = []
    for t in tables:
        df = t.column("data_file").combine_chunks()
        days = df.field("partition").field("ts_day").cast(pa.int32()).to_pylist()
        lower = df.field("lower_bounds").to_pylist()
        for path, count, day, lo, seq in zip(
            df.field("file_path").to_pylist(),
            df.field("record_count").to_pylist(),
            days,
            lower,
            t.column("sequence_number").to_pylist(),
            strict=True,
        ):
            out.append((path, count, day, dict(lo)[3], seq))
    return out


def _summary_of_fastavro(manifests: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    out = []
    for entries in manifests:
        for e in entries:
            df = e["data_file"]
            day = (df["partition"]["ts_day"] - _dt.date(1970, 1, 1)).days
            lo = {kv["key"]: kv["value"] for kv in df["lower_bounds"]}[3]
            out.append((df["file_path"], df["record_count"], day, lo, 7))
    return out


def _summary_of_pyiceberg(manifests: list[list[Any]]) -> list[tuple[Any, ...]]:
    out = []
    for entries in manifests:
        for e in entries:
            df = e.data_file
            day = df.partition[0]
            if isinstance(day, _dt.date):
                day = (day - _dt.date(1970, 1, 1)).days
            out.append((df.file_path, df.record_count, day, df.lower_bounds[3], e.sequence_number))
    return out


# --------------------------------------------------------------------------------------------
# timing and the table

_TIMES: dict[str, dict[str, float]] = {}
_NOTES: list[str] = []


def test_readers_agree(manifests: list[tuple[Path, dict[str, Any]]]) -> None:
    small = manifests[:3]
    expected = _summary_of_fastavro(_fastavro(small))
    assert len(expected) == 3 * ENTRIES
    assert _summary_of_frazil(_frazil(small)) == expected
    assert _summary_of_frazil(_frazil_threads(small, 2)) == expected
    assert [t.to_pylist() for t in _frazil_split(small)] == [t.to_pylist() for t in _frazil(small)]
    no_stats = _frazil_no_stats(small)[0].column("data_file").type
    assert no_stats.get_field_index("lower_bounds") < 0
    assert no_stats.get_field_index("split_offsets") >= 0
    assert _summary_of_pyiceberg(_pyiceberg(small)) == expected


CASES: dict[str, tuple[Callable[[list[tuple[Path, dict[str, Any]]]], Any], int]] = {
    "frazil (1 thread)": (_frazil, ROUNDS),
    "frazil (2 threads)": (lambda files: _frazil_threads(files, 2), ROUNDS),
    "frazil (1 manifest at a time, blocks over 2 threads)": (_frazil_split, ROUNDS),
    "frazil (1 thread, all but column stats)": (_frazil_no_stats, ROUNDS),
    "frazil (1 thread, planning columns only)": (_frazil_projected, ROUNDS),
    "fastavro": (_fastavro, 1),
    "pyiceberg 0.12": (_pyiceberg, 1),
}


@pytest.mark.parametrize("impl", list(CASES))
def test_decode_throughput(manifests: list[tuple[Path, dict[str, Any]]], impl: str) -> None:
    fn, rounds = CASES[impl]
    if not SMOKE:
        fn(manifests[:2])  # warm-up
    _TIMES[impl] = time_rounds(lambda: fn(manifests), rounds)


def _report() -> list[str]:
    n = N_MANIFESTS * ENTRIES
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs; "
        f"Python {platform.python_version()}, fastavro {fastavro.__version__}",
        f"- input: {N_MANIFESTS} manifests x {ENTRIES:,} entries = {n:,} entries, v2, deflate; "
        "files read from the page cache inside the timed loop by every reader",
        "- timing: median wall time of the rounds (frazil: "
        f"{ROUNDS} round(s) after a warm-up; peers: one round), CPU/wall over all rounds",
        "",
        "| reader | seconds for all entries | M entries/s | vs fastavro | vs pyiceberg "
        "| CPU/wall |",
        "|---|---|---|---|---|---|",
    ]
    base_fa = _TIMES.get("fastavro", {}).get("median")
    base_pi = _TIMES.get("pyiceberg 0.12", {}).get("median")
    for impl, t in _TIMES.items():
        s = t["median"]
        lines.append(
            f"| {impl} | {s:.3f} | {n / s / 1e6:.2f} | "
            + (f"{base_fa / s:.1f}x" if base_fa else "—")
            + " | "
            + (f"{base_pi / s:.1f}x" if base_pi else "—")
            + f" | {t['cpu'] / t['wall']:.2f} |"
        )
    return lines


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    def title() -> str:
        head = "manifest decoding: frazil vs fastavro vs pyiceberg"
        smoke = " (SMOKE MODE: 100 x 10 entries, 1 round; numbers are meaningless)"
        return head + (smoke if SMOKE else "")

    register_report(
        request,
        "frazil-manifest-bench-report",
        title,
        lambda: _report() if _TIMES else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Manifest decoding: frazil vs fastavro vs PyIceberg",
        command=".venv/bin/python -m pytest benches/test_manifest_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
