"""Table and partition statistics between frazil and the Java reference (Iceberg 1.10.2).

- NDV sketches: frazil's ``compute_statistics`` file is listed by Java's
  ``table.statisticsFiles()``, read by Java's Puffin reader and the (shaded) DataSketches
  ``CompactSketch``, whose estimates are Spark's exact ``count(DISTINCT ...)``. The reference's
  ``compute_table_stats`` procedure writes a file frazil reads; both sketches of a column hold
  the same hashes (every hash below the smaller theta), which proves the values were serialized
  and hashed alike, type by type (except UUIDs, which the reference sketches as text).
- Partition statistics: frazil's rows equal those of Java's
  ``PartitionStatsHandler.computeAndWriteStatsFile`` on the same table, after appends, a
  partition spec change and merge-on-read deletes, computed in full and incrementally; Java's
  incremental computation starts from frazil's registered file.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import java_reference_session

from frazil.catalog import load_catalog
from frazil.manifest.puffin import read_puffin
from frazil.table import Table
from frazil.table.partition_statistics import read_partition_statistics

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ds = pytest.importorskip("datasketches")

ROWS = 20_000
# Column -> Spark expression over `id` in range(ROWS). `id` itself is past the sketch's exact
# range (estimation mode); the others stay exact.
EXPRESSIONS = {
    "id": "id",
    "i": "CAST(id % 1000 AS INT)",
    "s": "CASE WHEN id % 13 = 0 THEN NULL WHEN id % 17 = 0 THEN '' "
    "ELSE concat('s', CAST(id % 3000 AS STRING)) END",
    "d": "CAST(id % 500 AS DOUBLE) / 8",
    "f": "CAST(id % 200 AS FLOAT) / 4",
    "dec": "CAST((id % 700) / 100 AS DECIMAL(10, 2))",
    "dt": "date_add(DATE '2024-01-01', CAST(id % 400 AS INT))",
    "ts": "timestamp_seconds(1700000000 + id % 2000)",
    "tsn": "CAST(timestamp_seconds(1600000000 + id % 1500) AS TIMESTAMP_NTZ)",
    "b": "id % 2 = 0",
    "bin": "CAST(concat('b', CAST(id % 600 AS STRING)) AS BINARY)",
    "u": "concat('00000000-0000-0000-0000-', lpad(CAST(id % 300 AS STRING), 12, '0'))",
}
TYPES = {
    "id": "bigint",
    "i": "int",
    "s": "string",
    "d": "double",
    "f": "float",
    "dec": "decimal(10, 2)",
    "dt": "date",
    "ts": "timestamp",
    "tsn": "timestamp_ntz",
    "b": "boolean",
    "bin": "binary",
}


def _sql(spark: Any, text: str) -> list[Any]:
    return spark.sql(text).collect()


def _java_table(spark: Any, location: Path) -> Any:
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(str(location))


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("stats-wh")
    spark = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        columns = ", ".join(f"{c} {t}" for c, t in TYPES.items())
        _sql(spark, f"CREATE TABLE ref.db.ndv ({columns}) USING iceberg")
        types = spark._jvm.org.apache.iceberg.types.Types
        _java_table(spark, warehouse / "db" / "ndv").updateSchema().addColumn(
            "u", types.UUIDType.get()
        ).commit()
        select = ", ".join(EXPRESSIONS.values())
        _sql(spark, f"INSERT INTO ref.db.ndv SELECT {select} FROM range({ROWS // 2})")
        _sql(spark, f"INSERT INTO ref.db.ndv SELECT {select} FROM range({ROWS // 2}, {ROWS})")
        yield spark, warehouse
    finally:
        spark.stop()


def _frazil_table(warehouse: Path, name: str) -> Table:
    catalog = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    return catalog.load_table(("db", name))


def _exact_distinct(spark: Any) -> dict[str, int]:
    # Theta sketches skip empty byte strings (DataSketches ignores empty items).
    counts = ", ".join(
        f"count(DISTINCT CASE WHEN {c} != '' THEN {c} END) AS {c}"
        if c == "s"
        else f"count(DISTINCT {c}) AS {c}"
        for c in EXPRESSIONS
    )
    return _sql(spark, f"SELECT {counts} FROM ref.db.ndv")[0].asDict()


def _java_blobs(spark: Any, table: Any, stats_file: Any) -> dict[int, bytes]:
    """Field id -> sketch bytes, through Java's Puffin reader."""
    ice = spark._jvm.org.apache.iceberg
    reader = (
        ice.puffin.Puffin.read(table.io().newInputFile(stats_file.path()))
        .withFileSize(stats_file.fileSizeInBytes())
        .withFooterSize(stats_file.fileFooterSizeInBytes())
        .build()
    )
    try:
        blobs = reader.fileMetadata().blobs()
        pairs = ice.relocated.com.google.common.collect.Lists.newArrayList(reader.readAll(blobs))
        out = {}
        for pair in pairs:
            meta = pair.first()
            assert meta.type() == "apache-datasketches-theta-v1"
            out[int(meta.inputFields().get(0))] = bytes(
                ice.util.ByteBuffers.toByteArray(pair.second())
            )
        return out
    finally:
        reader.close()


