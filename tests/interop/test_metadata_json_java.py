"""Metadata JSON text, byte for byte, against the Java reference (Iceberg 1.10.2 in PySpark).

Where the spec leaves a choice (type strings such as ``decimal(9, 2)``, the order of an object's
fields, which optional fields are omitted, number formatting, white space), frazil writes what
Java's ``TableMetadataParser.write`` writes, so a metadata file does not change when one
implementation rewrites the other's. Two directions:

* frazil builds metadata (every type, defaults, evolved specs, sort orders, snapshots, refs,
  statistics, properties; v1, v2 and v3), Java parses frazil's text into its own
  ``TableMetadata`` and writes its file; the two files are the same bytes.
* Java builds metadata (``TableMetadata.newTableMetadata`` over the same schema, Spark's commits)
  and writes its files; frazil parses each and writes the same bytes back.

Nothing nondeterministic differs: uuids and timestamps are the same by construction (Java's come
from parsing frazil's text, or frazil's from parsing Java's).
"""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

from frazil.metadata import (
    BlobMetadata,
    EncryptedKey,
    MetadataLogEntry,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
)
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.transforms import parse
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    # py4j leaves its sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

TABLE_UUID = uuid.UUID("9c12d441-03fe-4693-9a96-a0705ddf69c1")
T0 = 1_700_000_000_123


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("metadata-json-wh")
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    yield session
    session.stop()


# --------------------------------------------------------------------------------------------
# what frazil builds


def _fields(version: int) -> list[NestedField]:
    """Every type (v3 ones only in v3), nested types, docs, required and optional fields."""
    out = [
        NestedField(1, "id", LongType(), True, doc="the key"),
        NestedField(2, "b", BooleanType()),
        NestedField(3, "i", IntegerType()),
        NestedField(4, "f", FloatType()),
        NestedField(5, "d", DoubleType()),
        NestedField(6, "dec", DecimalType(9, 2)),
        NestedField(7, "dec38", DecimalType(38, 10), True),
        NestedField(8, "day", DateType()),
        NestedField(9, "t", TimeType()),
        NestedField(10, "ts", TimestampType()),
        NestedField(11, "tstz", TimestamptzType()),
        NestedField(12, "s", StringType(), doc='quotes " and \\ and ünïcode and\ttab\x01\x1f/€'),
        NestedField(13, "u", UUIDType()),
        NestedField(14, "fx", FixedType(16)),
        NestedField(15, "bin", BinaryType()),
        NestedField(
            16,
            "st",
            StructType(
                NestedField(17, "a", IntegerType(), True),
                NestedField(18, "inner", StructType(NestedField(19, "x", DecimalType(1, 0)))),
            ),
        ),
        NestedField(20, "tags", ListType(21, StringType(), element_required=False)),
        NestedField(
            22,
            "props",
            MapType(23, StringType(), 24, StructType(NestedField(25, "v", FixedType(3))), True),
        ),
        NestedField(26, "points", ListType(27, StructType(NestedField(28, "x", DoubleType())))),
    ]
    if version >= 3:
        out += [
            NestedField(29, "tsn", TimestampNanoType()),
            NestedField(30, "tsnz", TimestamptzNanoType()),
            NestedField(31, "var", VariantType()),
            NestedField(32, "unk", UnknownType()),
            NestedField(33, "geo", GeometryType()),
            NestedField(34, "geo2", GeometryType("srid:3857")),
            NestedField(35, "geog", GeographyType("srid:4326", "karney")),
            # defaults, in their JSON single-value form (Appendix D)
            NestedField(36, "d_int", IntegerType(), initial_default=5, write_default=7),
            NestedField(37, "d_long", LongType(), True, initial_default=-1, write_default=2**40),
            NestedField(38, "d_float", FloatType(), initial_default=1.5, write_default=0.25),
            NestedField(39, "d_double", DoubleType(), initial_default=-2.5, write_default=1e-5),
            NestedField(40, "d_bool", BooleanType(), initial_default=True, write_default=False),
            NestedField(41, "d_dec", DecimalType(9, 2), initial_default="12.34"),
            NestedField(42, "d_str", StringType(), initial_default="x", write_default="y"),
            NestedField(43, "d_date", DateType(), initial_default="2024-02-29"),
            NestedField(44, "d_ts", TimestampType(), initial_default="2024-02-29T01:02:03.456789"),
            NestedField(
                45, "d_tstz", TimestamptzType(), initial_default="2024-02-29T01:02:03.456789+00:00"
            ),
            NestedField(46, "d_uuid", UUIDType(), initial_default=str(TABLE_UUID)),
            NestedField(47, "d_fixed", FixedType(2), initial_default="0AFF"),
            NestedField(48, "d_bin", BinaryType(), initial_default="CAFE"),
            # Java's Double.toString: exponent form outside [1e-3, 1e7)
            NestedField(49, "d_big", DoubleType(), initial_default=1e20, write_default=12345678.9),
            NestedField(50, "d_small", DoubleType(), initial_default=0.001, write_default=-1e-7),
        ]
    return out


