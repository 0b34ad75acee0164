"""A child process for the streamed-append memory test: appends ``rows`` generated rows, as a
``RecordBatchReader`` of small batches, to a new table partitioned by ``bucket(4, id)`` with a
64 MB target file size, and prints its peak RSS before and after as JSON.

    python stream_append_worker.py <warehouse dir> <rows>
"""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import DoubleType, LongType, NestedField, StringType, TimestampType

BATCH = 65_536
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us")),
        ("v", pa.float64()),
        ("tag", pa.string()),
        ("note", pa.string()),
    ]
)


def batches(rows: int) -> Iterator[pa.RecordBatch]:
    rng = np.random.default_rng(7)
    tags = pa.array(["red", "green", "blue", "cyan"])
    notes = pa.array([f"note {i:05d} {'x' * (i % 17)}" for i in range(1000)])
    for start in range(0, rows, BATCH):
        n = min(BATCH, rows - start)
        ids = np.arange(start, start + n, dtype=np.int64)
        yield pa.record_batch(
            [
                pa.array(ids),
                pa.array(1_704_067_200_000_000 + ids * 1000, pa.timestamp("us")),
                pa.array(rng.random(n)),
                tags.take(pa.array(ids % 4)),
                notes.take(pa.array(rng.integers(0, 1000, n))),
            ],
            schema=SCHEMA,
        )


def main() -> None:
    warehouse, rows = sys.argv[1], int(sys.argv[2])
    catalog = load_catalog("stream", type="filesystem", warehouse=warehouse)
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "ts", TimestampType()),
        NestedField(3, "v", DoubleType()),
        NestedField(4, "tag", StringType()),
        NestedField(5, "note", StringType()),
    )
    table = catalog.create_table(
        "db.t",
        schema,
        partition_spec=PartitionSpec(PartitionField(1, 1000, parse("bucket[4]"), "id_bucket")),
        properties={"write.target-file-size-bytes": str(64 * 1024 * 1024)},
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    table.append(pa.RecordBatchReader.from_batches(SCHEMA, batches(rows)))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "before_kb": before,
                "peak_kb": after,
                "input_bytes": sum(b.nbytes for b in batches(min(rows, BATCH))) * rows // BATCH,
                "metadata": table.metadata_location,
            }
        )
    )


if __name__ == "__main__":
    main()
