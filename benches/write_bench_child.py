"""One writer of the append benchmark (test_write_bench.py), in its own process so that its
CPU time and peak RSS are its own. Prints one JSON line: wall and CPU seconds of the write and
peak RSS (sampled from /proc while writing, and the process high-water mark).

    python write_bench_child.py <writer> <case> <rows> <args JSON>

writer: frazil | pyiceberg | duckdb | floor | stream (frazil appending a generated stream);
case: none | day | day_bucket. The rows are generated (seeded) before the timing, except for
``stream``, whose batches are generated while it writes.
"""

from __future__ import annotations

import itertools
import json
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DAYS = 30
BUCKETS = 16
START_US = 1_704_067_200_000_000  # 2024-01-01
NAMES = ["id", "ts", "a", "b", "score", "k", "tag", "country", "ratio", "flag", "email"]
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us")),
        ("a", pa.int64()),
        ("b", pa.int64()),
        ("score", pa.float64()),
        ("k", pa.int32()),
        ("tag", pa.string()),
        ("country", pa.string()),
        ("ratio", pa.float64()),
        ("flag", pa.bool_()),
        ("email", pa.string()),
    ]
)
# The Parquet settings of every writer's files (frazil's defaults, the Java reference's).
PARQUET = {
    "compression": "zstd",
    "data_page_size": 1024 * 1024,
    "max_rows_per_page": 20_000,
    "dictionary_pagesize_limit": 2 * 1024 * 1024,
    "row_group_size": 1_048_576,
}


def batch(rng: np.random.Generator, ids: np.ndarray) -> pa.RecordBatch:
    """Rows for ``ids``: a long id, a timestamp over 30 days, two longs, a double, an int, two
    low-cardinality strings, a double, a bool and a string of 100,000 distinct values."""
    n = len(ids)
    tags = pa.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    countries = pa.array([f"country-{i:02d}" for i in range(40)])
    emails = _emails()
    return pa.record_batch(
        [
            pa.array(ids, pa.int64()),
            pa.array(START_US + rng.integers(0, DAYS * 86_400_000_000, n), pa.timestamp("us")),
            pa.array(rng.integers(-(10**9), 10**9, n), pa.int64()),
            pa.array(rng.integers(0, 10**6, n), pa.int64()),
            pa.array(rng.random(n)),
            pa.array(rng.integers(0, 100, n).astype(np.int32)),
            tags.take(pa.array(rng.integers(0, len(tags), n))),
            countries.take(pa.array(rng.integers(0, len(countries), n))),
            pa.array(rng.random(n) * 100),
            pa.array(rng.integers(0, 2, n).astype(bool)),
            emails.take(pa.array(rng.integers(0, len(emails), n))),
        ],
        schema=SCHEMA,
    )


_EMAILS: list[pa.Array] = []


def _emails() -> pa.Array:
    if not _EMAILS:
        _EMAILS.append(pa.array([f"user-{i:07d}@example.com" for i in range(100_000)]))
    return _EMAILS[0]


def data(rows: int) -> pa.Table:
    """``rows`` rows; ids are a permutation of 0..rows-1 (sum rows*(rows-1)/2)."""
    rng = np.random.default_rng(0x5EED)
    ids = rng.permutation(rows).astype(np.int64)
    step = 1_000_000
    return pa.Table.from_batches(
        [batch(rng, ids[i : i + step]) for i in range(0, rows, step)], schema=SCHEMA
    ).combine_chunks()


