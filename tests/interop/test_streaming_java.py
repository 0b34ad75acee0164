"""The Java reference's Structured Streaming sink (Iceberg 1.10.2 on Spark 3.5) marks each
micro-batch's snapshot with the summary keys frazil's sink (``frazil.spark.streaming``, PySpark
4 only, so its constants are not imported here) writes and reads back to skip replayed
batches: ``spark.sql.streaming.queryId`` (Spark's persistent query id) and
``spark.sql.streaming.epochId`` (the batch id)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

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
