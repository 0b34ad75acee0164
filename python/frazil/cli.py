"""The ``frazil`` command line.

``frazil demo`` runs the largest end-to-end path that exists today: it generates a table of
events, computes the partition values of an Iceberg partition spec over it with the native
kernels, and prints the partitions it would write.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Sequence

import pyarrow as pa

import frazil
from frazil import transforms

logger = logging.getLogger(__name__)

# (partition field name, source column, transform string)
DEMO_SPEC: tuple[tuple[str, str, str], ...] = (
    ("event_day", "event_ts", "day"),
    ("user_bucket", "user_id", "bucket[16]"),
    ("country_trunc", "country", "truncate[2]"),
    ("amount_trunc", "amount", "truncate[100000]"),
)


def demo_table(rows: int, seed: int = 7) -> pa.Table:
    """A deterministic table of events: ids, timestamps around 2024, countries, decimals."""
    import numpy as np

    rng = np.random.default_rng(seed)
    start = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z in micros
    ts = start + rng.integers(0, 14 * 86_400_000_000, rows)
    countries = np.array(["DE", "FR", "NO", "US", "JP", "BR", "IN", "ÅL", "日本"])
    # decimal(18, 2) built from unscaled cents: 16-byte little-endian two's complement
    cents = rng.integers(-50_000, 5_000_000, rows)
    unscaled = np.stack([cents, cents >> 63], axis=1)
    amount = pa.Array.from_buffers(pa.decimal128(18, 2), rows, [None, pa.py_buffer(unscaled)])
    return pa.table(
        {
            "user_id": pa.array(rng.integers(0, 1_000_000, rows), pa.int64()),
            "event_ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
            "country": pa.array(countries[rng.integers(0, len(countries), rows)]),
            "amount": amount,
        }
    )


def partition_values(table: pa.Table, progress=None) -> tuple[pa.Table, dict[str, float]]:
    """Applies every transform of the demo spec; returns the partition tuples and timings."""
    columns, timings = {}, {}
    for name, source, spec in DEMO_SPEC:
        t0 = time.perf_counter()
        columns[name] = transforms.parse(spec).apply(table[source])
        timings[f"{spec}({source})"] = time.perf_counter() - t0
        logger.debug("computed %s in %.1f ms", name, timings[f"{spec}({source})"] * 1e3)
        if progress is not None:
            progress()
    return pa.table(columns), timings


def run_demo(rows: int, show: int) -> None:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    console = Console()
    console.print(f"[bold]frazil {frazil.__version__}[/] demo: partition values of {rows:,} rows")
    table = demo_table(rows)
    spec_text = ", ".join(f"{spec}({src}) AS {name}" for name, src, spec in DEMO_SPEC)
    console.print(f"partition spec: {spec_text}")

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("transforms", total=len(DEMO_SPEC))
        parts, timings = partition_values(table, lambda: progress.advance(task))

    counts = (
        parts.group_by([name for name, _, _ in DEMO_SPEC])
        .aggregate([([], "count_all")])
        .sort_by([("count_all", "descending"), ("event_day", "ascending")])
    )
    out = Table(title=f"{counts.num_rows:,} partitions (largest {min(show, counts.num_rows)})")
    for name, _, _ in DEMO_SPEC:
        out.add_column(name, justify="right")
    out.add_column("rows", justify="right")
    day_type = transforms.day(pa.array([], pa.date32()), as_date=True).type
    for row in counts.slice(0, show).to_pylist():
        day = pa.scalar(row["event_day"], pa.int32()).cast(day_type).as_py()
        out.add_row(
            str(day),
            str(row["user_bucket"]),
            str(row["country_trunc"]),
            str(row["amount_trunc"]),
            f"{row['count_all']:,}",
        )
    console.print(out)

    timing = Table(title="native transform time")
    timing.add_column("transform")
    timing.add_column("ms", justify="right")
    timing.add_column("M values/s", justify="right")
    for name, seconds in timings.items():
        rate = rows / seconds / 1e6 if seconds > 0 else float("inf")
        timing.add_row(name, f"{seconds * 1e3:.1f}", f"{rate:,.0f}")
    console.print(timing)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="frazil", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="partition values of a generated table")
    demo.add_argument("--rows", type=int, default=2_000_000, help="rows to generate")
    demo.add_argument("--show", type=int, default=15, help="partitions to print")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    if args.command == "demo":
        run_demo(args.rows, args.show)
    return 0