def _java_estimate(spark: Any, data: bytes) -> float:
    shaded = spark._jvm.org.apache.iceberg.shaded.org.apache.datasketches
    return float(shaded.theta.CompactSketch.wrap(shaded.memory.Memory.wrap(data)).getEstimate())


def _hashes_below(data: bytes, theta: int) -> set[int]:
    return {h for h in ds.compact_theta_sketch.deserialize(data) if h < theta}


@pytest.mark.parametrize("n", [0, 1, 2, 7680, 7681, 20_000])
def test_native_sketch_is_byte_identical_to_java_update_sketch(java, n) -> None:
    """The sketch the reference builds (``UpdateSketch.builder().build()``: lg_k 12, seed 9001,
    resize factor X8, QuickSelect) fed the same items through ``update(byte[])`` serializes, as
    an ordered compact sketch, to frazil's bytes (empty sketch included) but for two fields
    readers ignore; Java reads frazil's bytes with the same estimate."""
    from frazil import _native

    spark, _ = java
    theta = spark._jvm.org.apache.iceberg.shaded.org.apache.datasketches.theta
    ref = theta.UpdateSketch.builder().build()
    for i in range(n):
        ref.update(f"k{i}".encode())
    mine = _native.ThetaSketch()
    mine.update(pa.array([f"k{i}" for i in range(n)] + ["", None]), '"string"')
    theirs = bytes(ref.compact(True, None).toByteArray())
    assert _normalize_java_compact(theirs) == mine.to_bytes()
    assert mine.estimate() == ref.getEstimate()
    assert _java_estimate(spark, mine.to_bytes()) == ref.getEstimate()


def _normalize_java_compact(data: bytes) -> bytes:
    """Java's compact image with the two fields compact readers ignore cleared as DataSketches
    C++ (and Rust) write them: the single-item flag (0x20) and the sampling probability float
    in bytes 12..16 (C++ writes zeros there)."""
    out = bytearray(data)
    out[5] &= ~0x20
    if out[0] > 1:
        out[12:16] = bytes(4)
    return bytes(out)


def test_java_reads_frazil_ndv_sketches(java) -> None:
    spark, warehouse = java
    t = _frazil_table(warehouse, "ndv")
    f = t.compute_statistics()
    schema = t.schema()
    ids = {c: schema.find_field(c).field_id for c in EXPRESSIONS}

    jt = _java_table(spark, warehouse / "db" / "ndv")
    files = list(jt.statisticsFiles())
    assert len(files) == 1
    jf = files[0]
    assert jf.snapshotId() == jt.currentSnapshot().snapshotId() == f.snapshot_id
    assert jf.path() == f.statistics_path
    assert jf.fileSizeInBytes() == f.file_size_in_bytes
    assert jf.fileFooterSizeInBytes() == f.file_footer_size_in_bytes
    assert [int(b.fields().get(0)) for b in jf.blobMetadata()] == list(ids.values())
    java_ndv = {int(b.fields().get(0)): int(b.properties().get("ndv")) for b in jf.blobMetadata()}

    blobs = _java_blobs(spark, jt, jf)
    estimates = {fid: _java_estimate(spark, data) for fid, data in blobs.items()}
    exact = _exact_distinct(spark)
    for column, fid in ids.items():
        assert java_ndv[fid] == int(estimates[fid])
        if column == "id":
            assert abs(estimates[fid] - exact[column]) < 0.0625 * exact[column]
        else:
            assert estimates[fid] == exact[column], column
    assert t.read_ndv() == {fid: int(e) for fid, e in estimates.items()}


