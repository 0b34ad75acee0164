"""Structured Streaming against the Java reference (Iceberg 1.10.2 on Spark 3.5).

Its sink marks each micro-batch's snapshot with the summary keys frazil's sink
(``frazil.spark.streaming``, PySpark 4 only, so its constants are not imported here) writes and
reads back to skip replayed batches: ``spark.sql.streaming.queryId`` (Spark's persistent query
id) and ``spark.sql.streaming.epochId`` (the batch id). Its streaming read of a table and the
frazil source's (run under PySpark 4 in a child process) give the same micro-batches."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session, peer_missing

from frazil.io.local import LocalFileIO
from frazil.metadata import TableMetadata

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

QUERY_ID = "spark.sql.streaming.queryId"
EPOCH_ID = "spark.sql.streaming.epochId"


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("streaming-wh")
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        yield session
    finally:
        session.stop()


def test_java_sink_summary_keys(spark: Any, tmp_path: Path) -> None:
    spark.sql("CREATE TABLE ref.db.streamed (id bigint) USING iceberg")
    source = tmp_path / "in"
    source.mkdir()
    for b in range(2):
        lines = "\n".join(json.dumps({"id": b * 10 + i}) for i in range(10))
        (source / f"part-{b}.json").write_text(lines)
    query = (
        spark.readStream.schema("id bigint")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .writeStream.format("iceberg")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .toTable("ref.db.streamed")
    )
    query.awaitTermination(300)
    assert query.exception() is None
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    location = tables.load(f"{spark.conf.get('spark.sql.catalog.ref.warehouse')}/db/streamed")
    path = str(location.operations().current().metadataFileLocation()).removeprefix("file:")
    md = TableMetadata.from_json(LocalFileIO().read(path), path)
    marks = [(s.summary.get(QUERY_ID), s.summary.get(EPOCH_ID)) for s in md.snapshots]
    assert marks == [(str(query.id), "0"), (str(query.id), "1")]
    # the persistent id, as frazil's sink reads it from the checkpoint
    assert json.loads((tmp_path / "cp" / "metadata").read_text())["id"] == str(query.id)


SPARK4_VENV = Path(
    os.environ.get("FRAZIL_SPARK4_VENV", Path(__file__).resolve().parents[2] / ".venv-spark4")
)
STREAM_OPTIONS = {
    "streaming-skip-delete-snapshots": "true",
    "streaming-max-files-per-micro-batch": "2",
}


def test_stream_read_equals_java(spark: Any, tmp_path: Path) -> None:
    """The frazil source (PySpark 4, a child process) and the Java reference's streaming read
    (Spark 3.5) of the same Java-written table, with a skipped delete snapshot, a compaction
    and two files per micro-batch: the same rows in the same micro-batches."""
    python = SPARK4_VENV / "bin" / "python"
    if not python.exists():
        peer_missing(f"no PySpark 4 environment at {SPARK4_VENV} (dev/spark4-env.sh makes it)")
    sql = spark.sql
    sql(
        "CREATE TABLE ref.db.source (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    for b in range(3):
        sql(f"INSERT INTO ref.db.source SELECT id, concat('c', id % 2) FROM range({b * 10}, "
            f"{b * 10 + 10})")  # fmt: skip
    sql("DELETE FROM ref.db.source WHERE id = 3")
    sql("INSERT INTO ref.db.source SELECT id, 'c0' FROM range(100, 105)")
    sql("CALL ref.system.rewrite_data_files(table => 'db.source', options => "
        "map('min-input-files', '2'))")  # fmt: skip
    sql("INSERT INTO ref.db.source SELECT id, 'c1' FROM range(200, 203)")

    query = (
        spark.readStream.format("iceberg")
        .options(**STREAM_OPTIONS)
        .load("ref.db.source")
        .writeStream.format("memory")
        .queryName("java_streamed")
        .trigger(processingTime="0 seconds")
        .start()
    )
    # not Trigger.AvailableNow: there the Java reference reads everything in one micro-batch,
    # frazil's source keeps its limit (as PySpark's SupportsTriggerAvailableNow asks)
    query.processAllAvailable()
    query.stop()
    assert query.exception() is None
    java_batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    java_ids = sorted(r.id for r in sql("SELECT id FROM java_streamed").collect())

    import frazil

    warehouse = spark.conf.get("spark.sql.catalog.ref.warehouse")
    options = {"catalog": "ref", "catalog.type": "hadoop", "catalog.warehouse": warehouse}
    env = dict(os.environ)
    package_dir = Path(frazil.__file__).resolve().parents[1]
    if package_dir.name == "site-packages":
        # an installed frazil (CI's wheel): the PySpark 4 venv has its own install of it, and
        # this venv's site-packages would shadow PySpark 4 with this venv's PySpark 3.5
        env.pop("PYTHONPATH", None)
    else:  # a source tree: the child imports the same frazil
        env["PYTHONPATH"] = str(package_dir)
    proc = subprocess.run(
        [str(python), str(Path(__file__).resolve().parents[1] / "spark" / "streaming_process.py"),
         "read", json.dumps({**options, **STREAM_OPTIONS}), "db.source"],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    line = next((x for x in proc.stdout.splitlines() if x.startswith("FRAZIL-STREAM ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    ours = json.loads(line.removeprefix("FRAZIL-STREAM "))
    assert java_ids == [*range(30), *range(100, 105), *range(200, 203)]
    assert ours["ids"] == java_ids
    assert ours["batches"] == java_batches
