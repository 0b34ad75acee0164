"""Deletion vectors applied to a data file's rows: frazil vs a pyroaring-based Python equivalent.

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

    .venv/bin/python -m pytest benches/test_deletes_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_deletes_bench.py -m benchmark

The table is printed at the end of the run.
"""

from __future__ import annotations

import os
import platform
import struct
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyroaring
import pytest
from bench_report import register_report, time_rounds
from pyroaring import BitMap, BitMap64

from frazil.deletes import DeletionVector

pytestmark = [pytest.mark.benchmark]

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
SCALE = 1000 if SMOKE else 1
ROWS = 10_000_000 // SCALE
DELETED = 1_000_000 // SCALE
ROUNDS = 1 if SMOKE else 7
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
        head = "deletion vectors: frazil vs pyroaring + numpy"
        smoke = " (SMOKE MODE: inputs / 1000, 1 round; numbers are meaningless)"
        return head + (smoke if SMOKE else "")

    register_report(
        request, "frazil-deletes-bench-report", title, lambda: _report() if _TIMES else []
    )
