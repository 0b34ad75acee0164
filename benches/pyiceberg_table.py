"""The planning bench's PyIceberg-written table: the shape of ``make_big_table.py`` (the shared
bench-tables generator), written through PyIceberg 0.12's public commit path.

COMMITS fast appends of FILES_PER_COMMIT data files each into a SQLite catalog (catalog
``bench``, table ``db.events``), so the current snapshot has COMMITS manifests; the data files do
not exist (planning never opens them). Partitioned by ``day(ts)``, each commit covering 3 days;
every file has bounds and value/null counts for 8 columns, two of them strings. PyIceberg writes
**one Avro block per manifest entry**, the layout of the tables most Python users have.

The table is found, in order: at ``$FRAZIL_BENCH_PYICEBERG_TABLE`` (a directory the shared
generator or this module wrote: ``DIR/catalog.db``); in the bench cache
(``plan_table.cache_root()``), generating it there when missing (about 5 minutes for 1M files).

    python benches/pyiceberg_table.py DIR [COMMITS] [FILES_PER_COMMIT]
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import sys
from pathlib import Path
from typing import Any

from plan_table import cache_root

BASE_DAY = 19723  # 2024-01-01
DAYS_PER_COMMIT = 3
ENV = "FRAZIL_BENCH_PYICEBERG_TABLE"
CATEGORIES = ["books", "games", "garden", "music", "sports", "tools", "toys"]
COUNTRIES = ["BR", "DE", "FR", "IN", "JP", "US"]
USER_SPAN = 900_000  # user_id lower bounds are uniform in [0, USER_SPAN]
MEAN_ROWS = 27_500  # record counts are uniform in [5,000, 50,000]: ids advance this much a file


def _catalog(root: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(
        "bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse"
    )


def write(root: Path, commits: int, per: int) -> None:
    """Writes the table under ``root``."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import (
        DateType,
        DoubleType,
        IntegerType,
        LongType,
        NestedField,
        StringType,
        TimestampType,
    )

    root.mkdir(parents=True, exist_ok=True)
    cat = _catalog(root)
    cat.create_namespace_if_not_exists("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "ts", TimestampType(), required=True),
        NestedField(3, "user_id", LongType(), required=False),
        NestedField(4, "category", StringType(), required=False),
        NestedField(5, "amount", DoubleType(), required=False),
        NestedField(6, "qty", IntegerType(), required=False),
        NestedField(7, "country", StringType(), required=False),
        NestedField(8, "event_date", DateType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day")
    )
    table = cat.create_table(
        "db.events", schema=schema, partition_spec=spec, properties={"format-version": "2"}
    )
    rng = random.Random(42)

    def q(v: int) -> bytes:
        return struct.pack("<q", v)

    def i(v: int) -> bytes:
        return struct.pack("<i", v)

    def d(v: float) -> bytes:
        return struct.pack("<d", v)

    next_id = 0
    for c in range(commits):
        files = []
        for f in range(per):
            day = BASE_DAY + c * DAYS_PER_COMMIT + (f % DAYS_PER_COMMIT)
            rows = rng.randint(5_000, 50_000)
            lo_id, hi_id = next_id, next_id + rows - 1
            next_id += rows
            ts_lo = day * 86_400_000_000 + rng.randint(0, 3_600_000_000)
            ts_hi = ts_lo + rng.randint(3_600_000_000, 20 * 3_600_000_000)
            u_lo = rng.randint(0, USER_SPAN)
            u_hi = u_lo + rng.randint(1, 100_000)
            cats = sorted(rng.sample(CATEGORIES, 2))
            ctry = sorted(rng.sample(COUNTRIES, 2))
            a_lo = rng.uniform(0, 500)
            a_hi = a_lo + rng.uniform(1, 500)
            q_lo = rng.randint(1, 5)
            q_hi = q_lo + rng.randint(0, 50)
            files.append(
                DataFile.from_args(
                    _table_format_version=2,
                    content=DataFileContent.DATA,
                    file_path=f"file://{root}/warehouse/db/events/data/ts_day={day}/"
                    f"{c:05d}-{f:06d}.parquet",
                    file_format=FileFormat.PARQUET,
                    partition=Record(day),
                    record_count=rows,
                    file_size_in_bytes=rows * 40,
                    column_sizes={k: rows * 5 for k in range(1, 9)},
                    value_counts={k: rows for k in range(1, 9)},
                    null_value_counts={k: (0 if k <= 2 else rows // 100) for k in range(1, 9)},
                    nan_value_counts={5: 0},
                    lower_bounds={
                        1: q(lo_id),
                        2: q(ts_lo),
                        3: q(u_lo),
                        4: cats[0].encode(),
                        5: d(a_lo),
                        6: i(q_lo),
                        7: ctry[0].encode(),
                        8: i(day),
                    },
                    upper_bounds={
                        1: q(hi_id),
                        2: q(ts_hi),
                        3: q(u_hi),
                        4: cats[1].encode(),
                        5: d(a_hi),
                        6: i(q_hi),
                        7: ctry[1].encode(),
                        8: i(day),
                    },
                    split_offsets=[4],
                    sort_order_id=0,
                    spec_id=0,
                )
            )
        with table.transaction() as tx, tx.update_snapshot().fast_append() as fa:
            for df in files:
                fa.append_data_file(df)


def metadata_of(root: Path) -> str:
    """The current metadata file of the table in ``root`` (its catalog's pointer)."""
    location: str = _catalog(root).load_table("db.events").metadata_location
    return location


def ensure_table(commits: int, per: int) -> tuple[str, Path, bool]:
    """(metadata file, directory, whether it was generated now) of the PyIceberg-written table:
    ``$FRAZIL_BENCH_PYICEBERG_TABLE`` if set, else the cached one, generated when missing."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return metadata_of(Path(given)), Path(given), False
    final = cache_root() / f"pyiceberg-{commits}x{per}"
    done = final / "complete"
    if done.exists():
        return metadata_of(final), final, False
    # the catalog and the metadata name absolute locations, so the table is written in place;
    # a run cut short leaves no `complete` marker, and its remains are replaced
    shutil.rmtree(final, ignore_errors=True)
    write(final, commits, per)
    done.touch()
    return metadata_of(final), final, True


if __name__ == "__main__":
    out = Path(sys.argv[1]).resolve()
    write(
        out,
        int(sys.argv[2]) if len(sys.argv) > 2 else 100,
        int(sys.argv[3]) if len(sys.argv) > 3 else 10_000,
    )
    print("metadata:", metadata_of(out))