def test_frazil_reads_java_compute_table_stats(java) -> None:
    spark, warehouse = java
    t = _frazil_table(warehouse, "ndv")
    mine = t.compute_statistics()
    mine_puffin = read_puffin(t.io.read(mine.statistics_path))
    mine_blobs = {b.fields[0]: mine_puffin.read_blob(b) for b in mine_puffin.blobs}

    _sql(spark, "CALL ref.system.compute_table_stats(table => 'db.ndv')")
    t = t.refresh()
    assert len(t.metadata.statistics) == 1
    theirs = t.metadata.statistics[0]
    assert theirs.statistics_path != mine.statistics_path
    assert theirs.snapshot_id == mine.snapshot_id
    puffin = read_puffin(t.io.read(theirs.statistics_path), theirs.statistics_path)
    their_blobs = {b.fields[0]: puffin.read_blob(b) for b in puffin.blobs}
    their_ndv = {b.fields[0]: int(b.properties["ndv"]) for b in puffin.blobs}
    ndv = t.read_ndv()
    assert ndv == their_ndv

    exact = _exact_distinct(spark)
    schema = t.schema()
    for column in EXPRESSIONS:
        fid = schema.find_field(column).field_id
        a = ds.compact_theta_sketch.deserialize(their_blobs[fid])
        b = ds.compact_theta_sketch.deserialize(mine_blobs[fid])
        if column == "u":
            # Spark hands the reference's ThetaSketchAgg UUIDs as strings, so it sketches their
            # text; the Puffin spec (and frazil) sketch the single-value form, 16 bytes.
            text = ds.update_theta_sketch()
            for i in range(300):
                text.update(f"00000000-0000-0000-0000-{i:012d}")
            assert set(a) == set(text.compact(True))
            assert b.get_estimate() == a.get_estimate() == 300
            continue
        theta = min(a.theta64, b.theta64)
        # The same values hashed the same way: the same hashes below either theta.
        mine_below = _hashes_below(mine_blobs[fid], theta)
        assert _hashes_below(their_blobs[fid], theta) == mine_below, column
        if column != "id":
            assert ndv[fid] == exact[column], column
            assert not a.is_estimation_mode() and not b.is_estimation_mode()


# ---- partition statistics


PARTITION_COLUMNS = "id bigint, cat string, n int"


def _java_partition_rows(spark: Any, warehouse: Path, name: str) -> pa.Table:
    """Rows of the file Java's PartitionStatsHandler computes (written, not registered), read
    with pyarrow (Parquet) or fastavro (Avro)."""
    jt = _java_table(spark, warehouse / "db" / name)
    handler = spark._jvm.org.apache.iceberg.PartitionStatsHandler
    f = handler.computeAndWriteStatsFile(jt)
    path = str(f.path())
    if path.endswith(".avro"):
        import fastavro

        with open(path, "rb") as fh:
            return pa.Table.from_pylist(list(fastavro.reader(fh)))
    with open(path, "rb") as fh:
        return pq.read_table(io.BytesIO(fh.read()))


def _java_reads(spark: Any, warehouse: Path, name: str, path: str) -> list[tuple[Any, ...]]:
    """A partition statistics file as Java's reader returns it (counts per row, in order)."""
    ice = spark._jvm.org.apache.iceberg
    jt = _java_table(spark, warehouse / "db" / name)
    schema = ice.PartitionStatsHandler.schema(
        ice.Partitioning.partitionType(jt), ice.TableUtil.formatVersion(jt)
    )
    rows = ice.PartitionStatsHandler.readPartitionStatsFile(schema, jt.io().newInputFile(path))
    out = []
    for r in ice.relocated.com.google.common.collect.Lists.newArrayList(rows):
        out.append(
            (
                r.specId(),
                r.dataRecordCount(),
                r.dataFileCount(),
                r.totalDataFileSizeInBytes(),
                r.positionDeleteRecordCount(),
                r.lastUpdatedSnapshotId(),
            )
        )
    return out


