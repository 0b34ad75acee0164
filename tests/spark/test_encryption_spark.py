"""Encrypted tables through frazil.spark: executors write encrypted data files under fresh data
keys and read them with the data keys the plan carries; the driver commits (encrypting the
manifests and the manifest list). Master keys never leave the driver: neither the executors'
FileIO properties nor the plan's context hold them."""

from __future__ import annotations

import base64
import os
import pickle
from pathlib import Path

import pyarrow as pa
import pytest

import frazil.spark
from frazil.catalog import load_catalog
from frazil.spark.common import io_spec
from frazil.spark.read import plan

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
MARKER = "MARKER-spark-93ab"


def test_spark_writes_and_reads_an_encrypted_table(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    master = os.urandom(16)
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = load_catalog(
        "c",
        type="sql",
        uri=f"sqlite:///{tmp_path}/c.db",
        warehouse=str(wh),
        **{
            "encryption.kms-impl": "frazil.encryption.InMemoryKms",
            "encryption.kms.key.master-1": base64.b64encode(master).decode(),
        },
    )
    cat.create_namespace("db")
    props = {"format-version": "3", "encryption.key-id": "master-1"}
    cat.create_table("db.t", SCHEMA, properties=props)

    df = spark.createDataFrame(
        [(i, MARKER if i % 2 else f"v{i}") for i in range(20)], "id long, v string"
    )
    frazil.spark.write(df.repartition(3), "db.t", cat)
    t = cat.load_table("db.t")
    files = list(t.scan().plan_files())
    assert len(files) >= 2 and all(f.file.key_metadata for f in files)
    expect = sorted((i, MARKER if i % 2 else f"v{i}") for i in range(20))
    assert sorted(tuple(r.values()) for r in t.scan().to_arrow().to_pylist()) == expect
    got = frazil.spark.read(spark, "db.t", cat).collect()
    assert sorted((r["id"], r["v"]) for r in got) == expect

    # What executors are sent holds no master key.
    io_props, _ = io_spec(t)
    _, context, _ = plan(t)
    shipped = pickle.dumps((io_props, context))
    assert not any(k.startswith("encryption.kms") for k in io_props)
    assert master not in shipped and base64.b64encode(master) not in shipped

    for p in wh.rglob("*"):
        if p.is_file():
            assert MARKER.encode() not in p.read_bytes(), p


def test_spark_avro_data_files_and_statistics_on_an_encrypted_table(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Executors write Avro data files as AES-GCM streams; the Spark statistics action writes
    # the Puffin file encrypted, its wrapped key named by the statistics entry's key-id.
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = load_catalog(
        "c",
        type="sql",
        uri=f"sqlite:///{tmp_path}/c.db",
        warehouse=str(wh),
        **{
            "encryption.kms-impl": "frazil.encryption.InMemoryKms",
            "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode(),
        },
    )
    cat.create_namespace("db")
    props = {"format-version": "3", "encryption.key-id": "master-1", "write.format.default": "avro"}
    cat.create_table("db.t", SCHEMA, properties=props)
    df = spark.createDataFrame(
        [(i, MARKER if i % 2 else "x") for i in range(20)], "id long, v string"
    )
    frazil.spark.write(df.repartition(2), "db.t", cat)
    t = cat.load_table("db.t")
    files = [task.file for task in t.scan().plan_files()]
    assert files and all(f.file_format == "AVRO" and f.key_metadata for f in files)
    assert all((Path(f.file_path).read_bytes()[:4]) == b"AGS1" for f in files)
    got = frazil.spark.read(spark, "db.t", cat).collect()
    assert sorted((r["id"], r["v"]) for r in got) == sorted(
        (i, MARKER if i % 2 else "x") for i in range(20)
    )
    f = frazil.spark.compute_statistics(spark, t)
    assert f.key_id is not None
    assert Path(f.statistics_path).read_bytes()[:4] == b"AGS1"
    assert cat.load_table("db.t").read_ndv() == {1: 20, 2: 2}
    for p in wh.rglob("*"):
        if p.is_file():
            assert MARKER.encode() not in p.read_bytes(), p
