"""One timed operation of the encryption benchmark (test_encryption_bench.py), in its own process
so that its CPU time and peak RSS are its own. Prints one JSON line: wall and CPU seconds of
the operation, the process's RSS when it started and its peak RSS (sampled from /proc while it
ran, and the process high-water mark).

    python encryption_bench_child.py append|scan <args JSON>

args: ``catalog`` (the SQL catalog's properties, with the KMS), ``table``, ``rows`` and
``seed``; ``props`` (the new table's properties) for ``append``. ``append`` creates the table
and appends the generated rows (generated before the timing); ``scan`` reads the table whole
with ``table.scan().to_arrow()`` and also prints a digest of the rows sorted by ``id``
(computed after the timing), so the parent can check both tables hold the same rows.
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import threading
import time
from typing import Any

import numpy as np
import pyarrow as pa

from frazil.catalog import load_catalog


def rows(n: int, seed: int) -> pa.Table:
    """``n`` rows: ``id`` int64 0..n-1, ``s`` one of 5000 short strings, ``v`` float64."""
    rng = np.random.default_rng(seed)
    words = np.array([f"word-{i:04d}" for i in range(5000)])
    return pa.table(
        {
            "id": np.arange(n, dtype=np.int64),
            "s": pa.array(words[rng.integers(0, len(words), n)]),
            "v": rng.standard_normal(n),
        }
    )


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _timed(fn: Any) -> tuple[Any, dict[str, float]]:
    peak = [_rss()]
    start_rss = peak[0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    out = fn()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    done.set()
    sampler.join()
    high_water = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return out, {
        "wall": wall,
        "cpu": cpu,
        "rss_start": start_rss,
        "rss_peak": max(peak[0], _rss(), high_water),
    }


def digest(table: pa.Table) -> str:
    """SHA-256 of the rows sorted by ``id``: each column's values (numbers as their bytes,
    strings as their lengths and bytes)."""
    h = hashlib.sha256()
    ordered = table.sort_by("id").combine_chunks()
    for name in ("id", "s", "v"):
        column = ordered.column(name).combine_chunks()
        assert column.null_count == 0
        if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
            h.update(column.to_numpy().tobytes())
            continue
        strings = column.cast(pa.large_string())
        offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)
        offsets = offsets[strings.offset : strings.offset + len(strings) + 1]
        h.update(np.diff(offsets).tobytes())
        data = strings.buffers()[2]
        h.update(data.slice(int(offsets[0]), int(offsets[-1] - offsets[0])).to_pybytes())
    return h.hexdigest()


def main() -> None:
    op, args = sys.argv[1], json.loads(sys.argv[2])
    cat = load_catalog("bench", **args["catalog"])
    out: dict[str, Any]
    if op == "append":
        data = rows(args["rows"], args["seed"])
        t = cat.create_table(args["table"], data.schema, properties=args["props"])
        _, out = _timed(lambda: t.append(data))
    elif op == "scan":
        t = cat.load_table(args["table"])
        table, timing = _timed(lambda: t.scan().to_arrow())
        out = {**timing, "rows": table.num_rows, "digest": digest(table)}
    else:
        raise SystemExit(f"unknown operation {op!r}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