def _counts(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    keys = (
        "spec_id",
        "data_record_count",
        "data_file_count",
        "total_data_file_size_in_bytes",
        "position_delete_record_count",
        "last_updated_snapshot_id",
    )
    return [tuple(r[k] for k in keys) for r in rows]


def _field_ids(schema: pa.Schema) -> list[Any]:
    def ids(f: pa.Field) -> Any:
        own = int(f.metadata[b"PARQUET:field_id"])
        if pa.types.is_struct(f.type):
            return (own, [ids(f.type.field(i)) for i in range(f.type.num_fields)])
        return own

    return [ids(f) for f in schema]


def _same_file_schema(t: Table, java_rows: pa.Table) -> None:
    f = t.metadata.partition_statistics[-1]
    mine = pq.read_schema(io.BytesIO(t.io.read(f.statistics_path)))
    assert mine.equals(java_rows.schema, check_metadata=False), (mine, java_rows.schema)
    assert _field_ids(mine) == _field_ids(java_rows.schema)


def _frazil_rows(t: Table) -> list[dict[str, Any]]:
    rows = read_partition_statistics(t)
    assert rows is not None
    return rows.to_pylist()


@pytest.mark.parametrize("version", [2, 3])
def test_partition_statistics_equal_javas(java, version) -> None:
    spark, warehouse = java
    name = f"parts_v{version}"
    _sql(
        spark,
        f"CREATE TABLE ref.db.{name} ({PARTITION_COLUMNS}) USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read')",
    )
    rows = "SELECT id, concat('c', CAST(id % 3 AS STRING)), CAST(id AS INT) FROM range"
    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(0, 30)")
    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(30, 50)")
    t = _frazil_table(warehouse, name)
    java_rows = _java_partition_rows(spark, warehouse, name)
    expected = java_rows.to_pylist()
    t.compute_partition_statistics()  # in full
    assert _frazil_rows(t) == expected
    _same_file_schema(t, java_rows)
    assert len(expected) == 3

    # Deletes (position delete files in v2, deletion vectors in v3), an overwrite, a spec change.
    _sql(spark, f"DELETE FROM ref.db.{name} WHERE id % 7 = 0")
    _sql(spark, f"ALTER TABLE ref.db.{name} ADD PARTITION FIELD bucket(2, id)")
    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(50, 70)")
    _sql(spark, f"DELETE FROM ref.db.{name} WHERE cat = 'c1'")
    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(70, 72)")
    t = t.refresh()
    # Java's computation starts from frazil's registered file, frazil's too.
    java_rows = _java_partition_rows(spark, warehouse, name)
    expected = java_rows.to_pylist()
    f = t.compute_partition_statistics()
    assert f is not None
    assert f.snapshot_id == t.current_snapshot().snapshot_id
    assert _frazil_rows(t) == expected
    _same_file_schema(t, java_rows)
    assert _java_reads(spark, warehouse, name, f.statistics_path) == _counts(expected)
    assert any(r["position_delete_record_count"] for r in expected)
    if version >= 3:
        assert any(r["dv_count"] for r in expected)
    # A full computation on the same snapshot agrees (no earlier file registered).
    t.transaction().remove_partition_statistics(f.snapshot_id).commit_transaction()
    for old in t.metadata.partition_statistics:
        t.transaction().remove_partition_statistics(old.snapshot_id).commit_transaction()
    t.compute_partition_statistics()
    assert _frazil_rows(t) == expected
    # Java lists frazil's file.
    jt = _java_table(spark, warehouse / "db" / name)
    assert [p.path() for p in jt.partitionStatisticsFiles()] == [
        t.metadata.partition_statistics[0].statistics_path
    ]


@pytest.mark.parametrize("fmt", ["parquet", "avro"])  # Java cannot write ORC ones
def test_frazil_continues_from_javas_registered_partition_statistics(java, caplog, fmt) -> None:
    # The reference writes partition statistics in the table's default file format.
    spark, warehouse = java
    name = f"parts_from_java_{fmt}"
    _sql(
        spark,
        f"CREATE TABLE ref.db.{name} ({PARTITION_COLUMNS}) USING iceberg PARTITIONED BY (cat) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        f"'write.format.default'='{fmt}')",
    )
    rows = "SELECT id, concat('c', CAST(id % 4 AS STRING)), CAST(id AS INT) FROM range"
    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(0, 40)")
    _sql(spark, f"CALL ref.system.compute_partition_stats(table => 'db.{name}')")
    t = _frazil_table(warehouse, name)
    javas = t.metadata.partition_statistics
    assert len(javas) == 1
    assert javas[0].statistics_path.endswith(f".{fmt}")
    java_first = _frazil_rows(t)  # frazil reads the reference's file
    assert sum(r["data_record_count"] for r in java_first) == 40

    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(40, 50)")
    _sql(spark, f"DELETE FROM ref.db.{name} WHERE id % 9 = 0")
    t = t.refresh()
    expected = _java_partition_rows(spark, warehouse, name).to_pylist()
    with caplog.at_level(logging.WARNING, logger="frazil.table.partition_statistics"):
        f = t.compute_partition_statistics()  # incremental from Java's file
    assert f is not None
    assert "unreadable" not in caplog.text  # Java's file was read, not recomputed over
    assert _frazil_rows(t) == expected
    assert {p.snapshot_id for p in t.metadata.partition_statistics} == {
        javas[0].snapshot_id,
        f.snapshot_id,
    }
    assert f.statistics_path.endswith(f".{fmt}")  # the table's default format, as Java's
    assert _java_reads(spark, warehouse, name, f.statistics_path) == _counts(expected)

    # And back: Java continues from frazil's file.
    _sql(spark, f"INSERT INTO ref.db.{name} {rows}(50, 55)")
    t = t.refresh()
    expected = _java_partition_rows(spark, warehouse, name).to_pylist()
    assert t.compute_partition_statistics() is not None
    assert _frazil_rows(t) == expected