def stream(rows: int, size: int = 131_072) -> Iterator[pa.RecordBatch]:
    rng = np.random.default_rng(0x5EED)
    for start in range(0, rows, size):
        yield batch(rng, np.arange(start, min(start + size, rows), dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# Memory and time


class Peak:
    """Samples this process's resident set every few milliseconds (a thread)."""

    def __init__(self) -> None:
        self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self.now())

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def measure(fn: Callable[[], Any]) -> dict[str, Any]:
    before = Peak.now()
    with Peak() as peak:
        w0, c0 = time.perf_counter(), time.process_time()
        extra = fn()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {
        "wall": wall,
        "cpu": cpu,
        "rss_before": before,
        "rss_peak": peak.peak,
        "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        **(extra if isinstance(extra, dict) else {}),
    }


# ---------------------------------------------------------------------------------------------
# Writers


def run_frazil(case: str, rows: int, args: dict[str, Any]) -> dict[str, Any]:
    from frazil.catalog import load_catalog

    catalog = load_catalog("bench", **args["catalog"])
    table = catalog.load_table(args["table"])
    rows_in = data(rows)
    return measure(lambda: table.append(rows_in))


#: The chunk size of DuckDB's Arrow results (``.arrow()``): how a query's rows usually arrive.
DUCKDB_CHUNK_ROWS = 122_880


def run_frazil_chunked(case: str, rows: int, args: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_frazil` with the same rows in DuckDB's chunks (one Arrow chunk each)."""
    from frazil.catalog import load_catalog

    catalog = load_catalog("bench", **args["catalog"])
    table = catalog.load_table(args["table"])
    rows_in = pa.Table.from_batches(data(rows).to_batches(max_chunksize=DUCKDB_CHUNK_ROWS))
    return measure(lambda: table.append(rows_in))


def run_stream(case: str, rows: int, args: dict[str, Any]) -> dict[str, Any]:
    from frazil.catalog import load_catalog

    catalog = load_catalog("bench", **args["catalog"])
    table = catalog.load_table(args["table"])
    return measure(lambda: table.append(pa.RecordBatchReader.from_batches(SCHEMA, stream(rows))))


def run_pyiceberg(case: str, rows: int, args: dict[str, Any]) -> dict[str, Any]:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("bench", uri=args["uri"], warehouse=args["warehouse"])
    table = catalog.load_table(args["table"])
    rows_in = data(rows)
    return measure(lambda: table.append(rows_in))


def run_duckdb(case: str, rows: int, args: dict[str, Any]) -> dict[str, Any]:
    import glob
    import os

    import duckdb

    con = duckdb.connect()
    for mod_name, name in (
        ("duckdb_extension_avro", "avro"),
        ("duckdb_extension_iceberg", "iceberg"),
        ("duckdb_extension_httpfs", "httpfs"),
    ):
        mod = __import__(mod_name)
        (path,) = glob.glob(f"{os.path.dirname(mod.__file__)}/extensions/*/{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    url = args["url"]
    con.execute(
        f"CREATE SECRET frazil_rest (TYPE iceberg, CLIENT_ID '{args['client_id']}', "
        f"CLIENT_SECRET '{args['client_secret']}', OAUTH2_SERVER_URI '{url}/v1/oauth/tokens')"
    )
    con.execute(
        f"ATTACH '' AS cat (TYPE iceberg, SECRET frazil_rest, ENDPOINT '{url}', "
        "ACCESS_DELEGATION_MODE 'none')"
    )
    rows_in = data(rows)
    con.register("rows_in", rows_in)
    target = f"cat.{args['table']}"
    return measure(lambda: con.execute(f"INSERT INTO {target} SELECT * FROM rows_in"))


def run_floor(case: str, rows: int, args: dict[str, Any]) -> dict[str, Any]:
    """pyarrow writing the same rows as ``files`` files (partitioned: the rows of each
    partition in a file; unpartitioned: equal slices) with the same Parquet settings, on a
    thread pool of one worker per core; no Iceberg. The partition keys are computed before the
    timing; grouping the rows by them (sort + take, as any writer must) is timed, and the
    encoding alone is reported too."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.parquet as pq

    rows_in = data(rows)
    files = int(args["files"])
    key: Any = None
    if case != "none":
        from frazil.transforms import parse

        day = pc.cast(pc.divide(rows_in.column("ts").cast(pa.int64()), 86_400_000_000), pa.int64())
        key = day
        if case == "day_bucket":
            bucket = parse(f"bucket[{BUCKETS}]").apply(rows_in.column("id"))
            key = pc.add(pc.multiply(day, BUCKETS), pa.chunked_array(bucket).cast(pa.int64()))
    out = args["dir"]
    os.makedirs(out, exist_ok=True)
    settings = dict(PARQUET)
    row_group_size = settings.pop("row_group_size")

    def group() -> list[pa.Table]:
        if key is None:
            step = -(-rows // files)
            return [rows_in.slice(i, step) for i in range(0, rows, step)]
        order = pc.sort_indices(key)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            columns = list(pool.map(lambda c: c.take(order), rows_in.columns))
        grouped = pa.Table.from_arrays(columns, schema=rows_in.schema)
        k = key.take(order).to_numpy()
        starts = [0, *(np.flatnonzero(k[1:] != k[:-1]) + 1).tolist(), rows]
        return [grouped.slice(a, b - a) for a, b in itertools.pairwise(starts)]

    def write(piece: tuple[int, pa.Table]) -> None:
        pq.write_table(
            piece[1],
            f"{out}/{piece[0]:05d}.parquet",
            row_group_size=row_group_size,
            store_schema=False,
            **settings,
        )

    def run() -> dict[str, Any]:
        pieces = group()
        w0, c0 = time.perf_counter(), time.process_time()
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(write, enumerate(pieces)))
        return {
            "files": len(pieces),
            "encode_wall": time.perf_counter() - w0,
            "encode_cpu": time.process_time() - c0,
        }

    return measure(run)


def main() -> None:
    writer, case, rows, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
    fn = {
        "frazil": run_frazil,
        "frazil_chunked": run_frazil_chunked,
        "stream": run_stream,
        "pyiceberg": run_pyiceberg,
        "duckdb": run_duckdb,
        "floor": run_floor,
    }[writer]
    print(json.dumps(fn(case, rows, args)))


if __name__ == "__main__":
    main()
