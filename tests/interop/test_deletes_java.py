"""Deletion vectors between frazil and the Java reference (Iceberg 1.10.2 in Spark 3.5):

* Java's merge-on-read deletes on a v3 table write Puffin files of ``deletion-vector-v1``
  blobs; frazil decodes every one, and its positions are exactly the rows Java deleted (the
  ``_file``/``_pos`` of the rows present before the deletes and gone after them).
* Java's own Puffin writer and reader, driven through py4j, agree with frazil's on files with
  uncompressed and zstd blobs, in both directions.
* A DV frazil writes for a data file of a Java-written table, merged with that file's existing
  Java DV and replacing it in one row-delta commit, is honored by Java's read.
* Equality delete files frazil commits to a Java-written v2 table (keys with nulls, NaN, -0.0 and
  0.0, one and two columns) delete exactly the rows Java's reader deletes with them.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

from frazil.catalog import load_catalog
from frazil.manifest.content_file import DataFile, DataFileContent, FileFormat
from frazil.manifest.deletes import (
    DV_BLOB_TYPE,
    DeletionVector,
    read_deletion_vectors,
    write_deletion_vectors,
)
from frazil.manifest.puffin import Blob, read_puffin, write_puffin

pytestmark = [
    pytest.mark.interop,
    # py4j leaves its sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

MOR = (
    "'format-version'='3', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("deletes-wh")


@pytest.fixture(scope="module")
def spark(warehouse: Path) -> Any:
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    yield session
    session.stop()


def _local(path: str) -> str:
    return path.removeprefix("file:")


def _read(path: str) -> bytes:
    with open(_local(path), "rb") as f:
        return f.read()


def _snapshot_id(spark: Any, table: str) -> int:
    return spark.sql(
        f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0][0]


def _rows(spark: Any, table: str, snapshot: int | None = None) -> list[tuple[int, str, int]]:
    """(id, _file, _pos) of every live row."""
    version = f" VERSION AS OF {snapshot}" if snapshot is not None else ""
    return [
        (r[0], _local(r[1]), r[2])
        for r in spark.sql(f"SELECT id, _file, _pos FROM {table}{version}").collect()
    ]


def _delete_files(spark: Any, table: str) -> list[Any]:
    return spark.sql(
        "SELECT file_path, file_format, referenced_data_file, content_offset, "
        f"content_size_in_bytes, record_count FROM {table}.delete_files"
    ).collect()


def test_java_dvs_decode_to_the_rows_java_deleted(spark: Any) -> None:
    table = "ref.db.java_dvs"
    spark.sql(f"CREATE TABLE {table} (id bigint, data string) USING iceberg TBLPROPERTIES ({MOR})")
    spark.range(0, 30_000).selectExpr("id", "cast(id as string) AS data").repartition(3).writeTo(
        table
    ).append()
    before = _snapshot_id(spark, table)
    # Two deletes: the second merges into the first's DVs (Java rewrites each file's DV).
    spark.sql(f"DELETE FROM {table} WHERE id % 7 = 0 OR id BETWEEN 100 AND 3000")
    spark.sql(f"DELETE FROM {table} WHERE id % 11 = 0 OR id >= 29990")

    remaining = {r[0] for r in _rows(spark, table)}
    expected: dict[str, set[int]] = defaultdict(set)
    for id_, file, pos in _rows(spark, table, before):
        if id_ not in remaining:
            expected[file].add(pos)

    dvs = _delete_files(spark, table)
    assert dvs, "Java wrote no deletion vectors"
    decoded: dict[str, list[int]] = {}
    puffins: dict[str, bytes] = {}
    for d in dvs:
        assert d["file_format"].upper() == "PUFFIN"
        data = puffins.setdefault(d["file_path"], _read(d["file_path"]))
        dv = DeletionVector.from_puffin_blob(
            data,
            d["content_offset"],
            d["content_size_in_bytes"],
            d["file_path"],
            d["referenced_data_file"],
        )
        assert dv.cardinality == d["record_count"]
        decoded[_local(d["referenced_data_file"])] = dv.positions().to_pylist()
    assert decoded == {f: sorted(p) for f, p in expected.items()}

    # The Puffin files themselves: spec metadata on every blob, and all of them readable.
    for path, data in puffins.items():
        puffin = read_puffin(data, path)
        assert "created-by" in puffin.properties
        for blob in puffin.blobs:
            assert blob.type == DV_BLOB_TYPE
            assert (blob.snapshot_id, blob.sequence_number) == (-1, -1)
            assert blob.compression_codec is None
            assert set(blob.properties) >= {"referenced-data-file", "cardinality"}
        by_file = read_deletion_vectors(data, path)
        for ref, dv in by_file.items():
            if _local(ref) in decoded:
                assert dv.positions().to_pylist() == decoded[_local(ref)]


def _java_puffin_write(spark: Any, path: str, blobs: list[tuple[str, bytes, str | None]]) -> None:
    """A Puffin file written by Java's ``PuffinWriter`` (blob type, bytes, codec name)."""
    jvm = spark._jvm
    puffin = jvm.org.apache.iceberg.puffin
    out = jvm.org.apache.iceberg.Files.localOutput(path)
    writer = puffin.Puffin.write(out).createdBy("java test").build()
    for blob_type, data, codec in blobs:
        codec_enum = puffin.PuffinCompressionCodec.forName(codec)
        fields = jvm.java.util.ArrayList()
        fields.add(1)
        buffer = jvm.java.nio.ByteBuffer.wrap(bytearray(data))
        props = jvm.java.util.HashMap()
        props.put("k", "v")
        writer.write(puffin.Blob(blob_type, fields, 7, 8, buffer, codec_enum, props))
    writer.close()


