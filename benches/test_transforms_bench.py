"""Partition-transform throughput: frazil vs pyiceberg-core vs an mmh3 Python loop.

Every implementation runs in this one process on the same deterministic inputs (numpy
``default_rng`` with a fixed seed, generated once per session). Before any timing, each case
checks that frazil and pyiceberg-core give equal outputs on the whole input (and the mmh3 loop on
its prefix), so the table never compares different answers.

    .venv/bin/python -m pytest benches -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches -m benchmark -p no:cacheprovider

See benches/README.md; the comparison table is printed by benches/conftest.py.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import pyiceberg_core.transform as P

import frazil.transforms as T

SEED = 0x1CEB  # fixed: the inputs are the same on every run and every machine

# Full-size inputs (the sizes); smoke mode divides each by 1000.
FULL_SIZES = {
    "int64": 10_000_000,
    "int32": 10_000_000,
    "string": 1_000_000,
    "decimal(18,2)": 10_000_000,
    "timestamp": 10_000_000,
}
# The pure-Python loop is timed on a prefix of this many values (smoke: / 1000), then
# reported as values/s, i.e. normalized to the prefix length.
PY_PREFIX = 100_000

IMPLS = ("frazil", "pyiceberg-core", "mmh3-loop")


# --------------------------------------------------------------------------------------------
# Inputs


def _gen_int64(rng: np.random.Generator, n: int) -> pa.Array:
    # +-2^62 rather than the full range, so truncate[W] never floors below INT64_MIN.
    return pa.array(rng.integers(-(2**62), 2**62, n, dtype=np.int64))


def _gen_int32(rng: np.random.Generator, n: int) -> pa.Array:
    return pa.array(rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32, endpoint=True))


# Code points for the string input: mostly ASCII, with some 2-, 3- and 4-byte UTF-8 ones so
# truncate (which counts code points, not bytes) is exercised.
_ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-"
_WIDE = "éßñøЖλ中文日本語€😀🧊"


def _gen_string(rng: np.random.Generator, n: int) -> pa.Array:
    chars = list(_ASCII) + list(_WIDE)
    encoded = [c.encode("utf-8") for c in chars]
    table = np.zeros((len(chars), 4), dtype=np.uint8)
    width = np.array([len(e) for e in encoded], dtype=np.int64)
    for i, e in enumerate(encoded):
        table[i, : len(e)] = np.frombuffer(e, dtype=np.uint8)
    # 90% of the code points ASCII, 10% multi-byte.
    p = np.concatenate(
        [np.full(len(_ASCII), 0.9 / len(_ASCII)), np.full(len(_WIDE), 0.1 / len(_WIDE))]
    )
    lengths = rng.integers(0, 32, n, endpoint=True)  # code points per string, 0..32
    idx = rng.choice(len(chars), size=int(lengths.sum()), p=p)
    data = table[idx][np.arange(4) < width[idx][:, None]]  # row-major: keeps the order
    byte_ends = np.concatenate([[0], np.cumsum(width[idx])])
    char_ends = np.concatenate([[0], np.cumsum(lengths)])
    offsets = byte_ends[char_ends].astype(np.int32)
    arr = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    arr.validate(full=True)
    return arr


def _gen_decimal(rng: np.random.Generator, n: int) -> pa.Array:
    # decimal(18,2): unscaled values over the whole precision, as 16-byte little-endian
    # two's complement (low word, then the sign-extended high word).
    unscaled = rng.integers(-(10**18 - 1), 10**18 - 1, n, dtype=np.int64, endpoint=True)
    words = np.empty((n, 2), dtype=np.int64)
    words[:, 0] = unscaled
    words[:, 1] = unscaled >> 63
    return pa.Array.from_buffers(pa.decimal128(18, 2), n, [None, pa.py_buffer(words)])


def _gen_timestamp(rng: np.random.Generator, n: int) -> pa.Array:
    # Iceberg `timestamp` (microseconds, no zone), 1900-01-01 .. 2100-01-01: negative values
    # check that day/hour floor rather than truncate toward zero.
    lo, hi = -2_208_988_800_000_000, 4_102_444_800_000_000
    return pa.array(rng.integers(lo, hi, n, dtype=np.int64), type=pa.timestamp("us"))


_GENERATORS: dict[str, Callable[[np.random.Generator, int], pa.Array]] = {
    "int64": _gen_int64,
    "int32": _gen_int32,
    "string": _gen_string,
    "decimal(18,2)": _gen_decimal,
    "timestamp": _gen_timestamp,
}


class Inputs:
    """The session's inputs, each generated on first use (so ``-k`` selections stay cheap)."""

    def __init__(self, scale: int) -> None:
        self.scale = scale
        self._cache: dict[str, pa.Array] = {}

    def __getitem__(self, kind: str) -> pa.Array:
        if kind not in self._cache:
            n = FULL_SIZES[kind] // self.scale
            # One independent stream per input, so each input does not depend on which
            # others were generated before it.
            rng = np.random.default_rng([SEED, list(_GENERATORS).index(kind)])
            self._cache[kind] = _GENERATORS[kind](rng, n)
        return self._cache[kind]

    def prefix(self, kind: str) -> pa.Array:
        return self[kind].slice(0, PY_PREFIX // self.scale)


# --------------------------------------------------------------------------------------------
# The pure-Python reference: Iceberg's bucket, per value, with mmh3 (spec Appendix B).
# Timed end to end from the Arrow array to an Arrow array, like the two others.

_pack_long = struct.Struct("<q").pack


def _py_bucket_long(values: pa.Array, n: int) -> pa.Array:
    # int and long both hash as 8-byte little-endian longs.
    out = [
        None if v is None else (mmh3.hash(_pack_long(v)) & 0x7FFFFFFF) % n
        for v in values.to_pylist()
    ]
    return pa.array(out, type=pa.int32())


def _py_bucket_string(values: pa.Array, n: int) -> pa.Array:
    out = [
        None if v is None else (mmh3.hash(v.encode("utf-8")) & 0x7FFFFFFF) % n
        for v in values.to_pylist()
    ]
    return pa.array(out, type=pa.int32())


def _unscaled_bytes(u: int) -> bytes:
    # Minimal big-endian two's complement, like Java's BigInteger.toByteArray().
    return u.to_bytes(((u if u >= 0 else ~u).bit_length() + 8) // 8, "big", signed=True)


def _py_bucket_decimal(values: pa.Array, n: int) -> pa.Array:
    scale = values.type.scale
    out = [
        None
        if v is None
        else (mmh3.hash(_unscaled_bytes(int(v.scaleb(scale)))) & 0x7FFFFFFF) % n
        for v in values.to_pylist()
    ]
    return pa.array(out, type=pa.int32())


# --------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Case:
    id: str  # pytest id
    label: str  # table row
    input: str  # key of FULL_SIZES
    frazil: Callable[[pa.Array], pa.Array]
    pyiceberg_core: Callable[[pa.Array], pa.Array]
    mmh3_loop: Callable[[pa.Array], pa.Array] | None = None
    extra: bool = False  # not in the list; measured because it is cheap

    def impl(self, name: str) -> Callable[[pa.Array], pa.Array] | None:
        return {
            "frazil": self.frazil,
            "pyiceberg-core": self.pyiceberg_core,
            "mmh3-loop": self.mmh3_loop,
        }[name]


CASES = [
    Case(
        "bucket16-int64",
        "bucket[16] int64",
        "int64",
        lambda a: T.bucket(16, a),
        lambda a: P.bucket(a, 16),
        lambda a: _py_bucket_long(a, 16),
    ),
    Case(
        "bucket16-int32",
        "bucket[16] int32",
        "int32",
        lambda a: T.bucket(16, a),
        lambda a: P.bucket(a, 16),
        lambda a: _py_bucket_long(a, 16),
    ),
    Case(
        "bucket16-string",
        "bucket[16] string",
        "string",
        lambda a: T.bucket(16, a),
        lambda a: P.bucket(a, 16),
        lambda a: _py_bucket_string(a, 16),
    ),
    Case(
        "bucket16-decimal18_2",
        "bucket[16] decimal(18,2)",
        "decimal(18,2)",
        lambda a: T.bucket(16, a),
        lambda a: P.bucket(a, 16),
        lambda a: _py_bucket_decimal(a, 16),
    ),
    Case(
        "truncate1000-int64",
        "truncate[1000] int64",
        "int64",
        lambda a: T.truncate(1000, a),
        lambda a: P.truncate(a, 1000),
    ),
    Case(
        "truncate8-string",
        "truncate[8] string",
        "string",
        lambda a: T.truncate(8, a),
        lambda a: P.truncate(a, 8),
    ),
    Case("day-timestamp", "day timestamp[us]", "timestamp", T.day, P.day),
    Case("hour-timestamp", "hour timestamp[us]", "timestamp", T.hour, P.hour),
    Case("month-timestamp", "month timestamp[us]", "timestamp", T.month, P.month, extra=True),
    Case("year-timestamp", "year timestamp[us]", "timestamp", T.year, P.year, extra=True),
]

PAIRS = [
    # Marked per parameter so pytest-benchmark groups its own table by case.
    pytest.param(case, impl, id=f"{case.id}-{impl}", marks=pytest.mark.benchmark(group=case.id))
    for case in CASES
    for impl in IMPLS
    if case.impl(impl) is not None
]


# --------------------------------------------------------------------------------------------
# Correctness guard


def _first_differences(
    inp: pa.Array, left: pa.Array, right: pa.Array, limit: int = 5
) -> list[tuple[int, object, object, object]]:
    """(index, input, left, right) of the first ``limit`` positions where the outputs differ."""
    found: list[tuple[int, object, object, object]] = []
    step = 1 << 16
    for start in range(0, len(left), step):
        lc, rc = left.slice(start, step), right.slice(start, step)
        if lc.equals(rc):
            continue
        ic = inp.slice(start, step).to_pylist()
        for i, (a, b) in enumerate(zip(lc.to_pylist(), rc.to_pylist(), strict=True)):
            if a != b:
                found.append((start + i, ic[i], a, b))
                if len(found) >= limit:
                    return found
    return found


def _compare(name_l: str, left: pa.Array, name_r: str, right: pa.Array, inp: pa.Array) -> str:
    """'' when equal, else a precise description of the differences."""
    if len(left) != len(right):
        return f"{name_l} gave {len(left)} values, {name_r} {len(right)}"
    if right.type != left.type:
        # e.g. pyiceberg-core's day() gives date32, frazil's int32 (same day numbers).
        try:
            right = right.cast(left.type)
        except pa.ArrowInvalid as e:
            return f"{name_l} gave {left.type}, {name_r} {right.type} (not castable: {e})"
    if left.equals(right):
        return ""
    diffs = _first_differences(inp, left, right)
    if not diffs:  # equals() can disagree with per-value == on e.g. null layout
        return ""
    n_diff = len(left) - pc.sum(pc.fill_null(pc.equal(left, right), False)).as_py()
    lines = [f"{name_l} and {name_r} differ at {n_diff} of {len(left)} positions; first ones:"]
    lines += [
        f"  [{i}] input={x!r} {name_l}={a!r} {name_r}={b!r}" for i, x, a, b in diffs
    ]
    return "\n".join(lines)


@dataclass
class Agreement:
    pyiceberg_core: str  # "equal", "unsupported: ..." or "MISMATCH"
    mmh3_loop: str  # "equal (prefix)", "n/a" or "MISMATCH"
    details: str = ""

    @property
    def ok(self) -> bool:
        return "MISMATCH" not in (self.pyiceberg_core, self.mmh3_loop)


def _check_agreement(case: Case, inputs: Inputs) -> Agreement:
    inp = inputs[case.input]
    ours = case.frazil(inp)
    details = []
    try:
        theirs = case.pyiceberg_core(inp)
    except Exception as e:
        status = f"unsupported ({type(e).__name__}: {str(e).splitlines()[0][:120]})"
    else:
        diff = _compare("frazil", ours, "pyiceberg-core", theirs, inp)
        status = "MISMATCH" if diff else "equal"
        if diff:
            details.append(diff)
    loop_status = "n/a"
    if case.mmh3_loop is not None:
        pre = inputs.prefix(case.input)
        diff = _compare("frazil", ours.slice(0, len(pre)), "mmh3-loop", case.mmh3_loop(pre), pre)
        loop_status = "MISMATCH" if diff else "equal (prefix)"
        if diff:
            details.append(diff)
    return Agreement(status, loop_status, "\n".join(details))


@pytest.fixture(scope="session")
def inputs(bench_settings) -> Inputs:
    return Inputs(bench_settings.scale)


@pytest.fixture(scope="session")
def agreement(inputs, bench_results) -> Callable[[Case], Agreement]:
    cache: dict[str, Agreement] = {}

    def get(case: Case) -> Agreement:
        if case.id not in cache:
            cache[case.id] = a = _check_agreement(case, inputs)
            bench_results.record_agreement(case, a.pyiceberg_core, a.mmh3_loop, a.details)
        return cache[case.id]

    return get


# --------------------------------------------------------------------------------------------
# Tests (the agreement tests come first, so a mismatch is reported before any timing)


@pytest.mark.benchmark
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_outputs_agree(case: Case, agreement) -> None:
    a = agreement(case)
    if not a.ok:
        pytest.fail(f"{case.label}: outputs differ\n{a.details}", pytrace=False)
    if a.pyiceberg_core.startswith("unsupported"):
        pytest.skip(f"{case.label}: pyiceberg-core {a.pyiceberg_core}")


@pytest.mark.parametrize(("case", "impl"), PAIRS)
def test_throughput(
    case: Case, impl: str, inputs, agreement, bench_settings, bench_results, benchmark
) -> None:
    a = agreement(case)
    if not a.ok:
        bench_results.record_skip(case, impl, "mismatch")
        pytest.skip(f"{case.label}: outputs differ, not timed (see test_outputs_agree)")
    if impl == "pyiceberg-core" and a.pyiceberg_core.startswith("unsupported"):
        bench_results.record_skip(case, impl, "unsupported")
        pytest.skip(f"{case.label}: pyiceberg-core {a.pyiceberg_core}")

    fn = case.impl(impl)
    assert fn is not None
    arr = inputs.prefix(case.input) if impl == "mmh3-loop" else inputs[case.input]
    benchmark.extra_info.update(n=len(arr), impl=impl, case=case.label)
    benchmark.pedantic(
        fn,
        args=(arr,),
        rounds=bench_settings.rounds,
        warmup_rounds=bench_settings.warmup_rounds,
        iterations=1,
    )
    # One extra call: CPU time over wall time (> 1 means the call used several threads).
    c0, w0 = time.process_time(), time.perf_counter()
    fn(arr)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    if benchmark.stats is not None:  # None under --benchmark-disable
        bench_results.record_time(
            case, impl, n=len(arr), median=benchmark.stats.stats.median, cpu=cpu, wall=wall
        )
