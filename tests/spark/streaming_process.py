"""Processes for tests/spark/test_streaming.py (run as ``python streaming_process.py ...``).

``write <warehouse> <checkpoint>``: a streaming query (``rate-micro-batch``, 10 rows a batch)
writing ``db.events`` through the frazil sink until it is killed.

``append <warehouse> <batches> <rows>``: appends ``batches`` batches of ``rows`` rows (ids
counting from 1000) to ``db.stream`` with frazil's Python API, a little apart.
"""

from __future__ import annotations

import os
import sys
import time


def write(warehouse: str, checkpoint: str) -> None:
    from pyspark.sql import SparkSession

    import frazil.spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("frazil-stream-writer")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frazil.spark.register_data_source(spark)
    query = start_writer(spark, warehouse, checkpoint)
    query.awaitTermination()


def start_writer(spark: object, warehouse: str, checkpoint: str) -> object:
    """The query both runs share (the restarted one in the test's own session)."""
    source = (
        spark.readStream.format("rate-micro-batch")  # type: ignore[attr-defined]
        .option("rowsPerBatch", 10)
        .option("numPartitions", 2)
        .load()
    )
    return (
        source.writeStream.format("frazil")
        .option("catalog", "stream")
        .option("catalog.warehouse", warehouse)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="0 seconds")
        .start("db.events")
    )


def append(warehouse: str, batches: int, rows: int) -> None:
    import pyarrow as pa

    from frazil.catalog import load_catalog

    table = load_catalog("stream", warehouse=warehouse).load_table("db.stream")
    for b in range(batches):
        start = 1000 + b * rows
        table.append(pa.table({"id": pa.array(range(start, start + rows), pa.int64())}))
        time.sleep(0.3)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        append(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