def _frazil_metadata(version: int) -> TableMetadata:
    fields = _fields(version)
    last = max(f.field_id for f in fields) + 2  # room for nested ids of later schemas
    schema0 = Schema(*fields[:3], schema_id=0)
    schema1 = Schema(*fields, schema_id=1, identifier_field_ids=[1])
    if version == 1:
        spec0 = PartitionSpec(PartitionField(10, 1000, parse("day"), "ts_day"), spec_id=0)
        spec1 = PartitionSpec(
            PartitionField(10, 1000, parse("void"), "ts_day"),
            PartitionField(1, 1001, parse("bucket[16]"), "id_bucket"),
            PartitionField(12, 1002, parse("truncate[4]"), "s_trunc"),
            spec_id=1,
        )
    else:
        spec0 = PartitionSpec(PartitionField(10, 1000, parse("day"), "ts_day"), spec_id=0)
        spec1 = PartitionSpec(
            PartitionField(1, 1001, parse("bucket[16]"), "id_bucket"),
            PartitionField(12, 1002, parse("truncate[4]"), "s_trunc"),
            PartitionField(11, 1003, parse("hour"), "tstz_hour"),
            PartitionField(8, 1004, parse("year"), "day_year"),
            PartitionField(8, 1005, parse("month"), "day_month"),
            PartitionField(6, 1006, parse("identity"), "dec"),
            spec_id=1,
        )
    order1 = SortOrder(
        SortField(1),
        SortField(12, parse("truncate[2]"), SortDirection.DESC),
        SortField(11, parse("day"), SortDirection.ASC, NullOrder.NULLS_LAST),
        order_id=1,
    )
    order2 = SortOrder(SortField(3, direction=SortDirection.DESC), order_id=2)
    location = "s3://bucket/warehouse/db/tëst table"
    s1, s2, s3 = 3_051_729_675_574_597_004, 5_000_000_000_000_000_001, 987_654_321
    seq = (lambda n: n) if version >= 2 else (lambda n: 0)
    row_ids: dict[str, Any] = (
        {} if version < 3 else {"first_row_id": 0, "added_rows": 10}
    )  # v3 row lineage
    snapshots = (
        Snapshot(
            s1,
            T0,
            sequence_number=seq(1),
            manifest_list=f"{location}/metadata/snap-{s1}-1-a.avro",
            summary={
                "operation": "append",
                "spark.app.id": "local-1",
                "added-data-files": "2",
                "added-records": "10",
                "added-files-size": "1234",
                "changed-partition-count": "2",
                "total-records": "10",
                "total-files-size": "1234",
                "total-data-files": "2",
                "total-delete-files": "0",
                "total-position-deletes": "0",
                "total-equality-deletes": "0",
            },
            schema_id=1,
            **row_ids,
        ),
        Snapshot(
            s2,
            T0 + 1000,
            parent_snapshot_id=s1,
            sequence_number=seq(2),
            manifest_list=f"{location}/metadata/snap-{s2}-1-b.avro",
            summary={"operation": "overwrite", "replace-partitions": "true"},
            schema_id=1,
            **({} if version < 3 else {"first_row_id": 10, "added_rows": 5}),
        ),
        Snapshot(
            s3,
            T0 + 2000,
            parent_snapshot_id=s1,
            sequence_number=seq(3),
            manifest_list=f"{location}/metadata/snap-{s3}-1-c.avro",
            summary={"operation": "delete"},
            schema_id=0,
            **({} if version < 3 else {"first_row_id": 15, "added_rows": 0}),
        ),
    )
    refs = {
        "main": SnapshotRef(s2),
        "audit": SnapshotRef(s3, "branch", 3, 86_400_000, 604_800_000),
        "v1.0": SnapshotRef(s1, "tag", max_ref_age_ms=2_592_000_000),
    }
    statistics = (
        StatisticsFile(
            s2,
            f"{location}/metadata/stats-{s2}.puffin",
            4096,
            512,
            (
                BlobMetadata("apache-datasketches-theta-v1", s2, seq(2), (1,), {"ndv": "10"}),
                BlobMetadata("deletion-vector-v1", s2, seq(2), (1, 3)),
            ),
        ),
    )
    partition_statistics = (
        PartitionStatisticsFile(s2, f"{location}/metadata/ps-{s2}.parquet", 77),
    )
    return TableMetadata(
        format_version=version,
        table_uuid=TABLE_UUID,
        location=location,
        last_updated_ms=T0 + 5000,
        last_column_id=last,
        schemas=(schema0, schema1),
        current_schema_id=1,
        partition_specs=(spec0, spec1),
        default_spec_id=1,
        last_partition_id=max(f.field_id for f in spec1.fields),
        sort_orders=(SortOrder(order_id=0), order1, order2),
        default_sort_order_id=1,
        properties={
            "owner": "frazil",
            "write.format.default": "parquet",
            "comment": "línea\nnueva",
            "commit.retry.num-retries": "4",
        },
        current_snapshot_id=s2,
        snapshots=snapshots,
        snapshot_log=(SnapshotLogEntry(s1, T0), SnapshotLogEntry(s2, T0 + 1000)),
        metadata_log=(
            MetadataLogEntry(f"{location}/metadata/v1.metadata.json", T0 - 10),
            MetadataLogEntry(f"{location}/metadata/v2.metadata.json", T0 + 1),
        ),
        refs=refs,
        statistics=statistics,
        partition_statistics=partition_statistics,
        last_sequence_number=seq(3),
        next_row_id=15 if version >= 3 else None,
        encryption_keys=(
            ()
            if version < 3
            else (
                EncryptedKey("k1", "AAEC", "kms-1", {"algo": "AES_GCM"}),
                EncryptedKey("k2", "AwQ="),
            )
        ),
    )