def _java_puffin_read(spark: Any, path: str) -> list[tuple[str, str | None, bytes]]:
    """(type, codec, decompressed bytes) of every blob, as Java's ``PuffinReader`` reads them."""
    jvm = spark._jvm
    reader = jvm.org.apache.iceberg.puffin.Puffin.read(
        jvm.org.apache.iceberg.Files.localInput(path)
    ).build()
    metas = reader.fileMetadata().blobs()
    out = []
    pairs = reader.readAll(metas).iterator()  # a java.lang.Iterable, not a collection
    while pairs.hasNext():
        pair = pairs.next()
        meta, buffer = pair.first(), pair.second()
        data = bytes(jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buffer))
        out.append((meta.type(), meta.compressionCodec(), data))
    reader.close()
    return out


def test_puffin_files_between_java_and_frazil(spark: Any, warehouse: Path) -> None:
    payload = bytes(range(256)) * 64
    java_file = str(warehouse / "java.puffin")
    _java_puffin_write(spark, java_file, [("a", payload, None), ("b", payload, "zstd")])
    f = read_puffin(_read(java_file), java_file)
    assert f.properties["created-by"] == "java test"
    assert [(b.type, b.compression_codec) for b in f.blobs] == [("a", None), ("b", "zstd")]
    assert all(
        (b.fields, b.snapshot_id, b.sequence_number, b.properties) == ((1,), 7, 8, {"k": "v"})
        for b in f.blobs
    )
    assert f.read_blob(0) == payload == f.read_blob(1)

    ours = str(warehouse / "frazil.manifest.puffin")
    with open(ours, "wb") as out:
        out.write(
            write_puffin(
                [Blob("a", payload), Blob("b", payload, compression_codec="zstd")],
                {"x": "y"},
            )
        )
    assert _java_puffin_read(spark, ours) == [("a", None, payload), ("b", "zstd", payload)]


