"""Processes for tests/spark/test_streaming.py (run as ``python streaming_process.py ...``).

``write <warehouse> <checkpoint>``: a streaming query (``rate-micro-batch``, 10 rows a batch)
writing ``db.events`` through the frazil sink until it is killed.

``append <warehouse> <batches> <rows>``: appends ``batches`` batches of ``rows`` rows (ids
counting from 1000) to ``db.stream`` with frazil's Python API, a little apart.

``read <options JSON> <table>``: reads a table through the frazil streaming source and prints
what it read (tests/interop/test_streaming_java.py compares it with the Java reference's
streaming read).
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


def read(options_json: str, table: str) -> None:
    """A stream of ``table`` through the frazil source with these options, until it has read
    everything; prints its micro-batches' row counts and its rows (``id``) as JSON."""
    import json

    from pyspark.sql import SparkSession

    import frazil.spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("frazil-stream-reader")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frazil.spark.register_data_source(spark)
    reader = spark.readStream.format("frazil").options(**json.loads(options_json))
    query = (
        reader.load(table)
        .writeStream.format("memory")
        .queryName("streamed")
        .trigger(processingTime="0 seconds")
        .start()
    )
    query.processAllAvailable()
    query.stop()
    batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    ids = sorted(r.id for r in spark.sql("SELECT id FROM streamed").collect())
    spark.stop()
    print("FRAZIL-STREAM " + json.dumps({"batches": batches, "ids": ids}))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3])
    else:
        append(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