def _empty_metadata(version: int) -> TableMetadata:
    """A new table: no snapshots, unpartitioned, unsorted, no properties."""
    schema = Schema(NestedField(1, "id", LongType(), True), schema_id=0)
    return TableMetadata(
        format_version=version,
        table_uuid=TABLE_UUID,
        location="file:/tmp/warehouse/db/empty",
        last_updated_ms=T0,
        last_column_id=1,
        schemas=(schema,),
        current_schema_id=0,
        partition_specs=(PartitionSpec(spec_id=0),),
        default_spec_id=0,
        last_partition_id=999,
        next_row_id=0 if version >= 3 else None,
    )


# --------------------------------------------------------------------------------------------
# what Java writes


def _java_writes(spark: Any, text: str, path: Path) -> bytes:
    """Java parses ``text`` into its TableMetadata and writes it as a metadata file."""
    ice = spark._jvm.org.apache.iceberg
    metadata = ice.TableMetadataParser.fromJson(text)
    ice.TableMetadataParser.write(metadata, ice.Files.localOutput(str(path)))
    return path.read_bytes()


def _first_difference(ours: bytes, theirs: bytes) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
        min(len(ours), len(theirs)),
    )
    lo = max(0, at - 200)
    return (
        f"first difference at byte {at}:\n"
        f"--- frazil\n{ours[lo : at + 200].decode(errors='replace')}\n"
        f"--- java\n{theirs[lo : at + 200].decode(errors='replace')}"
    )


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("build", [_frazil_metadata, _empty_metadata], ids=["full", "empty"])
def test_frazil_writes_the_bytes_java_writes(
    spark: Any, tmp_path: Path, version: int, build: Any
) -> None:
    metadata = build(version)
    ours = metadata.to_json_bytes()
    theirs = _java_writes(spark, ours.decode("utf-8"), tmp_path / "v1.metadata.json")
    assert ours == theirs, _first_difference(ours, theirs)
    assert TableMetadata.from_json(theirs) == metadata