def test_java_honors_a_dv_frazil_wrote(spark: Any, warehouse: Path) -> None:
    table = "ref.db.frazil_dv"
    spark.sql(f"CREATE TABLE {table} (id bigint, data string) USING iceberg TBLPROPERTIES ({MOR})")
    # One data file, so Java's DV for it is the only blob of its Puffin file.
    spark.range(0, 5000).selectExpr("id", "cast(id as string) AS data").coalesce(1).writeTo(
        table
    ).append()
    spark.sql(f"DELETE FROM {table} WHERE id < 10")  # Java's DV
    (old,) = _delete_files(spark, table)
    data_file = old["referenced_data_file"]
    existing = DeletionVector.from_puffin_blob(
        _read(old["file_path"]), old["content_offset"], old["content_size_in_bytes"]
    )
    assert existing.positions().to_pylist() == list(range(10))

    # frazil deletes ids 100..199 and every id divisible by 1000, merged with Java's DV.
    positions = [pos for id_, _, pos in _rows(spark, table) if 100 <= id_ < 200 or id_ % 1000 == 0]
    merged = existing | DeletionVector.from_positions(positions)
    catalog = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    t = catalog.load_table("db.frazil_dv")
    puffin_path = f"{t.location()}/data/frazil-dv-{os.getpid()}.puffin"
    data, (written,) = write_deletion_vectors({data_file: merged})
    t.io.write(puffin_path, data)
    dv_file = DataFile(
        file_path=puffin_path,
        file_format=FileFormat.PUFFIN,
        partition=(),
        record_count=written.record_count,
        file_size_in_bytes=len(data),
        content=DataFileContent.POSITION_DELETES,
        referenced_data_file=written.referenced_data_file,
        content_offset=written.content_offset,
        content_size_in_bytes=written.content_size_in_bytes,
    )
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        rd.add_delete_file(dv_file)
        rd.delete_delete_file(old["file_path"])

    ids = sorted(r[0] for r in spark.sql(f"SELECT id FROM {table}").collect())
    deleted = set(range(10)) | set(range(100, 200)) | set(range(0, 5000, 1000))
    assert ids == [i for i in range(5000) if i not in deleted]
    (now,) = _delete_files(spark, table)
    assert _local(now["file_path"]) == _local(puffin_path)
    assert now["record_count"] == merged.cardinality == len(deleted)


def _equality_delete_file(t: Any, name: str, keys: Any) -> DataFile:
    """``keys`` (named as the table's columns) written with pyarrow, with the table's field ids."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = t.schema()
    ids = tuple(schema.find_field(n).field_id for n in keys.column_names)
    fields = [
        f.with_metadata({b"PARQUET:field_id": str(i).encode()})
        for f, i in zip(keys.schema, ids, strict=True)
    ]
    path = f"{t.location()}/data/{name}-{os.getpid()}.parquet"
    pq.write_table(keys.cast(pa.schema(fields)), _local(path))
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=keys.num_rows,
        file_size_in_bytes=os.path.getsize(_local(path)),
        content=DataFileContent.EQUALITY_DELETES,
        equality_ids=ids,
    )


def test_java_and_frazil_apply_frazil_equality_deletes_alike(spark: Any, warehouse: Path) -> None:
    import pyarrow as pa

    table = "ref.db.frazil_eq"
    spark.sql(
        f"CREATE TABLE {table} (id bigint, f double, s string) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(
        f"INSERT INTO {table} VALUES (1, 0.0, 'a'), (2, CAST('-0.0' AS DOUBLE), 'b'), "
        "(3, CAST('NaN' AS DOUBLE), 'c'), (4, NULL, NULL), (5, 1.5, NULL), (6, 2.5, 'a'), "
        "(7, 0.0, 'x'), (NULL, 3.5, 'n')"
    )
    catalog = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    t = catalog.load_table("db.frazil_eq")
    by_f = pa.table({"f": pa.array([float("nan"), -0.0, 99.0], pa.float64())})
    by_id_s = pa.table(
        {"id": pa.array([5, 6, None, 7], pa.int64()), "s": pa.array([None, "b", "n", None])}
    )
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        rd.add_delete_file(_equality_delete_file(t, "eq-f", by_f))
        rd.add_delete_file(_equality_delete_file(t, "eq-id-s", by_id_s))
    java = sorted(r[0] for r in spark.sql(f"SELECT id FROM {table} WHERE id IS NOT NULL").collect())
    java_null_ids = spark.sql(f"SELECT count(*) FROM {table} WHERE id IS NULL").collect()[0][0]
    ours = catalog.load_table("db.frazil_eq").scan().to_arrow().column("id").to_pylist()
    # NaN and -0.0 deleted, 0.0 kept (Double.compare); (5, null) deleted null-safely; (null,
    # 'n') deleted; (6, 'a') and (7, 'x') kept: their keys differ in one column
    assert java == [1, 4, 6, 7]
    assert sorted(i for i in ours if i is not None) == java
    assert ours.count(None) == java_null_ids == 0
