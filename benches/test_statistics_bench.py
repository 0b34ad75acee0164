"""NDV sketch throughput: frazil's native theta sketch over Arrow columns vs the ``datasketches``
package fed value by value from Python (its only way in), on the same deterministic inputs.
Before timing, both must produce the same serialized sketch (the values whose Iceberg single-value
serialization DataSketches' own ``update`` reproduces: strings as UTF-8, longs as 8 LE bytes).

    .venv/bin/python -m pytest benches/test_statistics_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 ... (inputs / 1000, one round)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from frazil import _native

ds = pytest.importorskip("datasketches")

pytestmark = [pytest.mark.benchmark]

SEED = 0x57A7
FULL = {"string": 1_000_000, "long": 10_000_000}
PY_PREFIX = 200_000  # the Python loop runs on this prefix (smoke: / 1000)


def _input(kind: str, n: int) -> pa.Array:
    rng = np.random.default_rng(SEED)
    ints = rng.integers(0, n // 2 + 1, n, dtype=np.int64)
    if kind == "long":
        return pa.array(ints)
    return pa.array([f"user-{v}" for v in ints.tolist()])


def _native_sketch(values: pa.Array, kind: str) -> bytes:
    s = _native.ThetaSketch()
    s.update(values, f'"{kind}"')
    return s.to_bytes()


def _python_sketch(values: list[Any]) -> bytes:
    s = ds.update_theta_sketch()
    for v in values:
        s.update(v)
    return s.compact(True).serialize()


@pytest.mark.parametrize("kind", ["string", "long"])
def test_native_theta_sketch(benchmark: Any, bench_settings: Any, kind: str) -> None:
    n = FULL[kind] // bench_settings.scale
    values = _input(kind, n)
    prefix = values.slice(0, PY_PREFIX // bench_settings.scale)
    assert _native_sketch(prefix, kind) == _python_sketch(prefix.to_pylist())
    benchmark.extra_info["values"] = n
    benchmark.pedantic(
        _native_sketch,
        args=(values, kind),
        rounds=bench_settings.rounds,
        warmup_rounds=bench_settings.warmup_rounds,
    )


@pytest.mark.parametrize("kind", ["string", "long"])
def test_datasketches_python_loop(benchmark: Any, bench_settings: Any, kind: str) -> None:
    n = PY_PREFIX // bench_settings.scale
    values = _input(kind, FULL[kind] // bench_settings.scale).slice(0, n).to_pylist()
    benchmark.extra_info["values"] = n
    benchmark.pedantic(
        _python_sketch,
        args=(values,),
        rounds=bench_settings.rounds,
        warmup_rounds=bench_settings.warmup_rounds,
    )
