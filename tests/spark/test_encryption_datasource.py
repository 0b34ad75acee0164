"""Encrypted tables through the ``frazil`` Python data source and Structured Streaming
(PySpark 4.x; tests/spark/conftest.py leaves this module out on 3.5). One Spark session.

The catalog, with its KMS and master key, is configured on the driver side by name
(``.frazil.yaml`` in ``FRAZIL_HOME``): master keys in data source options are refused, since Spark
pickles a reader's or writer's options to every executor. What Spark ships to executors (the
pickled reader, writer and stream reader and writer, the read partitions, the commit messages)
holds no master key; executors read and write with the data keys of the plan. Every file under
the table locations is grepped for a marker value written into the rows."""

from __future__ import annotations

import base64
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import EncryptionError
from frazil.table import Table

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

MASTER = os.urandom(16)
MARKER = "MARKER-ds-5e0c1b"
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
ENCRYPTED = {"format-version": "3", "encryption.key-id": "master-1"}
OPTIONS = {"catalog": "enc"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """FRAZIL_HOME with catalog ``enc`` (SQLite, InMemoryKms holding ``master-1``)."""
    root = tmp_path_factory.mktemp("enc")
    (root / "wh").mkdir()
    (root / ".frazil.yaml").write_text(
        "catalog:\n"
        "  enc:\n"
        "    type: sql\n"
        f"    uri: sqlite:///{root}/c.db\n"
        f"    warehouse: {root}/wh\n"
        "    encryption.kms-impl: frazil.encryption.InMemoryKms\n"
        f"    encryption.kms.key.master-1: {base64.b64encode(MASTER).decode()}\n"
    )
    old = os.environ.get("FRAZIL_HOME")
    os.environ["FRAZIL_HOME"] = str(root)
    load_catalog("enc").create_namespace("db")
    yield root
    if old is None:
        del os.environ["FRAZIL_HOME"]
    else:
        os.environ["FRAZIL_HOME"] = old


@pytest.fixture(scope="module")
def spark(home: Path, spark_factory: Any) -> Iterator[Any]:
    import frazil.spark

    # Python workers (planning, executors, commits) find catalog "enc" by name.
    session = spark_factory(
        "frazil-encryption-datasource", **{"spark.executorEnv.FRAZIL_HOME": str(home)}
    )
    frazil.spark.register_data_source(session, pushdown=True)
    yield session
    session.stop()


def no_plaintext(root: Path) -> None:
    files = [p for p in (root / "wh").rglob("*") if p.is_file()]
    assert files
    for p in files:
        assert MARKER.encode() not in p.read_bytes(), p


def no_master_key(obj: Any) -> None:
    shipped = pickle.dumps(obj)
    assert MASTER not in shipped and base64.b64encode(MASTER) not in shipped


def table_rows(t: Table) -> list[tuple[int, str]]:
    return sorted((r["id"], r["v"]) for r in t.scan().to_arrow().to_pylist())


def assert_encrypted_files(t: Table) -> None:
    tasks = list(t.scan().plan_files())
    assert tasks
    for task in tasks:
        assert task.file.key_metadata
        path = task.file.file_path.removeprefix("file://")
        data = Path(path).read_bytes()
        assert data[:4] == data[-4:] == b"PARE"  # Parquet with an encrypted footer


def test_datasource_writes_and_reads_an_encrypted_table(spark: Any, home: Path) -> None:
    from frazil.spark.datasource import FrazilReader, FrazilWriter

    cat = load_catalog("enc")
    cat.create_table("db.t", SCHEMA, properties={**ENCRYPTED, "write.delete.mode": "merge-on-read"})
    expect = [(i, MARKER if i % 2 else f"v{i}") for i in range(40)]
    df = spark.createDataFrame(expect, "id long, v string").repartition(3)
    df.write.format("frazil").options(**OPTIONS).mode("append").save("db.t")
    t = cat.load_table("db.t")
    assert table_rows(t) == expect
    assert len(list(t.scan().plan_files())) >= 2
    assert_encrypted_files(t)
    got = spark.read.format("frazil").options(**OPTIONS).load("db.t")
    assert sorted((r["id"], r["v"]) for r in got.collect()) == expect

    # A deletion vector written on the driver, applied by the executors (its key in the plan).
    t.delete("id < 10")
    got = spark.read.format("frazil").options(**OPTIONS).load("db.t").where("id >= 5")
    assert sorted((r["id"], r["v"]) for r in got.collect()) == expect[10:]

    # An overwrite through the data source.
    replaced = spark.createDataFrame([(100, MARKER)], "id long, v string")
    replaced.write.format("frazil").options(**OPTIONS).mode("overwrite").save("db.t")
    t = cat.load_table("db.t")
    assert table_rows(t) == [(100, MARKER)]
    assert_encrypted_files(t)

    # What Spark pickles to executors holds no master key: the reader and its partitions
    # (executors rebuild a FileIO from the context's properties, with no KMS), the writer.
    reader = FrazilReader({**OPTIONS, "path": "db.t"})
    parts = reader.partitions()
    assert parts
    for p in parts:
        _, context = p.value
        assert not any(k.startswith("encryption.kms") for k in context["io_props"])
    no_master_key((reader, parts, FrazilWriter({**OPTIONS, "path": "db.t"}, False)))

    # Master keys in the options are refused before anything reaches an executor.
    keyed = {"catalog.encryption.kms.key.master-1": base64.b64encode(MASTER).decode()}
    with pytest.raises(Exception, match="would be shipped by Spark") as caught:
        spark.read.format("frazil").options(**OPTIONS, **keyed).load("db.t").collect()
    assert base64.b64encode(MASTER).decode() not in str(caught.value)
    with pytest.raises(EncryptionError, match="would be shipped by Spark"):
        FrazilReader({**OPTIONS, **keyed, "path": "db.t"})
    no_plaintext(home)


@pytest.mark.slow
def test_streaming_from_and_into_encrypted_tables(spark: Any, home: Path) -> None:
    from pyspark.errors import StreamingQueryException

    from frazil.spark.streaming import FrazilStreamReader, FrazilStreamWriter

    cat = load_catalog("enc")
    src = cat.create_table("db.src", SCHEMA, properties=ENCRYPTED)
    cat.create_table("db.dst", SCHEMA, properties=ENCRYPTED)
    for b in range(3):
        src.append(pa.table({"id": [10 * b + i for i in range(10)], "v": [MARKER] * 10}))

    def run() -> None:
        query = (
            spark.readStream.format("frazil")
            .options(**OPTIONS)
            .load("db.src")
            .writeStream.format("frazil")
            .options(**OPTIONS)
            .option("checkpointLocation", str(home / "cp"))
            .trigger(availableNow=True)
            .start("db.dst")
        )
        try:
            query.awaitTermination(300)
        except StreamingQueryException:
            pass  # checked below
        assert query.exception() is None

    run()
    dst = cat.load_table("db.dst")
    assert table_rows(dst) == [(i, MARKER) for i in range(30)]
    assert all(s.key_id for s in dst.snapshots())
    assert_encrypted_files(dst)

    # More rows upstream: the restarted query takes exactly those.
    cat.load_table("db.src").append(pa.table({"id": [30, 31], "v": [MARKER, MARKER]}))
    run()
    assert table_rows(cat.load_table("db.dst")) == [(i, MARKER) for i in range(32)]

    # The stream reader and writer Spark pickles to executors hold no master key.
    reader = FrazilStreamReader({**OPTIONS, "path": "db.src"})
    start, end = reader.initialOffset(), reader.latestOffset(reader.initialOffset(), None)
    no_master_key((reader, reader.partitions(start, end)))
    no_master_key(FrazilStreamWriter({**OPTIONS, "path": "db.dst"}, False))
    no_plaintext(home)
