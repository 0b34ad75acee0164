"""Row-level deletes applied on read: deletion vectors (frazil vs a pyroaring-based Python
equivalent) and equality deletes (a whole ``table.scan().to_arrow()``: frazil vs DuckDB's iceberg
extension and a pyarrow anti-join over the same files).

The input is the issue's: a DV of 1M positions (uniform without replacement, fixed seed) over a
data file of 10M rows, read as one 10M-row batch (two columns: int64 and float64). Cases:

- ``keep mask``: the batch's boolean keep-mask. frazil: ``dv.keep_mask(0, n)``. Python:
  pyroaring's positions as a numpy array, cleared in a ``numpy.ones`` mask, handed to pyarrow.
- ``filter``: the batch without its deleted rows (``RecordBatch.filter`` with either mask).
- ``keep indices + take``: frazil's ``keep_indices`` vs ``numpy.setdiff1d`` over the row range
  (PyIceberg's way for position deletes), each followed by ``take``.
- ``decode``: the ``deletion-vector-v1`` blob to a bitmap. Python: length, magic and CRC-32
  checked with ``zlib``, then ``pyroaring.BitMap64.deserialize``.
- ``build``: a bitmap from the positions (an Arrow array / a numpy array), as a writer does.

Every case checks that both sides give the same answer before any timing.

Equality deletes: a 10M-row table (10 Parquet files of 1M rows: ``id`` long, ``s`` string,
``v`` double, written by frazil) and one equality delete file of 1M rows (a fixed-seed sample
without replacement), written with pyarrow (Parquet, field ids) and committed through frazil's
``RowDelta``. Two tables share the data files: one deletes by ``id`` (one long key column), one
by ``(id, s)`` (a two-column key). Each reader scans the whole table; before timing, frazil's
rows must equal the pyarrow peer's, DuckDB's (when it finishes within its budget, see
``DUCKDB_BUDGET_S``) and the expected 9M. The pyarrow peer reads the data files and drops
the deleted keys with ``pyarrow.compute.is_in`` (one column) or a left anti join (two); it is
roughly what frazil's reader did before equality deletes were applied natively.

    .venv/bin/python -m pytest benches/test_deletes_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_deletes_bench.py -m benchmark

The table is printed at the end of the run (and a full run writes it to
benches/deletes_results.md).
"""

from __future__ import annotations

import os
import platform
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyroaring
import pytest
from bench_report import register_report, time_rounds
from pyroaring import BitMap, BitMap64

from frazil.manifest.deletes import DeletionVector

pytestmark = [pytest.mark.benchmark]

ROOT = Path(__file__).resolve().parent.parent

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
SCALE = 1000 if SMOKE else 1
ROWS = 10_000_000 // SCALE
DELETED = 1_000_000 // SCALE
ROUNDS = 1 if SMOKE else 7
EQ_ROUNDS = 1 if SMOKE else 3
EQ_FILES = 10
DUCKDB_BUDGET_S = 30 if SMOKE else 90
SEED = 0xD1D3

DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])


class Inputs:
    def __init__(self) -> None:
        rng = np.random.default_rng(SEED)
        self.positions = np.sort(rng.choice(ROWS, DELETED, replace=False)).astype(np.int64)
        self.batch = pa.record_batch(
            {
                "id": pa.array(np.arange(ROWS, dtype=np.int64)),
                "x": pa.array(rng.random(ROWS)),
            }
        )
        self.dv = DeletionVector.from_positions(pa.array(self.positions))
        self.blob = self.dv.to_puffin_blob()
        self.bitmap = BitMap(self.positions.astype(np.uint32))


@pytest.fixture(scope="module")
def inputs() -> Inputs:
    return Inputs()


# --------------------------------------------------------------------------------------------
# The pyroaring-based equivalents


def py_keep_mask(bm: BitMap, start: int, n: int) -> pa.BooleanArray:
    deleted = np.frombuffer(bm.to_array(), dtype=np.uint32).astype(np.int64)
    deleted = deleted[(deleted >= start) & (deleted < start + n)] - start
    mask = np.ones(n, dtype=bool)
    mask[deleted] = False
    return pa.array(mask)