def _edited(version: int, change: str) -> str:
    obj = _frazil_metadata(version).to_dict()
    highest = max(f["id"] for f in obj["schemas"][-1]["fields"])
    if change == "last-column-id-below":  # as Hive and Impala wrote it
        obj["last-column-id"] = highest - 5
    elif change == "last-column-id-above":  # as iceberg-rust's TableMetadataV2Valid.json
        obj["last-column-id"] = highest + 7
    else:  # no refs, a current snapshot: Java's parser makes main a branch at it
        assert change == "no-refs" and obj["current-snapshot-id"] is not None
        del obj["refs"]
    return json.dumps(obj)


@pytest.mark.parametrize("change", ["last-column-id-below", "last-column-id-above", "no-refs"])
@pytest.mark.parametrize("version", [1, 2])
def test_frazil_rewrites_files_other_writers_wrote_as_java_does(
    spark: Any, tmp_path: Path, version: int, change: str
) -> None:
    text = _edited(version, change)
    ours = TableMetadata.from_json(text).to_json_bytes()
    theirs = _java_writes(spark, text, tmp_path / "v1.metadata.json")
    assert ours == theirs, _first_difference(ours, theirs)
    if change.startswith("last-column-id"):
        assert json.loads(ours)["last-column-id"] == json.loads(text)["last-column-id"]


# --------------------------------------------------------------------------------------------
# what Java builds


def _metadata_files(location: Path) -> list[Path]:
    return sorted(
        (location / "metadata").glob("v*.metadata.json"),
        key=lambda p: int(p.name[1:].split(".")[0]),
    )


def _assert_frazil_rewrites_the_same_bytes(files: list[Path]) -> int:
    for path in files:
        raw = path.read_bytes()
        ours = TableMetadata.from_json(raw).to_json_bytes()
        assert ours == raw, f"{path.name}: {_first_difference(ours, raw)}"
    return len(files)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_frazil_rewrites_java_built_metadata_byte_for_byte(
    spark: Any, tmp_path: Path, version: int
) -> None:
    """Java creates a table over frazil's schema (it assigns its own ids) and evolves it through
    its API: schema, spec and sort order changes, properties, and on v3 defaults."""
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    types = ice.types.Types
    ref = ice.expressions.Expressions.ref  # py4j does not see the builders' default methods
    schema_json = _java_json(Schema(*_fields(min(version, 2)), schema_id=0).to_json())
    schema = ice.SchemaParser.fromJson(schema_json)
    spec = (
        ice.PartitionSpec.builderFor(schema)
        .bucket("id", 16)
        .truncate("s", 4)
        .hour("tstz")
        .year("day")
        .identity("dec")
        .build()
    )
    order = (
        ice.SortOrder.builderFor(schema)
        .asc(ref("id"), ice.NullOrder.NULLS_FIRST)
        .desc(ref("s"), ice.NullOrder.NULLS_FIRST)
        .build()
    )
    properties = jvm.java.util.HashMap()
    properties.put("format-version", str(version))
    properties.put("owner", "java")
    properties.put("comment", 'ünïcode "quoted"\n')
    location = tmp_path / "java_built"
    tables = ice.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    table = tables.create(schema, spec, order, properties, str(location))
    update = table.updateSchema().addColumn("added", types.DecimalType.of(38, 4), "doc")
    update = update.renameColumn("b", "flag").makeColumnOptional("id").deleteColumn("bin")
    if version >= 3:
        literal = ice.expressions.Literal
        update = update.addColumn("d_int", types.IntegerType.get(), "default", literal.of(5))
        update = update.addColumn("d_double", types.DoubleType.get(), "big", literal.of(1e20))
        update = update.addColumn("tsn", types.TimestampNanoType.withZone())
    update.commit()
    table.updateSpec().removeField("id_bucket").addField(
        ice.expressions.Expressions.month("ts")
    ).commit()
    table.replaceSortOrder().asc(ref("i"), ice.NullOrder.NULLS_LAST).commit()
    table.updateProperties().set("commit.retry.num-retries", "7").remove("owner").commit()
    assert _assert_frazil_rewrites_the_same_bytes(_metadata_files(location)) == 5


