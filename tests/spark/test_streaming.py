"""Structured Streaming through the ``frazil`` data source (PySpark 4.x; tests/spark/conftest.py
leaves this module out on 3.5).

The sink: a query writing 10-row micro-batches is killed (SIGKILL, in its own process) while
running, its last recorded batch is made to replay, and restarted from its checkpoint it
leaves every row in the table exactly once, one snapshot per batch, each carrying the query id
and batch id. The source: a stream reading a table that another process appends to sees every
appended row exactly once; delete and overwrite snapshots stop it unless skipped; the
per-micro-batch file limit and ``stream-from-timestamp`` hold.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.schema import Schema
from frazil.types import LongType, NestedField, TimestamptzType

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

HERE = Path(__file__).resolve().parent
PROCESS = str(HERE / "streaming_process.py")
QUERY_ID = "spark.sql.streaming.queryId"
EPOCH_ID = "spark.sql.streaming.epochId"


def _env() -> dict[str, str]:
    import frazil

    env = dict(os.environ)
    python = str(Path(frazil.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([python, env.get("PYTHONPATH", "")])
    return env


def _wait(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def _epochs(table: Any) -> list[int]:
    return [int(s.summary[EPOCH_ID]) for s in table.snapshots() if EPOCH_ID in s.summary]


def test_sink_exactly_once_across_a_kill_and_restart(request: Any, tmp_path: Path) -> None:
    from streaming_process import start_writer

    from frazil.spark.streaming import last_committed_batch

    warehouse, checkpoint = str(tmp_path / "wh"), str(tmp_path / "cp")
    cat = load_catalog("stream", warehouse=warehouse)
    cat.create_namespace("db")
    schema = Schema(
        NestedField(1, "timestamp", TimestamptzType()), NestedField(2, "value", LongType())
    )
    cat.create_table("db.events", schema)

    # run 1: its own process, killed without warning once a few batches have landed
    proc = subprocess.Popen(
        [sys.executable, PROCESS, "write", warehouse, checkpoint],
        env=_env(),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait(lambda: len(_epochs(cat.load_table("db.events"))) >= 6, 300, "six micro-batches")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    landed = _epochs(cat.load_table("db.events"))
    assert landed == list(range(len(landed)))

    # A kill between the table commit and Spark's commit log replays a landed batch; make
    # sure that happens: forget Spark's record of the newest batch it saw committed.
    commits = sorted(int(p.name) for p in (tmp_path / "cp" / "commits").iterdir()
                     if p.name.isdigit())  # fmt: skip
    replayed = commits[-1]
    assert replayed in landed
    (tmp_path / "cp" / "commits" / str(replayed)).unlink()
    (tmp_path / "cp" / "commits" / f".{replayed}.crc").unlink(missing_ok=True)

    # run 2: restarted from the checkpoint, until 20 batches have landed
    spark = request.getfixturevalue("spark")
    import frazil.spark

    frazil.spark.register_data_source(spark)
    query = start_writer(spark, warehouse, checkpoint)
    try:
        _wait(
            lambda: (last_committed_batch(cat.load_table("db.events"), str(query.id)) or 0) >= 19,
            300,
            "20 micro-batches",
        )
    finally:
        query.stop()
    assert query.exception() is None

    table = cat.load_table("db.events")
    epochs = _epochs(table)
    assert epochs == list(range(len(epochs))), "one snapshot per batch, in order"
    assert {s.summary[QUERY_ID] for s in table.snapshots()} == {str(query.id)}
    assert all(s.operation == "append" for s in table.snapshots())
    values = table.scan().to_arrow()["value"].to_pylist()
    # rate-micro-batch: batch k holds the values 10k .. 10k + 9
    assert sorted(values) == list(range(10 * len(epochs)))


def _stream_table(tmp_path: Path, rows: int = 10) -> tuple[Any, dict[str, str]]:
    warehouse = str(tmp_path / "wh")
    cat = load_catalog("stream", warehouse=warehouse)
    cat.create_namespace("db")
    t = cat.create_table("db.stream", Schema(NestedField(1, "id", LongType())))
    if rows:
        t.append(pa.table({"id": pa.array(range(rows), pa.int64())}))
    return cat, {"catalog": "stream", "catalog.warehouse": warehouse}


def _ids(spark: Any, name: str) -> list[int]:
    return [r.id for r in spark.sql(f"SELECT id FROM {name}").collect()]


def test_source_sees_concurrent_appends_exactly_once(spark: Any, tmp_path: Path) -> None:
    import frazil.spark

    frazil.spark.register_data_source(spark)
    cat, options = _stream_table(tmp_path, rows=0)  # the stream starts before any snapshot
    batches, rows = 15, 7
    stream = spark.readStream.format("frazil").options(**options).load("db.stream")
    query = (
        stream.writeStream.format("memory")
        .queryName("appended")
        .trigger(processingTime="1 second")
        .start()
    )
    try:
        appender = subprocess.Popen(
            [sys.executable, PROCESS, "append", options["catalog.warehouse"], str(batches),
             str(rows)],
            env=_env(),
        )  # fmt: skip
        assert appender.wait(timeout=300) == 0
        query.processAllAvailable()
        seen = _ids(spark, "appended")
    finally:
        query.stop()
    assert query.exception() is None
    counts = collections.Counter(seen)
    assert sorted(counts) == list(range(1000, 1000 + batches * rows))
    assert set(counts.values()) == {1}
    assert len(cat.load_table("db.stream").snapshots()) == batches
    fed = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert len(fed) >= 2 and sum(fed) == len(seen), "the rows came over several micro-batches"


def _available_now(spark: Any, options: dict[str, str], name: str, **extra: str) -> Any:
    reader = spark.readStream.format("frazil").options(**options).options(**extra)
    query = (
        reader.load("db.stream")
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .start()
    )
    from pyspark.errors import StreamingQueryException

    try:
        query.awaitTermination(300)
    except StreamingQueryException:
        pass  # the test reads query.exception()
    return query


def test_source_deletes_overwrites_limits_and_timestamps(spark: Any, tmp_path: Path) -> None:
    import frazil.spark

    frazil.spark.register_data_source(spark)
    cat, options = _stream_table(tmp_path)
    t = cat.load_table("db.stream")
    for b in range(1, 4):
        time.sleep(0.01)  # distinct commit times, for stream-from-timestamp
        t.append(pa.table({"id": pa.array(range(10 * b, 10 * b + 10), pa.int64())}))
    t.delete("id < 5")
    t.append(pa.table({"id": pa.array(range(100, 103), pa.int64())}))

    failed = _available_now(spark, options, "failed")
    assert "cannot process overwrite snapshot" in str(failed.exception()) or (
        "cannot process delete snapshot" in str(failed.exception())
    )

    skip = {"streaming-skip-delete-snapshots": "true", "streaming-skip-overwrite-snapshots": "true"}
    limited = _available_now(
        spark, options, "limited", **skip, **{"streaming-max-files-per-micro-batch": "2"}
    )
    assert limited.exception() is None
    # the stream's rows: every appended row (the deleted ones too: deletes are not retracted)
    assert sorted(_ids(spark, "limited")) == [*range(40), 100, 101, 102]
    per_batch = [p["numInputRows"] for p in limited.recentProgress if p["numInputRows"]]
    assert per_batch == [20, 20, 3], "two 10-row files a micro-batch, then the last one"

    by_rows = _available_now(
        spark, options, "by_rows", **skip, **{"streaming-max-rows-per-micro-batch": "15"}
    )
    assert by_rows.exception() is None
    per_batch = [p["numInputRows"] for p in by_rows.recentProgress if p["numInputRows"]]
    assert per_batch == [10, 10, 10, 13], "whole files, at most 15 rows a micro-batch"

    after = t.refresh().snapshots()[2].timestamp_ms
    late = _available_now(spark, options, "late", **skip, **{"stream-from-timestamp": str(after)})
    assert late.exception() is None
    assert sorted(_ids(spark, "late")) == [*range(20, 40), 100, 101, 102]


def test_sink_complete_mode_overwrites(spark: Any, tmp_path: Path) -> None:
    """``complete`` output mode: each micro-batch replaces the table's rows, in one snapshot."""
    import frazil.spark
    from frazil.spark.streaming import last_committed_batch

    frazil.spark.register_data_source(spark)
    warehouse = str(tmp_path / "wh")
    cat = load_catalog("stream", warehouse=warehouse)
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "k", LongType()), NestedField(2, "count", LongType()))
    cat.create_table("db.counts", schema)
    from pyspark.sql import functions as F

    counts = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 10)
        .load()
        .groupBy((F.col("value") % 3).alias("k"))
        .count()
    )
    query = (
        counts.writeStream.format("frazil")
        .outputMode("complete")
        .option("catalog", "stream")
        .option("catalog.warehouse", warehouse)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .start("db.counts")
    )
    try:
        _wait(
            lambda: (last_committed_batch(cat.load_table("db.counts"), str(query.id)) or 0) >= 2,
            300,
            "three micro-batches",
        )
    finally:
        query.stop()
    assert query.exception() is None
    table = cat.load_table("db.counts")
    last = last_committed_batch(table, str(query.id))
    assert last is not None
    values = range(10 * (last + 1))  # rate-micro-batch's values so far
    expected = sorted((k, sum(1 for v in values if v % 3 == k)) for k in range(3))
    rows = table.scan().to_arrow()
    assert sorted(zip(rows["k"].to_pylist(), rows["count"].to_pylist(), strict=True)) == expected
    assert [s.operation for s in table.snapshots()][1:] == ["overwrite"] * last