def py_keep_indices(bm: BitMap, start: int, n: int) -> pa.Array:
    deleted = np.frombuffer(bm.to_array(), dtype=np.uint32).astype(np.int64)
    return pa.array(np.setdiff1d(np.arange(start, start + n), deleted, assume_unique=True) - start)


def py_decode(blob: bytes) -> BitMap64:
    (length,) = struct.unpack_from(">I", blob)
    if length != len(blob) - 8 or blob[4:8] != DV_MAGIC:
        raise ValueError("bad length or magic")
    body = memoryview(blob)[4:-4]
    if zlib.crc32(body) != struct.unpack(">I", blob[-4:])[0]:
        raise ValueError("CRC mismatch")
    return BitMap64.deserialize(bytes(body[4:]))


# fn(inputs) -> result, for frazil and for the Python equivalent; check(a, b) -> agree.
CASES: dict[str, tuple[Callable[[Inputs], Any], Callable[[Inputs], Any]]] = {
    "keep mask": (
        lambda i: i.dv.keep_mask(0, ROWS),
        lambda i: py_keep_mask(i.bitmap, 0, ROWS),
    ),
    "filter": (
        lambda i: i.batch.filter(i.dv.keep_mask(0, ROWS)),
        lambda i: i.batch.filter(py_keep_mask(i.bitmap, 0, ROWS)),
    ),
    "keep indices + take": (
        lambda i: i.batch.take(i.dv.keep_indices(0, ROWS)),
        lambda i: i.batch.take(py_keep_indices(i.bitmap, 0, ROWS)),
    ),
    "decode": (
        lambda i: DeletionVector.from_puffin_blob(i.blob).cardinality,
        lambda i: len(py_decode(i.blob)),
    ),
    "build": (
        lambda i: DeletionVector.from_positions(pa.array(i.positions)).cardinality,
        lambda i: len(BitMap(i.positions.astype(np.uint32))),
    ),
}

_TIMES: dict[str, dict[str, dict[str, float]]] = {}


@pytest.mark.parametrize("case", list(CASES))
def test_answers_agree(inputs: Inputs, case: str) -> None:
    ours, theirs = (fn(inputs) for fn in CASES[case])
    assert ours.equals(theirs) if hasattr(ours, "equals") else ours == theirs
    if case == "filter":
        assert ours.num_rows == ROWS - DELETED


@pytest.mark.parametrize("impl", ["frazil", "pyroaring + numpy"])
@pytest.mark.parametrize("case", list(CASES))
def test_throughput(inputs: Inputs, case: str, impl: str) -> None:
    fn = CASES[case][0 if impl == "frazil" else 1]
    if not SMOKE:
        fn(inputs)  # warm-up
    _TIMES.setdefault(case, {})[impl] = time_rounds(lambda: fn(inputs), ROUNDS)


# --------------------------------------------------------------------------------------------
# Equality deletes on read: frazil vs DuckDB's iceberg extension vs a pyarrow anti-join

EQ_KEYS = {"long key": ("id",), "(long, string) key": ("id", "s")}
_EQ_TIMES: dict[str, dict[str, dict[str, float]]] = {}
_EQ_SKIPS: dict[str, str] = {}


def _fid(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, nullable=True, metadata={b"PARQUET:field_id": str(fid).encode()})