def _java_json(obj: Any) -> str:
    from frazil import _json

    return _json.dumps(obj)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_frazil_rewrites_metadata_spark_committed_byte_for_byte(spark: Any, version: int) -> None:
    """Snapshots (with Spark's summaries), branches, tags, deletes and row lineage, as Java's
    commits write them."""
    t = f"ref.db.t{version}"
    mode = "'write.delete.mode'='merge-on-read', " if version >= 2 else ""
    for text in (
        "CREATE NAMESPACE IF NOT EXISTS ref.db",
        f"CREATE TABLE {t} (id bigint, data string, amount decimal(9, 2), ts timestamp, "
        "s struct<a: int, b: string>, tags array<string>, m map<string, double>) USING iceberg "
        "PARTITIONED BY (bucket(4, id), days(ts)) "
        f"TBLPROPERTIES ({mode}'format-version'='{version}')",
        f"INSERT INTO {t} VALUES (1, 'a', 1.25, TIMESTAMP '2024-01-01 00:00:00', "
        "named_struct('a', 1, 'b', 'x'), array('p'), map('k', 1.5)), "
        "(2, 'b', -3.00, TIMESTAMP '2024-02-01 10:00:00', null, null, null)",
        f"ALTER TABLE {t} ADD COLUMN extra double",
        f"ALTER TABLE {t} WRITE ORDERED BY id DESC NULLS LAST, data",
        f"INSERT INTO {t} VALUES (3, 'c', 0.5, TIMESTAMP '2024-03-01 00:00:00', null, null, "
        "null, 1.0E20)",
        f"ALTER TABLE {t} CREATE BRANCH b1 RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS",
        f"ALTER TABLE {t} CREATE TAG tag1 RETAIN 30 DAYS",
        f"DELETE FROM {t} WHERE id = 1",
        f"ALTER TABLE {t} SET TBLPROPERTIES ('comment'='ünïcode')",
    ):
        spark.sql(text).collect()
    warehouse = Path(spark.conf.get("spark.sql.catalog.ref.warehouse"))
    assert (
        _assert_frazil_rewrites_the_same_bytes(_metadata_files(warehouse / "db" / f"t{version}"))
        >= 8
    )


def test_gzip_metadata_holds_the_same_text(spark: Any, tmp_path: Path) -> None:
    """Compressed metadata (``*.gz.metadata.json``): the deflate stream is an implementation's
    choice (level, header bytes), the JSON text inside is the same."""
    metadata = _frazil_metadata(2).replace(properties={"write.metadata.compression-codec": "gzip"})
    ours = metadata.to_json_bytes(compress=True)
    theirs = _java_writes(spark, metadata.to_json(), tmp_path / "v1.gz.metadata.json")
    assert theirs[:2] == b"\x1f\x8b"
    assert gzip.decompress(ours) == gzip.decompress(theirs)