class EqTables:
    def __init__(self, warehouse: Path) -> None:
        from frazil.catalog import load_catalog
        from frazil.manifest.content_file import DataFile, DataFileContent

        rng = np.random.default_rng(SEED + 1)
        catalog = load_catalog("eqbench", type="sql", warehouse=str(warehouse))
        catalog.create_namespace("db")
        per_file = ROWS // EQ_FILES
        ids = np.arange(ROWS, dtype=np.int64)
        strings = pa.array([f"s{i}" for i in range(1000)]).take(pa.array(ids % 1000))
        data = pa.table({"id": ids, "s": strings, "v": rng.random(ROWS)})
        first = catalog.create_table("db.long_key", data.schema)
        for i in range(EQ_FILES):
            first.append(data.slice(i * per_file, per_file))
        data_files = [t.file for t in first.scan().plan_files()]
        second = catalog.create_table("db.two_keys", data.schema)
        with second.transaction() as tx, tx.update_snapshot().fast_append() as a:
            for f in data_files:
                a.append_data_file(f)
        deleted = np.sort(rng.choice(ROWS, DELETED, replace=False))
        self.tables: dict[str, Any] = {}
        for case, table in zip(EQ_KEYS, (first, second), strict=True):
            cols = EQ_KEYS[case]
            keys = data.take(pa.array(deleted)).select(list(cols))
            schema = pa.schema([_fid("id", pa.int64(), 1), _fid("s", pa.large_string(), 2)])
            keys = keys.cast(pa.schema([schema.field(c) for c in cols]))
            path = str(warehouse / f"eq-{len(cols)}.parquet")
            pq.write_table(keys, path)
            delete_file = DataFile(
                path,
                "PARQUET",
                (),
                keys.num_rows,
                os.path.getsize(path),
                DataFileContent.EQUALITY_DELETES,
                equality_ids=tuple(range(1, len(cols) + 1)),
            )
            with table.transaction() as tx, tx.update_snapshot().row_delta() as rd:
                rd.add_delete_file(delete_file)
            self.tables[case] = table
        self.keys = {
            case: data.take(pa.array(deleted)).select(list(c)) for case, c in EQ_KEYS.items()
        }
        self.files = [f.file_path.removeprefix("file://").removeprefix("file:") for f in data_files]


@pytest.fixture(scope="module")
def eq_tables(tmp_path_factory: pytest.TempPathFactory) -> EqTables:
    return EqTables(tmp_path_factory.mktemp("eq-bench"))


def duckdb_with_iceberg() -> Any:
    """DuckDB with its iceberg extension loaded offline, as the interop tests load it."""
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    from duckdb_peer import duckdb_with_iceberg as connect

    return connect()


def _eq_readers(tables: EqTables, case: str) -> dict[str, Callable[[], pa.Table]]:
    table = tables.tables[case]
    location = table.metadata_location.removeprefix("file://").removeprefix("file:")
    cols = list(EQ_KEYS[case])
    keys = tables.keys[case]

    def duckdb_scan() -> pa.Table:
        con = duckdb_with_iceberg()
        # DuckDB 1.5.5 applies 1M equality deletes to 10M rows in more than minutes (here it did
        # not finish a count(*) in 2 minutes): interrupted past its budget, and reported so.
        timer = threading.Timer(DUCKDB_BUDGET_S, con.interrupt)
        timer.start()
        try:
            return con.execute(f"SELECT * FROM iceberg_scan('{location}')").to_arrow_table()
        finally:
            timer.cancel()

    def pyarrow_anti_join() -> pa.Table:
        data = pq.read_table(tables.files)
        if len(cols) == 1:
            return data.filter(pc.invert(pc.is_in(data.column(cols[0]), keys.column(0))))
        return data.join(keys, keys=cols, join_type="left anti")

    return {
        "frazil": lambda: table.scan().to_arrow(),
        "duckdb iceberg_scan": duckdb_scan,
        "pyarrow anti-join": pyarrow_anti_join,
    }


def _rows(t: pa.Table) -> pa.Table:
    t = t.select(["id", "s", "v"])
    return t.cast(pa.schema([("id", pa.int64()), ("s", pa.large_string()), ("v", pa.float64())]))


@pytest.mark.parametrize("case", list(EQ_KEYS))
def test_equality_readers_agree(eq_tables: EqTables, case: str) -> None:
    readers = _eq_readers(eq_tables, case)
    ours = _rows(readers["frazil"]()).sort_by("id")
    assert ours.num_rows == ROWS - DELETED
    deleted = set(eq_tables.keys[case].column("id").to_pylist())
    if SMOKE:  # the whole key set is small enough for a plain Python check
        assert not deleted & set(ours.column("id").to_pylist())
    assert ours.equals(_rows(readers["pyarrow anti-join"]()).sort_by("id"))
    start = time.perf_counter()
    try:
        theirs = _rows(readers["duckdb iceberg_scan"]()).sort_by("id")
    except Exception as e:  # reported in the table, not hidden
        took = time.perf_counter() - start
        _EQ_SKIPS[case] = f"duckdb stopped after {took:.0f} s: {type(e).__name__}: {e}"
        return
    assert ours.equals(theirs)


@pytest.mark.parametrize("impl", ["frazil", "duckdb iceberg_scan", "pyarrow anti-join"])
@pytest.mark.parametrize("case", list(EQ_KEYS))
def test_equality_throughput(eq_tables: EqTables, case: str, impl: str) -> None:
    if impl == "duckdb iceberg_scan" and case in _EQ_SKIPS:
        pytest.skip(_EQ_SKIPS[case])
    fn = _eq_readers(eq_tables, case)[impl]
    if not SMOKE:
        fn()  # warm-up: page cache, thread pools
    _EQ_TIMES.setdefault(case, {})[impl] = time_rounds(fn, EQ_ROUNDS)


def _eq_report() -> list[str]:
    if not _EQ_TIMES:
        return []
    impls = ["frazil", "duckdb iceberg_scan", "pyarrow anti-join"]
    lines = [
        "",
        f"- equality deletes: {DELETED:,} deleted keys over a {ROWS:,}-row table "
        f"({EQ_FILES} files), `table.scan().to_arrow()`; median of {EQ_ROUNDS} round(s); "
        f"{os.cpu_count()} logical CPUs (shared)",
        "",
        "| key | " + " | ".join(f"{i} ms" for i in impls) + " | frazil vs duckdb | "
        "frazil CPU/wall |",
        "|---|" + "---|" * (len(impls) + 2),
    ]
    for case, t in _EQ_TIMES.items():
        f, d = t.get("frazil"), t.get("duckdb iceberg_scan")
        cells = [case]
        cells += [
            f"{t[i]['median'] * 1e3:.0f}"
            if i in t
            else (f"> {DUCKDB_BUDGET_S * 1e3:.0f} (stopped)" if case in _EQ_SKIPS else "—")
            for i in impls
        ]
        cells.append(f"{d['median'] / f['median']:.2f}x" if f and d else "—")
        cells.append(f"{f['cpu'] / f['wall']:.2f}" if f and f["wall"] > 0 else "—")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"- {case}: {why}" for case, why in _EQ_SKIPS.items()]
    return lines


def _report() -> list[str]:
    lines = [
        f"- machine: {platform.machine()}, {os.cpu_count()} logical CPUs; Python "
        f"{platform.python_version()}, pyarrow {pa.__version__}, pyroaring "
        f"{pyroaring.__version__}, numpy {np.__version__}",
        f"- input: {DELETED:,} deleted positions over a {ROWS:,}-row batch (int64 + float64); "
        f"median of {ROUNDS} round(s)",
        "",
        "| case | frazil ms | pyroaring + numpy ms | speed-up | frazil CPU/wall |",
        "|---|---|---|---|---|",
    ]
    for case, t in _TIMES.items():
        f, p = t.get("frazil"), t.get("pyroaring + numpy")
        cells = [
            case,
            f"{f['median'] * 1e3:.2f}" if f else "—",
            f"{p['median'] * 1e3:.2f}" if p else "—",
            f"{p['median'] / f['median']:.1f}x" if f and p and f["median"] > 0 else "—",
            f"{f['cpu'] / f['wall']:.2f}" if f and f["wall"] > 0 else "—",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += _eq_report()
    mask = _TIMES.get("keep mask", {})
    if "frazil" in mask and "pyroaring + numpy" in mask:
        ok = mask["frazil"]["median"] < mask["pyroaring + numpy"]["median"]
        lines.append(
            "\n- target (issue 6): applying a 1M-position DV to a 10M-row batch faster than "
            f"a pyroaring-based Python equivalent: {'PASS' if ok else 'FAIL'}"
        )
    return lines


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    def title() -> str:
        head = "deletes: frazil vs pyroaring + numpy, DuckDB, pyarrow"
        smoke = " (SMOKE MODE: inputs / 1000, 1 round; numbers are meaningless)"
        return head + (smoke if SMOKE else "")

    register_report(
        request,
        "frazil-deletes-bench-report",
        title,
        lambda: _report() if _TIMES or _EQ_TIMES else [],
        results_md=None if SMOKE else Path(__file__).with_name("deletes_results.md"),
        heading="Deletes: frazil vs pyroaring + numpy, DuckDB's iceberg_scan, pyarrow",
        command=".venv/bin/python -m pytest benches/test_deletes_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
